/* SPDX-License-Identifier: MIT */
/* Egress allowlist parsing and matching (grammar and decisions in
 * allowlist.h). Pure code: text in, entries out; no I/O. Errors carry a
 * static message and never allocate. */
#include "allowlist.h"

#include <arpa/inet.h>
#include <assert.h>
#include <libpsl.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "macros.h"
#include "netaddr.h"

#define EXTRA_SOURCE "EXTRA_ALLOWED_DOMAINS"
/* The per-entry word that opens a special-purpose range (allowlist.h). */
#define SPECIAL_MARKER "special"
/* Widest prefixes an entry may have: a /8 is 16.7 million addresses. */
#define MIN_PREFIX_V4 8
#define MIN_PREFIX_V6 32
#define MAX_PORT 65535u
#define MAX_PORT_DIGITS 5
#define MAX_PREFIX_DIGITS 3
/* Longest textual IPv6 address we accept, brackets and prefix excluded. */
#define MAX_ADDR_TEXT 45

/* Where a parse failed, before it is tied to a source name. */
struct perr {
	unsigned line, column;
	const char *message;
	char bundle[ALLOWLIST_MAX_BUNDLE_NAME + 1];
	unsigned bundle_line, bundle_column;
};

struct pctx {
	struct allowlist *al;
	const char *source; /* static or interned in al->sources */
	allowlist_bundle_fn bundle;
	void *userdata;
	bool nested; /* parsing a bundle: no further @includes */
	bool extra;  /* EXTRA_ALLOWED_DOMAINS, not a file */
};

