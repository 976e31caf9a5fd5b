/* SPDX-License-Identifier: MIT */
/* DNS messages for the DNS gate: strict parsing of the agent's queries and of
 * upstream answers, and building of the gate's own queries and responses.
 * Pure code; malformed input is an error code, never a crash (fuzzed by
 * tests/fuzz/fuzz-dnsmsg.c).
 *
 * Why our own parser and not c-ares's ares_parse_a_reply(): the gate must
 * validate the whole message (every section, every name, compression
 * pointers, trailing bytes) before acting on it, must follow the CNAME chain
 * from the question name only (an answer may carry unrelated records that
 * must not be admitted), and rebuilds the response it hands to the client
 * from what it validated, so one parser does all of it.
 *
 * Names are kept in uncompressed wire form (struct dnsmsg_name) and compared
 * ASCII-case-insensitively; queries also get a lowercase text form for
 * allowlist matching, restricted to the hostname alphabet (letters, digits,
 * '-', '_') so that the text the allowlist sees is exactly the name the
 * upstream resolves (a label holding a '.' or a NUL would make the two
 * differ). */
#ifndef CS_DNSMSG_H
#define CS_DNSMSG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNSMSG_HEADER_SIZE 12
#define DNSMSG_MAX_NAME 253      /* text, without the trailing dot */
#define DNSMSG_MAX_WIRE_NAME 255 /* wire form, with the root label */
#define DNSMSG_MAX_LABEL 63
#define DNSMSG_MAX_MSG 65535
#define DNSMSG_MIN_UDP 512      /* what a client without EDNS accepts */
#define DNSMSG_MAX_UDP 4096     /* the most the gate sends over UDP */
#define DNSMSG_EDNS_UDP_SIZE 1232 /* what the gate advertises (DNS flag day 2020) */
#define DNSMSG_MAX_POINTER_HOPS 64
#define DNSMSG_MAX_CNAME_CHAIN 8 /* CNAMEs followed from the question name */
#define DNSMSG_MAX_ADDRS 32      /* addresses taken from one answer; the rest is dropped */
#define DNSMSG_MAX_ANSWER_RRS 128

enum {
	DNSMSG_TYPE_A = 1,
	DNSMSG_TYPE_NS = 2,
	DNSMSG_TYPE_CNAME = 5,
	DNSMSG_TYPE_SOA = 6,
	DNSMSG_TYPE_PTR = 12,
	DNSMSG_TYPE_MX = 15,
	DNSMSG_TYPE_TXT = 16,
	DNSMSG_TYPE_AAAA = 28,
	DNSMSG_TYPE_OPT = 41,
	DNSMSG_TYPE_SVCB = 64,
	DNSMSG_TYPE_HTTPS = 65,
	DNSMSG_TYPE_ANY = 255,
	DNSMSG_CLASS_IN = 1,
};

enum {
	DNSMSG_RCODE_NOERROR = 0,
	DNSMSG_RCODE_FORMERR = 1,
	DNSMSG_RCODE_SERVFAIL = 2,
	DNSMSG_RCODE_NXDOMAIN = 3,
	DNSMSG_RCODE_NOTIMP = 4,
	DNSMSG_RCODE_REFUSED = 5,
	DNSMSG_RCODE_BADVERS = 16, /* extended, only with EDNS */
};

#define DNSMSG_FLAG_QR 0x8000u
#define DNSMSG_FLAG_AA 0x0400u
#define DNSMSG_FLAG_TC 0x0200u
#define DNSMSG_FLAG_RD 0x0100u
#define DNSMSG_FLAG_RA 0x0080u
#define DNSMSG_FLAG_AD 0x0020u
#define DNSMSG_FLAG_CD 0x0010u

/* A name in uncompressed wire form: length-prefixed labels ending with the
 * root label (len >= 1, wire[len - 1] == 0). */
struct dnsmsg_name {
	uint8_t len;
	uint8_t wire[DNSMSG_MAX_WIRE_NAME];
};

struct dnsmsg_query {
	uint16_t id;
	uint16_t flags;
	bool has_question;
	struct dnsmsg_name qname;       /* as received: echoed back, case preserved */
	char name[DNSMSG_MAX_NAME + 1]; /* lowercase text, no trailing dot; "" = root */
	uint16_t qtype, qclass;
	bool edns;
	uint8_t edns_version;
	uint16_t edns_udp_size; /* as advertised (may be < 512: treated as 512) */
};

struct dnsmsg_addr {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint32_t ttl; /* seconds; RFC 2181: a TTL with the top bit set reads as 0 */
};

struct dnsmsg_cname {
	struct dnsmsg_name owner, target;
	uint32_t ttl;
};

