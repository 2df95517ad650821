/* SPDX-License-Identifier: MIT */
/*
 * libmemscope.so's hooks: the functions it exports in place of the
 * allocator's (the malloc family, the C++ operators, mmap, munmap, mremap,
 * brk, sbrk, the memscope.h annotations and the exit paths), the event
 * source preloaded into the profiled program.
 *
 * Each hook forwards to the real function and, unless the thread is already
 * inside the shim (the initial-exec TLS guard), appends a fixed-layout binary
 * record to the calling thread's ring in shared memory (msc_proto.h).  The
 * stack is captured (unwind.c) and interned per thread: a stack crosses to
 * the collector once, as a STACK record, and events carry its id.  No JSON,
 * no symbolization, no stdio and no global lock on this path.
 *
 * Safety rules (see DESIGN.md), for every file of the shim: the guard makes
 * every allocation the shim, the unwinder, the loader or a signal handler
 * makes on a thread inside a hook pass straight through; a static bootstrap
 * pool answers allocations made while dlsym runs; a free is recorded before
 * the real free; helper work happens only on the calling thread (there is no
 * helper thread); pthread_atfork keeps children consistent; libunwind is
 * loaded with RTLD_LOCAL; a dead collector stops recording, never the
 * program.
 *
 * Owns the exported hooks but entry.c's (malloc, free, calloc, realloc
 * and C++'s plain new, new[], delete and delete[], whose full hooks are
 * here: malloc_hook, new_hook and the others), the recording of events
 * (record_*), stack interning (stack_id) and the boot pool.  They stay in
 * one file, with the ring operations inlined from shim.h, so that the hot
 * path (hook -> get_tstate -> stack_id -> ring_begin/ring_commit) makes no
 * call the compiler cannot see into but
 * the real function and the unwinder.  The rest of the library: entry.c
 * (those entry points), sample.c (--sample), session.c (the session,
 * fork, init), threads.c (per-thread state), resolve.c (the real
 * functions), modules.c (module maps), unwind.c, attach.c and dlclose.S;
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
		if (g_sample)
			sampled_add((const void *)(uintptr_t)t_hidden[i]);
		emit(t, MSC_EV_HIDDEN, 0, 0, &t_hidden[i], 1);
	}
	hidden_forget();
}

/* The id of a captured stack the trace cache did not name: interned, and
 * sent when new.  Out of stack_id's way, which the cache's hits take. */
static __attribute__((noinline)) uint32_t stack_intern(struct tstate *t, const struct capture *cp)
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
	id = __atomic_add_fetch(&g_ctl->next_stack, 1, __ATOMIC_RELAXED);
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
	void *p = real_malloc(size);

	hidden_note(p);
	return p;
}

void *calloc_hidden(size_t n, size_t size)
{
	void *p = real_calloc(n, size);

	hidden_note(p);
	return p;
}

/* Captures the stack above `frame` and returns its id (0: none).  Inlined
 * into the hooks' recorders: it runs for every allocation. */
static inline __attribute__((always_inline)) uint32_t stack_id(struct tstate *t, void *frame)
{
	struct capture c;

	if (unlikely(t->shared) && t->uw.stack_hi != t_stack_hi) {
		/* Another thread's stack: its bound, and nothing to reuse. */
		t->uw.stack_hi = t_stack_hi;
		unwind_forget(&t->uw);
	}
	unwind_capture(&t->uw, g_unwind, frame, t->ips, (int)g_depth, &c);
	if (c.id)
		return c.id;
	return stack_intern(t, &c);
}

/*
 * The id of the one-frame stack [ip]: the return address of a hook, where
 * the program called it.  Sent once per thread and address, like a stack.
 */
