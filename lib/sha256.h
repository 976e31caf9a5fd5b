/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4) over memory, and a constant-time comparison. Pure
 * code: the audit chain and the daemon's token check need nothing else of
 * a crypto library, so the daemon does not load one (its resident size). */
#ifndef CS_SHA256_H
#define CS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE 64

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[SHA256_BLOCK_SIZE];
	size_t n;     /* bytes in buf */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_DIGEST_SIZE]);
/* One call: init, update, final. */
void sha256_digest(const void *data, size_t len, uint8_t out[SHA256_DIGEST_SIZE]);
/* 1 when a[0..n) equals b[0..n), 0 otherwise, in time that depends on n
 * only. */
int sha256_ct_equal(const void *a, const void *b, size_t n);

#endif
