/* SPDX-License-Identifier: MIT */
/* The record vocabulary: see msc_format.h. */
#include "msc_proto.h"
#include "msc_format.h"

/* Begins a site or leak record with what identifies its site. */
static void begin_site_record(struct msc_writer *w, const char *type, const struct msc_site *s,
			      int pid)
{
	msc_w_begin(w, type);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "stack", s->stack);
	msc_w_u64(w, "size", s->size);
	if (s->classed)
		msc_w_u64(w, "size_max", s->size_max);
	msc_w_str(w, "fn", msc_fn_name(s->fn));
}

void msc_write_site(struct msc_writer *w, const struct msc_agg *a, const struct msc_site *s,
		    int pid)
{
	unsigned b;

	begin_site_record(w, "site", s, pid);
	msc_w_u64(w, "allocs", s->allocs);
	msc_w_u64(w, "frees", s->frees);
	msc_w_u64(w, "bytes", s->bytes);
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
		    int pid)
{
	const struct msc_site *s = &a->sites[l->site];

	begin_site_record(w, "leak", s, pid);
	msc_w_str(w, "kind", msc_leak_kind_name(l->kind));
	msc_w_u64(w, "count", l->count);
	msc_w_u64(w, "bytes", l->bytes);
	msc_w_u64(w, "first_ts", l->first_ts);
	msc_w_u64(w, "last_ts", l->last_ts);
	msc_w_end(w);
}

void msc_write_event(struct msc_writer *w, const struct msc_cevent *ev, int pid,
		     const struct msc_freed *fr)
{
	static const char *const names[] = {
		[MSC_CEV_ALLOC] = "alloc",   [MSC_CEV_FREE] = "free",	   [MSC_CEV_UNFREE] = "unfree",
		[MSC_CEV_MMAP] = "mmap",     [MSC_CEV_MUNMAP] = "munmap", [MSC_CEV_MREMAP] = "mremap",
		[MSC_CEV_BRK] = "brk",	     [MSC_CEV_THREAD] = "thread",
	};

	if (ev->type >= sizeof(names) / sizeof(names[0]) || !names[ev->type])
		return;
	msc_w_begin(w, names[ev->type]);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", ev->ts);
	msc_w_u64(w, "tid", ev->tid);
	switch (ev->type) {
	case MSC_CEV_ALLOC:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_FREE:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		if (fr) {
			msc_w_u64(w, "size", fr->size);
			msc_w_u64(w, "stack", fr->stack);
			msc_w_u64(w, "alloc_ts", fr->alloc_ts);
		}
		break;
	case MSC_CEV_UNFREE:
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
	default:
		break;
	}
	msc_w_end(w);
}

void msc_write_sample(struct msc_writer *w, const struct msc_agg *a, int pid, uint64_t ts,
		      uint64_t rss)
{
	msc_w_begin(w, "sample");
	msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", ts);
	msc_w_u64(w, "rss", rss);
	msc_w_u64(w, "heap", a->live_bytes);
	msc_w_u64(w, "allocs", a->allocs);
	msc_w_u64(w, "bytes", a->bytes);
	msc_w_end(w);
}

void msc_write_totals(struct msc_writer *w, const struct msc_agg *a, bool leaks)
{
	uint64_t leaked, blocks, possibly, reachable;
	bool scanned;

	msc_agg_leak_totals(a, &leaked, &blocks, &possibly, &reachable, &scanned);
	msc_w_u64(w, "allocs", a->allocs);
	msc_w_u64(w, "frees", a->frees);
	msc_w_u64(w, "bytes", a->bytes);
	msc_w_u64(w, "peak", a->peak_live_bytes);
	msc_w_u64(w, "peak_ts", a->peak_ts);
	msc_w_u64(w, "live", a->live_blocks);
	msc_w_u64(w, "live_bytes", a->live_bytes);
	if (leaks) {
		msc_w_u64(w, "leaked_bytes", leaked);
		msc_w_u64(w, "leaked_blocks", blocks);
		msc_w_u64(w, "possibly_bytes", possibly);
		msc_w_u64(w, "reachable_bytes", reachable);
		msc_w_bool(w, "scanned", scanned);
	}
	msc_w_u64(w, "temporary", a->temporary);
	msc_w_u64(w, "mmaps", a->mmaps);
	msc_w_u64(w, "mmap_bytes", a->mmap_bytes);
	msc_w_u64(w, "unknown_frees", a->unknown_frees);
	if (a->implicit_frees)
		msc_w_u64(w, "implicit_frees", a->implicit_frees);
	if (a->dropped)
		msc_w_u64(w, "dropped", a->dropped);
}
