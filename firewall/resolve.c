/* SPDX-License-Identifier: MIT */
/* Start-up resolution. See resolve.h.
 *
 * Why ares_query + ares_parse_{a,aaaa}_reply rather than ares_getaddrinfo
 * (which also reports TTLs in 1.18): getaddrinfo applies search domains,
 * ndots and the hosts file; the firewall must ask exactly the allowlisted
 * name, and the parsers give one TTL per address, following CNAMEs.
 *
 * Why the caps: with hundreds of names sent at once over one UDP socket,
 * replies can overflow the socket's receive buffer; c-ares then only notices
 * at the retry timeout (seconds by default). So at most RESOLVE_MAX_INFLIGHT
 * queries are outstanding, the buffer is sized to hold all of their replies
 * (each small datagram costs about 1 KiB of buffer accounting: 512 replies
 * need ~0.6 MiB), set with SO_RCVBUFFORCE so net.core.rmem_max does not cap
 * it (PID 1 holds CAP_NET_ADMIN at this point), and the first retry comes
 * after RESOLVE_TIMEOUT_MS. The cap is high because every round of queries
 * costs one upstream round trip: 500 names (1000 queries) take two. */
#include "resolve.h"

#include <arpa/inet.h>
#include <ares.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "log.h"
#include "macros.h"
#include "monoclock.h"

struct query {
	struct resolver *r;
	size_t name;
	int qtype; /* RESOLVE_A / RESOLVE_AAAA */
};

struct resolver {
	ares_channel ch;
	bool have_ch;
	struct resolve_name *names;
	size_t n_names;
	struct query *queries; /* 2 per name, in launch order */
	size_t next;           /* next query to launch */
	size_t inflight;
	size_t finished;
	uint64_t deadline_ms;  /* CLOCK_MONOTONIC */
	bool expired;
};

static size_t parse_lines(const char *text, size_t len, const char *key, struct resolve_server *servers,
			  size_t max);

size_t resolve_parse_resolv_conf(const char *text, size_t len, struct resolve_server *servers,
				 size_t max)
{
	size_t n = parse_lines(text, len, RESOLVE_UPSTREAM_MARK, servers, max);

	return n > 0 ? n : parse_lines(text, len, "nameserver ", servers, max);
}

size_t resolve_parse_nameservers(const char *text, size_t len, struct resolve_server *servers,
				 size_t max)
{
	return parse_lines(text, len, "nameserver ", servers, max);
}

int resolve_parse_server_list(const char *list, struct resolve_server *servers, size_t max)
{
	size_t n = 0;

	for (const char *p = list; *p;) {
		char addr[INET6_ADDRSTRLEN + 1];
		size_t k = strcspn(p, ", \t");

		if (k == 0) {
			p++;
			continue;
		}
		if (k >= sizeof(addr))
			return -EINVAL;
		memcpy(addr, p, k);
		addr[k] = '\0';
		p += k;
		if (n >= max)
			return -E2BIG;
		if (inet_pton(AF_INET, addr, &servers[n].addr.v4) == 1)
			servers[n++].family = AF_INET;
		else if (inet_pton(AF_INET6, addr, &servers[n].addr.v6) == 1)
			servers[n++].family = AF_INET6;
		else
			return -EINVAL;
	}
	return n > 0 ? (int)n : -EINVAL;
}

/* Every line "KEY ADDR" (key includes its trailing blank; tabs accepted in
 * its place). */
static size_t parse_lines(const char *text, size_t len, const char *key, struct resolve_server *servers,
			  size_t max)
{
	size_t n = 0, i = 0, klen = strlen(key) - 1;

	while (i < len) {
		size_t end = i, k;
		char line[ALLOWLIST_MAX_LINE], addr[INET6_ADDRSTRLEN + 1];

		while (end < len && text[end] != '\n')
			end++;
		k = end - i < sizeof(line) - 1 ? end - i : sizeof(line) - 1;
		memcpy(line, text + i, k);
		line[k] = '\0';
		i = end + 1;
		/* KEY WS ADDR [anything]; comments start with # or ; */
		if (strncmp(line, key, klen) != 0 || (line[klen] != ' ' && line[klen] != '\t'))
			continue;
		{
			const char *a = line + klen;
			size_t k2 = 0;

			while (*a == ' ' || *a == '\t')
				a++;
			while (a[k2] && a[k2] != ' ' && a[k2] != '\t' && a[k2] != '\r' && a[k2] != '#' &&
			       a[k2] != ';')
				k2++;
			if (k2 == 0 || k2 >= sizeof(addr))
				continue;
			memcpy(addr, a, k2);
			addr[k2] = '\0';
		}
		/* fe80::1%eth0: a scoped address needs an interface */
		if (strchr(addr, '%'))
			continue;
		if (n >= max)
			break;
		if (inet_pton(AF_INET, addr, &servers[n].addr.v4) == 1)
			servers[n++].family = AF_INET;
		else if (inet_pton(AF_INET6, addr, &servers[n].addr.v6) == 1)
			servers[n++].family = AF_INET6;
	}
	return n;
}

