/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *log_prog = "code-sandbox";
static enum log_level log_max = LOG_LEVEL_INFO;

static const char *const level_names[LOG_LEVEL_MAX] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void log_setup(const char *prog)
{
	const char *e;

	if (prog)
		log_prog = prog;
	e = secure_getenv("CODE_SANDBOX_LOG");
	if (!e)
		return;
	for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
		if (strcmp(e, level_names[i]) == 0)
			log_max = (enum log_level)i;
}

void log_set_level(enum log_level level)
{
	if (level < LOG_LEVEL_MAX)
		log_max = level;
}

enum log_level log_get_level(void)
{
	return log_max;
}

int log_internal(enum log_level level, int error, const char *fmt, ...)
{
	int saved = errno;
	char buf[2048];
	va_list ap;

	if (level > log_max || level >= LOG_LEVEL_MAX) {
		errno = saved;
		return error;
	}
	if (error != 0)
		errno = error < 0 ? -error : error;
	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line so concurrent writers do not interleave mid-line. */
	(void)dprintf(STDERR_FILENO, "%s[%d]: %s: %s\n", log_prog, (int)getpid(), level_names[level], buf);
	errno = saved;
	return error;
}
