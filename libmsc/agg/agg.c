/* SPDX-License-Identifier: MIT */
/* Pairing and per-site aggregation of allocation events: see msc_agg.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "msc_agg.h"
#include "msc_err.h"
#include "msc_proto.h"
#include "msc_util.h"

static const char *const kind_names[MSC_LEAK_KINDS] = {
	"unscanned", "definitely", "indirectly", "possibly", "reachable", "unknown",
};

const char *msc_leak_kind_name(unsigned kind)
{
	return kind < MSC_LEAK_KINDS ? kind_names[kind] : "unscanned";
}

int msc_leak_kind_parse(const char *name)
{
	unsigned i;

	for (i = 0; i < MSC_LEAK_KINDS; i++)
		if (strcmp(kind_names[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

bool msc_leak_kind_leaked(unsigned kind)
{
	return kind == MSC_LEAK_DEFINITELY || kind == MSC_LEAK_INDIRECTLY || kind == MSC_LEAK_UNSCANNED;
}

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

int msc_agg_init(struct msc_agg *a)
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

/* Forgets a block's big size, if it had one (the block is going). */
static void live_unset(struct msc_agg *a, const struct msc_live *b)
{
	if (b->size == MSC_LIVE_BIG)
		msc_u64map_del(&a->big, b->ptr, NULL);
}

/* ------------------------------------------------------------- sampling */

