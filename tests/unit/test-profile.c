/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "profile.h"
#include "macros.h"
#include "tap.h"

TEST(profile_names)
{
	static const char *const good[] = {"strict", "permissive", "a", "my_team-2",
					   "abcdefghijklmnopqrstuvwxyz012345"};
	static const char *const bad[] = {"", "Strict", "../strict", "a/b", "a.json", ".", "..",
					  "with space", "abcdefghijklmnopqrstuvwxyz0123456", "x\n"};

	for (size_t i = 0; i < ELEMENTSOF(good); i++)
		EXPECT_TRUE(profile_name_valid(good[i]));
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		EXPECT_FALSE(profile_name_valid(bad[i]));
}

TEST(profile_json)
{
	static const char *const good[] = {"{}", "{}\n", "{\"n\": [-0.5e+10, 0, 12, 1E3, true, false, null]}",
					   "{\"s\": \"a\\\"b\\\\c\\u00e9 'q' NaN\"}", " {\"a\": [1, 2, {\"b\": null}]}\n\n",
					   "{\"permissions\":{\"deny\":[\"Bash(curl:*)\"]}}"};
	static const char *const bad[] = {"", "[1, 2]", "\"x\"", "42", "{\"a\": ", "{} {}", "{}x",
					  "{'a': 1}", "{\"a\": 1,}", "null",
					  "{\"a\": NaN}", "{\"a\": Infinity}", "{\"a\": -Infinity}", "{\"a\": 1.}",
					  "{\"a\": 01}", "{\"a\": .5}", "{\"a\": +1}", "{\"a\": \"\t\"}", "{/*c*/}",
					  "{\"a\": 1e}", "{\"a\": -}", "{\"a\": tRue}"};
	const char *why;

	for (size_t i = 0; i < ELEMENTSOF(good); i++)
		EXPECT_EQ(profile_check_json(good[i], strlen(good[i]), NULL), 0);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		why = NULL;
		EXPECT_EQ(profile_check_json(bad[i], strlen(bad[i]), &why), -EINVAL);
		EXPECT_TRUE(why != NULL);
	}
	/* An embedded NUL would make C readers see a different document. */
	EXPECT_EQ(profile_check_json("{}\0{\"a\":1}", 10, &why), -EINVAL);
}

TEST(profile_size_cap)
{
	size_t n = PROFILE_MAX_BYTES + 1;
	char *big = malloc(n);

	ASSERT_NOT_NULL(big);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	EXPECT_EQ(profile_check_json(big, n, NULL), -EFBIG);
	free(big);
}