static __attribute__((noinline)) uint32_t caller_new(struct tstate *t, uint64_t ip, unsigned j)
{
	uint64_t *rec;
	uint32_t id;

	modules_check(t);
	id = __atomic_add_fetch(&g_ctl->next_stack, 1, __ATOMIC_RELAXED);
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

static inline __attribute__((always_inline)) uint32_t caller_id(struct tstate *t, uint64_t ip)
{
	unsigned j = (unsigned)((ip >> 3) ^ (ip >> 11)) & (CALLER_SLOTS - 1);

	if (likely(t->callers[j].ip == ip))
		return t->callers[j].id;
	return caller_new(t, ip, j);
}

/* ------------------------------------------------------------ recording */

/*
 * ALLOC; a pool block (memscope.h) has a third value, its pool.  `set`:
 * a block of the malloc family that sample_skip() chose, whose free is
 * recorded only if it is in the set of recorded blocks (sample.h); a full
 * bucket makes it a block that was not chosen after all.  The bucket's
 * line is rarely in any cache (the storm's recorded allocations waited for
 * it most of their time in malloc): it is fetched while the stack is
 * taken, and the block joins the set before its ALLOC is written.
 */
static inline __attribute__((always_inline)) void record_alloc_at(void *frame, const void *p,
								   uint64_t size, unsigned fn,
								   const void *pool, bool set)
{
	const uint64_t v[3] = { (uint64_t)(uintptr_t)p, size, (uint64_t)(uintptr_t)pool };
	struct tstate *t;
	uint32_t id;

	if (set)
		sampled_prefetch(p);
	t = get_tstate();
	if (!t)
		return;
	shared_lock(t);
	id = stack_id(t, frame);
	if (set && !sampled_add(p)) {
		sample_count_alloc(size);
		p = NULL;
	} else if (pool) {
		emit(t, MSC_EV_ALLOC, fn, id, v, 3);
	} else {
		emit_block(t, MSC_EV_ALLOC, fn, id, v, 2);
	}
	if (set && !t->shared) {
		t->pick_ptr = (uint64_t)(uintptr_t)p;	/* 0 when not in the set after all */
		t->pick_left = t_hot.held;
	}
	shared_unlock(t);
}

/* A custom block (memscope.h, --hook), always recorded, is an allocation
 * of its thread's too: the block it recorded last, freed now, was not
 * temporary. */
static inline void forget_pick(void)
{
	struct tstate *t = t_state;

	if (g_sample && t && t != TSTATE_DEAD)
		t->pick_ptr = 0;
}

/* Its cases, each a function of its own: no test of `set` on the way of
 * a full recording, nor of `pool` on the malloc family's.  This one, a
 * custom block's (memscope.h, its pools, --hook), forgets the pick. */
static void record_alloc_in(void *frame, const void *p, uint64_t size, unsigned fn,
			    const void *pool)
{
	forget_pick();
	record_alloc_at(frame, p, size, fn, pool, false);
}

static void record_sampled(void *frame, const void *p, uint64_t size, unsigned fn)
{
	record_alloc_at(frame, p, size, fn, NULL, true);
}

static void record_alloc(void *frame, const void *p, uint64_t size, unsigned fn)
{
	record_alloc_at(frame, p, size, fn, NULL, false);
}

/* ALLOC of a block of the malloc family: into the set when sampling. */
static inline void record_block(void *frame, const void *p, uint64_t size, unsigned fn)
{
	if (g_sample)
		record_sampled(frame, p, size, fn);
	else
		record_alloc(frame, p, size, fn);
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
 * (g_new_std): its blocks are left too.
 */
#define SCRUB_MAX (128u << 10)

static inline void scrub(void *p, uint64_t from, uint64_t size)
{
	uint64_t *w, *end;

	if (!g_scrub || size >= SCRUB_MAX || from >= size)
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

/* A block of malloc, new or the aligned family: emptied, recorded. */
static inline void record_fresh_block(void *frame, void *p, uint64_t size, unsigned fn)
{
	if (g_new_std || (fn != MSC_FN_NEW && fn != MSC_FN_NEW_ARRAY))
		scrub(p, 0, size);
	record_block(frame, p, size, fn);
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

	if (likely(t && t != TSTATE_DEAD) && !t->shared && g_unwind == MSC_UNWIND_DWARF)
		unwind_prepare(&t->uw, frame, (int)g_depth);
}

/* FREE, UNFREE, EXIT (one value), MUNMAP (two): events without a stack. */
static void record_simple(unsigned type, unsigned fn, uint64_t a, uint64_t b, unsigned words)
{
	struct tstate *t = get_tstate();
	const uint64_t v[2] = { a, b };

	if (!t)
		return;
	shared_lock(t);
	emit(t, type, fn, 0, v, words - 2);
	shared_unlock(t);
}

/* A free's whole stack (--free-stacks), out of the frees' way. */
static __attribute__((noinline)) uint32_t free_stack_id(struct tstate *t, void *frame)
{
	return stack_id(t, frame);
}

/*
 * FREE of ptr by fn, with the stack of the call: the collector names the
 * bad call with it when the free is an error (double, invalid, mismatched).
 */
static inline __attribute__((always_inline)) void record_free_at(void *frame, unsigned fn,
								 const void *ptr, const void *pool,
								 bool sampled)
{
	struct tstate *t = get_tstate();
	const uint64_t v[2] = { (uint64_t)(uintptr_t)ptr, (uint64_t)(uintptr_t)pool };
	uint32_t id;

	if (!t)
		return;
	shared_lock(t);
	/* A whole stack costs a frees as much as an allocation's capture
	 * (about 40 ns); the caller, from a table, a few. */
	id = unlikely(g_free_stacks) ? free_stack_id(t, frame) : caller_id(t, ((uint64_t *)frame)[1]);
	if (pool) {
		emit(t, MSC_EV_FREE, fn, id, v, 2);
	} else {
		/* A recorded block its thread frees before it allocated again:
		 * its countdown has not moved since. */
		if (sampled && t->pick_ptr == v[0] && sample_hot() && t_hot.held == t->pick_left) {
			id |= MSC_FREE_TEMPORARY;
			t->pick_ptr = 0;
		}
		emit_block(t, MSC_EV_FREE, fn, id, v, 1);
	}
	shared_unlock(t);
	if (sampled && !t->shared)
		sample_publish_frees(t);
}

/* A pool's free (memscope.h). */
static void record_free_in(void *frame, unsigned fn, const void *ptr, const void *pool)
{
	record_free_at(frame, fn, ptr, pool, false);
}

/* A free of the malloc family's: the pool's case compiled out. */
static void record_free(void *frame, unsigned fn, const void *ptr)
{
	record_free_at(frame, fn, ptr, NULL, false);
}

/* The same, sampling: of a block in the set (sample.h). */
static void record_sampled_free(void *frame, unsigned fn, const void *ptr)
{
	record_free_at(frame, fn, ptr, NULL, true);
}

/*
 * The FREE of a block of the malloc family's, when it is to be recorded:
 * always, or when sampling, if ptr was recorded (then forgotten).  True
 * when recorded; else the caller counts the free once it is done.
 */
static inline bool free_recorded_sampled(void *frame, unsigned fn, const void *ptr)
{
	if (!sampled_del(ptr))
		return false;
	record_sampled_free(frame, fn, ptr);
	return true;
}

static inline bool free_recorded(void *frame, unsigned fn, const void *ptr)
{
	if (likely(!g_sample)) {
		record_free(frame, fn, ptr);
		return true;
	}
	return free_recorded_sampled(frame, fn, ptr);
}

/* free_event's sampling way: out of line, so that a full recording's
 * free hooks, which inline free_event, keep the registers of their own
 * way (free_hook saved two more, 4 instructions a free, with it
 * inlined). */
static __attribute__((noinline)) bool free_event_sampled(void *frame, unsigned fn, const void *ptr)
{
	if (free_recorded_sampled(frame, fn, ptr))
		return true;
	sample_count_free();
	return false;
}

/* A free of the malloc family's: recorded (free_recorded), else counted.
 * True when recorded. */
static inline bool free_event(void *frame, unsigned fn, const void *ptr)
{
	if (likely(!g_sample)) {
		record_free(frame, fn, ptr);
		return true;
	}
	return free_event_sampled(frame, fn, ptr);
}

/* MMAP, MREMAP, BRK: events with a stack and up to four values. */
static void record_region(void *frame, unsigned type, const uint64_t *v, unsigned nv)
{
	struct tstate *t = get_tstate();

	if (!t)
		return;
	shared_lock(t);
	emit(t, type, 0, stack_id(t, frame), v, nv);
	shared_unlock(t);
}

/*
 * The guard is held, but by a hook that is gone (t_guard_sp): the stack
 * pointer of the asking hook's caller (its frame + 16) is above where the
 * holder took the guard, which a hook called from inside the holder
 * (libunwind's malloc, a signal handler's on the same stack) never is.
 */
static inline __attribute__((always_inline)) bool guard_lost(uintptr_t caller_sp)
{
	return unlikely(t_flags & GUARD_MASK) && unlikely(caller_sp > t_guard_sp) &&
	       guard_recover(caller_sp) && !t_flags;
}

#define ACTIVE()                                                                         \
	((likely(!t_flags) || guard_lost((uintptr_t)__builtin_frame_address(0) + 16)) && \
	 likely(g_state == ST_ACTIVE))

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
 * resolve.c sets `resolving` meanwhile.  The hooks are its only users, and
 * inline it.
 */
static char boot_space[2 * BOOT_POOL_SIZE];
uintptr_t boot_key;
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

	__atomic_store_n(&boot_key, (uintptr_t)pool >> BOOT_SHIFT, __ATOMIC_RELAXED);
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

	if (unlikely(!real_malloc)) {
		if (resolving)
			return boot_alloc(size, 16);
		ensure_init();
		if (!real_malloc)
			return boot_alloc(size, 16);
	}
	if (!ACTIVE()) {
		passing_through();
		return real_malloc(size);
	}
	guard_in();
	if (sample_skip(size)) {
		p = real_malloc(size);
		if (p)
			sample_count_alloc(size);
		guard_out();
		return p;
	}
	prepare_alloc(frame);
	p = real_malloc(size);
	if (p)
		record_fresh_block(frame, p, size, MSC_FN_MALLOC);
	guard_out();
	return p;
}

void free_hook(void *ptr)
{
	void *frame = __builtin_frame_address(0);

	if (unlikely(!ptr || is_boot(ptr)))
		return;
	if (unlikely(!real_free)) {
		ensure_init();
		if (!real_free)
			return;
	}
	if (!ACTIVE()) {
		real_free(ptr);
		return;
	}
	guard_in();
	/* Before the real free: afterwards another thread may get ptr back. */
	free_event(frame, MSC_FN_FREE, ptr);
	real_free(ptr);
	guard_out();
}

void *calloc_hook(size_t n, size_t size)
{
	void *frame = __builtin_frame_address(0);
	void *p;

	if (unlikely(!real_calloc)) {
		if (resolving) {
			if (size && n > SIZE_MAX / size)
				return NULL;
			p = boot_alloc(n * size, 16);	/* the pool is zeroed memory */
			return p;
		}
		ensure_init();
		if (!real_calloc)
			return NULL;
	}
	if (!ACTIVE()) {
		if (t_flags && unlikely(from_loader(__builtin_return_address(0))))
			return calloc_hidden(n, size);
		passing_through();
		return real_calloc(n, size);
	}
	guard_in();
	if (sample_skip((uint64_t)n * size)) {
		p = real_calloc(n, size);
		if (p)
			sample_count_alloc((uint64_t)n * size);
		guard_out();
		return p;
	}
	prepare_alloc(frame);
	p = real_calloc(n, size);
	if (p)
		record_block(frame, p, (uint64_t)n * size, MSC_FN_CALLOC);
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
		return real_realloc(ptr, size);
	guard_in();
	/* --sample: the old block's free is recorded if the block was, and
	 * counted otherwise once the realloc did free it; the new block is
	 * a new choice. */
	old_recorded = ptr && free_recorded(frame, fn, ptr);
	skip = sample_skip(size);
	/* What the program had of the old block is copied or kept; past it,
	 * what an earlier block left (scrub). */
	if (!ptr || skip || !g_scrub)
		old_size = 0;
	else if (real_malloc_usable_size)
		old_size = real_malloc_usable_size(ptr);
	else
		old_size = size;	/* not known: nothing emptied */
	if (!skip)
		prepare_alloc(frame);
	p = real_realloc(ptr, size);
	if (p && skip) {
		sample_count_alloc(size);
	} else if (p) {
		scrub(p, old_size, size);
		record_block(frame, p, size, fn);
	}
	if (ptr && !old_recorded && (p || !size))
		sample_count_free();
	else if (!p && ptr && size && old_recorded) {
		record_simple(MSC_EV_UNFREE, fn, (uint64_t)(uintptr_t)ptr, 0, 3);
		if (g_sample)
			sampled_add(ptr);
	}
	guard_out();
	return p;
}

void *realloc_hook(void *ptr, size_t size)
{
	void *p;

	if (unlikely(!real_realloc)) {
		if (resolving) {
			p = boot_alloc(size, 16);

			if (p && ptr)
				memcpy(p, ptr, boot_size(ptr) < size ? boot_size(ptr) : size);
			return p;
		}
		ensure_init();
		if (!real_realloc)
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
	if (unlikely(!real_realloc)) {
		ensure_init();
		if (!real_realloc)
			return NULL;
	}
	return do_realloc(__builtin_frame_address(0), ptr, n * size, MSC_FN_REALLOCARRAY);
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	bool skip;
	int ret;

	ensure_init();
	if (unlikely(!real_posix_memalign)) {
		void *p = boot_alloc(size, align);

		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (!ACTIVE() || new_retry_is(__builtin_return_address(0))) {
		bool in_new = passing_through();

		ret = real_posix_memalign(out, align, size);
		new_retry_arm(in_new, ret != 0, __builtin_return_address(0));
		return ret;
	}
	guard_in();
	skip = sample_skip(size);
	ret = real_posix_memalign(out, align, size);
	if (ret == 0 && skip)
		sample_count_alloc(size);
	else if (ret == 0)
		record_fresh_block(__builtin_frame_address(0), *out, size, MSC_FN_POSIX_MEMALIGN);
	guard_out();
	return ret;
}

#define ALIGNED_HOOK(name, fn, params, args, realcall, sizeexpr)                              \
	SHIM_EXPORT void *name params                                                         \
	{                                                                                     \
		bool skip;                                                                    \
		void *p;                                                                      \
		ensure_init();                                                                \
		if (unlikely(!real_##name))                                                   \
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
		else if (p)                                                                   \
			record_fresh_block(__builtin_frame_address(0), p, sizeexpr, fn);      \
		guard_out();                                                                    \
		return p;                                                                     \
	}

ALIGNED_HOOK(aligned_alloc, MSC_FN_ALIGNED_ALLOC, (size_t align, size_t size), (align, size),
	     real_aligned_alloc(align, size), size)
ALIGNED_HOOK(memalign, MSC_FN_MEMALIGN, (size_t align, size_t size), (align, size),
	     real_memalign(align, size), size)
ALIGNED_HOOK(valloc, MSC_FN_VALLOC, (size_t size), (size), real_valloc(size), size)
ALIGNED_HOOK(pvalloc, MSC_FN_PVALLOC, (size_t size), (size), real_pvalloc(size), size)

/* ------------------------------------------------------ C++ operators */

static inline void cxx_ready(void)
{
	ensure_init();
	if (unlikely(!__atomic_load_n(&cxx_resolved, __ATOMIC_ACQUIRE)))
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
			else                                                            \
				record_fresh_block(__builtin_frame_address(0), p, size, fn); \
			guard_out();                                                      \
		}                                                                       \
		return p;                                                               \
	}

#define NEW_HOOK(vis, sym, realfn, fn, params, callargs) \
	NEW_HOOK_CALLING(vis, sym, realfn, fn, params, callargs, IN_NEW_CALL(realfn callargs))

NEW_HOOK_CALLING(, new_hook, real_new, MSC_FN_NEW, (size_t size), (size),
		 entry_new_call(size, false))
NEW_HOOK_CALLING(, new_arr_hook, real_new_arr, MSC_FN_NEW_ARRAY, (size_t size), (size),
		 entry_new_call(size, true))
NEW_HOOK(SHIM_EXPORT, _ZnwmRKSt9nothrow_t, real_new_nt, MSC_FN_NEW, (size_t size, const void *nt),
	 (size, nt))
NEW_HOOK(SHIM_EXPORT, _ZnamRKSt9nothrow_t, real_new_arr_nt, MSC_FN_NEW_ARRAY,
	 (size_t size, const void *nt), (size, nt))
NEW_HOOK(SHIM_EXPORT, _ZnwmSt11align_val_t, real_new_al, MSC_FN_NEW, (size_t size, size_t al),
	 (size, al))
NEW_HOOK(SHIM_EXPORT, _ZnamSt11align_val_t, real_new_arr_al, MSC_FN_NEW_ARRAY,
	 (size_t size, size_t al), (size, al))
NEW_HOOK(SHIM_EXPORT, _ZnwmSt11align_val_tRKSt9nothrow_t, real_new_al_nt, MSC_FN_NEW,
	 (size_t size, size_t al, const void *nt), (size, al, nt))
NEW_HOOK(SHIM_EXPORT, _ZnamSt11align_val_tRKSt9nothrow_t, real_new_arr_al_nt, MSC_FN_NEW_ARRAY,
	 (size_t size, size_t al, const void *nt), (size, al, nt))

/* Deletes never throw: the guard may be held across the real one. */
static inline __attribute__((always_inline)) void do_delete(void *ptr, unsigned fn,
								void (*realfn)(void *))
{
	if (!ptr)
		return;
	cxx_ready();
	if (unlikely(!realfn))
		realfn = real_delete ? real_delete : free;
	if (!ACTIVE()) {
		realfn(ptr);
		return;
	}
	guard_in();
	free_event(__builtin_frame_address(0), fn, ptr);
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
	free_event(__builtin_frame_address(0), fn, ptr);
	realfn(ptr, al);
	guard_out();
}

/* The full hooks of entry.c's delete and delete[], unsized and sized. */
void delete_hook(void *p) { do_delete(p, MSC_FN_DELETE, real_delete); }
void delete_arr_hook(void *p) { do_delete(p, MSC_FN_DELETE_ARRAY, real_delete_arr); }
SHIM_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; do_delete(p, MSC_FN_DELETE, real_delete); }
SHIM_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; do_delete(p, MSC_FN_DELETE_ARRAY, real_delete_arr); }
SHIM_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al) { do_delete_al(p, al, MSC_FN_DELETE, real_delete_al); }
SHIM_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al) { do_delete_al(p, al, MSC_FN_DELETE_ARRAY, real_delete_arr_al); }
SHIM_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; do_delete_al(p, al, MSC_FN_DELETE, real_delete_al); }
SHIM_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; do_delete_al(p, al, MSC_FN_DELETE_ARRAY, real_delete_arr_al); }
SHIM_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; do_delete_al(p, al, MSC_FN_DELETE, real_delete_al); }
SHIM_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; do_delete_al(p, al, MSC_FN_DELETE_ARRAY, real_delete_arr_al); }

