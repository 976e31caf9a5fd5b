/* SPDX-License-Identifier: MIT */
/* dnsburst: sends N DNS queries at once over UDP and reports how long the
 * whole burst and each answer took. Test and benchmark helper.
 *
 *   dnsburst --server ADDR [--port 53] [--type A|AAAA] [--timeout-ms 5000]
 *            (--names FILE | --count N [--pattern FMT])
 *
 * FMT is a printf pattern with one %u (default "q%u.test"). Names in FILE
 * are one per line. All queries are sent back to back from one socket (with
 * a large send/receive buffer), then answers are collected until every one
 * arrived or the timeout passed. Output, one line:
 *   sent=N answered=N noerror=N nxdomain=N refused=N other=N
 *   total_ms=T min_ms=A median_ms=M p99_ms=P max_ms=X
 * Exit status 0 when every query was answered, 1 otherwise. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "macros.h"

#define BURST_MAX 60000
#define BURST_MAX_NAME 253
#define BURST_MAX_QUERY 512
#define BURST_SOCKBUF (8 * 1024 * 1024)

struct query {
	char name[BURST_MAX_NAME + 1];
	int64_t sent_ns, answered_ns;
	int rcode; /* -1 until answered */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wire-format query for name/type with the given ID; returns its length or
 * -EINVAL for a name that does not fit. */
