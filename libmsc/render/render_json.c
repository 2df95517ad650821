/* SPDX-License-Identifier: MIT */
/* Reports as one JSON document (jansson).  See msc_render.h. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"

/* ---------------------------------------------------------------- json */

/*
 * A JSON string for s.  jansson takes UTF-8 only (jstring() of anything
 * else is NULL, and the member silently goes): names and paths with other
 * bytes (memscope-format(5) carries them escaped) get U+FFFD for each.
 */
/* A count or size: JSON integers are signed 64-bit here (jansson), so
 * one above that is held at INT64_MAX, not written negative. */
static json_t *ju64(uint64_t v)
{
	return json_integer(msc_clamp_i64(v));
}

static json_t *jstring(const char *s)
{
	json_t *j = json_string(s);
	const unsigned char *p;
	char *copy, *q;

	if (j || !s)
		return j;
	copy = malloc(strlen(s) * 3 + 1);
	if (!copy)
		return NULL;
	for (p = (const unsigned char *)s, q = copy; *p;) {
		size_t n = render_utf8_len(p);

		if (n) {
			memcpy(q, p, n);
			q += n;
			p += n;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			p++;
		}
	}
	*q = '\0';
	j = json_string(copy);
	free(copy);
	return j;
}

/*
 * The document being built.  A frame's object is made once and shared by
 * every stack that lists it (frames is keyed by its msc_rframe's address:
 * the stacks of a parent chain share their frames), so a document of many
 * deep stacks holds each frame once.
 */
struct jdoc {
	const struct msc_report *r;
	struct msc_u64map frames;
};

/*
 * jansson's allocations, counted when they fail: a document built with
 * one missing (json_object_set_new() of NULL drops the member) would be
 * written short and look whole.
 */
static unsigned long jalloc_failures;

static void *jmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		__atomic_add_fetch(&jalloc_failures, 1, __ATOMIC_RELAXED);
	return p;
}

static json_t *jframe(struct jdoc *d, const struct msc_rframe *f)
{
	uint64_t *at = msc_u64map_get(&d->frames, (uint64_t)(uintptr_t)f);
	json_t *o;

	if (at)
		return json_incref((json_t *)(uintptr_t)*at);
	o = json_object();
	if (!o)
		return NULL;
	if (f->fn)
		json_object_set_new(o, "fn", jstring(f->fn));
	if (f->file)
		json_object_set_new(o, "file", jstring(f->file));
	if (f->line)
		json_object_set_new(o, "line", json_integer(f->line));
	if (f->obj)
		json_object_set_new(o, "obj", jstring(f->obj));
	if (f->offset)
		json_object_set_new(o, "offset", jstring(f->offset));
	if (f->fn_offset)
		json_object_set_new(o, "fn_offset", jstring(f->fn_offset));
	if (f->inlined)
		json_object_set_new(o, "inline", json_true());
	if (msc_u64map_put(&d->frames, (uint64_t)(uintptr_t)f, (uint64_t)(uintptr_t)o))
		__atomic_add_fetch(&jalloc_failures, 1, __ATOMIC_RELAXED);
	else
		json_incref(o);		/* the memo's */
	return o;
}

/* into's key: the stack's frames listed, innermost first; key_omitted: how
 * many more there are, when a stack is too deep to list whole. */
static void jstack(json_t *into, const char *key, struct jdoc *d, uint32_t id)
{
	const struct msc_rstack *s = msc_report_stack(d->r, id);
	json_t *a = json_array();
	unsigned i, shown = msc_report_stack_shown(s);
	char omitted[64];

	for (i = 0; i < shown; i++)
		json_array_append_new(a, jframe(d, &s->frames[i]));
	json_object_set_new(into, key, a);
	if (s && shown < s->n) {
		snprintf(omitted, sizeof(omitted), "%s_omitted", key);
		json_object_set_new(into, omitted, json_integer(s->n - shown));
	}
}

