/* SPDX-License-Identifier: MIT */
/* Request and decision JSON: the request document round-trips through
 * json-c with the parsed view and no credential; decisions are parsed
 * strictly, every malformed answer is an error and leaves a denial. */
#include <errno.h>
#include <json.h>
#include <string.h>

#include "authz_git.h"
#include "psqltarget.h"
#include "authzjson.h"
#include "macros.h"
#include "tap.h"

static struct json_object *encode(const struct authz_request *req)
{
	char *s = NULL;
	size_t len = 0;
	struct json_object *o;

	if (authzjson_encode_request(req, &s, &len) < 0)
		return NULL;
	if (strlen(s) != len)
		return NULL;
	o = json_tokener_parse(s);
	free(s);
	return o;
}

static const char *get_s(struct json_object *o, const char *path1, const char *path2)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, path1, &v))
		return NULL;
	if (path2 && !json_object_object_get_ex(v, path2, &v))
		return NULL;
	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

TEST(request_carries_the_parsed_view)
{
	const char *argv[] = { "kubectl", "-n", "sub", "delete", "-A", "pod", "x", NULL };
	struct authz_request req = {
		.request_id = "id-1", .tool = "kubectl", .argv = argv, .argc = 7,
		.container_cwd = "/workspace/sub", .host_cwd = "/home/u/p/sub",
		.destination = "https://user:ghp_SECRET@github.com/acme/x.git",
		.reason = "ship \"it\"\n", .repo = "acme/x", .branch = "main",
		.peer_uid = 1000, .peer_gid = 1001, .peer_pid = 4242,
	};
	struct json_object *o = encode(&req), *v, *f;
	char *text = NULL;

	ASSERT_NOT_NULL(o);
	EXPECT_STREQ(get_s(o, "request_id", NULL), "id-1");
	EXPECT_STREQ(get_s(o, "tool", NULL), "kubectl");
	ASSERT_TRUE(json_object_object_get_ex(o, "argv", &v));
	ASSERT_EQ(json_object_array_length(v), 7);
	EXPECT_STREQ(json_object_get_string(json_object_array_get_idx(v, 6)), "x");
	ASSERT_TRUE(json_object_object_get_ex(o, "subcommand", &v));
	ASSERT_EQ(json_object_array_length(v), 1);
	EXPECT_STREQ(json_object_get_string(json_object_array_get_idx(v, 0)), "delete");
	ASSERT_TRUE(json_object_object_get_ex(o, "operands", &v));
	ASSERT_EQ(json_object_array_length(v), 2);
	ASSERT_TRUE(json_object_object_get_ex(o, "flags", &v));
	ASSERT_EQ(json_object_array_length(v), 2);
	f = json_object_array_get_idx(v, 1);
	EXPECT_STREQ(get_s(f, "name", NULL), "--all-namespaces");
	EXPECT_STREQ(get_s(f, "written", NULL), "-A");
	EXPECT_STREQ(get_s(json_object_array_get_idx(v, 0), "value", NULL), "sub");
	ASSERT_TRUE(json_object_object_get_ex(o, "parse", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "complete", &f));
	EXPECT_TRUE(json_object_get_boolean(f));
	EXPECT_STREQ(get_s(o, "cwd", "container"), "/workspace/sub");
	EXPECT_STREQ(get_s(o, "cwd", "host"), "/home/u/p/sub");
	/* the userinfo (a token) never leaves the daemon */
	EXPECT_STREQ(get_s(o, "destination", NULL), "https://github.com/acme/x.git");
	EXPECT_STREQ(get_s(o, "destination_normalised", NULL), "github.com/acme/x");
	EXPECT_STREQ(get_s(o, "reason", NULL), "ship \"it\"\n");
	EXPECT_STREQ(get_s(o, "repo", NULL), "acme/x");
	ASSERT_TRUE(json_object_object_get_ex(o, "peer", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "pid", &f));
	EXPECT_EQ(json_object_get_int64(f), 4242);
	json_object_put(o);
	ASSERT_OK(authzjson_encode_request(&req, &text, NULL));
	EXPECT_TRUE(strstr(text, "ghp_SECRET") == NULL);
	free(text);
}

