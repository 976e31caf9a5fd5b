/* SPDX-License-Identifier: MIT */
/* Audit record encoding, chaining and verification (contract in
 * auditrec.h). json-c does the JSON: it escapes control characters (< 0x20)
 * as \uXXXX, and every string reaching it was validated as UTF-8 by the wire
 * decoder (checked again here), so each record is one valid line. */
#include "auditrec.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "authz_git.h"
#include "authzjson.h"
#include "macros.h"
#include "psqltarget.h"
#include "sha256.h"
#include "wire.h"

#define AUDITREC_JSON_DEPTH 8
#define AUDITREC_READ_CHUNK 65536

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free)

void auditrec_chain_init(struct auditrec_chain *c)
{
	memcpy(c->prev, AUDITREC_GENESIS, sizeof(AUDITREC_GENESIS));
	c->seq = 0;
}

static void hash_hex(const char *data, size_t len, char out[AUDITREC_HASH_HEX])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t md[SHA256_DIGEST_SIZE];

	/* lib/sha256.c, not a crypto library: the daemon then loads none
	 * (OpenSSL's provider start-up alone is about 2 MB resident). */
	sha256_digest(data, len, md);
	for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0xf];
	}
	out[64] = '\0';
}

void auditrec_chain_advance(struct auditrec_chain *c, const char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\n')
		len--;
	hash_hex(line, len, c->prev);
	c->seq++;
}

/* Parses exactly one JSON object spanning [line, line+len). */
static json_object *parse_line(const char *line, size_t len)
{
	_cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
	json_object *o;

	if (len == 0 || len > AUDITREC_MAX_LINE || memchr(line, '\0', len))
		return NULL;
	tok = json_tokener_new_ex(AUDITREC_JSON_DEPTH);
	if (!tok)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static bool get_seq(json_object *o, uint64_t *ret)
{
	json_object *v;

	if (!json_object_object_get_ex(o, "seq", &v) || !json_object_is_type(v, json_type_int))
		return false;
	errno = 0;
	*ret = json_object_get_uint64(v);
	return errno == 0 && *ret > 0;
}

int auditrec_chain_resume(struct auditrec_chain *c, const char *line, size_t len)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	uint64_t seq;

	if (len > 0 && line[len - 1] == '\n')
		len--;
	o = parse_line(line, len);
	if (!o || !get_seq(o, &seq))
		return -EBADMSG;
	hash_hex(line, len, c->prev);
	c->seq = seq;
	return 0;
}

/* Field limits of one formatting attempt. A record over AUDITREC_MAX_RECORD
 * is formatted again with smaller limits (auditrec_format_decision); every
 * string cut short ends in AUDITREC_ELLIPSIS and the record says so in its
 * "truncated" member, so a reader never takes a cut value for the whole. */
struct fmt_limits {
	size_t max_str;  /* bytes of one string value, SIZE_MAX: no limit */
	size_t max_args; /* argv entries */
	bool truncated;  /* set when a value or argv was cut */
};

static const struct fmt_limits no_limits = { .max_str = SIZE_MAX, .max_args = SIZE_MAX };

/* A new JSON string of s, cut to lim->max_str bytes on a UTF-8 character
 * boundary with AUDITREC_ELLIPSIS appended when longer. Refuses strings that
 * are not UTF-8: the wire decoder already did, this keeps the log valid if a
 * caller forgets. NULL with *ret_err set on failure. */
static json_object *new_str_limited(const char *s, struct fmt_limits *lim, int *ret_err)
{
	size_t n = strlen(s);
	json_object *v;

	if (n > INT32_MAX || !wire_utf8_valid(s, n)) {
		*ret_err = -EINVAL;
		return NULL;
	}
	if (lim && n > lim->max_str) {
		size_t cut = lim->max_str;
		char *t;

		while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
		t = malloc(cut + sizeof(AUDITREC_ELLIPSIS));
		if (!t) {
			*ret_err = -ENOMEM;
			return NULL;
		}
		memcpy(t, s, cut);
		memcpy(t + cut, AUDITREC_ELLIPSIS, sizeof(AUDITREC_ELLIPSIS));
		v = json_object_new_string_len(t, (int)(cut + sizeof(AUDITREC_ELLIPSIS) - 1));
		free(t);
		lim->truncated = true;
	} else
		v = json_object_new_string_len(s, (int)n);
	if (!v)
		*ret_err = -ENOMEM;
	return v;
}

