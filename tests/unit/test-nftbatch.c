/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "macros.h"
#include "nftbatch.h"
#include "tap.h"

#define TABLE "cs_unit"

static struct nftbatch_elem v4(const char *a, unsigned plen, uint16_t lo, uint16_t hi, uint32_t tmo)
{
	struct nftbatch_elem e = { .family = AF_INET, .prefix_len = plen, .port_lo = lo,
				   .port_hi = hi, .timeout_ms = tmo };
	if (inet_pton(AF_INET, a, &e.addr.v4) != 1)
		abort();
	return e;
}

static struct nftbatch_elem v6(const char *a, unsigned plen, uint16_t lo, uint16_t hi, uint32_t tmo)
{
	struct nftbatch_elem e = { .family = AF_INET6, .prefix_len = plen, .port_lo = lo,
				   .port_hi = hi, .timeout_ms = tmo };
	if (inet_pton(AF_INET6, a, &e.addr.v6) != 1)
		abort();
	return e;
}

static void ports_std(struct nftbatch_ports *p)
{
	memset(p, 0, sizeof(*p));
	ASSERT_OK(nftbatch_ports_add(p, 443, 443));
	ASSERT_OK(nftbatch_ports_add(p, 400, 500));
	ASSERT_OK(nftbatch_ports_add(p, 8443, 8443));
	nftbatch_ports_finish(p);
}

TEST(port_segments_are_disjoint_and_cover_every_range)
{
	struct nftbatch_ports p;

	ports_std(&p);
	ASSERT_EQ(p.n_segments, 4);
	EXPECT_EQ(p.seg_lo[0], 400);
	EXPECT_EQ(p.seg_hi[0], 442);
	EXPECT_EQ(p.seg_lo[1], 443);
	EXPECT_EQ(p.seg_hi[1], 443);
	EXPECT_EQ(p.seg_lo[2], 444);
	EXPECT_EQ(p.seg_hi[2], 500);
	EXPECT_EQ(p.seg_lo[3], 8443);
	EXPECT_EQ(p.seg_hi[3], 8443);
	ASSERT_ERR(nftbatch_ports_add(&p, 10, 9), EINVAL);
}

TEST(port_ranges_limit)
{
	static struct nftbatch_ports p;
	size_t i;

	for (i = 0; i < NFTBATCH_MAX_PORT_RANGES; i++)
		ASSERT_OK(nftbatch_ports_add(&p, (uint16_t)(i + 1), (uint16_t)(i + 1)));
	ASSERT_ERR(nftbatch_ports_add(&p, 60000, 60001), E2BIG);
	nftbatch_ports_finish(&p);
	ASSERT_EQ(p.n_segments, NFTBATCH_MAX_PORT_RANGES);
}

TEST(normalize_splits_filters_and_merges)
{
	struct nftbatch_ports p;
	struct nftbatch_elem perm[] = { v4("198.51.100.0", 24, 443, 443, 0) };
	struct nftbatch_elem in[] = {
		v4("198.51.100.10", 32, 443, 443, 60000),  /* covered by the /24 */
		v4("198.51.100.10", 32, 400, 500, 60000),  /* 400-442, 444-500 survive */
		v4("198.51.101.1", 32, 443, 443, 30000),
		v4("198.51.101.1", 32, 443, 443, 90000),   /* merged: longest wins */
		v6("2001:db8::1", 128, 8443, 8443, 1000),
	};
	struct nftbatch_elem *out = NULL;
	size_t n = 0;

	ports_std(&p);
	ASSERT_OK(nftbatch_elems_normalize(&p, perm, 1, in, ELEMENTSOF(in), &out, &n));
	ASSERT_EQ(n, 4);
	EXPECT_EQ(out[0].port_lo, 400);
	EXPECT_EQ(out[0].port_hi, 442);
	EXPECT_EQ(out[1].port_lo, 444);
	EXPECT_EQ(out[1].port_hi, 500);
	EXPECT_EQ(out[2].timeout_ms, 90000);
	EXPECT_EQ(out[3].family, AF_INET6);
	free(out);
}

