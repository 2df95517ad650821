/* SPDX-License-Identifier: MIT */
/*
 * libmemscope.so's hooks of the malloc family and the C++ operators, and
 * the event path every hook records through: the event source preloaded
 * into the profiled program.
 *
 * Each hook forwards to the real function and, unless the thread is already
 * inside the shim (the initial-exec TLS guard), appends a fixed-layout binary
 * record to the calling thread's ring in shared memory (msc_proto.h).  The
 * stack is captured (unwind.c) and interned per thread: a stack crosses to
 * the collector once, as a STACK record, and events carry its id.  No JSON,
 * no symbolization, no stdio and no global lock on this path.
 *
 * Safety rules (libmemscope(7), Guarantees), for every file of the shim:
 * the guard makes every allocation the shim, the unwinder, the loader or a
 * signal handler makes on a thread inside a hook pass straight through; a
 * static bootstrap pool answers allocations made while dlsym runs; a free
 * is recorded before the real free; helper work happens only on the
 * calling thread (the one thread of the library's own is attach mode's,
 * attach.c); pthread_atfork keeps children consistent; libunwind is
 * loaded with RTLD_LOCAL; a dead collector stops recording, never the
 * program.
 *
 * Here: the full hooks of entry.c's entry points (malloc_hook, new_hook
 * and the others) and the malloc family's and C++'s other hooks, the
 * event path's out-of-line parts (record.h: a session that samples,
 * stacks without an id, stackless events), stack interning and the boot
 * pool.  Each hook inlines record.h's record_alloc or record_free, with
 * the ring operations from shim.h, so that its hot path (hook ->
 * get_tstate -> stack_id -> ring_begin/ring_commit) makes no call the
 * compiler cannot see into but the real function and the unwinder.
 * shim.h says who owns what.
 */
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

/* --------------------------------------------------------------- stacks */

bool intern_grow(struct tstate *t)
{
	uint32_t ncap = t->tab ? (t->tab_mask + 1) * 2 : TAB_FIRST, i;
	struct intern_slot *nt = map_anon(ncap * sizeof(*nt));

	if (!nt)
		return false;
	for (i = 0; t->tab && i <= t->tab_mask; i++) {
		struct intern_slot *s = &t->tab[i];
		uint32_t j;

		if (!s->id)
			continue;
		j = (uint32_t)s->h1 & (ncap - 1);
		while (nt[j].id)
			j = (j + 1) & (ncap - 1);
		nt[j] = *s;
	}
	if (t->tab && !t->tab_inline)
		unmap(t->tab, (t->tab_mask + 1) * sizeof(*t->tab));
	t->tab = nt;
	t->tab_mask = ncap - 1;
	t->tab_inline = false;
	return true;
}

/*
 * Announces the blocks hidden_note() took (shim.h) on t's ring.  Sampling,
 * each joins the set of recorded blocks too, so that its free is sent
 * (and then dropped by the collector) rather than counted as the
 * program's.
 */
static __attribute__((noinline, cold)) void hidden_flush(struct tstate *t)
{
	unsigned i, n = t_hot.hidden < HIDDEN_MAX ? t_hot.hidden : HIDDEN_MAX;

	for (i = 0; i < n; i++) {
		if (g_conf.sample)
			sampled_add((const void *)(uintptr_t)t_hidden[i]);
		emit(t, MSC_EV_HIDDEN, 0, 0, &t_hidden[i], 1);
	}
	hidden_forget();
}

/* The id of a captured stack the trace cache did not name: interned, and
 * sent when new.  Out of stack_id's way, which the cache's hits take. */
