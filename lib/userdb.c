/* SPDX-License-Identifier: MIT */
#include "userdb.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "macros.h"

#define PASSWD_FIELDS 7
#define GROUP_FIELDS 4
#define MAX_FIELDS PASSWD_FIELDS
/* Longest decimal ID: 4294967294. */
#define ID_DIGITS_MAX ((size_t)10)

struct dbline {
	const char *s;
	size_t len; /* without the newline */
	bool valid;
	const char *f[MAX_FIELDS];
	size_t flen[MAX_FIELDS];
	unsigned id;  /* passwd: uid; group: gid */
	unsigned gid; /* passwd: primary gid */
};

struct dbfile {
	struct dbline *lines;
	size_t n;
	bool ends_with_newline;
};

static void dbfile_free(struct dbfile *db)
{
	free(db->lines);
	db->lines = NULL;
	db->n = 0;
}

static int parse_num(const char *s, size_t len, unsigned *ret)
{
	uint64_t v;
	int r;

	/* This parser's own rule, kept: at most ten digits, leading zeros
	 * included, so "00000000001" leaves its line unmatched here while
	 * ids_parse_id (HOST_UID) reads it as 1. */
	if (len > ID_DIGITS_MAX)
		return -EINVAL;
	r = decimal_parse(s, len, IDS_ID_MAX, &v);
	if (r < 0)
		return r;
	*ret = (unsigned)v;
	return 0;
}

/* Splits text into lines and, where a line has exactly nfields fields, a
 * non-empty name that is not a NIS compat entry ("+..." / "-...") and
 * numeric ID fields, marks it valid. Other lines are kept verbatim and never
 * matched: glibc's files backend skips them too. */
static int dbfile_parse(const char *text, size_t len, size_t nfields, struct dbfile *ret)
{
	struct dbfile db = {0};
	size_t cap = 1;

	if (memchr(text, '\0', len))
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n')
			cap++;
	db.lines = calloc(cap, sizeof(*db.lines));
	if (!db.lines)
		return -ENOMEM;
	db.ends_with_newline = len == 0 || text[len - 1] == '\n';

	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct dbline *l = &db.lines[db.n++];
		size_t nf = 0;
		const char *fs = p;

		l->s = p;
		l->len = (size_t)(le - p);
		for (const char *q = p;; q++) {
			if (q == le || *q == ':') {
				if (nf < MAX_FIELDS) {
					l->f[nf] = fs;
					l->flen[nf] = (size_t)(q - fs);
				}
				nf++;
				fs = q + 1;
				if (q == le)
					break;
			}
		}
		l->valid = nf == nfields && l->flen[0] > 0 && l->flen[0] <= IDS_NAME_MAX &&
			   l->f[0][0] != '+' && l->f[0][0] != '-' &&
			   parse_num(l->f[2], l->flen[2], &l->id) == 0 &&
			   (nfields != PASSWD_FIELDS || parse_num(l->f[3], l->flen[3], &l->gid) == 0);
		p = nl ? nl + 1 : end;
	}
	*ret = db;
	return 0;
}

static bool name_is(const struct dbline *l, const char *name)
{
	return l->valid && l->flen[0] == strlen(name) && memcmp(l->f[0], name, l->flen[0]) == 0;
}

static int copy_field(const struct dbline *l, size_t k, char *dst, size_t max)
{
	if (l->flen[k] > max)
		return -ENAMETOOLONG;
	memcpy(dst, l->f[k], l->flen[k]);
	dst[l->flen[k]] = '\0';
	return 0;
}

/* Index of the unique valid line named user, -ENOENT or -EEXIST. */
static long find_unique(const struct dbfile *db, const char *user)
{
	long found = -ENOENT;

	for (size_t i = 0; i < db->n; i++) {
		if (!name_is(&db->lines[i], user))
			continue;
		if (found >= 0)
			return -EEXIST;
		found = (long)i;
	}
	return found;
}

int userdb_lookup(const char *passwd_text, size_t passwd_len, const char *user,
		  struct userdb_user *ret)
{
	struct dbfile db = {0};
	struct userdb_user u = {0};
	long i;
	int r;

