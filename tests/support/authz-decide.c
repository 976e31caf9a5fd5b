/* SPDX-License-Identifier: MIT */
/* authz-decide: opens a real authorization backend from options mirroring
 * execd.conf's keys, decides one request given on the command line, and
 * prints the decision. For tests and for debugging a policy:
 *
 *   authz-decide --backend static --policy policy.conf \
 *       --dest git@github.com:acme/x.git -- git push -f origin main
 *
 * Prints "allow|deny<TAB>RULE<TAB>REASON", then one "env NAME" line per
 * variable the backend returned ("env NAME=value" with --show-env: secrets
 * on stdout, for tests only). --json prints the request document instead.
 * Exit: 0 allowed, 1 denied, 3 denied because decide() failed (backend
 * error, timeout, malformed answer), 2 usage or open() failure. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "authzjson.h"
#include "backend.h"
#include "log.h"

static int parse_ms(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT_MAX || s[0] == '-')
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: authz-decide --backend NAME [--policy FILE] [--webhook-url URL]\n"
		"       [--webhook-token-file F] [--webhook-ca-file F] [--webhook-timeout-ms N]\n"
		"       [--webhook-poll-ms N] [--exec-program P] [--exec-timeout-ms N]\n"
		"       [--decision-timeout-ms N] [--dest URL] [--cwd HOSTDIR]\n"
		"       [--container-cwd DIR] [--reason TEXT] [--show-env] [--json] -- TOOL [ARG...]\n");
}

int main(int argc, char **argv)
{
	enum {
		O_BACKEND = 256, O_POLICY, O_URL, O_TOKEN, O_CA, O_WTIMEOUT, O_POLL, O_EXEC,
		O_ETIMEOUT, O_DTIMEOUT, O_DEST, O_CWD, O_CCWD, O_REASON, O_SHOWENV, O_JSON,
	};
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "webhook-url", required_argument, NULL, O_URL },
		{ "webhook-token-file", required_argument, NULL, O_TOKEN },
		{ "webhook-ca-file", required_argument, NULL, O_CA },
		{ "webhook-timeout-ms", required_argument, NULL, O_WTIMEOUT },
		{ "webhook-poll-ms", required_argument, NULL, O_POLL },
		{ "exec-program", required_argument, NULL, O_EXEC },
		{ "exec-timeout-ms", required_argument, NULL, O_ETIMEOUT },
		{ "decision-timeout-ms", required_argument, NULL, O_DTIMEOUT },
		{ "dest", required_argument, NULL, O_DEST },
		{ "cwd", required_argument, NULL, O_CWD },
		{ "container-cwd", required_argument, NULL, O_CCWD },
		{ "reason", required_argument, NULL, O_REASON },
		{ "show-env", no_argument, NULL, O_SHOWENV },
		{ "json", no_argument, NULL, O_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct backend_config cfg = {
		.webhook_timeout_ms = 5000,
		.webhook_poll_ms = 1000,
		.exec_timeout_ms = 5000,
		.decision_timeout_ms = 300000,
	};
	struct authz_request req = {
		.request_id = "authz-decide",
		.container_cwd = "/workspace",
		.peer_uid = getuid(),
		.peer_gid = getgid(),
		.peer_pid = getpid(),
	};
	struct authz_decision d = { 0 };
	const struct backend_ops *ops;
	const char *backend_name = NULL;
	struct backend *b = NULL;
	char err[512] = "";
	bool show_env = false, json = false;
	int c, r;

	log_setup("authz-decide");
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		unsigned *ms = NULL;

		switch (c) {
		case O_BACKEND: backend_name = optarg; break;
		case O_POLICY: cfg.policy_file = optarg; break;
		case O_URL: cfg.webhook_url = optarg; break;
		case O_TOKEN: cfg.webhook_token_file = optarg; break;
		case O_CA: cfg.webhook_ca_file = optarg; break;
		case O_WTIMEOUT: ms = &cfg.webhook_timeout_ms; break;
		case O_POLL: ms = &cfg.webhook_poll_ms; break;
		case O_EXEC: cfg.exec_program = optarg; break;
		case O_ETIMEOUT: ms = &cfg.exec_timeout_ms; break;
		case O_DTIMEOUT: ms = &cfg.decision_timeout_ms; break;
		case O_DEST: req.destination = optarg; break;
		case O_CWD: req.host_cwd = optarg; break;
		case O_CCWD: req.container_cwd = optarg; break;
		case O_REASON: req.reason = optarg; break;
		case O_SHOWENV: show_env = true; break;
		case O_JSON: json = true; break;
		default: usage(); return 2;
		}
		if (ms && parse_ms(optarg, ms) < 0) {
			fprintf(stderr, "authz-decide: invalid number '%s'\n", optarg);
			return 2;
		}
	}
	if (optind >= argc) {
		usage();
		return 2;
	}
	req.argv = (const char *const *)(argv + optind);
	req.argc = (size_t)(argc - optind);
	req.tool = argv[optind];
	if (json) {
		char *s = NULL;

		r = authzjson_encode_request(&req, &s, NULL);
		if (r < 0) {
			fprintf(stderr, "authz-decide: cannot encode: %s\n", strerror(-r));
			return 2;
		}
		printf("%s\n", s);
		free(s);
		return 0;
	}
	if (!backend_name) {
		usage();
		return 2;
	}
	ops = backend_find(backend_name);
	if (!ops) {
		fprintf(stderr, "authz-decide: unknown backend '%s'\n", backend_name);
		return 2;
	}
	r = ops->open(&cfg, &b, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "authz-decide: backend '%s': %s\n", backend_name, err);
		return 2;
	}
	r = ops->decide(b, &req, &d);
	printf("%s\t%s\t%s\n", d.verdict == AUTHZ_ALLOW ? "allow" : "deny", d.rule, d.reason);
	for (size_t i = 0; i < d.n_env; i++) {
		if (show_env)
			printf("env %s\n", d.env[i]);
		else
			printf("env %.*s\n", (int)strcspn(d.env[i], "="), d.env[i]);
	}
	c = d.verdict == AUTHZ_ALLOW ? 0 : 1;
	if (r < 0 && d.verdict == AUTHZ_ALLOW) {
		fprintf(stderr, "authz-decide: decide() failed but allowed: contract violation\n");
		c = 4;
	} else if (r < 0)
		c = 3;
	authz_decision_clear(&d);
	ops->close(b);
	return c;
}
