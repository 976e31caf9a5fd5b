/* SPDX-License-Identifier: MIT */
#include "gate.h"

#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dnsmsg.h"
#include "log.h"
#include "macros.h"
#include "monoclock.h"
#include "netaddr.h"
#include "ratelimit.h"

#define GATE_MAX_ADMIT ((size_t)DNSMSG_MAX_ADDRS * GATE_MAX_ENTRIES_PER_NAME)
#define GATE_TCP_BACKLOG 64
#define GATE_NAME_TEXT 1024 /* escaped name for logs: up to 4 bytes per wire byte */

enum gate_fd_kind {
	GATE_FD_UDP4,
	GATE_FD_UDP6,
	GATE_FD_TCP4,
	GATE_FD_TCP6,
	GATE_FD_CONN,
	GATE_FD_ARES,
	GATE_FD_KIND_MAX,
};

enum conn_state {
	CONN_FREE,
	CONN_READ,     /* waiting for (the rest of) a query */
	CONN_UPSTREAM, /* a query is with c-ares; not reading */
	CONN_WRITE,    /* a response is partly written */
	CONN_STATE_MAX,
};

struct gate_conn {
	int fd;
	enum conn_state state;
	uint32_t gen; /* bumped on close, so late answers for it are dropped */
	uint64_t deadline_ms;
	uint8_t rbuf[2 + GATE_MAX_TCP_QUERY];
	size_t rlen;
	uint8_t wbuf[2 + GATE_MAX_RESPONSE];
	size_t wlen, woff;
};

/* Where a query came from, to send its response back. */
struct gate_origin {
	enum gate_fd_kind kind; /* UDP4, UDP6 or CONN */
	struct sockaddr_storage peer;
	socklen_t peer_len;
	size_t conn;
	uint32_t conn_gen;
};

struct gate_pending {
	bool used;
	struct gate *gate;
	struct gate_origin origin;
	struct dnsmsg_query q;
	const struct allowlist_entry *entries[GATE_MAX_ENTRIES_PER_NAME];
	size_t n_entries;
};

/* An address the gate admitted, for the caps: the query name by hash
 * (64-bit FNV-1a: two names sharing a quota by collision only lose). */
struct gate_dyn {
	uint64_t expires_ms; /* 0: free */
	uint64_t name_hash;
	int family;
	uint8_t addr[16];
};

struct gate_fdref {
	enum gate_fd_kind kind;
	size_t conn;
	int fd;
};

struct gate {
	const struct allowlist *al;
	fw_admit_fn admit;
	void *admit_userdata;
	uint32_t ttl_floor_s, ttl_grace_s;
	uint16_t port;

	int udp4, udp6, tcp4, tcp6;
	struct gate_conn conns[GATE_MAX_TCP_CONNS];
	ares_channel channel;
	bool ares_inited;

	struct gate_pending pending[GATE_MAX_INFLIGHT];
	size_t n_pending;

	/* What prepare() put where, for dispatch(). */
	struct gate_fdref fdrefs[GATE_MAX_FDS];
	size_t n_fdrefs;

	struct fw_admit admit_buf[GATE_MAX_ADMIT];
	uint8_t out[GATE_MAX_RESPONSE];
	uint8_t in[DNSMSG_MAX_MSG];

	struct gate_dyn dyn[GATE_DYN_MAX_TOTAL];
	size_t dyn_used; /* dyn[dyn_used..] never used: scans stop there, pages stay untouched */
	size_t dyn_max_per_name, dyn_max_total;

	struct ratelimit rl_refused, rl_rebind, rl_error, rl_cap;
	struct gate_stats stats;
};

static const char *qtype_name(uint16_t t)
{
	switch (t) {
	case DNSMSG_TYPE_A:
		return "A";
	case DNSMSG_TYPE_AAAA:
		return "AAAA";
	case DNSMSG_TYPE_CNAME:
		return "CNAME";
	case DNSMSG_TYPE_TXT:
		return "TXT";
	case DNSMSG_TYPE_MX:
		return "MX";
	case DNSMSG_TYPE_NS:
		return "NS";
	case DNSMSG_TYPE_SOA:
		return "SOA";
	case DNSMSG_TYPE_PTR:
		return "PTR";
	case DNSMSG_TYPE_SVCB:
		return "SVCB";
	case DNSMSG_TYPE_HTTPS:
		return "HTTPS";
	case DNSMSG_TYPE_ANY:
		return "ANY";
	default:
		return "other";
	}
}

/* ---- sockets ---- */

