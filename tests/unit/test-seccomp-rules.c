/* SPDX-License-Identifier: MIT */
/* The rule table, built by init/seccomp.c, exported as BPF, and loaded in a
 * forked child (NO_NEW_PRIVS: no root needed) that then tries refused and
 * everyday syscalls. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "seccomp_filter.h"
#include "seccomp_rules.h"
#include "tap.h"

#define X32_SYSCALL_BIT 0x40000000L
/* Non-fatal comparisons tap.h spells only as ASSERT_*. */
#define EXPECT_LT(a, b) TAP_INT_(0, a, <, b)
#define EXPECT_LE(a, b) TAP_INT_(0, a, <=, b)
#define EXPECT_GT(a, b) TAP_INT_(0, a, >, b)
#define EXPECT_GE(a, b) TAP_INT_(0, a, >=, b)

static scmp_filter_ctx build(void)
{
	size_t n;
	const struct seccomp_rule *rules = seccomp_rules_get(&n);
	scmp_filter_ctx ctx = NULL;
	const char *bad = NULL;
	int r = seccomp_build(rules, n, &ctx, &bad);

	if (r < 0)
		TAP_FAIL_(1, "seccomp_build failed at '%s': %d", bad ? bad : "?", r);
	return ctx;
}

/* Load the filter into this (forked test) process. */
static void load(void)
{
	scmp_filter_ctx ctx = build();

	ASSERT_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ASSERT_EQ(seccomp_load_filter(ctx), 0);
	seccomp_release(ctx);
}

#define EXPECT_SYSCALL_ERRNO(call, e)                                                              \
	do {                                                                                       \
		long r_;                                                                           \
		errno = 0;                                                                         \
		r_ = (long)(call);                                                                 \
		int err_ = errno;                                                                  \
		if (r_ != -1 || err_ != (e))                                                       \
			TAP_FAIL_(0, "%s: returned %ld errno %d, expected -1 errno %d", #call, r_,     \
				  err_, (e));                                                      \
	} while (0)

TEST(table_is_well_formed)
{
	size_t n;
	const struct seccomp_rule *rules = seccomp_rules_get(&n);

	ASSERT_GT(n, 0);
	ASSERT_LE(n, SECCOMP_RULES_MAX);
	for (size_t i = 0; i < n; i++) {
		EXPECT_TRUE(seccomp_syscall_resolve_name(rules[i].name) != __NR_SCMP_ERROR);
		EXPECT_LE(rules[i].n_conds, SECCOMP_RULE_MAX_CONDS);
		EXPECT_LT((int)rules[i].action, (int)SECCOMP_RULE_ACTION_MAX);
		/* Rules for one syscall are adjacent (the --check summary relies on it). */
		for (size_t k = i + 2; k < n; k++)
			if (strcmp(rules[k].name, rules[i].name) == 0)
				EXPECT_STREQ(rules[k - 1].name, rules[i].name);
	}
	EXPECT_GE(seccomp_rules_count_syscalls(), 35);
}

TEST(exports_bpf)
{
	scmp_filter_ctx ctx = build();
	int fd = memfd_create("bpf", MFD_CLOEXEC);
	off_t size;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(seccomp_export_bpf(ctx, fd), 0);
	size = lseek(fd, 0, SEEK_END);
	/* struct sock_filter is 8 bytes; a real filter has many instructions. */
	EXPECT_GT(size, 8 * 50);
	EXPECT_EQ(size % 8, 0);
	(void)close(fd);
	seccomp_release(ctx);
}

TEST(refused_syscalls_return_eperm)
{
	load();
	EXPECT_SYSCALL_ERRNO(unshare(CLONE_NEWUSER), EPERM);
	EXPECT_SYSCALL_ERRNO(unshare(CLONE_NEWNS), EPERM);
	EXPECT_SYSCALL_ERRNO(setns(0, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_umount2, "/tmp", 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_pivot_root, "/", "/"), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_fsopen, "tmpfs", 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_open_tree, AT_FDCWD, "/", 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_move_mount, -1, "", -1, "", 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_add_key, "user", "x", "y", 1, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_userfaultfd, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_kexec_load, 0, 0, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_finit_module, -1, "", 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_delete_module, "x", 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_open_by_handle_at, -1, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_pidfd_getfd, -1, 0, 0), EPERM);
	/* clone3 cannot be inspected: ENOSYS so libc falls back to clone. */
	EXPECT_SYSCALL_ERRNO(syscall(SYS_clone3, NULL, 0), ENOSYS);
	/* clone with a namespace flag, flags in the low word. */
	EXPECT_SYSCALL_ERRNO(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, NULL, NULL, NULL, 0), EPERM);
	/* The x32 ABI (same audit arch, bit 30 in the number). */
	EXPECT_SYSCALL_ERRNO(syscall(X32_SYSCALL_BIT | SYS_getpid), EPERM);
}

