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
 * along a list, a system call for each of millions of blocks.  Finding
 * the block a word points into, for the millions of words
 * that do, costs about as much as reading: a hash table of the pages that
 * hold blocks takes a word to the few blocks of one sixteenth of a page,
 * in two cache misses that a pipeline overlaps with those of the next
 * words.  And fresh memory costs page faults: the scan's arrays are sorted
 * in place, in huge pages where the kernel has them.
 *
 * This file holds the scan's arrays and threads, passes 2 and 3 (following
 * the edges), the kinds set into the table and msc_scan_process, which runs
 * the passes in order; scan_internal.h says which file holds the others.
 */
#include <errno.h>
#include <pthread.h>
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
#include "scan_internal.h"

/* --------------------------------------------------------------- arrays */

/*
 * The scan's arrays, of a few words per live block: tens of megabytes for
 * a heap of millions of blocks.  Faulting them in a 4 KiB page at a time
 * costs about as much as the sort that fills them, and their random reads
 * a TLB miss each: ask for huge pages.  NULL when out of memory.
 */
void *scan_alloc_array(size_t size)
{
	void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_HUGEPAGE);
	return p;
}

void scan_free_array(void *p, size_t size)
{
	if (p)
		munmap(p, size ? size : 1);
}

/* Makes room for need elements of size elem in *p (of *cap, from
 * scan_alloc_array or NULL), doubling; mremap moves pages, it copies none. */
int scan_grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : (2u << 20) / elem;
	void *q;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (!*p)
		q = scan_alloc_array(ncap * elem);
	else
		q = mremap(*p, *cap * elem, ncap * elem, MREMAP_MAYMOVE);
	if (!q || q == MAP_FAILED)
		return -ENOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

/* -------------------------------------------------------------- threads */

/*
 * Tasks 0..ntasks-1 shared out among n threads, each taking the next one
 * left: fn(ctx, thread, k), thread 0 being the caller.  The others run
 * with every signal blocked (signals are the caller's to handle); one that
 * cannot be made leaves its share to the others.
 */

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

void scan_share_out(unsigned n, unsigned ntasks, share_fn *fn, void *ctx)
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

static void chunk_task(void *ctx, unsigned thread, unsigned k)
{
	struct chunks *c = ctx;

	(void)thread;
	c->fn(c, c->n * k / c->nchunks, c->n * (k + 1) / c->nchunks, k);
}

void scan_run_chunks(struct chunks *c, size_t n, unsigned nthreads,
		     void (*fn)(struct chunks *c, size_t from, size_t to, unsigned k))
{
	c->n = n;
	c->fn = fn;
	c->nchunks = nthreads > 1 ? nthreads * CHUNKS_PER_THREAD : 1;
	scan_share_out(nthreads, c->nchunks, chunk_task, c);
}

/* ------------------------------------------------------------ following */

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
			msc_agg_region(c->a, b->ref >> 2)->kind = kind;
		else if (by_slot)
			by_slot[b->ref >> 2] = kind;
		else
			msc_live_set_kind(msc_agg_live_at(c->a, b->ref >> 2), kind);
	}
}

/* Slots [from, to) of the table take their kinds from by_slot. */
static void kinds_into_table(struct chunks *c, size_t from, size_t to, unsigned k)
{
	const uint8_t *by_slot = (const uint8_t *)c->s->edge_at;
	struct msc_agg *a = c->a;
	struct msc_live *l;
	size_t i;

	(void)k;
	for (i = from; i < to; i++)
		if ((l = msc_agg_live_at(a, i)))
			msc_live_set_kind(l, by_slot[i]);
}

static void set_kinds(struct scan *s, struct msc_agg *a)
{
	struct chunks c = { .s = s, .a = a };

	c.by_slot = msc_live_slots(a) <= (s->nalloc + 1) * sizeof(*s->edge_at);
	scan_run_chunks(&c, s->n, s->nthreads, kinds_of_blocks);
	if (c.by_slot)
		scan_run_chunks(&c, msc_live_slots(a), s->nthreads, kinds_into_table);
}

static int cmp_range(const void *x, const void *y)
{
	const struct msc_range *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
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
	ret = scan_build(&s, a);
	if (ret) {
		ret = msc_err_set(err, ret, "leak scan: %s", ret == -ENOMEM ? "out of memory" :
			"more live blocks than it can tell apart");
		goto out;
	}
	if (!s.n)
		goto out;
	scan_read_all(&s, &p, r, sps, nsps, roots, nroots);
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
	scan_free_array(s.b, s.nalloc * sizeof(*s.b));
	scan_free_array(s.runs, s.runs ? (s.runs_mask + 1) * sizeof(*s.runs) : 0);
	scan_free_array(s.edge_at, (s.nalloc + 1) * sizeof(*s.edge_at));
	scan_free_array(s.state, s.nalloc);
	scan_free_array(s.edges, s.capedges * sizeof(*s.edges));
	scan_free_array(s.work, s.capwork * sizeof(*s.work));
	free(s.big);
	for (i = 0; i < MAX_THREADS; i++)
		free(r[i].buf);
	for (i = 0; i < MAX_PARTS; i++)
		scan_free_array(p.part[i].edges, p.part[i].capedges * sizeof(*p.part[i].edges));
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
