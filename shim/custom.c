/* SPDX-License-Identifier: MIT */
/* Custom allocators: memscope.h's annotations, ms-record --hook's trampolines and the built-in hooks of jemalloc, mimalloc and tcmalloc.  See record.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#include "record.h"
#include "sample.h"
#include "shim.h"

/* ------------------------------------------- memscope.h annotations */

SHIM_EXPORT void memscope_alloc(const void *ptr, size_t size);
SHIM_EXPORT void memscope_free(const void *ptr);
SHIM_EXPORT void memscope_realloc(const void *old, const void *ptr, size_t size);
SHIM_EXPORT void memscope_pool_create(const void *pool, const char *name);
SHIM_EXPORT void memscope_pool_alloc(const void *pool, const void *ptr, size_t size);
SHIM_EXPORT void memscope_pool_free(const void *pool, const void *ptr);
SHIM_EXPORT void memscope_pool_destroy(const void *pool);
SHIM_EXPORT void memscope_mark(const char *name);

SHIM_EXPORT void memscope_alloc(const void *ptr, size_t size)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	guard_in();
	record_alloc(__builtin_frame_address(0), ptr, size, MSC_FN_CUSTOM, NULL, REC_CUSTOM);
	guard_out();
}

SHIM_EXPORT void memscope_free(const void *ptr)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	guard_in();
	record_free(__builtin_frame_address(0), MSC_FN_CUSTOM, ptr, NULL, REC_CUSTOM);
	guard_out();
}

/*
 * A custom realloc is a free and an allocation, as realloc's own: the block
 * keeps no history, and the new one counts at the caller's site.  The free
 * comes first, so that a block resized in place (old == ptr) is not taken
 * for an allocation of a live address.
 */
SHIM_EXPORT void memscope_realloc(const void *old, const void *ptr, size_t size)
{
	void *frame = __builtin_frame_address(0);

	ensure_init();
	if (!ACTIVE())
		return;
	guard_in();
	if (old)
		record_free(frame, MSC_FN_CUSTOM, old, NULL, REC_CUSTOM);
	if (ptr)
		record_alloc(frame, ptr, size, MSC_FN_CUSTOM, NULL, REC_CUSTOM);
	guard_out();
}

/* POOL create or destroy: the name goes in whole words, NUL padded and cut
 * to MSC_POOL_NAME bytes (a copy: the caller's string may be on its stack). */
static void record_pool(void *frame, unsigned op, const void *pool, const char *name)
{
	struct tstate *t = get_tstate();
	uint64_t v[1 + MSC_POOL_NAME / 8] = { (uint64_t)(uintptr_t)pool };
	char *dst = (char *)&v[1];
	size_t i;

	if (!t)
		return;
	for (i = 0; name && name[i] && i < MSC_POOL_NAME - 1; i++)
		dst[i] = name[i];
	shared_lock(t);
	emit(t, MSC_EV_POOL, op, stack_id(t, frame), v, op == MSC_POOL_CREATE ? 1 + MSC_POOL_NAME / 8 : 1);
	shared_unlock(t);
}

SHIM_EXPORT void memscope_pool_create(const void *pool, const char *name)
{
	ensure_init();
	if (!pool || !ACTIVE())
		return;
	guard_in();
	record_pool(__builtin_frame_address(0), MSC_POOL_CREATE, pool, name);
	guard_out();
}

SHIM_EXPORT void memscope_pool_alloc(const void *pool, const void *ptr, size_t size)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	guard_in();
	record_alloc(__builtin_frame_address(0), ptr, size, MSC_FN_CUSTOM, pool, REC_CUSTOM);
	guard_out();
}

SHIM_EXPORT void memscope_pool_free(const void *pool, const void *ptr)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	guard_in();
	record_free(__builtin_frame_address(0), MSC_FN_CUSTOM, ptr, pool, REC_CUSTOM);
	guard_out();
}

