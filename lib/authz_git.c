/* SPDX-License-Identifier: MIT */
#include "authz_git.h"

#include <json-c/json.h>

static int put(struct json_object *o, const char *k, struct json_object *v)
{
	if (!v || json_object_object_add(o, k, v) < 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

struct json_object *authz_git_to_json(const struct authz_git *g)
{
	struct json_object *o = json_object_new_object(), *ups;
	int r = 0;

	if (!o)
		return NULL;
	r |= put(o, "op", json_object_new_string(g->op ? g->op : ""));
	r |= put(o, "url", json_object_new_string(g->url ? g->url : ""));
	if (g->dry_run)
		r |= put(o, "dry_run", json_object_new_boolean(true));
	if (g->atomic)
		r |= put(o, "atomic", json_object_new_boolean(true));
	ups = json_object_new_array();
	r |= put(o, "updates", ups);
	for (size_t i = 0; r == 0 && i < g->n_updates; i++) {
		const struct authz_git_update *u = &g->updates[i];
		struct json_object *e = json_object_new_object();

		if (!e || json_object_array_add(ups, e) < 0) {
			json_object_put(e);
			r = -1;
			break;
		}
		r |= put(e, "src", json_object_new_string(u->src ? u->src : ""));
		r |= put(e, "dst", json_object_new_string(u->dst ? u->dst : ""));
		r |= put(e, "old", json_object_new_string(u->old ? u->old : ""));
		r |= put(e, "force", json_object_new_boolean(u->force));
		r |= put(e, "delete", json_object_new_boolean(u->delete_ref));
		r |= put(e, "ff", json_object_new_boolean(u->ff));
		r |= put(e, "default", json_object_new_boolean(u->is_default));
	}
	if (r != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}