TEST(request_absent_fields_are_null_and_unknown_tools_incomplete)
{
	const char *argv[] = { "mytool", "--x", NULL };
	struct authz_request req = { .tool = "mytool", .argv = argv, .argc = 2 };
	struct json_object *o = encode(&req), *v, *c;

	ASSERT_NOT_NULL(o);
	ASSERT_TRUE(json_object_object_get_ex(o, "destination", &v));
	EXPECT_TRUE(v == NULL);
	ASSERT_TRUE(json_object_object_get_ex(o, "reason", &v));
	EXPECT_TRUE(v == NULL);
	ASSERT_TRUE(json_object_object_get_ex(o, "parse", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "complete", &c));
	EXPECT_FALSE(json_object_get_boolean(c));
	EXPECT_STREQ(get_s(o, "parse", "problem"), "no argument grammar for this tool");
	json_object_put(o);
}

TEST(request_refuses_empty)
{
	struct authz_request req = { .tool = "git" };
	char *s = NULL;

	EXPECT_ERR(authzjson_encode_request(&req, &s, NULL), EINVAL);
	EXPECT_TRUE(s == NULL);
}

static int parse(const char *text, struct authzjson_answer *a, struct authz_decision *d)
{
	const char *why = NULL;
	int r = authzjson_parse_decision(text, strlen(text), a, d, &why);

	if (r < 0 && !why)
		printf("#   no reason for error %d\n", r);
	return r;
}

TEST(decision_approved_with_env)
{
	struct authzjson_answer a;
	struct authz_decision d = { 0 };

	ASSERT_OK(parse(" {\"decision\":\"approved\",\"reason\":\"ok\",\"env\":{\"GH_TOKEN\":\"t\","
			"\"AWS_SESSION_TOKEN\":\"s\"}}\n",
			&a, &d));
	EXPECT_EQ(a.state, AUTHZJSON_APPROVED);
	EXPECT_EQ(d.verdict, AUTHZ_ALLOW);
	EXPECT_STREQ(d.reason, "ok");
	ASSERT_EQ(d.n_env, 2);
	EXPECT_STREQ(d.env[0], "GH_TOKEN=t");
	authz_decision_clear(&d);
}

TEST(decision_denied_and_pending)
{
	struct authzjson_answer a;
	struct authz_decision d = { 0 };

	ASSERT_OK(parse("{\"decision\":\"denied\",\"reason\":\"no\"}", &a, &d));
	EXPECT_EQ(a.state, AUTHZJSON_DENIED);
	EXPECT_EQ(d.verdict, AUTHZ_DENY);
	EXPECT_STREQ(d.reason, "no");
	ASSERT_OK(parse("{\"decision\":\"pending\",\"id\":\"req-1.a_b~c\"}", &a, &d));
	EXPECT_EQ(a.state, AUTHZJSON_PENDING);
	EXPECT_EQ(d.verdict, AUTHZ_DENY);
	EXPECT_STREQ(a.id, "req-1.a_b~c");
}

static const char *const malformed[] = {
	"",
	" ",
	"null",
	"[]",
	"\"approved\"",
	"{}",
	"{\"decision\":\"yes\"}",
	"{\"decision\":\"Approved\"}",
	"{\"decision\":true}",
	"{\"decision\":\"approved\"",
	"{\"decision\":\"approved\"}x",
	"{\"decision\":\"approved\"}{}",
	"{\"decision\":\"approved\",\"admin\":true}",
	"{\"decision\":\"approved\",\"reason\":5}",
	"{\"decision\":\"approved\",\"reason\":\"a\\u0000b\"}",
	"{\"decision\":\"approved\",\"reason\":\"line\\nbreak\"}",
	"{\"decision\":\"pending\"}",
	"{\"decision\":\"pending\",\"id\":\"\"}",
	"{\"decision\":\"pending\",\"id\":\"..\"}",
	"{\"decision\":\"pending\",\"id\":\"a/b\"}",
	"{\"decision\":\"pending\",\"id\":\"a b\"}",
	"{\"decision\":\"pending\",\"id\":7}",
	"{\"decision\":\"denied\",\"env\":{\"GH_TOKEN\":\"x\"}}",
	"{\"decision\":\"pending\",\"id\":\"x\",\"env\":{}}",
	"{\"decision\":\"approved\",\"env\":[]}",
	"{\"decision\":\"approved\",\"env\":{\"LD_PRELOAD\":\"/x.so\"}}",
	"{\"decision\":\"approved\",\"env\":{\"GIT_SSH_COMMAND\":\"sh\"}}",
	"{\"decision\":\"approved\",\"env\":{\"BAD NAME\":\"x\"}}",
	"{\"decision\":\"approved\",\"env\":{\"A\":1}}",
	"{\"decision\":\"approved\",\"env\":{\"A\":\"a\\u0000b\"}}",
	"{'decision':'approved'}",
	"{\"decision\":\"approved\",}",
	"{\"decision\":\"appr\xff\"}",
	"/* c */{\"decision\":\"approved\"}",
};

