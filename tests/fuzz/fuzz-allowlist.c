/* SPDX-License-Identifier: MIT */
/* Fuzz target for lib/allowlist.c. The input up to its first NUL byte is an
 * allowlist file; what follows the NUL is the text of bundle "@a" ("@b"
 * includes "@a", so nesting is exercised). The file part is also parsed as
 * EXTRA_ALLOWED_DOMAINS, and each of its lines is matched as a DNS name.
 * Checked invariants: errors carry a position and a message and leave the
 * list as it was; every entry is valid, unique, and survives a round trip
 * through allowlist_entry_format() and the parser unchanged; an entry admits
 * its own name and contains its own network address. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allowlist.h"
#include "fuzz.h"

#define FUZZ_MAX_INPUT ((size_t)64 * 1024)
#define FUZZ_MAX_MATCH_LINES 64

struct fuzz_bundles {
	const char *a;
	size_t a_len;
};

static int bundle(void *userdata, const char *name, const char **ret_text, size_t *ret_len)
{
	const struct fuzz_bundles *b = userdata;

	if (strcmp(name, "a") == 0) {
		*ret_text = b->a;
		*ret_len = b->a_len;
		return 0;
	}
	if (strcmp(name, "b") == 0) {
		*ret_text = "ok.example.com\n@a\n";
		*ret_len = strlen(*ret_text);
		return 0;
	}
	return -ENOENT;
}

static bool same_entry(const struct allowlist_entry *x, const struct allowlist_entry *y)
{
	if (x->kind != y->kind || x->port_lo != y->port_lo || x->port_hi != y->port_hi)
		return false;
	if (x->kind == ALLOWLIST_ADDR)
		return x->family == y->family && x->prefix_len == y->prefix_len &&
		       memcmp(&x->addr, &y->addr,
			      x->family == AF_INET ? sizeof(struct in_addr)
						   : sizeof(struct in6_addr)) == 0;
	return strcmp(x->name, y->name) == 0;
}

static void check_error(const struct parse_error *err, int r, const char *file)
{
	char text[ALLOWLIST_MAX_ERROR_TEXT];

	assert(r == -EINVAL || r == -E2BIG || r == -ENOMEM);
	assert(err->message && err->message[0]);
	assert(err->file == file || strcmp(err->file, file) == 0);
	if (r != -ENOMEM)
		assert(err->line >= 1 && err->column >= 1);
	if (err->bundle[0])
		assert(err->bundle_line >= 1 && err->bundle_column >= 1);
	(void)allowlist_format_error(err, text, sizeof(text));
	assert(strlen(text) < sizeof(text));
}

static void check_list(const struct allowlist *al)
{
	assert(al->n <= ALLOWLIST_MAX_ENTRIES);
	for (size_t i = 0; i < al->n; i++) {
		const struct allowlist_entry *e = &al->entries[i];
		struct allowlist back = {0};
		struct parse_error err;
		char text[ALLOWLIST_MAX_ENTRY_TEXT];

		assert(e->port_lo >= 1 && e->port_lo <= e->port_hi);
		assert(e->source && e->line >= 1);
		for (size_t j = 0; j < i; j++)
			assert(!same_entry(e, &al->entries[j]));
		(void)allowlist_entry_format(e, text, sizeof(text));
		assert(allowlist_parse(&back, "round-trip", text, strlen(text), NULL, NULL, &err) == 0);
		assert(back.n == 1 && same_entry(e, &back.entries[0]));
		allowlist_free(&back);

		if (e->kind == ALLOWLIST_ADDR)
			assert(allowlist_contains_addr(al, e->family, &e->addr));
		else {
			size_t n = strlen(e->name);

			assert(n >= 1 && n <= ALLOWLIST_MAX_NAME);
			assert(e->name[0] != '.' && e->name[n - 1] != '.' && e->name[0] != '-');
			assert(allowlist_match_name(al, e->name) != NULL);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul;
	size_t main_len;
	struct fuzz_bundles b = {0};
	struct allowlist al = {0};
	struct parse_error err;
	char *copy;
	size_t before;
	int r;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	nul = memchr(text, 0, size);
	main_len = nul ? (size_t)(nul - text) : size;
	if (nul) {
		b.a = nul + 1;
		b.a_len = size - main_len - 1;
	}

	r = allowlist_parse(&al, "fuzz", text, main_len, bundle, &b, &err);
	if (r < 0) {
		check_error(&err, r, "fuzz");
		assert(al.n == 0 && al.n_sources == 0);
	}
	check_list(&al);

	copy = malloc(main_len + 1);
	if (!copy)
		abort();
	memcpy(copy, text, main_len);
	copy[main_len] = 0;
	before = al.n;
	r = allowlist_parse_extra(&al, copy, bundle, &b, &err);
	if (r < 0) {
		check_error(&err, r, "EXTRA_ALLOWED_DOMAINS");
		assert(al.n == before);
	}
	check_list(&al);

	/* Every line, as a DNS name: never crashes; an answer admits it. */
	{
		char *save = NULL, *line = strtok_r(copy, "\n", &save);

		for (unsigned i = 0; line && i < FUZZ_MAX_MATCH_LINES; i++) {
			const struct allowlist_entry *e = allowlist_match_name(&al, line);

			for (; e; e = allowlist_match_name_next(&al, line, e))
				assert(e->kind == ALLOWLIST_NAME_EXACT || e->kind == ALLOWLIST_NAME_SUFFIX);
			line = strtok_r(NULL, "\n", &save);
		}
	}
	/* Input bytes as addresses. */
	if (size >= 16) {
		(void)allowlist_contains_addr(&al, AF_INET, data);
		(void)allowlist_contains_addr(&al, AF_INET6, data);
	}
	free(copy);
	allowlist_free(&al);
	return 0;
}
