/* SPDX-License-Identifier: MIT */
/* Reports as flame graphs: folded stacks and SVG.  See msc_render.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"

/* ---------------------------------------------------- collapsed stacks */

struct folded {
	uint32_t stack;
	uint64_t cost;
};

/* The entry of stack in f (a new one at *n), or NULL when out of memory. */
static struct folded *folded_of(struct msc_u64map *idx, struct folded *f, size_t *n, uint32_t stack)
{
	uint64_t *s = msc_u64map_get(idx, (uint64_t)stack + 1);

	if (s)
		return &f[*s];
	if (msc_u64map_put(idx, (uint64_t)stack + 1, *n))
		return NULL;
	f[*n].stack = stack;
	return &f[(*n)++];
}

static size_t folded_costs(const struct msc_report *r, enum msc_report_cost cost, struct folded **out)
{
	struct msc_u64map idx;
	struct folded *f;
	size_t i, n = 0;

	f = calloc(r->nsites + r->nleaks + 1, sizeof(*f));
	*out = f;
	if (!f || msc_u64map_init(&idx, r->nsites + r->nleaks + 1))
		return 0;
	if (cost == MSC_COST_LEAKED) {
		for (i = 0; i < r->nleaks; i++) {
			const struct msc_rleak *l = &r->leaks[i];
			struct folded *e;

			/* An attach recording leaks nothing: its blocks live
			 * at the end (fate unknown) are what grew. */
			if (!render_leaked_kind(l->kind) &&
			    !(r->mode && !strcmp(r->mode, "attach") && !strcmp(l->kind, "unknown")))
				continue;
			e = folded_of(&idx, f, &n, l->stack);
			if (!e)
				goto oom;
			e->cost += l->bytes;
		}
	} else {
		for (i = 0; i < r->nsites; i++) {
			const struct msc_rsite *x = &r->sites[i];
			struct folded *e;

			e = folded_of(&idx, f, &n, x->stack);
			if (!e)
				goto oom;
			e->cost += cost == MSC_COST_ALLOCS ? x->allocs :
				   cost == MSC_COST_BYTES  ? x->bytes :
							     x->at_peak;
		}
	}
	msc_u64map_release(&idx);
	return n;
oom:
	msc_u64map_release(&idx);
	return 0;
}

/* A frame's name in a folded stack: no ';' (the separator). */
static void fold_name(char *buf, size_t n, const struct msc_rframe *f)
{
	char *p;

	if (f->fn)
		snprintf(buf, n, "%s", f->fn);
	else
		snprintf(buf, n, "[%s]", f->obj ? msc_base_name(f->obj) : "unknown");
	for (p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ',';
}

int render_collapsed(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct folded *f;
	size_t n = folded_costs(r, o->cost, &f), i;
	char name[512];

	for (i = 0; i < n; i++) {
		const struct msc_rstack *s = msc_report_stack(r, f[i].stack);
		int k;
		bool first = true;

		if (!f[i].cost)
			continue;
		for (k = s ? (int)s->n - 1 : -1; k >= 0; k--) {
			fold_name(name, sizeof(name), &s->frames[k]);
			fprintf(out, "%s%s", first ? "" : ";", name);
			first = false;
		}
		if (first)
			fputs("[no stack]", out);
		fprintf(out, " %" PRIu64 "\n", f[i].cost);
	}
	free(f);
	return 0;
}

/* ------------------------------------------------------------------ svg */

struct node {
	const char *name;
	uint64_t cost;
	struct node *child, *next;
};

static struct node *child_of(struct msc_arena *a, struct node *parent, const char *name)
{
	struct node *c;

	for (c = parent->child; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	c = msc_arena_zalloc(a, sizeof(*c));
	if (!c)
		return NULL;
	c->name = msc_arena_strdup(a, name);
	c->next = parent->child;
	parent->child = c;
	return c;
}

/* Text for XML: escaped, and well-formed whatever the bytes (a byte that
 * is not UTF-8, or a control character XML forbids, becomes U+FFFD). */
static void xml(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = render_utf8_len(p);

		switch (*p) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if (!n || (*p < 0x20 && *p != '\t' && *p != '\n'))
				fputs("\xef\xbf\xbd", out);
			else
				fwrite(p, 1, n, out);
		}
		p += n ? n : 1;
	}
}

static int depth_of(const struct node *n)
{
	const struct node *c;
	int d = 0;

	for (c = n->child; c; c = c->next) {
		int x = depth_of(c);

		if (x > d)
			d = x;
	}
	return d + 1;
}

#define SVG_W 1200.0
#define SVG_ROW 17
#define SVG_TOP 34

