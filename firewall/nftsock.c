/* SPDX-License-Identifier: MIT */
/* Netlink transport for the firewall. See nftsock.h. */
#include "nftsock.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "macros.h"

struct nftsock {
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
};

DEFINE_TRIVIAL_CLEANUP_FUNC(struct nftnl_set *, nftnl_set_free)

int nftsock_open(struct nftsock **ret)
{
	_cleanup_free_ struct nftsock *s = calloc(1, sizeof(*s));
	int one = 1;

	if (!s)
		return -ENOMEM;
	s->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!s->nl)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return negative_errno();
	if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int r = negative_errno();
		(void)mnl_socket_close(s->nl);
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return r;
	}
	/* Extended acks name the offending attribute (we map it back to the
	 * element); capped acks keep error replies small, so thousands of
	 * acks fit the receive buffer. Both are optional kernel features:
	 * without them errors still name the message by sequence number. */
	(void)mnl_socket_setsockopt(s->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)mnl_socket_setsockopt(s->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	s->portid = mnl_socket_get_portid(s->nl);
	/* Start from the clock, as nft does, so acks of an earlier process's
	 * batch on a recycled port id cannot be mistaken for ours. */
	s->seq = (uint32_t)time(NULL);
	*ret = TAKE_PTR(s);
	/* cppcheck-suppress memleak ; freed by its cleanup attribute */
	return 0;
}

struct nftsock *nftsock_close(struct nftsock *s)
{
	if (!s)
		return NULL;
	if (s->nl)
		(void)mnl_socket_close(s->nl);
	free(s);
	return NULL;
}

uint32_t nftsock_seq(const struct nftsock *s)
{
	return s->seq;
}

/* Grows a socket buffer to at least want bytes: the FORCE variant (needs
 * CAP_NET_ADMIN, which sending a batch needs anyway) ignores the
 * rmem_max/wmem_max sysctls; without it fall back to the capped one. */
static void set_buf(struct nftsock *s, int opt, int force_opt, size_t want)
{
	int v = want > (size_t)(1 << 30) ? 1 << 30 : (int)want;
	int cur = 0;
	socklen_t len = sizeof(cur);

	if (getsockopt(mnl_socket_get_fd(s->nl), SOL_SOCKET, opt, &cur, &len) == 0 && cur >= v)
		return;
	if (setsockopt(mnl_socket_get_fd(s->nl), SOL_SOCKET, force_opt, &v, sizeof(v)) < 0)
		(void)setsockopt(mnl_socket_get_fd(s->nl), SOL_SOCKET, opt, &v, sizeof(v));
}

struct ack_state {
	const struct nftbatch *b;
	bool *acked;
	size_t n_acked;
	int first_error;
	char *err;
	size_t err_size;
};

static void describe_error(struct ack_state *st, const struct nlmsghdr *nlh,
			   const struct nlmsgerr *e)
{
	const struct nftbatch_msg *m = nftbatch_find_seq(st->b, e->msg.nlmsg_seq);
	const char *ext = NULL;
	uint32_t offs = 0;
	bool have_offs = false;
	char what[NFTBATCH_DESC_MAX + 128];

	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		size_t hdr = sizeof(*e);
		const struct nlattr *attr;

		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			hdr += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		mnl_attr_for_each(attr, nlh, hdr) {
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
			    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				ext = mnl_attr_get_str(attr);
			else if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_OFFS &&
				 mnl_attr_validate(attr, MNL_TYPE_U32) == 0) {
				offs = mnl_attr_get_u32(attr);
				have_offs = true;
			}
		}
	}
	if (m) {
		int idx = have_offs ? nftbatch_elem_at_offset(st->b, m, offs) : -ENOENT;
		if (idx >= 0) {
			char el[96];
			nftbatch_elem_format(&st->b->elems[idx], el, sizeof(el));
			(void)snprintf(what, sizeof(what), "%s: element %s", m->desc, el);
		} else
			(void)snprintf(what, sizeof(what), "%s", m->desc);
	} else if (e->msg.nlmsg_seq == st->b->seq_first)
		(void)snprintf(what, sizeof(what), "batch (seq %u)", e->msg.nlmsg_seq);
	else
		(void)snprintf(what, sizeof(what), "unknown message (seq %u)", e->msg.nlmsg_seq);
	(void)snprintf(st->err, st->err_size, "%s: %s%s%s%s", what, strerror(-e->error),
		       ext ? " (" : "", ext ? ext : "", ext ? ")" : "");
}

static int ack_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ack_state *st = data;
	const struct nlmsgerr *e;

	if (nlh->nlmsg_type != NLMSG_ERROR)
		return MNL_CB_OK; /* nothing else is expected here; ignore */
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e))
		return MNL_CB_ERROR;
	e = mnl_nlmsg_get_payload(nlh);
	if (e->error == 0) {
		const struct nftbatch_msg *m = nftbatch_find_seq(st->b, e->msg.nlmsg_seq);
		if (m && !st->acked[m - st->b->msgs]) {
			st->acked[m - st->b->msgs] = true;
			st->n_acked++;
		}
		return MNL_CB_OK;
	}
	if (st->first_error == 0) {
		st->first_error = e->error;
		describe_error(st, nlh, e);
	}
	return MNL_CB_OK;
}

