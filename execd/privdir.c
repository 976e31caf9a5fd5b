/* SPDX-License-Identifier: MIT */
/* The tools' private directories, kept for the next command when they come
 * back exactly as they were made.
 *
 * Every command runs in an empty directory of its own (toolrun.c). Making
 * and removing one per request was the daemon's largest cost after the
 * spawn on ext4 (mkdir searches the inode bitmap past every recently freed
 * inode). A directory is therefore reused, but only when no one can tell
 * it from a new one: the command ran in a pid namespace of its own, so it
 * and every descendant are gone (spawn.c), and the directory is still the
 * same inode at the same name, ours, mode 0700, with no entries, no
 * subdirectories and no extended attributes (so no ACL). Anything else is
 * removed as before. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "execd.h"
#include "macros.h"

int privdir_take(struct execd *d, const char *id, char *ret_name, size_t name_len, int *ret_fd)
{
	struct privdir_pool *p = &d->privdirs;
	int fd;

	pthread_mutex_lock(&p->lock);
	if (p->n > 0) {
		p->n--;
		(void)snprintf(ret_name, name_len, "%s", p->e[p->n].name);
		*ret_fd = p->e[p->n].fd;
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	pthread_mutex_unlock(&p->lock);
	if ((size_t)snprintf(ret_name, name_len, "run-%s", id) >= name_len)
		return -ENAMETOOLONG;
	if (mkdirat(d->work_fd, ret_name, 0700) < 0)
		return -errno;
	fd = openat(d->work_fd, ret_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

/* Empty: getdents64 returns "." and ".." only. */
static bool dir_empty(int fd)
{
	union {
		struct dirent64 d;
		char b[1024];
	} buf;
	size_t seen = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return false;
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf.b, sizeof(buf.b));

		if (n < 0)
			return false;
		if (n == 0)
			return true;
		for (long off = 0; off < n;) {
			const struct dirent64 *e = (const struct dirent64 *)(buf.b + off);

			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				return false;
			if (++seen > 2)
				return false;
			off += e->d_reclen;
		}
	}
}

bool privdir_give_back(struct execd *d, const char *name, int fd)
{
	struct privdir_pool *p = &d->privdirs;
	struct stat st, at;
	bool kept = false;

	if (!spawn_namespaces_in_use())
		return false; /* a setsid descendant may still work in it */
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0700 || st.st_nlink != 2)
		return false;
	if (fstatat(d->work_fd, name, &at, AT_SYMLINK_NOFOLLOW) < 0 || at.st_dev != st.st_dev ||
	    at.st_ino != st.st_ino)
		return false;
	if (flistxattr(fd, NULL, 0) != 0 || !dir_empty(fd))
		return false;
	pthread_mutex_lock(&p->lock);
	if (p->n < EXECD_PRIVDIR_POOL) {
		(void)snprintf(p->e[p->n].name, sizeof(p->e[p->n].name), "%s", name);
		p->e[p->n].fd = fd;
		p->n++;
		kept = true;
	}
	pthread_mutex_unlock(&p->lock);
	return kept;
}

void privdir_drain(struct execd *d)
{
	struct privdir_pool *p = &d->privdirs;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		safe_close(p->e[i].fd);
		/* Empty when kept; ENOENT/ENOTEMPTY (someone else's doing):
		 * left as it is, like any leftover of a command. */
		(void)unlinkat(d->work_fd, p->e[i].name, AT_REMOVEDIR);
	}
	p->n = 0;
	pthread_mutex_unlock(&p->lock);
}
