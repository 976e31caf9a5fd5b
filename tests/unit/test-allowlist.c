/* SPDX-License-Identifier: MIT */
/* Allowlist parsing and matching: valid and invalid entries (exact line,
 * column and message), duplicates, every limit at and past it, bundles,
 * EXTRA_ALLOWED_DOMAINS, matching on label boundaries, addresses, ports,
 * and the shipped data files (SHIPPED_ALLOWLIST, SHIPPED_BUNDLE_DIR). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "allowlist.h"
#include "macros.h"
#include "tap.h"

/* tap.h has ASSERT_NULL only; these record and go on. */
#define EXPECT_NULL_(p) EXPECT_TRUE((p) == NULL)
#define EXPECT_NOT_NULL_(p) EXPECT_TRUE((p) != NULL)
#define EXPECT_GE_(a, b) EXPECT_TRUE((a) >= (b))

#define MAX_TEST_FILE ((size_t)256 * 1024)

static int parse_str(struct allowlist *al, const char *text, struct parse_error *err)
{
	return allowlist_parse(al, "test", text, strlen(text), NULL, NULL, err);
}

/* A tiny in-memory bundle table. */
struct bundle_def {
	const char *name, *text;
};
static const struct bundle_def test_bundles[] = {
	{"github", "github.com\n.usercontent.example.com  # comment\napi.github.com\n"},
	{"npm", "registry.npmjs.org\n"},
	{"nested", "ok.example.com\n@npm\n"},
	{"bad", "good.example.com\n\nbad-.example.com\n"},
	{"empty", ""},
	{"dup", "github.com\n"},
};

static int lookup_bundle(void *userdata, const char *name, const char **ret_text, size_t *ret_len)
{
	int *calls = userdata;

	if (calls)
		(*calls)++;
	if (strcmp(name, "ioerror") == 0)
		return -EIO;
	for (size_t i = 0; i < ELEMENTSOF(test_bundles); i++)
		if (strcmp(test_bundles[i].name, name) == 0) {
			*ret_text = test_bundles[i].text;
			*ret_len = strlen(test_bundles[i].text);
			return 0;
		}
	return -ENOENT;
}

static const char *fmt(const struct allowlist_entry *e)
{
	static char buf[ALLOWLIST_MAX_ENTRY_TEXT];
	return allowlist_entry_format(e, buf, sizeof(buf));
}

struct valid_case {
	const char *line;
	enum allowlist_kind kind;
	const char *normalised; /* allowlist_entry_format() */
	unsigned port_lo, port_hi;
};

static const struct valid_case valid_cases[] = {
	{"example.com", ALLOWLIST_NAME_EXACT, "example.com", 443, 443},
	{"Example.COM.", ALLOWLIST_NAME_EXACT, "example.com", 443, 443},
	{"  api.example.com   # trailing comment", ALLOWLIST_NAME_EXACT, "api.example.com", 443, 443},
	{"\tx-1.example.com\t", ALLOWLIST_NAME_EXACT, "x-1.example.com", 443, 443},
	{".example.com", ALLOWLIST_NAME_SUFFIX, ".example.com", 443, 443},
	{"*.example.com", ALLOWLIST_NAME_SUFFIX, ".example.com", 443, 443},
	{"*.Example.com.", ALLOWLIST_NAME_SUFFIX, ".example.com", 443, 443},
	{"localhost", ALLOWLIST_NAME_EXACT, "localhost", 443, 443},
	{"1password.com", ALLOWLIST_NAME_EXACT, "1password.com", 443, 443},
	{"a.b2", ALLOWLIST_NAME_EXACT, "a.b2", 443, 443},
	{"xn--bcher-kva.example", ALLOWLIST_NAME_EXACT, "xn--bcher-kva.example", 443, 443},
	{"example.com:80", ALLOWLIST_NAME_EXACT, "example.com:80", 80, 80},
	{"example.com:1", ALLOWLIST_NAME_EXACT, "example.com:1", 1, 1},
	{"example.com:65535", ALLOWLIST_NAME_EXACT, "example.com:65535", 65535, 65535},
	{"example.com:8000-8080", ALLOWLIST_NAME_EXACT, "example.com:8000-8080", 8000, 8080},
	{"example.com:22-22", ALLOWLIST_NAME_EXACT, "example.com:22", 22, 22},
	{"example.com:443", ALLOWLIST_NAME_EXACT, "example.com", 443, 443},
	{".example.com:1-65535", ALLOWLIST_NAME_SUFFIX, ".example.com:1-65535", 1, 65535},
	{"198.51.100.7", ALLOWLIST_ADDR, "198.51.100.7", 443, 443},
	{"198.51.100.7:22", ALLOWLIST_ADDR, "198.51.100.7:22", 22, 22},
	{"198.51.100.0/24", ALLOWLIST_ADDR, "198.51.100.0/24", 443, 443},
	{"198.51.100.0/24:80-81", ALLOWLIST_ADDR, "198.51.100.0/24:80-81", 80, 81},
	{"198.51.100.7/32", ALLOWLIST_ADDR, "198.51.100.7", 443, 443},
	{"8.0.0.0/8", ALLOWLIST_ADDR, "8.0.0.0/8", 443, 443},
	{"10.0.0.0/8 special", ALLOWLIST_ADDR, "10.0.0.0/8", 443, 443},
	{"169.254.169.254:80\tspecial", ALLOWLIST_ADDR, "169.254.169.254:80", 80, 80},
	{"[fd00:ec2::254]:80 special  # metadata", ALLOWLIST_ADDR, "[fd00:ec2::254]:80", 80, 80},
	{"198.51.100.1 special", ALLOWLIST_ADDR, "198.51.100.1", 443, 443},
	{".foo.github.io", ALLOWLIST_NAME_SUFFIX, ".foo.github.io", 443, 443},
	{"github.io", ALLOWLIST_NAME_EXACT, "github.io", 443, 443},
	{"2001:db8::1", ALLOWLIST_ADDR, "2001:db8::1", 443, 443},
	{"2001:DB8::/32", ALLOWLIST_ADDR, "2001:db8::/32", 443, 443},
	{"[2001:db8::1]", ALLOWLIST_ADDR, "2001:db8::1", 443, 443},
	{"[2001:db8::1]:8443", ALLOWLIST_ADDR, "[2001:db8::1]:8443", 8443, 8443},
	{"[2001:db8::/48]:1-1024", ALLOWLIST_ADDR, "[2001:db8::/48]:1-1024", 1, 1024},
	{"[2001:db8::/32]:22", ALLOWLIST_ADDR, "[2001:db8::/32]:22", 22, 22},
	{"::ffff:198.51.100.1", ALLOWLIST_ADDR, "::ffff:198.51.100.1", 443, 443},
};

