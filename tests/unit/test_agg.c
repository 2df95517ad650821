/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of msc_agg's table of live blocks: sizes of 4 GiB and more
 * (kept beside the 24-byte entries), allocation times far from zero (kept
 * relative to the first), a realloc undone (the block comes back with its
 * size and time), leak kinds, a table that grows past a million blocks
 * with every figure exact, a stack's sites folding into size classes,
 * memscope.h's pools, and the stacks that hold the most now (every size of
 * a stack together, mappings apart).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_agg.h"
#include "msc_proto.h"

#define GiB (1024ull * 1024 * 1024)
/* Timestamps as an events file written with the wall clock would have. */
#define T0 1795316277003105618ull

static struct msc_live *find(struct msc_agg *a, uint64_t ptr)
{
	size_t i;

	for (i = 0; i < msc_live_slots(a); i++)
		if (a->live[i].ptr == ptr)
			return &a->live[i];
	return NULL;
}

static void test_big_sizes_and_times(void **state)
{
	struct msc_agg a;
	struct msc_freed fr;
	struct msc_live *l;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x10000, 5 * GiB, 1, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_alloc(&a, T0 + 500, 1, 0x20000, 48, 2, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_alloc(&a, T0 + 700, 1, 0x30000, UINT32_MAX, 3, MSC_FN_MALLOC), 0);
	assert_int_equal(a.live_bytes, 5 * GiB + 48 + (uint64_t)UINT32_MAX);
	l = find(&a, 0x10000);
	assert_non_null(l);
	assert_int_equal(msc_live_size(&a, l), 5 * GiB);
	assert_int_equal(msc_live_ts(&a, l), T0);
	l = find(&a, 0x30000);
	assert_int_equal(msc_live_size(&a, l), UINT32_MAX);
	l = find(&a, 0x20000);
	assert_int_equal(msc_live_size(&a, l), 48);
	assert_int_equal(msc_live_ts(&a, l), T0 + 500);
	assert_int_equal(msc_live_kind(l), MSC_LEAK_UNSCANNED);
	msc_live_set_kind(l, MSC_LEAK_REACHABLE);
	assert_int_equal(msc_live_kind(l), MSC_LEAK_REACHABLE);
	assert_int_equal(msc_live_ts(&a, l), T0 + 500);
	/* A realloc's free, then the realloc failed: the block comes back. */
	assert_int_equal(msc_agg_free(&a, T0 + 2000, 1, 0x10000, MSC_FN_REALLOC, 0, &fr), 1);
	assert_int_equal(fr.size, 5 * GiB);
	assert_int_equal(fr.alloc_ts, T0);
	assert_int_equal(a.live_bytes, 48 + (uint64_t)UINT32_MAX);
	assert_null(find(&a, 0x10000));
	assert_int_equal(msc_agg_unfree(&a, T0 + 2100, 1, 0x10000), 1);
	l = find(&a, 0x10000);
	assert_non_null(l);
	assert_int_equal(msc_live_size(&a, l), 5 * GiB);
	assert_int_equal(msc_live_ts(&a, l), T0);
	assert_int_equal(a.live_bytes, 5 * GiB + 48 + (uint64_t)UINT32_MAX);
	/* Freed for good: the big size goes with it. */
	assert_int_equal(msc_agg_free(&a, T0 + 3000, 1, 0x10000, MSC_FN_FREE, 0, &fr), 1);
	assert_int_equal(fr.size, 5 * GiB);
	assert_int_equal(msc_agg_free(&a, T0 + 3000, 1, 0x30000, MSC_FN_FREE, 0, &fr), 1);
	assert_int_equal(fr.size, UINT32_MAX);
	assert_int_equal(a.big.count, 0);
	assert_int_equal(a.live_bytes, 48);
	/* The lifetime histogram: 3000 ns and 2300 ns, both below 10 us. */
	assert_int_equal(a.sites[0].ages[1] + a.sites[2].ages[1], 2);
	msc_agg_release(&a);
}

static void test_many_blocks(void **state)
{
	enum { N = 1200000 };
	struct msc_agg a;
	struct msc_freed fr;
	uint64_t i, bytes = 0;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	for (i = 0; i < N; i++) {
		assert_int_equal(msc_agg_alloc(&a, 1000 + i, 1, 0x100000 + i * 16, 16 + i % 100,
					       1 + (uint32_t)(i % 7), MSC_FN_MALLOC), 0);
		bytes += 16 + i % 100;
	}
	assert_int_equal(a.live_blocks, N);
	assert_int_equal(a.live_bytes, bytes);
	assert_true(a.live_mask + 1 >= N);
	/* Every other block freed, each found with its size and time. */
	for (i = 0; i < N; i += 2) {
		assert_int_equal(msc_agg_free(&a, 5000000 + i, 1, 0x100000 + i * 16, MSC_FN_FREE, 0, &fr), 1);
		assert_int_equal(fr.size, 16 + i % 100);
		assert_int_equal(fr.alloc_ts, 1000 + i);
		bytes -= 16 + i % 100;
	}
	assert_int_equal(a.live_blocks, N / 2);
	assert_int_equal(a.live_bytes, bytes);
	assert_int_equal(a.frees, N / 2);
	assert_int_equal(a.unknown_frees, 0);
	msc_agg_release(&a);
}

/*
 * The live table's own rules (msc_agg.h): each entry sits at or after its
 * home with no empty slot between, the count is right, and the last slot
 * is empty unless a growth is due.
 */
static void check_live_table(const struct msc_agg *a)
{
	size_t i, j, n = 0;

	if (a->live_limit)
		assert_int_equal(a->live[msc_live_slots(a) - 1].ptr, 0);
	for (i = 0; i < msc_live_slots(a); i++) {
		size_t h;

		if (!a->live[i].ptr)
			continue;
		n++;
		h = msc_live_hash(a->live[i].ptr, a->live_mask);
		assert_true(h <= i);
		for (j = h; j < i; j++)
			assert_true(a->live[j].ptr != 0);
	}
	assert_int_equal(n, a->live_count);
}

/*
 * Blocks of one size made one after the other, as glibc hands them out:
 * their entries sit near their homes at every stride (msc_live_hash).  A
 * plain multiplicative hash put 200,000 blocks 64 bytes apart 5.8 slots
 * past their homes on average, 128 bytes apart 12.
 */
static void test_live_hash_strides(void **state)
{
	static const unsigned strides[] = { 32, 48, 64, 80, 112, 128, 176, 256, 1040, 4112, 8208 };
	enum { N = 200000 };
	unsigned j;

	(void)state;
	for (j = 0; j < sizeof(strides) / sizeof(strides[0]); j++) {
		struct msc_agg a;
		uint64_t past = 0, n = 0;
		size_t i;

		assert_int_equal(msc_agg_init(&a, NULL), 0);
		for (i = 0; i < N; i++)
			assert_int_equal(msc_agg_alloc(&a, T0 + i, 1, 0x55d0c83b6940ull + i * strides[j], 24,
						       1, MSC_FN_MALLOC), 0);
		for (i = 0; i < msc_live_slots(&a); i++) {
			uint64_t ptr = a.live[i].ptr;

			if (!ptr)
				continue;
			past += i - msc_live_hash(ptr, a.live_mask);
			n++;
		}
		assert_int_equal(n, N);
		if (past > 2 * n)
			fail_msg("stride %u: %.2f slots past their homes on average", strides[j],
				 (double)past / (double)n);
		msc_agg_release(&a);
	}
}

