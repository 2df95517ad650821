/* SPDX-License-Identifier: MIT */
/*
 * Reports as text and Markdown: the tables of sites (top sites by bytes,
 * by count, at the peak; temporary allocations) and the stacks of the
 * sites they show.  A site is numbered once ("#3") in the order the tables
 * first show it, and named the same in each: its frame, and when another
 * site shown ends on the same frame by another path, the caller where the
 * two part.  After the tables, each numbered site's whole stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"
#include "render_text_internal.h"

/* A twin's parting when its path is its twin's: told apart by a wrapper. */
#define VIA UINT_MAX

/* The tables, in the order they are printed. */
enum { T_BYTES, T_ALLOCS, T_PEAK, T_TEMPORARY, T_TABLES };

struct text_sites {
	struct render_group *g;		/* every site, by stack */
	size_t n;
	size_t *rows[T_TABLES];		/* each table's rows: indexes into g */
	size_t nrows[T_TABLES];
	size_t *num;			/* a site's number, 0 when no table shows it */
	size_t *shown;			/* the numbered sites, in their numbers' order */
	unsigned *part;			/* of each numbered site: the depth at which
					 * its path parts from a twin's, 0 for none */
	size_t nshown;
};

static const struct msc_rframe *frame_at(const struct msc_report *r, uint32_t stack, unsigned up)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);

	return s && s->attr + up < s->n ? &s->frames[s->attr + up] : NULL;
}

static int by_temporary(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;
	uint64_t tx = x->temporary > x->short_lived ? x->temporary : x->short_lived;
	uint64_t ty = y->temporary > y->short_lived ? y->temporary : y->short_lived;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	return render_by_bytes(a, b);
}

static bool in_table(const struct render_group *x, int t)
{
	switch (t) {
	case T_ALLOCS:
		return x->allocs != 0;
	case T_PEAK:
		return x->at_peak != 0;
	case T_TEMPORARY:
		return x->temporary || x->short_lived;
	default:
		return true;
	}
}

/* The rows of table t: the top sites of its order, as indexes into g. */
static int table_rows(struct text_sites *ts, struct msc_u64map *idx, int t, size_t top)
{
	static int (*const order[T_TABLES])(const void *, const void *) = {
		render_by_bytes, render_by_allocs, render_by_peak, by_temporary,
	};
	struct render_group *sorted = malloc((ts->n + 1) * sizeof(*sorted));
	size_t i, m = 0;

	ts->rows[t] = calloc(ts->n + 1, sizeof(size_t));
	if (!sorted || !ts->rows[t]) {
		free(sorted);
		return -ENOMEM;
	}
	if (ts->n)
		memcpy(sorted, ts->g, ts->n * sizeof(*sorted));
	qsort(sorted, ts->n, sizeof(*sorted), order[t]);
	for (i = 0; i < ts->n && m < top && in_table(&sorted[i], t); i++)
		ts->rows[t][m++] = *msc_u64map_get(idx, (uint64_t)sorted[i].stack + 1);
	ts->nrows[t] = m;
	free(sorted);
	return 0;
}

/* The first depth at which site a's path leaves site b's, when both end
 * on the same frame; 0 when they do not; VIA when it never does. */
static unsigned parting(const struct msc_report *r, uint32_t a, uint32_t b)
{
	char x[512], y[512];
	unsigned up;

	if (strcmp(msc_frame_label(x, sizeof(x), frame_at(r, a, 0)),
		   msc_frame_label(y, sizeof(y), frame_at(r, b, 0))))
		return 0;
	for (up = 1; up < MSC_STACK_MAX_FRAMES; up++) {
		const struct msc_rframe *fa = frame_at(r, a, up), *fb = frame_at(r, b, up);

		if (!fa && !fb)
			break;
		if (!fa || !fb || strcmp(msc_frame_label(x, sizeof(x), fa), msc_frame_label(y, sizeof(y), fb)))
			return fa ? up : 0;
	}
	/* The same path from there up: the wrappers below tell them apart. */
	return VIA;
}

/* A C++ function's name without its template arguments and parameters:
 * "std::__cxx11::basic_string::_M_mutate". */
