/* SPDX-License-Identifier: MIT */
/* Per-command cgroups, where the daemon's cgroup v2 directory is writable
 * (delegated: a systemd unit with Delegate=yes, a user@.service, or a
 * subtree chowned to the user). Each command gets a child cgroup of the
 * daemon's own, named after its request id; the command's first process
 * joins it before execve (spawn.c writes "0" to the cgroup.procs fd opened
 * here), so everything it starts stays inside, setsid and double-fork
 * descendants included, whatever namespaces are available. cgroup.kill
 * (Linux 5.14) ends them all at once on timeout, disconnect, shutdown and
 * after the command's exit; the cgroup is removed when it is empty.
 *
 * Where it is not writable (the common case for a daemon started from a
 * terminal) nothing changes: the per-command pid namespace under
 * sandbox-execd-reap, or the process group, is what kills the tree. The
 * first request probes once and the daemon logs which way it went. A
 * failure for one request is logged and the request goes on without a
 * cgroup (still under the reaper): it is an extra layer, not the only one.
 *
 * The subtree is the user's and so is the command: one that writes itself
 * into the parent's cgroup.procs leaves its cgroup. spawn.c therefore also
 * gives it a cgroup namespace rooted at its cgroup where it can (under the
 * reaper: CAP_SYS_ADMIN in its own user namespace), which the kernel
 * enforces where the cgroup2 mount has nsdelegate (SECURITY.md).
 *
 * Not done here: no controllers are enabled (no limits: the cgroup is for
 * killing and for `systemd-cgls`-style inspection); a daemon killed with
 * SIGKILL leaves its commands' cgroups behind (their leaders die with
 * PDEATHSIG and, under the reaper, their namespaces with them). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "execd.h"
#include "fdio.h"
#include "log.h"
#include "macros.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CGROUP_PREFIX "sandbox-execd-"
#define CGROUP_MAX_PROCFILE ((size_t)64 * 1024) /* /proc/self/{cgroup,mountinfo} */
#define CGROUP_EMPTY_WAIT_MS 1000 /* for a killed cgroup to empty before rmdir */

/* The daemon's cgroup directory, probed once (the daemon does not move). */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int base_fd = -1; /* -1: no usable cgroup */

static int read_proc(const char *path, char **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n;

	if (fd < 0)
		return -errno;
	return fdio_read_capped(fd, CGROUP_MAX_PROCFILE, 0, ret, &n);
}

/* The daemon's cgroup v2 path ("0::PATH" in /proc/self/cgroup). */
static int own_cgroup_path(char *buf, size_t len)
{
	_cleanup_free_ char *text = NULL;
	int r = read_proc("/proc/self/cgroup", &text);

	if (r < 0)
		return r;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "0::", 3) == 0) {
			if (strlen(line + 3) >= len || line[3] != '/')
				return -ENAMETOOLONG;
			(void)snprintf(buf, len, "%s", line + 3);
			return 0;
		}
	}
	return -ENOENT; /* cgroup v1 only */
}

/* The mount point of the cgroup2 hierarchy whose root is an ancestor of
 * path (mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - cgroup2 ...);
 * *ret_rootlen: the length of its ROOT, to strip from path. Mount points
 * with escaped characters (\040) are not ours to guess: skipped. */
static int cgroup2_mount(const char *path, char *buf, size_t len, size_t *ret_rootlen)
{
	_cleanup_free_ char *text = NULL;
	int r = read_proc("/proc/self/mountinfo", &text);

	if (r < 0)
		return r;
	for (char *line = text, *next; line && *line; line = next) {
		char root[PATH_MAX], mnt[PATH_MAX];
		const char *sep;
		size_t rl;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep, " - cgroup2 ", 11) != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 || strchr(mnt, '\\') ||
		    strchr(root, '\\'))
			continue;
		rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
		if (rl > 0 && (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0')))
			continue;
		if (strlen(mnt) >= len)
			return -ENAMETOOLONG;
		(void)snprintf(buf, len, "%s", mnt);
		*ret_rootlen = rl;
		return 0;
	}
	return -ENOENT;
}

/* Can we make a child, move into it (its cgroup.procs and ours writable)
 * and kill it (cgroup.kill)? Tried on a probe cgroup, removed again. */
static int probe_writable(int fd)
{
	char name[64];
	_cleanup_close_ int child = -1, kill_fd = -1, procs = -1;
	int r = 0;

	if (faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) < 0)
		return -errno;
	(void)snprintf(name, sizeof(name), CGROUP_PREFIX "probe-%ld", (long)getpid());
	/* EEXIST: left by an earlier daemon of this pid that was killed
	 * mid-probe; empty, so it can go. */
	if (mkdirat(fd, name, 0755) < 0 &&
	    (errno != EEXIST || unlinkat(fd, name, AT_REMOVEDIR) < 0 || mkdirat(fd, name, 0755) < 0))
		return -errno;
	child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (child < 0)
		r = -errno;
	if (r >= 0 && (kill_fd = openat(child, "cgroup.kill", O_WRONLY | O_CLOEXEC)) < 0)
		r = -errno; /* ENOENT: a kernel before 5.14 */
	if (r >= 0 && (procs = openat(child, "cgroup.procs", O_WRONLY | O_CLOEXEC)) < 0)
		r = -errno;
	(void)unlinkat(fd, name, AT_REMOVEDIR);
	return r;
}

