/* SPDX-License-Identifier: MIT */
/* init/ pieces that run without root: command-line parsing, exit-code
 * mapping, and the home walk on a temporary tree (re-owning needs root:
 * those checks skip as a normal user). */
#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "exitcodes.h"
#include "homeown.h"
#include "macros.h"
#include "privdrop.h"
#include "reaper.h"
#include "tap.h"

static int parse(struct init_config *cfg, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	optind = 0; /* reset getopt between parses */
	return config_parse_args(cfg, argc, argv);
}

TEST(args_defaults_and_command)
{
	struct init_config cfg;
	char *a1[] = {"sandbox-init", NULL};
	char *a2[] = {"sandbox-init", "--seccomp=off", "--allowlist", "/x", "--", "bash", "-c", "x", NULL};
	char *a3[] = {"sandbox-init", "--test-subreaper", "claude", "--check", "--resume", NULL};

	ASSERT_EQ(parse(&cfg, a1), 0);
	EXPECT_TRUE(cfg.seccomp);
	EXPECT_FALSE(cfg.check);
	EXPECT_STREQ(cfg.command[0], "claude");
	EXPECT_TRUE(cfg.command[1] == NULL);
	EXPECT_STREQ(cfg.profile, "strict");

	ASSERT_EQ(parse(&cfg, a2), 0);
	EXPECT_FALSE(cfg.seccomp);
	EXPECT_STREQ(cfg.allowlist_path, "/x");
	EXPECT_STREQ(cfg.command[0], "bash");
	EXPECT_STREQ(cfg.command[2], "x");

	/* Options after the command belong to the agent. */
	ASSERT_EQ(parse(&cfg, a3), 0);
	EXPECT_TRUE(cfg.test_subreaper);
	EXPECT_FALSE(cfg.check);
	EXPECT_STREQ(cfg.command[0], "claude");
	EXPECT_STREQ(cfg.command[1], "--check");
}

TEST(args_errors)
{
	struct init_config cfg;
	char *bad[][4] = {
		{"sandbox-init", "--seccomp=maybe", NULL},
		{"sandbox-init", "--nope", NULL},
		{"sandbox-init", "-x", NULL},
		{"sandbox-init", "--allowlist", NULL},
		{"sandbox-init", "--allowlist=", NULL},
	};
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		EXPECT_TRUE(parse(&cfg, bad[i]) < 0);
}

TEST(exit_codes)
{
	for (int code = 0; code < 256; code++)
		EXPECT_EQ(reaper_exit_code(code << 8), code);
	EXPECT_EQ(reaper_exit_code(SIGTERM), 128 + SIGTERM);
	EXPECT_EQ(reaper_exit_code(SIGKILL), 128 + SIGKILL);
	EXPECT_EQ(reaper_exit_code(SIGSEGV | 0x80 /* core dumped */), 128 + SIGSEGV);
}

/* A temporary home: d/f, d/sub/g, link -> outside file, and an outside
 * file that must never change owner. */
struct tree {
	char root[64], home[96], outside[96];
};

static void touch(const char *p, mode_t mode)
{
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, mode);

	ASSERT_GE(fd, 0);
	(void)close(fd);
}