static int build_query(uint8_t *out, uint16_t id, const char *name, uint16_t type)
{
	size_t pos = 12, label = 0;
	const char *p = name;

	memset(out, 0, 12);
	out[0] = (uint8_t)(id >> 8);
	out[1] = (uint8_t)(id & 0xff);
	out[2] = 0x01; /* RD */
	out[5] = 1;    /* QDCOUNT */
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (n == 0 || n > 63 || pos + 1 + n + 5 > BURST_MAX_QUERY)
			return -EINVAL;
		out[pos++] = (uint8_t)n;
		memcpy(out + pos, p, n);
		pos += n;
		label++;
		p += n;
		if (*p == '.')
			p++;
	}
	out[pos++] = 0;
	out[pos++] = (uint8_t)(type >> 8);
	out[pos++] = (uint8_t)(type & 0xff);
	out[pos++] = 0;
	out[pos++] = 1; /* IN */
	return label > 0 ? (int)pos : -EINVAL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"server", required_argument, NULL, 's'}, {"port", required_argument, NULL, 'p'},
		{"type", required_argument, NULL, 't'},	  {"timeout-ms", required_argument, NULL, 'T'},
		{"names", required_argument, NULL, 'n'},  {"count", required_argument, NULL, 'c'},
		{"pattern", required_argument, NULL, 'f'}, {0},
	};
	const char *server = NULL, *names = NULL, *pattern = "q%u.test";
	long port = 53, timeout_ms = 5000, count = 0;
	uint16_t type = 1;
	struct query *q;
	size_t n = 0, answered = 0, counts[4] = {0};
	struct sockaddr_storage sa = {0};
	socklen_t sa_len;
	_cleanup_close_ int fd = -1;
	int size = BURST_SOCKBUF, c;
	int64_t start, deadline, end, *lat;
	uint8_t pkt[BURST_MAX_QUERY], ans[4096];

	while ((c = getopt_long(argc, argv, "s:p:t:T:n:c:f:", opts, NULL)) >= 0) {
		char *e = NULL;

		switch (c) {
		case 's':
			server = optarg;
			break;
		case 'p':
			port = strtol(optarg, &e, 10);
			break;
		case 'T':
			timeout_ms = strtol(optarg, &e, 10);
			break;
		case 'c':
			count = strtol(optarg, &e, 10);
			break;
		case 't':
			type = strcmp(optarg, "AAAA") == 0 ? 28 : 1;
			break;
		case 'n':
			names = optarg;
			break;
		case 'f':
			pattern = optarg;
			break;
		default:
			fprintf(stderr, "usage: dnsburst --server ADDR [--port N] [--type A|AAAA] "
					"[--timeout-ms MS] (--names FILE | --count N [--pattern FMT])\n");
			return 2;
		}
		if (e && *e) {
			fprintf(stderr, "dnsburst: bad number '%s'\n", optarg);
			return 2;
		}
	}
	if (!server || (!names && count <= 0) || count > BURST_MAX || port <= 0 || port > 65535) {
		fprintf(stderr, "dnsburst: need --server and --names or --count (1..%d)\n", BURST_MAX);
		return 2;
	}
	q = calloc(BURST_MAX, sizeof(*q));
	lat = calloc(BURST_MAX, sizeof(*lat));
	if (!q || !lat)
		return 1;
	if (names) {
		FILE *f = fopen(names, "re");
		char line[BURST_MAX_NAME + 2];

		if (!f) {
			perror(names);
			return 1;
		}
		while (n < BURST_MAX && fgets(line, sizeof(line), f)) {
			size_t len;

			line[strcspn(line, "\r\n \t")] = 0;
			len = strlen(line);
			if (len == 0 || line[0] == '#')
				continue;
			if (len > BURST_MAX_NAME) {
				fprintf(stderr, "dnsburst: name too long\n");
				return 2;
			}
			memcpy(q[n++].name, line, len + 1);
		}
		fclose(f);
	} else
		for (; n < (size_t)count; n++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			(void)snprintf(q[n].name, sizeof(q[n].name), pattern, (unsigned)n);
#pragma GCC diagnostic pop
		}

	if (inet_pton(AF_INET, server, &((struct sockaddr_in *)&sa)->sin_addr) == 1) {
		((struct sockaddr_in *)&sa)->sin_family = AF_INET;
		((struct sockaddr_in *)&sa)->sin_port = htons((uint16_t)port);
		sa_len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, server, &((struct sockaddr_in6 *)&sa)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&sa)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&sa)->sin6_port = htons((uint16_t)port);
		sa_len = sizeof(struct sockaddr_in6);
	} else {
		fprintf(stderr, "dnsburst: bad server address '%s'\n", server);
		return 2;
	}
	fd = socket(sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sa_len) < 0) {
		perror("dnsburst: socket");
		return 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));

	start = now_ns();
	for (size_t i = 0; i < n; i++) {
		int len = build_query(pkt, (uint16_t)i, q[i].name, type);

		q[i].rcode = -1;
		if (len < 0) {
			fprintf(stderr, "dnsburst: bad name '%s'\n", q[i].name);
			return 2;
		}
		q[i].sent_ns = now_ns();
		while (send(fd, pkt, (size_t)len, 0) < 0) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};

			if (errno != EAGAIN && errno != ENOBUFS) {
				perror("dnsburst: send");
				return 1;
			}
			(void)poll(&p, 1, 10); /* socket buffer full: wait for room */
		}
	}
	deadline = start + (int64_t)timeout_ms * 1000000;
	while (answered < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - now_ns();

		if (left <= 0 || poll(&p, 1, (int)(left / 1000000) + 1) <= 0)
			break;
		for (;;) {
			ssize_t len = recv(fd, ans, sizeof(ans), 0);
			size_t id;

			if (len < 0)
				break;
			if (len < 12)
				continue;
			id = (size_t)(ans[0] << 8 | ans[1]);
			if (id >= n || q[id].rcode >= 0)
				continue;
			q[id].answered_ns = now_ns();
			q[id].rcode = ans[3] & 0x0f;
			lat[answered++] = q[id].answered_ns - q[id].sent_ns;
			counts[q[id].rcode == 0 ? 0 : q[id].rcode == 3 ? 1 : q[id].rcode == 5 ? 2 : 3]++;
		}
	}
	end = now_ns();
	qsort(lat, answered, sizeof(*lat), cmp_i64);
	printf("sent=%zu answered=%zu noerror=%zu nxdomain=%zu refused=%zu other=%zu "
	       "total_ms=%.2f min_ms=%.2f median_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
	       n, answered, counts[0], counts[1], counts[2], counts[3], ms(end - start),
	       answered ? ms(lat[0]) : 0.0, answered ? ms(lat[answered / 2]) : 0.0,
	       answered ? ms(lat[answered * 99 / 100]) : 0.0,
	       answered ? ms(lat[answered - 1]) : 0.0);
	free(q);
	free(lat);
	return answered == n ? 0 : 1;
}
