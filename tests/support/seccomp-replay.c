/* SPDX-License-Identifier: MIT */
/* seccomp-replay [--no-filter] PID COMMAND [ARG...]: copies the seccomp
 * filters of the running process PID (the agent, as the kernel holds them)
 * and runs COMMAND under them, with our own credentials, in fresh mount
 * (private), pid and network namespaces so that a privileged COMMAND
 * changes nothing outside. --no-filter runs COMMAND the same way without
 * loading them (the control).
 *
 * Run as root with every capability, it answers the question an
 * unprivileged control cannot: for a syscall whose capability check comes
 * before anything else (pivot_root, fsopen, init_module, kexec_load,
 * AF_PACKET sockets ...), the agent gets EPERM whether or not a filter is
 * loaded. Under the agent's exact filter a fully privileged process must
 * still get EPERM, while the same process without it gets past the check.
 *
 * Reads the filters with PTRACE_SECCOMP_GET_FILTER (needs CAP_SYS_ADMIN
 * and ptrace access to PID), attaching only while reading, before leaving
 * PID's pid namespace. Exit status: COMMAND's (128+N if killed by signal
 * N), or 1 with a message on stderr. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

/* BPF_MAXINSNS is 4096; the kernel allows a chain of filters whose total
 * length is at most MAX_INSNS_PER_PATH (32768). */
#define REPLAY_MAX_FILTERS 32
#define REPLAY_MAX_INSNS 4096

struct replay_filter {
	unsigned short len;
	struct sock_filter insns[REPLAY_MAX_INSNS];
};

static struct replay_filter filters[REPLAY_MAX_FILTERS];

/* Reads every filter of pid, newest first (index 0 is the last installed).
 * The tracee must be in a ptrace-stop. Returns how many, or -errno. */
static int read_filters(pid_t pid)
{
	int n = 0;

	for (; n < REPLAY_MAX_FILTERS; n++) {
		long len = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *) (long) n, NULL);

		if (len < 0) {
			/* ENOENT: no filter at this index, the chain ends. */
			if (errno == ENOENT)
				return n;
			return -errno;
		}
		if (len == 0 || len > REPLAY_MAX_INSNS)
			return -E2BIG;
		filters[n].len = (unsigned short) len;
		if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *) (long) n, filters[n].insns) != len)
			return -EIO;
	}
	return -E2BIG;
}

static int parse_pid(const char *s, pid_t *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*ret = (pid_t) v;
	return 0;
}

/* The child in the new namespaces: loads the n filters read (unless
 * none is wanted) and execs argv. Never returns. */
static void run_child(int n, char **argv)
{
	/* Oldest first, so that the chain is the same as the agent's. A
	 * process with CAP_SYS_ADMIN may load filters without no_new_privs. */
	for (int i = n - 1; i >= 0; i--) {
		struct sock_fprog prog = { .len = filters[i].len, .filter = filters[i].insns };

		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, &prog) < 0) {
			fprintf(stderr, "seccomp-replay: cannot load filter %d: %s\n", i, strerror(errno));
			_exit(1);
		}
	}
	(void) execv(argv[0], argv);
	fprintf(stderr, "seccomp-replay: cannot execute '%s': %s\n", argv[0], strerror(errno));
	_exit(1);
}

int main(int argc, char **argv)
{
	bool load = true;
	pid_t pid, child;
	int status, n;

	if (argc > 1 && strcmp(argv[1], "--no-filter") == 0) {
		load = false;
		argv++;
		argc--;
	}
	if (argc < 3 || parse_pid(argv[1], &pid) < 0) {
		fprintf(stderr, "usage: seccomp-replay [--no-filter] PID COMMAND [ARG...]\n");
		return 1;
	}
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0) {
		fprintf(stderr, "seccomp-replay: cannot attach to %d: %s\n", (int) pid, strerror(errno));
		return 1;
	}
	if (waitpid(pid, &status, __WALL) < 0) {
		fprintf(stderr, "seccomp-replay: waitpid %d: %s\n", (int) pid, strerror(errno));
		return 1;
	}
	n = read_filters(pid);
	(void) ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (n < 0) {
		fprintf(stderr, "seccomp-replay: cannot read the filters of %d: %s\n", (int) pid, strerror(-n));
		return 1;
	}
	if (n == 0) {
		fprintf(stderr, "seccomp-replay: %d has no seccomp filter\n", (int) pid);
		return 1;
	}
	if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "seccomp-replay: cannot set up namespaces: %s\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, "seccomp-replay: %s %d filter(s) of %d\n", load ? "loading" : "NOT loading", n,
		(int) pid);
	(void) fflush(stderr);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "seccomp-replay: fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0)
		run_child(load ? n : 0, argv + 2);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
