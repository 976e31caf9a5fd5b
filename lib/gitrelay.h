/* SPDX-License-Identifier: MIT */
/* Pure parts of the git relay (issue 8): remote URL validation and
 * normalisation, the remote-helper protocol lines the container-side helper
 * (wrappers/git-remote-sandbox.c) reads from git, and the output of the host
 * git commands the daemon (execd/gitrelay.c) reads back: ls-remote and
 * for-each-ref ref lists, push --porcelain status lines. No I/O here. */
#ifndef CS_GITRELAY_H
#define CS_GITRELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire_git.h"

#define GITRELAY_MAX_HOST 253
#define GITRELAY_MAX_USER 64
#define GITRELAY_MAX_PATH 1024
#define GITRELAY_MAX_REFS 65536  /* refs in one listing */
#define GITRELAY_MAX_REASON 256  /* one push status reason, with NUL */

enum gitrelay_scheme {
	GITRELAY_HTTPS, /* https://host[:port]/path */
	GITRELAY_SSH,   /* ssh://[user@]host[:port]/path (also git+ssh://, ssh+git://) */
	GITRELAY_SCP,   /* [user@]host:path (ssh, path relative to the login) */
	GITRELAY_SCHEME_MAX,
};

struct gitrelay_url {
	enum gitrelay_scheme scheme;
	char user[GITRELAY_MAX_USER + 1]; /* "" when none; never for https */
	char host[GITRELAY_MAX_HOST + 1]; /* lowercased, without a trailing dot */
	unsigned port;                    /* 0: the scheme's default */
	char path[GITRELAY_MAX_PATH + 1];
	/* What the daemon contacts, rebuilt from the parts above (never the
	 * request's bytes): "https://host/path", "ssh://user@host:2222/path",
	 * "user@host:path". */
	char canonical[WIRE_GIT_MAX_URL];
};

/* Validates a remote URL as the relay will contact it and fills *ret.
 * Accepted: https://, ssh:// (git+ssh://, ssh+git://) and scp-style
 * [user@]host:path, with a host name or IPv4 address (no IPv6 literals), a
 * decimal port 1..65535 (the default one dropped), path segments of
 * [A-Za-z0-9._~+-] that are not empty, "." or "..", and start with no '-'.
 * Refused, with the errno telling why:
 *   -EPROTONOSUPPORT  git://, http://, file://, ftp://, any other scheme,
 *                     and "helper::address" transports (ext::, fd::)
 *   -EACCES           credentials in the URL (https user or password, an ssh
 *                     password), and user names starting with '-'
 *   -EINVAL           local paths, a leading '-' anywhere git or ssh might
 *                     read it as an option, control or shell characters,
 *                     '%', '?', '#', '\\', malformed host, port or path
 *   -ENAMETOOLONG     over the limits above */
int gitrelay_url_parse(const char *url, struct gitrelay_url *ret);

/* ---- remote-helper protocol (gitremote-helpers(7)), container side ---- */

enum gitrelay_cmd_kind {
	GITRELAY_CMD_END,          /* empty line: end of a batch, or of input */
	GITRELAY_CMD_CAPABILITIES,
	GITRELAY_CMD_LIST,
	GITRELAY_CMD_LIST_FOR_PUSH,
	GITRELAY_CMD_OPTION,       /* name, value */
	GITRELAY_CMD_FETCH,        /* oid, name */
	GITRELAY_CMD_PUSH,         /* force, src ("" = delete), dst */
	GITRELAY_CMD_KIND_MAX,
};

struct gitrelay_cmd {
	enum gitrelay_cmd_kind kind;
	const char *name;  /* option name; fetch: the ref name (points into line) */
	const char *value; /* option value (points into line) */
	char oid[WIRE_GIT_OID_MAX + 1];
	bool force;
	char src[WIRE_GIT_MAX_REF + 1];
	char dst[WIRE_GIT_MAX_REF + 1];
};

/* Parses one line from git (without its newline; modified in place: NULs
 * split it). -EINVAL for a line the helper does not understand or whose
 * object or ref names are invalid (the helper then stops: git reports the
 * helper's failure), -EOPNOTSUPP for a command this helper does not
 * implement (connect, stateless-connect, import, export). */
int gitrelay_parse_cmd(char *line, struct gitrelay_cmd *ret);

/* ---- host git output, daemon side ---- */

struct gitrelay_ref {
	char oid[WIRE_GIT_OID_MAX + 1];
	char *name; /* owned */
};

