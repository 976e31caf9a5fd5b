/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gitdest.h"
#include "macros.h"
#include "tap.h"

#define MAX_ARGS 8

struct find_case {
	const char *args[MAX_ARGS]; /* NULL-terminated */
	enum gitdest_kind kind;
	const char *repo;
};

static void check_find(const struct find_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		enum gitdest_kind kind;
		const char *repo = (const char *)1;
		size_t argc = 0;

		while (argc < MAX_ARGS && c[i].args[argc])
			argc++;
		gitdest_find(c[i].args, argc, &kind, &repo);
		EXPECT_EQ(kind, c[i].kind);
		if (c[i].repo)
			EXPECT_STREQ(repo, c[i].repo);
		else if (repo)
			TAP_FAIL_(0, "case %zu (%s ...): expected no repository, got '%s'", i,
				  c[i].args[0] ? c[i].args[0] : "", repo);
	}
}

TEST(push_repository_argument)
{
	static const struct find_case cases[] = {
		{ { "push", "origin", "main" }, GITDEST_PUSH, "origin" },
		{ { "push", "-f", "origin", "+main" }, GITDEST_PUSH, "origin" },
		{ { "push", "--force-with-lease=main", "evil" }, GITDEST_PUSH, "evil" },
		{ { "push", "-o", "ci.skip", "https://x/y" }, GITDEST_PUSH, "https://x/y" },
		{ { "push", "-vo", "ci.skip", "https://x/y" }, GITDEST_PUSH, "https://x/y" },
		{ { "push", "-ovalue", "remote2" }, GITDEST_PUSH, "remote2" },
		{ { "push", "--push-option", "a", "r" }, GITDEST_PUSH, "r" },
		{ { "push", "--receive-pack", "x", "r" }, GITDEST_PUSH, "r" },
		{ { "push", "--repo=https://e/q" }, GITDEST_PUSH, "https://e/q" },
		{ { "push", "--repo", "https://e/q" }, GITDEST_PUSH, "https://e/q" },
		{ { "push", "--repo=https://e/q", "main" }, GITDEST_PUSH, "main" }, /* operand wins */
		{ { "push", "--", "-weird" }, GITDEST_PUSH, NULL },
		{ { "push", "--", "r" }, GITDEST_PUSH, "r" },
		{ { "push" }, GITDEST_PUSH, NULL },
		{ { "push", "--tags" }, GITDEST_PUSH, NULL },
	};

	check_find(cases, ELEMENTSOF(cases));
}

TEST(fetch_clone_ls_remote)
{
	static const struct find_case cases[] = {
		{ { "fetch", "origin" }, GITDEST_FETCH, "origin" },
		{ { "fetch", "--depth", "1", "sneaky" }, GITDEST_FETCH, "sneaky" },
		{ { "fetch", "--depth=1", "sneaky" }, GITDEST_FETCH, "sneaky" },
		{ { "fetch", "-j", "4", "r" }, GITDEST_FETCH, "r" },
		{ { "fetch", "--all" }, GITDEST_FETCH, NULL },
		{ { "pull", "-s", "ours", "up", "main" }, GITDEST_FETCH, "up" },
		{ { "pull", "--rebase", "up" }, GITDEST_FETCH, "up" },
		{ { "ls-remote", "--sort", "version:refname", "u" }, GITDEST_FETCH, "u" },
		{ { "ls-remote", "--upload-pack=x", "u" }, GITDEST_FETCH, "u" },
		{ { "clone", "https://h/a/b", "dir" }, GITDEST_CLONE, "https://h/a/b" },
		{ { "clone", "-b", "dev", "--depth", "1", "git@h:a/b" }, GITDEST_CLONE, "git@h:a/b" },
		{ { "clone", "-c", "k=v", "u" }, GITDEST_CLONE, "u" },
		{ { "clone", "--origin", "up", "u" }, GITDEST_CLONE, "u" },
	};

	check_find(cases, ELEMENTSOF(cases));
}

