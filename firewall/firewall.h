/* SPDX-License-Identifier: MIT */
/* The egress firewall as sandbox-init uses it:
 *   firewall_config_load()  step 2: read and validate everything, change nothing
 *   firewall_install()      step 3: resolve, build one batch, commit, read
 *                           back, verify; default deny even if no name resolves
 *   firewall_admit()        the DNS gate's fw_admit_fn (PID 1's loop)
 *   firewall_print_check()  `sandbox-init --check`: no kernel access
 * See docs/architecture.md, "Firewall". */
#ifndef CS_FIREWALL_H
#define CS_FIREWALL_H

#include <linux/netfilter/nf_tables.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "allowlist.h"
#include "fwconst.h"
#include "nftbatch.h"
#include "resolve.h"
#include "sidecar.h"

#define FIREWALL_RESOLV_CONF "/etc/resolv.conf"
/* The launcher's DNS upstream for the gate (addresses, comma or blank
 * separated): used instead of resolv.conf's servers when set, for a
 * read-only resolv.conf that already points at the gate. */
#define FIREWALL_ENV_DNS "CODE_SANDBOX_DNS"
#define FIREWALL_ENV_ALLOWLIST "CODE_SANDBOX_ALLOWLIST"
#define FIREWALL_ENV_EXTRA "EXTRA_ALLOWED_DOMAINS"
#define FIREWALL_MAX_NAMES ALLOWLIST_MAX_ENTRIES
#define FIREWALL_ADMIT_MAX 256 /* elements in one admit call (after port segments) */
#define FIREWALL_TRACK_MAX 16384 /* admitted elements whose lifetime PID 1 remembers */

struct firewall_config {
	struct allowlist al;
	char allowlist_path[4096];
	char table[NFT_TABLE_MAXNAMELEN];
	/* the container's original resolvers, read once at config time */
	struct resolve_server servers[RESOLVE_MAX_SERVERS];
	size_t n_servers;
	unsigned resolve_deadline_ms;
	/* derived from the allowlist */
	struct nftbatch_ports ports;
	struct nftbatch_elem *literals; /* normalised literal address entries, no timeout */
	size_t n_literals;
	/* the sidecar exemption (lib/sidecar.h), set by init/sidecarstep.c;
	 * sidecar points into sidecar_cfg or is NULL */
	struct sidecar_config sidecar_cfg;
	const struct nftbatch_sidecar *sidecar;
};

struct firewall_stats {
	size_t names, names_resolved, names_failed;
	size_t elements;
	uint64_t resolve_us, build_us, commit_us, verify_us, total_us;
};

struct firewall;

/* Step 2. allowlist_path: --allowlist, or NULL for $CODE_SANDBOX_ALLOWLIST
 * (secure_getenv) or the baked path; plus $EXTRA_ALLOWED_DOMAINS. Upstream
 * servers from $CODE_SANDBOX_DNS (secure_getenv) when set, else from
 * resolv_conf (NULL: /etc/resolv.conf) before the gate rewrites it. Everything is validated here: a bad allowlist line logs
 * "FILE:LINE: reason" and returns -EINVAL. No resolvers is only a warning
 * (names then stay unresolved until... never: the gate has no upstream
 * either; logged). *c must be zeroed; firewall_config_done() after. */
int firewall_config_load(struct firewall_config *c, const char *allowlist_path,
			 const char *resolv_conf);
void firewall_config_done(struct firewall_config *c);

/* Fills servers as sockaddrs on port 53 (for the DNS gate's config). */
size_t firewall_config_upstreams(const struct firewall_config *c, struct sockaddr_storage *out,
				 size_t max);

/* Step 3: resolves every name (failures are warnings), builds the ruleset,
 * commits it in one transaction checking every ack, reads it back and
 * compares. On success *ret holds the open netlink socket for
 * firewall_admit(). Any failure returns a negative errno after logging
 * which rule or element failed; the agent must not start. c must outlive
 * *ret. stats may be NULL. */
int firewall_install(const struct firewall_config *c, struct firewall **ret,
		     struct firewall_stats *stats);

/* fw_admit_fn: userdata is the struct firewall. Adds the addresses to the
 * sets (segments, literal coverage and duplicates handled as at install)
 * in one transaction and waits for every ack. */
int firewall_admit(void *userdata, const struct fw_admit *elems, size_t n);

/* Prints the allowlist as parsed and the ruleset firewall_install() would
 * commit (literal elements only: nothing is resolved), in nft syntax. */
int firewall_print_check(const struct firewall_config *c, FILE *f);

/* Points resolv.conf at the DNS gate (127.0.0.1, and ::1 when ipv6),
 * keeping the original resolvers as "# code-sandbox upstream ADDR" lines for
 * the next start (engines keep a modified resolv.conf across restarts).
 * Written in place (engines bind-mount the file; O_NOFOLLOW), and not at
 * all when it already says exactly that, so a warm start changes nothing.
 * Returns 0 or a negative errno. */
int firewall_resolv_conf_write(const struct firewall_config *c, const char *path, bool ipv6);

/* True when the resolv.conf at path names only the gate (127.0.0.1 or
 * ::1, at least one): a read-only file the launcher provided, which the
 * gate need not rewrite. */
bool firewall_resolv_conf_points_at_gate(const char *path);

/* Deletes the table (tests). */
int firewall_teardown(struct firewall *fw);

/* Closes the netlink socket; the ruleset stays. NULL-safe, returns NULL. */
struct firewall *firewall_free(struct firewall *fw);

#endif
