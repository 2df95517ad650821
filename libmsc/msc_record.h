/* SPDX-License-Identifier: MIT */
/*
 * msc_record: writing what msc_agg knows as records (memscope-format(5)):
 * "site", "leak", "sample", the event records of --events, and the totals of
 * "end".  ms-record writes them from the shim's events; ms-report and
 * ms-filter use the same functions, so field names and meanings cannot drift.
 *
 * pid < 0 omits the "pid" member (single-process event streams).
 */
#ifndef MSC_RECORD_H
#define MSC_RECORD_H

#include <stdint.h>

#include "msc_agg.h"
#include "msc_rec.h"

void msc_write_site(struct msc_writer *w, const struct msc_agg *a, const struct msc_site *s,
		    int pid);
void msc_write_leak(struct msc_writer *w, const struct msc_agg *a, const struct msc_leak *l,
		    int pid);
/* The totals members of an "end" record (the caller opened it).  leaks
 * false leaves out the leak totals (an image replaced by exec leaks nothing). */
void msc_write_totals(struct msc_writer *w, const struct msc_agg *a, bool leaks);

/* Leaked bytes and blocks: definitely + indirectly lost, or every live
 * block when no scan ran (then *scanned is false). */
void msc_agg_leak_totals(const struct msc_agg *a, uint64_t *bytes, uint64_t *blocks,
			 uint64_t *possibly_bytes, uint64_t *reachable_bytes, bool *scanned);

#endif
