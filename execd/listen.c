/* SPDX-License-Identifier: MIT */
/* The listening socket of sandbox-execd and its per-launch token.
 *
 * The socket sits in a directory that only the user can enter (0700, owned
 * by the daemon's uid): the directory, not the socket's own mode, is what
 * keeps other local users out, because connect() needs search permission on
 * every directory of the path. The launcher mounts that directory read-only
 * into the container at /run/code-sandbox/. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "execd.h"
#include "log.h"
#include "decimal.h"
#include "macros.h"

#define LISTEN_BACKLOG 128
#define LISTEN_SD_FD 3 /* SD_LISTEN_FDS_START */

int listen_check_private_dir(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return log_error_errno(-errno, "Cannot stat socket directory '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return log_error_errno(-ENOTDIR, "Socket directory '%s' is not a directory (or is a symlink)",
				       dir);
	if (st.st_uid != geteuid())
		return log_error_errno(-EPERM, "Socket directory '%s' is owned by uid %u, not by us (%u)",
				       dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return log_error_errno(-EPERM,
				       "Socket directory '%s' has mode %04o: others could reach the "
				       "socket and the token; it must be 0700",
				       dir, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int ensure_private_dir(const char *dir)
{
	/* EEXIST: an existing directory is accepted only after the checks. */
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "Cannot create socket directory '%s': %s", dir, strerror(errno));
	return listen_check_private_dir(dir);
}

/* A whole string of decimal digits (lib/decimal.c); every failure is
 * -EINVAL. */
static int parse_ulong(const char *s, unsigned long *ret)
{
	uint64_t v;

	if (!s || decimal_parse(s, strlen(s), ULONG_MAX, &v) < 0)
		return -EINVAL;
	*ret = (unsigned long)v;
	return 0;
}

/* systemd socket activation (sd_listen_fds(3) protocol, without libsystemd):
 * LISTEN_PID must be our pid and LISTEN_FDS exactly 1; the fd must be a
 * listening AF_UNIX stream socket. Returns 1 when activated, 0 when the
 * variables are absent, < 0 on a malformed hand-over. */
static int take_activated_socket(int *ret_fd, char **ret_path)
{
	const char *e_pid = getenv("LISTEN_PID"), *e_fds = getenv("LISTEN_FDS");
	unsigned long pid, n;
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int v = 0;
	socklen_t vl = sizeof(v);

	if (!e_pid && !e_fds)
		return 0;
	if (parse_ulong(e_pid, &pid) < 0 || parse_ulong(e_fds, &n) < 0)
		return log_error_errno(-EINVAL, "Malformed LISTEN_PID/LISTEN_FDS");
	if (pid != (unsigned long)getpid()) {
		/* Meant for another process (inherited): not ours. */
		(void)unsetenv("LISTEN_PID");
		(void)unsetenv("LISTEN_FDS");
		(void)unsetenv("LISTEN_FDNAMES");
		return 0;
	}
	if (n != 1)
		return log_error_errno(-EINVAL, "Expected exactly one socket from systemd, got %lu", n);
	if (getsockopt(LISTEN_SD_FD, SOL_SOCKET, SO_ACCEPTCONN, &v, &vl) < 0 || !v)
		return log_error_errno(-ENOTSOCK, "fd 3 from systemd is not a listening socket");
	vl = sizeof(v);
	if (getsockopt(LISTEN_SD_FD, SOL_SOCKET, SO_TYPE, &v, &vl) < 0 || v != SOCK_STREAM)
		return log_error_errno(-ESOCKTNOSUPPORT, "fd 3 from systemd is not a stream socket");
	if (getsockname(LISTEN_SD_FD, (struct sockaddr *)&sa, &len) < 0 || sa.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0] != '/')
		return log_error_errno(-EAFNOSUPPORT,
				       "fd 3 from systemd is not a Unix socket with a path");
	sa.sun_path[sizeof(sa.sun_path) - 1] = '\0';
	if (fcntl(LISTEN_SD_FD, F_SETFD, FD_CLOEXEC) < 0)
		return log_error_errno(-errno, "Cannot set FD_CLOEXEC: %s", strerror(errno));
	(void)unsetenv("LISTEN_PID");
	(void)unsetenv("LISTEN_FDS");
	(void)unsetenv("LISTEN_FDNAMES");
	*ret_path = strdup(sa.sun_path);
	if (!*ret_path)
		return -ENOMEM;
	*ret_fd = LISTEN_SD_FD;
	return 1;
}

static int bind_socket(const char *path, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;

	if (strlen(path) >= sizeof(sa.sun_path))
		return log_error_errno(-ENAMETOOLONG, "Socket path '%s' is too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* A stale socket from an earlier run: remove it, but nothing else. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return log_error_errno(-EEXIST, "'%s' exists and is not a socket", path);
		if (unlink(path) < 0)
			return log_error_errno(-errno, "Cannot remove stale socket '%s': %s", path, strerror(errno));
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return log_error_errno(-errno, "Cannot create socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return log_error_errno(-errno, "Cannot bind '%s': %s", path, strerror(errno));
	if (chmod(path, 0600) < 0)
		return log_error_errno(-errno, "Cannot chmod '%s': %s", path, strerror(errno));
	if (listen(fd, LISTEN_BACKLOG) < 0)
		return log_error_errno(-errno, "Cannot listen on '%s': %s", path, strerror(errno));
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int listen_write_token(const char *path, char *ret_token, size_t token_len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[EXECD_TOKEN_BYTES];
	char line[EXECD_TOKEN_HEX + 1];
	_cleanup_close_ int fd = -1;
	struct stat st;
	size_t got = 0;

	if (token_len < EXECD_TOKEN_HEX + 1)
		return -ENOBUFS;
	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return log_error_errno(-errno, "getrandom() failed: %s", strerror(errno));
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		ret_token[2 * i] = hex[raw[i] >> 4];
		ret_token[2 * i + 1] = hex[raw[i] & 0xf];
	}
	ret_token[EXECD_TOKEN_HEX] = '\0';
	explicit_bzero(raw, sizeof(raw));

	/* A token from an earlier launch is replaced, never reused; O_EXCL
	 * and O_NOFOLLOW so nothing pre-planted is written through. */
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return log_error_errno(-EEXIST, "Token path '%s' exists and is not a file", path);
		if (unlink(path) < 0)
			return log_error_errno(-errno, "Cannot remove old token '%s': %s", path, strerror(errno));
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return log_error_errno(-errno, "Cannot create token file '%s': %s", path, strerror(errno));
	memcpy(line, ret_token, EXECD_TOKEN_HEX);
	line[EXECD_TOKEN_HEX] = '\n';
	if (write(fd, line, sizeof(line)) != (ssize_t)sizeof(line) || fsync(fd) < 0)
		return log_error_errno(-EIO, "Cannot write token file '%s'", path);
	explicit_bzero(line, sizeof(line));
	return 0;
}

int listen_setup(const struct execdconf *conf, char *ret_token, size_t token_len, int *ret_fd,
		 char **ret_socket_path, char **ret_token_path, bool *ret_activated)
{
	_cleanup_free_ char *path = NULL, *dir = NULL, *token = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	r = take_activated_socket(&fd, &path);
	if (r < 0)
		return r;
	*ret_activated = r > 0;
	if (!path) {
		if (conf->socket)
			path = strdup(conf->socket);
		else {
			const char *rt = getenv("XDG_RUNTIME_DIR");

			if (!rt || rt[0] != '/')
				return log_error_errno(-EINVAL,
						       "XDG_RUNTIME_DIR is not set and execd.conf has no "
						       "'socket = /path/execd.sock'");
			if (asprintf(&path, "%s/code-sandbox/execd.sock", rt) < 0)
				path = NULL;
		}
		if (!path)
			return -ENOMEM;
	}
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	{
		char *slash = strrchr(dir, '/');

		if (!slash || slash == dir)
			/* cppcheck-suppress memleak ; freed by its cleanup attribute */
			return log_error_errno(-EINVAL, "Socket path '%s' must be inside a directory", path);
		*slash = '\0';
	}
	r = *ret_activated ? listen_check_private_dir(dir) : ensure_private_dir(dir);
	if (r < 0)
		return r;
	if (conf->token_file)
		token = strdup(conf->token_file);
	else if (asprintf(&token, "%s/token", dir) < 0)
		token = NULL;
	if (!token)
		return -ENOMEM;
	/* The token exists before the socket does: a client that sees the
	 * socket can always read the token that goes with it. */
	r = listen_write_token(token, ret_token, token_len);
	if (r < 0)
		return r;
	if (!*ret_activated) {
		r = bind_socket(path, &fd);
		if (r < 0)
			return r;
	}
	*ret_fd = TAKE_FD(fd);
	*ret_socket_path = TAKE_PTR(path);
	*ret_token_path = TAKE_PTR(token);
	return 0;
}
