/* SPDX-License-Identifier: MIT */
/* Reports from memscope streams: rendering.  See msc_report.h. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "msc_diff.h"
#include "msc_report.h"
#include "msc_util.h"

/* ------------------------------------------------------------- helpers */

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* "fn file.c:12" for one frame, into buf. */
static const char *where(char *buf, size_t n, const struct msc_rframe *f)
{
	if (!f) {
		snprintf(buf, n, "?");
	} else if (f->fn && f->file && f->line) {
		snprintf(buf, n, "%s %s:%u", f->fn, base(f->file), f->line);
	} else if (f->fn && f->fn_offset) {
		snprintf(buf, n, "%s+%s (%s)", f->fn, f->fn_offset, f->obj ? base(f->obj) : "?");
	} else if (f->fn) {
		snprintf(buf, n, "%s (%s)", f->fn, f->obj ? base(f->obj) : "?");
	} else {
		snprintf(buf, n, "%s+%s", f->obj ? base(f->obj) : "?", f->offset ? f->offset : "?");
	}
	return buf;
}

/* A frame's place in at most width columns: the function name gives way
 * before the file and line do. */
static const char *fit(char *buf, size_t n, const struct msc_rframe *f, size_t width)
{
	char loc[256];
	size_t len;

	where(buf, n, f);
	len = strlen(buf);
	if (len <= width || !f || !f->fn)
		return len <= width ? buf : (buf[width] = '\0', buf);
	if (f->file && f->line)
		snprintf(loc, sizeof(loc), " %s:%u", base(f->file), f->line);
	else if (f->fn_offset)
		snprintf(loc, sizeof(loc), "+%s (%s)", f->fn_offset, f->obj ? base(f->obj) : "?");
	else
		snprintf(loc, sizeof(loc), " (%s)", f->obj ? base(f->obj) : "?");
	if (strlen(loc) + 4 > width) {
		buf[width] = '\0';
		return buf;
	}
	snprintf(buf, n, "%.*s..%s", (int)(width - strlen(loc) - 2), f->fn, loc);
	return buf;
}

static const struct msc_rframe *attributed(const struct msc_report *r, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);

	return s && s->n ? &s->frames[s->attr] : NULL;
}

/* Frames below main (the C runtime's own) add nothing to a report. */
static bool runtime_frame(const struct msc_rframe *f)
{
	return f->fn && (!strcmp(f->fn, "__libc_start_call_main") || !strcmp(f->fn, "__libc_start_main") ||
			 !strcmp(f->fn, "__libc_start_main_impl") || !strcmp(f->fn, "_start") ||
			 !strcmp(f->fn, "start_thread") || !strcmp(f->fn, "clone3") || !strcmp(f->fn, "clone"));
}

static char *size_range(char *buf, size_t n, uint64_t lo, uint64_t hi)
{
	char a[24], b[24];

	if (lo == hi)
		snprintf(buf, n, "%s", msc_fmt_count(a, sizeof(a), (int64_t)lo));
	else
		snprintf(buf, n, "%s..%s", msc_fmt_count(a, sizeof(a), (int64_t)lo),
			 msc_fmt_count(b, sizeof(b), (int64_t)hi));
	return buf;
}

static char *sz(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_size(buf, n, (int64_t)v);
}

static char *cnt(char *buf, size_t n, uint64_t v)
{
	return msc_fmt_count(buf, n, (int64_t)v);
}

/* Exact bytes, "89,609 B": what leaked is an answer, not an estimate. */
static char *exact(char *buf, size_t n, uint64_t v)
{
	char c[32];

	snprintf(buf, n, "%s B", msc_fmt_count(c, sizeof(c), (int64_t)v));
	return buf;
}

/* Stack id order, for ties: the same report from the same data. */
struct group {
	uint32_t stack;
	const char *fn;
	const char *kind;		/* leaks */
	uint64_t bytes, allocs, frees, live_bytes, at_peak, temporary, short_lived, count;
	uint64_t size_lo, size_hi;
};

/* Short-lived: freed within 1 ms, the buckets below msc_age_bucket(1 ms). */
#define SHORT_LIVED_BUCKETS msc_age_bucket(1000000)

/* Sites grouped by stack (all sizes of one call path together). */
static struct group *site_groups(const struct msc_report *r, size_t *n)
{
	struct msc_u64map idx;
	struct group *g = calloc(r->nsites + 1, sizeof(*g));
	size_t i, k = 0;

	*n = 0;
	if (!g || msc_u64map_init(&idx, r->nsites + 1)) {
		free(g);
		return NULL;
	}
	for (i = 0; i < r->nsites; i++) {
		const struct msc_rsite *s = &r->sites[i];
		uint64_t *slot;
		struct group *x;
		unsigned b;

		slot = msc_u64map_get(&idx, (uint64_t)s->stack + 1);
		if (slot) {
			x = &g[*slot];
		} else {
			msc_u64map_put(&idx, (uint64_t)s->stack + 1, k);
			x = &g[k++];
			x->stack = s->stack;
			x->fn = s->fn;
			x->size_lo = s->size;
		}
		x->bytes += s->bytes;
		x->allocs += s->allocs;
		x->frees += s->frees;
		x->live_bytes += s->live_bytes;
		x->at_peak += s->at_peak;
		x->temporary += s->temporary;
		for (b = 0; b < SHORT_LIVED_BUCKETS; b++)
			x->short_lived += s->ages[b];
		if (s->size < x->size_lo)
			x->size_lo = s->size;
		if (s->size_max > x->size_hi)
			x->size_hi = s->size_max;
	}
	msc_u64map_release(&idx);
	*n = k;
	return g;
}

static bool leaked_kind(const char *kind)
{
	int k = msc_leak_kind_parse(kind);

	return k >= 0 && msc_leak_kind_leaked((unsigned)k);
}

static int kind_rank(const char *k)
{
	static const char *const order[] = { "definitely", "indirectly", "possibly", "unscanned",
					      "unknown", "reachable" };
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(order); i++)
		if (!strcmp(order[i], k))
			return (int)i;
	return (int)ARRAY_SIZE(order);
}

/* Leaks grouped by (stack, kind). */
static struct group *leak_groups(const struct msc_report *r, size_t *n)
{
	struct msc_u64map idx;
	struct group *g = calloc(r->nleaks + 1, sizeof(*g));
	size_t i, k = 0;

	*n = 0;
	if (!g || msc_u64map_init(&idx, r->nleaks + 1)) {
		free(g);
		return NULL;
	}
	for (i = 0; i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];
		uint64_t key = ((uint64_t)l->stack << 8 | (uint64_t)kind_rank(l->kind)) + 1;
		uint64_t *slot;
		struct group *x;