/*
 * Growth in place, with runs into the tail past the last home: addresses
 * whose homes are the last eight slots of the first table (1100 of them,
 * more than the tail holds, so that a run reaching the end makes the table
 * grow too), mixed with others, allocated and freed at random against a
 * reference; the table is checked against its rules and every block's
 * size and time after each step of a few thousand.
 */
static void test_live_table_growth(void **state)
{
	enum { NHOT = 1100, NCOLD = 60000, N = NHOT + NCOLD, STEPS = 400000 };
	uint64_t *addr = malloc(N * sizeof(*addr)), rng = 0x2545f4914f6cdd1dull, k;
	bool *live = calloc(N, sizeof(*live));
	struct msc_agg a;
	struct msc_freed fr;
	size_t i, nhot = 0, nlive = 0, grows = 0, last_mask;

	(void)state;
	assert_non_null(addr);
	assert_non_null(live);
	for (k = 1; nhot < NHOT; k++)
		if (msc_live_hash(0x7f0000000000ull + k * 16, 4095) >= 4088)
			addr[nhot++] = 0x7f0000000000ull + k * 16;
	for (i = NHOT; i < N; i++)
		addr[i] = 0x560000000000ull + (uint64_t)i * 48;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	last_mask = a.live_mask;
	/* First the hot ones alone: a run of 1100 from the last homes. */
	for (i = 0; i < NHOT; i++) {
		assert_int_equal(msc_agg_alloc(&a, 1000 + i, 1, addr[i], 16 + i, 1, MSC_FN_MALLOC), 0);
		live[i] = true;
		nlive++;
	}
	check_live_table(&a);
	assert_true(a.live_mask > 4095);	/* the run reached the end */
	for (i = 0; i < STEPS; i++) {
		size_t x;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		x = (size_t)(rng >> 16) % N;
		if (!live[x]) {
			assert_int_equal(msc_agg_alloc(&a, 10000 + i, 1, addr[x], 16 + x, 1 + (uint32_t)(x % 5),
						       MSC_FN_MALLOC), 0);
			live[x] = true;
			nlive++;
		} else if (rng & 1) {
			assert_int_equal(msc_agg_free(&a, 20000000 + i, 1, addr[x], MSC_FN_FREE, 0, &fr), 1);
			assert_int_equal(fr.size, 16 + x);
			live[x] = false;
			nlive--;
		}
		if (a.live_mask != last_mask) {
			grows++;
			last_mask = a.live_mask;
			check_live_table(&a);
		}
		if (i % 50000 == 0)
			check_live_table(&a);
	}
	check_live_table(&a);
	assert_true(grows >= 3);
	assert_int_equal(a.live_blocks, nlive);
	/* Every block is found with its size; the others are unknown frees. */
	for (i = 0; i < N; i++) {
		int r = msc_agg_free(&a, 40000000 + i, 1, addr[i], MSC_FN_FREE, 0, &fr);

		assert_int_equal(r, live[i] ? 1 : 0);
		if (live[i])
			assert_int_equal(fr.size, 16 + i);
	}
	assert_int_equal(a.live_count, 0);
	check_live_table(&a);
	msc_agg_release(&a);
	free(addr);
	free(live);
}

/* The recorder's loop over msc_agg_push (msc_agg.h), with what it applied. */
struct fed {
	unsigned type;
	uint64_t ts, ptr;
};
static struct fed fed_log[64];
static unsigned fed_n;

static void apply_logged(struct msc_agg *a, const struct msc_cevent *ev)
{
	struct msc_agg_result res;
	int r = msc_agg_apply(a, ev, &res);

	assert_true(r >= 0);
	if (r == MSC_AGG_HELD)
		return;
	assert_true(fed_n < 64);
	fed_log[fed_n++] = (struct fed){ ev->type, ev->ts, ev->v[0] };
}

static void feed(struct msc_agg *a, unsigned type, uint64_t ts, uint32_t tid, uint64_t ptr,
		 uint32_t stack)
{
	struct msc_cevent ev = { .type = type, .ts = ts, .tid = tid, .stack = stack };
	struct msc_cevent e;

	ev.fn = type == MSC_CEV_ALLOC ? MSC_FN_MALLOC : MSC_FN_FREE;
	ev.v[0] = ptr;
	ev.v[1] = type == MSC_CEV_ALLOC ? 32 : 0;
	if (msc_agg_push(a, &ev))
		apply_logged(a, &ev);
	while (msc_agg_pop(a, &e))
		apply_logged(a, &e);
}

static void check_fed(const struct fed *want, unsigned n)
{
	unsigned i;

	assert_int_equal(fed_n, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(fed_log[i].type, want[i].type);
		assert_int_equal(fed_log[i].ptr, want[i].ptr);
		assert_int_equal(fed_log[i].ts, want[i].ts);
	}
	fed_n = 0;
}

/*
 * Order repair (msc_agg.h): a free stamped before the allocation another
 * thread handed over, an allocation stamped before the free another thread
 * made of that address, each put back in order; what finds no partner in
 * the window is applied as it was; one thread's events are never held.
 */