TEST(normalize_drops_nested_literals_and_rejects_bad_input)
{
	struct nftbatch_ports p;
	struct nftbatch_elem in[] = {
		v4("10.1.0.0", 25, 443, 443, 0),
		v4("10.1.0.0", 16, 443, 443, 0),
		v4("10.1.0.0", 16, 443, 443, 0),
	};
	struct nftbatch_elem bad_cidr_timeout[] = { v4("10.0.0.0", 8, 443, 443, 1000) };
	struct nftbatch_elem bad_range[] = { v4("10.0.0.1", 32, 1, 2, 1000) };
	struct nftbatch_elem *out = NULL;
	size_t n = 0;

	ports_std(&p);
	ASSERT_OK(nftbatch_elems_normalize(&p, NULL, 0, in, ELEMENTSOF(in), &out, &n));
	ASSERT_EQ(n, 1);
	EXPECT_EQ(out[0].prefix_len, 16);
	free(out);
	ASSERT_ERR(nftbatch_elems_normalize(&p, NULL, 0, bad_cidr_timeout, 1, &out, &n), EINVAL);
	ASSERT_ERR(nftbatch_elems_normalize(&p, NULL, 0, bad_range, 1, &out, &n), ERANGE);
}

TEST(elem_format)
{
	char buf[96];
	struct nftbatch_elem a = v4("198.51.100.0", 24, 8000, 8100, 0);
	struct nftbatch_elem b = v6("2001:db8::10", 128, 443, 443, 60000);

	nftbatch_elem_format(&a, buf, sizeof(buf));
	EXPECT_STREQ(buf, "198.51.100.0/24 . 8000-8100");
	nftbatch_elem_format(&b, buf, sizeof(buf));
	EXPECT_STREQ(buf, "2001:db8::10 . 443 timeout 60s");
}

/* A representative ruleset: upstream servers of both families, a literal
 * metadata exception, literal CIDRs and resolved addresses. */
static struct nftbatch_elem std_upstreams[2];
static struct nftbatch_elem std_elems[6];

static struct nftbatch_config std_config(void)
{
	std_upstreams[0] = v4("10.201.0.1", 32, 53, 53, 0);
	std_upstreams[1] = v6("2001:db8:53::1", 128, 53, 53, 0);
	std_elems[0] = v4("169.254.169.254", 32, 80, 80, 0);
	std_elems[1] = v4("198.51.100.0", 24, 8000, 8100, 0);
	std_elems[2] = v4("198.51.100.10", 32, 443, 443, 60000);
	std_elems[3] = v4("198.51.100.11", 32, 443, 443, 90000);
	std_elems[4] = v6("2001:db8::", 32, 443, 443, 0);
	std_elems[5] = v6("2001:db8::10", 128, 8443, 8443, 60000);
	return (struct nftbatch_config){ .table = TABLE,
					 .upstreams = std_upstreams,
					 .n_upstreams = 2,
					 .elems = std_elems,
					 .n_elems = 6 };
}

static bool has_desc(const struct nftbatch *b, const char *needle)
{
	for (size_t i = 0; i < b->n_msgs; i++)
		if (strstr(b->msgs[i].desc, needle))
			return true;
	return false;
}

TEST(ruleset_round_trips_through_libnftnl)
{
	struct nftbatch_config cfg = std_config();
	size_t size = nftbatch_buffer_size(cfg.n_elems);
	char *buf = malloc(size);
	struct nftbatch b = { 0 }, parsed = { 0 };
	char err[256] = "";

	ASSERT_NOT_NULL(buf);
	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 100));
	ASSERT_EQ(b.seq_first, 100);
	ASSERT_OK(nftbatch_parse_buf(&parsed, TABLE, b.buf, b.len));
	ASSERT_EQ(parsed.n_rules, b.n_rules);
	ASSERT_EQ(parsed.n_chains, 3);
	ASSERT_EQ(parsed.n_sets, 2);
	if (nftbatch_compare(&b, &parsed, err, sizeof(err)) < 0)
		TAP_FAIL_(1, "compare: %s", err);
	nftbatch_done(&parsed);
	nftbatch_done(&b);
	free(buf);
}

