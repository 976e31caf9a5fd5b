/* SPDX-License-Identifier: MIT */
#include "settings.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fail.h"
#include "fileio.h"
#include "log.h"
#include "macros.h"
#include "runtimedir.h"
#include "userdb.h"

/* NAME + ".moved-aside-" + 16 hex digits. */
#define ASIDE_NAME_MAX 96

/* A directory on the managed path must be root-owned and writable by no
 * one else, or whoever can write it can swap the file. */
static bool dir_is_locked(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == 0 && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* Moves a directory that squats on name out of the way (its content is
 * the agent's; keep it, under a new name). */
static int move_dir_aside(int dirfd, const char *name)
{
	char aside[ASIDE_NAME_MAX];
	unsigned long long rnd;

	if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
		return 0;
	if (errno != ENOTEMPTY && errno != EEXIST)
		return -errno;
	if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return negative_errno();
	(void)snprintf(aside, sizeof(aside), "%s.moved-aside-%016llx", name, rnd);
	/* RENAME_NOREPLACE: never clobber anything with the moved directory. */
	if (renameat2(dirfd, name, dirfd, aside, RENAME_NOREPLACE) < 0)
		return -errno;
	log_warn("Moved the directory squatting on '%s' to '%s'", name, aside);
	return 0;
}

/* What check_file() found wrong, for the repair line. */
#define SETTINGS_WHY_MAX 256

/* Appends ", text" (or "text" first) to why. */
static void why_add(char *why, size_t size, const char *text)
{
	size_t l = strlen(why);

	(void)snprintf(why + l, size - l, "%s%s", l ? ", " : "", text);
}

static const char *file_type(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	return "not a regular file";
}

/* 0 if dirfd/name, opened without following, is a root:root 0444
 * single-link regular file holding exactly buf; else a negative errno
 * (-EUCLEAN: present but not exactly right, with what is wrong in why:
 * type, owner, mode, links, content; -ELOOP: a symlink, said in why too). */
static int check_file(int dirfd, const char *name, const char *buf, size_t len, char *why, size_t why_size)
{
	_cleanup_free_ char *back = NULL;
	_cleanup_close_ int fd = -1;
	size_t back_len = 0;
	struct stat st;
	char one[96];
	int r;

	why[0] = '\0';
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		/* Present but not openable (a socket: ENXIO) is a repair too. */
		if (r == -ELOOP)
			why_add(why, why_size, "a symlink");
		else if (r != -ENOENT)
			why_add(why, why_size,
				fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? file_type(st.st_mode)
										 : "not openable");
		return r;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		why_add(why, why_size, file_type(st.st_mode));
		return -EUCLEAN;
	}
	if (st.st_uid != 0 || st.st_gid != 0) {
		(void)snprintf(one, sizeof(one), "owner %u:%u (expected root:root)", (unsigned)st.st_uid,
			       (unsigned)st.st_gid);
		why_add(why, why_size, one);
	}
	if ((st.st_mode & 07777) != SETTINGS_FILE_MODE) {
		(void)snprintf(one, sizeof(one), "mode %04o (expected %04o)", (unsigned)(st.st_mode & 07777),
			       (unsigned)SETTINGS_FILE_MODE);
		why_add(why, why_size, one);
	}
	if (st.st_nlink != 1) {
		(void)snprintf(one, sizeof(one), "%ju links (expected 1)", (uintmax_t)st.st_nlink);
		why_add(why, why_size, one);
	}
	r = fileio_read_fd(fd, len + 1, &back, &back_len);
	if (r < 0 && r != -EFBIG)
		return r;
	if (r == -EFBIG || back_len != len || memcmp(back, buf, len) != 0) {
		(void)snprintf(one, sizeof(one), "content differs (%jd bytes, expected %zu)", (intmax_t)st.st_size,
			       len);
		why_add(why, why_size, one);
	}
	return why[0] ? -EUCLEAN : 0;
}

/* Makes name in dirfd a root:root 0444 file with exactly buf, whatever
 * is there (a file, a symlink itself, or a directory moved aside), then
 * checks it again. A file that is already exactly right is left alone:
 * rewriting identical bytes and attributes would only cost fsyncs at every
 * start. A file that was there but wrong is reported in one line naming
 * what was wrong (a missing one is simply installed: a first start). where
 * is for messages. */
static int install_file(int dirfd, const char *where, const char *name, const char *buf, size_t len)
{
	char why[SETTINGS_WHY_MAX];
	struct stat st;
	int r;

	r = check_file(dirfd, name, buf, len, why, sizeof(why));
	if (r == 0)
		return 0;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		r = move_dir_aside(dirfd, name);
		if (r < 0)
			return init_fail("settings", r, "cannot remove the directory at %s/%s", where, name);
	}
	r = fileio_replace(dirfd, name, buf, len, SETTINGS_FILE_MODE, 0, 0);
	if (r < 0)
		return init_fail("settings", r, "cannot install %s/%s", where, name);
	if (why[0])
		log_warn("Repaired %s/%s (was: %s)", where, name, why);
	r = check_file(dirfd, name, buf, len, why, sizeof(why));
	if (r == -EUCLEAN)
		return init_fail("settings", 0, "%s/%s is not a root:root %04o file with the profile's bytes after installing it (%s)",
				 where, name, SETTINGS_FILE_MODE, why);
	if (r < 0)
		return init_fail("settings", r, "cannot verify %s/%s", where, name);
	return 0;
}

