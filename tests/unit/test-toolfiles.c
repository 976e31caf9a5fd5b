/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "macros.h"
#include "tap.h"
#include "toolfiles.h"

static const struct toolfiles_config cfg = { .gh_host = "github.com", .psql_user = "me" };

#define PLAN(p, ...)                                                                               \
	do {                                                                                       \
		static const char *const av_[] = { __VA_ARGS__ };                                  \
		ASSERT_OK(toolfiles_plan(av_[0], av_, ELEMENTSOF(av_), &cfg, (p)));                \
		args = av_;                                                                        \
	} while (0)

TEST(private_cwd_for_every_tool_but_git)
{
	struct toolfiles_plan p;
	const char *const *args;

	PLAN(&p, "git", "status");
	EXPECT_FALSE(p.private_cwd);
	PLAN(&p, "echo", "x");
	EXPECT_TRUE(p.private_cwd);
	EXPECT_TRUE(p.refused == NULL);
	(void)args;
}

TEST(kubectl_files_and_refusals)
{
	struct toolfiles_plan p;
	const char *const *args;

	PLAN(&p, "kubectl", "apply", "-f", "deploy.yaml", "--filename=svc.yaml", "-fx.yaml", "-f", "-");
	ASSERT_TRUE(p.refused == NULL);
	ASSERT_EQ(p.n_files, 3);
	EXPECT_STREQ(args[p.files[0].arg] + p.files[0].prefix_len, "deploy.yaml");
	EXPECT_STREQ(args[p.files[1].arg] + p.files[1].prefix_len, "svc.yaml");
	EXPECT_STREQ(args[p.files[2].arg] + p.files[2].prefix_len, "x.yaml");
	PLAN(&p, "kubectl", "apply", "-f", "https://evil/x.yaml");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "kubectl", "--kubeconfig", "/tmp/k", "get", "pods");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "kubectl", "apply", "-k", "dir");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "kubectl", "cp", "pod:/etc/x", "/tmp/x");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "kubectl", "get", "pods", "-o", "go-template-file=/etc/passwd");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "kubectl", "apply", "-Rf", "/etc/passwd");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "kubectl", "get", "pods", "-n", "default", "-o", "json");
	EXPECT_TRUE(p.refused == NULL);
	EXPECT_EQ(p.n_files, 0);
}

TEST(aws_file_values_and_guarded_options)
{
	struct toolfiles_plan p;
	const char *const *args;

	PLAN(&p, "aws", "ec2", "run-instances", "--user-data", "file://init.sh",
	     "--block-device-mappings=fileb://bdm.bin");
	ASSERT_TRUE(p.refused == NULL);
	ASSERT_EQ(p.n_files, 2);
	EXPECT_STREQ(args[p.files[0].arg] + p.files[0].prefix_len, "init.sh");
	EXPECT_STREQ(args[p.files[1].arg] + p.files[1].prefix_len, "bdm.bin");
	EXPECT_EQ(p.files[1].prefix_len, strlen("--block-device-mappings=fileb://"));
	PLAN(&p, "aws", "s3", "ls", "--endpoint-url", "http://127.0.0.1:18080");
	EXPECT_EQ(p.n_guarded, 1);
	PLAN(&p, "aws", "s3", "ls", "--endp=http://127.0.0.1:18080"); /* argparse abbreviation */
	EXPECT_EQ(p.n_guarded, 1);
	PLAN(&p, "aws", "--region", "eu-west-1", "--debug", "s3", "ls");
	EXPECT_EQ(p.n_guarded, 2);
	PLAN(&p, "aws", "configure", "set", "x", "y");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "aws", "sts", "get-session-token");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "aws", "s3", "cp", "/etc/passwd", "s3://b/k");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "aws", "s3", "cp", "s3://a/k", "s3://b/k");
	EXPECT_TRUE(p.refused == NULL);
	PLAN(&p, "aws", "s3", "cp", "s3://a/k", "-");
	EXPECT_TRUE(p.refused == NULL);
	PLAN(&p, "aws", "sts", "get-caller-identity");
	EXPECT_TRUE(p.refused == NULL);
	EXPECT_EQ(p.n_guarded, 0);
}

