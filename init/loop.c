/* SPDX-License-Identifier: MIT */
#include "loop.h"

#include <errno.h>
#include <string.h>

#include "log.h"

int loop_add_source(struct loop *loop, const struct loop_source *src)
{
	if (loop->n_sources >= LOOP_MAX_SOURCES)
		return -ENOSPC;
	loop->sources[loop->n_sources++] = *src;
	return 0;
}

int loop_run_once(struct loop *loop)
{
	struct pollfd fds[LOOP_MAX_FDS];
	size_t start[LOOP_MAX_SOURCES], count[LOOP_MAX_SOURCES];
	size_t used = 0;
	int timeout = -1;

	for (size_t i = 0; i < loop->n_sources; i++) {
		struct loop_source *s = &loop->sources[i];
		int t = -1, n;

		start[i] = used;
		count[i] = 0;
		n = s->prepare(s->userdata, fds + used, LOOP_MAX_FDS - used, &t);
		if (n < 0) {
			log_warn_errno(n, "Loop source '%s' failed to prepare: %s, ignoring", s->name, strerror(-(n)));
			/* Still dispatch it (with no fds) so it can retry or time out. */
			n = 0;
		}
		if ((size_t)n > LOOP_MAX_FDS - used)
			n = (int)(LOOP_MAX_FDS - used);
		for (int k = 0; k < n; k++)
			fds[used + (size_t)k].revents = 0;
		count[i] = (size_t)n;
		used += (size_t)n;
		if (t >= 0 && (timeout < 0 || t < timeout))
			timeout = t;
	}

	if (poll(fds, used, timeout) < 0) {
		/* EINTR: no handlers are installed (signals go to a signalfd), but
		 * a ptrace attach or SIGSTOP/SIGCONT can still interrupt poll(). */
		if (errno == EINTR)
			return 0;
		return -errno;
	}

	for (size_t i = 0; i < loop->n_sources && !loop->quit; i++) {
		struct loop_source *s = &loop->sources[i];
		s->dispatch(s->userdata, fds + start[i], count[i]);
	}
	return 0;
}

int loop_run(struct loop *loop)
{
	while (!loop->quit) {
		int r = loop_run_once(loop);
		/* PID 1 never dies of a loop error: log and go round again. */
		if (r < 0)
			log_error_errno(r, "poll() failed: %s, continuing", strerror(-(r)));
	}
	return loop->exit_status;
}
