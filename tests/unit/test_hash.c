/* SPDX-License-Identifier: MIT */
/* Unit tests for the hash functions and tables of libmsc/base/hash.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_err.h"
#include "msc_hash.h"
#include "msc_util.h"

/* A deterministic generator, so that a failure can be replayed. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ------------------------------------------------------------ functions */

static void test_hash_u64(void **state)
{
	(void)state;
	/* splitmix64's first output for seed 0, and two more known values. */
	assert_int_equal(msc_hash_u64(0x9e3779b97f4a7c15ull), 0xe220a8397b1dcdafull);
	assert_int_equal(msc_hash_u64(1), 0x5692161d100b05e5ull);
	assert_int_equal(msc_hash_u64(0), 0);
}

static void test_hash_bytes(void **state)
{
	static const char text[] = "abcdefghijklmnopqrstuvwxyz";
	char copy[sizeof(text)];
	uint64_t h[sizeof(text)];
	size_t n, m;

	(void)state;
	memcpy(copy, text, sizeof(text));
	for (n = 0; n < sizeof(text); n++) {
		h[n] = msc_hash_bytes(text, n, 1);
		/* Depends on the bytes, not on where they are. */
		assert_int_equal(msc_hash_bytes(copy, n, 1), h[n]);
		/* Only the first n bytes count. */
		copy[n] ^= 0x20;
		assert_int_equal(msc_hash_bytes(copy, n, 1), h[n]);
		copy[n] ^= 0x20;
		/* The seed counts. */
		assert_int_not_equal(msc_hash_bytes(text, n, 2), h[n]);
		/* Every prefix hashes differently (the length is mixed in). */
		for (m = 0; m < n; m++)
			assert_int_not_equal(h[m], h[n]);
	}
	/* A change in any byte, in the 8-byte blocks or in the tail. */
	for (n = 0; n < sizeof(text) - 1; n++) {
		copy[n] ^= 1;
		assert_int_not_equal(msc_hash_bytes(copy, sizeof(text) - 1, 1),
				     h[sizeof(text) - 1]);
		copy[n] ^= 1;
	}
	/* Zero bytes are not the same as no bytes. */
	assert_int_not_equal(msc_hash_bytes("\0\0\0", 3, 0), msc_hash_bytes("\0\0", 2, 0));
	assert_int_not_equal(msc_hash_bytes("\0\0\0\0\0\0\0\0", 8, 0),
			     msc_hash_bytes("", 0, 0));
}

/* ----------------------------------------------------------- msc_u64map */

static int u64map_setup(void **state)
{
	struct msc_u64map *m = malloc(sizeof(*m));

	if (!m || msc_u64map_init(m, 0)) {
		free(m);
		return -1;
	}
	*state = m;
	return 0;
}

static int u64map_teardown(void **state)
{
	struct msc_u64map *m = *state;

	msc_u64map_release(m);
	assert_null(m->slots);
	assert_int_equal(m->count, 0);
	free(m);
	return 0;
}

/*
 * Checks everything linear probing relies on: the count, no duplicate keys,
 * and no empty slot between an entry's home slot and the entry (a hole left
 * by a bad deletion makes the entry unreachable).
 */
static void check_u64map_invariants(const struct msc_u64map *m)
{
	size_t i, n = 0;

	for (i = 0; i <= m->mask; i++) {
		uint64_t key = m->slots[i].key;
		size_t j;

		if (!key)
			continue;
		n++;
		for (j = msc_hash_u64(key) & m->mask; j != i; j = (j + 1) & m->mask) {
			if (!m->slots[j].key)
				fail_msg("key %#llx in slot %zu: hole at %zu",
					 (unsigned long long)key, i, j);
			if (m->slots[j].key == key)
				fail_msg("key %#llx twice", (unsigned long long)key);
		}
	}
	assert_int_equal(n, m->count);
	/* Growth keeps the load at or under 3/4. */
	assert_true(m->count * 4 <= (m->mask + 1) * 3);
}

static void test_u64map_init_capacity(void **state)
{
	struct msc_u64map m;

	(void)state;
	assert_int_equal(msc_u64map_init(&m, 0), 0);
	assert_int_equal(m.mask, 15);
	assert_int_equal(m.count, 0);
	msc_u64map_release(&m);
	/* Room for the hint under 3/4 load, in a power of two. */
	assert_int_equal(msc_u64map_init(&m, 100), 0);
	assert_int_equal(m.mask, 255);
	msc_u64map_release(&m);
	assert_int_equal(msc_u64map_init(&m, 3000), 0);
	assert_int_equal(m.mask, 4095);
	msc_u64map_release(&m);
}