TEST(valid_entries_parse_and_normalise)
{
	for (size_t i = 0; i < ELEMENTSOF(valid_cases); i++) {
		const struct valid_case *c = &valid_cases[i];
		struct allowlist al = {0};
		struct parse_error err = {0};
		int r = parse_str(&al, c->line, &err);

		if (r < 0)
			printf("# '%s': %s at %u:%u\n", c->line, err.message, err.line, err.column);
		ASSERT_OK(r);
		ASSERT_EQ(al.n, 1);
		EXPECT_EQ(al.entries[0].kind, c->kind);
		EXPECT_STREQ(fmt(&al.entries[0]), c->normalised);
		EXPECT_EQ(al.entries[0].port_lo, c->port_lo);
		EXPECT_EQ(al.entries[0].port_hi, c->port_hi);
		EXPECT_EQ(al.entries[0].line, 1);
		EXPECT_STREQ(al.entries[0].source, "test");
		allowlist_free(&al);
	}
}

TEST(address_fields)
{
	struct allowlist al = {0};
	struct in6_addr v6;

	ASSERT_ERR(parse_str(&al, "198.51.100.0/24\n[2001:db8::]/0\n", NULL), EINVAL);
	ASSERT_OK(parse_str(&al, "198.51.100.0/24\n2001:db8::/32\n", NULL));
	ASSERT_EQ(al.n, 2);
	EXPECT_EQ(al.entries[0].family, AF_INET);
	EXPECT_EQ(al.entries[0].prefix_len, 24);
	EXPECT_EQ(ntohl(al.entries[0].addr.v4.s_addr), 0xc6336400u);
	EXPECT_EQ(al.entries[1].family, AF_INET6);
	EXPECT_EQ(al.entries[1].prefix_len, 32);
	ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::", &v6), 1);
	ASSERT_MEMEQ(&al.entries[1].addr.v6, &v6, sizeof(v6));
	EXPECT_EQ(al.entries[1].line, 2);
	allowlist_free(&al);
}

TEST(comments_blank_lines_and_crlf)
{
	struct allowlist al = {0};
	const char *text = "# header\r\n\r\n   \n\t# indented comment\na.example.com\r\n"
			   "b.example.com # x # y\n#c.example.com\nc.example.com";

	ASSERT_OK(parse_str(&al, text, NULL));
	ASSERT_EQ(al.n, 3);
	EXPECT_STREQ(al.entries[0].name, "a.example.com");
	EXPECT_EQ(al.entries[0].line, 5);
	EXPECT_STREQ(al.entries[1].name, "b.example.com");
	EXPECT_EQ(al.entries[1].line, 6);
	EXPECT_STREQ(al.entries[2].name, "c.example.com");
	EXPECT_EQ(al.entries[2].line, 8);
	allowlist_free(&al);

	ASSERT_OK(parse_str(&al, "", NULL));
	ASSERT_EQ(al.n, 0);
	ASSERT_OK(allowlist_parse(&al, "test", NULL, 0, NULL, NULL, NULL));
	ASSERT_EQ(al.n, 0);
	allowlist_free(&al);
}

struct invalid_case {
	const char *text;
	unsigned line, column;
	const char *message;
};

#define M_CHAR "invalid character in name (letters, digits, '-' and '.' only)"
#define M_STAR "'*' is only allowed as a leading '*.'"
#define M_PORT "invalid port (expected 1-65535 or LOW-HIGH)"
#define M_RANGE "port out of range (1-65535)"
#define M_TLD "suffix entry would cover a whole top-level domain"

static const struct invalid_case invalid_cases[] = {
	{"*", 1, 1, M_STAR},
	{".", 1, 1, "suffix entry needs a domain after the leading dot"},
	{"*.", 1, 1, "suffix entry needs a domain after the leading dot"},
	{"..", 1, 1, "suffix entry needs a domain after the leading dot"},
	{".com", 1, 1, M_TLD},
	{"*.com", 1, 1, M_TLD},
	{".com.", 1, 1, M_TLD},
	{"*example.com", 1, 1, M_STAR},
	{"foo.*.example.com", 1, 5, M_STAR},
	{"*.*.example.com", 1, 3, M_STAR},
	{"a..b.com", 1, 3, "empty label in name"},
	{"example.com..", 1, 13, "empty label in name"},
	{"...example.com", 1, 2, "empty label in name"},
	{"-a.example.com", 1, 1, "label starts with a hyphen"},
	{"a-.example.com", 1, 2, "label ends with a hyphen"},
	{"a.example-.com", 1, 10, "label ends with a hyphen"},
	{"a.-example.com", 1, 3, "label starts with a hyphen"},
	{"exa_mple.com", 1, 4, M_CHAR},
	{"ex ample.com", 1, 4, "unexpected text after entry (one entry per line)"},
	{"a.com b.com", 1, 7, "unexpected text after entry (one entry per line)"},
	{"ex\xc3\xa4mple.com", 1, 3, M_CHAR},
	{"example.com/24", 1, 1, "a prefix length needs an IP address"},
	{"http://example.com", 1, 6, M_PORT},
	{"example.com:", 1, 13, "missing port after ':'"},
	{"example.com:0", 1, 13, M_RANGE},
	{"example.com:65536", 1, 13, M_RANGE},
	{"example.com:100000", 1, 13, M_PORT},
	{"example.com:-1", 1, 13, M_PORT},
	{"example.com:+1", 1, 13, M_PORT},
	{"example.com:1-", 1, 15, M_PORT},
	{"example.com:1-0", 1, 15, M_RANGE},
	{"example.com:1-65536", 1, 15, M_RANGE},
	{"example.com:90-80", 1, 13, "port range is reversed (LOW must be <= HIGH)"},
	{"example.com:80:90", 1, 13, M_PORT},
	{"example.com:80-90-100", 1, 16, M_PORT},
	{":443", 1, 1, "missing name or address before ':'"},
	{"198.51.100.700", 1, 1, "invalid IPv4 address"},
	{"198.51.100", 1, 1, "invalid IPv4 address"},
	{"198.51.100.07", 1, 1, "invalid IPv4 address"},
	{"198.51.100.7.", 1, 1, "invalid IPv4 address"},
	{"999", 1, 1, "invalid IPv4 address"},
	{"a.123", 1, 1, "last label is all digits (a mistyped IPv4 address?)"},
	{"198.51.100.7/24", 1, 1, "address has bits set beyond its prefix length"},
	{"198.51.100.0/33", 1, 14, "prefix length out of range (0-32)"},
	{"198.51.100.0/", 1, 14, "missing prefix length after '/'"},
	{"198.51.100.0/2a", 1, 1, "a prefix length needs an IP address"},
	{"198.51.100.0/1234", 1, 14, "prefix length out of range (0-32)"},
	{"2001:db8::1/64", 1, 1, "address has bits set beyond its prefix length"},
	{"2001:db8::/129", 1, 12, "prefix length out of range (0-128)"},
	{"2001:db8::g", 1, 1, "invalid IPv6 address"},
	{"2001:db8:::1", 1, 1, "invalid IPv6 address"},
	{"fe80::1%eth0", 1, 1, "IPv6 zone ids ('%') are not supported"},
	{"[2001:db8::1", 1, 1, "missing ']' after IPv6 address"},
	{"[2001:db8::1]80", 1, 14, "expected ':PORT' after ']'"},
	{"[2001:db8::1]:", 1, 15, "missing port after ':'"},
	{"[2001:db8::1]:0", 1, 15, M_RANGE},
	{"[198.51.100.1]:80", 1, 1, "brackets are only for IPv6 addresses"},
	{"[]", 1, 2, "invalid IPv6 address"},
	{"[2001:db8::1/64]", 1, 2, "address has bits set beyond its prefix length"},
	{"@", 1, 1, "missing bundle name after '@'"},
	{"@github", 1, 1, "bundles are not available here"},
	{"@Github", 1, 2, "invalid bundle name (lowercase letters, digits, '-', '_')"},
	{"@github:22", 1, 8, "invalid bundle name (lowercase letters, digits, '-', '_')"},
	{"@-x", 1, 2, "invalid bundle name (lowercase letters, digits, '-', '_')"},
	{"@abcdefghijklmnopqrstuvwxyz0123456", 1, 1, "bundle name longer than 32 characters"},
	{"ok.example.com\nbad!.example.com\n", 2, 4, M_CHAR},
	{"ok.example.com\n\n\n   x..y\n", 4, 6, "empty label in name"},
	{"a.example.com\x01", 1, 14, "control character in line"},
	{"a.example.com\r\r\n", 1, 14, "control character in line"},
	{"# comment \x1b[31m\n", 1, 11, "control character in line"},
	{"a.example.com\x7f", 1, 14, "control character in line"},
};

