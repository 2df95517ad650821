/* SPDX-License-Identifier: MIT */
/* Pairing and per-site aggregation of allocation events: see msc_agg.h and agg_internal.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "agg_internal.h"

/* The bucket of the least value of each bit length, and where each
 * bucket ends: a bit length spans less than a decade, so a value is in its
 * length's bucket or the next.  Branch-free: it runs for every free. */
static const uint8_t bucket_of_bits[65] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* < 1024 */
	1, 1, 1, 1,				/* < 16384 */
	2, 2, 2,				/* < 131072 */
	3, 3, 3,				/* < 1048576 */
	4, 4, 4, 4,				/* < 16777216 */
	5, 5, 5,				/* < 134217728 */
	6, 6, 6,				/* < 1073741824 */
	7, 7, 7, 7,				/* < 17179869184 */
	8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
};
static const uint64_t bucket_end[MSC_AGE_BUCKETS] = {
	1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
	10000000000ull, UINT64_MAX,
};

unsigned msc_age_bucket(uint64_t ns)
{
	unsigned b = bucket_of_bits[64 - __builtin_clzll(ns | 1)];

	b += ns >= bucket_end[b];
	return b < MSC_AGE_BUCKETS ? b : MSC_AGE_BUCKETS - 1;	/* ns == UINT64_MAX */
}

uint64_t msc_age_bucket_limit(unsigned b)
{
	uint64_t limit = 1000;

	if (b >= MSC_AGE_BUCKETS - 1)
		return UINT64_MAX;
	while (b--)
		limit *= 10;
	return limit;
}

static struct msc_live *live_map(size_t cap);
static void live_layout(struct msc_agg *a, size_t cap);
static size_t live_bytes(size_t slots);

int msc_agg_init(struct msc_agg *a, const struct msc_agg_opts *o)
{
	memset(a, 0, sizeof(*a));
	a->live = live_map(4096);
	if (a->live)
		live_layout(a, 4096);
	a->site_mask = 1023;
	a->site_index = calloc(a->site_mask + 1, sizeof(*a->site_index));
	if (!a->live || !a->site_index || msc_u64map_init(&a->last_alloc, 64) ||
	    msc_u64map_init(&a->pieces, 16) || msc_u64map_init(&a->big, 16) ||
	    msc_u64map_init(&a->pool_ids, 16) || msc_u64map_init(&a->hidden, 16) ||
	    msc_u64map_init(&a->thread_first, 16)) {
		msc_agg_release(a);
		return -ENOMEM;
	}
	if (o) {
		a->unseen_frees_ok = o->unseen_frees_ok;
		a->no_errors = o->no_errors;
		a->sample = o->sample;
		if (o->hold_window_ns)
			msc_agg_hold(a, o->hold_window_ns);
	}
	return 0;
}

void msc_agg_release(struct msc_agg *a)
{
	if (a->live)
		munmap(a->live, live_bytes(msc_live_slots(a)));
	if (a->sites)
		munmap(a->sites, (size_t)a->sites_cap * sizeof(*a->sites));
	free(a->site_index);
	free(a->stack_sites);
	free(a->class_slots);
	free(a->regions);
	msc_u64map_release(&a->last_alloc);
	msc_u64map_release(&a->pieces);
	msc_u64map_release(&a->big);
	msc_u64map_release(&a->pool_ids);
	msc_u64map_release(&a->hidden);
	msc_u64map_release(&a->thread_first);
	free(a->pools);
	free(a->pool_names);
	free(a->quarantine);
	free(a->q_count);
	free(a->held);
	free(a->queue);
	free(a->recent);
	memset(a, 0, sizeof(*a));
}

uint64_t msc_live_big_size(const struct msc_agg *a, const struct msc_live *l)
{
	const uint64_t *v = msc_u64map_get(&a->big, l->ptr);

	return v ? *v : MSC_LIVE_BIG;
}

/* Fills in a block's time, size and kind (a new block, or one restored). */
static int live_set(struct msc_agg *a, struct msc_live *b, uint64_t ts, uint64_t size, unsigned kind)
{
	uint64_t rel;

	if (!a->ts_based) {
		a->ts_base = ts;
		a->ts_based = true;
	}
	rel = ts > a->ts_base ? ts - a->ts_base : 0;
	if (rel > MSC_LIVE_TS_MASK)
		rel = MSC_LIVE_TS_MASK;
	b->ts_kind = rel | (uint64_t)kind << 56;
	if (size < MSC_LIVE_BIG) {
		b->size = (uint32_t)size;
		return 0;
	}
	b->size = MSC_LIVE_BIG;
	return msc_u64map_put(&a->big, b->ptr, size);
}