SHIM_EXPORT void memscope_pool_destroy(const void *pool)
{
	ensure_init();
	if (!pool || !ACTIVE())
		return;
	guard_in();
	record_pool(__builtin_frame_address(0), MSC_POOL_DESTROY, pool, NULL);
	guard_out();
}

/* --------------------------------------------- ms-record --hook NAME=... */

typedef uint64_t (*hooked_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

/*
 * A call of hooked function k, with the six argument registers of the
 * x86_64 SysV convention: the function is called with all six, whatever
 * it takes (the extra ones are the caller's leftovers, which it ignores),
 * and what it allocates or frees is recorded as custom blocks, the way
 * MEMSCOPE_ALLOC and MEMSCOPE_FREE record them.  Its arguments beyond six
 * (on the stack) and in vector registers do not get through: integer and
 * pointer arguments only.
 */
static uint64_t hook_call(unsigned k, void *frame, const uint64_t *a)
{
	const struct msc_hookspec *h = &g_conf.hooks[k];
	hooked_fn real = (hooked_fn)(uintptr_t)g_conf.hook_real[k];
	uint64_t r, old;

	if (!ACTIVE())
		return real(a[0], a[1], a[2], a[3], a[4], a[5]);
	switch (h->kind) {
	case MSC_HOOK_ALLOC:
		r = real(a[0], a[1], a[2], a[3], a[4], a[5]);
		if (r && ACTIVE()) {
			guard_in();
			record_alloc(frame, (const void *)(uintptr_t)r, a[h->size_arg - 1],
				     MSC_FN_CUSTOM, NULL, REC_CUSTOM);
			guard_out();
		}
		return r;
	case MSC_HOOK_FREE:
		/* Before the real call, as for free: the block may be handed
		 * out again before it returns. */
		if (a[h->ptr_arg - 1]) {
			guard_in();
			record_free(frame, MSC_FN_CUSTOM, (const void *)(uintptr_t)a[h->ptr_arg - 1],
				    NULL, REC_CUSTOM);
			guard_out();
		}
		return real(a[0], a[1], a[2], a[3], a[4], a[5]);
	default:
		/* realloc: after the call, which may fail and keep the block.
		 * A resize to 0 that returns NULL freed it, as realloc's. */
		old = a[h->ptr_arg - 1];
		r = real(a[0], a[1], a[2], a[3], a[4], a[5]);
		if (!ACTIVE())
			return r;
		guard_in();
		if (old && (r || !a[h->size_arg - 1]))
			record_free(frame, MSC_FN_CUSTOM, (const void *)(uintptr_t)old, NULL,
				    REC_CUSTOM);
		if (r)
			record_alloc(frame, (const void *)(uintptr_t)r, a[h->size_arg - 1],
				     MSC_FN_CUSTOM, NULL, REC_CUSTOM);
		guard_out();
		return r;
	}
}

/* One trampoline per slot: the slot is all a GOT entry cannot say. */
#define HOOK_TRAMPOLINE(k)                                                                  \
	static uint64_t hook_trampoline_##k(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, \
					    uint64_t a5, uint64_t a6)                       \
	{                                                                                   \
		const uint64_t a[6] = { a1, a2, a3, a4, a5, a6 };                           \
                                                                                            \
		return hook_call(k, __builtin_frame_address(0), a);                         \
	}
HOOK_TRAMPOLINE(0) HOOK_TRAMPOLINE(1) HOOK_TRAMPOLINE(2) HOOK_TRAMPOLINE(3)
HOOK_TRAMPOLINE(4) HOOK_TRAMPOLINE(5) HOOK_TRAMPOLINE(6) HOOK_TRAMPOLINE(7)
HOOK_TRAMPOLINE(8) HOOK_TRAMPOLINE(9) HOOK_TRAMPOLINE(10) HOOK_TRAMPOLINE(11)
HOOK_TRAMPOLINE(12) HOOK_TRAMPOLINE(13) HOOK_TRAMPOLINE(14) HOOK_TRAMPOLINE(15)

