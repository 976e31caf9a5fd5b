/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "macros.h"
#include "tap.h"
#include "toolfiles.h"

static const struct toolfiles_config cfg = { .gh_host = "github.com" };

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
	PLAN(&p, "terraform", "plan", "-out=plan.bin");
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
	EXPECT_STREQ(p.target.host, "db.internal");
	EXPECT_STREQ(p.target.port, "5433");
	EXPECT_STREQ(p.target.user, "app");
	EXPECT_STREQ(p.target.dbname, "orders");
	ASSERT_EQ(p.n_sql, 1);
	EXPECT_STREQ(args[p.sql[0].arg], "select 1");
	ASSERT_EQ(p.n_files, 1);
	EXPECT_EQ(p.files[0].kind, TOOLFILES_PSQL_SCRIPT);
	PLAN(&p, "psql", "mydb", "me");
	EXPECT_STREQ(p.target.dbname, "mydb");
	EXPECT_STREQ(p.target.user, "me");
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
