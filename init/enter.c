/* SPDX-License-Identifier: MIT */
/* sandbox-enter -- CMD [ARG...]: runs CMD under the agent's confinement in
 * an already running container. `code-sandbox shell` attaches with the
 * engine's exec, which starts a process outside sandbox-init's tree: the
 * engine's seccomp profile only, the container's capability bounding set.
 * The home and the workspace are the agent's, so the shell's login files,
 * a `.git/config` or a Makefile there are the agent's code; without this
 * they ran with what sandbox-init's filter denies the agent (user
 * namespaces, mount, ptrace, bpf, io_uring, ...). This sets no_new_privs,
 * clears the ambient set, refuses any UID 0 or any capability, cleans the
 * environment as for the agent, closes every fd above 2 at exec, loads the
 * agent's filter (init/seccomp.c, the same table) and execs CMD. */
#include <errno.h>
#include <linux/close_range.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cap-ng.h>

#include "envclean.h"
#include "exitcodes.h"
#include "macros.h"
#include "seccomp_filter.h"

static int fail(int code, const char *what, int err)
{
	if (err)
		(void)fprintf(stderr, "sandbox-enter: %s: %s\n", what, strerror(err));
	else
		(void)fprintf(stderr, "sandbox-enter: %s\n", what);
	return code;
}

int main(int argc, char **argv)
{
	extern char **environ;
	_cleanup_free_ char **envp = NULL;
	struct envclean_user user;
	scmp_filter_ctx ctx = NULL;
	struct passwd *pw;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int r;

	if (argc < 3 || strcmp(argv[1], "--") != 0)
		return fail(EXIT_INIT_USAGE, "usage: sandbox-enter -- CMD [ARG...]", 0);
	if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0)
		return fail(EXIT_INIT_PRIVDROP, "cannot read the IDs", errno);
	if (ruid == 0 || euid == 0 || suid == 0 || rgid == 0 || egid == 0 || sgid == 0)
		return fail(EXIT_INIT_PRIVDROP, "refusing to run as UID or GID 0 (attach as the agent's user)", 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(EXIT_INIT_PRIVDROP, "cannot set no_new_privs", errno);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return fail(EXIT_INIT_PRIVDROP, "cannot clear the ambient capabilities", errno);
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_get_caps_process() < 0)
		return fail(EXIT_INIT_PRIVDROP, "cannot read the capability sets", 0);
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		return fail(EXIT_INIT_PRIVDROP, "refusing to run with capabilities (effective, permitted or inheritable)", 0);

	pw = getpwuid(ruid);
	user.name = pw && pw->pw_name ? pw->pw_name : "devuser";
	user.home = pw && pw->pw_dir ? pw->pw_dir : "/home/devuser";
	user.shell = pw && pw->pw_shell ? pw->pw_shell : "/bin/sh";
	r = envclean_build(environ, &user, &envp);
	if (r < 0)
		return fail(EXIT_INIT_SPAWN, "cannot build the environment", -r);
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		return fail(EXIT_INIT_SPAWN, "close_range failed", errno);

	r = seccomp_prepare(true, &ctx);
	if (r < 0)
		return EXIT_INIT_SECCOMP;
	r = seccomp_load_filter(ctx);
	seccomp_release(ctx);
	if (r < 0)
		return fail(EXIT_INIT_SECCOMP, "loading the filter failed", -r);

	environ = envp;
	(void)execvp(argv[2], argv + 2);
	r = errno;
	(void)fprintf(stderr, "sandbox-enter: cannot execute '%s': %s\n", argv[2], strerror(r));
	return r == ENOENT ? 127 : 126;
}
