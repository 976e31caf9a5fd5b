/* SPDX-License-Identifier: MIT */
/* File helpers for PID 1: read a whole file without following a final
 * symlink, and replace a file atomically (temp file in the same directory,
 * fsync, rename, fsync the directory). */
#ifndef CS_INIT_FILEIO_H
#define CS_INIT_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Reads the regular file dirfd/path (O_NOFOLLOW on the last component) into
 * a malloc'ed, NUL-terminated buffer. Returns 0 and sets *ret_buf and *ret_len;
 * -EFBIG above max bytes, -EINVAL if not a regular file, -errno otherwise. */
int fileio_read(int dirfd, const char *path, size_t max, char **ret_buf, size_t *ret_len);

/* Same, from an open fd (read from offset 0 with pread). */
int fileio_read_fd(int fd, size_t max, char **ret_buf, size_t *ret_len);

/* Writes buf to a new file with a random name in dirfd, sets its owner and
 * mode (fchown/fchmod on the fd, so the mode is exact whatever the umask),
 * fsyncs it, renames it over name (replacing a file or a symlink itself,
 * never its target) and fsyncs dirfd. The temp file is removed on failure.
 * Returns 0 or a negative errno (-EISDIR when name is a directory). */
int fileio_replace(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
		   uid_t uid, gid_t gid);

/* Opens the directory at an absolute path with openat2(RESOLVE_NO_SYMLINKS):
 * no symlink anywhere in the path is followed. Returns an O_CLOEXEC fd or a
 * negative errno (-ELOOP for a symlink, -ENOTDIR for a non-directory). */
int fileio_open_dir_nofollow(const char *path);

#endif
