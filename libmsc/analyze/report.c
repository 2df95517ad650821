/* SPDX-License-Identifier: MIT */
/*
 * Reports from memscope streams: the loop over a stream's records, the
 * sites and leaks, read from their records or made from the events of an
 * --events stream (applied to an aggregation, with the heap over time).
 * Stacks are report_stacks.c's, the records that describe a process
 * report_records.c's; rendering is in render/.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_format.h"
#include "msc_proto.h"
#include "msc_report.h"
#include "msc_stream.h"
#include "msc_util.h"
#include "report_internal.h"

/* ------------------------------------------------------ heap over time */

#define HEAP_FIRST_SLOT_NS 10000ull

/* Twice as wide slots: the log keeps each stack's last change per slot. */
static void heap_coarser(struct msc_rheap *h)
{
	size_t i, o = 0;
	uint32_t s;

	h->slot_ns *= 2;
	for (i = 0; i < h->nstacks; i++)
		h->stacks[i].slot = UINT32_MAX;
	for (i = 0; i < h->nlog; i++) {
		struct msc_rheap_change c = h->log[i];
		uint64_t *k = msc_u64map_get(&h->index, (uint64_t)c.stack + 1);
		struct msc_rheap_stack *st = &h->stacks[*k];

		c.slot /= 2;
		if (st->slot == c.slot) {
			h->log[st->at].live = c.live;
			continue;
		}
		st->slot = c.slot;
		st->at = o;
		h->log[o++] = c;
	}
	h->nlog = o;
	for (s = 0; s < MSC_HEAP_SLOTS / 2; s++)
		h->total[s] = h->total[2 * s + 1 < h->nslots ? 2 * s + 1 : 2 * s];
	for (; s < MSC_HEAP_SLOTS; s++)
		h->total[s] = 0;
	h->nslots = (h->nslots + 1) / 2;
}

/* The stack's live bytes changed by delta at ts; the heap is now total. */
static int heap_change(struct msc_rheap *h, uint64_t ts, uint32_t stack, int64_t delta, uint64_t total)
{
	struct msc_rheap_stack *st;
	uint64_t *k, slot;
	uint32_t s;

	if (!h->slot_ns) {
		h->slot_ns = HEAP_FIRST_SLOT_NS;
		h->total = calloc(MSC_HEAP_SLOTS, sizeof(*h->total));
		if (!h->total || msc_u64map_init(&h->index, 1024))
			return -ENOMEM;
	}
	while ((slot = ts / h->slot_ns) >= MSC_HEAP_SLOTS)
		heap_coarser(h);
	/* Events come in time order; one that does not is taken as late. */
	if (h->nslots && slot < h->nslots - 1)
		slot = h->nslots - 1;
	k = msc_u64map_get(&h->index, (uint64_t)stack + 1);
	if (!k) {
		if (MSC_GROW(h->stacks, h->nstacks + 1, h->stacks_cap, 256) ||
		    msc_u64map_put(&h->index, (uint64_t)stack + 1, h->nstacks))
			return -ENOMEM;
		st = &h->stacks[h->nstacks++];
		st->live = 0;
		st->slot = UINT32_MAX;
	} else {
		st = &h->stacks[*k];
	}
	st->live += delta;
	/* Slots without a change keep the heap as it was. */
	for (s = h->nslots; s < slot; s++)
		h->total[s] = s ? h->total[s - 1] : 0;
	if (slot >= h->nslots)
		h->nslots = (uint32_t)slot + 1;
	h->total[slot] = total;
	if (st->slot == slot) {
		h->log[st->at].live = st->live;
		return 0;
	}
	if (MSC_GROW(h->log, h->nlog + 1, h->log_cap, 1024))
		return -ENOMEM;
	st->slot = (uint32_t)slot;
	st->at = h->nlog;
	h->log[h->nlog++] = (struct msc_rheap_change){ (uint32_t)slot, stack, st->live };
	return 0;
}

static void heap_release(struct msc_rheap *h)
{
	free(h->log);
	free(h->total);
	free(h->stacks);
	if (h->slot_ns)
		msc_u64map_release(&h->index);
	memset(h, 0, sizeof(*h));
}

int report_check_stack(struct msc_report *r, const struct msc_rec *rec, uint64_t stack,
		       struct msc_err *err)
{
	uint64_t *v = stack ? msc_u64map_get(&r->stacks, (uint32_t)stack) : NULL;

