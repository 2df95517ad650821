/* SPDX-License-Identifier: MIT */
/*
 * Reports as text and Markdown: the tables of sites (top sites by bytes,
 * by count, at the peak; temporary allocations) and the stacks of the
 * sites they show.  A site is numbered once ("#3") in the order the tables
 * first show it, and named the same in each: its frame, and when another
 * site shown ends on the same frame by another path, what tells them
 * apart (render_parts: the caller where the two part, or the wrapper
 * below).  After the tables, each numbered site's whole stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"
#include "render_text_internal.h"

/* The tables, in the order they are printed (T_LIVE_AT: --live-at's). */
enum { T_BYTES, T_ALLOCS, T_PEAK, T_LIVE_AT, T_TEMPORARY, T_TABLES };

struct text_sites {
	struct render_group *g;		/* every site, by stack */
	size_t n;
	size_t *rows[T_TABLES];		/* each table's rows: indexes into g */
	size_t nrows[T_TABLES];
	size_t *num;			/* a site's number, 0 when no table shows it */
	size_t *shown;			/* the numbered sites, in their numbers' order */
	struct render_part *parts;	/* of each numbered site: what tells it
					 * from a twin */
	size_t nshown;
};

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
	case T_LIVE_AT:
		return x->live_at != 0;
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
		render_by_bytes, render_by_allocs, render_by_peak, render_by_live_at, by_temporary,
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
	free(ts->parts);
	free(ts);
}

/* The sites every table of the report shows, numbered; NULL when out of
 * memory. */
