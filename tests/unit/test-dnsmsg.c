/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>

#include "dnsmsg.h"
#include "macros.h"
#include "tap.h"

/* A tiny message writer for building test inputs byte by byte. */
struct tb {
	uint8_t b[DNSMSG_MAX_MSG];
	size_t n;
};

static void tb8(struct tb *t, unsigned v)
{
	t->b[t->n++] = (uint8_t)v;
}

static void tb16(struct tb *t, unsigned v)
{
	tb8(t, v >> 8);
	tb8(t, v);
}

static void tb32(struct tb *t, uint32_t v)
{
	tb16(t, v >> 16);
	tb16(t, v & 0xFFFF);
}

static void tb_header(struct tb *t, unsigned id, unsigned flags, unsigned qd, unsigned an,
		      unsigned ns, unsigned ar)
{
	t->n = 0;
	tb16(t, id);
	tb16(t, flags);
	tb16(t, qd);
	tb16(t, an);
	tb16(t, ns);
	tb16(t, ar);
}

static void tb_name(struct tb *t, const char *text)
{
	struct dnsmsg_name n;

	if (dnsmsg_name_from_text(text, &n) < 0)
		abort();
	memcpy(t->b + t->n, n.wire, n.len);
	t->n += n.len;
}

static void tb_question(struct tb *t, const char *name, unsigned type)
{
	tb_name(t, name);
	tb16(t, type);
	tb16(t, DNSMSG_CLASS_IN);
}

static void tb_opt(struct tb *t, unsigned udp, unsigned version, unsigned ext_rcode)
{
	tb8(t, 0);
	tb16(t, DNSMSG_TYPE_OPT);
	tb16(t, udp);
	tb32(t, (uint32_t)ext_rcode << 24 | (uint32_t)version << 16);
	tb16(t, 0);
}

static void tb_rr_head(struct tb *t, const char *owner, unsigned type, uint32_t ttl, unsigned rdlen)
{
	tb_name(t, owner);
	tb16(t, type);
	tb16(t, DNSMSG_CLASS_IN);
	tb32(t, ttl);
	tb16(t, rdlen);
}

static void tb_a(struct tb *t, const char *owner, uint32_t ttl, const char *addr)
{
	tb_rr_head(t, owner, DNSMSG_TYPE_A, ttl, 4);
	if (inet_pton(AF_INET, addr, t->b + t->n) != 1)
		abort();
	t->n += 4;
}

static void tb_aaaa(struct tb *t, const char *owner, uint32_t ttl, const char *addr)
{
	tb_rr_head(t, owner, DNSMSG_TYPE_AAAA, ttl, 16);
	if (inet_pton(AF_INET6, addr, t->b + t->n) != 1)
		abort();
	t->n += 16;
}

static void tb_cname(struct tb *t, const char *owner, uint32_t ttl, const char *target)
{
	struct dnsmsg_name n;

	if (dnsmsg_name_from_text(target, &n) < 0)
		abort();
	tb_rr_head(t, owner, DNSMSG_TYPE_CNAME, ttl, n.len);
	tb_name(t, target);
}

static struct dnsmsg_name name_of(const char *text)
{
	struct dnsmsg_name n;

	if (dnsmsg_name_from_text(text, &n) < 0)
		abort();
	return n;
}

static const char *addr_text(const struct dnsmsg_addr *a, char *buf)
{
	return inet_ntop(a->family, &a->addr, buf, INET6_ADDRSTRLEN);
}

/* ---- queries ---- */

TEST(query_valid_a)
{
	struct tb t;
	struct dnsmsg_query q;

	tb_header(&t, 0xBEEF, DNSMSG_FLAG_RD, 1, 0, 0, 0);
	tb_question(&t, "Api.Anthropic.COM", DNSMSG_TYPE_A);
	ASSERT_EQ(dnsmsg_parse_query(t.b, t.n, &q), 0);
	EXPECT_EQ(q.id, 0xBEEF);
	EXPECT_TRUE(q.has_question);
	EXPECT_STREQ(q.name, "api.anthropic.com");
	EXPECT_EQ(q.qtype, DNSMSG_TYPE_A);
	EXPECT_EQ(q.qclass, DNSMSG_CLASS_IN);
	EXPECT_FALSE(q.edns);
	EXPECT_EQ(dnsmsg_udp_limit(&q), 512);
	/* The wire name keeps the client's case, to be echoed back. */
	EXPECT_EQ(q.qname.wire[1], 'A');
}