		slot = msc_u64map_get(&idx, key);
		if (slot) {
			x = &g[*slot];
		} else {
			msc_u64map_put(&idx, key, k);
			x = &g[k++];
			x->stack = l->stack;
			x->kind = l->kind;
			x->fn = l->fn;
			x->size_lo = l->size;
		}
		x->count += l->count;
		x->bytes += l->bytes;
		if (l->size < x->size_lo)
			x->size_lo = l->size;
		if (l->size_max > x->size_hi)
			x->size_hi = l->size_max;
	}
	msc_u64map_release(&idx);
	*n = k;
	return g;
}

static int by_bytes(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int by_allocs(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	return by_bytes(a, b);
}

static int by_peak(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak > y->at_peak ? -1 : 1;
	return by_bytes(a, b);
}

static int by_temporary(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	uint64_t tx = x->temporary > x->short_lived ? x->temporary : x->short_lived;
	uint64_t ty = y->temporary > y->short_lived ? y->temporary : y->short_lived;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	return by_bytes(a, b);
}

static int by_leak(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int kx = kind_rank(x->kind), ky = kind_rank(y->kind);

	if (kx != ky)
		return kx - ky;
	return by_bytes(a, b);
}

/* Totals of what the stream holds for the main process. */
struct totals {
	uint64_t allocs, frees, bytes, live_bytes;
	uint64_t leaked, leaked_blocks, definitely, indirectly, possibly, reachable, unscanned;
	uint64_t unknown, unknown_blocks;	/* live at the end of an attach: fate unknown */
	uint64_t temporary, short_lived;
};

/* An attach recording: no leaks, blocks live at the end are of unknown fate. */
static bool attached(const struct msc_report *r)
{
	return r->mode && !strcmp(r->mode, "attach");
}

static void totals_of(const struct msc_report *r, struct totals *t)
{
	size_t i;
	unsigned b;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < r->nsites; i++) {
		const struct msc_rsite *s = &r->sites[i];

		t->allocs += s->allocs;
		t->frees += s->frees;
		t->bytes += s->bytes;
		t->live_bytes += s->live_bytes;
		t->temporary += s->temporary;
		for (b = 0; b < SHORT_LIVED_BUCKETS; b++)
			t->short_lived += s->ages[b];
	}
	for (i = 0; i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];

		if (leaked_kind(l->kind)) {
			t->leaked += l->bytes;
			t->leaked_blocks += l->count;
		}
		if (!strcmp(l->kind, "definitely"))
			t->definitely += l->bytes;
		else if (!strcmp(l->kind, "indirectly"))
			t->indirectly += l->bytes;
		else if (!strcmp(l->kind, "possibly"))
			t->possibly += l->bytes;
		else if (!strcmp(l->kind, "reachable"))
			t->reachable += l->bytes;
		else if (!strcmp(l->kind, "unknown")) {
			t->unknown += l->bytes;
			t->unknown_blocks += l->count;
		} else
			t->unscanned += l->bytes;
	}
}

static const char *blocks_word(uint64_t n)
{
	return n == 1 ? "block" : "blocks";
}

static char *seconds(char *buf, size_t n, uint64_t ns)
{
	snprintf(buf, n, "%.3f s", (double)ns / 1e9);
	return buf;
}

/* Sparkline of v[0..n) in `width` cells (UTF-8 block elements). */
static void sparkline(FILE *out, const uint64_t *v, size_t n, unsigned width)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned c;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	if (n < width)
		width = (unsigned)n;
	for (c = 0; c < width; c++) {
		size_t from = c * n / width, to = (c + 1) * n / width;
		uint64_t m = 0;
		unsigned level;

		for (i = from; i < to && i < n; i++)
			if (v[i] > m)
				m = v[i];
		level = hi > lo ? (unsigned)((m - lo) * 7 / (hi - lo)) : 0;
		fputs(bars[level], out);
	}
}

/* ---------------------------------------------------------- text and md */

struct ctx {
	struct msc_report *r;
	const struct msc_report_opts *o;
	FILE *out;
	bool md;
};

static void heading(struct ctx *c, const char *title)
{
	if (c->md)
		fprintf(c->out, "\n### %s\n\n", title);
	else
		fprintf(c->out, "\n%s\n", title);
}

static void print_stack(struct ctx *c, uint32_t id, const char *indent)
{
	const struct msc_rstack *s = msc_report_stack(c->r, id);
	char buf[512];
	unsigned i, shown = 0;

	if (!s) {
		fprintf(c->out, "%s(no stack)\n", indent);
		return;
	}
	for (i = 0; i < s->n; i++) {
		const struct msc_rframe *f = &s->frames[i];

		if (runtime_frame(f))
			continue;
		if (c->md) {
			fprintf(c->out, "%s%s%s", indent, where(buf, sizeof(buf), f), f->inlined ? " (inlined)" : "");
			if (f->obj && f->file)
				fprintf(c->out, " [%s]", base(f->obj));
			fputc('\n', c->out);
		} else {
			size_t room = 80 - strlen(indent) - (f->inlined ? 10 : 0);

			fprintf(c->out, "%s%s%s\n", indent, fit(buf, sizeof(buf), f, room),
				f->inlined ? " (inlined)" : "");
		}
		if (++shown >= 24 && i + 1 < s->n) {
			fprintf(c->out, "%s... %u more frames\n", indent, s->n - i - 1);
			break;
		}
	}
}

/*
 * What a filter dropped that this report's figures would have counted: the
 * events of a report aggregated from events, the sites and leaks of one
 * read from aggregates.  (Turning an --events stream into its aggregates
 * with ms-filter --type drops nothing the report counts.)
 */
static bool filtered_relevant(const struct msc_report *r, const struct msc_filtered *f)
{
	if (!f->records && !(f->trimmed_allocs && !r->from_events))
		return false;
	if (r->from_events)
		return !strcmp(f->type, "alloc") || !strcmp(f->type, "free") || !strcmp(f->type, "mmap") ||
		       !strcmp(f->type, "leak");
	return !strcmp(f->type, "site") || !strcmp(f->type, "leak");
}

static unsigned filtered_count(const struct msc_report *r)
{
	unsigned i, n = 0;

	for (i = 0; i < r->nfiltered; i++)
		n += filtered_relevant(r, &r->filtered[i]);
	return n;
}

