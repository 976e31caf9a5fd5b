/* SPDX-License-Identifier: MIT */
/* Allowlist I/O: read the baked file and its bundles (size-capped, regular
 * files only), hand the text to lib/allowlist.c. See allowlist_load.h. */
#include "allowlist_load.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "log.h"
#include "macros.h"
#include "netaddr.h"

/* Distinct bundles one load may read; each is read once and kept until the
 * parse ends (the parser borrows the text). */
#define ALLOWLIST_MAX_BUNDLES 64

struct loaded_bundle {
	char name[ALLOWLIST_MAX_BUNDLE_NAME + 1];
	char *text;
	size_t len;
};

struct bundle_dir {
	const char *path;
	int dirfd; /* -1: not opened yet */
	bool missing;
	struct loaded_bundle b[ALLOWLIST_MAX_BUNDLES];
	size_t n;
};

static void bundle_dir_done(struct bundle_dir *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->b[i].text);
	d->n = 0;
	d->dirfd = safe_close(d->dirfd);
}

/* Reads a whole regular file of at most ALLOWLIST_MAX_FILE bytes. Sets
 * *ret_what to a static reason on failure. O_NONBLOCK keeps a FIFO planted
 * in place of the file from hanging PID 1 at open(). */
static int read_capped(int dirfd, const char *name, char **ret_text, size_t *ret_len,
		       const char **ret_what)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	if (fd < 0) {
		*ret_what = "cannot open file";
		return -errno;
	}
	if (fstat(fd, &st) < 0) {
		*ret_what = "cannot read file";
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_what = "not a regular file";
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	/* No size check against fstat: the cap alone decides. */
	r = fdio_read_capped(fd, ALLOWLIST_MAX_FILE, 0, &buf, &len);
	if (r < 0) {
		*ret_what = r == -EFBIG ? "file larger than 256 KiB"
			    : r == -ENOMEM ? "out of memory"
					   : "cannot read file";
		return r;
	}
	{
		/* Give back what the cap reserved; keep the old block if this fails. */
		char *fit = realloc(buf, len + 1);

		if (fit)
			buf = fit;
	}
	*ret_text = buf;
	*ret_len = len;
	return 0;
}

/* allowlist_bundle_fn: "@name" is the file bundle_dir/name. The parser has
 * checked the name ([a-z0-9][a-z0-9_-]*), so it cannot leave the directory. */
static int bundle_lookup(void *userdata, const char *name, const char **ret_text,
			 size_t *ret_len)
{
	struct bundle_dir *d = userdata;
	struct loaded_bundle *b;
	const char *what = NULL;
	int r;

	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->b[i].name, name) == 0) {
			*ret_text = d->b[i].text;
			*ret_len = d->b[i].len;
			return 0;
		}
	if (strlen(name) > ALLOWLIST_MAX_BUNDLE_NAME || strchr(name, '/') || name[0] == '.')
		return -ENOENT; /* never reached through the parser; defence in depth */
	if (d->missing)
		return -ENOENT;
	if (d->dirfd < 0) {
		d->dirfd = open(d->path, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
		if (d->dirfd < 0) {
			if (errno == ENOENT) {
				d->missing = true; /* no bundles installed: every one is unknown */
				return -ENOENT;
			}
			return -errno;
		}
	}
	if (d->n == ALLOWLIST_MAX_BUNDLES)
		return -E2BIG;
	b = &d->b[d->n];
	r = read_capped(d->dirfd, name, &b->text, &b->len, &what);
	if (r < 0)
		return r; /* -ENOENT: unknown bundle */
	(void)snprintf(b->name, sizeof(b->name), "%s", name);
	d->n++;
	*ret_text = b->text;
	*ret_len = b->len;
	return 0;
}

static void io_error(struct parse_error *reterr, const char *file, const char *what)
{
	if (!reterr)
		return;
	memset(reterr, 0, sizeof(*reterr));
	reterr->file = file;
	reterr->message = what;
}

int allowlist_load(struct allowlist *al, const char *path, const char *bundle_dir,
		   const char *extra, struct parse_error *reterr)
{
	_cleanup_free_ char *text = NULL;
	struct allowlist tmp = {0};
	struct bundle_dir d = {.path = bundle_dir ? bundle_dir : ALLOWLIST_DEFAULT_BUNDLE_DIR,
			       .dirfd = -1};
	const char *what = NULL;
	size_t len = 0;
	int r;

	if (!path)
		path = ALLOWLIST_DEFAULT_PATH;
	r = read_capped(AT_FDCWD, path, &text, &len, &what);
	if (r < 0) {
		io_error(reterr, path, what);
		return r;
	}
	r = allowlist_parse(&tmp, path, text, len, bundle_lookup, &d, reterr);
	if (r >= 0)
		r = allowlist_parse_extra(&tmp, extra, bundle_lookup, &d, reterr);
	bundle_dir_done(&d);
	if (r < 0) {
		allowlist_free(&tmp);
		return r;
	}
	allowlist_free(al);
	*al = tmp;
	return 0;
}

