/* SPDX-License-Identifier: MIT */
/* Request and decision JSON for external policy engines (see authzjson.h). */
#include "authzjson.h"

#include <errno.h>
#include <json.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "authz_git.h"
#include "decimal.h"
#include "psqltarget.h"
#include "macros.h"
#include "policy.h"
#include "toolgrammar.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_object *, json_object_put)

/* A decision's "env" values are credentials: wipe json-c's copies (the
 * string objects and the tokener's scratch buffer) before freeing them. */
static void tokener_wipe_freep(struct json_tokener **t)
{
	if (!*t)
		return;
	if ((*t)->pb && (*t)->pb->buf && (*t)->pb->size > 0)
		explicit_bzero((*t)->pb->buf, (size_t)(*t)->pb->size);
	json_tokener_free(*t);
}

static void decision_wipe_putp(struct json_object **o)
{
	struct json_object *env;

	if (!*o)
		return;
	if (json_object_is_type(*o, json_type_object) &&
	    json_object_object_get_ex(*o, "env", &env) && json_object_is_type(env, json_type_object)) {
		json_object_object_foreach(env, name, value)
		{
			(void)name;
			if (json_object_is_type(value, json_type_string))
				explicit_bzero((char *)json_object_get_string(value),
					       (size_t)json_object_get_string_len(value));
		}
	}
	json_object_put(*o);
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* json_object_object_add with a NULL value stores JSON null, which is what
 * we want for absent optional fields; a failed allocation of a non-NULL
 * value is detected by the caller comparing against the input. */
static int add(struct json_object *o, const char *key, struct json_object *v, bool want)
{
	if (want && !v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_parse(struct json_object *root, const struct authz_request *req)
{
	struct toolgrammar_parse gp = { 0 };
	struct json_object *sub = NULL, *flags = NULL, *ops = NULL, *parse = NULL;
	size_t depth;
	const char *problem = NULL;
	bool complete;
	int r;

	r = toolgrammar_parse(req->tool, req->argv, req->argc, &gp);
	if (r < 0)
		return r;
	sub = json_object_new_array();
	flags = json_object_new_array();
	ops = json_object_new_array();
	parse = json_object_new_object();
	if (!sub || !flags || !ops || !parse) {
		r = -ENOMEM;
		goto out;
	}
	depth = gp.sub_depth < gp.n_words ? gp.sub_depth : gp.n_words;
	complete = gp.has_grammar && !gp.error && !gp.refused;
	for (size_t i = 0; i < depth; i++)
		if (gp.words[i].uncertain)
			complete = false;
	if (!gp.has_grammar)
		problem = "no argument grammar for this tool";
	else if (gp.error)
		problem = gp.error;
	else if (gp.refused)
		problem = gp.refused;
	else if (!complete)
		problem = "an option unknown to the grammar precedes the subcommand";
	for (size_t i = 0; i < gp.n_words && r >= 0; i++) {
		struct json_object *w = json_object_new_string(gp.words[i].word);

		if (!w)
			r = -ENOMEM;
		else if (json_object_array_add(i < depth ? sub : ops, w) < 0) {
			json_object_put(w);
			r = -ENOMEM;
		}
	}
	for (size_t i = 0; i < gp.n_flags && r >= 0; i++) {
		const struct toolgrammar_flag *f = &gp.flags[i];
		struct json_object *fo = json_object_new_object();

		if (!fo) {
			r = -ENOMEM;
			break;
		}
		r = add(fo, "name", json_object_new_string(f->name ? f->name : ""), true);
		if (r >= 0)
			r = add(fo, "written",
				json_object_new_string_len(f->written, (int)f->written_len), true);
		if (r >= 0)
			r = add(fo, "value", str_or_null(f->value), f->value != NULL);
		if (r >= 0)
			r = add(fo, "known", json_object_new_boolean(f->known), true);
		if (r >= 0 && json_object_array_add(flags, fo) < 0)
			r = -ENOMEM;
		if (r < 0)
			json_object_put(fo);
	}
	if (r >= 0)
		r = add(parse, "complete", json_object_new_boolean(complete), true);
	if (r >= 0)
		r = add(parse, "problem", str_or_null(problem), problem != NULL);
	if (r >= 0) {
		r = add(root, "subcommand", TAKE_PTR(sub), true);
		if (r >= 0)
			r = add(root, "flags", TAKE_PTR(flags), true);
		if (r >= 0)
			r = add(root, "operands", TAKE_PTR(ops), true);
		if (r >= 0)
			r = add(root, "parse", TAKE_PTR(parse), true);
	}
out:
	json_object_put(sub);
	json_object_put(flags);
	json_object_put(ops);
	json_object_put(parse);
	toolgrammar_parse_done(&gp);
	return r;
}

int authzjson_redact_userinfo(const char *url, char *buf, size_t len)
{
	const char *sep = strstr(url, "://"), *auth, *end, *at = NULL;

	if (strlen(url) >= len)
		return -ENAMETOOLONG;
	if (!sep) {
		memcpy(buf, url, strlen(url) + 1);
		return 0;
	}
	auth = sep + 3;
	end = auth + strcspn(auth, "/");
	for (const char *c = auth; c < end; c++)
		if (*c == '@')
			at = c;
	if (!at) {
		memcpy(buf, url, strlen(url) + 1);
		return 0;
	}
	(void)snprintf(buf, len, "%.*s%s", (int)(auth - url), url, at + 1);
	return 0;
}

int authzjson_encode_request(const struct authz_request *req, char **ret, size_t *ret_len)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct json_object *argv, *cwd, *peer;
	char norm[POLICY_MAX_URL];
	const char *s;
	size_t len;
	int r;

	if (!req || !req->tool || !req->argv || req->argc == 0 || !ret)
		return -EINVAL;
	root = json_object_new_object();
	if (!root)
		return -ENOMEM;
	r = add(root, "version", json_object_new_int(AUTHZJSON_VERSION), true);
	if (r >= 0)
		r = add(root, "request_id", str_or_null(req->request_id), req->request_id != NULL);
	if (r >= 0)
		r = add(root, "tool", json_object_new_string(req->tool), true);
	if (r < 0)
		return r;
	argv = json_object_new_array();
	r = add(root, "argv", argv, true);
	for (size_t i = 0; r >= 0 && i < req->argc; i++) {
		struct json_object *a = json_object_new_string(req->argv[i] ? req->argv[i] : "");

		if (!a || json_object_array_add(argv, a) < 0) {
			json_object_put(a);
			r = -ENOMEM;
		}
	}
	if (r >= 0)
		r = add_parse(root, req);
	if (r < 0)
		return r;
	cwd = json_object_new_object();
	r = add(root, "cwd", cwd, true);
	if (r >= 0)
		r = add(cwd, "container", str_or_null(req->container_cwd), req->container_cwd);
	if (r >= 0)
		r = add(cwd, "host", str_or_null(req->host_cwd), req->host_cwd);
	if (r >= 0) {
		bool ok = req->destination &&
			  authzjson_redact_userinfo(req->destination, norm, sizeof(norm)) >= 0;

		r = add(root, "destination", ok ? json_object_new_string(norm) : NULL, ok);
	}
	if (r >= 0) {
		bool ok = req->destination &&
			  policy_normalise_url(req->destination, norm, sizeof(norm)) >= 0;

		r = add(root, "destination_normalised", ok ? json_object_new_string(norm) : NULL,
			ok);
	}
	if (r >= 0)
		r = add(root, "reason", str_or_null(req->reason), req->reason);
	if (r >= 0)
		r = add(root, "repo", str_or_null(req->repo), req->repo);
	if (r >= 0)
		r = add(root, "branch", str_or_null(req->branch), req->branch);
	if (r >= 0 && req->git)
		r = add(root, "git", authz_git_to_json(req->git), true);
	if (r >= 0 && req->psql)
		r = add(root, "psql", psqltarget_to_json(req->psql), true);
	if (r < 0)
		return r;
	peer = json_object_new_object();
	r = add(root, "peer", peer, true);
	if (r >= 0)
		r = add(peer, "uid", json_object_new_int64((int64_t)req->peer_uid), true);
	if (r >= 0)
		r = add(peer, "gid", json_object_new_int64((int64_t)req->peer_gid), true);
	if (r >= 0)
		r = add(peer, "pid", json_object_new_int64((int64_t)req->peer_pid), true);
	if (r < 0)
		return r;
	s = json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE,
					      &len);
	if (!s)
		return -ENOMEM;
	*ret = strndup(s, len);
	if (!*ret)
		return -ENOMEM;
	if (ret_len)
		*ret_len = len;
	return 0;
}

/* The id goes into the poll URL's path: URL-unreserved characters only,
 * and not "." or "..", which would walk the path. */
static bool valid_id(const char *s, size_t n)
{
	if (n == 0 || n >= AUTHZJSON_MAX_ID || strlen(s) != n)
		return false;
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '~' ||
		      s[i] == '-'))
			return false;
	return true;
}

