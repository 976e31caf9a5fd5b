/* SPDX-License-Identifier: MIT */
/* Step 1: every signal PID 1 handles is blocked and read from one signalfd,
 * so no handler ever runs asynchronously and nothing is lost while the
 * start-up steps run (blocked signals stay pending, even for PID 1). */
#ifndef CS_INIT_SIGNALS_H
#define CS_INIT_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

struct signals {
	int fd;              /* non-blocking signalfd, O_CLOEXEC */
	sigset_t saved_mask; /* the mask before step 1, restored in the agent */
	bool pid1;           /* getpid() == 1; false only under --test-subreaper */
};

/* Refuses (-EPERM, after the one-line failure) when not PID 1 unless
 * test_subreaper, in which case the process becomes a child subreaper so
 * orphans still reparent to it. Then blocks SIGCHLD, the forwarded signals
 * and SIGPIPE, and opens the signalfd. Returns 0 or a negative errno. */
int signals_setup(struct signals *s, bool test_subreaper);

/* True for the signals forwarded to the agent: SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH. */
bool signals_is_forwarded(int sig);

#endif
