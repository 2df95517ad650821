/* SPDX-License-Identifier: MIT */
/*
 * Reports as text and Markdown of what ms-diff and ms-snap write and of
 * --poll recordings: the growth between two streams, processes and their
 * mappings, rss over time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_diff.h"
#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"
#include "render_text_internal.h"

/* At most width columns of a name whose end says the most (a path): the
 * start gives way, "...x86_64-linux-gnu/libc.so.6". */
static const char *tail_fit(char *buf, size_t n, const char *name, size_t width)
{
	size_t len = name ? strlen(name) : 0;

	if (!name)
		name = "?";
	if (len <= width || width < 4)
		snprintf(buf, n, "%.*s", (int)width, name);
	else
		snprintf(buf, n, "...%s", name + len - (width - 3));
	return buf;
}

/* "PID COMM PATH" in at most width columns: the path gives way from its
 * start, as the file name at its end says the most (tail_fit). */
static const char *path_fit(char *buf, size_t n, int pid, const char *comm, const char *path,
			    size_t width)
{
	size_t len;

	snprintf(buf, n, "%d %s ", pid, comm ? comm : "");
	len = strlen(buf);
	if (len < width)
		tail_fit(buf + len, n - len, path ? path : "", width - len);
	else if (width < n)
		buf[width] = '\0';
	return buf;
}

