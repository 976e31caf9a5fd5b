/* SPDX-License-Identifier: MIT */
/* execd.conf parser (format in execdconf.h). */
#include "execdconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "macros.h"
#include "wire.h"

#define EXECDCONF_MAX_MS 86400000u /* one day */
#define EXECDCONF_MAX_CONCURRENT 4096

void execdconf_init(struct execdconf *c)
{
	memset(c, 0, sizeof(*c));
	c->webhook_timeout_ms = 5000;
	c->webhook_poll_ms = 1000;
	c->exec_timeout_ms = 5000;
	c->decision_timeout_ms = 300000;
	c->command_timeout_ms = 600000;
	c->max_concurrent = 64;
	c->max_concurrent_per_peer = 16;
	c->max_frame = WIRE_MAX_FRAME;
	c->request_read_timeout_ms = 5000;
	c->git_max_caches = 64;
	c->git_max_cache_mb = 20480;
}

void execdconf_done(struct execdconf *c)
{
	char **strs[] = {
		&c->backend, &c->policy_file, &c->webhook_url, &c->webhook_token_file,
		&c->webhook_ca_file, &c->exec_program, &c->audit_log, &c->socket, &c->token_file,
		&c->git_binary, &c->git_cache_dir,
		&c->gh_host, &c->work_dir,
	};

	for (size_t i = 0; i < ELEMENTSOF(strs); i++) {
		free(*strs[i]);
		*strs[i] = NULL;
	}
	for (size_t i = 0; i < c->n_tools; i++)
		free(c->tools[i].path);
	c->n_tools = 0;
	c->map.n = 0;
}

static int fail(struct execdconf_error *e, unsigned line, int r, const char *fmt, ...)
	_printf_(4, 5);
static int fail(struct execdconf_error *e, unsigned line, int r, const char *fmt, ...)
{
	va_list ap;

	e->line = line;
	va_start(ap, fmt);
	(void)vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return r;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static bool tool_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > EXECDCONF_MAX_TOOL_NAME)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		      (i > 0 && (ch == '-' || ch == '_' || ch == '.'))))
			return false;
	}
	return true;
}

static int parse_uint(const char *v, unsigned min, unsigned max, unsigned *ret)
{
	uint64_t x;

	/* A value not starting with a digit is -EINVAL; anything else wrong
	 * (trailing text, too large, below min) is -ERANGE, as with strtoul. */
	if (v[0] < '0' || v[0] > '9')
		return -EINVAL;
	if (decimal_parse(v, strlen(v), max, &x) < 0 || x < min)
		return -ERANGE;
	*ret = (unsigned)x;
	return 0;
}

struct str_key {
	const char *key;
	size_t off;
	bool path; /* must be absolute */
};

static const struct str_key str_keys[] = {
	{ "backend", offsetof(struct execdconf, backend), false },
	{ "policy_file", offsetof(struct execdconf, policy_file), true },
	{ "webhook_url", offsetof(struct execdconf, webhook_url), false },
	{ "webhook_token_file", offsetof(struct execdconf, webhook_token_file), true },
	{ "webhook_ca_file", offsetof(struct execdconf, webhook_ca_file), true },
	{ "exec_program", offsetof(struct execdconf, exec_program), true },
	{ "audit_log", offsetof(struct execdconf, audit_log), true },
	{ "socket", offsetof(struct execdconf, socket), true },
	{ "token_file", offsetof(struct execdconf, token_file), true },
	{ "git_binary", offsetof(struct execdconf, git_binary), true },
	{ "git_cache_dir", offsetof(struct execdconf, git_cache_dir), true },
	{ "gh_host", offsetof(struct execdconf, gh_host), false },
	{ "work_dir", offsetof(struct execdconf, work_dir), true },
};

struct num_key {
	const char *key;
	size_t off;
	unsigned min, max;
};

static const struct num_key num_keys[] = {
	{ "webhook_timeout_ms", offsetof(struct execdconf, webhook_timeout_ms), 1, EXECDCONF_MAX_MS },
	{ "webhook_poll_ms", offsetof(struct execdconf, webhook_poll_ms), 1, EXECDCONF_MAX_MS },
	{ "exec_timeout_ms", offsetof(struct execdconf, exec_timeout_ms), 1, EXECDCONF_MAX_MS },
	{ "decision_timeout_ms", offsetof(struct execdconf, decision_timeout_ms), 1, EXECDCONF_MAX_MS },
	{ "command_timeout_ms", offsetof(struct execdconf, command_timeout_ms), 1, EXECDCONF_MAX_MS },
	{ "max_concurrent", offsetof(struct execdconf, max_concurrent), 1, EXECDCONF_MAX_CONCURRENT },
	{ "max_concurrent_per_peer", offsetof(struct execdconf, max_concurrent_per_peer), 1,
	  EXECDCONF_MAX_CONCURRENT },
	{ "max_frame", offsetof(struct execdconf, max_frame), 1024, WIRE_MAX_FRAME },
	{ "git_max_caches", offsetof(struct execdconf, git_max_caches), 1, 4096 },
	{ "git_max_cache_mb", offsetof(struct execdconf, git_max_cache_mb), 0, 16777216 },
	{ "request_read_timeout_ms", offsetof(struct execdconf, request_read_timeout_ms), 1,
	  EXECDCONF_MAX_MS },
	{ "psql_stdin", offsetof(struct execdconf, psql_stdin), 0, 1 },
};

static int parse_line(struct execdconf *c, char *line, unsigned lineno, uint32_t *seen,
		      struct execdconf_error *e)
{
	char *eq, *key, *val;

