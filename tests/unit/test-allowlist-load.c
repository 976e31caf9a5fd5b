/* SPDX-License-Identifier: MIT */
/* firewall/allowlist_load.c: files, bundles from a directory, the
 * environment, size caps, non-regular files, --check output. Runs in a
 * private temporary directory, no root needed. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "allowlist_load.h"
#include "log.h"
#include "macros.h"
#include "tap.h"

#define EXPECT_NULL_(p) EXPECT_TRUE((p) == NULL)
#define EXPECT_NOT_NULL_(p) EXPECT_TRUE((p) != NULL)

static char dir[] = "/tmp/test-allowlist-load.XXXXXX";
static char path[ALLOWLIST_MAX_PATH], bundles[ALLOWLIST_MAX_PATH];

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "we");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static void setup(const char *main_text)
{
	char p[ALLOWLIST_MAX_PATH + 64];

	if (!mkdtemp(dir))
		abort();
	(void)snprintf(path, sizeof(path), "%s/allowlist", dir);
	(void)snprintf(bundles, sizeof(bundles), "%s/bundles", dir);
	if (mkdir(bundles, 0755) < 0)
		abort();
	write_file(path, main_text);
	(void)snprintf(p, sizeof(p), "%s/github", bundles);
	write_file(p, "# gh\ngithub.com\napi.github.com\n");
	(void)snprintf(p, sizeof(p), "%s/npm", bundles);
	write_file(p, "registry.npmjs.org\n");
	(void)snprintf(p, sizeof(p), "%s/nest", bundles);
	write_file(p, "ok.example.com\n@npm\n");
	(void)snprintf(p, sizeof(p), "%s/broken", bundles);
	write_file(p, "fine.example.com\nno_underscores.example.com\n");
	log_set_level(LOG_LEVEL_ERROR);
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Called at the end of each test (a failed ASSERT leaves the directory). */
static void teardown(void)
{
	(void)nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *fmt_err(const struct parse_error *e)
{
	static char buf[ALLOWLIST_MAX_ERROR_TEXT];
	return allowlist_format_error(e, buf, sizeof(buf));
}

TEST(loads_file_bundles_and_extra)
{
	struct allowlist al = {0};
	struct parse_error err = {0};

	setup("first.example.com\n@github\n");
	ASSERT_OK(allowlist_load(&al, path, bundles, "extra.example.com, @npm @github", &err));
	ASSERT_EQ(al.n, 5);
	EXPECT_STREQ(al.entries[0].source, path);
	EXPECT_EQ(al.entries[0].line, 1);
	EXPECT_STREQ(al.entries[1].name, "github.com");
	EXPECT_STREQ(al.entries[1].source, "@github");
	EXPECT_EQ(al.entries[1].line, 2);
	EXPECT_STREQ(al.entries[3].source, "EXTRA_ALLOWED_DOMAINS");
	EXPECT_STREQ(al.entries[4].name, "registry.npmjs.org");
	EXPECT_STREQ(al.entries[4].source, "@npm");

	/* a second load replaces the list */
	ASSERT_OK(allowlist_load(&al, path, bundles, NULL, &err));
	EXPECT_EQ(al.n, 3);
	allowlist_free(&al);
	teardown();
}

TEST(errors_name_the_file_and_keep_the_old_list)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char missing[ALLOWLIST_MAX_PATH + 16];

	setup("a.example.com\n@nosuch\n");
	ASSERT_ERR(allowlist_load(&al, path, bundles, NULL, &err), EINVAL);
	EXPECT_STREQ(err.file, path);
	EXPECT_EQ(err.line, 2);
	EXPECT_STREQ(err.message, "unknown bundle");

	write_file(path, "a.example.com\n");
	ASSERT_OK(allowlist_load(&al, path, bundles, NULL, &err));
	ASSERT_EQ(al.n, 1);
	ASSERT_ERR(allowlist_load(&al, path, bundles, "ok.example.com bad..example.com", &err),
		   EINVAL);
	EXPECT_STREQ(err.file, "EXTRA_ALLOWED_DOMAINS");
	EXPECT_EQ(err.line, 2);
	EXPECT_EQ(al.n, 1); /* untouched */
	EXPECT_STREQ(al.entries[0].name, "a.example.com");

	ASSERT_ERR(allowlist_load(&al, path, bundles, "@nest", &err), EINVAL);
	EXPECT_STREQ(err.message, "a bundle cannot include another bundle");
	EXPECT_STREQ(err.bundle, "nest");
	EXPECT_EQ(err.bundle_line, 2);

	write_file(path, "@broken\n");
	ASSERT_ERR(allowlist_load(&al, path, bundles, NULL, &err), EINVAL);
	{
		char want[ALLOWLIST_MAX_PATH + 128];

		(void)snprintf(want, sizeof(want),
			       "%s:1:1: in @broken line 2 column 3: invalid character in name "
			       "(letters, digits, '-' and '.' only)",
			       path);
		EXPECT_STREQ(fmt_err(&err), want);
	}

	(void)snprintf(missing, sizeof(missing), "%s/nope", dir);
	ASSERT_ERR(allowlist_load(&al, missing, bundles, NULL, &err), ENOENT);
	EXPECT_STREQ(err.file, missing);
	EXPECT_EQ(err.line, 0);
	EXPECT_STREQ(err.message, "cannot open file");
	{
		char want[ALLOWLIST_MAX_PATH + 64];

		(void)snprintf(want, sizeof(want), "%s: cannot open file", missing);
		EXPECT_STREQ(fmt_err(&err), want);
	}
	EXPECT_EQ(al.n, 1);
	allowlist_free(&al);
	teardown();
}

