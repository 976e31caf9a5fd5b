/* SPDX-License-Identifier: MIT */
/* sandbox-init's step 2 for the sidecar exemption (lib/sidecar.h): reads
 * CODE_SANDBOX_SIDECAR_UID and CODE_SANDBOX_SIDECAR_ALLOW with
 * secure_getenv, validates them against the agent's IDs and hands the
 * result to the firewall's configuration. One call in init/main.c, after
 * config_load() and fwstep_load() and before fwstep_start(). */
#ifndef CS_SIDECARSTEP_H
#define CS_SIDECARSTEP_H

#include "fwstep.h"

/* Returns 0 (also when neither variable is set: no exemption), or a
 * negative errno after logging "VARIABLE: reason" and sandbox-init's one
 * failure line (exit EXIT_INIT_CONFIG). Changes nothing outside s. */
int sidecarstep_load(struct fwstep *s, unsigned agent_uid, unsigned agent_gid);

#endif
