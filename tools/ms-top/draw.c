/* SPDX-License-Identifier: MIT */
/*
 * ms-top's screen as drawn (ncurses, wide characters): the header with its
 * gauges, the list of processes with their sparklines, a process inspected
 * (its rss graph, live heap and mappings), the footer and the help, from
 * the view (struct ui) as it is.  ui.c's loop calls ui_draw() when
 * something changed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <wchar.h>
#include <wctype.h>

#include <curses.h>

#include "msc_util.h"
#include "ui.h"

/* ------------------------------------------------------------ text */

static attr_t pair(const struct ui *u, int p, attr_t otherwise)
{
	return u->color ? COLOR_PAIR(p) : otherwise;
}

/*
 * Writes the UTF-8 string s at (y, x) in at most w columns (wide and
 * combining characters counted as they are drawn); invalid bytes show as
 * '?'.  Returns the columns used.
 */
static int put(int y, int x, int w, const char *s)
{
	mbstate_t st;
	wchar_t wbuf[512];
	int used = 0, n = 0;
	size_t len = strlen(s);

	if (w <= 0 || y < 0 || y >= LINES || x >= COLS)
		return 0;
	if (x + w > COLS)
		w = COLS - x;
	memset(&st, 0, sizeof(st));
	while (len && n < (int)ARRAY_SIZE(wbuf) - 1) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s, len, &st);
		int cw;

		if (k == (size_t)-1 || k == (size_t)-2) {
			memset(&st, 0, sizeof(st));
			wc = L'?';
			k = 1;
		} else if (k == 0) {
			break;
		}
		if (!iswprint((wint_t)wc))
			wc = L'?';
		cw = wcwidth(wc);
		if (cw < 0)
			cw = 1;
		if (used + cw > w)
			break;
		wbuf[n++] = wc;
		used += cw;
		s += k;
		len -= k;
	}
	wbuf[n] = L'\0';
	mvaddnwstr(y, x, wbuf, n);
	return used;
}

/* put(), right-aligned in w columns (ASCII text). */
static void put_right(int y, int x, int w, const char *s)
{
	int len = (int)strlen(s);

	if (len > w) {
		put(y, x, w, "#");
		return;
	}
	put(y, x + w - len, len, s);
}

static void fill(int y, int x, int w, chtype ch)
{
	if (y < 0 || y >= LINES || x >= COLS || w <= 0)
		return;
	if (x + w > COLS)
		w = COLS - x;
	mvhline(y, x, ch, w);
}

/* ------------------------------------------------------------ drawing */

