/* SPDX-License-Identifier: MIT */
/* The sidecar exemption: UID validation, destination grammar, and the
 * rules it adds to the ruleset (present, ordered, round-tripping through
 * libnftnl), and that no rule admits anything for another UID. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "nftbatch.h"
#include "sidecar.h"
#include "tap.h"

#define TABLE "cs_unit_sidecar"
#define AGENT_UID 1500U
#define AGENT_GID 1501U

TEST(uid_refusals)
{
	static const unsigned refused[] = { 0, AGENT_UID, AGENT_GID, 1000, 65534, 4294967295U };
	for (size_t i = 0; i < ELEMENTSOF(refused); i++)
		if (!sidecar_uid_refusal(refused[i], AGENT_UID, AGENT_GID))
			TAP_FAIL_(0, "uid %u accepted", refused[i]);
	EXPECT_TRUE(sidecar_uid_refusal(10001, AGENT_UID, AGENT_GID) == NULL);
	EXPECT_TRUE(sidecar_uid_refusal(999, AGENT_UID, AGENT_GID) == NULL);
}

TEST(config_parse_table)
{
	static const struct {
		const char *uid, *allow;
		int err; /* 0: accepted */
		size_t n;
	} cases[] = {
		{ NULL, NULL, 0, 0 },
		{ NULL, "198.51.100.20", EINVAL, 0 },    /* an exemption for nobody */
		{ "10001", NULL, 0, 0 },                  /* DNS only */
		{ "10001", "", 0, 0 },
		{ "0", NULL, EINVAL, 0 },
		{ "1500", NULL, EINVAL, 0 },              /* HOST_UID */
		{ "1501", NULL, EINVAL, 0 },              /* HOST_GID */
		{ "1000", NULL, EINVAL, 0 },
		{ "65534", NULL, EINVAL, 0 },
		{ "-1", NULL, EINVAL, 0 },
		{ "+10001", NULL, EINVAL, 0 },
		{ "10001 ", NULL, EINVAL, 0 },
		{ "", NULL, EINVAL, 0 },
		{ "99999999999", NULL, EINVAL, 0 },
		{ "10001", "198.51.100.20", 0, 1 },
		{ "10001", "198.51.100.0/24:443, 198.51.100.30:8000-8100", 0, 2 },
		{ "10001", "2001:db8::/32", 0, 1 },
		{ "10001", "[2001:db8::20]:22 [2001:db8:1::/48]", 0, 2 },
		{ "10001", "0.0.0.0/0", 0, 1 },
		{ "10001", "198.51.100.1/24", EINVAL, 0 },  /* host bits */
		{ "10001", "198.51.100.20/33", EINVAL, 0 },
		{ "10001", "198.51.100.20:0", EINVAL, 0 },
		{ "10001", "198.51.100.20:65536", EINVAL, 0 },
		{ "10001", "198.51.100.20:90-80", EINVAL, 0 },
		{ "10001", "198.51.100.20:", EINVAL, 0 },
		{ "10001", "github.com", EINVAL, 0 },       /* names are not resolved */
		{ "10001", "169.254.169.254", EINVAL, 0 },
		{ "10001", "169.0.0.0/8", EINVAL, 0 },      /* contains link-local */
		{ "10001", "100.100.100.200", EINVAL, 0 },
		{ "10001", "127.0.0.1", EINVAL, 0 },
		{ "10001", "224.0.0.1", EINVAL, 0 },
		{ "10001", "0.0.0.0/8", EINVAL, 0 },
		{ "10001", "fe80::/10", EINVAL, 0 },
		{ "10001", "fd00:ec2::254", EINVAL, 0 },
		{ "10001", "::1", EINVAL, 0 },
		{ "10001", "::ffff:169.254.169.254", EINVAL, 0 },
		{ "10001", "[2001:db8::20]x", EINVAL, 0 },
		{ "10001", "[2001:db8::20", EINVAL, 0 },
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct sidecar_config c = { 0 };
		struct parse_error pe = { 0 };
		int r = sidecar_config_parse(cases[i].uid, cases[i].allow, AGENT_UID, AGENT_GID, &c, &pe);
		if (cases[i].err == 0 && r < 0)
			TAP_FAIL_(0, "case %zu (%s, %s) refused: %s: %s", i, cases[i].uid ? cases[i].uid : "-",
				  cases[i].allow ? cases[i].allow : "-", pe.file, pe.message);
		else if (cases[i].err != 0 && r != -cases[i].err)
			TAP_FAIL_(0, "case %zu (%s, %s) returned %d", i, cases[i].uid ? cases[i].uid : "-",
				  cases[i].allow ? cases[i].allow : "-", r);
		else if (r == 0 && c.nft.n_dests != cases[i].n)
			TAP_FAIL_(0, "case %zu: %zu destinations, want %zu", i, c.nft.n_dests, cases[i].n);
		else if (r == 0 && c.enabled != (cases[i].uid != NULL))
			TAP_FAIL_(0, "case %zu: enabled=%d", i, c.enabled);
		else if (r < 0 && !pe.message)
			TAP_FAIL_(0, "case %zu: no message", i);
	}
}

