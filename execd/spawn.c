/* SPDX-License-Identifier: MIT */
/* Process creation for sandbox-execd, in one function: spawn_exec().
 *
 * Every process the daemon (and sandbox-execd-reap) starts comes from it:
 * the tools, the git relay's git, the exec backend's program, the spawn
 * server below, and (inside the namespace) the command under its PID 1.
 * It blocks every signal in the calling thread, makes the child with
 * clone(CLONE_VM | CLONE_VFORK) on a stack of its own (vfork's cost: no
 * copy of a multi-threaded daemon's page tables), and in the child makes
 * only async-signal-safe calls that write no shared memory but the
 * (discarded) errno: optionally the parent-death signal and a new session,
 * every signal disposition back to SIG_DFL (a handler of the daemon must
 * never run on the borrowed memory, and SIG_IGN would survive execve),
 * then the empty mask, fchdir into the verified cwd, the given stdio on
 * 0-2 and file fds on 3.., every other descriptor closed on exec, execve
 * of the absolute path. An execve failure comes back through a CLOEXEC
 * pipe. The caller's mask is restored before it returns -- as glibc's
 * posix_spawn does. Never a shell.
 *
 * ---- whole process trees ----
 * A command that calls setsid() or double-forks leaves its process group,
 * so a group kill misses it. Each command therefore runs under PID 1 of a
 * pid namespace of its own, in a user namespace of its own that maps only
 * our uid and gid to themselves (which an unprivileged process may create):
 * when PID 1 dies -- its normal exit, or our SIGKILL on timeout,
 * disconnect or shutdown -- the kernel kills every process left in the
 * namespace, setsid and double-fork descendants included.
 *
 * Making that PID 1 with an execve per request was the largest part of a
 * request's overhead, so it comes from a spawn server instead:
 * sandbox-execd-reap --serve, started once by the daemon's main thread. For
 * each command the daemon sends it, over a SOCK_SEQPACKET socket pair, the
 * command's fds (a sealed memfd with path, argv and environment, the cwd,
 * stdio, file fds) and a reply channel. The server forks (it is small and
 * single-threaded, so that is cheap) with CLONE_NEWUSER | CLONE_NEWPID |
 * CLONE_PARENT: the new PID 1 is the daemon's child, not the server's, so
 * the daemon reaps it by pidfd, kills its group, and its parent-death
 * signal follows the daemon's main thread exactly as before. PID 1 writes
 * its identity maps, starts the command with spawn_exec() and reports the
 * result; the server reports PID 1's pid (execd/reap.c).
 *
 * Where user namespaces are not available (a sysctl, an LSM) the command
 * is spawned directly, in a new session, and only its process group is
 * killed (SECURITY.md). */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

#define SPAWN_STACK ((size_t)64 * 1024)
#define SPAWN_MAP_FAILED 0x10000 /* or'ed into errno: the namespace's id maps */
#define SPAWN_SERVER_TIMEOUT_MS 10000 /* the server and PID 1 answer within this */

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* ---- spawn_exec: the one way a process is made ---- */

