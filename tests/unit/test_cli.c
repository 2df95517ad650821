/* SPDX-License-Identifier: MIT */
/* Unit tests for the value parsers of libmsc/cli/cli.c and the formatters of
 * libmsc/base/util.c. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "msc_cli.h"
#include "msc_err.h"

/* A sentinel that no parser result below can be: shows "out untouched". */
#define UNTOUCHED 0xdeadbeefcafef00dull

static void check_size(const char *s, uint64_t want)
{
	uint64_t v = UNTOUCHED;
	int ret = msc_parse_size(s, &v);

	if (ret != 0)
		print_error("msc_parse_size(\"%s\") = %d\n", s, ret);
	assert_int_equal(ret, 0);
	assert_int_equal(v, want);
}

static void check_size_fails(const char *s, int want)
{
	uint64_t v = UNTOUCHED;
	int ret = msc_parse_size(s, &v);

	if (ret != want)
		print_error("msc_parse_size(\"%s\") = %d\n", s, ret);
	assert_int_equal(ret, want);
	assert_int_equal(v, UNTOUCHED);
}

static void test_parse_size_units(void **state)
{
	(void)state;
	check_size("4096", 4096);
	check_size("0", 0);
	check_size("4096B", 4096);
	check_size("512k", 512 * 1024);
	check_size("512K", 512 * 1024);
	check_size("512KiB", 512 * 1024);
	check_size("64M", 67108864);
	check_size("64m", 67108864);
	check_size("64MiB", 67108864);
	check_size("64MB", 67108864);
	check_size("1.5G", 1610612736);
	check_size("2T", 2ull << 40);
	check_size("3P", 3ull << 50);
	check_size("15E", 15ull << 60);
	check_size("0.5k", 512);
	check_size(".5k", 512);
	check_size("1.", 1);
	/* Fractions of a byte round to the nearest byte. */
	check_size("0.001k", 1);
	check_size("1.0001k", 1024);
	check_size("1.9999", 2);
}

static void test_parse_size_limits(void **state)
{
	(void)state;
	check_size("18446744073709551615", UINT64_MAX);
	check_size("18446744073709551614", UINT64_MAX - 1);
	check_size("9223372036854775808", 1ull << 63);
	check_size_fails("18446744073709551616", -ERANGE);
	check_size_fails("16E", -ERANGE);
	check_size_fails("16384P", -ERANGE);
	check_size_fails("99999999999999999999999999999", -ERANGE);
}

static void test_parse_size_bad(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1 ", "12Q", "M", "1.2.3", ".", "k", "1MM",
		"1MiBB", "1Mi", "1mib", "1BB", "1KB2", "0x10", "1e3", "1,5M", "1%",
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		check_size_fails(bad[i], -EINVAL);
	assert_int_equal(msc_parse_size(NULL, &(uint64_t){ 0 }), -EINVAL);
}

static void test_parse_size_or_pct(void **state)
{
	uint64_t v;
	bool pct;

	(void)state;
	pct = false;
	assert_int_equal(msc_parse_size_or_pct("10%", &v, &pct), 0);
	assert_true(pct);
	assert_int_equal(v, 10000);

	assert_int_equal(msc_parse_size_or_pct("0.5%", &v, &pct), 0);
	assert_true(pct);
	assert_int_equal(v, 500);

	assert_int_equal(msc_parse_size_or_pct("12.3456%", &v, &pct), 0);
	assert_int_equal(v, 12346);

	assert_int_equal(msc_parse_size_or_pct("250%", &v, &pct), 0);
	assert_int_equal(v, 250000);

	pct = true;
	assert_int_equal(msc_parse_size_or_pct("64M", &v, &pct), 0);
	assert_false(pct);
	assert_int_equal(v, 67108864);

	v = UNTOUCHED;
	assert_int_equal(msc_parse_size_or_pct("%", &v, &pct), -EINVAL);
	assert_int_equal(msc_parse_size_or_pct("-5%", &v, &pct), -EINVAL);
	assert_int_equal(msc_parse_size_or_pct("5%%", &v, &pct), -EINVAL);
	assert_int_equal(msc_parse_size_or_pct("5M%", &v, &pct), -EINVAL);
	assert_int_equal(msc_parse_size_or_pct("x%", &v, &pct), -EINVAL);
	assert_int_equal(msc_parse_size_or_pct("", &v, &pct), -EINVAL);
	assert_int_equal(msc_parse_size_or_pct("12Q", &v, &pct), -EINVAL);
	/* 10^23 % * 1000 does not fit in 64 bits. */
	assert_int_equal(msc_parse_size_or_pct("99999999999999999999999%", &v, &pct),
			 -ERANGE);
	assert_int_equal(v, UNTOUCHED);
}