static int fail(struct perr *e, unsigned line, unsigned column, const char *message, int r)
{
	e->line = line;
	e->column = column;
	e->message = message;
	return r;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* ASCII only, independent of the locale (PID 1 never calls setlocale). */
static char to_lower(char c)
{
	static const char lower[] = "abcdefghijklmnopqrstuvwxyz";

	if (c >= 'A' && c <= 'Z')
		return lower[c - 'A'];
	return c;
}

/* Parses 1..max_digits decimal digits, the whole of s[0..n). Returns the
 * value, or -1 when empty, too long or not all digits. */
static long parse_decimal(const char *s, size_t n, size_t max_digits)
{
	uint64_t v;

	/* The digit cap (not a value cap) is this parser's contract: callers
	 * range-check the value to give their own message. */
	if (n > max_digits || decimal_parse(s, n, (uint64_t)LONG_MAX, &v) < 0)
		return -1;
	return (long)v;
}

/* ":PORT" or ":LOW-HIGH" without the colon: s[0..n), col = column of s[0]. */
static int parse_ports(const char *s, size_t n, unsigned line, unsigned col,
		       struct allowlist_entry *e, struct perr *err)
{
	const char *dash = memchr(s, '-', n);
	size_t n_lo = dash ? (size_t)(dash - s) : n;
	long lo, hi;

	if (n == 0)
		return fail(err, line, col, "missing port after ':'", -EINVAL);
	lo = parse_decimal(s, n_lo, MAX_PORT_DIGITS);
	if (lo < 0)
		return fail(err, line, col, "invalid port (expected 1-65535 or LOW-HIGH)", -EINVAL);
	if (lo == 0 || lo > (long)MAX_PORT)
		return fail(err, line, col, "port out of range (1-65535)", -EINVAL);
	hi = lo;
	if (dash) {
		unsigned col_hi = col + (unsigned)n_lo + 1;

		hi = parse_decimal(dash + 1, n - n_lo - 1, MAX_PORT_DIGITS);
		if (hi < 0)
			return fail(err, line, col_hi, "invalid port (expected 1-65535 or LOW-HIGH)",
				    -EINVAL);
		if (hi == 0 || hi > (long)MAX_PORT)
			return fail(err, line, col_hi, "port out of range (1-65535)", -EINVAL);
		if (hi < lo)
			return fail(err, line, col, "port range is reversed (LOW must be <= HIGH)",
				    -EINVAL);
	}
	e->port_lo = (uint16_t)lo;
	e->port_hi = (uint16_t)hi;
	return 0;
}

/* True when the bits of addr (len bytes) beyond prefix are all zero. */
static bool host_bits_zero(const uint8_t *addr, size_t len, unsigned prefix)
{
	for (size_t i = 0; i < len; i++) {
		unsigned bit0 = (unsigned)i * 8;
		uint8_t mask;

		if (bit0 + 8 <= prefix)
			continue;
		mask = bit0 >= prefix ? 0xff : (uint8_t)(0xffu >> (prefix - bit0));
		if (addr[i] & mask)
			return false;
	}
	return true;
}

/* An address with optional "/PREFIX": s[0..n), family fixed by the caller. */
static int parse_addr(const char *s, size_t n, int family, unsigned line, unsigned col,
		      struct allowlist_entry *e, struct perr *err)
{
	const char *slash = memchr(s, '/', n);
	size_t n_addr = slash ? (size_t)(slash - s) : n;
	unsigned max_prefix = family == AF_INET ? 32 : 128;
	char buf[MAX_ADDR_TEXT + 1];
	const char *bad = family == AF_INET ? "invalid IPv4 address" : "invalid IPv6 address";

	if (family == AF_INET6 && memchr(s, '%', n_addr))
		return fail(err, line, col, "IPv6 zone ids ('%') are not supported", -EINVAL);
	if (n_addr == 0 || n_addr > MAX_ADDR_TEXT)
		return fail(err, line, col, bad, -EINVAL);
	memcpy(buf, s, n_addr);
	buf[n_addr] = 0;
	if (inet_pton(family, buf, &e->addr) != 1)
		return fail(err, line, col, bad, -EINVAL);
	e->kind = ALLOWLIST_ADDR;
	e->family = family;
	e->prefix_len = max_prefix;
	if (slash) {
		unsigned pcol = col + (unsigned)n_addr + 1;
		long p = parse_decimal(slash + 1, n - n_addr - 1, MAX_PREFIX_DIGITS);

		if (n - n_addr - 1 == 0)
			return fail(err, line, pcol, "missing prefix length after '/'", -EINVAL);
		if (p < 0 || p > (long)max_prefix)
			return fail(err, line, pcol,
				    family == AF_INET ? "prefix length out of range (0-32)"
						      : "prefix length out of range (0-128)",
				    -EINVAL);
		e->prefix_len = (unsigned)p;
		/* Refuse instead of masking: "198.51.100.7/24" is more often a
		 * typo for an address than a wish to open the whole /24. */
		if (!host_bits_zero((const uint8_t *)&e->addr,
				    family == AF_INET ? sizeof(struct in_addr)
						      : sizeof(struct in6_addr),
				    e->prefix_len))
			return fail(err, line, col, "address has bits set beyond its prefix length",
				    -EINVAL);
		/* 0.0.0.0/0 and ::/0 opened everything but metadata (the
		 * host's other ports, the LAN) and switched the rebinding
		 * filter off for every name. */
		if (e->prefix_len < (family == AF_INET ? MIN_PREFIX_V4 : MIN_PREFIX_V6))
			return fail(err, line, pcol,
				    family == AF_INET ? "prefix wider than /8 (list the networks you need)"
						      : "prefix wider than /32 (list the networks you need)",
				    -EINVAL);
	}
	/* 0.0.0.0/8 ("this network") and :: are never a destination. */
	if (family == AF_INET ? ((const uint8_t *)&e->addr)[0] == 0
			      : IN6_IS_ADDR_UNSPECIFIED(&e->addr.v6))
		return fail(err, line, col,
			    family == AF_INET ? "0.0.0.0/8 is not a destination" : ":: is not a destination",
			    -EINVAL);
	e->addr_class = netaddr_classify_prefix(family, &e->addr, e->prefix_len);
	return 0;
}

/* A name with optional leading "." or "*." and optional trailing dot:
 * s[0..n). Writes the normalised name (lowercase, no dots at either end). */
static int parse_name(const char *s, size_t n, unsigned line, unsigned col,
		      struct allowlist_entry *e, struct perr *err)
{
	const char *msg_star = "'*' is only allowed as a leading '*.'";
	size_t skip = 0, label_start, labels = 0;
	bool suffix = false, all_digits = true;

	if (n >= 2 && s[0] == '*' && s[1] == '.') {
		suffix = true;
		skip = 2;
	} else if (n >= 1 && s[0] == '.') {
		suffix = true;
		skip = 1;
	}
	s += skip;
	n -= skip;
	col += (unsigned)skip;
	if (n > 0 && s[n - 1] == '.')
		n--; /* the root's trailing dot */
	if (n == 0)
		return fail(err, line, col - (unsigned)skip,
			    suffix ? "suffix entry needs a domain after the leading dot"
				   : "empty name",
			    -EINVAL);
	if (n > ALLOWLIST_MAX_NAME)
		return fail(err, line, col, "name longer than 253 characters", -EINVAL);

	label_start = 0;
	for (size_t i = 0; i <= n; i++) {
		char c = '.'; /* one past the end closes the last label */

		if (i < n)
			c = s[i];
		if (c == '.') {
			size_t len = i - label_start;

			if (len == 0)
				return fail(err, line, col + (unsigned)i, "empty label in name",
					    -EINVAL);
			if (len > ALLOWLIST_MAX_LABEL)
				return fail(err, line, col + (unsigned)label_start,
					    "label longer than 63 characters", -EINVAL);
			if (s[label_start] == '-')
				return fail(err, line, col + (unsigned)label_start,
					    "label starts with a hyphen", -EINVAL);
			if (s[i - 1] == '-')
				return fail(err, line, col + (unsigned)(i - 1),
					    "label ends with a hyphen", -EINVAL);
			labels++;
			if (i < n) {
				all_digits = true;
				e->name[i] = '.';
			}
			label_start = i + 1;
			continue;
		}
		if (c == '*')
			return fail(err, line, col + (unsigned)i, msg_star, -EINVAL);
		if (!is_alpha(c) && !is_digit(c) && c != '-')
			return fail(err, line, col + (unsigned)i,
				    "invalid character in name (letters, digits, '-' and '.' only)",
				    -EINVAL);
		if (!is_digit(c))
			all_digits = false;
		e->name[i] = to_lower(c);
	}
	/* RFC 3696 2: a top-level label is never all-numeric. Refusing it keeps
	 * a mistyped address ("198.51.100.700") from becoming a name. */
	if (all_digits)
		return fail(err, line, col, "last label is all digits (a mistyped IPv4 address?)",
			    -EINVAL);
	if (suffix && labels < 2)
		return fail(err, line, col - (unsigned)skip,
			    "suffix entry would cover a whole top-level domain", -EINVAL);
	e->name[n] = 0;
	e->kind = suffix ? ALLOWLIST_NAME_SUFFIX : ALLOWLIST_NAME_EXACT;
	return 0;
}

/* Decides whether a token is a bare IPv6 address: two or more colons and
 * only hex digits before the first. "example.com:80:90" is a name with a bad
 * port, "2001:db8::g" a bad address. */
static bool looks_like_ipv6(const char *s, size_t n)
{
	size_t colons = 0;
	bool hex_head = true;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == ':')
			colons++;
		else if (colons == 0 && !is_hex(s[i]))
			hex_head = false;
	}
	return colons >= 2 && hex_head;
}

