/* SPDX-License-Identifier: MIT */
#include "homeown.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fail.h"
#include "fileio.h"
#include "log.h"
#include "macros.h"

#define STAMP_MAX 32
#define STATX_WANT (STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_GID | STATX_INO | STATX_MNT_ID)

struct walk {
	uid_t uid;
	gid_t gid;
	dev_t dev; /* the home's filesystem */
	uint64_t mnt_id;
	bool have_mnt_id;
	bool have_ws; /* /workspace exists: never enter it */
	dev_t ws_dev;
	ino_t ws_ino;
	unsigned long changed, skipped_mounts, skipped_links;
	bool incomplete;
};

static dev_t stx_dev(const struct statx *s)
{
	return makedev(s->stx_dev_major, s->stx_dev_minor);
}

/* True if the stamp proves a previous complete walk for uid:gid. */
static bool stamp_valid(int homefd, uid_t uid, gid_t gid)
{
	char want[STAMP_MAX], got[STAMP_MAX];
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;

	fd = openat(homefd, HOMEOWN_STAMP, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* Only PID 1 (root with CAP_CHOWN) can make a root-owned file here;
	 * nlink == 1 rules out a hard link to some other root file. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_gid != 0 ||
	    st.st_nlink != 1 || (st.st_mode & 07777) != 0444)
		return false;
	(void)snprintf(want, sizeof(want), "%u:%u\n", (unsigned)uid, (unsigned)gid);
	n = read(fd, got, sizeof(got));
	return n == (ssize_t)strlen(want) && memcmp(got, want, (size_t)n) == 0;
}

/* Re-owns dirfd/name without following it, after checking through an
 * O_PATH fd that it is still the inode statx() saw. */
static int chown_entry(struct walk *w, int dirfd, const char *name, const struct statx *stx)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_ino != stx->stx_ino || st.st_dev != stx_dev(stx))
		return -ESTALE;
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && st.st_uid == 0)
		return -EMLINK;
	if (fchownat(fd, "", w->uid, w->gid, AT_EMPTY_PATH) < 0)
		return -errno;
	w->changed++;
	return 0;
}

/* Opens dirfd/name as a directory for descent if it is still the inode
 * statx() saw and on the home's mount. */
static int open_subdir(const struct walk *w, int dirfd, const char *name, const struct statx *stx)
{
	_cleanup_close_ int fd = -1;
	struct statx s;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_WANT, &s) < 0)
		return -errno;
	if (s.stx_ino != stx->stx_ino || stx_dev(&s) != stx_dev(stx) || stx_dev(&s) != w->dev)
		return -ESTALE;
	if (w->have_mnt_id && (s.stx_mask & STATX_MNT_ID) && s.stx_mnt_id != w->mnt_id)
		return -EXDEV;
	return TAKE_FD(fd);
}

/* Handles one directory entry; returns a directory fd to descend into,
 * 0 to go on, or a negative errno for a real failure. */
static int visit(struct walk *w, int dirfd, const char *name, size_t depth)
{
	struct statx stx;
	bool is_dir;
	int r;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANT, &stx) < 0)
		/* ENOENT: removed while we walk; nothing to own. */
		return errno == ENOENT ? 0 : -errno;
	/* Another filesystem, or a bind mount of this one: not ours. */
	if (stx_dev(&stx) != w->dev ||
	    (w->have_mnt_id && (stx.stx_mask & STATX_MNT_ID) && stx.stx_mnt_id != w->mnt_id)) {
		w->skipped_mounts++;
		return 0;
	}
	is_dir = S_ISDIR(stx.stx_mode);
	if (is_dir && w->have_ws && stx_dev(&stx) == w->ws_dev && stx.stx_ino == w->ws_ino) {
		w->skipped_mounts++;
		return 0;
	}
	if (stx.stx_uid != w->uid || stx.stx_gid != w->gid) {
		r = chown_entry(w, dirfd, name, &stx);
		if (r == -EMLINK) {
			/* A second name for a root-owned file (a hard link
			 * devuser made where protected_hardlinks is off):
			 * chowning it would hand devuser that file. */
			log_warn("Not re-owning root-owned hard-linked file '%s', ignoring", name);
			w->skipped_links++;
		} else if (r == -ENOENT || r == -ESTALE) {
			return 0; /* changed under us: leave it */
		} else if (r < 0) {
			return r;
		}
	}
	if (!is_dir)
		return 0;
	if (depth >= HOMEOWN_MAX_DEPTH) {
		log_warn("Directory '%s' is deeper than %d levels, not descending", name, HOMEOWN_MAX_DEPTH);
		w->incomplete = true;
		return 0;
	}
	r = open_subdir(w, dirfd, name, &stx);
	if (r == -ENOENT || r == -ESTALE || r == -ENOTDIR || r == -ELOOP)
		return 0;
	if (r == -EXDEV) {
		w->skipped_mounts++;
		return 0;
	}
	return r;
}

