/* SPDX-License-Identifier: MIT */
/* sandbox-execd internals shared by main.c, listen.c, dispatch.c, spawn.c
 * and audit.c. The daemon's single state object lives in main.c. */
#ifndef CS_EXECD_EXECD_H
#define CS_EXECD_EXECD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "auditrec.h"
#include "backend.h"
#include "execdconf.h"
#include "pathmap.h"
#include "toolfiles.h"
#include "wire.h"

#define EXECD_TOKEN_BYTES 32               /* random bytes; the file holds them in hex */
#define EXECD_TOKEN_HEX ((size_t)2 * EXECD_TOKEN_BYTES)
#define EXECD_MAX_PEERS 256                /* distinct containers tracked for limits */
#define EXECD_THREAD_STACK ((size_t)256 * 1024) /* per-request worker stack */
#define EXECD_REQUEST_ID_LEN 40
#define EXECD_EXTRA_THREADS 64 /* workers past their reply, beyond max_concurrent */
#define EXECD_PEER_QUEUE 256   /* connections of one container waiting for a place */
#define EXECD_MAX_QUEUED 1024  /* waiting connections in total */
#define EXECD_QUEUE_WAIT_MS 2000 /* longest wait for a place, then busy */
#define EXECD_SWEEP_MS 100     /* accept loop wake-up while connections wait */
#define EXECD_IDLE_WORKERS 8   /* worker threads kept for the next connection */
#define EXECD_IDLE_MS 2000     /* ... for at most this long */

/* ---- audit.c ---- */
struct audit;

/* Opens (creating 0600, and its missing parent directories 0700) the log,
 * takes an exclusive lock (one writer per log), truncates a torn last line
 * left by a crash (logging a warning and appending a "recovered" record) and
 * continues the chain from the last complete line. Fails closed when the last
 * line is not a record. Logs its own errors. */
int audit_open(const char *path, struct audit **ret);
/* Append one record and fdatasync it before returning: the caller acts
 * (runs the command) only after this succeeded. Thread-safe. */
int audit_write_decision(struct audit *a, const struct auditrec_decision *d);
/* The two halves of audit_write_decision(), for a caller with work to do
 * while the record is on its way to the disk: append it (*ret_end: the log
 * size after it), then audit_sync(end), which returns once it is durable
 * (at once when a concurrent sync already covered it). Nothing may act on
 * the decision before audit_sync() succeeded. Thread-safe. */
int audit_append_decision(struct audit *a, const struct auditrec_decision *d, off_t *ret_end);
int audit_sync(struct audit *a, off_t end);
int audit_write_end(struct audit *a, const struct auditrec_end *e);
/* A refusal before authentication: counted per peer and error, and written
 * as one "refused" record (with the count, the first and last request id)
 * when its one-second window closes, or at audit_close(). Never blocks on
 * the disk (except when more than AUDIT_AGG_SLOTS peers are counted at
 * once). error must be a static string. Thread-safe. */
struct audit_refusal {
	uint64_t peer_key;
	uid_t peer_uid;
	gid_t peer_gid;
	pid_t peer_pid;
	const char *error;
	const char *id; /* copied */
};
void audit_count_refusal(struct audit *a, const struct audit_refusal *n);
void audit_close(struct audit *a);
/* --verify-audit / --show-audit: exit status for main(). */
int audit_verify_file(const char *path);
int audit_show_file(const char *path);

/* ---- listen.c ---- */
/* Takes the socket from systemd (LISTEN_PID/LISTEN_FDS) or binds one in a
 * private directory; writes the per-launch token file beside it (or at
 * conf->token_file). *ret_socket_path and *ret_token_path are malloc'd;
 * *ret_activated tells main not to unlink the socket at exit. */
int listen_setup(const struct execdconf *conf, char *ret_token, size_t token_len, int *ret_fd,
		 char **ret_socket_path, char **ret_token_path, bool *ret_activated);
int listen_write_token(const char *path, char *ret_token, size_t token_len);
/* Checks a directory is ours and closed to others (0700-like). */
int listen_check_private_dir(const char *dir);

/* ---- spawn.c ---- */
struct spawn_params {
	const char *path;       /* absolute */
	char *const *argv;
	char *const *envp;
	int cwd_fd;             /* directory fd; the child fchdir()s into it (-1: stays) */
	int fds[3];             /* stdin, stdout, stderr for the child */
	const int *extra_fds;   /* become fds 3, 4, ... in the child (numbers >= 3 + n_extra) */
	size_t n_extra;
	int cgroup_procs_fd;    /* > 2: the child joins this cgroup first (cgroup.c); 0/-1: none */
};