__attribute__((noinline)) uint32_t stack_intern(struct tstate *t, const struct capture *cp)
{
	struct capture c = *cp;
	struct intern_slot *s;
	uint64_t *rec;
	uint32_t id, j;

	/* What the loader allocated in this hook: in libunwind's first
	 * backtrace of the thread, a capture the trace cache never names. */
	if (unlikely(t_hot.hidden))
		hidden_flush(t);
	if (c.n <= 0)
		return 0;
	j = (uint32_t)c.h1 & t->tab_mask;
	for (;;) {
		s = &t->tab[j];
		if (!s->id)
			break;
		if (s->h1 == c.h1 && s->h2 == c.h2) {
			unwind_file(&t->uw, s->id);
			return s->id;
		}
		j = (j + 1) & t->tab_mask;
	}
	/* A new stack: send the module map first if it changed, then it. */
	if (!c.have_ips)
		unwind_fill_ips(&t->uw, t->ips);
	modules_check(t);
	id = __atomic_add_fetch(&g_conf.ctl->next_stack, 1, __ATOMIC_RELAXED);
	rec = ring_begin(t, 1 + (unsigned)c.n);
	if (!rec)
		return 0;
	rec[0] = msc_ev_hdr(MSC_EV_STACK, 0, 1 + (unsigned)c.n, id);
	memcpy(rec + 1, t->ips, (size_t)c.n * 8);
	ring_commit(t, 1 + (unsigned)c.n);
	if ((t->tab_count + 1) * 2 > t->tab_mask + 1) {
		if (!intern_grow(t))
			return id;	/* not cached: sent again next time */
		j = (uint32_t)c.h1 & t->tab_mask;
		while (t->tab[j].id)
			j = (j + 1) & t->tab_mask;
		s = &t->tab[j];
	}
	s->h1 = c.h1;
	s->h2 = c.h2;
	s->id = id;
	t->tab_count++;
	unwind_file(&t->uw, id);
	return id;
}

void *malloc_hidden(size_t size)
{
	void *p = g_real.malloc(size);

	hidden_note(p);
	return p;
}

void *calloc_hidden(size_t n, size_t size)
{
	void *p = g_real.calloc(n, size);

	hidden_note(p);
	return p;
}

/* caller_id's new address (record.h): its one-frame stack [ip], the
 * return address of a hook, where the program called it. */
__attribute__((noinline)) uint32_t caller_new(struct tstate *t, uint64_t ip, unsigned j)
{
	uint64_t *rec;
	uint32_t id;

	modules_check(t);
	id = __atomic_add_fetch(&g_conf.ctl->next_stack, 1, __ATOMIC_RELAXED);
	rec = ring_begin(t, 2);
	if (!rec)
		return 0;
	rec[0] = msc_ev_hdr(MSC_EV_STACK, 0, 2, id);
	rec[1] = ip;
	ring_commit(t, 2);
	t->callers[j].ip = ip;
	t->callers[j].id = id;
	return id;
}

/* ------------------------------------------------------------ recording */

/*
 * record_alloc's way (record.h) for a block of the malloc family in a
 * session that samples: one that sample_skip() chose.
 */
__attribute__((noinline)) void record_alloc_sampling(void *frame, const void *p, uint64_t size,
						     unsigned fn)
{
	record_alloc(frame, p, size, fn, NULL, REC_MALLOC | REC_SAMPLING);
}

/*
 * The leak scan takes every aligned word of a live block for a possible
 * pointer.  A block handed out again holds what an earlier block left in
 * that memory (a freed vector's pointers, the allocator's links): in the
 * bytes the program never writes after malloc (a vector's spare capacity,
 * the unused end of a buffer) they kept lost blocks reachable, where
 * memcheck sees undefined bytes.  So the words of a block just handed out
 * are emptied, with the guard held, before the program has it; only words
 * that are not 0 are written, so a page never touched is only read.
 * Blocks of SCRUB_MAX and more are left as they are: glibc maps those
 * fresh (zeroed) unless its threshold grew.  What malloc's memory held is
 * unspecified: no program can rely on it.  An operator new of a library
 * other than libstdc++ may recycle objects and rely on what they kept
 * (g_real.new_std): its blocks are left too.
 */
#define SCRUB_MAX (128u << 10)

static inline void scrub(void *p, uint64_t from, uint64_t size)
{
	uint64_t *w, *end;

	if (!g_conf.scrub || size >= SCRUB_MAX || from >= size)
		return;
	w = (uint64_t *)(((uintptr_t)p + from + 7) & ~(uintptr_t)7);
	end = (uint64_t *)(((uintptr_t)p + size) & ~(uintptr_t)7);
	/* Eight words at a time: written (all eight) only if one is not 0. */
	for (; w + 8 <= end; w += 8)
		if (w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])
			__builtin_memset(w, 0, 64);
	for (; w < end; w++)
		if (*w)
			*w = 0;
}

