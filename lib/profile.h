/* SPDX-License-Identifier: MIT */
/* Settings profiles: name validation and content checks. Pure. */
#ifndef CS_PROFILE_H
#define CS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

/* A profile name is [a-z0-9_-]{1,PROFILE_NAME_MAX}: it becomes a file name
 * under /etc/code-sandbox/profiles/, so no '/', no '.', no "..". */
#define PROFILE_NAME_MAX 32
/* Largest profile accepted. */
#define PROFILE_MAX_BYTES ((size_t)256 << 10)

bool profile_name_valid(const char *name);

/* Checks that buf[0..len) is one JSON object (json-c, strict mode) with
 * nothing but whitespace after it and no NUL byte. Returns 0, -EINVAL for
 * invalid JSON or a non-object, -EFBIG above PROFILE_MAX_BYTES. On -EINVAL,
 * *reterr (if not NULL) points to a static description. */
int profile_check_json(const char *buf, size_t len, const char **reterr);

#endif
