/* SPDX-License-Identifier: MIT */
/*
 * libmemscope.so's malloc, free, calloc and realloc: the entry points of
 * the calls a program makes most.  Each takes the fast path of a call that
 * --sample does not record (sample.h: a count of bytes, a count in the
 * ring's header, the real call) and otherwise jumps to its full hook in
 * hooks.c, which records.
 *
 * Apart from hooks.c because this file is compiled with sibling calls
 * (Makefile): the jump to the full hook is a jump, not a call, so that
 * full recording pays no frame of ours more than it did, while the fast
 * path saves two registers where the full hook saves six.  The frame
 * handed on is the caller's view of this one: its return address stays
 * where the full hook's frame puts it, after a jump or a call alike.
 *
 * The guard is held across the real call: a signal handler's allocation
 * must not count into the same ring header at once.
 */
#include "sample.h"
#include "shim.h"

SHIM_EXPORT void *malloc(size_t size)
{
	void *p;

	if (sample_fast_open() && likely(sample_fast_take(size))) {
		t_guard++;
		p = real_malloc(size);
		if (likely(p))
			sample_fast_count_alloc(size);
		t_guard--;
		return p;
	}
	return malloc_hook(__builtin_frame_address(0), size);
}

SHIM_EXPORT void free(void *ptr)
{
	if (ptr && sample_fast_open() && likely(!is_boot(ptr)) && likely(sampled_none(ptr))) {
		t_guard++;
		sample_fast_count_free();
		real_free(ptr);
		t_guard--;
		return;
	}
	free_hook(__builtin_frame_address(0), ptr);
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
	void *p;

	if (sample_fast_open() && likely(sample_fast_take((uint64_t)n * size))) {
		t_guard++;
		p = real_calloc(n, size);
		if (likely(p))
			sample_fast_count_alloc((uint64_t)n * size);
		t_guard--;
		return p;
	}
	return calloc_hook(__builtin_frame_address(0), n, size);
}

/* realloc_hook's choices when ptr was not recorded and the new block is
 * not to be: the new block is counted, and the old one if it went. */
SHIM_EXPORT void *realloc(void *ptr, size_t size)
{
	void *p;

	if (sample_fast_open() && (!ptr || (likely(!is_boot(ptr)) && likely(sampled_none(ptr)))) &&
	    likely(sample_fast_take(size))) {
		t_guard++;
		p = real_realloc(ptr, size);
		if (likely(p))
			sample_fast_count_alloc(size);
		if (ptr && (p || !size))
			sample_fast_count_free();
		t_guard--;
		return p;
	}
	return realloc_hook(__builtin_frame_address(0), ptr, size);
}
