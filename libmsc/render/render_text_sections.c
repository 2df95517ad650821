/* SPDX-License-Identifier: MIT */
/*
 * Reports as text and Markdown: the sections of a recording after its
 * summary: memory errors, leaks, the top sites, temporary allocations,
 * sizes and the timeline.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_diff.h"
#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"
#include "render_text_internal.h"

static const struct msc_rframe *frame_at(const struct msc_report *r, uint32_t stack, unsigned up)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);

	return s && s->attr + up < s->n ? &s->frames[s->attr + up] : NULL;
}

/*
 * The WHERE of row i of a table of n rows: its allocating frame in buf (at
 * most width columns in text).  When another row ends on the same line by
 * another call path, the first caller where the paths part goes into from
 * (else from is ""): Markdown appends it ("leak_aligned leaky.c:82 from run
 * leaky.c:116"), text prints it on a line of its own, so that no two rows
 * read the same.
 */
static const char *where_of(const struct msc_report *r, bool md, const uint32_t *stacks, size_t n,
			    size_t i, char *buf, size_t len, size_t width, char *from, size_t fromlen)
{
	char mine[256], other[256], caller[256];
	unsigned up, depth = 0;
	size_t j;

	from[0] = '\0';
	msc_frame_label(mine, sizeof(mine), frame_at(r, stacks[i], 0));
	for (j = 0; j < n; j++) {
		if (j == i)
			continue;
		msc_frame_label(other, sizeof(other), frame_at(r, stacks[j], 0));
		if (strcmp(mine, other) != 0)
			continue;
		/* The first depth at which this path leaves the twin's. */
		for (up = 1; up < 256; up++) {
			const struct msc_rframe *x = frame_at(r, stacks[i], up);
			const struct msc_rframe *y = frame_at(r, stacks[j], up);

			if (!x && !y)
				break;
			if (strcmp(msc_frame_label(caller, sizeof(caller), x),
				   msc_frame_label(other, sizeof(other), y)) != 0)
				break;
		}
		if (up > depth)
			depth = up;
	}
	if (depth && frame_at(r, stacks[i], depth)) {
		if (md)
			msc_frame_label(from, fromlen, frame_at(r, stacks[i], depth));
		else
			text_fit(from, fromlen, frame_at(r, stacks[i], depth), width > 5 ? width - 5 : width);
	}
	if (md) {
		snprintf(buf, len, "%s%s%s", mine, from[0] ? " from " : "", from);
		return buf;
	}
	return text_fit(buf, len, frame_at(r, stacks[i], 0), width);
}

/* A size in at most 6 columns: "4,096", "64.0K", "10.0M". */
static char *short_size(char *buf, size_t n, uint64_t v)
{
	static const char units[] = "KMGTPE";
	double x = (double)v;
	unsigned u = 0;

	if (v < 10000)
		return msc_fmt_count(buf, n, msc_clamp_i64(v));
	do
		x /= 1024;
	while (x >= 1000 && ++u < sizeof(units) - 2);
	snprintf(buf, n, x < 100 ? "%.1f%c" : "%.0f%c", x, units[u]);
	return buf;
}

/* "48", "32..511", and when exact figures would not fit text's 12-column
 * SIZES column, "288..10.0M" (Markdown has room). */
static char *size_range(char *buf, size_t n, uint64_t lo, uint64_t hi, bool md)
{
	char a[24], b[24];

	if (lo == hi) {
		snprintf(buf, n, "%s", msc_fmt_count(a, sizeof(a), msc_clamp_i64(lo)));
		if (strlen(buf) > 12 && !md)
			short_size(buf, n, lo);
		return buf;
	}
	snprintf(buf, n, "%s..%s", msc_fmt_count(a, sizeof(a), msc_clamp_i64(lo)),
		 msc_fmt_count(b, sizeof(b), msc_clamp_i64(hi)));
	if (strlen(buf) > 12 && !md)
		snprintf(buf, n, "%s..%s", short_size(a, sizeof(a), lo), short_size(b, sizeof(b), hi));
	return buf;
}

static int by_temporary(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;
	uint64_t tx = x->temporary > x->short_lived ? x->temporary : x->short_lived;
	uint64_t ty = y->temporary > y->short_lived ? y->temporary : y->short_lived;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	return render_by_bytes(a, b);
}

