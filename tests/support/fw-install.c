/* SPDX-License-Identifier: MIT */
/* Test and benchmark driver for the firewall API outside sandbox-init: the
 * same calls as start-up step 3 (load, install: resolve, build, commit,
 * read back, verify), then "firewall-ready MS" on stdout, where MS counts
 * from the start of main(). Optionally stays and serves the DNS gate and
 * blocked-packet log (as PID 1's loop would) until SIGTERM/SIGINT.
 *
 *   fw-install [--allowlist FILE] [--resolv-conf FILE] [--table NAME]
 *              [--deadline-ms N] [--check] [--serve [--gate-port N]
 *              [--write-resolv-conf FILE]] [--admit ADDR,PORT[-HI],SECONDS]...
 *              [--teardown]
 *
 * --admit calls firewall_admit() (the DNS gate's path) after the install
 * with one address each, in order, printing "admit ADDR: OK|error". 
 * Exit status: 0 ready (or served until a signal), EXIT_INIT_CONFIG for a
 * bad allowlist, EXIT_INIT_FIREWALL when the firewall failed,
 * EXIT_INIT_USAGE for a bad command line. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>

#include "exitcodes.h"
#include "firewall.h"
#include "gate.h"
#include "log.h"
#include "nflog.h"

#define DRIVER_MAX_FDS 512
#define DRIVER_MAX_ADMITS 16

#include <arpa/inet.h>

/* "ADDR,PORT,SECONDS" -> one fw_admit */
static int parse_admit(const char *arg, struct fw_admit *ret)
{
	char addr[INET6_ADDRSTRLEN + 1], *end;
	const char *c1 = strchr(arg, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	unsigned long port, secs;

	if (!c1 || !c2 || (size_t)(c1 - arg) >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, arg, (size_t)(c1 - arg));
	addr[c1 - arg] = '\0';
	*ret = (struct fw_admit){ 0 };
	if (inet_pton(AF_INET, addr, &ret->addr.v4) == 1)
		ret->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &ret->addr.v6) == 1)
		ret->family = AF_INET6;
	else
		return -EINVAL;
	errno = 0;
	port = strtoul(c1 + 1, &end, 10);
	if (errno || port == 0 || port > 65535)
		return -EINVAL;
	ret->port_lo = ret->port_hi = (uint16_t)port;
	if (*end == '-') {
		port = strtoul(end + 1, &end, 10);
		if (errno || port < ret->port_lo || port > 65535)
			return -EINVAL;
		ret->port_hi = (uint16_t)port;
	}
	if (end != c2)
		return -EINVAL;
	secs = strtoul(c2 + 1, &end, 10);
	if (errno || *end || secs > 86400)
		return -EINVAL;
	ret->timeout_ms = (uint32_t)secs * 1000u;
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int serve(struct firewall *fw, const struct firewall_config *c, unsigned port,
		 const char *resolv_out)
{
	struct sockaddr_storage ups[GATE_MAX_UPSTREAMS];
	struct gate_config gc = {
		.allowlist = &c->al,
		.upstreams = ups,
		.n_upstreams = firewall_config_upstreams(c, ups, GATE_MAX_UPSTREAMS),
		.admit = firewall_admit,
		.admit_userdata = fw,
		.port = (uint16_t)port,
	};
	struct gate *g = NULL;
	struct nflog *nl = NULL;
	struct loop_source src[2];
	size_t n_src = 0;
	sigset_t mask;
	int sfd, r;

	r = gate_new(&gc, &g);
	if (r < 0)
		return log_error_errno(r, "Failed to start the DNS gate: %s", strerror(-r));
	if (resolv_out) {
		r = firewall_resolv_conf_write(c, resolv_out, gate_has_ipv6(g));
		if (r < 0)
			log_warn_errno(r, "Failed to write '%s': %s, ignoring", resolv_out, strerror(-r));
	}
	gate_loop_source(g, &src[n_src++]);
	if (nflog_new(FW_NFLOG_GROUP, &nl) >= 0)
		nflog_loop_source(nl, &src[n_src++]);
	else
		log_warn("No blocked-packet log, ignoring");
	(void)sigemptyset(&mask);
	(void)sigaddset(&mask, SIGTERM);
	(void)sigaddset(&mask, SIGINT);
	(void)sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	printf("serving\n");
	fflush(stdout);
	for (;;) {
		struct pollfd fds[DRIVER_MAX_FDS];
		size_t off[3], cnt[3], n = 0;
		int timeout = -1;

		fds[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (size_t i = 0; i < n_src; i++) {
			int k = src[i].prepare(src[i].userdata, fds + n, DRIVER_MAX_FDS - n, &timeout);
			off[i] = n;
			cnt[i] = k > 0 ? (size_t)k : 0;
			n += cnt[i];
		}
		if (poll(fds, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (fds[0].revents & POLLIN)
			break;
		for (size_t i = 0; i < n_src; i++)
			src[i].dispatch(src[i].userdata, fds + off[i], cnt[i]);
	}
	{
		struct gate_stats gs;
		gate_get_stats(g, &gs);
		fprintf(stderr,
			"gate: %llu queries, %llu answered, %llu refused, %llu admitted, %llu admit errors\n",
			(unsigned long long)gs.queries, (unsigned long long)gs.answered,
			(unsigned long long)gs.refused, (unsigned long long)gs.admitted,
			(unsigned long long)gs.admit_errors);
	}
	nl = nflog_free(nl);
	g = gate_free(g);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "allowlist", required_argument, NULL, 'a' },
		{ "resolv-conf", required_argument, NULL, 'r' },
		{ "table", required_argument, NULL, 't' },
		{ "deadline-ms", required_argument, NULL, 'd' },
		{ "check", no_argument, NULL, 'c' },
		{ "serve", no_argument, NULL, 's' },
		{ "gate-port", required_argument, NULL, 'p' },
		{ "write-resolv-conf", required_argument, NULL, 'w' },
		{ "teardown", no_argument, NULL, 'T' },
		{ "admit", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t t0 = now_us();
	const char *allowlist = NULL, *resolv = NULL, *table = NULL, *resolv_out = NULL;
	unsigned long deadline = 0, port = 0;
	bool check = false, do_serve = false, teardown = false;
	struct firewall_config c = { 0 };
	struct firewall_stats st;
	struct firewall *fw = NULL;
	struct fw_admit admits[DRIVER_MAX_ADMITS];
	const char *admit_args[DRIVER_MAX_ADMITS];
	size_t n_admits = 0;
	int o, r;

	log_setup("fw-install");
	while ((o = getopt_long(argc, argv, "", opts, NULL)) >= 0) {
		char *end;
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
		case 'd':
			errno = 0;
			deadline = strtoul(optarg, &end, 10);
			if (errno || *end || deadline == 0 || deadline > 60000)
				return EXIT_INIT_USAGE;
			break;
		case 'p':
			errno = 0;
			port = strtoul(optarg, &end, 10);
			if (errno || *end || port == 0 || port > 65535)
				return EXIT_INIT_USAGE;
			break;
		case 'c':
			check = true;
			break;
		case 's':
			do_serve = true;
			break;
		case 'w':
			resolv_out = optarg;
			break;
		case 'T':
			teardown = true;
			break;
		case 'A':
			if (n_admits == DRIVER_MAX_ADMITS || parse_admit(optarg, &admits[n_admits]) < 0)
				return EXIT_INIT_USAGE;
			admit_args[n_admits++] = optarg;
			break;
		default:
			return EXIT_INIT_USAGE;
		}
	}
	if (optind != argc)
		return EXIT_INIT_USAGE;

	r = firewall_config_load(&c, allowlist, resolv);
	if (r < 0)
		return EXIT_INIT_CONFIG;
	if (table)
		(void)snprintf(c.table, sizeof(c.table), "%s", table);
	if (deadline)
		c.resolve_deadline_ms = (unsigned)deadline;
	if (check) {
		r = firewall_print_check(&c, stdout);
		firewall_config_done(&c);
		return r < 0 ? EXIT_INIT_FIREWALL : 0;
	}
	r = firewall_install(&c, &fw, &st);
	if (r < 0) {
		firewall_config_done(&c);
		return EXIT_INIT_FIREWALL;
	}
	printf("firewall-ready %.1f names=%zu resolved=%zu failed=%zu elements=%zu resolve=%.1f build=%.1f commit=%.1f verify=%.1f\n",
	       (double)(now_us() - t0) / 1000.0, st.names, st.names_resolved, st.names_failed,
	       st.elements, (double)st.resolve_us / 1000.0, (double)st.build_us / 1000.0,
	       (double)st.commit_us / 1000.0, (double)st.verify_us / 1000.0);
	fflush(stdout);
	for (size_t i = 0; i < n_admits; i++) {
		int k = firewall_admit(fw, &admits[i], 1);
		printf("admit %s: %s\n", admit_args[i], k < 0 ? strerror(-k) : "OK");
		if (k < 0)
			r = k;
	}
	fflush(stdout);
	if (do_serve)
		r = serve(fw, &c, (unsigned)port, resolv_out);
	if (teardown && firewall_teardown(fw) < 0)
		r = -EIO;
	fw = firewall_free(fw);
	firewall_config_done(&c);
	return r < 0 ? EXIT_INIT_FIREWALL : 0;
}