/* Opens (creating or repairing) dirfd/name as a directory owned by
 * uid:gid; mode is applied when creating, and to the managed directory
 * always. A non-directory (file or symlink) there is removed first; unlink
 * never follows. */
static int open_owned_dir(int dirfd, const char *where, const char *name, mode_t mode, uid_t uid,
			  gid_t gid, bool force_mode)
{
	_cleanup_close_ int fd = -1;
	char why[SETTINGS_WHY_MAX] = "", one[96];
	bool created = false;
	struct stat st;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
		/* O_DIRECTORY | O_NOFOLLOW answers ENOTDIR for a symlink too. */
		why_add(why, sizeof(why),
			errno == ELOOP || (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				? "a symlink"
				: "not a directory");
		if (unlinkat(dirfd, name, 0) < 0)
			return init_fail("settings", -errno, "cannot remove the non-directory %s/%s", where, name);
		errno = ENOENT;
	}
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(dirfd, name, mode) < 0)
			return init_fail("settings", -errno, "cannot create %s/%s", where, name);
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		force_mode = true;
		created = true;
	}
	if (fd < 0)
		return init_fail("settings", -errno, "cannot open %s/%s", where, name);
	if (fstat(fd, &st) < 0)
		return init_fail("settings", -errno, "cannot stat %s/%s", where, name);
	if (st.st_uid != uid || st.st_gid != gid) {
		if (fchown(fd, uid, gid) < 0)
			return init_fail("settings", -errno, "cannot re-own %s/%s", where, name);
		(void)snprintf(one, sizeof(one), "owner %u:%u (expected %u:%u)", (unsigned)st.st_uid,
			       (unsigned)st.st_gid, (unsigned)uid, (unsigned)gid);
		if (!created)
			why_add(why, sizeof(why), one);
	}
	if (force_mode && (st.st_mode & 07777) != mode) {
		if (fchmod(fd, mode) < 0)
			return init_fail("settings", -errno, "cannot chmod %s/%s", where, name);
		(void)snprintf(one, sizeof(one), "mode %04o (expected %04o)", (unsigned)(st.st_mode & 07777),
			       (unsigned)mode);
		if (!created)
			why_add(why, sizeof(why), one);
	}
	/* Never silent (a first start simply creates it). */
	if (why[0])
		log_warn("Repaired %s/%s (was: %s)", where, name, why);
	return TAKE_FD(fd);
}

int settings_lock(const char *home, uid_t uid, gid_t gid, const char *profile, size_t len)
{
	_cleanup_close_ int rootfd = -1, etcfd = -1, ccfd = -1, homefd = -1, userfd = -1;
	char where[USERDB_FIELD_MAX + sizeof("/" SETTINGS_USER_DIR)];
	struct stat st;
	int r;

	/* "/" and "/etc" are the image's: check them, never change them. */
	rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || fstat(rootfd, &st) < 0)
		return init_fail("settings", -errno, "cannot open /");
	if (!dir_is_locked(&st))
		return init_fail("settings", 0, "/ is not root-owned or is writable by group or others");
	etcfd = openat(rootfd, "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (etcfd < 0 || fstat(etcfd, &st) < 0)
		return init_fail("settings", -errno, "cannot open /etc without following symlinks");
	if (!dir_is_locked(&st))
		return init_fail("settings", 0, "/etc is not root-owned or is writable by group or others");
	if (runtimedir_is_runtime_link(SETTINGS_MANAGED_DIR)) {
		/* Read-only root: the image links it into the root-owned
		 * runtime tmpfs (runtimedir.h). Any other link is replaced by a
		 * directory below, as always (or fails on a read-only /etc). */
		_cleanup_close_ int runfd = -1;

		runfd = runtimedir_open("settings");
		if (runfd < 0)
			return runfd;
		ccfd = open_owned_dir(runfd, RUNTIMEDIR_PATH, SETTINGS_MANAGED_DIR, 0755, 0, 0, true);
	} else
		ccfd = open_owned_dir(etcfd, "/etc", SETTINGS_MANAGED_DIR, 0755, 0, 0, true);
	if (ccfd < 0)
		return ccfd;
	r = install_file(ccfd, "/etc/" SETTINGS_MANAGED_DIR, SETTINGS_MANAGED_FILE, profile, len);
	if (r < 0)
		return r;
	if (fstat(ccfd, &st) < 0 || !dir_is_locked(&st))
		return init_fail("settings", 0, "/etc/" SETTINGS_MANAGED_DIR " is not locked after fixing it");

	homefd = fileio_open_dir_nofollow(home);
	if (homefd < 0)
		return init_fail("settings", homefd, "cannot open '%s' without following symlinks", home);
	userfd = open_owned_dir(homefd, home, SETTINGS_USER_DIR, SETTINGS_USER_DIR_MODE, uid, gid, false);
	if (userfd < 0)
		return userfd;
	(void)snprintf(where, sizeof(where), "%s/" SETTINGS_USER_DIR, home);
	r = install_file(userfd, where, SETTINGS_USER_FILE, profile, len);
	if (r < 0)
		return r;
	return install_file(userfd, where, SETTINGS_LOCAL_FILE, SETTINGS_LOCAL_CONTENT,
			    strlen(SETTINGS_LOCAL_CONTENT));
}
