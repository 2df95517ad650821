/* SPDX-License-Identifier: MIT */
/* Unit tests for the shared helpers of libmsc/base/util.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_util.h"

struct vec32 {
	uint64_t *v;
	uint32_t n, cap;
};

static void test_grow_doubles_and_keeps(void **state)
{
	struct vec32 a = { 0 };
	size_t cap64 = 0;
	char *bytes = NULL;
	uint32_t i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		assert_int_equal(MSC_GROW(a.v, a.n + 1, a.cap, 16), 0);
		a.v[a.n++] = i * 3ull;
	}
	/* 16, 32, ..., 1024: doubled from the first capacity. */
	assert_int_equal(a.cap, 1024);
	for (i = 0; i < a.n; i++)
		assert_int_equal(a.v[i], i * 3ull);
	/* Enough room already: nothing changes. */
	assert_int_equal(MSC_GROW(a.v, 10, a.cap, 16), 0);
	assert_int_equal(a.cap, 1024);
	/* A jump past several doublings lands on the first power that fits. */
	assert_int_equal(MSC_GROW(a.v, 5000, a.cap, 16), 0);
	assert_int_equal(a.cap, 8192);
	free(a.v);

	/* A size_t capacity, default first capacity. */
	assert_int_equal(MSC_GROW(bytes, 3, cap64, 0), 0);
	assert_int_equal(cap64, 8);
	memcpy(bytes, "abc", 3);
	assert_int_equal(MSC_GROW(bytes, 9, cap64, 0), 0);
	assert_int_equal(cap64, 16);
	assert_memory_equal(bytes, "abc", 3);
	free(bytes);
}

static void test_grow_refuses_overflow(void **state)
{
	struct vec32 a = { 0 };
	size_t cap = 0;
	uint64_t *big = NULL;

	(void)state;
	/* More than a 32-bit capacity can count. */
	assert_int_equal(MSC_GROW(a.v, (size_t)UINT32_MAX + 1, a.cap, 16), -ENOMEM);
	assert_null(a.v);
	assert_int_equal(a.cap, 0);
	/* need * elem overflows size_t. */
	assert_int_equal(MSC_GROW(big, SIZE_MAX / 4, cap, 16), -ENOMEM);
	assert_null(big);
	assert_int_equal(cap, 0);
}

static void test_fmt(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(msc_fmt_size(b, sizeof(b), 512), "512 B");
	assert_string_equal(msc_fmt_size(b, sizeof(b), 64 << 20), "64.0 MiB");
	assert_string_equal(msc_fmt_size(b, sizeof(b), -1288490189), "-1.2 GiB");
	assert_string_equal(msc_fmt_count(b, sizeof(b), 1234567), "1,234,567");
	assert_string_equal(msc_fmt_exact(b, sizeof(b), 89609), "89,609 B");
	assert_string_equal(msc_fmt_exact(b, sizeof(b), 0), "0 B");
	assert_string_equal(msc_fmt_count(b, sizeof(b), -1000), "-1,000");
	assert_string_equal(msc_fmt_duration(b, sizeof(b), 999950), "1.0 ms");
	assert_string_equal(msc_fmt_duration(b, sizeof(b), 1234000000), "1.234 s");
}

static void test_clocks(void **state)
{
	uint64_t a, b;

	(void)state;
	a = msc_now_monotonic();
	b = msc_now_monotonic();
	assert_true(b >= a);
	/* After 2020-01-01, in ns. */
	assert_true(msc_now_epoch() > 1577836800ull * 1000000000ull);
	assert_true(msc_now_boottime() > 0);
}

static void test_name_pid(void **state)
{
	const char *rest = "unset";

	(void)state;
	assert_int_equal(msc_name_pid("1234", &rest), 1234);
	assert_string_equal(rest, "");
	assert_int_equal(msc_name_pid("77.sock", &rest), 77);
	assert_string_equal(rest, ".sock");
	assert_int_equal(msc_name_pid("self", &rest), 0);
	assert_int_equal(msc_name_pid("", &rest), 0);
	assert_int_equal(msc_name_pid("0", &rest), 0);
	/* pid_max is at most 2^22; anything from 2^30 up is not a pid. */
	assert_int_equal(msc_name_pid("1073741823", &rest), 1073741823);
	assert_int_equal(msc_name_pid("1073741824", &rest), 0);
	assert_int_equal(msc_name_pid("99999999999999999999", &rest), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_doubles_and_keeps),
		cmocka_unit_test(test_name_pid),
		cmocka_unit_test(test_grow_refuses_overflow),
		cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_clocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
