/* SPDX-License-Identifier: MIT */
#include "reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcodes.h"
#include "log.h"
#include "macros.h"
#include "monoclock.h"

/* Upper bound on processes examined by the /proc walk (subreaper mode). */
#define REAPER_MAX_PROCS 65536
#define STAT_LINE_MAX 1024
/* "PID/stat" with a decimal PID. */
#define PROC_STAT_PATH_MAX 32

int reaper_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return EXIT_SIGNAL_BASE + WTERMSIG(wstatus);
	return EXIT_INIT_INTERNAL;
}

static int64_t deadline_ms(const struct reaper *rp)
{
	return (int64_t)rp->deadline.tv_sec * 1000 + rp->deadline.tv_nsec / 1000000;
}

static void set_deadline(struct reaper *rp, int64_t ms_from_now)
{
	int64_t t = (int64_t)monoclock_ms() + ms_from_now;

	rp->deadline.tv_sec = (time_t)(t / 1000);
	rp->deadline.tv_nsec = (long)(t % 1000) * 1000000;
}

/* Parent PID from /proc/PID/stat, or -1. The comm field may contain spaces
 * and parentheses: parse after the last ')'. */
static pid_t read_ppid(int procfd, const char *pid)
{
	char path[PROC_STAT_PATH_MAX], buf[STAT_LINE_MAX];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p, *end;
	long ppid;

	(void)snprintf(path, sizeof(path), "%s/stat", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* ") S PPID ...": skip the state letter. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	errno = 0;
	ppid = strtol(p + 4, &end, 10);
	if (errno != 0 || end == p + 4 || *end != ' ' || ppid < 0)
		return -1;
	return (pid_t)ppid;
}

struct proc_list {
	pid_t *pids, *ppids;
	bool *mine;
	size_t n, cap;
};

static void proc_list_free(struct proc_list *l)
{
	free(l->pids);
	free(l->ppids);
	free(l->mine);
}

static int proc_list_add(struct proc_list *l, pid_t pid, pid_t ppid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		pid_t *np = realloc(l->pids, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		l->pids = np;
		np = realloc(l->ppids, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		l->ppids = np;
		l->cap = cap;
	}
	l->pids[l->n] = pid;
	l->ppids[l->n] = ppid;
	l->n++;
	return 0;
}

/* Sends sig to every process we are an ancestor of (not ourselves). */
static void signal_descendants(int sig)
{
	struct proc_list l = {0};
	pid_t self = getpid();
	DIR *d;
	struct dirent *de;
	bool changed = true;

	d = opendir("/proc");
	if (!d) {
		log_error_errno(-errno, "Cannot open /proc to find leftover processes: %s, continuing",
				strerror(errno));
		return;
	}
	while ((de = readdir(d)) && l.n < REAPER_MAX_PROCS) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		pid_t pp;

		if (*end || v <= 0 || v == self)
			continue;
		pp = read_ppid(dirfd(d), de->d_name);
		if (pp < 0)
			continue; /* ESRCH: it exited meanwhile */
		if (proc_list_add(&l, (pid_t)v, pp) < 0)
			break;
	}
	(void)closedir(d);
	l.mine = calloc(l.n ? l.n : 1, sizeof(*l.mine));
	if (!l.mine) {
		log_error("Out of memory listing processes, cannot signal leftovers, continuing");
		proc_list_free(&l);
		return;
	}
	/* Transitive closure of "parent is us or one of ours". */
	while (changed) {
		changed = false;
		for (size_t i = 0; i < l.n; i++) {
			if (l.mine[i])
				continue;
			if (l.ppids[i] == self)
				l.mine[i] = true;
			for (size_t k = 0; k < l.n && !l.mine[i]; k++)
				if (l.mine[k] && l.pids[k] == l.ppids[i])
					l.mine[i] = true;
			changed |= l.mine[i];
		}
	}
	for (size_t i = 0; i < l.n; i++)
		/* ESRCH: already gone, which is what we want. */
		if (l.mine[i] && kill(l.pids[i], sig) < 0 && errno != ESRCH)
			log_warn_errno(-errno, "Cannot send signal %d to %d: %s, ignoring", sig, (int)l.pids[i],
				       strerror(errno));
	proc_list_free(&l);
}

static void signal_leftovers(const struct reaper *rp, int sig)
{
	/* kill(-1) reaches every process in our PID namespace but us; outside
	 * a namespace of our own it would hit the whole machine, so only PID 1
	 * may use it (checked again here, not just remembered). */
	if (rp->pid1 && getpid() == 1) {
		if (kill(-1, sig) < 0 && errno != ESRCH)
			log_warn_errno(-errno, "kill(-1, %d) failed: %s, ignoring", sig, strerror(errno));
		return;
	}
	signal_descendants(sig);
}

/* Reaps every exited child. Returns true when no child is left. */
static bool reap_all(struct reaper *rp)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid == 0)
			return false;
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			/* ECHILD: nothing left. Anything else cannot happen with
			 * these arguments; treat it the same rather than spin. */
			return true;
		}
		if (pid == rp->agent && rp->agent > 0 && rp->phase == REAPER_RUNNING) {
			rp->agent_status = reaper_exit_code(status);
			rp->phase = REAPER_TERM_SENT;
			log_debug("Agent %d exited, status %d", (int)pid, rp->agent_status);
			signal_leftovers(rp, SIGTERM);
			set_deadline(rp, REAPER_GRACE_MS);
		}
	}
}