/* A block of malloc, new or the aligned family just handed out (by fn):
 * emptied before it is recorded. */
static inline void scrub_fresh(void *p, uint64_t size, unsigned fn)
{
	if (g_real.new_std || (fn != MSC_FN_NEW && fn != MSC_FN_NEW_ARRAY))
		scrub(p, 0, size);
}

/*
 * Called before the real allocator runs, with the guard held: starts the
 * capture's trace cache lookup, whose cache line then arrives while the
 * allocator works.  Only for a thread with a ring of its own (the shared
 * ring's state is not ours until its lock is held).
 */
static inline void prepare_alloc(void *frame)
{
	struct tstate *t = t_state;

	if (likely(t && t != TSTATE_DEAD) && !t->shared && g_conf.unwind == MSC_UNWIND_DWARF)
		unwind_prepare(&t->uw, frame, (int)g_conf.depth);
}

/* UNFREE, EXIT, MUNMAP (record.h). */
void record_stackless(unsigned type, unsigned fn, uint64_t a, uint64_t b, unsigned words)
{
	struct tstate *t = get_tstate();
	const uint64_t v[2] = { a, b };

	if (!t)
		return;
	shared_lock(t);
	emit(t, type, fn, 0, v, words - 2);
	shared_unlock(t);
}

__attribute__((noinline)) uint32_t free_stack_id(struct tstate *t, void *frame)
{
	return stack_id(t, frame);
}

/*
 * record_free's way (record.h) for a block of the malloc family in a
 * session that samples: recorded if the block was (then forgotten), else
 * counted if `count`.  Out of line, so that a full recording's free hooks
 * keep the registers of their own way (free_hook saved two more, 4
 * instructions a free, with it inlined).
 */
__attribute__((noinline)) bool record_free_sampling(void *frame, unsigned fn, const void *ptr,
						    bool count)
{
	if (record_free(frame, fn, ptr, NULL, REC_MALLOC | REC_SAMPLING))
		return true;
	if (count)
		sample_count_free();
	return false;
}

/* Not recording this call; consumes a pending IN_NEW (true then: the
 * call is a real operator new's). */
static inline bool passing_through(void)
{
	if (unlikely(t_flags & IN_NEW)) {
		T_FLAGS_CLEAR(IN_NEW);
		return true;
	}
	return false;
}

/*
 * A real operator new's allocation that failed (ra: where it returns to,
 * inside the operator), which consumed IN_NEW: the operator calls the
 * new_handler and tries again, from the same call, with IN_NEW gone.
 * That try is the operator's too, not an allocation of its own (it was
 * recorded as one, then the operator's block at the same address: a block
 * twice).  The handler's own allocations come from elsewhere.  Set by the
 * aligned allocations' hooks, which libstdc++'s aligned news call, and
 * forgotten when the operator's hook gets its block back (new_retry_end);
 * a plain new's malloc is entry.c's (new_after_failure).
 */
static __thread uintptr_t t_new_retry TLS_IE;

static inline void new_retry_arm(bool in_new, bool failed, const void *ra)
{
	if (unlikely(in_new && failed))
		t_new_retry = (uintptr_t)ra;
}

/* The operator's try again: taken (and kept for the next try, until the
 * operator returns). */
static inline bool new_retry_is(const void *ra)
{
	return unlikely(t_new_retry) && t_new_retry == (uintptr_t)ra;
}

static inline void new_retry_end(void)
{
	if (unlikely(t_new_retry))
		t_new_retry = 0;
}

/* ------------------------------------------------------------ boot pool */

/*
 * Allocations made while dlsym runs (old glibc, sanitizers) come from here:
 * resolve.c sets g_real.resolving meanwhile.  The hooks are its only users, and
 * inline it.
 */
static char boot_space[2 * BOOT_POOL_SIZE];
static size_t boot_used;

/*
 * Where the pool's blocks start (offsets in it; 0: not yet written), for
 * the set of recorded blocks, which pins them all while a session samples
 * so that the free fast path sends them to the full hook without a test of
 * its own (sample.h, sampled_pin).  A block takes 16 bytes of the pool at
 * least.  boot_in_set: the set is there to pin them (boot_pool_to_set); a
 * block made meanwhile pins itself, and one made while the set is filled
 * is pinned by one side or the other, or by both.
 */
