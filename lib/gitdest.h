/* SPDX-License-Identifier: MIT */
/* The pure half of sandbox-execd's "destination" for git network commands:
 * which subcommand a git argv runs and which argument names the repository,
 * and how url.<base>.insteadOf / pushInsteadOf rules rewrite a URL. The
 * daemon (execd/dispatch.c) asks the real git for everything else. */
#ifndef CS_GITDEST_H
#define CS_GITDEST_H

#include <stddef.h>

#define GITDEST_MAX_URL 4096
#define GITDEST_MAX_CHDIRS 16 /* git -C options before the subcommand */

enum gitdest_kind {
	GITDEST_NONE,  /* not a network command, or not one we can read */
	GITDEST_PUSH,  /* push: repository is a push remote or URL */
	GITDEST_FETCH, /* fetch, pull, ls-remote: a fetch remote or URL */
	GITDEST_CLONE, /* clone: a URL, outside any repository */
	GITDEST_KIND_MAX,
};

/* args: git's arguments after "git" itself (n of them). The subcommand must
 * be args[0]: any global option before it (-c, -C, --git-dir, ...) changes
 * what git reads, so the kind is then GITDEST_NONE. *ret_repo is the
 * repository argument as git would take it (the first operand; for push,
 * --repo=X when there is none), or NULL when the command names none (git
 * would choose from branch configuration) or when it starts with '-'.
 * Never fails. */
void gitdest_find(const char *const *args, size_t n, enum gitdest_kind *ret_kind,
		  const char **ret_repo);

/* git's global options (args as for gitdest_find, read the way git.c's
 * handle_options does, up to the subcommand) that choose where git works.
 * The daemon confines a command to the cwd it opened beneath a workspace
 * root, but git re-resolves `-C DIR`, `--git-dir` and `--work-tree` by path
 * in the child: a symlink or `..` there, or a host path, would take it out
 * of the workspace. So the daemon applies -C itself (through the same
 * beneath-the-root open) and refuses the other two.
 * On success *ret_n indexes of "-C" words are in ret_idx (the value is the
 * next word) and *ret_sub is the index of the first word after the global
 * options. -EPERM (*reterr_option = the word) for --git-dir/--work-tree in
 * any spelling git accepts; -EINVAL for an option missing its value; -E2BIG
 * for more than max -C options. */
int gitdest_global_chdirs(const char *const *args, size_t n, size_t *ret_idx, size_t max,
			  size_t *ret_n, size_t *ret_sub, const char **reterr_option);
/* Rewrites url with the rules printed by
 *   git config --null --get-regexp '^url\..*\.(pushinsteadof|insteadof)$'
 * (entries "url.<base>.<var>\n<value>\0", rules_len bytes): for push the
 * longest matching pushInsteadOf wins, else the longest insteadOf (as git
 * does for a URL given on the command line); for fetch, insteadOf only.
 * *ret is malloc'd. -EBADMSG for output it cannot read, -ENAMETOOLONG past
 * GITDEST_MAX_URL, -ENOMEM. */
int gitdest_rewrite_url(const char *url, const char *rules, size_t rules_len, int push,
			char **ret);

#endif
