/* SPDX-License-Identifier: MIT */
/* Blocked-packet lines: PID 1 reads the packets the firewall's "log group
 * FW_NFLOG_GROUP" rule hands to nfnetlink_log and prints one rate-limited
 * line per blocked attempt on stderr, e.g.
 *   sandbox-init[1]: WARN: blocked tcp 198.51.100.20:443 from uid 1001 (not in the allowlist)
 * so the user sees why a connection failed. The kernel rule is rate-limited
 * too (NFTBATCH_LOG_RATE_PER_S); this is the second fence. */
#ifndef CS_NFLOG_H
#define CS_NFLOG_H

#include <stddef.h>
#include <stdint.h>

#include "loopsrc.h"

#define NFLOG_COPY_RANGE 128       /* bytes of each packet copied: IP + transport headers */
#define NFLOG_LOG_INTERVAL_MS 5000 /* at most NFLOG_LOG_BURST lines per interval */
#define NFLOG_LOG_BURST 20
#define NFLOG_RECV_BATCH 32        /* netlink reads per loop round */

struct nflog;

struct nflog_stats {
	uint64_t packets; /* blocked packets reported by the kernel */
	uint64_t printed; /* lines printed */
	uint64_t kernel;  /* packets without a sending socket: counted, not printed */
	uint64_t bad;     /* messages that could not be parsed */
	uint64_t lost;    /* ENOBUFS: the kernel dropped messages */
};

/* Binds group (FW_NFLOG_GROUP in production) on a new nfnetlink_log socket,
 * asking for a NFLOG_COPY_RANGE prefix of each packet and the sender's uid.
 * Needs CAP_NET_ADMIN: call before PID 1 drops its capabilities; the bound
 * socket keeps working afterwards. Returns 0, -EBUSY when another process
 * holds the group, or the errno of the netlink calls. */
int nflog_new(uint16_t group, struct nflog **ret);

/* Unbinds the group and closes the socket. NULL-safe; returns NULL. */
struct nflog *nflog_free(struct nflog *n);

void nflog_loop_source(struct nflog *n, struct loop_source *ret);
int nflog_prepare(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms);
void nflog_dispatch(void *userdata, const struct pollfd *fds, size_t n);

void nflog_get_stats(const struct nflog *n, struct nflog_stats *ret);

#endif
