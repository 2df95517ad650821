/* SPDX-License-Identifier: MIT */
/*
 * Reports as one self-contained HTML page.  See msc_render.h.
 *
 * The page needs nothing but itself: its styles, charts (inline SVG) and
 * scripts are in it, it loads no font, image or script and names no
 * address.  It is also well-formed XML (every element closed, scripts in
 * CDATA sections), so that any XML parser can check it.
 *
 * A recording gets its summary, the heap over time, the leaks with their
 * stacks, the sites the peak is made of and the flame graph.  The heap over
 * time is stacked by the sites that held the most when the stream has its
 * events (ms-record --events: report.c keeps each stack's live bytes slot
 * by slot); otherwise it is the heap as a whole from the sample records,
 * with what the peak was made of beside it.  Other streams (snapshots,
 * diffs) get their text report.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_render.h"
#include "msc_util.h"

#define TOP_SERIES 8		/* sites stacked in the heap chart */
#define STACK_FRAMES 24		/* frames listed per leak */

static const char *const palette[TOP_SERIES] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
};
#define OTHER_COLOUR "#c9c3bd"

struct page {
	struct msc_report *r;
	const struct msc_report_opts *o;
	FILE *out;
};

/* ------------------------------------------------------------- figures */

static char *cnt(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_count(buf, n, msc_clamp_i64(v));
}

static char *exact(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_exact(buf, n, msc_clamp_i64(v));
}

static char *sz(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_size(buf, n, msc_clamp_i64(v));
}

static char *seconds(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
}

static const char *blocks_word(uint64_t n)
{
	return n == 1 ? "block" : "blocks";
}

static bool attached(const struct msc_report *r)
{
	return r->mode && !strcmp(r->mode, "attach");
}

static bool recording(const struct msc_report *r)
{
	return r->mode && (!strcmp(r->mode, "launch") || !strcmp(r->mode, "attach"));
}

static void esc(struct page *p, const char *s)
{
	render_xml(p->out, s ? s : "");
}

/* A frame's label, escaped. */
static void frame_label(struct page *p, const struct msc_rframe *f)
{
	char buf[1024];

	esc(p, msc_frame_label(buf, sizeof(buf), f));
}


/* "fn file.c:12 < caller file.c:30": where a site is, and who called it. */
static void site_name(struct page *p, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(p->r, stack);

	if (!s || !s->n) {
		fputs("[no stack]", p->out);
		return;
	}
	frame_label(p, &s->frames[s->attr]);
	if (s->attr + 1 < s->n && !render_runtime_frame(&s->frames[s->attr + 1])) {
		fputs(" &lt; ", p->out);
		esc(p, s->frames[s->attr + 1].fn ? s->frames[s->attr + 1].fn : "?");
	}
}

/* ------------------------------------------------------------- styles */

static const char page_style[] =
	"body { font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; margin: 0;\n"
	"  background: #f4f3ee; color: #1d1d1b; font-size: 14px; line-height: 1.45; }\n"
	"main { max-width: 1240px; margin: 0 auto; padding: 18px 20px 40px; }\n"
	"h1 { font-size: 22px; margin: 6px 0 2px; font-weight: 600; }\n"
	"h1 code { font-size: 20px; }\n"
	"h2 { font-size: 17px; margin: 0 0 10px; font-weight: 600; }\n"
	"section { background: #fff; border: 1px solid #dedbd2; border-radius: 6px; padding: 14px 18px;\n"
	"  margin: 16px 0; overflow-x: auto; }\n"
	".sub { color: #5a5a55; margin: 0; }\n"
	".cards { display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 14px; }\n"
	".card { flex: 1 1 200px; border-left: 4px solid #4e79a7; background: #f7f7f3; padding: 8px 12px; }\n"
	".card.bad { border-left-color: #d4483b; } .card.good { border-left-color: #59a14f; }\n"
	".card .v { font-size: 21px; font-weight: 600; } .card .l { color: #5a5a55; font-size: 12.5px; }\n"
	"table { border-collapse: collapse; }\n"
	"td, th { padding: 3px 12px 3px 0; text-align: left; vertical-align: top; }\n"
	"th { font-weight: 600; color: #5a5a55; font-size: 12.5px; border-bottom: 1px solid #dedbd2; }\n"
	"td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n"
	"table.figures td:first-child { color: #5a5a55; padding-right: 24px; }\n"
	"table.figures tr.strong td { font-weight: 600; color: #1d1d1b; }\n"
	"code, .mono { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 12.5px; }\n"
	"details { border-top: 1px solid #eeece6; padding: 6px 0; }\n"
	"summary { cursor: pointer; }\n"
	"summary .b { font-weight: 600; }\n"
	"ol.stack { margin: 6px 0 4px; padding-left: 34px; }\n"
	"ol.stack li { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 12.5px; }\n"
	"ol.stack .mod { color: #7a7a72; } ol.stack .inl { color: #b07aa1; }\n"
	".legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin-top: 8px; font-size: 12.5px; }\n"
	".legend span.k { display: inline-block; width: 11px; height: 11px; margin-right: 5px;\n"
	"  vertical-align: -1px; border-radius: 2px; }\n"
	".note { color: #5a5a55; font-size: 12.5px; margin: 6px 0 0; }\n"
	".warn { background: #fff4e0; border: 1px solid #f0c36d; padding: 6px 10px; border-radius: 4px; }\n"
	"svg.chart, svg.msflame { max-width: 100%; height: auto; display: block; }\n"
	"svg.chart text { font-size: 11px; fill: #5a5a55; }\n"
	"svg.chart .tip text { fill: #1d1d1b; }\n"
	"pre { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 12.5px; }\n"
	"footer { color: #7a7a72; font-size: 12px; text-align: center; }\n";

/* ------------------------------------------------------------- summary */

static void figure_row(struct page *p, const char *label, const char *value, const char *rest, bool strong)
{
	fprintf(p->out, "<tr%s><td>%s</td><td class=\"n\">%s</td><td>%s</td></tr>\n",
		strong ? " class=\"strong\"" : "", label, value, rest ? rest : "");
}

