/* SPDX-License-Identifier: MIT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "fileio.h"
#include "profile.h"
#include "runtimedir.h"
#include "seccomp_rules.h"

static char *default_command[] = {(char *)INIT_DEFAULT_COMMAND, NULL};

static void print_help(void)
{
	(void)printf("Usage: sandbox-init [OPTIONS] [--] [COMMAND [ARG...]]\n"
		     "Container PID 1: become the host user, lock settings, drop every\n"
		     "privilege, load seccomp, run COMMAND (default: " INIT_DEFAULT_COMMAND
		     ") and reap.\n\n"
		     "  --check            validate the configuration, print the plan, change nothing\n"
		     "  --seccomp=on|off   seccomp filter (default on; off is for debugging only)\n"
		     "  --test-subreaper   allow running when not PID 1 (tests; becomes a subreaper)\n"
		     "  --allowlist FILE   egress allowlist for the firewall step\n"
		     "  -h, --help         show this help\n"
		     "      --version      show the version\n\n"
		     "Environment: HOST_UID, HOST_GID, CODE_SANDBOX_PROFILE (default '" INIT_DEFAULT_PROFILE
		     "').\n");
}

int config_parse_args(struct init_config *cfg, int argc, char **argv)
{
	enum { OPT_CHECK = 0x100, OPT_SECCOMP, OPT_TEST_SUBREAPER, OPT_ALLOWLIST, OPT_VERSION };
	static const struct option options[] = {
		{"check", no_argument, NULL, OPT_CHECK},
		{"seccomp", required_argument, NULL, OPT_SECCOMP},
		{"test-subreaper", no_argument, NULL, OPT_TEST_SUBREAPER},
		{"allowlist", required_argument, NULL, OPT_ALLOWLIST},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{0},
	};
	int c;

	*cfg = (struct init_config){.seccomp = true};
	(void)snprintf(cfg->profile, sizeof(cfg->profile), "%s", INIT_DEFAULT_PROFILE);
	/* '+': stop at the first non-option, so the agent's own options
	 * (`sandbox-init claude --resume`) are never taken for ours. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
		switch (c) {
		case OPT_CHECK:
			cfg->check = true;
			break;
		case OPT_SECCOMP:
			if (strcmp(optarg, "on") == 0)
				cfg->seccomp = true;
			else if (strcmp(optarg, "off") == 0)
				cfg->seccomp = false;
			else
				return init_fail("usage", 0, "--seccomp takes 'on' or 'off', not '%s'", optarg);
			break;
		case OPT_TEST_SUBREAPER:
			cfg->test_subreaper = true;
			break;
		case OPT_ALLOWLIST:
			if (!*optarg)
				return init_fail("usage", 0, "--allowlist needs a file name");
			cfg->allowlist_path = optarg;
			break;
		case 'h':
			print_help();
			return 1;
		case OPT_VERSION:
			(void)printf("sandbox-init " CS_VERSION "\n");
			return 1;
		case '?':
			/* optopt is a short option's letter, or a long option's
			 * value (>= 0x100) when its argument is missing. */
			if (optopt > 0 && optopt < 0x80)
				return init_fail("usage", 0, "unknown option or missing argument: '-%c' (see --help)", optopt);
			return init_fail("usage", 0, "unknown option or missing argument: '%s' (see --help)",
					 argv[optind - 1]);
		default:
			return init_fail("usage", 0, "unexpected option parser result %d", c);
		}
	}
	cfg->command = optind < argc ? argv + optind : default_command;
	return 0;
}

/* Reads an optional numeric ID from the environment into *ret. */
static int env_id(const char *var, bool *ret_set, unsigned *ret)
{
	const char *v = secure_getenv(var);
	int r;

	if (!v)
		return 0;
	r = ids_parse_id(v, ret);
	if (r == -ERANGE)
		return init_fail("identity", 0, "%s is out of range (at most %u)", var, IDS_HOST_ID_MAX);
	if (r < 0)
		/* The value may be anything: say what is wrong, do not echo it. */
		return init_fail("identity", 0, "%s is not a decimal number", var);
	*ret_set = true;
	return 0;
}

/* The running kernel's overflow IDs (what an unmappable owner shows as),
 * into ids[0..4); a file that cannot be read leaves the kernel's default
 * there, refused anyway. */
