/* SPDX-License-Identifier: MIT */
/* The monotonic clock in milliseconds and microseconds: deadlines, timeouts
 * and durations (never the wall clock, which the host may step). One copy
 * for lib/, init/ and firewall/. Header-only; clock_gettime(CLOCK_MONOTONIC)
 * cannot fail with these arguments. */
#ifndef CS_MONOCLOCK_H
#define CS_MONOCLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monoclock_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline uint64_t monoclock_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif
