/* SPDX-License-Identifier: MIT */
/* The git relay in sandbox-execd (issue 8): the host half of
 * git-remote-sandbox. Per remote URL a cache repository in the daemon's
 * own state directory, created with a configuration the daemon writes;
 * host git only ever runs there, never in the workspace. */
#ifndef CS_EXECD_GITRELAYD_H
#define CS_EXECD_GITRELAYD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct execd;

/* Resolves the git binary, creates the cache directory (0700) and reads
 * the user's global credential and SSH settings. Logs its errors. A daemon
 * whose relay cannot start still serves tools; git requests then fail with
 * an internal error (*d keeps relay == NULL). */
int gitrelay_init(struct execd *d);
void gitrelay_done(struct execd *d);

/* For --check: starts the relay as the daemon would and prints what it
 * found ("# git relay: ..." lines: git, cache directory and bounds, the
 * names of the settings taken from the user's global config). -errno when
 * the relay is configured but cannot start (unusable cache directory). */
int gitrelay_check(struct execd *d);

/* Handles one WIRE_TYPE_GIT frame (frame, len: header included) received
 * on conn with fds[0..*n_fds): decodes, authenticates, decides, audits,
 * runs, replies. Takes the fds (closes them, sets *n_fds = 0). */
void gitrelay_handle(struct execd *d, int conn, const struct ucred *cred, const char *id,
		     const uint8_t *frame, size_t len, int *fds, size_t *n_fds);

#endif
