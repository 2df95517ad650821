/* SPDX-License-Identifier: MIT */
/*
 * ms-top's screen (ncurses, wide characters).
 *
 * The loop waits on the terminal until the next capture is due; keys are
 * read as they come and the screen is drawn at most 60 times a second, only
 * when something changed.  Captures run at the refresh interval (1 s by
 * default), and the view (the rows in their order) is rebuilt only after a
 * capture or when the sort, filter or tree changes, never while drawing.
 * The selection is a process, not a row: after a re-sort the cursor stays
 * on the same process, at the same line of the screen when it can.
 *
 * Without a UTF-8 locale the gauges, sparklines and tree are drawn in
 * ASCII; with NO_COLOR set (https://no-color.org) or a terminal without
 * colors, only bold and reverse video.  A terminal too small for anything
 * says so.  draw.c draws the screen; this file reads the keys and the
 * mouse and runs the loop.
 */
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include <curses.h>

#include "msc_util.h"
#include "ui.h"

/* ------------------------------------------------------------ columns */

const struct column cols[C_NCOLS] = {
	[C_PID] = { "PID", 7, true, false, 0 },
	[C_USER] = { "USER", 9, false, false, 6 },
	[C_RSS] = { "RSS", 7, true, true, 0 },
	[C_PSS] = { "PSS", 7, true, true, 2 },
	[C_USS] = { "USS", 7, true, true, 4 },
	[C_SWAP] = { "SWAP", 7, true, true, 5 },
	[C_GROWTH] = { "GROWTH", 8, true, true, 1 },
	[C_RECENT] = { "RECENT", 8, true, true, 3 },
	[C_HIST] = { "HISTORY", 16, false, false, 7 },
	[C_CMD] = { "COMMAND", 0, false, false, 0 },
};

/* Display order (the sort keys 1-9 follow it, the history aside). */
const enum col col_order[C_NCOLS] = {
	C_PID, C_USER, C_RSS, C_PSS, C_USS, C_SWAP, C_GROWTH, C_RECENT, C_HIST, C_CMD,
};

#define FRAME_NS 16666667ull	/* 60 frames a second at most */

/* ------------------------------------------------------------ input */

static void set_sort(struct ui *u, int col)
{
	if (col == u->sort)
		u->reverse = !u->reverse;
	else
		u->sort = col, u->reverse = false;
	ui_rebuild(u);
}

static void inspect(struct ui *u)
{
	const struct top_entry *e;

	if (!u->nrows)
		return;
	e = u->rows[u->sel];
	u->in.pid = e->pid;
	u->in.starttime = e->p->starttime;
	u->in_proc = *e->p;
	u->in_gone = false;
	u->in_scroll = 0;
	u->mode = M_INSPECT;
	top_inspect_read(u->t, &u->in);
}

/* After a capture: the inspected process's figures and mappings again. */
static void inspect_refresh(struct ui *u)
{
	struct top_entry *e = top_find(u->t->cur, u->in.pid, u->in.starttime);

	if (!e) {
		u->in_gone = true;
		return;
	}
	u->in_proc = *e->p;
	top_inspect_read(u->t, &u->in);
}

static void filter_key(struct ui *u, wint_t wc, bool is_key)
{
	size_t len = strlen(u->filter);

	if (is_key && (wc == KEY_BACKSPACE || wc == KEY_DC)) {
		wc = 127;
	} else if (is_key) {
		if (wc == KEY_ENTER)
			u->editing = false;
		return;
	}
	if (wc == 27) {			/* Esc: no filter */
		u->filter[0] = '\0';
		u->editing = false;
	} else if (wc == '\n' || wc == '\r') {
		u->editing = false;
	} else if (wc == 127 || wc == 8) {
		while (len && ((unsigned char)u->filter[len - 1] & 0xc0) == 0x80)
			len--;	/* the rest of a UTF-8 character */
		if (len)
			len--;
		u->filter[len] = '\0';
	} else if (wc == 21) {		/* Ctrl-U */
		u->filter[0] = '\0';
	} else if (iswprint(wc)) {
		char mb[MB_LEN_MAX];
		mbstate_t st;
		size_t k;

		memset(&st, 0, sizeof(st));
		k = wcrtomb(mb, (wchar_t)wc, &st);
		if (k != (size_t)-1 && len + k < sizeof(u->filter)) {
			memcpy(u->filter + len, mb, k);
			u->filter[len + k] = '\0';
		}
	}
	ui_rebuild(u);
}

