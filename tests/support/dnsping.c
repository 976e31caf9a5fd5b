/* SPDX-License-Identifier: MIT */
/* dnsping: sends N A queries one after another over UDP (one outstanding at
 * a time, each sent as soon as the previous answer arrived) and reports the
 * round-trip times. Benchmark helper for bench/gate-latency.sh.
 *
 *   dnsping --server ADDR [--port 53] --names FILE --count N [--timeout-ms 2000]
 *
 * Names in FILE, one per line, are used in turn. Output, one line:
 *   sent=N answered=N noerror=N min_ms=A median_ms=M p90_ms=P p99_ms=Q max_ms=X
 * Exit 0 when every query got a NOERROR answer, 1 otherwise, 2 on usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dnsmsg.h"
#include "macros.h"

#define PING_MAX_NAMES 4096
#define PING_MAX_COUNT 1000000

static int64_t now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const int64_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);

	return (double)v[i] / 1e6;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"server", required_argument, NULL, 's'}, {"port", required_argument, NULL, 'p'},
		{"names", required_argument, NULL, 'n'},  {"count", required_argument, NULL, 'c'},
		{"timeout-ms", required_argument, NULL, 't'}, {NULL, 0, NULL, 0},
	};
	static struct dnsmsg_name names[PING_MAX_NAMES];
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	const char *server = NULL, *names_file = NULL;
	long port = 53, count = 0, timeout_ms = 2000;
	size_t n_names = 0, answered = 0, noerror = 0;
	int64_t *rtt;
	_cleanup_close_ int fd = -1;
	char line[512];
	FILE *f;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		char *end;

		switch (o) {
		case 's':
			server = optarg;
			break;
		case 'n':
			names_file = optarg;
			break;
		case 'p':
		case 'c':
		case 't': {
			long v = strtol(optarg, &end, 10);

			if (*end || v <= 0 || (o == 'p' && v > 65535) || (o == 'c' && v > PING_MAX_COUNT))
				return 2;
			if (o == 'p')
				port = v;
			else if (o == 'c')
				count = v;
			else
				timeout_ms = v;
			break;
		}
		default:
			return 2;
		}
	}
	if (!server || !names_file || count <= 0)
		return 2;
	if (strchr(server, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, server, &s6->sin6_addr) != 1)
			return 2;
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, server, &s4->sin_addr) != 1)
			return 2;
		sl = sizeof(*s4);
	}
	f = fopen(names_file, "re");
	if (!f)
		return 2;
	while (n_names < PING_MAX_NAMES && fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\r\n")] = '\0';
		if (line[0] && dnsmsg_name_from_text(line, &names[n_names]) == 0)
			n_names++;
	}
	(void)fclose(f);
	if (n_names == 0)
		return 2;
	rtt = calloc((size_t)count, sizeof(*rtt));
	if (!rtt)
		return 1;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl) < 0) {
		perror("socket");
		free(rtt);
		return 1;
	}
	for (long i = 0; i < count; i++) {
		uint8_t q[DNSMSG_HEADER_SIZE + DNSMSG_MAX_WIRE_NAME + 4 + 11], a[DNSMSG_MAX_UDP];
		uint16_t id = (uint16_t)(i * 7919 + 1);
		size_t qlen;
		int64_t t0, deadline;

		if (dnsmsg_build_query(id, &names[(size_t)i % n_names], DNSMSG_TYPE_A, false, q, sizeof(q),
				       &qlen) < 0 ||
		    send(fd, q, qlen, 0) < 0)
			break;
		t0 = now_ns();
		deadline = t0 + (int64_t)timeout_ms * 1000000;
		for (;;) {
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			int64_t left = deadline - now_ns();
			ssize_t r;

			if (left <= 0 || poll(&pfd, 1, (int)(left / 1000000) + 1) <= 0)
				break;
			r = recv(fd, a, sizeof(a), 0);
			if (r < DNSMSG_HEADER_SIZE || (a[0] << 8 | a[1]) != id)
				continue; /* stale or junk: keep waiting for ours */
			rtt[answered++] = now_ns() - t0;
			if ((a[3] & 0x0F) == DNSMSG_RCODE_NOERROR)
				noerror++;
			break;
		}
	}
	if (answered == 0) {
		printf("sent=%ld answered=0 noerror=0\n", count);
		free(rtt);
		return 1;
	}
	qsort(rtt, answered, sizeof(*rtt), cmp_i64);
	printf("sent=%ld answered=%zu noerror=%zu min_ms=%.4f median_ms=%.4f p90_ms=%.4f p99_ms=%.4f "
	       "max_ms=%.4f\n",
	       count, answered, noerror, pct(rtt, answered, 0), pct(rtt, answered, 0.5),
	       pct(rtt, answered, 0.9), pct(rtt, answered, 0.99), pct(rtt, answered, 1));
	free(rtt);
	return noerror == (size_t)count ? 0 : 1;
}
