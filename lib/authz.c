/* SPDX-License-Identifier: MIT */
/* Authorization decisions: the extra environment a backend may hand to one
 * execution (short-lived credentials such as AWS_SESSION_TOKEN or GH_TOKEN),
 * validated here so that no backend, however it is written or wherever its
 * answer comes from, can turn "environment" into "code execution on the
 * host" or into arguments the policy never saw. */
#include "authz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"

/* Exact names a backend may never set, and why:
 *  - the glibc loader/libc "unsecure" set (what ld.so strips for setuid
 *    programs): each makes libc load code or data from a chosen path;
 *  - shell start-up and parsing hooks (bash runs BASH_ENV/ENV, PS4 and
 *    PROMPT_COMMAND are evaluated): tools and their helpers spawn shells;
 *  - PATH, HOME and the XDG configuration roots: they choose which binary
 *    runs and which configuration file (with hooks, aliases, credential
 *    helpers) a tool reads;
 *  - programs tools run on our behalf (editors, pagers, browsers, askpass,
 *    less pre-processors);
 *  - configuration files that can name programs: kubeconfig (exec credential
 *    plugins), AWS config/credentials (credential_process), psqlrc (\!),
 *    OpenSSL config (engines/providers are shared objects), zsh's ZDOTDIR;
 *  - switches that let credential files run programs or choose the
 *    interpreter (Google executable-sourced credentials, gcloud's Python);
 *  - libpq's connection target (PGHOST, PGHOSTADDR, PGPORT, PGDATABASE,
 *    PGUSER, PGSERVICE, PGPASSFILE): psql would connect elsewhere than the
 *    host, port, database and user the policy judged and the audit log
 *    records (lib/psqltarget.h); the files libpq reads in their place
 *    (PGSSLCERT, PGSSLKEY, PGSSLROOTCERT, PGSSLCRL, PGSSLCRLDIR, like the
 *    conninfo keywords psqltarget refuses); postgresql-common's PGCLUSTER
 *    and PG_CLUSTER_CONF_ROOT, which pg_wrapper turns into PGHOST/PGPORT
 *    (the daemon refuses pg_wrapper as the psql tool; refused here too in
 *    case another tool runs a postgresql-common client). PGPASSWORD stays
 *    allowed: a credential. */
static const char *const refused_names[] = {
	"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN",
	"LOCPATH", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR",
	"TZDIR",
	"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH",
	"SHELL",
	"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_DATA_DIRS",
	"EDITOR", "VISUAL", "PAGER", "MANPAGER", "BROWSER", "LESSOPEN", "LESSCLOSE",
	"KUBECONFIG", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_DATA_PATH",
	"PSQLRC", "PGSERVICEFILE", "PGSYSCONFDIR", "OPENSSL_CONF", "OPENSSL_ENGINES",
	"OPENSSL_MODULES", "PERLLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
	"JDK_JAVA_OPTIONS", "ZDOTDIR",
	"GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES", "CLOUDSDK_PYTHON",
	"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE", "PGPASSFILE",
	"PGSSLCERT", "PGSSLKEY", "PGSSLROOTCERT", "PGSSLCRL", "PGSSLCRLDIR", "PGCLUSTER",
	"PG_CLUSTER_CONF_ROOT",
};

/* Name prefixes a backend may never set:
 *  - LD_ and MALLOC_: dynamic loader and libc malloc hooks (LD_PRELOAD, ...);
 *    DYLD_ for the same on other systems, harmless to refuse here;
 *  - GIT_: git's environment can set any configuration (GIT_CONFIG_COUNT,
 *    GIT_CONFIG_PARAMETERS), the ssh program (GIT_SSH_COMMAND), the exec path,
 *    the repository (GIT_DIR) — code execution and a different target than
 *    the one the policy judged;
 *  - BASH_FUNC_: exported shell functions;
 *  - interpreter start-up (aws is Python): PYTHON*, PERL5*, RUBY*, NODE_;
 *  - TF_CLI_ (TF_CLI_ARGS_apply=-destroy adds arguments after the policy
 *    decided; TF_CLI_CONFIG_FILE can install provider binaries), TF_PLUGIN_;
 *  - KUBECTL_ (KUBECTL_EXTERNAL_DIFF runs a program). */
static const char *const refused_prefixes[] = {
	"LD_", "MALLOC_", "DYLD_", "GIT_", "BASH_FUNC_", "PYTHON", "PERL5", "RUBY", "NODE_",
	"TF_CLI_", "TF_PLUGIN_", "KUBECTL_",
};

/* Name suffixes: programs a tool starts (GH_EDITOR, GH_PAGER, GH_BROWSER,
 * PSQL_PAGER, KUBE_EDITOR, SSH_ASKPASS, SUDO_ASKPASS, ...). */
static const char *const refused_suffixes[] = {
	"_EDITOR", "_PAGER", "_BROWSER", "_ASKPASS",
};

static bool name_is_identifier(const char *name)
{
	if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') ||
	      name[0] == '_'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* Names are compared case-sensitively, as the kernel and libc do: "ld_preload"
 * is a different (harmless) variable from LD_PRELOAD. */
static bool name_is_refused(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < ELEMENTSOF(refused_names); i++)
		if (strcmp(name, refused_names[i]) == 0)
			return true;
	for (size_t i = 0; i < ELEMENTSOF(refused_prefixes); i++)
		if (strncmp(name, refused_prefixes[i], strlen(refused_prefixes[i])) == 0)
			return true;
	for (size_t i = 0; i < ELEMENTSOF(refused_suffixes); i++) {
		size_t sl = strlen(refused_suffixes[i]);

		if (len >= sl && strcmp(name + len - sl, refused_suffixes[i]) == 0)
			return true;
	}
	return false;
}

void authz_decision_clear(struct authz_decision *d)
{
	for (size_t i = 0; i < d->n_env && i < AUTHZ_MAX_ENV; i++) {
		if (d->env[i]) {
			explicit_bzero(d->env[i], strlen(d->env[i]));
			free(d->env[i]);
		}
		d->env[i] = NULL;
	}
	d->n_env = 0;
	d->verdict = AUTHZ_DENY;
	d->reason[0] = '\0';
	d->rule[0] = '\0';
}

/* Appends "NAME=value" to d->env after validating NAME (portable identifier,
 * not refused above, not already present). The value is copied verbatim; it
 * cannot hold a NUL. The copy is wiped on clear. -EINVAL for a bad or
 * refused or duplicate name, -E2BIG when the table is full or the pair is too
 * long, -ENOMEM. d is unchanged on failure. */
int authz_decision_add_env(struct authz_decision *d, const char *name, const char *value)
{
	size_t nl, vl;
	char *s;

	if (!d || !name || !value || !name_is_identifier(name) || name_is_refused(name))
		return -EINVAL;
	nl = strlen(name);
	vl = strlen(value);
	for (size_t i = 0; i < d->n_env; i++)
		if (strncmp(d->env[i], name, nl) == 0 && d->env[i][nl] == '=')
			return -EINVAL;
	if (d->n_env >= AUTHZ_MAX_ENV)
		return -E2BIG;
	if (nl + 1 + vl + 1 > AUTHZ_MAX_ENV_LEN)
		return -E2BIG;
	s = malloc(nl + 1 + vl + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, name, nl);
	s[nl] = '=';
	memcpy(s + nl + 1, value, vl + 1);
	d->env[d->n_env++] = s;
	return 0;
}
