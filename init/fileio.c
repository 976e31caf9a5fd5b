/* SPDX-License-Identifier: MIT */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdio.h"
#include "macros.h"

#define TEMP_ATTEMPTS 16
/* ".cs-tmp-" + 16 hex digits + NUL. */
#define TEMP_NAME_MAX 32

int fileio_read_fd(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > max)
		return -EFBIG;
	/* Read to EOF, but never past the size fstat saw: a file growing
	 * under us is an error (-EFBIG) rather than a truncated read. */
	return fdio_read_capped(fd, (size_t)st.st_size, FDIO_PREAD, ret_buf, ret_len);
}

int fileio_read(int dirfd, const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;

	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return fileio_read_fd(fd, max, ret_buf, ret_len);
}

int fileio_replace(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
		   uid_t uid, gid_t gid)
{
	char tmp[TEMP_NAME_MAX];
	_cleanup_close_ int fd = -1;
	int r;

	for (int i = 0; i < TEMP_ATTEMPTS && fd < 0; i++) {
		unsigned long long rnd;

		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return negative_errno();
		(void)snprintf(tmp, sizeof(tmp), ".cs-tmp-%016llx", rnd);
		/* O_EXCL|O_NOFOLLOW: never open something planted under the
		 * name; mode 0 until fchmod, so no one can open it meanwhile. */
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;

	if (fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0) {
		r = -errno;
		goto fail;
	}
	r = fdio_write_all(fd, buf, len);
	if (r < 0)
		goto fail;
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		goto fail;
	}
	/* The rename is durable only once the directory is. */
	if (fsync(dirfd) < 0)
		return -errno;
	return 0;
fail:
	(void)unlinkat(dirfd, tmp, 0);
	return r;
}

int fileio_open_dir_nofollow(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}