/* Adds key: string (or null), within lim (NULL: no limit). */
static int add_str_lim(json_object *o, const char *key, const char *s, struct fmt_limits *lim)
{
	json_object *v = NULL;
	int r = 0;

	if (s) {
		v = new_str_limited(s, lim, &r);
		if (!v)
			return r;
	}
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_str(json_object *o, const char *key, const char *s)
{
	return add_str_lim(o, key, s, NULL);
}

static int add_obj(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int format_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&ts->tv_sec, &tm))
		return -EINVAL;
	if (snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts->tv_nsec / 1000000) >= (int)len)
		return -EINVAL;
	return 0;
}

/* Starts a record: seq, prev, ts, type, in that order. */
static int record_begin(const struct auditrec_chain *c, const struct timespec *ts,
			const char *type, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	char t[64];
	int r;

	if (!o)
		return -ENOMEM;
	r = format_time(ts, t, sizeof(t));
	if (r < 0)
		return r;
	r = add_obj(o, "seq", json_object_new_uint64(c->seq + 1));
	if (r >= 0)
		r = add_str(o, "prev", c->prev);
	if (r >= 0)
		r = add_str(o, "ts", t);
	if (r >= 0)
		r = add_str(o, "type", type);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

/* Length of the UTF-8 sequence at s (at least 1 byte available, n in all)
 * when it encodes a code point that json-c leaves raw but a reader must not
 * see raw: DEL, C1 controls (some terminals obey them), U+2028/U+2029 (line
 * terminators to JavaScript and to some log viewers) and the bidirectional
 * controls U+061C, U+200E/F, U+202A-E, U+2066-9 (they reorder what a person
 * reads: an argv can be made to look like another). 0 otherwise; *ret_cp
 * gets the code point. */
size_t auditrec_unsafe_codepoint(const char *str, size_t n, unsigned *ret_cp)
{
	const unsigned char *s = (const unsigned char *)str;

	if (s[0] == 0x7f) {
		*ret_cp = 0x7f;
		return 1;
	}
	if (n >= 2 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
		*ret_cp = s[1];
		return 2;
	}
	if (n >= 2 && s[0] == 0xd8 && s[1] == 0x9c) {
		*ret_cp = 0x061c;
		return 2;
	}
	if (n >= 3 && s[0] == 0xe2 && (s[1] == 0x80 || s[1] == 0x81)) {
		unsigned cp = 0x2000 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);

		if (cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
		    (cp >= 0x2066 && cp <= 0x2069)) {
			*ret_cp = cp;
			return 3;
		}
	}
	return 0;
}

/* The serialised record with every auditrec_unsafe_codepoint() written as
 * \uXXXX (malloc'd, newline appended). Such bytes can only occur inside
 * JSON strings (the structure is ASCII), where the escape means the same
 * character, so the record parses to the same values. */
static int escape_serialised(const char *s, size_t n, char **ret_line, size_t *ret_len)
{
	size_t extra = 0, k = 0;
	char *line;

	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t l = auditrec_unsafe_codepoint(s + i, n - i, &cp);

		if (l) {
			extra += 6 - l;
			i += l;
		} else
			i++;
	}
	line = malloc(n + extra + 2);
	if (!line)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		unsigned cp;
		size_t l = auditrec_unsafe_codepoint(s + i, n - i, &cp);

		if (l) {
			(void)snprintf(line + k, 7, "\\u%04x", cp);
			k += 6;
			i += l;
		} else
			line[k++] = s[i++];
	}
	line[k++] = '\n';
	line[k] = '\0';
	*ret_line = line;
	*ret_len = k;
	return 0;
}

static int record_finish(json_object *o, char **ret_line, size_t *ret_len)
{
	size_t n = 0;
	const char *s;
	int r;

	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
					      &n);
	if (!s)
		return -ENOMEM;
	/* json-c never emits a raw newline inside a value; check anyway, a
	 * record spanning two lines would break every later verification. */
	if (memchr(s, '\n', n) || n + 1 > AUDITREC_MAX_LINE)
		return -EINVAL;
	r = escape_serialised(s, n, ret_line, ret_len);
	if (r >= 0 && *ret_len > AUDITREC_MAX_LINE) {
		free(*ret_line);
		*ret_line = NULL;
		return -EINVAL;
	}
	return r;
}