uint64_t shim_hook_trampoline(unsigned k)
{
	static const hooked_fn tramps[MSC_HOOK_MAX] = {
		hook_trampoline_0, hook_trampoline_1, hook_trampoline_2, hook_trampoline_3,
		hook_trampoline_4, hook_trampoline_5, hook_trampoline_6, hook_trampoline_7,
		hook_trampoline_8, hook_trampoline_9, hook_trampoline_10, hook_trampoline_11,
		hook_trampoline_12, hook_trampoline_13, hook_trampoline_14, hook_trampoline_15,
	};

	return k < MSC_HOOK_MAX ? (uint64_t)(uintptr_t)tramps[k] : 0;
}

/* ------------------------------- built-in hooks: jemalloc, mimalloc, tcmalloc */

/* mimalloc's mi_heap_visit_blocks, for mi_heap_destroy: what it frees. */
typedef bool (*mi_visit_fn)(const void *heap, const void *area, void *block, size_t size, void *arg);
static bool (*mi_visit_blocks)(const void *heap, bool all, mi_visit_fn visitor, void *arg);

struct visit_arg {
	void *frame;
	unsigned fn;
};

/*
 * What the built-in functions allocate and free is the malloc family's,
 * sampled as malloc's is (--sample): a block is recorded when the
 * countdown chooses it, and its free only if it was.
 */
static void afn_alloc(void *frame, uint64_t p, uint64_t size, unsigned fn)
{
	if (sample_skip(size)) {
		sample_count_alloc(size);
		return;
	}
	record_alloc(frame, (const void *)(uintptr_t)p, size, fn, NULL, REC_MALLOC);
}

/* The free of p; true when it was recorded (p was, or no sampling). */
static bool afn_free(void *frame, unsigned fn, uint64_t p)
{
	return record_free(frame, fn, (const void *)(uintptr_t)p, NULL, REC_MALLOC | REC_COUNT);
}

static bool visit_free(const void *heap, const void *area, void *block, size_t size, void *arg)
{
	const struct visit_arg *v = arg;

	(void)heap, (void)area, (void)size;
	if (block)
		afn_free(v->frame, v->fn, (uint64_t)(uintptr_t)block);
	return true;
}

/* The library that defines the real function k, asked for another name. */
static void *sibling(unsigned k, const char *name)
{
	Dl_info info;
	void *h, *f = NULL;

	if (!dladdr((void *)(uintptr_t)g_conf.afn_real[k], &info) || !info.dli_fname)
		return NULL;
	h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (h) {
		f = dlsym(h, name);
		dlclose(h);
	}
	return f;
}

static uint64_t str_size(uint64_t s, bool wide)
{
	if (!s)
		return 0;
	return wide ? (wcslen((const wchar_t *)(uintptr_t)s) + 1) * sizeof(wchar_t)
		    : strlen((const char *)(uintptr_t)s) + 1;
}

#define CALL_REAL() real(a[0], a[1], a[2], a[3], a[4], a[5])

/*
 * A call of built-in function k (msc_allocfns.h), made as hook_call makes
 * --hook's, but with the function's own semantics, and as allocations of
 * the malloc (or new) family: these allocators' blocks are their malloc's.
 * The guard is held across the real call, so that what the allocator does
 * inside (mi_realpath's realpath and free) is not counted again; but not
 * across those that may throw, which nothing of ours must be left inside.
 */