/* Digits, dots and '/' only, at least one digit. */
static bool looks_like_ipv4(const char *s, size_t n)
{
	bool digit = false;

	for (size_t i = 0; i < n; i++) {
		if (is_digit(s[i]))
			digit = true;
		else if (s[i] != '.' && s[i] != '/')
			return false;
	}
	return digit;
}

/* One entry (not a bundle include): s[0..n), n > 0, col = column of s[0]. */
static int parse_entry(const char *s, size_t n, unsigned line, unsigned col,
		       struct allowlist_entry *e, struct perr *err)
{
	const char *colon;
	size_t n_host;
	int r;

	memset(e, 0, sizeof(*e));
	e->port_lo = e->port_hi = ALLOWLIST_DEFAULT_PORT;
	e->line = line;

	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		size_t n_in;

		if (!rb)
			return fail(err, line, col, "missing ']' after IPv6 address", -EINVAL);
		n_in = (size_t)(rb - s) - 1;
		if (n_in > 0 && !memchr(s + 1, ':', n_in))
			return fail(err, line, col, "brackets are only for IPv6 addresses", -EINVAL);
		r = parse_addr(s + 1, n_in, AF_INET6, line, col + 1, e, err);
		if (r < 0)
			return r;
		n_in += 2; /* past the ']' */
		if (n_in == n)
			return 0;
		if (s[n_in] != ':')
			return fail(err, line, col + (unsigned)n_in, "expected ':PORT' after ']'",
				    -EINVAL);
		return parse_ports(s + n_in + 1, n - n_in - 1, line, col + (unsigned)n_in + 1, e,
				   err);
	}

	if (looks_like_ipv6(s, n))
		return parse_addr(s, n, AF_INET6, line, col, e, err);

	colon = memchr(s, ':', n);
	n_host = colon ? (size_t)(colon - s) : n;
	if (n_host == 0)
		return fail(err, line, col, "missing name or address before ':'", -EINVAL);
	if (memchr(s, '/', n_host) || looks_like_ipv4(s, n_host)) {
		if (!looks_like_ipv4(s, n_host))
			return fail(err, line, col, "a prefix length needs an IP address", -EINVAL);
		r = parse_addr(s, n_host, AF_INET, line, col, e, err);
	} else
		r = parse_name(s, n_host, line, col, e, err);
	if (r < 0)
		return r;
	if (colon)
		return parse_ports(colon + 1, n - n_host - 1, line, col + (unsigned)n_host + 1, e,
				   err);
	return 0;
}