static void read_overflow_ids(unsigned ids[static 4])
{
	static const char *const files[] = {
		"/proc/sys/kernel/overflowuid",
		"/proc/sys/kernel/overflowgid",
		"/proc/sys/fs/overflowuid",
		"/proc/sys/fs/overflowgid",
	};

	for (size_t i = 0; i < 4; i++) {
		_cleanup_free_ char *text = NULL;
		size_t len = 0;

		ids[i] = IDS_KERNEL_OVERFLOW_ID;
		/* ENOENT (no /proc/sys in this mount namespace): the default. */
		if (fileio_read(AT_FDCWD, files[i], 32, &text, &len) < 0)
			continue;
		while (len > 0 && text[len - 1] == '\n')
			text[--len] = '\0';
		(void)ids_parse_id(text, &ids[i]);
	}
}

/* One of the checks below on an ID devuser would take. */
static int check_id(const char *what, unsigned id, const unsigned overflow[static 4])
{
	const char *why = NULL;

	if (ids_check_host_id(id, overflow, 4, &why) == 0)
		return 0;
	return init_fail("identity", 0, "%s=%u is refused (%s)", what, id, why);
}

static int load_identity(struct init_config *cfg)
{
	unsigned overflow[4];
	struct userdb_user u;
	const char *why = NULL;
	char group[IDS_NAME_MAX + 1];
	unsigned uid, gid;
	int r;

	r = fileio_read(AT_FDCWD, runtimedir_source(INIT_PASSWD_PATH), INIT_FILE_MAX, &cfg->passwd_text, &cfg->passwd_len);
	if (r < 0)
		return init_fail("identity", r, "cannot read " INIT_PASSWD_PATH);
	r = fileio_read(AT_FDCWD, runtimedir_source(INIT_GROUP_PATH), INIT_FILE_MAX, &cfg->group_text, &cfg->group_len);
	if (r < 0)
		return init_fail("identity", r, "cannot read " INIT_GROUP_PATH);
	r = userdb_lookup(cfg->passwd_text, cfg->passwd_len, INIT_USER, &u);
	if (r == -ENOENT)
		return init_fail("identity", 0, "user '" INIT_USER "' is not in " INIT_PASSWD_PATH);
	if (r == -EEXIST)
		return init_fail("identity", 0, "user '" INIT_USER "' appears twice in " INIT_PASSWD_PATH);
	if (r < 0)
		return init_fail("identity", r, "cannot parse " INIT_PASSWD_PATH);

	r = env_id("HOST_UID", &cfg->host_uid_set, &cfg->host_uid);
	if (r < 0)
		return r;
	r = env_id("HOST_GID", &cfg->host_gid_set, &cfg->host_gid);
	if (r < 0)
		return r;
	/* As the container's PID 1, both are required: falling back to
	 * devuser's image IDs would hand the workspace's files to whoever
	 * holds those IDs on the host. Only --test-subreaper (tests, never a
	 * container) keeps the image's IDs. */
	if (!cfg->test_subreaper && (!cfg->host_uid_set || !cfg->host_gid_set))
		return init_fail("identity", 0, "%s not set: pass both, e.g. -e HOST_UID=$(id -u) -e HOST_GID=$(id -g)",
				 !cfg->host_uid_set && !cfg->host_gid_set ? "HOST_UID and HOST_GID are"
				 : !cfg->host_uid_set			 ? "HOST_UID is"
									 : "HOST_GID is");
	uid = cfg->host_uid_set ? cfg->host_uid : u.uid;
	gid = cfg->host_gid_set ? cfg->host_gid : u.gid;

	/* Refused before anything changes: an agent running as root, in the
	 * root group, or in a group that administers the machine would undo
	 * every other layer; as nobody, 65535 or (uid_t)-2 it would share its
	 * files with every unmapped owner. */
	read_overflow_ids(overflow);
	r = check_id(cfg->host_uid_set ? "HOST_UID" : "devuser's UID", uid, overflow);
	if (r < 0)
		return r;
	r = check_id(cfg->host_gid_set ? "HOST_GID" : "devuser's GID", gid, overflow);
	if (r < 0)
		return r;
	if (ids_gid_is_privileged(cfg->group_text, cfg->group_len, gid, group) > 0)
		return init_fail("identity", 0, "%s=%u is refused (privileged group '%s')",
				 cfg->host_gid_set ? "HOST_GID" : "devuser's GID", gid, group);

	r = userdb_remap(cfg->passwd_text, cfg->passwd_len, cfg->group_text, cfg->group_len,
			 INIT_USER, uid, gid, &cfg->remap);
	if (r == -ENOSPC)
		return init_fail("identity", 0, "no free ID to move the accounts holding %u:%u", uid, gid);
	if (r < 0)
		return init_fail("identity", r, "cannot remap " INIT_USER " to %u:%u", uid, gid);
	if (!userdb_home_is_safe(cfg->remap.home, &why))
		return init_fail("identity", 0, INIT_USER "'s home '%s' is refused: %s", cfg->remap.home, why);
	return 0;
}

