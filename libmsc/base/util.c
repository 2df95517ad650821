/* SPDX-License-Identifier: MIT */
/* Small shared helpers: see msc_util.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msc_util.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MSC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MSC_ASAN 1
#endif
#endif
#ifndef MSC_ASAN
#define MSC_ASAN 0
#endif

int msc_name_pid(const char *name, const char **rest)
{
	long pid = 0;

	if (*name < '0' || *name > '9')
		return 0;
	while (*name >= '0' && *name <= '9' && pid < 0x40000000)
		pid = pid * 10 + (*name++ - '0');
	*rest = name;
	return pid > 0 && pid < 0x40000000 ? (int)pid : 0;
}

int msc_grow(void **arr, size_t need, size_t elem, void *cap, size_t capsize, size_t first)
{
	size_t have, ncap;
	void *n;

	switch (capsize) {
	case sizeof(uint32_t):
		have = *(uint32_t *)cap;
		break;
	case sizeof(uint64_t):
		have = (size_t)*(uint64_t *)cap;
		break;
	default:
		return -EINVAL;
	}
	if (need <= have)
		return 0;
	ncap = have ? have : (first ? first : 8);
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (capsize == sizeof(uint32_t) && ncap > UINT32_MAX) {
		ncap = UINT32_MAX;
		if (ncap < need)
			return -ENOMEM;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	if (capsize == sizeof(uint32_t))
		*(uint32_t *)cap = (uint32_t)ncap;
	else
		*(uint64_t *)cap = ncap;
	return 0;
}

char *msc_fmt_size(char *buf, size_t n, int64_t bytes)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
	const char *sign = bytes < 0 ? "-" : "";
	double v = (double)mag;
	size_t u = 0;

	if (mag < 1024) {
		snprintf(buf, n, "%s%" PRIu64 " B", sign, mag);
		return buf;
	}
	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (v >= 1023.95 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, "%s%.1f %s", sign, v, units[u]);
	return buf;
}

char *msc_fmt_duration(char *buf, size_t n, uint64_t ns)
{
	/*
	 * The unit changes where the rounded figure would reach 1000
	 * (999950 ns is "1.0 ms", not "1000.0 us"), as msc_fmt_size() does.
	 */
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 " ns", ns);
	else if (ns < 999950)
		snprintf(buf, n, "%.1f us", (double)ns / 1e3);
	else if (ns < 999950000)
		snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
}

char *msc_fmt_count(char *buf, size_t n, int64_t v)
{
	char tmp[32];
	uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	size_t len, i, o = 0;

	len = (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64, mag);
	if (n == 0)
		return buf;
	if (v < 0 && o + 1 < n)
		buf[o++] = '-';
	for (i = 0; i < len && o + 1 < n; i++) {
		if (i > 0 && (len - i) % 3 == 0 && o + 2 < n)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

char *msc_fmt_exact(char *buf, size_t n, int64_t bytes)
{
	char c[32];

	snprintf(buf, n, "%s B", msc_fmt_count(c, sizeof(c), bytes));
	return buf;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t msc_now_epoch(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t msc_now_boottime(void)
{
	return clock_ns(CLOCK_BOOTTIME);
}

uint64_t msc_now_monotonic(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t msc_now_thread_cpu(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

bool msc_leak_checked(void)
{
#if MSC_ASAN
	return true;
#elif defined(RUNNING_ON_VALGRIND)
	return RUNNING_ON_VALGRIND != 0;
#else
	return true;	/* without valgrind's header: the tidy way */
#endif
}

long msc_read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, n - 1);
	if (r < 0)
		r = -errno;
	close(fd);
	buf[r > 0 ? r : 0] = '\0';
	return (long)r;
}

int msc_parse_uint(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	/*
	 * strtoull() skips any leading white space and accepts a sign, so
	 * "\t-1" would wrap around to UINT64_MAX: the number must start with
	 * a digit.
	 */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int msc_parse_time(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; long double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3L }, { "ms", 1e6L }, { "s", 1e9L }, { "m", 60e9L }, { "h", 3600e9L },
	};
	long double v;
	char *end;
	size_t i;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtold(s, &end);
	if (end == s || errno)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			v = v * units[i].ns + 0.5L;
			if (v >= 18446744073709551616.0L)
				return -ERANGE;
			*ns = (uint64_t)v;
			return 0;
		}
	return -EINVAL;
}