TEST(invalid_entries_name_line_column_and_reason)
{
	for (size_t i = 0; i < ELEMENTSOF(invalid_cases); i++) {
		const struct invalid_case *c = &invalid_cases[i];
		struct allowlist al = {0};
		struct parse_error err = {0};
		int r = parse_str(&al, c->text, &err);

		if (r != -EINVAL || err.line != c->line || err.column != c->column ||
		    !err.message || strcmp(err.message, c->message) != 0)
			printf("# case %zu '%s': r=%d %u:%u '%s'\n", i, c->text, r, err.line,
			       err.column, err.message ? err.message : "(null)");
		EXPECT_ERR(r, EINVAL);
		EXPECT_STREQ(err.file, "test");
		EXPECT_EQ(err.line, c->line);
		EXPECT_EQ(err.column, c->column);
		EXPECT_STREQ(err.message, c->message);
		EXPECT_EQ(err.bundle[0], 0);
		EXPECT_EQ(al.n, 0);
		allowlist_free(&al);
	}
}

TEST(nul_byte_is_refused)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	const char text[] = "a.example.com\nb.exa\0mple.com\n";

	ASSERT_ERR(allowlist_parse(&al, "f", text, sizeof(text) - 1, NULL, NULL, &err), EINVAL);
	EXPECT_EQ(err.line, 2);
	EXPECT_EQ(err.column, 6);
	EXPECT_STREQ(err.message, "NUL byte in line");
	EXPECT_EQ(al.n, 0);
	/* the text is used only up to len: a NUL after it is never seen */
	ASSERT_OK(allowlist_parse(&al, "f", text, 14, NULL, NULL, &err));
	EXPECT_EQ(al.n, 1);
	allowlist_free(&al);
}

TEST(error_keeps_previous_entries_and_output_untouched_on_success)
{
	struct allowlist al = {0};
	struct parse_error err = {.line = 77, .column = 88, .message = "sentinel"};

	ASSERT_OK(parse_str(&al, "a.example.com\n", &err));
	EXPECT_EQ(err.line, 77);
	EXPECT_STREQ(err.message, "sentinel");
	ASSERT_EQ(al.n, 1);
	ASSERT_ERR(allowlist_parse(&al, "second", "b.example.com\nc.example.com\nbad..x\n",
				   strlen("b.example.com\nc.example.com\nbad..x\n"), NULL, NULL, &err),
		   EINVAL);
	EXPECT_STREQ(err.file, "second");
	EXPECT_EQ(err.line, 3);
	ASSERT_EQ(al.n, 1);
	EXPECT_STREQ(al.entries[0].name, "a.example.com");
	EXPECT_EQ(al.n_sources, 1); /* "second" was released again */
	ASSERT_EQ(parse_str(&al, "x..y", NULL), -EINVAL); /* NULL reterr is fine */
	allowlist_free(&al);
	EXPECT_EQ(al.n, 0);
	EXPECT_NULL_(al.entries);
	allowlist_free(NULL);
}

TEST(duplicates_are_merged_keeping_the_first)
{
	struct allowlist al = {0};

	ASSERT_OK(parse_str(&al, "example.com\nEXAMPLE.com.\n.example.com\n*.example.com\n"
				 "example.com:443\nexample.com:80\n198.51.100.1\n198.51.100.1/32\n"
				 "198.51.100.1:443\n[2001:db8::1]:443\n2001:db8::1\n2001:db8:0::1/128\n",
			     NULL));
	ASSERT_EQ(al.n, 5);
	EXPECT_STREQ(fmt(&al.entries[0]), "example.com");
	EXPECT_EQ(al.entries[0].line, 1);
	EXPECT_STREQ(fmt(&al.entries[1]), ".example.com");
	EXPECT_EQ(al.entries[1].line, 3);
	EXPECT_STREQ(fmt(&al.entries[2]), "example.com:80");
	EXPECT_STREQ(fmt(&al.entries[3]), "198.51.100.1");
	EXPECT_STREQ(fmt(&al.entries[4]), "2001:db8::1");
	/* across calls and sources too */
	ASSERT_OK(allowlist_parse(&al, "other", "example.com\nnew.example.com\n", 28, NULL, NULL,
				  NULL));
	ASSERT_EQ(al.n, 6);
	EXPECT_STREQ(al.entries[5].source, "other");
	allowlist_free(&al);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memset(s, c, n);
	s[n] = 0;
	return s;
}