static void card(struct page *p, const char *cls, const char *value, const char *label)
{
	fprintf(p->out, "<div class=\"card%s%s\"><div class=\"v\">%s</div><div class=\"l\">%s</div></div>\n",
		cls ? " " : "", cls ? cls : "", value, label);
}

static void summary(struct page *p)
{
	struct msc_report *r = p->r;
	struct render_totals t;
	char a[64], b[64], d[160];
	size_t i;

	render_totals_of(r, &t);
	fputs("<section id=\"summary\">\n<h2>Summary</h2>\n", p->out);
	if (r->sample)
		fprintf(p->out, "<p>A sampled recording (ms-record --sample, one allocation in about %s "
			"recorded): leaks, sites, the peak and live figures are estimated.</p>\n",
			sz(a, sizeof(a), r->sample));
	fputs("<div class=\"cards\">\n", p->out);
	if (attached(r)) {
		snprintf(d, sizeof(d), "live at the end in %s %s (fate unknown)", cnt(b, sizeof(b), t.unknown_blocks),
			 blocks_word(t.unknown_blocks));
		card(p, NULL, exact(a, sizeof(a), t.unknown), d);
	} else {
		snprintf(d, sizeof(d), "leaked in %s %s%s", cnt(b, sizeof(b), t.leaked_blocks),
			 blocks_word(t.leaked_blocks), r->sample ? " (estimated)" : "");
		card(p, t.leaked ? "bad" : "good", exact(a, sizeof(a), t.leaked), d);
	}
	if (r->peak) {
		/* The peak the chart below breaks down: mappings are in it. */
		snprintf(d, sizeof(d), "%s, at %s",
			 r->pages.mapped_peak ? "peak heap and mappings" : "peak heap",
			 seconds(b, sizeof(b), r->peak_ts));
		card(p, NULL, sz(a, sizeof(a), r->peak), d);
	}
	snprintf(d, sizeof(d), "allocations, %s in all", sz(b, sizeof(b), t.bytes));
	card(p, NULL, cnt(a, sizeof(a), t.allocs), d);
	if (r->complete) {
		snprintf(d, sizeof(d), "ran, then %s", r->reason ? r->reason : "ended");
		if (r->has_status)
			snprintf(d + strlen(d), sizeof(d) - strlen(d), " %d", r->status);
		else if (r->signal)
			snprintf(d + strlen(d), sizeof(d) - strlen(d), " (signal %d)", r->signal);
		card(p, NULL, seconds(a, sizeof(a), r->duration), d);
	}
	fputs("</div>\n<table class=\"figures\">\n", p->out);
	snprintf(d, sizeof(d), "(%s)", sz(b, sizeof(b), t.bytes));
	figure_row(p, "allocations", cnt(a, sizeof(a), t.allocs), d, false);
	figure_row(p, "frees", cnt(a, sizeof(a), t.frees), NULL, false);
	if (t.mmaps) {
		snprintf(d, sizeof(d), "(%s; not in the allocations)", sz(b, sizeof(b), t.mmap_bytes));
		figure_row(p, "anonymous mmaps", cnt(a, sizeof(a), t.mmaps), d, false);
	}
	if (t.brks) {
		snprintf(d, sizeof(d), "(%s; not in the allocations)", sz(b, sizeof(b), t.brk_bytes));
		figure_row(p, "brk growth", cnt(a, sizeof(a), t.brks), d, false);
	}
	if (r->pages.have) {
		if (r->pages.heap_peak) {
			snprintf(d, sizeof(d), "at %s", seconds(b, sizeof(b), r->pages.heap_peak_ts));
			figure_row(p, "peak heap", sz(a, sizeof(a), r->pages.heap_peak), d, false);
		}
		if (r->pages.mapped_peak) {
			snprintf(d, sizeof(d), "at %s (anonymous mmaps and brk)",
				 seconds(b, sizeof(b), r->pages.mapped_peak_ts));
			figure_row(p, "peak mapped", sz(a, sizeof(a), r->pages.mapped_peak), d, false);
		}
		if (r->pages.rss_peak)
			figure_row(p, "peak rss", sz(a, sizeof(a), r->pages.rss_peak),
				   "(the whole process)", false);
	} else if (r->peak) {
		snprintf(d, sizeof(d), "at %s", seconds(b, sizeof(b), r->peak_ts));
		figure_row(p, "peak heap", sz(a, sizeof(a), r->peak), d, false);
	}
	if (!attached(r)) {
		snprintf(d, sizeof(d), "in %s %s", cnt(b, sizeof(b), t.leaked_blocks), blocks_word(t.leaked_blocks));
		figure_row(p, "leaked", exact(a, sizeof(a), t.leaked), d, true);
	}
	if (t.definitely || t.indirectly) {
		figure_row(p, "definitely lost", exact(a, sizeof(a), t.definitely), NULL, false);
		figure_row(p, "indirectly lost", exact(a, sizeof(a), t.indirectly), NULL, false);
	}
	if (t.possibly)
		figure_row(p, "possibly lost", exact(a, sizeof(a), t.possibly), NULL, false);
	if (!attached(r))
		figure_row(p, "still reachable", exact(a, sizeof(a), t.reachable), NULL, false);
	if (t.unscanned)
		figure_row(p, "unscanned", exact(a, sizeof(a), t.unscanned), "(no reachability scan)", false);
	if (t.unknown) {
		snprintf(d, sizeof(d), "in %s %s (fate unknown)", cnt(b, sizeof(b), t.unknown_blocks),
			 blocks_word(t.unknown_blocks));
		figure_row(p, "live at the end", exact(a, sizeof(a), t.unknown), d, false);
	}
	if (r->complete) {
		snprintf(a, sizeof(a), "%" PRIu64, r->lost);
		figure_row(p, "events lost", a, NULL, false);
	}
	fputs("</table>\n", p->out);
	if (r->streams > 1)
		fprintf(p->out, "<p class=\"note\">The stream holds %u more processes (ms-record --follow): this "
				"report is about pid %d; <code>ms-filter --pid PID</code> picks another.</p>\n",
			r->streams - 1, r->pid);
	if (!r->complete)
		fputs("<p class=\"warn\"><b>The stream was cut short</b> (no end record): this report covers "
		      "what it holds.</p>\n", p->out);
	if (render_filtered_count(r)) {
		bool any = false;

		fputs("<p class=\"note\">Filtered out:", p->out);
		for (i = 0; i < r->nfiltered; i++) {
			const struct msc_filtered *f = &r->filtered[i];

			if (!render_filtered_relevant(r, f) || !f->records)
				continue;
			fprintf(p->out, "%s %s ", any ? "," : "", cnt(a, sizeof(a), f->records));
			esc(p, f->type);
			fprintf(p->out, " record%s (%s", f->records == 1 ? "" : "s",
				!strcmp(f->type, "leak") ? exact(a, sizeof(a), f->bytes) : sz(a, sizeof(a), f->bytes));
			if (f->blocks)
				fprintf(p->out, " in %s %s", cnt(b, sizeof(b), f->blocks), blocks_word(f->blocks));
			fputc(')', p->out);
			any = true;
		}
		fputs(" by <code>", p->out);
		for (i = 0; i < r->nfilters; i++) {
			fputs(i ? " " : "", p->out);
			esc(p, r->filters[i]);
		}
		fputs("</code>.</p>\n", p->out);
	}
	fputs("</section>\n", p->out);
}

