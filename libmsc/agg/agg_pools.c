/* SPDX-License-Identifier: MIT */
/* memscope.h's pools, hidden blocks and unfrees in msc_agg.  See agg_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"

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
	return agg_alloc_key(a, ts, tid, pool_key(ptr, slot), size, stack, MSC_FN_CUSTOM,
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
	return agg_free_key(a, ts, tid, pool_key(ptr, slot), MSC_FN_CUSTOM, stack, out, NULL);
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
			agg_live_delete(a, b);
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
		b = agg_live_insert(a, ptr);
		if (!b) {
			a->dropped++;
			return -ENOMEM;
		}
		*b = u->live;
		u->live.ptr = 0;
		if (b->size == MSC_LIVE_BIG && msc_u64map_put(&a->big, ptr, u->size)) {
			agg_live_delete(a, b);
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