TEST(decision_malformed_is_an_error_and_a_denial)
{
	for (size_t i = 0; i < ELEMENTSOF(malformed); i++) {
		struct authzjson_answer a;
		struct authz_decision d = { 0 };
		int r;

		d.verdict = AUTHZ_ALLOW;
		r = parse(malformed[i], &a, &d);
		if (r != -EBADMSG)
			printf("#   accepted (%d): %s\n", r, malformed[i]);
		EXPECT_ERR(r, EBADMSG);
		EXPECT_EQ(d.verdict, AUTHZ_DENY);
		EXPECT_EQ(d.n_env, 0);
	}
}

TEST(decision_limits)
{
	size_t n = AUTHZJSON_MAX_DECISION + 64;
	char *big = malloc(n);
	struct authzjson_answer a;
	struct authz_decision d = { 0 };
	const char *why = NULL;
	char reason[AUTHZ_MAX_REASON + 64];

	ASSERT_NOT_NULL(big);
	memset(big, ' ', n);
	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result): blank padding follows */
	memcpy(big, "{\"decision\":\"approved\"}", 23);
	EXPECT_ERR(authzjson_parse_decision(big, n, &a, &d, &why), EBADMSG);
	free(big);
	EXPECT_ERR(authzjson_parse_decision("{\"decision\":\"approved\"}\0", 24, &a, &d, &why),
		   EBADMSG);
	memset(reason, 'r', sizeof(reason));
	(void)snprintf(reason, sizeof(reason), "{\"decision\":\"denied\",\"reason\":\"%0*d\"}",
		       AUTHZ_MAX_REASON, 0);
	EXPECT_ERR(parse(reason, &a, &d), EBADMSG);
}

/* json-c keeps the last of two equal keys: a "denied" a human saw first
 * must not turn into an approval. Compared after unescaping. */
TEST(decision_duplicate_keys_are_refused)
{
	static const char *const dup[] = {
		"{\"decision\":\"denied\",\"decision\":\"approved\"}",
		"{\"decision\":\"denied\",\"\\u0064ecision\":\"approved\"}",
		"{\"decision\":\"approved\",\"reason\":\"a\",\"reason\":\"b\"}",
		"{\"decision\":\"approved\",\"env\":{\"GH_TOKEN\":\"a\",\"GH_TOKEN\":\"b\"}}",
		"{\"decision\":\"approved\",\"env\":{\"A\":\"a\",\"\\u0041\":\"b\"}}",
	};
	static const char *const fine[] = {
		"{\"decision\":\"approved\",\"env\":{\"decision\":\"x\"}}",
		"{\"decision\":\"approved\",\"reason\":\"{\\\"decision\\\":1,\\\"decision\\\":2}\"}",
		"{\"decision\":\"denied\",\"reason\":\"\\ud83d\\ude00 \\\\ \\\" ,\"}",
	};

	for (size_t i = 0; i < ELEMENTSOF(dup); i++) {
		struct authzjson_answer a;
		struct authz_decision d = { 0 };
		const char *why = NULL;

		d.verdict = AUTHZ_ALLOW;
		EXPECT_ERR(authzjson_parse_decision(dup[i], strlen(dup[i]), &a, &d, &why), EBADMSG);
		EXPECT_EQ(d.verdict, AUTHZ_DENY);
		EXPECT_TRUE(why && strstr(why, "duplicate") != NULL);
		EXPECT_EQ(d.n_env, 0);
	}
	for (size_t i = 0; i < ELEMENTSOF(fine); i++) {
		struct authzjson_answer a;
		struct authz_decision d = { 0 };

		EXPECT_OK(parse(fine[i], &a, &d));
		authz_decision_clear(&d);
	}
	EXPECT_EQ(authzjson_check_duplicate_keys("{\"a\":[{\"b\":1},{\"b\":2}]}", 23), 0);
	EXPECT_EQ(authzjson_check_duplicate_keys("{\"a\":{\"b\":1,\"b\":2}}", 19), -EEXIST);
}

