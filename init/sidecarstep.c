/* SPDX-License-Identifier: MIT */
/* The sidecar exemption's configuration step. See sidecarstep.h. */
#include "sidecarstep.h"

#include <stdio.h>
#include <stdlib.h>

#include "fail.h"
#include "log.h"
#include "sidecar.h"

int sidecarstep_load(struct fwstep *s, unsigned agent_uid, unsigned agent_gid)
{
	struct parse_error pe = { 0 };
	char buf[32];
	int r;

	r = sidecar_config_parse(secure_getenv(SIDECAR_ENV_UID), secure_getenv(SIDECAR_ENV_ALLOW),
				 agent_uid, agent_gid, &s->cfg.sidecar_cfg, &pe);
	if (r < 0) {
		if (pe.column)
			log_error("%s: entry at byte %u: %s", pe.file, pe.column, pe.message);
		else
			log_error("%s: %s", pe.file, pe.message);
		return init_fail("config", r, "invalid sidecar exemption (%s)", pe.file);
	}
	s->cfg.sidecar = sidecar_config_nft(&s->cfg.sidecar_cfg);
	if (s->cfg.sidecar) {
		(void)snprintf(buf, sizeof(buf), "%u", (unsigned)s->cfg.sidecar->uid);
		log_info("Sidecar exemption: sockets of uid %s may query the upstream DNS and reach %zu destination(s)",
			 buf, s->cfg.sidecar->n_dests);
	}
	return 0;
}
