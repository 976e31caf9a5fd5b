/* SPDX-License-Identifier: MIT */
/* sandbox-exec: the container side of sandbox-execd. Installed once, with
 * the wrapped tool names (git, gh, aws, kubectl, terraform, psql) as
 * symlinks to it in a directory ahead of the real tools in PATH:
 *
 *   git push origin main           -> tool "git", args "push origin main"
 *   sandbox-exec git push ...      -> the same
 *
 * It sends the request (token, tool, args, cwd, SANDBOX_REASON, and the
 * repository and branch when cheaply known; for gh, --repo HOST/OWNER/REPO
 * from the origin remote) with its stdin/stdout/stderr as
 * SCM_RIGHTS, waits for the reply and exits with the tool's status (128+N
 * for a signal). Its own failures print one line and use the codes of
 * lib/exitcodes.h. Signals are not forwarded: when the wrapper dies (Ctrl-C
 * kills it like any foreground process), its connection closes and the
 * daemon kills the command's whole process group. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "exitcodes.h"
#include "toolfiles.h"
#include "macros.h"
#include "client.h"
#include "wire.h"

#define SE_DEFAULT_SOCKET "/run/code-sandbox/execd.sock"
#define SE_DEFAULT_TOKEN "/run/code-sandbox/token"
#define SE_MAX_HEAD 256   /* bytes of .git/HEAD we read */
#define SE_MAX_DEPTH 64   /* directories walked up looking for .git */
#define SE_MAX_CONFIG 65536 /* bytes of .git/config read for gh's --repo */

static const char *prog = "sandbox-exec";

static _noreturn_ void die(int code, const char *fmt, ...) _printf_(2, 3);
static _noreturn_ void die(int code, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	(void)dprintf(STDERR_FILENO, "%s: %s\n", prog, buf);
	_exit(code);
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && v[0] ? v : def;
}

static void read_token(const char *path, char *buf, size_t len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		die(EXIT_WRAP_USAGE, "cannot read the sandbox-execd token '%s': %s (is the daemon's "
				     "socket directory mounted?)",
		    path, strerror(errno));
	n = read(fd, buf, len - 1);
	if (n <= 0)
		die(EXIT_WRAP_USAGE, "the sandbox-execd token file '%s' is empty", path);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[0] == '\0')
		die(EXIT_WRAP_USAGE, "the sandbox-execd token file '%s' is empty", path);
}

/* Repository (top-level directory) and branch from .git/HEAD, walking up
 * from cwd. Informational only: the daemon and its policy must not trust
 * them (the agent controls both). Plain reads, nothing executed. */
static void find_repo(const char *cwd, char **ret_repo, char **ret_branch)
{
	char dir[PATH_MAX], head[SE_MAX_HEAD + 1], p[PATH_MAX + 16];

	*ret_repo = *ret_branch = NULL;
	if (strlen(cwd) >= sizeof(dir))
		return;
	memcpy(dir, cwd, strlen(cwd) + 1);
	for (int depth = 0; depth < SE_MAX_DEPTH; depth++) {
		_cleanup_close_ int fd = -1;
		char *slash;
		ssize_t n;

		(void)snprintf(p, sizeof(p), "%s/.git/HEAD", strcmp(dir, "/") == 0 ? "" : dir);
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0) {
			n = read(fd, head, SE_MAX_HEAD);
			if (n > 0) {
				head[n] = '\0';
				head[strcspn(head, "\n")] = '\0';
				if (strncmp(head, "ref: refs/heads/", 16) == 0 &&
				    wire_utf8_valid(head + 16, strlen(head + 16)))
					*ret_branch = strdup(head + 16);
			}
			if (wire_utf8_valid(dir, strlen(dir)))
				*ret_repo = strdup(dir);
			return;
		}
		slash = strrchr(dir, '/');
		if (!slash || strcmp(dir, "/") == 0)
			return;
		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
}

/* gh in the container: the repository it acts on, as HOST/OWNER/REPO,
 * from the origin remote in <repo>/.git/config (read as text; nothing is
 * executed). The daemon runs gh in an empty directory on the host, where
 * gh could not find it, and insists on an explicit host (the configured
 * one). NULL when there is no such remote or it is not a GitHub-style URL. */
