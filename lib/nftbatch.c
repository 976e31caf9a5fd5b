/* SPDX-License-Identifier: MIT */
/* The firewall ruleset as one nftables transaction. See nftbatch.h.
 *
 * The table this builds (nft syntax; `nft list table inet code_sandbox`):
 *
 *   table inet code_sandbox {
 *     set allow_v4 { type ipv4_addr . inet_service; flags interval,timeout; }
 *     set allow_v6 { type ipv6_addr . inet_service; flags interval,timeout; }
 *     chain blocked { ... log (rate-limited), reject ... }
 *     chain output { type filter hook output priority mangle; policy drop; ... }
 *     chain input  { type filter hook input priority filter; policy drop; ... }
 *   }
 *
 * Why the sets are concatenations `ipv4_addr . inet_service` with flags
 * interval,timeout: an allowlist entry `example.com:8443` must admit 8443
 * only to example.com's addresses, so the port has to be part of the set key
 * rather than a rule-wide `tcp dport { 443, 8443 }` that would open 8443 to
 * every allowed address. The interval flag lets the key hold CIDRs (literal
 * allowlist entries) and port ranges (`:LOW-HIGH`); with a concatenation the
 * kernel picks the pipapo backend, which supports per-element timeouts
 * (verified on this 6.18 kernel: element add, timeout refresh on re-add,
 * EEXIST on overlap). Pipapo refuses an element whose start or end falls
 * inside an existing, different element, hence the port segments and the
 * coverage filter of nftbatch_elems_normalize().
 */
#include "nftbatch.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netinet/icmp6.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fwconst.h"
#include "macros.h"
#include "netaddr.h"
#include "nftbatch_int.h"


#define SET_ID_V4 1
#define SET_ID_V6 2
#define SET_FLAGS (NFT_SET_INTERVAL | NFT_SET_TIMEOUT | NFT_SET_CONCAT)

#define CHAIN_BLOCKED "blocked"
#define CHAIN_OUTPUT "output"
#define CHAIN_INPUT "input"
/* Output runs at mangle priority (-150): after conntrack (-200) so ct state
 * works, but before destination NAT (-100), so the rules see the address
 * the agent asked for. Docker's embedded DNS (127.0.0.11:53) is DNATed to a
 * random port in this netns; at filter priority a query to it would no
 * longer look like DNS. */
#define PRIO_OUTPUT (-150)
#define PRIO_INPUT 0
#define LOOPBACK_IFINDEX 1 /* "lo" is ifindex 1 in every network namespace */

#define NFTBATCH_HDR_SLACK 256 /* batch begin/end and rounding */
#define NFTBATCH_RULES_MAX (96 + 2 * NFTBATCH_MAX_UPSTREAMS + NFTBATCH_MAX_SIDECAR_DESTS)
#define NFTBATCH_ELEM_BOUND 96

/* ---- addresses and ports ---- */

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static unsigned addr_bits(int family)
{
	return family == AF_INET ? 32 : 128;
}

static const uint8_t *elem_bytes(const struct nftbatch_elem *e)
{
	return e->family == AF_INET ? (const uint8_t *)&e->addr.v4 : (const uint8_t *)&e->addr.v6;
}

/* 127.0.0.0/8 or ::1 */
static bool addr_is_loopback(int family, const uint8_t *a)
{
	static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;

	if (family == AF_INET)
		return a[0] == 127;
	return memcmp(a, &lo6, sizeof(lo6)) == 0;
}

