/* SPDX-License-Identifier: MIT */
/* Classification of IP addresses the DNS gate must never admit on the word of
 * a DNS answer alone (DNS rebinding): an allowed name that an attacker, or a
 * compromised or careless zone, points at loopback, the cloud metadata
 * service or the host's private network would otherwise open a hole to it.
 * Pure code.
 *
 * IPv6 forms that carry an IPv4 address are classified by that address, so
 * ::ffff:169.254.169.254 is metadata, not "public IPv6":
 *   ::ffff:0:0/96 (IPv4-mapped), ::ffff:0:0:0/96 (SIIT IPv4-translated),
 *   ::/96 (deprecated IPv4-compatible), 64:ff9b::/96 (NAT64 well-known
 *   prefix: an IPv6-only network's NAT64 gateway translates it to the
 *   embedded IPv4 address), 2002::/16 (6to4: the IPv4 address in bits 16-47).
 * 64:ff9b:1::/48 (NAT64 local use, RFC 8215) can embed the IPv4 address at
 * several prefix lengths, so it is private as a whole; Teredo (2001::/32)
 * hides the client address and has no legitimate use behind a firewall that
 * only admits named services, so it is forbidden as a whole.
 * The documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
 * 2001:db8::/32) are public here on purpose: the simulated internet of the
 * tests lives there. */
#ifndef CS_NETADDR_H
#define CS_NETADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

enum netaddr_class {
	NETADDR_PUBLIC,
	NETADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
	NETADDR_LOOPBACK,    /* 127/8, ::1 */
	NETADDR_METADATA,    /* 169.254.169.254, 100.100.100.200, fd00:ec2::254 */
	NETADDR_LINK_LOCAL,  /* 169.254/16, fe80::/10 */
	NETADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10, 64:ff9b:1::/48 */
	NETADDR_CGNAT,       /* 100.64/10 (shared address space, RFC 6598) */
	NETADDR_MULTICAST,   /* 224/4, ff00::/8 */
	NETADDR_BROADCAST,   /* 255.255.255.255 */
	NETADDR_RESERVED,    /* 240/4 (future use), 100::/64 (discard), 2001::/32 (Teredo) */
	NETADDR_CLASS_MAX,
};

/* Class of an address: family AF_INET (addr points at a struct in_addr) or
 * AF_INET6 (struct in6_addr). Any other family is NETADDR_RESERVED, so
 * callers that filter on != NETADDR_PUBLIC fail closed. */
enum netaddr_class netaddr_classify(int family, const void *addr);

/* Class of a whole prefix net/prefix_len (host bits zero): the most
 * specific non-public class of any address inside it (first match in the
 * tables, metadata before the ranges holding it), NETADDR_PUBLIC when every
 * address inside is public. A host prefix (/32, /128) is netaddr_classify().
 * IPv6 ranges that embed IPv4 (mapped, compatible, NAT64, 6to4) are
 * classified by the IPv4 range they cover. Out-of-range input: RESERVED. */
enum netaddr_class netaddr_classify_prefix(int family, const void *net, unsigned prefix_len);

/* A gateway of the container's routing table. */
struct netaddr_gateway {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
};

/* Parses the text of /proc/net/route (family AF_INET; hex fields in the
 * byte order of the machine that wrote them, as the kernel prints them) or
 * /proc/net/ipv6_route (AF_INET6) and appends to out[*n..max) the next hop
 * of every route with the RTF_GATEWAY flag, each address once. Malformed
 * lines are skipped. Returns the number appended. Pure. */
size_t netaddr_parse_gateways(int family, const char *text, size_t len, struct netaddr_gateway *out,
			      size_t *n, size_t max);

/* True unless the address is NETADDR_PUBLIC. */
bool netaddr_is_forbidden(int family, const void *addr);

/* "public", "loopback", "cloud metadata", ...; "unknown" out of range. */
const char *netaddr_class_to_string(enum netaddr_class c);

/* A network in text form, as the tables below write it. */
struct netaddr_range {
	int family;
	const char *addr;
	unsigned prefix_len;
	const char *why;
};

/* The special-purpose ranges no name may resolve into (cloud metadata and
 * link-local), blocked for everyone unless the allowlist names an address
 * inside explicitly. One table: lib/nftbatch.c turns it into rules in this
 * order (the golden dumps show it), lib/sidecar.c refuses destinations
 * overlapping any of it. */
enum netaddr_blocked_index {
	NETADDR_BLOCKED_LINK_LOCAL_V4,
	NETADDR_BLOCKED_ALIBABA_METADATA,
	NETADDR_BLOCKED_AWS_METADATA_V6,
	NETADDR_BLOCKED_LINK_LOCAL_V6,
	NETADDR_BLOCKED_MAX,
};
extern const struct netaddr_range netaddr_blocked[NETADDR_BLOCKED_MAX];

#endif
