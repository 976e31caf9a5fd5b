/* SPDX-License-Identifier: MIT */
/* git argument reading and URL rewriting for destinations (gitdest.h). */
#include "gitdest.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool in_list(const char *a, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(a, *list) == 0)
			return true;
	return false;
}

/* Options of git push/fetch/pull/clone/ls-remote that take their value as
 * the next argument (parse-options OPT_STRING and friends), so that value is
 * not mistaken for the repository. Should one be missing here, the daemon
 * looks up a remote git does not use; a policy constraining destinations
 * then judges the wrong string, so keep these complete for git 2.39. */
static const char *const opts_push[] = { "--repo", "--receive-pack", "--exec", "-o",
					 "--push-option", "--recurse-submodules", NULL };
static const char *const opts_fetch[] = {
	"--depth", "--deepen", "--shallow-since", "--shallow-exclude", "--upload-pack", "-j",
	"--jobs", "--refmap", "-o", "--server-option", "--negotiation-tip", "--filter",
	"--recurse-submodules-default", "--submodule-prefix", "-s", "--strategy", "-X",
	"--strategy-option", "--cleanup", "--gpg-sign", NULL,
};
static const char *const opts_clone[] = {
	"-o", "--origin", "-b", "--branch", "-u", "--upload-pack", "--reference",
	"--reference-if-able", "--separate-git-dir", "--depth", "--shallow-since",
	"--shallow-exclude", "-c", "--config", "--server-option", "-j", "--jobs", "--template",
	"--filter", "--bundle-uri", NULL,
};
static const char *const opts_ls_remote[] = { "--upload-pack", "-o", "--server-option", "--sort",
					      NULL };

/* Is a a proper prefix of a long option in list? git's parse-options takes
 * a unique prefix for the whole name ("--push-o X" is "--push-option X"),
 * so the word after it may be that option's value and not an operand. */
static bool abbreviates(const char *a, const char *const *list)
{
	size_t n = strlen(a);

	for (; *list; list++)
		if ((*list)[1] == '-' && strlen(*list) > n && strncmp(a, *list, n) == 0)
			return true;
	return false;
}

/* The first operand (after `--`, anything is an operand); --repo=X or
 * --repo X in *ret_repo_opt. NULL, with *ret_unreadable, when the operand
 * cannot be told for sure: an abbreviated option that may take the next word
 * as its value, or (multi, for git fetch) --multiple / -m, which makes every
 * operand a remote, so the first is not the only destination. */
static const char *first_operand(const char *const *args, size_t n, const char *const *opts,
				 bool multi, const char **ret_repo_opt, bool *ret_unreadable)
{
	bool dashdash = false;

	*ret_repo_opt = NULL;
	*ret_unreadable = false;
	for (size_t i = 0; i < n; i++) {
		const char *a = args[i];

		if (dashdash || a[0] != '-' || strcmp(a, "-") == 0)
			return a;
		if (strcmp(a, "--") == 0) {
			dashdash = true;
			continue;
		}
		if (strncmp(a, "--repo=", 7) == 0) {
			*ret_repo_opt = a + 7;
			continue;
		}
		if (a[1] == '-') {
			if ((multi && strlen(a) > 2 && !strchr(a, '=') &&
			     strncmp(a, "--multiple", strlen(a)) == 0) ||
			    (!strchr(a, '=') && !in_list(a, opts) && abbreviates(a, opts))) {
				*ret_unreadable = true;
				return NULL;
			}
			if (!strchr(a, '=') && in_list(a, opts)) {
				if (strcmp(a, "--repo") == 0 && i + 1 < n)
					*ret_repo_opt = args[i + 1];
				i++;
			}
			continue;
		}
		/* A short-option cluster: the first value-taking letter takes
		 * the rest of the cluster, or the next argument. */
		for (size_t k = 1; a[k]; k++) {
			char o[3] = { '-', a[k], '\0' };

			if (multi && a[k] == 'm') {
				*ret_unreadable = true;
				return NULL;
			}
			if (in_list(o, opts)) {
				if (a[k + 1] == '\0')
					i++;
				break;
			}
		}
	}
	return NULL;
}

/* git push --recurse-submodules=on-demand|only also pushes every changed
 * submodule to its own remote (fetch and pull contact it), which the one
 * destination computed for the superproject does not cover. "no" (and its
 * boolean spellings) and "check" reach nothing else; for fetch and pull the
 * value is optional (a bare --recurse-submodules recurses). Options after
 * "--" are operands. */
static bool recurses(const char *const *args, size_t n, bool value_required)
{
	static const char *const harmless[] = { "no", "false", "off", "0", "check", NULL };

	for (size_t i = 0; i < n; i++) {
		const char *a = args[i], *v;

		if (strcmp(a, "--") == 0)
			break;
		if (strncmp(a, "--recurse-submodules", 20) != 0)
			continue;
		if (a[20] == '=')
			v = a + 21;
		else if (a[20] == '\0' && value_required && i + 1 < n)
			v = args[++i];
		else
			return true;
		if (!in_list(v, harmless))
			return true;
	}
	return false;
}