static char *gh_repo_from_config(const char *repo)
{
	char path[PATH_MAX + 16], buf[SE_MAX_CONFIG + 1], *line, *save = NULL, *url = NULL;
	_cleanup_close_ int fd = -1;
	bool in_origin = false;
	ssize_t n;

	if (!repo || (size_t)snprintf(path, sizeof(path), "%s/.git/config", repo) >= sizeof(path))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, SE_MAX_CONFIG);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (line[0] == '[') {
			in_origin = strncmp(line, "[remote \"origin\"]", 17) == 0;
			continue;
		}
		if (in_origin && strncmp(line, "url", 3) == 0 && strchr(line, '=')) {
			url = strchr(line, '=') + 1;
			url += strspn(url, " \t");
			url[strcspn(url, " \t\r")] = '\0';
			break;
		}
	}
	if (!url)
		return NULL;
	{
		const char *h, *rest;
		char out[512];
		size_t hl, rl;

		if (strncmp(url, "https://", 8) == 0 || strncmp(url, "ssh://", 6) == 0) {
			h = strstr(url, "://") + 3;
			if (strchr(h, '@') && strchr(h, '@') < strchr(h, '/'))
				h = strchr(h, '@') + 1;
			rest = strchr(h, '/');
			if (!rest)
				return NULL;
			hl = (size_t)(rest - h);
			rest++;
		} else if (strchr(url, '@') && strchr(url, ':') > strchr(url, '@')) {
			h = strchr(url, '@') + 1; /* git@HOST:OWNER/REPO */
			rest = strchr(h, ':');
			hl = (size_t)(rest - h);
			rest++;
		} else
			return NULL;
		if (memchr(h, ':', hl)) /* a port: not a gh host */
			hl = (size_t)((const char *)memchr(h, ':', hl) - h);
		rl = strlen(rest);
		if (rl > 4 && strcmp(rest + rl - 4, ".git") == 0)
			rl -= 4;
		while (rl > 0 && rest[rl - 1] == '/')
			rl--;
		if (hl == 0 || rl == 0 ||
		    (size_t)snprintf(out, sizeof(out), "%.*s/%.*s", (int)hl, h, (int)rl, rest) >= sizeof(out) ||
		    !wire_utf8_valid(out, strlen(out)))
			return NULL;
		return strdup(out);
	}
}

/* True when argv (after the tool name) already names the repository. */
static bool gh_has_repo(char **args, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(args[i], "--") == 0)
			return false;
		if (strcmp(args[i], "-R") == 0 || strcmp(args[i], "--repo") == 0 ||
		    strncmp(args[i], "--repo=", 7) == 0 || (strncmp(args[i], "-R", 2) == 0 && args[i][2]))
			return true;
	}
	return false;
}

static int recv_all(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = recv(fd, buf + got, n - got, 0);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -ECONNRESET;
		got += (size_t)k;
	}
	return 0;
}

static _noreturn_ void report(const struct wire_reply *rep, const char *tool)
{
	switch (rep->kind) {
	case WIRE_REPLY_EXITED:
		_exit(rep->code);
	case WIRE_REPLY_SIGNALED:
		_exit(EXIT_SIGNAL_BASE + rep->code);
	case WIRE_REPLY_ERROR:
		break;
	case WIRE_REPLY_KIND_MAX:
	default:
		die(EXIT_WRAP_PROTOCOL, "unexpected reply from sandbox-execd");
	}
	switch (rep->error) {
	case WIRE_ERROR_POLICY_DENIED:
		die(EXIT_WRAP_DENIED,
		    "'%s' was denied by the host's policy: %s. This is a deliberate policy "
		    "decision, not a fault: do not try to work around it; ask the user if the command "
		    "is needed.",
		    tool, rep->message);
	case WIRE_ERROR_MALFORMED:
	case WIRE_ERROR_TOO_LARGE:
		die(EXIT_WRAP_PROTOCOL, "sandbox-execd rejected the request (%s): %s",
		    wire_error_to_string(rep->error), rep->message);
	case WIRE_ERROR_UNAUTHENTICATED:
	case WIRE_ERROR_UNKNOWN_TOOL:
	case WIRE_ERROR_PATH_OUTSIDE_WORKSPACE:
	case WIRE_ERROR_BUSY:
	case WIRE_ERROR_TIMEOUT:
	case WIRE_ERROR_INTERNAL:
		die(EXIT_WRAP_REFUSED, "sandbox-execd refused '%s' (%s): %s", tool,
		    wire_error_to_string(rep->error), rep->message);
	case WIRE_ERROR_MAX:
	default:
		die(EXIT_WRAP_PROTOCOL, "unexpected error from sandbox-execd");
	}
}

