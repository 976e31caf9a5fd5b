/* SPDX-License-Identifier: MIT */
/* lib/log.c: what it writes (captured from fd 2), what it returns, and
 * what it leaves in errno. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tap.h"

/* fd 2 goes to a temporary file until capture_end(), which returns what
 * was written (static buffer). */
static FILE *capture_file;
static int capture_saved = -1;

static void capture_begin(void)
{
	capture_file = tmpfile();
	ASSERT_NOT_NULL(capture_file);
	capture_saved = dup(STDERR_FILENO);
	ASSERT_TRUE(capture_saved >= 0);
	ASSERT_EQ(dup2(fileno(capture_file), STDERR_FILENO), STDERR_FILENO);
}

static const char *capture_end(void)
{
	static char buf[4096];
	ssize_t n;

	ASSERT_EQ(dup2(capture_saved, STDERR_FILENO), STDERR_FILENO);
	(void)close(capture_saved);
	n = pread(fileno(capture_file), buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	(void)fclose(capture_file);
	return buf;
}

TEST(errno_variant_writes_one_line_returns_error_and_preserves_errno)
{
	char want[64];
	const char *out;
	int r;

	log_setup("t");
	log_set_level(LOG_LEVEL_ERROR);
	capture_begin();
	errno = EAGAIN;
	r = log_error_errno(-ENOENT, "x %s", "y");
	ASSERT_EQ(errno, EAGAIN);
	out = capture_end();
	ASSERT_EQ(r, -ENOENT);
	(void)snprintf(want, sizeof(want), "t[%d]: error: x y\n", (int)getpid());
	EXPECT_STREQ(out, want);
}

TEST(disabled_level_is_silent_and_still_returns)
{
	const char *out;
	int r;

	log_setup("t");
	log_set_level(LOG_LEVEL_ERROR);
	capture_begin();
	errno = EINTR;
	r = log_debug_errno(-EPERM, "hidden");
	log_warn("hidden too");
	log_info("and this");
	EXPECT_EQ(errno, EINTR);
	out = capture_end();
	EXPECT_EQ(r, -EPERM);
	EXPECT_STREQ(out, "");
	EXPECT_EQ(log_get_level(), LOG_LEVEL_ERROR);
}

TEST(enabled_levels_are_named)
{
	char want[256];
	const char *out;

	log_setup("t");
	log_set_level(LOG_LEVEL_DEBUG);
	capture_begin();
	log_warn("w %d", 1);
	log_info("i");
	log_debug("d");
	out = capture_end();
	(void)snprintf(want, sizeof(want), "t[%d]: warn: w 1\nt[%d]: info: i\nt[%d]: debug: d\n", (int)getpid(),
		       (int)getpid(), (int)getpid());
	EXPECT_STREQ(out, want);
}

TEST(level_from_environment)
{
	ASSERT_EQ(setenv("CODE_SANDBOX_LOG", "debug", 1), 0);
	log_set_level(LOG_LEVEL_ERROR);
	log_setup("t");
	ASSERT_EQ(log_get_level(), LOG_LEVEL_DEBUG);
	/* An unknown value leaves the level as it was. */
	ASSERT_EQ(setenv("CODE_SANDBOX_LOG", "bogus", 1), 0);
	log_set_level(LOG_LEVEL_WARN);
	log_setup("t");
	ASSERT_EQ(log_get_level(), LOG_LEVEL_WARN);
	ASSERT_EQ(unsetenv("CODE_SANDBOX_LOG"), 0);
	log_setup("t");
	ASSERT_EQ(log_get_level(), LOG_LEVEL_WARN);
}
