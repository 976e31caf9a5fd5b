/* SPDX-License-Identifier: MIT */
/* The profile check (json-c plus the strictness lexer) on arbitrary bytes,
 * and the environment builder on the input split at NUL bytes. */
#include <stdlib.h>
#include <string.h>

#include "envclean.h"
#include "fuzz.h"
#include "profile.h"

#define FUZZ_MAX_VARS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct envclean_user u = {.name = "devuser", .home = "/home/devuser", .shell = "/bin/sh"};
	char *copy, *env[FUZZ_MAX_VARS + 1], **out = NULL;
	size_t n = 0;
	const char *why = NULL;

	if (profile_check_json((const char *)data, size, &why) == -22 && !why)
		abort(); /* -EINVAL always comes with a reason */

	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (char *p = copy; p < copy + size && n < FUZZ_MAX_VARS; p += strlen(p) + 1)
		env[n++] = p;
	env[n] = NULL;
	(void)profile_name_valid(copy);
	if (envclean_build(env, &u, &out) == 0) {
		for (char **e = out; *e; e++)
			if (envclean_is_dropped(*e) && strncmp(*e, "HOME=", 5) != 0 && strncmp(*e, "USER=", 5) != 0 &&
			    strncmp(*e, "LOGNAME=", 8) != 0 && strncmp(*e, "SHELL=", 6) != 0)
				abort(); /* a dropped variable got through */
		free(out);
	}
	free(copy);
	return 0;
}
