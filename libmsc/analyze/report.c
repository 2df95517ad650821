/* SPDX-License-Identifier: MIT */
/* Reports from memscope streams: loading.  Rendering is in render.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_format.h"
#include "msc_proto.h"
#include "msc_report.h"
#include "msc_stream.h"
#include "msc_util.h"

static const char *str(struct msc_report *r, const struct msc_rec *rec, const char *key)
{
	const char *s = msc_rec_str(rec, key, NULL);

	return s ? msc_arena_strdup(&r->arena, s) : NULL;
}

/* How many members or elements an object or array has. */
static size_t members(const struct msc_jval *v)
{
	struct msc_jiter it;
	struct msc_jval x;
	size_t n = 0;

	msc_jiter_init(&it, v);
	while (msc_jiter_next(&it, NULL, &x) > 0)
		n++;
	return n;
}

/* The strings of an array (other elements are skipped), in the arena. */
static int strings(struct msc_report *r, const struct msc_jval *arr, const char ***out, unsigned *n)
{
	size_t cap = members(arr);
	struct msc_jiter it;
	struct msc_jval x;

	*out = msc_arena_alloc(&r->arena, (cap + !cap) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*n = 0;
	msc_jiter_init(&it, arr);
	while (*n < cap && msc_jiter_next(&it, NULL, &x) > 0) {
		(*out)[*n] = msc_jval_str(&x, &r->arena, NULL);
		if ((*out)[*n])
			(*n)++;
	}
	return 0;
}

static uint64_t u64(const struct msc_rec *rec, const char *key)
{
	uint64_t v = 0;

	msc_rec_u64(rec, key, &v);
	return v;
}

/* Integers that must be integers: an error names the record. */
static int need_u64(const struct msc_rec *rec, const char *key, uint64_t *out, struct msc_err *err)
{
	int ret = msc_rec_u64(rec, key, out);

	if (ret == -ENOENT) {
		*out = 0;
		return 0;
	}
	if (ret)
		return msc_rec_err(err, rec, -EINVAL, "\"%s\" must be a non-negative integer", key);
	return 0;
}

static int load_stack(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rstack *s;
	uint64_t id;
	int ret;

	if (msc_rec_u64(rec, "id", &id) || !id || id > UINT32_MAX)
		return msc_rec_err(err, rec, -EINVAL, "stack record needs a positive integer \"id\"");
	s = msc_arena_zalloc(&r->arena, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->id = (uint32_t)id;
	/* Its frames are read once the stream is, if a record names it. */
	ret = msc_stackdefs_stack(&r->defs, rec, &s->def, err);
	if (ret)
		return ret;
	return msc_u64map_put(&r->stacks, id, (uint64_t)(uintptr_t)s);
}

/* Reads the frames of the stacks records named, deepest first (a chain of
 * stacks shares one array): linear in the stream, where reading every
 * stack's as it came was quadratic in a chain's depth. */
static int resolve_stacks(struct msc_report *r, struct msc_err *err)
{
	struct msc_stackdef **defs = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0;

	for (i = 0; i <= r->stacks.mask; i++) {
		struct msc_rstack *s = (struct msc_rstack *)(uintptr_t)r->stacks.slots[i].val;

		if (!r->stacks.slots[i].key || !s->used || s->frames)
			continue;
		if (MSC_GROW(defs, n + 1, cap, 256)) {
			ret = msc_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		defs[n++] = s->def;
	}
	ret = msc_stackdefs_resolve(&r->defs, defs, n, err);
	if (ret)
		goto out;
	for (i = 0; i <= r->stacks.mask; i++) {
		struct msc_rstack *s = (struct msc_rstack *)(uintptr_t)r->stacks.slots[i].val;

		if (!r->stacks.slots[i].key || !s->used || s->frames)
			continue;
		s->frames = s->def->frames;
		s->n = s->def->n;
		s->attr = msc_stack_attr(s->frames, s->n, r->alloc_fns, r->nalloc_fns);
	}
out:
	free(defs);
	return ret;
}

const struct msc_rstack *msc_report_stack(const struct msc_report *r, uint32_t id)
{
	uint64_t *v = msc_u64map_get(&r->stacks, id);

	return v ? (const struct msc_rstack *)(uintptr_t)*v : NULL;
}

bool msc_report_runtime_fn(const char *fn)
{
	static const char *const roots[] = { "_start", "__libc_start_main", "__libc_start_main_impl",
					      "__libc_start_call_main", "start_thread", "clone", "clone3" };
	size_t i;

	for (i = 0; fn && i < ARRAY_SIZE(roots); i++)
		if (!strcmp(fn, roots[i]))
			return true;
	return false;
}

const char *msc_report_program(const struct msc_report *r, int image)
{
	return image >= 0 && (size_t)image < r->nimages ? r->images[image].program : NULL;
}

bool msc_report_stack_truncated(const struct msc_report *r, const struct msc_rstack *s)
{
	unsigned i, calls = 0;

	if (!r->depth || !s || s->n < r->depth || msc_report_runtime_fn(s->frames[s->n - 1].fn))
		return false;
	for (i = 0; i < s->n && calls < r->depth; i++)
		calls += !s->frames[i].inlined;
	return calls >= r->depth;
}

unsigned msc_report_stack_shown(const struct msc_rstack *s)
{
	unsigned i, calls = 0;

	for (i = 0; s && i < s->n; i++)
		if (!s->frames[i].inlined && ++calls > MSC_REPORT_SHOWN_CALLS)
			break;
	return i;
}

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

static int check_stack(struct msc_report *r, const struct msc_rec *rec, uint64_t stack,
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

/* The image a record of process pid belongs to: its last one, or NULL. */
static struct msc_rimage *image_of(struct msc_report *r, int pid)
{
	uint64_t *v = msc_u64map_get(&r->image_of, (uint64_t)pid + 1);

	return v ? &r->images[*v - 1] : NULL;
}

/* The same, as an index into images (-1: none). */
static int image_index(struct msc_report *r, int pid)
{
	struct msc_rimage *im = image_of(r, pid);

	return im ? (int)(im - r->images) : -1;
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
	if ((ret = need_u64(rec, "stack", &stack, err)) || (ret = check_stack(r, rec, stack, err)) ||
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
	if ((ret = need_u64(rec, "stack", &stack, err)) || (ret = check_stack(r, rec, stack, err)) ||
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
	r->nleaks++;
	return 0;
}

static int load_error(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rerror *e;
	uint64_t stack = 0, alloc_stack = 0, free_stack = 0;
	int ret;

	if (MSC_GROW(r->errors, r->nerrors + 1, r->errors_cap, 16))
		return -ENOMEM;
	e = &r->errors[r->nerrors];
	memset(e, 0, sizeof(*e));
	e->kind = str(r, rec, "kind");
	if (!e->kind)
		return msc_rec_err(err, rec, -EINVAL, "error record needs a \"kind\"");
	msc_rec_u64(rec, "stack", &stack);
	msc_rec_u64(rec, "alloc_stack", &alloc_stack);
	msc_rec_u64(rec, "free_stack", &free_stack);
	if ((ret = check_stack(r, rec, stack, err)) || (ret = check_stack(r, rec, alloc_stack, err)) ||
	    (ret = check_stack(r, rec, free_stack, err)))
		return ret;
	e->pid = msc_rec_pid(rec, r->pid);
	if (r->pid && e->pid != r->pid)
		return 0;
	e->stack = (uint32_t)stack;
	e->alloc_stack = (uint32_t)alloc_stack;
	e->free_stack = (uint32_t)free_stack;
	e->fn = str(r, rec, "fn");
	e->alloc_fn = str(r, rec, "alloc_fn");
	e->free_fn = str(r, rec, "free_fn");
	msc_rec_hex(rec, "ptr", &e->ptr);
	e->has_block = msc_rec_u64(rec, "size", &e->size) == 0;
	e->offset = u64(rec, "offset");
	r->nerrors++;
	return 0;
}

static unsigned fn_from_name(const char *name)
{
	unsigned i;

	for (i = 1; name && i < MSC_FN_MAX; i++)
		if (strcmp(msc_fn_name(i), name) == 0)
			return i;
	for (i = MSC_FN_BUILTIN; name && i < MSC_FN_CODES; i++)
		if (strcmp(msc_fn_name(i), name) == 0)
			return i;
	return MSC_FN_NONE;
}

/* The allocation function of an event; the last one is remembered, as
 * runs of the same function are the rule. */
static unsigned fn_id(struct msc_report *r, const char *name)
{
	if (!name)
		return MSC_FN_NONE;
	if (r->last_fn_name[0] && strcmp(name, r->last_fn_name) == 0)
		return r->last_fn;
	r->last_fn = fn_from_name(name);
	snprintf(r->last_fn_name, sizeof(r->last_fn_name), "%s", name);
	return r->last_fn;
}

/* The aggregation of an --events stream, made at its first event. */
static int agg_ready(struct msc_report *r)
{
	if (r->agg_ready)
		return 0;
	if (msc_agg_init(&r->agg))
		return -ENOMEM;
	/* the recorder wrote the errors it saw: not checked again */
	r->agg.no_errors = true;
	/* a sampled recording's blocks weigh as they did in the recorder */
	r->agg.sample = r->sample;
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
	    (ret = check_stack(r, rec, stack, err)))
		return ret;
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
	before = r->agg.live_bytes;
	msc_agg_apply(&r->agg, &ev, NULL);
	/* A free's record names the stack of the block it frees. */
	if (r->want_heap_series && r->agg.live_bytes != before &&
	    heap_change(&r->heap, ts, ev.stack, (int64_t)(r->agg.live_bytes - before), r->agg.live_bytes))
		return -ENOMEM;
	return 0;
}

static void pages_of(struct msc_rpages *pg, const struct msc_rec *rec)
{
	pg->have = msc_rec_u64(rec, "heap_peak", &pg->heap_peak) == 0;
	pg->heap_peak_ts = u64(rec, "heap_peak_ts");
	pg->mapped_peak = u64(rec, "mapped_peak");
	pg->mapped_peak_ts = u64(rec, "mapped_peak_ts");
	pg->mapped = u64(rec, "mapped");
	pg->rss_peak = u64(rec, "hwm");
}

/* An image's end: how and when it ended. */
static void image_end(struct msc_report *r, const struct msc_rec *rec)
{
	struct msc_rimage *im = image_of(r, msc_rec_pid(rec, r->pid));
	int64_t v;

	if (!im || im->complete)
		return;
	im->complete = true;
	im->reason = str(r, rec, "reason");
	if (msc_rec_i64(rec, "status", &v) == 0) {
		im->status = (int)v;
		im->has_status = true;
	}
	if (msc_rec_i64(rec, "signal", &v) == 0)
		im->signal = (int)v;
	im->duration = u64(rec, "ts");
	im->peak = u64(rec, "peak");
	im->peak_ts = u64(rec, "peak_ts");
	im->lost = u64(rec, "lost");
	pages_of(&im->pages, rec);
}

/* ms-diff's "paired" processes as one line: "svc -> svc2, ...". */
static int diff_paired(struct msc_report *r, const struct msc_rec *rec)
{
	const struct msc_field *f = msc_rec_field(rec, "paired");
	struct msc_jiter it;
	struct msc_jval v;
	char line[512];
	size_t len = 0;

	if (!f || f->val.kind != MSC_J_ARR)
		return 0;
	line[0] = '\0';
	msc_jiter_init(&it, &f->val);
	while (msc_jiter_next(&it, NULL, &v) > 0 && len < sizeof(line)) {
		const char *b = v.kind == MSC_J_OBJ ? msc_jval_member_str(&v, "before", &r->arena) : NULL;
		const char *a = v.kind == MSC_J_OBJ ? msc_jval_member_str(&v, "after", &r->arena) : NULL;
		int n;

		if (!a || !b)
			continue;
		n = snprintf(line + len, sizeof(line) - len, "%s%s -> %s", len ? ", " : "", b, a);
		len = n < 0 ? sizeof(line) : len + (size_t)n;
	}
	if (!line[0])
		return 0;
	r->diff_paired = msc_arena_strdup(&r->arena, line);
	return r->diff_paired ? 0 : -1;
}
static int load_end(struct msc_report *r, const struct msc_rec *rec)
{
	const struct msc_field *f;
	int64_t v;

	image_end(r, rec);

	/* The main process's end describes the program (the first stream's;
	 * with --follow, the others end before or after it). */
	if (r->complete || (r->pid && msc_rec_pid(rec, r->pid) != r->pid))
		return 0;
	r->complete = true;
	r->reason = str(r, rec, "reason");
	if (msc_rec_i64(rec, "status", &v) == 0) {
		r->status = (int)v;
		r->has_status = true;
	}
	if (msc_rec_i64(rec, "signal", &v) == 0)
		r->signal = (int)v;
	if (r->mode && !strcmp(r->mode, "diff")) {
		r->diff_metric = str(r, rec, "metric");
		msc_rec_i64(rec, "before", &r->diff_before);
		msc_rec_i64(rec, "after", &r->diff_after);
		r->diff_has_elapsed = msc_rec_i64(rec, "elapsed", &r->diff_elapsed) == 0;
		r->diff_new = u64(rec, "processes_new");
		r->diff_gone = u64(rec, "processes_gone");
		if (diff_paired(r, rec))
			return -ENOMEM;
	}
	r->duration = u64(rec, "ts");
	r->peak = u64(rec, "peak");
	r->peak_ts = u64(rec, "peak_ts");
	r->lost = u64(rec, "lost");
	pages_of(&r->pages, rec);
	r->has_end_totals = msc_rec_u64(rec, "allocs", &r->end_allocs) == 0;
	r->end_frees = u64(rec, "frees");
	r->end_bytes = u64(rec, "bytes");
	r->leaked_bytes = u64(rec, "leaked_bytes");
	r->leaked_blocks = u64(rec, "leaked_blocks");
	r->end_errors = u64(rec, "errors");
	msc_rec_bool(rec, "scanned", &r->scanned);
	f = msc_rec_field(rec, "filtered");
	if (f && f->val.kind == MSC_J_OBJ) {
		struct msc_jiter it;
		struct msc_field k;
		struct msc_jval c;
		size_t n = members(&f->val);

		r->filtered = msc_arena_zalloc(&r->arena, (n + !n) * sizeof(*r->filtered));
		if (!r->filtered)
			return -ENOMEM;
		r->nfiltered = 0;
		msc_jiter_init(&it, &f->val);
		while (r->nfiltered < n && msc_jiter_next(&it, &k, &c) > 0) {
			struct msc_filtered *fl = &r->filtered[r->nfiltered++];

			fl->type = msc_arena_strndup(&r->arena, k.key, k.key_len);
			msc_filtered_add(&c, fl);
		}
	}
	f = msc_rec_field(rec, "filters");
	if (f && f->val.kind == MSC_J_ARR && strings(r, &f->val, &r->filters, &r->nfilters))
		return -ENOMEM;
	return 0;
}

/*
 * The main process exec'ed: its next header starts a new image, which the
 * report describes.  What the old image's stream held goes (ms-record
 * aggregates image by image, its memory went with it); samples stay.
 */
static int new_image(struct msc_report *r)
{
	r->nsites = 0;
	r->nleaks = 0;
	heap_release(&r->heap);
	if (r->agg_ready) {
		msc_agg_release(&r->agg);
		r->agg_ready = false;
		if (msc_agg_init(&r->agg))
			return -ENOMEM;
		r->agg.no_errors = true;
		r->agg_ready = true;
	}
	r->complete = false;
	r->reason = NULL;
	r->has_status = false;
	r->nfiltered = 0;
	r->nfilters = 0;
	return 0;
}

/* The header's argv as one string (NULL without one), in the arena;
 * *program (if not NULL), its first element's last part. */
static const char *header_argv(struct msc_report *r, const struct msc_rec *rec, const char **program)
{
	const struct msc_field *argv = msc_rec_field(rec, "argv");
	struct msc_jiter it;
	struct msc_jval v;
	char buf[1024];
	size_t n = 0;

	if (!argv || argv->val.kind != MSC_J_ARR)
		return NULL;
	msc_jiter_init(&it, &argv->val);
	buf[0] = '\0';
	while (msc_jiter_next(&it, NULL, &v) > 0 && n < sizeof(buf) - 2) {
		const char *a = msc_jval_str(&v, &r->arena, NULL);

		if (!a)
			continue;
		if (program && !*program)
			*program = msc_base_name(a);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " " : "", a);
	}
	return msc_arena_strdup(&r->arena, buf);
}

/* A recording's header (not a --poll one's: no heap) starts an image. */
static int new_image_of(struct msc_report *r, const struct msc_rec *rec, int pid)
{
	const char *mode = msc_rec_str(rec, "mode", NULL);
	struct msc_rimage *im;
	int64_t ppid;

	if (!mode || (strcmp(mode, "launch") != 0 && strcmp(mode, "attach") != 0))
		return 0;
	if (MSC_GROW(r->images, r->nimages + 1, r->images_cap, 16))
		return -ENOMEM;
	im = &r->images[r->nimages++];
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	if (msc_rec_i64(rec, "ppid", &ppid) == 0)
		im->ppid = (int)ppid;
	im->argv = header_argv(r, rec, &im->program);
	im->start = str(r, rec, "start");
	return msc_u64map_put(&r->image_of, (uint64_t)pid + 1, r->nimages);
}

static int load_header(struct msc_report *r, const struct msc_rec *rec)
{
	const struct msc_field *opts;
	const char *argv;
	struct msc_jval ms;
	int64_t pid;
	int p = msc_rec_pid(rec, r->pid);

	if (!msc_u64map_get(&r->pids, (uint64_t)p)) {
		if (msc_u64map_put(&r->pids, (uint64_t)p, 1))
			return -ENOMEM;
		r->streams++;
	}
	if (new_image_of(r, rec, p))
		return -ENOMEM;
	if (r->tool) {
		/* The first stream names the report, unless its process
		 * exec'ed: then the program it became does. */
		if (p != r->pid || !r->complete || !r->reason || strcmp(r->reason, "exec") != 0)
			return 0;
		if (new_image(r))
			return -ENOMEM;
		r->start = str(r, rec, "start");
		goto argv;
	}
	r->tool = str(r, rec, "tool");
	r->mode = str(r, rec, "mode");
	r->before = str(r, rec, "before");
	r->after = str(r, rec, "after");
	opts = msc_rec_field(rec, "options");
	if (opts && opts->val.kind == MSC_J_OBJ && msc_jval_member(&opts->val, "metrics", &ms) > 0 &&
	    ms.kind == MSC_J_ARR && strings(r, &ms, &r->diff_metrics, &r->ndiff_metrics))
		return -ENOMEM;
	r->start = str(r, rec, "start");
	if (msc_rec_i64(rec, "pid", &pid) == 0)
		r->pid = (int)pid;
	/* ms-record --alloc-fn: wrappers to attribute past, with the user's */
	if (msc_header_alloc_fns(rec, &r->arena, &r->alloc_fns, &r->nalloc_fns))
		return -ENOMEM;
	if (opts && opts->val.kind == MSC_J_OBJ && msc_jval_member(&opts->val, "sample", &ms) > 0 &&
	    msc_jval_u64(&ms, &r->sample))
		r->sample = 0;
	if (opts && opts->val.kind == MSC_J_OBJ && msc_jval_member(&opts->val, "depth", &ms) > 0) {
		uint64_t d = 0;

		if (!msc_jval_u64(&ms, &d) && d <= UINT32_MAX)
			r->depth = (unsigned)d;
	}
	msc_rec_u64(rec, "start_epoch", &r->start_epoch);
argv:
	argv = header_argv(r, rec, NULL);
	if (argv)
		r->argv = argv;
	return 0;
}

static int load_sample(struct msc_report *r, const struct msc_rec *rec)
{
	struct msc_rsample *s;

	if (r->pid && msc_rec_pid(rec, r->pid) != r->pid)
		return 0;
	if (MSC_GROW(r->samples, r->nsamples + 1, r->samples_cap, 64))
		return -ENOMEM;
	s = &r->samples[r->nsamples++];
	memset(s, 0, sizeof(*s));	/* a --poll sample has no heap */
	s->pid = msc_rec_pid(rec, r->pid);
	s->ts = u64(rec, "ts");
	s->rss = u64(rec, "rss");
	s->has_heap = msc_rec_u64(rec, "heap", &s->heap) == 0;
	s->pss = u64(rec, "pss");
	s->swap = u64(rec, "swap");
	s->has_counts = msc_rec_u64(rec, "allocs", &s->allocs) == 0;
	s->bytes = u64(rec, "bytes");
	return 0;
}

static int load_delta(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rdelta *d;
	int64_t v;
	uint64_t stack = 0;

	if (MSC_GROW(r->deltas, r->ndeltas + 1, r->deltas_cap, 64))
		return -ENOMEM;
	d = &r->deltas[r->ndeltas];
	memset(d, 0, sizeof(*d));
	d->key = str(r, rec, "key");
	d->comm = str(r, rec, "comm");
	d->name = str(r, rec, "name");
	d->group = str(r, rec, "kind");
	d->metric = str(r, rec, "metric");
	d->status = str(r, rec, "status");
	d->pid = msc_rec_pid(rec, r->pid);
	if (msc_rec_i64(rec, "before", &d->before) || msc_rec_i64(rec, "after", &d->after) ||
	    msc_rec_i64(rec, "change", &v))
		return msc_rec_err(err, rec, -EINVAL, "delta needs integer before, after, change");
	d->change = v;
	msc_rec_u64(rec, "stack", &stack);
	if (check_stack(r, rec, stack, err))
		return -EINVAL;
	d->stack = (uint32_t)stack;
	d->size = u64(rec, "size");
	r->ndeltas++;
	return 0;
}

static int load_process(struct msc_report *r, const struct msc_rec *rec)
{
	struct msc_rproc *p;
	const struct msc_field *cmd = msc_rec_field(rec, "cmdline");

	if (MSC_GROW(r->procs, r->nprocs + 1, r->procs_cap, 64))
		return -ENOMEM;
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = msc_rec_pid(rec, r->pid);
	p->comm = str(r, rec, "comm");
	p->rss = u64(rec, "rss");
	p->has_pss = msc_rec_u64(rec, "pss", &p->pss) == 0;
	p->swap = u64(rec, "swap");
	p->private_bytes = u64(rec, "private_clean") + u64(rec, "private_dirty");
	if (cmd && cmd->val.kind == MSC_J_ARR) {
		struct msc_jiter it;
		struct msc_jval v;

		msc_jiter_init(&it, &cmd->val);
		if (msc_jiter_next(&it, NULL, &v) > 0)
			p->cmdline = msc_jval_str(&v, &r->arena, NULL);
	}
	return 0;
}

static int load_mapping(struct msc_report *r, const struct msc_rec *rec)
{
	struct msc_rmapping *m;

	if (MSC_GROW(r->maps, r->nmaps + 1, r->maps_cap, 64))
		return -ENOMEM;
	m = &r->maps[r->nmaps++];
	m->pid = msc_rec_pid(rec, r->pid);
	m->name = str(r, rec, "name");
	m->kind = str(r, rec, "kind");
	m->ts = u64(rec, "ts");
	m->size = u64(rec, "size");
	m->rss = u64(rec, "rss");
	m->pss = u64(rec, "pss");
	m->swap = u64(rec, "swap");
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
	for (k = 0; k < a->nsites; k++) {
		const struct msc_site *s = &a->sites[k];
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
	/* Leak kinds come from the leak records (a scan is not in events);
	 * without them, what is still live is unscanned. */
	if (have_leaks)
		return 0;
	nleaks = msc_agg_leaks(a, &leaks);
	if (nleaks < 0)
		return (int)nleaks;
	for (i = 0; i < nleaks; i++) {
		const struct msc_site *s = &a->sites[leaks[i].site];
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
	struct msc_rec rec;
	enum msc_rtype t;
	bool first = true;
	int ret;

	memset(r, 0, sizeof(*r));
	r->alloc_fns = alloc_fns;
	r->nalloc_fns = nalloc_fns;
	r->want_heap_series = want_heap_series;
	r->all_processes = all_processes;
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
			ret = load_header(r, &rec);
			break;
		case MSC_R_STACK:
			ret = load_stack(r, &rec, err);
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
			ret = load_error(r, &rec, err);
			break;
		case MSC_R_END:
			ret = load_end(r, &rec);
			break;
		case MSC_R_SAMPLE:
			ret = load_sample(r, &rec);
			break;
		case MSC_R_DELTA:
			ret = load_delta(r, &rec, err);
			break;
		case MSC_R_PROCESS:
			ret = load_process(r, &rec);
			break;
		case MSC_R_MAPPING:
			ret = load_mapping(r, &rec);
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
	/* What was read counts even after bad input: build what can be. */
	if (r->from_events && sites_from_events(r) && !ret)
		ret = msc_err_set(err, -ENOMEM, "%s: out of memory", rd->name);
	if (ret) {
		struct msc_err e2;

		resolve_stacks(r, &e2);
	} else {
		ret = resolve_stacks(r, err);
	}
	return ret;
}

void msc_report_release(struct msc_report *r)
{
	free(r->sites);
	free(r->leaks);
	free(r->errors);
	free(r->samples);
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
	msc_stackdefs_release(&r->defs);
	msc_arena_release(&r->arena);
}