	if (stack && (!v || stack > UINT32_MAX))
		return msc_rec_err(err, rec, -EINVAL,
				   "%s record refers to stack %" PRIu64 ", never defined", rec->type, stack);
	if (v)
		((struct msc_rstack *)(uintptr_t)*v)->used = true;
	return 0;
}

static void image_add_leak(struct msc_report *r, const struct msc_rec *rec, int pid,
			   uint64_t count, uint64_t bytes)
{
	struct msc_rimage *im = image_of(r, pid);
	const char *kind;
	int k;

	if (!im)
		return;
	kind = msc_rec_str(rec, "kind", NULL);
	k = kind ? msc_leak_kind_parse(kind) : -1;
	if (k < 0)
		k = MSC_LEAK_UNSCANNED;
	msc_sat_add(&im->kind_bytes[k], bytes);
	msc_sat_add(&im->kind_blocks[k], count);
}

static int load_site(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rsite *s;
	struct msc_rimage *im;
	const struct msc_field *ages;
	uint64_t stack;
	int ret;

	if (MSC_GROW(r->sites, r->nsites + 1, r->sites_cap, 64))
		return -ENOMEM;
	s = &r->sites[r->nsites];
	memset(s, 0, sizeof(*s));
	if ((ret = need_u64(rec, "stack", &stack, err)) ||
	    (ret = report_check_stack(r, rec, stack, err)) ||
	    (ret = need_u64(rec, "size", &s->size, err)) || (ret = need_u64(rec, "allocs", &s->allocs, err)) ||
	    (ret = need_u64(rec, "frees", &s->frees, err)) || (ret = need_u64(rec, "bytes", &s->bytes, err)) ||
	    (ret = need_u64(rec, "live", &s->live, err)) ||
	    (ret = need_u64(rec, "live_bytes", &s->live_bytes, err)))
		return ret;
	s->stack = (uint32_t)stack;
	s->pid = msc_rec_pid(rec, r->pid);
	im = image_of(r, s->pid);
	s->image = im ? (int)(im - r->images) : -1;
	s->fn = str(r, rec, "fn");
	s->pool = str(r, rec, "pool");
	if (im && msc_is_mapping_fn(s->fn) && !strcmp(s->fn, "brk")) {
		im->brks += s->allocs;
		msc_sat_add(&im->brk_bytes, s->bytes);
	} else if (im && msc_is_mapping_fn(s->fn)) {
		im->mmaps += s->allocs;
		msc_sat_add(&im->mmap_bytes, s->bytes);
	} else if (im) {
		msc_sat_add(&im->allocs, s->allocs);
		msc_sat_add(&im->frees, s->frees);
		msc_sat_add(&im->bytes, s->bytes);
		im->temporary += u64(rec, "temporary");
	}
	/* One process per report (see load_event); an --events stream's
	 * sites are built again from its events. */
	if ((r->pid && s->pid != r->pid && !r->all_processes) || r->from_events)
		return 0;
	if (msc_rec_u64(rec, "size_max", &s->size_max))
		s->size_max = s->size;
	s->at_peak = u64(rec, "at_peak");
	s->temporary = u64(rec, "temporary");
	s->peak_live_bytes = u64(rec, "peak_live_bytes");
	s->first_ts = u64(rec, "first_ts");
	s->last_ts = u64(rec, "last_ts");
	ages = msc_rec_field(rec, "ages");
	if (ages && ages->val.kind == MSC_J_ARR) {
		struct msc_jiter it;
		struct msc_jval v;
		unsigned b = 0;

		msc_jiter_init(&it, &ages->val);
		while (b < MSC_AGE_BUCKETS && msc_jiter_next(&it, NULL, &v) > 0)
			msc_jval_u64(&v, &s->ages[b++]);
	}
	r->nsites++;
	return 0;
}