static uint32_t boot_blocks[BOOT_POOL_SIZE / 16];
static unsigned boot_nblocks;
static bool boot_in_set;

/* The pool: the BOOT_POOL_SIZE-aligned part of boot_space. */
static inline char *boot_pool(void)
{
	return (char *)(((uintptr_t)boot_space + BOOT_POOL_SIZE - 1) &
			~(uintptr_t)(BOOT_POOL_SIZE - 1));
}

static void boot_block_made(char *pool, size_t start)
{
	unsigned i = __atomic_fetch_add(&boot_nblocks, 1, __ATOMIC_SEQ_CST);

	if (i < sizeof(boot_blocks) / sizeof(boot_blocks[0]))
		__atomic_store_n(&boot_blocks[i], (uint32_t)start, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&boot_in_set, __ATOMIC_SEQ_CST))
		sampled_pin(pool + start);
}

void boot_pool_unset(void)
{
	__atomic_store_n(&boot_in_set, false, __ATOMIC_SEQ_CST);
}

void boot_pool_to_set(void)
{
	char *pool = boot_pool();
	unsigned n, i;

	__atomic_store_n(&boot_in_set, true, __ATOMIC_SEQ_CST);
	n = __atomic_load_n(&boot_nblocks, __ATOMIC_SEQ_CST);
	if (n > sizeof(boot_blocks) / sizeof(boot_blocks[0]))
		n = sizeof(boot_blocks) / sizeof(boot_blocks[0]);
	for (i = 0; i < n; i++) {
		uint32_t start = __atomic_load_n(&boot_blocks[i], __ATOMIC_SEQ_CST);

		if (start)
			sampled_pin(pool + start);
	}
}

static void *boot_alloc(size_t size, size_t align)
{
	char *pool = boot_pool();
	size_t off, *hdr;

	__atomic_store_n(&g_conf.boot_key, (uintptr_t)pool >> BOOT_SHIFT, __ATOMIC_RELAXED);
	if (align < 16)
		align = 16;
	off = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);
	for (;;) {
		size_t start = (off + 16 + align - 1) & ~(align - 1);

		if (start + size > BOOT_POOL_SIZE || start + size < start)
			return NULL;
		if (__atomic_compare_exchange_n(&boot_used, &off, start + size, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			hdr = (size_t *)(pool + start) - 1;
			*hdr = size;
			boot_block_made(pool, start);
			return pool + start;
		}
	}
}

static size_t boot_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* ---------------------------------------------------------------- hooks */

/* Exported hooks that no C header declares. */
SHIM_EXPORT void *memalign(size_t align, size_t size);
SHIM_EXPORT void *pvalloc(size_t size);
SHIM_EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt);
SHIM_EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *nt);
SHIM_EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t al);
SHIM_EXPORT void *_ZnamSt11align_val_t(size_t size, size_t al);
SHIM_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t al, const void *nt);
SHIM_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t al, const void *nt);
SHIM_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
SHIM_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);
SHIM_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al);
SHIM_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al);
SHIM_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al);
SHIM_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al);
SHIM_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt);
SHIM_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt);

void *malloc_hook(size_t size)
{
	void *frame = __builtin_frame_address(0);
	void *p;

	if (unlikely(!g_real.malloc)) {
		if (g_real.resolving)
			return boot_alloc(size, 16);
		ensure_init();
		if (!g_real.malloc)
			return boot_alloc(size, 16);
	}
	if (!ACTIVE()) {
		passing_through();
		return g_real.malloc(size);
	}
	guard_in();
	if (sample_skip(size)) {
		p = g_real.malloc(size);
		if (p)
			sample_count_alloc(size);
		guard_out();
		return p;
	}
	prepare_alloc(frame);
	p = g_real.malloc(size);
	if (p) {
		scrub_fresh(p, size, MSC_FN_MALLOC);
		record_alloc(frame, p, size, MSC_FN_MALLOC, NULL, REC_MALLOC);
	}
	guard_out();
	return p;
}