static void summary(struct ctx *c)
{
	struct msc_report *r = c->r;
	struct totals t;
	char a[32], b[32], d[32];
	size_t i;

	totals_of(r, &t);
	if (c->md) {
		fprintf(c->out, "## memscope report: `%s`%s\n\n", r->argv ? r->argv : "?",
			r->pid ? "" : "");
		fprintf(c->out, "| | |\n|---|---|\n");
		if (r->pid)
			fprintf(c->out, "| process | %d |\n", r->pid);
		if (r->start)
			fprintf(c->out, "| recorded | %s |\n", r->start);
		if (r->complete)
			fprintf(c->out, "| duration | %s |\n", seconds(a, sizeof(a), r->duration));
		if (r->complete && r->reason)
			fprintf(c->out, "| ended | %s%s |\n", r->reason,
				r->has_status ? (snprintf(d, sizeof(d), " %d", r->status), d) :
				r->signal ? (snprintf(d, sizeof(d), " %d", r->signal), d) : "");
		fprintf(c->out, "| allocations | %s (%s) |\n", cnt(a, sizeof(a), t.allocs), sz(b, sizeof(b), t.bytes));
		fprintf(c->out, "| frees | %s |\n", cnt(a, sizeof(a), t.frees));
		if (r->peak)
			fprintf(c->out, "| peak heap | %s at %s |\n", sz(a, sizeof(a), r->peak),
				seconds(b, sizeof(b), r->peak_ts));
		if (!attached(r))
			fprintf(c->out, "| **leaked** | **%s in %s %s** |\n", exact(a, sizeof(a), t.leaked),
				cnt(b, sizeof(b), t.leaked_blocks), blocks_word(t.leaked_blocks));
		if (t.definitely || t.indirectly)
			fprintf(c->out, "| definitely / indirectly lost | %s / %s |\n",
				exact(a, sizeof(a), t.definitely), exact(b, sizeof(b), t.indirectly));
		if (t.possibly)
			fprintf(c->out, "| possibly lost | %s |\n", exact(a, sizeof(a), t.possibly));
		if (!attached(r))
			fprintf(c->out, "| still reachable | %s |\n", exact(a, sizeof(a), t.reachable));
		if (t.unscanned)
			fprintf(c->out, "| unscanned (no reachability scan) | %s |\n", exact(a, sizeof(a), t.unscanned));
		if (t.unknown)
			fprintf(c->out, "| live at the end (fate unknown) | %s in %s %s |\n", exact(a, sizeof(a), t.unknown),
				cnt(b, sizeof(b), t.unknown_blocks), blocks_word(t.unknown_blocks));
		if (r->complete)
			fprintf(c->out, "| events lost | %" PRIu64 " |\n", r->lost);
	} else {
		fprintf(c->out, "memscope report: %s", r->argv ? r->argv : "?");
		if (r->pid)
			fprintf(c->out, " (pid %d)", r->pid);
		fputc('\n', c->out);
		if (r->start)
			fprintf(c->out, "recorded %s", r->start);
		if (r->complete)
			fprintf(c->out, ", %s", seconds(a, sizeof(a), r->duration));
		if (r->complete && r->reason) {
			fprintf(c->out, ", %s", r->reason);
			if (r->has_status)
				fprintf(c->out, " %d", r->status);
			else if (r->signal)
				fprintf(c->out, " %d", r->signal);
		}
		fputc('\n', c->out);
		fprintf(c->out, "\n  allocations      %14s  (%s)\n", cnt(a, sizeof(a), t.allocs), sz(b, sizeof(b), t.bytes));
		fprintf(c->out, "  frees            %14s\n", cnt(a, sizeof(a), t.frees));
		if (r->peak)
			fprintf(c->out, "  peak heap        %14s  at %s\n", sz(a, sizeof(a), r->peak),
				seconds(b, sizeof(b), r->peak_ts));
		if (!attached(r))
			fprintf(c->out, "  leaked           %14s  in %s %s\n", exact(a, sizeof(a), t.leaked),
				cnt(b, sizeof(b), t.leaked_blocks), blocks_word(t.leaked_blocks));
		if (t.definitely || t.indirectly)
			fprintf(c->out, "    definitely     %14s\n    indirectly     %14s\n",
				exact(a, sizeof(a), t.definitely), exact(b, sizeof(b), t.indirectly));
		if (t.possibly)
			fprintf(c->out, "  possibly lost    %14s\n", exact(a, sizeof(a), t.possibly));
		if (!attached(r))
			fprintf(c->out, "  still reachable  %14s\n", exact(a, sizeof(a), t.reachable));
		if (t.unscanned)
			fprintf(c->out, "  unscanned        %14s  (no reachability scan)\n", exact(a, sizeof(a), t.unscanned));
		if (t.unknown)
			fprintf(c->out, "  live at the end  %14s  in %s %s (fate unknown)\n", exact(a, sizeof(a), t.unknown),
				cnt(b, sizeof(b), t.unknown_blocks), blocks_word(t.unknown_blocks));
		if (r->complete)
			fprintf(c->out, "  events lost      %14" PRIu64 "\n", r->lost);
	}
	if (r->streams > 1)
		fprintf(c->out, c->md ? "\nThe stream holds %u more processes (ms-record --follow): this report is "
					"about pid %d; `ms-filter --pid PID` picks another.\n" :
					"\n  the stream holds %u more processes (ms-record --follow): this report is\n"
					"  about pid %d; ms-filter --pid PID picks another\n",
			r->streams - 1, r->pid);
	if (!r->complete)
		fprintf(c->out, c->md ? "\n> **The stream was cut short** (no end record): this report covers what it holds.\n" :
					"\n  THE STREAM WAS CUT SHORT (no end record): this report covers what it holds.\n");
	if (filtered_count(r)) {
		bool any = false;

		fprintf(c->out, c->md ? "\n**Filtered out**" : "\n  filtered out:");
		for (i = 0; i < r->nfiltered; i++) {
			const struct msc_filtered *f = &r->filtered[i];

			if (!filtered_relevant(r, f))
				continue;
			if (f->records) {
				fprintf(c->out, "%s %s %s record%s (%s", any ? "," : "",
					cnt(b, sizeof(b), f->records), f->type, f->records == 1 ? "" : "s",
					!strcmp(f->type, "leak") ? exact(a, sizeof(a), f->bytes) :
								   sz(a, sizeof(a), f->bytes));
				if (f->blocks)
					fprintf(c->out, " in %s block%s", cnt(b, sizeof(b), f->blocks),
						f->blocks == 1 ? "" : "s");
				fputc(')', c->out);
				any = true;
			}
			if (f->trimmed_allocs && !r->from_events) {
				fprintf(c->out, "%s %s transient allocation%s (%s) taken from the %ss kept",
					any ? "," : "", cnt(b, sizeof(b), f->trimmed_allocs),
					f->trimmed_allocs == 1 ? "" : "s", sz(a, sizeof(a), f->trimmed_bytes),
					f->type);
				any = true;
			}
		}
		fprintf(c->out, c->md ? " by `" : "\n    by ");
		for (i = 0; i < r->nfilters; i++)
			fprintf(c->out, "%s%s", i ? " " : "", r->filters[i]);
		fprintf(c->out, c->md ? "`.\n" : "\n");
		if (r->has_end_totals && r->end_allocs != t.allocs)
			fprintf(c->out, c->md ? "The recording held %s allocations (%s) before filtering.\n" :
						"    the recording held %s allocations (%s) before filtering\n",
				cnt(a, sizeof(a), r->end_allocs), sz(b, sizeof(b), r->end_bytes));
	}
}

