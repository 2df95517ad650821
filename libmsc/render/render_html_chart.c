/* SPDX-License-Identifier: MIT */
/*
 * The charts of the HTML page: the heap over time, stacked by the sites
 * that held the most (from an --events stream, else from the recording's
 * timeline) or as a whole (from the samples of a stream without either),
 * rss, and what the peak is made of; inline SVG, with the data their
 * tooltips read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_render.h"
#include "msc_util.h"
#include "render_html_internal.h"

static const char *const palette[TOP_SERIES] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
};
#define OTHER_COLOUR "#c9c3bd"
#define MAPPED_COLOUR "#9c755f"

/* --------------------------------------------------------------- charts */


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

/* Per stack, what it held at the heap's peak (sites of every size); the
 * map holds that + 1 for every stack the report's sites have. */
static uint64_t at_peak_of(const struct msc_u64map *peaks, uint32_t stack)
{
	uint64_t *v = peaks ? msc_u64map_get(peaks, (uint64_t)stack + 1) : NULL;

	return v ? *v - 1 : 0;
}

/*
 * What of the peak (the heap and mapped memory together) was mapped: the
 * mapped peak or the heap's when either was at the same moment, else what
 * was mapped just before it (before).
 */
static uint64_t peak_mapped(const struct msc_report *r, uint64_t before)
{
	uint64_t m = before;

	if (r->pages.mapped_peak && r->pages.mapped_peak_ts == r->peak_ts)
		m = r->pages.mapped_peak;
	else if (r->pages.heap_peak && r->pages.heap_peak_ts == r->peak_ts)
		m = r->peak > r->pages.heap_peak ? r->peak - r->pages.heap_peak : 0;
	return m < r->peak ? m : r->peak;
}

/*
 * The peak as a point of the chart, between the points around it: the
 * sites' shares, the rest of the heap's part, and the mapped part (mapped
 * of it) when the chart has mapped memory as its last series.
 */
static void add_peak(struct chart *c, const struct msc_report *r, const struct msc_u64map *peaks,
		     uint64_t mapped)
{
	uint64_t *v, sum = 0, heap;
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
	heap = c->mapped ? r->peak - mapped : r->peak;
	v[c->nsites] = heap > sum ? heap - sum : 0;
	if (c->mapped)
		v[c->nsites + 1] = mapped;
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
	add_peak(c, r, peaks, 0);
	ret = 0;
out:
	free(rank);
	free(cur);
	return ret;
}

/*
 * The heap as a whole from the samples, and when the program mapped memory
 * itself, that above it: the peak is of both together, so that its point
 * is where the two stacked reach it, not a spike of the heap alone.
 */
static int chart_from_samples(struct chart *c, const struct msc_report *r)
{
	size_t i;
	uint64_t mapped = 0, *v;

	for (i = 0; i < r->nsamples; i++)
		if (r->samples[i].has_heap && r->samples[i].mapped)
			c->mapped = true;
	c->mapped |= r->pages.mapped_peak != 0;
	if (chart_alloc(c, r->nsamples + 3, c->mapped ? 2 : 1))
		return -ENOMEM;
	chart_point(c, 0);
	for (i = 0; i < r->nsamples; i++) {
		const struct msc_rsample *s = &r->samples[i];

		if (!s->has_heap || s->ts <= c->ts[c->npts - 1])
			continue;
		v = chart_point(c, s->ts);
		v[0] = s->heap;
		if (c->mapped)
			v[1] = s->mapped;
		if (s->ts <= r->peak_ts)
			mapped = s->mapped;
	}
	add_peak(c, r, NULL, peak_mapped(r, mapped));
	return 0;
}

/*
 * The heap by site from the recording's timeline (every recording has
 * one): the sites that held the most at a point or at the peak, the rest
 * of the heap, and mapped memory on top.  A site's bytes at a point where
 * it was not among the timeline's top stacks are in the rest.
 */