TEST(gh_repo_host_and_refusals)
{
	struct toolfiles_plan p;
	const char *const *args;
	char h[64];

	PLAN(&p, "gh", "--repo", "github.com/acme/x", "pr", "list");
	EXPECT_TRUE(p.refused == NULL);
	PLAN(&p, "gh", "pr", "list");
	EXPECT_TRUE(p.refused != NULL); /* no --repo */
	PLAN(&p, "gh", "--repo", "acme/x", "pr", "list");
	EXPECT_TRUE(p.refused != NULL); /* host must be explicit */
	PLAN(&p, "gh", "--repo", "127.0.0.1:18443/x/y", "repo", "view");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "--repo", "github.com/acme/x", "repo", "view", "127.0.0.1:18443/x/y");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "--repo", "github.com/acme/x", "pr", "view", "https://evil.example/x/y/pull/1");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "-R", "github.com/acme/x", "pr", "checkout", "1");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "repo", "view", "acme/x");
	EXPECT_TRUE(p.refused == NULL); /* repo commands name theirs as an operand */
	PLAN(&p, "gh", "repo", "clone", "acme/x");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "-R", "github.com/acme/x", "repo", "fork", "--clone");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "extension", "install", "x/y");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "alias", "set", "--shell", "x", "id");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "auth", "token");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "auth", "status", "--show-token");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "auth", "status");
	EXPECT_TRUE(p.refused == NULL);
	PLAN(&p, "gh", "api", "--hostname", "evil.example", "/user");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "api", "https://evil.example/user");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "gh", "api", "/repos/acme/x", "-F", "body=@notes.md", "--input", "in.json");
	ASSERT_TRUE(p.refused == NULL);
	ASSERT_EQ(p.n_files, 2);
	EXPECT_STREQ(args[p.files[0].arg] + p.files[0].prefix_len, "notes.md");
	EXPECT_STREQ(args[p.files[1].arg] + p.files[1].prefix_len, "in.json");
	PLAN(&p, "gh", "-R", "github.com/acme/x", "pr", "create", "--title", "t", "--body-file", "b.md");
	ASSERT_TRUE(p.refused == NULL);
	ASSERT_EQ(p.n_files, 1);
	EXPECT_STREQ(args[p.files[0].arg], "b.md");
	PLAN(&p, "gh", "-R", "github.com/acme/x", "pr", "create", "-F", "b.md", "--fill");
	ASSERT_EQ(p.n_files, 1);
	EXPECT_OK(toolfiles_gh_host_of("git@GitHub.com:acme/x.git", h, sizeof(h)));
	EXPECT_STREQ(h, "github.com");
	EXPECT_OK(toolfiles_gh_host_of("https://u:t@ghe.corp/acme/x", h, sizeof(h)));
	EXPECT_STREQ(h, "ghe.corp");
	EXPECT_OK(toolfiles_gh_host_of("acme/x", h, sizeof(h)));
	EXPECT_STREQ(h, "");
}

TEST(terraform_copies_and_refusals)
{
	struct toolfiles_plan p;
	const char *const *args;

	PLAN(&p, "terraform", "plan", "-var-file=prod.tfvars", "-var-file", "b.tfvars");
	ASSERT_TRUE(p.refused == NULL);
	EXPECT_TRUE(p.copy_terraform);
	ASSERT_EQ(p.n_files, 2);
	EXPECT_STREQ(args[p.files[0].arg] + p.files[0].prefix_len, "prod.tfvars");
	EXPECT_STREQ(args[p.files[1].arg], "b.tfvars");
	PLAN(&p, "terraform", "plan", "-out=/tmp/plan.bin");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "terraform", "apply", "-state-out", "/tmp/x");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "terraform", "init", "--plugin-dir=/tmp/p");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "terraform", "show", "plan.bin");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "terraform", "fmt", "-check");
	EXPECT_TRUE(p.refused == NULL);
	PLAN(&p, "terraform", "version");
	EXPECT_TRUE(p.refused == NULL);
}

/* psql's own getopt_long: clusters and abbreviations reach the same
 * checks as the spelled-out options. */
