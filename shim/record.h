/* SPDX-License-Identifier: MIT */
/*
 * record: the event path of hooks.c for the other hook files (maps.c,
 * custom.c, exits.c).  hooks.c holds the malloc family's and C++'s hooks
 * with every recorder they inline; these are the recorders' out-of-line
 * entries and the inlines a hook needs.
 */
#ifndef SHIM_RECORD_H
#define SHIM_RECORD_H

#include "sample.h"
#include "shim.h"

/* ------------------------------------------------ hooks.c's recorders */

/* The id of a captured stack the trace cache did not name (stack_id). */
uint32_t stack_intern(struct tstate *t, const struct capture *cp);
/* ALLOC of a custom block (memscope.h, its pools, --hook): always
 * recorded; pool NULL for none. */
void record_alloc_in(void *frame, const void *p, uint64_t size, unsigned fn, const void *pool);
/* ALLOC of a block of the malloc family, sampling (into the set) or not. */
void record_sampled(void *frame, const void *p, uint64_t size, unsigned fn);
void record_alloc(void *frame, const void *p, uint64_t size, unsigned fn);
/* FREE, UNFREE, EXIT (one value), MUNMAP (two): events without a stack. */
void record_simple(unsigned type, unsigned fn, uint64_t a, uint64_t b, unsigned words);
/* FREE of a pool's block (memscope.h), and of the malloc family's. */
void record_free_in(void *frame, unsigned fn, const void *ptr, const void *pool);
void record_free(void *frame, unsigned fn, const void *ptr);
/* free_event()'s sampling way. */
bool free_event_sampled(void *frame, unsigned fn, const void *ptr);

/* --------------------------------------------------------- the inlines */

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

/* ALLOC of a block of the malloc family: into the set when sampling. */
static inline void record_block(void *frame, const void *p, uint64_t size, unsigned fn)
{
	if (g_sample)
		record_sampled(frame, p, size, fn);
	else
		record_alloc(frame, p, size, fn);
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

#endif
