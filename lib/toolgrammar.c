/* SPDX-License-Identifier: MIT */
/* Per-tool argument grammars (see toolgrammar.h). The tables below list, for
 * each tool, the options whose spelling matters to policy. The one mistake
 * that would let a command through is marking as "takes a value" an option
 * the tool treats as a plain flag: the next word would vanish from our view.
 * So an option is OPT_VALUE only when the tool's own parser requires a value
 * for it; optional values (pflag NoOptDefVal,
 * terraform -chdir=) are OPT_OPTVAL and are only ever taken after '='. */
#include "toolgrammar.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"

enum opt_kind {
	OPT_FLAG,    /* no value; "--x=v" is still accepted and recorded */
	OPT_VALUE,   /* value attached ("--x=v", "-xv") or in the next word */
	OPT_OPTVAL,  /* value only when attached */
	OPT_REFUSED, /* never allowed: why says what it would let the caller do */
	OPT_KIND_MAX,
};

struct opt {
	const char *name;  /* "--force", "-f"; terraform: "-destroy" */
	enum opt_kind kind;
	const char *canon; /* long name this is an alias of, or NULL */
	const char *why;   /* OPT_REFUSED only */
};

struct sub {
	const char *name;
	const struct opt *opts; /* terminated by a NULL name */
};

struct grammar {
	const char *tool;
	const struct opt *global;
	const struct sub *subs;    /* terminated by a NULL name; may be NULL */
	bool global_everywhere;    /* persistent options also after the subcommand */
	bool global_abbrev;        /* long options in global may be abbreviated */
	bool sub_abbrev;           /* long options in sub tables may be abbreviated */
	bool single_dash_long;     /* Go flag package: -name and --name are the same */
	unsigned sub_depth;
};

#define F(n) { n, OPT_FLAG, NULL, NULL }
#define FA(n, c) { n, OPT_FLAG, c, NULL }
#define V(n) { n, OPT_VALUE, NULL, NULL }
#define VA(n, c) { n, OPT_VALUE, c, NULL }
#define O(n) { n, OPT_OPTVAL, NULL, NULL }
#define OA(n, c) { n, OPT_OPTVAL, c, NULL }
#define R(n, w) { n, OPT_REFUSED, NULL, w }
#define END { NULL, OPT_FLAG, NULL, NULL }

/* git: requests come from the git relay (execd/gitrelay.c) as argv
 * {"git", OP} with OP ls-remote, fetch or push, and nothing else. git is not
 * a wrapped tool any more, so the option tables that guarded host git on the
 * workspace (-c, --exec-path, --upload-pack, clone --template, ...) went
 * with it. */
static const struct opt git_global[] = {
	END,
};

/* kubectl persistent flags (pflag: no abbreviation, allowed anywhere). */
static const struct opt kubectl_global[] = {
	VA("-n", "--namespace"), V("--namespace"), V("--context"), V("--cluster"), V("--user"),
	V("--kubeconfig"), VA("-s", "--server"), V("--server"), V("--token"), V("--as"),
	V("--as-group"), V("--as-uid"), V("--username"), V("--password"),
	V("--certificate-authority"), V("--client-certificate"), V("--client-key"),
	V("--tls-server-name"), V("--request-timeout"), V("--cache-dir"), VA("-v", "--v"),
	V("--v"), V("--vmodule"), V("--log-flush-frequency"), V("--profile"),
	V("--profile-output"), F("--insecure-skip-tls-verify"), F("--match-server-version"),
	F("--disable-compression"), F("--warnings-as-errors"), FA("-h", "--help"), F("--help"),
	END,
};

