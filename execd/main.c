/* SPDX-License-Identifier: MIT */
/* sandbox-execd: the host side of code-sandbox's tool wrappers. Runs as the
 * user, holds the credentials, authorizes every request through the
 * configured backend, audits it, and runs the real tool.
 *
 *   sandbox-execd [--config FILE] [--pidfile FILE]   serve
 *   sandbox-execd [--config FILE] --check            validate and print
 *   sandbox-execd --verify-audit [FILE]              check the hash chain
 *   sandbox-execd --show-audit [FILE]                print it readably
 *
 * Start-up fails closed with one clear message: bad configuration (file:
 * line), a tool binary missing, a mapped directory missing, a backend
 * lacking what it needs, an audit log that cannot be continued, a socket
 * directory others can enter. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "execd.h"
#include "fdio.h"
#include "gitrelayd.h"
#include "log.h"
#include "macros.h"

#define MAIN_SHUTDOWN_GRACE_S 10
#define MAIN_ACCEPT_BATCH 64 /* connections accepted per wake-up */
#define MAIN_MALLOC_ARENAS 2 /* workers share these (each would get its own) */
#define MAIN_TRIM_MS 1000    /* idle this long after requests: memory back */

static struct execd daemon_state = { .stop_fd = -1, .root_dir_fd = -1, .work_fd = -1 };
static struct execdconf conf;

static int read_file(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* The configuration chooses which binaries run with the user's
	 * credentials: only the user (or root) may be able to change it. */
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022))
		return -EPERM;
	if ((size_t)st.st_size > EXECDCONF_MAX_SIZE)
		return -E2BIG;
	/* Never past the size fstat saw: a file growing meanwhile is refused. */
	r = fdio_read_capped(fd, (size_t)st.st_size, 0, ret, ret_len);
	return r == -EFBIG ? -E2BIG : r;
}

static char *default_config_path(void)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *p = NULL;

	if (x && x[0] == '/') {
		if (asprintf(&p, "%s/code-sandbox/execd.conf", x) < 0)
			return NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&p, "%s/.config/code-sandbox/execd.conf", home) < 0)
			return NULL;
	}
	return p;
}

static int load_config(const char *path)
{
	_cleanup_free_ char *text = NULL;
	struct execdconf_error e = { 0 };
	size_t len = 0;
	int r;

	r = read_file(path, &text, &len);
	if (r == -EPERM)
		return log_error_errno(r, "Configuration '%s' must be owned by us or root and not "
					  "writable by group or others", path);
	if (r < 0)
		return log_error_errno(r, "Cannot read configuration '%s': %s", path, strerror(-(r)));
	execdconf_init(&conf);
	r = execdconf_parse(&conf, text, len, &e);
	if (r >= 0)
		r = execdconf_validate(&conf, &e);
	if (r < 0) {
		if (e.line > 0)
			log_error("%s:%u: %s", path, e.line, e.message);
		else
			log_error("%s: %s", path, e.message);
		return r;
	}
	return 0;
}

/* Tools are resolved once, here: the path the config names, canonical, a
 * regular executable file. Requests can only pick a name from this table. */