/* True when the first prefix_len bits of a and b agree. */
static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned prefix_len)
{
	size_t full = prefix_len / 8;
	unsigned rest = prefix_len % 8;

	if (memcmp(a, b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

static void prefix_mask(uint8_t *mask, size_t len, unsigned prefix_len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned bits = prefix_len > i * 8 ? prefix_len - (unsigned)i * 8 : 0;
		mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
	}
}

int nftbatch_ports_add(struct nftbatch_ports *p, uint16_t lo, uint16_t hi)
{
	if (lo > hi)
		return -EINVAL;
	for (size_t i = 0; i < p->n_ranges; i++)
		if (p->range_lo[i] == lo && p->range_hi[i] == hi)
			return 0;
	if (p->n_ranges >= NFTBATCH_MAX_PORT_RANGES)
		return -E2BIG;
	p->range_lo[p->n_ranges] = lo;
	p->range_hi[p->n_ranges] = hi;
	p->n_ranges++;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

void nftbatch_ports_finish(struct nftbatch_ports *p)
{
	uint32_t bounds[2 * NFTBATCH_MAX_PORT_RANGES] = { 0 };
	size_t n = 0, u = 0;

	/* Every range start and every range end + 1 is a boundary; between two
	 * consecutive boundaries each range either covers all ports or none. */
	for (size_t i = 0; i < p->n_ranges; i++) {
		bounds[n++] = p->range_lo[i];
		bounds[n++] = (uint32_t)p->range_hi[i] + 1;
	}
	qsort(bounds, n, sizeof(bounds[0]), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (u == 0 || bounds[u - 1] != bounds[i])
			bounds[u++] = bounds[i];
	p->n_segments = 0;
	for (size_t i = 0; i + 1 < u; i++) {
		uint32_t lo = bounds[i], hi = bounds[i + 1] - 1;
		bool covered = false;

		for (size_t r = 0; r < p->n_ranges && !covered; r++)
			covered = p->range_lo[r] <= lo && hi <= p->range_hi[r];
		if (!covered)
			continue;
		assert(p->n_segments < NFTBATCH_MAX_SEGMENTS);
		p->seg_lo[p->n_segments] = (uint16_t)lo;
		p->seg_hi[p->n_segments] = (uint16_t)hi;
		p->n_segments++;
	}
}

static bool ports_registered(const struct nftbatch_ports *p, uint16_t lo, uint16_t hi)
{
	for (size_t i = 0; i < p->n_ranges; i++)
		if (p->range_lo[i] == lo && p->range_hi[i] == hi)
			return true;
	return false;
}

static int elem_cmp(const void *a, const void *b)
{
	const struct nftbatch_elem *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	r = memcmp(elem_bytes(x), elem_bytes(y), addr_len(x->family));
	if (r != 0)
		return r;
	if (x->prefix_len != y->prefix_len)
		return x->prefix_len < y->prefix_len ? -1 : 1;
	if (x->port_lo != y->port_lo)
		return x->port_lo < y->port_lo ? -1 : 1;
	return 0;
}

/* True when permanent element c contains e (same family, same segment,
 * wider or equal prefix). */
static bool elem_covers(const struct nftbatch_elem *c, const struct nftbatch_elem *e)
{
	return c->timeout_ms == 0 && c->family == e->family && c->port_lo <= e->port_lo &&
	       e->port_hi <= c->port_hi && c->prefix_len <= e->prefix_len &&
	       prefix_equal(elem_bytes(c), elem_bytes(e), c->prefix_len) && c != e;
}

static int elem_valid(const struct nftbatch_elem *e)
{
	if (e->family != AF_INET && e->family != AF_INET6)
		return -EAFNOSUPPORT;
	if (e->prefix_len > addr_bits(e->family) || e->port_lo > e->port_hi)
		return -EINVAL;
	if (e->timeout_ms != 0 && e->prefix_len != addr_bits(e->family))
		return -EINVAL;
	return 0;
}

/* Appends e cut into segments to out[*n] (capacity cap). */
static int expand_segments(const struct nftbatch_ports *ports, const struct nftbatch_elem *e,
			   struct nftbatch_elem *out, size_t *n, size_t cap)
{
	int r = elem_valid(e);

	if (r < 0)
		return r;
	if (!ports_registered(ports, e->port_lo, e->port_hi))
		return -ERANGE;
	for (size_t s = 0; s < ports->n_segments; s++) {
		if (ports->seg_lo[s] < e->port_lo || ports->seg_hi[s] > e->port_hi)
			continue;
		if (*n >= cap)
			return -E2BIG;
		out[*n] = *e;
		out[*n].port_lo = ports->seg_lo[s];
		out[*n].port_hi = ports->seg_hi[s];
		(*n)++;
	}
	return 0;
}

int nftbatch_elems_normalize(const struct nftbatch_ports *ports,
			     const struct nftbatch_elem *permanent, size_t n_permanent,
			     const struct nftbatch_elem *in, size_t n_in,
			     struct nftbatch_elem **ret, size_t *ret_n)
{
	_cleanup_free_ struct nftbatch_elem *exp = NULL;
	size_t n = 0, cap = 0, out = 0;
	int r;

	/* Each element can become at most n_segments elements. */
	for (size_t i = 0; i < n_in; i++) {
		size_t k = 0;
		for (size_t s = 0; s < ports->n_segments; s++)
			k += ports->seg_lo[s] >= in[i].port_lo && ports->seg_hi[s] <= in[i].port_hi;
		cap += k;
		if (cap > NFTBATCH_MAX_ELEMS)
			return -E2BIG;
	}
	exp = calloc(cap ? cap : 1, sizeof(*exp));
	if (!exp)
		return -ENOMEM;
	for (size_t i = 0; i < n_in; i++) {
		r = expand_segments(ports, &in[i], exp, &n, cap);
		if (r < 0)
			return r;
	}
	qsort(exp, n, sizeof(*exp), elem_cmp);
	for (size_t i = 0; i < n; i++) {
		struct nftbatch_elem *e = &exp[i];
		bool covered = false;

		/* Exact duplicate of the previous kept element: keep the longest
		 * lifetime (0 = forever wins). */
		if (out > 0 && elem_cmp(&exp[out - 1], e) == 0) {
			struct nftbatch_elem *k = &exp[out - 1];
			if (k->timeout_ms != 0 && (e->timeout_ms == 0 || e->timeout_ms > k->timeout_ms))
				k->timeout_ms = e->timeout_ms;
			continue;
		}
		for (size_t j = 0; j < n_permanent && !covered; j++) {
			struct nftbatch_elem pe = permanent[j];
			/* permanent elements are already per segment */
			covered = elem_covers(&pe, e) || (elem_cmp(&pe, e) == 0 && pe.timeout_ms == 0);
		}
		/* Covered by a permanent element of the same input: a wider
		 * one sorts before (shorter prefix first at equal address) or
		 * has a lower address, so it has been kept already. */
		for (size_t j = 0; j < out && !covered; j++)
			covered = elem_covers(&exp[j], e);
		if (covered)
			continue;
		exp[out++] = *e;
	}
	*ret = TAKE_PTR(exp);
	*ret_n = out;
	return 0;
}

void nftbatch_elem_format(const struct nftbatch_elem *e, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?", pfx[8] = "", ports[16], tmo[32] = "";

	(void)inet_ntop(e->family, elem_bytes(e), a, sizeof(a));
	if (e->prefix_len != addr_bits(e->family))
		(void)snprintf(pfx, sizeof(pfx), "/%u", e->prefix_len);
	if (e->port_lo == e->port_hi)
		(void)snprintf(ports, sizeof(ports), "%u", e->port_lo);
	else
		(void)snprintf(ports, sizeof(ports), "%u-%u", e->port_lo, e->port_hi);
	if (e->timeout_ms != 0) {
		if (e->timeout_ms % 1000 == 0)
			(void)snprintf(tmo, sizeof(tmo), " timeout %us", e->timeout_ms / 1000);
		else
			(void)snprintf(tmo, sizeof(tmo), " timeout %ums", e->timeout_ms);
	}
	(void)snprintf(buf, size, "%s%s . %s%s", a, pfx, ports, tmo);
}

/* Set key (and interval end) of an element, in the set's layout. */
static size_t elem_key(const struct nftbatch_elem *e, bool end, uint8_t key[KEY_LEN_MAX])
{
	size_t alen = addr_len(e->family);
	uint16_t port = htons(end ? e->port_hi : e->port_lo);

	memset(key, 0, KEY_LEN_MAX);
	memcpy(key, elem_bytes(e), alen);
	if (end) {
		uint8_t mask[16];
		prefix_mask(mask, alen, e->prefix_len);
		for (size_t i = 0; i < alen; i++)
			key[i] |= (uint8_t)~mask[i];
	}
	memcpy(key + alen, &port, sizeof(port));
	return e->family == AF_INET ? KEY_LEN_V4 : KEY_LEN_V6;
}

/* ---- batch records ---- */

static int msg_record(struct nftbatch *b, const struct nlmsghdr *nlh, enum nftbatch_msg_kind kind,
		      const char *fmt, ...) _printf_(4, 5);

static int msg_record(struct nftbatch *b, const struct nlmsghdr *nlh, enum nftbatch_msg_kind kind,
		      const char *fmt, ...)
{
	va_list ap;

	if (b->n_msgs == b->cap_msgs) {
		size_t cap = b->cap_msgs ? b->cap_msgs * 2 : 64;
		struct nftbatch_msg *m = realloc(b->msgs, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		b->msgs = m;
		b->cap_msgs = cap;
	}
	struct nftbatch_msg *m = &b->msgs[b->n_msgs++];
	*m = (struct nftbatch_msg){
		.seq = nlh->nlmsg_seq,
		.kind = kind,
		.offset = (size_t)((const char *)nlh - b->buf),
	};
	va_start(ap, fmt);
	(void)vsnprintf(m->desc, sizeof(m->desc), fmt, ap);
	va_end(ap);
	return 0;
}

/* Batch writer: mnl_nlmsg_batch over buf with NFTBATCH_MAX_MSG of slack at
 * the end, because libnftnl writes a message before the batch can check
 * its size; every message is bounded by NFTBATCH_MAX_MSG. */
struct writer {
	struct nftbatch *b;
	struct mnl_nlmsg_batch *mb;
	uint32_t seq;
};

static int writer_start(struct writer *w, struct nftbatch *b, char *buf, size_t size, uint32_t seq)
{
	if (size < 2 * NFTBATCH_MAX_MSG)
		return -ENOBUFS;
	b->buf = buf;
	b->buf_size = size;
	w->b = b;
	w->seq = seq;
	w->mb = mnl_nlmsg_batch_start(buf, size - NFTBATCH_MAX_MSG);
	if (!w->mb)
		return -ENOMEM;
	b->seq_first = w->seq;
	(void)nftnl_batch_begin(mnl_nlmsg_batch_current(w->mb), w->seq++);
	return mnl_nlmsg_batch_next(w->mb) ? 0 : -ENOBUFS;
}

static struct nlmsghdr *writer_hdr(struct writer *w, uint16_t type, uint16_t flags)
{
	return nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(w->mb), type, NFPROTO_INET,
				     flags | NLM_F_ACK, w->seq++);
}

static int writer_next(struct writer *w, const struct nlmsghdr *nlh)
{
	/* a bound in this file is wrong if this fires: the slack was overrun */
	assert(nlh->nlmsg_len <= NFTBATCH_MAX_MSG);
	return mnl_nlmsg_batch_next(w->mb) ? 0 : -ENOBUFS;
}

static int writer_finish(struct writer *w)
{
	int r;

	w->b->seq_last = w->seq;
	(void)nftnl_batch_end(mnl_nlmsg_batch_current(w->mb), w->seq++);
	r = mnl_nlmsg_batch_next(w->mb) ? 0 : -ENOBUFS;
	w->b->len = mnl_nlmsg_batch_size(w->mb);
	mnl_nlmsg_batch_stop(w->mb);
	w->mb = NULL;
	return r;
}

static void writer_abort(struct writer *w)
{
	if (w->mb)
		mnl_nlmsg_batch_stop(w->mb);
	w->mb = NULL;
}

/* ---- rule construction ---- */

struct rb {
	struct nftnl_rule *r;
	int err;
	char text[NFTBATCH_DESC_MAX - 32];
};

static void rb_text(struct rb *rb, const char *fmt, ...) _printf_(2, 3);
static void rb_text(struct rb *rb, const char *fmt, ...)
{
	va_list ap;
	size_t len = strlen(rb->text);

	va_start(ap, fmt);
	(void)vsnprintf(rb->text + len, sizeof(rb->text) - len, fmt, ap);
	va_end(ap);
}

static struct nftnl_expr *rb_expr(struct rb *rb, const char *name)
{
	struct nftnl_expr *e;

	if (rb->err < 0)
		return NULL;
	e = nftnl_expr_alloc(name);
	if (!e) {
		rb->err = -ENOMEM;
		return NULL;
	}
	nftnl_rule_add_expr(rb->r, e);
	return e;
}

static void rb_cmp(struct rb *rb, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = rb_expr(rb, "cmp");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	(void)nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
}

/* meta KEY == value (len bytes) */
static void rb_meta_eq(struct rb *rb, uint32_t key, const void *value, uint32_t len)
{
	struct nftnl_expr *e = rb_expr(rb, "meta");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	rb_cmp(rb, NFT_CMP_EQ, value, len);
}

static void rb_nfproto(struct rb *rb, int family)
{
	uint8_t p = family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	rb_meta_eq(rb, NFT_META_NFPROTO, &p, sizeof(p));
}

static void rb_l4proto(struct rb *rb, uint8_t proto)
{
	rb_meta_eq(rb, NFT_META_L4PROTO, &proto, sizeof(proto));
}

static void rb_payload(struct rb *rb, uint32_t base, uint32_t offset, uint32_t len, uint32_t dreg)
{
	struct nftnl_expr *e = rb_expr(rb, "payload");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
}

/* ip daddr ADDR/PREFIX  or  ip6 daddr ADDR/PREFIX (with its nfproto
 * dependency, as nft generates it in the inet family); saddr when src. */
static void rb_addr(struct rb *rb, int family, const void *addr, unsigned prefix_len, bool src)
{
	size_t len = addr_len(family);
	uint8_t mask[16], net[16], zero[16] = { 0 };
	char a[INET6_ADDRSTRLEN] = "?";

	rb_nfproto(rb, family);
	rb_payload(rb, NFT_PAYLOAD_NETWORK_HEADER,
		   family == AF_INET ? (src ? 12u /* iphdr saddr */ : 16u /* iphdr daddr */)
				     : (src ? 8u /* ipv6hdr saddr */ : 24u /* ipv6hdr daddr */),
		   (uint32_t)len, NFT_REG_1);
	prefix_mask(mask, len, prefix_len);
	memcpy(net, addr, len);
	for (size_t i = 0; i < len; i++)
		net[i] &= mask[i];
	if (prefix_len < addr_bits(family)) {
		struct nftnl_expr *e = rb_expr(rb, "bitwise");
		if (e) {
			nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
			nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
			nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, (uint32_t)len);
			(void)nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, (uint32_t)len);
			(void)nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, (uint32_t)len);
		}
	}
	rb_cmp(rb, NFT_CMP_EQ, net, (uint32_t)len);
	(void)inet_ntop(family, net, a, sizeof(a));
	if (prefix_len < addr_bits(family))
		rb_text(rb, "%s %s %s/%u ", family == AF_INET ? "ip" : "ip6", src ? "saddr" : "daddr",
			a, prefix_len);
	else
		rb_text(rb, "%s %s %s ", family == AF_INET ? "ip" : "ip6", src ? "saddr" : "daddr", a);
}

static void rb_daddr(struct rb *rb, int family, const void *addr, unsigned prefix_len)
{
	rb_addr(rb, family, addr, prefix_len, false);
}

/* tcp/udp dport LO[-HI] */
static void rb_dport(struct rb *rb, uint8_t proto, uint16_t lo, uint16_t hi)
{
	uint16_t blo = htons(lo), bhi = htons(hi);

	rb_l4proto(rb, proto);
	rb_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2 /* dest port */, 2, NFT_REG_1);
	if (lo == hi) {
		rb_cmp(rb, NFT_CMP_EQ, &blo, sizeof(blo));
		rb_text(rb, "%s dport %u ", proto == IPPROTO_TCP ? "tcp" : "udp", lo);
	} else {
		/* network order compares correctly as bytes */
		rb_cmp(rb, NFT_CMP_GTE, &blo, sizeof(blo));
		rb_cmp(rb, NFT_CMP_LTE, &bhi, sizeof(bhi));
		rb_text(rb, "%s dport %u-%u ", proto == IPPROTO_TCP ? "tcp" : "udp", lo, hi);
	}
}