/* --------------------------------------------------------------- charts */

struct chart {
	size_t npts, nseries;		/* series: top sites, then the rest */
	uint64_t *ts;			/* [npts] */
	uint64_t *v;			/* [npts * nseries] */
	uint32_t stacks[TOP_SERIES];	/* the sites' stacks */
	unsigned nsites;
	bool by_site;
};

static void chart_release(struct chart *c)
{
	free(c->ts);
	free(c->v);
}

static int chart_alloc(struct chart *c, size_t npts, size_t nseries)
{
	c->npts = 0;
	c->nseries = nseries;
	c->ts = calloc(npts + 1, sizeof(*c->ts));
	c->v = calloc((npts + 1) * nseries, sizeof(*c->v));
	return c->ts && c->v ? 0 : -ENOMEM;
}

/* Adds a point; the peak is put where its time says. */
static uint64_t *chart_point(struct chart *c, uint64_t ts)
{
	size_t i = c->npts++;

	c->ts[i] = ts;
	return &c->v[i * c->nseries];
}

static int cmp_u64_desc(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	/* [0] the key, [1] the stack id: larger first, lower id for ties. */
	if (a[0] != b[0])
		return a[0] > b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Per stack, what it held at the heap's peak (sites of every size). */
static uint64_t at_peak_of(const struct msc_u64map *peaks, uint32_t stack)
{
	uint64_t *v = peaks ? msc_u64map_get(peaks, (uint64_t)stack + 1) : NULL;

	return v ? *v : 0;
}

/* The peak as a point of the chart, between the points around it. */
static void add_peak(struct chart *c, const struct msc_report *r, const struct msc_u64map *peaks)
{
	uint64_t *v, sum = 0;
	size_t k, at;

	if (!r->peak)
		return;
	for (at = 0; at < c->npts && c->ts[at] <= r->peak_ts; at++)
		;
	memmove(&c->ts[at + 1], &c->ts[at], (c->npts - at) * sizeof(*c->ts));
	memmove(&c->v[(at + 1) * c->nseries], &c->v[at * c->nseries], (c->npts - at) * c->nseries * sizeof(*c->v));
	c->npts++;
	c->ts[at] = r->peak_ts;
	v = &c->v[at * c->nseries];
	for (k = 0; k < c->nsites; k++) {
		v[k] = at_peak_of(peaks, c->stacks[k]);
		sum += v[k];
	}
	v[c->nseries - 1] = r->peak > sum ? r->peak - sum : 0;
}

/* The heap by site, from what report.c kept of an --events stream. */
static int chart_by_site(struct chart *c, const struct msc_report *r, const struct msc_u64map *peaks)
{
	const struct msc_rheap *h = &r->heap;
	uint64_t *rank, *v, end = r->duration;
	int64_t *cur;
	size_t i, k, at = 0;
	uint32_t s;
	int ret = -ENOMEM;

	rank = calloc(h->nstacks + 1, 2 * sizeof(*rank));
	cur = calloc(h->nstacks + 1, sizeof(*cur));
	if (!rank || !cur)
		goto out;
	/* A site's rank: the most it held at the end of a slot or at the
	 * peak. */
	for (i = 0; i < h->nstacks; i++)
		rank[2 * i + 1] = UINT32_MAX;
	for (i = 0; i < h->nlog; i++) {
		uint64_t *idx = msc_u64map_get(&h->index, (uint64_t)h->log[i].stack + 1);
		uint64_t live = h->log[i].live > 0 ? (uint64_t)h->log[i].live : 0;

		if (live > rank[2 * *idx])
			rank[2 * *idx] = live;
		rank[2 * *idx + 1] = h->log[i].stack;
	}
	for (i = 0; i < h->nstacks; i++) {
		uint64_t pk = at_peak_of(peaks, (uint32_t)rank[2 * i + 1]);

		if (pk > rank[2 * i])
			rank[2 * i] = pk;
	}
	qsort(rank, h->nstacks, 2 * sizeof(*rank), cmp_u64_desc);
	c->by_site = true;
	/* A site that never held 1 % of the peak would be a hairline. */
	for (k = 0; k < h->nstacks && k < TOP_SERIES && rank[2 * k] && rank[2 * k] >= r->peak / 100; k++)
		c->stacks[c->nsites++] = (uint32_t)rank[2 * k + 1];
	if (chart_alloc(c, h->nslots + 3, c->nsites + 1))
		goto out;
	chart_point(c, 0);
	for (s = 0; s < h->nslots; s++) {
		uint64_t t = (uint64_t)(s + 1) * h->slot_ns, sum = 0;

		for (; at < h->nlog && h->log[at].slot == s; at++) {
			uint64_t *idx = msc_u64map_get(&h->index, (uint64_t)h->log[at].stack + 1);

			cur[*idx] = h->log[at].live;
		}
		if (end && t > end)
			t = end;
		v = chart_point(c, t);
		for (k = 0; k < c->nsites; k++) {
			uint64_t *idx = msc_u64map_get(&h->index, (uint64_t)c->stacks[k] + 1);

			v[k] = idx && cur[*idx] > 0 ? (uint64_t)cur[*idx] : 0;
			sum += v[k];
		}
		v[c->nsites] = h->total[s] > sum ? h->total[s] - sum : 0;
	}
	/* Nothing changed after the last slot: the heap stays as it was. */
	if (c->npts > 1 && end > c->ts[c->npts - 1]) {
		uint64_t *last = &c->v[(c->npts - 1) * c->nseries];

		v = chart_point(c, end);
		memcpy(v, last, c->nseries * sizeof(*v));
	}
	add_peak(c, r, peaks);
	ret = 0;
out:
	free(rank);
	free(cur);
	return ret;
}

/* The heap as a whole, from the samples. */
static int chart_from_samples(struct chart *c, const struct msc_report *r)
{
	size_t i;

	if (chart_alloc(c, r->nsamples + 3, 1))
		return -ENOMEM;
	chart_point(c, 0);
	for (i = 0; i < r->nsamples; i++)
		if (r->samples[i].has_heap && r->samples[i].ts > c->ts[c->npts - 1])
			*chart_point(c, r->samples[i].ts) = r->samples[i].heap;
	add_peak(c, r, NULL);
	return 0;
}

/* A round step for an axis that spans `span` in about `ticks` steps. */
static double nice_step(double span, int ticks)
{
	double raw = span / ticks, mag = 1;

	if (raw <= 0)
		return 1;
	while (mag * 10 <= raw)
		mag *= 10;
	while (mag > raw)
		mag /= 10;
	return raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
}

/* Axis labels: "512 KiB", "1.5 MiB"; "250 ms", "1.5 s". */
static void size_tick(char *buf, size_t n, double v, double unit, const char *name)
{
	double x = v / unit;

	snprintf(buf, n, x == (double)(long long)x ? "%.0f %s" : "%.1f %s", x, name);
}

static void byte_unit(double max, double *unit, const char **name)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned i = 0;

	*unit = 1;
	while (max >= 1024 * *unit && i + 1 < ARRAY_SIZE(names)) {
		*unit *= 1024;
		i++;
	}
	*name = names[i];
}