TEST(query_valid_edns)
{
	struct tb t;
	struct dnsmsg_query q;

	tb_header(&t, 1, DNSMSG_FLAG_RD, 1, 0, 0, 1);
	tb_question(&t, "example.com.", DNSMSG_TYPE_AAAA);
	tb_opt(&t, 4096, 0, 0);
	ASSERT_EQ(dnsmsg_parse_query(t.b, t.n, &q), 0);
	EXPECT_TRUE(q.edns);
	EXPECT_EQ(q.edns_udp_size, 4096);
	EXPECT_EQ(dnsmsg_udp_limit(&q), 4096);
	q.edns_udp_size = 65000;
	EXPECT_EQ(dnsmsg_udp_limit(&q), DNSMSG_MAX_UDP);
	q.edns_udp_size = 100;
	EXPECT_EQ(dnsmsg_udp_limit(&q), DNSMSG_MIN_UDP);
}

TEST(query_underscore_and_digits_ok)
{
	struct tb t;
	struct dnsmsg_query q;

	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb_question(&t, "_dmarc.a-1.example", DNSMSG_TYPE_TXT);
	ASSERT_EQ(dnsmsg_parse_query(t.b, t.n, &q), 0);
	EXPECT_STREQ(q.name, "_dmarc.a-1.example");
	EXPECT_EQ(q.qtype, DNSMSG_TYPE_TXT);
}

TEST(query_too_short_or_response_dropped)
{
	struct tb t;
	struct dnsmsg_query q;

	tb_header(&t, 1, 0, 1, 0, 0, 0);
	EXPECT_ERR(dnsmsg_parse_query(t.b, 11, &q), EBADMSG);
	EXPECT_ERR(dnsmsg_parse_query(t.b, 0, &q), EBADMSG);
	EXPECT_ERR(dnsmsg_parse_query(NULL, 12, &q), EBADMSG);
	tb_header(&t, 1, DNSMSG_FLAG_QR, 1, 0, 0, 0);
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	EXPECT_ERR(dnsmsg_parse_query(t.b, t.n, &q), EBADMSG);
}

TEST(query_bad_counts_formerr)
{
	static const unsigned counts[][4] = {
		{0, 0, 0, 0}, {2, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 0}, {1, 0, 0, 2},
	};
	struct tb t;
	struct dnsmsg_query q;

	for (size_t i = 0; i < ELEMENTSOF(counts); i++) {
		tb_header(&t, 7, 0, counts[i][0], counts[i][1], counts[i][2], counts[i][3]);
		tb_question(&t, "example.com", DNSMSG_TYPE_A);
		EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
		EXPECT_EQ(q.id, 7);
	}
	/* TC in a query makes no sense. */
	tb_header(&t, 7, DNSMSG_FLAG_TC, 1, 0, 0, 0);
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
}

TEST(query_opcode_notimp)
{
	struct tb t;
	struct dnsmsg_query q;

	tb_header(&t, 9, 5u << 11, 1, 0, 0, 0); /* UPDATE */
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_NOTIMP);
	EXPECT_EQ(q.id, 9);
	EXPECT_FALSE(q.has_question);
}

TEST(query_truncated_and_trailing)
{
	struct tb t;
	struct dnsmsg_query q;
	size_t full;

	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	full = t.n;
	for (size_t n = DNSMSG_HEADER_SIZE; n < full; n++)
		EXPECT_EQ(dnsmsg_parse_query(t.b, n, &q), DNSMSG_RCODE_FORMERR);
	tb8(&t, 0);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	/* Truncated OPT. */
	tb_header(&t, 1, 0, 1, 0, 0, 1);
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	tb_opt(&t, 1232, 0, 0);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n - 1, &q), DNSMSG_RCODE_FORMERR);
}

