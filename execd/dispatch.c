/* SPDX-License-Identifier: MIT */
/* One request, start to end, in its own worker thread:
 *   per-container limit -> receive the frame and its fds -> decode
 *   (lib/wire.c) -> authenticate -> tool table -> map and open the cwd ->
 *   backend decide -> audit the decision (durable)
 *   -> spawn -> wait (command exit, client hang-up, timeout, shutdown) ->
 *   audit the end -> reply.
 * Every refusal after the frame arrived, and the per-container `busy` that
 * comes before it, is audited as a "deny" decision with the wire error's
 * name. Nothing here runs a shell or consults PATH. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "execd.h"
#include "gitrelayd.h"
#include "log.h"
#include "macros.h"
#include "pathmap.h"
#include "sha256.h"
#include "toolgrammar.h"

#define DISPATCH_MAX_ENV (64 + AUTHZ_MAX_ENV)
#define DISPATCH_REPLY_TIMEOUT_MS 2000
#define DISPATCH_MAX_DRAIN ((size_t)256 * 1024) /* unread bytes discarded before close */

/* Variables passed from the daemon's own environment to commands: identity,
 * locale, and the credential channels a host tool legitimately uses (ssh
 * agent, session bus for keyrings, cloud profile selection). Everything
 * else, including whatever the daemon inherited, is dropped. */
static const char *const env_allowlist[] = {
	"HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
	"SSH_AUTH_SOCK", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "DBUS_SESSION_BUS_ADDRESS",
	"AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "KUBECONFIG",
};
/* Fixed: never from the request or the daemon's environment. The command
 * may hold the agent's terminal on its stdio, so nothing interactive may
 * start on the host: a pager (less runs `!cmd`), an editor (vi runs `:!cmd`),
 * a credential prompt. Backends cannot replace these (lib/authz.c refuses
 * the names). git is not a tool any more: it goes through the relay
 * (execd/gitrelay.c), which builds its own environment. */
static const char *const env_fixed[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"PAGER=cat",
	"MANPAGER=cat",
	"EDITOR=false",
	"VISUAL=false",
	"LESSSECURE=1",
	"GH_PAGER=cat",
	"GH_EDITOR=false",
	"GH_PROMPT_DISABLED=1",
	"GH_NO_UPDATE_NOTIFIER=1",
	"KUBE_EDITOR=false",
	"PSQL_PAGER=cat",
	"AWS_PAGER=",
	"TF_INPUT=0",
};
_Static_assert(ELEMENTSOF(env_allowlist) + ELEMENTSOF(env_fixed) + 4 <= DISPATCH_MAX_ENV - AUTHZ_MAX_ENV,
	       "DISPATCH_MAX_ENV too small");

struct req_state {
	struct execd *d;
	int conn;
	struct ucred cred;
	uint64_t peer_key;
	bool counted; /* holds a place (sched.c) until release_limits() */
	bool authenticated; /* refusals before this are counted, not recorded one by one */
	char id[EXECD_REQUEST_ID_LEN];
	struct timespec t0;     /* request accepted: frame deadline */
	struct timespec t_exec; /* command started: its timeout and duration */
	struct wire_header hdr;
	uint8_t *frame; /* the whole frame, header included (frame_len bytes) */
	size_t frame_len;
	struct wire_request req;
	const char **argv; /* tool + args, NULL-terminated; strings owned by req */
	size_t argc;
	/* argv as the audit log and the backend see it (a psql password as
	 * "***"), NULL: argv itself. shown_arg is the one string it owns. */
	const char **shown_argv;
	char *shown_arg;
	const char *cwd;         /* container cwd: req.cwd */
	int fds[WIRE_REQUEST_FDS];
	size_t n_fds;
	size_t map_index;
	char rel[PATHMAP_MAX_PATH];
	char host_cwd[2 * PATHMAP_MAX_PATH];
	int cwd_fd;
	char *destination;
	const struct psqltarget *psql; /* psql's target (in tr.plan), else NULL */
	const char *tool_path;
	struct toolrun tr; /* private directory, file arguments (toolrun.c) */
	struct cgroup_cmd cg; /* the command's own cgroup, where there is one */
};

static const char *const *shown_argv(const struct req_state *s)
{
	return s->shown_argv ? s->shown_argv : s->argv;
}

