/* SPDX-License-Identifier: MIT */
#include "log.h"
#include "tap.h"

TEST(errno_variant_returns_error_and_preserves_errno)
{
	log_set_level(LOG_LEVEL_ERROR);
	errno = EAGAIN;
	ASSERT_EQ(log_error_errno(-ENOENT, "x %s", "y"), -ENOENT);
	ASSERT_EQ(errno, EAGAIN);
}

TEST(disabled_level_is_silent_and_still_returns)
{
	log_set_level(LOG_LEVEL_ERROR);
	ASSERT_EQ(log_debug_errno(-EPERM, "hidden"), -EPERM);
	ASSERT_EQ(log_get_level(), LOG_LEVEL_ERROR);
}

TEST(level_from_environment)
{
	ASSERT_EQ(setenv("CODE_SANDBOX_LOG", "debug", 1), 0);
	log_setup("t");
	ASSERT_EQ(log_get_level(), LOG_LEVEL_DEBUG);
	ASSERT_EQ(setenv("CODE_SANDBOX_LOG", "bogus", 1), 0);
	log_set_level(LOG_LEVEL_WARN);
	log_setup("t");
	ASSERT_EQ(log_get_level(), LOG_LEVEL_WARN);
}