static void test_hold_order(void **state)
{
	enum { A = MSC_CEV_ALLOC, F = MSC_CEV_FREE };
	struct msc_agg a;

	(void)state;
	fed_n = 0;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_hold(&a, 1000), 0);
	/* One thread so far: nothing is held, an unknown free is one. */
	feed(&a, A, 10, 1, 0x1000, 1);
	feed(&a, F, 20, 1, 0x9000, 0);
	check_fed((struct fed[]){ { A, 10, 0x1000 }, { F, 20, 0x9000 } }, 2);
	assert_int_equal(a.unknown_frees, 1);
	feed(&a, A, 30, 2, 0x2000, 2);		/* a second thread */
	fed_n = 0;
	/* Handed over: thread 2's free came first, and waits for it. */
	feed(&a, F, 40, 2, 0x3000, 0);
	check_fed(NULL, 0);
	feed(&a, A, 41, 1, 0x3000, 3);
	check_fed((struct fed[]){ { A, 41, 0x3000 }, { F, 41, 0x3000 } }, 2);
	assert_int_equal(a.unknown_frees, 1);
	assert_int_equal(a.live_blocks, 2);
	/* Given back: thread 2's allocation came before thread 1's free. */
	feed(&a, A, 50, 1, 0x4000, 4);
	feed(&a, A, 60, 2, 0x4000, 5);
	feed(&a, F, 61, 1, 0x4000, 0);
	check_fed((struct fed[]){ { A, 50, 0x4000 }, { F, 61, 0x4000 }, { A, 61, 0x4000 } }, 3);
	assert_int_equal(a.implicit_frees, 0);
	assert_int_equal(a.live_blocks, 3);
	assert_int_equal(a.frees, 2);
	assert_int_equal(a.repaired, 2);
	/* No partner within the window: applied as it was, first. */
	feed(&a, F, 100, 2, 0x5000, 0);
	feed(&a, A, 1101, 1, 0x6000, 6);
	check_fed((struct fed[]){ { F, 100, 0x5000 }, { A, 1101, 0x6000 } }, 2);
	assert_int_equal(a.unknown_frees, 2);
	/* The same thread's: its ring order is right.  An allocation over
	 * its own live block, then its free. */
	feed(&a, A, 1200, 2, 0x2000, 7);
	feed(&a, F, 1201, 2, 0x2000, 0);
	check_fed((struct fed[]){ { A, 1200, 0x2000 }, { F, 1201, 0x2000 } }, 2);
	assert_int_equal(a.implicit_frees, 1);
	/* The end releases what is held, in order (the first takes the
	 * newest time handed out: the second's, which was held later). */
	feed(&a, F, 1300, 2, 0x7000, 0);
	feed(&a, F, 1301, 1, 0x7100, 0);
	check_fed(NULL, 0);
	msc_agg_unhold(&a);
	feed(&a, A, 1302, 1, 0x8000, 8);
	check_fed((struct fed[]){ { F, 1301, 0x7000 }, { F, 1301, 0x7100 }, { A, 1302, 0x8000 } }, 3);
	assert_int_equal(a.unknown_frees, 4);
	assert_int_equal(a.repaired, 2);
	msc_agg_release(&a);

	/* Where unseen frees are normal (attached): partners only within
	 * MSC_AGG_HOLD_REACH_NS; a free further before the allocation of
	 * its address is an older block's, and the allocation a new one. */
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_hold(&a, 200000), 0);
	a.unseen_frees_ok = true;
	fed_n = 0;
	feed(&a, A, 10, 1, 0x1000, 1);
	feed(&a, A, 20, 2, 0x2000, 2);
	feed(&a, F, 1000, 2, 0x3000, 0);
	feed(&a, A, 1000 + MSC_AGG_HOLD_REACH_NS, 1, 0x3000, 3);
	feed(&a, F, 100000, 2, 0x4000, 0);
	feed(&a, A, 100001 + MSC_AGG_HOLD_REACH_NS, 1, 0x4000, 4);
	check_fed((struct fed[]){ { A, 10, 0x1000 }, { A, 20, 0x2000 },
				  { A, 1000 + MSC_AGG_HOLD_REACH_NS, 0x3000 },
				  { F, 1000 + MSC_AGG_HOLD_REACH_NS, 0x3000 },
				  { F, 100000, 0x4000 }, { A, 100001 + MSC_AGG_HOLD_REACH_NS, 0x4000 } }, 6);
	assert_int_equal(a.repaired, 1);
	assert_int_equal(a.unknown_frees, 1);
	assert_int_equal(a.live_blocks, 3);
	/* its thread's free of it is no double free */
	feed(&a, F, 300000, 1, 0x4000, 0);
	assert_int_equal(a.errors[MSC_ERR_DOUBLE_FREE], 0);
	assert_int_equal(a.live_blocks, 2);
	check_fed((struct fed[]){ { F, 300000, 0x4000 } }, 1);
	msc_agg_release(&a);

	/* Without msc_agg_hold: every event applies as it comes. */
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	feed(&a, A, 10, 1, 0x1000, 1);
	feed(&a, F, 20, 2, 0x3000, 0);
	feed(&a, A, 21, 1, 0x3000, 3);
	check_fed((struct fed[]){ { A, 10, 0x1000 }, { F, 20, 0x3000 }, { A, 21, 0x3000 } }, 3);
	assert_int_equal(a.unknown_frees, 1);
	assert_int_equal(a.live_blocks, 2);
	msc_agg_release(&a);
}

/* Lifetime buckets: decades from 1 us, checked at and around every decade
 * and power of two against their definition. */
static unsigned bucket_by_definition(uint64_t ns)
{
	uint64_t limit = 1000;
	unsigned b = 0;

	while (b < MSC_AGE_BUCKETS - 1 && ns >= limit) {
		limit *= 10;
		b++;
	}
	return b;
}

static void test_age_buckets(void **state)
{
	uint64_t v = 1;
	unsigned k;

	(void)state;
	for (k = 0; k < 64; k++) {
		uint64_t p2 = 1ull << k, vs[6] = { p2 - 1, p2, p2 + 1, v - 1, v, v + 1 };
		unsigned i;

		for (i = 0; i < 6; i++)
			assert_int_equal(msc_age_bucket(vs[i]), bucket_by_definition(vs[i]));
		if (k < 19)
			v *= 10;
	}
	assert_int_equal(msc_age_bucket(0), 0);
	assert_int_equal(msc_age_bucket(999), 0);
	assert_int_equal(msc_age_bucket(1000), 1);
	assert_int_equal(msc_age_bucket(999999), 3);
	assert_int_equal(msc_age_bucket(1000000), 4);
	assert_int_equal(msc_age_bucket(9999999999ull), 7);
	assert_int_equal(msc_age_bucket(10000000000ull), 8);
	assert_int_equal(msc_age_bucket(UINT64_MAX), 8);
	for (k = 0; k < MSC_AGE_BUCKETS - 1; k++)
		assert_int_equal(msc_age_bucket(msc_age_bucket_limit(k)), k + 1);
}

/*
 * A realloc's free undone after a while: the age bucket and the temporary
 * count the free made are taken back, not ones worked out at the undo.
 */
static void test_unfree_undoes_the_free(void **state)
{
	struct msc_agg a;
	unsigned b;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x10000, 100, 1, MSC_FN_MALLOC), 0);
	/* Freed 500 ns later by the thread that made it: temporary, bucket 0. */
	assert_int_equal(msc_agg_free(&a, T0 + 500, 1, 0x10000, MSC_FN_REALLOC, 0, NULL), 1);
	assert_int_equal(a.sites[0].ages[0], 1);
	assert_int_equal(a.sites[0].temporary, 1);
	/* The realloc failed, noticed 5 ms later. */
	assert_int_equal(msc_agg_unfree(&a, T0 + 5000000, 1, 0x10000), 1);
	for (b = 0; b < MSC_AGE_BUCKETS; b++)
		assert_int_equal(a.sites[0].ages[b], 0);
	assert_int_equal(a.sites[0].temporary, 0);
	assert_int_equal(a.temporary, 0);
	assert_int_equal(a.sites[0].frees, 0);
	assert_int_equal(a.live_bytes, 100);
	msc_agg_release(&a);
}

/*
 * A stack that maps memory and then mallocs more sizes than are kept
 * exact: its sites fold into size classes, and the leak of the mapping
 * names the class site it went to, not the removed one.
 */
static void test_folded_mapping_leak(void **state)
{
	struct msc_agg a;
	struct msc_leak *leaks;
	long n, i;
	uint64_t size;
	bool found = false;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_mmap(&a, T0, 1, 0x7f0000000000ull, 1 << 20, 7), 0);
	for (size = 1; size <= MSC_AGG_EXACT_SIZES + 1; size++)
		assert_int_equal(msc_agg_alloc(&a, T0 + size, 1, 0x1000 * size, size, 7,
					       MSC_FN_MALLOC), 0);
	n = msc_agg_leaks(&a, &leaks);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		assert_false(a.sites[leaks[i].site].removed);
		if (leaks[i].bytes == 1 << 20)
			found = true;
	}
	assert_true(found);
	free(leaks);
	msc_agg_release(&a);
}

/* Sums over a stack's sites still in use: allocations, frees, bytes, live
 * bytes; *nexact and *nclassed count them. */
static void stack_sums(const struct msc_agg *a, uint32_t stack, uint64_t sum[4], int *nexact,
		       int *nclassed)
{
	uint32_t i;

	memset(sum, 0, 4 * sizeof(*sum));
	*nexact = *nclassed = 0;
	for (i = 0; i < a->nsites; i++) {
		const struct msc_site *s = &a->sites[i];

		if (s->stack != stack || s->removed)
			continue;
		sum[0] += s->allocs;
		sum[1] += s->frees;
		sum[2] += s->bytes;
		sum[3] += s->live_bytes;
		++*(s->classed ? nclassed : nexact);
	}
}