static long long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	(void)clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			if (poll(&pfd, 1, DISPATCH_REPLY_TIMEOUT_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void send_reply(int fd, const struct wire_reply *rep)
{
	uint8_t buf[WIRE_HEADER_SIZE + 64 + WIRE_MAX_MESSAGE];
	size_t len;

	if (wire_encode_reply(rep, buf, sizeof(buf), &len) < 0)
		return;
	/* A client that went away does not get its reply; nothing to do. */
	(void)send_all(fd, buf, len);
}

void dispatch_reply_error(int fd, enum wire_error e, const char *msg)
{
	struct wire_reply rep = { .kind = WIRE_REPLY_ERROR, .error = e };
	size_t n = strlen(msg);

	/* Truncate on a character boundary so the message stays UTF-8. */
	if (n >= sizeof(rep.message)) {
		n = sizeof(rep.message) - 1;
		while (n > 0 && ((unsigned char)msg[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(rep.message, msg, n);
	rep.message[n] = '\0';
	send_reply(fd, &rep);
}

/* Receives exactly n bytes (n > 0) before the deadline. The first call may
 * carry SCM_RIGHTS; fds are collected into s->fds. fds arriving later, or any
 * other control message, make the frame malformed. */
static int recv_exact(struct req_state *s, uint8_t *buf, size_t n, const struct timespec *t0,
		      unsigned timeout_ms, bool accept_fds)
{
	size_t got = 0;

	while (got < n) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int) * WIRE_MAX_FDS)];
		} ctl;
		struct iovec iov = { .iov_base = buf + got, .iov_len = n - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
				     .msg_controllen = sizeof(ctl.b) };
		long long left = (long long)timeout_ms - elapsed_ms(t0);
		ssize_t k;
		bool bad = false;

		if (left <= 0)
			return -ETIMEDOUT;
		/* The client sends its frame right after connect(): it is
		 * usually there already, so read first and poll only when
		 * it is not. */
		k = recvmsg(s->conn, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (k < 0) {
			struct pollfd pfd = { .fd = s->conn, .events = POLLIN };

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			size_t nf;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
				bad = true;
				continue;
			}
			nf = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < nf; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (!accept_fds || s->n_fds >= WIRE_MAX_FDS) {
					safe_close(fd);
					bad = true;
				} else
					s->fds[s->n_fds++] = fd;
			}
		}
		if (bad || (mh.msg_flags & MSG_CTRUNC))
			return -EBADMSG;
		if (k == 0)
			return -ECONNRESET;
		got += (size_t)k;
	}
	return 0;
}

/* True when the peer has sent bytes beyond the request frame. The protocol
 * has nothing after it, so such bytes make the request malformed: it is
 * answered as such (not dropped with a reset, which is what closing a Unix
 * socket with unread data gives the peer). */
