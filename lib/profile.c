/* SPDX-License-Identifier: MIT */
#include "profile.h"

#include <errno.h>
#include <string.h>

#include <json-c/json.h>

#include "macros.h"

bool profile_name_valid(const char *name)
{
	size_t n = 0;

	for (const char *p = name; *p; p++, n++) {
		if (n >= PROFILE_NAME_MAX)
			return false;
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	}
	return n > 0;
}

int profile_check_json(const char *buf, size_t len, const char **reterr)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	size_t used;
	int r = 0;

	if (len > PROFILE_MAX_BYTES)
		return -EFBIG;
	if (memchr(buf, '\0', len)) {
		if (reterr)
			*reterr = "NUL byte in profile";
		return -EINVAL;
	}
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	used = json_tokener_get_parse_end(tok);
	if (!obj) {
		if (reterr)
			*reterr = jerr == json_tokener_continue ? "truncated JSON" : json_tokener_error_desc(jerr);
		r = -EINVAL;
	} else if (!json_object_is_type(obj, json_type_object)) {
		if (reterr)
			*reterr = "top level is not a JSON object";
		r = -EINVAL;
	} else {
		for (size_t i = used; i < len; i++)
			if (!strchr(" \t\r\n", buf[i])) {
				if (reterr)
					*reterr = "trailing data after the JSON object";
				r = -EINVAL;
				break;
			}
	}
	json_object_put(obj);
	json_tokener_free(tok);
	return r;
}
