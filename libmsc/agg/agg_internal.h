/* SPDX-License-Identifier: MIT */
/*
 * agg_internal: what the files of the aggregator share (private to
 * libmsc/agg/; everyone else sees msc_agg.h).
 *
 *	agg.c		the live table, sites, allocations and frees, the
 *			prefetch of a batch, msc_agg_apply
 *	agg_pools.c	memscope.h's pools, hidden blocks, unfrees
 *	agg_regions.c	mmap, munmap, mremap, brk
 *	agg_leaks.c	leak kinds, leaks by site and their totals
 *	agg_hold.c	the order repair (events held for their partner)
 *	agg_errors.c	memory errors, the quarantine of frees, CI gates
 *	agg_top.c	the stacks that hold the most, now (timelines)
 *
 * The per-event path inlines what is below; the rest is called out of line.
 */
#ifndef MSC_AGG_INTERNAL_H
#define MSC_AGG_INTERNAL_H

#include "msc_agg.h"
#include "msc_err.h"
#include "msc_proto.h"
#include "msc_util.h"

/* ---- agg.c, for the other files */

/* The slot of a new block at ptr, its count taken (the table grown if it
 * must be); NULL when out of memory. */
struct msc_live *agg_live_insert(struct msc_agg *a, uint64_t ptr);
/* Empties a slot, moving the entries after it that belong before it. */
void agg_live_delete(struct msc_agg *a, struct msc_live *slot);
/* site_get() for the sites it does not find at once: a stack id beyond the
 * table, an empty class slot, or an exact size other than the last one. */
long agg_site_get_slow(struct msc_agg *a, uint32_t stack, uint64_t size, unsigned fn,
		       uint64_t ts);
/*
 * An allocation of the block keyed ptr (see struct msc_live), and a free of
 * it: msc_agg_apply's hot path out of line, for pools, unfrees and held
 * events.  pool_name: the pool's name's index + 1, 0 = none; hold: the
 * event, when the order repair may hold it, else NULL.  Their results are
 * msc_agg_alloc's and msc_agg_free's, or MSC_AGG_HELD.
 */
int agg_alloc_key(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, uint64_t size,
		  uint32_t stack, unsigned fn, uint32_t pool_name, const struct msc_cevent *hold);
int agg_free_key(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
		 uint32_t stack, struct msc_freed *out, const struct msc_cevent *hold);

static inline unsigned hold_slot(uint64_t key)
{
	return (unsigned)((key >> 4) * 0x9e3779b97f4a7c15ull >> 56);
}

/* A held free that waits for a second free of its address (msc_recent):
 * marked in v[2], whose bit 0 is the shim's "temporary". */
#define HELD_AMBIGUOUS 2u

/* ---- the hot path's inlines */

static inline size_t live_home(const struct msc_agg *a, uint64_t ptr)
{
	return msc_live_hash(ptr, a->live_mask);
}

/* An entry's slot: the first free one from its home on (no wrap). */
static inline size_t live_place(const struct msc_live *l, size_t i)
{
	while (l[i].ptr)
		i++;
	return i;
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

static inline struct msc_live *live_find(const struct msc_agg *a, uint64_t ptr)
{
	size_t i = live_home(a, ptr);

	while (a->live[i].ptr) {
		if (a->live[i].ptr == ptr)
			return &a->live[i];
		i++;
	}
	return NULL;
}

/* Forgets a block's big size, if it had one (the block is going). */
static inline void live_unset(struct msc_agg *a, const struct msc_live *b)
{
	if (b->size == MSC_LIVE_BIG)
		msc_u64map_del(&a->big, b->ptr, NULL);
}

/* A live block's weight (see msc_agg.h): what it counts for. */
static inline uint64_t block_weight(const struct msc_agg *a, const struct msc_live *b, uint64_t size)
{
	if (msc_likely(!a->sample) || (b->ptr & MSC_CUSTOM_KEY))
		return 1;
	return msc_sample_weight(a->sample, size,
				 b->ptr ^ (b->ts_kind & MSC_LIVE_TS_MASK) * 0x9e3779b97f4a7c15ull);
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

/* Bit length of a size: its class's slot in a folded stack's block. */
static inline unsigned class_of(uint64_t size)
{
	return size ? 64u - (unsigned)__builtin_clzll(size) : 0;
}

/* A folded stack's slot for the class of size: its site's index + 1, or 0. */
static inline uint32_t *class_slot(const struct msc_agg *a, const struct msc_stack_sites *ss,
				   uint64_t size)
{
	return &a->class_slots[(size_t)(ss->classes - 1) * MSC_AGG_CLASSES + class_of(size)];
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
	return agg_site_get_slow(a, stack, size, fn, ts);
}

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

/* Did another thread than tid allocate ptr just before ts? */
static inline bool recent_other(const struct msc_agg *a, uint64_t ptr, uint32_t tid, uint64_t ts)
{
	const struct msc_recent *r = &a->recent[recent_slot(ptr)];

	return r->ptr == ptr && r->tid != tid && (int64_t)(ts - r->ts) <= MSC_AGG_HOLD_REACH_NS;
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
	/* alloc.pool or free.pool, by index: a choice of the two members
	 * compiles into msc_agg_apply's per-event path as two loads */
	return ev->fn == MSC_FN_CUSTOM && ev->v[ev->type == MSC_CEV_ALLOC ? 2 : 1];
}

/* The live-table key of an allocation's or free's block, not a pool's;
 * 0 for other events. */
static inline uint64_t event_key(const struct msc_cevent *ev)
{
	if ((ev->type != MSC_CEV_ALLOC && ev->type != MSC_CEV_FREE) || pool_event(ev))
		return 0;
	return block_key(ev->alloc.ptr, ev->fn);	/* a free's ptr is there too */
}

/* May the event msc_agg_apply is about to apply be held? */
static inline bool hold_may(const struct msc_agg *a)
{
	return a->hold_multi && !a->hold_nohold && a->nheld < MSC_AGG_HOLD_MAX;
}

#endif