static int resolve_tools(struct execd *d)
{
	for (size_t i = 0; i < conf.n_tools; i++) {
		char *rp;
		struct stat st;

		/* Host git run on the agent's repository executes what the
		 * repository configures (hooks, filters, fsmonitor, aliases):
		 * git reaches the host only through the relay (gitrelay.c). */
		if (strcmp(conf.tools[i].name, "git") == 0)
			return log_error_errno(-EINVAL, "tool 'git' is not supported: git runs in the "
						"container and its network half goes through the git relay "
						"(README.md, \"git\"); remove the 'tool git' line");
		rp = realpath(conf.tools[i].path, NULL);
		if (!rp)
			return log_error_errno(-errno, "tool '%s': cannot resolve '%s': %s",
					       conf.tools[i].name, conf.tools[i].path, strerror(errno));
		if (stat(rp, &st) < 0 || !S_ISREG(st.st_mode) || access(rp, X_OK) < 0) {
			free(rp);
			return log_error_errno(-EACCES, "tool '%s': '%s' is not an executable file",
					       conf.tools[i].name, conf.tools[i].path);
		}
		if (toolrun_check_tool(conf.tools[i].name, conf.tools[i].path, rp) < 0) {
			free(rp);
			return -EINVAL;
		}
		/* Executed at the configured path, not its realpath: a
		 * multiplexing wrapper (Debian's /usr/bin/psql is pg_wrapper, a
		 * script) decides what to do from the name it was started by,
		 * and an interpreter sees the script's path, not argv[0]. The
		 * realpath only served the check above. */
		free(rp);
		d->tool_paths[i] = strdup(conf.tools[i].path);
		if (!d->tool_paths[i])
			return log_error_errno(-ENOMEM, "Out of memory");
	}
	for (size_t i = 0; i < conf.map.n; i++) {
		d->root_fds[i] = open(conf.map.e[i].host, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (d->root_fds[i] < 0)
			return log_error_errno(-errno, "map '%s': cannot open host directory '%s': %s",
					       conf.map.e[i].container, conf.map.e[i].host, strerror(errno));
	}
	d->root_dir_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->root_dir_fd < 0)
		return log_error_errno(-errno, "Cannot open '/': %s", strerror(errno));
	return 0;
}

static void fill_backend_config(struct backend_config *b)
{
	*b = (struct backend_config){
		.policy_file = conf.policy_file,
		.webhook_url = conf.webhook_url,
		.webhook_token_file = conf.webhook_token_file,
		.webhook_ca_file = conf.webhook_ca_file,
		.webhook_timeout_ms = conf.webhook_timeout_ms,
		.webhook_poll_ms = conf.webhook_poll_ms,
		.exec_program = conf.exec_program,
		.exec_timeout_ms = conf.exec_timeout_ms,
		.decision_timeout_ms = conf.decision_timeout_ms,
	};
}

static int open_backend(struct execd *d)
{
	struct backend_config bc;
	char err[512] = "";
	int r;

	d->ops = backend_find(conf.backend);
	if (!d->ops)
		return log_error_errno(-EINVAL, "Unknown backend '%s' (allow_all, static, webhook, exec)",
				       conf.backend);
	fill_backend_config(&bc);
	r = d->ops->open(&bc, &d->backend, err, sizeof(err));
	if (r < 0)
		return log_error_errno(r, "backend '%s' cannot start: %s", conf.backend,
				       err[0] ? err : "(no detail)");
	return 0;
}

static void print_opt(const char *k, const char *v)
{
	if (v)
		printf("%s = %s\n", k, v);
}

static void print_config(const char *path)
{
	printf("# %s: OK\n", path);
	print_opt("backend", conf.backend);
	print_opt("policy_file", conf.policy_file);
	print_opt("webhook_url", conf.webhook_url);
	print_opt("webhook_token_file", conf.webhook_token_file);
	print_opt("webhook_ca_file", conf.webhook_ca_file);
	printf("webhook_timeout_ms = %u\nwebhook_poll_ms = %u\n", conf.webhook_timeout_ms,
	       conf.webhook_poll_ms);
	print_opt("exec_program", conf.exec_program);
	printf("exec_timeout_ms = %u\ndecision_timeout_ms = %u\n", conf.exec_timeout_ms,
	       conf.decision_timeout_ms);
	print_opt("audit_log", conf.audit_log);
	print_opt("socket", conf.socket ? conf.socket : "(default: $XDG_RUNTIME_DIR/code-sandbox/execd.sock)");
	print_opt("token_file", conf.token_file ? conf.token_file : "(default: beside the socket)");
	printf("command_timeout_ms = %u\nmax_concurrent = %u\nmax_concurrent_per_peer = %u\n"
	       "max_frame = %u\nrequest_read_timeout_ms = %u\n",
	       conf.command_timeout_ms, conf.max_concurrent, conf.max_concurrent_per_peer,
	       conf.max_frame, conf.request_read_timeout_ms);
	for (size_t i = 0; i < conf.n_tools; i++)
		printf("tool %s = %s   # executed at this path, argv[0] '%s'\n", conf.tools[i].name,
		       daemon_state.tool_paths[i], conf.tools[i].name);
	for (size_t i = 0; i < conf.map.n; i++)
		printf("map %s = %s\n", conf.map.e[i].container, conf.map.e[i].host);
}

