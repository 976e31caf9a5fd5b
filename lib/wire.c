/* SPDX-License-Identifier: MIT */
/* Wire codec of sandbox-execd (format in wire.h). The decoder is the first
 * code on the host to see bytes chosen by a hostile agent: it checks every
 * length against the bytes actually present before reading, accepts each
 * field at most once (except arguments), and builds the whole struct before
 * returning, so no caller ever acts on a half-parsed request. */
#include "wire.h"
#include "wire_field.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "be.h"
#include "macros.h"

#define WIRE_FIELD_HEADER 5 /* tag + 4-byte length */

static const char *const wire_error_names[WIRE_ERROR_MAX] = {
	[WIRE_ERROR_MALFORMED] = "malformed",
	[WIRE_ERROR_TOO_LARGE] = "too_large",
	[WIRE_ERROR_UNAUTHENTICATED] = "unauthenticated",
	[WIRE_ERROR_UNKNOWN_TOOL] = "unknown_tool",
	[WIRE_ERROR_POLICY_DENIED] = "policy_denied",
	[WIRE_ERROR_PATH_OUTSIDE_WORKSPACE] = "path_outside_workspace",
	[WIRE_ERROR_BUSY] = "busy",
	[WIRE_ERROR_TIMEOUT] = "timeout",
	[WIRE_ERROR_INTERNAL] = "internal",
};

const char *wire_error_to_string(enum wire_error e)
{
	if ((unsigned)e >= WIRE_ERROR_MAX)
		return "?";
	return wire_error_names[e];
}

