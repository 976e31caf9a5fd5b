/* SPDX-License-Identifier: MIT */
/* slowdns: a DNS forwarder for the simulated internet that adds latency.
 * This kernel has no netem, so benchmarks that need "20 ms of DNS latency"
 * put this between the resolver under test and dnsmasq:
 *
 *   slowdns --listen ADDR [--port 53] --upstream ADDR [--upstream-port 53]
 *           [--delay-ms 20]
 *
 * Every query (UDP, or TCP with the 2-byte length prefix) is forwarded to
 * the upstream over UDP under a fresh ID, and its answer goes back under the
 * client's ID delay-ms after the query arrived, or as soon as the upstream
 * answers if that takes longer. So each query costs the emulated round trip
 * once, concurrently with every other, as with a remote resolver; the
 * upstream's own service time overlaps the delay instead of adding to it.
 * Nothing is serialised: thousands of queries can be held at once (a heap
 * of answers ordered by release time, one poll() timeout for the earliest).
 * At most SLOWDNS_MAX_UPSTREAM queries are outstanding at dnsmasq at a time
 * (the rest wait in a FIFO): dnsmasq reads one datagram per loop and its
 * socket's default receive buffer holds only about 250 queries, and a
 * dropped query would cost a retry of seconds. Single-threaded, test-only. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "macros.h"

#define SLOWDNS_MAX_MSG 65535
#define SLOWDNS_MAX_UDP 4096
#define SLOWDNS_MAX_INFLIGHT 65536 /* one per 16-bit upstream ID */
#define SLOWDNS_MAX_HELD 65536
#define SLOWDNS_MAX_TCP 128
#define SLOWDNS_MAX_UPSTREAM 128
#define SLOWDNS_MAX_WAITING 65536
#define SLOWDNS_UPSTREAM_TIMEOUT_MS 5000
#define SLOWDNS_SOCKBUF (8 * 1024 * 1024)
#define SLOWDNS_HEADER 12

struct client {
	struct sockaddr_storage addr; /* UDP client */
	socklen_t addr_len;
	int tcp_slot; /* >= 0: answer on this TCP connection */
	unsigned tcp_gen;
};

struct inflight {
	bool used;
	uint16_t client_id;
	int64_t arrived_us, sent_us;
	struct client who;
};

/* A query waiting for room at the upstream. */
struct waiting {
	uint8_t *msg;
	size_t len;
	int64_t arrived_us;
	struct client who;
};

struct held {
	int64_t release_us;
	struct client who;
	uint8_t *msg;
	size_t len;
};

struct tcpconn {
	int fd;
	unsigned gen; /* bumped on close, so late answers to a gone peer are dropped */
	uint8_t buf[2 + SLOWDNS_MAX_MSG];
	size_t have;
};

static volatile sig_atomic_t stop;

static struct inflight inflight[SLOWDNS_MAX_INFLIGHT];
static uint16_t next_id;
static size_t n_inflight;
static struct held *held; /* min-heap on release_us */
static size_t held_n;
static struct waiting *waitq; /* ring buffer */
static size_t wait_head, wait_n;
static int64_t delay_us;
static struct tcpconn tcp[SLOWDNS_MAX_TCP];
static unsigned long stat_queries, stat_answers, stat_dropped;

