// SPDX-License-Identifier: MIT
/*
 * Memory errors, as the collector sees them in the event stream: a free of
 * a block already freed, of an address no allocator returned, by the wrong
 * family (free of new, delete of new[]), and realloc of a freed block.
 *
 * The checks cost nothing on the common path: msc_agg_free() finds the
 * block it was going to find anyway, compares two small numbers, and keeps
 * the last MSC_QUARANTINE frees in a ring (a store).  Only a free of an
 * address that is not live searches that ring, newest first: the newest
 * free of the address is the one a second free repeats (had the address
 * been allocated again since, it would be live).  A free of an address not
 * in the ring is invalid, unless blocks from before the recording can be
 * freed (attached, or a forked child): then it says nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"

static const char *const error_names[MSC_ERR_KINDS] = {
	[MSC_ERR_NONE] = "",
	[MSC_ERR_DOUBLE_FREE] = "double-free",
	[MSC_ERR_INVALID_FREE] = "invalid-free",
	[MSC_ERR_MISMATCH] = "mismatch",
	[MSC_ERR_REALLOC_FREED] = "realloc-freed",
};

const char *msc_error_name(unsigned kind)
{
	return kind < MSC_ERR_KINDS ? error_names[kind] : "";
}

bool msc_agg_quarantine_alloc(struct msc_agg *a)
{
	a->quarantine = calloc(MSC_QUARANTINE, sizeof(*a->quarantine));
	a->q_count = calloc(MSC_QFILTER, sizeof(*a->q_count));
	if (!a->quarantine || !a->q_count) {
		free(a->quarantine);
		free(a->q_count);
		a->quarantine = NULL;
		a->q_count = NULL;
		return false;
	}
	return true;
}

/* Starts the error record of the event; false when only counted. */
static bool error_begin(struct msc_agg *a, unsigned kind, uint64_t ts, uint32_t tid, uint64_t ptr,
			unsigned fn, uint32_t stack)
{
	uint64_t total = 0;
	unsigned k;

	for (k = 1; k < MSC_ERR_KINDS; k++)
		total += a->errors[k];
	a->errors[kind]++;
	if (total >= MSC_AGG_MAX_ERRORS)
		return false;
	memset(&a->err, 0, sizeof(a->err));
	a->err.kind = kind;
	a->err.ts = ts;
	a->err.tid = tid;
	a->err.ptr = MSC_KEY_ADDR(ptr);
	a->err.fn = (uint8_t)fn;
	a->err.stack = stack;
	return true;
}

static void error_block(struct msc_agg *a, const struct msc_live *b, const struct msc_site *s)
{
	a->err.have_block = true;
	a->err.block = b->ptr;
	a->err.size = msc_live_size(a, b);
	a->err.alloc_ts = msc_live_ts(a, b);
	a->err.alloc_stack = s->stack;
	a->err.alloc_fn = s->fn;
}

bool msc_agg_mismatch(struct msc_agg *a, uint64_t ts, uint32_t tid, const struct msc_live *b,
		      const struct msc_site *s, unsigned fn, uint32_t stack)
{
	if (!msc_fn_family(fn) || !msc_fn_family(s->fn))
		return false;
	if (!error_begin(a, MSC_ERR_MISMATCH, ts, tid, b->ptr, fn, stack))
		return false;
	error_block(a, b, s);
	return true;
}

/* The newest remembered free of ptr, or NULL. */
static const struct msc_quarantined *quarantined(const struct msc_agg *a, uint64_t ptr)
{
	uint32_t i, n = MSC_QUARANTINE;

	if (!a->quarantine || !a->q_count[msc_qfilter_slot(ptr)])
		return NULL;
	for (i = 1; i <= n; i++) {
		const struct msc_quarantined *q = &a->quarantine[(a->q_next - i) & (n - 1)];

		if (q->ptr == ptr)
			return q;
		if (!q->ptr)
			break;		/* the ring has not wrapped yet */
	}
	return NULL;
}