TEST(missing_bundle_directory_means_unknown_bundles)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char nodir[ALLOWLIST_MAX_PATH + 16];

	setup("a.example.com\n");
	(void)snprintf(nodir, sizeof(nodir), "%s/no-bundles", dir);
	ASSERT_OK(allowlist_load(&al, path, nodir, NULL, &err));
	ASSERT_ERR(allowlist_load(&al, path, nodir, "@github", &err), EINVAL);
	EXPECT_STREQ(err.message, "unknown bundle");
	/* a bundle that is a directory is an error, not "unknown" */
	{
		char sub[ALLOWLIST_MAX_PATH + 16];

		(void)snprintf(sub, sizeof(sub), "%s/sub", bundles);
		ASSERT_EQ(mkdir(sub, 0755), 0);
		ASSERT_ERR(allowlist_load(&al, path, bundles, "@sub", &err), EISDIR);
		EXPECT_STREQ(err.message, "cannot read bundle");
	}
	allowlist_free(&al);
	teardown();
}

TEST(non_regular_files_are_refused_without_blocking)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char fifo[ALLOWLIST_MAX_PATH + 16];

	setup("a.example.com\n");
	ASSERT_ERR(allowlist_load(&al, dir, bundles, NULL, &err), EISDIR);
	EXPECT_STREQ(err.message, "not a regular file");
	(void)snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ASSERT_EQ(mkfifo(fifo, 0600), 0);
	ASSERT_ERR(allowlist_load(&al, fifo, bundles, NULL, &err), EINVAL);
	EXPECT_STREQ(err.message, "not a regular file");
	ASSERT_ERR(allowlist_load(&al, "/dev/null", bundles, NULL, &err), EINVAL);
	EXPECT_EQ(al.n, 0);
	teardown();
}

