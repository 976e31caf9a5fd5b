/* SPDX-License-Identifier: MIT */
/* The firewall's nftables ruleset as data: libnftnl objects serialised into
 * one netlink batch (one transaction) in a caller-provided buffer, with a
 * human description per message so a failed ack names its rule. Pure code:
 * no socket here; firewall/nftsock.c sends what this builds.
 *
 * Also the element batch the DNS gate's admit path sends, and the parser and
 * comparator that read a ruleset dump back into libnftnl objects and check
 * it against what was built (used by the read-back verification and by the
 * unit tests). */
#ifndef CS_NFTBATCH_H
#define CS_NFTBATCH_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "allowlist.h"

#define NFTBATCH_MAX_UPSTREAMS 8        /* resolv.conf servers PID 1 may query */
#define NFTBATCH_MAX_EXCEPTIONS 16      /* allowlisted addresses inside the metadata block */
#define NFTBATCH_MAX_PORT_RANGES (ALLOWLIST_MAX_ENTRIES + 1)
#define NFTBATCH_MAX_SEGMENTS (2 * NFTBATCH_MAX_PORT_RANGES + 1)
#define NFTBATCH_MAX_ELEMS 65536        /* elements in one batch */
#define NFTBATCH_ELEMS_PER_MSG 128      /* one NEWSETELEM carries at most this many */
/* Upper bound of one serialised message: a rule (≤ 24 expressions of ≤ 64
 * bytes) or NFTBATCH_ELEMS_PER_MSG elements of ≤ 96 bytes each. The nested
 * element list must stay below 64 KiB (u16 attribute length). */
#define NFTBATCH_MAX_MSG ((size_t)16384)
#define NFTBATCH_DESC_MAX 192
#define NFTBATCH_LOG_RATE_PER_S 10      /* blocked-packet log lines per second */
#define NFTBATCH_LOG_BURST 20

/* One element of allow_v4/allow_v6: an address or CIDR, a port range, and a
 * lifetime (0 = none: addresses the allowlist names literally). */
struct nftbatch_elem {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;              /* network address, host bits zero */
	unsigned prefix_len; /* 32/128 for one address */
	uint16_t port_lo, port_hi;
	uint32_t timeout_ms;
};

/* The port ranges named anywhere in the allowlist, cut into disjoint
 * segments. Every element is stored once per segment its range covers, so
 * two entries whose ranges overlap (example.com:400-500 and other.com:443
 * resolving to the same address) produce identical elements (which the
 * kernel accepts as a refresh) instead of partially overlapping intervals
 * (which pipapo rejects with EEXIST). */
struct nftbatch_ports {
	uint16_t range_lo[NFTBATCH_MAX_PORT_RANGES], range_hi[NFTBATCH_MAX_PORT_RANGES];
	size_t n_ranges;
	uint16_t seg_lo[NFTBATCH_MAX_SEGMENTS], seg_hi[NFTBATCH_MAX_SEGMENTS];
	size_t n_segments;
};

/* Registers a range [lo, hi] (lo <= hi, else -EINVAL); -E2BIG past the
 * limit. Call nftbatch_ports_finish() after the last one. */
int nftbatch_ports_add(struct nftbatch_ports *p, uint16_t lo, uint16_t hi);
void nftbatch_ports_finish(struct nftbatch_ports *p);

/* Expands, filters and merges elements for the sets:
 *  - every element becomes one element per port segment of its range
 *    (-ERANGE when its range was never registered);
 *  - an element contained in a permanent (timeout 0) element of `permanent`
 *    or of `in` itself, on the same segment, is dropped (pipapo refuses
 *    overlapping intervals, and the wider one already admits it);
 *  - exact duplicates are merged, keeping the longest lifetime (0 wins).
 * Elements with a timeout must be single addresses (-EINVAL otherwise): only
 * literal allowlist entries may be CIDRs. On success *ret (malloc'ed, caller
 * frees) holds *ret_n elements sorted by family, address, prefix, port. */
int nftbatch_elems_normalize(const struct nftbatch_ports *ports,
			     const struct nftbatch_elem *permanent, size_t n_permanent,
			     const struct nftbatch_elem *in, size_t n_in,
			     struct nftbatch_elem **ret, size_t *ret_n);

/* Formats "198.51.100.10 . 443" / "2001:db8::/32 . 8000-8100 timeout 60s". */
void nftbatch_elem_format(const struct nftbatch_elem *e, char *buf, size_t size);

/* The sidecar exemption (lib/sidecar.h): sockets owned by uid may query
 * the upstreams directly and reach dests (networks and port ranges, no
 * timeout; never loopback or a range the firewall blocks). */
#define NFTBATCH_MAX_SIDECAR_DESTS 32
struct nftbatch_sidecar {
	uint32_t uid; /* never 0: lib/sidecar.c validates it */
	const struct nftbatch_elem *dests;
	size_t n_dests;
};

/* What the ruleset admits. Addresses of `upstreams` are host addresses
 * (prefix_len full, ports ignored). `elems` must come out of
 * nftbatch_elems_normalize(). */
