/* SPDX-License-Identifier: MIT */
/*
 * libmemscope.so's malloc, free, calloc, realloc and C++'s plain operator
 * new, new[], delete and delete[]: the entry points of the calls a program
 * makes most.  Each takes the fast path of a call that --sample does not
 * record (sample.h: a count of bytes, counts in the thread's TLS, the
 * real call) and otherwise jumps to its full hook in hooks.c, which
 * records.
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
 * The guard is held across the real call, as the full hooks hold it: what
 * runs meanwhile on this thread (a signal handler's allocation, the real
 * operator's own malloc) passes through.  Not across glibc's malloc,
 * calloc, realloc and free (the _plain variants below), which call nothing
 * of ours.
 */
#include "sample.h"
#include "shim.h"

/*
 * The fast paths' calls of the real functions, apart from the tests that
 * lead to them: the entry points then need no register of their own and
 * save none (GCC saves at entry what any path of a function needs), and
 * both ways out of them are jumps.
 *
 * glibc's malloc, calloc, realloc and free call nothing of ours: every
 * call libc makes inside itself is to its own hidden names, never through
 * a PLT.  With them as the real ones (entry_routes), the fast path holds
 * no guard around the real call (calloc's and realloc's _plain variants),
 * and malloc's and free's count and jump to the real ones, with no frame
 * at all.  Another allocator's calls (jemalloc's mmap and munmap, through
 * its PLT, to our hooks) must pass through as they do in a full hook: it
 * runs guarded (the _fast variants, malloc_guarded, free_guarded).  A
 * signal handler's allocation meanwhile is then the program's own
 * business, as it is without us.
 */
static inline __attribute__((always_inline)) void *calloc_body(size_t n, size_t size, bool guard)
{
	void *p;

	if (guard)
		guard_in();
	p = g_real.calloc(n, size);
	if (likely(p))
		sample_fast_count_alloc();
	else
		sample_fast_uncount_bytes((uint64_t)n * size);
	if (guard)
		guard_out();
	return p;
}

static inline __attribute__((always_inline)) void *realloc_body(void *ptr, size_t size, bool guard)
{
	void *p;

	if (guard)
		guard_in();
	p = g_real.realloc(ptr, size);
	if (likely(p))
		sample_fast_count_alloc();
	else
		sample_fast_uncount_bytes(size);
	if (ptr && (p || !size))
		sample_fast_count_free();
	if (guard)
		guard_out();
	return p;
}

static __attribute__((noinline)) void *calloc_fast(size_t n, size_t size) { return calloc_body(n, size, true); }
static __attribute__((noinline)) void *calloc_plain(size_t n, size_t size) { return calloc_body(n, size, false); }
static __attribute__((noinline)) void *realloc_fast(void *ptr, size_t size) { return realloc_body(ptr, size, true); }
static __attribute__((noinline)) void *realloc_plain(void *ptr, size_t size) { return realloc_body(ptr, size, false); }

static __attribute__((noinline)) void free_guarded(void *ptr)
{
	guard_in();
	g_real.free(ptr);
	guard_out();
}

/*
 * Where malloc's fast path jumps, the allocation counted: glibc's malloc,
 * with no frame of ours (malloc_plain's call, return and frame were a
 * third of what the fast path cost: 0.7 of 2.7 ns a malloc and free).
 * Its count never reaches PRECOUNT_MAX (sample.h, fast_release): glibc
 * fails so small a malloc only when the process is out of memory (no
 * free chunk, brk and mmap both refused), and it is then counted all the
 * same, the one way a sampled recording's totals can be off.  A larger
 * one (which an absurd size or an address-space limit fails) takes the
 * full hook, which counts it once it returned a block, as full recording
 * counts every allocation.  Another allocator's malloc runs guarded, and
 * its failure is taken back from the count.
 */
static __attribute__((noinline)) void *malloc_guarded(size_t size)
{
	void *p;

	guard_in();
	p = g_real.malloc(size);
	guard_out();
	if (unlikely(!p))
		sample_fast_uncount_alloc(size);
	return p;
}