static const char *short_fn(char *buf, size_t n, const char *fn)
{
	size_t k = 0, i, start = 0;
	int angle = 0, paren = 0;

	for (; *fn && k + 1 < n; fn++) {
		if (*fn == '<' && !paren)
			angle++;
		else if (*fn == '>' && angle && !paren)
			angle--;
		else if (*fn == '(' && !angle)
			paren++;
		else if (*fn == ')' && paren && !angle)
			paren--;
		else if (!angle && !paren)
			buf[k++] = *fn;
	}
	buf[k] = '\0';
	/* Its return type goes ("std::string std::operator+"). */
	for (i = 0; i < k; i++)
		if (buf[i] == ' ' && !(i >= 8 && !memcmp(buf + i - 8, "operator", 8)))
			start = i + 1;
	return buf + start;
}

/* What a site's allocation went through just below its frame: the
 * innermost wrapper's function, short. */
static const char *via_of(const struct msc_report *r, uint32_t stack, char *buf, size_t n)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);
	const struct msc_rframe *f = s && s->attr && s->attr <= s->n ? &s->frames[s->attr - 1] : NULL;
	char label[1024];

	if (f && f->fn) {
		const char *sh = short_fn(label, sizeof(label), f->fn);

		snprintf(buf, n, "%s", sh);
		return buf;
	}
	return msc_frame_label(label, sizeof(label), f), snprintf(buf, n, "%s", label), buf;
}

static void sites_free(struct text_sites *ts)
{
	int t;

	if (!ts)
		return;
	for (t = 0; t < T_TABLES; t++)
		free(ts->rows[t]);
	free(ts->g);
	free(ts->num);
	free(ts->shown);
	free(ts->part);
	free(ts);
}

/* The sites every table of the report shows, numbered; NULL when out of
 * memory. */
static struct text_sites *sites_of(struct ctx *c)
{
	struct text_sites *ts;
	struct msc_u64map idx;
	size_t i, j, k;
	int t;

	if (c->sites)
		return c->sites;
	ts = calloc(1, sizeof(*ts));
	if (!ts || !(ts->g = render_site_groups(c->r, &ts->n)) || msc_u64map_init(&idx, ts->n + 1)) {
		sites_free(ts);
		return NULL;
	}
	for (i = 0; i < ts->n; i++)
		msc_u64map_put(&idx, (uint64_t)ts->g[i].stack + 1, i);
	ts->num = calloc(ts->n + 1, sizeof(*ts->num));
	ts->shown = calloc(ts->n + 1, sizeof(*ts->shown));
	ts->part = calloc(ts->n + 1, sizeof(*ts->part));
	for (t = 0; t < T_TABLES && ts->num && ts->shown && ts->part; t++) {
		bool wanted = t == T_TEMPORARY ? c->o->sections & MSC_SECTION_TEMPORARY :
						 c->o->sections & MSC_SECTION_TOP;

		if (!wanted)
			continue;
		if (table_rows(ts, &idx, t, c->o->top))
			break;
		for (k = 0; k < ts->nrows[t]; k++)
			if (!ts->num[ts->rows[t][k]]) {
				ts->shown[ts->nshown++] = ts->rows[t][k];
				ts->num[ts->rows[t][k]] = ts->nshown;
			}
	}
	msc_u64map_release(&idx);
	if (t < T_TABLES) {
		sites_free(ts);
		return NULL;
	}
	/* Twins (two sites shown that end on one frame) are told apart by the
	 * first caller where their paths part, the same in every table. */
	for (i = 0; i < ts->nshown; i++)
		for (j = 0; j < ts->nshown; j++) {
			unsigned up = j == i ? 0 :
				      parting(c->r, ts->g[ts->shown[i]].stack, ts->g[ts->shown[j]].stack);

			if (up > ts->part[i])
				ts->part[i] = up;
		}
	return c->sites = ts;
}

void text_sites_release(struct ctx *c)
{
	sites_free(c->sites);
	c->sites = NULL;
}

/*
 * A site's name in a table: "#3 frame", in at most width columns of text
 * (0: any); what tells it from a twin in from ("from CALLER", "via
 * WRAPPER"), else "".
 */
