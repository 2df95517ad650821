/* SPDX-License-Identifier: MIT */
/*
 * Reports from memscope streams: the records that describe a process and
 * its run (header, end, error, sample, delta, process, mapping), read into
 * the report model, and the images (programs) they describe.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_format.h"
#include "msc_report.h"
#include "msc_stream.h"
#include "msc_util.h"
#include "report_internal.h"

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

int report_load_error(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
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
	if ((ret = report_check_stack(r, rec, stack, err)) ||
	    (ret = report_check_stack(r, rec, alloc_stack, err)) ||
	    (ret = report_check_stack(r, rec, free_stack, err)))
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
int report_load_end(struct msc_report *r, const struct msc_rec *rec)
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

int report_load_header(struct msc_report *r, const struct msc_rec *rec)
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
		if (report_new_image(r))
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

int report_load_sample(struct msc_report *r, const struct msc_rec *rec)
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
	s->mapped = u64(rec, "mapped");
	s->pss = u64(rec, "pss");
	s->swap = u64(rec, "swap");
	s->has_counts = msc_rec_u64(rec, "allocs", &s->allocs) == 0;
	s->bytes = u64(rec, "bytes");
	return 0;
}

int report_load_mark(struct msc_report *r, const struct msc_rec *rec)
{
	struct msc_rmark *m;

	if (r->pid && msc_rec_pid(rec, r->pid) != r->pid)
		return 0;
	if (MSC_GROW(r->marks, r->nmarks + 1, r->marks_cap, 16))
		return -ENOMEM;
	m = &r->marks[r->nmarks];
	m->pid = msc_rec_pid(rec, r->pid);
	m->ts = u64(rec, "ts");
	m->name = str(r, rec, "name");
	m->by = str(r, rec, "by");
	if (!m->name)
		return 0;
	r->nmarks++;
	/* The range's ends, as the events that follow need them. */
	msc_span_mark_of(&r->span, m->name, m->by, m->ts);
	return 0;
}

bool report_event_in_range(const struct msc_report *r, const struct msc_rec *rec, enum msc_rtype t, uint64_t ts)
{
	uint64_t at = ts;

	if (!r->since && !r->until)
		return true;
	/* A free goes with its block, a munmap with the mappings it ends. */
	if (t == MSC_R_FREE && msc_rec_u64(rec, "alloc_ts", &at))
		return true;
	if (t == MSC_R_MUNMAP || t == MSC_R_UNFREE || t == MSC_R_HIDDEN)
		return true;
	/* Events come in time order with the marks: before the since mark
	 * came, an event is before it. */
	if (r->span.since && (!r->span.since_known || at < r->span.since_ts))
		return false;
	return !r->span.until || !r->span.until_known || at < r->span.until_ts;
}

/*
 * The instant a range's end resolves to: a mark of the stream (the first
 * of that name), or, in a stream without marks (ms-snap --leaks), the
 * mark a leak names.  since: its start.  0, or -ESRCH with err set.
 */
static int resolve_mark(struct msc_report *r, const char *mark, bool since, uint64_t *ts, const char *name,
			struct msc_err *err)
{
	char list[256] = "";
	size_t i, n = 0;

	for (i = 0; i < r->nmarks; i++) {
		const struct msc_rmark *m = &r->marks[i];

		if (strcmp(m->name, mark)) {
			if (n < sizeof(list) - 48)
				n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", m->name);
			continue;
		}
		*ts = msc_mark_bound(m->name, m->by, m->ts, since);
		return 0;
	}
	for (i = 0; i < r->nleaks; i++)
		if (r->leaks[i].after && !strcmp(r->leaks[i].after, mark)) {
			*ts = r->leaks[i].after_ts;
			return 0;
		}
	return msc_err_set(err, -ESRCH, "%s: no mark named '%s'%s%s%s", name, mark,
			   n ? " (its marks: " : " (it has none)", list, n ? ")" : "");
}

/* --live-at: the timeline's point at the mark (ms-record takes one at
 * each of the first marks, and its last at the end). */
