/* SPDX-License-Identifier: MIT */
/* Static policy: parser and evaluator (see policy.h and README.md). */
#include "policy.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authz_git.h"
#include "macros.h"
#include "psqltarget.h"
#include "toolfiles.h"
#include "toolgrammar.h"

enum cond_kind {
	COND_FLAG,    /* the request carries one of these options */
	COND_ARG,     /* an operand after the rule's subcommand words matches */
	COND_DEST,    /* the normalised destination matches (FNM_PATHNAME) */
	COND_CWD,     /* the mapped host cwd matches */
	/* git relay pushes (lib/authz_git.h), per ref update: */
	COND_REF,     /* the destination ref matches */
	COND_FORCE,   /* yes|no: a forced update */
	COND_DELETE,  /* yes|no: a deletion */
	COND_FF,      /* yes|no: a fast-forward (or a new ref) */
	COND_DEFAULT, /* yes|no: the remote's default branch */
	/* psql's target (lib/psqltarget.h), canonical; a field the command
	 * does not give never matches: */
	COND_HOST,    /* host name, address or socket directory */
	COND_PORT,
	COND_DB,
	COND_USER,
	COND_MAX,
};

static const char *const cond_names[COND_MAX] = {
	[COND_FLAG] = "flag", [COND_ARG] = "arg",
	[COND_DEST] = "dest", [COND_CWD] = "cwd", [COND_REF] = "ref",
	[COND_FORCE] = "force", [COND_DELETE] = "delete", [COND_FF] = "ff",
	[COND_DEFAULT] = "default", [COND_HOST] = "host", [COND_PORT] = "port",
	[COND_DB] = "db", [COND_USER] = "user",
};

static bool cond_is_psql(int c)
{
	return c == COND_HOST || c == COND_PORT || c == COND_DB || c == COND_USER;
}

static bool cond_is_git_update(int c)
{
	return c == COND_REF || c == COND_FORCE || c == COND_DELETE || c == COND_FF ||
	       c == COND_DEFAULT;
}

struct plist {
	size_t n;
	char **items;
};

struct rule {
	bool deny;
	char *tool; /* "*" for any tool */
	size_t n_words;
	struct plist words[POLICY_MAX_WORDS];
	bool has[COND_MAX];
	struct plist cond[COND_MAX];
	char *reason; /* may be NULL */
	unsigned line;
};

struct policy {
	size_t n_rules;
	struct rule *rules;
};

static void plist_free(struct plist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = 0;
}

static void rule_free(struct rule *r)
{
	free(r->tool);
	for (size_t i = 0; i < r->n_words; i++)
		plist_free(&r->words[i]);
	for (size_t i = 0; i < COND_MAX; i++)
		plist_free(&r->cond[i]);
	free(r->reason);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++)
		rule_free(&p->rules[i]);
	free(p->rules);
	free(p);
}

size_t policy_n_rules(const struct policy *p)
{
	return p ? p->n_rules : 0;
}

/* --- parsing ------------------------------------------------------------ */

struct token {
	char *text;      /* owned, unquoted */
	unsigned column; /* 1-based */
};

#define MAX_TOKENS (2 + POLICY_MAX_WORDS + COND_MAX + 1)

static int fail(struct policy_error *e, unsigned line, unsigned column, const char *msg, int r)
{
	if (e) {
		e->line = line;
		e->column = column;
		e->message = msg;
	}
	return r;
}

/* Splits one line (no newline, no NUL) into tokens. A token is a run of
 * non-blank bytes; after "key=" a double-quoted value may contain blanks and
 * the escapes \" and \\. '#' at the start of a token starts a comment. */
static int tokenize(const char *s, size_t len, unsigned line, struct token *toks, size_t *n,
		    struct policy_error *e)
{
	size_t i = 0;

