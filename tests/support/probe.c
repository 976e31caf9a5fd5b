/* SPDX-License-Identifier: MIT */
/* probe: run as the agent under sandbox-init by the integration tests and
 * benchmarks; it reports what the agent can see and do, one key=value per
 * line on stdout. Built without sanitizers so that each subcommand issues
 * exactly the syscalls it names (an ASan runtime would add its own).
 *
 *   probe report             ids, groups, capability sets, NoNewPrivs,
 *                            Seccomp, signal mask, open fds, tty, environment
 *   probe syscalls [--expect] every syscall the seccomp filter must refuse
 *                            (and a few it must allow), each in a forked
 *                            child: NAME=EPERM, NAME=<ERRNO>, NAME=ok or
 *                            NAME=signal:SIGxxx; --expect prints the
 *                            expectation per NAME instead (see below)
 *   probe workload DIR       git, gcc, make, python3, node, bash job
 *                            control, threads in DIR: step.NAME=ok|...
 *   probe orphans N          N orphans reparented to our parent (PID 1),
 *                            released at once; reports whether it reaped
 *                            them all
 *   probe signals            prints got=SIGNAME from=PID per forwarded
 *                            signal; exits 3 after SIGTERM
 *   probe leave-behind FILE [ignore-term]
 *                            leaves a process behind that records the
 *                            SIGTERM it gets in FILE (or ignores it), then
 *                            exits 7
 *   probe exit N | kill-self SIGNAL | sleep [SECONDS] | now
 *   probe pid1-caps          first thing after exec: PID 1's capability
 *                            sets as it holds them at that moment
 *                            (pid1_CapPrm=..., pid1_CapEff=..., pid1_CapBnd=...)
 *
 * Expectations (probe syscalls --expect):
 *   blocked      the filter must answer EPERM, and the arguments are
 *                chosen so that WITHOUT the filter (sandbox-init
 *                --seccomp=off, same uid, same empty capability sets) the
 *                kernel answers something else (ok, EINVAL, EFAULT,
 *                EBADF, ESRCH, ENOSYS ...): comparing both runs proves
 *                that the filter, not a missing capability, refuses it.
 *   blocked-cap  the filter must answer EPERM, but the kernel checks a
 *                capability before anything an unprivileged caller can
 *                influence, so the unprivileged control answers EPERM as
 *                well. tests/support/seccomp-replay runs this probe as root
 *                with every capability under the agent's own filter (read
 *                back from the kernel) and without it: there the two
 *                differ for every blocked case, these included.
 *   blocked-nosys  clone3: its flags live in user memory, out of a seccomp
 *                filter's reach, so the filter may refuse it as a whole,
 *                with ENOSYS (glibc then falls back to clone(), whose flags
 *                the filter does check) or EPERM; never let it through.
 *   allowed      everyday calls the filter must not refuse (not EPERM). */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <asm/unistd.h>
#include <linux/keyctl.h>
#include <linux/userfaultfd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define PROBE_LINE_MAX 4096
#define PROBE_MAX_ORPHANS 4096
#define PROBE_REAP_DEADLINE_MS 10000
#define PROBE_SIGNAL_DEADLINE_S 120
#define PROBE_SLEEP_DEFAULT_S 600
#define PROBE_PATH_MAX 4096
/* Type 15 is below SOCK_TYPE_MASK but above SOCK_MAX: __sock_create()
 * answers EINVAL before the family's create() checks CAP_NET_RAW. */
#define PROBE_BAD_SOCK_TYPE 15
/* Above IPPROTO_MAX: inet_create()/inet6_create() answer EINVAL before
 * the CAP_NET_RAW check for SOCK_RAW. */
#define PROBE_BAD_PROTOCOL 1000
#define PROBE_NO_SUCH_PID 0x3ffffff0
#define PROBE_IOCTL_HIGH_BITS 0x100000000UL
/* A flag unshare() does not accept (check_unshare_flags → EINVAL). */
#define PROBE_BAD_UNSHARE_FLAG CLONE_SETTLS
/* clone() with CLONE_SIGHAND but without CLONE_VM is EINVAL in
 * copy_process() before copy_namespaces() checks any capability. */
#define PROBE_BAD_CLONE_FLAG CLONE_SIGHAND
/* Not a KEXEC_* flag: EINVAL for root, after the CAP_SYS_BOOT check. */
#define PROBE_BAD_KEXEC_FLAGS 0x00f00000UL
#define PROBE_X32_GETPID 39
#define PROBE_X32_UNSHARE 272

enum expectation {
	EXPECT_BLOCKED,
	EXPECT_BLOCKED_CAP,
	EXPECT_BLOCKED_NOSYS,
	EXPECT_ALLOWED,
	EXPECT_MAX,
};

static const char *const expectation_names[EXPECT_MAX] = {
	[EXPECT_BLOCKED] = "blocked",
	[EXPECT_BLOCKED_CAP] = "blocked-cap",
	[EXPECT_BLOCKED_NOSYS] = "blocked-nosys",
	[EXPECT_ALLOWED] = "allowed",
};

/* A syscall under test: returns the raw result (-1 with errno set on
 * failure). Runs in a forked child, so side effects (a new user namespace,
 * a changed personality) do not leak into the next case. */
struct syscall_case {
	const char *name;
	enum expectation expect;
	long (*call)(void);
};

/* The first version of struct clone_args (CLONE_ARGS_SIZE_VER0). */
struct probe_clone_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
};

/* A real fork-like clone/clone3 (no CLONE_VM): the child returns 0 from the
 * syscall on its own copy of the stack and leaves at once. */
static long reap_fork_result(long r)
{
	if (r == 0)
		_exit(0);
	if (r > 0)
		(void) waitpid((pid_t) r, NULL, 0);
	return r;
}

/* Namespaces: unprivileged user namespaces are enabled here, so these
 * succeed without the filter. */
static long call_unshare_user(void)
{
	return syscall(SYS_unshare, CLONE_NEWUSER);
}
static long call_unshare_user_mnt_net(void)
{
	return syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET);
}
/* One flag per namespace type, plus an invalid flag: EINVAL without the
 * filter (flag validation precedes the capability check). */