static void store_answer(struct resolve_name *nm, int qtype, const unsigned char *abuf, int alen)
{
	if (qtype == RESOLVE_A) {
		struct ares_addrttl ttls[RESOLVE_MAX_ADDRS];
		int n = RESOLVE_MAX_ADDRS;

		if (ares_parse_a_reply(abuf, alen, NULL, ttls, &n) != ARES_SUCCESS)
			return;
		for (int i = 0; i < n && nm->n_addrs < ELEMENTSOF(nm->addrs); i++) {
			struct resolve_addr *a = &nm->addrs[nm->n_addrs++];
			a->family = AF_INET;
			a->addr.v4 = ttls[i].ipaddr;
			a->ttl = ttls[i].ttl > 0 ? (uint32_t)ttls[i].ttl : 0;
		}
	} else {
		struct ares_addr6ttl ttls[RESOLVE_MAX_ADDRS];
		int n = RESOLVE_MAX_ADDRS;

		if (ares_parse_aaaa_reply(abuf, alen, NULL, ttls, &n) != ARES_SUCCESS)
			return;
		for (int i = 0; i < n && nm->n_addrs < ELEMENTSOF(nm->addrs); i++) {
			struct resolve_addr *a = &nm->addrs[nm->n_addrs++];
			a->family = AF_INET6;
			memcpy(&a->addr.v6, &ttls[i].ip6addr, sizeof(a->addr.v6));
			a->ttl = ttls[i].ttl > 0 ? (uint32_t)ttls[i].ttl : 0;
		}
	}
}

static void query_cb(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct query *q = arg;
	struct resolver *r = q->r;
	struct resolve_name *nm = &r->names[q->name];

	(void)timeouts;
	nm->status[q->qtype] = status;
	if (status == ARES_SUCCESS && abuf)
		store_answer(nm, q->qtype, abuf, alen);
	r->inflight--;
	r->finished++;
}

/* c-ares calls this for every socket it creates: force the receive buffer
 * past net.core.rmem_max when we may (CAP_NET_ADMIN); otherwise c-ares's
 * own SO_RCVBUF (capped by rmem_max) stays. */
static int sock_configure(ares_socket_t fd, int type, void *userdata)
{
	int size = RESOLVE_SOCK_RCVBUF;

	(void)userdata;
	if (type == SOCK_DGRAM)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	return 0;
}

int resolver_new(struct resolver **ret, const struct resolve_server *servers, size_t n_servers,
		 struct resolve_name *names, size_t n_names, unsigned deadline_ms)
{
	_cleanup_free_ struct resolver *r = NULL;
	struct ares_options opts = {
		/* no search list, ask exactly the name; TCP only on truncation */
		.flags = ARES_FLAG_NOSEARCH,
		.timeout = RESOLVE_TIMEOUT_MS,
		.tries = RESOLVE_TRIES,
		.socket_receive_buffer_size = RESOLVE_SOCK_RCVBUF,
		.ndomains = 0,
		.lookups = (char *)"b",
	};
	struct ares_addr_port_node nodes[RESOLVE_MAX_SERVERS];
	int st;

	if (n_servers == 0 || n_servers > RESOLVE_MAX_SERVERS)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->queries = calloc(2 * n_names + 1, sizeof(*r->queries));
	if (!r->queries)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return -ENOMEM;
	st = ares_library_init(ARES_LIB_INIT_ALL);
	if (st != ARES_SUCCESS) {
		free(r->queries);
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return -ENOMEM;
	}
	st = ares_init_options(&r->ch, &opts,
			       ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
				       ARES_OPT_SOCK_RCVBUF | ARES_OPT_DOMAINS | ARES_OPT_LOOKUPS);
	if (st != ARES_SUCCESS) {
		free(r->queries);
		return st == ARES_ENOMEM ? -ENOMEM : -EIO;
	}
	r->have_ch = true;
	ares_set_socket_configure_callback(r->ch, sock_configure, NULL);
	/* The servers read from the container's original resolv.conf at
	 * configuration time, not whatever /etc/resolv.conf says now (the
	 * gate rewrites it to point at itself). */
	for (size_t i = 0; i < n_servers; i++) {
		nodes[i] = (struct ares_addr_port_node){
			.next = i + 1 < n_servers ? &nodes[i + 1] : NULL,
			.family = servers[i].family,
			.udp_port = 53,
			.tcp_port = 53,
		};
		if (servers[i].family == AF_INET)
			nodes[i].addr.addr4 = servers[i].addr.v4;
		else
			memcpy(&nodes[i].addr.addr6, &servers[i].addr.v6, sizeof(servers[i].addr.v6));
	}
	st = ares_set_servers_ports(r->ch, nodes);
	if (st != ARES_SUCCESS) {
		ares_destroy(r->ch);
		free(r->queries);
		return -EINVAL;
	}
	r->names = names;
	r->n_names = n_names;
	for (size_t i = 0; i < n_names; i++) {
		names[i].n_addrs = 0;
		names[i].status[RESOLVE_A] = names[i].status[RESOLVE_AAAA] = -1;
		/* A and AAAA of the same name next to each other: a name's two
		 * answers arrive together. */
		r->queries[2 * i] = (struct query){ .r = r, .name = i, .qtype = RESOLVE_A };
		r->queries[2 * i + 1] = (struct query){ .r = r, .name = i, .qtype = RESOLVE_AAAA };
	}
	r->deadline_ms = monoclock_ms() + deadline_ms;
	*ret = TAKE_PTR(r);
	return 0;
}

