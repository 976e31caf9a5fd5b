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

/* PID 1's non-blocking stderr, in two halves around the agent's fork.
 *
 * Why: stderr is normally the terminal or pipe the agent shares. The agent
 * controls that terminal (Ctrl-S, tcflow(TCOOFF)) and can stop its output;
 * a blocking write of one log line would then stop PID 1 (no reaping, no
 * signal forwarding, no DNS answers) for as long as the agent likes. Setting
 * O_NONBLOCK on the shared open file would change the agent's stdio too, so
 * PID 1 reopens the same terminal or pipe through /proc/self/fd/2 as a new
 * open file with O_NONBLOCK (and O_NOCTTY: a session leader opening a
 * terminal must not acquire it). A line that cannot be written at once is
 * then dropped (log.c writes each line once).
 *
 * logfd_reopen_stderr(), called before the fork (so the agent cannot refuse
 * the open first, e.g. with TIOCEXCL on its terminal), returns the new file
 * in *ret_fd, close-on-exec, or -1 there when nothing needs doing: only
 * terminals, other character devices and pipes are reopened (a regular
 * file cannot block, a socket cannot be reopened this way). Returns 0 or a
 * negative errno.
 *
 * logfd_install_stderr(), called after the fork, moves fd (if >= 0) onto
 * fd 2 and closes it. Returns 0 or a negative errno (fd is closed either
 * way; stderr unchanged on failure). */
int logfd_reopen_stderr(int *ret_fd);
int logfd_install_stderr(int fd);

#endif
