/* SPDX-License-Identifier: MIT */
/* Test and benchmark driver for the DNS gate: installs the firewall exactly
 * as sandbox-init's step 3 does (firewall_config_load, firewall_install),
 * then serves the gate (admitting through firewall_admit) and the
 * blocked-packet log from one poll loop, as PID 1 does, until SIGTERM or
 * SIGINT. Prints "gate-ready" on stdout once the gate listens, and the
 * gate's counters on stdout when it stops ("gate-stats queries=... ...").
 *
 *   gate-run [--allowlist FILE] [--resolv-conf FILE] [--table NAME]
 *            [--port N] [--write-resolv-conf FILE] [--no-nflog]
 *            [--test-ttl-floor S] [--test-ttl-grace S] [--test-dyn-caps N,M] [--teardown]
 *
 * --test-dyn-caps N,M lowers the gate's caps on live admitted addresses
 * (N per name, M in all).
 * --test-ttl-floor/--test-ttl-grace shorten FW_TTL_FLOOR_S/FW_TTL_GRACE_S
 * (through gate_config.test_ttl) so that expiry is observable in a test;
 * without them the production defaults apply. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>

#include "exitcodes.h"
#include "firewall.h"
#include "gate.h"
#include "log.h"
#include "nflog.h"

#define RUN_MAX_FDS 512
#define RUN_MAX_SOURCES 2

static int parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int serve(struct gate *g, struct nflog *nl)
{
	struct loop_source src[RUN_MAX_SOURCES];
	size_t n_src = 0;
	sigset_t mask;
	_cleanup_close_ int sfd = -1;

	gate_loop_source(g, &src[n_src++]);
	if (nl)
		nflog_loop_source(nl, &src[n_src++]);
	(void)sigemptyset(&mask);
	(void)sigaddset(&mask, SIGTERM);
	(void)sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return negative_errno();
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return negative_errno();
	printf("gate-ready\n");
	fflush(stdout);
	for (;;) {
		struct pollfd fds[RUN_MAX_FDS];
		size_t off[RUN_MAX_SOURCES], cnt[RUN_MAX_SOURCES], n = 0;
		int timeout = -1;

		fds[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
		for (size_t i = 0; i < n_src; i++) {
			int k = src[i].prepare(src[i].userdata, fds + n, RUN_MAX_FDS - n, &timeout);

			off[i] = n;
			cnt[i] = k > 0 ? (size_t)k : 0;
			n += cnt[i];
		}
		if (poll(fds, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (fds[0].revents & POLLIN)
			return 0;
		for (size_t i = 0; i < n_src; i++)
			src[i].dispatch(src[i].userdata, fds + off[i], cnt[i]);
	}
}

static void print_stats(const struct gate *g, const struct nflog *nl)
{
	struct gate_stats s;
	struct nflog_stats ns = {0};

	gate_get_stats(g, &s);
	if (nl)
		nflog_get_stats(nl, &ns);
	printf("gate-stats queries=%llu forwarded=%llu answered=%llu refused=%llu nodata=%llu "
	       "malformed=%llu upstream_errors=%llu overload=%llu admitted=%llu admit_errors=%llu "
	       "rebinding=%llu capped=%llu blocked_packets=%llu blocked_lines=%llu blocked_kernel=%llu\n",
	       (unsigned long long)s.queries, (unsigned long long)s.forwarded,
	       (unsigned long long)s.answered, (unsigned long long)s.refused,
	       (unsigned long long)s.nodata, (unsigned long long)s.malformed,
	       (unsigned long long)s.upstream_errors, (unsigned long long)s.overload,
	       (unsigned long long)s.admitted, (unsigned long long)s.admit_errors,
	       (unsigned long long)s.rebinding, (unsigned long long)s.capped, (unsigned long long)ns.packets,
	       (unsigned long long)ns.printed, (unsigned long long)ns.kernel);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"allowlist", required_argument, NULL, 'a'},
		{"resolv-conf", required_argument, NULL, 'r'},
		{"table", required_argument, NULL, 't'},
		{"port", required_argument, NULL, 'p'},
		{"write-resolv-conf", required_argument, NULL, 'w'},
		{"no-nflog", no_argument, NULL, 'N'},
		{"test-ttl-floor", required_argument, NULL, 'F'},
		{"test-ttl-grace", required_argument, NULL, 'G'},
		{"test-dyn-caps", required_argument, NULL, 'C'},
		{"teardown", no_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	const char *allowlist = NULL, *resolv = NULL, *table = NULL, *resolv_out = NULL;
	unsigned long port = 0, floor_s = 0, grace_s = 0, cap_name = 0, cap_total = 0;
	bool use_nflog = true, test_ttl = false, teardown = false;
	struct firewall_config c = {0};
	struct firewall *fw = NULL;
	struct sockaddr_storage ups[GATE_MAX_UPSTREAMS];
	struct gate_config gc;
	struct gate *g = NULL;
	struct nflog *nl = NULL;
	int o, r;

	log_setup("gate-run");
	while ((o = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		switch (o) {
		case 'a':
			allowlist = optarg;
			break;
		case 'r':
			resolv = optarg;
			break;
		case 't':
			table = optarg;
			break;
		case 'p':
			if (parse_uint(optarg, 65535, &port) < 0 || port == 0)
				return EXIT_INIT_USAGE;
			break;
		case 'w':
			resolv_out = optarg;
			break;
		case 'N':
			use_nflog = false;
			break;
		case 'F':
			if (parse_uint(optarg, FW_TTL_CEIL_S, &floor_s) < 0 || floor_s == 0)
				return EXIT_INIT_USAGE;
			test_ttl = true;
			break;
		case 'G':
			if (parse_uint(optarg, FW_TTL_CEIL_S, &grace_s) < 0)
				return EXIT_INIT_USAGE;
			test_ttl = true;
			break;
		case 'C': {
			char *comma = strchr(optarg, ',');

			if (!comma)
				return EXIT_INIT_USAGE;
			*comma = '\0';
			if (parse_uint(optarg, GATE_DYN_MAX_PER_NAME, &cap_name) < 0 ||
			    parse_uint(comma + 1, GATE_DYN_MAX_TOTAL, &cap_total) < 0)
				return EXIT_INIT_USAGE;
			break;
		}
		case 'T':
			teardown = true;
			break;
		default:
			return EXIT_INIT_USAGE;
		}
	}
	if (optind != argc)
		return EXIT_INIT_USAGE;
	if (test_ttl && floor_s == 0)
		floor_s = FW_TTL_FLOOR_S;

	r = firewall_config_load(&c, allowlist, resolv);
	if (r < 0)
		return EXIT_INIT_CONFIG;
	if (table)
		(void)snprintf(c.table, sizeof(c.table), "%s", table);
	r = firewall_install(&c, &fw, NULL);
	if (r < 0) {
		firewall_config_done(&c);
		return EXIT_INIT_FIREWALL;
	}
	gc = (struct gate_config){
		.allowlist = &c.al,
		.upstreams = ups,
		.n_upstreams = firewall_config_upstreams(&c, ups, GATE_MAX_UPSTREAMS),
		.admit = firewall_admit,
		.admit_userdata = fw,
		.port = (uint16_t)port,
		.test_ttl = test_ttl,
		.test_ttl_floor_s = (uint32_t)floor_s,
		.test_ttl_grace_s = (uint32_t)grace_s,
		.test_dyn_max_per_name = cap_name,
		.test_dyn_max_total = cap_total,
	};
	r = gate_new(&gc, &g);
	if (r < 0) {
		log_error_errno(r, "Failed to start the DNS gate: %s", strerror(-r));
		goto out;
	}
	if (resolv_out) {
		r = firewall_resolv_conf_write(&c, resolv_out, gate_has_ipv6(g));
		if (r < 0) {
			log_error_errno(r, "Failed to write '%s': %s", resolv_out, strerror(-r));
			goto out;
		}
	}
	if (use_nflog) {
		r = nflog_new(FW_NFLOG_GROUP, &nl);
		if (r < 0) {
			log_error_errno(r, "Failed to bind nflog group %u: %s", FW_NFLOG_GROUP,
					strerror(-r));
			goto out;
		}
	}
	r = serve(g, nl);
	print_stats(g, nl);
out:
	nl = nflog_free(nl);
	g = gate_free(g);
	if (teardown && fw)
		(void)firewall_teardown(fw);
	fw = firewall_free(fw);
	firewall_config_done(&c);
	return r < 0 ? EXIT_INIT_FIREWALL : 0;
}