/* What Docker's default profile refuses too (test-seccomp-docker.c
 * compares all of them); arguments that harm nothing if a rule were
 * missing, even as root. */
TEST(docker_parity_refusals)
{
	char buf[16];
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC), ldisc = 0;

	load();
	EXPECT_SYSCALL_ERRNO(syscall(SYS_modify_ldt, 0, buf, sizeof(buf)), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, 0, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_mbind, NULL, 0, 0, NULL, 0, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_get_mempolicy, NULL, NULL, 0, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_move_pages, 0, 0, NULL, NULL, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_migrate_pages, 0, 0, NULL, NULL), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_quotactl, 0, NULL, 0, NULL), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_chroot, "/nonexistent"), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_acct, "/nonexistent/acct"), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_swapon, "/nonexistent/swap", 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(socket(AF_ALG, SOCK_SEQPACKET, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(ioctl(fd, TIOCSETD, &ldisc), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_ioctl, fd, 0x100000000UL | TIOCSETD, &ldisc), EPERM);
	/* The tail program: numbers never reviewed answer ENOSYS (463 is
	 * setxattrat on 6.13+, where bad arguments would give EBADF). */
	EXPECT_SYSCALL_ERRNO(syscall(463, -1, NULL, 0, NULL, NULL, 0), ENOSYS);
	EXPECT_SYSCALL_ERRNO(syscall(400, 0, 0, 0), ENOSYS);
	EXPECT_SYSCALL_ERRNO(syscall(1000, 0, 0, 0), ENOSYS);
	if (fd >= 0)
		(void)close(fd);
}

TEST(personality_only_query_and_linux)
{
	load();
	EXPECT_EQ(personality(0xffffffff), PER_LINUX);
	EXPECT_EQ(personality(PER_LINUX), PER_LINUX);
	EXPECT_SYSCALL_ERRNO(personality(PER_LINUX32), EPERM);
	EXPECT_SYSCALL_ERRNO(personality(ADDR_NO_RANDOMIZE), EPERM);
	EXPECT_SYSCALL_ERRNO(personality(READ_IMPLIES_EXEC), EPERM);
	EXPECT_SYSCALL_ERRNO(personality(0xfffffffe), EPERM);
	EXPECT_SYSCALL_ERRNO(personality(0x7fffffff), EPERM);
	EXPECT_SYSCALL_ERRNO(personality(0x80000000), EPERM);
	/* High bits set: the kernel would read the low word (0 here). */
	EXPECT_SYSCALL_ERRNO(syscall(SYS_personality, 0x100000000UL), EPERM);
	EXPECT_EQ(personality(0xffffffff), PER_LINUX);
}

TEST(tty_ioctls_masked)
{
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	char c = 'x';

	load();
	/* Refused before the fd is even looked at, with or without high bits. */
	EXPECT_SYSCALL_ERRNO(ioctl(fd, TIOCSTI, &c), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_ioctl, fd, 0xdead00000000UL | TIOCSTI, &c), EPERM);
	EXPECT_SYSCALL_ERRNO(ioctl(fd, TIOCLINUX, &c), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_ioctl, fd, 0x100000000UL | TIOCLINUX, &c), EPERM);
	if (fd >= 0) {
		struct winsize ws;
		/* An everyday terminal ioctl still works. */
		EXPECT_EQ(ioctl(fd, TIOCGWINSZ, &ws), 0);
		(void)close(fd);
	}
}