static long unshare_bad(unsigned long ns)
{
	return syscall(SYS_unshare, ns | PROBE_BAD_UNSHARE_FLAG);
}
static long call_unshare_newns(void) { return unshare_bad(CLONE_NEWNS); }
static long call_unshare_newnet(void) { return unshare_bad(CLONE_NEWNET); }
static long call_unshare_newpid(void) { return unshare_bad(CLONE_NEWPID); }
static long call_unshare_newuts(void) { return unshare_bad(CLONE_NEWUTS); }
static long call_unshare_newipc(void) { return unshare_bad(CLONE_NEWIPC); }
static long call_unshare_newcgroup(void) { return unshare_bad(CLONE_NEWCGROUP); }
static long call_unshare_newtime(void) { return unshare_bad(CLONE_NEWTIME); }
static long call_unshare_newuser_bad(void) { return unshare_bad(CLONE_NEWUSER); }
/* setns with a bad fd: EBADF without the filter (nstype 0 = any type). */
static long call_setns_any(void) { return syscall(SYS_setns, -1, 0); }
static long call_setns_mnt(void) { return syscall(SYS_setns, -1, CLONE_NEWNS); }
static long call_clone_newuser(void)
{
	return reap_fork_result(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, NULL, NULL, 0));
}
static long clone_bad(unsigned long ns)
{
	return reap_fork_result(syscall(SYS_clone, ns | PROBE_BAD_CLONE_FLAG | SIGCHLD, 0, NULL, NULL, 0));
}
static long call_clone_newns(void) { return clone_bad(CLONE_NEWNS); }
static long call_clone_newnet(void) { return clone_bad(CLONE_NEWNET); }
static long call_clone_newpid(void) { return clone_bad(CLONE_NEWPID); }
static long call_clone_newuts(void) { return clone_bad(CLONE_NEWUTS); }
static long call_clone_newipc(void) { return clone_bad(CLONE_NEWIPC); }
static long call_clone_newcgroup(void) { return clone_bad(CLONE_NEWCGROUP); }
static long call_clone_newuser_bad(void) { return clone_bad(CLONE_NEWUSER); }
/* No clone_newtime: CLONE_NEWTIME (0x80) lies inside CSIGNAL, the exit
 * signal byte of legacy clone(), so only unshare() and clone3() can ask
 * for a time namespace. */
static long clone3_with(uint64_t flags)
{
	struct probe_clone_args args = { .flags = flags, .exit_signal = SIGCHLD };

	return reap_fork_result(syscall(SYS_clone3, &args, sizeof(args)));
}
/* A filter cannot read clone3's flags (they sit in user memory), so it
 * may only refuse clone3 as a whole; see the harness for ENOSYS. */
static long call_clone3_newuser(void) { return clone3_with(CLONE_NEWUSER); }
static long call_clone3_newns(void) { return clone3_with(CLONE_NEWNS | PROBE_BAD_CLONE_FLAG); }
static long call_clone3_plain(void) { return clone3_with(0); }
/* fork() goes through clone(SIGCHLD | CLONE_CHILD_*) in glibc. */
static long call_fork(void) { return reap_fork_result(fork()); }

/* Mount API. */
/* An unreadable fstype pointer: copy_mount_string() → EFAULT before
 * do_mount() checks CAP_SYS_ADMIN. */
static long call_mount(void)
{
	return syscall(SYS_mount, "none", "/tmp", (const char *) 1, 0UL, NULL);
}
/* An unknown umount flag: EINVAL before may_mount(). */
static long call_umount2(void) { return syscall(SYS_umount2, "/", 0x80000000UL); }
/* may_mount() is the first check. */
static long call_pivot_root(void) { return syscall(SYS_pivot_root, ".", "."); }
/* ns_capable(CAP_SYS_ADMIN) is the first check. */
static long call_fsopen(void) { return syscall(SYS_fsopen, "tmpfs", 0U); }
/* fd < 0 is EINVAL before anything else. */
static long call_fsconfig(void)
{
	return syscall(SYS_fsconfig, -1, FSCONFIG_SET_FLAG, "ro", NULL, 0);
}
static long call_fsmount(void) { return syscall(SYS_fsmount, -1, 0U, 0U); }
static long call_fspick(void) { return syscall(SYS_fspick, AT_FDCWD, "/", 0U); }
static long call_move_mount(void)
{
	return syscall(SYS_move_mount, -1, "", AT_FDCWD, "/tmp", 0U);
}
/* Without OPEN_TREE_CLONE, open_tree() is an O_PATH open: allowed
 * unprivileged, so the control succeeds. */
static long call_open_tree(void)
{
	return syscall(SYS_open_tree, AT_FDCWD, "/", (unsigned) OPEN_TREE_CLOEXEC);
}
/* An unknown flag: EINVAL first. */
static long call_mount_setattr(void)
{
	return syscall(SYS_mount_setattr, AT_FDCWD, "/", 0x80000000U, NULL, 0);
}

/* Tracing and other processes' memory. */
static long call_ptrace_traceme(void) { return syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0); }
/* No such process: ESRCH without the filter. */
static long call_ptrace_attach(void)
{
	return syscall(SYS_ptrace, PTRACE_ATTACH, PROBE_NO_SUCH_PID, 0, 0);
}
/* A bad pidfd: EBADF without the filter. */
static long call_pidfd_getfd(void) { return syscall(SYS_pidfd_getfd, -1, 0, 0U); }
/* Own memory: allowed without the filter. */
static long call_process_vm_readv(void)
{
	char src[8] = "probe", dst[8];
	struct iovec local = { dst, sizeof(dst) }, remote = { src, sizeof(src) };

	return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL);
}
static long call_process_vm_writev(void)
{
	char src[8] = "probe", dst[8];
	struct iovec local = { src, sizeof(src) }, remote = { dst, sizeof(dst) };

	return syscall(SYS_process_vm_writev, getpid(), &local, 1UL, &remote, 1UL, 0UL);
}

/* bpf, perf, keyrings, userfaultfd, io_uring: unreadable argument
 * pointers (EFAULT) or bad fds (EBADF) ahead of any capability check. */
static long call_bpf(void) { return syscall(SYS_bpf, 0 /* BPF_MAP_CREATE */, (void *) 1, 8U); }
static long call_perf_event_open(void)
{
	return syscall(SYS_perf_event_open, (void *) 1, 0, -1, -1, 0UL);
}
static long call_add_key(void)
{
	return syscall(SYS_add_key, (const char *) 1, "probe", NULL, 0UL, KEY_SPEC_PROCESS_KEYRING);
}
static long call_request_key(void)
{
	return syscall(SYS_request_key, (const char *) 1, "probe", NULL, 0);
}
/* No process keyring yet and create=0: ENOKEY. */
static long call_keyctl(void)
{
	return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0);
}
/* UFFD_USER_MODE_ONLY is allowed unprivileged even with
 * vm.unprivileged_userfaultfd=0. */
