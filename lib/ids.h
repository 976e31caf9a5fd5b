/* SPDX-License-Identifier: MIT */
/* HOST_UID / HOST_GID validation. Pure: works on strings and on the text of
 * the image's group file, never on the live system. */
#ifndef CS_IDS_H
#define CS_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Longest account or group name we accept (useradd's limit is 32). */
#define IDS_NAME_MAX 32
/* The largest valid ID: (uid_t)-1 means "no change" to chown() and setresuid(). */
#define IDS_ID_MAX 4294967294U

/* The largest ID accepted for HOST_UID/HOST_GID: 4294967294 is (uid_t)-2,
 * the 32-bit "nobody" of NFS and some file systems. */
#define IDS_HOST_ID_MAX 4294967293U
/* The kernel's default overflow ID (nobody/nogroup): what a process or a
 * file system shows for an ID it cannot map. */
#define IDS_KERNEL_OVERFLOW_ID 65534U

/* Parses a decimal ID: digits only (no sign, no space, no trailing junk),
 * at most IDS_ID_MAX. Returns 0 and sets *ret_id; -EINVAL when empty or not
 * a plain decimal number; -ERANGE when too large. 0 is returned as is: use
 * ids_check_host_id() to refuse it. */
int ids_parse_id(const char *s, unsigned *ret_id);

/* Whether id may become devuser's UID or GID. Refused: 0 (root), 65534
 * (nobody/nogroup, the kernel's default overflow ID), 65535 ((uint16_t)-1,
 * "no ID" to 16-bit interfaces), 4294967294 and 4294967295 ((uid_t)-2 and
 * -1), and each of overflow_ids[0..n) (the running kernel's overflow IDs;
 * may be NULL). Files owned by such an ID are not the agent's alone: every
 * unmapped owner shows as the overflow ID. Returns 0, or -EPERM and a
 * static reason in *reterr_why. Pure. */
int ids_check_host_id(unsigned id, const unsigned *overflow_ids, size_t n, const char **reterr_why);

/* True if name is one of the groups whose members gain privilege over the
 * machine or other users (root, sudo, wheel, adm, shadow, disk, docker, ...). */
bool ids_group_name_is_privileged(const char *name);

/* Looks gid up in group_text (the bytes of an /etc/group file, len bytes,
 * need not be NUL-terminated) and reports whether a group holding that GID
 * is privileged by name. Returns 1 and copies that group's name into
 * ret_name (IDS_NAME_MAX + 1 bytes) if so, 0 if not (the GID may be
 * unknown). Malformed lines are ignored. */
int ids_gid_is_privileged(const char *group_text, size_t len, unsigned gid, char *ret_name);

#endif