/*
 * Two stacks whose exact sites were made in turn, one freeing some of its
 * blocks: the first folds when it meets a size more than are kept exact
 * (every one of its exact sites goes into its class, none of the other
 * stack's), its class sites made in the order of its exact ones; then the
 * second folds too.
 */
static void test_fold_interleaved(void **state)
{
	struct msc_agg a;
	uint64_t sum[4], k, bytes7 = 0, freed7 = 0, bytes9 = 0;
	int nexact, nclassed;
	uint32_t i;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	for (k = 0; k < MSC_AGG_EXACT_SIZES; k++) {
		uint64_t s7 = 16 * (k + 1), s9 = 1000 + k;

		assert_int_equal(msc_agg_alloc(&a, T0 + 2 * k, 1, 0x10000 + 0x1000 * k, s7, 7,
					       MSC_FN_MALLOC), 0);
		assert_int_equal(msc_agg_alloc(&a, T0 + 2 * k + 1, 1, 0x90000 + 0x1000 * k, s9,
					       9, MSC_FN_MALLOC), 0);
		bytes7 += s7;
		bytes9 += s9;
		if (k % 3 == 0) {
			assert_int_equal(msc_agg_free(&a, T0 + 100 + k, 1, 0x10000 + 0x1000 * k,
						      MSC_FN_FREE, 0, NULL), 1);
			freed7 += s7;
		}
	}
	stack_sums(&a, 7, sum, &nexact, &nclassed);
	assert_int_equal(nexact, MSC_AGG_EXACT_SIZES);
	assert_int_equal(nclassed, 0);
	/* A 17th size: stack 7 folds. */
	assert_int_equal(msc_agg_alloc(&a, T0 + 200, 1, 0x50000, 5000, 7, MSC_FN_MALLOC), 0);
	bytes7 += 5000;
	stack_sums(&a, 7, sum, &nexact, &nclassed);
	assert_int_equal(nexact, 0);
	assert_int_equal(nclassed, 6);	/* 16..31, 32..63, ..., 256..511, 4096..8191 */
	assert_int_equal(sum[0], MSC_AGG_EXACT_SIZES + 1);
	assert_int_equal(sum[1], (MSC_AGG_EXACT_SIZES + 2) / 3);
	assert_int_equal(sum[2], bytes7);
	assert_int_equal(sum[3], bytes7 - freed7);
	/* Its first class site is its first exact site's class. */
	for (i = 0; i < a.nsites && (a.sites[i].stack != 7 || !a.sites[i].classed); i++)
		;
	assert_true(i < a.nsites);
	assert_int_equal(a.sites[i].size, 16);
	stack_sums(&a, 9, sum, &nexact, &nclassed);
	assert_int_equal(nexact, MSC_AGG_EXACT_SIZES);
	assert_int_equal(nclassed, 0);
	assert_int_equal(sum[0], MSC_AGG_EXACT_SIZES);
	assert_int_equal(sum[2], bytes9);
	/* A free of a folded site's block finds its class. */
	assert_int_equal(msc_agg_free(&a, T0 + 300, 1, 0x10000 + 0x1000, MSC_FN_FREE, 0, NULL), 1);
	stack_sums(&a, 7, sum, &nexact, &nclassed);
	assert_int_equal(sum[3], bytes7 - freed7 - 32);
	/* Then stack 9 folds: 1000..1015 are one class, 3 is another. */
	assert_int_equal(msc_agg_alloc(&a, T0 + 400, 1, 0x60000, 3, 9, MSC_FN_MALLOC), 0);
	stack_sums(&a, 9, sum, &nexact, &nclassed);
	assert_int_equal(nexact, 0);
	assert_int_equal(nclassed, 2);
	assert_int_equal(sum[0], MSC_AGG_EXACT_SIZES + 1);
	assert_int_equal(sum[2], bytes9 + 3);
	msc_agg_release(&a);
}

/*
 * Mapped regions: an unmap across several, a hole that splits one in two,
 * the pieces unmapped one by one (the block is freed with its last piece),
 * and mremap of a tracked mapping (moved) and of an untracked one (ignored).
 */
static void test_regions(void **state)
{
	struct msc_agg a;
	const uint64_t M = 1 << 20, base = 0x7f0000000000ull;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	/* Five 1 MiB mappings with 1 MiB gaps between them. */
	for (uint64_t k = 0; k < 5; k++)
		assert_int_equal(msc_agg_mmap(&a, T0 + k, 1, base + 2 * k * M, M, 3), 0);
	assert_int_equal(a.live_bytes, 5 * M);
	assert_int_equal(a.live_blocks, 5);
	/* From the middle of the first to the middle of the third. */
	assert_int_equal(msc_agg_munmap(&a, T0 + 10, base + M / 2, 4 * M), 2 * M);
	assert_int_equal(a.live_bytes, 3 * M);
	assert_int_equal(a.live_blocks, 4);	/* the second is gone */
	/* A hole in the fourth: two pieces, still one block. */
	assert_int_equal(msc_agg_munmap(&a, T0 + 11, base + 6 * M + M / 4, M / 2), M / 2);
	assert_int_equal(a.live_blocks, 4);
	assert_int_equal(msc_agg_munmap(&a, T0 + 12, base + 6 * M, M / 4), M / 4);
	assert_int_equal(a.live_blocks, 4);
	assert_int_equal(msc_agg_munmap(&a, T0 + 13, base + 6 * M + 3 * M / 4, M / 4), M / 4);
	assert_int_equal(a.live_blocks, 3);
	assert_int_equal(a.live_bytes, 2 * M);	/* halves of 1 and 3, all of 5 */
	/* Nothing there: nothing changes. */
	assert_int_equal(msc_agg_munmap(&a, T0 + 14, base + 20 * M, M), 0);
	/* The fifth moves and grows; an untracked mapping's move is ignored. */
	assert_int_equal(msc_agg_mremap(&a, T0 + 15, 1, base + 8 * M, M, base + 30 * M, 2 * M, 3), 0);
	assert_int_equal(a.live_bytes, 3 * M);
	assert_int_equal(msc_agg_mremap(&a, T0 + 16, 1, base + 40 * M, M, base + 50 * M, M, 3), 0);
	assert_int_equal(a.live_bytes, 3 * M);
	assert_int_equal(msc_agg_munmap(&a, T0 + 17, base + 30 * M, 2 * M), 2 * M);
	assert_int_equal(a.live_bytes, M);
	msc_agg_release(&a);
}

/*
 * The page-level view: brk growth is a region (fn brk) that a shrink
 * releases from the top; the heap's peak and the mapped peak are kept
 * apart, and the one peak is of both at once.
 */
