/* SPDX-License-Identifier: MIT */
/* lib/decimal.c: digits only, the whole string, a value cap. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "decimal.h"
#include "macros.h"
#include "tap.h"

TEST(decimal_table)
{
	static const struct {
		const char *s;
		uint64_t max;
		int r;
		uint64_t v;
	} cases[] = {
		{"0", 0, 0, 0},
		{"1", 0, -ERANGE, 0},
		{"007", 10, 0, 7},
		{"65535", 65535, 0, 65535},
		{"65536", 65535, -ERANGE, 0},
		{"4294967294", 4294967294u, 0, 4294967294u},
		{"4294967295", 4294967294u, -ERANGE, 0},
		{"18446744073709551615", UINT64_MAX, 0, UINT64_MAX},
		{"18446744073709551616", UINT64_MAX, -ERANGE, 0},
		{"99999999999999999999999", UINT64_MAX, -ERANGE, 0},
		{"", 10, -EINVAL, 0},
		{"-1", UINT64_MAX, -EINVAL, 0},
		{"+1", UINT64_MAX, -EINVAL, 0},
		{" 1", UINT64_MAX, -EINVAL, 0},
		{"1 ", UINT64_MAX, -EINVAL, 0},
		{"0x10", UINT64_MAX, -EINVAL, 0},
		{"12a", 1000, -EINVAL, 0},
		/* First problem wins, scanning left to right. */
		{"99999x", 100, -ERANGE, 0},
		{"9x9999", 100, -EINVAL, 0},
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		uint64_t v = 4242;
		int r = decimal_parse(cases[i].s, strlen(cases[i].s), cases[i].max, &v);

		EXPECT_EQ(r, cases[i].r);
		EXPECT_TRUE(v == (r == 0 ? cases[i].v : 4242));
	}
}

TEST(decimal_counted)
{
	uint64_t v = 0;

	/* Only s[0..n) is read: a port inside "host:8080/path". */
	ASSERT_OK(decimal_parse("8080/path", 4, 65535, &v));
	EXPECT_TRUE(v == 8080);
	EXPECT_ERR(decimal_parse("8080/path", 5, 65535, &v), EINVAL);
	EXPECT_ERR(decimal_parse("1\0002", 3, 100, &v), EINVAL); /* embedded NUL */
}