static bool has_trailing_bytes(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* Reads and discards what the peer sent and we did not read (bounded), so
 * that closing does not turn into ECONNRESET on its side before it has read
 * our reply (the kernel resets a Unix stream peer when unread data is
 * discarded). A peer that keeps sending past the bound gets the reset. */
static void drain_input(int fd)
{
	char buf[4096];

	for (size_t total = 0; total < DISPATCH_MAX_DRAIN;) {
		ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (k <= 0)
			break;
		total += (size_t)k;
	}
}

/* ---- limits ---- */

/* Which container a peer belongs to: its pid namespace. Peers of one
 * container share it; the host user's own processes share the host's. If it
 * cannot be read (process gone, /proc hidden) the uid stands in. The pid can
 * be recycled between SO_PEERCRED and the stat: at worst a request is
 * counted against another container, it never escapes the total limit. */
uint64_t dispatch_peer_key(const struct ucred *c)
{
	char p[64];
	struct stat st;

	(void)snprintf(p, sizeof(p), "/proc/%d/ns/pid", (int)c->pid);
	if (c->pid > 0 && stat(p, &st) == 0)
		return (uint64_t)st.st_ino;
	return ((uint64_t)1 << 32) + c->uid;
}

/* Gives back the request's places in the per-container and total limits
 * (once the caller has its answer; the worker may still be writing the end
 * record, which EXECD_EXTRA_THREADS bounds). */
static void release_limits(struct req_state *s)
{
	if (s->counted) {
		sched_release(s->d, s->peer_key);
		s->counted = false;
	}
}

/* ---- audit helpers ---- */

/* The decision record of the request; ret_end: append it only, ending
 * where *ret_end says (audit_sync() makes it durable), else append and
 * sync. */
static int audit_decision_at(struct req_state *s, bool allow, const char *error,
			     const struct authz_decision *dec, off_t *ret_end)
{
	struct auditrec_decision r = {
		.id = s->id,
		.peer_uid = s->cred.uid,
		.peer_gid = s->cred.gid,
		.peer_pid = s->cred.pid,
		.tool = s->req.tool,
		.argv = shown_argv(s),
		.argc = s->argc,
		.container_cwd = s->cwd ? s->cwd : s->req.cwd,
		.host_cwd = s->host_cwd[0] ? s->host_cwd : NULL,
		.destination = s->destination,
		.reason = s->req.reason,
		.repo = s->req.repo,
		.branch = s->req.branch,
		.allow = allow,
		.error = error,
		.decision_reason = dec ? dec->reason : NULL,
		.rule = dec ? dec->rule : NULL,
		.backend = s->d->ops->name,
		.psql = s->psql,
	};

	(void)clock_gettime(CLOCK_REALTIME, &r.ts);
	if (ret_end)
		return audit_append_decision(s->d->audit, &r, ret_end);
	return audit_write_decision(s->d->audit, &r);
}

static int audit_decision(struct req_state *s, bool allow, const char *error,
			  const struct authz_decision *dec)
{
	return audit_decision_at(s, allow, error, dec, NULL);
}

static void audit_end(struct req_state *s, const char *outcome, int code)
{
	struct auditrec_end e = {
		.id = s->id,
		.outcome = outcome,
		.code = code,
		.duration_ms = (uint64_t)elapsed_ms(&s->t_exec),
	};

	(void)clock_gettime(CLOCK_REALTIME, &e.ts);
	/* Logged by audit.c on failure; the command already ran. */
	(void)audit_write_end(s->d->audit, &e);
}

/* The tool name as it may appear in the daemon's log: the request's string
 * only when it is a plausible tool name, so a hostile one cannot forge log
 * lines or drive a terminal (the audit log has it, JSON-escaped). */
static const char *loggable_tool(const char *t)
{
	if (!t)
		return "?";
	if (t[0] == '\0' || strlen(t) > EXECDCONF_MAX_TOOL_NAME ||
	    strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != strlen(t))
		return "(invalid name)";
	return t;
}

/* Before authentication a refusal costs no disk write of its own: a flood
 * of wrong tokens, garbage or busy connections is counted per peer and
 * written as one record per second (audit_count_refusal), so it cannot turn
 * the log's fsyncs against the other containers. After it, each refusal is
 * a full decision record. */
static void count_refusal(struct execd *d, const struct ucred *cred, uint64_t key,
			  const char *error, const char *id)
{
	struct audit_refusal n = {
		.peer_key = key,
		.peer_uid = cred->uid,
		.peer_gid = cred->gid,
		.peer_pid = cred->pid,
		.error = error,
		.id = id,
	};

	audit_count_refusal(d->audit, &n);
}

/* Audits (or counts) a refusal, logs one line, and replies with the error. */
static void refuse(struct req_state *s, enum wire_error e, const struct authz_decision *dec,
		   const char *msg)
{
	if (!s->authenticated) {
		count_refusal(s->d, &s->cred, s->peer_key, wire_error_to_string(e), s->id);
		log_debug("request %s peer uid=%u pid=%d: refused: %s", s->id, (unsigned)s->cred.uid,
			  (int)s->cred.pid, wire_error_to_string(e));
	} else {
		(void)audit_decision(s, false, wire_error_to_string(e), dec);
		log_info("request %s peer uid=%u pid=%d tool '%s': refused: %s", s->id,
			 (unsigned)s->cred.uid, (int)s->cred.pid, loggable_tool(s->req.tool),
			 wire_error_to_string(e));
	}
	dispatch_reply_error(s->conn, e, msg);
}

/* ---- cwd ---- */

static int open_cwd(struct req_state *s)
{
	const struct pathmap_entry *m;
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		/* BENEATH: no absolute symlinks, no ".." above the root, no
		 * symlink leading out; NO_MAGICLINKS: no /proc/self/fd tricks. */
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	int fd, r;

	r = pathmap_resolve(&s->d->conf->map, s->cwd, &s->map_index, s->rel, sizeof(s->rel));
	if (r < 0)
		return r;
	m = &s->d->conf->map.e[s->map_index];
	fd = (int)syscall(SYS_openat2, s->d->root_fds[s->map_index], s->rel, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	s->cwd_fd = fd;
	if (strcmp(s->rel, ".") == 0)
		(void)snprintf(s->host_cwd, sizeof(s->host_cwd), "%s", m->host);
	else
		(void)snprintf(s->host_cwd, sizeof(s->host_cwd), "%s/%s", m->host, s->rel);
	return 0;
}

/* terraform -chdir=DIR (before the subcommand, the last one wins) makes
 * terraform re-resolve a path in the child, after our check and outside
 * it: through a symlink in the workspace, `..` or a host path it would take
 * the command out of the workspace. Refused (-EPERM, *ret_option). */
static int refuse_chdir_options(struct req_state *s, const char **ret_option)
{
	s->cwd = s->req.cwd;
	if (strcmp(s->req.tool, "terraform") != 0)
		return 0;
	for (size_t i = 0; i < s->req.n_args && s->req.args[i][0] == '-'; i++)
		if (strncmp(s->req.args[i], "-chdir", 6) == 0 ||
		    strncmp(s->req.args[i], "--chdir", 7) == 0) {
			*ret_option = s->req.args[i];
			return -EPERM;
		}
	return 0;
}

/* ---- environment ---- */

int dispatch_build_base_env(struct execd *d)
{
	size_t n = 0;

	d->base_env = calloc(ELEMENTSOF(env_allowlist) + 1, sizeof(char *));
	if (!d->base_env)
		return -ENOMEM;
	for (size_t i = 0; i < ELEMENTSOF(env_allowlist); i++) {
		const char *v = getenv(env_allowlist[i]);

		if (!v)
			continue;
		if (asprintf(&d->base_env[n], "%s=%s", env_allowlist[i], v) < 0)
			return -ENOMEM;
		n++;
	}
	return 0;
}

static bool env_name_eq(const char *a, const char *b)
{
	size_t na = strcspn(a, "="), nb = strcspn(b, "=");

	return na == nb && strncmp(a, b, na) == 0;
}

/* base + fixed + backend env (later entries replace earlier ones of the same
 * name). The pointers are borrowed. */
static void build_env(struct req_state *s, const struct authz_decision *dec, const char **env)
{
	size_t n = 0;

	for (size_t i = 0; s->d->base_env[i]; i++)
		env[n++] = s->d->base_env[i];
	for (size_t i = 0; i < ELEMENTSOF(env_fixed); i++)
		env[n++] = env_fixed[i];
	for (size_t i = 0; i < s->tr.n_env; i++)
		env[n++] = s->tr.env[i];
	for (size_t i = 0; i < dec->n_env && n < DISPATCH_MAX_ENV; i++) {
		bool replaced = false;

		for (size_t j = 0; j < n; j++)
			if (env_name_eq(env[j], dec->env[i])) {
				env[j] = dec->env[i];
				replaced = true;
			}
		if (!replaced)
			env[n++] = dec->env[i];
	}
	env[n] = NULL;
}

/* ---- running ---- */

/* Waits for the command; returns the outcome and fills the reply. */
static void run_command(struct req_state *s, const struct authz_decision *dec)
{
	const char *env[DISPATCH_MAX_ENV + 1];
	struct cgroup_cmd *cg = &s->cg; /* made by record_decision() */
	struct wire_reply rep = { .kind = WIRE_REPLY_ERROR };
	unsigned timeout = s->d->conf->command_timeout_ms;
	_cleanup_close_ int pidfd = -1, errfd = -1;
	const char *outcome = NULL;
	bool signaled = false;
	int code = 0, r;
	pid_t pid;

	build_env(s, dec, env);
	{
		struct spawn_params p = {
			.path = s->tool_path,
			.argv = (char *const *)(s->tr.argv ? s->tr.argv : s->argv),
			.envp = (char *const *)env,
			.cwd_fd = s->tr.priv_fd >= 0 ? s->tr.priv_fd : s->cwd_fd,
			.fds = { s->tr.null_fd >= 0 ? s->tr.null_fd : s->fds[0], s->fds[1], s->fds[2] },
			.extra_fds = s->tr.fds,
			.n_extra = s->tr.n_fds,
			.cgroup_procs_fd = cg->procs_fd,
		};

		/* The timeout counts from here: a backend that took its time
		 * deciding (a human approving a webhook) does not shorten it. */
		(void)clock_gettime(CLOCK_MONOTONIC, &s->t_exec);
		r = spawn_start(&p, &pid, &pidfd);
	}
	if (r < 0) {
		log_error_errno(r, "request %s: cannot execute '%s': %s", s->id, s->tool_path, strerror(-(r)));
		audit_end(s, "spawn_failed", -r);
		dispatch_reply_error(s->conn, WIRE_ERROR_INTERNAL, "the host could not start the tool");
		return;
	}
	/* The client's stdio now lives in the child; holding our copies would
	 * keep pipes open after the command ends. A plan terraform writes for
	 * us needs one line on the client's stderr afterwards (its id). */
	if (s->tr.plan.tf_out)
		errfd = fcntl(s->fds[2], F_DUPFD_CLOEXEC, 3);
	for (size_t i = 0; i < s->n_fds; i++)
		s->fds[i] = safe_close(s->fds[i]);
	s->n_fds = 0;

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = pidfd, .events = POLLIN },
			{ .fd = s->conn, .events = POLLIN | POLLRDHUP },
			{ .fd = s->d->stop_fd, .events = POLLIN },
		};
		long long left = (long long)timeout - elapsed_ms(&s->t_exec);

		if (left <= 0) {
			outcome = "timeout";
			break;
		}
		if (poll(pfd, 3, (int)(left > 60000 ? 60000 : left)) < 0) {
			if (errno == EINTR)
				continue;
			outcome = "timeout"; /* cannot watch: fail safe, kill it */
			break;
		}
		if (pfd[0].revents)
			break;
		if (pfd[2].revents) {
			outcome = "shutdown";
			break;
		}
		if (pfd[1].revents & POLLIN && has_trailing_bytes(s->conn)) {
			/* The protocol has nothing after the request: a peer
			 * that sends more has its command stopped and is told
			 * why (malformed), before a hang-up is looked at. */
			outcome = "malformed";
			break;
		}
		if (pfd[1].revents & (POLLHUP | POLLRDHUP | POLLERR | POLLIN)) {
			outcome = "disconnected";
			break;
		}
	}
	if (outcome) {
		spawn_kill_group(pid);
		cgroup_cmd_kill(cg);
	}
	r = spawn_reap(pid, pidfd, &code, &signaled);
	/* Leftovers go with the command (as its process group does in
	 * spawn_reap), before the reply: nothing of it runs on after. */
	cgroup_cmd_remove(cg);
	if (r < 0) {
		log_error_errno(r, "request %s: cannot reap pid %d: %s", s->id, (int)pid, strerror(-(r)));
		code = -1;
	}
	if (!outcome)
		outcome = signaled ? "signaled" : "exited";
	(void)toolrun_finish(s->d, &s->tr, s->id,
			     strcmp(outcome, "exited") == 0 && (code == 0 || code == 2), errfd);
	errfd = safe_close(errfd);
	log_info("request %s peer uid=%u pid=%d tool '%s': %s %d after %lld ms", s->id,
		 (unsigned)s->cred.uid, (int)s->cred.pid, s->req.tool, outcome, code,
		 elapsed_ms(&s->t_exec));
	if (strcmp(outcome, "exited") == 0) {
		rep.kind = WIRE_REPLY_EXITED;
		rep.code = code & 0xff;
	} else if (strcmp(outcome, "signaled") == 0 && code >= 1 && code <= 127) {
		rep.kind = WIRE_REPLY_SIGNALED;
		rep.code = code;
	} else if (strcmp(outcome, "malformed") == 0) {
		rep.error = WIRE_ERROR_MALFORMED;
		(void)snprintf(rep.message, sizeof(rep.message),
			       "bytes after the request frame; the command was stopped");
	} else if (strcmp(outcome, "timeout") == 0) {
		rep.error = WIRE_ERROR_TIMEOUT;
		(void)snprintf(rep.message, sizeof(rep.message),
			       "the command ran longer than %u ms and was killed with its process group",
			       timeout);
	} else {
		rep.error = WIRE_ERROR_INTERNAL;
		(void)snprintf(rep.message, sizeof(rep.message), "the command was stopped (%s)",
			       outcome);
	}
	/* The reply goes out before the end record is written: the decision
	 * record was durable before the command ran (the guarantee that
	 * matters), and the caller should not wait for a second fsync. The end
	 * record follows at once, in the same worker, and is fsynced too; a
	 * crash in between leaves a decision without its end, which reads as
	 * a crash mid-command (docs/architecture.md). */
	send_reply(s->conn, &rep);
	/* The command is over: its container may start the next one. */
	release_limits(s);
	audit_end(s, outcome, code);
}

