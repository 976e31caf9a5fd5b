/* SPDX-License-Identifier: MIT */
/* psql's connection target (contract in psqltarget.h). The connection
 * string grammar is libpq's (PostgreSQL 15, "Connection Strings"): words
 * `keyword = value`, a value optionally in single quotes with \' and \\,
 * unquoted values ending at blanks with backslash escaping the next byte (a
 * trailing one dropped, as PQconninfoParse does: tests/unit/test-psqltarget-libpq.c);
 * URIs postgresql://[user[:password]@][host][:port][/dbname][?k=v&...] with
 * %XX escapes in every part. Where our reading and libpq's could differ (an
 * '@' outside the user part, a '[' that is not an IPv6 literal) the string
 * is refused instead. */
#include "psqltarget.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decimal.h"
#include "macros.h"
#include "wire.h"

#define URI_PREFIX "postgresql://"
#define URI_PREFIX_SHORT "postgres://"

/* Keywords that change neither where psql connects nor which host file it
 * reads: accepted and otherwise ignored. Everything else but the four
 * target keywords is refused. */
static const char *const harmless_keywords[] = {
	"application_name", "fallback_application_name", "connect_timeout", "client_encoding",
	"options", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
	"tcp_user_timeout", "sslmode", "sslcompression", "sslsni", "gssencmode",
	"channel_binding", "target_session_attrs", "require_auth", "requirepeer",
	"ssl_min_protocol_version", "ssl_max_protocol_version", "password",
};

/* Refused keywords with the reason the agent is shown. */
static const struct {
	const char *keyword, *why;
} refused_keywords[] = {
	{ "hostaddr", "hostaddr= makes psql connect to that address whatever host= says: give the "
		      "host with -h or host=" },
	{ "service", "service= reads the host's connection service file: give host, port, dbname "
		     "and user explicitly" },
	{ "passfile", "passfile= names a file on the host" },
	{ "sslcert", "sslcert= names a file on the host" },
	{ "sslkey", "sslkey= names a file on the host" },
	{ "sslrootcert", "sslrootcert= names a file on the host" },
	{ "sslcrl", "sslcrl= names a file on the host" },
	{ "sslcrldir", "sslcrldir= names a directory on the host" },
	{ "sslkeylogfile", "sslkeylogfile= writes a file on the host" },
	{ "sslpassword", "sslpassword= is for a client key file on the host" },
	{ "load_balance_hosts", "host lists are refused: which host psql reaches would depend on "
				"which one answers" },
	{ "replication", "replication connections are not run through the sandbox" },
};

static char *field_buf(struct psqltarget *t, enum psqltarget_field f, size_t *ret_cap)
{
	switch (f) {
	case PSQLTARGET_HOST:
		*ret_cap = sizeof(t->host);
		return t->host;
	case PSQLTARGET_PORT:
		*ret_cap = sizeof(t->port);
		return t->port;
	case PSQLTARGET_DBNAME:
		*ret_cap = sizeof(t->dbname);
		return t->dbname;
	case PSQLTARGET_USER:
		*ret_cap = sizeof(t->user);
		return t->user;
	case PSQLTARGET_FIELD_MAX:
	default:
		return NULL;
	}
}

const char *psqltarget_get(const struct psqltarget *t, enum psqltarget_field f)
{
	size_t cap;
	char *p = field_buf((struct psqltarget *)t, f, &cap);

	return p ? p : "";
}

static int fail(const char **reterr, const char *why, int r)
{
	if (reterr)
		*reterr = why;
	return r;
}

/* A socket directory: absolute, [A-Za-z0-9._+-] segments, no empty, "."
 * or ".." segment, no trailing slash (except "/" itself). */
static int check_socket_dir(const char *v, size_t len, const char **reterr)
{
	const char *why = "a socket directory must be a plain absolute path ([A-Za-z0-9._+-] "
			  "segments, no '.', '..', doubled or trailing slashes)";
	size_t seg = 0;

	if (len == 1)
		return 0;
	for (size_t i = 1; i <= len; i++) {
		if (i == len || v[i] == '/') {
			size_t sl = i - seg - 1;
			const char *s = v + seg + 1;

			if (sl == 0 || (sl == 1 && s[0] == '.') || (sl == 2 && s[0] == '.' && s[1] == '.'))
				return fail(reterr, why, -EINVAL);
			seg = i;
			continue;
		}
		if (!isalnum((unsigned char)v[i]) && !strchr("._+-", v[i]))
			return fail(reterr, why, -EINVAL);
	}
	return 0;
}