static void test_brk_and_peaks(void **state)
{
	struct msc_agg a;
	const uint64_t K = 1024, brk0 = 0x555500000000ull;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x1000, 100 * K, 2, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_brk(&a, T0 + 1, 1, brk0, brk0 + 256 * K, 3), 0);
	assert_int_equal(msc_agg_brk(&a, T0 + 2, 1, brk0 + 256 * K, brk0 + 320 * K, 4), 0);
	assert_int_equal(a.brks, 2);
	assert_int_equal(a.brk_bytes, 320 * K);
	assert_int_equal(a.mapped_live, 320 * K);
	/* Below the second region and into the first. */
	assert_int_equal(msc_agg_brk(&a, T0 + 3, 1, brk0 + 320 * K, brk0 + 200 * K, 5), 0);
	assert_int_equal(a.mapped_live, 200 * K);
	assert_int_equal(a.live_bytes, 300 * K);
	assert_int_equal(a.live_blocks, 2);	/* the malloc and the first region */
	/* The heap grows past its old peak while less is mapped. */
	assert_int_equal(msc_agg_alloc(&a, T0 + 4, 1, 0x100000, 150 * K, 2, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_mmap(&a, T0 + 5, 1, 0x7f0000000000ull, 64 * K, 6), 0);
	assert_int_equal(a.heap_peak, 250 * K);
	assert_int_equal(a.heap_peak_ts, T0 + 4);
	assert_int_equal(a.mapped_peak, 320 * K);
	assert_int_equal(a.mapped_peak_ts, T0 + 2);
	assert_int_equal(a.peak_live_bytes, 514 * K);	/* 250 + 200 + 64 */
	assert_int_equal(a.mmaps, 1);
	assert_int_equal(a.allocs, 2);			/* not the regions */
	/* A brk that does not move: nothing. */
	assert_int_equal(msc_agg_brk(&a, T0 + 6, 1, brk0 + 200 * K, brk0 + 200 * K, 7), 0);
	assert_int_equal(a.brks, 2);
	msc_agg_release(&a);
}

/* The code of the built-in function called name (msc_allocfns.h). */
static unsigned builtin_fn(const char *name)
{
	unsigned fn;

	for (fn = MSC_FN_BUILTIN; fn < MSC_FN_CODES; fn++)
		if (strcmp(msc_fn_name(fn), name) == 0)
			return fn;
	fail_msg("no built-in function %s", name);
	return 0;
}

/*
 * Third-party allocators' functions: named, of their families (tc_new's
 * block freed by tc_deletearray is a mismatch, mi_new's by mi_free is not),
 * their reallocs undone by UNFREE, and mi_heap_destroy's frees of blocks
 * never seen are no errors.
 */
static void test_builtin_fns(void **state)
{
	struct msc_agg a;

	(void)state;
	assert_string_equal(msc_fn_name(builtin_fn("mallocx")), "mallocx");
	assert_string_equal(msc_fn_name(MSC_FN_CODES), "unknown");
	assert_int_equal(msc_fn_family(builtin_fn("mallocx")), 1);
	assert_int_equal(msc_fn_family(builtin_fn("tc_delete")), 2);
	assert_int_equal(msc_fn_family(builtin_fn("tc_newarray")), 3);
	assert_int_equal(msc_fn_family(builtin_fn("mi_new")), 0);
	assert_true(msc_fn_is_realloc(builtin_fn("rallocx")));
	assert_false(msc_fn_is_realloc(builtin_fn("xallocx")));
	assert_false(msc_fn_is_realloc(builtin_fn("mi_reallocf")));
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	/* tc_new freed by tc_deletearray */
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x1000, 40, 7, builtin_fn("tc_new")), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 1, 1, 0x1000, builtin_fn("tc_deletearray"), 9, NULL), 1);
	assert_int_equal(a.err.kind, MSC_ERR_MISMATCH);
	assert_int_equal(a.err.alloc_fn, builtin_fn("tc_new"));
	a.err.kind = MSC_ERR_NONE;
	/* mi_new freed by mi_free, mallocx by free: fine */
	assert_int_equal(msc_agg_alloc(&a, T0 + 2, 1, 0x2000, 32, 7, builtin_fn("mi_new")), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 3, 1, 0x2000, builtin_fn("mi_free"), 9, NULL), 1);
	assert_int_equal(msc_agg_alloc(&a, T0 + 4, 1, 0x3000, 32, 7, builtin_fn("mallocx")), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 5, 1, 0x3000, MSC_FN_FREE, 9, NULL), 1);
	assert_int_equal(a.err.kind, MSC_ERR_NONE);
	/* a failed rallocx keeps its block */
	assert_int_equal(msc_agg_alloc(&a, T0 + 6, 1, 0x4000, 10, 7, builtin_fn("mallocx")), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 7, 1, 0x4000, builtin_fn("rallocx"), 9, NULL), 1);
	assert_int_equal(msc_agg_unfree(&a, T0 + 8, 1, 0x4000), 1);
	assert_int_equal(a.live_blocks, 1);
	assert_int_equal(a.live_bytes, 10);
	/* mi_heap_destroy frees what the heap held, seen or not */
	assert_int_equal(msc_agg_free(&a, T0 + 9, 1, 0x5000, builtin_fn("mi_heap_destroy"), 9, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_NONE);
	msc_agg_release(&a);
}

