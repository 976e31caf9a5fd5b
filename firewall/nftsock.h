/* SPDX-License-Identifier: MIT */
/* Netlink transport for the firewall: sends what lib/nftbatch.c built,
 * collects the ack of every message, and reads the table back. */
#ifndef CS_NFTSOCK_H
#define CS_NFTSOCK_H

#include <stddef.h>
#include <stdint.h>

#include "nftbatch.h"

#define NFTSOCK_ERR_MAX 512
#define NFTSOCK_RECV_BUF 65536     /* one recv of acks or dump replies */
#define NFTSOCK_REQ_BUF 8192        /* one GET request or the delete-table batch */
#define NFTSOCK_ACK_BOUND 256      /* bytes one (extended, capped) ack may take */
#define NFTSOCK_DUMP_RETRIES 3     /* a dump interrupted by a concurrent change */

struct nftsock;

/* Opens a NETLINK_NETFILTER socket with extended and capped acks.
 * Returns 0, or a negative errno (-EPERM without CAP_NET_ADMIN is only
 * reported at send time by the kernel). */
int nftsock_open(struct nftsock **ret);

/* NULL-safe; returns NULL. */
struct nftsock *nftsock_close(struct nftsock *s);

/* The next free sequence number: pass it to nftbatch_build_*(); after the
 * build, nftsock_send() advances it past the batch. */
uint32_t nftsock_seq(const struct nftsock *s);

/* Sends the batch in one sendmsg (one transaction) and checks the ack of
 * every message. Returns 0 when every message was acknowledged without
 * error; otherwise a negative errno with reterr naming the message
 * ("rule output#5: ...: Operation not supported (...)"), the element for
 * element messages when the kernel says which, or the batch as a whole
 * (-EPERM). -EPROTO when an ack is missing, -ENOBUFS when acks were lost. */
int nftsock_send(struct nftsock *s, const struct nftbatch *b, char *reterr, size_t size);

/* GETs table, chains, sets, elements and rules of `inet table` and parses
 * them into *parsed (zeroed by the caller, nftbatch_done() after). Returns
 * 0, -ENOENT when the table does not exist, or a negative errno. */
int nftsock_read_back(struct nftsock *s, const char *table, struct nftbatch *parsed);

/* Reads the table back and compares it with what was built. 0 when equal;
 * -EPROTO with the first difference in reterr; other negative errnos from
 * the read. */
int nftsock_verify(struct nftsock *s, const struct nftbatch *built, char *reterr, size_t size);

/* Deletes `table inet table` in its own one-message batch (tests and
 * teardown). -ENOENT when it did not exist. */
int nftsock_delete_table(struct nftsock *s, const char *table, char *reterr, size_t size);

#endif
