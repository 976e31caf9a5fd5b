/* SPDX-License-Identifier: MIT */
/* The egress firewall: configuration, installation, admission. See
 * firewall.h and docs/architecture.md ("Firewall"). */
#include "firewall.h"

#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "allowlist_load.h"
#include "log.h"
#include "macros.h"
#include "monoclock.h"
#include "netaddr.h"
#include "nftsock.h"

/* What was admitted with a timeout, and until when (CLOCK_MONOTONIC ms):
 * re-adding an element sets its timeout to the new value, so an address
 * shared by two names (a CDN) would otherwise lose the longer lifetime of
 * the first answer to a later, shorter TTL of the second. Elements that
 * already live long enough are left alone. */
struct track {
	uint64_t expires_ms;
	struct nftbatch_elem e; /* per port segment, as sent; timeout_ms unused */
};

struct firewall {
	const struct firewall_config *c;
	struct nftsock *nft;
	struct track *track;
	size_t n_track;
};

static bool same_elem(const struct nftbatch_elem *a, const struct nftbatch_elem *b)
{
	return a->family == b->family && a->port_lo == b->port_lo && a->port_hi == b->port_hi &&
	       a->prefix_len == b->prefix_len &&
	       memcmp(&a->addr, &b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

static struct track *track_find(struct firewall *fw, const struct nftbatch_elem *e, uint64_t now)
{
	for (size_t i = 0; i < fw->n_track; i++)
		if (fw->track[i].expires_ms > now && same_elem(&fw->track[i].e, e))
			return &fw->track[i];
	return NULL;
}

/* Records that e lives until now + its timeout. Best effort: when the table
 * is full of live entries the element is just not remembered (then a
 * later shorter answer may shorten it, as without tracking). */
static void track_note(struct firewall *fw, const struct nftbatch_elem *e, uint64_t now)
{
	struct track *t = track_find(fw, e, now);

	if (!t) {
		if (fw->n_track == FIREWALL_TRACK_MAX) {
			size_t k = 0;
			for (size_t i = 0; i < fw->n_track; i++)
				if (fw->track[i].expires_ms > now)
					fw->track[k++] = fw->track[i];
			fw->n_track = k;
		}
		if (fw->n_track == FIREWALL_TRACK_MAX)
			return;
		t = &fw->track[fw->n_track++];
		t->e = *e;
	}
	t->expires_ms = now + e->timeout_ms;
}

/* Reads a small regular file whole (resolv.conf); ret_st (may be NULL)
 * gets the fstat() of what was read, after any symlink. -EINVAL for
 * anything but a regular file. O_NONBLOCK: a FIFO in its place must not
 * hang PID 1 at open(). */
static int read_small_file(const char *path, char **ret, size_t *ret_len, struct stat *ret_st)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	if (fd < 0)
		return negative_errno();
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (ret_st)
		*ret_st = st;
	buf = malloc(RESOLVE_MAX_RESOLV_CONF);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + len, RESOLVE_MAX_RESOLV_CONF - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == RESOLVE_MAX_RESOLV_CONF)
			return -EFBIG;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

static void entry_to_elem(const struct allowlist_entry *e, struct nftbatch_elem *out)
{
	*out = (struct nftbatch_elem){
		.family = e->family,
		.prefix_len = e->prefix_len,
		.port_lo = e->port_lo,
		.port_hi = e->port_hi,
	};
	if (e->family == AF_INET)
		out->addr.v4 = e->addr.v4;
	else
		out->addr.v6 = e->addr.v6;
}

int firewall_config_load(struct firewall_config *c, const char *allowlist_path,
			 const char *resolv_conf)
{
	_cleanup_free_ struct nftbatch_elem *lit = NULL;
	_cleanup_free_ char *text = NULL;
	size_t n_lit = 0, len = 0;
	const char *dns;
	struct stat st;
	int r;

	(void)snprintf(c->table, sizeof(c->table), "%s", FW_TABLE);
	c->resolve_deadline_ms = RESOLVE_DEADLINE_MS;

	/* The allowlist: --allowlist, $CODE_SANDBOX_ALLOWLIST or the baked
	 * file, then $EXTRA_ALLOWED_DOMAINS; a bad line names file:line. */
	r = allowlist_load_config(&c->al, allowlist_path, c->allowlist_path, sizeof(c->allowlist_path));
	if (r < 0)
		return r; /* allowlist_load_config logged file:line: reason */

	/* Ports named anywhere in the allowlist, cut into segments. */
	r = nftbatch_ports_add(&c->ports, ALLOWLIST_DEFAULT_PORT, ALLOWLIST_DEFAULT_PORT);
	for (size_t i = 0; r >= 0 && i < c->al.n; i++)
		r = nftbatch_ports_add(&c->ports, c->al.entries[i].port_lo, c->al.entries[i].port_hi);
	if (r < 0)
		return log_error_errno(r, "Invalid port ranges in the allowlist: %s", strerror(-r));
	nftbatch_ports_finish(&c->ports);

	/* Literal addresses and CIDRs: in the sets for good. */
	lit = calloc(c->al.n + 1, sizeof(*lit));
	if (!lit)
		return log_error_errno(-ENOMEM, "Out of memory");
	for (size_t i = 0; i < c->al.n; i++)
		if (c->al.entries[i].kind == ALLOWLIST_ADDR)
			entry_to_elem(&c->al.entries[i], &lit[n_lit++]);
	r = nftbatch_elems_normalize(&c->ports, NULL, 0, lit, n_lit, &c->literals, &c->n_literals);
	if (r < 0)
		return log_error_errno(r, "Invalid address entries in the allowlist: %s", strerror(-r));

	/* The container's resolvers, before the DNS gate points resolv.conf
	 * at itself. None is not fatal: the default deny still goes in, but
	 * nothing can be resolved. */
	if (!resolv_conf)
		resolv_conf = FIREWALL_RESOLV_CONF;
	dns = secure_getenv(FIREWALL_ENV_DNS);
	if (dns) {
		/* The launcher's choice (a read-only root whose resolv.conf it
		 * points at the gate itself); never a silent fallback. */
		r = resolve_parse_server_list(dns, c->servers, RESOLVE_MAX_SERVERS);
		if (r < 0)
			return log_error_errno(r, FIREWALL_ENV_DNS "='%s' is not a list of at most %d IP addresses",
					       dns, RESOLVE_MAX_SERVERS);
		c->n_servers = (size_t)r;
		resolv_conf = FIREWALL_ENV_DNS;
	} else if ((r = read_small_file(resolv_conf, &text, &len, &st)) < 0)
		log_warn_errno(r, "Failed to read '%s': %s, resolving nothing", resolv_conf, strerror(-r));
	else if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		/* Whoever can write it picks the upstream of the next start
		 * (its nameserver and "# code-sandbox upstream" lines), and
		 * the gate admits whatever that upstream answers for an
		 * allowed name: the agent must not be able to. */
		return log_error_errno(-EPERM,
				       "'%s' is writable by others than root (owner %u, mode %04o): refusing its resolvers",
				       resolv_conf, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	else
		c->n_servers = resolve_parse_resolv_conf(text, len, c->servers, RESOLVE_MAX_SERVERS);
	if (c->n_servers == 0)
		log_warn("No usable nameserver in '%s': allowlisted names cannot be resolved, ignoring",
			 resolv_conf);
	/* The gate listens on loopback:53 itself; a resolv.conf that already
	 * points there (a re-run after the gate rewrote it) would loop. */
	for (size_t i = 0; i < c->n_servers; i++) {
		static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
		const struct resolve_server *s = &c->servers[i];
		if ((s->family == AF_INET && s->addr.v4.s_addr == htonl(INADDR_LOOPBACK)) ||
		    (s->family == AF_INET6 && memcmp(&s->addr.v6, &lo6, sizeof(lo6)) == 0))
			return log_error_errno(-EINVAL,
					       "Nameserver in '%s' is the DNS gate's own address (a read-only resolv.conf needs "
					       FIREWALL_ENV_DNS ")",
					       resolv_conf);
	}
	return 0;
}

void firewall_config_done(struct firewall_config *c)
{
	allowlist_free(&c->al);
	free(c->literals);
	c->literals = NULL;
	c->n_literals = 0;
}

size_t firewall_config_upstreams(const struct firewall_config *c, struct sockaddr_storage *out,
				 size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_servers && n < max; i++, n++) {
		memset(&out[n], 0, sizeof(out[n]));
		if (c->servers[i].family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&out[n];
			sin->sin_family = AF_INET;
			sin->sin_port = htons(53);
			sin->sin_addr = c->servers[i].addr.v4;
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out[n];
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(53);
			sin6->sin6_addr = c->servers[i].addr.v6;
		}
	}
	return n;
}

/* Names to resolve: exact names and the base names of suffix entries,
 * each once. */
static int collect_names(const struct allowlist *al, struct resolve_name **ret, size_t *ret_n)
{
	_cleanup_free_ struct resolve_name *names = calloc(al->n + 1, sizeof(*names));
	size_t n = 0;

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < al->n; i++) {
		const struct allowlist_entry *e = &al->entries[i];
		bool dup = false;

		if (e->kind != ALLOWLIST_NAME_EXACT && e->kind != ALLOWLIST_NAME_SUFFIX)
			continue;
		for (size_t k = 0; k < n && !dup; k++)
			dup = strcmp(names[k].name, e->name) == 0;
		if (dup)
			continue;
		(void)snprintf(names[n].name, sizeof(names[n].name), "%s", e->name);
		n++;
	}
	*ret = TAKE_PTR(names);
	*ret_n = n;
	return 0;
}

