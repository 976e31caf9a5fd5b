/* SPDX-License-Identifier: MIT */
#include "dnsmsg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "be.h"

#define OPCODE_MASK 0x7800u
#define OPCODE_QUERY 0u
#define PTR_MASK 0xC0u
#define RR_FIXED 10 /* type, class, ttl, rdlength after the owner name */

static uint8_t ascii_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c - 'A' + 'a') : c;
}

static bool hostname_char(uint8_t c)
{
	c = ascii_lower(c);
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Decodes the name at *off (compression allowed) into *ret and moves *off past
 * the name's bytes at that position. Every pointer must point strictly before
 * the segment that holds it and past the header: the targets then decrease,
 * so decoding ends, and DNSMSG_MAX_POINTER_HOPS bounds the work anyway.
 * Returns 0 or -EBADMSG. */
static int name_decode(const uint8_t *msg, size_t len, size_t *off, struct dnsmsg_name *ret)
{
	struct dnsmsg_name n = {0};
	size_t pos = *off, after = 0;
	size_t seg_start = pos; /* start of the run of labels being read */
	unsigned hops = 0;
	bool jumped = false;

	for (;;) {
		uint8_t l;

		if (pos >= len)
			return -EBADMSG;
		l = msg[pos];
		if ((l & PTR_MASK) == PTR_MASK) {
			size_t target;

			if (pos + 1 >= len)
				return -EBADMSG;
			target = (size_t)(l & ~PTR_MASK) << 8 | msg[pos + 1];
			if (target < DNSMSG_HEADER_SIZE || target >= seg_start ||
			    ++hops > DNSMSG_MAX_POINTER_HOPS)
				return -EBADMSG;
			if (!jumped)
				after = pos + 2;
			jumped = true;
			pos = seg_start = target;
			continue;
		}
		if (l & PTR_MASK) /* 0x40 and 0x80: extended and reserved label types */
			return -EBADMSG;
		if (pos + 1 + l > len || (size_t)n.len + 1 + l > DNSMSG_MAX_WIRE_NAME)
			return -EBADMSG;
		memcpy(n.wire + n.len, msg + pos, (size_t)1 + l);
		n.len = (uint8_t)(n.len + 1 + l);
		pos += (size_t)1 + l;
		if (l == 0)
			break;
	}
	*off = jumped ? after : pos;
	*ret = n;
	return 0;
}

/* Text length of a wire name without trailing dot (labels + dots). */
static size_t name_text_len(const struct dnsmsg_name *n)
{
	return n->len <= 2 ? 0 : (size_t)n->len - 2;
}

bool dnsmsg_name_equal(const struct dnsmsg_name *a, const struct dnsmsg_name *b)
{
	if (a->len != b->len)
		return false;
	/* Length bytes are <= 63, below 'A', so lowering them changes nothing. */
	for (size_t i = 0; i < a->len; i++)
		if (ascii_lower(a->wire[i]) != ascii_lower(b->wire[i]))
			return false;
	return true;
}

char *dnsmsg_name_to_text(const struct dnsmsg_name *name, char *out, size_t size)
{
	size_t o = 0, i = 0;

	if (!size)
		return out;
	out[0] = '\0';
	if (name->len <= 1) {
		(void)snprintf(out, size, ".");
		return out;
	}
	while (i < name->len && name->wire[i]) {
		uint8_t l = name->wire[i++];

		if (o > 0 && o + 1 < size)
			out[o++] = '.';
		for (uint8_t k = 0; k < l && i < name->len; k++, i++) {
			uint8_t c = name->wire[i];

			if (hostname_char(c)) {
				if (o + 1 < size)
					out[o++] = (char)ascii_lower(c);
			} else if (o + 4 < size) {
				o += (size_t)snprintf(out + o, size - o, "\\%03u", c);
			} else {
				o = size - 1;
			}
		}
	}
	out[o < size ? o : size - 1] = '\0';
	return out;
}

int dnsmsg_name_from_text(const char *text, struct dnsmsg_name *ret)
{
	struct dnsmsg_name n = {0};
	size_t tlen = strlen(text), start = 0;

	if (tlen > 0 && text[tlen - 1] == '.')
		tlen--;
	if (tlen > DNSMSG_MAX_NAME)
		return -EINVAL;
	while (tlen > 0 && start <= tlen) {
		const char *dot = memchr(text + start, '.', tlen - start);
		size_t end = dot ? (size_t)(dot - text) : tlen;
		size_t l = end - start;

		if (l == 0 || l > DNSMSG_MAX_LABEL)
			return -EINVAL;
		n.wire[n.len++] = (uint8_t)l;
		memcpy(n.wire + n.len, text + start, l);
		n.len = (uint8_t)(n.len + l);
		start = end + 1;
	}
	n.wire[n.len++] = 0;
	*ret = n;
	return 0;
}

/* Lowercase text of a query name, only the hostname alphabet: -EINVAL else. */
static int name_to_hostname(const struct dnsmsg_name *n, char out[static DNSMSG_MAX_NAME + 1])
{
	size_t o = 0, i = 0;

	if (name_text_len(n) > DNSMSG_MAX_NAME)
		return -EINVAL;
	while (n->wire[i]) {
		uint8_t l = n->wire[i++];

		if (o > 0)
			out[o++] = '.';
		for (uint8_t k = 0; k < l; k++, i++) {
			if (!hostname_char(n->wire[i]))
				return -EINVAL;
			out[o++] = (char)ascii_lower(n->wire[i]);
		}
	}
	out[o] = '\0';
	return 0;
}

struct rr {
	size_t owner_off;
	uint16_t type, class;
	uint32_t ttl;
	size_t rdata_off;
	uint16_t rdlen;
};

/* Reads one resource record at *off (bounds-checked, owner name decoded and
 * discarded), advancing *off past its rdata. */
static int rr_read(const uint8_t *msg, size_t len, size_t *off, struct rr *ret)
{
	struct dnsmsg_name owner;
	struct rr r = {.owner_off = *off};
	size_t pos = *off;
	int k;

	k = name_decode(msg, len, &pos, &owner);
	if (k < 0)
		return k;
	if (len - pos < RR_FIXED)
		return -EBADMSG;
	r.type = be16_get(msg + pos);
	r.class = be16_get(msg + pos + 2);
	r.ttl = be32_get(msg + pos + 4);
	r.rdlen = be16_get(msg + pos + 8);
	r.rdata_off = pos + RR_FIXED;
	if (len - r.rdata_off < r.rdlen)
		return -EBADMSG;
	*off = r.rdata_off + r.rdlen;
	*ret = r;
	return 0;
}

/* Validates the record's rdata for the types the gate reads. */
static int rr_check_rdata(const uint8_t *msg, const struct rr *r)
{
	if (r->class != DNSMSG_CLASS_IN && r->type != DNSMSG_TYPE_OPT)
		return 0;
	switch (r->type) {
	case DNSMSG_TYPE_A:
		return r->rdlen == 4 ? 0 : -EBADMSG;
	case DNSMSG_TYPE_AAAA:
		return r->rdlen == 16 ? 0 : -EBADMSG;
	case DNSMSG_TYPE_CNAME: {
		struct dnsmsg_name t;
		size_t pos = r->rdata_off;
		/* The name must end exactly at the end of the rdata. */
		int k = name_decode(msg, r->rdata_off + r->rdlen, &pos, &t);

		if (k < 0)
			return k;
		return pos == r->rdata_off + r->rdlen ? 0 : -EBADMSG;
	}
	default:
		return 0;
	}
}

static uint32_t ttl_sane(uint32_t ttl)
{
	/* RFC 2181 section 8: values with the most significant bit set are 0. */
	return ttl & 0x80000000u ? 0 : ttl;
}

int dnsmsg_parse_query(const uint8_t *msg, size_t len, struct dnsmsg_query *ret)
{
	struct dnsmsg_query q = {0};
	uint16_t qd, an, ns, ar;
	size_t off = DNSMSG_HEADER_SIZE;
	int k;

	if (!msg || len < DNSMSG_HEADER_SIZE || len > DNSMSG_MAX_MSG)
		return -EBADMSG;
	q.id = be16_get(msg);
	q.flags = be16_get(msg + 2);
	if (q.flags & DNSMSG_FLAG_QR)
		return -EBADMSG;
	qd = be16_get(msg + 4);
	an = be16_get(msg + 6);
	ns = be16_get(msg + 8);
	ar = be16_get(msg + 10);

	if ((q.flags & OPCODE_MASK) != OPCODE_QUERY) {
		*ret = q;
		return DNSMSG_RCODE_NOTIMP;
	}
	if (qd != 1 || an != 0 || ns != 0 || ar > 1 || (q.flags & DNSMSG_FLAG_TC)) {
		*ret = q;
		return DNSMSG_RCODE_FORMERR;
	}
	k = name_decode(msg, len, &off, &q.qname);
	if (k < 0 || len - off < 4) {
		*ret = q;
		return DNSMSG_RCODE_FORMERR;
	}
	q.qtype = be16_get(msg + off);
	q.qclass = be16_get(msg + off + 2);
	off += 4;
	q.has_question = true;

	if (ar == 1) {
		struct rr opt;

		k = rr_read(msg, len, &off, &opt);
		/* The only additional record accepted is an OPT with the root
		 * as owner (RFC 6891 6.1.1); TSIG and friends are refused as
		 * malformed rather than half understood. */
		if (k < 0 || opt.type != DNSMSG_TYPE_OPT || msg[opt.owner_off] != 0) {
			*ret = q;
			return DNSMSG_RCODE_FORMERR;
		}
		q.edns = true;
		q.edns_udp_size = opt.class;
		q.edns_version = (uint8_t)(opt.ttl >> 16);
	}
	if (off != len) {
		*ret = q;
		return DNSMSG_RCODE_FORMERR;
	}
	if (q.edns && q.edns_version != 0) {
		*ret = q;
		return DNSMSG_RCODE_BADVERS;
	}
	if (name_to_hostname(&q.qname, q.name) < 0) {
		*ret = q;
		return DNSMSG_RCODE_REFUSED;
	}
	*ret = q;
	return 0;
}

int dnsmsg_parse_answer(const uint8_t *msg, size_t len, const struct dnsmsg_name *qname,
			uint16_t qtype, struct dnsmsg_answer *ret)
{
	struct rr answers[DNSMSG_MAX_ANSWER_RRS];
	struct dnsmsg_answer a = {0};
	struct dnsmsg_name name, cur;
	uint16_t qd, an, ns, ar;
	size_t off = DNSMSG_HEADER_SIZE;
	unsigned ext_rcode = 0;
	bool seen_opt = false;
	int k;

	if (!msg || len < DNSMSG_HEADER_SIZE || len > DNSMSG_MAX_MSG)
		return -EBADMSG;
	a.flags = be16_get(msg + 2);
	qd = be16_get(msg + 4);
	an = be16_get(msg + 6);
	ns = be16_get(msg + 8);
	ar = be16_get(msg + 10);
	if (!(a.flags & DNSMSG_FLAG_QR) || (a.flags & OPCODE_MASK) != OPCODE_QUERY)
		return -EPROTO;
	if (qd != 1)
		return qd == 0 ? -EPROTO : -EBADMSG;
	if (an > DNSMSG_MAX_ANSWER_RRS)
		return -E2BIG;

	k = name_decode(msg, len, &off, &name);
	if (k < 0)
		return k;
	if (len - off < 4)
		return -EBADMSG;
	if (!dnsmsg_name_equal(&name, qname) || be16_get(msg + off) != qtype ||
	    be16_get(msg + off + 2) != DNSMSG_CLASS_IN)
		return -EPROTO;
	off += 4;

	for (unsigned i = 0; i < (unsigned)an + ns + ar; i++) {
		struct rr r;

		k = rr_read(msg, len, &off, &r);
		if (k < 0)
			return k;
		k = rr_check_rdata(msg, &r);
		if (k < 0)
			return k;
		if (r.type == DNSMSG_TYPE_OPT) {
			/* One OPT, in the additional section, owned by the root. */
			if (i < (unsigned)an + ns || seen_opt || msg[r.owner_off] != 0)
				return -EBADMSG;
			seen_opt = true;
			ext_rcode = r.ttl >> 24;
		}
		if (i < an)
			answers[i] = r;
	}
	if (off != len)
		return -EBADMSG;
	a.rcode = (a.flags & 0xFu) | ext_rcode << 4;

	/* Follow the chain from the question name. */
	cur = *qname;
	for (;;) {
		const struct rr *cname = NULL;

		for (unsigned i = 0; i < an && !cname; i++) {
			size_t p = answers[i].owner_off;

			if (answers[i].type != DNSMSG_TYPE_CNAME || answers[i].class != DNSMSG_CLASS_IN)
				continue;
			if (name_decode(msg, len, &p, &name) < 0)
				return -EBADMSG;
			if (dnsmsg_name_equal(&name, &cur))
				cname = &answers[i];
		}
		if (!cname || qtype == DNSMSG_TYPE_CNAME) {
			if (cname && a.n_chain == 0) {
				size_t p = cname->rdata_off;

				a.chain[0].owner = cur;
				if (name_decode(msg, len, &p, &a.chain[0].target) < 0)
					return -EBADMSG;
				a.chain[0].ttl = ttl_sane(cname->ttl);
				a.n_chain = 1;
			}
			break;
		}
		if (a.n_chain >= DNSMSG_MAX_CNAME_CHAIN)
			return -ELOOP;
		{
			struct dnsmsg_cname *c = &a.chain[a.n_chain];
			size_t p = cname->rdata_off;

			c->owner = cur;
			if (name_decode(msg, len, &p, &c->target) < 0)
				return -EBADMSG;
			c->ttl = ttl_sane(cname->ttl);
			/* A target seen before (the question or an earlier owner) is a loop. */
			if (dnsmsg_name_equal(&c->target, qname))
				return -ELOOP;
			for (size_t j = 0; j < a.n_chain; j++)
				if (dnsmsg_name_equal(&c->target, &a.chain[j].target))
					return -ELOOP;
			cur = c->target;
			a.n_chain++;
		}
	}
	a.addr_owner = cur;

	if (qtype == DNSMSG_TYPE_A || qtype == DNSMSG_TYPE_AAAA) {
		for (unsigned i = 0; i < an; i++) {
			const struct rr *r = &answers[i];
			struct dnsmsg_addr *ad;
			size_t p = r->owner_off;

			if (r->type != qtype || r->class != DNSMSG_CLASS_IN)
				continue;
			if (name_decode(msg, len, &p, &name) < 0)
				return -EBADMSG;
			if (!dnsmsg_name_equal(&name, &cur))
				continue;
			if (a.n_addrs >= DNSMSG_MAX_ADDRS) {
				a.n_addrs_dropped++;
				continue;
			}
			ad = &a.addrs[a.n_addrs++];
			ad->ttl = ttl_sane(r->ttl);
			if (qtype == DNSMSG_TYPE_A) {
				ad->family = AF_INET;
				memcpy(&ad->addr.v4, msg + r->rdata_off, 4);
			} else {
				ad->family = AF_INET6;
				memcpy(&ad->addr.v6, msg + r->rdata_off, 16);
			}
		}
	}
	*ret = a;
	return 0;
}

/* Appends bytes to a bounded buffer; remembers overflow instead of failing
 * at each call, so builders read straight. */
struct wbuf {
	uint8_t *p;
	size_t size, len;
	bool overflow;
};

static void wb_put(struct wbuf *w, const void *data, size_t n)
{
	if (w->overflow || w->size - w->len < n) {
		w->overflow = true;
		return;
	}
	memcpy(w->p + w->len, data, n);
	w->len += n;
}

static void wb_put16(struct wbuf *w, uint16_t v)
{
	uint8_t b[2];

	be16_put(b, v);
	wb_put(w, b, 2);
}

static void wb_put32(struct wbuf *w, uint32_t v)
{
	uint8_t b[4];

	be32_put(b, v);
	wb_put(w, b, 4);
}

static void wb_put_header(struct wbuf *w, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an,
			  uint16_t ar)
{
	wb_put16(w, id);
	wb_put16(w, flags);
	wb_put16(w, qd);
	wb_put16(w, an);
	wb_put16(w, 0);
	wb_put16(w, ar);
}

static void wb_put_opt(struct wbuf *w, unsigned rcode)
{
	wb_put(w, "", 1); /* root owner */
	wb_put16(w, DNSMSG_TYPE_OPT);
	wb_put16(w, DNSMSG_EDNS_UDP_SIZE);
	wb_put32(w, (uint32_t)(rcode >> 4) << 24); /* extended rcode, version 0, no flags */
	wb_put16(w, 0);
}

int dnsmsg_build_query(uint16_t id, const struct dnsmsg_name *qname, uint16_t qtype, bool edns,
		       uint8_t *buf, size_t bufsize, size_t *ret_len)
{
	struct wbuf w = {.p = buf, .size = bufsize};

	if (qname->len < 1)
		return -EINVAL;
	wb_put_header(&w, id, DNSMSG_FLAG_RD, 1, 0, edns ? 1 : 0);
	wb_put(&w, qname->wire, qname->len);
	wb_put16(&w, qtype);
	wb_put16(&w, DNSMSG_CLASS_IN);
	if (edns)
		wb_put_opt(&w, 0);
	if (w.overflow)
		return -ENOBUFS;
	*ret_len = w.len;
	return 0;
}

/* Writes name, as a pointer to known_off when it equals the name written
 * there (known_off 0: none), else uncompressed. */
static void wb_put_name(struct wbuf *w, const struct dnsmsg_name *name,
			const struct dnsmsg_name *known, size_t known_off)
{
	if (known && known_off >= DNSMSG_HEADER_SIZE && known_off < 0x3FFF &&
	    dnsmsg_name_equal(name, known)) {
		wb_put16(w, (uint16_t)(0xC000u | known_off));
		return;
	}
	wb_put(w, name->wire, name->len);
}

static int build_response(const struct dnsmsg_query *q, unsigned rcode,
			  const struct dnsmsg_answer *answer, uint32_t max_ttl, bool truncate,
			  uint8_t *buf, size_t size, size_t *ret_len)
{
	struct wbuf w = {.p = buf, .size = size};
	uint16_t flags = DNSMSG_FLAG_QR | DNSMSG_FLAG_RA | (uint16_t)(rcode & 0xFu);
	size_t n_an = 0;
	/* The last name written and where, for compression pointers. */
	const struct dnsmsg_name *known = NULL;
	size_t known_off = 0;

	flags |= q->flags & (OPCODE_MASK | DNSMSG_FLAG_RD | DNSMSG_FLAG_CD);
	if (answer && !truncate)
		n_an = answer->n_chain + answer->n_addrs;
	if (truncate)
		flags |= DNSMSG_FLAG_TC;
	wb_put_header(&w, q->id, flags, q->has_question ? 1 : 0, (uint16_t)n_an, q->edns ? 1 : 0);
	if (q->has_question) {
		known = &q->qname;
		known_off = w.len;
		wb_put(&w, q->qname.wire, q->qname.len);
		wb_put16(&w, q->qtype);
		wb_put16(&w, q->qclass);
	}
	if (n_an) {
		for (size_t i = 0; i < answer->n_chain; i++) {
			const struct dnsmsg_cname *c = &answer->chain[i];

			wb_put_name(&w, &c->owner, known, known_off);
			wb_put16(&w, DNSMSG_TYPE_CNAME);
			wb_put16(&w, DNSMSG_CLASS_IN);
			wb_put32(&w, c->ttl < max_ttl ? c->ttl : max_ttl);
			wb_put16(&w, c->target.len);
			known = &c->target;
			known_off = w.len;
			wb_put(&w, c->target.wire, c->target.len);
		}
		for (size_t i = 0; i < answer->n_addrs; i++) {
			const struct dnsmsg_addr *ad = &answer->addrs[i];
			bool v4 = ad->family == AF_INET;

			wb_put_name(&w, &answer->addr_owner, known, known_off);
			wb_put16(&w, v4 ? DNSMSG_TYPE_A : DNSMSG_TYPE_AAAA);
			wb_put16(&w, DNSMSG_CLASS_IN);
			wb_put32(&w, ad->ttl < max_ttl ? ad->ttl : max_ttl);
			wb_put16(&w, v4 ? 4 : 16);
			if (v4)
				wb_put(&w, &ad->addr.v4, 4);
			else
				wb_put(&w, &ad->addr.v6, 16);
		}
	}
	if (q->edns)
		wb_put_opt(&w, rcode);
	if (w.overflow)
		return -ENOBUFS;
	*ret_len = w.len;
	return 0;
}

int dnsmsg_build_response(const struct dnsmsg_query *q, unsigned rcode,
			  const struct dnsmsg_answer *answer, uint32_t max_ttl, size_t max_size,
			  uint8_t *buf, size_t bufsize, size_t *ret_len)
{
	size_t limit = max_size < bufsize ? max_size : bufsize;
	int k;

	if (rcode > 0xFFFu || (rcode > 0xFu && !q->edns))
		return -EINVAL;
	if (answer && (answer->n_chain > DNSMSG_MAX_CNAME_CHAIN || answer->n_addrs > DNSMSG_MAX_ADDRS))
		return -EINVAL;
	k = build_response(q, rcode, answer, max_ttl, false, buf, limit, ret_len);
	if (k == -ENOBUFS && answer)
		k = build_response(q, rcode, answer, max_ttl, true, buf, limit, ret_len);
	return k;
}

size_t dnsmsg_udp_limit(const struct dnsmsg_query *q)
{
	if (!q->edns || q->edns_udp_size < DNSMSG_MIN_UDP)
		return DNSMSG_MIN_UDP;
	return q->edns_udp_size > DNSMSG_MAX_UDP ? DNSMSG_MAX_UDP : q->edns_udp_size;
}

int dnsmsg_tcp_frame(const uint8_t *buf, size_t avail, size_t *ret_len)
{
	size_t l;

	if (avail < 2)
		return 0;
	l = be16_get(buf);
	if (l < DNSMSG_HEADER_SIZE)
		return -EBADMSG;
	if (avail - 2 < l)
		return 0;
	*ret_len = l;
	return 1;
}

void dnsmsg_tcp_put_length(uint8_t out[2], size_t len)
{
	be16_put(out, (uint16_t)len);
}