static int resolve_live_at(struct msc_report *r, const char *name, struct msc_err *err)
{
	const struct msc_rtimeline *t = &r->timeline;
	uint64_t ts = 0;
	size_t i;
	int ret;

	/* A time: the timeline's last point at or before it. */
	if (!msc_parse_time(r->live_at, &ts)) {
		r->live_at_time = true;
		for (i = t->npts; i-- > 0;)
			if (t->ts[i] <= ts) {
				r->live_at_point = i;
				return 0;
			}
		return msc_err_set(err, -ESRCH, "%s: no point of the timeline at or before %s", name, r->live_at);
	}
	if ((ret = resolve_mark(r, r->live_at, true, &ts, name, err)))
		return ret;
	for (i = 0; i < r->nmarks; i++)
		if (!strcmp(r->marks[i].name, r->live_at)) {
			ts = r->marks[i].ts;
			break;
		}
	for (i = 0; i < t->npts; i++)
		if (t->ts[i] == ts) {
			r->live_at_point = i;
			return 0;
		}
	return msc_err_set(err, -ESRCH, "%s: no point of the timeline at mark '%s' (ms-record takes one at each "
			   "of the first 32 marks, with -i above 0)", name, r->live_at);
}

int report_apply_range(struct msc_report *r, const char *name, struct msc_err *err)
{
	struct msc_span *sp = &r->span;
	size_t i, kept = 0;
	int ret;

	if (r->live_at && (ret = resolve_live_at(r, name, err)))
		return ret;
	/* A bound whose mark record did not come: one a leak names (an
	 * ms-snap --leaks of before), or none of the stream's. */
	if ((sp->since && !sp->since_known && (ret = resolve_mark(r, sp->since, true, &sp->since_ts, name, err))) ||
	    (sp->until && !sp->until_known && (ret = resolve_mark(r, sp->until, false, &sp->until_ts, name, err))))
		return ret;
	sp->since_known = sp->until_known = true;
	if (sp->since && sp->until && sp->since_ts > sp->until_ts)
		return msc_err_set(err, -ESRCH, "%s: '%s' comes after '%s'", name, r->since, r->until);
	if (!sp->since && !sp->until)
		return 0;
	for (i = 0; i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];
		int in = msc_span_leak(sp, l->after ? l->after_ts : 0, l->first_ts, l->last_ts);

		if (in < 0)
			return msc_err_set(err, -ESRCH, "%s: leaks of one site and kind were allocated both before and "
					   "after %s, which no mark splits: a time splits them only at a mark "
					   "(ms-record --mark-signal, ms-snap --mark)", name,
					   in == -1 ? r->since : r->until);
		if (in)
			r->leaks[kept++] = r->leaks[i];
	}
	r->nleaks = kept;
	return 0;
}

/* The non-negative integers of an array member (null: -1 when nulls), in
 * the arena: their count, or -ENOENT (absent), -EINVAL, -ENOMEM. */