	line = trim(line);
	if (line[0] == '\0' || line[0] == '#')
		return 0;
	eq = strchr(line, '=');
	if (!eq)
		return fail(e, lineno, -EINVAL, "expected 'key = value'");
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	if (val[0] == '\0')
		return fail(e, lineno, -EINVAL, "empty value for '%s'", key);

	if (strncmp(key, "tool", 4) == 0 && (key[4] == ' ' || key[4] == '\t')) {
		char *name = trim(key + 4);
		struct execdconf_tool *t;

		if (!tool_name_valid(name))
			return fail(e, lineno, -EINVAL,
				    "invalid tool name '%s' (lower-case letters, digits, '-', '_', '.')",
				    name);
		if (val[0] != '/')
			return fail(e, lineno, -EINVAL, "tool '%s' must be an absolute path", name);
		if (execdconf_find_tool(c, name))
			return fail(e, lineno, -EINVAL, "duplicate tool '%s'", name);
		if (c->n_tools >= EXECDCONF_MAX_TOOLS)
			return fail(e, lineno, -E2BIG, "more than %d tools", EXECDCONF_MAX_TOOLS);
		t = &c->tools[c->n_tools];
		t->path = strdup(val);
		if (!t->path)
			return fail(e, lineno, -ENOMEM, "out of memory");
		memcpy(t->name, name, strlen(name) + 1);
		c->n_tools++;
		return 0;
	}
	if (strncmp(key, "map", 3) == 0 && (key[3] == ' ' || key[3] == '\t')) {
		char *prefix = trim(key + 3);
		int r = pathmap_add(&c->map, prefix, val);

		if (r == -EEXIST)
			return fail(e, lineno, -EINVAL, "duplicate map for '%s'", prefix);
		if (r == -E2BIG)
			return fail(e, lineno, -E2BIG, "too many maps (at most %d)", PATHMAP_MAX_ENTRIES);
		if (r < 0)
			return fail(e, lineno, -EINVAL,
				    "map needs two absolute normal paths other than '/' "
				    "(no '.', '..', '//' or trailing '/')");
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(str_keys); i++) {
		char **slot;

		if (strcmp(key, str_keys[i].key) != 0)
			continue;
		if (*seen & (1u << i))
			return fail(e, lineno, -EINVAL, "duplicate key '%s'", key);
		*seen |= 1u << i;
		if (str_keys[i].path && val[0] != '/')
			return fail(e, lineno, -EINVAL, "'%s' must be an absolute path", key);
		slot = (char **)(void *)((char *)c + str_keys[i].off);
		*slot = strdup(val);
		if (!*slot)
			return fail(e, lineno, -ENOMEM, "out of memory");
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(num_keys); i++) {
		unsigned bit = (unsigned)(ELEMENTSOF(str_keys) + i);

		if (strcmp(key, num_keys[i].key) != 0)
			continue;
		if (*seen & (1u << bit))
			return fail(e, lineno, -EINVAL, "duplicate key '%s'", key);
		*seen |= 1u << bit;
		if (parse_uint(val, num_keys[i].min, num_keys[i].max,
			       (unsigned *)(void *)((char *)c + num_keys[i].off)) < 0)
			return fail(e, lineno, -EINVAL, "'%s' must be an integer in %u..%u", key,
				    num_keys[i].min, num_keys[i].max);
		return 0;
	}
	return fail(e, lineno, -EINVAL, "unknown key '%s'", key);
}

int execdconf_parse(struct execdconf *c, const char *text, size_t len,
		    struct execdconf_error *reterr)
{
	char line[EXECDCONF_MAX_LINE];
	uint32_t seen = 0;
	unsigned lineno = 0;
	size_t pos = 0;

	if (len > EXECDCONF_MAX_SIZE)
		return fail(reterr, 0, -E2BIG, "configuration larger than %u bytes", EXECDCONF_MAX_SIZE);
	if (memchr(text, '\0', len))
		return fail(reterr, 0, -EINVAL, "configuration contains a NUL byte");
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		int r;

		lineno++;
		if (n >= sizeof(line))
			return fail(reterr, lineno, -E2BIG, "line longer than %d bytes",
				    EXECDCONF_MAX_LINE - 1);
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + (nl ? 1 : 0);
		r = parse_line(c, line, lineno, &seen, reterr);
		if (r < 0)
			return r;
	}
	return 0;
}

int execdconf_validate(const struct execdconf *c, struct execdconf_error *reterr)
{
	if (!c->backend)
		return fail(reterr, 0, -EINVAL,
			    "no 'backend' (allow_all, static, webhook or exec) is configured");
	if (!c->audit_log)
		return fail(reterr, 0, -EINVAL, "no 'audit_log' is configured");
	/* No tool lines is a daemon that only serves the git relay (the
	 * Kubernetes sidecar's default): valid. */
	if (c->map.n == 0)
		return fail(reterr, 0, -EINVAL,
			    "no 'map /container/prefix = /host/prefix' line: no cwd could be mapped");
	if (c->max_concurrent_per_peer > c->max_concurrent)
		return fail(reterr, 0, -EINVAL,
			    "max_concurrent_per_peer (%u) is larger than max_concurrent (%u)",
			    c->max_concurrent_per_peer, c->max_concurrent);
	return 0;
}

const struct execdconf_tool *execdconf_find_tool(const struct execdconf *c, const char *name)
{
	for (size_t i = 0; i < c->n_tools; i++)
		if (strcmp(c->tools[i].name, name) == 0)
			return &c->tools[i];
	return NULL;
}