/* What an upstream answer says about the question, and nothing else. */
struct dnsmsg_answer {
	uint16_t flags;
	unsigned rcode; /* with the EDNS extended bits */
	struct dnsmsg_cname chain[DNSMSG_MAX_CNAME_CHAIN];
	size_t n_chain;
	struct dnsmsg_name addr_owner; /* the end of the chain: owner of addrs */
	struct dnsmsg_addr addrs[DNSMSG_MAX_ADDRS];
	size_t n_addrs;
	size_t n_addrs_dropped; /* beyond DNSMSG_MAX_ADDRS */
};

/* Parses a query received from a client. Returns
 *   0         a well-formed standard query for one question: *ret filled;
 *   > 0       an rcode to answer with at once (FORMERR, NOTIMP, REFUSED,
 *             BADVERS): *ret holds the id, flags and, when has_question,
 *             the question, so dnsmsg_build_response() can reply;
 *   -EBADMSG  too short to carry a header or a response (QR set): drop it,
 *             no reply (replying to responses would let two servers loop).
 * The name must use the hostname alphabet, else REFUSED. */
int dnsmsg_parse_query(const uint8_t *msg, size_t len, struct dnsmsg_query *ret);

/* Parses and validates an upstream response to the question (qname, qtype,
 * class IN): every section, name and record is checked, the question must
 * match, and the CNAME chain is followed from qname (at most
 * DNSMSG_MAX_CNAME_CHAIN links); the addresses of type qtype (A or AAAA)
 * owned by the end of the chain are collected. Records not on the chain are
 * ignored. Returns 0, -EBADMSG (malformed), -EPROTO (not a response, or to
 * another question), -ELOOP (CNAME loop or chain too long), -E2BIG (more
 * than DNSMSG_MAX_ANSWER_RRS answer records). *ret untouched on failure. */
int dnsmsg_parse_answer(const uint8_t *msg, size_t len, const struct dnsmsg_name *qname,
			uint16_t qtype, struct dnsmsg_answer *ret);

/* Builds the gate's query: id, RD, one question, and (edns) an OPT record
 * advertising DNSMSG_EDNS_UDP_SIZE. Returns 0, -ENOBUFS. */
int dnsmsg_build_query(uint16_t id, const struct dnsmsg_name *qname, uint16_t qtype, bool edns,
		       uint8_t *buf, size_t bufsize, size_t *ret_len);

/* Builds the response to q with rcode and, when answer is not NULL, its
 * chain and addresses (TTLs capped at max_ttl). The header echoes id, opcode,
 * RD and CD; the question is echoed when q->has_question; an OPT record is
 * added when the query had one. When the whole does not fit in max_size, the
 * records are left out and TC is set (the client retries over TCP).
 * Returns 0, -EINVAL (rcode needs EDNS the query lacked, or > 4095),
 * -ENOBUFS (not even the header fits). */
int dnsmsg_build_response(const struct dnsmsg_query *q, unsigned rcode,
			  const struct dnsmsg_answer *answer, uint32_t max_ttl, size_t max_size,
			  uint8_t *buf, size_t bufsize, size_t *ret_len);

/* The largest response the client of q accepts over UDP:
 * its EDNS size clamped to [DNSMSG_MIN_UDP, DNSMSG_MAX_UDP], else 512. */
size_t dnsmsg_udp_limit(const struct dnsmsg_query *q);

/* DNS over TCP frames each message with a 2-byte big-endian length.
 * dnsmsg_tcp_frame() looks at the start of a stream buffer: returns 1 with
 * *ret_len (message length, the frame being 2 + *ret_len bytes) when a whole
 * frame is there, 0 when more bytes are needed, -EBADMSG when the length
 * cannot be a DNS message (< DNSMSG_HEADER_SIZE). */
int dnsmsg_tcp_frame(const uint8_t *buf, size_t avail, size_t *ret_len);
void dnsmsg_tcp_put_length(uint8_t out[2], size_t len);

/* Text form of a wire name for logs: lowercase labels joined by '.', bytes
 * outside the hostname alphabet as \DDD; "." for the root. Truncated to
 * size - 1 bytes; returns out. */
char *dnsmsg_name_to_text(const struct dnsmsg_name *name, char *out, size_t size);

/* Case-insensitive equality of two wire names. */
bool dnsmsg_name_equal(const struct dnsmsg_name *a, const struct dnsmsg_name *b);

/* Wire name from a text name ("example.com", optional trailing dot).
 * Returns 0, -EINVAL (empty label, label > 63, name > 253). */
int dnsmsg_name_from_text(const char *text, struct dnsmsg_name *ret);

#endif
