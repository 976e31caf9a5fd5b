/* SPDX-License-Identifier: MIT */
/* Codec of the git relay's request frame (format in wire_git.h). Like
 * wire.c, the decoder checks every length against the bytes present before
 * reading, accepts single fields once, and builds the whole struct before
 * returning. The field helpers are small copies of wire.c's (its are
 * static), kept in step with the same rules. */
#include "wire_git.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "be.h"
#include "macros.h"
#include "wire_field.h"

#define FIELD_HEADER 5 /* tag + 4-byte length */

static const char *const op_names[WIRE_GIT_OP_MAX] = {
	[WIRE_GIT_LIST] = "list",
	[WIRE_GIT_LIST_FOR_PUSH] = "list for-push",
	[WIRE_GIT_FETCH] = "fetch",
	[WIRE_GIT_PUSH] = "push",
};

const char *wire_git_op_to_string(enum wire_git_op op)
{
	if ((unsigned)op >= WIRE_GIT_OP_MAX)
		return "?";
	return op_names[op];
}

bool wire_git_oid_valid(const char *s, size_t len)
{
	if (len != 40 && len != 64)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* One component of a ref name (between slashes), len > 0 checked here. */
static bool component_valid(const char *c, size_t len)
{
	if (len == 0 || c[0] == '.')
		return false;
	if (len >= 5 && memcmp(c + len - 5, ".lock", 5) == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)c[i];

		if (ch < 0x20 || ch == 0x7f || strchr(" ~^:?*[\\", ch))
			return false;
		if (ch == '.' && i + 1 < len && c[i + 1] == '.')
			return false;
		if (ch == '@' && i + 1 < len && c[i + 1] == '{')
			return false;
	}
	return true;
}

bool wire_git_refname_valid(const char *s)
{
	size_t len;
	const char *p;

	if (!s)
		return false;
	len = strlen(s);
	if (len <= 5 || len > WIRE_GIT_MAX_REF || strncmp(s, "refs/", 5) != 0)
		return false;
	if (s[len - 1] == '/' || s[len - 1] == '.' || !wire_utf8_valid(s, len))
		return false;
	p = s;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (!component_valid(p, n))
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

/* ---- encoding ---- */

struct out {
	uint8_t *buf;
	size_t len, cap;
};

static int out_field(struct out *o, uint8_t tag, const void *a, size_t na, const void *b, size_t nb)
{
	size_t n = na + nb;

	if (o->cap - o->len < FIELD_HEADER || o->cap - o->len - FIELD_HEADER < n)
		return -ENOBUFS;
	o->buf[o->len] = tag;
	be32_put(o->buf + o->len + 1, (uint32_t)n);
	if (na > 0)
		memcpy(o->buf + o->len + FIELD_HEADER, a, na);
	if (nb > 0)
		memcpy(o->buf + o->len + FIELD_HEADER + na, b, nb);
	o->len += FIELD_HEADER + n;
	return 0;
}

static int out_string(struct out *o, uint8_t tag, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max)
		return -E2BIG;
	if (!wire_utf8_valid(s, n))
		return -EINVAL;
	return out_field(o, tag, s, n, NULL, 0);
}

static bool update_valid(const struct wire_git_update *u)
{
	size_t sl = strnlen(u->src, sizeof(u->src));

	if (sl >= sizeof(u->src) || !wire_git_refname_valid(u->dst))
		return false;
	if (u->delete_ref)
		return sl == 0 && !u->force;
	return wire_git_oid_valid(u->src, sl);
}