static void time_tick(char *buf, size_t n, double ns, double span)
{
	if (span >= 2e9)
		snprintf(buf, n, "%g s", ns / 1e9);
	else if (span >= 2e6)
		snprintf(buf, n, "%g ms", ns / 1e6);
	else
		snprintf(buf, n, "%g us", ns / 1e3);
}

#define CH_W 1160
#define CH_LEFT 70
#define CH_RIGHT 16
#define CH_TOP 12
#define CH_BOTTOM 26

/*
 * An area chart of the series stacked (the last on top), with axes, or
 * with line, the first series as a line from its first point; the data
 * goes to the page's script for the tooltip.
 */
static void chart_svg(struct page *p, const struct chart *c, const char *id, int height,
		      const char *const *colours, uint64_t tmax, bool line)
{
	FILE *out = p->out;
	double pw = CH_W - CH_LEFT - CH_RIGHT, ph = height - CH_TOP - CH_BOTTOM;
	double ymax = 0, step, unit, y;
	const char *uname;
	char buf[64];
	size_t i, k;

	for (i = 0; i < c->npts; i++) {
		double sum = 0;

		for (k = 0; k < c->nseries; k++)
			sum += (double)c->v[i * c->nseries + k];
		if (sum > ymax)
			ymax = sum;
	}
	if (!tmax)
		tmax = 1;
	byte_unit(ymax, &unit, &uname);
	step = nice_step(ymax / unit, 4) * unit;
	if (ymax <= 0)
		ymax = step = unit;
	ymax = step * (double)(long long)((ymax + step * 0.999) / step);
	fprintf(out, "<svg class=\"chart\" id=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", id, CH_W,
		height, CH_W, height);
	/* Grid and the bytes axis. */
	for (y = 0; y <= ymax * 1.0001; y += step) {
		double py = CH_TOP + ph - y / ymax * ph;

		size_tick(buf, sizeof(buf), y, unit, uname);
		fprintf(out, "<line x1=\"%d\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e3da\"/>"
			     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			CH_LEFT, CH_LEFT + pw, py, py, CH_LEFT - 6, py + 4, buf);
	}
	/* The time axis. */
	step = nice_step((double)tmax, 8);
	for (y = 0; y <= (double)tmax * 1.0001; y += step) {
		double px = CH_LEFT + y / (double)tmax * pw;

		time_tick(buf, sizeof(buf), y, (double)tmax);
		fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#bdb9ae\"/>"
			     "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
			px, px, CH_TOP + ph, CH_TOP + ph + 4, px, CH_TOP + ph + 17, buf);
	}
	if (line) {
		fprintf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" d=\"M", colours[0]);
		for (i = 0; i < c->npts; i++)
			fprintf(out, "%s%.1f,%.1f", i ? " " : "", CH_LEFT + (double)c->ts[i] / (double)tmax * pw,
				CH_TOP + ph - (double)c->v[i * c->nseries] / ymax * ph);
		fputs("\"/>\n", out);
	}
	/* Areas, from the bottom series up. */
	for (k = 0; k < c->nseries && !line; k++) {
		fprintf(out, "<path fill=\"%s\" fill-opacity=\"0.9\" stroke=\"%s\" stroke-width=\"0.6\" d=\"M", colours[k],
			colours[k]);
		for (i = 0; i < c->npts; i++) {
			double top = 0, px = CH_LEFT + (double)c->ts[i] / (double)tmax * pw;
			size_t j;

			for (j = 0; j <= k; j++)
				top += (double)c->v[i * c->nseries + j];
			fprintf(out, "%s%.1f,%.1f", i ? " " : "", px, CH_TOP + ph - top / ymax * ph);
		}
		for (i = c->npts; i-- > 0;) {
			double base = 0, px = CH_LEFT + (double)c->ts[i] / (double)tmax * pw;
			size_t j;

			for (j = 0; j < k; j++)
				base += (double)c->v[i * c->nseries + j];
			fprintf(out, " %.1f,%.1f", px, CH_TOP + ph - base / ymax * ph);
		}
		fputs("Z\"/>\n", out);
	}
	fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.0f\" stroke=\"#8a867c\"/>\n", CH_LEFT, CH_LEFT, CH_TOP,
		CH_TOP + ph);
	fprintf(out, "<g class=\"tip\" style=\"display: none\"><line class=\"guide\" y1=\"%d\" y2=\"%.0f\" "
		     "stroke=\"#1d1d1b\" stroke-dasharray=\"3,3\"/><rect class=\"box\" fill=\"#fff\" "
		     "fill-opacity=\"0.95\" stroke=\"#8a867c\" rx=\"3\"/><text class=\"lines\"/></g>\n",
		CH_TOP, CH_TOP + ph);
	fputs("</svg>\n", out);
}