static void leaks(struct ctx *c)
{
	size_t n, i, shown = 0, more;
	struct group *g = leak_groups(c->r, &n);
	char a[32], b[32], s[96], w[256];
	const char *lost;
	uint64_t total = 0, blocks = 0;

	if (!g)
		return;
	qsort(g, n, sizeof(*g), by_leak);
	for (i = 0; i < n; i++)
		if (leaked_kind(g[i].kind)) {
			total += g[i].bytes;
			blocks += g[i].count;
		}
	if (attached(c->r)) {
		/* Blocks of an attach are not leaks: what became of them after
		 * the detach is not known. */
		for (i = 0; i < n; i++)
			if (!strcmp(g[i].kind, "unknown")) {
				total += g[i].bytes;
				blocks += g[i].count;
			}
		snprintf(s, sizeof(s), "Live at the end: %s in %s %s (fate unknown)", exact(a, sizeof(a), total),
			 cnt(b, sizeof(b), blocks), blocks_word(blocks));
		heading(c, c->md ? s : "LIVE AT THE END (FATE UNKNOWN)");
		fprintf(c->out, c->md ? "Allocated while attached and not freed when recording stopped: not leaks, "
					"only growth to watch. Largest first.\n\n" :
					"  %s in %s %s allocated while attached and not freed when recording\n"
					"  stopped: not leaks, only growth to watch; largest first\n",
			exact(a, sizeof(a), total), cnt(b, sizeof(b), blocks), blocks_word(blocks));
	} else {
		snprintf(s, sizeof(s), "Leaks: %s in %s %s", exact(a, sizeof(a), total), cnt(b, sizeof(b), blocks),
			 blocks_word(blocks));
		heading(c, c->md ? s : "LEAKS");
		if (!c->md)
			fprintf(c->out, "  %s in %s %s, largest first; still reachable blocks are not leaks\n",
				exact(a, sizeof(a), total), cnt(b, sizeof(b), blocks), blocks_word(blocks));
	}
	for (i = 0; i < n && shown < c->o->top; i++) {
		struct group *x = &g[i];

		if (!strcmp(x->kind, "reachable"))
			continue;
		shown++;
		size_range(s, sizeof(s), x->size_lo, x->size_hi);
		lost = !strcmp(x->kind, "unscanned") ? "" : !strcmp(x->kind, "unknown") ? " fate" : " lost";
		if (c->md) {
			fprintf(c->out, "%s%zu. **%s** in %s %s of %s B from `%s` at `%s`, %s%s\n\n   ```\n",
				shown > 1 ? "\n" : "", shown, exact(a, sizeof(a), x->bytes), cnt(b, sizeof(b), x->count),
				blocks_word(x->count), s, x->fn ? x->fn : "?",
				where(w, sizeof(w), attributed(c->r, x->stack)), x->kind, lost);
			print_stack(c, x->stack, "   ");
			fprintf(c->out, "   ```\n");
		} else {
			fprintf(c->out, "\n  %s in %s %s of %s B (%s), %s%s\n", exact(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->count), blocks_word(x->count), s, x->fn ? x->fn : "?", x->kind,
				lost);
			print_stack(c, x->stack, "      ");
		}
	}
	for (more = 0; i < n; i++)
		more += strcmp(g[i].kind, "reachable") != 0;
	if (!shown)
		fprintf(c->out, c->md ? "No %s.\n" : "  no %s\n", attached(c->r) ? "live blocks" : "leaks");
	else if (more)
		fprintf(c->out, c->md ? "\n_%zu more leak sites not shown (--top)._\n" : "\n  (%zu more not shown)\n",
			more);
	free(g);
}

/*
 * A table of sites.  Markdown has room for every column; the 80-column
 * text shows the figures the table is sorted by (col: 0 bytes, 1 count,
 * 2 at the peak) and leaves the rest of the line to where.
 */
static void site_table(struct ctx *c, const char *title, struct group *g, size_t n,
		       int (*cmp)(const void *, const void *), int col)
{
	char a[32], b[32], d[32], e[32], s[64], w[256];
	size_t i;

	qsort(g, n, sizeof(*g), cmp);
	heading(c, title);
	if (c->md)
		fprintf(c->out, "| bytes | allocations | live | at peak | sizes | where |\n"
				"|---:|---:|---:|---:|---:|---|\n");
	else if (col == 2)
		fprintf(c->out, "  %10s %10s %12s  %s\n", "AT PEAK", "LIVE", "SIZES", "WHERE");
	else
		fprintf(c->out, "  %10s %11s %12s  %s\n", "BYTES", "ALLOCS", "SIZES", "WHERE");
	for (i = 0; i < n && i < c->o->top; i++) {
		struct group *x = &g[i];

		if ((col == 1 && !x->allocs) || (col == 2 && !x->at_peak))
			break;
		size_range(s, sizeof(s), x->size_lo, x->size_hi);
		if (c->md)
			fprintf(c->out, "| %s | %s | %s | %s | %s | `%s` |\n", sz(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->allocs), sz(d, sizeof(d), x->live_bytes),
				sz(e, sizeof(e), x->at_peak), s, where(w, sizeof(w), attributed(c->r, x->stack)));
		else if (col == 2)
			fprintf(c->out, "  %10s %10s %12s  %s\n", sz(e, sizeof(e), x->at_peak),
				sz(d, sizeof(d), x->live_bytes), s, fit(w, sizeof(w), attributed(c->r, x->stack), 42));
		else
			fprintf(c->out, "  %10s %11s %12s  %s\n", sz(a, sizeof(a), x->bytes),
				cnt(b, sizeof(b), x->allocs), s, fit(w, sizeof(w), attributed(c->r, x->stack), 41));
	}
	if (!n)
		fprintf(c->out, c->md ? "No allocations.\n" : "  no allocations\n");
}

