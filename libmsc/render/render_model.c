/* SPDX-License-Identifier: MIT */
/* Reports: the views of the model the renderers share (sites and leaks
 * grouped by stack, their orders, the totals, what a filter dropped) and
 * the text escapes they share.  See msc_render.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_render.h"
#include "msc_util.h"

/* Sites grouped by stack (all sizes of one call path together). */
struct render_group *render_site_groups(const struct msc_report *r, size_t *n)
{
	struct msc_u64map idx;
	struct render_group *g = calloc(r->nsites + 1, sizeof(*g));
	size_t i, k = 0;

	*n = 0;
	if (!g || msc_u64map_init(&idx, r->nsites + 1)) {
		free(g);
		return NULL;
	}
	for (i = 0; i < r->nsites; i++) {
		const struct msc_rsite *s = &r->sites[i];
		uint64_t *slot;
		struct render_group *x;
		unsigned b;

		slot = msc_u64map_get(&idx, (uint64_t)s->stack + 1);
		if (slot) {
			x = &g[*slot];
		} else {
			msc_u64map_put(&idx, (uint64_t)s->stack + 1, k);
			x = &g[k++];
			x->stack = s->stack;
			x->fn = s->fn;
			x->pool = s->pool;
			x->size_lo = s->size;
		}
		msc_sat_add(&x->bytes, s->bytes);
		msc_sat_add(&x->allocs, s->allocs);
		msc_sat_add(&x->frees, s->frees);
		msc_sat_add(&x->live_bytes, s->live_bytes);
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

const struct msc_rframe *render_attributed(const struct msc_report *r, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(r, stack);

	return s && s->n ? &s->frames[s->attr] : NULL;
}

bool render_runtime_frame(const struct msc_rframe *f)
{
	return msc_report_runtime_fn(f->fn);
}

const char *render_fn_label(const struct render_group *x, char *buf, size_t n)
{
	if (!x->pool)
		return x->fn ? x->fn : "?";
	snprintf(buf, n, "%s, pool %s", x->fn ? x->fn : "?", x->pool);
	return buf;
}

bool render_leaked_kind(const char *kind)
{
	int k = msc_leak_kind_parse(kind);

	return k >= 0 && msc_leak_kind_leaked((unsigned)k);
}

int render_kind_rank(const char *k)
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
struct render_group *render_leak_groups(const struct msc_report *r, size_t *n)
{
	struct msc_u64map idx;
	struct render_group *g = calloc(r->nleaks + 1, sizeof(*g));
	size_t i, k = 0;

	*n = 0;
	if (!g || msc_u64map_init(&idx, r->nleaks + 1)) {
		free(g);
		return NULL;
	}
	for (i = 0; i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];
		uint64_t key = ((uint64_t)l->stack << 8 | (uint64_t)render_kind_rank(l->kind)) + 1;
		uint64_t *slot;
		struct render_group *x;

		slot = msc_u64map_get(&idx, key);
		if (slot) {
			x = &g[*slot];
		} else {
			msc_u64map_put(&idx, key, k);
			x = &g[k++];
			x->stack = l->stack;
			x->kind = l->kind;
			x->fn = l->fn;
			x->pool = l->pool;
			x->size_lo = l->size;
		}
		msc_sat_add(&x->count, l->count);
		msc_sat_add(&x->bytes, l->bytes);
		if (l->size < x->size_lo)
			x->size_lo = l->size;
		if (l->size_max > x->size_hi)
			x->size_hi = l->size_max;
	}
	msc_u64map_release(&idx);
	*n = k;
	return g;
}

int render_by_bytes(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int render_by_allocs(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;

	if (x->allocs != y->allocs)
		return x->allocs > y->allocs ? -1 : 1;
	return render_by_bytes(a, b);
}

int render_by_peak(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak > y->at_peak ? -1 : 1;
	return render_by_bytes(a, b);
}

int render_by_leak(const void *a, const void *b)
{
	const struct render_group *x = a, *y = b;
	int kx = render_kind_rank(x->kind), ky = render_kind_rank(y->kind);

	if (kx != ky)
		return kx - ky;
	return render_by_bytes(a, b);
}

void render_totals_of(const struct msc_report *r, struct render_totals *t)
{
	size_t i;
	unsigned b;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < r->nsites; i++) {
		const struct msc_rsite *s = &r->sites[i];

		msc_sat_add(&t->live_bytes, s->live_bytes);
		if (msc_is_mapping_fn(s->fn)) {
			/* the malloc family's totals leave mappings out */
			if (!strcmp(s->fn, "brk")) {
				t->brks += s->allocs;
				msc_sat_add(&t->brk_bytes, s->bytes);
			} else {
				t->mmaps += s->allocs;
				msc_sat_add(&t->mmap_bytes, s->bytes);
			}
			continue;
		}
		msc_sat_add(&t->allocs, s->allocs);
		msc_sat_add(&t->frees, s->frees);
		msc_sat_add(&t->bytes, s->bytes);
		t->temporary += s->temporary;
		for (b = 0; b < SHORT_LIVED_BUCKETS; b++)
			t->short_lived += s->ages[b];
	}
	for (i = 0; i < r->nleaks; i++) {
		const struct msc_rleak *l = &r->leaks[i];

		if (render_leaked_kind(l->kind)) {
			msc_sat_add(&t->leaked, l->bytes);
			msc_sat_add(&t->leaked_blocks, l->count);
		}
		if (!strcmp(l->kind, "definitely"))
			msc_sat_add(&t->definitely, l->bytes);
		else if (!strcmp(l->kind, "indirectly"))
			msc_sat_add(&t->indirectly, l->bytes);
		else if (!strcmp(l->kind, "possibly"))
			msc_sat_add(&t->possibly, l->bytes);
		else if (!strcmp(l->kind, "reachable"))
			msc_sat_add(&t->reachable, l->bytes);
		else if (!strcmp(l->kind, "unknown")) {
			msc_sat_add(&t->unknown, l->bytes);
			msc_sat_add(&t->unknown_blocks, l->count);
		} else
			msc_sat_add(&t->unscanned, l->bytes);
	}
	/* Cut before any site or leak was written: the samples still say
	 * how much the program had allocated. */
	if (!r->complete && !r->nsites && !r->nleaks) {
		for (i = r->nsamples; i-- > 0;)
			if (r->samples[i].has_counts) {
				t->allocs = r->samples[i].allocs;
				t->bytes = r->samples[i].bytes;
				t->live_bytes = r->samples[i].heap;
				t->sample_ts = r->samples[i].ts;
				t->from_sample = true;
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
bool render_filtered_relevant(const struct msc_report *r, const struct msc_filtered *f)
{
	if (!f->records && !(f->trimmed_allocs && !r->from_events))
		return false;
	if (r->from_events)
		return !strcmp(f->type, "alloc") || !strcmp(f->type, "free") || !strcmp(f->type, "mmap") ||
		       !strcmp(f->type, "leak");
	return !strcmp(f->type, "site") || !strcmp(f->type, "leak");
}

unsigned render_filtered_count(const struct msc_report *r)
{
	unsigned i, n = 0;

	for (i = 0; i < r->nfiltered; i++)
		n += render_filtered_relevant(r, &r->filtered[i]);
	return n;
}

int render_cmp_delta(const void *a, const void *b)
{
	const struct msc_rdelta *x = a, *y = b;

	return x->change != y->change ? (x->change > y->change ? -1 : 1) : 0;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one. */
size_t render_utf8_len(const unsigned char *p)
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

void render_xml(FILE *out, const char *s)
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

