/* SPDX-License-Identifier: MIT */
/* The DNS gate: PID 1 answers every DNS query of the container on
 * 127.0.0.1:53 and [::1]:53 (UDP and TCP). Names the allowlist admits are
 * resolved upstream with the gate's own c-ares channel; the A/AAAA addresses
 * of the answer (through CNAMEs) are admitted into the firewall's sets before
 * the answer is returned, so the agent's next connect() succeeds. Every
 * other name is REFUSED without a packet leaving the container. See
 * docs/architecture.md "DNS gate" for the policy and its reasons.
 *
 * Single-threaded and non-blocking: the gate is a source of PID 1's poll loop
 * (lib/loopsrc.h, run by init/loop.h) and never blocks, never exits, never aborts on input. */
#ifndef CS_GATE_H
#define CS_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "allowlist.h"
#include "fwconst.h"
#include "loopsrc.h"

#define GATE_PORT 53
#define GATE_MAX_UPSTREAMS 8
#define GATE_MAX_INFLIGHT 256      /* queries waiting for upstream; more get SERVFAIL */
#define GATE_MAX_TCP_CONNS 32      /* more are closed at once */
#define GATE_TCP_IDLE_MS 10000     /* RFC 7766 6.2.3 suggests "a few seconds" */
#define GATE_MAX_TCP_QUERY 1024    /* a query (one question, one OPT) is far smaller */
#define GATE_MAX_RESPONSE 8192     /* > the largest response the gate builds */
#define GATE_MAX_ENTRIES_PER_NAME 8 /* allowlist entries (port ranges) one name collects */
#define GATE_UDP_BATCH 64          /* datagrams read per socket per loop round */
#define GATE_TCP_ACCEPT_BATCH 64   /* connections accepted per listener per loop round */
#define GATE_UPSTREAM_TIMEOUT_MS 2000
#define GATE_UPSTREAM_TRIES 2
#define GATE_LOG_INTERVAL_MS 10000 /* rate limit of refused/rebinding log lines */
#define GATE_LOG_BURST 10
#define GATE_MAX_FDS (4 + GATE_MAX_TCP_CONNS + 16)
/* Live addresses the gate admits for one query name, and in all: a name
 * whose zone keeps re-pointing it (or a suffix entry's subdomains, each
 * with an address of its own) must not fill the sets without bound. An
 * address past a cap is stripped from the answer and logged. */
#define GATE_DYN_MAX_PER_NAME 32
#define GATE_DYN_MAX_TOTAL 2048

struct gate_config {
	const struct allowlist *allowlist; /* borrowed: must outlive the gate */
	/* The container's original resolvers (from its resolv.conf before the
	 * gate rewrote it), with their ports; 1..GATE_MAX_UPSTREAMS. Copied. */
	const struct sockaddr_storage *upstreams;
	size_t n_upstreams;
	fw_admit_fn admit; /* firewall_admit(); called before every positive answer */
	void *admit_userdata;
	uint16_t port; /* 0: GATE_PORT; tests may listen elsewhere */
	/* Test-only: shorter TTL floor and grace than FW_TTL_FLOOR_S and
	 * FW_TTL_GRACE_S, so expiry can be observed in seconds. Production
	 * code leaves test_ttl false; the defaults then apply. */
	bool test_ttl;
	uint32_t test_ttl_floor_s, test_ttl_grace_s;
	/* Test-only: lower caps than GATE_DYN_MAX_PER_NAME/_TOTAL (0: those). */
	size_t test_dyn_max_per_name, test_dyn_max_total;
};

struct gate_stats {
	uint64_t queries;      /* well-formed queries received */
	uint64_t forwarded;    /* sent upstream */
	uint64_t answered;     /* positive answers returned after admission */
	uint64_t refused;      /* names not in the allowlist */
	uint64_t nodata;       /* allowlisted names, types the gate does not forward */
	uint64_t malformed;    /* dropped or answered FORMERR/NOTIMP/BADVERS */
	uint64_t upstream_errors; /* timeouts, bad answers: SERVFAIL */
	uint64_t overload;     /* in-flight or TCP limit reached */
	uint64_t admitted;     /* addresses admitted */
	uint64_t admit_errors; /* admit callback failures: SERVFAIL */
	uint64_t rebinding;    /* addresses stripped by the rebinding filter */
	uint64_t capped;       /* addresses stripped at GATE_DYN_MAX_PER_NAME/_TOTAL */
};

struct gate;

/* Creates the gate: binds UDP and TCP on 127.0.0.1 and ::1 (port cfg->port;
 * needs CAP_NET_BIND_SERVICE for 53, so call it before PID 1 drops its
 * capabilities) and creates its c-ares channel on the given upstreams. The
 * IPv6 sockets are skipped when the kernel has no IPv6 loopback (logged).
 * Returns 0, -EINVAL (bad config, or an upstream that is the gate itself),
 * -ENOMEM, -EIO (c-ares), or the errno of socket/bind/listen. */
int gate_new(const struct gate_config *cfg, struct gate **ret);

/* Destroys the channel (pending queries are dropped without answer), closes
 * every socket. NULL-safe; returns NULL. */
struct gate *gate_free(struct gate *g);

/* The loop source (lib/loopsrc.h, run by init/loop.h) that drives the gate. */
void gate_loop_source(struct gate *g, struct loop_source *ret);

/* The two loop callbacks, exposed for drivers without init's loop. */
int gate_prepare(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms);
void gate_dispatch(void *userdata, const struct pollfd *fds, size_t n);

void gate_get_stats(const struct gate *g, struct gate_stats *ret);

/* True when the gate listens on [::1]:port too. */
bool gate_has_ipv6(const struct gate *g);


#endif
