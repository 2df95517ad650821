/* SPDX-License-Identifier: MIT */
/*
 * Reachability of live blocks, memcheck style: see msc_scan.h.
 *
 * The scan is three passes over the blocks, sorted by address:
 *
 *   1. read: every block's memory once, in address order and in large
 *      reads, and of its words those that point into a block, kept as the
 *      block's edges (the target, and whether at its start), by a thread
 *      per range of blocks; then the roots, whose words mark their targets
 *      at once;
 *   2. reach: from the marked blocks along the edges, in memory;
 *   3. leaks: from each block left unreached (a clique leader) along the
 *      edges, marking what it reaches indirectly lost.
 *
 * Reading every block once, in order, costs a read per few megabytes;
 * following pointers through the target's memory costs a read per block
 * along a list (a Python heap of 30 million blocks took a minute that
 * way).  Finding the block a word points into, for the millions of words
 * that do, costs about as much as reading: a hash table of the pages that
 * hold blocks takes a word to the few blocks of one sixteenth of a page,
 * in two cache misses that a pipeline overlaps with those of the next
 * words.  And fresh memory costs page faults: the scan's arrays are sorted
 * in place, in huge pages where the kernel has them.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "msc_proc.h"
#include "msc_scan.h"
#include "msc_stream.h"
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

/* --------------------------------------------------------------- arrays */

/*
 * The scan's arrays, of a few words per live block: tens of megabytes for
 * a heap of millions of blocks.  Faulting them in a 4 KiB page at a time
 * costs about as much as the sort that fills them, and their random reads
 * a TLB miss each: ask for huge pages.  NULL when out of memory.
 */
static void *alloc_array(size_t size)
{
	void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_HUGEPAGE);
	return p;
}

static void free_array(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}

/* Makes room for need elements of size elem in *p (of *cap, from
 * alloc_array or NULL), doubling; mremap moves pages, it copies none. */
static int grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : (2u << 20) / elem;
	void *q;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (!*p)
		q = alloc_array(ncap * elem);
	else
		q = mremap(*p, *cap * elem, ncap * elem, MREMAP_MAYMOVE);
	if (!q || q == MAP_FAILED)
		return -ENOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

/* ------------------------------------------------------ finding a block */

/* Where block b ends (after its last byte). */
static inline uint64_t block_end(const struct scan *s, const struct block *b)
{
	uint32_t i = b->ref >> 2;

	if (msc_likely(b->size != HUGE_SIZE))
		return b->start + b->size;
	if (b->ref & REF_REGION)
		return s->a->regions[i].end;
	return b->start + msc_live_size(s->a, &s->a->live[i]);
}

/* The bytes of b's whole words. */
static inline uint64_t word_bytes(const struct scan *s, const struct block *b)
{
	return (block_end(s, b) - b->start) & ~7ull;
}

/* The block of b[first..last) (sorted, disjoint) containing addr, or -1. */
static long find_in(const struct scan *s, size_t first, size_t last, uint64_t addr)
{
	size_t lo = first, hi = last;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (block_end(s, &s->b[mid]) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < last && s->b[lo].start <= addr)
		return (long)lo;
	return -1;
}

static size_t run_slot(const struct scan *s, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> s->runs_shift);
}

/* The block of more than SPAN_PAGES pages containing addr, or -1. */
static long find_big(const struct scan *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nbig;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (block_end(s, &s->b[s->big[mid]]) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->nbig && s->b[s->big[lo]].start <= addr)
		return (long)s->big[lo];
	return -1;
}

/* The run of addr's page, or NULL. */
static const struct page_run *run_of(const struct scan *s, uint64_t addr)
{
	uint64_t key = (addr >> PAGE_SHIFT) + 1;
	size_t slot;

	for (slot = run_slot(s, key);; slot = (slot + 1) & s->runs_mask) {
		const struct page_run *r = &s->runs[slot];

		if (r->key == key)
			return r;
		if (!r->key)
			return NULL;
	}
}

/* Where in b to start looking for addr, on its page's run r. */
static size_t run_start(const struct page_run *r, uint64_t addr)
{
	return r->n < 256 ? r->first + r->sub[(addr >> SUB_SHIFT) & 15] : r->first;
}

/*
 * The block containing addr, or -1: from b[from] on in the run r of its
 * page, or without one among the big blocks.  Custom blocks (memscope.h)
 * may lie inside a heap block (a pool's chunk): they come first, so a
 * pointer to a pooled object is a pointer to that object.
 */
static long find_block(const struct scan *s, const struct page_run *r, size_t from, uint64_t addr)
{
	long i;

	if (s->ncustom && (i = find_in(s, 0, s->ncustom, addr)) >= 0)
		return i;
	if (!r)
		return find_big(s, addr);
	if (r->n >= 256)
		return find_in(s, r->first, (size_t)r->first + r->n, addr);
	/* A sixteenth of a page holds a few blocks at most: walk. */
	for (i = (long)from; (size_t)i < (size_t)r->first + r->n; i++)
		if (block_end(s, &s->b[i]) > addr)
			return s->b[i].start <= addr ? i : -1;
	return -1;
}

/* ------------------------------------------------------------- marking */

/* Where glibc puts the header of the next chunk (chunk sizes are the
 * request plus 8, rounded up to 16, at least 32; data starts 16 bytes in). */
