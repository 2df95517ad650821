/* SPDX-License-Identifier: MIT */
/*
 * The stream filter of ms-filter: what --transient and --top hold back
 * (events until they can no longer turn out transient, sites and leaks
 * until the end of their stream), and sites without their transient part.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msc_agg.h"
#include "msc_arena.h"
#include "msc_filter.h"
#include "msc_stream.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_util.h"
#include "filter_internal.h"

/* Events held for --transient leave in order once they can no longer
 * turn out transient. */
void filter_release_held(struct filter *f, bool all)
{
	while (f->held_head < f->nheld) {
		struct held *h = &f->held[f->held_head];

		if (!all && h->ts + f->o->min_age > f->now)
			break;
		if (!h->dropped)
			emit(f, h->line, h->len, h->stack);
		if (h->is_alloc)
			msc_u64map_del(&f->pending_alloc, h->key, NULL);
		free(h->line);
		f->held_head++;
	}
	if (f->held_head == f->nheld)
		f->held_head = f->nheld = 0;
}

int filter_hold(struct filter *f, const struct msc_rec *rec, uint64_t ts, uint32_t stack,
		bool is_alloc, uint64_t key, int pid)
{
	struct held *h;

	if (f->nheld == f->held_cap) {
		if (f->held_head > 0) {
			memmove(f->held, f->held + f->held_head, (f->nheld - f->held_head) * sizeof(*h));
			f->nheld -= f->held_head;
			/* Indexes in pending_alloc moved: rebuild. */
			msc_u64map_release(&f->pending_alloc);
			if (msc_u64map_init(&f->pending_alloc, f->nheld))
				return -ENOMEM;
			for (size_t i = 0; i < f->nheld; i++)
				if (f->held[i].is_alloc && !f->held[i].dropped)
					msc_u64map_put(&f->pending_alloc, f->held[i].key, i + 1);
			f->held_head = 0;
		}
		if (MSC_GROW(f->held, f->nheld + 1, f->held_cap, 1024))
			return -ENOMEM;
	}
	h = &f->held[f->nheld];
	h->line = malloc(rec->len);
	if (!h->line)
		return -ENOMEM;
	memcpy(h->line, rec->line, rec->len);
	h->len = rec->len;
	h->ts = ts;
	h->stack = stack;
	h->dropped = false;
	h->is_alloc = is_alloc;
	h->key = key;
	h->pid = pid;
	if (is_alloc && msc_u64map_put(&f->pending_alloc, key, f->nheld + 1))
		return -ENOMEM;
	f->nheld++;
	return 0;
}

/*
 * A site record without its transient blocks (aggregated streams): the
 * lifetime histogram says how many were freed younger than --min-age.
 * Returns 1 when the site goes entirely, 0 when it stays; writes it (as
 * it stays) only when write is set; *kept gets the bytes it keeps.  What
 * it takes out of a site that stays is added to trim (if set).
 */
int filter_site_transient(struct filter *f, struct msc_filtered *trim, const struct msc_rec *rec,
			  uint32_t stack, bool write, uint64_t *kept)
{
	static const char *const skip[] = { "allocs", "frees", "bytes", "ages", "temporary" };
	const struct msc_field *ages = msc_rec_field(rec, "ages");
	uint64_t counts[MSC_AGE_BUCKETS] = { 0 }, allocs = 0, frees = 0, bytes = 0, size = 0, n = 0;
	uint64_t size_max = 0, live;
	struct msc_jiter it;
	struct msc_jval v;
	unsigned b = 0;

	msc_rec_u64(rec, "bytes", &bytes);
	*kept = bytes;
	f->saw_site_ages = true;
	if (!ages || msc_jiter_init(&it, &ages->val))
		goto whole;
	while (b < MSC_AGE_BUCKETS && msc_jiter_next(&it, NULL, &v) > 0)
		msc_jval_u64(&v, &counts[b++]);
	msc_rec_u64(rec, "allocs", &allocs);
	msc_rec_u64(rec, "frees", &frees);
	msc_rec_u64(rec, "size", &size);
	live = allocs - frees;
	for (b = 0; b < (unsigned)f->age_bucket; b++)
		n += counts[b];
	if (!n)
		goto whole;
	if (msc_rec_u64(rec, "size_max", &size_max) == 0) {
		/* A size class: its transient blocks' sizes are not known one
		 * by one; only a site that was all transient can go. */
		if (n == allocs && !live)
			return 1;
		goto whole;
	}
	if (n >= allocs)
		return 1;
	*kept = bytes - n * size;
	if (trim) {
		trim->trimmed_allocs += n;
		trim->trimmed_bytes += n * size;
	}
	if (!write)
		return 0;
	filter_write_stack(f, stack);
	filter_copy_members(f->w, rec, skip, ARRAY_SIZE(skip));
	msc_w_u64(f->w, "allocs", allocs - n);
	msc_w_u64(f->w, "frees", frees - n);
	msc_w_u64(f->w, "bytes", bytes - n * size);
	msc_w_arr(f->w, "ages");
	for (b = 0; b < MSC_AGE_BUCKETS; b++)
		msc_w_u64(f->w, NULL, b < (unsigned)f->age_bucket ? 0 : counts[b]);
	msc_w_arr_end(f->w);
	msc_w_end(f->w);
	return 0;
whole:
	if (write)
		emit(f, rec->line, rec->len, stack);
	return 0;
}