/* A host name or address, canonical into out (cap bytes). */
static int canonical_host(const char *v, size_t len, char *out, size_t cap, const char **reterr)
{
	char tmp[PSQLTARGET_MAX_HOST + 1];
	const char *last;
	size_t n = len;

	if (len >= sizeof(tmp))
		return fail(reterr, "psql host too long", -EINVAL);
	memcpy(tmp, v, len);
	tmp[len] = '\0';
	if (memchr(tmp, ':', len)) {
		struct in6_addr a6;

		/* An IPv6 literal (no zone: "%eth0" is refused by inet_pton). */
		if (inet_pton(AF_INET6, tmp, &a6) != 1)
			return fail(reterr, "psql host: not an IPv6 address", -EINVAL);
		/* ::ffff:127.0.0.1 reaches 127.0.0.1 (a dual-stack socket): it is
		 * that address to the policy, or it would pass a rule naming it. */
		if (IN6_IS_ADDR_V4MAPPED(&a6)) {
			if (!inet_ntop(AF_INET, &a6.s6_addr[12], out, (socklen_t)cap))
				return fail(reterr, "psql host too long", -EINVAL);
			return 0;
		}
		if (!inet_ntop(AF_INET6, &a6, out, (socklen_t)cap))
			return fail(reterr, "psql host: not an IPv6 address", -EINVAL);
		return 0;
	}
	if (n > 0 && tmp[n - 1] == '.')
		tmp[--n] = '\0'; /* "db.example.com." is db.example.com */
	if (n == 0 || tmp[0] == '.' || tmp[0] == '-' || strstr(tmp, ".."))
		return fail(reterr, "psql host: not a host name", -EINVAL);
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)tmp[i]) && tmp[i] != '-' && tmp[i] != '.')
			return fail(reterr, "psql host: not a host name ([A-Za-z0-9.-])", -EINVAL);
		tmp[i] = (char)tolower((unsigned char)tmp[i]);
	}
	/* A name whose last label starts with a digit is an address to the
	 * resolver (inet_aton reads "127.1" and "0x7f000001" as 127.0.0.1):
	 * only the canonical dotted quad, so a pattern sees what is reached. */
	last = strrchr(tmp, '.');
	last = last ? last + 1 : tmp;
	if (isdigit((unsigned char)last[0])) {
		struct in_addr a4;
		char canon[INET_ADDRSTRLEN];

		if (inet_pton(AF_INET, tmp, &a4) != 1 || !inet_ntop(AF_INET, &a4, canon, sizeof(canon)) ||
		    strcmp(canon, tmp) != 0)
			return fail(reterr, "psql host: an IPv4 address must be written as four decimal "
					    "numbers (127.0.0.1)",
				    -EINVAL);
	}
	if (n + 1 > cap)
		return fail(reterr, "psql host too long", -EINVAL);
	memcpy(out, tmp, n + 1);
	return 0;
}