static int chart_from_timeline(struct chart *c, const struct msc_report *r, const struct msc_u64map *peaks)
{
	const struct msc_rtimeline *t = &r->timeline;
	uint64_t *rank, *v, mapped = 0;
	size_t i, k, n = 0;

	rank = calloc(t->nseries + 1, 3 * sizeof(*rank));
	if (!rank)
		return -ENOMEM;
	/* [0] the most it held, [1] its stack, [2] its series. */
	for (i = 0; i < t->nseries; i++) {
		uint32_t st = t->series[i].stack;
		uint64_t pk = at_peak_of(peaks, st);

		if (!msc_u64map_get(peaks, (uint64_t)st + 1))
			continue;	/* filtered out of the report */
		rank[3 * n] = t->series[i].max > pk ? t->series[i].max : pk;
		rank[3 * n + 1] = st;
		rank[3 * n + 2] = i;
		n++;
	}
	qsort(rank, n, 3 * sizeof(*rank), cmp_u64_desc);
	for (i = 0; i < t->npts; i++)
		if (t->mapped[i])
			c->mapped = true;
	c->mapped |= r->pages.mapped_peak != 0;
	c->by_site = c->timeline = true;
	for (k = 0; k < n && k < TOP_SERIES && rank[3 * k] && rank[3 * k] >= r->peak / 100; k++)
		c->stacks[c->nsites++] = (uint32_t)rank[3 * k + 1];
	if (chart_alloc(c, t->npts + 3, c->nsites + 1 + c->mapped)) {
		free(rank);
		return -ENOMEM;
	}
	chart_point(c, 0);
	for (i = 0; i < t->npts; i++) {
		uint64_t sum = 0;

		if (t->ts[i] <= c->ts[c->npts - 1] && c->npts > 1)
			continue;
		v = t->ts[i] ? chart_point(c, t->ts[i]) : c->v;
		for (k = 0; k < c->nsites; k++) {
			int64_t x = t->series[rank[3 * k + 2]].live[i];

			v[k] = x > 0 ? (uint64_t)x : 0;
			sum += v[k];
		}
		v[c->nsites] = t->heap[i] > sum ? t->heap[i] - sum : 0;
		if (c->mapped)
			v[c->nsites + 1] = t->mapped[i];
		if (t->ts[i] <= r->peak_ts)
			mapped = t->mapped[i];
	}
	add_peak(c, r, peaks, peak_mapped(r, mapped));
	free(rank);
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
	/* The run's marks (not ms-record's own), named at the top. */
	for (i = 0; i < p->r->nmarks; i++) {
		const struct msc_rmark *m = &p->r->marks[i];
		double px = CH_LEFT + (double)m->ts / (double)tmax * pw;

		if ((m->by && !strcmp(m->by, "ms-record")) || m->ts > tmax)
			continue;
		fprintf(out, "<g class=\"mark\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.0f\" stroke=\"#1d1d1b\" "
			     "stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%d\">",
			px, px, CH_TOP, CH_TOP + ph, px + 3, CH_TOP + 10);
		esc(p, m->name);
		fputs("</text></g>\n", out);
	}
	fprintf(out, "<g class=\"tip\" style=\"display: none\"><line class=\"guide\" y1=\"%d\" y2=\"%.0f\" "
		     "stroke=\"#1d1d1b\" stroke-dasharray=\"3,3\"/><rect class=\"box\" fill=\"#fff\" "
		     "fill-opacity=\"0.95\" stroke=\"#8a867c\" rx=\"3\"/><text class=\"lines\"/></g>\n",
		CH_TOP, CH_TOP + ph);
	fputs("</svg>\n", out);
}

/* The chart's data for its tooltip: times, values, names. */
void html_chart_data(struct page *p, const struct chart *c, const char *id, const char *const *names)
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
		if (k)
			fputc(',', p->out);
		html_js_str(p->out, names[k]);
	}
	fputs("]);\n", p->out);
}

