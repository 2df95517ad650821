/* SPDX-License-Identifier: MIT */
/* Unit tests for the bump allocator of libmsc/base/arena.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_arena.h"
#include "msc_err.h"
#include "msc_util.h"

/*
 * The chunk header as arena.c defines it: the tests walk the chunk list to
 * see when the arena called malloc, which is what reset is meant to avoid.
 */
struct msc_arena_chunk {
	struct msc_arena_chunk *next;
	size_t size;
	_Alignas(16) unsigned char data[];
};

static int setup(void **state)
{
	struct msc_arena *a = malloc(sizeof(*a));

	if (!a)
		return -1;
	msc_arena_init(a);
	*state = a;
	return 0;
}

static int teardown(void **state)
{
	struct msc_arena *a = *state;

	msc_arena_release(a);
	assert_null(a->head);
	free(a);
	return 0;
}

static size_t nchunks(const struct msc_arena *a)
{
	const struct msc_arena_chunk *c;
	size_t n = 0;

	for (c = a->head; c; c = c->next)
		n++;
	return n;
}

static size_t chunk_bytes(const struct msc_arena *a)
{
	const struct msc_arena_chunk *c;
	size_t n = 0;

	for (c = a->head; c; c = c->next)
		n += c->size;
	return n;
}

static void test_init(void **state)
{
	struct msc_arena *a = *state;
	struct msc_arena s = MSC_ARENA_INIT;

	assert_null(a->head);
	assert_int_equal(a->used, 0);
	assert_int_equal(a->total, 0);
	assert_null(s.head);
	assert_int_equal(s.used, 0);
	assert_int_equal(s.total, 0);
	/* Release of an empty arena is a no-op. */
	msc_arena_release(&s);
	assert_null(s.head);
}

static void test_alignment(void **state)
{
	struct msc_arena *a = *state;
	unsigned char *prev = NULL;
	size_t prev_size = 0, total = 0, model_used = 0, model_chunks = 0, size;

	for (size = 1; size <= 400; size++) {
		unsigned char *p = msc_arena_alloc(a, size);
		size_t rounded = (size + 15) / 16 * 16;

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		/* A block that does not fit the chunk starts a new one. */
		if (!model_chunks || model_used + rounded > MSC_ARENA_CHUNK) {
			model_chunks++;
			model_used = 0;
			assert_ptr_equal(p, a->head->data);
		} else {
			/* Packed right after the previous block. */
			assert_ptr_equal(p, prev + (prev_size + 15) / 16 * 16);
		}
		model_used += rounded;
		memset(p, (int)(size & 0xff), size);
		total += rounded;
		assert_int_equal(a->total, total);
		assert_int_equal(a->used, model_used);
		prev = p;
		prev_size = size;
	}
	/* 1 + 2 + ... + 400 bytes rounded up need two 64 KiB chunks. */
	assert_int_equal(model_chunks, 2);
	assert_int_equal(nchunks(a), 2);
}

static void test_blocks_keep_contents(void **state)
{
	struct msc_arena *a = *state;
	unsigned char *blocks[2000];
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(blocks); i++) {
		blocks[i] = msc_arena_alloc(a, i % 97 + 1);
		assert_non_null(blocks[i]);
		memset(blocks[i], (int)(i & 0xff), i % 97 + 1);
	}
	assert_true(nchunks(a) > 1);
	for (i = 0; i < ARRAY_SIZE(blocks); i++)
		for (j = 0; j < i % 97 + 1; j++)
			assert_int_equal(blocks[i][j], i & 0xff);
}

static void test_accounting(void **state)
{
	struct msc_arena *a = *state;

	assert_non_null(msc_arena_alloc(a, 1));
	assert_int_equal(a->used, 16);
	assert_int_equal(a->total, 16);
	assert_non_null(msc_arena_alloc(a, 16));
	assert_int_equal(a->used, 32);
	assert_non_null(msc_arena_alloc(a, 17));
	assert_int_equal(a->used, 64);
	assert_int_equal(a->total, 64);
	assert_int_equal(nchunks(a), 1);
	assert_int_equal(a->head->size, MSC_ARENA_CHUNK);
}

#define XLARGE (3 * MSC_ARENA_CHUNK + 5)

static void test_large_allocation(void **state)
{
	struct msc_arena *a = *state;
	unsigned char *small, *big, *after;
	size_t i;

	small = msc_arena_alloc(a, 100);
	assert_non_null(small);
	memset(small, 0x5a, 100);

	big = msc_arena_alloc(a, XLARGE);
	assert_non_null(big);
	assert_int_equal((uintptr_t)big % 16, 0);
	/* A chunk of its own, exactly the rounded request. */
	assert_int_equal(nchunks(a), 2);
	assert_int_equal(a->head->size, (XLARGE + 15) / 16 * 16);
	assert_ptr_equal(big, a->head->data);
	memset(big, 0xa5, XLARGE);

	after = msc_arena_alloc(a, 32);
	assert_non_null(after);
	memset(after, 0x11, 32);
	assert_int_equal(a->total, 112 + (XLARGE + 15) / 16 * 16 + 32);

	for (i = 0; i < 100; i++)
		assert_int_equal(small[i], 0x5a);
	for (i = 0; i < XLARGE; i++)
		if (big[i] != 0xa5)
			fail_msg("big[%zu] = %#x", i, big[i]);
}