int main(int argc, char **argv)
{
	static uint8_t frame[WIRE_MAX_FRAME];
	char token[WIRE_MAX_TOKEN + 2], cwd[PATH_MAX];
	const char *base, *sock_path, *token_path;
	struct wire_request req = { 0 };
	struct wire_header h;
	struct wire_reply rep;
	int fds[WIRE_REQUEST_FDS] = { 0, 1, 2 };
	size_t len;
	int sock, r;

	base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
	base = base ? base + 1 : (argc > 0 && argv[0] ? argv[0] : "sandbox-exec");
	if (strcmp(base, "sandbox-exec") == 0) {
		if (argc < 2 || argv[1][0] == '-')
			die(EXIT_WRAP_USAGE, "usage: sandbox-exec TOOL [ARGS...] (or call it as TOOL "
					     "through a symlink)");
		req.tool = argv[1];
		req.args = argv + 2;
		req.n_args = (size_t)(argc - 2);
	} else {
		prog = base;
		req.tool = (char *)base;
		req.args = argv + 1;
		req.n_args = argc > 0 ? (size_t)(argc - 1) : 0;
	}
	if (req.n_args > WIRE_MAX_ARGS)
		die(EXIT_WRAP_USAGE, "too many arguments (at most %d)", WIRE_MAX_ARGS);
	(void)signal(SIGPIPE, SIG_IGN);

	sock_path = env_or("SANDBOX_EXECD_SOCKET", SE_DEFAULT_SOCKET);
	token_path = env_or("SANDBOX_EXECD_TOKEN", SE_DEFAULT_TOKEN);
	read_token(token_path, token, sizeof(token));
	req.token = token;
	if (!getcwd(cwd, sizeof(cwd)))
		die(EXIT_WRAP_USAGE, "cannot determine the current directory: %s", strerror(errno));
	req.cwd = cwd;
	req.reason = getenv("SANDBOX_REASON");
	if (req.reason && !wire_utf8_valid(req.reason, strlen(req.reason)))
		req.reason = NULL;
	find_repo(cwd, &req.repo, &req.branch);
	if (strcmp(req.tool, "gh") == 0 && !gh_has_repo(req.args, req.n_args)) {
		char *first = NULL, *rv;

		for (size_t i = 0; i < req.n_args && !first; i++)
			if (req.args[i][0] != '-')
				first = req.args[i];
		if (toolfiles_gh_needs_repo(first) && (rv = gh_repo_from_config(req.repo))) {
			char **a = calloc(req.n_args + 3, sizeof(char *));

			/* (Dereferences inside the check: cppcheck does not see
			 * that die() returns no more.) */
			if (a) {
				a[0] = (char *)"--repo";
				a[1] = rv;
				memcpy(a + 2, req.args, req.n_args * sizeof(char *));
				req.args = a;
				req.n_args += 2;
			} else
				die(EXIT_WRAP_USAGE, "out of memory");
		}
	}

	r = wire_encode_request(&req, frame, sizeof(frame), &len);
	if (r == -E2BIG || r == -ENOBUFS)
		die(EXIT_WRAP_USAGE, "the command line is too long for sandbox-execd");
	if (r < 0)
		die(EXIT_WRAP_USAGE, "cannot send this command: an argument or the directory name is "
				     "not valid UTF-8");
	explicit_bzero(token, sizeof(token));

	/* stdio that is closed is sent as /dev/null (the daemon needs three). */
	for (int i = 0; i < WIRE_REQUEST_FDS; i++)
		if (fcntl(i, F_GETFD) < 0) {
			fds[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (fds[i] < 0)
				die(EXIT_WRAP_USAGE, "cannot open /dev/null");
		}

	sock = client_send(sock_path, frame, len, fds, WIRE_REQUEST_FDS);
	if (sock == -ENAMETOOLONG)
		die(EXIT_WRAP_USAGE, "socket path '%s' is too long", sock_path);
	if (sock < 0)
		die(EXIT_WRAP_UNREACHABLE, "cannot reach sandbox-execd at '%s': %s (is it running on "
					   "the host?)",
		    sock_path, strerror(-sock));
	for (int i = 0; i < WIRE_REQUEST_FDS; i++)
		if (fds[i] != i)
			safe_close(fds[i]);

	r = recv_all(sock, frame, WIRE_HEADER_SIZE);
	if (r < 0)
		die(EXIT_WRAP_PROTOCOL, "sandbox-execd closed the connection without a reply");
	r = wire_parse_header(frame, WIRE_HEADER_SIZE, WIRE_MAX_FRAME, &h);
	if (r < 0 || h.type != WIRE_TYPE_REPLY)
		die(EXIT_WRAP_PROTOCOL, "malformed reply from sandbox-execd");
	r = recv_all(sock, frame + WIRE_HEADER_SIZE, h.payload_len);
	if (r < 0)
		die(EXIT_WRAP_PROTOCOL, "truncated reply from sandbox-execd");
	r = wire_decode_reply(frame, WIRE_HEADER_SIZE + (size_t)h.payload_len, &rep);
	if (r < 0)
		die(EXIT_WRAP_PROTOCOL, "malformed reply from sandbox-execd");
	report(&rep, req.tool);
}