/* ---------------------------------------------------- mappings and brk */

SHIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	ensure_init();
	if (unlikely(!real_mmap))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (!ACTIVE() || !(flags & MAP_ANONYMOUS) || (flags & MAP_SHARED))
		return real_mmap(addr, len, prot, flags, fd, off);
	guard_in();
	p = real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)p, len };

		record_region(__builtin_frame_address(0), MSC_EV_MMAP, v, 2);
	}
	guard_out();
	return p;
}

SHIM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

SHIM_EXPORT int munmap(void *addr, size_t len)
{
	int ret;

	ensure_init();
	if (unlikely(!real_munmap))
		return (int)syscall(SYS_munmap, addr, len);
	if (!ACTIVE())
		return real_munmap(addr, len);
	guard_in();
	/* Like free: before the range can be handed out again. */
	record_simple(MSC_EV_MUNMAP, MSC_FN_NONE, (uint64_t)(uintptr_t)addr, len, 4);
	ret = real_munmap(addr, len);
	guard_out();
	return ret;
}

SHIM_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *p, *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	ensure_init();
	if (unlikely(!real_mremap))
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	if (!ACTIVE())
		return real_mremap(old, old_len, new_len, flags, new_addr);
	guard_in();
	p = real_mremap(old, old_len, new_len, flags, new_addr);
	if (p != MAP_FAILED) {
		uint64_t v[4] = { (uint64_t)(uintptr_t)old, old_len, (uint64_t)(uintptr_t)p, new_len };

		record_region(__builtin_frame_address(0), MSC_EV_MREMAP, v, 4);
	}
	guard_out();
	return p;
}

