/* SPDX-License-Identifier: MIT */
/* The ops tables of the built-in backends, for backend.c's lookup table and
 * for tests that want one backend by symbol. Each lives in its own
 * backend_NAME.c, which alone knows its struct backend. */
#ifndef CS_EXECD_BACKEND_OPS_H
#define CS_EXECD_BACKEND_OPS_H

#include "backend.h"

#include <stdbool.h>
#include <stddef.h>

extern const struct backend_ops backend_allow_all_ops;
extern const struct backend_ops backend_static_ops;
extern const struct backend_ops backend_exec_ops;
extern const struct backend_ops backend_webhook_ops;

/* Sets d to a denial with reason and rule (both truncated to fit) and returns
 * error (a negative errno): the backend.h rule that an error is a denial
 * with a reason, in one line. */
int backend_deny(struct authz_decision *d, int error, const char *rule, const char *reason);

/* Reads a whole configuration file the daemon trusts (policy, token, CA)
 * into a NUL-terminated malloc'd buffer: an absolute path to a regular
 * file of at most max bytes, owned by this user or root and not group or
 * world writable; a secret must also be this user's, mode 0600 or 0400, and
 * not a symlink. what names the file in messages ("policy file"). Fills
 * reterr and returns a negative errno on failure. */
int backend_read_file(const char *what, const char *path, size_t max, bool secret, char **ret,
		      size_t *ret_len, char *reterr, size_t reterr_len);

/* Frees a decision answer buffer of AUTHZJSON_MAX_DECISION + 1 bytes after
 * wiping all of it: an answer may carry credentials, also a partial one. */
void backend_answer_freep(char **buf);

#endif
