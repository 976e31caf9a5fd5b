/* SPDX-License-Identifier: MIT */
/* Process creation for sandbox-execd. posix_spawn (clone(CLONE_VM|
 * CLONE_VFORK) in glibc) is cheap even from a large, multi-threaded daemon,
 * reports execve() failures to the parent, and has file actions for
 * everything the child needs: fchdir into the verified cwd, the client's
 * stdio on 0-2, every other descriptor closed, a new session (so the command
 * and its descendants form one process group we can kill), default signal
 * dispositions and an empty signal mask. Never a shell. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
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

DEFINE_TRIVIAL_CLEANUP_FUNC(posix_spawn_file_actions_t *, posix_spawn_file_actions_destroy)
DEFINE_TRIVIAL_CLEANUP_FUNC(posix_spawnattr_t *, posix_spawnattr_destroy)

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int spawn_start(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	_cleanup_(posix_spawn_file_actions_destroyp) posix_spawn_file_actions_t *fap = NULL;
	_cleanup_(posix_spawnattr_destroyp) posix_spawnattr_t *attrp = NULL;
	sigset_t all, none;
	pid_t pid;
	int r, pidfd;

	r = posix_spawn_file_actions_init(&fa);
	if (r != 0)
		return -r;
	fap = &fa;
	r = posix_spawnattr_init(&attr);
	if (r != 0)
		return -r;
	attrp = &attr;

	r = posix_spawn_file_actions_addfchdir_np(&fa, p->cwd_fd);
	for (int i = 0; r == 0 && i < 3; i++)
		r = posix_spawn_file_actions_adddup2(&fa, p->fds[i], i);
	if (r == 0)
		r = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (r != 0)
		return -r;

	(void)sigfillset(&all);
	(void)sigemptyset(&none);
	r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF |
						    POSIX_SPAWN_SETSIGMASK);
	if (r == 0)
		r = posix_spawnattr_setsigdefault(&attr, &all);
	if (r == 0)
		r = posix_spawnattr_setsigmask(&attr, &none);
	if (r != 0)
		return -r;

	r = posix_spawn(&pid, p->path, &fa, &attr, p->argv, p->envp);
	if (r != 0)
		return -r;
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