static uint32_t lifetime_ms(uint32_t ttl)
{
	if (ttl < FW_TTL_FLOOR_S)
		ttl = FW_TTL_FLOOR_S;
	if (ttl > FW_TTL_CEIL_S)
		ttl = FW_TTL_CEIL_S;
	return (ttl + FW_TTL_GRACE_S) * 1000u;
}

static const void *raddr(const struct resolve_addr *a)
{
	return a->family == AF_INET ? (const void *)&a->addr.v4 : (const void *)&a->addr.v6;
}

/* Resolved addresses as elements, one per (address, entry naming the
 * name): the entry's ports, the answer's TTL. Loopback, link-local,
 * metadata and private answers are dropped unless the allowlist names the
 * address (DNS rebinding: an allowed name must not open a way to the
 * metadata service or the host's network). */
static int resolved_elems(const struct firewall_config *c, const struct resolve_name *names,
			  size_t n_names, struct nftbatch_elem **ret, size_t *ret_n)
{
	size_t cap = 0, n = 0;
	_cleanup_free_ struct nftbatch_elem *out = NULL;

	for (size_t i = 0; i < n_names; i++)
		cap += names[i].n_addrs;
	cap *= 4; /* several entries may name the same name */
	out = calloc(cap + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < c->al.n; i++) {
		const struct allowlist_entry *e = &c->al.entries[i];
		const struct resolve_name *nm = NULL;

		if (e->kind != ALLOWLIST_NAME_EXACT && e->kind != ALLOWLIST_NAME_SUFFIX)
			continue;
		for (size_t k = 0; k < n_names && !nm; k++)
			if (strcmp(names[k].name, e->name) == 0)
				nm = &names[k];
		for (size_t k = 0; nm && k < nm->n_addrs; k++) {
			const struct resolve_addr *a = &nm->addrs[k];
			char buf[INET6_ADDRSTRLEN] = "?";

			if ((netaddr_is_forbidden(a->family, raddr(a)) ||
			     allowlist_addr_is_gateway(&c->al, a->family, raddr(a))) &&
			    !allowlist_contains_addr(&c->al, a->family, raddr(a))) {
				(void)inet_ntop(a->family, raddr(a), buf, sizeof(buf));
				log_warn("'%s' resolves to %s (%s), not admitted, ignoring", nm->name, buf,
					 allowlist_addr_is_gateway(&c->al, a->family, raddr(a))
						 ? "the container's gateway"
						 : netaddr_class_to_string(netaddr_classify(a->family, raddr(a))));
				continue;
			}
			/* Named by the file's own entry ('special'): that entry's
			 * element opens it, on its ports only, never the name's. */
			if (netaddr_is_forbidden(a->family, raddr(a)) ||
			    allowlist_addr_is_gateway(&c->al, a->family, raddr(a)))
				continue;
			if (n == cap) {
				struct nftbatch_elem *p = realloc(out, 2 * cap * sizeof(*out));
				if (!p)
					return -ENOMEM;
				out = p;
				cap *= 2;
			}
			out[n] = (struct nftbatch_elem){
				.family = a->family,
				.addr = { .v4 = a->addr.v4 },
				.prefix_len = a->family == AF_INET ? 32 : 128,
				.port_lo = e->port_lo,
				.port_hi = e->port_hi,
				.timeout_ms = lifetime_ms(a->ttl),
			};
			if (a->family == AF_INET6)
				out[n].addr.v6 = a->addr.v6;
			n++;
		}
	}
	*ret = TAKE_PTR(out);
	*ret_n = n;
	return 0;
}

