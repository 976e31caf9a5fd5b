/* SPDX-License-Identifier: MIT */
/* authz_decision_add_env / _clear: which names a backend may set, limits,
 * and that clearing wipes and frees. */
#include <errno.h>
#include <string.h>

#include "authz.h"
#include "macros.h"
#include "tap.h"

static const char *const accepted[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
	"GH_TOKEN", "GITHUB_TOKEN", "GH_REPO", "PGPASSWORD", "VAULT_TOKEN", "_X", "a1",
	"ld_preload", "HTTPS_PROXY", "TF_VAR_region", "TF_TOKEN_app_terraform_io",
	"GOOGLE_OAUTH_ACCESS_TOKEN",
};

static const char *const refused[] = {
	/* not identifiers */
	"", "1X", "A-B", "A=B", "A B", "Ä", "A.B",
	/* loader and libc */
	"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_", "GCONV_PATH", "GLIBC_TUNABLES",
	"MALLOC_TRACE", "LOCPATH", "NLSPATH", "HOSTALIASES", "RES_OPTIONS", "TMPDIR",
	"DYLD_INSERT_LIBRARIES",
	/* shells */
	"BASH_ENV", "ENV", "SHELLOPTS", "PS4", "PROMPT_COMMAND", "IFS", "BASH_FUNC_x", "SHELL",
	/* where tools find programs and configuration */
	"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "KUBECONFIG", "AWS_CONFIG_FILE",
	"AWS_SHARED_CREDENTIALS_FILE", "PSQLRC", "OPENSSL_CONF",
	/* git */
	"GIT_SSH_COMMAND", "GIT_SSH", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_DIR",
	"GIT_EXEC_PATH", "GIT_ASKPASS",
	/* programs tools start, arguments after the policy */
	"EDITOR", "VISUAL", "PAGER", "GH_EDITOR", "GH_PAGER", "GH_BROWSER", "KUBE_EDITOR",
	"PSQL_PAGER", "SSH_ASKPASS", "LESSOPEN", "TF_CLI_ARGS", "TF_CLI_ARGS_apply",
	"TF_CLI_CONFIG_FILE", "TF_PLUGIN_CACHE_DIR", "KUBECTL_EXTERNAL_DIFF",
	/* interpreters */
	"PYTHONPATH", "PYTHONSTARTUP", "PERL5OPT", "PERLLIB", "RUBYOPT", "NODE_OPTIONS",
	"JAVA_TOOL_OPTIONS", "ZDOTDIR", "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", "CLOUDSDK_PYTHON",
	/* psql's target, judged and audited from the command */
	"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE", "PGPASSFILE",
	"PGSERVICEFILE", "PGSYSCONFDIR", "PGCLUSTER", "PG_CLUSTER_CONF_ROOT", "PGSSLROOTCERT",
	"PGSSLCERT", "PGSSLKEY", "PGSSLCRL", "PGSSLCRLDIR",
};

TEST(accepts_credentials)
{
	struct authz_decision d = { 0 };

	for (size_t i = 0; i < ELEMENTSOF(accepted); i++) {
		int r = authz_decision_add_env(&d, accepted[i], "v");

		if (r < 0)
			printf("#   '%s' refused: %d\n", accepted[i], r);
		EXPECT_OK(r);
	}
	EXPECT_EQ(d.n_env, ELEMENTSOF(accepted));
	EXPECT_STREQ(d.env[0], "AWS_ACCESS_KEY_ID=v");
	authz_decision_clear(&d);
	EXPECT_EQ(d.n_env, 0);
	EXPECT_TRUE(d.env[0] == NULL);
}

TEST(refuses_dangerous_names)
{
	struct authz_decision d = { 0 };

	for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
		int r = authz_decision_add_env(&d, refused[i], "x");

		if (r != -EINVAL)
			printf("#   '%s' accepted: %d\n", refused[i], r);
		EXPECT_ERR(r, EINVAL);
	}
	EXPECT_EQ(d.n_env, 0);
}

TEST(refuses_duplicates_and_null)
{
	struct authz_decision d = { 0 };

	ASSERT_OK(authz_decision_add_env(&d, "GH_TOKEN", "a"));
	EXPECT_ERR(authz_decision_add_env(&d, "GH_TOKEN", "b"), EINVAL);
	EXPECT_OK(authz_decision_add_env(&d, "GH_TOKEN2", "b"));
	EXPECT_OK(authz_decision_add_env(&d, "GH", "c"));
	EXPECT_ERR(authz_decision_add_env(&d, NULL, "b"), EINVAL);
	EXPECT_ERR(authz_decision_add_env(&d, "X", NULL), EINVAL);
	EXPECT_EQ(d.n_env, 3);
	authz_decision_clear(&d);
}

TEST(values_may_hold_anything_but_length_is_capped)
{
	struct authz_decision d = { 0 };
	static char v[AUTHZ_MAX_ENV_LEN];

	EXPECT_OK(authz_decision_add_env(&d, "A", "with=equals and spaces\nand newline"));
	EXPECT_OK(authz_decision_add_env(&d, "E", ""));
	memset(v, 'x', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	EXPECT_ERR(authz_decision_add_env(&d, "B", v), E2BIG);
	v[AUTHZ_MAX_ENV_LEN - 3] = '\0'; /* "B=" + value + NUL fits exactly */
	EXPECT_OK(authz_decision_add_env(&d, "B", v));
	EXPECT_EQ(d.n_env, 3);
	authz_decision_clear(&d);
}

TEST(table_is_capped)
{
	struct authz_decision d = { 0 };
	char name[16];

	for (unsigned i = 0; i < AUTHZ_MAX_ENV; i++) {
		snprintf(name, sizeof(name), "V%u", i);
		ASSERT_OK(authz_decision_add_env(&d, name, "x"));
	}
	EXPECT_ERR(authz_decision_add_env(&d, "ONE_MORE", "x"), E2BIG);
	EXPECT_EQ(d.n_env, AUTHZ_MAX_ENV);
	authz_decision_clear(&d);
	EXPECT_EQ(d.n_env, 0);
}

TEST(clear_resets_to_denial)
{
	struct authz_decision d = { 0 };

	d.verdict = AUTHZ_ALLOW;
	strcpy(d.reason, "r");
	strcpy(d.rule, "x");
	authz_decision_clear(&d);
	EXPECT_EQ(d.verdict, AUTHZ_DENY);
	EXPECT_STREQ(d.reason, "");
	EXPECT_STREQ(d.rule, "");
	authz_decision_clear(&d); /* twice is fine */
}