static const struct opt kubectl_get[] = {
	VA("-o", "--output"), V("--output"), VA("-l", "--selector"), V("--selector"),
	V("--field-selector"), VA("-f", "--filename"), V("--filename"), VA("-k", "--kustomize"),
	V("--kustomize"), VA("-L", "--label-columns"), V("--label-columns"), V("--sort-by"),
	V("--template"), V("--chunk-size"), V("--subresource"), V("--raw"),
	FA("-A", "--all-namespaces"), F("--all-namespaces"), FA("-w", "--watch"), F("--watch"),
	F("--watch-only"), F("--output-watch-events"), F("--ignore-not-found"), F("--no-headers"),
	FA("-R", "--recursive"), F("--recursive"), F("--server-print"), F("--show-kind"),
	F("--show-labels"), F("--show-managed-fields"), F("--allow-missing-template-keys"),
	END,
};

static const struct opt kubectl_describe[] = {
	VA("-f", "--filename"), V("--filename"), VA("-k", "--kustomize"), V("--kustomize"),
	VA("-l", "--selector"), V("--selector"), FA("-A", "--all-namespaces"),
	F("--all-namespaces"), FA("-R", "--recursive"), F("--recursive"), V("--chunk-size"),
	F("--show-events"),
	END,
};

static const struct opt kubectl_logs[] = {
	VA("-c", "--container"), V("--container"), FA("-f", "--follow"), F("--follow"),
	FA("-p", "--previous"), F("--previous"), V("--since"), V("--since-time"), V("--tail"),
	F("--timestamps"), VA("-l", "--selector"), V("--selector"), F("--all-containers"),
	F("--prefix"), V("--limit-bytes"), V("--max-log-requests"), V("--pod-running-timeout"),
	F("--ignore-errors"), F("--insecure-skip-tls-verify-backend"),
	END,
};

static const struct opt kubectl_delete[] = {
	VA("-f", "--filename"), V("--filename"), VA("-k", "--kustomize"), V("--kustomize"),
	VA("-l", "--selector"), V("--selector"), F("--all"), FA("-A", "--all-namespaces"),
	F("--all-namespaces"), O("--cascade"), V("--grace-period"), F("--now"), F("--force"),
	F("--wait"), V("--timeout"), V("--field-selector"), F("--ignore-not-found"),
	VA("-o", "--output"), V("--output"), O("--dry-run"), FA("-i", "--interactive"),
	F("--interactive"), V("--raw"), FA("-R", "--recursive"), F("--recursive"),
	END,
};

static const struct opt kubectl_apply[] = {
	VA("-f", "--filename"), V("--filename"), VA("-k", "--kustomize"), V("--kustomize"),
	FA("-R", "--recursive"), F("--recursive"), VA("-l", "--selector"), V("--selector"),
	F("--prune"), O("--dry-run"), F("--server-side"), F("--force-conflicts"),
	V("--field-manager"), VA("-o", "--output"), V("--output"), F("--force"),
	V("--grace-period"), V("--timeout"), F("--wait"), F("--overwrite"), O("--validate"),
	END,
};

static const struct opt kubectl_exec[] = {
	VA("-c", "--container"), V("--container"), FA("-i", "--stdin"), F("--stdin"),
	FA("-t", "--tty"), F("--tty"), FA("-q", "--quiet"), F("--quiet"), VA("-f", "--filename"),
	V("--filename"), V("--pod-running-timeout"),
	END,
};

static const struct sub kubectl_subs[] = {
	{ "get", kubectl_get },       { "describe", kubectl_describe }, { "logs", kubectl_logs },
	{ "delete", kubectl_delete }, { "apply", kubectl_apply },       { "exec", kubectl_exec },
	{ NULL, NULL },
};

/* gh: -R/--repo is inherited by most commands; everything else is
 * per-command and written after the command by convention. */
static const struct opt gh_global[] = {
	VA("-R", "--repo"), V("--repo"), F("--help"), F("--version"),
	END,
};

/* terraform: Go's flag package, one or two dashes; -chdir only as -chdir=DIR. */
static const struct opt terraform_global[] = {
	O("-chdir"), F("-help"), FA("-h", "-help"), F("-version"), FA("-v", "-version"),
	F("-install-autocomplete"), F("-uninstall-autocomplete"),
	END,
};