static struct text_sites *sites_of(struct ctx *c)
{
	struct text_sites *ts;
	struct msc_u64map idx;
	uint32_t *stacks;
	size_t i, k;
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
	for (t = 0; t < T_TABLES && ts->num && ts->shown; t++) {
		bool wanted = t == T_TEMPORARY ? c->o->sections & MSC_SECTION_TEMPORARY :
			      t == T_LIVE_AT ? c->r->live_at && (c->o->sections & MSC_SECTION_TOP) :
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
	/* Twins (two sites shown that end on one frame) are told apart the
	 * same way in every table. */
	stacks = calloc(ts->nshown + 1, sizeof(*stacks));
	ts->parts = calloc(ts->nshown + 1, sizeof(*ts->parts));
	if (!stacks || !ts->parts) {
		free(stacks);
		sites_free(ts);
		return NULL;
	}
	for (i = 0; i < ts->nshown; i++)
		stacks[i] = ts->g[ts->shown[i]].stack;
	render_parts(c->r, stacks, ts->nshown, ts->parts);
	free(stacks);
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
	const struct render_part *part = &ts->parts[num - 1];
	char label[1024], caller[512], in[520] = "";
	int pre;

	from[0] = '\0';
	pre = snprintf(buf, n, "#%zu ", num);
	if (render_named_caller(c->r, ts->g[gi].stack, caller, sizeof(caller)))
		snprintf(in, sizeof(in), " under %s", caller);
	if (c->md) {
		snprintf(buf + pre, n - (size_t)pre, "`%s%s`",
			 msc_frame_label(label, sizeof(label), render_attributed(c->r, ts->g[gi].stack)), in);
		if (part->from)
			snprintf(from, fromlen, "from `%s`", msc_frame_label(label, sizeof(label), part->from));
		else if (part->via[0])
			snprintf(from, fromlen, "via `%s`", part->via);
		return;
	}
	text_fit(buf + pre, n - (size_t)pre, render_attributed(c->r, ts->g[gi].stack),
		 width ? (width > (size_t)pre + 8 ? width - (size_t)pre : 8) : 0);
	/* An unnamed frame: the function above it, on the line below unless
	 * a twin's parting is there. */
	if (in[0] && !part->from && !part->via[0]) {
		if (width && strlen(in) > width)
			snprintf(from, fromlen, "%.*s..", (int)(width > 10 ? width - 3 : 7), in + 1);
		else
			snprintf(from, fromlen, "%s", in + 1);
	}
	if (part->from) {
		memcpy(from, "from ", 6);
		text_fit(from + 5, fromlen - 5, part->from, width ? (width > 13 ? width - 5 : 8) : 0);
	} else if (part->via[0]) {
		if (width && strlen(part->via) + 4 > width)
			snprintf(from, fromlen, "via %.*s..", (int)(width > 10 ? width - 6 : 4), part->via);
		else
			snprintf(from, fromlen, "via %s", part->via);
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
	size_t i, lead = t == T_TEMPORARY ? 38 : t == T_PEAK || t == T_LIVE_AT ? 38 : 39;
	uint64_t shown = 0;

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
	if (t == T_LIVE_AT) {
		const struct msc_rtimeline *tl = &c->r->timeline;
		size_t p = c->r->live_at_point;

		fprintf(c->out, c->md ? "What was live at %s%s, %s%s: %s of heap, %s mapped.\n\n" :
					"  what was live at %s%s, %s%s: %s of heap, %s mapped\n",
			c->r->live_at_time ? "" : "mark ", c->r->live_at,
			c->r->live_at_time ? "the timeline's point at " : "", seconds(a, sizeof(a), tl->ts[p]),
			sz(b, sizeof(b), tl->heap[p]), sz(d, sizeof(d), tl->mapped[p]));
	}
	if (c->md && t == T_TEMPORARY)
		fprintf(c->out, "| temporary | short-lived | of allocations | site |\n|---:|---:|---:|---|\n");
	else if (c->md && t == T_LIVE_AT)
		fprintf(c->out, "| at %s | live at the end | sizes | site |\n|---:|---:|---:|---|\n", c->r->live_at);
	else if (c->md)
		fprintf(c->out, "| bytes | allocations | live | at peak | sizes | site |\n"
				"|---:|---:|---:|---:|---:|---|\n");
	else if (t == T_TEMPORARY)
		fprintf(c->out, "  %11s %11s %11s  %s\n", "TEMPORARY", "SHORTLIVED", "ALLOCS", "SITE");
	else if (t == T_PEAK)
		fprintf(c->out, "  %10s %10s %12s  %s\n", "AT PEAK", "LIVE", "SIZES", "SITE");
	else if (t == T_LIVE_AT)
		fprintf(c->out, "  %10s %10s %12s  %s\n", "THEN", "LIVE", "SIZES", "SITE");
	else
		fprintf(c->out, "  %10s %11s %12s  %s\n", "BYTES", "ALLOCS", "SIZES", "SITE");
	for (i = 0; i < ts->nrows[t]; i++) {
		size_t gi = ts->rows[t][i];
		struct render_group *x = &ts->g[gi];

		text_size_range(s, sizeof(s), x->size_lo, x->size_hi, c->md);
		site_name(c, gi, w, sizeof(w), text_room(c, 41, 20), from, sizeof(from));
		shown += t == T_LIVE_AT ? x->live_at : 0;
		if (c->md && t == T_TEMPORARY)
			fprintf(c->out, "| %s | %s | %s | %s%s%s |\n", cnt(a, sizeof(a), x->temporary),
				cnt(b, sizeof(b), x->short_lived), cnt(d, sizeof(d), x->allocs), w,
				from[0] ? " " : "", from);
		else if (c->md && t == T_LIVE_AT)
			fprintf(c->out, "| %s | %s | %s | %s%s%s |\n", sz(a, sizeof(a), x->live_at),
				sz(d, sizeof(d), x->live_bytes), s, w, from[0] ? " " : "", from);
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
		else if (t == T_LIVE_AT)
			fprintf(c->out, "  %10s %10s %12s  %s\n", sz(e, sizeof(e), x->live_at),
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
	if (t == T_LIVE_AT) {
		/* The heap then, less what the rows above held. */
		uint64_t heap = c->r->timeline.heap[c->r->live_at_point];

		if (heap > shown)
			fprintf(c->out, c->md ? "| %s | | | all other sites |\n" : "  %10s %10s %12s  all other sites\n",
				sz(a, sizeof(a), heap - shown), "", "");
		return;
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
	if (c->r->live_at) {
		char title[96];

		snprintf(title, sizeof(title), c->md ? "What was live at %s%s" : "TOP SITES AT %s%s",
			 c->r->live_at_time ? "" : c->md ? "mark " : "MARK ", c->r->live_at);
		site_table(c, title, T_LIVE_AT);
	}
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
