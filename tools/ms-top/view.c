/* SPDX-License-Identifier: MIT */
/* ms-top's view: the rows of a sample, filtered, sorted and as a tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "ui.h"

/* ------------------------------------------------------------ the view */

static struct ui *sort_ui;	/* for the comparison functions */

static int cmp_val(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_sval(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_entries(const void *pa, const void *pb)
{
	const struct top_entry *a = *(const struct top_entry *const *)pa;
	const struct top_entry *b = *(const struct top_entry *const *)pb;
	int c = 0;

	switch (sort_ui->sort) {
	case C_PID:
		break;
	case C_USER:
		c = strcmp(a->p->user, b->p->user);
		break;
	case C_RSS:
		c = cmp_val(a->rss, b->rss);
		break;
	case C_PSS:
		c = cmp_val(a->pss, b->pss);
		break;
	case C_USS:
		c = cmp_val(a->uss, b->uss);
		break;
	case C_SWAP:
		c = cmp_val(a->swap, b->swap);
		break;
	case C_GROWTH:
		c = cmp_sval(a->growth, b->growth);
		break;
	case C_RECENT:
		c = cmp_sval(a->recent, b->recent);
		break;
	case C_CMD:
		c = strcmp(a->p->cmd, b->p->cmd);
		break;
	}
	if (!c)
		c = a->pid < b->pid ? -1 : a->pid > b->pid;
	if (cols[sort_ui->sort].desc)
		c = -c;
	return sort_ui->reverse ? -c : c;
}

static int cmp_pid(const void *pa, const void *pb)
{
	const struct top_entry *a = *(const struct top_entry *const *)pa;
	const struct top_entry *b = *(const struct top_entry *const *)pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool matches(const struct ui *u, const struct top_entry *e)
{
	const char *f = u->filter;

	if (!*f)
		return true;
	if (all_digits(f) && e->pid == atoi(f))
		return true;
	return strcasestr(e->p->cmd, f) || strcasestr(e->p->comm, f);
}

static int grow_view(struct ui *u, size_t n)
{
	size_t cap = u->rows_cap;

	if (n <= cap)
		return 0;
	while (cap < n)
		cap = cap ? cap * 2 : 1024;
	u->rows = realloc(u->rows, cap * sizeof(*u->rows));
	u->depth = realloc(u->depth, cap * sizeof(*u->depth));
	u->last = realloc(u->last, cap * sizeof(*u->last));
	u->byp = realloc(u->byp, cap * sizeof(*u->byp));
	u->first_child = realloc(u->first_child, cap * sizeof(*u->first_child));
	u->next_sibling = realloc(u->next_sibling, cap * sizeof(*u->next_sibling));
	u->stack = realloc(u->stack, cap * sizeof(*u->stack));
	u->is_child = realloc(u->is_child, cap * sizeof(*u->is_child));
	u->seen = realloc(u->seen, cap * sizeof(*u->seen));
	u->sorted = realloc(u->sorted, cap * sizeof(*u->sorted));
	u->node_depth = realloc(u->node_depth, cap * sizeof(*u->node_depth));
	u->node_last = realloc(u->node_last, cap * sizeof(*u->node_last));
	if (!u->rows || !u->depth || !u->last || !u->byp || !u->first_child ||
	    !u->next_sibling || !u->stack || !u->is_child || !u->seen || !u->sorted ||
	    !u->node_depth || !u->node_last)
		return -ENOMEM;
	u->rows_cap = cap;
	return 0;
}

static struct top_entry **find_pid(struct top_entry **byp, size_t n, int pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (byp[mid]->pid < pid)
			lo = mid + 1;
		else if (byp[mid]->pid > pid)
			hi = mid;
		else
			return &byp[mid];
	}
	return NULL;
}

/*
 * The tree over the filtered rows: a process under its parent when its
 * parent is shown too, siblings in the sort order, depth first.
 */
static void push_children(struct ui *u, size_t at, size_t *sp)
{
	const size_t none = (size_t)-1;
	size_t kids = 0, k = 0, c;
	unsigned cd = u->node_depth[at] + 1u;

	if (cd > 63)
		cd = 63;
	for (c = u->first_child[at]; c != none; c = u->next_sibling[c])
		kids++;
	/* in reverse, so that the first child comes out first */
	for (c = u->first_child[at]; c != none; c = u->next_sibling[c], k++) {
		u->stack[*sp + kids - 1 - k] = c;
		u->node_depth[c] = (unsigned char)cd;
		u->node_last[c] = u->node_last[at] | (k == kids - 1 ? 1ull << cd : 0);
	}
	*sp += kids;
}

static void build_tree(struct ui *u)
{
	const size_t none = (size_t)-1;
	size_t n = u->nrows, i, out = 0, sp = 0, pass;

	memcpy(u->byp, u->rows, n * sizeof(*u->rows));
	memcpy(u->sorted, u->rows, n * sizeof(*u->rows));
	top_sort(u->byp, n, sizeof(*u->byp), cmp_pid);
	for (i = 0; i < n; i++) {
		u->first_child[i] = u->next_sibling[i] = none;
		u->is_child[i] = u->seen[i] = false;
	}
	/* linked from the last, so that each list keeps the sort order */
	for (i = n; i-- > 0;) {
		const struct top_entry *e = u->sorted[i];
		struct top_entry **pp = e->ppid != e->pid ? find_pid(u->byp, n, e->ppid) : NULL;
		size_t self = (size_t)(find_pid(u->byp, n, e->pid) - u->byp), parent;

		if (!pp)
			continue;
		parent = (size_t)(pp - u->byp);
		u->next_sibling[self] = u->first_child[parent];
		u->first_child[parent] = self;
		u->is_child[self] = true;
	}
	/* roots in the sort order, each followed by its subtree; a second
	 * pass takes what no root reached (a loop of ppids read mid-change) */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			size_t root = (size_t)(find_pid(u->byp, n, u->sorted[i]->pid) - u->byp);

			if (u->seen[root] || (pass == 0 && u->is_child[root]))
				continue;
			u->node_depth[root] = 0;
			u->node_last[root] = 0;
			u->stack[sp++] = root;
			while (sp) {
				size_t at = u->stack[--sp];

				if (u->seen[at])
					continue;
				u->seen[at] = true;
				u->rows[out] = u->byp[at];
				u->depth[out] = u->node_depth[at];
				u->last[out] = u->node_last[at];
				out++;
				push_children(u, at, &sp);
			}
		}
	u->nrows = out;
}

/* Rebuilds the rows from the current sample, keeping the selection. */
void ui_rebuild(struct ui *u)
{
	struct top_sample *s = u->t->cur;
	size_t i, screen = u->sel >= u->top ? u->sel - u->top : 0;
	int page = LINES - HEADER_LINES - 1;

	if (grow_view(u, s->n + 1)) {
		snprintf(u->msg, sizeof(u->msg), "out of memory");
		return;
	}
	u->nrows = 0;
	for (i = 0; i < s->n; i++)
		if (matches(u, &s->procs[i]))
			u->rows[u->nrows++] = &s->procs[i];
	sort_ui = u;
	top_sort(u->rows, u->nrows, sizeof(*u->rows), cmp_entries);
	if (u->tree)
		build_tree(u);
	/* the selected process, wherever it went */
	for (i = 0; i < u->nrows; i++)
		if (u->rows[i]->pid == u->sel_pid && u->rows[i]->p->starttime == u->sel_start)
			break;
	if (i < u->nrows) {
		u->sel = i;
		u->top = i >= screen ? i - screen : 0;
	} else if (u->sel >= u->nrows) {
		u->sel = u->nrows ? u->nrows - 1 : 0;
	}
	if (page < 1)
		page = 1;
	/* no empty lines at the bottom while rows are hidden at the top */
	if (u->top + (size_t)page > u->nrows)
		u->top = u->nrows > (size_t)page ? u->nrows - (size_t)page : 0;
	if (u->top > u->sel)
		u->top = u->sel;
	if (u->sel >= u->top + (size_t)page)
		u->top = u->sel - (size_t)page + 1;
	if (u->nrows) {
		u->sel_pid = u->rows[u->sel]->pid;
		u->sel_start = u->rows[u->sel]->p->starttime;
	}
}

void ui_select_row(struct ui *u, long to)
{
	int page = LINES - HEADER_LINES - 1;

	if (!u->nrows)
		return;
	if (to < 0)
		to = 0;
	if (to >= (long)u->nrows)
		to = (long)u->nrows - 1;
	u->sel = (size_t)to;
	if (page < 1)
		page = 1;
	if (u->sel < u->top)
		u->top = u->sel;
	if (u->sel >= u->top + (size_t)page)
		u->top = u->sel - (size_t)page + 1;
	u->sel_pid = u->rows[u->sel]->pid;
	u->sel_start = u->rows[u->sel]->p->starttime;
}