/* ------------------------------------------------------------- sampling */

double msc_sample_inverse(uint64_t rate, uint64_t size)
{
	double x = (double)(size ? size : 1) / (double)rate;

	/* 1 / (1 - e^-x) = 1/x + 1/2 + x/12 - x^3/720 + x^5/30240 - ...: for
	 * blocks under a 64th of the rate (most of a sampled recording's)
	 * what is left out is below 1e-15 of it, and the series spares the
	 * collector two calls of expm1 per recorded block. */
	if (x < 0x1p-6)
		return 1 / x + 0.5 + x * (1.0 / 12 - x * x * (1.0 / 720));
	return 1.0 / -expm1(-x);
}

uint64_t msc_sample_weight(uint64_t rate, uint64_t size, uint64_t h)
{
	double w = msc_sample_inverse(rate, size);
	uint64_t n = (uint64_t)w;

	return n + ((double)(msc_hash_u64(h) >> 11) * 0x1p-53 < w - (double)n);
}

void msc_agg_set_unsampled(struct msc_agg *a, bool known, uint64_t allocs, uint64_t bytes,
			   uint64_t frees)
{
	a->unsampled_known = known;
	a->unsampled_allocs = allocs;
	a->unsampled_bytes = bytes;
	a->unsampled_frees = frees;
}

void msc_agg_totals(const struct msc_agg *a, uint64_t *allocs, uint64_t *bytes, uint64_t *frees)
{
	if (!a->sample || !a->unsampled_known) {
		*allocs = a->allocs;
		*bytes = a->bytes;
		*frees = a->frees;
		return;
	}
	*allocs = a->recorded_allocs + a->unsampled_allocs;
	*bytes = a->recorded_bytes + a->unsampled_bytes;
	*frees = a->recorded_frees + a->unsampled_frees;
}

void msc_agg_figures(const struct msc_agg *a, struct msc_agg_figures *f)
{
	msc_agg_totals(a, &f->allocs, &f->bytes, &f->frees);
	f->live_blocks = a->live_blocks;
	f->live_bytes = a->live_bytes;
	f->mapped = a->mapped_live;
	f->heap = a->live_bytes - a->mapped_live;
	f->peak = a->peak_live_bytes;
	f->peak_ts = a->peak_ts;
	f->heap_peak = a->heap_peak;
	f->heap_peak_ts = a->heap_peak_ts;
	f->mapped_peak = a->mapped_peak;
	f->mapped_peak_ts = a->mapped_peak_ts;
	f->temporary = a->temporary;
	f->mmaps = a->mmaps;
	f->mmap_bytes = a->mmap_bytes;
	f->brks = a->brks;
	f->brk_bytes = a->brk_bytes;
	f->unknown_frees = a->unknown_frees;
	f->implicit_frees = a->implicit_frees;
	f->dropped = a->dropped;
	memcpy(f->errors, a->errors, sizeof(f->errors));
	f->sample = a->sample;
	f->recorded_allocs = a->recorded_allocs;
	f->last_ts = a->last_ts;
}

/* ------------------------------------------------------------ live table */

_Static_assert(sizeof(struct msc_live) == 24, "a live block's entry is 24 bytes");

/*
 * The table is mmap'ed, so that it grows in place: mremap() moves its
 * pages (no copy, and no second table beside the first, which for a heap
 * of millions of blocks would be as large again at the moment of growth),
 * and the entries are rehashed where they are (live_grow).
 */
static size_t live_bytes(size_t slots)
{
	/* one more slot than the table's: see MSC_LIVE_TAIL */
	return (slots + 1) * sizeof(struct msc_live);
}