static void test_u64map_basic(void **state)
{
	struct msc_u64map *m = *state;
	uint64_t *v, out;

	assert_null(msc_u64map_get(m, 42));
	assert_int_equal(msc_u64map_put(m, 42, 1000), 0);
	assert_int_equal(m->count, 1);
	v = msc_u64map_get(m, 42);
	assert_non_null(v);
	assert_int_equal(*v, 1000);

	/* Replace keeps the count. */
	assert_int_equal(msc_u64map_put(m, 42, 2000), 0);
	assert_int_equal(m->count, 1);
	assert_int_equal(*msc_u64map_get(m, 42), 2000);

	/* The pointer is to the stored value. */
	*msc_u64map_get(m, 42) = 3000;
	assert_int_equal(*msc_u64map_get(m, 42), 3000);

	assert_int_equal(msc_u64map_put(m, UINT64_MAX, 7), 0);
	assert_int_equal(*msc_u64map_get(m, UINT64_MAX), 7);
	assert_int_equal(m->count, 2);

	out = 0;
	assert_true(msc_u64map_del(m, 42, &out));
	assert_int_equal(out, 3000);
	assert_int_equal(m->count, 1);
	assert_null(msc_u64map_get(m, 42));
	out = 99;
	assert_false(msc_u64map_del(m, 42, &out));
	assert_int_equal(out, 99);
	assert_true(msc_u64map_del(m, UINT64_MAX, NULL));
	assert_int_equal(m->count, 0);
	check_u64map_invariants(m);
}

static void test_u64map_key_zero(void **state)
{
	struct msc_u64map *m = *state;
	uint64_t out = 5;
	uint64_t k;

	/* Fill a cluster so that a wrong del(0) would have something to move. */
	for (k = 1; k <= 10; k++)
		assert_int_equal(msc_u64map_put(m, k, k * 10), 0);
	assert_null(msc_u64map_get(m, 0));
	assert_false(msc_u64map_del(m, 0, &out));
	assert_int_equal(out, 5);
	assert_int_equal(m->count, 10);
	for (k = 1; k <= 10; k++)
		assert_int_equal(*msc_u64map_get(m, k), k * 10);
	check_u64map_invariants(m);
}

static void test_u64map_growth(void **state)
{
	struct msc_u64map *m = *state;
	const uint64_t n = 200000;
	size_t cap = m->mask + 1;
	unsigned grows = 0;
	uint64_t k;

	for (k = 1; k <= n; k++) {
		/* Keys like heap addresses: 16-byte aligned, one region. */
		assert_int_equal(msc_u64map_put(m, 0x7f0000000000ull + k * 16, k), 0);
		if (m->mask + 1 != cap) {
			assert_int_equal(m->mask + 1, cap * 2);
			cap = m->mask + 1;
			grows++;
		}
		assert_int_equal(m->count, k);
	}
	/* 16 slots to the first power of two that holds n under 3/4. */
	assert_int_equal(m->mask + 1, 262144 * 2);
	assert_int_equal(grows, 15);
	check_u64map_invariants(m);
	for (k = 1; k <= n; k++) {
		uint64_t *v = msc_u64map_get(m, 0x7f0000000000ull + k * 16);

		assert_non_null(v);
		assert_int_equal(*v, k);
	}
	assert_null(msc_u64map_get(m, 0x7f0000000000ull + (n + 1) * 16));
	assert_null(msc_u64map_get(m, 0x7f0000000008ull));
	for (k = 1; k <= n; k += 2)
		assert_true(msc_u64map_del(m, 0x7f0000000000ull + k * 16, NULL));
	assert_int_equal(m->count, n / 2);
	check_u64map_invariants(m);
	for (k = 1; k <= n; k++) {
		uint64_t *v = msc_u64map_get(m, 0x7f0000000000ull + k * 16);

		if (k % 2)
			assert_null(v);
		else
			assert_int_equal(*v, k);
	}
}

/*
 * Millions of random puts and deletes over a small key space, checked
 * against a plain array: the table fills up to near 3/4 and drains again,
 * so clusters get long and deletes keep moving entries back.
 */
