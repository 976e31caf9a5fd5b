/* SPDX-License-Identifier: MIT */
#include "memtrim.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "macros.h"

/* /proc/self/maps of PID 1 is a few dozen lines; read it in chunks. */
#define MAPS_CHUNK 4096
#define MAPS_LINE_MAX 512

static void release_line(const char *line)
{
	unsigned long start, end;
	char *p;
	const char *path;

	/* "START-END PERMS OFFSET DEV INODE PATH" */
	errno = 0;
	start = strtoul(line, &p, 16);
	if (errno != 0 || *p != '-')
		return;
	end = strtoul(p + 1, &p, 16);
	if (errno != 0 || *p != ' ')
		return;
	path = strchr(p, '/');
	/* Only private, read+execute, file-backed mappings: program text.
	 * ("[vdso]" and anonymous mappings have no '/' path.) */
	if (strncmp(p + 1, "r-xp ", 5) != 0 || !path || end <= start)
		return;
	(void)madvise((void *)start, end - start, MADV_DONTNEED);
}

void memtrim_after_startup(void)
{
	char buf[MAPS_CHUNK], line[MAPS_LINE_MAX];
	size_t ll = 0;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	(void)malloc_trim(0);
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = '\0';
			release_line(line);
			ll = 0;
		}
	}
}