static struct msc_live *live_map(size_t cap)
{
	struct msc_live *l = mmap(NULL, live_bytes(cap + MSC_LIVE_TAIL), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return l == MAP_FAILED ? NULL : l;
}

static void live_layout(struct msc_agg *a, size_t cap)
{
	a->live_mask = cap - 1;
	a->live_limit = cap / 4 * 3;
}

/*
 * Doubles the table in place.  A home is the hash's low bits, so an
 * entry's new home is its old one or that plus the old capacity: going
 * up the old half, each entry is taken out and put back from its new
 * home.  One that stays in the lower half lands at or before its old
 * slot (which was just emptied), behind entries already placed, and
 * nothing placed is moved again; one that moves goes to the upper half,
 * which holds nothing else but them.  The old tail (the slots past the
 * last home, which the upper half now overlaps) is emptied first and its
 * entries put back last.
 */
static int live_grow(struct msc_agg *a)
{
	size_t ocap = a->live_mask + 1, oslots = msc_live_slots(a), ncap = ocap * 2, i, nt = 0;
	struct msc_live *l, *tail;

	if (ncap > (1ull << 32))
		return -ENOMEM;	/* msc_live_hash's range */
	tail = malloc((oslots + 1 - ocap) * sizeof(*tail));
	if (!tail)
		return -ENOMEM;
	l = mremap(a->live, live_bytes(oslots), live_bytes(ncap + MSC_LIVE_TAIL), MREMAP_MAYMOVE);
	if (l == MAP_FAILED) {
		free(tail);
		return -ENOMEM;
	}
	a->live = l;
	for (i = ocap; i <= oslots; i++)
		if (l[i].ptr) {
			tail[nt++] = l[i];
			l[i].ptr = 0;
		}
	live_layout(a, ncap);
	for (i = 0; i < ocap; i++) {
		struct msc_live e;
		size_t h;

		if (!l[i].ptr)
			continue;
		h = live_home(a, l[i].ptr);
		if (h == i)
			continue;
		e = l[i];
		l[i].ptr = 0;
		l[live_place(l, h)] = e;
	}
	for (i = 0; i < nt; i++)
		l[live_place(l, live_home(a, tail[i].ptr))] = tail[i];
	free(tail);
	/* Entries pushed to the last slot (not in any real run): grow again
	 * at the next insertion rather than leave no empty slot at the end. */
	if (l[msc_live_slots(a) - 1].ptr)
		a->live_limit = 0;
	return 0;
}

/* live_probe, growing the table when it must; NULL: no memory. */
static struct msc_live *live_probe_grow(struct msc_agg *a, uint64_t ptr)
{
	struct msc_live *b;

	while (!(b = live_probe(a, ptr)))
		if (live_grow(a))
			return NULL;
	return b;
}

void agg_live_delete(struct msc_agg *a, struct msc_live *slot)
{
	size_t i = (size_t)(slot - a->live), j = i;

	for (;;) {
		j++;
		if (!a->live[j].ptr)
			break;
		if (live_home(a, a->live[j].ptr) <= i) {
			a->live[i] = a->live[j];
			i = j;
		}
	}
	a->live[i].ptr = 0;
	a->live_count--;
}

struct msc_live *agg_live_insert(struct msc_agg *a, uint64_t ptr)
{
	struct msc_live *b = live_probe_grow(a, ptr);

	if (!b)
		return NULL;
	b->ptr = ptr;
	a->live_count++;
	return b;
}

/* ---------------------------------------------------------------- sites */

static inline size_t site_home(uint32_t stack, uint64_t size, size_t mask)
{
	return msc_hash_u64(size * 0x9e3779b97f4a7c15ull ^ stack) & mask;
}

static int site_index_grow(struct msc_agg *a)
{
	size_t ncap = (a->site_mask + 1) * 2, i;
	struct msc_site_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i <= a->site_mask; i++) {
		struct msc_site_slot *s = &a->site_index[i];
		size_t j;

		if (!s->index1)
			continue;
		j = site_home(s->stack, s->size, ncap - 1);
		while (ns[j].index1)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s;
	}
	free(a->site_index);
	a->site_index = ns;
	a->site_mask = ncap - 1;
	return 0;
}

/* The index slot of an exact site, or the empty slot where it would go. */
static struct msc_site_slot *site_slot(struct msc_agg *a, uint32_t stack, uint64_t size)
{
	size_t i = site_home(stack, size, a->site_mask);

	while (a->site_index[i].index1) {
		struct msc_site_slot *sl = &a->site_index[i];

		if (sl->stack == stack && sl->size == size)
			return sl;
		i = (i + 1) & a->site_mask;
	}
	return &a->site_index[i];
}

/* Removes an index slot (backward-shift deletion keeps probes short). */
static void site_slot_delete(struct msc_agg *a, struct msc_site_slot *slot)
{
	size_t i = (size_t)(slot - a->site_index), j = i;

	for (;;) {
		const struct msc_site_slot *n;
		size_t home;

		j = (j + 1) & a->site_mask;
		n = &a->site_index[j];
		if (!n->index1)
			break;
		home = site_home(n->stack, n->size, a->site_mask);
		if (((j - home) & a->site_mask) >= ((j - i) & a->site_mask)) {
			a->site_index[i] = *n;
			i = j;
		}
	}
	a->site_index[i].index1 = 0;
	a->site_count--;
}