/* The live block ptr points into, for an invalid free; NULL if none. */
static const struct msc_live *containing(const struct msc_agg *a, uint64_t ptr)
{
	const struct msc_live *best = NULL;
	size_t i;

	for (i = 0; i < msc_live_slots(a); i++) {
		const struct msc_live *b = &a->live[i];

		if (!b->ptr || (b->ptr & MSC_CUSTOM_KEY) || b->ptr > ptr)
			continue;
		if (ptr - b->ptr < msc_live_size(a, b) && (!best || b->ptr > best->ptr))
			best = b;
	}
	return best;
}

void msc_agg_thread_begins(struct msc_agg *a, uint32_t tid, uint64_t ts)
{
	if (a->unseen_frees_ok && !msc_u64map_get(&a->thread_first, (uint64_t)tid + 1))
		msc_u64map_put(&a->thread_first, (uint64_t)tid + 1, ts);
}

static bool before_first(const struct msc_agg *a, uint32_t tid, uint64_t ts)
{
	const uint64_t *first = msc_u64map_get(&a->thread_first, (uint64_t)tid + 1);

	return first && ts < *first;
}

bool msc_agg_unseen_free(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
			 uint32_t stack)
{
	bool realloc = msc_fn_is_realloc(fn);
	const struct msc_quarantined *q = quarantined(a, ptr);
	const struct msc_live *b;

	/* Maybe that free was of the block before this one (msc_recent), or
	 * this thread got the block before its first event. */
	if (q && ((q->ambiguous && q->tid != tid) || (a->unseen_frees_ok && before_first(a, tid, q->ts))))
		q = NULL;
	if (q) {
		if (!error_begin(a, realloc ? MSC_ERR_REALLOC_FREED : MSC_ERR_DOUBLE_FREE, ts, tid,
				 ptr, fn, stack))
			return false;
		a->err.have_block = true;
		a->err.block = q->ptr;
		a->err.size = q->size;
		a->err.alloc_stack = q->alloc_stack;
		a->err.alloc_fn = q->alloc_fn;
		a->err.have_free = true;
		a->err.free_ts = q->ts;
		a->err.free_stack = q->free_stack;
		a->err.free_tid = q->tid;
		a->err.free_fn = q->free_fn;
		return true;
	}
	if (a->unseen_frees_ok)
		return false;
	if (!error_begin(a, MSC_ERR_INVALID_FREE, ts, tid, ptr, fn, stack))
		return false;
	/* a walk of the live table: for the first errors only */
	b = a->errors[MSC_ERR_INVALID_FREE] <= 100 ? containing(a, ptr) : NULL;
	if (b)
		error_block(a, b, msc_agg_site(a, b->site));
	return true;
}

/* ---------------------------------------------------------------- gates */

int msc_gate_parse_kinds(const char *list, unsigned *mask)
{
	/* By default what the reports call leaked (msc_leak_kind_leaked):
	 * the headline and the gate are one definition. */
	const char *p = list ? list : "definitely,indirectly,unscanned";
	unsigned k;

	*mask = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		bool found = false;

		if (len == 3 && !strncmp(p, "all", 3)) {
			*mask |= (1u << MSC_LEAK_KINDS) - 1;
			found = true;
		}
		for (k = 0; k < MSC_LEAK_KINDS; k++)
			if (strlen(msc_leak_kind_name(k)) == len && !strncmp(p, msc_leak_kind_name(k), len)) {
				*mask |= 1u << k;
				found = true;
			}
		if (!found)
			return -EINVAL;
		p += len + (p[len] == ',');
	}
	return *mask ? 0 : -EINVAL;
}

uint64_t msc_gate_leaks(const uint64_t blocks[MSC_LEAK_KINDS], unsigned mask)
{
	uint64_t n = 0;
	unsigned k;

	for (k = 0; k < MSC_LEAK_KINDS; k++)
		if (mask & (1u << k))
			n += blocks[k];
	return n;
}