TEST(every_rule_is_present)
{
	static const char *const want[] = {
		"rule blocked#0: limit rate 10/second burst 20 packets log prefix \"code-sandbox blocked: \" group 1053",
		"rule blocked#1: meta l4proto tcp counter reject with tcp reset",
		"rule blocked#2: counter reject with icmpx admin-prohibited",
		"meta skuid != 0 ip saddr 10.201.0.1 udp sport 53 counter jump blocked",
		"meta skuid != 0 ip saddr 10.201.0.1 tcp sport 53 counter jump blocked",
		"meta skuid != 0 ip6 saddr 2001:db8:53::1 udp sport 53 counter jump blocked",
		"meta skuid != 0 ip6 saddr 2001:db8:53::1 tcp sport 53 counter jump blocked",
		"rule output#14: ct state established,related accept",
		"oif \"lo\" ip daddr 127.0.0.1 udp dport 53 accept",
		"oif \"lo\" ip daddr 127.0.0.1 tcp dport 53 accept",
		"oif \"lo\" ip6 daddr ::1 udp dport 53 accept",
		"oif \"lo\" ip6 daddr ::1 tcp dport 53 accept",
		"meta skuid 0 ip daddr 10.201.0.1 udp dport 53 accept",
		"meta skuid 0 ip daddr 10.201.0.1 tcp dport 53 accept",
		"meta skuid 0 ip6 daddr 2001:db8:53::1 udp dport 53 accept",
		"meta skuid 0 ip6 daddr 2001:db8:53::1 tcp dport 53 accept",
		": udp dport 53 counter jump blocked",
		": tcp dport 53 counter jump blocked",
		"oif \"lo\" ip daddr 127.0.0.0/8 accept",
		"oif \"lo\" ip6 daddr ::1 accept",
		"icmpv6 type nd-neighbor-solicit accept",
		"ip daddr 169.254.169.254 tcp dport 80 accept",
		"ip daddr 169.254.0.0/16 counter jump blocked",
		"ip daddr 100.100.100.200 counter jump blocked",
		"ip6 daddr fd00:ec2::254 counter jump blocked",
		"ip6 daddr fe80::/10 counter jump blocked",
		"ip daddr . tcp dport @allow_v4 counter accept",
		"ip6 daddr . tcp dport @allow_v6 counter accept",
		"output#27: counter jump blocked",
		"rule input#0: ct state established,related accept",
		"rule input#1: iif \"lo\" accept",
		"rule input#5: counter",
		"set allow_v4 elements #0-#3 (169.254.169.254 . 80 ... 198.51.100.11 . 443 timeout 90s)",
		"set allow_v6 elements #4-#5",
		"add table inet cs_unit",
		"delete table inet cs_unit",
	};
	struct nftbatch_config cfg = std_config();
	size_t size = nftbatch_buffer_size(cfg.n_elems);
	char *buf = malloc(size);
	struct nftbatch b = { 0 };

	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));
	for (size_t i = 0; i < ELEMENTSOF(want); i++)
		if (!has_desc(&b, want[i]))
			TAP_FAIL_(0, "missing: %s", want[i]);
	/* the exception precedes the block, the block precedes the sets, the
	 * DNS reject precedes the loopback accept and the established accept
	 * (an agent must not ride PID 1's upstream DNS flow in conntrack) */
	const struct nftbatch_msg *m;
	int exc = -1, blk = -1, set = -1, dns = -1, lo = -1, tdns = -1, est = -1, spoof = -1;
	for (size_t i = 0; i < b.n_msgs; i++) {
		m = &b.msgs[i];
		if (strstr(m->desc, "169.254.169.254 tcp dport 80 accept"))
			exc = (int)i;
		if (strstr(m->desc, "169.254.0.0/16 counter jump"))
			blk = (int)i;
		if (strstr(m->desc, "@allow_v4"))
			set = (int)i;
		if (strstr(m->desc, ": udp dport 53 counter jump"))
			dns = (int)i;
		if (strstr(m->desc, ": tcp dport 53 counter jump"))
			tdns = (int)i;
		if (strstr(m->desc, "output#") && strstr(m->desc, "ct state established"))
			est = (int)i;
		if (strstr(m->desc, "meta skuid != 0 ip6 saddr"))
			spoof = (int)i;
		if (strstr(m->desc, "127.0.0.0/8 accept"))
			lo = (int)i;
	}
	EXPECT_TRUE(exc < blk && blk < set && dns < lo);
	EXPECT_TRUE(dns >= 0 && tdns >= 0 && dns < est && tdns < est);
	/* a forged upstream answer is refused before conntrack calls it a reply */
	EXPECT_TRUE(spoof >= 0 && spoof < est && spoof < lo);
	nftbatch_done(&b);
	free(buf);
}