struct exec_child {
	const struct spawn_params *p;
	unsigned flags;
	pid_t parent; /* for SPAWN_PDEATHSIG: getppid() after the prctl */
	int errfd;
	char uid_map[64], gid_map[64]; /* SPAWN_NEWNS: formatted by the parent */
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

int spawn_write_id_maps(const char *uid_map, const char *gid_map)
{
	/* Our own uid and gid, and nothing else, inside the namespace: the
	 * command keeps the user's file access and gains nothing. */
	if (write_file("/proc/self/uid_map", uid_map) < 0 ||
	    write_file("/proc/self/setgroups", "deny") < 0 ||
	    write_file("/proc/self/gid_map", gid_map) < 0)
		return -1;
	return 0;
}

void spawn_format_id_maps(char *uid_map, char *gid_map, size_t len)
{
	(void)snprintf(uid_map, len, "%u %u 1\n", (unsigned)geteuid(), (unsigned)geteuid());
	(void)snprintf(gid_map, len, "%u %u 1\n", (unsigned)getegid(), (unsigned)getegid());
}

/* The child between clone() and execve(): async-signal-safe calls only,
 * on its own stack, in the parent's memory. Reports errno through errfd
 * (or'ed with SPAWN_MAP_FAILED for the id maps) and exits 127. */
static int exec_child_main(void *arg)
{
	const struct exec_child *c = arg;
	const struct spawn_params *p = c->p;
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;
	int e;

	if ((c->flags & SPAWN_NEWNS) && spawn_write_id_maps(c->uid_map, c->gid_map) < 0) {
		e = errno | SPAWN_MAP_FAILED;
		(void)!write(c->errfd, &e, sizeof(e));
		_exit(127);
	}
	if (c->flags & SPAWN_PDEATHSIG) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			goto fail;
		/* The parent thread may have died between clone() and prctl().
		 * (As PID 1 of its own namespace, getppid() says 0.) */
		if (!(c->flags & SPAWN_NEWNS) && getppid() != c->parent)
			_exit(127);
	}
	/* Into the command's own cgroup first (cgroup.c), so that nothing it
	 * starts is outside it, then a cgroup namespace rooted there, so that
	 * it cannot move itself out through the (same user's) delegated
	 * parent. EPERM: no CAP_SYS_ADMIN (no user namespace of its own); the
	 * cgroup then still holds setsid and double-fork descendants. */
	if (p->cgroup_procs_fd > 2 &&
	    (write(p->cgroup_procs_fd, "0", 1) != 1 || (unshare(CLONE_NEWCGROUP) < 0 && errno != EPERM)))
		goto fail;
	if ((c->flags & SPAWN_SETSID) && setsid() < 0)
		goto fail;
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL); /* EINVAL for SIGKILL/SIGSTOP/reserved: fine */
	(void)sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		goto fail;
	if (p->cwd_fd >= 0 && fchdir(p->cwd_fd) < 0)
		goto fail;
	/* Received fds are >= 3 (the daemon keeps 0-2 open), so no dup2
	 * clobbers a source still needed; dup2 clears FD_CLOEXEC on the
	 * copies (and keeps a descriptor already in place as it is). */
	for (int i = 0; i < 3; i++)
		if (p->fds[i] != i && dup2(p->fds[i], i) < 0)
			goto fail;
	/* File fds on 3, 4, ...: their sources are numbered above that
	 * range (toolrun.c, reap.c), so none is overwritten before it is
	 * copied. */
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
	(void)!write(c->errfd, &e, sizeof(e));
	_exit(127);
}

int spawn_exec(const struct spawn_params *p, unsigned flags, pid_t *ret_pid)
{
	struct exec_child c = { .p = p, .flags = flags, .parent = getpid() };
	_cleanup_close_ int rd = -1, wr = -1;
	sigset_t all, old;
	char *stack;
	int pfd[2], e = 0, cflags = CLONE_VM | CLONE_VFORK | SIGCHLD;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	rd = pfd[0];
	wr = pfd[1];
	c.errfd = wr;
	if (flags & SPAWN_NEWNS) {
		spawn_format_id_maps(c.uid_map, c.gid_map, sizeof(c.uid_map));
		cflags |= CLONE_NEWUSER | CLONE_NEWPID;
	}
	stack = malloc(SPAWN_STACK);
	if (!stack)
		return -ENOMEM;
	/* No signal handler may run in the child while it borrows our
	 * memory: everything blocked from before the clone until the child
	 * has reset its dispositions; our own mask is back right after. */
	(void)sigfillset(&all);
	(void)pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = (pid_t)clone(exec_child_main, stack + SPAWN_STACK, cflags, &c);
	e = pid < 0 ? errno : 0;
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* CLONE_VFORK: the child has exec'd or exited; its stack is free. */
	free(stack);
	if (pid < 0)
		return -e;
	wr = safe_close(wr);
	do
		n = read(rd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != 0) {
		/* execve (or a step before it) failed: reap and report. */
		(void)waitpid(pid, NULL, 0);
		if (n == (ssize_t)sizeof(e) && (e & SPAWN_MAP_FAILED))
			return -EUSERS; /* the id maps: namespaces unusable here */
		return n == (ssize_t)sizeof(e) && e > 0 ? -e : -EIO;
	}
	*ret_pid = pid;
	return 0;
}

/* ---- the spawn server's protocol (reap.c is the other side) ---- */