static void top(struct ctx *c)
{
	size_t n;
	struct group *g = site_groups(c->r, &n);

	if (!g)
		return;
	site_table(c, c->md ? "Top allocation sites by bytes" : "TOP SITES BY BYTES ALLOCATED", g, n, by_bytes, 0);
	site_table(c, c->md ? "Top allocation sites by count" : "TOP SITES BY NUMBER OF ALLOCATIONS", g, n, by_allocs, 1);
	site_table(c, c->md ? "What the peak is made of" : "TOP SITES AT THE PEAK", g, n, by_peak, 2);
	free(g);
}

static void temporary(struct ctx *c)
{
	size_t n, i;
	struct group *g = site_groups(c->r, &n);
	struct totals t;
	char a[32], b[32], d[32], w[256];

	if (!g)
		return;
	totals_of(c->r, &t);
	qsort(g, n, sizeof(*g), by_temporary);
	heading(c, c->md ? "Temporary allocations" : "TEMPORARY ALLOCATIONS");
	fprintf(c->out, c->md ? "%s of %s allocations were freed before their thread allocated again "
				"(temporary), %s within a millisecond (short-lived).\n\n" :
				"  %s of %s allocations were freed before their thread allocated again\n"
				"  (temporary), %s within a millisecond (short-lived).\n",
		cnt(a, sizeof(a), t.temporary), cnt(b, sizeof(b), t.allocs), cnt(d, sizeof(d), t.short_lived));
	if (c->md)
		fprintf(c->out, "| temporary | short-lived | of allocations | where |\n|---:|---:|---:|---|\n");
	else
		fprintf(c->out, "  %11s %11s %11s  %s\n", "TEMPORARY", "SHORTLIVED", "ALLOCS", "WHERE");
	for (i = 0; i < n && i < c->o->top; i++) {
		struct group *x = &g[i];

		if (!x->temporary && !x->short_lived)
			break;
		where(w, sizeof(w), attributed(c->r, x->stack));
		if (c->md)
			fprintf(c->out, "| %s | %s | %s | `%s` |\n", cnt(a, sizeof(a), x->temporary),
				cnt(b, sizeof(b), x->short_lived), cnt(d, sizeof(d), x->allocs), w);
		else
			fprintf(c->out, "  %11s %11s %11s  %s\n", cnt(a, sizeof(a), x->temporary),
				cnt(b, sizeof(b), x->short_lived), cnt(d, sizeof(d), x->allocs),
				fit(w, sizeof(w), attributed(c->r, x->stack), 40));
	}
	free(g);
}

static void sizes(struct ctx *c)
{
	uint64_t hist[65] = { 0 }, bytes[65] = { 0 }, max = 0;
	char a[32], b[32], lo[32], hi[32];
	unsigned k, first = 64, last = 0;
	size_t i;

	for (i = 0; i < c->r->nsites; i++) {
		const struct msc_rsite *s = &c->r->sites[i];

		k = s->size ? 64 - (unsigned)__builtin_clzll(s->size) : 0;
		hist[k] += s->allocs;
		bytes[k] += s->bytes;
	}
	for (k = 0; k < 65; k++)
		if (hist[k]) {
			if (k < first)
				first = k;
			last = k;
			if (hist[k] > max)
				max = hist[k];
		}
	heading(c, c->md ? "Allocation sizes" : "ALLOCATION SIZES");
	if (!max) {
		fprintf(c->out, c->md ? "No allocations.\n" : "  no allocations\n");
		return;
	}
	if (c->md)
		fprintf(c->out, "| size | allocations | bytes | |\n|---:|---:|---:|---|\n");
	for (k = first; k <= last; k++) {
		unsigned bar = (unsigned)(hist[k] * 30 / max), j;

		if (k == 0)
			snprintf(lo, sizeof(lo), "0");
		else
			sz(lo, sizeof(lo), 1ull << (k - 1));
		sz(hi, sizeof(hi), k ? (1ull << k) - 1 : 0);
		if (c->md)
			fprintf(c->out, "| %s..%s | %s | %s | ", lo, hi, cnt(a, sizeof(a), hist[k]),
				sz(b, sizeof(b), bytes[k]));
		else
			fprintf(c->out, "  %9s..%-9s %11s %10s  ", lo, hi, cnt(a, sizeof(a), hist[k]),
				sz(b, sizeof(b), bytes[k]));
		for (j = 0; j < bar; j++)
			fputs("█", c->out);
		if (!bar && hist[k])
			fputs("▏", c->out);
		fputs(c->md ? " |\n" : "\n", c->out);
	}
}

static void timeline(struct ctx *c)
{
	struct msc_report *r = c->r;
	uint64_t *rss, *heap, rlo = UINT64_MAX, rhi = 0, hlo = UINT64_MAX, hhi = 0, last_ts = 0;
	char a[32], b[32], d[32], e[32];
	size_t i, n = 0;

	heading(c, c->md ? "Timeline" : "TIMELINE");
	rss = calloc(r->nsamples + 1, sizeof(*rss));
	heap = calloc(r->nsamples + 1, sizeof(*heap));
	if (!rss || !heap)
		goto out;
	for (i = 0; i < r->nsamples; i++) {
		rss[n] = r->samples[i].rss;
		heap[n] = r->samples[i].heap;
		last_ts = r->samples[i].ts;
		if (rss[n] < rlo)
			rlo = rss[n];
		if (rss[n] > rhi)
			rhi = rss[n];
		if (heap[n] < hlo)
			hlo = heap[n];
		if (heap[n] > hhi)
			hhi = heap[n];
		n++;
	}
	if (!n) {
		fprintf(c->out, c->md ? "No samples (the program ran for less than one sampling interval).\n" :
					"  no samples (the program ran for less than one sampling interval)\n");
		goto out;
	}
	fprintf(c->out, c->md ? "%zu samples over %s.\n\n```\n" : "  %zu samples over %s\n", n,
		seconds(a, sizeof(a), last_ts));
	fprintf(c->out, "  rss   ");
	sparkline(c->out, rss, n, 50);
	fprintf(c->out, "  %s..%s\n", sz(a, sizeof(a), rlo), sz(b, sizeof(b), rhi));
	if (r->samples[0].has_heap) {
		fprintf(c->out, "  heap  ");
		sparkline(c->out, heap, n, 50);
		fprintf(c->out, "  %s..%s\n", sz(d, sizeof(d), hlo), sz(e, sizeof(e), hhi));
	}
	if (c->md)
		fprintf(c->out, "```\n");
out:
	free(rss);
	free(heap);
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
	char a[40], b[40], d[40];
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
			fprintf(c->out, c->md ? "| `%s` | %s | %s | %s | %s |\n" : "  %-16.16s %-14s %11s -> %-11s %11s\n",
				y->comm ? y->comm : "?", y->metric ? y->metric : "?", a, b, d);
		}
	}
}

