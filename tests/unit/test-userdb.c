/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "macros.h"
#include "tap.h"
#include "userdb.h"

#define REMAP(pw, gr, uid, gid, rm) userdb_remap((pw), strlen(pw), (gr), strlen(gr), "devuser", (uid), (gid), (rm))

static void expect_text(const char *got, size_t len, const char *want)
{
	EXPECT_EQ(len, strlen(want));
	if (len != strlen(want) || memcmp(got, want, len) != 0)
		TAP_FAIL_(0, "text differs:\n--- got\n%.*s--- want\n%s---", (int)len, got, want);
}

static const char base_pw[] = "root:x:0:0:root:/root:/bin/bash\n"
			      "cloudsdk:x:1000:1000::/home/cloudsdk:/bin/bash\n"
			      "devuser:x:1001:1001:Dev User,,,:/home/devuser:/bin/bash\n";
static const char base_gr[] = "root:x:0:\n"
			      "sudo:x:27:\n"
			      "cloudsdk:x:1000:\n"
			      "devuser:x:1001:\n";

TEST(no_change_keeps_bytes)
{
	struct userdb_remap rm;

	ASSERT_EQ(REMAP(base_pw, base_gr, 1001, 1001, &rm), 0);
	EXPECT_FALSE(rm.passwd_changed);
	EXPECT_FALSE(rm.group_changed);
	EXPECT_EQ(rm.n_moves, 0);
	expect_text(rm.passwd, rm.passwd_len, base_pw);
	expect_text(rm.group, rm.group_len, base_gr);
	EXPECT_EQ(rm.old_uid, 1001);
	EXPECT_STREQ(rm.home, "/home/devuser");
	EXPECT_STREQ(rm.shell, "/bin/bash");
	EXPECT_STREQ(rm.group_name, "devuser");
	userdb_remap_free(&rm);
}

TEST(simple_remap)
{
	struct userdb_remap rm;

	ASSERT_EQ(REMAP(base_pw, base_gr, 5000, 5001, &rm), 0);
	EXPECT_TRUE(rm.passwd_changed);
	EXPECT_TRUE(rm.group_changed);
	EXPECT_EQ(rm.n_moves, 0);
	expect_text(rm.passwd, rm.passwd_len,
		    "root:x:0:0:root:/root:/bin/bash\n"
		    "cloudsdk:x:1000:1000::/home/cloudsdk:/bin/bash\n"
		    "devuser:x:5000:5001:Dev User,,,:/home/devuser:/bin/bash\n");
	expect_text(rm.group, rm.group_len,
		    "root:x:0:\n"
		    "sudo:x:27:\n"
		    "cloudsdk:x:1000:\n"
		    "devuser:x:5001:\n");
	userdb_remap_free(&rm);
}

TEST(collision_moves_account_and_group_to_free_ids)
{
	struct userdb_remap rm;

	ASSERT_EQ(REMAP(base_pw, base_gr, 1000, 1000, &rm), 0);
	ASSERT_EQ(rm.n_moves, 2);
	/* Never devuser's old 1001: its files elsewhere would change hands. */
	EXPECT_FALSE(rm.moves[0].is_group);
	EXPECT_STREQ(rm.moves[0].name, "cloudsdk");
	EXPECT_EQ(rm.moves[0].from, 1000);
	EXPECT_EQ(rm.moves[0].to, 1002);
	EXPECT_TRUE(rm.moves[1].is_group);
	EXPECT_STREQ(rm.moves[1].name, "cloudsdk");
	EXPECT_EQ(rm.moves[1].to, 1002);
	expect_text(rm.passwd, rm.passwd_len,
		    "root:x:0:0:root:/root:/bin/bash\n"
		    "cloudsdk:x:1002:1002::/home/cloudsdk:/bin/bash\n"
		    "devuser:x:1000:1000:Dev User,,,:/home/devuser:/bin/bash\n");
	expect_text(rm.group, rm.group_len,
		    "root:x:0:\n"
		    "sudo:x:27:\n"
		    "cloudsdk:x:1002:\n"
		    "devuser:x:1000:\n");
	userdb_remap_free(&rm);
}

TEST(uid_and_gid_collide_with_different_entries)
{
	static const char pw[] = "a:x:2000:3000::/a:/bin/sh\n"
				 "b:x:2001:2000::/b:/bin/sh\n"
				 "devuser:x:1001:1001::/home/devuser:/bin/sh\n";
	static const char gr[] = "ga:x:3000:\n"
				 "gb:x:2000:b\n"
				 "devuser:x:1001:\n";
	struct userdb_remap rm;

	ASSERT_EQ(REMAP(pw, gr, 2000, 2000, &rm), 0);
	ASSERT_EQ(rm.n_moves, 2);
	/* b's primary group gb moved: b follows it. */
	expect_text(rm.passwd, rm.passwd_len,
		    "a:x:1000:3000::/a:/bin/sh\n"
		    "b:x:2001:1000::/b:/bin/sh\n"
		    "devuser:x:2000:2000::/home/devuser:/bin/sh\n");
	expect_text(rm.group, rm.group_len,
		    "ga:x:3000:\n"
		    "gb:x:1000:b\n"
		    "devuser:x:2000:\n");
	userdb_remap_free(&rm);
}

