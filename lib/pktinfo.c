/* SPDX-License-Identifier: MIT */
#include "pktinfo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define IPV4_MIN_HDR 20
#define IPV6_HDR 40

static bool port_proto(uint8_t proto)
{
	/* Each has the destination port at bytes 2-3 of its header. */
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE ||
	       proto == IPPROTO_SCTP || proto == IPPROTO_DCCP;
}

static void transport(struct pktinfo *p, const uint8_t *l4, size_t len)
{
	if (port_proto(p->proto) && len >= 4) {
		p->has_port = true;
		p->dport = (uint16_t)(l4[2] << 8 | l4[3]);
	} else if ((p->proto == IPPROTO_ICMP || p->proto == IPPROTO_ICMPV6) && len >= 1) {
		p->has_icmp = true;
		p->icmp_type = l4[0];
	}
}

int pktinfo_parse(int family, const uint8_t *pkt, size_t len, struct pktinfo *ret)
{
	struct pktinfo p = {0};

	if (!pkt || len < 1)
		return -EBADMSG;
	if ((pkt[0] >> 4) == 4 && (family == AF_UNSPEC || family == AF_INET)) {
		size_t ihl = (size_t)(pkt[0] & 0x0F) * 4;
		uint16_t frag;

		if (len < IPV4_MIN_HDR || ihl < IPV4_MIN_HDR || ihl > len)
			return -EBADMSG;
		p.family = AF_INET;
		p.proto = pkt[9];
		memcpy(&p.daddr.v4, pkt + 16, 4);
		frag = (uint16_t)((pkt[6] & 0x1F) << 8 | pkt[7]);
		/* Only the first fragment carries the transport header. */
		if (frag == 0)
			transport(&p, pkt + ihl, len - ihl);
	} else if ((pkt[0] >> 4) == 6 && (family == AF_UNSPEC || family == AF_INET6)) {
		size_t off = IPV6_HDR;
		uint8_t next;

		if (len < IPV6_HDR)
			return -EBADMSG;
		p.family = AF_INET6;
		memcpy(&p.daddr.v6, pkt + 24, 16);
		next = pkt[6];
		for (unsigned i = 0; i < PKTINFO_MAX_EXT_HEADERS; i++) {
			if (next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING || next == IPPROTO_DSTOPTS) {
				if (len - off < 2)
					break;
				next = pkt[off];
				off += ((size_t)pkt[off + 1] + 1) * 8;
				if (off > len)
					break;
			} else if (next == IPPROTO_FRAGMENT) {
				if (len - off < 8)
					break;
				/* A non-first fragment has no transport header. */
				if ((pkt[off + 2] << 8 | pkt[off + 3]) & 0xFFF8) {
					next = IPPROTO_FRAGMENT;
					off = len;
					break;
				}
				next = pkt[off];
				off += 8;
			} else {
				break;
			}
		}
		p.proto = next;
		if (off <= len)
			transport(&p, pkt + off, len - off);
	} else {
		return -EBADMSG;
	}
	*ret = p;
	return 0;
}

static const char *proto_name(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_SCTP:
		return "sctp";
	case IPPROTO_DCCP:
		return "dccp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		return NULL;
	}
}

char *pktinfo_format(const struct pktinfo *p, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN] = "?", proto[16];
	const char *pn = proto_name(p->proto);
	bool v6 = p->family == AF_INET6;

	if (!size)
		return buf;
	(void)inet_ntop(p->family, &p->daddr, addr, sizeof(addr));
	if (pn)
		(void)snprintf(proto, sizeof(proto), "%s", pn);
	else
		(void)snprintf(proto, sizeof(proto), "proto %u", p->proto);
	if (p->has_port)
		(void)snprintf(buf, size, "%s %s%s%s:%u", proto, v6 ? "[" : "", addr, v6 ? "]" : "",
			       p->dport);
	else if (p->has_icmp)
		(void)snprintf(buf, size, "%s %s type %u", proto, addr, p->icmp_type);
	else
		(void)snprintf(buf, size, "%s %s", proto, addr);
	return buf;
}
