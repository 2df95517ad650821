/* SPDX-License-Identifier: MIT */
/*
 * record: the event path, one function per event kind, for every hook
 * file (hooks.c, custom.c, maps.c, exits.c).
 *
 *	record_alloc	ALLOC: a block handed out
 *	record_free	FREE: a block given back (before the real free)
 *	record_unfree	UNFREE: a realloc that failed after its old block's
 *			free was recorded
 *	record_stackless EXIT, MUNMAP: events without a stack
 *
 * (POOL is custom.c's record_pool, MMAP, MREMAP and BRK maps.c's
 * record_region.)  record_alloc and record_free are written once and
 * always inlined: their last argument, `how` (REC_* below), is a constant
 * at every call, so each hook compiles to a path of its own, with no test
 * of a pool on the malloc family's way nor of sampling on a custom
 * block's.  What a session that samples does with the malloc family's
 * blocks is out of line (record_alloc_sampling, record_free_sampling,
 * hooks.c), so that a full recording's hooks keep the registers of their
 * own way.  Every call is made with the guard held (guard_in).
 */
#ifndef SHIM_RECORD_H
#define SHIM_RECORD_H

#include "sample.h"
#include "shim.h"

/*
 * How a block is recorded, a constant at each call.  REC_MALLOC: a block
 * of the malloc family (malloc, new, the aligned family, the built-in
 * allocators'), which a session that samples records only if chosen
 * (record_alloc) or in the set of recorded blocks (record_free).
 */
enum {
	REC_MALLOC = 0,
	/* A custom block (memscope.h's annotations, their pools, --hook):
	 * always recorded, with its pool (NULL: none). */
	REC_CUSTOM = 1u << 0,
	/* record_free: a free that sampling does not record is counted
	 * there and then.  Without it the caller counts it, once it knows
	 * the block is gone (a realloc may fail and keep it). */
	REC_COUNT = 1u << 1,
	/* The session samples: the malloc family's out-of-line way
	 * (record_alloc_sampling, record_free_sampling), never a caller's. */
	REC_SAMPLING = 1u << 2,
};

/* ------------------------------------------------------- hooks.c's part */

/* The id of a captured stack the trace cache did not name (stack_id). */
uint32_t stack_intern(struct tstate *t, const struct capture *cp);
/* A free's whole stack (--free-stacks), out of the frees' way. */
uint32_t free_stack_id(struct tstate *t, void *frame);
/* caller_id's new address: its one-frame stack sent, and remembered in
 * slot j. */
uint32_t caller_new(struct tstate *t, uint64_t ip, unsigned j);
/* record_alloc's and record_free's ways for a session that samples. */
void record_alloc_sampling(void *frame, const void *p, uint64_t size, unsigned fn);
bool record_free_sampling(void *frame, unsigned fn, const void *ptr, bool count);
/* An event without a stack of type with one value (words 3: UNFREE,
 * EXIT) or two (words 4: MUNMAP). */
void record_stackless(unsigned type, unsigned fn, uint64_t a, uint64_t b, unsigned words);

/* --------------------------------------------------------------- guard */

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

/* -------------------------------------------------------------- stacks */

/* Captures the stack above `frame` and returns its id (0: none).  Inlined
 * into the recorders: it runs for every allocation. */
static inline __attribute__((always_inline)) uint32_t stack_id(struct tstate *t, void *frame)
{
	struct capture c;

	if (unlikely(t->shared) && t->uw.stack_hi != t_stack_hi) {
		/* Another thread's stack: its bound, and nothing to reuse. */
		t->uw.stack_hi = t_stack_hi;
		unwind_forget(&t->uw);
	}
	unwind_capture(&t->uw, g_conf.unwind, frame, t->ips, (int)g_conf.depth, &c);
	if (c.id)
		return c.id;
	return stack_intern(t, &c);
}

/* The id of the one-frame stack [ip], the return address of a free's
 * hook: sent once per thread and address, like a stack. */
static inline __attribute__((always_inline)) uint32_t caller_id(struct tstate *t, uint64_t ip)
{
	unsigned j = (unsigned)((ip >> 3) ^ (ip >> 11)) & (CALLER_SLOTS - 1);

	if (likely(t->callers[j].ip == ip))
		return t->callers[j].id;
	return caller_new(t, ip, j);
}

