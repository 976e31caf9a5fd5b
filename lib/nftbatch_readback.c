/* SPDX-License-Identifier: MIT */
/* Reading a ruleset back and comparing it with what was built (see
 * nftbatch.h: nftbatch_parse_msg, nftbatch_parse_buf, nftbatch_compare).
 * Split from nftbatch.c along its seam; the shared pieces are in
 * nftbatch_int.h. */
#include "nftbatch.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "nftbatch_int.h"

/* ---- read-back ---- */

static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 8;
	void *p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}


/* libnftnl 1.2.4 numbers the nested elements of a NEWSETELEM it builds 1,
 * 2, 3, ... (the kernel ignores the type), but its parser accepts only
 * NFTA_LIST_ELEM (what kernel dumps carry). Parse a copy with the types
 * set to NFTA_LIST_ELEM so batches and dumps read back alike. */
static int elems_normalize_types(const struct nlmsghdr *nlh, struct nlmsghdr **ret)
{
	struct nlmsghdr *copy = malloc(nlh->nlmsg_len);
	struct nlattr *attr, *el;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, nlh, nlh->nlmsg_len);
	for (attr = msg_attrs(copy); attr_in(attr, copy, NULL); attr = mnl_attr_next(attr)) {
		if (mnl_attr_get_type(attr) != NFTA_SET_ELEM_LIST_ELEMENTS)
			continue;
		for (el = mnl_attr_get_payload(attr); attr_in(el, NULL, attr); el = mnl_attr_next(el))
			el->nla_type = (uint16_t)((el->nla_type & ~NLA_TYPE_MASK) | NFTA_LIST_ELEM);
	}
	*ret = copy;
	return 0;
}

int nftbatch_parse_msg(struct nftbatch *p, const char *table, const void *data)
{
	const struct nlmsghdr *nlh = data;
	uint16_t type;
	const char *t;

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES)
		return 0;
	type = NFNL_MSG_TYPE(nlh->nlmsg_type);
	switch (type) {
	case NFT_MSG_NEWTABLE:
	case NFT_MSG_DELTABLE: {
		_cleanup_(nftnl_table_freep) struct nftnl_table *o = nftnl_table_alloc();
		if (!o)
			return -ENOMEM;
		if (nftnl_table_nlmsg_parse(nlh, o) < 0)
			return -EBADMSG;
		t = nftnl_table_get_str(o, NFTNL_TABLE_NAME);
		if (!t || strcmp(t, table) != 0 || nftnl_table_get_u32(o, NFTNL_TABLE_FAMILY) != NFPROTO_INET)
			return 0;
		if (type == NFT_MSG_DELTABLE) {
			nftbatch_done(p);
			return 0;
		}
		if (p->table)
			nftnl_table_free(p->table);
		p->table = TAKE_PTR(o);
		return 0;
	}
	case NFT_MSG_NEWCHAIN: {
		_cleanup_(nftnl_chain_freep) struct nftnl_chain *o = nftnl_chain_alloc();
		if (!o)
			return -ENOMEM;
		if (nftnl_chain_nlmsg_parse(nlh, o) < 0)
			return -EBADMSG;
		t = nftnl_chain_get_str(o, NFTNL_CHAIN_TABLE);
		if (!t || strcmp(t, table) != 0 || nftnl_chain_get_u32(o, NFTNL_CHAIN_FAMILY) != NFPROTO_INET)
			return 0;
		struct nftnl_chain **arr = realloc(p->chains, (p->n_chains + 1) * sizeof(void *));
		if (!arr)
			return -ENOMEM;
		p->chains = arr;
		p->chains[p->n_chains++] = TAKE_PTR(o);
		return 0;
	}
	case NFT_MSG_NEWSET: {
		_cleanup_(nftnl_set_freep) struct nftnl_set *o = nftnl_set_alloc();
		if (!o)
			return -ENOMEM;
		if (nftnl_set_nlmsg_parse(nlh, o) < 0)
			return -EBADMSG;
		t = nftnl_set_get_str(o, NFTNL_SET_TABLE);
		if (!t || strcmp(t, table) != 0 || nftnl_set_get_u32(o, NFTNL_SET_FAMILY) != NFPROTO_INET)
			return 0;
		struct nftnl_set **arr = realloc(p->sets, (p->n_sets + 1) * sizeof(void *));
		if (!arr)
			return -ENOMEM;
		p->sets = arr;
		p->sets[p->n_sets++] = TAKE_PTR(o);
		return 0;
	}
	case NFT_MSG_NEWRULE: {
		_cleanup_(nftnl_rule_freep) struct nftnl_rule *o = nftnl_rule_alloc();
		if (!o)
			return -ENOMEM;
		if (nftnl_rule_nlmsg_parse(nlh, o) < 0)
			return -EBADMSG;
		t = nftnl_rule_get_str(o, NFTNL_RULE_TABLE);
		if (!t || strcmp(t, table) != 0 || nftnl_rule_get_u32(o, NFTNL_RULE_FAMILY) != NFPROTO_INET)
			return 0;
		if (grow((void **)&p->rules, p->n_rules, &p->cap_rules, sizeof(void *)) < 0)
			return -ENOMEM;
		p->rules[p->n_rules++] = TAKE_PTR(o);
		return 0;
	}
	case NFT_MSG_NEWSETELEM: {
		_cleanup_(nftnl_set_freep) struct nftnl_set *o = nftnl_set_alloc();
		_cleanup_free_ struct nlmsghdr *copy = NULL;
		const char *name;
		int r;
		if (!o)
			return -ENOMEM;
		r = elems_normalize_types(nlh, &copy);
		if (r < 0)
			return r;
		nlh = copy;
		if (nftnl_set_elems_nlmsg_parse(nlh, o) < 0)
			return -EBADMSG;
		t = nftnl_set_get_str(o, NFTNL_SET_TABLE);
		name = nftnl_set_get_str(o, NFTNL_SET_NAME);
		if (!t || !name || strcmp(t, table) != 0)
			return 0;
		for (size_t i = 0; i < p->n_sets; i++) {
			if (strcmp(nftnl_set_get_str(p->sets[i], NFTNL_SET_NAME), name) != 0)
				continue;
			/* parse again into the set itself: libnftnl appends */
			if (nftnl_set_elems_nlmsg_parse(nlh, p->sets[i]) < 0)
				return -EBADMSG;
			return 0;
		}
		return -EBADMSG; /* elements of a set we never saw */
	}
	default:
		return 0;
	}
}

