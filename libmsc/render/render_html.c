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
 * diffs) get their text report.  The charts are render_html_chart.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_render.h"
#include "msc_util.h"
#include "render_html_internal.h"


/* ------------------------------------------------------------- figures */

static char *cnt(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_count(buf, n, msc_clamp_i64(v));
}

static char *exact(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_exact(buf, n, msc_clamp_i64(v));
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

/* A frame's label, escaped. */
static void frame_label(struct page *p, const struct msc_rframe *f)
{
	char buf[1024];

	esc(p, msc_frame_label(buf, sizeof(buf), f));
}

char *html_site_label(struct page *p, uint32_t stack)
{
	uint64_t *v = p->have_names ? msc_u64map_get(&p->names, (uint64_t)stack + 1) : NULL;

	return v ? strdup((const char *)(uintptr_t)*v) : render_site_label(p->r, stack, NULL);
}

void html_site_name(struct page *p, uint32_t stack)
{
	char *s = html_site_label(p, stack);

	esc(p, s ? s : "?");
	free(s);
}

/* Adds the top n sites of an order to the stacks the page names. */
static int names_add(uint32_t **st, size_t *n, size_t *cap, struct render_group *g, size_t ng,
		     int (*cmp)(const void *, const void *), size_t top, bool at_peak)
{
	size_t i;

	qsort(g, ng, sizeof(*g), cmp);
	for (i = 0; i < ng && i < top && (!at_peak || g[i].at_peak); i++) {
		if (MSC_GROW(*st, *n + 1, *cap, 64))
			return -ENOMEM;
		(*st)[(*n)++] = g[i].stack;
	}
	return 0;
}

/* Every site the page shows (the sites' table, the peak's bar, the heap
 * chart's series) is named once, twins told apart among all of them, as
 * the text report names them. */
static int html_names_build(struct page *p, const struct charts *cs)
{
	struct render_group *g;
	struct render_part *parts = NULL;
	uint32_t *st = NULL, *uniq = NULL;
	size_t ng, n = 0, cap = 0, nu = 0, i;
	int ret = -ENOMEM;

	if (msc_u64map_init(&p->names, 64))
		return -ENOMEM;
	p->have_names = true;
	if (!(g = render_site_groups(p->r, &ng)))
		return -ENOMEM;
	if (names_add(&st, &n, &cap, g, ng, p->r->peak ? render_by_peak : render_by_bytes, p->o->top, false) ||
	    names_add(&st, &n, &cap, g, ng, render_by_peak, TOP_SERIES, true))
		goto out;
	for (i = 0; i < cs->heap.nsites; i++) {
		if (MSC_GROW(st, n + 1, cap, 64))
			goto out;
		st[n++] = cs->heap.stacks[i];
	}
	uniq = calloc(n + 1, sizeof(*uniq));
	parts = calloc(n + 1, sizeof(*parts));
	if (!uniq || !parts)
		goto out;
	for (i = 0; i < n; i++) {
		if (msc_u64map_get(&p->names, (uint64_t)st[i] + 1))
			continue;
		if (msc_u64map_put(&p->names, (uint64_t)st[i] + 1, 0))
			goto out;
		uniq[nu++] = st[i];
	}
	render_parts(p->r, uniq, nu, parts);
	for (i = 0; i < nu; i++) {
		char *label = render_site_label(p->r, uniq[i], &parts[i]);
		const char *kept = label ? msc_arena_strdup(&p->r->arena, label) : NULL;

		free(label);
		if (!kept || msc_u64map_put(&p->names, (uint64_t)uniq[i] + 1, (uint64_t)(uintptr_t)kept))
			goto out;
	}
	ret = 0;
out:
	free(g);
	free(st);
	free(uniq);
	free(parts);
	return ret;
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
	"ol.stack li.rep { list-style: none; color: #7a7a72; }\n"
	".legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin-top: 8px; font-size: 12.5px; }\n"
	".legend span.k { display: inline-block; width: 11px; height: 11px; margin-right: 5px;\n"
	"  vertical-align: -1px; border-radius: 2px; }\n"
	".note { color: #5a5a55; font-size: 12.5px; margin: 6px 0 0; }\n"
	".warn { background: #fff4e0; border: 1px solid #f0c36d; padding: 6px 10px; border-radius: 4px; }\n"
	"svg.chart, svg.msflame { max-width: 100%; height: auto; display: block; }\n"
	"svg.chart text { font-size: 11px; fill: #5a5a55; }\n"
	"svg.chart .tip text { fill: #1d1d1b; }\n"
	".icicle { position: relative; margin-top: 6px; }\n"
	".ic { position: absolute; height: 17px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis;\n"
	"  background: #f2b880; border: 0 solid #fff; border-width: 0 1px 1px 0; box-sizing: border-box;\n"
	"  font: 11px 'DejaVu Sans Mono', Menlo, Consolas, monospace; padding: 1px 3px; }\n"
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
	struct render_figure fig[RENDER_FIGURES_MAX];
	struct render_totals t;
	char a[64], b[64], d[160];
	size_t i, nfig;

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
			 r->pages.mapped_peak && r->peak != r->pages.heap_peak ? "peak heap+mapped" : "peak heap",
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
	nfig = render_figures(r, fig);
	for (i = 0; i < nfig; i++)
		figure_row(p, fig[i].md_label, fig[i].value, fig[i].rest[0] ? fig[i].rest : NULL, fig[i].strong);
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
	if (r->nwrappers) {
		fputs("<p class=\"note\">Allocation wrappers found (their callers are the sites; "
		      "<code>--no-auto-wrappers</code> keeps them): ", p->out);
		for (i = 0; i < r->nwrappers; i++) {
			fputs(i ? ", <code>" : "<code>", p->out);
			esc(p, r->wrappers[i]);
			fputs("</code>", p->out);
		}
		fputs(".</p>\n", p->out);
	}
	fputs("</section>\n", p->out);
}

/* ---------------------------------------------------------------- leaks */

/* A stack, whole, as the text lists it (a recursion folded, the frames
 * that only pass the allocation on marked). */
static void stack_list(struct page *p, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(p->r, stack);
	struct render_sline *l;
	long n = render_stack_lines(p->r, stack, &l), i;

	fputs("<ol class=\"stack\">\n", p->out);
	for (i = 0; i < n; i++) {
		const struct msc_rframe *f = l[i].f;

		if (!f) {
			fprintf(p->out, "<li class=\"rep\">... the %s above %u more %s</li>\n",
				l[i].period == 1 ? "frame" : "frames", l[i].times, l[i].times == 1 ? "time" : "times");
			continue;
		}
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
		if (l[i].wrapper)
			fputs(" <span class=\"mod\">(wrapper)</span>", p->out);
		fputs("</li>\n", p->out);
	}
	if (msc_report_stack_truncated(p->r, s))
		fputs("<li>[truncated: the stack was cut at ms-record --depth]</li>\n", p->out);
	fputs("</ol>\n", p->out);
	free(l);
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
		fprintf(p->out, "<td class=\"n\">%s</td><td class=\"mono\"><details><summary>",
			cnt(a, sizeof(a), g[i].allocs));
		html_site_name(p, g[i].stack);
		fputs("</summary>\n", p->out);
		stack_list(p, g[i].stack);
		fputs("</details></td></tr>\n", p->out);
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
	struct page p = { r, o, out, { 0 }, false };
	struct charts cs;
	char title[1100], a[32];
	size_t i;
	int ret;

	if (!recording(r))
		return other_stream(&p);
	ret = html_charts_build(&cs, r);
	if (!ret)
		ret = html_names_build(&p, &cs);
	for (i = 0; !ret && i < cs.heap.nsites; i++) {
		free(cs.names[i]);
		if (!(cs.names[i] = html_site_label(&p, cs.heap.stacks[i])))
			ret = -ENOMEM;
	}
	if (ret) {
		html_charts_release(&cs);
		if (p.have_names)
			msc_u64map_release(&p.names);
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
	html_heap_section(&p, &cs);
	if (!cs.heap.by_site && r->peak) {
		fputs("<section id=\"peak\">\n", out);
		html_peak_bar(&p);
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
			html_chart_tmax(r, &cs) ? html_chart_tmax(r, &cs) : 1);
		html_chart_data(&p, &cs.heap, "heapchart", (const char *const *)cs.names);
		fputs(html_time_script, out);
		html_time_data(&p, &cs);
	}
	if (cs.have_rss) {
		static const char *const rss_name[] = { "rss" };

		fprintf(out, "document.getElementById('rsschart').setAttribute('data-tmax', %" PRIu64 ");\n",
			html_chart_tmax(r, &cs) ? html_chart_tmax(r, &cs) : 1);
		html_chart_data(&p, &cs.rss, "rsschart", rss_name);
	}
	fputs("msFlame(document.querySelector('svg.msflame'));\n//]]></script>\n</body>\n</html>\n", out);
	html_charts_release(&cs);
	msc_u64map_release(&p.names);
	return ret;
}
