/* SPDX-License-Identifier: MIT */
/*
 * msc_scan: which live blocks are leaks, the way Valgrind's memcheck
 * decides it, for a process paused at exit.
 *
 * Roots are the process's writable mappings that hold no tracked block:
 * data and bss of every module, thread stacks (the exiting thread's from its
 * stack pointer up), TLS and anonymous memory that is not a heap.  Every
 * aligned word of a root that points into a tracked block marks it: a
 * pointer to its start makes it reachable, a pointer inside it possibly
 * lost; marked blocks are scanned in turn (a possibly lost block passes on
 * "possibly" only).  Blocks left unmarked are leaks; one found through
 * another leak's contents is indirectly lost, the rest definitely lost.
 *
 * The memory is read with process_vm_readv in batches.  memscope's own
 * mappings (the shared rings, the shim's private memory and data) are never
 * roots: they hold addresses of blocks and would make every leak reachable.
 */
#ifndef MSC_SCAN_H
#define MSC_SCAN_H

#include <stdint.h>

#include "msc_agg.h"
#include "msc_err.h"

struct msc_scan_stats {
	uint64_t root_bytes;		/* bytes of roots read */
	uint64_t block_bytes;		/* bytes of blocks read */
	uint64_t blocks;		/* blocks classified */
	uint64_t ns;			/* time taken */
};

/*
 * Sets the kind of every live block and region of a (struct msc_live.kind,
 * struct msc_region.kind).  sp: the exiting thread's stack pointer (0 if
 * unknown: its whole stack is a root).  Returns 0, or a negative errno with
 * err set (the kinds are then left unscanned).
 */
struct msc_range {
	uint64_t start, end;
};

/*
 * exclude: ranges that are never roots (the shim's per-thread state, stacks
 * of threads that exited).  roots: pointer values held where the scan cannot
 * see them, taken as found in a root (glibc's DTV pointers of threads).
 */
int msc_scan_process(struct msc_agg *a, int pid, uint64_t sp, const struct msc_range *exclude,
		     size_t nexclude, const uint64_t *roots, size_t nroots,
		     struct msc_scan_stats *st, struct msc_err *err);

/*
 * glibc (x86_64) keeps a thread's DTV, a block it calloc'ed, in the TCB at
 * the thread pointer: tcb->dtv = dtv + 1 (16-byte entries).  Fills out[i]
 * with the start of the DTV block of each thread pointer tps[i] (0 when
 * unreadable), to pass as roots: glibc frees them only in __libc_freeres.
 */
void msc_scan_dtv_roots(int pid, const uint64_t *tps, size_t n, uint64_t *out);

#endif
