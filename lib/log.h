/* SPDX-License-Identifier: MIT */
/* Logging to stderr with a "prog[pid]: LEVEL:" prefix. The level is read once
 * from CODE_SANDBOX_LOG (error|warn|info|debug) by log_setup(). Every function
 * preserves errno; the *_errno variants return their argument (a negative
 * errno) for one-line error propagation. The one idiom, used everywhere:
 *     return log_error_errno(r, "Failed to open '%s': %s", path, strerror(-r));
 * Not "%m" (although log_internal sets errno from the argument): gcc's
 * -Wpedantic, on in every build (warning_level=3, werror), refuses "%m" in a
 * printf-format function, so it would not compile. */
#ifndef CS_LOG_H
#define CS_LOG_H

#include "macros.h"

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
	LOG_LEVEL_MAX,
};

/* prog: static string used in the prefix. Reads CODE_SANDBOX_LOG with
 * secure_getenv() (safe in privileged processes). */
void log_setup(const char *prog);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Returns error (expected negative); logs only when level is enabled. */
int log_internal(enum log_level level, int error, const char *fmt, ...) _printf_(3, 4);

#define log_error(...) ((void)log_internal(LOG_LEVEL_ERROR, 0, __VA_ARGS__))
#define log_warn(...) ((void)log_internal(LOG_LEVEL_WARN, 0, __VA_ARGS__))
#define log_info(...) ((void)log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__))
#define log_debug(...) ((void)log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__))
#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warn_errno(e, ...) log_internal(LOG_LEVEL_WARN, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_internal(LOG_LEVEL_INFO, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)

#endif
