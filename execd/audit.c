/* SPDX-License-Identifier: MIT */
/* The audit log writer of sandbox-execd, and --verify-audit/--show-audit.
 *
 * One writer: a mutex orders records (the hash chain needs a total order) and
 * an exclusive flock() keeps a second daemon off the same file. Each record
 * is written with O_APPEND and fdatasync()ed before the call returns, so a
 * decision record is durable before its command runs; concurrent writers
 * share syncs (group commit).
 *
 * Crash behaviour: a crash (or SIGKILL, or power loss) while a record is
 * being written can leave a last line without its newline. Such a line was
 * never acknowledged (the command it announces never started, or its end was
 * not reported), so at the next start the writer truncates it away, logs a
 * warning with the number of bytes, and appends a "recovered" record that
 * states it: the chain stays verifiable and the truncation is on the record.
 * The verifier treats a trailing partial line the same way (reports it, does
 * not fail), so verification of everything complete passes in between. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auditrec.h"
#include "execd.h"
#include "fdio.h"
#include "log.h"
#include "macros.h"
#include "monoclock.h"

#define AUDIT_SCAN_CHUNK 65536
#define AUDIT_AGG_SLOTS 256       /* peers x error kinds counted at once */
#define AUDIT_AGG_WINDOW_MS 1000  /* one "refused" record per slot per window */

/* Refusals counted, not yet written (audit_count_refusal). */
struct audit_agg {
	bool used;
	struct audit_refusal note; /* the first refusal; ids copied below */
	uint64_t count;
	struct timespec first, last;
	long long deadline_ms; /* CLOCK_MONOTONIC: when the window closes */
	char first_id[EXECD_REQUEST_ID_LEN], last_id[EXECD_REQUEST_ID_LEN];
};

struct audit {
	pthread_mutex_t lock;      /* orders writes and the chain */
	pthread_mutex_t sync_lock; /* one fdatasync at a time */
	int fd;
	off_t size;   /* bytes written (under lock) */
	off_t synced; /* bytes known durable (under sync_lock) */
	struct auditrec_chain chain;
	char *path;
	bool failed; /* a write could not be undone: refuse everything after */

	pthread_mutex_t agg_lock; /* the counted refusals and the flusher */
	pthread_cond_t agg_cond;
	pthread_t flusher;
	bool flusher_started, stopping;
	struct audit_agg agg[AUDIT_AGG_SLOTS];
};

static int mkdir_parents(const char *path)
{
	_cleanup_free_ char *p = strdup(path);
	char *slash;

	if (!p)
		return -ENOMEM;
	slash = strrchr(p, '/');
	if (!slash || slash == p)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return 0;
	*slash = '\0';
	for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = '\0';
		/* EEXIST: the usual case; anything else shows up at open(). */
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (!s)
			break;
		*s = '/';
	}
	return 0;
}

/* Offset just after the last '\n' strictly before `before`, 0 if none. */
static int find_line_start(int fd, off_t before, off_t *ret)
{
	char buf[AUDIT_SCAN_CHUNK];
	off_t end = before;

	while (end > 0) {
		off_t start = end > (off_t)sizeof(buf) ? end - (off_t)sizeof(buf) : 0;
		ssize_t n = pread(fd, buf, (size_t)(end - start), start);

		if (n < 0)
			return -errno;
		if (n != end - start)
			return -EIO;
		for (ssize_t i = n - 1; i >= 0; i--)
			if (buf[i] == '\n') {
				*ret = start + i + 1;
				return 0;
			}
		end = start;
	}
	*ret = 0;
	return 0;
}

/* Appends a formatted line (under a->lock); on a write failure tries to cut
 * the file back to its previous size so no partial record stays, else marks
 * the log failed. *ret_end: the file size after this record. */