static const char *const spark_utf8[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
static const char spark_ascii[] = "_.-~=+*#";

/*
 * A sparkline of the last w values, scaled between their least and most,
 * over a tenth of the most at least: a process that moved by 4 KiB of
 * 100 MiB draws flat, not from the bottom to the top.
 */
static void sparkline(struct ui *u, int y, int x, int w, const uint64_t *v, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, from = n > (size_t)w ? n - (size_t)w : 0;

	for (i = from; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (hi - lo < hi / 10)
		lo = hi - hi / 10;
	attron(pair(u, PAIR_SPARK, A_NORMAL));
	for (i = from; i < n; i++) {
		int level = hi > lo ? (int)((double)(v[i] - lo) * 7 / (double)(hi - lo) + 0.5) : 0;

		if (u->unicode)
			put(y, x + (int)(i - from), 1, spark_utf8[level]);
		else
			mvaddch(y, x + (int)(i - from), (chtype)spark_ascii[level]);
	}
	attroff(pair(u, PAIR_SPARK, A_NORMAL));
}

/* "[|||||    ]": two segments, of a and b parts of total. */
static void gauge(struct ui *u, int y, int x, int w, uint64_t a, uint64_t b, uint64_t total)
{
	int na, nb, i;

	if (w < 3)
		return;
	put(y, x, 1, "[");
	put(y, x + w - 1, 1, "]");
	w -= 2;
	na = total ? (int)((double)a * w / (double)total + 0.5) : 0;
	nb = total ? (int)((double)(a + b) * w / (double)total + 0.5) - na : 0;
	if (na > w)
		na = w;
	if (nb > w - na)
		nb = w - na;
	for (i = 0; i < w; i++) {
		attr_t at = i < na ? pair(u, PAIR_USED, A_BOLD) :
			    i < na + nb ? pair(u, PAIR_CACHE, A_NORMAL) : A_NORMAL;

		attron(at);
		if (i < na + nb)
			put(y, x + 1 + i, 1, u->unicode ? (i < na ? "█" : "▒") : (i < na ? "#" : "|"));
		else
			put(y, x + 1 + i, 1, u->unicode ? "·" : " ");
		attroff(at);
	}
}

static void draw_header(struct ui *u)
{
	struct top *t = u->t;
	const struct top_sample *s = t->cur;
	const struct msc_meminfo *mi = &s->mi;
	char a[16], b[16], c[16], d[16], line[256];
	int w = COLS, gw, x;
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	attron(pair(u, PAIR_TITLE, A_BOLD));
	snprintf(line, sizeof(line), "ms-top %s - %zu process%s, refresh %.1fs", MSC_VERSION, s->n,
		 s->n == 1 ? "" : "es", (double)u->interval / 1e9);
	x = put(0, 0, w, line);
	attroff(pair(u, PAIR_TITLE, A_BOLD));
	if (s->recorded) {
		snprintf(line, sizeof(line), ", %u recorded", s->recorded);
		attron(pair(u, PAIR_HEAP, A_BOLD));
		put(0, x, w - x, line);
		attroff(pair(u, PAIR_HEAP, A_BOLD));
	}
	strftime(line, sizeof(line), "%H:%M:%S", &tm);
	if (w > 60)
		put_right(0, w - 9, 9, line);

	if (!s->has_meminfo)
		return;
	/* used as free(1) counts it: what is not available */
	{
		uint64_t avail = mi->has_available ? mi->available : mi->free + mi->cached + mi->buffers;
		uint64_t used = mi->total > avail ? mi->total - avail : 0;
		uint64_t cache = mi->cached + mi->buffers;

		if (cache > mi->total - used)
			cache = mi->total - used;
		snprintf(line, sizeof(line), " %s/%s used  avail %s  cache %s",
			 top_fmt_size(a, sizeof(a), used), top_fmt_size(b, sizeof(b), mi->total),
			 top_fmt_size(c, sizeof(c), avail),
			 top_fmt_size(d, sizeof(d), mi->cached + mi->buffers));
		gw = w - 4 - (int)strlen(line);
		if (gw > 60)
			gw = 60;
		put(1, 0, 4, "Mem");
		if (gw >= 10) {
			gauge(u, 1, 4, gw, used, cache, mi->total);
			put(1, 4 + gw, w - 4 - gw, line);
		} else {
			put(1, 4, w - 4, line);
		}
	}
	{
		uint64_t used = mi->swap_total - mi->swap_free;

		if (mi->swap_total)
			snprintf(line, sizeof(line), " %s/%s used", top_fmt_size(a, sizeof(a), used),
				 top_fmt_size(b, sizeof(b), mi->swap_total));
		else
			snprintf(line, sizeof(line), " none");
		put(2, 0, 4, "Swp");
		if (gw >= 10) {
			gauge(u, 2, 4, gw, used, 0, mi->swap_total);
			put(2, 4 + gw, w - 4 - gw, line);
		} else {
			put(2, 4, w - 4, line);
		}
	}
}

/* Which columns fit: drop the least useful ones until the command has room. */
static void layout(struct ui *u)
{
	int need, i, x;

	for (i = 0; i < C_NCOLS; i++)
		u->visible[i] = true;
	u->hist_w = cols[C_HIST].width;
	for (;;) {
		int worst = -1;

		need = 0;
		for (i = 0; i < C_NCOLS; i++)
			if (u->visible[i] && cols[i].width)
				need += cols[i].width + 1;
		if (need + 12 <= COLS)
			break;
		for (i = 0; i < C_NCOLS; i++)
			if (u->visible[i] && cols[i].drop && (worst < 0 || cols[i].drop > cols[worst].drop))
				worst = i;
		if (worst < 0)
			break;
		u->visible[worst] = false;
	}
	for (x = 0, i = 0; i < C_NCOLS; i++) {
		enum col c = col_order[i];

		if (!u->visible[c])
			continue;
		u->x[c] = x;
		x += cols[c].width + 1;
	}
}

static void draw_titles(struct ui *u, int y)
{
	int i;

	attron(pair(u, PAIR_COLHEAD, A_REVERSE));
	fill(y, 0, COLS, ' ');
	for (i = 0; i < C_NCOLS; i++) {
		enum col c = col_order[i];
		char title[32];
		int w = cols[c].width ? cols[c].width : COLS - u->x[c];

		if (!u->visible[c])
			continue;
		if (c == C_RECENT)
			snprintf(title, sizeof(title), "+%llus",
				 (unsigned long long)(u->t->window / 1000000000ull));
		else
			snprintf(title, sizeof(title), "%s", cols[c].title);
		if ((int)c == u->sort) {
			attron(A_BOLD);
			snprintf(title + strlen(title), sizeof(title) - strlen(title), "%s",
				 (cols[c].desc != u->reverse) ? (u->unicode ? "▼" : "v") :
							        (u->unicode ? "▲" : "^"));
		}
		if (cols[c].right) {
			int len = (int)strlen(title) - ((int)c == u->sort && u->unicode ? 2 : 0);

			put(y, u->x[c] + (w > len ? w - len : 0), w, title);
		} else {
			put(y, u->x[c], w, title);
		}
		if ((int)c == u->sort)
			attroff(A_BOLD);
	}
	attroff(pair(u, PAIR_COLHEAD, A_REVERSE));
}

static void draw_row(struct ui *u, int y, size_t r)
{
	const struct top_entry *e = u->rows[r];
	const struct top_proc *p = e->p;
	bool sel = r == u->sel;
	char buf[64], cmd[512];
	int i, x;

	if (sel) {
		attron(A_REVERSE);
		fill(y, 0, COLS, ' ');
	}
	for (i = 0; i < C_NCOLS; i++) {
		enum col c = col_order[i];
		int w = cols[c].width;

		if (!u->visible[c])
			continue;
		x = u->x[c];
		buf[0] = '\0';
		switch (c) {
		case C_PID:
			snprintf(buf, sizeof(buf), "%d", e->pid);
			break;
		case C_USER:
			put(y, x, w, p->user);
			continue;
		case C_RSS:
			if (e->has_mem)
				top_fmt_size(buf, sizeof(buf), e->rss);
			break;
		case C_PSS:
			if (e->has_pss)
				top_fmt_size(buf, sizeof(buf), e->pss);
			else if (e->has_mem)
				snprintf(buf, sizeof(buf), "-");
			break;
		case C_USS:
			if (e->has_pss)
				top_fmt_size(buf, sizeof(buf), e->uss);
			else if (e->has_mem)
				snprintf(buf, sizeof(buf), "-");
			break;
		case C_SWAP:
			if (e->has_mem)
				top_fmt_size(buf, sizeof(buf), e->swap);
			break;
		case C_GROWTH:
		case C_RECENT: {
			int64_t d = c == C_GROWTH ? e->growth : e->recent;

			if (!e->has_mem)
				break;
			top_fmt_delta(buf, sizeof(buf), d);
			if (!sel && d)
				attron(pair(u, d > 0 ? PAIR_UP : PAIR_DOWN, A_BOLD));
			put_right(y, x, w, buf);
			if (!sel && d)
				attroff(pair(u, d > 0 ? PAIR_UP : PAIR_DOWN, A_BOLD));
			continue;
		}
		case C_HIST: {
			size_t n = top_history(p, u->hist_buf, (size_t)u->hist_w);

			if (n > 1)
				sparkline(u, y, x, u->hist_w, u->hist_buf, n);
			continue;
		}
		case C_CMD: {
			int used = 0, d;

			w = COLS - x;
			if (u->tree && u->depth[r]) {
				char pre[256] = "";

				for (d = 1; d < u->depth[r] && strlen(pre) + 8 < sizeof(pre); d++)
					strcat(pre, (u->last[r] >> d) & 1 ? "   " :
						     u->unicode ? "│  " : "|  ");
				strcat(pre, (u->last[r] >> u->depth[r]) & 1 ?
					    (u->unicode ? "└─ " : "`- ") : (u->unicode ? "├─ " : "|- "));
				used = put(y, x, w, pre);
			}
			if (e->heap) {
				snprintf(cmd, sizeof(cmd), "[heap %s] ",
					 top_fmt_size(buf, sizeof(buf), e->heap->live_bytes));
				if (!sel)
					attron(pair(u, PAIR_HEAP, A_BOLD));
				used += put(y, x + used, w - used, cmd);
				if (!sel)
					attroff(pair(u, PAIR_HEAP, A_BOLD));
			}
			put(y, x + used, w - used, p->cmd);
			continue;
		}
		default:
			continue;
		}
		put_right(y, x, w, buf);
	}
	if (sel)
		attroff(A_REVERSE);
}

static void draw_footer(struct ui *u)
{
	int y = LINES - 1;
	char line[256];

	attron(pair(u, PAIR_BAR, A_REVERSE));
	fill(y, 0, COLS, ' ');
	if (u->editing) {
		snprintf(line, sizeof(line), "Filter: %s_   (Enter: keep, Esc: clear)", u->filter);
		put(y, 0, COLS, line);
	} else if (u->msg[0]) {
		put(y, 0, COLS, u->msg);
	} else if (u->mode == M_INSPECT) {
		put(y, 0, COLS, "Esc back  Up/Down scroll  ? help  q quit");
	} else {
		snprintf(line, sizeof(line), "Enter inspect  / filter%s%s%s  t tree  1-9 sort  ? help  q quit",
			 u->filter[0] ? " [" : "", u->filter, u->filter[0] ? "]" : "");
		put(y, 0, COLS, line);
	}
	attroff(pair(u, PAIR_BAR, A_REVERSE));
}

static void draw_list(struct ui *u)
{
	int y, page = LINES - HEADER_LINES - 1;
	size_t r;

	layout(u);
	draw_header(u);
	draw_titles(u, HEADER_LINES - 1);
	for (y = 0, r = u->top; y < page && r < u->nrows; y++, r++)
		draw_row(u, HEADER_LINES + y, r);
	if (!u->nrows) {
		attron(pair(u, PAIR_DIM, A_DIM));
		put(HEADER_LINES, 0, COLS, u->filter[0] ? "  (no process matches the filter)" :
							   "  (no process)");
		attroff(pair(u, PAIR_DIM, A_DIM));
	}
	draw_footer(u);
}

/* A graph of rss over time, h lines high, with its scale on the left. */
static void graph(struct ui *u, int y, int h, const uint64_t *v, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	char a[16];
	int w = COLS - 9, col, row;
	size_t from, i;

	if (w < 4 || h < 1 || !n)
		return;
	from = n > (size_t)w ? n - (size_t)w : 0;
	for (i = from; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	/* room above and below, so that a flat line is not at an edge */
	if (hi == lo) {
		lo = lo > hi / 8 ? lo - hi / 8 : 0;
		hi += hi / 8 + 1;
	}
	put_right(y, 0, 7, top_fmt_size(a, sizeof(a), hi));
	put_right(y + h - 1, 0, 7, top_fmt_size(a, sizeof(a), lo));
	attron(pair(u, PAIR_SPARK, A_NORMAL));
	for (i = from, col = 0; i < n; i++, col++) {
		/* eighths of a line, from the bottom */
		int eighths = (int)((double)(v[i] - lo) * (h * 8) / (double)(hi - lo) + 0.5);

		for (row = 0; row < h; row++) {
			int level = eighths - row * 8;
			int yy = y + h - 1 - row;

			if (level <= 0)
				break;
			if (u->unicode)
				put(yy, 9 + col, 1, spark_utf8[level >= 8 ? 7 : level - 1]);
			else
				mvaddch(yy, 9 + col, level >= 8 ? '#' : (chtype)spark_ascii[level - 1]);
		}
	}
	attroff(pair(u, PAIR_SPARK, A_NORMAL));
}

static void draw_inspect(struct ui *u)
{
	struct top *t = u->t;
	const struct top_proc *p = &u->in_proc;
	struct top_entry *e = u->in_gone ? NULL : top_find(t->cur, u->in.pid, u->in.starttime);
	const struct top_heap *h = e ? e->heap : NULL;
	char line[512], a[16], b[16], c[16], d[16], f[16], win[16];
	int y = 0, rows, gh, i;
	size_t n, r;

	attron(pair(u, PAIR_TITLE, A_BOLD));
	snprintf(line, sizeof(line), "PID %d  %s  user %s%s", u->in.pid, p->comm, p->user,
		 u->in_gone ? "  (ended)" : "");
	put(y, 0, COLS, line);
	attroff(pair(u, PAIR_TITLE, A_BOLD));
	if (e && e->state) {
		snprintf(line, sizeof(line), "state %c", e->state);
		if (COLS > 50)
			put_right(y, COLS - 12, 12, line);
	}
	y++;
	put(y++, 0, COLS, p->cmd);
	if (e && e->has_mem) {
		snprintf(line, sizeof(line), "RSS %s  PSS %s  USS %s  SWAP %s  growth %s, %s in %llus",
			 top_fmt_size(a, sizeof(a), e->rss),
			 e->has_pss ? top_fmt_size(b, sizeof(b), e->pss) : "-",
			 e->has_pss ? top_fmt_size(c, sizeof(c), e->uss) : "-",
			 top_fmt_size(d, sizeof(d), e->swap), top_fmt_delta(f, sizeof(f), e->growth),
			 top_fmt_delta(win, sizeof(win), e->recent),
			 (unsigned long long)(t->window / 1000000000ull));
		put(y, 0, COLS, line);
	}
	y++;
	/* the history graph: a few lines when there is room */
	rows = LINES - 1 - y;
	gh = rows >= 30 ? 6 : rows >= 20 ? 4 : rows >= 14 ? 2 : 0;
	if (gh) {
		n = top_history(p, u->hist_buf, TOP_HIST);
		graph(u, y, gh, u->hist_buf, n);
		y += gh + 1;
	}
	if (h) {
		int k = (LINES - 1 - y) / 4;

		attron(pair(u, PAIR_HEAP, A_BOLD));
		snprintf(line, sizeof(line), "LIVE HEAP %s in %llu blocks, %llu sites",
			 top_fmt_size(a, sizeof(a), h->live_bytes), (unsigned long long)h->live,
			 (unsigned long long)h->nsites);
		if (h->has_rates)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 "   %llu allocs/s  %llu frees/s  %s/s",
				 (unsigned long long)h->alloc_rate, (unsigned long long)h->free_rate,
				 top_fmt_delta(b, sizeof(b), h->growth_rate));
		if (h->mark)
			snprintf(line + strlen(line), sizeof(line) - strlen(line), "   mark %s at %.1f s (%u)", h->mark,
				 (double)h->mark_ts / 1e9, h->nmarks);
		put(y++, 0, COLS, line);
		attroff(pair(u, PAIR_HEAP, A_BOLD));
		if (k < 1)
			k = 1;
		if (k > 8)
			k = 8;
		attron(pair(u, PAIR_COLHEAD, A_REVERSE));
		fill(y, 0, COLS, ' ');
		put(y++, 0, COLS, "   LIVE   BLOCKS  TOP SITES BY LIVE BYTES");
		attroff(pair(u, PAIR_COLHEAD, A_REVERSE));
		for (i = 0; i < k && (size_t)i < h->nsites; i++) {
			const struct top_site *s = h->by_live[i];

			snprintf(line, sizeof(line), "%7s %8llu  %s%s%s", top_fmt_size(a, sizeof(a), s->live_bytes),
				 (unsigned long long)s->live, s->label, s->caller ? " < " : "",
				 s->caller ? s->caller : "");
			put(y++, 0, COLS, line);
		}
		attron(pair(u, PAIR_COLHEAD, A_REVERSE));
		fill(y, 0, COLS, ' ');
		put(y++, 0, COLS, " GROWTH/s   BLOCKS  SITES GROWING FASTEST");
		attroff(pair(u, PAIR_COLHEAD, A_REVERSE));
		for (i = 0; i < k && (size_t)i < h->ngrowing; i++) {
			const struct top_site *s = h->by_growth[i];

			snprintf(line, sizeof(line), "%9s %8llu  %s%s%s", top_fmt_delta(a, sizeof(a), s->growth),
				 (unsigned long long)s->live, s->label, s->caller ? " < " : "",
				 s->caller ? s->caller : "");
			put(y++, 0, COLS, line);
		}
		if (!h->ngrowing)
			put(y++, 0, COLS, h->has_rates ? "  (no site grew since the last refresh)" :
							  "  (from the next refresh)");
		y++;
	} else if (e && p->live_round == t->round) {
		put(y++, 0, COLS, t->live_err[0] ? t->live_err : "live heap: no answer");
	}
	/* the mappings */
	attron(pair(u, PAIR_COLHEAD, A_REVERSE));
	fill(y, 0, COLS, ' ');
	snprintf(line, sizeof(line), "%7s %7s %7s %7s %5s  %-7s %s", "RSS", "PSS", "DIRTY", "SWAP", "MAPS",
		 "KIND", "MAPPING");
	put(y++, 0, COLS, line);
	attroff(pair(u, PAIR_COLHEAD, A_REVERSE));
	if (u->in.error && !u->in.ngroups) {
		snprintf(line, sizeof(line), "  cannot read /proc/%d/smaps: %s%s", u->in.pid,
			 strerror(-u->in.error),
			 u->in.error == -EACCES ? " (run as its owner or root)" : "");
		put(y++, 0, COLS, line);
	}
	rows = LINES - 1 - y;
	if (u->in_scroll + (size_t)(rows > 0 ? rows : 0) > u->in.ngroups)
		u->in_scroll = u->in.ngroups > (size_t)rows && rows > 0 ? u->in.ngroups - (size_t)rows : 0;
	for (r = u->in_scroll; r < u->in.ngroups && y < LINES - 1; r++) {
		const struct top_group *g = &u->in.groups[r];

		snprintf(line, sizeof(line), "%7s %7s %7s %7s %5u  %-7s %s",
			 top_fmt_size(a, sizeof(a), g->rss), top_fmt_size(b, sizeof(b), g->pss),
			 top_fmt_size(c, sizeof(c), g->private_dirty), top_fmt_size(d, sizeof(d), g->swap),
			 g->count, g->kind, g->name);
		put(y++, 0, COLS, line);
	}
	draw_footer(u);
}

static const char *const help_lines[] = {
	"ms-top keys",
	"",
	"  Up/Down, PgUp/PgDn, Home/End   move (k/j, g/G too)",
	"  Enter                          inspect the process: its mappings by",
	"                                 group, rss history, and its live heap",
	"                                 when ms-record records it",
	"  Esc, Backspace, Left           back to the list",
	"  1 ... 9                        sort by PID, USER, RSS, PSS, USS, SWAP,",
	"                                 GROWTH, RECENT, COMMAND; again: reverse",
	"  < >                            sort by the column left or right",
	"  r                              reverse the order",
	"  /                              filter by name or pid (Esc clears it)",
	"  t                              tree of parents and children",
	"  Ctrl-L                         redraw",
	"  ? h F1                         this help",
	"  q F10                          quit",
	"",
	"GROWTH: rss since ms-top first saw the process; RECENT: over the",
	"window (--window).  USS: private pages.  [heap SIZE]: live heap of a",
	"process ms-record records.  The mouse selects, sorts and scrolls.",
	"",
	"Any key closes this help.",
};

static void draw_help(struct ui *u)
{
	int h = (int)ARRAY_SIZE(help_lines) + 2, w = 76, y0, x0, i;

	if (h > LINES)
		h = LINES;
	if (w > COLS)
		w = COLS;
	y0 = (LINES - h) / 2;
	x0 = (COLS - w) / 2;
	for (i = 0; i < h; i++)
		fill(y0 + i, x0, w, ' ');
	attron(pair(u, PAIR_TITLE, A_BOLD));
	if (h > 2 && w > 2) {
		mvhline(y0, x0, ACS_HLINE, w);
		mvhline(y0 + h - 1, x0, ACS_HLINE, w);
		mvvline(y0, x0, ACS_VLINE, h);
		mvvline(y0, x0 + w - 1, ACS_VLINE, h);
		mvaddch(y0, x0, ACS_ULCORNER);
		mvaddch(y0, x0 + w - 1, ACS_URCORNER);
		mvaddch(y0 + h - 1, x0, ACS_LLCORNER);
		mvaddch(y0 + h - 1, x0 + w - 1, ACS_LRCORNER);
	}
	attroff(pair(u, PAIR_TITLE, A_BOLD));
	for (i = 0; i < h - 2 && i < (int)ARRAY_SIZE(help_lines); i++)
		put(y0 + 1 + i, x0 + 2, w - 4, help_lines[i]);
}

void ui_draw(struct ui *u)
{
	erase();
	if (LINES < 6 || COLS < 24) {
		char line[64];

		snprintf(line, sizeof(line), "terminal too small (%dx%d)", COLS, LINES);
		put(0, 0, COLS, line);
	} else if (u->mode == M_INSPECT) {
		draw_inspect(u);
	} else {
		draw_list(u);
	}
	if (u->help)
		draw_help(u);
	refresh();
}
