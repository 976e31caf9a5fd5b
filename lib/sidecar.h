/* SPDX-License-Identifier: MIT */
/* One network namespace, two trust levels (docs/kubernetes.md, "The
 * sidecar's network"). In a Kubernetes pod the agent container and the
 * sandbox-execd sidecar share one network namespace, so sandbox-init's
 * table governs the sidecar too. The sidecar keeps the network it needs
 * through rules that match its socket owner:
 *
 *   meta skuid SIDECAR ip daddr UPSTREAM udp dport 53 accept   (and tcp)
 *   meta skuid SIDECAR ip daddr NET tcp dport LO-HI accept     (each destination)
 *
 * configured by two variables the manifest sets on the agent container:
 *   CODE_SANDBOX_SIDECAR_UID    the sidecar container's runAsUser
 *   CODE_SANDBOX_SIDECAR_ALLOW  its destinations, comma or blank separated:
 *                               ADDR[/LEN][:PORT[-PORT]] (IPv4),
 *                               [ADDR6[/LEN]][:PORT[-PORT]] (IPv6, brackets
 *                               needed only with a port); port 443 when absent
 *
 * The agent cannot borrow the exemption: it runs as HOST_UID with no
 * capabilities, no_new_privs and seccomp, so it can neither take another
 * UID nor own a socket created under one; the validation below refuses an
 * exemption UID that anything in the agent container holds (root, devuser's
 * IDs, the overflow ID that unmapped owners appear as). Pure code. */
#ifndef CS_SIDECAR_H
#define CS_SIDECAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "allowlist.h"
#include "nftbatch.h"

#define SIDECAR_ENV_UID "CODE_SANDBOX_SIDECAR_UID"
#define SIDECAR_ENV_ALLOW "CODE_SANDBOX_SIDECAR_ALLOW"
#define SIDECAR_MAX_DESTS 32
#define SIDECAR_MAX_SPEC 4096   /* bytes of CODE_SANDBOX_SIDECAR_ALLOW */
#define SIDECAR_DEFAULT_PORT 443
#define SIDECAR_OVERFLOW_ID 65534U /* kernel overflowuid: unmapped owners */
#define SIDECAR_IMAGE_DEVUSER_ID 1000U /* devuser's IDs in the image, before the remap */

struct sidecar_config {
	bool enabled;
	struct nftbatch_sidecar nft; /* points into dests */
	struct nftbatch_elem dests[SIDECAR_MAX_DESTS];
};

/* Why a sidecar UID is refused, or NULL when it may be used: 0 (root: PID 1
 * runs as it), the agent's UID or GID (HOST_UID/HOST_GID), the image's
 * devuser IDs, the overflow ID, (uid_t)-1. Static strings. */
const char *sidecar_uid_refusal(unsigned uid, unsigned agent_uid, unsigned agent_gid);

/* Parses the destination list (grammar above) into out[0..max). Every
 * destination is a network with its host bits zero, a port range lo <= hi,
 * no timeout; loopback (always reachable), unspecified addresses with a
 * non-zero prefix, multicast, and anything inside the ranges the firewall
 * never admits (link-local, cloud metadata) are refused. Returns 0 and
 * *ret_n, or -EINVAL (-E2BIG past max, -ENAMETOOLONG past SIDECAR_MAX_SPEC)
 * with reterr->message set and reterr->column the 1-based byte offset of the
 * offending entry; out is then unspecified. An empty list is valid (DNS only). */
int sidecar_parse_dests(const char *spec, struct nftbatch_elem *out, size_t max, size_t *ret_n,
			struct parse_error *reterr);

/* Both variables at once, as sandbox-init sees them (NULL: unset). uid_spec
 * unset and allow_spec unset: *ret disabled, 0. allow_spec without uid_spec:
 * -EINVAL (an exemption for nobody is a configuration mistake). Otherwise
 * the UID is parsed (ids_parse_id) and checked with sidecar_uid_refusal(),
 * the list with sidecar_parse_dests(). reterr->file names the variable at
 * fault. *ret is written only on success. */
int sidecar_config_parse(const char *uid_spec, const char *allow_spec, unsigned agent_uid,
			 unsigned agent_gid, struct sidecar_config *ret, struct parse_error *reterr);

/* The builder's view: NULL when disabled. c must stay alive and unmoved. */
const struct nftbatch_sidecar *sidecar_config_nft(struct sidecar_config *c);

#endif