static int load_leak(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rleak *l;
	uint64_t stack;
	int ret;

	if (MSC_GROW(r->leaks, r->nleaks + 1, r->leaks_cap, 64))
		return -ENOMEM;
	l = &r->leaks[r->nleaks];
	memset(l, 0, sizeof(*l));
	if ((ret = need_u64(rec, "stack", &stack, err)) ||
	    (ret = report_check_stack(r, rec, stack, err)) ||
	    (ret = need_u64(rec, "size", &l->size, err)) || (ret = need_u64(rec, "count", &l->count, err)) ||
	    (ret = need_u64(rec, "bytes", &l->bytes, err)))
		return ret;
	l->stack = (uint32_t)stack;
	l->pid = msc_rec_pid(rec, r->pid);
	l->image = image_index(r, l->pid);
	image_add_leak(r, rec, l->pid, l->count, l->bytes);
	/* (an --events stream's other processes have no sites here: nor
	 * leaks, then) */
	if (r->pid && l->pid != r->pid && (!r->all_processes || r->from_events))
		return 0;
	if (msc_rec_u64(rec, "size_max", &l->size_max))
		l->size_max = l->size;
	l->fn = str(r, rec, "fn");
	l->pool = str(r, rec, "pool");
	l->kind = str(r, rec, "kind");
	if (!l->kind)
		l->kind = "unscanned";
	l->first_ts = u64(rec, "first_ts");
	l->last_ts = u64(rec, "last_ts");
	l->after = str(r, rec, "after");
	l->after_ts = u64(rec, "after_ts");
	r->nleaks++;
	return 0;
}

/* The allocation functions' codes by name, for the events' "fn": of two
 * codes with one name, the lower. */
static int fn_codes_init(struct msc_strmap *m)
{
	unsigned i;

	if (msc_strmap_init(m, MSC_FN_CODES))
		return -ENOMEM;
	for (i = 1; i < MSC_FN_CODES; i++) {
		const char *name = msc_fn_name(i);

		if ((i < MSC_FN_MAX || i >= MSC_FN_BUILTIN) && !msc_strmap_get(m, name) &&
		    msc_strmap_put(m, name, (void *)(uintptr_t)i))
			return -ENOMEM;
	}
	return 0;
}

/* The allocation function of an event, by its name; MSC_FN_NONE for a
 * name that is none of them. */
static unsigned fn_id(const struct msc_report *r, const char *name)
{
	return name ? (unsigned)(uintptr_t)msc_strmap_get(&r->fn_codes, name) : MSC_FN_NONE;
}

/* The aggregation of an --events stream, made at its first event. */
static int agg_ready(struct msc_report *r)
{
	if (r->agg_ready)
		return 0;
	if (!r->fn_codes.slots && fn_codes_init(&r->fn_codes))
		return -ENOMEM;
	/* the recorder wrote the errors it saw: not checked again; a
	 * sampled recording's blocks weigh as they did in the recorder */
	if (msc_agg_init(&r->agg, &(struct msc_agg_opts){ .no_errors = true, .sample = r->sample }))
		return -ENOMEM;
	r->agg_ready = true;
	r->from_events = true;
	return 0;
}

/* A pool's create or destroy (--events), for the aggregation. */
static int load_pool(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	const char *op = msc_rec_str(rec, "op", NULL), *name = msc_rec_str(rec, "name", NULL);
	uint64_t ts = 0, pool = 0;

	if (r->pid && msc_rec_pid(rec, r->pid) != r->pid)
		return 0;
	if (agg_ready(r))
		return -ENOMEM;
	if (need_u64(rec, "ts", &ts, err) || msc_rec_hex(rec, "pool", &pool) || !op)
		return msc_rec_err(err, rec, -EINVAL, "pool record needs ts, op and pool");
	if (!strcmp(op, "create"))
		return msc_agg_pool_create(&r->agg, pool, name ? name : "?");
	if (!strcmp(op, "destroy"))
		msc_agg_pool_destroy(&r->agg, ts, pool);
	return 0;
}

/* --events records, aggregated again with ms-record's own code. */
static int load_event(struct msc_report *r, const struct msc_rec *rec, enum msc_rtype t,
		      struct msc_err *err)
{
	struct msc_agg_result res = { .error = NULL };
	uint64_t ts = 0, tid = 0, ptr = 0, size = 0, stack = 0, a2 = 0, a3 = 0, before;
	const char *fn = msc_rec_str(rec, "fn", NULL);
	struct msc_cevent ev = { 0 };
	int ret;

