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

#endif
