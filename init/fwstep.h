/* SPDX-License-Identifier: MIT */
/* The firewall as sandbox-init's start-up steps 2 and 3 and PID 1's loop
 * sources: one call per step in init/main.c.
 *   fwstep_load()         step 2: allowlist, EXTRA_ALLOWED_DOMAINS, the
 *                         original resolvers; validate, change nothing
 *   fwstep_print_check()  --check: the allowlist and the ruleset
 *   fwstep_start()        step 3: install and verify the ruleset, start the
 *                         DNS gate and the blocked-packet log, point
 *                         /etc/resolv.conf at the gate, register the loop
 *                         sources, keep CAP_NET_ADMIN in PID 1 */
#ifndef CS_FWSTEP_H
#define CS_FWSTEP_H

#include <stdint.h>
#include <stdio.h>

#include "firewall.h"
#include "loop.h"

struct gate;
struct nflog;

struct fwstep {
	struct firewall_config cfg; /* lives as long as PID 1: the gate borrows it */
	struct firewall *fw;
	struct gate *gate;
	struct nflog *nflog;
};

/* Step 2. allowlist_path: --allowlist or NULL. Returns 0, or a negative
 * errno after logging the details and sandbox-init's one failure line
 * (init/fail.h; exit EXIT_INIT_CONFIG). Built into sandbox-init itself,
 * between libinit and libfirewall (init/meson.build). */
int fwstep_load(struct fwstep *s, const char *allowlist_path);

/* --check, after fwstep_load(). Returns 0 or a negative errno. */
int fwstep_print_check(const struct fwstep *s, FILE *f);

/* Step 3. Registers the gate's and the log's sources in loop and sets the
 * CAP_NET_ADMIN bit in *keep_caps (PID 1 sends set updates after its
 * capability drop; netfilter checks the sender's capability on every
 * batch). Returns 0, or a negative errno after logging and the failure
 * line (exit EXIT_INIT_FIREWALL): the agent must not start. The blocked-packet log is
 * best effort (a warning), the ruleset and the gate are not. */
int fwstep_start(struct fwstep *s, struct loop *loop, uint64_t *keep_caps);

#endif
