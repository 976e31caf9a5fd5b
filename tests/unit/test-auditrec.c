/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "auditrec.h"
#include "psqltarget.h"
#include "macros.h"
#include "tap.h"

#define N_LINES 6

static char *lines[N_LINES];
static size_t lens[N_LINES];

static void build(void)
{
	static const char *const argv[] = { "git", "commit", "-m", "evil\x1b[2J\x1b]0;x\x07\nline2\t\xc2\x9b\x31m" };
	struct auditrec_chain c;

	auditrec_chain_init(&c);
	for (int i = 0; i < N_LINES; i++) {
		char id[16];

		(void)snprintf(id, sizeof(id), "r%d", i / 2);
		if (i % 2 == 0) {
			struct auditrec_decision d = {
				.id = id, .ts = { .tv_sec = 1700000000 + i, .tv_nsec = 123456789 },
				.peer_uid = 1000, .peer_gid = 1000, .peer_pid = 4242,
				.tool = "git", .argv = argv, .argc = ELEMENTSOF(argv),
				.container_cwd = "/workspace", .host_cwd = "/home/u/p",
				.destination = "https://github.com/acme/x", .reason = "fix/bug",
				.allow = true, .decision_reason = "ok", .rule = "policy.conf:3",
				.backend = "static",
			};
			ASSERT_OK(auditrec_format_decision(&c, &d, &lines[i], &lens[i]));
		} else {
			struct auditrec_end e = { .id = id, .ts = { .tv_sec = 1700000001 + i },
						  .outcome = "exited", .code = 1, .duration_ms = 12 };
			ASSERT_OK(auditrec_format_end(&c, &e, &lines[i], &lens[i]));
		}
		auditrec_chain_advance(&c, lines[i], lens[i]);
	}
}

/* Writes the given line order (indices; -1 = a foreign line) to a memfd and
 * verifies it. */
static int verify_order(const int *order, size_t n, const char *extra,
			struct auditrec_verify_result *res)
{
	int fd = memfd_create("audit", MFD_CLOEXEC);
	int r;

	ASSERT_TRUE(fd >= 0);
	for (size_t i = 0; i < n; i++) {
		const char *l = order[i] < 0 ? extra : lines[order[i]];
		size_t len = order[i] < 0 ? strlen(extra) : lens[order[i]];

		ASSERT_EQ(write(fd, l, len), (ssize_t)len);
	}
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	r = auditrec_verify_fd(fd, res);
	close(fd);
	return r;
}

TEST(chain_verifies)
{
	const int order[] = { 0, 1, 2, 3, 4, 5 };
	struct auditrec_verify_result res;

	build();
	ASSERT_OK(verify_order(order, N_LINES, NULL, &res));
	EXPECT_EQ(res.n_lines, N_LINES);
	EXPECT_EQ(res.bad_line, 0);
	EXPECT_EQ(res.torn_bytes, 0);
	ASSERT_TRUE(strncmp(lines[0], "{\"seq\":1,\"prev\":\"" AUDITREC_GENESIS "\"",
			    sizeof("{\"seq\":1,\"prev\":\"" AUDITREC_GENESIS "\"") - 1) == 0);
}

TEST(empty_log_verifies)
{
	struct auditrec_verify_result res;

	ASSERT_OK(verify_order(NULL, 0, NULL, &res));
	EXPECT_EQ(res.n_lines, 0);
}

