/* SPDX-License-Identifier: MIT */
/* The egress allowlist: parsing (baked file, EXTRA_ALLOWED_DOMAINS, named
 * bundles) and matching. Pure code: the caller reads files and hands text in.
 *
 * Grammar, one entry per line (# starts a comment):
 *   example.com            the exact name
 *   .example.com           the name and every subdomain
 *   *.example.com          same as .example.com
 *   198.51.100.7  2001:db8::/32  198.51.100.0/24   an address or CIDR
 *   ENTRY:PORT  ENTRY:LOW-HIGH                      (IPv6 as [2001:db8::1]:PORT)
 *   @bundle                include a named bundle (same grammar, no nesting)
 *   ADDRESS-ENTRY special  a special-purpose range, explicitly (see below)
 * The default port is 443; an explicit port or range replaces it.
 * Names are lowercased, a trailing dot is dropped.
 *
 * Decisions (see README.md "Egress allowlist"):
 *  - Names are strict LDH: labels of letters, digits and inner hyphens,
 *    1..63 bytes, whole name at most 253; the last label must not be all
 *    digits (so a mistyped IPv4 address is never taken for a name).
 *  - '*' only as a leading "*."; a suffix entry needs at least two labels
 *    ('.com', '*.com', '.' and '*' are refused: they would open a whole TLD).
 *  - A CIDR with bits set beyond its prefix is refused rather than masked:
 *    "198.51.100.7/24" is more likely a mistake than a wish for the /24.
 *  - Prefixes wider than /8 (IPv4) or /32 (IPv6) are refused, and so is
 *    any entry inside 0.0.0.0/8 or equal to '::' (never destinations).
 *  - An address entry that touches a special-purpose range (loopback,
 *    link-local and cloud metadata, RFC 1918, CGNAT, ULA, multicast,
 *    reserved: netaddr_classify_prefix() not PUBLIC) needs the word
 *    'special' after it on its line, and only the allowlist file itself
 *    may say it: never EXTRA_ALLOWED_DOMAINS, never a bundle. So does an
 *    entry holding the container's gateway (checked at load time, see
 *    firewall/allowlist_load.h). The word on a name or a bundle is refused.
 *  - A suffix entry whose suffix is a public suffix (libpsl's built-in
 *    Public Suffix List: ".co.uk", ".github.io", ".s3.amazonaws.com") is
 *    refused: anyone can register names below it.
 *  - Ports are 1..65535; a range LOW-HIGH needs LOW <= HIGH.
 *  - IPv6 zone ids ("%eth0") are refused; an IPv6 address with a port must
 *    be bracketed ("[2001:db8::1]:8443"), a bare one takes no port.
 *  - Lines longer than ALLOWLIST_MAX_LINE bytes (comments included) and NUL
 *    or control bytes are refused; '\r' before '\n' is tolerated. */
#ifndef CS_ALLOWLIST_H
#define CS_ALLOWLIST_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netaddr.h"

#define ALLOWLIST_MAX_ENTRIES 1024
#define ALLOWLIST_MAX_NAME 253
#define ALLOWLIST_MAX_LABEL 63
#define ALLOWLIST_MAX_LINE 512
#define ALLOWLIST_MAX_BUNDLE_NAME 32
#define ALLOWLIST_DEFAULT_PORT 443

enum allowlist_kind {
	ALLOWLIST_NAME_EXACT,
	ALLOWLIST_NAME_SUFFIX, /* the name itself and every subdomain */
	ALLOWLIST_ADDR,        /* address or CIDR */
	ALLOWLIST_KIND_MAX,
};

struct allowlist_entry {
	enum allowlist_kind kind;
	char name[ALLOWLIST_MAX_NAME + 1]; /* NAME_*: lowercase, no trailing dot */
	int family;                        /* ADDR: AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;            /* ADDR: network address (host bits zero) */
	unsigned prefix_len; /* ADDR: 8..32 / 32..128 */
	enum netaddr_class addr_class; /* ADDR: netaddr_classify_prefix(); PUBLIC for names */
	bool special;                  /* ADDR: opened with the 'special' marker */
	uint16_t port_lo, port_hi;
	const char *source; /* file or "EXTRA_ALLOWED_DOMAINS" or "@bundle" (static or owned by the list) */
	unsigned line;
};

/* Gateways of the container's routes kept with the list (filled by the
 * loader from the routing table; never by the parser). */
#define ALLOWLIST_MAX_GATEWAYS 32

