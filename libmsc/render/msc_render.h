/* SPDX-License-Identifier: MIT */
/*
 * msc_render: what the report renderers share (internal to libmsc).
 *
 * msc_report_render() (render.c) hands a loaded report to one renderer per
 * output: render_text.c (80-column text and GitHub Markdown, the same
 * sections; its files share render_text_internal.h), render_json.c (one
 * JSON document), render_flame.c (flamegraph.pl's folded stacks and a
 * self-contained SVG flame graph), render_html.c (one self-contained
 * page: summary, heap over time, leaks and the flame graph; its charts in
 * render_html_chart.c, its time view in render_html_time.c, what they
 * share in render_html_internal.h),
 * render_pprof.c (a gzipped pprof profile, its protobuf encoding in
 * pprof.c).
 * They share the views of the model defined in render_model.c: sites and
 * leaks grouped by stack, the orders they are listed in, the totals, and
 * what a filter dropped.  The renderers use render_model.c, never render.c:
 * the dispatch is above them.
 */
#ifndef MSC_RENDER_H
#define MSC_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "msc_format.h"
#include "msc_report.h"
#include "msc_util.h"

/* A size for people ("64.0 MiB") and a time since the start ("1.025 s"),
 * as every renderer writes them; buf is returned. */
static inline char *sz(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_size(buf, n, msc_clamp_i64(v));
}

static inline char *seconds(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
}

/* Stack id order, for ties: the same report from the same data. */
struct render_group {
	uint32_t stack;
	const char *fn;
	const char *pool;		/* memscope.h's pool of its first site, or NULL */
	const char *kind;		/* leaks */
	uint64_t bytes, allocs, frees, live_bytes, at_peak, temporary, short_lived, count;
	uint64_t size_lo, size_hi;
	uint64_t live_at;		/* ms-report --live-at: its bytes then (0 when
					 * not among the timeline's top stacks) */
};

/* Short-lived: freed within 1 ms, the buckets below msc_age_bucket(1 ms). */
#define SHORT_LIVED_BUCKETS msc_age_bucket(1000000)

/* Totals of what the stream holds for the main process. */
struct render_totals {
	uint64_t allocs, frees, bytes, live_bytes;
	uint64_t leaked, leaked_blocks, definitely, indirectly, possibly, reachable, unscanned;
	uint64_t unknown, unknown_blocks;	/* live at the end of an attach: fate unknown */
	uint64_t temporary, short_lived;
	uint64_t mmaps, mmap_bytes;		/* anonymous mappings, not in allocs */
	uint64_t brks, brk_bytes;		/* the program's brk growth, nor these */
	/* A stream cut before its sites (the recorder was killed): allocs,
	 * bytes and live_bytes are the last sample's, at sample_ts, and
	 * what leaked is not known. */
	bool from_sample;
	uint64_t sample_ts;
};

/* Sites grouped by stack (all sizes of one call path together); NULL on
 * allocation failure.  The caller frees the array. */
struct render_group *render_site_groups(const struct msc_report *r, size_t *n);
/* Leaks grouped by (stack, kind). */
struct render_group *render_leak_groups(const struct msc_report *r, size_t *n);
/* Whether a leak kind counts as leaked (definitely, indirectly). */
bool render_leaked_kind(const char *kind);
/* The frame a stack's allocations are attributed to, or NULL. */
const struct msc_rframe *render_attributed(const struct msc_report *r, uint32_t stack);
/* Frames below main and thread starts (the C runtime's own), which add
 * nothing to a report. */
bool render_runtime_frame(const struct msc_rframe *f);
/*
 * A stack as every report lists it: its frames innermost first, the C
 * runtime's left out, and a cycle of up to RENDER_FOLD_PERIOD frames that
 * repeats right after itself (a recursion) listed once, then a line that
 * says how many more times it comes.  *out is malloc'ed (free it); returns
 * its lines, 0 (*out NULL) for a stack the report does not know, -ENOMEM.
 */
#define RENDER_FOLD_PERIOD 16
struct render_sline {
	const struct msc_rframe *f;	/* NULL: a line of repeats */
	bool wrapper;			/* below the frame it is attributed to */
	bool cont;			/* a cycle's frame after its first */
	unsigned period, times;		/* repeats: the period frames above come
					 * times more times */
};
long render_stack_lines(const struct msc_report *r, uint32_t id, struct render_sline **out);
/* The allocation function of a group, with its pool if it has one
 * ("custom, pool frames"), in buf. */
