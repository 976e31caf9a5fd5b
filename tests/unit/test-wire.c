/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "tap.h"
#include "wire.h"

static uint8_t buf[WIRE_MAX_FRAME + 64];

/* Hand-built frames, so the decoder is tested against bytes the encoder
 * would never produce. */
struct fb {
	uint8_t b[WIRE_MAX_FRAME + 4096];
	size_t len;
};

static void fb_begin(struct fb *f, uint8_t type, uint8_t nfds)
{
	f->b[0] = WIRE_VERSION;
	f->b[1] = type;
	f->b[2] = nfds;
	f->b[3] = 0;
	f->len = WIRE_HEADER_SIZE;
}

static void fb_field(struct fb *f, uint8_t tag, const void *v, size_t n)
{
	f->b[f->len] = tag;
	f->b[f->len + 1] = (uint8_t)(n >> 24);
	f->b[f->len + 2] = (uint8_t)(n >> 16);
	f->b[f->len + 3] = (uint8_t)(n >> 8);
	f->b[f->len + 4] = (uint8_t)n;
	memcpy(f->b + f->len + 5, v, n);
	f->len += 5 + n;
}

static void fb_str(struct fb *f, uint8_t tag, const char *s)
{
	fb_field(f, tag, s, strlen(s));
}

static size_t fb_end(struct fb *f)
{
	size_t n = f->len - WIRE_HEADER_SIZE;

	f->b[4] = (uint8_t)(n >> 24);
	f->b[5] = (uint8_t)(n >> 16);
	f->b[6] = (uint8_t)(n >> 8);
	f->b[7] = (uint8_t)n;
	return f->len;
}

static void fb_minimal(struct fb *f)
{
	fb_begin(f, WIRE_TYPE_REQUEST, 3);
	fb_str(f, WIRE_TAG_TOKEN, "tok");
	fb_str(f, WIRE_TAG_TOOL, "git");
	fb_str(f, WIRE_TAG_CWD, "/workspace");
}

static int decode(struct fb *f)
{
	struct wire_request r = { 0 };
	int ret = wire_decode_request(f->b, fb_end(f), WIRE_MAX_FRAME, &r);

	wire_request_done(&r);
	return ret;
}

TEST(request_round_trip)
{
	char *args[] = { "push", "origin", "héllo wörld ✓ 😀", "", "--force-with-lease=main" };
	struct wire_request in = {
		.token = "0123abcd",
		.tool = "git",
		.args = args,
		.n_args = ELEMENTSOF(args),
		.cwd = "/workspace/sub",
		.reason = "push the fix",
		.repo = "/workspace",
		.branch = "main",
	};
	struct wire_request out = { 0 };
	size_t len = 0;

	ASSERT_OK(wire_encode_request(&in, buf, sizeof(buf), &len));
	ASSERT_OK(wire_decode_request(buf, len, WIRE_MAX_FRAME, &out));
	ASSERT_STREQ(out.token, "0123abcd");
	ASSERT_STREQ(out.tool, "git");
	ASSERT_EQ(out.n_args, 5);
	for (size_t i = 0; i < 5; i++)
		ASSERT_STREQ(out.args[i], args[i]);
	ASSERT_STREQ(out.cwd, "/workspace/sub");
	ASSERT_STREQ(out.reason, "push the fix");
	ASSERT_STREQ(out.repo, "/workspace");
	ASSERT_STREQ(out.branch, "main");
	wire_request_done(&out);
	ASSERT_NULL(out.token);
}

TEST(request_optional_fields_absent)
{
	struct wire_request in = { .token = "t", .tool = "gh", .cwd = "/w" }, out = { 0 };
	size_t len = 0;

	ASSERT_OK(wire_encode_request(&in, buf, sizeof(buf), &len));
	ASSERT_OK(wire_decode_request(buf, len, WIRE_MAX_FRAME, &out));
	ASSERT_EQ(out.n_args, 0);
	ASSERT_NULL(out.reason);
	ASSERT_NULL(out.repo);
	ASSERT_NULL(out.branch);
	wire_request_done(&out);
}