struct allowlist {
	struct allowlist_entry *entries;
	size_t n;
	size_t cap;
	struct netaddr_gateway gateways[ALLOWLIST_MAX_GATEWAYS];
	size_t n_gateways;
	char **sources; /* owned copies of source names */
	size_t n_sources;
};

struct parse_error {
	const char *file; /* borrowed from the caller's source name */
	unsigned line;
	unsigned column;
	const char *message; /* static string */
	/* When the error lies inside an included bundle, file/line/column above
	 * point at the "@name" that included it, and these say where inside the
	 * bundle it is; bundle[0] == 0 otherwise. */
	char bundle[ALLOWLIST_MAX_BUNDLE_NAME + 1];
	unsigned bundle_line;
	unsigned bundle_column;
};

/* Longest text allowlist_format_error()/allowlist_entry_format() produce. */
#define ALLOWLIST_MAX_ERROR_TEXT 512
#define ALLOWLIST_MAX_ENTRY_TEXT (ALLOWLIST_MAX_NAME + 64)

/* Looks up a bundle by name ("github" for "@github"): on success sets
 * *ret_text and *ret_len to its text (borrowed, valid during the parse) and
 * returns 0; -ENOENT when there is no such bundle. */
typedef int (*allowlist_bundle_fn)(void *userdata, const char *name, const char **ret_text,
				   size_t *ret_len);

/* Parses text (not NUL-terminated necessarily) and appends its entries to
 * *al. Exact duplicates are merged silently. On error returns -EINVAL
 * (-E2BIG past ALLOWLIST_MAX_ENTRIES, -ENOMEM) with *reterr naming
 * source_name, line and reason; *al keeps what it had before the call. */
int allowlist_parse(struct allowlist *al, const char *source_name, const char *text, size_t len,
		    allowlist_bundle_fn bundle, void *userdata, struct parse_error *reterr);

/* EXTRA_ALLOWED_DOMAINS: entries separated by spaces, commas, tabs
 * and/or newlines, same
 * grammar (including @bundle). Errors name "EXTRA_ALLOWED_DOMAINS" and the
 * entry's position as the line. */
int allowlist_parse_extra(struct allowlist *al, const char *spec, allowlist_bundle_fn bundle,
			  void *userdata, struct parse_error *reterr);

/* First entry admitting this DNS name (any case, optional trailing dot), or
 * NULL. Exact and suffix entries only. */
const struct allowlist_entry *allowlist_match_name(const struct allowlist *al, const char *name);

/* Like allowlist_match_name(), but returns the first matching entry after
 * `after` (NULL: from the start). A name may be admitted by several entries
 * with different port ranges; iterate to collect them all. */
const struct allowlist_entry *allowlist_match_name_next(const struct allowlist *al,
							const char *name,
							const struct allowlist_entry *after);

/* True when an ADDR entry contains this address (used to exempt addresses
 * the user named explicitly from the DNS-rebinding filter). */
bool allowlist_contains_addr(const struct allowlist *al, int family, const void *addr);

/* True when addr is one of al->gateways (the container's own gateway: a
 * special-purpose address, stripped from DNS answers like a private one
 * unless an entry with the 'special' marker holds it). */
bool allowlist_addr_is_gateway(const struct allowlist *al, int family, const void *addr);

/* True when name (lowercase, no dots at either end) is a public suffix in
 * libpsl's built-in list, or when that list is unavailable (fail closed). */
bool allowlist_suffix_is_public(const char *name);

/* Frees everything *al owns and leaves it empty (reusable). NULL is fine. */
void allowlist_free(struct allowlist *al);

/* "FILE:LINE:COLUMN: MESSAGE", or for an error inside a bundle
 * "FILE:LINE:COLUMN: in @NAME line L column C: MESSAGE", or "FILE: MESSAGE"
 * when line is 0 (an I/O error, see firewall/allowlist_load.h). Always
 * NUL-terminates (truncating) when size > 0; returns buf. */
char *allowlist_format_error(const struct parse_error *e, char *buf, size_t size);

/* The entry in allowlist syntax, normalised: "example.com", ".example.com",
 * "198.51.100.0/24", "2001:db8::/32", each with ":PORT" or ":LO-HI" unless
 * the range is the default port (IPv6 then bracketed: "[2001:db8::1]:8443").
 * Returns buf (NUL-terminated, truncated if size < ALLOWLIST_MAX_ENTRY_TEXT). */
char *allowlist_entry_format(const struct allowlist_entry *e, char *buf, size_t size);

#endif
