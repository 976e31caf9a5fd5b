/* SPDX-License-Identifier: MIT */
#include "nflog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "fwconst.h"
#include "log.h"
#include "macros.h"
#include "monoclock.h"
#include "pktinfo.h"
#include "ratelimit.h"

#define NFLOG_BUF_SIZE 8192 /* MNL_SOCKET_BUFFER_SIZE on most machines; fits a packet message easily */

struct nflog {
	struct mnl_socket *nl;
	uint16_t group;
	uint32_t portid;
	uint32_t seq;
	struct ratelimit rl;
	struct nflog_stats stats;
	uint8_t buf[NFLOG_BUF_SIZE];
};

static struct nlmsghdr *config_msg(struct nflog *n, uint8_t family)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(n->buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++n->seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(n->group);
	return nlh;
}

/* Sends one config message and waits for its ack (the socket is still
 * blocking here: this runs once, at start-up). */
static int config_send(struct nflog *n, struct nlmsghdr *nlh)
{
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t r;

	if (mnl_socket_sendto(n->nl, nlh, nlh->nlmsg_len) < 0)
		return negative_errno();
	for (;;) {
		r = mnl_socket_recvfrom(n->nl, n->buf, sizeof(n->buf));
		if (r < 0)
			return negative_errno();
		r = mnl_cb_run(n->buf, (size_t)r, seq, n->portid, NULL, NULL);
		if (r < 0)
			return negative_errno();
		if (r == MNL_CB_STOP)
			return 0;
	}
}

int nflog_new(uint16_t group, struct nflog **ret)
{
	struct nflog *n;
	struct nlmsghdr *nlh;
	struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
	struct nfulnl_msg_config_mode mode = {.copy_range = htonl(NFLOG_COPY_RANGE),
					      .copy_mode = NFULNL_COPY_PACKET};
	int k;

	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->group = group;
	n->seq = (uint32_t)time(NULL);
	n->rl = (struct ratelimit)RATELIMIT_INIT(NFLOG_LOG_INTERVAL_MS, NFLOG_LOG_BURST);
	n->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!n->nl) {
		k = negative_errno();
		goto fail;
	}
	if (mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		k = negative_errno();
		goto fail;
	}
	n->portid = mnl_socket_get_portid(n->nl);

	nlh = config_msg(n, AF_UNSPEC);
	mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(cmd), &cmd);
	k = config_send(n, nlh);
	if (k < 0)
		goto fail;

	/* Copy the first bytes of the packet (IP and transport headers) and
	 * deliver each packet at once instead of batching up to a second
	 * (NFULNL_TIMEOUT_DEFAULT). The kernel adds NFULA_UID (the sending
	 * socket's fsuid, mapped into this socket's user namespace) to every
	 * packet of a local socket without being asked: unlike
	 * nfnetlink_queue, nfnetlink_log has no flag for it. */
	nlh = config_msg(n, AF_UNSPEC);
	mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(mode), &mode);
	mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl(1));
	k = config_send(n, nlh);
	if (k < 0)
		goto fail;

	/* From now on the loop reads without blocking. */
	{
		int fd = mnl_socket_get_fd(n->nl);
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
			k = negative_errno();
			goto fail;
		}
	}
	*ret = n;
	return 0;
fail:
	(void)nflog_free(n);
	return k;
}

struct nflog *nflog_free(struct nflog *n)
{
	if (!n)
		return NULL;
	if (n->nl) {
		struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_UNBIND};
		struct nlmsghdr *nlh = config_msg(n, AF_UNSPEC);

		nlh->nlmsg_flags = NLM_F_REQUEST; /* no ack wanted: we close right after */
		mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(cmd), &cmd);
		(void)mnl_socket_sendto(n->nl, nlh, nlh->nlmsg_len);
		(void)mnl_socket_close(n->nl);
	}
	free(n);
	return NULL;
}

void nflog_get_stats(const struct nflog *n, struct nflog_stats *ret)
{
	*ret = n->stats;
}

struct packet_attrs {
	const struct nlattr *tb[NFULA_MAX + 1];
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct packet_attrs *pa = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, NFULA_MAX) < 0)
		return MNL_CB_OK; /* newer kernel attribute: ignore */
	pa->tb[type] = attr;
	return MNL_CB_OK;
}