int psqltarget_set(struct psqltarget *t, enum psqltarget_field f, const char *value, size_t len,
		   const char **reterr)
{
	char out[PSQLTARGET_MAX_HOST + 1];
	size_t cap;
	char *dst = t ? field_buf(t, f, &cap) : NULL;
	int r;

	if (!dst || !value)
		return fail(reterr, "internal error", -EINVAL);
	if (dst[0] != '\0')
		return fail(reterr, "psql's host, port, database or user is given twice (options, "
				    "arguments or a connection string): give each once",
			    -EEXIST);
	if (len == 0)
		return fail(reterr, "an empty psql host, port, database or user means libpq's "
				    "default: leave it out instead",
			    -EINVAL);
	if (memchr(value, '\0', len))
		return fail(reterr, "NUL in a psql connection value", -EINVAL);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			return fail(reterr, "control character in a psql connection value", -EINVAL);
	/* A %-decoded URI part may be anything: the log and the backends get
	 * UTF-8 only. */
	if (!wire_utf8_valid(value, len))
		return fail(reterr, "a psql connection value is not UTF-8", -EINVAL);
	switch (f) {
	case PSQLTARGET_HOST:
		if (memchr(value, ',', len))
			return fail(reterr, "psql host lists are refused: which host psql reaches would "
					    "depend on which one answers",
				    -EINVAL);
		if (value[0] == '@')
			return fail(reterr, "abstract socket names are refused", -EINVAL);
		if (value[0] == '/') {
			if (len >= sizeof(out))
				return fail(reterr, "psql host too long", -EINVAL);
			r = check_socket_dir(value, len, reterr);
			if (r < 0)
				return r;
			memcpy(out, value, len);
			out[len] = '\0';
		} else {
			r = canonical_host(value, len, out, sizeof(out), reterr);
			if (r < 0)
				return r;
		}
		break;
	case PSQLTARGET_PORT: {
		unsigned long port = 0;
		size_t i = 0;

		if (memchr(value, ',', len))
			return fail(reterr, "psql port lists are refused", -EINVAL);
		for (; i < len && value[i] == '0'; i++)
			;
		if (len - i > PSQLTARGET_MAX_PORT)
			return fail(reterr, "psql port: a number from 1 to 65535", -EINVAL);
		for (; i < len; i++) {
			if (!isdigit((unsigned char)value[i]))
				return fail(reterr, "psql port: a number from 1 to 65535", -EINVAL);
			port = port * 10 + (unsigned long)(value[i] - '0');
		}
		if (port == 0 || port > 65535)
			return fail(reterr, "psql port: a number from 1 to 65535", -EINVAL);
		(void)snprintf(out, sizeof(out), "%lu", port);
		break;
	}
	case PSQLTARGET_DBNAME:
	case PSQLTARGET_USER:
		/* The server cuts longer names to NAMEDATALEN - 1: "xxx…y"
		 * would reach "xxx…" past a pattern that names it. */
		if (len > PSQLTARGET_MAX_NAME)
			return fail(reterr, "psql database and user names are at most 63 bytes (the "
					    "server would cut them)",
				    -EINVAL);
		memcpy(out, value, len);
		out[len] = '\0';
		break;
	case PSQLTARGET_FIELD_MAX:
	default:
		return fail(reterr, "internal error", -EINVAL);
	}
	if (strlen(out) + 1 > cap)
		return fail(reterr, "psql connection value too long", -EINVAL);
	memcpy(dst, out, strlen(out) + 1);
	return 0;
}

int psqltarget_fill_defaults(struct psqltarget *t, const char *default_user, const char **reterr)
{
	int r;

	if (!t)
		return fail(reterr, "internal error", -EINVAL);
	if (!t->user[0]) {
		if (!default_user)
			return fail(reterr, "psql's default user (the host user's name) is unknown: give -U",
				    -EINVAL);
		r = psqltarget_set(t, PSQLTARGET_USER, default_user, strlen(default_user), reterr);
		if (r < 0)
			return r;
	}
	if (!t->dbname[0])
		memcpy(t->dbname, t->user, strlen(t->user) + 1);
	if (!t->port[0])
		memcpy(t->port, PSQLTARGET_DEFAULT_PORT, sizeof(PSQLTARGET_DEFAULT_PORT));
	if (!t->host[0])
		memcpy(t->host, PSQLTARGET_DEFAULT_SOCKET_DIR, sizeof(PSQLTARGET_DEFAULT_SOCKET_DIR));
	return 0;
}

bool psqltarget_is_conninfo(const char *dbname)
{
	return dbname && (strchr(dbname, '=') ||
			  strncmp(dbname, URI_PREFIX, STRLEN(URI_PREFIX)) == 0 ||
			  strncmp(dbname, URI_PREFIX_SHORT, STRLEN(URI_PREFIX_SHORT)) == 0);
}