static bool entry_equal(const struct allowlist_entry *a, const struct allowlist_entry *b)
{
	if (a->kind != b->kind || a->port_lo != b->port_lo || a->port_hi != b->port_hi)
		return false;
	if (a->kind == ALLOWLIST_ADDR)
		return a->family == b->family && a->prefix_len == b->prefix_len &&
		       memcmp(&a->addr, &b->addr,
			      a->family == AF_INET ? sizeof(struct in_addr)
						   : sizeof(struct in6_addr)) == 0;
	return strcmp(a->name, b->name) == 0;
}

/* Appends e (copied) unless an equal entry exists. -E2BIG past the limit. */
static int add_entry(struct allowlist *al, const struct allowlist_entry *e)
{
	for (size_t i = 0; i < al->n; i++)
		if (entry_equal(&al->entries[i], e))
			return 0;
	if (al->n >= ALLOWLIST_MAX_ENTRIES)
		return -E2BIG;
	if (al->n == al->cap) {
		size_t cap = al->cap ? al->cap * 2 : 16;
		struct allowlist_entry *p;

		if (cap > ALLOWLIST_MAX_ENTRIES)
			cap = ALLOWLIST_MAX_ENTRIES;
		p = realloc(al->entries, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		al->entries = p;
		al->cap = cap;
	}
	al->entries[al->n++] = *e;
	return 0;
}

/* Returns a copy of name owned by al (reusing an equal one), or NULL. */
static const char *intern_source(struct allowlist *al, const char *name)
{
	char **p;
	char *copy;

	for (size_t i = 0; i < al->n_sources; i++)
		if (strcmp(al->sources[i], name) == 0)
			return al->sources[i];
	copy = strdup(name);
	if (!copy)
		return NULL;
	p = realloc(al->sources, (al->n_sources + 1) * sizeof(*p));
	if (!p) {
		free(copy);
		return NULL;
	}
	al->sources = p;
	al->sources[al->n_sources++] = copy;
	return copy;
}

static int parse_text(const struct pctx *ctx, const char *text, size_t len, struct perr *err);

/* "@name" at s[0..n): looks the bundle up and parses it. */
static int include_bundle(const struct pctx *ctx, const char *s, size_t n, unsigned line,
			  unsigned col, struct perr *err)
{
	char name[ALLOWLIST_MAX_BUNDLE_NAME + 1], src[ALLOWLIST_MAX_BUNDLE_NAME + 2];
	const char *text = NULL;
	size_t text_len = 0;
	struct pctx inner;
	struct perr ierr = {0};
	int r;

	if (ctx->nested)
		return fail(err, line, col, "a bundle cannot include another bundle", -EINVAL);
	s++;
	n--;
	if (n == 0)
		return fail(err, line, col, "missing bundle name after '@'", -EINVAL);
	if (n > ALLOWLIST_MAX_BUNDLE_NAME)
		return fail(err, line, col, "bundle name longer than 32 characters", -EINVAL);
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || is_digit(c) ||
		      (i > 0 && (c == '-' || c == '_'))))
			return fail(err, line, col + 1 + (unsigned)i,
				    "invalid bundle name (lowercase letters, digits, '-', '_')",
				    -EINVAL);
		name[i] = c;
	}
	name[n] = 0;
	if (!ctx->bundle)
		return fail(err, line, col, "bundles are not available here", -EINVAL);
	r = ctx->bundle(ctx->userdata, name, &text, &text_len);
	if (r == -ENOENT)
		return fail(err, line, col, "unknown bundle", -EINVAL);
	if (r < 0)
		return fail(err, line, col, "cannot read bundle", r);
	if (!text && text_len > 0)
		return fail(err, line, col, "cannot read bundle", -EINVAL);

	src[0] = '@';
	memcpy(src + 1, name, n + 1);
	inner = *ctx;
	inner.nested = true;
	inner.source = intern_source(ctx->al, src);
	if (!inner.source)
		return fail(err, line, col, "out of memory", -ENOMEM);
	r = parse_text(&inner, text ? text : "", text_len, &ierr);
	if (r < 0) {
		(void)fail(err, line, col, ierr.message, r);
		memcpy(err->bundle, name, n + 1);
		err->bundle_line = ierr.line;
		err->bundle_column = ierr.column;
	}
	return r;
}

