/* SPDX-License-Identifier: MIT */
/* git-remote-sandbox: the container side of the git relay, a git remote
 * helper (gitremote-helpers(7)). The image's system gitconfig routes every
 * network remote here (url."sandbox::".insteadOf), so the agent types plain
 * `git clone/fetch/pull/push`; git runs `git-remote-sandbox REMOTE URL` and
 * speaks the helper protocol on our stdin/stdout.
 *
 * Everything local stays in the container with the container's git: this
 * program only asks sandbox-execd (WIRE_TYPE_GIT, lib/wire_git.h) for
 *   list / list for-push  the remote's refs (the daemon's ls-remote)
 *   fetch                 a bundle of what we lack, which our git unbundles,
 *                         or (a clone) the pack the host's cache got from the
 *                         remote, with its index, installed as it is
 *   push                  with a thin bundle of exactly what the remote
 *                         lacks (from the tips list for-push returned) and
 *                         the ref updates with their force/delete flags
 * Progress and errors from the host come through fd 2 (our stderr, the
 * user's terminal). Credentials never enter the container: the daemon talks
 * to the remote with the user's own set-up. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "exitcodes.h"
#include "gitrelay.h"
#include "macros.h"
#include "wire.h"
#include "client.h"
#include "wire_git.h"

#define RS_DEFAULT_SOCKET "/run/code-sandbox/execd.sock"
#define RS_DEFAULT_TOKEN "/run/code-sandbox/token"
#define RS_MAX_LINE (WIRE_GIT_MAX_REF * 2 + 64)
#define RS_MAX_LIST ((size_t)64 * 1024 * 1024) /* bytes of ref list we accept */
#define RS_MAX_OUT ((size_t)1024 * 1024)       /* bytes of other git output we read */
#define RS_TMP_REFS "refs/sandbox-relay/push/"

static const char *url;
static bool opt_check_connectivity; /* git asked: say whether a clone is complete */
static bool opt_cloning;            /* this fetch is a clone (the policy sees "clone") */
static uint32_t opt_push_flags;     /* WIRE_GIT_FLAG_DRY_RUN, _ATOMIC */
static bool warned_shallow;
static char remote_tips[WIRE_GIT_MAX_HAVES][WIRE_GIT_OID_MAX + 1];
static size_t n_remote_tips;

static void msg(const char *fmt, ...) _printf_(1, 2);
static void msg(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	(void)dprintf(STDERR_FILENO, "%s\n", buf);
}

static _noreturn_ void die(int code, const char *fmt, ...) _printf_(2, 3);
static _noreturn_ void die(int code, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	(void)dprintf(STDERR_FILENO, "fatal: %s\n", buf);
	_exit(code);
}

/* Allocation that cannot fail for the caller: out of memory ends the helper. */
static void *xalloc(void *old, size_t n, size_t size)
{
	void *p = old ? reallocarray(old, n, size) : calloc(n, size);

	if (!p)
		die(1, "out of memory");
	return p;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && v[0] ? v : def;
}

/* ---- running the container's git ---- */

/* Runs git with argv (argv[0] = "git"), stdin from in_fd (-1: /dev/null),
 * stdout captured into out (up to cap - 1 bytes, NUL-terminated; NULL:
 * /dev/null), stderr to ours. Returns the exit status, -errno. */
