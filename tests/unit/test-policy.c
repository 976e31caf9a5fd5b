/* SPDX-License-Identifier: MIT */
/* Static policy: parsing (valid files, every error with line and column),
 * URL normalisation, argument grammars and evaluation of the shipped
 * execd/policy.example against the spellings an agent might try. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "authz_git.h"
#include "policy.h"
#include "macros.h"
#include "tap.h"
#include "toolfiles.h"
#include "toolgrammar.h"

#define MAX_ARGV 32

static struct policy *parse_ok(const char *text)
{
	struct policy *p = NULL;
	struct policy_error e = { 0 };
	int r = policy_parse(text, strlen(text), &p, &e);

	if (r < 0)
		printf("# parse failed: %d at %u:%u: %s\n", r, e.line, e.column,
		       e.message ? e.message : "?");
	return r < 0 ? NULL : p;
}

static struct policy *load_example(void)
{
	static char buf[POLICY_MAX_FILE];
	FILE *f = fopen(SOURCE_ROOT "/execd/policy.example", "re");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return parse_ok(buf);
}

/* Splits a command line on single spaces into argv (test inputs only). */
static size_t split(char *cmd, const char **argv)
{
	size_t n = 0;

	for (char *s = strtok(cmd, " "); s && n < MAX_ARGV - 1; s = strtok(NULL, " "))
		argv[n++] = s;
	argv[n] = NULL;
	return n;
}

static enum authz_verdict decide(const struct policy *p, const char *cmdline, const char *dest,
				 struct policy_verdict *v)
{
	char buf[1024];
	const char *argv[MAX_ARGV];
	struct authz_request req = { 0 };
	size_t n;

	(void)snprintf(buf, sizeof(buf), "%s", cmdline);
	n = split(buf, argv);
	req.request_id = "t";
	req.tool = argv[0];
	req.argv = argv;
	req.argc = n;
	req.host_cwd = "/home/u/src/proj";
	req.container_cwd = "/workspace";
	req.destination = dest;
	if (policy_evaluate(p, &req, v) < 0)
		return AUTHZ_VERDICT_MAX;
	return v->verdict;
}

struct example_case {
	const char *cmd;
	const char *dest;
	enum authz_verdict want;
	const char *reason_part; /* substring of the reason, or NULL */
};

static const char *const ACME = "https://github.com/acme/widget.git";
static const char *const EVIL = "https://github.com/evil/widget.git";