/* Why an unmarked entry of class c is refused, by where it came from. */
static const char *special_refusal(enum netaddr_class c, bool from_file)
{
	static const char *const in_file[NETADDR_CLASS_MAX] = {
		[NETADDR_UNSPECIFIED] = "unspecified address range: add the marker 'special' after the entry to open it",
		[NETADDR_LOOPBACK] = "loopback range: add the marker 'special' after the entry to open it",
		[NETADDR_METADATA] = "cloud metadata address range: add the marker 'special' after the entry to open it",
		[NETADDR_LINK_LOCAL] = "link-local range: add the marker 'special' after the entry to open it",
		[NETADDR_PRIVATE] = "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it",
		[NETADDR_CGNAT] = "shared CGNAT range (100.64.0.0/10): add the marker 'special' after the entry to open it",
		[NETADDR_MULTICAST] = "multicast range: add the marker 'special' after the entry to open it",
		[NETADDR_BROADCAST] = "broadcast address: add the marker 'special' after the entry to open it",
		[NETADDR_RESERVED] = "reserved range: add the marker 'special' after the entry to open it",
	};
	static const char *const elsewhere[NETADDR_CLASS_MAX] = {
		[NETADDR_UNSPECIFIED] = "unspecified address range: only the allowlist file can open it (marker 'special')",
		[NETADDR_LOOPBACK] = "loopback range: only the allowlist file can open it (marker 'special')",
		[NETADDR_METADATA] = "cloud metadata address range: only the allowlist file can open it (marker 'special')",
		[NETADDR_LINK_LOCAL] = "link-local range: only the allowlist file can open it (marker 'special')",
		[NETADDR_PRIVATE] = "private range (RFC 1918, ULA): only the allowlist file can open it (marker 'special')",
		[NETADDR_CGNAT] = "shared CGNAT range (100.64.0.0/10): only the allowlist file can open it (marker 'special')",
		[NETADDR_MULTICAST] = "multicast range: only the allowlist file can open it (marker 'special')",
		[NETADDR_BROADCAST] = "broadcast address: only the allowlist file can open it (marker 'special')",
		[NETADDR_RESERVED] = "reserved range: only the allowlist file can open it (marker 'special')",
	};
	const char *m = (unsigned)c < NETADDR_CLASS_MAX ? (from_file ? in_file : elsewhere)[c] : NULL;

	return m ? m : "special-purpose range: add the marker 'special' after the entry to open it";
}

bool allowlist_suffix_is_public(const char *name)
{
	const psl_ctx_t *psl = psl_builtin();

	/* Without the list nothing can be told apart: fail closed. */
	if (!psl)
		return true;
	return psl_is_public_suffix2(psl, name, PSL_TYPE_ANY) != 0;
}

/* One token from a file line or EXTRA_ALLOWED_DOMAINS; special: the line
 * carried the marker. */
