/* SPDX-License-Identifier: MIT */
/* PID 1's reaper and signal forwarder, a loop source on the signalfd.
 * Reaps every child (orphans included); forwards SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH to the agent; when the agent exits,
 * sends SIGTERM to every process left, waits up to REAPER_GRACE_MS, sends
 * SIGKILL to the rest, and ends the loop with the agent's status (128+N
 * after death by signal N). */
#ifndef CS_INIT_REAPER_H
#define CS_INIT_REAPER_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "loop.h"

/* Time the leftovers get between SIGTERM and SIGKILL. */
#define REAPER_GRACE_MS 2000
/* After SIGKILL: how long to wait for the last exits before leaving anyway
 * (a process stuck in uninterruptible sleep must not hold PID 1 forever;
 * the kernel kills the namespace when PID 1 exits). */
#define REAPER_KILL_WAIT_MS 1000

enum reaper_phase {
	REAPER_RUNNING,
	REAPER_TERM_SENT,
	REAPER_KILL_SENT,
	REAPER_PHASE_MAX,
};

struct reaper {
	struct loop *loop;
	int sfd;
	bool pid1;
	pid_t agent;
	int agent_status; /* valid once the agent is reaped */
	enum reaper_phase phase;
	struct timespec deadline; /* CLOCK_MONOTONIC, for TERM_SENT / KILL_SENT */
};

/* Registers the reaper on loop, reading signals from sfd. pid1 selects how
 * leftovers are found: kill(-1) as PID 1 of a namespace, a /proc walk of
 * our descendants otherwise. Returns 0 or -ENOSPC. */
int reaper_attach(struct reaper *rp, struct loop *loop, int sfd, bool pid1);

/* Names the agent once it runs; signals are forwarded to it from then on. */
void reaper_set_agent(struct reaper *rp, pid_t agent);

/* Exit code for a wait status: the exit status, or 128+N for signal N. */
int reaper_exit_code(int wstatus);

#endif
