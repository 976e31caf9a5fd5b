/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "macros.h"
#include "psqlmeta.h"
#include "tap.h"

static int check(const char *s, struct psqlmeta_result *res)
{
	return psqlmeta_check(s, strlen(s), res);
}

TEST(read_only_meta_commands_are_accepted)
{
	static const char *const ok[] = {
		"select 1;",
		"\\dt",
		"\\dt+ public.*",
		"\\d users\n\\d+ orders",
		"\\l",
		"\\l+",
		"\\x on",
		"\\x\nselect * from t;",
		"\\conninfo",
		"\\timing off",
		"\\dS \\dn",                       /* two allowed in one line */
		"select '\\! not a command';",     /* inside a string */
		"select \"a\\!b\" from t;",        /* inside an identifier */
		"select $$ \\! x $$;",             /* inside a dollar quote */
		"select $fn$ \\o /tmp/x $fn$;",
		"-- \\! comment\nselect 1;",
		"/* \\! /* nested \\o */ still */ select 1;",
		"select 1 \\\\ select 2;",         /* no: "\\\\" is refused below; see refusals */
	};
	struct psqlmeta_result res;

	for (size_t i = 0; i + 1 < ELEMENTSOF(ok); i++) {
		int r = check(ok[i], &res);

		if (r != 0)
			printf("#   refused '%s': %s\n", ok[i], res.why);
		EXPECT_EQ(r, 0);
	}
	ASSERT_OK(check("\\dt \\l", &res));
	EXPECT_EQ(res.n_commands, 2);
}

TEST(host_side_meta_commands_are_refused)
{
	static const struct {
		const char *text, *name;
	} bad[] = {
		{ "\\! id", "!" },
		{ "select 1;\n\\o /tmp/out", "o" },
		{ "select 1 \\g |sh", "g" },
		{ "\\gx", "gx" },
		{ "\\copy t to program 'id'", "copy" },
		{ "\\setenv PAGER 'sh -c id'", "setenv" },
		{ "\\i /etc/passwd", "i" },
		{ "\\ir x.sql", "ir" },
		{ "\\w /tmp/x", "w" },
		{ "\\e", "e" },
		{ "\\cd /", "cd" },
		{ "\\gexec", "gexec" },
		{ "\\set x 1", "set" },
		{ "\\pset pager on", "pset" },
		{ "\\x \\! id", "!" },               /* a second command after an allowed one */
		{ "\\dt \\o x", "o" },
		{ "select 1 \\\\ select 2;", "\\" },
		{ "\\lo_export 1 /tmp/x", "lo_export" },
		{ "\\q", "q" },
		{ "\\d1", "d1" },
		{ "SELECT E'\\'' ; \\! id", "!" },     /* E'' escapes the quote: \! is outside */
	};
	struct psqlmeta_result res;

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int r = check(bad[i].text, &res);

		if (r != -EPERM)
			printf("#   accepted '%s'\n", bad[i].text);
		EXPECT_ERR(r, EPERM);
		EXPECT_STREQ(res.name, bad[i].name);
		EXPECT_TRUE(res.why != NULL);
	}
}

/* Both readings of '...' (standard_conforming_strings on and off) must be
 * safe: the server setting is not the scanner's to guess. */
TEST(either_string_reading_is_checked)
{
	struct psqlmeta_result res;
	/* scs on: the string is 'x\' and \! is outside it. */
	const char *a = "select 'x\\'; \\! id --';";
	/* scs off: \' escapes the quote, the string runs on, \! is outside
	 * after the real end. */
	const char *b = "select 'a\\' \\! id' ; \\! id2 --';";

	EXPECT_ERR(check(a, &res), EPERM);
	EXPECT_STREQ(res.name, "!");
	EXPECT_ERR(check(b, &res), EPERM);
}

TEST(backticks_in_arguments_are_refused)
{
	struct psqlmeta_result res;

	EXPECT_ERR(check("\\dt `id`", &res), EPERM);
	EXPECT_STREQ(res.name, "dt");
	EXPECT_TRUE(strstr(res.why, "backtick") != NULL);
	EXPECT_ERR(check("\\x on `touch /tmp/p`", &res), EPERM);
	EXPECT_OK(check("select '`id`';", &res)); /* SQL text: the server's business */
	EXPECT_OK(check("\\d \"`x`\"", &res));    /* quoted in the arguments */
}

TEST(limits)
{
	struct psqlmeta_result res;

	EXPECT_ERR(psqlmeta_check("\\dt\0\\!", 6, &res), EINVAL);
	EXPECT_ERR(psqlmeta_check("x", PSQLMETA_MAX_TEXT + 1, &res), E2BIG);
	EXPECT_ERR(check("\\", &res), EPERM);
	EXPECT_OK(check("select 'unterminated \\! x", &res));
	EXPECT_ERR(check("\\averyveryveryveryveryverylongcommandname", &res), EPERM);
}
