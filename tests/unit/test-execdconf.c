/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "execdconf.h"
#include "macros.h"
#include "tap.h"
#include "wire.h"

static struct execdconf c;

static int parse(const char *text, struct execdconf_error *e)
{
	execdconf_done(&c);
	execdconf_init(&c);
	memset(e, 0, sizeof(*e));
	return execdconf_parse(&c, text, strlen(text), e);
}

TEST(full_config)
{
	static const char text[] = "# sandbox-execd\n"
				   "\n"
				   "backend = webhook\n"
				   "  webhook_url = https://approve.example/hook#frag  \n"
				   "webhook_token_file=/home/u/.config/cs/token\n"
				   "webhook_timeout_ms = 2500\r\n"
				   "audit_log = /home/u/audit.jsonl\n"
				   "socket = /run/user/1000/cs/execd.sock\n"
				   "tool git = /usr/bin/git\n"
				   "tool\tkubectl = /usr/local/bin/kubectl\n"
				   "map /workspace = /home/u/src/p\n"
				   "map /workspace/deps = /home/u/deps\n"
				   "max_concurrent = 10\n"
				   "max_concurrent_per_peer = 4\n"
				   "command_timeout_ms = 1000\n"
				   "max_frame = 65536\n";
	struct execdconf_error e;

	ASSERT_OK(parse(text, &e));
	ASSERT_OK(execdconf_validate(&c, &e));
	EXPECT_STREQ(c.backend, "webhook");
	EXPECT_STREQ(c.webhook_url, "https://approve.example/hook#frag");
	EXPECT_STREQ(c.webhook_token_file, "/home/u/.config/cs/token");
	EXPECT_EQ(c.webhook_timeout_ms, 2500);
	EXPECT_EQ(c.webhook_poll_ms, 1000); /* default */
	EXPECT_STREQ(c.audit_log, "/home/u/audit.jsonl");
	EXPECT_STREQ(c.socket, "/run/user/1000/cs/execd.sock");
	ASSERT_NULL(c.token_file);
	ASSERT_EQ(c.n_tools, 2);
	EXPECT_STREQ(execdconf_find_tool(&c, "kubectl")->path, "/usr/local/bin/kubectl");
	ASSERT_NULL(execdconf_find_tool(&c, "gh"));
	ASSERT_EQ(c.map.n, 2);
	EXPECT_STREQ(c.map.e[1].host, "/home/u/deps");
	EXPECT_EQ(c.max_concurrent, 10);
	EXPECT_EQ(c.max_concurrent_per_peer, 4);
	EXPECT_EQ(c.command_timeout_ms, 1000);
	EXPECT_EQ(c.max_frame, 65536);
	execdconf_done(&c);
}

TEST(errors_name_the_line)
{
	static const struct {
		const char *text;
		unsigned line;
		const char *needle;
	} cases[] = {
		{ "backend = static\nfrobnicate = 1\n", 2, "unknown key 'frobnicate'" },
		{ "backend = static\n\n# c\nbackend = exec\n", 4, "duplicate key 'backend'" },
		{ "just words\n", 1, "expected 'key = value'" },
		{ "audit_log =\n", 1, "empty value" },
		{ "audit_log = relative/path\n", 1, "absolute" },
		{ "max_concurrent = 0\n", 1, "integer" },
		{ "max_concurrent = 12x\n", 1, "integer" },
		{ "max_concurrent = -1\n", 1, "integer" },
		{ "max_concurrent = 99999999999999999999\n", 1, "integer" },
		{ "max_frame = 999999999\n", 1, "integer" },
		{ "\n\ntool Git = /usr/bin/git\n", 3, "invalid tool name" },
		{ "tool git = git\n", 1, "absolute" },
		{ "tool git = /usr/bin/git\ntool git = /bin/git\n", 2, "duplicate tool" },
		{ "tool ../x = /bin/x\n", 1, "invalid tool name" },
		{ "map /workspace = relative\n", 1, "map needs" },
		{ "map / = /home/u\n", 1, "map needs" },
		{ "map /w = /h\nmap /w = /i\n", 2, "duplicate map" },
		{ "map /w/../x = /h\n", 1, "map needs" },
	};
	struct execdconf_error e;

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		EXPECT_EQ(parse(cases[i].text, &e), -EINVAL);
		EXPECT_EQ(e.line, cases[i].line);
		EXPECT_TRUE(strstr(e.message, cases[i].needle) != NULL);
		if (!strstr(e.message, cases[i].needle))
			printf("# case %zu: '%s'\n", i, e.message);
	}
	execdconf_done(&c);
}

TEST(validate_requires_essentials)
{
	struct execdconf_error e;

	ASSERT_OK(parse("audit_log = /a\ntool git = /usr/bin/git\nmap /w = /h\n", &e));
	EXPECT_EQ(execdconf_validate(&c, &e), -EINVAL);
	EXPECT_TRUE(strstr(e.message, "backend") != NULL);
	ASSERT_OK(parse("backend = allow_all\ntool git = /usr/bin/git\nmap /w = /h\n", &e));
	EXPECT_EQ(execdconf_validate(&c, &e), -EINVAL);
	EXPECT_TRUE(strstr(e.message, "audit_log") != NULL);
	/* No tool lines: a daemon that serves only the git relay (the
	 * Kubernetes sidecar) is valid. */
	ASSERT_OK(parse("backend = allow_all\naudit_log = /a\nmap /w = /h\n", &e));
	EXPECT_EQ(execdconf_validate(&c, &e), 0);
	ASSERT_OK(parse("backend = allow_all\naudit_log = /a\ntool git = /usr/bin/git\n", &e));
	EXPECT_EQ(execdconf_validate(&c, &e), -EINVAL);
	ASSERT_OK(parse("backend = allow_all\naudit_log = /a\ntool git = /usr/bin/git\nmap /w = /h\n"
			"max_concurrent = 2\nmax_concurrent_per_peer = 3\n",
			&e));
	EXPECT_EQ(execdconf_validate(&c, &e), -EINVAL);
	execdconf_done(&c);
}

TEST(limits)
{
	static char big[EXECDCONF_MAX_LINE + 32];
	struct execdconf_error e;

	static const char key[] = "audit_log = /";

	memset(big, 'x', sizeof(big) - 1);
	for (size_t i = 0; i < sizeof(key) - 1; i++)
		big[i] = key[i];
	EXPECT_EQ(parse(big, &e), -E2BIG);
	EXPECT_EQ(e.line, 1);
	{
		static const char nul[] = "backend = a\0llow_all\n";

		execdconf_done(&c);
		execdconf_init(&c);
		EXPECT_EQ(execdconf_parse(&c, nul, sizeof(nul) - 1, &e), -EINVAL);
	}
	execdconf_done(&c);
}