TEST(psql_clusters_and_abbreviations)
{
	static const struct {
		const char *argv[5];
		bool refused;
		size_t n_sql, n_files;
		const char *host;
	} t[] = {
		{ { "psql", "-qo/tmp/x" }, true, 0, 0, NULL },
		{ { "psql", "-qo", "/tmp/x" }, true, 0, 0, NULL },
		{ { "psql", "--ou=/tmp/x" }, true, 0, 0, NULL },
		{ { "psql", "--o", "/tmp/x" }, true, 0, 0, NULL },
		{ { "psql", "--lo=/tmp/x" }, true, 0, 0, NULL },
		{ { "psql", "-qL/tmp/x" }, true, 0, 0, NULL },
		{ { "psql", "-qc\\! id" }, false, 1, 0, NULL },
		{ { "psql", "--co=\\! id" }, false, 1, 0, NULL },
		{ { "psql", "--comm", "\\! id" }, false, 1, 0, NULL },
		{ { "psql", "-qf/etc/passwd" }, false, 0, 1, NULL },
		{ { "psql", "--fil=/etc/passwd" }, false, 0, 1, NULL },
		{ { "psql", "-qf-" }, true, 0, 0, NULL },
		{ { "psql", "-qhevil.example" }, false, 0, 0, "evil.example" },
		{ { "psql", "--ho=Evil.Example." }, false, 0, 0, "evil.example" },
		{ { "psql", "-qvPROMPT1=x" }, true, 0, 0, NULL },
		{ { "psql", "--va=PROMPT1=x" }, true, 0, 0, NULL },
		{ { "psql", "--f=x" }, true, 0, 0, NULL },       /* ambiguous: file, field-separator* */
		{ { "psql", "--field-sep=x" }, true, 0, 0, NULL }, /* ambiguous with -zero */
		{ { "psql", "--field-separator=x" }, false, 0, 0, NULL },
		{ { "psql", "-Y" }, true, 0, 0, NULL },
		{ { "psql", "--nonsense" }, true, 0, 0, NULL },
		{ { "psql", "--quiet=x" }, true, 0, 0, NULL },
		{ { "psql", "-c" }, true, 0, 0, NULL },
		{ { "psql", "--", "-h" }, false, 0, 0, NULL }, /* a database named -h */
		{ { "psql", "-Atc", "select 1", "-qXh", "db" }, false, 1, 0, "db" },
	};

	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		struct toolfiles_plan p;
		size_t n = 0;

		while (n < ELEMENTSOF(t[i].argv) && t[i].argv[n])
			n++;
		ASSERT_OK(toolfiles_plan("psql", t[i].argv, n, &cfg, &p));
		EXPECT_EQ(p.refused != NULL, t[i].refused);
		if (p.refused)
			continue;
		EXPECT_EQ(p.n_sql, t[i].n_sql);
		EXPECT_EQ(p.n_files, t[i].n_files);
		EXPECT_STREQ(p.psql.host, t[i].host ? t[i].host : PSQLTARGET_DEFAULT_SOCKET_DIR);
		if (t[i].n_sql == 1) /* the value as psql reads it */
			EXPECT_TRUE(strstr(t[i].argv[p.sql[0].arg] + p.sql[0].prefix_len, "\\! id") ==
					    t[i].argv[p.sql[0].arg] + p.sql[0].prefix_len ||
				    strcmp(t[i].argv[p.sql[0].arg] + p.sql[0].prefix_len, "select 1") == 0);
		if (t[i].n_files == 1)
			EXPECT_STREQ(t[i].argv[p.files[0].arg] + p.files[0].prefix_len, "/etc/passwd");
	}
}

/* pg_wrapper's --cluster (issue: it is taken out of argv after the
 * decision, even as an option's value) is refused in every position; the
 * tool table refuses the wrapper itself. */