static long call_userfaultfd(void)
{
	return syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | O_CLOEXEC);
}
static long call_io_uring_setup(void) { return syscall(SYS_io_uring_setup, 1U, (void *) 1); }
static long call_io_uring_enter(void)
{
	return syscall(SYS_io_uring_enter, -1, 0U, 0U, 0U, NULL, 0UL);
}
static long call_io_uring_register(void)
{
	return syscall(SYS_io_uring_register, -1, 0U, NULL, 0U);
}

/* kexec and modules: capable() is the first check in each (a kernel built
 * without kexec or module support answers ENOSYS instead). The arguments
 * are invalid even for root, so that the privileged control run
 * (seccomp-replay's) changes nothing: an unknown kexec flag, no module
 * image, a bad fd, a module name nobody uses. */
static long call_kexec_load(void)
{
	return syscall(SYS_kexec_load, 0UL, 0UL, NULL, PROBE_BAD_KEXEC_FLAGS);
}
static long call_kexec_file_load(void)
{
	return syscall(SYS_kexec_file_load, -1, -1, 0UL, "", 0UL);
}
static long call_init_module(void) { return syscall(SYS_init_module, NULL, 0UL, ""); }
static long call_finit_module(void) { return syscall(SYS_finit_module, -1, "", 0); }
static long call_delete_module(void)
{
	return syscall(SYS_delete_module, "cs_probe_no_such_module", 0U);
}
/* An unreadable handle pointer: EFAULT since Linux 6.10 moved the
 * CAP_DAC_READ_SEARCH check after copying the handle. */
static long call_open_by_handle_at(void)
{
	return syscall(SYS_open_by_handle_at, AT_FDCWD, (void *) 1, O_RDONLY);
}

/* personality: a query must work, changes are refused. */
static long call_personality_query(void) { return syscall(SYS_personality, 0xffffffffUL); }
static long call_personality_no_aslr(void)
{
	return syscall(SYS_personality, (unsigned long) ADDR_NO_RANDOMIZE);
}
static long call_personality_rie(void)
{
	return syscall(SYS_personality, (unsigned long) READ_IMPLIES_EXEC);
}
static long call_personality_linux32(void)
{
	return syscall(SYS_personality, (unsigned long) PER_LINUX32);
}

/* ioctl on fd -1: EBADF without the filter. The kernel takes the request
 * as unsigned int, so high bits in the 64-bit register are ignored by it:
 * the _hi variants prove the filter compares only the low 32 bits. */
static long call_ioctl_tiocsti(void)
{
	char c = 'x';

	return syscall(SYS_ioctl, -1, (unsigned long) TIOCSTI, &c);
}
static long call_ioctl_tiocsti_hi(void)
{
	char c = 'x';

	return syscall(SYS_ioctl, -1, (unsigned long) TIOCSTI | PROBE_IOCTL_HIGH_BITS, &c);
}
static long call_ioctl_tioclinux(void)
{
	char c = 0;

	return syscall(SYS_ioctl, -1, (unsigned long) TIOCLINUX, &c);
}
static long call_ioctl_tioclinux_hi(void)
{
	char c = 0;

	return syscall(SYS_ioctl, -1, (unsigned long) TIOCLINUX | PROBE_IOCTL_HIGH_BITS, &c);
}
static long call_ioctl_tcgets(void)
{
	struct termios t;

	return syscall(SYS_ioctl, -1, (unsigned long) TCGETS, &t);
}

