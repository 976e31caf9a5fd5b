/* SPDX-License-Identifier: MIT */
/* What the policy sees of a git relay request (execd/gitrelay.c): the
 * operation, the URL exactly as the daemon contacts it, and for a push each
 * ref update with what the daemon's cache knows about it. Referenced from
 * struct authz_request (->git, NULL for tool requests) and from audit
 * decision records. */
#ifndef CS_AUTHZ_GIT_H
#define CS_AUTHZ_GIT_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

struct authz_git_update {
	const char *src;  /* object name pushed; "" for a delete */
	const char *dst;  /* full destination ref, "refs/heads/x" */
	const char *old;  /* the remote's current object name, "" when the ref is new */
	bool force;       /* the agent asked for a forced update */
	bool delete_ref;  /* the agent asked to delete dst */
	bool ff;          /* new ref, or old is an ancestor of src (from the cache) */
	bool is_default;  /* dst is the remote's default branch (its HEAD) */
};

struct authz_git {
	const char *op;  /* "ls-remote", "fetch", "clone" (a fetch into an empty repository), "push" */
	const char *url; /* canonical URL the daemon contacts (lib/gitrelay.h) */
	const struct authz_git_update *updates;
	size_t n_updates;
	bool dry_run; /* push --dry-run: decided and asked of the remote, nothing changes */
	bool atomic;  /* push --atomic */
};

/* {"op":..,"url":..,"updates":[{"src","dst","old","force","delete","ff",
 * "default"}]}, plus "dry_run": true and "atomic": true when set, as a new json-c object (NULL on ENOMEM). For the webhook and
 * exec backends' request and for audit records. */
struct json_object *authz_git_to_json(const struct authz_git *g);

#endif