	r = dbfile_parse(passwd_text, passwd_len, PASSWD_FIELDS, &db);
	if (r < 0)
		return r;
	i = find_unique(&db, user);
	if (i < 0) {
		dbfile_free(&db);
		return (int)i;
	}
	u.uid = db.lines[i].id;
	u.gid = db.lines[i].gid;
	r = copy_field(&db.lines[i], 5, u.home, USERDB_FIELD_MAX);
	if (r >= 0)
		r = copy_field(&db.lines[i], 6, u.shell, USERDB_FIELD_MAX);
	dbfile_free(&db);
	if (r < 0)
		return r;
	*ret = u;
	return 0;
}

/* True if id is taken: by a valid line's ID field (and, with check_gid, a
 * passwd line's primary GID), by an extra reserved value, or by an earlier
 * move of the same kind. */
static bool id_taken(unsigned id, const struct dbfile *a, bool a_gid, const struct dbfile *b,
		     bool b_gid, const unsigned *reserved, size_t n_reserved,
		     const struct userdb_remap *rm, bool is_group)
{
	for (size_t i = 0; i < n_reserved; i++)
		if (reserved[i] == id)
			return true;
	for (size_t i = 0; i < rm->n_moves; i++)
		if (rm->moves[i].is_group == is_group && rm->moves[i].to == id)
			return true;
	for (size_t i = 0; a && i < a->n; i++)
		if (a->lines[i].valid && (a_gid ? a->lines[i].gid : a->lines[i].id) == id)
			return true;
	for (size_t i = 0; b && i < b->n; i++)
		if (b->lines[i].valid && (b_gid ? b->lines[i].gid : b->lines[i].id) == id)
			return true;
	return false;
}

static int add_move(struct userdb_remap *rm, bool is_group, const struct dbline *l, unsigned to)
{
	struct userdb_move *m;

	if (rm->n_moves >= USERDB_MAX_MOVES)
		return -ENOSPC;
	m = &rm->moves[rm->n_moves++];
	m->is_group = is_group;
	memcpy(m->name, l->f[0], l->flen[0]);
	m->name[l->flen[0]] = '\0';
	m->from = l->id;
	m->to = to;
	return 0;
}

/* Smallest free ID >= USERDB_FREE_ID_MIN as id_taken() defines it. */
static int pick_free(const struct dbfile *a, bool a_gid, const struct dbfile *b, bool b_gid,
		     const unsigned *reserved, size_t n_reserved, const struct userdb_remap *rm,
		     bool is_group, unsigned *ret)
{
	for (unsigned long long id = USERDB_FREE_ID_MIN; id <= IDS_ID_MAX; id++) {
		if (id == USERDB_NOBODY_ID || id == USERDB_NOBODY_ID + 1)
			continue;
		if (!id_taken((unsigned)id, a, a_gid, b, b_gid, reserved, n_reserved, rm, is_group)) {
			*ret = (unsigned)id;
			return 0;
		}
	}
	return -ENOSPC;
}

/* Appends line l to out with the numeric fields in repl[k] (or the
 * original bytes where repl[k] is NULL), then the line's newline if it had
 * one. */
static void emit_line(char **out, const struct dbline *l, size_t nfields, char *const *repl,
		      bool newline)
{
	for (size_t k = 0; k < nfields; k++) {
		const char *src = repl[k] ? repl[k] : l->f[k];
		size_t n = repl[k] ? strlen(repl[k]) : l->flen[k];

		if (k > 0)
			*(*out)++ = ':';
		memcpy(*out, src, n);
		*out += n;
	}
	if (newline)
		*(*out)++ = '\n';
}

static void emit_verbatim(char **out, const struct dbline *l, bool newline)
{
	memcpy(*out, l->s, l->len);
	*out += l->len;
	if (newline)
		*(*out)++ = '\n';
}

/* The moved-to ID for a line of the given kind, or the original. */
static unsigned moved_id(const struct userdb_remap *rm, bool is_group, const struct dbline *l)
{
	for (size_t i = 0; i < rm->n_moves; i++)
		if (rm->moves[i].is_group == is_group && name_is(l, rm->moves[i].name) &&
		    rm->moves[i].from == l->id)
			return rm->moves[i].to;
	return l->id;
}

int userdb_remap(const char *passwd_text, size_t passwd_len, const char *group_text,
		 size_t group_len, const char *user, unsigned uid, unsigned gid,
		 struct userdb_remap *ret)
{
	struct dbfile pw = {0}, gr = {0};
	struct userdb_remap rm = {0};
	_cleanup_free_ char *pout = NULL, *gout = NULL;
	char *o;
	long dev, grp = -1;
	bool first_moved_group_set = false;
	unsigned first_moved_group_to = 0, old_group_gid = 0;
	int r;

