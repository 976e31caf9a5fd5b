/* SPDX-License-Identifier: MIT */
/* The one decimal parser: digits only, no sign, no blanks, no base prefix
 * (strtoul's leading space, '+', '-' and "0x" would let "-1" wrap around). */
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

#endif
