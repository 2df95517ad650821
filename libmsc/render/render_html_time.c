/* SPDX-License-Identifier: MIT */
/*
 * The HTML page's time view (memray's temporal flame graph): a time range
 * dragged across the heap chart shows the sites that held the most at the
 * range's highest point, what each gained or lost over the range, and a
 * flame graph of them, all drawn by the page's script from the recording's
 * timeline (msc_rtimeline), with the peak as one more point.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_render.h"
#include "render_html_internal.h"

/* The report's sites of a series' stack (NULL: none, filtered out). */
static const struct render_group *group_of(const struct render_group *g, size_t ng, uint32_t stack)
{
	size_t i;

	for (i = 0; i < ng; i++)
		if (g[i].stack == stack)
			return &g[i];
	return NULL;
}

/* The points, with the peak put where its time says (its index, or npts
 * when there is none). */
static size_t peak_at(const struct msc_report *r)
{
	const struct msc_rtimeline *t = &r->timeline;
	size_t i;

	if (!r->peak)
		return t->npts + 1;
	for (i = 0; i < t->npts && t->ts[i] <= r->peak_ts; i++)
		;
	return i;
}

static void u64_list(FILE *out, const uint64_t *v, size_t n, size_t peak, uint64_t peak_v)
{
	size_t i;

	fputc('[', out);
	for (i = 0; i <= n; i++) {
		if (i == peak)
			fprintf(out, "%s%" PRIu64, i ? "," : "", peak_v);
		if (i < n)
			fprintf(out, "%s%" PRIu64, i || peak == 0 ? "," : "", v[i]);
	}
	fputc(']', out);
}

void html_time_data(struct page *p, const struct charts *cs)
{
	const struct msc_report *r = p->r;
	const struct msc_rtimeline *t = &r->timeline;
	struct render_group *g;
	size_t ng = 0, pk = peak_at(r), i, k;
	uint64_t pk_mapped = 0, pk_ts = r->peak_ts;
	char buf[1024];
	bool first = true;

	if (!cs->heap.timeline || !(g = render_site_groups(r, &ng)))
		return;
	/* The chart's peak point says how the peak split. */
	for (i = 0; cs->heap.mapped && i < cs->heap.npts; i++)
		if (cs->heap.ts[i] == r->peak_ts)
			pk_mapped = cs->heap.v[i * cs->heap.nseries + cs->heap.nsites + 1];
	fputs("msTimeline({ts: ", p->out);
	u64_list(p->out, t->ts, t->npts, pk, pk_ts);
	fputs(", heap: ", p->out);
	u64_list(p->out, t->heap, t->npts, pk, r->peak - pk_mapped);
	fputs(", mapped: ", p->out);
	u64_list(p->out, t->mapped, t->npts, pk, pk_mapped);
	if (t->floor) {
		fputs(", floor: ", p->out);
		u64_list(p->out, t->floor, t->npts, pk, 0);
	}
	fprintf(p->out, ", peak: %zd, top: %u, series: [", pk <= t->npts ? (ssize_t)pk : (ssize_t)-1, t->top);
	for (k = 0; k < t->nseries; k++) {
		const struct msc_rseries *s = &t->series[k];
		const struct msc_rstack *st = msc_report_stack(r, s->stack);
		const struct render_group *sg = group_of(g, ng, s->stack);
		char *name;
		unsigned j, cut;

		if (!sg || !st || !st->n)
			continue;
		name = html_site_label(p, s->stack);
		fputs(first ? "\n{n: " : ",\n{n: ", p->out);
		first = false;
		html_js_str(p->out, name ? name : "?");
		free(name);
		/* Frames outermost first, as the flame graph stacks them. */
		fputs(", f: [", p->out);
		for (cut = 0; cut < st->n && !render_runtime_frame(&st->frames[cut]); cut++)
			;
		for (j = cut; j-- > 0;) {
			const struct msc_rframe *f = &st->frames[j];

			if (j + 1 < cut)
				fputc(',', p->out);
			html_js_str(p->out, f->fn ? f->fn : msc_frame_label(buf, sizeof(buf), f));
		}
		fputs("], v: [", p->out);
		for (i = 0; i <= t->npts; i++) {
			if (i == pk)
				fprintf(p->out, "%s%" PRIu64, i ? "," : "", sg->at_peak);
			if (i < t->npts)
				fprintf(p->out, "%s%" PRId64, i || pk == 0 ? "," : "", s->live[i]);
		}
		fputs("]}", p->out);
	}
	/* The run's marks (not ms-record's own): the ranges between them. */
	fputs("], marks: [", p->out);
	first = true;
	for (i = 0; i < r->nmarks; i++) {
		if (r->marks[i].by && !strcmp(r->marks[i].by, "ms-record"))
			continue;
		fprintf(p->out, "%s{n: ", first ? "" : ", ");
		html_js_str(p->out, r->marks[i].name);
		fprintf(p->out, ", t: %" PRIu64 "}", r->marks[i].ts);
		first = false;
	}
	fputs("]});\n", p->out);
	free(g);
}

