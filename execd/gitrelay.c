/* SPDX-License-Identifier: MIT */
/* The git relay (see gitrelay.h, lib/wire_git.h, README.md "git").
 *
 * One request, start to end:
 *   decode -> authenticate -> validate and normalise the URL (lib/gitrelay.c)
 *   -> open or create the URL's cache (own state directory, daemon-written
 *   config) and lock it -> [push: copy the bundle in, verify, unbundle,
 *   compute old/ff/default per update] -> backend decide -> audit (durable)
 *   -> host git against the cache and the canonical URL -> per-op output on
 *   the out fd, progress on the err fd -> audit the end -> reply.
 *
 * What never happens: host git in the workspace or with a path the agent
 * chose; a request byte as a git option, a config key or an environment
 * variable. The only request strings that reach a git command line are the
 * canonical URL (rebuilt from validated parts), object names (hex) and ref
 * names that passed git-check-ref-format rules, always after the options
 * and never starting with '-'. */
#include "gitrelayd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "authz_git.h"
#include "execd.h"
#include "fdio.h"
#include "gitrelay.h"
#include "log.h"
#include "macros.h"
#include "monoclock.h"
#include "sha256.h"
#include "wire_git.h"

#define RELAY_MAX_LIST ((size_t)16 * 1024 * 1024)      /* ls-remote output */
#define RELAY_MAX_SMALL ((size_t)4 * 1024 * 1024)      /* other captured output */
#define RELAY_MAX_BUNDLE ((uint64_t)8 * 1024 * 1024 * 1024) /* bytes of one pushed bundle */
#define RELAY_MAX_ENV 24
#define RELAY_MAX_ARGS (16 + WIRE_GIT_MAX_UPDATES + WIRE_GIT_MAX_WANTS + WIRE_GIT_MAX_HAVES)
#define RELAY_CACHE_NAME 32 /* hex digits of SHA-256(canonical URL) */
#define RELAY_IO_CHUNK 65536
#define RELAY_ERR_TO_CAP (-2) /* run_git: stderr captured with stdout */
#define RELAY_MAX_CLONE_ERR ((size_t)256 * 1024) /* what clone may say (a hostile remote's sideband) */
#define RELAY_TTY_CHUNK 4096 /* bytes per write to an agent's pipe or terminal (PIPE_BUF) */
#define RELAY_SIZE_CHECK_S 10 /* caches' sizes are walked at most this often */
#define RELAY_MAX_ROOT (PATH_MAX - 512)              /* cache directory path */
#define RELAY_MAX_CACHE_PATH (RELAY_MAX_ROOT + 64)   /* ROOT/NAME.git */

/* The remote's refs as the last ls-remote saw them (list for-push), kept
 * in the cache directory: the push decides old/ff/default from them. */
#define RELAY_REMOTE_REFS "relay-remote-refs"
/* list for-push answers from the saved view when it is this recent: the
 * push itself is safe against a remote that moved meanwhile (the remote
 * refuses non-fast-forwards, forced updates carry a lease on the old
 * value), so a second round trip before every push buys nothing. */
#define RELAY_LIST_TTL_S 30
#define RELAY_HEAD_MARK "relay-head-known"
/* Written by a clone that created the cache: the name of the one pack it
 * left ("pack-HEX"). While that pack is still the cache's only store of
 * objects, every object in it came from the remote (nothing pushed or
 * repacked since), and it can go whole to a container that has nothing. */
#define RELAY_FRESH_MARK "relay-fresh-pack"
#define RELAY_PACK_NAME (5 + WIRE_GIT_OID_MAX) /* "pack-" HEX */

struct relay_cfg {
	char *key, *value;
};

struct gitrelay {
	char *git;  /* resolved host git */
	char *root; /* cache directory */
	int root_fd;
	const char *env[RELAY_MAX_ENV]; /* base environment, NULL-terminated */
	size_t n_env;
	char *env_store[RELAY_MAX_ENV];
	struct relay_cfg *user_cfg; /* from the user's global configuration */
	size_t n_user_cfg;
	unsigned max_caches;
	unsigned max_cache_mb;  /* 0: no byte bound */
	time_t size_checked;    /* CLOCK_MONOTONIC seconds of the last size walk */
	pthread_mutex_t prune_lock;
};

/* Keys copied from the user's global git configuration into each cache's
 * config: how the user authenticates (credential helpers, per-URL
 * credential settings, ssh command) and reaches the server (CA, proxy).
 * Nothing that runs on repository content. */
static const char user_cfg_regexp[] =
	"^(credential\\..*|core\\.sshcommand|http\\.sslcainfo|http\\.sslcapath|http\\.proxy|"
	"http\\..*\\.sslcainfo|http\\..*\\.proxy|http\\.sslverify|http\\..*\\.sslverify)$";

/* The cache's fixed configuration, written by the daemon at creation. */
static const char *const fixed_cfg[][2] = {
	{ "core.hooksPath", "/dev/null" },
	{ "core.fsmonitor", "false" },
	{ "core.logAllRefUpdates", "false" },
	/* auto gc inline (not detached: it would outlive the timeout and the
	 * lock), so loose objects from small pushes are packed now and then */
	{ "gc.autoDetach", "false" },
	{ "protocol.allow", "never" },
	{ "protocol.https.allow", "always" },
	{ "protocol.ssh.allow", "always" },
	{ "fetch.recurseSubmodules", "false" },
	{ "push.recurseSubmodules", "no" },
	{ "submodule.recurse", "false" },
	{ "credential.interactive", "false" },
};

/* ---- one operation ---- */

struct op {
	struct execd *d;
	struct gitrelay *rl;
	const char *id;
	int conn;
	struct ucred cred;
	struct wire_git_request req;
	struct gitrelay_url url;
	int in_fd, out_fd, err_fd, null_fd;
	char cache[RELAY_MAX_CACHE_PATH];
	char git_dir_env[RELAY_MAX_CACHE_PATH + 16];
	int cache_fd, lock_fd;
	uint64_t t0_ms, t_exec_ms; /* lib/monoclock.h */
	unsigned timeout_ms;
	const char *opname; /* policy: "ls-remote", "fetch", "clone", "push" */
	struct authz_git ag;
	struct authz_git_update *ups;
	char (*olds)[WIRE_GIT_OID_MAX + 1];
	bool audited;
	bool cloned;            /* this op created the cache by cloning the remote */
	timer_t wake;           /* RELAY_WAKE_SIGNAL at the deadline, then every RELAY_WAKE_MS */
	bool wake_armed;
	const char *global_cfg; /* "GIT_CONFIG_GLOBAL=FILE" for host git, or NULL */
};

struct buf {
	char *p;
	size_t len, max;
};

static long long elapsed_ms(uint64_t since_ms)
{
	return (long long)(monoclock_ms() - since_ms);
}

static long long left_ms(const struct op *o)
{
	return (long long)o->timeout_ms - elapsed_ms(o->t0_ms);
}

/* Writes all of p to fd (the agent's fd: may be a pipe nobody reads),
 * waiting at most until the operation's deadline. */
static int write_all(const struct op *o, int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t k;
		long long left = left_ms(o);

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left > 60000 ? 60000 : left)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!(pfd.revents & POLLOUT))
			return pfd.revents & (POLLERR | POLLHUP) ? -EPIPE : -ETIMEDOUT;
		/* A socket: never blocks. Anything else is written at most
		 * RELAY_TTY_CHUNK bytes at a time once poll says it can take
		 * some (that fits a pipe's free page or a terminal's room), and
		 * a write that blocks all the same is interrupted at the
		 * deadline (op_arm). */
		k = send(fd, c, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno == ENOTSOCK)
			k = write(fd, c, n > RELAY_TTY_CHUNK ? RELAY_TTY_CHUNK : n);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The deadline interrupts this thread. A write to a descriptor the agent
 * passed can block in the kernel whatever poll said a moment before: the
 * agent holds the same open file description (it can clear O_NONBLOCK on
 * it, or fill a pipe's free page from its own end between our poll and
 * our write). So each operation arms a timer that sends this thread
 * RELAY_WAKE_SIGNAL at its deadline and every RELAY_WAKE_MS after, with a
 * handler installed without SA_RESTART: a blocked write, read, poll or
 * flock returns EINTR, and every loop here checks the deadline before it
 * tries again. */
#define RELAY_WAKE_SIGNAL (SIGRTMIN + 5)
#define RELAY_WAKE_MS 50

static void relay_wake(int sig)
{
	(void)sig;
}

/* Set once the handler is in place: before that the signal's default
 * action would end the daemon, so nothing is armed. */
static volatile sig_atomic_t relay_wake_ready;

static void op_arm(struct op *o)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = RELAY_WAKE_SIGNAL };
	struct itimerspec its = {
		.it_value = { .tv_sec = o->timeout_ms / 1000,
			      .tv_nsec = (long)(o->timeout_ms % 1000) * 1000000L },
		.it_interval = { .tv_nsec = RELAY_WAKE_MS * 1000000L },
	};
	sigset_t wake;

	if (!relay_wake_ready)
		return;
	sev._sigev_un._tid = gettid();
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	(void)sigemptyset(&wake);
	(void)sigaddset(&wake, RELAY_WAKE_SIGNAL);
	(void)pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &o->wake) == 0) {
		if (timer_settime(o->wake, 0, &its, NULL) == 0)
			o->wake_armed = true;
		else
			(void)timer_delete(o->wake);
	}
}

/* Releases the cache before the outputs go to the agent: how fast (or
 * whether) the agent reads them is then no other container's wait. What is
 * sent from here on is in memory or in files this op holds open. */
static void op_unlock(struct op *o)
{
	o->lock_fd = safe_close(o->lock_fd);
}

static void op_disarm(struct op *o)
{
	if (o->wake_armed)
		(void)timer_delete(o->wake);
	o->wake_armed = false;
}

/* A line for the user's terminal (the agent's stderr), like git's own. */
static void tell(const struct op *o, const char *fmt, ...) _printf_(2, 3);
static void tell(const struct op *o, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (o->err_fd >= 0)
		(void)write_all(o, o->err_fd, line, (size_t)n);
}

