/* SPDX-License-Identifier: MIT */
/* Git relay, pure parts (see gitrelay.h). The URL parser is deliberately
 * narrower than git's: what it accepts, git, curl and ssh all read the same
 * way, and the canonical form is rebuilt from validated parts, so no byte of
 * the request reaches a command line unexamined. */
#include "gitrelay.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "macros.h"

/* ---- URLs ---- */

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int parse_host(const char *h, size_t n, char *out)
{
	if (n > 0 && h[n - 1] == '.')
		n--; /* "github.com." is github.com */
	if (n == 0)
		return -EINVAL;
	if (n > GITRELAY_MAX_HOST)
		return -ENAMETOOLONG;
	if (h[0] == '-' || h[0] == '.' || h[0] == '[')
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = h[i];

		if (!is_alnum(c) && c != '-' && c != '.')
			return -EINVAL;
		if (c == '.' && (h[i + 1] == '.' || h[i + 1] == '-' || (i > 0 && h[i - 1] == '-')))
			return -EINVAL; /* empty label, label edges */
		out[i] = (char)tolower((unsigned char)c);
	}
	if (out[n - 1] == '-')
		return -EINVAL;
	out[n] = '\0';
	return 0;
}

static int parse_port(const char *p, size_t n, unsigned dflt, unsigned *ret)
{
	uint64_t v;

	/* No leading zero (a URL's port is written canonically) and every
	 * failure is -EINVAL, as the caller reports one "bad port". */
	if (n == 0 || n > 5 || p[0] == '0')
		return -EINVAL;
	if (decimal_parse(p, n, 65535, &v) < 0 || v == 0)
		return -EINVAL;
	*ret = v == dflt ? 0 : (unsigned)v;
	return 0;
}

static int parse_user(const char *u, size_t n, char *out)
{
	if (n == 0 || u[0] == '-')
		return -EACCES;
	if (n > GITRELAY_MAX_USER)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(u[i]) && !strchr("._-", u[i]))
			return -EACCES; /* ':' (a password) among them */
	memcpy(out, u, n);
	out[n] = '\0';
	return 0;
}

/* path: after the host (with its leading '/' for URLs, without for scp). */
static int parse_path(const char *p, char *out)
{
	size_t n = strlen(p), i = 0;

	if (n == 0 || (n == 1 && p[0] == '/'))
		return -EINVAL;
	if (n > GITRELAY_MAX_PATH)
		return -ENAMETOOLONG;
	if (p[0] == '/')
		i = 1;
	while (i < n) {
		size_t sl = strcspn(p + i, "/");

		if (sl == 0 || (sl == 1 && p[i] == '.') || (sl == 2 && p[i] == '.' && p[i + 1] == '.'))
			return -EINVAL;
		if (p[i] == '-')
			return -EINVAL; /* ssh and git read a leading '-' as an option */
		for (size_t k = 0; k < sl; k++)
			if (!is_alnum(p[i + k]) && !strchr("._~+-", p[i + k]))
				return -EINVAL;
		i += sl + 1;
	}
	memcpy(out, p, n + 1);
	return 0;
}