static void site_name(struct ctx *c, size_t gi, char *buf, size_t n, size_t width, char *from,
		      size_t fromlen)
{
	const struct text_sites *ts = c->sites;
	size_t num = ts->num[gi];
	uint32_t stack = ts->g[gi].stack;
	unsigned up = ts->part[num - 1];
	char label[1024], caller[1024];
	int pre;

	from[0] = '\0';
	pre = snprintf(buf, n, "#%zu ", num);
	if (up == VIA) {
		via_of(c->r, stack, label, sizeof(label));
		if (c->md)
			snprintf(from, fromlen, "via `%s`", label);
		else if (width && strlen(label) + 4 > width)
			snprintf(from, fromlen, "via %.*s..", (int)(width > 10 ? width - 6 : 4), label);
		else
			snprintf(from, fromlen, "via %s", label);
	}
	if (c->md) {
		msc_frame_label(label, sizeof(label), frame_at(c->r, stack, 0));
		snprintf(buf + pre, n - (size_t)pre, "`%s`", label);
		if (up && up != VIA)
			snprintf(from, fromlen, "from `%s`", msc_frame_label(caller, sizeof(caller), frame_at(c->r, stack, up)));
		return;
	}
	text_fit(buf + pre, n - (size_t)pre, frame_at(c->r, stack, 0),
		 width ? (width > (size_t)pre + 8 ? width - (size_t)pre : 8) : 0);
	if (up && up != VIA) {
		memcpy(from, "from ", 6);
		text_fit(from + 5, fromlen - 5, frame_at(c->r, stack, up), width ? (width > 13 ? width - 5 : 8) : 0);
	}
}

/*
 * A table of sites.  Markdown has room for every column; text shows the
 * figures the table is sorted by and leaves the rest of the line to the
 * site's name.
 */
static void site_table(struct ctx *c, const char *title, int t)
{
	struct text_sites *ts = c->sites;
	char a[32], b[32], d[32], e[32], s[64], w[1100], from[1100], fl[96];
	size_t i, lead = t == T_TEMPORARY ? 38 : t == T_PEAK ? 38 : 39;

	if (title)
		heading_est(c, title);
	if (t == T_PEAK && c->r->peak) {
		/* What the column adds up to, named as the summary names it. */
		bool both = c->r->pages.mapped_peak && c->r->peak != c->r->pages.heap_peak;

		fprintf(c->out, c->md ? "What was live when %s peaked: %s at %s.\n\n" :
					"  what was live when %s peaked: %s at %s\n",
			both ? "heap+mapped" : "the heap", sz(a, sizeof(a), c->r->peak),
			seconds(b, sizeof(b), c->r->peak_ts));
	}
	if (c->md && t == T_TEMPORARY)
		fprintf(c->out, "| temporary | short-lived | of allocations | site |\n|---:|---:|---:|---|\n");
	else if (c->md)
		fprintf(c->out, "| bytes | allocations | live | at peak | sizes | site |\n"
				"|---:|---:|---:|---:|---:|---|\n");
	else if (t == T_TEMPORARY)
		fprintf(c->out, "  %11s %11s %11s  %s\n", "TEMPORARY", "SHORTLIVED", "ALLOCS", "SITE");
	else if (t == T_PEAK)
		fprintf(c->out, "  %10s %10s %12s  %s\n", "AT PEAK", "LIVE", "SIZES", "SITE");
	else
		fprintf(c->out, "  %10s %11s %12s  %s\n", "BYTES", "ALLOCS", "SIZES", "SITE");
	for (i = 0; i < ts->nrows[t]; i++) {
		size_t gi = ts->rows[t][i];
		struct render_group *x = &ts->g[gi];

		text_size_range(s, sizeof(s), x->size_lo, x->size_hi, c->md);
		site_name(c, gi, w, sizeof(w), text_room(c, 41, 20), from, sizeof(from));
		if (c->md && t == T_TEMPORARY)
			fprintf(c->out, "| %s | %s | %s | %s%s%s |\n", cnt(a, sizeof(a), x->temporary),
				cnt(b, sizeof(b), x->short_lived), cnt(d, sizeof(d), x->allocs), w,
				from[0] ? " " : "", from);
		else if (c->md)
			fprintf(c->out, "| %s | %s | %s | %s | %s | %s%s%s%s%s%s |\n", sz(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->allocs), sz(d, sizeof(d), x->live_bytes),
				sz(e, sizeof(e), x->at_peak), s, w, from[0] ? " " : "", from,
				x->pool ? " (" : "", x->pool ? render_fn_label(x, fl, sizeof(fl)) : "",
				x->pool ? ")" : "");
		else if (t == T_TEMPORARY)
			fprintf(c->out, "  %11s %11s %11s  %s\n", cnt(a, sizeof(a), x->temporary),
				cnt(b, sizeof(b), x->short_lived), cnt(d, sizeof(d), x->allocs), w);
		else if (t == T_PEAK)
			fprintf(c->out, "  %10s %10s %12s  %s\n", sz(e, sizeof(e), x->at_peak),
				sz(d, sizeof(d), x->live_bytes), s, w);
		else
			fprintf(c->out, "  %10s %11s %12s  %s\n", sz(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->allocs), s, w);
		if (!c->md && from[0])
			fprintf(c->out, "%*s  %s\n", (int)lead, "", from);
		/* Pools apart: one pool's blocks can come from the same code
		 * as another's. */
		if (!c->md && x->pool)
			fprintf(c->out, "%*s  (%s)\n", (int)lead, "", render_fn_label(x, fl, sizeof(fl)));
	}
	if (!ts->nrows[t] && t != T_TEMPORARY)
		fprintf(c->out, c->md ? "No allocations.\n" : "  no allocations\n");
}

