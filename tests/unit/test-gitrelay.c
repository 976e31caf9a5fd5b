/* SPDX-License-Identifier: MIT */
/* The git relay's pure parts: the WIRE_TYPE_GIT codec (round trip, every
 * refusal of the decoder on hand-built frames), URL validation and
 * normalisation, ref and object names, the remote-helper command lines and
 * the host git output the daemon reads back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gitrelay.h"
#include "macros.h"
#include "tap.h"
#include "wire_git.h"

static uint8_t buf[WIRE_MAX_FRAME];

#define OID1 "0123456789abcdef0123456789abcdef01234567"
#define OID2 "89abcdef0123456789abcdef0123456789abcdef"
#define OID256 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

TEST(wire_git_round_trip_push)
{
	struct wire_git_update ups[2] = {
		{ .src = OID1, .dst = "refs/heads/feature", .force = true },
		{ .src = "", .dst = "refs/heads/old", .delete_ref = true },
	};
	struct wire_git_request in = { .token = "tok", .op = WIRE_GIT_PUSH,
				       .url = "https://example.org/a/b.git", .reason = "why",
				       .updates = ups, .n_updates = 2 };
	struct wire_git_request out;
	size_t len;

	ASSERT_OK(wire_git_encode_request(&in, buf, sizeof(buf), &len));
	EXPECT_EQ(buf[1], WIRE_TYPE_GIT);
	EXPECT_EQ(buf[2], WIRE_GIT_FDS);
	ASSERT_OK(wire_git_decode_request(buf, len, WIRE_MAX_FRAME, &out));
	EXPECT_STREQ(out.token, "tok");
	EXPECT_EQ(out.op, WIRE_GIT_PUSH);
	EXPECT_STREQ(out.url, "https://example.org/a/b.git");
	EXPECT_STREQ(out.reason, "why");
	ASSERT_EQ(out.n_updates, 2);
	EXPECT_STREQ(out.updates[0].src, OID1);
	EXPECT_STREQ(out.updates[0].dst, "refs/heads/feature");
	EXPECT_TRUE(out.updates[0].force);
	EXPECT_FALSE(out.updates[0].delete_ref);
	EXPECT_STREQ(out.updates[1].src, "");
	EXPECT_TRUE(out.updates[1].delete_ref);
	wire_git_request_done(&out);
	/* trailing byte, truncation, wrong type, wrong fd count */
	EXPECT_ERR(wire_git_decode_request(buf, len - 1, WIRE_MAX_FRAME, &out), EBADMSG);
	buf[len] = 0;
	EXPECT_ERR(wire_git_decode_request(buf, len + 1, WIRE_MAX_FRAME, &out), EBADMSG);
	buf[2] = 2;
	EXPECT_ERR(wire_git_decode_request(buf, len, WIRE_MAX_FRAME, &out), EBADMSG);
	buf[2] = WIRE_GIT_FDS;
	buf[1] = WIRE_TYPE_REQUEST;
	EXPECT_ERR(wire_git_decode_request(buf, len, WIRE_MAX_FRAME, &out), EBADMSG);
	buf[1] = WIRE_TYPE_GIT;
	EXPECT_ERR(wire_git_decode_request(buf, len, 16, &out), EMSGSIZE);
}

TEST(wire_git_round_trip_fetch)
{
	char wants[2][WIRE_GIT_OID_MAX + 1] = { OID1, OID256 };
	char haves[1][WIRE_GIT_OID_MAX + 1] = { OID2 };
	struct wire_git_request in = { .token = "t", .op = WIRE_GIT_FETCH, .url = "h:x",
				       .wants = wants, .n_wants = 2, .haves = haves, .n_haves = 1 };
	struct wire_git_request out;
	size_t len;

	ASSERT_OK(wire_git_encode_request(&in, buf, sizeof(buf), &len));
	ASSERT_OK(wire_git_decode_request(buf, len, WIRE_MAX_FRAME, &out));
	ASSERT_EQ(out.n_wants, 2);
	EXPECT_STREQ(out.wants[1], OID256);
	ASSERT_EQ(out.n_haves, 1);
	EXPECT_STREQ(out.haves[0], OID2);
	EXPECT_TRUE(out.reason == NULL);
	wire_git_request_done(&out);
}

