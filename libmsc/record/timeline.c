/* SPDX-License-Identifier: MIT */
/* The heap over time by stack: see msc_timeline.h. */
#include <stdlib.h>
#include <string.h>

#include "msc_format.h"
#include "msc_hash.h"
#include "msc_timeline.h"
#include "msc_util.h"

#define FIRST_STEP_NS 1000000ull
#define CALM_FACTOR 100
/* A walk this cheap is bounded by wall time only. */
#define CHEAP_WALK_NS 20000ull
/* ... and any is, when its cost is this small a part of the time since
 * the last (a collector with little to do). */
#define IDLE_FACTOR 1000

void msc_timeline_init(struct msc_timeline *t)
{
	memset(t, 0, sizeof(*t));
	t->step = FIRST_STEP_NS;
}

void msc_timeline_release(struct msc_timeline *t)
{
	free(t->pts);
	free(t->sums);
	memset(t, 0, sizeof(*t));
}

/* Every other point goes (the later of each pair of unpinned ones stays;
 * pinned ones all stay), the step doubles. */
static void coarser(struct msc_timeline *t)
{
	size_t i, n = 0;
	bool odd = false;

	for (i = 0; i < t->npts; i++) {
		if (!t->pts[i].pinned && (odd = !odd))
			continue;
		t->pts[n++] = t->pts[i];
	}
	t->npts = n;
	t->step *= 2;
}

static bool same(const struct msc_tpoint *x, const struct msc_tpoint *y)
{
	unsigned j;

	if (x->heap != y->heap || x->mapped != y->mapped || x->ntop != y->ntop)
		return false;
	for (j = 0; j < x->ntop; j++)
		if (x->top[j].stack != y->top[j].stack || x->top[j].bytes != y->top[j].bytes)
			return false;
	return true;
}

static void take(struct msc_timeline *t, const struct msc_agg *a, uint64_t ts, bool force, bool pinned);

void msc_timeline_take(struct msc_timeline *t, const struct msc_agg *a, uint64_t ts, bool force)
{
	take(t, a, ts, force, false);
}

void msc_timeline_pin(struct msc_timeline *t, const struct msc_agg *a, uint64_t ts)
{
	if (t->npins >= MSC_TIMELINE_PINS)
		return;
	t->npins++;
	take(t, a, ts, true, true);
}

static void take(struct msc_timeline *t, const struct msc_agg *a, uint64_t ts, bool force, bool pinned)
{
	struct msc_agg_figures f;
	struct msc_tpoint *p;
	uint64_t now = 0, cpu = 0;
	long n;

	if (t->off)
		return;
	if (!t->pts && !(t->pts = malloc(MSC_TIMELINE_POINTS * sizeof(*t->pts)))) {
		t->off = true;
		return;
	}
	if (!force) {
		now = msc_now_monotonic();
		if (now < t->calm_until)
			return;
		cpu = msc_now_thread_cpu();
		if (t->last_cost > CHEAP_WALK_NS && cpu < t->cpu_next && now < t->idle_until)
			return;
	}
	/* A point at the same time as the last replaces it (a mark's stays
	 * one). */
	if (t->npts && t->pts[t->npts - 1].ts >= ts) {
		ts = t->pts[--t->npts].ts;
		pinned |= t->pts[t->npts].pinned;
	}
	if (t->npts == MSC_TIMELINE_POINTS)
		coarser(t);
	p = &t->pts[t->npts];
	p->pinned = pinned;
	n = msc_agg_top_stacks(a, p->top, MSC_TIMELINE_TOP, &t->sums, &t->sums_cap);
	if (n < 0) {
		t->off = true;
		return;
	}
	p->ntop = (unsigned)n;
	p->ts = ts;
	msc_agg_figures(a, &f);
	p->mapped = f.mapped;
	p->heap = f.heap;
	/* Of three equal points in a row the middle one says nothing: the
	 * line between the others is the same. */
	if (t->npts >= 2 && !p[-1].pinned && same(p, p - 1) && same(p - 1, p - 2))
		p[-1] = *p;
	else
		t->npts++;
	t->due = (ts / t->step + 1) * t->step;
	/* What the walk cost in CPU: a collector that was preempted waits no
	 * longer for it. */
	if (!force) {
		uint64_t after = msc_now_thread_cpu();

		t->last_cost = after - cpu;
		t->calm_until = now + CALM_FACTOR * t->last_cost;
		t->cpu_next = after + CALM_FACTOR * t->last_cost;
		t->idle_until = now + IDLE_FACTOR * t->last_cost;
	}
}

/* A stack's bytes at point p: 0 when p lists fewer than the top (every
 * stack that held anything is there), -1 when not among a full list. */