static json_t *jgroups(struct jdoc *d, struct render_group *g, size_t n, unsigned top, bool leak)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n && i < top; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "bytes", ju64(g[i].bytes));
		if (leak) {
			json_object_set_new(o, "kind", jstring(g[i].kind));
			json_object_set_new(o, "count", ju64(g[i].count));
		} else {
			json_object_set_new(o, "allocs", ju64(g[i].allocs));
			json_object_set_new(o, "frees", ju64(g[i].frees));
			json_object_set_new(o, "live_bytes", ju64(g[i].live_bytes));
			json_object_set_new(o, "at_peak", ju64(g[i].at_peak));
			if (d->r->live_at)
				json_object_set_new(o, "live_at", ju64(g[i].live_at));
			json_object_set_new(o, "temporary", ju64(g[i].temporary));
			json_object_set_new(o, "short_lived", ju64(g[i].short_lived));
		}
		json_object_set_new(o, "size_min", ju64(g[i].size_lo));
		json_object_set_new(o, "size_max", ju64(g[i].size_hi));
		if (g[i].fn)
			json_object_set_new(o, "fn", jstring(g[i].fn));
		if (g[i].pool)
			json_object_set_new(o, "pool", jstring(g[i].pool));
		jstack(o, "stack", d, g[i].stack);
		json_array_append_new(a, o);
	}
	return a;
}

/* How a process (image) ended, as its end record says. */
struct ending {
	bool complete, has_status;
	const char *reason;
	int status, signal;
	uint64_t duration, peak, peak_ts, lost;
	const struct msc_rpages *pages;
};

/* The members of a summary, into the object sum. */
static void jsummary(json_t *sum, const struct render_totals *tt, const struct ending *e)
{
	json_object_set_new(sum, "allocs", ju64(tt->allocs));
	json_object_set_new(sum, "frees", ju64(tt->frees));
	json_object_set_new(sum, "bytes", ju64(tt->bytes));
	json_object_set_new(sum, "mmaps", ju64(tt->mmaps));
	json_object_set_new(sum, "mmap_bytes", ju64(tt->mmap_bytes));
	json_object_set_new(sum, "brks", ju64(tt->brks));
	json_object_set_new(sum, "brk_bytes", ju64(tt->brk_bytes));
	json_object_set_new(sum, "leaked_bytes", ju64(tt->leaked));
	json_object_set_new(sum, "leaked_blocks", ju64(tt->leaked_blocks));
	json_object_set_new(sum, "definitely_bytes", ju64(tt->definitely));
	json_object_set_new(sum, "indirectly_bytes", ju64(tt->indirectly));
	json_object_set_new(sum, "possibly_bytes", ju64(tt->possibly));
	json_object_set_new(sum, "reachable_bytes", ju64(tt->reachable));
	json_object_set_new(sum, "unscanned_bytes", ju64(tt->unscanned));
	json_object_set_new(sum, "unknown_bytes", ju64(tt->unknown));
	json_object_set_new(sum, "unknown_blocks", ju64(tt->unknown_blocks));
	json_object_set_new(sum, "temporary", ju64(tt->temporary));
	if (e->complete) {
		json_object_set_new(sum, "duration", ju64(e->duration));
		json_object_set_new(sum, "peak", ju64(e->peak));
		json_object_set_new(sum, "peak_ts", ju64(e->peak_ts));
		if (e->pages && e->pages->have) {
			const struct msc_rpages *pg = e->pages;

			json_object_set_new(sum, "heap_peak", ju64(pg->heap_peak));
			json_object_set_new(sum, "heap_peak_ts", ju64(pg->heap_peak_ts));
			json_object_set_new(sum, "mapped_peak", ju64(pg->mapped_peak));
			json_object_set_new(sum, "mapped_peak_ts",
					    ju64(pg->mapped_peak_ts));
			json_object_set_new(sum, "mapped", ju64(pg->mapped));
			if (pg->rss_peak)
				json_object_set_new(sum, "rss_peak", ju64(pg->rss_peak));
		}
		json_object_set_new(sum, "lost", ju64(e->lost));
		if (e->reason)
			json_object_set_new(sum, "reason", jstring(e->reason));
		if (e->has_status)
			json_object_set_new(sum, "status", json_integer(e->status));
		if (e->signal)
			json_object_set_new(sum, "signal", json_integer(e->signal));
	}
}

