/* SPDX-License-Identifier: MIT */
/* Reports: the views of the model the renderers share (sites and leaks
 * grouped by stack, their orders, the totals, what a filter dropped) and
 * the text escapes they share.  See msc_render.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_render.h"
#include "msc_util.h"

/* Sites grouped by stack (all sizes of one call path together). */
struct render_group *render_site_groups(const struct msc_report *r, size_t *n)
{
	struct msc_u64map idx;
	struct render_group *g = calloc(r->nsites + 1, sizeof(*g));
	size_t i, k = 0;

	*n = 0;
	if (!g || msc_u64map_init(&idx, r->nsites + 1)) {
		free(g);
		return NULL;
	}
	for (i = 0; i < r->nsites; i++) {
		const struct msc_rsite *s = &r->sites[i];
		uint64_t *slot;
		struct render_group *x;
		unsigned b;

		slot = msc_u64map_get(&idx, (uint64_t)s->stack + 1);
		if (slot) {
			x = &g[*slot];
		} else {
			msc_u64map_put(&idx, (uint64_t)s->stack + 1, k);
			x = &g[k++];
			x->stack = s->stack;
			x->fn = s->fn;
			x->pool = s->pool;
			x->size_lo = s->size;
		}
		msc_sat_add(&x->bytes, s->bytes);
		msc_sat_add(&x->allocs, s->allocs);
		msc_sat_add(&x->frees, s->frees);
		msc_sat_add(&x->live_bytes, s->live_bytes);
		x->at_peak += s->at_peak;
		x->temporary += s->temporary;
		for (b = 0; b < SHORT_LIVED_BUCKETS; b++)
			x->short_lived += s->ages[b];
		if (s->size < x->size_lo)
			x->size_lo = s->size;
		if (s->size_max > x->size_hi)
			x->size_hi = s->size_max;
	}
	/* --live-at: each stack's bytes at that point of the timeline. */
	for (i = 0; r->live_at && i < r->timeline.nseries; i++) {
		const struct msc_rseries *se = &r->timeline.series[i];
		uint64_t *slot = msc_u64map_get(&idx, (uint64_t)se->stack + 1);

		if (slot && se->live[r->live_at_point] > 0)
			g[*slot].live_at = (uint64_t)se->live[r->live_at_point];
	}
	msc_u64map_release(&idx);
	*n = k;
	return g;
}

const struct msc_rframe *render_attributed(const struct msc_report *r, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);

	return s && s->n ? &s->frames[s->attr] : NULL;
}

bool render_runtime_frame(const struct msc_rframe *f)
{
	return msc_report_runtime_fn(f->fn);
}

/* How many times frames [i, i + p) repeat right after themselves. */
static unsigned repeats(char **lab, unsigned n, unsigned i, unsigned p)
{
	unsigned r = 0, k;

	for (;;) {
		unsigned at = i + (r + 1) * p;

		if (at + p > n)
			return r;
		for (k = 0; k < p; k++)
			if (strcmp(lab[i + k], lab[at + k]))
				return r;
		r++;
	}
}

/* The shortest cycle of frames starting at i that repeats: its length in
 * *p and how many more times it comes, or 0 (*p 1) when none does. */
static unsigned cycle_at(char **lab, unsigned n, unsigned i, unsigned *p)
{
	unsigned r;

	for (*p = 1; *p <= RENDER_FOLD_PERIOD && i + 2 * *p <= n; ++*p)
		if ((r = repeats(lab, n, i, *p)))
			return r;
	*p = 1;
	return 0;
}

