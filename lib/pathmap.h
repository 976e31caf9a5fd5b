/* SPDX-License-Identifier: MIT */
/* Container path -> host path mapping for sandbox-execd (pure). The launcher
 * writes one `map CONTAINER = HOST` line per bind mount into execd.conf; a
 * request's container cwd is matched component-wise against the container
 * prefixes (the longest wins) and split into the host root and a relative
 * remainder, which the daemon then opens with openat2(RESOLVE_BENEATH) under
 * that root: the kernel, not this string code, decides about symlinks. */
#ifndef CS_PATHMAP_H
#define CS_PATHMAP_H

#include <stddef.h>

#define PATHMAP_MAX_ENTRIES 32
#define PATHMAP_MAX_PATH 4096 /* bytes including NUL, like PATH_MAX */

struct pathmap_entry {
	char container[PATHMAP_MAX_PATH];
	char host[PATHMAP_MAX_PATH];
};

struct pathmap {
	size_t n;
	struct pathmap_entry e[PATHMAP_MAX_ENTRIES];
};

/* Adds a mapping. Both paths must be absolute and already normal (no empty,
 * "." or ".." components, no trailing slash except "/" itself is refused as
 * a container prefix: mapping the whole container would map everything).
 * -EINVAL for a bad path, -EEXIST for a duplicate container prefix, -E2BIG
 * when full or too long. */
int pathmap_add(struct pathmap *m, const char *container, const char *host);

/* Maps an absolute container path. Empty and "." components are dropped;
 * any ".." component is refused (-EXDEV): lexical ".." handling is wrong in
 * the presence of symlinks, and getcwd() never returns one. Relative or empty
 * paths are -EINVAL. A path under no container prefix is -EXDEV (this is
 * also how a host path such as /home/user/.ssh sent as "cwd" is refused).
 * On success *ret_index is the mapping's index and ret_rel (rel_len bytes)
 * holds the remainder relative to its host root, "." for the root itself;
 * never absolute, never containing "..". -ENAMETOOLONG when it does not fit. */
int pathmap_resolve(const struct pathmap *m, const char *container_path, size_t *ret_index,
		    char *ret_rel, size_t rel_len);

#endif
