/* SPDX-License-Identifier: MIT */
/* allow_all: approves every request. For developing the daemon and the
 * wrappers only: it is not a policy. open() warns loudly so it cannot be
 * switched on unnoticed, and the daemon still audits every decision. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "backend_ops.h"
#include "log.h"

struct backend {
	unsigned long n_decisions; /* only to have a non-empty struct */
};

static int allow_all_open(const struct backend_config *cfg, struct backend **ret, char *reterr,
			  size_t reterr_len)
{
	struct backend *b;

	(void)cfg;
	b = calloc(1, sizeof(*b));
	if (!b) {
		(void)snprintf(reterr, reterr_len, "out of memory");
		return -ENOMEM;
	}
	log_warn("*** backend 'allow_all' approves EVERY command: development only, never with real "
		 "credentials ***");
	*ret = b;
	return 0;
}

static int allow_all_decide(struct backend *b, const struct authz_request *req,
			    struct authz_decision *d)
{
	(void)b;
	(void)req;
	authz_decision_clear(d);
	d->verdict = AUTHZ_ALLOW;
	(void)snprintf(d->rule, sizeof(d->rule), "allow_all");
	(void)snprintf(d->reason, sizeof(d->reason), "allow_all backend (development only)");
	return 0;
}

static void allow_all_close(struct backend *b)
{
	free(b);
}

const struct backend_ops backend_allow_all_ops = {
	.name = "allow_all",
	.open = allow_all_open,
	.decide = allow_all_decide,
	.close = allow_all_close,
};