/* One "sample": the same sequence of allocations every time. */
static void cycle(struct msc_arena *a, unsigned seed)
{
	size_t i;

	for (i = 0; i < 500; i++) {
		size_t size = (i * 7919) % 1000 + 1;
		unsigned char *p = msc_arena_alloc(a, size);

		assert_non_null(p);
		memset(p, (int)((seed + i) & 0xff), size);
	}
	/* And one block larger than a chunk. */
	assert_non_null(msc_arena_alloc(a, XLARGE));
}

static void test_reset_reuses(void **state)
{
	struct msc_arena *a = *state;
	struct msc_arena_chunk *head;
	size_t total;

	cycle(a, 0);
	total = a->total;
	assert_true(nchunks(a) > 2);

	/* Several chunks become one as large as all of them. */
	msc_arena_reset(a);
	assert_int_equal(a->used, 0);
	assert_int_equal(a->total, 0);
	assert_int_equal(nchunks(a), 1);
	assert_true(a->head->size >= total);
	head = a->head;

	/* The same cycle again fits: no malloc, the head stays. */
	cycle(a, 1);
	assert_ptr_equal(a->head, head);
	assert_int_equal(nchunks(a), 1);
	assert_int_equal(a->total, total);
	assert_int_equal(a->used, total);

	msc_arena_reset(a);
	assert_ptr_equal(a->head, head);
	cycle(a, 2);
	assert_ptr_equal(a->head, head);
	assert_int_equal(nchunks(a), 1);

	/* After a reset the first block is the start of the kept chunk. */
	msc_arena_reset(a);
	assert_ptr_equal(msc_arena_alloc(a, 8), head->data);
	assert_ptr_equal(a->head, head);
}

static void test_reset_single_chunk(void **state)
{
	struct msc_arena *a = *state;
	struct msc_arena_chunk *head;
	void *first;

	first = msc_arena_alloc(a, 64);
	assert_non_null(first);
	head = a->head;
	msc_arena_reset(a);
	assert_ptr_equal(a->head, head);
	assert_int_equal(a->used, 0);
	assert_int_equal(a->total, 0);
	assert_ptr_equal(msc_arena_alloc(a, 64), first);
	assert_int_equal(chunk_bytes(a), MSC_ARENA_CHUNK);

	/* Reset of an empty arena allocates nothing. */
	msc_arena_release(a);
	msc_arena_reset(a);
	assert_null(a->head);
}

static void test_strdup(void **state)
{
	struct msc_arena *a = *state;
	static const char text[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	char *s, *t, *e;

	s = msc_arena_strdup(a, text);
	assert_non_null(s);
	assert_ptr_not_equal(s, text);
	assert_string_equal(s, text);
	assert_int_equal((uintptr_t)s % 16, 0);
	assert_int_equal(a->total, (sizeof(text) + 15) / 16 * 16);

	t = msc_arena_strndup(a, text, 4);
	assert_non_null(t);
	assert_memory_equal(t, "/usr", 5);

	/* strndup copies len bytes, embedded NULs included, and terminates. */
	t = msc_arena_strndup(a, "ab\0cd", 5);
	assert_non_null(t);
	assert_memory_equal(t, "ab\0cd\0", 6);

	e = msc_arena_strndup(a, "xyz", 0);
	assert_non_null(e);
	assert_string_equal(e, "");
	e = msc_arena_strdup(a, "");
	assert_non_null(e);
	assert_string_equal(e, "");

	/* The first copy is still intact. */
	assert_string_equal(s, text);
}

static void test_zalloc(void **state)
{
	struct msc_arena *a = *state;
	unsigned char *p, *q;
	size_t i;

	/* Dirty the chunk, reset, and get the same memory back zeroed. */
	p = msc_arena_alloc(a, 4000);
	assert_non_null(p);
	memset(p, 0xff, 4000);
	msc_arena_reset(a);
	q = msc_arena_zalloc(a, 4000);
	assert_ptr_equal(q, p);
	for (i = 0; i < 4000; i++)
		if (q[i] != 0)
			fail_msg("q[%zu] = %#x", i, q[i]);

	q = msc_arena_zalloc(a, XLARGE);
	assert_non_null(q);
	for (i = 0; i < XLARGE; i++)
		if (q[i] != 0)
			fail_msg("q[%zu] = %#x", i, q[i]);
}

static void test_overflow(void **state)
{
	struct msc_arena *a = *state;

	/* Sizes whose rounding or header would wrap around fail cleanly. */
	errno = 0;
	assert_null(msc_arena_alloc(a, SIZE_MAX));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(msc_arena_alloc(a, SIZE_MAX - 14));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(msc_arena_alloc(a, SIZE_MAX - 20));
	assert_int_equal(errno, ENOMEM);
	assert_null(a->head);
	assert_int_equal(a->total, 0);
	/* The arena still works. */
	assert_non_null(msc_arena_alloc(a, 10));
	assert_int_equal(a->total, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_init, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alignment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocks_keep_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_accounting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_allocation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_reuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_single_chunk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strdup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zalloc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overflow, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
