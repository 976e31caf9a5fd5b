/* SPDX-License-Identifier: MIT */
/* Corpus replayer: runs LLVMFuzzerTestOneInput over every file named on the
 * command line or found in the directories named there. Linked instead of
 * libFuzzer in ordinary builds, so `meson test --suite fuzz` replays each
 * target's corpus (and, under ASan+UBSan, catches regressions) on gcc too. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#define REPLAY_MAX_INPUT (1u << 20)

static int replay_file(int dirfd, const char *name)
{
	static uint8_t buf[REPLAY_MAX_INPUT];
	ssize_t n;
	size_t len = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror(name);
		return -1;
	}
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	close(fd);
	(void)LLVMFuzzerTestOneInput(buf, len);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(AT_FDCWD, argv[i]) < 0)
				return 1;
			count++;
			continue;
		}
		d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			if (replay_file(dirfd(d), de->d_name) < 0) {
				closedir(d);
				return 1;
			}
			count++;
		}
		closedir(d);
	}
	printf("replayed %u inputs\n", count);
	return count > 0 ? 0 : 1;
}