int gitrelay_url_parse(const char *url, struct gitrelay_url *ret)
{
	struct gitrelay_url u = { 0 };
	const char *sep, *auth, *aend, *at = NULL, *colon;
	size_t n;
	int r;

	if (!url)
		return -EINVAL;
	n = strlen(url);
	if (n == 0)
		return -EINVAL;
	if (n >= WIRE_GIT_MAX_URL)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)url[i];

		if (c <= 0x20 || c >= 0x7f || strchr("\\%?#'\"`$;|&<>(){}[]*!,=^", c))
			return -EINVAL;
	}
	if (url[0] == '-' || url[0] == '/' || url[0] == '.' || url[0] == '~')
		return -EINVAL;
	sep = strstr(url, "://");
	colon = strchr(url, ':');
	if (sep && colon == sep) {
		size_t sl = (size_t)(sep - url);
		unsigned dflt;

		if (sl == 5 && strncasecmp(url, "https", 5) == 0) {
			u.scheme = GITRELAY_HTTPS;
			dflt = 443;
		} else if ((sl == 3 && strncasecmp(url, "ssh", 3) == 0) ||
			   (sl == 7 && (strncasecmp(url, "git+ssh", 7) == 0 ||
					strncasecmp(url, "ssh+git", 7) == 0))) {
			u.scheme = GITRELAY_SSH;
			dflt = 22;
		} else
			return -EPROTONOSUPPORT; /* git://, http://, file://, ... */
		auth = sep + 3;
		aend = strchr(auth, '/');
		if (!aend)
			return -EINVAL;
		at = memchr(auth, '@', (size_t)(aend - auth));
		if (at) {
			if (u.scheme == GITRELAY_HTTPS)
				return -EACCES; /* a user or token in an https URL */
			if (memchr(at + 1, '@', (size_t)(aend - at - 1)))
				return -EACCES;
			r = parse_user(auth, (size_t)(at - auth), u.user);
			if (r < 0)
				return r;
			auth = at + 1;
		}
		colon = memchr(auth, ':', (size_t)(aend - auth));
		r = parse_host(auth, (size_t)((colon ? colon : aend) - auth), u.host);
		if (r >= 0 && colon)
			r = parse_port(colon + 1, (size_t)(aend - colon - 1), dflt, &u.port);
		if (r >= 0)
			r = parse_path(aend, u.path);
		if (r < 0)
			return r;
	} else if (sep) {
		return -EPROTONOSUPPORT;
	} else {
		/* scp-like "[user@]host:path": git reads it so only when the
		 * colon comes before any slash; otherwise it is a local path. */
		const char *slash = strchr(url, '/');

		if (!colon || (slash && slash < colon))
			return -EINVAL;
		if (colon[1] == ':')
			return -EPROTONOSUPPORT; /* "ext::cmd", "fd::3" */
		at = memchr(url, '@', (size_t)(colon - url));
		auth = url;
		if (at) {
			r = parse_user(url, (size_t)(at - url), u.user);
			if (r < 0)
				return r;
			auth = at + 1;
		}
		u.scheme = GITRELAY_SCP;
		r = parse_host(auth, (size_t)(colon - auth), u.host);
		if (r >= 0 && strchr(colon + 1, ':'))
			r = -EINVAL;
		if (r >= 0)
			r = parse_path(colon + 1, u.path);
		if (r < 0)
			return r;
		/* A one-letter "host" is a Windows drive to git ("c:x"). */
		if (strlen(u.host) == 1)
			return -EINVAL;
	}
	{
		char port[16] = "";
		int k;

		if (u.port)
			(void)snprintf(port, sizeof(port), ":%u", u.port);
		switch (u.scheme) {
		case GITRELAY_HTTPS:
			k = snprintf(u.canonical, sizeof(u.canonical), "https://%s%s%s", u.host, port,
				     u.path);
			break;
		case GITRELAY_SSH:
			k = snprintf(u.canonical, sizeof(u.canonical), "ssh://%s%s%s%s", u.user,
				     u.user[0] ? "@" : "", u.host, port);
			if (k >= 0 && (size_t)k < sizeof(u.canonical))
				k = snprintf(u.canonical + k, sizeof(u.canonical) - (size_t)k, "%s",
					     u.path) + k;
			break;
		case GITRELAY_SCP:
			k = snprintf(u.canonical, sizeof(u.canonical), "%s%s%s:%s", u.user,
				     u.user[0] ? "@" : "", u.host, u.path);
			break;
		case GITRELAY_SCHEME_MAX:
		default:
			return -EINVAL;
		}
		if (k < 0 || (size_t)k >= sizeof(u.canonical))
			return -ENAMETOOLONG;
	}
	*ret = u;
	return 0;
}

/* ---- remote-helper commands ---- */