/* Sparkline of v[0..n) in `width` cells (UTF-8 block elements). */
static void sparkline(FILE *out, const uint64_t *v, size_t n, unsigned width)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned c;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (n < width)
		width = (unsigned)n;
	for (c = 0; c < width; c++) {
		size_t from = c * n / width, to = (c + 1) * n / width;
		uint64_t m = 0;
		unsigned level;

		for (i = from; i < to && i < n; i++)
			if (v[i] > m)
				m = v[i];
		level = hi > lo ? (unsigned)((m - lo) * 7 / (hi - lo)) : 0;
		fputs(bars[level], out);
	}
}

/* The heading of a section whose figures a sampled recording estimates. */
static void heading_est(struct ctx *c, const char *title)
{
	char buf[256];

	if (!c->r->sample) {
		heading(c, title);
		return;
	}
	snprintf(buf, sizeof(buf), "%s%s", title, c->md ? " (estimated)" : " (ESTIMATED)");
	heading(c, buf);
}

/* What a memory error is, in words: "delete of a 40 B block from new[]". */
static void error_words(char *buf, size_t n, const struct msc_rerror *e)
{
	const char *fn = e->fn ? e->fn : "free";
	char a[32];

	if (!strcmp(e->kind, "invalid-free") && e->has_block)
		snprintf(buf, n, "%s of 0x%" PRIx64 ", %s into a %s block", fn, e->ptr,
			 msc_fmt_exact(a, sizeof(a), e->offset), msc_fmt_exact(a + 16, sizeof(a) - 16, e->size));
	else if (!strcmp(e->kind, "invalid-free"))
		snprintf(buf, n, "%s of 0x%" PRIx64 ", which no allocator returned", fn, e->ptr);
	else if (!strcmp(e->kind, "mismatch"))
		snprintf(buf, n, "%s of a %s block from %s (0x%" PRIx64 ")", fn,
			 msc_fmt_exact(a, sizeof(a), e->size), e->alloc_fn ? e->alloc_fn : "?", e->ptr);
	else if (e->has_block)
		snprintf(buf, n, "%s of a %s block already freed (0x%" PRIx64 ")", fn,
			 msc_fmt_exact(a, sizeof(a), e->size), e->ptr);
	else
		snprintf(buf, n, "%s of 0x%" PRIx64, fn, e->ptr);
}

/*
 * Memory errors, in the order they happened: the bad call's stack, then
 * the block's allocation and its first free where known.
 */
void text_errors(struct ctx *c)
{
	const struct msc_report *r = c->r;
	const char *in = c->md ? "   " : "      ", *sub = c->md ? "   " : "    ";
	char s[256], t[64];
	size_t i, shown = 0;
	uint64_t total = r->end_errors > r->nerrors ? r->end_errors : r->nerrors;

	if (!r->nerrors)
		return;
	snprintf(s, sizeof(s), "Memory errors: %" PRIu64, total);
	heading(c, c->md ? s : "MEMORY ERRORS");
	if (!c->md)
		fprintf(c->out, "  %" PRIu64 " %s, in the order they happened: the stack of the bad call,\n"
				"  then where the block was allocated and first freed\n",
			total, plural(total, "error", "errors"));
	for (i = 0; i < r->nerrors && shown < c->o->top; i++, shown++) {
		const struct msc_rerror *e = &r->errors[i];

		error_words(s, sizeof(s), e);
		if (c->md)
			fprintf(c->out, "%s%zu. **%s**: %s\n\n", shown ? "\n" : "", shown + 1, e->kind, s);
		else
			fprintf(c->out, "\n  %s: %s\n", e->kind, s);
		text_print_stack(c, e->stack, in);
		if (e->alloc_stack) {
			snprintf(t, sizeof(t), "allocated by %s:", e->alloc_fn ? e->alloc_fn : "?");
			fprintf(c->out, c->md ? "\n%s%s\n\n" : "%s%s\n", sub, t);
			text_print_stack(c, e->alloc_stack, in);
		}
		if (e->free_stack) {
			snprintf(t, sizeof(t), "first freed by %s:", e->free_fn ? e->free_fn : "?");
			fprintf(c->out, c->md ? "\n%s%s\n\n" : "%s%s\n", sub, t);
			text_print_stack(c, e->free_stack, in);
		}
	}
	if (total > shown)
		fprintf(c->out, c->md ? "\n_%" PRIu64 " more not shown (--top)._\n" : "\n  (%" PRIu64 " more not shown)\n",
			total - shown);
}

