/* SPDX-License-Identifier: MIT */
/* Reports as 80-column text and as GitHub Markdown.  See msc_render.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_diff.h"
#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"

/* ------------------------------------------------------------- helpers */


/* A frame's place in at most width columns: the function name gives way
 * before the file and line do. */
static const char *fit(char *buf, size_t n, const struct msc_rframe *f, size_t width)
{
	char loc[256];
	size_t len;

	msc_frame_label(buf, n, f);
	len = strlen(buf);
	if (len <= width || !f || !f->fn)
		return len <= width ? buf : (buf[width] = '\0', buf);
	if (f->file && f->line)
		snprintf(loc, sizeof(loc), " %s:%u", msc_base_name(f->file), f->line);
	else if (f->fn_offset)
		snprintf(loc, sizeof(loc), "+%s (%s)", f->fn_offset, f->obj ? msc_base_name(f->obj) : "?");
	else
		snprintf(loc, sizeof(loc), " (%s)", f->obj ? msc_base_name(f->obj) : "?");
	if (strlen(loc) + 4 > width) {
		buf[width] = '\0';
		return buf;
	}
	snprintf(buf, n, "%.*s..%s", (int)(width - strlen(loc) - 2), f->fn, loc);
	return buf;
}

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
			fit(from, fromlen, frame_at(r, stacks[i], depth), width > 5 ? width - 5 : width);
	}
	if (md) {
		snprintf(buf, len, "%s%s%s", mine, from[0] ? " from " : "", from);
		return buf;
	}
	return fit(buf, len, frame_at(r, stacks[i], 0), width);
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

/* At most width columns of a name whose end says the most (a path): the
 * start gives way, "...x86_64-linux-gnu/libc.so.6". */
static const char *tail_fit(char *buf, size_t n, const char *name, size_t width)
{
	size_t len = name ? strlen(name) : 0;

	if (!name)
		name = "?";
	if (len <= width || width < 4)
		snprintf(buf, n, "%.*s", (int)width, name);
	else
		snprintf(buf, n, "...%s", name + len - (width - 3));
	return buf;
}

/* "PID COMM PATH" in at most width columns: the path gives way from its
 * start, as the file name at its end says the most (tail_fit). */