/* ---- the steps of one request ----
 * Each step returns 0 to go on, or a negative errno when the request ends
 * there: the step has then answered the client (and audited or counted the
 * refusal) itself, so the recipe only stops. */

/* Refuses a request whose frame could not be read or decoded (r < 0) as
 * too_large or malformed. Returns r. */
static int refuse_unreadable(struct req_state *s, int r)
{
	if (r == -EMSGSIZE || r == -E2BIG)
		refuse(s, WIRE_ERROR_TOO_LARGE, NULL, "request too large");
	else
		refuse(s, WIRE_ERROR_MALFORMED, NULL,
		       r == -ETIMEDOUT ? "incomplete request (timed out)" : "malformed request");
	return r;
}

/* Refuses with a decision naming the daemon's own rule ("grammar",
 * "toolfiles") and reason, for every backend alike. Returns -EPERM. */
static int refuse_by_rule(struct req_state *s, enum wire_error e, const char *rule,
			  const char *reason)
{
	_cleanup_(authz_decision_clear) struct authz_decision dec = { 0 };

	(void)snprintf(dec.rule, sizeof(dec.rule), "%s", rule);
	(void)snprintf(dec.reason, sizeof(dec.reason), "%.500s", reason);
	refuse(s, e, &dec, reason);
	return -EPERM;
}