static long u64s(struct msc_report *r, const struct msc_rec *rec, const char *key, bool nulls,
		 int64_t **out)
{
	const struct msc_field *f = msc_rec_field(rec, key);
	struct msc_jiter it;
	struct msc_jval x;
	size_t n = 0;

	if (!f)
		return -ENOENT;
	if (f->val.kind != MSC_J_ARR)
		return -EINVAL;
	*out = msc_arena_alloc(&r->arena, (members(&f->val) + 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	msc_jiter_init(&it, &f->val);
	while (msc_jiter_next(&it, NULL, &x) > 0) {
		if (x.kind == MSC_J_NULL && nulls)
			(*out)[n++] = -1;
		else if (x.kind == MSC_J_INT && !x.negative && x.u <= INT64_MAX)
			(*out)[n++] = (int64_t)x.u;
		else
			return -EINVAL;
	}
	return (long)n;
}

int report_load_timeline(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rtimeline *t = &r->timeline;
	int64_t *ts, *heap, *mapped, *floor = NULL;
	long n, nh, nm, nf;
	uint64_t top = 0;
	size_t i;

	if (r->pid && msc_rec_pid(rec, r->pid) != r->pid)
		return 0;
	n = u64s(r, rec, "ts", false, &ts);
	nh = u64s(r, rec, "heap", false, &heap);
	nm = u64s(r, rec, "mapped", false, &mapped);
	nf = u64s(r, rec, "floor", false, &floor);
	if (n == -ENOMEM || nh == -ENOMEM || nm == -ENOMEM || nf == -ENOMEM)
		return -ENOMEM;
	if (n < 0 || nh != n || nm != n || (nf != n && nf != -ENOENT) || msc_rec_u64(rec, "top", &top) ||
	    top > UINT32_MAX)
		return msc_rec_err(err, rec, -EINVAL, "timeline: \"ts\", \"heap\", \"mapped\" and "
				   "\"floor\" must be arrays of as many sizes, \"top\" a count");
	for (i = 1; i < (size_t)n; i++)
		if (ts[i] < ts[i - 1])
			return msc_rec_err(err, rec, -EINVAL, "timeline: \"ts\" goes back in time");
	/* A later image of the process (after an exec) replaces it. */
	t->pid = msc_rec_pid(rec, r->pid);
	t->npts = (size_t)n;
	t->top = (unsigned)top;
	t->ts = (uint64_t *)ts;
	t->heap = (uint64_t *)heap;
	t->mapped = (uint64_t *)mapped;
	t->floor = nf == n ? (uint64_t *)floor : NULL;
	t->nseries = 0;
	return 0;
}

int report_load_series(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rtimeline *t = &r->timeline;
	struct msc_rseries *s;
	int64_t *at, *live, v = -1;
	uint64_t stack;
	long n, nl, k;
	size_t i;

	if (r->pid && msc_rec_pid(rec, r->pid) != r->pid)
		return 0;
	if (!t->ts || t->pid != msc_rec_pid(rec, r->pid))
		return msc_rec_err(err, rec, -EINVAL, "series: no timeline record of its process before it");
	n = u64s(r, rec, "at", false, &at);
	nl = u64s(r, rec, "live", true, &live);
	if (n == -ENOMEM || nl == -ENOMEM)
		return -ENOMEM;
	if (n < 0 || nl != n || msc_rec_u64(rec, "stack", &stack) || stack > UINT32_MAX)
		return msc_rec_err(err, rec, -EINVAL, "series: \"stack\" must be an id, \"at\" and "
				   "\"live\" arrays of as many elements");
	if ((k = report_check_stack(r, rec, stack, err)))
		return (int)k;
	for (k = 0; k < n; k++)
		if ((uint64_t)at[k] >= t->npts || (k && at[k] <= at[k - 1]))
			return msc_rec_err(err, rec, -EINVAL, "series: \"at\" must name the timeline's "
					   "points (0 to %zu) in order", t->npts ? t->npts - 1 : 0);
	if (MSC_GROW(t->series, t->nseries + 1, t->series_cap, 16))
		return -ENOMEM;
	s = &t->series[t->nseries];
	s->stack = (uint32_t)stack;
	s->max = 0;
	msc_rec_u64(rec, "max", &s->max);
	s->live = msc_arena_alloc(&r->arena, (t->npts + 1) * sizeof(*s->live));
	if (!s->live)
		return -ENOMEM;
	for (i = 0, k = 0; i < t->npts; i++) {
		if (k < n && (size_t)at[k] == i)
			v = live[k++];
		s->live[i] = v;
	}
	t->nseries++;
	return 0;
}

int report_load_delta(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
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
	if (report_check_stack(r, rec, stack, err))
		return -EINVAL;
	d->stack = (uint32_t)stack;
	d->size = u64(rec, "size");
	r->ndeltas++;
	return 0;
}

int report_load_process(struct msc_report *r, const struct msc_rec *rec)
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

int report_load_mapping(struct msc_report *r, const struct msc_rec *rec)
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

const char *msc_report_program(const struct msc_report *r, int image)
{
	return image >= 0 && (size_t)image < r->nimages ? r->images[image].program : NULL;
}