static const struct example_case example_cases[] = {
	/* gh */
	{ "gh pr create --title x --body y", NULL, AUTHZ_ALLOW, NULL },
	{ "gh pr view 12", NULL, AUTHZ_ALLOW, NULL },
	/* Files: the daemon opens them beneath the workspace (a host path is
	 * path_outside_workspace there, lib/toolfiles.c); the policy allows. */
	{ "gh pr create --title x --body-file notes.md", NULL, AUTHZ_ALLOW, NULL },
	{ "gh pr create -F notes.md", NULL, AUTHZ_ALLOW, NULL },
	{ "gh pr list --state open", NULL, AUTHZ_ALLOW, NULL },
	{ "gh -R acme/w pr list", NULL, AUTHZ_ALLOW, NULL },
	{ "gh pr -R acme/w list", NULL, AUTHZ_ALLOW, NULL },
	{ "gh pr merge 12", NULL, AUTHZ_DENY, "default" },
	{ "gh pr --title list create", NULL, AUTHZ_DENY, "cannot tell" },
	{ "gh api repos/acme/w", NULL, AUTHZ_DENY, "default" },
	{ "gh pr", NULL, AUTHZ_DENY, "default" },
	/* kubectl */
	{ "kubectl get pods", NULL, AUTHZ_ALLOW, NULL },
	{ "kubectl -n prod get pods -o yaml", NULL, AUTHZ_ALLOW, NULL },
	{ "kubectl get secrets", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get secret", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl -n x get secrets", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get -n x secrets", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get secrets -n x", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl --namespace=x get secrets", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get secret/foo", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get secrets/foo -o yaml", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get all,secrets", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get pods,secret/foo", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get Secrets", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get secrets.v1.", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get secret foo", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl describe secret foo", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get -o yaml secrets", NULL, AUTHZ_DENY, "Secrets" },
	{ "kubectl get --raw /api/v1/namespaces/x/secrets/y", NULL, AUTHZ_DENY, "raw" },
	{ "kubectl get -f secret.yaml", NULL, AUTHZ_DENY, "raw" },
	{ "kubectl get --as=admin pods", NULL, AUTHZ_DENY, "identity" },
	{ "kubectl get pods --token x", NULL, AUTHZ_DENY, "identity" },
	{ "kubectl delete pod x", NULL, AUTHZ_DENY, "default" },
	{ "kubectl -w get secrets", NULL, AUTHZ_DENY, NULL },
	{ "kubectl logs -f pod/x", NULL, AUTHZ_ALLOW, NULL },
	/* terraform */
	{ "kubectl get pods -o go-template-file=/home/u/.ssh/id_rsa", NULL, AUTHZ_DENY, "host" },
	{ "kubectl get pods -ojsonpath-file=/x", NULL, AUTHZ_DENY, "host" },
	{ "kubectl get pods --output jsonpath-file=/x", NULL, AUTHZ_DENY, "host" },
	{ "kubectl get pods -o go-template --template=/x", NULL, AUTHZ_DENY, "host" },
	{ "kubectl get pods -o json", NULL, AUTHZ_ALLOW, NULL },
	/* providers chosen by the agent: a person, not the policy */
	{ "terraform plan", NULL, AUTHZ_DENY, "person" },
	{ "terraform apply", NULL, AUTHZ_DENY, "person" },
	{ "terraform init", NULL, AUTHZ_DENY, "person" },
	{ "terraform validate", NULL, AUTHZ_DENY, "person" },
	{ "terraform console", NULL, AUTHZ_DENY, "person" },
	{ "terraform import a.b id", NULL, AUTHZ_DENY, "person" },
	{ "terraform apply -auto-approve -var x=1", NULL, AUTHZ_DENY, "person" },
	{ "terraform fmt -check", NULL, AUTHZ_ALLOW, NULL },
	{ "terraform version", NULL, AUTHZ_ALLOW, NULL },
	{ "terraform show", NULL, AUTHZ_ALLOW, NULL },
	{ "terraform destroy", NULL, AUTHZ_DENY, "destroy" },
	{ "terraform -chdir=x destroy", NULL, AUTHZ_DENY, "destroy" },
	{ "terraform apply -destroy", NULL, AUTHZ_DENY, "destroy" },
	{ "terraform apply --destroy", NULL, AUTHZ_DENY, "destroy" },
	{ "terraform apply -destroy=true", NULL, AUTHZ_DENY, "destroy" },
	{ "terraform -chdir=x apply -destroy", NULL, AUTHZ_DENY, "destroy" },
	{ "terraform plan -destroy -out p", NULL, AUTHZ_DENY, "destroy" },
	{ "terraform apply destroy.tfplan", NULL, AUTHZ_DENY, "person" },
	{ "terraform -chdir x apply", NULL, AUTHZ_DENY, "default" },
	{ "terraform init -plugin-dir=/tmp", NULL, AUTHZ_DENY, "refused" },
	/* aws */
	{ "aws sts get-caller-identity", NULL, AUTHZ_ALLOW, NULL },
	/* guarded options: only with the exact value a rule names */
	{ "aws --region eu-west-1 ec2 describe-instances", NULL, AUTHZ_ALLOW, NULL },
	{ "aws --reg eu-west-1 ec2 describe-instances", NULL, AUTHZ_ALLOW, NULL },
	{ "aws --region us-east-1 ec2 describe-instances", NULL, AUTHZ_DENY, "default" },
	{ "aws --region eu-west-1* ec2 describe-instances", NULL, AUTHZ_DENY, "default" },
	{ "aws ec2 --profile p describe-instances --output json", NULL, AUTHZ_DENY, "default" },
	{ "aws s3 ls --endpoint-url http://127.0.0.1:18080", NULL, AUTHZ_DENY, "default" },
	{ "aws s3 ls --endp http://127.0.0.1:18080", NULL, AUTHZ_DENY, "default" },
	{ "aws --debug sts get-caller-identity", NULL, AUTHZ_DENY, "default" },
	{ "aws ec2 describe-instances --output json", NULL, AUTHZ_ALLOW, NULL },
	{ "aws ec2 terminate-instances --instance-ids i-1", NULL, AUTHZ_DENY, "destructive" },
	{ "aws s3 rm s3://b/k", NULL, AUTHZ_DENY, "default" },
	{ "aws --bogus x ec2 describe-instances", NULL, AUTHZ_DENY, "cannot tell" },
	/* tools the policy does not name */
	{ "psql -c select", NULL, AUTHZ_DENY, "default" },
	{ "curl https://x", NULL, AUTHZ_DENY, "default" },
};

TEST(example_policy_table)
{
	struct policy *p = load_example();

	ASSERT_NOT_NULL(p);
	ASSERT_GT(policy_n_rules(p), 10);
	for (size_t i = 0; i < ELEMENTSOF(example_cases); i++) {
		const struct example_case *c = &example_cases[i];
		struct policy_verdict v;
		enum authz_verdict got = decide(p, c->cmd, c->dest, &v);

		if (got != c->want)
			printf("#   '%s' (dest %s): got %s (%s), want %s\n", c->cmd,
			       c->dest ? c->dest : "none", got == AUTHZ_ALLOW ? "allow" : "deny",
			       v.reason, c->want == AUTHZ_ALLOW ? "allow" : "deny");
		EXPECT_EQ(got, c->want);
		if (c->reason_part && !strstr(v.reason, c->reason_part)) {
			printf("#   '%s': reason '%s' lacks '%s'\n", c->cmd, v.reason, c->reason_part);
			EXPECT_TRUE(false);
		}
	}
	(void)ACME;
	(void)EVIL;
	policy_free(p);
}