static int handle_token(const struct pctx *ctx, const char *s, size_t n, unsigned line,
			unsigned col, bool special, struct perr *err)
{
	bool from_file = !ctx->nested && !ctx->extra;
	struct allowlist_entry e;
	int r;

	if (s[0] == '@') {
		if (special)
			return fail(err, line, col, "the marker 'special' applies to one address entry, not a bundle",
				    -EINVAL);
		return include_bundle(ctx, s, n, line, col, err);
	}
	r = parse_entry(s, n, line, col, &e, err);
	if (r < 0)
		return r;
	/* Special-purpose ranges (loopback, link-local and metadata, RFC
	 * 1918, CGNAT, ULA, ...) only on the explicit word of the allowlist
	 * file itself: never from EXTRA_ALLOWED_DOMAINS or a bundle. */
	if (e.kind == ALLOWLIST_ADDR && e.addr_class != NETADDR_PUBLIC && (!special || !from_file))
		return fail(err, line, col, special_refusal(e.addr_class, from_file), -EINVAL);
	/* On a public address entry the marker is allowed: the container's
	 * gateway, known only at run time, may be public and needs it. */
	if (special && e.kind != ALLOWLIST_ADDR)
		return fail(err, line, col, "the marker 'special' is for address entries only", -EINVAL);
	e.special = special;
	/* ".co.uk", "*.github.io", ".s3.amazonaws.com": everyone can register
	 * a name below a public suffix, so the entry would admit anyone's. */
	if (e.kind == ALLOWLIST_NAME_SUFFIX && allowlist_suffix_is_public(e.name))
		return fail(err, line, col,
			    "suffix is a public suffix (Public Suffix List): anyone can register names below it; list the names you need",
			    -EINVAL);
	e.source = ctx->source;
	r = add_entry(ctx->al, &e);
	if (r == -E2BIG)
		return fail(err, line, col, "too many entries (limit 1024)", r);
	if (r < 0)
		return fail(err, line, col, "out of memory", r);
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line s[0..n) without its '\n'. */
static int parse_line(const struct pctx *ctx, const char *s, size_t n, unsigned line,
		      struct perr *err)
{
	size_t b, t;

	if (n > 0 && s[n - 1] == '\r')
		n--; /* CRLF files */
	if (n > ALLOWLIST_MAX_LINE)
		return fail(err, line, ALLOWLIST_MAX_LINE + 1, "line longer than 512 bytes",
			    -EINVAL);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0)
			return fail(err, line, (unsigned)i + 1, "NUL byte in line", -EINVAL);
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(err, line, (unsigned)i + 1, "control character in line",
				    -EINVAL);
	}
	{
		const char *hash = memchr(s, '#', n);

		if (hash)
			n = (size_t)(hash - s);
	}
	while (n > 0 && is_blank(s[n - 1]))
		n--;
	for (b = 0; b < n && is_blank(s[b]); b++)
		;
	if (b == n)
		return 0;
	for (t = b; t < n && !is_blank(s[t]); t++)
		;
	if (t < n) {
		size_t x = t;

		while (is_blank(s[x]))
			x++;
		/* ENTRY special: the one word an entry may carry. */
		if (n - x == STRLEN(SPECIAL_MARKER) && memcmp(s + x, SPECIAL_MARKER, n - x) == 0)
			return handle_token(ctx, s + b, t - b, line, (unsigned)b + 1, true, err);
		return fail(err, line, (unsigned)x + 1,
			    "unexpected text after entry (one entry per line)", -EINVAL);
	}
	return handle_token(ctx, s + b, t - b, line, (unsigned)b + 1, false, err);
}

static int parse_text(const struct pctx *ctx, const char *text, size_t len, struct perr *err)
{
	unsigned line = 0;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		int r;

		line++;
		r = parse_line(ctx, text + pos, n, line, err);
		if (r < 0)
			return r;
		pos += n + (nl ? 1 : 0);
	}
	return 0;
}

/* Undoes everything appended since (n, n_sources). */
static void rollback(struct allowlist *al, size_t n, size_t n_sources)
{
	al->n = n;
	while (al->n_sources > n_sources)
		free(al->sources[--al->n_sources]);
}

static void report(struct parse_error *reterr, const char *file, const struct perr *e)
{
	if (!reterr)
		return;
	reterr->file = file;
	reterr->line = e->line;
	reterr->column = e->column;
	reterr->message = e->message;
	memcpy(reterr->bundle, e->bundle, sizeof(reterr->bundle));
	reterr->bundle_line = e->bundle_line;
	reterr->bundle_column = e->bundle_column;
}

int allowlist_parse(struct allowlist *al, const char *source_name, const char *text, size_t len,
		    allowlist_bundle_fn bundle, void *userdata, struct parse_error *reterr)
{
	size_t n0 = al->n, s0 = al->n_sources;
	struct perr e = {0};
	struct pctx ctx = {
		.al = al,
		.bundle = bundle,
		.userdata = userdata,
	};
	int r;

	assert(source_name);
	assert(text || len == 0);
	ctx.source = intern_source(al, source_name);
	if (!ctx.source)
		r = fail(&e, 0, 0, "out of memory", -ENOMEM);
	else
		r = parse_text(&ctx, text ? text : "", len, &e);
	if (r < 0) {
		rollback(al, n0, s0);
		report(reterr, source_name, &e);
		return r;
	}
	return 0;
}

static bool is_extra_separator(char c)
{
	return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r';
}