/*
 * One summary per process image of a recording (ms-record --follow: every
 * process, and each image of a process that exec'ed).  The image the report
 * is about has the figures of "summary"; the others', what their site and
 * leak records add up to (what a filter dropped is not in them either).
 */
static json_t *jimages(const struct msc_report *r, const struct render_totals *main_tt,
		       const struct ending *main_end)
{
	json_t *a = json_array();
	size_t i, main_image = r->nimages;

	for (i = 0; i < r->nimages; i++)
		if (r->images[i].pid == r->pid)
			main_image = i;
	for (i = 0; i < r->nimages; i++) {
		const struct msc_rimage *im = &r->images[i];
		json_t *o = json_object();
		struct render_totals tt = { 0 };
		struct ending e = { im->complete, im->has_status, im->reason, im->status, im->signal,
				    im->duration, im->peak, im->peak_ts, im->lost, &im->pages };
		unsigned k;

		json_object_set_new(o, "pid", json_integer(im->pid));
		if (im->ppid)
			json_object_set_new(o, "ppid", json_integer(im->ppid));
		if (im->argv)
			json_object_set_new(o, "program", jstring(im->argv));
		if (im->start)
			json_object_set_new(o, "start", jstring(im->start));
		if (i == main_image) {
			jsummary(o, main_tt, main_end);
		} else {
			tt.allocs = im->allocs;
			tt.frees = im->frees;
			tt.bytes = im->bytes;
			tt.mmaps = im->mmaps;
			tt.mmap_bytes = im->mmap_bytes;
			tt.brks = im->brks;
			tt.brk_bytes = im->brk_bytes;
			tt.temporary = im->temporary;
			for (k = 0; k < MSC_LEAK_KINDS; k++) {
				if (msc_leak_kind_leaked(k)) {
					msc_sat_add(&tt.leaked, im->kind_bytes[k]);
					msc_sat_add(&tt.leaked_blocks, im->kind_blocks[k]);
				}
			}
			tt.definitely = im->kind_bytes[MSC_LEAK_DEFINITELY];
			tt.indirectly = im->kind_bytes[MSC_LEAK_INDIRECTLY];
			tt.possibly = im->kind_bytes[MSC_LEAK_POSSIBLY];
			tt.reachable = im->kind_bytes[MSC_LEAK_REACHABLE];
			tt.unscanned = im->kind_bytes[MSC_LEAK_UNSCANNED];
			tt.unknown = im->kind_bytes[MSC_LEAK_UNKNOWN];
			tt.unknown_blocks = im->kind_blocks[MSC_LEAK_UNKNOWN];
			jsummary(o, &tt, &e);
		}
		json_array_append_new(a, o);
	}
	return a;
}

/* Memory errors, in the order they happened, each with its stacks. */
static json_t *jerrors(struct jdoc *d)
{
	const struct msc_report *r = d->r;
	json_t *a = json_array();
	char ptr[32];
	size_t i;

	for (i = 0; i < r->nerrors; i++) {
		const struct msc_rerror *e = &r->errors[i];
		json_t *o = json_object();

		json_object_set_new(o, "kind", jstring(e->kind));
		snprintf(ptr, sizeof(ptr), "0x%" PRIx64, e->ptr);
		json_object_set_new(o, "ptr", json_string(ptr));
		if (e->fn)
			json_object_set_new(o, "fn", jstring(e->fn));
		jstack(o, "stack", d, e->stack);
		if (e->has_block) {
			json_object_set_new(o, "size", ju64(e->size));
			if (e->offset)
				json_object_set_new(o, "offset", ju64(e->offset));
		}
		if (e->alloc_fn)
			json_object_set_new(o, "alloc_fn", jstring(e->alloc_fn));
		if (e->alloc_stack)
			jstack(o, "alloc_stack", d, e->alloc_stack);
		if (e->free_fn)
			json_object_set_new(o, "free_fn", jstring(e->free_fn));
		if (e->free_stack)
			jstack(o, "free_stack", d, e->free_stack);
		json_array_append_new(a, o);
	}
	return a;
}

/* The heap over time by site (the recording's timeline): its points, and
 * each series of a site the report has, its bytes per point (null: not
 * among the timeline's top stacks then). */