long render_stack_lines(const struct msc_report *r, uint32_t id, struct render_sline **out)
{
	const struct msc_rstack *s = msc_report_stack(r, id);
	struct render_sline *l = NULL;
	unsigned i, n = 0, *at = NULL;
	char **lab = NULL, buf[1024];
	long nl = -ENOMEM;

	*out = NULL;
	if (!s)
		return 0;
	lab = calloc(s->n + 1, sizeof(*lab));
	at = calloc(s->n + 1, sizeof(*at));
	l = calloc(s->n + 1, sizeof(*l));
	if (!lab || !at || !l)
		goto out;
	for (i = 0; i < s->n; i++) {
		const struct msc_rframe *f = &s->frames[i];

		if (render_runtime_frame(f))
			continue;
		if (!(lab[n] = strdup(msc_frame_label(buf, sizeof(buf), f))))
			goto out;
		at[n++] = i;
	}
	nl = 0;
	for (i = 0; i < n;) {
		unsigned p, k, rep = cycle_at(lab, n, i, &p);

		for (k = 0; k < p; k++)
			l[nl++] = (struct render_sline){ &s->frames[at[i + k]], at[i + k] < s->attr, k > 0, 0, 0 };
		if (rep)
			l[nl++] = (struct render_sline){ NULL, false, false, p, rep };
		i += p * (rep + 1);
	}
	*out = l;
	l = NULL;
out:
	for (i = 0; lab && i < n; i++)
		free(lab[i]);
	free(lab);
	free(at);
	free(l);
	return nl;
}

const char *render_fn_label(const struct render_group *x, char *buf, size_t n)
{
	if (!x->pool)
		return x->fn ? x->fn : "?";
	snprintf(buf, n, "%s, pool %s", x->fn ? x->fn : "?", x->pool);
	return buf;
}

bool render_leaked_kind(const char *kind)
{
	int k = msc_leak_kind_parse(kind);

	return k >= 0 && msc_leak_kind_leaked((unsigned)k);
}

int render_kind_rank(const char *k)
{
	static const char *const order[] = { "definitely", "indirectly", "possibly", "unscanned",
					      "unknown", "reachable" };
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(order); i++)
		if (!strcmp(order[i], k))
			return (int)i;
	return (int)ARRAY_SIZE(order);
}

/* Leaks grouped by (stack, kind). */
struct render_group *render_leak_groups(const struct msc_report *r, size_t *n)
{
	struct msc_u64map idx;
	struct render_group *g = calloc(r->nleaks + 1, sizeof(*g));
	size_t i, k = 0;

	*n = 0;
	if (!g || msc_u64map_init(&idx, r->nleaks + 1)) {
		free(g);
		return NULL;
	}
	for (i = 0; i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];
		uint64_t key = ((uint64_t)l->stack << 8 | (uint64_t)render_kind_rank(l->kind)) + 1;
		uint64_t *slot;
		struct render_group *x;

		slot = msc_u64map_get(&idx, key);
		if (slot) {
			x = &g[*slot];
		} else {
			msc_u64map_put(&idx, key, k);
			x = &g[k++];
			x->stack = l->stack;
			x->kind = l->kind;
			x->fn = l->fn;
			x->pool = l->pool;
			x->size_lo = l->size;
		}
		msc_sat_add(&x->count, l->count);
		msc_sat_add(&x->bytes, l->bytes);
		if (l->size < x->size_lo)
			x->size_lo = l->size;
		if (l->size_max > x->size_hi)
			x->size_hi = l->size_max;
	}
	msc_u64map_release(&idx);
	*n = k;
	return g;
}

