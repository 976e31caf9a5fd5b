/* SPDX-License-Identifier: MIT */
/* Minimal TAP unit-test harness. Each TEST() runs in its own forked child, so
 * a crash, an abort or a leaked fd fails only that test. A test skips by
 * calling SKIP(reason) (the child exits 77). Output is TAP version 13, read by
 * meson with protocol: 'tap'.
 *
 *   TEST(parses_port) { ASSERT_EQ(parse("x:80"), 0); EXPECT_STREQ(a, "x"); }
 *
 * ASSERT_* stop the test at the first failure; EXPECT_* record it and go on.
 * Include this header in exactly one translation unit per test binary: it
 * defines main(). */
#ifndef CS_TAP_H
#define CS_TAP_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TAP_MAX_TESTS 1024
#define TAP_EXIT_SKIP 77

struct tap_test {
	const char *name;
	void (*fn)(void);
};

static struct tap_test tap_tests[TAP_MAX_TESTS];
static size_t tap_n_tests;
static int tap_failed_in_child;

static inline void tap_register(const char *name, void (*fn)(void))
{
	if (tap_n_tests >= TAP_MAX_TESTS) {
		fprintf(stderr, "tap: too many tests\n");
		abort();
	}
	tap_tests[tap_n_tests].name = name;
	tap_tests[tap_n_tests].fn = fn;
	tap_n_tests++;
}

#define TEST(name)                                                                                 \
	static void test_##name(void);                                                             \
	__attribute__((constructor)) static void tap_reg_##name(void)                              \
	{                                                                                          \
		tap_register(#name, test_##name);                                                  \
	}                                                                                          \
	static void test_##name(void)

#define TAP_FAIL_(stop, ...)                                                                       \
	do {                                                                                       \
		printf("#   %s:%d: ", __FILE__, __LINE__);                                          \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		fflush(stdout);                                                                    \
		tap_failed_in_child = 1;                                                           \
		if (stop)                                                                          \
			_exit(1);                                                                  \
	} while (0)

#define TAP_CHECK_(stop, cond, ...)                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			TAP_FAIL_(stop, __VA_ARGS__);                                              \
	} while (0)

#define TAP_INT_(stop, a, op, b)                                                                   \
	do {                                                                                       \
		intmax_t tap_a_ = (intmax_t)(a), tap_b_ = (intmax_t)(b);                           \
		TAP_CHECK_(stop, tap_a_ op tap_b_, "%s %s %s: %jd vs %jd", #a, #op, #b, tap_a_,     \
			   tap_b_);                                                                \
	} while (0)

#define TAP_STR_(stop, a, b)                                                                       \
	do {                                                                                       \
		const char *tap_a_ = (a), *tap_b_ = (b);                                           \
		TAP_CHECK_(stop, tap_a_ && tap_b_ && strcmp(tap_a_, tap_b_) == 0,                  \
			   "%s == %s: '%s' vs '%s'", #a, #b, tap_a_ ? tap_a_ : "(null)",            \
			   tap_b_ ? tap_b_ : "(null)");                                            \
	} while (0)

#define TAP_MEM_(stop, a, b, n)                                                                    \
	TAP_CHECK_(stop, memcmp((a), (b), (n)) == 0, "%s and %s differ in %zu bytes", #a, #b,      \
		   (size_t)(n))

#define ASSERT_TRUE(c) TAP_CHECK_(1, (c), "expected true: %s", #c)
#define ASSERT_FALSE(c) TAP_CHECK_(1, !(c), "expected false: %s", #c)
#define ASSERT_EQ(a, b) TAP_INT_(1, a, ==, b)
#define ASSERT_NE(a, b) TAP_INT_(1, a, !=, b)
#define ASSERT_LT(a, b) TAP_INT_(1, a, <, b)
#define ASSERT_LE(a, b) TAP_INT_(1, a, <=, b)
#define ASSERT_GT(a, b) TAP_INT_(1, a, >, b)
#define ASSERT_GE(a, b) TAP_INT_(1, a, >=, b)
#define ASSERT_OK(r) TAP_INT_(1, r, >=, 0)
#define ASSERT_ERR(r, e) TAP_INT_(1, r, ==, -(e))
#define ASSERT_STREQ(a, b) TAP_STR_(1, a, b)
#define ASSERT_MEMEQ(a, b, n) TAP_MEM_(1, a, b, n)
#define ASSERT_NULL(p) TAP_CHECK_(1, (p) == NULL, "expected NULL: %s", #p)
#define ASSERT_NOT_NULL(p) TAP_CHECK_(1, (p) != NULL, "expected non-NULL: %s", #p)

#define EXPECT_TRUE(c) TAP_CHECK_(0, (c), "expected true: %s", #c)
#define EXPECT_FALSE(c) TAP_CHECK_(0, !(c), "expected false: %s", #c)
#define EXPECT_EQ(a, b) TAP_INT_(0, a, ==, b)
#define EXPECT_NE(a, b) TAP_INT_(0, a, !=, b)
#define EXPECT_OK(r) TAP_INT_(0, r, >=, 0)
#define EXPECT_ERR(r, e) TAP_INT_(0, r, ==, -(e))
#define EXPECT_STREQ(a, b) TAP_STR_(0, a, b)

#define SKIP(...)                                                                                  \
	do {                                                                                       \
		printf("# skip: ");                                                                \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		fflush(stdout);                                                                    \
		_exit(TAP_EXIT_SKIP);                                                              \
	} while (0)

/* Optional filter: run only tests whose name contains argv[1]. */
int main(int argc, char **argv)
{
	size_t failed = 0, n = 0;
	const char *filter = argc > 1 ? argv[1] : NULL;

	printf("TAP version 13\n");
	for (size_t i = 0; i < tap_n_tests; i++)
		if (!filter || strstr(tap_tests[i].name, filter))
			n++;
	printf("1..%zu\n", n);
	fflush(stdout);
	n = 0;
	for (size_t i = 0; i < tap_n_tests; i++) {
		const struct tap_test *t = &tap_tests[i];
		int status = 0;
		pid_t pid;

		if (filter && !strstr(t->name, filter))
			continue;
		n++;
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			t->fn();
			fflush(stdout);
			_exit(tap_failed_in_child ? 1 : 0);
		}
		/* Only EINTR is retried: any other error (ECHILD when SIGCHLD
		 * is ignored) would repeat forever. */
		bool reaped = true;

		while (waitpid(pid, &status, 0) < 0) {
			if (errno == EINTR)
				continue;
			reaped = false;
			break;
		}
		if (!reaped) {
			failed++;
			printf("not ok %zu - %s (waitpid: %s)\n", n, t->name, strerror(errno));
			fflush(stdout);
			continue;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			printf("ok %zu - %s\n", n, t->name);
		else if (WIFEXITED(status) && WEXITSTATUS(status) == TAP_EXIT_SKIP)
			printf("ok %zu - %s # SKIP\n", n, t->name);
		else {
			failed++;
			if (WIFSIGNALED(status))
				printf("not ok %zu - %s (signal %d)\n", n, t->name, WTERMSIG(status));
			else
				printf("not ok %zu - %s (exit %d)\n", n, t->name, WEXITSTATUS(status));
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#endif