static json_t *jheap_by_site(struct jdoc *d)
{
	const struct msc_rtimeline *t = &d->r->timeline;
	json_t *o = json_object(), *a, *ts = json_array(), *heap = json_array(), *mapped = json_array();
	struct render_group *g;
	size_t ng = 0, i, k, j;

	for (i = 0; i < t->npts; i++) {
		json_array_append_new(ts, ju64(t->ts[i]));
		json_array_append_new(heap, ju64(t->heap[i]));
		json_array_append_new(mapped, ju64(t->mapped[i]));
	}
	json_object_set_new(o, "ts", ts);
	json_object_set_new(o, "heap", heap);
	json_object_set_new(o, "mapped", mapped);
	json_object_set_new(o, "top", json_integer(t->top));
	a = json_array();
	g = render_site_groups(d->r, &ng);
	for (k = 0; g && k < t->nseries; k++) {
		json_t *s, *live;
		char *name;

		for (j = 0; j < ng && g[j].stack != t->series[k].stack; j++)
			;
		if (j == ng)
			continue;	/* filtered out */
		s = json_object();
		name = render_site_label(d->r, t->series[k].stack, NULL);
		json_object_set_new(s, "site", jstring(name));
		free(name);
		json_object_set_new(s, "max", ju64(t->series[k].max));
		live = json_array();
		for (i = 0; i < t->npts; i++)
			json_array_append_new(live, t->series[k].live[i] < 0 ? json_null() :
							ju64((uint64_t)t->series[k].live[i]));
		json_object_set_new(s, "live", live);
		jstack(s, "stack", d, t->series[k].stack);
		json_array_append_new(a, s);
	}
	free(g);
	json_object_set_new(o, "sites", a);
	return o;
}