/* ------------------------------------------------------------- ALLOC */

/*
 * ALLOC of p, size bytes, by fn, with the stack above frame.  A pool's
 * block (REC_CUSTOM, pool not NULL) has a third value, its pool.
 *
 * A custom block, always recorded, is an allocation of its thread's too:
 * the block it recorded last, freed now, was not temporary (pick_ptr).
 *
 * Sampling (REC_SAMPLING), the block is one sample_skip() chose, whose
 * free is recorded only if it is in the set of recorded blocks
 * (sample.h); a full bucket makes it a block that was not chosen after
 * all.  The bucket's line is rarely in any cache (the storm's recorded
 * allocations waited for it most of their time in malloc): it is fetched
 * while the stack is taken, and the block joins the set before its ALLOC
 * is written.
 */
static inline __attribute__((always_inline)) void record_alloc(void *frame, const void *p,
							       uint64_t size, unsigned fn,
							       const void *pool, unsigned how)
{
	const bool set = how & REC_SAMPLING;
	const uint64_t v[3] = { (uint64_t)(uintptr_t)p, size, (uint64_t)(uintptr_t)pool };
	struct tstate *t;
	uint32_t id;

	if (!(how & (REC_CUSTOM | REC_SAMPLING)) && g_conf.sample) {
		record_alloc_sampling(frame, p, size, fn);
		return;
	}
	if (how & REC_CUSTOM) {
		t = t_state;
		if (g_conf.sample && t && t != TSTATE_DEAD)
			t->pick_ptr = 0;
	}
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
	} else if ((how & REC_CUSTOM) && pool) {
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

/* -------------------------------------------------------------- FREE */

/*
 * FREE of ptr by fn, called before the real free (afterwards another
 * thread may get ptr back), with the stack of the call: the collector
 * names the bad call with it when the free is an error (double, invalid,
 * mismatched).  A pool's block (REC_CUSTOM, pool not NULL) has its pool.
 * True when recorded: always, but for a block of the malloc family that
 * a session that samples did not record (then counted with REC_COUNT,
 * else by the caller once the block is gone).
 */
static inline __attribute__((always_inline)) bool record_free(void *frame, unsigned fn,
							      const void *ptr, const void *pool,
							      unsigned how)
{
	const bool sampling = how & REC_SAMPLING;
	const uint64_t v[2] = { (uint64_t)(uintptr_t)ptr, (uint64_t)(uintptr_t)pool };
	struct tstate *t;
	uint32_t id;

	if (!(how & (REC_CUSTOM | REC_SAMPLING)) && unlikely(g_conf.sample))
		return record_free_sampling(frame, fn, ptr, how & REC_COUNT);
	if (sampling && !sampled_del(ptr))
		return false;	/* counted by record_free_sampling, or the caller */
	t = get_tstate();
	if (!t)
		return true;
	shared_lock(t);
	/* A whole stack costs a free as much as an allocation's capture
	 * (about 40 ns); the caller, from a table, a few. */
	id = unlikely(g_conf.free_stacks) ? free_stack_id(t, frame)
					  : caller_id(t, ((uint64_t *)frame)[1]);
	if ((how & REC_CUSTOM) && pool) {
		emit(t, MSC_EV_FREE, fn, id, v, 2);
	} else {
		/* A recorded block its thread frees before it allocated again:
		 * its countdown has not moved since. */
		if (sampling && t->pick_ptr == v[0] && sample_hot() && t_hot.held == t->pick_left) {
			id |= MSC_FREE_TEMPORARY;
			t->pick_ptr = 0;
		}
		emit_block(t, MSC_EV_FREE, fn, id, v, 1);
	}
	shared_unlock(t);
	if (sampling && !t->shared)
		sample_publish_frees(t);
	return true;
}

/* ------------------------------------------------------------ UNFREE */

/* UNFREE of ptr: a resize by fn failed after ptr's free was recorded, and
 * the block lives on, recorded (back in the set when sampling). */
static inline void record_unfree(unsigned fn, const void *ptr)
{
	if (g_conf.sample)
		sampled_add(ptr);
	record_stackless(MSC_EV_UNFREE, fn, (uint64_t)(uintptr_t)ptr, 0, 3);
}

#endif
