/* SPDX-License-Identifier: MIT */
/* The JSON the webhook and exec backends exchange with an external policy
 * engine (README.md, "Webhook and exec protocol"). Pure code on json-c.
 *
 * Request (what the engine is shown; never a credential):
 *   {"version":1, "request_id":"...", "tool":"git", "argv":["git","push",...],
 *    "subcommand":["push"], "flags":[{"name":"--force","written":"-f","value":null}],
 *    "operands":["origin","+main"], "parse":{"complete":true,"problem":null},
 *    "cwd":{"container":"/workspace","host":"/home/u/src/p"},
 *    "destination":"git@github.com:acme/x.git", "destination_normalised":"github.com/acme/x",
 *    "reason":..., "repo":..., "branch":..., "peer":{"uid":1000,"gid":1000,"pid":42}}
 * plus, for git relay requests, "git":{...} (lib/authz_git.h) and, for psql,
 *    "psql":{"host":"db.internal","port":"5432","dbname":"app","user":"ro"}
 * (lib/psqltarget.h: canonical values, null for a field the command does
 * not give, ambiguous targets refused before any backend is asked).
 *
 * Decision (anything else is an error, which the caller turns into a denial):
 *   {"decision":"approved"|"denied"|"pending", "reason":"...", "id":"...",
 *    "env":{"NAME":"value"}}
 * id is required with "pending" (it names the decision to poll for); env is
 * allowed only with "approved". No other keys. */
#ifndef CS_AUTHZJSON_H
#define CS_AUTHZJSON_H

#include <stddef.h>

#include "authz.h"

#define AUTHZJSON_VERSION 1
#define AUTHZJSON_MAX_DECISION ((size_t)64 * 1024) /* bytes of one decision document */
#define AUTHZJSON_MAX_ID 128               /* pending id, with NUL */
#define AUTHZJSON_MAX_KEYS 64              /* keys of one object in an answer */
#define AUTHZJSON_MAX_DEPTH 16             /* nesting of an answer */

enum authzjson_state {
	AUTHZJSON_APPROVED,
	AUTHZJSON_DENIED,
	AUTHZJSON_PENDING,
	AUTHZJSON_STATE_MAX,
};

struct authzjson_answer {
	enum authzjson_state state;
	char id[AUTHZJSON_MAX_ID]; /* [A-Za-z0-9._~-]+, empty when absent */
};

/* Encodes req as the request document above (NUL-terminated, malloc'd,
 * owned by the caller). -ENOMEM, -EINVAL on a request without tool/argv. */
int authzjson_encode_request(const struct authz_request *req, char **ret, size_t *ret_len);

/* Parses a decision document of len bytes (need not be NUL-terminated).
 * On success fills *ret; d gets the verdict (allow only for "approved"),
 * the reason and the env. On any error returns -EBADMSG (or -ENOMEM) with
 * *reterr a static description, and d cleared to a denial. */
int authzjson_parse_decision(const char *text, size_t len, struct authzjson_answer *ret,
			     struct authz_decision *d, const char **reterr);

/* Scans a JSON text (already known to be well-formed) for an object with
 * two equal keys, compared after unescaping. 0 when there is none,
 * -EEXIST when there is, -E2BIG for an object of more than
 * AUTHZJSON_MAX_KEYS keys, -EBADMSG for nesting deeper than
 * AUTHZJSON_MAX_DEPTH or a malformed text, -ENOMEM. */
int authzjson_check_duplicate_keys(const char *text, size_t len);

/* The destination without its userinfo: a remote URL such as
 * https://user:TOKEN@host/x carries a credential that neither an external
 * policy engine nor the audit log may receive. Other forms are copied
 * unchanged. -ENAMETOOLONG when url does not fit in len bytes. */
int authzjson_redact_userinfo(const char *url, char *buf, size_t len);

#endif