/* Iterative depth-first walk; at most HOMEOWN_MAX_DEPTH open directories. */
static int walk_tree(struct walk *w, int homefd)
{
	DIR *stack[HOMEOWN_MAX_DEPTH + 1];
	size_t depth = 0;
	int fd, r = 0;

	fd = fcntl(homefd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	stack[0] = fdopendir(fd);
	if (!stack[0]) {
		r = -errno;
		(void)close(fd);
		return r;
	}
	depth = 1;
	while (depth > 0) {
		DIR *d = stack[depth - 1];
		struct dirent *de;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno != 0 && r == 0)
				r = -errno;
			(void)closedir(d);
			depth--;
			continue;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (depth == 1 && strcmp(de->d_name, HOMEOWN_STAMP) == 0)
			continue;
		if (r < 0)
			continue; /* unwinding after an error: just close */
		fd = visit(w, dirfd(d), de->d_name, depth);
		if (fd < 0) {
			r = fd;
			(void)init_fail("home", r, "cannot fix the ownership of '%s'", de->d_name);
			continue;
		}
		if (fd == 0)
			continue;
		stack[depth] = fdopendir(fd);
		if (!stack[depth]) {
			r = -errno;
			(void)close(fd);
			(void)init_fail("home", r, "cannot read directory '%s'", de->d_name);
			continue;
		}
		depth++;
	}
	return r;
}

int homeown_fix(const char *home, uid_t uid, gid_t gid)
{
	struct walk w = {.uid = uid, .gid = gid};
	_cleanup_close_ int homefd = -1;
	struct statx hs, ws;
	char stamp[STAMP_MAX];
	int r;

	homefd = fileio_open_dir_nofollow(home);
	if (homefd == -ENOENT) {
		/* The parent is root's (normally /home): create the home there. */
		if (mkdir(home, 0755) < 0 && errno != EEXIST)
			return init_fail("home", -errno, "cannot create '%s'", home);
		homefd = fileio_open_dir_nofollow(home);
	}
	if (homefd < 0)
		return init_fail("home", homefd, "cannot open '%s' without following symlinks", home);
	if (statx(homefd, "", AT_EMPTY_PATH, STATX_WANT, &hs) < 0)
		return init_fail("home", -errno, "cannot stat '%s'", home);
	w.dev = stx_dev(&hs);
	w.have_mnt_id = hs.stx_mask & STATX_MNT_ID;
	w.mnt_id = hs.stx_mnt_id;
	if (statx(AT_FDCWD, HOMEOWN_WORKSPACE, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANT, &ws) == 0) {
		w.have_ws = true;
		w.ws_dev = stx_dev(&ws);
		w.ws_ino = ws.stx_ino;
		if (w.ws_dev == w.dev && w.ws_ino == hs.stx_ino)
			return init_fail("home", 0, "home '%s' is " HOMEOWN_WORKSPACE ", refusing to re-own it",
					 home);
	}

	/* Warm start: the home is right and the stamp says the tree is. */
	if (hs.stx_uid == uid && hs.stx_gid == gid && stamp_valid(homefd, uid, gid)) {
		log_debug("Home '%s' already owned by %u:%u (stamp), skipping the walk", home,
			  (unsigned)uid, (unsigned)gid);
		return 0;
	}

	/* Invalidate first: a walk that dies half-way must not leave a stamp
	 * claiming the tree is right. ENOENT: there was none. */
	if (unlinkat(homefd, HOMEOWN_STAMP, 0) < 0 && errno != ENOENT && errno != EISDIR)
		return init_fail("home", -errno, "cannot remove the old stamp in '%s'", home);
	if (hs.stx_uid != uid || hs.stx_gid != gid) {
		if (fchown(homefd, uid, gid) < 0)
			return init_fail("home", -errno, "cannot re-own '%s'", home);
		w.changed++;
	}
	r = walk_tree(&w, homefd);
	if (r < 0)
		return r; /* walk_tree printed the failure */
	log_debug("Home '%s': %lu entries re-owned, %lu mounts and %lu hard links skipped", home,
		  w.changed, w.skipped_mounts, w.skipped_links);
	if (w.incomplete)
		return 0;
	(void)snprintf(stamp, sizeof(stamp), "%u:%u\n", (unsigned)uid, (unsigned)gid);
	r = fileio_replace(homefd, HOMEOWN_STAMP, stamp, strlen(stamp), 0444, 0, 0);
	if (r < 0)
		/* Only costs the next start a full walk. */
		log_warn_errno(r, "Cannot write the ownership stamp in '%s': %s, ignoring", home, strerror(-(r)));
	return 0;
}