static int format_decision_lim(const struct auditrec_chain *c, const struct auditrec_decision *d,
			       struct fmt_limits *lim, size_t original, char **ret_line, size_t *ret_len)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	json_object *peer, *argv;
	int r;

	r = record_begin(c, &d->ts, "decision", &o);
	if (r < 0)
		return r;
	r = add_str_lim(o, "id", d->id, lim);
	if (r < 0)
		return r;
	peer = json_object_new_object();
	r = add_obj(o, "peer", peer);
	if (r < 0)
		return r;
	r = add_obj(peer, "uid", json_object_new_int64((int64_t)d->peer_uid));
	if (r >= 0)
		r = add_obj(peer, "gid", json_object_new_int64((int64_t)d->peer_gid));
	if (r >= 0)
		r = add_obj(peer, "pid", json_object_new_int64((int64_t)d->peer_pid));
	if (r >= 0)
		r = add_str_lim(o, "tool", d->tool, lim);
	if (r < 0)
		return r;
	if (d->argv) {
		size_t n_out = d->argc < lim->max_args ? d->argc : lim->max_args;

		if (n_out < d->argc)
			lim->truncated = true;
		argv = json_object_new_array_ext((int)n_out);
		r = add_obj(o, "argv", argv);
		for (size_t i = 0; r >= 0 && i < n_out; i++) {
			json_object *a = new_str_limited(d->argv[i], lim, &r);

			if (!a)
				return r;
			if (json_object_array_add(argv, a) < 0) {
				json_object_put(a);
				return -ENOMEM;
			}
		}
	} else
		r = add_obj(o, "argv", json_object_new_array());
	if (r >= 0)
		r = add_str_lim(o, "cwd", d->container_cwd, lim);
	if (r >= 0)
		r = add_str_lim(o, "host_cwd", d->host_cwd, lim);
	if (r >= 0 && d->destination) {
		/* A host remote URL may carry a token (https://user:TOKEN@host):
		 * the log records where data goes, never the credential. */
		size_t n = strlen(d->destination) + 1;
		_cleanup_free_ char *dest = malloc(n);

		r = dest ? authzjson_redact_userinfo(d->destination, dest, n) : -ENOMEM;
		if (r >= 0)
			r = add_str_lim(o, "destination", dest, lim);
	} else if (r >= 0)
		r = add_str(o, "destination", NULL);
	if (r >= 0)
		r = add_str_lim(o, "reason", d->reason, lim);
	if (r >= 0)
		r = add_str_lim(o, "repo", d->repo, lim);
	if (r >= 0)
		r = add_str_lim(o, "branch", d->branch, lim);
	if (r >= 0)
		r = add_str(o, "verdict", d->allow ? "allow" : "deny");
	if (r >= 0)
		r = add_str_lim(o, "error", d->error, lim);
	if (r >= 0)
		r = add_str_lim(o, "decision_reason", d->decision_reason, lim);
	if (r >= 0)
		r = add_str_lim(o, "rule", d->rule, lim);
	if (r >= 0)
		r = add_str_lim(o, "backend", d->backend, lim);
	if (r >= 0 && d->git)
		r = add_obj(o, "git", authz_git_to_json(d->git));
	if (r >= 0 && d->psql)
		r = add_obj(o, "psql", psqltarget_to_json(d->psql));
	if (r >= 0 && lim->truncated) {
		/* The explicit marker: this record is not the whole request. */
		json_object *t = json_object_new_object();

		r = add_obj(o, "truncated", t);
		if (r >= 0)
			r = add_obj(t, "original_bytes", json_object_new_uint64(original));
		if (r >= 0)
			r = add_obj(t, "argc", json_object_new_uint64(d->argc));
		if (r >= 0)
			r = add_obj(t, "max_value_bytes", json_object_new_uint64(lim->max_str));
	}
	if (r < 0)
		return r;
	return record_finish(o, ret_line, ret_len);
}

