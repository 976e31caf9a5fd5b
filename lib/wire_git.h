/* SPDX-License-Identifier: MIT */
/* The git relay's request frame (WIRE_TYPE_GIT), sent by git-remote-sandbox
 * in the container to sandbox-execd. Same framing as wire.h (header, then
 * tag/length/value fields; tags with 0x80 set are skippable extensions);
 * this frame uses tags 0x20..0x2F. The reply is an ordinary WIRE_TYPE_REPLY.
 *
 * Fields:
 *   0x20 token     string, required
 *   0x21 op        u32 (enum wire_git_op), required
 *   0x22 url       string, required: the remote URL as git gave it to the
 *                  helper; the daemon validates and normalises it itself
 *   0x23 reason    string, optional (SANDBOX_REASON)
 *   0x24 update    push only, repeated: byte 0 flags (WIRE_GIT_UPDATE_*),
 *                  byte 1 length N of the source object name (0 for a
 *                  delete), N bytes of hex object name, then the
 *                  destination ref name (the rest of the value)
 *   0x25 want      fetch only, repeated: hex object name
 *   0x26 have      fetch only, repeated: hex object name the container has
 *   0x27 flags     u32, optional, must be understood: WIRE_GIT_FLAG_DRY_RUN,
 *                  WIRE_GIT_FLAG_ATOMIC (push only); unknown bits refused
 *   0xA7 cloning   empty, optional, may be ignored (0x80 set): this fetch is
 *                  a clone (git's "option cloning"); the policy and the audit
 *                  see the operation "clone" instead of "fetch"
 *
 * fds (WIRE_GIT_FDS, in this order, SCM_RIGHTS with the header):
 *   0 in   push: the bundle the daemon reads (anything else: /dev/null)
 *   1 out  list: the ref list in remote-helper syntax; fetch: a bundle;
 *          push: one status line per update ("ok REF" / "error REF why")
 *   2 err  progress and error text for the user's terminal
 * The helper's own stdin/stdout stay git's protocol pipes. Nothing in the
 * frame is a path, a git option, a configuration key or an environment
 * variable, and the daemon never turns any of it into one. */
#ifndef CS_WIRE_GIT_H
#define CS_WIRE_GIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define WIRE_GIT_FDS 3
#define WIRE_GIT_MAX_URL 2048
#define WIRE_GIT_MAX_REF 1024       /* bytes of one ref name */
#define WIRE_GIT_MAX_UPDATES 256    /* ref updates in one push */
#define WIRE_GIT_MAX_WANTS 4096     /* objects asked for in one fetch */
#define WIRE_GIT_MAX_HAVES 1024     /* tips the container reports having */
#define WIRE_GIT_OID_MAX 64         /* hex digits: SHA-256 */

enum {
	WIRE_TAG_GIT_TOKEN = 0x20,
	WIRE_TAG_GIT_OP = 0x21,
	WIRE_TAG_GIT_URL = 0x22,
	WIRE_TAG_GIT_REASON = 0x23,
	WIRE_TAG_GIT_UPDATE = 0x24,
	WIRE_TAG_GIT_WANT = 0x25,
	WIRE_TAG_GIT_HAVE = 0x26,
	WIRE_TAG_GIT_FLAGS = 0x27,
	WIRE_TAG_GIT_CLONING = 0xA7,
};

#define WIRE_GIT_FLAG_DRY_RUN 0x01u /* push: decide and ask the remote, change nothing */
#define WIRE_GIT_FLAG_ATOMIC 0x02u  /* push: all updates or none (the remote must support it) */
#define WIRE_GIT_FLAGS_KNOWN (WIRE_GIT_FLAG_DRY_RUN | WIRE_GIT_FLAG_ATOMIC)

enum wire_git_op {
	WIRE_GIT_LIST,          /* list: refs, for fetching */
	WIRE_GIT_LIST_FOR_PUSH, /* list for-push */
	WIRE_GIT_FETCH,
	WIRE_GIT_PUSH,
	WIRE_GIT_OP_MAX,
};

#define WIRE_GIT_UPDATE_FORCE 0x01u
#define WIRE_GIT_UPDATE_DELETE 0x02u
#define WIRE_GIT_UPDATE_KNOWN (WIRE_GIT_UPDATE_FORCE | WIRE_GIT_UPDATE_DELETE)

struct wire_git_update {
	char src[WIRE_GIT_OID_MAX + 1]; /* "" for a delete */
	char *dst;                      /* full ref name ("refs/heads/x") */
	bool force;
	bool delete_ref;
};

/* Decoded requests own their strings (wire_git_request_done). For encoding
 * the caller fills the struct and keeps ownership. */
struct wire_git_request {
	char *token;
	enum wire_git_op op;
	char *url;
	char *reason; /* NULL when absent */
	struct wire_git_update *updates;
	size_t n_updates;
	char (*wants)[WIRE_GIT_OID_MAX + 1];
	size_t n_wants;
	char (*haves)[WIRE_GIT_OID_MAX + 1];
	size_t n_haves;
	uint32_t flags; /* WIRE_GIT_FLAG_* */
	bool cloning;   /* fetch only */
};

/* "list", "list for-push", "fetch", "push"; "?" out of range. */
const char *wire_git_op_to_string(enum wire_git_op op);

/* True for 40 or 64 lowercase hex digits exactly (git's SHA-1 and SHA-256
 * object names, as ls-remote and the remote-helper protocol print them). */
bool wire_git_oid_valid(const char *s, size_t len);

/* True when s is a full ref name git would accept for an update:
 * "refs/" followed by components that follow git-check-ref-format(1): no
 * component starting with '.' or ending with ".lock", no "..", no control
 * characters, space, '~', '^', ':', '?', '*', '[', '\\', no "@{", no "//",
 * not ending in '/' or '.', not "@"; at most WIRE_GIT_MAX_REF bytes; valid
 * UTF-8. */
bool wire_git_refname_valid(const char *s);

/* Encodes into buf (at most WIRE_MAX_FRAME). Validates what the decoder
 * refuses (-EINVAL: missing token or url, bad op, bad object or ref names,
 * updates outside push, wants/haves outside fetch, flags outside push or
 * unknown, cloning outside fetch, a delete with a source,
 * a non-delete without; -E2BIG over the limits; -ENOBUFS). */
int wire_git_encode_request(const struct wire_git_request *req, uint8_t *buf, size_t buflen,
			    size_t *ret_len);

/* Decodes exactly one WIRE_TYPE_GIT frame of len bytes carrying
 * WIRE_GIT_FDS fds. Every check of the encoder is repeated. *ret only
 * written on success. -EBADMSG malformed, -E2BIG over a limit, -EMSGSIZE
 * over max_frame, -ENOMEM. */
int wire_git_decode_request(const uint8_t *buf, size_t len, size_t max_frame,
			    struct wire_git_request *ret);

/* Frees a decoded request and zeroes it (the token is wiped). */
void wire_git_request_done(struct wire_git_request *req);

#endif