/*
 * The deltas of ms-diff, grouped by what changed (programs or processes,
 * mappings, leaks, sites) and by metric in the order ms-diff compared
 * them, largest growth first; sites and leaks with their stacks.
 */
static void deltas(struct ctx *c)
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

			if (stacked)
				where(what, sizeof(what), attributed(r, y->stack));
			else if (!strcmp(key, "mapping"))
				snprintf(what, sizeof(what), "%d %s %s", y->pid, y->comm ? y->comm : "",
					 y->name ? y->name : "");
			else
				snprintf(what, sizeof(what), "%d %s", y->pid, y->comm ? y->comm : "");
			figure(a, sizeof(a), y->metric, y->before, false);
			figure(b, sizeof(b), y->metric, y->after, false);
			figure(d, sizeof(d), y->metric, y->change, true);
			if (c->md && stacked) {
				fprintf(c->out, "%s%zu. **%s** (%s → %s%s%s) at `%s`\n\n   ```\n", j ? "\n" : "",
					j + 1, d, a, b, st ? ", " : "", st ? st : "", what);
				print_stack(c, y->stack, "   ");
				fprintf(c->out, "   ```\n");
			} else if (c->md) {
				fprintf(c->out, "| %s | %s | %s | `%s`%s%s |\n", d, a, b, what, st ? " " : "",
					st ? st : "");
			} else {
				fprintf(c->out, "  %11s %11s -> %-11s %.38s%s%s\n", d, a, b, what, st ? " " : "",
					st ? st : "");
				if (stacked)
					print_stack(c, y->stack, "      ");
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

static void processes(struct ctx *c)
{
	struct msc_report *r = c->r;
	char a[32], b[32], d[32];
	size_t i;

	heading(c, c->md ? "Processes" : "PROCESSES");
	if (c->md)
		fprintf(c->out, "| pid | process | rss | pss | swap |\n|---:|---|---:|---:|---:|\n");
	else
		fprintf(c->out, "  %7s %-24s %11s %11s %11s\n", "PID", "PROCESS", "RSS", "PSS", "SWAP");
	for (i = 0; i < r->nprocs && i < c->o->top; i++) {
		const struct msc_rproc *p = &r->procs[i];

		fprintf(c->out, c->md ? "| %d | %s | %s | %s | %s |\n" : "  %7d %-24.24s %11s %11s %11s\n", p->pid,
			p->comm ? p->comm : "?", sz(a, sizeof(a), p->rss), p->has_pss ? sz(b, sizeof(b), p->pss) : "-",
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
						"  %7d %-32.32s %-7s %10s %10s %10s\n",
				m->pid, m->name ? m->name : "?", m->kind ? m->kind : "", sz(a, sizeof(a), m->rss),
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
static void poll_view(struct ctx *c)
{
	struct msc_report *r = c->r;
	const struct msc_rsample *s0 = r->nsamples ? &r->samples[0] : NULL;
	const struct msc_rsample *s1 = r->nsamples ? &r->samples[r->nsamples - 1] : NULL;
	struct mgrowth *g = calloc(r->nmaps + 1, sizeof(*g));
	struct msc_strmap idx;
	uint64_t peak = 0;
	char a[32], b[32], d[32], e[32];
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
		fprintf(c->out, c->md ? "\nPeak rss %s; %zu samples.\n" : "  peak rss %s; %zu samples\n",
			sz(e, sizeof(e), peak), r->nsamples);
	}
	if (!r->complete)
		fprintf(c->out, c->md ? "\n> **The stream was cut short** (no end record).\n" :
					"\n  THE STREAM WAS CUT SHORT (no end record)\n");
	if (c->o->sections & MSC_SECTION_TIMELINE)
		timeline(c);

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
		fprintf(c->out, c->md ? "| `%s` | %s | %s | %s | %s |\n" : "  %-34.34s %-7s %11s %11s %11s\n",
			g[i].name, g[i].kind, sz(a, sizeof(a), g[i].first), sz(b, sizeof(b), g[i].last),
			figure(d, sizeof(d), "rss", (int64_t)(g[i].last - g[i].first), true));
	}
	if (!shown)
		fprintf(c->out, c->md ? "No mapping changed.\n" : "  no mapping changed\n");
	msc_strmap_release(&idx);
	free(g);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct msc_rproc *x = a, *y = b;

	return x->rss != y->rss ? (x->rss > y->rss ? -1 : 1) : x->pid - y->pid;
}

static int cmp_map(const void *a, const void *b)
{
	const struct msc_rmapping *x = a, *y = b;

	return x->rss != y->rss ? (x->rss > y->rss ? -1 : 1) : 0;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct msc_rdelta *x = a, *y = b;

	return x->change != y->change ? (x->change > y->change ? -1 : 1) : 0;
}

static void text_or_md(struct ctx *c)
{
	struct msc_report *r = c->r;
	unsigned s = c->o->sections;
	char a[40], b[40], d[40];

	/* A diff or a snapshot: its own report. */
	if (r->ndeltas || (r->mode && !strcmp(r->mode, "diff"))) {
		fprintf(c->out, c->md ? "## memscope growth report\n" : "memscope growth report\n");
		if (r->before && r->after)
			fprintf(c->out, c->md ? "\n`%s` → `%s`\n" : "%s -> %s\n", r->before, r->after);
		if (r->complete && r->diff_metric)
			fprintf(c->out, c->md ? "\n**Total %s: %s → %s (%s)**\n" : "total %s: %s -> %s (%s)\n",
				r->diff_metric, figure(a, sizeof(a), r->diff_metric, r->diff_before, false),
				figure(b, sizeof(b), r->diff_metric, r->diff_after, false),
				figure(d, sizeof(d), r->diff_metric, r->diff_after - r->diff_before, true));
		deltas(c);
		return;
	}
	if (r->mode && !strcmp(r->mode, "poll")) {
		poll_view(c);
		return;
	}
	if (r->nprocs && !r->nsites && !r->nleaks) {
		qsort(r->procs, r->nprocs, sizeof(*r->procs), cmp_proc);
		qsort(r->maps, r->nmaps, sizeof(*r->maps), cmp_map);
		fprintf(c->out, c->md ? "## memscope snapshot\n" : "memscope snapshot\n");
		processes(c);
		return;
	}
	if (s & MSC_SECTION_SUMMARY)
		summary(c);
	if (s & MSC_SECTION_LEAKS)
		leaks(c);
	if (s & MSC_SECTION_TOP)
		top(c);
	if (s & MSC_SECTION_TEMPORARY)
		temporary(c);
	if (s & MSC_SECTION_SIZES)
		sizes(c);
	if (s & MSC_SECTION_TIMELINE)
		timeline(c);
}

/* ---------------------------------------------------------------- json */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ?
			       4 :
			       0;
	}
	return 0;
}

