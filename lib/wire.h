/* SPDX-License-Identifier: MIT */
/* The sandbox-execd wire protocol: pure encoding and strict decoding of the
 * frames exchanged between the wrapper (sandbox-exec, in the container) and
 * the daemon (on the host). The socket code in execd/ and wrappers/ moves the
 * bytes and the file descriptors; nothing here touches a socket.
 *
 * Frame = 8-byte header + payload:
 *   byte 0     version (WIRE_VERSION)
 *   byte 1     type (enum wire_type)
 *   byte 2     number of fds carried as SCM_RIGHTS with the frame
 *   byte 3     reserved, must be 0
 *   bytes 4-7  payload length, big-endian; header + payload <= WIRE_MAX_FRAME
 * Payload = a sequence of fields: 1-byte tag, 4-byte big-endian length,
 * value. Bit 0x80 of a tag is the "must understand" rule: an unknown tag
 * without it makes the frame malformed; an unknown tag with it set is
 * skipped. Fields that change what runs are sent without the bit, so an old
 * decoder refuses rather than ignores them. Ranges: 0x01-0x0F requests,
 * 0x10-0x1F replies, 0x20-0x2F git relay, 0x30-0x3F later request fields.
 * Nothing follows a request frame on the connection (the daemon answers
 * trailing bytes with `malformed`). Strings are valid UTF-8 without NUL;
 * integers are exactly 4 bytes big-endian.
 * docs/architecture.md ("sandbox-execd: wire protocol") is the reference. */
#ifndef CS_WIRE_H
#define CS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_VERSION 1
#define WIRE_HEADER_SIZE 8
#define WIRE_MAX_FRAME 262144u /* header + payload, bytes (256 KiB) */
#define WIRE_MAX_ARGS 1024            /* arguments after the tool name */
#define WIRE_MAX_ARG 65536            /* one argument, bytes */
#define WIRE_MAX_TOKEN 128            /* bytes */
#define WIRE_MAX_TOOL 64              /* bytes */
#define WIRE_MAX_PATH 4096            /* container cwd, repo */
#define WIRE_MAX_REASON 2048          /* SANDBOX_REASON */
#define WIRE_MAX_BRANCH 512
#define WIRE_MAX_MESSAGE 1024         /* reply message, bytes including NUL */
#define WIRE_REQUEST_FDS 3            /* stdin, stdout, stderr */
#define WIRE_MAX_FDS WIRE_REQUEST_FDS

enum wire_type {
	WIRE_TYPE_REQUEST = 1,
	WIRE_TYPE_REPLY = 2,
	WIRE_TYPE_GIT = 3, /* git relay request: lib/wire_git.h */
	WIRE_TYPE_MAX,
};

/* Field tags. Request: */
enum {
	WIRE_TAG_TOKEN = 0x01,
	WIRE_TAG_TOOL = 0x02,
	WIRE_TAG_ARG = 0x03, /* repeated, in order */
	WIRE_TAG_CWD = 0x04,
	WIRE_TAG_REASON = 0x05,
	WIRE_TAG_REPO = 0x06,
	WIRE_TAG_BRANCH = 0x07,
	/* Reply: */
	WIRE_TAG_STATUS_KIND = 0x10,
	WIRE_TAG_STATUS_CODE = 0x11,
	WIRE_TAG_ERROR = 0x12,
	WIRE_TAG_MESSAGE = 0x13,
	WIRE_TAG_OPTIONAL = 0x80, /* bit: clear = must understand, set = skip if unknown */
};

enum wire_error {
	WIRE_ERROR_MALFORMED,
	WIRE_ERROR_TOO_LARGE,
	WIRE_ERROR_UNAUTHENTICATED,
	WIRE_ERROR_UNKNOWN_TOOL,
	WIRE_ERROR_POLICY_DENIED,
	WIRE_ERROR_PATH_OUTSIDE_WORKSPACE,
	WIRE_ERROR_BUSY,
	WIRE_ERROR_TIMEOUT,
	WIRE_ERROR_INTERNAL, /* the daemon failed (audit write, fork): not the caller's fault */
	WIRE_ERROR_MAX,
};

enum wire_reply_kind {
	WIRE_REPLY_EXITED,   /* code = exit status 0..255 */
	WIRE_REPLY_SIGNALED, /* code = signal number 1..127 */
	WIRE_REPLY_ERROR,    /* error + message */
	WIRE_REPLY_KIND_MAX,
};

struct wire_header {
	uint8_t version;
	enum wire_type type;
	uint8_t n_fds;
	uint32_t payload_len;
};

/* A decoded request owns its strings (free with wire_request_done()). For
 * encoding the caller fills the pointers itself and owns them. Optional
 * strings are NULL when absent. */
struct wire_request {
	char *token;
	char *tool;
	char **args; /* arguments after the tool name, n_args entries */
	size_t n_args;
	char *cwd;
	char *reason;
	char *repo;
	char *branch;
};

struct wire_reply {
	enum wire_reply_kind kind;
	int code;
	enum wire_error error;
	char message[WIRE_MAX_MESSAGE];
};

/* "malformed", "too_large", ...; "?" for out-of-range values. */
const char *wire_error_to_string(enum wire_error e);

/* True when s[0..len) is valid UTF-8 (no overlong forms, no surrogates,
 * nothing above U+10FFFF) and contains no NUL. */
bool wire_utf8_valid(const char *s, size_t len);

/* Parses and checks the 8-byte header. max_frame: the caller's cap (at most
 * WIRE_MAX_FRAME). -EBADMSG for a bad version, type, fd count or reserved
 * byte, -EMSGSIZE when header + payload exceed max_frame, -EINVAL when len <
 * WIRE_HEADER_SIZE. */
int wire_parse_header(const uint8_t *buf, size_t len, size_t max_frame, struct wire_header *ret);

/* Encodes into buf (buflen bytes, at most WIRE_MAX_FRAME used). Validates
 * what a decoder would refuse: -EINVAL for missing required fields, invalid
 * UTF-8 or NUL-free violations, -E2BIG for too many arguments or too long
 * strings, -ENOBUFS when it does not fit. */
int wire_encode_request(const struct wire_request *req, uint8_t *buf, size_t buflen,
			size_t *ret_len);
int wire_encode_reply(const struct wire_reply *reply, uint8_t *buf, size_t buflen,
		      size_t *ret_len);

/* Decodes one complete frame (header included, exactly len bytes: trailing
 * bytes are an error). Request: fds in the header must be WIRE_REQUEST_FDS;
 * required fields are token, tool and cwd. *ret is only written on success.
 * Errors: -EBADMSG malformed (truncated, trailing bytes, duplicate or unknown
 * required field, NUL, invalid UTF-8, wrong type), -E2BIG too many arguments
 * or an over-long string, -EMSGSIZE frame over max_frame, -ENOMEM. */
int wire_decode_request(const uint8_t *buf, size_t len, size_t max_frame,
			struct wire_request *ret);
int wire_decode_reply(const uint8_t *buf, size_t len, struct wire_reply *ret);

/* Frees a decoded request's strings and zeroes it (the token is wiped). */
void wire_request_done(struct wire_request *req);

#endif