TEST(other_lines_stay_byte_identical)
{
	static const char pw[] = "# comment: with colons\n"
				 "+nisuser::::::\n"
				 "\n"
				 "weird line\n"
				 "cloudsdk:x:1000:1000:Cloud SDK:/home/cloudsdk:/bin/bash\n"
				 "devuser:x:1001:1001::/home/devuser:/bin/zsh"; /* no final newline */
	static const char gr[] = "+\n"
				 "cloudsdk:x:1000:a,b,c\n"
				 "devuser:*:1001:x";
	struct userdb_remap rm;

	ASSERT_EQ(REMAP(pw, gr, 1000, 1000, &rm), 0);
	expect_text(rm.passwd, rm.passwd_len,
		    "# comment: with colons\n"
		    "+nisuser::::::\n"
		    "\n"
		    "weird line\n"
		    "cloudsdk:x:1002:1002:Cloud SDK:/home/cloudsdk:/bin/bash\n"
		    "devuser:x:1000:1000::/home/devuser:/bin/zsh");
	expect_text(rm.group, rm.group_len,
		    "+\n"
		    "cloudsdk:x:1002:a,b,c\n"
		    "devuser:*:1000:x");
	EXPECT_STREQ(rm.shell, "/bin/zsh");
	userdb_remap_free(&rm);
}

TEST(free_id_skips_taken_ids_and_nobody)
{
	static const char pw[] = "x:x:1000:1000::/x:/bin/sh\n"
				 "y:x:1002:1002::/y:/bin/sh\n"
				 "devuser:x:1001:1001::/home/devuser:/bin/sh\n";
	static const char gr[] = "x:x:1000:\n"
				 "g1003:x:1003:\n"
				 "devuser:x:1001:\n";
	struct userdb_remap rm;

	ASSERT_EQ(REMAP(pw, gr, 1000, 1000, &rm), 0);
	ASSERT_EQ(rm.n_moves, 2);
	EXPECT_EQ(rm.moves[0].to, 1003); /* uids 1000..1002 taken */
	EXPECT_EQ(rm.moves[1].to, 1004); /* gids: 1002 (y's primary), 1003 taken */
	userdb_remap_free(&rm);
}

TEST(missing_group_is_appended)
{
	static const char pw[] = "devuser:x:1001:1001::/home/devuser:/bin/sh\n";
	static const char gr[] = "root:x:0:";
	struct userdb_remap rm;

	ASSERT_EQ(REMAP(pw, gr, 1500, 1500, &rm), 0);
	expect_text(rm.group, rm.group_len, "root:x:0:\ndevuser:x:1500:\n");
	userdb_remap_free(&rm);
}

TEST(errors_leave_output_untouched)
{
	struct userdb_remap rm = {.uid = 4242};
	static const char dup[] = "devuser:x:1:1::/h:/bin/sh\ndevuser:x:2:2::/h:/bin/sh\n";
	static const char nul[] = "devuser:x:1001:1001::/home/devuser:/bin/sh\n\0x\n";

	EXPECT_EQ(REMAP("root:x:0:0::/root:/bin/sh\n", base_gr, 1000, 1000, &rm), -ENOENT);
	EXPECT_EQ(REMAP(dup, base_gr, 1000, 1000, &rm), -EEXIST);
	EXPECT_EQ(userdb_remap(nul, sizeof(nul) - 1, base_gr, strlen(base_gr), "devuser", 1000, 1000, &rm),
		  -EINVAL);
	EXPECT_EQ(REMAP(base_pw, base_gr, 4294967295U, 1000, &rm), -EINVAL);
	/* A line with a non-numeric uid is not the user. */
	EXPECT_EQ(REMAP("devuser:x:abc:1::/h:/bin/sh\n", base_gr, 1000, 1000, &rm), -ENOENT);
	EXPECT_EQ(rm.uid, 4242);
	EXPECT_TRUE(rm.passwd == NULL);
}

TEST(too_many_moves)
{
	char pw[4096] = "", gr[64] = "devuser:x:1001:\n";
	struct userdb_remap rm;

	for (int i = 0; i <= USERDB_MAX_MOVES; i++)
		(void)snprintf(pw + strlen(pw), sizeof(pw) - strlen(pw), "u%d:x:1000:1000::/:/bin/sh\n", i);
	strcat(pw, "devuser:x:1001:1001::/home/devuser:/bin/sh\n");
	EXPECT_EQ(REMAP(pw, gr, 1000, 1001, &rm), -ENOSPC);
}

TEST(lookup)
{
	struct userdb_user u;

	ASSERT_EQ(userdb_lookup(base_pw, strlen(base_pw), "devuser", &u), 0);
	EXPECT_EQ(u.uid, 1001);
	EXPECT_EQ(u.gid, 1001);
	EXPECT_STREQ(u.home, "/home/devuser");
	EXPECT_EQ(userdb_lookup(base_pw, strlen(base_pw), "nobody", &u), -ENOENT);
	EXPECT_EQ(userdb_lookup(base_pw, strlen(base_pw), "dev", &u), -ENOENT);
}

TEST(home_paths)
{
	static const char *const good[] = {"/home/devuser", "/home/a/b", "/devuser", "/srv/dev",
					   "/var-home/x", "/etcetera", "/home/..x", "/home/.dev",
					   "/var/lib/devuser"};
	static const char *const bad[] = {"", "home/devuser", "/", "//", "/home/", "/home//devuser",
					  "/home/./devuser", "/home/../etc", "/..", "/etc", "/usr", "/var",
					  "/workspace", "/workspace/home", "/proc/1", "/sys/x", "/dev/shm/h",
					  "/tmp", "/root", "/lib64"};
	const char *why;

	for (size_t i = 0; i < ELEMENTSOF(good); i++) {
		why = NULL;
		EXPECT_TRUE(userdb_home_is_safe(good[i], &why));
		if (why)
			TAP_FAIL_(0, "'%s' refused: %s", good[i], why);
	}
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		why = NULL;
		EXPECT_FALSE(userdb_home_is_safe(bad[i], &why));
		EXPECT_TRUE(why != NULL);
	}
}