int auditrec_format_decision(const struct auditrec_chain *c, const struct auditrec_decision *d,
			     char **ret_line, size_t *ret_len)
{
	struct fmt_limits lim = no_limits;
	size_t original;
	char *line = NULL;
	size_t len = 0;
	int r;

	r = format_decision_lim(c, d, &lim, 0, &line, &len);
	if (r < 0 || len <= AUDITREC_MAX_RECORD) {
		if (r >= 0) {
			*ret_line = line;
			*ret_len = len;
		}
		return r;
	}
	/* Over the cap: a 256 KiB request (or one full of characters that
	 * escape to six bytes) would cost its size in every fsync and every
	 * reader. Shrink every value and the argv until the record fits; at
	 * the floor (16 values of 16 bytes) it always does. */
	original = len;
	for (size_t max_str = 1024, max_args = 64;; max_str /= 2, max_args /= 2) {
		free(line);
		line = NULL;
		lim = (struct fmt_limits){ .max_str = max_str < 16 ? 16 : max_str,
					   .max_args = max_args < 16 ? 16 : max_args };
		r = format_decision_lim(c, d, &lim, original, &line, &len);
		if (r < 0)
			return r;
		if (len <= AUDITREC_MAX_RECORD || (max_str <= 16 && max_args <= 16))
			break;
	}
	if (len > AUDITREC_MAX_RECORD) {
		free(line);
		return -E2BIG;
	}
	*ret_line = line;
	*ret_len = len;
	return 0;
}

int auditrec_format_end(const struct auditrec_chain *c, const struct auditrec_end *e,
			char **ret_line, size_t *ret_len)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	int r;

	r = record_begin(c, &e->ts, "end", &o);
	if (r >= 0)
		r = add_str(o, "id", e->id);
	if (r >= 0)
		r = add_str(o, "outcome", e->outcome);
	if (r >= 0)
		r = add_obj(o, "code", json_object_new_int(e->code));
	if (r >= 0)
		r = add_obj(o, "duration_ms", json_object_new_uint64(e->duration_ms));
	if (r < 0)
		return r;
	return record_finish(o, ret_line, ret_len);
}

int auditrec_format_recovery(const struct auditrec_chain *c, const struct auditrec_recovery *rec,
			     char **ret_line, size_t *ret_len)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	int r;

	r = record_begin(c, &rec->ts, "recovered", &o);
	if (r >= 0)
		r = add_obj(o, "torn_bytes", json_object_new_uint64(rec->torn_bytes));
	if (r < 0)
		return r;
	return record_finish(o, ret_line, ret_len);
}

int auditrec_format_refused(const struct auditrec_chain *c, const struct auditrec_refused *rec,
			    char **ret_line, size_t *ret_len)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	json_object *peer;
	char t[64];
	int r;

	r = record_begin(c, &rec->last, "refused", &o);
	if (r >= 0)
		r = add_str(o, "error", rec->error);
	if (r >= 0)
		r = add_obj(o, "count", json_object_new_uint64(rec->count));
	if (r < 0)
		return r;
	peer = json_object_new_object();
	r = add_obj(o, "peer", peer);
	if (r >= 0)
		r = add_obj(peer, "uid", json_object_new_int64((int64_t)rec->peer_uid));
	if (r >= 0)
		r = add_obj(peer, "gid", json_object_new_int64((int64_t)rec->peer_gid));
	if (r >= 0)
		r = add_obj(peer, "pid", json_object_new_int64((int64_t)rec->peer_pid));
	if (r >= 0)
		r = add_obj(peer, "key", json_object_new_uint64(rec->peer_key));
	if (r >= 0)
		r = format_time(&rec->first, t, sizeof(t));
	if (r >= 0)
		r = add_str(o, "first", t);
	if (r >= 0)
		r = add_str(o, "first_id", rec->first_id);
	if (r >= 0)
		r = add_str(o, "last_id", rec->last_id);
	if (r < 0)
		return r;
	return record_finish(o, ret_line, ret_len);
}

/* Verifies one complete line (no newline) against the chain and advances
 * it. Returns false with a static message in *why. */
