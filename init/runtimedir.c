/* SPDX-License-Identifier: MIT */
#include "runtimedir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fail.h"
#include "fileio.h"
#include "macros.h"

#define ETC_PREFIX "/etc/"

/* "/etc/" NAME, or NULL when name is empty, has a slash or is too long. */
static const char *etc_name(const char *etc_path)
{
	const char *n;

	if (strncmp(etc_path, ETC_PREFIX, strlen(ETC_PREFIX)) != 0)
		return NULL;
	n = etc_path + strlen(ETC_PREFIX);
	return *n && !strchr(n, '/') && strlen(n) < NAME_MAX ? n : NULL;
}

bool runtimedir_is_linked(const char *name)
{
	char path[sizeof(ETC_PREFIX) + NAME_MAX];
	struct stat st;

	(void)snprintf(path, sizeof(path), ETC_PREFIX "%s", name);
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

const char *runtimedir_source(const char *etc_path)
{
	/* Two names only: the result must outlive the call. */
	static const char *const image_copies[][2] = {
		{ "/etc/passwd", RUNTIMEDIR_IMAGE_ETC "/passwd" },
		{ "/etc/group", RUNTIMEDIR_IMAGE_ETC "/group" },
	};
	const char *name = etc_name(etc_path);

	if (!name || !runtimedir_is_linked(name))
		return etc_path;
	for (size_t i = 0; i < ELEMENTSOF(image_copies); i++)
		if (strcmp(image_copies[i][0], etc_path) == 0)
			return image_copies[i][1];
	return etc_path;
}

bool runtimedir_is_runtime_link(const char *name)
{
	char want[sizeof(RUNTIMEDIR_PATH) + NAME_MAX + 1], got[sizeof(want) + 1];
	char path[sizeof(ETC_PREFIX) + NAME_MAX];
	ssize_t n;

	(void)snprintf(path, sizeof(path), ETC_PREFIX "%s", name);
	(void)snprintf(want, sizeof(want), RUNTIMEDIR_PATH "/%s", name);
	n = readlink(path, got, sizeof(got) - 1);
	if (n < 0)
		return false;
	got[n] = '\0';
	return strcmp(got, want) == 0;
}

int runtimedir_check_link(const char *step, const char *name)
{
	char want[sizeof(RUNTIMEDIR_PATH) + NAME_MAX + 1], got[sizeof(want) + 1];
	char path[sizeof(ETC_PREFIX) + NAME_MAX];
	ssize_t n;

	(void)snprintf(path, sizeof(path), ETC_PREFIX "%s", name);
	(void)snprintf(want, sizeof(want), RUNTIMEDIR_PATH "/%s", name);
	n = readlink(path, got, sizeof(got) - 1);
	if (n < 0)
		return init_fail(step, -errno, "cannot read the link %s", path);
	got[n] = '\0';
	/* Only the image's own link: anything else may lead out of the
	 * root-owned runtime directory. */
	if (strcmp(got, want) != 0)
		return init_fail(step, -ELOOP, "%s links to '%s', not to %s", path, got, want);
	return 0;
}

/* Root-owned and writable by no one else. */
static bool locked(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == 0 && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

int runtimedir_open(const char *step)
{
	_cleanup_close_ int runfd = -1, fd = -1;
	struct stat st;

	runfd = fileio_open_dir_nofollow(RUNTIMEDIR_PARENT);
	if (runfd < 0)
		return init_fail(step, runfd, "cannot open " RUNTIMEDIR_PARENT " without following symlinks");
	if (fstat(runfd, &st) < 0)
		return init_fail(step, -errno, "cannot stat " RUNTIMEDIR_PARENT);
	/* podman's --read-only /run tmpfs is root 0755; Docker keeps the
	 * image's. A sticky world-writable /run would let the agent plant
	 * RUNTIMEDIR_NAME before us (on a writable root). */
	if (!locked(&st))
		return init_fail(step, 0, RUNTIMEDIR_PARENT " is not root-owned or is writable by group or others");
	fd = openat(runfd, RUNTIMEDIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* podman's fresh /run tmpfs when the launcher mounted nothing
		 * at RUNTIMEDIR_PATH; EEXIST cannot happen (checked above) but
		 * a race with nobody is harmless: open it below. */
		if (mkdirat(runfd, RUNTIMEDIR_NAME, 0755) < 0 && errno != EEXIST)
			return init_fail(step, -errno, "cannot create " RUNTIMEDIR_PATH);
		fd = openat(runfd, RUNTIMEDIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return init_fail(step, -errno, "cannot open " RUNTIMEDIR_PATH " without following symlinks");
	if (fstat(fd, &st) < 0)
		return init_fail(step, -errno, "cannot stat " RUNTIMEDIR_PATH);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
		return init_fail(step, 0, RUNTIMEDIR_PATH " is not a root-owned directory");
	/* A tmpfs without mode= is 1777: ours (root owns it), so tighten it. */
	if ((st.st_mode & 07777) != 0755 && fchmod(fd, 0755) < 0)
		return init_fail(step, -errno, "cannot chmod " RUNTIMEDIR_PATH " to 0755");
	if (st.st_gid != 0 && fchown(fd, 0, 0) < 0)
		return init_fail(step, -errno, "cannot re-own " RUNTIMEDIR_PATH);
	return TAKE_FD(fd);
}