static void mouse(struct ui *u)
{
	MEVENT ev;
	int i;

	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & BUTTON4_PRESSED) {
		if (u->mode == M_INSPECT)
			u->in_scroll = u->in_scroll > 3 ? u->in_scroll - 3 : 0;
		else
			ui_select_row(u, (long)u->sel - 3);
		return;
	}
	if (ev.bstate & BUTTON5_PRESSED) {
		if (u->mode == M_INSPECT)
			u->in_scroll += 3;
		else
			ui_select_row(u, (long)u->sel + 3);
		return;
	}
	if (u->mode != M_LIST || !(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED |
						  BUTTON1_DOUBLE_CLICKED)))
		return;
	if (ev.y == HEADER_LINES - 1) {
		/* a column title: sort by it */
		for (i = C_NCOLS; i-- > 0;) {
			enum col c = col_order[i];

			if (u->visible[c] && c != C_HIST && ev.x >= u->x[c]) {
				set_sort(u, c);
				break;
			}
		}
		return;
	}
	if (ev.y >= HEADER_LINES && ev.y < LINES - 1) {
		ui_select_row(u, (long)u->top + ev.y - HEADER_LINES);
		if (ev.bstate & BUTTON1_DOUBLE_CLICKED)
			inspect(u);
	}
}

/* Returns false to quit. */
static bool key(struct ui *u, wint_t wc, bool is_key)
{
	int page = LINES - HEADER_LINES - 1;

	u->msg[0] = '\0';
	if (is_key && wc == KEY_RESIZE) {
		ui_rebuild(u);	/* the page changed: keep the selection on it */
		return true;
	}
	if (is_key && wc == KEY_MOUSE) {
		mouse(u);
		return true;
	}
	if (u->editing) {
		filter_key(u, wc, is_key);
		return true;
	}
	if (u->help) {
		u->help = false;
		return !(!is_key && (wc == 'q' || wc == 'Q'));
	}
	if (page < 1)
		page = 1;
	if (is_key) {
		switch (wc) {
		case KEY_UP:
			if (u->mode == M_INSPECT)
				u->in_scroll = u->in_scroll ? u->in_scroll - 1 : 0;
			else
				ui_select_row(u, (long)u->sel - 1);
			break;
		case KEY_DOWN:
			if (u->mode == M_INSPECT)
				u->in_scroll++;
			else
				ui_select_row(u, (long)u->sel + 1);
			break;
		case KEY_PPAGE:
			if (u->mode == M_INSPECT)
				u->in_scroll = u->in_scroll > (size_t)page ? u->in_scroll - (size_t)page : 0;
			else
				ui_select_row(u, (long)u->sel - page);
			break;
		case KEY_NPAGE:
			if (u->mode == M_INSPECT)
				u->in_scroll += (size_t)page;
			else
				ui_select_row(u, (long)u->sel + page);
			break;
		case KEY_HOME:
			ui_select_row(u, 0);
			break;
		case KEY_END:
			ui_select_row(u, (long)u->nrows - 1);
			break;
		case KEY_ENTER:
			if (u->mode == M_LIST)
				inspect(u);
			break;
		case KEY_LEFT:
		case KEY_BACKSPACE:
			u->mode = M_LIST;
			break;
		case KEY_F(1):
			u->help = true;
			break;
		case KEY_F(10):
			return false;
		}
		return true;
	}
	switch (wc) {
	case 'q':
	case 'Q':
		return false;
	case '?':
	case 'h':
		u->help = true;
		break;
	case 12:		/* Ctrl-L */
		clearok(curscr, TRUE);
		break;
	case '\n':
	case '\r':
		if (u->mode == M_LIST)
			inspect(u);
		break;
	case 27:		/* Esc */
	case 127:
	case 8:
		if (u->mode == M_INSPECT) {
			u->mode = M_LIST;
		} else if (wc == 27 && u->filter[0]) {
			u->filter[0] = '\0';
			ui_rebuild(u);
		}
		break;
	case 'k':
		ui_select_row(u, (long)u->sel - 1);
		break;
	case 'j':
		ui_select_row(u, (long)u->sel + 1);
		break;
	case 'g':
		ui_select_row(u, 0);
		break;
	case 'G':
		ui_select_row(u, (long)u->nrows - 1);
		break;
	case '/':
		u->mode = M_LIST;
		u->editing = true;
		break;
	case 't':
		u->tree = !u->tree;
		ui_rebuild(u);
		break;
	case 'r':
		u->reverse = !u->reverse;
		ui_rebuild(u);
		break;
	case '<':
	case '>': {
		int i;

		for (i = 0; i < C_NCOLS && col_order[i] != (enum col)u->sort; i++)
			;
		do
			i = (i + (wc == '<' ? C_NCOLS - 1 : 1)) % C_NCOLS;
		while (col_order[i] == C_HIST);
		u->sort = col_order[i];
		u->reverse = false;
		ui_rebuild(u);
		break;
	}
	default:
		if (wc >= '1' && wc <= '9') {
			static const enum col by_key[] = { C_PID, C_USER, C_RSS, C_PSS, C_USS,
							   C_SWAP, C_GROWTH, C_RECENT, C_CMD };

			set_sort(u, by_key[wc - '1']);
		}
		break;
	}
	return true;
}