int allowlist_parse_extra(struct allowlist *al, const char *spec, allowlist_bundle_fn bundle,
			  void *userdata, struct parse_error *reterr)
{
	size_t n0 = al->n, s0 = al->n_sources, pos = 0, len;
	unsigned ordinal = 0;
	struct perr e = {0};
	struct pctx ctx = {
		.al = al,
		.source = EXTRA_SOURCE,
		.bundle = bundle,
		.userdata = userdata,
		.extra = true,
	};
	int r = 0;

	if (!spec)
		return 0;
	len = strlen(spec);
	while (pos < len) {
		size_t end;

		if (is_extra_separator(spec[pos])) {
			pos++;
			continue;
		}
		for (end = pos; end < len && !is_extra_separator(spec[end]); end++)
			;
		ordinal++;
		if (end - pos > ALLOWLIST_MAX_LINE)
			r = fail(&e, ordinal, (unsigned)pos + 1, "entry longer than 512 bytes",
				 -EINVAL);
		else {
			for (size_t i = pos; i < end; i++) {
				unsigned char c = (unsigned char)spec[i];

				if (c < 0x20 || c == 0x7f) {
					r = fail(&e, ordinal, (unsigned)i + 1,
						 "control character in entry", -EINVAL);
					break;
				}
			}
			if (r >= 0)
				r = handle_token(&ctx, spec + pos, end - pos, ordinal,
						 (unsigned)pos + 1, false, &e);
		}
		if (r < 0) {
			rollback(al, n0, s0);
			report(reterr, EXTRA_SOURCE, &e);
			return r;
		}
		pos = end;
	}
	return 0;
}

/* Checks a query name for matching: labels of letters, digits, '-' or '_'
 * (DNS answers may carry service labels), optional trailing dot. Anything
 * else, such as a label holding a literal dot that a presentation format
 * escaped as "\.", never matches. Returns its length without the dot, or 0. */
static size_t query_name_len(const char *name)
{
	size_t n = strnlen(name, ALLOWLIST_MAX_NAME + 2), label = 0;

	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n > ALLOWLIST_MAX_NAME)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (c == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '_')
			return 0;
		if (++label > ALLOWLIST_MAX_LABEL)
			return 0;
	}
	if (label == 0)
		return 0; /* "example.com.." : an empty last label */
	return n;
}

static bool equal_nocase(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (to_lower(a[i]) != b[i]) /* entry names are already lowercase */
			return false;
	return true;
}

/* True when a public suffix lies strictly between the suffix entry's
 * name (the last en bytes of name[0..n)) and name itself: ".amazonaws.com"
 * is no public suffix, but "s3.amazonaws.com" below it is, so
 * "bucket.s3.amazonaws.com" is anyone's. The name itself may be one (the
 * suffix operator's own host). Fails closed without the list. */
static bool public_suffix_between(const char *name, size_t n, size_t en)
{
	const psl_ctx_t *psl = psl_builtin();
	char lower[ALLOWLIST_MAX_NAME + 1];

	if (!psl)
		return true;
	for (size_t i = 0; i < n; i++)
		lower[i] = to_lower(name[i]);
	lower[n] = '\0';
	/* Each parent of name longer than the entry: the label boundaries
	 * in lower[1 .. n - en - 1). */
	for (size_t i = n - en - 1; i-- > 1;)
		if (lower[i - 1] == '.' && psl_is_public_suffix2(psl, lower + i, PSL_TYPE_ANY))
			return true;
	return false;
}

static bool entry_admits(const struct allowlist_entry *e, const char *name, size_t n)
{
	size_t en;

	if (e->kind != ALLOWLIST_NAME_EXACT && e->kind != ALLOWLIST_NAME_SUFFIX)
		return false;
	en = strlen(e->name);
	if (n == en)
		return equal_nocase(name, e->name, n);
	/* Only on a label boundary: ".example.com" admits "a.example.com",
	 * never "badexample.com"; and never past an inner public suffix. */
	return e->kind == ALLOWLIST_NAME_SUFFIX && n > en && name[n - en - 1] == '.' &&
	       equal_nocase(name + n - en, e->name, en) && !public_suffix_between(name, n, en);
}

const struct allowlist_entry *allowlist_match_name_next(const struct allowlist *al,
							const char *name,
							const struct allowlist_entry *after)
{
	size_t n, i = 0;

	if (!al || !name)
		return NULL;
	n = query_name_len(name);
	if (n == 0)
		return NULL;
	if (after) {
		assert(after >= al->entries && after < al->entries + al->n);
		i = (size_t)(after - al->entries) + 1;
	}
	for (; i < al->n; i++)
		if (entry_admits(&al->entries[i], name, n))
			return &al->entries[i];
	return NULL;
}