TEST(query_compression_loops_rejected)
{
	struct tb t;
	struct dnsmsg_query q;

	/* Pointer to itself. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb16(&t, 0xC00C);
	tb16(&t, 1);
	tb16(&t, 1);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	/* Label then a pointer back to the label: a loop. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb8(&t, 1);
	tb8(&t, 'a');
	tb16(&t, 0xC00C);
	tb16(&t, 1);
	tb16(&t, 1);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	/* Pointer into the header. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb16(&t, 0xC002);
	tb16(&t, 1);
	tb16(&t, 1);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	/* Forward pointer. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb16(&t, 0xC012);
	tb16(&t, 1);
	tb16(&t, 1);
	tb8(&t, 0);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	/* Pointer cut in half. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb8(&t, 0xC0);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
}

TEST(query_label_types_and_lengths)
{
	struct tb t;
	struct dnsmsg_query q;
	char name[400];

	/* 0x40 and 0x80 label types. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb8(&t, 0x41);
	memset(t.b + t.n, 'a', 0x41);
	t.n += 0x41;
	tb8(&t, 0);
	tb16(&t, 1);
	tb16(&t, 1);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	t.b[DNSMSG_HEADER_SIZE] = 0x81;
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);

	/* 253 text characters is the limit (four labels 63+63+63+61). */
	memset(name, 'a', sizeof(name));
	name[63] = name[127] = name[191] = '.';
	name[253] = '\0';
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb_question(&t, name, DNSMSG_TYPE_A);
	ASSERT_EQ(dnsmsg_parse_query(t.b, t.n, &q), 0);
	EXPECT_EQ(strlen(q.name), 253);
	/* One more label of one byte passes 255 wire bytes. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 4; i++) {
		tb8(&t, 62);
		memset(t.b + t.n, 'b', 62);
		t.n += 62;
	}
	tb8(&t, 3);
	memcpy(t.b + t.n, "abc", 3);
	t.n += 3;
	tb8(&t, 0);
	tb16(&t, 1);
	tb16(&t, 1);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	/* Text limits of the helper. */
	memset(name, 'a', 254);
	name[254] = '\0';
	EXPECT_ERR(dnsmsg_name_from_text(name, &q.qname), EINVAL);
	memset(name, 'a', 64);
	name[64] = '\0';
	EXPECT_ERR(dnsmsg_name_from_text(name, &q.qname), EINVAL);
	EXPECT_ERR(dnsmsg_name_from_text("a..b", &q.qname), EINVAL);
}

TEST(query_non_hostname_bytes_refused)
{
	static const char *const labels[] = {"a.b", "a b", "a\\b", "\x01", "\xc3\xa9t\xc3\xa9", "a*"};
	struct tb t;
	struct dnsmsg_query q;

	for (size_t i = 0; i < ELEMENTSOF(labels); i++) {
		size_t l = strlen(labels[i]);

		tb_header(&t, 1, 0, 1, 0, 0, 0);
		tb8(&t, (unsigned)l);
		memcpy(t.b + t.n, labels[i], l);
		t.n += l;
		tb_name(&t, "anthropic.com");
		tb16(&t, 1);
		tb16(&t, 1);
		EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_REFUSED);
		EXPECT_TRUE(q.has_question);
	}
	/* An embedded NUL byte too. */
	tb_header(&t, 1, 0, 1, 0, 0, 0);
	tb8(&t, 3);
	tb8(&t, 'a');
	tb8(&t, 0);
	tb8(&t, 'b');
	tb_name(&t, "com");
	tb16(&t, 1);
	tb16(&t, 1);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_REFUSED);
}

TEST(query_edns_checks)
{
	struct tb t;
	struct dnsmsg_query q;

	tb_header(&t, 1, 0, 1, 0, 0, 1);
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	tb_opt(&t, 1232, 1, 0);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_BADVERS);
	EXPECT_TRUE(q.edns);
	/* OPT with a non-root owner. */
	tb_header(&t, 1, 0, 1, 0, 0, 1);
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	tb_rr_head(&t, "x", DNSMSG_TYPE_OPT, 0, 0);
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
	/* Another record type in the additional section (TSIG-like). */
	tb_header(&t, 1, 0, 1, 0, 0, 1);
	tb_question(&t, "example.com", DNSMSG_TYPE_A);
	tb_a(&t, "example.com", 5, "198.51.100.1");
	EXPECT_EQ(dnsmsg_parse_query(t.b, t.n, &q), DNSMSG_RCODE_FORMERR);
}

/* ---- responses built by the gate ---- */

static struct dnsmsg_query query_for(const char *name, unsigned type, bool edns)
{
	struct tb t;
	struct dnsmsg_query q;

	tb_header(&t, 0x1234, DNSMSG_FLAG_RD | DNSMSG_FLAG_CD, 1, 0, 0, edns ? 1 : 0);
	tb_question(&t, name, type);
	if (edns)
		tb_opt(&t, 1232, 0, 0);
	if (dnsmsg_parse_query(t.b, t.n, &q) != 0)
		abort();
	return q;
}