int allowlist_load_config(struct allowlist *al, const char *path_arg, char *ret_path,
			  size_t ret_path_size)
{
	const char *path = path_arg, *bundles, *extra;
	struct parse_error err = {0};
	char msg[ALLOWLIST_MAX_ERROR_TEXT];
	int r;

	/* The launcher sets these; secure_getenv() because PID 1 is privileged. */
	if (!path) {
		path = secure_getenv(ALLOWLIST_ENV_PATH);
		if (path && !*path)
			path = NULL;
	}
	if (!path)
		path = ALLOWLIST_DEFAULT_PATH;
	bundles = secure_getenv(ALLOWLIST_ENV_BUNDLE_DIR);
	if (bundles && !*bundles)
		bundles = NULL;
	extra = secure_getenv(ALLOWLIST_ENV_EXTRA);
	if (ret_path && ret_path_size > 0)
		(void)snprintf(ret_path, ret_path_size, "%s", path);
	r = allowlist_load(al, path, bundles, extra, &err);
	if (r < 0)
		return log_error_errno(r, "Invalid allowlist: %s",
				       allowlist_format_error(&err, msg, sizeof(msg)));
	r = allowlist_check_gateways(al, ALLOWLIST_ROUTE_V4, ALLOWLIST_ROUTE_V6);
	if (r < 0) {
		allowlist_free(al);
		return r;
	}
	return 0;
}

int allowlist_check_gateways(struct allowlist *al, const char *route_v4, const char *route_v6)
{
	struct netaddr_gateway *gw = al->gateways;
	const char *paths[2] = {route_v4, route_v6};
	const int families[2] = {AF_INET, AF_INET6};
	size_t n = 0;

	for (size_t k = 0; k < 2; k++) {
		_cleanup_free_ char *text = NULL;
		const char *what = NULL;
		size_t len = 0;

		/* No such file (no IPv6, no /proc): no gateway of that family. */
		if (!paths[k] || read_capped(AT_FDCWD, paths[k], &text, &len, &what) < 0)
			continue;
		(void)netaddr_parse_gateways(families[k], text, len, gw, &n, ALLOWLIST_MAX_GATEWAYS);
	}
	al->n_gateways = n;
	for (size_t i = 0; i < al->n; i++) {
		const struct allowlist_entry *e = &al->entries[i];

		if (e->kind != ALLOWLIST_ADDR || e->special)
			continue;
		for (size_t k = 0; k < n; k++) {
			char a[INET6_ADDRSTRLEN] = "?", text[ALLOWLIST_MAX_ENTRY_TEXT];
			struct allowlist one = {.entries = (struct allowlist_entry *)e, .n = 1};

			if (gw[k].family != e->family || !allowlist_contains_addr(&one, gw[k].family, &gw[k].addr))
				continue;
			(void)inet_ntop(gw[k].family, &gw[k].addr, a, sizeof(a));
			log_error("Invalid allowlist: %s:%u: %s holds the container's gateway %s: add the marker 'special' after the entry to open it",
				  e->source ? e->source : "?", e->line, allowlist_entry_format(e, text, sizeof(text)), a);
			return -EINVAL;
		}
	}
	return 0;
}

void allowlist_print(FILE *f, const struct allowlist *al)
{
	size_t kinds[ALLOWLIST_KIND_MAX] = {0};

	for (size_t i = 0; i < al->n; i++)
		if (al->entries[i].kind < ALLOWLIST_KIND_MAX)
			kinds[al->entries[i].kind]++;
	fprintf(f, "# allowlist: %zu entries (%zu exact names, %zu suffixes, %zu addresses)\n",
		al->n, kinds[ALLOWLIST_NAME_EXACT], kinds[ALLOWLIST_NAME_SUFFIX],
		kinds[ALLOWLIST_ADDR]);
	for (size_t i = 0; i < al->n; i++) {
		const struct allowlist_entry *e = &al->entries[i];
		char text[ALLOWLIST_MAX_ENTRY_TEXT];

		fprintf(f, "%-40s # %s:%u\n", allowlist_entry_format(e, text, sizeof(text)),
			e->source ? e->source : "?", e->line);
	}
	/* The special-purpose ranges opened on the file's explicit word,
	 * named once more so a reviewer cannot miss them. */
	for (size_t i = 0; i < al->n; i++) {
		const struct allowlist_entry *e = &al->entries[i];
		char text[ALLOWLIST_MAX_ENTRY_TEXT];

		if (!e->special)
			continue;
		fprintf(f, "# special-purpose range opened: %s (%s) by %s:%u ('special')\n",
			allowlist_entry_format(e, text, sizeof(text)), netaddr_class_to_string(e->addr_class),
			e->source ? e->source : "?", e->line);
	}
}
