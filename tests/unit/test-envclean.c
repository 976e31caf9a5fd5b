/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "envclean.h"
#include "macros.h"
#include "tap.h"

static const struct envclean_user dev = {.name = "devuser", .home = "/home/devuser", .shell = "/bin/bash"};

static const char *get(char **env, const char *name)
{
	size_t n = strlen(name);
	const char *found = NULL;

	for (char **e = env; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
			if (found)
				return "(duplicate)";
			found = *e + n + 1;
		}
	return found;
}

TEST(dropped_variables)
{
	static const char *const drop[] = {
		"HOST_UID=1000", "HOST_GID=1000", "EXTRA_ALLOWED_DOMAINS=a.com", "CODE_SANDBOX_PROFILE=x",
		"CODE_SANDBOX_LOG=debug", "LD_PRELOAD=/tmp/x.so", "LD_LIBRARY_PATH=/tmp", "LD_AUDIT=x",
		"GCONV_PATH=/tmp", "GLIBC_TUNABLES=x", "BASH_ENV=/tmp/x", "ENV=/tmp/x",
		"BASH_FUNC_ls%%=() { :; }", "NODE_OPTIONS=--require /tmp/x", "PYTHONSTARTUP=/tmp/x",
		"PERL5OPT=-Mx", "RUBYOPT=-rx", "JAVA_TOOL_OPTIONS=-javaagent:x", "MALLOC_CHECK_=3",
		"HOSTALIASES=/tmp/h", "IFS=x", "HOST_UID",
	};
	static const char *const keep[] = {
		"TERM=xterm", "LANG=C.UTF-8", "ANTHROPIC_API_KEY=k", "PYTHONPATH=/x", "NODE_PATH=/x",
		"HOST=abc", "HOST_UIDX=1", "LD=ld", "CODE_SANDBOX=1", "GIT_AUTHOR_NAME=A",
	};

	for (size_t i = 0; i < ELEMENTSOF(drop); i++)
		EXPECT_TRUE(envclean_is_dropped(drop[i]));
	for (size_t i = 0; i < ELEMENTSOF(keep); i++)
		EXPECT_FALSE(envclean_is_dropped(keep[i]));
}

TEST(build_sets_user_variables)
{
	char *in[] = {"HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/sh", "TERM=xterm-256color",
		      "HOST_UID=1000", "LD_PRELOAD=/x.so", "PATH=/usr/local/bin:/usr/bin:/bin", "MAIL=/var/mail/root",
		      "noequals", "=novalue", "LANG=C.UTF-8", "LANG=fr_FR", NULL};
	char **out = NULL;

	ASSERT_EQ(envclean_build(in, &dev, &out), 0);
	EXPECT_STREQ(get(out, "HOME"), "/home/devuser");
	EXPECT_STREQ(get(out, "USER"), "devuser");
	EXPECT_STREQ(get(out, "LOGNAME"), "devuser");
	EXPECT_STREQ(get(out, "SHELL"), "/bin/bash");
	EXPECT_STREQ(get(out, "PATH"), "/usr/local/bin:/usr/bin:/bin");
	EXPECT_STREQ(get(out, "TERM"), "xterm-256color");
	EXPECT_STREQ(get(out, "LANG"), "C.UTF-8"); /* first wins, no duplicate */
	EXPECT_TRUE(get(out, "HOST_UID") == NULL);
	EXPECT_TRUE(get(out, "LD_PRELOAD") == NULL);
	EXPECT_TRUE(get(out, "MAIL") == NULL);
	for (char **e = out; *e; e++) {
		EXPECT_TRUE(strchr(*e, '=') != NULL);
		EXPECT_TRUE(**e != '=');
	}
	free(out);
}

TEST(unsafe_path_is_replaced)
{
	static const char *const unsafe[] = {"PATH=", "PATH=.:/usr/bin", "PATH=/usr/bin::/bin",
					     "PATH=/usr/bin:", "PATH=bin:/usr/bin", "PATH=:/bin"};
	for (size_t i = 0; i < ELEMENTSOF(unsafe); i++) {
		char *in[] = {(char *)unsafe[i], NULL};
		char **out = NULL;

		ASSERT_EQ(envclean_build(in, &dev, &out), 0);
		EXPECT_STREQ(get(out, "PATH"), ENVCLEAN_DEFAULT_PATH);
		free(out);
	}
	{
		char *in[] = {NULL};
		char **out = NULL;

		ASSERT_EQ(envclean_build(in, &dev, &out), 0);
		EXPECT_STREQ(get(out, "PATH"), ENVCLEAN_DEFAULT_PATH);
		EXPECT_STREQ(get(out, "HOME"), "/home/devuser");
		free(out);
	}
	EXPECT_TRUE(envclean_path_is_safe("/usr/bin:/bin"));
	EXPECT_TRUE(envclean_path_is_safe("/x"));
}

TEST(caps)
{
	size_t n = ENVCLEAN_MAX_VARS + 1;
	char **in = calloc(n + 1, sizeof(char *));
	char **out = NULL;
	char *big;

	ASSERT_NOT_NULL(in);
	for (size_t i = 0; i < n; i++) {
		in[i] = malloc(32);
		ASSERT_NOT_NULL(in[i]);
		(void)snprintf(in[i], 32, "V%zu=x", i);
	}
	EXPECT_EQ(envclean_build(in, &dev, &out), -E2BIG);

	big = malloc(ENVCLEAN_MAX_BYTES + 16);
	ASSERT_NOT_NULL(big);
	memset(big, 'a', ENVCLEAN_MAX_BYTES + 15);
	memcpy(big, "BIG=", 4);
	big[ENVCLEAN_MAX_BYTES + 15] = '\0';
	{
		char *in2[] = {big, NULL};
		EXPECT_EQ(envclean_build(in2, &dev, &out), -E2BIG);
	}
}