static const char *ares_status_str(int st)
{
	return st < 0 ? "not finished" : ares_strerror(st);
}

static void firewall_freep(struct firewall **fw)
{
	*fw = firewall_free(*fw);
}

int firewall_install(const struct firewall_config *c, struct firewall **ret,
		     struct firewall_stats *stats)
{
	_cleanup_free_ struct resolve_name *names = NULL;
	_cleanup_free_ struct nftbatch_elem *dyn = NULL, *all = NULL;
	_cleanup_free_ char *buf = NULL;
	_cleanup_(firewall_freep) struct firewall *fw = NULL;
	struct firewall_stats st = { 0 };
	struct nftbatch b = { 0 };
	struct resolver *res = NULL;
	size_t n_names = 0, n_dyn = 0, n_all, size;
	uint64_t t0 = monoclock_us(), t;
	char err[NFTSOCK_ERR_MAX];
	int r;

	fw = calloc(1, sizeof(*fw));
	if (!fw)
		return log_error_errno(-ENOMEM, "Out of memory");
	fw->c = c;

	/* Resolve every name at once. Failures only leave names out: the
	 * gate can admit them later, nothing is allowed because of them. */
	r = collect_names(&c->al, &names, &n_names);
	if (r < 0)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return log_error_errno(r, "Out of memory");
	st.names = n_names;
	if (n_names > 0 && c->n_servers > 0) {
		r = resolver_new(&res, c->servers, c->n_servers, names, n_names, c->resolve_deadline_ms);
		if (r < 0)
			/* cppcheck-suppress memleak ; freed by its cleanup attribute */
			return log_error_errno(r, "Failed to set up the resolver: %s", strerror(-r));
		r = resolver_run(res);
		/* destroyed here, before anything forks: no resolver socket
		 * may leak into the agent */
		res = resolver_free(res);
		if (r < 0)
			/* cppcheck-suppress memleak ; freed by its cleanup attribute */
			return log_error_errno(r, "Failed to resolve the allowlist: %s", strerror(-r));
	}
	for (size_t i = 0; i < n_names; i++) {
		if (names[i].n_addrs > 0) {
			st.names_resolved++;
			continue;
		}
		st.names_failed++;
		log_warn("Failed to resolve '%s' (A: %s, AAAA: %s), the DNS gate may admit it later, ignoring",
			 names[i].name, ares_status_str(names[i].status[RESOLVE_A]),
			 ares_status_str(names[i].status[RESOLVE_AAAA]));
	}
	t = monoclock_us();
	st.resolve_us = t - t0;

