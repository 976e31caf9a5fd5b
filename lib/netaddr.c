/* SPDX-License-Identifier: MIT */
#include "netaddr.h"

#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

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

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
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
		return classify_v4(be32_at(b + 12));
	if (all_zero(b, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)
		return classify_v4(be32_at(b + 12));
	/* ::a.b.c.d (deprecated compatible form; :: and ::1 handled above). */
	if (all_zero(b, 12))
		return classify_v4(be32_at(b + 12));
	if (memcmp(b, nat64_wkp, sizeof(nat64_wkp)) == 0)
		return classify_v4(be32_at(b + 12));
	if (memcmp(b, nat64_local, sizeof(nat64_local)) == 0)
		return NETADDR_PRIVATE;
	if (b[0] == 0x20 && b[1] == 0x02) /* 6to4 */
		return classify_v4(be32_at(b + 2));
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

enum netaddr_class netaddr_classify(int family, const void *addr)
{
	if (!addr)
		return NETADDR_RESERVED;
	if (family == AF_INET) {
		const struct in_addr *a = addr;

		return classify_v4(be32_at((const uint8_t *)&a->s_addr));
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