/* Step 1: the frame, header (with the fds) then payload, into s->frame
 * before the deadline. A peer that connected and left is counted, not
 * answered. */
static int receive_frame(struct req_state *s)
{
	const struct execdconf *conf = s->d->conf;
	uint8_t hdr[WIRE_HEADER_SIZE];
	int r;

	r = recv_exact(s, hdr, sizeof(hdr), &s->t0, conf->request_read_timeout_ms, true);
	if (r == -ECONNRESET) {
		/* Connected and left: nothing was asked, but a connect/close
		 * flood is worth a count (socket activation's empty probe
		 * costs one record). */
		count_refusal(s->d, &s->cred, s->peer_key, "empty", s->id);
		return r;
	}
	if (r >= 0)
		r = wire_parse_header(hdr, sizeof(hdr), conf->max_frame, &s->hdr);
	if (r >= 0 && s->hdr.type != WIRE_TYPE_REQUEST && s->hdr.type != WIRE_TYPE_GIT)
		r = -EBADMSG;
	if (r < 0)
		return refuse_unreadable(s, r);
	s->frame_len = WIRE_HEADER_SIZE + (size_t)s->hdr.payload_len;
	s->frame = malloc(s->frame_len);
	if (!s->frame) {
		dispatch_reply_error(s->conn, WIRE_ERROR_INTERNAL, "out of memory");
		return -ENOMEM;
	}
	memcpy(s->frame, hdr, sizeof(hdr));
	if (s->hdr.payload_len > 0) {
		r = recv_exact(s, s->frame + WIRE_HEADER_SIZE, s->hdr.payload_len, &s->t0,
			       conf->request_read_timeout_ms, false);
		if (r < 0)
			return refuse_unreadable(s, r);
	}
	return 0;
}

/* Step 2: decode completely (lib/wire.c) before anything acts on it: the
 * three stdio fds, nothing after the frame; s->argv is tool + args. */
static int decode_request(struct req_state *s)
{
	int r;

	r = wire_decode_request(s->frame, s->frame_len, s->d->conf->max_frame, &s->req);
	if (r >= 0 && s->n_fds != WIRE_REQUEST_FDS)
		r = -EBADMSG;
	if (r >= 0 && has_trailing_bytes(s->conn)) {
		refuse(s, WIRE_ERROR_MALFORMED, NULL, "bytes after the request frame");
		return -EBADMSG;
	}
	if (r < 0)
		return refuse_unreadable(s, r);
	s->argc = s->req.n_args + 1;
	s->argv = calloc(s->argc + 1, sizeof(char *));
	if (!s->argv) {
		dispatch_reply_error(s->conn, WIRE_ERROR_INTERNAL, "out of memory");
		return -ENOMEM;
	}
	s->argv[0] = s->req.tool;
	for (size_t i = 0; i < s->req.n_args; i++)
		s->argv[i + 1] = s->req.args[i];
	return 0;
}

/* Step 3: the token, compared in constant time over the daemon's token
 * length; a token of another length fails without revealing where. */