struct gitrelay_reflist {
	struct gitrelay_ref *refs;
	size_t n;
	char *head_symref; /* "refs/heads/main" when the remote's HEAD points there */
	char head_oid[WIRE_GIT_OID_MAX + 1];
};

/* Parses `git ls-remote --symref URL` (or `for-each-ref` with the format
 * "%(objectname)%09%(refname)") output of len bytes: "OID\tREF" lines and
 * "ref: TARGET\tHEAD". Only refs/heads/ and refs/tags/ refs that pass
 * wire_git_refname_valid() are kept (peeled "^{}" entries, refs/pull/...,
 * anything odd the remote sends is dropped), plus HEAD. -EBADMSG for
 * output that is not in this form, -E2BIG past GITRELAY_MAX_REFS, -ENOMEM.
 * Free with gitrelay_reflist_done(). */
int gitrelay_parse_reflist(const char *out, size_t len, struct gitrelay_reflist *ret);
void gitrelay_reflist_done(struct gitrelay_reflist *l);
/* The ref named name, or NULL. */
const struct gitrelay_ref *gitrelay_reflist_find(const struct gitrelay_reflist *l,
						 const char *name);

/* Writes the listing in remote-helper syntax ("OID REF\n" lines, "@TARGET
 * HEAD\n" for a symbolic HEAD, then an empty line) into buf. -ENOBUFS. */
int gitrelay_format_list(const struct gitrelay_reflist *l, char *buf, size_t cap, size_t *ret_len);

/* One status from `git push --porcelain` for ref dst: *ret_ok and a reason
 * ("non-fast-forward", "pre-receive hook declined"; printable ASCII only,
 * cut to GITRELAY_MAX_REASON). Returns 1 when found, 0 when the output has
 * no line for dst. */
int gitrelay_push_status(const char *out, size_t len, const char *dst, bool *ret_ok,
			 char *ret_reason, size_t reason_len);

/* ---- the objects of a fetch, daemon -> helper ----
 * The daemon answers a fetch with one of two payloads in the helper's file:
 * a git bundle ("# v2 git bundle\n" ...), or, when the container has none
 * of the cache's objects and the cache holds exactly the one pack a clone
 * of the remote left in it, that pack and its index as they are:
 *   GITRELAY_PACK_MAGIC "<pack bytes> <index bytes>\n" PACK INDEX
 * so that neither side builds a bundle or indexes the objects again. */
#define GITRELAY_PACK_MAGIC "# code-sandbox relay pack v1\n"
#define GITRELAY_PACK_HDR_MAX 80                            /* the whole header line pair */
#define GITRELAY_MAX_PACK ((uint64_t)8 * 1024 * 1024 * 1024) /* bytes of a pack or an index */
#define GITRELAY_PACK_HEAD 12                               /* "PACK", version, count */
#define GITRELAY_IDX_HEAD 8                                 /* "\377tOc", version 2 */

/* Writes the header for a pack of pack_len and an index of idx_len bytes.
 * Returns its length, -EINVAL (sizes out of bounds), -ENOBUFS. */
int gitrelay_pack_header(char *buf, size_t cap, uint64_t pack_len, uint64_t idx_len);

/* Reads a header from the first len bytes of the payload: 1 with the sizes
 * and the header's length, 0 when the payload is not a relay pack (a
 * bundle), -EBADMSG for a malformed header or sizes out of bounds. */
int gitrelay_parse_pack_header(const char *buf, size_t len, uint64_t *pack_len,
			       uint64_t *idx_len, size_t *hdr_len);

/* Checks that a pack and an index belong together, for object names of
 * hash_len bytes (20 or 32): pack_head = the pack's first
 * GITRELAY_PACK_HEAD bytes ("PACK", version 2 or 3), pack_trailer = its
 * last hash_len bytes (the checksum), idx_head = the index's first
 * GITRELAY_IDX_HEAD bytes (version 2), idx_trailer = its last 2 * hash_len
 * bytes (the pack's checksum, then its own), with both sizes large enough
 * for what they claim. Writes the pack's name (the checksum in hex, NUL
 * terminated, 2 * hash_len + 1 bytes) to name. -EBADMSG otherwise. */
int gitrelay_pack_name(const uint8_t *pack_head, const uint8_t *pack_trailer, uint64_t pack_len,
		       const uint8_t *idx_head, const uint8_t *idx_trailer, uint64_t idx_len,
		       size_t hash_len, char *name);

#endif
