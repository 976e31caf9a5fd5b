/* SPDX-License-Identifier: MIT */
/* Step 5: the settings lock. Claude Code's managed settings outrank user,
 * project and local settings, so the chosen profile installed as
 * /etc/claude-code/managed-settings.json (root:root 0444, in root-owned
 * directories no one else can write) is what the agent runs under. The
 * same bytes are mirrored to ~devuser/.claude/settings.json and an empty
 * object pre-claims ~devuser/.claude/settings.local.json, both root-owned
 * 0444, re-installed at every start whatever the agent did to them. */
#ifndef CS_INIT_SETTINGS_H
#define CS_INIT_SETTINGS_H

#include <stddef.h>
#include <sys/types.h>

#define SETTINGS_MANAGED_DIR "claude-code" /* under /etc */
#define SETTINGS_MANAGED_FILE "managed-settings.json"
#define SETTINGS_USER_DIR ".claude"
#define SETTINGS_USER_FILE "settings.json"
#define SETTINGS_LOCAL_FILE "settings.local.json"
#define SETTINGS_LOCAL_CONTENT "{}\n"
#define SETTINGS_FILE_MODE 0444
#define SETTINGS_USER_DIR_MODE 0700

/* Installs and verifies the three files (see above) from profile[0..len).
 * home is devuser's home (absolute), uid/gid its new IDs. Returns 0, or a
 * negative errno after printing the one-line failure. */
int settings_lock(const char *home, uid_t uid, gid_t gid, const char *profile, size_t len);

#endif
