/* SPDX-License-Identifier: MIT */
/* Fuzz target for lib/psqlmeta.c: any bytes as a psql script. The scanner
 * must terminate, never read outside the input, and on refusal report an
 * offset inside it and a name of a refused command. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "psqlmeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct psqlmeta_result res;
	int r = psqlmeta_check((const char *)data, size, &res);

	if (r == -EPERM) {
		if (res.offset >= size || ((const char *)data)[res.offset] != '\\') {
			/* a backtick refusal points at the backtick */
			if (res.offset >= size || ((const char *)data)[res.offset] != '`')
				abort();
		}
	}
	return 0;
}