void text_leaks(struct ctx *c)
{
	size_t n, i, shown = 0, more;
	struct render_group *g = render_leak_groups(c->r, &n);
	char a[32], b[32], s[96], w[256], fl[96];
	const char *lost;
	uint64_t total = 0, blocks = 0;

	if (!g)
		return;
	qsort(g, n, sizeof(*g), render_by_leak);
	for (i = 0; i < n; i++)
		if (render_leaked_kind(g[i].kind)) {
			total += g[i].bytes;
			msc_sat_add(&blocks, g[i].count);
		}
	if (attached(c->r)) {
		/* Blocks of an attach are not leaks: what became of them after
		 * the detach is not known. */
		for (i = 0; i < n; i++)
			if (!strcmp(g[i].kind, "unknown")) {
				total += g[i].bytes;
				msc_sat_add(&blocks, g[i].count);
			}
		snprintf(s, sizeof(s), "Live at the end: %s in %s %s (fate unknown)", exact(a, sizeof(a), total),
			 cnt(b, sizeof(b), blocks), blocks_word(blocks));
		heading_est(c, c->md ? s : "LIVE AT THE END (FATE UNKNOWN)");
		fprintf(c->out, c->md ? "Allocated while attached and not freed when recording stopped: not leaks, "
					"only growth to watch. Largest first.\n\n" :
					"  %s in %s %s allocated while attached and not freed when recording\n"
					"  stopped: not leaks, only growth to watch; largest first\n",
			exact(a, sizeof(a), total), cnt(b, sizeof(b), blocks), blocks_word(blocks));
	} else {
		snprintf(s, sizeof(s), "Leaks: %s in %s %s", exact(a, sizeof(a), total), cnt(b, sizeof(b), blocks),
			 blocks_word(blocks));
		heading_est(c, c->md ? s : "LEAKS");
		if (!c->md)
			fprintf(c->out, "  %s in %s %s: definitely lost first, then indirectly, possibly;\n"
					"  largest first within each.  Still reachable blocks are not leaks.\n",
				exact(a, sizeof(a), total), cnt(b, sizeof(b), blocks), blocks_word(blocks));
	}
	for (i = 0; i < n && shown < c->o->top; i++) {
		struct render_group *x = &g[i];

		if (!strcmp(x->kind, "reachable"))
			continue;
		shown++;
		size_range(s, sizeof(s), x->size_lo, x->size_hi, true);	/* not a column */
		lost = !strcmp(x->kind, "unscanned") ? "" : !strcmp(x->kind, "unknown") ? " fate" : " lost";
		if (c->md) {
			fprintf(c->out, "%s%zu. **%s** in %s %s of %s B from `%s` at `%s`, %s%s\n\n",
				shown > 1 ? "\n" : "", shown, exact(a, sizeof(a), x->bytes), cnt(b, sizeof(b), x->count),
				blocks_word(x->count), s, render_fn_label(x, fl, sizeof(fl)),
				msc_frame_label(w, sizeof(w), render_attributed(c->r, x->stack)), x->kind, lost);
			text_print_stack(c, x->stack, "   ");
		} else {
			fprintf(c->out, "\n  %s in %s %s of %s B (%s), %s%s\n", exact(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->count), blocks_word(x->count), s,
				render_fn_label(x, fl, sizeof(fl)), x->kind,
				lost);
			text_print_stack(c, x->stack, "      ");
		}
	}
	for (more = 0; i < n; i++)
		more += strcmp(g[i].kind, "reachable") != 0;
	if (!shown)
		fprintf(c->out, c->md ? "No %s.\n" : "  no %s\n", attached(c->r) ? "live blocks" : "leaks");
	else if (more)
		fprintf(c->out, c->md ? "\n_%zu more leak sites not shown (--top)._\n" : "\n  (%zu more not shown)\n",
			more);
	free(g);
}

/*
 * A table of sites.  Markdown has room for every column; the 80-column
 * text shows the figures the table is sorted by (col: 0 bytes, 1 count,
 * 2 at the peak) and leaves the rest of the line to where.
 */