static int setup_signals(int *ret_fd)
{
	sigset_t set;
	int fd;

	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	/* Blocked before any thread exists, so every worker inherits it and
	 * only the signalfd sees them; children get an empty mask (spawn.c). */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -EINVAL;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

/* Accepts one connection; false when there was none to take. */
static bool accept_one(struct execd *d, int lfd)
{
	struct execd_conn *c;
	socklen_t cl;
	char probe;
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		/* EAGAIN/ECONNABORTED: the client left; EMFILE etc.: logged,
		 * the loop goes on (the daemon must not die on load). */
		if (errno == EMFILE || errno == ENFILE) {
			/* Out of descriptors: the pending connection stays
			 * pending and poll() would report it again at once.
			 * Back off briefly instead of spinning (and logging)
			 * until running requests give descriptors back. */
			struct timespec pause = { .tv_nsec = 50000000L }; /* 50 ms */

			log_warn("accept() failed: out of file descriptors, retrying shortly");
			(void)nanosleep(&pause, NULL);
		} else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn_errno(-errno, "accept() failed: %s, ignoring", strerror(errno));
		return false;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		dispatch_reply_error(fd, WIRE_ERROR_BUSY, "the host cannot take more requests now");
		safe_close(fd);
		return true;
	}
	c->d = d;
	c->fd = fd;
	/* The container is known before anything is read: its connections
	 * count against its own limit first (sched.c). Without credentials
	 * (the peer already left) it is charged as uid -1. */
	cl = sizeof(c->cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &cl) < 0)
		c->cred = (struct ucred){ .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	c->key = dispatch_peer_key(&c->cred);
	/* A peer that connected and already left (a connect/close flood)
	 * costs no worker thread and no place: counted, closed. */
	if (recv(fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
		dispatch_count_empty(d, c);
		safe_close(fd);
		free(c);
		return true;
	}
	sched_admit(d, c);
	return true;
}

static int serve(struct execd *d, int lfd, int sfd, int *server_pidfd)
{
	pthread_attr_t *attr = &d->worker_attr;
	int waiting = 0;
	bool trim = false; /* requests came since the last malloc_trim() */

	if (pthread_attr_init(attr) != 0 || pthread_attr_setstacksize(attr, EXECD_THREAD_STACK) != 0 ||
	    pthread_attr_setdetachstate(attr, PTHREAD_CREATE_DETACHED) != 0)
		return log_error_errno(-EINVAL, "Cannot set up worker threads");
	/* Accepting in batches until EAGAIN needs a non-blocking listener
	 * (also one systemd passed). */
	{
		int fl = fcntl(lfd, F_GETFL);

		if (fl < 0 || fcntl(lfd, F_SETFL, fl | O_NONBLOCK) < 0)
			return log_error_errno(-errno, "Cannot make the socket non-blocking: %s",
					       strerror(errno));
	}
	for (;;) {
		struct pollfd pfd[4] = { { .fd = lfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN },
					 { .fd = *server_pidfd, .events = POLLIN },
					 { .fd = spawn_server_fd(), .events = POLLIN } };

		/* Connections waiting for a place are looked at every
		 * EXECD_SWEEP_MS: those past EXECD_QUEUE_WAIT_MS get busy. */
		int n = poll(pfd, 4, waiting > 0 ? EXECD_SWEEP_MS : trim ? MAIN_TRIM_MS : -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return log_error_errno(-errno, "poll() failed: %s", strerror(errno));
		}
		/* Quiet for MAIN_TRIM_MS after requests: what the burst's workers
		 * freed goes back to the kernel (idle RSS, issue 9). */
		if (n == 0 && trim && waiting == 0) {
			pthread_mutex_lock(&d->lock);
			trim = d->threads > 0;
			pthread_mutex_unlock(&d->lock);
			if (!trim)
				(void)malloc_trim(0);
			continue;
		}
		if (pfd[0].revents)
			trim = true;
		/* The server's news of its standby PID 1s (spawn.c). */
		if (pfd[3].revents & POLLIN)
			spawn_server_event();
		/* The spawn server ended (killed by someone): commands fail
		 * to start until it is back, here, from the main thread. */
		if (pfd[2].revents) {
			int r = spawn_server_restart(*server_pidfd, server_pidfd);

			if (r < 0) {
				*server_pidfd = -1;
				log_error_errno(r, "Cannot restart the spawn server: %s; every command "
						   "fails to start from now on (restart the daemon)",
						strerror(-r));
			}
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				log_info("Received signal %u, shutting down", si.ssi_signo);
				break;
			}
		}
		/* Drain the backlog in a batch: one poll per connection would
		 * let a flooding container's backlog delay the others'. */
		for (int i = 0; pfd[0].revents && i < MAIN_ACCEPT_BATCH && accept_one(d, lfd); i++)
			;
		waiting = sched_sweep(d, false);
	}
	return 0;
}