TEST(size_cap_at_and_past_the_limit)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char *big = malloc(ALLOWLIST_MAX_FILE + 2);
	char p[ALLOWLIST_MAX_PATH + 16];

	ASSERT_NOT_NULL(big);
	setup("");
	/* 256 KiB of comment lines of 256 bytes, then one entry at the very end */
	for (size_t i = 0; i < ALLOWLIST_MAX_FILE; i += 256) {
		memset(big + i, ' ', 256);
		big[i] = '#';
		big[i + 255] = '\n';
	}
	memcpy(big + ALLOWLIST_MAX_FILE - 15, "\nz.example.com\n", 15);
	big[ALLOWLIST_MAX_FILE] = 0;
	write_file(path, big);
	ASSERT_OK(allowlist_load(&al, path, bundles, NULL, &err));
	EXPECT_EQ(al.n, 1);
	big[ALLOWLIST_MAX_FILE] = '\n';
	big[ALLOWLIST_MAX_FILE + 1] = 0;
	write_file(path, big);
	ASSERT_ERR(allowlist_load(&al, path, bundles, NULL, &err), EFBIG);
	EXPECT_STREQ(err.message, "file larger than 256 KiB");
	EXPECT_EQ(al.n, 1);

	write_file(path, "@huge\n");
	(void)snprintf(p, sizeof(p), "%s/huge", bundles);
	write_file(p, big);
	ASSERT_ERR(allowlist_load(&al, path, bundles, NULL, &err), EFBIG);
	EXPECT_STREQ(err.message, "cannot read bundle");
	free(big);
	allowlist_free(&al);
	teardown();
}

TEST(config_form_reads_the_environment)
{
	struct allowlist al = {0};
	char used[ALLOWLIST_MAX_PATH], other[ALLOWLIST_MAX_PATH + 16];

	setup("env.example.com\n@npm\n");
	ASSERT_EQ(setenv("CODE_SANDBOX_ALLOWLIST", path, 1), 0);
	ASSERT_EQ(setenv("CODE_SANDBOX_BUNDLE_DIR", bundles, 1), 0);
	ASSERT_EQ(setenv("EXTRA_ALLOWED_DOMAINS", "x.example.com,@github", 1), 0);
	ASSERT_OK(allowlist_load_config(&al, NULL, used, sizeof(used)));
	EXPECT_STREQ(used, path);
	EXPECT_EQ(al.n, 5);
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "api.github.com"));

	/* --allowlist wins over the environment */
	(void)snprintf(other, sizeof(other), "%s/other", dir);
	write_file(other, "other.example.com\n");
	ASSERT_EQ(unsetenv("EXTRA_ALLOWED_DOMAINS"), 0);
	ASSERT_OK(allowlist_load_config(&al, other, used, sizeof(used)));
	EXPECT_STREQ(used, other);
	EXPECT_EQ(al.n, 1);

	ASSERT_EQ(setenv("EXTRA_ALLOWED_DOMAINS", "-bad.example.com", 1), 0);
	ASSERT_ERR(allowlist_load_config(&al, other, NULL, 0), EINVAL);
	EXPECT_EQ(al.n, 1);

	/* an empty variable means the default path */
	ASSERT_EQ(setenv("CODE_SANDBOX_ALLOWLIST", "", 1), 0);
	ASSERT_EQ(unsetenv("EXTRA_ALLOWED_DOMAINS"), 0);
	(void)allowlist_load_config(&al, NULL, used, sizeof(used));
	EXPECT_STREQ(used, ALLOWLIST_DEFAULT_PATH);
	allowlist_free(&al);
	teardown();
}

TEST(print_lists_entries_with_their_origin)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char *out = NULL;
	size_t out_len = 0;
	FILE *f;
	char want[6 * ALLOWLIST_MAX_PATH];

	setup("a.example.com # c\n*.b.example.com:8000-8100\n\n[2001:db8::1]:22\n"
	      "198.51.100.0/24\n@npm\n");
	ASSERT_OK(allowlist_load(&al, path, bundles, "c.example.com:80", &err));
	f = open_memstream(&out, &out_len);
	ASSERT_NOT_NULL(f);
	allowlist_print(f, &al);
	ASSERT_EQ(fclose(f), 0);
	(void)snprintf(want, sizeof(want),
		       "# allowlist: 6 entries (3 exact names, 1 suffixes, 2 addresses)\n"
		       "%-40s # %s:1\n%-40s # %s:2\n%-40s # %s:4\n%-40s # %s:5\n"
		       "%-40s # @npm:1\n%-40s # EXTRA_ALLOWED_DOMAINS:1\n",
		       "a.example.com", path, ".b.example.com:8000-8100", path,
		       "[2001:db8::1]:22", path, "198.51.100.0/24", path, "registry.npmjs.org",
		       "c.example.com:80");
	EXPECT_STREQ(out, want);
	free(out);
	allowlist_free(&al);
	teardown();
}

