/* SPDX-License-Identifier: MIT */
/* exec: asks a program of the user's choice, in any language. The request
 * JSON (lib/authzjson.h) goes to its stdin, one decision JSON document comes
 * back on its stdout. The program is checked at open (absolute, a regular
 * executable file owned by this user or root, writable by nobody else),
 * runs without a shell in a clean environment as its own process group, and
 * is killed with the whole group when exec_timeout_ms passes. Non-zero
 * exit, death by signal, a timeout, too much output, "pending" or anything
 * that is not a valid decision is a denial. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "authzjson.h"
#include "backend.h"
#include "backend_ops.h"
#include "execd.h"
#include "log.h"
#include "monoclock.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define EXEC_MAX_HOME 4096

struct backend {
	char *program;
	char *name; /* basename, for rule ids */
	unsigned timeout_ms;
	char home[EXEC_MAX_HOME + 8];
	char *envp[4];
};

/* Signed, for deadline arithmetic (lib/monoclock.h reads the clock). */
static long long now_ms(void)
{
	return (long long)monoclock_ms();
}

static int exec_open(const struct backend_config *cfg, struct backend **ret, char *reterr,
		     size_t reterr_len)
{
	struct backend *b;
	struct stat st;
	const char *home, *base;

	if (!cfg->exec_program || cfg->exec_program[0] != '/') {
		(void)snprintf(reterr, reterr_len,
			       "backend 'exec' needs an absolute program path (exec_program = PATH)");
		return -EINVAL;
	}
	if (stat(cfg->exec_program, &st) < 0) {
		int r = negative_errno();

		(void)snprintf(reterr, reterr_len, "exec_program '%s': %s", cfg->exec_program,
			       strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode) || access(cfg->exec_program, X_OK) < 0) {
		(void)snprintf(reterr, reterr_len, "exec_program '%s' is not an executable file",
			       cfg->exec_program);
		return -EACCES;
	}
	/* Whoever can rewrite the program decides every request. */
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		(void)snprintf(reterr, reterr_len,
			       "exec_program '%s' must be owned by this user (or root) and not group "
			       "or world writable",
			       cfg->exec_program);
		return -EPERM;
	}
	if (cfg->exec_timeout_ms == 0) {
		(void)snprintf(reterr, reterr_len, "exec_timeout_ms must be positive");
		return -EINVAL;
	}
	b = calloc(1, sizeof(*b));
	if (!b || !(b->program = strdup(cfg->exec_program))) {
		free(b);
		(void)snprintf(reterr, reterr_len, "out of memory");
		return -ENOMEM;
	}
	base = strrchr(b->program, '/');
	b->name = b->program + (base ? (size_t)(base - b->program) + 1 : 0);
	b->timeout_ms = cfg->exec_timeout_ms;
	/* A clean, fixed environment: the program learns everything from the
	 * request on stdin, not from whatever the daemon inherited. HOME only
	 * so that interpreters find their user configuration. */
	home = secure_getenv("HOME");
	if (home && home[0] == '/' && strlen(home) < EXEC_MAX_HOME)
		(void)snprintf(b->home, sizeof(b->home), "HOME=%s", home);
	else
		(void)snprintf(b->home, sizeof(b->home), "HOME=/");
	b->envp[0] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	b->envp[1] = (char *)"LC_ALL=C.UTF-8";
	b->envp[2] = b->home;
	b->envp[3] = NULL;
	*ret = b;
	return 0;
}

/* A pipe end above 2, so that dup2() onto 0 and 1 in the child cannot
 * clobber the other end. */
static int fd_above_stdio(int fd)
{
	int n;

	if (fd > 2)
		return fd;
	n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	(void)close(fd);
	return n < 0 ? negative_errno() : n;
}

static int spawn_program(const struct backend *b, int in_fd, int out_fd, pid_t *ret_pid,
			 int *ret_pidfd)
{
	char *argv[] = { b->program, NULL };
	/* stderr stays the daemon's: the program's diagnostics land in its
	 * log. The daemon's one spawn path (execd/spawn.c): a session of its
	 * own, everything else closed, default signals, empty mask. */
	struct spawn_params p = { .path = b->program, .argv = argv, .envp = b->envp,
				  .cwd_fd = -1, .fds = { in_fd, out_fd, 2 } };

	return spawn_start(&p, ret_pid, ret_pidfd);
}

/* Kills the program's whole process group (it is a session leader, and
 * still at least a zombie here, so the group id cannot have been reused)
 * and reaps it through its pidfd, so no other waiter can steal it. */
static int kill_and_reap(pid_t pid, int pidfd, siginfo_t *si)
{
	(void)kill(-pid, SIGKILL);
	memset(si, 0, sizeof(*si));
	for (;;) {
		if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, si, WEXITED) == 0)
			return 0;
		if (errno != EINTR)
			return negative_errno();
	}
}

/* Feeds req to the program and collects up to max bytes of its stdout
 * before the deadline. -ETIMEDOUT, -EMSGSIZE, -errno. */
