/* SPDX-License-Identifier: MIT */
/* lib/fdio.c: the capped whole-file read and the write-everything loop. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdio.h"
#include "macros.h"
#include "tap.h"

/* A memfd holding n bytes of 'x', its offset at the end. */
static int filled(size_t n)
{
	int fd = memfd_create("fdio", MFD_CLOEXEC);
	char *b = malloc(n + 1);

	if (fd < 0 || !b)
		abort();
	memset(b, 'x', n);
	if (fdio_write_all(fd, b, n) < 0)
		abort();
	free(b);
	return fd;
}

TEST(read_capped_limits)
{
	static const struct {
		size_t size, max;
		int r;
	} cases[] = {
		{0, 0, 0}, {0, 16, 0}, {15, 16, 0}, {16, 16, 0}, {17, 16, -EFBIG}, {1, 0, -EFBIG},
		{70000, 70000, 0}, {70001, 70000, -EFBIG},
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		int fd = filled(cases[i].size);
		char *buf = (char *)"untouched";
		size_t len = 12345;
		int r = fdio_read_capped(fd, cases[i].max, FDIO_PREAD, &buf, &len);

		EXPECT_EQ(r, cases[i].r);
		if (r == 0) {
			EXPECT_EQ(len, cases[i].size);
			EXPECT_EQ(strlen(buf), cases[i].size); /* NUL-terminated, no NUL inside */
			free(buf);
		} else {
			EXPECT_STREQ(buf, "untouched");
			EXPECT_EQ(len, 12345);
		}
		close(fd);
	}
}

TEST(read_capped_offset)
{
	int fd = filled(10);
	char *buf = NULL;
	size_t len = 0;

	/* Plain read starts at the fd's offset (the end here); pread at 0. */
	ASSERT_OK(fdio_read_capped(fd, 64, 0, &buf, &len));
	EXPECT_EQ(len, 0);
	free(buf);
	ASSERT_OK(fdio_read_capped(fd, 64, FDIO_PREAD | FDIO_WIPE, &buf, &len));
	EXPECT_EQ(len, 10);
	EXPECT_STREQ(buf, "xxxxxxxxxx");
	free(buf);
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_OK(fdio_read_capped(fd, 10, 0, &buf, &len));
	EXPECT_EQ(len, 10);
	free(buf);
	close(fd);
}

TEST(read_capped_errors)
{
	char *buf = NULL;
	size_t len = 0;
	int p[2];

	EXPECT_ERR(fdio_read_capped(-1, 16, 0, &buf, &len), EBADF);
	EXPECT_ERR(fdio_read_capped(-1, SIZE_MAX, 0, &buf, &len), EFBIG);
	EXPECT_TRUE(buf == NULL);
	/* A pipe: read works, pread does not (ESPIPE). */
	ASSERT_OK(pipe(p));
	ASSERT_OK(fdio_write_all(p[1], "abc", 3));
	close(p[1]);
	EXPECT_ERR(fdio_read_capped(p[0], 16, FDIO_PREAD, &buf, &len), ESPIPE);
	ASSERT_OK(fdio_read_capped(p[0], 16, 0, &buf, &len));
	EXPECT_EQ(len, 3);
	EXPECT_STREQ(buf, "abc");
	free(buf);
	close(p[0]);
}

TEST(write_all_errors)
{
	int p[2];

	EXPECT_ERR(fdio_write_all(-1, "a", 1), EBADF);
	EXPECT_OK(fdio_write_all(-1, "", 0)); /* nothing to write: no call */
	ASSERT_OK(pipe(p));
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	EXPECT_ERR(fdio_write_all(p[1], "a", 1), EPIPE);
	close(p[1]);
}