SHIM_EXPORT int brk(void *end)
{
	void *old;
	int ret;

	ensure_init();
	if (!real_brk || !real_sbrk)
		return (int)syscall(SYS_brk, end) == (long)end ? 0 : -1;
	if (!ACTIVE())
		return real_brk(end);
	guard_in();
	old = real_sbrk(0);
	ret = real_brk(end);
	if (ret == 0) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)old, (uint64_t)(uintptr_t)end };

		record_region(__builtin_frame_address(0), MSC_EV_BRK, v, 2);
	}
	guard_out();
	return ret;
}

SHIM_EXPORT void *sbrk(intptr_t inc)
{
	void *old;

	ensure_init();
	if (!real_sbrk)
		return (void *)-1;
	if (!ACTIVE() || inc == 0)
		return real_sbrk(inc);
	guard_in();
	old = real_sbrk(inc);
	if (old != (void *)-1) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)old, (uint64_t)(uintptr_t)old + (uint64_t)inc };

		record_region(__builtin_frame_address(0), MSC_EV_BRK, v, 2);
	}
	guard_out();
	return old;
}

/* ------------------------------------------- memscope.h annotations */

SHIM_EXPORT void memscope_alloc(const void *ptr, size_t size);
SHIM_EXPORT void memscope_free(const void *ptr);
SHIM_EXPORT void memscope_realloc(const void *old, const void *ptr, size_t size);
SHIM_EXPORT void memscope_pool_create(const void *pool, const char *name);
SHIM_EXPORT void memscope_pool_alloc(const void *pool, const void *ptr, size_t size);
SHIM_EXPORT void memscope_pool_free(const void *pool, const void *ptr);
SHIM_EXPORT void memscope_pool_destroy(const void *pool);