	r = resolved_elems(c, names, n_names, &dyn, &n_dyn);
	if (r < 0)
		return log_error_errno(r, "Out of memory");
	{
		_cleanup_free_ struct nftbatch_elem *norm = NULL;
		size_t n_norm = 0;

		r = nftbatch_elems_normalize(&c->ports, c->literals, c->n_literals, dyn, n_dyn, &norm,
					     &n_norm);
		if (r < 0)
			return log_error_errno(r, "Failed to prepare set elements: %s", strerror(-r));
		fw->track = calloc(FIREWALL_TRACK_MAX, sizeof(*fw->track));
		if (!fw->track)
			return log_error_errno(-ENOMEM, "Out of memory");
		for (size_t i = 0; i < n_norm; i++)
			track_note(fw, &norm[i], monoclock_us() / 1000);
		n_all = c->n_literals + n_norm;
		all = calloc(n_all + 1, sizeof(*all));
		if (!all)
			return log_error_errno(-ENOMEM, "Out of memory");
		if (c->n_literals)
			memcpy(all, c->literals, c->n_literals * sizeof(*all));
		if (n_norm)
			memcpy(all + c->n_literals, norm, n_norm * sizeof(*all));
	}
	st.elements = n_all;

	r = nftsock_open(&fw->nft);
	if (r < 0)
		return log_error_errno(r, "Failed to open a netfilter netlink socket: %s", strerror(-r));
	{
		struct nftbatch_elem ups[RESOLVE_MAX_SERVERS];
		struct nftbatch_config cfg = {
			.table = c->table,
			.upstreams = ups,
			.n_upstreams = c->n_servers,
			.elems = all,
			.n_elems = n_all,
			.sidecar = c->sidecar,
		};

		for (size_t i = 0; i < c->n_servers; i++) {
			ups[i] = (struct nftbatch_elem){ .family = c->servers[i].family };
			if (ups[i].family == AF_INET) {
				ups[i].addr.v4 = c->servers[i].addr.v4;
				ups[i].prefix_len = 32;
			} else {
				ups[i].addr.v6 = c->servers[i].addr.v6;
				ups[i].prefix_len = 128;
			}
		}
		size = nftbatch_buffer_size(n_all);
		buf = malloc(size);
		if (!buf) {
			fw->nft = nftsock_close(fw->nft);
			return log_error_errno(-ENOMEM, "Out of memory");
		}
		r = nftbatch_build_ruleset(&b, &cfg, buf, size, nftsock_seq(fw->nft));
		if (r < 0) {
			fw->nft = nftsock_close(fw->nft);
			return log_error_errno(r, "Failed to build the nftables batch: %s", strerror(-r));
		}
	}
	st.build_us = monoclock_us() - t;
	t = monoclock_us();

