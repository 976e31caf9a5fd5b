/* SPDX-License-Identifier: MIT */
#include "userremap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fail.h"
#include "fileio.h"
#include "macros.h"
#include "runtimedir.h"

static int replace_one(int etcfd, const char *name, const char *text, size_t len)
{
	_cleanup_free_ char *back = NULL;
	size_t back_len = 0;
	struct stat st;
	int r;

	/* Same owner and mode as the file we replace (normally root 0644). */
	if (fstatat(etcfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return init_fail("identity", -errno, "cannot stat /etc/%s", name);
	if (!S_ISREG(st.st_mode))
		return init_fail("identity", 0, "/etc/%s is not a regular file", name);
	r = fileio_replace(etcfd, name, text, len, st.st_mode & 07777, st.st_uid, st.st_gid);
	if (r < 0)
		return init_fail("identity", r, "cannot replace /etc/%s", name);
	r = fileio_read(etcfd, name, INIT_FILE_MAX, &back, &back_len);
	if (r < 0)
		return init_fail("identity", r, "cannot read back /etc/%s", name);
	if (back_len != len || memcmp(back, text, len) != 0)
		return init_fail("identity", 0, "/etc/%s changed under us while being replaced", name);
	return 0;
}

/* Read-only root: the runtime directory's copy of name is written at every
 * start (the tmpfs is empty), from the remapped text when it changed, else
 * from the image's copy, root:root 0644. */
static int write_runtime_one(int runfd, const char *name, bool changed, const char *text, size_t len)
{
	char src[sizeof(RUNTIMEDIR_IMAGE_ETC "/") + sizeof("passwd")];
	_cleanup_free_ char *image = NULL, *back = NULL;
	size_t image_len = 0, back_len = 0;
	int r;

	r = runtimedir_check_link("identity", name);
	if (r < 0)
		return r;
	if (!changed) {
		(void)snprintf(src, sizeof(src), RUNTIMEDIR_IMAGE_ETC "/%s", name);
		r = fileio_read(AT_FDCWD, src, INIT_FILE_MAX, &image, &image_len);
		if (r < 0)
			return init_fail("identity", r, "cannot read %s", src);
		text = image;
		len = image_len;
	}
	r = fileio_replace(runfd, name, text, len, 0644, 0, 0);
	if (r < 0)
		return init_fail("identity", r, "cannot write " RUNTIMEDIR_PATH "/%s", name);
	r = fileio_read(runfd, name, INIT_FILE_MAX, &back, &back_len);
	if (r < 0)
		return init_fail("identity", r, "cannot read back " RUNTIMEDIR_PATH "/%s", name);
	if (back_len != len || memcmp(back, text, len) != 0)
		return init_fail("identity", 0, RUNTIMEDIR_PATH "/%s changed under us while being written", name);
	return 0;
}

static int apply_runtime(const struct userdb_remap *rm)
{
	_cleanup_close_ int runfd = runtimedir_open("identity");
	int r;

	if (runfd < 0)
		return runfd;
	/* group first, as below. */
	r = write_runtime_one(runfd, "group", rm->group_changed, rm->group, rm->group_len);
	if (r < 0)
		return r;
	return write_runtime_one(runfd, "passwd", rm->passwd_changed, rm->passwd, rm->passwd_len);
}

int userremap_apply(const struct userdb_remap *rm)
{
	_cleanup_close_ int etcfd = -1;
	bool lp = runtimedir_is_linked("passwd"), lg = runtimedir_is_linked("group");
	int r;

	if (lp != lg)
		return init_fail("identity", 0, "only one of /etc/passwd and /etc/group links to " RUNTIMEDIR_PATH);
	if (lp)
		return apply_runtime(rm);
	if (!rm->passwd_changed && !rm->group_changed)
		return 0;
	etcfd = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (etcfd < 0)
		return init_fail("identity", -errno, "cannot open /etc");
	/* group first: a passwd line must never name a GID whose group is
	 * not yet there. */
	if (rm->group_changed) {
		r = replace_one(etcfd, "group", rm->group, rm->group_len);
		if (r < 0)
			return r;
	}
	if (rm->passwd_changed) {
		r = replace_one(etcfd, "passwd", rm->passwd, rm->passwd_len);
		if (r < 0)
			return r;
	}
	return 0;
}