int spawn_spec_encode(const struct spawn_params *p, int *ret_fd)
{
	struct spawn_spec_header h = { .magic = SPAWN_SPEC_MAGIC };
	_cleanup_close_ int fd = -1;
	size_t len = strlen(p->path) + 1;
	char *buf, *w;
	int r = 0;

	for (; p->argv[h.argc]; h.argc++)
		len += strlen(p->argv[h.argc]) + 1;
	for (; p->envp[h.envc]; h.envc++)
		len += strlen(p->envp[h.envc]) + 1;
	if (len > SPAWN_SPEC_MAX || h.argc == 0)
		return -E2BIG;
	h.strings_len = (uint32_t)len;
	buf = malloc(sizeof(h) + len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	w = buf + sizeof(h);
	w = stpcpy(w, p->path) + 1;
	for (uint32_t i = 0; i < h.argc; i++)
		w = stpcpy(w, p->argv[i]) + 1;
	for (uint32_t i = 0; i < h.envc; i++)
		w = stpcpy(w, p->envp[i]) + 1;
	fd = (int)memfd_create("sandbox-execd-spec", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		r = -errno;
	for (size_t off = 0; r >= 0 && off < sizeof(h) + len;) {
		ssize_t k = write(fd, buf + off, sizeof(h) + len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			r = k < 0 ? -errno : -EIO;
		else
			off += (size_t)k;
	}
	free(buf);
	/* Sealed: PID 1 reads exactly what was written here. */
	if (r >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		r = -errno;
	if (r < 0)
		return r;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int spawn_spec_decode(int fd, struct spawn_spec *ret)
{
	struct spawn_spec_header h;
	struct stat st;
	char *s, *end;
	size_t n = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < (off_t)sizeof(h) || st.st_size > (off_t)(sizeof(h) + SPAWN_SPEC_MAX))
		return -EBADMSG;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return -EIO;
	if (h.magic != SPAWN_SPEC_MAGIC || h.argc == 0 || h.strings_len != st.st_size - (off_t)sizeof(h) ||
	    h.argc > h.strings_len || h.envc > h.strings_len)
		return -EBADMSG;
	s = malloc(h.strings_len);
	ret->argv = calloc((size_t)h.argc + 1, sizeof(char *));
	ret->envp = calloc((size_t)h.envc + 1, sizeof(char *));
	ret->buf = s;
	if (!s || !ret->argv || !ret->envp)
		return -ENOMEM;
	if (pread(fd, s, h.strings_len, sizeof(h)) != (ssize_t)h.strings_len)
		return -EIO;
	end = s + h.strings_len;
	/* path, argv..., envp...: exactly 1 + argc + envc NUL-terminated
	 * strings filling the buffer. */
	for (char *q = s; q < end; n++) {
		char *z = memchr(q, '\0', (size_t)(end - q));

		if (!z)
			return -EBADMSG;
		if (n == 0)
			ret->path = q;
		else if (n <= h.argc)
			ret->argv[n - 1] = q;
		else if (n <= (size_t)h.argc + h.envc)
			ret->envp[n - 1 - h.argc] = q;
		else
			return -EBADMSG;
		q = z + 1;
	}
	if (n != 1 + (size_t)h.argc + h.envc || ret->path[0] != '/')
		return -EBADMSG;
	return 0;
}

void spawn_spec_done(struct spawn_spec *s)
{
	free(s->buf);
	free(s->argv);
	free(s->envp);
	*s = (struct spawn_spec){ 0 };
}

/* ---- the daemon's side of the server ---- */

static atomic_bool ns_unavailable;
static pthread_mutex_t server_lock = PTHREAD_MUTEX_INITIALIZER;
static int server_fd = -1;     /* our end of the request socket; -1: none */
static pid_t server_pid;       /* main thread only */
static pid_t standby_pid;      /* main thread only: the server's unused PID 1 */
static const char *server_path; /* the reaper binary */

static void ns_give_up(int err)
{
	if (!atomic_exchange(&ns_unavailable, true))
		log_warn("Cannot start commands in their own user and pid namespace (%s): "
			 "descendants that leave the process group (setsid) can outlive their "
			 "command, continuing",
			 strerror(err));
}

int spawn_server_start(const char *reaper_path, int *ret_pidfd)
{
	_cleanup_close_ int null_fd = -1, theirs = -1, mine = -1;
	char *argv[] = { (char *)"sandbox-execd-reap", (char *)"--serve", NULL };
	char *envp[] = { NULL };
	int sv[2], pidfd, r;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	mine = sv[0];
	theirs = sv[1];
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		return -errno;
	{
		/* Its own session (a terminal's ^C reaches the daemon, which
		 * then shuts down in order); it ends when our end of the
		 * socket closes, whichever thread closes it, or by the
		 * parent-death signal when the daemon dies. Its fd 3 is the
		 * socket. stderr stays ours for its diagnostics. */
		struct spawn_params p = {
			.path = reaper_path,
			.argv = argv,
			.envp = envp,
			.cwd_fd = -1,
			.fds = { null_fd, null_fd, 2 },
			.extra_fds = &theirs,
			.n_extra = 1,
		};

		r = spawn_exec(&p, SPAWN_SETSID | SPAWN_PDEATHSIG, &pid);
	}
	if (r < 0)
		return r;
	pidfd = pidfd_open_(pid);
	if (pidfd < 0) {
		r = -errno;
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		return r;
	}
	pthread_mutex_lock(&server_lock);
	safe_close(server_fd);
	server_fd = TAKE_FD(mine);
	server_pid = pid;
	server_path = reaper_path;
	pthread_mutex_unlock(&server_lock);
	*ret_pidfd = pidfd;
	return 0;
}

/* A standby PID 1 that will not be handed a request: ours to reap. Alive
 * or a zombie, it is our unreaped child, so its pid is still its own. */
static void reap_standby(pid_t pid)
{
	siginfo_t si;

	if (pid <= 0)
		return;
	(void)kill(pid, SIGKILL);
	(void)waitid(P_PID, (id_t)pid, &si, WEXITED);
}

int spawn_server_fd(void)
{
	return server_fd;
}

void spawn_server_event(void)
{
	struct spawn_msg m;

	while (recv(server_fd, &m, sizeof(m), MSG_DONTWAIT) == (ssize_t)sizeof(m)) {
		if (m.value <= 0)
			continue;
		if (m.kind == SPAWN_MSG_STANDBY) {
			standby_pid = (pid_t)m.value;
		} else if (m.kind == SPAWN_MSG_TAKEN) {
			if (standby_pid == (pid_t)m.value)
				standby_pid = 0;
		} else if (m.kind == SPAWN_MSG_STANDBY_DEAD) {
			if (standby_pid == (pid_t)m.value)
				standby_pid = 0;
			reap_standby((pid_t)m.value);
		}
	}
}

int spawn_server_restart(int pidfd, int *ret_pidfd)
{
	siginfo_t si = { 0 };

	pthread_mutex_lock(&server_lock);
	server_fd = safe_close(server_fd);
	pthread_mutex_unlock(&server_lock);
	(void)waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED);
	safe_close(pidfd);
	reap_standby(standby_pid);
	standby_pid = 0;
	log_warn("The spawn server (pid %d) ended (%s %d), starting it again", (int)server_pid,
		 si.si_code == CLD_EXITED ? "status" : "signal", si.si_status);
	return spawn_server_start(server_path, ret_pidfd);
}

void spawn_server_stop(int pidfd)
{
	pthread_mutex_lock(&server_lock);
	server_fd = safe_close(server_fd);
	pthread_mutex_unlock(&server_lock);
	if (pidfd >= 0) {
		siginfo_t si;

		/* Our end closed: it exits at once, and its standby with it. */
		(void)waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED);
		safe_close(pidfd);
	}
	reap_standby(standby_pid);
	standby_pid = 0;
}

/* Sends the command to the server and collects PID 1's pid (from the
 * server) and the start result (from PID 1). -EAGAIN: start it without
 * namespaces (they cannot be made here). */
static int server_spawn(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd)
{
	_cleanup_close_ int spec = -1, mine = -1, theirs = -1, pidfd = -1;
	int fds[SPAWN_SERVER_FDS], sv[2], n_fds = 0, r, started = -1;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * SPAWN_SERVER_FDS)];
	} ctl;
	uint32_t n_extra = (uint32_t)p->n_extra;
	struct iovec iov = { .iov_base = &n_extra, .iov_len = sizeof(n_extra) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b };
	struct cmsghdr *cm;
	struct timespec t0;
	pid_t pid = 0;

	if (p->n_extra > SPAWN_SERVER_FDS - 7)
		return -E2BIG;
	r = spawn_spec_encode(p, &spec);
	if (r < 0)
		return r;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	mine = sv[0];
	theirs = sv[1];
	/* reply channel, spec, cwd, stdio, file fds (reap.c's order) */
	fds[n_fds++] = theirs;
	fds[n_fds++] = spec;
	fds[n_fds++] = p->cwd_fd >= 0 ? p->cwd_fd : spec; /* placeholder: fchdir fails, unused */
	for (int i = 0; i < 3; i++)
		fds[n_fds++] = p->fds[i];
	for (size_t i = 0; i < p->n_extra; i++)
		fds[n_fds++] = p->extra_fds[i];
	if (p->cgroup_procs_fd > 2) {
		fds[n_fds++] = p->cgroup_procs_fd;
		n_extra |= SPAWN_SERVER_CGROUP;
	}
	memset(&ctl, 0, sizeof(ctl));
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n_fds);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n_fds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n_fds);
	if (p->cwd_fd < 0)
		n_extra |= SPAWN_SERVER_NO_CWD;
	pthread_mutex_lock(&server_lock);
	if (server_fd < 0)
		r = -ECHILD; /* between its end and its restart */
	else if (sendmsg(server_fd, &mh, MSG_NOSIGNAL) < 0)
		r = -errno;
	pthread_mutex_unlock(&server_lock);
	if (r < 0)
		return r == -EPIPE || r == -ECONNRESET ? -ECHILD : r;
	theirs = safe_close(theirs);
	spec = safe_close(spec);
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Two messages, in either order: the server's {PID, pid} (or
	 * {FAIL, errno} when it could not make the namespace) and PID 1's
	 * {STARTED, errno of the execve or 0} (or {MAPFAIL, errno}). */
	while (pid == 0 || started < 0) {
		struct pollfd pf = { .fd = mine, .events = POLLIN };
		struct spawn_msg m;
		struct timespec t;
		long long left;
		ssize_t k;

		(void)clock_gettime(CLOCK_MONOTONIC, &t);
		left = SPAWN_SERVER_TIMEOUT_MS - ((long long)(t.tv_sec - t0.tv_sec) * 1000 +
						  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(&pf, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		k = recv(mine, &m, sizeof(m), MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k != (ssize_t)sizeof(m)) {
			r = k < 0 ? -errno : -ECHILD; /* EOF: the server or PID 1 died */
			break;
		}
		if (m.kind == SPAWN_MSG_PID && m.value > 0 && pid == 0)
			pid = (pid_t)m.value;
		else if (m.kind == SPAWN_MSG_STARTED && m.value >= 0 && started < 0)
			started = m.value;
		else if (m.kind == SPAWN_MSG_FAIL && m.value > 0) {
			r = -m.value;
			break;
		} else if (m.kind == SPAWN_MSG_MAPFAIL && m.value >= 0) {
			r = -EUSERS;
			started = 0;
		} else {
			r = -EBADMSG;
			break;
		}
	}
	if (pid > 0) {
		siginfo_t si = { 0 };

		/* PID 1 is our child (CLONE_PARENT): reaped here, never by the
		 * server, so the pid cannot be reused before we are done. A
		 * pid that is not our child is refused and left alone. */
		pidfd = pidfd_open_(pid);
		if (pidfd < 0 ||
		    waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
			log_error("The spawn server reported pid %d, which is not our child", (int)pid);
			return -ECHILD;
		}
		if (r < 0 || started > 0) {
			spawn_kill_group(pid);
			(void)waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED);
		}
	}
	if (r == -EUSERS || r == -EPERM || r == -EINVAL || r == -ENOSPC || r == -EACCES) {
		ns_give_up(r == -EUSERS ? EPERM : -r);
		return -EAGAIN; /* the caller starts it without */
	}
	if (r < 0)
		return r;
	if (started > 0)
		return -started;
	*ret_pid = pid;
	*ret_pidfd = TAKE_FD(pidfd);
	return 0;
}