static bool verify_line(struct auditrec_chain *c, const char *line, size_t len, const char **why)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	json_object *v;
	const char *type;
	uint64_t seq;

	o = parse_line(line, len);
	if (!o) {
		*why = "not a single JSON object";
		return false;
	}
	if (!get_seq(o, &seq)) {
		*why = "missing or invalid seq";
		return false;
	}
	if (!json_object_object_get_ex(o, "prev", &v) || !json_object_is_type(v, json_type_string)) {
		*why = "missing prev";
		return false;
	}
	if (strcmp(json_object_get_string(v), c->prev) != 0) {
		*why = "prev does not match the hash of the previous line (edited, deleted, inserted or "
		       "reordered)";
		return false;
	}
	if (seq != c->seq + 1) {
		*why = "seq is not one more than the previous line's";
		return false;
	}
	if (!json_object_object_get_ex(o, "type", &v) || !json_object_is_type(v, json_type_string)) {
		*why = "missing type";
		return false;
	}
	type = json_object_get_string(v);
	if (strcmp(type, "decision") != 0 && strcmp(type, "end") != 0 &&
	    strcmp(type, "recovered") != 0 && strcmp(type, "refused") != 0) {
		*why = "unknown record type";
		return false;
	}
	auditrec_chain_advance(c, line, len);
	return true;
}