/* One keyword and its value, from either syntax. */
static int apply_keyword(struct psqltarget *t, const char *k, size_t kl, const char *v, size_t vl,
			 const char **reterr)
{
	static const struct {
		const char *keyword;
		enum psqltarget_field f;
	} fields[] = {
		{ "host", PSQLTARGET_HOST },
		{ "port", PSQLTARGET_PORT },
		{ "dbname", PSQLTARGET_DBNAME },
		{ "user", PSQLTARGET_USER },
	};

#define KW_IS(x) (kl == strlen(x) && strncmp(k, x, kl) == 0)
	for (size_t i = 0; i < ELEMENTSOF(fields); i++)
		if (KW_IS(fields[i].keyword))
			return psqltarget_set(t, fields[i].f, v, vl, reterr);
	for (size_t i = 0; i < ELEMENTSOF(refused_keywords); i++)
		if (KW_IS(refused_keywords[i].keyword))
			return fail(reterr, refused_keywords[i].why, -EINVAL);
	for (size_t i = 0; i < ELEMENTSOF(harmless_keywords); i++)
		if (KW_IS(harmless_keywords[i]))
			return 0;
#undef KW_IS
	return fail(reterr, "unknown psql connection keyword (host, port, dbname, user and a few "
			    "harmless ones such as sslmode, application_name, connect_timeout are "
			    "accepted)",
		    -EINVAL);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* One "keyword = value" of a connection string: the keyword and the raw
 * value (quotes and escapes included) as spans of s, the value as libpq
 * reads it in val. */
struct word {
	size_t ks, kl; /* keyword */
	size_t vs, ve; /* raw value */
	size_t vl;     /* bytes in val */
};

/* The word at s[*i..len) (libpq's conninfo_parse), *i moved past it. 1
 * with *w filled, 0 at the end of s, -EINVAL on a syntax error (*i at
 * the start of the word). val holds at least len bytes. */
static int next_word(const char *s, size_t len, size_t *i, struct word *w, char *val,
		     const char **reterr)
{
	size_t j = *i;

	*w = (struct word){ 0 };
	while (j < len && is_blank(s[j]))
		j++;
	*i = j;
	if (j >= len)
		return 0;
	w->ks = j;
	while (j < len && s[j] != '=' && !is_blank(s[j]))
		j++;
	w->kl = j - w->ks;
	while (j < len && is_blank(s[j]))
		j++;
	if (w->kl == 0 || j >= len || s[j] != '=')
		return fail(reterr, "psql connection string: expected keyword=value", -EINVAL);
	j++;
	while (j < len && is_blank(s[j]))
		j++;
	w->vs = j;
	if (j < len && s[j] == '\'') {
		j++;
		for (;;) {
			if (j >= len)
				return fail(reterr, "psql connection string: unterminated quote", -EINVAL);
			if (s[j] == '\'')
				break;
			if (s[j] == '\\') {
				if (++j >= len)
					return fail(reterr, "psql connection string: unterminated quote",
						    -EINVAL);
			}
			val[w->vl++] = s[j++];
		}
		j++;
	} else {
		/* libpq: a backslash takes the next byte as it is (a blank
		 * too) and a trailing one is dropped, so "dbname=postgres\\"
		 * is postgres. */
		while (j < len && !is_blank(s[j])) {
			if (s[j] == '\\') {
				if (++j < len)
					val[w->vl++] = s[j++];
				continue;
			}
			val[w->vl++] = s[j++];
		}
	}
	w->ve = j;
	*i = j;
	return 1;
}

/* "key = value key2='v a l'" (libpq's conninfo_parse). */
static int parse_words(struct psqltarget *t, const char *s, size_t len, const char **reterr)
{
	char val[PSQLTARGET_MAX_CONNINFO];
	size_t i = 0;
	struct word w;
	int r;

	while ((r = next_word(s, len, &i, &w, val, reterr)) > 0) {
		r = apply_keyword(t, s + w.ks, w.kl, val, w.vl, reterr);
		if (r < 0)
			return r;
	}
	return r;
}

/* %XX-decodes s[0..len) into out (at least len bytes); *ret_len. A
 * decoded NUL or a malformed escape is refused, as libpq does. */
static int pct_decode(const char *s, size_t len, char *out, size_t *ret_len, const char **reterr)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (i + 2 >= len || hex_digit_value(s[i + 1]) < 0 || hex_digit_value(s[i + 2]) < 0)
			return fail(reterr, "psql URI: malformed %-escape", -EINVAL);
		out[o] = (char)(hex_digit_value(s[i + 1]) * 16 + hex_digit_value(s[i + 2]));
		if (out[o] == '\0')
			return fail(reterr, "psql URI: %00 is refused", -EINVAL);
		o++;
		i += 2;
	}
	*ret_len = o;
	return 0;
}

static int set_decoded(struct psqltarget *t, enum psqltarget_field f, const char *s, size_t len,
		       const char **reterr)
{
	char buf[PSQLTARGET_MAX_CONNINFO];
	size_t n;
	int r = pct_decode(s, len, buf, &n, reterr);

	return r < 0 ? r : psqltarget_set(t, f, buf, n, reterr);
}

