/* SPDX-License-Identifier: MIT */
/* The socket half both container-side clients share (sandbox-exec and
 * git-remote-sandbox): connect to sandbox-execd and send one encoded frame
 * with its file descriptors. */
#ifndef CS_WRAPPERS_CLIENT_H
#define CS_WRAPPERS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#define CLIENT_MAX_FDS 8

/* Connects to the Unix socket at path and sends frame[0..len) with
 * fds[0..n_fds) as SCM_RIGHTS on the first chunk. A daemon that answered
 * early (busy) and closed before reading everything is not an error: its
 * reply is still readable. Returns the connected socket (O_CLOEXEC), or
 * -ENAMETOOLONG for a path that does not fit, -EINVAL for too many fds,
 * -errno of socket/connect/send. */
int client_send(const char *path, const uint8_t *frame, size_t len, const int *fds, size_t n_fds);

#endif