static bool libc_heap_routes;	/* glibc's heap: the _plain routes */
static void *(*malloc_target)(size_t) = malloc_guarded;
static void *(*calloc_route)(size_t, size_t) = calloc_fast;
static void *(*realloc_route)(void *, size_t) = realloc_fast;
static void (*free_route)(void *) = free_guarded;

/* The allocator is not glibc's: new's malloc holds the guard
 * (new_malloc). */
static inline bool new_guard(void)
{
	return !libc_heap_routes;
}

void entry_routes(bool libc_heap)
{
	__atomic_store_n(&libc_heap_routes, libc_heap, __ATOMIC_RELAXED);
	__atomic_store_n(&g_fast_cap, libc_heap ? PRECOUNT_MAX : INT64_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&malloc_target, libc_heap ? g_real.malloc : malloc_guarded,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&calloc_route, libc_heap ? calloc_plain : calloc_fast, __ATOMIC_RELAXED);
	__atomic_store_n(&realloc_route, libc_heap ? realloc_plain : realloc_fast, __ATOMIC_RELAXED);
	__atomic_store_n(&free_route, libc_heap ? g_real.free : free_guarded, __ATOMIC_RELAXED);
}

/* delete, delete[] when they are not libstdc++'s (free_entry below): they
 * never throw, so the guard is held across them, and the free they may
 * call goes straight through. */
static __attribute__((noinline)) void free_fast(void *ptr, void (*realfn)(void *))
{
	sample_fast_count_free();
	guard_in();
	realfn(ptr);
	guard_out();
}

/*
 * A call made while a hook of this thread's is under way (the malloc
 * inside C++'s operator new, the free inside delete, the unwinder's) goes
 * straight to the real function, as its full hook would send it once the
 * real functions are known: without the full hook's frame, which is most
 * of what such a call costs.  malloc consumes operator new's IN_NEW.
 */
SHIM_EXPORT void *malloc(size_t size)
{
	uint64_t gate;

	if (likely(sample_fast_take(size))) {
		sample_fast_count_alloc();
		return malloc_target(size);
	}
	gate = t_hot.gate;
	if ((uint32_t)gate && likely(g_real.malloc) && !guard_maybe_lost()) {
		if (gate & IN_NEW)
			t_hot.gate = gate & ~(uint64_t)IN_NEW;
		else if (unlikely(from_loader(__builtin_return_address(0))))
			return malloc_hidden(size);
		return g_real.malloc(size);
	}
	return malloc_hook(size);
}

/*
 * libstdc++'s delete and delete[] are free: delete[] calls delete through
 * its PLT, delete calls free.  With both of them the real ones (no library
 * replaced them), a delete on the fast path goes free's way, counted and
 * jumped to free_route, without their two hops and free_fast's frame (the
 * guard held across them, for the free inside).  Set once the C++
 * operators are looked up (entry_cxx_routes).
 */
static bool delete_as_free;

/*
 * libstdc++'s new is malloc (of 1 byte for 0) until malloc fails, then
 * the new_handler's or bad_alloc's business; its new[] calls new through
 * its PLT.  With both the real ones, a new on the fast path calls malloc
 * itself (new_as_malloc below), without libstdc++'s hop, IN_NEW set and
 * cleared, and malloc's entry a second time.
 */
static bool new_as_malloc, new_arr_as_malloc;

void entry_cxx_routes(bool libstdcxx_deletes, bool libstdcxx_new, bool libstdcxx_new_arr)
{
	__atomic_store_n(&delete_as_free, libstdcxx_deletes, __ATOMIC_RELEASE);
	__atomic_store_n(&new_as_malloc, libstdcxx_new, __ATOMIC_RELEASE);
	__atomic_store_n(&new_arr_as_malloc, libstdcxx_new && libstdcxx_new_arr, __ATOMIC_RELEASE);
}

/* free's *as_free: always. */
static const bool free_as_free = true;