int render_by_bytes(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int render_by_allocs(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;

	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	return render_by_bytes(a, b);
}

int render_by_peak(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak > y->at_peak ? -1 : 1;
	return render_by_bytes(a, b);
}

int render_by_live_at(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;

	if (x->live_at != y->live_at)
		return x->live_at > y->live_at ? -1 : 1;
	return render_by_bytes(a, b);
}

int render_by_leak(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;
	int kx = render_kind_rank(x->kind), ky = render_kind_rank(y->kind);

	if (kx != ky)
		return kx - ky;
	return render_by_bytes(a, b);
}

void render_totals_of(const struct msc_report *r, struct render_totals *t)
{
	size_t i;
	unsigned b;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < r->nsites; i++) {
		const struct msc_rsite *s = &r->sites[i];

		msc_sat_add(&t->live_bytes, s->live_bytes);
		if (msc_is_mapping_fn(s->fn)) {
			/* the malloc family's totals leave mappings out */
			if (!strcmp(s->fn, "brk")) {
				t->brks += s->allocs;
				msc_sat_add(&t->brk_bytes, s->bytes);
			} else {
				t->mmaps += s->allocs;
				msc_sat_add(&t->mmap_bytes, s->bytes);
			}
			continue;
		}
		msc_sat_add(&t->allocs, s->allocs);
		msc_sat_add(&t->frees, s->frees);
		msc_sat_add(&t->bytes, s->bytes);
		t->temporary += s->temporary;
		for (b = 0; b < SHORT_LIVED_BUCKETS; b++)
			t->short_lived += s->ages[b];
	}
	for (i = 0; i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];

		if (render_leaked_kind(l->kind)) {
			msc_sat_add(&t->leaked, l->bytes);
			msc_sat_add(&t->leaked_blocks, l->count);
		}
		if (!strcmp(l->kind, "definitely"))
			msc_sat_add(&t->definitely, l->bytes);
		else if (!strcmp(l->kind, "indirectly"))
			msc_sat_add(&t->indirectly, l->bytes);
		else if (!strcmp(l->kind, "possibly"))
			msc_sat_add(&t->possibly, l->bytes);
		else if (!strcmp(l->kind, "reachable"))
			msc_sat_add(&t->reachable, l->bytes);
		else if (!strcmp(l->kind, "unknown")) {
			msc_sat_add(&t->unknown, l->bytes);
			msc_sat_add(&t->unknown_blocks, l->count);
		} else
			msc_sat_add(&t->unscanned, l->bytes);
	}
	/* Cut before any site or leak was written: the samples still say
	 * how much the program had allocated. */
	if (!r->complete && !r->nsites && !r->nleaks) {
		for (i = r->nsamples; i-- > 0;)
			if (r->samples[i].has_counts) {
				t->allocs = r->samples[i].allocs;
				t->bytes = r->samples[i].bytes;
				t->live_bytes = r->samples[i].heap;
				t->sample_ts = r->samples[i].ts;
				t->from_sample = true;
				break;
			}
	}
}

/*
 * What a filter dropped that this report's figures would have counted: the
 * events of a report aggregated from events, the sites and leaks of one
 * read from aggregates.  (Turning an --events stream into its aggregates
 * with ms-filter --type drops nothing the report counts.)
 */
bool render_filtered_relevant(const struct msc_report *r, const struct msc_filtered *f)
{
	if (!f->records && !(f->trimmed_allocs && !r->from_events))
		return false;
	if (r->from_events)
		return !strcmp(f->type, "alloc") || !strcmp(f->type, "free") || !strcmp(f->type, "mmap") ||
		       !strcmp(f->type, "leak");
	return !strcmp(f->type, "site") || !strcmp(f->type, "leak");
}

unsigned render_filtered_count(const struct msc_report *r)
{
	unsigned i, n = 0;

	for (i = 0; i < r->nfiltered; i++)
		n += render_filtered_relevant(r, &r->filtered[i]);
	return n;
}

int render_cmp_delta(const void *a, const void *b)
{
	const struct msc_rdelta *x = a, *y = b;

	return x->change != y->change ? (x->change > y->change ? -1 : 1) : 0;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one. */
size_t render_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ?
			       4 :
			       0;
	}
	return 0;
}

void render_xml(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = render_utf8_len(p);

		switch (*p) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if (!n || (*p < 0x20 && *p != '\t' && *p != '\n'))
				fputs("\xef\xbf\xbd", out);
			else
				fwrite(p, 1, n, out);
		}
		p += n ? n : 1;
	}
}


/* ------------------------------------------------------ summary figures */

