/* SPDX-License-Identifier: MIT */
/* lib/psqltarget.c against libpq itself: every connection string or URI
 * psqltarget_parse_conninfo() accepts must be one PQconninfoParse() (the
 * parser psql's libpq runs) accepts too, with the same host, port,
 * database and user (after psqltarget's canonicalisation). A string
 * psqltarget refuses needs no check: the daemon refuses the command. The
 * inputs are a table of known traps and deterministic random strings over
 * the grammar's special characters. Built only with libpq-dev
 * (tools/packages.txt). */
#include <errno.h>
#include <libpq-fe.h>
#include <stdint.h>
#include <string.h>

#include "macros.h"
#include "psqltarget.h"
#include "tap.h"

#define DIFF_RANDOM_CASES 200000
#define DIFF_MAX_TOKENS 12
#define DIFF_MAX_REPORTS 8

static const char *const keywords[] = { "host", "port", "dbname", "user" };
static const enum psqltarget_field fields[] = { PSQLTARGET_HOST, PSQLTARGET_PORT,
						PSQLTARGET_DBNAME, PSQLTARGET_USER };

/* 1: ours accepted and libpq agrees; 0: ours refused; -1: a difference
 * (printed). */
static int compare(const char *s)
{
	struct psqltarget ours = { 0 };
	const char *why = NULL;
	char *err = NULL;
	PQconninfoOption *opts;
	int ret = 1;

	if (psqltarget_parse_conninfo(&ours, s, &why) < 0)
		return 0;
	opts = PQconninfoParse(s, &err);
	if (!opts) {
		printf("#   '%s': accepted here, libpq refuses it: %s", s, err ? err : "?\n");
		PQfreemem(err);
		return -1;
	}
	for (size_t k = 0; k < ELEMENTSOF(keywords); k++) {
		const char *v = NULL;
		struct psqltarget canon = { 0 };

		for (PQconninfoOption *o = opts; o->keyword; o++)
			if (strcmp(o->keyword, keywords[k]) == 0)
				v = o->val;
		if (v && v[0] && psqltarget_set(&canon, fields[k], v, strlen(v), &why) < 0) {
			printf("#   '%s': libpq's %s '%s' is one psqltarget refuses\n", s, keywords[k], v);
			ret = -1;
			continue;
		}
		if (strcmp(psqltarget_get(&canon, fields[k]), psqltarget_get(&ours, fields[k])) != 0) {
			printf("#   '%s': %s is '%s' here, '%s' for libpq\n", s, keywords[k],
			       psqltarget_get(&ours, fields[k]), v ? v : "(unset)");
			ret = -1;
		}
	}
	PQconninfoFree(opts);
	return ret;
}

TEST(known_cases_agree_with_libpq)
{
	static const char *const t[] = {
		"host=127.0.0.1 port=15432 user=ro dbname=postgres\\",
		"dbname=a\\b",
		"dbname=a\\ b user=c",
		"dbname=a\\\\ user=c",
		"dbname='a\\' b' user=c",
		"dbname='a\\\\' user=c",
		"dbname='a'user=b",
		"host= port=5432",
		"host =db dbname= app",
		"dbname=app\\\tuser=x",
		"postgresql://ro:pw@db:5432/app?sslmode=disable",
		"postgresql://%72o@db/%61pp",
		"postgresql://[::1]:5432/app",
		"postgres:///app?host=%2Frun%2Fpostgresql&port=5433",
		"postgresql://db/app?user=u&dbname=x",
		"postgresql://db:/app",
	};
	size_t agreed = 0;

	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		int r = compare(t[i]);

		EXPECT_TRUE(r >= 0);
		agreed += r > 0;
	}
	/* The table is not all refusals: the comparison ran. */
	EXPECT_TRUE(agreed >= ELEMENTSOF(t) / 2);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

TEST(random_strings_agree_with_libpq)
{
	static const char *const tok[] = {
		"host", "port", "dbname", "user", "sslmode", "=", "=", " ", " ", "\t", "'", "'", "\\",
		"\\", "a", "B", "db", "1", "5432", "require", "postgresql://", "postgres://", "@",
		":", "/", "?", "&", "%41", "%2F", "%5C", "[", "]", "::1", ",", ".", "127.0.0.1",
		"\\'", "''", "=\\", "x\\", "pw",
	};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t accepted = 0, differ = 0;

	for (size_t n = 0; n < DIFF_RANDOM_CASES; n++) {
		char s[DIFF_MAX_TOKENS * 16 + 1] = "";
		size_t len = 0, nt = 1 + rnd(&x) % DIFF_MAX_TOKENS;
		int r;

		for (size_t i = 0; i < nt; i++) {
			const char *p = tok[rnd(&x) % ELEMENTSOF(tok)];

			memcpy(s + len, p, strlen(p) + 1);
			len += strlen(p);
		}
		r = compare(s);
		accepted += r > 0;
		if (r < 0 && ++differ >= DIFF_MAX_REPORTS)
			break;
	}
	EXPECT_EQ(differ, 0);
	printf("#   %zu of the strings accepted, each as libpq reads it\n", accepted);
	/* Enough accepted strings that the comparison means something. */
	EXPECT_TRUE(accepted >= DIFF_RANDOM_CASES / 200);
}