/* postgresql://[user[:password]@][host][:port][/dbname][?k=v&...]. */
static int parse_uri(struct psqltarget *t, const char *s, size_t len, const char **reterr)
{
	const char *p = s, *end = s + len, *auth_end, *at, *h, *hend, *colon = NULL;

	p += strncmp(s, URI_PREFIX, STRLEN(URI_PREFIX)) == 0 ? STRLEN(URI_PREFIX)
							    : STRLEN(URI_PREFIX_SHORT);
	auth_end = p + strcspn(p, "/?");
	/* libpq looks for the user part up to the first '/': an '@' we would
	 * read as something else (after a '?', or a second one) is refused. */
	at = memchr(p, '@', (size_t)(auth_end - p));
	if ((at && memchr(at + 1, '@', (size_t)(end - at - 1))) ||
	    (!at && memchr(auth_end, '@', (size_t)(end - auth_end))))
		return fail(reterr, "psql URI: '@' outside the user part", -EINVAL);
	h = p;
	if (at) {
		const char *pw = memchr(p, ':', (size_t)(at - p));
		size_t ul = (size_t)((pw ? pw : at) - p);
		int r;

		if (ul > 0) {
			r = set_decoded(t, PSQLTARGET_USER, p, ul, reterr);
			if (r < 0)
				return r;
		}
		h = at + 1;
	}
	hend = auth_end;
	if (h < hend && *h == '[') {
		const char *close = memchr(h, ']', (size_t)(hend - h));

		if (!close || (close + 1 < hend && close[1] != ':'))
			return fail(reterr, "psql URI: malformed [IPv6] host", -EINVAL);
		if (close + 1 < hend)
			colon = close + 1;
		if (close - h - 1 > 0) {
			int r = set_decoded(t, PSQLTARGET_HOST, h + 1, (size_t)(close - h - 1), reterr);

			if (r < 0)
				return r;
		}
	} else {
		size_t hl;
		int r;

		if (memchr(h, '[', (size_t)(hend - h)) || memchr(h, ']', (size_t)(hend - h)))
			return fail(reterr, "psql URI: malformed [IPv6] host", -EINVAL);
		colon = memchr(h, ':', (size_t)(hend - h));
		hl = (size_t)((colon ? colon : hend) - h);
		if (hl > 0) {
			r = set_decoded(t, PSQLTARGET_HOST, h, hl, reterr);
			if (r < 0)
				return r;
		}
	}
	if (colon && colon + 1 < hend) {
		int r = set_decoded(t, PSQLTARGET_PORT, colon + 1, (size_t)(hend - colon - 1), reterr);

		if (r < 0)
			return r;
	}
	p = auth_end;
	if (p < end && *p == '/') {
		const char *q = memchr(p, '?', (size_t)(end - p));
		size_t dl = (size_t)((q ? q : end) - p - 1);

		if (dl > 0) {
			int r = set_decoded(t, PSQLTARGET_DBNAME, p + 1, dl, reterr);

			if (r < 0)
				return r;
		}
		p = q ? q : end;
	}
	if (p < end && *p == '?') {
		p++;
		while (p < end) {
			const char *amp = memchr(p, '&', (size_t)(end - p));
			const char *pend = amp ? amp : end;
			const char *eq = memchr(p, '=', (size_t)(pend - p));
			char k[PSQLTARGET_MAX_CONNINFO], v[PSQLTARGET_MAX_CONNINFO];
			size_t kl, vl;
			int r;

			if (!eq)
				return fail(reterr, "psql URI: a parameter without '='", -EINVAL);
			r = pct_decode(p, (size_t)(eq - p), k, &kl, reterr);
			if (r >= 0)
				r = pct_decode(eq + 1, (size_t)(pend - eq - 1), v, &vl, reterr);
			if (r < 0)
				return r;
			/* libpq's URI alias: ssl=true is sslmode=require. */
			if (!(kl == 3 && strncmp(k, "ssl", 3) == 0)) {
				r = apply_keyword(t, k, kl, v, vl, reterr);
				if (r < 0)
					return r;
			}
			p = amp ? amp + 1 : end;
		}
	}
	return 0;
}