/* A loopback upstream (Docker's embedded DNS at 127.0.0.11, which also
 * listens on a random port) is blocked on every port after PID 1's port-53
 * accept and before the loopback accept; a routed upstream is not. The
 * worst case (every upstream on loopback, every exception) still builds. */
TEST(loopback_upstream_is_blocked_on_every_port)
{
	struct nftbatch_elem ups[NFTBATCH_MAX_UPSTREAMS];
	struct nftbatch_elem exc[NFTBATCH_MAX_EXCEPTIONS];
	struct nftbatch_config cfg = std_config();
	size_t size = nftbatch_buffer_size(cfg.n_elems);
	char *buf = malloc(size);
	struct nftbatch b = { 0 };
	int root = -1, blk = -1, lo = -1, blk6 = -1;

	ASSERT_NOT_NULL(buf);
	ups[0] = v4("127.0.0.11", 32, 53, 53, 0);
	ups[1] = v6("::1", 128, 53, 53, 0);
	ups[2] = std_upstreams[0];
	cfg.upstreams = ups;
	cfg.n_upstreams = 3;
	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));
	for (size_t i = 0; i < b.n_msgs; i++) {
		const char *d = b.msgs[i].desc;
		if (strstr(d, "meta skuid 0 ip daddr 127.0.0.11 udp dport 53 accept"))
			root = (int)i;
		if (strstr(d, ": ip daddr 127.0.0.11 counter jump blocked"))
			blk = (int)i;
		if (strstr(d, ": ip6 daddr ::1 counter jump blocked"))
			blk6 = (int)i;
		if (strstr(d, "127.0.0.0/8 accept"))
			lo = (int)i;
	}
	EXPECT_TRUE(root >= 0 && root < blk && blk < lo && blk6 >= 0 && blk6 < lo);
	EXPECT_FALSE(has_desc(&b, ": ip daddr 10.201.0.1 counter jump blocked"));
	nftbatch_done(&b);

	for (size_t i = 0; i < ELEMENTSOF(ups); i++) {
		char a[32];
		(void)snprintf(a, sizeof(a), "127.0.0.%zu", 11 + i);
		ups[i] = v4(a, 32, 53, 53, 0);
	}
	for (size_t i = 0; i < ELEMENTSOF(exc); i++) {
		char a[32];
		(void)snprintf(a, sizeof(a), "169.254.1.%zu", 1 + i);
		exc[i] = v4(a, 32, 80, 80, 0);
	}
	cfg.n_upstreams = ELEMENTSOF(ups);
	cfg.elems = exc;
	cfg.n_elems = ELEMENTSOF(exc);
	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));
	nftbatch_done(&b);
	free(buf);
}

