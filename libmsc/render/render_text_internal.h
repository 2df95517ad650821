/* SPDX-License-Identifier: MIT */
/*
 * render_text_internal: what the files of the text and Markdown renderer
 * share (private to libmsc/render/; the others see render_text() in
 * msc_render.h).
 *
 *	render_text.c		render_text(), which report a stream gets,
 *				the summary, the stacks and rows the
 *				sections print with
 *	render_text_sections.c	a recording's other sections: errors,
 *				leaks, sizes, timeline
 *	render_text_sites.c	the tables of sites (top sites, temporary
 *				allocations), each site numbered and named
 *				the same in every table, and their stacks
 *	render_text_diff.c	ms-diff's and ms-snap's reports, --poll
 *				recordings
 */
#ifndef MSC_RENDER_TEXT_INTERNAL_H
#define MSC_RENDER_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "msc_render.h"
#include "msc_report.h"
#include "msc_util.h"

struct text_sites;

struct ctx {
	struct msc_report *r;
	const struct msc_report_opts *o;
	FILE *out;
	bool md;
	unsigned width;			/* text's columns, 0: no limit */
	struct text_sites *sites;	/* the sites the tables show, once made */
};

/* The columns left for a name after used (at least least), 0 for no limit. */
static inline size_t text_room(const struct ctx *c, size_t used, size_t least)
{
	if (!c->width)
		return 0;
	return c->width > used + least ? c->width - used : least;
}

static inline const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static inline char *cnt(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_count(buf, n, msc_clamp_i64(v));
}

/* Exact bytes, "89,609 B": what leaked is an answer, not an estimate. */
static inline char *exact(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_exact(buf, n, msc_clamp_i64(v));
}

/* An attach recording: no leaks, blocks live at the end are of unknown fate. */
static inline bool attached(const struct msc_report *r)
{
	return r->mode && !strcmp(r->mode, "attach");
}

static inline const char *blocks_word(uint64_t n)
{
	return n == 1 ? "block" : "blocks";
}

static inline void heading(struct ctx *c, const char *title)
{
	if (c->md)
		fprintf(c->out, "\n### %s\n\n", title);
	else
		fprintf(c->out, "\n%s\n", title);
}

/* The heading of a section whose figures a sampled recording estimates. */
static inline void heading_est(struct ctx *c, const char *title)
{
	char buf[256];

	if (!c->r->sample) {
		heading(c, title);
		return;
	}
	snprintf(buf, sizeof(buf), "%s%s", title, c->md ? " (estimated)" : " (ESTIMATED)");
	heading(c, buf);
}

/* -------------------------------------------- render_text.c, for the others */

/* A frame's place in at most width columns (0: any): the function name
 * gives way before the file and line do.  Returns buf. */
const char *text_fit(char *buf, size_t n, const struct msc_rframe *f, size_t width);
/* Stack id, one frame per line after indent, below the C runtime's
 * frames, repeats folded (see render_text.c). */
void text_print_stack(struct ctx *c, uint32_t id, const char *indent);
/* "48", "32..511", and in text when exact figures would not fit a
 * 12-column SIZES column, "288..10.0M". */
char *text_size_range(char *buf, size_t n, uint64_t lo, uint64_t hi, bool md);

/* -------------------------------- render_text_sections.c, for render_text.c */

void text_errors(struct ctx *c);
/* The process images of an ms-record --follow recording, each with its
 * figures, the report's own marked. */
void text_images(struct ctx *c);
void text_leaks(struct ctx *c);
void text_sizes(struct ctx *c);
void text_timeline(struct ctx *c);

/* ----------------------------------- render_text_sites.c, for render_text.c */

/* The top sites' tables; the temporary allocations' table; the stacks of
 * every site they showed (after the last of them). */
void text_top(struct ctx *c);
void text_temporary(struct ctx *c);
void text_site_stacks(struct ctx *c);
void text_sites_release(struct ctx *c);

/* --------------------------------------- render_text_diff.c, for the others */

/* What a diff compared, when, and its total. */
void text_growth_header(struct ctx *c);
/* A diff's or a snapshot's deltas, grouped. */
void text_deltas(struct ctx *c);
/* A --poll recording: rss over time and the growth of each mapping group. */
void text_poll_view(struct ctx *c);
/* A snapshot's processes and their mappings. */
void text_processes(struct ctx *c);

#endif