#define SPAWN_SETSID (1u << 0)    /* a session (and process group) of its own */
#define SPAWN_PDEATHSIG (1u << 1) /* SIGKILL when the calling thread ends */
#define SPAWN_NEWNS (1u << 2)     /* own user (identity-mapped) and pid namespace */
/* The one process-spawning path (signals blocked around the clone, reset
 * and unblocked in the child before execve, restored in the caller):
 * returns once the child has exec'd, or -errno of what failed in it
 * (-EUSERS: SPAWN_NEWNS's id maps could not be written). */
int spawn_exec(const struct spawn_params *p, unsigned flags, pid_t *ret_pid);
/* "UID UID 1\n" lines for our euid/egid, and writing them (plus
 * setgroups "deny") for the calling process in its new user namespace;
 * -1 with errno on failure. Async-signal-safe. */
void spawn_format_id_maps(char *uid_map, char *gid_map, size_t len);
int spawn_write_id_maps(const char *uid_map, const char *gid_map);

/* The spawn server (sandbox-execd-reap --serve, reap.c): started by the
 * main thread (its PID 1s are the daemon's children and their parent-death
 * signal follows that thread). Returns its pidfd, which becomes readable
 * when it ends: then spawn_server_restart() reaps and restarts it. Without
 * a server (never started, or namespaces unavailable) spawn_start() spawns
 * directly. */
int spawn_server_start(const char *reaper_path, int *ret_pidfd);
int spawn_server_restart(int pidfd, int *ret_pidfd);
/* Main thread: the server socket (readable: call spawn_server_event()),
 * -1 without a server; reaps the standby PID 1s that ended unused. */
int spawn_server_fd(void);
void spawn_server_event(void);
void spawn_server_stop(int pidfd);

/* The server's protocol. A request is one SOCK_SEQPACKET message: a
 * uint32 (number of file fds, | SPAWN_SERVER_NO_CWD) with SCM_RIGHTS
 * [reply channel, spec memfd, cwd, stdin, stdout, stderr, file fds...].
 * On the reply channel (SOCK_SEQPACKET) come struct spawn_msg. */
#define SPAWN_SERVER_FDS (6 + TOOLFILES_MAX_FILES)
#define SPAWN_SERVER_NO_CWD 0x80000000u
/* The last fd is the command's cgroup.procs (cgroup.c): the command joins
 * that cgroup, and a cgroup namespace rooted there, before its execve. */
#define SPAWN_SERVER_CGROUP 0x40000000u
#define SPAWN_SPEC_MAGIC 0x53504543u /* "SPEC" */
#define SPAWN_SPEC_MAX ((size_t)4 * 1024 * 1024)
enum spawn_msg_kind {
	SPAWN_MSG_PID = 1,    /* server: PID 1's pid */
	SPAWN_MSG_FAIL,       /* server: the clone failed, errno */
	SPAWN_MSG_MAPFAIL,    /* PID 1: its id maps failed, errno */
	SPAWN_MSG_STARTED,    /* PID 1: the command's execve, 0 or errno */
	/* On the server socket, to the daemon's main thread: */
	SPAWN_MSG_STANDBY,    /* a PID 1 made ahead of its request, pid */
	SPAWN_MSG_TAKEN,      /* ... handed a request (the worker reaps it) */
	SPAWN_MSG_STANDBY_DEAD, /* ... ended unused: the daemon reaps it */
	SPAWN_MSG_MAX,
};
struct spawn_msg {
	uint32_t kind;
	int32_t value;
};
/* Sealed memfd: header, then path, argv..., envp... each NUL-terminated. */
struct spawn_spec_header {
	uint32_t magic, argc, envc, strings_len;
};
struct spawn_spec {
	char *buf;
	const char *path;
	char **argv, **envp; /* NULL-terminated, into buf */
};
int spawn_spec_encode(const struct spawn_params *p, int *ret_fd);
int spawn_spec_decode(int fd, struct spawn_spec *ret); /* spawn_spec_done() either way */
void spawn_spec_done(struct spawn_spec *s);

/* Starts a command in a new session (so its process group is its pid) with
 * only fds 0-2 (and extra_fds) open, under PID 1 of user and pid
 * namespaces of its own where the kernel allows them (through the spawn
 * server). Returns the pid (of PID 1) and a pidfd; the pid is our child. */
int spawn_start(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd);
/* True while commands start in namespaces of their own (so nothing of a
 * finished command survives it). */
bool spawn_namespaces_in_use(void);
/* Kills the command's whole process group. */
void spawn_kill_group(pid_t pid);
/* Reaps (after killing the rest of its group). ret_status as waitid's
 * siginfo: *ret_code, *ret_signaled. */
