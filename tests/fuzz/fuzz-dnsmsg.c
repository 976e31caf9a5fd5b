/* SPDX-License-Identifier: MIT */
/* Fuzz target for lib/dnsmsg.c: every input is parsed as a client query and
 * as an upstream answer (to the question it carries, else to a fixed one),
 * and whatever parses is rebuilt and parsed back, checking that the gate's
 * own output always satisfies its own parser. */
#include <assert.h>
#include <string.h>
#include <sys/socket.h>

#include "dnsmsg.h"
#include "fuzz.h"

static uint8_t out[DNSMSG_MAX_MSG];

static void check_answer(const uint8_t *data, size_t size, const struct dnsmsg_query *q)
{
	struct dnsmsg_answer a, back;
	size_t n;

	if (q->qclass != DNSMSG_CLASS_IN || dnsmsg_parse_answer(data, size, &q->qname, q->qtype, &a) < 0)
		return;
	assert(a.n_chain <= DNSMSG_MAX_CNAME_CHAIN);
	assert(a.n_addrs <= DNSMSG_MAX_ADDRS);
	for (size_t i = 0; i < a.n_addrs; i++)
		assert(a.addrs[i].family == AF_INET || a.addrs[i].family == AF_INET6);
	if (a.rcode > 0xF && !q->edns)
		return;
	/* What the gate would send back parses as the same answer. */
	if (dnsmsg_build_response(q, a.rcode > 0xFFF ? 2 : a.rcode, &a, 3600, DNSMSG_MAX_MSG, out,
				  sizeof(out), &n) < 0)
		return;
	assert(dnsmsg_parse_answer(out, n, &q->qname, q->qtype, &back) == 0);
	if (q->qtype == DNSMSG_TYPE_A || q->qtype == DNSMSG_TYPE_AAAA) {
		assert(back.n_addrs == a.n_addrs);
		assert(back.n_chain == a.n_chain);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dnsmsg_query q;
	char text[1024];
	size_t n, frame;
	int k;

	k = dnsmsg_parse_query(data, size, &q);
	if (k >= 0 && q.has_question) {
		assert(q.qname.len >= 1 && q.qname.wire[q.qname.len - 1] == 0);
		(void)dnsmsg_name_to_text(&q.qname, text, sizeof(text));
		assert(strlen(text) < sizeof(text));
		if (k == 0) {
			struct dnsmsg_query again;

			assert(strlen(q.name) <= DNSMSG_MAX_NAME);
			/* The gate's upstream query for it parses back to the same name. */
			if (dnsmsg_build_query(1, &q.qname, q.qtype, true, out, sizeof(out), &n) == 0) {
				assert(dnsmsg_parse_query(out, n, &again) == 0);
				assert(strcmp(again.name, q.name) == 0);
			}
		}
		if (dnsmsg_build_response(&q, DNSMSG_RCODE_REFUSED, NULL, 0, dnsmsg_udp_limit(&q), out,
					  sizeof(out), &n) == 0) {
			struct dnsmsg_answer a;

			assert(n <= dnsmsg_udp_limit(&q));
			/* (The answer parser only takes class IN questions.) */
			if (q.qclass == DNSMSG_CLASS_IN) {
				assert(dnsmsg_parse_answer(out, n, &q.qname, q.qtype, &a) == 0);
				assert(a.rcode == DNSMSG_RCODE_REFUSED && a.n_addrs == 0);
			}
		}
		check_answer(data, size, &q);
	} else if (size > DNSMSG_HEADER_SIZE) {
		/* An answer (QR set): find its question by parsing the header
		 * plus growing prefixes of the rest as a one-question query. */
		static uint8_t probe[DNSMSG_HEADER_SIZE + DNSMSG_MAX_WIRE_NAME + 4];
		size_t max = size - DNSMSG_HEADER_SIZE;

		if (max > sizeof(probe) - DNSMSG_HEADER_SIZE)
			max = sizeof(probe) - DNSMSG_HEADER_SIZE;
		memset(probe, 0, DNSMSG_HEADER_SIZE);
		probe[5] = 1;
		memcpy(probe + DNSMSG_HEADER_SIZE, data + DNSMSG_HEADER_SIZE, max);
		for (size_t l = 5; l <= max; l++) {
			struct dnsmsg_query pq;
			int r = dnsmsg_parse_query(probe, DNSMSG_HEADER_SIZE + l, &pq);

			if ((r == 0 || r == DNSMSG_RCODE_REFUSED) && pq.has_question) {
				check_answer(data, size, &pq);
				break;
			}
		}
	}
	if (dnsmsg_tcp_frame(data, size, &frame) == 1)
		assert(frame + 2 <= size);
	return 0;
}
