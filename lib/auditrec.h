/* SPDX-License-Identifier: MIT */
/* sandbox-execd audit records (pure): one JSON object per line, each
 * carrying `prev`, the hex SHA-256 of the previous line's bytes (without its
 * newline), and `seq`, one more than the previous line's. The first line's
 * prev is AUDITREC_GENESIS. Any edited, deleted, inserted or reordered line
 * breaks the chain at that point, which the verifier reports by line number.
 * Records never contain the request token or backend-provided environment:
 * the structs below have no field for them. */
#ifndef CS_AUDITREC_H
#define CS_AUDITREC_H

struct authz_git;
struct psqltarget;

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define AUDITREC_HASH_HEX 65 /* 64 hex digits + NUL */
#define AUDITREC_GENESIS "0000000000000000000000000000000000000000000000000000000000000000"
#define AUDITREC_MAX_LINE 8388608u /* 8 MiB: a 256 KiB request, escaped */
#define AUDITREC_MAX_ERROR 160
/* One record's cap: a decision record over it is written with its values
 * cut (each ending in AUDITREC_ELLIPSIS) and a "truncated" member giving the
 * original size. Keeps a 256 KiB request from costing 256 KiB (or six times
 * that, escaped) of log and fsync. */
#define AUDITREC_MAX_RECORD 16384u
#define AUDITREC_ELLIPSIS "\xe2\x80\xa6" /* U+2026, marks a cut value */

struct auditrec_chain {
	char prev[AUDITREC_HASH_HEX]; /* hash of the last line written */
	uint64_t seq;                 /* seq of the last line written, 0 = none */
};

/* A decision: made for every request that reached the daemon, before any
 * execution (verdict "allow" or "deny"; error names the wire error kind for
 * refusals: "unauthenticated", "policy_denied", ...). Any string may be NULL. */
struct auditrec_decision {
	const char *id;
	struct timespec ts;
	uid_t peer_uid;
	gid_t peer_gid;
	pid_t peer_pid;
	const char *tool;
	const char *const *argv; /* argc entries; argv[0] is the tool name */
	size_t argc;
	const char *container_cwd;
	const char *host_cwd;
	const char *destination;
	const char *reason;
	const char *repo;
	const char *branch;
	bool allow;
	const char *error;
	const char *decision_reason;
	const char *rule;
	const char *backend;
	const struct authz_git *git; /* git relay requests only, else NULL */
	const struct psqltarget *psql; /* psql requests only, else NULL */
};

/* The end of an execution. outcome: "exited" (code = status), "signaled"
 * (code = signal), "timeout", "disconnected", "shutdown" (the command was
 * killed), "spawn_failed". */
struct auditrec_end {
	const char *id;
	struct timespec ts;
	const char *outcome;
	int code;
	uint64_t duration_ms;
};

/* Refusals before authentication (busy, malformed, too_large,
 * unauthenticated, and connections that sent nothing) are counted, not
 * written one by one: one "refused" record per peer and error per window
 * (execd/audit.c), so a flood of 10,000 costs a handful of fsyncs while every
 * refusal is still accounted for in a count. */
struct auditrec_refused {
	struct timespec first, last; /* first and last refusal counted */
	uid_t peer_uid;
	gid_t peer_gid;
	pid_t peer_pid;     /* of the first refusal counted */
	uint64_t peer_key;  /* pid namespace inode, or uid + 2^32 */
	const char *error;  /* "busy", "malformed", ..., "empty" */
	uint64_t count;
	const char *first_id, *last_id;
};

/* Written by the daemon after it truncated a torn (crash-interrupted) last
 * line away, so the truncation itself is on the record. */
struct auditrec_recovery {
	struct timespec ts;
	uint64_t torn_bytes;
};

void auditrec_chain_init(struct auditrec_chain *c);

/* Continues a chain from the last complete line of an existing log (without
 * its newline): takes its seq and hashes it. -EBADMSG when it is not a
 * record. */
int auditrec_chain_resume(struct auditrec_chain *c, const char *line, size_t len);

/* Encodes one record for the next position of chain c into a malloc'd line
 * ending in '\n' (*ret_len includes it). c is not modified: call
 * auditrec_chain_advance() once the line is durably written. -ENOMEM,
 * -EINVAL for a string that is not valid UTF-8. */
int auditrec_format_decision(const struct auditrec_chain *c, const struct auditrec_decision *d,
			     char **ret_line, size_t *ret_len);
int auditrec_format_end(const struct auditrec_chain *c, const struct auditrec_end *e,
			char **ret_line, size_t *ret_len);
int auditrec_format_recovery(const struct auditrec_chain *c, const struct auditrec_recovery *rec,
			     char **ret_line, size_t *ret_len);
int auditrec_format_refused(const struct auditrec_chain *c, const struct auditrec_refused *rec,
			    char **ret_line, size_t *ret_len);

/* Length (1-3) of the UTF-8 sequence at s[0..n) when it is a code point
 * the log writes escaped although JSON allows it raw (DEL, C1, U+2028/9,
 * bidirectional controls), with *ret_cp set; 0 otherwise. */
size_t auditrec_unsafe_codepoint(const char *s, size_t n, unsigned *ret_cp);

/* Moves the chain past a line (with or without its trailing newline). */
void auditrec_chain_advance(struct auditrec_chain *c, const char *line, size_t len);

struct auditrec_verify_result {
	unsigned long n_lines;    /* complete lines that verified */
	unsigned long bad_line;   /* 1-based number of the first bad line, 0 if none */
	uint64_t torn_bytes;      /* bytes after the last newline (crash artifact) */
	char error[AUDITREC_MAX_ERROR];
};

/* Reads a whole log from fd (read() until EOF) and verifies the chain.
 * 0 when every complete line verifies (a trailing line without newline is
 * reported in torn_bytes, not an error: see docs/architecture.md), -EBADMSG
 * with bad_line and error set otherwise, -errno on read failure. */
int auditrec_verify_fd(int fd, struct auditrec_verify_result *ret);

/* Renders one record as a single human-readable line (malloc'd, no newline)
 * for `code-sandbox audit`; every control character and C1 code point is
 * shown escaped, so a hostile argv cannot drive the reader's terminal.
 * -EBADMSG when the line is not a record, -ENOMEM. */
int auditrec_format_human(const char *line, size_t len, char **ret);

#endif
