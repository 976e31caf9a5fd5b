/* SPDX-License-Identifier: MIT */
/* sandbox-init's firewall steps. See fwstep.h. */
#include "fwstep.h"

#include <errno.h>
#include <linux/capability.h>
#include <string.h>

#include "fail.h"
#include "gate.h"
#include "log.h"
#include "nflog.h"

int fwstep_load(struct fwstep *s, const char *allowlist_path)
{
	/* The resolvers of the container's own resolv.conf, read now: step 3
	 * rewrites the file to point at the gate. */
	int r = firewall_config_load(&s->cfg, allowlist_path, FIREWALL_RESOLV_CONF);

	/* The details (file:line: reason) were logged above; this is
	 * sandbox-init's one "sandbox-init: STEP: REASON" line. */
	if (r < 0)
		return init_fail("config", r, "invalid egress allowlist or resolver configuration");
	return 0;
}

int fwstep_print_check(const struct fwstep *s, FILE *f)
{
	return firewall_print_check(&s->cfg, f);
}

int fwstep_start(struct fwstep *s, struct loop *loop, uint64_t *keep_caps)
{
	struct sockaddr_storage ups[GATE_MAX_UPSTREAMS];
	struct loop_source src;
	struct gate_config gc = { 0 };
	int r;

	r = firewall_install(&s->cfg, &s->fw, NULL);
	if (r < 0) /* the rule or element was named above */
		return init_fail("firewall", r, "cannot install or verify table inet %s", s->cfg.table);

	gc = (struct gate_config){
		.allowlist = &s->cfg.al,
		.upstreams = ups,
		.n_upstreams = firewall_config_upstreams(&s->cfg, ups, GATE_MAX_UPSTREAMS),
		.admit = firewall_admit,
		.admit_userdata = s->fw,
	};
	if (gc.n_upstreams == 0) {
		/* Without a resolver the gate could only fail every query; the
		 * firewall still stands (default deny, literal entries). */
		log_warn("No upstream DNS server: the DNS gate is not started, names cannot be resolved, ignoring");
	} else {
		/* Binding port 53 needs CAP_NET_BIND_SERVICE, which PID 1 still
		 * holds here, before its capability drop. */
		r = gate_new(&gc, &s->gate);
		if (r < 0)
			return init_fail("firewall", r, "cannot start the DNS gate");
		r = firewall_resolv_conf_write(&s->cfg, FIREWALL_RESOLV_CONF, gate_has_ipv6(s->gate));
		/* EROFS/EACCES/EPERM: a read-only root or bind mount. Fine
		 * when the launcher already pointed it at the gate (and passed
		 * the upstream in CODE_SANDBOX_DNS). */
		if ((r == -EROFS || r == -EACCES || r == -EPERM) &&
		    firewall_resolv_conf_points_at_gate(FIREWALL_RESOLV_CONF)) {
			log_debug("%s is read-only and already points at the DNS gate", FIREWALL_RESOLV_CONF);
			r = 0;
		}
		if (r < 0)
			return init_fail("firewall", r, "cannot point %s at the DNS gate",
					 FIREWALL_RESOLV_CONF);
		gate_loop_source(s->gate, &src);
		r = loop_add_source(loop, &src);
		if (r < 0)
			return init_fail("firewall", r, "cannot register the DNS gate in the loop");
	}

	r = nflog_new(FW_NFLOG_GROUP, &s->nflog);
	if (r < 0)
		log_warn_errno(r, "No blocked-packet log lines (counters still count): %s, ignoring",
			       strerror(-r));
	else {
		nflog_loop_source(s->nflog, &src);
		r = loop_add_source(loop, &src);
		if (r < 0)
			log_warn_errno(r, "Failed to register the blocked-packet log: %s, ignoring",
				       strerror(-r));
	}

	/* firewall_admit() sends set updates from PID 1's loop, after the
	 * drop: netfilter checks CAP_NET_ADMIN of the sender on every batch,
	 * not only of whoever opened the socket. */
	*keep_caps |= UINT64_C(1) << CAP_NET_ADMIN;
	return 0;
}