const char *render_fn_label(const struct render_group *x, char *buf, size_t n);
/* Leak kinds in the order reports list them. */
int render_kind_rank(const char *k);
/* qsort orders of groups, largest first, stack id for ties. */
int render_by_bytes(const void *a, const void *b);
int render_by_allocs(const void *a, const void *b);
int render_by_peak(const void *a, const void *b);
int render_by_live_at(const void *a, const void *b);
int render_by_leak(const void *a, const void *b);
/* qsort order of deltas: largest change first. */
int render_cmp_delta(const void *a, const void *b);
void render_totals_of(const struct msc_report *r, struct render_totals *t);

/*
 * The summary's figures, defined once for every output: "label value
 * rest" ("peak heap", "575.9 MiB", "at 1.025 s").  A label with leading
 * spaces is a sub-row of the one above (md_label says it alone); strong
 * rows are what a reader looks for first.
 */
#define RENDER_FIGURES_MAX 24

struct render_figure {
	const char *label, *md_label;
	char value[48], rest[112];
	bool strong;
};

/*
 * The leaked bytes and blocks by the mark their blocks were allocated
 * after (leak records' after; name NULL: before the first mark), in the
 * marks' order, into out[max]; how many (0 when no leak names a mark).
 */
struct render_mark_sum {
	const char *name;
	uint64_t ts, bytes, blocks;
};
size_t render_leaks_by_mark(const struct msc_report *r, struct render_mark_sum *out, size_t max);

/* Fills f[RENDER_FIGURES_MAX]; returns how many. */
size_t render_figures(const struct msc_report *r, struct render_figure *f);
/*
 * Sites shown together (a table, a chart's legend) are told apart when
 * two end on one frame (twins): by the first caller where their paths
 * part ("from"), or when their paths are the same from there out, by
 * the wrapper below it that allocated for it ("via", a C++ name without
 * its templates and parameters).  out[i] for stacks[i]: from NULL and via
 * "" when it has no twin.
 */
struct render_part {
	const struct msc_rframe *from;
	char via[256];
};

void render_parts(const struct msc_report *r, const uint32_t *stacks, size_t n, struct render_part *out);
/* A site whose frame has no name: the first named function above it (within
 * 8 frames, short as via's) in buf, which it returns; else NULL. */
const char *render_named_caller(const struct msc_report *r, uint32_t stack, char *buf, size_t n);
/* "fn file.c:12[ from caller file.c:30| via wrapper]", an unnamed frame
 * "lib.so+0x3974e under named_caller", malloc'ed (NULL:
 * out of memory); part may be NULL. */
char *render_site_label(const struct msc_report *r, uint32_t stack, const struct render_part *part);
/* Whether a filter's drop changes what this report counts, and how many do. */
bool render_filtered_relevant(const struct msc_report *r, const struct msc_filtered *f);
unsigned render_filtered_count(const struct msc_report *r);
size_t render_utf8_len(const unsigned char *p);
/* Text for XML and HTML: escaped, and well-formed whatever the bytes (a
 * byte that is not UTF-8, or a control character XML forbids, becomes
 * U+FFFD). */
void render_xml(FILE *out, const char *s);

/*
 * The cost a flame graph draws: the one asked for, and for MSC_COST_AUTO
 * the bytes leaked, or when nothing leaked those at the heap's peak, or
 * when there is no peak either the bytes allocated.
 */
enum msc_report_cost render_flame_cost(const struct msc_report *r, enum msc_report_cost asked);
/*
 * An SVG flame graph (or icicle, o->icicle) of the cost.  standalone: an
 * SVG document with its script; otherwise an <svg> element for a page,
 * which calls msFlame(element) from render_flame_script() once loaded.
 */
int render_flame_svg(struct msc_report *r, const struct msc_report_opts *o, FILE *out, bool standalone);
/* The script that makes a flame graph interactive: msFlame(svg). */
void render_flame_script(FILE *out);

/* The renderers: 0 or a negative errno. */
int render_text(struct msc_report *r, const struct msc_report_opts *o, FILE *out);
int render_json(struct msc_report *r, const struct msc_report_opts *o, FILE *out);
int render_collapsed(struct msc_report *r, const struct msc_report_opts *o, FILE *out);
int render_svg(struct msc_report *r, const struct msc_report_opts *o, FILE *out);
int render_html(struct msc_report *r, const struct msc_report_opts *o, FILE *out);
/* A gzipped pprof profile (render_pprof.c). */
int render_pprof(struct msc_report *r, const struct msc_report_opts *o, FILE *out);

#endif