int spawn_reap(pid_t pid, int pidfd, int *ret_code, bool *ret_signaled);
/* Runs a helper command to completion with stdout captured (up to
 * max - 1 bytes, NUL-terminated, length in *ret_len if not NULL), stdin and
 * stderr on /dev/null, killed after timeout_ms. Returns its exit status
 * (>= 0) or -errno (-EMSGSIZE when the output does not fit). */
int spawn_capture(const struct spawn_params *p, unsigned timeout_ms, char *out, size_t max,
		  size_t *ret_len);

/* ---- cgroup.c ---- */
/* A command's own cgroup v2, a child of the daemon's, where that is
 * writable: the command joins it before execve (procs_fd into
 * spawn_params.cgroup_procs_fd) and cgroup.kill ends everything in it. */
struct cgroup_cmd {
	int dir_fd;   /* -1: none (not writable here, or failed: logged) */
	int procs_fd; /* its cgroup.procs */
	int kill_fd;  /* its cgroup.kill */
	char name[EXECD_REQUEST_ID_LEN + 16];
};
/* Makes the cgroup for request id when the daemon's cgroup is usable (the
 * first call probes and logs which way it went). Never fails the request:
 * without one, ret->dir_fd and ret->procs_fd are -1. */
void cgroup_cmd_create(const char *id, struct cgroup_cmd *ret);
/* SIGKILLs every process in the cgroup (no-op without one). */
void cgroup_cmd_kill(const struct cgroup_cmd *cg);
/* Removes the cgroup; when it is not empty, kills what is left and waits
 * (at most 1 s) for it to empty first. Closes its fds. Safe on a cgroup
 * that was never made. */
void cgroup_cmd_remove(struct cgroup_cmd *cg);

/* ---- toolrun.c ---- */
struct execd;
/* What toolrun_prepare() needs of the request. */
struct toolrun_ctx {
	const char *id;
	const char *const *argv; /* argv[0] is the tool name */
	size_t argc;
	const char *container_cwd;
	const struct pathmap *map;
	const int *root_fds;
	size_t map_index; /* the cwd's mapping */
	const char *rel;  /* the cwd beneath that mapping's root, "." for the root */
	int cwd_fd;
};

struct toolrun {
	struct toolfiles_plan plan;
	int priv_fd;        /* the tool's private directory, -1: none (git) */
	char priv_name[EXECD_REQUEST_ID_LEN + 8];
	int null_fd;        /* stdin when plan.stdin_null */
	size_t n_fds;
	int fds[TOOLFILES_MAX_FILES]; /* sealed memfds, child fds 3.. */
	size_t n_strs;
	char *strs[TOOLFILES_MAX_FILES];
	const char **argv;  /* what runs; strings borrowed or in strs */
	size_t argc;
	size_t n_env;
	const char *env[4];
};

/* At start-up, for each tool-table entry: may path (its realpath rp) be
 * run as this tool (toolfiles_check_binary(): no psql wrapper script)?
 * 0, or -errno logged with the real binary to name instead. */
int toolrun_check_tool(const char *name, const char *path, const char *rp);
/* Makes the work directory and terraform's CLI configuration. Logs. */
int toolrun_init(struct execd *d);
void toolrun_done(struct execd *d);
/* Carries out tr->plan (filled by the caller with toolfiles_plan()):
 * private directory, file arguments (memfds, argv rewritten), psql checks,
 * terraform copies. On failure *reterr_kind and msg say what to answer;
 * toolrun_release() cleans up either way. */
int toolrun_prepare(struct execd *d, const struct toolrun_ctx *c, struct toolrun *tr,
		    enum wire_error *reterr_kind, char *msg, size_t msg_len);
void toolrun_release(struct execd *d, struct toolrun *tr);
/* After the command: a terraform plan made with plan -out=NAME (when the
 * run succeeded) goes into the daemon's plan store under a new random id,
 * which one line on errfd (the client's stderr, -1: none) tells. 1 when
 * a plan was kept, 0 when there was none, -errno (logged). */
int toolrun_finish(struct execd *d, struct toolrun *tr, const char *req_id, bool succeeded,
		   int errfd);

/* A private directory for a command: an empty one kept from an earlier
 * command, or a new "run-ID" beneath d->work_fd. *ret_fd is O_RDONLY. */
int privdir_take(struct execd *d, const char *id, char *ret_name, size_t name_len, int *ret_fd);
/* After the command: keeps it (taking fd) when it is exactly as made and
 * the command ran in its own pid namespace; false: the caller removes it. */
bool privdir_give_back(struct execd *d, const char *name, int fd);
/* At exit: removes the kept ones. */
void privdir_drain(struct execd *d);

