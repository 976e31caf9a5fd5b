/* SPDX-License-Identifier: MIT */
/* Fuzz target for the git relay's pure parsers. The first byte picks one:
 * the WIRE_TYPE_GIT frame decoder (whatever decodes must re-encode and
 * decode to the same values), the URL parser (an accepted URL's canonical
 * form must parse to itself), the remote-helper command parser, the ref
 * list parser (its listing must parse back), the push status reader and
 * the relay pack header (what parses must format to the same bytes). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gitrelay.h"
#include "wire_git.h"

static uint8_t out[WIRE_MAX_FRAME];

static void fuzz_frame(const uint8_t *data, size_t size)
{
	struct wire_git_request req = { 0 }, again = { 0 };
	size_t len = 0;

	if (wire_git_decode_request(data, size, WIRE_MAX_FRAME, &req) != 0)
		return;
	if (wire_git_encode_request(&req, out, sizeof(out), &len) != 0)
		abort();
	if (wire_git_decode_request(out, len, WIRE_MAX_FRAME, &again) != 0)
		abort();
	if (strcmp(req.url, again.url) != 0 || req.op != again.op ||
	    req.n_updates != again.n_updates || req.n_wants != again.n_wants ||
	    req.flags != again.flags || req.cloning != again.cloning)
		abort();
	for (size_t i = 0; i < req.n_updates; i++)
		if (strcmp(req.updates[i].dst, again.updates[i].dst) != 0 ||
		    strcmp(req.updates[i].src, again.updates[i].src) != 0)
			abort();
	wire_git_request_done(&again);
	wire_git_request_done(&req);
}

static void fuzz_url(const char *s)
{
	struct gitrelay_url u, v;

	if (gitrelay_url_parse(s, &u) != 0)
		return;
	if (gitrelay_url_parse(u.canonical, &v) != 0 || strcmp(u.canonical, v.canonical) != 0)
		abort();
	if (u.canonical[0] == '-' || strstr(u.canonical, "::") || strchr(u.canonical, ' '))
		abort();
}

static void fuzz_reflist(const char *s, size_t n)
{
	static char fmt[1 << 20];
	struct gitrelay_reflist l;
	size_t len;

	if (gitrelay_parse_reflist(s, n, &l) != 0)
		return;
	for (size_t i = 0; i < l.n; i++)
		if (!wire_git_refname_valid(l.refs[i].name) ||
		    !wire_git_oid_valid(l.refs[i].oid, strlen(l.refs[i].oid)))
			abort();
	(void)gitrelay_format_list(&l, fmt, sizeof(fmt), &len);
	gitrelay_reflist_done(&l);
}

static void fuzz_pack_header(const char *s, size_t n)
{
	char again[GITRELAY_PACK_HDR_MAX + 1];
	uint64_t p, x;
	size_t hl;
	int k;

	if (gitrelay_parse_pack_header(s, n, &p, &x, &hl) != 1)
		return;
	k = gitrelay_pack_header(again, sizeof(again), p, x);
	if (k < 0 || (size_t)k != hl || memcmp(again, s, hl) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size == 0)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 6) {
	case 0:
		fuzz_frame(data + 1, size - 1);
		break;
	case 1:
		fuzz_url(s);
		break;
	case 2: {
		struct gitrelay_cmd c;

		if (gitrelay_parse_cmd(s, &c) == 0 && c.kind == GITRELAY_CMD_PUSH &&
		    !wire_git_refname_valid(c.dst))
			abort();
		break;
	}
	case 3:
		fuzz_reflist(s, size - 1);
		break;
	case 5:
		fuzz_pack_header(s, size - 1);
		break;
	default: {
		char why[GITRELAY_MAX_REASON];
		bool ok;

		(void)gitrelay_push_status(s, size - 1, "refs/heads/main", &ok, why, sizeof(why));
		break;
	}
	}
	free(s);
	return 0;
}