void html_time_view(struct page *p)
{
	fputs("<div id=\"timeview\"><p class=\"note\">Drag across the heap chart to choose a time range: "
	      "the sites that held the most at its highest point, what each gained over it, and their "
	      "flame graph are shown here.</p></div>\n", p->out);
}

const char html_time_script[] =
	"function msTimeline(d) {\n"
	"  var svg = document.getElementById('heapchart'), view = document.getElementById('timeview');\n"
	"  if (!svg || !view) return;\n"
	"  var vb = svg.viewBox.baseVal, x0 = 70, x1 = vb.width - 16, span = +svg.getAttribute('data-tmax');\n"
	"  var sel = document.createElementNS(svg.namespaceURI, 'rect'), from = null;\n"
	"  sel.setAttribute('y', 12); sel.setAttribute('height', vb.height - 38);\n"
	"  sel.setAttribute('fill', '#1d1d1b'); sel.setAttribute('fill-opacity', '0.12');\n"
	"  sel.style.display = 'none'; svg.appendChild(sel);\n"
	"  function at(e) {\n"
	"    var r = svg.getBoundingClientRect(), x = (e.clientX - r.left) * vb.width / r.width;\n"
	"    return Math.max(x0, Math.min(x1, x));\n"
	"  }\n"
	"  function time(x) { return (x - x0) / (x1 - x0) * span; }\n"
	"  function mark(a, b) {\n"
	"    sel.setAttribute('x', Math.min(a, b)); sel.setAttribute('width', Math.max(1, Math.abs(b - a)));\n"
	"    sel.style.display = '';\n"
	"  }\n"
	"  function pick(a, b) {\n"
	"    mark(x0 + a / span * (x1 - x0), x0 + Math.min(b, span) / span * (x1 - x0)); msRange(d, view, a, b);\n"
	"  }\n"
	/* The ranges between the marks, a click each. */
	"  if (d.marks && d.marks.length) {\n"
	"    var bounds = [{n: 'start', t: 0}].concat(d.marks, [{n: 'end', t: span}]);\n"
	"    var p = document.createElement('p'); p.className = 'note'; p.appendChild(document.createTextNode('Between marks: '));\n"
	"    bounds.slice(1).forEach(function (m, i) {\n"
	"      var a = document.createElement('a'), from_ = bounds[i];\n"
	"      a.textContent = from_.n + ' to ' + m.n; a.style.cursor = 'pointer'; a.style.marginRight = '12px';\n"
	"      a.addEventListener('click', function () { pick(from_.t, m.t); });\n"
	"      p.appendChild(a);\n"
	"    });\n"
	"    view.parentNode.insertBefore(p, view);\n"
	"  }\n"
	"  svg.addEventListener('mousedown', function (e) { from = at(e); mark(from, from); e.preventDefault(); });\n"
	"  svg.addEventListener('mousemove', function (e) { if (from !== null) mark(from, at(e)); });\n"
	"  window.addEventListener('mouseup', function (e) {\n"
	"    if (from === null) return;\n"
	"    var to = at(e), a = time(Math.min(from, to)), b = time(Math.max(from, to));\n"
	"    from = null; msRange(d, view, a, b);\n"
	"  });\n"
	"}\n"
	"function msEsc(s) {\n"
	"  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\"/g, '&quot;');\n"
	"}\n"
	/* What the view shows of the range [a, b] (ns): its first and last
	 * points, its highest (the heap and mapped together), the sites then
	 * with what each gained over the range (null: not known at an end),
	 * and the rest of the heap then. */
	"function msPick(d, a, b) {\n"
	"  var pts = [], i, best = -1, near = 0;\n"
	"  for (i = 0; i < d.ts.length; i++) {\n"
	"    if (d.ts[i] >= a && d.ts[i] <= b) pts.push(i);\n"
	"    if (Math.abs(d.ts[i] - a) < Math.abs(d.ts[near] - a)) near = i;\n"
	"  }\n"
	"  if (!pts.length) pts.push(near);\n"
	"  pts.forEach(function (i) {\n"
	"    if (best < 0 || d.heap[i] + d.mapped[i] > d.heap[best] + d.mapped[best]) best = i;\n"
	"  });\n"
	"  var p0 = pts[0], p1 = pts[pts.length - 1], rows = [], known = 0;\n"
	"  d.series.forEach(function (s) {\n"
	"    if (s.v[best] < 0) return;\n"
	"    known += s.v[best];\n"
	"    var g = null, e = 0, u0 = s.v[p0], u1 = s.v[p1];\n"
	"    if (d.floor) {\n"
	"      if (u0 < 0) { e += d.floor[p0] / 2; u0 = d.floor[p0] / 2; }\n"
	"      if (u1 < 0) { e += d.floor[p1] / 2; u1 = d.floor[p1] / 2; }\n"
	"    }\n"
	"    if (u0 >= 0 && u1 >= 0 && e <= Math.max(Math.abs(u1 - u0) / 10, s.v[best] / 100)) g = u1 - u0;\n"
	"    if (s.v[best] > 0 || g) rows.push({s: s, v: s.v[best], g: g, about: e > 0});\n"
	"  });\n"
	"  rows.sort(function (x, y) { return y.v - x.v || (y.g || 0) - (x.g || 0); });\n"
	"  return {p0: p0, p1: p1, best: best, rows: rows, other: Math.max(0, d.heap[best] - known)};\n"
	"}\n"
	"function msRange(d, view, a, b) {\n"
	"  var x = msPick(d, a, b), best = x.best, other = x.other;\n"
	"  var h = '<h2 style=\"margin-top: 14px\">' + msTime(d.ts[x.p0]) + ' to ' + msTime(d.ts[x.p1]) +\n"
	"    ': the heap at its highest, ' + msSize(d.heap[best]) + (best === d.peak ? ' (the peak)' : '') +\n"
	"    ' at ' + msTime(d.ts[best]) + (d.mapped[best] ? ', and ' + msSize(d.mapped[best]) + ' mapped' : '') +\n"
	"    '</h2>\\n<table><tr><th class=\"n\">held then</th><th class=\"n\">change over the range</th><th>where</th></tr>\\n';\n"
	"  x.rows.forEach(function (r) {\n"
	"    h += '<tr><td class=\"n\">' + msSize(r.v) + '</td><td class=\"n\">' +\n"
	"      (r.g === null ? '?' : (r.about ? '~' : '') + (r.g > 0 ? '+' : r.g < 0 ? '-' : '') + msSize(Math.abs(Math.round(r.g)))) +\n"
	"      '</td><td class=\"mono\">' + msEsc(r.s.n) + '</td></tr>\\n';\n"
	"  });\n"
	"  if (other) h += '<tr><td class=\"n\">' + msSize(other) + '</td><td></td><td>all other sites</td></tr>\\n';\n"
	"  h += '</table>\\n<p class=\"note\">The change is a site\\'s bytes at the range\\'s last point less those at ' +\n"
	"    'its first; ~ where a site was not among the ' + d.top + ' that held the most at one of them (it then held ' +\n"
	"    'less than the least of those), ? where that leaves it unknown.</p>\\n';\n"
	"  view.innerHTML = h + msIcicle(x.rows, other);\n"
	"}\n"
	"function msIcicle(rows, other) {\n"
	"  var root = {n: 'all', v: 0, k: {}, o: []};\n"
	"  rows.forEach(function (r) {\n"
	"    var node = root;\n"
	"    root.v += r.v;\n"
	"    r.s.f.forEach(function (f) {\n"
	"      if (!node.k[f]) { node.k[f] = {n: f, v: 0, k: {}, o: []}; node.o.push(node.k[f]); }\n"
	"      node = node.k[f]; node.v += r.v;\n"
	"    });\n"
	"  });\n"
	"  if (other) { root.o.push({n: 'all other sites', v: other, k: {}, o: []}); root.v += other; }\n"
	"  if (!root.v) return '';\n"
	"  var out = [], depth = 0;\n"
	"  function draw(n, x, w, y) {\n"
	"    if (w < 0.2) return;\n"
	"    depth = Math.max(depth, y + 1);\n"
	"    var hue = 0;\n"
	"    for (var i = 0; i < n.n.length; i++) hue = (hue * 31 + n.n.charCodeAt(i)) % 997;\n"
	"    out.push('<div class=\"ic\" style=\"background:hsl(' + (10 + hue % 40) + ',75%,' + (62 + hue % 12) +\n"
	"      '%);left:' + x.toFixed(3) + '%;width:' + w.toFixed(3) + '%;top:' +\n"
	"      (y * 18) + 'px\" title=\"' + msEsc(n.n + ': ' + msSize(n.v)) + '\">' + msEsc(n.n) + '</div>');\n"
	"    n.o.sort(function (a, b) { return b.v - a.v; });\n"
	"    var cx = x;\n"
	"    n.o.forEach(function (c) { var cw = w * c.v / n.v; draw(c, cx, cw, y + 1); cx += cw; });\n"
	"  }\n"
	"  draw(root, 0, 100, 0);\n"
	"  return '<h2 style=\"margin-top: 14px\">Flame graph at that moment</h2><div class=\"icicle\" ' +\n"
	"    'style=\"height:' + (depth * 18) + 'px\">' + out.join('') + '</div>';\n"
	"}\n";