TEST(every_truncation_is_rejected)
{
	char *args[] = { "status", "-s" };
	struct wire_request in = { .token = "t", .tool = "git", .args = args, .n_args = 2, .cwd = "/w" };
	size_t len = 0;

	ASSERT_OK(wire_encode_request(&in, buf, sizeof(buf), &len));
	for (size_t n = 0; n < len; n++) {
		struct wire_request out = { 0 };

		ASSERT_EQ(wire_decode_request(buf, n, WIRE_MAX_FRAME, &out), -EBADMSG);
	}
}

TEST(trailing_bytes_are_rejected)
{
	struct wire_request in = { .token = "t", .tool = "git", .cwd = "/w" }, out = { 0 };
	size_t len = 0;

	ASSERT_OK(wire_encode_request(&in, buf, sizeof(buf), &len));
	buf[len] = 0;
	ASSERT_EQ(wire_decode_request(buf, len + 1, WIRE_MAX_FRAME, &out), -EBADMSG);
	/* and a payload length claiming less than the fields present */
	buf[7]--;
	ASSERT_EQ(wire_decode_request(buf, len, WIRE_MAX_FRAME, &out), -EBADMSG);
}

TEST(oversized_frames)
{
	static struct fb f;
	struct wire_header h;
	char *big = malloc(WIRE_MAX_ARG + 2);

	ASSERT_NOT_NULL(big);
	/* header announcing more than the cap */
	fb_minimal(&f);
	fb_end(&f);
	f.b[4] = 0x7f;
	ASSERT_EQ(wire_parse_header(f.b, f.len, WIRE_MAX_FRAME, &h), -EMSGSIZE);
	/* a lower, configured cap */
	fb_minimal(&f);
	memset(big, 'a', 2000);
	big[2000] = '\0';
	fb_str(&f, WIRE_TAG_ARG, big);
	fb_end(&f);
	ASSERT_EQ(wire_parse_header(f.b, f.len, 1024, &h), -EMSGSIZE);
	{
		struct wire_request out = { 0 };

		ASSERT_EQ(wire_decode_request(f.b, f.len, 1024, &out), -EMSGSIZE);
		ASSERT_OK(wire_decode_request(f.b, f.len, WIRE_MAX_FRAME, &out));
		wire_request_done(&out);
	}
	/* an argument over WIRE_MAX_ARG */
	fb_minimal(&f);
	memset(big, 'a', WIRE_MAX_ARG + 1);
	fb_field(&f, WIRE_TAG_ARG, big, WIRE_MAX_ARG + 1);
	ASSERT_EQ(decode(&f), -E2BIG);
	/* a token over WIRE_MAX_TOKEN */
	fb_begin(&f, WIRE_TYPE_REQUEST, 3);
	fb_field(&f, WIRE_TAG_TOKEN, big, WIRE_MAX_TOKEN + 1);
	fb_str(&f, WIRE_TAG_TOOL, "git");
	fb_str(&f, WIRE_TAG_CWD, "/w");
	ASSERT_EQ(decode(&f), -E2BIG);
	free(big);
}

TEST(too_many_arguments)
{
	static struct fb f;
	static char *args[WIRE_MAX_ARGS + 1];
	struct wire_request in = { .token = "t", .tool = "git", .cwd = "/w", .args = args };
	size_t len;

	fb_minimal(&f);
	for (int i = 0; i < WIRE_MAX_ARGS; i++)
		fb_str(&f, WIRE_TAG_ARG, "x");
	ASSERT_OK(decode(&f));
	fb_str(&f, WIRE_TAG_ARG, "x");
	ASSERT_EQ(decode(&f), -E2BIG);

	for (int i = 0; i <= WIRE_MAX_ARGS; i++)
		args[i] = "x";
	in.n_args = WIRE_MAX_ARGS + 1;
	ASSERT_EQ(wire_encode_request(&in, buf, sizeof(buf), &len), -E2BIG);
}

