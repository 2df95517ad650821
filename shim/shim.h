/* SPDX-License-Identifier: MIT */
/*
 * Internal declarations of libmemscope.so, the code that runs inside the
 * profiled program.  Nothing here may allocate through malloc: per-thread
 * state lives in mmap'ed memory, and everything that could reach malloc runs
 * with the thread's recursion guard set.
 */
#ifndef SHIM_H
#define SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_proto.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define TLS_IE __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------- unwinding */

#define RULE_CACHE_SIZE 2048		/* per thread, direct mapped */
#define TRACE_MAX MSC_PROTO_MAX_DEPTH

struct rule_slot {
	uint64_t ip;
	uint64_t rule;
};

/* What the last DWARF unwind on this thread read, to validate a reuse. */
struct trace_frame {
	uint64_t ip, rsp, rbp;		/* state on entry to this frame */
	uint64_t ra_addr, ra_val;	/* the return address word read */
	uint64_t rbp_addr, rbp_val;	/* the saved rbp word read (addr 0: none) */
	bool rbp_needed;		/* rbp's register value matters from here on */
};

struct unwind_state {
	uint64_t stack_hi;		/* highest address of this thread's stack */
	uint32_t epoch;			/* module epoch the rule cache belongs to */
	int prev_n;			/* frames in prev (-1: none usable) */
	bool prev_complete;		/* prev reached the outermost frame */
	struct trace_frame *prev;	/* = trace[which], the last trace */
	unsigned which;
	struct trace_frame trace[2][TRACE_MAX];
	bool uses_rbp[TRACE_MAX];
	struct rule_slot rules[RULE_CACHE_SIZE];
};

void unwind_global_init(void);
void unwind_load_libunwind(void);
/* Captures per thread and mismatches found by MEMSCOPE_UNWIND_CHECK=1. */
void unwind_report(void);
void unwind_thread_init(struct unwind_state *us);
/*
 * Captures the stack of the code that called the hook whose frame pointer is
 * `frame` (the hooks are built with frame pointers).  ips[0] is the return
 * address into the hook's caller.  Returns the number of frames (0..max).
 */
int unwind_capture(struct unwind_state *us, unsigned mode, void *frame, uint64_t *ips, int max);

/* Bumped by our dlclose: rule caches from before are stale. */
extern volatile uint32_t shim_module_epoch;

/* The shim's own text, to strip its frames from libunwind's stacks. */
extern uint64_t shim_text_lo, shim_text_hi;

#endif