TEST(build_refused_echoes_id_and_question)
{
	struct dnsmsg_query q = query_for("Blocked.Test", DNSMSG_TYPE_A, false);
	struct dnsmsg_answer a;
	uint8_t buf[512];
	size_t n;

	ASSERT_EQ(dnsmsg_build_response(&q, DNSMSG_RCODE_REFUSED, NULL, 0, 512, buf, sizeof(buf), &n), 0);
	ASSERT_EQ(n, DNSMSG_HEADER_SIZE + q.qname.len + 4);
	EXPECT_EQ(buf[0], 0x12);
	EXPECT_EQ(buf[1], 0x34);
	EXPECT_EQ(buf[2] & 0x80, 0x80);          /* QR */
	EXPECT_EQ(buf[2] & 0x01, 0x01);          /* RD echoed */
	EXPECT_EQ(buf[3] & 0x10, 0x10);          /* CD echoed */
	EXPECT_EQ(buf[3] & 0x0F, DNSMSG_RCODE_REFUSED);
	EXPECT_EQ(buf[5], 1);                    /* one question */
	EXPECT_EQ(buf[7] | buf[9] | buf[11], 0); /* nothing else */
	EXPECT_TRUE(memcmp(buf + 12, q.qname.wire, q.qname.len) == 0);
	/* It parses as a response to that question with no addresses. */
	ASSERT_EQ(dnsmsg_parse_answer(buf, n, &q.qname, DNSMSG_TYPE_A, &a), 0);
	EXPECT_EQ(a.rcode, DNSMSG_RCODE_REFUSED);
	EXPECT_EQ(a.n_addrs, 0);
}

TEST(build_servfail_formerr_with_edns)
{
	struct dnsmsg_query q = query_for("example.com", DNSMSG_TYPE_AAAA, true);
	struct dnsmsg_answer a;
	uint8_t buf[512];
	size_t n;

	ASSERT_EQ(dnsmsg_build_response(&q, DNSMSG_RCODE_SERVFAIL, NULL, 0, 512, buf, sizeof(buf), &n), 0);
	EXPECT_EQ(buf[11], 1); /* OPT */
	ASSERT_EQ(dnsmsg_parse_answer(buf, n, &q.qname, DNSMSG_TYPE_AAAA, &a), 0);
	EXPECT_EQ(a.rcode, DNSMSG_RCODE_SERVFAIL);
	ASSERT_EQ(dnsmsg_build_response(&q, DNSMSG_RCODE_BADVERS, NULL, 0, 512, buf, sizeof(buf), &n), 0);
	ASSERT_EQ(dnsmsg_parse_answer(buf, n, &q.qname, DNSMSG_TYPE_AAAA, &a), 0);
	EXPECT_EQ(a.rcode, DNSMSG_RCODE_BADVERS);
	q.edns = false;
	EXPECT_ERR(dnsmsg_build_response(&q, DNSMSG_RCODE_BADVERS, NULL, 0, 512, buf, sizeof(buf), &n),
		   EINVAL);
	q.has_question = false;
	ASSERT_EQ(dnsmsg_build_response(&q, DNSMSG_RCODE_FORMERR, NULL, 0, 512, buf, sizeof(buf), &n), 0);
	EXPECT_EQ(n, DNSMSG_HEADER_SIZE);
	EXPECT_ERR(dnsmsg_build_response(&q, DNSMSG_RCODE_FORMERR, NULL, 0, 512, buf, 11, &n), ENOBUFS);
}

TEST(build_query_round_trip)
{
	struct dnsmsg_name qn = name_of("www.example.com");
	struct dnsmsg_query q;
	uint8_t buf[512];
	size_t n;

	ASSERT_EQ(dnsmsg_build_query(77, &qn, DNSMSG_TYPE_AAAA, true, buf, sizeof(buf), &n), 0);
	ASSERT_EQ(dnsmsg_parse_query(buf, n, &q), 0);
	EXPECT_EQ(q.id, 77);
	EXPECT_STREQ(q.name, "www.example.com");
	EXPECT_EQ(q.qtype, DNSMSG_TYPE_AAAA);
	EXPECT_TRUE(q.edns);
	EXPECT_EQ(q.edns_udp_size, DNSMSG_EDNS_UDP_SIZE);
	EXPECT_ERR(dnsmsg_build_query(77, &qn, DNSMSG_TYPE_A, true, buf, 20, &n), ENOBUFS);
}

/* ---- upstream answers ---- */

