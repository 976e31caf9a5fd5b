/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "pathmap.h"
#include "tap.h"

static struct pathmap m;

static void setup(void)
{
	memset(&m, 0, sizeof(m));
	ASSERT_OK(pathmap_add(&m, "/workspace", "/home/u/project"));
	ASSERT_OK(pathmap_add(&m, "/workspace/vendor", "/srv/vendor"));
	ASSERT_OK(pathmap_add(&m, "/data", "/mnt/data"));
}

TEST(maps_component_wise)
{
	static const struct {
		const char *in;
		size_t index;
		const char *rel;
	} ok[] = {
		{ "/workspace", 0, "." },
		{ "/workspace/", 0, "." },
		{ "/workspace/src", 0, "src" },
		{ "/workspace//src/./lib/", 0, "src/lib" },
		{ "//workspace/src", 0, "src" },
		{ "/workspace/./.", 0, "." },
		{ "/workspace/vendor", 1, "." },        /* longest prefix wins */
		{ "/workspace/vendor/x/y", 1, "x/y" },
		{ "/workspace/vendorx", 0, "vendorx" }, /* not the vendor mapping */
		{ "/workspace/...", 0, "..." },         /* a name, not a parent */
		{ "/workspace/..x", 0, "..x" },
		{ "/data/a b/ü", 2, "a b/ü" },
	};
	char rel[PATHMAP_MAX_PATH];
	size_t idx;

	setup();
	for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
		ASSERT_OK(pathmap_resolve(&m, ok[i].in, &idx, rel, sizeof(rel)));
		EXPECT_EQ(idx, ok[i].index);
		EXPECT_STREQ(rel, ok[i].rel);
	}
}

TEST(refuses_outside_and_escapes)
{
	static const struct {
		const char *in;
		int err;
	} bad[] = {
		{ "/workspacex", -EXDEV },             /* prefix confusion */
		{ "/workspacex/src", -EXDEV },
		{ "/work", -EXDEV },
		{ "/", -EXDEV },
		{ "/home/u/project", -EXDEV },         /* absolute host path */
		{ "/home/u/.ssh", -EXDEV },
		{ "/etc", -EXDEV },
		{ "/workspace/..", -EXDEV },
		{ "/workspace/../etc", -EXDEV },
		{ "/workspace/src/../../etc", -EXDEV },
		{ "/workspace/src/..", -EXDEV },       /* even when it would stay inside */
		{ "/workspace/vendor/../../x", -EXDEV },
		{ "workspace/src", -EINVAL },          /* relative */
		{ "./workspace", -EINVAL },
		{ "", -EINVAL },
	};
	char rel[PATHMAP_MAX_PATH] = "untouched";
	size_t idx = 99;

	setup();
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		EXPECT_EQ(pathmap_resolve(&m, bad[i].in, &idx, rel, sizeof(rel)), bad[i].err);
		EXPECT_EQ(idx, 99);
	}
	EXPECT_EQ(pathmap_resolve(&m, NULL, &idx, rel, sizeof(rel)), -EINVAL);
}

TEST(too_long)
{
	char *p = malloc(PATHMAP_MAX_PATH + 16);
	char rel[8];
	size_t idx;

	ASSERT_NOT_NULL(p);
	setup();
	memset(p, 'a', PATHMAP_MAX_PATH + 15);
	memcpy(p, "/workspace/", 11);
	p[PATHMAP_MAX_PATH + 15] = '\0';
	EXPECT_EQ(pathmap_resolve(&m, p, &idx, rel, sizeof(rel)), -EINVAL);
	EXPECT_EQ(pathmap_resolve(&m, "/workspace/abcdefgh", &idx, rel, sizeof(rel)), -ENAMETOOLONG);
	free(p);
}

TEST(add_validates)
{
	static const char *const bad[] = { "", "/", "relative", "/a/", "/a//b", "/a/./b", "/a/../b",
					   "/..", "/." };

	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		EXPECT_EQ(pathmap_add(&m, bad[i], "/host"), -EINVAL);
		EXPECT_EQ(pathmap_add(&m, "/workspace", bad[i]), -EINVAL);
	}
	EXPECT_EQ(m.n, 0);
	ASSERT_OK(pathmap_add(&m, "/workspace", "/h"));
	EXPECT_EQ(pathmap_add(&m, "/workspace", "/other"), -EEXIST);
	for (size_t i = 1; i < PATHMAP_MAX_ENTRIES; i++) {
		char c[32];

		(void)snprintf(c, sizeof(c), "/m%zu", i);
		ASSERT_OK(pathmap_add(&m, c, "/h"));
	}
	EXPECT_EQ(pathmap_add(&m, "/one-more", "/h"), -E2BIG);
}
