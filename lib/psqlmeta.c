/* SPDX-License-Identifier: MIT */
/* Meta-command scanner for psql text (contract in psqlmeta.h). The states
 * follow psql's lexer (src/bin/psql/psqlscan.l and psqlscanslash.l, read as
 * documentation): SQL text with '...' strings (E'...' with backslash
 * escapes, and plain ones too when standard_conforming_strings is off),
 * "..." identifiers, $tag$...$tag$ dollar quotes, -- comments and nested
 * slash-star comments; a backslash elsewhere starts a meta-command whose
 * arguments run to the end of the line, to the next unquoted backslash
 * (another meta-command) or to "\\" (back to SQL). */
#include "psqlmeta.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_ident_start(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c >= 0x80;
}

static bool is_ident(unsigned char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

bool psqlmeta_name_allowed(const char *name)
{
	/* \d and every \d... describe command (\dt, \dt+, \dS, \di, ...):
	 * catalogue queries only. */
	if (name[0] == 'd') {
		for (const char *p = name + 1; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '+'))
				return false;
		return true;
	}
	return strcmp(name, "l") == 0 || strcmp(name, "l+") == 0 || strcmp(name, "x") == 0 ||
	       strcmp(name, "conninfo") == 0 || strcmp(name, "timing") == 0;
}

struct scan {
	const char *s;
	size_t len, i;
	bool scs; /* standard_conforming_strings: backslash is literal in '...' */
	size_t n;
	struct psqlmeta_result *res;
};

static int refuse(struct scan *sc, size_t at, const char *name, size_t nlen, const char *why)
{
	if (nlen >= sizeof(sc->res->name))
		nlen = sizeof(sc->res->name) - 1;
	memcpy(sc->res->name, name, nlen);
	sc->res->name[nlen] = '\0';
	sc->res->offset = at;
	sc->res->why = why;
	return -EPERM;
}

/* Skips a quoted run starting at s[i] == q (the opening quote); `bs`:
 * backslash escapes the next byte. A doubled quote is an escaped quote.
 * Unterminated: to the end (psql waits for more input, nothing runs). */
static void skip_quoted(struct scan *sc, char q, bool bs)
{
	sc->i++;
	while (sc->i < sc->len) {
		char c = sc->s[sc->i];

		if (bs && c == '\\') {
			sc->i += 2;
			continue;
		}
		sc->i++;
		if (c == q) {
			if (sc->i < sc->len && sc->s[sc->i] == q) {
				sc->i++;
				continue;
			}
			return;
		}
	}
	if (sc->i > sc->len)
		sc->i = sc->len;
}

/* $tag$ ... $tag$ starting at s[i] == '$'; false when it is not a dollar
 * quote opening ($1, a lone $). */
static bool skip_dollar(struct scan *sc)
{
	size_t j = sc->i + 1, tag_len;
	const char *tag = sc->s + sc->i;

	if (j < sc->len && sc->s[j] != '$') {
		if (!is_ident_start((unsigned char)sc->s[j]))
			return false;
		while (j < sc->len && is_ident((unsigned char)sc->s[j]) && sc->s[j] != '$')
			j++;
		if (j >= sc->len || sc->s[j] != '$')
			return false;
	} else if (j >= sc->len)
		return false;
	tag_len = j - sc->i + 1;
	for (size_t k = j + 1; k + tag_len <= sc->len; k++)
		if (memcmp(sc->s + k, tag, tag_len) == 0) {
			sc->i = k + tag_len;
			return true;
		}
	sc->i = sc->len; /* unterminated */
	return true;
}

/* A meta-command at s[i] == '\\': its name, then its arguments. Returns
 * with i after it (at the next meta-command's backslash, or in SQL). */