static inline uint64_t class_lo(uint64_t size)
{
	return size ? 1ull << (63 - __builtin_clzll(size)) : 0;
}

/* A new site, not yet findable; returns its index or -1. */
static long site_new(struct msc_agg *a, uint32_t stack, uint64_t size, uint64_t size_max,
		     bool classed, unsigned fn, uint64_t ts)
{
	struct msc_site *s;

	if (a->nsites == a->sites_cap) {
		/* Pages of their own, so that a site's hot part is one cache
		 * line, and so that growing moves the pages, not what is on
		 * them: a copy to new pages faulted every one of them in again
		 * (a fifth of ms-record's page faults on the sampled 2-thread
		 * storm, with a new site for many of its recorded blocks). */
		uint32_t ncap = a->sites_cap ? a->sites_cap * 2 : 256;
		size_t osz = (size_t)a->sites_cap * sizeof(*a->sites), nsz = ncap * sizeof(*a->sites);
		void *ns = a->sites ? mremap(a->sites, osz, nsz, MREMAP_MAYMOVE)
				    : mmap(NULL, nsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
					   -1, 0);

		if (ns == MAP_FAILED)
			return -1;
		a->sites = ns;
		a->sites_cap = ncap;
	}
	s = &a->sites[a->nsites];
	memset(s, 0, sizeof(*s));
	s->stack = stack;
	s->size = size;
	s->size_max = size_max;
	s->classed = classed;
	s->fn = (uint8_t)fn;
	s->first_ts = ts;
	s->peak_epoch = a->epoch;
	return (long)a->nsites++;
}

/* The class site of a folded stack for size, made if need be; -1: no memory. */
static long class_site(struct msc_agg *a, const struct msc_stack_sites *ss, uint32_t stack,
		       uint64_t size, unsigned fn, uint64_t ts)
{
	uint32_t *slot = class_slot(a, ss, size);
	uint64_t lo;
	long si;

	if (*slot)
		return (long)*slot - 1;
	lo = class_lo(size);
	si = site_new(a, stack, lo, lo ? 2 * lo - 1 : 0, true, fn, ts);
	if (si >= 0)
		*slot = (uint32_t)si + 1;
	return si;
}

/* The live bytes a site had at the last peak (see msc_agg.h). */
static uint64_t at_peak(const struct msc_agg *a, const struct msc_site *s)
{
	return !a->peak_pending && s->peak_epoch == a->epoch ? s->peak_saved : s->live_bytes;
}