TEST(dests_values_and_errors)
{
	struct nftbatch_elem d[4];
	struct parse_error pe = { 0 };
	size_t n = 0;
	char buf[128];

	ASSERT_OK(sidecar_parse_dests("198.51.100.0/24:8000-8100 [2001:db8::20]:22", d, 4, &n, &pe));
	ASSERT_EQ(n, 2);
	nftbatch_elem_format(&d[0], buf, sizeof(buf));
	EXPECT_STREQ(buf, "198.51.100.0/24 . 8000-8100");
	nftbatch_elem_format(&d[1], buf, sizeof(buf));
	EXPECT_STREQ(buf, "2001:db8::20 . 22");
	ASSERT_OK(sidecar_parse_dests("198.51.100.7", d, 4, &n, &pe));
	EXPECT_EQ(d[0].port_lo, 443);
	EXPECT_EQ(d[0].port_hi, 443);
	EXPECT_EQ(d[0].timeout_ms, 0);
	ASSERT_ERR(sidecar_parse_dests("198.51.100.1 198.51.100.2 198.51.100.3", d, 2, &n, &pe), E2BIG);
	ASSERT_ERR(sidecar_parse_dests("198.51.100.1, 169.254.169.254", d, 4, &n, &pe), EINVAL);
	EXPECT_EQ(pe.column, 15);
	{
		char *big = malloc(SIDECAR_MAX_SPEC + 2);
		ASSERT_NOT_NULL(big);
		memset(big, ' ', SIDECAR_MAX_SPEC + 1);
		big[SIDECAR_MAX_SPEC + 1] = '\0';
		EXPECT_ERR(sidecar_parse_dests(big, d, 4, &n, &pe), ENAMETOOLONG);
		free(big);
	}
}

/* Which range a refused destination is named after: the first overlapping
 * one in lib/sidecar.c's order (the blocked ranges come from lib/netaddr.c's
 * table, in a different order there). */
TEST(dest_refusal_messages)
{
	static const struct {
		const char *spec, *message;
	} cases[] = {
		{"169.254.169.254", "overlaps link-local and cloud metadata 169.254.0.0/16"},
		{"169.0.0.0/8", "overlaps link-local and cloud metadata 169.254.0.0/16"},
		{"100.100.100.200", "overlaps cloud metadata 100.100.100.200"},
		{"100.100.0.0/16", "overlaps cloud metadata 100.100.100.200"},
		{"127.0.0.0/8", "overlaps loopback 127.0.0.0/8"},
		{"fe80::1", "overlaps link-local fe80::/10"},
		{"fd00:ec2::254", "overlaps cloud metadata fd00:ec2::254"},
		{"fd00::/8", "overlaps cloud metadata fd00:ec2::254"},
		/* Overlaps both fe80::/10 and fd00:ec2::254: fe80 comes first. */
		{"8000::/1", "overlaps link-local fe80::/10"},
		{"fc00::/6", "overlaps link-local fe80::/10"},
		{"ff02::1", "overlaps multicast ff00::/8"},
	};
	struct nftbatch_elem d[2];
	struct parse_error pe;
	size_t n;

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		pe = (struct parse_error){ 0 };
		EXPECT_ERR(sidecar_parse_dests(cases[i].spec, d, 2, &n, &pe), EINVAL);
		if (!pe.message || strcmp(pe.message, cases[i].message) != 0)
			printf("# %s: '%s'\n", cases[i].spec, pe.message ? pe.message : "(none)");
		EXPECT_TRUE(pe.message && strcmp(pe.message, cases[i].message) == 0);
	}
}

static struct nftbatch_elem up4(const char *a)
{
	struct nftbatch_elem e = { .family = AF_INET, .prefix_len = 32, .port_lo = 53, .port_hi = 53 };
	if (inet_pton(AF_INET, a, &e.addr.v4) != 1)
		abort();
	return e;
}

static int find(const struct nftbatch *b, const char *needle)
{
	for (size_t i = 0; i < b->n_msgs; i++)
		if (strstr(b->msgs[i].desc, needle))
			return (int)i;
	return -1;
}

