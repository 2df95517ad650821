/* SPDX-License-Identifier: MIT */
/* ms-top: sizes for narrow columns, and a sort that allocates nothing. */
#include <stdio.h>
#include <string.h>

#include "top.h"

/*
 * Heapsort: glibc's qsort() mallocs a buffer for arrays of more than a few
 * hundred bytes, and the refresh loop allocates nothing.  Not stable: the
 * comparisons break ties (by pid, by stack id).
 */
static void swap_elems(unsigned char *a, unsigned char *b, size_t size)
{
	unsigned char tmp[64];

	while (size) {
		size_t n = size < sizeof(tmp) ? size : sizeof(tmp);

		memcpy(tmp, a, n);
		memcpy(a, b, n);
		memcpy(b, tmp, n);
		a += n;
		b += n;
		size -= n;
	}
}

static void sift_down(unsigned char *base, size_t root, size_t n, size_t size,
		      int (*cmp)(const void *, const void *))
{
	for (;;) {
		size_t child = 2 * root + 1;

		if (child >= n)
			return;
		if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0)
			child++;
		if (cmp(base + root * size, base + child * size) >= 0)
			return;
		swap_elems(base + root * size, base + child * size, size);
		root = child;
	}
}

void top_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	unsigned char *b = base;
	size_t i;

	if (n < 2)
		return;
	for (i = n / 2; i-- > 0;)
		sift_down(b, i, n, size, cmp);
	for (i = n - 1; i > 0; i--) {
		swap_elems(b, b + i * size, size);
		sift_down(b, 0, i, size, cmp);
	}
}

/* ------------------------------------------------------------ sizes */

char *top_fmt_size(char *buf, size_t n, uint64_t bytes)
{
	double v = (double)bytes / 1024;

	if (bytes == 0)
		snprintf(buf, n, "0");
	else if (bytes < 1024)
		snprintf(buf, n, "%uB", (unsigned)bytes);
	else if (v < 999.5)
		snprintf(buf, n, "%.0fK", v);
	else if ((v /= 1024) < 999.95)
		snprintf(buf, n, "%.1fM", v);
	else if ((v /= 1024) < 999.95)
		snprintf(buf, n, "%.1fG", v);
	else
		snprintf(buf, n, "%.1fT", v / 1024);
	return buf;
}

char *top_fmt_delta(char *buf, size_t n, int64_t bytes)
{
	uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;

	if (!bytes) {
		snprintf(buf, n, "0");
		return buf;
	}
	buf[0] = bytes < 0 ? '-' : '+';
	top_fmt_size(buf + 1, n - 1, mag);
	return buf;
}
