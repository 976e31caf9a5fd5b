/* SPDX-License-Identifier: MIT */
/* Start-up resolution of every allowlisted name at once with c-ares 1.18,
 * driven by poll (ares_getsock / ares_process_fd / ares_timeout) under an
 * overall deadline. Single-threaded: usable from PID 1's loop (the
 * prepare/dispatch pair matches init/loop.h's struct loop_source) or
 * standalone (resolver_run). */
#ifndef CS_RESOLVE_H
#define CS_RESOLVE_H

#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allowlist.h"

#define RESOLVE_MAX_SERVERS 8           /* = NFTBATCH_MAX_UPSTREAMS */
#define RESOLVE_MAX_ADDRS 16            /* per name and family */
#define RESOLVE_MAX_INFLIGHT 512        /* queries outstanding at once */
#define RESOLVE_DEADLINE_MS 3000        /* default overall deadline */
#define RESOLVE_TIMEOUT_MS 400          /* first try; c-ares doubles it per round */
#define RESOLVE_TRIES 3
#define RESOLVE_SOCK_RCVBUF (4 << 20)   /* room for every in-flight reply */
#define RESOLVE_MAX_RESOLV_CONF 65536

struct resolve_server {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
};

struct resolve_addr {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint32_t ttl; /* seconds, as the answer gave it */
};

enum {
	RESOLVE_A,
	RESOLVE_AAAA,
	RESOLVE_QTYPE_MAX,
};

/* One name to resolve and, after the run, its answers. status[] holds the
 * c-ares status per query type (ARES_SUCCESS, ARES_ENOTFOUND, ARES_ETIMEOUT,
 * ARES_ECANCELLED at the deadline, ...); -1 while not finished. */
struct resolve_name {
	char name[ALLOWLIST_MAX_NAME + 1];
	struct resolve_addr addrs[2 * RESOLVE_MAX_ADDRS];
	size_t n_addrs;
	int status[RESOLVE_QTYPE_MAX];
};

struct resolver;

/* Marks the container's original resolvers in the resolv.conf that
 * sandbox-init rewrites to point at its DNS gate, so that a restarted
 * container (whose engine keeps the modified file) still finds them. */
#define RESOLVE_UPSTREAM_MARK "# code-sandbox upstream "

/* Parses resolv.conf text: the `# code-sandbox upstream ADDR` lines if
 * there are any (a file sandbox-init already rewrote), else every
 * `nameserver ADDR` line (IPv4 or IPv6; a scoped link-local address is
 * skipped, we could not reach it from the firewall rules by address
 * alone). Returns the number of servers stored (at most max; extra ones are
 * ignored, as libc does past MAXNS). */
size_t resolve_parse_resolv_conf(const char *text, size_t len, struct resolve_server *servers,
				 size_t max);

/* Only the "nameserver ADDR" lines of resolv.conf text (a file the gate
 * may not rewrite: does it already point at the gate?). */
size_t resolve_parse_nameservers(const char *text, size_t len, struct resolve_server *servers,
				 size_t max);

/* Parses a list of IPv4/IPv6 addresses separated by commas and/or blanks
 * (the launcher's CODE_SANDBOX_DNS). Returns the count (at least 1), -EINVAL
 * for an empty list or anything that is not an address (scoped addresses
 * included: they need an interface), -E2BIG for more than max. */
int resolve_parse_server_list(const char *list, struct resolve_server *servers, size_t max);

/* Creates a c-ares channel that asks exactly `servers` (not the current
 * /etc/resolv.conf), with short retry timeouts, a sized receive buffer and
 * no search domains. names[0..n) are borrowed and filled in as answers
 * arrive. The deadline counts from this call. Returns 0 or a negative
 * errno (-EINVAL without servers). */
int resolver_new(struct resolver **ret, const struct resolve_server *servers, size_t n_servers,
		 struct resolve_name *names, size_t n_names, unsigned deadline_ms);

/* Destroys the channel and closes its sockets (call before forking the
 * agent, so no resolver socket leaks into it). NULL-safe; returns NULL. */
struct resolver *resolver_free(struct resolver *r);

/* True once every query finished or the deadline passed. */
bool resolver_done(const struct resolver *r);

/* init/loop.h source interface. */
int resolver_prepare(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms);
void resolver_dispatch(void *userdata, const struct pollfd *fds, size_t n);

/* Runs its own poll loop until resolver_done(). Returns 0, or a negative
 * errno from poll(). Failed names are not an error. */
int resolver_run(struct resolver *r);

#endif