bool wire_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		uint32_t cp;
		size_t n;

		if (c == 0)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else
			return false; /* continuation byte, 0xc0/0xc1 (overlong), > 0xf4 */
		if (len - i - 1 < n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF
		 * are refused: other decoders (a terminal, a JSON reader, a
		 * backend in another language) may read them differently. */
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

int wire_parse_header(const uint8_t *buf, size_t len, size_t max_frame, struct wire_header *ret)
{
	uint32_t plen;

	if (len < WIRE_HEADER_SIZE)
		return -EINVAL;
	if (max_frame > WIRE_MAX_FRAME)
		max_frame = WIRE_MAX_FRAME;
	if (buf[0] != WIRE_VERSION || buf[3] != 0)
		return -EBADMSG;
	if (buf[1] != WIRE_TYPE_REQUEST && buf[1] != WIRE_TYPE_REPLY && buf[1] != WIRE_TYPE_GIT)
		return -EBADMSG;
	if (buf[2] > WIRE_MAX_FDS)
		return -EBADMSG;
	plen = be32_get(buf + 4);
	if ((size_t)plen > max_frame - WIRE_HEADER_SIZE)
		return -EMSGSIZE;
	*ret = (struct wire_header){
		.version = buf[0],
		.type = (enum wire_type)buf[1],
		.n_fds = buf[2],
		.payload_len = plen,
	};
	return 0;
}

/* ---- encoding ---- */

struct wire_out {
	uint8_t *buf;
	size_t len, cap;
};

static int out_field(struct wire_out *o, uint8_t tag, const void *v, size_t n)
{
	if (n > UINT32_MAX || o->cap - o->len < WIRE_FIELD_HEADER || o->cap - o->len - WIRE_FIELD_HEADER < n)
		return -ENOBUFS;
	o->buf[o->len] = tag;
	be32_put(o->buf + o->len + 1, (uint32_t)n);
	if (n > 0)
		memcpy(o->buf + o->len + WIRE_FIELD_HEADER, v, n);
	o->len += WIRE_FIELD_HEADER + n;
	return 0;
}

static int out_string(struct wire_out *o, uint8_t tag, const char *s, size_t max, bool required)
{
	size_t n;

	if (!s)
		return required ? -EINVAL : 0;
	n = strlen(s);
	if (n > max)
		return -E2BIG;
	if (!wire_utf8_valid(s, n))
		return -EINVAL;
	return out_field(o, tag, s, n);
}

static int out_u32(struct wire_out *o, uint8_t tag, uint32_t v)
{
	uint8_t b[4];

	be32_put(b, v);
	return out_field(o, tag, b, sizeof(b));
}

static int out_begin(struct wire_out *o, uint8_t *buf, size_t buflen, enum wire_type type,
		     uint8_t n_fds)
{
	if (buflen < WIRE_HEADER_SIZE)
		return -ENOBUFS;
	o->buf = buf;
	o->cap = buflen < WIRE_MAX_FRAME ? buflen : WIRE_MAX_FRAME;
	o->len = WIRE_HEADER_SIZE;
	buf[0] = WIRE_VERSION;
	buf[1] = (uint8_t)type;
	buf[2] = n_fds;
	buf[3] = 0;
	return 0;
}

static void out_end(struct wire_out *o, size_t *ret_len)
{
	be32_put(o->buf + 4, (uint32_t)(o->len - WIRE_HEADER_SIZE));
	*ret_len = o->len;
}

int wire_encode_request(const struct wire_request *req, uint8_t *buf, size_t buflen,
			size_t *ret_len)
{
	struct wire_out o;
	int r;

	if (req->n_args > WIRE_MAX_ARGS)
		return -E2BIG;
	if (req->n_args > 0 && !req->args)
		return -EINVAL;
	r = out_begin(&o, buf, buflen, WIRE_TYPE_REQUEST, WIRE_REQUEST_FDS);
	if (r < 0)
		return r;
	r = out_string(&o, WIRE_TAG_TOKEN, req->token, WIRE_MAX_TOKEN, true);
	if (r >= 0)
		r = out_string(&o, WIRE_TAG_TOOL, req->tool, WIRE_MAX_TOOL, true);
	for (size_t i = 0; r >= 0 && i < req->n_args; i++)
		r = out_string(&o, WIRE_TAG_ARG, req->args[i], WIRE_MAX_ARG, true);
	if (r >= 0)
		r = out_string(&o, WIRE_TAG_CWD, req->cwd, WIRE_MAX_PATH, true);
	if (r >= 0)
		r = out_string(&o, WIRE_TAG_REASON, req->reason, WIRE_MAX_REASON, false);
	if (r >= 0)
		r = out_string(&o, WIRE_TAG_REPO, req->repo, WIRE_MAX_PATH, false);
	if (r >= 0)
		r = out_string(&o, WIRE_TAG_BRANCH, req->branch, WIRE_MAX_BRANCH, false);
	if (r < 0)
		return r;
	if (req->tool[0] == '\0' || req->cwd[0] == '\0')
		return -EINVAL;
	out_end(&o, ret_len);
	return 0;
}

int wire_encode_reply(const struct wire_reply *reply, uint8_t *buf, size_t buflen,
		      size_t *ret_len)
{
	struct wire_out o;
	int r;

	r = out_begin(&o, buf, buflen, WIRE_TYPE_REPLY, 0);
	if (r < 0)
		return r;
	switch (reply->kind) {
	case WIRE_REPLY_EXITED:
		if (reply->code < 0 || reply->code > 255)
			return -EINVAL;
		break;
	case WIRE_REPLY_SIGNALED:
		if (reply->code < 1 || reply->code > 127)
			return -EINVAL;
		break;
	case WIRE_REPLY_ERROR:
		if ((unsigned)reply->error >= WIRE_ERROR_MAX)
			return -EINVAL;
		break;
	case WIRE_REPLY_KIND_MAX:
	default:
		return -EINVAL;
	}
	r = out_u32(&o, WIRE_TAG_STATUS_KIND, (uint32_t)reply->kind);
	if (r < 0)
		return r;
	if (reply->kind == WIRE_REPLY_ERROR) {
		size_t n = strnlen(reply->message, sizeof(reply->message));

		if (n >= sizeof(reply->message))
			return -E2BIG;
		r = out_u32(&o, WIRE_TAG_ERROR, (uint32_t)reply->error);
		if (r >= 0)
			r = out_string(&o, WIRE_TAG_MESSAGE, reply->message, WIRE_MAX_MESSAGE - 1, true);
	} else
		r = out_u32(&o, WIRE_TAG_STATUS_CODE, (uint32_t)reply->code);
	if (r < 0)
		return r;
	out_end(&o, ret_len);
	return 0;
}

/* ---- decoding ---- */

int wire_field_next(const uint8_t **p, const uint8_t *end, struct wire_field *f)
{
	size_t left = (size_t)(end - *p);

	if (left == 0)
		return 0;
	if (left < WIRE_FIELD_HEADER)
		return -EBADMSG;
	f->tag = (*p)[0];
	f->len = be32_get(*p + 1);
	if ((size_t)f->len > left - WIRE_FIELD_HEADER)
		return -EBADMSG;
	f->v = *p + WIRE_FIELD_HEADER;
	*p += WIRE_FIELD_HEADER + f->len;
	return 1;
}

/* Copies a string field after validation. -E2BIG over max, -EBADMSG for
 * NUL or invalid UTF-8, -ENOMEM. */
static int dup_string(const struct wire_field *f, size_t max, char **ret)
{
	char *s;

	if (f->len > max)
		return -E2BIG;
	if (!wire_utf8_valid((const char *)f->v, f->len))
		return -EBADMSG;
	s = malloc((size_t)f->len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, f->v, f->len);
	s[f->len] = '\0';
	*ret = s;
	return 0;
}

int wire_field_set_once(const struct wire_field *f, size_t max, char **slot)
{
	if (*slot)
		return -EBADMSG; /* duplicate field */
	return dup_string(f, max, slot);
}

static int frame_payload(const uint8_t *buf, size_t len, size_t max_frame, enum wire_type type,
			 uint8_t n_fds, const uint8_t **ret_p, const uint8_t **ret_end)
{
	struct wire_header h;
	int r;

	if (len > WIRE_MAX_FRAME || len > (max_frame > WIRE_MAX_FRAME ? WIRE_MAX_FRAME : max_frame))
		return -EMSGSIZE;
	r = wire_parse_header(buf, len, max_frame, &h);
	if (r == -EINVAL)
		return -EBADMSG; /* truncated header */
	if (r < 0)
		return r;
	if (h.type != type || h.n_fds != n_fds)
		return -EBADMSG;
	/* Exactly one frame: fewer bytes is truncation, more is trailing data. */
	if ((size_t)h.payload_len != len - WIRE_HEADER_SIZE)
		return -EBADMSG;
	*ret_p = buf + WIRE_HEADER_SIZE;
	*ret_end = buf + len;
	return 0;
}

void wire_request_done(struct wire_request *req)
{
	if (!req)
		return;
	if (req->token)
		explicit_bzero(req->token, strlen(req->token));
	free(req->token);
	free(req->tool);
	for (size_t i = 0; i < req->n_args; i++)
		free(req->args[i]);
	free(req->args);
	free(req->cwd);
	free(req->reason);
	free(req->repo);
	free(req->branch);
	*req = (struct wire_request){ 0 };
}

int wire_decode_request(const uint8_t *buf, size_t len, size_t max_frame,
			struct wire_request *ret)
{
	struct wire_request req = { 0 };
	const uint8_t *p, *end, *scan;
	struct wire_field f;
	size_t n_args = 0;
	int r;

	r = frame_payload(buf, len, max_frame, WIRE_TYPE_REQUEST, WIRE_REQUEST_FDS, &p, &end);
	if (r < 0)
		return r;

	/* First pass: structure, and the number of arguments to allocate. */
	scan = p;
	while ((r = wire_field_next(&scan, end, &f)) > 0)
		if (f.tag == WIRE_TAG_ARG && ++n_args > WIRE_MAX_ARGS)
			return -E2BIG;
	if (r < 0)
		return r;
	if (n_args > 0) {
		req.args = calloc(n_args, sizeof(char *));
		if (!req.args)
			return -ENOMEM;
	}

	while ((r = wire_field_next(&p, end, &f)) > 0) {
		switch (f.tag) {
		case WIRE_TAG_TOKEN:
			r = wire_field_set_once(&f, WIRE_MAX_TOKEN, &req.token);
			break;
		case WIRE_TAG_TOOL:
			r = wire_field_set_once(&f, WIRE_MAX_TOOL, &req.tool);
			break;
		case WIRE_TAG_ARG:
			r = dup_string(&f, WIRE_MAX_ARG, &req.args[req.n_args]);
			if (r >= 0)
				req.n_args++;
			break;
		case WIRE_TAG_CWD:
			r = wire_field_set_once(&f, WIRE_MAX_PATH, &req.cwd);
			break;
		case WIRE_TAG_REASON:
			r = wire_field_set_once(&f, WIRE_MAX_REASON, &req.reason);
			break;
		case WIRE_TAG_REPO:
			r = wire_field_set_once(&f, WIRE_MAX_PATH, &req.repo);
			break;
		case WIRE_TAG_BRANCH:
			r = wire_field_set_once(&f, WIRE_MAX_BRANCH, &req.branch);
			break;
		default:
			/* Unknown: skippable only when marked optional. */
			r = (f.tag & WIRE_TAG_OPTIONAL) ? 0 : -EBADMSG;
			break;
		}
		if (r < 0)
			goto fail;
	}
	if (r < 0)
		goto fail;
	if (!req.token || !req.tool || !req.cwd || req.tool[0] == '\0' || req.cwd[0] == '\0') {
		r = -EBADMSG;
		goto fail;
	}
	*ret = req;
	return 0;
fail:
	wire_request_done(&req);
	return r;
}

static int field_u32(const struct wire_field *f, bool *seen, uint32_t *ret)
{
	if (*seen || f->len != 4)
		return -EBADMSG;
	*seen = true;
	*ret = be32_get(f->v);
	return 0;
}

int wire_decode_reply(const uint8_t *buf, size_t len, struct wire_reply *ret)
{
	bool seen_kind = false, seen_code = false, seen_error = false, seen_msg = false;
	uint32_t kind = 0, code = 0, error = 0;
	struct wire_reply rep = { 0 };
	const uint8_t *p, *end;
	struct wire_field f;
	int r;

	r = frame_payload(buf, len, WIRE_MAX_FRAME, WIRE_TYPE_REPLY, 0, &p, &end);
	if (r < 0)
		return r;
	while ((r = wire_field_next(&p, end, &f)) > 0) {
		switch (f.tag) {
		case WIRE_TAG_STATUS_KIND:
			r = field_u32(&f, &seen_kind, &kind);
			break;
		case WIRE_TAG_STATUS_CODE:
			r = field_u32(&f, &seen_code, &code);
			break;
		case WIRE_TAG_ERROR:
			r = field_u32(&f, &seen_error, &error);
			break;
		case WIRE_TAG_MESSAGE:
			if (seen_msg || f.len >= sizeof(rep.message))
				return -EBADMSG;
			if (!wire_utf8_valid((const char *)f.v, f.len))
				return -EBADMSG;
			seen_msg = true;
			memcpy(rep.message, f.v, f.len);
			rep.message[f.len] = '\0';
			break;
		default:
			r = (f.tag & WIRE_TAG_OPTIONAL) ? 0 : -EBADMSG;
			break;
		}
		if (r < 0)
			return r;
	}
	if (r < 0 || !seen_kind)
		return -EBADMSG;
	switch (kind) {
	case WIRE_REPLY_EXITED:
	case WIRE_REPLY_SIGNALED:
		if (!seen_code || seen_error || seen_msg)
			return -EBADMSG;
		if (kind == WIRE_REPLY_EXITED ? code > 255 : (code < 1 || code > 127))
			return -EBADMSG;
		rep.code = (int)code;
		break;
	case WIRE_REPLY_ERROR:
		if (seen_code || !seen_error || !seen_msg || error >= WIRE_ERROR_MAX)
			return -EBADMSG;
		rep.error = (enum wire_error)error;
		break;
	default:
		return -EBADMSG;
	}
	rep.kind = (enum wire_reply_kind)kind;
	*ret = rep;
	return 0;
}