/* Microseconds: milliseconds would let an answer leave up to 1 ms early. */
static int64_t now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void big_buffers(int fd)
{
	int size = SLOWDNS_SOCKBUF;

	/* FORCE needs CAP_NET_ADMIN (the tests run as root); fall back to the
	 * capped variant otherwise. A burst of thousands of queries must not
	 * overflow the receive queue, or the benchmark measures retries. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

static int parse_addr(const char *text, uint16_t port, struct sockaddr_storage *ret,
		      socklen_t *ret_len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ret;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ret;

	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET, text, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*ret_len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, text, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*ret_len = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}

static int open_socket(const struct sockaddr_storage *addr, socklen_t len, int type, bool listen_it)
{
	int one = 1;
	_cleanup_close_ int fd = socket(addr->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (type == SOCK_DGRAM)
		big_buffers(fd);
	if (listen_it) {
		if (bind(fd, (const struct sockaddr *)addr, len) < 0)
			return -errno;
		if (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)
			return -errno;
	} else if (connect(fd, (const struct sockaddr *)addr, len) < 0)
		return -errno;
	return TAKE_FD(fd);
}

/* Sends one query to the upstream under a fresh ID; takes ownership of
 * nothing (msg is modified in place). */
static void send_upstream(int up, uint8_t *msg, size_t len, int64_t arrived_us,
			  const struct client *who)
{
	uint16_t id;
	size_t tries = 0;

	while (inflight[next_id].used && tries++ < SLOWDNS_MAX_INFLIGHT)
		next_id++;
	id = next_id++;
	inflight[id].used = true;
	inflight[id].client_id = (uint16_t)(msg[0] << 8 | msg[1]);
	inflight[id].arrived_us = arrived_us;
	inflight[id].sent_us = now_us();
	inflight[id].who = *who;
	n_inflight++;
	msg[0] = (uint8_t)(id >> 8);
	msg[1] = (uint8_t)(id & 0xff);
	if (send(up, msg, len, 0) < 0) {
		inflight[id].used = false;
		n_inflight--;
		stat_dropped++;
	}
}

/* A query from a client: straight to the upstream when it has room, else
 * into the FIFO. */
static void forward(int up, uint8_t *msg, size_t len, const struct client *who)
{
	int64_t now = now_us();
	struct waiting *w;

	stat_queries++;
	if (len < SLOWDNS_HEADER) {
		stat_dropped++;
		return;
	}
	if (n_inflight < SLOWDNS_MAX_UPSTREAM && wait_n == 0) {
		send_upstream(up, msg, len, now, who);
		return;
	}
	if (wait_n >= SLOWDNS_MAX_WAITING) {
		stat_dropped++;
		return;
	}
	w = &waitq[(wait_head + wait_n) % SLOWDNS_MAX_WAITING];
	w->msg = malloc(len);
	if (!w->msg) {
		stat_dropped++;
		return;
	}
	memcpy(w->msg, msg, len);
	w->len = len;
	w->arrived_us = now;
	w->who = *who;
	wait_n++;
}

static void drain_waiting(int up)
{
	while (wait_n > 0 && n_inflight < SLOWDNS_MAX_UPSTREAM) {
		struct waiting *w = &waitq[wait_head];

		send_upstream(up, w->msg, w->len, w->arrived_us, &w->who);
		free(w->msg);
		w->msg = NULL;
		wait_head = (wait_head + 1) % SLOWDNS_MAX_WAITING;
		wait_n--;
	}
}

static void heap_swap(size_t a, size_t b)
{
	struct held t = held[a];

	held[a] = held[b];
	held[b] = t;
}

static void heap_push(const struct held *h)
{
	size_t i = held_n++;

	held[i] = *h;
	while (i > 0 && held[(i - 1) / 2].release_us > held[i].release_us) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_pop(void)
{
	size_t i = 0;

	held[0] = held[--held_n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < held_n && held[l].release_us < held[m].release_us)
			m = l;
		if (r < held_n && held[r].release_us < held[m].release_us)
			m = r;
		if (m == i)
			break;
		heap_swap(i, m);
		i = m;
	}
}

/* An answer from the upstream: restore the client's ID and hold it until
 * delay_us after the query arrived. */
static void hold(const uint8_t *msg, size_t len)
{
	uint16_t id;
	struct held h;
	int64_t now = now_us();

	if (len < SLOWDNS_HEADER)
		return;
	id = (uint16_t)(msg[0] << 8 | msg[1]);
	if (!inflight[id].used)
		return; /* late answer after a timeout, or not ours */
	inflight[id].used = false;
	n_inflight--;
	if (held_n >= SLOWDNS_MAX_HELD) {
		stat_dropped++;
		return;
	}
	h.msg = malloc(len);
	if (!h.msg) {
		stat_dropped++;
		return;
	}
	memcpy(h.msg, msg, len);
	h.msg[0] = (uint8_t)(inflight[id].client_id >> 8);
	h.msg[1] = (uint8_t)(inflight[id].client_id & 0xff);
	h.len = len;
	h.who = inflight[id].who;
	h.release_us = inflight[id].arrived_us + delay_us;
	if (h.release_us < now)
		h.release_us = now;
	heap_push(&h);
}

static void tcp_close(int slot)
{
	tcp[slot].fd = safe_close(tcp[slot].fd);
	tcp[slot].have = 0;
	tcp[slot].gen++;
}

/* Writes a whole length-prefixed answer; the sockets are non-blocking, so a
 * peer that stops reading loses its connection instead of stalling us. */
static void tcp_answer(int slot, const uint8_t *msg, size_t len)
{
	uint8_t pre[2] = {(uint8_t)(len >> 8), (uint8_t)(len & 0xff)};
	struct iovec iov[2] = {{pre, 2}, {(void *)msg, len}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
	ssize_t n = sendmsg(tcp[slot].fd, &mh, MSG_NOSIGNAL);

	if (n != (ssize_t)(len + 2))
		tcp_close(slot);
}

static void release_due(int udp, int64_t now)
{
	while (held_n > 0 && held[0].release_us <= now) {
		struct held *h = &held[0];

		if (h->who.tcp_slot >= 0) {
			if (tcp[h->who.tcp_slot].fd >= 0 && tcp[h->who.tcp_slot].gen == h->who.tcp_gen)
				tcp_answer(h->who.tcp_slot, h->msg, h->len);
		} else if (sendto(udp, h->msg, h->len, 0, (const struct sockaddr *)&h->who.addr,
				  h->who.addr_len) < 0)
			stat_dropped++;
		stat_answers++;
		free(h->msg);
		heap_pop();
	}
}

static void expire_inflight(int64_t now)
{
	static int64_t last_sweep;

	if (n_inflight == 0 || now - last_sweep < 1000000)
		return;
	last_sweep = now;
	for (size_t i = 0; i < SLOWDNS_MAX_INFLIGHT; i++)
		if (inflight[i].used && now - inflight[i].sent_us > (int64_t)SLOWDNS_UPSTREAM_TIMEOUT_MS * 1000) {
			inflight[i].used = false;
			n_inflight--;
			stat_dropped++;
		}
}

static void tcp_read(int slot, int up)
{
	struct tcpconn *c = &tcp[slot];
	ssize_t n = read(c->fd, c->buf + c->have, sizeof(c->buf) - c->have);

	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return; /* spurious wake-up; poll again */
		tcp_close(slot);
		return;
	}
	c->have += (size_t)n;
	while (c->have >= 2) {
		size_t len = (size_t)c->buf[0] << 8 | c->buf[1];
		struct client who = {.tcp_slot = slot, .tcp_gen = c->gen};

		if (c->have < 2 + len)
			break;
		if (len <= SLOWDNS_MAX_UDP)
			forward(up, c->buf + 2, len, &who);
		else
			stat_dropped++;
		memmove(c->buf, c->buf + 2 + len, c->have - 2 - len);
		c->have -= 2 + len;
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: slowdns --listen ADDR [--port N] --upstream ADDR [--upstream-port N] "
		   "[--delay-ms MS]\n");
}

static int parse_uint(const char *s, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"port", required_argument, NULL, 'p'},
		{"upstream", required_argument, NULL, 'u'},
		{"upstream-port", required_argument, NULL, 'P'},
		{"delay-ms", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *listen_text = NULL, *up_text = NULL;
	long port = 53, up_port = 53, delay = 20;
	struct sockaddr_storage la, ua;
	socklen_t la_len, ua_len;
	_cleanup_close_ int udp = -1, tcpl = -1, up = -1;
	static uint8_t buf[SLOWDNS_MAX_MSG];
	struct sigaction sa = {.sa_handler = on_signal};
	int c;

	while ((c = getopt_long(argc, argv, "l:p:u:P:d:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'l':
			listen_text = optarg;
			break;
		case 'u':
			up_text = optarg;
			break;
		case 'p':
		case 'P':
		case 'd': {
			long v;

			if (parse_uint(optarg, c == 'd' ? 60000 : 65535, &v) < 0) {
				fprintf(stderr, "slowdns: bad number '%s'\n", optarg);
				return 2;
			}
			if (c == 'p')
				port = v;
			else if (c == 'P')
				up_port = v;
			else
				delay = v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!listen_text || !up_text || optind != argc ||
	    parse_addr(listen_text, (uint16_t)port, &la, &la_len) < 0 ||
	    parse_addr(up_text, (uint16_t)up_port, &ua, &ua_len) < 0) {
		usage(stderr);
		return 2;
	}
	delay_us = delay * 1000;
	held = calloc(SLOWDNS_MAX_HELD, sizeof(*held));
	waitq = calloc(SLOWDNS_MAX_WAITING, sizeof(*waitq));
	if (!held || !waitq)
		return 1;
	for (size_t i = 0; i < SLOWDNS_MAX_TCP; i++)
		tcp[i].fd = -1;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);

	udp = open_socket(&la, la_len, SOCK_DGRAM, true);
	tcpl = open_socket(&la, la_len, SOCK_STREAM, true);
	up = open_socket(&ua, ua_len, SOCK_DGRAM, false);
	if (udp < 0 || tcpl < 0 || up < 0) {
		fprintf(stderr, "slowdns: cannot set up sockets: %s\n",
			strerror(-(udp < 0 ? udp : tcpl < 0 ? tcpl : up)));
		return 1;
	}
	fprintf(stderr, "slowdns: %s:%ld -> %s:%ld, %ld ms\n", listen_text, port, up_text, up_port,
		delay);

	while (!stop) {
		struct pollfd pfd[3 + SLOWDNS_MAX_TCP];
		int slot_of[3 + SLOWDNS_MAX_TCP];
		nfds_t n = 0;
		int timeout = -1, r;
		int64_t now = now_us();

		release_due(udp, now);
		if (held_n > 0)
			timeout = (int)((held[0].release_us - now + 999) / 1000);
		if (n_inflight > 0 && (timeout < 0 || timeout > 1000))
			timeout = 1000; /* sweep lost upstream queries */
		pfd[n++] = (struct pollfd){.fd = udp, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = up, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = tcpl, .events = POLLIN};
		for (int i = 0; i < SLOWDNS_MAX_TCP; i++)
			if (tcp[i].fd >= 0) {
				slot_of[n] = i;
				pfd[n++] = (struct pollfd){.fd = tcp[i].fd, .events = POLLIN};
			}
		r = poll(pfd, n, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue; /* a signal: re-check stop */
			perror("slowdns: poll");
			return 1;
		}
		now = now_us();
		/* Drain each UDP socket completely: a burst arrives at once. */
		if (pfd[0].revents & POLLIN)
			for (;;) {
				struct client who = {.tcp_slot = -1, .addr_len = sizeof(who.addr)};
				ssize_t len = recvfrom(udp, buf, SLOWDNS_MAX_UDP, 0,
						       (struct sockaddr *)&who.addr, &who.addr_len);

				if (len < 0)
					break; /* EAGAIN: drained */
				forward(up, buf, (size_t)len, &who);
			}
		if (pfd[1].revents & POLLIN)
			for (;;) {
				ssize_t len = recv(up, buf, sizeof(buf), 0);

				if (len < 0)
					break;
				hold(buf, (size_t)len);
			}
		if (pfd[2].revents & POLLIN) {
			int fd = accept4(tcpl, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd >= 0) {
				int i;

				for (i = 0; i < SLOWDNS_MAX_TCP && tcp[i].fd >= 0; i++)
					;
				if (i == SLOWDNS_MAX_TCP)
					(void)close(fd);
				else {
					tcp[i].fd = fd;
					tcp[i].have = 0;
				}
			}
		}
		for (nfds_t i = 3; i < n; i++)
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				tcp_read(slot_of[i], up);
		expire_inflight(now);
		drain_waiting(up);
	}
	fprintf(stderr, "slowdns: %lu queries, %lu answers, %lu dropped\n", stat_queries,
		stat_answers, stat_dropped);
	for (size_t i = 0; i < SLOWDNS_MAX_TCP; i++)
		(void)safe_close(tcp[i].fd);
	while (held_n > 0) {
		free(held[0].msg);
		heap_pop();
	}
	while (wait_n > 0) {
		free(waitq[wait_head].msg);
		wait_head = (wait_head + 1) % SLOWDNS_MAX_WAITING;
		wait_n--;
	}
	free(held);
	free(waitq);
	return 0;
}