static int append_locked(struct audit *a, const char *line, size_t len, off_t *ret_end)
{
	int r;

	if (a->failed)
		return -EIO;
	r = fdio_write_all(a->fd, line, len);
	if (r < 0) {
		if (ftruncate(a->fd, a->size) < 0)
			a->failed = true;
		return log_error_errno(r, "Failed to append to audit log '%s': %s", a->path,
				       strerror(-r));
	}
	a->size += (off_t)len;
	*ret_end = a->size;
	auditrec_chain_advance(&a->chain, line, len);
	return 0;
}

/* Makes everything up to `end` durable. Group commit: writers that queue
 * here while an fdatasync runs are usually covered by the next one, so
 * concurrent requests share syncs instead of waiting for one each. A sync
 * failure is fatal for the log (fail closed: no command runs without a
 * durable decision record). */
static int sync_upto(struct audit *a, off_t end)
{
	int r = 0;

	pthread_mutex_lock(&a->sync_lock);
	if (a->synced < end) {
		off_t target;

		pthread_mutex_lock(&a->lock);
		target = a->size;
		pthread_mutex_unlock(&a->lock);
		if (fdatasync(a->fd) < 0) {
			r = -errno;
			pthread_mutex_lock(&a->lock);
			a->failed = true;
			pthread_mutex_unlock(&a->lock);
			log_error_errno(r, "Failed to sync audit log '%s': %s; refusing every request "
					   "from now on",
					a->path, strerror(-r));
		} else
			a->synced = target;
	}
	pthread_mutex_unlock(&a->sync_lock);
	return r;
}

typedef int (*audit_fmt_fn)(const struct auditrec_chain *, const void *, char **, size_t *);

/* Formats (via fmt) and appends one record; *ret_end: the file size after
 * it, for sync_upto(). */
static int audit_append_nosync(struct audit *a, audit_fmt_fn fmt, const void *rec, off_t *ret_end)
{
	char *line = NULL;
	size_t len;
	int r;

	pthread_mutex_lock(&a->lock);
	r = fmt(&a->chain, rec, &line, &len);
	if (r >= 0)
		r = append_locked(a, line, len, ret_end);
	else
		log_error_errno(r, "Failed to format an audit record: %s", strerror(-r));
	pthread_mutex_unlock(&a->lock);
	free(line);
	return r;
}

/* Formats (via fmt) and appends one record, then waits until it is durable. */
static int audit_append(struct audit *a, audit_fmt_fn fmt, const void *rec)
{
	off_t end = 0;
	int r;

	r = audit_append_nosync(a, fmt, rec, &end);
	if (r < 0)
		return r;
	return sync_upto(a, end);
}

static int fmt_decision(const struct auditrec_chain *c, const void *rec, char **l, size_t *n)
{
	return auditrec_format_decision(c, rec, l, n);
}

static int fmt_end(const struct auditrec_chain *c, const void *rec, char **l, size_t *n)
{
	return auditrec_format_end(c, rec, l, n);
}

static int fmt_refused(const struct auditrec_chain *c, const void *rec, char **l, size_t *n)
{
	return auditrec_format_refused(c, rec, l, n);
}

/* Signed, for deadline arithmetic (lib/monoclock.h reads the clock). */
static long long mono_ms(void)
{
	return (long long)monoclock_ms();
}

/* Writes the given counted slots as "refused" records with one fdatasync
 * for all of them. Called without agg_lock. */
static void write_aggregates(struct audit *a, const struct audit_agg *slots, size_t n)
{
	off_t end = 0;
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		const struct audit_agg *g = &slots[i];
		struct auditrec_refused rec = {
			.first = g->first,
			.last = g->last,
			.peer_uid = g->note.peer_uid,
			.peer_gid = g->note.peer_gid,
			.peer_pid = g->note.peer_pid,
			.peer_key = g->note.peer_key,
			.error = g->note.error,
			.count = g->count,
			.first_id = g->first_id,
			.last_id = g->last_id,
		};

		if (audit_append_nosync(a, fmt_refused, &rec, &end) >= 0)
			any = true;
		log_info("refused %llu request(s) of peer uid=%u pid=%d: %s",
			 (unsigned long long)g->count, (unsigned)g->note.peer_uid,
			 (int)g->note.peer_pid, g->note.error);
	}
	if (any)
		(void)sync_upto(a, end); /* logged there */
}

