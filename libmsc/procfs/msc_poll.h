/* SPDX-License-Identifier: MIT */
/*
 * msc_poll: watching a process from /proc alone (ms-record -p PID --poll).
 *
 * No injection, no ptrace: what any user may read of a process they own (or
 * root of any).  Each msc_poller_sample() reads /proc/PID/smaps once, sums it
 * by group as ms-snap --groups does (msc_snap.h), and writes a "sample"
 * record (ts, rss, pss, swap, anonymous: the sums) and a "mapping" record
 * with "ts" for each group whose size, rss, swap, private dirty or anonymous
 * bytes changed since the previous sample (every group the first time; a
 * group that went away once more with zeros).  Not pss alone: it moves
 * whenever another process maps the same file.
 * The stream opens with a header of mode "poll" and closes with an "end"
 * record holding the sample count and the first, last and peak rss.
 *
 * The figures are the kernel's: rss is what the pages mapped take now,
 * memory the allocator freed but kept shows as used, and a block allocated
 * but never touched does not.  What allocated the memory is not known here:
 * ms-record -p (without --poll) says that.
 */
#ifndef MSC_POLL_H
#define MSC_POLL_H

#include <stddef.h>
#include <stdint.h>

#include "msc_err.h"
#include "msc_ndjson.h"

struct msc_poller;

/* What was seen, for a summary line. */
struct msc_poll_summary {
	uint64_t samples, duration;		/* ns from the first sample to the last */
	uint64_t rss_first, rss_last, rss_peak;
	const char *grew_most;			/* group with the largest rss growth, or NULL */
	int64_t grew_most_by;
};

/*
 * Checks that pid's memory can be read and writes the header.  NULL with
 * err set (a one-line message naming the fix) when the process does not
 * exist or its smaps cannot be read.
 */
struct msc_poller *msc_poller_new(int pid, uint64_t interval_ms, struct msc_writer *w,
				  struct msc_err *err);
/* One sample.  0, or -ESRCH when the process is gone (err set), or
 * another negative errno when /proc could not be read (err set). */
int msc_poller_sample(struct msc_poller *p, struct msc_err *err);
/* Writes the "end" record: reason "detached" (we stopped) or "exit". */
void msc_poller_finish(struct msc_poller *p, const char *reason);
/* ms-record's last line (without its name), after msc_poller_finish. */
void msc_poller_summary_line(const struct msc_poller *p, char *buf, size_t n);
void msc_poller_free(struct msc_poller *p);

#endif