TEST(ruleset_with_sidecar)
{
	struct nftbatch_elem ups[1] = { up4("10.96.0.10") };
	struct sidecar_config sc = { 0 };
	struct parse_error pe = { 0 };
	struct nftbatch b = { 0 }, parsed = { 0 };
	char err[256] = "";

	ASSERT_OK(sidecar_config_parse("10001", "198.51.100.20:443 [2001:db8::20]:22", AGENT_UID, AGENT_GID,
				       &sc, &pe));
	struct nftbatch_config cfg = { .table = TABLE, .upstreams = ups, .n_upstreams = 1,
				       .sidecar = sidecar_config_nft(&sc) };
	size_t size = nftbatch_buffer_size(0);
	char *buf = malloc(size);
	ASSERT_NOT_NULL(buf);
	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));

	int dns_u = find(&b, "meta skuid 10001 ip daddr 10.96.0.10 udp dport 53 accept");
	int dns_t = find(&b, "meta skuid 10001 ip daddr 10.96.0.10 tcp dport 53 accept");
	int d4 = find(&b, "meta skuid 10001 ip daddr 198.51.100.20 tcp dport 443 counter accept");
	int d6 = find(&b, "meta skuid 10001 ip6 daddr 2001:db8::20 tcp dport 22 counter accept");
	int dns_block = find(&b, ": udp dport 53 counter jump blocked");
	int meta_block = find(&b, "ip daddr 169.254.0.0/16 counter jump blocked");
	int set = find(&b, "@allow_v4");
	int last = find(&b, "output#");
	EXPECT_TRUE(dns_u >= 0 && dns_t >= 0 && d4 >= 0 && d6 >= 0);
	/* DNS exemption before the DNS block; destinations after the
	 * metadata block and before the agent's sets */
	EXPECT_TRUE(dns_u < dns_block && dns_t < dns_block);
	EXPECT_TRUE(meta_block < d4 && d4 < set && d6 < set);
	(void)last;
	/* every accept that names no skuid is one the table has without a
	 * sidecar too: the exemption adds rules for uid 10001 only */
	{
		struct nftbatch plain = { 0 };
		char *buf2 = malloc(size);
		struct nftbatch_config pcfg = cfg;
		size_t extra = 0;
		pcfg.sidecar = NULL;
		ASSERT_NOT_NULL(buf2);
		ASSERT_OK(nftbatch_build_ruleset(&plain, &pcfg, buf2, size, 1));
		for (size_t i = 0; i < b.n_msgs; i++)
			if (strstr(b.msgs[i].desc, "meta skuid 10001 "))
				extra++;
		EXPECT_EQ(b.n_rules, plain.n_rules + extra);
		EXPECT_EQ(extra, 4);
		nftbatch_done(&plain);
		free(buf2);
	}
	ASSERT_OK(nftbatch_parse_buf(&parsed, TABLE, b.buf, b.len));
	ASSERT_EQ(parsed.n_rules, b.n_rules);
	if (nftbatch_compare(&b, &parsed, err, sizeof(err)) < 0)
		TAP_FAIL_(1, "compare: %s", err);
	nftbatch_done(&parsed);
	nftbatch_done(&b);
	free(buf);
}

TEST(builder_refuses_bad_sidecar)
{
	struct nftbatch_elem ups[1] = { up4("10.96.0.10") };
	struct nftbatch_elem d = up4("198.51.100.20");
	struct nftbatch_sidecar root = { .uid = 0 }, tmo = { .uid = 10001, .dests = &d, .n_dests = 1 };
	struct nftbatch_sidecar many = { .uid = 10001, .dests = &d, .n_dests = NFTBATCH_MAX_SIDECAR_DESTS + 1 };
	struct nftbatch_config cfg = { .table = TABLE, .upstreams = ups, .n_upstreams = 1 };
	size_t size = nftbatch_buffer_size(0);
	char *buf = malloc(size);
	struct nftbatch b = { 0 };

	ASSERT_NOT_NULL(buf);
	cfg.sidecar = &root;
	EXPECT_ERR(nftbatch_build_ruleset(&b, &cfg, buf, size, 1), EINVAL);
	d.timeout_ms = 1000;
	cfg.sidecar = &tmo;
	EXPECT_ERR(nftbatch_build_ruleset(&b, &cfg, buf, size, 1), EINVAL);
	cfg.sidecar = &many;
	EXPECT_ERR(nftbatch_build_ruleset(&b, &cfg, buf, size, 1), E2BIG);
	free(buf);
}

/* The worst case (every upstream, every destination) fits the rule and
 * buffer bounds. */
TEST(worst_case_fits)
{
	struct nftbatch_elem ups[NFTBATCH_MAX_UPSTREAMS];
	struct nftbatch_elem dests[NFTBATCH_MAX_SIDECAR_DESTS];
	struct nftbatch_sidecar sc = { .uid = 10001, .dests = dests, .n_dests = NFTBATCH_MAX_SIDECAR_DESTS };
	char a[32];

	for (size_t i = 0; i < NFTBATCH_MAX_UPSTREAMS; i++) {
		(void)snprintf(a, sizeof(a), "127.0.0.%zu", i + 11);
		ups[i] = up4(a);
	}
	for (size_t i = 0; i < NFTBATCH_MAX_SIDECAR_DESTS; i++) {
		(void)snprintf(a, sizeof(a), "198.51.100.%zu", i + 1);
		dests[i] = up4(a);
		dests[i].port_lo = dests[i].port_hi = 443;
	}
	struct nftbatch_config cfg = { .table = TABLE, .upstreams = ups, .n_upstreams = NFTBATCH_MAX_UPSTREAMS,
				       .sidecar = &sc };
	size_t size = nftbatch_buffer_size(0);
	char *buf = malloc(size);
	struct nftbatch b = { 0 };
	ASSERT_NOT_NULL(buf);
	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));
	nftbatch_done(&b);
	free(buf);
}