/* The chart's data for its tooltip: times, values, names. */
static void chart_data(struct page *p, const struct chart *c, const char *id, const char *const *names)
{
	size_t i, k;

	fprintf(p->out, "msChart('%s', %d, %d, %d, [", id, CH_LEFT, CH_W - CH_RIGHT, CH_TOP);
	for (i = 0; i < c->npts; i++)
		fprintf(p->out, "%s%" PRIu64, i ? "," : "", c->ts[i]);
	fputs("], [", p->out);
	for (k = 0; k < c->nseries; k++) {
		fputs(k ? ",[" : "[", p->out);
		for (i = 0; i < c->npts; i++)
			fprintf(p->out, "%s%" PRIu64, i ? "," : "", c->v[i * c->nseries + k]);
		fputc(']', p->out);
	}
	fputs("], [", p->out);
	for (k = 0; k < c->nseries; k++) {
		const char *s;

		fputs(k ? ",'" : "'", p->out);
		/* In a script, in CDATA: no quote, backslash or "]]>". */
		for (s = names[k]; *s; s++)
			if (*s == '\'' || *s == '\\' || *s == ']' || *s == '<' || (unsigned char)*s < 0x20)
				fprintf(p->out, "\\u%04x", (unsigned char)*s);
			else
				fputc(*s, p->out);
		fputc('\'', p->out);
	}
	fputs("]);\n", p->out);
}

struct charts {
	struct chart heap, rss;
	char **names;			/* heap series */
	bool have_heap, have_rss;
};

static char *label_of(const struct msc_report *r, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);
	char buf[600], f[512];

	if (!s || !s->n)
		return strdup("[no stack]");
	msc_frame_label(f, sizeof(f), &s->frames[s->attr]);
	if (s->attr + 1 < s->n && !render_runtime_frame(&s->frames[s->attr + 1]))
		snprintf(buf, sizeof(buf), "%s < %s", f, s->frames[s->attr + 1].fn ? s->frames[s->attr + 1].fn : "?");
	else
		snprintf(buf, sizeof(buf), "%s", f);
	return strdup(buf);
}

static int charts_build(struct charts *cs, const struct msc_report *r)
{
	struct render_group *g;
	struct msc_u64map peaks;
	size_t ng = 0, i, k;
	int ret = 0;

	memset(cs, 0, sizeof(*cs));
	if (r->heap.nslots) {
		g = render_site_groups(r, &ng);
		if (!g || msc_u64map_init(&peaks, ng + 1)) {
			free(g);
			return -ENOMEM;
		}
		for (i = 0; i < ng && !ret; i++)
			if (g[i].at_peak)
				ret = msc_u64map_put(&peaks, (uint64_t)g[i].stack + 1, g[i].at_peak);
		free(g);
		if (!ret)
			ret = chart_by_site(&cs->heap, r, &peaks);
		msc_u64map_release(&peaks);
	} else {
		ret = chart_from_samples(&cs->heap, r);
	}
	if (ret)
		return ret;
	cs->have_heap = cs->heap.npts > 1;
	cs->names = calloc(cs->heap.nseries + 1, sizeof(*cs->names));
	if (!cs->names)
		return -ENOMEM;
	for (k = 0; k < cs->heap.nsites; k++)
		cs->names[k] = label_of(r, cs->heap.stacks[k]);
	cs->names[cs->heap.nseries - 1] = strdup(cs->heap.by_site ? "all other sites" : "heap");
	for (k = 0; k < cs->heap.nseries; k++)
		if (!cs->names[k])
			return -ENOMEM;
	/* rss, from the samples. */
	if (chart_alloc(&cs->rss, r->nsamples + 1, 1))
		return -ENOMEM;
	for (i = 0; i < r->nsamples; i++)
		if (r->samples[i].rss && (!cs->rss.npts || r->samples[i].ts > cs->rss.ts[cs->rss.npts - 1]))
			*chart_point(&cs->rss, r->samples[i].ts) = r->samples[i].rss;
	cs->have_rss = cs->rss.npts > 1;
	return 0;
}

static void charts_release(struct charts *cs)
{
	size_t k;

	chart_release(&cs->heap);
	chart_release(&cs->rss);
	for (k = 0; cs->names && k < cs->heap.nseries; k++)
		free(cs->names[k]);
	free(cs->names);
}

static uint64_t chart_tmax(const struct msc_report *r, const struct charts *cs)
{
	uint64_t t = r->duration;

	if (cs->heap.npts && cs->heap.ts[cs->heap.npts - 1] > t)
		t = cs->heap.ts[cs->heap.npts - 1];
	if (cs->rss.npts && cs->rss.ts[cs->rss.npts - 1] > t)
		t = cs->rss.ts[cs->rss.npts - 1];
	return t;
}

