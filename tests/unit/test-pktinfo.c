/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>

#include "pktinfo.h"
#include "tap.h"

static size_t ipv4_packet(uint8_t *b, uint8_t proto, const char *dst, uint16_t dport, bool frag)
{
	memset(b, 0, 64);
	b[0] = 0x45;
	b[9] = proto;
	b[6] = frag ? 0x00 : 0x40; /* DF */
	b[7] = frag ? 0x10 : 0x00; /* fragment offset 16 */
	if (inet_pton(AF_INET, dst, b + 16) != 1)
		abort();
	b[22] = (uint8_t)(dport >> 8);
	b[23] = (uint8_t)dport;
	b[20] = 8; /* ICMP echo request when proto is ICMP */
	return 40;
}

static size_t ipv6_packet(uint8_t *b, uint8_t next, const char *dst, bool hbh)
{
	size_t off = 40;

	memset(b, 0, 128);
	b[0] = 0x60;
	b[6] = hbh ? IPPROTO_HOPOPTS : next;
	if (inet_pton(AF_INET6, dst, b + 24) != 1)
		abort();
	if (hbh) {
		b[40] = next;
		b[41] = 0; /* 8 bytes */
		off = 48;
	}
	b[off] = 128; /* ICMPv6 echo request */
	b[off + 2] = 0x01;
	b[off + 3] = 0xBB; /* port 443 */
	return off + 20;
}

TEST(ipv4_tcp_udp_icmp)
{
	uint8_t b[64];
	struct pktinfo p;
	char s[PKTINFO_TEXT_MAX];

	ASSERT_EQ(pktinfo_parse(AF_INET, b, ipv4_packet(b, IPPROTO_TCP, "198.51.100.20", 443, false), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "tcp 198.51.100.20:443");
	ASSERT_EQ(pktinfo_parse(AF_UNSPEC, b, ipv4_packet(b, IPPROTO_UDP, "198.51.100.20", 53, false), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "udp 198.51.100.20:53");
	ASSERT_EQ(pktinfo_parse(AF_INET, b, ipv4_packet(b, IPPROTO_ICMP, "198.51.100.20", 0, false), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "icmp 198.51.100.20 type 8");
	ASSERT_EQ(pktinfo_parse(AF_INET, b, ipv4_packet(b, 132, "198.51.100.20", 9, false), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "sctp 198.51.100.20:9");
	ASSERT_EQ(pktinfo_parse(AF_INET, b, ipv4_packet(b, 99, "198.51.100.20", 9, false), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "proto 99 198.51.100.20");
	/* A later fragment has no ports to read. */
	ASSERT_EQ(pktinfo_parse(AF_INET, b, ipv4_packet(b, IPPROTO_TCP, "198.51.100.20", 443, true), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "tcp 198.51.100.20");
}

TEST(ipv6_with_extension_header)
{
	uint8_t b[128];
	struct pktinfo p;
	char s[PKTINFO_TEXT_MAX];

	ASSERT_EQ(pktinfo_parse(AF_INET6, b, ipv6_packet(b, IPPROTO_TCP, "2001:db8::20", false), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "tcp [2001:db8::20]:443");
	ASSERT_EQ(pktinfo_parse(AF_INET6, b, ipv6_packet(b, IPPROTO_UDP, "2001:db8::20", true), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "udp [2001:db8::20]:443");
	ASSERT_EQ(pktinfo_parse(AF_INET6, b, ipv6_packet(b, IPPROTO_ICMPV6, "2001:db8::20", false), &p), 0);
	EXPECT_STREQ(pktinfo_format(&p, s, sizeof(s)), "icmpv6 2001:db8::20 type 128");
}

TEST(truncated_and_garbage)
{
	uint8_t b[128];
	struct pktinfo p;
	size_t n;

	n = ipv4_packet(b, IPPROTO_TCP, "198.51.100.20", 443, false);
	for (size_t l = 0; l < 20; l++)
		EXPECT_ERR(pktinfo_parse(AF_INET, b, l, &p), EBADMSG);
	for (size_t l = 20; l < 24; l++) {
		ASSERT_EQ(pktinfo_parse(AF_INET, b, l, &p), 0);
		EXPECT_FALSE(p.has_port);
	}
	ASSERT_EQ(pktinfo_parse(AF_INET, b, n, &p), 0);
	EXPECT_TRUE(p.has_port);
	b[0] = 0x4F; /* IHL 60 > length */
	EXPECT_ERR(pktinfo_parse(AF_INET, b, 40, &p), EBADMSG);
	b[0] = 0x44; /* IHL 16 < 20 */
	EXPECT_ERR(pktinfo_parse(AF_INET, b, 40, &p), EBADMSG);
	b[0] = 0x45;
	EXPECT_ERR(pktinfo_parse(AF_INET6, b, 40, &p), EBADMSG); /* family mismatch */
	b[0] = 0x00;
	EXPECT_ERR(pktinfo_parse(AF_UNSPEC, b, 40, &p), EBADMSG);
	EXPECT_ERR(pktinfo_parse(AF_UNSPEC, NULL, 40, &p), EBADMSG);

	n = ipv6_packet(b, IPPROTO_TCP, "2001:db8::20", true);
	for (size_t l = 0; l < 40; l++)
		EXPECT_ERR(pktinfo_parse(AF_INET6, b, l, &p), EBADMSG);
	for (size_t l = 40; l < 52; l++) {
		ASSERT_EQ(pktinfo_parse(AF_INET6, b, l, &p), 0);
		EXPECT_FALSE(p.has_port);
	}
	/* An extension header whose length runs past the packet. */
	b[41] = 200;
	ASSERT_EQ(pktinfo_parse(AF_INET6, b, n, &p), 0);
	EXPECT_FALSE(p.has_port);
}
