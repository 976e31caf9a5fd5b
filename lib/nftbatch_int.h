/* SPDX-License-Identifier: MIT */
/* What lib/nftbatch.c (building, printing) and lib/nftbatch_readback.c
 * (parsing a dump back, comparing) share: libnftnl cleanup helpers, the set
 * key layout, and attribute iteration. Internal to those two files. */
#ifndef CS_NFTBATCH_INT_H
#define CS_NFTBATCH_INT_H

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdbool.h>

#include "macros.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct nftnl_rule *, nftnl_rule_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nftnl_set *, nftnl_set_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nftnl_chain *, nftnl_chain_free)
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nftnl_table *, nftnl_table_free)

/* nft's datatype ids (nftables src/datatype.h), so `nft list` prints the
 * concatenated key types: TYPE_IPADDR 7, TYPE_IP6ADDR 8, TYPE_INET_SERVICE
 * 13, combined as (outer << 6) | inner. */
#define NFT_TYPE_BITS 6
#define NFT_TYPE_IPADDR 7
#define NFT_TYPE_IP6ADDR 8
#define NFT_TYPE_INET_SERVICE 13
#define KEY_TYPE_V4 ((NFT_TYPE_IPADDR << NFT_TYPE_BITS) | NFT_TYPE_INET_SERVICE)
#define KEY_TYPE_V6 ((NFT_TYPE_IP6ADDR << NFT_TYPE_BITS) | NFT_TYPE_INET_SERVICE)
/* Key layout: address, then the port in network order padded to a 32-bit
 * register: 4+4 and 16+4 bytes. */
#define KEY_LEN_V4 8
#define KEY_LEN_V6 20
#define KEY_LEN_MAX KEY_LEN_V6

/* Attribute iteration without libmnl's for-each macros (which static
 * analysers cannot expand): the first attribute after a nfnetlink header,
 * and whether attr lies within message nlh or nested attribute parent. */
static inline struct nlattr *msg_attrs(const struct nlmsghdr *nlh)
{
	return mnl_nlmsg_get_payload_offset(nlh, sizeof(struct nfgenmsg));
}

static inline bool attr_in(const struct nlattr *attr, const struct nlmsghdr *nlh,
		    const struct nlattr *parent)
{
	const char *end = nlh ? (const char *)mnl_nlmsg_get_payload_tail(nlh)
			      : (const char *)mnl_attr_get_payload(parent) +
					mnl_attr_get_payload_len(parent);
	return mnl_attr_ok(attr, (int)(end - (const char *)attr));
}

#endif
