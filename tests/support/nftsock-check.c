/* SPDX-License-Identifier: MIT */
/* Kernel-side checks of the netlink transport for tests/integration/
 * fw-netlink.sh, in a throwaway network namespace:
 *
 *   nftsock-check install TABLE    build the fixed test ruleset, send, verify
 *   nftsock-check verify TABLE     rebuild it and compare with the kernel's
 *   nftsock-check overlap TABLE    send an element that partially overlaps
 *                                  a literal one: must fail naming it
 *   nftsock-check many TABLE N     install with N host elements (split
 *                                  into many messages), verify
 *
 * Prints "ok" or the error (naming the rule or element) on stdout; exit 0
 * when the step did what it should, 1 otherwise (for `verify`: 1 when the
 * kernel's table differs, with the difference printed). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nftbatch.h"
#include "nftsock.h"

#define CHECK_MAX_ELEMS 20000

static struct nftbatch_elem elem4(const char *a, unsigned plen, uint16_t lo, uint16_t hi,
				  uint32_t tmo)
{
	struct nftbatch_elem e = { .family = AF_INET, .prefix_len = plen, .port_lo = lo,
				   .port_hi = hi, .timeout_ms = tmo };
	if (inet_pton(AF_INET, a, &e.addr.v4) != 1)
		abort();
	return e;
}

static int build(struct nftbatch *b, const char *table, struct nftbatch_elem *elems, size_t n,
		 char **buf, uint32_t seq)
{
	static struct nftbatch_elem ups[1];
	size_t size = nftbatch_buffer_size(n);
	struct nftbatch_config cfg = { .table = table, .upstreams = ups, .n_upstreams = 1,
				       .elems = elems, .n_elems = n };

	ups[0] = elem4("10.201.0.1", 32, 53, 53, 0);
	*buf = malloc(size);
	if (!*buf)
		return -ENOMEM;
	return nftbatch_build_ruleset(b, &cfg, *buf, size, seq);
}

int main(int argc, char **argv)
{
	struct nftbatch_elem fixed[3];
	struct nftbatch_elem *elems = fixed;
	size_t n = 3;
	struct nftbatch b = { 0 };
	struct nftsock *s = NULL;
	char err[NFTSOCK_ERR_MAX] = "", *buf = NULL;
	const char *mode, *table;
	int r;

	if (argc < 3)
		return 2;
	mode = argv[1];
	table = argv[2];
	fixed[0] = elem4("198.51.100.0", 24, 443, 443, 0);
	fixed[1] = elem4("198.51.101.10", 32, 443, 443, 600000);
	fixed[2] = elem4("198.51.101.11", 32, 8000, 8100, 600000);
	if (strcmp(mode, "many") == 0) {
		char *end;
		unsigned long k = argc > 3 ? strtoul(argv[3], &end, 10) : 0;
		if (k == 0 || k > CHECK_MAX_ELEMS)
			return 2;
		elems = calloc(k, sizeof(*elems));
		if (!elems)
			return 2;
		for (size_t i = 0; i < k; i++) {
			elems[i] = elem4("10.0.0.0", 32, 443, 443, 600000);
			elems[i].addr.v4.s_addr = htonl(0x0a000000u + (uint32_t)i);
		}
		n = k;
	}
	r = nftsock_open(&s);
	if (r < 0) {
		printf("open: %s\n", strerror(-r));
		return 1;
	}
	r = build(&b, table, elems, n, &buf, nftsock_seq(s));
	if (r < 0) {
		printf("build: %s\n", strerror(-r));
		return 1;
	}
	if (strcmp(mode, "install") == 0 || strcmp(mode, "many") == 0) {
		r = nftsock_send(s, &b, err, sizeof(err));
		if (r >= 0)
			r = nftsock_verify(s, &b, err, sizeof(err));
	} else if (strcmp(mode, "verify") == 0) {
		r = nftsock_verify(s, &b, err, sizeof(err));
	} else if (strcmp(mode, "overlap") == 0) {
		/* 198.51.100.10 . 443 lies inside the literal
		 * 198.51.100.0/24 . 443 without being equal to it: pipapo
		 * refuses an element whose start or end falls inside another
		 * (what nftbatch_elems_normalize() prevents). */
		struct nftbatch_elem bad[2] = { elem4("198.51.102.1", 32, 443, 443, 60000),
						elem4("198.51.100.10", 32, 443, 443, 60000) };
		struct nftbatch e = { 0 };
		char ebuf[4 * NFTBATCH_MAX_MSG];

		nftbatch_done(&b);
		r = nftbatch_build_elements(&e, table, bad, 2, ebuf, sizeof(ebuf), nftsock_seq(s));
		if (r >= 0)
			r = nftsock_send(s, &e, err, sizeof(err));
		nftbatch_done(&e);
		printf("%s\n", r < 0 ? err : "accepted");
		s = nftsock_close(s);
		free(buf);
		/* success of this mode is a refusal that names the element */
		return r < 0 && strstr(err, "198.51.100.10 . 443") ? 0 : 1;
	} else
		return 2;
	printf("%s\n", r < 0 ? err : "ok");
	nftbatch_done(&b);
	s = nftsock_close(s);
	free(buf);
	if (elems != fixed)
		free(elems);
	return r < 0 ? 1 : 0;
}