static void svg_nodes(FILE *out, const struct node *n, double x, int depth, int height, uint64_t total,
		      const char *unit)
{
	const struct node *c;
	double w = (double)n->cost / (double)total;
	uint64_t h = msc_hash_bytes(n->name, strlen(n->name), 7);
	int y = height - (depth + 1) * SVG_ROW;
	char cost[32];

	if (depth >= 0) {
		if (!strcmp(unit, "bytes"))
			msc_fmt_size(cost, sizeof(cost), (int64_t)n->cost);
		else
			msc_fmt_count(cost, sizeof(cost), (int64_t)n->cost);
		fprintf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\"><title>", x, w, depth);
		xml(out, n->name);
		fprintf(out, " (%s %s, %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
			     "rx=\"2\" fill=\"rgb(%u,%u,%u)\"/><text x=\"%.2f\" y=\"%d\"></text></g>\n",
			cost, unit, 100.0 * w, x * SVG_W, y, w * SVG_W, SVG_ROW - 1, 200 + (unsigned)(h % 55),
			80 + (unsigned)((h >> 8) % 130), 40 + (unsigned)((h >> 16) % 50), x * SVG_W + 3,
			y + SVG_ROW - 5);
	}
	for (c = n->child; c; c = c->next) {
		svg_nodes(out, c, x, depth + 1, height, total, unit);
		x += (double)c->cost / (double)total;
	}
}

static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"var W = 1200, frames, details;\n"
	"function init() {\n"
	"  frames = document.querySelectorAll('g.f');\n"
	"  details = document.getElementById('details');\n"
	"  frames.forEach(function (g) {\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"    g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"  });\n"
	"  document.getElementById('unzoom').addEventListener('click', function () { show(0, 1, 0); });\n"
	"  show(0, 1, 0);\n"
	"}\n"
	"function label(g, w) {\n"
	"  var name = g.querySelector('title').textContent.replace(/ \\([^(]*\\)$/, '');\n"
	"  var n = Math.floor((w - 6) / 7);\n"
	"  return n < 3 ? '' : name.length <= n ? name : name.substring(0, n - 2) + '..';\n"
	"}\n"
	"function show(x0, w0, d0) {\n"
	"  frames.forEach(function (g) {\n"
	"    var x = +g.dataset.x, w = +g.dataset.w, d = +g.dataset.d;\n"
	"    var r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"    var inside = x >= x0 - 1e-9 && x + w <= x0 + w0 + 1e-9;\n"
	"    var above = d < d0 && x <= x0 + 1e-9 && x + w >= x0 + w0 - 1e-9;\n"
	"    if (!inside && !above) { g.style.display = 'none'; return; }\n"
	"    g.style.display = '';\n"
	"    var nx = above ? 0 : (x - x0) / w0 * W, nw = above ? W : w / w0 * W;\n"
	"    r.setAttribute('x', nx); r.setAttribute('width', nw);\n"
	"    r.setAttribute('fill-opacity', above ? 0.5 : 1);\n"
	"    t.setAttribute('x', nx + 3); t.textContent = label(g, nw);\n"
	"  });\n"
	"}\n"
	"function zoom(g) { show(+g.dataset.x, +g.dataset.w, +g.dataset.d); }\n"
	"]]></script>\n";

int render_svg(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	static const char *const unit_of[] = { "bytes", "allocations", "bytes", "bytes" };
	static const char *const what[] = { "leaked bytes", "allocations", "bytes allocated",
					     "bytes at the peak" };
	struct msc_arena a;
	struct node root = { "all", 0, NULL, NULL };
	struct folded *f;
	size_t n = folded_costs(r, o->cost, &f), i;
	char name[512], total_s[32];
	int height;

	msc_arena_init(&a);
	for (i = 0; i < n; i++) {
		const struct msc_rstack *s = msc_report_stack(r, f[i].stack);
		struct node *cur = &root;
		int k;

		if (!f[i].cost)
			continue;
		root.cost += f[i].cost;
		for (k = s ? (int)s->n - 1 : -1; k >= 0 && cur; k--) {
			fold_name(name, sizeof(name), &s->frames[k]);
			cur = child_of(&a, cur, name);
			if (cur)
				cur->cost += f[i].cost;
		}
	}
	free(f);
	height = (depth_of(&root) + 1) * SVG_ROW + SVG_TOP + 20;
	if (!strcmp(unit_of[o->cost], "bytes"))
		msc_fmt_size(total_s, sizeof(total_s), (int64_t)root.cost);
	else
		msc_fmt_count(total_s, sizeof(total_s), (int64_t)root.cost);
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		     "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init()\">\n"
		     "<style>g.f:hover rect { stroke: #000; stroke-width: 0.5; } g.f { cursor: pointer; }\n"
		     "text { font-family: monospace; font-size: 12px; } #unzoom { cursor: pointer; }</style>\n",
		(int)SVG_W, height, (int)SVG_W, height);
	fputs(svg_script, out);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf5\"/>\n"
		     "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">", (int)SVG_W / 2);
	xml(out, o->title ? o->title : (r->argv ? r->argv : "memscope"));
	fprintf(out, ": %s %s</text>\n<text id=\"unzoom\" x=\"8\" y=\"20\">[reset zoom]</text>\n"
		     "<text id=\"details\" x=\"8\" y=\"%d\"> </text>\n<g>\n", total_s, what[o->cost], height - 6);
	if (root.cost)
		svg_nodes(out, &root, 0, -1, height - 20, root.cost, unit_of[o->cost]);
	else
		fprintf(out, "<text x=\"%d\" y=\"60\" text-anchor=\"middle\">nothing to show</text>\n",
			(int)SVG_W / 2);
	fprintf(out, "</g>\n</svg>\n");
	msc_arena_release(&a);
	return 0;
}