int nftbatch_parse_buf(struct nftbatch *p, const char *table, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	int n = (int)len;

	while (mnl_nlmsg_ok(nlh, n)) {
		int r = nftbatch_parse_msg(p, table, nlh);
		if (r < 0)
			return r;
		nlh = mnl_nlmsg_next(nlh, &n);
	}
	return n == 0 ? 0 : -EBADMSG;
}

/* ---- comparison ---- */

static int differ(char *reterr, size_t size, const char *fmt, ...) _printf_(3, 4);
static int differ(char *reterr, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(reterr, size, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

static bool str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static const struct nftnl_chain *find_chain(const struct nftbatch *b, const char *name)
{
	for (size_t i = 0; i < b->n_chains; i++)
		if (str_eq(nftnl_chain_get_str(b->chains[i], NFTNL_CHAIN_NAME), name))
			return b->chains[i];
	return NULL;
}

static const struct nftnl_set *find_set(const struct nftbatch *b, const char *name)
{
	for (size_t i = 0; i < b->n_sets; i++)
		if (str_eq(nftnl_set_get_str(b->sets[i], NFTNL_SET_NAME), name))
			return b->sets[i];
	return NULL;
}

static int compare_chain(const struct nftnl_chain *a, const struct nftnl_chain *b, char *err,
			 size_t size)
{
	const char *name = nftnl_chain_get_str(a, NFTNL_CHAIN_NAME);
	bool base = nftnl_chain_is_set(a, NFTNL_CHAIN_HOOKNUM);

	if (base != nftnl_chain_is_set(b, NFTNL_CHAIN_HOOKNUM))
		return differ(err, size, "chain %s: base chain mismatch", name);
	if (!base)
		return 0;
	if (nftnl_chain_get_u32(a, NFTNL_CHAIN_HOOKNUM) != nftnl_chain_get_u32(b, NFTNL_CHAIN_HOOKNUM) ||
	    nftnl_chain_get_s32(a, NFTNL_CHAIN_PRIO) != nftnl_chain_get_s32(b, NFTNL_CHAIN_PRIO) ||
	    nftnl_chain_get_u32(a, NFTNL_CHAIN_POLICY) != nftnl_chain_get_u32(b, NFTNL_CHAIN_POLICY) ||
	    !str_eq(nftnl_chain_get_str(a, NFTNL_CHAIN_TYPE), nftnl_chain_get_str(b, NFTNL_CHAIN_TYPE)))
		return differ(err, size, "chain %s: hook, priority, policy or type differ", name);
	return 0;
}

static int compare_set_attrs(const struct nftnl_set *a, const struct nftnl_set *b, char *err,
			     size_t size)
{
	const char *name = nftnl_set_get_str(a, NFTNL_SET_NAME);
	static const uint16_t attrs[] = { NFTNL_SET_FLAGS, NFTNL_SET_KEY_TYPE, NFTNL_SET_KEY_LEN };
	const void *da, *db;
	uint32_t la = 0, lb = 0;

	for (size_t i = 0; i < ELEMENTSOF(attrs); i++)
		if (nftnl_set_get_u32(a, attrs[i]) != nftnl_set_get_u32(b, attrs[i]))
			return differ(err, size, "set %s: attribute %u differs (%u vs %u)", name,
				      attrs[i], nftnl_set_get_u32(a, attrs[i]),
				      nftnl_set_get_u32(b, attrs[i]));
	da = nftnl_set_get_data(a, NFTNL_SET_DESC_CONCAT, &la);
	db = nftnl_set_get_data(b, NFTNL_SET_DESC_CONCAT, &lb);
	/* libnftnl returns its whole field array; compare the used prefix */
	if (!da || !db || memcmp(da, db, la < lb ? la : lb) != 0)
		return differ(err, size, "set %s: concatenation differs", name);
	return 0;
}

struct elem_rec {
	uint8_t key[KEY_LEN_MAX], end[KEY_LEN_MAX];
	uint32_t len, end_len;
	uint64_t timeout;
};

static int elem_rec_cmp(const void *a, const void *b)
{
	/* key, end and their lengths: everything but the timeout */
	return memcmp(a, b, offsetof(struct elem_rec, timeout));
}

static int collect_elems(const struct nftnl_set *s, struct elem_rec **ret, size_t *ret_n)
{
	struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create(s);
	struct elem_rec *recs = NULL;
	size_t n = 0, cap = 0;
	struct nftnl_set_elem *e;

	if (!it)
		return -ENOMEM;
	for (e = nftnl_set_elems_iter_cur(it); e; e = nftnl_set_elems_iter_next(it)) {
		const void *k, *z;
		uint32_t kl = 0, zl = 0;

		if (grow((void **)&recs, n, &cap, sizeof(*recs)) < 0) {
			free(recs);
			nftnl_set_elems_iter_destroy(it);
			return -ENOMEM;
		}
		struct elem_rec *r = &recs[n++];
		memset(r, 0, sizeof(*r));
		k = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &kl);
		z = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &zl);
		if (k && kl <= KEY_LEN_MAX) {
			memcpy(r->key, k, kl);
			r->len = kl;
		}
		if (z && zl <= KEY_LEN_MAX) {
			memcpy(r->end, z, zl);
			r->end_len = zl;
		}
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT))
			r->timeout = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
	}
	nftnl_set_elems_iter_destroy(it);
	*ret = recs;
	*ret_n = n;
	return 0;
}