/* ------------------------------------------------------------ the loop */

static void start_curses(struct ui *u)
{
	const char *nc = getenv("NO_COLOR");

	initscr();
	top_curses_on = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	mousemask(BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED,
		  NULL);
	mouseinterval(200);
	u->color = has_colors() && !(nc && *nc);
	if (u->color) {
		start_color();
		use_default_colors();
		init_pair(PAIR_TITLE, COLOR_CYAN, -1);
		init_pair(PAIR_COLHEAD, COLOR_BLACK, COLOR_CYAN);
		init_pair(PAIR_USED, COLOR_GREEN, -1);
		init_pair(PAIR_CACHE, COLOR_YELLOW, -1);
		init_pair(PAIR_UP, COLOR_RED, -1);
		init_pair(PAIR_DOWN, COLOR_GREEN, -1);
		init_pair(PAIR_HEAP, COLOR_MAGENTA, -1);
		init_pair(PAIR_SPARK, COLOR_CYAN, -1);
		init_pair(PAIR_BAR, COLOR_BLACK, COLOR_CYAN);
		init_pair(PAIR_DIM, COLOR_BLUE, -1);
	}
}

static void stop_curses(void)
{
	if (!top_curses_on)
		return;
	endwin();
	top_curses_on = 0;
}

int top_ui(struct top *t, unsigned count, uint64_t interval_ns)
{
	struct ui u;
	uint64_t next, last_draw = 0;
	unsigned captures = 0;
	bool dirty = true, run = true;

	memset(&u, 0, sizeof(u));
	u.t = t;
	u.count = count;
	u.interval = interval_ns;
	u.sort = C_RSS;
	top_inspect_init(&u.in);
	setlocale(LC_ALL, "");
	u.unicode = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	atexit(stop_curses);	/* msc_die() and exit() restore the terminal too */
	start_curses(&u);

	next = msc_now_monotonic();
	while (run && !top_quit_signal) {
		uint64_t now = msc_now_monotonic();
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int timeout;
		wint_t wc;
		int rc;

		if (now >= next) {
			if (top_capture(t))
				snprintf(u.msg, sizeof(u.msg), "out of memory");
			captures++;
			ui_rebuild(&u);
			if (u.mode == M_INSPECT)
				inspect_refresh(&u);
			dirty = true;
			next += interval_ns;
			if (next <= now)
				next = now + interval_ns;
		}
		if (dirty && now - last_draw >= FRAME_NS) {
			ui_draw(&u);
			last_draw = now;
			dirty = false;
			if (count && captures >= count)
				break;
		}
		now = msc_now_monotonic();
		timeout = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		if (dirty) {
			int frame = (int)((last_draw + FRAME_NS - now + 999999) / 1000000);

			if (frame < timeout)
				timeout = frame < 0 ? 0 : frame;
		}
		poll(&pfd, 1, timeout);	/* EINTR: a resize, or a signal to quit */
		while ((rc = get_wch(&wc)) != ERR) {
			if (!key(&u, wc, rc == KEY_CODE_YES)) {
				run = false;
				break;
			}
			dirty = true;
		}
	}
	stop_curses();
	top_inspect_release(&u.in);
	free(u.rows);
	free(u.depth);
	free(u.last);
	free(u.byp);
	free(u.first_child);
	free(u.next_sibling);
	free(u.stack);
	free(u.is_child);
	free(u.seen);
	free(u.sorted);
	free(u.node_depth);
	free(u.node_last);
	return 0;
}
