/* SPDX-License-Identifier: MIT */
/* Admission of connections: the per-container limit first, then a global
 * slot, and a short bounded wait queue per container in between.
 *
 * A connection is charged to its container (the peer's pid namespace,
 * dispatch_peer_key) at accept(), before a byte is read: the token cannot
 * tell containers apart, so one container's connections -- silent, closing
 * at once, or simply many -- may only ever hold its own
 * max_concurrent_per_peer places. Beyond them they wait in the container's
 * queue (at most EXECD_PEER_QUEUE connections, each at most
 * EXECD_QUEUE_WAIT_MS; nothing is read from them while they wait) and are
 * answered `busy` only when that is full or the wait is over. When a request
 * finishes, the next one to start is taken round-robin over the containers
 * that have one waiting and a place free, so a container with a long queue
 * does not starve another one. The global max_concurrent still bounds the
 * total. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "execd.h"
#include "log.h"
#include "macros.h"
#include "monoclock.h"

/* Signed, for deadline arithmetic (lib/monoclock.h reads the clock). */
static long long mono_ms(void)
{
	return (long long)monoclock_ms();
}

/* The container's slot (created when absent and create), under d->lock. */
static struct execd_peer *peer_find(struct execd *d, uint64_t key, bool create)
{
	struct execd_peer *free_slot = NULL;

	for (size_t i = 0; i < EXECD_MAX_PEERS; i++) {
		struct execd_peer *p = &d->peers[i];

		if ((p->n > 0 || p->head) && p->key == key)
			return p;
		if (p->n == 0 && !p->head && !free_slot)
			free_slot = p;
	}
	if (free_slot && create) {
		free_slot->key = key;
		free_slot->n_queued = 0;
	}
	return create ? free_slot : NULL;
}

static bool can_run_locked(struct execd *d, const struct execd_peer *p)
{
	return p->n < d->conf->max_concurrent_per_peer && d->active < d->conf->max_concurrent &&
	       d->threads < d->conf->max_concurrent + EXECD_EXTRA_THREADS;
}

static void charge_locked(struct execd *d, struct execd_peer *p)
{
	p->n++;
	d->active++;
	d->threads++;
}

/* A worker thread: handles its connection, then waits (at most
 * EXECD_IDLE_MS, at most EXECD_IDLE_WORKERS of them) for another one handed
 * over by start(), so a request usually costs no thread creation. An idle
 * worker holds no place: d->threads counts connections being handled. */
static void *worker_main(void *arg)
{
	struct execd_conn *c = arg;
	struct execd *d = c->d;

	for (;;) {
		struct timespec deadline;

		(void)dispatch_connection(c); /* frees c */
		(void)clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += EXECD_IDLE_MS / 1000;
		pthread_mutex_lock(&d->lock);
		if (d->idle_workers >= EXECD_IDLE_WORKERS || atomic_load(&d->stopping)) {
			pthread_mutex_unlock(&d->lock);
			return NULL;
		}
		d->idle_workers++;
		while (!d->handoff)
			if (pthread_cond_timedwait(&d->work, &d->lock, &deadline) == ETIMEDOUT &&
			    !d->handoff) {
				d->idle_workers--;
				pthread_mutex_unlock(&d->lock);
				return NULL;
			}
		c = d->handoff;
		d->handoff = c->next;
		c->next = NULL;
		pthread_mutex_unlock(&d->lock);
	}
}

/* Starts the worker of an admitted connection (an idle one, else a new
 * thread); on failure undoes the charge and answers busy. */
static void start(struct execd *d, struct execd_conn *c)
{
	pthread_t t;
	int r;

	pthread_mutex_lock(&d->lock);
	if (d->idle_workers > 0) {
		d->idle_workers--; /* claimed: whichever idle worker wakes takes c */
		c->next = d->handoff;
		d->handoff = c;
		pthread_cond_signal(&d->work);
		pthread_mutex_unlock(&d->lock);
		return;
	}
	pthread_mutex_unlock(&d->lock);
	r = pthread_create(&t, &d->worker_attr, worker_main, c);
	if (r == 0)
		return;
	log_warn_errno(-r, "Cannot start a worker thread: %s", strerror(r));
	pthread_mutex_lock(&d->lock);
	{
		struct execd_peer *p = peer_find(d, c->key, false);

		if (p && p->n > 0)
			p->n--;
		d->active--;
		d->threads--;
	}
	pthread_mutex_unlock(&d->lock);
	dispatch_refuse_busy(d, c, "the host cannot take more requests now");
	safe_close(c->fd);
	free(c);
}

