/* SPDX-License-Identifier: MIT */
/* Reading the allowlist from the image: the baked file, its @bundles from
 * the bundle directory, then EXTRA_ALLOWED_DOMAINS. Thin I/O around
 * lib/allowlist.c; every file is size-capped and must be a regular file. */
#ifndef CS_ALLOWLIST_LOAD_H
#define CS_ALLOWLIST_LOAD_H

#include <stdio.h>

#include "allowlist.h"

#define ALLOWLIST_DEFAULT_PATH "/etc/code-sandbox/allowlist"
#define ALLOWLIST_DEFAULT_BUNDLE_DIR "/etc/code-sandbox/bundles"
#define ALLOWLIST_ENV_PATH "CODE_SANDBOX_ALLOWLIST"
#define ALLOWLIST_ENV_BUNDLE_DIR "CODE_SANDBOX_BUNDLE_DIR"
#define ALLOWLIST_ENV_EXTRA "EXTRA_ALLOWED_DOMAINS"
/* Largest allowlist or bundle file read: 1024 entries of a full-length name
 * with a comment each fit easily; anything bigger is a mistake. */
#define ALLOWLIST_MAX_FILE ((size_t)256 * 1024)
#define ALLOWLIST_MAX_PATH 4096

/* Loads path (NULL: ALLOWLIST_DEFAULT_PATH), resolving "@name" from the file
 * bundle_dir/name (NULL: ALLOWLIST_DEFAULT_BUNDLE_DIR; a missing directory
 * just means every bundle is unknown), then parses extra (the value of
 * EXTRA_ALLOWED_DOMAINS, may be NULL) with the same bundles. Replaces *al
 * only on success (*al must be empty or a list to be freed by the caller;
 * its old contents are freed). Returns 0, or a negative errno with *reterr
 * filled: a parse error names the file, line, column and reason; an I/O
 * error has line 0 and names the file ("cannot open file", "not a regular
 * file", "file larger than 256 KiB"). reterr->file is borrowed from path,
 * bundle_dir's names or a static string, valid while those are. */
int allowlist_load(struct allowlist *al, const char *path, const char *bundle_dir,
		   const char *extra, struct parse_error *reterr);

/* The start-up form used by sandbox-init: the path is path_arg (--allowlist)
 * if not NULL, else $CODE_SANDBOX_ALLOWLIST if set and non-empty, else the
 * baked path; bundles from $CODE_SANDBOX_BUNDLE_DIR or the baked directory;
 * extra from $EXTRA_ALLOWED_DOMAINS. Environment read with secure_getenv().
 * Copies the path used into ret_path (may be NULL) and logs one error line
 * ("Invalid allowlist: FILE:LINE:COL: reason") on failure. */
int allowlist_load_config(struct allowlist *al, const char *path_arg, char *ret_path,
			  size_t ret_path_size);

#define ALLOWLIST_ROUTE_V4 "/proc/net/route"
#define ALLOWLIST_ROUTE_V6 "/proc/net/ipv6_route"
/* The container's own gateway (the next hop of any route in route_v4 and
 * route_v6, the kernel's /proc/net files; a file that cannot be read has no
 * gateways) is a special-purpose address: an address entry holding one
 * without the marker 'special' is refused. Returns 0, or -EINVAL after
 * logging "Invalid allowlist: FILE:LINE: ENTRY holds the container's
 * gateway ADDR ...". Records the gateways in al->gateways (at most
 * ALLOWLIST_MAX_GATEWAYS) for the DNS rebinding filter. */
int allowlist_check_gateways(struct allowlist *al, const char *route_v4, const char *route_v6);

/* `sandbox-init --check`: one line per entry, normalised, with the file (or
 * @bundle, or EXTRA_ALLOWED_DOMAINS) and line it came from; then one
 * "# special-purpose range opened: ..." line per entry with the marker. */
void allowlist_print(FILE *f, const struct allowlist *al);

#endif
