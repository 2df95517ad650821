/* SPDX-License-Identifier: MIT */
/* Mappings in msc_agg: mmap, munmap, mremap, brk regions.  See agg_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"

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