void text_top(struct ctx *c)
{
	if (!sites_of(c))
		return;
	site_table(c, c->md ? "Top allocation sites by bytes" : "TOP SITES BY BYTES ALLOCATED", T_BYTES);
	site_table(c, c->md ? "Top allocation sites by count" : "TOP SITES BY NUMBER OF ALLOCATIONS", T_ALLOCS);
	site_table(c, c->md ? "What the peak is made of" : "TOP SITES AT THE PEAK", T_PEAK);
}

void text_temporary(struct ctx *c)
{
	struct render_totals t;
	char a[32], b[32], d[32];

	if (!sites_of(c))
		return;
	render_totals_of(c->r, &t);
	heading_est(c, c->md ? "Temporary allocations" : "TEMPORARY ALLOCATIONS");
	fprintf(c->out, c->md ? "%s of %s allocations were freed before their thread allocated again "
				"(temporary), %s within a millisecond (short-lived).\n\n" :
				"  %s of %s allocations were freed before their thread allocated again\n"
				"  (temporary), %s within a millisecond (short-lived).\n",
		cnt(a, sizeof(a), t.temporary), cnt(b, sizeof(b), t.allocs), cnt(d, sizeof(d), t.short_lived));
	site_table(c, NULL, T_TEMPORARY);
}

/* "13.8 MiB in 2,891 allocations by malloc, 4.6 MiB at the peak, 1.0 KiB
 * live at the end": what a numbered site's stack is the path of.  Text
 * that would pass its width breaks before what is held, after indent. */
static void site_figures(struct ctx *c, const struct render_group *x, size_t used, const char *indent)
{
	char a[32], b[32], fl[96], made[256], held[128] = "";

	snprintf(made, sizeof(made), "%s in %s %s by %s", sz(a, sizeof(a), x->bytes), cnt(b, sizeof(b), x->allocs),
		 plural(x->allocs, "allocation", "allocations"), render_fn_label(x, fl, sizeof(fl)));
	if (x->at_peak)
		snprintf(held, sizeof(held), "%s at the peak", sz(a, sizeof(a), x->at_peak));
	if (x->live_bytes)
		snprintf(held + strlen(held), sizeof(held) - strlen(held), "%s%s live at the end",
			 held[0] ? ", " : "", sz(a, sizeof(a), x->live_bytes));
	if (!held[0])
		fputs(made, c->out);
	else if (c->md || !c->width || used + strlen(made) + 2 + strlen(held) <= c->width)
		fprintf(c->out, "%s, %s", made, held);
	else
		fprintf(c->out, "%s\n%s%s", made, indent, held);
}

void text_site_stacks(struct ctx *c)
{
	struct text_sites *ts = c->sites;
	size_t i;

	if (!ts || !ts->nshown)
		return;
	heading_est(c, c->md ? "Stacks of the sites above" : "STACKS OF THE SITES ABOVE");
	if (!c->md)
		fprintf(c->out, "  each site's whole call path, the allocating call first; frames that\n"
				"  only pass an allocation on are marked (wrapper)\n");
	for (i = 0; i < ts->nshown; i++) {
		const struct render_group *x = &ts->g[ts->shown[i]];

		if (c->md) {
			fprintf(c->out, "%s**#%zu** ", i ? "\n" : "", i + 1);
			site_figures(c, x, 0, "");
			fputs("\n\n", c->out);
			text_print_stack(c, x->stack, "");
		} else {
			fprintf(c->out, "\n  #%-4zu", i + 1);
			site_figures(c, x, 7, "       ");
			fputc('\n', c->out);
			text_print_stack(c, x->stack, "      ");
		}
	}
}
