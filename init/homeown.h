/* SPDX-License-Identifier: MIT */
/* Step 4b: devuser owns its home. Never follows a symlink, never crosses
 * into another mount (bind mounts of the same filesystem included), never
 * touches /workspace, skips what is already right, bounded depth.
 *
 * Warm starts: after a complete walk PID 1 leaves a stamp in the home,
 * HOMEOWN_STAMP, owned by root:root, mode 0444, single link, containing
 * "UID:GID\n". If the stamp is intact and names the wanted IDs and the home
 * itself is owned right, the walk is skipped. devuser cannot forge it: it
 * has no CAP_CHOWN and so cannot create or give away a root-owned file,
 * and a hard link to some other root-owned file fails the single-link
 * check. Deleting or renaming it (devuser owns the directory) only forces
 * the next start to walk the whole tree again. */
#ifndef CS_INIT_HOMEOWN_H
#define CS_INIT_HOMEOWN_H

#include <sys/types.h>

#define HOMEOWN_STAMP ".code-sandbox-owner"
#define HOMEOWN_WORKSPACE "/workspace"
/* Deeper directories are left alone (and no stamp is written). */
#define HOMEOWN_MAX_DEPTH 128

/* Makes home (an absolute path) and everything below it in the same mount
 * owned by uid:gid, as described above; creates home (0755) if missing.
 * Returns 0, or a negative errno after printing the one-line failure. */
int homeown_fix(const char *home, uid_t uid, gid_t gid);

#endif