/* Memory errors: each kind once, with what is known of the block. */
static void test_errors(void **state)
{
	struct msc_agg a;
	unsigned i;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	/* mismatch: new[] released by delete; the free still happens */
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x1000, 40, 7, MSC_FN_NEW_ARRAY), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 1, 1, 0x1000, MSC_FN_DELETE, 9, NULL), 1);
	assert_int_equal(a.err.kind, MSC_ERR_MISMATCH);
	assert_int_equal(a.err.stack, 9);
	assert_int_equal(a.err.alloc_stack, 7);
	assert_int_equal(a.err.size, 40);
	assert_int_equal(a.live_blocks, 0);
	a.err.kind = MSC_ERR_NONE;
	/* double free: the first free is remembered */
	assert_int_equal(msc_agg_free(&a, T0 + 2, 2, 0x1000, MSC_FN_DELETE_ARRAY, 11, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_DOUBLE_FREE);
	assert_true(a.err.have_free);
	assert_int_equal(a.err.free_stack, 9);
	assert_int_equal(a.err.free_tid, 1);
	assert_int_equal(a.err.free_ts, T0 + 1);
	a.err.kind = MSC_ERR_NONE;
	/* allocated again at the same address, freed well: no error */
	assert_int_equal(msc_agg_alloc(&a, T0 + 3, 1, 0x1000, 16, 8, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 4, 1, 0x1000, MSC_FN_FREE, 12, NULL), 1);
	assert_int_equal(a.err.kind, MSC_ERR_NONE);
	/* realloc of it now: realloc-freed, naming the latest free */
	assert_int_equal(msc_agg_free(&a, T0 + 5, 1, 0x1000, MSC_FN_REALLOC, 13, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_REALLOC_FREED);
	assert_int_equal(a.err.free_stack, 12);
	assert_int_equal(a.err.size, 16);
	a.err.kind = MSC_ERR_NONE;
	/* invalid free into a live block */
	assert_int_equal(msc_agg_alloc(&a, T0 + 6, 1, 0x2000, 64, 8, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 7, 1, 0x2010, MSC_FN_FREE, 14, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_INVALID_FREE);
	assert_true(a.err.have_block);
	assert_int_equal(a.err.block, 0x2000);
	assert_int_equal(a.err.ptr - a.err.block, 16);
	a.err.kind = MSC_ERR_NONE;
	/* the ring forgets: a free of a block freed MSC_QUARANTINE frees ago
	 * is an invalid free, with no first free */
	for (i = 0; i < MSC_QUARANTINE; i++) {
		assert_int_equal(msc_agg_alloc(&a, T0 + 10 + i, 1, 0x100000 + i * 16, 8, 8, MSC_FN_MALLOC), 0);
		assert_int_equal(msc_agg_free(&a, T0 + 10 + i, 1, 0x100000 + i * 16, MSC_FN_FREE, 12, NULL), 1);
	}
	assert_int_equal(msc_agg_free(&a, T0 + 10 + i, 1, 0x1000, MSC_FN_FREE, 15, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_INVALID_FREE);
	assert_false(a.err.have_free);
	a.err.kind = MSC_ERR_NONE;
	/* ... and of one freed within it, a double free */
	assert_int_equal(msc_agg_free(&a, T0 + 11 + i, 1, 0x100000 + 16, MSC_FN_FREE, 15, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_DOUBLE_FREE);
	/* attached or forked: frees of unseen blocks say nothing */
	a.err.kind = MSC_ERR_NONE;
	a.unseen_frees_ok = true;
	assert_int_equal(msc_agg_free(&a, T0 + 12 + i, 1, 0x9990, MSC_FN_FREE, 15, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_NONE);
	assert_int_equal(a.errors[MSC_ERR_MISMATCH], 1);
	assert_int_equal(a.errors[MSC_ERR_DOUBLE_FREE], 2);
	assert_int_equal(a.errors[MSC_ERR_REALLOC_FREED], 1);
	assert_int_equal(a.errors[MSC_ERR_INVALID_FREE], 2);
	msc_agg_release(&a);
}

/*
 * A hidden block (the loader's, made inside a hook) at an address the
 * program freed: its free is neither a double free nor counted; an
 * allocation of the address by the program forgets it.
 */
static void test_hidden(void **state)
{
	struct msc_agg_result res;
	struct msc_agg a;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x1000, 24, 7, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 1, 1, 0x1000, MSC_FN_FREE, 9, NULL), 1);
	assert_int_equal(msc_agg_hidden(&a, 0x1000), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 2, 2, 0x1000, MSC_FN_FREE, 11, NULL), MSC_AGG_HIDDEN);
	assert_int_equal(a.err.kind, MSC_ERR_NONE);
	assert_int_equal(a.unknown_frees, 0);
	/* once: a second free of it is the double free it looks like */
	assert_int_equal(msc_agg_free(&a, T0 + 3, 2, 0x1000, MSC_FN_FREE, 11, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_DOUBLE_FREE);
	a.err.kind = MSC_ERR_NONE;
	/* hidden, then the program's again: its free is the program's */
	assert_int_equal(msc_agg_hidden(&a, 0x2000), 0);
	assert_int_equal(msc_agg_alloc(&a, T0 + 4, 1, 0x2000, 16, 7, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 5, 1, 0x2000, MSC_FN_FREE, 9, NULL), 1);
	assert_int_equal(msc_agg_free(&a, T0 + 6, 1, 0x2000, MSC_FN_FREE, 9, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_DOUBLE_FREE);
	assert_int_equal(a.errors[MSC_ERR_DOUBLE_FREE], 2);
	assert_int_equal(a.unknown_frees, 2);
	/* through msc_agg_apply, as the recorder applies events */
	assert_int_equal(msc_agg_apply(&a, &(struct msc_cevent){ .type = MSC_CEV_HIDDEN,
								.v = { 0x3000 } }, &res), 0);
	assert_int_equal(msc_agg_apply(&a, &(struct msc_cevent){ .type = MSC_CEV_FREE,
								.fn = MSC_FN_FREE, .ts = T0 + 7,
								.v = { 0x3000 } }, &res),
			 MSC_AGG_HIDDEN);
	assert_int_equal(a.unknown_frees, 2);
	msc_agg_release(&a);
}

/* msc_agg_apply's outcomes and result, and msc_agg_init's options. */
static void test_apply_result(void **state)
{
	struct msc_agg_result res = { .error = NULL };
	struct msc_agg a;
	const struct msc_cevent alloc = { .type = MSC_CEV_ALLOC, .fn = MSC_FN_NEW, .ts = T0,
					  .tid = 1, .stack = 7, .alloc = { 0x1000, 24, 0 } };
	struct msc_cevent fr = { .type = MSC_CEV_FREE, .fn = MSC_FN_FREE, .ts = T0 + 5, .tid = 1,
				 .stack = 9, .free = { .ptr = 0x1000 } };

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_apply(&a, &alloc, &res), MSC_AGG_APPLIED);
	assert_null(res.error);
	/* a new'd block freed with free: freed, and an error */
	assert_int_equal(msc_agg_apply(&a, &fr, &res), MSC_AGG_FREED);
	assert_int_equal(res.freed.size, 24);
	assert_int_equal(res.freed.stack, 7);
	assert_int_equal(res.freed.fn, MSC_FN_NEW);
	assert_int_equal(res.freed.alloc_ts, T0);
	assert_non_null(res.error);
	assert_int_equal(res.error->kind, MSC_ERR_MISMATCH);
	assert_int_equal(res.error->stack, 9);
	/* kept until the caller clears it: an event without an error leaves it */
	assert_int_equal(msc_agg_apply(&a, &alloc, &res), MSC_AGG_APPLIED);
	assert_non_null(res.error);
	assert_int_equal(msc_agg_apply(&a, &fr, &res), MSC_AGG_FREED);
	assert_int_equal(res.error->kind, MSC_ERR_MISMATCH);
	res.error = NULL;
	/* again: not known now, a double free */
	fr.ts = T0 + 6;
	assert_int_equal(msc_agg_apply(&a, &fr, &res), MSC_AGG_APPLIED);
	assert_non_null(res.error);
	assert_int_equal(res.error->kind, MSC_ERR_DOUBLE_FREE);
	res.error = NULL;
	/* an event that is not the aggregator's */
	assert_int_equal(msc_agg_apply(&a, &(struct msc_cevent){ .type = MSC_CEV_SAMPLE }, &res),
			 MSC_AGG_NOT_MINE);
	assert_null(res.error);
	msc_agg_release(&a);

	/* unseen_frees_ok: a free of an unknown block is no error */
	assert_int_equal(msc_agg_init(&a, &(struct msc_agg_opts){ .unseen_frees_ok = true }), 0);
	fr.free.ptr = 0x2000;
	assert_int_equal(msc_agg_apply(&a, &fr, &res), MSC_AGG_APPLIED);
	assert_null(res.error);
	assert_int_equal(a.unknown_frees, 1);
	msc_agg_release(&a);
	/* without it, it is an invalid free */
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_apply(&a, &fr, &res), MSC_AGG_APPLIED);
	assert_non_null(res.error);
	assert_int_equal(res.error->kind, MSC_ERR_INVALID_FREE);
	res.error = NULL;
	msc_agg_release(&a);
	/* no_errors: the mismatch is not checked */
	assert_int_equal(msc_agg_init(&a, &(struct msc_agg_opts){ .no_errors = true }), 0);
	fr.free.ptr = 0x1000;
	assert_int_equal(msc_agg_apply(&a, &alloc, &res), MSC_AGG_APPLIED);
	assert_int_equal(msc_agg_apply(&a, &fr, &res), MSC_AGG_FREED);
	assert_null(res.error);
	assert_int_equal(a.errors[MSC_ERR_MISMATCH], 0);
	msc_agg_release(&a);
	/* hold_window_ns: the repair is on */
	assert_int_equal(msc_agg_init(&a, &(struct msc_agg_opts){ .hold_window_ns = 1000 }), 0);
	assert_int_equal(a.hold_window, 1000);
	msc_agg_release(&a);
}

/* A reader aggregating again (no_errors): no checks, no ring of frees. */
static void test_no_errors(void **state)
{
	struct msc_agg a;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	a.no_errors = true;
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x1000, 40, 7, MSC_FN_NEW_ARRAY), 0);
	assert_int_equal(msc_agg_free(&a, T0 + 1, 1, 0x1000, MSC_FN_FREE, 9, NULL), 1);
	assert_int_equal(msc_agg_free(&a, T0 + 2, 1, 0x1000, MSC_FN_FREE, 9, NULL), 0);
	assert_int_equal(a.err.kind, MSC_ERR_NONE);
	assert_null(a.quarantine);
	assert_int_equal(a.errors[MSC_ERR_MISMATCH] + a.errors[MSC_ERR_DOUBLE_FREE], 0);
	msc_agg_release(&a);
}

