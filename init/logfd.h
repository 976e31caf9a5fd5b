/* SPDX-License-Identifier: MIT */
/* PID 1's log descriptor once the agent runs. */
#ifndef CS_INIT_LOGFD_H
#define CS_INIT_LOGFD_H

/* Called first thing in main(): opens /dev/null on any of fds 0, 1, 2
 * that is closed, before PID 1 opens anything else. Otherwise the signalfd
 * or a firewall socket would take the number, PID 1's log lines would go
 * into it, and the agent would start with a closed stdio descriptor that
 * its own first open() fills. Not close-on-exec: the agent inherits them
 * as its stdio, as from any init. Returns 0 or a negative errno. */
int logfd_fill_stdio(void);

/* Called once, after the agent started and before PID 1 drops
 * CAP_DAC_OVERRIDE: gives PID 1 a non-blocking stderr of its own.
 *
 * Why: stderr is normally the terminal or pipe the agent shares. The agent
 * controls that terminal (Ctrl-S, tcflow(TCOOFF)) and can stop its output;
 * a blocking write of one log line would then stop PID 1 (no reaping, no
 * signal forwarding, no DNS answers) for as long as the agent likes. Setting
 * O_NONBLOCK on the shared open file would change the agent's stdio too, so
 * PID 1 reopens the same terminal or pipe through /proc/self/fd/2 as a new
 * open file with O_NONBLOCK (and O_NOCTTY: a session leader opening a
 * terminal must not acquire it) and puts it on fd 2. A line that cannot be
 * written at once is then dropped (log.c writes each line once).
 *
 * Only terminals, other character devices and pipes are reopened: a
 * regular file cannot block, and a socket cannot be reopened this way.
 * Returns 0 (also when nothing needed doing) or a negative errno; stderr
 * is unchanged on failure. */
int logfd_detach_stderr(void);

#endif
