/* SPDX-License-Identifier: MIT */
#include "seccomp_rules.h"

#include <string.h>

#include "macros.h"

/* Values from the kernel UAPI, spelt out so this file needs no kernel
 * headers and the table reads as a specification. */
#define CS_CLONE_NEWNS 0x00020000ULL
#define CS_CLONE_NEWCGROUP 0x02000000ULL
#define CS_CLONE_NEWUTS 0x04000000ULL
#define CS_CLONE_NEWIPC 0x08000000ULL
#define CS_CLONE_NEWUSER 0x10000000ULL
#define CS_CLONE_NEWPID 0x20000000ULL
#define CS_CLONE_NEWNET 0x40000000ULL
#define CS_AF_UNIX 1ULL
#define CS_AF_NETLINK 16ULL
#define CS_AF_ALG 38ULL
#define CS_AF_PACKET 17ULL
#define CS_AF_VSOCK 40ULL
#define CS_SOCK_RAW 3ULL
#define CS_SOCK_PACKET 10ULL
#define CS_SOCK_TYPE_MASK 0xfULL
#define CS_TIOCSTI 0x5412ULL
#define CS_TIOCLINUX 0x541cULL
#define CS_TIOCSETD 0x5423ULL
#define CS_LOW32 0xffffffffULL
#define CS_S_ISUID 04000ULL
#define CS_S_ISGID 02000ULL
#define CS_O_CREAT 0100ULL
#define CS_O_TMPFILE 020000000ULL /* __O_TMPFILE, without O_DIRECTORY */

#define DENY(n) {.name = (n), .action = SECCOMP_RULE_EPERM}
/* A mode argument (arg a) with the setuid or the setgid bit; and the same
 * for calls that take a mode only when the flags (arg fa) hold flag. */
#define SETID_MODE(n, a) DENY_IF(n, a, CS_S_ISUID, CS_S_ISUID), DENY_IF(n, a, CS_S_ISGID, CS_S_ISGID)
#define SETID_CREATE_1(n, fa, ma, flag, bit)                                                       \
	{                                                                                          \
		.name = (n), .action = SECCOMP_RULE_EPERM, .n_conds = 2,                           \
		.conds = {{.arg = (fa), .op = SECCOMP_RULE_OP_MASKED_EQ, .mask = (flag), .value = (flag)}, \
			  {.arg = (ma), .op = SECCOMP_RULE_OP_MASKED_EQ, .mask = (bit), .value = (bit)}} \
	}
#define SETID_CREATE(n, fa, ma, flag) \
	SETID_CREATE_1(n, fa, ma, flag, CS_S_ISUID), SETID_CREATE_1(n, fa, ma, flag, CS_S_ISGID)
#define DENY_IF(n, a, m, v)                                                                        \
	{                                                                                          \
		.name = (n), .action = SECCOMP_RULE_EPERM, .n_conds = 1,                           \
		.conds = {{.arg = (a), .op = SECCOMP_RULE_OP_MASKED_EQ, .mask = (m), .value = (v)}} \
	}
/* personality(): refuse every value except 0 (PER_LINUX) and 0xffffffff
 * (the query). The kernel reads only the low 32 bits. A 32-bit value is
 * neither all zeros nor all ones exactly when two cyclically adjacent bits
 * differ, so the allowed set's complement is the union of these 64 masked
 * compares, plus "any high bit set" (refused outright: glibc never sets
 * them). */
#define PERS_BITS(i) ((1ULL << (i)) | (1ULL << (((i) + 1) % 32)))
#define PERS_PAIR(i)                                                                               \
	DENY_IF("personality", 0, PERS_BITS(i), 1ULL << (i)),                                      \
		DENY_IF("personality", 0, PERS_BITS(i), 1ULL << (((i) + 1) % 32))
#define PERS_4(i) PERS_PAIR(i), PERS_PAIR((i) + 1), PERS_PAIR((i) + 2), PERS_PAIR((i) + 3)

