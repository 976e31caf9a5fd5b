/* SPDX-License-Identifier: MIT */
/* See client.h. */
#include "client.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int client_send(const char *path, const uint8_t *frame, size_t len, const int *fds, size_t n_fds)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * CLIENT_MAX_FDS)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)frame, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t off = 0;
	int sock, r;

	if (n_fds > CLIENT_MAX_FDS)
		return -EINVAL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		(void)close(sock);
		return r;
	}
	memset(ctl.b, 0, sizeof(ctl.b));
	if (n_fds > 0) {
		struct cmsghdr *c;

		mh.msg_control = ctl.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	/* The fds go with the first chunk; the rest follows with send(). */
	while (off < len) {
		ssize_t k = off == 0 ? sendmsg(sock, &mh, MSG_NOSIGNAL)
				     : send(sock, frame + off, len - off, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			/* Answered early (busy) and closed: the reply is readable. */
			if (errno == EPIPE || errno == ECONNRESET)
				break;
			r = -errno;
			(void)close(sock);
			return r;
		}
		off += (size_t)k;
	}
	return sock;
}
