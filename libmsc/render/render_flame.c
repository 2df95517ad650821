/* SPDX-License-Identifier: MIT */
/*
 * Reports as flame graphs: folded stacks and SVG.  See msc_render.h.
 *
 * The SVG draws without its script (labels that fit are in it); the script
 * adds zooming and searching.  Frames narrower than a pixel at the SVG's
 * width are merged into one "[N narrower frames]" box per parent, which
 * keeps the picture of a large recording small: such frames cannot be
 * seen or pointed at, and zooming into one would show only its box.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hash.h"
#include "msc_render.h"
#include "msc_util.h"

/* ---------------------------------------------------- collapsed stacks */

/*
 * A stack's cost; of one program's processes when the report holds several
 * processes' sites (an ms-record --follow stream, all_processes): the
 * program is then the outermost frame, so that the graph has a tower per
 * program (every cc1 of a build in one).
 */
struct folded {
	uint32_t stack;
	int image;			/* one of the program's images, -1: none */
	uint64_t cost;
};

/* Several processes' sites or leaks: the program of each counts. */
static bool by_program(const struct msc_report *r)
{
	size_t i;

	for (i = 0; i < r->nsites; i++)
		if (r->sites[i].pid != r->pid)
			return true;
	for (i = 0; i < r->nleaks; i++)
		if (r->leaks[i].pid != r->pid)
			return true;
	return false;
}

/* The entry of stack (of image's program, image -1: any) in f (a new one
 * at *n), or NULL when out of memory.  (A rare collision of two programs'
 * names puts both in one.) */
static struct folded *folded_of(const struct msc_report *r, struct msc_u64map *idx, struct folded *f,
				size_t *n, uint32_t stack, int image)
{
	const char *name = msc_report_program(r, image);
	uint64_t key = ((uint64_t)stack + 1) ^ (name ? msc_hash_bytes(name, strlen(name), 0) << 32 : 0);
	uint64_t *s;

	key += !key;
	s = msc_u64map_get(idx, key);
	if (s)
		return &f[*s];
	if (msc_u64map_put(idx, key, *n))
		return NULL;
	f[*n].stack = stack;
	f[*n].image = name ? image : -1;
	return &f[(*n)++];
}