struct nftbatch_config {
	const char *table; /* FW_TABLE, or a test table */
	const struct nftbatch_elem *upstreams;
	size_t n_upstreams;
	const struct nftbatch_elem *elems;
	size_t n_elems;
	const struct nftbatch_sidecar *sidecar; /* NULL: no sidecar exemption */
};

enum nftbatch_msg_kind {
	NFTBATCH_MSG_TABLE,
	NFTBATCH_MSG_CHAIN,
	NFTBATCH_MSG_SET,
	NFTBATCH_MSG_RULE,
	NFTBATCH_MSG_ELEMS,
	NFTBATCH_MSG_KIND_MAX,
};

/* One message of the batch, by sequence number. */
struct nftbatch_msg {
	uint32_t seq;
	enum nftbatch_msg_kind kind;
	int family;             /* ELEMS: AF_INET or AF_INET6 */
	size_t offset;          /* of its nlmsghdr in the buffer */
	size_t first_elem;      /* ELEMS: index into the batch's element array */
	size_t n_elems;
	char desc[NFTBATCH_DESC_MAX]; /* "rule output#5: ip daddr . tcp dport @allow_v4 counter accept" */
};

struct nftnl_table;
struct nftnl_chain;
struct nftnl_set;
struct nftnl_rule;

/* A built (or parsed) ruleset: the objects and, for a built one, its
 * serialised batch. */
struct nftbatch {
	/* serialised batch: [begin, msgs..., end] in buf[0..len) */
	char *buf;
	size_t buf_size, len;
	uint32_t seq_first, seq_last; /* of the batch begin and end markers */
	struct nftbatch_msg *msgs;
	size_t n_msgs, cap_msgs;

	/* objects, owned */
	struct nftnl_table *table;
	struct nftnl_chain **chains;
	size_t n_chains;
	struct nftnl_set **sets;     /* allow_v4, allow_v6 (elements inside) */
	size_t n_sets;
	struct nftnl_rule **rules;   /* in order, across chains */
	size_t n_rules, cap_rules;
	const struct nftbatch_elem *elems; /* borrowed from the builder's caller */
	size_t n_elems;
};

/* Bytes of buffer a ruleset with n_elems elements needs (upper bound). */
size_t nftbatch_buffer_size(size_t n_elems);

/* Builds the whole ruleset for `table inet cfg->table` as ONE transaction in
 * buf[0..size): add table; delete table; add table (so a re-run atomically
 * replaces our table and nothing else), sets, chains, rules, elements.
 * Sequence numbers start at seq. *b must be zeroed; on success it owns the
 * objects and points at buf (which stays the caller's) and cfg->elems
 * (borrowed: keep it alive). Returns 0, -ENOBUFS when buf is too small,
 * -EINVAL for a bad config, -E2BIG past a limit, -ENOMEM. On failure *b is
 * freed again. */
int nftbatch_build_ruleset(struct nftbatch *b, const struct nftbatch_config *cfg, char *buf,
			   size_t size, uint32_t seq);

/* Builds the element-add batch the admit path sends: NEWSETELEM messages
 * (no NLM_F_EXCL, so re-adding an element refreshes its timeout) for the
 * already-normalised elems, in one transaction. Same ownership rules. */
int nftbatch_build_elements(struct nftbatch *b, const char *table,
			    const struct nftbatch_elem *elems, size_t n_elems, char *buf,
			    size_t size, uint32_t seq);

/* Message whose sequence number is seq, or NULL. */
const struct nftbatch_msg *nftbatch_find_seq(const struct nftbatch *b, uint32_t seq);

/* Given an error's attribute offset (from NLMSGERR_ATTR_OFFS, relative to
 * the failing message's nlmsghdr), the index into b->elems of the element
 * that failed, or -ENOENT. */
int nftbatch_elem_at_offset(const struct nftbatch *b, const struct nftbatch_msg *m,
			    uint32_t offset);

/* Prints the ruleset in nft syntax from the builder's descriptions. */
void nftbatch_print(const struct nftbatch *b, FILE *f);

/* Frees the objects and message records; leaves buf alone. NULL-safe. */
void nftbatch_done(struct nftbatch *b);

/* Read-back: feeds netlink messages (a GET dump's NEWTABLE/NEWCHAIN/NEWSET/
 * NEWRULE/NEWSETELEM replies, or a batch: DELTABLE then discards what came
 * before) into *parsed, a zeroed struct nftbatch that collects objects only.
 * Messages of other tables are ignored. Returns 0, -EBADMSG on a message
 * libnftnl cannot parse, -ENOMEM. */
int nftbatch_parse_msg(struct nftbatch *parsed, const char *table, const void *nlh);

/* Feeds every message in buf[0..len) to nftbatch_parse_msg(). */
int nftbatch_parse_buf(struct nftbatch *parsed, const char *table, const void *buf, size_t len);

/* Compares what was built with what was read back: table, chains (type,
 * hook, priority, policy), sets (flags, key type and length, concatenation),
 * rules in order (expression by expression; counter values ignored),
 * elements (key, end, timeout; order ignored). Returns 0 when equal, or
 * -EPROTO with a description of the first difference in reterr. */
int nftbatch_compare(const struct nftbatch *built, const struct nftbatch *parsed, char *reterr,
		     size_t reterr_size);

#endif
