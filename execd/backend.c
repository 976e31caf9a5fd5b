/* SPDX-License-Identifier: MIT */
/* The table of authorization backends: execd.conf's `backend = NAME` picks
 * one. Adding a backend is one ops table in its own file plus one line here
 * (docs/extending.md). */
#include "backend.h"

#include <stdio.h>
#include <string.h>

#include "backend_ops.h"
#include "macros.h"

static const struct backend_ops *const backends[] = {
	&backend_allow_all_ops,
};

const struct backend_ops *backend_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

int backend_deny(struct authz_decision *d, int error, const char *rule, const char *reason)
{
	authz_decision_clear(d);
	(void)snprintf(d->rule, sizeof(d->rule), "%s", rule ? rule : "");
	(void)snprintf(d->reason, sizeof(d->reason), "%s", reason ? reason : "");
	return error;
}