static int listen_socket(int family, int type, uint16_t port, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int one = 1;

	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		/* Only ::1; IPv4 has its own socket. */
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
			return negative_errno();
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		s6->sin6_addr = in6addr_loopback;
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*s4);
	}
	if (type == SOCK_STREAM && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		return negative_errno();
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0)
		return negative_errno();
	if (type == SOCK_STREAM && listen(fd, GATE_TCP_BACKLOG) < 0)
		return negative_errno();
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static bool is_self(const struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		return ntohs(s4->sin_port) == port && s4->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		return ntohs(s6->sin6_port) == port &&
		       memcmp(&s6->sin6_addr, &in6addr_loopback, sizeof(struct in6_addr)) == 0;
	}
	return false;
}

static int channel_setup(struct gate *g, const struct gate_config *cfg)
{
	struct ares_options opts = {0};
	struct ares_addr_port_node nodes[GATE_MAX_UPSTREAMS] = {0};
	char lookups[] = "b";
	int k;

	k = ares_library_init(ARES_LIB_INIT_ALL);
	if (k != ARES_SUCCESS)
		return -EIO;
	g->ares_inited = true;

	/* NOSEARCH/NOALIASES: the gate forwards exactly the client's name.
	 * ares_send() ignores them but they keep the channel honest should it
	 * be used otherwise. The channel never reads the rewritten
	 * resolv.conf for servers: they are set explicitly below. */
	opts.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	opts.timeout = GATE_UPSTREAM_TIMEOUT_MS;
	opts.tries = GATE_UPSTREAM_TRIES;
	opts.lookups = lookups;
	k = ares_init_options(&g->channel, &opts,
			      ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS);
	if (k != ARES_SUCCESS) {
		g->channel = NULL;
		return k == ARES_ENOMEM ? -ENOMEM : -EIO;
	}
	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		const struct sockaddr_storage *ss = &cfg->upstreams[i];
		struct ares_addr_port_node *n = &nodes[i];

		n->next = i + 1 < cfg->n_upstreams ? &nodes[i + 1] : NULL;
		n->family = ss->ss_family;
		if (ss->ss_family == AF_INET) {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

			n->addr.addr4 = s4->sin_addr;
			n->udp_port = n->tcp_port = ntohs(s4->sin_port);
		} else {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

			memcpy(&n->addr.addr6, &s6->sin6_addr, sizeof(s6->sin6_addr));
			n->udp_port = n->tcp_port = ntohs(s6->sin6_port);
		}
	}
	k = ares_set_servers_ports(g->channel, nodes);
	if (k != ARES_SUCCESS)
		return k == ARES_ENOMEM ? -ENOMEM : -EIO;
	return 0;
}

