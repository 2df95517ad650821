/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of msc_timeline: a run of any length keeps between half and
 * all of MSC_TIMELINE_POINTS, in time order, each exact; equal points in
 * a row keep their ends only; a point at the time of the last replaces it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "msc_agg.h"
#include "msc_timeline.h"

#define MS 1000000ull

static void test_points_of_a_long_run(void **state)
{
	struct msc_timeline t;
	struct msc_agg a;
	uint64_t i, ptr = 0x100000;
	size_t k;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	msc_timeline_init(&t);
	/* 100 s, an allocation of stack 1 + i % 3 every ms: 100,000 steps. */
	for (i = 0; i < 100000; i++, ptr += 0x40) {
		assert_int_equal(msc_agg_alloc(&a, i * MS, 1, ptr, 32, 1 + (uint32_t)(i % 3), MSC_FN_MALLOC), 0);
		if (msc_timeline_due(&t, i * MS + 1))
			msc_timeline_take(&t, &a, i * MS + 1, true);
	}
	assert_in_range(t.npts, MSC_TIMELINE_POINTS / 2, MSC_TIMELINE_POINTS);
	for (k = 1; k < t.npts; k++)
		assert_true(t.pts[k].ts > t.pts[k - 1].ts);
	/* Each point as the heap was: (i + 1) blocks of 32 bytes at i ms,
	 * the three stacks' shares a third each (give or take a block). */
	for (k = 0; k < t.npts; k++) {
		uint64_t blocks = t.pts[k].ts / MS + 1;

		assert_int_equal(t.pts[k].heap, blocks * 32);
		assert_int_equal(t.pts[k].ntop, blocks >= 3 ? 3 : blocks);
		assert_int_equal(t.pts[k].top[0].stack, 1);
		assert_int_equal(t.pts[k].top[0].bytes, (blocks + 2) / 3 * 32);
	}
	/* The step doubled as the points thinned: the last is recent. */
	assert_true(t.pts[t.npts - 1].ts > 99000 * MS);
	msc_timeline_release(&t);
	msc_agg_release(&a);
}

static void test_equal_points(void **state)
{
	struct msc_timeline t;
	struct msc_agg a;
	unsigned i;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	msc_timeline_init(&t);
	assert_int_equal(msc_agg_alloc(&a, 1, 1, 0x1000, 100, 1, MSC_FN_MALLOC), 0);
	/* Five points of the same heap: the first and the last stay. */
	for (i = 0; i < 5; i++)
		msc_timeline_take(&t, &a, (i + 1) * 10 * MS, true);
	assert_int_equal(t.npts, 2);
	assert_int_equal(t.pts[0].ts, 10 * MS);
	assert_int_equal(t.pts[1].ts, 50 * MS);
	/* A change, then one at the same time: it replaces that point. */
	assert_int_equal(msc_agg_alloc(&a, 60 * MS, 1, 0x2000, 50, 2, MSC_FN_MALLOC), 0);
	msc_timeline_take(&t, &a, 60 * MS, true);
	assert_int_equal(msc_agg_alloc(&a, 60 * MS, 1, 0x3000, 50, 2, MSC_FN_MALLOC), 0);
	msc_timeline_take(&t, &a, 60 * MS, true);
	assert_int_equal(t.npts, 3);
	assert_int_equal(t.pts[2].heap, 200);
	assert_int_equal(t.pts[2].top[0].stack, 1);
	assert_int_equal(t.pts[2].top[1].bytes, 100);
	/* Not due before the next step of the events' time. */
	assert_false(msc_timeline_due(&t, 60 * MS + 1));
	assert_true(msc_timeline_due(&t, 61 * MS));
	msc_timeline_release(&t);
	msc_agg_release(&a);
}

static void test_pinned_points(void **state)
{
	struct msc_timeline t;
	struct msc_agg a;
	uint64_t i, ptr = 0x100000;
	size_t k, found = 0;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	msc_timeline_init(&t);
	/* 10 s of an allocation a ms, a mark at 123.5 ms and 4567.5 ms. */
	for (i = 0; i < 10000; i++, ptr += 0x40) {
		assert_int_equal(msc_agg_alloc(&a, i * MS, 1, ptr, 32, 1, MSC_FN_MALLOC), 0);
		if (i == 123 || i == 4567)
			msc_timeline_pin(&t, &a, i * MS + MS / 2);
		if (msc_timeline_due(&t, i * MS + 1))
			msc_timeline_take(&t, &a, i * MS + 1, true);
	}
	assert_in_range(t.npts, MSC_TIMELINE_POINTS / 2, MSC_TIMELINE_POINTS);
	/* The marks' points outlived every thinning, each the heap then. */
	for (k = 0; k < t.npts; k++)
		if (t.pts[k].pinned) {
			assert_true(t.pts[k].ts == 123 * MS + MS / 2 || t.pts[k].ts == 4567 * MS + MS / 2);
			assert_int_equal(t.pts[k].heap, (t.pts[k].ts / MS + 1) * 32);
			found++;
		}
	assert_int_equal(found, 2);
	for (k = 1; k < t.npts; k++)
		assert_true(t.pts[k].ts > t.pts[k - 1].ts);
	msc_timeline_release(&t);
	msc_agg_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_points_of_a_long_run),
		cmocka_unit_test(test_equal_points),
		cmocka_unit_test(test_pinned_points),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
