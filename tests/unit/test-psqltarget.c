/* SPDX-License-Identifier: MIT */
/* psql connection targets (lib/psqltarget.c): canonical values, refusals,
 * connection strings and URIs. The option side is in test-toolfiles.c. */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "macros.h"
#include "psqltarget.h"
#include "tap.h"

TEST(values_are_canonical)
{
	static const struct {
		enum psqltarget_field f;
		const char *in, *out; /* out NULL: refused */
	} t[] = {
		{ PSQLTARGET_HOST, "DB.Example.COM.", "db.example.com" },
		{ PSQLTARGET_HOST, "0:0:0:0:0:0:0:1", "::1" },
		{ PSQLTARGET_HOST, "::FFFF:127.0.0.1", "127.0.0.1" }, /* IPv4-mapped: the IPv4 address */
		{ PSQLTARGET_HOST, "::ffff:7f00:1", "127.0.0.1" },
		{ PSQLTARGET_HOST, "0:0:0:0:0:ffff:10.0.0.1", "10.0.0.1" },
		{ PSQLTARGET_HOST, "::127.0.0.1", "::127.0.0.1" }, /* not mapped: IPv6 */
		{ PSQLTARGET_HOST, "10.0.0.1", "10.0.0.1" },
		{ PSQLTARGET_HOST, "/run/postgresql", "/run/postgresql" },
		{ PSQLTARGET_HOST, "/", "/" },
		{ PSQLTARGET_HOST, "10.1", NULL },
		{ PSQLTARGET_HOST, "10.0.0.01", NULL },
		{ PSQLTARGET_HOST, "1e100", NULL },
		{ PSQLTARGET_HOST, "db..x", NULL },
		{ PSQLTARGET_HOST, "-db", NULL },
		{ PSQLTARGET_HOST, "fe80::1%eth0", NULL },
		{ PSQLTARGET_HOST, "d\xc3\xa9.x", NULL },
		{ PSQLTARGET_HOST, "/run/./x", NULL },
		{ PSQLTARGET_HOST, "/run/x y", NULL },
		{ PSQLTARGET_PORT, "0006432", "6432" },
		{ PSQLTARGET_PORT, "65535", "65535" },
		{ PSQLTARGET_PORT, "+5432", NULL },
		{ PSQLTARGET_PORT, " 5432", NULL },
		{ PSQLTARGET_PORT, "99999", NULL },
		{ PSQLTARGET_DBNAME, "My DB", "My DB" },
		{ PSQLTARGET_DBNAME, "a\tb", NULL },
		{ PSQLTARGET_USER, "\xc3\xa9", "\xc3\xa9" },
		{ PSQLTARGET_USER, "\xff", NULL },
	};

	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		struct psqltarget x = { 0 };
		const char *why = NULL;
		int r = psqltarget_set(&x, t[i].f, t[i].in, strlen(t[i].in), &why);

		if (!t[i].out) {
			if (r >= 0)
				printf("#   case %zu '%s' accepted as '%s'\n", i, t[i].in, psqltarget_get(&x, t[i].f));
			EXPECT_ERR(r, EINVAL);
			EXPECT_TRUE(why != NULL);
			EXPECT_STREQ(psqltarget_get(&x, t[i].f), "");
			continue;
		}
		EXPECT_OK(r);
		EXPECT_STREQ(psqltarget_get(&x, t[i].f), t[i].out);
		/* a second value for the same field is ambiguous */
		EXPECT_ERR(psqltarget_set(&x, t[i].f, t[i].in, strlen(t[i].in), &why), EEXIST);
	}
}