static int load_profile(struct init_config *cfg)
{
	const char *name = secure_getenv("CODE_SANDBOX_PROFILE");
	char path[sizeof(INIT_PROFILE_DIR) + PROFILE_NAME_MAX + 8];
	const char *why = NULL;
	int r;

	if (name) {
		if (!profile_name_valid(name))
			return init_fail("config", 0, "CODE_SANDBOX_PROFILE must match [a-z0-9_-]{1,%d}",
					 PROFILE_NAME_MAX);
		(void)snprintf(cfg->profile, sizeof(cfg->profile), "%s", name);
	}
	(void)snprintf(path, sizeof(path), INIT_PROFILE_DIR "/%s.json", cfg->profile);
	r = fileio_read(AT_FDCWD, path, PROFILE_MAX_BYTES, &cfg->profile_json, &cfg->profile_len);
	if (r < 0)
		return init_fail("config", r, "cannot read profile '%s'", path);
	r = profile_check_json(cfg->profile_json, cfg->profile_len, &why);
	if (r < 0)
		return init_fail("config", 0, "profile '%s' is not a valid JSON object: %s", path,
				 why ? why : strerror(-r));
	return 0;
}

int config_load(struct init_config *cfg)
{
	int r;

	r = load_identity(cfg);
	if (r < 0)
		return r;
	return load_profile(cfg);
}

int config_print_plan(const struct init_config *cfg)
{
	const struct userdb_remap *rm = &cfg->remap;
	size_t n_rules = 0;
	const struct seccomp_rule *rules = seccomp_rules_get(&n_rules);

	(void)printf("user: " INIT_USER "\n");
	(void)printf("uid: %u\n", rm->uid);
	(void)printf("gid: %u\n", rm->gid);
	(void)printf("identity: %u:%u -> %u:%u (%s)\n", rm->old_uid, rm->old_gid, rm->uid, rm->gid,
		     rm->passwd_changed || rm->group_changed ? "rewrite /etc/passwd, /etc/group"
							     : "no change");
	for (size_t i = 0; i < rm->n_moves; i++)
		(void)printf("moved: %s '%s' %s %u -> %u\n", rm->moves[i].is_group ? "group" : "user",
			     rm->moves[i].name, rm->moves[i].is_group ? "gid" : "uid", rm->moves[i].from,
			     rm->moves[i].to);
	(void)printf("home: %s\n", rm->home);
	(void)printf("profile: %s (" INIT_PROFILE_DIR "/%s.json)\n", cfg->profile, cfg->profile);
	(void)printf("allowlist: %s\n", cfg->allowlist_path ? cfg->allowlist_path : "(default)");
	(void)printf("command:");
	for (char **a = cfg->command; *a; a++)
		(void)printf(" '%s'", *a);
	(void)printf("\n");
	if (!cfg->seccomp) {
		(void)printf("seccomp: off\n");
		return 0;
	}
	(void)printf("seccomp: on, %zu rules on %zu syscalls, default allow, x32 and other foreign ABIs refused\n",
		     n_rules, seccomp_rules_count_syscalls());
	/* One name per syscall; "(args)": refused only for some arguments. */
	(void)printf("seccomp denied:");
	for (size_t i = 0; i < n_rules; i++) {
		if (i > 0 && strcmp(rules[i].name, rules[i - 1].name) == 0)
			continue;
		(void)printf(" %s%s", rules[i].name,
			     rules[i].action == SECCOMP_RULE_ENOSYS ? "(ENOSYS)"
			     : rules[i].n_conds > 0		     ? "(args)"
								     : "");
	}
	(void)printf("\n");
	return 0;
}

void config_free(struct init_config *cfg)
{
	free(cfg->passwd_text);
	free(cfg->group_text);
	free(cfg->profile_json);
	cfg->passwd_text = cfg->group_text = cfg->profile_json = NULL;
	userdb_remap_free(&cfg->remap);
}