TEST(embedded_nul_is_rejected)
{
	static struct fb f;

	fb_minimal(&f);
	fb_field(&f, WIRE_TAG_ARG, "a\0b", 3);
	ASSERT_EQ(decode(&f), -EBADMSG);
	fb_begin(&f, WIRE_TYPE_REQUEST, 3);
	fb_str(&f, WIRE_TAG_TOKEN, "t");
	fb_field(&f, WIRE_TAG_TOOL, "git\0", 4);
	fb_str(&f, WIRE_TAG_CWD, "/w");
	ASSERT_EQ(decode(&f), -EBADMSG);
}

TEST(utf8_validator)
{
	static const struct {
		const char *s;
		size_t n;
		bool ok;
	} cases[] = {
		{ "plain", 5, true },
		{ "\xc3\xa9", 2, true },                 /* é */
		{ "\xe2\x9c\x93", 3, true },             /* ✓ */
		{ "\xf0\x9f\x98\x80", 4, true },         /* 😀 */
		{ "\xf4\x8f\xbf\xbf", 4, true },         /* U+10FFFF */
		{ "\xed\x9f\xbf", 3, true },             /* U+D7FF */
		{ "\xee\x80\x80", 3, true },             /* U+E000 */
		{ "\xc0\xaf", 2, false },                /* overlong '/' */
		{ "\xc1\xbf", 2, false },                /* overlong */
		{ "\xe0\x80\xaf", 3, false },            /* overlong '/' */
		{ "\xe0\x9f\xbf", 3, false },            /* overlong U+07FF */
		{ "\xf0\x80\x80\xaf", 4, false },        /* overlong '/' */
		{ "\xf0\x8f\xbf\xbf", 4, false },        /* overlong U+FFFF */
		{ "\xed\xa0\x80", 3, false },            /* U+D800 surrogate */
		{ "\xed\xbf\xbf", 3, false },            /* U+DFFF surrogate */
		{ "\xf4\x90\x80\x80", 4, false },        /* U+110000 */
		{ "\xf5\x80\x80\x80", 4, false },
		{ "\xff", 1, false },
		{ "\x80", 1, false },                    /* lone continuation */
		{ "\xc3", 1, false },                    /* truncated */
		{ "\xe2\x9c", 2, false },                /* truncated */
		{ "\xe2\x28\xa1", 3, false },            /* bad continuation */
		{ "a\0b", 3, false },                    /* NUL */
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		EXPECT_EQ(wire_utf8_valid(cases[i].s, cases[i].n), cases[i].ok);
}

TEST(invalid_utf8_in_fields_is_rejected)
{
	static struct fb f;
	static const char *const bad[] = { "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "x\xff" };

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		fb_minimal(&f);
		fb_str(&f, WIRE_TAG_ARG, bad[i]);
		EXPECT_EQ(decode(&f), -EBADMSG);
		fb_minimal(&f);
		fb_str(&f, WIRE_TAG_REASON, bad[i]);
		EXPECT_EQ(decode(&f), -EBADMSG);
	}
}

TEST(duplicate_fields_are_rejected)
{
	static struct fb f;
	static const uint8_t tags[] = { WIRE_TAG_TOKEN, WIRE_TAG_TOOL, WIRE_TAG_CWD, WIRE_TAG_REASON,
					WIRE_TAG_REPO, WIRE_TAG_BRANCH };

	for (size_t i = 0; i < sizeof(tags); i++) {
		fb_minimal(&f);
		if (tags[i] == WIRE_TAG_REASON || tags[i] == WIRE_TAG_REPO || tags[i] == WIRE_TAG_BRANCH)
			fb_str(&f, tags[i], "first");
		fb_str(&f, tags[i], "again");
		EXPECT_EQ(decode(&f), -EBADMSG);
	}
	/* arguments repeat by design */
	fb_minimal(&f);
	fb_str(&f, WIRE_TAG_ARG, "a");
	fb_str(&f, WIRE_TAG_ARG, "a");
	EXPECT_OK(decode(&f));
}

TEST(missing_required_fields)
{
	static struct fb f;

	fb_begin(&f, WIRE_TYPE_REQUEST, 3);
	fb_str(&f, WIRE_TAG_TOOL, "git");
	fb_str(&f, WIRE_TAG_CWD, "/w");
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_begin(&f, WIRE_TYPE_REQUEST, 3);
	fb_str(&f, WIRE_TAG_TOKEN, "t");
	fb_str(&f, WIRE_TAG_CWD, "/w");
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_begin(&f, WIRE_TYPE_REQUEST, 3);
	fb_str(&f, WIRE_TAG_TOKEN, "t");
	fb_str(&f, WIRE_TAG_TOOL, "");
	fb_str(&f, WIRE_TAG_CWD, "/w");
	EXPECT_EQ(decode(&f), -EBADMSG);
}

TEST(unknown_tags_and_types)
{
	static struct fb f;
	struct wire_header h;

	fb_minimal(&f);
	fb_str(&f, 0x42, "x"); /* unknown, required */
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_minimal(&f);
	fb_str(&f, 0xc2, "x"); /* unknown, optional: skipped */
	EXPECT_OK(decode(&f));
	fb_minimal(&f);
	fb_str(&f, WIRE_TAG_STATUS_KIND, "xxxx"); /* reply tag in a request */
	EXPECT_EQ(decode(&f), -EBADMSG);

	fb_minimal(&f);
	fb_end(&f);
	f.b[1] = 9; /* unknown type */
	EXPECT_EQ(wire_parse_header(f.b, f.len, WIRE_MAX_FRAME, &h), -EBADMSG);
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_minimal(&f);
	f.b[1] = WIRE_TYPE_REPLY; /* valid type, wrong for a request */
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_minimal(&f);
	f.b[0] = WIRE_VERSION + 1;
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_minimal(&f);
	f.b[3] = 1; /* reserved */
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_minimal(&f);
	f.b[2] = 2; /* a request carries exactly three fds */
	EXPECT_EQ(decode(&f), -EBADMSG);
	fb_minimal(&f);
	f.b[2] = 200;
	EXPECT_EQ(decode(&f), -EBADMSG);
}

TEST(reply_round_trip)
{
	struct wire_reply in = { .kind = WIRE_REPLY_EXITED, .code = 42 }, out;
	size_t len = 0;

	ASSERT_OK(wire_encode_reply(&in, buf, sizeof(buf), &len));
	ASSERT_OK(wire_decode_reply(buf, len, &out));
	ASSERT_EQ(out.kind, WIRE_REPLY_EXITED);
	ASSERT_EQ(out.code, 42);

	in = (struct wire_reply){ .kind = WIRE_REPLY_SIGNALED, .code = 9 };
	ASSERT_OK(wire_encode_reply(&in, buf, sizeof(buf), &len));
	ASSERT_OK(wire_decode_reply(buf, len, &out));
	ASSERT_EQ(out.kind, WIRE_REPLY_SIGNALED);
	ASSERT_EQ(out.code, 9);

	for (int e = 0; e < WIRE_ERROR_MAX; e++) {
		in = (struct wire_reply){ .kind = WIRE_REPLY_ERROR, .error = (enum wire_error)e };
		(void)snprintf(in.message, sizeof(in.message), "denied: %s", wire_error_to_string(in.error));
		ASSERT_OK(wire_encode_reply(&in, buf, sizeof(buf), &len));
		ASSERT_OK(wire_decode_reply(buf, len, &out));
		ASSERT_EQ(out.kind, WIRE_REPLY_ERROR);
		ASSERT_EQ(out.error, e);
		ASSERT_STREQ(out.message, in.message);
		for (size_t n = 0; n < len; n++)
			ASSERT_EQ(wire_decode_reply(buf, n, &out), -EBADMSG);
	}
	EXPECT_STREQ(wire_error_to_string(WIRE_ERROR_PATH_OUTSIDE_WORKSPACE), "path_outside_workspace");
	EXPECT_STREQ(wire_error_to_string(WIRE_ERROR_MAX), "?");
}

TEST(reply_invalid)
{
	static struct fb f;
	struct wire_reply in = { .kind = WIRE_REPLY_EXITED, .code = 256 }, out;
	uint8_t four[4] = { 0, 0, 0, 0 }, big[4] = { 0, 0, 1, 0 }, err[4] = { 0, 0, 0, WIRE_ERROR_MAX };
	uint8_t kind_err[4] = { 0, 0, 0, WIRE_REPLY_ERROR };
	size_t len;

	EXPECT_EQ(wire_encode_reply(&in, buf, sizeof(buf), &len), -EINVAL);
	in = (struct wire_reply){ .kind = WIRE_REPLY_SIGNALED, .code = 0 };
	EXPECT_EQ(wire_encode_reply(&in, buf, sizeof(buf), &len), -EINVAL);

	/* exit code out of range */
	fb_begin(&f, WIRE_TYPE_REPLY, 0);
	fb_field(&f, WIRE_TAG_STATUS_KIND, four, 4);
	fb_field(&f, WIRE_TAG_STATUS_CODE, big, 4);
	EXPECT_EQ(wire_decode_reply(f.b, fb_end(&f), &out), -EBADMSG);
	/* status code field of the wrong size */
	fb_begin(&f, WIRE_TYPE_REPLY, 0);
	fb_field(&f, WIRE_TAG_STATUS_KIND, four, 4);
	fb_field(&f, WIRE_TAG_STATUS_CODE, four, 3);
	EXPECT_EQ(wire_decode_reply(f.b, fb_end(&f), &out), -EBADMSG);
	/* unknown error kind */
	fb_begin(&f, WIRE_TYPE_REPLY, 0);
	fb_field(&f, WIRE_TAG_STATUS_KIND, kind_err, 4);
	fb_field(&f, WIRE_TAG_ERROR, err, 4);
	fb_str(&f, WIRE_TAG_MESSAGE, "x");
	EXPECT_EQ(wire_decode_reply(f.b, fb_end(&f), &out), -EBADMSG);
	/* a reply must not carry fds */
	fb_begin(&f, WIRE_TYPE_REPLY, 1);
	fb_field(&f, WIRE_TAG_STATUS_KIND, four, 4);
	fb_field(&f, WIRE_TAG_STATUS_CODE, four, 4);
	EXPECT_EQ(wire_decode_reply(f.b, fb_end(&f), &out), -EBADMSG);
	/* duplicate status */
	fb_begin(&f, WIRE_TYPE_REPLY, 0);
	fb_field(&f, WIRE_TAG_STATUS_KIND, four, 4);
	fb_field(&f, WIRE_TAG_STATUS_CODE, four, 4);
	fb_field(&f, WIRE_TAG_STATUS_CODE, four, 4);
	EXPECT_EQ(wire_decode_reply(f.b, fb_end(&f), &out), -EBADMSG);
}

TEST(encoder_refuses_what_decoder_would)
{
	char *nul_free_bad[] = { "\xc0\xaf" };
	struct wire_request in = { .token = "t", .tool = "git", .cwd = "/w", .args = nul_free_bad,
				   .n_args = 1 };
	size_t len;

	EXPECT_EQ(wire_encode_request(&in, buf, sizeof(buf), &len), -EINVAL);
	in.n_args = 0;
	in.cwd = NULL;
	EXPECT_EQ(wire_encode_request(&in, buf, sizeof(buf), &len), -EINVAL);
	in.cwd = "/w";
	EXPECT_EQ(wire_encode_request(&in, buf, 12, &len), -ENOBUFS);
}