static void heap_section(struct page *p, const struct charts *cs)
{
	const struct msc_report *r = p->r;
	const char *colours[TOP_SERIES + 1];
	char a[32], b[32], c[32];
	uint64_t tmax = chart_tmax(r, cs);
	size_t k;

	fputs("<section id=\"heap\">\n<h2>Heap over time</h2>\n", p->out);
	if (!cs->have_heap && !cs->have_rss) {
		fputs("<p class=\"note\">No samples: the recording was made with <code>ms-record -i 0</code>, or "
		      "ended before its first.</p>\n</section>\n", p->out);
		return;
	}
	for (k = 0; k < cs->heap.nsites; k++)
		colours[k] = palette[k];
	colours[cs->heap.nseries - 1] = cs->heap.by_site ? OTHER_COLOUR : palette[0];
	if (cs->have_heap) {
		chart_svg(p, &cs->heap, "heapchart", 320, colours, tmax, false);
		fputs("<div class=\"legend\">", p->out);
		for (k = 0; k < cs->heap.nseries; k++) {
			fprintf(p->out, "<span><span class=\"k\" style=\"background: %s\"></span><span class=\"mono\">",
				colours[k]);
			esc(p, cs->names[k]);
			fputs("</span></span>", p->out);
		}
		fputs("</div>\n", p->out);
		if (cs->heap.by_site)
			fprintf(p->out, "<p class=\"note\">The bytes each site (call path) held, stacked: the %u that "
					"held the most (at least 1 %% of the peak), and all others together; from the "
					"recording's events, as they stood every %s, and at the peak (%s at %s).</p>\n",
				cs->heap.nsites, msc_fmt_duration(a, sizeof(a), r->heap.slot_ns),
				sz(b, sizeof(b), r->peak), seconds(c, sizeof(c), r->peak_ts));
		else
			fputs("<p class=\"note\">The bytes allocated and not yet freed, from the recording's samples "
			      "and its peak. A recording made with <code>ms-record --events</code> shows them by "
			      "site.</p>\n", p->out);
	}
	if (cs->have_rss) {
		static const char *const rss_colour[] = { "#4e79a7" };

		fputs("<h2 style=\"margin-top: 14px\">Resident set size (rss)</h2>\n", p->out);
		chart_svg(p, &cs->rss, "rsschart", 170, rss_colour, tmax, true);
		fputs("<p class=\"note\">The process's memory in RAM, heap or not, from /proc/PID/statm at each "
		      "sample.</p>\n", p->out);
	}
	fputs("</section>\n", p->out);
}

/* What the peak is made of, when the chart cannot show it over time. */
static void peak_bar(struct page *p)
{
	const struct msc_report *r = p->r;
	struct render_group *g;
	size_t n, i;
	double x = 0, w = 1160;
	uint64_t shown = 0;
	char a[32], b[32];

	if (!r->peak || !(g = render_site_groups(r, &n)))
		return;
	qsort(g, n, sizeof(*g), render_by_peak);
	fprintf(p->out, "<h2>The peak, %s at %s, by site</h2>\n", sz(a, sizeof(a), r->peak),
		seconds(b, sizeof(b), r->peak_ts));
	fprintf(p->out, "<svg class=\"chart\" width=\"%.0f\" height=\"26\" viewBox=\"0 0 %.0f 26\">\n", w, w);
	for (i = 0; i < n && i < TOP_SERIES && g[i].at_peak; i++) {
		double bw = (double)g[i].at_peak / (double)r->peak * w;

		fprintf(p->out, "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"22\" fill=\"%s\"><title>", x, bw,
			palette[i]);
		site_name(p, g[i].stack);
		fprintf(p->out, ": %s (%.1f%%)</title></rect>\n", sz(a, sizeof(a), g[i].at_peak),
			100.0 * (double)g[i].at_peak / (double)r->peak);
		x += bw;
		shown += g[i].at_peak;
	}
	if (shown < r->peak)
		fprintf(p->out, "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"22\" fill=\"%s\"><title>all other "
				"sites: %s</title></rect>\n",
			x, w - x, OTHER_COLOUR, sz(a, sizeof(a), r->peak - shown));
	fputs("</svg>\n<div class=\"legend\">", p->out);
	for (i = 0; i < n && i < TOP_SERIES && g[i].at_peak; i++) {
		fprintf(p->out, "<span><span class=\"k\" style=\"background: %s\"></span><span class=\"mono\">",
			palette[i]);
		site_name(p, g[i].stack);
		fprintf(p->out, "</span> %s</span>", sz(a, sizeof(a), g[i].at_peak));
	}
	fputs("</div>\n", p->out);
	free(g);
}

/* ---------------------------------------------------------------- leaks */

static void stack_list(struct page *p, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(p->r, stack);
	unsigned i, shown = 0;

	fputs("<ol class=\"stack\">\n", p->out);
	for (i = 0; s && i < s->n; i++) {
		const struct msc_rframe *f = &s->frames[i];

		if (render_runtime_frame(f))
			break;
		fputs("<li>", p->out);
		if (f->fn)
			esc(p, f->fn);
		else
			fputs("?", p->out);
		if (f->file && f->line) {
			fputc(' ', p->out);
			esc(p, msc_base_name(f->file));
			fprintf(p->out, ":%u", f->line);
		} else if (f->fn_offset) {
			fputc('+', p->out);
			esc(p, f->fn_offset);
		}
		if (f->obj) {
			fputs(" <span class=\"mod\">", p->out);
			esc(p, msc_base_name(f->obj));
			fputs("</span>", p->out);
		}
		if (f->inlined)
			fputs(" <span class=\"inl\">(inlined)</span>", p->out);
		fputs("</li>\n", p->out);
		if (++shown >= STACK_FRAMES && i + 1 < s->n) {
			fprintf(p->out, "<li>... %u more frames</li>\n", s->n - i - 1);
			break;
		}
	}
	if (msc_report_stack_truncated(p->r, s))
		fputs("<li>[truncated: the stack was cut at ms-record --depth]</li>\n", p->out);
	fputs("</ol>\n", p->out);
}

