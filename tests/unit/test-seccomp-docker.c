/* SPDX-License-Identifier: MIT */
/* Our seccomp filter against Docker's default profile, for every x86_64
 * syscall number 0..SECCOMP_COMPARE_MAX_NR.
 *
 * Both filters are compiled to classic BPF by libseccomp (ours through
 * init/seccomp.c, plus its fixed tail program; Docker's from the JSON in
 * tests/data, applied as dockerd/runc apply it for an amd64 container whose
 * capabilities unlock none of the profile's "includes.caps" rules: the
 * launcher grants only what PID 1 needs, and the agent holds none) and run
 * by the small interpreter below on seccomp_data for each number, with
 * every argument probed over the values either filter compares against.
 *
 * A syscall Docker refuses for some arguments and we allow for the same
 * ones fails the test, unless SECURITY.md's table "Allowed here, refused by
 * Docker" names it with a reason; an entry of that table that is not such a
 * case fails too (a stale reason). The full table is printed as TAP
 * comments; SECURITY.md summarises it. */
#include <errno.h>
#include <json-c/json.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "macros.h"
#include "seccomp_filter.h"
#include "seccomp_rules.h"
#include "tap.h"

#define SECCOMP_COMPARE_MAX_NR 1023
#define PROBE_VALUES_MAX 512
#define PROG_MAX 8192
#define EXCEPTIONS_MAX 64
#define SECURITY_MD_MAX ((size_t)1 << 20)

/* x86_64 syscalls newer than libseccomp 2.5.4's table, by number, from the
 * kernel's arch/x86/entry/syscalls/syscall_64.tbl: only to name Docker's
 * rules for them and the table's rows. */
static const struct {
	int nr;
	const char *name;
} newer_syscalls[] = {
	{335, "uretprobe"},	    {451, "cachestat"},	     {452, "fchmodat2"},
	{453, "map_shadow_stack"},  {454, "futex_wake"},     {455, "futex_wait"},
	{456, "futex_requeue"},	    {457, "statmount"},	     {458, "listmount"},
	{459, "lsm_get_self_attr"}, {460, "lsm_set_self_attr"}, {461, "lsm_list_modules"},
	{462, "mseal"},		    {463, "setxattrat"},     {464, "getxattrat"},
	{465, "listxattrat"},	    {466, "removexattrat"},  {467, "open_tree_attr"},
};

static const char *syscall_name(int nr)
{
	const char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
	static char buf[32];

	if (n) {
		(void)snprintf(buf, sizeof(buf), "%s", n);
		free((void *)n);
		return buf;
	}
	for (size_t i = 0; i < ELEMENTSOF(newer_syscalls); i++)
		if (newer_syscalls[i].nr == nr)
			return newer_syscalls[i].name;
	return NULL;
}

static int syscall_number(const char *name)
{
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);

	if (nr >= 0)
		return nr;
	for (size_t i = 0; i < ELEMENTSOF(newer_syscalls); i++)
		if (strcmp(newer_syscalls[i].name, name) == 0)
			return newer_syscalls[i].nr;
	return -1;
}

struct prog {
	struct sock_filter insns[PROG_MAX];
	size_t n;
};

static void export_prog(scmp_filter_ctx ctx, struct prog *p)
{
	int fd = memfd_create("bpf", MFD_CLOEXEC);
	off_t size;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(seccomp_export_bpf(ctx, fd), 0);
	size = lseek(fd, 0, SEEK_END);
	ASSERT_TRUE(size > 0 && (size_t)size <= sizeof(p->insns) && size % sizeof(struct sock_filter) == 0);
	ASSERT_EQ(pread(fd, p->insns, (size_t)size, 0), size);
	p->n = (size_t)size / sizeof(struct sock_filter);
	(void)close(fd);
}

/* Classic BPF as the kernel runs it for seccomp (the subset libseccomp and
 * the tail program emit: loads from seccomp_data, scratch memory, ALU,
 * jumps, returns). Returns the filter's SECCOMP_RET_* value. */