static mnl_cb_t ack_ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = ack_cb };

int nftsock_send(struct nftsock *s, const struct nftbatch *b, char *reterr, size_t size)
{
	_cleanup_free_ bool *acked = calloc(b->n_msgs ? b->n_msgs : 1, sizeof(bool));
	_cleanup_free_ char *buf = malloc(NFTSOCK_RECV_BUF);
	struct ack_state st = { .b = b, .err = reterr, .err_size = size };
	ssize_t n;

	if (!acked || !buf)
		return -ENOMEM;
	st.acked = acked;
	if (size > 0)
		reterr[0] = '\0';
	s->seq = b->seq_last + 1;
	/* The whole batch is one skb, hence one transaction; every message
	 * asks for an ack, and the kernel queues all of them during the
	 * sendmsg, so the receive buffer must hold them all. */
	set_buf(s, SO_SNDBUF, SO_SNDBUFFORCE, b->len + 4096);
	set_buf(s, SO_RCVBUF, SO_RCVBUFFORCE, (b->n_msgs + 2) * NFTSOCK_ACK_BOUND);
	if (mnl_socket_sendto(s->nl, b->buf, b->len) < 0) {
		int r = negative_errno();
		(void)snprintf(reterr, size, "sending the batch (%zu bytes): %s", b->len, strerror(-r));
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return r;
	}
	for (;;) {
		n = recv(mnl_socket_get_fd(s->nl), buf, NFTSOCK_RECV_BUF, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break; /* the kernel queued every ack before sendmsg returned */
			int r = negative_errno();
			if (st.first_error == 0)
				(void)snprintf(reterr, size, "reading acks: %s%s", strerror(-r),
					       r == -ENOBUFS ? " (acks lost)" : "");
			return st.first_error ? st.first_error : r;
		}
		/* acks are NLMSG_ERROR control messages: route them to ack_cb
		 * instead of libmnl's default, which stops at the first one */
		errno = 0;
		if (mnl_cb_run2(buf, (size_t)n, 0, s->portid, NULL, &st, ack_ctl, ELEMENTSOF(ack_ctl)) < 0 &&
		    st.first_error == 0) {
			int r = negative_errno();
			(void)snprintf(reterr, size, "malformed ack: %s", strerror(-r));
			return r;
		}
	}
	if (st.first_error)
		return st.first_error;
	if (st.n_acked != b->n_msgs) {
		for (size_t i = 0; i < b->n_msgs; i++)
			if (!acked[i]) {
				(void)snprintf(reterr, size, "%s: no ack", b->msgs[i].desc);
				break;
			}
		return -EPROTO;
	}
	return 0;
}

struct dump_state {
	struct nftbatch *parsed;
	const char *table;
	int err;
	bool interrupted;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_state *st = data;
	int r;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		st->interrupted = true;
	r = nftbatch_parse_msg(st->parsed, st->table, nlh);
	if (r < 0) {
		st->err = r;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* One GET request, replies parsed into st->parsed. */
static int get(struct nftsock *s, char *req, struct dump_state *st)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)req;
	_cleanup_free_ char *buf = malloc(NFTSOCK_RECV_BUF);
	uint32_t seq = nlh->nlmsg_seq;
	int r;

	if (!buf)
		return -ENOMEM;
	if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return negative_errno();
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(s->nl, buf, NFTSOCK_RECV_BUF);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		errno = 0;
		r = mnl_cb_run(buf, (size_t)n, seq, s->portid, dump_cb, st);
		if (r == MNL_CB_STOP)
			return 0;
		if (r < 0)
			return st->err ? st->err : negative_errno();
		/* a non-dump GET ends with its single reply */
		if (!(nlh->nlmsg_flags & NLM_F_DUMP))
			return 0;
	}
}