static __attribute__((noinline)) uint64_t afn_call(unsigned k, void *frame, const uint64_t *a)
{
	const struct msc_allocfn *f = msc_allocfn(k);
	hooked_fn real = (hooked_fn)(uintptr_t)g_conf.afn_real[k];
	unsigned fn = MSC_FN_BUILTIN + k;
	uint64_t r, p = f->ptr ? a[f->ptr - 1] : 0, size = f->size ? a[f->size - 1] : 0, old = 0;
	struct visit_arg v = { frame, fn };

	if (!ACTIVE())
		return CALL_REAL();
	if (f->n && f->kind != MSC_AFN_XALLOCX)
		size *= a[f->n - 1];
	switch (f->kind) {
	case MSC_AFN_FREE:
		if (!p)
			return CALL_REAL();
		guard_in();
		afn_free(frame, fn, p);
		r = CALL_REAL();
		guard_out();
		return r;
	case MSC_AFN_HEAP_DESTROY:
		guard_in();
		if (!mi_visit_blocks)
			mi_visit_blocks = (bool (*)(const void *, bool, mi_visit_fn, void *))
				(uintptr_t)sibling(k, "mi_heap_visit_blocks");
		if (p && mi_visit_blocks)
			mi_visit_blocks((const void *)(uintptr_t)p, true, visit_free, &v);
		r = CALL_REAL();
		guard_out();
		return r;
	case MSC_AFN_REALLOC:
	case MSC_AFN_REALLOCF:
	case MSC_AFN_REALLOCARR:
		/* The free first, as realloc's: the block may be handed out
		 * again before the call returns. */
		old = f->kind == MSC_AFN_REALLOCARR ? (p ? *(uint64_t *)(uintptr_t)p : 0) : p;
		guard_in();
		/* old stays 0 when its free was not recorded (not sampled) */
		if (old && !afn_free(frame, fn, old))
			old = 0;
		if (f->throws) {
			guard_out();
			r = CALL_REAL();
			if (!ACTIVE())
				return r;
			guard_in();
		} else {
			r = CALL_REAL();
		}
		if (f->kind == MSC_AFN_REALLOCARR) {
			if (r == 0)
				afn_alloc(frame, *(uint64_t *)(uintptr_t)p, size, fn);
			else if (old)
				record_unfree(fn, (const void *)(uintptr_t)old);
		} else if (r) {
			afn_alloc(frame, r, size, fn);
		} else if (old && size && f->kind == MSC_AFN_REALLOC) {
			/* Failed, and the block is still the caller's (not
			 * reallocf's, which frees it, nor a resize to 0). */
			record_unfree(fn, (const void *)(uintptr_t)old);
		}
		guard_out();
		return r;
	case MSC_AFN_STRDUP:
		if (f->nul && a[f->nul - 1])
			return CALL_REAL();	/* realpath into the caller's buffer */
		break;
	default:
		break;
	}
	if (f->throws) {
		r = CALL_REAL();
		if (!ACTIVE())
			return r;
		guard_in();
	} else {
		guard_in();
		r = CALL_REAL();
	}
	switch (f->kind) {
	case MSC_AFN_ALLOC:
		if (r)
			afn_alloc(frame, r, size, fn);
		break;
	case MSC_AFN_ALLOC_OUT:
		if ((int)r == 0 && p && *(uint64_t *)(uintptr_t)p)
			afn_alloc(frame, *(uint64_t *)(uintptr_t)p, size, fn);
		break;
	case MSC_AFN_STRDUP:
	case MSC_AFN_WCSDUP:
		if (r)
			afn_alloc(frame, r, str_size(r, f->kind == MSC_AFN_WCSDUP), fn);
		break;
	case MSC_AFN_DUPENV:
	case MSC_AFN_WDUPENV:
		if ((int)r == 0 && p && *(uint64_t *)(uintptr_t)p)
			afn_alloc(frame, *(uint64_t *)(uintptr_t)p,
				  str_size(*(uint64_t *)(uintptr_t)p, f->kind == MSC_AFN_WDUPENV), fn);
		break;
	case MSC_AFN_EXPAND:
		/* Resized in place: the same block, of its new size (chosen
		 * again when sampling, as a realloc's new block is). */
		if (r) {
			afn_free(frame, fn, p);
			afn_alloc(frame, p, size, fn);
		}
		break;
	case MSC_AFN_XALLOCX:
		/*
		 * r is the block's usable size now: size or more when the
		 * resize happened (what was asked for is counted, up to
		 * size + extra), less when it could not (nothing changed).
		 */
		if (p && r >= size) {
			uint64_t extra = a[f->n - 1], want = size + extra < size ? size : size + extra;

			afn_free(frame, fn, p);
			afn_alloc(frame, p, r < want ? r : want, fn);
		}
		break;
	default:
		break;
	}
	guard_out();
	return r;
}