/* The stacks' costs at *out, how many; SIZE_MAX out of memory. */
static size_t folded_costs(const struct msc_report *r, enum msc_report_cost cost, struct folded **out)
{
	struct msc_u64map idx;
	struct folded *f;
	size_t i, n = 0;
	bool programs = by_program(r);

	f = calloc(r->nsites + r->nleaks + 1, sizeof(*f));
	*out = f;
	if (!f || msc_u64map_init(&idx, r->nsites + r->nleaks + 1))
		return SIZE_MAX;
	if (cost == MSC_COST_LEAKED) {
		for (i = 0; i < r->nleaks; i++) {
			const struct msc_rleak *l = &r->leaks[i];
			struct folded *e;

			/* An attach recording leaks nothing: its blocks live
			 * at the end (fate unknown) are what grew. */
			if (!render_leaked_kind(l->kind) &&
			    !(r->mode && !strcmp(r->mode, "attach") && !strcmp(l->kind, "unknown")))
				continue;
			e = folded_of(r, &idx, f, &n, l->stack, programs ? l->image : -1);
			if (!e)
				goto oom;
			msc_sat_add(&e->cost, l->bytes);
		}
	} else {
		for (i = 0; i < r->nsites; i++) {
			const struct msc_rsite *x = &r->sites[i];
			struct folded *e;

			e = folded_of(r, &idx, f, &n, x->stack, programs ? x->image : -1);
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
	return SIZE_MAX;
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

/* A program's name as the outermost frame of its stacks: in brackets, as
 * a frame without a function is, no ';'. */
static void fold_program(char *buf, size_t n, const char *program)
{
	char *p;

	snprintf(buf, n, "[%s]", program);
	for (p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ',';
}

int render_collapsed(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct folded *f;
	size_t n = folded_costs(r, o->cost == MSC_COST_AUTO ? MSC_COST_LEAKED : o->cost, &f), i;
	char name[512];

	if (n == SIZE_MAX) {
		free(f);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct msc_rstack *s = msc_report_stack(r, f[i].stack);
		int k, shown = (int)msc_report_stack_shown(s);
		bool first = true;

		if (!f[i].cost)
			continue;
		if (f[i].image >= 0) {
			fold_program(name, sizeof(name), msc_report_program(r, f[i].image));
			fputs(name, out);
			first = false;
		}
		if (msc_report_stack_truncated(r, s) || (s && (unsigned)shown < s->n)) {
			fprintf(out, "%s[truncated]", first ? "" : ";");
			first = false;
		}
		for (k = shown - 1; k >= 0; k--) {
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

/* ------------------------------------------------------------ the cost */

/* The total of a cost over the stream's stacks. */
static uint64_t cost_total(const struct msc_report *r, enum msc_report_cost cost)
{
	struct folded *f;
	size_t n = folded_costs(r, cost, &f), i;
	uint64_t t = 0;

	for (i = 0; n != SIZE_MAX && i < n; i++)
		t += f[i].cost;
	free(f);
	return t;
}

enum msc_report_cost render_flame_cost(const struct msc_report *r, enum msc_report_cost asked)
{
	if (asked != MSC_COST_AUTO)
		return asked;
	if (cost_total(r, MSC_COST_LEAKED))
		return MSC_COST_LEAKED;
	if (cost_total(r, MSC_COST_PEAK))
		return MSC_COST_PEAK;
	return MSC_COST_BYTES;
}

static bool attach_mode(const struct msc_report *r)
{
	return r->mode && !strcmp(r->mode, "attach");
}

/* "87.5 KiB leaked", "601,025 allocations": a total, as titles give it. */
static char *cost_phrase(char *buf, size_t n, const struct msc_report *r, enum msc_report_cost cost,
			 uint64_t total)
{
	char v[32];

	if (cost == MSC_COST_ALLOCS) {
		snprintf(buf, n, "%s allocation%s", msc_fmt_count(v, sizeof(v), (int64_t)total),
			 total == 1 ? "" : "s");
		return buf;
	}
	msc_fmt_size(v, sizeof(v), (int64_t)total);
	snprintf(buf, n, "%s %s", v,
		 cost == MSC_COST_LEAKED ? (attach_mode(r) ? "live at the end" : "leaked") :
		 cost == MSC_COST_BYTES	 ? "allocated" :
					   "at the peak");
	return buf;
}

/* What a frame's width is, in a sentence. */
static char *cost_meaning(char *buf, size_t n, const struct msc_report *r, enum msc_report_cost cost)
{
	char t[32];

	switch (cost) {
	case MSC_COST_LEAKED:
		snprintf(buf, n, "%s", attach_mode(r) ?
			 "bytes live when ms-record detached (their fate is unknown)" :
			 "bytes leaked (definitely and indirectly lost, or unscanned)");
		break;
	case MSC_COST_ALLOCS:
		snprintf(buf, n, "number of allocations");
		break;
	case MSC_COST_BYTES:
		snprintf(buf, n, "bytes allocated");
		break;
	default:
		if (r->peak_ts) {
			msc_fmt_duration(t, sizeof(t), r->peak_ts);
			snprintf(buf, n, "bytes live at the heap's peak, at %s", t);
		} else {
			snprintf(buf, n, "bytes live at the heap's peak");
		}
		break;
	}
	return buf;
}

/* ------------------------------------------------------------ the tree */

#define FLAME_LINES 4

struct node {
	const char *name;
	const char *file, *obj;		/* base names, of the first frame seen */
	unsigned lines[FLAME_LINES], nlines;
	bool more_lines, inlined, merged;
	const char *chain;		/* a run of frames drawn as one: their names */
	uint64_t cost, self;		/* self: of the stacks that end here */
	unsigned depth;
	unsigned top_id;		/* as a top of stacks (stack_node), 0: none */
	struct node *parent, *child, *next, *hnext;
};

struct tree {
	struct msc_arena a;
	struct msc_u64map index;	/* hash(parent, name) -> first node */
	struct msc_u64map memo;		/* (top's id, stack's id) -> its innermost node */
	const struct msc_stackdef **chain;
	size_t nchain, capchain;
	struct node root;
	unsigned nodes, drawn, depth, tops;
};

static uint64_t node_key(const struct node *parent, const char *name)
{
	return msc_hash_bytes(name, strlen(name), (uint64_t)(uintptr_t)parent) | 1;
}

static struct node *child_of(struct tree *t, struct node *parent, const char *name)
{
	uint64_t key = node_key(parent, name), *v = msc_u64map_get(&t->index, key);
	struct node *c, *first = v ? (struct node *)(uintptr_t)*v : NULL;

	for (c = first; c; c = c->hnext)
		if (c->parent == parent && !strcmp(c->name, name))
			return c;
	c = msc_arena_zalloc(&t->a, sizeof(*c));
	if (!c || !(c->name = msc_arena_strdup(&t->a, name)) ||
	    msc_u64map_put(&t->index, key, (uint64_t)(uintptr_t)c))
		return NULL;
	c->hnext = first;
	c->parent = parent;
	c->depth = parent->depth + 1;
	c->next = parent->child;
	parent->child = c;
	t->nodes++;
	if (c->depth > t->depth)
		t->depth = c->depth;
	return c;
}

/* What the tooltip says of where a node's frames are. */
static void node_place(struct tree *t, struct node *c, const struct msc_rframe *f)
{
	unsigned i;

	if (!c->obj && !c->file && !c->nlines) {
		c->file = f->file ? msc_arena_strdup(&t->a, msc_base_name(f->file)) : NULL;
		c->obj = f->obj ? msc_arena_strdup(&t->a, msc_base_name(f->obj)) : NULL;
		c->inlined = f->inlined;
	}
	if (!f->line)
		return;
	for (i = 0; i < c->nlines; i++)
		if (c->lines[i] == f->line)
			return;
	if (c->nlines < FLAME_LINES)
		c->lines[c->nlines++] = f->line;
	else
		c->more_lines = true;
}

static int by_cost(const void *x, const void *y)
{
	const struct node *a = *(const struct node *const *)x, *b = *(const struct node *const *)y;

	if (a->cost != b->cost)
		return a->cost > b->cost ? -1 : 1;
	return strcmp(a->name, b->name);
}

/*
 * Children largest first; those narrower than min_cost (a pixel) are
 * merged into one node, drawn when the merged ones together make a pixel,
 * with none of their descendants.
 */
static int tidy(struct tree *t, struct node *n, uint64_t min_cost)
{
	struct node *c, **v, *merged = NULL;
	size_t k = 0, i;
	unsigned nsmall = 0;
	uint64_t small = 0;

	for (c = n->child; c; c = c->next)
		k++;
	if (!k)
		return 0;
	v = malloc(k * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (k = 0, c = n->child; c; c = c->next)
		v[k++] = c;
	qsort(v, k, sizeof(*v), by_cost);
	n->child = NULL;
	for (i = k; i-- > 0;) {
		if (v[i]->cost < min_cost) {
			nsmall++;
			small += v[i]->cost;
			continue;
		}
		v[i]->next = n->child;
		n->child = v[i];
	}
	free(v);
	if (nsmall && small >= min_cost) {
		char name[64];

		merged = msc_arena_zalloc(&t->a, sizeof(*merged));
		snprintf(name, sizeof(name), "[%u narrower frame%s]", nsmall, nsmall == 1 ? "" : "s");
		if (!merged || !(merged->name = msc_arena_strdup(&t->a, name)))
			return -ENOMEM;
		merged->merged = true;
		merged->cost = small;
		merged->parent = n;
		merged->depth = n->depth + 1;
		/* After the others: it is the smallest. */
		for (c = n->child; c && c->next; c = c->next)
			;
		if (c)
			c->next = merged;
		else
			n->child = merged;
	}
	for (c = n->child; c; c = c->next) {
		int ret;

		t->drawn++;
		if (!c->merged && (ret = tidy(t, c, min_cost)))
			return ret;
	}
	return 0;
}

/*
 * A run of more than CHAIN_MIN frames, each the only caller of the next
 * and nothing allocated in between (an interpreter's frames, a deep
 * recursion), is drawn as its first frame, one box for the middle ones,
 * and its last: 100-frame stacks stay a picture, not a tall empty page.
 */
#define CHAIN_MIN 8
#define CHAIN_NAMES 1000		/* bytes of names a folded box lists */

static bool chain_link(const struct node *n)
{
	return n->child && !n->child->next && !n->self && !n->merged && !n->child->merged && n->depth;
}

/* The box of the run c .. last (len frames): c, the box, last. */
static __attribute__((noinline)) int fold_run(struct tree *t, struct node *c, struct node *last, unsigned len)
{
	struct node *box = msc_arena_zalloc(&t->a, sizeof(*box)), *k;
	char name[64], names[CHAIN_NAMES + 8];
	size_t at = 0;

	if (!box)
		return -ENOMEM;
	snprintf(name, sizeof(name), "[%u frames]", len - 2);
	names[0] = '\0';
	for (k = c->child; k != last && at < CHAIN_NAMES; k = k->child)
		at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s", at ? " < " : "", k->name);
	if (at >= CHAIN_NAMES)
		snprintf(names + CHAIN_NAMES, sizeof(names) - CHAIN_NAMES, " ...");
	if (!(box->name = msc_arena_strdup(&t->a, name)) || !(box->chain = msc_arena_strdup(&t->a, names)))
		return -ENOMEM;
	box->cost = c->cost;
	box->parent = c;
	box->child = last;
	last->parent = box;
	last->next = NULL;
	c->child = box;
	t->drawn -= len - 3;	/* len - 2 frames, one box */
	return 0;
}

/* Recursive, as deep as the tree: its frame stays small. */
static int fold_chains(struct tree *t, struct node *n)
{
	struct node *c, *last;
	unsigned len;
	int ret;

	for (c = n->child; c; c = c->next) {
		/* c .. last: the run from c, each with one child. */
		for (len = 1, last = c; chain_link(last); last = last->child)
			len++;
		if (len > CHAIN_MIN && (ret = fold_run(t, c, last, len)))
			return ret;
		if ((ret = fold_chains(t, last)))
			return ret;
	}
	return 0;
}

/* Depths again once runs are folded; the deepest drawn. */
static void redepth(struct tree *t, struct node *n, unsigned depth)
{
	struct node *c;

	n->depth = depth;
	if (depth > t->depth)
		t->depth = depth;
	for (c = n->child; c; c = c->next)
		redepth(t, c, depth + 1);
}

/* The node of frames[0], frames[n - 1] the outermost, under cur. */
static struct node *frames_node(struct tree *t, struct node *cur, const struct msc_rframe *frames,
				unsigned n)
{
	char name[512];

	while (cur && n-- > 0) {
		fold_name(name, sizeof(name), &frames[n]);
		cur = child_of(t, cur, name);
		if (cur)
			node_place(t, cur, &frames[n]);
	}
	return cur;
}

/* d's parent when d's frames end with the parent's (the array they share
 * once resolved), else NULL: d's frames are then its own. */
static const struct msc_stackdef *shared_parent(const struct msc_stackdef *d)
{
	const struct msc_stackdef *p = d->parent;

	return p && p->frames && p->n <= d->n && d->frames + (d->n - p->n) == p->frames ? p : NULL;
}

/*
 * The node of stack d's innermost frame, under top: its parent's node,
 * then its own frames.  Memoized per stack and top, so that a chain of
 * stacks costs each of its frames once, not once for every stack of it:
 * linear in a deep chain's length, not quadratic.
 */
static struct node *stack_node(struct tree *t, const struct msc_stackdef *d, struct node *top)
{
	struct node *cur = top;
	const struct msc_stackdef *e;
	uint64_t *v, key;

	if (!top->top_id)
		top->top_id = ++t->tops;
	key = (uint64_t)top->top_id << 32;
	t->nchain = 0;
	for (e = d; e; e = shared_parent(e)) {
		v = msc_u64map_get(&t->memo, key | e->id);
		if (v) {
			cur = (struct node *)(uintptr_t)*v;
			break;
		}
		if (MSC_GROW(t->chain, t->nchain + 1, t->capchain, 64))
			return NULL;
		t->chain[t->nchain++] = e;
	}
	while (t->nchain) {
		const struct msc_stackdef *p;

		e = t->chain[--t->nchain];
		p = shared_parent(e);
		cur = frames_node(t, cur, e->frames, e->n - (p ? p->n : 0));
		if (!cur || msc_u64map_put(&t->memo, key | e->id, (uint64_t)(uintptr_t)cur))
			return NULL;
	}
	return cur;
}

/* A node's cost: its own stacks' and its children's. */
static void tree_costs(struct node *n)
{
	struct node *c;

	n->cost = n->self;
	for (c = n->child; c; c = c->next) {
		tree_costs(c);
		msc_sat_add(&n->cost, c->cost);
	}
}

/* The call tree of a cost, outermost frame at the root ("all"); stacks cut
 * at the depth limit under one "[truncated]" node. */
static int tree_build(struct tree *t, const struct msc_report *r, enum msc_report_cost cost)
{
	struct folded *f;
	size_t n = folded_costs(r, cost, &f), i;
	char name[512];
	int ret = 0;

	memset(t, 0, sizeof(*t));
	msc_arena_init(&t->a);
	t->root.name = "all";
	if (n == SIZE_MAX || msc_u64map_init(&t->index, 1024) || msc_u64map_init(&t->memo, 1024)) {
		free(f);
		return -ENOMEM;
	}
	for (i = 0; i < n && !ret; i++) {
		const struct msc_rstack *s = msc_report_stack(r, f[i].stack);
		struct node *cur = &t->root;

		if (!f[i].cost)
			continue;
		if (f[i].image >= 0) {
			fold_program(name, sizeof(name), msc_report_program(r, f[i].image));
			cur = child_of(t, cur, name);
		}
		if (cur && msc_report_stack_truncated(r, s))
			cur = child_of(t, cur, "[truncated]");
		if (cur && s && s->n && s->def && s->def->frames == s->frames && s->def->n == s->n) {
			cur = stack_node(t, s->def, cur);
		} else if (cur && s) {
			cur = frames_node(t, cur, s->frames, s->n);
		}
		if (!cur)
			ret = -ENOMEM;
		else
			msc_sat_add(&cur->self, f[i].cost);
	}
	tree_costs(&t->root);
	free(f);
	return ret;
}

static void tree_release(struct tree *t)
{
	msc_u64map_release(&t->index);
	msc_u64map_release(&t->memo);
	free(t->chain);
	msc_arena_release(&t->a);
}

/* ------------------------------------------------------------ the svg */

#define SVG_W 1200
#define SVG_PAD 10			/* left and right */
#define SVG_ROW 16
#define SVG_HEAD 58			/* title, subtitle, buttons */
#define SVG_FOOT 26			/* details line */
#define CHAR_W 7.3			/* of 12px monospace */

static const double draw_w = SVG_W - 2 * SVG_PAD;

/* Colours: the program's code warm, libraries ochre, the rest grey. */
static void node_fill(char *buf, size_t n, const struct node *c)
{
	uint64_t h = msc_hash_bytes(c->name, strlen(c->name), 7);
	unsigned v1 = (unsigned)(h % 1000), v2 = (unsigned)((h >> 16) % 1000);

	if (c->merged || c->name[0] == '[' || !c->obj)
		snprintf(buf, n, "#%02x%02x%02x", 190 + v1 % 30, 190 + v1 % 30, 200 + v1 % 30);
	else if (strstr(c->obj, ".so"))
		snprintf(buf, n, "#%02x%02x%02x", 205 + v1 % 50, 170 + v2 % 60, 60 + v1 % 40);
	else
		snprintf(buf, n, "#%02x%02x%02x", 220 + v1 % 35, 80 + v2 % 110, 50 + v1 % 40);
}

/* The label that fits w pixels: the name, cut with "..", or nothing. */
static void svg_label(FILE *out, const char *name, double w)
{
	int fits = (int)((w - 6) / CHAR_W);
	size_t len = strlen(name);

	if (fits < 3)
		return;
	if ((size_t)fits >= len) {
		render_xml(out, name);
		return;
	}
	/* Cut on a character, not inside one. */
	{
		size_t k = 0, chars = 0, want = (size_t)fits - 2;

		while (k < len && chars < want) {
			size_t l = render_utf8_len((const unsigned char *)name + k);

			k += l ? l : 1;
			chars++;
		}
		{
			char *cut = strndup(name, k);

			if (cut) {
				render_xml(out, cut);
				free(cut);
			}
		}
		fputs("..", out);
	}
}

struct svg_ctx {
	FILE *out;
	const struct msc_report *r;
	enum msc_report_cost cost;
	uint64_t total;
	bool icicle;
	int height;
};

static int row_y(const struct svg_ctx *c, unsigned depth)
{
	return c->icicle ? SVG_HEAD + (int)depth * SVG_ROW : c->height - SVG_FOOT - (int)(depth + 1) * SVG_ROW;
}

static void svg_frame(const struct svg_ctx *c, const struct node *n, double x)
{
	FILE *out = c->out;
	double w = (double)n->cost / (double)c->total * draw_w, px = SVG_PAD + x;
	char v[32], fill[16];
	unsigned i;
	int y = row_y(c, n->depth);

	if (c->cost == MSC_COST_ALLOCS)
		msc_fmt_count(v, sizeof(v), (int64_t)n->cost);
	else
		msc_fmt_size(v, sizeof(v), (int64_t)n->cost);
	node_fill(fill, sizeof(fill), n);
	fprintf(out, "<g data-c=\"%" PRIu64 "\"%s><title>", n->cost, n->chain ? " data-run=\"1\"" : "");
	render_xml(out, n->name);
	fputc('\n', out);
	if (n->merged) {
		fputs("each less than a pixel wide", out);
	} else if (n->chain) {
		fputs("each the only caller of the next: ", out);
		render_xml(out, n->chain);
	} else if (n->file || n->obj) {
		if (n->inlined)
			fputs("inlined, ", out);
		if (n->file) {
			render_xml(out, n->file);
			for (i = 0; i < n->nlines; i++)
				fprintf(out, "%s%u", i ? ", " : ":", n->lines[i]);
			if (n->more_lines)
				fputs(", ...", out);
		}
		if (n->obj) {
			fputs(n->file ? " in " : "in ", out);
			render_xml(out, n->obj);
		}
	} else if (n->depth == 0) {
		fputs("everything", out);
	} else if (!strcmp(n->name, "[truncated]")) {
		fputs("stacks cut at ms-record --depth", out);
	} else {
		fputs("no module", out);
	}
	fprintf(out, "\n%s%s (%.2f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
		v, c->cost == MSC_COST_ALLOCS ? (n->cost == 1 ? " allocation" : " allocations") : "",
		100.0 * (double)n->cost / (double)c->total, px, y, w, SVG_ROW - 1, fill);
	fprintf(out, "<text x=\"%.1f\" y=\"%d\">", px + 3, y + SVG_ROW - 4);
	svg_label(out, n->name, w);
	fputs("</text></g>\n", out);
}

static void svg_nodes(const struct svg_ctx *c, const struct node *n, double x)
{
	const struct node *k;

	svg_frame(c, n, x);
	for (k = n->child; k; k = k->next) {
		svg_nodes(c, k, x);
		x += (double)k->cost / (double)c->total * draw_w;
	}
}

/* The script of every flame graph, standalone or in a page (msFlame). */
static const char flame_script[] =
	"function msFlame(svg) {\n"
	"  var X0 = 10, W = +svg.getAttribute('data-w'), total = +svg.getAttribute('data-total');\n"
	"  var bytes = svg.getAttribute('data-unit') === 'bytes', row = 16;\n"
	"  var icicle = svg.getAttribute('data-icicle') === '1', y0 = +svg.getAttribute('data-y0');\n"
	"  var frames = Array.prototype.slice.call(svg.querySelectorAll('.frames > g'));\n"
	"  var details = svg.querySelector('.details'), matched = svg.querySelector('.matched');\n"
	"  var standalone = document.documentElement === svg, term = '', zoomed = null;\n"
	"  function fmt(v) {\n"
	"    if (!bytes) return Math.round(v).toLocaleString('en-US');\n"
	"    if (v < 1024) return v + ' B';\n"
	"    var u = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = -1;\n"
	"    do { v /= 1024; i++; } while (v >= 1023.95 && i < u.length - 1);\n"
	"    return v.toFixed(1) + ' ' + u[i];\n"
	"  }\n"
	"  function fit(g, w) {\n"
	"    var n = Math.floor((w - 6) / 7.3), s = g.msName;\n"
	"    return n < 3 ? '' : s.length <= n ? s : s.substring(0, n - 2) + '..';\n"
	"  }\n"
	"  frames.forEach(function (g) {\n"
	"    var r = g.querySelector('rect'), lines = g.querySelector('title').textContent.split('\\n');\n"
	"    var y = +r.getAttribute('y');\n"
	"    g.msRect = r; g.msText = g.querySelector('text');\n"
	"    g.msName = lines[0]; g.msInfo = lines.join(' \\u00b7 ');\n"
	"    /* A box of a run of frames is found by the frames it holds. */\n"
	"    g.msFind = g.hasAttribute('data-run') ? lines[0] + ' ' + lines[1] : lines[0];\n"
	"    g.msX = (+r.getAttribute('x') - X0) / W; g.msW = +r.getAttribute('width') / W;\n"
	"    g.msD = Math.round((icicle ? y - y0 : y0 - y) / row);\n"
	"    g.msFill = r.getAttribute('fill'); g.msC = +g.getAttribute('data-c');\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"    g.addEventListener('mouseover', function () { details.textContent = g.msInfo; });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"  });\n"
	"  function zoom(z) {\n"
	"    var x0 = z ? z.msX : 0, w0 = z ? z.msW : 1, d0 = z ? z.msD : 0, eps = 0.3 / W;\n"
	"    zoomed = z && z.msD > 0 ? z : null;\n"
	"    svg.querySelector('.unzoom').style.opacity = zoomed ? 1 : 0.35;\n"
	"    frames.forEach(function (g) {\n"
	"      var above = g.msD < d0 && g.msX <= x0 + eps && g.msX + g.msW >= x0 + w0 - eps;\n"
	"      var inside = g.msD >= d0 && g.msX >= x0 - eps && g.msX + g.msW <= x0 + w0 + eps;\n"
	"      if (!above && !inside) { g.style.display = 'none'; return; }\n"
	"      g.style.display = '';\n"
	"      var nx = above ? 0 : (g.msX - x0) / w0 * W, nw = above ? W : g.msW / w0 * W;\n"
	"      g.msRect.setAttribute('x', (X0 + nx).toFixed(1));\n"
	"      g.msRect.setAttribute('width', nw.toFixed(1));\n"
	"      g.msRect.setAttribute('fill-opacity', above ? 0.55 : 1);\n"
	"      g.msText.setAttribute('x', (X0 + nx + 3).toFixed(1));\n"
	"      g.msText.textContent = fit(g, nw);\n"
	"    });\n"
	"  }\n"
	"  function search(t) {\n"
	"    var re = null, hits = [], sum = 0, end = -1, tol = 0.5 / W;\n"
	"    term = t || '';\n"
	"    try { re = new RegExp(term); } catch (e) { re = null; }\n"
	"    frames.forEach(function (g) {\n"
	"      var hit = term !== '' && (re ? re.test(g.msFind) : g.msFind.indexOf(term) >= 0);\n"
	"      g.msRect.setAttribute('fill', hit ? '#d64fd0' : g.msFill);\n"
	"      if (hit) hits.push(g);\n"
	"    });\n"
	"    /* A match inside another counts once: frames nest or lie apart. */\n"
	"    hits.sort(function (a, b) { return a.msX - b.msX || b.msW - a.msW; });\n"
	"    hits.forEach(function (g) {\n"
	"      if (g.msX >= end - tol) { sum += g.msC; end = g.msX + g.msW; }\n"
	"    });\n"
	"    matched.textContent = term === '' ? '' : 'Matched \"' + term + '\": ' + fmt(sum) + ' (' +\n"
	"      (total ? 100 * sum / total : 0).toFixed(2) + '%) in ' + hits.length + ' frame' +\n"
	"      (hits.length === 1 ? '' : 's');\n"
	"    svg.querySelector('.search').textContent = term === '' ? 'Search' : 'Clear search';\n"
	"  }\n"
	"  function ask() {\n"
	"    if (term !== '') { search(''); return; }\n"
	"    var t = window.prompt('Search for frames whose name matches (a regular expression):', '');\n"
	"    if (t) search(t);\n"
	"  }\n"
	"  svg.querySelector('.unzoom').addEventListener('click', function () { zoom(null); });\n"
	"  svg.querySelector('.search').addEventListener('click', ask);\n"
	"  document.addEventListener('keydown', function (e) {\n"
	"    var tag = e.target && e.target.tagName;\n"
	"    if (tag === 'INPUT' || tag === 'TEXTAREA') return;\n"
	"    if ((standalone && (e.ctrlKey || e.metaKey) && e.key === 'f') || e.key === '/') {\n"
	"      e.preventDefault(); term = ''; ask();\n"
	"    } else if (e.key === 'Escape') {\n"
	"      if (term !== '') search(''); else zoom(null);\n"
	"    }\n"
	"  });\n"
	"  svg.msSearch = search;\n"
	"  zoom(null);\n"
	"}\n";

void render_flame_script(FILE *out)
{
	fputs(flame_script, out);
}

int render_flame_svg(struct msc_report *r, const struct msc_report_opts *o, FILE *out, bool standalone)
{
	struct svg_ctx c = { out, r, render_flame_cost(r, o->cost), 0, o->icicle, 0 };
	char phrase[96], meaning[160];
	struct tree t;
	int ret;

	ret = tree_build(&t, r, c.cost);
	if (ret) {
		tree_release(&t);
		return ret;
	}
	c.total = t.root.cost;
	/* A pixel's worth: narrower frames are merged, so that the picture
	 * of a large recording stays small. */
	if (c.total && (ret = tidy(&t, &t.root, (uint64_t)((double)c.total / draw_w) + 1)))
		goto out;
	if ((ret = fold_chains(&t, &t.root)))
		goto out;
	/* The picture is as tall as what it draws. */
	t.depth = 0;
	redepth(&t, &t.root, 0);
	c.height = SVG_HEAD + (int)(t.depth + 1) * SVG_ROW + SVG_FOOT + 4;
	if (standalone)
		fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out, "<svg class=\"msflame\" version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"%s "
		     "data-w=\"%.0f\" data-total=\"%" PRIu64 "\" "
		     "data-unit=\"%s\" data-icicle=\"%d\" data-y0=\"%d\" data-frames=\"%u\" data-drawn=\"%u\"%s>\n",
		SVG_W, c.height, SVG_W, c.height, standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "",
		draw_w, c.total, c.cost == MSC_COST_ALLOCS ? "allocations" : "bytes",
		c.icicle, row_y(&c, 0), t.nodes + 1, t.drawn + !!c.total,
		standalone ? " onload=\"msFlame(this)\"" : "");
	fputs("<style>.msflame text { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; "
	      "font-size: 12px; fill: #000; }\n"
	      ".msflame .frames g { cursor: pointer; } .msflame .frames rect { rx: 2px; }\n"
	      ".msflame .frames g:hover rect { stroke: #000; stroke-width: 0.6; }\n"
	      ".msflame .button { cursor: pointer; fill: #1f4e9c; }\n"
	      ".msflame .title { font-size: 16px; font-family: sans-serif; }\n"
	      ".msflame .subtitle { font-size: 12px; font-family: sans-serif; fill: #444; }</style>\n", out);
	if (standalone)
		fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", flame_script);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fbfbf4\"/>\n"
		     "<text class=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", SVG_W / 2);
	render_xml(out, o->title ? o->title : (r->argv ? r->argv : "memscope"));
	fprintf(out, ": %s</text>\n<text class=\"subtitle\" x=\"%d\" y=\"40\" text-anchor=\"middle\">",
		cost_phrase(phrase, sizeof(phrase), r, c.cost, c.total), SVG_W / 2);
	cost_meaning(meaning, sizeof(meaning), r, c.cost);
	if (o->cost == MSC_COST_AUTO && c.cost != MSC_COST_LEAKED)
		fprintf(out, "Nothing %s: the width of a frame is its share of the %s",
			attach_mode(r) ? "was live at the end" : "leaked", meaning);
	else
		fprintf(out, "The width of a frame is its share of the %s", meaning);
	if (t.drawn + 1 < t.nodes + 1)
		fprintf(out, "; frames under a pixel merged (%u of %u drawn)", t.drawn + 1, t.nodes + 1);
	fprintf(out, "</text>\n<text class=\"button unzoom\" x=\"%d\" y=\"22\">Reset zoom</text>\n"
		     "<text class=\"button search\" x=\"%d\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		     "<text class=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		     "<text class=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n<g class=\"frames\">\n",
		SVG_PAD, SVG_W - SVG_PAD, SVG_PAD, c.height - 10, SVG_W - SVG_PAD, c.height - 10);
	if (c.total)
		svg_nodes(&c, &t.root, 0);
	else
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">nothing to show</text>\n",
			SVG_W / 2, SVG_HEAD + 20);
	fputs("</g>\n</svg>\n", out);
out:
	tree_release(&t);
	return ret;
}

int render_svg(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	return render_flame_svg(r, o, out, true);
}