void free_hook(void *ptr)
{
	void *frame = __builtin_frame_address(0);

	if (unlikely(!ptr || is_boot(ptr)))
		return;
	if (unlikely(!g_real.free)) {
		ensure_init();
		if (!g_real.free)
			return;
	}
	if (!ACTIVE()) {
		g_real.free(ptr);
		return;
	}
	guard_in();
	/* Before the real free: afterwards another thread may get ptr back. */
	record_free(frame, MSC_FN_FREE, ptr, NULL, REC_MALLOC | REC_COUNT);
	g_real.free(ptr);
	guard_out();
}

void *calloc_hook(size_t n, size_t size)
{
	void *frame = __builtin_frame_address(0);
	void *p;

	if (unlikely(!g_real.calloc)) {
		if (g_real.resolving) {
			if (size && n > SIZE_MAX / size)
				return NULL;
			p = boot_alloc(n * size, 16);	/* the pool is zeroed memory */
			return p;
		}
		ensure_init();
		if (!g_real.calloc)
			return NULL;
	}
	if (!ACTIVE()) {
		if (t_flags && unlikely(from_loader(__builtin_return_address(0))))
			return calloc_hidden(n, size);
		passing_through();
		return g_real.calloc(n, size);
	}
	guard_in();
	if (sample_skip((uint64_t)n * size)) {
		p = g_real.calloc(n, size);
		if (p)
			sample_count_alloc((uint64_t)n * size);
		guard_out();
		return p;
	}
	prepare_alloc(frame);
	p = g_real.calloc(n, size);
	if (p)
		record_alloc(frame, p, (uint64_t)n * size, MSC_FN_CALLOC, NULL, REC_MALLOC);
	guard_out();
	return p;
}

static void *do_realloc(void *frame, void *ptr, size_t size, unsigned fn)
{
	size_t old_size;
	bool skip, old_recorded;
	void *p;

	if (unlikely(is_boot(ptr))) {
		p = malloc(size);
		if (p)
			memcpy(p, ptr, boot_size(ptr) < size ? boot_size(ptr) : size);
		return p;
	}
	if (!ACTIVE())
		return g_real.realloc(ptr, size);
	guard_in();
	/* --sample: the old block's free is recorded if the block was, and
	 * counted otherwise once the realloc did free it; the new block is
	 * a new choice. */
	old_recorded = ptr && record_free(frame, fn, ptr, NULL, REC_MALLOC);
	skip = sample_skip(size);
	/* What the program had of the old block is copied or kept; past it,
	 * what an earlier block left (scrub). */
	if (!ptr || skip || !g_conf.scrub)
		old_size = 0;
	else if (g_real.malloc_usable_size)
		old_size = g_real.malloc_usable_size(ptr);
	else
		old_size = size;	/* not known: nothing emptied */
	if (!skip)
		prepare_alloc(frame);
	p = g_real.realloc(ptr, size);
	if (p && skip) {
		sample_count_alloc(size);
	} else if (p) {
		scrub(p, old_size, size);
		record_alloc(frame, p, size, fn, NULL, REC_MALLOC);
	}
	if (ptr && !old_recorded && (p || !size))
		sample_count_free();
	else if (!p && ptr && size && old_recorded)
		record_unfree(fn, ptr);
	guard_out();
	return p;
}

void *realloc_hook(void *ptr, size_t size)
{
	void *p;

	if (unlikely(!g_real.realloc)) {
		if (g_real.resolving) {
			p = boot_alloc(size, 16);

			if (p && ptr)
				memcpy(p, ptr, boot_size(ptr) < size ? boot_size(ptr) : size);
			return p;
		}
		ensure_init();
		if (!g_real.realloc)
			return NULL;
	}
	return do_realloc(__builtin_frame_address(0), ptr, size, MSC_FN_REALLOC);
}

SHIM_EXPORT void *reallocarray(void *ptr, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(!g_real.realloc)) {
		ensure_init();
		if (!g_real.realloc)
			return NULL;
	}
	return do_realloc(__builtin_frame_address(0), ptr, n * size, MSC_FN_REALLOCARRAY);
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	bool skip;
	int ret;

	ensure_init();
	if (unlikely(!g_real.posix_memalign)) {
		void *p = boot_alloc(size, align);

		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (!ACTIVE() || new_retry_is(__builtin_return_address(0))) {
		bool in_new = passing_through();

		ret = g_real.posix_memalign(out, align, size);
		new_retry_arm(in_new, ret != 0, __builtin_return_address(0));
		return ret;
	}
	guard_in();
	skip = sample_skip(size);
	ret = g_real.posix_memalign(out, align, size);
	if (ret == 0 && skip)
		sample_count_alloc(size);
	else if (ret == 0) {
		scrub_fresh(*out, size, MSC_FN_POSIX_MEMALIGN);
		record_alloc(__builtin_frame_address(0), *out, size, MSC_FN_POSIX_MEMALIGN, NULL,
			     REC_MALLOC);
	}
	guard_out();
	return ret;
}