int gitrelay_parse_cmd(char *line, struct gitrelay_cmd *ret)
{
	struct gitrelay_cmd c = { 0 };

	if (line[0] == '\0') {
		c.kind = GITRELAY_CMD_END;
	} else if (strcmp(line, "capabilities") == 0) {
		c.kind = GITRELAY_CMD_CAPABILITIES;
	} else if (strcmp(line, "list") == 0) {
		c.kind = GITRELAY_CMD_LIST;
	} else if (strcmp(line, "list for-push") == 0) {
		c.kind = GITRELAY_CMD_LIST_FOR_PUSH;
	} else if (strncmp(line, "option ", 7) == 0) {
		char *sp = strchr(line + 7, ' ');

		if (!sp || sp == line + 7)
			return -EINVAL;
		*sp = '\0';
		c.kind = GITRELAY_CMD_OPTION;
		c.name = line + 7;
		c.value = sp + 1;
	} else if (strncmp(line, "fetch ", 6) == 0) {
		char *oid = line + 6, *sp = strchr(oid, ' ');

		if (!sp || !wire_git_oid_valid(oid, (size_t)(sp - oid)) || sp[1] == '\0')
			return -EINVAL;
		memcpy(c.oid, oid, (size_t)(sp - oid));
		c.kind = GITRELAY_CMD_FETCH;
		c.name = sp + 1;
	} else if (strncmp(line, "push ", 5) == 0) {
		char *spec = line + 5, *col;
		size_t sl;

		if (*spec == '+') {
			c.force = true;
			spec++;
		}
		col = strrchr(spec, ':');
		if (!col)
			return -EINVAL;
		sl = (size_t)(col - spec);
		if (sl > WIRE_GIT_MAX_REF || !wire_git_refname_valid(col + 1))
			return -EINVAL;
		/* The source is resolved by the container's git; it only has
		 * to be something rev-parse can take that is not an option. */
		if (sl > 0 && (spec[0] == '-' || !wire_utf8_valid(spec, sl)))
			return -EINVAL;
		memcpy(c.src, spec, sl);
		c.src[sl] = '\0';
		(void)snprintf(c.dst, sizeof(c.dst), "%s", col + 1);
		c.kind = GITRELAY_CMD_PUSH;
	} else if (strcmp(line, "connect") == 0 || strncmp(line, "connect ", 8) == 0 ||
		   strncmp(line, "stateless-connect", 17) == 0 || strcmp(line, "import") == 0 ||
		   strncmp(line, "import ", 7) == 0 || strcmp(line, "export") == 0) {
		return -EOPNOTSUPP;
	} else {
		return -EINVAL;
	}
	*ret = c;
	return 0;
}

/* ---- host git output ---- */

void gitrelay_reflist_done(struct gitrelay_reflist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->refs[i].name);
	free(l->refs);
	free(l->head_symref);
	*l = (struct gitrelay_reflist){ 0 };
}

const struct gitrelay_ref *gitrelay_reflist_find(const struct gitrelay_reflist *l,
						 const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->refs[i].name, name) == 0)
			return &l->refs[i];
	return NULL;
}

static bool listable(const char *ref)
{
	return (strncmp(ref, "refs/heads/", 11) == 0 || strncmp(ref, "refs/tags/", 10) == 0) &&
	       wire_git_refname_valid(ref);
}