TEST(answer_simple_a_with_ttls)
{
	struct dnsmsg_name qn = name_of("api.example.com");
	struct dnsmsg_answer a;
	struct tb t;
	char s[INET6_ADDRSTRLEN];

	tb_header(&t, 5, DNSMSG_FLAG_QR | DNSMSG_FLAG_RD | DNSMSG_FLAG_RA, 1, 2, 0, 0);
	tb_question(&t, "api.example.com", DNSMSG_TYPE_A);
	tb_a(&t, "API.example.com", 300, "198.51.100.10");
	tb_a(&t, "api.example.com", 0x80000001u, "198.51.100.11");
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), 0);
	EXPECT_EQ(a.rcode, 0);
	EXPECT_EQ(a.n_chain, 0);
	ASSERT_EQ(a.n_addrs, 2);
	EXPECT_EQ(a.addrs[0].family, AF_INET);
	EXPECT_STREQ(addr_text(&a.addrs[0], s), "198.51.100.10");
	EXPECT_EQ(a.addrs[0].ttl, 300);
	EXPECT_STREQ(addr_text(&a.addrs[1], s), "198.51.100.11");
	EXPECT_EQ(a.addrs[1].ttl, 0); /* top bit set reads as 0 */
}

TEST(answer_aaaa_ignores_other_types)
{
	struct dnsmsg_name qn = name_of("v6.example.com");
	struct dnsmsg_answer a;
	struct tb t;
	char s[INET6_ADDRSTRLEN];

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 2, 0, 0);
	tb_question(&t, "v6.example.com", DNSMSG_TYPE_AAAA);
	tb_a(&t, "v6.example.com", 60, "198.51.100.10");
	tb_aaaa(&t, "v6.example.com", 60, "2001:db8::10");
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_AAAA, &a), 0);
	ASSERT_EQ(a.n_addrs, 1);
	EXPECT_EQ(a.addrs[0].family, AF_INET6);
	EXPECT_STREQ(addr_text(&a.addrs[0], s), "2001:db8::10");
}

TEST(answer_cname_chain_and_unrelated_records)
{
	struct dnsmsg_name qn = name_of("api.example.com");
	struct dnsmsg_answer a;
	struct tb t;
	char s[INET6_ADDRSTRLEN], txt[300];

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 6, 1, 1);
	tb_question(&t, "api.example.com", DNSMSG_TYPE_A);
	tb_a(&t, "evil.example.net", 60, "198.51.100.66"); /* unrelated: ignored */
	tb_cname(&t, "api.example.com", 100, "edge.cdn.example");
	tb_a(&t, "api.example.com", 60, "198.51.100.67"); /* beside a CNAME: not at the chain's end */
	tb_cname(&t, "edge.cdn.example", 50, "pop1.cdn.example");
	tb_a(&t, "pop1.cdn.example", 20, "198.51.100.30");
	tb_a(&t, "pop1.cdn.example", 20, "198.51.100.31");
	tb_rr_head(&t, "example.com", DNSMSG_TYPE_NS, 60, 2);
	tb16(&t, 0xC00C);
	tb_a(&t, "ns.example.com", 60, "198.51.100.68"); /* glue: ignored */
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), 0);
	ASSERT_EQ(a.n_chain, 2);
	EXPECT_STREQ(dnsmsg_name_to_text(&a.chain[0].target, txt, sizeof(txt)), "edge.cdn.example");
	EXPECT_EQ(a.chain[0].ttl, 100);
	EXPECT_STREQ(dnsmsg_name_to_text(&a.chain[1].owner, txt, sizeof(txt)), "edge.cdn.example");
	EXPECT_STREQ(dnsmsg_name_to_text(&a.addr_owner, txt, sizeof(txt)), "pop1.cdn.example");
	ASSERT_EQ(a.n_addrs, 2);
	EXPECT_STREQ(addr_text(&a.addrs[0], s), "198.51.100.30");
	EXPECT_STREQ(addr_text(&a.addrs[1], s), "198.51.100.31");
	EXPECT_EQ(a.addrs[0].ttl, 20);
}

TEST(answer_compressed_names)
{
	struct dnsmsg_name qn = name_of("www.example.com");
	struct dnsmsg_answer a;
	struct tb t;
	size_t target_off;

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 2, 0, 0);
	tb_question(&t, "www.example.com", DNSMSG_TYPE_A);
	/* www.example.com CNAME cdn.<ptr example.com> */
	tb16(&t, 0xC00C);
	tb16(&t, DNSMSG_TYPE_CNAME);
	tb16(&t, 1);
	tb32(&t, 10);
	tb16(&t, 6);
	target_off = t.n;
	tb8(&t, 3);
	memcpy(t.b + t.n, "cdn", 3);
	t.n += 3;
	tb16(&t, 0xC010); /* "example.com" inside the question */
	tb16(&t, (unsigned)(0xC000 | target_off));
	tb16(&t, DNSMSG_TYPE_A);
	tb16(&t, 1);
	tb32(&t, 10);
	tb16(&t, 4);
	tb32(&t, 0xC6336414); /* 198.51.100.20 */
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), 0);
	EXPECT_EQ(a.n_chain, 1);
	ASSERT_EQ(a.n_addrs, 1);
	EXPECT_EQ(ntohl(a.addrs[0].addr.v4.s_addr), 0xC6336414u);
}