/*
 * free and the deletes: *real the real one (read only where it is called:
 * read up front, GCC tests it on full recording's way too; the C++
 * operators' are looked up at their first hook), hook the full hook.
 * *as_free: the block goes to free_route (free's, and libstdc++'s
 * deletes'), else through *real.
 */
static inline void free_entry(void *ptr, void (*const *real)(void *), void (*hook)(void *),
			      const bool *as_free)
{
	uint64_t gate;

	/* NULL and the boot pool's blocks are never "none" (sample.h,
	 * sampled_pin): they go to the hook, without a test of their own. */
	if (likely(sampled_none(t_hot.table, ptr))) {
		if (*as_free) {
			/* counted first, and free_route jumped to */
			sample_fast_count_free();
			free_route(ptr);
			return;
		}
		if (likely(*real)) {
			free_fast(ptr, *real);
			return;
		}
	}
	gate = t_hot.gate;
	if ((uint32_t)gate && likely(*real) && likely(!boot_or_low(ptr)) && !guard_maybe_lost()) {
		(*real)(ptr);
		return;
	}
	hook(ptr);
}

SHIM_EXPORT void free(void *ptr)
{
	free_entry(ptr, &g_real.free, free_hook, &free_as_free);
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
	if (likely(sample_fast_take((uint64_t)n * size)))
		return calloc_route(n, size);
	return calloc_hook(n, size);
}

/* realloc_hook's choices when ptr was not recorded and the new block is
 * not to be: the new block is counted, and the old one if it went. */
SHIM_EXPORT void *realloc(void *ptr, size_t size)
{
	if ((!ptr || likely(sampled_none(t_hot.table, ptr))) && likely(sample_fast_take(size)))
		return realloc_route(ptr, size);
	return realloc_hook(ptr, size);
}

/* ------------------------------------------------------ C++ operators */

/* Exported hooks that no C header declares. */
SHIM_EXPORT void *_Znwm(size_t size);
SHIM_EXPORT void *_Znam(size_t size);
SHIM_EXPORT void _ZdlPv(void *p);
SHIM_EXPORT void _ZdaPv(void *p);
SHIM_EXPORT void _ZdlPvm(void *p, size_t n);
SHIM_EXPORT void _ZdaPvm(void *p, size_t n);

/* A new not taken as malloc (new_as_malloc), on the fast path: counted
 * once it returned (the bytes its take counted given back first: it may
 * throw). */
static __attribute__((noinline)) void *new_fast(size_t size, void *(*realfn)(size_t))
{
	void *p;

	sample_fast_uncount_bytes(size);
	p = IN_NEW_CALL(realfn(size));
	if (likely(p))
		sample_fast_count_alloc_bytes(size);
	return p;
}

/* new's malloc: the guard held across it only when it is not glibc's
 * (as malloc's fast path does). */
static inline __attribute__((always_inline)) void *new_malloc(size_t size, bool guard)
{
	void *p;

	if (guard)
		guard_in();
	p = g_real.malloc(size + !size);
	if (guard)
		guard_out();
	return p;
}

/*
 * new's malloc failed: what libstdc++'s new does then, with the malloc
 * ours: the new_handler, and malloc again, until one frees enough or there
 * is none; then the real operator, which throws bad_alloc (or finds memory
 * after all).  Left to libstdc++'s new, the malloc after the handler came
 * to our malloc with IN_NEW gone (the first, failed one took it): an
 * allocation of its own, and the block new's again (a full recording wrote
 * it twice).  The block is not counted here.
 */
static __attribute__((noinline, cold)) void *new_after_failure(size_t size,
							      void *(*realfn)(size_t), bool guard)
{
	void (*handler)(void);
	void *p;

	while ((handler = g_real.get_new_handler())) {
		handler();
		p = new_malloc(size, guard);
		if (p)
			return p;
	}
	return IN_NEW_CALL(realfn(size));
}

/* libstdc++'s new as its malloc; count: on the fast path, whose take
 * counted its bytes: the block counted once it is there (after a failure
 * its bytes given back first: the operator may throw). */