int spawn_start(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd)
{
	pid_t pid;
	int pidfd, r = -EAGAIN;

	if (!atomic_load(&ns_unavailable) && server_path)
		r = server_spawn(p, ret_pid, ret_pidfd);
	if (r != -EAGAIN)
		return r;
	/* Without namespaces: a session of its own (so its process group is
	 * its pid), killed with the worker thread that waits for it. */
	r = spawn_exec(p, SPAWN_SETSID | SPAWN_PDEATHSIG, &pid);
	if (r < 0)
		return r;
	pidfd = pidfd_open_(pid);
	if (pidfd < 0) {
		r = -errno;
		spawn_kill_group(pid);
		(void)waitpid(pid, NULL, 0);
		return r;
	}
	*ret_pid = pid;
	*ret_pidfd = pidfd;
	return 0;
}

bool spawn_namespaces_in_use(void)
{
	bool r;

	pthread_mutex_lock(&server_lock);
	r = server_fd >= 0 && !atomic_load(&ns_unavailable);
	pthread_mutex_unlock(&server_lock);
	return r;
}

void spawn_kill_group(pid_t pid)
{
	/* The command (or its PID 1) is a session and process-group leader,
	 * so -pid reaches it and every descendant that did not leave the
	 * group. Called only while the leader is alive or still a zombie
	 * (our child, not yet reaped), so the group id cannot have been
	 * recycled. ESRCH (group already empty) is fine. */
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
