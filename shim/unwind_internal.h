/* SPDX-License-Identifier: MIT */
/*
 * What the unwinder's files share, and no other file includes:
 *
 *	unwind.c	the capture: the walk, the rule cache, the reuse of the
 *			previous trace, the trace cache
 *	dwarf.c		a code address's rule, decoded from its module's
 *			.eh_frame_hdr and .eh_frame (a rule cache miss)
 *	unwind_setup.c	unwind_global_init, libunwind (loaded privately, the
 *			fallback's captures) and MEMSCOPE_UNWIND_CHECK
 *
 * The per-frame and per-capture functions all stay in unwind.c, static or
 * static inline, so that the compiler sees the whole walk at once (GCC
 * inlines, and allocates registers across calls, only for callees in the
 * same file): what it calls in the other two is cold, a rule not cached, a
 * frame only libunwind can describe, the check.
 */
#ifndef SHIM_UNWIND_INTERNAL_H
#define SHIM_UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind.h"

#pragma GCC visibility push(hidden)

/* -------------------------------------------- rules (dwarf.c, unwind.c) */

enum {
	RULE_EMPTY = 0,
	RULE_OK,
	RULE_STOP,		/* outermost frame: return address undefined */
	RULE_FALLBACK,		/* needs a real unwinder */
};

/*
 * Packed rule: bits 0..1 kind, bit 2 CFA from rbp, bit 3 rbp saved,
 * bits 16..31 rbp save offset from CFA (int16), bits 32..63 CFA offset.
 */
static inline uint64_t rule_pack(unsigned kind, bool cfa_rbp, bool rbp_saved, int rbp_off, int32_t cfa_off)
{
	return (uint64_t)kind | (uint64_t)cfa_rbp << 2 | (uint64_t)rbp_saved << 3 |
	       (uint64_t)(uint16_t)(int16_t)rbp_off << 16 | (uint64_t)(uint32_t)cfa_off << 32;
}
#define RULE_KIND(r) ((unsigned)((r) & 3))
#define RULE_CFA_RBP(r) (((r) >> 2) & 1)
#define RULE_RBP_SAVED(r) (((r) >> 3) & 1)
#define RULE_RBP_OFF(r) ((int64_t)(int16_t)(uint16_t)((r) >> 16))
#define RULE_CFA_OFF(r) ((int64_t)(int32_t)(uint32_t)((r) >> 32))

/* The rule at code address pc (a return address less one), from the FDE
 * of the module that holds it; RULE_FALLBACK when none describes it. */
uint64_t compute_rule(uint64_t pc);

/* _dl_find_object (glibc 2.35+): lock-free, made for unwinders.  Looked
 * up by unwind_global_init; NULL: dl_iterate_phdr instead. */
struct shim_dl_find_object {
	unsigned long long dlfo_flags;
	void *dlfo_map_start;
	void *dlfo_map_end;
	void *dlfo_link_map;
	void *dlfo_eh_frame;
	unsigned long long reserved[7];
};
extern int (*find_object)(void *, struct shim_dl_find_object *);

/* ------------------------------------------- libunwind (unwind_setup.c) */

/* libunwind's unw_backtrace, once unwind_load_libunwind found it. */
extern int (*unw_backtrace_fn)(void **, int);
/* The stack through libunwind, the shim's own frames left out: the frame
 * count (0 without libunwind). */
int libunwind_capture(uint64_t *ips, int max);

/* ---------------------------------- MEMSCOPE_UNWIND_CHECK (unwind_setup.c) */

extern bool check_mode;
/*
 * Why captures did not come from the trace cache, in check mode: no
 * layout for their start (none filed, or other starts took its set), or
 * layouts but no trace of the words there (not filed, pushed out, or
 * another rbp); and why walked traces were not filed: a walk of fewer
 * than two frames (reusing the previous trace: cheap), too many words;
 * and how often a start had more layouts than a set holds.
 */
enum { TC_NO_LAYOUT, TC_NO_TRACE, TC_FILE_SHORT, TC_FILE_DEEP, TC_FILE_OTHER, TC_REASONS };
extern uint64_t tc_why[TC_REASONS];

/* The capture c (of ips, from unwind_capture) against libunwind's. */
void unwind_check(struct unwind_state *us, uint64_t *ips, int max, struct capture *c);

/* c's hash, of its frames in ips. */
static inline void hash_ips(const uint64_t *ips, struct capture *c)
{
	uint64_t h1 = STACK_HASH_SEED1, h2 = STACK_HASH_SEED2;
	int k;

	for (k = c->n - 1; k >= 0; k--)
		stack_hash_step(&h1, &h2, ips[k]);
	c->h1 = h1;
	c->h2 = h2;
	c->have_ips = true;
}

#pragma GCC visibility pop

#endif
