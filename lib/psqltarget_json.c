/* SPDX-License-Identifier: MIT */
/* psqltarget_to_json (psqltarget.h): the daemon's side only (audit records,
 * backend requests). Apart from psqltarget.c so that the container's
 * wrapper, which parses psql's target too, links without json-c. */
#include <json-c/json.h>

#include "psqltarget.h"

static int put(struct json_object *o, const char *k, const char *v)
{
	struct json_object *s = v[0] ? json_object_new_string(v) : NULL;

	if ((v[0] && !s) || json_object_object_add(o, k, s) < 0) {
		json_object_put(s);
		return -1;
	}
	return 0;
}

struct json_object *psqltarget_to_json(const struct psqltarget *t)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	if (put(o, "host", t->host) < 0 || put(o, "port", t->port) < 0 ||
	    put(o, "dbname", t->dbname) < 0 || put(o, "user", t->user) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}