struct resolver *resolver_free(struct resolver *r)
{
	if (!r)
		return NULL;
	if (r->have_ch)
		ares_destroy(r->ch); /* runs outstanding callbacks with ARES_EDESTRUCTION */
	free(r->queries);
	free(r);
	return NULL;
}

bool resolver_done(const struct resolver *r)
{
	return r->expired || r->finished == 2 * r->n_names;
}

static void launch(struct resolver *r)
{
	while (!r->expired && r->inflight < RESOLVE_MAX_INFLIGHT && r->next < 2 * r->n_names) {
		struct query *q = &r->queries[r->next++];
		r->inflight++;
		/* may call query_cb synchronously (e.g. on a bad name) */
		ares_query(r->ch, r->names[q->name].name, ns_c_in,
			   q->qtype == RESOLVE_A ? ns_t_a : ns_t_aaaa, query_cb, q);
	}
}

static void expire(struct resolver *r)
{
	r->expired = true;
	/* outstanding queries finish with ARES_ECANCELLED */
	ares_cancel(r->ch);
	for (; r->next < 2 * r->n_names; r->next++) {
		struct query *q = &r->queries[r->next];
		r->names[q->name].status[q->qtype] = ARES_ETIMEOUT;
		r->finished++;
	}
}

int resolver_prepare(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct resolver *r = userdata;
	ares_socket_t socks[ARES_GETSOCK_MAXNUM];
	struct timeval tv, maxtv;
	uint64_t now = monoclock_ms();
	size_t n = 0;
	int bits;

	if (resolver_done(r))
		return 0;
	if (now >= r->deadline_ms) {
		expire(r);
		return 0;
	}
	launch(r);
	bits = ares_getsock(r->ch, socks, ARES_GETSOCK_MAXNUM);
	for (int i = 0; i < ARES_GETSOCK_MAXNUM && n < max; i++) {
		short ev = 0;
		/* ARES_GETSOCK_READABLE/WRITABLE, in unsigned arithmetic: the
		 * macros shift a signed 1 into bit 31 (undefined) */
		if ((unsigned)bits & (1u << i))
			ev |= POLLIN;
		if ((unsigned)bits & (1u << (i + ARES_GETSOCK_MAXNUM)))
			ev |= POLLOUT;
		if (!ev)
			continue;
		fds[n++] = (struct pollfd){ .fd = socks[i], .events = ev };
	}
	{
		uint64_t left = r->deadline_ms - now; /* > 0: checked above */
		int ms = (int)left;

		maxtv.tv_sec = (time_t)(left / 1000);
		maxtv.tv_usec = (suseconds_t)(left % 1000) * 1000;
		/* ares_timeout() can report a far-off time after a send
		 * failed with ECONNREFUSED (c-ares 1.18): never wait past
		 * our own deadline whatever it says. Rounded up so we never
		 * spin on a sub-millisecond timeout. */
		if (ares_timeout(r->ch, &maxtv, &tv)) {
			uint64_t t = (uint64_t)tv.tv_sec * 1000 + ((uint64_t)tv.tv_usec + 999) / 1000;
			if (t < left)
				ms = (int)t;
		}
		if (*timeout_ms < 0 || ms < *timeout_ms)
			*timeout_ms = ms;
	}
	return (int)n;
}

void resolver_dispatch(void *userdata, const struct pollfd *fds, size_t n)
{
	struct resolver *r = userdata;

	if (resolver_done(r))
		return;
	for (size_t i = 0; i < n; i++) {
		ares_socket_t rd = ARES_SOCKET_BAD, wr = ARES_SOCKET_BAD;
		if (fds[i].revents & (POLLIN | POLLERR | POLLHUP))
			rd = fds[i].fd;
		if (fds[i].revents & POLLOUT)
			wr = fds[i].fd;
		if (rd != ARES_SOCKET_BAD || wr != ARES_SOCKET_BAD)
			ares_process_fd(r->ch, rd, wr);
	}
	/* timeouts and retries */
	ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	if (!resolver_done(r) && monoclock_ms() >= r->deadline_ms)
		expire(r);
	else
		launch(r);
}

int resolver_run(struct resolver *r)
{
	struct pollfd fds[ARES_GETSOCK_MAXNUM];

	while (!resolver_done(r)) {
		int timeout = -1, n;

		n = resolver_prepare(r, fds, ELEMENTSOF(fds), &timeout);
		if (n < 0)
			return n;
		if (resolver_done(r))
			break;
		if (poll(fds, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		resolver_dispatch(r, fds, (size_t)n);
	}
	return 0;
}