/* Sockets. */
static long sock(int family, int type, int protocol)
{
	long r = syscall(SYS_socket, family, type, protocol);

	if (r >= 0)
		(void) close((int) r);
	return r;
}
static long call_socket_packet(void) { return sock(AF_PACKET, PROBE_BAD_SOCK_TYPE, 0); }
static long call_socket_packet_flags(void)
{
	return sock(AF_PACKET, PROBE_BAD_SOCK_TYPE | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}
/* packet_create() checks CAP_NET_RAW first. */
static long call_socket_packet_raw(void) { return sock(AF_PACKET, SOCK_RAW, 0); }
static long call_socket_packet_dgram(void) { return sock(AF_PACKET, SOCK_DGRAM, 0); }
/* The obsolete (AF_INET, SOCK_PACKET): the kernel makes it an AF_PACKET
 * socket (CAP_NET_RAW checked first). */
static long call_socket_inet_packet(void) { return sock(AF_INET, SOCK_PACKET, 0); }
/* Succeeds, or EAFNOSUPPORT when the vsock module is absent. */
static long call_socket_vsock(void) { return sock(AF_VSOCK, SOCK_STREAM, 0); }
static long call_socket_vsock_flags(void)
{
	return sock(AF_VSOCK, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}
static long call_socket_raw4(void) { return sock(AF_INET, SOCK_RAW, PROBE_BAD_PROTOCOL); }
static long call_socket_raw4_flags(void)
{
	return sock(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, PROBE_BAD_PROTOCOL);
}
static long call_socket_raw6(void) { return sock(AF_INET6, SOCK_RAW, PROBE_BAD_PROTOCOL); }
static long call_socket_raw6_flags(void)
{
	return sock(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, PROBE_BAD_PROTOCOL);
}
/* inet_create() checks CAP_NET_RAW for a valid raw protocol. */
static long call_socket_raw4_icmp(void) { return sock(AF_INET, SOCK_RAW, 1 /* ICMP */); }
static long call_socket_inet_stream(void) { return sock(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); }
static long call_socket_inet6_dgram(void) { return sock(AF_INET6, SOCK_DGRAM, 0); }
static long call_socket_unix(void) { return sock(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0); }

/* The x32 ABI: same audit arch as x86_64, numbers with bit 30 set. Without
 * the filter: ENOSYS when the kernel runs with x32 disabled, ok otherwise. */
static long call_x32_getpid(void) { return syscall(__X32_SYSCALL_BIT | PROBE_X32_GETPID); }
static long call_x32_unshare(void)
{
	return syscall(__X32_SYSCALL_BIT | PROBE_X32_UNSHARE, CLONE_NEWUSER);
}

/* Setuid/setgid bits on a file the caller owns (in /tmp): allowed without
 * the filter, for the owner (setgid: the file's group is the caller's). */
static char mode_path[64];
static int mode_file(bool create)
{
	(void)snprintf(mode_path, sizeof(mode_path), "/tmp/cs-probe-mode.%d", (int) getpid());
	(void)unlink(mode_path);
	return create ? open(mode_path, O_CREAT | O_WRONLY | O_EXCL, 0644) : -1;
}
static long mode_done(long r)
{
	int e = errno;

	(void)unlink(mode_path);
	errno = e;
	return r;
}
static long call_chmod_setuid(void) { (void)mode_file(true); return mode_done(syscall(SYS_chmod, mode_path, 04755)); }
static long call_chmod_setgid(void) { (void)mode_file(true); return mode_done(syscall(SYS_chmod, mode_path, 02755)); }
static long call_chmod_plain(void) { (void)mode_file(true); return mode_done(syscall(SYS_chmod, mode_path, 01755)); }
static long call_fchmod_setuid(void) { return mode_done(syscall(SYS_fchmod, mode_file(true), 04755)); }
static long call_fchmod_plain(void) { return mode_done(syscall(SYS_fchmod, mode_file(true), 0700)); }
static long call_fchmodat_setgid(void)
{
	(void)mode_file(true);
	return mode_done(syscall(SYS_fchmodat, AT_FDCWD, mode_path, 02755));
}
/* fchmodat2 (Linux 6.6): ENOSYS without the filter on older kernels. */
static long call_fchmodat2_setuid(void)
{
	(void)mode_file(true);
	return mode_done(syscall(452, AT_FDCWD, mode_path, 04755, 0));
}
static long call_open_creat_setuid(void)
{
	(void)mode_file(false);
	return mode_done(syscall(SYS_open, mode_path, O_CREAT | O_WRONLY | O_EXCL, 04755));
}
static long call_openat_creat_setgid(void)
{
	(void)mode_file(false);
	return mode_done(syscall(SYS_openat, AT_FDCWD, mode_path, O_CREAT | O_WRONLY | O_EXCL, 02755));
}
static long call_openat_creat_plain(void)
{
	(void)mode_file(false);
	return mode_done(syscall(SYS_openat, AT_FDCWD, mode_path, O_CREAT | O_WRONLY | O_EXCL, 0755));
}
/* An unnamed file in /tmp (linkat() would give it a name). */
static long call_openat_tmpfile_setuid(void) { return syscall(SYS_openat, AT_FDCWD, "/tmp", O_TMPFILE | O_WRONLY, 04755); }
static long call_creat_setuid(void) { (void)mode_file(false); return mode_done(syscall(SYS_creat, mode_path, 04755)); }
static long call_mknod_setuid(void)
{
	(void)mode_file(false);
	return mode_done(syscall(SYS_mknod, mode_path, S_IFREG | 04755, 0));
}
static long call_mknodat_setgid(void)
{
	(void)mode_file(false);
	return mode_done(syscall(SYS_mknodat, AT_FDCWD, mode_path, S_IFREG | 02755, 0));
}
/* openat2's mode is in memory: refused as a whole (ENOSYS). */
static long call_openat2(void)
{
	uint64_t how[3] = {O_RDONLY, 0, 0};

	return syscall(437, AT_FDCWD, "/", how, sizeof(how));
}

static void *thread_main(void *arg)
{
	return arg;
}
/* glibc's pthread_create uses clone3 and falls back to clone only on
 * ENOSYS: a filter answering EPERM to clone3 breaks every threaded tool. */
static long call_pthread_create(void)
{
	pthread_t t;
	int r = pthread_create(&t, NULL, thread_main, NULL);

	if (r != 0) {
		errno = r;
		return -1;
	}
	(void) pthread_join(t, NULL);
	return 0;
}

static const struct syscall_case syscall_cases[] = {
	{ "unshare_user", EXPECT_BLOCKED, call_unshare_user },
	{ "unshare_user_mnt_net", EXPECT_BLOCKED, call_unshare_user_mnt_net },
	{ "unshare_newuser", EXPECT_BLOCKED, call_unshare_newuser_bad },
	{ "unshare_newns", EXPECT_BLOCKED, call_unshare_newns },
	{ "unshare_newnet", EXPECT_BLOCKED, call_unshare_newnet },
	{ "unshare_newpid", EXPECT_BLOCKED, call_unshare_newpid },
	{ "unshare_newuts", EXPECT_BLOCKED, call_unshare_newuts },
	{ "unshare_newipc", EXPECT_BLOCKED, call_unshare_newipc },
	{ "unshare_newcgroup", EXPECT_BLOCKED, call_unshare_newcgroup },
	{ "unshare_newtime", EXPECT_BLOCKED, call_unshare_newtime },
	{ "setns_any", EXPECT_BLOCKED, call_setns_any },
	{ "setns_mnt", EXPECT_BLOCKED, call_setns_mnt },
	{ "clone_user", EXPECT_BLOCKED, call_clone_newuser },
	{ "clone_newuser", EXPECT_BLOCKED, call_clone_newuser_bad },
	{ "clone_newns", EXPECT_BLOCKED, call_clone_newns },
	{ "clone_newnet", EXPECT_BLOCKED, call_clone_newnet },
	{ "clone_newpid", EXPECT_BLOCKED, call_clone_newpid },
	{ "clone_newuts", EXPECT_BLOCKED, call_clone_newuts },
	{ "clone_newipc", EXPECT_BLOCKED, call_clone_newipc },
	{ "clone_newcgroup", EXPECT_BLOCKED, call_clone_newcgroup },
	{ "clone3_user", EXPECT_BLOCKED_NOSYS, call_clone3_newuser },
	{ "clone3_newns", EXPECT_BLOCKED_NOSYS, call_clone3_newns },
	{ "mount", EXPECT_BLOCKED, call_mount },
	{ "umount2", EXPECT_BLOCKED, call_umount2 },
	{ "pivot_root", EXPECT_BLOCKED_CAP, call_pivot_root },
	{ "fsopen", EXPECT_BLOCKED_CAP, call_fsopen },
	{ "fsconfig", EXPECT_BLOCKED, call_fsconfig },
	{ "fsmount", EXPECT_BLOCKED_CAP, call_fsmount },
	{ "fspick", EXPECT_BLOCKED_CAP, call_fspick },
	{ "move_mount", EXPECT_BLOCKED_CAP, call_move_mount },
	{ "open_tree", EXPECT_BLOCKED, call_open_tree },
	{ "mount_setattr", EXPECT_BLOCKED, call_mount_setattr },
	{ "ptrace_traceme", EXPECT_BLOCKED, call_ptrace_traceme },
	{ "ptrace_attach", EXPECT_BLOCKED, call_ptrace_attach },
	{ "pidfd_getfd", EXPECT_BLOCKED, call_pidfd_getfd },
	{ "process_vm_readv", EXPECT_BLOCKED, call_process_vm_readv },
	{ "process_vm_writev", EXPECT_BLOCKED, call_process_vm_writev },
	{ "bpf", EXPECT_BLOCKED, call_bpf },
	{ "perf_event_open", EXPECT_BLOCKED, call_perf_event_open },
	{ "add_key", EXPECT_BLOCKED, call_add_key },
	{ "request_key", EXPECT_BLOCKED, call_request_key },
	{ "keyctl", EXPECT_BLOCKED, call_keyctl },
	{ "userfaultfd", EXPECT_BLOCKED, call_userfaultfd },
	{ "io_uring_setup", EXPECT_BLOCKED, call_io_uring_setup },
	{ "io_uring_enter", EXPECT_BLOCKED, call_io_uring_enter },
	{ "io_uring_register", EXPECT_BLOCKED, call_io_uring_register },
	{ "kexec_load", EXPECT_BLOCKED_CAP, call_kexec_load },
	{ "kexec_file_load", EXPECT_BLOCKED_CAP, call_kexec_file_load },
	{ "init_module", EXPECT_BLOCKED_CAP, call_init_module },
	{ "finit_module", EXPECT_BLOCKED_CAP, call_finit_module },
	{ "delete_module", EXPECT_BLOCKED_CAP, call_delete_module },
	{ "open_by_handle_at", EXPECT_BLOCKED, call_open_by_handle_at },
	{ "personality_no_aslr", EXPECT_BLOCKED, call_personality_no_aslr },
	{ "personality_read_implies_exec", EXPECT_BLOCKED, call_personality_rie },
	{ "personality_linux32", EXPECT_BLOCKED, call_personality_linux32 },
	{ "ioctl_tiocsti", EXPECT_BLOCKED, call_ioctl_tiocsti },
	{ "ioctl_tiocsti_hibits", EXPECT_BLOCKED, call_ioctl_tiocsti_hi },
	{ "ioctl_tioclinux", EXPECT_BLOCKED, call_ioctl_tioclinux },
	{ "ioctl_tioclinux_hibits", EXPECT_BLOCKED, call_ioctl_tioclinux_hi },
	{ "socket_packet", EXPECT_BLOCKED, call_socket_packet },
	{ "socket_packet_nonblock_cloexec", EXPECT_BLOCKED, call_socket_packet_flags },
	{ "socket_packet_raw", EXPECT_BLOCKED_CAP, call_socket_packet_raw },
	{ "socket_packet_dgram", EXPECT_BLOCKED_CAP, call_socket_packet_dgram },
	{ "socket_inet_packet", EXPECT_BLOCKED_CAP, call_socket_inet_packet },
	{ "socket_vsock", EXPECT_BLOCKED, call_socket_vsock },
	{ "socket_vsock_nonblock_cloexec", EXPECT_BLOCKED, call_socket_vsock_flags },
	{ "socket_raw4", EXPECT_BLOCKED, call_socket_raw4 },
	{ "socket_raw4_nonblock_cloexec", EXPECT_BLOCKED, call_socket_raw4_flags },
	{ "socket_raw6", EXPECT_BLOCKED, call_socket_raw6 },
	{ "socket_raw6_nonblock_cloexec", EXPECT_BLOCKED, call_socket_raw6_flags },
	{ "socket_raw4_icmp", EXPECT_BLOCKED_CAP, call_socket_raw4_icmp },
	{ "x32_getpid", EXPECT_BLOCKED, call_x32_getpid },
	{ "x32_unshare", EXPECT_BLOCKED, call_x32_unshare },
	{ "fork", EXPECT_ALLOWED, call_fork },
	{ "pthread_create", EXPECT_ALLOWED, call_pthread_create },
	{ "clone3_plain", EXPECT_ALLOWED, call_clone3_plain },
	{ "personality_query", EXPECT_ALLOWED, call_personality_query },
	{ "ioctl_tcgets", EXPECT_ALLOWED, call_ioctl_tcgets },
	{ "socket_inet_stream", EXPECT_ALLOWED, call_socket_inet_stream },
	{ "socket_inet6_dgram", EXPECT_ALLOWED, call_socket_inet6_dgram },
	{ "socket_unix", EXPECT_ALLOWED, call_socket_unix },
	{ "chmod_setuid", EXPECT_BLOCKED, call_chmod_setuid },
	{ "chmod_setgid", EXPECT_BLOCKED, call_chmod_setgid },
	{ "chmod_sticky", EXPECT_ALLOWED, call_chmod_plain },
	{ "fchmod_setuid", EXPECT_BLOCKED, call_fchmod_setuid },
	{ "fchmod_plain", EXPECT_ALLOWED, call_fchmod_plain },
	{ "fchmodat_setgid", EXPECT_BLOCKED, call_fchmodat_setgid },
	{ "fchmodat2_setuid", EXPECT_BLOCKED, call_fchmodat2_setuid },
	{ "open_creat_setuid", EXPECT_BLOCKED, call_open_creat_setuid },
	{ "openat_creat_setgid", EXPECT_BLOCKED, call_openat_creat_setgid },
	{ "openat_creat_plain", EXPECT_ALLOWED, call_openat_creat_plain },
	{ "openat_tmpfile_setuid", EXPECT_BLOCKED, call_openat_tmpfile_setuid },
	{ "creat_setuid", EXPECT_BLOCKED, call_creat_setuid },
	{ "mknod_setuid", EXPECT_BLOCKED, call_mknod_setuid },
	{ "mknodat_setgid", EXPECT_BLOCKED, call_mknodat_setgid },
	{ "openat2", EXPECT_BLOCKED_NOSYS, call_openat2 },
};

static void print_status(const char *name, int status)
{
	if (WIFSIGNALED(status)) {
		const char *s = sigabbrev_np(WTERMSIG(status));

		printf("%s=signal:SIG%s\n", name, s ? s : "?");
	} else if (WEXITSTATUS(status) == 0) {
		printf("%s=ok\n", name);
	} else {
		const char *e = strerrorname_np(WEXITSTATUS(status));

		if (e)
			printf("%s=%s\n", name, e);
		else
			printf("%s=errno:%d\n", name, WEXITSTATUS(status));
	}
}

/* Runs one case in a child; the child's exit status carries 0 (success)
 * or the errno (all errno values fit in 1..255). */
static int run_syscall_case(const struct syscall_case *c)
{
	pid_t pid;
	int status;

	(void) fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		long r;

		errno = 0;
		r = c->call();
		_exit(r >= 0 ? 0 : (errno > 0 && errno < 256 ? errno : 255));
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	print_status(c->name, status);
	return 0;
}

static int cmd_syscalls(int argc, char **argv)
{
	bool expect = argc > 0 && strcmp(argv[0], "--expect") == 0;

	for (size_t i = 0; i < sizeof(syscall_cases) / sizeof(syscall_cases[0]); i++) {
		const struct syscall_case *c = &syscall_cases[i];

		if (expect) {
			printf("%s=%s\n", c->name, expectation_names[c->expect]);
			continue;
		}
		if (run_syscall_case(c) < 0) {
			printf("%s=probe-error\n", c->name);
			return 1;
		}
	}
	return 0;
}

/* Prints "Key=value" for each wanted line of /proc/self/status. */
static int print_status_fields(void)
{
	static const char *const keys[] = {
		"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
		"Seccomp", "Seccomp_filters", "SigBlk", "SigIgn",
	};
	char line[PROBE_LINE_MAX];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *v;

		if (!colon)
			continue;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\n")] = '\0';
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strcmp(line, keys[i]) == 0)
				printf("%s=%s\n", line, v);
	}
	(void) fclose(f);
	return 0;
}

