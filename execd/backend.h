/* SPDX-License-Identifier: MIT */
/* Authorization backends of sandbox-execd. Each backend is a table of
 * operations; the daemon opens the configured one at start-up (failing with a
 * clear message when it lacks what it needs) and calls decide() once per
 * request from the request's own worker, so decide() may block up to its
 * configured timeout and must be safe to call concurrently. Any error,
 * timeout or malformed answer is a denial: decide() then returns a negative
 * errno AND leaves d->verdict == AUTHZ_DENY with a reason. */
#ifndef CS_EXECD_BACKEND_H
#define CS_EXECD_BACKEND_H

#include "authz.h"

struct backend_config {
	const char *policy_file;         /* static */
	const char *webhook_url;         /* webhook: http:// only for loopback, else https:// */
	const char *webhook_token_file;  /* webhook: optional bearer token, 0600 */
	const char *webhook_ca_file;     /* webhook: optional CA bundle */
	unsigned webhook_timeout_ms;     /* one HTTP exchange */
	unsigned webhook_poll_ms;        /* interval between polls while pending */
	const char *exec_program;        /* exec: absolute path */
	unsigned exec_timeout_ms;
	unsigned decision_timeout_ms;    /* overall, including pending polls */
};

struct backend;

struct backend_ops {
	const char *name; /* "allow_all", "static", "webhook", "exec" */
	int (*open)(const struct backend_config *cfg, struct backend **ret, char *reterr,
		    size_t reterr_len);
	int (*decide)(struct backend *b, const struct authz_request *req,
		      struct authz_decision *d);
	void (*close)(struct backend *b);
};

/* NULL when no backend has that name. */
const struct backend_ops *backend_find(const char *name);

#endif
