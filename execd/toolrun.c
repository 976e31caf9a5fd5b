/* SPDX-License-Identifier: MIT */
/* Carrying out a tool's run plan (lib/toolfiles.c): the private directory
 * the tool runs in, the files it may read (opened beneath the mapped
 * workspace with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), regular
 * files only, size-capped, copied into sealed memfds so the agent cannot
 * change them between the check and the read, handed over as /dev/fd/N),
 * terraform's copies of its .tf, .tfvars and lock files, and the per-tool fixed
 * environment. The daemon-wide part (toolrun_init) makes the work
 * directory and terraform's daemon-owned CLI configuration and plugin
 * cache. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "execd.h"
#include "log.h"
#include "macros.h"
#include "psqlmeta.h"

#define TOOLRUN_MAX_FILE ((size_t)8 * 1024 * 1024)  /* one file argument */
#define TOOLRUN_MAX_TF_FILES 256                     /* terraform files copied */
#define TOOLRUN_MAX_TF_BYTES ((size_t)16 * 1024 * 1024)
#define TOOLRUN_PLANS_DIR "tf-plans"                 /* in the work directory */
#define TOOLRUN_MAX_PLANS 32                         /* kept; the oldest go first */
#define TOOLRUN_MAX_PLAN ((off_t)64 * 1024 * 1024)   /* bytes of one kept plan */

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Reads a whole regular file (fd) of at most max bytes into a malloc'd
 * buffer. -EFBIG over max, -EINVAL for anything but a regular file. */
static int read_regular(int fd, size_t max, char **ret, size_t *ret_len)
{
	struct stat st;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((size_t)st.st_size > max)
		return -EFBIG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > (size_t)st.st_size)
			return -EFBIG; /* grew while read */
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

/* Removes name (beneath dirfd) and everything in it, without following
 * symlinks; the tool may have left files and directories there. */
static void rm_tree_at(int parent, const char *name, unsigned depth)
{
	int fd;
	DIR *dir;
	struct dirent *e;

	if (unlinkat(parent, name, 0) == 0 || depth > 64)
		return;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		safe_close(fd);
		return;
	}
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			rm_tree_at(dirfd(dir), e->d_name, depth + 1);
	(void)closedir(dir);
	(void)unlinkat(parent, name, AT_REMOVEDIR);
}