	/* One process per report: the first stream's (others: ms-filter --pid). */
	if (r->pid && msc_rec_pid(rec, r->pid) != r->pid)
		return 0;
	if (agg_ready(r))
		return -ENOMEM;
	r->events++;
	if ((ret = need_u64(rec, "ts", &ts, err)) || (ret = need_u64(rec, "tid", &tid, err)) ||
	    (ret = need_u64(rec, "stack", &stack, err)) || (ret = need_u64(rec, "size", &size, err)) ||
	    (ret = report_check_stack(r, rec, stack, err)))
		return ret;
	if (!report_event_in_range(r, rec, t, ts))
		return 0;
	if (t == MSC_R_MREMAP || t == MSC_R_BRK)
		ret = msc_rec_hex(rec, "old", &ptr);
	else if (t == MSC_R_MMAP || t == MSC_R_MUNMAP)
		ret = msc_rec_hex(rec, "addr", &ptr);
	else
		ret = msc_rec_hex(rec, "ptr", &ptr);
	if (ret)
		return msc_rec_err(err, rec, -EINVAL, "%s record needs an address", rec->type);
	ev.ts = ts;
	ev.tid = (uint32_t)tid;
	ev.stack = (uint32_t)stack;
	ev.v[0] = ptr;
	ev.v[1] = size;
	switch (t) {
	case MSC_R_ALLOC:
		ev.type = MSC_CEV_ALLOC;
		ev.fn = fn_id(r, fn);
		if (ev.fn == MSC_FN_CUSTOM)
			msc_rec_hex(rec, "pool", &ev.v[2]);
		break;
	case MSC_R_FREE: {
		bool temporary = false;

		ev.type = MSC_CEV_FREE;
		ev.fn = fn_id(r, fn);
		ev.v[1] = 0;	/* a free's v1 is its pool */
		if (ev.fn == MSC_FN_CUSTOM)
			msc_rec_hex(rec, "pool", &ev.v[1]);
		/* Sampled: the shim's word that the block was temporary. */
		ev.v[2] = msc_rec_bool(rec, "temporary", &temporary) == 0 && temporary;
		break;
	}
	case MSC_R_UNFREE:
		ev.type = MSC_CEV_UNFREE;
		break;
	case MSC_R_HIDDEN:
		ev.type = MSC_CEV_HIDDEN;
		break;
	case MSC_R_MMAP:
		ev.type = MSC_CEV_MMAP;
		break;
	case MSC_R_MUNMAP:
		ev.type = MSC_CEV_MUNMAP;
		break;
	case MSC_R_MREMAP:
		if (msc_rec_u64(rec, "old_size", &a2) || msc_rec_hex(rec, "addr", &a3))
			return msc_rec_err(err, rec, -EINVAL, "mremap record needs old_size and addr");
		ev.type = MSC_CEV_MREMAP;
		ev.v[1] = a2;
		ev.v[2] = a3;
		ev.v[3] = size;
		break;
	case MSC_R_BRK:
		if (msc_rec_hex(rec, "new", &a2))
			return msc_rec_err(err, rec, -EINVAL, "brk record needs \"new\"");
		ev.type = MSC_CEV_BRK;
		ev.v[1] = a2;
		break;
	default:
		return 0;
	}
	before = msc_agg_live_bytes(&r->agg);
	msc_agg_apply(&r->agg, &ev, &res);
	/* A free's record names the stack of the block it frees. */
	if (r->want_heap_series && msc_agg_live_bytes(&r->agg) != before &&
	    heap_change(&r->heap, ts, ev.stack, (int64_t)(msc_agg_live_bytes(&r->agg) - before),
			msc_agg_live_bytes(&r->agg)))
		return -ENOMEM;
	return 0;
}

/*
 * The main process exec'ed: its next header starts a new image, which the
 * report describes.  What the old image's stream held goes (ms-record
 * aggregates image by image, its memory went with it); samples stay.
 */
int report_new_image(struct msc_report *r)
{
	r->nsites = 0;
	r->nleaks = 0;
	heap_release(&r->heap);
	if (r->agg_ready) {
		msc_agg_release(&r->agg);
		r->agg_ready = false;
		if (msc_agg_init(&r->agg, &(struct msc_agg_opts){ .no_errors = true }))
			return -ENOMEM;
		r->agg_ready = true;
	}
	r->complete = false;
	r->reason = NULL;
	r->has_status = false;
	r->nfiltered = 0;
	r->nfilters = 0;
	return 0;
}

