/* SPDX-License-Identifier: MIT */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "envclean.h"
#include "exitcodes.h"
#include "fail.h"
#include "log.h"
#include "macros.h"
#include "privdrop.h"
#include "seccomp_filter.h"

enum spawn_step {
	SPAWN_STEP_SESSION,
	SPAWN_STEP_PRIVDROP,
	SPAWN_STEP_VERIFY,
	SPAWN_STEP_SECCOMP,
	SPAWN_STEP_EXEC,
	SPAWN_STEP_MAX,
};

static const char *const step_names[SPAWN_STEP_MAX] = {
	[SPAWN_STEP_SESSION] = "spawn",
	[SPAWN_STEP_PRIVDROP] = "privdrop",
	[SPAWN_STEP_VERIFY] = "verify",
	[SPAWN_STEP_SECCOMP] = "seccomp",
	[SPAWN_STEP_EXEC] = "exec",
};

/* One write, smaller than PIPE_BUF, so it arrives whole. */
struct spawn_report {
	int step;
	int error; /* positive errno */
	char msg[PRIVDROP_MSG_MAX];
};

static int step_exit_code(enum spawn_step step, int error)
{
	switch (step) {
	case SPAWN_STEP_SESSION:
		return EXIT_INIT_SPAWN;
	case SPAWN_STEP_PRIVDROP:
	case SPAWN_STEP_VERIFY:
		return EXIT_INIT_PRIVDROP;
	case SPAWN_STEP_SECCOMP:
		return EXIT_INIT_SECCOMP;
	case SPAWN_STEP_EXEC:
		return error == ENOENT || error == ENOTDIR ? EXIT_NOT_FOUND : EXIT_CANNOT_EXECUTE;
	case SPAWN_STEP_MAX:
	default:
		return EXIT_INIT_INTERNAL;
	}
}

_noreturn_ static void child_fail(int fd, enum spawn_step step, int error, const char *msg)
{
	struct spawn_report rep = {.step = (int)step, .error = error < 0 ? -error : error};

	(void)snprintf(rep.msg, sizeof(rep.msg), "%s", msg);
	/* If this write fails PID 1 sees EOF and a non-zero exit status: it
	 * still fails closed (see spawn_agent). */
	(void)!write(fd, &rep, sizeof(rep));
	_exit(step_exit_code(step, rep.error));
}

/* The SIGHUP the kernel sends us on TIOCNOTTY is consumed, not forwarded.
 * Never fails: without a terminal the agent simply runs without one. */
static void spawn_release_tty(void)
{
	sigset_t hup;
	struct timespec zero = {0, 0};

	if (!isatty(STDIN_FILENO))
		return;
	if (getsid(0) != getpid() || tcgetsid(STDIN_FILENO) != getpid())
		return;
	/* As session leader, TIOCNOTTY sends SIGHUP and SIGCONT to our own
	 * foreground group: us. SIGHUP is blocked (signalfd), so take it out
	 * of the queue before it could be forwarded to the agent. */
	if (ioctl(STDIN_FILENO, TIOCNOTTY) < 0) {
		log_warn_errno(-errno, "Cannot release the terminal: %s, the agent gets no job control", strerror(errno));
		return;
	}
	if (sigemptyset(&hup) < 0 || sigaddset(&hup, SIGHUP) < 0)
		return;
	while (sigtimedwait(&hup, NULL, &zero) == SIGHUP)
		;
}

/* execve() of argv[0], searched in envp's PATH when it has no '/'. Like
 * a shell: a PATH entry that cannot be searched, or lacks the file (or
 * holds something other than a regular file), is skipped; the result is ENOENT if no entry has the file, else the error of
 * the first one that does (EACCES, ENOEXEC: never a /bin/sh fallback).
 * Returns a negative errno (only if nothing was executed). */
static int exec_command(char **argv, char **envp)
{
	const char *path = ENVCLEAN_DEFAULT_PATH;
	char full[PATH_MAX];
	int first = 0;

	if (strchr(argv[0], '/')) {
		(void)execve(argv[0], argv, envp);
		return -errno;
	}
	for (char **e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	for (const char *p = path; *p;) {
		const char *colon = strchrnul(p, ':');
		size_t dl = (size_t)(colon - p);
		struct stat st;

		if (dl > 0 && dl + 1 + strlen(argv[0]) < sizeof(full)) {
			memcpy(full, p, dl);
			full[dl] = '/';
			strcpy(full + dl + 1, argv[0]);
			/* Like a shell, only regular files are candidates. */
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
				(void)execve(full, argv, envp);
				if (first == 0)
					first = errno;
			}
		}
		p = *colon ? colon + 1 : colon;
	}
	return first ? -first : -ENOENT;
}