static int authenticate(struct req_state *s)
{
	size_t n = strlen(s->req.token), want = strlen(s->d->token);
	char cmp[sizeof(s->d->token)] = { 0 };
	bool ok;

	memcpy(cmp, s->req.token, n < want ? n : want);
	ok = sha256_ct_equal(cmp, s->d->token, want) && n == want;
	explicit_bzero(cmp, sizeof(cmp));
	if (!ok) {
		refuse(s, WIRE_ERROR_UNAUTHENTICATED, NULL, "wrong token");
		return -EACCES;
	}
	s->authenticated = true;
	return 0;
}

/* Step 4: the tool is in the host's tool table; s->tool_path is where it
 * runs. */
static int find_tool(struct req_state *s)
{
	const struct execdconf_tool *tool = execdconf_find_tool(s->d->conf, s->req.tool);
	char msg[WIRE_MAX_MESSAGE];

	if (!tool) {
		(void)snprintf(msg, sizeof(msg), "'%s' is not in the host's tool table", s->req.tool);
		refuse(s, WIRE_ERROR_UNKNOWN_TOOL, NULL, msg);
		return -ENOENT;
	}
	s->tool_path = s->d->tool_paths[tool - s->d->conf->tools];
	return 0;
}

/* Step 5: the working directory, opened beneath a mapped root
 * (s->cwd_fd, s->host_cwd); terraform -chdir refused. */
static int open_workdir(struct req_state *s)
{
	char msg[WIRE_MAX_MESSAGE];
	const char *opt = NULL;
	int r;

	r = refuse_chdir_options(s, &opt);
	if (r == -EPERM) {
		(void)snprintf(msg, sizeof(msg),
			       "%s option '%.64s' is not allowed through the sandbox: the "
			       "tool works in the request's directory (cd there instead)",
			       s->req.tool, opt ? opt : "?");
		refuse(s, WIRE_ERROR_POLICY_DENIED, NULL, msg);
		return r;
	}
	r = r < 0 ? r : open_cwd(s);
	if (r < 0) {
		if (r == -ENOENT || r == -ENOTDIR)
			(void)snprintf(msg, sizeof(msg),
				       "the working directory '%s' does not exist as a directory on "
				       "the host side of the shared workspace",
				       s->cwd);
		else
			(void)snprintf(msg, sizeof(msg),
				       "the working directory '%s' is not inside the shared workspace "
				       "(or escapes it through '..' or a symlink)",
				       s->cwd);
		refuse(s, WIRE_ERROR_PATH_OUTSIDE_WORKSPACE, NULL, msg);
		return r;
	}
	return 0;
}

/* Step 6: options that make the tool run a program named on the command
 * line (terraform -plugin-dir, ...; lib/toolgrammar.c) are refused for
 * every backend: a webhook or exec policy engine (or allow_all) that
 * approves a subcommand should not thereby approve running an arbitrary
 * program on the host. */
static int check_grammar(struct req_state *s)
{
	struct toolgrammar_parse gp = { 0 };
	char why[AUTHZ_MAX_REASON];
	int r;

	r = toolgrammar_parse(s->req.tool, s->argv, s->argc, &gp);
	if (r >= 0 && !gp.refused) {
		toolgrammar_parse_done(&gp);
		return 0;
	}
	if (r < 0)
		(void)snprintf(why, sizeof(why), "the arguments could not be read");
	else
		(void)snprintf(why, sizeof(why), "option '%.64s' is refused: %s",
			       gp.refused_option ? gp.refused_option : "?", gp.refused);
	toolgrammar_parse_done(&gp);
	return refuse_by_rule(s, WIRE_ERROR_POLICY_DENIED, "grammar", why);
}

/* The argv the audit log and the backend see: a password in psql's
 * connection string or URI as "***" (destinations are shown without their
 * userinfo the same way); psql itself gets the real one. 0 (nothing to
 * hide, or s->shown_argv set), -ENOMEM. */
static int redact_argv(struct req_state *s)
{
	const struct toolfiles_plan *p = &s->tr.plan;
	size_t i = p->psql_conninfo_arg, off = p->psql_conninfo_off, cap;
	_cleanup_free_ char *arg = NULL;
	const char **av;
	int r;

	if (i == 0 || i >= s->argc || off > strlen(s->argv[i]))
		return 0;
	cap = off + PSQLTARGET_REDACT_CAP(strlen(s->argv[i] + off));
	arg = malloc(cap);
	if (!arg)
		return -ENOMEM;
	memcpy(arg, s->argv[i], off);
	r = psqltarget_redact_password(s->argv[i] + off, arg + off, cap - off);
	if (r <= 0)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return r;
	av = calloc(s->argc + 1, sizeof(*av));
	if (!av)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return -ENOMEM;
	memcpy(av, s->argv, s->argc * sizeof(*av));
	av[i] = arg;
	s->shown_argv = av;
	s->shown_arg = TAKE_PTR(arg);
	return 0;
}

/* Step 7: the tool's run plan (lib/toolfiles.c): the rule that it runs in
 * an empty private directory and reads only files the daemon opened
 * beneath the workspace; options that write files, read host paths or
 * reach other hosts are refused, for every backend like the grammar's. */