/* The helper hung up (killed, Ctrl-C): its git operation is abandoned. */
static bool client_gone(const struct pollfd *p)
{
	return p->revents & (POLLRDHUP | POLLHUP | POLLERR);
}

/* Runs host git with args (after "git") in the cache (or the cache root
 * when there is none yet), stdin from in_fd, stdout to out_fd or captured
 * into cap (when non-NULL), stderr to err_fd (RELAY_ERR_TO_CAP: into cap
 * with stdout, so bounded by cap->max). Returns git's exit status,
 * 128 + N for a signal, -ETIMEDOUT (killed at the deadline), -ECONNRESET
 * (killed: the client hung up), -EMSGSIZE (more output than cap->max),
 * -errno. */
static int run_git(struct op *o, const char *const *args, int in_fd, int out_fd, int err_fd,
		   struct buf *cap)
{
	const char *argv[RELAY_MAX_ARGS + 2];
	const char *env[RELAY_MAX_ENV + 2];
	_cleanup_close_ int rd = -1, wr = -1, pidfd = -1;
	size_t a = 0, n = 0;
	int code = 0, r = 0;
	bool signaled = false;
	pid_t pid;

	argv[a++] = "git";
	for (; *args && a < ELEMENTSOF(argv) - 1; args++)
		argv[a++] = *args;
	if (*args)
		return -E2BIG;
	argv[a] = NULL;
	for (size_t i = 0; i < o->rl->n_env; i++)
		if (!o->global_cfg || strncmp(o->rl->env[i], "GIT_CONFIG_GLOBAL=", 18) != 0)
			env[n++] = o->rl->env[i];
	if (o->global_cfg)
		env[n++] = o->global_cfg;
	if (o->git_dir_env[0])
		env[n++] = o->git_dir_env;
	env[n] = NULL;
	if (cap) {
		int p[2];

		if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
			return -errno;
		rd = p[0];
		wr = p[1];
		out_fd = wr;
		cap->len = 0;
	}
	{
		struct spawn_params sp = {
			.path = o->rl->git,
			.argv = (char *const *)argv,
			.envp = (char *const *)env,
			.cwd_fd = o->cache_fd >= 0 ? o->cache_fd : o->rl->root_fd,
			.fds = { in_fd >= 0 ? in_fd : o->null_fd, out_fd >= 0 ? out_fd : o->null_fd,
				 err_fd == RELAY_ERR_TO_CAP && cap ? out_fd
				 : err_fd >= 0		   ? err_fd
							   : o->null_fd },
		};

		r = spawn_start(&sp, &pid, &pidfd);
	}
	if (r < 0)
		return r;
	wr = safe_close(wr);
	for (bool eof = !cap; !eof;) {
		struct pollfd pfd[2] = { { .fd = rd, .events = POLLIN },
					 { .fd = o->conn, .events = POLLRDHUP } };
		long long left = left_ms(o);
		ssize_t k;

		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(pfd, 2, (int)(left > 60000 ? 60000 : left)) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (client_gone(&pfd[1])) {
			r = -ECONNRESET;
			break;
		}
		if (cap->len + 1 >= cap->max) {
			r = -EMSGSIZE;
			break;
		}
		if (!cap->p) {
			cap->p = malloc(cap->max);
			if (!cap->p) {
				r = -ENOMEM;
				break;
			}
		}
		k = read(rd, cap->p + cap->len, cap->max - 1 - cap->len);
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (k == 0)
			eof = true;
		cap->len += (size_t)k;
	}
	if (cap && cap->p)
		cap->p[cap->len] = '\0';
	while (r >= 0) {
		struct pollfd pfd[2] = { { .fd = pidfd, .events = POLLIN },
					 { .fd = o->conn, .events = POLLRDHUP } };
		long long left = left_ms(o);
		int k;

		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		k = poll(pfd, 2, (int)(left > 60000 ? 60000 : left));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			break;
		}
		if (pfd[0].revents)
			break;
		if (client_gone(&pfd[1]))
			r = -ECONNRESET;
	}
	if (r < 0)
		spawn_kill_group(pid);
	if (spawn_reap(pid, pidfd, &code, &signaled) < 0 && r >= 0)
		r = -ECHILD;
	if (r < 0)
		return r;
	return signaled ? 128 + code : code;
}

