/* SPDX-License-Identifier: MIT */
/*
 * The scan's blocks: the live blocks and regions of the table, sorted by
 * address in place, and the index that finds the block a word points into
 * (the page runs and the big blocks).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "msc_scan.h"
#include "msc_util.h"
#include "scan_internal.h"

/* The threads of a scan of bytes of blocks: see MAX_THREADS. */
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
	scan_share_out(nthreads, ntasks, sort_task_run, task);
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
	s->runs = scan_alloc_array(slots * sizeof(*s->runs));
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

/* The fill's first pass: how many live blocks chunk k of the table has. */
static void count_chunk(struct chunks *c, size_t from, size_t to, unsigned k)
{
	size_t i, n = 0;

	for (i = from; i < to; i++)
		n += msc_agg_live_at(c->a, i) != NULL;
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
		const struct msc_live *l = msc_agg_live_at(a, i);
		uint64_t size;

		if (!l)
			continue;
		size = msc_live_size(a, l);
		/* a custom or pool block's key holds more than its address */
		*b++ = (struct block){ MSC_KEY_ADDR(l->ptr),
				       size >= HUGE_SIZE ? HUGE_SIZE : size ? (uint32_t)size : 1,
				       (uint32_t)i << 2 | (l->ptr & MSC_CUSTOM_KEY ? REF_CUSTOM : 0) };
	}
}

/* The live blocks and regions of a, custom blocks first, each part sorted
 * by address, with what finds them. */
int scan_build(struct scan *s, struct msc_agg *a)
{
	struct chunks c = { .s = s, .a = a };
	size_t i, n, nlive = msc_agg_live_count(a), nregions = msc_agg_nregions(a);
	uint64_t bytes = a->live_bytes;
	unsigned k;

	s->a = a;
	if (nlive + nregions >= EDGE_START || msc_live_slots(a) > REF_MAX || nregions > REF_MAX)
		return -EOVERFLOW;
	for (i = 0; i < nregions; i++)
		bytes += msc_agg_region(a, i)->end - msc_agg_region(a, i)->start;
	s->nthreads = threads_for(bytes);
	s->nalloc = nlive + nregions;
	s->b = scan_alloc_array(s->nalloc * sizeof(*s->b));
	if (!s->b)
		return -ENOMEM;
	scan_run_chunks(&c, msc_live_slots(a), s->nthreads, count_chunk);
	for (k = 0; k < c.nchunks; k++)
		c.at[k + 1] += c.at[k];
	if (c.at[c.nchunks] != nlive)
		return -EOVERFLOW;	/* the table's count is off: no scan */
	scan_run_chunks(&c, msc_live_slots(a), s->nthreads, fill_chunk);
	n = c.at[c.nchunks];
	for (i = 0; i < nregions; i++) {
		const struct msc_region *r = msc_agg_region(a, i);
		uint64_t size = r->end - r->start;

		s->b[n++] = (struct block){ r->start,
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
	s->state = scan_alloc_array(s->nalloc);
	s->edge_at = scan_alloc_array((s->nalloc + 1) * sizeof(*s->edge_at));
	if (!s->state || !s->edge_at)
		return -ENOMEM;
	return build_index(s);
}