TEST(limit_label_length)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char line[ALLOWLIST_MAX_LINE];
	char *l63 = repeat('a', 63), *l64 = repeat('b', 64);

	(void)snprintf(line, sizeof(line), "%s.example.com", l63);
	ASSERT_OK(parse_str(&al, line, &err));
	(void)snprintf(line, sizeof(line), "x.%s.example.com", l64);
	ASSERT_ERR(parse_str(&al, line, &err), EINVAL);
	EXPECT_EQ(err.column, 3);
	EXPECT_STREQ(err.message, "label longer than 63 characters");
	(void)snprintf(line, sizeof(line), "x.%s", l64); /* last label */
	ASSERT_ERR(parse_str(&al, line, &err), EINVAL);
	EXPECT_EQ(err.column, 3);
	EXPECT_EQ(al.n, 1);
	free(l63);
	free(l64);
	allowlist_free(&al);
}

/* A name of exactly n bytes made of 63-byte labels. */
static void make_name(char *buf, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t label = n - i > 63 ? 63 : n - i;

		memset(buf + i, 'a', label);
		i += label;
		if (i < n) {
			buf[i] = '.';
			i++;
		}
	}
	buf[n] = 0;
}

TEST(limit_name_length)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char name[ALLOWLIST_MAX_NAME + 16], line[ALLOWLIST_MAX_NAME + 32];

	make_name(name, 253);
	ASSERT_EQ(strlen(name), 253);
	ASSERT_OK(parse_str(&al, name, &err));
	EXPECT_EQ(strlen(al.entries[0].name), 253);
	EXPECT_TRUE(allowlist_match_name(&al, name) != NULL);
	(void)snprintf(line, sizeof(line), "%s.", name); /* trailing dot does not count */
	ASSERT_OK(parse_str(&al, line, &err));
	(void)snprintf(line, sizeof(line), "*.%s.", name);
	ASSERT_OK(parse_str(&al, line, &err));
	ASSERT_EQ(al.n, 2);
	make_name(name, 254);
	ASSERT_ERR(parse_str(&al, name, &err), EINVAL);
	EXPECT_EQ(err.column, 1);
	EXPECT_STREQ(err.message, "name longer than 253 characters");
	(void)snprintf(line, sizeof(line), ".%s", name);
	ASSERT_ERR(parse_str(&al, line, &err), EINVAL);
	EXPECT_EQ(err.column, 2);
	EXPECT_STREQ(err.message, "name longer than 253 characters");
	/* matching refuses over-long query names instead of reading past them */
	EXPECT_NULL_(allowlist_match_name(&al, name));
	allowlist_free(&al);
}

TEST(limit_line_length)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char *line = repeat(' ', ALLOWLIST_MAX_LINE + 1);

	memcpy(line, "a.example.com", 13);
	line[13] = ' ';
	line[14] = '#';
	line[ALLOWLIST_MAX_LINE] = 0; /* exactly 512 bytes */
	ASSERT_OK(parse_str(&al, line, &err));
	line[ALLOWLIST_MAX_LINE] = 'x'; /* 513 */
	ASSERT_ERR(parse_str(&al, line, &err), EINVAL);
	EXPECT_EQ(err.line, 1);
	EXPECT_EQ(err.column, ALLOWLIST_MAX_LINE + 1);
	EXPECT_STREQ(err.message, "line longer than 512 bytes");
	/* 512 bytes plus CR LF is still fine: the CR does not count */
	{
		char *crlf = malloc(ALLOWLIST_MAX_LINE + 4);

		ASSERT_NOT_NULL(crlf);
		memcpy(crlf, line, ALLOWLIST_MAX_LINE);
		memcpy(crlf + ALLOWLIST_MAX_LINE, "\r\n", 3);
		ASSERT_OK(parse_str(&al, crlf, &err));
		memcpy(crlf + ALLOWLIST_MAX_LINE, "x\r\n", 4);
		ASSERT_ERR(parse_str(&al, crlf, &err), EINVAL);
		EXPECT_EQ(err.column, ALLOWLIST_MAX_LINE + 1);
		free(crlf);
	}
	EXPECT_EQ(al.n, 1);
	free(line);
	allowlist_free(&al);
}

TEST(limit_entry_count)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	size_t size = (size_t)(ALLOWLIST_MAX_ENTRIES + 2) * 24, len = 0;
	char *text = malloc(size);

	ASSERT_NOT_NULL(text);
	for (unsigned i = 0; i < ALLOWLIST_MAX_ENTRIES; i++)
		len += (size_t)snprintf(text + len, size - len, "h%u.example.com\n", i);
	/* duplicates do not count towards the limit */
	len += (size_t)snprintf(text + len, size - len, "h0.example.com\n");
	ASSERT_OK(allowlist_parse(&al, "big", text, len, NULL, NULL, &err));
	ASSERT_EQ(al.n, ALLOWLIST_MAX_ENTRIES);
	ASSERT_ERR(parse_str(&al, "one.more.example.com\n", &err), E2BIG);
	EXPECT_STREQ(err.message, "too many entries (limit 1024)");
	EXPECT_EQ(err.line, 1);
	EXPECT_EQ(al.n, ALLOWLIST_MAX_ENTRIES);
	ASSERT_ERR(allowlist_parse_extra(&al, "x.example.com", NULL, NULL, &err), E2BIG);
	allowlist_free(&al);

	/* 1025 in one text: the whole call fails, nothing is kept */
	len += (size_t)snprintf(text + len, size - len, "h%u.example.com\n", 99999u);
	ASSERT_ERR(allowlist_parse(&al, "big", text, len, NULL, NULL, &err), E2BIG);
	EXPECT_EQ(err.line, ALLOWLIST_MAX_ENTRIES + 2);
	EXPECT_EQ(al.n, 0);
	free(text);
	allowlist_free(&al);
}

static int parse_with_bundles(struct allowlist *al, const char *text, int *calls,
			      struct parse_error *err)
{
	return allowlist_parse(al, "main", text, strlen(text), lookup_bundle, calls, err);
}

