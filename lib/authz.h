/* SPDX-License-Identifier: MIT */
/* The authorization contract of sandbox-execd: what every backend (allow_all,
 * static, webhook, exec) is shown, and what it answers. Backends decide on
 * this parsed request, never on a joined command string. */
#ifndef CS_AUTHZ_H
#define CS_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct authz_git;
struct psqltarget;

#define AUTHZ_MAX_REASON 512  /* bytes of human-readable reason, with NUL */
#define AUTHZ_MAX_RULE 128    /* "policy.conf:12" or a backend's own rule id */
#define AUTHZ_MAX_ENV 32      /* extra environment variables from a backend */
#define AUTHZ_MAX_ENV_LEN 8192 /* one "NAME=value", with NUL */

enum authz_verdict {
	AUTHZ_DENY,
	AUTHZ_ALLOW,
	AUTHZ_VERDICT_MAX,
};

struct authz_request {
	const char *request_id;       /* unique per request; also in the audit log */
	const char *tool;             /* tool-table name, e.g. "git" */
	const char *const *argv;      /* argv[0] is the tool name; argv[argc] == NULL */
	size_t argc;
	const char *container_cwd;    /* as the wrapper sent it */
	const char *host_cwd;         /* mapped and verified beneath a path-map root */
	const char *destination;      /* effective destination when known (git remote
	                               * URL after insteadOf, cluster, endpoint), else NULL */
	const char *reason;           /* SANDBOX_REASON, may be NULL */
	const char *repo;             /* may be NULL */
	const char *branch;           /* may be NULL */
	uid_t peer_uid;
	gid_t peer_gid;
	pid_t peer_pid;
	/* git relay requests (lib/authz_git.h); NULL for tool requests. */
	const struct authz_git *git;
	/* psql requests: host, port, database and user (lib/psqltarget.h);
	 * NULL for other tools. */
	const struct psqltarget *psql;
};

struct authz_decision {
	enum authz_verdict verdict;
	char reason[AUTHZ_MAX_REASON]; /* shown to the agent and audited */
	char rule[AUTHZ_MAX_RULE];     /* what decided, for the audit log */
	size_t n_env;
	char *env[AUTHZ_MAX_ENV];      /* owned "NAME=value"; secret: never logged */
};

/* Frees and wipes env (explicit_bzero) and resets *d to a denial with an
 * empty reason. Safe on a zeroed struct. */
void authz_decision_clear(struct authz_decision *d);

/* Validates and appends "NAME=value" (NAME a portable identifier, not
 * LD_* or other loader variables, total length < AUTHZ_MAX_ENV_LEN).
 * -EINVAL, -E2BIG when full, -ENOMEM. */
int authz_decision_add_env(struct authz_decision *d, const char *name, const char *value);

#endif