TEST(psql_cluster_refused)
{
	static const struct {
		const char *argv[8];
	} t[] = {
		{ { "psql", "-h", "localhost", "-c", "--cluster=15/localhost:15433", "-p", "15432" } },
		{ { "psql", "-c", "--cluster=15/x/s:15432", "-d", "app" } },
		{ { "psql", "--cluster", "15/localhost:15433" } },
		{ { "psql", "-h", "127.0.0.1", "--", "--cluster=15/127.0.0.1:1" } },
	};
	struct toolfiles_plan p;
	const char *const *args;
	const char *why = NULL;

	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		size_t n = 0;

		while (n < ELEMENTSOF(t[i].argv) && t[i].argv[n])
			n++;
		ASSERT_OK(toolfiles_plan("psql", t[i].argv, n, &cfg, &p));
		EXPECT_TRUE(p.refused != NULL);
		EXPECT_TRUE(p.refused_arg && strncmp(p.refused_arg, "--cluster", 9) == 0);
	}
	/* control: the same commands without it */
	PLAN(&p, "psql", "-h", "localhost", "-c", "select 1", "-p", "15432");
	EXPECT_TRUE(p.refused == NULL);
	PLAN(&p, "psql", "-c", "--clusterx", "-p", "15432");
	EXPECT_TRUE(p.refused == NULL);

	EXPECT_ERR(toolfiles_check_binary("psql", "/usr/share/postgresql-common/pg_wrapper", "#!", 2,
					  &why),
		   EINVAL);
	EXPECT_TRUE(why != NULL);
	EXPECT_ERR(toolfiles_check_binary("psql", "/opt/bin/psql", "#!/bin/sh", 9, &why), EINVAL);
	EXPECT_ERR(toolfiles_check_binary("psql", "/usr/share/postgresql-common/x", "\177ELF", 4,
					  &why),
		   EINVAL);
	EXPECT_OK(toolfiles_check_binary("psql", "/usr/lib/postgresql/15/bin/psql", "\177ELF", 4, &why));
	EXPECT_OK(toolfiles_check_binary("aws", "/usr/bin/aws", "#!/usr/bin/python3", 18, &why));
	(void)args;
}

/* Host, port, database and user from options, operands and connection
 * strings; ambiguity refused. */
