/* SPDX-License-Identifier: MIT */
/* Every exit code the project's own programs choose, in one table.
 * Documented for users in README.md ("Exit codes"); keep both in sync.
 *
 * The agent's (or a wrapped tool's) own status always passes through
 * unchanged, and death by signal N becomes 128+N, as shells report it. Our
 * own failures therefore use a block (110..125) that everyday tools rarely
 * return, below the shell's 126/127 and the 128+N signal range. */
#ifndef CS_EXITCODES_H
#define CS_EXITCODES_H

enum {
	/* sandbox-init: a start-up step failed, the agent never ran. */
	EXIT_INIT_INTERNAL = 110, /* unexpected internal error */
	EXIT_INIT_USAGE = 111,    /* bad command line */
	EXIT_INIT_CONFIG = 112,   /* invalid configuration (ids, profile, allowlist) */
	EXIT_INIT_FIREWALL = 113, /* firewall could not be installed or verified */
	EXIT_INIT_IDENTITY = 114, /* /etc/passwd or /etc/group remap failed */
	EXIT_INIT_HOME = 115,     /* home ownership fix failed */
	EXIT_INIT_SETTINGS = 116, /* settings lock failed */
	EXIT_INIT_SECCOMP = 117,  /* seccomp filter could not be built or loaded */
	EXIT_INIT_PRIVDROP = 118, /* privilege drop or its verification failed */
	EXIT_INIT_SPAWN = 119,    /* fork, session or terminal set-up failed */

	/* Wrappers (sandbox-exec and its tool links). */
	EXIT_WRAP_DENIED = 120,      /* the daemon's policy refused the command */
	EXIT_WRAP_UNREACHABLE = 121, /* no daemon socket / connection refused */
	EXIT_WRAP_PROTOCOL = 122,    /* malformed or unexpected reply */
	EXIT_WRAP_REFUSED = 123,     /* daemon-side refusal: busy, timeout, auth, unknown tool */
	EXIT_WRAP_USAGE = 124,       /* wrapper misconfigured (no token, bad name) */

	/* Shell conventions, also used by sandbox-init for the agent's execve. */
	EXIT_CANNOT_EXECUTE = 126,
	EXIT_NOT_FOUND = 127,
	EXIT_SIGNAL_BASE = 128,
};

#endif