static uint32_t run_bpf(const struct prog *p, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	const unsigned char *data = (const unsigned char *)d;

	for (size_t pc = 0; pc < p->n; pc++) {
		const struct sock_filter *f = &p->insns[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
		bool t = false;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (BPF_MODE(f->code) == BPF_ABS && BPF_SIZE(f->code) == BPF_W &&
			    f->k + 4 <= sizeof(*d) && f->k % 4 == 0)
				memcpy(&a, data + f->k, 4);
			else if (BPF_MODE(f->code) == BPF_IMM)
				a = f->k;
			else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
				a = mem[f->k];
			else if (BPF_MODE(f->code) == BPF_LEN)
				a = sizeof(*d);
			else
				TAP_FAIL_(1, "unsupported load %#x at %zu", f->code, pc);
			break;
		case BPF_LDX:
			if (BPF_MODE(f->code) == BPF_IMM)
				x = f->k;
			else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
				x = mem[f->k];
			else if (BPF_MODE(f->code) == BPF_LEN)
				x = sizeof(*d);
			else
				TAP_FAIL_(1, "unsupported ldx %#x at %zu", f->code, pc);
			break;
		case BPF_ST:
			if (f->k >= BPF_MEMWORDS)
				TAP_FAIL_(1, "bad st at %zu", pc);
			mem[f->k] = a;
			break;
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				TAP_FAIL_(1, "bad stx at %zu", pc);
			mem[f->k] = x;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: a = src ? a / src : 0; break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: TAP_FAIL_(1, "unsupported alu %#x at %zu", f->code, pc);
			}
			break;
		case BPF_JMP:
			switch (BPF_OP(f->code)) {
			case BPF_JA:
				pc += f->k;
				continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: TAP_FAIL_(1, "unsupported jump %#x at %zu", f->code, pc);
			}
			pc += t ? f->jt : f->jf;
			break;
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			TAP_FAIL_(1, "unsupported class %#x at %zu", f->code, pc);
		}
	}
	TAP_FAIL_(1, "program ran off its end");
	return 0;
}

/* Our decision: the table's filter, then the tail program; the kernel
 * takes the most restrictive (any ERRNO over ALLOW here). */
static struct prog ours, tail, docker;

static uint32_t decide_ours(const struct seccomp_data *d)
{
	uint32_t a = run_bpf(&ours, d), b = run_bpf(&tail, d);

	return (a & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW ? a : b;
}

static uint32_t decide_docker(const struct seccomp_data *d)
{
	return run_bpf(&docker, d);
}

static void build_ours(void)
{
	size_t n;
	const struct seccomp_rule *rules = seccomp_rules_get(&n);
	scmp_filter_ctx ctx = NULL;
	struct sock_filter t[SECCOMP_TAIL_LEN];

	ASSERT_EQ(seccomp_build(rules, n, &ctx, NULL), 0);
	export_prog(ctx, &ours);
	seccomp_release(ctx);
	seccomp_tail_program(t);
	memcpy(tail.insns, t, sizeof(t));
	tail.n = SECCOMP_TAIL_LEN;
}

/* The capabilities the launcher grants the container (SECURITY.md); none
 * appears in the profile's includes.caps, so the comparison is the same
 * as for a container with none. */
static const char *const granted_caps[] = {
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP",
	"CAP_KILL", "CAP_NET_ADMIN", "CAP_NET_BIND_SERVICE",
};

static bool in_list(json_object *arr, const char *const *set, size_t n_set)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		const char *v = json_object_get_string(json_object_array_get_idx(arr, i));

		for (size_t k = 0; k < n_set; k++)
			if (v && strcmp(v, set[k]) == 0)
				return true;
	}
	return false;
}

static bool all_in_list(json_object *arr, const char *const *set, size_t n_set)
{
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		const char *v = json_object_get_string(json_object_array_get_idx(arr, i));
		bool found = false;

		for (size_t k = 0; k < n_set; k++)
			if (v && strcmp(v, set[k]) == 0)
				found = true;
		if (!found)
			return false;
	}
	return true;
}

static const char *const amd64[] = {"amd64"};

/* Does the rule apply to an amd64 container with granted_caps? */
static bool rule_applies(json_object *rule)
{
	json_object *inc = NULL, *exc = NULL, *v = NULL;

	if (json_object_object_get_ex(rule, "includes", &inc)) {
		if (json_object_object_get_ex(inc, "caps", &v) &&
		    !all_in_list(v, granted_caps, ELEMENTSOF(granted_caps)))
			return false;
		if (json_object_object_get_ex(inc, "arches", &v) && !in_list(v, amd64, 1))
			return false;
		/* includes.minKernel (4.8 at most): every kernel we run on is newer. */
	}
	if (json_object_object_get_ex(rule, "excludes", &exc)) {
		if (json_object_object_get_ex(exc, "caps", &v) &&
		    in_list(v, granted_caps, ELEMENTSOF(granted_caps)))
			return false;
		if (json_object_object_get_ex(exc, "arches", &v) && in_list(v, amd64, 1))
			return false;
	}
	return true;
}

static uint64_t probe_values[PROBE_VALUES_MAX];
static size_t n_probe_values;
static bool nr_has_args[SECCOMP_COMPARE_MAX_NR + 1];