static int plan_tool(struct req_state *s)
{
	struct toolfiles_config tc = {
		.gh_host = s->d->conf->gh_host ? s->d->conf->gh_host : "github.com",
		.psql_stdin = s->d->conf->psql_stdin != 0,
		.psql_user = s->d->psql_user,
	};
	char why[AUTHZ_MAX_REASON];

	if (toolfiles_plan(s->req.tool, s->argv, s->argc, &tc, &s->tr.plan) < 0 ||
	    redact_argv(s) < 0) {
		dispatch_reply_error(s->conn, WIRE_ERROR_INTERNAL, "cannot plan the command");
		return -EINVAL;
	}
	if (!s->tr.plan.refused) {
		/* From here on a refusal's record names psql's target too
		 * (prepare_tool refuses socket directories in the workspace). */
		if (strcmp(s->req.tool, "psql") == 0)
			s->psql = &s->tr.plan.psql;
		return 0;
	}
	(void)snprintf(why, sizeof(why), "'%.64s' is refused: %s",
		       s->tr.plan.refused_arg ? s->tr.plan.refused_arg : s->req.tool,
		       s->tr.plan.refused);
	return refuse_by_rule(s, WIRE_ERROR_POLICY_DENIED, "toolfiles", why);
}

/* Step 8: carry the plan out (execd/toolrun.c): the private directory, the
 * file arguments as sealed memfds, psql's checks, terraform's copies. */
static int prepare_tool(struct req_state *s)
{
	struct toolrun_ctx c = {
		.id = s->id,
		.argv = s->argv,
		.argc = s->argc,
		.container_cwd = s->cwd,
		.map = &s->d->conf->map,
		.root_fds = s->d->root_fds,
		.map_index = s->map_index,
		.rel = s->rel,
		.cwd_fd = s->cwd_fd,
	};
	char msg[WIRE_MAX_MESSAGE];
	enum wire_error kind;
	int r;

	r = toolrun_prepare(s->d, &c, &s->tr, &kind, msg, sizeof(msg));
	if (r >= 0)
		return 0;
	if (kind == WIRE_ERROR_INTERNAL) {
		log_error_errno(r, "request %s: cannot prepare the tool's directory and files: %s",
				s->id, strerror(-r));
		dispatch_reply_error(s->conn, WIRE_ERROR_INTERNAL,
				     "the host could not prepare the command");
		return r;
	}
	(void)refuse_by_rule(s, kind, "toolfiles", msg);
	return r;
}

/* Step 9: what the command connects to, when the plan knows it (psql: its
 * host, port, database and user, and postgresql://HOST:PORT/DB), is what
 * the policy and the audit log see. Never fails: without a host there is
 * no destination, which no dest= rule matches. */
static int find_destination(struct req_state *s)
{
	const struct psqltarget *t = &s->tr.plan.psql;

	if (strcmp(s->req.tool, "psql") == 0)
		s->psql = t;
	/* A socket directory is no URL: the psql object carries it. */
	if (s->psql && t->host[0] && t->host[0] != '/' && !s->destination &&
	    asprintf(&s->destination, "postgresql://%s%s%s%s%s/%s", strchr(t->host, ':') ? "[" : "",
		     t->host, strchr(t->host, ':') ? "]" : "", t->port[0] ? ":" : "", t->port,
		     t->dbname) < 0)
		s->destination = NULL;
	if (s->destination && !wire_utf8_valid(s->destination, strlen(s->destination))) {
		free(s->destination);
		s->destination = NULL;
	}
	return 0;
}

/* Step 10: the backend decides on the parsed request; any error is a
 * denial (backend.h). */
static int decide(struct req_state *s, struct authz_decision *dec)
{
	struct authz_request ar = {
		.request_id = s->id,
		.tool = s->req.tool,
		.argv = shown_argv(s),
		.argc = s->argc,
		.container_cwd = s->cwd,
		.host_cwd = s->host_cwd,
		.destination = s->destination,
		.reason = s->req.reason,
		.repo = s->req.repo,
		.branch = s->req.branch,
		.peer_uid = s->cred.uid,
		.peer_gid = s->cred.gid,
		.peer_pid = s->cred.pid,
		.psql = s->psql,
	};
	char msg[WIRE_MAX_MESSAGE];
	int r;

	authz_decision_clear(dec);
	r = s->d->ops->decide(s->d->backend, &ar, dec);
	if (r >= 0 && dec->verdict == AUTHZ_ALLOW)
		return 0;
	if (r < 0 && dec->reason[0] == '\0')
		(void)snprintf(dec->reason, sizeof(dec->reason), "the authorization backend failed");
	dec->verdict = AUTHZ_DENY;
	(void)snprintf(msg, sizeof(msg), "%s", dec->reason[0] ? dec->reason : "denied by policy");
	refuse(s, WIRE_ERROR_POLICY_DENIED, dec, msg);
	return r < 0 ? r : -EPERM;
}

/* Step 11: the decision is durable before anything runs. While its
 * fdatasync is pending (or shared with a concurrent request's), the
 * command's cgroup is made (execd/cgroup.c): nothing runs in it before
 * audit_sync() succeeded, and on failure it goes with the request. */
static int record_decision(struct req_state *s, const struct authz_decision *dec)
{
	off_t end = 0;
	int r = audit_decision_at(s, true, NULL, dec, &end);

	if (r >= 0) {
		cgroup_cmd_create(s->id, &s->cg);
		r = audit_sync(s->d->audit, end);
	}
	if (r < 0)
		dispatch_reply_error(s->conn, WIRE_ERROR_INTERNAL,
				     "the host could not write its audit log; nothing was run");
	return r;
}

