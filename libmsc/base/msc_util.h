/* SPDX-License-Identifier: MIT */
/*
 * msc_util: the small helpers every part of libmsc and the tools use.
 *
 *   - MSC_GROW: grow a heap array by doubling, as git's ALLOC_GROW;
 *   - ARRAY_SIZE and branch hints;
 *   - human-readable figures for reports and messages ("64.0 MiB",
 *     "1,234,567", "12.3 ms");
 *   - clocks, in nanoseconds.
 *
 * Nothing here prints, exits or keeps state.
 */
#ifndef MSC_UTIL_H
#define MSC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* memscope's version, as every tool and header record says it. */
#define MSC_VERSION "0.1.0"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A decimal number that starts with a digit (no space, no sign), all of s:
 * 0, -EINVAL, or -ERANGE beyond UINT64_MAX. */
int msc_parse_uint(const char *s, uint64_t *out);
/* A time with its unit, all of s: "30s", "1.5m", "250ms", "2h", "10us",
 * "100ns", in ns: 0, -EINVAL (no unit, or not a number), -ERANGE. */
int msc_parse_time(const char *s, uint64_t *ns);

#endif

#define msc_likely(x) __builtin_expect(!!(x), 1)
#define msc_unlikely(x) __builtin_expect(!!(x), 0)

/* *a += b, held at UINT64_MAX: a reader's sums of counts and bytes from
 * its input never wrap (two leaks of 2^63 blocks are not 0). */
static inline void msc_sat_add(uint64_t *a, uint64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = UINT64_MAX;
}

/* a + b and a - b for signed figures (ms-diff's totals and changes), held
 * at INT64_MIN and INT64_MAX instead of wrapping. */
static inline int64_t msc_sat_add_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t msc_sat_sub_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* A count for the signed formatters (msc_fmt_*): held at INT64_MAX, not
 * shown negative. */
static inline int64_t msc_clamp_i64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/*
 * Makes room for at least `need` elements in the heap array `arr` of
 * capacity `cap` (a variable of any unsigned type, updated), doubling from
 * `first`; contents are kept, new elements uninitialized.  Evaluates to 0,
 * or -ENOMEM with arr and cap unchanged.  Usage:
 *
 *	if (MSC_GROW(v->items, v->n + 1, v->cap, 16))
 *		return -ENOMEM;
 *	v->items[v->n++] = x;
 */
#define MSC_GROW(arr, need, cap, first)                                                 \
	__extension__({                                                                 \
		_Static_assert(sizeof(cap) == 4 || sizeof(cap) == 8,                    \
			       "MSC_GROW: a capacity of 32 or 64 bits");                \
		void *grow_p_ = (arr);                                                  \
		int grow_r_ = msc_grow(&grow_p_, (size_t)(need), sizeof(*(arr)), &(cap), \
				       sizeof(cap), (first));                           \
		if (!grow_r_)                                                           \
			(arr) = grow_p_;                                                \
		grow_r_;                                                                \
	})

/* The function behind MSC_GROW; capsize is sizeof the capacity variable. */
int msc_grow(void **arr, size_t need, size_t elem, void *cap, size_t capsize, size_t first);

/* "64.0 MiB", "512 B", "-1.2 GiB": human sizes in powers of 1024. */
char *msc_fmt_size(char *buf, size_t n, int64_t bytes);
/* "1.234 s", "12.3 ms": human durations. */
char *msc_fmt_duration(char *buf, size_t n, uint64_t ns);
/* Reads up to n - 1 bytes of a small file (/proc's) in one read, NUL
 * terminated: their number, or -errno. */
long msc_read_small(const char *path, char *buf, size_t n);
/* "1,234,567": integers with thousands separators. */
char *msc_fmt_count(char *buf, size_t n, int64_t v);
/* "89,609 B": exact bytes, for what is an answer, not an estimate (leaks). */
char *msc_fmt_exact(char *buf, size_t n, int64_t bytes);

/*
 * The pid a /proc or socket directory entry's name starts with ("1234",
 * "1234.sock"): *rest gets what follows the digits.  0 when the name does
 * not start with a pid (1 to 2^30 - 1).
 */
int msc_name_pid(const char *name, const char **rest);

/* Current wall clock (since the epoch), boot clock and monotonic clock, in ns. */
uint64_t msc_now_epoch(void);
uint64_t msc_now_boottime(void);
uint64_t msc_now_monotonic(void);
/* CPU time of the calling thread, ns. */
uint64_t msc_now_thread_cpu(void);

/*
 * Whether a leak checker watches this process (valgrind's memcheck, or a
 * build with AddressSanitizer): then what a tool frees only to be tidy at
 * its exit is freed, so that the checker reports real leaks only.  Else
 * the exit gives it all back at once (freeing libdw's tables of a program
 * and its libraries piece by piece would be work after the recording is
 * written, for nothing).
 */
bool msc_leak_checked(void);

/* A decimal number that starts with a digit (no space, no sign), all of s:
 * 0, -EINVAL, or -ERANGE beyond UINT64_MAX. */
int msc_parse_uint(const char *s, uint64_t *out);

#endif