TEST(connection_strings)
{
	struct psqltarget x = { 0 };
	const char *why = NULL;

	EXPECT_TRUE(psqltarget_is_conninfo("host=x"));
	EXPECT_TRUE(psqltarget_is_conninfo("postgresql://x"));
	EXPECT_TRUE(psqltarget_is_conninfo("postgres://x"));
	EXPECT_FALSE(psqltarget_is_conninfo("Postgresql:x"));
	EXPECT_FALSE(psqltarget_is_conninfo("mydb"));
	ASSERT_OK(psqltarget_parse_conninfo(&x, "  host = 'db'  port=5432 dbname='my db' user=a\\ b ", &why));
	EXPECT_STREQ(x.host, "db");
	EXPECT_STREQ(x.port, "5432");
	EXPECT_STREQ(x.dbname, "my db");
	EXPECT_STREQ(x.user, "a b");
	memset(&x, 0, sizeof(x));
	ASSERT_OK(psqltarget_parse_conninfo(&x, "dbname='it\\'s'", &why));
	EXPECT_STREQ(x.dbname, "it's");
	/* libpq drops a trailing backslash of an unquoted value and reads
	 * "\x" as x: judged as "postgres\", psql connected to postgres. */
	memset(&x, 0, sizeof(x));
	ASSERT_OK(psqltarget_parse_conninfo(&x, "host=127.0.0.1 port=15432 user=ro dbname=postgres\\", &why));
	EXPECT_STREQ(x.dbname, "postgres");
	memset(&x, 0, sizeof(x));
	ASSERT_OK(psqltarget_parse_conninfo(&x, "dbname=te\\mplate1 user=\\\\r", &why));
	EXPECT_STREQ(x.dbname, "template1");
	EXPECT_STREQ(x.user, "\\r");
	memset(&x, 0, sizeof(x));
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "dbname=\\", &why), EINVAL); /* libpq: "" */
	memset(&x, 0, sizeof(x));
	ASSERT_OK(psqltarget_parse_conninfo(&x, "postgresql://%72o:p%40ss@[2001:DB8::1]:06432/d%2Fb?connect_timeout=3&ssl=true", &why));
	EXPECT_STREQ(x.user, "ro");
	EXPECT_STREQ(x.host, "2001:db8::1");
	EXPECT_STREQ(x.port, "6432");
	EXPECT_STREQ(x.dbname, "d/b");
	memset(&x, 0, sizeof(x));
	ASSERT_OK(psqltarget_parse_conninfo(&x, "postgresql://", &why));
	EXPECT_STREQ(x.host, "");
	memset(&x, 0, sizeof(x));
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "postgresql://[::1/db", &why), EINVAL);
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "postgresql://h]/db", &why), EINVAL);
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "postgresql://h/db?x", &why), EINVAL);
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "host", &why), EINVAL);
	memset(&x, 0, sizeof(x));
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "host=a 'x'=y", &why), EINVAL);
	memset(&x, 0, sizeof(x));
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "HOST=a", &why), EINVAL); /* keywords are case-sensitive */
	memset(&x, 0, sizeof(x));
	EXPECT_ERR(psqltarget_parse_conninfo(&x, "hostaddr=10.0.0.1", &why), EINVAL);
	EXPECT_TRUE(strstr(why, "hostaddr") != NULL);
	{
		char big[PSQLTARGET_MAX_CONNINFO + 8];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		EXPECT_ERR(psqltarget_parse_conninfo(&x, big, &why), E2BIG);
	}
}

/* Passwords never reach the audit log or a backend: "***" in their place,
 * the rest as written. */
TEST(redact_password)
{
	static const struct {
		const char *in, *out; /* out NULL: unchanged */
	} t[] = {
		{ "host=db password=s3cret dbname=app", "host=db password=*** dbname=app" },
		{ "password = 's e c\\'r' user=u", "password = *** user=u" },
		{ "password=a\\ b user=u", "password=*** user=u" },
		{ "password= user=u", "password= ***" }, /* libpq: the password is "user=u" */
		{ "password=a password=b", "password=*** password=***" },
		{ "host=db password", "host=db ***" }, /* does not parse: the rest */
		{ "host=db 'password=x", "host=db 'password=***" },
		{ "sslpassword=k host=db", "sslpassword=*** host=db" },
		{ "host=db dbname=app", NULL },
		{ "postgresql://ro:s3cret@db:5432/app", "postgresql://ro:***@db:5432/app" },
		{ "postgres://ro:p@ss@db/app", "postgres://ro:***@db/app" },
		{ "postgresql://:pw@db/app", "postgresql://:***@db/app" },
		{ "postgresql://ro@db/app?password=x&sslmode=require", "postgresql://ro@db/app?password=***&sslmode=require" },
		{ "postgresql://db/app?p%61ssword=x", "postgresql://db/app?p%61ssword=***" },
		{ "postgresql://ro@db/app", NULL },
		{ "postgresql://db/a:b@c", NULL }, /* an '@' in the path is no userinfo */
	};

	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		char buf[PSQLTARGET_REDACT_CAP(64)];
		int r = psqltarget_redact_password(t[i].in, buf, sizeof(buf));

		EXPECT_EQ(r, t[i].out ? 1 : 0);
		EXPECT_STREQ(buf, t[i].out ? t[i].out : t[i].in);
	}
	{
		char small[8];

		EXPECT_ERR(psqltarget_redact_password("host=db password=x", small, sizeof(small)), ENOBUFS);
	}
}

TEST(json)
{
	struct psqltarget x = { 0 };
	struct json_object *o;

	ASSERT_OK(psqltarget_set(&x, PSQLTARGET_HOST, "db", 2, NULL));
	o = psqltarget_to_json(&x);
	ASSERT_NOT_NULL(o);
	EXPECT_STREQ(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
		     "{\"host\":\"db\",\"port\":null,\"dbname\":null,\"user\":null}");
	json_object_put(o);
}