static void leaks_section(struct page *p)
{
	struct msc_report *r = p->r;
	size_t n, i, shown = 0, more = 0;
	struct render_group *g = render_leak_groups(r, &n);
	uint64_t total = 0, blocks = 0;
	char a[32], b[32], lo[32], hi[32];

	if (!g)
		return;
	qsort(g, n, sizeof(*g), render_by_leak);
	for (i = 0; i < n; i++)
		if (render_leaked_kind(g[i].kind) || (attached(r) && !strcmp(g[i].kind, "unknown"))) {
			total += g[i].bytes;
			msc_sat_add(&blocks, g[i].count);
		}
	fprintf(p->out, "<section id=\"leaks\">\n<h2>%s: %s in %s %s%s</h2>\n",
		attached(r) ? "Live at the end" : "Leaks", exact(a, sizeof(a), total), cnt(b, sizeof(b), blocks),
		blocks_word(blocks), attached(r) ? " (fate unknown)" : "");
	fputs(attached(r) ? "<p class=\"note\">Allocated while attached and not freed when recording stopped: not "
			    "leaks, only growth to watch. Largest first.</p>\n" :
			    "<p class=\"note\">Definitely lost first, then indirectly and possibly lost; largest first "
			    "within each. Still reachable blocks are not leaks.</p>\n",
	      p->out);
	for (i = 0; i < n; i++) {
		struct render_group *x = &g[i];

		if (!strcmp(x->kind, "reachable"))
			continue;
		if (shown >= p->o->top) {
			more++;
			continue;
		}
		shown++;
		if (x->size_lo == x->size_hi || !x->size_hi)
			snprintf(lo, sizeof(lo), "%s B", cnt(a, sizeof(a), x->size_lo));
		else
			snprintf(lo, sizeof(lo), "%s..%s B", cnt(a, sizeof(a), x->size_lo), cnt(hi, sizeof(hi), x->size_hi));
		fprintf(p->out, "<details%s><summary><span class=\"b\">%s</span> in %s %s of %s from <code>",
			shown <= 3 ? " open=\"open\"" : "", exact(a, sizeof(a), x->bytes), cnt(b, sizeof(b), x->count),
			blocks_word(x->count), lo);
		esc(p, x->fn ? x->fn : "?");
		fputs("</code> at <code>", p->out);
		frame_label(p, render_attributed(r, x->stack));
		fputs("</code>, ", p->out);
		esc(p, x->kind);
		fputs(!strcmp(x->kind, "unscanned") ? "" : !strcmp(x->kind, "unknown") ? " fate" : " lost", p->out);
		fputs("</summary>\n", p->out);
		stack_list(p, x->stack);
		fputs("</details>\n", p->out);
	}
	if (!shown)
		fprintf(p->out, "<p>No %s.</p>\n", attached(r) ? "live blocks" : "leaks");
	if (more)
		fprintf(p->out, "<p class=\"note\">... and %zu more (<code>ms-report --top N</code> lists more).</p>\n",
			more);
	fputs("</section>\n", p->out);
	free(g);
}

/* ---------------------------------------------------------------- sites */

static void sites_section(struct page *p)
{
	struct msc_report *r = p->r;
	struct render_group *g;
	size_t n, i;
	char a[32];

	g = render_site_groups(r, &n);
	if (!g)
		return;
	if (!n) {
		free(g);
		return;
	}
	qsort(g, n, sizeof(*g), r->peak ? render_by_peak : render_by_bytes);
	fprintf(p->out, "<section id=\"sites\">\n<h2>%s</h2>\n<table>\n<tr><th class=\"n\">at peak</th>"
			"<th class=\"n\">live at end</th><th class=\"n\">allocated</th><th class=\"n\">allocations</th>"
			"<th>where</th></tr>\n",
		r->peak ? "Sites: what the peak is made of" : "Sites that allocated the most");
	for (i = 0; i < n && i < p->o->top; i++) {
		fprintf(p->out, "<tr><td class=\"n\">%s</td>", sz(a, sizeof(a), g[i].at_peak));
		fprintf(p->out, "<td class=\"n\">%s</td>", sz(a, sizeof(a), g[i].live_bytes));
		fprintf(p->out, "<td class=\"n\">%s</td>", sz(a, sizeof(a), g[i].bytes));
		fprintf(p->out, "<td class=\"n\">%s</td><td class=\"mono\">", cnt(a, sizeof(a), g[i].allocs));
		site_name(p, g[i].stack);
		fputs("</td></tr>\n", p->out);
	}
	fputs("</table>\n</section>\n", p->out);
	free(g);
}

/* --------------------------------------------------------------- script */

