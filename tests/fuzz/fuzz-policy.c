/* SPDX-License-Identifier: MIT */
/* Fuzz target for the static policy: parser, argument grammars, evaluator
 * and URL normalisation. Input: policy text, optionally followed by a NUL
 * and a NUL-separated command line (tool first, then arguments; the last
 * field also serves as the destination URL). Oracles: evaluation never
 * fails other than -ENOMEM and only allows through a rule; a normalised
 * URL holds no "..", "//", '%', '@' or scheme and normalises to itself. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy.h"

#define FUZZ_MAX_ARGS 64

static const char *const default_policy =
	"allow git fetch,push dest=github.com/acme/*\n"
	"deny git push force=yes ff=no ref=refs/heads/main reason=\"no\"\n"
	"allow kubectl get\n"
	"deny kubectl get arg=secret,secrets,secret/*\n"
	"allow terraform\n"
	"deny terraform destroy\n"
	"deny terraform apply flag=-destroy\n"
	"allow gh pr create,view\n"
	"allow aws * describe-*\n";

static void check_verdict(const struct policy *p, const struct authz_request *req)
{
	struct policy_verdict v;
	int r = policy_evaluate(p, req, &v);

	if (r < 0 && r != -ENOMEM && r != -EINVAL)
		abort();
	if (r < 0 && v.verdict != AUTHZ_DENY)
		abort();
	if (v.verdict != AUTHZ_ALLOW && v.verdict != AUTHZ_DENY)
		abort();
	if (v.verdict == AUTHZ_ALLOW && v.line == 0)
		abort();
	if (strnlen(v.reason, sizeof(v.reason)) >= sizeof(v.reason))
		abort();
}

static void check_url(const char *url)
{
	char out[POLICY_MAX_URL], again[POLICY_MAX_URL], with_scheme[POLICY_MAX_URL + 16];

	if (policy_normalise_url(url, out, sizeof(out)) < 0)
		return;
	if (strstr(out, "/../") || strstr(out, "/./") || strstr(out, "//") || strchr(out, '%') ||
	    strchr(out, '@') || strstr(out, "://") || !strchr(out, '/'))
		abort();
	if (strchr(out, ':'))
		return; /* a kept port may be another scheme's default */
	memcpy(with_scheme, "https://", 8);
	memcpy(with_scheme + 8, out, strlen(out) + 1);
	if (policy_normalise_url(with_scheme, again, sizeof(again)) < 0 || strcmp(out, again) != 0) {
		/* "x.git.git" loses one ".git" per pass; anything else is a bug */
		size_t n = strlen(out);

		if (!(n > 4 && strcmp(out + n - 4, ".git") == 0))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	size_t plen = strnlen(text, size);
	struct policy *p = NULL;
	struct policy_error e;
	char *rest;
	const char *argv[FUZZ_MAX_ARGS + 1];
	size_t argc = 0;

	if (policy_parse(text, plen, &p, &e) < 0) {
		if (policy_parse(default_policy, strlen(default_policy), &p, &e) < 0)
			abort();
	}
	if (plen < size) {
		size_t n = size - plen - 1;

		rest = malloc(n + 1);
		if (!rest)
			goto out;
		memcpy(rest, text + plen + 1, n);
		rest[n] = '\0';
		for (char *s = rest; argc < FUZZ_MAX_ARGS && s <= rest + n; s += strlen(s) + 1)
			argv[argc++] = s;
		argv[argc] = NULL;
		if (argc > 0 && argv[0][0]) {
			struct authz_request req = {
				.tool = argv[0], .argv = argv, .argc = argc,
				.host_cwd = "/home/u/p", .destination = argv[argc - 1],
			};

			check_verdict(p, &req);
			check_url(argv[argc - 1]);
		}
		free(rest);
	} else {
		static const char *const a1[] = { "git", "push", "-f", "origin", "+main", NULL };
		static const char *const a2[] = { "kubectl", "get", "secrets", NULL };
		struct authz_request r1 = { .tool = "git", .argv = a1, .argc = 5,
					    .destination = "git@github.com:acme/x.git" };
		struct authz_request r2 = { .tool = "kubectl", .argv = a2, .argc = 3 };

		check_verdict(p, &r1);
		check_verdict(p, &r2);
		if (plen < 4096) {
			/* Not strndup: the input need not hold a NUL, and
			 * ASan's strict_string_checks (as CI runs it) reads
			 * strndup's source as a C string. */
			char *u = malloc(plen + 1);

			if (u) {
				memcpy(u, text, plen);
				u[plen] = '\0';
				check_url(u);
				free(u);
			}
		}
	}
out:
	policy_free(p);
	return 0;
}