int psqltarget_parse_conninfo(struct psqltarget *t, const char *s, const char **reterr)
{
	size_t len;

	if (!t || !s)
		return fail(reterr, "internal error", -EINVAL);
	len = strlen(s);
	if (len >= PSQLTARGET_MAX_CONNINFO)
		return fail(reterr, "psql connection string too long", -E2BIG);
	if (strncmp(s, URI_PREFIX, STRLEN(URI_PREFIX)) == 0 ||
	    strncmp(s, URI_PREFIX_SHORT, STRLEN(URI_PREFIX_SHORT)) == 0)
		return parse_uri(t, s, len, reterr);
	return parse_words(t, s, len, reterr);
}

#define REDACTED "***"

struct out {
	char *buf;
	size_t cap, n;
	bool overflow;
};

static void out_put(struct out *o, const char *p, size_t n)
{
	if (o->overflow || n >= o->cap - o->n) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->n, p, n);
	o->n += n;
	o->buf[o->n] = '\0';
}

/* Keyword form: the value of each keyword with "password" in it (password,
 * sslpassword, a misspelt one), as next_word() delimits it. A string that
 * does not parse to the end keeps its readable start; the rest is
 * redacted when "password" occurs in it. */
static bool redact_words(const char *s, size_t len, struct out *o)
{
	char val[PSQLTARGET_MAX_CONNINFO];
	size_t i = 0, last = 0;
	bool changed = false;
	struct word w;
	int r;

	if (len >= sizeof(val)) {
		out_put(o, REDACTED, STRLEN(REDACTED));
		return true;
	}
	while ((r = next_word(s, len, &i, &w, val, NULL)) > 0) {
		if (memmem(s + w.ks, w.kl, "password", 8)) {
			out_put(o, s + last, w.vs - last);
			out_put(o, REDACTED, STRLEN(REDACTED));
			last = w.ve;
			changed = true;
		}
	}
	if (r < 0 && memmem(s + i, len - i, "password", 8)) {
		out_put(o, s + last, i - last);
		out_put(o, REDACTED, STRLEN(REDACTED));
		return true;
	}
	out_put(o, s + last, len - last);
	return changed;
}

/* URI form: the password of user:password@ (up to the last '@' before
 * the path, so a refused "u:p@h@x" is covered too) and parameters with
 * "password" in their (%-decoded) name. */
static bool redact_uri(const char *s, size_t len, struct out *o)
{
	const char *p = s, *end = s + len, *auth_end, *at = NULL, *q, *last = s;
	bool changed = false;

	p += strncmp(s, URI_PREFIX, STRLEN(URI_PREFIX)) == 0 ? STRLEN(URI_PREFIX)
							    : STRLEN(URI_PREFIX_SHORT);
	auth_end = p + strcspn(p, "/?");
	for (const char *c = p; c < auth_end; c++)
		if (*c == '@')
			at = c;
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));

		if (colon) {
			out_put(o, last, (size_t)(colon + 1 - last));
			out_put(o, REDACTED, STRLEN(REDACTED));
			last = at;
			changed = true;
		}
	}
	q = memchr(auth_end, '?', (size_t)(end - auth_end));
	while (q && q < end) {
		const char *k = q + 1, *amp = memchr(k, '&', (size_t)(end - k));
		const char *pend = amp ? amp : end;
		const char *eq = memchr(k, '=', (size_t)(pend - k));
		char key[PSQLTARGET_MAX_CONNINFO];
		size_t kl;

		if (eq && (size_t)(eq - k) < sizeof(key) &&
		    pct_decode(k, (size_t)(eq - k), key, &kl, NULL) >= 0 &&
		    memmem(key, kl, "password", 8)) {
			out_put(o, last, (size_t)(eq + 1 - last));
			out_put(o, REDACTED, STRLEN(REDACTED));
			last = pend;
			changed = true;
		}
		q = amp;
	}
	out_put(o, last, (size_t)(end - last));
	return changed;
}

int psqltarget_redact_password(const char *s, char *buf, size_t cap)
{
	struct out o = { .buf = buf, .cap = cap };
	size_t len;
	bool changed;

	if (!s || !buf || cap == 0)
		return -EINVAL;
	buf[0] = '\0';
	len = strlen(s);
	if (strncmp(s, URI_PREFIX, STRLEN(URI_PREFIX)) == 0 ||
	    strncmp(s, URI_PREFIX_SHORT, STRLEN(URI_PREFIX_SHORT)) == 0)
		changed = redact_uri(s, len, &o);
	else
		changed = redact_words(s, len, &o);
	if (o.overflow)
		return -ENOBUFS;
	return changed ? 1 : 0;
}
