/* SPDX-License-Identifier: MIT */
/* What a blocked packet was: protocol, destination address and port, read
 * from the copied prefix of the IP packet that nfnetlink_log delivers
 * (firewall/nflog.c). Pure code; the input is untrusted (the agent crafts the
 * packets, raw sockets aside), so every length is checked. */
#ifndef CS_PKTINFO_H
#define CS_PKTINFO_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKTINFO_MAX_EXT_HEADERS 8 /* IPv6 extension headers walked before giving up */
#define PKTINFO_TEXT_MAX 96       /* "tcp [ffff:...:ffff]:65535" and friends */

struct pktinfo {
	int family;    /* AF_INET or AF_INET6 */
	uint8_t proto; /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6, ... */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} daddr;
	bool has_port; /* TCP, UDP, UDP-Lite, SCTP, DCCP with enough bytes */
	uint16_t dport;
	bool has_icmp;
	uint8_t icmp_type;
};

/* Parses an IPv4 or IPv6 packet (the version nibble decides; it must match
 * family when family is not AF_UNSPEC). Returns 0, or -EBADMSG when even the
 * IP header is incomplete or inconsistent. A truncated transport header only
 * leaves has_port/has_icmp false. */
int pktinfo_parse(int family, const uint8_t *pkt, size_t len, struct pktinfo *ret);

/* "tcp 198.51.100.20:443", "udp [2001:db8::20]:53", "icmp 198.51.100.20 type 8",
 * "proto 132 198.51.100.20". Returns buf. */
char *pktinfo_format(const struct pktinfo *p, char *buf, size_t size);

#endif
