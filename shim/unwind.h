/* SPDX-License-Identifier: MIT */
/*
 * unwind: stack capture inside the allocation hooks (x86_64), see unwind.c.
 *
 * It owns struct unwind_state, one per recording state (per thread, and the
 * shared ring's): the rule cache, the last two traces and the trace cache.
 * The shim embeds it in its per-thread state (which it maps, never mallocs)
 * and changes it only through the functions below.  Globally it owns the
 * module epoch (bumped by the dlclose hook: rules from before are stale)
 * and the bounds of the shim's own text.  Nothing here allocates; the only
 * dlopen is unwind_load_libunwind's, from the shim's constructor.
 */
#ifndef SHIM_UNWIND_H
#define SHIM_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_proto.h"

/* Everything here is the library's own (no dynamic symbol, direct access). */
#pragma GCC visibility push(hidden)

#define RULE_WAYS 4			/* a set is one cache line */
#define RULE_SETS 512			/* per thread: 2048 rules, 32 KiB */
#define TRACE_MAX MSC_PROTO_MAX_DEPTH

struct rule_slot {
	uint64_t ip;
	uint64_t rule;
};

/*
 * One frame of the last DWARF unwind on this thread: its state on entry, how
 * the next state was read from the stack, and the intern hash of the stack
 * from this frame outwards.  The entry after the last walked frame holds the
 * state that frame led to, so that entry k+1 says which words frame k read:
 * the return address at trace[k+1].rsp - 8 (== trace[k+1].ip) and, if rbp
 * was saved, rbp at trace[k+1].rsp + rbp_off (== trace[k+1].rbp).
 */
#define TF_WALKED 1		/* frame read its return address (and maybe rbp) */
#define TF_USES_RBP 2		/* its CFA is rbp-based */
#define TF_RBP_SAVED 4		/* its caller's rbp was read from the stack */
#define TF_RBP_NEEDED 8		/* the register value of rbp matters from here on */

struct trace_frame {
	uint64_t ip, rsp, rbp;
	uint64_t h1, h2;		/* hash of frames [this, outermost] */
	int16_t rbp_off;
	uint8_t flags;
};

/*
 * The trace cache (see unwind.c): recent traces of this thread with their
 * stack ids, found by hashing the stack words they read, which sit at the
 * same positions for traces that start at the same (ip, rsp) and have the
 * same frame layout.
 */
#define TC_WORDS 64			/* words read by a trace it can hold */
#define TC_LAYOUTS 256			/* sets of TC_LAYOUT_WAYS */
#define TC_LAYOUT_WAYS 4
#define TC_SETS 2048			/* of two traces, most recent first */

struct tc_layout {
	uint64_t ip, rsp;		/* where its traces start */
	uint32_t gen;			/* == unwind_state.tc_gen, else empty */
	uint16_t nword;
	uint16_t pad;
	uint32_t off[TC_WORDS];		/* positions of the words, above rsp */
};

struct tc_trace {
	uint64_t key, check;		/* two hashes of the start and the words */
	uint32_t id;			/* its stack id */
	uint32_t gen;
	int16_t n, max;			/* frames, and the depth limit then */
	bool rbp_needed;		/* check covers rbp at the start */
} __attribute__((aligned(32)));	/* a set of two is one cache line */

struct unwind_state {
	uint64_t stack_hi;		/* highest address of this thread's stack */
	uint32_t epoch;			/* module epoch the rule cache belongs to */
	int prev_n;			/* frames in prev (-1: none usable) */
	bool prev_complete;		/* prev reached the outermost frame */
	struct trace_frame *prev;	/* = trace[which], the last trace */
	unsigned which;
	/* The trace cache.  After a hit, prev is an older trace: the frames
	 * of this one are walked only if asked for. */
	uint32_t tc_gen;		/* bumped to empty it */
	bool tc_hit;			/* the last capture came from it */
	bool tc_fileable;		/* the last capture was walked: file it */
	/* Where the last capture started (rbp: when it was taken), or where
	 * the one unwind_prepare() looked up for will start. */
	int start_max;
	uint64_t start_ip, start_rsp, start_rbp;
	struct trace_frame trace[2][TRACE_MAX + 1];
	struct rule_slot rules[RULE_SETS][RULE_WAYS] __attribute__((aligned(64)));
	/* The hashes unwind_prepare() found for the coming capture. */
	bool pre_valid;
	uint64_t pre_key, pre_check;
	struct tc_layout tc_layouts[TC_LAYOUTS][TC_LAYOUT_WAYS];
	struct tc_trace tc_traces[TC_SETS][2] __attribute__((aligned(64)));
	/* The intern hash of each cached trace, for MEMSCOPE_UNWIND_CHECK
	 * only (a capture from the cache gives the stack id). */
	uint64_t tc_check_hash[TC_SETS][2][2];
};