static struct render_figure *fig_add(struct render_figure *f, size_t *n, const char *label,
				     const char *md_label, bool strong)
{
	struct render_figure *x = &f[(*n)++];

	memset(x, 0, sizeof(*x));
	x->label = label;
	x->md_label = md_label ? md_label : label + strspn(label, " ");
	x->strong = strong;
	return x;
}

size_t render_leaks_by_mark(const struct msc_report *r, struct render_mark_sum *out, size_t max)
{
	size_t i, k, n = 0;
	bool any = false;

	for (i = 0; i < r->nleaks; i++)
		any |= r->leaks[i].after != NULL;
	for (i = 0; any && i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];
		uint64_t ts = l->after ? l->after_ts : 0;

		if (!render_leaked_kind(l->kind))
			continue;
		for (k = 0; k < n && (out[k].ts != ts || !out[k].name != !l->after); k++)
			;
		if (k == n) {
			if (n == max)
				continue;
			/* in time order */
			for (k = n++; k > 0 && out[k - 1].ts > ts; k--)
				out[k] = out[k - 1];
			out[k] = (struct render_mark_sum){ l->after, ts, 0, 0 };
		}
		msc_sat_add(&out[k].bytes, l->bytes);
		msc_sat_add(&out[k].blocks, l->count);
	}
	return n;
}

/* The marks of the run (not ms-record's own), and the range the leaks are
 * of (ms-report --since, --until). */
static void marks_figures(const struct msc_report *r, struct render_figure *f, size_t *n)
{
	struct render_figure *x;
	size_t i, k = 0, len = 0;
	char a[32], range[96];

	for (i = 0; i < r->nmarks; i++)
		if (!r->marks[i].by || strcmp(r->marks[i].by, "ms-record"))
			k++;
	if (k) {
		x = fig_add(f, n, "marks", NULL, false);
		msc_fmt_count(x->value, sizeof(x->value), (int64_t)k);
		for (i = 0; i < r->nmarks && len + 40 < sizeof(x->rest); i++) {
			if (r->marks[i].by && !strcmp(r->marks[i].by, "ms-record"))
				continue;
			len += (size_t)snprintf(x->rest + len, sizeof(x->rest) - len, "%s%s at %s", len ? ", " : "",
						r->marks[i].name, seconds(a, sizeof(a), r->marks[i].ts));
		}
		if (i < r->nmarks && len + 5 < sizeof(x->rest))
			snprintf(x->rest + len, sizeof(x->rest) - len, ", ...");
	}
	if (r->since || r->until) {
		x = fig_add(f, n, "leaks of", NULL, true);
		snprintf(x->value, sizeof(x->value), "%s..%s", r->since ? r->since : "", r->until ? r->until : "");
		if (r->since && r->until)
			snprintf(range, sizeof(range), "after %s, before %s", r->since, r->until);
		else
			snprintf(range, sizeof(range), "%s %s", r->since ? "after" : "before",
				 r->since ? r->since : r->until);
		snprintf(x->rest, sizeof(x->rest), "(blocks allocated %.60s; %s)", range,
			 r->from_events ? "the sites too, from the events" : "the sites are of the whole run");
	}
}

