/* SPDX-License-Identifier: MIT */
/* Fuzz target for lib/gitdest.c: the input is split at its first NUL into a
 * URL and `git config --null --get-regexp` output (which the agent's
 * repository configuration shapes), and, as a NUL-separated argv, into
 * gitdest_find(). A rewrite must never be longer than the limit. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gitdest.h"

#define FUZZ_MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *url, *out = NULL;
	const char *args[FUZZ_MAX_ARGS], *repo;
	const char *nul;
	enum gitdest_kind kind;
	size_t n = 0, pos = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	nul = memchr(buf, '\0', size);
	url = buf;
	for (int push = 0; push < 2; push++)
		if (nul && gitdest_rewrite_url(url, nul + 1, size - (size_t)(nul + 1 - buf), push,
					       &out) == 0) {
			if (strlen(out) >= GITDEST_MAX_URL)
				abort();
			free(out);
			out = NULL;
		}
	while (pos <= size && n < FUZZ_MAX_ARGS) {
		args[n++] = buf + pos;
		pos += strlen(buf + pos) + 1;
	}
	gitdest_find(args, n, &kind, &repo);
	if (kind >= GITDEST_KIND_MAX || (repo && repo[0] == '-'))
		abort();
	free(buf);
	return 0;
}