TEST(sequence_numbers_map_back_to_descriptions)
{
	struct nftbatch_config cfg = std_config();
	size_t size = nftbatch_buffer_size(cfg.n_elems);
	char *buf = malloc(size);
	struct nftbatch b = { 0 };
	const struct nlmsghdr *nlh;
	int n, count = 0;

	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 500));
	nlh = (const struct nlmsghdr *)b.buf;
	n = (int)b.len;
	while (mnl_nlmsg_ok(nlh, n)) {
		const struct nftbatch_msg *m = nftbatch_find_seq(&b, nlh->nlmsg_seq);
		if (nlh->nlmsg_type == NFNL_MSG_BATCH_BEGIN || nlh->nlmsg_type == NFNL_MSG_BATCH_END) {
			EXPECT_TRUE(m == NULL);
		} else {
			ASSERT_NOT_NULL(m);
			EXPECT_TRUE(nlh->nlmsg_flags & NLM_F_ACK);
			EXPECT_EQ((const char *)nlh - b.buf, (intmax_t)m->offset);
			count++;
		}
		nlh = mnl_nlmsg_next(nlh, &n);
	}
	EXPECT_EQ(count, (intmax_t)b.n_msgs);
	/* every seq distinct */
	for (size_t i = 1; i < b.n_msgs; i++)
		EXPECT_TRUE(b.msgs[i].seq > b.msgs[i - 1].seq);
	EXPECT_TRUE(nftbatch_find_seq(&b, 1) == NULL);
	nftbatch_done(&b);
	free(buf);
}

static struct nftbatch_elem *many(size_t n)
{
	struct nftbatch_elem *e = calloc(n, sizeof(*e));
	for (size_t i = 0; i < n; i++) {
		if (i % 2) {
			e[i] = v6("2001:db8::", 128, 443, 443, 60000);
			e[i].addr.v6.s6_addr[14] = (uint8_t)(i >> 8);
			e[i].addr.v6.s6_addr[15] = (uint8_t)i;
		} else {
			e[i] = v4("198.51.0.0", 32, 443, 443, 60000);
			e[i].addr.v4.s_addr = htonl(0xc6330000u + (uint32_t)i);
		}
	}
	return e;
}

TEST(large_element_sets_split_into_bounded_messages)
{
	const size_t N = 5000;
	struct nftbatch_elem *raw = many(N), *elems = NULL;
	struct nftbatch_ports p = { 0 };
	size_t n = 0, size;
	struct nftbatch_config cfg = std_config();
	struct nftbatch b = { 0 }, parsed = { 0 };
	char *buf, err[256] = "";
	size_t n_elem_msgs = 0, total = 0;

	ASSERT_OK(nftbatch_ports_add(&p, 443, 443));
	nftbatch_ports_finish(&p);
	/* normalisation sorts by family: v4 first */
	ASSERT_OK(nftbatch_elems_normalize(&p, NULL, 0, raw, N, &elems, &n));
	ASSERT_EQ(n, N);
	ASSERT_EQ(elems[0].family, AF_INET);
	cfg.elems = elems;
	cfg.n_elems = n;
	size = nftbatch_buffer_size(n);
	buf = malloc(size);
	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));
	for (size_t i = 0; i < b.n_msgs; i++) {
		const struct nftbatch_msg *m = &b.msgs[i];
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(b.buf + m->offset);
		if (m->kind != NFTBATCH_MSG_ELEMS)
			continue;
		n_elem_msgs++;
		total += m->n_elems;
		EXPECT_TRUE(m->n_elems <= NFTBATCH_ELEMS_PER_MSG);
		EXPECT_TRUE(nlh->nlmsg_len <= NFTBATCH_MAX_MSG);
	}
	EXPECT_EQ(total, (intmax_t)N);
	EXPECT_EQ(n_elem_msgs, 2 * ((N / 2 + NFTBATCH_ELEMS_PER_MSG - 1) / NFTBATCH_ELEMS_PER_MSG));
	ASSERT_OK(nftbatch_parse_buf(&parsed, TABLE, b.buf, b.len));
	if (nftbatch_compare(&b, &parsed, err, sizeof(err)) < 0)
		TAP_FAIL_(1, "compare: %s", err);
	nftbatch_done(&parsed);
	nftbatch_done(&b);
	free(buf);
	free(elems);
	free(raw);
}

