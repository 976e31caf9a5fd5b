/* SPDX-License-Identifier: MIT */
/* A fixed-window rate limit for PID 1's log lines: the agent controls how
 * often it queries refused names or connects to blocked hosts, and must not
 * be able to flood the container's log (or slow PID 1 down writing it).
 * Header-only; the caller passes the monotonic time. */
#ifndef CS_FW_RATELIMIT_H
#define CS_FW_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct ratelimit {
	uint64_t interval_ms;
	unsigned burst;
	uint64_t window_start_ms;
	unsigned count;
	uint64_t suppressed; /* lines refused since the last allowed one */
};

#define RATELIMIT_INIT(interval, burst_) {.interval_ms = (interval), .burst = (burst_)}

/* True when a line may be logged now. When a new window opens after lines
 * were suppressed, *ret_suppressed says how many (to be reported once), else
 * it is set to 0. */
static inline bool ratelimit_allow(struct ratelimit *rl, uint64_t now_ms, uint64_t *ret_suppressed)
{
	*ret_suppressed = 0;
	if (rl->count == 0 || now_ms - rl->window_start_ms >= rl->interval_ms) {
		rl->window_start_ms = now_ms;
		rl->count = 0;
		*ret_suppressed = rl->suppressed;
		rl->suppressed = 0;
	}
	if (rl->count >= rl->burst) {
		rl->suppressed++;
		return false;
	}
	rl->count++;
	return true;
}

#endif