TEST(psql_target)
{
	static const struct {
		const char *argv[8];
		const char *host, *port, *db, *user; /* NULL: refused */
	} t[] = {
		{ { "psql", "-h", "db", "-p", "05432", "-U", "ro", "app" }, "db", "5432", "app", "ro" },
		{ { "psql", "-d", "app", "ro" }, PSQLTARGET_DEFAULT_SOCKET_DIR, "5432", "app", "ro" },
		{ { "psql", "-U", "ro", "app" }, PSQLTARGET_DEFAULT_SOCKET_DIR, "5432", "app", "ro" },
		{ { "psql", "-l" }, PSQLTARGET_DEFAULT_SOCKET_DIR, "5432", "postgres", "me" },
		{ { "psql", "host=DB.internal port=6432 dbname=app user=ro" }, "db.internal", "6432", "app", "ro" },
		{ { "psql", "-d", "host = db  dbname = 'my app' user=r\\o" }, "db", "5432", "my app", "ro" },
		{ { "psql", "postgresql://ro:pw@db.internal:6432/app?sslmode=require" }, "db.internal", "6432", "app", "ro" },
		{ { "psql", "postgres://[::1]:5432/app" }, "::1", "5432", "app", "me" },
		{ { "psql", "postgresql:///app?host=%2Frun%2Fpostgresql" }, "/run/postgresql", "5432", "app", "me" },
		{ { "psql", "postgresql://db/%61pp" }, "db", "5432", "app", "me" },
		{ { "psql", "-h", "/var/run/postgresql", "app" }, "/var/run/postgresql", "5432", "app", "me" },
		{ { "psql", "-h", "127.0.0.1", "app" }, "127.0.0.1", "5432", "app", "me" },
		/* libpq's defaults: the database is named like the user */
		{ { "psql", "-U", "postgres" }, PSQLTARGET_DEFAULT_SOCKET_DIR, "5432", "postgres", "postgres" },
		{ { "psql", "-h", "db" }, "db", "5432", "me", "me" },
		{ { "psql", "user=ro" }, PSQLTARGET_DEFAULT_SOCKET_DIR, "5432", "ro", "ro" },
		{ { "psql", "postgresql://ro@db" }, "db", "5432", "ro", "ro" },
		/* ambiguity */
		{ { "psql", "-h", "good", "host=evil" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "good", "postgresql://evil/db" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "a", "-h", "b" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-U", "a", "dbname=x user=b" }, NULL, NULL, NULL, NULL },
		{ { "psql", "host=a host=b" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://a/db?host=b" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "a,b" }, NULL, NULL, NULL, NULL },
		{ { "psql", "host=a,b" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://a,b/db" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://a:1,b:2/db" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-p", "5432,5433" }, NULL, NULL, NULL, NULL },
		{ { "psql", "service=prod" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql:///db?service=prod" }, NULL, NULL, NULL, NULL },
		{ { "psql", "host=a hostaddr=10.0.0.1" }, NULL, NULL, NULL, NULL },
		{ { "psql", "host=a sslrootcert=/etc/passwd" }, NULL, NULL, NULL, NULL },
		{ { "psql", "host=a passfile=/x" }, NULL, NULL, NULL, NULL },
		{ { "psql", "host=a nosuchkey=1" }, NULL, NULL, NULL, NULL },
		{ { "psql", "a", "b", "c" }, NULL, NULL, NULL, NULL },
		/* values the resolver or server would read differently */
		{ { "psql", "-h", "127.1" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "0x7f000001" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "2130706433" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "010.0.0.1" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "@abstract" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "/run/../tmp" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "/run//postgresql" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "/run/postgresql/" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-h", "a b" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-p", "0" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-p", "65536" }, NULL, NULL, NULL, NULL },
		{ { "psql", "-p", "54x" }, NULL, NULL, NULL, NULL },
		{ { "psql", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://db/%00x" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://db/%ff" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://db/%4" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://u@h@evil/db" }, NULL, NULL, NULL, NULL },
		{ { "psql", "postgresql://h/db?x=@evil" }, NULL, NULL, NULL, NULL },
		{ { "psql", "dbname='unterminated" }, NULL, NULL, NULL, NULL },
		{ { "psql", "=x" }, NULL, NULL, NULL, NULL },
	};

	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		struct toolfiles_plan p;
		size_t n = 0;

		while (n < ELEMENTSOF(t[i].argv) && t[i].argv[n])
			n++;
		ASSERT_OK(toolfiles_plan("psql", t[i].argv, n, &cfg, &p));
		if (!t[i].host) {
			if (!p.refused)
				printf("#   case %zu '%s': not refused\n", i, t[i].argv[1]);
			EXPECT_TRUE(p.refused != NULL);
			continue;
		}
		if (p.refused)
			printf("#   case %zu '%s': refused: %s\n", i, t[i].argv[1], p.refused);
		ASSERT_TRUE(p.refused == NULL);
		EXPECT_STREQ(p.psql.host, t[i].host);
		EXPECT_STREQ(p.psql.port, t[i].port);
		EXPECT_STREQ(p.psql.dbname, t[i].db);
		EXPECT_STREQ(p.psql.user, t[i].user);
	}
	/* Without a user name for the host user, the default is unknown:
	 * refused unless -U gives it. */
	{
		static const struct toolfiles_config nouser = { .gh_host = "github.com" };
		static const char *const a1[] = { "psql", "-h", "db", "app" };
		static const char *const a2[] = { "psql", "-h", "db", "-U", "ro" };
		struct toolfiles_plan p;

		ASSERT_OK(toolfiles_plan("psql", a1, ELEMENTSOF(a1), &nouser, &p));
		EXPECT_TRUE(p.refused != NULL);
		ASSERT_OK(toolfiles_plan("psql", a2, ELEMENTSOF(a2), &nouser, &p));
		EXPECT_TRUE(p.refused == NULL);
		EXPECT_STREQ(p.psql.dbname, "ro");
	}
}

/* terraform plan -out=NAME is kept by the daemon; show takes only its id. */
TEST(terraform_daemon_plans)
{
	static const char *const id = "sandbox-plan-0123456789abcdef0123456789abcdef";
	static const struct {
		const char *argv[5];
		bool refused;
		bool out, show;
	} t[] = {
		{ { "terraform", "plan", "-out=tfplan" }, false, true, false },
		{ { "terraform", "plan", "--out", "my.plan" }, false, true, false },
		{ { "terraform", "plan", "-var=x=1", "-out=p-1_2" }, false, true, false },
		{ { "terraform", "plan", "-out=/tmp/x" }, true, false, false },
		{ { "terraform", "plan", "-out=../x" }, true, false, false },
		{ { "terraform", "plan", "-out=sub/x" }, true, false, false },
		{ { "terraform", "plan", "-out=.terraform" }, true, false, false },
		{ { "terraform", "plan", "-out=" }, true, false, false },
		{ { "terraform", "plan", "-out" }, true, false, false },
		{ { "terraform", "plan", "-out=a", "-out=b" }, true, false, false },
		{ { "terraform", "plan", "-out=sandbox-plan-0123456789abcdef0123456789abcdef" }, true, false, false },
		{ { "terraform", "-out=x", "plan" }, true, false, false },
		{ { "terraform", "apply", "-out=x" }, true, false, false },
		{ { "terraform", "show", "sandbox-plan-0123456789abcdef0123456789abcdef" }, false, false, true },
		{ { "terraform", "show", "-json", "sandbox-plan-0123456789abcdef0123456789abcdef" }, false, false, true },
		{ { "terraform", "show" }, false, false, false },
		{ { "terraform", "show", "tfplan" }, true, false, false },
		{ { "terraform", "show", "sandbox-plan-0123456789ABCDEF0123456789abcdef" }, true, false, false },
		{ { "terraform", "show", "sandbox-plan-0123456789abcdef0123456789abcde" }, true, false, false },
		{ { "terraform", "show", "sandbox-plan-0123456789abcdef0123456789abcdef", "x" }, true, false, false },
		{ { "terraform", "show", "./sandbox-plan-0123456789abcdef0123456789abcdef" }, true, false, false },
		{ { "terraform", "apply", "sandbox-plan-0123456789abcdef0123456789abcdef" }, true, false, false },
	};

	EXPECT_TRUE(toolfiles_tf_plan_id_valid(id));
	EXPECT_FALSE(toolfiles_tf_plan_id_valid("sandbox-plan-"));
	EXPECT_FALSE(toolfiles_tf_plan_id_valid(NULL));
	for (size_t i = 0; i < ELEMENTSOF(t); i++) {
		struct toolfiles_plan p;
		size_t n = 0;

		while (n < ELEMENTSOF(t[i].argv) && t[i].argv[n])
			n++;
		ASSERT_OK(toolfiles_plan("terraform", t[i].argv, n, &cfg, &p));
		if ((p.refused != NULL) != t[i].refused)
			printf("#   case %zu: refused=%s\n", i, p.refused ? p.refused : "no");
		EXPECT_EQ(p.refused != NULL, t[i].refused);
		if (p.refused)
			continue;
		EXPECT_EQ(p.tf_out != NULL, t[i].out);
		EXPECT_EQ(p.tf_show != NULL, t[i].show);
		EXPECT_EQ(p.copy_terraform, !t[i].show);
	}
}

TEST(psql_fields_scripts_and_refusals)
{
	struct toolfiles_plan p;
	const char *const *args;

	PLAN(&p, "psql", "-h", "db.internal", "-p5433", "--username=app", "-d", "orders", "-c",
	     "select 1", "-f", "q.sql", "-v", "ON_ERROR_STOP=1");
	ASSERT_TRUE(p.refused == NULL);
	EXPECT_TRUE(p.stdin_null);
	ASSERT_EQ(p.n_prepend, 1);
	EXPECT_STREQ(p.prepend[0], "-X");
	EXPECT_STREQ(p.psql.host, "db.internal");
	EXPECT_STREQ(p.psql.port, "5433");
	EXPECT_STREQ(p.psql.user, "app");
	EXPECT_STREQ(p.psql.dbname, "orders");
	ASSERT_EQ(p.n_sql, 1);
	EXPECT_STREQ(args[p.sql[0].arg], "select 1");
	ASSERT_EQ(p.n_files, 1);
	EXPECT_EQ(p.files[0].kind, TOOLFILES_PSQL_SCRIPT);
	PLAN(&p, "psql", "mydb", "me");
	EXPECT_STREQ(p.psql.dbname, "mydb");
	EXPECT_STREQ(p.psql.user, "me");
	PLAN(&p, "psql", "-o", "/tmp/out");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "psql", "--log-file=/tmp/out");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "psql", "-f", "-");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "psql", "-v", "PROMPT1=%`id`");
	EXPECT_TRUE(p.refused != NULL);
	PLAN(&p, "psql", "--set=PROMPT1=x");
	EXPECT_TRUE(p.refused != NULL);
	(void)args;
}