int render_json(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	json_t *root = json_object(), *sum = json_object(), *t;
	struct ending main_end = { r->complete, r->has_status, r->reason, r->status, r->signal,
				   r->duration, r->peak, r->peak_ts, r->lost, &r->pages };
	struct render_totals tt;
	struct render_group *g;
	struct jdoc doc = { .r = r };
	unsigned long failures;
	size_t n, i;
	int ret;

	json_set_alloc_funcs(jmalloc, free);
	failures = __atomic_load_n(&jalloc_failures, __ATOMIC_RELAXED);
	if (msc_u64map_init(&doc.frames, 256))
		return -ENOMEM;
	render_totals_of(r, &tt);
	json_object_set_new(root, "format", json_string("memscope-report"));
	json_object_set_new(root, "version", json_integer(1));
	if (r->argv)
		json_object_set_new(root, "program", jstring(r->argv));
	if (r->pid)
		json_object_set_new(root, "pid", json_integer(r->pid));
	json_object_set_new(root, "complete", json_boolean(r->complete));
	jsummary(sum, &tt, &main_end);
	if (r->sample) {
		/* ms-record --sample: the site and leak figures are estimates */
		json_object_set_new(sum, "sample", ju64(r->sample));
		json_object_set_new(sum, "estimated", json_true());
	}
	if (tt.from_sample) {
		/* Cut before its sites: allocs and bytes are the last
		 * sample's; frees and what leaked are not known. */
		json_object_set_new(sum, "from_sample_ts", ju64(tt.sample_ts));
		json_object_del(sum, "frees");
		json_object_del(sum, "leaked_bytes");
		json_object_del(sum, "leaked_blocks");
	}
	json_object_set_new(root, "summary", sum);
	if (r->nimages)
		json_object_set_new(root, "summaries", jimages(r, &tt, &main_end));
	if (render_filtered_count(r)) {
		t = json_object();
		for (i = 0; i < r->nfiltered; i++) {
			json_t *f;

			if (!render_filtered_relevant(r, &r->filtered[i]))
				continue;
			f = json_object();
			json_object_set_new(f, "records", ju64(r->filtered[i].records));
			if (r->filtered[i].blocks)
				json_object_set_new(f, "blocks", ju64(r->filtered[i].blocks));
			json_object_set_new(f, "bytes", ju64(r->filtered[i].bytes));
			if (r->filtered[i].trimmed_allocs) {
				json_object_set_new(f, "trimmed_allocs",
						    ju64(r->filtered[i].trimmed_allocs));
				json_object_set_new(f, "trimmed_bytes",
						    ju64(r->filtered[i].trimmed_bytes));
			}
			json_object_set_new(t, r->filtered[i].type, f);
		}
		json_object_set_new(root, "filtered", t);
		t = json_array();
		for (i = 0; i < r->nfilters; i++)
			json_array_append_new(t, jstring(r->filters[i]));
		json_object_set_new(root, "filters", t);
	}
	if (r->nwrappers) {
		/* The program's own allocation wrappers found: their callers
		 * are the sites. */
		t = json_array();
		for (i = 0; i < r->nwrappers; i++)
			json_array_append_new(t, jstring(r->wrappers[i]));
		json_object_set_new(root, "wrappers", t);
	}
	if (r->nerrors || r->end_errors)
		json_object_set_new(root, "errors", jerrors(&doc));
	g = render_leak_groups(r, &n);
	if (g) {
		qsort(g, n, sizeof(*g), render_by_leak);
		json_object_set_new(root, "leaks", jgroups(&doc, g, n, o->top, true));
		free(g);
	}
	g = render_site_groups(r, &n);
	if (g) {
		t = json_object();
		qsort(g, n, sizeof(*g), render_by_bytes);
		json_object_set_new(t, "bytes", jgroups(&doc, g, n, o->top, false));
		qsort(g, n, sizeof(*g), render_by_allocs);
		json_object_set_new(t, "allocs", jgroups(&doc, g, n, o->top, false));
		qsort(g, n, sizeof(*g), render_by_peak);
		json_object_set_new(t, "at_peak", jgroups(&doc, g, n, o->top, false));
		if (r->live_at) {
			size_t m = 0;

			/* the sites the timeline gives at the mark, most first */
			qsort(g, n, sizeof(*g), render_by_live_at);
			while (m < n && g[m].live_at)
				m++;
			json_object_set_new(t, "live_at", jgroups(&doc, g, m, o->top, false));
		}
		json_object_set_new(root, "top", t);
		free(g);
	}
	t = json_array();
	for (i = 0; i < r->nsamples; i++) {
		json_t *s;

		s = json_object();
		json_object_set_new(s, "ts", ju64(r->samples[i].ts));
		json_object_set_new(s, "rss", ju64(r->samples[i].rss));
		json_object_set_new(s, "heap", ju64(r->samples[i].heap));
		json_array_append_new(t, s);
	}
	json_object_set_new(root, "timeline", t);
	if (r->timeline.npts)
		json_object_set_new(root, "heap_by_site", jheap_by_site(&doc));
	t = json_array();
	for (i = 0; i < r->nmarks; i++)
		json_array_append_new(t, json_pack("{s:s,s:o,s:s}", "name", r->marks[i].name, "ts",
						   ju64(r->marks[i].ts), "by", r->marks[i].by ? r->marks[i].by : "?"));
	json_object_set_new(root, "marks", t);
	{
		struct render_mark_sum ms[64];
		size_t nm = render_leaks_by_mark(r, ms, 64);

		if (nm) {
			t = json_array();
			for (i = 0; i < nm; i++)
				json_array_append_new(t, json_pack("{s:o,s:o,s:o}", "after",
								   ms[i].name ? jstring(ms[i].name) : json_null(),
								   "leaked_bytes", ju64(ms[i].bytes), "leaked_blocks",
								   ju64(ms[i].blocks)));
			json_object_set_new(root, "leaked_by_mark", t);
		}
	}
	if (r->live_at) {
		size_t p = r->live_at_point;

		json_object_set_new(root, "live_at", json_pack("{s:s,s:o,s:o,s:o}", r->live_at_time ? "time" : "mark",
							       r->live_at, "ts",
							       ju64(r->timeline.ts[p]), "heap", ju64(r->timeline.heap[p]),
							       "mapped", ju64(r->timeline.mapped[p])));
	}
	if (r->since || r->until) {
		t = json_object();
		if (r->since)
			json_object_set_new(t, "since", jstring(r->since));
		if (r->until)
			json_object_set_new(t, "until", jstring(r->until));
		json_object_set_new(root, "range", t);
	}
	if (r->mode && !strcmp(r->mode, "diff") && r->complete && r->diff_metric) {
		/* The totals of the first metric, as ms-diff's end record has them. */
		t = json_object();
		if (r->before && r->after)
			json_object_set_new(t, "inputs", json_pack("[o,o]", jstring(r->before),
								   jstring(r->after)));
		json_object_set_new(t, "metric", jstring(r->diff_metric));
		json_object_set_new(t, "before", json_integer(r->diff_before));
		json_object_set_new(t, "after", json_integer(r->diff_after));
		json_object_set_new(t, "growth", json_integer(r->diff_after - r->diff_before));
		if (r->diff_has_elapsed)
			json_object_set_new(t, "elapsed", json_integer(r->diff_elapsed));
		json_object_set_new(t, "processes_new", ju64(r->diff_new));
		json_object_set_new(t, "processes_gone", ju64(r->diff_gone));
		json_object_set_new(root, "diff", t);
	}
	if (r->ndeltas) {
		t = json_array();
		qsort(r->deltas, r->ndeltas, sizeof(*r->deltas), render_cmp_delta);
		for (i = 0; i < r->ndeltas; i++) {
			json_t *d = json_object();
			const struct msc_rdelta *x = &r->deltas[i];

			if (x->key)
				json_object_set_new(d, "key", jstring(x->key));
			if (x->metric)
				json_object_set_new(d, "metric", jstring(x->metric));
			json_object_set_new(d, "pid", json_integer(x->pid));
			if (x->name)
				json_object_set_new(d, "name", jstring(x->name));
			json_object_set_new(d, "before", json_integer(x->before));
			json_object_set_new(d, "after", json_integer(x->after));
			json_object_set_new(d, "change", json_integer(x->change));
			if (x->stack)
				jstack(d, "stack", &doc, x->stack);
			json_array_append_new(t, d);
		}
		json_object_set_new(root, "deltas", t);
	}
	if (r->nprocs) {
		t = json_array();
		for (i = 0; i < r->nprocs; i++) {
			const struct msc_rproc *p = &r->procs[i];
			json_t *o2 = json_object();

			json_object_set_new(o2, "pid", json_integer(p->pid));
			if (p->comm)
				json_object_set_new(o2, "comm", jstring(p->comm));
			if (p->cmdline)
				json_object_set_new(o2, "cmdline", jstring(p->cmdline));
			json_object_set_new(o2, "rss", ju64(p->rss));
			if (p->has_pss)
				json_object_set_new(o2, "pss", ju64(p->pss));
			json_object_set_new(o2, "swap", ju64(p->swap));
			json_array_append_new(t, o2);
		}
		json_object_set_new(root, "processes", t);
	}
	if (r->nmaps) {
		t = json_array();
		for (i = 0; i < r->nmaps; i++) {
			const struct msc_rmapping *m = &r->maps[i];
			json_t *o2 = json_object();

			json_object_set_new(o2, "pid", json_integer(m->pid));
			if (m->name)
				json_object_set_new(o2, "name", jstring(m->name));
			if (m->kind)
				json_object_set_new(o2, "kind", jstring(m->kind));
			json_object_set_new(o2, "size", ju64(m->size));
			json_object_set_new(o2, "rss", ju64(m->rss));
			json_object_set_new(o2, "pss", ju64(m->pss));
			json_object_set_new(o2, "swap", ju64(m->swap));
			json_array_append_new(t, o2);
		}
		json_object_set_new(root, "mappings", t);
	}
	for (i = 0; i <= doc.frames.mask; i++)
		if (doc.frames.slots[i].key)
			json_decref((json_t *)(uintptr_t)doc.frames.slots[i].val);
	msc_u64map_release(&doc.frames);
	if (__atomic_load_n(&jalloc_failures, __ATOMIC_RELAXED) != failures) {
		json_decref(root);
		return -ENOMEM;		/* before a byte of a document short of some */
	}
	errno = 0;
	ret = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	/* jansson says only -1: the write's own error (EPIPE: a reader that
	 * had enough, as for the other formats) is in errno. */
	ret = ret ? (errno ? -errno : -EIO) : 0;
	fputc('\n', out);
	json_decref(root);
	return ret;
}

