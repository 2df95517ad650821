/* SPDX-License-Identifier: MIT */
/* The records ms-record writes: see msc_records.h. */
#include <string.h>

#include "msc_collect.h"
#include "msc_format.h"
#include "msc_records.h"
#include "msc_util.h"

void msc_write_event(struct msc_writer *w, const struct msc_cevent *ev, int pid,
		     const struct msc_freed *fr)
{
	static const enum msc_rtype types[] = {
		[MSC_CEV_ALLOC] = MSC_R_ALLOC,	 [MSC_CEV_FREE] = MSC_R_FREE,
		[MSC_CEV_UNFREE] = MSC_R_UNFREE, [MSC_CEV_MMAP] = MSC_R_MMAP,
		[MSC_CEV_MUNMAP] = MSC_R_MUNMAP, [MSC_CEV_MREMAP] = MSC_R_MREMAP,
		[MSC_CEV_BRK] = MSC_R_BRK,	 [MSC_CEV_THREAD] = MSC_R_THREAD,
		[MSC_CEV_POOL_CREATE] = MSC_R_POOL, [MSC_CEV_POOL_DESTROY] = MSC_R_POOL,
		[MSC_CEV_HIDDEN] = MSC_R_HIDDEN,
	};

	if (ev->type >= ARRAY_SIZE(types) || types[ev->type] == MSC_R_OTHER)
		return;
	msc_w_record(w, types[ev->type]);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", ev->ts);
	msc_w_u64(w, "tid", ev->tid);
	switch (ev->type) {
	case MSC_CEV_ALLOC:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		if (ev->fn == MSC_FN_CUSTOM && ev->v[2])
			msc_w_hex(w, "pool", ev->v[2]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_FREE:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		if (ev->fn == MSC_FN_CUSTOM && ev->v[1])
			msc_w_hex(w, "pool", ev->v[1]);
		if (fr) {
			msc_w_u64(w, "size", fr->size);
			msc_w_u64(w, "stack", fr->stack);
			msc_w_u64(w, "alloc_ts", fr->alloc_ts);
		}
		if (ev->v[2])
			msc_w_bool(w, "temporary", true);
		break;
	case MSC_CEV_UNFREE:
	case MSC_CEV_HIDDEN:
		msc_w_hex(w, "ptr", ev->v[0]);
		break;
	case MSC_CEV_MMAP:
		msc_w_hex(w, "addr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_MUNMAP:
		msc_w_hex(w, "addr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		break;
	case MSC_CEV_MREMAP:
		msc_w_hex(w, "old", ev->v[0]);
		msc_w_u64(w, "old_size", ev->v[1]);
		msc_w_hex(w, "addr", ev->v[2]);
		msc_w_u64(w, "size", ev->v[3]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_BRK:
		msc_w_hex(w, "old", ev->v[0]);
		msc_w_hex(w, "new", ev->v[1]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_POOL_CREATE:
	case MSC_CEV_POOL_DESTROY: {
		char name[MSC_POOL_NAME];

		msc_w_str(w, "op", ev->type == MSC_CEV_POOL_CREATE ? "create" : "destroy");
		msc_w_hex(w, "pool", ev->v[0]);
		if (ev->type == MSC_CEV_POOL_CREATE) {
			memcpy(name, &ev->v[1], sizeof(name));
			name[sizeof(name) - 1] = '\0';
			msc_w_str(w, "name", name);
		}
		msc_w_u64(w, "stack", ev->stack);
		break;
	}
	default:
		break;
	}
	msc_w_end(w);
}

/* -------------------------------------------------------------- writing */

/* Begins a site or leak record with what identifies its site. */
static void begin_site_record(struct msc_writer *w, enum msc_rtype type, const struct msc_agg *a,
			      const struct msc_site *s, int pid)
{
	const char *pool = msc_agg_pool_name(a, s);

	msc_w_record(w, type);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "stack", s->stack);
	msc_w_u64(w, "size", s->size);
	if (s->classed)
		msc_w_u64(w, "size_max", s->size_max);
	msc_w_str(w, "fn", msc_fn_name(s->fn));
	if (pool)
		msc_w_str(w, "pool", pool);
}

void msc_write_site(struct msc_writer *w, const struct msc_agg *a, const struct msc_site *s,
		    int pid)
{
	unsigned b;

	begin_site_record(w, MSC_R_SITE, a, s, pid);
	msc_w_u64(w, "allocs", s->allocs);
	msc_w_u64(w, "frees", s->frees);
	msc_w_u64(w, "bytes", s->bytes);
	if (msc_agg_sampled(a))
		msc_w_u64(w, "samples", msc_site_samples(s));
	msc_w_u64(w, "live", msc_site_live(s));
	msc_w_u64(w, "live_bytes", s->live_bytes);
	if (!s->peak_inexact)
		msc_w_u64(w, "peak_live_bytes", s->peak_live_bytes);
	msc_w_u64(w, "at_peak", msc_agg_peak_contribution(a, s));
	msc_w_u64(w, "temporary", s->temporary);
	msc_w_arr(w, "ages");
	for (b = 0; b < MSC_AGE_BUCKETS; b++)
		msc_w_u64(w, NULL, s->ages[b]);
	msc_w_arr_end(w);
	msc_w_u64(w, "first_ts", s->first_ts);
	msc_w_u64(w, "last_ts", s->last_ts);
	msc_w_end(w);
}

void msc_write_leak(struct msc_writer *w, const struct msc_agg *a, const struct msc_leak *l,
		    const char *after, uint64_t after_ts, int pid)
{
	const struct msc_site *s = msc_agg_site_at(a, l->site);

	begin_site_record(w, MSC_R_LEAK, a, s, pid);
	msc_w_str(w, "kind", msc_leak_kind_name(l->kind));
	msc_w_u64(w, "count", l->count);
	msc_w_u64(w, "bytes", l->bytes);
	msc_w_u64(w, "first_ts", l->first_ts);
	msc_w_u64(w, "last_ts", l->last_ts);
	if (after) {
		msc_w_str(w, "after", after);
		msc_w_u64(w, "after_ts", after_ts);
	}
	msc_w_end(w);
}

void msc_write_error(struct msc_writer *w, const struct msc_agg_error *e, int pid)
{
	msc_w_record(w, MSC_R_ERROR);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_str(w, "kind", msc_error_name(e->kind));
	msc_w_u64(w, "ts", e->ts);
	msc_w_u64(w, "tid", e->tid);
	msc_w_hex(w, "ptr", e->ptr);
	msc_w_str(w, "fn", msc_fn_name(e->fn));
	if (e->stack)
		msc_w_u64(w, "stack", e->stack);
	if (e->have_block) {
		/* the block: freed before, or the one ptr points into */
		msc_w_hex(w, "block", e->block);
		if (e->block != e->ptr)
			msc_w_u64(w, "offset", e->ptr - e->block);
		msc_w_u64(w, "size", e->size);
		msc_w_str(w, "alloc_fn", msc_fn_name(e->alloc_fn));
		if (e->alloc_stack)
			msc_w_u64(w, "alloc_stack", e->alloc_stack);
	}
	if (e->have_free) {
		msc_w_u64(w, "free_ts", e->free_ts);
		msc_w_u64(w, "free_tid", e->free_tid);
		msc_w_str(w, "free_fn", msc_fn_name(e->free_fn));
		if (e->free_stack)
			msc_w_u64(w, "free_stack", e->free_stack);
	}
	msc_w_end(w);
}

void msc_write_sample(struct msc_writer *w, const struct msc_agg *a, int pid, uint64_t ts,
		      uint64_t rss)
{
	struct msc_agg_figures f;

	msc_agg_figures(a, &f);
	msc_w_record(w, MSC_R_SAMPLE);
	msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", ts);
	msc_w_u64(w, "rss", rss);
	msc_w_u64(w, "heap", f.heap);
	msc_w_u64(w, "mapped", f.mapped);
	msc_w_u64(w, "allocs", f.allocs);
	msc_w_u64(w, "bytes", f.bytes);
	msc_w_end(w);
}

void msc_write_totals(struct msc_writer *w, const struct msc_agg *a, bool leaks,
		      struct msc_leak_sum *sum)
{
	/* Every figure of ms-report's summary, in the order it lists them. */
	static const unsigned kinds[] = { MSC_LEAK_DEFINITELY, MSC_LEAK_INDIRECTLY, MSC_LEAK_POSSIBLY,
					  MSC_LEAK_REACHABLE, MSC_LEAK_UNSCANNED, MSC_LEAK_UNKNOWN };
	uint64_t leaked, blocks, kind_bytes[MSC_LEAK_KINDS], kind_blocks[MSC_LEAK_KINDS], errors = 0;
	struct msc_agg_figures f;
	char key[32];
	bool scanned;
	unsigned k;

	msc_agg_kind_totals(a, kind_bytes, kind_blocks);
	msc_agg_leak_totals_of(a, kind_bytes, kind_blocks, &leaked, &blocks, NULL, NULL, &scanned);
	if (sum)
		*sum = (struct msc_leak_sum){ leaked, blocks, scanned };
	msc_agg_figures(a, &f);
	msc_w_u64(w, "allocs", f.allocs);
	msc_w_u64(w, "frees", f.frees);
	msc_w_u64(w, "bytes", f.bytes);
	msc_w_u64(w, "peak", f.peak);
	msc_w_u64(w, "peak_ts", f.peak_ts);
	msc_w_u64(w, "live", f.live_blocks);
	msc_w_u64(w, "live_bytes", f.live_bytes);
	if (leaks) {
		msc_w_u64(w, "leaked_bytes", leaked);
		msc_w_u64(w, "leaked_blocks", blocks);
		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			snprintf(key, sizeof(key), "%s_bytes", msc_leak_kind_name(kinds[k]));
			msc_w_u64(w, key, kind_bytes[kinds[k]]);
			snprintf(key, sizeof(key), "%s_blocks", msc_leak_kind_name(kinds[k]));
			msc_w_u64(w, key, kind_blocks[kinds[k]]);
		}
		msc_w_bool(w, "scanned", scanned);
	}
	msc_w_u64(w, "temporary", f.temporary);
	msc_w_u64(w, "mmaps", f.mmaps);
	msc_w_u64(w, "mmap_bytes", f.mmap_bytes);
	msc_w_u64(w, "brks", f.brks);
	msc_w_u64(w, "brk_bytes", f.brk_bytes);
	/* The page-level view: the heap against what the program mapped. */
	msc_w_u64(w, "heap_peak", f.heap_peak);
	msc_w_u64(w, "heap_peak_ts", f.heap_peak_ts);
	msc_w_u64(w, "mapped_peak", f.mapped_peak);
	msc_w_u64(w, "mapped_peak_ts", f.mapped_peak_ts);
	msc_w_u64(w, "mapped", f.mapped);
	msc_w_u64(w, "unknown_frees", f.unknown_frees);
	for (k = 1; k < MSC_ERR_KINDS; k++)
		errors += f.errors[k];
	msc_w_u64(w, "errors", errors);
	for (k = 1; k < MSC_ERR_KINDS; k++)
		if (f.errors[k]) {
			/* double_free, invalid_free, mismatch, realloc_freed */
			snprintf(key, sizeof(key), "%s", msc_error_name(k));
			for (char *c = key; *c; c++)
				if (*c == '-')
					*c = '_';
			msc_w_u64(w, key, f.errors[k]);
		}
	if (f.implicit_frees)
		msc_w_u64(w, "implicit_frees", f.implicit_frees);
	if (f.dropped)
		msc_w_u64(w, "dropped", f.dropped);
	if (f.sample) {
		/* The figures above but allocs, frees and bytes are
		 * estimates; these are what they rest on. */
		msc_w_u64(w, "sample", f.sample);
		msc_w_u64(w, "samples", f.recorded_allocs);
	}
}