/* An fd holding text (for git's stdin: batch-check, update-ref --stdin). */
static int text_fd(const char *text, size_t len)
{
	int fd = memfd_create("gitrelay-input", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (size_t off = 0; off < len;) {
		ssize_t k = write(fd, text + off, len - off);

		if (k < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			return -e;
		}
		off += (size_t)k;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* ---- the cache ---- */

static int cache_name(const char *url, char out[RELAY_CACHE_NAME + 1])
{
	uint8_t md[SHA256_DIGEST_SIZE];

	_Static_assert(SHA256_DIGEST_SIZE * 2 >= RELAY_CACHE_NAME, "cache name too long");
	sha256_digest(url, strlen(url), md);
	for (size_t i = 0; i < RELAY_CACHE_NAME / 2; i++)
		(void)snprintf(out + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* Creates the cache repository at o->cache: a bare repository without
 * templates (no sample hooks, no info/ files), configured only by us, then
 * moved into place, so a half-made cache is never used. */
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* ENOENT: already gone; anything else leaves the rest for next time. */
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

/* Writes the cache's configuration into the file cfg (created when
 * missing): the fixed keys, then the user's transport settings. */
static int cache_config(struct op *o, const char *cfg)
{
	int r;

	for (size_t i = 0; i < ELEMENTSOF(fixed_cfg); i++) {
		const char *const args[] = { "config", "--file", cfg, "--", fixed_cfg[i][0],
					     fixed_cfg[i][1], NULL };

		r = run_git(o, args, -1, -1, o->err_fd, NULL);
		if (r != 0)
			return r < 0 ? r : -EIO;
	}
	for (size_t i = 0; i < o->rl->n_user_cfg; i++) {
		const char *const args[] = { "config", "--file", cfg, "--add", "--",
					     o->rl->user_cfg[i].key, o->rl->user_cfg[i].value, NULL };

		r = run_git(o, args, -1, -1, o->err_fd, NULL);
		if (r != 0)
			return r < 0 ? r : -EIO;
	}
	return 0;
}

/* Copies what is left to read of in_fd to out_fd (write_all: within the
 * operation's deadline). */
static int copy_fd(struct op *o, int in_fd, int out_fd)
{
	/* not on the stack: worker threads have EXECD_THREAD_STACK */
	_cleanup_free_ char *chunk = malloc(RELAY_IO_CHUNK);

	if (!chunk)
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(in_fd, chunk, RELAY_IO_CHUNK);
		int r;

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return 0;
		r = write_all(o, out_fd, chunk, (size_t)k);
		if (r < 0)
			return r;
	}
}

/* Appends the file at from to the file at to (both ours, in the cache
 * directory). */
static int append_file(struct op *o, const char *from, const char *to)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_close_ int out = open(to, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);

	if (in < 0 || out < 0)
		return -errno;
	return copy_fd(o, in, out);
}

/* Which single pack a new cache holds: the name ("pack-HEX") of the only
 * .pack in dir/objects/pack (with its .idx, and a .rev newer gits write),
 * -ENOENT when there is none or anything else is there. */
static int only_pack(int dir_fd, char name[RELAY_PACK_NAME + 1])
{
	_cleanup_close_ int fd = openat(dir_fd, "objects/pack", O_RDONLY | O_DIRECTORY | O_CLOEXEC |
								     O_NOFOLLOW);
	DIR *d;
	struct dirent *e;
	size_t packs = 0, others = 0;
	char base[RELAY_PACK_NAME + 1] = "";

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d)
		return -errno;
	fd = -1;
	while ((e = readdir(d))) {
		const char *dot = strrchr(e->d_name, '.');
		size_t bl = dot ? (size_t)(dot - e->d_name) : 0;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (!dot || strncmp(e->d_name, "pack-", 5) != 0 || bl > RELAY_PACK_NAME ||
		    (base[0] && (strlen(base) != bl || strncmp(base, e->d_name, bl) != 0))) {
			others++;
			continue;
		}
		if (strcmp(dot, ".pack") == 0)
			packs++;
		else if (strcmp(dot, ".idx") != 0 && strcmp(dot, ".rev") != 0)
			others++;
		memcpy(base, e->d_name, bl);
		base[bl] = '\0';
	}
	closedir(d);
	if (packs != 1 || others != 0)
		return -ENOENT;
	memcpy(name, base, strlen(base) + 1);
	return 0;
}

/* Passes what the cache's clone said (text, NUL-terminated) to the
 * agent's terminal, except clone's "You appear to have cloned an empty
 * repository": that is the agent's own git's to say, about its own clone
 * or fetch. */
static void forward_clone_err(struct op *o, const char *text)
{
	static const char empty[] = "warning: You appear to have cloned an empty repository.";

	for (const char *l = text, *nl; *l; l = nl ? nl + 1 : l + strlen(l)) {
		nl = strchr(l, '\n');
		if (strncmp(l, empty, sizeof(empty) - 1) != 0)
			(void)write_all(o, o->err_fd, l, nl ? (size_t)(nl + 1 - l) : strlen(l));
	}
}

/* A new cache, under a temporary name renamed into place when complete.
 * For a list (the start of a fetch or a clone) it is a bare clone of the
 * remote: one round trip, no connectivity walk over a pack that clone
 * knows to be self-contained, the remote's HEAD recorded, and the pack
 * handed whole to containers that have nothing yet (RELAY_FRESH_MARK).
 * Clone runs with the cache's own configuration as its only one (written
 * first, appended to what clone wrote). Otherwise an empty repository. */
static int cache_create(struct op *o, const char *name, bool by_clone)
{
	char tmp[PATH_MAX], cfg[PATH_MAX + 8], own[PATH_MAX + 16], env[PATH_MAX + 40];
	int r;

	(void)snprintf(tmp, sizeof(tmp), "%s/.new-%s-%d", o->rl->root, name, (int)gettid());
	(void)snprintf(cfg, sizeof(cfg), "%s/config", tmp);
	if (!by_clone) {
		const char *const args[] = { "init", "-q", "--bare", "--template=", "--", tmp, NULL };

		r = run_git(o, args, -1, -1, o->err_fd, NULL);
		if (r != 0)
			return r < 0 ? r : -EIO;
		r = cache_config(o, cfg);
	} else {
		const char *const args[] = { "clone", "--bare", "--quiet", "--template=", "--",
					     o->url.canonical, tmp, NULL };
		char pack[RELAY_PACK_NAME + 1];
		_cleanup_close_ int tmp_fd = -1;

		(void)snprintf(own, sizeof(own), "%s.config", tmp);
		(void)unlink(own);
		r = cache_config(o, own);
		if (r < 0)
			return r;
		(void)snprintf(env, sizeof(env), "GIT_CONFIG_GLOBAL=%s", own);
		o->global_cfg = env;
		{
			/* what a remote says in its sideband is bounded: more
			 * than RELAY_MAX_CLONE_ERR ends the clone */
			struct buf eb = { .max = RELAY_MAX_CLONE_ERR };

			r = run_git(o, args, -1, -1, RELAY_ERR_TO_CAP, &eb);
			if (eb.p)
				forward_clone_err(o, eb.p);
			free(eb.p);
		}
		o->global_cfg = NULL;
		if (r == 0)
			r = append_file(o, own, cfg);
		else if (r > 0)
			r = -EIO;
		(void)unlink(own);
		if (r >= 0) {
			tmp_fd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (tmp_fd < 0)
				r = -errno;
		}
		/* An empty remote leaves no pack: nothing to hand out. */
		if (r >= 0 && only_pack(tmp_fd, pack) == 0) {
			_cleanup_close_ int fd = openat(tmp_fd, RELAY_FRESH_MARK,
							O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
								O_NOFOLLOW,
							0600);
			size_t n = strlen(pack);

			r = fd < 0 || write(fd, pack, n) != (ssize_t)n ? -EIO : 0;
		}
		if (r >= 0)
			r = openat(tmp_fd, RELAY_HEAD_MARK, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				   0600);
		if (r >= 0)
			r = close(r) < 0 ? -errno : 0;
	}
	if (r < 0) {
		(void)nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		return r;
	}
	if (rename(tmp, o->cache) < 0)
		return -errno;
	o->cloned = by_clone;
	return 0;
}

struct cache_ent {
	char name[RELAY_CACHE_NAME + 1];
	struct timespec used; /* mtime of its lock file */
	uint64_t bytes;
};

static uint64_t walk_bytes; /* nftw has no user pointer; under prune_lock */

static int sum_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	walk_bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct cache_ent *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return 0;
}

/* The caches, least recently used first. *ret malloc'd. */
static int cache_list(struct gitrelay *rl, struct cache_ent **ret, size_t *ret_n)
{
	_cleanup_close_ int dfd = openat(rl->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct cache_ent *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *dir;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir)
		return -errno;
	dfd = -1;
	while ((de = readdir(dir))) {
		struct stat st;

		if (strlen(de->d_name) != RELAY_CACHE_NAME + 5 ||
		    strcmp(de->d_name + RELAY_CACHE_NAME, ".lock") != 0 ||
		    fstatat(rl->root_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (n == cap) {
			struct cache_ent *nv = reallocarray(v, cap ? cap * 2 : 64, sizeof(*v));

			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 64;
		}
		memcpy(v[n].name, de->d_name, RELAY_CACHE_NAME);
		v[n].name[RELAY_CACHE_NAME] = '\0';
		v[n].used = st.st_mtim;
		v[n].bytes = 0;
		n++;
	}
	closedir(dir);
	if (n > 1)
		qsort(v, n, sizeof(*v), ent_cmp);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Removes one cache unless it is in use (its lock held). */
static bool cache_remove(struct gitrelay *rl, const struct cache_ent *e, const char *why)
{
	char lock[RELAY_CACHE_NAME + 8], path[PATH_MAX];
	_cleanup_close_ int lfd = -1;

	(void)snprintf(lock, sizeof(lock), "%s.lock", e->name);
	lfd = openat(rl->root_fd, lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0) {
		log_info("git relay: cache %s not pruned now (%s): %s", e->name, why,
			 lfd < 0 ? "cannot open its lock" : "in use");
		return false; /* in use: another time */
	}
	(void)snprintf(path, sizeof(path), "%s/%s.git", rl->root, e->name);
	(void)nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	/* The lock file goes last, while we hold it (cache_open retries a lock
	 * taken on a removed file). */
	(void)unlinkat(rl->root_fd, lock, 0);
	log_info("git relay: pruned cache %s (%s)", e->name, why);
	return true;
}

/* Keeps at most git_max_caches caches and, when git_max_cache_mb is set,
 * at most that many MiB of them (measured at most every
 * RELAY_SIZE_CHECK_S): the least recently used go first, never one in use
 * and never the most recently used. Called under prune_lock. */
static void cache_prune(struct gitrelay *rl)
{
	_cleanup_free_ struct cache_ent *v = NULL;
	time_t now_s;
	uint64_t total = 0, limit = (uint64_t)rl->max_cache_mb * 1024 * 1024;
	size_t n = 0, i = 0;

	if (cache_list(rl, &v, &n) < 0)
		return;
	for (; n - i > rl->max_caches && i + 1 < n; i++)
		(void)cache_remove(rl, &v[i], "more caches than git_max_caches");
	now_s = (time_t)(monoclock_ms() / 1000);
	if (limit == 0 || (rl->size_checked && now_s - rl->size_checked < RELAY_SIZE_CHECK_S))
		return;
	rl->size_checked = now_s > 0 ? now_s : 1;
	for (size_t k = i; k < n; k++) {
		char path[PATH_MAX];

		(void)snprintf(path, sizeof(path), "%s/%s.git", rl->root, v[k].name);
		walk_bytes = 0;
		(void)nftw(path, sum_entry, 16, FTW_PHYS | FTW_MOUNT);
		v[k].bytes = walk_bytes;
		total += walk_bytes;
	}
	for (; total > limit && i + 1 < n; i++)
		if (cache_remove(rl, &v[i], "caches larger than git_max_cache_mb"))
			total -= v[i].bytes;
}

/* Opens (creating when new) and locks the cache for o->url. Concurrent
 * operations on one URL wait for each other here. */
static int cache_open(struct op *o)
{
	char name[RELAY_CACHE_NAME + 1], lock[RELAY_CACHE_NAME + 8];
	int r;

	r = cache_name(o->url.canonical, name);
	if (r < 0)
		return r;
	(void)snprintf(lock, sizeof(lock), "%s.lock", name);
	/* The lock file may be removed by cache_prune() while we wait for
	 * it: a lock on an unlinked file locks nothing, so take it again
	 * until the file we hold is the one at the path. */
	for (;;) {
		struct stat a, b;

		o->lock_fd = openat(o->rl->root_fd, lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				    0600);
		if (o->lock_fd < 0)
			return -errno;
		while (flock(o->lock_fd, LOCK_EX) < 0)
			if (errno != EINTR || left_ms(o) <= 0)
				return errno != EINTR ? -errno : -ETIMEDOUT;
		if (fstat(o->lock_fd, &a) == 0 &&
		    fstatat(o->rl->root_fd, lock, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			break;
		o->lock_fd = safe_close(o->lock_fd);
	}
	(void)futimens(o->lock_fd, NULL); /* most recently used, for pruning */
	(void)snprintf(o->cache, sizeof(o->cache), "%s/%s.git", o->rl->root, name);
	{
		char dir[RELAY_CACHE_NAME + 8];

		(void)snprintf(dir, sizeof(dir), "%s.git", name);
		o->cache_fd = openat(o->rl->root_fd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC |
								  O_NOFOLLOW);
		if (o->cache_fd < 0 && errno == ENOENT) {
			r = cache_create(o, name, o->req.op == WIRE_GIT_LIST);
			if (r < 0)
				return r;
			o->cache_fd = openat(o->rl->root_fd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC |
									  O_NOFOLLOW);
		}
		if (o->cache_fd < 0)
			return -errno;
	}
	(void)snprintf(o->git_dir_env, sizeof(o->git_dir_env), "GIT_DIR=%s", o->cache);
	return 0;
}

/* The cache's refs (a mirror of the remote's heads and tags). */
static int cache_refs(struct op *o, struct gitrelay_reflist *ret)
{
	static const char *const args[] = { "for-each-ref", "--format=%(objectname)%09%(refname)",
					     "refs/heads/", "refs/tags/", NULL };
	struct buf b = { .max = RELAY_MAX_LIST };
	int r = run_git(o, args, -1, -1, -1, &b);

	if (r == 0)
		r = gitrelay_parse_reflist(b.p ? b.p : "", b.len, ret);
	else if (r > 0)
		r = -EIO;
	free(b.p);
	return r;
}

/* git fetch --prune URL with the refspecs +refs/heads/[*]:refs/heads/[*] and
 * the same for tags, into the cache: it becomes a mirror of the remote's
 * branches and tags. */
static void save_remote_view(struct op *o);

static int cache_sync(struct op *o)
{
	const char *const args[] = { "fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head",
				     "--", o->url.canonical, "+refs/heads/*:refs/heads/*",
				     "+refs/tags/*:refs/tags/*", NULL };
	struct gitrelay_reflist before = { 0 }, after = { 0 };
	bool fresh = faccessat(o->cache_fd, RELAY_FRESH_MARK, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	int r;

	/* While the cache is fresh (its clone's pack, handed out whole), a
	 * ref the remote deleted or moved back leaves objects in that pack
	 * that the remote no longer serves: such a sync ends the freshness. */
	if (fresh && cache_refs(o, &before) < 0) {
		fresh = false;
		(void)unlinkat(o->cache_fd, RELAY_FRESH_MARK, 0);
	}
	r = run_git(o, args, -1, -1, o->err_fd, NULL);
	if (fresh) {
		bool same = r == 0 && cache_refs(o, &after) >= 0;

		for (size_t i = 0; same && i < before.n; i++) {
			const struct gitrelay_ref *a = gitrelay_reflist_find(&after, before.refs[i].name);

			same = a && strcmp(a->oid, before.refs[i].oid) == 0;
		}
		if (!same)
			(void)unlinkat(o->cache_fd, RELAY_FRESH_MARK, 0);
		gitrelay_reflist_done(&before);
		gitrelay_reflist_done(&after);
	}
	if (r == 0)
		save_remote_view(o);
	return r == 0 ? 0 : r < 0 ? r : -EIO;
}

/* Which of oids (n of them) the cache has: present[i]. */
static int cache_has(struct op *o, char (*oids)[WIRE_GIT_OID_MAX + 1], size_t n, bool *present)
{
	static const char *const args[] = { "cat-file", "--batch-check=%(objectname)", NULL };
	struct buf b = { .max = (size_t)(WIRE_GIT_OID_MAX + 16) * (WIRE_GIT_MAX_WANTS + 8) };
	_cleanup_free_ char *in = malloc(n * (WIRE_GIT_OID_MAX + 1) + 1);
	_cleanup_close_ int fd = -1;
	size_t off = 0;
	int r;

	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		off += (size_t)sprintf(in + off, "%s\n", oids[i]);
		present[i] = false;
	}
	if (n == 0)
		return 0;
	fd = text_fd(in, off);
	if (fd < 0)
		return fd;
	r = run_git(o, args, fd, -1, -1, &b);
	if (r != 0) {
		free(b.p);
		return r < 0 ? r : -EIO;
	}
	/* One line per input line, in order: the name, or "NAME missing". */
	{
		char *l = b.p;

		for (size_t i = 0; i < n && l && *l; i++) {
			size_t ll = strcspn(l, "\n");

			present[i] = ll == strlen(oids[i]) && strncmp(l, oids[i], ll) == 0;
			l += ll + (l[ll] == '\n');
		}
	}
	free(b.p);
	return 0;
}

/* ---- decisions and audit ---- */

static void op_audit_decision(struct op *o, bool allow, const char *error,
			      const struct authz_decision *dec)
{
	const char *argv[] = { "git", o->opname, NULL };
	struct auditrec_decision r = {
		.id = o->id,
		.peer_uid = o->cred.uid,
		.peer_gid = o->cred.gid,
		.peer_pid = o->cred.pid,
		.tool = "git",
		.argv = argv,
		.argc = 2,
		.destination = o->url.canonical[0] ? o->url.canonical : NULL,
		.reason = o->req.reason,
		.allow = allow,
		.error = error,
		.decision_reason = dec ? dec->reason : NULL,
		.rule = dec ? dec->rule : NULL,
		.backend = o->d->ops->name,
		.git = o->url.canonical[0] ? &o->ag : NULL,
	};

	(void)clock_gettime(CLOCK_REALTIME, &r.ts);
	if (audit_write_decision(o->d->audit, &r) >= 0)
		o->audited = allow;
}

static void op_refuse(struct op *o, enum wire_error e, const struct authz_decision *dec,
		      const char *msg)
{
	op_audit_decision(o, false, wire_error_to_string(e), dec);
	log_info("request %s peer uid=%u pid=%d git %s: refused: %s", o->id, (unsigned)o->cred.uid,
		 (int)o->cred.pid, o->opname ? o->opname : "?", wire_error_to_string(e));
	dispatch_reply_error(o->conn, e, msg);
}

/* The backend's verdict on o->ag. Returns true when allowed (audited);
 * otherwise the refusal is audited and sent. */
static bool op_decide(struct op *o)
{
	const char *argv[] = { "git", o->opname, NULL };
	struct authz_decision dec = { 0 };
	struct authz_request ar = {
		.request_id = o->id,
		.tool = "git",
		.argv = argv,
		.argc = 2,
		.destination = o->url.canonical,
		.reason = o->req.reason,
		.peer_uid = o->cred.uid,
		.peer_gid = o->cred.gid,
		.peer_pid = o->cred.pid,
		.git = &o->ag,
	};
	int r;

	authz_decision_clear(&dec);
	r = o->d->ops->decide(o->d->backend, &ar, &dec);
	if (r < 0 || dec.verdict != AUTHZ_ALLOW) {
		char msg[WIRE_MAX_MESSAGE];

		if (r < 0 && dec.reason[0] == '\0')
			(void)snprintf(dec.reason, sizeof(dec.reason), "the authorization backend failed");
		dec.verdict = AUTHZ_DENY;
		(void)snprintf(msg, sizeof(msg), "%s", dec.reason[0] ? dec.reason : "denied by policy");
		op_refuse(o, WIRE_ERROR_POLICY_DENIED, &dec, msg);
		authz_decision_clear(&dec);
		return false;
	}
	/* Backends may hand out environment for a tool run; host git in the
	 * relay takes none: its environment is fixed (no request or backend
	 * value becomes a variable). */
	op_audit_decision(o, true, NULL, &dec);
	authz_decision_clear(&dec);
	if (!o->audited) {
		dispatch_reply_error(o->conn, WIRE_ERROR_INTERNAL,
				     "the host could not write its audit log; nothing was done");
		return false;
	}
	o->t_exec_ms = monoclock_ms();
	return true;
}

static void op_finish(struct op *o, int status, const char *outcome)
{
	struct wire_reply rep = { .kind = WIRE_REPLY_EXITED, .code = status };
	uint8_t frame[WIRE_HEADER_SIZE + 64 + WIRE_MAX_MESSAGE];
	size_t len;

	/* The outputs end before the reply: the helper reads them to EOF. The
	 * reply must not be cut by the deadline's signal. */
	op_disarm(o);
	o->in_fd = safe_close(o->in_fd);
	o->out_fd = safe_close(o->out_fd);
	o->err_fd = safe_close(o->err_fd);
	if (wire_encode_reply(&rep, frame, sizeof(frame), &len) >= 0)
		(void)send(o->conn, frame, len, MSG_NOSIGNAL);
	log_info("request %s peer uid=%u pid=%d git %s '%s': %s %d after %lld ms", o->id,
		 (unsigned)o->cred.uid, (int)o->cred.pid, o->opname, o->url.canonical, outcome,
		 status, elapsed_ms(o->t_exec_ms));
	if (o->audited) {
		struct auditrec_end e = {
			.id = o->id,
			.outcome = outcome,
			.code = status,
			.duration_ms = (uint64_t)elapsed_ms(o->t_exec_ms),
		};

		(void)clock_gettime(CLOCK_REALTIME, &e.ts);
		(void)audit_write_end(o->d->audit, &e);
	}
}

/* A failure after the decision: said on the terminal, status 1 to git. */
static void op_fail(struct op *o, int r, const char *what)
{
	if (r == -ECONNRESET) {
		op_finish(o, 1, "disconnected");
		return;
	}
	if (r == -ETIMEDOUT)
		tell(o, "fatal: sandbox relay: %s: timed out after %u ms", what, o->timeout_ms);
	else if (r < 0)
		tell(o, "fatal: sandbox relay: %s: %s", what, strerror(-r));
	else
		tell(o, "fatal: sandbox relay: %s failed (git exited %d)", what, r);
	op_finish(o, r == -ETIMEDOUT ? 124 : 1, r == -ETIMEDOUT ? "timeout" : "failed");
}

/* ---- operations ---- */


static int save_file(struct op *o, const char *name, const char *text, size_t len)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	int k = snprintf(tmp, sizeof(tmp), "%s/%s.tmp", o->cache, name);

	if (k < 0 || (size_t)k >= sizeof(tmp))
		return -ENAMETOOLONG;
	(void)snprintf(path, sizeof(path), "%s/%s", o->cache, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	k = fdio_write_all(fd, text, len);
	if (k < 0)
		return k;
	return rename(tmp, path) < 0 ? -errno : 0;
}

static int load_remote_refs(struct op *o, struct gitrelay_reflist *ret)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *text = NULL;
	size_t len = 0, cap = 65536;
	int k = snprintf(path, sizeof(path), "%s/" RELAY_REMOTE_REFS, o->cache);

	if (k < 0 || (size_t)k >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? cache_refs(o, ret) : -errno;
	text = malloc(cap);
	if (!text)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nt;

			if (cap >= RELAY_MAX_LIST)
				return -EMSGSIZE;
			nt = realloc(text, cap * 2);
			if (!nt)
				return -ENOMEM;
			text = nt;
			cap *= 2;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return gitrelay_parse_reflist(text, len, ret);
}

/* The cache's refs are the remote's as of now (after a fetch or our own
 * push): kept as the remote's view, its mtime the time it was true. */
static void save_remote_view(struct op *o)
{
	struct gitrelay_reflist l = { 0 };
	char *text;
	size_t off = 0;

	if (cache_refs(o, &l) < 0)
		return;
	text = malloc(l.n * (WIRE_GIT_OID_MAX + WIRE_GIT_MAX_REF + 2) + 1);
	if (text) {
		for (size_t i = 0; i < l.n; i++)
			off += (size_t)sprintf(text + off, "%s\t%s\n", l.refs[i].oid, l.refs[i].name);
		(void)save_file(o, RELAY_REMOTE_REFS, text, off);
		free(text);
	}
	gitrelay_reflist_done(&l);
}

/* True when the saved view of the remote is younger than RELAY_LIST_TTL_S. */
static bool remote_view_fresh(struct op *o)
{
	char path[PATH_MAX];
	struct stat st;
	struct timespec now;

	(void)snprintf(path, sizeof(path), "%s/" RELAY_REMOTE_REFS, o->cache);
	if (stat(path, &st) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
		return false;
	return now.tv_sec >= st.st_mtim.tv_sec && now.tv_sec - st.st_mtim.tv_sec < RELAY_LIST_TTL_S;
}

/* Sets the cache's HEAD to the remote's default branch. */
static void set_head(struct op *o, const char *target)
{
	const char *const args[] = { "symbolic-ref", "HEAD", target, NULL };

	(void)run_git(o, args, -1, -1, -1, NULL);
}

/* The remote's default branch as last seen (the cache's HEAD), when the
 * cache has that branch. */
static char *cache_head(struct op *o, const struct gitrelay_reflist *refs)
{
	static const char *const args[] = { "symbolic-ref", "-q", "HEAD", NULL };
	struct buf b = { .max = WIRE_GIT_MAX_REF + 2 };
	char *ret = NULL;

	if (run_git(o, args, -1, -1, -1, &b) == 0 && b.p) {
		b.p[strcspn(b.p, "\n")] = '\0';
		if (gitrelay_reflist_find(refs, b.p))
			ret = strdup(b.p);
	}
	free(b.p);
	return ret;
}

/* list (for a fetch): one round trip, `git fetch --prune` into the cache,
 * then the listing from the cache (the remote's state as of now); the
 * remote's default branch is asked for once per cache (ls-remote
 * --symref URL HEAD) and kept as the cache's HEAD.
 * list for-push: `ls-remote --symref URL`, kept for the push (old values,
 * the default branch); the cache is only fetched into while it is empty
 * (a thin bundle needs the remote's tips; a push fetches what it misses). */
static void do_list(struct op *o)
{
	struct gitrelay_reflist remote = { 0 };
	_cleanup_free_ char *out = NULL;
	size_t out_len = 0, cap;
	int r;

	if (o->req.op == WIRE_GIT_LIST) {
		char mark[PATH_MAX];

		/* A cache this list just cloned is the remote as of now. */
		r = o->cloned ? 0 : cache_sync(o);
		if (r < 0) {
			op_fail(o, r, "fetching into the cache");
			return;
		}
		if (o->cloned)
			save_remote_view(o);
		(void)snprintf(mark, sizeof(mark), "%s/" RELAY_HEAD_MARK, o->cache);
		if (access(mark, F_OK) < 0) {
			const char *const args[] = { "ls-remote", "--symref", "--", o->url.canonical,
						     "HEAD", NULL };
			struct buf b = { .max = RELAY_MAX_SMALL };

			r = run_git(o, args, -1, -1, o->err_fd, &b);
			if (r == 0 && gitrelay_parse_reflist(b.p ? b.p : "", b.len, &remote) >= 0) {
				if (remote.head_symref)
					set_head(o, remote.head_symref);
				(void)save_file(o, RELAY_HEAD_MARK, "", 0);
			}
			free(b.p);
			gitrelay_reflist_done(&remote);
		}
		r = cache_refs(o, &remote);
		if (r >= 0) {
			remote.head_symref = cache_head(o, &remote);
			if (remote.head_symref) {
				const struct gitrelay_ref *h =
					gitrelay_reflist_find(&remote, remote.head_symref);

				memcpy(remote.head_oid, h->oid, sizeof(h->oid));
			}
		}
		if (r < 0) {
			op_fail(o, r, "reading the cache");
			return;
		}
	} else if (remote_view_fresh(o)) {
		r = load_remote_refs(o, &remote);
		if (r < 0) {
			op_fail(o, r, "reading the cache");
			return;
		}
		remote.head_symref = cache_head(o, &remote);
		if (remote.head_symref)
			memcpy(remote.head_oid, gitrelay_reflist_find(&remote, remote.head_symref)->oid,
			       sizeof(remote.head_oid));
	} else {
		const char *const args[] = { "ls-remote", "--symref", "--", o->url.canonical, NULL };
		struct buf b = { .max = RELAY_MAX_LIST };
		struct gitrelay_reflist mine = { 0 };

		r = run_git(o, args, -1, -1, o->err_fd, &b);
		if (r == 0)
			r = gitrelay_parse_reflist(b.p ? b.p : "", b.len, &remote);
		else if (r > 0)
			r = -EIO;
		if (r >= 0)
			(void)save_file(o, RELAY_REMOTE_REFS, b.p ? b.p : "", b.len);
		free(b.p);
		if (r < 0) {
			op_fail(o, r, "ls-remote");
			return;
		}
		if (remote.head_symref)
			set_head(o, remote.head_symref);
		if (remote.n > 0 && cache_refs(o, &mine) >= 0 && mine.n == 0)
			r = cache_sync(o);
		gitrelay_reflist_done(&mine);
		if (r < 0) {
			gitrelay_reflist_done(&remote);
			op_fail(o, r, "fetching into the cache");
			return;
		}
	}
	cap = remote.n * (WIRE_GIT_OID_MAX + WIRE_GIT_MAX_REF + 4) + WIRE_GIT_MAX_REF + 128;
	out = malloc(cap);
	r = out ? gitrelay_format_list(&remote, out, cap, &out_len) : -ENOMEM;
	gitrelay_reflist_done(&remote);
	op_unlock(o);
	if (r >= 0)
		r = write_all(o, o->out_fd, out, out_len);
	if (r < 0) {
		op_fail(o, r, "sending the ref list");
		return;
	}
	op_finish(o, 0, "exited");
}

/* A new temporary file in the cache (FILE names in path). */
static int tmp_file(struct op *o, char *path, size_t len, const char *what)
{
	int k = snprintf(path, len, "%s/relay-%s-XXXXXX", o->cache, what), fd;

	if (k < 0 || (size_t)k >= len)
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* True when objects/ holds nothing but pack/ and an empty info/: no loose
 * object, no alternates. */
static bool only_packed(int cache_fd)
{
	_cleanup_close_ int fd = openat(cache_fd, "objects", O_RDONLY | O_DIRECTORY | O_CLOEXEC |
								 O_NOFOLLOW);
	DIR *d;
	struct dirent *e;
	bool ok = true;

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d)
		return false;
	fd = -1;
	while (ok && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, "pack") == 0)
			continue;
		if (strcmp(e->d_name, "info") == 0) {
			_cleanup_close_ int ifd = openat(dirfd(d), "info", O_RDONLY | O_DIRECTORY |
										  O_CLOEXEC | O_NOFOLLOW);
			DIR *id = ifd < 0 ? NULL : fdopendir(ifd);
			struct dirent *ie;

			if (!id) {
				ok = false;
				continue;
			}
			ifd = -1;
			while ((ie = readdir(id)))
				if (strcmp(ie->d_name, ".") != 0 && strcmp(ie->d_name, "..") != 0)
					ok = false;
			closedir(id);
			continue;
		}
		ok = false;
	}
	closedir(d);
	return ok;
}

/* Sends the cache's one pack and its index (lib/gitrelay.h, "the objects
 * of a fetch") when the cache is still exactly what its clone left
 * (RELAY_FRESH_MARK names its only pack, no loose objects). -ENOENT when
 * it is not. */
static int send_fresh_pack(struct op *o)
{
	char mark[RELAY_PACK_NAME + 2], pack[RELAY_PACK_NAME + 1], path[RELAY_PACK_NAME + 32];
	char hdr[GITRELAY_PACK_HDR_MAX + 1];
	_cleanup_close_ int mfd = openat(o->cache_fd, RELAY_FRESH_MARK, O_RDONLY | O_CLOEXEC |
									   O_NOFOLLOW);
	_cleanup_close_ int pfd = -1, ifd = -1;
	struct stat ps, is;
	ssize_t n;
	int r;

	if (mfd < 0)
		return -ENOENT;
	n = read(mfd, mark, sizeof(mark) - 1);
	if (n <= 0 || (size_t)n > RELAY_PACK_NAME)
		return -ENOENT;
	mark[n] = '\0';
	if (only_pack(o->cache_fd, pack) < 0 || strcmp(pack, mark) != 0 || !only_packed(o->cache_fd))
		return -ENOENT;
	(void)snprintf(path, sizeof(path), "objects/pack/%s.pack", pack);
	pfd = openat(o->cache_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	(void)snprintf(path, sizeof(path), "objects/pack/%s.idx", pack);
	ifd = openat(o->cache_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (pfd < 0 || ifd < 0 || fstat(pfd, &ps) < 0 || fstat(ifd, &is) < 0)
		return -errno;
	if (!S_ISREG(ps.st_mode) || !S_ISREG(is.st_mode))
		return -ENOENT;
	r = gitrelay_pack_header(hdr, sizeof(hdr), (uint64_t)ps.st_size, (uint64_t)is.st_size);
	if (r < 0)
		return r == -EINVAL ? -ENOENT : r;
	op_unlock(o); /* the pack and its index are open: nothing changes them */
	r = write_all(o, o->out_fd, hdr, (size_t)r);
	if (r >= 0)
		r = copy_fd(o, pfd, o->out_fd);
	if (r >= 0)
		r = copy_fd(o, ifd, o->out_fd);
	return r;
}

static void do_fetch(struct op *o)
{
	_cleanup_free_ bool *have_w = calloc(o->req.n_wants + 1, sizeof(bool));
	_cleanup_free_ bool *have_h = calloc(o->req.n_haves + 1, sizeof(bool));
	_cleanup_free_ char *refs_in = NULL;
	_cleanup_free_ const char **args = calloc(RELAY_MAX_ARGS, sizeof(char *));
	_cleanup_free_ char (*names)[48] = calloc(o->req.n_wants + 1, 48);
	_cleanup_free_ char (*nots)[WIRE_GIT_OID_MAX + 2] = calloc(o->req.n_haves + 1,
								    WIRE_GIT_OID_MAX + 2);
	_cleanup_close_ int bfd = -1;
	char bundle[PATH_MAX];
	size_t a = 0, a_revs, missing = 0;
	int r;

	if (!have_w || !have_h || !args || !names || !nots) {
		op_fail(o, -ENOMEM, "fetch");
		return;
	}
	r = cache_has(o, o->req.wants, o->req.n_wants, have_w);
	for (size_t i = 0; r >= 0 && i < o->req.n_wants; i++)
		missing += !have_w[i];
	if (r >= 0 && missing > 0) {
		/* The remote moved since the listing: catch up once. */
		r = cache_sync(o);
		if (r >= 0)
			r = cache_has(o, o->req.wants, o->req.n_wants, have_w);
		for (size_t i = 0; r >= 0 && i < o->req.n_wants; i++)
			if (!have_w[i]) {
				tell(o, "fatal: sandbox relay: the remote does not have %s", o->req.wants[i]);
				r = -ENOENT;
				break;
			}
	}
	if (r >= 0)
		r = cache_has(o, o->req.haves, o->req.n_haves, have_h);
	if (r < 0) {
		op_fail(o, r, "looking up objects in the cache");
		return;
	}
	{
		bool any = false;

		for (size_t i = 0; i < o->req.n_haves; i++)
			any |= have_h[i];
		/* The container has nothing of ours (a clone): the pack as the
		 * remote sent it, when the cache still is just that. */
		r = any ? -ENOENT : send_fresh_pack(o);
		if (r == 0) {
			op_finish(o, 0, "exited");
			return;
		}
		if (r != -ENOENT) {
			op_fail(o, r, "sending the objects");
			return;
		}
	}
	/* A bundle carries refs: name each wanted object with a temporary
	 * ref, removed below. */
	refs_in = malloc(o->req.n_wants * (WIRE_GIT_OID_MAX + 64) + 1);
	if (!refs_in) {
		op_fail(o, -ENOMEM, "fetch");
		return;
	}
	{
		size_t off = 0;
		_cleanup_close_ int fd = -1;
		const char *const uargs[] = { "update-ref", "--stdin", NULL };

		for (size_t i = 0; i < o->req.n_wants; i++) {
			(void)snprintf(names[i], 48, "refs/relay/want/%zu", i);
			off += (size_t)sprintf(refs_in + off, "update %s %s\n", names[i], o->req.wants[i]);
		}
		fd = text_fd(refs_in, off);
		r = fd < 0 ? fd : run_git(o, uargs, fd, -1, o->err_fd, NULL);
		if (r != 0) {
			op_fail(o, r, "naming the wanted objects");
			return;
		}
	}
	bfd = tmp_file(o, bundle, sizeof(bundle), "fetch");
	if (bfd < 0) {
		op_fail(o, bfd, "creating the bundle file");
		return;
	}
	args[a++] = "bundle";
	args[a++] = "create";
	args[a++] = "--quiet";
	args[a++] = bundle;
	a_revs = a;
	for (size_t i = 0; i < o->req.n_wants; i++)
		args[a++] = names[i];
	/* ^HAVE, not --not: bundle create takes no options after its
	 * revisions. */
	for (size_t i = 0; i < o->req.n_haves; i++)
		if (have_h[i]) {
			(void)snprintf(nots[i], sizeof(nots[i]), "^%s", o->req.haves[i]);
			args[a++] = nots[i];
		}
	args[a] = NULL;
	r = run_git(o, args, -1, -1, o->null_fd, NULL);
	if (r > 0) {
		/* "Refusing to create empty bundle": the container has it all.
		 * Anything else is a real failure. */
		struct buf b = { .max = 64 };

		args[a_revs - 4] = "rev-list";
		args[a_revs - 3] = "--count";
		args[a_revs - 2] = "--objects";
		args[a_revs - 1] = "--no-object-names";
		r = run_git(o, args + a_revs - 4, -1, -1, o->err_fd, &b);
		r = r == 0 && b.p && strcmp(b.p, "0\n") == 0 ? 1 : -EIO;
		free(b.p);
	}
	{
		const char *const dargs[] = { "update-ref", "--stdin", NULL };
		_cleanup_close_ int fd = -1;
		size_t off = 0;

		for (size_t i = 0; i < o->req.n_wants; i++)
			off += (size_t)sprintf(refs_in + off, "delete %s\n", names[i]);
		fd = text_fd(refs_in, off);
		if (fd >= 0)
			(void)run_git(o, dargs, fd, -1, -1, NULL);
	}
	if (r == 0) {
		/* git wrote FILE.lock and renamed it over our empty file. */
		safe_close(bfd);
		bfd = open(bundle, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		r = bfd < 0 ? -errno : 0;
	}
	(void)unlink(bundle);
	if (r == 0) {
		op_unlock(o);
		r = copy_fd(o, bfd, o->out_fd);
	}
	if (r < 0) {
		op_fail(o, r, "creating the bundle");
		return;
	}
	op_finish(o, 0, "exited");
}

/* Copies the pushed bundle from the agent's in fd into the cache (never
 * reading more than RELAY_MAX_BUNDLE, never waiting past the deadline).
 * Returns its size. */
static int64_t receive_bundle(struct op *o, int fd)
{
	_cleanup_free_ char *chunk = malloc(RELAY_IO_CHUNK);
	uint64_t total = 0;

	if (!chunk)
		return -ENOMEM;
	for (;;) {
		struct pollfd pfd = { .fd = o->in_fd, .events = POLLIN };
		long long left = left_ms(o);
		ssize_t k;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left > 60000 ? 60000 : left)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		k = read(o->in_fd, chunk, RELAY_IO_CHUNK);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (k == 0)
			return (int64_t)total;
		total += (uint64_t)k;
		if (total > RELAY_MAX_BUNDLE)
			return -EFBIG;
		k = fdio_write_all(fd, chunk, (size_t)k);
		if (k < 0)
			return k;
	}
}

/* The push proper; the caller owns the buffers (n + 1 entries each). */
static void push_with(struct op *o, const char **args,
		      char (*leases)[WIRE_GIT_MAX_REF + WIRE_GIT_OID_MAX + 32],
		      char (*specs)[WIRE_GIT_MAX_REF + WIRE_GIT_OID_MAX + 4], bool *present,
		      char (*srcs)[WIRE_GIT_OID_MAX + 1])
{
	size_t n = o->req.n_updates;
	_cleanup_free_ char *status = NULL;
	struct gitrelay_reflist mine = { 0 };
	struct buf b = { .max = RELAY_MAX_SMALL };
	char bundle[PATH_MAX], head[WIRE_GIT_MAX_REF + 2] = "";
	size_t a = 0, slen = 0, scap;
	int64_t size;
	int r;

	/* 1. The objects: the bundle goes into the cache before anything is
	 * decided (the policy needs the commits to tell fast-forwards). */
	{
		_cleanup_close_ int bfd = tmp_file(o, bundle, sizeof(bundle), "push");

		if (bfd < 0) {
			dispatch_reply_error(o->conn, WIRE_ERROR_INTERNAL, "cannot store the bundle");
			return;
		}
		size = receive_bundle(o, bfd);
	}
	if (size < 0) {
		(void)unlink(bundle);
		op_refuse(o, size == -EFBIG ? WIRE_ERROR_TOO_LARGE : WIRE_ERROR_MALFORMED, NULL,
			  size == -EFBIG ? "the pushed bundle is too large"
					 : "the pushed bundle could not be read");
		return;
	}
	if (size > 0) {
		const char *const vargs[] = { "bundle", "verify", "--quiet", bundle, NULL };
		const char *const uargs[] = { "bundle", "unbundle", bundle, NULL };

		/* verify says "... is okay" on success: only a failure is shown.
		 * Missing prerequisites: the cache may lag behind the remote
		 * (pushed to by others since it last fetched): catch up once. */
		r = run_git(o, vargs, -1, o->null_fd, o->null_fd, NULL);
		if (r > 0 && cache_sync(o) >= 0)
			r = run_git(o, vargs, -1, o->null_fd, o->null_fd, NULL);
		if (r > 0)
			(void)run_git(o, vargs, -1, o->null_fd, o->err_fd, NULL);
		if (r == 0)
			r = run_git(o, uargs, -1, -1, o->null_fd, NULL);
		(void)unlink(bundle);
		if (r != 0) {
			op_refuse(o, WIRE_ERROR_MALFORMED, NULL,
				  "the pushed bundle does not verify against the remote's objects "
				  "(run git fetch, then push again)");
			return;
		}
	} else
		(void)unlink(bundle);
	/* 2. What each update does, from the cache. */
	{
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (!o->req.updates[i].delete_ref)
				memcpy(srcs[k++], o->req.updates[i].src, sizeof(srcs[0]));
		r = cache_has(o, srcs, k, present);
		for (size_t i = 0; r >= 0 && i < k; i++)
			if (!present[i]) {
				/* a commit the remote has and the cache not yet */
				if (cache_sync(o) >= 0)
					r = cache_has(o, srcs, k, present);
				break;
			}
		/* present[] back in update order (deletes have no source) */
		for (size_t i = n; r >= 0 && i-- > 0;)
			present[i] = o->req.updates[i].delete_ref ? true : present[--k];
	}
	/* old values: the remote's refs as list for-push saw them */
	if (r >= 0)
		r = load_remote_refs(o, &mine);
	if (r < 0) {
		gitrelay_reflist_done(&mine);
		dispatch_reply_error(o->conn, WIRE_ERROR_INTERNAL, "cannot read the cache");
		return;
	}
	{
		static const char *const hargs[] = { "symbolic-ref", "-q", "HEAD", NULL };
		struct buf hb = { .max = sizeof(head) };

		if (run_git(o, hargs, -1, -1, -1, &hb) == 0 && hb.p) {
			hb.p[strcspn(hb.p, "\n")] = '\0';
			(void)snprintf(head, sizeof(head), "%s", hb.p);
		}
		free(hb.p);
	}
	for (size_t i = 0; i < n; i++) {
		const struct wire_git_update *u = &o->req.updates[i];
		const struct gitrelay_ref *old = gitrelay_reflist_find(&mine, u->dst);
		struct authz_git_update *g = &o->ups[i];

		if (!u->delete_ref && !present[i]) {
			gitrelay_reflist_done(&mine);
			op_refuse(o, WIRE_ERROR_MALFORMED, NULL,
				  "a pushed commit is neither in the bundle nor on the remote");
			return;
		}
		(void)snprintf(o->olds[i], sizeof(o->olds[i]), "%s", old ? old->oid : "");
		*g = (struct authz_git_update){
			.src = u->src,
			.dst = u->dst,
			.old = o->olds[i],
			.force = u->force,
			.delete_ref = u->delete_ref,
			.is_default = head[0] && strcmp(head, u->dst) == 0,
		};
		if (u->delete_ref)
			g->ff = false;
		else if (!old)
			g->ff = true;
		else {
			const char *const margs[] = { "merge-base", "--is-ancestor", old->oid, u->src,
						      NULL };
			char want[1][WIRE_GIT_OID_MAX + 1];
			bool have = false;

			/* the remote's current commit must be in the cache to tell;
			 * when it is not even after a fetch, it is not a fast-forward */
			memcpy(want[0], old->oid, sizeof(want[0]));
			if (cache_has(o, want, 1, &have) >= 0 && !have && cache_sync(o) >= 0)
				(void)cache_has(o, want, 1, &have);
			g->ff = have && run_git(o, margs, -1, -1, -1, NULL) == 0;
		}
	}
	gitrelay_reflist_done(&mine);
	o->ag.n_updates = n;

	/* 3. Decide and audit. */
	if (!op_decide(o))
		return;

	/* 4. Push from the cache, exactly the updates that were decided. */
	/* A forced update is pushed with a lease on the old value the policy
	 * judged (--force-with-lease=DST:OLD, "" = must not exist), so it
	 * rewrites exactly what was decided or nothing; without force the
	 * remote itself refuses anything but a fast-forward. */
	args[a++] = "push";
	args[a++] = "--porcelain";
	args[a++] = "--no-verify";
	if (o->ag.dry_run)
		args[a++] = "--dry-run";
	if (o->ag.atomic)
		args[a++] = "--atomic";
	for (size_t i = 0; i < n; i++) {
		const struct wire_git_update *u = &o->req.updates[i];

		if (!u->force)
			continue;
		(void)snprintf(leases[i], sizeof(leases[i]), "--force-with-lease=%s:%s", u->dst,
			       o->olds[i]);
		args[a++] = leases[i];
	}
	args[a++] = "--";
	args[a++] = o->url.canonical;
	for (size_t i = 0; i < n; i++) {
		const struct wire_git_update *u = &o->req.updates[i];

		(void)snprintf(specs[i], sizeof(specs[i]), "%s:%s", u->delete_ref ? "" : u->src,
			       u->dst);
		args[a++] = specs[i];
	}
	args[a] = NULL;
	r = run_git(o, (const char *const *)args, -1, -1, o->err_fd, &b);
	if (r < 0) {
		free(b.p);
		op_fail(o, r, "push");
		return;
	}
	scap = n * (WIRE_GIT_MAX_REF + GITRELAY_MAX_REASON + 16) + 1;
	status = malloc(scap);
	if (!status) {
		free(b.p);
		op_fail(o, -ENOMEM, "push");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct wire_git_update *u = &o->req.updates[i];
		char why[GITRELAY_MAX_REASON] = "";
		bool ok = false;
		int k = gitrelay_push_status(b.p ? b.p : "", b.len, u->dst, &ok, why, sizeof(why));

		if (k == 1 && ok) {
			slen += (size_t)snprintf(status + slen, scap - slen, "ok %s\n", u->dst);
			/* The cache follows the remote, for the next listing. */
			if (o->ag.dry_run) {
				/* nothing changed */
			} else if (u->delete_ref) {
				const char *const dargs[] = { "update-ref", "-d", u->dst, NULL };

				(void)run_git(o, dargs, -1, -1, -1, NULL);
			} else {
				const char *const uargs[] = { "update-ref", u->dst, u->src, NULL };

				(void)run_git(o, uargs, -1, -1, -1, NULL);
			}
		} else
			slen += (size_t)snprintf(status + slen, scap - slen, "error %s %s\n", u->dst,
						 k == 1 && why[0] ? why : "the push failed");
	}
	free(b.p);
	/* Our updates go into the saved view; its time stays that of the
	 * last full look at the remote. A refusal (the remote moved) ends the
	 * view's freshness. */
	{
		char path[PATH_MAX];
		struct stat st;

		(void)snprintf(path, sizeof(path), "%s/" RELAY_REMOTE_REFS, o->cache);
		if (!o->ag.dry_run && stat(path, &st) == 0) {
			struct timespec ts[2] = { st.st_atim, st.st_mtim };

			if (strstr(status, "error ")) {
				ts[1].tv_sec = 0;
				ts[1].tv_nsec = 0;
			}
			save_remote_view(o);
			(void)utimensat(AT_FDCWD, path, ts, 0);
		}
	}
	op_unlock(o);
	r = write_all(o, o->out_fd, status, slen);
	if (r < 0) {
		op_fail(o, r, "sending the push status");
		return;
	}
	op_finish(o, 0, "exited");
}

static void do_push(struct op *o)
{
	size_t n = o->req.n_updates;
	const char **args = calloc(8 + 2 * n + 1, sizeof(char *));
	char (*leases)[WIRE_GIT_MAX_REF + WIRE_GIT_OID_MAX + 32] =
		calloc(n + 1, WIRE_GIT_MAX_REF + WIRE_GIT_OID_MAX + 32);
	char (*specs)[WIRE_GIT_MAX_REF + WIRE_GIT_OID_MAX + 4] =
		calloc(n + 1, WIRE_GIT_MAX_REF + WIRE_GIT_OID_MAX + 4);
	bool *present = calloc(n + 1, sizeof(bool));
	char (*srcs)[WIRE_GIT_OID_MAX + 1] = calloc(n + 1, WIRE_GIT_OID_MAX + 1);

	if (args && leases && specs && present && srcs)
		push_with(o, args, leases, specs, present, srcs);
	else
		dispatch_reply_error(o->conn, WIRE_ERROR_INTERNAL, "out of memory");
	free(args);
	free(leases);
	free(specs);
	free(present);
	free(srcs);
}

/* ---- entry ---- */

static bool token_ok(const struct execd *d, const char *token)
{
	size_t n = strlen(token), want = strlen(d->token);
	char cmp[sizeof(d->token)] = { 0 };
	bool ok;

	memcpy(cmp, token, n < want ? n : want);
	ok = sha256_ct_equal(cmp, d->token, want) && n == want;
	explicit_bzero(cmp, sizeof(cmp));
	return ok;
}

void gitrelay_handle(struct execd *d, int conn, const struct ucred *cred, const char *id,
		     const uint8_t *frame, size_t len, int *fds, size_t *n_fds)
{
	struct op o = {
		.d = d, .rl = d->relay, .id = id, .conn = conn, .cred = *cred,
		.in_fd = -1, .out_fd = -1, .err_fd = -1, .null_fd = -1,
		.cache_fd = -1, .lock_fd = -1, .timeout_ms = d->conf->command_timeout_ms,
		.opname = "?",
	};
	char msg[WIRE_MAX_MESSAGE];
	int r;

	o.t0_ms = monoclock_ms();
	o.t_exec_ms = o.t0_ms;
	op_arm(&o);
	if (*n_fds == WIRE_GIT_FDS) {
		o.in_fd = fds[0];
		o.out_fd = fds[1];
		o.err_fd = fds[2];
		*n_fds = 0;
	}
	r = wire_git_decode_request(frame, len, d->conf->max_frame, &o.req);
	if (r >= 0 && o.in_fd < 0)
		r = -EBADMSG;
	if (r < 0) {
		op_refuse(&o, r == -EMSGSIZE || r == -E2BIG ? WIRE_ERROR_TOO_LARGE : WIRE_ERROR_MALFORMED,
			  NULL, r == -EMSGSIZE || r == -E2BIG ? "request too large" : "malformed git request");
		goto out;
	}
	o.opname = o.req.op == WIRE_GIT_PUSH    ? "push"
		   : o.req.op != WIRE_GIT_FETCH ? "ls-remote"
		   : o.req.cloning              ? "clone"
						: "fetch";
	if (!token_ok(d, o.req.token)) {
		op_refuse(&o, WIRE_ERROR_UNAUTHENTICATED, NULL, "wrong token");
		goto out;
	}
	r = gitrelay_url_parse(o.req.url, &o.url);
	if (r < 0) {
		o.url.canonical[0] = '\0';
		(void)snprintf(msg, sizeof(msg),
			       r == -EPROTONOSUPPORT
				       ? "the relay contacts https:// and ssh:// remotes only (not git://, "
					 "http://, file:// or helper:: transports)"
			       : r == -EACCES ? "credentials in a remote URL are refused: the host adds its own"
					      : "not a remote URL the relay accepts (local paths, options, "
						"unusual characters are refused)");
		op_refuse(&o, WIRE_ERROR_POLICY_DENIED, NULL, msg);
		goto out;
	}
	o.ag = (struct authz_git){ .op = o.opname, .url = o.url.canonical,
				   .dry_run = (o.req.flags & WIRE_GIT_FLAG_DRY_RUN) != 0,
				   .atomic = (o.req.flags & WIRE_GIT_FLAG_ATOMIC) != 0 };
	if (!d->relay) {
		op_refuse(&o, WIRE_ERROR_INTERNAL, NULL, "the host's git relay is not available");
		goto out;
	}
	o.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	o.ups = calloc(o.req.n_updates + 1, sizeof(*o.ups));
	o.olds = calloc(o.req.n_updates + 1, sizeof(*o.olds));
	if (o.null_fd < 0 || !o.ups || !o.olds) {
		dispatch_reply_error(conn, WIRE_ERROR_INTERNAL, "out of memory");
		goto out;
	}
	o.ag.updates = o.ups;
	/* List and fetch are decided before the cache is touched. */
	if (o.req.op != WIRE_GIT_PUSH && !op_decide(&o))
		goto out;
	r = cache_open(&o);
	if (r < 0) {
		log_error_errno(r, "git relay: cannot open the cache for '%s': %s", o.url.canonical,
				strerror(-r));
		if (o.audited)
			op_fail(&o, r, "opening the cache");
		else
			op_refuse(&o, WIRE_ERROR_INTERNAL, NULL, "the host's git cache is not usable");
		goto out;
	}
	switch (o.req.op) {
	case WIRE_GIT_LIST:
	case WIRE_GIT_LIST_FOR_PUSH:
		do_list(&o);
		break;
	case WIRE_GIT_FETCH:
		do_fetch(&o);
		break;
	case WIRE_GIT_PUSH:
		do_push(&o);
		break;
	case WIRE_GIT_OP_MAX:
	default:
		dispatch_reply_error(conn, WIRE_ERROR_MALFORMED, "unknown operation");
		break;
	}
out:
	op_disarm(&o);
	safe_close(o.lock_fd); /* releases the cache */
	safe_close(o.cache_fd);
	safe_close(o.in_fd);
	safe_close(o.out_fd);
	safe_close(o.err_fd);
	safe_close(o.null_fd);
	free(o.ups);
	free(o.olds);
	wire_git_request_done(&o.req);
	if (d->relay) {
		pthread_mutex_lock(&d->relay->prune_lock);
		cache_prune(d->relay);
		pthread_mutex_unlock(&d->relay->prune_lock);
	}
}

/* ---- start-up ---- */

static void gitrelay_done_(struct gitrelay *rl)
{
	if (!rl)
		return;
	for (size_t i = 0; i < rl->n_env; i++)
		free(rl->env_store[i]);
	for (size_t i = 0; i < rl->n_user_cfg; i++) {
		free(rl->user_cfg[i].key);
		if (rl->user_cfg[i].value)
			explicit_bzero(rl->user_cfg[i].value, strlen(rl->user_cfg[i].value));
		free(rl->user_cfg[i].value);
	}
	free(rl->user_cfg);
	safe_close(rl->root_fd);
	pthread_mutex_destroy(&rl->prune_lock);
	free(rl->git);
	free(rl->root);
	free(rl);
}

void gitrelay_done(struct execd *d)
{
	gitrelay_done_(d->relay);
	d->relay = NULL;
}

static int add_env(struct gitrelay *rl, const char *name, const char *value)
{
	char *e;

	if (rl->n_env >= RELAY_MAX_ENV - 1)
		return -E2BIG;
	if (asprintf(&e, "%s=%s", name, value) < 0)
		return -ENOMEM;
	rl->env_store[rl->n_env] = e;
	rl->env[rl->n_env++] = e;
	rl->env[rl->n_env] = NULL;
	return 0;
}

/* The user's global settings for credentials and transport (git config
 * --global: ~/.gitconfig or $XDG_CONFIG_HOME/git/config, the user's own
 * files), copied into each new cache's config. */
static int read_user_cfg(struct execd *d, struct gitrelay *rl)
{
	const char *const args[] = { "config", "--global", "--null", "--get-regexp", user_cfg_regexp,
				     NULL };
	const char *env[RELAY_MAX_ENV + 2];
	const char *argv[8];
	char *out = malloc(RELAY_MAX_SMALL);
	size_t len = 0, n = 0, a = 0, off = 0;
	int r;

	if (!out)
		return -ENOMEM;
	argv[a++] = "git";
	for (size_t i = 0; args[i]; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	for (size_t i = 0; i < rl->n_env; i++)
		if (strncmp(rl->env[i], "GIT_CONFIG_GLOBAL=", 18) != 0)
			env[n++] = rl->env[i];
	env[n] = NULL;
	{
		struct spawn_params sp = { .path = rl->git, .argv = (char *const *)argv,
					   .envp = (char *const *)env, .cwd_fd = rl->root_fd };

		r = spawn_capture(&sp, 10000, out, RELAY_MAX_SMALL, &len);
	}
	(void)d;
	if (r == 1) { /* no such keys */
		free(out);
		return 0;
	}
	if (r != 0) {
		free(out);
		return r < 0 ? r : -EIO;
	}
	while (off < len) {
		char *ent = out + off, *nl;
		size_t el = strnlen(ent, len - off);
		struct relay_cfg *nc;

		off += el + 1;
		nl = memchr(ent, '\n', el);
		nc = realloc(rl->user_cfg, (rl->n_user_cfg + 1) * sizeof(*nc));
		if (!nc) {
			free(out);
			return -ENOMEM;
		}
		rl->user_cfg = nc;
		nc[rl->n_user_cfg].key = strndup(ent, nl ? (size_t)(nl - ent) : el);
		nc[rl->n_user_cfg].value = strdup(nl ? nl + 1 : "true");
		if (!nc[rl->n_user_cfg].key || !nc[rl->n_user_cfg].value) {
			free(out);
			return -ENOMEM;
		}
		rl->n_user_cfg++;
	}
	free(out);
	return 0;
}

static int mkdir_p(const char *path)
{
	char p[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int gitrelay_init(struct execd *d)
{
	static const char *const pass[] = { "HOME", "USER", "LOGNAME", "SSH_AUTH_SOCK",
					     "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME",
					     "DBUS_SESSION_BUS_ADDRESS" };
	struct gitrelay *rl = calloc(1, sizeof(*rl));
	const char *bin = d->conf->git_binary ? d->conf->git_binary : "/usr/bin/git";
	struct stat st;
	int r;

	if (!rl)
		return -ENOMEM;
	{
		struct sigaction sa = { .sa_handler = relay_wake }; /* no SA_RESTART */

		(void)sigemptyset(&sa.sa_mask);
		if (sigaction(RELAY_WAKE_SIGNAL, &sa, NULL) < 0) {
			free(rl);
			return log_error_errno(-errno, "git relay: sigaction: %s", strerror(errno));
		}
		relay_wake_ready = 1;
	}
	rl->root_fd = -1;
	pthread_mutex_init(&rl->prune_lock, NULL);
	rl->max_caches = d->conf->git_max_caches;
	rl->max_cache_mb = d->conf->git_max_cache_mb;
	rl->git = realpath(bin, NULL);
	if (!rl->git || stat(rl->git, &st) < 0 || !S_ISREG(st.st_mode) || access(rl->git, X_OK) < 0) {
		log_warn("git relay: no usable git at '%s'; git requests will fail", bin);
		gitrelay_done_(rl);
		return 0;
	}
	if (d->conf->git_cache_dir)
		rl->root = strdup(d->conf->git_cache_dir);
	else {
		const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

		if (state && state[0] == '/')
			r = asprintf(&rl->root, "%s/code-sandbox/git-cache", state);
		else if (home && home[0] == '/')
			r = asprintf(&rl->root, "%s/.local/state/code-sandbox/git-cache", home);
		else
			r = -1;
		if (r < 0)
			rl->root = NULL;
	}
	if (!rl->root) {
		gitrelay_done_(rl);
		return log_error_errno(-EINVAL, "git relay: no cache directory (set git_cache_dir)");
	}
	r = strlen(rl->root) < RELAY_MAX_ROOT ? mkdir_p(rl->root) : -ENAMETOOLONG;
	if (r >= 0)
		r = listen_check_private_dir(rl->root);
	if (r < 0) {
		log_error_errno(r, "git relay: cache directory '%s' is not usable (it must be ours, "
				   "mode 0700): %s",
				rl->root, strerror(-r));
		gitrelay_done_(rl);
		return r;
	}
	rl->root_fd = open(rl->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rl->root_fd < 0) {
		r = -errno;
		gitrelay_done_(rl);
		return log_error_errno(r, "git relay: cannot open '%s'", d->conf->git_cache_dir);
	}
	r = add_env(rl, "PATH", "/usr/local/bin:/usr/bin:/bin");
	for (size_t i = 0; r >= 0 && i < ELEMENTSOF(pass); i++) {
		const char *v = getenv(pass[i]);

		if (v)
			r = add_env(rl, pass[i], v);
	}
	/* Only the cache's own config (and, for reading credentials settings
	 * at start, the user's global one); no system config, no prompts, no
	 * replace refs, no lazy fetches. */
	if (r >= 0)
		r = add_env(rl, "LC_ALL", "C");
	if (r >= 0)
		r = add_env(rl, "GIT_CONFIG_NOSYSTEM", "1");
	if (r >= 0)
		r = add_env(rl, "GIT_CONFIG_GLOBAL", "/dev/null");
	if (r >= 0)
		r = add_env(rl, "GIT_TERMINAL_PROMPT", "0");
	if (r >= 0)
		r = add_env(rl, "GIT_NO_REPLACE_OBJECTS", "1");
	if (r >= 0)
		r = add_env(rl, "GIT_NO_LAZY_FETCH", "1");
	if (r >= 0)
		r = add_env(rl, "GIT_PROTOCOL_FROM_USER", "0");
	if (r >= 0)
		r = read_user_cfg(d, rl);
	if (r < 0) {
		gitrelay_done_(rl);
		return log_error_errno(r, "git relay: cannot prepare: %s", strerror(-r));
	}
	log_info("git relay: git '%s', caches in '%s' (at most %u, %u MiB), %zu setting(s) from "
		 "the user's global git config",
		 rl->git, rl->root, rl->max_caches, rl->max_cache_mb, rl->n_user_cfg);
	d->relay = rl;
	return 0;
}

int gitrelay_check(struct execd *d)
{
	int r = gitrelay_init(d);
	const struct gitrelay *rl = d->relay;

	if (r < 0) {
		printf("# git relay: cannot start: %s (see the log above)\n", strerror(-r));
		return r;
	}
	if (!rl) {
		printf("# git relay: off: no usable git at '%s'; git requests will be refused\n",
		       d->conf->git_binary ? d->conf->git_binary : "/usr/bin/git");
		return 0;
	}
	printf("# git relay: git '%s', caches in '%s' (at most %u, %u MiB)\n", rl->git, rl->root,
	       rl->max_caches, rl->max_cache_mb);
	printf("# git relay: %zu setting(s) from the user's global git config%s", rl->n_user_cfg,
	       rl->n_user_cfg ? ":" : " (none: remotes that need credentials will refuse)");
	/* names only (values may hold secrets), and a URL's user name or
	 * token in a key's subsection ("credential.https://TOKEN@host.helper")
	 * shown as "***" */
	for (size_t i = 0; i < rl->n_user_cfg; i++) {
		const char *k = rl->user_cfg[i].key, *sch = strstr(k, "://");
		const char *at = sch ? strchr(sch + 3, '@') : NULL;
		const char *slash = sch ? strchr(sch + 3, '/') : NULL;

		if (at && (!slash || at < slash))
			printf(" %.*s***%s", (int)(sch + 3 - k), k, at);
		else
			printf(" %s", k);
	}
	printf("\n");
	return 0;
}
