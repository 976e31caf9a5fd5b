/* SPDX-License-Identifier: MIT */
#include "signals.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "fail.h"
#include "macros.h"

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

bool signals_is_forwarded(int sig)
{
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
		if (forwarded[i] == sig)
			return true;
	return false;
}

int signals_setup(struct signals *s, bool test_subreaper)
{
	sigset_t mask, readable;

	s->fd = -1;
	s->pid1 = getpid() == 1;
	if (!s->pid1) {
		if (!test_subreaper)
			return init_fail("usage", 0, "not running as PID 1 (pass --test-subreaper to run as a "
						     "subreaper, for tests only)");
		/* Orphans of the agent's tree reparent to us, as to a PID 1. */
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
			return init_fail("signals", -errno, "cannot become a child subreaper");
	}

	if (sigemptyset(&readable) < 0 || sigaddset(&readable, SIGCHLD) < 0)
		return init_fail("signals", -EINVAL, "cannot build the signal mask");
	for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
		if (sigaddset(&readable, forwarded[i]) < 0)
			return init_fail("signals", -EINVAL, "cannot build the signal mask");
	mask = readable;
	/* SIGPIPE stays blocked and unread: a write to a closed stderr then
	 * fails with EPIPE instead of killing a subreaper. Pending signals are
	 * not inherited by the agent, and its mask is restored. */
	if (sigaddset(&mask, SIGPIPE) < 0)
		return init_fail("signals", -EINVAL, "cannot build the signal mask");
	if (sigprocmask(SIG_BLOCK, &mask, &s->saved_mask) < 0)
		return init_fail("signals", -errno, "cannot block signals");
	/* Whoever started us may have ignored signals (SIG_IGN survives
	 * execve and would pass on to the agent, e.g. a SIGINT-deaf agent):
	 * start from the defaults, now that everything we handle is blocked
	 * and no default action can run in PID 1. EINVAL: SIGKILL, SIGSTOP
	 * and glibc's reserved real-time signals cannot be changed. */
	for (int sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	s->fd = signalfd(-1, &readable, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s->fd < 0)
		return init_fail("signals", -errno, "cannot create the signalfd");
	return 0;
}
