/* SPDX-License-Identifier: MIT */
/* ms-top: what the screen (ui.c: loop and keys; draw.c: drawing) and its view (view.c) share. */
#ifndef MS_TOP_UI_H
#define MS_TOP_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "top.h"

/* ------------------------------------------------------------ columns */

enum col { C_PID, C_USER, C_RSS, C_PSS, C_USS, C_SWAP, C_GROWTH, C_RECENT, C_CMD, C_NSORT,
	   C_HIST = C_NSORT, C_NCOLS };

struct column {
	const char *title;
	int width;		/* 0: the rest of the line */
	bool right;		/* right-aligned */
	bool desc;		/* sorted largest first at first */
	int drop;		/* dropped first when narrow: higher first */
};

extern const struct column cols[C_NCOLS];
/* Display order (ui.c): the sort keys 1-9 follow it, the history aside. */
extern const enum col col_order[C_NCOLS];

enum { PAIR_TITLE = 1, PAIR_COLHEAD, PAIR_USED, PAIR_CACHE, PAIR_UP, PAIR_DOWN, PAIR_HEAP,
       PAIR_SPARK, PAIR_BAR, PAIR_DIM };

enum mode { M_LIST, M_INSPECT };

#define HEADER_LINES 4		/* title, memory, swap, column titles */

struct ui {
	struct top *t;
	unsigned count;
	uint64_t interval;
	bool unicode, color;
	enum mode mode;
	bool help, editing;
	int sort;
	bool reverse;
	bool tree;
	char filter[128];
	bool visible[C_NCOLS];
	int x[C_NCOLS];		/* where each visible column starts */
	int hist_w;
	/* the view: rows of the current sample, in their order */
	struct top_entry **rows;
	unsigned char *depth;
	uint64_t *last;		/* bit d: the ancestor at depth d was a last child */
	size_t nrows, rows_cap;
	/* tree scratch, as large as the sample */
	struct top_entry **byp, **sorted;
	size_t *first_child, *next_sibling, *stack;
	bool *is_child, *seen;
	unsigned char *node_depth;
	uint64_t *node_last;
	size_t scratch_cap;
	/* the selection: a process */
	int sel_pid;
	uint64_t sel_start;
	size_t sel, top;
	/* inspect */
	struct top_inspect in;
	struct top_proc in_proc;	/* a copy: the process may end meanwhile */
	bool in_gone;
	size_t in_scroll;
	uint64_t hist_buf[TOP_HIST];
	char msg[160];
};

/* the view (view.c) */
void ui_rebuild(struct ui *u);
void ui_select_row(struct ui *u, long to);

/* the drawing (draw.c): the whole screen, from the view as it is */
void ui_draw(struct ui *u);

#endif
