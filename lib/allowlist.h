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
 * The default port is 443. Names are lowercased, a trailing dot is dropped. */
#ifndef CS_ALLOWLIST_H
#define CS_ALLOWLIST_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	unsigned prefix_len; /* ADDR: 0..32 / 0..128 */
	uint16_t port_lo, port_hi;
	const char *source; /* file or "EXTRA_ALLOWED_DOMAINS" or "@bundle" (static or owned by the list) */
	unsigned line;
};

struct allowlist {
	struct allowlist_entry *entries;
	size_t n;
	size_t cap;
	char **sources; /* owned copies of source names */
	size_t n_sources;
};

struct parse_error {
	const char *file; /* borrowed from the caller's source name */
	unsigned line;
	unsigned column;
	const char *message; /* static string */
};

/* Looks up a bundle by name ("github" for "@github"): on success sets
 * *ret_text/*ret_len to its text (borrowed, valid during the parse) and
 * returns 0; -ENOENT when there is no such bundle. */
typedef int (*allowlist_bundle_fn)(void *userdata, const char *name, const char **ret_text,
				   size_t *ret_len);

/* Parses text (not NUL-terminated necessarily) and appends its entries to
 * *al. Exact duplicates are merged silently. On error returns -EINVAL
 * (-E2BIG past ALLOWLIST_MAX_ENTRIES, -ENOMEM) with *reterr naming
 * source_name, line and reason; *al keeps what it had before the call. */
int allowlist_parse(struct allowlist *al, const char *source_name, const char *text, size_t len,
		    allowlist_bundle_fn bundle, void *userdata, struct parse_error *reterr);

/* EXTRA_ALLOWED_DOMAINS: entries separated by spaces and/or commas, same
 * grammar (including @bundle). Errors name "EXTRA_ALLOWED_DOMAINS" and the
 * entry's position as the line. */
int allowlist_parse_extra(struct allowlist *al, const char *spec, allowlist_bundle_fn bundle,
			  void *userdata, struct parse_error *reterr);

/* First entry admitting this DNS name (any case, optional trailing dot), or
 * NULL. Exact and suffix entries only. */
const struct allowlist_entry *allowlist_match_name(const struct allowlist *al, const char *name);

/* True when an ADDR entry contains this address (used to exempt addresses
 * the user named explicitly from the DNS-rebinding filter). */
bool allowlist_contains_addr(const struct allowlist *al, int family, const void *addr);

void allowlist_free(struct allowlist *al);

#endif