static void site_table(struct ctx *c, const char *title, struct render_group *g, size_t n,
		       int (*cmp)(const void *, const void *), int col)
{
	char a[32], b[32], d[32], e[32], s[64], w[640], from[256], fl[96];
	uint32_t *stacks;
	size_t i, m;

	qsort(g, n, sizeof(*g), cmp);
	for (m = 0; m < n && m < c->o->top; m++)
		if ((col == 1 && !g[m].allocs) || (col == 2 && !g[m].at_peak))
			break;
	stacks = calloc(m + 1, sizeof(*stacks));
	if (!stacks)
		return;
	for (i = 0; i < m; i++)
		stacks[i] = g[i].stack;
	heading_est(c, title);
	if (c->md)
		fprintf(c->out, "| bytes | allocations | live | at peak | sizes | where |\n"
				"|---:|---:|---:|---:|---:|---|\n");
	else if (col == 2)
		fprintf(c->out, "  %10s %10s %12s  %s\n", "AT PEAK", "LIVE", "SIZES", "WHERE");
	else
		fprintf(c->out, "  %10s %11s %12s  %s\n", "BYTES", "ALLOCS", "SIZES", "WHERE");
	for (i = 0; i < m; i++) {
		struct render_group *x = &g[i];

		size_range(s, sizeof(s), x->size_lo, x->size_hi, c->md);
		where_of(c->r, c->md, stacks, m, i, w, sizeof(w), col == 2 ? 42 : 41, from, sizeof(from));
		if (c->md)
			fprintf(c->out, "| %s | %s | %s | %s | %s | `%s`%s%s%s |\n", sz(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->allocs), sz(d, sizeof(d), x->live_bytes),
				sz(e, sizeof(e), x->at_peak), s, w, x->pool ? " (" : "",
				x->pool ? render_fn_label(x, fl, sizeof(fl)) : "", x->pool ? ")" : "");
		else if (col == 2)
			fprintf(c->out, "  %10s %10s %12s  %s\n", sz(e, sizeof(e), x->at_peak),
				sz(d, sizeof(d), x->live_bytes), s, w);
		else
			fprintf(c->out, "  %10s %11s %12s  %s\n", sz(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->allocs), s, w);
		if (!c->md && from[0])
			fprintf(c->out, "%*s  from %s\n", col == 2 ? 38 : 39, "", from);
		/* Pools apart: one pool's blocks can come from the same code
		 * as another's. */
		if (!c->md && x->pool)
			fprintf(c->out, "%*s  (%s)\n", col == 2 ? 38 : 39, "",
				render_fn_label(x, fl, sizeof(fl)));
	}
	if (!n)
		fprintf(c->out, c->md ? "No allocations.\n" : "  no allocations\n");
	free(stacks);
}

void text_top(struct ctx *c)
{
	size_t n;
	struct render_group *g = render_site_groups(c->r, &n);

	if (!g)
		return;
	site_table(c, c->md ? "Top allocation sites by bytes" : "TOP SITES BY BYTES ALLOCATED", g, n, render_by_bytes, 0);
	site_table(c, c->md ? "Top allocation sites by count" : "TOP SITES BY NUMBER OF ALLOCATIONS", g, n, render_by_allocs, 1);
	site_table(c, c->md ? "What the peak is made of" : "TOP SITES AT THE PEAK", g, n, render_by_peak, 2);
	free(g);
}

void text_temporary(struct ctx *c)
{
	size_t n, i, m;
	struct render_group *g = render_site_groups(c->r, &n);
	uint32_t *stacks = calloc(n + 1, sizeof(*stacks));
	struct render_totals t;
	char a[32], b[32], d[32], w[640], from[256];

	if (!g || !stacks) {
		free(g);
		free(stacks);
		return;
	}
	render_totals_of(c->r, &t);
	qsort(g, n, sizeof(*g), by_temporary);
	heading_est(c, c->md ? "Temporary allocations" : "TEMPORARY ALLOCATIONS");
	fprintf(c->out, c->md ? "%s of %s allocations were freed before their thread allocated again "
				"(temporary), %s within a millisecond (short-lived).\n\n" :
				"  %s of %s allocations were freed before their thread allocated again\n"
				"  (temporary), %s within a millisecond (short-lived).\n",
		cnt(a, sizeof(a), t.temporary), cnt(b, sizeof(b), t.allocs), cnt(d, sizeof(d), t.short_lived));
	if (c->md)
		fprintf(c->out, "| temporary | short-lived | of allocations | where |\n|---:|---:|---:|---|\n");
	else
		fprintf(c->out, "  %11s %11s %11s  %s\n", "TEMPORARY", "SHORTLIVED", "ALLOCS", "WHERE");
	for (m = 0; m < n && m < c->o->top && (g[m].temporary || g[m].short_lived); m++)
		stacks[m] = g[m].stack;
	for (i = 0; i < m; i++) {
		struct render_group *x = &g[i];

		where_of(c->r, c->md, stacks, m, i, w, sizeof(w), 40, from, sizeof(from));
		if (c->md)
			fprintf(c->out, "| %s | %s | %s | `%s` |\n", cnt(a, sizeof(a), x->temporary),
				cnt(b, sizeof(b), x->short_lived), cnt(d, sizeof(d), x->allocs), w);
		else
			fprintf(c->out, "  %11s %11s %11s  %s\n", cnt(a, sizeof(a), x->temporary),
				cnt(b, sizeof(b), x->short_lived), cnt(d, sizeof(d), x->allocs), w);
		if (!c->md && from[0])
			fprintf(c->out, "%*s  from %s\n", 39, "", from);
	}
	free(stacks);
	free(g);
}

