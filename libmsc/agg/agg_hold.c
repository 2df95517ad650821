/* SPDX-License-Identifier: MIT */
/* msc_agg's order repair: events held until their pair comes.  See agg_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"

/* ------------------------------------------------------ order repair */

/* The queue holds what one push or unhold adds: every held event and three. */
#define HOLD_QCAP (MSC_AGG_HOLD_MAX + 4)

int msc_agg_hold(struct msc_agg *a, uint64_t window_ns)
{
	if (!a->held) {
		a->held = malloc(MSC_AGG_HOLD_MAX * sizeof(*a->held));
		a->queue = malloc(HOLD_QCAP * sizeof(*a->queue));
		if (!a->held || !a->queue) {
			free(a->held);
			free(a->queue);
			a->held = NULL;
			a->queue = NULL;
			return -ENOMEM;
		}
	}
	if (a->unseen_frees_ok && !a->recent)
		a->recent = calloc(MSC_AGG_RECENT, sizeof(*a->recent));
	a->hold_window = window_ns;
	return 0;
}

/* nohold: a held event let go (applied as it is, never held again). */
static void hold_enqueue(struct msc_agg *a, const struct msc_cevent *ev, bool nohold)
{
	struct msc_hold_entry *q = &a->queue[(a->qhead + a->qlen) % HOLD_QCAP];

	q->ev = *ev;
	q->nohold = nohold;
	q->how = MSC_HOLD_AS_IS;
	a->qlen++;
}

/* Held event i goes to the queue (to be applied as it is, or as a free of
 * a block from before us). */
static void hold_release_as(struct msc_agg *a, unsigned i, bool unseen)
{
	struct msc_hold_entry *q = &a->queue[(a->qhead + a->qlen) % HOLD_QCAP];
	bool ambiguous = a->held[i].v[2] & HELD_AMBIGUOUS;

	a->held[i].v[2] &= ~(uint64_t)HELD_AMBIGUOUS;
	hold_enqueue(a, &a->held[i], true);
	q->how = unseen ? MSC_HOLD_UNSEEN : ambiguous ? MSC_HOLD_AMBIGUOUS : MSC_HOLD_AS_IS;
	a->held_keys[hold_slot(event_key(&a->held[i]))]--;
	memmove(&a->held[i], &a->held[i + 1], (a->nheld - i - 1) * sizeof(*a->held));
	a->nheld--;
}

static void hold_release(struct msc_agg *a, unsigned i)
{
	hold_release_as(a, i, false);
}

/* The held event of key, or -1. */
static int hold_find(const struct msc_agg *a, uint64_t key)
{
	unsigned i;

	for (i = 0; i < a->nheld; i++)
		if (event_key(&a->held[i]) == key)
			return (int)i;
	return -1;
}

/*
 * The order to apply events in.  The state of an event's address is
 * looked at when it is applied (msc_agg_apply holds it then, if wrong):
 * here only the held ones are matched with what comes, and let go when
 * their window has passed.
 */
int msc_agg_push_held(struct msc_agg *a, const struct msc_cevent *ev)
{
	if (!a->hold_window)
		return 1;
	if (msc_unlikely(!a->hold_multi)) {
		if (!a->hold_tid)
			a->hold_tid = ev->tid + 1;
		else if (a->hold_tid != ev->tid + 1)
			a->hold_multi = true;
	}
	a->hold_nohold = false;
	a->hold_how = MSC_HOLD_AS_IS;
	if (msc_unlikely(a->nheld)) {
		uint64_t key;
		int h;

		/* Held past the window: applied as they were, before ev. */
		while (a->nheld && a->held[0].ts + a->hold_window < ev->ts)
			hold_release(a, 0);
		key = event_key(ev);
		h = key && a->nheld && a->held_keys[hold_slot(key)] ? hold_find(a, key) : -1;
		if (h >= 0 && (a->held[h].v[2] & HELD_AMBIGUOUS)) {
			/* A second free of the address, by another thread:
			 * the held one was of the block before it. */
			bool older = ev->type == MSC_CEV_FREE && ev->tid != a->held[h].tid;

			hold_release_as(a, (unsigned)h, older);
			hold_enqueue(a, ev, false);
			if (older)
				a->repaired++;
			return 0;
		}
		if (h >= 0) {
			if (a->held[h].tid != ev->tid &&
			    (a->held[h].type == MSC_CEV_ALLOC) != (ev->type == MSC_CEV_ALLOC) &&
			    (!a->unseen_frees_ok || ev->ts - a->held[h].ts <= MSC_AGG_HOLD_REACH_NS)) {
				/* The partner: ev happened first. */
				hold_enqueue(a, ev, true);
				hold_release(a, (unsigned)h);
				a->repaired++;
			} else {
				/* The same thread's (its ring order is right), or
				 * the same kind twice: the held one was what it
				 * seemed. */
				hold_release(a, (unsigned)h);
				hold_enqueue(a, ev, false);
			}
			return 0;
		}
	}
	if (a->qlen || ev->ts < a->hold_out_ts) {
		hold_enqueue(a, ev, false);
		return 0;
	}
	a->hold_out_ts = ev->ts;
	return 1;
}

bool msc_agg_pop_queued(struct msc_agg *a, struct msc_cevent *ev)
{
	if (!a->qlen)
		return false;
	*ev = a->queue[a->qhead].ev;
	a->hold_nohold = a->queue[a->qhead].nohold;
	a->hold_how = a->queue[a->qhead].how;
	a->qhead = (a->qhead + 1) % HOLD_QCAP;
	a->qlen--;
	if (ev->ts < a->hold_out_ts)
		ev->ts = a->hold_out_ts;
	a->hold_out_ts = ev->ts;
	return true;
}

void msc_agg_unhold(struct msc_agg *a)
{
	while (a->nheld)
		hold_release(a, 0);
}
