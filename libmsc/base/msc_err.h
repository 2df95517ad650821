/* SPDX-License-Identifier: MIT */
/*
 * msc_err: how libmsc reports failure without printing.
 *
 * Every libmsc function that can fail returns 0 (or a count) on success and
 * a negative errno value on failure.  Parsers and readers additionally fill
 * an optional struct msc_err with a one-line message of the form
 * "where: what" (for input, "FILE:LINE: what"), which a tool prints after its
 * own name.  Passing NULL for the msc_err is always allowed.
 */
#ifndef MSC_ERR_H
#define MSC_ERR_H

#define MSC_ERR_MAX 512

struct msc_err {
	int code;			/* negative errno, 0 when unset */
	char msg[MSC_ERR_MAX];		/* "where: what", no trailing newline */
};

/* Sets err (if not NULL) to code and the formatted message; returns code. */
int msc_err_set(struct msc_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
