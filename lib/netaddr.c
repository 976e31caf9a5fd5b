/* SPDX-License-Identifier: MIT */
#include "netaddr.h"

#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "be.h"
#include "decimal.h"

const struct netaddr_range netaddr_blocked[NETADDR_BLOCKED_MAX] = {
	[NETADDR_BLOCKED_LINK_LOCAL_V4] = { AF_INET, "169.254.0.0", 16,
					    "link-local, cloud metadata 169.254.169.254" },
	[NETADDR_BLOCKED_ALIBABA_METADATA] = { AF_INET, "100.100.100.200", 32,
					       "Alibaba Cloud metadata" },
	[NETADDR_BLOCKED_AWS_METADATA_V6] = { AF_INET6, "fd00:ec2::254", 128, "AWS IPv6 metadata" },
	[NETADDR_BLOCKED_LINK_LOCAL_V6] = { AF_INET6, "fe80::", 10, "IPv6 link-local" },
};

struct v4_range {
	uint32_t net;
	unsigned prefix;
	enum netaddr_class class;
};

/* Ordered: the first match wins, so the single metadata addresses come
 * before the ranges that contain them. */
static const struct v4_range v4_ranges[] = {
	{0xA9FEA9FEu, 32, NETADDR_METADATA},   /* 169.254.169.254: AWS, GCP, Azure, OCI, ... */
	{0x646464C8u, 32, NETADDR_METADATA},   /* 100.100.100.200: Alibaba Cloud */
	{0x00000000u, 8, NETADDR_UNSPECIFIED}, /* 0.0.0.0/8: "this network" */
	{0x7F000000u, 8, NETADDR_LOOPBACK},
	{0xA9FE0000u, 16, NETADDR_LINK_LOCAL},
	{0x0A000000u, 8, NETADDR_PRIVATE},
	{0xAC100000u, 12, NETADDR_PRIVATE},
	{0xC0A80000u, 16, NETADDR_PRIVATE},
	{0x64400000u, 10, NETADDR_CGNAT},
	/* Not globally reachable: IETF protocol assignments (DS-Lite,
	 * NAT64 discovery) and benchmarking, which fake-IP proxies and some
	 * hosts' own networks use. The documentation ranges stay public: the
	 * simulated internet of the tests lives there. */
	{0xC0000000u, 24, NETADDR_RESERVED},
	{0xC6120000u, 15, NETADDR_RESERVED},
	{0xFFFFFFFFu, 32, NETADDR_BROADCAST},
	{0xE0000000u, 4, NETADDR_MULTICAST},
	{0xF0000000u, 4, NETADDR_RESERVED},
};

static enum netaddr_class classify_v4(uint32_t a)
{
	for (size_t i = 0; i < sizeof(v4_ranges) / sizeof(v4_ranges[0]); i++) {
		const struct v4_range *r = &v4_ranges[i];
		uint32_t mask = r->prefix == 0 ? 0 : 0xFFFFFFFFu << (32 - r->prefix);

		if ((a & mask) == r->net)
			return r->class;
	}
	return NETADDR_PUBLIC;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static enum netaddr_class classify_v6(const uint8_t *b)
{
	static const uint8_t metadata6[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0,
					      0,    0,    0,    0,    0, 0, 0x02, 0x54};
	static const uint8_t nat64_wkp[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t nat64_local[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};

	if (all_zero(b, 15) && b[15] == 0)
		return NETADDR_UNSPECIFIED;
	if (all_zero(b, 15) && b[15] == 1)
		return NETADDR_LOOPBACK;
	if (memcmp(b, metadata6, 16) == 0)
		return NETADDR_METADATA;
	/* ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (SIIT translated). */
	if (all_zero(b, 10) && b[10] == 0xff && b[11] == 0xff)
		return classify_v4(be32_get(b + 12));
	if (all_zero(b, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)
		return classify_v4(be32_get(b + 12));
	/* ::a.b.c.d (deprecated compatible form; :: and ::1 handled above). */
	if (all_zero(b, 12))
		return classify_v4(be32_get(b + 12));
	if (memcmp(b, nat64_wkp, sizeof(nat64_wkp)) == 0)
		return classify_v4(be32_get(b + 12));
	if (memcmp(b, nat64_local, sizeof(nat64_local)) == 0)
		return NETADDR_PRIVATE;
	if (b[0] == 0x20 && b[1] == 0x02) /* 6to4 */
		return classify_v4(be32_get(b + 2));
	if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) /* Teredo */
		return NETADDR_RESERVED;
	if (b[0] == 0x01 && all_zero(b + 1, 7)) /* 100::/64 discard-only */
		return NETADDR_RESERVED;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return NETADDR_LINK_LOCAL;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) /* site-local, deprecated */
		return NETADDR_PRIVATE;
	if ((b[0] & 0xfe) == 0xfc)
		return NETADDR_PRIVATE;
	if (b[0] == 0xff)
		return NETADDR_MULTICAST;
	return NETADDR_PUBLIC;
}

/* The first class in v4_ranges overlapping net/prefix (PUBLIC if none):
 * two prefixes overlap when they agree on the shorter one's bits. */
static enum netaddr_class classify_v4_prefix(uint32_t net, unsigned prefix)
{
	for (size_t i = 0; i < sizeof(v4_ranges) / sizeof(v4_ranges[0]); i++) {
		const struct v4_range *r = &v4_ranges[i];
		unsigned p = prefix < r->prefix ? prefix : r->prefix;
		uint32_t mask = p == 0 ? 0 : 0xFFFFFFFFu << (32 - p);

		if ((net & mask) == (r->net & mask))
			return r->class;
	}
	return NETADDR_PUBLIC;
}

/* True when the first prefix bits of a and b agree. */
static bool bits_equal(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, b, full) != 0)
		return false;
	return rest == 0 || ((a[full] ^ b[full]) & (uint8_t)(0xffu << (8 - rest))) == 0;
}