TEST(too_small_buffer_and_bad_config_fail_cleanly)
{
	struct nftbatch_config cfg = std_config();
	struct nftbatch b = { 0 };
	static char small[2 * NFTBATCH_MAX_MSG];
	char *buf;
	size_t size = nftbatch_buffer_size(cfg.n_elems);
	struct nftbatch_elem ups[NFTBATCH_MAX_UPSTREAMS + 1];

	ASSERT_ERR(nftbatch_build_ruleset(&b, &cfg, small, 100, 1), ENOBUFS);
	ASSERT_NULL(b.msgs);
	/* big enough for the rules, not for 20000 elements */
	struct nftbatch_elem *raw = many(20000);
	cfg.elems = raw;
	cfg.n_elems = 20000;
	ASSERT_ERR(nftbatch_build_ruleset(&b, &cfg, small, sizeof(small), 1), ENOBUFS);
	ASSERT_NULL(b.table);
	cfg = std_config();
	for (size_t i = 0; i < ELEMENTSOF(ups); i++)
		ups[i] = std_upstreams[0];
	cfg.upstreams = ups;
	cfg.n_upstreams = ELEMENTSOF(ups);
	buf = malloc(size);
	ASSERT_ERR(nftbatch_build_ruleset(&b, &cfg, buf, size, 1), EINVAL);
	cfg = std_config();
	cfg.table = "";
	ASSERT_ERR(nftbatch_build_ruleset(&b, &cfg, buf, size, 1), EINVAL);
	free(buf);
	free(raw);
}

TEST(compare_detects_modified_objects)
{
	struct nftbatch_config cfg = std_config();
	size_t size = nftbatch_buffer_size(cfg.n_elems);
	char *buf = malloc(size), err[256];
	struct nftbatch b = { 0 }, parsed = { 0 };

	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));

	/* one expression changed: accept -> drop in the allow_v4 rule */
	ASSERT_OK(nftbatch_parse_buf(&parsed, TABLE, b.buf, b.len));
	for (size_t i = 0; i < parsed.n_rules; i++) {
		struct nftnl_expr_iter *it = nftnl_expr_iter_create(parsed.rules[i]);
		struct nftnl_expr *e, *last = NULL;
		bool lookup = false;
		while ((e = nftnl_expr_iter_next(it))) {
			if (strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "lookup") == 0)
				lookup = true;
			last = e;
		}
		nftnl_expr_iter_destroy(it);
		if (lookup && last)
			nftnl_expr_set_u32(last, NFTNL_EXPR_IMM_VERDICT, NF_DROP);
	}
	ASSERT_ERR(nftbatch_compare(&b, &parsed, err, sizeof(err)), EPROTO);
	EXPECT_TRUE(strstr(err, "rule output#") != NULL);
	nftbatch_done(&parsed);

	/* a rule missing */
	ASSERT_OK(nftbatch_parse_buf(&parsed, TABLE, b.buf, b.len));
	nftnl_rule_free(parsed.rules[--parsed.n_rules]);
	ASSERT_ERR(nftbatch_compare(&b, &parsed, err, sizeof(err)), EPROTO);
	nftbatch_done(&parsed);

	/* set flags changed (timeout support lost) */
	ASSERT_OK(nftbatch_parse_buf(&parsed, TABLE, b.buf, b.len));
	nftnl_set_set_u32(parsed.sets[0], NFTNL_SET_FLAGS, NFT_SET_INTERVAL | NFT_SET_CONCAT);
	ASSERT_ERR(nftbatch_compare(&b, &parsed, err, sizeof(err)), EPROTO);
	EXPECT_TRUE(strstr(err, "set allow_v4") != NULL);
	nftbatch_done(&parsed);

	/* an extra element */
	ASSERT_OK(nftbatch_parse_buf(&parsed, TABLE, b.buf, b.len));
	{
		struct nftnl_set_elem *se = nftnl_set_elem_alloc();
		uint8_t key[8] = { 1, 2, 3, 4, 0, 80, 0, 0 };
		nftnl_set_elem_set(se, NFTNL_SET_ELEM_KEY, key, sizeof(key));
		nftnl_set_elem_set(se, NFTNL_SET_ELEM_KEY_END, key, sizeof(key));
		nftnl_set_elem_add(parsed.sets[0], se);
	}
	ASSERT_ERR(nftbatch_compare(&b, &parsed, err, sizeof(err)), EPROTO);
	nftbatch_done(&parsed);

	/* messages of another table are ignored, so the dump of a ruleset
	 * that has only another table compares as missing */
	ASSERT_OK(nftbatch_parse_buf(&parsed, "other", b.buf, b.len));
	ASSERT_NULL(parsed.table);
	ASSERT_ERR(nftbatch_compare(&b, &parsed, err, sizeof(err)), EPROTO);
	nftbatch_done(&parsed);
	nftbatch_done(&b);
	free(buf);
}