int wire_git_encode_request(const struct wire_git_request *req, uint8_t *buf, size_t buflen,
			    size_t *ret_len)
{
	struct out o;
	uint8_t opb[4];
	int r;

	if (!req->token || !req->url || (unsigned)req->op >= WIRE_GIT_OP_MAX || req->url[0] == '\0')
		return -EINVAL;
	if (req->n_updates > WIRE_GIT_MAX_UPDATES || req->n_wants > WIRE_GIT_MAX_WANTS ||
	    req->n_haves > WIRE_GIT_MAX_HAVES)
		return -E2BIG;
	if ((req->n_updates > 0 && req->op != WIRE_GIT_PUSH) ||
	    ((req->n_wants > 0 || req->n_haves > 0) && req->op != WIRE_GIT_FETCH) ||
	    (req->flags & ~WIRE_GIT_FLAGS_KNOWN) || (req->flags && req->op != WIRE_GIT_PUSH) ||
	    (req->cloning && req->op != WIRE_GIT_FETCH))
		return -EINVAL;
	if (buflen < WIRE_HEADER_SIZE)
		return -ENOBUFS;
	o = (struct out){ .buf = buf, .len = WIRE_HEADER_SIZE,
			  .cap = buflen < WIRE_MAX_FRAME ? buflen : WIRE_MAX_FRAME };
	buf[0] = WIRE_VERSION;
	buf[1] = WIRE_TYPE_GIT;
	buf[2] = WIRE_GIT_FDS;
	buf[3] = 0;
	be32_put(opb, (uint32_t)req->op);
	r = out_string(&o, WIRE_TAG_GIT_TOKEN, req->token, WIRE_MAX_TOKEN);
	if (r >= 0)
		r = out_field(&o, WIRE_TAG_GIT_OP, opb, sizeof(opb), NULL, 0);
	if (r >= 0)
		r = out_string(&o, WIRE_TAG_GIT_URL, req->url, WIRE_GIT_MAX_URL);
	if (r >= 0 && req->reason)
		r = out_string(&o, WIRE_TAG_GIT_REASON, req->reason, WIRE_MAX_REASON);
	if (r >= 0 && req->flags) {
		uint8_t fb[4];

		be32_put(fb, req->flags);
		r = out_field(&o, WIRE_TAG_GIT_FLAGS, fb, sizeof(fb), NULL, 0);
	}
	if (r >= 0 && req->cloning)
		r = out_field(&o, WIRE_TAG_GIT_CLONING, NULL, 0, NULL, 0);
	for (size_t i = 0; r >= 0 && i < req->n_updates; i++) {
		const struct wire_git_update *u = &req->updates[i];
		uint8_t head[2 + WIRE_GIT_OID_MAX];
		size_t sl;

		if (!update_valid(u))
			return -EINVAL;
		sl = strlen(u->src);
		head[0] = (uint8_t)((u->force ? WIRE_GIT_UPDATE_FORCE : 0) |
				    (u->delete_ref ? WIRE_GIT_UPDATE_DELETE : 0));
		head[1] = (uint8_t)sl;
		memcpy(head + 2, u->src, sl);
		r = out_field(&o, WIRE_TAG_GIT_UPDATE, head, 2 + sl, u->dst, strlen(u->dst));
	}
	for (size_t i = 0; r >= 0 && i < req->n_wants; i++) {
		if (!wire_git_oid_valid(req->wants[i], strnlen(req->wants[i], WIRE_GIT_OID_MAX + 1)))
			return -EINVAL;
		r = out_field(&o, WIRE_TAG_GIT_WANT, req->wants[i], strlen(req->wants[i]), NULL, 0);
	}
	for (size_t i = 0; r >= 0 && i < req->n_haves; i++) {
		if (!wire_git_oid_valid(req->haves[i], strnlen(req->haves[i], WIRE_GIT_OID_MAX + 1)))
			return -EINVAL;
		r = out_field(&o, WIRE_TAG_GIT_HAVE, req->haves[i], strlen(req->haves[i]), NULL, 0);
	}
	if (r < 0)
		return r;
	be32_put(buf + 4, (uint32_t)(o.len - WIRE_HEADER_SIZE));
	*ret_len = o.len;
	return 0;
}

/* ---- decoding ---- */

static int set_oid(const struct wire_field *f, char *slot)
{
	if (!wire_git_oid_valid((const char *)f->v, f->len))
		return -EBADMSG;
	memcpy(slot, f->v, f->len);
	slot[f->len] = '\0';
	return 0;
}

static int set_update(const struct wire_field *f, struct wire_git_update *u)
{
	size_t sl, dl;
	char *dst;

	if (f->len < 2)
		return -EBADMSG;
	if (f->v[0] & ~WIRE_GIT_UPDATE_KNOWN)
		return -EBADMSG;
	sl = f->v[1];
	if (sl > WIRE_GIT_OID_MAX || f->len < 2 + sl)
		return -EBADMSG;
	dl = f->len - 2 - sl;
	if (dl > WIRE_GIT_MAX_REF)
		return -E2BIG;
	dst = malloc(dl + 1);
	if (!dst)
		return -ENOMEM;
	memcpy(dst, f->v + 2 + sl, dl);
	dst[dl] = '\0';
	memcpy(u->src, f->v + 2, sl);
	u->src[sl] = '\0';
	u->dst = dst;
	u->force = f->v[0] & WIRE_GIT_UPDATE_FORCE;
	u->delete_ref = f->v[0] & WIRE_GIT_UPDATE_DELETE;
	/* memchr: an embedded NUL would make strlen() stop short of dl. */
	if (memchr(dst, '\0', dl) || !update_valid(u))
		return -EBADMSG;
	return 0;
}

void wire_git_request_done(struct wire_git_request *req)
{
	if (!req)
		return;
	if (req->token)
		explicit_bzero(req->token, strlen(req->token));
	free(req->token);
	free(req->url);
	free(req->reason);
	for (size_t i = 0; i < req->n_updates; i++)
		free(req->updates[i].dst);
	free(req->updates);
	free(req->wants);
	free(req->haves);
	*req = (struct wire_git_request){ 0 };
}

