/* SPDX-License-Identifier: MIT */
/* Dropping privilege: the agent's child drops to the host user with no
 * capabilities at all, and PID 1 keeps only what its loop needs. */
#ifndef CS_INIT_PRIVDROP_H
#define CS_INIT_PRIVDROP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PRIVDROP_MSG_MAX 160

/* In the agent's child, as root: no supplementary groups, then GID, then
 * UID (libcap-ng, all three of real/effective/saved), every capability set
 * and the bounding set cleared, ambient set cleared, NO_NEW_PRIVS set.
 * Returns 0, or a negative errno with a reason in msg (msg_size bytes). */
int privdrop_child(uid_t uid, gid_t gid, char *msg, size_t msg_size);

/* Checks, from the kernel's point of view, that privdrop_child() worked:
 * real/effective/saved UID and GID, no supplementary groups, permitted,
 * effective, inheritable, ambient and bounding sets empty, NO_NEW_PRIVS on,
 * and setuid(0) failing with EPERM. Returns 0, or -EPERM with what is wrong
 * in msg. */
int privdrop_verify(uid_t uid, gid_t gid, char *msg, size_t msg_size);

/* PID 1 after the fork: keeps CAP_KILL plus the capabilities in keep_mask
 * (bit N = capability N) in its effective and permitted sets, clears the
 * inheritable and ambient sets, and removes everything else from the
 * bounding set too. Returns 0 or a negative errno. */
int privdrop_pid1(uint64_t keep_mask);

#endif
