/* SPDX-License-Identifier: MIT */
/* Error records for libmsc callers: see msc_err.h. */
#include <stdarg.h>
#include <stdio.h>

#include "msc_err.h"

int msc_err_set(struct msc_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

