/* SPDX-License-Identifier: MIT */
/* Cost of one static-policy decision: median time of policy_evaluate()
 * (argument grammar, URL normalisation, every rule of execd/policy.example)
 * over a mix of requests, against the baseline it replaces, a prefix match
 * of the joined command string over the same number of rules, both measured
 * in this run. Prints both and their ratio; checks that a decision stays
 * far below the daemon's 2 ms overhead budget.
 *   bench-policy-eval POLICY_FILE [--quick] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"

#define BENCH_MAX_POLICY (1024 * 1024)
#define BENCH_BUDGET_NS 2000000.0 /* the daemon's whole overhead target */
#define N_REQS (sizeof(reqs) / sizeof(reqs[0]))

struct req {
	const char *argv[12];
	const char *dest;
};

static const struct req reqs[] = {
	{ { "git", "status", NULL }, NULL },
	{ { "git", "-C", "sub", "push", "-f", "origin", "main", NULL }, "git@github.com:acme/w.git" },
	{ { "git", "push", "origin", "+main", NULL }, "https://github.com/acme/w.git" },
	{ { "git", "fetch", "--prune", "origin", NULL }, "ssh://git@github.com/acme/w" },
	{ { "git", "log", "--oneline", "-n", "20", NULL }, NULL },
	{ { "gh", "pr", "create", "--title", "x", "--body", "y", NULL }, NULL },
	{ { "kubectl", "-n", "prod", "get", "pods", "-o", "yaml", NULL }, NULL },
	{ { "kubectl", "get", "all,secrets", NULL }, NULL },
	{ { "terraform", "-chdir=infra", "apply", "-destroy", NULL }, NULL },
	{ { "terraform", "plan", "-out", "p", NULL }, NULL },
	{ { "aws", "--region", "eu-west-1", "ec2", "describe-instances", NULL }, NULL },
	{ { "psql", "-c", "select 1", NULL }, NULL },
};

static double now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t argc_of(const struct req *r)
{
	size_t n = 0;

	while (r->argv[n])
		n++;
	return n;
}

/* Baseline: "today's practice" — join argv and compare against allowed
 * prefixes, one per rule. */
static volatile int sink;

static void prefix_policy(const char *const *prefixes, size_t n, const struct req *r)
{
	char joined[1024];
	size_t o = 0;

	for (size_t i = 0; r->argv[i] && o < sizeof(joined) - 1; i++)
		o += (size_t)snprintf(joined + o, sizeof(joined) - o, "%s%s", i ? " " : "",
				      r->argv[i]);
	for (size_t i = 0; i < n; i++)
		if (strncmp(joined, prefixes[i], strlen(prefixes[i])) == 0) {
			sink = (int)i;
			return;
		}
	sink = -1;
}

int main(int argc, char **argv)
{
	static char text[BENCH_MAX_POLICY];
	static const char *const prefixes[] = {
		"git fetch", "git push", "git pull", "git status", "git diff", "git log", "git show",
		"git branch", "git add", "git commit", "git switch", "git checkout", "gh pr create",
		"gh pr view", "gh pr list", "gh issue view", "kubectl get", "kubectl describe",
		"kubectl logs", "terraform init", "terraform plan", "terraform apply",
		"aws sts get-caller-identity", "aws s3 ls",
	};
	bool quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
	size_t rounds = quick ? 200 : 20000, len;
	double *a, *b, med_a, med_b;
	struct policy *p = NULL;
	struct policy_error e;
	const size_t n_reqs = N_REQS;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-policy-eval POLICY_FILE [--quick]\n");
		return 2;
	}
	f = fopen(argv[1], "re");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	len = fread(text, 1, sizeof(text), f);
	fclose(f);
	if (policy_parse(text, len, &p, &e) < 0) {
		fprintf(stderr, "%s:%u:%u: %s\n", argv[1], e.line, e.column, e.message);
		return 2;
	}
	a = calloc(rounds, sizeof(double));
	b = calloc(rounds, sizeof(double));
	if (!a || !b)
		return 2;
	for (size_t k = 0; k < rounds; k++) {
		double t0 = now_ns(), t1, t2;

		for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
			struct authz_request req = { .tool = reqs[i].argv[0], .argv = reqs[i].argv,
						     .argc = argc_of(&reqs[i]),
						     .destination = reqs[i].dest,
						     .host_cwd = "/home/u/src/p" };
			struct policy_verdict v;

			(void)policy_evaluate(p, &req, &v);
			sink = (int)v.verdict;
		}
		t1 = now_ns();
		for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
			prefix_policy(prefixes, sizeof(prefixes) / sizeof(prefixes[0]), &reqs[i]);
		t2 = now_ns();
		a[k] = (t1 - t0) / (double)n_reqs;
		b[k] = (t2 - t1) / (double)n_reqs;
	}
	qsort(a, rounds, sizeof(double), cmp_double);
	qsort(b, rounds, sizeof(double), cmp_double);
	med_a = a[rounds / 2];
	med_b = b[rounds / 2];
	printf("policy_evaluate (%zu rules, parsed request): median %.2f us per decision\n",
	       policy_n_rules(p), med_a / 1000.0);
	printf("baseline, prefix match of the joined string (%zu prefixes): median %.2f us\n",
	       sizeof(prefixes) / sizeof(prefixes[0]), med_b / 1000.0);
	printf("ratio %.1fx the baseline; %.2f%% of the 2 ms overhead budget\n", med_a / med_b,
	       100.0 * med_a / BENCH_BUDGET_NS);
	policy_free(p);
	free(a);
	free(b);
	/* A decision must stay a small part of the budget (5% = 100 us). */
	return med_a < BENCH_BUDGET_NS / 20 ? 0 : 1;
}
