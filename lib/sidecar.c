/* SPDX-License-Identifier: MIT */
/* The sidecar exemption's configuration. See sidecar.h. */
#include "sidecar.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "ids.h"
#include "macros.h"
#include "netaddr.h"

const char *sidecar_uid_refusal(unsigned uid, unsigned agent_uid, unsigned agent_gid)
{
	if (uid == 0)
		return "must not be 0: PID 1 runs as root, so root's sockets would be exempt";
	if (uid == agent_uid)
		return "must not be HOST_UID: the agent runs as it";
	if (uid == agent_gid)
		return "must not be HOST_GID: devuser's IDs stay the agent's";
	if (uid == SIDECAR_IMAGE_DEVUSER_ID)
		return "must not be 1000: devuser's ID in the image";
	if (uid == SIDECAR_OVERFLOW_ID)
		return "must not be 65534: the overflow ID that unmapped owners appear as";
	if (uid > IDS_ID_MAX)
		return "must be at most 4294967294";
	return NULL;
}

/* Parses "N" of a /N suffix, 0..max. */
static int parse_small(const char *s, size_t len, unsigned max, unsigned *ret)
{
	uint64_t v;
	int r;

	/* At most five digits, leading zeros included ("00080" but not
	 * "000080"): the limit this parser always had. */
	if (len > 5)
		return -EINVAL;
	r = decimal_parse(s, len, max, &v);
	if (r < 0)
		return r;
	*ret = (unsigned)v;
	return 0;
}

/* "PORT" or "LO-HI", 1..65535. */
static int parse_ports(const char *s, size_t len, uint16_t *lo, uint16_t *hi)
{
	const char *dash = memchr(s, '-', len);
	unsigned a, b;

	if (!dash) {
		if (parse_small(s, len, 65535, &a) < 0 || a == 0)
			return -EINVAL;
		*lo = *hi = (uint16_t)a;
		return 0;
	}
	if (parse_small(s, (size_t)(dash - s), 65535, &a) < 0 ||
	    parse_small(dash + 1, len - (size_t)(dash - s) - 1, 65535, &b) < 0 || a == 0 || a > b)
		return -EINVAL;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

/* Ranges no destination may overlap (unless it is /0, "everything", which
 * the table's earlier rules still cut these out of): what the firewall
 * blocks for everyone (link-local, cloud metadata), loopback (reachable
 * already, and the pod's loopback is shared with the agent), multicast. */
/* The blocked ranges come from lib/netaddr.c's table (shared with the
 * firewall's rules); this table keeps its own order and messages: the
 * first overlapping entry names the refusal, and this order (fe80::/10
 * before fd00:ec2::254, unlike the rules) decides it for wide prefixes
 * such as 8000::/1. */
static const struct {
	const struct netaddr_range *blocked; /* or the range below */
	struct netaddr_range own;
	const char *why;
} refused_ranges[] = {
	{ &netaddr_blocked[NETADDR_BLOCKED_LINK_LOCAL_V4], { 0 },
	  "overlaps link-local and cloud metadata 169.254.0.0/16" },
	{ &netaddr_blocked[NETADDR_BLOCKED_ALIBABA_METADATA], { 0 },
	  "overlaps cloud metadata 100.100.100.200" },
	{ NULL, { AF_INET, "127.0.0.0", 8, NULL }, "overlaps loopback 127.0.0.0/8" },
	{ NULL, { AF_INET, "224.0.0.0", 3, NULL }, "overlaps multicast and reserved 224.0.0.0/3" },
	{ NULL, { AF_INET, "0.0.0.0", 8, NULL }, "overlaps 0.0.0.0/8" },
	{ &netaddr_blocked[NETADDR_BLOCKED_LINK_LOCAL_V6], { 0 }, "overlaps link-local fe80::/10" },
	{ &netaddr_blocked[NETADDR_BLOCKED_AWS_METADATA_V6], { 0 },
	  "overlaps cloud metadata fd00:ec2::254" },
	{ NULL, { AF_INET6, "::", 127, NULL }, "overlaps ::/127 (unspecified, loopback)" },
	{ NULL, { AF_INET6, "::ffff:0:0", 96, NULL }, "overlaps IPv4-mapped ::ffff:0:0/96" },
	{ NULL, { AF_INET6, "ff00::", 8, NULL }, "overlaps multicast ff00::/8" },
};

/* Two networks overlap when they agree on the shorter prefix. */
static bool prefixes_overlap(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen)
{
	unsigned n = alen < blen ? alen : blen;

	for (unsigned i = 0; i < n; i++) {
		uint8_t bit = (uint8_t)(0x80u >> (i % 8));
		if ((a[i / 8] & bit) != (b[i / 8] & bit))
			return false;
	}
	return true;
}

static const char *dest_refusal(const struct nftbatch_elem *e)
{
	const uint8_t *a = e->family == AF_INET ? (const uint8_t *)&e->addr.v4 : (const uint8_t *)&e->addr.v6;

	if (e->prefix_len == 0)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(refused_ranges); i++) {
		const struct netaddr_range *rr = refused_ranges[i].blocked ? refused_ranges[i].blocked
									   : &refused_ranges[i].own;
		uint8_t net[16];
		if (rr->family != e->family)
			continue;
		if (inet_pton(e->family, rr->addr, net) != 1)
			return "internal error";
		if (prefixes_overlap(a, e->prefix_len, net, rr->prefix_len))
			return refused_ranges[i].why;
	}
	return NULL;
}