/* The aggregates of an --events recording, as if they had been read. */
static int sites_from_events(struct msc_report *r)
{
	struct msc_agg *a = &r->agg;
	struct msc_leak *leaks = NULL;
	/* A scanned recording's leaks are its leak records, even when a
	 * filter dropped them all. */
	bool have_leaks = r->nleaks > 0 || r->scanned;
	long nleaks, i;
	uint32_t k;

	r->nsites = 0;
	for (k = 0; k < msc_agg_nsites(a); k++) {
		const struct msc_site *s = msc_agg_site_at(a, k);
		struct msc_rsite *o;

		if (s->removed)
			continue;
		if (MSC_GROW(r->sites, r->nsites + 1, r->sites_cap, 64))
			return -ENOMEM;
		o = &r->sites[r->nsites++];
		memset(o, 0, sizeof(*o));
		o->pid = r->pid;
		o->image = image_index(r, r->pid);
		o->stack = s->stack;
		o->size = s->size;
		o->size_max = s->classed ? s->size_max : s->size;
		o->fn = msc_fn_name(s->fn);
		o->pool = msc_agg_pool_name(a, s);	/* a lives as long as r */
		o->allocs = s->allocs;
		o->frees = s->frees;
		o->bytes = s->bytes;
		o->live = msc_site_live(s);
		o->live_bytes = s->live_bytes;
		o->at_peak = msc_agg_peak_contribution(a, s);
		o->temporary = s->temporary;
		o->peak_live_bytes = s->peak_inexact ? 0 : s->peak_live_bytes;
		memcpy(o->ages, s->ages, sizeof(o->ages));
		o->first_ts = s->first_ts;
		o->last_ts = s->last_ts;
	}
	/* A range's blocks (--since, --until): their own peak, not the run's. */
	if (r->since || r->until) {
		struct msc_agg_figures f;

		msc_agg_figures(a, &f);
		r->peak = f.peak;
		r->peak_ts = f.peak_ts;
		r->pages.heap_peak = f.heap_peak;
		r->pages.heap_peak_ts = f.heap_peak_ts;
		r->pages.mapped_peak = f.mapped_peak;
		r->pages.mapped_peak_ts = f.mapped_peak_ts;
	}
	/* Leak kinds come from the leak records (a scan is not in events);
	 * without them, what is still live is unscanned. */
	if (have_leaks)
		return 0;
	nleaks = msc_agg_leaks(a, &leaks);
	if (nleaks < 0)
		return (int)nleaks;
	for (i = 0; i < nleaks; i++) {
		const struct msc_site *s = msc_agg_site_at(a, leaks[i].site);
		struct msc_rleak *l;

		if (MSC_GROW(r->leaks, r->nleaks + 1, r->leaks_cap, 64)) {
			free(leaks);
			return -ENOMEM;
		}
		l = &r->leaks[r->nleaks++];
		memset(l, 0, sizeof(*l));
		l->pid = r->pid;
		l->image = image_index(r, r->pid);
		l->stack = s->stack;
		l->size = s->size;
		l->size_max = s->classed ? s->size_max : s->size;
		l->fn = msc_fn_name(s->fn);
		l->pool = msc_agg_pool_name(a, s);
		l->kind = msc_leak_kind_name(leaks[i].kind);
		l->count = leaks[i].count;
		l->bytes = leaks[i].bytes;
		l->first_ts = leaks[i].first_ts;
		l->last_ts = leaks[i].last_ts;
	}
	free(leaks);
	return 0;
}

