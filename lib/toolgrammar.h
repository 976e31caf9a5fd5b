/* SPDX-License-Identifier: MIT */
/* Per-tool argument grammars: split an argv into options (with their values)
 * and positional words the way the real tool would, so that policy sees
 * `kubectl -n x get pods` as subcommand "get" with flag "-n" and never as a
 * joined string. Pure code; the parse points into the caller's argv.
 *
 * What the grammar knows, per tool (gh, kubectl, terraform, aws, psql; git
 * only as the relay's {"git", OP}):
 * which options take a separate value (the mistake that matters: believing an
 * option takes a value when the tool does not would hide the next word), the
 * short/long aliases, which options are refused outright (terraform
 * -plugin-dir loads programs), whether long options may be abbreviated (
 * aws, psql), whether a single dash starts a long option (terraform).
 *
 * Options the grammar does not know are recorded as flags without a value;
 * a positional word that follows one is marked `uncertain`, because the tool
 * might have taken it as that option's value (cobra, for one, assumes so
 * while looking for the subcommand). Policy refuses to decide a subcommand
 * from uncertain words. */
#ifndef CS_TOOLGRAMMAR_H
#define CS_TOOLGRAMMAR_H

#include <stdbool.h>
#include <stddef.h>

#define TOOLGRAMMAR_MAX_ARGS 4096 /* argv entries beyond which we refuse to judge */
#define TOOLGRAMMAR_MAX_ARG_LEN 65536

struct toolgrammar_flag {
	const char *name;    /* canonical when known ("--force" for -f, "-destroy" for
	                      * terraform's --destroy), else as written ("--x", "-q") */
	const char *written; /* as written, without "=value" ("-f", "--forc") */
	size_t written_len;
	const char *value;   /* NULL when none; may point into a cluster or after '=' */
	bool known;          /* found in the grammar */
};

struct toolgrammar_word {
	const char *word;
	bool uncertain; /* an unknown option precedes it */
	bool after_dashdash;
};

struct toolgrammar_parse {
	const char *tool;
	bool has_grammar; /* false: a tool without a grammar; nothing below is filled */
	bool abbreviations; /* the tool accepts abbreviated long options */
	bool single_dash_long; /* terraform: -name is a long option */
	size_t n_flags, n_words;
	struct toolgrammar_flag *flags;  /* owned */
	struct toolgrammar_word *words;  /* owned: positional words, argv order */
	unsigned sub_depth;              /* natural subcommand depth (kubectl 1, gh 2, aws 2) */
	const char *refused;             /* static reason when an option is refused */
	const char *refused_option;      /* the option as written (points into argv) */
	const char *error;               /* static reason when the argv cannot be parsed */
	char **store;                    /* owned copies of option names */
	size_t n_store;
};

/* True when the tool has a grammar. */
bool toolgrammar_known(const char *tool);

/* Parses argv[1..argc-1] (argv[0] is the tool name) for tool. Fills *ret
 * (owned arrays: free with toolgrammar_parse_done). A refused option or an
 * argv that cannot be understood (missing option value, too many arguments)
 * is not an error of this call: it is reported in ret->refused / ret->error
 * for the caller to deny. -ENOMEM, -EINVAL on NULL arguments. */
int toolgrammar_parse(const char *tool, const char *const *argv, size_t argc,
		      struct toolgrammar_parse *ret);
void toolgrammar_parse_done(struct toolgrammar_parse *p);

/* Does request flag f match the policy's flag name `want` ("--force", "-f",
 * "-destroy")? Compares canonical and written names; for tools that accept
 * abbreviations an unknown long option matches when it is a prefix of want
 * (aws reads --reg as --region). Terraform names match with one or two
 * dashes. */
bool toolgrammar_flag_matches(const struct toolgrammar_parse *p, const struct toolgrammar_flag *f,
			      const char *want);

/* For kubectl: the resource spellings an operand stands for, so that one
 * policy word catches them all: "all,Secrets.v1." yields "all" and "secrets";
 * "secret/foo" yields "secret/foo" and "secret". Calls cb for the raw operand
 * and each derived word; stops at the first cb that returns true.
 * Returns 1 when one did, 0 when none did, -ENOMEM. */
int toolgrammar_kubectl_words(const char *operand, bool (*cb)(const char *word, void *userdata),
			      void *userdata);

#endif
