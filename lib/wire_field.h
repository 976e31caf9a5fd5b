/* SPDX-License-Identifier: MIT */
/* The field layer both frame codecs share (lib/wire.c, lib/wire_git.c):
 * a payload is a sequence of fields, 1-byte tag + 4-byte big-endian length
 * + value. Internal to lib/: the wire format itself is wire.h's. */
#ifndef CS_WIRE_FIELD_H
#define CS_WIRE_FIELD_H

#include <stddef.h>
#include <stdint.h>

struct wire_field {
	uint8_t tag;
	const uint8_t *v;
	uint32_t len;
};

/* Iterates the payload [*p, end). Returns 1 with *f filled, 0 at the end,
 * -EBADMSG when a field header or value runs past the end (truncation). */
int wire_field_next(const uint8_t **p, const uint8_t *end, struct wire_field *f);

/* Copies a string field into *slot (NUL-terminated, malloc'd) once:
 * -EBADMSG when *slot is already set (a duplicate field), for NUL or
 * invalid UTF-8; -E2BIG over max bytes; -ENOMEM. */
int wire_field_set_once(const struct wire_field *f, size_t max, char **slot);

#endif