/* psql's host=, port=, db=, user= on the fields lib/toolfiles.c worked out
 * (as execd/dispatch.c hands them over); what the command does not give is
 * libpq's default (the socket directory, 5432, the host user "me", the
 * database named like the user), ambiguity never reaches the policy. */
static enum authz_verdict decide_psql(const struct policy *p, const char *cmdline,
				      struct policy_verdict *v)
{
	static const struct toolfiles_config cfg = { .gh_host = "github.com", .psql_user = "me" };
	char buf[1024];
	const char *argv[MAX_ARGV];
	struct toolfiles_plan plan;
	struct authz_request req = { 0 };
	size_t n;

	(void)snprintf(buf, sizeof(buf), "%s", cmdline);
	n = split(buf, argv);
	if (toolfiles_plan("psql", argv, n, &cfg, &plan) < 0 || plan.refused)
		return AUTHZ_VERDICT_MAX;
	req.request_id = "t";
	req.tool = "psql";
	req.argv = argv;
	req.argc = n;
	req.host_cwd = "/home/u/src/proj";
	req.psql = &plan.psql;
	if (policy_evaluate(p, &req, v) < 0)
		return AUTHZ_VERDICT_MAX;
	return v->verdict;
}

TEST(psql_target_conditions)
{
	struct policy *p = parse_ok("allow psql host=DB.internal,/run/postgresql port=5432,6432 db=app,app_* user=ro\n"
				    "allow psql host=replica.internal\n"
				    "deny psql db=secrets reason=\"no secrets\"\n");
	struct policy_verdict v;

	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 -U ro app -c select", &v), AUTHZ_ALLOW);
	EXPECT_EQ(v.line, 1);
	EXPECT_EQ(decide_psql(p, "psql -h DB.INTERNAL. -p 05432 -U ro app_x", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_psql(p, "psql postgresql://ro@db.internal:6432/app", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_psql(p, "psql postgresql://db.internal:5432/app?user=ro&sslmode=require", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_psql(p, "psql -h /run/postgresql -p 5432 -U ro app", &v), AUTHZ_ALLOW);
	/* each field must match, given or libpq's default */
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -U ro app", &v), AUTHZ_ALLOW); /* port 5432 */
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 app", &v), AUTHZ_DENY); /* user me */
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 app", &v), AUTHZ_DENY);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 -U rw app", &v), AUTHZ_DENY);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5433 -U ro app", &v), AUTHZ_DENY);
	EXPECT_EQ(decide_psql(p, "psql -h evil.internal -p 5432 -U ro app", &v), AUTHZ_DENY);
	EXPECT_EQ(decide_psql(p, "psql -p 5432 -U ro app", &v), AUTHZ_DENY); /* the local socket */
	/* a host glob never matches a socket directory */
	{
		struct policy *g = parse_ok("allow psql host=*.internal\n");

		ASSERT_NOT_NULL(g);
		EXPECT_EQ(decide_psql(g, "psql -h db.internal app", &v), AUTHZ_ALLOW);
		EXPECT_EQ(decide_psql(g, "psql -h /tmp/x.internal app", &v), AUTHZ_DENY);
		policy_free(g);
	}
	/* a deny on a field holds when the command leaves it to libpq */
	{
		struct policy *g = parse_ok("deny psql db=postgres,template*\ndeny psql user=me\n"
					    "deny psql port=5432 host=/var/run/postgresql db=x\nallow psql\n");

		ASSERT_NOT_NULL(g);
		EXPECT_EQ(decide_psql(g, "psql -U postgres", &v), AUTHZ_DENY);
		EXPECT_EQ(decide_psql(g, "psql -h db -U ro app", &v), AUTHZ_ALLOW); /* control */
		EXPECT_EQ(decide_psql(g, "psql -h db app", &v), AUTHZ_DENY);       /* user me */
		EXPECT_EQ(decide_psql(g, "psql -U ro x", &v), AUTHZ_DENY);         /* socket, 5432 */
		EXPECT_EQ(decide_psql(g, "psql -h db -U ro x", &v), AUTHZ_ALLOW);  /* control */
		policy_free(g);
	}
	/* an IPv4-mapped IPv6 address is the IPv4 address it reaches */
	{
		struct policy *g = parse_ok("deny psql host=127.0.0.1\nallow psql\n");

		ASSERT_NOT_NULL(g);
		EXPECT_EQ(decide_psql(g, "psql -h ::ffff:127.0.0.1 app", &v), AUTHZ_DENY);
		EXPECT_EQ(decide_psql(g, "psql postgresql://[::ffff:7f00:1]/app", &v), AUTHZ_DENY);
		EXPECT_EQ(decide_psql(g, "psql -h ::1 app", &v), AUTHZ_ALLOW); /* control */
		policy_free(g);
	}
	/* the second rule: any database on the replica, but never secrets */
	EXPECT_EQ(decide_psql(p, "psql -h replica.internal whatever", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_psql(p, "psql -h replica.internal secrets", &v), AUTHZ_DENY);
	EXPECT_STREQ(v.reason, "no secrets");
	EXPECT_EQ(decide_psql(p, "psql postgresql://replica.internal/secrets", &v), AUTHZ_DENY);
	EXPECT_EQ(decide_psql(p, "psql -d dbname=secrets -h replica.internal", &v), AUTHZ_DENY);
	/* ambiguity is refused before any policy sees it */
	EXPECT_EQ(decide_psql(p, "psql -h db.internal host=evil", &v), AUTHZ_VERDICT_MAX);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal,evil", &v), AUTHZ_VERDICT_MAX);
	/* no psql fields outside psql requests */
	{
		const char *argv[] = { "psql", "-h", "db.internal", NULL };
		struct authz_request req = { .request_id = "t", .tool = "psql", .argv = argv, .argc = 3 };

		ASSERT_OK(policy_evaluate(p, &req, &v));
		EXPECT_EQ(v.verdict, AUTHZ_DENY);
	}
	policy_free(p);
	/* the shipped policy's psql rules */
	p = load_example();
	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 -U readonly app -c select", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_psql(p, "psql postgresql://readonly@db.internal:5432/app_reports", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 -U admin app", &v), AUTHZ_DENY);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -U readonly app", &v), AUTHZ_ALLOW); /* 5432 */
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5433 -U readonly app", &v), AUTHZ_DENY);
	/* the default database is the user's name: -U postgres is database postgres */
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 -U postgres", &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "maintenance") != NULL);
	EXPECT_EQ(decide_psql(p, "psql -h db.internal -p 5432 -U readonly postgres", &v), AUTHZ_DENY);
	EXPECT_EQ(decide_psql(p, "psql -l -h db.internal -p 5432 -U readonly", &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "maintenance") != NULL);
	EXPECT_EQ(decide_psql(p, "psql -h other.internal -p 5432 -U readonly app", &v), AUTHZ_DENY);
	policy_free(p);
}

TEST(deny_wins_regardless_of_order)
{
	struct policy *a = parse_ok("allow kubectl delete\ndeny kubectl delete flag=--all reason=\"no\"\n");
	struct policy *b = parse_ok("deny kubectl delete flag=--all reason=\"no\"\nallow kubectl delete\n");
	struct policy_verdict v;

	ASSERT_NOT_NULL(a);
	ASSERT_NOT_NULL(b);
	EXPECT_EQ(decide(a, "kubectl delete pods --all", NULL, &v), AUTHZ_DENY);
	EXPECT_STREQ(v.reason, "no");
	EXPECT_EQ(v.line, 2);
	EXPECT_EQ(v.source, POLICY_SOURCE_RULE);
	EXPECT_EQ(decide(b, "kubectl delete pods --all", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(v.line, 1);
	EXPECT_EQ(decide(a, "kubectl delete pod x", NULL, &v), AUTHZ_ALLOW);
	EXPECT_EQ(v.line, 1);
	EXPECT_STREQ(v.reason, "allowed by policy rule 1");
	policy_free(a);
	policy_free(b);
}

TEST(flag_values)
{
	struct policy *p = parse_ok("allow gh\n"
				    "deny gh flag=-R=evil/*,--repo=evil/* reason=\"repo\"\n"
				    "deny kubectl flag=-n=kube-system,--namespace=kube-system\n"
				    "allow kubectl get\n");
	struct policy_verdict v;

	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide(p, "gh -R acme/x pr list", NULL, &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide(p, "gh -R evil/x pr list", NULL, &v), AUTHZ_DENY);
	EXPECT_STREQ(v.reason, "repo");
	EXPECT_EQ(decide(p, "gh --repo=evil/x pr list", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(decide(p, "gh pr list --repo evil/x", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(decide(p, "kubectl get pods -n kube-system", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(decide(p, "kubectl --namespace=kube-system get pods", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(decide(p, "kubectl -nkube-system get pods", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(decide(p, "kubectl -n default get pods", NULL, &v), AUTHZ_ALLOW);
	policy_free(p);
}

TEST(git_clone_is_a_fetch)
{
	/* rules on fetch cover clone; a rule can name clone alone */
	struct policy *p = parse_ok("deny git clone dest=h.test/big reason=\"too big to clone\"\n"
				    "allow git ls-remote,fetch dest=h.test/*\n"
				    "deny git fetch dest=h.test/secret reason=\"no\"\n");
	struct policy_verdict v;

	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide(p, "git clone", "https://h.test/r.git", &v), AUTHZ_ALLOW);
	EXPECT_EQ(v.line, 2);
	EXPECT_EQ(decide(p, "git fetch", "https://h.test/r.git", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide(p, "git clone", "https://h.test/big", &v), AUTHZ_DENY);
	EXPECT_STREQ(v.reason, "too big to clone");
	EXPECT_EQ(decide(p, "git fetch", "https://h.test/big", &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide(p, "git clone", "https://other.test/r", &v), AUTHZ_DENY);
	/* fetch does not cover push, clone does not cover fetch */
	EXPECT_EQ(decide(p, "git push", "https://h.test/r.git", &v), AUTHZ_DENY);
	policy_free(p);
	p = parse_ok("allow git clone\n");
	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide(p, "git fetch", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(decide(p, "git clone", NULL, &v), AUTHZ_ALLOW);
	/* not for other tools */
	policy_free(p);
	p = parse_ok("allow kubectl fetch\n");
	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide(p, "kubectl clone", NULL, &v), AUTHZ_DENY);
	policy_free(p);
}

TEST(first_matching_reason_is_shown)
{
	struct policy *p = parse_ok("deny git push reason=\"first\"\ndeny git push reason=\"second\"\n"
				    "allow git reason=\"ok\"\n");
	struct policy_verdict v;

	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide(p, "git push", NULL, &v), AUTHZ_DENY);
	EXPECT_STREQ(v.reason, "first");
	EXPECT_EQ(decide(p, "git fetch", NULL, &v), AUTHZ_ALLOW);
	EXPECT_STREQ(v.reason, "ok");
	EXPECT_EQ(v.line, 3);
	policy_free(p);
}

TEST(empty_policy_denies_everything)
{
	struct policy *p = parse_ok("# nothing\n\n   \t\n");
	struct policy_verdict v;

	ASSERT_NOT_NULL(p);
	EXPECT_EQ(policy_n_rules(p), 0);
	EXPECT_EQ(decide(p, "kubectl get pods", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(v.line, 0);
	EXPECT_EQ(v.source, POLICY_SOURCE_DEFAULT);
	EXPECT_EQ(decide(p, "terraform init -plugin-dir=/tmp", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(v.source, POLICY_SOURCE_GRAMMAR);
	EXPECT_EQ(decide(p, "kubectl --bogus get pods", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(v.source, POLICY_SOURCE_DEFAULT);
	policy_free(p);
}

TEST(whole_tool_rules_and_wildcards)
{
	struct policy *p = parse_ok("allow kubectl\r\n"
				    "deny * cwd=/home/u/secret/*\n"
				    "allow mytool cwd=/home/u/src/*\n"
				    "deny kubectl * arg=*evil* # trailing comment\n");
	struct policy_verdict v;
	char cmd[] = "mytool --anything";
	const char *argv[] = { "mytool", "--anything", NULL };
	struct authz_request req = { .tool = "mytool", .argv = argv, .argc = 2,
				     .host_cwd = "/home/u/secret/x" };

	ASSERT_NOT_NULL(p);
	(void)cmd;
	EXPECT_EQ(decide(p, "kubectl anything at all", NULL, &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide(p, "kubectl logs the-evil-pod", NULL, &v), AUTHZ_DENY);
	EXPECT_EQ(decide(p, "mytool x", NULL, &v), AUTHZ_ALLOW);
	ASSERT_OK(policy_evaluate(p, &req, &v));
	EXPECT_EQ(v.verdict, AUTHZ_DENY);
	EXPECT_EQ(v.line, 2);
	req.host_cwd = NULL;
	ASSERT_OK(policy_evaluate(p, &req, &v));
	EXPECT_EQ(v.verdict, AUTHZ_DENY);
	policy_free(p);
}

TEST(quoted_reason_escapes)
{
	struct policy *p = parse_ok("deny git push reason=\"say \\\"no\\\" \\\\ # not a comment\"\n");
	struct policy_verdict v;

	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide(p, "git push", NULL, &v), AUTHZ_DENY);
	EXPECT_STREQ(v.reason, "say \"no\" \\ # not a comment");
	policy_free(p);
}

struct error_case {
	const char *text;
	unsigned line, column;
	int error;
	const char *message_part;
};

static const struct error_case error_cases[] = {
	{ "permit git\n", 1, 1, EINVAL, "allow" },
	{ "\n\nallow\n", 3, 6, EINVAL, "missing tool" },
	{ "allow Git\n", 1, 7, EINVAL, "tool name" },
	{ "allow git push -f\n", 1, 16, EINVAL, "flag=" },
	{ "allow git push,-f\n", 1, 11, EINVAL, "flag=" },
	{ "allow git push,,fetch\n", 1, 16, EINVAL, "empty item" },
	{ "allow kubectl get flag=\n", 1, 24, EINVAL, "empty list" },
	{ "allow kubectl get flag=force\n", 1, 24, EINVAL, "flag=" },
	{ "allow kubectl get flag=-n=\n", 1, 24, EINVAL, "flag=" },
	{ "allow kubectl get flag=--=x\n", 1, 24, EINVAL, "flag=" },
	{ "allow kubectl get flag=-=x\n", 1, 24, EINVAL, "flag=" },
	{ "allow git push bogus=x\n", 1, 16, EINVAL, "unknown condition" },
	{ "allow kubectl get flag=-n flag=-A\n", 1, 27, EINVAL, "twice" },
	{ "allow kubectl flag=-n get\n", 1, 23, EINVAL, "before conditions" },
	{ "allow kubectl get refspec=+*\n", 1, 19, EINVAL, "unknown condition" },
	{ "allow git push flag=-f\n", 1, 16, EINVAL, "git rules take" },
	{ "allow git push arg=x\n", 1, 16, EINVAL, "git rules take" },
	{ "allow mytool sub\n", 1, 14, EINVAL, "no argument grammar" },
	{ "allow mytool flag=-x\n", 1, 14, EINVAL, "grammar" },
	{ "allow * push\n", 1, 9, EINVAL, "named tool" },
	{ "allow git push dest=https://github.com/acme/*\n", 1, 21, EINVAL, "without scheme" },
	{ "allow git push dest=git@github.com:acme/*\n", 1, 21, EINVAL, "without scheme" },
	{ "allow git cwd=relative/*\n", 1, 15, EINVAL, "absolute" },
	{ "allow git reason=\"unterminated\n", 1, 11, EINVAL, "unterminated" },
	{ "allow git reason=\"a\\n\"\n", 1, 20, EINVAL, "escape" },
	{ "allow git reason=\"a\"b\n", 1, 21, EINVAL, "blank after" },
	{ "allow git \"push\"\n", 1, 11, EINVAL, "quote" },
	{ "allow git reason=a reason=b\n", 1, 20, EINVAL, "duplicate reason" },
	{ "allow git reason=\"a\tb\"\n", 1, 18, EINVAL, "control" },
	{ "allow a b c d e f g h i j k l m\n", 1, 0, EINVAL, "" },
	{ "allow git a b c d e\n", 1, 19, E2BIG, "too many subcommand" },
	{ "allow git\nallow git\x00push\n", 2, 0, EINVAL, "NUL" },
	{ "allow gh host=github.com\n", 1, 10, EINVAL, "for psql rules" },
	{ "allow * db=app\n", 1, 9, EINVAL, "for psql rules" },
	{ "allow psql port=54x\n", 1, 17, EINVAL, "port= patterns" },
	{ "allow psql user=a user=b\n", 1, 19, EINVAL, "twice" },
};

TEST(parse_errors_name_line_and_column)
{
	for (size_t i = 0; i < ELEMENTSOF(error_cases); i++) {
		const struct error_case *c = &error_cases[i];
		struct policy *p = NULL;
		struct policy_error e = { 0 };
		size_t len = strlen(c->text);
		int r;

		if (strstr(c->text, "allow git\nallow git"))
			len = sizeof("allow git\nallow git\x00push\n") - 1;
		r = policy_parse(c->text, len, &p, &e);
		if (r != -c->error || e.line != c->line || (c->column && e.column != c->column) ||
		    !e.message || !strstr(e.message, c->message_part)) {
			printf("#   case %zu: r=%d line=%u col=%u msg='%s'\n", i, r, e.line, e.column,
			       e.message ? e.message : "(null)");
			EXPECT_TRUE(false);
		}
		EXPECT_TRUE(p == NULL);
	}
}

TEST(limits)
{
	size_t n = (POLICY_MAX_RULES + 1) * 10 + 1;
	char *big = malloc(n), *s = big;
	struct policy *p = NULL;
	struct policy_error e = { 0 };
	char line[POLICY_MAX_LINE + 32];
	char list[POLICY_MAX_PATTERNS * 3 + 32];

	ASSERT_NOT_NULL(big);
	for (size_t i = 0; i < POLICY_MAX_RULES + 1; i++)
		s += sprintf(s, "allow git\n");
	EXPECT_ERR(policy_parse(big, (size_t)(s - big), &p, &e), E2BIG);
	EXPECT_EQ(e.line, POLICY_MAX_RULES + 1);
	EXPECT_ERR(policy_parse(big, POLICY_MAX_FILE + 1, &p, &e), E2BIG);
	free(big);

	memset(line, 'a', sizeof(line));
	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result): a line, not a string */
	memcpy(line, "allow git ", 10);
	line[POLICY_MAX_LINE + 1] = '\n';
	EXPECT_ERR(policy_parse(line, POLICY_MAX_LINE + 2, &p, &e), E2BIG);
	EXPECT_EQ(e.line, 1);

	s = list + sprintf(list, "allow kubectl get arg=");
	for (size_t i = 0; i < POLICY_MAX_PATTERNS + 1; i++)
		s += sprintf(s, "%sx", i ? "," : "");
	EXPECT_ERR(policy_parse(list, strlen(list), &p, &e), E2BIG);
	EXPECT_TRUE(p == NULL);
}

struct url_case {
	const char *url;
	const char *want; /* NULL: must not normalise */
};

static const struct url_case url_cases[] = {
	{ "https://github.com/acme/x.git", "github.com/acme/x" },
	{ "git@github.com:acme/x.git", "github.com/acme/x" },
	{ "ssh://git@github.com/acme/x", "github.com/acme/x" },
	{ "ssh://git@github.com:22/acme/x/", "github.com/acme/x" },
	{ "ssh://git@github.com:2222/acme/x", "github.com:2222/acme/x" },
	{ "HTTPS://GitHub.COM/Acme/X.git", "github.com/Acme/X" },
	{ "https://user:secret@github.com/acme/x", "github.com/acme/x" },
	{ "https://github.com:443/acme/x", "github.com/acme/x" },
	{ "git://example.org/r.git", "example.org/r" },
	{ "git+ssh://h/~u/r.git", "h/~u/r" },
	{ "github.com:acme/x", "github.com/acme/x" },
	{ "https://github.com./acme/x", "github.com/acme/x" },
	{ "https://github.com/acme/.git", "github.com/acme/.git" },
	{ "https://github.com/acme/../evil/x", NULL },
	{ "https://github.com/acme/./x", NULL },
	{ "https://github.com//acme/x", NULL },
	{ "https://github.com/acme//x", NULL },
	{ "https://github.com/ac%6De/x", NULL },
	{ "https://github.com/acme/x?y", NULL },
	{ "https://github.com/acme/x#y", NULL },
	{ "https://github.com\\@evil.com/acme/x", NULL },
	{ "https://github.com", NULL },
	{ "https://github.com/", NULL },
	{ "https://[::1]/acme/x", NULL },
	{ "file:///srv/acme/x", NULL },
	{ "/srv/git/x.git", NULL },
	{ "./a:b", NULL },
	{ "ext::sh -c touch", NULL },
	{ "ext::x", NULL },
	{ "fd::3", NULL },
	{ "-oProxyCommand=x:acme/x", NULL },
	{ "https://gith_ub.com/acme/x", NULL },
	{ "ftp://github.com/acme/x", NULL },
	{ "", NULL },
	{ "https://github.com/acme/x\n", NULL },
	{ "ssh:/@igGt/`itHub.com:22/ak", NULL },
	{ "s...............:mo.ct/", NULL },
	{ "gi:acme/..git", NULL },
	{ "https://github.com/acme/...git", NULL },
	{ "https://github.com/acme/....git", "github.com/acme/..." },
	{ "https://github..com/acme/x", NULL },
	{ "https://github.com../acme/x", NULL },
	{ "https://github.com/acme/x@evil", NULL },
	{ "git@github.com:acme/x:y", NULL },
	{ "https://github.com/acme/x'y", NULL },
};

TEST(url_normalisation)
{
	for (size_t i = 0; i < ELEMENTSOF(url_cases); i++) {
		char buf[POLICY_MAX_URL];
		int r = policy_normalise_url(url_cases[i].url, buf, sizeof(buf));

		if (url_cases[i].want) {
			if (r < 0 || strcmp(buf, url_cases[i].want) != 0) {
				printf("#   '%s' -> %d '%s', want '%s'\n", url_cases[i].url, r,
				       r < 0 ? "" : buf, url_cases[i].want);
				EXPECT_TRUE(false);
			}
		} else if (r >= 0) {
			printf("#   '%s' normalised to '%s', want refusal\n", url_cases[i].url, buf);
			EXPECT_TRUE(false);
		}
	}
}

TEST(url_normalisation_buffer_too_small)
{
	char buf[8];

	EXPECT_ERR(policy_normalise_url("https://github.com/acme/x", buf, sizeof(buf)),
		   ENAMETOOLONG);
}

TEST(grammar_git_is_the_relays_operation_only)
{
	/* git requests are the relay's {"git", OP}: no option is known any
	 * more (they guarded host git, which is gone). */
	const char *op[] = { "git", "push", NULL };
	const char *opt[] = { "git", "-c", "x=y", "push", NULL };
	struct toolgrammar_parse gp;

	ASSERT_OK(toolgrammar_parse("git", op, 2, &gp));
	ASSERT_TRUE(gp.has_grammar);
	ASSERT_EQ(gp.n_words, 1);
	EXPECT_STREQ(gp.words[0].word, "push");
	EXPECT_EQ(gp.n_flags, 0);
	toolgrammar_parse_done(&gp);
	ASSERT_OK(toolgrammar_parse("git", opt, 4, &gp));
	ASSERT_EQ(gp.n_flags, 1);
	EXPECT_FALSE(gp.flags[0].known);
	EXPECT_TRUE(gp.refused == NULL);
	toolgrammar_parse_done(&gp);
}

TEST(grammar_unknown_options_make_later_words_uncertain)
{
	const char *argv[] = { "gh", "pr", "--title", "list", "create", NULL };
	struct toolgrammar_parse gp;

	ASSERT_OK(toolgrammar_parse("gh", argv, 5, &gp));
	ASSERT_EQ(gp.n_words, 3);
	EXPECT_FALSE(gp.words[0].uncertain);
	EXPECT_TRUE(gp.words[1].uncertain);
	EXPECT_TRUE(gp.words[2].uncertain);
	EXPECT_FALSE(gp.flags[0].known);
	EXPECT_STREQ(gp.flags[0].name, "--title");
	toolgrammar_parse_done(&gp);
}

TEST(grammar_no_grammar_and_limits)
{
	const char *argv[] = { "mytool", "-x", NULL };
	const char *empty[] = { "git", "", NULL };
	struct toolgrammar_parse gp;

	ASSERT_OK(toolgrammar_parse("mytool", argv, 2, &gp));
	EXPECT_FALSE(gp.has_grammar);
	toolgrammar_parse_done(&gp);
	ASSERT_OK(toolgrammar_parse("git", empty, 2, &gp));
	EXPECT_EQ(gp.n_words, 1);
	toolgrammar_parse_done(&gp);
	ASSERT_OK(toolgrammar_parse("git", argv, TOOLGRAMMAR_MAX_ARGS + 1, &gp));
	EXPECT_TRUE(gp.error != NULL);
	toolgrammar_parse_done(&gp);
}

TEST(evaluate_refuses_empty_request)
{
	struct policy *p = parse_ok("allow git\n");
	struct authz_request req = { .tool = "git" };
	struct policy_verdict v;

	ASSERT_NOT_NULL(p);
	EXPECT_ERR(policy_evaluate(p, &req, &v), EINVAL);
	EXPECT_EQ(v.verdict, AUTHZ_DENY);
	policy_free(p);
}

/* git relay requests, as execd/gitrelay.c builds them, against the shipped
 * example: ls-remote/fetch from the forges, pushes to acme branches only,
 * never forced, deleting, non-fast-forward or to the default branch. */
static enum authz_verdict decide_git(const struct policy *p, const char *op, const char *url,
				     const struct authz_git_update *ups, size_t n,
				     struct policy_verdict *v)
{
	const char *argv[] = { "git", op, NULL };
	struct authz_git g = { .op = op, .url = url, .updates = ups, .n_updates = n };
	struct authz_request req = { .request_id = "t", .tool = "git", .argv = argv, .argc = 2,
				     .destination = url, .git = &g };

	if (policy_evaluate(p, &req, v) < 0)
		return AUTHZ_VERDICT_MAX;
	return v->verdict;
}

TEST(example_policy_git_relay)
{
	struct policy *p = load_example();
	struct policy_verdict v;
	const struct authz_git_update ok = { .src = "a", .dst = "refs/heads/feature", .ff = true };
	const struct authz_git_update force = { .src = "a", .dst = "refs/heads/feature", .force = true,
						.ff = false };
	const struct authz_git_update nonff = { .src = "a", .dst = "refs/heads/feature", .ff = false };
	const struct authz_git_update del = { .src = "", .dst = "refs/heads/feature",
					      .delete_ref = true, .ff = false };
	const struct authz_git_update dflt = { .src = "a", .dst = "refs/heads/main", .ff = true,
					       .is_default = true };
	const struct authz_git_update tag = { .src = "a", .dst = "refs/tags/v1", .ff = true };
	const struct authz_git_update two[] = { ok, dflt };
	const char *W = "https://github.com/acme/widget.git";

	ASSERT_NOT_NULL(p);
	EXPECT_EQ(decide_git(p, "ls-remote", "https://github.com/any/thing", NULL, 0, &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_git(p, "fetch", "git@gitlab.com:x/y.git", NULL, 0, &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_git(p, "fetch", "https://evil.example/x/y", NULL, 0, &v), AUTHZ_DENY);
	EXPECT_EQ(decide_git(p, "fetch", "https://github.com/a/b/c", NULL, 0, &v), AUTHZ_DENY);
	EXPECT_EQ(decide_git(p, "push", W, &ok, 1, &v), AUTHZ_ALLOW);
	EXPECT_TRUE(strstr(v.reason, "acme") != NULL);
	EXPECT_EQ(decide_git(p, "push", "ssh://git@github.com/acme/tools", &ok, 1, &v), AUTHZ_ALLOW);
	EXPECT_EQ(decide_git(p, "push", "https://github.com/acme/other", &ok, 1, &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "default deny") != NULL);
	EXPECT_EQ(decide_git(p, "push", W, &force, 1, &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "force") != NULL);
	EXPECT_EQ(decide_git(p, "push", W, &nonff, 1, &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "fast-forward") != NULL);
	EXPECT_EQ(decide_git(p, "push", W, &del, 1, &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "deleting") != NULL);
	EXPECT_EQ(decide_git(p, "push", W, &dflt, 1, &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "default branch") != NULL);
	EXPECT_EQ(decide_git(p, "push", W, &tag, 1, &v), AUTHZ_DENY);
	/* every update must be allowed; the denial names its ref */
	EXPECT_EQ(decide_git(p, "push", W, two, 2, &v), AUTHZ_DENY);
	EXPECT_TRUE(strstr(v.reason, "refs/heads/main: ") == v.reason);
	EXPECT_EQ(decide_git(p, "push", W, two, 1, &v), AUTHZ_ALLOW);
	/* a push with no update (list for-push is ls-remote) matches no ref= rule */
	EXPECT_EQ(decide_git(p, "push", W, NULL, 0, &v), AUTHZ_DENY);
	policy_free(p);
}

TEST(git_update_conditions_parse)
{
	static const char *const bad[] = {
		"allow kubectl get ref=refs/heads/*\n", "allow git push force=maybe\n",
		"allow git push ff=yes,no\n",          "allow git push ref=main\n",
		"allow git push default=\n",
	};
	struct policy *p = NULL;
	struct policy_error e;

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		EXPECT_ERR(policy_parse(bad[i], strlen(bad[i]), &p, &e), EINVAL);
		EXPECT_TRUE(p == NULL);
	}
	p = parse_ok("allow git push ref=refs/heads/* force=no delete=no ff=yes default=no\n");
	ASSERT_NOT_NULL(p);
	policy_free(p);
}
