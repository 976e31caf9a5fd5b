/* SPDX-License-Identifier: MIT */
/* What a psql command connects to (pure): host, port, database and user,
 * as separate fields the policy matches (host=, port=, db=, user=), the
 * webhook and exec backends receive ("psql" object) and the audit log
 * records. lib/toolfiles.c reads psql's options (-h, -p, -d, -U and the
 * positional DBNAME [USER]) and hands each value here; a database value
 * that libpq expands (one with '=' in it, or a postgresql:// or
 * postgres:// URI) is parsed as the connection string it is.
 *
 * Nothing is guessed: whatever would make the target depend on something
 * the daemon does not see is refused, with a static reason the agent can
 * act on:
 *   - a field given twice (`-h a "host=b"`: libpq lets the later win, and
 *     which one is later depends on psql's internals);
 *   - host and port lists ("a,b": whichever answers first);
 *   - hostaddr= (connects there whatever host= says), service= (reads the
 *     host's service file), and every keyword naming a host file
 *     (passfile, sslcert, sslkey, sslrootcert, sslcrl, sslcrldir, ...);
 *     any keyword not on a short list of harmless ones;
 *   - values the server or resolver would read differently from the
 *     policy: non-canonical IPv4 ("127.1", "0x7f000001"), database and user
 *     names over 63 bytes (the server cuts them), empty values (libpq's
 *     default instead), control characters, abstract sockets ("@name").
 * Values are canonical: host names lowercase without a trailing dot, IPv6
 * literals in inet_ntop form (an IPv4-mapped one, ::ffff:a.b.c.d, as the
 * IPv4 address it reaches), ports without leading zeros. A socket
 * directory ("/run/postgresql") is kept as written, without "." or ".."
 * segments, doubled or trailing slashes. A field the command does not give
 * is "" until psqltarget_fill_defaults() puts in what libpq uses instead,
 * so that a policy sees the target psql really connects to. */
#ifndef CS_PSQLTARGET_H
#define CS_PSQLTARGET_H

#include <stdbool.h>
#include <stddef.h>

#define PSQLTARGET_MAX_HOST 255      /* bytes of a host name, address or socket directory */
#define PSQLTARGET_MAX_NAME 63       /* database and user names: NAMEDATALEN - 1 */
#define PSQLTARGET_MAX_PORT 5        /* digits */
#define PSQLTARGET_MAX_CONNINFO 4096 /* bytes of one connection string */
/* libpq's defaults for what a command does not give (PostgreSQL 15,
 * connectOptions2): the socket directory it was built with (Debian's
 * libpq: DEFAULT_PGSOCKET_DIR /var/run/postgresql), 5432, and the
 * database named like the user. The daemon builds psql's environment from
 * scratch (no PGHOST, PGPORT, ...: lib/authz.c), so nothing else
 * changes them. */
#define PSQLTARGET_DEFAULT_SOCKET_DIR "/var/run/postgresql"
#define PSQLTARGET_DEFAULT_PORT "5432"

enum psqltarget_field {
	PSQLTARGET_HOST,
	PSQLTARGET_PORT,
	PSQLTARGET_DBNAME,
	PSQLTARGET_USER,
	PSQLTARGET_FIELD_MAX,
};

struct psqltarget {
	char host[PSQLTARGET_MAX_HOST + 1]; /* "" when not given */
	char port[PSQLTARGET_MAX_PORT + 1];
	char dbname[PSQLTARGET_MAX_NAME + 1];
	char user[PSQLTARGET_MAX_NAME + 1];
};

/* The field's value in t ("" when unset). */
const char *psqltarget_get(const struct psqltarget *t, enum psqltarget_field f);

/* Sets field f from value[0..len) (need not be NUL-terminated), validated
 * and canonicalised as above. 0; -EEXIST when f is already set; -EINVAL
 * when the value is refused. *reterr gets a static reason on failure. t is
 * unchanged on failure. */
int psqltarget_set(struct psqltarget *t, enum psqltarget_field f, const char *value, size_t len,
		   const char **reterr);

/* Fills the fields t does not have with libpq's defaults: host
 * PSQLTARGET_DEFAULT_SOCKET_DIR, port PSQLTARGET_DEFAULT_PORT, user
 * default_user (the name of the user psql runs as: libpq takes it from
 * getpwuid(geteuid())), database the user. 0; -EINVAL (with *reterr) when
 * the user is needed and default_user is NULL or not a valid name. */
int psqltarget_fill_defaults(struct psqltarget *t, const char *default_user, const char **reterr);

/* True when libpq expands this database value as a connection string: it
 * contains '=' or starts with "postgresql://" or "postgres://". */
bool psqltarget_is_conninfo(const char *dbname);

/* Parses a connection string, "key=value ..." (values optionally in single
 * quotes, backslash escapes) or a URI, into t. -EINVAL (syntax, a refused
 * keyword or value), -EEXIST (a field set twice, also against what t
 * already holds), -E2BIG (over PSQLTARGET_MAX_CONNINFO), each with
 * *reterr. On failure t may hold some of the string's fields: the caller
 * refuses the command. */
int psqltarget_parse_conninfo(struct psqltarget *t, const char *s, const char **reterr);

/* The connection string s with every password shown as "***"
 * ("password=***", "postgresql://user:***@host", "?password=***"), for the
 * audit log and the backends; psql runs with s as it is. Into buf (cap
 * bytes; PSQLTARGET_REDACT_CAP(strlen(s)) always suffice): 1 when
 * something was redacted, 0 when buf is a copy of s, -ENOBUFS, -EINVAL. */
#define PSQLTARGET_REDACT_CAP(len) (2 * (len) + 8)
int psqltarget_redact_password(const char *s, char *buf, size_t cap);

struct json_object;
/* {"host":..,"port":..,"dbname":..,"user":..} (null for a field not given)
 * as a new json-c object, NULL on ENOMEM. For the webhook and exec
 * backends' request and for audit records. */
struct json_object *psqltarget_to_json(const struct psqltarget *t);

#endif