#ifdef SHIPPED_ALLOWLIST
TEST(shipped_files_load_with_every_bundle)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	int r = allowlist_load(&al, SHIPPED_ALLOWLIST, SHIPPED_BUNDLE_DIR,
			       "@github @npm @pypi @opencode", &err);

	if (r < 0)
		printf("# %s\n", fmt_err(&err));
	ASSERT_OK(r);
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "api.anthropic.com"));
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "codeload.github.com"));
	EXPECT_NOT_NULL_(allowlist_match_name(&al, "pypi.org"));
	EXPECT_NULL_(allowlist_match_name(&al, "example.com"));
	allowlist_free(&al);
}
#endif

/* The kernel's own text: a default route via 198.51.100.1 (printed as the
 * host-order number of the __be32, here for a little-endian machine) and
 * one via 2001:db8:ffff::1. */
static const char route_v4[] =
	"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
	"eth0\t00000000\t016433C6\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
	"eth0\t006433C6\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
static const char route_v6[] =
	"20010db8000000000000000000000000 20 00000000000000000000000000000000 00 "
	"00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
	"00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
	"20010db8ffff00000000000000000001 00000400 00000002 00000000 00000003     eth0\n";

TEST(gateways_parse)
{
	struct netaddr_gateway gw[4];
	size_t n = 0;
	char a[INET6_ADDRSTRLEN];
	uint32_t one = 1;

	if (*(const uint8_t *)&one != 1)
		SKIP("route text above is a little-endian machine's");
	EXPECT_EQ(netaddr_parse_gateways(AF_INET, route_v4, strlen(route_v4), gw, &n, 4), 1);
	EXPECT_EQ(netaddr_parse_gateways(AF_INET6, route_v6, strlen(route_v6), gw, &n, 4), 1);
	/* each once */
	EXPECT_EQ(netaddr_parse_gateways(AF_INET, route_v4, strlen(route_v4), gw, &n, 4), 0);
	ASSERT_EQ(n, 2);
	EXPECT_STREQ(inet_ntop(AF_INET, &gw[0].addr, a, sizeof(a)), "198.51.100.1");
	EXPECT_STREQ(inet_ntop(AF_INET6, &gw[1].addr, a, sizeof(a)), "2001:db8:ffff::1");
	EXPECT_EQ(netaddr_parse_gateways(AF_INET, "garbage\n\n", 9, gw, &n, 4), 0);
}

TEST(gateway_needs_the_marker)
{
	struct allowlist al = {0};
	struct parse_error err = {0};
	char r4[ALLOWLIST_MAX_PATH + 8], r6[ALLOWLIST_MAX_PATH + 8];
	uint32_t one = 1;

	if (*(const uint8_t *)&one != 1)
		SKIP("route text above is a little-endian machine's");
	setup("198.51.100.0/24\n");
	(void)snprintf(r4, sizeof(r4), "%s/route", dir);
	(void)snprintf(r6, sizeof(r6), "%s/route6", dir);
	write_file(r4, route_v4);
	write_file(r6, route_v6);
	ASSERT_OK(allowlist_load(&al, path, bundles, NULL, &err));
	EXPECT_ERR(allowlist_check_gateways(&al, r4, r6), EINVAL);
	allowlist_free(&al);
	/* The same entry with the marker, other entries, a missing file: fine. */
	write_file(path, "198.51.100.0/24 special\n198.51.101.0/24\n[2001:db8:fffe::/48]:22\n");
	ASSERT_OK(allowlist_load(&al, path, bundles, NULL, &err));
	EXPECT_OK(allowlist_check_gateways(&al, r4, r6));
	EXPECT_OK(allowlist_check_gateways(&al, "/nonexistent/route", NULL));
	allowlist_free(&al);
	write_file(path, "2001:db8:ffff::/48\n");
	ASSERT_OK(allowlist_load(&al, path, bundles, NULL, &err));
	EXPECT_ERR(allowlist_check_gateways(&al, r4, r6), EINVAL);
	allowlist_free(&al);
	teardown();
}
