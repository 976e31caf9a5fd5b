/* SPDX-License-Identifier: MIT */
/* Egress probe for the firewall tests: tries one kind of traffic and says
 * what happened, with how long it took.
 *
 *   fw-probe tcp ADDR PORT [TIMEOUT_MS]   connect()
 *   fw-probe udp ADDR PORT [TIMEOUT_MS]   send a datagram, wait for a reply
 *   fw-probe icmp ADDR [TIMEOUT_MS]       raw ICMP(v6) echo, wait for the reply
 *
 * Prints "RESULT MS" (RESULT: ok, or the errno name such as ECONNREFUSED,
 * or timeout). Exit 0 on ok, 1 on an error, 2 on timeout, 3 usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROBE_DEFAULT_TIMEOUT_MS 3000

static struct timespec t0;

static double elapsed_ms(void)
{
	struct timespec t;

	(void)clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0.tv_sec) * 1000.0 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
}

static int parse_ms(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 600000)
		return -1;
	return (int)v;
}

static int report_errno(int e)
{
	const char *name = strerrorname_np(e);

	printf("%s %.1f\n", name ? name : "EUNKNOWN", elapsed_ms());
	return 1;
}

static int report(const char *what, int code)
{
	printf("%s %.1f\n", what, elapsed_ms());
	return code;
}

/* Waits for fd to become ready for events; 1 ready, 0 timeout, <0 -errno. */
static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = poll(&p, 1, timeout_ms);

	if (r < 0)
		return -errno;
	return r;
}

static int pending_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int family, fd, r, timeout = PROBE_DEFAULT_TIMEOUT_MS;
	const char *mode;
	unsigned long port = 0;
	char *end;

	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	if (argc < 3)
		return 3;
	mode = argv[1];
	if (strcmp(mode, "icmp") != 0) {
		if (argc < 4)
			return 3;
		errno = 0;
		port = strtoul(argv[3], &end, 10);
		if (errno || *end || port == 0 || port > 65535)
			return 3;
		if (argc > 4)
			timeout = parse_ms(argv[4]);
	} else if (argc > 3)
		timeout = parse_ms(argv[3]);
	if (timeout <= 0)
		return 3;
	if (inet_pton(AF_INET, argv[2], &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, argv[2], &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
		sl = sizeof(struct sockaddr_in6);
	} else
		return 3;
	ss.ss_family = (sa_family_t)family;

	if (strcmp(mode, "tcp") == 0) {
		fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return report_errno(errno);
		if (connect(fd, (struct sockaddr *)&ss, sl) == 0)
			return report("ok", 0);
		if (errno != EINPROGRESS)
			return report_errno(errno);
		r = wait_fd(fd, POLLOUT, timeout);
		if (r < 0)
			return report_errno(-r);
		if (r == 0)
			return report("timeout", 2);
		r = pending_error(fd);
		return r ? report_errno(r) : report("ok", 0);
	}
	if (strcmp(mode, "udp") == 0) {
		char buf[512];

		fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return report_errno(errno);
		if (connect(fd, (struct sockaddr *)&ss, sl) < 0)
			return report_errno(errno);
		if (send(fd, "probe\n", 6, 0) < 0)
			return report_errno(errno);
		r = wait_fd(fd, POLLIN, timeout);
		if (r < 0)
			return report_errno(-r);
		if (r == 0)
			return report("timeout", 2);
		if (recv(fd, buf, sizeof(buf), 0) < 0)
			return report_errno(errno);
		return report("ok", 0);
	}
	if (strcmp(mode, "icmp") == 0) {
		unsigned char pkt[64] = { 0 }, buf[1500];

		fd = socket(family, SOCK_RAW | SOCK_CLOEXEC,
			    family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
		if (fd < 0)
			return report_errno(errno);
		if (family == AF_INET) {
			struct icmphdr *h = (struct icmphdr *)pkt;
			uint32_t sum = 0;
			h->type = ICMP_ECHO;
			h->un.echo.id = htons((uint16_t)getpid());
			h->un.echo.sequence = htons(1);
			for (size_t i = 0; i < sizeof(pkt); i += 2)
				sum += (uint32_t)(pkt[i] << 8 | pkt[i + 1]);
			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			h->checksum = htons((uint16_t)~sum);
		} else {
			struct icmp6_hdr *h = (struct icmp6_hdr *)pkt;
			h->icmp6_type = ICMP6_ECHO_REQUEST; /* the kernel computes the checksum */
			h->icmp6_id = htons((uint16_t)getpid());
			h->icmp6_seq = htons(1);
		}
		if (sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&ss, sl) < 0)
			return report_errno(errno);
		for (;;) {
			double left = timeout - elapsed_ms();
			ssize_t n;
			if (left <= 0)
				return report("timeout", 2);
			r = wait_fd(fd, POLLIN, (int)left);
			if (r < 0)
				return report_errno(-r);
			if (r == 0)
				return report("timeout", 2);
			n = recv(fd, buf, sizeof(buf), 0);
			if (n < 0)
				return report_errno(errno);
			if (family == AF_INET && n >= 20 + 8 && buf[(size_t)(buf[0] & 0xf) * 4] == ICMP_ECHOREPLY)
				return report("ok", 0);
			if (family == AF_INET6 && n >= 8 && buf[0] == ICMP6_ECHO_REPLY)
				return report("ok", 0);
			if (family == AF_INET && n >= 20 + 8 && buf[(size_t)(buf[0] & 0xf) * 4] == ICMP_DEST_UNREACH)
				return report("EHOSTUNREACH", 1);
			if (family == AF_INET6 && n >= 8 && buf[0] == ICMP6_DST_UNREACH)
				return report("EHOSTUNREACH", 1);
		}
	}
	return 3;
}