/* IPv6 ranges that are not public as a whole, or that embed an IPv4
 * address at bit v4_at (classified by the IPv4 range they cover). */
static const struct {
	uint8_t net[16];
	unsigned prefix;
	enum netaddr_class class; /* when v4_at == 0 */
	unsigned v4_at;
} v6_ranges[] = {
	{{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128, NETADDR_METADATA, 0},
	{{0}, 128, NETADDR_UNSPECIFIED, 0},
	{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, NETADDR_LOOPBACK, 0},
	{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, NETADDR_PUBLIC, 96},
	{{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, NETADDR_PUBLIC, 96},
	{{0}, 96, NETADDR_PUBLIC, 96},
	{{0x00, 0x64, 0xff, 0x9b}, 96, NETADDR_PUBLIC, 96},
	{{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, NETADDR_PRIVATE, 0},
	{{0x20, 0x02}, 16, NETADDR_PUBLIC, 16},
	{{0x20, 0x01}, 32, NETADDR_RESERVED, 0},
	{{0x01}, 64, NETADDR_RESERVED, 0},
	{{0xfe, 0x80}, 10, NETADDR_LINK_LOCAL, 0},
	{{0xfe, 0xc0}, 10, NETADDR_PRIVATE, 0},
	{{0xfc}, 7, NETADDR_PRIVATE, 0},
	{{0xff}, 8, NETADDR_MULTICAST, 0},
};

static enum netaddr_class classify_v6_prefix(const uint8_t *net, unsigned prefix)
{
	for (size_t i = 0; i < sizeof(v6_ranges) / sizeof(v6_ranges[0]); i++) {
		unsigned p = prefix < v6_ranges[i].prefix ? prefix : v6_ranges[i].prefix;
		unsigned at = v6_ranges[i].v4_at, v4_len;
		uint32_t v4 = 0;
		enum netaddr_class c;

		if (!bits_equal(net, v6_ranges[i].net, p))
			continue;
		if (at == 0)
			return v6_ranges[i].class;
		/* The IPv4 part the entry covers: all of IPv4 when the entry
		 * is no longer than the embedding prefix. */
		v4_len = prefix > at ? prefix - at : 0;
		if (v4_len > 32)
			v4_len = 32;
		if (v4_len > 0)
			v4 = be32_get(net + at / 8);
		c = classify_v4_prefix(v4_len == 0 ? 0 : v4 & (0xFFFFFFFFu << (32 - v4_len)), v4_len);
		if (c != NETADDR_PUBLIC)
			return c;
	}
	return NETADDR_PUBLIC;
}

enum netaddr_class netaddr_classify_prefix(int family, const void *net, unsigned prefix_len)
{
	if (!net)
		return NETADDR_RESERVED;
	if (family == AF_INET && prefix_len <= 32) {
		const struct in_addr *a = net;

		if (prefix_len == 32)
			return netaddr_classify(family, net);
		return classify_v4_prefix(be32_get((const uint8_t *)&a->s_addr), prefix_len);
	}
	if (family == AF_INET6 && prefix_len <= 128) {
		const struct in6_addr *a = net;

		if (prefix_len == 128)
			return netaddr_classify(family, net);
		return classify_v6_prefix(a->s6_addr, prefix_len);
	}
	return NETADDR_RESERVED;
}

enum netaddr_class netaddr_classify(int family, const void *addr)
{
	if (!addr)
		return NETADDR_RESERVED;
	if (family == AF_INET) {
		const struct in_addr *a = addr;

		return classify_v4(be32_get((const uint8_t *)&a->s_addr));
	}
	if (family == AF_INET6) {
		const struct in6_addr *a = addr;

		return classify_v6(a->s6_addr);
	}
	return NETADDR_RESERVED;
}

bool netaddr_is_forbidden(int family, const void *addr)
{
	return netaddr_classify(family, addr) != NETADDR_PUBLIC;
}

const char *netaddr_class_to_string(enum netaddr_class c)
{
	static const char *const names[NETADDR_CLASS_MAX] = {
		[NETADDR_PUBLIC] = "public",
		[NETADDR_UNSPECIFIED] = "unspecified",
		[NETADDR_LOOPBACK] = "loopback",
		[NETADDR_METADATA] = "cloud metadata",
		[NETADDR_LINK_LOCAL] = "link-local",
		[NETADDR_PRIVATE] = "private",
		[NETADDR_CGNAT] = "shared (CGNAT)",
		[NETADDR_MULTICAST] = "multicast",
		[NETADDR_BROADCAST] = "broadcast",
		[NETADDR_RESERVED] = "reserved",
	};

	if ((unsigned)c >= NETADDR_CLASS_MAX)
		return "unknown";
	return names[c];
}

/* RTF_GATEWAY from <linux/route.h>, spelt out to keep kernel headers out. */
#define NETADDR_RTF_GATEWAY 0x0002u

/* Exactly n hex digits at p (within [p, end)) into bytes or a number. */
static bool hex_bytes(const char *p, const char *end, size_t n_bytes, uint8_t *out)
{
	if ((size_t)(end - p) < 2 * n_bytes)
		return false;
	for (size_t i = 0; i < n_bytes; i++) {
		int hi = hex_digit_value(p[2 * i]), lo = hex_digit_value(p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

static bool hex_u32(const char *p, size_t n, uint32_t *ret)
{
	uint32_t v = 0;

	if (n == 0 || n > 8)
		return false;
	for (size_t i = 0; i < n; i++) {
		int d = hex_digit_value(p[i]);

		if (d < 0)
			return false;
		v = v << 4 | (uint32_t)d;
	}
	*ret = v;
	return true;
}

/* The whitespace-separated fields of the line [p, end) into f[0..max). */
static size_t split_fields(const char *p, const char *end, const char **f, size_t *flen, size_t max)
{
	size_t n = 0;

	while (p < end && n < max) {
		const char *s;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		s = p;
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		f[n] = s;
		flen[n++] = (size_t)(p - s);
	}
	return n;
}

static void add_gateway(const struct netaddr_gateway *g, struct netaddr_gateway *out, size_t *n, size_t max,
			size_t *added)
{
	for (size_t i = 0; i < *n; i++)
		if (out[i].family == g->family &&
		    memcmp(&out[i].addr, &g->addr, g->family == AF_INET ? 4 : 16) == 0)
			return;
	if (*n >= max)
		return;
	out[(*n)++] = *g;
	(*added)++;
}

size_t netaddr_parse_gateways(int family, const char *text, size_t len, struct netaddr_gateway *out,
			      size_t *n, size_t max)
{
	const char *p = text, *end = text + len;
	size_t added = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		const char *f[11];
		size_t fl[11], nf = split_fields(p, le, f, fl, 11);
		struct netaddr_gateway g = {.family = family};
		uint32_t flags, v4;

		p = nl ? nl + 1 : end;
		if (family == AF_INET) {
			/* Iface Destination Gateway Flags ...: the header line
			 * fails the hex parse. */
			if (nf < 4 || !hex_u32(f[3], fl[3], &flags) || !(flags & NETADDR_RTF_GATEWAY) ||
			    fl[2] != 8 || !hex_u32(f[2], fl[2], &v4) || v4 == 0)
				continue;
			/* The kernel prints the __be32 as a host-order number. */
			memcpy(&g.addr.v4, &v4, 4);
		} else if (family == AF_INET6) {
			/* dst plen src plen next-hop metric refcnt use flags iface */
			if (nf < 10 || fl[4] != 32 || !hex_bytes(f[4], f[4] + fl[4], 16, g.addr.v6.s6_addr) ||
			    !hex_u32(f[8], fl[8], &flags) || !(flags & NETADDR_RTF_GATEWAY) ||
			    all_zero(g.addr.v6.s6_addr, 16))
				continue;
		} else
			return added;
		add_gateway(&g, out, n, max, &added);
	}
	return added;
}