/* Takes the slots whose window closed (all of them when `all`) out of the
 * table into out (AUDIT_AGG_SLOTS entries). Under agg_lock. Returns how
 * many; *ret_next: the earliest deadline left, or -1. */
static size_t take_due_locked(struct audit *a, bool all, struct audit_agg *out, long long *ret_next)
{
	long long now = mono_ms(), next = -1;
	size_t n = 0;

	for (size_t i = 0; i < AUDIT_AGG_SLOTS; i++) {
		struct audit_agg *g = &a->agg[i];

		if (!g->used)
			continue;
		if (all || g->deadline_ms <= now) {
			out[n++] = *g;
			g->used = false;
		} else if (next < 0 || g->deadline_ms < next)
			next = g->deadline_ms;
	}
	*ret_next = next;
	return n;
}

/* The flusher: writes each counted slot when its window closes, and all of
 * them at audit_close(). */
static void *flusher_main(void *arg)
{
	struct audit *a = arg;
	static struct audit_agg due[AUDIT_AGG_SLOTS]; /* only this thread uses it */

	pthread_mutex_lock(&a->agg_lock);
	for (;;) {
		long long next;
		bool stop = a->stopping;
		size_t n = take_due_locked(a, stop, due, &next);

		if (n > 0) {
			pthread_mutex_unlock(&a->agg_lock);
			write_aggregates(a, due, n);
			pthread_mutex_lock(&a->agg_lock);
			continue;
		}
		if (stop)
			break;
		if (next < 0)
			(void)pthread_cond_wait(&a->agg_cond, &a->agg_lock);
		else {
			struct timespec ts;
			long long wait = next - mono_ms();

			(void)clock_gettime(CLOCK_MONOTONIC, &ts);
			if (wait > 0) {
				ts.tv_sec += wait / 1000;
				ts.tv_nsec += (wait % 1000) * 1000000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				(void)pthread_cond_timedwait(&a->agg_cond, &a->agg_lock, &ts);
			}
		}
	}
	pthread_mutex_unlock(&a->agg_lock);
	return NULL;
}

void audit_count_refusal(struct audit *a, const struct audit_refusal *n)
{
	struct audit_agg *slot = NULL, *free_slot = NULL;
	struct timespec now;
	bool full = false;

	(void)clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&a->agg_lock);
	for (size_t i = 0; i < AUDIT_AGG_SLOTS; i++) {
		struct audit_agg *g = &a->agg[i];

		if (!g->used) {
			if (!free_slot)
				free_slot = g;
			continue;
		}
		if (g->note.peer_key == n->peer_key && g->note.peer_uid == n->peer_uid &&
		    strcmp(g->note.error, n->error) == 0) {
			slot = g;
			break;
		}
	}
	if (!slot && !free_slot)
		full = true;
	else if (!slot) {
		slot = free_slot;
		*slot = (struct audit_agg){ .used = true, .note = *n, .first = now,
					    .deadline_ms = mono_ms() + AUDIT_AGG_WINDOW_MS };
		slot->note.id = NULL; /* borrowed: copied into first_id/last_id */
		(void)snprintf(slot->first_id, sizeof(slot->first_id), "%s", n->id ? n->id : "");
		pthread_cond_signal(&a->agg_cond);
	}
	if (slot) {
		slot->count++;
		slot->last = now;
		(void)snprintf(slot->last_id, sizeof(slot->last_id), "%s", n->id ? n->id : "");
	}
	pthread_mutex_unlock(&a->agg_lock);
	if (full) {
		/* More distinct peers than slots within one window: this one is
		 * written at once, alone (still counted, never dropped). */
		struct audit_agg one = { .used = true, .note = *n, .count = 1, .first = now,
					 .last = now };

		(void)snprintf(one.first_id, sizeof(one.first_id), "%s", n->id ? n->id : "");
		(void)snprintf(one.last_id, sizeof(one.last_id), "%s", n->id ? n->id : "");
		write_aggregates(a, &one, 1);
	}
}