static int run_git(const char *const *argv, int in_fd, char *out, size_t cap, size_t *ret_len)
{
	int p[2] = { -1, -1 }, st = 0;
	size_t got = 0;
	pid_t pid;

	if (out && pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (dup2(in_fd >= 0 ? in_fd : devnull, 0) < 0 || dup2(out ? p[1] : devnull, 1) < 0)
			_exit(127);
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	if (out) {
		close(p[1]);
		for (;;) {
			char sink[4096];
			ssize_t k = got + 1 < cap ? read(p[0], out + got, cap - 1 - got)
						  : read(p[0], sink, sizeof(sink));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			if (got + 1 < cap)
				got += (size_t)k;
		}
		close(p[0]);
		out[got] = '\0';
		if (ret_len)
			*ret_len = got;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- talking to sandbox-execd ---- */

static void read_token(char *buf, size_t len)
{
	const char *path = env_or("SANDBOX_EXECD_TOKEN", RS_DEFAULT_TOKEN);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		die(EXIT_WRAP_USAGE, "cannot read the sandbox-execd token '%s': %s", path,
		    strerror(errno));
	n = read(fd, buf, len - 1);
	if (n <= 0)
		die(EXIT_WRAP_USAGE, "the sandbox-execd token file '%s' is empty", path);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
}

static int recv_all(int fd, uint8_t *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = recv(fd, buf + got, n - got, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ECONNRESET;
		got += (size_t)k;
	}
	return 0;
}

/* Sends req with fds {in, out, err} and returns the connected socket. */
static int relay_send(struct wire_git_request *req, const int fds[WIRE_GIT_FDS])
{
	static uint8_t frame[WIRE_MAX_FRAME];
	char token[WIRE_MAX_TOKEN + 2];
	const char *sock_path = env_or("SANDBOX_EXECD_SOCKET", RS_DEFAULT_SOCKET);
	size_t len;
	int sock, r;

	read_token(token, sizeof(token));
	req->token = token;
	req->url = (char *)url;
	req->reason = getenv("SANDBOX_REASON");
	if (req->reason && !wire_utf8_valid(req->reason, strlen(req->reason)))
		req->reason = NULL;
	r = wire_git_encode_request(req, frame, sizeof(frame), &len);
	explicit_bzero(token, sizeof(token));
	req->token = NULL;
	if (r < 0)
		die(EXIT_WRAP_USAGE, "cannot encode the request for sandbox-execd: %s", strerror(-r));
	sock = client_send(sock_path, frame, len, fds, WIRE_GIT_FDS);
	if (sock == -ENAMETOOLONG)
		die(EXIT_WRAP_USAGE, "socket path '%s' is too long", sock_path);
	if (sock < 0)
		die(EXIT_WRAP_UNREACHABLE, "cannot reach sandbox-execd at '%s': %s", sock_path,
		    strerror(-sock));
	return sock;
}

/* Reads the reply. Returns 0 on success (the daemon's own git exited 0);
 * otherwise prints the daemon's message and returns the wrapper exit code;
 * *ret_denied when it was the policy. */
static int relay_reply(int sock, char *ret_msg, size_t msg_len, bool *ret_denied)
{
	uint8_t frame[WIRE_HEADER_SIZE + 64 + WIRE_MAX_MESSAGE];
	struct wire_header h;
	struct wire_reply rep;
	int r;

	*ret_denied = false;
	r = recv_all(sock, frame, WIRE_HEADER_SIZE);
	if (r < 0)
		die(EXIT_WRAP_PROTOCOL, "sandbox-execd closed the connection without a reply");
	r = wire_parse_header(frame, WIRE_HEADER_SIZE, sizeof(frame), &h);
	if (r < 0 || h.type != WIRE_TYPE_REPLY)
		die(EXIT_WRAP_PROTOCOL, "malformed reply from sandbox-execd");
	if (recv_all(sock, frame + WIRE_HEADER_SIZE, h.payload_len) < 0 ||
	    wire_decode_reply(frame, WIRE_HEADER_SIZE + (size_t)h.payload_len, &rep) < 0)
		die(EXIT_WRAP_PROTOCOL, "malformed reply from sandbox-execd");
	close(sock);
	switch (rep.kind) {
	case WIRE_REPLY_EXITED:
		if (rep.code == 0)
			return 0;
		(void)snprintf(ret_msg, msg_len, "the host's git failed (status %d)", rep.code);
		return 1;
	case WIRE_REPLY_SIGNALED:
		(void)snprintf(ret_msg, msg_len, "the host's git was killed (signal %d)", rep.code);
		return 1;
	case WIRE_REPLY_ERROR:
		*ret_denied = rep.error == WIRE_ERROR_POLICY_DENIED;
		(void)snprintf(ret_msg, msg_len, "%s", rep.message);
		if (*ret_denied)
			msg("fatal: the host's policy denied this git %s: %s. This is a deliberate "
			    "policy decision, not a fault: do not try to work around it; ask the "
			    "user if it is needed.",
			    "operation", rep.message);
		else
			msg("fatal: sandbox-execd refused the git operation (%s): %s",
			    wire_error_to_string(rep.error), rep.message);
		return *ret_denied ? EXIT_WRAP_DENIED : EXIT_WRAP_REFUSED;
	case WIRE_REPLY_KIND_MAX:
	default:
		die(EXIT_WRAP_PROTOCOL, "unexpected reply from sandbox-execd");
	}
}

/* Reads fd to EOF into a malloc'd buffer (NUL-terminated), at most max. */
static char *slurp(int fd, size_t max, size_t *ret_len)
{
	size_t cap = 65536, len = 0;
	char *b = xalloc(NULL, cap, 1);

	for (;;) {
		ssize_t k;

		if (len + 1 == cap) {
			if (cap >= max)
				die(EXIT_WRAP_PROTOCOL, "sandbox-execd sent more than %zu bytes", max);
			cap *= 2;
			b = xalloc(b, cap, 1);
		}
		k = read(fd, b + len, cap - 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			die(EXIT_WRAP_PROTOCOL, "cannot read from sandbox-execd: %s", strerror(errno));
		if (k == 0)
			break;
		len += (size_t)k;
	}
	b[len] = '\0';
	*ret_len = len;
	return b;
}

static int devnull_fd(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die(1, "cannot open /dev/null: %s", strerror(errno));
	return fd;
}

/* ---- commands ---- */

static void cmd_list(bool for_push)
{
	struct wire_git_request req = { .op = for_push ? WIRE_GIT_LIST_FOR_PUSH : WIRE_GIT_LIST };
	char why[WIRE_MAX_MESSAGE];
	int p[2], fds[WIRE_GIT_FDS], sock, r;
	bool denied;
	size_t len;
	char *list;

	if (pipe2(p, O_CLOEXEC) < 0)
		die(1, "pipe: %s", strerror(errno));
	fds[0] = devnull_fd();
	fds[1] = p[1];
	fds[2] = STDERR_FILENO;
	sock = relay_send(&req, fds);
	close(fds[0]);
	close(p[1]);
	list = slurp(p[0], RS_MAX_LIST, &len);
	close(p[0]);
	r = relay_reply(sock, why, sizeof(why), &denied);
	if (r != 0) {
		if (!denied)
			msg("fatal: could not list the remote '%s': %s", url, why);
		_exit(r);
	}
	/* The listing ends with an empty line; remember the tips for push. */
	if (len == 0 || list[len - 1] != '\n')
		die(EXIT_WRAP_PROTOCOL, "truncated ref list from sandbox-execd");
	n_remote_tips = 0;
	for (char *l = list; *l && n_remote_tips < WIRE_GIT_MAX_HAVES;) {
		char *nl = strchr(l, '\n');
		size_t ol = strcspn(l, " \n");

		if (wire_git_oid_valid(l, ol)) {
			memcpy(remote_tips[n_remote_tips], l, ol);
			remote_tips[n_remote_tips++][ol] = '\0';
		}
		l = nl + 1;
	}
	if (fwrite(list, 1, len, stdout) != len || fflush(stdout) != 0)
		die(1, "cannot write to git: %s", strerror(errno));
	free(list);
}

/* Our local tips (any ref), deduplicated, as haves. */
static size_t local_haves(char (*haves)[WIRE_GIT_OID_MAX + 1], size_t max)
{
	static const char *const argv[] = { "git", "for-each-ref", "--format=%(objectname)", NULL };
	static char out[RS_MAX_OUT];
	size_t n = 0;

	if (run_git(argv, -1, out, sizeof(out), NULL) != 0)
		return 0;
	for (char *l = strtok(out, "\n"); l && n < max; l = strtok(NULL, "\n")) {
		bool dup = false;

		if (!wire_git_oid_valid(l, strlen(l)))
			continue;
		for (size_t i = 0; i < n && !dup; i++)
			dup = strcmp(haves[i], l) == 0;
		if (!dup)
			(void)snprintf(haves[n++], WIRE_GIT_OID_MAX + 1, "%s", l);
	}
	return n;
}

static char *git_dir_tmp(const char *what)
{
	const char *gd = getenv("GIT_DIR");
	char *path;

	if (asprintf(&path, "%s/sandbox-relay-%s-XXXXXX", gd && gd[0] ? gd : ".git", what) < 0)
		die(1, "out of memory");
	return path;
}

/* Copies len bytes at offset off of fd into the new file out. */
static int copy_range(int fd, uint64_t off, uint64_t len, int out)
{
	static char chunk[65536];

	while (len > 0) {
		loff_t in_off = (loff_t)off;
		ssize_t k = copy_file_range(fd, &in_off, out, NULL, len, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
			      errno == EOPNOTSUPP || errno == EPERM)) {
			/* another file system, or a filter without it */
			k = pread(fd, chunk, len < sizeof(chunk) ? (size_t)len : sizeof(chunk),
				  (off_t)off);
			if (k > 0 && write(out, chunk, (size_t)k) != k)
				return -EIO;
		}
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO; /* shorter than the header said */
		off += (uint64_t)k;
		len -= (uint64_t)k;
	}
	return 0;
}

static void read_at(int fd, void *buf, size_t n, uint64_t off)
{
	if (pread(fd, buf, n, (off_t)off) != (ssize_t)n)
		die(1, "the objects from the host are truncated");
}

/* Installs the pack and index the host sent (lib/gitrelay.h, "the objects
 * of a fetch") in our object store, held by a .keep file that git removes
 * when the fetch is done; the host's clone indexed and checked them, so our
 * git need not index them again. Tells git "lock PATH.keep", and
 * "connectivity-ok" when asked: the pack is a whole clone of the remote. */
static void install_pack(int fd, uint64_t hdr_len, uint64_t pack_len, uint64_t idx_len,
			 size_t hash_len)
{
	static const char *const argv[] = { "git", "rev-parse", "--git-path", "objects/pack", NULL };
	char dir[PATH_MAX], name[2 * 32 + 1], *tp, *ti, *keep, *fp, *fi;
	uint8_t ph[GITRELAY_PACK_HEAD], pt[32], ih[GITRELAY_IDX_HEAD], it[64];
	int pfd, ifd, kfd;
	struct stat st;

	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != hdr_len + pack_len + idx_len)
		die(1, "the objects from the host are not the size they claim");
	read_at(fd, ph, sizeof(ph), hdr_len);
	read_at(fd, pt, hash_len, hdr_len + pack_len - hash_len);
	read_at(fd, ih, sizeof(ih), hdr_len + pack_len);
	read_at(fd, it, 2 * hash_len, hdr_len + pack_len + idx_len - 2 * hash_len);
	if (gitrelay_pack_name(ph, pt, pack_len, ih, it, idx_len, hash_len, name) < 0)
		die(1, "the objects from the host are not a pack and its index");
	if (run_git(argv, -1, dir, sizeof(dir), NULL) != 0 || dir[0] == '\0')
		die(1, "cannot find this repository's object store");
	dir[strcspn(dir, "\n")] = '\0';
	if (asprintf(&tp, "%s/tmp_relay_pack_XXXXXX", dir) < 0 ||
	    asprintf(&ti, "%s/tmp_relay_idx_XXXXXX", dir) < 0 ||
	    asprintf(&keep, "%s/pack-%s.keep", dir, name) < 0 ||
	    asprintf(&fp, "%s/pack-%s.pack", dir, name) < 0 ||
	    asprintf(&fi, "%s/pack-%s.idx", dir, name) < 0)
		die(1, "out of memory");
	pfd = mkostemp(tp, O_CLOEXEC);
	ifd = pfd < 0 ? -1 : mkostemp(ti, O_CLOEXEC);
	if (pfd < 0 || ifd < 0)
		die(1, "cannot create a file in '%s': %s", dir, strerror(errno));
	if (copy_range(fd, hdr_len, pack_len, pfd) < 0 ||
	    copy_range(fd, hdr_len + pack_len, idx_len, ifd) < 0 || fchmod(pfd, 0444) < 0 ||
	    fchmod(ifd, 0444) < 0 || close(pfd) < 0 || close(ifd) < 0) {
		(void)unlink(tp);
		(void)unlink(ti);
		die(1, "cannot write the objects from the host into '%s'", dir);
	}
	/* the keep file first (nothing may repack the pack away before our
	 * refs point into it), the index last (the pack is visible once both
	 * are there) */
	kfd = open(keep, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (kfd < 0 || write(kfd, "code-sandbox relay\n", 19) != 19 || close(kfd) < 0 ||
	    rename(tp, fp) < 0 || rename(ti, fi) < 0) {
		(void)unlink(tp);
		(void)unlink(ti);
		die(1, "cannot install the objects from the host in '%s': %s", dir, strerror(errno));
	}
	(void)printf("lock %s\n", keep);
	if (opt_check_connectivity)
		(void)fputs("connectivity-ok\n", stdout);
	free(tp);
	free(ti);
	free(keep);
	free(fp);
	free(fi);
}

/* option NAME VALUE (gitremote-helpers(7), OPTIONS). */
static void cmd_option(const struct gitrelay_cmd *c)
{
	const char *answer = "unsupported";

	bool on = strcmp(c->value, "true") == 0;

	if (strcmp(c->name, "check-connectivity") == 0) {
		opt_check_connectivity = on;
		answer = "ok";
	} else if (strcmp(c->name, "cloning") == 0) {
		opt_cloning = on;
		answer = "ok";
	} else if (strcmp(c->name, "dry-run") == 0 || strcmp(c->name, "atomic") == 0) {
		uint32_t bit = c->name[0] == 'd' ? WIRE_GIT_FLAG_DRY_RUN : WIRE_GIT_FLAG_ATOMIC;

		opt_push_flags = on ? opt_push_flags | bit : opt_push_flags & ~bit;
		answer = "ok";
	} else if (strncmp(c->name, "depth", 5) == 0 || strncmp(c->name, "deepen", 6) == 0) {
		/* A shallow history would need shallow bundles from the host;
		 * the relay sends whole histories. Said once, then git goes on
		 * without the option ("is ignored" on fetch). */
		if (!warned_shallow)
			msg("warning: the sandbox relay fetches full history: --depth, "
			    "--shallow-since and --shallow-exclude are ignored");
		warned_shallow = true;
	}
	/* Progress and verbosity come from the host as they are. Push
	 * options are not relayed (their values would reach the remote's
	 * hooks unjudged): git refuses the push itself when a helper does
	 * not support them ("helper sandbox does not support
	 * 'push-option'"). */
	(void)printf("%s\n", answer);
	(void)fflush(stdout);
}

static void cmd_fetch(const struct gitrelay_cmd *first)
{
	static char wants[WIRE_GIT_MAX_WANTS][WIRE_GIT_OID_MAX + 1];
	static char haves[WIRE_GIT_MAX_HAVES][WIRE_GIT_OID_MAX + 1];
	struct wire_git_request req = { .op = WIRE_GIT_FETCH, .wants = wants, .haves = haves,
					.cloning = opt_cloning };
	char line[RS_MAX_LINE], why[WIRE_MAX_MESSAGE];
	int fds[WIRE_GIT_FDS], sock, r, fd;
	struct gitrelay_cmd c = *first;
	char *path;
	bool denied;
	struct stat st;

	for (;;) {
		if (c.kind != GITRELAY_CMD_FETCH)
			die(1, "unexpected command in a fetch batch");
		if (req.n_wants < WIRE_GIT_MAX_WANTS) {
			bool dup = false;

			for (size_t i = 0; i < req.n_wants && !dup; i++)
				dup = strcmp(wants[i], c.oid) == 0;
			if (!dup)
				memcpy(wants[req.n_wants++], c.oid, sizeof(c.oid));
		}
		if (!fgets(line, sizeof(line), stdin))
			die(1, "unexpected end of input from git");
		line[strcspn(line, "\n")] = '\0';
		if (gitrelay_parse_cmd(line, &c) < 0)
			die(1, "cannot read git's command '%.64s'", line);
		if (c.kind == GITRELAY_CMD_END)
			break;
	}
	req.n_haves = local_haves(haves, WIRE_GIT_MAX_HAVES);
	path = git_dir_tmp("fetch");
	fd = mkstemp(path);
	if (fd < 0)
		die(1, "cannot create a temporary file '%s': %s", path, strerror(errno));
	fds[0] = devnull_fd();
	fds[1] = fd;
	fds[2] = STDERR_FILENO;
	sock = relay_send(&req, fds);
	close(fds[0]);
	r = relay_reply(sock, why, sizeof(why), &denied);
	if (r != 0) {
		(void)unlink(path);
		if (!denied)
			msg("fatal: could not fetch from '%s': %s", url, why);
		_exit(r);
	}
	{
		char head[GITRELAY_PACK_HDR_MAX];
		ssize_t n = pread(fd, head, sizeof(head), 0);
		uint64_t pl = 0, il = 0;
		size_t hl = 0;

		r = n > 0 ? gitrelay_parse_pack_header(head, (size_t)n, &pl, &il, &hl) : 0;
		if (r < 0) {
			(void)unlink(path);
			die(1, "the objects from the host are not in a form this helper knows");
		}
		if (r == 1) {
			install_pack(fd, hl, pl, il, strlen(wants[0]) / 2);
			st.st_size = 0; /* nothing to unbundle */
		} else if (fstat(fd, &st) < 0) {
			st.st_size = 0;
		}
	}
	if (st.st_size > 0) {
		const char *const argv[] = { "git", "bundle", "unbundle", path, NULL };
		static char sink[4096];

		r = run_git(argv, -1, sink, sizeof(sink), NULL);
		if (r != 0) {
			(void)unlink(path);
			die(1, "the bundle from the host could not be unpacked (git bundle unbundle: %d)",
			    r);
		}
	}
	close(fd);
	(void)unlink(path);
	free(path);
	(void)fputs("\n", stdout);
	(void)fflush(stdout);
}

struct push_item {
	struct gitrelay_cmd c;
	char oid[WIRE_GIT_OID_MAX + 1];
};

/* Which remote tips we have locally: they bound the thin bundle. */
static size_t present_tips(char (*out)[WIRE_GIT_OID_MAX + 2])
{
	static char buf[(WIRE_GIT_OID_MAX + 2) * WIRE_GIT_MAX_HAVES], res[RS_MAX_OUT];
	const char *const argv[] = { "git", "cat-file", "--batch-check=%(objectname)", NULL };
	size_t n = 0, o = 0;
	int p[2];
	pid_t pid;

	for (size_t i = 0; i < n_remote_tips; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s\n", remote_tips[i]);
	if (o == 0 || pipe2(p, O_CLOEXEC) < 0)
		return 0;
	/* Feed the tips from a child so a large list cannot deadlock us. */
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		(void)!write(p[1], buf, o);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || run_git(argv, p[0], res, sizeof(res), NULL) != 0) {
		close(p[0]);
		return 0;
	}
	close(p[0]);
	(void)waitpid(pid, NULL, 0);
	for (char *l = strtok(res, "\n"); l && n < WIRE_GIT_MAX_HAVES; l = strtok(NULL, "\n"))
		if (wire_git_oid_valid(l, strlen(l)))
			(void)snprintf(out[n++], WIRE_GIT_OID_MAX + 2, "%s", l);
	return n;
}

static void cmd_push(const struct gitrelay_cmd *first)
{
	static struct push_item items[WIRE_GIT_MAX_UPDATES];
	static struct wire_git_update ups[WIRE_GIT_MAX_UPDATES];
	static char tips[WIRE_GIT_MAX_HAVES][WIRE_GIT_OID_MAX + 2];
	static char out[RS_MAX_OUT];
	struct wire_git_request req = { .op = WIRE_GIT_PUSH, .updates = ups,
					.flags = opt_push_flags };
	char line[RS_MAX_LINE], why[WIRE_MAX_MESSAGE];
	struct gitrelay_cmd c = *first;
	size_t n = 0, n_tips, n_new = 0, len;
	int fds[WIRE_GIT_FDS], p[2], sock, r, bfd = -1;
	char *bundle = NULL, *status;
	bool denied;

	for (;;) {
		if (c.kind != GITRELAY_CMD_PUSH)
			die(1, "unexpected command in a push batch");
		if (n < WIRE_GIT_MAX_UPDATES)
			items[n++].c = c;
		else
			die(1, "too many refs in one push (at most %d)", WIRE_GIT_MAX_UPDATES);
		if (!fgets(line, sizeof(line), stdin))
			die(1, "unexpected end of input from git");
		line[strcspn(line, "\n")] = '\0';
		if (gitrelay_parse_cmd(line, &c) < 0)
			die(1, "cannot read git's command '%.64s'", line);
		if (c.kind == GITRELAY_CMD_END)
			break;
	}
	/* Resolve the sources and name them with temporary refs: a bundle
	 * carries refs, and a source may be any revision. */
	for (size_t i = 0; i < n; i++) {
		struct push_item *it = &items[i];
		char rev[WIRE_GIT_MAX_REF + 16], ref[64];

		ups[i] = (struct wire_git_update){ .dst = it->c.dst, .force = it->c.force,
						   .delete_ref = it->c.src[0] == '\0' };
		if (ups[i].delete_ref) {
			ups[i].force = false;
			continue;
		}
		(void)snprintf(rev, sizeof(rev), "%s^{object}", it->c.src);
		{
			const char *const argv[] = { "git", "rev-parse", "--verify", "-q", rev, NULL };

			if (run_git(argv, -1, out, sizeof(out), &len) != 0)
				die(1, "src refspec '%s' does not match any object", it->c.src);
		}
		out[strcspn(out, "\n")] = '\0';
		if (!wire_git_oid_valid(out, strlen(out)))
			die(1, "cannot resolve '%s'", it->c.src);
		(void)snprintf(ups[i].src, sizeof(ups[i].src), "%s", out);
		(void)snprintf(ref, sizeof(ref), RS_TMP_REFS "%zu", i);
		{
			const char *const argv[] = { "git", "update-ref", "--no-deref", ref, ups[i].src,
						     NULL };

			if (run_git(argv, -1, NULL, 0, NULL) != 0)
				die(1, "cannot create the temporary ref '%s'", ref);
		}
		n_new++;
	}
	req.n_updates = n;

	if (n_new > 0) {
		/* git bundle create FILE REFS... --not TIPS...: exactly what the
		 * remote lacks. Nothing new (a branch at a commit the remote has)
		 * means no bundle. */
		const char **argv = xalloc(NULL, 8 + n + WIRE_GIT_MAX_HAVES, sizeof(char *));
		char (*refs)[64] = xalloc(NULL, n, 64);
		size_t a = 0, a_revs;

		n_tips = present_tips(tips);
		argv[a++] = "git";
		argv[a++] = "rev-list";
		argv[a++] = "--objects";
		a_revs = a;
		for (size_t i = 0; i < n; i++)
			if (!ups[i].delete_ref) {
				(void)snprintf(refs[i], 64, RS_TMP_REFS "%zu", i);
				argv[a++] = refs[i];
			}
		/* ^TIP, not --not: bundle create takes no options after its
		 * revisions. */
		for (size_t i = 0; i < n_tips; i++) {
			memmove(tips[i] + 1, tips[i], strlen(tips[i]) + 1);
			tips[i][0] = '^';
			argv[a++] = tips[i];
		}
		argv[a] = NULL;
		r = run_git(argv, -1, out, sizeof(out), &len);
		if (r != 0)
			die(1, "cannot compute what the remote lacks (git rev-list: %d)", r);
		if (len > 0) {
			bundle = git_dir_tmp("push");
			bfd = mkstemp(bundle);
			if (bfd < 0)
				die(1, "cannot create a temporary file: %s", strerror(errno));
			close(bfd);
			/* same revisions, as "bundle create FILE REVS... --not TIPS" */
			memmove(argv + 4, argv + a_revs, (a - a_revs + 1) * sizeof(char *));
			argv[1] = "bundle";
			argv[2] = "create";
			argv[3] = bundle;
			r = run_git(argv, -1, out, sizeof(out), NULL);
			if (r != 0)
				die(1, "cannot build the bundle to push (git bundle create: %d)", r);
			bfd = open(bundle, O_RDONLY | O_CLOEXEC);
			if (bfd < 0)
				die(1, "cannot open the bundle: %s", strerror(errno));
		}
		free(argv);
		free(refs);
	}
	for (size_t i = 0; i < n; i++)
		if (!ups[i].delete_ref) {
			char ref[64];
			const char *const argv[] = { "git", "update-ref", "-d", ref, NULL };

			(void)snprintf(ref, sizeof(ref), RS_TMP_REFS "%zu", i);
			(void)run_git(argv, -1, NULL, 0, NULL);
		}

	if (pipe2(p, O_CLOEXEC) < 0)
		die(1, "pipe: %s", strerror(errno));
	fds[0] = bfd >= 0 ? bfd : devnull_fd();
	fds[1] = p[1];
	fds[2] = STDERR_FILENO;
	sock = relay_send(&req, fds);
	close(fds[0]);
	close(p[1]);
	if (bundle) {
		(void)unlink(bundle);
		free(bundle);
	}
	status = slurp(p[0], RS_MAX_OUT, &len);
	close(p[0]);
	r = relay_reply(sock, why, sizeof(why), &denied);
	if (r != 0) {
		/* Every ref fails with the reason; git prints them as rejected. */
		for (size_t i = 0; i < n; i++)
			printf("error %s %s\n", ups[i].dst,
			       denied ? "denied by the host's policy" : "refused by sandbox-execd");
		printf("\n");
		(void)fflush(stdout);
		/* git reports the rejected refs and fails the push itself. */
		_exit(0);
	}
	/* The daemon's per-ref status lines, checked and passed on. */
	for (char *l = strtok(status, "\n"); l; l = strtok(NULL, "\n"))
		if ((strncmp(l, "ok refs/", 8) == 0 || strncmp(l, "error refs/", 11) == 0))
			printf("%s\n", l);
	printf("\n");
	(void)fflush(stdout);
	free(status);
}

int main(int argc, char **argv)
{
	char line[RS_MAX_LINE];

	if (argc < 2 || argc > 3)
		die(EXIT_WRAP_USAGE, "usage: git-remote-sandbox REMOTE [URL] (run by git)");
	url = argv[argc - 1];
	{
		struct gitrelay_url u;
		int r = gitrelay_url_parse(url, &u);

		if (r == -EPROTONOSUPPORT)
			die(EXIT_WRAP_USAGE, "'%s': only https://, ssh:// and host:path remotes go "
					     "through the sandbox (git://, http://, file:// and "
					     "helper:: transports do not)",
			    url);
		if (r == -EACCES)
			die(EXIT_WRAP_USAGE, "'%s': credentials do not belong in a remote URL here: the "
					     "host adds its own",
			    url);
		if (r < 0)
			die(EXIT_WRAP_USAGE, "'%s' is not a network remote the sandbox can relay (local "
					     "paths: write them as ./dir or /abs/dir)",
			    url);
	}
	(void)signal(SIGPIPE, SIG_IGN);
	while (fgets(line, sizeof(line), stdin)) {
		struct gitrelay_cmd c;
		int r;

		if (!strchr(line, '\n') && !feof(stdin))
			die(1, "command from git too long");
		line[strcspn(line, "\n")] = '\0';
		r = gitrelay_parse_cmd(line, &c);
		if (r == -EOPNOTSUPP)
			die(1, "git asked for '%.64s', which this helper does not offer", line);
		if (r < 0)
			die(1, "cannot read git's command '%.64s'", line);
		switch (c.kind) {
		case GITRELAY_CMD_END:
			return 0;
		case GITRELAY_CMD_CAPABILITIES:
			(void)fputs("fetch\npush\noption\ncheck-connectivity\n\n", stdout);
			(void)fflush(stdout);
			break;
		case GITRELAY_CMD_OPTION:
			cmd_option(&c);
			break;
		case GITRELAY_CMD_LIST:
			cmd_list(false);
			break;
		case GITRELAY_CMD_LIST_FOR_PUSH:
			cmd_list(true);
			break;
		case GITRELAY_CMD_FETCH:
			cmd_fetch(&c);
			break;
		case GITRELAY_CMD_PUSH:
			cmd_push(&c);
			break;
		case GITRELAY_CMD_KIND_MAX:
		default:
			die(1, "unexpected command");
		}
	}
	return 0;
}