int gate_new(const struct gate_config *cfg, struct gate **ret)
{
	struct gate *g;
	int k;

	if (!cfg || !cfg->allowlist || !cfg->admit || !cfg->upstreams || cfg->n_upstreams == 0 ||
	    cfg->n_upstreams > GATE_MAX_UPSTREAMS)
		return -EINVAL;
	if (cfg->test_ttl && (cfg->test_ttl_floor_s == 0 || cfg->test_ttl_floor_s > FW_TTL_CEIL_S))
		return -EINVAL;
	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		const struct sockaddr_storage *ss = &cfg->upstreams[i];

		if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6)
			return -EINVAL;
		/* Forwarding to ourselves would loop every allowed query. */
		if (is_self(ss, cfg->port ? cfg->port : GATE_PORT))
			return -EINVAL;
	}

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->udp4 = g->udp6 = g->tcp4 = g->tcp6 = -1;
	for (size_t i = 0; i < GATE_MAX_TCP_CONNS; i++)
		g->conns[i].fd = -1;
	g->al = cfg->allowlist;
	g->admit = cfg->admit;
	g->admit_userdata = cfg->admit_userdata;
	g->port = cfg->port ? cfg->port : GATE_PORT;
	g->ttl_floor_s = cfg->test_ttl ? cfg->test_ttl_floor_s : FW_TTL_FLOOR_S;
	g->dyn_max_per_name = cfg->test_dyn_max_per_name && cfg->test_dyn_max_per_name < GATE_DYN_MAX_PER_NAME
				      ? cfg->test_dyn_max_per_name
				      : GATE_DYN_MAX_PER_NAME;
	g->dyn_max_total = cfg->test_dyn_max_total && cfg->test_dyn_max_total < GATE_DYN_MAX_TOTAL
				   ? cfg->test_dyn_max_total
				   : GATE_DYN_MAX_TOTAL;
	g->ttl_grace_s = cfg->test_ttl ? cfg->test_ttl_grace_s : FW_TTL_GRACE_S;
	g->rl_refused = (struct ratelimit)RATELIMIT_INIT(GATE_LOG_INTERVAL_MS, GATE_LOG_BURST);
	g->rl_rebind = (struct ratelimit)RATELIMIT_INIT(GATE_LOG_INTERVAL_MS, GATE_LOG_BURST);
	g->rl_cap = (struct ratelimit)RATELIMIT_INIT(GATE_LOG_INTERVAL_MS, GATE_LOG_BURST);
	g->rl_error = (struct ratelimit)RATELIMIT_INIT(GATE_LOG_INTERVAL_MS, GATE_LOG_BURST);

	k = listen_socket(AF_INET, SOCK_DGRAM, g->port, &g->udp4);
	if (k < 0) {
		log_error_errno(k, "DNS gate: cannot bind 127.0.0.1:%u/udp: %s", g->port, strerror(-k));
		goto fail;
	}
	k = listen_socket(AF_INET, SOCK_STREAM, g->port, &g->tcp4);
	if (k < 0) {
		log_error_errno(k, "DNS gate: cannot bind 127.0.0.1:%u/tcp: %s", g->port, strerror(-k));
		goto fail;
	}
	k = listen_socket(AF_INET6, SOCK_DGRAM, g->port, &g->udp6);
	if (k == -EADDRNOTAVAIL || k == -EAFNOSUPPORT) {
		/* IPv6 disabled in this network namespace: ::1 does not exist,
		 * so nothing can reach it either. */
		log_info("DNS gate: no IPv6 loopback, listening on 127.0.0.1 only");
	} else if (k < 0) {
		log_error_errno(k, "DNS gate: cannot bind [::1]:%u/udp: %s", g->port, strerror(-k));
		goto fail;
	} else {
		k = listen_socket(AF_INET6, SOCK_STREAM, g->port, &g->tcp6);
		if (k < 0) {
			log_error_errno(k, "DNS gate: cannot bind [::1]:%u/tcp: %s", g->port, strerror(-k));
			goto fail;
		}
	}
	k = channel_setup(g, cfg);
	if (k < 0) {
		log_error_errno(k, "DNS gate: cannot set up the c-ares channel: %s", strerror(-k));
		goto fail;
	}
	*ret = g;
	return 0;
fail:
	(void)gate_free(g);
	return k;
}

static void conn_close(struct gate_conn *c)
{
	c->fd = safe_close(c->fd);
	c->state = CONN_FREE;
	c->gen++;
	c->rlen = c->wlen = c->woff = 0;
}

struct gate *gate_free(struct gate *g)
{
	if (!g)
		return NULL;
	if (g->channel) {
		/* Calls every pending callback with ARES_EDESTRUCTION. */
		ares_destroy(g->channel);
		g->channel = NULL;
	}
	if (g->ares_inited)
		ares_library_cleanup();
	for (size_t i = 0; i < GATE_MAX_TCP_CONNS; i++)
		if (g->conns[i].fd >= 0)
			conn_close(&g->conns[i]);
	g->udp4 = safe_close(g->udp4);
	g->udp6 = safe_close(g->udp6);
	g->tcp4 = safe_close(g->tcp4);
	g->tcp6 = safe_close(g->tcp6);
	free(g);
	return NULL;
}

void gate_get_stats(const struct gate *g, struct gate_stats *ret)
{
	*ret = g->stats;
}

bool gate_has_ipv6(const struct gate *g)
{
	return g->udp6 >= 0;
}

/* ---- responses ---- */

static void conn_try_write(struct gate *g, size_t idx);

/* Sends a built response (out[0..len)) back where the query came from.
 * Failures are counted, never fatal: the client retries. */
static void send_response(struct gate *g, const struct gate_origin *o, const uint8_t *msg,
			  size_t len)
{
	if (o->kind == GATE_FD_UDP4 || o->kind == GATE_FD_UDP6) {
		int fd = o->kind == GATE_FD_UDP4 ? g->udp4 : g->udp6;

		/* EAGAIN (full socket buffer) and ECONNREFUSED (client gone)
		 * drop the response: UDP clients retry. */
		if (sendto(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&o->peer,
			   o->peer_len) < 0)
			g->stats.overload++;
		return;
	}
	if (o->kind == GATE_FD_CONN) {
		struct gate_conn *c = &g->conns[o->conn];

		if (c->state != CONN_UPSTREAM || c->gen != o->conn_gen)
			return; /* closed meanwhile */
		dnsmsg_tcp_put_length(c->wbuf, len);
		memcpy(c->wbuf + 2, msg, len);
		c->wlen = len + 2;
		c->woff = 0;
		c->state = CONN_WRITE;
		conn_try_write(g, o->conn);
	}
}