/* tcp/udp sport PORT */
static void rb_sport(struct rb *rb, uint8_t proto, uint16_t port)
{
	uint16_t bport = htons(port);

	rb_l4proto(rb, proto);
	rb_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0 /* source port */, 2, NFT_REG_1);
	rb_cmp(rb, NFT_CMP_EQ, &bport, sizeof(bport));
	rb_text(rb, "%s sport %u ", proto == IPPROTO_TCP ? "tcp" : "udp", port);
}

static void rb_oif_lo(struct rb *rb, bool input)
{
	uint32_t idx = LOOPBACK_IFINDEX;
	rb_meta_eq(rb, input ? NFT_META_IIF : NFT_META_OIF, &idx, sizeof(idx));
	rb_text(rb, "%s \"lo\" ", input ? "iif" : "oif");
}

static void rb_ct_established(struct rb *rb)
{
	uint32_t mask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED);
	uint32_t zero = 0;
	struct nftnl_expr *e = rb_expr(rb, "ct");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	}
	e = rb_expr(rb, "bitwise");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, sizeof(uint32_t));
		(void)nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, sizeof(mask));
		(void)nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, sizeof(zero));
	}
	rb_cmp(rb, NFT_CMP_NEQ, &zero, sizeof(zero));
	rb_text(rb, "ct state established,related ");
}

static void rb_icmpv6_type(struct rb *rb, uint8_t type, const char *name)
{
	rb_nfproto(rb, AF_INET6);
	rb_l4proto(rb, IPPROTO_ICMPV6);
	rb_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
	rb_cmp(rb, NFT_CMP_EQ, &type, sizeof(type));
	rb_text(rb, "icmpv6 type %s ", name);
}

static void rb_counter(struct rb *rb)
{
	(void)rb_expr(rb, "counter");
	rb_text(rb, "counter ");
}

static void rb_verdict(struct rb *rb, int verdict, const char *chain)
{
	struct nftnl_expr *e = rb_expr(rb, "immediate");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain)
		(void)nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
	if (verdict == NF_ACCEPT)
		rb_text(rb, "accept");
	else if (verdict == NF_DROP)
		rb_text(rb, "drop");
	else
		rb_text(rb, "jump %s", chain);
}

