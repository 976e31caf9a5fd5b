/* SPDX-License-Identifier: MIT */
/* lib/sha256.c: the FIPS 180-2 examples and the NIST long-message vector,
 * every split of a message across updates (block boundaries, the padding
 * edge at 55/56/64 bytes), and the constant-time comparison. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "sha256.h"
#include "tap.h"

static void hex(const uint8_t md[SHA256_DIGEST_SIZE], char out[65])
{
	for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
		(void)snprintf(out + 2 * i, 3, "%02x", md[i]);
}

TEST(sha256_vectors)
{
	static const struct {
		const char *msg;
		const char *md;
	} cases[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		  "klmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		uint8_t md[SHA256_DIGEST_SIZE];
		char h[65];

		sha256_digest(cases[i].msg, strlen(cases[i].msg), md);
		hex(md, h);
		EXPECT_STREQ(h, cases[i].md);
	}
}

TEST(sha256_million_a)
{
	struct sha256 s;
	uint8_t md[SHA256_DIGEST_SIZE];
	char chunk[1000], h[65];

	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&s);
	for (int i = 0; i < 1000; i++)
		sha256_update(&s, chunk, sizeof(chunk));
	sha256_final(&s, md);
	hex(md, h);
	EXPECT_STREQ(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Bytes 0..255 five times (1280 bytes): the one-shot digest, and every
 * way of cutting every prefix length in two updates, agree with each
 * other; the whole message agrees with sha256sum. */
TEST(sha256_splits)
{
	uint8_t msg[1280], whole[SHA256_DIGEST_SIZE];
	char h[65];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	sha256_digest(msg, sizeof(msg), whole);
	hex(whole, h);
	EXPECT_STREQ(h, "d414b085826eb06778483ba35564dc849e643359f69ed9747878ba6e54985bed");
	for (size_t len = 0; len <= 200; len++) {
		uint8_t ref[SHA256_DIGEST_SIZE];

		sha256_digest(msg, len, ref);
		for (size_t cut = 0; cut <= len; cut++) {
			struct sha256 s;
			uint8_t md[SHA256_DIGEST_SIZE];

			sha256_init(&s);
			sha256_update(&s, msg, cut);
			sha256_update(&s, msg + cut, len - cut);
			sha256_final(&s, md);
			ASSERT_EQ(memcmp(md, ref, sizeof(md)), 0);
		}
	}
}

TEST(sha256_ct_equal)
{
	EXPECT_EQ(sha256_ct_equal("abc", "abc", 3), 1);
	EXPECT_EQ(sha256_ct_equal("abc", "abd", 3), 0);
	EXPECT_EQ(sha256_ct_equal("xbc", "abc", 3), 0);
	EXPECT_EQ(sha256_ct_equal("", "", 0), 1);
}