TEST(element_batch_for_admit)
{
	struct nftbatch_elem elems[] = {
		v4("198.51.100.10", 32, 443, 443, 60000),
		v4("198.51.100.11", 32, 443, 443, 60000),
		v4("198.51.100.12", 32, 443, 443, 60000),
		v6("2001:db8::10", 128, 443, 443, 60000),
	};
	char buf[4 * NFTBATCH_MAX_MSG];
	struct nftbatch b = { 0 };
	const struct nftbatch_msg *m;
	const struct nlmsghdr *nlh;
	const struct nlattr *attr, *list = NULL, *third = NULL;
	int k = 0;

	ASSERT_OK(nftbatch_build_elements(&b, TABLE, elems, ELEMENTSOF(elems), buf, sizeof(buf), 7));
	ASSERT_EQ(b.n_msgs, 2);
	m = &b.msgs[0];
	EXPECT_EQ(m->kind, NFTBATCH_MSG_ELEMS);
	EXPECT_EQ(m->n_elems, 3);
	EXPECT_STREQ(b.msgs[1].desc, "set allow_v6 element 2001:db8::10 . 443 timeout 60s");
	nlh = (const struct nlmsghdr *)(b.buf + m->offset);
	EXPECT_EQ(NFNL_MSG_TYPE(nlh->nlmsg_type), NFT_MSG_NEWSETELEM);
	EXPECT_FALSE(nlh->nlmsg_flags & NLM_F_EXCL);
	/* the offset an extended ack would name maps back to the element */
	mnl_attr_for_each(attr, nlh, sizeof(struct nfgenmsg))
		if (mnl_attr_get_type(attr) == NFTA_SET_ELEM_LIST_ELEMENTS)
			list = attr;
	ASSERT_NOT_NULL(list);
	mnl_attr_for_each_nested(attr, list)
		if (k++ == 2)
			third = attr;
	ASSERT_NOT_NULL(third);
	EXPECT_EQ(nftbatch_elem_at_offset(&b, m, (uint32_t)((const char *)third - (const char *)nlh)), 2);
	EXPECT_EQ(nftbatch_elem_at_offset(&b, &b.msgs[1], 0), -ENOENT);
	nftbatch_done(&b);
}

TEST(print_shows_nft_syntax)
{
	struct nftbatch_config cfg = std_config();
	size_t size = nftbatch_buffer_size(cfg.n_elems);
	char *buf = malloc(size), *text = NULL;
	size_t tlen = 0;
	struct nftbatch b = { 0 };
	FILE *f = open_memstream(&text, &tlen);

	ASSERT_OK(nftbatch_build_ruleset(&b, &cfg, buf, size, 1));
	nftbatch_print(&b, f);
	fclose(f);
	EXPECT_TRUE(strstr(text, "table inet " TABLE " {\n") != NULL);
	EXPECT_TRUE(strstr(text, "\tchain output {\n\t\ttype filter hook output priority mangle; policy drop;\n") != NULL);
	EXPECT_TRUE(strstr(text, "\t\tip6 daddr . tcp dport @allow_v6 counter accept\n") != NULL);
	EXPECT_TRUE(strstr(text, "elements = { 169.254.169.254 . 80,") != NULL);
	EXPECT_TRUE(strstr(text, "198.51.100.0/24 . 8000-8100") != NULL);
	nftbatch_done(&b);
	free(text);
	free(buf);
}