static size_t response_limit(const struct gate_origin *o, const struct dnsmsg_query *q)
{
	if (o->kind == GATE_FD_CONN)
		return GATE_MAX_RESPONSE;
	return dnsmsg_udp_limit(q);
}

static void respond_rcode(struct gate *g, const struct gate_origin *o, const struct dnsmsg_query *q,
			  unsigned rcode)
{
	size_t n;

	if (dnsmsg_build_response(q, rcode, NULL, 0, response_limit(o, q), g->out, sizeof(g->out),
				  &n) < 0)
		return;
	send_response(g, o, g->out, n);
}

static void log_limited(struct ratelimit *rl, const char *what, const char *name,
			uint16_t qtype, const char *why)
{
	uint64_t suppressed;

	if (!ratelimit_allow(rl, monoclock_ms(), &suppressed))
		return;
	if (suppressed)
		log_warn("DNS gate: %llu similar messages suppressed", (unsigned long long)suppressed);
	log_warn("DNS gate: %s '%s' (%s): %s", what, name, qtype_name(qtype), why);
}

/* ---- upstream answers ---- */

static uint32_t admit_timeout_ms(const struct gate *g, uint32_t ttl)
{
	uint32_t t = ttl;

	if (t < g->ttl_floor_s)
		t = g->ttl_floor_s;
	if (t > FW_TTL_CEIL_S)
		t = FW_TTL_CEIL_S;
	return (t + g->ttl_grace_s) * 1000u;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 0x100000001b3ULL;
	return h;
}

/* Whether the gate may admit ad for the query name hashed h until
 * now + timeout: yes when it is live already (its record then lives as long
 * as the longer of the two) or both caps leave room (recorded). Returns NULL
 * when admitted, else which cap stopped it. */
static const char *dyn_admit(struct gate *g, uint64_t h, const struct dnsmsg_addr *ad, uint64_t now,
			     uint32_t timeout_ms)
{
	size_t len = ad->family == AF_INET ? 4 : 16, live = 0, for_name = 0;
	struct gate_dyn *free_slot = NULL;

	for (size_t i = 0; i < g->dyn_used; i++) {
		struct gate_dyn *d = &g->dyn[i];

		if (d->expires_ms <= now) {
			if (!free_slot)
				free_slot = d;
			continue;
		}
		live++;
		if (d->name_hash != h)
			continue;
		if (d->family == ad->family && memcmp(d->addr, &ad->addr, len) == 0) {
			if (d->expires_ms < now + timeout_ms)
				d->expires_ms = now + timeout_ms;
			return NULL;
		}
		for_name++;
	}
	if (for_name >= g->dyn_max_per_name)
		return "per-name cap of live admitted addresses reached";
	if (!free_slot && g->dyn_used < GATE_DYN_MAX_TOTAL)
		free_slot = &g->dyn[g->dyn_used++];
	if (live >= g->dyn_max_total || !free_slot)
		return "total cap of live admitted addresses reached";
	*free_slot = (struct gate_dyn){.expires_ms = now + timeout_ms, .name_hash = h, .family = ad->family};
	memcpy(free_slot->addr, &ad->addr, len);
	return NULL;
}

static void pending_release(struct gate *g, struct gate_pending *p)
{
	p->used = false;
	g->n_pending--;
}

/* Decides what of a validated answer the client gets and admits it:
 * addresses the rebinding filter forbids are stripped (unless the allowlist
 * names them), the rest are admitted with each matching entry's ports, then
 * the response is built from what survived. */
