/* SPDX-License-Identifier: MIT */
/* Turns lib/seccomp_rules' table into a libseccomp filter. Built in PID 1
 * before the fork (so a bad table aborts the start before anything runs),
 * loaded by the agent's child as the very last step before execve. */
#ifndef CS_INIT_SECCOMP_FILTER_H
#define CS_INIT_SECCOMP_FILTER_H

#include <linux/filter.h>
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

/* The highest x86_64 syscall number the rule table was reviewed against
 * (fchmodat2, 452: the table refuses it with a setuid or setgid mode, as it
 * does chmod and fchmodat, and glibc 2.39+ uses it for fchmodat; 451,
 * cachestat, is allowed as in Docker's profile). The rule
 * table is a deny-list: without a limit every syscall a newer kernel adds
 * (open_tree_attr, file_setattr, ...) would be allowed unseen. */
#define SECCOMP_LAST_REVIEWED_NR 452
/* x86_64 leaves these numbers unassigned (kept in step with the generic
 * table); a kernel that assigns one gets it refused until reviewed. */
#define SECCOMP_UNASSIGNED_FIRST_NR 336
#define SECCOMP_UNASSIGNED_LAST_NR 423
/* Length of seccomp_tail_program(). */
#define SECCOMP_TAIL_LEN 9

/* The second, fixed filter loaded with the table's: on x86_64, every
 * syscall number above SECCOMP_LAST_REVIEWED_NR or in the unassigned block
 * (x32 numbers aside, which the table's filter refuses) fails with ENOSYS, what a kernel without it
 * answers, so libc and runtimes fall back; everything else is left to the
 * table's filter. Fills out[0..SECCOMP_TAIL_LEN). Pure; never fails. */
void seccomp_tail_program(struct sock_filter out[SECCOMP_TAIL_LEN]);

/* Loads ctx, then the tail program, into the calling thread. The caller
 * has set NO_NEW_PRIVS. Returns 0 or a negative errno. */
int seccomp_load_filter(scmp_filter_ctx ctx);

#endif
