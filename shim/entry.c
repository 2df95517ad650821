/* SPDX-License-Identifier: MIT */
/*
 * libmemscope.so's malloc, free, calloc and realloc: the entry points of
 * the calls a program makes most.  Each takes the fast path of a call that
 * --sample does not record (sample.h: a count of bytes, a count in the
 * ring's header, the real call) and otherwise jumps to its full hook in
 * hooks.c, which records.
 *
 * Apart from hooks.c because this file is compiled with sibling calls and
 * without frame pointers (Makefile): the way to the full hook is a jump,
 * not a call, taken before anything is pushed, so that full recording pays
 * a few instructions more than it did and no frame, while the fast path
 * saves two registers where the full hook saves six.  The full hook's own
 * frame is then the one a hook called by the program would have: its
 * return address is the program's call (t0300's exact stacks fail if a
 * compiler made the jump a call).
 *
 * The guard is held across the real call: a signal handler's allocation
 * must not count into the same ring header at once.
 */
#include "sample.h"
#include "shim.h"

/*
 * The fast paths' calls of the real functions, apart from the tests that
 * lead to them: the entry points then need no register of their own and
 * save none (GCC saves at entry what any path of a function needs), and
 * both ways out of them are jumps.
 */
static __attribute__((noinline)) void *malloc_fast(size_t size)
{
	void *p;

	t_guard++;
	p = real_malloc(size);
	if (likely(p))
		sample_fast_count_alloc(size);
	t_guard--;
	return p;
}

static __attribute__((noinline)) void free_fast(void *ptr)
{
	t_guard++;
	sample_fast_count_free();
	real_free(ptr);
	t_guard--;
}

static __attribute__((noinline)) void *calloc_fast(size_t n, size_t size)
{
	void *p;

	t_guard++;
	p = real_calloc(n, size);
	if (likely(p))
		sample_fast_count_alloc((uint64_t)n * size);
	t_guard--;
	return p;
}

static __attribute__((noinline)) void *realloc_fast(void *ptr, size_t size)
{
	void *p;

	t_guard++;
	p = real_realloc(ptr, size);
	if (likely(p))
		sample_fast_count_alloc(size);
	if (ptr && (p || !size))
		sample_fast_count_free();
	t_guard--;
	return p;
}

SHIM_EXPORT void *malloc(size_t size)
{
	if (sample_fast_open() && likely(sample_fast_take(size)))
		return malloc_fast(size);
	return malloc_hook(size);
}

SHIM_EXPORT void free(void *ptr)
{
	if (sample_fast_open() && likely(ptr) && likely(!is_boot(ptr)) && likely(sampled_none(ptr)))
		free_fast(ptr);
	else
		free_hook(ptr);
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
	if (sample_fast_open() && likely(sample_fast_take((uint64_t)n * size)))
		return calloc_fast(n, size);
	return calloc_hook(n, size);
}

/* realloc_hook's choices when ptr was not recorded and the new block is
 * not to be: the new block is counted, and the old one if it went. */
SHIM_EXPORT void *realloc(void *ptr, size_t size)
{
	if (sample_fast_open() && (!ptr || (likely(!is_boot(ptr)) && likely(sampled_none(ptr)))) &&
	    likely(sample_fast_take(size)))
		return realloc_fast(ptr, size);
	return realloc_hook(ptr, size);
}