static void answer_ready(struct gate *g, struct gate_pending *p, struct dnsmsg_answer *a)
{
	size_t kept = 0, n_admit = 0, n;
	int k;

	if (a->rcode != DNSMSG_RCODE_NOERROR) {
		/* NXDOMAIN passes through; anything odd becomes SERVFAIL. */
		unsigned rc = a->rcode == DNSMSG_RCODE_NXDOMAIN ? a->rcode : DNSMSG_RCODE_SERVFAIL;

		respond_rcode(g, &p->origin, &p->q, rc);
		return;
	}
	uint64_t h = name_hash(p->q.name), now = monoclock_ms();

	for (size_t i = 0; i < a->n_addrs; i++) {
		struct dnsmsg_addr *ad = &a->addrs[i];
		enum netaddr_class c = netaddr_classify(ad->family, &ad->addr);
		const char *cap;

		/* The container's own gateway is special-purpose even when
		 * its address is public (lib/allowlist.h). */
		if (c == NETADDR_PUBLIC && allowlist_addr_is_gateway(g->al, ad->family, &ad->addr))
			c = NETADDR_RESERVED;
		if (c != NETADDR_PUBLIC && !allowlist_contains_addr(g->al, ad->family, &ad->addr)) {
			char addr[INET6_ADDRSTRLEN], why[128];

			g->stats.rebinding++;
			(void)inet_ntop(ad->family, &ad->addr, addr, sizeof(addr));
			(void)snprintf(why, sizeof(why),
				       "answer %s is %s, not admitted (DNS rebinding filter)", addr,
				       allowlist_addr_is_gateway(g->al, ad->family, &ad->addr)
					       ? "the container's gateway"
					       : netaddr_class_to_string(c));
			log_limited(&g->rl_rebind, "stripped an address of", p->q.name, p->q.qtype,
				    why);
			continue;
		}
		/* Named by the file's own entry ('special'): that entry's
		 * element opens it, on that entry's ports only. The answer
		 * keeps it, but the name's ports never widen it. */
		if (c != NETADDR_PUBLIC) {
			a->addrs[kept++] = *ad;
			continue;
		}
		cap = dyn_admit(g, h, ad, now, admit_timeout_ms(g, ad->ttl));
		if (cap) {
			char addr[INET6_ADDRSTRLEN], why[160];

			g->stats.capped++;
			(void)inet_ntop(ad->family, &ad->addr, addr, sizeof(addr));
			(void)snprintf(why, sizeof(why), "answer %s not admitted: %s", addr, cap);
			log_limited(&g->rl_cap, "stripped an address of", p->q.name, p->q.qtype, why);
			continue;
		}
		a->addrs[kept++] = *ad;
		for (size_t e = 0; e < p->n_entries && n_admit < GATE_MAX_ADMIT; e++) {
			struct fw_admit *fa = &g->admit_buf[n_admit++];

			memset(fa, 0, sizeof(*fa));
			fa->family = ad->family;
			if (ad->family == AF_INET)
				fa->addr.v4 = ad->addr.v4;
			else
				fa->addr.v6 = ad->addr.v6;
			fa->port_lo = p->entries[e]->port_lo;
			fa->port_hi = p->entries[e]->port_hi;
			fa->timeout_ms = admit_timeout_ms(g, ad->ttl);
		}
	}
	a->n_addrs = kept;

	if (n_admit > 0) {
		/* Admission before the answer: the client's next connect()
		 * must find the address in the set. */
		k = g->admit(g->admit_userdata, g->admit_buf, n_admit);
		if (k < 0) {
			g->stats.admit_errors++;
			log_limited(&g->rl_error, "could not admit the addresses of", p->q.name,
				    p->q.qtype, "firewall update failed, answering SERVFAIL");
			respond_rcode(g, &p->origin, &p->q, DNSMSG_RCODE_SERVFAIL);
			return;
		}
		g->stats.admitted += kept;
	}
	/* Answer TTLs are capped at the ceiling so no client caches an address
	 * longer than the firewall admits it. */
	k = dnsmsg_build_response(&p->q, DNSMSG_RCODE_NOERROR, a, FW_TTL_CEIL_S,
				  response_limit(&p->origin, &p->q), g->out, sizeof(g->out), &n);
	if (k < 0) {
		log_debug("DNS gate: cannot build the response for '%s': %d", p->q.name, k);
		respond_rcode(g, &p->origin, &p->q, DNSMSG_RCODE_SERVFAIL);
		return;
	}
	g->stats.answered++;
	send_response(g, &p->origin, g->out, n);
}

static void on_upstream(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct gate_pending *p = arg;
	struct gate *g = p->gate;
	struct dnsmsg_answer a;
	int k;

	(void)timeouts;
	if (status == ARES_EDESTRUCTION) {
		/* The gate is going away: no socket to answer on. */
		pending_release(g, p);
		return;
	}
	if (status != ARES_SUCCESS || !abuf || alen <= 0) {
		g->stats.upstream_errors++;
		log_limited(&g->rl_error, "upstream failed for", p->q.name, p->q.qtype,
			    ares_strerror(status));
		respond_rcode(g, &p->origin, &p->q, DNSMSG_RCODE_SERVFAIL);
		pending_release(g, p);
		return;
	}
	k = dnsmsg_parse_answer(abuf, (size_t)alen, &p->q.qname, p->q.qtype, &a);
	if (k < 0) {
		g->stats.upstream_errors++;
		log_limited(&g->rl_error, "unusable upstream answer for", p->q.name, p->q.qtype,
			    k == -ELOOP ? "CNAME loop or chain too long" : "malformed or mismatched");
		respond_rcode(g, &p->origin, &p->q, DNSMSG_RCODE_SERVFAIL);
		pending_release(g, p);
		return;
	}
	answer_ready(g, p, &a);
	pending_release(g, p);
}

