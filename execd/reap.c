/* SPDX-License-Identifier: MIT */
/* sandbox-execd-reap --serve: the spawn server of sandbox-execd (spawn.c
 * has the design). Fd 3 is a SOCK_SEQPACKET socket to the daemon; the
 * server ends when the daemon's end closes (or by its parent-death signal).
 *
 * For each request it forks PID 1 of new user and pid namespaces with
 * CLONE_PARENT (the daemon's child, which the daemon reaps and kills) and
 * reports its pid. PID 1 writes its identity maps, reads the command from
 * the sealed spec memfd, starts it with spawn_exec() and reports that
 * result, drops every descriptor but none, reaps whatever is re-parented to
 * it, and exits when the command does: with its status, or 128+N when it
 * died of signal N. Its exit ends the namespace, and the kernel kills every
 * process still in it -- setsid and double-fork descendants included. It
 * is not the command itself because PID 1 ignores signals it has no
 * handler for, its own kill(getpid(), SIGTERM) and SIGPIPE included, which
 * would change how the command ends.
 *
 * The server is single-threaded and small, so the fork is cheap; it holds
 * no secret (only the descriptors of requests in flight) and is not
 * dumpable, nor are its PID 1s (the command, after its execve, is). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "execd.h"
#include "macros.h"

#define REAP_SERVER_FD 3
#define REAP_STACK ((size_t)64 * 1024)

struct request {
	int fds[SPAWN_SERVER_FDS]; /* reply, spec, cwd, stdin, stdout, stderr, files */
	size_t n_fds;
	bool no_cwd;
	bool cgroup; /* fds[n_fds - 1] is the command's cgroup.procs */
	char uid_map[64], gid_map[64];
};