int toolrun_check_tool(const char *name, const char *path, const char *rp)
{
	_cleanup_close_ int fd = open(rp, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	char head[2];
	const char *why = NULL;
	ssize_t n;
	glob_t g = { 0 };

	if (fd < 0)
		return log_error_errno(-errno, "tool '%s': cannot open '%s': %s", name, path,
				       strerror(errno));
	do
		n = read(fd, head, sizeof(head));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return log_error_errno(-errno, "tool '%s': cannot read '%s': %s", name, path,
				       strerror(errno));
	if (toolfiles_check_binary(name, rp, head, (size_t)n, &why) >= 0)
		return 0;
	/* Name the binary to configure instead (Debian: one per version). */
	if (glob("/usr/lib/postgresql/*/bin/psql", 0, NULL, &g) == 0 && g.gl_pathc > 0)
		log_error("tool '%s': '%s' is refused: %s; name the real binary: tool %s = %s", name,
			  path, why, name, g.gl_pathv[g.gl_pathc - 1]);
	else
		log_error("tool '%s': '%s' is refused: %s; name the real binary "
			  "(/usr/lib/postgresql/<version>/bin/psql)",
			  name, path, why);
	globfree(&g);
	return -EINVAL;
}

int toolrun_init(struct execd *d)
{
	const char *tmp = getenv("TMPDIR");
	char rc[PATH_MAX];
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	if (d->conf->work_dir) {
		if (mkdir(d->conf->work_dir, 0700) < 0 && errno != EEXIST)
			return log_error_errno(-errno, "Cannot create work_dir '%s': %s",
					       d->conf->work_dir, strerror(errno));
		d->work_path = strdup(d->conf->work_dir);
	} else {
		if (asprintf(&d->work_path, "%s/sandbox-execd-XXXXXX",
			     tmp && tmp[0] == '/' ? tmp : "/tmp") < 0)
			return -ENOMEM;
		if (!mkdtemp(d->work_path))
			return log_error_errno(-errno, "Cannot create a work directory: %s",
					       strerror(errno));
		d->work_owned = true;
	}
	if (!d->work_path)
		return -ENOMEM;
	d->work_fd = open(d->work_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->work_fd < 0 || fstat(d->work_fd, &st) < 0)
		return log_error_errno(-errno, "Cannot open work directory '%s': %s", d->work_path,
				       strerror(errno));
	/* The tools' private directories live here: ours and closed. */
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return log_error_errno(-EPERM, "Work directory '%s' must be ours and mode 0700",
				       d->work_path);
	/* terraform: a daemon-owned CLI configuration. An explicit
	 * provider_installation turns off the implicit local mirrors
	 * (terraform.d/plugins and friends next to the configuration, which
	 * the agent writes); the plugin cache is the daemon's. */
	/* The plans terraform made for us (plan -out), kept until shown. */
	if (mkdirat(d->work_fd, TOOLRUN_PLANS_DIR, 0700) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "Cannot create the terraform plan store: %s",
				       strerror(errno));
	if (mkdirat(d->work_fd, "tf-plugin-cache", 0700) < 0 && errno != EEXIST)
		return log_error_errno(-errno, "Cannot create the terraform plugin cache: %s",
				       strerror(errno));
	(void)snprintf(rc, sizeof(rc), "%s/terraform.rc", d->work_path);
	fd = openat(d->work_fd, "terraform.rc", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return log_error_errno(-errno, "Cannot write '%s': %s", rc, strerror(errno));
	{
		char text[PATH_MAX + 256];
		int n = snprintf(text, sizeof(text),
				 "# written by sandbox-execd at start-up; do not edit\n"
				 "plugin_cache_dir = \"%s/tf-plugin-cache\"\n"
				 "disable_checkpoint = true\n"
				 "provider_installation {\n  direct {}\n}\n",
				 d->work_path);

		if (n < 0 || (size_t)n >= sizeof(text))
			return -ENAMETOOLONG;
		r = write_all(fd, text, (size_t)n);
		if (r < 0)
			return log_error_errno(r, "Cannot write '%s': %s", rc, strerror(-r));
	}
	/* libpq's default user (and database) is the name of the user psql
	 * runs as, ours (the namespace maps our uid to itself): the policy
	 * judges it (lib/psqltarget.h). */
	{
		struct passwd *pw = getpwuid(geteuid());

		if (pw && pw->pw_name) {
			d->psql_user = strdup(pw->pw_name);
			if (!d->psql_user)
				return -ENOMEM;
		} else
			log_warn("No user name for uid %u: psql commands without -U are refused, "
				 "ignoring",
				 (unsigned)geteuid());
	}
	if (asprintf(&d->tool_env[0], "TF_CLI_CONFIG_FILE=%s", rc) < 0 ||
	    asprintf(&d->tool_env[1], "TF_PLUGIN_CACHE_DIR=%s/tf-plugin-cache", d->work_path) < 0 ||
	    asprintf(&d->tool_env[2], "GH_HOST=%s", d->conf->gh_host ? d->conf->gh_host : "github.com") < 0)
		return -ENOMEM;
	return 0;
}

void toolrun_done(struct execd *d)
{
	if (d->work_fd >= 0 && d->work_owned && d->work_path) {
		const char *slash = strrchr(d->work_path, '/');
		_cleanup_close_ int parent = -1;
		char *p = strndup(d->work_path, (size_t)(slash - d->work_path));

		if (p) {
			parent = open(p[0] ? p : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (parent >= 0)
				rm_tree_at(parent, slash + 1, 0);
			free(p);
		}
	}
	safe_close(d->work_fd);
	d->work_fd = -1;
	free(d->work_path);
	for (size_t i = 0; i < ELEMENTSOF(d->tool_env); i++)
		free(d->tool_env[i]);
	free(d->psql_user);
	d->psql_user = NULL;
}

/* Opens a path the agent named, beneath the mapped workspace: absolute
 * container paths through the path map, relative ones from the request's
 * cwd (its path beneath the root; ".." may climb as far as the root and
 * no further: RESOLVE_BENEATH). */
static int open_beneath(const struct toolrun_ctx *c, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	char rel[2 * PATHMAP_MAX_PATH];
	size_t idx = c->map_index;
	int fd;

	if (path[0] == '\0')
		return -ENOENT;
	if (path[0] == '/') {
		char r2[PATHMAP_MAX_PATH];
		int r = pathmap_resolve(c->map, path, &idx, r2, sizeof(r2));

		if (r < 0)
			return r;
		(void)snprintf(rel, sizeof(rel), "%s", r2);
	} else if (strcmp(c->rel, ".") == 0)
		(void)snprintf(rel, sizeof(rel), "%s", path);
	else if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", c->rel, path) >= sizeof(rel))
		return -ENAMETOOLONG;
	fd = (int)syscall(SYS_openat2, c->root_fds[idx], rel, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* A sealed memfd with data: the tool reads what was checked. */
static int sealed_copy(const char *data, size_t len)
{
	_cleanup_close_ int fd = (int)memfd_create("sandbox-execd-file", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int r;

	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r < 0)
		return r;
	if (lseek(fd, 0, SEEK_SET) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return -errno;
	return TAKE_FD(fd);
}


/* Copies *.tf, *.tf.json, *.tfvars and .terraform.lock.hcl (regular files,
 * not following symlinks) from the request's directory into the private
 * one: terraform sees the configuration, not terraform.d/, .terraform/,
 * modules or anything else the agent placed there. */
static int copy_terraform(const struct toolrun_ctx *c, struct toolrun *tr, char *msg, size_t msg_len)
{
	_cleanup_close_ int dfd = openat(c->cwd_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0, total = 0;
	struct dirent *e;
	DIR *dir;
	int r = 0;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir)
		return -errno;
	dfd = -1; /* owned by dir */
	while ((e = readdir(dir))) {
		const char *nm = e->d_name;
		size_t l = strlen(nm);
		_cleanup_close_ int in = -1, out = -1;
		_cleanup_free_ char *buf = NULL;
		size_t len;

		if (!((l > 3 && strcmp(nm + l - 3, ".tf") == 0) ||
		      (l > 8 && strcmp(nm + l - 8, ".tf.json") == 0) ||
		      (l > 7 && strcmp(nm + l - 7, ".tfvars") == 0) || strcmp(nm, ".terraform.lock.hcl") == 0))
			continue;
		if (++n > TOOLRUN_MAX_TF_FILES) {
			r = -E2BIG;
			(void)snprintf(msg, msg_len, "more than 256 terraform files in '%.200s'", c->container_cwd);
			break;
		}
		in = openat(dirfd(dir), nm, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (in < 0) {
			r = -errno;
			(void)snprintf(msg, msg_len, "cannot open '%.200s' (a symlink or not a regular file?)", nm);
			break;
		}
		r = read_regular(in, TOOLRUN_MAX_FILE, &buf, &len);
		if (r >= 0 && (total += len) > TOOLRUN_MAX_TF_BYTES)
			r = -EFBIG;
		if (r < 0) {
			(void)snprintf(msg, msg_len, "'%.200s' is not a regular file of at most 8 MiB", nm);
			break;
		}
		out = openat(tr->priv_fd, nm, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0) {
			r = -errno;
			break;
		}
		r = write_all(out, buf, len);
		if (r < 0)
			break;
	}
	(void)closedir(dir);
	return r;
}

/* Copies the kept plan `id` into the private directory under the same
 * name: the store's file is never handed to the tool itself. */
static int copy_kept_plan(struct execd *d, struct toolrun *tr, const char *id, char *msg,
			  size_t msg_len)
{
	_cleanup_close_ int store = openat(d->work_fd, TOOLRUN_PLANS_DIR,
					   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int in = -1, out = -1;
	struct stat st;
	char buf[65536];
	off_t total = 0;

	if (store < 0)
		return -errno;
	in = openat(store, id, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		(void)snprintf(msg, msg_len,
			       "no terraform plan '%s' is kept by the host (the last %d plans made "
			       "with plan -out=NAME are)",
			       id, TOOLRUN_MAX_PLANS);
		return -ENOENT;
	}
	out = openat(tr->priv_fd, id, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		total += n;
		if (total > TOOLRUN_MAX_PLAN)
			return -EFBIG;
		r = write_all(out, buf, (size_t)n);
		if (r < 0)
			return r;
	}
}

/* Keeps at most TOOLRUN_MAX_PLANS plans: the oldest (mtime) go. Best
 * effort: concurrent requests may each remove one, never a missing one. */
static void prune_kept_plans(int store)
{
	for (;;) {
		_cleanup_close_ int fd = openat(store, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
		char oldest[NAME_MAX + 1] = "";
		struct timespec t_old = { 0 };
		struct dirent *e;
		size_t n = 0;

		if (!dir)
			return;
		fd = -1; /* owned by dir */
		while ((e = readdir(dir))) {
			struct stat st;

			if (!toolfiles_tf_plan_id_valid(e->d_name) ||
			    fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			n++;
			if (!oldest[0] || st.st_mtim.tv_sec < t_old.tv_sec ||
			    (st.st_mtim.tv_sec == t_old.tv_sec && st.st_mtim.tv_nsec < t_old.tv_nsec)) {
				t_old = st.st_mtim;
				(void)snprintf(oldest, sizeof(oldest), "%s", e->d_name);
			}
		}
		(void)closedir(dir);
		/* ENOENT: another request removed it first. */
		if (n <= TOOLRUN_MAX_PLANS || (unlinkat(store, oldest, 0) < 0 && errno != ENOENT))
			return;
	}
}

int toolrun_finish(struct execd *d, struct toolrun *tr, const char *req_id, bool succeeded,
		   int errfd)
{
	_cleanup_close_ int store = -1;
	char id[TOOLFILES_TF_PLAN_ID_LEN + 1], line[256];
	unsigned char rnd[TOOLFILES_TF_PLAN_HEX / 2];
	struct stat st;
	int n;

	if (!tr->plan.tf_out || tr->priv_fd < 0)
		return 0;
	/* Only a plan terraform wrote and reported success for (0, or 2 for
	 * changes with -detailed-exitcode: the caller's `succeeded`). */
	if (!succeeded || fstatat(tr->priv_fd, tr->plan.tf_out, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_size > TOOLRUN_MAX_PLAN)
		return 0;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return log_error_errno(-EIO, "request %s: no random plan id, plan not kept", req_id);
	n = snprintf(id, sizeof(id), "%s", TOOLFILES_TF_PLAN_PREFIX);
	for (size_t i = 0; i < sizeof(rnd); i++)
		n += snprintf(id + n, sizeof(id) - (size_t)n, "%02x", rnd[i]);
	store = openat(d->work_fd, TOOLRUN_PLANS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (store < 0 || renameat(tr->priv_fd, tr->plan.tf_out, store, id) < 0)
		return log_error_errno(-errno, "request %s: cannot keep the terraform plan: %s", req_id,
				       strerror(errno));
	prune_kept_plans(store);
	log_info("request %s: terraform plan kept as %s", req_id, id);
	n = snprintf(line, sizeof(line),
		     "sandbox-execd: the host keeps this plan as %s (nothing was written to the "
		     "workspace); show it with: terraform show %s\n",
		     id, id);
	/* The client's stderr is the agent's: a full pipe must not hold this
	 * worker. One write of less than PIPE_BUF once poll says there is
	 * room never blocks on a pipe; the client may be gone, and the plan
	 * is kept either way. */
	if (errfd >= 0 && n > 0) {
		struct pollfd pfd = { .fd = errfd, .events = POLLOUT };

		if (poll(&pfd, 1, 1000) == 1 && (pfd.revents & POLLOUT))
			(void)!write(errfd, line, (size_t)n);
	}
	return 1;
}

static bool path_under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* psql -h DIR connects to the socket DIR/.s.PGSQL.PORT: in the shared
 * workspace that is a server the agent runs, which would get the user's
 * password (a .pgpass "localhost" line matches sockets) and answer
 * whatever it likes. Refused when DIR is beneath a mapped host root as
 * written (so no symlink the agent may swap later can be on the way) or
 * as it resolves now (a symlink of the user's into the workspace). A DIR
 * that does not resolve is judged as written: refusing it here would tell
 * the agent which host directories exist before any policy is asked (the
 * agent cannot create one outside the workspace). */
static int check_psql_socket_dir(const struct toolrun_ctx *c, const char *dir, char *msg,
				 size_t msg_len)
{
	char real[PATH_MAX], root[PATH_MAX];
	bool inside = false;

	if (!realpath(dir, real))
		(void)snprintf(real, sizeof(real), "%s", dir);
	for (size_t i = 0; i < c->map->n && !inside; i++) {
		const char *h = c->map->e[i].host;

		inside = path_under(dir, h) || path_under(real, h) ||
			 (realpath(h, root) && (path_under(dir, root) || path_under(real, root)));
	}
	if (inside) {
		(void)snprintf(msg, msg_len,
			       "psql socket directory '%.200s' is in the shared workspace: a server "
			       "there would be the agent's",
			       dir);
		return -EPERM;
	}
	return 0;
}

void toolrun_release(struct execd *d, struct toolrun *tr)
{
	for (size_t i = 0; i < tr->n_fds; i++)
		safe_close(tr->fds[i]);
	tr->n_fds = 0;
	if (tr->priv_fd >= 0 && !privdir_give_back(d, tr->priv_name, tr->priv_fd)) {
		safe_close(tr->priv_fd);
		rm_tree_at(d->work_fd, tr->priv_name, 0);
	}
	tr->priv_fd = -1;
	for (size_t i = 0; i < tr->n_strs; i++)
		free(tr->strs[i]);
	tr->n_strs = 0;
	free(tr->argv);
	tr->argv = NULL;
	safe_close(tr->null_fd);
	tr->null_fd = -1;
}

int toolrun_prepare(struct execd *d, const struct toolrun_ctx *c, struct toolrun *tr,
		    enum wire_error *reterr_kind, char *msg, size_t msg_len)
{
	const struct toolfiles_plan *p = &tr->plan;
	size_t k = 0;
	int r;

	*reterr_kind = WIRE_ERROR_INTERNAL;
	tr->priv_fd = tr->null_fd = -1;
	/* psql -c strings: every meta-command checked. */
	for (size_t i = 0; i < p->n_sql; i++) {
		struct psqlmeta_result res;
		const char *v = c->argv[p->sql[i].arg] + p->sql[i].prefix_len;

		r = psqlmeta_check(v, strlen(v), &res);
		if (r < 0) {
			*reterr_kind = WIRE_ERROR_POLICY_DENIED;
			(void)snprintf(msg, msg_len, "psql -c: meta-command '\\%s' refused: %s", res.name,
				       r == -EPERM && res.why ? res.why : "unreadable");
			return -EPERM;
		}
	}
	if (p->psql.host[0] == '/') {
		r = check_psql_socket_dir(c, p->psql.host, msg, msg_len);
		if (r < 0) {
			*reterr_kind = WIRE_ERROR_POLICY_DENIED;
			return r;
		}
	}
	if (p->private_cwd) {
		r = privdir_take(d, c->id, tr->priv_name, sizeof(tr->priv_name), &tr->priv_fd);
		if (r < 0)
			return r;
	}
	if (p->copy_terraform) {
		r = copy_terraform(c, tr, msg, msg_len);
		if (r < 0) {
			*reterr_kind = WIRE_ERROR_POLICY_DENIED;
			return r;
		}
	}
	if (p->tf_show && tr->priv_fd >= 0) {
		r = copy_kept_plan(d, tr, p->tf_show, msg, msg_len);
		if (r == -ENOENT)
			*reterr_kind = WIRE_ERROR_POLICY_DENIED;
		if (r < 0)
			return r;
	}
	/* plan -out=NAME must not name a copied file (terraform would write
	 * over it, and a failed run would leave the copy to be kept). */
	if (p->tf_out && tr->priv_fd >= 0 &&
	    faccessat(tr->priv_fd, p->tf_out, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		*reterr_kind = WIRE_ERROR_POLICY_DENIED;
		(void)snprintf(msg, msg_len, "terraform plan -out=%.64s names a configuration file",
			       p->tf_out);
		return -EEXIST;
	}
	if (p->stdin_null) {
		tr->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (tr->null_fd < 0)
			return -errno;
	}
	/* argv: tool, prepended options, the agent's arguments (file
	 * arguments rewritten to /dev/fd/N); NULL when it is the request's. */
	if (p->n_files == 0 && p->n_prepend == 0)
		goto env;
	tr->argc = c->argc + p->n_prepend;
	tr->argv = calloc(tr->argc + 1, sizeof(char *));
	if (!tr->argv)
		return -ENOMEM;
	tr->argv[k++] = c->argv[0];
	for (size_t i = 0; i < p->n_prepend; i++)
		tr->argv[k++] = p->prepend[i];
	for (size_t i = 1; i < c->argc; i++)
		tr->argv[k++] = c->argv[i];
	for (size_t i = 0; i < p->n_files; i++) {
		const struct toolfiles_file *f = &p->files[i];
		const char *arg = c->argv[f->arg];
		_cleanup_close_ int fd = -1;
		_cleanup_free_ char *buf = NULL;
		size_t len;
		char *s;
		int mfd;

		fd = open_beneath(c, arg + f->prefix_len);
		if (fd < 0) {
			*reterr_kind = WIRE_ERROR_PATH_OUTSIDE_WORKSPACE;
			(void)snprintf(msg, msg_len,
				       "file argument '%.200s' is not a file inside the shared workspace "
				       "(or escapes it through '..' or a symlink)",
				       arg + f->prefix_len);
			return fd;
		}
		r = read_regular(fd, TOOLRUN_MAX_FILE, &buf, &len);
		if (r < 0) {
			*reterr_kind = WIRE_ERROR_POLICY_DENIED;
			(void)snprintf(msg, msg_len, "file argument '%.200s' must be a regular file of at "
				       "most 8 MiB", arg + f->prefix_len);
			return r;
		}
		if (f->kind == TOOLFILES_PSQL_SCRIPT) {
			struct psqlmeta_result res;

			r = psqlmeta_check(buf, len, &res);
			if (r < 0) {
				*reterr_kind = WIRE_ERROR_POLICY_DENIED;
				(void)snprintf(msg, msg_len, "psql -f '%.200s': meta-command '\\%s' refused: %s",
					       arg + f->prefix_len, res.name,
					       r == -EPERM && res.why ? res.why : "unreadable");
				return -EPERM;
			}
		}
		/* Above the range the child dup2()s into (3 .. 3+MAX). */
		r = sealed_copy(buf, len);
		if (r < 0)
			return r;
		mfd = fcntl(r, F_DUPFD_CLOEXEC, 3 + TOOLFILES_MAX_FILES + 3);
		safe_close(r);
		if (mfd < 0)
			return -errno;
		tr->fds[tr->n_fds++] = mfd;
		if (asprintf(&s, "%.*s/dev/fd/%zu", (int)f->prefix_len, arg, 3 + i) < 0)
			return -ENOMEM;
		tr->strs[tr->n_strs++] = s;
		tr->argv[f->arg + p->n_prepend] = s;
	}
env:
	/* Per-tool fixed environment (never the backend's to change). */
	if (strcmp(c->argv[0], "psql") == 0)
		tr->env[tr->n_env++] = "PSQLRC=/dev/null";
	if (strcmp(c->argv[0], "terraform") == 0) {
		tr->env[tr->n_env++] = d->tool_env[0];
		tr->env[tr->n_env++] = d->tool_env[1];
		tr->env[tr->n_env++] = "CHECKPOINT_DISABLE=1";
	}
	if (strcmp(c->argv[0], "gh") == 0)
		tr->env[tr->n_env++] = d->tool_env[2];
	return 0;
}
