/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of msc_stacks on this test program's own code (built with -g):
 * two call instructions on one source line are one location and one stack;
 * every address is symbolized once and cached once, however often it comes
 * back (a lost cache entry once made the collector symbolize the same
 * addresses again and again, and its address table grow without bound).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_stacks.h"

__attribute__((noinline)) static void *here(void)
{
	void *ra = __builtin_return_address(0);

	__asm__ volatile("" ::: "memory");
	return ra;
}

/* Two calls, two return addresses, one line. */
__attribute__((noinline)) static void two_on_one_line(void **a, void **b)
{
	*a = here(); *b = here();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void *elsewhere(void)
{
	void *p = here();

	__asm__ volatile("" ::: "memory");
	return p;
}

/* The frame of an address of this program. */
static struct msc_frame_ref frame_of(struct msc_stacks *st, void *ip)
{
	Dl_info info;
	struct msc_frame_ref f;
	long mod;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	assert_true(dladdr(ip, &info) != 0);
	mod = msc_stacks_module(st, exe, NULL, 0);
	assert_true(mod >= 0);
	f.module = (uint32_t)mod;
	f.addr = (uint64_t)(uintptr_t)ip - (uint64_t)(uintptr_t)info.dli_fbase;
	f.ip = (uint64_t)(uintptr_t)ip;
	return f;
}

static void test_one_line_one_location(void **state)
{
	struct msc_stacks st;
	struct msc_frame_ref fa, fb, fc;
	void *a, *b;
	uint32_t ida, idb, idc, i;
	uint32_t nsf;

	(void)state;
	assert_int_equal(msc_stacks_init(&st, true), 0);
	two_on_one_line(&a, &b);
	assert_ptr_not_equal(a, b);
	fa = frame_of(&st, a);
	fb = frame_of(&st, b);
	fc = frame_of(&st, elsewhere());
	ida = msc_stacks_intern(&st, &fa, 1);
	assert_int_not_equal(ida, 0);
	nsf = st.nsf;
	idb = msc_stacks_intern(&st, &fb, 1);
	/* The same source line: the same location, the same stack. */
	assert_int_equal(idb, ida);
	assert_int_equal(st.nsf, nsf);
	idc = msc_stacks_intern(&st, &fc, 1);
	assert_int_not_equal(idc, ida);
	/* Seen again and again: nothing new is cached or created. */
	for (i = 0; i < 1000; i++) {
		assert_int_equal(msc_stacks_intern(&st, &fb, 1), ida);
		assert_int_equal(msc_stacks_intern(&st, &fa, 1), ida);
		assert_int_equal(msc_stacks_intern(&st, &fc, 1), idc);
	}
	assert_int_equal(st.naddrs, 3);
	assert_int_equal(st.sf_by_addr.count, 3);
	assert_int_equal(st.nstacks, 3);	/* [0] unused */
	msc_stacks_release(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line_one_location),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
