/* SPDX-License-Identifier: MIT */
/* execd.conf, the configuration of sandbox-execd (pure parser).
 *
 *   # comment (whole lines only: '#' may appear inside values such as URLs)
 *   backend = static
 *   policy_file = /home/me/.config/code-sandbox/policy.conf
 *   audit_log = /home/me/.local/state/code-sandbox/audit.jsonl
 *   tool git = /usr/bin/git
 *   map /workspace = /home/me/src/project
 *   command_timeout_ms = 600000
 *   git_cache_dir = /home/me/.local/state/code-sandbox/git-cache
 *
 * Every key at most once (tool and map lines once per name/prefix); unknown
 * keys, malformed numbers and relative paths are errors with the line
 * number. Semantic checks that need the file system (does the binary exist)
 * are the daemon's. */
#ifndef CS_EXECDCONF_H
#define CS_EXECDCONF_H

#include <stddef.h>

#include "pathmap.h"

#define EXECDCONF_MAX_SIZE 1048576u /* bytes of configuration (1 MiB) */
#define EXECDCONF_MAX_LINE 8192
#define EXECDCONF_MAX_TOOLS 64
#define EXECDCONF_MAX_TOOL_NAME 32
#define EXECDCONF_MAX_ERROR 256

struct execdconf_tool {
	char name[EXECDCONF_MAX_TOOL_NAME + 1];
	char *path; /* absolute, as written; the daemon resolves it at start-up */
};

struct execdconf {
	char *backend;
	char *policy_file;
	char *webhook_url;
	char *webhook_token_file;
	char *webhook_ca_file;
	unsigned webhook_timeout_ms;
	unsigned webhook_poll_ms;
	char *exec_program;
	unsigned exec_timeout_ms;
	unsigned decision_timeout_ms;

	char *audit_log;
	char *socket;     /* NULL: $XDG_RUNTIME_DIR/code-sandbox/execd.sock */
	char *token_file; /* NULL: "token" beside the socket */

	unsigned command_timeout_ms;
	unsigned max_concurrent;          /* requests in flight, total */
	unsigned max_concurrent_per_peer; /* per container (peer pid namespace) */
	unsigned max_frame;               /* request frame cap, <= WIRE_MAX_FRAME */
	unsigned request_read_timeout_ms; /* to receive a whole request frame */
	char *gh_host;                    /* NULL: github.com; the one host gh may use */
	char *work_dir;                   /* NULL: a private directory made at start-up */
	unsigned psql_stdin;              /* 1: psql may read the agent's stdin */

	size_t n_tools;
	struct execdconf_tool tools[EXECDCONF_MAX_TOOLS];
	struct pathmap map;

	/* The git relay (execd/gitrelay.c). */
	char *git_binary;        /* NULL: /usr/bin/git */
	char *git_cache_dir;     /* NULL: $XDG_STATE_HOME/code-sandbox/git-cache */
	unsigned git_max_caches; /* cache repositories kept (least recently used pruned) */
	unsigned git_max_cache_mb; /* MiB of caches kept; 0: no byte bound */
};

struct execdconf_error {
	unsigned line; /* 1-based, 0 = not tied to a line */
	char message[EXECDCONF_MAX_ERROR];
};

/* Defaults for every number, NULL strings. */
void execdconf_init(struct execdconf *c);

/* Parses text (len bytes) into c, which execdconf_init() prepared. On error
 * returns -EINVAL (-ENOMEM, -E2BIG) with reterr filled; c then holds what was
 * parsed so far and must still be released with execdconf_done(). */
int execdconf_parse(struct execdconf *c, const char *text, size_t len,
		    struct execdconf_error *reterr);

/* Checks the whole configuration after parsing: a backend is chosen and
 * an audit log is set, at least
 * one tool and one map. -EINVAL with reterr (line 0). */
int execdconf_validate(const struct execdconf *c, struct execdconf_error *reterr);

const struct execdconf_tool *execdconf_find_tool(const struct execdconf *c, const char *name);

void execdconf_done(struct execdconf *c);

#endif