static int64_t value_at(const struct msc_tpoint *p, uint32_t stack)
{
	unsigned j;

	for (j = 0; j < p->ntop; j++)
		if (p->top[j].stack == stack)
			return (int64_t)p->top[j].bytes;
	return p->ntop < MSC_TIMELINE_TOP ? 0 : -1;
}

static int by_bytes_desc(const void *x, const void *y)
{
	const struct msc_stack_bytes *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* The stacks of the series: the most any point gave each, largest first. */
static size_t series_stacks(const struct msc_timeline *t, struct msc_stack_bytes **out)
{
	struct msc_stack_bytes *s = NULL;
	struct msc_u64map idx;
	size_t n = 0, cap = 0, i;
	unsigned j;

	*out = NULL;
	if (msc_u64map_init(&idx, 64))
		return 0;
	for (i = 0; i < t->npts; i++)
		for (j = 0; j < t->pts[i].ntop; j++) {
			const struct msc_stack_bytes *e = &t->pts[i].top[j];
			uint64_t *k = msc_u64map_get(&idx, (uint64_t)e->stack + 1);

			if (k) {
				if (e->bytes > s[*k].bytes)
					s[*k].bytes = e->bytes;
				continue;
			}
			if (n == cap) {
				struct msc_stack_bytes *g = realloc(s, (cap ? 2 * cap : 64) * sizeof(*g));

				if (!g)
					goto out;
				s = g;
				cap = cap ? 2 * cap : 64;
			}
			if (msc_u64map_put(&idx, (uint64_t)e->stack + 1, n))
				goto out;
			s[n++] = *e;
		}
out:
	msc_u64map_release(&idx);
	if (s)
		qsort(s, n, sizeof(*s), by_bytes_desc);
	*out = s;
	return n < MSC_TIMELINE_SERIES ? n : MSC_TIMELINE_SERIES;
}

void msc_timeline_write(const struct msc_timeline *t, struct msc_writer *w, struct msc_stacks *st,
			int pid)
{
	/* a series' changes: at which point, to what (points <= POINTS) */
	uint32_t at[MSC_TIMELINE_POINTS];
	int64_t val[MSC_TIMELINE_POINTS];
	struct msc_stack_bytes *s;
	size_t n, i, k, nch;

	if (!t->npts)
		return;
	msc_w_record(w, MSC_R_TIMELINE);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "top", MSC_TIMELINE_TOP);
	msc_w_arr(w, "ts");
	for (i = 0; i < t->npts; i++)
		msc_w_u64(w, NULL, t->pts[i].ts);
	msc_w_arr_end(w);
	msc_w_arr(w, "heap");
	for (i = 0; i < t->npts; i++)
		msc_w_u64(w, NULL, t->pts[i].heap);
	msc_w_arr_end(w);
	msc_w_arr(w, "mapped");
	for (i = 0; i < t->npts; i++)
		msc_w_u64(w, NULL, t->pts[i].mapped);
	msc_w_arr_end(w);
	/* The most a stack not listed at a point can hold: the least listed
	 * (0 when fewer than the top are: then none holds anything). */
	msc_w_arr(w, "floor");
	for (i = 0; i < t->npts; i++)
		msc_w_u64(w, NULL, t->pts[i].ntop < MSC_TIMELINE_TOP ? 0 : t->pts[i].top[MSC_TIMELINE_TOP - 1].bytes);
	msc_w_arr_end(w);
	msc_w_end(w);
	n = series_stacks(t, &s);
	for (k = 0; k < n; k++) {
		int64_t last = -1;

		msc_stacks_write(st, w, s[k].stack);
		msc_w_record(w, MSC_R_SERIES);
		if (pid >= 0)
			msc_w_i64(w, "pid", pid);
		msc_w_u64(w, "stack", s[k].stack);
		msc_w_u64(w, "max", s[k].bytes);
		/* Where its value changed: the point, and the value from it on
		 * (null: no longer among the top). */
		for (i = 0, nch = 0; i < t->npts; i++) {
			int64_t v = value_at(&t->pts[i], s[k].stack);

			if (v != last) {
				at[nch] = (uint32_t)i;
				val[nch++] = v;
			}
			last = v;
		}
		msc_w_arr(w, "at");
		for (i = 0; i < nch; i++)
			msc_w_u64(w, NULL, at[i]);
		msc_w_arr_end(w);
		msc_w_arr(w, "live");
		for (i = 0; i < nch; i++) {
			if (val[i] < 0)
				msc_w_null(w, NULL);
			else
				msc_w_u64(w, NULL, (uint64_t)val[i]);
		}
		msc_w_arr_end(w);
		msc_w_end(w);
	}
	free(s);
}
