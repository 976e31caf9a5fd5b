/* SPDX-License-Identifier: MIT */
/* static: decides from a policy file (lib/policy.c), loaded once at open.
 * The parsed policy is immutable afterwards, so decide() is safe to call
 * from any number of workers at once. A policy that does not parse stops
 * the daemon from starting: a half-read policy must never be in force. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "backend_ops.h"
#include "log.h"
#include "policy.h"

struct backend {
	struct policy *policy;
	char name[64]; /* policy file basename, for rule ids "policy.conf:12" */
};

static int static_open(const struct backend_config *cfg, struct backend **ret, char *reterr,
		       size_t reterr_len)
{
	_cleanup_free_ char *text = NULL;
	struct policy_error pe = { 0 };
	struct backend *b;
	const char *base;
	size_t len = 0;
	int r;

	if (!cfg->policy_file) {
		(void)snprintf(reterr, reterr_len,
			       "backend 'static' needs a policy file (policy_file = PATH)");
		return -EINVAL;
	}
	r = backend_read_file("policy file", cfg->policy_file, POLICY_MAX_FILE, false, &text, &len,
			      reterr, reterr_len);
	if (r < 0)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b) {
		(void)snprintf(reterr, reterr_len, "out of memory");
		return -ENOMEM;
	}
	r = policy_parse(text, len, &b->policy, &pe);
	if (r < 0) {
		if (pe.column > 0)
			(void)snprintf(reterr, reterr_len, "%s:%u:%u: %s", cfg->policy_file, pe.line,
				       pe.column, pe.message ? pe.message : strerror(-r));
		else
			(void)snprintf(reterr, reterr_len, "%s:%u: %s", cfg->policy_file, pe.line,
				       pe.message ? pe.message : strerror(-r));
		free(b);
		return r;
	}
	base = strrchr(cfg->policy_file, '/');
	(void)snprintf(b->name, sizeof(b->name), "%s", base ? base + 1 : cfg->policy_file);
	if (policy_n_rules(b->policy) == 0)
		log_warn("Policy file '%s' has no rules: every command will be denied",
			 cfg->policy_file);
	*ret = b;
	return 0;
}

static int static_decide(struct backend *b, const struct authz_request *req,
			 struct authz_decision *d)
{
	struct policy_verdict v;
	int r;

	authz_decision_clear(d);
	r = policy_evaluate(b->policy, req, &v);
	if (r < 0)
		return backend_deny(d, r, "static:error", v.reason);
	d->verdict = v.verdict == AUTHZ_ALLOW ? AUTHZ_ALLOW : AUTHZ_DENY;
	(void)snprintf(d->reason, sizeof(d->reason), "%s", v.reason);
	if (v.source == POLICY_SOURCE_RULE)
		(void)snprintf(d->rule, sizeof(d->rule), "%s:%u", b->name, v.line);
	else
		(void)snprintf(d->rule, sizeof(d->rule), "%s:%s", b->name,
			       v.source == POLICY_SOURCE_GRAMMAR ? "grammar" : "default");
	return 0;
}

static void static_close(struct backend *b)
{
	if (!b)
		return;
	policy_free(b->policy);
	free(b);
}

const struct backend_ops backend_static_ops = {
	.name = "static",
	.open = static_open,
	.decide = static_decide,
	.close = static_close,
};
