/* SPDX-License-Identifier: MIT */
/*
 * memscope.h: tell memscope about a custom allocator (a memory pool, an arena,
 * a free list), so that its blocks are counted, paired and checked for leaks
 * like malloc's.
 *
 *	void *pool_get(struct pool *p, size_t n)
 *	{
 *		void *b = carve(p, n);
 *		MEMSCOPE_ALLOC(b, n);		// a block of n bytes starts at b
 *		return b;
 *	}
 *	void pool_put(struct pool *p, void *b)
 *	{
 *		MEMSCOPE_FREE(b);		// before the block can be reused
 *		give_back(p, b);
 *	}
 *
 * The functions are weak: when the program runs without libmemscope.so they
 * are absent and each macro costs one comparison with NULL.  Under
 * ms-record(1), MEMSCOPE_ALLOC records an allocation (allocation function
 * "custom") whose stack starts at the function containing the macro,
 * MEMSCOPE_FREE its end.  Custom blocks may lie inside memory the pool got
 * from malloc or mmap; that memory is counted too, as the pool's own.
 *
 * MEMSCOPE_REALLOC(old, new, size): the block at old now has size bytes
 * and starts at new (which may be old), counted as a free of old and an
 * allocation of new at the caller, like realloc's.  old NULL: just the
 * allocation; new NULL: just the free.  A resize that failed and left old
 * as it was is not reported at all.
 *
 * Pools, in the spirit of Valgrind's mempool client requests: a pool is
 * any address that stands for it while it exists (the pool's struct, say).
 *
 *	MEMSCOPE_POOL_CREATE(p, "frames");	// name it in reports
 *	b = carve(p, n);
 *	MEMSCOPE_POOL_ALLOC(p, b, n);		// a block of p
 *	MEMSCOPE_POOL_FREE(p, b);		// back to p
 *	MEMSCOPE_POOL_DESTROY(p);		// its live blocks are released
 *
 * A pool's blocks are reported with allocation function "custom" and a
 * "pool" member naming it (memscope-format(5)); destroying a pool frees
 * whatever it still holds, which is then not leaked.  Blocks of different
 * pools, and a pool's and MEMSCOPE_ALLOC's, may share an address.  The
 * name is copied (its first 39 bytes).  A pool that is never created is
 * reported as "?".
 *
 * MEMSCOPE_MARK(name) marks an instant of the run (after warm-up, before
 * and after a request): a "mark" record with the name (its first 39 bytes)
 * and the stack of the call, by which ms-report splits the leaks and the
 * heap left at the end ("allocated after warm-up, still there").
 *
 * Build the calling code as PIE or PIC (Debian's default): in code compiled
 * with -fno-pie and linked with -no-pie, the link resolves a weak undefined
 * function to 0 for good, and the macros never call memscope, even under
 * ms-record (linking with -z dynamic-undefined-weak avoids that too).
 */
#ifndef MEMSCOPE_H
#define MEMSCOPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void memscope_alloc(const void *ptr, size_t size) __attribute__((weak));
void memscope_free(const void *ptr) __attribute__((weak));
void memscope_realloc(const void *old, const void *ptr, size_t size) __attribute__((weak));
void memscope_pool_create(const void *pool, const char *name) __attribute__((weak));
void memscope_pool_alloc(const void *pool, const void *ptr, size_t size) __attribute__((weak));
void memscope_pool_free(const void *pool, const void *ptr) __attribute__((weak));
void memscope_pool_destroy(const void *pool) __attribute__((weak));
void memscope_mark(const char *name) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#define MEMSCOPE_ALLOC(ptr, size)                                 \
	do {                                                      \
		if (memscope_alloc)                               \
			memscope_alloc((ptr), (size));            \
	} while (0)

#define MEMSCOPE_FREE(ptr)                                        \
	do {                                                      \
		if (memscope_free)                                \
			memscope_free((ptr));                     \
	} while (0)

#define MEMSCOPE_REALLOC(old, ptr, size)                          \
	do {                                                      \
		if (memscope_realloc)                             \
			memscope_realloc((old), (ptr), (size));   \
	} while (0)

#define MEMSCOPE_POOL_CREATE(pool, name)                          \
	do {                                                      \
		if (memscope_pool_create)                         \
			memscope_pool_create((pool), (name));     \
	} while (0)

#define MEMSCOPE_POOL_ALLOC(pool, ptr, size)                      \
	do {                                                      \
		if (memscope_pool_alloc)                          \
			memscope_pool_alloc((pool), (ptr), (size)); \
	} while (0)

#define MEMSCOPE_POOL_FREE(pool, ptr)                             \
	do {                                                      \
		if (memscope_pool_free)                           \
			memscope_pool_free((pool), (ptr));        \
	} while (0)

#define MEMSCOPE_POOL_DESTROY(pool)                               \
	do {                                                      \
		if (memscope_pool_destroy)                        \
			memscope_pool_destroy((pool));            \
	} while (0)

#define MEMSCOPE_MARK(name)                                       \
	do {                                                      \
		if (memscope_mark)                                \
			memscope_mark((name));                    \
	} while (0)

#endif
