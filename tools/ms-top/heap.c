/* SPDX-License-Identifier: MIT */
/*
 * ms-top: the live heap of a process that ms-record records, read from its
 * socket (msc_live.h) at each refresh: the "stack" and "site" records of
 * that moment, summed by stack, compared with the previous refresh.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "msc_format.h"
#include "msc_live.h"
#include "top.h"

/* Grows an array of the arena by doubling (the arena keeps the old one). */
static void *arena_grow(struct msc_arena *a, void *arr, size_t n, size_t *cap, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *np;

	if (n < *cap)
		return arr;
	np = msc_arena_alloc(a, ncap * elem);
	if (!np)
		return NULL;
	if (n)
		memcpy(np, arr, n * elem);
	*cap = ncap;
	return np;
}

/* Frames of a site's path kept to tell twins apart (its frame first). */
#define TOP_PATH 16

struct stack_label {
	uint64_t id;
	const struct msc_rframe *frames;	/* the read's (its defs') */
	unsigned n, attr;
	const char *label, *caller;
	const char **path;		/* the frames from the attributed one out */
	unsigned npath;
};

static int cmp_label(const void *a, const void *b)
{
	const struct stack_label *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_site_stack(const void *a, const void *b)
{
	const struct top_site *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_by_live(const void *a, const void *b)
{
	const struct top_site *x = *(const struct top_site *const *)a;
	const struct top_site *y = *(const struct top_site *const *)b;

	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return cmp_site_stack(x, y);
}

static int cmp_by_growth(const void *a, const void *b)
{
	const struct top_site *x = *(const struct top_site *const *)a;
	const struct top_site *y = *(const struct top_site *const *)b;

	if (x->growth != y->growth)
		return x->growth > y->growth ? -1 : 1;
	return cmp_site_stack(x, y);
}

static const struct top_site *find_site(const struct top_heap *h, uint64_t stack)
{
	size_t lo = 0, hi = h->nsites;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->sites[mid].stack < stack)
			lo = mid + 1;
		else if (h->sites[mid].stack > stack)
			hi = mid;
		else
			return &h->sites[mid];
	}
	return NULL;
}

static const struct stack_label *find_label(const struct stack_label *l, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l[mid].id < id)
			lo = mid + 1;
		else if (l[mid].id > id)
			hi = mid;
		else
			return &l[mid];
	}
	return NULL;
}

/* A stack record's frames and the frame its allocations are attributed
 * to (the table's: valid for this read). */
static int read_stack(struct msc_stackdefs *defs, const struct msc_rec *rec, struct stack_label *out)
{
	struct msc_rframe *frames;
	uint64_t id;
	int ret;

	if (msc_rec_u64(rec, "id", &id))
		return -EINVAL;
	ret = msc_stack_frames(defs, rec, NULL, 0, &frames, &out->n, &out->attr, NULL);
	if (ret)
		return ret;
	out->id = id;
	out->frames = frames;
	return 0;
}

/* The frame a site is attributed to and the frames after it, as labels
 * (in a, which outlives defs). */
static void label_stack(struct msc_arena *a, struct stack_label *l)
{
	char buf[512];
	unsigned k;

	l->label = l->caller = NULL;
	l->npath = 0;
	l->path = msc_arena_alloc(a, TOP_PATH * sizeof(*l->path));
	for (k = 0; l->path && k < TOP_PATH && l->attr + k < l->n; k++) {
		if (!(l->path[k] = msc_arena_strdup(a, msc_frame_label(buf, sizeof(buf), &l->frames[l->attr + k]))))
			break;
		l->npath++;
	}
	if (l->npath)
		l->label = l->path[0];
	if (l->npath > 1)
		l->caller = l->path[1];
}

/* The program's own allocation wrappers pass their allocations on, as in
 * the reports (msc_find_wrappers): then each stack's labels. */
static void label_stacks(struct msc_arena *a, struct msc_wscratch *scratch, struct stack_label *l, size_t n)
{
	struct msc_wstack *ws = n ? msc_arena_alloc(a, n * sizeof(*ws)) : NULL;
	size_t i;

	for (i = 0; ws && i < n; i++)
		ws[i] = (struct msc_wstack){ l[i].frames, l[i].n, l[i].attr };
	if (ws && !msc_find_wrappers(ws, n, NULL, NULL, scratch))
		for (i = 0; i < n; i++)
			l[i].attr = ws[i].attr;
	for (i = 0; i < n; i++)
		label_stack(a, &l[i]);
}