	*n = 0;
	while (i < len) {
		size_t start, cap;
		char *t;
		size_t tl = 0;

		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i >= len || s[i] == '#')
			break;
		if (*n >= MAX_TOKENS)
			return fail(e, line, (unsigned)i + 1, "too many words in one rule", -EINVAL);
		start = i;
		cap = len - i + 1;
		t = malloc(cap);
		if (!t)
			return -ENOMEM;
		toks[*n].text = t;
		toks[*n].column = (unsigned)start + 1;
		(*n)++;
		while (i < len && s[i] != ' ' && s[i] != '\t') {
			if (s[i] == '"') {
				if (i == start || s[i - 1] != '=' || memchr(s + start, '"', i - start))
					return fail(e, line, (unsigned)i + 1,
						    "a quote may only open a value after '='", -EINVAL);
				i++;
				while (i < len && s[i] != '"') {
					if (s[i] == '\\') {
						if (i + 1 >= len || (s[i + 1] != '"' && s[i + 1] != '\\'))
							return fail(e, line, (unsigned)i + 1,
								    "unknown escape (only \\\" and \\\\)",
								    -EINVAL);
						i++;
					}
					t[tl++] = s[i++];
				}
				if (i >= len)
					return fail(e, line, (unsigned)start + 1, "unterminated quote",
						    -EINVAL);
				i++;
				if (i < len && s[i] != ' ' && s[i] != '\t')
					return fail(e, line, (unsigned)i + 1,
						    "expected a blank after the closing quote", -EINVAL);
				break;
			}
			t[tl++] = s[i++];
		}
		t[tl] = '\0';
	}
	return 0;
}

static bool valid_tool_name(const char *s)
{
	if (strcmp(s, "*") == 0)
		return true;
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-' &&
		    *s != '_' && *s != '.')
			return false;
	return true;
}

/* Splits "a,b,c" into owned items. Empty items, over-long items and too many
 * items are errors. */
static int split_list(const char *v, struct plist *l, unsigned line, unsigned column,
		      struct policy_error *e)
{
	const char *p = v;

	if (!*v)
		return fail(e, line, column, "empty list", -EINVAL);
	l->items = calloc(POLICY_MAX_PATTERNS, sizeof(char *));
	if (!l->items)
		return -ENOMEM;
	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 0)
			return fail(e, line, column + (unsigned)(p - v), "empty item in list", -EINVAL);
		if (n > POLICY_MAX_PATTERN)
			return fail(e, line, column + (unsigned)(p - v), "pattern too long", -E2BIG);
		if (l->n >= POLICY_MAX_PATTERNS)
			return fail(e, line, column + (unsigned)(p - v), "too many items in list",
				    -E2BIG);
		l->items[l->n] = strndup(p, n);
		if (!l->items[l->n])
			return -ENOMEM;
		l->n++;
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static int parse_condition(struct rule *r, const struct token *t, unsigned line,
			   struct policy_error *e)
{
	char *eq = strchr(t->text, '=');
	const char *key = t->text, *val = eq + 1;
	unsigned vcol = t->column + (unsigned)(val - t->text);
	bool grammar = strcmp(r->tool, "*") != 0 && toolgrammar_known(r->tool);
	size_t klen = (size_t)(eq - t->text);
	int c = -1, k;