static int fmt_recovery(const struct auditrec_chain *c, const void *rec, char **l, size_t *n)
{
	return auditrec_format_recovery(c, rec, l, n);
}

int audit_open(const char *path, struct audit **ret)
{
	_cleanup_free_ struct audit *a = calloc(1, sizeof(*a));
	_cleanup_close_ int fd = -1;
	off_t start, torn = 0;
	struct stat st;
	int r;

	if (!a)
		return log_error_errno(-ENOMEM, "Out of memory");
	r = mkdir_parents(path);
	if (r < 0)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return log_error_errno(r, "Failed to create the directory of audit log '%s': %s", path, strerror(-(r)));
	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return log_error_errno(-errno, "Failed to open audit log '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return log_error_errno(-errno, "Failed to stat audit log '%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return log_error_errno(-EINVAL, "Audit log '%s' is not a regular file", path);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return log_error_errno(-EPERM, "Audit log '%s' must be ours and not writable by others",
				       path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		/* cppcheck-suppress memleak ; freed by its cleanup attribute */
		return log_error_errno(-errno, "Audit log '%s' is in use by another writer: %s", path, strerror(errno));
	auditrec_chain_init(&a->chain);
	a->size = st.st_size;
	if (a->size > 0) {
		char last;

		if (pread(fd, &last, 1, a->size - 1) != 1)
			return log_error_errno(-EIO, "Failed to read audit log '%s'", path);
		if (last != '\n') {
			r = find_line_start(fd, a->size, &start);
			if (r < 0)
				return log_error_errno(r, "Failed to read audit log '%s': %s", path, strerror(-(r)));
			torn = a->size - start;
			log_warn("Audit log '%s' ends in a torn line of %lld bytes (crash while writing); "
				 "truncating it away and recording the recovery",
				 path, (long long)torn);
			if (ftruncate(fd, start) < 0 || fsync(fd) < 0)
				return log_error_errno(-errno, "Failed to truncate audit log '%s': %s", path, strerror(errno));
			a->size = start;
		}
	}
	if (a->size > 0) {
		_cleanup_free_ char *line = NULL;
		size_t len;

		r = find_line_start(fd, a->size - 1, &start);
		if (r < 0)
			return log_error_errno(r, "Failed to read audit log '%s': %s", path, strerror(-(r)));
		len = (size_t)(a->size - start);
		if (len > AUDITREC_MAX_LINE)
			return log_error_errno(-EBADMSG, "Last line of audit log '%s' is too long", path);
		line = malloc(len);
		if (!line)
			return log_error_errno(-ENOMEM, "Out of memory");
		if (pread(fd, line, len, start) != (ssize_t)len)
			return log_error_errno(-EIO, "Failed to read audit log '%s'", path);
		r = auditrec_chain_resume(&a->chain, line, len);
		if (r < 0)
			/* Fail closed: continuing would hide whatever happened. */
			return log_error_errno(r,
					       "The last line of audit log '%s' is not an audit record; "
					       "refusing to continue this chain (move the file aside "
					       "after checking it with --verify-audit)",
					       path);
	}
	a->path = strdup(path);
	if (!a->path)
		return log_error_errno(-ENOMEM, "Out of memory");
	a->fd = TAKE_FD(fd);
	a->synced = a->size;
	r = pthread_mutex_init(&a->lock, NULL);
	if (r == 0) {
		r = pthread_mutex_init(&a->sync_lock, NULL);
		if (r != 0)
			pthread_mutex_destroy(&a->lock);
	}
	if (r == 0) {
		pthread_condattr_t ca;

		r = pthread_mutex_init(&a->agg_lock, NULL);
		if (r == 0 && (pthread_condattr_init(&ca) != 0 ||
			       pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
			       pthread_cond_init(&a->agg_cond, &ca) != 0))
			r = EINVAL;
	}
	if (r != 0) {
		free(a->path);
		safe_close(a->fd);
		return log_error_errno(-r, "Failed to create the audit locks: %s", strerror(r));
	}
	r = pthread_create(&a->flusher, NULL, flusher_main, a);
	if (r != 0) {
		free(a->path);
		safe_close(a->fd);
		return log_error_errno(-r, "Failed to start the audit flusher: %s", strerror(r));
	}
	a->flusher_started = true;
	if (torn > 0) {
		struct auditrec_recovery rec = { .torn_bytes = (uint64_t)torn };

		(void)clock_gettime(CLOCK_REALTIME, &rec.ts);
		r = audit_append(a, fmt_recovery, &rec);
		if (r < 0) {
			audit_close(TAKE_PTR(a));
			return r;
		}
	}
	log_info("Audit log '%s': %llu records, continuing at seq %llu", path,
		 (unsigned long long)a->chain.seq, (unsigned long long)a->chain.seq + 1);
	*ret = TAKE_PTR(a);
	return 0;
}

int audit_write_decision(struct audit *a, const struct auditrec_decision *d)
{
	return audit_append(a, fmt_decision, d);
}

int audit_append_decision(struct audit *a, const struct auditrec_decision *d, off_t *ret_end)
{
	return audit_append_nosync(a, fmt_decision, d, ret_end);
}

int audit_sync(struct audit *a, off_t end)
{
	return sync_upto(a, end);
}

int audit_write_end(struct audit *a, const struct auditrec_end *e)
{
	return audit_append(a, fmt_end, e);
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	if (a->flusher_started) {
		/* Writes every refusal still being counted. */
		pthread_mutex_lock(&a->agg_lock);
		a->stopping = true;
		pthread_cond_signal(&a->agg_cond);
		pthread_mutex_unlock(&a->agg_lock);
		(void)pthread_join(a->flusher, NULL);
	}
	log_info("Audit log '%s' closed at seq %llu, head %s", a->path,
		 (unsigned long long)a->chain.seq, a->chain.prev);
	safe_close(a->fd);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->sync_lock);
	if (a->flusher_started) {
		pthread_mutex_destroy(&a->agg_lock);
		pthread_cond_destroy(&a->agg_cond);
	}
	free(a->path);
	free(a);
}