static void wait_idle(struct execd *d)
{
	struct timespec deadline;
	uint64_t one = 1;

	atomic_store(&d->stopping, true);
	(void)sched_sweep(d, true); /* waiting connections: busy, closed */
	/* Workers watch stop_fd and kill their commands. */
	if (write(d->stop_fd, &one, sizeof(one)) < 0)
		log_warn_errno(-errno, "Cannot signal workers: %s, ignoring", strerror(errno));
	(void)clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += MAIN_SHUTDOWN_GRACE_S;
	pthread_mutex_lock(&d->lock);
	while (d->threads > 0)
		if (pthread_cond_timedwait(&d->idle, &d->lock, &deadline) == ETIMEDOUT)
			break;
	if (d->threads > 0)
		log_warn("%u requests still running at shutdown", d->threads);
	pthread_mutex_unlock(&d->lock);
}

static void usage(void)
{
	printf("Usage: sandbox-execd [--config FILE] [--pidfile FILE]\n"
	       "       sandbox-execd [--config FILE] --check\n"
	       "       sandbox-execd [--config FILE] --verify-audit [FILE]\n"
	       "       sandbox-execd [--config FILE] --show-audit [FILE]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "verify-audit", no_argument, NULL, 'v' },
		{ "show-audit", no_argument, NULL, 's' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct execd *d = &daemon_state;
	_cleanup_free_ char *config = NULL, *socket_path = NULL, *token_path = NULL;
	const char *pidfile = NULL;
	bool check = false, verify = false, show = false, activated = false;
	_cleanup_close_ int lfd = -1, sfd = -1;
	int opt, r, ret = 1, server_pidfd = -1;

	log_setup("sandbox-execd");
	(void)umask(077);
	/* glibc gives each thread that allocates an arena of its own, kept
	 * after the thread ends: a burst of workers left megabytes behind. */
	(void)mallopt(M_ARENA_MAX, MAIN_MALLOC_ARENAS);
	/* fds 0-2 must be open, or a received fd could land on them. */
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			return 1;
	(void)signal(SIGPIPE, SIG_IGN);

	while ((opt = getopt_long(argc, argv, "c:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'c':
			free(config);
			config = strdup(optarg);
			break;
		case 'k':
			check = true;
			break;
		case 'v':
			verify = true;
			break;
		case 's':
			show = true;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if ((verify || show) && optind < argc)
		return verify ? audit_verify_file(argv[optind]) : audit_show_file(argv[optind]);
	if (optind < argc) {
		usage();
		return 2;
	}
	if (!config)
		config = default_config_path();
	if (!config) {
		log_error("No --config and neither XDG_CONFIG_HOME nor HOME is set");
		return 1;
	}
	if (load_config(config) < 0)
		return 1;
	if (verify || show) {
		r = verify ? audit_verify_file(conf.audit_log) : audit_show_file(conf.audit_log);
		execdconf_done(&conf);
		return r;
	}

	d->conf = &conf;
	{
		pthread_condattr_t ca;

		/* d->work's timed waits run on the monotonic clock (sched.c). */
		if (pthread_mutex_init(&d->lock, NULL) != 0 || pthread_cond_init(&d->idle, NULL) != 0 ||
		    pthread_mutex_init(&d->privdirs.lock, NULL) != 0 || pthread_condattr_init(&ca) != 0 ||
		    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
		    pthread_cond_init(&d->work, &ca) != 0)
			return 1;
	}
	for (size_t i = 0; i < PATHMAP_MAX_ENTRIES; i++)
		d->root_fds[i] = -1;
	if (resolve_tools(d) < 0 || open_backend(d) < 0)
		goto out;
	if (check) {
		print_config(config);
		printf("# backend '%s' opened successfully\n", d->ops->name);
		ret = gitrelay_check(d) < 0 ? 1 : 0;
		goto out;
	}
	if (dispatch_build_base_env(d) < 0 || toolrun_init(d) < 0)
		goto out;
	{
		/* The spawn server lives beside the daemon's binary. Started
		 * here, by the main thread, before any worker exists: the
		 * commands' PID 1s are our children, and their parent-death
		 * signal follows this thread (spawn.c). */
		static char reaper[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", reaper, sizeof(reaper) - 32);

		r = -ENOENT;
		if (n > 0) {
			reaper[n] = '\0';
			(void)strcat(reaper, "-reap");
			if (access(reaper, X_OK) == 0)
				r = spawn_server_start(reaper, &server_pidfd);
		}
		if (r < 0)
			log_warn("Cannot start '%s' (%s): commands start without their own pid "
				 "namespace; setsid descendants can outlive them, continuing",
				 reaper, strerror(-r));
	}
	/* Without a relay (no git, unusable cache directory: logged) tools
	 * are still served; git requests are refused. */
	(void)gitrelay_init(d);
	{
		unsigned char rnd[8];

		if (getentropy(rnd, sizeof(rnd)) < 0)
			goto out;
		for (size_t i = 0; i < sizeof(rnd); i++)
			(void)snprintf(d->launch_id + 2 * i, 3, "%02x", rnd[i]);
	}
	d->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->stop_fd < 0 || setup_signals(&sfd) < 0) {
		log_error("Cannot set up signal handling");
		goto out;
	}
	if (audit_open(conf.audit_log, &d->audit) < 0)
		goto out;
	if (listen_setup(&conf, d->token, sizeof(d->token), &lfd, &socket_path, &token_path,
			 &activated) < 0)
		goto out;
	if (pidfile) {
		FILE *f = fopen(pidfile, "we");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
			log_error("Cannot write pid file '%s'", pidfile);
			goto out;
		}
	}
	if (strcmp(d->ops->name, "allow_all") == 0)
		log_warn("*** backend allow_all: every request is approved (still audited) ***");
	log_info("Listening on '%s'%s, token in '%s', backend '%s', %zu tools, %zu maps", socket_path,
		 activated ? " (socket activation)" : "", token_path, d->ops->name, conf.n_tools,
		 conf.map.n);
	ret = serve(d, lfd, sfd, &server_pidfd) < 0 ? 1 : 0;
	lfd = safe_close(lfd);
	wait_idle(d);
	if (!activated)
		(void)unlink(socket_path);
	(void)unlink(token_path);
	if (pidfile)
		(void)unlink(pidfile);
out:
	/* After wait_idle(): requests still running keep their PID 1s,
	 * which do not need the server. */
	spawn_server_stop(server_pidfd);
	explicit_bzero(d->token, sizeof(d->token));
	if (d->backend)
		d->ops->close(d->backend);
	audit_close(d->audit);
	gitrelay_done(d);
	for (size_t i = 0; i < conf.n_tools; i++)
		free(d->tool_paths[i]);
	for (size_t i = 0; i < PATHMAP_MAX_ENTRIES; i++)
		safe_close(d->root_fds[i]);
	safe_close(d->root_dir_fd);
	safe_close(d->stop_fd);
	privdir_drain(d);
	toolrun_done(d);
	if (d->base_env)
		for (char **e = d->base_env; *e; e++)
			free(*e);
	free(d->base_env);
	execdconf_done(&conf);
	return ret;
}
