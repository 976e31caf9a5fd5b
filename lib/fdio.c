/* SPDX-License-Identifier: MIT */
#include "fdio.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int fdio_read_capped(int fd, size_t max, unsigned flags, char **ret_buf, size_t *ret_len)
{
	char *buf;
	size_t len = 0;
	int r = 0;

	if (max == SIZE_MAX)
		return -EFBIG;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	while (len <= max) {
		ssize_t n = (flags & FDIO_PREAD) ? pread(fd, buf + len, max + 1 - len, (off_t)len)
						 : read(fd, buf + len, max + 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue; /* a signal handler ran; nothing was read */
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (r == 0 && len > max)
		r = -EFBIG;
	if (r < 0) {
		if (flags & FDIO_WIPE)
			explicit_bzero(buf, max + 1);
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

int fdio_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue; /* a signal handler ran; nothing was written */
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