/* Step 12: the client may have left while the backend deliberated (a
 * webhook waiting for a human, minutes): nobody is there to watch or stop
 * the command, and the agent that asked may be long gone. It does not
 * start; the approval stays on record with its end. */
static int check_client_waits(struct req_state *s)
{
	struct pollfd pfd = { .fd = s->conn, .events = POLLIN | POLLRDHUP };

	if (poll(&pfd, 1, 0) <= 0 || !pfd.revents)
		return 0;
	(void)clock_gettime(CLOCK_MONOTONIC, &s->t_exec);
	log_info("request %s peer uid=%u pid=%d tool '%s': client left before the "
		 "command started; not run",
		 s->id, (unsigned)s->cred.uid, (int)s->cred.pid, s->req.tool);
	release_limits(s);
	audit_end(s, "disconnected_before_start", -1);
	return -ECONNRESET;
}

/* One request, as a recipe: each step answers and stops the request
 * itself when it fails (fail closed); the per-container limit was taken
 * at accept() (sched.c). */
static void handle(struct req_state *s)
{
	_cleanup_(authz_decision_clear) struct authz_decision dec = { 0 };

	/* 1. Receive the frame before its deadline. */
	if (receive_frame(s) < 0)
		return;
	/* A git relay frame goes to the relay (execd/gitrelay.c), which
	 * decodes, authenticates and audits it itself. */
	if (s->hdr.type == WIRE_TYPE_GIT) {
		gitrelay_handle(s->d, s->conn, &s->cred, s->id, s->frame, s->frame_len, s->fds,
				&s->n_fds);
		return;
	}
	/* 2. Decode completely; 3. authenticate; 4. the tool table. */
	if (decode_request(s) < 0 || authenticate(s) < 0 || find_tool(s) < 0)
		return;
	/* 5. Working directory, beneath a mapped root. */
	if (open_workdir(s) < 0)
		return;
	/* 6.-7. The daemon's own refusals, whatever the backend: the
	 * grammar's, then the run plan's; 8. carry the plan out; 9. what it
	 * connects to. */
	if (check_grammar(s) < 0 || plan_tool(s) < 0 || prepare_tool(s) < 0 ||
	    find_destination(s) < 0)
		return;
	/* 10. Decide; 11. durably on record before anything runs. */
	if (decide(s, &dec) < 0 || record_decision(s, &dec) < 0)
		return;
	/* 12. Nobody left to watch it: not run. */
	if (check_client_waits(s) < 0)
		return;
	/* 13. Run, wait, audit the end, reply. */
	run_command(s, &dec);
}

void *dispatch_connection(void *arg)
{
	struct execd_conn *c = arg;
	struct execd *d = c->d;
	struct req_state *s = calloc(1, sizeof(*s));
	bool allocated = s != NULL;
	uint64_t c_key = c->key;

	if (!s) {
		dispatch_reply_error(c->fd, WIRE_ERROR_INTERNAL, "out of memory");
		goto out;
	}
	s->d = d;
	s->conn = c->fd;
	s->counted = true; /* charged by sched_admit() */
	s->cred = c->cred;
	s->peer_key = c->key;
	s->cwd_fd = -1;
	s->tr.priv_fd = s->tr.null_fd = -1;
	s->cg = (struct cgroup_cmd){ .dir_fd = -1, .procs_fd = -1, .kill_fd = -1 };
	(void)clock_gettime(CLOCK_MONOTONIC, &s->t0);
	(void)snprintf(s->id, sizeof(s->id), "%s-%lu", d->launch_id,
		       (unsigned long)atomic_fetch_add(&d->next_seq, 1) + 1);
	handle(s);
	for (size_t i = 0; i < s->n_fds; i++)
		safe_close(s->fds[i]);
	safe_close(s->cwd_fd);
	/* Made for a command that did not start (its record could not be
	 * synced, its client left); run_command() removed any other. */
	cgroup_cmd_remove(&s->cg);
	toolrun_release(d, &s->tr);
	release_limits(s);
	free(s->destination);
	free(s->argv);
	free(s->shown_argv);
	free(s->shown_arg);
	free(s->frame);
	wire_request_done(&s->req);
	free(s);
out:
	drain_input(c->fd);
	safe_close(c->fd);
	free(c);
	if (!allocated)
		sched_release(d, c_key);
	pthread_mutex_lock(&d->lock);
	if (--d->threads == 0)
		pthread_cond_broadcast(&d->idle);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

void dispatch_count_empty(struct execd *d, const struct execd_conn *c)
{
	char id[EXECD_REQUEST_ID_LEN];

	(void)snprintf(id, sizeof(id), "%s-%lu", d->launch_id,
		       (unsigned long)atomic_fetch_add(&d->next_seq, 1) + 1);
	count_refusal(d, &c->cred, c->key, "empty", id);
}

void dispatch_refuse_busy(struct execd *d, const struct execd_conn *c, const char *msg)
{
	char id[EXECD_REQUEST_ID_LEN];

	(void)snprintf(id, sizeof(id), "%s-%lu", d->launch_id,
		       (unsigned long)atomic_fetch_add(&d->next_seq, 1) + 1);
	count_refusal(d, &c->cred, c->key, "busy", id);
	dispatch_reply_error(c->fd, WIRE_ERROR_BUSY, msg);
	drain_input(c->fd);
}