int msc_report_load(struct msc_report *r, struct msc_reader *rd, struct msc_err *err)
{
	const char *const *alloc_fns = r->alloc_fns;
	unsigned nalloc_fns = r->nalloc_fns;
	bool want_heap_series = r->want_heap_series, all_processes = r->all_processes;
	bool no_auto_wrappers = r->no_auto_wrappers;
	const char *since = r->since, *until = r->until, *live_at = r->live_at;
	struct msc_rec rec;
	enum msc_rtype t;
	bool first = true;
	int ret;

	memset(r, 0, sizeof(*r));
	r->alloc_fns = alloc_fns;
	r->nalloc_fns = nalloc_fns;
	r->want_heap_series = want_heap_series;
	r->all_processes = all_processes;
	r->no_auto_wrappers = no_auto_wrappers;
	r->since = since;
	r->until = until;
	r->live_at = live_at;
	msc_span_init(&r->span, since, until);
	msc_arena_init(&r->arena);
	r->source = rd->name;
	if (msc_u64map_init(&r->stacks, 1024) || msc_u64map_init(&r->pids, 16) ||
	    msc_u64map_init(&r->image_of, 16) ||
	    msc_stackdefs_init(&r->defs))
		return msc_err_set(err, -ENOMEM, "out of memory");
	while ((ret = msc_reader_next(rd, &rec, err)) > 0) {
		if (first) {
			struct msc_header_info hi;

			ret = msc_stream_parse_header(&rec, &hi, err);
			if (ret)
				break;
			first = false;
		}
		t = msc_rec_rtype(&rec);
		switch (t) {
		case MSC_R_HEADER:
			ret = report_load_header(r, &rec);
			break;
		case MSC_R_STACK:
			ret = report_load_stack(r, &rec, err);
			break;
		case MSC_R_FRAME:
			ret = msc_stackdefs_frame(&r->defs, &rec, NULL, err);
			break;
		case MSC_R_SITE:
			ret = load_site(r, &rec, err);
			break;
		case MSC_R_LEAK:
			ret = load_leak(r, &rec, err);
			break;
		case MSC_R_ERROR:
			ret = report_load_error(r, &rec, err);
			break;
		case MSC_R_END:
			ret = report_load_end(r, &rec);
			break;
		case MSC_R_SAMPLE:
			ret = report_load_sample(r, &rec);
			break;
		case MSC_R_TIMELINE:
			ret = report_load_timeline(r, &rec, err);
			break;
		case MSC_R_MARK:
			ret = report_load_mark(r, &rec);
			break;
		case MSC_R_SERIES:
			ret = report_load_series(r, &rec, err);
			break;
		case MSC_R_DELTA:
			ret = report_load_delta(r, &rec, err);
			break;
		case MSC_R_PROCESS:
			ret = report_load_process(r, &rec);
			break;
		case MSC_R_MAPPING:
			ret = report_load_mapping(r, &rec);
			break;
		case MSC_R_ALLOC: case MSC_R_FREE: case MSC_R_UNFREE: case MSC_R_MMAP:
		case MSC_R_MUNMAP: case MSC_R_MREMAP: case MSC_R_BRK: case MSC_R_HIDDEN:
			ret = load_event(r, &rec, t, err);
			break;
		case MSC_R_POOL:
			ret = load_pool(r, &rec, err);
			break;
		default:	/* threads, live, meminfo; types of later versions */
			ret = 0;
			break;
		}
		if (ret == -ENOMEM)
			msc_err_set(err, ret, "%s: out of memory", rd->name);
		if (ret)
			break;
	}
	if (ret == 0 && first)
		ret = msc_err_set(err, -EINVAL, "%s: empty input (no header record)", rd->name);
	if (ret == 0)
		ret = report_apply_range(r, rd->name, err);
	/* What was read counts even after bad input: build what can be. */
	if (r->from_events && sites_from_events(r) && !ret)
		ret = msc_err_set(err, -ENOMEM, "%s: out of memory", rd->name);
	if (ret) {
		struct msc_err e2;

		report_resolve_stacks(r, &e2);
	} else {
		ret = report_resolve_stacks(r, err);
	}
	return ret;
}

void msc_report_leak_blocks(const struct msc_report *r, uint64_t *leaks)
{
	size_t i;
	unsigned k;

	for (i = 0; i < r->nleaks; i++)
		/* the report's process (--pprof holds every process's) */
		for (k = 0; k < MSC_LEAK_KINDS && (!r->pid || r->leaks[i].pid == r->pid); k++)
			if (!strcmp(r->leaks[i].kind, msc_leak_kind_name(k)))
				msc_sat_add(&leaks[k], r->leaks[i].count);
}

void msc_report_release(struct msc_report *r)
{
	free(r->sites);
	free(r->leaks);
	free(r->errors);
	free(r->samples);
	free(r->timeline.series);
	free(r->marks);
	free(r->deltas);
	free(r->procs);
	free(r->maps);
	free(r->images);
	if (r->agg_ready)
		msc_agg_release(&r->agg);
	heap_release(&r->heap);
	msc_u64map_release(&r->stacks);
	msc_u64map_release(&r->pids);
	msc_u64map_release(&r->image_of);
	msc_strmap_release(&r->fn_codes);
	msc_stackdefs_release(&r->defs);
	msc_arena_release(&r->arena);
}
