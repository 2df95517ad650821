/* SPDX-License-Identifier: MIT */
/*
 * msc_snap: a snapshot of processes' memory, written as records.
 *
 * For each process: one "process" record (identity from stat, figures from
 * status, and pss/private/shared figures from smaps_rollup), then either
 * nothing (quick mode, smaps_rollup only), "mapping" records grouped by what
 * they map ([heap], [stack], [anon], one per file, the kernel's special
 * mappings), or one "mapping" record per mapping.  A "meminfo" record holds
 * the system's figures.  Field names and units: memscope-format(5).
 *
 * The process's rss is status VmRSS (what ps and top show), read just before
 * smaps_rollup; the two can differ by the kernel's per-CPU counter slack.
 */
#ifndef MSC_SNAP_H
#define MSC_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_arena.h"
#include "msc_err.h"
#include "msc_proc.h"
#include "msc_ndjson.h"

enum msc_snap_maps {
	MSC_SNAP_MAPS_NONE,		/* process records only (smaps_rollup) */
	MSC_SNAP_MAPS_GROUPED,		/* mapping records per group (smaps) */
	MSC_SNAP_MAPS_ALL,		/* mapping record per mapping (smaps) */
};

struct msc_snapper {
	struct msc_procfs *fs;
	struct msc_writer *w;
	enum msc_snap_maps maps;
	bool skip_kthreads;		/* write nothing for kernel threads */
	struct msc_arena arena;		/* per-process scratch */
	unsigned processes;		/* process records written */
	unsigned partial;		/* of which some figures were missing */
};

void msc_snapper_init(struct msc_snapper *s, struct msc_procfs *fs, struct msc_writer *w,
		      enum msc_snap_maps maps);
void msc_snapper_release(struct msc_snapper *s);

/*
 * Snapshots one process.  Returns 0 when everything was read, 1 when the
 * records were written but some figures were missing (err says which and
 * why: the figures are omitted, never invented), or a negative errno when
 * nothing could be read (-ESRCH gone, -EACCES denied; err says so).  A
 * kernel thread, with skip_kthreads set, is 0 and writes nothing.
 */
int msc_snap_process(struct msc_snapper *s, int pid, struct msc_err *err);

/* What msc_snap_process writes as one grouped "mapping" record. */
struct msc_map_group {
	const char *name;
	const char *kind;
	unsigned count;			/* mappings in the group */
	struct msc_memcounts mem;	/* their smaps counters, summed */
};

/*
 * The process's mappings summed by group (the --groups view), for callers
 * that compare them over time (ms-record --poll).  The array lives in the
 * snapper's arena until its next call.  Returns 0 or a negative errno with
 * err set (-ESRCH: the process is gone).
 */
int msc_snap_groups(struct msc_snapper *s, int pid, const struct msc_map_group **groups,
		    size_t *n, struct msc_err *err);

/* Writes a group as a "mapping" record; ts, when not NULL, is its time. */
void msc_snap_write_group(struct msc_writer *w, int pid, const struct msc_map_group *g,
			  const uint64_t *ts);

/* Writes the "meminfo" record. */
int msc_snap_meminfo(struct msc_snapper *s, struct msc_err *err);

/*
 * A snapshot's stream, around its process records: the header names the
 * pids[0..n) asked for ("pid" too for one) and the options (all: every
 * process, the mappings' view, proc: the root when it is not /proc, or
 * NULL); the end counts the processes written, those partial and those
 * unreadable.
 */
void msc_snap_write_header(struct msc_snapper *s, const int *pids, int n, bool all,
			   const char *proc);
void msc_snap_write_end(struct msc_snapper *s, unsigned partial, unsigned unreadable);

/*
 * Snapshots every process of the proc root (but kernel threads with
 * skip_kthreads), adding to *partial those that could not be read fully
 * and to *failed those that could not be read at all (one that ended
 * meanwhile is neither).  Stops at a write error.
 */
void msc_snap_all(struct msc_snapper *s, unsigned *partial, unsigned *failed);

/* How many of pids[0..n) are there under the proc root. */
unsigned msc_snap_present(const struct msc_procfs *fs, const int *pids, int n);

/* Groups a mapping: returns the group name and sets *kind
 * ("heap", "stack", "anon", "file", "shmem", "special"). */
const char *msc_mapping_group(const struct msc_mapping *m, const char **kind);

#endif