/* One figure of a delta: bytes, or a count for counted metrics. */
static char *figure(char *buf, size_t n, const char *metric, int64_t v, bool sign)
{
	char t[32];

	if (metric && msc_metric_is_count(metric))
		msc_fmt_count(t, sizeof(t), v);
	else
		msc_fmt_size(t, sizeof(t), v);
	snprintf(buf, n, "%s%s", sign && v > 0 ? "+" : "", t);
	return buf;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int cmp_change(const void *a, const void *b)
{
	const struct msc_rdelta *x = *(const struct msc_rdelta *const *)a;
	const struct msc_rdelta *y = *(const struct msc_rdelta *const *)b;

	return x->change != y->change ? (x->change > y->change ? -1 : 1) : 0;
}

struct dgroup {
	const char *key, *metric;
	size_t first;			/* appearance, for ties */
	int rank, mrank;
};

static int key_rank(const char *key)
{
	static const char *const order[] = { "process", "mapping", "leak", "site" };
	unsigned i;

	for (i = 0; key && i < ARRAY_SIZE(order); i++)
		if (!strcmp(order[i], key))
			return (int)i;
	return (int)ARRAY_SIZE(order);
}

static int cmp_dgroup(const void *a, const void *b)
{
	const struct dgroup *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->mrank != y->mrank)
		return x->mrank - y->mrank;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The totals of the programs of two recordings: one table, all metrics. */
static void program_table(struct ctx *c, const struct dgroup *grp, size_t ngrp)
{
	struct msc_report *r = c->r;
	char a[40], b[40], d[40], w[64];
	size_t i, k;

	heading(c, c->md ? "Program totals" : "PROGRAM TOTALS");
	if (c->md)
		fprintf(c->out, "| program | metric | before | after | change |\n|---|---|---:|---:|---:|\n");
	for (k = 0; k < ngrp; k++) {
		if (grp[k].rank != 0)
			continue;
		for (i = 0; i < r->ndeltas; i++) {
			const struct msc_rdelta *y = &r->deltas[i];

			if (y->pid || !same(y->key, grp[k].key) || !same(y->metric, grp[k].metric))
				continue;
			figure(a, sizeof(a), y->metric, y->before, false);
			figure(b, sizeof(b), y->metric, y->after, false);
			figure(d, sizeof(d), y->metric, y->change, true);
			fprintf(c->out, c->md ? "| `%s` | %s | %s | %s | %s |\n" : "  %-16s %-14s %11s -> %-11s %11s\n",
				c->md ? (y->comm ? y->comm : "?") : tail_fit(w, sizeof(w), y->comm, 16), y->metric ? y->metric : "?", a, b, d);
		}
	}
}

/*
 * The deltas of ms-diff, grouped by what changed (programs or processes,
 * mappings, leaks, sites) and by metric in the order ms-diff compared
 * them, largest growth first; sites and leaks with their stacks.
 */
void text_deltas(struct ctx *c)
{
	struct msc_report *r = c->r;
	const struct msc_rdelta **g = calloc(r->ndeltas + 1, sizeof(*g));
	struct dgroup *grp = calloc(r->ndeltas + 1, sizeof(*grp));
	char a[40], b[40], d[40], what[512], title[160];
	size_t i, j, k, n, ngrp = 0;
	bool programs = false;

	if (!g || !grp)
		goto out;
	for (i = 0; i < r->ndeltas; i++) {
		const struct msc_rdelta *x = &r->deltas[i];

		for (k = 0; k < ngrp; k++)
			if (same(grp[k].key, x->key) && same(grp[k].metric, x->metric))
				break;
		if (k < ngrp)
			continue;
		grp[ngrp].key = x->key;
		grp[ngrp].metric = x->metric;
		grp[ngrp].first = i;
		grp[ngrp].rank = key_rank(x->key);
		grp[ngrp].mrank = (int)r->ndiff_metrics;
		for (j = 0; j < r->ndiff_metrics; j++)
			if (same(r->diff_metrics[j], x->metric))
				grp[ngrp].mrank = (int)j;
		ngrp++;
		/* Recordings compare programs (no pid), not processes. */
		programs |= x->key && !strcmp(x->key, "process") && !x->pid;
	}
	qsort(grp, ngrp, sizeof(*grp), cmp_dgroup);
	if (programs)
		program_table(c, grp, ngrp);
	for (k = 0; k < ngrp; k++) {
		const char *key = grp[k].key ? grp[k].key : "?";
		bool stacked = !strcmp(key, "site") || !strcmp(key, "leak");

		if (programs && grp[k].rank == 0)
			continue;
		for (n = 0, i = 0; i < r->ndeltas; i++)
			if (same(r->deltas[i].key, grp[k].key) && same(r->deltas[i].metric, grp[k].metric))
				g[n++] = &r->deltas[i];
		qsort(g, n, sizeof(*g), cmp_change);
		snprintf(title, sizeof(title), "%s: %s",
			 grp[k].rank == 0 ? "Processes" : grp[k].rank == 1 ? "Mappings" :
			 grp[k].rank == 2 ? "Leaks" : grp[k].rank == 3 ? "Sites" : key,
			 grp[k].metric ? grp[k].metric : "?");
		if (!c->md)
			for (j = 0; title[j]; j++)
				title[j] = (char)(title[j] >= 'a' && title[j] <= 'z' ? title[j] - 32 : title[j]);
		heading(c, title);
		if (c->md && !stacked)
			fprintf(c->out, "| change | before | after | what |\n|---:|---:|---:|---|\n");
		for (j = 0; j < n && j < c->o->top; j++) {
			const struct msc_rdelta *y = g[j];
			const char *st = y->status && strcmp(y->status, "changed") ? y->status : NULL;
			char tag[24] = "";
			/* Text rows end at column 80: what gives way, the end of
			 * a mapping's path (the file name) and a frame's file and
			 * line last. */
			size_t room = c->md ? sizeof(what) - 1 : 38;

			if (st)
				snprintf(tag, sizeof(tag), " (%s)", st);
			room = room > strlen(tag) + 12 ? room - strlen(tag) : 12;
			if (stacked)
				text_fit(what, sizeof(what), render_attributed(r, y->stack), room);
			else if (!strcmp(key, "mapping"))
				path_fit(what, sizeof(what), y->pid, y->comm, y->name, room);
			else
				snprintf(what, sizeof(what), "%d %.*s", y->pid, (int)room, y->comm ? y->comm : "");
			figure(a, sizeof(a), y->metric, y->before, false);
			figure(b, sizeof(b), y->metric, y->after, false);
			figure(d, sizeof(d), y->metric, y->change, true);
			if (c->md && stacked) {
				fprintf(c->out, "%s%zu. **%s** (%s → %s%s%s) at `%s`\n\n", j ? "\n" : "",
					j + 1, d, a, b, st ? ", " : "", st ? st : "", what);
				text_print_stack(c, y->stack, "   ");
			} else if (c->md) {
				fprintf(c->out, "| %s | %s | %s | `%s`%s |\n", d, a, b, what, tag);
			} else {
				fprintf(c->out, "  %11s %11s -> %-11s %s%s\n", d, a, b, what, tag);
				if (stacked)
					text_print_stack(c, y->stack, "      ");
			}
		}
		if (n > c->o->top)
			fprintf(c->out, c->md ? "\n_%zu more not shown (--top)._\n" : "  (%zu more not shown)\n",
				n - c->o->top);
	}
	if (!r->ndeltas)
		fprintf(c->out, c->md ? "\nNo changes.\n" : "\n  no changes\n");
out:
	free(g);
	free(grp);
}

void text_processes(struct ctx *c)
{
	struct msc_report *r = c->r;
	char a[32], b[32], d[32], w[64];
	size_t i;

	heading(c, c->md ? "Processes" : "PROCESSES");
	if (c->md)
		fprintf(c->out, "| pid | process | rss | pss | swap |\n|---:|---|---:|---:|---:|\n");
	else
		fprintf(c->out, "  %7s %-24s %11s %11s %11s\n", "PID", "PROCESS", "RSS", "PSS", "SWAP");
	for (i = 0; i < r->nprocs && i < c->o->top; i++) {
		const struct msc_rproc *p = &r->procs[i];

		fprintf(c->out, c->md ? "| %d | %s | %s | %s | %s |\n" : "  %7d %-24s %11s %11s %11s\n", p->pid,
			c->md ? (p->comm ? p->comm : "?") : tail_fit(w, sizeof(w), p->comm, 24), sz(a, sizeof(a), p->rss), p->has_pss ? sz(b, sizeof(b), p->pss) : "-",
			sz(d, sizeof(d), p->swap));
	}
	if (r->nmaps) {
		heading(c, c->md ? "Mappings" : "MAPPINGS");
		if (c->md)
			fprintf(c->out, "| pid | mapping | kind | rss | pss | swap |\n|---:|---|---|---:|---:|---:|\n");
		else
			fprintf(c->out, "  %7s %-32s %-7s %10s %10s %10s\n", "PID", "MAPPING", "KIND", "RSS", "PSS",
				"SWAP");
		for (i = 0; i < r->nmaps && i < c->o->top; i++) {
			const struct msc_rmapping *m = &r->maps[i];

			fprintf(c->out, c->md ? "| %d | `%s` | %s | %s | %s | %s |\n" :
						"  %7d %-32s %-7s %10s %10s %10s\n",
				m->pid, c->md ? (m->name ? m->name : "?") : tail_fit(w, sizeof(w), m->name, 32), m->kind ? m->kind : "", sz(a, sizeof(a), m->rss),
				sz(b, sizeof(b), m->pss), sz(d, sizeof(d), m->swap));
		}
	}
}

/* A mapping group of a --poll recording: its rss first and last seen. */
struct mgrowth {
	const char *name, *kind;
	uint64_t first, last;
};

static int cmp_mgrowth(const void *a, const void *b)
{
	const struct mgrowth *x = a, *y = b;
	int64_t dx = (int64_t)(x->last - x->first), dy = (int64_t)(y->last - y->first);

	return dx != dy ? (dx > dy ? -1 : 1) : strcmp(x->name, y->name);
}

static void poll_row(struct ctx *c, const char *what, uint64_t first, uint64_t last)
{
	char a[32], b[32], d[32];

	sz(a, sizeof(a), first);
	sz(b, sizeof(b), last);
	figure(d, sizeof(d), "rss", (int64_t)(last - first), true);
	if (c->md)
		fprintf(c->out, "| %s | %s | %s | %s |\n", what, a, b, d);
	else
		fprintf(c->out, "  %-5s %12s -> %-12s %12s\n", what, a, b, d);
}

/* A --poll recording: rss over time and the growth of each mapping group. */
void text_poll_view(struct ctx *c)
{
	struct msc_report *r = c->r;
	const struct msc_rsample *s0 = r->nsamples ? &r->samples[0] : NULL;
	const struct msc_rsample *s1 = r->nsamples ? &r->samples[r->nsamples - 1] : NULL;
	struct mgrowth *g = calloc(r->nmaps + 1, sizeof(*g));
	struct msc_strmap idx;
	uint64_t peak = 0;
	char a[32], b[32], d[32], e[32], w[64];
	size_t i, n = 0, shown = 0;

	if (!g || msc_strmap_init(&idx, r->nmaps + 1)) {
		free(g);
		return;
	}
	for (i = 0; i < r->nsamples; i++)
		if (r->samples[i].rss > peak)
			peak = r->samples[i].rss;
	fprintf(c->out, c->md ? "## memscope poll report: `%s` (pid %d)\n\n" : "memscope poll report: %s (pid %d)\n",
		r->argv ? r->argv : "?", r->pid);
	if (r->start)
		fprintf(c->out, c->md ? "Polled from %s" : "polled from %s", r->start);
	if (r->complete)
		fprintf(c->out, ", %s, %s", seconds(a, sizeof(a), r->duration),
			r->reason && !strcmp(r->reason, "exit") ? "until the process ended" : "then stopped");
	fprintf(c->out, c->md ? ".\n\n| | first | last | change |\n|---|---:|---:|---:|\n" : "\n\n");
	if (s0) {
		poll_row(c, "rss", s0->rss, s1->rss);
		poll_row(c, "pss", s0->pss, s1->pss);
		poll_row(c, "swap", s0->swap, s1->swap);
		fprintf(c->out, c->md ? "\nPeak rss %s; %zu %s.\n" : "  peak rss %s; %zu %s\n",
			sz(e, sizeof(e), peak), r->nsamples, plural(r->nsamples, "sample", "samples"));
	}
	if (!r->complete)
		fprintf(c->out, c->md ? "\n> **The stream was cut short** (no end record).\n" :
					"\n  THE STREAM WAS CUT SHORT (no end record)\n");
	if (c->o->sections & MSC_SECTION_TIMELINE)
		text_timeline(c);

	for (i = 0; i < r->nmaps; i++) {
		const struct msc_rmapping *m = &r->maps[i];
		uintptr_t at;

		if (!m->name || (r->pid && m->pid != r->pid))
			continue;
		at = (uintptr_t)msc_strmap_get(&idx, m->name);
		if (!at) {
			g[n] = (struct mgrowth){ m->name, m->kind ? m->kind : "", m->rss, m->rss };
			if (msc_strmap_put(&idx, m->name, (void *)(uintptr_t)++n))
				break;
			continue;
		}
		g[at - 1].last = m->rss;
	}
	qsort(g, n, sizeof(*g), cmp_mgrowth);
	heading(c, c->md ? "Growth by mapping" : "GROWTH BY MAPPING");
	if (c->md)
		fprintf(c->out, "| mapping | kind | first rss | last rss | change |\n|---|---|---:|---:|---:|\n");
	else
		fprintf(c->out, "  %-34s %-7s %11s %11s %11s\n", "MAPPING", "KIND", "FIRST RSS", "LAST RSS",
			"CHANGE");
	for (i = 0; i < n && shown < c->o->top; i++) {
		if (g[i].last == g[i].first)
			continue;
		shown++;
		fprintf(c->out, c->md ? "| `%s` | %s | %s | %s | %s |\n" : "  %-34s %-7s %11s %11s %11s\n",
			c->md ? g[i].name : tail_fit(w, sizeof(w), g[i].name, 34), g[i].kind, sz(a, sizeof(a), g[i].first), sz(b, sizeof(b), g[i].last),
			figure(d, sizeof(d), "rss", (int64_t)(g[i].last - g[i].first), true));
	}
	if (!shown)
		fprintf(c->out, c->md ? "No mapping changed.\n" : "  no mapping changed\n");
	msc_strmap_release(&idx);
	free(g);
}

/* What a diff compared, when, and its total. */
void text_growth_header(struct ctx *c)
{
	struct msc_report *r = c->r;
	char a[40], b[40], d[40], later[40] = "", pct[32] = "";
	int64_t change = msc_sat_sub_i64(r->diff_after, r->diff_before);

	fprintf(c->out, c->md ? "## memscope growth report\n" : "memscope growth report\n");
	if (r->complete && r->diff_has_elapsed)
		snprintf(later, sizeof(later), " (%.1f s later)", (double)r->diff_elapsed / 1e9);
	if (r->before && r->after)
		fprintf(c->out, c->md ? "\n`%s` → `%s`%s\n" : "%s -> %s%s\n", r->before, r->after, later);
	if (!r->complete || !r->diff_metric)
		return;
	if (r->diff_before)
		snprintf(pct, sizeof(pct), ", %+.1f%%", 100.0 * (double)change / (double)r->diff_before);
	fprintf(c->out, c->md ? "\n**Total %s: %s → %s (%s%s)**\n" : "total %s: %s -> %s (%s%s)\n",
		r->diff_metric, figure(a, sizeof(a), r->diff_metric, r->diff_before, false),
		figure(b, sizeof(b), r->diff_metric, r->diff_after, false),
		figure(d, sizeof(d), r->diff_metric, change, true), pct);
	if (r->diff_paired)
		fprintf(c->out, c->md ? "\nCompared across names: %s.\n" : "compared across names: %s\n",
			r->diff_paired);
	if (r->diff_new || r->diff_gone)
		fprintf(c->out, c->md ? "\n%" PRIu64 " new and %" PRIu64 " exited processes.\n" :
					"%" PRIu64 " new and %" PRIu64 " exited processes\n",
			r->diff_new, r->diff_gone);
}