TEST(wire_git_flags_and_cloning)
{
	char wants[1][WIRE_GIT_OID_MAX + 1] = { OID1 };
	struct wire_git_update up = { .src = OID1, .dst = "refs/heads/a" };
	struct wire_git_request push = { .token = "t", .op = WIRE_GIT_PUSH, .url = "h:x",
					 .updates = &up, .n_updates = 1,
					 .flags = WIRE_GIT_FLAG_DRY_RUN | WIRE_GIT_FLAG_ATOMIC };
	struct wire_git_request fetch = { .token = "t", .op = WIRE_GIT_FETCH, .url = "h:x",
					  .wants = wants, .n_wants = 1, .cloning = true };
	struct wire_git_request out;
	size_t len;

	ASSERT_OK(wire_git_encode_request(&push, buf, sizeof(buf), &len));
	ASSERT_OK(wire_git_decode_request(buf, len, WIRE_MAX_FRAME, &out));
	EXPECT_EQ(out.flags, WIRE_GIT_FLAG_DRY_RUN | WIRE_GIT_FLAG_ATOMIC);
	EXPECT_FALSE(out.cloning);
	wire_git_request_done(&out);
	ASSERT_OK(wire_git_encode_request(&fetch, buf, sizeof(buf), &len));
	ASSERT_OK(wire_git_decode_request(buf, len, WIRE_MAX_FRAME, &out));
	EXPECT_TRUE(out.cloning);
	EXPECT_EQ(out.flags, 0);
	wire_git_request_done(&out);
	/* the encoder refuses what the decoder would */
	push.flags = 0x80;
	EXPECT_ERR(wire_git_encode_request(&push, buf, sizeof(buf), &len), EINVAL);
	push.flags = WIRE_GIT_FLAG_DRY_RUN;
	push.cloning = true;
	EXPECT_ERR(wire_git_encode_request(&push, buf, sizeof(buf), &len), EINVAL);
	fetch.flags = WIRE_GIT_FLAG_DRY_RUN;
	EXPECT_ERR(wire_git_encode_request(&fetch, buf, sizeof(buf), &len), EINVAL);
	/* flags on a fetch, unknown bits, twice: refused by the decoder
	 * (hand-built: the encoder will not write them) */
	fetch.flags = 0;
	fetch.cloning = false;
	ASSERT_OK(wire_git_encode_request(&fetch, buf, sizeof(buf), &len));
	{
		static const uint8_t bad[][9] = {
			{ WIRE_TAG_GIT_FLAGS, 0, 0, 0, 4, 0, 0, 0, 1 },    /* flags on a fetch */
			{ WIRE_TAG_GIT_FLAGS, 0, 0, 0, 4, 0, 0, 0, 0x10 }, /* unknown bit */
			{ WIRE_TAG_GIT_FLAGS, 0, 0, 0, 3, 0, 0, 1, 0 },    /* short */
		};
		uint8_t f2[WIRE_MAX_FRAME];

		for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
			size_t n = (size_t)bad[i][4] + 5;

			memcpy(f2, buf, len);
			memcpy(f2 + len, bad[i], n);
			f2[4] = (uint8_t)((len + n - WIRE_HEADER_SIZE) >> 24);
			f2[5] = (uint8_t)((len + n - WIRE_HEADER_SIZE) >> 16);
			f2[6] = (uint8_t)((len + n - WIRE_HEADER_SIZE) >> 8);
			f2[7] = (uint8_t)(len + n - WIRE_HEADER_SIZE);
			EXPECT_ERR(wire_git_decode_request(f2, len + n, WIRE_MAX_FRAME, &out), EBADMSG);
		}
	}
}

TEST(wire_git_encoder_refuses)
{
	struct wire_git_update bad_ref = { .src = OID1, .dst = "refs/heads/a..b" };
	struct wire_git_update del_src = { .src = OID1, .dst = "refs/heads/a", .delete_ref = true };
	struct wire_git_update no_src = { .src = "", .dst = "refs/heads/a" };
	struct wire_git_update upper = { .src = "0123456789ABCDEF0123456789abcdef01234567",
					 .dst = "refs/heads/a" };
	char wants[1][WIRE_GIT_OID_MAX + 1] = { OID1 };
	struct wire_git_request r = { .token = "t", .op = WIRE_GIT_PUSH, .url = "h:x" };
	size_t len;

	r.updates = &bad_ref, r.n_updates = 1;
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), EINVAL);
	r.updates = &del_src;
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), EINVAL);
	r.updates = &no_src;
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), EINVAL);
	r.updates = &upper;
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), EINVAL);
	r.op = WIRE_GIT_LIST;
	r.updates = NULL, r.n_updates = 0;
	r.wants = wants, r.n_wants = 1;
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), EINVAL);
	r.wants = NULL, r.n_wants = 0;
	r.url = "";
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), EINVAL);
	r.url = "h:x";
	r.op = WIRE_GIT_OP_MAX;
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), EINVAL);
	r.op = WIRE_GIT_LIST;
	r.n_haves = WIRE_GIT_MAX_HAVES + 1;
	EXPECT_ERR(wire_git_encode_request(&r, buf, sizeof(buf), &len), E2BIG);
	r.n_haves = 0;
	EXPECT_ERR(wire_git_encode_request(&r, buf, 12, &len), ENOBUFS);
}