TEST(bundles_are_included_with_their_own_source)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	int calls = 0;

	ASSERT_OK(parse_with_bundles(&al, "first.example.com\n  @github  # vcs\n@npm\n@empty\n",
				     &calls, &err));
	EXPECT_EQ(calls, 3);
	ASSERT_EQ(al.n, 5);
	EXPECT_STREQ(al.entries[0].source, "main");
	EXPECT_STREQ(al.entries[1].name, "github.com");
	EXPECT_STREQ(al.entries[1].source, "@github");
	EXPECT_EQ(al.entries[1].line, 1);
	EXPECT_EQ(al.entries[2].kind, ALLOWLIST_NAME_SUFFIX);
	EXPECT_EQ(al.entries[2].line, 2);
	EXPECT_STREQ(al.entries[3].name, "api.github.com");
	EXPECT_EQ(al.entries[3].line, 3);
	EXPECT_STREQ(al.entries[4].source, "@npm");
	/* a second include, or a bundle repeating entries, adds nothing */
	ASSERT_OK(parse_with_bundles(&al, "@github\n@dup\n", &calls, &err));
	EXPECT_EQ(al.n, 5);
	allowlist_free(&al);
}

TEST(bundle_errors)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char text[ALLOWLIST_MAX_ERROR_TEXT];

	ASSERT_ERR(parse_with_bundles(&al, "a.example.com\n@nosuch\n", NULL, &err), EINVAL);
	EXPECT_STREQ(err.file, "main");
	EXPECT_EQ(err.line, 2);
	EXPECT_EQ(err.column, 1);
	EXPECT_STREQ(err.message, "unknown bundle");
	EXPECT_EQ(al.n, 0);

	ASSERT_ERR(parse_with_bundles(&al, "a.example.com\n\t@nested\n", NULL, &err), EINVAL);
	EXPECT_EQ(err.line, 2);
	EXPECT_EQ(err.column, 2);
	EXPECT_STREQ(err.message, "a bundle cannot include another bundle");
	EXPECT_STREQ(err.bundle, "nested");
	EXPECT_EQ(err.bundle_line, 2);
	EXPECT_EQ(err.bundle_column, 1);
	EXPECT_EQ(al.n, 0);
	EXPECT_STREQ(allowlist_format_error(&err, text, sizeof(text)),
		     "main:2:2: in @nested line 2 column 1: a bundle cannot include another bundle");

	ASSERT_ERR(parse_with_bundles(&al, "@bad\n", NULL, &err), EINVAL);
	EXPECT_EQ(err.line, 1);
	EXPECT_STREQ(err.message, "label ends with a hyphen");
	EXPECT_STREQ(err.bundle, "bad");
	EXPECT_EQ(err.bundle_line, 3);
	EXPECT_EQ(err.bundle_column, 4);
	EXPECT_EQ(al.n, 0);
	EXPECT_EQ(al.n_sources, 0); /* "@bad" and "main" released */

	ASSERT_ERR(parse_with_bundles(&al, "@ioerror\n", NULL, &err), EIO);
	EXPECT_STREQ(err.message, "cannot read bundle");

	/* an error after a successful bundle undoes the bundle's entries too */
	ASSERT_ERR(parse_with_bundles(&al, "@github\nx..y\n", NULL, &err), EINVAL);
	EXPECT_EQ(err.bundle[0], 0);
	EXPECT_EQ(al.n, 0);
	EXPECT_STREQ(allowlist_format_error(&err, text, sizeof(text)),
		     "main:2:3: empty label in name");
	EXPECT_STREQ(allowlist_format_error(&err, text, 6), "main:");
	allowlist_free(&al);
}

TEST(limit_bundle_name_and_extra_entry_length)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char line[ALLOWLIST_MAX_LINE + 8];
	char *name;

	/* 32 characters: a valid name, just not a known bundle */
	(void)snprintf(line, sizeof(line), "@%s", "abcdefghijklmnopqrstuvwxyz012345");
	ASSERT_ERR(allowlist_parse(&al, "t", line, strlen(line), lookup_bundle, NULL, &err), EINVAL);
	EXPECT_STREQ(err.message, "unknown bundle");
	/* an EXTRA entry of exactly 512 bytes is parsed (and fails as a name) */
	name = repeat('a', ALLOWLIST_MAX_LINE);
	ASSERT_ERR(allowlist_parse_extra(&al, name, NULL, NULL, &err), EINVAL);
	EXPECT_STREQ(err.message, "name longer than 253 characters");
	free(name);
	EXPECT_EQ(al.n, 0);
}

TEST(extra_allowed_domains)
{
	struct allowlist al = {0};
	struct parse_error err = {0};

	ASSERT_OK(allowlist_parse_extra(&al, NULL, NULL, NULL, &err));
	ASSERT_OK(allowlist_parse_extra(&al, "", NULL, NULL, &err));
	ASSERT_OK(allowlist_parse_extra(&al, " ,, \t", NULL, NULL, &err));
	EXPECT_EQ(al.n, 0);
	ASSERT_OK(allowlist_parse_extra(&al,
					"a.example.com,b.example.com  .c.example.com ,\t"
					"198.51.100.9:22,[2001:db8::9]:8443 , @npm,",
					lookup_bundle, NULL, &err));
	ASSERT_EQ(al.n, 6);
	EXPECT_STREQ(al.entries[0].name, "a.example.com");
	EXPECT_STREQ(al.entries[0].source, "EXTRA_ALLOWED_DOMAINS");
	EXPECT_EQ(al.entries[0].line, 1);
	EXPECT_EQ(al.entries[2].kind, ALLOWLIST_NAME_SUFFIX);
	EXPECT_EQ(al.entries[2].line, 3);
	EXPECT_STREQ(fmt(&al.entries[3]), "198.51.100.9:22");
	EXPECT_STREQ(fmt(&al.entries[4]), "[2001:db8::9]:8443");
	EXPECT_STREQ(al.entries[5].source, "@npm");

	/* errors: the ordinal of the entry as line, the byte offset as column */
	ASSERT_ERR(allowlist_parse_extra(&al, "ok.example.com, bad..example.com", NULL, NULL, &err),
		   EINVAL);
	EXPECT_STREQ(err.file, "EXTRA_ALLOWED_DOMAINS");
	EXPECT_EQ(err.line, 2);
	EXPECT_EQ(err.column, 21);
	EXPECT_STREQ(err.message, "empty label in name");
	EXPECT_EQ(al.n, 6);
	ASSERT_ERR(allowlist_parse_extra(&al, "a.example.com#x", NULL, NULL, &err), EINVAL);
	EXPECT_EQ(err.column, 14);
	ASSERT_ERR(allowlist_parse_extra(&al, "a.example.com;b.example.com", NULL, NULL, &err),
		   EINVAL);
	EXPECT_EQ(err.column, 14);
	ASSERT_ERR(allowlist_parse_extra(&al, "x.example.com @nope", lookup_bundle, NULL, &err),
		   EINVAL);
	EXPECT_STREQ(err.message, "unknown bundle");
	EXPECT_EQ(err.line, 2);
	EXPECT_EQ(err.column, 15);
	ASSERT_ERR(allowlist_parse_extra(&al, "a.example.com\x01", NULL, NULL, &err), EINVAL);
	EXPECT_STREQ(err.message, "control character in entry");
	{
		char *big = repeat('a', ALLOWLIST_MAX_LINE + 1);

		ASSERT_ERR(allowlist_parse_extra(&al, big, NULL, NULL, &err), EINVAL);
		EXPECT_STREQ(err.message, "entry longer than 512 bytes");
		free(big);
	}
	EXPECT_EQ(al.n, 6);
	allowlist_free(&al);
}

