/* SPDX-License-Identifier: MIT */
/*
 * scan_internal: what the files of the leak scan share (private to
 * libmsc/record/; everyone else sees msc_scan.h).
 *
 *	scan.c		the scan's arrays (huge pages) and threads, passes 2
 *			and 3 (following the edges), the kinds set into the
 *			table, msc_scan_process, msc_scan_tls_start
 *	scan_index.c	the blocks, sorted by address in place, and the index
 *			of their pages that finds the block a word points into
 *	scan_read.c	pass 1: the blocks' memory read in address order by
 *			the threads, the edges its words make, the roots
 *
 * What pass 1 does per word and passes 2 and 3 per edge stays in one file
 * or is inlined from here (block_end, run_slot, mark, push).
 */
#ifndef MSC_SCAN_INTERNAL_H
#define MSC_SCAN_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_agg.h"
#include "msc_scan.h"
#include "msc_util.h"

enum state { UNREACHED = 0, POSSIBLE, REACHABLE, INDIRECT };

/*
 * 16 bytes, as there are millions: the size of a block of 4 GiB or more is
 * found from ref (block_end).  ref: the index of its live slot or region,
 * shifted left by 2, | REF_REGION for an mmap region, | REF_CUSTOM for a
 * block from memscope.h (maybe inside another).
 */
struct block {
	uint64_t start;
	uint32_t size;			/* at least 1, HUGE_SIZE: see ref */
	uint32_t ref;
};

#define HUGE_SIZE UINT32_MAX
#define REF_REGION 2u
#define REF_CUSTOM 1u
#define REF_MAX (UINT32_MAX >> 2)

/*
 * The blocks on one page: b[first, first + n), sorted and disjoint, are
 * those of b[ncustom..] that overlap the page.  A block of more than
 * SPAN_PAGES pages is on the runs of its first and last pages only (and in
 * scan.big): a page inside it has no run, since nothing else can be there.
 * sub[j]: where in the run to start looking for an address in the j-th
 * sixteenth of the page (the first block that ends after its start), when
 * n < 256; a longer run is searched by halves.
 */
struct page_run {
	uint64_t key;			/* page number + 1; 0: an empty slot */
	uint32_t first, n;
	uint8_t sub[16];
};

/* A word that may point to a block, on its way through the pipeline. */
struct cand {
	uint64_t word;
	long source;
	const struct page_run *run;
	size_t from;
};

#define PIPE_AHEAD 8
#define PIPE_RING 32			/* > 2 * PIPE_AHEAD, a power of 2 */
#define PIPE_MASK (PIPE_RING - 1)

struct pipe {
	struct cand c[PIPE_RING];
	size_t seen, fetched, done;	/* words in, through stage 2, out */
};

/*
 * A part of pass 1: the bytes of blocks b[first, last), but for the first
 * skip bytes of the first and what lies past cut bytes into the last
 * (whole words; a big block may be cut between parts), and the edges
 * found there, numbered from 0 in its own array until the parts' edges
 * are joined.  Parts are read in any order, each in address order; the
 * edges of a block cut between parts are in order once they are joined.
 * Aligned so that two threads' counters share no cache line.
 */
struct part {
	size_t first, last;
	uint64_t skip, cut;
	size_t edges_from, edges_to;	/* the blocks that start here */
	size_t edges_for;		/* the first of those edge_at lacks */
	uint32_t *edges;
	size_t nedges, capedges;
} __attribute__((aligned(64)));

/* What reads the target's memory: one of pass 1's threads (part: what it
 * reads now), or the roots' reader. */
struct reader {
	struct scan *s;
	struct pipe pipe;
	struct part *part;
	char *buf;			/* BUF_SIZE */
	uint64_t bytes;			/* read */
	int error;
} __attribute__((aligned(64)));

/* An edge: the index of the block pointed into, and EDGE_START when the
 * pointer is to its first byte. */
#define EDGE_START (1u << 31)
#define EDGE_BLOCK (EDGE_START - 1)

struct scan {
	const struct msc_agg *a;
	struct block *b;
	size_t n, nalloc;
	size_t ncustom;			/* b[0..ncustom) custom, then the others */
	unsigned nthreads;		/* that sort and read */
	uint64_t lo, hi;		/* all blocks lie in [lo, hi) */
	uint8_t *state;			/* per block */
	/* Where a word points: the runs of the pages, by page number. */
	struct page_run *runs;
	size_t runs_mask;
	unsigned runs_shift;		/* 64 - log2(slots) */
	uint32_t *big;			/* blocks of more than SPAN_PAGES pages */
	size_t nbig, capbig;
	/* The edges of block i: edges[edge_at[i] .. edge_at[i + 1]). */
	uint32_t *edge_at;
	uint32_t *edges;
	size_t nedges, capedges;
	uint32_t *work;			/* blocks to follow the edges of */
	size_t nwork, capwork;
	int pid;
	const struct msc_range *exclude;
	size_t nexclude;
	struct msc_scan_stats *st;
	int error;
};

#define BUF_SIZE (4u << 20)
#define IOV_BATCH 512
#define PAGE_SHIFT 12
#define SUB_SHIFT (PAGE_SHIFT - 4)
#define SPAN_PAGES 16

