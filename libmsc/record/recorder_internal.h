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
 */
#ifndef MSC_RECORDER_INTERNAL_H
#define MSC_RECORDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "msc_recorder.h"
#include "msc_stacks.h"

struct rproc;

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

/* Writes what is buffered, unless held. */
void recorder_flush(struct msc_recorder *r);
/* The header record of a process (argv may be NULL). */
void recorder_write_header(struct msc_recorder *r, int pid, int ppid, const char *exe, char **argv);
/* Serves the process's live heap (msc_live.h), once it is ours. */
void recorder_live_start(struct msc_recorder *r, int pid);
/* "1,234 allocations, 1,200 frees, peak 64.0 MiB": both summaries open so. */
const char *recorder_counts_of(char *buf, size_t n, const struct msc_recorder_summary *s);

#endif