TEST(answer_cname_loops_and_long_chains)
{
	struct dnsmsg_name qn = name_of("a.example");
	struct dnsmsg_answer a;
	struct tb t;
	char owner[32], target[32];

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 2, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_cname(&t, "a.example", 10, "b.example");
	tb_cname(&t, "b.example", 10, "a.example");
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), ELOOP);

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 3, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_cname(&t, "a.example", 10, "b.example");
	tb_cname(&t, "b.example", 10, "c.example");
	tb_cname(&t, "c.example", 10, "b.example");
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), ELOOP);

	/* A self-loop. */
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_cname(&t, "a.example", 10, "a.example");
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), ELOOP);

	/* The longest chain accepted, and one more. */
	for (unsigned len = DNSMSG_MAX_CNAME_CHAIN; len <= DNSMSG_MAX_CNAME_CHAIN + 1; len++) {
		tb_header(&t, 5, DNSMSG_FLAG_QR, 1, len + 1, 0, 0);
		tb_question(&t, "n0.example", DNSMSG_TYPE_A);
		for (unsigned i = 0; i < len; i++) {
			(void)snprintf(owner, sizeof(owner), "n%u.example", i);
			(void)snprintf(target, sizeof(target), "n%u.example", i + 1);
			tb_cname(&t, owner, 10, target);
		}
		tb_a(&t, target, 10, "198.51.100.9");
		qn = name_of("n0.example");
		if (len == DNSMSG_MAX_CNAME_CHAIN) {
			ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), 0);
			EXPECT_EQ(a.n_chain, DNSMSG_MAX_CNAME_CHAIN);
			EXPECT_EQ(a.n_addrs, 1);
		} else {
			EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), ELOOP);
		}
	}
}

TEST(answer_cname_query_type)
{
	struct dnsmsg_name qn = name_of("a.example");
	struct dnsmsg_answer a;
	struct tb t;

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 2, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_CNAME);
	tb_cname(&t, "a.example", 10, "b.example");
	tb_cname(&t, "b.example", 10, "c.example");
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_CNAME, &a), 0);
	EXPECT_EQ(a.n_chain, 1);
	EXPECT_EQ(a.n_addrs, 0);
}

TEST(answer_wrong_question_or_not_response)
{
	struct dnsmsg_name qn = name_of("a.example");
	struct dnsmsg_answer a;
	struct tb t;

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1, 0, 0);
	tb_question(&t, "b.example", DNSMSG_TYPE_A);
	tb_a(&t, "b.example", 10, "198.51.100.9");
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EPROTO);
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_AAAA);
	tb_a(&t, "a.example", 10, "198.51.100.9");
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EPROTO);
	tb_header(&t, 5, 0, 1, 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_a(&t, "a.example", 10, "198.51.100.9");
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EPROTO);
	tb_header(&t, 5, DNSMSG_FLAG_QR, 0, 0, 0, 0);
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EPROTO);
}

TEST(answer_malformed)
{
	struct dnsmsg_name qn = name_of("a.example");
	struct dnsmsg_answer a;
	struct tb t;
	size_t full;

	/* A record with a 5-byte rdata. */
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_rr_head(&t, "a.example", DNSMSG_TYPE_A, 10, 5);
	tb32(&t, 1);
	tb8(&t, 1);
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EBADMSG);
	/* AAAA with 4 bytes. */
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_AAAA);
	tb_rr_head(&t, "a.example", DNSMSG_TYPE_AAAA, 10, 4);
	tb32(&t, 1);
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_AAAA, &a), EBADMSG);
	/* CNAME whose name overruns its rdata. */
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_rr_head(&t, "a.example", DNSMSG_TYPE_CNAME, 10, 3);
	tb_name(&t, "b.example");
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EBADMSG);
	/* Every truncation of a good answer, and a trailing byte. */
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 2, 0, 1);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_cname(&t, "a.example", 10, "b.example");
	tb_a(&t, "b.example", 10, "198.51.100.9");
	tb_opt(&t, 1232, 0, 0);
	full = t.n;
	ASSERT_EQ(dnsmsg_parse_answer(t.b, full, &qn, DNSMSG_TYPE_A, &a), 0);
	for (size_t n = 0; n < full; n++)
		EXPECT_TRUE(dnsmsg_parse_answer(t.b, n, &qn, DNSMSG_TYPE_A, &a) < 0);
	tb8(&t, 0);
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EBADMSG);
	/* OPT in the answer section, and two OPTs. */
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_opt(&t, 1232, 0, 0);
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EBADMSG);
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 0, 0, 2);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_opt(&t, 1232, 0, 0);
	tb_opt(&t, 1232, 0, 0);
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), EBADMSG);
	/* Too many answer records. */
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, DNSMSG_MAX_ANSWER_RRS + 1, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	EXPECT_ERR(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), E2BIG);
}