	if (klen == 6 && strncmp(key, "reason", 6) == 0) {
		if (r->reason)
			return fail(e, line, t->column, "duplicate reason", -EINVAL);
		if (strlen(val) >= AUTHZ_MAX_REASON)
			return fail(e, line, vcol, "reason too long", -E2BIG);
		if (has_control(val))
			return fail(e, line, vcol, "control character in reason", -EINVAL);
		r->reason = strdup(val);
		return r->reason ? 0 : -ENOMEM;
	}
	for (size_t i = 0; i < COND_MAX; i++)
		if (strlen(cond_names[i]) == klen && strncmp(key, cond_names[i], klen) == 0)
			c = (int)i;
	if (c < 0)
		return fail(e, line, t->column,
			    "unknown condition (flag=, arg=, dest=, cwd=, ref=, force=, "
			    "delete=, ff=, default=, host=, port=, db=, user=, reason=)",
			    -EINVAL);
	if (r->has[c])
		return fail(e, line, t->column, "condition given twice in one rule", -EINVAL);
	if ((c == COND_FLAG || c == COND_ARG) && (!grammar || strcmp(r->tool, "git") == 0))
		return fail(e, line, t->column,
			    strcmp(r->tool, "git") == 0
				    ? "git rules take dest=, ref=, force=, delete=, ff= and default= "
				      "(git goes through the relay: there are no git options to match)"
				    : "flag= and arg= need a tool with an argument grammar "
				      "(gh, kubectl, terraform, aws, psql)",
			    -EINVAL);
	if (cond_is_git_update(c) && strcmp(r->tool, "git") != 0)
		return fail(e, line, t->column,
			    "ref=, force=, delete=, ff= and default= are for git rules", -EINVAL);
	if (cond_is_psql(c) && strcmp(r->tool, "psql") != 0)
		return fail(e, line, t->column, "host=, port=, db= and user= are for psql rules",
			    -EINVAL);
	r->has[c] = true;
	k = split_list(val, &r->cond[c], line, vcol, e);
	if (k < 0)
		return k;
	for (size_t i = 0; i < r->cond[c].n; i++) {
		char *it = r->cond[c].items[i];

		if (has_control(it))
			return fail(e, line, vcol, "control character in pattern", -EINVAL);
		if (c == COND_FLAG) {
			/* "--force", or "-C=GLOB": the option with a value matching GLOB */
			char *eqv = strchr(it, '=');

			if (it[0] != '-' || it[1] == '\0' || it[1] == '=' ||
			    (it[1] == '-' && (it[2] == '\0' || it[2] == '=')) ||
			    (eqv && eqv[1] == '\0'))
				return fail(e, line, vcol,
					    "flag= takes option names such as --force or -f, or "
					    "-C=GLOB for a value",
					    -EINVAL);
		}
		if (c == COND_DEST) {
			if (strstr(it, "://") || strchr(it, '@'))
				return fail(e, line, vcol,
					    "dest= patterns are normalised URLs without scheme or user "
					    "(github.com/acme/*)",
					    -EINVAL);
			/* Hosts compare lowercased (URL hosts are case-insensitive). */
			for (char *h = it; *h && *h != '/'; h++)
				*h = (char)tolower((unsigned char)*h);
		}
		/* Host names compare lowercased, as psqltarget writes them;
		 * socket directories as written. */
		if (c == COND_HOST && it[0] != '/')
			for (char *h = it; *h; h++)
				*h = (char)tolower((unsigned char)*h);
		if (c == COND_PORT && strspn(it, "0123456789*?[]-!") != strlen(it))
			return fail(e, line, vcol, "port= patterns are numbers (or globs of digits)",
				    -EINVAL);
		if (c == COND_CWD && it[0] != '/')
			return fail(e, line, vcol, "cwd= patterns are absolute host paths", -EINVAL);
		if (cond_is_git_update(c) && c != COND_REF &&
		    (r->cond[c].n != 1 || (strcmp(it, "yes") != 0 && strcmp(it, "no") != 0)))
			return fail(e, line, vcol, "force=, delete=, ff= and default= take yes or no",
				    -EINVAL);
		if (c == COND_REF && strncmp(it, "refs/", 5) != 0)
			return fail(e, line, vcol, "ref= patterns are full ref names (refs/heads/*)",
				    -EINVAL);
	}
	return 0;
}

static int parse_rule(struct token *toks, size_t n, unsigned line, struct rule *r,
		      struct policy_error *e)
{
	bool grammar;
	size_t i;
	int k;

	r->line = line;
	if (strcmp(toks[0].text, "allow") == 0)
		r->deny = false;
	else if (strcmp(toks[0].text, "deny") == 0)
		r->deny = true;
	else
		return fail(e, line, toks[0].column, "expected 'allow' or 'deny'", -EINVAL);
	if (n < 2)
		return fail(e, line, toks[0].column + (unsigned)strlen(toks[0].text),
			    "missing tool name", -EINVAL);
	if (!valid_tool_name(toks[1].text))
		return fail(e, line, toks[1].column, "invalid tool name", -EINVAL);
	r->tool = strdup(toks[1].text);
	if (!r->tool)
		return -ENOMEM;
	grammar = strcmp(r->tool, "*") != 0 && toolgrammar_known(r->tool);

	for (i = 2; i < n && !strchr(toks[i].text, '='); i++) {
		if (toks[i].text[0] == '-')
			return fail(e, line, toks[i].column,
				    "options are matched with flag=, not as subcommand words", -EINVAL);
		if (!grammar)
			return fail(e, line, toks[i].column,
				    strcmp(r->tool, "*") == 0
					    ? "subcommand words need a named tool"
					    : "this tool has no argument grammar: only whole-tool "
					      "rules (with dest= or cwd=)",
				    -EINVAL);
		if (r->n_words >= POLICY_MAX_WORDS)
			return fail(e, line, toks[i].column, "too many subcommand words", -E2BIG);
		k = split_list(toks[i].text, &r->words[r->n_words], line, toks[i].column, e);
		r->n_words++;
		if (k < 0)
			return k;
		for (size_t j = 0; j < r->words[r->n_words - 1].n; j++)
			if (r->words[r->n_words - 1].items[j][0] == '-')
				return fail(e, line, toks[i].column,
					    "options are matched with flag=, not as subcommand words",
					    -EINVAL);
	}
	for (; i < n; i++) {
		if (!strchr(toks[i].text, '='))
			return fail(e, line, toks[i].column,
				    "subcommand words must come before conditions", -EINVAL);
		k = parse_condition(r, &toks[i], line, e);
		if (k < 0)
			return k;
	}
	return 0;
}