static int packet_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nflog *n = data;
	struct packet_attrs pa = {0};
	const struct nfgenmsg *nfg;
	struct pktinfo pi;
	char what[PKTINFO_TEXT_MAX], uid[32];
	uint64_t suppressed;
	int family;

	if ((nlh->nlmsg_type & 0xFF) != NFULNL_MSG_PACKET ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*nfg)) {
		n->stats.bad++;
		return MNL_CB_OK;
	}
	nfg = mnl_nlmsg_get_payload(nlh);
	if (mnl_attr_parse(nlh, sizeof(*nfg), attr_cb, &pa) < 0 || !pa.tb[NFULA_PAYLOAD]) {
		n->stats.bad++;
		return MNL_CB_OK;
	}
	n->stats.packets++;
	/* Other users of the group (none expected) use other prefixes. */
	if (pa.tb[NFULA_PREFIX]) {
		const char *prefix = mnl_attr_get_payload(pa.tb[NFULA_PREFIX]);
		size_t plen = mnl_attr_get_payload_len(pa.tb[NFULA_PREFIX]);

		if (plen < STRLEN(FW_LOG_PREFIX) || memcmp(prefix, FW_LOG_PREFIX, STRLEN(FW_LOG_PREFIX)) != 0)
			return MNL_CB_OK;
	}
	family = nfg->nfgen_family == NFPROTO_IPV4 ? AF_INET
		 : nfg->nfgen_family == NFPROTO_IPV6 ? AF_INET6
						     : AF_UNSPEC;
	if (pktinfo_parse(family, mnl_attr_get_payload(pa.tb[NFULA_PAYLOAD]),
			  mnl_attr_get_payload_len(pa.tb[NFULA_PAYLOAD]), &pi) < 0) {
		n->stats.bad++;
		return MNL_CB_OK;
	}
	/* Packets without a sending socket come from the kernel itself (IPv6
	 * multicast listener reports, resets and ICMP errors it generates):
	 * not an attempt of the agent, and only noise to the user. Counted,
	 * not printed. */
	if (!pa.tb[NFULA_UID] || mnl_attr_get_payload_len(pa.tb[NFULA_UID]) != sizeof(uint32_t)) {
		n->stats.kernel++;
		return MNL_CB_OK;
	}
	if (!ratelimit_allow(&n->rl, monoclock_ms(), &suppressed))
		return MNL_CB_OK;
	if (suppressed)
		log_warn("%llu more blocked packets not shown", (unsigned long long)suppressed);
	(void)snprintf(uid, sizeof(uid), " from uid %u", ntohl(mnl_attr_get_u32(pa.tb[NFULA_UID])));
	log_warn("blocked %s%s (not in the allowlist)", pktinfo_format(&pi, what, sizeof(what)), uid);
	n->stats.printed++;
	return MNL_CB_OK;
}

int nflog_prepare(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct nflog *n = userdata;

	(void)timeout_ms;
	if (max < 1)
		return 0;
	fds[0] = (struct pollfd){.fd = mnl_socket_get_fd(n->nl), .events = POLLIN};
	return 1;
}

void nflog_dispatch(void *userdata, const struct pollfd *fds, size_t nfds)
{
	struct nflog *n = userdata;

	if (nfds < 1 || !(fds[0].revents & (POLLIN | POLLERR)))
		return;
	for (unsigned i = 0; i < NFLOG_RECV_BATCH; i++) {
		ssize_t r = mnl_socket_recvfrom(n->nl, n->buf, sizeof(n->buf));

		if (r < 0) {
			/* ENOBUFS: the kernel dropped messages because we were
			 * slow; count it and read on. EAGAIN: drained. */
			if (errno == ENOBUFS) {
				n->stats.lost++;
				continue;
			}
			return;
		}
		/* seq 0 and portid 0: kernel-originated messages, no checks. */
		(void)mnl_cb_run(n->buf, (size_t)r, 0, 0, packet_cb, n);
	}
}

void nflog_loop_source(struct nflog *n, struct loop_source *ret)
{
	*ret = (struct loop_source){
		.name = "nflog",
		.userdata = n,
		.prepare = nflog_prepare,
		.dispatch = nflog_dispatch,
	};
}