/* The gates' kinds: names, "all", the default, and bad lists. */
static void test_gate_kinds(void **state)
{
	uint64_t blocks[MSC_LEAK_KINDS] = { 0 };
	unsigned m;

	(void)state;
	/* The default: what the summary calls leaked, and only that. */
	assert_int_equal(msc_gate_parse_kinds(NULL, &m), 0);
	assert_int_equal(m, (1u << MSC_LEAK_DEFINITELY) | (1u << MSC_LEAK_INDIRECTLY) |
			    (1u << MSC_LEAK_UNSCANNED));
	for (unsigned k = 0; k < MSC_LEAK_KINDS; k++)
		assert_int_equal(!!(m & (1u << k)), msc_leak_kind_leaked(k));
	assert_int_equal(msc_gate_parse_kinds("possibly,reachable", &m), 0);
	assert_int_equal(m, (1u << MSC_LEAK_POSSIBLY) | (1u << MSC_LEAK_REACHABLE));
	assert_int_equal(msc_gate_parse_kinds("all", &m), 0);
	assert_int_equal(m, (1u << MSC_LEAK_KINDS) - 1);
	assert_int_equal(msc_gate_parse_kinds("definitely,", &m), 0);
	assert_int_equal(msc_gate_parse_kinds("lost", &m), -EINVAL);
	assert_int_equal(msc_gate_parse_kinds("", &m), -EINVAL);
	blocks[MSC_LEAK_DEFINITELY] = 3;
	blocks[MSC_LEAK_REACHABLE] = 5;
	msc_gate_parse_kinds(NULL, &m);
	assert_int_equal(msc_gate_leaks(blocks, m), 3);
	msc_gate_parse_kinds("reachable,definitely", &m);
	assert_int_equal(msc_gate_leaks(blocks, m), 8);
}

/*
 * Pools: blocks of two pools and a plain custom block at one address, a
 * destroy that releases many blocks (the live table's deletes shift entries
 * under the walk), a freed slot reused by the next pool, and the names.
 */
/*
 * --sample's weights: a block of s bytes recorded with probability
 * p = 1 - exp(-s/rate) counts for 1/p on average (floor or ceiling, by
 * the hash), the same for the same hash, and 1 for blocks far larger than
 * the rate.
 */
static void test_sample_weight(void **state)
{
	static const uint64_t sizes[] = { 1, 16, 100, 4096, 65536 };
	const uint64_t rate = 65536;
	unsigned i, k;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double p = -expm1(-(double)sizes[i] / (double)rate), sum = 0;
		uint64_t lo = (uint64_t)(1 / p), n = 200000;

		for (k = 0; k < n; k++) {
			uint64_t w = msc_sample_weight(rate, sizes[i], k * 0x9e3779b97f4a7c15ull + i);

			assert_true(w == lo || w == lo + 1);
			sum += (double)w;
		}
		/* the mean within 1 % of 1/p (its spread is at most 1/2) */
		assert_true(fabs(sum / (double)n * p - 1) < 0.01);
		assert_int_equal(msc_sample_weight(rate, sizes[i], 42), msc_sample_weight(rate, sizes[i], 42));
	}
	assert_int_equal(msc_sample_weight(rate, 64 * rate, 7), 1);
	/* 1/p: a series for small blocks, the closed form beyond a 64th of
	 * the rate; either within 1e-14 of the closed form (a coefficient
	 * of the series off by a 12th is 1e-6 of it at the switch). */
	for (i = 1; i <= 4 * 1024; i++) {
		double exact = 1 / -expm1(-(double)i / (double)rate);

		assert_true(fabs(msc_sample_inverse(rate, i) / exact - 1) < 1e-14);
	}
	/* size 0 counts as 1 byte */
	assert_int_equal(msc_sample_weight(rate, 0, 9), msc_sample_weight(rate, 1, 9));
}

/*
 * A site's count of recorded blocks: its low half is beside the counts an
 * allocation updates, its high half takes the carry; folding adds both.
 */
static void test_site_samples(void **state)
{
	struct msc_agg a;
	uint64_t i, total = 0;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	a.sample = 65536;
	assert_int_equal(msc_agg_alloc(&a, T0, 1, 0x1000, 1 << 20, 1, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_site_samples(&a.sites[0]), 1);
	msc_site_add_samples(&a.sites[0], UINT32_MAX - 1);
	assert_int_equal(msc_site_samples(&a.sites[0]), UINT32_MAX);
	assert_int_equal(msc_agg_alloc(&a, T0 + 1, 1, 0x2000, 1 << 20, 1, MSC_FN_MALLOC), 0);
	assert_int_equal(a.sites[0].samples, 0);
	assert_int_equal(msc_site_samples(&a.sites[0]), 1ull << 32);
	/* More exact sizes than a stack keeps: its sites fold into classes,
	 * their recorded blocks with them. */
	for (i = 0; i < 2 * MSC_AGG_EXACT_SIZES; i++)
		assert_int_equal(msc_agg_alloc(&a, T0 + 2 + i, 1, 0x10000 + i * 0x1000,
					       (1 << 20) + i * 16, 1, MSC_FN_MALLOC), 0);
	for (i = 0; i < a.nsites; i++)
		if (!a.sites[i].removed)
			total += msc_site_samples(&a.sites[i]);
	assert_int_equal(total, (1ull << 32) + 2 * MSC_AGG_EXACT_SIZES);
	msc_agg_release(&a);
}

static void test_pools(void **state)
{
	const uint64_t P1 = 0x7000, P2 = 0x8000, P3 = 0x9000;
	struct msc_agg a;
	struct msc_freed fr;
	uint64_t i;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_pool_create(&a, P1, "frames"), 0);
	assert_int_equal(msc_agg_pool_create(&a, P2, "nodes"), 0);
	/* One address, three blocks. */
	assert_int_equal(msc_agg_pool_alloc(&a, T0, 1, P1, 0x1000, 64, 3), 0);
	assert_int_equal(msc_agg_pool_alloc(&a, T0 + 1, 1, P2, 0x1000, 24, 4), 0);
	assert_int_equal(msc_agg_alloc(&a, T0 + 2, 1, 0x1000, 16, 5, MSC_FN_CUSTOM), 0);
	assert_int_equal(a.live_blocks, 3);
	assert_string_equal(msc_agg_pool_name(&a, &a.sites[0]), "frames");
	assert_string_equal(msc_agg_pool_name(&a, &a.sites[1]), "nodes");
	assert_null(msc_agg_pool_name(&a, &a.sites[2]));
	/* The free names its pool: the other two blocks stay. */
	assert_int_equal(msc_agg_pool_free(&a, T0 + 3, 1, P2, 0x1000, 0, &fr), 1);
	assert_int_equal(fr.size, 24);
	assert_int_equal(msc_agg_pool_free(&a, T0 + 4, 1, P2, 0x1000, 0, NULL), 0);
	assert_int_equal(a.live_blocks, 2);
	/* Many blocks of P2 among P1's, then P2 destroyed: only its go. */
	for (i = 0; i < 5000; i++) {
		assert_int_equal(msc_agg_pool_alloc(&a, T0 + 10 + i, 1, i % 3 ? P2 : P1,
						    0x100000 + i * 16, 8, 6), 0);
	}
	assert_int_equal(msc_agg_pool_destroy(&a, T0 + 10000, P2), 3333);
	assert_int_equal(a.live_blocks, 2 + 1667);
	assert_int_equal(a.frees, 1 + 3333);
	for (i = 0; i < 5000; i++)
		assert_int_equal(msc_agg_pool_free(&a, T0 + 20000 + i, 1, P1, 0x100000 + i * 16, 0,
						   NULL), i % 3 ? 0 : 1);
	assert_int_equal(a.live_blocks, 2);
	/* The destroyed pool is gone: its id is unknown now. */
	assert_int_equal(msc_agg_pool_destroy(&a, T0 + 30000, P2), 0);
	/* A new pool takes P2's slot; a block of a pool never created is "?"'s. */
	assert_int_equal(msc_agg_pool_create(&a, P3, "strings"), 0);
	assert_int_equal(a.npools, 2);
	assert_int_equal(msc_agg_pool_alloc(&a, T0 + 30001, 1, 0xa000, 0x2000, 40, 7), 0);
	assert_string_equal(msc_agg_pool_name(&a, &a.sites[a.nsites - 1]), "?");
	assert_int_equal(msc_agg_pool_destroy(&a, T0 + 30002, P1), 1);
	assert_int_equal(a.live_blocks, 2);
	msc_agg_release(&a);
}

