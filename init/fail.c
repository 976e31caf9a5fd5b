/* SPDX-License-Identifier: MIT */
#include "fail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FAIL_LINE_MAX 1024

int init_fail(const char *step, int error, const char *fmt, ...)
{
	char msg[FAIL_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (error < 0)
		(void)dprintf(STDERR_FILENO, "sandbox-init: %s: %s: %s\n", step, msg, strerror(-error));
	else
		(void)dprintf(STDERR_FILENO, "sandbox-init: %s: %s\n", step, msg);
	return error < 0 ? error : -EINVAL;
}