/* One trampoline per built-in function, as HOOK_TRAMPOLINE. */
#define AFN_TRAMPOLINE(k)                                                                  \
	static uint64_t afn_trampoline_##k(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, \
					   uint64_t a5, uint64_t a6)                       \
	{                                                                                  \
		const uint64_t a[6] = { a1, a2, a3, a4, a5, a6 };                          \
                                                                                           \
		return afn_call(k, __builtin_frame_address(0), a);                         \
	}
#define AFN_TRAMPOLINES10(d)                                                               \
	AFN_TRAMPOLINE(d##0) AFN_TRAMPOLINE(d##1) AFN_TRAMPOLINE(d##2) AFN_TRAMPOLINE(d##3) \
	AFN_TRAMPOLINE(d##4) AFN_TRAMPOLINE(d##5) AFN_TRAMPOLINE(d##6) AFN_TRAMPOLINE(d##7) \
	AFN_TRAMPOLINE(d##8) AFN_TRAMPOLINE(d##9)
#define AFN_ADDR10(d)                                                                      \
	afn_trampoline_##d##0, afn_trampoline_##d##1, afn_trampoline_##d##2,               \
	afn_trampoline_##d##3, afn_trampoline_##d##4, afn_trampoline_##d##5,               \
	afn_trampoline_##d##6, afn_trampoline_##d##7, afn_trampoline_##d##8,               \
	afn_trampoline_##d##9
AFN_TRAMPOLINES10() AFN_TRAMPOLINES10(1) AFN_TRAMPOLINES10(2) AFN_TRAMPOLINES10(3)
AFN_TRAMPOLINES10(4) AFN_TRAMPOLINES10(5) AFN_TRAMPOLINES10(6) AFN_TRAMPOLINES10(7)
AFN_TRAMPOLINES10(8) AFN_TRAMPOLINES10(9) AFN_TRAMPOLINES10(10) AFN_TRAMPOLINES10(11)
AFN_TRAMPOLINES10(12)
AFN_TRAMPOLINE(130) AFN_TRAMPOLINE(131) AFN_TRAMPOLINE(132) AFN_TRAMPOLINE(133)

uint64_t shim_afn_trampoline(unsigned k)
{
	static const hooked_fn tramps[] = {
		AFN_ADDR10(), AFN_ADDR10(1), AFN_ADDR10(2), AFN_ADDR10(3), AFN_ADDR10(4),
		AFN_ADDR10(5), AFN_ADDR10(6), AFN_ADDR10(7), AFN_ADDR10(8), AFN_ADDR10(9),
		AFN_ADDR10(10), AFN_ADDR10(11), AFN_ADDR10(12),
		afn_trampoline_130, afn_trampoline_131, afn_trampoline_132, afn_trampoline_133,
	};

	_Static_assert(sizeof(tramps) / sizeof(tramps[0]) == MSC_NALLOCFNS,
		       "a trampoline for each of msc_allocfns.h's functions");
	return k < MSC_NALLOCFNS ? (uint64_t)(uintptr_t)tramps[k] : 0;
}

/* A mark: its name in whole words, NUL padded and cut to MSC_MARK_NAME
 * bytes, and the stack of its call. */
SHIM_EXPORT void memscope_mark(const char *name)
{
	uint64_t v[MSC_MARK_NAME / 8] = { 0 };
	char *dst = (char *)v;
	struct tstate *t;
	size_t i;

	ensure_init();
	if (!ACTIVE())
		return;
	guard_in();
	t = get_tstate();
	if (t) {
		for (i = 0; name && name[i] && i < MSC_MARK_NAME - 1; i++)
			dst[i] = name[i];
		shared_lock(t);
		emit(t, MSC_EV_MARK, 0, stack_id(t, __builtin_frame_address(0)), v, MSC_MARK_NAME / 8);
		shared_unlock(t);
	}
	guard_out();
}