static void send_msg(int fd, enum spawn_msg_kind kind, int value)
{
	struct spawn_msg m = { .kind = (uint32_t)kind, .value = value };

	/* A daemon that gave up on the request is gone: nothing to do. */
	(void)send(fd, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static int exit_code(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* PID 1's first steps, before it knows its command: -errno (what failed,
 * or'ed into MAPFAIL for the id maps) or 0. */
static int pid1_setup(const struct request *q, bool *ret_map_failed)
{
	(void)close(REAP_SERVER_FD);
	/* A non-dumpable process's /proc/self files are root's: dumpable
	 * only while it writes its own id maps (nothing else runs in the
	 * namespace yet). */
	if (prctl(PR_SET_DUMPABLE, 1) < 0 || spawn_write_id_maps(q->uid_map, q->gid_map) < 0 ||
	    prctl(PR_SET_DUMPABLE, 0) < 0) {
		*ret_map_failed = true;
		return -errno;
	}
	/* Our parent is the daemon's main thread (CLONE_PARENT). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || setsid() < 0)
		return -errno;
	return 0;
}

/* PID 1 with its command: starts it, reports, waits, exits. */
static _noreturn_ void pid1_run(struct request *q)
{
	struct spawn_spec spec = { 0 };
	const int reply = q->fds[0];
	const size_t n_files = q->n_fds - 6 - (size_t)q->cgroup;
	sigset_t all;
	pid_t child;
	int r, status = 0;

	{
		/* The daemon may have died before the prctl(): its end of the
		 * reply channel is closed then, and nothing is started. */
		struct pollfd pf = { .fd = reply, .events = 0 };

		if (poll(&pf, 1, 0) != 0)
			_exit(127);
	}
	/* Nothing interrupts the wait below; the command gets the empty
	 * mask and default dispositions from spawn_exec(). */
	(void)sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, NULL);
	r = spawn_spec_decode(q->fds[1], &spec);
	/* spawn_exec() copies file fds onto 3, 4, ...: their sources must
	 * lie above that range (they do, received after fds 0-3, but this
	 * does not depend on it). */
	for (size_t i = 6; r >= 0 && i < q->n_fds; i++)
		if (q->fds[i] < (int)(3 + n_files)) {
			int fd = fcntl(q->fds[i], F_DUPFD_CLOEXEC, 3 + SPAWN_SERVER_FDS);

			if (fd < 0)
				r = -errno;
			else {
				(void)close(q->fds[i]);
				q->fds[i] = fd;
			}
		}
	if (r >= 0) {
		struct spawn_params p = {
			.path = spec.path,
			.argv = spec.argv,
			.envp = spec.envp,
			.cwd_fd = q->no_cwd ? -1 : q->fds[2],
			.fds = { q->fds[3], q->fds[4], q->fds[5] },
			.extra_fds = q->fds + 6,
			.n_extra = n_files,
			.cgroup_procs_fd = q->cgroup ? q->fds[q->n_fds - 1] : -1,
		};

		r = spawn_exec(&p, 0, &child);
	}
	send_msg(reply, SPAWN_MSG_STARTED, r < 0 ? -r : 0);
	/* The command holds its descriptors now; ours would keep its pipes
	 * open after it ends. */
	for (size_t i = 0; i < q->n_fds; i++)
		(void)close(q->fds[i]);
	spawn_spec_done(&spec);
	if (r < 0)
		_exit(r == -ENOENT ? 127 : 126);
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			_exit(127); /* ECHILD: cannot happen before the child's end */
		}
		if (w == child) {
			status = st;
			break;
		}
	}
	_exit(exit_code(status));
}

/* PID 1 of the command's namespaces, in a copy of the server that has its
 * request. */
static int pid1_main(void *arg)
{
	struct request *q = arg;
	bool map_failed = false;
	int r = pid1_setup(q, &map_failed);

	if (r < 0) {
		send_msg(q->fds[0], map_failed ? SPAWN_MSG_MAPFAIL : SPAWN_MSG_STARTED, -r);
		_exit(127);
	}
	pid1_run(q);
}

/* Receives one request from fd; 0 at the sender's end, -errno on a bad
 * one. */
static int receive(int fd, struct request *q)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * SPAWN_SERVER_FDS)];
	} ctl;
	uint32_t hdr = 0;
	struct iovec iov = { .iov_base = &hdr, .iov_len = sizeof(hdr) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			     .msg_controllen = sizeof(ctl.b) };
	ssize_t n;

	q->n_fds = 0;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t nf;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nf = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nf; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (q->n_fds < SPAWN_SERVER_FDS)
				q->fds[q->n_fds++] = got;
			else
				(void)close(got);
		}
	}
	q->no_cwd = (hdr & SPAWN_SERVER_NO_CWD) != 0;
	q->cgroup = (hdr & SPAWN_SERVER_CGROUP) != 0;
	hdr &= ~(SPAWN_SERVER_NO_CWD | SPAWN_SERVER_CGROUP);
	if (n != (ssize_t)sizeof(hdr) || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) ||
	    q->n_fds < 6 + (size_t)q->cgroup || hdr != q->n_fds - 6 - (size_t)q->cgroup)
		return -EBADMSG;
	return 1;
}

/* ---- the standby: PID 1 made before its request ----
 * The fork, the id maps and the new session of the next command's PID 1
 * happen while the daemon still waits for the decision record's fdatasync:
 * the server keeps one PID 1 ready, waiting on a socket of its own, and
 * hands it the next request. The daemon learns each standby's pid
 * (SPAWN_MSG_STANDBY on the server socket) and when it was taken
 * (SPAWN_MSG_TAKEN), so one that dies unused (SPAWN_MSG_STANDBY_DEAD, or
 * the server's end) is reaped by the daemon, whose child it is. */

static char pid1_stack[REAP_STACK] __attribute__((aligned(16)));

struct standby {
	pid_t pid; /* 0: none */
	int fd;    /* our end of its socket */
	struct request q; /* in the standby: its request */
	int their_fd;
};

