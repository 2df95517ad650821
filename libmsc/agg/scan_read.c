/* SPDX-License-Identifier: MIT */
/*
 * Pass 1 of the scan: every block's memory read once, in address order, by
 * the scan's threads, and of its words those that point into a block kept
 * as its edges; then the roots, whose words mark their targets at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "msc_proc.h"
#include "msc_scan.h"
#include "msc_util.h"
#include "scan_internal.h"

/* ------------------------------------------------------ finding a block */

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

/* ----------------------------------------------------- edges and marks */

/* Where glibc puts the header of the next chunk (chunk sizes are the
 * request plus 8, rounded up to 16, at least 32; data starts 16 bytes in). */
static uint64_t next_chunk_header(const struct scan *s, const struct block *b)
{
	uint64_t size = block_end(s, b) - b->start, csize = (size + 8 + 15) & ~15ull;

	if (csize < 32)
		csize = 32;
	return b->start - 16 + csize;
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
	    scan_grow_array((void **)&pt->edges, &pt->capedges, pt->nedges + 1,
			    sizeof(*pt->edges))) {
		r->error = ENOMEM;
		return;
	}
	if (pt->nedges == UINT32_MAX) {
		r->error = EOVERFLOW;	/* 16 GiB of edges */
		return;
	}
	pt->edges[pt->nedges++] = (uint32_t)i | (w == b->start ? EDGE_START : 0);
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
	if (scan_grow_array((void **)&s->edges, &s->capedges, total, sizeof(*s->edges)))
		return ENOMEM;
	for (k = 1; k < p->nparts; k++) {
		struct part *pt = &p->part[k];

		for (i = pt->edges_from; i < pt->edges_to; i++)
			s->edge_at[i] += (uint32_t)s->nedges;
		if (pt->nedges)
			memcpy(s->edges + s->nedges, pt->edges, pt->nedges * sizeof(*s->edges));
		s->nedges += pt->nedges;
		/* gone as soon as copied: the edges are not all there twice */
		scan_free_array(pt->edges, pt->capedges * sizeof(*pt->edges));
		pt->edges = NULL;
		pt->capedges = 0;
	}
	s->edge_at[s->n] = (uint32_t)s->nedges;
	return 0;
}

/* Pass 1, then the roots. */
void scan_read_all(struct scan *s, struct pass1 *p, struct reader *r, const uint64_t *sps,
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
	scan_share_out(s->nthreads, p->nparts, read_part_task, p);
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