/* ---- queries ---- */

static struct gate_pending *pending_alloc(struct gate *g)
{
	if (g->n_pending >= GATE_MAX_INFLIGHT)
		return NULL;
	for (size_t i = 0; i < GATE_MAX_INFLIGHT; i++)
		if (!g->pending[i].used) {
			struct gate_pending *p = &g->pending[i];

			memset(p, 0, sizeof(*p));
			p->used = true;
			p->gate = g;
			g->n_pending++;
			return p;
		}
	return NULL;
}

/* Handles one query. Returns true when the response is pending upstream
 * (TCP then stops reading that connection until it is sent). */
static bool handle_query(struct gate *g, const struct gate_origin *o, const uint8_t *msg, size_t len)
{
	struct dnsmsg_query q;
	struct gate_pending *p;
	const struct allowlist_entry *e;
	uint8_t qbuf[DNSMSG_HEADER_SIZE + DNSMSG_MAX_WIRE_NAME + 4 + 11];
	size_t qlen;
	int k;

	k = dnsmsg_parse_query(msg, len, &q);
	if (k < 0) {
		g->stats.malformed++;
		return false;
	}
	if (k > 0) {
		/* FORMERR, NOTIMP, BADVERS: not worth a log line each (the
		 * counter shows them); REFUSED for names outside the hostname
		 * alphabet is logged like any refused name. */
		if (k == DNSMSG_RCODE_REFUSED) {
			char name[GATE_NAME_TEXT];

			g->stats.refused++;
			log_limited(&g->rl_refused, "refused query for",
				    dnsmsg_name_to_text(&q.qname, name, sizeof(name)), q.qtype,
				    "not a hostname");
		} else {
			g->stats.malformed++;
		}
		respond_rcode(g, o, &q, (unsigned)k);
		return false;
	}
	g->stats.queries++;
	e = q.qclass == DNSMSG_CLASS_IN ? allowlist_match_name(g->al, q.name) : NULL;
	if (!e) {
		g->stats.refused++;
		log_limited(&g->rl_refused, "refused query for", q.name, q.qtype,
			    "not in the allowlist");
		respond_rcode(g, o, &q, DNSMSG_RCODE_REFUSED);
		return false;
	}
	if (q.qtype != DNSMSG_TYPE_A && q.qtype != DNSMSG_TYPE_AAAA && q.qtype != DNSMSG_TYPE_CNAME) {
		/* Only address lookups leave the container: TXT, NULL, MX,
		 * HTTPS... of an allowlisted zone would be a data channel
		 * (DNS tunnelling) to whoever runs that zone. "No records of
		 * this type" lets clients fall back to A/AAAA at once, where
		 * REFUSED makes stub resolvers try the next server and fail. */
		g->stats.nodata++;
		log_debug("DNS gate: %s query for '%s' answered empty", qtype_name(q.qtype), q.name);
		respond_rcode(g, o, &q, DNSMSG_RCODE_NOERROR);
		return false;
	}
	p = pending_alloc(g);
	if (!p) {
		g->stats.overload++;
		respond_rcode(g, o, &q, DNSMSG_RCODE_SERVFAIL);
		return false;
	}
	p->origin = *o;
	p->q = q;
	for (; e && p->n_entries < GATE_MAX_ENTRIES_PER_NAME; e = allowlist_match_name_next(g->al, q.name, e))
		p->entries[p->n_entries++] = e;

	/* The gate's own query: only the validated name and type go out, none
	 * of the client's flags, EDNS options or extra records. */
	k = dnsmsg_build_query(0, &q.qname, q.qtype, true, qbuf, sizeof(qbuf), &qlen);
	if (k < 0) {
		respond_rcode(g, o, &q, DNSMSG_RCODE_SERVFAIL);
		pending_release(g, p);
		return false;
	}
	g->stats.forwarded++;
	/* May call on_upstream() at once (e.g. ENOMEM): p is complete. */
	ares_send(g->channel, qbuf, (int)qlen, on_upstream, p);
	return true;
}

static void udp_read(struct gate *g, int fd, enum gate_fd_kind kind)
{
	for (unsigned i = 0; i < GATE_UDP_BATCH; i++) {
		struct gate_origin o = {.kind = kind, .peer_len = sizeof(o.peer)};
		ssize_t n = recvfrom(fd, g->in, sizeof(g->in), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&o.peer, &o.peer_len);

		if (n < 0)
			return; /* EAGAIN: drained; other errors: next round */
		if ((size_t)n > sizeof(g->in)) {
			g->stats.malformed++;
			continue;
		}
		(void)handle_query(g, &o, g->in, (size_t)n);
	}
}