#define TF_PLAN_APPLY_COMMON                                                                       \
	F("-auto-approve"), V("-backup"), F("-compact-warnings"), F("-destroy"), F("-lock"),       \
		V("-lock-timeout"), F("-input"), F("-no-color"), V("-parallelism"), V("-state"),   \
		V("-state-out"), V("-var"), V("-var-file"), F("-refresh"), F("-refresh-only"),     \
		V("-replace"), V("-target"), F("-json")

static const struct opt terraform_apply[] = {
	TF_PLAN_APPLY_COMMON,
	END,
};

static const struct opt terraform_plan[] = {
	TF_PLAN_APPLY_COMMON, V("-out"), F("-detailed-exitcode"), V("-generate-config-out"),
	END,
};

static const struct opt terraform_init[] = {
	F("-backend"), V("-backend-config"), V("-from-module"), F("-get"), F("-input"), F("-lock"),
	V("-lock-timeout"), F("-no-color"),
	R("-plugin-dir", "terraform -plugin-dir loads provider binaries from a directory"),
	F("-reconfigure"), F("-migrate-state"), F("-upgrade"), V("-lockfile"), F("-force-copy"),
	F("-json"), V("-test-directory"),
	END,
};

static const struct sub terraform_subs[] = {
	{ "apply", terraform_apply }, { "destroy", terraform_apply }, { "plan", terraform_plan },
	{ "init", terraform_init },   { NULL, NULL },
};

/* aws: global options, anywhere (argparse, which accepts abbreviations). */
static const struct opt aws_global[] = {
	F("--debug"), V("--endpoint-url"), F("--no-verify-ssl"), F("--no-paginate"), V("--output"),
	V("--query"), V("--profile"), V("--region"), F("--version"), V("--color"),
	F("--no-sign-request"), V("--ca-bundle"), V("--cli-read-timeout"),
	V("--cli-connect-timeout"), V("--cli-binary-format"), F("--no-cli-pager"),
	F("--cli-auto-prompt"), F("--no-cli-auto-prompt"),
	END,
};

/* psql: getopt_long (options anywhere, long options abbreviable). */
static const struct opt psql_global[] = {
	VA("-c", "--command"), V("--command"), VA("-d", "--dbname"), V("--dbname"),
	VA("-f", "--file"), V("--file"), VA("-h", "--host"), V("--host"), VA("-p", "--port"),
	V("--port"), VA("-U", "--username"), V("--username"), VA("-v", "--set"), V("--set"),
	V("--variable"), VA("-o", "--output"), V("--output"), VA("-L", "--log-file"),
	V("--log-file"), VA("-P", "--pset"), V("--pset"), VA("-F", "--field-separator"),
	V("--field-separator"), VA("-R", "--record-separator"), V("--record-separator"),
	VA("-T", "--table-attr"), V("--table-attr"), FA("-l", "--list"), F("--list"),
	FA("-V", "--version"), F("--version"), FA("-X", "--no-psqlrc"), F("--no-psqlrc"),
	FA("-1", "--single-transaction"), F("--single-transaction"), O("--help"), F("-?"),
	F("-a"), F("-b"), F("-e"), F("-E"), F("-n"), F("-q"), F("-s"), F("-S"), F("-A"), F("-H"),
	F("-t"), F("-x"), F("-z"), F("-0"), F("-w"), F("-W"), F("--csv"),
	END,
};

static const struct grammar grammars[] = {
	{ "git", git_global, NULL, false, false, false, false, 1 },
	{ "kubectl", kubectl_global, kubectl_subs, true, false, false, false, 1 },
	{ "gh", gh_global, NULL, true, false, false, false, 2 },
	{ "terraform", terraform_global, terraform_subs, false, false, false, true, 1 },
	{ "aws", aws_global, NULL, true, true, false, false, 2 },
	{ "psql", psql_global, NULL, true, true, false, false, 0 },
};