void gitdest_find(const char *const *args, size_t n, enum gitdest_kind *ret_kind,
		  const char **ret_repo)
{
	const char *const *opts;
	const char *repo, *repo_opt;
	enum gitdest_kind kind;
	bool unreadable;

	*ret_kind = GITDEST_NONE;
	*ret_repo = NULL;
	if (n < 1)
		return;
	if (strcmp(args[0], "push") == 0) {
		kind = GITDEST_PUSH;
		opts = opts_push;
	} else if (strcmp(args[0], "fetch") == 0 || strcmp(args[0], "pull") == 0) {
		kind = GITDEST_FETCH;
		opts = opts_fetch;
	} else if (strcmp(args[0], "ls-remote") == 0) {
		kind = GITDEST_FETCH;
		opts = opts_ls_remote;
	} else if (strcmp(args[0], "clone") == 0) {
		kind = GITDEST_CLONE;
		opts = opts_clone;
	} else
		return;
	repo = first_operand(args + 1, n - 1, opts, strcmp(args[0], "fetch") == 0, &repo_opt,
			     &unreadable);
	if (unreadable || (kind != GITDEST_CLONE && recurses(args + 1, n - 1, kind == GITDEST_PUSH))) {
		*ret_kind = kind;
		return;
	}
	/* git push: "--repo ... is equivalent to the <repository> argument. If
	 * both are specified, the command-line argument takes precedence." */
	if (!repo && kind == GITDEST_PUSH)
		repo = repo_opt;
	*ret_kind = kind;
	if (repo && repo[0] != '-' && repo[0] != '\0')
		*ret_repo = repo;
}

/* git.c handle_options (git 2.39-2.45): global options that take the next
 * word as their value when not written with '='. -c and --config-env are
 * refused by the grammar; they still consume their value here. */
static const char *const global_with_value[] = { "-C", "-c", "--git-dir", "--work-tree",
						 "--namespace", "--super-prefix", "--config-env",
						 "--attr-source", NULL };

static bool is_option(const char *a, const char *name)
{
	size_t n = strlen(name);

	return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

int gitdest_global_chdirs(const char *const *args, size_t n, size_t *ret_idx, size_t max,
			  size_t *ret_n, size_t *ret_sub, const char **reterr_option)
{
	size_t k = 0, i;

	for (i = 0; i < n && args[i][0] == '-'; i++) {
		const char *a = args[i];

		/* git has no "--" among its global options; "--" or "-" would be
		 * "unknown option", which git itself refuses. */
		if (is_option(a, "--git-dir") || is_option(a, "--work-tree")) {
			*reterr_option = a;
			return -EPERM;
		}
		if (!in_list(a, global_with_value))
			continue;
		if (i + 1 >= n)
			return -EINVAL;
		if (strcmp(a, "-C") == 0) {
			if (k >= max)
				return -E2BIG;
			ret_idx[k++] = i;
		}
		i++;
	}
	*ret_n = k;
	*ret_sub = i;
	return 0;
}

int gitdest_rewrite_url(const char *url, const char *rules, size_t rules_len, int push,
			char **ret)
{
	const char *best_base[2] = { NULL, NULL }, *p = rules, *end = rules + rules_len;
	size_t best_len[2] = { 0, 0 }, base_len[2] = { 0, 0 };
	char *out;

	if (strlen(url) >= GITDEST_MAX_URL)
		return -ENAMETOOLONG;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *value, *nul, *var;
		size_t vlen;
		int kind;

		if (!nl || (size_t)(nl - p) < 5 || strncmp(p, "url.", 4) != 0)
			return -EBADMSG;
		value = nl + 1;
		nul = memchr(value, '\0', (size_t)(end - value));
		if (!nul)
			return -EBADMSG;
		vlen = (size_t)(nul - value);
		/* The variable is the part after the last '.' of the key. */
		var = NULL;
		for (const char *q = nl - 1; q >= p + 4; q--)
			if (*q == '.') {
				var = q;
				break;
			}
		if (!var || var == p + 4)
			return -EBADMSG;
		if ((size_t)(nl - var) == strlen(".pushinsteadof") &&
		    strncmp(var, ".pushinsteadof", (size_t)(nl - var)) == 0)
			kind = 0;
		else if ((size_t)(nl - var) == strlen(".insteadof") &&
			 strncmp(var, ".insteadof", (size_t)(nl - var)) == 0)
			kind = 1;
		else
			return -EBADMSG;
		if ((kind == 1 || push) && vlen > best_len[kind] && strncmp(url, value, vlen) == 0) {
			best_len[kind] = vlen;
			best_base[kind] = p + 4;
			base_len[kind] = (size_t)(var - (p + 4));
		}
		p = nul + 1;
	}
	for (int k = 0; k < 2; k++)
		if (best_base[k]) {
			size_t n = base_len[k] + strlen(url + best_len[k]);

			if (n >= GITDEST_MAX_URL)
				return -ENAMETOOLONG;
			out = malloc(n + 1);
			if (!out)
				return -ENOMEM;
			memcpy(out, best_base[k], base_len[k]);
			memcpy(out + base_len[k], url + best_len[k], strlen(url + best_len[k]) + 1);
			*ret = out;
			return 0;
		}
	out = strdup(url);
	if (!out)
		return -ENOMEM;
	*ret = out;
	return 0;
}