/* ip daddr . tcp dport @SET  /  ip6 daddr . tcp dport @SET */
static void rb_lookup(struct rb *rb, int family)
{
	bool v4 = family == AF_INET;
	struct nftnl_expr *e;

	rb_nfproto(rb, family);
	rb_l4proto(rb, IPPROTO_TCP);
	/* the address fills register 1 (4 or 16 bytes), the port the next
	 * 32-bit slot after it: reg 9 after 4 bytes, reg 2 after 16 */
	rb_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, v4 ? 16 : 24, v4 ? 4 : 16, NFT_REG_1);
	rb_payload(rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, v4 ? NFT_REG32_01 : NFT_REG_2);
	e = rb_expr(rb, "lookup");
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
		(void)nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, v4 ? FW_SET_V4 : FW_SET_V6);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, v4 ? SET_ID_V4 : SET_ID_V6);
		/* explicit 0 (not inverted): the kernel dumps the flags, so
		 * the read-back compares like with like */
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, 0);
	}
	rb_text(rb, "%s daddr . tcp dport @%s ", v4 ? "ip" : "ip6", v4 ? FW_SET_V4 : FW_SET_V6);
}

struct ctx {
	struct writer w;
	struct nftbatch *b;
	const char *table;
	unsigned rule_no[3]; /* per chain: blocked, output, input */
};

static unsigned chain_index(const char *chain)
{
	return strcmp(chain, CHAIN_BLOCKED) == 0 ? 0 : strcmp(chain, CHAIN_OUTPUT) == 0 ? 1 : 2;
}

static int rb_begin(struct ctx *c, struct rb *rb, const char *chain)
{
	*rb = (struct rb){ .r = nftnl_rule_alloc() };
	if (!rb->r)
		return -ENOMEM;
	nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, NFPROTO_INET);
	if (nftnl_rule_set_str(rb->r, NFTNL_RULE_TABLE, c->table) < 0 ||
	    nftnl_rule_set_str(rb->r, NFTNL_RULE_CHAIN, chain) < 0) {
		nftnl_rule_free(rb->r);
		rb->r = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Serialises the rule, records it, keeps the object. Consumes rb->r. */
static int rb_commit(struct ctx *c, struct rb *rb)
{
	_cleanup_(nftnl_rule_freep) struct nftnl_rule *r = TAKE_PTR(rb->r);
	const char *chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
	struct nftbatch *b = c->b;
	struct nlmsghdr *nlh;
	int q;

	if (rb->err < 0)
		return rb->err;
	if (b->n_rules >= NFTBATCH_RULES_MAX)
		return -E2BIG;
	nlh = writer_hdr(&c->w, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	q = writer_next(&c->w, nlh);
	if (q < 0)
		return q;
	q = msg_record(b, nlh, NFTBATCH_MSG_RULE, "rule %s#%u: %s", chain,
		       c->rule_no[chain_index(chain)]++, rb->text);
	if (q < 0)
		return q;
	b->rules[b->n_rules++] = TAKE_PTR(r);
	return 0;
}

/* ---- objects ---- */

static int add_table(struct ctx *c, uint16_t type)
{
	_cleanup_(nftnl_table_freep) struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;
	int r;

	if (!t)
		return -ENOMEM;
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, c->table) < 0)
		return -ENOMEM;
	nftnl_table_set_u32(t, NFTNL_TABLE_FLAGS, 0);
	nlh = writer_hdr(&c->w, type, type == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0);
	nftnl_table_nlmsg_build_payload(nlh, t);
	r = writer_next(&c->w, nlh);
	if (r < 0)
		return r;
	r = msg_record(c->b, nlh, NFTBATCH_MSG_TABLE, "%s table inet %s",
		       type == NFT_MSG_NEWTABLE ? "add" : "delete", c->table);
	if (r < 0)
		return r;
	if (type == NFT_MSG_NEWTABLE) {
		if (c->b->table)
			nftnl_table_free(c->b->table);
		c->b->table = TAKE_PTR(t);
	}
	return 0;
}

static int add_set(struct ctx *c, int family)
{
	_cleanup_(nftnl_set_freep) struct nftnl_set *s = nftnl_set_alloc();
	bool v4 = family == AF_INET;
	uint8_t fields[2] = { v4 ? 4 : 16, 2 };
	struct nlmsghdr *nlh;
	int r;

	if (!s)
		return -ENOMEM;
	if (nftnl_set_set_str(s, NFTNL_SET_TABLE, c->table) < 0 ||
	    nftnl_set_set_str(s, NFTNL_SET_NAME, v4 ? FW_SET_V4 : FW_SET_V6) < 0 ||
	    nftnl_set_set_data(s, NFTNL_SET_DESC_CONCAT, fields, sizeof(fields)) < 0)
		return -ENOMEM;
	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, SET_FLAGS);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, v4 ? KEY_TYPE_V4 : KEY_TYPE_V6);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, v4 ? KEY_LEN_V4 : KEY_LEN_V6);
	nftnl_set_set_u32(s, NFTNL_SET_ID, v4 ? SET_ID_V4 : SET_ID_V6);
	nlh = writer_hdr(&c->w, NFT_MSG_NEWSET, NLM_F_CREATE);
	nftnl_set_nlmsg_build_payload(nlh, s);
	r = writer_next(&c->w, nlh);
	if (r < 0)
		return r;
	r = msg_record(c->b, nlh, NFTBATCH_MSG_SET, "set %s: type %s . inet_service; flags interval,timeout;",
		       v4 ? FW_SET_V4 : FW_SET_V6, v4 ? "ipv4_addr" : "ipv6_addr");
	if (r < 0)
		return r;
	c->b->sets[c->b->n_sets++] = TAKE_PTR(s);
	return 0;
}

