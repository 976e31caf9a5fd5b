/* SPDX-License-Identifier: MIT */
/* Step 6: fork the agent. The child takes the terminal, drops every
 * privilege, verifies the drop, loads seccomp last and execs; any failure
 * before the execve reaches PID 1 through an O_CLOEXEC pipe (EOF means the
 * execve happened), so PID 1 exits with that step's code. */
#ifndef CS_INIT_SPAWN_H
#define CS_INIT_SPAWN_H

#include <seccomp.h>
#include <signal.h>
#include <sys/types.h>

struct spawn_plan {
	char **argv;             /* argv[0] is looked up in the new PATH */
	const char *user;        /* USER, LOGNAME */
	const char *home;        /* HOME */
	const char *shell;       /* SHELL */
	uid_t uid;
	gid_t gid;
	scmp_filter_ctx filter;  /* NULL: no seccomp (--seccomp=off) */
	const sigset_t *sigmask; /* restored in the child */
	/* Run by PID 1 right after the fork while the child, fully dropped,
	 * waits before its execve (PID 1 drops its own start-up capabilities
	 * here, so the agent never runs beside them). Negative: the child is
	 * killed before it ever execs, and spawn_agent() fails with *ret_exit
	 * as set. NULL: nothing to wait for. */
	int (*before_exec)(void *userdata, int *ret_exit);
	void *userdata;
};

/* Builds the agent's environment from ours (lib/envclean), releases the
 * terminal (if stdin is the controlling terminal of our own session, as
 * with docker run -t, PID 1 gives it up so the agent's new session can
 * take it), forks, runs plan->before_exec, and only then lets the child exec
 * the agent. Returns 0 and *ret_pid once the child has
 * exec'd. Otherwise prints the one-line failure (the child's step and
 * reason), reaps the child, and returns a negative errno with *ret_exit the
 * exit code: EXIT_INIT_SPAWN, EXIT_INIT_PRIVDROP, EXIT_INIT_SECCOMP,
 * EXIT_NOT_FOUND (127: ENOENT) or EXIT_CANNOT_EXECUTE (126). */
int spawn_agent(const struct spawn_plan *plan, pid_t *ret_pid, int *ret_exit);

#endif