/*
 * The program is paused while it is scanned, its cores idle: the scan's
 * sort and pass 1 take a thread per THREAD_BYTES of blocks, up to one per
 * CPU the caller may run on, and MAX_THREADS (MEMSCOPE_SCAN_THREADS sets
 * the number).
 */
#define MAX_THREADS 4
#define THREAD_BYTES (32ull << 20)

/* A task of scan_share_out's: task k, on thread (0: the caller). */
typedef void share_fn(void *ctx, unsigned thread, unsigned k);

/*
 * A loop over n items shared out (scan_share_out): CHUNKS_PER_THREAD
 * chunks a thread; fn(c, from, to, k) does chunk k, the items [from, to).
 */
#define CHUNKS_PER_THREAD 8
#define MAX_CHUNKS (MAX_THREADS * CHUNKS_PER_THREAD)

struct chunks {
	struct scan *s;
	struct msc_agg *a;
	size_t n;
	unsigned nchunks;
	size_t at[MAX_CHUNKS + 1];	/* the fill's: where chunk k's blocks go */
	bool by_slot;			/* set_kinds': through edge_at's memory */
	void (*fn)(struct chunks *c, size_t from, size_t to, unsigned k);
};

/*
 * Pass 1 is nearly all of a scan's time, and it waits on memory: on the
 * lines of the page runs and blocks that the words found point to, as
 * many at once as a core has room for.  Another core doubles that.  The
 * blocks' bytes are cut into PARTS_PER_READER parts a thread of about the
 * same size, which the threads take in turn: one with denser pointers or
 * fewer blocks to a page waits for no other.
 */
#define PARTS_PER_READER 4
#define MAX_PARTS (MAX_THREADS * PARTS_PER_READER)

struct pass1 {
	struct part part[MAX_PARTS];
	unsigned nparts;
	struct reader *r;		/* a thread's */
};

/* ---- scan.c */

/* An array of the scan's, in huge pages where the kernel has them (mmap):
 * NULL when out of memory. */
void *scan_alloc_array(size_t size);
/* Unmaps an array of scan_alloc_array's (NULL: nothing). */
void scan_free_array(void *p, size_t size);
/* Makes room for need elements of size elem in *p (of *cap): 0 or -ENOMEM. */
int scan_grow_array(void **p, size_t *cap, size_t need, size_t elem);
/* Tasks 0..ntasks-1 shared out among n threads, the caller one of them. */
void scan_share_out(unsigned n, unsigned ntasks, share_fn *fn, void *ctx);
/* fn over the items [0, n) in chunks, shared out among nthreads. */
void scan_run_chunks(struct chunks *c, size_t n, unsigned nthreads,
		     void (*fn)(struct chunks *c, size_t from, size_t to, unsigned k));

/* ---- scan_index.c */

/* The blocks of a into s, sorted, with their index: 0, -ENOMEM, or
 * -EOVERFLOW (more blocks than the scan can tell apart). */
int scan_build(struct scan *s, struct msc_agg *a);

/* ---- scan_read.c */

/* Pass 1 with the scan's threads (readers r[0..nthreads)), then the roots
 * (reader r[MAX_THREADS]); a failure is in s->error. */
void scan_read_all(struct scan *s, struct pass1 *p, struct reader *r, const uint64_t *sps,
		   size_t nsps, const uint64_t *roots, size_t nroots);

/* ---- inlines: a word's block and its marks */

/* Where block b ends (after its last byte). */
static inline uint64_t block_end(const struct scan *s, const struct block *b)
{
	uint32_t i = b->ref >> 2;

	if (msc_likely(b->size != HUGE_SIZE))
		return b->start + b->size;
	if (b->ref & REF_REGION)
		return msc_agg_region(s->a, i)->end;
	return b->start + msc_live_size(s->a, msc_agg_live_at(s->a, i));
}

/* The bytes of b's whole words. */
static inline uint64_t word_bytes(const struct scan *s, const struct block *b)
{
	return (block_end(s, b) - b->start) & ~7ull;
}

static inline size_t run_slot(const struct scan *s, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> s->runs_shift);
}

static inline void push(struct scan *s, size_t i)
{
	if (s->nwork == s->capwork &&
	    scan_grow_array((void **)&s->work, &s->capwork, s->nwork + 1, sizeof(*s->work))) {
		/* A block marked but never followed would make what only it
		 * points to look lost: fail the scan. */
		s->error = ENOMEM;
		return;
	}
	s->work[s->nwork++] = (uint32_t)i;
}

/*
 * A pointer into block i, to its start or not.  definite: it was found in
 * a root or a reachable block.  In the clique pass (leader != -1) reached
 * unreached blocks become indirect instead.
 */
static inline void mark(struct scan *s, size_t i, bool start, bool definite, long leader)
{
	uint8_t *st = &s->state[i];

	if (leader >= 0) {
		if (*st == UNREACHED && (long)i != leader) {
			*st = INDIRECT;
			push(s, i);
		}
		return;
	}
	if (*st == REACHABLE)
		return;
	if (start && definite) {
		*st = REACHABLE;
		push(s, i);
	} else if (*st == UNREACHED) {
		*st = POSSIBLE;
		push(s, i);
	}
}

#endif