size_t render_figures(const struct msc_report *r, struct render_figure *f)
{
	struct render_totals t;
	bool attach = r->mode && !strcmp(r->mode, "attach");
	/* Exact counts from the end record unless a filter took sites out:
	 * then the sites' estimates are what is left. */
	bool exact_counts = r->sample && r->has_end_totals && !r->nfilters;
	const char *est = r->sample ? ", estimated" : "";
	/* The peaks are the end record's: a filter that took sites out does
	 * not change them (an --events stream's are aggregated again). */
	const char *pre = render_filtered_count(r) && !r->from_events ? ", before filtering" : "";
	struct render_figure *x;
	char a[32], b[32];
	size_t n = 0;

	render_totals_of(r, &t);
	if (r->sample) {
		x = fig_add(f, &n, "sampled every", NULL, false);
		sz(x->value, sizeof(x->value), r->sample);
		snprintf(x->rest, sizeof(x->rest), "(ms-record --sample: estimates are said so)");
		if (exact_counts) {
			t.allocs = r->end_allocs;
			t.bytes = r->end_bytes;
			t.frees = r->end_frees;
		}
	}
	x = fig_add(f, &n, "allocations", NULL, false);
	msc_fmt_count(x->value, sizeof(x->value), msc_clamp_i64(t.allocs));
	if (t.from_sample)
		snprintf(x->rest, sizeof(x->rest), "(%s) at the last sample, %s", sz(a, sizeof(a), t.bytes),
			 seconds(b, sizeof(b), t.sample_ts));
	else
		snprintf(x->rest, sizeof(x->rest), "(%s)%s", sz(a, sizeof(a), t.bytes),
			 r->sample && !exact_counts ? ", estimated" : "");
	x = fig_add(f, &n, "frees", NULL, false);
	if (t.from_sample)
		snprintf(x->value, sizeof(x->value), "unknown");
	else
		msc_fmt_count(x->value, sizeof(x->value), msc_clamp_i64(t.frees));
	if (r->sample && !exact_counts)
		snprintf(x->rest, sizeof(x->rest), "estimated");
	if (t.mmaps) {
		x = fig_add(f, &n, "anonymous mmaps", NULL, false);
		msc_fmt_count(x->value, sizeof(x->value), msc_clamp_i64(t.mmaps));
		snprintf(x->rest, sizeof(x->rest), "(%s; not in the allocations)", sz(a, sizeof(a), t.mmap_bytes));
	}
	if (t.brks) {
		x = fig_add(f, &n, "brk growth", NULL, false);
		msc_fmt_count(x->value, sizeof(x->value), msc_clamp_i64(t.brks));
		snprintf(x->rest, sizeof(x->rest), "(%s; not in the allocations)", sz(a, sizeof(a), t.brk_bytes));
	}
	if (r->pages.have) {
		/* The page-level view: the heap, what the program mapped
		 * itself, both at one moment, and the whole process. */
		if (r->pages.heap_peak) {
			x = fig_add(f, &n, "peak heap", NULL, false);
			sz(x->value, sizeof(x->value), r->pages.heap_peak);
			snprintf(x->rest, sizeof(x->rest), "at %s%s%s", seconds(a, sizeof(a), r->pages.heap_peak_ts), est,
				 pre);
		}
		if (r->pages.mapped_peak) {
			x = fig_add(f, &n, "peak mapped", NULL, false);
			sz(x->value, sizeof(x->value), r->pages.mapped_peak);
			snprintf(x->rest, sizeof(x->rest), "at %s (anonymous mmaps and brk)%s",
				 seconds(a, sizeof(a), r->pages.mapped_peak_ts), pre);
		}
		if (r->pages.mapped_peak && r->peak && r->peak != r->pages.heap_peak) {
			x = fig_add(f, &n, "peak heap+mapped", NULL, false);
			sz(x->value, sizeof(x->value), r->peak);
			snprintf(x->rest, sizeof(x->rest), pre[0] ? "at %s%s" : "at %s (the sites at the peak sum to it)",
				 seconds(a, sizeof(a), r->peak_ts), pre);
		}
		if (r->pages.rss_peak) {
			/* wait4's: the process's, or a child's it waited for */
			x = fig_add(f, &n, "peak rss", NULL, false);
			sz(x->value, sizeof(x->value), r->pages.rss_peak);
			snprintf(x->rest, sizeof(x->rest), "(process or a waited-for child)");
		}
	} else if (r->peak) {
		x = fig_add(f, &n, "peak heap", NULL, false);
		sz(x->value, sizeof(x->value), r->peak);
		snprintf(x->rest, sizeof(x->rest), "at %s%s%s", seconds(a, sizeof(a), r->peak_ts), est, pre);
	}
	if (r->nerrors || r->end_errors) {
		x = fig_add(f, &n, "memory errors", NULL, true);
		snprintf(x->value, sizeof(x->value), "%" PRIu64, r->end_errors > r->nerrors ? r->end_errors : r->nerrors);
		snprintf(x->rest, sizeof(x->rest), "(double or invalid frees, mismatches)");
	}
	marks_figures(r, f, &n);
	if (t.from_sample) {
		x = fig_add(f, &n, "leaked", NULL, true);
		snprintf(x->value, sizeof(x->value), "unknown");
		snprintf(x->rest, sizeof(x->rest), "(the stream ends before its sites and leaks)");
	} else if (!attach) {
		x = fig_add(f, &n, "leaked", NULL, true);
		msc_fmt_exact(x->value, sizeof(x->value), msc_clamp_i64(t.leaked));
		snprintf(x->rest, sizeof(x->rest), "in %s %s%s", msc_fmt_count(a, sizeof(a), msc_clamp_i64(t.leaked_blocks)),
			 t.leaked_blocks == 1 ? "block" : "blocks", est);
	}
	if (t.definitely || t.indirectly) {
		x = fig_add(f, &n, "  definitely", "definitely lost", false);
		msc_fmt_exact(x->value, sizeof(x->value), msc_clamp_i64(t.definitely));
		x = fig_add(f, &n, "  indirectly", "indirectly lost", false);
		msc_fmt_exact(x->value, sizeof(x->value), msc_clamp_i64(t.indirectly));
	}
	if (t.possibly) {
		x = fig_add(f, &n, "possibly lost", NULL, false);
		msc_fmt_exact(x->value, sizeof(x->value), msc_clamp_i64(t.possibly));
	}
	if (!attach && !t.from_sample) {
		x = fig_add(f, &n, "still reachable", NULL, false);
		msc_fmt_exact(x->value, sizeof(x->value), msc_clamp_i64(t.reachable));
		if (r->sample)
			snprintf(x->rest, sizeof(x->rest), "estimated");
	}
	if (t.unscanned) {
		x = fig_add(f, &n, "unscanned", NULL, false);
		msc_fmt_exact(x->value, sizeof(x->value), msc_clamp_i64(t.unscanned));
		snprintf(x->rest, sizeof(x->rest), "(no reachability scan)%s", est);
	}
	if (t.unknown) {
		x = fig_add(f, &n, "live at the end", NULL, false);
		msc_fmt_exact(x->value, sizeof(x->value), msc_clamp_i64(t.unknown));
		snprintf(x->rest, sizeof(x->rest), "in %s %s (fate unknown)%s",
			 msc_fmt_count(a, sizeof(a), msc_clamp_i64(t.unknown_blocks)),
			 t.unknown_blocks == 1 ? "block" : "blocks", est);
	}
	if (r->complete) {
		x = fig_add(f, &n, "events lost", NULL, false);
		msc_fmt_count(x->value, sizeof(x->value), msc_clamp_i64(r->lost));
		if (r->lost)
			snprintf(x->rest, sizeof(x->rest), "(dropped: the figures above miss them)");
	}
	return n;
}

