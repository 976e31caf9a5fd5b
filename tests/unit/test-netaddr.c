/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "macros.h"
#include "netaddr.h"
#include "tap.h"

struct netaddr_case {
	const char *addr;
	enum netaddr_class class;
};

static const struct netaddr_case cases[] = {
	/* The simulated internet and other documentation ranges are public. */
	{"198.51.100.10", NETADDR_PUBLIC},
	{"198.51.100.255", NETADDR_PUBLIC},
	{"192.0.2.1", NETADDR_PUBLIC},
	{"203.0.113.9", NETADDR_PUBLIC},
	{"2001:db8::10", NETADDR_PUBLIC},
	{"2001:db8:ffff::1", NETADDR_PUBLIC},
	{"8.8.8.8", NETADDR_PUBLIC},
	{"2606:4700::1111", NETADDR_PUBLIC},
	{"172.15.255.255", NETADDR_PUBLIC},
	{"172.32.0.0", NETADDR_PUBLIC},
	{"100.63.255.255", NETADDR_PUBLIC},
	{"100.128.0.0", NETADDR_PUBLIC},
	{"169.253.255.255", NETADDR_PUBLIC},
	{"223.255.255.255", NETADDR_PUBLIC},
	{"11.0.0.1", NETADDR_PUBLIC},
	{"2001:1::1", NETADDR_PUBLIC}, /* not Teredo (2001:0::/32) */
	{"fbff::1", NETADDR_PUBLIC},
	{"fe00::1", NETADDR_PUBLIC},
	{"::ffff:198.51.100.10", NETADDR_PUBLIC},
	{"64:ff9b::198.51.100.10", NETADDR_PUBLIC},
	{"2002:c633:640a::1", NETADDR_PUBLIC}, /* 6to4 of 198.51.100.10 */

	{"0.0.0.0", NETADDR_UNSPECIFIED},
	{"0.1.2.3", NETADDR_UNSPECIFIED},
	{"::", NETADDR_UNSPECIFIED},
	{"127.0.0.1", NETADDR_LOOPBACK},
	{"127.255.255.254", NETADDR_LOOPBACK},
	{"::1", NETADDR_LOOPBACK},
	{"::ffff:127.0.0.1", NETADDR_LOOPBACK},
	{"169.254.169.254", NETADDR_METADATA},
	{"100.100.100.200", NETADDR_METADATA},
	{"fd00:ec2::254", NETADDR_METADATA},
	{"::ffff:169.254.169.254", NETADDR_METADATA},
	{"::ffff:0:169.254.169.254", NETADDR_METADATA},
	{"::169.254.169.254", NETADDR_METADATA},
	{"64:ff9b::169.254.169.254", NETADDR_METADATA},
	{"2002:a9fe:a9fe::", NETADDR_METADATA},
	{"169.254.0.1", NETADDR_LINK_LOCAL},
	{"169.254.255.255", NETADDR_LINK_LOCAL},
	{"fe80::1", NETADDR_LINK_LOCAL},
	{"febf:ffff::1", NETADDR_LINK_LOCAL},
	{"10.0.0.1", NETADDR_PRIVATE},
	{"10.255.255.255", NETADDR_PRIVATE},
	{"172.16.0.1", NETADDR_PRIVATE},
	{"172.31.255.255", NETADDR_PRIVATE},
	{"192.168.1.1", NETADDR_PRIVATE},
	{"fc00::1", NETADDR_PRIVATE},
	{"fd12:3456::1", NETADDR_PRIVATE},
	{"fd00:ec2::253", NETADDR_PRIVATE},
	{"fec0::1", NETADDR_PRIVATE},
	{"64:ff9b:1::a00:1", NETADDR_PRIVATE},
	{"::ffff:10.1.2.3", NETADDR_PRIVATE},
	{"::ffff:192.168.0.1", NETADDR_PRIVATE},
	{"2002:c0a8:101::1", NETADDR_PRIVATE}, /* 6to4 of 192.168.1.1 */
	{"100.64.0.1", NETADDR_CGNAT},
	{"100.127.255.255", NETADDR_CGNAT},
	{"::ffff:100.64.0.1", NETADDR_CGNAT},
	{"224.0.0.1", NETADDR_MULTICAST},
	{"239.255.255.250", NETADDR_MULTICAST},
	{"ff02::1", NETADDR_MULTICAST},
	{"::ffff:224.0.0.251", NETADDR_MULTICAST},
	{"255.255.255.255", NETADDR_BROADCAST},
	{"::ffff:255.255.255.255", NETADDR_BROADCAST},
	{"240.0.0.1", NETADDR_RESERVED},
	/* not globally reachable (IANA special-purpose registry): benchmarking
	 * (fake-IP proxies and some hosts' own networks use it) and IETF
	 * protocol assignments (DS-Lite, NAT64 discovery) */
	{"198.18.0.1", NETADDR_RESERVED},
	{"198.19.255.255", NETADDR_RESERVED},
	{"::ffff:198.18.0.1", NETADDR_RESERVED},
	{"192.0.0.1", NETADDR_RESERVED},
	{"192.0.0.170", NETADDR_RESERVED},
	{"198.17.255.255", NETADDR_PUBLIC},
	{"198.20.0.0", NETADDR_PUBLIC},
	{"192.0.1.0", NETADDR_PUBLIC},
	{"2001::1", NETADDR_RESERVED},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", NETADDR_RESERVED},
	{"100::1", NETADDR_RESERVED},
};