static int add_chain(struct ctx *c, const char *name, int hook, int prio)
{
	_cleanup_(nftnl_chain_freep) struct nftnl_chain *ch = nftnl_chain_alloc();
	struct nlmsghdr *nlh;
	int r;

	if (!ch)
		return -ENOMEM;
	if (nftnl_chain_set_str(ch, NFTNL_CHAIN_TABLE, c->table) < 0 ||
	    nftnl_chain_set_str(ch, NFTNL_CHAIN_NAME, name) < 0)
		return -ENOMEM;
	nftnl_chain_set_u32(ch, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (hook >= 0) {
		if (nftnl_chain_set_str(ch, NFTNL_CHAIN_TYPE, "filter") < 0)
			return -ENOMEM;
		nftnl_chain_set_u32(ch, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(ch, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_u32(ch, NFTNL_CHAIN_POLICY, NF_DROP);
	}
	nlh = writer_hdr(&c->w, NFT_MSG_NEWCHAIN, NLM_F_CREATE);
	nftnl_chain_nlmsg_build_payload(nlh, ch);
	r = writer_next(&c->w, nlh);
	if (r < 0)
		return r;
	if (hook >= 0)
		r = msg_record(c->b, nlh, NFTBATCH_MSG_CHAIN,
			       "chain %s: type filter hook %s priority %s; policy drop;", name,
			       hook == NF_INET_LOCAL_OUT ? "output" : "input",
			       prio == PRIO_OUTPUT ? "mangle" : "filter");
	else
		r = msg_record(c->b, nlh, NFTBATCH_MSG_CHAIN, "chain %s:", name);
	if (r < 0)
		return r;
	c->b->chains[c->b->n_chains++] = TAKE_PTR(ch);
	return 0;
}

static struct nftnl_set_elem *make_elem(const struct nftbatch_elem *e)
{
	struct nftnl_set_elem *se = nftnl_set_elem_alloc();
	uint8_t key[KEY_LEN_MAX], end[KEY_LEN_MAX];
	size_t len;

	if (!se)
		return NULL;
	len = elem_key(e, false, key);
	(void)elem_key(e, true, end);
	if (nftnl_set_elem_set(se, NFTNL_SET_ELEM_KEY, key, (uint32_t)len) < 0 ||
	    nftnl_set_elem_set(se, NFTNL_SET_ELEM_KEY_END, end, (uint32_t)len) < 0) {
		nftnl_set_elem_free(se);
		return NULL;
	}
	if (e->timeout_ms != 0)
		nftnl_set_elem_set_u64(se, NFTNL_SET_ELEM_TIMEOUT, e->timeout_ms);
	return se;
}

/* NEWSETELEM messages for elems[first..first+n) of one family, at most
 * NFTBATCH_ELEMS_PER_MSG per message (the element list is one nested
 * attribute, whose length is 16 bits). */
static int add_elems(struct ctx *c, const struct nftbatch_elem *elems, size_t n_elems, int family,
		     struct nftnl_set *keep)
{
	const char *set = family == AF_INET ? FW_SET_V4 : FW_SET_V6;
	size_t i = 0;

	for (;;) {
		_cleanup_(nftnl_set_freep) struct nftnl_set *s = NULL;
		size_t first, k = 0;
		char a[96] = "", z[96] = "";
		struct nlmsghdr *nlh;
		int r;

		while (i < n_elems && elems[i].family != family)
			i++;
		if (i == n_elems)
			break;
		first = i;
		s = nftnl_set_alloc();
		if (!s)
			return -ENOMEM;
		if (nftnl_set_set_str(s, NFTNL_SET_TABLE, c->table) < 0 ||
		    nftnl_set_set_str(s, NFTNL_SET_NAME, set) < 0)
			return -ENOMEM;
		nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
		/* a contiguous run of this family (normalised input is sorted
		 * by family; unsorted input just makes more messages) */
		for (; i < n_elems && k < NFTBATCH_ELEMS_PER_MSG && elems[i].family == family; i++) {
			struct nftnl_set_elem *se;

			se = make_elem(&elems[i]);
			if (!se)
				return -ENOMEM;
			nftnl_set_elem_add(s, se);
			if (keep) {
				se = make_elem(&elems[i]);
				if (!se)
					return -ENOMEM;
				nftnl_set_elem_add(keep, se);
			}
			if (k == 0)
				nftbatch_elem_format(&elems[i], a, sizeof(a));
			nftbatch_elem_format(&elems[i], z, sizeof(z));
			k++;
		}
		nlh = writer_hdr(&c->w, NFT_MSG_NEWSETELEM, NLM_F_CREATE);
		nftnl_set_elems_nlmsg_build_payload(nlh, s);
		r = writer_next(&c->w, nlh);
		if (r < 0)
			return r;
		if (k == 1)
			r = msg_record(c->b, nlh, NFTBATCH_MSG_ELEMS, "set %s element %s", set, a);
		else
			r = msg_record(c->b, nlh, NFTBATCH_MSG_ELEMS,
				       "set %s elements #%zu-#%zu (%s ... %s)", set, first, i - 1, a, z);
		if (r < 0)
			return r;
		c->b->msgs[c->b->n_msgs - 1].family = family;
		c->b->msgs[c->b->n_msgs - 1].first_elem = first;
		c->b->msgs[c->b->n_msgs - 1].n_elems = i - first;
	}
	return 0;
}

size_t nftbatch_buffer_size(size_t n_elems)
{
	size_t msgs = n_elems / NFTBATCH_ELEMS_PER_MSG + 2;
	/* rules and other objects: at most NFTBATCH_RULES_MAX + 16 messages
	 * of at most 2 KiB each; elements NFTBATCH_ELEM_BOUND bytes each plus
	 * a header per message; the slack the writer reserves. */
	return NFTBATCH_HDR_SLACK + (NFTBATCH_RULES_MAX + 16) * 2048 +
	       n_elems * NFTBATCH_ELEM_BOUND + msgs * 128 + NFTBATCH_MAX_MSG;
}

static int alloc_objects(struct nftbatch *b)
{
	/* arrays of pointers to libnftnl objects */
	b->chains = calloc(3, sizeof(void *));
	b->sets = calloc(2, sizeof(void *));
	b->rules = calloc(NFTBATCH_RULES_MAX, sizeof(void *));
	return b->chains && b->sets && b->rules ? 0 : -ENOMEM;
}

/* meta skuid SIDECAR: the sidecar's socket owner (lib/sidecar.h). Only a
 * socket created by a process running as that UID matches; packets without
 * a socket (forwarded, kernel-generated) never do. */
static void rb_skuid(struct rb *rb, uint32_t uid)
{
	rb_meta_eq(rb, NFT_META_SKUID, &uid, sizeof(uid));
	rb_text(rb, "meta skuid %" PRIu32 " ", uid);
}

/* meta skuid SIDECAR ip daddr UPSTREAM udp dport 53 accept   (and tcp)
 * The sidecar resolves its own destinations with the upstream directly,
 * like PID 1: its resolv.conf is the cluster's, not the gate (the gate
 * answers only the agent's allowlist). Placed next to PID 1's rule, before
 * "udp dport 53 jump blocked", which still refuses every other UID. */
static int build_sidecar_dns_rules(struct ctx *c, const struct nftbatch_config *cfg)
{
	const struct nftbatch_sidecar *sc = cfg->sidecar;
	struct rb rb;
	int r;

	if (!sc)
		return 0;
	for (size_t i = 0; i < cfg->n_upstreams; i++)
		for (int tcp = 0; tcp < 2; tcp++) {
			const struct nftbatch_elem *u = &cfg->upstreams[i];

			r = rb_begin(c, &rb, CHAIN_OUTPUT);
			if (r < 0)
				return r;
			rb_skuid(&rb, sc->uid);
			rb_daddr(&rb, u->family, elem_bytes(u), addr_bits(u->family));
			rb_dport(&rb, tcp ? IPPROTO_TCP : IPPROTO_UDP, 53, 53);
			rb_verdict(&rb, NF_ACCEPT, NULL);
			r = rb_commit(c, &rb);
			if (r < 0)
				return r;
		}
	return 0;
}

/* meta skuid SIDECAR ip daddr NET tcp dport LO-HI counter accept
 * The sidecar's own destinations (git remotes, APIs the credentials are
 * for). After the link-local and metadata blocks, so no destination list
 * opens those; before the agent's sets, and the agent's UID never matches. */
static int build_sidecar_dest_rules(struct ctx *c, const struct nftbatch_config *cfg)
{
	const struct nftbatch_sidecar *sc = cfg->sidecar;
	struct rb rb;
	int r;

	if (!sc)
		return 0;
	for (size_t i = 0; i < sc->n_dests; i++) {
		const struct nftbatch_elem *d = &sc->dests[i];

		r = rb_begin(c, &rb, CHAIN_OUTPUT);
		if (r < 0)
			return r;
		rb_skuid(&rb, sc->uid);
		rb_daddr(&rb, d->family, elem_bytes(d), d->prefix_len);
		rb_dport(&rb, IPPROTO_TCP, d->port_lo, d->port_hi);
		rb_counter(&rb);
		rb_verdict(&rb, NF_ACCEPT, NULL);
		r = rb_commit(c, &rb);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The sidecar exemption is well formed: a non-root UID, bounded valid
 * destinations without timeouts. */
static int check_sidecar(const struct nftbatch_sidecar *sc)
{
	if (!sc)
		return 0;
	if (sc->uid == 0 || sc->uid == UINT32_MAX)
		return -EINVAL;
	if (sc->n_dests > NFTBATCH_MAX_SIDECAR_DESTS)
		return -E2BIG;
	if (sc->n_dests > 0 && !sc->dests)
		return -EINVAL;
	for (size_t i = 0; i < sc->n_dests; i++) {
		int r = elem_valid(&sc->dests[i]);
		if (r < 0)
			return r;
		if (sc->dests[i].timeout_ms != 0 || sc->dests[i].port_lo > sc->dests[i].port_hi)
			return -EINVAL;
	}
	return 0;
}

static int build_rules(struct ctx *c, const struct nftbatch_config *cfg)
{
	static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
	struct in_addr lo4 = { htonl(INADDR_LOOPBACK) };
	struct rb rb;
	int r;

#define RULE(chain, ...)                                                                           \
	do {                                                                                       \
		r = rb_begin(c, &rb, chain);                                                       \
		if (r < 0)                                                                         \
			return r;                                                                  \
		__VA_ARGS__;                                                                       \
		r = rb_commit(c, &rb);                                                             \
		if (r < 0)                                                                         \
			return r;                                                                  \
	} while (0)

	/* chain blocked: where every refused packet ends. */
	{
		/* limit rate 10/second burst 20 packets log prefix "code-sandbox
		 * blocked: " group 1053
		 * No verdict: over the limit the rule just stops matching and
		 * the packet goes on to the reject below, so rate limiting
		 * only ever drops log lines, never turns a reject into a
		 * silent drop (which would make the connect hang). */
		RULE(CHAIN_BLOCKED, {
			struct nftnl_expr *e = rb_expr(&rb, "limit");
			if (e) {
				nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_RATE, NFTBATCH_LOG_RATE_PER_S);
				nftnl_expr_set_u64(e, NFTNL_EXPR_LIMIT_UNIT, 1);
				nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_BURST, NFTBATCH_LOG_BURST);
				nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
				nftnl_expr_set_u32(e, NFTNL_EXPR_LIMIT_FLAGS, 0);
			}
			e = rb_expr(&rb, "log");
			if (e) {
				(void)nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, FW_LOG_PREFIX);
				nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, FW_NFLOG_GROUP);
			}
			rb_text(&rb, "limit rate %u/second burst %u packets log prefix \"%s\" group %u",
				NFTBATCH_LOG_RATE_PER_S, NFTBATCH_LOG_BURST, FW_LOG_PREFIX, FW_NFLOG_GROUP);
		});
		/* meta l4proto tcp counter reject with tcp reset
		 * A refused connect() fails at once with ECONNREFUSED. */
		RULE(CHAIN_BLOCKED, {
			rb_l4proto(&rb, IPPROTO_TCP);
			rb_text(&rb, "meta l4proto tcp ");
			rb_counter(&rb);
			struct nftnl_expr *e = rb_expr(&rb, "reject");
			if (e) {
				nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_TCP_RST);
				nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, 0);
			}
			rb_text(&rb, "reject with tcp reset");
		});
		/* counter reject with icmpx admin-prohibited
		 * UDP, ICMP and the rest: EACCES/EHOSTUNREACH at once. */
		RULE(CHAIN_BLOCKED, {
			rb_counter(&rb);
			struct nftnl_expr *e = rb_expr(&rb, "reject");
			if (e) {
				nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, NFT_REJECT_ICMPX_UNREACH);
				nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE,
						  NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
			}
			rb_text(&rb, "reject with icmpx admin-prohibited");
		});
	}

	/* chain output (policy drop) */
	/* oif "lo" ip daddr 127.0.0.1 udp dport 53 accept   (and tcp; ::1 likewise)
	 * The DNS gate in PID 1: the agent's only resolver. */
	for (int fam = 0; fam < 2; fam++)
		for (int tcp = 0; tcp < 2; tcp++)
			RULE(CHAIN_OUTPUT, {
				rb_oif_lo(&rb, false);
				rb_daddr(&rb, fam ? AF_INET6 : AF_INET, fam ? (const void *)&lo6 : (const void *)&lo4,
					 fam ? 128 : 32);
				rb_dport(&rb, tcp ? IPPROTO_TCP : IPPROTO_UDP, 53, 53);
				rb_verdict(&rb, NF_ACCEPT, NULL);
			});
	/* meta skuid 0 ip daddr UPSTREAM udp dport 53 accept   (and tcp)
	 * PID 1's own queries upstream (gate forwarding, start-up resolution
	 * on a re-run). Only root's sockets match: the agent runs with a
	 * non-zero uid, no_new_privs and no capabilities, so it cannot create
	 * a socket owned by uid 0; PID 1 is the only root process left. */
	for (size_t i = 0; i < cfg->n_upstreams; i++)
		for (int tcp = 0; tcp < 2; tcp++)
			RULE(CHAIN_OUTPUT, {
				const struct nftbatch_elem *u = &cfg->upstreams[i];
				uint32_t root = 0;
				rb_meta_eq(&rb, NFT_META_SKUID, &root, sizeof(root));
				rb_text(&rb, "meta skuid 0 ");
				rb_daddr(&rb, u->family, elem_bytes(u), addr_bits(u->family));
				rb_dport(&rb, tcp ? IPPROTO_TCP : IPPROTO_UDP, 53, 53);
				rb_verdict(&rb, NF_ACCEPT, NULL);
			});
	r = build_sidecar_dns_rules(c, cfg);
	if (r < 0)
		return r;
	/* udp dport 53 counter jump blocked   (and tcp)
	 * Any other DNS, including other loopback resolvers such as Docker's
	 * 127.0.0.11 and an allowlisted host's port 53: only the gate
	 * answers the agent, which closes DNS tunnelling. */
	for (int tcp = 0; tcp < 2; tcp++)
		RULE(CHAIN_OUTPUT, {
			rb_dport(&rb, tcp ? IPPROTO_TCP : IPPROTO_UDP, 53, 53);
			rb_counter(&rb);
			rb_verdict(&rb, NFT_JUMP, CHAIN_BLOCKED);
		});
	/* ip daddr 127.0.0.11 counter jump blocked   (each loopback upstream)
	 * A loopback upstream is the engine's resolver (Docker's embedded
	 * DNS at 127.0.0.11 answers on a random port besides the NATed 53,
	 * visible in /proc/net/udp) and forwards any name: only PID 1's port
	 * 53 queries above may reach it, never the loopback accept below. */
	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		const struct nftbatch_elem *u = &cfg->upstreams[i];
		if (!addr_is_loopback(u->family, elem_bytes(u)))
			continue;
		RULE(CHAIN_OUTPUT, {
			rb_daddr(&rb, u->family, elem_bytes(u), addr_bits(u->family));
			rb_counter(&rb);
			rb_verdict(&rb, NFT_JUMP, CHAIN_BLOCKED);
		});
	}
	/* meta skuid != 0 ip saddr UPSTREAM udp sport 53 counter jump blocked
	 * (and tcp; each upstream)
	 * A forged upstream answer. IPV6_FREEBIND needs no privilege and
	 * lets the agent send from a non-local IPv6 address; engines set
	 * ip_unprivileged_port_start=0 (Docker does), so it can send from
	 * [UPSTREAM]:53 to PID 1's c-ares socket (port in /proc/net/udp):
	 * conntrack calls that the reply direction of PID 1's flow,
	 * "established", and c-ares checks only the source and a 16-bit id.
	 * A forged A record for an allowed name would make the gate admit
	 * any address. Same for a loopback upstream, which is a local
	 * address the agent may bind. Only source port 53, the one c-ares
	 * accepts: the engine's own loopback resolver (Docker's 127.0.0.11)
	 * answers from its real, random port (the nat hook maps it back to
	 * 53 only after this chain), and its socket's uid need not be 0
	 * here (under userns-remap the daemon's root is unmapped). Packets
	 * without a socket do not match (meta skuid breaks). */
	for (size_t i = 0; i < cfg->n_upstreams; i++)
		for (int tcp = 0; tcp < 2; tcp++)
			RULE(CHAIN_OUTPUT, {
				const struct nftbatch_elem *u = &cfg->upstreams[i];
				uint32_t root = 0;
				struct nftnl_expr *e = rb_expr(&rb, "meta");
				if (e) {
					nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_SKUID);
					nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
				}
				rb_cmp(&rb, NFT_CMP_NEQ, &root, sizeof(root));
				rb_text(&rb, "meta skuid != 0 ");
				rb_addr(&rb, u->family, elem_bytes(u), addr_bits(u->family), true);
				rb_sport(&rb, tcp ? IPPROTO_TCP : IPPROTO_UDP, 53);
				rb_counter(&rb);
				rb_verdict(&rb, NFT_JUMP, CHAIN_BLOCKED);
			});
	/* ct state established,related accept
	 * Replies and ICMP errors of flows some rule admitted. After the DNS
	 * rules: a UDP flow PID 1 opened to the upstream stays "established"
	 * in conntrack for up to 120 s after its socket closed (and every
	 * packet renews it), so an agent that binds the same source port
	 * (readable in /proc/net/udp) would otherwise match it and talk DNS
	 * to the upstream directly, past the gate. */
	RULE(CHAIN_OUTPUT, rb_ct_established(&rb); rb_verdict(&rb, NF_ACCEPT, NULL));
	/* oif "lo" ip daddr 127.0.0.0/8 accept;  oif "lo" ip6 daddr ::1 accept
	 * Local services (a dev server the agent started); nothing on lo
	 * leaves the network namespace. */
	RULE(CHAIN_OUTPUT, rb_oif_lo(&rb, false); rb_daddr(&rb, AF_INET, &lo4, 8);
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	RULE(CHAIN_OUTPUT, rb_oif_lo(&rb, false); rb_daddr(&rb, AF_INET6, &lo6, 128);
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	/* icmpv6 type nd-neighbor-solicit accept (nd-neighbor-advert,
	 * nd-router-solicit): without neighbour discovery IPv6 cannot reach
	 * even its gateway. Link-local only (hop limit 255), not routed. */
	RULE(CHAIN_OUTPUT, rb_icmpv6_type(&rb, ND_NEIGHBOR_SOLICIT, "nd-neighbor-solicit");
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	RULE(CHAIN_OUTPUT, rb_icmpv6_type(&rb, ND_NEIGHBOR_ADVERT, "nd-neighbor-advert");
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	RULE(CHAIN_OUTPUT, rb_icmpv6_type(&rb, ND_ROUTER_SOLICIT, "nd-router-solicit");
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	/* ip daddr 169.254.169.254 tcp dport 80 accept
	 * Only for addresses the allowlist names literally inside a blocked
	 * range below (the user asked for exactly that address). */
	{
		size_t n_exc = 0;
		for (size_t i = 0; i < cfg->n_elems; i++) {
			const struct nftbatch_elem *e = &cfg->elems[i];
			if (e->timeout_ms != 0)
				continue;
			for (size_t k = 0; k < ELEMENTSOF(netaddr_blocked); k++) {
				uint8_t net[16];
				if (netaddr_blocked[k].family != e->family ||
				    e->prefix_len < netaddr_blocked[k].prefix_len ||
				    inet_pton(e->family, netaddr_blocked[k].addr, net) != 1 ||
				    !prefix_equal(net, elem_bytes(e), netaddr_blocked[k].prefix_len))
					continue;
				if (++n_exc > NFTBATCH_MAX_EXCEPTIONS)
					return -E2BIG;
				RULE(CHAIN_OUTPUT, {
					rb_daddr(&rb, e->family, elem_bytes(e), e->prefix_len);
					rb_dport(&rb, IPPROTO_TCP, e->port_lo, e->port_hi);
					rb_verdict(&rb, NF_ACCEPT, NULL);
				});
				break;
			}
		}
	}
	/* ip daddr 169.254.0.0/16 counter jump blocked  (100.100.100.200,
	 * fd00:ec2::254, fe80::/10): cloud metadata and link-local, before
	 * the sets, so a name that resolves there (DNS rebinding) admits
	 * nothing. */
	for (size_t k = 0; k < ELEMENTSOF(netaddr_blocked); k++) {
		uint8_t net[16];
		if (inet_pton(netaddr_blocked[k].family, netaddr_blocked[k].addr, net) != 1)
			return -EINVAL;
		RULE(CHAIN_OUTPUT, {
			rb_daddr(&rb, netaddr_blocked[k].family, net, netaddr_blocked[k].prefix_len);
			rb_counter(&rb);
			rb_verdict(&rb, NFT_JUMP, CHAIN_BLOCKED);
		});
	}
	r = build_sidecar_dest_rules(c, cfg);
	if (r < 0)
		return r;
	/* ip daddr . tcp dport @allow_v4 counter accept   (ip6 ... @allow_v6)
	 * The allowlist: address and port together. */
	RULE(CHAIN_OUTPUT, rb_lookup(&rb, AF_INET); rb_counter(&rb); rb_verdict(&rb, NF_ACCEPT, NULL));
	RULE(CHAIN_OUTPUT, rb_lookup(&rb, AF_INET6); rb_counter(&rb); rb_verdict(&rb, NF_ACCEPT, NULL));
	/* counter jump blocked: everything else, IPv4 and IPv6 alike. */
	RULE(CHAIN_OUTPUT, rb_counter(&rb); rb_verdict(&rb, NFT_JUMP, CHAIN_BLOCKED));

	/* chain input (policy drop) */
	/* ct state established,related accept */
	RULE(CHAIN_INPUT, rb_ct_established(&rb); rb_verdict(&rb, NF_ACCEPT, NULL));
	/* iif "lo" accept: the gate and local services */
	RULE(CHAIN_INPUT, rb_oif_lo(&rb, true); rb_verdict(&rb, NF_ACCEPT, NULL));
	/* icmpv6 type nd-neighbor-solicit accept (nd-neighbor-advert,
	 * nd-router-advert): neighbour discovery, see output */
	RULE(CHAIN_INPUT, rb_icmpv6_type(&rb, ND_NEIGHBOR_SOLICIT, "nd-neighbor-solicit");
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	RULE(CHAIN_INPUT, rb_icmpv6_type(&rb, ND_NEIGHBOR_ADVERT, "nd-neighbor-advert");
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	RULE(CHAIN_INPUT, rb_icmpv6_type(&rb, ND_ROUTER_ADVERT, "nd-router-advert");
	     rb_verdict(&rb, NF_ACCEPT, NULL));
	/* counter: what the policy drops, visible in nft list */
	RULE(CHAIN_INPUT, rb_counter(&rb));
#undef RULE
	return 0;
}

static int check_elems(const struct nftbatch_elem *elems, size_t n)
{
	if (n > NFTBATCH_MAX_ELEMS)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		int r = elem_valid(&elems[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

int nftbatch_build_ruleset(struct nftbatch *b, const struct nftbatch_config *cfg, char *buf,
			   size_t size, uint32_t seq)
{
	struct ctx c = { .b = b, .table = cfg->table };
	int r;

	if (!cfg->table || !*cfg->table || strlen(cfg->table) >= NFT_TABLE_MAXNAMELEN ||
	    cfg->n_upstreams > NFTBATCH_MAX_UPSTREAMS)
		return -EINVAL;
	for (size_t i = 0; i < cfg->n_upstreams; i++)
		if (cfg->upstreams[i].family != AF_INET && cfg->upstreams[i].family != AF_INET6)
			return -EINVAL;
	r = check_elems(cfg->elems, cfg->n_elems);
	if (r < 0)
		return r;
	r = check_sidecar(cfg->sidecar);
	if (r < 0)
		return r;
	r = alloc_objects(b);
	if (r < 0)
		goto fail;
	r = writer_start(&c.w, b, buf, size, seq);
	if (r < 0)
		goto fail;
	/* add table inet T; delete table inet T; add table inet T
	 * The first add makes the delete valid when the table does not exist
	 * yet; the delete removes an earlier run's table with everything in
	 * it; all in the same transaction, so the old ruleset stays in force
	 * until the new one is complete, and no other table is touched. */
	r = add_table(&c, NFT_MSG_NEWTABLE);
	if (r >= 0)
		r = add_table(&c, NFT_MSG_DELTABLE);
	if (r >= 0)
		r = add_table(&c, NFT_MSG_NEWTABLE);
	if (r >= 0)
		r = add_set(&c, AF_INET);
	if (r >= 0)
		r = add_set(&c, AF_INET6);
	if (r >= 0)
		r = add_chain(&c, CHAIN_BLOCKED, -1, 0);
	if (r >= 0)
		r = add_chain(&c, CHAIN_OUTPUT, NF_INET_LOCAL_OUT, PRIO_OUTPUT);
	if (r >= 0)
		r = add_chain(&c, CHAIN_INPUT, NF_INET_LOCAL_IN, PRIO_INPUT);
	if (r >= 0)
		r = build_rules(&c, cfg);
	b->elems = cfg->elems;
	b->n_elems = cfg->n_elems;
	if (r >= 0)
		r = add_elems(&c, cfg->elems, cfg->n_elems, AF_INET, b->sets[0]);
	if (r >= 0)
		r = add_elems(&c, cfg->elems, cfg->n_elems, AF_INET6, b->sets[1]);
	if (r >= 0)
		r = writer_finish(&c.w);
	if (r >= 0)
		return 0;
fail:
	writer_abort(&c.w);
	nftbatch_done(b);
	return r;
}

int nftbatch_build_elements(struct nftbatch *b, const char *table,
			    const struct nftbatch_elem *elems, size_t n_elems, char *buf,
			    size_t size, uint32_t seq)
{
	struct ctx c = { .b = b, .table = table };
	int r;

	if (!table || !*table || strlen(table) >= NFT_TABLE_MAXNAMELEN)
		return -EINVAL;
	r = check_elems(elems, n_elems);
	if (r < 0)
		return r;
	b->elems = elems;
	b->n_elems = n_elems;
	r = writer_start(&c.w, b, buf, size, seq);
	if (r >= 0)
		r = add_elems(&c, elems, n_elems, AF_INET, NULL);
	if (r >= 0)
		r = add_elems(&c, elems, n_elems, AF_INET6, NULL);
	if (r >= 0)
		r = writer_finish(&c.w);
	if (r >= 0)
		return 0;
	writer_abort(&c.w);
	nftbatch_done(b);
	return r;
}

const struct nftbatch_msg *nftbatch_find_seq(const struct nftbatch *b, uint32_t seq)
{
	for (size_t i = 0; i < b->n_msgs; i++)
		if (b->msgs[i].seq == seq)
			return &b->msgs[i];
	return NULL;
}

int nftbatch_elem_at_offset(const struct nftbatch *b, const struct nftbatch_msg *m,
			    uint32_t offset)
{
	const struct nlmsghdr *nlh;
	const struct nlattr *attr, *list = NULL;
	size_t idx = 0;

	if (m->kind != NFTBATCH_MSG_ELEMS || m->offset >= b->len)
		return -ENOENT;
	nlh = (const struct nlmsghdr *)(b->buf + m->offset);
	for (attr = msg_attrs(nlh); attr_in(attr, nlh, NULL); attr = mnl_attr_next(attr))
		if (mnl_attr_get_type(attr) == NFTA_SET_ELEM_LIST_ELEMENTS)
			list = attr;
	if (!list)
		return -ENOENT;
	/* the message holds elems[first_elem .. first_elem + n_elems) in order */
	for (attr = mnl_attr_get_payload(list); attr_in(attr, NULL, list); attr = mnl_attr_next(attr)) {
		size_t at = (size_t)((const char *)attr - (const char *)nlh);
		if (idx < m->n_elems && offset >= at && offset < at + mnl_attr_get_len(attr))
			return (int)(m->first_elem + idx);
		idx++;
	}
	return -ENOENT;
}

/* ---- printing ---- */

static const char *after_colon(const char *desc)
{
	const char *p = strstr(desc, ": ");
	return p ? p + 2 : desc;
}

void nftbatch_print(const struct nftbatch *b, FILE *f)
{
	static const char *const chains[] = { CHAIN_BLOCKED, CHAIN_OUTPUT, CHAIN_INPUT };
	const char *table = b->table ? nftnl_table_get_str(b->table, NFTNL_TABLE_NAME) : "?";

	fprintf(f, "table inet %s {\n", table);
	for (size_t i = 0; i < b->n_msgs; i++) {
		const struct nftbatch_msg *m = &b->msgs[i];
		int fam;
		bool first = true;

		if (m->kind != NFTBATCH_MSG_SET)
			continue;
		fam = strncmp(m->desc, "set " FW_SET_V4 ":", strlen("set " FW_SET_V4 ":")) == 0 ? AF_INET
											 : AF_INET6;
		fprintf(f, "\tset %s {\n\t\t%s\n", fam == AF_INET ? FW_SET_V4 : FW_SET_V6,
			after_colon(m->desc));
		for (size_t k = 0; k < b->n_elems; k++) {
			char buf[96];
			if (b->elems[k].family != fam)
				continue;
			nftbatch_elem_format(&b->elems[k], buf, sizeof(buf));
			fprintf(f, "%s%s", first ? "\t\telements = { " : ",\n\t\t\t     ", buf);
			first = false;
		}
		fprintf(f, "%s\t}\n", first ? "" : " }\n");
	}
	for (size_t c = 0; c < ELEMENTSOF(chains); c++) {
		size_t len = strlen(chains[c]);
		for (size_t i = 0; i < b->n_msgs; i++) {
			const struct nftbatch_msg *m = &b->msgs[i];
			if (m->kind == NFTBATCH_MSG_CHAIN && strncmp(m->desc + 6, chains[c], len) == 0 &&
			    m->desc[6 + len] == ':') {
				const char *hook = after_colon(m->desc);
				fprintf(f, "\tchain %s {\n", chains[c]);
				if (hook != m->desc)
					fprintf(f, "\t\t%s\n", hook);
			}
		}
		for (size_t i = 0; i < b->n_msgs; i++) {
			const struct nftbatch_msg *m = &b->msgs[i];
			if (m->kind == NFTBATCH_MSG_RULE && strncmp(m->desc + 5, chains[c], len) == 0 &&
			    m->desc[5 + len] == '#')
				fprintf(f, "\t\t%s\n", after_colon(m->desc));
		}
		fprintf(f, "\t}\n");
	}
	fprintf(f, "}\n");
}

void nftbatch_done(struct nftbatch *b)
{
	if (!b)
		return;
	if (b->table)
		nftnl_table_free(b->table);
	for (size_t i = 0; i < b->n_chains; i++)
		nftnl_chain_free(b->chains[i]);
	for (size_t i = 0; i < b->n_sets; i++)
		nftnl_set_free(b->sets[i]);
	for (size_t i = 0; i < b->n_rules; i++)
		nftnl_rule_free(b->rules[i]);
	free(b->chains);
	free(b->sets);
	free(b->rules);
	free(b->msgs);
	*b = (struct nftbatch){ 0 };
}
