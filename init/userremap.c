/* SPDX-License-Identifier: MIT */
#include "userremap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fail.h"
#include "fileio.h"
#include "macros.h"

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

int userremap_apply(const struct userdb_remap *rm)
{
	_cleanup_close_ int etcfd = -1;
	int r;

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