	r = nftsock_send(fw->nft, &b, err, sizeof(err));
	if (r < 0) {
		log_error_errno(r, "Failed to install table inet %s: %s", c->table, err);
		goto fail;
	}
	st.commit_us = monoclock_us() - t;
	t = monoclock_us();
	/* Read back: what the kernel holds is what we meant, or we stop. */
	r = nftsock_verify(fw->nft, &b, err, sizeof(err));
	if (r < 0) {
		log_error_errno(r, "Table inet %s read back differs from what was installed: %s",
				c->table, err);
		goto fail;
	}
	st.verify_us = monoclock_us() - t;
	st.total_us = monoclock_us() - t0;
	log_info("Firewall: table inet %s installed and verified: %zu names (%zu resolved, %zu failed), %zu elements, %llu ms",
		 c->table, st.names, st.names_resolved, st.names_failed, st.elements,
		 (unsigned long long)(st.total_us / 1000));
	nftbatch_done(&b);
	if (stats)
		*stats = st;
	*ret = TAKE_PTR(fw);
	return 0;
fail:
	nftbatch_done(&b);
	fw->nft = nftsock_close(fw->nft);
	return r;
}

int firewall_admit(void *userdata, const struct fw_admit *elems, size_t n)
{
	struct firewall *fw = userdata;
	const struct firewall_config *c = fw->c;
	_cleanup_free_ struct nftbatch_elem *in = NULL, *norm = NULL;
	_cleanup_free_ char *buf = NULL;
	struct nftbatch b = { 0 };
	size_t n_norm = 0, size;
	char err[NFTSOCK_ERR_MAX];
	uint64_t now;
	int r;

	if (n == 0)
		return 0;
	if (n > FIREWALL_ADMIT_MAX)
		return -E2BIG;
	in = calloc(n, sizeof(*in));
	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		in[i] = (struct nftbatch_elem){
			.family = elems[i].family,
			.prefix_len = elems[i].family == AF_INET ? 32 : 128,
			.port_lo = elems[i].port_lo,
			.port_hi = elems[i].port_hi,
			/* An address learnt from DNS always expires, so the
			 * sets never go stale; 0 is for literal entries. */
			.timeout_ms = elems[i].timeout_ms ? elems[i].timeout_ms
							  : lifetime_ms(FW_TTL_CEIL_S),
		};
		if (elems[i].family == AF_INET)
			in[i].addr.v4 = elems[i].addr.v4;
		else if (elems[i].family == AF_INET6)
			in[i].addr.v6 = elems[i].addr.v6;
		else
			return -EAFNOSUPPORT;
	}
	r = nftbatch_elems_normalize(&c->ports, c->literals, c->n_literals, in, n, &norm, &n_norm);
	if (r < 0)
		return log_warn_errno(r, "Cannot admit %zu addresses: %s", n, strerror(-r));
	/* Leave alone what already lives at least as long as this answer
	 * says (see struct track). */
	now = monoclock_us() / 1000;
	{
		size_t k = 0;
		for (size_t i = 0; i < n_norm; i++) {
			const struct track *t = track_find(fw, &norm[i], now);
			if (t && t->expires_ms >= now + norm[i].timeout_ms)
				continue;
			norm[k++] = norm[i];
		}
		n_norm = k;
	}
	if (n_norm == 0)
		return 0; /* all covered by literal entries or live long enough */
	size = 4 * NFTBATCH_MAX_MSG + n_norm * 128;
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	r = nftbatch_build_elements(&b, c->table, norm, n_norm, buf, size, nftsock_seq(fw->nft));
	if (r < 0)
		return log_warn_errno(r, "Failed to build the element batch: %s", strerror(-r));
	r = nftsock_send(fw->nft, &b, err, sizeof(err));
	if (r < 0)
		log_warn_errno(r, "Failed to admit into table inet %s: %s", c->table, err);
	else
		for (size_t i = 0; i < n_norm; i++)
			track_note(fw, &norm[i], now);
	nftbatch_done(&b);
	return r;
}

