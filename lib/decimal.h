/* SPDX-License-Identifier: MIT */
/* The one decimal parser: digits only, no sign, no blanks, no base prefix
 * (strtoul's leading space, '+', '-' and "0x" would let "-1" wrap around);
 * and the one hex digit reader. */
#ifndef CS_DECIMAL_H
#define CS_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* Parses the whole of s[0..n) as an unsigned decimal number of at most max.
 * Leading zeros are accepted (callers that refuse them check s[0]). Scans
 * left to right and stops at the first problem: -EINVAL for n == 0 or a
 * non-digit, -ERANGE as soon as the value so far exceeds max (so "99999x"
 * with max 100 is -ERANGE). Returns 0 and sets *ret; *ret untouched on
 * failure. */
int decimal_parse(const char *s, size_t n, uint64_t max, uint64_t *ret);

/* The value of one hex digit (either case), -1 for anything else (no
 * locale: isxdigit's table is not consulted). */
static inline int hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