/* Bounded like udp_read(): an agent connecting from many processes as fast
 * as PID 1 accepts (and closes the surplus) must not keep PID 1 in here,
 * away from reaping and signal forwarding. poll() is level-triggered, so
 * what is left is accepted next round. */
static void tcp_accept(struct gate *g, int lfd)
{
	for (unsigned k = 0; k < GATE_TCP_ACCEPT_BATCH; k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		size_t i;

		if (fd < 0)
			return; /* EAGAIN, or a client that left (ECONNABORTED): next round */
		for (i = 0; i < GATE_MAX_TCP_CONNS; i++)
			if (g->conns[i].state == CONN_FREE)
				break;
		if (i == GATE_MAX_TCP_CONNS) {
			g->stats.overload++;
			(void)safe_close(fd);
			continue;
		}
		g->conns[i].fd = fd;
		g->conns[i].state = CONN_READ;
		g->conns[i].rlen = 0;
		g->conns[i].deadline_ms = monoclock_ms() + GATE_TCP_IDLE_MS;
	}
}

/* Processes whole frames in the connection's read buffer while it is
 * reading; stops when a query went upstream or a response waits to be
 * written. */
static void conn_process(struct gate *g, size_t idx)
{
	struct gate_conn *c = &g->conns[idx];

	while (c->state == CONN_READ) {
		size_t mlen;
		int k = dnsmsg_tcp_frame(c->rbuf, c->rlen, &mlen);
		struct gate_origin o = {.kind = GATE_FD_CONN, .conn = idx};

		if (k == 0) {
			/* A frame longer than any query cannot fit the buffer. */
			if (c->rlen >= 2 && ((size_t)c->rbuf[0] << 8 | c->rbuf[1]) > GATE_MAX_TCP_QUERY)
				goto bad;
			return;
		}
		if (k < 0)
			goto bad;
		memcpy(g->in, c->rbuf + 2, mlen);
		memmove(c->rbuf, c->rbuf + 2 + mlen, c->rlen - 2 - mlen);
		c->rlen -= 2 + mlen;
		c->state = CONN_UPSTREAM; /* so an immediate response finds it waiting */
		o.conn_gen = c->gen;
		if (handle_query(g, &o, g->in, mlen))
			return; /* stays CONN_UPSTREAM until on_upstream() */
		if (c->state == CONN_UPSTREAM) {
			/* Dropped (malformed): nothing to write, read on. */
			c->state = CONN_READ;
		}
	}
	return;
bad:
	g->stats.malformed++;
	conn_close(c);
}

static void conn_try_write(struct gate *g, size_t idx)
{
	struct gate_conn *c = &g->conns[idx];

	while (c->woff < c->wlen) {
		ssize_t n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return; /* POLLOUT next round */
			conn_close(c); /* EPIPE, ECONNRESET: the client left */
			return;
		}
		c->woff += (size_t)n;
	}
	c->wlen = c->woff = 0;
	c->state = CONN_READ;
	c->deadline_ms = monoclock_ms() + GATE_TCP_IDLE_MS;
	(void)g;
}

static void conn_read(struct gate *g, size_t idx)
{
	struct gate_conn *c = &g->conns[idx];
	ssize_t n = recv(c->fd, c->rbuf + c->rlen, sizeof(c->rbuf) - c->rlen, MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c);
		return;
	}
	if (n < 0)
		return;
	c->rlen += (size_t)n;
	c->deadline_ms = monoclock_ms() + GATE_TCP_IDLE_MS;
	conn_process(g, idx);
}

/* ---- loop source ---- */

static bool fdref_add(struct gate *g, struct pollfd *fds, size_t max, size_t *n, int fd,
		      short events, enum gate_fd_kind kind, size_t conn)
{
	if (*n >= max || *n >= GATE_MAX_FDS)
		return false;
	fds[*n] = (struct pollfd){.fd = fd, .events = events};
	g->fdrefs[*n] = (struct gate_fdref){.kind = kind, .conn = conn, .fd = fd};
	(*n)++;
	return true;
}

