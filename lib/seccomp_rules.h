/* SPDX-License-Identifier: MIT */
/* The agent's seccomp deny-list as data. Pure: names, argument conditions
 * and actions; init/seccomp.c turns the table into a libseccomp filter
 * (default action ALLOW, foreign ABIs including x32 refused with EPERM).
 *
 * A rule matches when ALL its conditions hold; a syscall is refused when
 * ANY of its rules matches. libseccomp allows one condition per argument in
 * a rule, so "not 0 and not 0xffffffff" is spelt as several rules. */
#ifndef CS_SECCOMP_RULES_H
#define CS_SECCOMP_RULES_H

#include <stddef.h>
#include <stdint.h>

#define SECCOMP_RULE_MAX_CONDS 2
/* Upper bound on the expanded table (checked by the unit test). */
#define SECCOMP_RULES_MAX 224

enum seccomp_rule_action {
	SECCOMP_RULE_EPERM,  /* fail with EPERM */
	SECCOMP_RULE_ENOSYS, /* fail with ENOSYS: "not implemented", so libc falls back */
	SECCOMP_RULE_ACTION_MAX,
};

enum seccomp_rule_op {
	SECCOMP_RULE_OP_MASKED_EQ, /* (arg & mask) == value */
	SECCOMP_RULE_OP_GT,        /* arg > value (64-bit) */
	SECCOMP_RULE_OP_NE,        /* arg != value (64-bit) */
	SECCOMP_RULE_OP_MAX,
};

struct seccomp_rule_cond {
	unsigned arg; /* 0..5 */
	enum seccomp_rule_op op;
	uint64_t mask; /* MASKED_EQ only */
	uint64_t value;
};

struct seccomp_rule {
	const char *name; /* syscall name as libseccomp spells it */
	enum seccomp_rule_action action;
	size_t n_conds;
	struct seccomp_rule_cond conds[SECCOMP_RULE_MAX_CONDS];
};

/* The full rule table, rules for one syscall adjacent. Static storage;
 * never fails. *ret_n gets the number of rules. */
const struct seccomp_rule *seccomp_rules_get(size_t *ret_n);

/* Number of distinct syscall names in the table. */
size_t seccomp_rules_count_syscalls(void);

#endif
