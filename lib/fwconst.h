/* SPDX-License-Identifier: MIT */
/* Names and numbers shared by the firewall's pieces (batch builder in lib/, netlink
 * transport, DNS gate, blocked-packet logger) and its tests. */
#ifndef CS_FWCONST_H
#define CS_FWCONST_H

#include <netinet/in.h>
#include <stdint.h>

#define FW_TABLE "code_sandbox"  /* table inet code_sandbox; tests may use another name */
#define FW_SET_V4 "allow_v4"
#define FW_SET_V6 "allow_v6"
#define FW_NFLOG_GROUP 1053      /* nft "log group" read by PID 1 for blocked-packet lines */
#define FW_LOG_PREFIX "code-sandbox blocked: "

/* Lifetimes of addresses learnt from DNS: the record's TTL clamped to
 * [FLOOR, CEIL], plus GRACE so a connection started just before expiry is not
 * cut off by its own answer's timer. */
#define FW_TTL_FLOOR_S 30
#define FW_TTL_CEIL_S 3600
#define FW_TTL_GRACE_S 30

/* One address to admit into allow_v4/allow_v6, with the port range of the
 * allowlist entry that admitted it and how long it stays (0 = no timeout,
 * only for addresses the allowlist names literally). */
struct fw_admit {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	uint16_t port_lo, port_hi;
	uint32_t timeout_ms;
};

/* Adds elements to the sets in one netlink batch, every ack checked; returns
 * only after the kernel acknowledged them (so the caller may then answer the
 * DNS query), or a negative errno. Implemented by firewall.c
 * (firewall_admit), called by the DNS gate. */
typedef int (*fw_admit_fn)(void *userdata, const struct fw_admit *elems, size_t n);

#endif
