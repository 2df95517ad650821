/* SPDX-License-Identifier: MIT */
/*
 * msc_scan: which live blocks are leaks, the way Valgrind's memcheck
 * decides it, for a process paused at exit.
 *
 * Roots are the process's writable mappings that hold no tracked block:
 * data and bss of every module, thread stacks (the exiting thread's from its
 * stack pointer up, of a thread that ended only its TLS and struct
 * pthread), TLS and anonymous memory that is not a heap.  Every
 * aligned word of a root that points into a tracked block marks it: a
 * pointer to its start makes it reachable, a pointer inside it possibly
 * lost; marked blocks are scanned in turn (a possibly lost block passes on
 * "possibly" only).  Blocks left unmarked are leaks; one found through
 * another leak's contents is indirectly lost, the rest definitely lost.
 *
 * Every block is read once, in address order, with process_vm_readv in
 * large batches, by a thread per range of blocks (one per 32 MiB, up to
 * the CPUs the caller may run on and 4; MEMSCOPE_SCAN_THREADS sets how
 * many); the pointers between blocks are then followed in memory.
 * The time taken is linear in the live bytes and blocks, whatever the
 * pointers' shape (a list in reverse address order costs no more than an
 * array).  The memory taken is about 30 bytes per live block and 4 per
 * pointer between blocks, for the time of the scan.  memscope's own
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
	uint64_t pointers;		/* words of blocks that point into a block */
	uint64_t ns;			/* time taken */
};

struct msc_range {
	uint64_t start, end;
};

/*
 * Sets the kind of every live block and region of a (struct msc_live.kind,
 * struct msc_region.kind).  sps: stack pointers of paused threads (the
 * exiting one at an exit; every one for ms-snap --leaks): a stack is a root
 * from its lowest sp less the 128-byte red zone up, a stack of no sp whole.  exclude: ranges that are never
 * roots (the shim's per-thread state, the dead part of the stacks of
 * threads that exited).  roots: values held where no memory shows them
 * (the registers of the threads of a process stopped for ms-snap --leaks),
 * taken as words of a root.  Returns 0, or a negative errno with err set
 * (the kinds are then left unscanned).
 */
int msc_scan_process(struct msc_agg *a, int pid, const uint64_t *sps, size_t nsps,
		     const struct msc_range *exclude,
		     size_t nexclude, const uint64_t *roots, size_t nroots,
		     struct msc_scan_stats *st, struct msc_err *err);

/*
 * Where the static TLS of the thread whose thread pointer is tp begins, for
 * a thread of pid that exited: what memcheck still scans of its stack block
 * (glibc keeps it for reuse) is this TLS and the struct pthread above it,
 * which holds the DTV pointer; the stack below is dead.
 *
 * glibc (x86_64) lays a thread's stack block out as [guard | stack | static
 * TLS | struct pthread], tp pointing at the struct pthread, whose TCB keeps
 * dtv + 1 at tp + 8.  The DTV, a block glibc calloc'ed, holds its length
 * and then a 16-byte entry per TLS module pointing at the module's TLS
 * block for the thread: the lowest of those in [lo, tp) is the start.
 * Returns tp when the DTV cannot be read.
 */
uint64_t msc_scan_tls_start(int pid, uint64_t tp, uint64_t lo);

#endif