int firewall_print_check(const struct firewall_config *c, FILE *f)
{
	_cleanup_free_ char *buf = NULL;
	struct nftbatch_elem ups[RESOLVE_MAX_SERVERS];
	struct nftbatch b = { 0 };
	size_t size = nftbatch_buffer_size(c->n_literals);
	int r;

	fprintf(f, "# allowlist (%s), %zu entries\n", c->allowlist_path, c->al.n);
	allowlist_print(f, &c->al);
	fprintf(f, "# upstream DNS servers (PID 1 only):");
	for (size_t i = 0; i < c->n_servers; i++) {
		char a[INET6_ADDRSTRLEN] = "?";
		(void)inet_ntop(c->servers[i].family, &c->servers[i].addr, a, sizeof(a));
		fprintf(f, " %s", a);
	}
	fprintf(f, "%s\n# ruleset (names are resolved at start and by the DNS gate; literal elements shown)\n",
		c->n_servers ? "" : " none");
	for (size_t i = 0; i < c->n_servers; i++) {
		ups[i] = (struct nftbatch_elem){ .family = c->servers[i].family,
						 .prefix_len = c->servers[i].family == AF_INET ? 32 : 128 };
		memcpy(&ups[i].addr, &c->servers[i].addr, sizeof(ups[i].addr));
	}
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	{
		struct nftbatch_config cfg = { .table = c->table,
					       .upstreams = ups,
					       .n_upstreams = c->n_servers,
					       .elems = c->literals,
					       .n_elems = c->n_literals,
					       .sidecar = c->sidecar };
		r = nftbatch_build_ruleset(&b, &cfg, buf, size, 1);
	}
	if (r < 0)
		return log_error_errno(r, "Failed to build the ruleset: %s", strerror(-r));
	nftbatch_print(&b, f);
	nftbatch_done(&b);
	return 0;
}