int auditrec_verify_fd(int fd, struct auditrec_verify_result *ret)
{
	struct auditrec_verify_result res = { 0 };
	struct auditrec_chain c;
	_cleanup_free_ char *buf = NULL;
	size_t have = 0, cap = AUDITREC_READ_CHUNK;

	auditrec_chain_init(&c);
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;
		size_t start = 0;
		char *nl;

		if (have == cap) {
			char *nb;

			if (cap >= AUDITREC_MAX_LINE + (size_t)AUDITREC_READ_CHUNK) {
				res.bad_line = res.n_lines + 1;
				(void)snprintf(res.error, sizeof(res.error), "line longer than %u bytes",
					       AUDITREC_MAX_LINE);
				*ret = res;
				return -EBADMSG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		while ((nl = memchr(buf + start, '\n', have - start))) {
			size_t len = (size_t)(nl - (buf + start));
			const char *why = NULL;

			if (!verify_line(&c, buf + start, len, &why)) {
				res.bad_line = res.n_lines + 1;
				(void)snprintf(res.error, sizeof(res.error), "%s", why);
				*ret = res;
				return -EBADMSG;
			}
			res.n_lines++;
			start += len + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	res.torn_bytes = have;
	*ret = res;
	return 0;
}

/* Appends s to the growing buffer, escaping C0, backslash and every
 * auditrec_unsafe_codepoint() (DEL, C1, U+2028/9, bidi controls). */
struct hbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void hb_putn(struct hbuf *h, const char *s, size_t n)
{
	if (h->oom)
		return;
	if (h->cap - h->len < n + 1) {
		size_t cap = (h->cap + n + 1) * 2;
		char *np = realloc(h->p, cap);

		if (!np) {
			h->oom = true;
			return;
		}
		h->p = np;
		h->cap = cap;
	}
	memcpy(h->p + h->len, s, n);
	h->len += n;
	h->p[h->len] = '\0';
}

static void hb_puts(struct hbuf *h, const char *s)
{
	hb_putn(h, s, strlen(s));
}

static void hb_escaped(struct hbuf *h, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++) {
		char e[8];
		unsigned cp;
		size_t l;

		if (u[i] < 0x20 || u[i] == 0x7f || u[i] == '\\') {
			(void)snprintf(e, sizeof(e), u[i] == '\\' ? "\\\\" : "\\x%02x", u[i]);
			hb_puts(h, e);
		} else if ((l = auditrec_unsafe_codepoint(s + i, n - i, &cp)) > 0) {
			/* C1 controls (some terminals obey them), line and
			 * paragraph separators, bidi overrides. */
			(void)snprintf(e, sizeof(e), "\\u%04x", cp);
			hb_puts(h, e);
			i += l - 1;
		} else
			hb_putn(h, s + i, 1);
	}
}

static const char *get_s(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* " uid=N pid=N" of a record's "peer" object, when it has one. */
static void hb_peer(struct hbuf *h, json_object *o)
{
	json_object *v = NULL, *uid = NULL, *pid = NULL;
	char num[64];

	if (!json_object_object_get_ex(o, "peer", &v) || !json_object_is_type(v, json_type_object))
		return;
	(void)json_object_object_get_ex(v, "uid", &uid);
	(void)json_object_object_get_ex(v, "pid", &pid);
	(void)snprintf(num, sizeof(num), " uid=%" PRId64 " pid=%" PRId64, json_object_get_int64(uid),
		       json_object_get_int64(pid));
	hb_puts(h, num);
}

static void hb_field(struct hbuf *h, json_object *o, const char *label, const char *key)
{
	const char *s = get_s(o, key);

	if (!s)
		return;
	hb_puts(h, " ");
	hb_puts(h, label);
	hb_puts(h, "='");
	hb_escaped(h, s);
	hb_puts(h, "'");
}

int auditrec_format_human(const char *line, size_t len, char **ret)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	struct hbuf h = { 0 };
	json_object *v;
	const char *type;
	char num[96];
	uint64_t seq;

	if (len > 0 && line[len - 1] == '\n')
		len--;
	o = parse_line(line, len);
	if (!o || !get_seq(o, &seq) || !(type = get_s(o, "type")))
		return -EBADMSG;
	(void)snprintf(num, sizeof(num), "#%" PRIu64 " ", seq);
	hb_puts(&h, num);
	hb_escaped(&h, get_s(o, "ts") ? get_s(o, "ts") : "?");
	hb_puts(&h, " ");
	if (strcmp(type, "decision") == 0) {
		const char *verdict = get_s(o, "verdict");

		hb_puts(&h, verdict && strcmp(verdict, "allow") == 0 ? "ALLOW " : "DENY  ");
		hb_escaped(&h, get_s(o, "id") ? get_s(o, "id") : "?");
		hb_peer(&h, o);
		hb_puts(&h, " $");
		if (json_object_object_get_ex(o, "argv", &v) && json_object_is_type(v, json_type_array))
			for (size_t i = 0; i < json_object_array_length(v); i++) {
				json_object *a = json_object_array_get_idx(v, i);

				hb_puts(&h, " '");
				hb_escaped(&h, json_object_is_type(a, json_type_string)
						       ? json_object_get_string(a)
						       : "?");
				hb_puts(&h, "'");
			}
		hb_field(&h, o, "error", "error");
		hb_field(&h, o, "cwd", "cwd");
		hb_field(&h, o, "dest", "destination");
		hb_field(&h, o, "rule", "rule");
		hb_field(&h, o, "why", "decision_reason");
		hb_field(&h, o, "reason", "reason");
		if (json_object_object_get_ex(o, "truncated", &v) &&
		    json_object_is_type(v, json_type_object)) {
			json_object *ob = NULL;

			(void)json_object_object_get_ex(v, "original_bytes", &ob);
			(void)snprintf(num, sizeof(num), " [TRUNCATED: %" PRIu64 " bytes in full]",
				       json_object_get_uint64(ob));
			hb_puts(&h, num);
		}
	} else if (strcmp(type, "refused") == 0) {
		json_object *cnt = NULL;

		hb_puts(&h, "DENY* ");
		(void)json_object_object_get_ex(o, "count", &cnt);
		(void)snprintf(num, sizeof(num), "%" PRIu64 " refusals", json_object_get_uint64(cnt));
		hb_puts(&h, num);
		hb_peer(&h, o);
		hb_field(&h, o, "error", "error");
		hb_field(&h, o, "since", "first");
		hb_field(&h, o, "ids", "first_id");
		hb_field(&h, o, "to", "last_id");
	} else if (strcmp(type, "end") == 0) {
		json_object *code = NULL, *dur = NULL;

		hb_puts(&h, "END   ");
		hb_escaped(&h, get_s(o, "id") ? get_s(o, "id") : "?");
		hb_field(&h, o, "outcome", "outcome");
		(void)json_object_object_get_ex(o, "code", &code);
		(void)json_object_object_get_ex(o, "duration_ms", &dur);
		(void)snprintf(num, sizeof(num), " code=%d duration=%" PRIu64 "ms",
			       json_object_get_int(code), json_object_get_uint64(dur));
		hb_puts(&h, num);
	} else {
		hb_puts(&h, "NOTE  ");
		hb_escaped(&h, type);
		if (json_object_object_get_ex(o, "torn_bytes", &v)) {
			(void)snprintf(num, sizeof(num), " torn_bytes=%" PRIu64 " (crash artifact removed)",
				       json_object_get_uint64(v));
			hb_puts(&h, num);
		}
	}
	if (h.oom) {
		free(h.p);
		return -ENOMEM;
	}
	*ret = h.p;
	return 0;
}
