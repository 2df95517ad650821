/* SPDX-License-Identifier: MIT */
/* Reachability of live blocks, memcheck style: see msc_scan.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "msc_proc.h"
#include "msc_scan.h"
#include "msc_stream.h"
#include "msc_util.h"

enum state { UNREACHED = 0, POSSIBLE, REACHABLE, INDIRECT };

struct block {
	uint64_t start, end;		/* end > start even for size 0 */
	uint8_t state;
	uint8_t region;			/* an mmap region (else a live slot) */
	uint8_t custom;			/* from memscope.h, maybe inside another */
	uint32_t ref;			/* index of the slot or region */
};

struct scan {
	struct block *b;
	size_t n;
	size_t ncustom;			/* b[0..ncustom) custom, then the others */
	uint64_t lo, hi;		/* all blocks lie in [lo, hi) */
	size_t *work;			/* stack of block indexes to scan */
	size_t nwork, capwork;
	int pid;
	const struct msc_range *exclude;
	size_t nexclude;
	char *buf;
	size_t bufsize;
	struct msc_scan_stats *st;
	int error;
};

#define BUF_SIZE (4u << 20)
#define IOV_BATCH 512

static int cmp_block(const void *x, const void *y)
{
	const struct block *a = x, *b = y;

	if (a->custom != b->custom)
		return a->custom ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The block of b[first..last) (sorted, disjoint) containing addr, or -1. */
static long find_in(const struct block *b, size_t first, size_t last, uint64_t addr)
{
	size_t lo = first, hi = last;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (b[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < last && b[lo].start <= addr)
		return (long)lo;
	return -1;
}

/*
 * The block containing addr, or -1.  Custom blocks (memscope.h) may lie
 * inside a heap block (a pool's chunk): they are searched first, so a
 * pointer to a pooled object is a pointer to that object.
 */
static long find_block(const struct scan *s, uint64_t addr)
{
	long i;

	if (addr < s->lo || addr >= s->hi)
		return -1;
	i = s->ncustom ? find_in(s->b, 0, s->ncustom, addr) : -1;
	return i >= 0 ? i : find_in(s->b, s->ncustom, s->n, addr);
}

static int push(struct scan *s, size_t i)
{
	if (MSC_GROW(s->work, s->nwork + 1, s->capwork, 1024)) {
		/* A block marked but never scanned would make what only it
		 * points to look lost: fail the scan. */
		s->error = ENOMEM;
		return -ENOMEM;
	}
	s->work[s->nwork++] = i;
	return 0;
}

/* Where glibc puts the header of the next chunk (chunk sizes are the
 * request plus 8, rounded up to 16, at least 32; data starts 16 bytes in). */
static uint64_t next_chunk_header(const struct block *b)
{
	uint64_t size = b->end - b->start, csize = (size + 8 + 15) & ~15ull;

	if (csize < 32)
		csize = 32;
	return b->start - 16 + csize;
}

/*
 * A word that may point into a block.  definite: the word was found in a
 * root or a reachable block.  In the clique pass (leader != -1) reached
 * unreached blocks become indirect instead.
 */
static void consider(struct scan *s, uint64_t word, bool definite, long leader)
{
	long i = find_block(s, word);
	struct block *b;

	if (i < 0 || i == leader)
		return;
	b = &s->b[i];
	/*
	 * glibc's arena keeps pointers to chunk headers (the top chunk, bins).
	 * The header of the chunk after a block lies in the block's last 8
	 * requested bytes when the request fills its chunk: such a pointer is
	 * the allocator's, not the program's.
	 */
	if (!b->region && word == next_chunk_header(b) && word != b->start)
		return;
	if (leader >= 0) {
		if (b->state == UNREACHED) {
			b->state = INDIRECT;
			push(s, (size_t)i);
		}
		return;
	}
	if (b->state == REACHABLE)
		return;
	if (word == b->start && definite) {
		b->state = REACHABLE;
		push(s, (size_t)i);
	} else if (b->state == UNREACHED) {
		b->state = POSSIBLE;
		push(s, (size_t)i);
	}
}

static void scan_words(struct scan *s, const char *buf, size_t len, bool definite, long leader)
{
	const uint64_t *w = (const uint64_t *)buf;
	size_t i, n = len / 8;

	for (i = 0; i < n; i++)
		if (w[i] >= s->lo && w[i] < s->hi)
			consider(s, w[i], definite, leader);
}

/* Reads [addr, addr+len) of the target in buffer-sized pieces and scans it. */
static void scan_range(struct scan *s, uint64_t addr, uint64_t len, bool definite, long leader,
		       bool root)
{
	addr = (addr + 7) & ~7ull;
	while (len >= 8) {
		size_t chunk = len < s->bufsize ? (size_t)len : s->bufsize;
		struct iovec local = { s->buf, chunk }, remote = { (void *)(uintptr_t)addr, chunk };
		ssize_t got = process_vm_readv(s->pid, &local, 1, &remote, 1, 0);

		if (got <= 0) {
			if (got < 0 && (errno == EPERM || errno == ESRCH))
				s->error = errno;
			return;		/* unmapped meanwhile: nothing to scan */
		}
		if (root)
			s->st->root_bytes += (uint64_t)got;
		else
			s->st->block_bytes += (uint64_t)got;
		scan_words(s, s->buf, (size_t)got, definite, leader);
		addr += (uint64_t)got;
		len -= (uint64_t)got < len ? (uint64_t)got : len;
	}
}

/*
 * Scans the blocks on the work stack, many per process_vm_readv.  A block
 * is scanned with the state it had when it was pushed; a block upgraded
 * from possible to reachable is pushed again.
 */
static void drain(struct scan *s, long leader)
{
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	size_t idx[IOV_BATCH];
	uint8_t state[IOV_BATCH];

	while (s->nwork && !s->error) {
		size_t nio = 0, used = 0, k;
		ssize_t got;
		size_t off = 0;

		while (s->nwork && nio < IOV_BATCH) {
			size_t i = s->work[s->nwork - 1];
			struct block *b = &s->b[i];
			uint64_t len = (b->end - b->start) & ~7ull;

			if (len > s->bufsize) {
				/* Big block: on its own. */
				if (nio)
					break;
				s->nwork--;
				scan_range(s, b->start, len, b->state == REACHABLE, leader, false);
				continue;
			}
			if (used + len > s->bufsize)
				break;
			s->nwork--;
			if (!len)
				continue;
			local[nio] = (struct iovec){ s->buf + used, len };
			remote[nio] = (struct iovec){ (void *)(uintptr_t)b->start, len };
			idx[nio] = i;
			state[nio] = b->state;
			used += len;
			nio++;
		}
		if (!nio)
			continue;
		got = process_vm_readv(s->pid, local, nio, remote, nio, 0);
		if (got < 0) {
			if (errno == EPERM || errno == ESRCH) {
				s->error = errno;
				return;
			}
			got = 0;
		}
		s->st->block_bytes += (uint64_t)got;
		/* A short read stops at the first block that failed: scan what
		 * came, then retry the rest one by one. */
		for (k = 0; k < nio; k++) {
			size_t len = local[k].iov_len;
			bool definite = leader < 0 && state[k] == REACHABLE;

			if (off + len <= (size_t)got) {
				scan_words(s, local[k].iov_base, len, definite, leader);
			} else {
				const struct block *b = &s->b[idx[k]];

				if (off < (size_t)got)
					scan_words(s, local[k].iov_base, (size_t)got - off, definite,
						   leader);
				else
					scan_range(s, b->start, len, definite, leader, false);
			}
			off += len;
		}
	}
}

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
static void scan_root(struct scan *s, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < s->nexclude && start < end; i++) {
		const struct msc_range *x = &s->exclude[i];

		if (x->end <= start || x->start >= end)
			continue;
		if (x->start > start)
			scan_range(s, start, x->start - start, true, -1, true);
		start = x->end;
	}
	if (start < end)
		scan_range(s, start, end - start, true, -1, true);
}

static int cmp_range(const void *x, const void *y)
{
	const struct msc_range *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

struct roots {
	struct scan *s;
	uint64_t sp;
};

/* A writable mapping that is not a heap (its blocks are scanned when
 * reached) nor ours is a root: data, bss, stacks, other memory. */
static int scan_mapping(const struct msc_mapping *m, void *arg)
{
	struct roots *r = arg;
	struct scan *s = r->s;
	uint64_t start = m->start;

	if (m->perms[0] != 'r' || m->perms[1] != 'w')
		return 0;
	if (strcmp(m->path, "[vvar]") == 0 || strcmp(m->path, "[vsyscall]") == 0 ||
	    strcmp(m->path, "[vdso]") == 0 || memscope_own(m->path))
		return 0;
	if (holds_block(s, m->start, m->end))
		return 0;
	if (r->sp && r->sp >= m->start && r->sp < m->end)
		start = r->sp & ~7ull;	/* below sp is dead stack */
	scan_root(s, start, m->end);
	drain(s, -1);
	return s->error ? 1 : 0;
}

static void scan_roots(struct scan *s, uint64_t sp)
{
	struct roots r = { s, sp };
	struct msc_procfs fs;
	int ret;

	if (msc_procfs_init(&fs, NULL)) {
		s->error = ENAMETOOLONG;
		return;
	}
	ret = msc_proc_maps(&fs, s->pid, scan_mapping, &r, NULL);
	if (ret < 0 && !s->error)
		s->error = -ret;
	msc_procfs_release(&fs);
}

int msc_scan_process(struct msc_agg *a, int pid, uint64_t sp, const struct msc_range *exclude,
		     size_t nexclude, struct msc_scan_stats *st, struct msc_err *err)
{
	struct msc_range *ex = NULL;
	struct msc_scan_stats dummy;
	struct scan s = { 0 };
	uint64_t t0 = msc_now_monotonic();
	size_t i, n = 0;
	int ret = 0;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	s.pid = pid;
	s.st = st;
	s.bufsize = BUF_SIZE;
	s.n = a->live_count + a->nregions;
	s.b = malloc((s.n ? s.n : 1) * sizeof(*s.b));
	s.buf = malloc(s.bufsize);
	if (nexclude) {
		ex = malloc(nexclude * sizeof(*ex));
		if (ex) {
			memcpy(ex, exclude, nexclude * sizeof(*ex));
			qsort(ex, nexclude, sizeof(*ex), cmp_range);
			s.exclude = ex;
			s.nexclude = nexclude;
		}
	}
	if (!s.b || !s.buf || (nexclude && !ex)) {
		ret = msc_err_set(err, -ENOMEM, "leak scan: out of memory");
		goto out;
	}
	for (i = 0; i <= a->live_mask; i++) {
		const struct msc_live *l = &a->live[i];
		uint64_t size;

		uint64_t ptr = l->ptr & ~MSC_CUSTOM_KEY;

		if (!l->ptr)
			continue;
		size = msc_live_size(a, l);
		s.b[n++] = (struct block){ ptr, ptr + (size ? size : 1), UNREACHED, 0,
					   (l->ptr & MSC_CUSTOM_KEY) != 0, (uint32_t)i };
	}
	for (i = 0; i < a->nregions; i++)
		s.b[n++] = (struct block){ a->regions[i].start, a->regions[i].end, UNREACHED, 1, 0,
					   (uint32_t)i };
	s.n = n;
	if (!n)
		goto out;
	qsort(s.b, n, sizeof(*s.b), cmp_block);
	s.lo = UINT64_MAX;
	s.hi = 0;
	for (i = 0; i < n; i++) {
		if (s.b[i].custom)
			s.ncustom = i + 1;
		if (s.b[i].start < s.lo)
			s.lo = s.b[i].start;
		if (s.b[i].end > s.hi)
			s.hi = s.b[i].end;
	}
	scan_roots(&s, sp);
	if (!s.error) {
		/* Leaks: every block a leader can reach is indirectly lost. */
		for (i = 0; i < n && !s.error; i++) {
			if (s.b[i].state != UNREACHED)
				continue;
			push(&s, i);
			drain(&s, (long)i);
		}
	}
	if (s.error) {
		ret = msc_err_set(err, -s.error, "leak scan of pid %d: %s", pid, strerror(s.error));
		goto out;
	}
	for (i = 0; i < n; i++) {
		static const uint8_t kind_of[] = {
			[UNREACHED] = MSC_LEAK_DEFINITELY, [POSSIBLE] = MSC_LEAK_POSSIBLY,
			[REACHABLE] = MSC_LEAK_REACHABLE, [INDIRECT] = MSC_LEAK_INDIRECTLY,
		};
		uint8_t kind = kind_of[s.b[i].state];

		if (s.b[i].region)
			a->regions[s.b[i].ref].kind = kind;
		else
			msc_live_set_kind(&a->live[s.b[i].ref], kind);
	}
	st->blocks = n;
out:
	st->ns = msc_now_monotonic() - t0;
	free(s.b);
	free(s.buf);
	free(s.work);
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