static void random_ops(struct msc_u64map *m, const uint64_t *keys, size_t nkeys,
		       unsigned long ops, uint64_t seed)
{
	bool *present = calloc(nkeys, sizeof(*present));
	uint64_t *vals = calloc(nkeys, sizeof(*vals));
	size_t count = 0, i;
	unsigned long op;

	assert_non_null(present);
	assert_non_null(vals);
	rng_state = seed;
	for (op = 0; op < ops; op++) {
		uint64_t r = rng();
		size_t k = (size_t)(r % nkeys);
		uint64_t *v;

		/* Alternate filling and draining phases: every load level. */
		if ((r >> 32) % 100 < ((op / 20000) % 2 ? 85u : 35u)) {
			uint64_t val = rng();

			assert_int_equal(msc_u64map_put(m, keys[k], val), 0);
			if (!present[k])
				count++;
			present[k] = true;
			vals[k] = val;
		} else {
			uint64_t out = 0;
			bool found = msc_u64map_del(m, keys[k], &out);

			if (found != present[k])
				fail_msg("op %lu seed %#llx: del(%#llx) = %d, expected %d", op,
					 (unsigned long long)seed, (unsigned long long)keys[k],
					 found, present[k]);
			if (found) {
				assert_int_equal(out, vals[k]);
				present[k] = false;
				count--;
			}
		}
		assert_int_equal(m->count, count);
		/* Some other key, present or not. */
		k = (size_t)((r >> 16) % nkeys);
		v = msc_u64map_get(m, keys[k]);
		if (present[k]) {
			if (!v)
				fail_msg("op %lu seed %#llx: key %#llx lost", op,
					 (unsigned long long)seed, (unsigned long long)keys[k]);
			assert_int_equal(*v, vals[k]);
		} else {
			assert_null(v);
		}
		if (op % 4096 == 0)
			check_u64map_invariants(m);
	}
	check_u64map_invariants(m);
	for (i = 0; i < nkeys; i++) {
		uint64_t *v = msc_u64map_get(m, keys[i]);

		if (present[i]) {
			assert_non_null(v);
			assert_int_equal(*v, vals[i]);
		} else {
			assert_null(v);
		}
	}
	free(present);
	free(vals);
}

static void test_u64map_random_small_keys(void **state)
{
	struct msc_u64map *m = *state;
	uint64_t keys[3000];
	size_t i;

	/* 1..3000: at most 3000 entries in 4096 slots. */
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		keys[i] = i + 1;
	random_ops(m, keys, ARRAY_SIZE(keys), 2000000, 0x5eed0001);
	assert_int_equal(m->mask, 4095);	/* 3000 entries fit in 4096 */
}

static void test_u64map_random_addresses(void **state)
{
	struct msc_u64map *m = *state;
	uint64_t keys[700];
	size_t i;

	/* Aligned addresses, and a few at the extremes of the key range. */
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		keys[i] = 0x55d0c0de0000ull + i * 48;
	keys[0] = 1;
	keys[1] = UINT64_MAX;
	keys[2] = 1ull << 63;
	random_ops(m, keys, ARRAY_SIZE(keys), 1000000, 0x5eed0002);
}

static void test_u64map_random_one_cluster(void **state)
{
	struct msc_u64map *m = *state;
	uint64_t keys[11], cand;
	size_t n = 0;

	/*
	 * Keys whose home slots in a 16-slot table are 14 and 15 only: one
	 * cluster that wraps around the end of the table, the case where the
	 * backward shift must compare positions modulo the size.  11 entries
	 * never make a 16-slot table grow.
	 */
	for (cand = 1; n < ARRAY_SIZE(keys); cand++)
		if ((msc_hash_u64(cand) & 15) >= 14)
			keys[n++] = cand;
	random_ops(m, keys, ARRAY_SIZE(keys), 1000000, 0x5eed0003);
	assert_int_equal(m->mask, 15);
}

/* ----------------------------------------------------------- msc_strmap */

static int strmap_setup(void **state)
{
	struct msc_strmap *m = malloc(sizeof(*m));

	if (!m || msc_strmap_init(m, 0)) {
		free(m);
		return -1;
	}
	*state = m;
	return 0;
}

static int strmap_teardown(void **state)
{
	struct msc_strmap *m = *state;

	msc_strmap_release(m);
	assert_null(m->slots);
	free(m);
	return 0;
}