static inline __attribute__((always_inline)) void *new_body(size_t size, void *(*realfn)(size_t),
							   bool guard, bool count)
{
	void *p = new_malloc(size, guard);

	if (unlikely(!p)) {
		if (count)
			sample_fast_uncount_bytes(size);
		p = new_after_failure(size, realfn, guard);
		if (p && count)
			sample_fast_count_alloc_bytes(size);
		return p;
	}
	if (count)
		sample_fast_count_alloc();
	return p;
}

/* Not counted: the full hooks and new_within's callers do that. */
static void *new_by_malloc(size_t size, void *(*realfn)(size_t))
{
	return new_body(size, realfn, new_guard(), false);
}

static __attribute__((noinline)) void *new_plain(size_t size, void *(*realfn)(size_t))
{
	return new_body(size, realfn, false, true);
}

static __attribute__((noinline)) void *new_guarded(size_t size, void *(*realfn)(size_t))
{
	return new_body(size, realfn, true, true);
}

void *entry_new_call(size_t size, bool arr)
{
	void *(*realfn)(size_t) = arr ? g_real.new_arr : g_real.new;

	return (arr ? new_arr_as_malloc : new_as_malloc) ? new_by_malloc(size, realfn)
							 : IN_NEW_CALL(realfn(size));
}

/*
 * new or new[] called, IN_NEW set, by a real operator a hook of ours
 * called (libstdc++'s nothrow new calls new and catches what it throws;
 * a new[] not libstdc++'s may call new): libstdc++'s as its malloc here
 * too, IN_NEW taken here instead of by the malloc, so that a malloc
 * retried after the new_handler is not an allocation of its own.  The
 * block is the calling operator's, counted or recorded by its hook.
 */
static __attribute__((noinline)) void *new_within(size_t size, void *(*realfn)(size_t))
{
	T_FLAGS_CLEAR(IN_NEW);
	return new_by_malloc(size, realfn);
}

/*
 * A C++ operator called while a hook of this thread's is under way goes
 * straight to the real one, as malloc does (libstdc++'s new[] calls new,
 * its delete[] delete: within our new[] and delete[]; the deletes are
 * free_entry's).  IN_NEW stays for the real operator's malloc to consume,
 * but for libstdc++'s new (new_within).
 */
static inline void *new_entry(size_t size, void *(*realfn)(size_t), void *(*hook)(size_t),
			      const bool *as_malloc)
{
	uint64_t gate;

	if (likely(realfn) && likely(sample_fast_take(size))) {
		if (likely(*as_malloc))
			return new_guard() ? new_guarded(size, realfn) : new_plain(size, realfn);
		return new_fast(size, realfn);
	}
	gate = t_hot.gate;
	if ((uint32_t)gate && likely(realfn) && !guard_maybe_lost()) {
		if ((uint32_t)gate == IN_NEW && *as_malloc)
			return new_within(size, realfn);
		return realfn(size);
	}
	return hook(size);
}

SHIM_EXPORT void *_Znwm(size_t size)
{
	return new_entry(size, g_real.new, new_hook, &new_as_malloc);
}

SHIM_EXPORT void *_Znam(size_t size)
{
	return new_entry(size, g_real.new_arr, new_arr_hook, &new_arr_as_malloc);
}

SHIM_EXPORT void _ZdlPv(void *p)
{
	free_entry(p, &g_real.delete, delete_hook, &delete_as_free);
}

SHIM_EXPORT void _ZdaPv(void *p)
{
	free_entry(p, &g_real.delete_arr, delete_arr_hook, &delete_as_free);
}

SHIM_EXPORT void _ZdlPvm(void *p, size_t n)
{
	(void)n;
	free_entry(p, &g_real.delete, delete_hook, &delete_as_free);
}

SHIM_EXPORT void _ZdaPvm(void *p, size_t n)
{
	(void)n;
	free_entry(p, &g_real.delete_arr, delete_arr_hook, &delete_as_free);
}