TEST(sockets)
{
	int fd;

	load();
	EXPECT_SYSCALL_ERRNO(socket(AF_PACKET, SOCK_RAW, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(socket(AF_PACKET, SOCK_DGRAM, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_socket, 0x100000000UL | AF_PACKET, SOCK_DGRAM, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(socket(AF_VSOCK, SOCK_STREAM, 0), EPERM);
	/* (AF_INET, SOCK_PACKET) is the obsolete spelling of a packet socket:
	 * the kernel turns it into AF_PACKET. (Run as root, this fails without
	 * its own rule: the capability check would let it through.) */
	EXPECT_SYSCALL_ERRNO(socket(AF_INET, SOCK_PACKET, htons(ETH_P_ALL)), EPERM);
	EXPECT_SYSCALL_ERRNO(socket(AF_INET, SOCK_PACKET | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), EPERM);
	EXPECT_SYSCALL_ERRNO(socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(socket(AF_UNIX, SOCK_RAW, 0), EPERM);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	EXPECT_GE(fd, 0);
	(void)close(fd);
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	EXPECT_GE(fd, 0);
	(void)close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT_GE(fd, 0);
	(void)close(fd);
	/* Netlink treats RAW and DGRAM alike; glibc's getifaddrs needs it. */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
	EXPECT_GE(fd, 0);
	(void)close(fd);
	fd = socketpair(AF_UNIX, SOCK_STREAM, 0, (int[2]){0});
	EXPECT_EQ(fd, 0);
}

/* Review of issue 10: every other family (TIPC, RDS, CAN, X25, LLC,
 * Bluetooth, ...) is kernel code a developer workload never needs, and on
 * a host with modules a socket() of one loads its module (request_module
 * "net-pf-N") into the host kernel. socketpair() creates a socket of its
 * family just the same (TIPC even completes it), so it is limited too.
 * EPERM whatever this kernel has built in (here most answer
 * EAFNOSUPPORT without the filter). */
TEST(socket_families_other_than_unix_inet_inet6_netlink)
{
	static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET};
	int sv[2];

	load();
	for (long f = 0; f < 64; f++) {
		if (f == AF_UNIX || f == AF_INET || f == AF_INET6 || f == AF_NETLINK)
			continue;
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			EXPECT_SYSCALL_ERRNO(syscall(SYS_socket, f, types[t], 0), EPERM);
			EXPECT_SYSCALL_ERRNO(syscall(SYS_socket, 0x100000000L | f, types[t], 0), EPERM);
			EXPECT_SYSCALL_ERRNO(syscall(SYS_socketpair, f, types[t], 0, sv), EPERM);
		}
	}
	for (long f = 1; f < 64; f++)
		if (f != AF_UNIX)
			EXPECT_SYSCALL_ERRNO(syscall(SYS_socketpair, f, SOCK_DGRAM, 0, sv), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_socket, 0x7fffffffL, SOCK_DGRAM, 0), EPERM);
	EXPECT_SYSCALL_ERRNO(syscall(SYS_socket, -1L, SOCK_DGRAM, 0), EPERM);
	EXPECT_EQ(syscall(SYS_socketpair, AF_UNIX, SOCK_DGRAM, 0, sv), 0);
}

TEST(everyday_work_still_runs)
{
	int status = -1, p[2];
	pid_t me = getpid(), pid;

	load();
	/* getpid() answers as before: the filter lets it through, and glibc
	 * does not cache it (the raw syscall agrees). */
	EXPECT_EQ(syscall(SYS_getpid), me);
	EXPECT_EQ(getpid(), me);
	ASSERT_EQ(pipe(p), 0);
	/* fork() goes through clone (glibc falls back from clone3's ENOSYS
	 * where it uses clone3 at all). */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		char *argv[] = {"sh", "-c", "echo ok >&3; exit 3", NULL};
		(void)dup2(p[1], 3);
		execv("/bin/sh", argv);
		_exit(99);
	}
	(void)close(p[1]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	{
		char buf[8] = "";
		EXPECT_EQ(read(p[0], buf, sizeof(buf)), 3);
		EXPECT_EQ(memcmp(buf, "ok\n", 3), 0);
	}
	EXPECT_EQ(setpgid(0, 0), 0);
	EXPECT_NE(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), MAP_FAILED);
}
