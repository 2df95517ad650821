/* SPDX-License-Identifier: MIT */
/*
 * Reports as 80-column text and as GitHub Markdown (see msc_render.h):
 * which report a stream gets, the summary, and the stacks and rows every
 * section prints with.  The recording's other sections are in
 * render_text_sections.c, diffs, snapshots and --poll recordings in
 * render_text_diff.c.
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

/* ------------------------------------------------------------- helpers */

/* A frame's place in at most width columns: the function name gives way
 * before the file and line do. */
const char *text_fit(char *buf, size_t n, const struct msc_rframe *f, size_t width)
{
	char loc[256];
	size_t len;

	msc_frame_label(buf, n, f);
	len = strlen(buf);
	if (!width || len <= width)
		return buf;
	if (!f || !f->fn) {
		buf[width < n ? width : n - 1] = '\0';
		return buf;
	}
	/* Without its library first: the function says more. */
	if (f->fn_offset && !(f->file && f->line) && strlen(f->fn) + strlen(f->fn_offset) + 1 <= width) {
		snprintf(buf, n, "%s+%s", f->fn, f->fn_offset);
		return buf;
	}
	if (f->file && f->line)
		snprintf(loc, sizeof(loc), " %s:%u", msc_base_name(f->file), f->line);
	else if (f->fn_offset)
		snprintf(loc, sizeof(loc), "+%s", f->fn_offset);
	else
		loc[0] = '\0';
	if (strlen(loc) + 4 > width) {
		buf[width < n ? width : n - 1] = '\0';
		return buf;
	}
	snprintf(buf, n, "%.*s..%s", (int)(width - strlen(loc) - 2), f->fn, loc);
	return buf;
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

char *text_size_range(char *buf, size_t n, uint64_t lo, uint64_t hi, bool md)
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

/* ---------------------------------------------------------- text and md */

/*
 * A stack, one frame per line, below the C runtime's frames; frames the
 * allocation is not attributed to (the allocator's wrappers) say so, and
 * a run of frames repeating (recursion, an interpreter's eval loop) is
 * printed once with how many times it repeats.  Markdown puts the stack in
 * a code block of its own; past MD_SHOWN lines the rest is folded in a
 * <details> block, so that a long stack does not bury the next leak.
 */
#define MD_SHOWN 6
/* One line of a stack: text fits it in the report's width. */
static void stack_line(struct ctx *c, const char *indent, const struct msc_rframe *f, bool wrapper)
{
	const char *tag = f->inlined ? (wrapper ? " (inlined, wrapper)" : " (inlined)") :
				       wrapper ? " (wrapper)" : "";
	char buf[1024];

	if (c->md) {
		fprintf(c->out, "%s%s%s", indent, msc_frame_label(buf, sizeof(buf), f), tag);
		if (f->obj && f->file)
			fprintf(c->out, " [%s]", msc_base_name(f->obj));
	} else {
		size_t used = strlen(indent) + strlen(tag);

		fprintf(c->out, "%s%s%s", indent, text_fit(buf, sizeof(buf), f, text_room(c, used, 12)), tag);
	}
	fputc('\n', c->out);
}

void text_print_stack(struct ctx *c, uint32_t id, const char *indent)
{
	struct render_sline *l;
	long n = render_stack_lines(c->r, id, &l), i, frames = 0, shown = 0;
	bool folded = false;

	if (n <= 0) {
		fprintf(c->out, c->md ? "%s```\n%s(no stack)\n%s```\n" : "%s(no stack)\n", indent,
			indent, indent);
		return;
	}
	for (i = 0; i < n; i++)
		frames += l[i].f ? 1 : (long)(l[i].period * l[i].times);
	if (c->md)
		fprintf(c->out, "%s```\n", indent);
	for (i = 0; i < n; i++) {
		/* Two more lines are not worth a fold. */
		if (c->md && !folded && i >= MD_SHOWN && n > i + 2 && l[i].f && !l[i].cont) {
			fprintf(c->out, "%s```\n\n%s<details><summary>%ld more %s</summary>\n\n%s```\n",
				indent, indent, frames - shown, plural((unsigned long)(frames - shown), "frame", "frames"),
				indent);
			folded = true;
		}
		if (l[i].f) {
			stack_line(c, indent, l[i].f, l[i].wrapper);
			shown++;
		} else if (l[i].period == 1) {
			fprintf(c->out, "%s  ... the frame above %u more %s\n", indent, l[i].times,
				plural(l[i].times, "time", "times"));
			shown += l[i].times;
		} else {
			fprintf(c->out, "%s  ... the %u frames above %u more %s\n", indent, l[i].period, l[i].times,
				plural(l[i].times, "time", "times"));
			shown += (long)(l[i].period * l[i].times);
		}
	}
	if (c->md)
		fprintf(c->out, "%s```\n%s", indent, folded ? "\n" : "");
	if (folded)
		fprintf(c->out, "%s</details>\n", indent);
	free(l);
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
	struct render_figure fig[RENDER_FIGURES_MAX];
	struct render_totals t;
	char a[32], b[32], d[64];
	size_t i, n;

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
	n = render_figures(r, fig);
	for (i = 0; i < n; i++)
		row(c, fig[i].label, fig[i].md_label, fig[i].value, fig[i].rest[0] ? fig[i].rest : NULL,
		    fig[i].strong);
	if (r->nwrappers) {
		fprintf(c->out, c->md ? "\n**Allocation wrappers found** (their callers are the sites; "
					"`--no-auto-wrappers` keeps them): " :
					"\n  allocation wrappers found (their callers are the sites;\n"
					"  --no-auto-wrappers keeps them):\n");
		for (i = 0; i < r->nwrappers && i < 8; i++)
			if (c->md)
				fprintf(c->out, "%s`%s`", i ? ", " : "", r->wrappers[i]);
			else
				fprintf(c->out, "    %s\n", r->wrappers[i]);
		if (r->nwrappers > 8)
			fprintf(c->out, c->md ? " and %u more" : "    and %u more\n", r->nwrappers - 8);
		if (c->md)
			fputs(".\n", c->out);
	}
	if (r->streams > 1 && r->nimages < 2)
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

static void text_or_md(struct ctx *c)
{
	struct msc_report *r = c->r;
	unsigned s = c->o->sections;

	/* A diff or a snapshot: its own report. */
	if (r->ndeltas || (r->mode && !strcmp(r->mode, "diff"))) {
		text_growth_header(c);
		text_deltas(c);
		return;
	}
	if (r->mode && !strcmp(r->mode, "poll")) {
		text_poll_view(c);
		return;
	}
	if (r->nprocs && !r->nsites && !r->nleaks) {
		qsort(r->procs, r->nprocs, sizeof(*r->procs), cmp_proc);
		if (r->nmaps)
			qsort(r->maps, r->nmaps, sizeof(*r->maps), cmp_map);
		fprintf(c->out, c->md ? "## memscope snapshot\n" : "memscope snapshot\n");
		text_processes(c);
		return;
	}
	if (s & MSC_SECTION_SUMMARY) {
		summary(c);
		text_images(c);
	}
	if (s & MSC_SECTION_ERRORS)
		text_errors(c);
	if (s & MSC_SECTION_LEAKS)
		text_leaks(c);
	if (s & MSC_SECTION_TOP)
		text_top(c);
	if (s & MSC_SECTION_TEMPORARY)
		text_temporary(c);
	text_site_stacks(c);
	if (s & MSC_SECTION_SIZES)
		text_sizes(c);
	if (s & MSC_SECTION_TIMELINE)
		text_timeline(c);
}


int render_text(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct ctx c = { r, o, out, o->format == MSC_REPORT_MD,
			 o->width == MSC_REPORT_WIDE ? 0 : o->width ? o->width : 80, NULL };

	text_or_md(&c);
	text_sites_release(&c);
	return 0;
}