/* ------------------------------------------------------- twins apart */

#define VIA UINT_MAX	/* a twin's path is its twin's: wrappers tell them apart */

static const struct msc_rframe *frame_at(const struct msc_report *r, uint32_t stack, unsigned up)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);

	return s && s->attr + up < s->n ? &s->frames[s->attr + up] : NULL;
}

/* The first depth at which site a's path leaves site b's, when both end
 * on the same frame; 0 when they do not; VIA when it never does. */
static unsigned parting(const struct msc_report *r, uint32_t a, uint32_t b)
{
	char x[512], y[512];
	unsigned up;

	if (strcmp(msc_frame_label(x, sizeof(x), frame_at(r, a, 0)),
		   msc_frame_label(y, sizeof(y), frame_at(r, b, 0))))
		return 0;
	for (up = 1; up < MSC_STACK_MAX_FRAMES; up++) {
		const struct msc_rframe *fa = frame_at(r, a, up), *fb = frame_at(r, b, up);

		if (!fa && !fb)
			break;
		if (!fa || !fb || strcmp(msc_frame_label(x, sizeof(x), fa), msc_frame_label(y, sizeof(y), fb)))
			return fa ? up : 0;
	}
	/* The same path from there up: the wrappers below tell them apart. */
	return VIA;
}