/* The stack has too many sizes: fold its exact sites into size classes. */
static int fold_stack(struct msc_agg *a, uint32_t stack)
{
	struct msc_stack_sites *ss = &a->stack_sites[stack];
	uint32_t small[MSC_AGG_EXACT_SIZES], *order = small, n = 0, i1, k;

	if (a->nclass_blocks == a->class_blocks_cap) {
		uint32_t ncap = a->class_blocks_cap ? a->class_blocks_cap * 2 : 16;
		uint32_t *nc = realloc(a->class_slots, (size_t)ncap * MSC_AGG_CLASSES * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		a->class_slots = nc;
		a->class_blocks_cap = ncap;
	}
	memset(&a->class_slots[(size_t)a->nclass_blocks * MSC_AGG_CLASSES], 0,
	       MSC_AGG_CLASSES * sizeof(*a->class_slots));
	/* The stack's exact sites, oldest first (as they were made): from
	 * its chain, not a walk of every site, which would make each stack
	 * that folds pay for the sites of all the others. */
	for (i1 = ss->exact; i1; i1 = a->sites[i1 - 1].prev_exact)
		n++;
	if (n > MSC_AGG_EXACT_SIZES && !(order = malloc(n * sizeof(*order))))
		return -ENOMEM;
	k = n;
	for (i1 = ss->exact; i1; i1 = a->sites[i1 - 1].prev_exact)
		order[--k] = i1 - 1;
	ss->exact = 0;
	ss->classes = ++a->nclass_blocks;
	ss->last = 0;
	for (k = 0; k < n; k++) {
		uint32_t i = order[k];
		struct msc_site *s = &a->sites[i], *c;
		struct msc_site_slot *sl;
		long ci;
		unsigned b;

		ci = class_site(a, ss, stack, s->size, s->fn, s->first_ts);
		if (ci < 0) {
			if (order != small)
				free(order);
			return -ENOMEM;
		}
		s = &a->sites[i];	/* sites may have moved */
		c = &a->sites[ci];
		/* What each had at the last peak adds up; so do the counts. */
		c->peak_saved = at_peak(a, c) + at_peak(a, s);
		c->peak_epoch = a->epoch;
		c->allocs += s->allocs;
		c->frees += s->frees;
		msc_site_add_samples(c, msc_site_samples(s));
		c->bytes += s->bytes;
		c->live_bytes += s->live_bytes;
		c->temporary += s->temporary;
		for (b = 0; b < MSC_AGE_BUCKETS; b++)
			c->ages[b] += s->ages[b];
		if (s->first_ts < c->first_ts)
			c->first_ts = s->first_ts;
		if (s->last_ts > c->last_ts)
			c->last_ts = s->last_ts;
		/* A class's own peak over time cannot be rebuilt from its
		 * members' peaks: it is not reported. */
		c->peak_inexact = true;
		s->removed = true;
		s->forward = (uint32_t)ci;
		/* Never looked up again: the index stays as small as the
		 * exact sites in use. */
		sl = site_slot(a, stack, s->size);
		if (sl->index1 == i + 1)
			site_slot_delete(a, sl);
	}
	if (order != small)
		free(order);
	return 0;
}

/* site_get() for the sites it does not find at once: a stack id beyond the
 * table, an empty class slot, or an exact size other than the last one. */
long agg_site_get_slow(struct msc_agg *a, uint32_t stack, uint64_t size, unsigned fn,
			  uint64_t ts)
{
	struct msc_stack_sites *ss;
	struct msc_site_slot *sl;
	long si;

	if (stack >= a->stack_sites_cap) {
		uint32_t ncap = a->stack_sites_cap ? a->stack_sites_cap : 1024;
		struct msc_stack_sites *ns;

		while (ncap <= stack)
			ncap *= 2;
		ns = realloc(a->stack_sites, ncap * sizeof(*ns));
		if (!ns)
			return -1;
		memset(ns + a->stack_sites_cap, 0, (ncap - a->stack_sites_cap) * sizeof(*ns));
		a->stack_sites = ns;
		a->stack_sites_cap = ncap;
	}
	ss = &a->stack_sites[stack];
	if (ss->classes)
		return class_site(a, ss, stack, size, fn, ts);
	sl = site_slot(a, stack, size);
	if (sl->index1) {
		si = (long)sl->index1 - 1;
	} else if (ss->nexact < MSC_AGG_EXACT_SIZES || fn == MSC_FN_MMAP) {
		/* Mappings' sizes never fold a stack; they count on. */
		if ((a->site_count + 1) * 4 > (a->site_mask + 1) * 3) {
			if (site_index_grow(a))
				return -1;
			sl = site_slot(a, stack, size);
		}
		si = site_new(a, stack, size, size, false, fn, ts);
		if (si < 0)
			return -1;
		*sl = (struct msc_site_slot){ size, stack, (uint32_t)si + 1 };
		a->sites[si].prev_exact = ss->exact;
		ss->exact = (uint32_t)si + 1;
		a->site_count++;
		if (ss->nexact < UINT16_MAX)
			ss->nexact++;
	} else {
		if (fold_stack(a, stack))
			return -1;
		return class_site(a, ss, stack, size, fn, ts);
	}
	ss->last_size = size;
	ss->last = (uint32_t)si + 1;
	return si;
}

uint64_t msc_agg_peak_contribution(const struct msc_agg *a, const struct msc_site *s)
{
	/* A peak still pending is the current state. */
	return at_peak(a, s);
}

/* --------------------------------------------------------------- events */

/*
 * Called by alloc_key_in and free_key_in (given the event by msc_agg_apply
 * when it may be held) where the event finds its address in the wrong
 * state: an allocation of a live one, a free of an unknown one.  Applying
 * it then waits for its partner (msc_agg_push_held).
 */
static void hold_add(struct msc_agg *a, const struct msc_cevent *ev)
{
	a->held[a->nheld++] = *ev;
	a->held_keys[hold_slot(event_key(ev))]++;
}

/* Holds ev, a free of a live block, when another thread allocated that
 * address just before (msc_recent); true if it did. */
static bool hold_ambiguous(struct msc_agg *a, const struct msc_cevent *ev)
{
	if (!recent_other(a, ev->free.ptr, ev->tid, ev->ts))
		return false;
	hold_add(a, ev);
	a->held[a->nheld - 1].v[2] |= HELD_AMBIGUOUS;
	return true;
}

static inline uint64_t *last_alloc_of(struct msc_agg *a, uint32_t tid)
{
	struct msc_last *l = &a->last[tid & (MSC_AGG_LAST - 1)];

	if (l->tid == tid + 1)
		return &l->ptr;
	return msc_u64map_get(&a->last_alloc, (uint64_t)tid + 1);
}

static inline void set_last_alloc(struct msc_agg *a, uint32_t tid, uint64_t ptr)
{
	struct msc_last *l = &a->last[tid & (MSC_AGG_LAST - 1)];

	if (l->tid == tid + 1 || !l->tid) {
		l->tid = tid + 1;
		l->ptr = ptr;
		return;
	}
	msc_u64map_put(&a->last_alloc, (uint64_t)tid + 1, ptr);
}

/* An allocation of the block keyed ptr (see struct msc_live); pool_name:
 * its pool's name's index + 1, 0 = none.  hold: the event, when the order
 * repair may hold it (msc_agg_apply), else NULL. */

static inline __attribute__((always_inline)) int
alloc_key_in(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, uint64_t size,
	     uint32_t stack, unsigned fn, uint32_t pool_name, const struct msc_cevent *hold)
{
	struct msc_live *b;
	struct msc_site *s;
	long si;

	if (ts > a->last_ts)
		a->last_ts = ts;
	if (msc_unlikely(a->hidden.count))
		msc_u64map_del(&a->hidden, ptr, NULL);
	b = live_probe_grow(a, ptr);
	if (!b)
		goto oom;
	if (b->ptr && msc_unlikely(hold)) {
		hold_add(a, hold);
		return MSC_AGG_HELD;
	}
	if (msc_unlikely(a->recent)) {
		struct msc_recent *r = &a->recent[recent_slot(ptr)];

		r->ptr = ptr;
		r->ts = ts;
		r->tid = tid;
	}
	if (b->ptr) {
		/* The address is live: its free never reached us.  Count the
		 * old block as freed here rather than lose the new one. */
		struct msc_site *old = msc_agg_site(a, b->site);
		uint64_t born = msc_live_ts(a, b), osize = msc_live_size(a, b);

		release_block(a, old, osize, ts >= born ? ts - born : 0, false,
			      block_weight(a, b, osize));
		live_unset(a, b);
		a->implicit_frees++;
		a->live_count--;
	}
	si = site_get(a, stack, size, fn, ts);
	if (si < 0) {
		if (b->ptr)
			agg_live_delete(a, b), a->live_count++;
		goto oom;
	}
	b->ptr = ptr;
	a->live_count++;
	s = &a->sites[si];
	b->site = (uint32_t)si;
	if (live_set(a, b, ts, size, MSC_LEAK_UNSCANNED)) {
		agg_live_delete(a, b);
		goto oom;
	}
	if (pool_name && !s->pool)
		s->pool = pool_name;
	touch(a, s);
	if (msc_likely(!a->sample)) {
		s->allocs++;
		s->bytes += size;
		s->live_bytes += size;
		a->allocs++;
		a->bytes += size;
		a->live_blocks++;
		a->live_bytes += size;
	} else {
		uint64_t w = block_weight(a, b, size);

		s->allocs += w;
		s->bytes += w * size;
		s->live_bytes += w * size;
		a->allocs += w;
		a->bytes += w * size;
		a->live_blocks += w;
		a->live_bytes += w * size;
		a->recorded_allocs++;
		a->recorded_bytes += size;
		if (msc_unlikely(!++s->samples))
			s->samples_hi++;
	}
	s->last_ts = ts;
	after_alloc(a, s, ts);
	set_last_alloc(a, tid, ptr);
	return 0;
oom:
	a->dropped++;
	return -ENOMEM;
}

/* alloc_key_in out of line, for all but msc_agg_apply (per event). */
int agg_alloc_key(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, uint64_t size,
		     uint32_t stack, unsigned fn, uint32_t pool_name,
		     const struct msc_cevent *hold)
{
	return alloc_key_in(a, ts, tid, ptr, size, stack, fn, pool_name, hold);
}

int msc_agg_alloc(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, uint64_t size,
		  uint32_t stack, unsigned fn)
{
	return agg_alloc_key(a, ts, tid, block_key(ptr, fn), size, stack, fn, 0, NULL);
}

/* A free of the block keyed ptr (see struct msc_live); hold: as for
 * alloc_key. */
static inline __attribute__((always_inline)) int
free_key_in(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
	    uint32_t stack, struct msc_freed *out, const struct msc_agg_error **errp,
	    const struct msc_cevent *hold, bool shim_temporary)
{
	struct msc_live *b;
	struct msc_site *s;
	uint64_t *last, size, born;
	bool temporary = false, ambiguous;

	if (ts > a->last_ts)
		a->last_ts = ts;
	if (msc_unlikely(a->hold_how == MSC_HOLD_UNSEEN)) {
		a->unknown_frees++;
		return 0;
	}
	b = live_find(a, ptr);
	if (!b && msc_unlikely(a->hidden.count) && msc_u64map_del(&a->hidden, ptr, NULL))
		return MSC_AGG_HIDDEN;
	if (!b && msc_unlikely(hold)) {
		hold_add(a, hold);
		return MSC_AGG_HELD;
	}
	if (!b) {
		a->unknown_frees++;
		if (msc_fn_checked(fn) && !a->no_errors &&
		    msc_agg_unseen_free(a, ts, tid, ptr, fn, stack) && errp)
			*errp = &a->err;
		return 0;
	}
	if (msc_unlikely(a->recent) && hold && hold_ambiguous(a, hold))
		return MSC_AGG_HELD;
	ambiguous = msc_unlikely(a->recent) &&
		    (a->hold_how == MSC_HOLD_AMBIGUOUS || recent_other(a, ptr, tid, ts));
	s = msc_agg_site(a, b->site);
	if (msc_fn_family(s->fn) != msc_fn_family(fn) && msc_fn_checked(fn) && !a->no_errors &&
	    msc_agg_mismatch(a, ts, tid, b, s, fn, stack) && errp)
		*errp = &a->err;
	/* Sampled: whether the thread allocated in between is not known
	 * here (the shim tells: it counts down every allocation). */
	last = msc_likely(!a->sample) ? last_alloc_of(a, tid) : NULL;
	if (last && *last == ptr) {
		temporary = true;
		*last = 0;
	} else if (shim_temporary && a->sample) {
		temporary = true;
	}
	size = msc_live_size(a, b);
	born = msc_live_ts(a, b);
	if (out) {
		out->size = size;
		out->stack = s->stack;
		out->fn = s->fn;
		out->alloc_ts = born;
	}
	if (msc_fn_is_realloc(fn)) {
		a->undo[a->undo_next] = (struct msc_undo){
			*b, size, (uint8_t)msc_age_bucket(ts >= born ? ts - born : 0), temporary
		};
		a->undo_next = (a->undo_next + 1) % (sizeof(a->undo) / sizeof(a->undo[0]));
	}
	release_block(a, s, size, ts >= born ? ts - born : 0, temporary, block_weight(a, b, size));
	a->recorded_frees++;
	/* Sampled, a free of a block already freed never comes (the shim
	 * sends only the frees of blocks in its set): no quarantine, whose
	 * pages were a sixth of the collector's page faults on the sampled
	 * 2-thread storm. */
	if (msc_fn_checked(fn) && !a->no_errors && !a->sample)
		msc_agg_quarantine(a, &(struct msc_quarantined){ ptr, size, ts, s->stack, stack, tid,
								  s->fn, (uint8_t)fn, ambiguous });
	live_unset(a, b);
	agg_live_delete(a, b);
	return 1;
}

int agg_free_key(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
		    uint32_t stack, struct msc_freed *out, const struct msc_cevent *hold)
{
	return free_key_in(a, ts, tid, ptr, fn, stack, out, NULL, hold, false);
}

int msc_agg_free(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
		 uint32_t stack, struct msc_freed *out)
{
	return agg_free_key(a, ts, tid, block_key(ptr, fn), fn, stack, out, NULL);
}

/* ------------------------------------------------------------ prefetch */

/*
 * An allocation reads three lines the batch's others do not share: its
 * stack's entry (stack_sites), the slot naming the site of its size class
 * (class_slots, for a folded stack) and the site; a free, its live entry
 * and its site's two lines.  Each needs the one before, so one event's misses come one
 * after the other; a batch's are asked for stage by stage, each stage for
 * every event, and overlap.  On the storm (4,600 sites) that was half the
 * collector's time.
 */
void msc_agg_prefetch_batch(const struct msc_agg *a, const struct msc_cevent *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t key = event_key(&ev[i]);

		if (key)
			msc_agg_prefetch(a, key);
		if (ev[i].type == MSC_CEV_ALLOC && ev[i].stack < a->stack_sites_cap)
			__builtin_prefetch(&a->stack_sites[ev[i].stack]);
	}
	for (i = 0; i < n; i++) {
		uint64_t key = event_key(&ev[i]);

		if (ev[i].type == MSC_CEV_ALLOC && ev[i].stack < a->stack_sites_cap) {
			const struct msc_stack_sites *ss = &a->stack_sites[ev[i].stack];

			if (ss->classes)
				__builtin_prefetch(class_slot(a, ss, ev[i].v[1]));
			else if (ss->last)
				__builtin_prefetch(&a->sites[ss->last - 1]);
		} else if (ev[i].type == MSC_CEV_FREE && key) {
			const struct msc_live *b = live_find(a, key);

			/* a free's counts are in the site's second line */
			if (b) {
				__builtin_prefetch(&a->sites[b->site]);
				__builtin_prefetch((const char *)&a->sites[b->site] + 64);
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (ev[i].type == MSC_CEV_ALLOC && ev[i].stack < a->stack_sites_cap) {
			const struct msc_stack_sites *ss = &a->stack_sites[ev[i].stack];

			if (ss->classes) {
				uint32_t i1 = *class_slot(a, ss, ev[i].v[1]);

				if (i1)
					__builtin_prefetch(&a->sites[i1 - 1]);
			}
		}
	}
}

/* msc_agg_apply's events other than the malloc family's allocations and
 * frees: out of its way, which runs for every event. */
static __attribute__((noinline)) int apply_other(struct msc_agg *a, const struct msc_cevent *ev,
						 struct msc_freed *fr)
{
	switch (ev->type) {
	case MSC_CEV_ALLOC:
		msc_agg_pool_alloc(a, ev->ts, ev->tid, ev->alloc.pool, ev->alloc.ptr,
				   ev->alloc.size, ev->stack);
		return 0;
	case MSC_CEV_FREE:
		return msc_agg_pool_free(a, ev->ts, ev->tid, ev->free.pool, ev->free.ptr, ev->stack,
					 fr) > 0 ? MSC_AGG_FREED : MSC_AGG_APPLIED;
	case MSC_CEV_POOL_CREATE: {
		char name[MSC_POOL_NAME];

		memcpy(name, ev->pool.name, MSC_POOL_NAME);
		name[MSC_POOL_NAME - 1] = '\0';
		msc_agg_pool_create(a, ev->pool.id, name);
		return 0;
	}
	case MSC_CEV_POOL_DESTROY:
		msc_agg_pool_destroy(a, ev->ts, ev->pool.id);
		return 0;
	case MSC_CEV_UNFREE:
		msc_agg_unfree(a, ev->ts, ev->tid, ev->block.ptr);
		return 0;
	case MSC_CEV_HIDDEN:
		msc_agg_hidden(a, ev->block.ptr);
		return 0;
	case MSC_CEV_MMAP:
		msc_agg_mmap(a, ev->ts, ev->tid, ev->map.addr, ev->map.len, ev->stack);
		return 0;
	case MSC_CEV_MUNMAP:
		msc_agg_munmap(a, ev->ts, ev->map.addr, ev->map.len);
		return 0;
	case MSC_CEV_MREMAP:
		msc_agg_mremap(a, ev->ts, ev->tid, ev->remap.old, ev->remap.old_len, ev->remap.addr,
			       ev->remap.len, ev->stack);
		return 0;
	case MSC_CEV_BRK:
		msc_agg_brk(a, ev->ts, ev->tid, ev->brk.old_end, ev->brk.new_end, ev->stack);
		return 0;
	default:
		return MSC_AGG_NOT_MINE;
	}
}

int msc_agg_apply(struct msc_agg *a, const struct msc_cevent *ev, struct msc_agg_result *res)
{
	int r;

	if (ev->type == MSC_CEV_ALLOC && !pool_event(ev)) {
		r = alloc_key_in(a, ev->ts, ev->tid, block_key(ev->alloc.ptr, ev->fn), ev->alloc.size,
				 ev->stack, ev->fn, 0, hold_may(a) ? ev : NULL);
		return r == MSC_AGG_HELD ? r : MSC_AGG_APPLIED;
	}
	if (ev->type == MSC_CEV_FREE && !pool_event(ev)) {
		r = free_key_in(a, ev->ts, ev->tid, block_key(ev->free.ptr, ev->fn), ev->fn,
				ev->stack, &res->freed, &res->error, hold_may(a) ? ev : NULL,
				ev->free.temporary != 0);
		return r == MSC_AGG_HELD || r == MSC_AGG_HIDDEN ? r : r > 0 ? MSC_AGG_FREED :
									  MSC_AGG_APPLIED;
	}
	return apply_other(a, ev, &res->freed);
}
