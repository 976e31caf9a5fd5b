/* SPDX-License-Identifier: MIT */
/* PID 1's single poll loop. Components that need I/O in PID 1 (the signalfd
 * and reaper, the DNS gate, c-ares, the firewall's set refresher) register a
 * source; the loop polls all of their fds in one poll() and dispatches.
 * Single-threaded by design: capabilities are per thread, and PID 1 must
 * never die, so no callback may block or exit. */
#ifndef CS_INIT_LOOP_H
#define CS_INIT_LOOP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "loopsrc.h"

#define LOOP_MAX_SOURCES 8
#define LOOP_MAX_FDS 256

struct loop {
	struct loop_source sources[LOOP_MAX_SOURCES];
	size_t n_sources;
	bool quit;
	int exit_status;
};

/* Copies *src into the loop. -ENOSPC when LOOP_MAX_SOURCES are registered. */
int loop_add_source(struct loop *loop, const struct loop_source *src);

/* One poll() over every source, then dispatch. Returns 0, or a negative
 * errno from poll() other than EINTR (callers log and carry on). */
int loop_run_once(struct loop *loop);

/* Runs until loop->quit; returns loop->exit_status. */
int loop_run(struct loop *loop);

#endif
