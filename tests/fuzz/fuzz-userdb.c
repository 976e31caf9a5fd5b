/* SPDX-License-Identifier: MIT */
/* Input: 4 bytes UID, 4 bytes GID (little endian), then the passwd text,
 * a 0x01 byte, and the group text. Checks the remap's invariant: after a
 * successful remap, devuser resolves to exactly the wanted IDs. Also feeds
 * the ID parser and the privileged-group lookup. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ids.h"
#include "userdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct userdb_remap rm;
	struct userdb_user u;
	const char *text, *sep, *pw, *gr;
	size_t pw_len, gr_len;
	unsigned uid, gid, parsed;
	char name[IDS_NAME_MAX + 1], *s;

	if (size < 8)
		return 0;
	uid = (unsigned)data[0] | (unsigned)data[1] << 8 | (unsigned)data[2] << 16 | (unsigned)data[3] << 24;
	gid = (unsigned)data[4] | (unsigned)data[5] << 8 | (unsigned)data[6] << 16 | (unsigned)data[7] << 24;
	text = (const char *)data + 8;
	size -= 8;
	sep = memchr(text, 0x01, size);
	pw = text;
	pw_len = sep ? (size_t)(sep - text) : size;
	gr = sep ? sep + 1 : "";
	gr_len = sep ? size - pw_len - 1 : 0;

	(void)ids_gid_is_privileged(gr, gr_len, gid, name);
	s = malloc(pw_len + 1);
	if (!s)
		return 0;
	memcpy(s, pw, pw_len);
	s[pw_len] = '\0';
	(void)ids_parse_id(s, &parsed);
	(void)userdb_home_is_safe(s, NULL);
	free(s);

	if (userdb_remap(pw, pw_len, gr, gr_len, "devuser", uid, gid, &rm) < 0)
		return 0;
	if (userdb_lookup(rm.passwd, rm.passwd_len, "devuser", &u) != 0 || u.uid != uid || u.gid != gid)
		abort();
	if (rm.n_moves > USERDB_MAX_MOVES)
		abort();
	userdb_remap_free(&rm);
	return 0;
}
