/* SPDX-License-Identifier: MIT */
/*
 * render_html_internal: what the files of the HTML renderer share
 * (private to libmsc/render/; the others see render_html() in
 * msc_render.h).
 *
 *	render_html.c		render_html(), the page, its styles and
 *				script, the summary, leaks and sites
 *	render_html_chart.c	the charts: heap over time, rss, the peak
 *				by site
 *	render_html_time.c	the time view: a range of the heap chart,
 *				its top sites and their flame graph
 */
#ifndef MSC_RENDER_HTML_INTERNAL_H
#define MSC_RENDER_HTML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "msc_render.h"
#include "msc_report.h"
#include "msc_util.h"

#define TOP_SERIES 8		/* sites stacked in the heap chart */

struct page {
	struct msc_report *r;
	const struct msc_report_opts *o;
	FILE *out;
	struct msc_u64map names;	/* stack + 1 -> its name (char *), for
					 * every site the page shows */
	bool have_names;
};

static inline void esc(struct page *p, const char *s)
{
	render_xml(p->out, s ? s : "");
}

struct chart {
	size_t npts, nseries;		/* series: top sites, then the rest */
	uint64_t *ts;			/* [npts] */
	uint64_t *v;			/* [npts * nseries] */
	uint32_t stacks[TOP_SERIES];	/* the sites' stacks */
	unsigned nsites;
	bool by_site;
	bool timeline;			/* by site, from the recording's timeline */
	bool mapped;			/* mapped memory: the last series */
};

struct charts {
	struct chart heap, rss;
	char **names;			/* heap series */
	bool have_heap, have_rss;
};

/* ----------------------------------- render_html.c, for render_html_chart.c */

/* A site's name, the same wherever the page shows it (see html_names_build). */
void html_site_name(struct page *p, uint32_t stack);
/* The same, malloc'ed (NULL: out of memory). */
char *html_site_label(struct page *p, uint32_t stack);

/* ----------------------------------- render_html_chart.c, for render_html.c */

/* The charts of a recording: its heap (by site from its events, else from
 * its samples) and its rss.  0 or -ENOMEM; release them either way. */
int html_charts_build(struct charts *cs, const struct msc_report *r);
void html_charts_release(struct charts *cs);
/* The time the charts end at: the recording's or their last point's. */
uint64_t html_chart_tmax(const struct msc_report *r, const struct charts *cs);
/* The chart's data for its tooltip: times, values, names. */
void html_chart_data(struct page *p, const struct chart *c, const char *id, const char *const *names);
/* The "Heap over time" section: the charts, their legend and notes. */
void html_heap_section(struct page *p, const struct charts *cs);
/* What the peak is made of, when the chart cannot show it over time. */
void html_peak_bar(struct page *p);
/* A C string as a JavaScript string literal, safe inside the page's CDATA. */
void html_js_str(FILE *out, const char *s);

/* ------------------------------------ render_html_time.c, for both others */

/* The time view's place on the page (in the heap section), its script,
 * and its data (a call of that script), when the chart is by site from the
 * recording's timeline. */
void html_time_view(struct page *p);
extern const char html_time_script[];
void html_time_data(struct page *p, const struct charts *cs);

#endif