#define ALIGNED_HOOK(name, fn, params, args, realcall, sizeexpr)                              \
	SHIM_EXPORT void *name params                                                         \
	{                                                                                     \
		bool skip;                                                                    \
		void *p;                                                                      \
		ensure_init();                                                                \
		if (unlikely(!g_real.name))                                                   \
			return NULL;                                                          \
		if (!ACTIVE() || new_retry_is(__builtin_return_address(0))) {                 \
			bool in_new = passing_through();                                      \
			p = realcall;                                                         \
			new_retry_arm(in_new, !p, __builtin_return_address(0));               \
			return p;                                                             \
		}                                                                             \
		guard_in();                                                                    \
		skip = sample_skip(sizeexpr);                                                 \
		p = realcall;                                                                 \
		if (p && skip)                                                                \
			sample_count_alloc(sizeexpr);                                         \
		else if (p) {                                                                 \
			scrub_fresh(p, sizeexpr, fn);                                         \
			record_alloc(__builtin_frame_address(0), p, sizeexpr, fn, NULL,       \
				     REC_MALLOC);                                             \
		}                                                                             \
		guard_out();                                                                    \
		return p;                                                                     \
	}

ALIGNED_HOOK(aligned_alloc, MSC_FN_ALIGNED_ALLOC, (size_t align, size_t size), (align, size),
	     g_real.aligned_alloc(align, size), size)
ALIGNED_HOOK(memalign, MSC_FN_MEMALIGN, (size_t align, size_t size), (align, size),
	     g_real.memalign(align, size), size)
ALIGNED_HOOK(valloc, MSC_FN_VALLOC, (size_t size), (size), g_real.valloc(size), size)
ALIGNED_HOOK(pvalloc, MSC_FN_PVALLOC, (size_t size), (size), g_real.pvalloc(size), size)

/* ------------------------------------------------------ C++ operators */

static inline void cxx_ready(void)
{
	ensure_init();
	if (unlikely(!__atomic_load_n(&g_real.cxx_resolved, __ATOMIC_ACQUIRE)))
		resolve_cxx();
}

/* No libstdc++ operator to call (cannot happen in a C++ program). */
static void *new_fallback(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		abort();	/* cannot throw std::bad_alloc from here */
	return p;
}

/* operator new and new[] (the throwing ones) are entry.c's, whose full
 * hooks are new_hook and new_arr_hook (vis empty: not exported).  `call`
 * makes the block: entry_new_call()'s malloc in libstdc++'s new's place,
 * or the real operator (NEW_HOOK's; callargs its arguments). */
#define NEW_HOOK_CALLING(vis, sym, realfn, fn, params, callargs, call)                  \
	vis void *sym params                                                            \
	{                                                                               \
		bool skip;                                                              \
		void *p;                                                                \
		cxx_ready();                                                            \
		if (unlikely(!realfn))                                                  \
			return new_fallback(size);                                      \
		if (!ACTIVE())                                                          \
			return realfn callargs;                                         \
		guard_in();                                                              \
		skip = sample_skip(size);                                               \
		if (!skip)                                                              \
			prepare_alloc(__builtin_frame_address(0));                      \
		guard_out();                                                              \
		p = call;                                                               \
		new_retry_end();                                                        \
		if (p && ACTIVE()) {                                                    \
			guard_in();                                                      \
			if (skip)                                                       \
				sample_count_alloc(size);                               \
			else {                                                          \
				scrub_fresh(p, size, fn);                               \
				record_alloc(__builtin_frame_address(0), p, size, fn,   \
					     NULL, REC_MALLOC);                         \
			}                                                               \
			guard_out();                                                      \
		}                                                                       \
		return p;                                                               \
	}