/* One entry, [s, s+len): fills *e or returns a static reason. */
static const char *parse_dest(const char *s, size_t len, struct nftbatch_elem *e)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *end = s + len, *a = s, *a_end, *port = NULL, *slash;
	unsigned bits, plen;
	size_t alen;

	*e = (struct nftbatch_elem){ .port_lo = SIDECAR_DEFAULT_PORT, .port_hi = SIDECAR_DEFAULT_PORT };
	if (*s == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return "missing ']'";
		a = s + 1;
		a_end = close;
		if (close + 1 < end) {
			if (close[1] != ':' || close + 2 >= end)
				return "expected ':PORT' after ']'";
			port = close + 2;
		}
	} else {
		const char *colon = memchr(s, ':', len);
		const char *last = colon;
		/* more than one colon without brackets: a bare IPv6 network */
		if (colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			last = NULL;
		a_end = last ? last : end;
		if (last) {
			if (last + 1 >= end)
				return "expected a port after ':'";
			port = last + 1;
		}
	}
	slash = memchr(a, '/', (size_t)(a_end - a));
	alen = (size_t)((slash ? slash : a_end) - a);
	if (alen == 0 || alen >= sizeof(addr))
		return "expected an IP address";
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, &e->addr.v4) == 1)
		e->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &e->addr.v6) == 1)
		e->family = AF_INET6;
	else
		return "not an IP address (names are not resolved for the sidecar)";
	bits = e->family == AF_INET ? 32 : 128;
	plen = bits;
	if (slash && parse_small(slash + 1, (size_t)(a_end - slash - 1), bits, &plen) < 0)
		return "bad prefix length";
	e->prefix_len = plen;
	{
		const uint8_t *b = e->family == AF_INET ? (const uint8_t *)&e->addr.v4 : (const uint8_t *)&e->addr.v6;
		for (unsigned i = plen; i < bits; i++)
			if (b[i / 8] & (0x80u >> (i % 8)))
				return "host bits set after the prefix length";
	}
	if (port && parse_ports(port, (size_t)(end - port), &e->port_lo, &e->port_hi) < 0)
		return "bad port or port range (1-65535, LO-HI)";
	return dest_refusal(e);
}

static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

int sidecar_parse_dests(const char *spec, struct nftbatch_elem *out, size_t max, size_t *ret_n,
			struct parse_error *reterr)
{
	size_t n = 0, total;
	const char *p = spec;

	total = strnlen(spec, SIDECAR_MAX_SPEC + 1);
	if (total > SIDECAR_MAX_SPEC) {
		reterr->message = "longer than 4096 bytes";
		reterr->column = 1;
		return -ENAMETOOLONG;
	}
	while (*p) {
		const char *q, *why;

		while (*p && is_sep(*p))
			p++;
		if (!*p)
			break;
		for (q = p; *q && !is_sep(*q); q++)
			;
		reterr->column = (unsigned)(p - spec) + 1;
		if (n >= max) {
			reterr->message = "too many destinations";
			return -E2BIG;
		}
		why = parse_dest(p, (size_t)(q - p), &out[n]);
		if (why) {
			reterr->message = why;
			return -EINVAL;
		}
		n++;
		p = q;
	}
	*ret_n = n;
	return 0;
}

int sidecar_config_parse(const char *uid_spec, const char *allow_spec, unsigned agent_uid,
			 unsigned agent_gid, struct sidecar_config *ret, struct parse_error *reterr)
{
	struct sidecar_config c;
	const char *why;
	unsigned uid;
	int r;

	memset(&c, 0, sizeof(c));
	reterr->file = SIDECAR_ENV_UID;
	reterr->line = 0;
	reterr->column = 0;
	if (!uid_spec) {
		if (allow_spec) {
			reterr->message = "must be set when " SIDECAR_ENV_ALLOW " is";
			return -EINVAL;
		}
		*ret = c;
		return 0;
	}
	r = ids_parse_id(uid_spec, &uid);
	if (r < 0) {
		reterr->message = "must be a decimal UID";
		return -EINVAL;
	}
	why = sidecar_uid_refusal(uid, agent_uid, agent_gid);
	if (why) {
		reterr->message = why;
		return -EINVAL;
	}
	if (allow_spec) {
		reterr->file = SIDECAR_ENV_ALLOW;
		r = sidecar_parse_dests(allow_spec, c.dests, SIDECAR_MAX_DESTS, &c.nft.n_dests, reterr);
		if (r < 0)
			return r;
	}
	c.enabled = true;
	c.nft.uid = uid;
	*ret = c;
	return 0;
}

const struct nftbatch_sidecar *sidecar_config_nft(struct sidecar_config *c)
{
	if (!c->enabled)
		return NULL;
	c->nft.dests = c->dests;
	return &c->nft;
}