int gitrelay_parse_reflist(const char *out, size_t len, struct gitrelay_reflist *ret)
{
	struct gitrelay_reflist l = { 0 };
	size_t cap = 0, off = 0;
	int r = 0;

	while (off < len) {
		const char *s = out + off, *nl = memchr(s, '\n', len - off), *tab;
		size_t ll = nl ? (size_t)(nl - s) : len - off;
		char name[WIRE_GIT_MAX_REF + 1];
		size_t nn;

		off += ll + (nl ? 1 : 0);
		if (ll == 0)
			continue;
		tab = memchr(s, '\t', ll);
		if (!tab || memchr(s, '\0', ll)) {
			r = -EBADMSG;
			goto fail;
		}
		nn = ll - (size_t)(tab + 1 - s);
		if (nn > WIRE_GIT_MAX_REF)
			continue; /* not a name we would relay */
		memcpy(name, tab + 1, nn);
		name[nn] = '\0';
		if (strncmp(s, "ref: ", 5) == 0) {
			size_t tl = (size_t)(tab - s) - 5;

			if (strcmp(name, "HEAD") != 0 || tl > WIRE_GIT_MAX_REF || l.head_symref)
				continue;
			l.head_symref = strndup(s + 5, tl);
			if (!l.head_symref) {
				r = -ENOMEM;
				goto fail;
			}
			if (!listable(l.head_symref)) {
				free(l.head_symref);
				l.head_symref = NULL;
			}
			continue;
		}
		if (!wire_git_oid_valid(s, (size_t)(tab - s))) {
			r = -EBADMSG;
			goto fail;
		}
		if (strcmp(name, "HEAD") == 0) {
			memcpy(l.head_oid, s, (size_t)(tab - s));
			l.head_oid[tab - s] = '\0';
			continue;
		}
		if (!listable(name))
			continue;
		if (l.n >= GITRELAY_MAX_REFS) {
			r = -E2BIG;
			goto fail;
		}
		if (l.n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct gitrelay_ref *nr = realloc(l.refs, nc * sizeof(*nr));

			if (!nr) {
				r = -ENOMEM;
				goto fail;
			}
			l.refs = nr;
			cap = nc;
		}
		l.refs[l.n].name = strdup(name);
		if (!l.refs[l.n].name) {
			r = -ENOMEM;
			goto fail;
		}
		memcpy(l.refs[l.n].oid, s, (size_t)(tab - s));
		l.refs[l.n].oid[tab - s] = '\0';
		l.n++;
	}
	*ret = l;
	return 0;
fail:
	gitrelay_reflist_done(&l);
	return r;
}

int gitrelay_format_list(const struct gitrelay_reflist *l, char *buf, size_t cap, size_t *ret_len)
{
	size_t o = 0;
	int k;

	for (size_t i = 0; i < l->n; i++) {
		k = snprintf(buf + o, cap - o, "%s %s\n", l->refs[i].oid, l->refs[i].name);
		if (k < 0 || (size_t)k >= cap - o)
			return -ENOBUFS;
		o += (size_t)k;
	}
	if (l->head_symref && gitrelay_reflist_find(l, l->head_symref))
		k = snprintf(buf + o, cap - o, "@%s HEAD\n\n", l->head_symref);
	else if (l->head_oid[0])
		k = snprintf(buf + o, cap - o, "%s HEAD\n\n", l->head_oid);
	else
		k = snprintf(buf + o, cap - o, "\n");
	if (k < 0 || (size_t)k >= cap - o)
		return -ENOBUFS;
	*ret_len = o + (size_t)k;
	return 0;
}

int gitrelay_push_status(const char *out, size_t len, const char *dst, bool *ret_ok,
			 char *ret_reason, size_t reason_len)
{
	size_t off = 0, dl = strlen(dst);

	while (off < len) {
		const char *s = out + off, *nl = memchr(s, '\n', len - off), *t1, *t2, *col;
		size_t ll = nl ? (size_t)(nl - s) : len - off;

		off += ll + (nl ? 1 : 0);
		/* "<flag>\t<from>:<to>\t<summary>[ (<reason>)]" */
		if (ll < 3 || s[1] != '\t')
			continue;
		t1 = s + 2;
		t2 = memchr(t1, '\t', ll - 2);
		if (!t2)
			continue;
		col = memchr(t1, ':', (size_t)(t2 - t1));
		while (col && memchr(col + 1, ':', (size_t)(t2 - col - 1)))
			col = memchr(col + 1, ':', (size_t)(t2 - col - 1));
		if (!col || (size_t)(t2 - col - 1) != dl || memcmp(col + 1, dst, dl) != 0)
			continue;
		*ret_ok = s[0] != '!';
		if (reason_len > 0) {
			const char *sum = t2 + 1, *end = s + ll, *lp = memchr(sum, '(', (size_t)(end - sum));
			size_t o = 0;

			if (lp && end > lp + 1 && end[-1] == ')') {
				sum = lp + 1;
				end--;
			}
			for (const char *c = sum; c < end && o + 1 < reason_len; c++) {
				if (*c >= 0x20 && *c < 0x7f)
					ret_reason[o++] = *c;
				else
					ret_reason[o++] = '?';
			}
			ret_reason[o] = '\0';
		}
		return 1;
	}
	return 0;
}