static int print_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	const char *sep = "";

	if (!d)
		return -errno;
	printf("fds=");
	while ((de = readdir(d))) {
		char *end;
		long fd;

		if (de->d_name[0] == '.')
			continue;
		errno = 0;
		fd = strtol(de->d_name, &end, 10);
		if (errno != 0 || *end != '\0' || fd == dirfd(d))
			continue;
		printf("%s%ld", sep, fd);
		sep = ",";
	}
	printf("\n");
	(void) closedir(d);
	return 0;
}

/* Parses the fields after the command name in a /proc/PID/stat line:
 * state, ppid and tty_nr (fields 3, 4 and 7). */
static int parse_stat_line(const char *buf, char *ret_state, long *ret_ppid, long *ret_tty)
{
	const char *p = strrchr(buf, ')');
	long fields[5]; /* ppid pgrp session tty_nr tpgid */
	char *end;
	char state;

	if (!p || p[1] != ' ' || p[2] == '\0')
		return -EIO;
	state = p[2];
	p += 3;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		errno = 0;
		fields[i] = strtol(p, &end, 10);
		if (errno != 0 || end == p)
			return -EIO;
		p = end;
	}
	*ret_state = state;
	*ret_ppid = fields[0];
	*ret_tty = fields[3];
	return 0;
}

