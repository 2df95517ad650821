/* SPDX-License-Identifier: MIT */
/*
 * msc_format: writing what the collector and msc_agg know as records
 * (memscope-format(5)): "site", "leak", "sample", the event records of
 * --events, and the totals of "end".  ms-record writes them all through
 * these functions; ms-report's reader (report.c) takes the same names back.
 *
 * pid < 0 omits the "pid" member (single-process event streams).
 */
#ifndef MSC_FORMAT_H
#define MSC_FORMAT_H

#include <stdint.h>

#include "msc_agg.h"
#include "msc_collect.h"
#include "msc_ndjson.h"

void msc_write_site(struct msc_writer *w, const struct msc_agg *a, const struct msc_site *s,
		    int pid);
void msc_write_leak(struct msc_writer *w, const struct msc_agg *a, const struct msc_leak *l,
		    int pid);
/* The --events record of an event ("alloc", "free", "unfree", "mmap",
 * "munmap", "mremap", "brk", "thread"); fr: what msc_agg_free found of a
 * freed block, NULL when it was unknown.  Other types write nothing.  The
 * caller writes the event's stack record first. */
void msc_write_event(struct msc_writer *w, const struct msc_cevent *ev, int pid,
		     const struct msc_freed *fr);
/* A "sample": the rss the collector read and the heap as a stands. */
void msc_write_sample(struct msc_writer *w, const struct msc_agg *a, int pid, uint64_t ts,
		      uint64_t rss);
/* The totals members of an "end" record (the caller opened it).  leaks
 * false leaves out the leak totals (an image replaced by exec leaks nothing). */
void msc_write_totals(struct msc_writer *w, const struct msc_agg *a, bool leaks);

#endif
