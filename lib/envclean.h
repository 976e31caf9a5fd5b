/* SPDX-License-Identifier: MIT */
/* The agent's environment, built from PID 1's. Pure. */
#ifndef CS_ENVCLEAN_H
#define CS_ENVCLEAN_H

#include <stdbool.h>
#include <stddef.h>

/* Caps on what is passed on. */
#define ENVCLEAN_MAX_VARS 1024
#define ENVCLEAN_MAX_BYTES ((size_t)256 << 10)
/* PATH when the inherited one is missing or unsafe. */
#define ENVCLEAN_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

struct envclean_user {
	const char *name;  /* USER and LOGNAME */
	const char *home;  /* HOME */
	const char *shell; /* SHELL */
};

/* True for a variable PID 1 must not hand to the agent: PID 1's own
 * configuration (HOST_UID, HOST_GID, EXTRA_ALLOWED_DOMAINS, CODE_SANDBOX_*)
 * and variables that make the dynamic loader, libc or an interpreter load
 * or run code chosen by the environment (LD_*, GCONV_PATH, BASH_ENV,
 * NODE_OPTIONS, PYTHONSTARTUP, ...). entry is "NAME=value" or "NAME". */
bool envclean_is_dropped(const char *entry);

/* True if path is a usable PATH: non-empty, at most 4096 bytes, and every
 * entry absolute (an empty entry or "." means the current directory, which
 * is the agent-controlled /workspace). */
bool envclean_path_is_safe(const char *path);

/* Builds a new NULL-terminated environment from env: dropped variables,
 * entries without '=', and later duplicates of a name are removed; HOME,
 * USER, LOGNAME, SHELL are set from *u; PATH is kept if safe, else set to
 * ENVCLEAN_DEFAULT_PATH. The result is one allocation (array and strings)
 * released with free(). Returns 0, -E2BIG beyond the caps, -ENOMEM. */
int envclean_build(char *const *env, const struct envclean_user *u, char ***ret_env);

#endif