/* Sites by label, then by path: twins (one label, two paths) together. */
static int cmp_path(const void *a, const void *b)
{
	const struct top_site *x = *(const struct top_site *const *)a;
	const struct top_site *y = *(const struct top_site *const *)b;
	unsigned k;
	int c;

	for (k = 0; k < x->npath && k < y->npath; k++)
		if ((c = strcmp(x->path[k], y->path[k])))
			return c;
	return x->npath < y->npath ? -1 : x->npath > y->npath;
}

/* How many frames two paths share from the start. */
static unsigned common(const struct top_site *x, const struct top_site *y)
{
	unsigned k = 0;

	while (k < x->npath && k < y->npath && !strcmp(x->path[k], y->path[k]))
		k++;
	return k;
}

/*
 * Twins, sites ending on one frame by different paths, are told apart as
 * the reports tell them: by the first caller where their paths part,
 * in place of the caller after their frame.
 */
static void tell_twins(struct msc_arena *a, struct top_heap *h)
{
	struct top_site **by = msc_arena_alloc(a, (h->nsites + 1) * sizeof(*by));
	size_t i;

	if (!by)
		return;
	for (i = 0; i < h->nsites; i++)
		by[i] = &h->sites[i];
	top_sort(by, h->nsites, sizeof(*by), cmp_path);
	for (i = 0; i < h->nsites; i++) {
		unsigned part = 0, c;

		if (!by[i]->npath)
			continue;
		if (i > 0 && by[i - 1]->npath && (c = common(by[i - 1], by[i])) > part)
			part = c;
		if (i + 1 < h->nsites && by[i + 1]->npath && (c = common(by[i], by[i + 1])) > part)
			part = c;
		if (part > 1 && part < by[i]->npath)
			by[i]->caller = by[i]->path[part];
	}
}