double msc_sample_inverse(uint64_t rate, uint64_t size)
{
	double x = (double)(size ? size : 1) / (double)rate;

	/* 1 / (1 - e^-x) = 1/x + 1/2 + x/12 - x^3/720 + x^5/30240 - ...: for
	 * blocks under a 64th of the rate (most of a sampled recording's)
	 * what is left out is below 1e-15 of it, and expm1 cost the collector
	 * 6 % of its instructions (twice a recorded block). */
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

/* A live block's weight (see msc_agg.h): what it counts for. */
static inline uint64_t block_weight(const struct msc_agg *a, const struct msc_live *b, uint64_t size)
{
	if (msc_likely(!a->sample) || (b->ptr & MSC_CUSTOM_KEY))
		return 1;
	return msc_sample_weight(a->sample, size,
				 b->ptr ^ (b->ts_kind & MSC_LIVE_TS_MASK) * 0x9e3779b97f4a7c15ull);
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

/* ------------------------------------------------------------ live table */

_Static_assert(sizeof(struct msc_live) == 24, "a live block's entry is 24 bytes");

static inline size_t live_home(const struct msc_agg *a, uint64_t ptr)
{
	return msc_live_hash(ptr, a->live_mask);
}

/*
 * The table is mmap'ed, so that it grows in place: mremap() moves its
 * pages (no copy, and no second table beside the first: at 4.5M blocks
 * that was 96 MiB more at the moment of growth), and the entries are
 * rehashed where they are (live_grow).  (MADV_HUGEPAGE, for the TLB
 * misses of random entries, was tried: on Python's 4.5M blocks it gained
 * nothing measurable, 7 interleaved runs.)
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

/* An entry's slot: the first free one from its home on (no wrap). */
static inline size_t live_place(const struct msc_live *l, size_t i)
{
	while (l[i].ptr)
		i++;
	return i;
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

/*
 * The slot of ptr, or the empty slot where it would go; NULL when the
 * table must grow first (full, or that slot is its last).
 */
static inline struct msc_live *live_probe(struct msc_agg *a, uint64_t ptr)
{
	size_t i = live_home(a, ptr);

	while (a->live[i].ptr && a->live[i].ptr != ptr)
		i++;
	if (msc_unlikely(!a->live[i].ptr && (i >= msc_live_slots(a) - 1 || a->live_count >= a->live_limit)))
		return NULL;
	return &a->live[i];
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

static struct msc_live *live_find(const struct msc_agg *a, uint64_t ptr)
{
	size_t i = live_home(a, ptr);

	while (a->live[i].ptr) {
		if (a->live[i].ptr == ptr)
			return &a->live[i];
		i++;
	}
	return NULL;
}

static void live_delete(struct msc_agg *a, struct msc_live *slot)
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

static struct msc_live *live_insert(struct msc_agg *a, uint64_t ptr)
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

/* Bit length of a size: its class's slot in a folded stack's block. */
static inline unsigned class_of(uint64_t size)
{
	return size ? 64u - (unsigned)__builtin_clzll(size) : 0;
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

/* A folded stack's slot for the class of size: its site's index + 1, or 0. */
static inline uint32_t *class_slot(const struct msc_agg *a, const struct msc_stack_sites *ss,
				   uint64_t size)
{
	return &a->class_slots[(size_t)(ss->classes - 1) * MSC_AGG_CLASSES + class_of(size)];
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
	 * its chain, not a walk of every site (which, 512 stacks folding on
	 * the sampled storm, was a tenth of ms-record's time). */
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
static long site_get_slow(struct msc_agg *a, uint32_t stack, uint64_t size, unsigned fn,
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

/* Finds or creates the site of (stack, size); returns its index or -1. */
static inline long site_get(struct msc_agg *a, uint32_t stack, uint64_t size, unsigned fn,
			    uint64_t ts)
{
	if (msc_likely(stack < a->stack_sites_cap)) {
		const struct msc_stack_sites *ss = &a->stack_sites[stack];

		if (ss->classes) {
			uint32_t i1 = *class_slot(a, ss, size);

			if (i1)
				return (long)i1 - 1;
		} else if (ss->last && ss->last_size == size) {
			return (long)ss->last - 1;
		}
	}
	return site_get_slow(a, stack, size, fn, ts);
}

/*
 * Called before a site's live bytes change: opens a new epoch after a
 * peak, and saves the site's value at the peak the first time it changes
 * in an epoch.
 */
static inline void touch(struct msc_agg *a, struct msc_site *s)
{
	if (a->peak_pending) {
		a->epoch++;
		a->peak_pending = false;
	}
	if (s->peak_epoch != a->epoch) {
		s->peak_saved = s->live_bytes;
		s->peak_epoch = a->epoch;
	}
}

static inline void after_alloc(struct msc_agg *a, struct msc_site *s, uint64_t ts)
{
	if (s->live_bytes > s->peak_live_bytes)
		s->peak_live_bytes = s->live_bytes;
	if (a->live_bytes > a->peak_live_bytes) {
		a->peak_live_bytes = a->live_bytes;
		a->peak_ts = ts;
		a->peak_pending = true;
	}
	/* The heap's own peak: the malloc family's and custom blocks'. */
	if (a->live_bytes - a->mapped_live > a->heap_peak) {
		a->heap_peak = a->live_bytes - a->mapped_live;
		a->heap_peak_ts = ts;
	}
}

uint64_t msc_agg_peak_contribution(const struct msc_agg *a, const struct msc_site *s)
{
	/* A peak still pending is the current state. */
	return at_peak(a, s);
}

/* --------------------------------------------------------------- events */

/* w: the block's weight (1 unless sampled). */
static inline void release_block(struct msc_agg *a, struct msc_site *s, uint64_t size, uint64_t age,
				 bool temporary, uint64_t w)
{
	touch(a, s);
	s->frees += w;
	s->live_bytes -= w * size;
	s->ages[msc_age_bucket(age)] += w;
	if (temporary) {
		s->temporary += w;
		a->temporary += w;
	}
	a->frees += w;
	a->live_blocks -= w;
	a->live_bytes -= w * size;
}

/* The last allocation of each thread, for "temporary": a few threads do
 * most of the work, so a small direct-mapped table comes first. */
static inline unsigned recent_slot(uint64_t ptr)
{
	return (unsigned)((ptr >> 4) * 0x9e3779b97f4a7c15ull >> 54) & (MSC_AGG_RECENT - 1);
}

static bool hold_ambiguous(struct msc_agg *a, const struct msc_cevent *ev);

/* Did another thread than tid allocate ptr just before ts? */
static inline bool recent_other(const struct msc_agg *a, uint64_t ptr, uint32_t tid, uint64_t ts)
{
	const struct msc_recent *r = &a->recent[recent_slot(ptr)];

	return r->ptr == ptr && r->tid != tid && (int64_t)(ts - r->ts) <= MSC_AGG_HOLD_REACH_NS;
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

/* The key of a block of fn's at ptr (see struct msc_live), not a pool's. */
static inline uint64_t block_key(uint64_t ptr, unsigned fn)
{
	return fn == MSC_FN_CUSTOM ? ptr | MSC_CUSTOM_KEY : ptr;
}

/* An allocation or free event of a memscope.h pool's block (its pool id
 * is v2 of an ALLOC, v1 of a FREE). */
static inline bool pool_event(const struct msc_cevent *ev)
{
	return ev->fn == MSC_FN_CUSTOM && ev->v[ev->type == MSC_CEV_ALLOC ? 2 : 1];
}

/* The live-table key of an allocation's or free's block, not a pool's;
 * 0 for other events. */
static inline uint64_t event_key(const struct msc_cevent *ev)
{
	if ((ev->type != MSC_CEV_ALLOC && ev->type != MSC_CEV_FREE) || pool_event(ev))
		return 0;
	return block_key(ev->v[0], ev->fn);
}

static void hold_add(struct msc_agg *a, const struct msc_cevent *ev);

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
			live_delete(a, b), a->live_count++;
		goto oom;
	}
	b->ptr = ptr;
	a->live_count++;
	s = &a->sites[si];
	b->site = (uint32_t)si;
	if (live_set(a, b, ts, size, MSC_LEAK_UNSCANNED)) {
		live_delete(a, b);
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
static int alloc_key(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, uint64_t size,
		     uint32_t stack, unsigned fn, uint32_t pool_name,
		     const struct msc_cevent *hold)
{
	return alloc_key_in(a, ts, tid, ptr, size, stack, fn, pool_name, hold);
}

int msc_agg_alloc(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, uint64_t size,
		  uint32_t stack, unsigned fn)
{
	return alloc_key(a, ts, tid, block_key(ptr, fn), size, stack, fn, 0, NULL);
}

/* A free of the block keyed ptr (see struct msc_live); hold: as for
 * alloc_key. */
static inline __attribute__((always_inline)) int
free_key_in(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
	    uint32_t stack, struct msc_freed *out, const struct msc_cevent *hold, bool shim_temporary)
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
		if (msc_fn_checked(fn) && !a->no_errors)
			msc_agg_unseen_free(a, ts, tid, ptr, fn, stack);
		return 0;
	}
	if (msc_unlikely(a->recent) && hold && hold_ambiguous(a, hold))
		return MSC_AGG_HELD;
	ambiguous = msc_unlikely(a->recent) &&
		    (a->hold_how == MSC_HOLD_AMBIGUOUS || recent_other(a, ptr, tid, ts));
	s = msc_agg_site(a, b->site);
	if (msc_fn_family(s->fn) != msc_fn_family(fn) && msc_fn_checked(fn) && !a->no_errors)
		msc_agg_mismatch(a, ts, tid, b, s, fn, stack);
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
	live_delete(a, b);
	return 1;
}

static int free_key(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
		    uint32_t stack, struct msc_freed *out, const struct msc_cevent *hold)
{
	return free_key_in(a, ts, tid, ptr, fn, stack, out, hold, false);
}

int msc_agg_free(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
		 uint32_t stack, struct msc_freed *out)
{
	return free_key(a, ts, tid, block_key(ptr, fn), fn, stack, out, NULL);
}

/* ---------------------------------------------------------------- pools */

/* The index + 1 of name in a->pool_names, added if new; 0 when out of memory. */
static uint32_t pool_name_get(struct msc_agg *a, const char *name)
{
	uint32_t i;

	/* Programs name a handful of pools (and create many of each): a
	 * walk of the names is short. */
	for (i = 0; i < a->npool_names; i++)
		if (strcmp(a->pool_names[i], name) == 0)
			return i + 1;
	if (a->npool_names == a->pool_names_cap) {
		uint32_t ncap = a->pool_names_cap ? a->pool_names_cap * 2 : 16;
		char (*nn)[MSC_POOL_NAME] = realloc(a->pool_names, ncap * sizeof(*nn));

		if (!nn)
			return 0;
		a->pool_names = nn;
		a->pool_names_cap = ncap;
	}
	snprintf(a->pool_names[a->npool_names], MSC_POOL_NAME, "%s", name);
	return ++a->npool_names;
}

/* The slot of a live pool; with make, a new pool named name if there is
 * none.  0 when there is none, or no room. */
static uint32_t pool_slot(struct msc_agg *a, uint64_t pool, const char *name, bool make)
{
	const uint64_t *v = msc_u64map_get(&a->pool_ids, pool);
	struct msc_pool *p;
	uint32_t slot, nm;

	if (v)
		return (uint32_t)*v;
	if (!make || !pool)
		return 0;
	nm = pool_name_get(a, name);
	if (!nm)
		return 0;
	if (a->pool_free) {
		slot = a->pool_free;
		a->pool_free = a->pools[slot - 1].next_free;
	} else {
		if (a->npools == MSC_POOL_SLOTS)
			return 0;
		if (a->npools == a->pools_cap) {
			uint32_t ncap = a->pools_cap ? a->pools_cap * 2 : 16;
			struct msc_pool *np = realloc(a->pools, ncap * sizeof(*np));

			if (!np)
				return 0;
			a->pools = np;
			a->pools_cap = ncap;
		}
		slot = ++a->npools;
	}
	if (msc_u64map_put(&a->pool_ids, pool, slot)) {
		a->pools[slot - 1] = (struct msc_pool){ 0, 0, a->pool_free };
		a->pool_free = slot;
		return 0;
	}
	p = &a->pools[slot - 1];
	p->id = pool;
	p->name = nm;
	p->next_free = 0;
	return slot;
}

static inline uint64_t pool_key(uint64_t ptr, uint32_t slot)
{
	return MSC_KEY_ADDR(ptr) | MSC_CUSTOM_KEY | (uint64_t)slot << MSC_POOL_SHIFT;
}

int msc_agg_pool_create(struct msc_agg *a, uint64_t pool, const char *name)
{
	uint32_t slot = pool_slot(a, pool, name, false);
	uint32_t nm;

	if (!pool)
		return 0;
	if (slot) {
		nm = pool_name_get(a, name);
		if (nm)
			a->pools[slot - 1].name = nm;
		return nm ? 0 : -ENOMEM;
	}
	return pool_slot(a, pool, name, true) ? 0 : -ENOMEM;
}

int msc_agg_pool_alloc(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t pool, uint64_t ptr,
		       uint64_t size, uint32_t stack)
{
	uint32_t slot = pool_slot(a, pool, "?", true);

	if (!slot) {
		a->dropped++;
		return -ENOMEM;
	}
	return alloc_key(a, ts, tid, pool_key(ptr, slot), size, stack, MSC_FN_CUSTOM,
			 a->pools[slot - 1].name, NULL);
}

int msc_agg_pool_free(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t pool, uint64_t ptr,
		      uint32_t stack, struct msc_freed *out)
{
	uint32_t slot = pool_slot(a, pool, NULL, false);

	if (!slot) {
		/* No such pool: no such block either. */
		if (ts > a->last_ts)
			a->last_ts = ts;
		a->unknown_frees++;
		return 0;
	}
	return free_key(a, ts, tid, pool_key(ptr, slot), MSC_FN_CUSTOM, stack, out, NULL);
}

uint64_t msc_agg_pool_destroy(struct msc_agg *a, uint64_t ts, uint64_t pool)
{
	uint32_t slot = pool_slot(a, pool, NULL, false);
	const uint64_t mask = ~((1ull << MSC_POOL_SHIFT) - 1);
	const uint64_t want = pool_key(0, slot);
	uint64_t n = 0;
	size_t i;

	if (ts > a->last_ts)
		a->last_ts = ts;
	if (!slot)
		return 0;
	for (i = 0; i < msc_live_slots(a) && a->pools[slot - 1].id; i++) {
		struct msc_live *b = &a->live[i];
		uint64_t born;

		/* A delete shifts later entries back into slot i: look at
		 * i again until it holds one of another pool.  (One that
		 * wraps round to the end is looked at twice: harmless.) */
		while (b->ptr && (b->ptr & mask) == want) {
			born = msc_live_ts(a, b);
			release_block(a, msc_agg_site(a, b->site), msc_live_size(a, b),
				      ts >= born ? ts - born : 0, false, 1);
			live_unset(a, b);
			live_delete(a, b);
			n++;
		}
	}
	msc_u64map_del(&a->pool_ids, pool, NULL);
	a->pools[slot - 1] = (struct msc_pool){ 0, 0, a->pool_free };
	a->pool_free = slot;
	a->pool_destroy_frees += n;
	return n;
}

int msc_agg_hidden(struct msc_agg *a, uint64_t ptr)
{
	if (!ptr)
		return 0;
	if (msc_u64map_put(&a->hidden, ptr, 1)) {
		a->dropped++;
		return -ENOMEM;
	}
	return 0;
}

int msc_agg_unfree(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr)
{
	unsigned i, n = sizeof(a->undo) / sizeof(a->undo[0]);

	(void)tid;
	for (i = 0; i < n; i++) {
		struct msc_undo *u = &a->undo[(a->undo_next + n - 1 - i) % n];
		struct msc_site *s;
		struct msc_live *b;
		uint64_t w;

		if (u->live.ptr != ptr)
			continue;
		if (live_find(a, ptr))
			return 0;
		b = live_insert(a, ptr);
		if (!b) {
			a->dropped++;
			return -ENOMEM;
		}
		*b = u->live;
		u->live.ptr = 0;
		if (b->size == MSC_LIVE_BIG && msc_u64map_put(&a->big, ptr, u->size)) {
			live_delete(a, b);
			a->dropped++;
			return -ENOMEM;
		}
		s = msc_agg_site(a, b->site);
		/* Undo exactly what the free counted; the block keeps its
		 * allocation time (and so its weight). */
		w = block_weight(a, b, u->size);
		touch(a, s);
		s->frees -= w;
		s->ages[u->bucket] -= w;
		if (u->temporary) {
			s->temporary -= w;
			a->temporary -= w;
		}
		s->live_bytes += w * u->size;
		a->frees -= w;
		a->recorded_frees--;
		a->live_blocks += w;
		a->live_bytes += w * u->size;
		after_alloc(a, s, ts);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------- mappings */

/*
 * The first region that ends after addr (regions are sorted and disjoint,
 * so their ends are sorted too); with by_start, the first that starts at
 * or after addr.
 */
static size_t region_search(const struct msc_agg *a, uint64_t addr, bool by_start)
{
	size_t lo = 0, hi = a->nregions;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (by_start ? a->regions[mid].start < addr : a->regions[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int region_add(struct msc_agg *a, const struct msc_region *r)
{
	size_t lo;

	if (MSC_GROW(a->regions, a->nregions + 1, a->regions_cap, 64))
		return -ENOMEM;
	lo = region_search(a, r->start, true);
	memmove(&a->regions[lo + 1], &a->regions[lo], (a->nregions - lo) * sizeof(*a->regions));
	a->regions[lo] = *r;
	a->nregions++;
	return 0;
}

/* A region the program mapped (fn mmap) or took with brk (fn brk). */
static int map_region(struct msc_agg *a, uint64_t ts, uint64_t addr, uint64_t len, uint32_t stack,
		      unsigned fn)
{
	struct msc_site *s;
	long si;

	if (ts > a->last_ts)
		a->last_ts = ts;
	if (!len)
		return 0;
	/* A fixed mapping over tracked ones replaces them. */
	msc_agg_munmap(a, ts, addr, len);
	si = site_get(a, stack, len, fn, ts);
	if (si >= 0) {
		struct msc_region r = { addr, addr + len, ts, (uint32_t)si, ++a->next_block,
					MSC_LEAK_UNSCANNED, true };

		if (region_add(a, &r))
			si = -1;
	}
	if (si < 0) {
		a->dropped++;
		return -ENOMEM;
	}
	s = &a->sites[si];
	touch(a, s);
	s->allocs++;
	s->bytes += len;
	s->live_bytes += len;
	s->last_ts = ts;
	/* Not in allocs and bytes, the malloc family's totals, which
	 * memcheck and heaptrack give: mappings have their own. */
	if (fn == MSC_FN_BRK) {
		a->brks++;
		a->brk_bytes += len;
	} else {
		a->mmaps++;
		a->mmap_bytes += len;
	}
	a->live_blocks++;
	a->live_bytes += len;
	a->mapped_live += len;
	if (a->mapped_live > a->mapped_peak) {
		a->mapped_peak = a->mapped_live;
		a->mapped_peak_ts = ts;
	}
	after_alloc(a, s, ts);
	return 0;
}

int msc_agg_mmap(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len,
		 uint32_t stack)
{
	(void)tid;
	return map_region(a, ts, addr, len, stack, MSC_FN_MMAP);
}

uint64_t msc_agg_munmap(struct msc_agg *a, uint64_t ts, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len, total = 0;
	size_t i;

	if (ts > a->last_ts)
		a->last_ts = ts;
	i = region_search(a, addr, false);
	while (i < a->nregions && a->regions[i].start < end) {
		struct msc_region *r = &a->regions[i];
		struct msc_site *s = msc_agg_site(a, r->site);
		uint64_t cut_lo = r->start > addr ? r->start : addr;
		uint64_t cut_hi = r->end < end ? r->end : end;
		uint64_t cut = cut_hi - cut_lo;

		touch(a, s);
		s->live_bytes -= cut;
		a->live_bytes -= cut;
		a->mapped_live -= cut;
		total += cut;
		if (cut_lo == r->start && cut_hi == r->end) {
			uint64_t *left = msc_u64map_get(&a->pieces, r->block);

			if (left && *left > 1) {
				/* Other pieces of this mapping live on. */
				uint32_t block = r->block;
				bool primary = r->primary;
				size_t k;

				(*left)--;
				memmove(r, r + 1, (a->nregions - i - 1) * sizeof(*r));
				a->nregions--;
				for (k = 0; primary && k < a->nregions; k++)
					if (a->regions[k].block == block) {
						a->regions[k].primary = true;
						break;
					}
				continue;
			}
			if (left)
				msc_u64map_del(&a->pieces, r->block, NULL);
			/* Gone entirely: that is its free. */
					s->frees++;
			s->ages[msc_age_bucket(ts >= r->ts ? ts - r->ts : 0)]++;
			a->live_blocks--;
			memmove(r, r + 1, (a->nregions - i - 1) * sizeof(*r));
			a->nregions--;
			continue;
		}
		if (cut_lo > r->start && cut_hi < r->end) {
			/* A hole in the middle: two pieces of one block. */
			struct msc_region tail = *r;
			uint64_t *left = msc_u64map_get(&a->pieces, r->block);

			tail.start = cut_hi;
			tail.primary = false;
			r->end = cut_lo;
			if (msc_u64map_put(&a->pieces, r->block, left ? *left + 1 : 2) ||
			    region_add(a, &tail)) {
				a->dropped++;
				break;
			}
			i += 2;
			continue;
		}
		if (cut_lo == r->start)
			r->start = cut_hi;
		else
			r->end = cut_lo;
		i++;
	}
	return total;
}

int msc_agg_mremap(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t old, uint64_t old_len,
		   uint64_t addr, uint64_t len, uint32_t stack)
{
	size_t i = region_search(a, old, true);

	/* Only mappings we track move; the rest (file maps, malloc's own
	 * mmap'ed chunks) are not ours to count. */
	if (i == a->nregions || a->regions[i].start != old)
		return 0;
	msc_agg_munmap(a, ts, old, old_len);
	return msc_agg_mmap(a, ts, tid, addr, len, stack);
}

/*
 * Only the program's own brk and sbrk calls come here: glibc's malloc moves
 * the break with an internal call the shim does not see, and what it takes
 * is counted through malloc.  Growth is a region of its own, like a
 * mapping; a shrink releases the tracked regions above the new break.
 */
int msc_agg_brk(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t old_end, uint64_t new_end,
		uint32_t stack)
{
	(void)tid;
	if (new_end > old_end)
		return map_region(a, ts, old_end, new_end - old_end, stack, MSC_FN_BRK);
	if (ts > a->last_ts)
		a->last_ts = ts;
	if (new_end < old_end)
		msc_agg_munmap(a, ts, new_end, old_end - new_end);
	return 0;
}

/* ---------------------------------------------------------------- leaks */

static int cmp_leak(const void *x, const void *y)
{
	const struct msc_leak *p = x, *q = y;

	if (p->bytes != q->bytes)
		return p->bytes > q->bytes ? -1 : 1;
	if (p->site != q->site)
		return p->site < q->site ? -1 : 1;
	return (int)p->kind - (int)q->kind;
}

long msc_agg_leaks(const struct msc_agg *a, struct msc_leak **out)
{
	struct msc_u64map groups;
	struct msc_leak *leaks = NULL;
	size_t n = 0, cap = 0, i;

	*out = NULL;
	if (msc_u64map_init(&groups, a->nsites + 16))
		return -ENOMEM;
	for (i = 0; i < msc_live_slots(a) + a->nregions; i++) {
		uint32_t site;
		uint8_t kind;
		uint64_t ts, bytes, w = 1;
		uint64_t key, *slot;
		struct msc_leak *l;
		bool primary = true;

		if (i < msc_live_slots(a)) {
			if (!a->live[i].ptr)
				continue;
			site = a->live[i].site;
			if (a->sites[site].removed)
				site = a->sites[site].forward;
			kind = msc_live_kind(&a->live[i]);
			ts = msc_live_ts(a, &a->live[i]);
			bytes = msc_live_size(a, &a->live[i]);
			w = block_weight(a, &a->live[i], bytes);
		} else {
			const struct msc_region *r = &a->regions[i - msc_live_slots(a)];

			site = r->site;
			if (a->sites[site].removed)
				site = a->sites[site].forward;
			kind = r->kind;
			ts = r->ts;
			bytes = r->end - r->start;
			primary = r->primary;
		}
		key = ((uint64_t)site << 8 | kind) + 1;
		slot = msc_u64map_get(&groups, key);
		if (!slot) {
			if (MSC_GROW(leaks, n + 1, cap, 64))
				goto oom;
			if (msc_u64map_put(&groups, key, n))
				goto oom;
			l = &leaks[n++];
			*l = (struct msc_leak){ site, kind, 0, 0, ts, ts };
		} else {
			l = &leaks[*slot];
		}
		l->count += primary * w;
		l->bytes += bytes * w;
		if (ts < l->first_ts)
			l->first_ts = ts;
		if (ts > l->last_ts)
			l->last_ts = ts;
	}
	msc_u64map_release(&groups);
	if (n)
		qsort(leaks, n, sizeof(*leaks), cmp_leak);
	*out = leaks;
	return (long)n;
oom:
	msc_u64map_release(&groups);
	free(leaks);
	return -ENOMEM;
}

void msc_agg_set_kinds(struct msc_agg *a, unsigned kind)
{
	size_t i;

	for (i = 0; i < msc_live_slots(a); i++)
		if (a->live[i].ptr)
			msc_live_set_kind(&a->live[i], kind);
	for (i = 0; i < a->nregions; i++)
		a->regions[i].kind = (uint8_t)kind;
}

void msc_agg_set_fate_unknown(struct msc_agg *a)
{
	msc_agg_set_kinds(a, MSC_LEAK_UNKNOWN);
}

void msc_agg_kind_totals(const struct msc_agg *a, uint64_t bytes[MSC_LEAK_KINDS],
			 uint64_t blocks[MSC_LEAK_KINDS])
{
	size_t i;

	memset(bytes, 0, MSC_LEAK_KINDS * sizeof(*bytes));
	memset(blocks, 0, MSC_LEAK_KINDS * sizeof(*blocks));
	for (i = 0; i < msc_live_slots(a) + a->nregions; i++) {
		unsigned kind;
		uint64_t size, w = 1;
		bool primary = true;

		if (i < msc_live_slots(a)) {
			if (!a->live[i].ptr)
				continue;
			kind = msc_live_kind(&a->live[i]);
			size = msc_live_size(a, &a->live[i]);
			w = block_weight(a, &a->live[i], size);
		} else {
			const struct msc_region *reg = &a->regions[i - msc_live_slots(a)];

			kind = reg->kind;
			size = reg->end - reg->start;
			primary = reg->primary;
		}
		if (kind >= MSC_LEAK_KINDS)
			kind = MSC_LEAK_UNSCANNED;
		bytes[kind] += size * w;
		blocks[kind] += primary * w;
	}
}

void msc_agg_leak_totals(const struct msc_agg *a, uint64_t *bytes, uint64_t *blocks,
			 uint64_t *possibly, uint64_t *reachable, bool *scanned)
{
	uint64_t kb[MSC_LEAK_KINDS], kn[MSC_LEAK_KINDS];

	msc_agg_kind_totals(a, kb, kn);
	msc_agg_leak_totals_of(a, kb, kn, bytes, blocks, possibly, reachable, scanned);
}

void msc_agg_leak_totals_of(const struct msc_agg *a, const uint64_t kb[MSC_LEAK_KINDS],
			    const uint64_t kn[MSC_LEAK_KINDS], uint64_t *bytes, uint64_t *blocks,
			    uint64_t *possibly, uint64_t *reachable, bool *scanned)
{
	uint64_t b = 0, n = 0;
	bool any_scanned = false;
	unsigned k;

	for (k = 0; k < MSC_LEAK_KINDS; k++) {
		if (msc_leak_kind_leaked(k)) {
			b += kb[k];
			n += kn[k];
		}
		/* A piece of a mapping has bytes, a malloc(0) a block. */
		if (k != MSC_LEAK_UNSCANNED && k != MSC_LEAK_UNKNOWN && (kb[k] || kn[k]))
			any_scanned = true;
	}
	*bytes = b;
	*blocks = n;
	if (possibly)
		*possibly = kb[MSC_LEAK_POSSIBLY];
	if (reachable)
		*reachable = kb[MSC_LEAK_REACHABLE];
	if (scanned)
		*scanned = any_scanned || (a->live_count + a->nregions == 0);
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

/* ------------------------------------------------------ order repair */

/* The queue holds what one push or unhold adds: every held event and three. */
#define HOLD_QCAP (MSC_AGG_HOLD_MAX + 4)

int msc_agg_hold(struct msc_agg *a, uint64_t window_ns)
{
	if (!a->held) {
		a->held = malloc(MSC_AGG_HOLD_MAX * sizeof(*a->held));
		a->queue = malloc(HOLD_QCAP * sizeof(*a->queue));
		if (!a->held || !a->queue) {
			free(a->held);
			free(a->queue);
			a->held = NULL;
			a->queue = NULL;
			return -ENOMEM;
		}
	}
	if (a->unseen_frees_ok && !a->recent)
		a->recent = calloc(MSC_AGG_RECENT, sizeof(*a->recent));
	a->hold_window = window_ns;
	return 0;
}

static inline unsigned hold_slot(uint64_t key)
{
	return (unsigned)((key >> 4) * 0x9e3779b97f4a7c15ull >> 56);
}

/* nohold: a held event let go (applied as it is, never held again). */
static void hold_enqueue(struct msc_agg *a, const struct msc_cevent *ev, bool nohold)
{
	struct msc_hold_entry *q = &a->queue[(a->qhead + a->qlen) % HOLD_QCAP];

	q->ev = *ev;
	q->nohold = nohold;
	q->how = MSC_HOLD_AS_IS;
	a->qlen++;
}

/* A held free that waits for a second free of its address (msc_recent):
 * marked in v[2], whose bit 0 is the shim's "temporary". */
#define HELD_AMBIGUOUS 2u

/* Held event i goes to the queue (to be applied as it is, or as a free of
 * a block from before us). */
static void hold_release_as(struct msc_agg *a, unsigned i, bool unseen)
{
	struct msc_hold_entry *q = &a->queue[(a->qhead + a->qlen) % HOLD_QCAP];
	bool ambiguous = a->held[i].v[2] & HELD_AMBIGUOUS;

	a->held[i].v[2] &= ~(uint64_t)HELD_AMBIGUOUS;
	hold_enqueue(a, &a->held[i], true);
	q->how = unseen ? MSC_HOLD_UNSEEN : ambiguous ? MSC_HOLD_AMBIGUOUS : MSC_HOLD_AS_IS;
	a->held_keys[hold_slot(event_key(&a->held[i]))]--;
	memmove(&a->held[i], &a->held[i + 1], (a->nheld - i - 1) * sizeof(*a->held));
	a->nheld--;
}

static void hold_release(struct msc_agg *a, unsigned i)
{
	hold_release_as(a, i, false);
}

/* The held event of key, or -1. */
static int hold_find(const struct msc_agg *a, uint64_t key)
{
	unsigned i;

	for (i = 0; i < a->nheld; i++)
		if (event_key(&a->held[i]) == key)
			return (int)i;
	return -1;
}

/*
 * Called by alloc_key and free_key (given the event by msc_agg_apply
 * when it may be held) where the event finds
 * its address in the wrong state: an allocation of a live one, a free of
 * an unknown one.  Applying it then waits for its partner (msc_agg_push).
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
	if (!recent_other(a, ev->v[0], ev->tid, ev->ts))
		return false;
	hold_add(a, ev);
	a->held[a->nheld - 1].v[2] |= HELD_AMBIGUOUS;
	return true;
}

/*
 * The order to apply events in.  The state of an event's address is
 * looked at when it is applied (msc_agg_apply holds it then, if wrong):
 * here only the held ones are matched with what comes, and let go when
 * their window has passed.
 */
int msc_agg_push_held(struct msc_agg *a, const struct msc_cevent *ev)
{
	if (!a->hold_window)
		return 1;
	if (msc_unlikely(!a->hold_multi)) {
		if (!a->hold_tid)
			a->hold_tid = ev->tid + 1;
		else if (a->hold_tid != ev->tid + 1)
			a->hold_multi = true;
	}
	a->hold_nohold = false;
	a->hold_how = MSC_HOLD_AS_IS;
	if (msc_unlikely(a->nheld)) {
		uint64_t key;
		int h;

		/* Held past the window: applied as they were, before ev. */
		while (a->nheld && a->held[0].ts + a->hold_window < ev->ts)
			hold_release(a, 0);
		key = event_key(ev);
		h = key && a->nheld && a->held_keys[hold_slot(key)] ? hold_find(a, key) : -1;
		if (h >= 0 && (a->held[h].v[2] & HELD_AMBIGUOUS)) {
			/* A second free of the address, by another thread:
			 * the held one was of the block before it. */
			bool older = ev->type == MSC_CEV_FREE && ev->tid != a->held[h].tid;

			hold_release_as(a, (unsigned)h, older);
			hold_enqueue(a, ev, false);
			if (older)
				a->repaired++;
			return 0;
		}
		if (h >= 0) {
			if (a->held[h].tid != ev->tid &&
			    (a->held[h].type == MSC_CEV_ALLOC) != (ev->type == MSC_CEV_ALLOC) &&
			    (!a->unseen_frees_ok || ev->ts - a->held[h].ts <= MSC_AGG_HOLD_REACH_NS)) {
				/* The partner: ev happened first. */
				hold_enqueue(a, ev, true);
				hold_release(a, (unsigned)h);
				a->repaired++;
			} else {
				/* The same thread's (its ring order is right), or
				 * the same kind twice: the held one was what it
				 * seemed. */
				hold_release(a, (unsigned)h);
				hold_enqueue(a, ev, false);
			}
			return 0;
		}
	}
	if (a->qlen || ev->ts < a->hold_out_ts) {
		hold_enqueue(a, ev, false);
		return 0;
	}
	a->hold_out_ts = ev->ts;
	return 1;
}

bool msc_agg_pop_queued(struct msc_agg *a, struct msc_cevent *ev)
{
	if (!a->qlen)
		return false;
	*ev = a->queue[a->qhead].ev;
	a->hold_nohold = a->queue[a->qhead].nohold;
	a->hold_how = a->queue[a->qhead].how;
	a->qhead = (a->qhead + 1) % HOLD_QCAP;
	a->qlen--;
	if (ev->ts < a->hold_out_ts)
		ev->ts = a->hold_out_ts;
	a->hold_out_ts = ev->ts;
	return true;
}

/* May the event msc_agg_apply is about to apply be held? */
static inline bool hold_may(const struct msc_agg *a)
{
	return a->hold_multi && !a->hold_nohold && a->nheld < MSC_AGG_HOLD_MAX;
}

void msc_agg_unhold(struct msc_agg *a)
{
	while (a->nheld)
		hold_release(a, 0);
}

/* msc_agg_apply's events other than the malloc family's allocations and
 * frees: out of its way, which runs for every event. */
static __attribute__((noinline)) int apply_other(struct msc_agg *a, const struct msc_cevent *ev,
						 struct msc_freed *fr)
{
	switch (ev->type) {
	case MSC_CEV_ALLOC:
		msc_agg_pool_alloc(a, ev->ts, ev->tid, ev->v[2], ev->v[0], ev->v[1], ev->stack);
		return 0;
	case MSC_CEV_FREE:
		return msc_agg_pool_free(a, ev->ts, ev->tid, ev->v[1], ev->v[0], ev->stack, fr) > 0;
	case MSC_CEV_POOL_CREATE: {
		char name[MSC_POOL_NAME];

		memcpy(name, &ev->v[1], MSC_POOL_NAME);
		name[MSC_POOL_NAME - 1] = '\0';
		msc_agg_pool_create(a, ev->v[0], name);
		return 0;
	}
	case MSC_CEV_POOL_DESTROY:
		msc_agg_pool_destroy(a, ev->ts, ev->v[0]);
		return 0;
	case MSC_CEV_UNFREE:
		msc_agg_unfree(a, ev->ts, ev->tid, ev->v[0]);
		return 0;
	case MSC_CEV_HIDDEN:
		msc_agg_hidden(a, ev->v[0]);
		return 0;
	case MSC_CEV_MMAP:
		msc_agg_mmap(a, ev->ts, ev->tid, ev->v[0], ev->v[1], ev->stack);
		return 0;
	case MSC_CEV_MUNMAP:
		msc_agg_munmap(a, ev->ts, ev->v[0], ev->v[1]);
		return 0;
	case MSC_CEV_MREMAP:
		msc_agg_mremap(a, ev->ts, ev->tid, ev->v[0], ev->v[1], ev->v[2], ev->v[3], ev->stack);
		return 0;
	case MSC_CEV_BRK:
		msc_agg_brk(a, ev->ts, ev->tid, ev->v[0], ev->v[1], ev->stack);
		return 0;
	default:
		return -1;
	}
}

int msc_agg_apply(struct msc_agg *a, const struct msc_cevent *ev, struct msc_freed *fr)
{
	int r;

	if (ev->type == MSC_CEV_ALLOC && !pool_event(ev)) {
		r = alloc_key_in(a, ev->ts, ev->tid, block_key(ev->v[0], ev->fn), ev->v[1], ev->stack,
				 ev->fn, 0, hold_may(a) ? ev : NULL);
		return r == MSC_AGG_HELD ? r : 0;
	}
	if (ev->type == MSC_CEV_FREE && !pool_event(ev)) {
		r = free_key_in(a, ev->ts, ev->tid, block_key(ev->v[0], ev->fn), ev->fn, ev->stack, fr,
				hold_may(a) ? ev : NULL, ev->v[2] != 0);
		return r == MSC_AGG_HELD || r == MSC_AGG_HIDDEN ? r : r > 0;
	}
	return apply_other(a, ev, fr);
}