static void add_probe(uint64_t v)
{
	for (size_t i = 0; i < n_probe_values; i++)
		if (probe_values[i] == v)
			return;
	ASSERT_LT(n_probe_values, PROBE_VALUES_MAX);
	probe_values[n_probe_values++] = v;
}

static void add_probe_around(uint64_t v)
{
	add_probe(v);
	add_probe(v + 1);
	add_probe(v - 1);
}

static int parse_op(const char *op, enum scmp_compare *ret)
{
	static const struct {
		const char *name;
		enum scmp_compare op;
	} ops[] = {
		{"SCMP_CMP_NE", SCMP_CMP_NE}, {"SCMP_CMP_LT", SCMP_CMP_LT}, {"SCMP_CMP_LE", SCMP_CMP_LE},
		{"SCMP_CMP_EQ", SCMP_CMP_EQ}, {"SCMP_CMP_GE", SCMP_CMP_GE}, {"SCMP_CMP_GT", SCMP_CMP_GT},
		{"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
	};

	for (size_t i = 0; i < ELEMENTSOF(ops); i++)
		if (strcmp(op, ops[i].name) == 0) {
			*ret = ops[i].op;
			return 0;
		}
	return -EINVAL;
}

static uint64_t json_u64(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	return (uint64_t)json_object_get_uint64(v);
}

static void build_docker(void)
{
	json_object *root = json_object_from_file(DOCKER_PROFILE), *calls = NULL, *v = NULL;
	uint32_t def;
	scmp_filter_ctx ctx;

	ASSERT_NOT_NULL(root);
	ASSERT_TRUE(json_object_object_get_ex(root, "defaultAction", &v));
	ASSERT_STREQ(json_object_get_string(v), "SCMP_ACT_ERRNO");
	def = SCMP_ACT_ERRNO((uint16_t)json_u64(root, "defaultErrnoRet"));
	ctx = seccomp_init(def);
	ASSERT_NOT_NULL(ctx);
	ASSERT_TRUE(json_object_object_get_ex(root, "syscalls", &calls));
	for (size_t i = 0; i < json_object_array_length(calls); i++) {
		json_object *rule = json_object_array_get_idx(calls, i), *names = NULL, *args = NULL;
		struct scmp_arg_cmp cmp[6];
		unsigned n_cmp = 0;
		const char *action;
		uint32_t act;

		if (!rule_applies(rule))
			continue;
		ASSERT_TRUE(json_object_object_get_ex(rule, "action", &v));
		action = json_object_get_string(v);
		if (strcmp(action, "SCMP_ACT_ALLOW") == 0)
			act = SCMP_ACT_ALLOW;
		else if (strcmp(action, "SCMP_ACT_ERRNO") == 0)
			act = SCMP_ACT_ERRNO((uint16_t)(json_object_object_get_ex(rule, "errnoRet", &v)
								 ? json_object_get_int(v)
								 : (int)json_u64(root, "defaultErrnoRet")));
		else
			TAP_FAIL_(1, "profile action '%s' not understood", action);
		if (json_object_object_get_ex(rule, "args", &args) && args) {
			for (size_t k = 0; k < json_object_array_length(args); k++) {
				json_object *a = json_object_array_get_idx(args, k), *op = NULL;
				enum scmp_compare c = SCMP_CMP_EQ;

				ASSERT_LT(n_cmp, 6);
				ASSERT_TRUE(json_object_object_get_ex(a, "op", &op));
				ASSERT_EQ(parse_op(json_object_get_string(op), &c), 0);
				cmp[n_cmp++] = (struct scmp_arg_cmp){
					.arg = (unsigned)json_u64(a, "index"),
					.op = c,
					.datum_a = json_u64(a, "value"),
					.datum_b = json_u64(a, "valueTwo"),
				};
				add_probe_around(json_u64(a, "value"));
				add_probe(json_u64(a, "valueTwo"));
			}
		}
		ASSERT_TRUE(json_object_object_get_ex(rule, "names", &names));
		for (size_t k = 0; k < json_object_array_length(names); k++) {
			int nr = syscall_number(json_object_get_string(json_object_array_get_idx(names, k)));
			int r;

			if (nr < 0)
				continue; /* another architecture's syscall */
			if (n_cmp > 0 && nr <= SECCOMP_COMPARE_MAX_NR)
				nr_has_args[nr] = true;
			/* Not _exact: runc adds rules the same way. A rule that
			 * duplicates an earlier one is no change (-EEXIST). */
			r = seccomp_rule_add_array(ctx, act, nr, n_cmp, cmp);
			if (r < 0 && r != -EEXIST)
				TAP_FAIL_(1, "docker rule for %d: %d", nr, r);
		}
	}
	export_prog(ctx, &docker);
	seccomp_release(ctx);
	json_object_put(root);
}

static void collect_our_probes(void)
{
	size_t n;
	const struct seccomp_rule *rules = seccomp_rules_get(&n);

	for (size_t i = 0; i < n; i++) {
		int nr = syscall_number(rules[i].name);

		if (rules[i].n_conds > 0 && nr >= 0 && nr <= SECCOMP_COMPARE_MAX_NR)
			nr_has_args[nr] = true;
		for (size_t k = 0; k < rules[i].n_conds; k++) {
			add_probe_around(rules[i].conds[k].value);
			add_probe(rules[i].conds[k].mask);
		}
	}
	/* Every single bit and small number (socket families and types,
	 * flags), and both widths' all-ones. */
	for (unsigned b = 0; b < 64; b++)
		add_probe(UINT64_C(1) << b);
	for (unsigned k = 0; k <= 64; k++)
		add_probe(k);
	add_probe(UINT64_C(0xffffffff));
	add_probe(UINT64_MAX);
}

/* SECURITY.md's "Allowed here, refused by Docker" table: rows
 * "| `name` | reason |" after that heading, up to the next heading. */
static char exceptions[EXCEPTIONS_MAX][32];
static bool exception_used[EXCEPTIONS_MAX];
static size_t n_exceptions;

static void load_exceptions(void)
{
	FILE *f = fopen(SECURITY_MD, "re");
	char line[1024];
	bool in = false, found = false;

	ASSERT_NOT_NULL(f);
	while (fgets(line, sizeof(line), f)) {
		char name[32];

		if (strncmp(line, "#", 1) == 0) {
			in = strstr(line, "Allowed here, refused by Docker") != NULL;
			found = found || in;
			continue;
		}
		if (in && sscanf(line, "| `%31[a-z0-9_]` |", name) == 1) {
			ASSERT_LT(n_exceptions, EXCEPTIONS_MAX);
			memcpy(exceptions[n_exceptions++], name, sizeof(name));
		}
	}
	(void)fclose(f);
	ASSERT_TRUE(found);
}

static ssize_t exception_index(const char *name)
{
	for (size_t i = 0; name && i < n_exceptions; i++)
		if (strcmp(exceptions[i], name) == 0)
			return (ssize_t)i;
	return -1;
}

enum verdict { V_ALLOW, V_EPERM, V_ENOSYS, V_OTHER, V_MAX };

static enum verdict verdict(uint32_t r)
{
	if ((r & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW)
		return V_ALLOW;
	if ((r & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO && (r & SECCOMP_RET_DATA) == EPERM)
		return V_EPERM;
	if ((r & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO && (r & SECCOMP_RET_DATA) == ENOSYS)
		return V_ENOSYS;
	return V_OTHER;
}

/* "allow", "EPERM", "ENOSYS", or "args" (refused for n of m probes). */
static void describe(const unsigned counts[V_MAX], unsigned total, char *buf, size_t size)
{
	static const char *const names[V_MAX] = {"allow", "EPERM", "ENOSYS", "other"};

	for (int v = 0; v < V_MAX; v++)
		if (counts[v] == total) {
			(void)snprintf(buf, size, "%s", names[v]);
			return;
		}
	(void)snprintf(buf, size, "args (%u/%u refused)", total - counts[V_ALLOW], total);
}

TEST(every_syscall_at_least_as_strict_as_docker)
{
	unsigned n_named = 0, n_both_allow = 0, n_both_refuse = 0, n_stricter = 0, n_args = 0, n_excused = 0,
		 n_fail = 0, n_unnamed_refused = 0;

	build_ours();
	collect_our_probes();
	build_docker();
	load_exceptions();

	printf("# %-4s %-24s %-22s %-22s %s\n", "nr", "syscall", "docker (no extra caps)", "ours", "");
	for (int nr = 0; nr <= SECCOMP_COMPARE_MAX_NR; nr++) {
		const char *name = syscall_name(nr);
		unsigned cd[V_MAX] = {0}, co[V_MAX] = {0}, total = 0, gaps = 0;
		char dd[40], od[40];
		const char *note = "";
		ssize_t ex;

		for (unsigned arg = 0; arg < (nr_has_args[nr] ? 6U : 1U); arg++)
			for (size_t k = 0; k < (nr_has_args[nr] ? n_probe_values : 1); k++) {
				struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
				enum verdict vd, vo;

				if (nr_has_args[nr])
					d.args[arg] = probe_values[k];
				vd = verdict(decide_docker(&d));
				vo = verdict(decide_ours(&d));
				cd[vd]++;
				co[vo]++;
				total++;
				if (vd != V_ALLOW && vo == V_ALLOW)
					gaps++;
			}
		ex = exception_index(name);
		if (gaps > 0 && ex >= 0) {
			exception_used[ex] = true;
			note = "allowed: SECURITY.md says why";
			n_excused++;
		} else if (gaps > 0) {
			note = "FAIL: Docker refuses, we allow";
			n_fail++;
		}
		if (!name) {
			/* Unassigned on x86_64 (or newer than every table here):
			 * one line for all of them, unless a gap shows. */
			if (cd[V_ALLOW] == 0 && co[V_ALLOW] == 0)
				n_unnamed_refused++;
			if (gaps == 0)
				continue;
		}
		n_named += name != NULL;
		describe(cd, total, dd, sizeof(dd));
		describe(co, total, od, sizeof(od));
		if (cd[V_ALLOW] == total && co[V_ALLOW] == total)
			n_both_allow++;
		else if (cd[V_ALLOW] == 0 && co[V_ALLOW] == 0)
			n_both_refuse++;
		else if (gaps == 0 && co[V_ALLOW] < cd[V_ALLOW])
			n_stricter++;
		if (nr_has_args[nr])
			n_args++;
		printf("# %-4d %-24s %-22s %-22s %s\n", nr, name ? name : "(unnamed)", dd, od, note);
		if (gaps > 0 && ex < 0)
			TAP_FAIL_(0, "%s (%d): Docker refuses %u probe(s) we allow, and SECURITY.md gives no reason",
				  name ? name : "(unnamed)", nr, gaps);
	}
	printf("# numbers 0..%d: %u named; both allow %u, both refuse %u, only we refuse (some or all) %u, "
	       "argument-dependent %u; Docker refuses, we allow: %u with a reason in SECURITY.md, %u without\n",
	       SECCOMP_COMPARE_MAX_NR, n_named, n_both_allow, n_both_refuse, n_stricter, n_args, n_excused, n_fail);
	printf("# unnamed numbers refused by both: %u (ours: ENOSYS in %d..%d and above %d)\n", n_unnamed_refused,
	       SECCOMP_UNASSIGNED_FIRST_NR, SECCOMP_UNASSIGNED_LAST_NR, SECCOMP_LAST_REVIEWED_NR);
	for (size_t i = 0; i < n_exceptions; i++)
		if (!exception_used[i])
			TAP_FAIL_(0, "SECURITY.md excuses '%s', but Docker does not refuse what we allow there",
				  exceptions[i]);
}

/* The comparison would be vacuous if either side were "allow everything"
 * or "refuse everything": spot checks with known answers. */
TEST(comparison_sees_known_answers)
{
	struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64};

	build_ours();
	build_docker();
	d.nr = syscall_number("read");
	EXPECT_EQ(verdict(decide_docker(&d)), V_ALLOW);
	EXPECT_EQ(verdict(decide_ours(&d)), V_ALLOW);
	d.nr = syscall_number("kexec_load");
	EXPECT_EQ(verdict(decide_docker(&d)), V_EPERM);
	EXPECT_EQ(verdict(decide_ours(&d)), V_EPERM);
	d.nr = syscall_number("clone3");
	EXPECT_EQ(verdict(decide_docker(&d)), V_ENOSYS);
	EXPECT_EQ(verdict(decide_ours(&d)), V_ENOSYS);
	/* socket(AF_ALG) and socket(AF_VSOCK): Docker refuses both. */
	d.nr = syscall_number("socket");
	d.args[0] = 38;
	EXPECT_EQ(verdict(decide_docker(&d)), V_EPERM);
	d.args[0] = 40;
	EXPECT_EQ(verdict(decide_docker(&d)), V_EPERM);
	d.args[0] = 2; /* AF_INET */
	EXPECT_EQ(verdict(decide_docker(&d)), V_ALLOW);
	EXPECT_EQ(verdict(decide_ours(&d)), V_ALLOW);
	/* A number no kernel has yet: Docker's default action, our tail. */
	d.nr = 1000;
	d.args[0] = 0;
	EXPECT_EQ(verdict(decide_docker(&d)), V_EPERM);
	EXPECT_EQ(verdict(decide_ours(&d)), V_ENOSYS);
	/* x32 numbers: refused by ours (foreign ABI). */
	d.nr = 0x40000000 | syscall_number("read");
	EXPECT_EQ(verdict(decide_ours(&d)), V_EPERM);
}