/*
 * A JSON string for s.  jansson takes UTF-8 only (jstring() of anything
 * else is NULL, and the member silently goes): names and paths with other
 * bytes (memscope-format(5) carries them escaped) get U+FFFD for each.
 */
static json_t *jstring(const char *s)
{
	json_t *j = json_string(s);
	const unsigned char *p;
	char *copy, *q;

	if (j || !s)
		return j;
	copy = malloc(strlen(s) * 3 + 1);
	if (!copy)
		return NULL;
	for (p = (const unsigned char *)s, q = copy; *p;) {
		size_t n = utf8_len(p);

		if (n) {
			memcpy(q, p, n);
			q += n;
			p += n;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			p++;
		}
	}
	*q = '\0';
	j = json_string(copy);
	free(copy);
	return j;
}

static json_t *jstack(const struct msc_report *r, uint32_t id)
{
	const struct msc_rstack *s = msc_report_stack(r, id);
	json_t *a = json_array();
	unsigned i;

	for (i = 0; s && i < s->n; i++) {
		const struct msc_rframe *f = &s->frames[i];
		json_t *o = json_object();

		if (f->fn)
			json_object_set_new(o, "fn", jstring(f->fn));
		if (f->file)
			json_object_set_new(o, "file", jstring(f->file));
		if (f->line)
			json_object_set_new(o, "line", json_integer(f->line));
		if (f->obj)
			json_object_set_new(o, "obj", jstring(f->obj));
		if (f->offset)
			json_object_set_new(o, "offset", jstring(f->offset));
		if (f->fn_offset)
			json_object_set_new(o, "fn_offset", jstring(f->fn_offset));
		if (f->inlined)
			json_object_set_new(o, "inline", json_true());
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *jgroups(const struct msc_report *r, struct group *g, size_t n, unsigned top, bool leak)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n && i < top; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "bytes", json_integer((json_int_t)g[i].bytes));
		if (leak) {
			json_object_set_new(o, "kind", jstring(g[i].kind));
			json_object_set_new(o, "count", json_integer((json_int_t)g[i].count));
		} else {
			json_object_set_new(o, "allocs", json_integer((json_int_t)g[i].allocs));
			json_object_set_new(o, "frees", json_integer((json_int_t)g[i].frees));
			json_object_set_new(o, "live_bytes", json_integer((json_int_t)g[i].live_bytes));
			json_object_set_new(o, "at_peak", json_integer((json_int_t)g[i].at_peak));
			json_object_set_new(o, "temporary", json_integer((json_int_t)g[i].temporary));
			json_object_set_new(o, "short_lived", json_integer((json_int_t)g[i].short_lived));
		}
		json_object_set_new(o, "size_min", json_integer((json_int_t)g[i].size_lo));
		json_object_set_new(o, "size_max", json_integer((json_int_t)g[i].size_hi));
		if (g[i].fn)
			json_object_set_new(o, "fn", jstring(g[i].fn));
		json_object_set_new(o, "stack", jstack(r, g[i].stack));
		json_array_append_new(a, o);
	}
	return a;
}