static const struct grammar *grammar_find(const char *tool)
{
	if (!tool)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(grammars); i++)
		if (strcmp(grammars[i].tool, tool) == 0)
			return &grammars[i];
	return NULL;
}

bool toolgrammar_known(const char *tool)
{
	return grammar_find(tool) != NULL;
}

static const struct opt *sub_table(const struct grammar *g, const char *word)
{
	if (!g->subs)
		return NULL;
	for (const struct sub *s = g->subs; s->name; s++)
		if (strcmp(s->name, word) == 0)
			return s->opts;
	return NULL;
}

/* Long option lookup: exact name first, then (abbrev) the unique option whose
 * name starts with the written prefix. Two different options sharing the
 * prefix make it ambiguous, which the tool itself rejects: unknown here. */
static const struct opt *find_long(const struct opt *t, const char *name, size_t len, bool abbrev,
				   bool *ambiguous)
{
	const struct opt *hit = NULL;

	if (!t)
		return NULL;
	for (const struct opt *o = t; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	if (!abbrev || len < 3)
		return NULL;
	for (const struct opt *o = t; o->name; o++) {
		if (o->name[1] != '-' || strncmp(o->name, name, len) != 0)
			continue;
		if (hit && strcmp(hit->name, o->name) != 0) {
			*ambiguous = true;
			return NULL;
		}
		hit = o;
	}
	return hit;
}

static const struct opt *find_short(const struct opt *t, char c)
{
	if (!t)
		return NULL;
	for (const struct opt *o = t; o->name; o++)
		if (o->name[0] == '-' && o->name[1] == c && o->name[2] == '\0')
			return o;
	return NULL;
}

static int add_flag(struct toolgrammar_parse *p, size_t cap, const struct opt *o,
		    const char *written, size_t written_len, const char *value)
{
	struct toolgrammar_flag *f;

	if (p->n_flags >= cap)
		return -E2BIG;
	f = &p->flags[p->n_flags++];
	f->written = written;
	f->written_len = written_len;
	f->value = value;
	f->known = o != NULL;
	f->name = o ? (o->canon ? o->canon : o->name) : NULL;
	return 0;
}

/* The option as written, for flags the grammar did not know: a pointer to
 * argv text is enough when the name ends the word; "--x=v" and short options
 * inside clusters are copied into the flag's own storage. */
static const char *unknown_name(struct toolgrammar_parse *p, size_t cap, const char *written,
				size_t len, bool short_opt)
{
	char *s;

	if (!short_opt && written[len] == '\0')
		return written;
	if (p->n_store >= cap)
		return NULL;
	s = malloc(len + 2);
	if (!s)
		return NULL;
	if (short_opt) {
		s[0] = '-';
		s[1] = written[0];
		s[2] = '\0';
	} else {
		memcpy(s, written, len);
		s[len] = '\0';
	}
	p->store[p->n_store++] = s;
	return s;
}

void toolgrammar_parse_done(struct toolgrammar_parse *p)
{
	if (!p)
		return;
	free(p->flags);
	free(p->words);
	p->flags = NULL;
	p->words = NULL;
	if (p->store) {
		for (size_t i = 0; i < p->n_store; i++)
			free(p->store[i]);
		free(p->store);
		p->store = NULL;
	}
	p->n_flags = p->n_words = p->n_store = 0;
}

int toolgrammar_parse(const char *tool, const char *const *argv, size_t argc,
		      struct toolgrammar_parse *ret)
{
	const struct grammar *g = grammar_find(tool);
	struct toolgrammar_parse p = { .tool = tool };
	bool dashdash = false, uncertain = false;
	size_t cap;
	int r = 0;

	if (!tool || !argv || !ret)
		return -EINVAL;
	if (!g) {
		*ret = p;
		return 0;
	}
	p.has_grammar = true;
	p.sub_depth = g->sub_depth;
	p.abbreviations = g->global_abbrev || g->sub_abbrev;
	p.single_dash_long = g->single_dash_long;
	if (argc > TOOLGRAMMAR_MAX_ARGS) {
		p.error = "too many arguments to judge";
		*ret = p;
		return 0;
	}
	/* A word yields at most one positional word, or as many flags as it has
	 * characters; bound the flag table by total length instead of by
	 * argc * longest word. */
	cap = argc + 1;
	for (size_t i = 1; i < argc; i++) {
		size_t l = argv[i] ? strnlen(argv[i], TOOLGRAMMAR_MAX_ARG_LEN + 1) : 0;

		if (!argv[i] || l > TOOLGRAMMAR_MAX_ARG_LEN) {
			p.error = "argument too long or missing";
			*ret = p;
			return 0;
		}
		if (argv[i][0] == '-' && argv[i][1] != '-')
			cap += l;
	}
	p.flags = calloc(cap, sizeof(*p.flags));
	p.words = calloc(argc + 1, sizeof(*p.words));
	p.store = calloc(cap, sizeof(*p.store));
	if (!p.flags || !p.words || !p.store) {
		toolgrammar_parse_done(&p);
		return -ENOMEM;
	}

	for (size_t i = 1; i < argc && !p.error; i++) {
		const char *a = argv[i];
		const struct opt *tables[2] = { NULL, NULL };
		bool abbrev[2] = { false, false };

		if (dashdash || a[0] != '-' || a[1] == '\0') {
			struct toolgrammar_word *w = &p.words[p.n_words++];

			w->word = a;
			w->uncertain = uncertain;
			w->after_dashdash = dashdash;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			dashdash = true;
			continue;
		}
		if (p.n_words == 0 || g->global_everywhere) {
			tables[0] = g->global;
			abbrev[0] = g->global_abbrev;
		}
		if (p.n_words > 0) {
			tables[1] = sub_table(g, p.words[0].word);
			abbrev[1] = g->sub_abbrev;
		}

		if (a[1] == '-' || g->single_dash_long) {
			/* Long option: "--name", "--name=value", terraform "-name". */
			const char *body = a + (a[1] == '-' ? 2 : 1);
			size_t nlen = strcspn(body, "=");
			const char *eq = body[nlen] == '=' ? body + nlen + 1 : NULL;
			const struct opt *o = NULL;
			bool ambiguous = false;
			char key[128];
			size_t klen;

			if (nlen == 0) {
				p.error = "malformed option";
				break;
			}
			/* Look up with the table's own dash convention. */
			if (g->single_dash_long) {
				klen = nlen + 1;
				if (klen >= sizeof(key))
					klen = 0;
				else {
					key[0] = '-';
					memcpy(key + 1, body, nlen);
				}
			} else {
				klen = (size_t)(body - a) + nlen;
				if (klen >= sizeof(key))
					klen = 0;
				else
					memcpy(key, a, klen);
			}
			if (klen > 0) {
				key[klen] = '\0';
				for (size_t t = 0; t < 2 && !o && !ambiguous; t++)
					o = find_long(tables[t], key, klen, abbrev[t], &ambiguous);
			}
			if (!o) {
				const char *name = unknown_name(&p, cap, a, (size_t)(body - a) + nlen,
								false);

				if (!name) {
					r = -ENOMEM;
					break;
				}
				r = add_flag(&p, cap, NULL, a, (size_t)(body - a) + nlen, eq);
				if (r < 0)
					break;
				p.flags[p.n_flags - 1].name = name;
				/* "--x=v" cannot have swallowed the next word. */
				if (!eq)
					uncertain = true;
				continue;
			}
			if (o->kind == OPT_REFUSED && !p.refused) {
				p.refused = o->why;
				p.refused_option = a;
			}
			if (o->kind == OPT_VALUE && !eq) {
				if (i + 1 >= argc) {
					p.error = "an option is missing its value";
					break;
				}
				eq = argv[++i];
			}
			r = add_flag(&p, cap, o, a, (size_t)(body - a) + nlen, eq);
			if (r < 0)
				break;
			continue;
		}

		/* Short cluster: "-fu", "-C<dir>", "-n" "ns". */
		for (size_t j = 1; a[j]; j++) {
			const struct opt *o = NULL;
			const char *value = NULL;

			for (size_t t = 0; t < 2 && !o; t++)
				o = find_short(tables[t], a[j]);
			if (!o) {
				const char *name = unknown_name(&p, cap, a + j, 1, true);

				if (!name) {
					r = -ENOMEM;
					break;
				}
				r = add_flag(&p, cap, NULL, a + j, 1, NULL);
				if (r < 0)
					break;
				p.flags[p.n_flags - 1].name = name;
				p.flags[p.n_flags - 1].written = name;
				p.flags[p.n_flags - 1].written_len = 2;
				/* The unknown letter may take the rest of the
				 * cluster or the next word as its value; the
				 * letters after it are still recorded as flags,
				 * which only ever makes deny rules match more. */
				uncertain = true;
				continue;
			}
			if (o->kind == OPT_REFUSED && !p.refused) {
				p.refused = o->why;
				p.refused_option = a;
			}
			if (o->kind == OPT_VALUE || o->kind == OPT_OPTVAL) {
				if (a[j + 1])
					value = a + j + 1;
				else if (o->kind == OPT_VALUE) {
					if (i + 1 >= argc) {
						p.error = "an option is missing its value";
						break;
					}
					value = argv[++i];
				}
				r = add_flag(&p, cap, o, o->name, 2, value);
				break;
			}
			r = add_flag(&p, cap, o, o->name, 2, NULL);
			if (r < 0)
				break;
		}
		if (r < 0)
			break;
	}
	if (r < 0) {
		toolgrammar_parse_done(&p);
		return r;
	}
	*ret = p;
	return 0;
}

static const char *skip_dashes(const char *s)
{
	while (*s == '-')
		s++;
	return s;
}

bool toolgrammar_flag_matches(const struct toolgrammar_parse *p, const struct toolgrammar_flag *f,
			      const char *want)
{
	size_t wl = strlen(want);

	if (p->single_dash_long) {
		/* terraform: -destroy, --destroy and -destroy=true are one flag. */
		const char *w = skip_dashes(want);
		const char *n = f->name ? skip_dashes(f->name) : "";
		const char *x = skip_dashes(f->written);
		size_t xl = f->written_len - (size_t)(x - f->written);

		return strcmp(n, w) == 0 || (strlen(w) == xl && strncmp(x, w, xl) == 0);
	}
	if (f->name && strcmp(f->name, want) == 0)
		return true;
	if (f->written_len == wl && strncmp(f->written, want, wl) == 0)
		return true;
	/* aws reads "--reg" as "--region"; an abbreviation our tables could not
	 * resolve still counts as the option it may abbreviate. */
	if (p->abbreviations && !f->known && f->written_len > 3 && f->written[1] == '-' &&
	    f->written_len < wl && strncmp(f->written, want, f->written_len) == 0)
		return true;
	return false;
}

int toolgrammar_kubectl_words(const char *operand, bool (*cb)(const char *word, void *userdata),
			      void *userdata)
{
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;

	if (cb(operand, userdata))
		return 1;
	copy = strdup(operand);
	if (!copy)
		return -ENOMEM;
	for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		char *slash, *dot;

		if (cb(e, userdata))
			return 1;
		for (char *c = e; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (cb(e, userdata))
			return 1;
		slash = strchr(e, '/');
		if (slash) {
			*slash = '\0';
			if (cb(e, userdata))
				return 1;
		}
		/* "secrets.v1." and "secrets.v1.core": the resource before the
		 * version and group. */
		dot = strchr(e, '.');
		if (dot) {
			*dot = '\0';
			if (cb(e, userdata))
				return 1;
		}
	}
	return 0;
}
