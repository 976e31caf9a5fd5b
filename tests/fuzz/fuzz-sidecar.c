/* SPDX-License-Identifier: MIT */
/* Fuzz target for lib/sidecar.c: the input is split at its first NUL into
 * CODE_SANDBOX_SIDECAR_UID and CODE_SANDBOX_SIDECAR_ALLOW. An accepted
 * exemption must satisfy what the ruleset builder checks: a UID that is not
 * 0 or the agent's, at most SIDECAR_MAX_DESTS destinations, each a network
 * with its host bits zero, lo <= hi ports, no timeout, and never loopback or
 * link-local unless it is /0. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "sidecar.h"

#define AGENT 1500U

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	struct sidecar_config c;
	struct parse_error pe = { 0 };
	const char *nul, *allow = NULL;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	nul = memchr(buf, '\0', size);
	if (nul)
		allow = nul + 1;
	if (sidecar_config_parse(buf, allow, AGENT, AGENT, &c, &pe) == 0) {
		const struct nftbatch_sidecar *n = sidecar_config_nft(&c);
		if (!n || n->uid == 0 || n->uid == AGENT || n->n_dests > SIDECAR_MAX_DESTS)
			abort();
		for (size_t i = 0; i < n->n_dests; i++) {
			const struct nftbatch_elem *e = &n->dests[i];
			const uint8_t *a = e->family == AF_INET ? (const uint8_t *)&e->addr.v4
								: (const uint8_t *)&e->addr.v6;
			unsigned bits = e->family == AF_INET ? 32 : e->family == AF_INET6 ? 128 : 0;
			if (!bits || e->prefix_len > bits || e->port_lo > e->port_hi || e->port_lo == 0 ||
			    e->timeout_ms)
				abort();
			for (unsigned b = e->prefix_len; b < bits; b++)
				if (a[b / 8] & (0x80u >> (b % 8)))
					abort();
			if (e->prefix_len && e->family == AF_INET && (a[0] == 127 || (a[0] == 169 && a[1] == 254)))
				abort();
		}
	} else if (!pe.message) {
		abort();
	}
	free(buf);
	return 0;
}