static int render_json(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	json_t *root = json_object(), *sum = json_object(), *t;
	struct totals tt;
	struct group *g;
	size_t n, i;
	int ret;

	totals_of(r, &tt);
	json_object_set_new(root, "format", json_string("memscope-report"));
	json_object_set_new(root, "version", json_integer(1));
	if (r->argv)
		json_object_set_new(root, "program", jstring(r->argv));
	if (r->pid)
		json_object_set_new(root, "pid", json_integer(r->pid));
	json_object_set_new(root, "complete", json_boolean(r->complete));
	json_object_set_new(sum, "allocs", json_integer((json_int_t)tt.allocs));
	json_object_set_new(sum, "frees", json_integer((json_int_t)tt.frees));
	json_object_set_new(sum, "bytes", json_integer((json_int_t)tt.bytes));
	json_object_set_new(sum, "leaked_bytes", json_integer((json_int_t)tt.leaked));
	json_object_set_new(sum, "leaked_blocks", json_integer((json_int_t)tt.leaked_blocks));
	json_object_set_new(sum, "definitely_bytes", json_integer((json_int_t)tt.definitely));
	json_object_set_new(sum, "indirectly_bytes", json_integer((json_int_t)tt.indirectly));
	json_object_set_new(sum, "possibly_bytes", json_integer((json_int_t)tt.possibly));
	json_object_set_new(sum, "reachable_bytes", json_integer((json_int_t)tt.reachable));
	json_object_set_new(sum, "temporary", json_integer((json_int_t)tt.temporary));
	if (r->complete) {
		json_object_set_new(sum, "duration", json_integer((json_int_t)r->duration));
		json_object_set_new(sum, "peak", json_integer((json_int_t)r->peak));
		json_object_set_new(sum, "peak_ts", json_integer((json_int_t)r->peak_ts));
		json_object_set_new(sum, "lost", json_integer((json_int_t)r->lost));
		if (r->reason)
			json_object_set_new(sum, "reason", jstring(r->reason));
		if (r->has_status)
			json_object_set_new(sum, "status", json_integer(r->status));
	}
	json_object_set_new(root, "summary", sum);
	if (filtered_count(r)) {
		t = json_object();
		for (i = 0; i < r->nfiltered; i++) {
			json_t *f;

			if (!filtered_relevant(r, &r->filtered[i]))
				continue;
			f = json_object();
			json_object_set_new(f, "records", json_integer((json_int_t)r->filtered[i].records));
			if (r->filtered[i].blocks)
				json_object_set_new(f, "blocks", json_integer((json_int_t)r->filtered[i].blocks));
			json_object_set_new(f, "bytes", json_integer((json_int_t)r->filtered[i].bytes));
			if (r->filtered[i].trimmed_allocs) {
				json_object_set_new(f, "trimmed_allocs",
						    json_integer((json_int_t)r->filtered[i].trimmed_allocs));
				json_object_set_new(f, "trimmed_bytes",
						    json_integer((json_int_t)r->filtered[i].trimmed_bytes));
			}
			json_object_set_new(t, r->filtered[i].type, f);
		}
		json_object_set_new(root, "filtered", t);
		t = json_array();
		for (i = 0; i < r->nfilters; i++)
			json_array_append_new(t, jstring(r->filters[i]));
		json_object_set_new(root, "filters", t);
	}
	g = leak_groups(r, &n);
	if (g) {
		qsort(g, n, sizeof(*g), by_leak);
		json_object_set_new(root, "leaks", jgroups(r, g, n, o->top, true));
		free(g);
	}
	g = site_groups(r, &n);
	if (g) {
		t = json_object();
		qsort(g, n, sizeof(*g), by_bytes);
		json_object_set_new(t, "bytes", jgroups(r, g, n, o->top, false));
		qsort(g, n, sizeof(*g), by_allocs);
		json_object_set_new(t, "allocs", jgroups(r, g, n, o->top, false));
		qsort(g, n, sizeof(*g), by_peak);
		json_object_set_new(t, "at_peak", jgroups(r, g, n, o->top, false));
		json_object_set_new(root, "top", t);
		free(g);
	}
	t = json_array();
	for (i = 0; i < r->nsamples; i++) {
		json_t *s;

		s = json_object();
		json_object_set_new(s, "ts", json_integer((json_int_t)r->samples[i].ts));
		json_object_set_new(s, "rss", json_integer((json_int_t)r->samples[i].rss));
		json_object_set_new(s, "heap", json_integer((json_int_t)r->samples[i].heap));
		json_array_append_new(t, s);
	}
	json_object_set_new(root, "timeline", t);
	if (r->ndeltas) {
		t = json_array();
		qsort(r->deltas, r->ndeltas, sizeof(*r->deltas), cmp_delta);
		for (i = 0; i < r->ndeltas; i++) {
			json_t *d = json_object();
			const struct msc_rdelta *x = &r->deltas[i];

			if (x->key)
				json_object_set_new(d, "key", jstring(x->key));
			if (x->metric)
				json_object_set_new(d, "metric", jstring(x->metric));
			json_object_set_new(d, "pid", json_integer(x->pid));
			if (x->name)
				json_object_set_new(d, "name", jstring(x->name));
			json_object_set_new(d, "before", json_integer(x->before));
			json_object_set_new(d, "after", json_integer(x->after));
			json_object_set_new(d, "change", json_integer(x->change));
			if (x->stack)
				json_object_set_new(d, "stack", jstack(r, x->stack));
			json_array_append_new(t, d);
		}
		json_object_set_new(root, "deltas", t);
	}
	if (r->nprocs) {
		t = json_array();
		for (i = 0; i < r->nprocs; i++) {
			const struct msc_rproc *p = &r->procs[i];
			json_t *o2 = json_object();

			json_object_set_new(o2, "pid", json_integer(p->pid));
			if (p->comm)
				json_object_set_new(o2, "comm", jstring(p->comm));
			if (p->cmdline)
				json_object_set_new(o2, "cmdline", jstring(p->cmdline));
			json_object_set_new(o2, "rss", json_integer((json_int_t)p->rss));
			if (p->has_pss)
				json_object_set_new(o2, "pss", json_integer((json_int_t)p->pss));
			json_object_set_new(o2, "swap", json_integer((json_int_t)p->swap));
			json_array_append_new(t, o2);
		}
		json_object_set_new(root, "processes", t);
	}
	if (r->nmaps) {
		t = json_array();
		for (i = 0; i < r->nmaps; i++) {
			const struct msc_rmapping *m = &r->maps[i];
			json_t *o2 = json_object();

			json_object_set_new(o2, "pid", json_integer(m->pid));
			if (m->name)
				json_object_set_new(o2, "name", jstring(m->name));
			if (m->kind)
				json_object_set_new(o2, "kind", jstring(m->kind));
			json_object_set_new(o2, "size", json_integer((json_int_t)m->size));
			json_object_set_new(o2, "rss", json_integer((json_int_t)m->rss));
			json_object_set_new(o2, "pss", json_integer((json_int_t)m->pss));
			json_object_set_new(o2, "swap", json_integer((json_int_t)m->swap));
			json_array_append_new(t, o2);
		}
		json_object_set_new(root, "mappings", t);
	}
	ret = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(root);
	return ret ? -EIO : 0;
}

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

			if (!leaked_kind(l->kind))
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
		snprintf(buf, n, "[%s]", f->obj ? base(f->obj) : "unknown");
	for (p = buf; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = ',';
}

static int render_collapsed(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
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
		size_t n = utf8_len(p);

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

static int render_svg(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
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

/* ---------------------------------------------------------------- entry */

int msc_report_sections(const char *list, unsigned *out)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "summary", MSC_SECTION_SUMMARY }, { "leaks", MSC_SECTION_LEAKS },
		{ "top", MSC_SECTION_TOP }, { "temporary", MSC_SECTION_TEMPORARY },
		{ "sizes", MSC_SECTION_SIZES }, { "timeline", MSC_SECTION_TIMELINE },
		{ "all", MSC_SECTION_ALL },
	};
	const char *p = list;

	*out = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;
		bool found = false;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == len && !strncmp(names[i].name, p, len)) {
				*out |= names[i].bit;
				found = true;
			}
		if (!found || !len)
			return -EINVAL;
		p += len + (p[len] == ',');
	}
	return *out ? 0 : -EINVAL;
}

int msc_report_render(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct ctx c = { r, o, out, o->format == MSC_REPORT_MD };
	int ret = 0;

	switch (o->format) {
	case MSC_REPORT_TEXT:
	case MSC_REPORT_MD:
		text_or_md(&c);
		break;
	case MSC_REPORT_JSON:
		ret = render_json(r, o, out);
		break;
	case MSC_REPORT_COLLAPSED:
		ret = render_collapsed(r, o, out);
		break;
	case MSC_REPORT_SVG:
		ret = render_svg(r, o, out);
		break;
	}
	if (!ret && (fflush(out) || ferror(out)))
		ret = -(errno ? errno : EIO);
	return ret;
}