TEST(abbreviated_value_options_and_fetch_multiple)
{
	/* git takes "--push-o X" as "--push-option X": the repository is the
	 * word after X. --multiple makes every operand a remote. Unknown
	 * rather than the wrong one. */
	static const struct find_case cases[] = {
		{ { "push", "--push-o", "https://github.com/acme/x", "https://github.com/evil/x", "main" },
		  GITDEST_PUSH, NULL },
		{ { "push", "--rep", "https://github.com/acme/x" }, GITDEST_PUSH, NULL },
		{ { "fetch", "--shallow-exc", "https://github.com/acme/x", "https://github.com/evil/x" },
		  GITDEST_FETCH, NULL },
		{ { "pull", "--strategy-o", "https://github.com/acme/x", "https://github.com/evil/x" },
		  GITDEST_FETCH, NULL },
		{ { "fetch", "--multiple", "origin", "evil" }, GITDEST_FETCH, NULL },
		{ { "fetch", "--mult", "origin", "evil" }, GITDEST_FETCH, NULL },
		{ { "fetch", "-m", "origin", "evil" }, GITDEST_FETCH, NULL },
		{ { "fetch", "-vm", "origin", "evil" }, GITDEST_FETCH, NULL },
		/* Submodules pushed to their own remotes. */
		{ { "push", "--recurse-submodules=on-demand", "origin", "main" }, GITDEST_PUSH, NULL },
		{ { "push", "--recurse-submodules", "only", "origin" }, GITDEST_PUSH, NULL },
		{ { "push", "--recurse-submodules", "check", "origin" }, GITDEST_PUSH, "origin" },
		{ { "push", "--recurse-submodules=no", "origin" }, GITDEST_PUSH, "origin" },
		{ { "fetch", "--recurse-submodules", "origin" }, GITDEST_FETCH, NULL },
		{ { "pull", "--recurse-submodules=yes", "origin" }, GITDEST_FETCH, NULL },
		{ { "fetch", "--recurse-submodules=no", "origin" }, GITDEST_FETCH, "origin" },
		/* Exact names and flags are still read. */
		{ { "push", "--verbose", "origin" }, GITDEST_PUSH, "origin" },
		{ { "push", "--push-option=a", "origin" }, GITDEST_PUSH, "origin" },
		{ { "fetch", "--prune", "origin" }, GITDEST_FETCH, "origin" },
		{ { "clone", "--reference", "r", "u" }, GITDEST_CLONE, "u" },
	};

	check_find(cases, ELEMENTSOF(cases));
}

TEST(not_network_or_not_readable)
{
	static const struct find_case cases[] = {
		{ { "status" }, GITDEST_NONE, NULL },
		{ { "log", "origin" }, GITDEST_NONE, NULL },
		{ { "-c", "remote.origin.url=x", "push", "origin" }, GITDEST_NONE, NULL },
		{ { "-C", "/elsewhere", "push", "origin" }, GITDEST_NONE, NULL },
		{ { "--git-dir=/x", "fetch", "origin" }, GITDEST_NONE, NULL },
		{ { "pushx", "origin" }, GITDEST_NONE, NULL },
		{ { NULL }, GITDEST_NONE, NULL },
	};

	check_find(cases, ELEMENTSOF(cases));
}

/* Rules as `git config --null --get-regexp` prints them. */
static const char rules[] = "url.https://github.com/evil/.insteadof\nhttps://github.com/acme/sneak-\0"
			    "url.https://github.com/evil/pushed-.pushinsteadof\nhttps://github.com/acme/pushme-\0"
			    "url.https://short/.insteadof\nhttps://github.com/\0"
			    "url.https://longer/.insteadof\nhttps://github.com/acme/\0";

static char *rewrite(const char *url, int push)
{
	char *out = NULL;

	ASSERT_OK(gitdest_rewrite_url(url, rules, sizeof(rules) - 1, push, &out));
	return out;
}

TEST(rewrite_longest_match_and_push_precedence)
{
	char *s;

	s = rewrite("https://github.com/acme/sneak-y.git", 1);
	EXPECT_STREQ(s, "https://github.com/evil/y.git");
	free(s);
	s = rewrite("https://github.com/acme/pushme-z.git", 1);
	EXPECT_STREQ(s, "https://github.com/evil/pushed-z.git"); /* pushInsteadOf first */
	free(s);
	s = rewrite("https://github.com/acme/pushme-z.git", 0);
	EXPECT_STREQ(s, "https://longer/pushme-z.git"); /* fetch: insteadOf only, longest */
	free(s);
	s = rewrite("https://github.com/other/x", 1);
	EXPECT_STREQ(s, "https://short/other/x");
	free(s);
	s = rewrite("git@github.com:acme/x", 1);
	EXPECT_STREQ(s, "git@github.com:acme/x"); /* no rule: unchanged */
	free(s);
}

TEST(rewrite_empty_and_malformed)
{
	static const char bad1[] = "core.pager\nless\0";
	static const char bad2[] = "url.x.insteadof\nno-terminator";
	static const char bad3[] = "url.x.pushurl\ny\0";
	static const char bad4[] = "url.\nx\0";
	char *out = NULL;

	ASSERT_OK(gitdest_rewrite_url("https://h/x", "", 0, 1, &out));
	EXPECT_STREQ(out, "https://h/x");
	free(out);
	out = NULL;
	EXPECT_EQ(gitdest_rewrite_url("u", bad1, sizeof(bad1) - 1, 1, &out), -EBADMSG);
	EXPECT_EQ(gitdest_rewrite_url("u", bad2, sizeof(bad2) - 1, 1, &out), -EBADMSG);
	EXPECT_EQ(gitdest_rewrite_url("u", bad3, sizeof(bad3) - 1, 1, &out), -EBADMSG);
	EXPECT_EQ(gitdest_rewrite_url("u", bad4, sizeof(bad4) - 1, 1, &out), -EBADMSG);
	ASSERT_NULL(out);
}

TEST(rewrite_limits)
{
	char *big = malloc(GITDEST_MAX_URL + 1), *out = NULL;

	ASSERT_NOT_NULL(big);
	memset(big, 'a', GITDEST_MAX_URL);
	big[GITDEST_MAX_URL] = '\0';
	EXPECT_EQ(gitdest_rewrite_url(big, "", 0, 1, &out), -ENAMETOOLONG);
	free(big);
}