int audit_verify_file(const char *path)
{
	struct auditrec_verify_result res;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		fprintf(stderr, "sandbox-execd: cannot open '%s': %s\n", path, strerror(errno));
		return 1;
	}
	r = auditrec_verify_fd(fd, &res);
	if (r == -EBADMSG) {
		printf("%s: FAILED at line %lu: %s (%lu lines before it verified)\n", path,
		       res.bad_line, res.error, res.n_lines);
		return 1;
	}
	if (r < 0) {
		fprintf(stderr, "sandbox-execd: cannot read '%s': %s\n", path, strerror(-r));
		return 1;
	}
	printf("%s: OK, %lu records, chain intact\n", path, res.n_lines);
	if (res.torn_bytes > 0)
		printf("%s: note: %llu bytes after the last complete line (a record torn by a crash; "
		       "the daemon truncates it at its next start)\n",
		       path, (unsigned long long)res.torn_bytes);
	return 0;
}

int audit_show_file(const char *path)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned long n = 0;
	ssize_t len;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "sandbox-execd: cannot open '%s': %s\n", path, strerror(errno));
		return 1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		char *h = NULL;

		n++;
		if (line[len - 1] != '\n') {
			printf("(line %lu: torn, %zd bytes without newline)\n", n, len);
			break;
		}
		if (auditrec_format_human(line, (size_t)len, &h) < 0)
			printf("(line %lu: not an audit record)\n", n);
		else
			printf("%s\n", h);
		free(h);
	}
	(void)fclose(f);
	return 0;
}