static int cmp_buffered(const void *x, const void *y)
{
	const struct buffered *a = x, *b = y;

	if (a->leak != b->leak)
		return a->leak ? 1 : -1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return 0;
}

void filter_flush_top(struct filter *f, struct stream *s)
{
	size_t i, sites = 0, leaks = 0;

	if (!s->ntop)
		return;
	qsort(s->top, s->ntop, sizeof(*s->top), cmp_buffered);
	for (i = 0; i < s->ntop; i++) {
		struct buffered *b = &s->top[i];
		size_t *seen = b->leak ? &leaks : &sites;

		/* Kept or dropped, a site's transient part goes as trimmed
		 * (dropped, the rest of it as a dropped site). */
		msc_sat_add(&s->dropped[C_SITE].trimmed_allocs, b->trimmed);
		msc_sat_add(&s->dropped[C_SITE].trimmed_bytes, b->trimmed_bytes);
		if (*seen < f->o->top && b->trimmed) {
			struct msc_reader r;
			struct msc_rec rec;
			uint64_t kept;

			msc_reader_init_mem(&r, b->line, b->len, "site");
			if (msc_reader_next(&r, &rec, NULL) > 0)
				filter_site_transient(f, NULL, &rec, b->stack, true, &kept);
			msc_reader_release(&r);
		} else if (*seen < f->o->top) {
			if (b->leak)
				msc_sat_add(&f->st->leaks[b->leak_kind], b->blocks);
			emit(f, b->line, b->len, b->stack);
		} else {
			int kind = b->leak ? C_LEAK : C_SITE;

			s->dropped[kind].records++;
			msc_sat_add(&s->dropped[kind].blocks, b->blocks);
			msc_sat_add(&s->dropped[kind].bytes, b->bytes);
		}
		(*seen)++;
		free(b->line);
	}
	free(s->top);
	s->top = NULL;
	s->ntop = s->top_cap = 0;
}

/* Holds a site or leak back for --top; bytes: what it weighs. */
/* A leak record's kind; unscanned when it says none. */
unsigned filter_leak_kind_of(const struct msc_rec *rec)
{
	size_t len;
	const char *name = msc_rec_str(rec, "kind", &len);
	unsigned k;

	for (k = 0; name && k < MSC_LEAK_KINDS; k++)
		if (strlen(msc_leak_kind_name(k)) == len && !strncmp(name, msc_leak_kind_name(k), len))
			return k;
	return MSC_LEAK_UNSCANNED;
}

int filter_buffer_top(struct filter *f, int pid, const struct msc_rec *rec, uint32_t stack, bool leak,
		      uint64_t bytes, const struct msc_filtered *trim)
{
	struct stream *s = filter_stream_of(f, pid);
	struct buffered *b;

	if (!s)
		return -ENOMEM;
	if (MSC_GROW(s->top, s->ntop + 1, s->top_cap, 256))
		return -ENOMEM;
	b = &s->top[s->ntop];
	b->line = malloc(rec->len);
	if (!b->line)
		return -ENOMEM;
	memcpy(b->line, rec->line, rec->len);
	b->len = rec->len;
	b->bytes = bytes;
	b->blocks = 0;
	if (leak) {
		msc_rec_u64(rec, "count", &b->blocks);
		b->leak_kind = (uint8_t)filter_leak_kind_of(rec);
	}
	b->stack = stack;
	b->leak = leak;
	b->trimmed = trim ? trim->trimmed_allocs : 0;
	b->trimmed_bytes = trim ? trim->trimmed_bytes : 0;
	s->ntop++;
	return 0;
}