static int exchange(int *wfdp, const char *req, size_t req_len, int rfd, int pidfd, char *out,
		    size_t max, size_t *ret_len, long long deadline)
{
	int wfd = *wfdp;

	size_t written = 0, len = 0;
	bool eof = false;

	while (!eof) {
		struct pollfd p[2] = { { .fd = rfd, .events = POLLIN },
				       { .fd = wfd, .events = POLLOUT } };
		long long left = deadline - now_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(p, wfd >= 0 ? 2 : 1, (int)(left > 60000 ? 60000 : left));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (wfd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(wfd, req + written, req_len - written);

			if (w < 0 && errno != EAGAIN && errno != EINTR) {
				/* EPIPE: the program does not read its input;
				 * its answer (or exit status) still counts. */
				wfd = -1;
			} else if (w > 0) {
				written += (size_t)w;
			}
			if (wfd >= 0 && written == req_len)
				wfd = -1;
			if (wfd < 0) {
				/* EOF on its stdin: most programs read to the end
				 * before they answer. */
				*wfdp = safe_close(*wfdp);
				continue;
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r;

			if (len >= max)
				return -EMSGSIZE;
			r = read(rfd, out + len, max - len);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r < 0)
				return negative_errno();
			if (r == 0)
				eof = true;
			len += (size_t)r;
		}
	}
	/* The answer is complete; the program must also exit in time. */
	for (;;) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		long long left = deadline - now_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		if (n > 0)
			break;
	}
	*ret_len = len;
	return 0;
}

static int exec_decide(struct backend *b, const struct authz_request *req,
		       struct authz_decision *d)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_(backend_answer_freep) char *out = NULL;
	_cleanup_close_ int in_r = -1, in_w = -1, out_r = -1, out_w = -1, pidfd = -1;
	struct authzjson_answer a;
	char rule[AUTHZ_MAX_RULE];
	const char *why = NULL;
	sigset_t pipe_set, old;
	struct timespec zero = { 0, 0 };
	size_t json_len = 0, out_len = 0;
	long long deadline = now_ms() + b->timeout_ms;
	siginfo_t si;
	pid_t pid = 0;
	int fds[2], r, k;

	(void)snprintf(rule, sizeof(rule), "exec:%s", b->name);
	authz_decision_clear(d);
	r = authzjson_encode_request(req, &json, &json_len);
	if (r < 0)
		return backend_deny(d, r, rule, "denied: the request could not be encoded");
	if (pipe2(fds, O_CLOEXEC) < 0)
		return backend_deny(d, negative_errno(), rule, "denied: cannot run the policy program");
	in_r = fd_above_stdio(fds[0]);
	in_w = fds[1];
	if (pipe2(fds, O_CLOEXEC) < 0)
		return backend_deny(d, negative_errno(), rule, "denied: cannot run the policy program");
	out_r = fds[0];
	out_w = fd_above_stdio(fds[1]);
	if (in_r < 0 || out_w < 0)
		return backend_deny(d, -EMFILE, rule, "denied: cannot run the policy program");
	if (fcntl(in_w, F_SETFL, O_NONBLOCK) < 0 || fcntl(out_r, F_SETFL, O_NONBLOCK) < 0)
		return backend_deny(d, negative_errno(), rule, "denied: cannot run the policy program");

	r = spawn_program(b, in_r, out_w, &pid, &pidfd);
	if (r < 0) {
		log_error("Failed to start policy program '%s': %s", b->program, strerror(-r));
		return backend_deny(d, r, rule, "denied: the policy program could not be started");
	}
	in_r = safe_close(in_r);
	out_w = safe_close(out_w);
	out = malloc(AUTHZJSON_MAX_DECISION + 1);
	if (!out) {
		(void)kill_and_reap(pid, pidfd, &si);
		return backend_deny(d, -ENOMEM, rule, "denied: out of memory");
	}

	/* A program that exits without reading its input makes our write()
	 * raise SIGPIPE; keep it pending on this thread and discard it rather
	 * than depend on the process-wide disposition. */
	(void)sigemptyset(&pipe_set);
	(void)sigaddset(&pipe_set, SIGPIPE);
	(void)pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	r = exchange(&in_w, json, json_len, out_r, pidfd, out, AUTHZJSON_MAX_DECISION, &out_len,
		     deadline);
	in_w = safe_close(in_w);
	while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
		;
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);

	k = kill_and_reap(pid, pidfd, &si);
	if (r == -ETIMEDOUT) {
		log_warn("Policy program '%s' did not answer within %u ms; killed, denying",
			 b->program, b->timeout_ms);
		return backend_deny(d, r, rule, "denied: the policy program timed out");
	}
	if (r == -EMSGSIZE)
		return backend_deny(d, r, rule, "denied: the policy program's answer is too large");
	if (r < 0 || k < 0)
		return backend_deny(d, r < 0 ? r : k, rule,
				    "denied: the policy program could not be run");
	if (si.si_code != CLD_EXITED || si.si_status != 0) {
		log_warn("Policy program '%s' %s %d, denying", b->program,
			 si.si_code == CLD_EXITED ? "exited with status" : "was killed by signal",
			 si.si_status);
		return backend_deny(d, -EPROTO, rule, "denied: the policy program failed");
	}
	r = authzjson_parse_decision(out, out_len, &a, d, &why);
	if (r < 0) {
		log_warn("Policy program '%s' gave a malformed answer (%s), denying", b->program,
			 why ? why : "?");
		return backend_deny(d, r, rule, "denied: the policy program's answer is malformed");
	}
	if (a.state == AUTHZJSON_PENDING)
		return backend_deny(d, -EPROTO, rule,
				    "denied: the exec backend does not poll; the policy program must "
				    "answer approved or denied");
	(void)snprintf(d->rule, sizeof(d->rule), "%s", rule);
	if (!d->reason[0])
		(void)snprintf(d->reason, sizeof(d->reason), "%s by the policy program",
			       d->verdict == AUTHZ_ALLOW ? "approved" : "denied");
	return 0;
}

static void exec_close(struct backend *b)
{
	if (!b)
		return;
	free(b->program);
	free(b);
}

const struct backend_ops backend_exec_ops = {
	.name = "exec",
	.open = exec_open,
	.decide = exec_decide,
	.close = exec_close,
};
