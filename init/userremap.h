/* SPDX-License-Identifier: MIT */
/* Step 4a: write the remapped /etc/passwd and /etc/group computed in step 2. */
#ifndef CS_INIT_USERREMAP_H
#define CS_INIT_USERREMAP_H

#include "userdb.h"

/* Replaces each changed file atomically (temp file in /etc, fsync,
 * rename), with the original's owner and mode, then reads it back and
 * compares. Unchanged files are not touched. On a read-only root (the
 * image links both files into runtimedir.h's tmpfs) both are written there
 * at every start instead, unchanged ones from the image's copies. Returns
 * 0, or a negative errno after printing the one-line failure. */
int userremap_apply(const struct userdb_remap *rm);

#endif
