/* SPDX-License-Identifier: MIT */
/* sandbox-init: the container's PID 1. This file is the ordered start-up
 * recipe, one call per step (docs/architecture.md explains each step and
 * why it sits where it does). Before the agent's execve any failure exits
 * with the step's code from lib/exitcodes.h after one "sandbox-init: STEP:
 * REASON" line; after it, PID 1 only logs and carries on until the agent
 * exits. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "exitcodes.h"
#include "fwstep.h"
#include "homeown.h"
#include "log.h"
#include "logfd.h"
#include "loop.h"
#include "macros.h"
#include "memtrim.h"
#include "privdrop.h"
#include "reaper.h"
#include "seccomp_filter.h"
#include "settings.h"
#include "sidecarstep.h"
#include "signals.h"
#include "spawn.h"
#include "userremap.h"

static struct init_config cfg;
static struct signals sigs;
static struct loop loop;
static struct reaper reaper;
static scmp_filter_ctx filter;
/* The firewall lives as long as PID 1: the DNS gate in the loop uses it. */
static struct fwstep fw;
/* PID 1's non-blocking stderr between its opening and installation. */
static int logfd = -1;

/* The spawn's before_exec: PID 1 drops to exactly its loop set while the
 * agent's child waits before its execve; on failure the child is killed
 * unexec'd and PID 1 exits with EXIT_INIT_PRIVDROP. */
static int drop_pid1(void *userdata, int *ret_exit)
{
	const uint64_t *keep = userdata;

	*ret_exit = EXIT_INIT_PRIVDROP;
	return privdrop_pid1_or_kill(*keep, 0);
}

static int run(int argc, char **argv)
{
	pid_t agent;
	int r, code;

	r = config_parse_args(&cfg, argc, argv);
	if (r != 0)
		return r > 0 ? 0 : EXIT_INIT_USAGE;
	if (cfg.check) {
		if (config_load(&cfg) < 0 || fwstep_load(&fw, cfg.allowlist_path) < 0 ||
		    sidecarstep_load(&fw, cfg.remap.uid, cfg.remap.gid) < 0)
			return EXIT_INIT_CONFIG;
		(void)config_print_plan(&cfg);
		return fwstep_print_check(&fw, stdout) < 0 ? EXIT_INIT_FIREWALL : 0;
	}

	/* 1. Signals into a signalfd; run as PID 1, or as a subreaper for tests. */
	if (signals_setup(&sigs, cfg.test_subreaper) < 0)
		return EXIT_INIT_USAGE;
	if (reaper_attach(&reaper, &loop, sigs.fd, sigs.pid1) < 0)
		return EXIT_INIT_INTERNAL;

	/* 2. Configuration: read and validate everything, change nothing. */
	if (config_load(&cfg) < 0)
		return EXIT_INIT_CONFIG;
	if (fwstep_load(&fw, cfg.allowlist_path) < 0)
		return EXIT_INIT_CONFIG;
	if (sidecarstep_load(&fw, cfg.remap.uid, cfg.remap.gid) < 0)
		return EXIT_INIT_CONFIG;
	/* Every capability the steps and the loop need, or no start: a run
	 * without one would fail half way or leave PID 1 unable to drop. */
	if (privdrop_check_caps(PRIVDROP_RUN_CAPS) < 0)
		return EXIT_INIT_PRIVDROP;

	/* 3. Firewall (resolve, one batch, verify; registers its loop sources). */
	if (fwstep_start(&fw, &loop, &cfg.pid1_keep_caps) < 0)
		return EXIT_INIT_FIREWALL;

	/* 4. Identity: devuser takes the host's IDs and owns its home. */
	if (userremap_apply(&cfg.remap) < 0)
		return EXIT_INIT_IDENTITY;
	if (homeown_fix(cfg.remap.home, cfg.remap.uid, cfg.remap.gid) < 0)
		return EXIT_INIT_HOME;

	/* 5. Settings lock: managed settings plus the pinned user files. */
	if (settings_lock(cfg.remap.home, cfg.remap.uid, cfg.remap.gid, cfg.profile_json, cfg.profile_len) < 0)
		return EXIT_INIT_SETTINGS;

	/* 6. Seccomp filter built here; the child drops everything, verifies,
	 *    loads it last and execs the agent. */
	if (seccomp_prepare(cfg.seccomp, &filter) < 0)
		return EXIT_INIT_SECCOMP;
	/* PID 1's own non-blocking stderr, opened before the agent exists
	 * (logfd.h), installed once it runs. */
	r = logfd_reopen_stderr(&logfd);
	if (r < 0)
		log_warn_errno(r, "Cannot reopen stderr without blocking: %s, PID 1's log lines may block",
			       strerror(-(r)));
	r = spawn_agent(&(struct spawn_plan){
				.argv = cfg.command,
				.user = INIT_USER,
				.home = cfg.remap.home,
				.shell = cfg.remap.shell,
				.uid = cfg.remap.uid,
				.gid = cfg.remap.gid,
				.filter = filter,
				.sigmask = &sigs.saved_mask,
				.before_exec = drop_pid1,
				.userdata = &cfg.pid1_keep_caps,
			},
			&agent, &code);
	if (r < 0)
		return code;
	reaper_set_agent(&reaper, agent);
	/* From here on PID 1 never exits before the agent does. */
	seccomp_release(filter);
	filter = NULL;
	config_free(&cfg);

	/* 7. PID 1, already down to CAP_KILL (plus what step 3 registered:
	 *    drop_pid1 ran before the agent's execve), logs without blocking on
	 *    the terminal the agent now owns, reaps, forwards signals and exits
	 *    with the agent's status. */
	r = logfd_install_stderr(TAKE_FD(logfd));
	if (r < 0)
		log_warn_errno(r, "Cannot install the non-blocking stderr: %s, continuing", strerror(-(r)));
	memtrim_after_startup();
	return loop_run(&loop);
}

int main(int argc, char **argv)
{
	int r;

	/* Before anything opens a descriptor (see logfd.h). */
	r = logfd_fill_stdio();
	if (r < 0)
		return EXIT_INIT_INTERNAL;
	log_setup("sandbox-init");
	r = run(argc, argv);
	/* Failed starts exit here too: release what start-up held. */
	logfd = safe_close(logfd);
	seccomp_release(filter);
	config_free(&cfg);
	return r;
}
