/* SPDX-License-Identifier: MIT */
/* Rewrites the TEXT of /etc/passwd and /etc/group in memory so that one
 * account (devuser) gets the host's UID and GID. Pure: the caller reads the
 * files and writes the results back atomically.
 *
 * Rules: only the numeric ID fields of the lines that must change are
 * rewritten; every other byte (comments, NIS "+" lines, malformed lines,
 * order, missing final newline) is kept. An account or group that already
 * holds the wanted ID moves to the smallest free ID >= USERDB_FREE_ID_MIN,
 * never to the user's old ID (files it owned elsewhere in the image would
 * otherwise change hands). Accounts whose primary group moved follow it. */
#ifndef CS_USERDB_H
#define CS_USERDB_H

#include <stdbool.h>
#include <stddef.h>

#include "ids.h"

#define USERDB_MAX_MOVES 16
#define USERDB_FIELD_MAX 1024
#define USERDB_FREE_ID_MIN 1000U
/* nobody/nogroup and the 16-bit (uid_t)-1 are never handed out. */
#define USERDB_NOBODY_ID 65534U

struct userdb_move {
	bool is_group;
	char name[IDS_NAME_MAX + 1];
	unsigned from, to;
};

struct userdb_user {
	unsigned uid, gid;
	char home[USERDB_FIELD_MAX + 1];
	char shell[USERDB_FIELD_MAX + 1];
};

struct userdb_remap {
	unsigned old_uid, old_gid; /* the user's IDs before */
	unsigned uid, gid;         /* after */
	char home[USERDB_FIELD_MAX + 1];
	char shell[USERDB_FIELD_MAX + 1];
	char group_name[IDS_NAME_MAX + 1]; /* the user's primary group */
	struct userdb_move moves[USERDB_MAX_MOVES];
	size_t n_moves;
	/* New file contents (malloc'ed, owned, not NUL-terminated; a NUL is
	 * appended for convenience) and whether they differ from the input. */
	char *passwd, *group;
	size_t passwd_len, group_len;
	bool passwd_changed, group_changed;
};

/* Finds user's unique valid line in passwd_text. Returns 0 and fills *ret;
 * -ENOENT if absent, -EEXIST if several lines name it, -ENAMETOOLONG if the
 * home or shell field exceeds USERDB_FIELD_MAX, -EINVAL for a NUL byte. */
int userdb_lookup(const char *passwd_text, size_t passwd_len, const char *user,
		  struct userdb_user *ret);

/* Computes the remap described above. On success returns 0 and fills *ret
 * (free with userdb_remap_free()); on failure *ret is untouched: -ENOENT
 * (user absent), -EEXIST (user listed twice), -ENOSPC (no free ID or more
 * than USERDB_MAX_MOVES moves), -EINVAL (NUL byte in a text, or an ID above
 * IDS_ID_MAX), -ENOMEM. */
int userdb_remap(const char *passwd_text, size_t passwd_len, const char *group_text,
		 size_t group_len, const char *user, unsigned uid, unsigned gid,
		 struct userdb_remap *ret);

void userdb_remap_free(struct userdb_remap *r);

/* Checks that home is a directory PID 1 may re-own recursively: an
 * absolute, normalised path ("/" separated, no empty, "." or ".."
 * component, no trailing "/"), not "/", not inside /proc, /sys, /dev or
 * /workspace, and not an ancestor of (or equal to) a system directory
 * (/etc, /usr, /bin, /sbin, /lib*, /boot, /run, /var, /opt, /tmp, /root,
 * /workspace). A mistake in the image's passwd file must not hand the
 * agent the system. Returns true if safe; else false and *reterr (if not
 * NULL) a static reason. */
bool userdb_home_is_safe(const char *home, const char **reterr);

#endif