TEST(classification_table)
{
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		unsigned char buf[16];
		int family = strchr(cases[i].addr, ':') ? AF_INET6 : AF_INET;
		enum netaddr_class c;

		ASSERT_EQ(inet_pton(family, cases[i].addr, buf), 1);
		c = netaddr_classify(family, buf);
		if (c != cases[i].class)
			printf("# %s: got %s, want %s\n", cases[i].addr, netaddr_class_to_string(c),
			       netaddr_class_to_string(cases[i].class));
		EXPECT_EQ(c, cases[i].class);
		EXPECT_EQ(netaddr_is_forbidden(family, buf), cases[i].class != NETADDR_PUBLIC);
	}
}

TEST(unknown_family_fails_closed)
{
	unsigned char buf[16] = {0};

	EXPECT_EQ(netaddr_classify(AF_UNIX, buf), NETADDR_RESERVED);
	EXPECT_TRUE(netaddr_is_forbidden(AF_UNIX, buf));
	EXPECT_TRUE(netaddr_is_forbidden(AF_INET, NULL));
}

TEST(class_names)
{
	EXPECT_STREQ(netaddr_class_to_string(NETADDR_METADATA), "cloud metadata");
	EXPECT_STREQ(netaddr_class_to_string(NETADDR_PUBLIC), "public");
	EXPECT_STREQ(netaddr_class_to_string(NETADDR_CLASS_MAX), "unknown");
	for (int c = 0; c < NETADDR_CLASS_MAX; c++)
		EXPECT_TRUE(netaddr_class_to_string((enum netaddr_class)c) != NULL);
}

static enum netaddr_class prefix_class(const char *text, unsigned len)
{
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} a;
	int family = strchr(text, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(family, text, &a) != 1)
		abort();
	return netaddr_classify_prefix(family, &a, len);
}

TEST(prefix_classes)
{
	static const struct {
		const char *net;
		unsigned len;
		enum netaddr_class c;
	} pcases[] = {
		{"198.51.100.0", 24, NETADDR_PUBLIC},
		{"8.0.0.0", 8, NETADDR_PUBLIC},
		{"11.0.0.0", 8, NETADDR_PUBLIC},
		{"10.0.0.0", 8, NETADDR_PRIVATE},
		{"10.20.0.0", 16, NETADDR_PRIVATE},
		{"172.0.0.0", 8, NETADDR_PRIVATE},     /* holds 172.16/12 */
		{"172.32.0.0", 11, NETADDR_PUBLIC},    /* just past it */
		{"169.254.0.0", 16, NETADDR_METADATA}, /* holds 169.254.169.254 */
		{"169.254.1.0", 24, NETADDR_LINK_LOCAL},
		{"100.0.0.0", 8, NETADDR_METADATA},    /* holds 100.100.100.200 */
		{"100.64.0.0", 16, NETADDR_CGNAT},
		{"127.0.0.0", 8, NETADDR_LOOPBACK},
		{"224.0.0.0", 8, NETADDR_MULTICAST},
		{"192.168.1.1", 32, NETADDR_PRIVATE},
		{"2001:db8::", 32, NETADDR_PUBLIC},
		{"2001:db8:1::", 48, NETADDR_PUBLIC},
		{"fd00::", 8, NETADDR_METADATA},       /* holds fd00:ec2::254 */
		{"fd12::", 16, NETADDR_PRIVATE},
		{"fe80::", 64, NETADDR_LINK_LOCAL},
		{"ff02::", 16, NETADDR_MULTICAST},
		{"::ffff:0.0.0.0", 96, NETADDR_METADATA}, /* all of IPv4, mapped */
		{"::ffff:198.51.100.0", 120, NETADDR_PUBLIC},
		{"::ffff:10.0.0.0", 104, NETADDR_PRIVATE},
		{"64:ff9b::", 96, NETADDR_METADATA},
		{"64:ff9b::c633:6400", 120, NETADDR_PUBLIC}, /* 198.51.100.0/24 */
		{"2002:c633:6400::", 40, NETADDR_PUBLIC},
		{"2002:a00::", 32, NETADDR_PRIVATE},
		{"2001::", 32, NETADDR_RESERVED},
	};

	for (size_t i = 0; i < ELEMENTSOF(pcases); i++) {
		enum netaddr_class c = prefix_class(pcases[i].net, pcases[i].len);

		if (c != pcases[i].c)
			printf("# %s/%u: %s, expected %s\n", pcases[i].net, pcases[i].len,
			       netaddr_class_to_string(c), netaddr_class_to_string(pcases[i].c));
		EXPECT_EQ(c, pcases[i].c);
	}
	EXPECT_EQ(netaddr_classify_prefix(AF_INET, NULL, 8), NETADDR_RESERVED);
	EXPECT_EQ(netaddr_classify_prefix(AF_INET, &(struct in_addr){0}, 33), NETADDR_RESERVED);
}