TEST(match_names_exact_suffix_label_boundary_and_case)
{
	struct allowlist al = {0};
	const struct allowlist_entry *e;

	ASSERT_OK(parse_str(&al, "api.example.com\n.example.org\n*.cdn.example.net\n", NULL));
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "api.example.com"));
	EXPECT_TRUE(allowlist_match_name(&al, "API.Example.COM") == &al.entries[0]);
	EXPECT_TRUE(allowlist_match_name(&al, "api.example.com.") == &al.entries[0]);
	EXPECT_NULL_(allowlist_match_name(&al, "x.api.example.com"));
	EXPECT_NULL_(allowlist_match_name(&al, "example.com"));
	EXPECT_NULL_(allowlist_match_name(&al, "api.example.com.evil"));
	EXPECT_NULL_(allowlist_match_name(&al, "api.example.com.."));
	EXPECT_NULL_(allowlist_match_name(&al, "a.example.org.."));
	EXPECT_NULL_(allowlist_match_name(&al, "example.org.."));
	EXPECT_NULL_(allowlist_match_name(&al, "xapi.example.com"));

	EXPECT_TRUE(allowlist_match_name(&al, "example.org") == &al.entries[1]);
	EXPECT_TRUE(allowlist_match_name(&al, "a.b.c.Example.Org.") == &al.entries[1]);
	EXPECT_TRUE(allowlist_match_name(&al, "_dmarc.example.org") == &al.entries[1]);
	EXPECT_NULL_(allowlist_match_name(&al, "badexample.org"));
	EXPECT_NULL_(allowlist_match_name(&al, "example.org.evil.com"));
	EXPECT_NULL_(allowlist_match_name(&al, ".example.org"));
	EXPECT_NULL_(allowlist_match_name(&al, "a..example.org"));
	EXPECT_NULL_(allowlist_match_name(&al, "a\\.example.org"));
	EXPECT_NULL_(allowlist_match_name(&al, "a b.example.org"));
	EXPECT_NULL_(allowlist_match_name(&al, "xample.org"));
	EXPECT_NULL_(allowlist_match_name(&al, "org"));

	EXPECT_TRUE(allowlist_match_name(&al, "cdn.example.net") == &al.entries[2]);
	EXPECT_TRUE(allowlist_match_name(&al, "x.cdn.example.net") == &al.entries[2]);
	EXPECT_NULL_(allowlist_match_name(&al, "example.net"));
	EXPECT_NULL_(allowlist_match_name(&al, "xcdn.example.net"));

	EXPECT_NULL_(allowlist_match_name(&al, ""));
	EXPECT_NULL_(allowlist_match_name(&al, "."));
	EXPECT_NULL_(allowlist_match_name(&al, NULL));
	EXPECT_NULL_(allowlist_match_name(NULL, "api.example.com"));
	e = allowlist_match_name(&al, "api.example.com");
	EXPECT_NULL_(allowlist_match_name_next(&al, "api.example.com", e));
	allowlist_free(&al);
}

TEST(match_every_entry_with_its_ports)
{
	struct allowlist al = {0};
	const struct allowlist_entry *e;
	unsigned seen = 0;

	ASSERT_OK(parse_str(&al, "example.com\n198.51.100.1\n.example.com:22\nexample.com:8000-8010\n"
				 ".other.com\n",
			     NULL));
	for (e = allowlist_match_name(&al, "example.com"); e;
	     e = allowlist_match_name_next(&al, "example.com", e))
		seen |= 1u << (e - al.entries);
	EXPECT_EQ(seen, 0x1 | 0x4 | 0x8);
	seen = 0;
	for (e = allowlist_match_name(&al, "git.example.com"); e;
	     e = allowlist_match_name_next(&al, "git.example.com", e))
		seen |= 1u << (e - al.entries);
	EXPECT_EQ(seen, 0x4);
	allowlist_free(&al);
}

static bool contains(const struct allowlist *al, const char *text)
{
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} a;
	int family = strchr(text, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(family, text, &a) != 1)
		abort();
	return allowlist_contains_addr(al, family, &a);
}

TEST(contains_addresses_and_cidrs)
{
	struct allowlist al = {0};

	ASSERT_FALSE(contains(&al, "198.51.100.1"));
	ASSERT_OK(parse_str(&al, "example.com\n198.51.100.7\n10.0.0.0/8 special\n172.16.0.0/12:22 special\n"
				 "2001:db8::1\n2001:db8:1::/48\n2001:db8:2::/63\n",
			     NULL));
	EXPECT_TRUE(contains(&al, "198.51.100.7"));
	EXPECT_FALSE(contains(&al, "198.51.100.8"));
	EXPECT_TRUE(contains(&al, "10.255.1.2"));
	EXPECT_FALSE(contains(&al, "11.0.0.0"));
	EXPECT_TRUE(contains(&al, "172.31.255.255"));
	EXPECT_FALSE(contains(&al, "172.32.0.0"));
	EXPECT_FALSE(contains(&al, "172.15.255.255"));
	EXPECT_TRUE(contains(&al, "2001:db8::1"));
	EXPECT_FALSE(contains(&al, "2001:db8::2"));
	EXPECT_TRUE(contains(&al, "2001:db8:1:ffff::5"));
	EXPECT_FALSE(contains(&al, "2001:db8:2:2::"));
	EXPECT_TRUE(contains(&al, "2001:db8:2:1::"));
	EXPECT_FALSE(contains(&al, "::ffff:198.51.100.7")); /* families never mix */
	EXPECT_FALSE(allowlist_contains_addr(&al, AF_UNIX, "x"));
	EXPECT_FALSE(allowlist_contains_addr(&al, AF_INET, NULL));
	allowlist_free(&al);

	/* Everything-entries no longer exist; a marked metadata address is
	 * contained (the rebinding filter then lets it through). */
	ASSERT_ERR(parse_str(&al, "0.0.0.0/0\n", NULL), EINVAL);
	ASSERT_ERR(parse_str(&al, "::/0\n", NULL), EINVAL);
	ASSERT_OK(parse_str(&al, "169.254.169.254:80 special\n[fd00:ec2::254]:80 special\n", NULL));
	EXPECT_TRUE(contains(&al, "169.254.169.254"));
	EXPECT_TRUE(contains(&al, "fd00:ec2::254"));
	EXPECT_FALSE(contains(&al, "169.254.169.253"));
	EXPECT_TRUE(al.entries[0].special);
	EXPECT_EQ(al.entries[0].addr_class, NETADDR_METADATA);
	allowlist_free(&al);
}

