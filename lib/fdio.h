/* SPDX-License-Identifier: MIT */
/* Whole-buffer I/O on an fd the caller opened and checked: read to EOF
 * under a cap, write everything. The caller keeps the policy (open flags,
 * owner, mode, regular file); these only loop over read/write. */
#ifndef CS_FDIO_H
#define CS_FDIO_H

#include <stddef.h>

/* Flags of fdio_read_capped(). */
#define FDIO_PREAD (1u << 0) /* read from offset 0 with pread: the fd's offset is unused */
#define FDIO_WIPE (1u << 1)  /* explicit_bzero the buffer before freeing it on failure */

/* Reads fd to EOF into a malloc'ed buffer of max + 1 bytes, NUL-terminated
 * after the data (the buffer is not shrunk: callers that wipe a secret on
 * free know its size). Reads one byte past max to tell "exactly max" from
 * "more". EINTR is retried. Returns 0 and sets *ret_buf (owned by the
 * caller) and *ret_len; -EFBIG when fd has more than max bytes, -ENOMEM,
 * or read's -errno; outputs untouched on failure. */
int fdio_read_capped(int fd, size_t max, unsigned flags, char **ret_buf, size_t *ret_len);

/* Writes all of buf[0..len) to fd, retrying short writes and EINTR (a
 * blocking fd: EAGAIN is an error). Returns 0 or write's -errno. */
int fdio_write_all(int fd, const void *buf, size_t len);

#endif