#define NEW_HOOK(vis, sym, realfn, fn, params, callargs) \
	NEW_HOOK_CALLING(vis, sym, realfn, fn, params, callargs, IN_NEW_CALL(realfn callargs))

NEW_HOOK_CALLING(, new_hook, g_real.new, MSC_FN_NEW, (size_t size), (size),
		 entry_new_call(size, false))
NEW_HOOK_CALLING(, new_arr_hook, g_real.new_arr, MSC_FN_NEW_ARRAY, (size_t size), (size),
		 entry_new_call(size, true))
NEW_HOOK(SHIM_EXPORT, _ZnwmRKSt9nothrow_t, g_real.new_nt, MSC_FN_NEW, (size_t size, const void *nt),
	 (size, nt))
NEW_HOOK(SHIM_EXPORT, _ZnamRKSt9nothrow_t, g_real.new_arr_nt, MSC_FN_NEW_ARRAY,
	 (size_t size, const void *nt), (size, nt))
NEW_HOOK(SHIM_EXPORT, _ZnwmSt11align_val_t, g_real.new_al, MSC_FN_NEW, (size_t size, size_t al),
	 (size, al))
NEW_HOOK(SHIM_EXPORT, _ZnamSt11align_val_t, g_real.new_arr_al, MSC_FN_NEW_ARRAY,
	 (size_t size, size_t al), (size, al))
NEW_HOOK(SHIM_EXPORT, _ZnwmSt11align_val_tRKSt9nothrow_t, g_real.new_al_nt, MSC_FN_NEW,
	 (size_t size, size_t al, const void *nt), (size, al, nt))
NEW_HOOK(SHIM_EXPORT, _ZnamSt11align_val_tRKSt9nothrow_t, g_real.new_arr_al_nt, MSC_FN_NEW_ARRAY,
	 (size_t size, size_t al, const void *nt), (size, al, nt))

/* Deletes never throw: the guard may be held across the real one. */
static inline __attribute__((always_inline)) void do_delete(void *ptr, unsigned fn,
								void (*realfn)(void *))
{
	if (!ptr)
		return;
	cxx_ready();
	if (unlikely(!realfn))
		realfn = g_real.delete ? g_real.delete : free;
	if (!ACTIVE()) {
		realfn(ptr);
		return;
	}
	guard_in();
	record_free(__builtin_frame_address(0), fn, ptr, NULL, REC_MALLOC | REC_COUNT);
	realfn(ptr);
	guard_out();
}

static inline __attribute__((always_inline)) void do_delete_al(void *ptr, size_t al, unsigned fn,
								   void (*realfn)(void *, size_t))
{
	if (!ptr)
		return;
	cxx_ready();
	if (unlikely(!realfn)) {
		do_delete(ptr, fn, NULL);
		return;
	}
	if (!ACTIVE()) {
		realfn(ptr, al);
		return;
	}
	guard_in();
	record_free(__builtin_frame_address(0), fn, ptr, NULL, REC_MALLOC | REC_COUNT);
	realfn(ptr, al);
	guard_out();
}

/* The full hooks of entry.c's delete and delete[], unsized and sized. */
void delete_hook(void *p) { do_delete(p, MSC_FN_DELETE, g_real.delete); }
void delete_arr_hook(void *p) { do_delete(p, MSC_FN_DELETE_ARRAY, g_real.delete_arr); }
SHIM_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; do_delete(p, MSC_FN_DELETE, g_real.delete); }
SHIM_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; do_delete(p, MSC_FN_DELETE_ARRAY, g_real.delete_arr); }
SHIM_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al) { do_delete_al(p, al, MSC_FN_DELETE, g_real.delete_al); }
SHIM_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al) { do_delete_al(p, al, MSC_FN_DELETE_ARRAY, g_real.delete_arr_al); }
SHIM_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; do_delete_al(p, al, MSC_FN_DELETE, g_real.delete_al); }
SHIM_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; do_delete_al(p, al, MSC_FN_DELETE_ARRAY, g_real.delete_arr_al); }
SHIM_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; do_delete_al(p, al, MSC_FN_DELETE, g_real.delete_al); }
SHIM_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; do_delete_al(p, al, MSC_FN_DELETE_ARRAY, g_real.delete_arr_al); }