static void make_tree(struct tree *t)
{
	char p[256];

	(void)snprintf(t->root, sizeof(t->root), "/tmp/cs-test-home-XXXXXX");
	ASSERT_NOT_NULL(mkdtemp(t->root));
	(void)snprintf(t->home, sizeof(t->home), "%s/home", t->root);
	(void)snprintf(t->outside, sizeof(t->outside), "%s/outside", t->root);
	ASSERT_EQ(mkdir(t->home, 0755), 0);
	(void)snprintf(p, sizeof(p), "%s/d", t->home);
	ASSERT_EQ(mkdir(p, 0755), 0);
	(void)snprintf(p, sizeof(p), "%s/d/sub", t->home);
	ASSERT_EQ(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/d/f", t->home);
	touch(p, 0644);
	(void)snprintf(p, sizeof(p), "%s/d/sub/g", t->home);
	touch(p, 0600);
	touch(t->outside, 0644);
	(void)snprintf(p, sizeof(p), "%s/link", t->home);
	ASSERT_EQ(symlink(t->outside, p), 0);
	(void)snprintf(p, sizeof(p), "%s/dirlink", t->home);
	ASSERT_EQ(symlink(t->root, p), 0);
}

static uid_t owner(const char *dir, const char *name)
{
	char p[256];
	struct stat st;

	(void)snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (lstat(p, &st) < 0)
		return (uid_t)-1;
	return st.st_uid;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	(void)remove(path);
	return 0;
}

static void rm_tree(const struct tree *t)
{
	/* FTW_PHYS: never follow the test's own symlinks out of the tree. */
	(void)nftw(t->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TEST(home_walk_as_owner_is_a_no_op)
{
	struct tree t = {0};

	make_tree(&t);
	/* Everything is ours already: no chown needed, so no root needed
	 * (the stamp cannot be made root-owned: a warning, not a failure). */
	EXPECT_EQ(homeown_fix(t.home, getuid(), getgid()), 0);
	EXPECT_EQ(owner(t.home, "d/sub/g"), getuid());
	rm_tree(&t);
}

TEST(home_walk_reowns_without_following)
{
	struct tree t = {0};
	const uid_t u = 23456;
	const gid_t g = 23457;
	char p[256];
	struct stat st;

	if (geteuid() != 0)
		SKIP("re-owning files needs root");
	make_tree(&t);
	ASSERT_EQ(homeown_fix(t.home, u, g), 0);
	EXPECT_EQ(owner(t.home, "."), u);
	EXPECT_EQ(owner(t.home, "d"), u);
	EXPECT_EQ(owner(t.home, "d/f"), u);
	EXPECT_EQ(owner(t.home, "d/sub/g"), u);
	/* The symlinks themselves are re-owned, never their targets. */
	EXPECT_EQ(owner(t.home, "link"), u);
	EXPECT_EQ(owner(t.home, "dirlink"), u);
	EXPECT_EQ(owner(t.root, "outside"), 0);
	EXPECT_EQ(owner(t.root, "."), 0);
	/* The stamp: root:root 0444, one link, "UID:GID\n". */
	(void)snprintf(p, sizeof(p), "%s/" HOMEOWN_STAMP, t.home);
	ASSERT_EQ(lstat(p, &st), 0);
	EXPECT_EQ(st.st_uid, 0);
	EXPECT_EQ(st.st_gid, 0);
	EXPECT_EQ(st.st_mode & 07777, 0444);

	/* Warm start: a file re-owned behind the stamp's back stays as it is
	 * (the walk is skipped)... */
	(void)snprintf(p, sizeof(p), "%s/d/f", t.home);
	ASSERT_EQ(lchown(p, 1, 1), 0);
	ASSERT_EQ(homeown_fix(t.home, u, g), 0);
	EXPECT_EQ(owner(t.home, "d/f"), 1);
	/* ...until the stamp is gone or not root's: then the walk runs. */
	(void)snprintf(p, sizeof(p), "%s/" HOMEOWN_STAMP, t.home);
	ASSERT_EQ(lchown(p, u, g), 0);
	ASSERT_EQ(homeown_fix(t.home, u, g), 0);
	EXPECT_EQ(owner(t.home, "d/f"), u);
	EXPECT_EQ(owner(t.home, HOMEOWN_STAMP), 0);
	/* Other IDs: the stamp does not match, everything moves. */
	ASSERT_EQ(homeown_fix(t.home, u + 1, g + 1), 0);
	EXPECT_EQ(owner(t.home, "d/sub/g"), u + 1);
	EXPECT_EQ(owner(t.root, "outside"), 0);
	rm_tree(&t);
}

TEST(home_walk_skips_root_hard_links)
{
	struct tree t = {0};
	char p[256], q[256];

	if (geteuid() != 0)
		SKIP("re-owning files needs root");
	make_tree(&t);
	(void)snprintf(p, sizeof(p), "%s/hard", t.home);
	ASSERT_EQ(link(t.outside, p), 0);
	(void)snprintf(q, sizeof(q), "%s/fifo", t.home);
	ASSERT_EQ(mkfifo(q, 0600), 0);
	ASSERT_EQ(homeown_fix(t.home, 23456, 23456), 0);
	/* A second name for a root-owned file is left alone... */
	EXPECT_EQ(owner(t.root, "outside"), 0);
	/* ...other special files are re-owned without being opened. */
	EXPECT_EQ(owner(t.home, "fifo"), 23456);
	rm_tree(&t);
}

/* ---- PID 1's capabilities (init/privdrop.c) ---- */

/* Runs privdrop_check_caps(need) with stderr captured into buf. */
static int check_caps_captured(uint64_t need, char *buf, size_t size)
{
	FILE *t = tmpfile();
	int saved = dup(STDERR_FILENO), r;
	ssize_t n;

	if (!t || saved < 0)
		return -EIO;
	(void)dup2(fileno(t), STDERR_FILENO);
	r = privdrop_check_caps(need);
	(void)dup2(saved, STDERR_FILENO);
	(void)close(saved);
	n = pread(fileno(t), buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	(void)fclose(t);
	return r;
}

/* Takes capability c out of this process's bounding set when it can
 * (root); as a normal user the permitted set is empty already. */
static void lose_cap(int c)
{
	if (geteuid() == 0)
		ASSERT_EQ(prctl(PR_CAPBSET_DROP, c, 0, 0, 0), 0);
}

TEST(caps_missing_kill_one_line)
{
	char buf[1024];

	lose_cap(CAP_KILL);
	EXPECT_ERR(check_caps_captured(PRIVDROP_CAP_BIT(CAP_KILL), buf, sizeof(buf)), EPERM);
	EXPECT_STREQ(buf, "sandbox-init: capabilities: missing CAP_KILL (add --cap-add=KILL)\n");
}

TEST(caps_missing_several_named_in_order)
{
	char buf[1024];

	lose_cap(CAP_KILL);
	lose_cap(CAP_NET_ADMIN);
	EXPECT_ERR(check_caps_captured(PRIVDROP_CAP_BIT(CAP_NET_ADMIN) | PRIVDROP_CAP_BIT(CAP_KILL), buf,
				       sizeof(buf)),
		   EPERM);
	EXPECT_STREQ(buf, "sandbox-init: capabilities: missing CAP_KILL, CAP_NET_ADMIN "
			  "(add --cap-add=KILL --cap-add=NET_ADMIN)\n");
}

TEST(caps_run_set_is_the_documented_one)
{
	/* SECURITY.md's table, "Capabilities PID 1 needs in the container". */
	EXPECT_EQ(PRIVDROP_RUN_CAPS,
		  (1u << CAP_CHOWN) | (1u << CAP_DAC_OVERRIDE) | (1u << CAP_SETUID) | (1u << CAP_SETGID) |
			  (1u << CAP_SETPCAP) | (1u << CAP_KILL) | (1u << CAP_NET_ADMIN) |
			  (1u << CAP_NET_BIND_SERVICE));
	EXPECT_EQ(privdrop_check_caps(0), 0);
}

TEST(caps_all_present_passes)
{
	char buf[1024];

	if (geteuid() != 0 || prctl(PR_CAPBSET_READ, CAP_KILL, 0, 0, 0) != 1)
		SKIP("needs root with CAP_KILL");
	EXPECT_EQ(check_caps_captured(PRIVDROP_CAP_BIT(CAP_KILL), buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "");
}

/* A child that waits to be killed. */
static pid_t start_agent(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			(void)pause();
	}
	return pid;
}

TEST(pid1_drop_failure_kills_the_agent)
{
	char buf[1024];
	FILE *t = tmpfile();
	pid_t agent;
	int r, status;

	ASSERT_NOT_NULL(t);
	/* As root, without CAP_SETPCAP in the effective set the bounding set
	 * cannot be reduced; as a normal user nothing can be kept. */
	if (geteuid() == 0) {
		capng_get_caps_process();
		ASSERT_EQ(capng_update(CAPNG_DROP, CAPNG_EFFECTIVE, CAP_SETPCAP), 0);
		ASSERT_EQ(capng_apply(CAPNG_SELECT_CAPS), 0);
	}
	agent = start_agent();
	ASSERT_GT(agent, 0);
	(void)dup2(fileno(t), STDERR_FILENO);
	r = privdrop_pid1_or_kill(PRIVDROP_CAP_BIT(CAP_NET_ADMIN), agent);
	EXPECT_TRUE(r < 0);
	/* Killed and reaped: no child left to wait for. */
	EXPECT_EQ(waitpid(agent, &status, WNOHANG), -1);
	EXPECT_EQ(errno, ECHILD);
	EXPECT_EQ(kill(agent, 0), -1);
	ssize_t n = pread(fileno(t), buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	EXPECT_TRUE(strncmp(buf, "sandbox-init: privdrop: ", 24) == 0);
	printf("# %s", buf);
}

TEST(pid1_drop_keeps_exactly_the_loop_set)
{
	uint64_t want = PRIVDROP_CAP_BIT(CAP_KILL) | PRIVDROP_CAP_BIT(CAP_NET_ADMIN);
	pid_t agent;
	int status;

	if (geteuid() != 0 || prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) != 1)
		SKIP("needs root with CAP_SETPCAP");
	agent = start_agent();
	ASSERT_GT(agent, 0);
	EXPECT_EQ(privdrop_pid1_or_kill(PRIVDROP_CAP_BIT(CAP_NET_ADMIN), agent), 0);
	/* The agent lives on; the bounding set is the loop set. */
	EXPECT_EQ(kill(agent, 0), 0);
	for (int c = 0; c <= CAP_LAST_CAP; c++)
		EXPECT_EQ(prctl(PR_CAPBSET_READ, c, 0, 0, 0), (want >> c) & 1);
	(void)kill(agent, SIGKILL);
	(void)waitpid(agent, &status, 0);
}