/* The result of a capture: the frame count and the stack's intern hash. */
struct capture {
	int n;
	uint64_t h1, h2;
	uint32_t id;			/* from the trace cache: its stack id, or 0 */
	bool have_ips;			/* ips[] was filled; else unwind_fill_ips */
};

/* The intern hash of a stack, folded from the outermost frame inwards. */
static inline void stack_hash_step(uint64_t *h1, uint64_t *h2, uint64_t ip)
{
	*h1 = (*h1 ^ ip) * 0xff51afd7ed558ccdull;
	*h1 ^= *h1 >> 32;
	*h2 = (*h2 + ip) * 0xc4ceb9fe1a85ec53ull;
	*h2 ^= *h2 >> 29;
}
#define STACK_HASH_SEED1 0x9e3779b97f4a7c15ull
#define STACK_HASH_SEED2 0xc2b2ae3d27d4eb4full

/* At each session start, before recording: finds _dl_find_object, the
 * shim's own text and the loader's (into *rtld_lo and *rtld_len, left as
 * they are if it is not found), and reads MEMSCOPE_UNWIND_CHECK. */
void unwind_global_init(uintptr_t *rtld_lo, uintptr_t *rtld_len);
/* Loads libunwind.so.8 privately (RTLD_LOCAL) for the frames the rules cannot
 * describe.  From the constructor only: dlopen takes the loader's lock. */
void unwind_load_libunwind(void);
/* Captures per thread and mismatches found by MEMSCOPE_UNWIND_CHECK=1. */
void unwind_report(void);
/* Readies a zeroed (or reset) state for its first capture. */
void unwind_thread_init(struct unwind_state *us);
/*
 * Clears everything but the trace cache, for a state that is set up again
 * (the shared ring's, at each session start; unwind_thread_init follows).
 * The trace cache's entries are dead by their generation, and its pages,
 * most of the state, stay untouched: out of the program's rss until used.
 */
void unwind_reset(struct unwind_state *us);
/* The stack or the loaded code changed: nothing cached may be reused. */
void unwind_forget(struct unwind_state *us);
/* Starts the trace cache lookup of a capture to come from `frame`, so that
 * the allocator's own work hides the wait for the cache line. */
void unwind_prepare(struct unwind_state *us, void *frame, int max);
/* The stack id of the last capture, for the trace cache to keep. */
void unwind_file(struct unwind_state *us, uint32_t id);
/*
 * Captures the stack of the code that called the hook whose frame pointer is
 * `frame` (the hooks are built with frame pointers).  ips[0] is the return
 * address into the hook's caller.  Sets c->n (0..max) and c->h1/h2; ips[]
 * is filled only when c->have_ips, else unwind_fill_ips() fills it (the
 * interning path needs it only for a stack it has not seen).
 */
void unwind_capture(struct unwind_state *us, unsigned mode, void *frame, uint64_t *ips, int max,
		    struct capture *c);
void unwind_fill_ips(struct unwind_state *us, uint64_t *ips);

/* Bumped by our dlclose: rule caches from before are stale. */
extern volatile uint32_t shim_module_epoch;

/* The shim's own text, to strip its frames from libunwind's stacks. */
extern uint64_t shim_text_lo, shim_text_hi;

#pragma GCC visibility pop

#endif
