/* SPDX-License-Identifier: MIT */
/* The static policy language of sandbox-execd (README.md, "Authorization
 * policy"): ordered, line-based rules evaluated on the parsed request.
 *
 *   deny  git push force=yes reason="force pushes need review"   (git relay rules:
 *   allow git fetch,push dest=github.com/acme/...    ref=, force=, delete=, ff=, default=)
 *   allow gh pr create,view,list
 *   allow kubectl get
 *   deny  kubectl get arg=secret,secrets
 *
 * A matching deny always wins over a matching allow; a request no allow rule
 * matches is denied. Order only chooses which reason is shown: the first
 * matching deny's, else the first matching allow's. Pure code. */
#ifndef CS_POLICY_H
#define CS_POLICY_H

#include <stddef.h>

#include "authz.h"

#define POLICY_MAX_FILE ((size_t)1024 * 1024) /* bytes of policy text */
#define POLICY_MAX_RULES 1024
#define POLICY_MAX_LINE 4096          /* bytes per line, without the newline */
#define POLICY_MAX_WORDS 4            /* subcommand levels in one rule */
#define POLICY_MAX_PATTERNS 64        /* alternatives in one comma list */
#define POLICY_MAX_PATTERN 256        /* bytes of one pattern */
#define POLICY_MAX_URL 2048           /* bytes of a normalised destination */

struct policy_error {
	unsigned line;       /* 1-based; 0 when not about a line (file too large) */
	unsigned column;     /* 1-based byte column; 0 when not about a column */
	const char *message; /* static */
};

enum policy_source {
	POLICY_SOURCE_RULE,    /* a rule matched (line) */
	POLICY_SOURCE_DEFAULT, /* no rule allowed it */
	POLICY_SOURCE_GRAMMAR, /* the arguments were refused or not understood */
	POLICY_SOURCE_MAX,
};

struct policy_verdict {
	enum authz_verdict verdict;
	enum policy_source source;
	unsigned line;                 /* the rule that decided, 0 when none did */
	char reason[AUTHZ_MAX_REASON]; /* for the agent and the audit log */
};

struct policy;

/* Parses policy text (len bytes, need not be NUL-terminated). *ret is owned
 * by the caller (policy_free). On a syntax error returns -EINVAL and fills
 * *reterr (line, column, static message); -E2BIG beyond the limits above
 * (also with *reterr); -ENOMEM. */
int policy_parse(const char *text, size_t len, struct policy **ret, struct policy_error *reterr);
void policy_free(struct policy *p);
size_t policy_n_rules(const struct policy *p);

/* Decides req. Never fails open: any internal error (-ENOMEM) returns the
 * error AND fills *ret with a denial. Returns 0 otherwise, whatever the
 * verdict. */
int policy_evaluate(const struct policy *p, const struct authz_request *req,
		    struct policy_verdict *ret);

/* Normalises a git remote URL to "host[:port]/path" without scheme, user,
 * default port, trailing slash or ".git": https://github.com/acme/x.git,
 * git@github.com:acme/x.git and ssh://git@github.com/acme/x all become
 * "github.com/acme/x". Refuses (-EINVAL) what it cannot read unambiguously:
 * local paths, other schemes and transport helpers (file://, ext::), "." or
 * ".." or empty path segments, path characters outside [A-Za-z0-9._~+-/],
 * percent-encoding, '?', '#', backslashes, control characters, IPv6
 * literals. -ENAMETOOLONG when buf is too small. */
int policy_normalise_url(const char *url, char *buf, size_t len);

#endif