static int meta(struct scan *sc)
{
	size_t at = sc->i, start = ++sc->i, nlen;
	char name[PSQLMETA_MAX_NAME];

	while (sc->i < sc->len &&
	       (is_ident((unsigned char)sc->s[sc->i]) || sc->s[sc->i] == '+'))
		sc->i++;
	if (sc->i == start && sc->i < sc->len)
		sc->i++; /* a one-character name: \! \? \\ \; ... */
	nlen = sc->i - start;
	if (nlen == 0)
		return refuse(sc, at, "", 0, "a lone backslash at the end");
	if (nlen >= sizeof(name))
		return refuse(sc, at, sc->s + start, nlen, "meta-command name too long");
	memcpy(name, sc->s + start, nlen);
	name[nlen] = '\0';
	sc->n++;
	if (!psqlmeta_name_allowed(name))
		return refuse(sc, at, name, nlen,
			      "only \\d..., \\l, \\x, \\conninfo and \\timing are accepted "
			      "(others run programs or read and write files on the host)");
	/* Arguments, as psqlscanslash.l reads them. */
	while (sc->i < sc->len) {
		char c = sc->s[sc->i];

		if (c == '\n')
			return 0;
		if (c == '`')
			return refuse(sc, sc->i, name, nlen,
				      "a backtick in a meta-command's arguments runs a shell command");
		if (c == '\'') {
			skip_quoted(sc, '\'', true);
			continue;
		}
		if (c == '"') {
			skip_quoted(sc, '"', false);
			continue;
		}
		if (c == '\\') {
			if (sc->i + 1 < sc->len && sc->s[sc->i + 1] == '\\') {
				sc->i += 2; /* "\\": end of arguments, SQL follows */
				return 0;
			}
			return 0; /* the next meta-command */
		}
		sc->i++;
	}
	return 0;
}

static int scan_text(struct scan *sc)
{
	while (sc->i < sc->len) {
		char c = sc->s[sc->i];
		int r;

		if (c == '-' && sc->i + 1 < sc->len && sc->s[sc->i + 1] == '-') {
			while (sc->i < sc->len && sc->s[sc->i] != '\n')
				sc->i++;
		} else if (c == '/' && sc->i + 1 < sc->len && sc->s[sc->i + 1] == '*') {
			unsigned depth = 1;

			sc->i += 2;
			while (sc->i < sc->len && depth > 0) {
				if (sc->s[sc->i] == '/' && sc->i + 1 < sc->len && sc->s[sc->i + 1] == '*') {
					depth++;
					sc->i += 2;
				} else if (sc->s[sc->i] == '*' && sc->i + 1 < sc->len &&
					   sc->s[sc->i + 1] == '/') {
					depth--;
					sc->i += 2;
				} else
					sc->i++;
			}
		} else if (c == '\'') {
			/* E'...' (the E just before) always has backslash escapes. */
			bool e = sc->i > 0 && (sc->s[sc->i - 1] == 'E' || sc->s[sc->i - 1] == 'e') &&
				 (sc->i < 2 || !is_ident((unsigned char)sc->s[sc->i - 2]));

			skip_quoted(sc, '\'', e || !sc->scs);
		} else if (c == '"') {
			skip_quoted(sc, '"', false);
		} else if (c == '$' && (sc->i == 0 || !is_ident((unsigned char)sc->s[sc->i - 1])) &&
			   skip_dollar(sc)) {
			continue;
		} else if (c == '\\') {
			r = meta(sc);
			if (r < 0)
				return r;
		} else if (is_ident((unsigned char)c)) {
			/* A whole identifier, so that a '$' inside it (a$b) is not
			 * taken for a dollar quote. */
			while (sc->i < sc->len && (is_ident((unsigned char)sc->s[sc->i]) || sc->s[sc->i] == '$'))
				sc->i++;
		} else
			sc->i++;
	}
	return 0;
}

int psqlmeta_check(const char *text, size_t len, struct psqlmeta_result *ret)
{
	struct psqlmeta_result res = { 0 };
	size_t n_max = 0;

	if (len > PSQLMETA_MAX_TEXT)
		return -E2BIG;
	if (memchr(text, '\0', len))
		return -EINVAL;
	for (int pass = 0; pass < 2; pass++) {
		struct scan sc = { .s = text, .len = len, .scs = pass == 0, .res = &res };
		int r = scan_text(&sc);

		if (r < 0) {
			res.n_commands = sc.n;
			*ret = res;
			return r;
		}
		if (sc.n > n_max)
			n_max = sc.n;
	}
	res.n_commands = n_max;
	*ret = res;
	return 0;
}