static const struct seccomp_rule rules[] = {
	/* Namespaces: a new user namespace hands the agent every capability
	 * over fresh kernel objects, the door to most container escapes. */
	DENY("unshare"),
	DENY("setns"),
	DENY_IF("clone", 0, CS_CLONE_NEWNS, CS_CLONE_NEWNS),
	DENY_IF("clone", 0, CS_CLONE_NEWCGROUP, CS_CLONE_NEWCGROUP),
	DENY_IF("clone", 0, CS_CLONE_NEWUTS, CS_CLONE_NEWUTS),
	DENY_IF("clone", 0, CS_CLONE_NEWIPC, CS_CLONE_NEWIPC),
	DENY_IF("clone", 0, CS_CLONE_NEWUSER, CS_CLONE_NEWUSER),
	DENY_IF("clone", 0, CS_CLONE_NEWPID, CS_CLONE_NEWPID),
	DENY_IF("clone", 0, CS_CLONE_NEWNET, CS_CLONE_NEWNET),
	/* clone3 passes its flags in memory, which seccomp cannot read:
	 * ENOSYS makes glibc fall back to clone(), filtered above. */
	{.name = "clone3", .action = SECCOMP_RULE_ENOSYS},
	/* Mounts, old and new API. */
	DENY("mount"),
	DENY("umount2"),
	DENY("pivot_root"),
	DENY("fsopen"),
	DENY("fsconfig"),
	DENY("fsmount"),
	DENY("fspick"),
	DENY("move_mount"),
	DENY("open_tree"),
	DENY("mount_setattr"),
	/* Reading or writing another process's memory or file table. */
	DENY("ptrace"),
	DENY("process_vm_readv"),
	DENY("process_vm_writev"),
	DENY("pidfd_getfd"),
	/* Large, bug-prone kernel surfaces no developer workload needs. */
	DENY("bpf"),
	DENY("perf_event_open"),
	DENY("add_key"),
	DENY("request_key"),
	DENY("keyctl"),
	DENY("userfaultfd"),
	DENY("io_uring_setup"),
	DENY("io_uring_enter"),
	DENY("io_uring_register"),
	DENY("kexec_load"),
	DENY("kexec_file_load"),
	DENY("init_module"),
	DENY("finit_module"),
	DENY("delete_module"),
	/* Opens any inode by handle, bypassing path permissions. */
	DENY("open_by_handle_at"),
	/* What Docker's default profile refuses in a container without extra
	 * capabilities (tests/unit/test-seccomp-docker.c compares every
	 * syscall number with it): the kernel would mostly refuse these for a
	 * capability the agent lacks, but each is attack surface reached before
	 * that check, or reachable without it. */
	/* x86 segment descriptors and I/O ports: old local-root bugs. */
	DENY("modify_ldt"),
	DENY("iopl"),
	DENY("ioperm"),
	/* Compares kernel objects of other processes (a KASLR and fd-table
	 * oracle); process_madvise acts on another process's memory. */
	DENY("kcmp"),
	DENY("process_madvise"),
	/* NUMA placement: moves pages of other processes, or steers kernel
	 * allocations (a tool for heap grooming). */
	DENY("mbind"),
	DENY("set_mempolicy"),
	DENY("set_mempolicy_home_node"),
	DENY("get_mempolicy"),
	DENY("move_pages"),
	DENY("migrate_pages"),
	/* File-system and system administration. */
	DENY("quotactl"),
	DENY("quotactl_fd"),
	DENY("chroot"),
	DENY("acct"),
	DENY("swapon"),
	DENY("swapoff"),
	DENY("syslog"),
	DENY("reboot"),
	DENY("sethostname"),
	DENY("setdomainname"),
	DENY("settimeofday"),
	DENY("clock_settime"),
	DENY("vhangup"),
	DENY("fanotify_init"),
	DENY("lookup_dcookie"),
	/* Obsolete interfaces: little-tested kernel code (uselib loads an
	 * a.out library; ustat, sysfs and _sysctl leak or poke kernel state). */
	DENY("uselib"),
	DENY("ustat"),
	DENY("sysfs"),
	DENY("_sysctl"),
	/* Not implemented by Linux (ENOSYS without us; EPERM with us, as under
	 * Docker), refused so a kernel that grows them gains no surface. */
	DENY("create_module"),
	DENY("get_kernel_syms"),
	DENY("query_module"),
	DENY("nfsservctl"),
	DENY("getpmsg"),
	DENY("putpmsg"),
	DENY("afs_syscall"),
	DENY("tuxcall"),
	DENY("security"),
	DENY("vserver"),
	/* Injecting keystrokes into, or reconfiguring, the terminal: an agent
	 * sharing the user's tty could type commands into the parent shell.
	 * The kernel reads the command as 32 bits, so compare only those. */
	DENY_IF("ioctl", 1, CS_LOW32, CS_TIOCSTI),
	DENY_IF("ioctl", 1, CS_LOW32, CS_TIOCLINUX),
	/* A new line discipline loads a (possibly module-backed, historically
	 * buggy: n_gsm, n_hdlc, slcan) tty driver under the agent's control. */
	DENY_IF("ioctl", 1, CS_LOW32, CS_TIOCSETD),
	/* Raw and packet sockets sniff or forge traffic around the firewall;
	 * vsock talks to the hypervisor. The family is an int: low 32 bits. */
	DENY_IF("socket", 0, CS_LOW32, CS_AF_PACKET),
	DENY_IF("socket", 0, CS_LOW32, CS_AF_VSOCK),
	/* The kernel crypto API (AF_ALG) is a large surface with a history of
	 * privilege escalations; user space has its own crypto. */
	DENY_IF("socket", 0, CS_LOW32, CS_AF_ALG),
	/* Every other family (TIPC, RDS, CAN, X25, LLC, Bluetooth, KEY,
	 * ...): kernel code no developer workload needs, with a history of
	 * local privilege escalations, and on a host with modules a socket()
	 * of one loads its module into the host kernel. Only AF_UNIX (1),
	 * AF_INET (2), AF_INET6 (10) and AF_NETLINK (16) stay: refuse
	 * anything above 16 (as 64 bits, so high bits are refused too) and
	 * the gaps below. */
	{.name = "socket",
	 .action = SECCOMP_RULE_EPERM,
	 .n_conds = 1,
	 .conds = {{.arg = 0, .op = SECCOMP_RULE_OP_GT, .value = CS_AF_NETLINK}}},
	DENY_IF("socket", 0, CS_LOW32, 0),
	DENY_IF("socket", 0, CS_LOW32, 3),
	DENY_IF("socket", 0, CS_LOW32, 4),
	DENY_IF("socket", 0, CS_LOW32, 5),
	DENY_IF("socket", 0, CS_LOW32, 6),
	DENY_IF("socket", 0, CS_LOW32, 7),
	DENY_IF("socket", 0, CS_LOW32, 8),
	DENY_IF("socket", 0, CS_LOW32, 9),
	DENY_IF("socket", 0, CS_LOW32, 11),
	DENY_IF("socket", 0, CS_LOW32, 12),
	DENY_IF("socket", 0, CS_LOW32, 13),
	DENY_IF("socket", 0, CS_LOW32, 14),
	DENY_IF("socket", 0, CS_LOW32, 15),
	/* (AF_INET, SOCK_PACKET) is the obsolete spelling of a packet socket:
	 * __sock_create() turns it into AF_PACKET, past the family rule
	 * above. No family has another use for the type: refuse it in all. */
	DENY_IF("socket", 1, CS_SOCK_TYPE_MASK, CS_SOCK_PACKET),
	/* SOCK_RAW in any family except netlink, where SOCK_RAW and
	 * SOCK_DGRAM mean the same thing (so refusing one protects nothing)
	 * and glibc's getifaddrs() and getaddrinfo(AI_ADDRCONFIG) use it. The
	 * type's flag bits (SOCK_NONBLOCK, SOCK_CLOEXEC) are masked off. */
	{.name = "socket",
	 .action = SECCOMP_RULE_EPERM,
	 .n_conds = 2,
	 .conds = {{.arg = 0, .op = SECCOMP_RULE_OP_NE, .value = CS_AF_NETLINK},
		   {.arg = 1, .op = SECCOMP_RULE_OP_MASKED_EQ, .mask = CS_SOCK_TYPE_MASK, .value = CS_SOCK_RAW}}},
	/* socketpair() creates a socket of its family just as socket() does
	 * (module load included; AF_TIPC even completes the pair): only
	 * AF_UNIX has a use for it. */
	{.name = "socketpair",
	 .action = SECCOMP_RULE_EPERM,
	 .n_conds = 1,
	 .conds = {{.arg = 0, .op = SECCOMP_RULE_OP_NE, .value = CS_AF_UNIX}}},
	/* Execution domains change syscall semantics (and READ_IMPLIES_EXEC
	 * or ADDR_NO_RANDOMIZE weaken hardening). */
	{.name = "personality",
	 .action = SECCOMP_RULE_EPERM,
	 .n_conds = 1,
	 .conds = {{.arg = 0, .op = SECCOMP_RULE_OP_GT, .value = CS_LOW32}}},
	PERS_4(0),
	PERS_4(4),
	PERS_4(8),
	PERS_4(12),
	PERS_4(16),
	PERS_4(20),
	PERS_4(24),
	PERS_4(28),
	/* Setuid and setgid bits: the workspace is the user's checkout on the
	 * host, where nothing strips them, so an executable the agent marks
	 * there runs as the user (its UID is the user's) for any other local
	 * account that can reach the checkout. Every way to set a mode:
	 * chmod and its variants, and creating with a mode (open/openat with
	 * O_CREAT or O_TMPFILE, creat, mknod). openat2 keeps its mode in
	 * memory, out of seccomp's sight: ENOSYS, and libc's open() never uses
	 * it (callers fall back to openat). */
	SETID_MODE("chmod", 1),
	SETID_MODE("fchmod", 1),
	SETID_MODE("fchmodat", 2),
	SETID_MODE("fchmodat2", 2),
	SETID_CREATE("open", 1, 2, CS_O_CREAT),
	SETID_CREATE("open", 1, 2, CS_O_TMPFILE),
	SETID_CREATE("openat", 2, 3, CS_O_CREAT),
	SETID_CREATE("openat", 2, 3, CS_O_TMPFILE),
	SETID_MODE("creat", 1),
	SETID_MODE("mknod", 1),
	SETID_MODE("mknodat", 2),
	{.name = "openat2", .action = SECCOMP_RULE_ENOSYS},
};

const struct seccomp_rule *seccomp_rules_get(size_t *ret_n)
{
	*ret_n = ELEMENTSOF(rules);
	return rules;
}

size_t seccomp_rules_count_syscalls(void)
{
	size_t n = 0;

	for (size_t i = 0; i < ELEMENTSOF(rules); i++)
		if (i == 0 || strcmp(rules[i].name, rules[i - 1].name) != 0)
			n++;
	return n;
}
