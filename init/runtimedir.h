/* SPDX-License-Identifier: MIT */
/* The read-only root's few writable files. With `--read-only` the image
 * ships /etc/passwd, /etc/group and /etc/claude-code as symlinks into
 * RUNTIMEDIR_PATH, a root-owned tmpfs the launcher mounts (or, on a
 * writable root, the image's own root-owned directory), and keeps the
 * pristine account files under RUNTIMEDIR_IMAGE_ETC. sandbox-init fills the
 * runtime directory at every start (SECURITY.md, "Writable paths"). On an
 * image whose /etc files are plain files nothing here is used. */
#ifndef CS_INIT_RUNTIMEDIR_H
#define CS_INIT_RUNTIMEDIR_H

#include <stdbool.h>

#define RUNTIMEDIR_PARENT "/run"
#define RUNTIMEDIR_NAME "sandbox-init"
#define RUNTIMEDIR_PATH RUNTIMEDIR_PARENT "/" RUNTIMEDIR_NAME
#define RUNTIMEDIR_IMAGE_ETC "/etc/code-sandbox/image"

/* True when /etc/NAME (name without a slash) is a symlink, that is the image
 * moved NAME into the runtime directory. The link's target is checked by
 * runtimedir_check_link() before anything is written. */
bool runtimedir_is_linked(const char *name);

/* True when /etc/NAME is a symlink to exactly RUNTIMEDIR_PATH/NAME. */
bool runtimedir_is_runtime_link(const char *name);

/* The file step 2 reads for /etc/NAME: RUNTIMEDIR_IMAGE_ETC/NAME when
 * /etc/NAME is linked, else /etc/NAME. etc_path is "/etc/NAME"; the result
 * is etc_path or a static string. */
const char *runtimedir_source(const char *etc_path);

/* 0 if /etc/NAME is a symlink to exactly RUNTIMEDIR_PATH/NAME; else a
 * negative errno after the one-line failure of step (-ELOOP: it points
 * elsewhere). */
int runtimedir_check_link(const char *step, const char *name);

/* Opens RUNTIMEDIR_PATH, creating it (root 0755) in a root-owned /run when
 * missing, and makes sure it is a root-owned directory writable by no one
 * else (a tmpfs mounted with the kernel's default mode 1777 is tightened to
 * 0755): whoever could write it could swap the files the links reach. No
 * symlink on the way is followed. Returns an O_CLOEXEC fd, or a negative
 * errno after the one-line failure of step. */
int runtimedir_open(const char *step);

#endif