static void check_duration(const char *s, uint64_t want_ns)
{
	uint64_t ns = UNTOUCHED;
	int ret = msc_parse_duration(s, &ns);

	if (ret != 0)
		print_error("msc_parse_duration(\"%s\") = %d\n", s, ret);
	assert_int_equal(ret, 0);
	assert_int_equal(ns, want_ns);
}

static void test_parse_duration(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+1", "ms", "1 ms", "1ms ", "1MS", "1sec", "1.2.3s", "1x",
		"1d", ".", "1e3", "s",
	};
	uint64_t ns = UNTOUCHED;
	size_t i;

	(void)state;
	check_duration("250ms", 250000000);
	check_duration("2s", 2000000000);
	check_duration("10us", 10000);
	check_duration("100ns", 100);
	check_duration("1.5m", 90000000000ull);
	check_duration("2h", 7200000000000ull);
	check_duration("0.1s", 100000000);
	check_duration("1.5ns", 2);
	/* A bare number is milliseconds. */
	check_duration("250", 250000000);
	check_duration("0.5", 500000);
	check_duration("0", 0);
	check_duration("18446744073709551615ns", UINT64_MAX);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = msc_parse_duration(bad[i], &ns);

		if (ret != -EINVAL)
			print_error("msc_parse_duration(\"%s\") = %d\n", bad[i], ret);
		assert_int_equal(ret, -EINVAL);
	}
	assert_int_equal(msc_parse_duration("18446744073709551616ns", &ns), -ERANGE);
	assert_int_equal(msc_parse_duration("99999999999999h", &ns), -ERANGE);
	assert_int_equal(msc_parse_duration(NULL, &ns), -EINVAL);
	assert_int_equal(ns, UNTOUCHED);
}

static void test_parse_pid(void **state)
{
	static const char *const bad[] = {
		"", "0", "-1", "+1", " 1", "\t1", "\t-1", "1 ", "12a", "0x10", "abc",
		"1073741824", "99999999999999999999999",
	};
	int pid = -42;
	size_t i;

	(void)state;
	assert_int_equal(msc_parse_pid("1", &pid), 0);
	assert_int_equal(pid, 1);
	assert_int_equal(msc_parse_pid("4194304", &pid), 0);
	assert_int_equal(pid, 4194304);
	assert_int_equal(msc_parse_pid("1073741823", &pid), 0);
	assert_int_equal(pid, 1073741823);
	assert_int_equal(msc_parse_pid("007", &pid), 0);
	assert_int_equal(pid, 7);

	pid = -42;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = msc_parse_pid(bad[i], &pid);

		if (ret != -EINVAL)
			print_error("msc_parse_pid(\"%s\") = %d\n", bad[i], ret);
		assert_int_equal(ret, -EINVAL);
	}
	assert_int_equal(msc_parse_pid(NULL, &pid), -EINVAL);
	assert_int_equal(pid, -42);
}