static const char *path_fit(char *buf, size_t n, int pid, const char *comm, const char *path,
			    size_t width)
{
	size_t len;

	snprintf(buf, n, "%d %s ", pid, comm ? comm : "");
	len = strlen(buf);
	if (len < width)
		tail_fit(buf + len, n - len, path ? path : "", width - len);
	else if (width < n)
		buf[width] = '\0';
	return buf;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static char *sz(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_size(buf, n, msc_clamp_i64(v));
}

static char *cnt(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_count(buf, n, msc_clamp_i64(v));
}

/* Exact bytes, "89,609 B": what leaked is an answer, not an estimate. */
static char *exact(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_exact(buf, n, msc_clamp_i64(v));
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

/* An attach recording: no leaks, blocks live at the end are of unknown fate. */
static bool attached(const struct msc_report *r)
{
	return r->mode && !strcmp(r->mode, "attach");
}

static const char *blocks_word(uint64_t n)
{
	return n == 1 ? "block" : "blocks";
}

static char *seconds(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
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

/* ---------------------------------------------------------- text and md */

struct ctx {
	struct msc_report *r;
	const struct msc_report_opts *o;
	FILE *out;
	bool md;
};

static void heading(struct ctx *c, const char *title)
{
	if (c->md)
		fprintf(c->out, "\n### %s\n\n", title);
	else
		fprintf(c->out, "\n%s\n", title);
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

/* What a figure of a sampled recording's summary says after it. */
static const char *est(const struct ctx *c, char *buf, size_t n, const char *rest)
{
	if (!c->r->sample)
		return rest;
	snprintf(buf, n, "%s%sestimated", rest ? rest : "", rest ? ", " : "");
	return buf;
}

/*
 * A stack, one frame per line, below the C runtime's frames.  Markdown puts
 * it in a code block of its own; past MD_SHOWN frames the rest is folded in
 * a <details> block, so that a long stack does not bury the next leak.
 */
#define MD_SHOWN 6

static void print_stack(struct ctx *c, uint32_t id, const char *indent)
{
	const struct msc_rstack *s = msc_report_stack(c->r, id);
	char buf[512];
	unsigned i, shown = 0, total = 0;

	if (!s) {
		fprintf(c->out, c->md ? "%s```\n%s(no stack)\n%s```\n" : "%s(no stack)\n", indent,
			indent, indent);
		return;
	}
	for (i = 0; i < s->n; i++)
		total += !render_runtime_frame(&s->frames[i]);
	if (c->md)
		fprintf(c->out, "%s```\n", indent);
	for (i = 0; i < s->n; i++) {
		const struct msc_rframe *f = &s->frames[i];

		if (render_runtime_frame(f))
			continue;
		if (c->md) {
			/* Two more frames are not worth a fold. */
			if (shown == MD_SHOWN && total > MD_SHOWN + 2)
				fprintf(c->out, "%s```\n\n%s<details><summary>%u more frames</summary>\n\n%s```\n",
					indent, indent, total - MD_SHOWN, indent);
			fprintf(c->out, "%s%s%s", indent, msc_frame_label(buf, sizeof(buf), f), f->inlined ? " (inlined)" : "");
			if (f->obj && f->file)
				fprintf(c->out, " [%s]", msc_base_name(f->obj));
			fputc('\n', c->out);
			shown++;
			continue;
		} else {
			size_t room = 80 - strlen(indent) - (f->inlined ? 10 : 0);

			fprintf(c->out, "%s%s%s\n", indent, fit(buf, sizeof(buf), f, room),
				f->inlined ? " (inlined)" : "");
		}
		if (++shown >= 24 && i + 1 < s->n) {
			fprintf(c->out, "%s... %u more %s\n", indent, s->n - i - 1,
				plural(s->n - i - 1, "frame", "frames"));
			break;
		}
	}
	if (c->md)
		fprintf(c->out, "%s```\n%s", indent, total > MD_SHOWN + 2 ? "\n" : "");
	if (c->md && total > MD_SHOWN + 2)
		fprintf(c->out, "%s</details>\n", indent);
}

/*
 * One row of a figure table, the same in both outputs: text "  label
 * value  rest" in columns (a label with leading spaces is a sub-row),
 * Markdown "| label | value rest |" (md_label, if given, replaces a label
 * that needs the text's indentation to be understood); strong rows are
 * bold in Markdown.
 */
static void row(struct ctx *c, const char *label, const char *md_label, const char *value,
		const char *rest, bool strong)
{
	const char *em = strong ? "**" : "";

	if (c->md) {
		if (!md_label)
			md_label = label + strspn(label, " ");
		fprintf(c->out, "| %s%s%s | %s%s%s%s%s |\n", em, md_label, em, em, value,
			rest ? " " : "", rest ? rest : "", em);
	} else {
		fprintf(c->out, "  %-17s%14s%s%s\n", label, value, rest ? "  " : "", rest ? rest : "");
	}
}

static void summary(struct ctx *c)
{
	struct msc_report *r = c->r;
	struct render_totals t;
	char a[32], b[32], d[64];
	size_t i;

	render_totals_of(r, &t);
	if (c->md) {
		fprintf(c->out, "## memscope report: `%s`\n\n", r->argv ? r->argv : "?");
		fprintf(c->out, "| | |\n|---|---|\n");
		if (r->pid)
			fprintf(c->out, "| process | %d |\n", r->pid);
		if (r->start)
			fprintf(c->out, "| recorded | %s |\n", r->start);
		if (r->complete)
			fprintf(c->out, "| duration | %s |\n", seconds(a, sizeof(a), r->duration));
		if (r->complete && r->reason)
			fprintf(c->out, "| ended | %s%s |\n", r->reason,
				r->has_status ? (snprintf(d, sizeof(d), " %d", r->status), d) :
				r->signal ? (snprintf(d, sizeof(d), " %d", r->signal), d) : "");
	} else {
		fprintf(c->out, "memscope report: %s", r->argv ? r->argv : "?");
		if (r->pid)
			fprintf(c->out, " (pid %d)", r->pid);
		fputc('\n', c->out);
		if (r->start)
			fprintf(c->out, "recorded %s", r->start);
		if (r->complete)
			fprintf(c->out, ", %s", seconds(a, sizeof(a), r->duration));
		if (r->complete && r->reason) {
			fprintf(c->out, ", %s", r->reason);
			if (r->has_status)
				fprintf(c->out, " %d", r->status);
			else if (r->signal)
				fprintf(c->out, " %d", r->signal);
		}
		fputs("\n\n", c->out);
	}
	if (r->sample) {
		/* Exact counts, from the end record, unless a filter took
		 * sites out: then the sites' estimates are what is left. */
		row(c, "sampled every", NULL, sz(a, sizeof(a), r->sample),
		    "(ms-record --sample: estimates are said so)", false);
		if (r->has_end_totals && !r->nfilters) {
			t.allocs = r->end_allocs;
			t.bytes = r->end_bytes;
			t.frees = r->end_frees;
		}
	}
	snprintf(d, sizeof(d), "(%s)%s", sz(b, sizeof(b), t.bytes),
		 r->sample && !(r->has_end_totals && !r->nfilters) ? ", estimated" : "");
	if (t.from_sample) {
		char at[32];

		snprintf(d, sizeof(d), "(%s) at the last sample, %s", sz(b, sizeof(b), t.bytes),
			 seconds(at, sizeof(at), t.sample_ts));
	}
	row(c, "allocations", NULL, cnt(a, sizeof(a), t.allocs), d, false);
	row(c, "frees", NULL, t.from_sample ? "unknown" : cnt(a, sizeof(a), t.frees),
	    r->sample && !(r->has_end_totals && !r->nfilters) ? "estimated" : NULL, false);
	if (t.mmaps) {
		snprintf(d, sizeof(d), "(%s; not in the allocations)", sz(b, sizeof(b), t.mmap_bytes));
		row(c, "anonymous mmaps", NULL, cnt(a, sizeof(a), t.mmaps), d, false);
	}
	if (t.brks) {
		snprintf(d, sizeof(d), "(%s; not in the allocations)", sz(b, sizeof(b), t.brk_bytes));
		row(c, "brk growth", NULL, cnt(a, sizeof(a), t.brks), d, false);
	}
	if (r->pages.have) {
		/* The page-level view: the heap, what the program mapped
		 * itself, and the whole process. */
		if (r->pages.heap_peak) {
			snprintf(d, sizeof(d), "at %s%s", seconds(b, sizeof(b), r->pages.heap_peak_ts),
				 r->sample ? ", estimated" : "");
			row(c, "peak heap", NULL, sz(a, sizeof(a), r->pages.heap_peak), d, false);
		}
		if (r->pages.mapped_peak) {
			snprintf(d, sizeof(d), "at %s (anonymous mmaps and brk)",
				 seconds(b, sizeof(b), r->pages.mapped_peak_ts));
			row(c, "peak mapped", NULL, sz(a, sizeof(a), r->pages.mapped_peak), d, false);
		}
		if (r->pages.rss_peak)
			row(c, "peak rss", NULL, sz(a, sizeof(a), r->pages.rss_peak),
			    "(the whole process)", false);
	} else if (r->peak) {
		snprintf(d, sizeof(d), "at %s%s", seconds(b, sizeof(b), r->peak_ts),
			 r->sample ? ", estimated" : "");
		row(c, "peak heap", NULL, sz(a, sizeof(a), r->peak), d, false);
	}
	if (r->nerrors || r->end_errors) {
		uint64_t n = r->end_errors > r->nerrors ? r->end_errors : r->nerrors;

		snprintf(b, sizeof(b), "%" PRIu64, n);
		row(c, "memory errors", NULL, b, "(double or invalid frees, mismatches)", true);
	}
	if (t.from_sample) {
		row(c, "leaked", NULL, "unknown", "(the stream ends before its sites and leaks)",
		    true);
	} else if (!attached(r)) {
		snprintf(d, sizeof(d), "in %s %s%s", cnt(b, sizeof(b), t.leaked_blocks),
			 blocks_word(t.leaked_blocks), r->sample ? ", estimated" : "");
		row(c, "leaked", NULL, exact(a, sizeof(a), t.leaked), d, true);
	}
	if (t.definitely || t.indirectly) {
		row(c, "  definitely", "definitely lost", exact(a, sizeof(a), t.definitely), NULL, false);
		row(c, "  indirectly", "indirectly lost", exact(a, sizeof(a), t.indirectly), NULL, false);
	}
	if (t.possibly)
		row(c, "possibly lost", NULL, exact(a, sizeof(a), t.possibly), NULL, false);
	if (!attached(r) && !t.from_sample)
		row(c, "still reachable", NULL, exact(a, sizeof(a), t.reachable), est(c, d, sizeof(d), NULL),
		    false);
	if (t.unscanned)
		row(c, "unscanned", NULL, exact(a, sizeof(a), t.unscanned),
		    est(c, d, sizeof(d), "(no reachability scan)"), false);
	if (t.unknown) {
		snprintf(d, sizeof(d), "in %s %s (fate unknown)%s", cnt(b, sizeof(b), t.unknown_blocks),
			 blocks_word(t.unknown_blocks), r->sample ? ", estimated" : "");
		row(c, "live at the end", NULL, exact(a, sizeof(a), t.unknown), d, false);
	}
	if (r->complete) {
		row(c, "events lost", NULL, cnt(b, sizeof(b), r->lost),
		    r->lost ? "(dropped: the figures above miss them)" : NULL, false);
	}
	if (r->streams > 1)
		fprintf(c->out, c->md ? "\nThe stream holds %u more %s (ms-record --follow): this report is "
					"about pid %d; `ms-filter --pid PID` picks another.\n" :
					"\n  the stream holds %u more %s (ms-record --follow): this report is\n"
					"  about pid %d; ms-filter --pid PID picks another\n",
			r->streams - 1, plural(r->streams - 1, "process", "processes"), r->pid);
	if (!r->complete)
		fprintf(c->out, c->md ? "\n> **The stream was cut short** (no end record): this report covers what it holds.\n" :
					"\n  THE STREAM WAS CUT SHORT (no end record): this report covers what it holds.\n");
	if (render_filtered_count(r)) {
		bool any = false;

		fprintf(c->out, c->md ? "\n**Filtered out**" : "\n  filtered out:");
		for (i = 0; i < r->nfiltered; i++) {
			const struct msc_filtered *f = &r->filtered[i];

			if (!render_filtered_relevant(r, f))
				continue;
			if (f->records) {
				fprintf(c->out, "%s %s %s record%s (%s", any ? "," : "",
					cnt(b, sizeof(b), f->records), f->type, f->records == 1 ? "" : "s",
					!strcmp(f->type, "leak") ? exact(a, sizeof(a), f->bytes) :
								   sz(a, sizeof(a), f->bytes));
				if (f->blocks)
					fprintf(c->out, " in %s block%s", cnt(b, sizeof(b), f->blocks),
						f->blocks == 1 ? "" : "s");
				fputc(')', c->out);
				any = true;
			}
			if (f->trimmed_allocs && !r->from_events) {
				fprintf(c->out, "%s %s transient allocation%s (%s) taken from the %ss kept",
					any ? "," : "", cnt(b, sizeof(b), f->trimmed_allocs),
					f->trimmed_allocs == 1 ? "" : "s", sz(a, sizeof(a), f->trimmed_bytes),
					f->type);
				any = true;
			}
		}
		fprintf(c->out, c->md ? " by `" : "\n    by ");
		for (i = 0; i < r->nfilters; i++)
			fprintf(c->out, "%s%s", i ? " " : "", r->filters[i]);
		fprintf(c->out, c->md ? "`.\n" : "\n");
		if (r->has_end_totals && r->end_allocs != t.allocs)
			fprintf(c->out, c->md ? "The recording held %s allocations (%s) before filtering.\n" :
						"    the recording held %s allocations (%s) before filtering\n",
				cnt(a, sizeof(a), r->end_allocs), sz(b, sizeof(b), r->end_bytes));
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
static void errors(struct ctx *c)
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
		print_stack(c, e->stack, in);
		if (e->alloc_stack) {
			snprintf(t, sizeof(t), "allocated by %s:", e->alloc_fn ? e->alloc_fn : "?");
			fprintf(c->out, c->md ? "\n%s%s\n\n" : "%s%s\n", sub, t);
			print_stack(c, e->alloc_stack, in);
		}
		if (e->free_stack) {
			snprintf(t, sizeof(t), "first freed by %s:", e->free_fn ? e->free_fn : "?");
			fprintf(c->out, c->md ? "\n%s%s\n\n" : "%s%s\n", sub, t);
			print_stack(c, e->free_stack, in);
		}
	}
	if (total > shown)
		fprintf(c->out, c->md ? "\n_%" PRIu64 " more not shown (--top)._\n" : "\n  (%" PRIu64 " more not shown)\n",
			total - shown);
}

static void leaks(struct ctx *c)
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
			print_stack(c, x->stack, "   ");
		} else {
			fprintf(c->out, "\n  %s in %s %s of %s B (%s), %s%s\n", exact(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->count), blocks_word(x->count), s,
				render_fn_label(x, fl, sizeof(fl)), x->kind,
				lost);
			print_stack(c, x->stack, "      ");
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

static void top(struct ctx *c)
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

static void temporary(struct ctx *c)
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

static void sizes(struct ctx *c)
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

static void timeline(struct ctx *c)
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

/* One figure of a delta: bytes, or a count for counted metrics. */
static char *figure(char *buf, size_t n, const char *metric, int64_t v, bool sign)
{
	char t[32];

	if (metric && msc_metric_is_count(metric))
		msc_fmt_count(t, sizeof(t), v);
	else
		msc_fmt_size(t, sizeof(t), v);
	snprintf(buf, n, "%s%s", sign && v > 0 ? "+" : "", t);
	return buf;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int cmp_change(const void *a, const void *b)
{
	const struct msc_rdelta *x = *(const struct msc_rdelta *const *)a;
	const struct msc_rdelta *y = *(const struct msc_rdelta *const *)b;

	return x->change != y->change ? (x->change > y->change ? -1 : 1) : 0;
}

struct dgroup {
	const char *key, *metric;
	size_t first;			/* appearance, for ties */
	int rank, mrank;
};

static int key_rank(const char *key)
{
	static const char *const order[] = { "process", "mapping", "leak", "site" };
	unsigned i;

	for (i = 0; key && i < ARRAY_SIZE(order); i++)
		if (!strcmp(order[i], key))
			return (int)i;
	return (int)ARRAY_SIZE(order);
}

static int cmp_dgroup(const void *a, const void *b)
{
	const struct dgroup *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->mrank != y->mrank)
		return x->mrank - y->mrank;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The totals of the programs of two recordings: one table, all metrics. */
static void program_table(struct ctx *c, const struct dgroup *grp, size_t ngrp)
{
	struct msc_report *r = c->r;
	char a[40], b[40], d[40], w[64];
	size_t i, k;

	heading(c, c->md ? "Program totals" : "PROGRAM TOTALS");
	if (c->md)
		fprintf(c->out, "| program | metric | before | after | change |\n|---|---|---:|---:|---:|\n");
	for (k = 0; k < ngrp; k++) {
		if (grp[k].rank != 0)
			continue;
		for (i = 0; i < r->ndeltas; i++) {
			const struct msc_rdelta *y = &r->deltas[i];

			if (y->pid || !same(y->key, grp[k].key) || !same(y->metric, grp[k].metric))
				continue;
			figure(a, sizeof(a), y->metric, y->before, false);
			figure(b, sizeof(b), y->metric, y->after, false);
			figure(d, sizeof(d), y->metric, y->change, true);
			fprintf(c->out, c->md ? "| `%s` | %s | %s | %s | %s |\n" : "  %-16s %-14s %11s -> %-11s %11s\n",
				c->md ? (y->comm ? y->comm : "?") : tail_fit(w, sizeof(w), y->comm, 16), y->metric ? y->metric : "?", a, b, d);
		}
	}
}

/*
 * The deltas of ms-diff, grouped by what changed (programs or processes,
 * mappings, leaks, sites) and by metric in the order ms-diff compared
 * them, largest growth first; sites and leaks with their stacks.
 */
static void deltas(struct ctx *c)
{
	struct msc_report *r = c->r;
	const struct msc_rdelta **g = calloc(r->ndeltas + 1, sizeof(*g));
	struct dgroup *grp = calloc(r->ndeltas + 1, sizeof(*grp));
	char a[40], b[40], d[40], what[512], title[160];
	size_t i, j, k, n, ngrp = 0;
	bool programs = false;

	if (!g || !grp)
		goto out;
	for (i = 0; i < r->ndeltas; i++) {
		const struct msc_rdelta *x = &r->deltas[i];

		for (k = 0; k < ngrp; k++)
			if (same(grp[k].key, x->key) && same(grp[k].metric, x->metric))
				break;
		if (k < ngrp)
			continue;
		grp[ngrp].key = x->key;
		grp[ngrp].metric = x->metric;
		grp[ngrp].first = i;
		grp[ngrp].rank = key_rank(x->key);
		grp[ngrp].mrank = (int)r->ndiff_metrics;
		for (j = 0; j < r->ndiff_metrics; j++)
			if (same(r->diff_metrics[j], x->metric))
				grp[ngrp].mrank = (int)j;
		ngrp++;
		/* Recordings compare programs (no pid), not processes. */
		programs |= x->key && !strcmp(x->key, "process") && !x->pid;
	}
	qsort(grp, ngrp, sizeof(*grp), cmp_dgroup);
	if (programs)
		program_table(c, grp, ngrp);
	for (k = 0; k < ngrp; k++) {
		const char *key = grp[k].key ? grp[k].key : "?";
		bool stacked = !strcmp(key, "site") || !strcmp(key, "leak");

		if (programs && grp[k].rank == 0)
			continue;
		for (n = 0, i = 0; i < r->ndeltas; i++)
			if (same(r->deltas[i].key, grp[k].key) && same(r->deltas[i].metric, grp[k].metric))
				g[n++] = &r->deltas[i];
		qsort(g, n, sizeof(*g), cmp_change);
		snprintf(title, sizeof(title), "%s: %s",
			 grp[k].rank == 0 ? "Processes" : grp[k].rank == 1 ? "Mappings" :
			 grp[k].rank == 2 ? "Leaks" : grp[k].rank == 3 ? "Sites" : key,
			 grp[k].metric ? grp[k].metric : "?");
		if (!c->md)
			for (j = 0; title[j]; j++)
				title[j] = (char)(title[j] >= 'a' && title[j] <= 'z' ? title[j] - 32 : title[j]);
		heading(c, title);
		if (c->md && !stacked)
			fprintf(c->out, "| change | before | after | what |\n|---:|---:|---:|---|\n");
		for (j = 0; j < n && j < c->o->top; j++) {
			const struct msc_rdelta *y = g[j];
			const char *st = y->status && strcmp(y->status, "changed") ? y->status : NULL;
			char tag[24] = "";
			/* Text rows end at column 80: what gives way, the end of
			 * a mapping's path (the file name) and a frame's file and
			 * line last. */
			size_t room = c->md ? sizeof(what) - 1 : 38;

			if (st)
				snprintf(tag, sizeof(tag), " (%s)", st);
			room = room > strlen(tag) + 12 ? room - strlen(tag) : 12;
			if (stacked)
				fit(what, sizeof(what), render_attributed(r, y->stack), room);
			else if (!strcmp(key, "mapping"))
				path_fit(what, sizeof(what), y->pid, y->comm, y->name, room);
			else
				snprintf(what, sizeof(what), "%d %.*s", y->pid, (int)room, y->comm ? y->comm : "");
			figure(a, sizeof(a), y->metric, y->before, false);
			figure(b, sizeof(b), y->metric, y->after, false);
			figure(d, sizeof(d), y->metric, y->change, true);
			if (c->md && stacked) {
				fprintf(c->out, "%s%zu. **%s** (%s → %s%s%s) at `%s`\n\n", j ? "\n" : "",
					j + 1, d, a, b, st ? ", " : "", st ? st : "", what);
				print_stack(c, y->stack, "   ");
			} else if (c->md) {
				fprintf(c->out, "| %s | %s | %s | `%s`%s |\n", d, a, b, what, tag);
			} else {
				fprintf(c->out, "  %11s %11s -> %-11s %s%s\n", d, a, b, what, tag);
				if (stacked)
					print_stack(c, y->stack, "      ");
			}
		}
		if (n > c->o->top)
			fprintf(c->out, c->md ? "\n_%zu more not shown (--top)._\n" : "  (%zu more not shown)\n",
				n - c->o->top);
	}
	if (!r->ndeltas)
		fprintf(c->out, c->md ? "\nNo changes.\n" : "\n  no changes\n");
out:
	free(g);
	free(grp);
}

static void processes(struct ctx *c)
{
	struct msc_report *r = c->r;
	char a[32], b[32], d[32], w[64];
	size_t i;

	heading(c, c->md ? "Processes" : "PROCESSES");
	if (c->md)
		fprintf(c->out, "| pid | process | rss | pss | swap |\n|---:|---|---:|---:|---:|\n");
	else
		fprintf(c->out, "  %7s %-24s %11s %11s %11s\n", "PID", "PROCESS", "RSS", "PSS", "SWAP");
	for (i = 0; i < r->nprocs && i < c->o->top; i++) {
		const struct msc_rproc *p = &r->procs[i];

		fprintf(c->out, c->md ? "| %d | %s | %s | %s | %s |\n" : "  %7d %-24s %11s %11s %11s\n", p->pid,
			c->md ? (p->comm ? p->comm : "?") : tail_fit(w, sizeof(w), p->comm, 24), sz(a, sizeof(a), p->rss), p->has_pss ? sz(b, sizeof(b), p->pss) : "-",
			sz(d, sizeof(d), p->swap));
	}
	if (r->nmaps) {
		heading(c, c->md ? "Mappings" : "MAPPINGS");
		if (c->md)
			fprintf(c->out, "| pid | mapping | kind | rss | pss | swap |\n|---:|---|---|---:|---:|---:|\n");
		else
			fprintf(c->out, "  %7s %-32s %-7s %10s %10s %10s\n", "PID", "MAPPING", "KIND", "RSS", "PSS",
				"SWAP");
		for (i = 0; i < r->nmaps && i < c->o->top; i++) {
			const struct msc_rmapping *m = &r->maps[i];

			fprintf(c->out, c->md ? "| %d | `%s` | %s | %s | %s | %s |\n" :
						"  %7d %-32s %-7s %10s %10s %10s\n",
				m->pid, c->md ? (m->name ? m->name : "?") : tail_fit(w, sizeof(w), m->name, 32), m->kind ? m->kind : "", sz(a, sizeof(a), m->rss),
				sz(b, sizeof(b), m->pss), sz(d, sizeof(d), m->swap));
		}
	}
}

/* A mapping group of a --poll recording: its rss first and last seen. */
struct mgrowth {
	const char *name, *kind;
	uint64_t first, last;
};

static int cmp_mgrowth(const void *a, const void *b)
{
	const struct mgrowth *x = a, *y = b;
	int64_t dx = (int64_t)(x->last - x->first), dy = (int64_t)(y->last - y->first);

	return dx != dy ? (dx > dy ? -1 : 1) : strcmp(x->name, y->name);
}

static void poll_row(struct ctx *c, const char *what, uint64_t first, uint64_t last)
{
	char a[32], b[32], d[32];

	sz(a, sizeof(a), first);
	sz(b, sizeof(b), last);
	figure(d, sizeof(d), "rss", (int64_t)(last - first), true);
	if (c->md)
		fprintf(c->out, "| %s | %s | %s | %s |\n", what, a, b, d);
	else
		fprintf(c->out, "  %-5s %12s -> %-12s %12s\n", what, a, b, d);
}

/* A --poll recording: rss over time and the growth of each mapping group. */
static void poll_view(struct ctx *c)
{
	struct msc_report *r = c->r;
	const struct msc_rsample *s0 = r->nsamples ? &r->samples[0] : NULL;
	const struct msc_rsample *s1 = r->nsamples ? &r->samples[r->nsamples - 1] : NULL;
	struct mgrowth *g = calloc(r->nmaps + 1, sizeof(*g));
	struct msc_strmap idx;
	uint64_t peak = 0;
	char a[32], b[32], d[32], e[32], w[64];
	size_t i, n = 0, shown = 0;

	if (!g || msc_strmap_init(&idx, r->nmaps + 1)) {
		free(g);
		return;
	}
	for (i = 0; i < r->nsamples; i++)
		if (r->samples[i].rss > peak)
			peak = r->samples[i].rss;
	fprintf(c->out, c->md ? "## memscope poll report: `%s` (pid %d)\n\n" : "memscope poll report: %s (pid %d)\n",
		r->argv ? r->argv : "?", r->pid);
	if (r->start)
		fprintf(c->out, c->md ? "Polled from %s" : "polled from %s", r->start);
	if (r->complete)
		fprintf(c->out, ", %s, %s", seconds(a, sizeof(a), r->duration),
			r->reason && !strcmp(r->reason, "exit") ? "until the process ended" : "then stopped");
	fprintf(c->out, c->md ? ".\n\n| | first | last | change |\n|---|---:|---:|---:|\n" : "\n\n");
	if (s0) {
		poll_row(c, "rss", s0->rss, s1->rss);
		poll_row(c, "pss", s0->pss, s1->pss);
		poll_row(c, "swap", s0->swap, s1->swap);
		fprintf(c->out, c->md ? "\nPeak rss %s; %zu %s.\n" : "  peak rss %s; %zu %s\n",
			sz(e, sizeof(e), peak), r->nsamples, plural(r->nsamples, "sample", "samples"));
	}
	if (!r->complete)
		fprintf(c->out, c->md ? "\n> **The stream was cut short** (no end record).\n" :
					"\n  THE STREAM WAS CUT SHORT (no end record)\n");
	if (c->o->sections & MSC_SECTION_TIMELINE)
		timeline(c);

	for (i = 0; i < r->nmaps; i++) {
		const struct msc_rmapping *m = &r->maps[i];
		uintptr_t at;

		if (!m->name || (r->pid && m->pid != r->pid))
			continue;
		at = (uintptr_t)msc_strmap_get(&idx, m->name);
		if (!at) {
			g[n] = (struct mgrowth){ m->name, m->kind ? m->kind : "", m->rss, m->rss };
			if (msc_strmap_put(&idx, m->name, (void *)(uintptr_t)++n))
				break;
			continue;
		}
		g[at - 1].last = m->rss;
	}
	qsort(g, n, sizeof(*g), cmp_mgrowth);
	heading(c, c->md ? "Growth by mapping" : "GROWTH BY MAPPING");
	if (c->md)
		fprintf(c->out, "| mapping | kind | first rss | last rss | change |\n|---|---|---:|---:|---:|\n");
	else
		fprintf(c->out, "  %-34s %-7s %11s %11s %11s\n", "MAPPING", "KIND", "FIRST RSS", "LAST RSS",
			"CHANGE");
	for (i = 0; i < n && shown < c->o->top; i++) {
		if (g[i].last == g[i].first)
			continue;
		shown++;
		fprintf(c->out, c->md ? "| `%s` | %s | %s | %s | %s |\n" : "  %-34s %-7s %11s %11s %11s\n",
			c->md ? g[i].name : tail_fit(w, sizeof(w), g[i].name, 34), g[i].kind, sz(a, sizeof(a), g[i].first), sz(b, sizeof(b), g[i].last),
			figure(d, sizeof(d), "rss", (int64_t)(g[i].last - g[i].first), true));
	}
	if (!shown)
		fprintf(c->out, c->md ? "No mapping changed.\n" : "  no mapping changed\n");
	msc_strmap_release(&idx);
	free(g);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct msc_rproc *x = a, *y = b;

	return x->rss != y->rss ? (x->rss > y->rss ? -1 : 1) : x->pid - y->pid;
}

static int cmp_map(const void *a, const void *b)
{
	const struct msc_rmapping *x = a, *y = b;

	return x->rss != y->rss ? (x->rss > y->rss ? -1 : 1) : 0;
}

/* What a diff compared, when, and its total. */
static void growth_header(struct ctx *c)
{
	struct msc_report *r = c->r;
	char a[40], b[40], d[40], later[40] = "", pct[32] = "";
	int64_t change = msc_sat_sub_i64(r->diff_after, r->diff_before);

	fprintf(c->out, c->md ? "## memscope growth report\n" : "memscope growth report\n");
	if (r->complete && r->diff_has_elapsed)
		snprintf(later, sizeof(later), " (%.1f s later)", (double)r->diff_elapsed / 1e9);
	if (r->before && r->after)
		fprintf(c->out, c->md ? "\n`%s` → `%s`%s\n" : "%s -> %s%s\n", r->before, r->after, later);
	if (!r->complete || !r->diff_metric)
		return;
	if (r->diff_before)
		snprintf(pct, sizeof(pct), ", %+.1f%%", 100.0 * (double)change / (double)r->diff_before);
	fprintf(c->out, c->md ? "\n**Total %s: %s → %s (%s%s)**\n" : "total %s: %s -> %s (%s%s)\n",
		r->diff_metric, figure(a, sizeof(a), r->diff_metric, r->diff_before, false),
		figure(b, sizeof(b), r->diff_metric, r->diff_after, false),
		figure(d, sizeof(d), r->diff_metric, change, true), pct);
	if (r->diff_paired)
		fprintf(c->out, c->md ? "\nCompared across names: %s.\n" : "compared across names: %s\n",
			r->diff_paired);
	if (r->diff_new || r->diff_gone)
		fprintf(c->out, c->md ? "\n%" PRIu64 " new and %" PRIu64 " exited processes.\n" :
					"%" PRIu64 " new and %" PRIu64 " exited processes\n",
			r->diff_new, r->diff_gone);
}

static void text_or_md(struct ctx *c)
{
	struct msc_report *r = c->r;
	unsigned s = c->o->sections;

	/* A diff or a snapshot: its own report. */
	if (r->ndeltas || (r->mode && !strcmp(r->mode, "diff"))) {
		growth_header(c);
		deltas(c);
		return;
	}
	if (r->mode && !strcmp(r->mode, "poll")) {
		poll_view(c);
		return;
	}
	if (r->nprocs && !r->nsites && !r->nleaks) {
		qsort(r->procs, r->nprocs, sizeof(*r->procs), cmp_proc);
		if (r->nmaps)
			qsort(r->maps, r->nmaps, sizeof(*r->maps), cmp_map);
		fprintf(c->out, c->md ? "## memscope snapshot\n" : "memscope snapshot\n");
		processes(c);
		return;
	}
	if (s & MSC_SECTION_SUMMARY)
		summary(c);
	if (s & MSC_SECTION_ERRORS)
		errors(c);
	if (s & MSC_SECTION_LEAKS)
		leaks(c);
	if (s & MSC_SECTION_TOP)
		top(c);
	if (s & MSC_SECTION_TEMPORARY)
		temporary(c);
	if (s & MSC_SECTION_SIZES)
		sizes(c);
	if (s & MSC_SECTION_TIMELINE)
		timeline(c);
}


int render_text(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct ctx c = { r, o, out, o->format == MSC_REPORT_MD };

	text_or_md(&c);
	return 0;
}