static int compare_elems(const struct nftnl_set *a, const struct nftnl_set *b, char *err,
			 size_t size)
{
	const char *name = nftnl_set_get_str(a, NFTNL_SET_NAME);
	_cleanup_free_ struct elem_rec *ra = NULL, *rbs = NULL;
	size_t na = 0, nb = 0;
	int r;

	r = collect_elems(a, &ra, &na);
	if (r < 0)
		return r;
	r = collect_elems(b, &rbs, &nb);
	if (r < 0)
		return r;
	if (na != nb)
		return differ(err, size, "set %s: %zu elements built, %zu read back", name, na, nb);
	if (na == 0)
		return 0; /* both empty (qsort wants a non-NULL base) */
	qsort(ra, na, sizeof(*ra), elem_rec_cmp);
	qsort(rbs, nb, sizeof(*rbs), elem_rec_cmp);
	for (size_t i = 0; i < na; i++)
		if (elem_rec_cmp(&ra[i], &rbs[i]) != 0 || ra[i].timeout != rbs[i].timeout)
			return differ(err, size, "set %s: element %zu differs", name, i);
	return 0;
}

/* Expressions as libnftnl prints them; counters compare by name only
 * (traffic may have moved them since the commit). */
static int compare_rule(const struct nftnl_rule *a, const struct nftnl_rule *b, size_t idx,
			char *err, size_t size)
{
	struct nftnl_expr_iter *ia = nftnl_expr_iter_create(a), *ib = nftnl_expr_iter_create(b);
	struct nftnl_expr *ea, *eb;
	size_t k = 0;
	int r = 0;

	if (!ia || !ib) {
		r = -ENOMEM;
		goto out;
	}
	for (;; k++) {
		char sa[256], sb[256];
		const char *na, *nb;

		ea = nftnl_expr_iter_next(ia);
		eb = nftnl_expr_iter_next(ib);
		if (!ea || !eb) {
			if (ea || eb)
				r = differ(err, size, "rule %s#%zu: expression count differs",
					   nftnl_rule_get_str(a, NFTNL_RULE_CHAIN), idx);
			break;
		}
		na = nftnl_expr_get_str(ea, NFTNL_EXPR_NAME);
		nb = nftnl_expr_get_str(eb, NFTNL_EXPR_NAME);
		if (!str_eq(na, nb)) {
			r = differ(err, size, "rule %s#%zu expression %zu: '%s' vs '%s'",
				   nftnl_rule_get_str(a, NFTNL_RULE_CHAIN), idx, k, na ? na : "?",
				   nb ? nb : "?");
			break;
		}
		if (strcmp(na, "counter") == 0)
			continue;
		(void)nftnl_expr_snprintf(sa, sizeof(sa), ea, NFTNL_OUTPUT_DEFAULT, 0);
		(void)nftnl_expr_snprintf(sb, sizeof(sb), eb, NFTNL_OUTPUT_DEFAULT, 0);
		if (strcmp(sa, sb) != 0) {
			r = differ(err, size, "rule %s#%zu expression %zu: '%s' vs '%s'",
				   nftnl_rule_get_str(a, NFTNL_RULE_CHAIN), idx, k, sa, sb);
			break;
		}
	}
out:
	if (ia)
		nftnl_expr_iter_destroy(ia);
	if (ib)
		nftnl_expr_iter_destroy(ib);
	return r;
}

