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

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the RFC 8259 number at s[0..len), or 0 if there is none:
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static size_t number_len(const char *s, size_t len)
{
	size_t j = 0;

	if (j < len && s[j] == '-')
		j++;
	if (j >= len || !is_digit(s[j]))
		return 0;
	if (s[j] == '0')
		j++;
	else
		while (j < len && is_digit(s[j]))
			j++;
	if (j < len && s[j] == '.') {
		j++;
		if (j >= len || !is_digit(s[j]))
			return 0;
		while (j < len && is_digit(s[j]))
			j++;
	}
	if (j < len && (s[j] == 'e' || s[j] == 'E')) {
		j++;
		if (j < len && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j >= len || !is_digit(s[j]))
			return 0;
		while (j < len && is_digit(s[j]))
			j++;
	}
	return j;
}

/* json-c accepts more than JSON even in strict mode (single-quoted
 * strings, NaN, Infinity, "1.", raw control characters in strings).
 * Claude Code reads the file with a standard JSON parser and would ignore
 * settings it cannot parse, which would silently undo the lock, so these
 * are refused here: outside strings only structural characters, white
 * space, RFC 8259 numbers and the letters of true/false/null may appear
 * (json-c checks the words themselves). */
static bool lexically_strict(const char *buf, size_t len)
{
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (in_string) {
			if (c == '\\')
				i++; /* json-c validates the escape itself */
			else if (c == '"')
				in_string = false;
			else if ((unsigned char)c < 0x20)
				return false;
			continue;
		}
		if (c == '"') {
			in_string = true;
		} else if (c == '-' || is_digit(c)) {
			size_t n = number_len(buf + i, len - i);
			if (n == 0)
				return false;
			i += n - 1;
		} else if (!c || !strchr(" \t\r\n{}[]:,truefalsn", c)) {
			return false;
		}
	}
	return true;
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
	if (!lexically_strict(buf, len)) {
		if (reterr)
			*reterr = "not strict JSON (single quotes, NaN, Infinity, bad number or control character)";
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
			*reterr = jerr == json_tokener_continue ? "truncated JSON"
				  : jerr == json_tokener_success ? "top level is not a JSON object"
								 : json_tokener_error_desc(jerr);
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