int wire_git_decode_request(const uint8_t *buf, size_t len, size_t max_frame,
			    struct wire_git_request *ret)
{
	struct wire_git_request req = { 0 };
	size_t nu = 0, nw = 0, nh = 0;
	const uint8_t *p, *end, *scan;
	struct wire_header h;
	struct wire_field f;
	bool seen_op = false, seen_flags = false;
	int r;

	if (max_frame > WIRE_MAX_FRAME)
		max_frame = WIRE_MAX_FRAME;
	if (len > max_frame)
		return -EMSGSIZE;
	r = wire_parse_header(buf, len, max_frame, &h);
	if (r == -EINVAL)
		return -EBADMSG;
	if (r < 0)
		return r;
	if (h.type != WIRE_TYPE_GIT || h.n_fds != WIRE_GIT_FDS ||
	    (size_t)h.payload_len != len - WIRE_HEADER_SIZE)
		return -EBADMSG;
	p = buf + WIRE_HEADER_SIZE;
	end = buf + len;

	scan = p;
	while ((r = wire_field_next(&scan, end, &f)) > 0) {
		if (f.tag == WIRE_TAG_GIT_UPDATE && ++nu > WIRE_GIT_MAX_UPDATES)
			return -E2BIG;
		if (f.tag == WIRE_TAG_GIT_WANT && ++nw > WIRE_GIT_MAX_WANTS)
			return -E2BIG;
		if (f.tag == WIRE_TAG_GIT_HAVE && ++nh > WIRE_GIT_MAX_HAVES)
			return -E2BIG;
	}
	if (r < 0)
		return r;
	if ((nu > 0 && !(req.updates = calloc(nu, sizeof(*req.updates)))) ||
	    (nw > 0 && !(req.wants = calloc(nw, sizeof(*req.wants)))) ||
	    (nh > 0 && !(req.haves = calloc(nh, sizeof(*req.haves))))) {
		r = -ENOMEM;
		goto fail;
	}

	while ((r = wire_field_next(&p, end, &f)) > 0) {
		switch (f.tag) {
		case WIRE_TAG_GIT_TOKEN:
			r = wire_field_set_once(&f, WIRE_MAX_TOKEN, &req.token);
			break;
		case WIRE_TAG_GIT_OP:
			if (seen_op || f.len != 4 || be32_get(f.v) >= WIRE_GIT_OP_MAX) {
				r = -EBADMSG;
				break;
			}
			seen_op = true;
			req.op = (enum wire_git_op)be32_get(f.v);
			break;
		case WIRE_TAG_GIT_URL:
			r = wire_field_set_once(&f, WIRE_GIT_MAX_URL, &req.url);
			break;
		case WIRE_TAG_GIT_REASON:
			r = wire_field_set_once(&f, WIRE_MAX_REASON, &req.reason);
			break;
		case WIRE_TAG_GIT_UPDATE:
			r = set_update(&f, &req.updates[req.n_updates]);
			/* counted even on failure: its dst may need freeing */
			req.n_updates++;
			break;
		case WIRE_TAG_GIT_WANT:
			r = set_oid(&f, req.wants[req.n_wants++]);
			break;
		case WIRE_TAG_GIT_HAVE:
			r = set_oid(&f, req.haves[req.n_haves++]);
			break;
		case WIRE_TAG_GIT_FLAGS:
			if (seen_flags || f.len != 4 || (be32_get(f.v) & ~WIRE_GIT_FLAGS_KNOWN)) {
				r = -EBADMSG;
				break;
			}
			seen_flags = true;
			req.flags = be32_get(f.v);
			break;
		case WIRE_TAG_GIT_CLONING:
			if (req.cloning || f.len != 0) {
				r = -EBADMSG;
				break;
			}
			req.cloning = true;
			break;
		default:
			r = (f.tag & WIRE_TAG_OPTIONAL) ? 0 : -EBADMSG;
			break;
		}
		if (r < 0)
			goto fail;
	}
	if (r < 0)
		goto fail;
	if (!req.token || !seen_op || !req.url || req.url[0] == '\0' ||
	    (req.n_updates > 0 && req.op != WIRE_GIT_PUSH) ||
	    ((req.n_wants > 0 || req.n_haves > 0) && req.op != WIRE_GIT_FETCH) ||
	    (req.flags && req.op != WIRE_GIT_PUSH)) {
		r = -EBADMSG;
		goto fail;
	}
	if (req.op != WIRE_GIT_FETCH)
		req.cloning = false; /* a hint, ignored where it means nothing */
	*ret = req;
	return 0;
fail:
	wire_git_request_done(&req);
	return r;
}