const struct allowlist_entry *allowlist_match_name(const struct allowlist *al, const char *name)
{
	return allowlist_match_name_next(al, name, NULL);
}

bool allowlist_contains_addr(const struct allowlist *al, int family, const void *addr)
{
	size_t len;

	if (!al || !addr || (family != AF_INET && family != AF_INET6))
		return false;
	len = family == AF_INET ? sizeof(struct in_addr) : sizeof(struct in6_addr);
	for (size_t i = 0; i < al->n; i++) {
		const struct allowlist_entry *e = &al->entries[i];
		const uint8_t *net = (const uint8_t *)&e->addr, *a = addr;
		unsigned full, rest;

		if (e->kind != ALLOWLIST_ADDR || e->family != family)
			continue;
		full = e->prefix_len / 8;
		rest = e->prefix_len % 8;
		if (memcmp(net, a, full) != 0)
			continue;
		if (rest && full < len &&
		    ((net[full] ^ a[full]) & (uint8_t)(0xffu << (8 - rest))) != 0)
			continue;
		return true;
	}
	return false;
}

bool allowlist_addr_is_gateway(const struct allowlist *al, int family, const void *addr)
{
	if (!al || !addr)
		return false;
	for (size_t i = 0; i < al->n_gateways && i < ALLOWLIST_MAX_GATEWAYS; i++)
		if (al->gateways[i].family == family &&
		    memcmp(&al->gateways[i].addr, addr, family == AF_INET ? 4 : 16) == 0)
			return true;
	return false;
}

void allowlist_free(struct allowlist *al)
{
	if (!al)
		return;
	free(al->entries);
	for (size_t i = 0; i < al->n_sources; i++)
		free(al->sources[i]);
	free(al->sources);
	memset(al, 0, sizeof(*al));
}

char *allowlist_format_error(const struct parse_error *e, char *buf, size_t size)
{
	if (size == 0)
		return buf;
	if (e->line == 0) /* not about a line: the file could not be read */
		(void)snprintf(buf, size, "%s: %s", e->file ? e->file : "?",
			       e->message ? e->message : "?");
	else if (e->bundle[0])
		(void)snprintf(buf, size, "%s:%u:%u: in @%s line %u column %u: %s",
			       e->file ? e->file : "?", e->line, e->column, e->bundle,
			       e->bundle_line, e->bundle_column, e->message ? e->message : "?");
	else
		(void)snprintf(buf, size, "%s:%u:%u: %s", e->file ? e->file : "?", e->line,
			       e->column, e->message ? e->message : "?");
	return buf;
}

char *allowlist_entry_format(const struct allowlist_entry *e, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN] = "", host[ALLOWLIST_MAX_ENTRY_TEXT], ports[16] = "";
	bool has_ports = !(e->port_lo == ALLOWLIST_DEFAULT_PORT &&
			   e->port_hi == ALLOWLIST_DEFAULT_PORT);

	if (size == 0)
		return buf;
	if (has_ports) {
		if (e->port_lo == e->port_hi)
			(void)snprintf(ports, sizeof(ports), ":%u", (unsigned)e->port_lo);
		else
			(void)snprintf(ports, sizeof(ports), ":%u-%u", (unsigned)e->port_lo,
				       (unsigned)e->port_hi);
	}
	switch (e->kind) {
	case ALLOWLIST_NAME_EXACT:
	case ALLOWLIST_NAME_SUFFIX:
		(void)snprintf(buf, size, "%s%s%s", e->kind == ALLOWLIST_NAME_SUFFIX ? "." : "",
			       e->name, ports);
		return buf;
	case ALLOWLIST_ADDR:
		if (!inet_ntop(e->family, &e->addr, addr, sizeof(addr)))
			(void)snprintf(addr, sizeof(addr), "?");
		if (e->prefix_len != (e->family == AF_INET ? 32u : 128u))
			(void)snprintf(host, sizeof(host), "%s/%u", addr, e->prefix_len);
		else
			(void)snprintf(host, sizeof(host), "%s", addr);
		if (e->family == AF_INET6 && has_ports)
			(void)snprintf(buf, size, "[%s]%s", host, ports);
		else
			(void)snprintf(buf, size, "%s%s", host, ports);
		return buf;
	case ALLOWLIST_KIND_MAX:
	default:
		(void)snprintf(buf, size, "?");
		return buf;
	}
}
