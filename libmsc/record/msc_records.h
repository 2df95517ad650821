/* SPDX-License-Identifier: MIT */
/*
 * msc_records: the records ms-record writes, from what the collector and
 * msc_agg know: the event records of --events, "site", "leak", "error",
 * "sample", and the totals of "end" (their names and their readers are
 * format/'s).  pid < 0 omits the "pid" member.
 */
#ifndef MSC_RECORDS_H
#define MSC_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "msc_agg.h"
#include "msc_collect.h"
#include "msc_ndjson.h"

/* The --events record of an event ("alloc", "free", "unfree", "mmap",
 * "munmap", "mremap", "brk", "thread"); fr: what msc_agg_free found of a
 * freed block, NULL when it was unknown.  Other types write nothing.  The
 * caller writes the event's stack record first. */
void msc_write_event(struct msc_writer *w, const struct msc_cevent *ev, int pid,
		     const struct msc_freed *fr);

void msc_write_site(struct msc_writer *w, const struct msc_agg *a, const struct msc_site *s,
		    int pid);
/* A leak record; after: the name of the mark its blocks were allocated
 * after (at after_ts), NULL for none. */
void msc_write_leak(struct msc_writer *w, const struct msc_agg *a, const struct msc_leak *l,
		    const char *after, uint64_t after_ts, int pid);
/* An "error" record (a memory error the last event made: a->err); the
 * caller writes its stack records first. */
void msc_write_error(struct msc_writer *w, const struct msc_agg_error *e, int pid);
/* A "sample": the rss the collector read and the heap as a stands. */
void msc_write_sample(struct msc_writer *w, const struct msc_agg *a, int pid, uint64_t ts,
		      uint64_t rss);
/* The leak totals an "end" record says (msc_agg_leak_totals'). */
struct msc_leak_sum {
	uint64_t bytes, blocks;
	bool scanned;
};

/* The totals members of an "end" record (the caller opened it).  leaks
 * false leaves out the leak totals (an image replaced by exec leaks nothing).
 * sum, if not NULL, gets the leak totals, so that the caller need not walk
 * every live block again for them. */
void msc_write_totals(struct msc_writer *w, const struct msc_agg *a, bool leaks,
		      struct msc_leak_sum *sum);

#endif
