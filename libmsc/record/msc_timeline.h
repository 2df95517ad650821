/* SPDX-License-Identifier: MIT */
/*
 * msc_timeline: the heap over time by stack, kept by ms-record for every
 * recording (not only --events), and written at a process's end as one
 * "timeline" record and "series" records (memscope-format(5)).
 *
 * A point is the heap at one moment: its live bytes, the program's own
 * mappings, and the MSC_TIMELINE_TOP stacks holding the most then, exact.
 * Points are taken at most once per grid step (1 ms at first) of the
 * events' time, a nanosecond before the first event of a batch that
 * crosses it (the heap as it stood since the last one), and at the end.  When
 * MSC_TIMELINE_POINTS are kept, every other one goes and the step doubles:
 * a run of any length ends with between half and all of them, and the
 * sites walked stay about twice that many times the sites.  A point is
 * also never taken sooner after the last than 100 times the CPU time the
 * last one took: of wall time, and for a walk of over 20 us (many sites),
 * of the collector's own CPU time too (or else 1000 times of wall time:
 * a collector with little to do), so that the walks take at most a
 * hundredth of what the collector does; and
 * of three equal points in a row the middle one is not kept.
 */
#ifndef MSC_TIMELINE_H
#define MSC_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_agg.h"
#include "msc_ndjson.h"
#include "msc_stacks.h"

#define MSC_TIMELINE_POINTS 256
#define MSC_TIMELINE_TOP 16
/* Series are written for the stacks with the most at any point. */
#define MSC_TIMELINE_SERIES 32
/* Points of marks kept whatever thins the others (the first ones). */
#define MSC_TIMELINE_PINS 32

struct msc_tpoint {
	uint64_t ts, heap, mapped;
	bool pinned;			/* a mark's: never thinned out */
	unsigned ntop;
	struct msc_stack_bytes top[MSC_TIMELINE_TOP];
};

struct msc_timeline {
	struct msc_tpoint *pts;		/* [MSC_TIMELINE_POINTS], lazily */
	size_t npts;
	uint64_t step, due;		/* ns of the events' time */
	uint64_t calm_until;		/* monotonic ns: no point before */
	uint64_t cpu_next;		/* the collector thread's CPU ns: no
					 * costly point before */
	uint64_t last_cost;		/* CPU ns the last point's walk took */
	uint64_t idle_until;		/* monotonic ns: a costly point before
					 * needs cpu_next */
	uint64_t *sums;			/* msc_agg_top_stacks' scratch */
	size_t sums_cap;
	bool off;			/* out of memory: no more points */
	unsigned npins;
};

void msc_timeline_init(struct msc_timeline *t);
void msc_timeline_release(struct msc_timeline *t);

/* Is a point due at ts (the events' time)? */
static inline bool msc_timeline_due(const struct msc_timeline *t, uint64_t ts)
{
	return ts >= t->due && !t->off;
}

/* A point of a's heap at ts, when msc_timeline_due said one is (force: the
 * end's, whatever the calm rule says). */
void msc_timeline_take(struct msc_timeline *t, const struct msc_agg *a, uint64_t ts, bool force);
/* A point at a mark's ts, kept when the others are thinned (the first
 * MSC_TIMELINE_PINS marks'): the heap as it stood at the mark. */
void msc_timeline_pin(struct msc_timeline *t, const struct msc_agg *a, uint64_t ts);

/* Writes the timeline record of pid (-1: none written) and its series,
 * each after its stack (st). */
void msc_timeline_write(const struct msc_timeline *t, struct msc_writer *w, struct msc_stacks *st,
			int pid);

#endif