static int reaper_prepare(void *userdata, struct pollfd *fds, size_t max, int *timeout_ms)
{
	struct reaper *rp = userdata;

	if (max < 1)
		return -ENOSPC;
	fds[0] = (struct pollfd){.fd = rp->sfd, .events = POLLIN};
	if (rp->phase != REAPER_RUNNING) {
		int64_t left = deadline_ms(rp) - (int64_t)monoclock_ms();
		*timeout_ms = left < 0 ? 0 : (int)left;
	}
	return 1;
}

static void drain_signals(struct reaper *rp)
{
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(rp->sfd, &si, sizeof(si));
		int sig;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				log_error_errno(-errno, "Reading the signalfd failed: %s, continuing", strerror(errno));
			return;
		}
		if (n != (ssize_t)sizeof(si))
			return;
		sig = (int)si.ssi_signo;
		if (sig == SIGCHLD)
			continue; /* reaped below, whatever the count */
		if (rp->phase != REAPER_RUNNING || rp->agent <= 0)
			continue; /* no agent (yet, or any more): nothing to forward to */
		/* ESRCH: the agent exited and its SIGCHLD is queued: harmless. */
		if (kill(rp->agent, sig) < 0 && errno != ESRCH)
			log_warn_errno(-errno, "Cannot forward signal %d to the agent: %s, ignoring", sig, strerror(errno));
	}
}

static void reaper_dispatch(void *userdata, const struct pollfd *fds, size_t n)
{
	struct reaper *rp = userdata;
	bool none_left;

	(void)fds;
	(void)n;
	drain_signals(rp);
	none_left = reap_all(rp);
	if (rp->phase == REAPER_RUNNING)
		return;
	if (none_left) {
		rp->loop->exit_status = rp->agent_status;
		rp->loop->quit = true;
		return;
	}
	if ((int64_t)monoclock_ms() < deadline_ms(rp))
		return;
	if (rp->phase == REAPER_TERM_SENT) {
		log_info("Processes left after the agent exited did not stop within %d ms, killing them",
			 REAPER_GRACE_MS);
		signal_leftovers(rp, SIGKILL);
		rp->phase = REAPER_KILL_SENT;
		set_deadline(rp, REAPER_KILL_WAIT_MS);
		return;
	}
	log_warn("Processes still present %d ms after SIGKILL, exiting anyway", REAPER_KILL_WAIT_MS);
	rp->loop->exit_status = rp->agent_status;
	rp->loop->quit = true;
}

void reaper_set_agent(struct reaper *rp, pid_t agent)
{
	rp->agent = agent;
}

int reaper_attach(struct reaper *rp, struct loop *loop, int sfd, bool pid1)
{
	const struct loop_source src = {
		.name = "reaper",
		.userdata = rp,
		.prepare = reaper_prepare,
		.dispatch = reaper_dispatch,
	};

	*rp = (struct reaper){.loop = loop, .sfd = sfd, .pid1 = pid1, .agent = -1};
	return loop_add_source(loop, &src);
}