/* n per dt_ns, per second, rounded */
static int64_t per_second(int64_t n, uint64_t dt_ns)
{
	double v = (double)n * 1e9 / (double)dt_ns;

	return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

struct top_heap *top_heap_read(struct top *t, struct top_sample *s, int pid,
			       const struct top_heap *prev, uint64_t dt_ns)
{
	struct msc_arena *a = &s->arena;
	struct msc_err err;
	struct msc_rec rec;
	struct msc_stackdefs *defs = &t->live_defs;
	struct stack_label *labels = NULL;
	struct top_site *raw = NULL;
	struct top_heap *h;
	size_t nlabels = 0, lcap = 0, nraw = 0, rcap = 0, i;
	long len;
	int ret;

	len = msc_live_read(pid, &t->live_buf, &t->live_cap, t->live_timeout_ms, &err);
	if (len < 0) {
		/*
		 * Not recorded (any more), a recorder that ended while we
		 * connected (it resets what it had not accepted) or busy with
		 * other clients: nothing to say.  A timeout is worth a word.
		 */
		if (len != -ENOENT && len != -ECONNRESET && len != -EAGAIN) {
			t->live_errors++;
			snprintf(t->live_err, sizeof(t->live_err), "%s", err.msg);
		}
		return NULL;
	}
	h = msc_arena_zalloc(a, sizeof(*h));
	if (!h)
		return NULL;
	/* Stacks may refer to frame records and parent stacks (format
	 * version 2): the table is this read's, its memory kept. */
	msc_stackdefs_reset(defs);
	msc_reader_reuse_mem(&t->live_reader, t->live_buf, (size_t)len, "live heap");
	while ((ret = msc_reader_next(&t->live_reader, &rec, &err)) != 0) {
		struct top_site *site;
		uint64_t v;

		if (ret < 0)
			continue;	/* a record cut short: the rest is still good */
		switch (msc_rec_rtype(&rec)) {
		case MSC_R_FRAME:
			msc_stackdefs_frame(defs, &rec, NULL, &err);
			break;
		case MSC_R_STACK:
			labels = arena_grow(a, labels, nlabels, &lcap, sizeof(*labels));
			if (!labels)
				return NULL;
			if (read_stack(defs, &rec, &labels[nlabels]) == 0)
				nlabels++;
			break;
		case MSC_R_MARK: {
			const char *by = msc_rec_str(&rec, "by", NULL);
			const char *name;

			if (by && !strcmp(by, "ms-record"))
				break;
			name = msc_rec_str(&rec, "name", NULL);
			h->nmarks++;
			h->mark = name ? msc_arena_strdup(a, name) : NULL;
			msc_rec_u64(&rec, "ts", &h->mark_ts);
			break;
		}
		case MSC_R_SITE:
			raw = arena_grow(a, raw, nraw, &rcap, sizeof(*raw));
			if (!raw)
				return NULL;
			site = &raw[nraw];
			memset(site, 0, sizeof(*site));
			if (msc_rec_u64(&rec, "stack", &site->stack))
				break;
			msc_rec_u64(&rec, "live_bytes", &site->live_bytes);
			msc_rec_u64(&rec, "live", &site->live);
			msc_rec_u64(&rec, "allocs", &site->allocs);
			msc_rec_u64(&rec, "frees", &site->frees);
			if (msc_rec_u64(&rec, "bytes", &v) == 0)
				h->bytes += v;
			nraw++;
			break;
		default:
			break;
		}
	}
	label_stacks(a, &t->wrappers, labels, nlabels);
	top_sort(labels, nlabels, sizeof(*labels), cmp_label);
	top_sort(raw, nraw, sizeof(*raw), cmp_site_stack);
	/* one site per stack: the sizes summed */
	h->sites = raw;
	for (i = 0; i < nraw; i++) {
		struct top_site *to;

		if (h->nsites && h->sites[h->nsites - 1].stack == raw[i].stack) {
			to = &h->sites[h->nsites - 1];
			to->live_bytes += raw[i].live_bytes;
			to->live += raw[i].live;
			to->allocs += raw[i].allocs;
			to->frees += raw[i].frees;
		} else {
			const struct stack_label *l = find_label(labels, nlabels, raw[i].stack);

			to = &h->sites[h->nsites++];
			if (to != &raw[i])
				*to = raw[i];
			to->label = l && l->label ? l->label : "?";
			to->caller = l ? l->caller : NULL;
			to->path = l ? l->path : NULL;
			to->npath = l ? l->npath : 0;
		}
	}
	tell_twins(a, h);
	h->by_live = msc_arena_alloc(a, (h->nsites + 1) * sizeof(*h->by_live));
	h->by_growth = msc_arena_alloc(a, (h->nsites + 1) * sizeof(*h->by_growth));
	if (!h->by_live || !h->by_growth)
		return NULL;
	if (prev && dt_ns)
		h->has_rates = true;
	for (i = 0; i < h->nsites; i++) {
		struct top_site *site = &h->sites[i];

		h->live_bytes += site->live_bytes;
		h->live += site->live;
		h->allocs += site->allocs;
		h->frees += site->frees;
		h->by_live[i] = site;
		if (h->has_rates) {
			const struct top_site *was = find_site(prev, site->stack);
			int64_t d = (int64_t)site->live_bytes - (int64_t)(was ? was->live_bytes : 0);

			site->growth = per_second(d, dt_ns);
			if (site->growth > 0)
				h->by_growth[h->ngrowing++] = site;
		}
	}
	top_sort(h->by_live, h->nsites, sizeof(*h->by_live), cmp_by_live);
	top_sort(h->by_growth, h->ngrowing, sizeof(*h->by_growth), cmp_by_growth);
	if (h->has_rates) {
		h->alloc_rate = h->allocs >= prev->allocs ?
			(uint64_t)per_second((int64_t)(h->allocs - prev->allocs), dt_ns) : 0;
		h->free_rate = h->frees >= prev->frees ?
			(uint64_t)per_second((int64_t)(h->frees - prev->frees), dt_ns) : 0;
		h->growth_rate = per_second((int64_t)h->live_bytes - (int64_t)prev->live_bytes, dt_ns);
	}
	return h;
}