static bool has_control(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

/* ---- duplicate keys ----
 * json-c keeps the last of two equal keys, so {"decision":"denied",
 * "decision":"approved"} would read as approved while a human (or a
 * logging proxy) reading the first one saw a denial. The answer is scanned
 * once more, on its text, and any object with two equal keys (after
 * escapes: "decision" and "\u0064ecision" are the same key) is refused. */

struct dupscan_frame {
	bool is_object, expect_key;
	size_t n_keys;
	size_t key_off[AUTHZJSON_MAX_KEYS], key_len[AUTHZJSON_MAX_KEYS];
};

static bool read_hex4(const char *p, const char *end, unsigned *ret)
{
	unsigned v = 0;

	if (end - p < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		int h = hex_digit_value(p[i]);

		if (h < 0)
			return false;
		v = v << 4 | (unsigned)h;
	}
	*ret = v;
	return true;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes the JSON string starting after its opening quote at *pp into out
 * (when not NULL; never longer than the escaped form). Leaves *pp after the
 * closing quote. false on a malformed string. */
static bool scan_string(const char **pp, const char *end, char *out, size_t *ret_len)
{
	const char *p = *pp;
	size_t n = 0;

	while (p < end && *p != '"') {
		if (*p != '\\') {
			if (out)
				out[n] = *p;
			n++;
			p++;
			continue;
		}
		if (++p >= end)
			return false;
		if (*p == 'u') {
			unsigned cp, lo;
			char tmp[4];
			size_t k;

			if (!read_hex4(p + 1, end, &cp))
				return false;
			p += 5;
			if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 && p[0] == '\\' &&
			    p[1] == 'u' && read_hex4(p + 2, end, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			k = put_utf8(tmp, cp);
			if (out)
				memcpy(out + n, tmp, k);
			n += k;
			continue;
		}
		if (out) {
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *f = strchr(from, *p);

			if (!f || !*p)
				return false;
			out[n] = to[f - from];
		}
		n++;
		p++;
	}
	if (p >= end)
		return false;
	*pp = p + 1;
	*ret_len = n;
	return true;
}

int authzjson_check_duplicate_keys(const char *text, size_t len)
{
	_cleanup_free_ struct dupscan_frame *stack = NULL;
	_cleanup_free_ char *keys = NULL;
	const char *p = text, *end = text + len;
	size_t depth = 0, used = 0;

	stack = calloc(AUTHZJSON_MAX_DEPTH, sizeof(*stack));
	/* Decoded keys are never longer than their escaped text (a \uXXXX
	 * of six bytes gives at most three; a pair of twelve gives four). */
	keys = malloc(len + 1);
	if (!stack || !keys)
		return -ENOMEM;
	while (p < end) {
		struct dupscan_frame *top = depth > 0 ? &stack[depth - 1] : NULL;
		char c = *p;

		if (c == '{' || c == '[') {
			if (depth >= AUTHZJSON_MAX_DEPTH)
				return -EBADMSG;
			stack[depth++] = (struct dupscan_frame){ .is_object = c == '{', .expect_key = c == '{' };
			p++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return -EBADMSG;
			depth--;
			p++;
		} else if (c == ',') {
			if (top && top->is_object)
				top->expect_key = true;
			p++;
		} else if (c == '"') {
			bool is_key = top && top->is_object && top->expect_key;
			size_t n = 0;

			p++;
			if (!scan_string(&p, end, is_key ? keys + used : NULL, &n))
				return -EBADMSG;
			if (!is_key)
				continue;
			for (size_t i = 0; i < top->n_keys; i++)
				if (top->key_len[i] == n && memcmp(keys + top->key_off[i], keys + used, n) == 0)
					return -EEXIST;
			if (top->n_keys >= AUTHZJSON_MAX_KEYS)
				return -E2BIG;
			top->key_off[top->n_keys] = used;
			top->key_len[top->n_keys++] = n;
			used += n;
			top->expect_key = false;
		} else
			p++; /* blanks, ':', numbers, true/false/null */
	}
	return depth == 0 ? 0 : -EBADMSG;
}

static int bad(struct authz_decision *d, const char **reterr, const char *msg)
{
	authz_decision_clear(d);
	if (reterr)
		*reterr = msg;
	return -EBADMSG;
}

int authzjson_parse_decision(const char *text, size_t len, struct authzjson_answer *ret,
			     struct authz_decision *d, const char **reterr)
{
	_cleanup_(tokener_wipe_freep) struct json_tokener *tok = NULL;
	_cleanup_(decision_wipe_putp) struct json_object *root = NULL;
	struct json_object *v;
	struct authzjson_answer a = { .state = AUTHZJSON_DENIED };
	const char *s;
	size_t off;
	int r;

	authz_decision_clear(d);
	if (!text)
		return bad(d, reterr, "no answer");
	if (len > AUTHZJSON_MAX_DECISION)
		return bad(d, reterr, "answer too large");
	if (memchr(text, '\0', len))
		return bad(d, reterr, "NUL byte in answer");
	tok = json_tokener_new_ex(16);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success)
		return bad(d, reterr, "answer is not one complete JSON document");
	/* Only blanks may follow the document. */
	off = json_tokener_get_parse_end(tok);
	for (; off < len; off++)
		if (!strchr(" \t\r\n", text[off]))
			return bad(d, reterr, "trailing bytes after the JSON document");
	if (!json_object_is_type(root, json_type_object))
		return bad(d, reterr, "answer is not a JSON object");
	r = authzjson_check_duplicate_keys(text, len);
	if (r == -ENOMEM)
		return r;
	if (r == -EEXIST)
		return bad(d, reterr, "duplicate key in answer");
	if (r < 0)
		return bad(d, reterr, "answer has too many keys or is nested too deeply");

	json_object_object_foreach(root, key, val)
	{
		(void)val;
		if (strcmp(key, "decision") != 0 && strcmp(key, "reason") != 0 &&
		    strcmp(key, "id") != 0 && strcmp(key, "env") != 0)
			return bad(d, reterr, "unknown key in answer");
	}

	if (!json_object_object_get_ex(root, "decision", &v) ||
	    !json_object_is_type(v, json_type_string))
		return bad(d, reterr, "\"decision\" missing or not a string");
	s = json_object_get_string(v);
	if (strcmp(s, "approved") == 0)
		a.state = AUTHZJSON_APPROVED;
	else if (strcmp(s, "denied") == 0)
		a.state = AUTHZJSON_DENIED;
	else if (strcmp(s, "pending") == 0)
		a.state = AUTHZJSON_PENDING;
	else
		return bad(d, reterr, "\"decision\" is not approved, denied or pending");

	if (json_object_object_get_ex(root, "reason", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return bad(d, reterr, "\"reason\" is not a string");
		s = json_object_get_string(v);
		if ((size_t)json_object_get_string_len(v) >= sizeof(d->reason))
			return bad(d, reterr, "\"reason\" too long");
		if (has_control(s, (size_t)json_object_get_string_len(v)))
			return bad(d, reterr, "control character in \"reason\"");
		(void)snprintf(d->reason, sizeof(d->reason), "%s", s);
	}

	if (json_object_object_get_ex(root, "id", &v)) {
		if (!json_object_is_type(v, json_type_string) || !valid_id(json_object_get_string(v), (size_t)json_object_get_string_len(v)))
			return bad(d, reterr, "\"id\" must be 1-127 characters of [A-Za-z0-9._~-]");
		(void)snprintf(a.id, sizeof(a.id), "%s", json_object_get_string(v));
	}
	if (a.state == AUTHZJSON_PENDING && !a.id[0])
		return bad(d, reterr, "\"pending\" without an \"id\"");

	if (json_object_object_get_ex(root, "env", &v)) {
		if (a.state != AUTHZJSON_APPROVED)
			return bad(d, reterr, "\"env\" is only allowed with \"approved\"");
		if (!json_object_is_type(v, json_type_object))
			return bad(d, reterr, "\"env\" is not an object");
		json_object_object_foreach(v, name, value)
		{
			if (!json_object_is_type(value, json_type_string))
				return bad(d, reterr, "\"env\" values must be strings");
			if ((size_t)json_object_get_string_len(value) !=
			    strlen(json_object_get_string(value)))
				return bad(d, reterr, "NUL in an \"env\" value");
			r = authz_decision_add_env(d, name, json_object_get_string(value));
			if (r == -ENOMEM) {
				authz_decision_clear(d);
				return r;
			}
			if (r < 0)
				return bad(d, reterr,
					   r == -E2BIG ? "\"env\" too large"
						       : "\"env\" name refused (invalid, duplicate, or "
							 "a loader/shell/config variable)");
		}
	}
	d->verdict = a.state == AUTHZJSON_APPROVED ? AUTHZ_ALLOW : AUTHZ_DENY;
	if (ret)
		*ret = a;
	return 0;
}