static void test_strmap_basic(void **state)
{
	struct msc_strmap *m = *state;
	char key[] = "libc.so.6", lookup[] = "libc.so.6";
	int a, b, c;

	assert_null(msc_strmap_get(m, "libc.so.6"));
	assert_int_equal(msc_strmap_put(m, key, &a), 0);
	assert_int_equal(m->count, 1);
	/* Found by contents, not by pointer. */
	assert_ptr_equal(msc_strmap_get(m, lookup), &a);
	assert_null(msc_strmap_get(m, "libc.so"));
	assert_null(msc_strmap_get(m, "libc.so.6 "));
	assert_null(msc_strmap_get(m, ""));

	/* Replace: same count, new value, through another pointer. */
	assert_int_equal(msc_strmap_put(m, lookup, &b), 0);
	assert_int_equal(m->count, 1);
	assert_ptr_equal(msc_strmap_get(m, key), &b);

	assert_int_equal(msc_strmap_put(m, "", &c), 0);
	assert_int_equal(m->count, 2);
	assert_ptr_equal(msc_strmap_get(m, ""), &c);
	assert_ptr_equal(msc_strmap_get(m, key), &b);

	/* A NULL value is stored, and reads back as NULL. */
	assert_int_equal(msc_strmap_put(m, "nothing", NULL), 0);
	assert_int_equal(m->count, 3);
	assert_null(msc_strmap_get(m, "nothing"));
}

static void test_strmap_growth(void **state)
{
	struct msc_strmap *m = *state;
	enum { N = 50000 };
	char (*keys)[24] = malloc(N * sizeof(*keys));
	char probe[24];
	size_t i;

	assert_non_null(keys);
	for (i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "/lib/obj%zu.so", i);
		assert_int_equal(msc_strmap_put(m, keys[i], (void *)(uintptr_t)(i + 1)), 0);
		assert_int_equal(m->count, i + 1);
	}
	assert_int_equal(m->mask + 1, 131072);
	for (i = 0; i < N; i++) {
		snprintf(probe, sizeof(probe), "/lib/obj%zu.so", i);
		assert_ptr_equal(msc_strmap_get(m, probe), (void *)(uintptr_t)(i + 1));
	}
	/* Replace every other value; the count does not change. */
	for (i = 0; i < N; i += 2) {
		snprintf(probe, sizeof(probe), "/lib/obj%zu.so", i);
		assert_int_equal(msc_strmap_put(m, probe, (void *)(uintptr_t)(N + i)), 0);
	}
	assert_int_equal(m->count, N);
	for (i = 0; i < N; i++) {
		void *want = (void *)(uintptr_t)(i % 2 ? i + 1 : N + i);

		snprintf(probe, sizeof(probe), "/lib/obj%zu.so", i);
		assert_ptr_equal(msc_strmap_get(m, probe), want);
	}
	snprintf(probe, sizeof(probe), "/lib/obj%d.so", N);
	assert_null(msc_strmap_get(m, probe));
	/* Every key sits in one slot, reachable from its home slot. */
	for (i = 0; i <= m->mask; i++) {
		size_t j;

		if (!m->slots[i].key)
			continue;
		for (j = m->slots[i].hash & m->mask; j != i; j = (j + 1) & m->mask)
			assert_non_null(m->slots[j].key);
	}
	msc_strmap_release(m);
	free(keys);
	assert_int_equal(msc_strmap_init(m, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_u64),
		cmocka_unit_test(test_hash_bytes),
		cmocka_unit_test(test_u64map_init_capacity),
		cmocka_unit_test_setup_teardown(test_u64map_basic, u64map_setup, u64map_teardown),
		cmocka_unit_test_setup_teardown(test_u64map_key_zero, u64map_setup, u64map_teardown),
		cmocka_unit_test_setup_teardown(test_u64map_growth, u64map_setup, u64map_teardown),
		cmocka_unit_test_setup_teardown(test_u64map_random_small_keys, u64map_setup,
						u64map_teardown),
		cmocka_unit_test_setup_teardown(test_u64map_random_addresses, u64map_setup,
						u64map_teardown),
		cmocka_unit_test_setup_teardown(test_u64map_random_one_cluster, u64map_setup,
						u64map_teardown),
		cmocka_unit_test_setup_teardown(test_strmap_basic, strmap_setup, strmap_teardown),
		cmocka_unit_test_setup_teardown(test_strmap_growth, strmap_setup, strmap_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