/* A C++ function's name without its template arguments and parameters:
 * "std::__cxx11::basic_string::_M_mutate". */
static const char *short_fn(char *buf, size_t n, const char *fn)
{
	size_t k = 0, i, start = 0;
	int angle = 0, paren = 0;

	for (; *fn && k + 1 < n; fn++) {
		if (*fn == '<' && !paren)
			angle++;
		else if (*fn == '>' && angle && !paren)
			angle--;
		else if (*fn == '(' && !angle)
			paren++;
		else if (*fn == ')' && paren && !angle)
			paren--;
		else if (!angle && !paren)
			buf[k++] = *fn;
	}
	buf[k] = '\0';
	/* Its return type goes ("std::string std::operator+"). */
	for (i = 0; i < k; i++)
		if (buf[i] == ' ' && !(i >= 8 && !memcmp(buf + i - 8, "operator", 8)))
			start = i + 1;
	return buf + start;
}

/* What a site's allocation went through just below its frame: the
 * innermost wrapper's function, short. */
static const char *via_of(const struct msc_report *r, uint32_t stack, char *buf, size_t n)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);
	const struct msc_rframe *f = s && s->attr && s->attr <= s->n ? &s->frames[s->attr - 1] : NULL;
	char label[1024];

	if (f && f->fn) {
		const char *sh = short_fn(label, sizeof(label), f->fn);

		snprintf(buf, n, "%s", sh);
		return buf;
	}
	return msc_frame_label(buf, n, f);
}


#define NAMED_REACH 8	/* frames above an unnamed site looked at for a name */

const char *render_named_caller(const struct msc_report *r, uint32_t stack, char *buf, size_t n)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);
	unsigned i;

	if (!s || !s->n || s->frames[s->attr].fn)
		return NULL;
	for (i = s->attr + 1; i < s->n && i <= s->attr + NAMED_REACH; i++)
		if (s->frames[i].fn && !render_runtime_frame(&s->frames[i])) {
			char tmp[512];

			snprintf(buf, n, "%s", short_fn(tmp, sizeof(tmp), s->frames[i].fn));
			return buf;
		}
	return NULL;
}

void render_parts(const struct msc_report *r, const uint32_t *stacks, size_t n, struct render_part *out)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		unsigned depth = 0;

		out[i].from = NULL;
		out[i].via[0] = '\0';
		for (j = 0; j < n; j++) {
			unsigned up = j == i ? 0 : parting(r, stacks[i], stacks[j]);

			if (up > depth)
				depth = up;
		}
		if (depth == VIA)
			via_of(r, stacks[i], out[i].via, sizeof(out[i].via));
		else if (depth)
			out[i].from = frame_at(r, stacks[i], depth);
	}
}

char *render_site_label(const struct msc_report *r, uint32_t stack, const struct render_part *part)
{
	char f[1600], x[1100], y[1024], in[512], *out;
	const struct msc_rframe *at = render_attributed(r, stack);

	if (!at)
		return strdup("[no stack]");
	msc_frame_label(f, sizeof(f), at);
	if (render_named_caller(r, stack, in, sizeof(in)))
		snprintf(f + strlen(f), sizeof(f) - strlen(f), " under %.500s", in);
	if (part && part->from)
		snprintf(x, sizeof(x), " from %s", msc_frame_label(y, sizeof(y), part->from));
	else if (part && part->via[0])
		snprintf(x, sizeof(x), " via %s", part->via);
	else
		x[0] = '\0';
	out = malloc(strlen(f) + strlen(x) + 1);
	if (out) {
		strcpy(out, f);
		strcat(out, x);
	}
	return out;
}
