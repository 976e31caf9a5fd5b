/* SPDX-License-Identifier: MIT */
/* Path mapping (contract in pathmap.h). Matching is by whole components so
 * that a mapping for /workspace never also maps /workspacex. */
#include "pathmap.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Absolute, no empty, "." or ".." component, no trailing slash, not "/". */
static bool path_is_normal(const char *p)
{
	size_t len = strnlen(p, PATHMAP_MAX_PATH);
	const char *c = p;

	if (len == 0 || len >= PATHMAP_MAX_PATH || p[0] != '/' || len == 1)
		return false;
	while (*c == '/') {
		const char *next = strchr(c + 1, '/');
		size_t n = next ? (size_t)(next - c - 1) : strlen(c + 1);

		if (n == 0 || (n == 1 && c[1] == '.') || (n == 2 && c[1] == '.' && c[2] == '.'))
			return false;
		if (!next)
			break;
		c = next;
	}
	return true;
}

int pathmap_add(struct pathmap *m, const char *container, const char *host)
{
	if (!container || !host || !path_is_normal(container) || !path_is_normal(host))
		return -EINVAL;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->e[i].container, container) == 0)
			return -EEXIST;
	if (m->n >= PATHMAP_MAX_ENTRIES)
		return -E2BIG;
	/* Lengths were bounded by path_is_normal(). */
	memcpy(m->e[m->n].container, container, strlen(container) + 1);
	memcpy(m->e[m->n].host, host, strlen(host) + 1);
	m->n++;
	return 0;
}

/* Writes the normal form of an absolute path into out ("/" when it has no
 * components). -EINVAL relative/empty, -EXDEV "..", -ENAMETOOLONG. */
static int normalise(const char *p, char *out, size_t out_len)
{
	size_t o = 0;

	if (!p || p[0] != '/')
		return -EINVAL;
	while (*p) {
		const char *start;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - start);
		if (n == 1 && start[0] == '.')
			continue;
		if (n == 2 && start[0] == '.' && start[1] == '.')
			return -EXDEV;
		if (out_len - o < n + 2)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, start, n);
		o += n;
	}
	if (o == 0) {
		if (out_len < 2)
			return -ENAMETOOLONG;
		out[o++] = '/';
	}
	out[o] = '\0';
	return 0;
}

int pathmap_resolve(const struct pathmap *m, const char *container_path, size_t *ret_index,
		    char *ret_rel, size_t rel_len)
{
	char norm[PATHMAP_MAX_PATH];
	size_t best = 0, best_len = 0;
	bool found = false;
	const char *rest;
	int r;

	if (!container_path || strnlen(container_path, PATHMAP_MAX_PATH) >= PATHMAP_MAX_PATH)
		return -EINVAL;
	r = normalise(container_path, norm, sizeof(norm));
	if (r < 0)
		return r;
	for (size_t i = 0; i < m->n; i++) {
		size_t n = strlen(m->e[i].container);

		if (strncmp(norm, m->e[i].container, n) != 0 || (norm[n] != '\0' && norm[n] != '/'))
			continue;
		if (!found || n > best_len) {
			found = true;
			best = i;
			best_len = n;
		}
	}
	if (!found)
		return -EXDEV;
	rest = norm[best_len] == '/' ? norm + best_len + 1 : ".";
	if (strlen(rest) + 1 > rel_len)
		return -ENAMETOOLONG;
	memcpy(ret_rel, rest, strlen(rest) + 1);
	*ret_index = best;
	return 0;
}