static int read_back_once(struct nftsock *s, const char *table, struct nftbatch *parsed,
			  bool *interrupted)
{
	char req[NFTSOCK_REQ_BUF];
	struct dump_state st = { .parsed = parsed, .table = table };
	struct nlmsghdr *nlh;
	int r;

	/* table */
	{
		struct nftnl_table *t = nftnl_table_alloc();
		if (!t)
			return -ENOMEM;
		if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, table) < 0) {
			nftnl_table_free(t);
			return -ENOMEM;
		}
		/* no NLM_F_ACK: success is the reply itself, failure an error */
		nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETTABLE, NFPROTO_INET, 0, s->seq++);
		nftnl_table_nlmsg_build_payload(nlh, t);
		nftnl_table_free(t);
		r = get(s, req, &st);
		if (r < 0)
			return r;
		if (!parsed->table)
			return -ENOENT;
	}
	/* chains, sets, rules: dumps filtered by table */
	static const uint16_t dumps[] = { NFT_MSG_GETCHAIN, NFT_MSG_GETSET, NFT_MSG_GETRULE };
	for (size_t i = 0; i < ELEMENTSOF(dumps); i++) {
		nlh = nftnl_nlmsg_build_hdr(req, dumps[i], NFPROTO_INET, NLM_F_DUMP, s->seq++);
		if (dumps[i] == NFT_MSG_GETCHAIN) {
			struct nftnl_chain *c = nftnl_chain_alloc();
			if (!c || nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table) < 0) {
				if (c)
					nftnl_chain_free(c);
				return -ENOMEM;
			}
			nftnl_chain_nlmsg_build_payload(nlh, c);
			nftnl_chain_free(c);
		} else if (dumps[i] == NFT_MSG_GETSET) {
			struct nftnl_set *se = nftnl_set_alloc();
			if (!se || nftnl_set_set_str(se, NFTNL_SET_TABLE, table) < 0) {
				if (se)
					nftnl_set_free(se);
				return -ENOMEM;
			}
			nftnl_set_nlmsg_build_payload(nlh, se);
			nftnl_set_free(se);
		} else {
			struct nftnl_rule *ru = nftnl_rule_alloc();
			if (!ru || nftnl_rule_set_str(ru, NFTNL_RULE_TABLE, table) < 0) {
				if (ru)
					nftnl_rule_free(ru);
				return -ENOMEM;
			}
			nftnl_rule_nlmsg_build_payload(nlh, ru);
			nftnl_rule_free(ru);
		}
		r = get(s, req, &st);
		if (r < 0)
			return r;
	}
	/* elements of every set */
	for (size_t i = 0; i < parsed->n_sets; i++) {
		_cleanup_(nftnl_set_freep) struct nftnl_set *se = nftnl_set_alloc();
		if (!se || nftnl_set_set_str(se, NFTNL_SET_TABLE, table) < 0 ||
		    nftnl_set_set_str(se, NFTNL_SET_NAME,
				      nftnl_set_get_str(parsed->sets[i], NFTNL_SET_NAME)) < 0)
			return -ENOMEM;
		nlh = nftnl_nlmsg_build_hdr(req, NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_DUMP, s->seq++);
		nftnl_set_elems_nlmsg_build_payload(nlh, se);
		r = get(s, req, &st);
		if (r < 0)
			return r;
	}
	*interrupted = st.interrupted;
	return 0;
}

int nftsock_read_back(struct nftsock *s, const char *table, struct nftbatch *parsed)
{
	int r = -EINTR;

	for (int attempt = 0; attempt < NFTSOCK_DUMP_RETRIES; attempt++) {
		bool interrupted = false;

		nftbatch_done(parsed);
		r = read_back_once(s, table, parsed, &interrupted);
		if (r < 0 || !interrupted)
			return r;
		/* the ruleset changed during the dump: the pieces may not
		 * belong to one generation, read again */
		r = -EINTR;
	}
	return r;
}

int nftsock_verify(struct nftsock *s, const struct nftbatch *built, char *reterr, size_t size)
{
	struct nftbatch parsed = { 0 };
	const char *table = nftnl_table_get_str(built->table, NFTNL_TABLE_NAME);
	int r;

	r = nftsock_read_back(s, table, &parsed);
	if (r < 0) {
		(void)snprintf(reterr, size, "reading table inet %s back: %s", table, strerror(-r));
		nftbatch_done(&parsed);
		return r;
	}
	r = nftbatch_compare(built, &parsed, reterr, size);
	nftbatch_done(&parsed);
	return r;
}

int nftsock_delete_table(struct nftsock *s, const char *table, char *reterr, size_t size)
{
	char buf[NFTSOCK_REQ_BUF];
	struct nftbatch b = { .buf = buf, .buf_size = sizeof(buf) };
	struct nftbatch_msg msg = { .kind = NFTBATCH_MSG_TABLE };
	struct mnl_nlmsg_batch *mb = mnl_nlmsg_batch_start(buf, sizeof(buf));
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;
	int r;

	if (!mb || !t) {
		if (mb)
			mnl_nlmsg_batch_stop(mb);
		if (t)
			nftnl_table_free(t);
		return -ENOMEM;
	}
	b.seq_first = s->seq;
	(void)nftnl_batch_begin(mnl_nlmsg_batch_current(mb), s->seq++);
	(void)mnl_nlmsg_batch_next(mb);
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(mb), NFT_MSG_DELTABLE, NFPROTO_INET,
				    NLM_F_ACK, s->seq++);
	(void)nftnl_table_set_str(t, NFTNL_TABLE_NAME, table);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	msg.seq = nlh->nlmsg_seq;
	(void)snprintf(msg.desc, sizeof(msg.desc), "delete table inet %s", table);
	(void)mnl_nlmsg_batch_next(mb);
	b.seq_last = s->seq;
	(void)nftnl_batch_end(mnl_nlmsg_batch_current(mb), s->seq++);
	(void)mnl_nlmsg_batch_next(mb);
	b.len = mnl_nlmsg_batch_size(mb);
	mnl_nlmsg_batch_stop(mb);
	b.msgs = &msg;
	b.n_msgs = 1;
	r = nftsock_send(s, &b, reterr, size);
	return r;
}