/* Hand-built frames: what the encoder would never produce. */
static size_t frame(uint8_t *b, const uint8_t *payload, size_t n)
{
	b[0] = WIRE_VERSION;
	b[1] = WIRE_TYPE_GIT;
	b[2] = WIRE_GIT_FDS;
	b[3] = 0;
	b[4] = (uint8_t)(n >> 24);
	b[5] = (uint8_t)(n >> 16);
	b[6] = (uint8_t)(n >> 8);
	b[7] = (uint8_t)n;
	memcpy(b + 8, payload, n);
	return n + 8;
}

static size_t field(uint8_t *p, uint8_t tag, const void *v, size_t n)
{
	p[0] = tag;
	p[1] = (uint8_t)(n >> 24);
	p[2] = (uint8_t)(n >> 16);
	p[3] = (uint8_t)(n >> 8);
	p[4] = (uint8_t)n;
	memcpy(p + 5, v, n);
	return n + 5;
}

static size_t base(uint8_t *p, uint32_t op)
{
	uint8_t opb[4] = { 0, 0, 0, (uint8_t)op };
	size_t n = 0;

	n += field(p + n, WIRE_TAG_GIT_TOKEN, "t", 1);
	n += field(p + n, WIRE_TAG_GIT_OP, opb, 4);
	n += field(p + n, WIRE_TAG_GIT_URL, "h:x", 3);
	return n;
}

TEST(wire_git_decoder_refuses_hand_built)
{
	static uint8_t p[8192];
	struct wire_git_request out;
	uint8_t up[64];
	size_t n;

	n = base(p, WIRE_GIT_LIST);
	ASSERT_OK(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out));
	wire_git_request_done(&out);
	/* unknown optional tag skipped, unknown required tag refused */
	n = base(p, WIRE_GIT_LIST);
	n += field(p + n, 0xaf, "x", 1);
	ASSERT_OK(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out));
	wire_git_request_done(&out);
	n = base(p, WIRE_GIT_LIST);
	n += field(p + n, 0x2f, "x", 1);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	/* duplicate url, op out of range, op of the wrong size */
	n = base(p, WIRE_GIT_LIST);
	n += field(p + n, WIRE_TAG_GIT_URL, "h:y", 3);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	n = base(p, WIRE_GIT_OP_MAX);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	n = field(p, WIRE_TAG_GIT_TOKEN, "t", 1);
	n += field(p + n, WIRE_TAG_GIT_OP, "\0\0\0", 3);
	n += field(p + n, WIRE_TAG_GIT_URL, "h:x", 3);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	/* missing token */
	n = base(p, WIRE_GIT_LIST);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p + 6, n - 6), WIRE_MAX_FRAME, &out),
		   EBADMSG);
	/* an update in a fetch; a want in a push */
	up[0] = 0;
	up[1] = 40;
	memcpy(up + 2, OID1, 40);
	memcpy(up + 42, "refs/heads/a", 12);
	n = base(p, WIRE_GIT_FETCH);
	n += field(p + n, WIRE_TAG_GIT_UPDATE, up, 54);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	n = base(p, WIRE_GIT_PUSH);
	n += field(p + n, WIRE_TAG_GIT_UPDATE, up, 54);
	ASSERT_OK(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out));
	wire_git_request_done(&out);
	n = base(p, WIRE_GIT_PUSH);
	n += field(p + n, WIRE_TAG_GIT_WANT, OID1, 40);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	/* unknown flag bit; NUL inside the ref; source length past the value */
	up[0] = 0x04;
	n = base(p, WIRE_GIT_PUSH);
	n += field(p + n, WIRE_TAG_GIT_UPDATE, up, 54);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	up[0] = 0;
	up[47] = '\0';
	n = base(p, WIRE_GIT_PUSH);
	n += field(p + n, WIRE_TAG_GIT_UPDATE, up, 54);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	up[47] = 's';
	up[1] = 60;
	n = base(p, WIRE_GIT_PUSH);
	n += field(p + n, WIRE_TAG_GIT_UPDATE, up, 54);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	/* a bad want */
	n = base(p, WIRE_GIT_FETCH);
	n += field(p + n, WIRE_TAG_GIT_WANT, OID1 "0", 41);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	/* invalid UTF-8 in the URL */
	n = field(p, WIRE_TAG_GIT_TOKEN, "t", 1);
	n += field(p + n, WIRE_TAG_GIT_OP, "\0\0\0\0", 4);
	n += field(p + n, WIRE_TAG_GIT_URL, "h:\xff", 3);
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
	/* a field header running past the end */
	n = base(p, WIRE_GIT_LIST);
	n += field(p + n, WIRE_TAG_GIT_REASON, "abc", 3);
	p[n - 4] = 9;
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), EBADMSG);
}

