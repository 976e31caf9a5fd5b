/* SPDX-License-Identifier: MIT */
/* Process creation for sandbox-execd. vfork() from the request's worker
 * thread, then in the child only async-signal-safe calls (the daemon is
 * multi-threaded): PR_SET_PDEATHSIG so the command dies if the worker (or
 * the whole daemon, even by SIGKILL) goes away, a new session (the command
 * and its descendants form one process group we can kill), default signal
 * dispositions and an empty mask, fchdir into the verified cwd, the client's
 * stdio on 0-2, every other descriptor closed on exec, execve of the
 * absolute path. An execve failure comes back through a CLOEXEC pipe. Never
 * a shell. */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "execd.h"
#include "log.h"
#include "macros.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The child between fork() and execve(): async-signal-safe calls only.
 * Reports errno through errfd and exits 127 on failure. */
static _noreturn_ void child(const struct spawn_params *p, pid_t parent, int errfd)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;
	int e;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		goto fail;
	/* The worker may have died between fork() and prctl(). (As PID 1 of
	 * its own namespace, parent is 0: getppid() says 0 there.) */
	if (parent != 0 && getppid() != parent)
		_exit(127);
	/* Into the command's own cgroup first (cgroup.c), so that nothing it
	 * starts is outside it, then a cgroup namespace rooted there, so that
	 * it cannot move itself out through the (same user's) delegated
	 * parent. EPERM: no CAP_SYS_ADMIN (no user namespace of its own); the
	 * cgroup then still holds setsid and double-fork descendants. */
	if (p->cgroup_procs_fd > 2 &&
	    (write(p->cgroup_procs_fd, "0", 1) != 1 || (unshare(CLONE_NEWCGROUP) < 0 && errno != EPERM)))
		goto fail;
	if (setsid() < 0)
		goto fail;
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL); /* EINVAL for SIGKILL/SIGSTOP/reserved: fine */
	(void)sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		goto fail;
	if (fchdir(p->cwd_fd) < 0)
		goto fail;
	/* Received fds are >= 3 (main() keeps 0-2 open), so no dup2 clobbers
	 * a source still needed. dup2 clears FD_CLOEXEC on the copies. */
	for (int i = 0; i < 3; i++)
		if (dup2(p->fds[i], i) < 0)
			goto fail;
	/* Files the daemon opened for the tool (toolrun.c) on 3, 4, ...:
	 * their sources are numbered above that range, so none is
	 * overwritten before it is copied. */
	for (size_t i = 0; i < p->n_extra; i++)
		if (dup2(p->extra_fds[i], (int)(3 + i)) < 0)
			goto fail;
	/* Everything else closes on exec (errfd too, which tells the parent
	 * that execve succeeded). */
	if (syscall(SYS_close_range, (unsigned)(3 + p->n_extra), ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		goto fail;
	execve(p->path, p->argv, p->envp);
fail:
	e = errno;
	(void)!write(errfd, &e, sizeof(e));
	_exit(127);
}

/* ---- the whole process tree ----
 * A command that calls setsid() or double-forks leaves its process group,
 * so a group kill misses it. The command is therefore started as PID 1 of
 * a pid namespace of its own (with a user namespace that maps only our
 * uid and gid to themselves, which an unprivileged process may create):
 * when PID 1 dies -- its normal exit, or our SIGKILL on timeout,
 * disconnect or shutdown -- the kernel kills every process left in the
 * namespace, setsid and double-fork descendants included. clone() with
 * CLONE_VM | CLONE_VFORK on a stack of its own keeps vfork's cost (no copy
 * of the daemon's page tables). Where user namespaces are not available
 * (a sysctl, an LSM) the command starts as before, in a new session, and
 * only its process group is killed (SECURITY.md). */

#define SPAWN_STACK ((size_t)64 * 1024)
#define SPAWN_MAP_FAILED 0x10000 /* or'ed into errno: the namespace's id maps */

struct ns_child {
	const struct spawn_params *p;     /* argv/path: the reaper's, built by the parent */
	int errfd;
	char uid_map[64], gid_map[64]; /* formatted by the parent */
};

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	(void)close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static int ns_child_main(void *arg)
{
	const struct ns_child *c = arg;
	int e;

	/* Our own uid and gid, and nothing else, inside the namespace: the
	 * tool keeps the user's file access and gains nothing. */
	if (write_file("/proc/self/uid_map", c->uid_map) < 0 ||
	    write_file("/proc/self/setgroups", "deny") < 0 ||
	    write_file("/proc/self/gid_map", c->gid_map) < 0) {
		e = errno | SPAWN_MAP_FAILED;
		(void)!write(c->errfd, &e, sizeof(e));
		_exit(127);
	}
	child(c->p, 0, c->errfd);
}

static atomic_bool ns_unavailable;
const char *spawn_reaper_path; /* set by main(); NULL: no namespaces */

/* clone() into new user and pid namespaces; -errno when they cannot be
 * made (then the caller falls back to vfork_child). */
static pid_t ns_clone(const struct spawn_params *p, int errfd)
{
	struct spawn_params rp = *p;
	struct ns_child c = { .p = &rp, .errfd = errfd };
	char *stack, **argv;
	size_t n = 0;
	pid_t pid;

	/* The command runs under the reaper, PID 1 of the namespace:
	 * REAPER PATH ARGV0 ARGS... */
	while (p->argv[n])
		n++;
	argv = calloc(n + 3, sizeof(char *));
	stack = malloc(SPAWN_STACK);
	if (!argv || !stack) {
		free(argv);
		free(stack);
		return -ENOMEM;
	}
	argv[0] = (char *)"sandbox-execd-reap";
	argv[1] = (char *)p->path;
	memcpy(argv + 2, p->argv, (n + 1) * sizeof(char *));
	rp.path = spawn_reaper_path;
	rp.argv = argv;
	(void)snprintf(c.uid_map, sizeof(c.uid_map), "%u %u 1\n", (unsigned)geteuid(), (unsigned)geteuid());
	(void)snprintf(c.gid_map, sizeof(c.gid_map), "%u %u 1\n", (unsigned)getegid(), (unsigned)getegid());
	pid = clone(ns_child_main, stack + SPAWN_STACK,
		    CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD, &c);
	if (pid < 0)
		pid = -errno;
	/* CLONE_VFORK: the child has exec'd or exited; its stack is free. */
	free(stack);
	free(argv);
	return pid;
}

/* vfork() in a frame of its own, so that no caller variable lives across
 * it (-Wclobbered); the child never returns from here. */
static __attribute__((noinline)) pid_t vfork_child(const struct spawn_params *p, pid_t parent,
						   int errfd)
{
	pid_t pid = vfork();

	if (pid == 0)
		child(p, parent, errfd);
	return pid;
}

static void ns_give_up(int err)
{
	if (!atomic_exchange(&ns_unavailable, true))
		log_warn("Cannot start commands in their own user and pid namespace (%s): "
			 "descendants that leave the process group (setsid) can outlive their "
			 "command, continuing",
			 strerror(err));
}

static int spawn_start_once(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd)
{
	_cleanup_close_ int rd = -1, wr = -1;
	pid_t parent = getpid(), pid;
	int pfd[2], e = 0, pidfd;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	rd = pfd[0];
	wr = pfd[1];
	/* vfork: the child borrows the daemon's memory until execve instead
	 * of copying the page tables of a multi-threaded daemon (the larger
	 * part of a request's overhead). Only this worker thread waits; the
	 * child has its own fd table, cwd and signal dispositions, and child()
	 * never returns and makes only async-signal-safe calls that write no
	 * shared memory but the (thread-local, then discarded) errno. */
	bool use_ns = spawn_reaper_path && !atomic_load(&ns_unavailable);

	pid = -EINVAL;
	if (use_ns) {
		pid = ns_clone(p, wr);
		if (pid == -EPERM || pid == -EINVAL || pid == -ENOSPC || pid == -EUSERS ||
		    pid == -EACCES)
			ns_give_up((int)-pid);
		else if (pid < 0)
			return (int)pid;
	}
	if (!use_ns || atomic_load(&ns_unavailable)) {
		pid = vfork_child(p, parent, wr);
		if (pid < 0)
			return -errno;
	}
	wr = safe_close(wr);
	do
		n = read(rd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != 0) {
		/* execve (or a step before it) failed: reap and report. */
		(void)waitpid(pid, NULL, 0);
		if (n == (ssize_t)sizeof(e) && (e & SPAWN_MAP_FAILED)) {
			ns_give_up(e & ~SPAWN_MAP_FAILED);
			return -EAGAIN; /* the caller tries again without */
		}
		return n == (ssize_t)sizeof(e) && e > 0 ? -e : -EIO;
	}
	pidfd = pidfd_open_(pid);
	if (pidfd < 0) {
		int r = -errno;

		spawn_kill_group(pid);
		(void)waitpid(pid, NULL, 0);
		return r;
	}
	*ret_pid = pid;
	*ret_pidfd = pidfd;
	return 0;
}

int spawn_start(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd)
{
	int r = spawn_start_once(p, ret_pid, ret_pidfd);

	if (r == -EAGAIN)
		r = spawn_start_once(p, ret_pid, ret_pidfd);
	return r;
}

void spawn_kill_group(pid_t pid)
{
	/* The command is a session and process-group leader (SETSID), so -pid
	 * reaches it and every descendant that did not leave the group. Called
	 * only while the leader is alive or still a zombie, so the group id
	 * cannot have been recycled. ESRCH (group already empty) is fine. */
	if (pid > 1)
		(void)kill(-pid, SIGKILL);
}

int spawn_reap(pid_t pid, int pidfd, int *ret_code, bool *ret_signaled)
{
	siginfo_t si;

	/* Leftovers of the command (background children) go with it: a
	 * request's processes do not outlive the request. The leader is
	 * a zombie at most here, so its group id is still reserved. */
	spawn_kill_group(pid);
	memset(&si, 0, sizeof(si));
	for (;;) {
		if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED) == 0)
			break;
		if (errno != EINTR)
			return -errno;
	}
	*ret_signaled = si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED;
	*ret_code = si.si_status;
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int spawn_capture(const struct spawn_params *p, unsigned timeout_ms, char *out, size_t max,
		  size_t *ret_len)
{
	_cleanup_close_ int null_fd = -1, rd = -1, wr = -1, pidfd = -1;
	struct spawn_params q = *p;
	long long deadline = now_ms() + timeout_ms;
	size_t len = 0;
	int pipefd[2], code = 0, r;
	bool signaled = false, eof = false;
	pid_t pid;

	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		return -errno;
	if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	rd = pipefd[0];
	wr = pipefd[1];
	q.fds[0] = null_fd;
	q.fds[1] = wr;
	q.fds[2] = null_fd;
	r = spawn_start(&q, &pid, &pidfd);
	if (r < 0)
		return r;
	wr = safe_close(wr);
	while (!eof) {
		struct pollfd pfd = { .fd = rd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (len + 1 >= max) {
			r = -EMSGSIZE;
			break;
		}
		n = read(rd, out + len, max - 1 - len);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			eof = true;
		len += (size_t)n;
	}
	/* EOF alone does not mean exit; a stuck helper is killed below either
	 * way once its output is complete or the deadline passed. */
	if (r >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		long long left = deadline - now_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			r = -ETIMEDOUT;
	}
	if (spawn_reap(pid, pidfd, &code, &signaled) < 0 && r >= 0)
		r = -ECHILD;
	out[len] = '\0';
	if (ret_len)
		*ret_len = len;
	if (r < 0)
		return r;
	return signaled ? -EINTR : code;
}