void html_js_str(FILE *out, const char *s)
{
	fputc('\'', out);
	/* In a script, in CDATA: no quote, backslash or "]]>". */
	for (; *s; s++)
		if (*s == '\'' || *s == '\\' || *s == ']' || *s == '<' || (unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, out);
	fputc('\'', out);
}


int html_charts_build(struct charts *cs, const struct msc_report *r)
{
	struct render_group *g;
	struct msc_u64map peaks;
	size_t ng = 0, i, k;
	int ret = 0;

	memset(cs, 0, sizeof(*cs));
	g = render_site_groups(r, &ng);
	if (!g || msc_u64map_init(&peaks, ng + 1)) {
		free(g);
		return -ENOMEM;
	}
	for (i = 0; i < ng && !ret; i++)
		ret = msc_u64map_put(&peaks, (uint64_t)g[i].stack + 1, g[i].at_peak + 1);
	free(g);
	if (!ret && r->heap.nslots)
		ret = chart_by_site(&cs->heap, r, &peaks);
	else if (!ret && r->timeline.npts)
		ret = chart_from_timeline(&cs->heap, r, &peaks);
	else if (!ret)
		ret = chart_from_samples(&cs->heap, r);
	msc_u64map_release(&peaks);
	if (ret)
		return ret;
	cs->have_heap = cs->heap.npts > 1;
	cs->names = calloc(cs->heap.nseries + 1, sizeof(*cs->names));
	if (!cs->names)
		return -ENOMEM;
	for (k = 0; k < cs->heap.nsites; k++)
		cs->names[k] = render_site_label(r, cs->heap.stacks[k], NULL);	/* named again by the page */
	cs->names[cs->heap.nsites] = strdup(cs->heap.by_site ? "all other sites" : "heap");
	if (cs->heap.mapped)
		cs->names[cs->heap.nsites + 1] = strdup("mapped (anonymous mmaps and brk)");
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

void html_charts_release(struct charts *cs)
{
	size_t k;

	chart_release(&cs->heap);
	chart_release(&cs->rss);
	for (k = 0; cs->names && k < cs->heap.nseries; k++)
		free(cs->names[k]);
	free(cs->names);
}

uint64_t html_chart_tmax(const struct msc_report *r, const struct charts *cs)
{
	uint64_t t = r->duration;

	if (cs->heap.npts && cs->heap.ts[cs->heap.npts - 1] > t)
		t = cs->heap.ts[cs->heap.npts - 1];
	if (cs->rss.npts && cs->rss.ts[cs->rss.npts - 1] > t)
		t = cs->rss.ts[cs->rss.npts - 1];
	return t;
}

void html_heap_section(struct page *p, const struct charts *cs)
{
	const struct msc_report *r = p->r;
	const char *colours[TOP_SERIES + 2];
	char a[32], b[32], c[32];
	uint64_t tmax = html_chart_tmax(r, cs);
	size_t k;

	fputs("<section id=\"heap\">\n<h2>Heap over time</h2>\n", p->out);
	if (!cs->have_heap && !cs->have_rss) {
		fputs("<p class=\"note\">No samples: the recording was made with <code>ms-record -i 0</code>, or "
		      "ended before its first.</p>\n</section>\n", p->out);
		return;
	}
	for (k = 0; k < cs->heap.nsites; k++)
		colours[k] = palette[k];
	colours[cs->heap.nsites] = cs->heap.by_site ? OTHER_COLOUR : palette[0];
	if (cs->heap.mapped)
		colours[cs->heap.nsites + 1] = MAPPED_COLOUR;
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
		if (cs->heap.timeline)
			fprintf(p->out, "<p class=\"note\">The bytes each site (call path) held, stacked: the %u that "
					"held the most (at least 1 %% of the peak), and all other sites together%s; as "
					"they stood at %zu moments of the run, and at the peak (%s at %s). Drag across "
					"the chart to see what held the memory in that time.</p>\n",
				cs->heap.nsites, cs->heap.mapped ? ", with what the program mapped itself on top "
								   "(anonymous mmaps and brk)" : "",
				r->timeline.npts, sz(b, sizeof(b), r->peak), seconds(c, sizeof(c), r->peak_ts));
		else if (cs->heap.by_site)
			fprintf(p->out, "<p class=\"note\">The bytes each site (call path) held, stacked: the %u that "
					"held the most (at least 1 %% of the peak), and all others together; from the "
					"recording's events, as they stood every %s, and at the peak (%s at %s).</p>\n",
				cs->heap.nsites, msc_fmt_duration(a, sizeof(a), r->heap.slot_ns),
				sz(b, sizeof(b), r->peak), seconds(c, sizeof(c), r->peak_ts));
		else
			fprintf(p->out, "<p class=\"note\">The bytes allocated and not yet freed%s, from the "
					"recording's samples and its peak. A recording made with <code>ms-record "
					"--events</code> shows them by site.</p>\n",
				cs->heap.mapped ? ", and above them what the program mapped itself (anonymous mmaps "
						  "and brk)" : "");
		if (cs->heap.timeline)
			html_time_view(p);
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
void html_peak_bar(struct page *p)
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
		html_site_name(p, g[i].stack);
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
		html_site_name(p, g[i].stack);
		fprintf(p->out, "</span> %s</span>", sz(a, sizeof(a), g[i].at_peak));
	}
	fputs("</div>\n", p->out);
	free(g);
}
