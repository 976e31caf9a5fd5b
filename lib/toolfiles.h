/* SPDX-License-Identifier: MIT */
/* How a host tool may be run for the agent (pure): the rule is that no host
 * tool runs with its working directory in the workspace or is given a
 * workspace path. From the tool and its argv this computes a plan the
 * daemon carries out (execd/toolrun.c):
 *   - the tool runs in an empty private directory (every tool but git,
 *     whose host-side use the git relay replaces);
 *   - each argument naming a file the tool must read (kubectl -f, aws
 *     file:// and fileb://, psql -f, gh --body-file / api --input / -F k=@f,
 *     terraform -var-file) is listed: the daemon opens it beneath the mapped
 *     workspace, copies it into a sealed memfd and rewrites the argument to
 *     /dev/fd/N;
 *   - options that write files, read host paths, change endpoints or
 *     credentials, or run programs are refused (`refused`), whatever the
 *     backend says;
 *   - per tool: psql gets -X and no agent stdin, its -c strings and -f files
 *     are checked by lib/psqlmeta.c, its options are read as its
 *     getopt_long reads them (clusters, abbreviations; unknown ones
 *     refused) and its connection target is worked out by
 *     lib/psqltarget.c, ambiguity refused; gh needs --repo HOST/OWNER/REPO on the
 *     configured host; terraform runs on copies of *.tf, *.tfvars and the
 *     lock file.
 * Option spellings follow the tools (kubectl/gh: pflag; aws: argparse,
 * which accepts unique abbreviations, so guarded aws options are also
 * recognised abbreviated; psql: getopt_long; terraform: Go flag, one or two
 * dashes). */
#ifndef CS_TOOLFILES_H
#define CS_TOOLFILES_H

#include <stdbool.h>
#include <stddef.h>

#include "psqltarget.h"

#define TOOLFILES_MAX_FILES 16     /* file arguments of one command */
#define TOOLFILES_MAX_SQL 16       /* psql -c strings */
#define TOOLFILES_MAX_PREPEND 2
#define TOOLFILES_MAX_HOST 256
/* terraform plans the daemon made and keeps (execd/toolrun.c): named by
 * an id it chose, "sandbox-plan-" and 32 lowercase hex digits. */
#define TOOLFILES_TF_PLAN_PREFIX "sandbox-plan-"
#define TOOLFILES_TF_PLAN_HEX 32
#define TOOLFILES_TF_PLAN_ID_LEN (sizeof(TOOLFILES_TF_PLAN_PREFIX) - 1 + TOOLFILES_TF_PLAN_HEX)
#define TOOLFILES_TF_MAX_OUT_NAME 64 /* bytes of a plan -out=NAME */

enum toolfiles_kind {
	TOOLFILES_READ,        /* content passed as is */
	TOOLFILES_PSQL_SCRIPT, /* content checked with psqlmeta_check() first */
	TOOLFILES_KIND_MAX,
};

struct toolfiles_file {
	size_t arg;        /* index in argv (argv[0] is the tool) */
	size_t prefix_len; /* the path is argv[arg] + prefix_len; the prefix is kept */
	enum toolfiles_kind kind;
};

struct toolfiles_config {
	const char *gh_host; /* the one GitHub host gh may talk to ("github.com") */
	bool psql_stdin;     /* psql may read the agent's stdin */
	const char *psql_user; /* the name of the user psql runs as: libpq's default user */
};

struct toolfiles_plan {
	bool private_cwd;    /* run in an empty private directory */
	bool stdin_null;     /* the tool gets /dev/null, not the agent's stdin */
	bool copy_terraform; /* copy *.tf, *.tfvars, .terraform.lock.hcl from the cwd */
	size_t n_files;
	struct toolfiles_file files[TOOLFILES_MAX_FILES];
	size_t n_sql; /* psql -c values to check (argv index, offset of the value) */
	struct toolfiles_file sql[TOOLFILES_MAX_SQL];
	size_t n_prepend; /* inserted right after argv[0] */
	const char *prepend[TOOLFILES_MAX_PREPEND];
	/* terraform: `plan -out=NAME` (NAME a plain file name) writes the plan
	 * in the private directory, where the daemon takes it into its own
	 * store after a successful run; `show ID` shows such a plan, copied
	 * from the store (a plan file the agent wrote is never shown: it is
	 * agent-controlled input). Both point into argv; NULL: none. */
	const char *tf_out;
	const char *tf_show;
	struct psqltarget psql; /* psql: what it connects to (lib/psqltarget.h) */
	bool psql_list;         /* psql -l */
	/* psql: the database value libpq expands as a connection string, at
	 * argv[psql_conninfo_arg] + psql_conninfo_off (0: none); it may hold a
	 * password, which the audit log and the backends are not shown
	 * (psqltarget_redact_password()). Set also when the command is refused. */
	size_t psql_conninfo_arg, psql_conninfo_off;
	size_t n_guarded; /* aws guarded options: argv indexes (value attached or next) */
	size_t guarded[TOOLFILES_MAX_FILES];
	const char *refused;     /* static reason; the daemon denies */
	const char *refused_arg; /* the argument (points into argv), may be NULL */
};

/* Computes the plan for argv[0..argc) (argv[0] the tool-table name).
 * Always returns 0 with *ret filled (refusals are in ret->refused), or
 * -EINVAL for NULL arguments. The plan points into argv. */
int toolfiles_plan(const char *tool, const char *const *argv, size_t argc,
		   const struct toolfiles_config *cfg, struct toolfiles_plan *ret);

/* May the tool table run this file as `tool`? For psql: not a script
 * (head, the file's first head_len bytes, starts with "#!") and not in
 * postgresql-common (realpath): Debian's /usr/bin/psql is pg_wrapper, a
 * Perl script that, after the policy decided, takes a --cluster argument
 * (anywhere, even an option's value) out of argv and connects where it
 * says, and picks the target from ~/.postgresqlrc and user_clusters when
 * no -h/-p is given. 0, or -EINVAL with *reterr a static reason. */
int toolfiles_check_binary(const char *tool, const char *realpath, const char *head,
			   size_t head_len, const char **reterr);

/* Is s a plan id of the daemon's form (TOOLFILES_TF_PLAN_PREFIX + hex)? */
bool toolfiles_tf_plan_id_valid(const char *s);

/* aws: is this option (as written, "--endpoint-url=x", "--endp") one of
 * the guarded ones (--endpoint-url, --ca-bundle, --no-verify-ssl, --debug,
 * --profile, --region, --cli-input-json/yaml, --cli-auto-prompt), exactly
 * or abbreviated? Guarded options are refused unless a static policy rule
 * names the exact value. */
bool toolfiles_aws_guarded(const char *opt);

/* gh: does this top-level command act on "the current repository" (pr,
 * issue, release, run, ...), so that it needs --repo? */
bool toolfiles_gh_needs_repo(const char *command);

/* gh: the host of a repository argument or URL ("HOST/OWNER/REPO",
 * "https://HOST/...", "git@HOST:..."): copied into buf (lowercase), or ""
 * when the argument names none (OWNER/REPO: gh's default host). -ENAMETOOLONG. */
int toolfiles_gh_host_of(const char *arg, char *buf, size_t len);

#endif