/* The child, after fork: never returns. */
_noreturn_ static void child_run(const struct spawn_plan *p, char **envp, int fd, int go_fd)
{
	char msg[PRIVDROP_MSG_MAX] = "";
	int r;

	/* A session of its own, so the terminal's job control (Ctrl-C, Ctrl-Z)
	 * acts on the agent's process groups, never on PID 1. */
	if (setsid() < 0)
		child_fail(fd, SPAWN_STEP_SESSION, -errno, "setsid failed");
	if (isatty(STDIN_FILENO)) {
		if (ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0)
			/* EPERM: the terminal belongs to a session outside ours
			 * (e.g. run from a shell without a container pty). The
			 * agent still runs, without job control. */
			log_warn_errno(-errno, "Cannot make stdin the agent's controlling terminal: %s, continuing without", strerror(errno));
		else if (tcsetpgrp(STDIN_FILENO, getpid()) < 0)
			log_warn_errno(-errno, "Cannot make the agent the terminal's foreground group: %s, continuing", strerror(errno));
	}
	if (sigprocmask(SIG_SETMASK, p->sigmask, NULL) < 0)
		child_fail(fd, SPAWN_STEP_SESSION, -errno, "cannot restore the signal mask");
	/* Every fd above 2 closes at execve (the report pipe among them, which
	 * must stay open until then; the signalfd and others are O_CLOEXEC
	 * already, this catches anything inherited without it). */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		child_fail(fd, SPAWN_STEP_SESSION, -errno, "close_range failed");

	r = privdrop_child(p->uid, p->gid, msg, sizeof(msg));
	if (r < 0)
		child_fail(fd, SPAWN_STEP_PRIVDROP, r, msg);
	r = privdrop_verify(p->uid, p->gid, msg, sizeof(msg));
	if (r < 0)
		child_fail(fd, SPAWN_STEP_VERIFY, r, msg);
	/* Seccomp last: nothing above needs a syscall it forbids, and a filter
	 * loaded earlier would have to allow the privilege-drop calls. */
	if (p->filter) {
		r = seccomp_load_filter(p->filter);
		if (r < 0)
			child_fail(fd, SPAWN_STEP_SECCOMP, r, "loading the filter failed");
	}
	/* Not before PID 1 says so (it drops its own start-up capabilities
	 * first): one byte, or PID 1 gave up (EOF) and kills us. */
	if (go_fd >= 0) {
		ssize_t k;
		char c;

		do
			k = read(go_fd, &c, 1);
		while (k < 0 && errno == EINTR);
		if (k != 1)
			child_fail(fd, SPAWN_STEP_PRIVDROP, k < 0 ? -errno : -EPIPE, "PID 1 did not release the agent");
		(void)close(go_fd);
	}
	r = exec_command(p->argv, envp);
	(void)snprintf(msg, sizeof(msg), "'%s'", p->argv[0]);
	child_fail(fd, SPAWN_STEP_EXEC, r, msg);
}

static void safe_close_pair(int p[2])
{
	for (size_t i = 0; i < 2; i++)
		if (p[i] >= 0)
			(void)close(p[i]);
}

int spawn_agent(const struct spawn_plan *plan, pid_t *ret_pid, int *ret_exit)
{
	extern char **environ;
	const struct envclean_user user = {.name = plan->user, .home = plan->home, .shell = plan->shell};
	_cleanup_free_ char **envp = NULL;
	struct spawn_report rep;
	int fds[2], go[2] = {-1, -1}, status = 0, r;
	ssize_t n;
	pid_t pid;

	r = envclean_build(environ, &user, &envp);
	if (r < 0) {
		*ret_exit = EXIT_INIT_SPAWN;
		return init_fail("spawn", r, "cannot build the agent's environment");
	}
	spawn_release_tty();
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*ret_exit = EXIT_INIT_SPAWN;
		return init_fail("spawn", -errno, "cannot create the report pipe");
	}
	if (plan->before_exec && pipe2(go, O_CLOEXEC) < 0) {
		r = -errno;
		(void)close(fds[0]);
		(void)close(fds[1]);
		*ret_exit = EXIT_INIT_SPAWN;
		return init_fail("spawn", r, "cannot create the release pipe");
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		(void)close(fds[0]);
		(void)close(fds[1]);
		safe_close_pair(go);
		*ret_exit = EXIT_INIT_SPAWN;
		return init_fail("spawn", r, "fork failed");
	}
	if (pid == 0) {
		(void)close(fds[0]);
		if (go[1] >= 0)
			(void)close(go[1]);
		child_run(plan, envp, fds[1], go[0]);
	}
	(void)close(fds[1]);
	if (plan->before_exec) {
		static const char go_byte = 'g';
		int code = EXIT_INIT_INTERNAL;

		(void)close(go[0]);
		r = plan->before_exec(plan->userdata, &code);
		if (r < 0) {
			/* The child has not exec'd: the agent never ran. */
			(void)kill(pid, SIGKILL);
			(void)close(go[1]);
			(void)close(fds[0]);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			*ret_exit = code;
			return r;
		}
		/* EPIPE (SIGPIPE is blocked) when the child failed already: its
		 * report is read below. */
		(void)!write(go[1], &go_byte, 1);
		(void)close(go[1]);
	}
	do
		n = read(fds[0], &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	r = n < 0 ? -errno : 0;
	(void)close(fds[0]);
	if (n == 0) {
		*ret_pid = pid;
		return 0;
	}
	/* A report, a short read or a read error: the agent did not start as
	 * planned. Reap the child (it exits right after reporting). */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(rep) || rep.step < 0 || rep.step >= SPAWN_STEP_MAX) {
		*ret_exit = EXIT_INIT_SPAWN;
		return init_fail("spawn", r, "the agent's child failed without a report");
	}
	rep.msg[sizeof(rep.msg) - 1] = '\0';
	*ret_exit = step_exit_code((enum spawn_step)rep.step, rep.error);
	return init_fail(step_names[rep.step], rep.error ? -rep.error : 0, "%s", rep.msg);
}