static int standby_main(void *arg)
{
	struct standby *sb = arg;
	bool map_failed = false;
	int r;

	(void)close(sb->fd);
	/* A failed setup ends it: the server sees its socket closed at the
	 * hand-over and starts that command's PID 1 itself. */
	if (pid1_setup(&sb->q, &map_failed) < 0)
		_exit(127);
	r = receive(sb->their_fd, &sb->q);
	(void)close(sb->their_fd);
	if (r <= 0)
		_exit(0); /* the server ended before a request came */
	pid1_run(&sb->q);
}

static void make_standby(struct standby *sb, const struct request *tmpl)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	sb->fd = sv[0];
	sb->their_fd = sv[1];
	memcpy(sb->q.uid_map, tmpl->uid_map, sizeof(sb->q.uid_map));
	memcpy(sb->q.gid_map, tmpl->gid_map, sizeof(sb->q.gid_map));
	pid = (pid_t)clone(standby_main, pid1_stack + sizeof(pid1_stack),
			   CLONE_PARENT | CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD, sb);
	(void)close(sv[1]);
	if (pid < 0) {
		(void)close(sv[0]);
		return;
	}
	sb->pid = pid;
	send_msg(REAP_SERVER_FD, SPAWN_MSG_STANDBY, (int)pid);
}

/* Passes the request (header and every fd) on to the standby. */
static int forward(const struct standby *sb, const struct request *q)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * SPAWN_SERVER_FDS)];
	} ctl;
	uint32_t hdr = (uint32_t)(q->n_fds - 6 - (size_t)q->cgroup) |
		       (q->no_cwd ? SPAWN_SERVER_NO_CWD : 0) | (q->cgroup ? SPAWN_SERVER_CGROUP : 0);
	struct iovec iov = { .iov_base = &hdr, .iov_len = sizeof(hdr) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * q->n_fds) };
	struct cmsghdr *c;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * q->n_fds);
	memcpy(CMSG_DATA(c), q->fds, sizeof(int) * q->n_fds);
	return sendmsg(sb->fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static int serve(void)
{
	struct standby sb = { .fd = -1 };
	struct request q;

	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return 127;
	spawn_format_id_maps(q.uid_map, q.gid_map, sizeof(q.uid_map));
	make_standby(&sb, &q);
	for (;;) {
		int r = receive(REAP_SERVER_FD, &q);
		pid_t pid = -1;

		if (r == 0)
			return 0; /* the daemon closed its end (the standby sees ours close) */
		if (r < 0 && r != -EBADMSG)
			return 127;
		if (r > 0 && sb.pid > 0) {
			send_msg(REAP_SERVER_FD, SPAWN_MSG_TAKEN, (int)sb.pid);
			if (forward(&sb, &q) == 0)
				pid = sb.pid;
			else
				send_msg(REAP_SERVER_FD, SPAWN_MSG_STANDBY_DEAD, (int)sb.pid);
			(void)close(sb.fd);
			sb.pid = 0;
			sb.fd = -1;
		}
		if (r > 0 && pid < 0) {
			/* No standby: a copy of this process runs pid1_main on
			 * its own copy of the stack (no CLONE_VM). */
			pid = (pid_t)clone(pid1_main, pid1_stack + sizeof(pid1_stack),
					   CLONE_PARENT | CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD, &q);
			if (pid < 0)
				send_msg(q.fds[0], SPAWN_MSG_FAIL, errno);
		}
		if (pid > 0)
			send_msg(q.fds[0], SPAWN_MSG_PID, (int)pid);
		for (size_t i = 0; i < q.n_fds; i++)
			(void)close(q.fds[i]);
		if (r > 0 && sb.pid == 0)
			make_standby(&sb, &q);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "--serve") != 0) {
		(void)fprintf(stderr, "usage: sandbox-execd-reap --serve (started by sandbox-execd)\n");
		return 127;
	}
	return serve();
}