int nftbatch_compare(const struct nftbatch *a, const struct nftbatch *b, char *err, size_t size)
{
	int r;

	if (!a->table || !b->table)
		return differ(err, size, "table %s missing", a->table ? "read back" : "built");
	if (!str_eq(nftnl_table_get_str(a->table, NFTNL_TABLE_NAME),
		    nftnl_table_get_str(b->table, NFTNL_TABLE_NAME)))
		return differ(err, size, "table name differs");
	if (a->n_chains != b->n_chains)
		return differ(err, size, "%zu chains built, %zu read back", a->n_chains, b->n_chains);
	for (size_t i = 0; i < a->n_chains; i++) {
		const char *name = nftnl_chain_get_str(a->chains[i], NFTNL_CHAIN_NAME);
		const struct nftnl_chain *o = find_chain(b, name);
		if (!o)
			return differ(err, size, "chain %s missing", name);
		r = compare_chain(a->chains[i], o, err, size);
		if (r < 0)
			return r;
	}
	if (a->n_sets != b->n_sets)
		return differ(err, size, "%zu sets built, %zu read back", a->n_sets, b->n_sets);
	for (size_t i = 0; i < a->n_sets; i++) {
		const char *name = nftnl_set_get_str(a->sets[i], NFTNL_SET_NAME);
		const struct nftnl_set *o = find_set(b, name);
		if (!o)
			return differ(err, size, "set %s missing", name);
		r = compare_set_attrs(a->sets[i], o, err, size);
		if (r >= 0)
			r = compare_elems(a->sets[i], o, err, size);
		if (r < 0)
			return r;
	}
	/* Rules per chain, in order. */
	for (size_t c = 0; c < a->n_chains; c++) {
		const char *chain = nftnl_chain_get_str(a->chains[c], NFTNL_CHAIN_NAME);
		size_t ib = 0, idx = 0;

		for (size_t ia = 0; ia < a->n_rules; ia++) {
			if (!str_eq(nftnl_rule_get_str(a->rules[ia], NFTNL_RULE_CHAIN), chain))
				continue;
			while (ib < b->n_rules &&
			       !str_eq(nftnl_rule_get_str(b->rules[ib], NFTNL_RULE_CHAIN), chain))
				ib++;
			if (ib == b->n_rules)
				return differ(err, size, "rule %s#%zu missing", chain, idx);
			r = compare_rule(a->rules[ia], b->rules[ib], idx, err, size);
			if (r < 0)
				return r;
			ib++;
			idx++;
		}
		while (ib < b->n_rules &&
		       !str_eq(nftnl_rule_get_str(b->rules[ib], NFTNL_RULE_CHAIN), chain))
			ib++;
		if (ib < b->n_rules)
			return differ(err, size, "chain %s: extra rule #%zu read back", chain, idx);
	}
	if (a->n_rules != b->n_rules)
		return differ(err, size, "%zu rules built, %zu read back", a->n_rules, b->n_rules);
	return 0;
}
