/* SPDX-License-Identifier: MIT */
/* Turns lib/seccomp_rules' table into a libseccomp filter. Built in PID 1
 * before the fork (so a bad table aborts the start before anything runs),
 * loaded by the agent's child as the very last step before execve. */
#ifndef CS_INIT_SECCOMP_FILTER_H
#define CS_INIT_SECCOMP_FILTER_H

#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>

#include "seccomp_rules.h"

/* Builds a filter from rules[0..n): default ALLOW, EPERM or ENOSYS per rule,
 * and every syscall from a foreign ABI (x32, i386 via int 0x80) refused with
 * EPERM: their socketcall() multiplexing could not be filtered by argument.
 * Returns 0 and *ret (release with seccomp_release()), or a negative errno;
 * on -EINVAL *reterr_name names the rule libseccomp refused. */
int seccomp_build(const struct seccomp_rule *rules, size_t n, scmp_filter_ctx *ret,
		  const char **reterr_name);

/* Step 6a: with enabled, builds the filter from seccomp_rules_get() into
 * *ret (printing the one-line failure on error); without, prints a loud
 * warning and sets *ret to NULL. Returns 0 or a negative errno. */
int seccomp_prepare(bool enabled, scmp_filter_ctx *ret);

/* Loads ctx into the calling thread. The caller has set NO_NEW_PRIVS.
 * Returns 0 or a negative errno. */
int seccomp_load_filter(scmp_filter_ctx ctx);

#endif
