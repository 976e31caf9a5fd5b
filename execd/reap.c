/* SPDX-License-Identifier: MIT */
/* sandbox-execd-reap: PID 1 of a command's own pid namespace (spawn.c).
 *
 *   sandbox-execd-reap PATH ARGV0 [ARGS...]
 *
 * Runs PATH with argv ARGV0 ARGS as its child (fds, cwd and environment as
 * given), reaps whatever is re-parented to it, and exits when that child
 * does: with its status, or 128+N when it died of signal N. Its own exit
 * ends the namespace, and the kernel kills every process still in it --
 * setsid and double-fork descendants included. It is not the command
 * itself because PID 1 ignores signals it has no handler for, its own
 * kill(getpid(), SIGTERM) and SIGPIPE included, which would change how
 * the command ends. Small and libc-only: it runs once per request. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	sigset_t all, old;
	int status = 0;
	pid_t child;

	if (argc < 3) {
		(void)fprintf(stderr, "usage: sandbox-execd-reap PATH ARGV0 [ARGS...]\n");
		return 127;
	}
	(void)sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, &old);
	child = fork();
	if (child < 0) {
		(void)fprintf(stderr, "sandbox-execd-reap: fork: %s\n", strerror(errno));
		return 127;
	}
	if (child == 0) {
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		execve(argv[1], argv + 2, environ);
		(void)fprintf(stderr, "sandbox-execd-reap: cannot execute '%s': %s\n", argv[1],
			      strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return 127; /* ECHILD: cannot happen before the child's end */
		}
		if (w == child) {
			status = st;
			break;
		}
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
