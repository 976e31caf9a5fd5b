/* SPDX-License-Identifier: MIT */
#include "decimal.h"

#include <errno.h>

int decimal_parse(const char *s, size_t n, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		d = (unsigned)(s[i] - '0');
		/* v * 10 + d > max, without overflowing v * 10. */
		if (d > max || v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}
