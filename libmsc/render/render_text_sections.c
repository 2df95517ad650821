/* SPDX-License-Identifier: MIT */
/*
 * Reports as text and Markdown: the sections of a recording after its
 * summary and apart from its sites' tables (render_text_sites.c): memory
 * errors, leaks, sizes and the timeline.
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

/* The leaks split by the mark before their blocks' allocation. */
static void leaks_by_mark(struct ctx *c)
{
	struct render_mark_sum m[16];
	size_t n = render_leaks_by_mark(c->r, m, 16), i;
	char a[32], b[32], label[64];

	if (!n)
		return;
	fputs(c->md ? "\nBy the mark before their allocation:\n\n| allocated | leaked |\n|---|---:|\n" :
		      "  By the mark before their allocation:\n", c->out);
	for (i = 0; i < n; i++) {
		snprintf(label, sizeof(label), m[i].name ? "after %s" : "before the first mark", m[i].name);
		fprintf(c->out, c->md ? "| %s | %s in %s %s |\n" : "    %-26s %10s in %s %s\n", label,
			exact(a, sizeof(a), m[i].bytes), cnt(b, sizeof(b), m[i].blocks), blocks_word(m[i].blocks));
	}
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
		leaks_by_mark(c);
	}
	for (i = 0; i < n && shown < c->o->top; i++) {
		struct render_group *x = &g[i];

		if (!strcmp(x->kind, "reachable"))
			continue;
		shown++;
		text_size_range(s, sizeof(s), x->size_lo, x->size_hi, true);	/* not a column */
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

/* An ms-record --follow recording: every process image it holds, with
 * its own figures; the report's sections are about the one marked. */
void text_images(struct ctx *c)
{
	const struct msc_report *r = c->r;
	const struct msc_rimage *mine = NULL;
	char a[32], b[32], d[32], e[48], pp[16];
	size_t i;

	if (r->nimages < 2)
		return;
	for (i = 0; i < r->nimages; i++)
		if (r->images[i].pid == r->pid)
			mine = &r->images[i];	/* its last image is the report's */
	heading(c, c->md ? "Processes" : "PROCESSES");
	fprintf(c->out, c->md ? "%zu process images (ms-record --follow); the sections below are about "
				"the one marked, `ms-filter --pid PID` picks another.\n\n"
				"| pid | parent | ended | allocations | peak heap | leaked | program |\n"
				"|---:|---:|---|---:|---:|---:|---|\n" :
				"  %zu process images (ms-record --follow); the sections below are about\n"
				"  the one marked *, ms-filter --pid PID picks another\n"
				"        PID   PARENT  ENDED         ALLOCS  PEAK HEAP      LEAKED  PROGRAM\n",
		r->nimages);
	for (i = 0; i < r->nimages; i++) {
		const struct msc_rimage *im = &r->images[i];
		uint64_t leaked = 0, peak = im->pages.heap_peak ? im->pages.heap_peak : im->peak;
		unsigned k;

		for (k = 0; k < MSC_LEAK_KINDS; k++)
			if (msc_leak_kind_leaked(k))
				leaked += im->kind_bytes[k];
		if (!im->complete)
			snprintf(e, sizeof(e), "running");
		else if (im->has_status)
			snprintf(e, sizeof(e), "%s %d", im->reason ? im->reason : "exit", im->status);
		else if (im->signal)
			snprintf(e, sizeof(e), "signal %d", im->signal);
		else
			snprintf(e, sizeof(e), "%s", im->reason ? im->reason : "?");
		snprintf(pp, sizeof(pp), im->ppid ? "%d" : "-", im->ppid);
		if (!im->complete || (im->reason && !strcmp(im->reason, "exec")))
			snprintf(d, sizeof(d), "-");
		else
			exact(d, sizeof(d), leaked);
		if (c->md)
			fprintf(c->out, "| %s%d%s | %s | %s | %s | %s | %s | `%s` |\n", im == mine ? "**" : "",
				im->pid, im == mine ? "**" : "", pp, e, cnt(a, sizeof(a), im->allocs),
				sz(b, sizeof(b), peak), d, im->program ? im->program : "?");
		else
			fprintf(c->out, "  %c%8d %8s  %-10s %9s %10s %11s  %s\n", im == mine ? '*' : ' ', im->pid, pp, e,
				cnt(a, sizeof(a), im->allocs), sz(b, sizeof(b), peak), d,
				im->program ? im->program : "?");
	}
}