static void test_parse_uint(void **state)
{
	uint64_t v = UNTOUCHED;

	(void)state;
	assert_int_equal(msc_parse_uint("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(msc_parse_uint("0", &v), 0);
	assert_int_equal(v, 0);

	v = UNTOUCHED;
	assert_int_equal(msc_parse_uint("18446744073709551616", &v), -ERANGE);
	/* strtoull() would skip the white space and wrap the sign around. */
	assert_int_equal(msc_parse_uint("\t-1", &v), -EINVAL);
	assert_int_equal(msc_parse_uint("\n5", &v), -EINVAL);
	assert_int_equal(msc_parse_uint("-0", &v), -EINVAL);
	assert_int_equal(msc_parse_uint("5k", &v), -EINVAL);
	assert_int_equal(msc_parse_uint("", &v), -EINVAL);
	assert_int_equal(v, UNTOUCHED);
}

static void check_fmt_size(int64_t bytes, const char *want)
{
	char buf[32];

	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(msc_fmt_size(buf, sizeof(buf), bytes), buf);
	assert_string_equal(buf, want);
}

static void test_fmt_size(void **state)
{
	(void)state;
	check_fmt_size(0, "0 B");
	check_fmt_size(512, "512 B");
	check_fmt_size(1023, "1023 B");
	check_fmt_size(1024, "1.0 KiB");
	check_fmt_size(1536, "1.5 KiB");
	check_fmt_size(67108864, "64.0 MiB");
	check_fmt_size(1610612736, "1.5 GiB");
	check_fmt_size(1ll << 40, "1.0 TiB");
	check_fmt_size(1ll << 50, "1.0 PiB");
	check_fmt_size(INT64_MAX, "8.0 EiB");
	/* 1023.999 KiB would print as "1024.0 KiB": the next unit is used. */
	check_fmt_size(1048575, "1.0 MiB");
	check_fmt_size(1048063, "1023.5 KiB");
	check_fmt_size(-1, "-1 B");
	check_fmt_size(-512, "-512 B");
	check_fmt_size(-1536, "-1.5 KiB");
	check_fmt_size(-67108864, "-64.0 MiB");
	check_fmt_size(-1288490189, "-1.2 GiB");
	check_fmt_size(INT64_MIN, "-8.0 EiB");
}

static void test_fmt_size_truncates(void **state)
{
	char buf[6];

	(void)state;
	msc_fmt_size(buf, sizeof(buf), 67108864);
	assert_string_equal(buf, "64.0 ");
}

static void check_fmt_count(int64_t v, const char *want)
{
	char buf[32];

	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(msc_fmt_count(buf, sizeof(buf), v), buf);
	assert_string_equal(buf, want);
}

static void test_fmt_count(void **state)
{
	char small[4];

	(void)state;
	check_fmt_count(0, "0");
	check_fmt_count(7, "7");
	check_fmt_count(999, "999");
	check_fmt_count(1000, "1,000");
	check_fmt_count(12345, "12,345");
	check_fmt_count(123456, "123,456");
	check_fmt_count(1234567, "1,234,567");
	check_fmt_count(-1000, "-1,000");
	check_fmt_count(-999, "-999");
	check_fmt_count(-1, "-1");
	check_fmt_count(INT64_MAX, "9,223,372,036,854,775,807");
	check_fmt_count(INT64_MIN, "-9,223,372,036,854,775,808");

	/* Never writes past the buffer, always terminates. */
	memset(small, 'x', sizeof(small));
	msc_fmt_count(small, sizeof(small), 1234567);
	assert_int_equal(strlen(small), 3);
	small[0] = 'x';
	msc_fmt_count(small, 0, 5);
	assert_int_equal(small[0], 'x');
}

static void check_fmt_duration(uint64_t ns, const char *want)
{
	char buf[32];

	memset(buf, 'x', sizeof(buf));
	assert_ptr_equal(msc_fmt_duration(buf, sizeof(buf), ns), buf);
	assert_string_equal(buf, want);
}

static void test_fmt_duration(void **state)
{
	(void)state;
	check_fmt_duration(0, "0 ns");
	check_fmt_duration(999, "999 ns");
	check_fmt_duration(1000, "1.0 us");
	check_fmt_duration(1500, "1.5 us");
	check_fmt_duration(999949, "999.9 us");
	/* Would round to "1000.0 us": the next unit is used instead. */
	check_fmt_duration(999950, "1.0 ms");
	check_fmt_duration(999999, "1.0 ms");
	check_fmt_duration(1000000, "1.0 ms");
	check_fmt_duration(12300000, "12.3 ms");
	check_fmt_duration(999949999, "999.9 ms");
	check_fmt_duration(999999999, "1.000 s");
	check_fmt_duration(1000000000, "1.000 s");
	check_fmt_duration(1234000000, "1.234 s");
	check_fmt_duration(90000000000ull, "90.000 s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size_units),
		cmocka_unit_test(test_parse_size_limits),
		cmocka_unit_test(test_parse_size_bad),
		cmocka_unit_test(test_parse_size_or_pct),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_pid),
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_fmt_size),
		cmocka_unit_test(test_fmt_size_truncates),
		cmocka_unit_test(test_fmt_count),
		cmocka_unit_test(test_fmt_duration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