int firewall_resolv_conf_write(const struct firewall_config *c, const char *path, bool ipv6)
{
	char text[1024], *old = NULL;
	size_t len = 0, old_len = 0, off = 0;
	int fd, r;

	len = (size_t)snprintf(text, sizeof(text),
			       "# Written by sandbox-init: every DNS query goes through its gate.\n");
	for (size_t i = 0; i < c->n_servers; i++) {
		char a[INET6_ADDRSTRLEN] = "?";
		(void)inet_ntop(c->servers[i].family, &c->servers[i].addr, a, sizeof(a));
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s\n", RESOLVE_UPSTREAM_MARK, a);
	}
	len += (size_t)snprintf(text + len, sizeof(text) - len, "nameserver 127.0.0.1\n%s",
				ipv6 ? "nameserver ::1\n" : "");
	if (len >= sizeof(text))
		return -E2BIG;
	/* Already right (a warm start): leave the file, and its ctime, alone. */
	if (read_small_file(path, &old, &old_len, NULL) >= 0) {
		bool same = old && old_len == len && memcmp(old, text, len) == 0;
		free(old);
		if (same)
			return 0;
	}
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return negative_errno();
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = negative_errno();
			(void)close(fd);
			return r;
		}
		off += (size_t)n;
	}
	r = ftruncate(fd, (off_t)len) < 0 ? negative_errno() : 0;
	/* EINVAL: a special file, nothing to sync */
	if (r == 0 && fsync(fd) < 0 && errno != EINVAL)
		r = negative_errno();
	(void)close(fd);
	return r;
}

bool firewall_resolv_conf_points_at_gate(const char *path)
{
	static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
	struct resolve_server servers[RESOLVE_MAX_SERVERS];
	_cleanup_free_ char *text = NULL;
	size_t len = 0, n;

	if (read_small_file(path, &text, &len, NULL) < 0)
		return false;
	n = resolve_parse_nameservers(text, len, servers, RESOLVE_MAX_SERVERS);
	for (size_t i = 0; i < n; i++)
		if (!((servers[i].family == AF_INET && servers[i].addr.v4.s_addr == htonl(INADDR_LOOPBACK)) ||
		      (servers[i].family == AF_INET6 && memcmp(&servers[i].addr.v6, &lo6, sizeof(lo6)) == 0)))
			return false;
	return n > 0;
}

int firewall_teardown(struct firewall *fw)
{
	char err[NFTSOCK_ERR_MAX];
	int r = nftsock_delete_table(fw->nft, fw->c->table, err, sizeof(err));

	if (r < 0)
		return log_error_errno(r, "Failed to delete table inet %s: %s", fw->c->table, err);
	return 0;
}

struct firewall *firewall_free(struct firewall *fw)
{
	if (!fw)
		return NULL;
	fw->nft = nftsock_close(fw->nft);
	free(fw->track);
	free(fw);
	return NULL;
}
