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

/* ---------------------------------------------------------- text and md */

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

void text_print_stack(struct ctx *c, uint32_t id, const char *indent)
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

			fprintf(c->out, "%s%s%s\n", indent, text_fit(buf, sizeof(buf), f, room),
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
	if (s & MSC_SECTION_SUMMARY)
		summary(c);
	if (s & MSC_SECTION_ERRORS)
		text_errors(c);
	if (s & MSC_SECTION_LEAKS)
		text_leaks(c);
	if (s & MSC_SECTION_TOP)
		text_top(c);
	if (s & MSC_SECTION_TEMPORARY)
		text_temporary(c);
	if (s & MSC_SECTION_SIZES)
		text_sizes(c);
	if (s & MSC_SECTION_TIMELINE)
		text_timeline(c);
}


int render_text(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct ctx c = { r, o, out, o->format == MSC_REPORT_MD };

	text_or_md(&c);
	return 0;
}
