/* SPDX-License-Identifier: MIT */
/* Per-tool run plans (contract in toolfiles.h). Each tool's scanner walks
 * the argv once with the tool's own option syntax; what it does not know is
 * left alone (the tool reads it relative to an empty private directory, so
 * a relative path finds nothing), and what it knows to be dangerous is
 * refused with a reason the agent can act on. */
#include "toolfiles.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/types.h>

#include "macros.h"

struct scan {
	const char *const *argv;
	size_t argc;
	struct toolfiles_plan *p;
};

static void refuse(struct scan *s, const char *why, const char *arg)
{
	if (!s->p->refused) {
		s->p->refused = why;
		s->p->refused_arg = arg;
	}
}

static void add_file(struct scan *s, size_t arg, size_t off, enum toolfiles_kind kind)
{
	if (s->p->n_files >= TOOLFILES_MAX_FILES) {
		refuse(s, "too many file arguments", s->argv[arg]);
		return;
	}
	s->p->files[s->p->n_files++] = (struct toolfiles_file){ .arg = arg, .prefix_len = off,
								 .kind = kind };
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Is argv[*i] the option `name` ("--filename", "-f")? With a value: sets
 * *ret_arg and *ret_off to it (after '=' or the short letter in the same
 * argument, or the next argument, then *i is advanced past it). Returns 1
 * on a match, 0 on none, -1 when the value is missing. Long options also
 * match unique abbreviations of at least `abbrev` characters after the
 * dashes when abbrev > 0 (argparse). */
static int match_opt(struct scan *s, size_t *i, const char *name, bool value, size_t abbrev,
		     size_t *ret_arg, size_t *ret_off)
{
	const char *a = s->argv[*i];
	size_t n = strlen(name), al;

	if (name[1] != '-') { /* short, "-f" */
		if (a[0] != '-' || a[1] != name[1] || a[1] == '-')
			return 0;
		if (a[2] != '\0') {
			if (!value)
				return 0;
			*ret_arg = *i;
			*ret_off = 2;
			return 1;
		}
	} else {
		const char *eq = strchr(a, '=');

		al = eq ? (size_t)(eq - a) : strlen(a);
		if (!starts_with(a, "--"))
			return 0;
		if (!(al == n && strncmp(a, name, n) == 0) &&
		    !(abbrev > 0 && al >= 2 + abbrev && al < n && strncmp(a, name, al) == 0))
			return 0;
		if (eq) {
			if (!value)
				return 1; /* --flag=value of a boolean: still the flag */
			*ret_arg = *i;
			*ret_off = al + 1;
			return 1;
		}
	}
	if (!value)
		return 1;
	if (*i + 1 >= s->argc)
		return -1;
	(*i)++;
	*ret_arg = *i;
	*ret_off = 0;
	return 1;
}

/* ---- kubectl ---- */

static void plan_kubectl(struct scan *s)
{
	static const char *const refused_opts[] = {
		"--kubeconfig", "--profile-output", "--cache-dir", "--log-file", "--log-dir",
		"-k", "--kustomize",
	};
	bool sub_seen = false;

	for (size_t i = 1; i < s->argc; i++) {
		const char *a = s->argv[i];
		size_t va = 0, vo = 0;
		int m;

		if (strcmp(a, "--") == 0)
			break;
		if (!sub_seen && a[0] != '-') {
			sub_seen = true;
			if (strcmp(a, "cp") == 0 || strcmp(a, "proxy") == 0 ||
			    strcmp(a, "port-forward") == 0 || strcmp(a, "plugin") == 0 ||
			    strcmp(a, "edit") == 0 || strcmp(a, "attach") == 0)
				refuse(s, "kubectl cp/proxy/port-forward/plugin/edit/attach read or write "
					  "host files, listen on host ports or run host programs", a);
			continue;
		}
		for (size_t k = 0; k < sizeof(refused_opts) / sizeof(refused_opts[0]); k++) {
			m = match_opt(s, &i, refused_opts[k], true, 0, &va, &vo);
			if (m != 0) {
				refuse(s, "this kubectl option names a host file or directory (kubeconfig, "
					  "kustomization, profile or log output)", a);
				return;
			}
		}
		m = match_opt(s, &i, "-f", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--filename", true, 0, &va, &vo);
		if (m < 0) {
			refuse(s, "-f without a file", a);
			return;
		}
		if (m > 0) {
			const char *v = s->argv[va] + vo;

			if (strcmp(v, "-") == 0)
				continue; /* the agent's stdin */
			if (strstr(v, "://")) {
				refuse(s, "kubectl -f URL would be fetched by the host", v);
				return;
			}
			add_file(s, va, vo, TOOLFILES_READ);
			continue;
		}
		m = match_opt(s, &i, "-o", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--output", true, 0, &va, &vo);
		if (m > 0 && strstr(s->argv[va] + vo, "-file")) {
			refuse(s, "kubectl -o ...-file= reads a template from a host file", s->argv[va]);
			return;
		}
		/* A short cluster hiding -f or -k ("-Rf x"): not read apart. */
		if (a[0] == '-' && a[1] != '-' && strlen(a) > 2 && strpbrk(a + 1, "fk") &&
		    !(a[1] == 'o' || a[1] == 'l' || a[1] == 'n' || a[1] == 'c')) {
			refuse(s, "write -f FILE (and -k) as an option of its own", a);
			return;
		}
	}
}

/* ---- aws ---- */

/* Options that send signed requests elsewhere, weaken TLS, print
 * credentials (--debug logs signed headers), pick other credentials or read
 * host files. The shipped rule: refused; a static policy rule that names
 * the exact value (`flag=--region=eu-west-1`) lifts it for that value
 * (policy.c, guarded flags). */
static const char *const aws_guarded[] = {
	"--endpoint-url", "--ca-bundle", "--no-verify-ssl", "--debug", "--profile", "--region",
	"--cli-input-json", "--cli-input-yaml", "--cli-auto-prompt",
};

bool toolfiles_aws_guarded(const char *opt)
{
	size_t n = strcspn(opt, "=");

	if (!starts_with(opt, "--") || n < 5)
		return false;
	for (size_t k = 0; k < sizeof(aws_guarded) / sizeof(aws_guarded[0]); k++)
		if (strncmp(opt, aws_guarded[k], n) == 0) /* exact or an abbreviation */
			return true;
	return false;
}

static void plan_aws(struct scan *s)
{
	const char *words[3] = { NULL, NULL, NULL };
	size_t n_words = 0;

	for (size_t i = 1; i < s->argc; i++) {
		const char *a = s->argv[i];
		const char *eq = strchr(a, '=');
		const char *v = a;
		size_t off = 0;

		if (starts_with(a, "--") && eq) {
			v = eq + 1;
			off = (size_t)(eq + 1 - a);
		}
		if (toolfiles_aws_guarded(a)) {
			if (s->p->n_guarded >= TOOLFILES_MAX_FILES) {
				refuse(s, "too many guarded options", a);
				return;
			}
			s->p->guarded[s->p->n_guarded++] = i;
		}
		if (starts_with(v, "file://"))
			add_file(s, i, off + 7, TOOLFILES_READ);
		else if (starts_with(v, "fileb://"))
			add_file(s, i, off + 8, TOOLFILES_READ);
		if (a[0] != '-' && n_words < 3 && (i == 1 || s->argv[i - 1][0] != '-' ||
						   strchr(s->argv[i - 1], '=')))
			words[n_words++] = a;
	}
	if (n_words >= 1 && strcmp(words[0], "configure") == 0)
		refuse(s, "aws configure writes the host's credentials and configuration", words[0]);
	if (n_words >= 2 && strcmp(words[0], "sts") == 0 &&
	    (strcmp(words[1], "get-session-token") == 0 || strcmp(words[1], "get-federation-token") == 0))
		refuse(s, "aws sts get-session-token/get-federation-token hand out new credentials",
		       words[1]);
	if (n_words >= 2 && strcmp(words[0], "s3") == 0 &&
	    (strcmp(words[1], "cp") == 0 || strcmp(words[1], "mv") == 0 || strcmp(words[1], "sync") == 0))
		for (size_t i = 1; i < s->argc; i++) {
			const char *a = s->argv[i];

			if (a[0] == '-' || a == words[0] || a == words[1])
				continue;
			if (!starts_with(a, "s3://") && strcmp(a, "-") != 0 &&
			    !(i > 1 && s->argv[i - 1][0] == '-' && !strchr(s->argv[i - 1], '='))) {
				refuse(s, "aws s3 cp/mv/sync with a local path reads or writes host files "
					  "(use - for stdin/stdout)", a);
				break;
			}
		}
}

/* ---- gh ---- */

int toolfiles_gh_host_of(const char *arg, char *buf, size_t len)
{
	const char *h = arg, *end;
	size_t n;

	buf[0] = '\0';
	if (strstr(arg, "://")) {
		h = strstr(arg, "://") + 3;
		end = h + strcspn(h, "/?#");
		/* userinfo@ */
		for (const char *at = h; at < end; at++)
			if (*at == '@')
				h = at + 1;
	} else if (strchr(arg, '@') && strchr(arg, ':') && strchr(arg, '@') < strchr(arg, ':')) {
		h = strchr(arg, '@') + 1; /* git@HOST:OWNER/REPO */
		end = strchr(h, ':');
	} else {
		/* HOST/OWNER/REPO: three or more segments */
		const char *s1 = strchr(arg, '/');

		if (!s1 || !strchr(s1 + 1, '/'))
			return 0; /* OWNER/REPO or a plain word */
		end = s1;
	}
	n = (size_t)(end - h);
	if (n + 1 > len)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)h[i]);
	buf[n] = '\0';
	return 0;
}

static bool gh_host_ok(struct scan *s, const struct toolfiles_config *cfg, const char *arg)
{
	char host[TOOLFILES_MAX_HOST];

	if (toolfiles_gh_host_of(arg, host, sizeof(host)) < 0) {
		refuse(s, "host name too long", arg);
		return false;
	}
	if (host[0] && strcmp(host, cfg->gh_host) != 0) {
		refuse(s, "gh may only talk to the configured GitHub host", arg);
		return false;
	}
	return true;
}

bool toolfiles_gh_needs_repo(const char *command)
{
	static const char *const scoped[] = {
		"pr", "issue", "release", "run", "workflow", "label", "cache", "secret",
		"variable", "ruleset", "attestation", "project",
	};

	for (size_t k = 0; command && k < sizeof(scoped) / sizeof(scoped[0]); k++)
		if (strcmp(command, scoped[k]) == 0)
			return true;
	return false;
}

static void plan_gh(struct scan *s, const struct toolfiles_config *cfg)
{
	const char *w[3] = { NULL, NULL, NULL };
	size_t n_w = 0;
	bool have_repo = false;

	for (size_t i = 1; i < s->argc; i++) {
		const char *a = s->argv[i];
		size_t va = 0, vo = 0;
		int m;

		if (strcmp(a, "--") == 0) {
			for (i++; i < s->argc; i++)
				if (!gh_host_ok(s, cfg, s->argv[i]))
					return;
			break;
		}
		m = match_opt(s, &i, "-R", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--repo", true, 0, &va, &vo);
		if (m < 0) {
			refuse(s, "--repo without a value", a);
			return;
		}
		if (m > 0) {
			char host[TOOLFILES_MAX_HOST];
			const char *v = s->argv[va] + vo;

			if (toolfiles_gh_host_of(v, host, sizeof(host)) < 0 || !host[0]) {
				refuse(s, "gh needs --repo HOST/OWNER/REPO (the wrapper fills it in from "
					  "the repository's remote)", v);
				return;
			}
			if (!gh_host_ok(s, cfg, v))
				return;
			have_repo = true;
			continue;
		}
		if (strcmp(a, "--hostname") == 0 || starts_with(a, "--hostname=")) {
			const char *v = a[10] == '=' ? a + 11 : (i + 1 < s->argc ? s->argv[++i] : "");

			if (strcmp(v, cfg->gh_host) != 0) {
				refuse(s, "gh api --hostname must be the configured GitHub host", v);
				return;
			}
			continue;
		}
		/* Files gh reads. */
		m = match_opt(s, &i, "-F", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--body-file", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--notes-file", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--input", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--field", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "--raw-field", true, 0, &va, &vo);
		if (m == 0)
			m = match_opt(s, &i, "-f", true, 0, &va, &vo);
		if (m < 0) {
			refuse(s, "an option without its value", a);
			return;
		}
		if (m > 0) {
			const char *v = s->argv[va] + vo;
			bool field = strcmp(a, "-F") == 0 || starts_with(a, "-F") ||
				     starts_with(a, "--field") || strcmp(a, "-f") == 0 ||
				     starts_with(a, "-f") || starts_with(a, "--raw-field");

			if (field && w[0] && strcmp(w[0], "api") == 0) {
				/* api -F key=@FILE reads FILE; -f is always a string */
				const char *at = strstr(v, "=@");

				if (at && (strcmp(a, "-F") == 0 || starts_with(a, "-F") ||
					   starts_with(a, "--field")))
					add_file(s, va, vo + (size_t)(at + 2 - v), TOOLFILES_READ);
				continue;
			}
			if (field && strcmp(a, "-f") != 0 && !starts_with(a, "-F"))
				continue;
			if (strcmp(a, "-f") == 0 || (starts_with(a, "-f") && !starts_with(a, "--")))
				continue; /* -f/--fill etc. outside api: not a file */
			if (strcmp(v, "-") != 0)
				add_file(s, va, vo, TOOLFILES_READ);
			continue;
		}
		if (a[0] == '-')
			continue;
		if (n_w < 3)
			w[n_w++] = a;
		if (!gh_host_ok(s, cfg, a))
			return;
	}
	if (n_w == 0)
		return;
#define W(k, x) (n_w > (k) && strcmp(w[k], x) == 0)
	if ((W(0, "pr") && W(1, "checkout")) || (W(0, "repo") && W(1, "clone")) ||
	    W(0, "extension") || W(0, "extensions") || W(0, "ext") || W(0, "codespace") ||
	    W(0, "cs") || W(0, "browse") || (W(0, "auth") && !W(1, "status")) ||
	    (W(0, "config") && W(1, "set")) || (W(0, "run") && W(1, "download")) ||
	    (W(0, "release") && (W(1, "download") || W(1, "upload") || W(1, "create"))) ||
	    (W(0, "repo") && W(1, "archive")) || (W(0, "gist") && (W(1, "create") || W(1, "clone"))) ||
	    (W(0, "repo") && W(1, "sync"))) {
		refuse(s, "this gh command runs git on the host, hands out or changes credentials "
			  "or configuration, or reads or writes host files",
		       w[1] ? w[1] : w[0]);
		return;
	}
	for (size_t i = 1; i < s->argc; i++) {
		const char *a = s->argv[i];

		if (W(0, "repo") && W(1, "fork") && starts_with(a, "--clone") &&
		    strcmp(a, "--clone=false") != 0)
			refuse(s, "gh repo fork --clone runs git on the host", a);
		if (W(0, "alias") && (strcmp(a, "--shell") == 0 || strcmp(a, "-s") == 0 ||
				      starts_with(a, "--shell=")))
			refuse(s, "gh alias --shell defines a shell command", a);
		if (W(0, "auth") && (strcmp(a, "--show-token") == 0 || strcmp(a, "-t") == 0))
			refuse(s, "gh auth status --show-token prints the credential", a);
	}
	/* Commands that act on the current repository get it explicitly: in
	 * the private directory there is no git remote to take it from, and
	 * the one in the workspace is the agent's to write. (`repo` commands
	 * name theirs as an operand, checked above.) */
	if (!have_repo && toolfiles_gh_needs_repo(w[0]))
		refuse(s, "gh needs --repo HOST/OWNER/REPO (the wrapper adds it from the "
			  "repository's origin remote; in a directory without one, pass it)",
		       w[0]);
#undef W
}

/* ---- terraform ---- */

bool toolfiles_tf_plan_id_valid(const char *s)
{
	size_t pl = strlen(TOOLFILES_TF_PLAN_PREFIX);

	if (!s || strlen(s) != TOOLFILES_TF_PLAN_ID_LEN || strncmp(s, TOOLFILES_TF_PLAN_PREFIX, pl) != 0)
		return false;
	return strspn(s + pl, "0123456789abcdef") == TOOLFILES_TF_PLAN_HEX;
}

/* A plain file name for plan -out: no directory, nothing hidden. */
static bool tf_out_name_ok(const char *v)
{
	size_t n = strlen(v);

	return n > 0 && n <= TOOLFILES_TF_MAX_OUT_NAME && v[0] != '.' && v[0] != '-' &&
	       strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n &&
	       !toolfiles_tf_plan_id_valid(v);
}

static void plan_terraform(struct scan *s)
{
	const char *sub = NULL;

	s->p->copy_terraform = true;
	for (size_t i = 1; i < s->argc; i++) {
		const char *a = s->argv[i];
		const char *n = a[0] == '-' ? (a[1] == '-' ? a + 2 : a + 1) : NULL;
		size_t nl = n ? strcspn(n, "=") : 0;

		if (!n) {
			if (!sub)
				sub = a;
			else if (strcmp(sub, "show") == 0 && !s->p->tf_show &&
				 toolfiles_tf_plan_id_valid(a)) {
				/* Only the plan: its configuration is inside it. */
				s->p->tf_show = a;
				s->p->copy_terraform = false;
			} else if (strcmp(sub, "fmt") == 0 || strcmp(sub, "show") == 0 ||
				 strcmp(sub, "validate") == 0 || strcmp(sub, "init") == 0 ||
				 strcmp(sub, "plan") == 0 || strcmp(sub, "apply") == 0) {
				refuse(s, "terraform runs on a copy of the configuration in the current "
					  "directory; paths (plan files, directories) are not passed (show "
					  "takes the sandbox-plan-... id the host gave for a plan it made)",
				       a);
				return;
			}
			continue;
		}
#define IS(x) (nl == strlen(x) && strncmp(n, x, nl) == 0)
		if (IS("out") && sub && strcmp(sub, "plan") == 0) {
			const char *v = n[nl] == '=' ? n + nl + 1 : i + 1 < s->argc ? s->argv[++i] : NULL;

			if (!v || s->p->tf_out || !tf_out_name_ok(v)) {
				refuse(s, "terraform plan -out takes one plain file name ([A-Za-z0-9._-], "
					  "no directory); the host keeps the plan and prints its id",
				       a);
				return;
			}
			s->p->tf_out = v;
			continue;
		}
		if (IS("var-file")) {
			if (n[nl] == '=')
				add_file(s, i, (size_t)(n + nl + 1 - a), TOOLFILES_READ);
			else if (i + 1 < s->argc)
				add_file(s, ++i, 0, TOOLFILES_READ);
			else
				refuse(s, "-var-file without a file", a);
			continue;
		}
		if (IS("state") || IS("state-out") || IS("backup") || IS("out") ||
		    IS("generate-config-out") || IS("plugin-dir") || IS("from-module") ||
		    IS("backend-config") || IS("lockfile") || IS("test-directory")) {
			refuse(s, "this terraform option reads or writes a file or directory by path "
				  "on the host",
			       a);
			return;
		}
#undef IS
	}
}

/* ---- psql ---- */

static const char *const psql_vars[] = {
	"ON_ERROR_STOP", "ECHO", "ECHO_HIDDEN", "QUIET", "VERBOSITY", "SHOW_CONTEXT",
	"FETCH_COUNT", "AUTOCOMMIT", "ON_ERROR_ROLLBACK", "HIDE_TABLEAM",
};

static void psql_var(struct scan *s, const char *v)
{
	size_t n = strcspn(v, "=");

	if (strchr(v, '`')) {
		refuse(s, "a backtick in a psql variable runs a shell command", v);
		return;
	}
	for (size_t k = 0; k < sizeof(psql_vars) / sizeof(psql_vars[0]); k++)
		if (strlen(psql_vars[k]) == n && strncmp(v, psql_vars[k], n) == 0)
			return;
	refuse(s, "only behaviour variables (ON_ERROR_STOP, ECHO, QUIET, ...) may be set: others "
		  "(PROMPT*, ...) can run shell commands",
	       v);
}

/* psql's options as its getopt_long reads them (PostgreSQL 15,
 * src/bin/psql/startup.c): short options cluster ("-qo FILE", "-qoFILE"),
 * a short option's value is the rest of its word or the next word, long
 * options take "=value" or the next word and may be abbreviated to any
 * unique prefix ("--co" is --command, "--ho" --host), options may follow
 * operands, "--" ends them. Every option is looked up here: an unknown or
 * ambiguous one is refused (psql would stop on it too), so no spelling
 * slips past the checks below. */
enum psql_arg { PSQL_NOARG, PSQL_ARG, PSQL_OPTARG };

static const struct {
	char letter;       /* 0: long only */
	const char *name;  /* long name without dashes, NULL: short only */
	enum psql_arg arg; /* of the long form; the short form takes a value iff PSQL_ARG */
} psql_opts[] = {
	{ 'a', "echo-all", PSQL_NOARG },     { 'A', "no-align", PSQL_NOARG },
	{ 'b', "echo-errors", PSQL_NOARG },  { 'c', "command", PSQL_ARG },
	{ 'd', "dbname", PSQL_ARG },         { 'e', "echo-queries", PSQL_NOARG },
	{ 'E', "echo-hidden", PSQL_NOARG },  { 'f', "file", PSQL_ARG },
	{ 'F', "field-separator", PSQL_ARG }, { 'z', "field-separator-zero", PSQL_NOARG },
	{ 'h', "host", PSQL_ARG },           { 'H', "html", PSQL_NOARG },
	{ 'l', "list", PSQL_NOARG },         { 'L', "log-file", PSQL_ARG },
	{ 'n', "no-readline", PSQL_NOARG },  { '1', "single-transaction", PSQL_NOARG },
	{ 'o', "output", PSQL_ARG },         { 'p', "port", PSQL_ARG },
	{ 'P', "pset", PSQL_ARG },           { 'q', "quiet", PSQL_NOARG },
	{ 'R', "record-separator", PSQL_ARG }, { '0', "record-separator-zero", PSQL_NOARG },
	{ 's', "single-step", PSQL_NOARG },  { 'S', "single-line", PSQL_NOARG },
	{ 't', "tuples-only", PSQL_NOARG },  { 'T', "table-attr", PSQL_ARG },
	{ 'U', "username", PSQL_ARG },       { 'v', "set", PSQL_ARG },
	{ 'v', "variable", PSQL_ARG },       { 'V', "version", PSQL_NOARG },
	{ 'w', "no-password", PSQL_NOARG },  { 'W', "password", PSQL_NOARG },
	{ 'x', "expanded", PSQL_NOARG },     { 'X', "no-psqlrc", PSQL_NOARG },
	{ '?', NULL, PSQL_NOARG },           { 0, "help", PSQL_OPTARG },
	{ 0, "csv", PSQL_NOARG },
};

/* One option found: its letter (0 for --help/--csv), and its value as
 * argv[arg] + off (arg 0: none). */
struct psql_found {
	char letter;
	size_t arg, off;
};

/* Reads the long option at argv[*i] ("--name[=v]"): exact name, else the
 * one option whose name starts with it (glibc getopt_long: candidates
 * that differ are ambiguous). -1 with a refusal on any error. */
static int psql_long(struct scan *s, size_t *i, struct psql_found *ret)
{
	const char *a = s->argv[*i] + 2;
	size_t nl = strcspn(a, "=");
	ssize_t hit = -1;
	bool ambiguous = false;

	for (size_t k = 0; k < ELEMENTSOF(psql_opts); k++) {
		const char *n = psql_opts[k].name;

		if (!n || strncmp(n, a, nl) != 0)
			continue;
		if (strlen(n) == nl) {
			hit = (ssize_t)k;
			ambiguous = false;
			break;
		}
		if (hit >= 0 && (psql_opts[hit].letter != psql_opts[k].letter ||
				 psql_opts[hit].arg != psql_opts[k].arg))
			ambiguous = true;
		if (hit < 0)
			hit = (ssize_t)k;
	}
	if (hit < 0 || ambiguous || nl == 0) {
		refuse(s, "unknown or ambiguous psql option", s->argv[*i]);
		return -1;
	}
	*ret = (struct psql_found){ .letter = psql_opts[hit].letter };
	if (a[nl] == '=') {
		if (psql_opts[hit].arg == PSQL_NOARG) {
			refuse(s, "this psql option takes no value", s->argv[*i]);
			return -1;
		}
		ret->arg = *i;
		ret->off = 2 + nl + 1;
	} else if (psql_opts[hit].arg == PSQL_ARG) {
		if (*i + 1 >= s->argc) {
			refuse(s, "a psql option is missing its value", s->argv[*i]);
			return -1;
		}
		ret->arg = ++*i;
		ret->off = 0;
	}
	return 0;
}

/* Acts on one option: refusals, -c/-f/-v checks, connection fields. */
static void psql_option(struct scan *s, const struct psql_found *o, const char **conn)
{
	const char *v = o->arg ? s->argv[o->arg] + o->off : NULL;

	switch (o->letter) {
	case 'o':
	case 'L':
		refuse(s, "psql -o/-L write a file on the host", s->argv[o->arg]);
		return;
	case 'c':
		if (s->p->n_sql >= TOOLFILES_MAX_SQL) {
			refuse(s, "too many psql -c commands", s->argv[o->arg]);
			return;
		}
		s->p->sql[s->p->n_sql++] = (struct toolfiles_file){ .arg = o->arg, .prefix_len = o->off };
		return;
	case 'f':
		if (strcmp(v, "-") == 0) {
			refuse(s, "psql -f - reads the script from stdin", s->argv[o->arg]);
			return;
		}
		add_file(s, o->arg, o->off, TOOLFILES_PSQL_SCRIPT);
		return;
	case 'v':
		psql_var(s, v);
		return;
	case 'h':
	case 'p':
	case 'd':
	case 'U': {
		const char **slot = &conn[o->letter == 'h' ? 0 : o->letter == 'p' ? 1 : o->letter == 'd' ? 2 : 3];

		if (*slot) {
			refuse(s, "psql's host, port, database or user is given twice: give each once",
			       s->argv[o->arg]);
			return;
		}
		*slot = v;
		return;
	}
	case 'l':
		s->p->psql_list = true;
		return;
	default:
		return;
	}
}

/* The connection fields from what the options and operands gave
 * (conn: -h, -p, -d, -U values, NULL when absent), the way psql hands them
 * to libpq: the database value expanded when it is a connection string. */
static void psql_target(struct scan *s, const char *const conn[4],
			const struct toolfiles_config *cfg)
{
	static const enum psqltarget_field fields[4] = { PSQLTARGET_HOST, PSQLTARGET_PORT,
							 PSQLTARGET_DBNAME, PSQLTARGET_USER };
	struct psqltarget *t = &s->p->psql;
	const char *why = NULL;

	for (size_t k = 0; k < 4; k++) {
		int r = 0;

		if (!conn[k])
			continue;
		if (k == 2 && psqltarget_is_conninfo(conn[k]))
			r = psqltarget_parse_conninfo(t, conn[k], &why);
		else
			r = psqltarget_set(t, fields[k], conn[k], strlen(conn[k]), &why);
		if (r < 0) {
			refuse(s, why, conn[k]);
			return;
		}
	}
	/* psql -l without a database connects to "postgres". */
	if (s->p->psql_list && !conn[2] && !t->dbname[0])
		(void)psqltarget_set(t, PSQLTARGET_DBNAME, "postgres", 8, &why);
	/* What psql connects to without being told: a rule on db= or user=
	 * must see it (deny db=postgres and `psql -U postgres`). */
	if (psqltarget_fill_defaults(t, cfg->psql_user, &why) < 0)
		refuse(s, why, s->argv[0]);
}

static void plan_psql(struct scan *s, const struct toolfiles_config *cfg)
{
	const char *conn[4] = { NULL, NULL, NULL, NULL }; /* -h, -p, -d, -U */
	bool options = true;

	s->p->stdin_null = !cfg->psql_stdin;
	s->p->prepend[s->p->n_prepend++] = "-X"; /* no ~/.psqlrc, and PSQLRC=/dev/null too */
	/* Belt and braces against a pg_wrapper in the tool table (the daemon
	 * refuses one at start-up, toolfiles_check_binary()): it takes the
	 * first word "--cluster" or "--cluster=VER/HOST:PORT" before "--" out
	 * of argv, even an option's value ("-c --cluster=..."), and connects
	 * there. Refused in any position: psql itself has no such option. */
	for (size_t i = 1; i < s->argc; i++)
		if (strcmp(s->argv[i], "--cluster") == 0 ||
		    strncmp(s->argv[i], "--cluster=", STRLEN("--cluster=")) == 0) {
			refuse(s, "--cluster is pg_wrapper's (it would connect elsewhere than the "
				  "command says): give -h and -p",
			       s->argv[i]);
			return;
		}
	for (size_t i = 1; i < s->argc && !s->p->refused; i++) {
		const char *a = s->argv[i];
		struct psql_found o = { 0 };

		if (options && strcmp(a, "--") == 0) {
			options = false;
			continue;
		}
		if (!options || a[0] != '-' || a[1] == '\0') {
			/* An operand: DBNAME, then USER (psql: the first fills
			 * dbname unless -d did, the next username unless -U did). */
			if (!conn[2])
				conn[2] = a;
			else if (!conn[3])
				conn[3] = a;
			else
				refuse(s, "psql takes at most a database and a user as arguments", a);
			continue;
		}
		if (a[1] == '-') {
			if (psql_long(s, &i, &o) == 0)
				psql_option(s, &o, conn);
			continue;
		}
		/* A cluster of short options; one with a value ends it. */
		for (size_t c = 1; a[c] && !s->p->refused; c++) {
			size_t k = 0;

			while (k < ELEMENTSOF(psql_opts) && psql_opts[k].letter != a[c])
				k++;
			if (k == ELEMENTSOF(psql_opts) || a[c] == 0) {
				refuse(s, "unknown psql option", a);
				break;
			}
			o = (struct psql_found){ .letter = a[c] };
			if (psql_opts[k].arg == PSQL_ARG) {
				if (a[c + 1]) {
					o.arg = i;
					o.off = c + 1;
				} else if (i + 1 < s->argc) {
					o.arg = ++i;
					o.off = 0;
				} else {
					refuse(s, "a psql option is missing its value", a);
					break;
				}
				psql_option(s, &o, conn);
				break;
			}
			psql_option(s, &o, conn);
		}
	}
	if (conn[2] && psqltarget_is_conninfo(conn[2]))
		for (size_t i = 1; i < s->argc; i++)
			if (conn[2] >= s->argv[i] && conn[2] <= s->argv[i] + strlen(s->argv[i])) {
				s->p->psql_conninfo_arg = i;
				s->p->psql_conninfo_off = (size_t)(conn[2] - s->argv[i]);
				break;
			}
	if (!s->p->refused)
		psql_target(s, conn, cfg);
}

int toolfiles_check_binary(const char *tool, const char *realpath, const char *head,
			   size_t head_len, const char **reterr)
{
	if (!tool || !realpath || (!head && head_len > 0))
		return -EINVAL;
	if (strcmp(tool, "psql") != 0)
		return 0;
	if (strstr(realpath, "/postgresql-common/")) {
		*reterr = "it is postgresql-common's pg_wrapper, which rewrites psql's arguments and "
			  "target after the policy decided (--cluster, ~/.postgresqlrc)";
		return -EINVAL;
	}
	if (head_len >= 2 && head[0] == '#' && head[1] == '!') {
		*reterr = "it is a script, not the psql binary (a wrapper can change the arguments "
			  "and target after the policy decided)";
		return -EINVAL;
	}
	return 0;
}

int toolfiles_plan(const char *tool, const char *const *argv, size_t argc,
		   const struct toolfiles_config *cfg, struct toolfiles_plan *ret)
{
	struct toolfiles_plan p = { 0 };
	struct scan s = { .argv = argv, .argc = argc, .p = &p };

	if (!tool || !argv || !cfg || !ret || !cfg->gh_host)
		return -EINVAL;
	p.private_cwd = strcmp(tool, "git") != 0;
	if (strcmp(tool, "kubectl") == 0)
		plan_kubectl(&s);
	else if (strcmp(tool, "aws") == 0)
		plan_aws(&s);
	else if (strcmp(tool, "gh") == 0)
		plan_gh(&s, cfg);
	else if (strcmp(tool, "terraform") == 0)
		plan_terraform(&s);
	else if (strcmp(tool, "psql") == 0)
		plan_psql(&s, cfg);
	*ret = p;
	return 0;
}