TEST(wire_git_too_many_wants)
{
	static uint8_t p[WIRE_MAX_FRAME];
	struct wire_git_request out;
	size_t n = base(p, WIRE_GIT_FETCH);

	for (size_t i = 0; i <= WIRE_GIT_MAX_WANTS; i++)
		n += field(p + n, WIRE_TAG_GIT_WANT, OID1, 40);
	ASSERT_LT(n + 8, sizeof(buf));
	EXPECT_ERR(wire_git_decode_request(buf, frame(buf, p, n), WIRE_MAX_FRAME, &out), E2BIG);
}

struct name_case {
	const char *s;
	bool ok;
};

TEST(refnames)
{
	static const struct name_case cases[] = {
		{ "refs/heads/main", true },      { "refs/heads/feature/x-1", true },
		{ "refs/tags/v1.0", true },       { "refs/heads/a@b", true },
		{ "refs/heads/ü", true },         { "main", false },
		{ "refs/", false },               { "refs/heads/", false },
		{ "refs/heads//x", false },       { "refs/heads/a..b", false },
		{ "refs/heads/.x", false },       { "refs/heads/x.lock", false },
		{ "refs/heads/x.", false },       { "refs/heads/a b", false },
		{ "refs/heads/a~1", false },      { "refs/heads/a^", false },
		{ "refs/heads/a:b", false },      { "refs/heads/a?", false },
		{ "refs/heads/a*", false },       { "refs/heads/a[", false },
		{ "refs/heads/a\\b", false },     { "refs/heads/a@{1}", false },
		{ "refs/heads/\x01", false },     { "refs/heads/\x7f", false },
		{ "HEAD", false },                { "refs/heads/\xc0\xaf", false },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		if (wire_git_refname_valid(cases[i].s) != cases[i].ok) {
			printf("#   '%s': want %s\n", cases[i].s, cases[i].ok ? "valid" : "invalid");
			EXPECT_TRUE(false);
		}
	EXPECT_FALSE(wire_git_refname_valid(NULL));
	EXPECT_TRUE(wire_git_oid_valid(OID1, 40));
	EXPECT_TRUE(wire_git_oid_valid(OID256, 64));
	EXPECT_FALSE(wire_git_oid_valid(OID1, 39));
	EXPECT_FALSE(wire_git_oid_valid("0123456789abcdef0123456789abcdef0123456g", 40));
	EXPECT_FALSE(wire_git_oid_valid("0123456789ABCDEF0123456789abcdef01234567", 40));
}

struct url_case {
	const char *url;
	int err;             /* 0: accepted */
	const char *canonical;
	enum gitrelay_scheme scheme;
};

TEST(urls)
{
	static const struct url_case cases[] = {
		{ "https://github.com/acme/x.git", 0, "https://github.com/acme/x.git", GITRELAY_HTTPS },
		{ "HTTPS://GitHub.COM/Acme/X", 0, "https://github.com/Acme/X", GITRELAY_HTTPS },
		{ "https://github.com:443/acme/x", 0, "https://github.com/acme/x", GITRELAY_HTTPS },
		{ "https://git.example.org:8443/a/b/", 0, "https://git.example.org:8443/a/b/",
		  GITRELAY_HTTPS },
		{ "https://github.com./acme/x", 0, "https://github.com/acme/x", GITRELAY_HTTPS },
		{ "https://127.0.0.1:4443/r.git", 0, "https://127.0.0.1:4443/r.git", GITRELAY_HTTPS },
		{ "ssh://git@github.com/acme/x", 0, "ssh://git@github.com/acme/x", GITRELAY_SSH },
		{ "ssh://git@github.com:22/acme/x", 0, "ssh://git@github.com/acme/x", GITRELAY_SSH },
		{ "git+ssh://h.example:2222/~u/r", 0, "ssh://h.example:2222/~u/r", GITRELAY_SSH },
		{ "git@github.com:acme/x.git", 0, "git@github.com:acme/x.git", GITRELAY_SCP },
		{ "github.com:acme/x", 0, "github.com:acme/x", GITRELAY_SCP },
		{ "host.example:/srv/r.git", 0, "host.example:/srv/r.git", GITRELAY_SCP },
		/* refused schemes and transports */
		{ "git://example.org/r.git", -EPROTONOSUPPORT, NULL, 0 },
		{ "http://example.org/r.git", -EPROTONOSUPPORT, NULL, 0 },
		{ "file:///srv/r.git", -EPROTONOSUPPORT, NULL, 0 },
		{ "ftp://example.org/r", -EPROTONOSUPPORT, NULL, 0 },
		{ "ext::sh -c touch% /tmp/x", -EINVAL, NULL, 0 },
		{ "ext::x", -EPROTONOSUPPORT, NULL, 0 },
		{ "fd::3", -EPROTONOSUPPORT, NULL, 0 },
		{ "fd::3/4", -EPROTONOSUPPORT, NULL, 0 },
		/* credentials */
		{ "https://user:tok@github.com/acme/x", -EACCES, NULL, 0 },
		{ "https://tok@github.com/acme/x", -EACCES, NULL, 0 },
		{ "ssh://git:pw@github.com/acme/x", -EACCES, NULL, 0 },
		{ "ssh://-oProxyCommand@h/x", -EACCES, NULL, 0 },
		{ "-oProxyCommand=x@h:r", -EINVAL, NULL, 0 },
		/* local paths and options */
		{ "/srv/git/r.git", -EINVAL, NULL, 0 },
		{ "./r", -EINVAL, NULL, 0 },
		{ "../r", -EINVAL, NULL, 0 },
		{ "r.git", -EINVAL, NULL, 0 },
		{ "~/r.git", -EINVAL, NULL, 0 },
		{ "a/b:c", -EINVAL, NULL, 0 },
		{ "c:repo", -EINVAL, NULL, 0 },
		{ "-h:x", -EINVAL, NULL, 0 },
		{ "ssh://-h/x", -EINVAL, NULL, 0 },
		{ "h:-x", -EINVAL, NULL, 0 },
		{ "https://h/-x", -EINVAL, NULL, 0 },
		{ "https://h/a/-x", -EINVAL, NULL, 0 },
		/* malformed */
		{ "", -EINVAL, NULL, 0 },
		{ "https://", -EINVAL, NULL, 0 },
		{ "https://h", -EINVAL, NULL, 0 },
		{ "https://h/", -EINVAL, NULL, 0 },
		{ "https://[::1]/x", -EINVAL, NULL, 0 },
		{ "https://h..x/a", -EINVAL, NULL, 0 },
		{ "https://h-/a", -EINVAL, NULL, 0 },
		{ "https://h:0/a", -EINVAL, NULL, 0 },
		{ "https://h:65536/a", -EINVAL, NULL, 0 },
		{ "https://h:08/a", -EINVAL, NULL, 0 },
		{ "https://h:/a", -EINVAL, NULL, 0 },
		{ "https://h/a/../b", -EINVAL, NULL, 0 },
		{ "https://h/a/./b", -EINVAL, NULL, 0 },
		{ "https://h//a", -EINVAL, NULL, 0 },
		{ "https://h/a%2e", -EINVAL, NULL, 0 },
		{ "https://h/a?x", -EINVAL, NULL, 0 },
		{ "https://h/a#x", -EINVAL, NULL, 0 },
		{ "https://h/a b", -EINVAL, NULL, 0 },
		{ "https://h/a\nb", -EINVAL, NULL, 0 },
		{ "https://h/a;b", -EINVAL, NULL, 0 },
		{ "https://h/a$b", -EINVAL, NULL, 0 },
		{ "https://h\\@e/a", -EINVAL, NULL, 0 },
		{ "https://h_x/a", -EINVAL, NULL, 0 },
		{ "https://h/\xc3\xbc", -EINVAL, NULL, 0 },
		{ "h:a:b", -EINVAL, NULL, 0 },
		{ "u@v@h:a", -EINVAL, NULL, 0 },
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		const struct url_case *c = &cases[i];
		struct gitrelay_url u;
		int r = gitrelay_url_parse(c->url, &u);

		if (r != c->err || (r == 0 && (strcmp(u.canonical, c->canonical) != 0 ||
					       u.scheme != c->scheme))) {
			printf("#   '%s': got %d '%s', want %d '%s'\n", c->url, r,
			       r == 0 ? u.canonical : "", c->err, c->canonical ? c->canonical : "");
			EXPECT_TRUE(false);
		}
	}
	{
		char big[WIRE_GIT_MAX_URL + 8];
		struct gitrelay_url u;

		memset(big, 'a', sizeof(big));
		memcpy(big, "https://h/", 10);
		big[sizeof(big) - 1] = '\0';
		EXPECT_ERR(gitrelay_url_parse(big, &u), ENAMETOOLONG);
		EXPECT_ERR(gitrelay_url_parse(NULL, &u), EINVAL);
	}
}

TEST(helper_commands)
{
	struct gitrelay_cmd c;
	char l1[] = "capabilities", l2[] = "list", l3[] = "list for-push", l4[] = "",
	     l5[] = "option verbosity 1", l6[] = "fetch " OID1 " refs/heads/main",
	     l7[] = "push +refs/heads/a:refs/heads/b", l8[] = "push :refs/heads/gone",
	     l9[] = "push HEAD~1:refs/heads/x", b1[] = "fetch zzz refs/heads/x",
	     b2[] = "push refs/heads/a:main", b3[] = "push --exec=x:refs/heads/a",
	     b4[] = "connect git-upload-pack", b5[] = "bogus", b6[] = "option x",
	     b7[] = "push refs/heads/a", b8[] = "stateless-connect git-upload-pack",
	     b9[] = "fetch " OID1;

	ASSERT_OK(gitrelay_parse_cmd(l1, &c));
	EXPECT_EQ(c.kind, GITRELAY_CMD_CAPABILITIES);
	ASSERT_OK(gitrelay_parse_cmd(l2, &c));
	EXPECT_EQ(c.kind, GITRELAY_CMD_LIST);
	ASSERT_OK(gitrelay_parse_cmd(l3, &c));
	EXPECT_EQ(c.kind, GITRELAY_CMD_LIST_FOR_PUSH);
	ASSERT_OK(gitrelay_parse_cmd(l4, &c));
	EXPECT_EQ(c.kind, GITRELAY_CMD_END);
	ASSERT_OK(gitrelay_parse_cmd(l5, &c));
	EXPECT_EQ(c.kind, GITRELAY_CMD_OPTION);
	EXPECT_STREQ(c.name, "verbosity");
	EXPECT_STREQ(c.value, "1");
	ASSERT_OK(gitrelay_parse_cmd(l6, &c));
	EXPECT_EQ(c.kind, GITRELAY_CMD_FETCH);
	EXPECT_STREQ(c.oid, OID1);
	EXPECT_STREQ(c.name, "refs/heads/main");
	ASSERT_OK(gitrelay_parse_cmd(l7, &c));
	EXPECT_EQ(c.kind, GITRELAY_CMD_PUSH);
	EXPECT_TRUE(c.force);
	EXPECT_STREQ(c.src, "refs/heads/a");
	EXPECT_STREQ(c.dst, "refs/heads/b");
	ASSERT_OK(gitrelay_parse_cmd(l8, &c));
	EXPECT_STREQ(c.src, "");
	EXPECT_FALSE(c.force);
	EXPECT_STREQ(c.dst, "refs/heads/gone");
	ASSERT_OK(gitrelay_parse_cmd(l9, &c));
	EXPECT_STREQ(c.src, "HEAD~1");
	EXPECT_ERR(gitrelay_parse_cmd(b1, &c), EINVAL);
	EXPECT_ERR(gitrelay_parse_cmd(b2, &c), EINVAL);
	EXPECT_ERR(gitrelay_parse_cmd(b3, &c), EINVAL);
	EXPECT_ERR(gitrelay_parse_cmd(b4, &c), EOPNOTSUPP);
	EXPECT_ERR(gitrelay_parse_cmd(b5, &c), EINVAL);
	EXPECT_ERR(gitrelay_parse_cmd(b6, &c), EINVAL);
	EXPECT_ERR(gitrelay_parse_cmd(b7, &c), EINVAL);
	EXPECT_ERR(gitrelay_parse_cmd(b8, &c), EOPNOTSUPP);
	EXPECT_ERR(gitrelay_parse_cmd(b9, &c), EINVAL);
}

TEST(reflists)
{
	static const char out[] = "ref: refs/heads/main\tHEAD\n" OID1 "\tHEAD\n" OID1
				  "\trefs/heads/main\n" OID2 "\trefs/tags/v1\n" OID1
				  "\trefs/tags/v1^{}\n" OID2 "\trefs/pull/1/head\n" OID2
				  "\trefs/heads/a..b\n";
	struct gitrelay_reflist l;
	char fmt[1024];
	size_t n;

	ASSERT_OK(gitrelay_parse_reflist(out, sizeof(out) - 1, &l));
	ASSERT_EQ(l.n, 2);
	EXPECT_STREQ(l.refs[0].name, "refs/heads/main");
	EXPECT_STREQ(l.refs[1].name, "refs/tags/v1");
	EXPECT_STREQ(l.head_symref, "refs/heads/main");
	EXPECT_STREQ(l.head_oid, OID1);
	EXPECT_TRUE(gitrelay_reflist_find(&l, "refs/tags/v1") == &l.refs[1]);
	EXPECT_TRUE(gitrelay_reflist_find(&l, "refs/heads/x") == NULL);
	ASSERT_OK(gitrelay_format_list(&l, fmt, sizeof(fmt), &n));
	fmt[n] = '\0';
	EXPECT_STREQ(fmt, OID1 " refs/heads/main\n" OID2 " refs/tags/v1\n@refs/heads/main HEAD\n\n");
	EXPECT_ERR(gitrelay_format_list(&l, fmt, 20, &n), ENOBUFS);
	gitrelay_reflist_done(&l);

	ASSERT_OK(gitrelay_parse_reflist("", 0, &l));
	ASSERT_OK(gitrelay_format_list(&l, fmt, sizeof(fmt), &n));
	EXPECT_EQ(n, 1);
	gitrelay_reflist_done(&l);
	EXPECT_ERR(gitrelay_parse_reflist("garbage\n", 8, &l), EBADMSG);
	EXPECT_ERR(gitrelay_parse_reflist("xyz\trefs/heads/a\n", 17, &l), EBADMSG);
}

TEST(push_status)
{
	static const char out[] = "To https://h/r\n"
				  " \trefs/heads/a:refs/heads/a\tabc..def\n"
				  "!\t" OID1 ":refs/heads/main\t[rejected] (non-fast-forward)\n"
				  "!\tx:refs/heads/p\t[remote rejected] (pre-receive hook\x1b declined)\n"
				  "Done\n";
	char why[GITRELAY_MAX_REASON];
	bool ok = false;

	EXPECT_EQ(gitrelay_push_status(out, sizeof(out) - 1, "refs/heads/a", &ok, why, sizeof(why)), 1);
	EXPECT_TRUE(ok);
	EXPECT_EQ(gitrelay_push_status(out, sizeof(out) - 1, "refs/heads/main", &ok, why,
				       sizeof(why)),
		  1);
	EXPECT_FALSE(ok);
	EXPECT_STREQ(why, "non-fast-forward");
	EXPECT_EQ(gitrelay_push_status(out, sizeof(out) - 1, "refs/heads/p", &ok, why, sizeof(why)), 1);
	EXPECT_STREQ(why, "pre-receive hook? declined");
	EXPECT_EQ(gitrelay_push_status(out, sizeof(out) - 1, "refs/heads/q", &ok, why, sizeof(why)), 0);
}

TEST(pack_header)
{
	char h[GITRELAY_PACK_HDR_MAX + 8];
	uint64_t p = 0, x = 0;
	size_t hl = 0;
	int k = gitrelay_pack_header(h, sizeof(h), 2396417, 841072);

	EXPECT_EQ(k, (int)strlen(GITRELAY_PACK_MAGIC "2396417 841072\n"));
	EXPECT_EQ(gitrelay_parse_pack_header(h, (size_t)k, &p, &x, &hl), 1);
	EXPECT_EQ(p, 2396417);
	EXPECT_EQ(x, 841072);
	EXPECT_EQ(hl, (size_t)k);
	/* the largest sizes fit the header bound */
	k = gitrelay_pack_header(h, sizeof(h), GITRELAY_MAX_PACK, GITRELAY_MAX_PACK);
	EXPECT_TRUE(k > 0 && k <= GITRELAY_PACK_HDR_MAX);
	EXPECT_EQ(gitrelay_parse_pack_header(h, (size_t)k, &p, &x, &hl), 1);
	EXPECT_ERR(gitrelay_pack_header(h, sizeof(h), GITRELAY_MAX_PACK + 1, 1), EINVAL);
	EXPECT_ERR(gitrelay_pack_header(h, sizeof(h), 0, 1), EINVAL);
	EXPECT_ERR(gitrelay_pack_header(h, 10, 1, 1), ENOBUFS);
	/* a bundle is not a relay pack */
	EXPECT_EQ(gitrelay_parse_pack_header("# v2 git bundle\n", 16, &p, &x, &hl), 0);
	EXPECT_EQ(gitrelay_parse_pack_header("", 0, &p, &x, &hl), 0);
	{
		static const char *const bad[] = {
			GITRELAY_PACK_MAGIC "1 2",         /* no newline */
			GITRELAY_PACK_MAGIC "01 2\n",      /* leading zero */
			GITRELAY_PACK_MAGIC "0 2\n",       /* empty pack */
			GITRELAY_PACK_MAGIC "1  2\n",      /* two spaces */
			GITRELAY_PACK_MAGIC "-1 2\n",      /* sign */
			GITRELAY_PACK_MAGIC "1 2 3\n",     /* a third field */
			GITRELAY_PACK_MAGIC "1\n",         /* one field */
			GITRELAY_PACK_MAGIC "8589934593 1\n", /* over GITRELAY_MAX_PACK */
			GITRELAY_PACK_MAGIC "99999999999999999999999 1\n",
			GITRELAY_PACK_MAGIC "1 2\r\n",
		};

		for (size_t i = 0; i < ELEMENTSOF(bad); i++)
			EXPECT_ERR(gitrelay_parse_pack_header(bad[i], strlen(bad[i]), &p, &x, &hl),
				   EBADMSG);
	}
}

TEST(pack_name)
{
	uint8_t ph[GITRELAY_PACK_HEAD] = { 'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 3 };
	uint8_t ih[GITRELAY_IDX_HEAD] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	uint8_t sum[32], it[64];
	char name[65];
	const uint64_t idx_min = GITRELAY_IDX_HEAD + 1024 + 40;

	for (size_t i = 0; i < sizeof(sum); i++)
		sum[i] = (uint8_t)(0xa0 + i);
	memcpy(it, sum, 20);
	memset(it + 20, 0x55, 20);
	ASSERT_OK(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min, 20, name));
	EXPECT_STREQ(name, "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3");
	ph[7] = 3; /* version 3 packs exist */
	ASSERT_OK(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min, 20, name));
	ph[7] = 4;
	EXPECT_ERR(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min, 20, name), EBADMSG);
	ph[7] = 2;
	/* too small for what they claim to be */
	EXPECT_ERR(gitrelay_pack_name(ph, sum, 31, ih, it, idx_min, 20, name), EBADMSG);
	EXPECT_ERR(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min - 1, 20, name), EBADMSG);
	/* the index names another pack */
	it[3] ^= 1;
	EXPECT_ERR(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min, 20, name), EBADMSG);
	it[3] ^= 1;
	/* index version 1 or garbage, a pack that is not one */
	ih[7] = 1;
	EXPECT_ERR(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min, 20, name), EBADMSG);
	ih[7] = 2;
	ph[0] = 'p';
	EXPECT_ERR(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min, 20, name), EBADMSG);
	ph[0] = 'P';
	EXPECT_ERR(gitrelay_pack_name(ph, sum, 32, ih, it, idx_min, 21, name), EBADMSG);
	/* SHA-256 */
	memcpy(it, sum, 32);
	ASSERT_OK(gitrelay_pack_name(ph, sum, 44, ih, it, idx_min + 24, 32, name));
	EXPECT_EQ(strlen(name), 64);
}