/* Issue 10 item 4: width, special-purpose ranges, public suffixes. */
struct refusal_case {
	const char *text;
	unsigned column;
	const char *message;
};

static const struct refusal_case refusals[] = {
	{"0.0.0.0/0", 9, "prefix wider than /8 (list the networks you need)"},
	{"0.0.0.0", 1, "0.0.0.0/8 is not a destination"},
	{"0.0.0.0/8", 1, "0.0.0.0/8 is not a destination"},
	{"0.1.2.3:80", 1, "0.0.0.0/8 is not a destination"},
	{"128.0.0.0/1", 11, "prefix wider than /8 (list the networks you need)"},
	{"8.0.0.0/7", 9, "prefix wider than /8 (list the networks you need)"},
	{"::/0", 4, "prefix wider than /32 (list the networks you need)"},
	{"2000::/3", 8, "prefix wider than /32 (list the networks you need)"},
	{"2001:db8::/31", 12, "prefix wider than /32 (list the networks you need)"},
	{"::", 1, ":: is not a destination"},
	{"[::]:80", 2, ":: is not a destination"},
	{"127.0.0.1:8080", 1, "loopback range: add the marker 'special' after the entry to open it"},
	{"::1", 1, "loopback range: add the marker 'special' after the entry to open it"},
	{"169.254.169.254:80", 1, "cloud metadata address range: add the marker 'special' after the entry to open it"},
	{"169.254.0.0/16", 1, "cloud metadata address range: add the marker 'special' after the entry to open it"},
	{"169.254.1.1", 1, "link-local range: add the marker 'special' after the entry to open it"},
	{"100.100.100.200", 1, "cloud metadata address range: add the marker 'special' after the entry to open it"},
	{"fd00:ec2::254", 1, "cloud metadata address range: add the marker 'special' after the entry to open it"},
	{"10.0.0.0/8", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"10.1.2.3:5432", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"172.16.0.0/12", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"172.0.0.0/8", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"192.168.1.0/24", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"100.64.0.0/16", 1, "shared CGNAT range (100.64.0.0/10): add the marker 'special' after the entry to open it"},
	/* 100.64.0.0/10 holds Alibaba's metadata address 100.100.100.200 */
	{"100.64.0.0/10", 1, "cloud metadata address range: add the marker 'special' after the entry to open it"},
	/* a /8 holding metadata is refused as metadata (first match) */
	{"100.0.0.0/8", 1, "cloud metadata address range: add the marker 'special' after the entry to open it"},
	{"fd12:3456::/32", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"fe80::1", 1, "link-local range: add the marker 'special' after the entry to open it"},
	{"::ffff:10.0.0.1", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"::ffff:0.0.0.0/96", 1, "cloud metadata address range: add the marker 'special' after the entry to open it"},
	{"2002:a00::/32", 1, "private range (RFC 1918, ULA): add the marker 'special' after the entry to open it"},
	{"224.0.0.0/8", 1, "multicast range: add the marker 'special' after the entry to open it"},
	{"255.255.255.255", 1, "broadcast address: add the marker 'special' after the entry to open it"},
	/* the marker on anything else */
	{"example.com special", 1, "the marker 'special' is for address entries only"},
	{".example.com:22 special", 1, "the marker 'special' is for address entries only"},
	{"@github special", 1, "the marker 'special' applies to one address entry, not a bundle"},
	{"10.0.0.1 special extra", 10, "unexpected text after entry (one entry per line)"},
	{"10.0.0.1 Special", 10, "unexpected text after entry (one entry per line)"},
	/* public suffixes */
	{".co.uk", 1, "suffix is a public suffix (Public Suffix List): anyone can register names below it; list the names you need"},
	{"*.github.io", 1, "suffix is a public suffix (Public Suffix List): anyone can register names below it; list the names you need"},
	{".s3.amazonaws.com", 1, "suffix is a public suffix (Public Suffix List): anyone can register names below it; list the names you need"},
	{".githubusercontent.com:80", 1, "suffix is a public suffix (Public Suffix List): anyone can register names below it; list the names you need"},
};

TEST(refused_ranges_markers_and_public_suffixes)
{
	for (size_t i = 0; i < ELEMENTSOF(refusals); i++) {
		const struct refusal_case *c = &refusals[i];
		struct allowlist al = {0};
		struct parse_error err = {0};
		int r = allowlist_parse(&al, "test", c->text, strlen(c->text), lookup_bundle, NULL, &err);

		if (r >= 0 || !err.message || strcmp(err.message, c->message) != 0 || err.column != c->column)
			printf("# case '%s': r=%d %u:%u '%s'\n", c->text, r, err.line, err.column,
			       err.message ? err.message : "");
		EXPECT_ERR(r, EINVAL);
		EXPECT_STREQ(err.message, c->message);
		EXPECT_EQ(err.column, c->column);
		EXPECT_EQ(al.n, 0);
		allowlist_free(&al);
	}
}

