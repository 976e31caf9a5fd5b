/* SPDX-License-Identifier: MIT */
#include "envclean.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"

#define PATH_VALUE_MAX 4096

/* Exact names. Each either configures PID 1 (the agent has no business
 * seeing them) or makes a loader or interpreter run or load code named by
 * the environment before the program's own code: glibc's secure mode drops
 * several of these for setuid programs for the same reason. */
static const char *const dropped_names[] = {
	/* PID 1's configuration. */
	"HOST_UID", "HOST_GID", "EXTRA_ALLOWED_DOMAINS",
	/* glibc: charset converters, tunables, message catalogues, locales,
	 * resolver behaviour and malloc hooks. */
	"GCONV_PATH", "GLIBC_TUNABLES", "NLSPATH", "LOCPATH", "HOSTALIASES", "LOCALDOMAIN",
	"RES_OPTIONS", "RESOLV_HOST_CONF",
	/* Shells: startup files and hooks run before the command. */
	"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH",
	"GLOBIGNORE",
	/* Interpreters: options that preload modules or run code at start
	 * (search paths such as PYTHONPATH or NODE_PATH are kept: they only
	 * add places to look, as the agent's own files can). */
	"NODE_OPTIONS", "PYTHONSTARTUP", "PYTHONINSPECT", "PERL5OPT", "PERL5DB", "RUBYOPT",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
	/* Set below for devuser; any inherited value is PID 1's (root's). */
	"HOME", "USER", "LOGNAME", "SHELL", "MAIL",
};

/* Prefixes: the loader's whole namespace (LD_PRELOAD, LD_LIBRARY_PATH,
 * LD_AUDIT, ...), our own, malloc tunables, and bash exported functions
 * (the Shellshock vector). */
static const char *const dropped_prefixes[] = {
	"LD_", "CODE_SANDBOX_", "MALLOC_", "BASH_FUNC_",
};

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

bool envclean_is_dropped(const char *entry)
{
	size_t n = name_len(entry);

	for (size_t i = 0; i < ELEMENTSOF(dropped_names); i++)
		if (strlen(dropped_names[i]) == n && memcmp(entry, dropped_names[i], n) == 0)
			return true;
	for (size_t i = 0; i < ELEMENTSOF(dropped_prefixes); i++) {
		size_t pl = strlen(dropped_prefixes[i]);
		if (n >= pl && memcmp(entry, dropped_prefixes[i], pl) == 0)
			return true;
	}
	return false;
}

bool envclean_path_is_safe(const char *path)
{
	size_t len = strlen(path);

	if (len == 0 || len > PATH_VALUE_MAX)
		return false;
	for (const char *p = path;;) {
		const char *colon = strchr(p, ':');
		/* Every entry must start with '/': empty and relative entries
		 * resolve against the working directory. */
		if (*p != '/')
			return false;
		if (!colon)
			return true;
		p = colon + 1;
	}
}

int envclean_build(char *const *env, const struct envclean_user *u, char ***ret_env)
{
	const char *path = NULL;
	const char *kept[ENVCLEAN_MAX_VARS];
	size_t n_kept = 0, bytes = 0, n_out;
	char **out, *s;
	struct {
		const char *name, *value;
	} set[] = {
		{"HOME", u->home}, {"USER", u->name}, {"LOGNAME", u->name}, {"SHELL", u->shell}, {"PATH", NULL},
	};

	for (char *const *e = env; e && *e; e++) {
		size_t n = name_len(*e);
		bool dup = false;

		if (!strchr(*e, '=') || n == 0 || envclean_is_dropped(*e))
			continue;
		if (n == 4 && memcmp(*e, "PATH", 4) == 0) {
			if (!path)
				path = *e + 5;
			continue;
		}
		/* getenv() returns the first of duplicates, other readers the
		 * last: keep only the first so every reader agrees. */
		for (size_t i = 0; i < n_kept && !dup; i++)
			dup = name_len(kept[i]) == n && memcmp(kept[i], *e, n) == 0;
		if (dup)
			continue;
		if (n_kept >= ENVCLEAN_MAX_VARS - ELEMENTSOF(set))
			return -E2BIG;
		kept[n_kept++] = *e;
		bytes += strlen(*e) + 1;
		if (bytes > ENVCLEAN_MAX_BYTES)
			return -E2BIG;
	}
	set[4].value = path && envclean_path_is_safe(path) ? path : ENVCLEAN_DEFAULT_PATH;
	for (size_t i = 0; i < ELEMENTSOF(set); i++)
		bytes += strlen(set[i].name) + 1 + strlen(set[i].value) + 1;
	if (bytes > ENVCLEAN_MAX_BYTES)
		return -E2BIG;

	n_out = n_kept + ELEMENTSOF(set);
	out = malloc((n_out + 1) * sizeof(char *) + bytes);
	if (!out)
		return -ENOMEM;
	s = (char *)(out + n_out + 1);
	for (size_t i = 0; i < n_kept; i++) {
		size_t l = strlen(kept[i]) + 1;
		out[i] = memcpy(s, kept[i], l);
		s += l;
	}
	for (size_t i = 0; i < ELEMENTSOF(set); i++) {
		size_t nl = strlen(set[i].name), vl = strlen(set[i].value);
		out[n_kept + i] = s;
		memcpy(s, set[i].name, nl);
		s[nl] = '=';
		memcpy(s + nl + 1, set[i].value, vl + 1);
		s += nl + vl + 2;
	}
	out[n_out] = NULL;
	*ret_env = out;
	return 0;
}