/* ---- the objects of a fetch ---- */

int gitrelay_pack_header(char *buf, size_t cap, uint64_t pack_len, uint64_t idx_len)
{
	int k;

	if (pack_len == 0 || idx_len == 0 || pack_len > GITRELAY_MAX_PACK ||
	    idx_len > GITRELAY_MAX_PACK)
		return -EINVAL;
	k = snprintf(buf, cap, GITRELAY_PACK_MAGIC "%llu %llu\n", (unsigned long long)pack_len,
		     (unsigned long long)idx_len);
	if (k < 0 || (size_t)k >= cap || k > GITRELAY_PACK_HDR_MAX)
		return -ENOBUFS;
	return k;
}

int gitrelay_parse_pack_header(const char *buf, size_t len, uint64_t *pack_len,
			       uint64_t *idx_len, size_t *hdr_len)
{
	const size_t ml = sizeof(GITRELAY_PACK_MAGIC) - 1;
	uint64_t v[2];
	size_t off = ml;

	if (len < ml || memcmp(buf, GITRELAY_PACK_MAGIC, ml) != 0)
		return 0;
	for (size_t i = 0; i < 2; i++) {
		size_t start = off;

		v[i] = 0;
		/* decimal, no sign, no leading zero, at most GITRELAY_MAX_PACK */
		while (off < len && off < GITRELAY_PACK_HDR_MAX && buf[off] >= '0' && buf[off] <= '9') {
			v[i] = v[i] * 10 + (uint64_t)(buf[off] - '0');
			if (v[i] > GITRELAY_MAX_PACK)
				return -EBADMSG;
			off++;
		}
		if (off == start || (buf[start] == '0') || off >= len ||
		    buf[off] != (i == 0 ? ' ' : '\n'))
			return -EBADMSG;
		off++;
	}
	if (off > GITRELAY_PACK_HDR_MAX)
		return -EBADMSG;
	*pack_len = v[0];
	*idx_len = v[1];
	*hdr_len = off;
	return 1;
}

int gitrelay_pack_name(const uint8_t *pack_head, const uint8_t *pack_trailer, uint64_t pack_len,
		       const uint8_t *idx_head, const uint8_t *idx_trailer, uint64_t idx_len,
		       size_t hash_len, char *name)
{
	static const uint8_t idx_magic[GITRELAY_IDX_HEAD] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	static const char hex[] = "0123456789abcdef";
	uint32_t version;

	if (hash_len != 20 && hash_len != 32)
		return -EBADMSG;
	/* a pack: header and trailer; an index v2: header, fan-out table of
	 * 256 4-byte counts, the two checksums */
	if (pack_len < GITRELAY_PACK_HEAD + hash_len || idx_len < GITRELAY_IDX_HEAD + 256 * 4 + 2 * hash_len)
		return -EBADMSG;
	version = (uint32_t)pack_head[4] << 24 | (uint32_t)pack_head[5] << 16 |
		  (uint32_t)pack_head[6] << 8 | pack_head[7];
	if (memcmp(pack_head, "PACK", 4) != 0 || (version != 2 && version != 3))
		return -EBADMSG;
	if (memcmp(idx_head, idx_magic, sizeof(idx_magic)) != 0)
		return -EBADMSG;
	if (memcmp(idx_trailer, pack_trailer, hash_len) != 0)
		return -EBADMSG;
	for (size_t i = 0; i < hash_len; i++) {
		name[2 * i] = hex[pack_trailer[i] >> 4];
		name[2 * i + 1] = hex[pack_trailer[i] & 15];
	}
	name[2 * hash_len] = '\0';
	return 0;
}