TEST(special_ranges_never_from_extra_or_bundles)
{
	static const struct bundle_def b = {"x", "10.0.0.1 special\n"};
	struct allowlist al = {0};
	struct parse_error err = {0};

	(void)b;
	ASSERT_ERR(allowlist_parse_extra(&al, "example.com 10.0.0.0/8", NULL, NULL, &err), EINVAL);
	EXPECT_STREQ(err.message, "private range (RFC 1918, ULA): only the allowlist file can open it (marker 'special')");
	EXPECT_EQ(err.line, 2);
	/* In EXTRA_ALLOWED_DOMAINS "special" is just another token (a name). */
	ASSERT_ERR(allowlist_parse_extra(&al, "169.254.169.254:80 special", NULL, NULL, &err), EINVAL);
	EXPECT_STREQ(err.message,
		     "cloud metadata address range: only the allowlist file can open it (marker 'special')");
	ASSERT_ERR(allowlist_parse_extra(&al, "0.0.0.0/0", NULL, NULL, &err), EINVAL);
	ASSERT_ERR(allowlist_parse_extra(&al, "::/0", NULL, NULL, &err), EINVAL);
	ASSERT_ERR(allowlist_parse_extra(&al, ".co.uk", NULL, NULL, &err), EINVAL);
	ASSERT_ERR(allowlist_parse_extra(&al, "*.github.io", NULL, NULL, &err), EINVAL);
	EXPECT_EQ(al.n, 0);
	/* public entries still work there */
	ASSERT_OK(allowlist_parse_extra(&al, "198.51.100.0/24,.example.com\tfoo.github.io", NULL, NULL, &err));
	EXPECT_EQ(al.n, 3);
	allowlist_free(&al);
}

TEST(public_suffix_list_answers)
{
	EXPECT_TRUE(allowlist_suffix_is_public("co.uk"));
	EXPECT_TRUE(allowlist_suffix_is_public("github.io"));
	EXPECT_TRUE(allowlist_suffix_is_public("s3.amazonaws.com"));
	EXPECT_FALSE(allowlist_suffix_is_public("example.com"));
	EXPECT_FALSE(allowlist_suffix_is_public("opencode.ai"));
	EXPECT_FALSE(allowlist_suffix_is_public("foo.github.io"));
}

/* Review of issue 10: a suffix entry that is not itself a public suffix
 * may still lie above one (".amazonaws.com" holds "s3.amazonaws.com" and
 * "*.compute.amazonaws.com"): a name registered below that inner suffix
 * belongs to anyone and must not match, whatever its case. */
TEST(suffix_entry_never_admits_names_below_an_inner_public_suffix)
{
	struct allowlist al = {0};

	ASSERT_OK(parse_str(&al, ".amazonaws.com\n.example.com\n", NULL));
	EXPECT_TRUE(allowlist_match_name(&al, "amazonaws.com") != NULL);
	EXPECT_TRUE(allowlist_match_name(&al, "sts.amazonaws.com") != NULL);
	EXPECT_TRUE(allowlist_match_name(&al, "s3.amazonaws.com") != NULL); /* the operator's own name */
	EXPECT_TRUE(allowlist_match_name(&al, "attacker-bucket.s3.amazonaws.com") == NULL);
	EXPECT_TRUE(allowlist_match_name(&al, "Attacker-Bucket.S3.AmazonAWS.com.") == NULL);
	EXPECT_TRUE(allowlist_match_name(&al, "a.b.s3.amazonaws.com") == NULL);
	EXPECT_TRUE(allowlist_match_name(&al, "x.y.compute.amazonaws.com") == NULL);
	EXPECT_TRUE(allowlist_match_name(&al, "y.compute.amazonaws.com") == NULL); /* below compute.amazonaws.com */
	EXPECT_TRUE(allowlist_match_name(&al, "a.b.c.example.com") != NULL);
	EXPECT_TRUE(allowlist_match_name(&al, "A.B.Example.COM") != NULL);
	allowlist_free(&al);
}

TEST(format_of_every_kind)
{
	struct allowlist_entry e = {.kind = ALLOWLIST_KIND_MAX};
	char buf[4];

	EXPECT_STREQ(fmt(&e), "?");
	e.kind = ALLOWLIST_NAME_SUFFIX;
	memcpy(e.name, "example.com", 12);
	e.port_lo = e.port_hi = 443;
	EXPECT_STREQ(allowlist_entry_format(&e, buf, sizeof(buf)), ".ex");
}

/* Shipped data files: the default allowlist and every bundle parse, and the
 * default includes @anthropic. */
static char *read_all(const char *path, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	ssize_t n;
	size_t len = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(MAX_TEST_FILE);
	if (!buf)
		abort();
	while ((n = read(fd, buf + len, MAX_TEST_FILE - len)) > 0)
		len += (size_t)n;
	close(fd);
	*ret_len = len;
	return buf;
}

static int dir_bundle(void *userdata, const char *name, const char **ret_text, size_t *ret_len)
{
	char path[4096];
	static char *held[64];
	static size_t n_held;
	char *text;

	(void)snprintf(path, sizeof(path), "%s/%s", (const char *)userdata, name);
	text = read_all(path, ret_len);
	if (!text)
		return -errno;
	if (n_held < ELEMENTSOF(held))
		held[n_held++] = text;
	*ret_text = text;
	return 0;
}

#ifdef SHIPPED_ALLOWLIST
TEST(shipped_allowlist_and_bundles_parse)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char msg[ALLOWLIST_MAX_ERROR_TEXT];
	size_t len;
	char *text = read_all(SHIPPED_ALLOWLIST, &len);
	DIR *d;
	struct dirent *de;
	unsigned bundles = 0;

	ASSERT_NOT_NULL(text);
	if (allowlist_parse(&al, SHIPPED_ALLOWLIST, text, len, dir_bundle,
			    (void *)SHIPPED_BUNDLE_DIR, &err) < 0)
		printf("# %s\n", allowlist_format_error(&err, msg, sizeof(msg)));
	ASSERT_GT(al.n, 0);
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "api.anthropic.com"));
	EXPECT_NULL_(allowlist_match_name(&al, "github.com")); /* off by default */
	allowlist_free(&al);
	free(text);

	d = opendir(SHIPPED_BUNDLE_DIR);
	ASSERT_NOT_NULL(d);
	while ((de = readdir(d))) {
		char inc[sizeof(de->d_name) + 1];

		if (de->d_name[0] == '.')
			continue;
		(void)snprintf(inc, sizeof(inc), "@%s", de->d_name);
		if (allowlist_parse_extra(&al, inc, dir_bundle, (void *)SHIPPED_BUNDLE_DIR,
					  &err) < 0)
			printf("# %s\n", allowlist_format_error(&err, msg, sizeof(msg)));
		EXPECT_EQ(err.message, NULL);
		bundles++;
	}
	closedir(d);
	EXPECT_GE_(bundles, 5);
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "github.com"));
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "registry.npmjs.org"));
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "files.pythonhosted.org"));
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "opencode.ai"));
	allowlist_free(&al);
}
#endif