static void probe(void)
{
	char path[PATH_MAX], mnt[PATH_MAX], dir[2 * PATH_MAX];
	_cleanup_close_ int fd = -1;
	struct statfs sf;
	size_t rootlen = 0;
	int r;

	r = own_cgroup_path(path, sizeof(path));
	if (r >= 0)
		r = cgroup2_mount(path, mnt, sizeof(mnt), &rootlen);
	if (r >= 0) {
		(void)snprintf(dir, sizeof(dir), "%s%s", mnt, path + rootlen);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fstatfs(fd, &sf) < 0)
			r = -errno;
		else if (sf.f_type != CGROUP2_SUPER_MAGIC)
			r = -ENOTDIR;
	}
	if (r >= 0)
		r = probe_writable(fd);
	if (r < 0) {
		log_info("No per-command cgroups (the daemon's cgroup v2 directory is not usable: %s): "
			 "commands' process trees are killed through their pid namespace or process "
			 "group",
			 strerror(-r));
		return;
	}
	log_info("Per-command cgroups under '%s'", dir);
	base_fd = TAKE_FD(fd);
}

void cgroup_cmd_create(const char *id, struct cgroup_cmd *ret)
{
	*ret = (struct cgroup_cmd){ .dir_fd = -1, .procs_fd = -1, .kill_fd = -1 };
	(void)pthread_once(&probe_once, probe);
	if (base_fd < 0)
		return;
	(void)snprintf(ret->name, sizeof(ret->name), CGROUP_PREFIX "%s", id);
	if (mkdirat(base_fd, ret->name, 0755) < 0) {
		log_warn("request %s: cannot create cgroup '%s': %s, ignoring", id, ret->name,
			 strerror(errno));
		return;
	}
	ret->dir_fd = openat(base_fd, ret->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ret->dir_fd >= 0)
		ret->procs_fd = openat(ret->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (ret->procs_fd >= 0)
		ret->kill_fd = openat(ret->dir_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
	if (ret->kill_fd < 0) {
		log_warn("request %s: cannot open cgroup '%s': %s, ignoring", id, ret->name,
			 strerror(errno));
		/* Empty: nothing joined it yet. */
		(void)unlinkat(base_fd, ret->name, AT_REMOVEDIR);
		ret->procs_fd = safe_close(ret->procs_fd);
		ret->dir_fd = safe_close(ret->dir_fd);
	}
}

void cgroup_cmd_kill(const struct cgroup_cmd *cg)
{
	/* Every process in it and below, SIGKILL, atomically with respect to
	 * forks (the kernel's cgroup.kill). */
	if (cg->kill_fd >= 0 && pwrite(cg->kill_fd, "1", 1, 0) != 1)
		log_warn("Cannot kill cgroup '%s': %s, ignoring", cg->name, strerror(errno));
}

/* Waits until "populated 0" in cgroup.events (it changes with POLLPRI),
 * or the deadline. */
static void wait_empty(int dir_fd)
{
	_cleanup_close_ int ev = openat(dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	struct timespec t0;

	if (ev < 0)
		return;
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char buf[256];
		ssize_t n = pread(ev, buf, sizeof(buf) - 1, 0);
		struct pollfd pfd = { .fd = ev, .events = POLLPRI };
		struct timespec t;
		long long left;

		if (n <= 0)
			return;
		buf[n] = '\0';
		if (strstr(buf, "populated 0"))
			return;
		(void)clock_gettime(CLOCK_MONOTONIC, &t);
		left = CGROUP_EMPTY_WAIT_MS - ((long long)(t.tv_sec - t0.tv_sec) * 1000 +
					       (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&pfd, 1, (int)left) < 0)
			return;
	}
}

void cgroup_cmd_remove(struct cgroup_cmd *cg)
{
	/* A request's processes do not outlive it. The kernel removes only an
	 * empty cgroup (EBUSY otherwise, atomically: nothing joins a removed
	 * one), so an rmdir that succeeds proves there was nothing left to
	 * kill -- the usual case under the reaper, whose namespace is empty
	 * once its PID 1 has been reaped. Anything still in it (setsid
	 * descendants without namespaces, a process of the user's moved in)
	 * is killed, waited for and then removed. */
	if (cg->dir_fd >= 0 && base_fd >= 0 && unlinkat(base_fd, cg->name, AT_REMOVEDIR) < 0) {
		cgroup_cmd_kill(cg);
		wait_empty(cg->dir_fd);
		if (unlinkat(base_fd, cg->name, AT_REMOVEDIR) < 0)
			log_warn("Cannot remove cgroup '%s': %s, ignoring", cg->name, strerror(errno));
	}
	cg->kill_fd = safe_close(cg->kill_fd);
	cg->procs_fd = safe_close(cg->procs_fd);
	cg->dir_fd = safe_close(cg->dir_fd);
}
