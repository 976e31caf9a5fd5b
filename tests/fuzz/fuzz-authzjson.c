/* SPDX-License-Identifier: MIT */
/* Fuzz target for decision parsing (webhook and exec answers). Oracles:
 * an error always leaves a denial without environment; only "approved"
 * allows; every returned variable is NAME=value with a valid NAME. */
#include <stdlib.h>
#include <string.h>

#include "authzjson.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct authzjson_answer a;
	struct authz_decision d = { 0 };
	const char *why = NULL;
	int r = authzjson_parse_decision((const char *)data, size, &a, &d, &why);

	if (r < 0) {
		if (d.verdict != AUTHZ_DENY || d.n_env != 0 || !why)
			abort();
	} else {
		if ((d.verdict == AUTHZ_ALLOW) != (a.state == AUTHZJSON_APPROVED))
			abort();
		if (a.state == AUTHZJSON_PENDING && !a.id[0])
			abort();
		for (size_t i = 0; i < d.n_env; i++)
			if (!strchr(d.env[i], '=') || strncmp(d.env[i], "LD_", 3) == 0)
				abort();
		if (d.n_env > 0 && a.state != AUTHZJSON_APPROVED)
			abort();
	}
	authz_decision_clear(&d);
	return 0;
}