TEST(request_carries_the_git_relay_fields)
{
	const char *argv[] = { "git", "push", NULL };
	const struct authz_git_update ups[] = {
		{ .src = "0123456789abcdef0123456789abcdef01234567", .dst = "refs/heads/x", .old = "",
		  .ff = true },
		{ .src = "", .dst = "refs/heads/y", .old = "89abcdef0123456789abcdef0123456789abcdef",
		  .delete_ref = true },
	};
	const struct authz_git g = { .op = "push", .url = "https://github.com/acme/x.git",
				     .updates = ups, .n_updates = 2 };
	struct authz_request req = { .tool = "git", .argv = argv, .argc = 2,
				     .destination = g.url, .git = &g };
	struct json_object *o = encode(&req), *gj, *u, *b;

	ASSERT_NOT_NULL(o);
	ASSERT_TRUE(json_object_object_get_ex(o, "git", &gj));
	EXPECT_STREQ(get_s(gj, "op", NULL), "push");
	EXPECT_STREQ(get_s(gj, "url", NULL), "https://github.com/acme/x.git");
	ASSERT_TRUE(json_object_object_get_ex(gj, "updates", &u));
	ASSERT_EQ(json_object_array_length(u), 2);
	EXPECT_STREQ(get_s(json_object_array_get_idx(u, 0), "dst", NULL), "refs/heads/x");
	ASSERT_TRUE(json_object_object_get_ex(json_object_array_get_idx(u, 0), "ff", &b));
	EXPECT_TRUE(json_object_get_boolean(b));
	ASSERT_TRUE(json_object_object_get_ex(json_object_array_get_idx(u, 1), "delete", &b));
	EXPECT_TRUE(json_object_get_boolean(b));
	json_object_put(o);
}

TEST(request_carries_the_psql_target)
{
	const char *argv[] = { "psql", "-h", "db.internal", "app", NULL };
	struct psqltarget t = { 0 };
	struct authz_request req = { .tool = "psql", .argv = argv, .argc = 4, .psql = &t };
	struct json_object *o, *pj, *v;

	ASSERT_OK(psqltarget_set(&t, PSQLTARGET_HOST, "db.internal", 11, NULL));
	ASSERT_OK(psqltarget_set(&t, PSQLTARGET_DBNAME, "app", 3, NULL));
	o = encode(&req);
	ASSERT_NOT_NULL(o);
	ASSERT_TRUE(json_object_object_get_ex(o, "psql", &pj));
	EXPECT_STREQ(get_s(pj, "host", NULL), "db.internal");
	EXPECT_STREQ(get_s(pj, "dbname", NULL), "app");
	/* not given: null, not "" */
	ASSERT_TRUE(json_object_object_get_ex(pj, "port", &v));
	EXPECT_TRUE(v == NULL);
	ASSERT_TRUE(json_object_object_get_ex(pj, "user", &v));
	EXPECT_TRUE(v == NULL);
	json_object_put(o);
	/* other tools: no psql member */
	req.psql = NULL;
	o = encode(&req);
	ASSERT_NOT_NULL(o);
	EXPECT_FALSE(json_object_object_get_ex(o, "psql", &pj));
	json_object_put(o);
}