void text_sizes(struct ctx *c)
{
	uint64_t hist[65] = { 0 }, bytes[65] = { 0 }, max = 0;
	char a[32], b[32], lo[32], hi[32];
	unsigned k, first = 64, last = 0;
	size_t i;

	for (i = 0; i < c->r->nsites; i++) {
		const struct msc_rsite *s = &c->r->sites[i];

		k = s->size ? 64 - (unsigned)__builtin_clzll(s->size) : 0;
		msc_sat_add(&hist[k], s->allocs);
		msc_sat_add(&bytes[k], s->bytes);
	}
	for (k = 0; k < 65; k++)
		if (hist[k]) {
			if (k < first)
				first = k;
			last = k;
			if (hist[k] > max)
				max = hist[k];
		}
	heading_est(c, c->md ? "Allocation sizes" : "ALLOCATION SIZES");
	if (!max) {
		fprintf(c->out, c->md ? "No allocations.\n" : "  no allocations\n");
		return;
	}
	if (c->md)
		fprintf(c->out, "| size | allocations | bytes | |\n|---:|---:|---:|---|\n");
	for (k = first; k <= last; k++) {
		unsigned bar = (unsigned)(hist[k] * 30 / max), j;

		if (k == 0)
			snprintf(lo, sizeof(lo), "0");
		else
			sz(lo, sizeof(lo), 1ull << (k - 1));
		sz(hi, sizeof(hi), k ? (1ull << k) - 1 : 0);
		if (c->md)
			fprintf(c->out, "| %s..%s | %s | %s | ", lo, hi, cnt(a, sizeof(a), hist[k]),
				sz(b, sizeof(b), bytes[k]));
		else
			fprintf(c->out, "  %9s..%-9s %11s %10s  ", lo, hi, cnt(a, sizeof(a), hist[k]),
				sz(b, sizeof(b), bytes[k]));
		for (j = 0; j < bar; j++)
			fputs("█", c->out);
		if (!bar && hist[k])
			fputs("▏", c->out);
		fputs(c->md ? " |\n" : "\n", c->out);
	}
}

void text_timeline(struct ctx *c)
{
	struct msc_report *r = c->r;
	uint64_t *rss, *heap, rlo = UINT64_MAX, rhi = 0, hlo = UINT64_MAX, hhi = 0, last_ts = 0;
	char a[32], b[32], d[32], e[32];
	size_t i, n = 0;

	heading_est(c, c->md ? "Timeline" : "TIMELINE");
	rss = calloc(r->nsamples + 1, sizeof(*rss));
	heap = calloc(r->nsamples + 1, sizeof(*heap));
	if (!rss || !heap)
		goto out;
	for (i = 0; i < r->nsamples; i++) {
		rss[n] = r->samples[i].rss;
		heap[n] = r->samples[i].heap;
		last_ts = r->samples[i].ts;
		if (rss[n] < rlo)
			rlo = rss[n];
		if (rss[n] > rhi)
			rhi = rss[n];
		if (heap[n] < hlo)
			hlo = heap[n];
		if (heap[n] > hhi)
			hhi = heap[n];
		n++;
	}
	if (!n) {
		fprintf(c->out, c->md ? "No samples (the program ran for less than one sampling interval).\n" :
					"  no samples (the program ran for less than one sampling interval)\n");
		goto out;
	}
	fprintf(c->out, c->md ? "%zu %s over %s.\n\n```\n" : "  %zu %s over %s\n", n,
		plural(n, "sample", "samples"), seconds(a, sizeof(a), last_ts));
	fprintf(c->out, "  rss   ");
	sparkline(c->out, rss, n, 50);
	fprintf(c->out, "  %s..%s\n", sz(a, sizeof(a), rlo), sz(b, sizeof(b), rhi));
	if (r->samples[0].has_heap) {
		fprintf(c->out, "  heap  ");
		sparkline(c->out, heap, n, 50);
		fprintf(c->out, "  %s..%s\n", sz(d, sizeof(d), hlo), sz(e, sizeof(e), hhi));
	}
	if (c->md)
		fprintf(c->out, "```\n");
out:
	free(rss);
	free(heap);
}