/* The next waiting connection that may start, round-robin over the
 * containers, charged; NULL when none. Under d->lock. */
static struct execd_conn *next_locked(struct execd *d)
{
	if (atomic_load(&d->stopping) || d->n_queued == 0)
		return NULL;
	for (size_t k = 1; k <= EXECD_MAX_PEERS; k++) {
		struct execd_peer *p = &d->peers[(d->rr + k) % EXECD_MAX_PEERS];
		struct execd_conn *c = p->head;

		if (!c || !can_run_locked(d, p))
			continue;
		p->head = c->next;
		if (!p->head)
			p->tail = NULL;
		p->n_queued--;
		d->n_queued--;
		c->next = NULL;
		d->rr = (d->rr + k) % EXECD_MAX_PEERS;
		charge_locked(d, p);
		return c;
	}
	return NULL;
}

void sched_admit(struct execd *d, struct execd_conn *c)
{
	struct execd_peer *p;
	const char *busy = NULL;
	bool run = false;

	c->t_accept_ms = mono_ms();
	pthread_mutex_lock(&d->lock);
	p = peer_find(d, c->key, true);
	if (!p)
		busy = "the host is serving too many containers";
	else if (!p->head && can_run_locked(d, p)) {
		charge_locked(d, p);
		run = true;
	} else if (p->n_queued < EXECD_PEER_QUEUE && d->n_queued < EXECD_MAX_QUEUED) {
		c->next = NULL;
		if (p->tail)
			p->tail->next = c;
		else
			p->head = c;
		p->tail = c;
		p->n_queued++;
		d->n_queued++;
	} else
		busy = "too many concurrent requests from this container";
	pthread_mutex_unlock(&d->lock);
	if (run)
		start(d, c);
	else if (busy) {
		dispatch_refuse_busy(d, c, busy);
		safe_close(c->fd);
		free(c);
	}
}

void sched_release(struct execd *d, uint64_t key)
{
	struct execd_conn *next[4];
	size_t n = 0;

	pthread_mutex_lock(&d->lock);
	{
		struct execd_peer *p = peer_find(d, key, false);

		if (p && p->n > 0)
			p->n--;
		d->active--;
	}
	/* Usually one place freed one waiter; take what fits. */
	while (n < ELEMENTSOF(next) && (next[n] = next_locked(d)))
		n++;
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < n; i++)
		start(d, next[i]);
}

int sched_sweep(struct execd *d, bool all)
{
	struct execd_conn *expired = NULL, *run[16];
	long long now = mono_ms();
	size_t n_run = 0;
	int left;

	pthread_mutex_lock(&d->lock);
	for (size_t i = 0; i < EXECD_MAX_PEERS; i++) {
		struct execd_peer *p = &d->peers[i];
		struct execd_conn **pp = &p->head, *prev = NULL;

		while (*pp) {
			struct execd_conn *c = *pp;

			if (all || now - c->t_accept_ms >= EXECD_QUEUE_WAIT_MS) {
				*pp = c->next;
				if (p->tail == c)
					p->tail = prev;
				p->n_queued--;
				d->n_queued--;
				c->next = expired;
				expired = c;
				continue;
			}
			prev = c;
			pp = &c->next;
		}
	}
	/* Places freed while the thread limit was reached. */
	while (!all && n_run < ELEMENTSOF(run) && (run[n_run] = next_locked(d)))
		n_run++;
	left = (int)d->n_queued;
	pthread_mutex_unlock(&d->lock);
	for (size_t i = 0; i < n_run; i++)
		start(d, run[i]);
	while (expired) {
		struct execd_conn *c = expired;

		expired = c->next;
		dispatch_refuse_busy(d, c, all ? "the host is shutting down"
					   : "too many concurrent requests from this container "
					     "(waited too long)");
		safe_close(c->fd);
		free(c);
	}
	return left;
}