TEST(deletion_is_detected)
{
	const int order[] = { 0, 1, 3, 4, 5 };
	struct auditrec_verify_result res;

	build();
	ASSERT_EQ(verify_order(order, ELEMENTSOF(order), NULL, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 3);
	EXPECT_EQ(res.n_lines, 2);
	/* deleting the first line */
	ASSERT_EQ(verify_order(order + 2, 3, NULL, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 1);
}

TEST(reordering_is_detected)
{
	const int order[] = { 0, 2, 1, 3, 4, 5 };
	struct auditrec_verify_result res;

	build();
	ASSERT_EQ(verify_order(order, N_LINES, NULL, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 2);
}

TEST(insertion_is_detected)
{
	const int order[] = { 0, 1, 2, -1, 3, 4, 5 };
	const int dup[] = { 0, 1, 2, 2, 3, 4, 5 };
	struct auditrec_verify_result res;
	char *forged;

	build();
	/* a forged line copying line 4's prev and seq verifies in its place, but
	 * the genuine line after it no longer does */
	forged = strdup(lines[3]);
	ASSERT_NOT_NULL(forged);
	strstr(forged, "\"code\":1")[7] = '0';
	ASSERT_EQ(verify_order(order, ELEMENTSOF(order), forged, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 5);
	ASSERT_EQ(verify_order(dup, ELEMENTSOF(dup), NULL, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 4);
	free(forged);
}

TEST(edit_is_detected)
{
	const int order[] = { 0, 1, 2, 3, 4, 5 };
	struct auditrec_verify_result res;
	char *p;

	build();
	/* flip the verdict of line 3: line 3 still parses, line 4's prev breaks */
	p = strstr(lines[2], "\"allow\"");
	ASSERT_NOT_NULL(p);
	p[1] = 'A';
	ASSERT_EQ(verify_order(order, N_LINES, NULL, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 4);
	/* an edit that breaks the JSON is reported on its own line */
	build();
	lines[1][0] = '[';
	ASSERT_EQ(verify_order(order, N_LINES, NULL, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 2);
	/* an edited seq */
	build();
	p = strstr(lines[4], "\"seq\":5");
	ASSERT_NOT_NULL(p);
	p[6] = '7';
	ASSERT_EQ(verify_order(order, N_LINES, NULL, &res), -EBADMSG);
	EXPECT_EQ(res.bad_line, 5);
}

TEST(torn_last_line_is_not_an_error)
{
	const int order[] = { 0, 1, 2, -1 };
	struct auditrec_verify_result res;
	char torn[40];

	build();
	memcpy(torn, lines[3], 39);
	torn[39] = '\0';
	ASSERT_OK(verify_order(order, ELEMENTSOF(order), torn, &res));
	EXPECT_EQ(res.n_lines, 3);
	EXPECT_EQ(res.torn_bytes, 39);
}

TEST(control_characters_are_escaped_and_no_secrets)
{
	build();
	for (int i = 0; i < N_LINES; i++) {
		for (size_t k = 0; k + 1 < lens[i]; k++)
			ASSERT_TRUE((unsigned char)lines[i][k] >= 0x20);
		ASSERT_EQ(lines[i][lens[i] - 1], '\n');
	}
	EXPECT_TRUE(strstr(lines[0], "evil\\u001b[2J\\u001b]0;x\\u0007\\nline2\\t") != NULL);
	EXPECT_TRUE(strstr(lines[0], "\"destination\":\"https://github.com/acme/x\"") != NULL);
	EXPECT_TRUE(strstr(lines[0], "fix/bug") != NULL); /* no \/ escaping */
}

TEST(resume_continues_the_chain)
{
	struct auditrec_chain a, b;

	build();
	auditrec_chain_init(&a);
	for (int i = 0; i < N_LINES; i++)
		auditrec_chain_advance(&a, lines[i], lens[i]);
	ASSERT_OK(auditrec_chain_resume(&b, lines[N_LINES - 1], lens[N_LINES - 1]));
	EXPECT_EQ(b.seq, a.seq);
	EXPECT_STREQ(b.prev, a.prev);
	EXPECT_EQ(auditrec_chain_resume(&b, "garbage", 7), -EBADMSG);
	EXPECT_EQ(auditrec_chain_resume(&b, "{\"x\":1}", 7), -EBADMSG);
}

TEST(recovery_record_chains)
{
	const int order[] = { 0, 1, -1 };
	struct auditrec_recovery rec = { .ts = { .tv_sec = 1 }, .torn_bytes = 17 };
	struct auditrec_verify_result res;
	struct auditrec_chain c;
	char *line;
	size_t len;

	build();
	ASSERT_OK(auditrec_chain_resume(&c, lines[1], lens[1]));
	ASSERT_OK(auditrec_format_recovery(&c, &rec, &line, &len));
	ASSERT_OK(verify_order(order, ELEMENTSOF(order), line, &res));
	EXPECT_EQ(res.n_lines, 3);
	free(line);
}

TEST(human_format_escapes_terminal_controls)
{
	char *h = NULL;

	build();
	ASSERT_OK(auditrec_format_human(lines[0], lens[0], &h));
	for (size_t k = 0; h[k]; k++) {
		ASSERT_TRUE((unsigned char)h[k] >= 0x20 && (unsigned char)h[k] != 0x7f);
		ASSERT_FALSE((unsigned char)h[k] == 0xc2 && (unsigned char)h[k + 1] == 0x9b);
	}
	EXPECT_TRUE(strstr(h, "ALLOW") != NULL);
	EXPECT_TRUE(strstr(h, "\\x1b[2J") != NULL);
	EXPECT_TRUE(strstr(h, "\\u009b") != NULL);
	free(h);
	ASSERT_OK(auditrec_format_human(lines[1], lens[1], &h));
	EXPECT_TRUE(strstr(h, "END") != NULL);
	EXPECT_TRUE(strstr(h, "code=1") != NULL);
	free(h);
	EXPECT_EQ(auditrec_format_human("nope", 4, &h), -EBADMSG);
}

TEST(invalid_utf8_is_refused)
{
	static const char *const argv[] = { "git", "\xc0\xaf" };
	struct auditrec_decision d = { .id = "x", .tool = "git", .argv = argv, .argc = 2 };
	struct auditrec_chain c;
	char *line = NULL;
	size_t len;

	auditrec_chain_init(&c);
	EXPECT_EQ(auditrec_format_decision(&c, &d, &line, &len), -EINVAL);
	ASSERT_NULL(line);
}

/* json-c writes DEL, C1, U+2028/2029 and bidi controls raw; the log must
 * not (terminals, JavaScript viewers and readers of argv would be fooled). */
TEST(unsafe_code_points_are_escaped_in_the_json)
{
	static const char *const argv[] = {
		"echo",
		"a\x7f" "b\xc2\x9b" "c\xe2\x80\xa8" "d\xe2\x80\xa9" "e\xe2\x80\xae" "f\xe2\x81\xa6"
		"g\xd8\x9c" "h\xe2\x80\x8f" "i\xe2\x80\xa6" "j\xc3\xa9",
	};
	struct auditrec_decision d = { .id = "x", .tool = "echo", .argv = argv, .argc = 2,
				       .reason = "\xe2\x80\xae" "evil" };
	struct auditrec_verify_result res;
	struct auditrec_chain c;
	char *line = NULL, *h = NULL;
	size_t len;
	int fd;

	auditrec_chain_init(&c);
	ASSERT_OK(auditrec_format_decision(&c, &d, &line, &len));
	for (size_t k = 0; k + 1 < len; k++) {
		unsigned cp;

		ASSERT_EQ(auditrec_unsafe_codepoint(line + k, len - k, &cp), 0);
	}
	EXPECT_TRUE(strstr(line, "a\\u007fb\\u009bc\\u2028d\\u2029e\\u202ef\\u2066g\\u061ch\\u200fi"
				 "\xe2\x80\xa6j\xc3\xa9") != NULL);
	EXPECT_TRUE(strstr(line, "\"reason\":\"\\u202eevil\"") != NULL);
	/* Still one valid record of the chain. */
	fd = memfd_create("audit", MFD_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, line, len), (ssize_t)len);
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_OK(auditrec_verify_fd(fd, &res));
	EXPECT_EQ(res.n_lines, 1);
	close(fd);
	ASSERT_OK(auditrec_format_human(line, len, &h));
	EXPECT_TRUE(strstr(h, "\\u2028") != NULL);
	EXPECT_TRUE(strstr(h, "\\u202e") != NULL);
	EXPECT_TRUE(strstr(h, "\\u061c") != NULL);
	EXPECT_TRUE(strstr(h, "\xe2\x80\xae") == NULL);
	EXPECT_TRUE(strstr(h, "\xe2\x80\xa8") == NULL);
	free(h);
	free(line);
}

TEST(oversized_record_is_cut_with_a_marker)
{
	static char big[200 * 1024];
	const char *argv[300];
	struct auditrec_decision d = { .id = "x", .tool = "echo", .argv = argv, .argc = 300,
				       .reason = "short reason" };
	struct auditrec_verify_result res;
	struct auditrec_chain c;
	char *line = NULL, *h = NULL;
	size_t len;
	int fd;

	memset(big, '\x01', sizeof(big) - 1); /* escapes to six bytes each */
	argv[0] = "echo";
	for (size_t i = 1; i < ELEMENTSOF(argv); i++)
		argv[i] = i == 1 ? big : "arg";
	auditrec_chain_init(&c);
	ASSERT_OK(auditrec_format_decision(&c, &d, &line, &len));
	EXPECT_TRUE(len <= AUDITREC_MAX_RECORD);
	EXPECT_TRUE(strstr(line, "\"truncated\":{\"original_bytes\":") != NULL);
	EXPECT_TRUE(strstr(line, "\"argc\":300") != NULL);
	EXPECT_TRUE(strstr(line, "\xe2\x80\xa6\"") != NULL); /* a value ends in the ellipsis */
	EXPECT_TRUE(strstr(line, "\"reason\":\"short reason\"") != NULL);
	fd = memfd_create("audit", MFD_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, line, len), (ssize_t)len);
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_OK(auditrec_verify_fd(fd, &res));
	close(fd);
	ASSERT_OK(auditrec_format_human(line, len, &h));
	EXPECT_TRUE(strstr(h, "[TRUNCATED: ") != NULL);
	free(h);
	free(line);

	/* A record under the cap is written whole, without the marker. */
	d.argc = 3;
	argv[1] = "a";
	ASSERT_OK(auditrec_format_decision(&c, &d, &line, &len));
	EXPECT_TRUE(strstr(line, "truncated") == NULL);
	free(line);
}

TEST(refused_record_counts_and_chains)
{
	struct auditrec_refused rec = {
		.first = { .tv_sec = 1700000000 }, .last = { .tv_sec = 1700000000, .tv_nsec = 900000000 },
		.peer_uid = 1000, .peer_gid = 1000, .peer_pid = 77, .peer_key = 4026531836u,
		.error = "unauthenticated", .count = 9999, .first_id = "a-1", .last_id = "a-9999",
	};
	const int order[] = { 0, 1, -1 };
	struct auditrec_verify_result res;
	struct auditrec_chain c;
	char *line, *h = NULL;
	size_t len;

	build();
	ASSERT_OK(auditrec_chain_resume(&c, lines[1], lens[1]));
	ASSERT_OK(auditrec_format_refused(&c, &rec, &line, &len));
	EXPECT_TRUE(strstr(line, "\"type\":\"refused\",\"error\":\"unauthenticated\",\"count\":9999") != NULL);
	ASSERT_OK(verify_order(order, ELEMENTSOF(order), line, &res));
	EXPECT_EQ(res.n_lines, 3);
	ASSERT_OK(auditrec_format_human(line, len, &h));
	EXPECT_TRUE(strstr(h, "9999 refusals") != NULL);
	EXPECT_TRUE(strstr(h, "error='unauthenticated'") != NULL);
	free(h);
	free(line);
}

TEST(decision_carries_the_psql_target)
{
	static const char *const argv[] = { "psql", "postgresql://ro@DB.internal:06432/app" };
	struct psqltarget t = { 0 };
	struct auditrec_decision d = { .id = "x", .tool = "psql", .argv = argv, .argc = 2,
				       .allow = true, .psql = &t };
	struct auditrec_chain c;
	char *line = NULL;
	size_t len;

	ASSERT_OK(psqltarget_parse_conninfo(&t, argv[1], NULL));
	auditrec_chain_init(&c);
	ASSERT_OK(auditrec_format_decision(&c, &d, &line, &len));
	EXPECT_TRUE(strstr(line, "\"psql\":{\"host\":\"db.internal\",\"port\":\"6432\","
				 "\"dbname\":\"app\",\"user\":\"ro\"}") != NULL);
	free(line);
	d.psql = NULL;
	ASSERT_OK(auditrec_format_decision(&c, &d, &line, &len));
	EXPECT_TRUE(strstr(line, "\"psql\":{") == NULL);
	free(line);
}