/* ---- dispatch.c ---- */
struct execd_conn;

struct execd_peer {
	uint64_t key;  /* pid namespace inode of the peer, or its uid + 2^32 */
	unsigned n;    /* requests in flight */
	unsigned n_queued;
	struct execd_conn *head, *tail; /* waiting for a place, oldest first */
};

/* ---- privdir.c ---- */
/* Empty private directories kept for reuse: as many as the default
 * max_concurrent, so a burst of that many does not mkdir (ext4's inode
 * search was 4% of the daemon's CPU with 50 clients and 32 kept). */
#define EXECD_PRIVDIR_POOL 64
struct privdir_pool {
	pthread_mutex_t lock;
	size_t n;
	struct {
		int fd;
		char name[EXECD_REQUEST_ID_LEN + 8];
	} e[EXECD_PRIVDIR_POOL];
};

struct execd {
	const struct execdconf *conf;
	const struct backend_ops *ops;
	struct backend *backend;
	struct audit *audit;
	char token[EXECD_TOKEN_HEX + 1];
	char *tool_paths[EXECDCONF_MAX_TOOLS]; /* realpath()s, same order as conf->tools */
	int root_fds[PATHMAP_MAX_ENTRIES];     /* O_PATH fds of the host roots */
	int root_dir_fd;                       /* "/", a neutral directory for helpers */
	struct gitrelay *relay;                /* execd/gitrelay.c; NULL when unavailable */
	char **base_env;                       /* allowlisted environment, built at start */
	char launch_id[17];
	int work_fd;       /* private directory for the tools' own directories */
	char *work_path;
	bool work_owned;   /* made by us at start-up: removed at exit */
	char *tool_env[3]; /* TF_CLI_CONFIG_FILE=, TF_PLUGIN_CACHE_DIR=, GH_HOST= */
	struct privdir_pool privdirs;
	char *psql_user;   /* our user's name: psql's default user and database; NULL: unknown */

	pthread_mutex_t lock;
	pthread_cond_t idle; /* broadcast when threads drops to 0 */
	unsigned active;     /* requests not yet answered (max_concurrent) */
	unsigned threads;    /* workers alive, incl. those writing an end record */
	struct execd_peer peers[EXECD_MAX_PEERS];
	unsigned n_queued; /* waiting connections, all containers */
	size_t rr;         /* round-robin position over peers */
	pthread_attr_t worker_attr;
	pthread_cond_t work;          /* idle workers wait here for a handoff */
	struct execd_conn *handoff;   /* admitted connections for idle workers */
	unsigned idle_workers;        /* idle and not yet claimed (sched.c) */
	atomic_ulong next_seq;
	atomic_bool stopping;
	int stop_fd; /* eventfd: becomes readable at shutdown */
};

struct execd_conn {
	struct execd *d;
	int fd;
	struct ucred cred; /* SO_PEERCRED at accept */
	uint64_t key;      /* its container (dispatch_peer_key) */
	long long t_accept_ms;
	struct execd_conn *next; /* in its container's queue */
};

/* ---- sched.c ---- */
/* Admits an accepted connection (c owned from here on): starts its worker,
 * queues it behind its container's running requests, or answers busy. */
void sched_admit(struct execd *d, struct execd_conn *c);
/* A request of container key has its answer: its place goes to the next
 * waiting connection (round-robin over containers). */
void sched_release(struct execd *d, uint64_t key);
/* Answers busy to connections that waited EXECD_QUEUE_WAIT_MS (all of them
 * when `all`, at shutdown), starts waiting ones that fit. Returns how many
 * still wait. Main thread. */
int sched_sweep(struct execd *d, bool all);

/* Worker thread entry: handles one connection completely, closes it,
 * decrements d->active and frees the execd_conn. */
void *dispatch_connection(void *conn);
/* Sends a one-shot error reply (used by the accept loop for `busy`). */
void dispatch_reply_error(int fd, enum wire_error e, const char *msg);
/* Refuses a connection that cannot be taken (busy): counted in the audit
 * log with the peer's credentials, answered, input drained. The caller
 * closes c->fd. */
void dispatch_refuse_busy(struct execd *d, const struct execd_conn *c, const char *msg);
/* Counts a connection that closed before sending anything. */
void dispatch_count_empty(struct execd *d, const struct execd_conn *c);
/* The container of a peer: its pid namespace's inode, else uid + 2^32. */
uint64_t dispatch_peer_key(const struct ucred *c);
/* Builds the allowlisted base environment from the daemon's own. */
int dispatch_build_base_env(struct execd *d);

#endif