int gate_prepare(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct gate *g = userdata;
	ares_socket_t socks[ARES_GETSOCK_MAXNUM];
	struct timeval tv, *tvp;
	uint64_t now = monoclock_ms();
	size_t n = 0;
	unsigned bits;

	/* Listeners first: without them nothing else matters. */
	(void)fdref_add(g, fds, max, &n, g->udp4, POLLIN, GATE_FD_UDP4, 0);
	if (g->udp6 >= 0)
		(void)fdref_add(g, fds, max, &n, g->udp6, POLLIN, GATE_FD_UDP6, 0);
	(void)fdref_add(g, fds, max, &n, g->tcp4, POLLIN, GATE_FD_TCP4, 0);
	if (g->tcp6 >= 0)
		(void)fdref_add(g, fds, max, &n, g->tcp6, POLLIN, GATE_FD_TCP6, 0);

	/* ARES_GETSOCK_WRITABLE() shifts a signed 1 into bit 31: test the
	 * bits as unsigned instead. */
	bits = (unsigned)ares_getsock(g->channel, socks, ARES_GETSOCK_MAXNUM);
	for (unsigned i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
		short ev = 0;

		if (bits & (1u << i))
			ev |= POLLIN;
		if (bits & (1u << (i + ARES_GETSOCK_MAXNUM)))
			ev |= POLLOUT;
		if (ev)
			(void)fdref_add(g, fds, max, &n, socks[i], ev, GATE_FD_ARES, 0);
	}
	tvp = ares_timeout(g->channel, NULL, &tv);
	if (tvp) {
		long ms = tvp->tv_sec * 1000 + (tvp->tv_usec + 999) / 1000;

		if (*timeout_ms < 0 || ms < *timeout_ms)
			*timeout_ms = (int)ms;
	}

	for (size_t i = 0; i < GATE_MAX_TCP_CONNS; i++) {
		struct gate_conn *c = &g->conns[i];
		short ev = (short)(c->state == CONN_READ ? POLLIN : c->state == CONN_WRITE ? POLLOUT : 0);

		if (c->state == CONN_FREE || c->state == CONN_UPSTREAM)
			continue;
		if (!fdref_add(g, fds, max, &n, c->fd, ev, GATE_FD_CONN, i))
			break;
		if (c->deadline_ms > now) {
			uint64_t left = c->deadline_ms - now;

			if (*timeout_ms < 0 || left < (uint64_t)*timeout_ms)
				*timeout_ms = (int)left;
		} else {
			*timeout_ms = 0;
		}
	}
	g->n_fdrefs = n;
	return (int)n;
}

void gate_dispatch(void *userdata, const struct pollfd *fds, size_t n)
{
	struct gate *g = userdata;
	uint64_t now;

	if (n > g->n_fdrefs)
		n = g->n_fdrefs;
	/* Upstream answers first: they complete work already admitted. */
	for (size_t i = 0; i < n; i++) {
		const struct gate_fdref *r = &g->fdrefs[i];
		short rev = fds[i].revents;

		if (r->kind != GATE_FD_ARES || !rev)
			continue;
		ares_process_fd(g->channel,
				rev & (POLLIN | POLLERR | POLLHUP) ? r->fd : ARES_SOCKET_BAD,
				rev & (POLLOUT | POLLERR) ? r->fd : ARES_SOCKET_BAD);
	}
	/* Timeouts and retries. */
	ares_process_fd(g->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);

	for (size_t i = 0; i < n; i++) {
		const struct gate_fdref *r = &g->fdrefs[i];
		short rev = fds[i].revents;
		struct gate_conn *c;

		if (!rev)
			continue;
		switch (r->kind) {
		case GATE_FD_UDP4:
		case GATE_FD_UDP6:
			udp_read(g, r->fd, r->kind);
			break;
		case GATE_FD_TCP4:
		case GATE_FD_TCP6:
			tcp_accept(g, r->fd);
			break;
		case GATE_FD_CONN:
			c = &g->conns[r->conn];
			if (c->fd != r->fd)
				break; /* closed and maybe reused since prepare() */
			if (c->state == CONN_WRITE && (rev & POLLOUT))
				conn_try_write(g, r->conn);
			else if (c->state == CONN_READ && (rev & (POLLIN | POLLHUP | POLLERR)))
				conn_read(g, r->conn);
			else if (rev & (POLLERR | POLLHUP | POLLNVAL))
				conn_close(c);
			break;
		case GATE_FD_ARES:
		case GATE_FD_KIND_MAX:
		default:
			break;
		}
	}

	/* Pipelined queries left in a buffer once a response went out, and
	 * idle connections. */
	now = monoclock_ms();
	for (size_t i = 0; i < GATE_MAX_TCP_CONNS; i++) {
		struct gate_conn *c = &g->conns[i];

		if (c->state == CONN_READ && c->rlen > 0)
			conn_process(g, i);
		if ((c->state == CONN_READ || c->state == CONN_WRITE) && c->deadline_ms <= now)
			conn_close(c);
	}
}

void gate_loop_source(struct gate *g, struct loop_source *ret)
{
	*ret = (struct loop_source){
		.name = "dns-gate",
		.userdata = g,
		.prepare = gate_prepare,
		.dispatch = gate_dispatch,
	};
}
