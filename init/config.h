/* SPDX-License-Identifier: MIT */
/* sandbox-init's configuration: command line, environment, and the image
 * files it reads, all parsed and validated in step 2 before anything on the
 * system changes. */
#ifndef CS_INIT_CONFIG_H
#define CS_INIT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ids.h"
#include "profile.h"
#include "userdb.h"

#define INIT_USER "devuser"
#define INIT_DEFAULT_COMMAND "claude"
#define INIT_DEFAULT_PROFILE "strict"
#define INIT_PASSWD_PATH "/etc/passwd"
#define INIT_GROUP_PATH "/etc/group"
#define INIT_PROFILE_DIR "/etc/code-sandbox/profiles"
/* Largest /etc/passwd, /etc/group or profile we read. */
#define INIT_FILE_MAX ((size_t)1 << 20)

struct init_config {
	/* Command line. */
	bool check;
	bool seccomp;
	bool test_subreaper;
	const char *allowlist_path; /* --allowlist, for the firewall step; may be NULL */
	char **command;             /* NULL-terminated, points into argv or a static default */

	/* Environment (secure_getenv). */
	bool host_uid_set, host_gid_set;
	unsigned host_uid, host_gid;
	char profile[PROFILE_NAME_MAX + 1];

	/* Image files, read and validated in config_load(). Owned. */
	char *passwd_text, *group_text;
	size_t passwd_len, group_len;
	struct userdb_remap remap; /* devuser's new identity, moved accounts, new file texts */
	char *profile_json;
	size_t profile_len;

	/* Capabilities PID 1 keeps after the fork besides CAP_KILL: a step that
	 * needs one in the loop (the firewall's set refresher: CAP_NET_ADMIN)
	 * sets its bit here before the fork. */
	uint64_t pid1_keep_caps;
};

/* Parses argv into *cfg (defaults first). Returns 0 to go on, 1 when
 * --help/--version printed and the caller should exit 0, or a negative
 * errno after printing the one-line failure (exit EXIT_INIT_USAGE). */
int config_parse_args(struct init_config *cfg, int argc, char **argv);

/* Step 2: reads the environment and the image files (/etc/passwd,
 * /etc/group, the profile), validates everything and computes the identity
 * remap, without changing anything. Returns 0, or a negative errno after
 * printing the one-line failure (exit EXIT_INIT_CONFIG). */
int config_load(struct init_config *cfg);

/* --check: prints the plan to stdout. Returns 0. */
int config_print_plan(const struct init_config *cfg);

/* Frees what config_load() allocated; safe to call twice. */
void config_free(struct init_config *cfg);

#endif
