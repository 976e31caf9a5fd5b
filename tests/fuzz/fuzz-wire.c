/* SPDX-License-Identifier: MIT */
/* Fuzz target for the sandbox-execd wire codec: decodes arbitrary bytes as a
 * request and as a reply; whatever decodes must re-encode to a frame that
 * decodes to the same values (the codec is its own oracle). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "wire.h"

static uint8_t out[WIRE_MAX_FRAME];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_request req = { 0 }, again = { 0 };
	struct wire_reply rep, rep2;
	struct wire_header h;
	size_t len = 0;

	(void)wire_parse_header(data, size, WIRE_MAX_FRAME, &h);
	if (wire_decode_request(data, size, WIRE_MAX_FRAME, &req) == 0) {
		if (wire_encode_request(&req, out, sizeof(out), &len) != 0)
			abort();
		if (wire_decode_request(out, len, WIRE_MAX_FRAME, &again) != 0)
			abort();
		if (strcmp(req.token, again.token) != 0 || strcmp(req.tool, again.tool) != 0 ||
		    strcmp(req.cwd, again.cwd) != 0 || req.n_args != again.n_args)
			abort();
		for (size_t i = 0; i < req.n_args; i++)
			if (strcmp(req.args[i], again.args[i]) != 0)
				abort();
		wire_request_done(&again);
		wire_request_done(&req);
	}
	if (wire_decode_reply(data, size, &rep) == 0) {
		if (wire_encode_reply(&rep, out, sizeof(out), &len) != 0)
			abort();
		if (wire_decode_reply(out, len, &rep2) != 0 || rep2.kind != rep.kind)
			abort();
	}
	(void)wire_utf8_valid((const char *)data, size);
	return 0;
}