/* Reads state, ppid and tty_nr of PID (0 = self). Returns -ENOENT once the
 * process is gone (reaped). */
static int read_proc_stat(pid_t pid, char *ret_state, long *ret_ppid, long *ret_tty)
{
	char path[PROBE_PATH_MAX], buf[PROBE_LINE_MAX];
	FILE *f;
	int r = -EIO;

	if (pid == 0)
		(void) snprintf(path, sizeof(path), "/proc/self/stat");
	else
		(void) snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f))
		r = parse_stat_line(buf, ret_state, ret_ppid, ret_tty);
	(void) fclose(f);
	return r;
}

static int read_proc_state(pid_t pid, char *ret_state, long *ret_ppid)
{
	long tty;

	return read_proc_stat(pid, ret_state, ret_ppid, &tty);
}

/* Nonzero tty_nr: the process has a controlling terminal. */
static long read_tty_nr(void)
{
	char state;
	long ppid, tty;

	return read_proc_stat(0, &state, &ppid, &tty) < 0 ? -1 : tty;
}

static int cmd_report(void)
{
	extern char **environ;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	gid_t groups[NGROUPS_MAX];
	int n;
	char cwd[PROBE_PATH_MAX];

	if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0)
		return 1;
	printf("uid=%u\neuid=%u\nsuid=%u\ngid=%u\negid=%u\nsgid=%u\n",
	       ruid, euid, suid, rgid, egid, sgid);
	n = getgroups((int) (sizeof(groups) / sizeof(groups[0])), groups);
	if (n < 0)
		return 1;
	printf("groups=");
	for (int i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", groups[i]);
	printf("\n");
	if (print_status_fields() < 0 || print_fds() < 0)
		return 1;
	printf("pid=%d\nppid=%d\n", (int) getpid(), (int) getppid());
	printf("session_leader=%d\n", getsid(0) == getpid());
	printf("stdin_tty=%d\n", isatty(STDIN_FILENO));
	printf("ctty=%d\n", read_tty_nr() > 0);
	printf("tty_foreground=%d\n", tcgetpgrp(STDIN_FILENO) == getpgrp());
	printf("setuid0=%s\n", setuid(0) == 0 ? "ok" : strerrorname_np(errno));
	printf("setgid0=%s\n", setgid(0) == 0 ? "ok" : strerrorname_np(errno));
	printf("cwd=%s\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
	for (char **e = environ; *e; e++)
		printf("env.%s\n", *e);
	return 0;
}

/* Runs argv[0] (PATH search) with stdin from /dev/null and stdout on our
 * stderr (diagnostics only); prints step.NAME=ok|exit:N|signal:SIG|ERRNO. */
static bool run_step(const char *name, const char *dir, const char *const argv[])
{
	pid_t pid;
	int status;

	(void) fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("step.%s=fork:%s\n", name, strerrorname_np(errno));
		return false;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(125);
		if (dir && chdir(dir) < 0)
			_exit(125);
		/* execvp's argv is not const-qualified for historical reasons. */
		(void) execvp(argv[0], (char *const *) argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (waitpid(pid, &status, 0) < 0) {
		printf("step.%s=waitpid:%s\n", name, strerrorname_np(errno));
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("step.%s=ok\n", name);
		return true;
	}
	if (WIFSIGNALED(status))
		printf("step.%s=signal:SIG%s\n", name, sigabbrev_np(WTERMSIG(status)));
	else
		printf("step.%s=exit:%d\n", name, WEXITSTATUS(status));
	return false;
}

static int write_file(const char *dir, const char *name, const char *content)
{
	char path[PROBE_PATH_MAX];
	FILE *f;
	int r;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int) sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "we");
	if (!f)
		return -errno;
	r = fputs(content, f) < 0 ? -EIO : 0;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

static int cmd_workload(int argc, char **argv)
{
	static const char hello_c[] =
		"#include <stdio.h>\n"
		"int main(void) { puts(\"hello from the sandbox\"); return 0; }\n";
	/* A recipe line must start with a tab. */
	static const char makefile[] =
		"all: hello-make\n"
		"hello-make: hello.c\n"
		"\t$(CC) -O2 -o $@ hello.c\n"
		"\t./hello-make\n";
	static const char py[] =
		"import threading, subprocess, json, hashlib\n"
		"t = threading.Thread(target=lambda: hashlib.sha256(b'x').hexdigest())\n"
		"t.start(); t.join()\n"
		"subprocess.run(['true'], check=True)\n"
		"print(json.dumps({'ok': True}))\n";
	static const char js[] =
		"const { Worker } = require('worker_threads');\n"
		"require('child_process').execFileSync('true');\n"
		"const w = new Worker('require(\"worker_threads\").parentPort.postMessage(1)', { eval: true });\n"
		"w.on('message', () => process.exit(0));\n";
	/* Job control without a terminal: `set -m` puts the job in its own
	 * process group; %1 must be killable and reported as SIGTERM. */
	static const char jobs[] =
		"set -m; sleep 30 & kill %1; wait %1; st=$?; [ \"$st\" -eq 143 ] || exit 1;"
		" (exit 3) & wait $!; [ $? -eq 3 ]";
	char repo[PROBE_PATH_MAX];
	bool ok = true;
	const char *dir;

	if (argc < 1) {
		fprintf(stderr, "usage: probe workload DIR\n");
		return 2;
	}
	dir = argv[0];
	if (snprintf(repo, sizeof(repo), "%s/repo", dir) >= (int) sizeof(repo))
		return 1;
	if (write_file(dir, "hello.c", hello_c) < 0 || write_file(dir, "Makefile", makefile) < 0 ||
	    (mkdir(repo, 0755) < 0 && errno != EEXIST) || write_file(repo, "README", "probe\n") < 0) {
		printf("step.setup=%s\n", strerrorname_np(errno));
		return 1;
	}

	ok &= run_step("git_init", repo, (const char *const[]){ "git", "init", "-q", ".", NULL });
	ok &= run_step("git_add", repo, (const char *const[]){ "git", "add", "README", NULL });
	ok &= run_step("git_commit", repo,
		       (const char *const[]){ "git", "-c", "user.name=probe", "-c",
					      "user.email=probe@example.invalid", "commit", "-q",
					      "-m", "probe", NULL });
	ok &= run_step("git_log", repo, (const char *const[]){ "git", "log", "--oneline", NULL });
	ok &= run_step("gcc", dir, (const char *const[]){ "gcc", "-O2", "-o", "hello", "hello.c", NULL });
	ok &= run_step("gcc_run", dir, (const char *const[]){ "./hello", NULL });
	ok &= run_step("make", dir, (const char *const[]){ "make", "-s", NULL });
	ok &= run_step("python3", dir, (const char *const[]){ "python3", "-c", py, NULL });
	if (access("/usr/bin/node", X_OK) == 0)
		ok &= run_step("node", dir, (const char *const[]){ "node", "-e", js, NULL });
	else
		printf("step.node=skip\n");
	ok &= run_step("bash_job_control", dir, (const char *const[]){ "bash", "-c", jobs, NULL });
	ok &= run_step("pipeline", dir,
		       (const char *const[]){ "sh", "-c", "seq 1000 | sort -rn | head -n1 | grep -qx 1000", NULL });
	if (call_pthread_create() == 0) {
		printf("step.pthread=ok\n");
	} else {
		printf("step.pthread=%s\n", strerrorname_np(errno));
		ok = false;
	}
	printf("workload=%s\n", ok ? "ok" : "failed");
	return ok ? 0 : 1;
}

static int parse_long(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static long monotonic_ms(void)
{
	struct timespec ts;

	(void) clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Zombies anywhere in this pid namespace (our /proc is the namespace's). */
static int count_zombies(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long pid, ppid;
		char state;

		if (parse_long(de->d_name, 1, INT_MAX, &pid) < 0)
			continue;
		if (read_proc_state((pid_t) pid, &state, &ppid) == 0 && state == 'Z')
			n++;
	}
	(void) closedir(d);
	return n;
}

/* Creates N orphans (double fork; the middle process exits at once, so each
 * grandchild is reparented to our parent: PID 1, or sandbox-init as a child
 * subreaper), waits until all show that ppid, then
 * releases them together by closing a pipe they block on: PID 1 must reap
 * N exits that arrive at once. Reports what it saw. */
static int cmd_orphans(int argc, char **argv)
{
	static pid_t orphans[PROBE_MAX_ORPHANS];
	int hold[2], report[2];
	long n, reparented = 0, left = 0, deadline;
	long reaper = (long) getppid();

	if (argc < 1 || parse_long(argv[0], 1, PROBE_MAX_ORPHANS, &n) < 0) {
		fprintf(stderr, "usage: probe orphans N (1..%d)\n", PROBE_MAX_ORPHANS);
		return 2;
	}
	if (pipe2(hold, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		pid_t mid = fork(), grand;
		int status;

		if (mid < 0)
			return 1;
		if (mid == 0) {
			(void) close(hold[1]);
			(void) close(report[0]);
			grand = fork();
			if (grand == 0) {
				char c;

				(void) close(report[1]);
				/* Blocks until the probe closes the last write end. */
				while (read(hold[0], &c, 1) < 0 && errno == EINTR)
					;
				_exit(0);
			}
			if (grand < 0 || write(report[1], &grand, sizeof(grand)) != sizeof(grand))
				_exit(1);
			_exit(0);
		}
		if (waitpid(mid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 1;
		if (read(report[0], &orphans[i], sizeof(orphans[i])) != sizeof(orphans[i]))
			return 1;
	}
	(void) close(hold[0]);
	deadline = monotonic_ms() + PROBE_REAP_DEADLINE_MS;
	for (long i = 0; i < n; i++) {
		char state;
		long ppid;

		while (read_proc_state(orphans[i], &state, &ppid) == 0 && ppid != reaper &&
		       monotonic_ms() < deadline)
			(void) usleep(1000);
		if (read_proc_state(orphans[i], &state, &ppid) == 0 && ppid == reaper)
			reparented++;
	}
	printf("orphans=%ld\nreaper=%ld\norphans_reparented=%ld\n", n, reaper, reparented);
	printf("zombies_before=%d\n", count_zombies());
	(void) close(hold[1]);

	deadline = monotonic_ms() + PROBE_REAP_DEADLINE_MS;
	for (long i = 0; i < n; i++) {
		char state;
		long ppid;

		while (read_proc_state(orphans[i], &state, &ppid) == 0 && monotonic_ms() < deadline)
			(void) usleep(1000);
		if (read_proc_state(orphans[i], &state, &ppid) == 0)
			left++;
	}
	printf("orphans_left=%ld\nzombies_after=%d\n", left, count_zombies());
	return left == 0 ? 0 : 1;
}

static const int forwarded_signals[] = {
	SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH,
};

static int cmd_signals(void)
{
	sigset_t set;
	struct timespec timeout = { .tv_sec = PROBE_SIGNAL_DEADLINE_S };

	(void) sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
		(void) sigaddset(&set, forwarded_signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return 1;
	printf("ready=1\n");
	(void) fflush(stdout);
	for (;;) {
		siginfo_t si;
		int sig = sigtimedwait(&set, &si, &timeout);

		if (sig < 0) {
			if (errno == EINTR)
				continue;
			printf("timeout=1\n");
			return 1;
		}
		printf("got=SIG%s from=%d\n", sigabbrev_np(sig), (int) si.si_pid);
		(void) fflush(stdout);
		if (sig == SIGTERM)
			return 3;
	}
}

static volatile sig_atomic_t leftover_got;

static void leftover_handler(int sig)
{
	leftover_got = sig;
}

/* Leaves a child behind (in its own session, so it is not the agent's
 * process group) that records the SIGTERM it receives in FILE and exits;
 * exits 7 once the child has said it is ready. With "ignore-term" the child
 * ignores SIGTERM, so only SIGKILL ends it. */
static int cmd_leave_behind(int argc, char **argv)
{
	int ready[2];
	pid_t pid;
	char c;

	if (argc < 1) {
		fprintf(stderr, "usage: probe leave-behind FILE [ignore-term]\n");
		return 2;
	}
	if (pipe2(ready, O_CLOEXEC) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = leftover_handler };
		bool ignore = argc > 1 && strcmp(argv[1], "ignore-term") == 0;
		int fd = open(argv[0], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		sigset_t term, none;

		if (fd < 0)
			_exit(1);
		(void) setsid();
		if (ignore)
			sa.sa_handler = SIG_IGN;
		/* SIGTERM stays blocked except inside sigsuspend(): one that
		 * arrives before we wait is kept pending, not lost. */
		(void) sigemptyset(&term);
		(void) sigaddset(&term, SIGTERM);
		(void) sigemptyset(&none);
		(void) sigprocmask(SIG_BLOCK, &term, NULL);
		(void) sigaction(SIGTERM, &sa, NULL);
		(void) close(ready[0]);
		(void) close(ready[1]);
		for (;;) {
			(void) sigsuspend(&none);
			if (leftover_got) {
				dprintf(fd, "got=SIG%s\n", sigabbrev_np(leftover_got));
				_exit(0);
			}
		}
	}
	(void) close(ready[1]);
	/* EOF once the child has closed its copy, i.e. its handler is set. */
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	printf("leftover=%d\n", (int) pid);
	return 7;
}

static int parse_signal(const char *s)
{
	long v;

	if (parse_long(s, 1, SIGRTMAX, &v) == 0)
		return (int) v;
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *name = sigabbrev_np(sig);

		if (name && strcmp(name, s) == 0)
			return sig;
	}
	return -EINVAL;
}

static int cmd_kill_self(int argc, char **argv)
{
	int sig = argc > 0 ? parse_signal(argv[0]) : -EINVAL;
	sigset_t set;

	if (sig < 0) {
		fprintf(stderr, "usage: probe kill-self SIGNAL\n");
		return 2;
	}
	(void) fflush(stdout);
	(void) signal(sig, SIG_DFL);
	(void) sigemptyset(&set);
	(void) sigaddset(&set, sig);
	(void) sigprocmask(SIG_UNBLOCK, &set, NULL);
	(void) raise(sig);
	return 1;
}

/* Read before anything else the probe does: what PID 1 holds while the
 * agent has just started. */
static int cmd_pid1_caps(void)
{
	static const char *const keys[] = {"CapPrm:", "CapEff:", "CapBnd:"};
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/1/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void) close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *p = strstr(buf, keys[i]);

		if (!p)
			return 1;
		p += strlen(keys[i]);
		while (*p == '\t' || *p == ' ')
			p++;
		printf("pid1_%.6s=%.16s\n", keys[i], p);
	}
	return 0;
}

static int cmd_sleep(int argc, char **argv)
{
	long seconds = PROBE_SLEEP_DEFAULT_S;
	struct timespec ts;

	if (argc > 0 && parse_long(argv[0], 0, INT_MAX, &seconds) < 0)
		return 2;
	printf("sleeping=%d\n", (int) getpid());
	(void) fflush(stdout);
	ts.tv_sec = seconds;
	ts.tv_nsec = 0;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec start;
	long v;

	/* First, for the start-up benchmark: the agent's execve is done. */
	(void) clock_gettime(CLOCK_REALTIME, &start);
	if (argc < 2) {
		fprintf(stderr, "usage: probe report|syscalls|workload|orphans|signals|"
				"leave-behind|exit|kill-self|sleep|now|pid1-caps ...\n");
		return 2;
	}
	if (strcmp(argv[1], "pid1-caps") == 0)
		return cmd_pid1_caps();
	(void) setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "now") == 0) {
		printf("now_us=%lld\n", (long long) start.tv_sec * 1000000LL + start.tv_nsec / 1000);
		return 0;
	}
	if (strcmp(argv[1], "report") == 0)
		return cmd_report();
	if (strcmp(argv[1], "syscalls") == 0)
		return cmd_syscalls(argc - 2, argv + 2);
	if (strcmp(argv[1], "workload") == 0)
		return cmd_workload(argc - 2, argv + 2);
	if (strcmp(argv[1], "orphans") == 0)
		return cmd_orphans(argc - 2, argv + 2);
	if (strcmp(argv[1], "signals") == 0)
		return cmd_signals();
	if (strcmp(argv[1], "leave-behind") == 0)
		return cmd_leave_behind(argc - 2, argv + 2);
	if (strcmp(argv[1], "kill-self") == 0)
		return cmd_kill_self(argc - 2, argv + 2);
	if (strcmp(argv[1], "sleep") == 0)
		return cmd_sleep(argc - 2, argv + 2);
	if (strcmp(argv[1], "exit") == 0 && argc > 2 && parse_long(argv[2], 0, 255, &v) == 0)
		return (int) v;
	fprintf(stderr, "probe: unknown or malformed command '%s'\n", argv[1]);
	return 2;
}