static const char chart_script[] =
	"function msTime(ns) {\n"
	"  return ns < 1e3 ? ns + ' ns' : ns < 999950 ? (ns / 1e3).toFixed(1) + ' us' :\n"
	"    ns < 999950000 ? (ns / 1e6).toFixed(1) + ' ms' : (ns / 1e9).toFixed(3) + ' s';\n"
	"}\n"
	"function msSize(v) {\n"
	"  if (v < 1024) return v + ' B';\n"
	"  var u = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = -1;\n"
	"  do { v /= 1024; i++; } while (v >= 1023.95 && i < u.length - 1);\n"
	"  return v.toFixed(1) + ' ' + u[i];\n"
	"}\n"
	"function msChart(id, x0, x1, y0, ts, series, names) {\n"
	"  var svg = document.getElementById(id), tip = svg.querySelector('.tip');\n"
	"  var guide = tip.querySelector('.guide'), box = tip.querySelector('.box');\n"
	"  var lines = tip.querySelector('.lines'), vb = svg.viewBox.baseVal;\n"
	"  svg.addEventListener('mousemove', function (e) {\n"
	"    var r = svg.getBoundingClientRect(), x = (e.clientX - r.left) * vb.width / r.width;\n"
	"    if (x < x0 || x > x1) { tip.style.display = 'none'; return; }\n"
	"    var span = +svg.getAttribute('data-tmax'), t = (x - x0) / (x1 - x0) * span, best = 0;\n"
	"    ts.forEach(function (u, i) { if (Math.abs(u - t) < Math.abs(ts[best] - t)) best = i; });\n"
	"    var px = x0 + ts[best] / span * (x1 - x0), total = 0, rows = [];\n"
	"    series.forEach(function (s) { total += s[best]; });\n"
	"    rows.push(msTime(ts[best]) + (series.length > 1 ? ': ' + msSize(total) + ' in all' : ': ' + msSize(total)));\n"
	"    if (series.length > 1)\n"
	"      for (var k = series.length - 1; k >= 0; k--)\n"
	"        if (series[k][best]) rows.push(msSize(series[k][best]) + '  ' + names[k]);\n"
	"    while (lines.firstChild) lines.removeChild(lines.firstChild);\n"
	"    rows.forEach(function (s, i) {\n"
	"      var l = document.createElementNS(svg.namespaceURI, 'tspan');\n"
	"      l.setAttribute('x', 0); l.setAttribute('dy', i ? 14 : 0); l.textContent = s;\n"
	"      lines.appendChild(l);\n"
	"    });\n"
	"    tip.style.display = '';\n"
	"    guide.setAttribute('x1', px); guide.setAttribute('x2', px);\n"
	"    var bb = lines.getBBox(), w = bb.width + 12, h = rows.length * 14 + 8;\n"
	"    var bx = px + 10 + w > x1 ? px - 10 - w : px + 10;\n"
	"    box.setAttribute('x', bx); box.setAttribute('y', y0 + 4);\n"
	"    box.setAttribute('width', w); box.setAttribute('height', h);\n"
	"    lines.setAttribute('transform', 'translate(' + (bx + 6) + ',' + (y0 + 18) + ')');\n"
	"    Array.prototype.forEach.call(lines.childNodes, function (l) { l.setAttribute('x', 0); });\n"
	"  });\n"
	"  svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });\n"
	"}\n";

/* ------------------------------------------------------------------ page */

static void page_head(struct page *p, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>", p->out);
	esc(p, title);
	fprintf(p->out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", page_style);
}

static void page_foot(struct page *p)
{
	fprintf(p->out, "<footer>memscope %s, ms-report --html</footer>\n</main>\n", MSC_VERSION);
}

/* Streams that are not recordings: their text report, in the page. */
static int other_stream(struct page *p)
{
	struct msc_report_opts o = *p->o;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int ret;

	if (!m)
		return -errno;
	o.format = MSC_REPORT_TEXT;
	ret = render_text(p->r, &o, m);
	if (fclose(m) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(text);
		return ret;
	}
	page_head(p, p->r->argv ? p->r->argv : "memscope report");
	fputs("<section>\n<pre>", p->out);
	esc(p, text);
	fputs("</pre>\n</section>\n", p->out);
	page_foot(p);
	fputs("</body>\n</html>\n", p->out);
	free(text);
	return 0;
}

int render_html(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct page p = { r, o, out };
	struct charts cs;
	char title[1100], a[32];
	int ret;

	if (!recording(r))
		return other_stream(&p);
	ret = charts_build(&cs, r);
	if (ret) {
		charts_release(&cs);
		return ret;
	}
	snprintf(title, sizeof(title), "memscope: %s", o->title ? o->title : r->argv ? r->argv : "?");
	page_head(&p, title);
	fputs("<header>\n<h1>memscope report: <code>", out);
	esc(&p, o->title ? o->title : r->argv ? r->argv : "?");
	fputs("</code></h1>\n<p class=\"sub\">", out);
	if (r->pid)
		fprintf(out, "pid %d", r->pid);
	if (r->start) {
		fputs(", recorded ", out);
		esc(&p, r->start);
	}
	if (r->complete)
		fprintf(out, ", ran %s", seconds(a, sizeof(a), r->duration));
	if (attached(r))
		fputs(", attached to a running process", out);
	fputs("</p>\n</header>\n", out);
	summary(&p);
	heap_section(&p, &cs);
	if (!cs.heap.by_site && r->peak) {
		fputs("<section id=\"peak\">\n", out);
		peak_bar(&p);
		fputs("</section>\n", out);
	}
	leaks_section(&p);
	sites_section(&p);
	fputs("<section id=\"flame\">\n<h2>Flame graph</h2>\n", out);
	ret = render_flame_svg(r, o, out, false);
	fputs("<p class=\"note\">Click a frame to zoom into it, <b>Reset zoom</b> (or Escape) to zoom out; "
	      "<b>Search</b> (or <b>/</b>) highlights the frames whose name matches and adds up their cost. "
	      "Pointing at a frame shows its file, line and module.</p>\n</section>\n", out);
	page_foot(&p);
	fputs("<script>//<![CDATA[\n", out);
	render_flame_script(out);
	fputs(chart_script, out);
	if (cs.have_heap) {
		fprintf(out, "document.getElementById('heapchart').setAttribute('data-tmax', %" PRIu64 ");\n",
			chart_tmax(r, &cs) ? chart_tmax(r, &cs) : 1);
		chart_data(&p, &cs.heap, "heapchart", (const char *const *)cs.names);
	}
	if (cs.have_rss) {
		static const char *const rss_name[] = { "rss" };

		fprintf(out, "document.getElementById('rsschart').setAttribute('data-tmax', %" PRIu64 ");\n",
			chart_tmax(r, &cs) ? chart_tmax(r, &cs) : 1);
		chart_data(&p, &cs.rss, "rsschart", rss_name);
	}
	fputs("msFlame(document.querySelector('svg.msflame'));\n//]]></script>\n</body>\n</html>\n", out);
	charts_release(&cs);
	return ret;
}
