/* SPDX-License-Identifier: MIT */
/* The ops tables of the built-in backends, for backend.c's lookup table and
 * for tests that want one backend by symbol. Each lives in its own
 * backend_NAME.c, which alone knows its struct backend. */
#ifndef CS_EXECD_BACKEND_OPS_H
#define CS_EXECD_BACKEND_OPS_H

#include "backend.h"

extern const struct backend_ops backend_allow_all_ops;

/* Sets d to a denial with reason and rule (both truncated to fit) and returns
 * error (a negative errno): the backend.h rule that an error is a denial
 * with a reason, in one line. */
int backend_deny(struct authz_decision *d, int error, const char *rule, const char *reason);

#endif
