/* SPDX-License-Identifier: MIT */
/* The interface between PID 1's poll loop (init/loop.h) and the components
 * that need I/O in it (the signalfd and reaper, the DNS gate, the
 * blocked-packet log): a source fills poll fds and gets them back. A neutral
 * home, so that firewall/ can offer sources without depending on init/.
 * Single-threaded by design: no callback may block or exit. */
#ifndef CS_LOOPSRC_H
#define CS_LOOPSRC_H

#include <poll.h>
#include <stddef.h>

struct loop_source {
	const char *name;
	void *userdata;
	/* Fill fds[0..max) with the fds this source waits on (events set,
	 * revents ignored) and return how many (>= 0), or a negative errno
	 * (logged, the source is skipped this round). Lower *timeout_ms (-1 =
	 * no timeout) to the time after which dispatch() must run even with no
	 * I/O. May be called with max == 0. */
	int (*prepare)(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms);
	/* Called after every poll() with the slice prepare() filled (revents
	 * set), including on timeout. Must not block. */
	void (*dispatch)(void *userdata, const struct pollfd *fds, size_t n);
};

#endif
