/* SPDX-License-Identifier: MIT */
/*
 * recorder_internal: what the two files of the recording engine share
 * (private to libmsc; tools see msc_recorder.h only).
 *
 *	recorder.c		the session callbacks (events, the leak scan,
 *				a process's end), the results, live snapshots,
 *				launching, the summary line
 *	recorder_attach.c	ms-record -p: the call into the process, the
 *				library's own thread's results, the detach,
 *				the attach's summary line
 *	recorder_live.c		the live socket: the running process's
 *				sites, its leaks now (ms-snap, ms-top)
 */
#ifndef MSC_RECORDER_INTERNAL_H
#define MSC_RECORDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "msc_agg.h"
#include "msc_recorder.h"
#include "msc_records.h"
#include "msc_scan.h"
#include "msc_stacks.h"
#include "msc_timeline.h"

/* A mark of the process's run (memscope-format(5)). */
struct rmark {
	uint64_t ts;
	char name[MSC_MARK_NAME];
	const char *by;			/* a string constant */
	bool cut;			/* the leaks are split at it: not
					 * ms-record's own (start, end) */
};

struct thread {
	uint32_t tid;
	bool dead;
	uint64_t lo, hi, tp;		/* stack bounds, thread pointer */
};

/* A recorded process. */
struct rproc {
	struct msc_agg agg;
	struct msc_agg_result res;	/* its events' (calloc'ed: no error) */
	int pid;
	struct msc_range *own;		/* shim memory, excluded from the scan */
	size_t nown, capown;
	struct thread *threads;		/* its threads, for the scan */
	size_t nthreads, capthreads;
	uint64_t last_rss;		/* the last rss read, for the closing sample */
	struct msc_scan_stats scan;	/* the leak scan's, when it ran (ns != 0) */
	struct msc_leak_sum leaks;	/* as its end record said them, */
	bool have_leaks;		/* when it was written */
	struct msc_timeline timeline;	/* its heap over time by stack */
	struct rmark *marks;		/* in time order */
	size_t nmarks, capmarks;
};

struct msc_recorder {
	struct msc_recorder_opts o;
	struct msc_writer *w;
	struct msc_stacks stacks;
	struct msc_collector *col;	/* NULL: fed by hand (tests) */
	int main_pid;
	bool attached;			/* main_pid is not our child: attach mode */
	bool main_seen, main_ended;	/* its session began, ended */
	int main_status;		/* as a wait status, when it ended */
	bool main_header;		/* the main process's header is out */
	char *shim;			/* the library attached with */
	struct rproc *main_pr;		/* the main process, while recorded */
	int live_fd;			/* msc_live.h: its live heap, -1 */
	bool output_gone;		/* a write error: keep draining, stop writing */
	bool held;			/* attaching: written, not flushed (a refused
					 * attach leaves nothing behind) */
	struct msc_recorder_summary sum;
};

/* A warning to the owner, one line.  ctx is the recorder: this is also the
 * warn callback of the modules we drive (stacks, collector). */
void recorder_warn(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes what is buffered, unless held. */
void recorder_flush(struct msc_recorder *r);
/* The header record of a process (argv may be NULL). */
void recorder_write_header(struct msc_recorder *r, int pid, int ppid, const char *exe, char **argv);
/* Marks pr's process (pid) at ts: name (cut to MSC_MARK_NAME - 1 bytes),
 * set by (a string constant) "program", "ms-record", "signal" or
 * "ms-snap"; stack: of the
 * program's call, 0 for none.  Written at once; returns its time (not
 * before the last mark's). */
uint64_t recorder_mark(struct msc_recorder *r, struct rproc *pr, int pid, uint64_t ts, const char *name,
		       const char *by, uint32_t stack);
/* A mark record of pid's (stack: of the program's call, 0 for none). */
void recorder_write_mark(struct msc_writer *w, int pid, const struct rmark *m, uint32_t stack);
/* pr's leaks (msc_agg_leaks), split at its marks; the mark each group was
 * allocated after: recorder_leak_after. */
long recorder_leaks(const struct rproc *pr, struct msc_leak **out);
const struct rmark *recorder_leak_after(const struct rproc *pr, const struct msc_leak *l);
/* The collector's clock now (ns since the recording's start). */
uint64_t recorder_now(const struct msc_recorder *r, const struct msc_agg *a);
/* What the agg still holds for a partner (msc_agg_push), applied as it is. */
void recorder_unhold(struct msc_recorder *r, struct rproc *pr, int pid);
/*
 * The reachability scan of pr's process, pid, paused: at its exit (sps: the
 * exiting thread's stack pointer) or stopped whole for ms-snap --leaks
 * (none, and more roots: its threads' registers).  0, or -errno with err.
 */
int recorder_scan(struct rproc *pr, int pid, const uint64_t *sps, size_t nsps, const uint64_t *more,
		  size_t nmore, struct msc_scan_stats *st, struct msc_err *err);

/* recorder_live.c: serves the process's live heap (msc_live.h), once it
 * is ours; stops serving it; answers the clients waiting. */
void recorder_live_start(struct msc_recorder *r, int pid);
void recorder_live_stop(struct msc_recorder *r);
void recorder_live_serve(struct msc_recorder *r);
/* "1,234 allocations, 1,200 frees, peak 64.0 MiB": both summaries open so. */
const char *recorder_counts_of(char *buf, size_t n, const struct msc_recorder_summary *s);

#endif