	if (uid > IDS_ID_MAX || gid > IDS_ID_MAX || !*user || strlen(user) > IDS_NAME_MAX)
		return -EINVAL;
	r = dbfile_parse(passwd_text, passwd_len, PASSWD_FIELDS, &pw);
	if (r < 0)
		return r;
	r = dbfile_parse(group_text, group_len, GROUP_FIELDS, &gr);
	if (r < 0)
		goto out;

	dev = find_unique(&pw, user);
	if (dev < 0) {
		r = (int)dev;
		goto out;
	}
	rm.old_uid = pw.lines[dev].id;
	rm.old_gid = pw.lines[dev].gid;
	rm.uid = uid;
	rm.gid = gid;
	r = copy_field(&pw.lines[dev], 5, rm.home, USERDB_FIELD_MAX);
	if (r < 0)
		goto out;
	r = copy_field(&pw.lines[dev], 6, rm.shell, USERDB_FIELD_MAX);
	if (r < 0)
		goto out;

	/* The user's primary group: the group holding its GID, preferring one
	 * with the user's name; else a group with the user's name. */
	for (size_t i = 0; i < gr.n && grp < 0; i++)
		if (name_is(&gr.lines[i], user) && gr.lines[i].id == rm.old_gid)
			grp = (long)i;
	for (size_t i = 0; i < gr.n && grp < 0; i++)
		if (gr.lines[i].valid && gr.lines[i].id == rm.old_gid)
			grp = (long)i;
	for (size_t i = 0; i < gr.n && grp < 0; i++)
		if (name_is(&gr.lines[i], user))
			grp = (long)i;
	if (grp >= 0) {
		old_group_gid = gr.lines[grp].id;
		(void)copy_field(&gr.lines[grp], 0, rm.group_name, IDS_NAME_MAX);
	} else {
		(void)snprintf(rm.group_name, sizeof(rm.group_name), "%s", user);
	}

	/* Accounts holding the wanted UID move. */
	for (size_t i = 0; i < pw.n && uid != rm.old_uid; i++) {
		const unsigned reserved[] = {rm.old_uid, uid};
		unsigned to;

		if ((long)i == dev || !pw.lines[i].valid || pw.lines[i].id != uid)
			continue;
		r = pick_free(&pw, false, NULL, false, reserved, ELEMENTSOF(reserved), &rm, false, &to);
		if (r < 0)
			goto out;
		r = add_move(&rm, false, &pw.lines[i], to);
		if (r < 0)
			goto out;
	}
	/* Groups holding the wanted GID move. */
	for (size_t i = 0; i < gr.n; i++) {
		const unsigned reserved[] = {rm.old_gid, gid, old_group_gid};
		unsigned to;

		if ((long)i == grp || !gr.lines[i].valid || gr.lines[i].id != gid)
			continue;
		r = pick_free(&gr, false, &pw, true, reserved, ELEMENTSOF(reserved), &rm, true, &to);
		if (r < 0)
			goto out;
		r = add_move(&rm, true, &gr.lines[i], to);
		if (r < 0)
			goto out;
		if (!first_moved_group_set) {
			first_moved_group_set = true;
			first_moved_group_to = to;
		}
	}

	/* passwd: each rewritten line grows by at most two IDs. */
	pout = malloc(passwd_len + pw.n * 2 * ID_DIGITS_MAX + 2);
	if (!pout) {
		r = -ENOMEM;
		goto out;
	}
	o = pout;
	for (size_t i = 0; i < pw.n; i++) {
		const struct dbline *l = &pw.lines[i];
		bool nl = i + 1 < pw.n || pw.ends_with_newline;
		unsigned nu, ng;
		char ubuf[ID_DIGITS_MAX + 1], gbuf[ID_DIGITS_MAX + 1];
		char *repl[PASSWD_FIELDS] = {0};

		if (!l->valid) {
			emit_verbatim(&o, l, nl);
			continue;
		}
		if ((long)i == dev) {
			nu = uid;
			ng = gid;
		} else {
			nu = moved_id(&rm, false, l);
			ng = l->gid;
			if (first_moved_group_set && l->gid == gid)
				ng = first_moved_group_to;
			else if (grp >= 0 && l->gid == old_group_gid)
				ng = gid;
		}
		if (nu != l->id) {
			(void)snprintf(ubuf, sizeof(ubuf), "%u", nu);
			repl[2] = ubuf;
		}
		if (ng != l->gid) {
			(void)snprintf(gbuf, sizeof(gbuf), "%u", ng);
			repl[3] = gbuf;
		}
		if (repl[2] || repl[3])
			emit_line(&o, l, PASSWD_FIELDS, repl, nl);
		else
			emit_verbatim(&o, l, nl);
	}
	rm.passwd_len = (size_t)(o - pout);
	*o = '\0';