static void test_top_stacks(void **state)
{
	struct msc_stack_bytes top[3];
	struct msc_freed fr;
	struct msc_agg a;
	uint64_t *sums = NULL;
	size_t cap = 0, i;
	uint64_t ptr = 0x100000;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	assert_int_equal(msc_agg_top_stacks(&a, top, 3, &sums, &cap), 0);
	/* Stack 1: 40 sizes (folded into classes), 16 + ... + 55 bytes. */
	for (i = 0; i < 40; i++, ptr += 0x100)
		assert_int_equal(msc_agg_alloc(&a, 1000 + i, 1, ptr, 16 + i, 1, MSC_FN_MALLOC), 0);
	/* Stack 2: 3 x 500 bytes, one freed; stack 3: 900; stack 4: 10. */
	for (i = 0; i < 3; i++, ptr += 0x1000)
		assert_int_equal(msc_agg_alloc(&a, 2000 + i, 1, ptr, 500, 2, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_free(&a, 3000, 1, ptr - 0x1000, MSC_FN_FREE, 0, &fr), 1);
	assert_int_equal(msc_agg_alloc(&a, 4000, 1, ptr, 900, 3, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_alloc(&a, 4001, 1, ptr + 0x1000, 10, 4, MSC_FN_MALLOC), 0);
	/* Stack 5 maps 1 MiB: mapped memory, not the heap's. */
	assert_int_equal(msc_agg_mmap(&a, 5000, 1, 0x7f0000000000ull, 1 << 20, 5), 0);
	assert_int_equal(msc_agg_top_stacks(&a, top, 3, &sums, &cap), 3);
	assert_int_equal(top[0].stack, 1);
	assert_int_equal(top[0].bytes, 40 * 16 + 39 * 40 / 2);
	assert_int_equal(top[1].stack, 2);
	assert_int_equal(top[1].bytes, 1000);
	assert_int_equal(top[2].stack, 3);
	assert_int_equal(top[2].bytes, 900);
	/* The scratch is left zeroed: a second walk gives the same. */
	for (i = 0; i < cap; i++)
		assert_int_equal(sums[i], 0);
	assert_int_equal(msc_agg_top_stacks(&a, top, 3, &sums, &cap), 3);
	assert_int_equal(top[2].bytes, 900);
	/* Ties: the lower stack id first. */
	assert_int_equal(msc_agg_alloc(&a, 6000, 1, ptr + 0x2000, 100, 6, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_top_stacks(&a, top, 3, &sums, &cap), 3);
	assert_int_equal(msc_agg_free(&a, 7000, 1, ptr + 0x2000, MSC_FN_FREE, 0, &fr), 1);
	assert_int_equal(msc_agg_free(&a, 7001, 1, ptr, MSC_FN_FREE, 0, &fr), 1);
	assert_int_equal(msc_agg_alloc(&a, 7002, 1, ptr, 1000, 7, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_top_stacks(&a, top, 2, &sums, &cap), 2);
	assert_int_equal(top[0].stack, 1);
	assert_int_equal(top[1].stack, 2);
	assert_int_equal(top[1].bytes, 1000);
	free(sums);
	msc_agg_release(&a);
}

static void test_leaks_cut(void **state)
{
	const uint64_t cuts[] = { 15, 20 };
	struct msc_leak *l;
	struct msc_agg a;
	long n, i;

	(void)state;
	assert_int_equal(msc_agg_init(&a, NULL), 0);
	/* One site, blocks at 10, 20 (on the second cut: after it) and 30. */
	assert_int_equal(msc_agg_alloc(&a, 10, 1, 0x1000, 64, 1, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_alloc(&a, 20, 1, 0x2000, 64, 1, MSC_FN_MALLOC), 0);
	assert_int_equal(msc_agg_alloc(&a, 30, 1, 0x3000, 64, 1, MSC_FN_MALLOC), 0);
	n = msc_agg_leaks(&a, &l);
	assert_int_equal(n, 1);
	assert_int_equal(l[0].count, 3);
	assert_int_equal(l[0].epoch, 0);
	free(l);
	n = msc_agg_leaks_cut(&a, cuts, 2, &l);
	assert_int_equal(n, 2);
	for (i = 0; i < n; i++) {
		assert_int_equal(l[i].count, l[i].epoch == 0 ? 1 : 2);
		assert_int_equal(l[i].first_ts, l[i].epoch == 0 ? 10 : 20);
		assert_int_equal(l[i].epoch == 0 || l[i].epoch == 2, true);
	}
	free(l);
	msc_agg_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_age_buckets),
		cmocka_unit_test(test_big_sizes_and_times),
		cmocka_unit_test(test_many_blocks),
		cmocka_unit_test(test_live_hash_strides),
		cmocka_unit_test(test_live_table_growth),
		cmocka_unit_test(test_hold_order),
		cmocka_unit_test(test_unfree_undoes_the_free),
		cmocka_unit_test(test_folded_mapping_leak),
		cmocka_unit_test(test_fold_interleaved),
		cmocka_unit_test(test_regions),
		cmocka_unit_test(test_brk_and_peaks),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_builtin_fns),
		cmocka_unit_test(test_no_errors),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_apply_result),
		cmocka_unit_test(test_gate_kinds),
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_sample_weight),
		cmocka_unit_test(test_site_samples),
		cmocka_unit_test(test_top_stacks),
		cmocka_unit_test(test_leaks_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
