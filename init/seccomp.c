/* SPDX-License-Identifier: MIT */
#include "seccomp_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "fail.h"

#include "macros.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release)

static int rule_action(enum seccomp_rule_action a, uint32_t *ret)
{
	switch (a) {
	case SECCOMP_RULE_EPERM:
		*ret = SCMP_ACT_ERRNO(EPERM);
		return 0;
	case SECCOMP_RULE_ENOSYS:
		*ret = SCMP_ACT_ERRNO(ENOSYS);
		return 0;
	case SECCOMP_RULE_ACTION_MAX:
	default:
		return -EINVAL;
	}
}

static int rule_cond(const struct seccomp_rule_cond *c, struct scmp_arg_cmp *ret)
{
	if (c->arg > 5)
		return -EINVAL;
	switch (c->op) {
	case SECCOMP_RULE_OP_MASKED_EQ:
		*ret = (struct scmp_arg_cmp){c->arg, SCMP_CMP_MASKED_EQ, c->mask, c->value};
		return 0;
	case SECCOMP_RULE_OP_GT:
		*ret = (struct scmp_arg_cmp){c->arg, SCMP_CMP_GT, c->value, 0};
		return 0;
	case SECCOMP_RULE_OP_NE:
		*ret = (struct scmp_arg_cmp){c->arg, SCMP_CMP_NE, c->value, 0};
		return 0;
	case SECCOMP_RULE_OP_MAX:
	default:
		return -EINVAL;
	}
}

int seccomp_build(const struct seccomp_rule *rules, size_t n, scmp_filter_ctx *ret,
		  const char **reterr_name)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	int r;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	/* Foreign architectures (including x32, which shares x86_64's audit
	 * arch with bit 30 set in the number) take this action. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct scmp_arg_cmp cmp[SECCOMP_RULE_MAX_CONDS];
		uint32_t action;
		int nr;

		if (reterr_name)
			*reterr_name = rules[i].name;
		if (rules[i].n_conds > SECCOMP_RULE_MAX_CONDS)
			return -EINVAL;
		r = rule_action(rules[i].action, &action);
		if (r < 0)
			return r;
		for (size_t k = 0; k < rules[i].n_conds; k++) {
			r = rule_cond(&rules[i].conds[k], &cmp[k]);
			if (r < 0)
				return r;
		}
		nr = seccomp_syscall_resolve_name(rules[i].name);
		if (nr == __NR_SCMP_ERROR)
			return -EINVAL;
		/* seccomp_rule_add_exact: refuse rather than silently rewrite
		 * a rule libseccomp cannot express as written. */
		r = seccomp_rule_add_exact_array(ctx, action, nr, (unsigned)rules[i].n_conds, cmp);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(ctx);
	return 0;
}

void seccomp_tail_program(struct sock_filter out[SECCOMP_TAIL_LEN])
{
	const struct sock_filter prog[SECCOMP_TAIL_LEN] = {
		/* 0: ld [arch]; jne #AUDIT_ARCH_X86_64, allow */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 6),
		/* 2: ld [nr]; jge #X32_BIT, allow (the table's filter refuses x32) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 4, 0),
		/* 4: jgt #LAST_REVIEWED, enosys */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, SECCOMP_LAST_REVIEWED_NR, 2, 0),
		/* 5: jlt #UNASSIGNED_FIRST, allow; jle #UNASSIGNED_LAST, enosys */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, SECCOMP_UNASSIGNED_FIRST_NR, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, SECCOMP_UNASSIGNED_LAST_NR, 1, 0),
		/* 7: */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		/* 8: */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	for (size_t i = 0; i < SECCOMP_TAIL_LEN; i++)
		out[i] = prog[i];
}

int seccomp_load_filter(scmp_filter_ctx ctx)
{
	struct sock_filter tail[SECCOMP_TAIL_LEN];
	struct sock_fprog prog = {.len = SECCOMP_TAIL_LEN, .filter = tail};
	int r;

	r = seccomp_load(ctx);
	if (r < 0)
		return r;
	seccomp_tail_program(tail);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return -errno;
	return 0;
}

int seccomp_prepare(bool enabled, scmp_filter_ctx *ret)
{
	const struct seccomp_rule *rules;
	const char *bad = NULL;
	size_t n;
	int r;

	if (!enabled) {
		(void)dprintf(STDERR_FILENO,
			      "sandbox-init: WARNING: --seccomp=off: the agent runs WITHOUT a seccomp filter "
			      "(namespaces, mount, ptrace, bpf, io_uring... are open): debugging only\n");
		*ret = NULL;
		return 0;
	}
	rules = seccomp_rules_get(&n);
	r = seccomp_build(rules, n, ret, &bad);
	if (r < 0)
		return init_fail("seccomp", r, "cannot build the filter (rule for '%s')", bad ? bad : "?");
	return 0;
}
