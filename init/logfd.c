/* SPDX-License-Identifier: MIT */
#include "logfd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macros.h"

int logfd_fill_stdio(void)
{
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		if (errno != EBADF)
			return -errno;
		/* The lowest free number: fd itself, as the lower ones are open. */
		n = open("/dev/null", O_RDWR | O_NOCTTY);
		if (n < 0)
			return -errno;
		if (n != fd) {
			(void)close(n);
			return -EBADF;
		}
	}
	return 0;
}

int logfd_reopen_stderr(int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct stat st, nst;
	int flags;

	*ret_fd = -1;
	if (fstat(STDERR_FILENO, &st) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
		return 0;
	flags = fcntl(STDERR_FILENO, F_GETFL);
	if (flags < 0)
		return -errno;
	if (flags & O_NONBLOCK)
		return 0;
	fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (flags & O_APPEND));
	if (fd < 0)
		return -errno;
	/* The reopened file must be what fd 2 is. */
	if (fstat(fd, &nst) < 0)
		return -errno;
	if (nst.st_dev != st.st_dev || nst.st_ino != st.st_ino || nst.st_rdev != st.st_rdev)
		return -ESTALE;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int logfd_install_stderr(int fd)
{
	_cleanup_close_ int owned = fd;

	if (owned < 0)
		return 0;
	/* PID 1 never execs again: fd 2 needs no close-on-exec. */
	if (dup3(owned, STDERR_FILENO, 0) < 0)
		return -errno;
	return 0;
}
