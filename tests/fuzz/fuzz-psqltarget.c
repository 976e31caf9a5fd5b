/* SPDX-License-Identifier: MIT */
/* Fuzz target for lib/psqltarget.c and psql's option reader in
 * lib/toolfiles.c: the input, split at NUL bytes, is a psql argv (the first
 * piece also goes alone to the connection string parser). Whatever is
 * accepted must be a target the policy can trust: every field within its
 * cap, valid UTF-8, no control characters, no host or port list, a port of
 * 1..65535 without leading zeros; a refusal always has a reason; password
 * redaction fits its documented buffer. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "psqltarget.h"
#include "toolfiles.h"
#include "wire.h"

#define FUZZ_MAX_ARGS 16

static void check_field(const char *v, size_t cap, bool is_port)
{
	size_t n = strnlen(v, cap);

	if (n >= cap || !wire_utf8_valid(v, n))
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			abort();
	if (is_port && n > 0) {
		long p = strtol(v, NULL, 10);

		if (v[0] == '0' || strspn(v, "0123456789") != n || p < 1 || p > 65535)
			abort();
	}
}

static void check_target(const struct psqltarget *t)
{
	check_field(t->host, sizeof(t->host), false);
	check_field(t->port, sizeof(t->port), true);
	check_field(t->dbname, sizeof(t->dbname), false);
	check_field(t->user, sizeof(t->user), false);
	if (strchr(t->host, ',') || (t->host[0] == '@'))
		abort();
	if (t->host[0] == '/' && (strstr(t->host, "//") || strstr(t->host, "/../") ||
				  strstr(t->host, "/./")))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct toolfiles_config cfg = { .gh_host = "github.com", .psql_user = "fuzz" };
	char *buf = malloc(size + 1);
	const char *argv[FUZZ_MAX_ARGS + 1] = { "psql" };
	size_t argc = 1;
	struct psqltarget t = { 0 };
	struct toolfiles_plan p;
	const char *why = NULL;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	if (psqltarget_parse_conninfo(&t, buf, &why) < 0) {
		if (!why)
			abort();
	} else
		check_target(&t);
	/* Redaction always fits PSQLTARGET_REDACT_CAP. */
	{
		size_t cap = PSQLTARGET_REDACT_CAP(strlen(buf));
		char *red = malloc(cap);

		if (red && psqltarget_redact_password(buf, red, cap) < 0)
			abort();
		free(red);
	}
	for (size_t off = 0; off <= size && argc < FUZZ_MAX_ARGS; off += strlen(buf + off) + 1)
		argv[argc++] = buf + off;
	if (toolfiles_plan("psql", argv, argc, &cfg, &p) < 0)
		abort();
	if (!p.refused)
		check_target(&p.psql);
	if (p.psql_conninfo_arg >= argc ||
	    (p.psql_conninfo_arg && p.psql_conninfo_off > strlen(argv[p.psql_conninfo_arg])))
		abort();
	for (size_t i = 0; i < p.n_sql; i++)
		if (p.sql[i].arg == 0 || p.sql[i].arg >= argc ||
		    p.sql[i].prefix_len > strlen(argv[p.sql[i].arg]))
			abort();
	free(buf);
	return 0;
}
