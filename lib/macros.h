/* SPDX-License-Identifier: MIT */
/* Small helpers shared by every component: cleanup attributes, ownership
 * transfer, array sizes. Header-only, no allocation of its own. */
#ifndef CS_MACROS_H
#define CS_MACROS_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _noreturn_ _Noreturn
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_result_ __attribute__((warn_unused_result))

/* Transfer ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)                                                                                \
	__extension__({                                                                            \
		__typeof__(p) _take_tmp = (p);                                                     \
		(p) = NULL;                                                                        \
		_take_tmp;                                                                         \
	})
#define TAKE_FD(fd)                                                                                \
	__extension__({                                                                            \
		int _take_fd = (fd);                                                               \
		(fd) = -1;                                                                         \
		_take_fd;                                                                          \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* close() that preserves errno and ignores EBADF of an already-closed fd:
 * callers never rely on close() results for these (read-only or already
 * fsynced) descriptors. */
static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
	}
	return -1;
}
static inline void closep(int *fd)
{
	*fd = safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

/* Define a cleanup function `name##p` for a pointer type with destructor `fn`. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, fn)                                                      \
	/* NOLINTNEXTLINE(bugprone-macro-parentheses): type is a declarator */                    \
	static inline void fn##p(type *p)                                                          \
	{                                                                                          \
		if (*p)                                                                            \
			fn(*p);                                                                    \
	}

/* Negative errno from a libc call that set errno; never returns 0 even when
 * errno was (wrongly) left at 0, so callers fail closed. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

#define STRLEN(s) (sizeof(s) - 1)

#endif