SHIM_EXPORT void memscope_alloc(const void *ptr, size_t size)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	guard_in();
	record_alloc_in(__builtin_frame_address(0), ptr, size, MSC_FN_CUSTOM, NULL);
	guard_out();
}

SHIM_EXPORT void memscope_free(const void *ptr)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	guard_in();
	record_free(__builtin_frame_address(0), MSC_FN_CUSTOM, ptr);
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
		record_free(frame, MSC_FN_CUSTOM, old);
	if (ptr)
		record_alloc_in(frame, ptr, size, MSC_FN_CUSTOM, NULL);
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
	record_alloc_in(__builtin_frame_address(0), ptr, size, MSC_FN_CUSTOM, pool);
	guard_out();
}

SHIM_EXPORT void memscope_pool_free(const void *pool, const void *ptr)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	guard_in();
	record_free_in(__builtin_frame_address(0), MSC_FN_CUSTOM, ptr, pool);
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

struct msc_hookspec g_hooks[MSC_HOOK_MAX];
uint64_t g_hook_real[MSC_HOOK_MAX];
unsigned g_nhooks;

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
	const struct msc_hookspec *h = &g_hooks[k];
	hooked_fn real = (hooked_fn)(uintptr_t)g_hook_real[k];
	uint64_t r, old;

	if (!ACTIVE())
		return real(a[0], a[1], a[2], a[3], a[4], a[5]);
	switch (h->kind) {
	case MSC_HOOK_ALLOC:
		r = real(a[0], a[1], a[2], a[3], a[4], a[5]);
		if (r && ACTIVE()) {
			guard_in();
			record_alloc_in(frame, (const void *)(uintptr_t)r, a[h->size_arg - 1],
					MSC_FN_CUSTOM, NULL);
			guard_out();
		}
		return r;
	case MSC_HOOK_FREE:
		/* Before the real call, as for free: the block may be handed
		 * out again before it returns. */
		if (a[h->ptr_arg - 1]) {
			guard_in();
			record_free(frame, MSC_FN_CUSTOM, (const void *)(uintptr_t)a[h->ptr_arg - 1]);
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
			record_free(frame, MSC_FN_CUSTOM, (const void *)(uintptr_t)old);
		if (r)
			record_alloc_in(frame, (const void *)(uintptr_t)r, a[h->size_arg - 1],
					MSC_FN_CUSTOM, NULL);
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

uint64_t g_afn_real[MSC_NALLOCFNS];

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
	record_block(frame, (const void *)(uintptr_t)p, size, fn);
}

/* The free of p; true when it was recorded (p was, or no sampling). */
static bool afn_free(void *frame, unsigned fn, uint64_t p)
{
	return free_event(frame, fn, (const void *)(uintptr_t)p);
}

/* A resize failed after old's free was recorded: it lives on, recorded. */
static void afn_unfree(unsigned fn, uint64_t old)
{
	if (g_sample)
		sampled_add((const void *)(uintptr_t)old);
	record_simple(MSC_EV_UNFREE, fn, old, 0, 3);
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

	if (!dladdr((void *)(uintptr_t)g_afn_real[k], &info) || !info.dli_fname)
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
	hooked_fn real = (hooked_fn)(uintptr_t)g_afn_real[k];
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
				afn_unfree(fn, old);
		} else if (r) {
			afn_alloc(frame, r, size, fn);
		} else if (old && size && f->kind == MSC_AFN_REALLOC) {
			/* Failed, and the block is still the caller's (not
			 * reallocf's, which frees it, nor a resize to 0). */
			afn_unfree(fn, old);
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

/* ---------------------------------------------------------- exit paths */

static void record_exit(int status)
{
	if (!ACTIVE() || getpid() != g_pid)
		return;
	guard_in();
	record_simple(MSC_EV_EXIT, 0, (uint64_t)(unsigned)status, 0, 3);
	guard_out();
}

SHIM_EXPORT void exit(int status)
{
	ensure_init();
	record_exit(status);
	if (real_exit)
		real_exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SHIM_EXPORT void _exit(int status)
{
	ensure_init();
	record_exit(status);
	request_scan();
	if (real__exit)
		real__exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SHIM_EXPORT void _Exit(int status)
{
	ensure_init();
	record_exit(status);
	request_scan();
	if (real__Exit)
		real__Exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* ---------------------------------------------------------------- exec */

/*
 * An exec ends the image without its exit: with --sample, what this
 * thread's fast path counted since it last published (up to a draw's
 * bytes of allocations, 4096 frees) goes to its ring's header first, for
 * the collector's end of the image (where it was lost: a program that
 * allocated 100,000 blocks and exec'd ended with 96,448 counted at 512K,
 * 12 at 1T).  Not in a vfork child (another pid, the parent's TLS and
 * ring: the parent's counts stay its own), and not the other threads'
 * (the exec ends them; read from here, they would be counted twice
 * should it fail, and they run on).  A failed exec goes on as before.
 */
static void before_exec(void)
{
	struct tstate *t;

	if (!g_sample || !ACTIVE() || getpid() != g_pid)
		return;
	guard_in();
	t = t_state;
	if (t && t != TSTATE_DEAD && sample_hot())
		sample_publish(t);
	guard_out();
}

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	if (!real_execve)
		return (int)syscall(SYS_execve, path, argv, envp);
	return real_execve(path, argv, envp);
}

SHIM_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			 int flags)
{
	before_exec();
	if (!real_execveat)
		return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
	return real_execveat(dirfd, path, argv, envp, flags);
}

/* glibc's execv, execvp, execvpe, fexecve and execl* call its execve by
 * its hidden name, never ours: each is the real one, after before_exec. */
#define EXEC_PASS(real, ...)                                                    \
	do {                                                                    \
		before_exec();                                                  \
		if (!(real)) {                                                  \
			errno = ENOSYS;                                         \
			return -1;                                              \
		}                                                               \
		return (real)(__VA_ARGS__);                                     \
	} while (0)

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
	EXEC_PASS(real_execv, path, argv);
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
	EXEC_PASS(real_execvp, file, argv);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_PASS(real_execvpe, file, argv, envp);
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	EXEC_PASS(real_fexecve, fd, argv, envp);
}

/* execl, execle, execlp: their arguments into an array on the stack (as
 * glibc's own do), then execv's, execve's, execvp's way. */
enum exec_list_how { EXEC_L, EXEC_LE, EXEC_LP };

static int exec_list(enum exec_list_how how, const char *path, const char *arg, va_list ap)
{
	va_list count;
	size_t n = 1, i = 0;

	va_copy(count, ap);
	if (arg)
		while (va_arg(count, const char *))
			n++;
	va_end(count);
	{
		char *argv[n + 1];

		argv[i] = (char *)arg;
		while (argv[i])
			argv[++i] = va_arg(ap, char *);
		if (how == EXEC_LE)
			EXEC_PASS(real_execve, path, argv, va_arg(ap, char *const *));
		if (how == EXEC_LP)
			EXEC_PASS(real_execvp, path, argv);
		EXEC_PASS(real_execv, path, argv);
	}
}

/* The exported variadic ones, each exec_list's way. */
#define EXEC_LIST_FN(name, how)                                                 \
	SHIM_EXPORT int name(const char *path, const char *arg, ...)            \
	{                                                                       \
		va_list ap;                                                     \
		int ret;                                                        \
		va_start(ap, arg);                                              \
		ret = exec_list(how, path, arg, ap);                            \
		va_end(ap);                                                     \
		return ret;                                                     \
	}

EXEC_LIST_FN(execl, EXEC_L)
EXEC_LIST_FN(execlp, EXEC_LP)
EXEC_LIST_FN(execle, EXEC_LE)
