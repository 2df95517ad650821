/* SPDX-License-Identifier: MIT */
/* Leak kinds and msc_agg's leaks, grouped by site, with their totals.  See agg_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"

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

/* ---------------------------------------------------------------- leaks */

static int cmp_leak(const void *x, const void *y)
{
	const struct msc_leak *p = x, *q = y;

	if (p->bytes != q->bytes)
		return p->bytes > q->bytes ? -1 : 1;
	if (p->site != q->site)
		return p->site < q->site ? -1 : 1;
	if (p->kind != q->kind)
		return (int)p->kind - (int)q->kind;
	return p->epoch < q->epoch ? -1 : p->epoch > q->epoch;
}

/* The epoch of a block allocated at ts: how many cuts are at or before it. */
static uint32_t epoch_of(const uint64_t *cuts, size_t n, uint64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cuts[mid] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

long msc_agg_leaks(const struct msc_agg *a, struct msc_leak **out)
{
	return msc_agg_leaks_cut(a, NULL, 0, out);
}

long msc_agg_leaks_cut(const struct msc_agg *a, const uint64_t *cuts, size_t ncuts, struct msc_leak **out)
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
		uint32_t epoch;

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
		epoch = ncuts ? epoch_of(cuts, ncuts < MSC_AGG_CUTS ? ncuts : MSC_AGG_CUTS, ts) : 0;
		key = (((uint64_t)site << 8 | kind) << 13 | epoch) + 1;
		slot = msc_u64map_get(&groups, key);
		if (!slot) {
			if (MSC_GROW(leaks, n + 1, cap, 64))
				goto oom;
			if (msc_u64map_put(&groups, key, n))
				goto oom;
			l = &leaks[n++];
			*l = (struct msc_leak){ site, kind, 0, 0, ts, ts, epoch };
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