TEST(answer_rcodes)
{
	struct dnsmsg_name qn = name_of("a.example");
	struct dnsmsg_answer a;
	struct tb t;

	tb_header(&t, 5, DNSMSG_FLAG_QR | DNSMSG_RCODE_NXDOMAIN, 1, 0, 0, 0);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), 0);
	EXPECT_EQ(a.rcode, DNSMSG_RCODE_NXDOMAIN);
	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 0, 0, 1);
	tb_question(&t, "a.example", DNSMSG_TYPE_A);
	tb_opt(&t, 1232, 0, 1);
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), 0);
	EXPECT_EQ(a.rcode, DNSMSG_RCODE_BADVERS);
}

TEST(answer_address_cap)
{
	struct dnsmsg_name qn = name_of("many.example");
	struct dnsmsg_answer a;
	struct tb t;
	char addr[32];

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, DNSMSG_MAX_ADDRS + 5, 0, 0);
	tb_question(&t, "many.example", DNSMSG_TYPE_A);
	for (unsigned i = 0; i < DNSMSG_MAX_ADDRS + 5; i++) {
		(void)snprintf(addr, sizeof(addr), "198.51.100.%u", i + 1);
		tb_a(&t, "many.example", 10, addr);
	}
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &qn, DNSMSG_TYPE_A, &a), 0);
	EXPECT_EQ(a.n_addrs, DNSMSG_MAX_ADDRS);
	EXPECT_EQ(a.n_addrs_dropped, 5);
}

TEST(build_answer_round_trip_caps_ttl_and_truncates)
{
	struct dnsmsg_query q = query_for("API.example.com", DNSMSG_TYPE_A, false);
	struct dnsmsg_answer a, back;
	struct tb t;
	uint8_t buf[DNSMSG_MAX_MSG];
	size_t n;
	char addr[32];

	tb_header(&t, 5, DNSMSG_FLAG_QR, 1, 1 + DNSMSG_MAX_ADDRS, 0, 0);
	tb_question(&t, "api.example.com", DNSMSG_TYPE_A);
	tb_cname(&t, "api.example.com", 7200, "a-very-long-label-for-the-edge-node.cdn.example");
	for (unsigned i = 0; i < DNSMSG_MAX_ADDRS; i++) {
		(void)snprintf(addr, sizeof(addr), "198.51.100.%u", i + 1);
		tb_a(&t, "a-very-long-label-for-the-edge-node.cdn.example", 5000, addr);
	}
	ASSERT_EQ(dnsmsg_parse_answer(t.b, t.n, &q.qname, DNSMSG_TYPE_A, &a), 0);
	ASSERT_EQ(a.n_addrs, DNSMSG_MAX_ADDRS);

	ASSERT_EQ(dnsmsg_build_response(&q, 0, &a, 3600, DNSMSG_MAX_MSG, buf, sizeof(buf), &n), 0);
	/* Owner names are compressed: far smaller than uncompressed. */
	EXPECT_TRUE(n < 12 + 21 + 60 + DNSMSG_MAX_ADDRS * 16 + 100);
	ASSERT_EQ(dnsmsg_parse_answer(buf, n, &q.qname, DNSMSG_TYPE_A, &back), 0);
	EXPECT_EQ(buf[0], 0x12);
	EXPECT_EQ(buf[12 + 1], 'A'); /* the client's case echoed */
	ASSERT_EQ(back.n_chain, 1);
	EXPECT_EQ(back.chain[0].ttl, 3600);
	ASSERT_EQ(back.n_addrs, DNSMSG_MAX_ADDRS);
	for (size_t i = 0; i < back.n_addrs; i++) {
		EXPECT_EQ(back.addrs[i].addr.v4.s_addr, a.addrs[i].addr.v4.s_addr);
		EXPECT_EQ(back.addrs[i].ttl, 3600);
	}
	/* Over 512 bytes for a client without EDNS: TC, no records. */
	a.n_chain = 0;
	a.addr_owner = q.qname;
	ASSERT_EQ(dnsmsg_build_response(&q, 0, &a, 3600, 100, buf, sizeof(buf), &n), 0);
	EXPECT_EQ(buf[2] & 0x02, 0x02);
	EXPECT_EQ(buf[7], 0);
	ASSERT_EQ(dnsmsg_build_response(&q, 0, &a, 3600, 512, buf, sizeof(buf), &n), 0);
	EXPECT_EQ(buf[2] & 0x02, 0x02); /* 12 + 21 + 32 * 16 > 512 */
	a.n_addrs = 29;
	ASSERT_EQ(dnsmsg_build_response(&q, 0, &a, 3600, 512, buf, sizeof(buf), &n), 0);
	EXPECT_EQ(buf[2] & 0x02, 0); /* 12 + 21 + 29 * 16 = 497 fits */
	EXPECT_EQ(n, 497);
	EXPECT_EQ(buf[7], 29);
}