int policy_parse(const char *text, size_t len, struct policy **ret, struct policy_error *reterr)
{
	struct policy *p;
	size_t off = 0;
	unsigned line = 0;
	int r = 0;

	if (!text || !ret)
		return -EINVAL;
	if (len > POLICY_MAX_FILE)
		return fail(reterr, 0, 0, "policy file too large", -E2BIG);
	if (memchr(text, '\0', len)) {
		const char *z = memchr(text, '\0', len);
		unsigned l = 1;

		for (const char *c = text; c < z; c++)
			l += *c == '\n';
		return fail(reterr, l, 0, "NUL byte in policy", -EINVAL);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	while (off < len) {
		const char *s = text + off;
		const char *nl = memchr(s, '\n', len - off);
		size_t ll = nl ? (size_t)(nl - s) : len - off;
		struct token toks[MAX_TOKENS] = { { NULL, 0 } };
		size_t n = 0;
		struct rule rule = { 0 };

		line++;
		off += ll + (nl ? 1 : 0);
		if (ll > 0 && s[ll - 1] == '\r')
			ll--;
		if (ll > POLICY_MAX_LINE) {
			r = fail(reterr, line, POLICY_MAX_LINE + 1, "line too long", -E2BIG);
			break;
		}
		r = tokenize(s, ll, line, toks, &n, reterr);
		if (r >= 0 && n > 0) {
			if (p->n_rules >= POLICY_MAX_RULES)
				r = fail(reterr, line, toks[0].column, "too many rules", -E2BIG);
			else
				r = parse_rule(toks, n, line, &rule, reterr);
			if (r >= 0) {
				struct rule *nr = realloc(p->rules, (p->n_rules + 1) * sizeof(*nr));

				if (!nr)
					r = -ENOMEM;
				else {
					p->rules = nr;
					p->rules[p->n_rules++] = rule;
				}
			}
			if (r < 0)
				rule_free(&rule);
		}
		for (size_t i = 0; i < MAX_TOKENS; i++)
			free(toks[i].text);
		if (r < 0)
			break;
	}
	if (r < 0) {
		if (r == -ENOMEM)
			(void)fail(reterr, line, 0, "out of memory", r);
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/* --- destinations --------------------------------------------------------- */

static bool default_port(const char *scheme, const char *port, size_t plen)
{
	static const struct {
		const char *scheme, *port;
	} defaults[] = {
		{ "https", "443" }, { "http", "80" },     { "ssh", "22" },
		{ "git", "9418" },  { "git+ssh", "22" }, { "ssh+git", "22" },
	};

	for (size_t i = 0; i < ELEMENTSOF(defaults); i++)
		if (strcmp(scheme, defaults[i].scheme) == 0 && strlen(defaults[i].port) == plen &&
		    strncmp(port, defaults[i].port, plen) == 0)
			return true;
	return false;
}

/* Appends host (lowercased, validated) and optional port to out. */
static int put_host(char *out, size_t cap, size_t *o, const char *host, size_t hlen,
		    const char *port, size_t plen)
{
	if (hlen > 0 && host[hlen - 1] == '.')
		hlen--; /* "github.com." is github.com */
	if (hlen == 0 || host[0] == '-' || host[0] == '.' || host[hlen - 1] == '.')
		return -EINVAL;
	/* Empty labels ("a..b") are not host names. */
	for (size_t i = 1; i < hlen; i++)
		if (host[i] == '.' && host[i - 1] == '.')
			return -EINVAL;
	for (size_t i = 0; i < hlen; i++) {
		char c = (char)tolower((unsigned char)host[i]);

		if (!isalnum((unsigned char)c) && c != '-' && c != '.')
			return -EINVAL;
		if (*o + 1 >= cap)
			return -ENAMETOOLONG;
		out[(*o)++] = c;
	}
	if (plen > 0) {
		if (*o + plen + 1 >= cap)
			return -ENAMETOOLONG;
		out[(*o)++] = ':';
		for (size_t i = 0; i < plen; i++) {
			if (!isdigit((unsigned char)port[i]))
				return -EINVAL;
			out[(*o)++] = port[i];
		}
	}
	return 0;
}

/* Appends "/seg/seg" from path, refusing empty, "." and ".." segments and
 * segments with characters outside [A-Za-z0-9._~+-], and dropping one
 * trailing slash and one ".git". */
static int put_path(char *out, size_t cap, size_t *o, const char *path)
{
	size_t len = strlen(path);
	size_t start = *o;
	const char *p;

	if (len > 0 && path[0] == '/') {
		path++;
		len--;
	}
	if (len > 0 && path[len - 1] == '/')
		len--;
	if (len == 0)
		return -EINVAL;
	p = path;
	while (p < path + len) {
		size_t sl = strcspn(p, "/");

		if (p + sl > path + len)
			sl = (size_t)(path + len - p);
		if (sl == 0 || (sl == 1 && p[0] == '.') || (sl == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		/* Repository paths on every forge fit this set; anything else
		 * ('@', ':', quotes, shell or URL syntax) is not worth the risk
		 * of a server reading it differently from us. */
		for (size_t i = 0; i < sl; i++)
			if (!isalnum((unsigned char)p[i]) && !strchr("._~+-", p[i]))
				return -EINVAL;
		if (*o + sl + 2 >= cap)
			return -ENAMETOOLONG;
		out[(*o)++] = '/';
		memcpy(out + *o, p, sl);
		*o += sl;
		p += sl + 1;
	}
	if (*o - start >= 5 && strncmp(out + *o - 4, ".git", 4) == 0 && out[*o - 5] != '/') {
		*o -= 4;
		/* "..git" and "...git" would leave a "." or ".." segment. */
		if (out[*o - 1] == '.' && (out[*o - 2] == '/' || (out[*o - 2] == '.' &&
								    out[*o - 3] == '/')))
			return -EINVAL;
	}
	out[*o] = '\0';
	return 0;
}

int policy_normalise_url(const char *url, char *buf, size_t len)
{
	char out[POLICY_MAX_URL];
	size_t o = 0;
	const char *sep, *host, *hend, *path, *port = NULL;
	size_t plen = 0;
	char scheme[16] = "ssh";
	int r;

	if (!url || !buf || len == 0)
		return -EINVAL;
	if (strlen(url) >= POLICY_MAX_URL)
		return -ENAMETOOLONG;
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f || strchr("\\%?#", *c))
			return -EINVAL;
	sep = strstr(url, "://");
	if (sep) {
		size_t sl = (size_t)(sep - url);
		const char *auth = sep + 3, *aend, *at;

		if (sl == 0 || sl >= sizeof(scheme))
			return -EINVAL;
		for (size_t i = 0; i < sl; i++)
			scheme[i] = (char)tolower((unsigned char)url[i]);
		scheme[sl] = '\0';
		if (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0 &&
		    strcmp(scheme, "ssh") != 0 && strcmp(scheme, "git") != 0 &&
		    strcmp(scheme, "git+ssh") != 0 && strcmp(scheme, "ssh+git") != 0)
			return -EINVAL;
		aend = strchr(auth, '/');
		if (!aend)
			return -EINVAL;
		/* userinfo (possibly a token) is dropped, up to the last '@'. */
		host = auth;
		for (at = auth; at < aend; at++)
			if (*at == '@')
				host = at + 1;
		if (host < aend && *host == '[')
			return -EINVAL;
		hend = memchr(host, ':', (size_t)(aend - host));
		if (hend) {
			port = hend + 1;
			plen = (size_t)(aend - port);
			if (plen == 0 || default_port(scheme, port, plen))
				plen = 0;
		} else
			hend = aend;
		path = aend;
	} else {
		/* scp-like "[user@]host:path": git reads it so only when the
		 * colon comes before any slash; anything else is a local path. */
		const char *colon = strchr(url, ':'), *slash = strchr(url, '/'), *at;

		if (!colon || (slash && slash < colon))
			return -EINVAL;
		host = url;
		for (at = url; at < colon; at++)
			if (*at == '@')
				host = at + 1;
		if (host < colon && *host == '[')
			return -EINVAL;
		hend = colon;
		path = colon + 1;
		/* "ext::cmd" and other "helper::address" forms. */
		if (*path == ':')
			return -EINVAL;
	}
	r = put_host(out, sizeof(out), &o, host, (size_t)(hend - host), port, plen);
	if (r < 0)
		return r;
	r = put_path(out, sizeof(out), &o, path);
	if (r < 0)
		return r;
	if (o + 1 > len)
		return -ENAMETOOLONG;
	memcpy(buf, out, o + 1);
	return 0;
}

/* --- evaluation ----------------------------------------------------------- */

static bool plist_match(const struct plist *l, const char *s, int flags)
{
	for (size_t i = 0; i < l->n; i++)
		if (fnmatch(l->items[i], s, flags) == 0)
			return true;
	return false;
}

struct kmatch {
	const struct plist *l;
};

static bool kubectl_cb(const char *word, void *userdata)
{
	const struct kmatch *k = userdata;

	return plist_match(k->l, word, 0);
}

/* Does any operand in words[from..] match l? 1, 0 or -ENOMEM. */
static int operands_match(const struct toolgrammar_parse *gp, size_t from, const struct plist *l)
{
	for (size_t i = from; i < gp->n_words; i++) {
		const char *w = gp->words[i].word;

		if (strcmp(gp->tool, "kubectl") == 0) {
			struct kmatch k = { l };
			int r = toolgrammar_kubectl_words(w, kubectl_cb, &k);

			if (r != 0)
				return r;
		} else if (plist_match(l, w, 0))
			return 1;
	}
	return 0;
}

/* A flag= item: "NAME" or "NAME=GLOB" (the option given with a value that
 * matches GLOB; an option without a value never matches a GLOB). */
static bool flag_item_matches(const struct toolgrammar_parse *gp, const struct toolgrammar_flag *f,
			      const char *item)
{
	const char *eq = strchr(item, '=');
	char name[POLICY_MAX_PATTERN + 1];
	size_t n;

	if (!eq)
		return toolgrammar_flag_matches(gp, f, item);
	n = (size_t)(eq - item);
	if (n >= sizeof(name))
		return false;
	memcpy(name, item, n);
	name[n] = '\0';
	return f->value && toolgrammar_flag_matches(gp, f, name) && fnmatch(eq + 1, f->value, 0) == 0;
}

static bool yes_no(const struct plist *l, bool v)
{
	return strcmp(l->items[0], v ? "yes" : "no") == 0;
}

/* The per-update conditions: a rule with any of them matches a git push
 * request with exactly one update (policy_evaluate splits pushes) whose
 * fields match; anything else does not match. */
static bool git_update_match(const struct rule *r, const struct authz_request *req)
{
	const struct authz_git_update *u;
	bool any = false;

	for (int c = 0; c < COND_MAX; c++)
		any |= cond_is_git_update(c) && r->has[c];
	if (!any)
		return true;
	if (!req->git || req->git->n_updates != 1)
		return false;
	u = &req->git->updates[0];
	if (r->has[COND_REF] && !plist_match(&r->cond[COND_REF], u->dst, FNM_PATHNAME))
		return false;
	if (r->has[COND_FORCE] && !yes_no(&r->cond[COND_FORCE], u->force))
		return false;
	if (r->has[COND_DELETE] && !yes_no(&r->cond[COND_DELETE], u->delete_ref))
		return false;
	if (r->has[COND_FF] && !yes_no(&r->cond[COND_FF], u->ff))
		return false;
	if (r->has[COND_DEFAULT] && !yes_no(&r->cond[COND_DEFAULT], u->is_default))
		return false;
	return true;
}

/* host=, port=, db=, user=: each given condition needs the field set and
 * matching; a request that is not psql's never matches them. */
static bool psql_match(const struct rule *r, const struct authz_request *req)
{
	static const struct {
		int cond;
		enum psqltarget_field f;
	} map[] = {
		{ COND_HOST, PSQLTARGET_HOST },
		{ COND_PORT, PSQLTARGET_PORT },
		{ COND_DB, PSQLTARGET_DBNAME },
		{ COND_USER, PSQLTARGET_USER },
	};

	for (size_t i = 0; i < ELEMENTSOF(map); i++) {
		const char *v;

		if (!r->has[map[i].cond])
			continue;
		if (!req->psql)
			return false;
		v = psqltarget_get(req->psql, map[i].f);
		/* FNM_PATHNAME for hosts: `*.internal` is a name, never a
		 * socket directory such as /tmp/x.internal. */
		if (!v[0] || !plist_match(&r->cond[map[i].cond], v,
					  map[i].cond == COND_HOST ? FNM_PATHNAME : 0))
			return false;
	}
	return true;
}

enum match {
	MATCH_NO,
	MATCH_YES,
	MATCH_UNCERTAIN, /* the subcommand words cannot be told apart */
	MATCH_MAX,
};

/* aws options that redirect signed requests, weaken TLS, print credentials
 * or pick other credentials (toolfiles_aws_guarded) are allowed only by a
 * rule that names them with their exact value: `flag=--region=eu-west-1`
 * (no glob characters), or `flag=--debug` for one without a value. A rule
 * that merely allows `aws s3 ls` does not allow `aws s3 ls --endpoint-url
 * http://attacker`. */
static bool guarded_flags_named(const struct rule *r, const struct authz_request *req,
				const struct toolgrammar_parse *gp)
{
	if (strcmp(req->tool, "aws") != 0)
		return true;
	for (size_t i = 0; i < gp->n_flags; i++) {
		const struct toolgrammar_flag *f = &gp->flags[i];
		bool named = false;

		if (!toolfiles_aws_guarded(f->name) && !toolfiles_aws_guarded(f->written))
			continue;
		for (size_t j = 0; r->has[COND_FLAG] && j < r->cond[COND_FLAG].n && !named; j++) {
			const char *item = r->cond[COND_FLAG].items[j];
			const char *eq = strchr(item, '=');
			char name[POLICY_MAX_PATTERN + 1];
			size_t nl = eq ? (size_t)(eq - item) : strlen(item);

			if (nl >= sizeof(name))
				continue;
			memcpy(name, item, nl);
			name[nl] = '\0';
			if (!toolgrammar_flag_matches(gp, f, name))
				continue;
			if (!eq)
				named = !f->value;
			else
				named = f->value && !strpbrk(eq + 1, "*?[\\") && strcmp(eq + 1, f->value) == 0;
		}
		if (!named)
			return false;
	}
	return true;
}

static int rule_match(const struct rule *r, const struct authz_request *req,
		      const struct toolgrammar_parse *gp, const char *dest, enum match *ret)
{
	int k;

	*ret = MATCH_NO;
	if (strcmp(r->tool, "*") != 0 && strcmp(r->tool, req->tool) != 0)
		return 0;
	if (r->n_words > 0) {
		if (gp->n_words < r->n_words)
			return 0;
		if (gp->words[r->n_words - 1].uncertain) {
			*ret = MATCH_UNCERTAIN;
			return 0;
		}
		for (size_t i = 0; i < r->n_words; i++)
			if (!plist_match(&r->words[i], gp->words[i].word, 0) &&
			    /* a clone is a fetch into an empty repository: rules on
			     * fetch cover it; a rule can still name clone alone */
			    !(i == 0 && strcmp(req->tool, "git") == 0 &&
			      strcmp(gp->words[0].word, "clone") == 0 &&
			      plist_match(&r->words[0], "fetch", 0)))
				return 0;
	}
	if (r->has[COND_FLAG]) {
		bool any = false;

		for (size_t i = 0; i < gp->n_flags && !any; i++)
			for (size_t j = 0; j < r->cond[COND_FLAG].n && !any; j++)
				any = flag_item_matches(gp, &gp->flags[i], r->cond[COND_FLAG].items[j]);
		if (!any)
			return 0;
	}
	if (r->has[COND_ARG]) {
		k = operands_match(gp, r->n_words, &r->cond[COND_ARG]);
		if (k <= 0)
			return k;
	}
	if (r->has[COND_DEST] && (!dest || !plist_match(&r->cond[COND_DEST], dest, FNM_PATHNAME)))
		return 0;
	if (r->has[COND_CWD] &&
	    (!req->host_cwd || !plist_match(&r->cond[COND_CWD], req->host_cwd, 0)))
		return 0;
	if (!git_update_match(r, req))
		return 0;
	if (!psql_match(r, req))
		return 0;
	if (!r->deny && !guarded_flags_named(r, req, gp))
		return 0;
	*ret = MATCH_YES;
	return 0;
}

static void set_verdict(struct policy_verdict *v, enum authz_verdict verdict, unsigned line,
			const char *reason)
{
	v->verdict = verdict;
	v->source = line > 0 ? POLICY_SOURCE_RULE : POLICY_SOURCE_DEFAULT;
	v->line = line;
	(void)snprintf(v->reason, sizeof(v->reason), "%s", reason);
}

static int evaluate_one(const struct policy *p, const struct authz_request *req,
			struct policy_verdict *ret);

/* A git push with several ref updates is allowed only when each update is:
 * the policy is evaluated once per update, and the first denial is the
 * answer (its reason names the ref). */
int policy_evaluate(const struct policy *p, const struct authz_request *req,
		    struct policy_verdict *ret)
{
	struct authz_request one;
	struct authz_git g;
	int r = 0;

	if (!req || !req->git || req->git->n_updates <= 1)
		return evaluate_one(p, req, ret);
	one = *req;
	g = *req->git;
	one.git = &g;
	for (size_t i = 0; i < req->git->n_updates; i++) {
		char why[AUTHZ_MAX_REASON];

		g.updates = &req->git->updates[i];
		g.n_updates = 1;
		r = evaluate_one(p, &one, ret);
		if (r < 0 || ret->verdict != AUTHZ_ALLOW) {
			(void)snprintf(why, sizeof(why), "%.128s: %.360s", g.updates->dst, ret->reason);
			(void)snprintf(ret->reason, sizeof(ret->reason), "%s", why);
			return r;
		}
	}
	return r;
}

static int evaluate_one(const struct policy *p, const struct authz_request *req,
			struct policy_verdict *ret)
{
	struct toolgrammar_parse gp = { 0 };
	const struct rule *deny = NULL, *allow = NULL;
	char destbuf[POLICY_MAX_URL];
	const char *dest = NULL;
	bool uncertain = false;
	int r;

	set_verdict(ret, AUTHZ_DENY, 0, "denied (internal error)");
	ret->source = POLICY_SOURCE_GRAMMAR;
	if (!p || !req || !req->tool || !req->argv || req->argc == 0) {
		set_verdict(ret, AUTHZ_DENY, 0, "empty request");
		return -EINVAL;
	}
	r = toolgrammar_parse(req->tool, req->argv, req->argc, &gp);
	if (r < 0)
		return r;
	if (gp.error) {
		(void)snprintf(ret->reason, sizeof(ret->reason),
			       "the policy cannot understand these %s arguments: %s", req->tool,
			       gp.error);
		goto done;
	}
	if (gp.refused) {
		(void)snprintf(ret->reason, sizeof(ret->reason), "option '%.64s' is refused: %s",
			       gp.refused_option, gp.refused);
		goto done;
	}
	if (req->destination && policy_normalise_url(req->destination, destbuf, sizeof(destbuf)) >= 0)
		dest = destbuf;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *rule = &p->rules[i];
		enum match m;

		r = rule_match(rule, req, &gp, dest, &m);
		if (r < 0)
			goto done;
		if (m == MATCH_UNCERTAIN)
			uncertain = true;
		else if (m == MATCH_YES && rule->deny && !deny)
			deny = rule;
		else if (m == MATCH_YES && !rule->deny && !allow)
			allow = rule;
	}
	if (deny) {
		if (deny->reason)
			set_verdict(ret, AUTHZ_DENY, deny->line, deny->reason);
		else {
			set_verdict(ret, AUTHZ_DENY, deny->line, "");
			(void)snprintf(ret->reason, sizeof(ret->reason), "denied by policy rule %u",
				       deny->line);
		}
	} else if (uncertain) {
		ret->source = POLICY_SOURCE_GRAMMAR;
		(void)snprintf(ret->reason, sizeof(ret->reason),
			       "the policy cannot tell the %s subcommand: an option before it is "
			       "unknown to its grammar (write options after the subcommand)",
			       req->tool);
	} else if (allow) {
		if (allow->reason)
			set_verdict(ret, AUTHZ_ALLOW, allow->line, allow->reason);
		else {
			set_verdict(ret, AUTHZ_ALLOW, allow->line, "");
			(void)snprintf(ret->reason, sizeof(ret->reason), "allowed by policy rule %u",
				       allow->line);
		}
	} else
		set_verdict(ret, AUTHZ_DENY, 0, "no policy rule allows this command (default deny)");
done:
	toolgrammar_parse_done(&gp);
	return r < 0 ? r : 0;
}