	/* group: plus possibly one appended line for the user's group. */
	gout = malloc(group_len + gr.n * ID_DIGITS_MAX + IDS_NAME_MAX + ID_DIGITS_MAX + 16);
	if (!gout) {
		r = -ENOMEM;
		goto out;
	}
	o = gout;
	for (size_t i = 0; i < gr.n; i++) {
		const struct dbline *l = &gr.lines[i];
		bool nl = i + 1 < gr.n || gr.ends_with_newline;
		unsigned ng;
		char gbuf[ID_DIGITS_MAX + 1];
		char *repl[GROUP_FIELDS] = {0};

		if (!l->valid) {
			emit_verbatim(&o, l, nl);
			continue;
		}
		ng = (long)i == grp ? gid : moved_id(&rm, true, l);
		if (ng == l->id) {
			emit_verbatim(&o, l, nl);
			continue;
		}
		(void)snprintf(gbuf, sizeof(gbuf), "%u", ng);
		repl[2] = gbuf;
		emit_line(&o, l, GROUP_FIELDS, repl, nl);
	}
	if (grp < 0) {
		/* No group for the user at all: give it one, so `id` and ls show
		 * a name and the GID is not shared by accident later. */
		if (!gr.ends_with_newline)
			*o++ = '\n';
		o += sprintf(o, "%s:x:%u:\n", user, gid);
	}
	rm.group_len = (size_t)(o - gout);
	*o = '\0';

	rm.passwd_changed = rm.passwd_len != passwd_len || memcmp(pout, passwd_text, passwd_len) != 0;
	rm.group_changed = rm.group_len != group_len || memcmp(gout, group_text, group_len) != 0;
	rm.passwd = TAKE_PTR(pout);
	rm.group = TAKE_PTR(gout);
	*ret = rm;
	r = 0;
out:
	dbfile_free(&pw);
	dbfile_free(&gr);
	return r;
}

void userdb_remap_free(struct userdb_remap *r)
{
	free(r->passwd);
	free(r->group);
	r->passwd = r->group = NULL;
}

/* System directories a home must never contain. */
static const char *const protected_dirs[] = {
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/run", "/var", "/opt", "/tmp", "/root", "/workspace", "/proc", "/sys", "/dev",
};
/* Trees a home must never be inside. */
static const char *const forbidden_trees[] = {"/proc", "/sys", "/dev", "/workspace"};

#define HOME_REFUSE(why)                                                                           \
	do {                                                                                       \
		if (reterr)                                                                        \
			*reterr = (why);                                                           \
		return false;                                                                      \
	} while (0)

bool userdb_home_is_safe(const char *home, const char **reterr)
{
	size_t len = strlen(home);

	if (home[0] != '/' || len < 2 || len > USERDB_FIELD_MAX)
		HOME_REFUSE("not an absolute path below /");
	if (home[len - 1] == '/')
		HOME_REFUSE("ends with '/'");
	for (const char *c = home + 1;;) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			HOME_REFUSE("not a normalised path (empty, '.' or '..' component)");
		if (!slash)
			break;
		c = slash + 1;
	}
	for (size_t i = 0; i < ELEMENTSOF(protected_dirs); i++) {
		size_t pl = strlen(protected_dirs[i]);
		/* home == dir, or dir lies below home. */
		if (strncmp(protected_dirs[i], home, len) == 0 && (pl == len || protected_dirs[i][len] == '/'))
			HOME_REFUSE("is, or contains, a system directory");
	}
	for (size_t i = 0; i < ELEMENTSOF(forbidden_trees); i++) {
		size_t tl = strlen(forbidden_trees[i]);
		if (len > tl && strncmp(home, forbidden_trees[i], tl) == 0 && home[tl] == '/')
			HOME_REFUSE("lies inside /proc, /sys, /dev or /workspace");
	}
	return true;
}