static uint64_t next_chunk_header(const struct scan *s, const struct block *b)
{
	uint64_t size = block_end(s, b) - b->start, csize = (size + 8 + 15) & ~15ull;

	if (csize < 32)
		csize = 32;
	return b->start - 16 + csize;
}

static void push(struct scan *s, size_t i)
{
	if (s->nwork == s->capwork &&
	    grow_array((void **)&s->work, &s->capwork, s->nwork + 1, sizeof(*s->work))) {
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
static void mark(struct scan *s, size_t i, bool start, bool definite, long leader)
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

/* Word w of block source (-1: of a root) points into block i (-1: none):
 * an edge of the source, or from a root, a mark. */
static void found(struct reader *r, long source, uint64_t w, long i)
{
	struct scan *s = r->s;
	struct part *pt = r->part;
	const struct block *b;

	if (i < 0 || i == source)
		return;
	b = &s->b[i];
	/*
	 * glibc's arena keeps pointers to chunk headers (the top chunk, bins).
	 * The header of the chunk after a block lies in the block's last 8
	 * requested bytes when the request fills its chunk: such a pointer is
	 * the allocator's, not the program's.
	 */
	if (!(b->ref & REF_REGION) && w == next_chunk_header(s, b) && w != b->start)
		return;
	if (source < 0) {
		mark(s, (size_t)i, w == b->start, true, -1);
		return;
	}
	/* A part's blocks are read in order: those up to the source have
	 * their edges, if any, from here. */
	while (pt->edges_for <= (size_t)source)
		s->edge_at[pt->edges_for++] = (uint32_t)pt->nedges;
	if (pt->nedges == pt->capedges &&
	    grow_array((void **)&pt->edges, &pt->capedges, pt->nedges + 1, sizeof(*pt->edges))) {
		r->error = ENOMEM;
		return;
	}
	if (pt->nedges == UINT32_MAX) {
		r->error = EOVERFLOW;	/* 16 GiB of edges */
		return;
	}
	pt->edges[pt->nedges++] = (uint32_t)i | (w == b->start ? EDGE_START : 0);
}

/*
 * The edges of the blocks on the work stack, and on, until it is empty.
 * A block is followed with the state it has when it leaves the stack; one
 * upgraded from possible to reachable after that is followed again.
 */
static void follow(struct scan *s, long leader)
{
	while (s->nwork && !s->error) {
		size_t i = s->work[--s->nwork], e, end = s->edge_at[i + 1];
		bool definite = leader < 0 && s->state[i] == REACHABLE;

		for (e = s->edge_at[i]; e < end; e++) {
			if (e + 8 < end)
				__builtin_prefetch(&s->state[s->edges[e + 8] & EDGE_BLOCK]);
			mark(s, s->edges[e] & EDGE_BLOCK, s->edges[e] & EDGE_START, definite, leader);
		}
	}
}

/* -------------------------------------------------------------- reading */

/*
 * Most words are no pointer to a block: one compare each.  The others go
 * through a pipeline: their page's run is fetched from memory as they are
 * found, read AHEAD words later (and their block fetched), and their block
 * read AHEAD words later still, so that the cache misses of many words
 * overlap rather than follow one another.  The pipeline runs on from one
 * block read to the next (a block has a few pointers, the pipeline's
 * length is more); words come out of it in their order.
 */
static void pipe_step(struct reader *r, bool flush)
{
	const struct scan *s = r->s;
	struct pipe *q = &r->pipe;

	while (q->fetched < q->seen && (flush || q->seen - q->fetched > PIPE_AHEAD)) {
		struct cand *x = &q->c[q->fetched++ & PIPE_MASK];

		x->run = run_of(s, x->word);
		x->from = x->run ? run_start(x->run, x->word) : 0;
		__builtin_prefetch(&s->b[x->from]);
	}
	while (q->done < q->fetched && (flush || q->fetched - q->done > PIPE_AHEAD)) {
		const struct cand *x = &q->c[q->done++ & PIPE_MASK];

		found(r, x->source, x->word, find_block(s, x->run, x->from, x->word));
	}
}

/* The words of buf, of block source (-1: a root). */
static void scan_words(struct reader *r, const char *buf, size_t len, long source)
{
	const struct scan *s = r->s;
	const uint64_t *w = (const uint64_t *)buf;
	uint64_t lo = s->lo, span = s->hi - s->lo;
	struct pipe *q = &r->pipe;
	size_t i, n = len / 8;

	for (i = 0; i < n; i++) {
		struct cand *x;

		if (w[i] - lo >= span)
			continue;
		x = &q->c[q->seen++ & PIPE_MASK];
		x->word = w[i];
		x->source = source;
		__builtin_prefetch(&s->runs[run_slot(s, (w[i] >> PAGE_SHIFT) + 1)]);
		pipe_step(r, false);
	}
}

/* Reads [addr, addr+len) of the target in buffer-sized pieces and scans it. */
static void scan_range(struct reader *r, uint64_t addr, uint64_t len, long source)
{
	addr = (addr + 7) & ~7ull;
	while (len >= 8) {
		size_t chunk = len < BUF_SIZE ? (size_t)len : BUF_SIZE;
		struct iovec local = { r->buf, chunk }, remote = { (void *)(uintptr_t)addr, chunk };
		ssize_t got = process_vm_readv(r->s->pid, &local, 1, &remote, 1, 0);

		if (got <= 0) {
			if (got < 0 && (errno == EPERM || errno == ESRCH))
				r->error = errno;
			return;		/* unmapped meanwhile: nothing to scan */
		}
		r->bytes += (uint64_t)got;
		scan_words(r, r->buf, (size_t)got, source);
		addr += (uint64_t)got;
		len -= (uint64_t)got < len ? (uint64_t)got : len;
	}
}

/* A block to read, and where it lands in the buffer. */
struct piece {
	uint64_t start;
	size_t idx;
	uint32_t len;			/* whole words */
	uint32_t off;
};

/* Reads the blocks of p (by index, each in address order) and takes the
 * edges of each. */
static void read_pieces(struct reader *r, struct piece *p, size_t np, size_t used)
{
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	size_t nio = 0, slack = BUF_SIZE - used, k;
	uint64_t end = 0;
	ssize_t got;

	/*
	 * The kernel pins the pages of each iovec on its own, which costs
	 * more than copying the few bytes between two blocks: neighbours are
	 * read as one, as long as the bytes between them lie on the pages of
	 * one or the other (mapped, then) and the buffer has room to spare.
	 */
	used = 0;
	for (k = 0; k < np; k++) {
		uint64_t gap = p[k].start - end;

		if (nio && p[k].start >= end && gap <= slack &&
		    (p[k].start >> PAGE_SHIFT) <= ((end - 1) >> PAGE_SHIFT) + 1) {
			local[nio - 1].iov_len += gap + p[k].len;
			remote[nio - 1].iov_len += gap + p[k].len;
			slack -= gap;
			used += gap;
		} else {
			local[nio].iov_base = r->buf + used;
			remote[nio].iov_base = (void *)(uintptr_t)p[k].start;
			local[nio].iov_len = remote[nio].iov_len = p[k].len;
			nio++;
		}
		p[k].off = (uint32_t)used;
		used += p[k].len;
		end = p[k].start + p[k].len;
	}
	got = process_vm_readv(r->s->pid, local, nio, remote, nio, 0);
	if (got < 0) {
		if (errno == EPERM || errno == ESRCH) {
			r->error = errno;
			return;
		}
		got = 0;
	}
	/* A short read stops at the first page that failed: scan what came,
	 * then read the rest one by one. */
	for (k = 0; k < np && !r->error; k++) {
		size_t len = p[k].len, off = p[k].off;

		if (off + len <= (size_t)got) {
			r->bytes += len;
			scan_words(r, r->buf + off, len, (long)p[k].idx);
		} else if (off < (size_t)got) {
			r->bytes += (size_t)got - off;
			scan_words(r, r->buf + off, (size_t)got - off, (long)p[k].idx);
		} else {
			scan_range(r, p[k].start, len, (long)p[k].idx);
		}
	}
}

/* The edges of the blocks of part pt, read in address order by r. */
static void read_part(struct reader *r, struct part *pt)
{
	const struct scan *s = r->s;
	struct piece p[IOV_BATCH];
	size_t i, np = 0, used = 0;

	r->part = pt;
	for (i = pt->first; i <= pt->last && !r->error; i++) {
		const struct block *b = i < pt->last ? &s->b[i] : NULL;
		uint64_t start = b ? b->start : 0, len = b ? word_bytes(s, b) : 0;

		if (b && i + 1 == pt->last)
			len = pt->cut;
		if (b && i == pt->first)
			start += pt->skip, len -= pt->skip;

		/* The batch goes when full, before a block too big for the
		 * buffer (read on its own), and at the end. */
		if (np && (!b || np == IOV_BATCH || used + len > BUF_SIZE)) {
			read_pieces(r, p, np, used);
			np = used = 0;
		}
		if (!b)
			break;
		if (len > BUF_SIZE) {
			scan_range(r, start, len, (long)i);
		} else if (len) {
			p[np++] = (struct piece){ start, i, (uint32_t)len, 0 };
			used += len;
		}
	}
	pipe_step(r, true);
	while (pt->edges_for < pt->edges_to)
		s->edge_at[pt->edges_for++] = (uint32_t)pt->nedges;
}

/* -------------------------------------------------------------- threads */

/*
 * The program is paused while it is scanned, its cores idle: the scan's
 * sort and pass 1 take a thread per THREAD_BYTES of blocks, up to one per
 * CPU the caller may run on, and MAX_THREADS (MEMSCOPE_SCAN_THREADS sets
 * the number).
 */
#define MAX_THREADS 4
#define THREAD_BYTES (32ull << 20)

static unsigned threads_for(uint64_t bytes)
{
	const char *env = getenv("MEMSCOPE_SCAN_THREADS");
	cpu_set_t cpus;
	uint64_t n = bytes / THREAD_BYTES;

	if (env && *env)
		n = strtoull(env, NULL, 10);
	else if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && (uint64_t)CPU_COUNT(&cpus) < n)
		n = (uint64_t)CPU_COUNT(&cpus);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

/*
 * Tasks 0..ntasks-1 shared out among n threads, each taking the next one
 * left: fn(ctx, thread, k), thread 0 being the caller.  The others run
 * with every signal blocked (signals are the caller's to handle); one that
 * cannot be made leaves its share to the others.
 */
typedef void share_fn(void *ctx, unsigned thread, unsigned k);

struct share {
	share_fn *fn;
	void *ctx;
	unsigned ntasks, next;
};

struct sharer {
	struct share *sh;
	unsigned thread;
};

static void *take_tasks(void *arg)
{
	const struct sharer *x = arg;
	struct share *sh = x->sh;
	unsigned k;

	while ((k = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED)) < sh->ntasks)
		sh->fn(sh->ctx, x->thread, k);
	return NULL;
}

static void share_out(unsigned n, unsigned ntasks, share_fn *fn, void *ctx)
{
	struct share sh = { fn, ctx, ntasks, 0 };
	struct sharer x[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	bool made[MAX_THREADS] = { false };
	sigset_t all, old;
	unsigned k;

	for (k = 0; k < n; k++)
		x[k] = (struct sharer){ &sh, k };
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (k = 1; k < n; k++)
		made[k] = pthread_create(&t[k], NULL, take_tasks, &x[k]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	take_tasks(&x[0]);
	for (k = 1; k < n; k++)
		if (made[k])
			pthread_join(t[k], NULL);
}

/*
 * A loop over n items shared out (share_out): CHUNKS_PER_THREAD chunks a
 * thread; fn(c, from, to, k) does chunk k, the items [from, to).
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

static void chunk_task(void *ctx, unsigned thread, unsigned k)
{
	struct chunks *c = ctx;

	(void)thread;
	c->fn(c, c->n * k / c->nchunks, c->n * (k + 1) / c->nchunks, k);
}

static void run_chunks(struct chunks *c, size_t n, unsigned nthreads,
		       void (*fn)(struct chunks *c, size_t from, size_t to, unsigned k))
{
	c->n = n;
	c->fn = fn;
	c->nchunks = nthreads > 1 ? nthreads * CHUNKS_PER_THREAD : 1;
	share_out(nthreads, c->nchunks, chunk_task, c);
}

/* ------------------------------------------------------------- building */

/*
 * Sorts b[0..n) by start address, in place (a copy to sort into would be
 * as large again, and fresh memory costs its page faults): most
 * significant byte first, each byte's 256 buckets made by swapping blocks
 * into them (American flag sort), down to buckets small enough for an
 * insertion sort.  shift: the byte to start at (bits shift to shift + 7).
 */

/* Puts b[0..n) in the buckets of their byte at shift, of count[d] blocks
 * each; false when all are in one (left as they were). */
static bool partition(struct block *b, size_t n, int shift, size_t count[256])
{
	size_t next[256], end[256], i, d, at = 0;

	memset(count, 0, 256 * sizeof(*count));
	for (i = 0; i < n; i++)
		count[(b[i].start >> shift) & 255]++;
	if (count[(b[0].start >> shift) & 255] == n)
		return false;
	for (d = 0; d < 256; d++)
		next[d] = at, at += count[d], end[d] = at;
	for (d = 0; d < 256; d++) {
		/* Each block not in its bucket goes to the next free place of
		 * its own, the block there taken in turn. */
		while (next[d] < end[d]) {
			struct block x = b[next[d]];
			size_t to = (x.start >> shift) & 255;

			while (to != d) {
				struct block y = b[next[to]];

				b[next[to]++] = x;
				x = y;
				to = (x.start >> shift) & 255;
			}
			b[next[d]++] = x;
		}
	}
	return true;
}

static void sort_blocks_from(struct block *b, size_t n, int shift)
{
	size_t count[256], i, d, at;

	for (; n >= 32 && shift >= 0; shift -= 8) {
		if (!partition(b, n, shift, count))
			continue;	/* one bucket: on to the next byte */
		for (d = 0, at = 0; d < 256; at += count[d], d++)
			if (count[d] > 1)
				sort_blocks_from(b + at, count[d], shift - 8);
		return;
	}
	for (i = 1; i < n; i++) {
		struct block x = b[i];
		size_t j = i;

		for (; j > 0 && b[j - 1].start > x.start; j--)
			b[j] = b[j - 1];
		b[j] = x;
	}
}

/*
 * With threads: the top bytes are sorted here until no bucket holds more
 * than a 4 * threads-th of the blocks, and the buckets are then sorted by
 * the threads, each taking the largest left.
 */
#define SORT_TASKS 2048
#define SORT_ALONE 65536		/* blocks sorted without threads */

struct sort_task {
	struct block *b;
	size_t n;
	int shift;
};

static void sort_task_run(void *ctx, unsigned thread, unsigned k)
{
	const struct sort_task *t = (const struct sort_task *)ctx + k;

	(void)thread;
	sort_blocks_from(t->b, t->n, t->shift);
}

static int larger_task(const void *x, const void *y)
{
	const struct sort_task *a = x, *b = y;

	return a->n < b->n ? 1 : a->n > b->n ? -1 : 0;
}

static void sort_blocks(struct block *b, size_t n, unsigned nthreads)
{
	struct sort_task *task = NULL;
	uint64_t any = 0, all = ~0ull;
	size_t count[256], i, d, at;
	unsigned k, ntasks = 0;
	int shift;

	for (i = 0; i < n; i++)
		any |= b[i].start, all &= b[i].start;
	if (any == all)
		return;
	/* from the highest byte where they differ */
	shift = (63 - __builtin_clzll(any ^ all)) & ~7;
	if (nthreads > 1 && n >= SORT_ALONE)
		task = malloc(SORT_TASKS * sizeof(*task));
	if (!task) {
		sort_blocks_from(b, n, shift);
		return;
	}
	task[ntasks++] = (struct sort_task){ b, n, shift };
	for (;;) {
		struct sort_task t;
		unsigned big = 0;

		for (k = 1; k < ntasks; k++)
			if (task[k].n > task[big].n)
				big = k;
		t = task[big];
		if (t.n <= n / (4 * nthreads) || t.n < 32 || t.shift < 0 ||
		    ntasks + 256 > SORT_TASKS)
			break;
		if (!partition(t.b, t.n, t.shift, count)) {
			task[big].shift -= 8;
			continue;
		}
		task[big] = task[--ntasks];
		for (d = 0, at = 0; d < 256; at += count[d], d++)
			if (count[d] > 1)
				task[ntasks++] = (struct sort_task){ t.b + at, count[d], t.shift - 8 };
	}
	qsort(task, ntasks, sizeof(*task), larger_task);
	share_out(nthreads, ntasks, sort_task_run, task);
	free(task);
}

static bool is_big(const struct scan *s, const struct block *b)
{
	return ((block_end(s, b) - 1) >> PAGE_SHIFT) - (b->start >> PAGE_SHIFT) >= SPAN_PAGES;
}

static void enter_run(struct scan *s, uint64_t key, uint32_t first, uint32_t last)
{
	struct page_run r = { key, first, last - first + 1, { 0 } };
	uint64_t part = (key - 1) << PAGE_SHIFT;
	size_t slot = run_slot(s, key), i = first;
	unsigned j;

	for (j = 0; r.n < 256 && j < 16; j++, part += 1u << SUB_SHIFT) {
		while (i <= last && block_end(s, &s->b[i]) <= part)
			i++;
		r.sub[j] = (uint8_t)(i - first);
	}
	while (s->runs[slot].key)
		slot = (slot + 1) & s->runs_mask;
	s->runs[slot] = r;
}

/*
 * The page runs of b[ncustom..n), made in address order: counted, and with
 * enter, entered in the table.  Returns how many there are.
 */
static size_t page_runs(struct scan *s, bool enter)
{
	uint64_t cur = 0;		/* the open run's key, 0: none yet */
	uint32_t first = 0, last = 0;	/* its blocks */
	size_t i, nruns = 0;

	for (i = s->ncustom; i < s->n; i++) {
		const struct block *b = &s->b[i];
		uint64_t p = b->start >> PAGE_SHIFT, end = (block_end(s, b) - 1) >> PAGE_SHIFT;
		/* A big block is on the runs of its two ends only. */
		uint64_t step = is_big(s, b) ? end - p : 1;

		for (;; p += step) {
			if (p + 1 != cur) {
				if (cur && enter)
					enter_run(s, cur, first, last);
				cur = p + 1;
				first = (uint32_t)i;
				nruns++;
			}
			last = (uint32_t)i;
			if (p >= end)
				break;
		}
	}
	if (cur && enter)
		enter_run(s, cur, first, last);
	return nruns;
}

/* The page runs and the list of big blocks, for find_block. */
static int build_index(struct scan *s)
{
	size_t nruns = page_runs(s, false), slots = 16, i;
	unsigned bits = 4;

	while (slots < 2 * nruns)
		slots *= 2, bits++;
	s->runs = alloc_array(slots * sizeof(*s->runs));
	if (!s->runs)
		return -ENOMEM;
	s->runs_mask = slots - 1;
	s->runs_shift = 64 - bits;
	page_runs(s, true);
	for (i = s->ncustom; i < s->n; i++) {
		if (!is_big(s, &s->b[i]))
			continue;
		if (MSC_GROW(s->big, s->nbig + 1, s->capbig, 64))
			return -ENOMEM;
		s->big[s->nbig++] = (uint32_t)i;
	}
	return 0;
}

/* The live blocks and regions of a, custom blocks first, each part sorted
 * by address, with what finds them. */
/* The fill's first pass: how many live blocks chunk k of the table has. */
static void count_chunk(struct chunks *c, size_t from, size_t to, unsigned k)
{
	size_t i, n = 0;

	for (i = from; i < to; i++)
		n += c->a->live[i].ptr != 0;
	c->at[k + 1] = n;
}

/* The second: chunk k's blocks, from c->at[k] on.  Fresh memory is page
 * faults, which threads take in parallel. */
static void fill_chunk(struct chunks *c, size_t from, size_t to, unsigned k)
{
	const struct msc_agg *a = c->a;
	struct block *b = c->s->b + c->at[k];
	size_t i;

	for (i = from; i < to; i++) {
		const struct msc_live *l = &a->live[i];
		uint64_t size;

		if (!l->ptr)
			continue;
		size = msc_live_size(a, l);
		/* a custom or pool block's key holds more than its address */
		*b++ = (struct block){ MSC_KEY_ADDR(l->ptr),
				       size >= HUGE_SIZE ? HUGE_SIZE : size ? (uint32_t)size : 1,
				       (uint32_t)i << 2 | (l->ptr & MSC_CUSTOM_KEY ? REF_CUSTOM : 0) };
	}
}

static int build(struct scan *s, struct msc_agg *a)
{
	struct chunks c = { .s = s, .a = a };
	uint64_t bytes = a->live_bytes;
	size_t i, n;
	unsigned k;

	s->a = a;
	if (a->live_count + a->nregions >= EDGE_START || msc_live_slots(a) > REF_MAX ||
	    a->nregions > REF_MAX)
		return -EOVERFLOW;
	for (i = 0; i < a->nregions; i++)
		bytes += a->regions[i].end - a->regions[i].start;
	s->nthreads = threads_for(bytes);
	s->nalloc = a->live_count + a->nregions;
	s->b = alloc_array(s->nalloc * sizeof(*s->b));
	if (!s->b)
		return -ENOMEM;
	run_chunks(&c, msc_live_slots(a), s->nthreads, count_chunk);
	for (k = 0; k < c.nchunks; k++)
		c.at[k + 1] += c.at[k];
	if (c.at[c.nchunks] != a->live_count)
		return -EOVERFLOW;	/* the table's count is off: no scan */
	run_chunks(&c, msc_live_slots(a), s->nthreads, fill_chunk);
	n = c.at[c.nchunks];
	for (i = 0; i < a->nregions; i++) {
		uint64_t size = a->regions[i].end - a->regions[i].start;

		s->b[n++] = (struct block){ a->regions[i].start,
					    size >= HUGE_SIZE ? HUGE_SIZE : size ? (uint32_t)size : 1,
					    (uint32_t)i << 2 | REF_REGION };
	}
	s->n = n;
	for (i = 0; i < n; i++)
		if (s->b[i].ref & REF_CUSTOM) {
			struct block t = s->b[i];

			s->b[i] = s->b[s->ncustom];
			s->b[s->ncustom++] = t;
		}
	sort_blocks(s->b, s->ncustom, s->nthreads);
	sort_blocks(s->b + s->ncustom, n - s->ncustom, s->nthreads);
	s->lo = UINT64_MAX;
	s->hi = 0;
	for (i = 0; i < n; i++) {
		if (s->b[i].start < s->lo)
			s->lo = s->b[i].start;
		if (block_end(s, &s->b[i]) > s->hi)
			s->hi = block_end(s, &s->b[i]);
	}
	s->state = alloc_array(s->nalloc);
	s->edge_at = alloc_array((s->nalloc + 1) * sizeof(*s->edge_at));
	if (!s->state || !s->edge_at)
		return -ENOMEM;
	return build_index(s);
}

/* ---------------------------------------------------------------- roots */

static bool memscope_own(const char *path)
{
	return strstr(path, "memscope") && (strncmp(path, "/memfd:memscope", 15) == 0 ||
					     strcmp(path, "[anon:memscope]") == 0 ||
					     strstr(path, "libmemscope.so"));
}

static bool holds_in(const struct block *b, size_t first, size_t last, uint64_t start,
		     uint64_t end)
{
	size_t lo = first, hi = last;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (b[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < last && b[lo].start < end;
}

static bool holds_block(const struct scan *s, uint64_t start, uint64_t end)
{
	return holds_in(s->b, 0, s->ncustom, start, end) ||
	       holds_in(s->b, s->ncustom, s->n, start, end);
}

/* Scans [start, end) but for the excluded ranges in it. */
static void scan_root(struct reader *r, uint64_t start, uint64_t end)
{
	const struct scan *s = r->s;
	size_t i;

	for (i = 0; i < s->nexclude && start < end; i++) {
		const struct msc_range *x = &s->exclude[i];

		if (x->end <= start || x->start >= end)
			continue;
		if (x->start > start)
			scan_range(r, start, x->start - start, -1);
		start = x->end;
	}
	if (start < end)
		scan_range(r, start, end - start, -1);
}

static int cmp_range(const void *x, const void *y)
{
	const struct msc_range *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

struct roots {
	struct reader *r;
	const uint64_t *sps;		/* stack pointers: below them is dead stack */
	size_t nsps;
};

/* A writable mapping that is not a heap (its blocks are scanned when
 * reached) nor ours is a root: data, bss, stacks, other memory. */
#define RED_ZONE 128

static int scan_mapping(const struct msc_mapping *m, void *arg)
{
	struct roots *r = arg;
	struct scan *s = r->r->s;
	uint64_t start = m->start, lowest;
	size_t i;

	if (m->perms[0] != 'r' || m->perms[1] != 'w')
		return 0;
	if (strcmp(m->path, "[vvar]") == 0 || strcmp(m->path, "[vsyscall]") == 0 ||
	    strcmp(m->path, "[vdso]") == 0 || memscope_own(m->path))
		return 0;
	if (holds_block(s, m->start, m->end))
		return 0;
	/* Below a thread's stack pointer the stack is dead, but for the red
	 * zone (128 bytes) a leaf function may keep its values in, which a
	 * thread stopped anywhere may have; the lowest sp of the mapping. */
	for (i = 0, lowest = m->end; i < r->nsps; i++)
		if (r->sps[i] >= m->start && r->sps[i] < lowest)
			lowest = r->sps[i];
	if (lowest < m->end)
		start = lowest - m->start > RED_ZONE ? (lowest - RED_ZONE) & ~7ull : m->start;
	scan_root(r->r, start, m->end);
	return s->error || r->r->error ? 1 : 0;
}

/* The roots, and the registers' values (roots), read by rd. */
static void scan_roots(struct reader *rd, const uint64_t *sps, size_t nsps,
		       const uint64_t *roots, size_t nroots)
{
	struct scan *s = rd->s;
	struct roots r = { rd, sps, nsps };
	struct msc_procfs fs;
	int ret;

	if (msc_procfs_init(&fs, NULL)) {
		s->error = ENAMETOOLONG;
		return;
	}
	ret = msc_proc_maps(&fs, s->pid, scan_mapping, &r, NULL);
	if (ret < 0 && !rd->error)
		rd->error = -ret;
	msc_procfs_release(&fs);
	if (!rd->error && nroots)
		scan_words(rd, (const char *)roots, nroots * sizeof(*roots), -1);
	pipe_step(rd, true);
	s->st->root_bytes = rd->bytes;
	if (!s->error)
		s->error = rd->error;
}

/* ----------------------------------------------------- pass 1's threads */

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

/* Part k, read by the thread's reader (nothing more after its error). */
static void read_part_task(void *ctx, unsigned thread, unsigned k)
{
	struct pass1 *p = ctx;

	if (!p->r[thread].error)
		read_part(&p->r[thread], &p->part[k]);
}

/*
 * Cuts the blocks' words into n parts of about the same bytes, inside a
 * block where need be.
 */
static void cut_parts(const struct scan *s, struct pass1 *p, unsigned n)
{
	uint64_t total = 0, at = 0, want;
	size_t i;
	unsigned k = 0;

	for (i = 0; i < s->n; i++)
		total += word_bytes(s, &s->b[i]);
	want = total / n;
	memset(&p->part[0], 0, sizeof(p->part[0]));
	for (i = 0; i < s->n; i++) {
		uint64_t len = word_bytes(s, &s->b[i]), off = 0;

		/* the parts whose ends fall in this block end in it */
		while (k + 1 < n && want * (k + 1) < at + len) {
			uint64_t cut = want * (k + 1) > at ? (want * (k + 1) - at) & ~7ull : 0;

			if (cut < off)
				cut = off;
			p->part[k].last = i + 1;
			p->part[k].cut = cut;
			off = cut;
			k++;
			memset(&p->part[k], 0, sizeof(p->part[k]));
			p->part[k].first = i;
			p->part[k].skip = off;
			p->part[k].edges_from = off ? i + 1 : i;
		}
		at += len;
	}
	p->part[k].last = s->n;
	p->part[k].cut = s->n ? word_bytes(s, &s->b[s->n - 1]) : 0;
	p->nparts = k + 1;
	for (k = 0; k < p->nparts; k++) {
		p->part[k].edges_for = p->part[k].edges_from;
		p->part[k].edges_to = k + 1 < p->nparts ? p->part[k + 1].edges_from : s->n;
	}
}

/* Joins the parts' edges into s->edges, in block order. */
static int join_edges(struct scan *s, struct pass1 *p)
{
	size_t total = 0, i;
	unsigned k;

	for (k = 0; k < p->nparts; k++)
		total += p->part[k].nedges;
	if (total >= UINT32_MAX)
		return EOVERFLOW;
	s->edges = p->part[0].edges;
	s->capedges = p->part[0].capedges;
	s->nedges = p->part[0].nedges;
	p->part[0].edges = NULL;
	if (grow_array((void **)&s->edges, &s->capedges, total, sizeof(*s->edges)))
		return ENOMEM;
	for (k = 1; k < p->nparts; k++) {
		struct part *pt = &p->part[k];

		for (i = pt->edges_from; i < pt->edges_to; i++)
			s->edge_at[i] += (uint32_t)s->nedges;
		if (pt->nedges)
			memcpy(s->edges + s->nedges, pt->edges, pt->nedges * sizeof(*s->edges));
		s->nedges += pt->nedges;
		/* gone as soon as copied: the edges are not all there twice */
		free_array(pt->edges, pt->capedges * sizeof(*pt->edges));
		pt->edges = NULL;
		pt->capedges = 0;
	}
	s->edge_at[s->n] = (uint32_t)s->nedges;
	return 0;
}

/* Pass 1, then the roots. */
static void read_all(struct scan *s, struct pass1 *p, struct reader *r, const uint64_t *sps,
		     size_t nsps, const uint64_t *roots, size_t nroots)
{
	unsigned k;

	cut_parts(s, p, s->nthreads > 1 ? s->nthreads * PARTS_PER_READER : 1);
	for (k = 0; k < s->nthreads; k++) {
		r[k].s = s;
		r[k].buf = malloc(BUF_SIZE);
		if (!r[k].buf) {
			s->error = ENOMEM;
			return;
		}
	}
	p->r = r;
	share_out(s->nthreads, p->nparts, read_part_task, p);
	/* A reader that stopped on an error left its part unread. */
	for (k = 0; k < s->nthreads; k++) {
		s->st->block_bytes += r[k].bytes;
		if (!s->error)
			s->error = r[k].error;
	}
	if (!s->error)
		s->error = join_edges(s, p);
	if (s->error)
		return;
	/* the roots, with the first reader's buffer */
	r[MAX_THREADS].s = s;
	r[MAX_THREADS].buf = r[0].buf;
	scan_roots(&r[MAX_THREADS], sps, nsps, roots, nroots);
}

/* ---------------------------------------------------------------- scan */

/*
 * The blocks' kinds, into a.  The live table is large, and in another
 * order than the blocks: the kinds are put in an array in its order first,
 * then into it in one pass, rather than into its lines at random (a TLB
 * and a cache miss each).  That array is the memory of edge_at, done with
 * and already faulted in: 4 bytes a block, enough while the table has at
 * most 4 slots a block (it grows when 3/4 full; with more, most blocks
 * were freed, and the few left are set directly).  Both passes are shared
 * out among the scan's threads.
 */
static const uint8_t kind_of[] = {
	[UNREACHED] = MSC_LEAK_DEFINITELY, [POSSIBLE] = MSC_LEAK_POSSIBLY,
	[REACHABLE] = MSC_LEAK_REACHABLE, [INDIRECT] = MSC_LEAK_INDIRECTLY,
};

/* Blocks [from, to)'s kinds: into by_slot (the memory of edge_at), or
 * without it into the table. */
static void kinds_of_blocks(struct chunks *c, size_t from, size_t to, unsigned k)
{
	struct scan *s = c->s;
	uint8_t *by_slot = c->by_slot ? (uint8_t *)s->edge_at : NULL;
	size_t i;

	(void)k;
	for (i = from; i < to; i++) {
		const struct block *b = &s->b[i];
		uint8_t kind = kind_of[s->state[i]];

		if (b->ref & REF_REGION)
			c->a->regions[b->ref >> 2].kind = kind;
		else if (by_slot)
			by_slot[b->ref >> 2] = kind;
		else
			msc_live_set_kind(&c->a->live[b->ref >> 2], kind);
	}
}

/* Slots [from, to) of the table take their kinds from by_slot. */
static void kinds_into_table(struct chunks *c, size_t from, size_t to, unsigned k)
{
	const uint8_t *by_slot = (const uint8_t *)c->s->edge_at;
	struct msc_agg *a = c->a;
	size_t i;

	(void)k;
	for (i = from; i < to; i++)
		if (a->live[i].ptr)
			msc_live_set_kind(&a->live[i], by_slot[i]);
}

static void set_kinds(struct scan *s, struct msc_agg *a)
{
	struct chunks c = { .s = s, .a = a };

	c.by_slot = msc_live_slots(a) <= (s->nalloc + 1) * sizeof(*s->edge_at);
	run_chunks(&c, s->n, s->nthreads, kinds_of_blocks);
	if (c.by_slot)
		run_chunks(&c, msc_live_slots(a), s->nthreads, kinds_into_table);
}

int msc_scan_process(struct msc_agg *a, int pid, const uint64_t *sps, size_t nsps,
		     const struct msc_range *exclude,
		     size_t nexclude, const uint64_t *roots, size_t nroots,
		     struct msc_scan_stats *st, struct msc_err *err)
{
	struct msc_range *ex = NULL;
	struct msc_scan_stats dummy;
	struct scan s = { 0 };
	struct reader r[MAX_THREADS + 1];	/* pass 1's, the roots' */
	struct pass1 p;
	uint64_t t0 = msc_now_monotonic();
	size_t i;
	int ret = 0;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	memset(r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	s.pid = pid;
	s.st = st;
	if (nexclude) {
		ex = malloc(nexclude * sizeof(*ex));
		if (ex) {
			memcpy(ex, exclude, nexclude * sizeof(*ex));
			qsort(ex, nexclude, sizeof(*ex), cmp_range);
			s.exclude = ex;
			s.nexclude = nexclude;
		}
	}
	if (nexclude && !ex) {
		ret = msc_err_set(err, -ENOMEM, "leak scan: out of memory");
		goto out;
	}
	ret = build(&s, a);
	if (ret) {
		ret = msc_err_set(err, ret, "leak scan: %s", ret == -ENOMEM ? "out of memory" :
			"more live blocks than it can tell apart");
		goto out;
	}
	if (!s.n)
		goto out;
	read_all(&s, &p, r, sps, nsps, roots, nroots);
	follow(&s, -1);
	/* Leaks: every block a leader can reach is indirectly lost. */
	for (i = 0; i < s.n && !s.error; i++) {
		if (s.state[i] != UNREACHED)
			continue;
		push(&s, i);
		follow(&s, (long)i);
	}
	if (s.error) {
		ret = msc_err_set(err, -s.error, "leak scan of pid %d: %s", pid, strerror(s.error));
		goto out;
	}
	set_kinds(&s, a);
	st->blocks = s.n;
	st->pointers = s.nedges;
out:
	st->ns = msc_now_monotonic() - t0;
	free_array(s.b, s.nalloc * sizeof(*s.b));
	free_array(s.runs, s.runs ? (s.runs_mask + 1) * sizeof(*s.runs) : 0);
	free_array(s.edge_at, (s.nalloc + 1) * sizeof(*s.edge_at));
	free_array(s.state, s.nalloc);
	free_array(s.edges, s.capedges * sizeof(*s.edges));
	free_array(s.work, s.capwork * sizeof(*s.work));
	free(s.big);
	for (i = 0; i < MAX_THREADS; i++)
		free(r[i].buf);
	for (i = 0; i < MAX_PARTS; i++)
		free_array(p.part[i].edges, p.part[i].capedges * sizeof(*p.part[i].edges));
	free(ex);
	return ret;
}

/* Reads len bytes of pid at addr; true when all came. */
static bool peek(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

uint64_t msc_scan_tls_start(int pid, uint64_t tp, uint64_t lo)
{
	/* More modules with TLS than any program loads: a bound on what a
	 * stale or foreign word could make us read. */
	enum { MAX_MODULES = 4096 };
	uint64_t dtv, len, start = tp, *e;
	size_t i;

	if (!tp || !peek(pid, tp + 8, &dtv, sizeof(dtv)) || dtv < 16 ||
	    !peek(pid, dtv - 16, &len, sizeof(len)) || !len || len > MAX_MODULES)
		return tp;
	/* dtv[0] is the generation; dtv[1..len] the modules: {val, to_free}. */
	e = malloc((len + 1) * 16);
	if (!e)
		return tp;
	if (peek(pid, dtv, e, (len + 1) * 16))
		for (i = 1; i <= len; i++)
			if (e[2 * i] >= lo && e[2 * i] < start)
				start = e[2 * i];
	free(e);
	return start;
}
