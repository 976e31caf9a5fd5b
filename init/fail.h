/* SPDX-License-Identifier: MIT */
/* The one line a failed start-up step prints. Before the agent's execve any
 * failure aborts the start with exactly one line on stderr:
 *     sandbox-init: STEP: REASON
 * so the launcher (and a human) can tell which step failed and why. */
#ifndef CS_INIT_FAIL_H
#define CS_INIT_FAIL_H

#include "macros.h"

/* Prints "sandbox-init: STEP: MESSAGE\n" in one write. If error is non-zero
 * (a negative errno), ": strerror" is appended. Returns error if it is
 * negative, else -EINVAL, so callers can `return init_fail(...)`. */
int init_fail(const char *step, int error, const char *fmt, ...) _printf_(3, 4);

#endif