TEST(build_answer_aaaa_with_edns)
{
	struct dnsmsg_query q = query_for("v6.example", DNSMSG_TYPE_AAAA, true);
	struct dnsmsg_answer a = {0}, back;
	uint8_t buf[1232];
	size_t n;

	a.addr_owner = q.qname;
	a.n_addrs = 1;
	a.addrs[0].family = AF_INET6;
	a.addrs[0].ttl = 30;
	ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::10", &a.addrs[0].addr.v6), 1);
	ASSERT_EQ(dnsmsg_build_response(&q, 0, &a, 3600, dnsmsg_udp_limit(&q), buf, sizeof(buf), &n), 0);
	ASSERT_EQ(dnsmsg_parse_answer(buf, n, &q.qname, DNSMSG_TYPE_AAAA, &back), 0);
	ASSERT_EQ(back.n_addrs, 1);
	EXPECT_EQ(back.addrs[0].ttl, 30);
	EXPECT_TRUE(memcmp(&back.addrs[0].addr.v6, &a.addrs[0].addr.v6, 16) == 0);
}

/* ---- helpers ---- */

TEST(tcp_framing)
{
	uint8_t b[4] = {0};
	size_t len = 0;

	EXPECT_EQ(dnsmsg_tcp_frame(b, 0, &len), 0);
	EXPECT_EQ(dnsmsg_tcp_frame(b, 1, &len), 0);
	dnsmsg_tcp_put_length(b, 11);
	EXPECT_ERR(dnsmsg_tcp_frame(b, 2, &len), EBADMSG);
	dnsmsg_tcp_put_length(b, 300);
	EXPECT_EQ(b[0], 1);
	EXPECT_EQ(b[1], 44);
	EXPECT_EQ(dnsmsg_tcp_frame(b, 4, &len), 0);
	{
		uint8_t big[302] = {1, 44};

		EXPECT_EQ(dnsmsg_tcp_frame(big, 301, &len), 0);
		EXPECT_EQ(dnsmsg_tcp_frame(big, 302, &len), 1);
		EXPECT_EQ(len, 300);
	}
}

TEST(name_text_forms)
{
	struct dnsmsg_name n;
	char out[300];

	ASSERT_EQ(dnsmsg_name_from_text("WWW.Example.com.", &n), 0);
	EXPECT_EQ(n.len, 17);
	EXPECT_STREQ(dnsmsg_name_to_text(&n, out, sizeof(out)), "www.example.com");
	EXPECT_STREQ(dnsmsg_name_to_text(&n, out, 4), "www");
	ASSERT_EQ(dnsmsg_name_from_text("", &n), 0);
	EXPECT_STREQ(dnsmsg_name_to_text(&n, out, sizeof(out)), ".");
	n.len = 5;
	memcpy(n.wire, "\x03" "a.\x01" "\0", 5);
	EXPECT_STREQ(dnsmsg_name_to_text(&n, out, sizeof(out)), "a\\046\\001");
	EXPECT_TRUE(dnsmsg_name_equal(&(struct dnsmsg_name){3, {1, 'A', 0}},
				      &(struct dnsmsg_name){3, {1, 'a', 0}}));
	EXPECT_FALSE(dnsmsg_name_equal(&(struct dnsmsg_name){3, {1, 'b', 0}},
				       &(struct dnsmsg_name){3, {1, 'a', 0}}));
}
