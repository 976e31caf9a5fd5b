/* SPDX-License-Identifier: MIT */
/* sandbox-execd internals shared by main.c, listen.c, dispatch.c, spawn.c
 * and audit.c. The daemon's single state object lives in main.c. */
#ifndef CS_EXECD_EXECD_H
#define CS_EXECD_EXECD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auditrec.h"
#include "backend.h"
#include "execdconf.h"
#include "wire.h"

#define EXECD_TOKEN_BYTES 32               /* random bytes; the file holds them in hex */
#define EXECD_TOKEN_HEX ((size_t)2 * EXECD_TOKEN_BYTES)
#define EXECD_MAX_PEERS 256                /* distinct containers tracked for limits */
#define EXECD_THREAD_STACK ((size_t)256 * 1024) /* per-request worker stack */
#define EXECD_REQUEST_ID_LEN 40
#define EXECD_EXTRA_THREADS 64 /* workers past their reply, beyond max_concurrent */

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
int audit_write_end(struct audit *a, const struct auditrec_end *e);
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
	int cwd_fd;             /* directory fd; the child fchdir()s into it */
	int fds[3];             /* stdin, stdout, stderr for the child */
};

/* Starts a command in a new session (so its process group is its pid) with
 * only fds 0-2 open. Returns the pid and a pidfd. */
int spawn_start(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd);
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

/* ---- dispatch.c ---- */
struct execd_peer {
	uint64_t key;  /* pid namespace inode of the peer, or its uid + 2^32 */
	unsigned n;
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

	pthread_mutex_t lock;
	pthread_cond_t idle; /* broadcast when threads drops to 0 */
	unsigned active;     /* requests not yet answered (max_concurrent) */
	unsigned threads;    /* workers alive, incl. those writing an end record */
	struct execd_peer peers[EXECD_MAX_PEERS];
	atomic_ulong next_seq;
	atomic_bool stopping;
	int stop_fd; /* eventfd: becomes readable at shutdown */
};

struct execd_conn {
	struct execd *d;
	int fd;
};

/* Worker thread entry: handles one connection completely, closes it,
 * decrements d->active and frees the execd_conn. */
void *dispatch_connection(void *conn);
/* Sends a one-shot error reply (used by the accept loop for `busy`). */
void dispatch_reply_error(int fd, enum wire_error e, const char *msg);
/* Builds the allowlisted base environment from the daemon's own. */
int dispatch_build_base_env(struct execd *d);

#endif
