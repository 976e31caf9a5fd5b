/* SPDX-License-Identifier: MIT */
/* The table of authorization backends: execd.conf's `backend = NAME` picks
 * one. Adding a backend is one ops table in its own file plus one line here
 * (docs/extending.md). */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "authzjson.h"
#include "backend_ops.h"
#include "fdio.h"
#include "macros.h"

static const struct backend_ops *const backends[] = {
	&backend_allow_all_ops,
	&backend_static_ops,
	&backend_exec_ops,
	&backend_webhook_ops,
};

const struct backend_ops *backend_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

int backend_deny(struct authz_decision *d, int error, const char *rule, const char *reason)
{
	authz_decision_clear(d);
	(void)snprintf(d->rule, sizeof(d->rule), "%s", rule ? rule : "");
	(void)snprintf(d->reason, sizeof(d->reason), "%s", reason ? reason : "");
	return error;
}

int backend_read_file(const char *what, const char *path, size_t max, bool secret, char **ret,
		      size_t *ret_len, char *reterr, size_t reterr_len)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	if (!path || path[0] != '/') {
		(void)snprintf(reterr, reterr_len, "%s: an absolute path is required", what);
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (secret ? O_NOFOLLOW : 0));
	if (fd < 0) {
		r = negative_errno();
		(void)snprintf(reterr, reterr_len, "%s '%s': %s", what, path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = negative_errno();
		(void)snprintf(reterr, reterr_len, "%s '%s': %s", what, path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		(void)snprintf(reterr, reterr_len, "%s '%s' is not a regular file", what, path);
		return -EINVAL;
	}
	/* Whoever can write this file decides what the agent may do (policy)
	 * or whom the daemon trusts (token, CA): it must be ours or root's and
	 * writable by nobody else. A secret must not be readable by others
	 * either. */
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		(void)snprintf(reterr, reterr_len,
			       "%s '%s' must be owned by this user (or root) and not group or world "
			       "writable",
			       what, path);
		return -EPERM;
	}
	if (secret && (st.st_uid != geteuid() || (st.st_mode & 0077))) {
		(void)snprintf(reterr, reterr_len,
			       "%s '%s' must be owned by this user with mode 0600 or 0400", what, path);
		return -EPERM;
	}
	if ((size_t)st.st_size > max) {
		(void)snprintf(reterr, reterr_len, "%s '%s' is larger than %zu bytes", what, path, max);
		return -E2BIG;
	}
	/* The cap, not the size fstat saw: a file may grow up to max while read.
	 * FDIO_WIPE: a partial secret is wiped too. */
	r = fdio_read_capped(fd, max, secret ? FDIO_WIPE : 0, ret, ret_len);
	if (r == -EFBIG) {
		(void)snprintf(reterr, reterr_len, "%s '%s' is larger than %zu bytes", what, path, max);
		return -E2BIG;
	}
	if (r == -ENOMEM)
		(void)snprintf(reterr, reterr_len, "out of memory");
	else if (r < 0)
		(void)snprintf(reterr, reterr_len, "%s '%s': %s", what, path, strerror(-r));
	return r < 0 ? r : 0;
}

void backend_answer_freep(char **buf)
{
	if (!*buf)
		return;
	explicit_bzero(*buf, AUTHZJSON_MAX_DECISION + 1);
	free(*buf);
	*buf = NULL;
}
