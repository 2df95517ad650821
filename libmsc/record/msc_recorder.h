/* SPDX-License-Identifier: MIT */
/*
 * msc_recorder: the recording engine behind ms-record(1).
 *
 * A recorder owns a collector (msc_collect.h) and everything that happens
 * between the shim's events and the records written: one aggregator per
 * recorded process (msc_agg), the canonical stacks of the stream
 * (msc_stacks), the threads and shim memory each process announced (the
 * roots and exclusions of its leak scan, msc_scan), and the stream's framing:
 * a "header" record for every process, its sites, leaks and "end" record
 * when it ends, "sample" records as they come, every event with --events.
 *
 * The owner (a tool) starts the program or finds the process, tells the
 * recorder which pid is its main process, and calls msc_recorder_poll()
 * until the main process is done and no session is left; the recorder never
 * waits on anything but the collector.  Output goes through the caller's
 * msc_writer, flushed after every record group, so an interrupted recording
 * keeps everything it received; a write error (EPIPE: the reader went away)
 * stops the output, not the recording, and is said once through warn.
 *
 * Nothing here prints or exits: warnings go to o->warn (may be NULL).  The
 * summary of the main process outlives its session, for the tool's last line.
 */
#ifndef MSC_RECORDER_H
#define MSC_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "msc_collect.h"
#include "msc_err.h"
#include "msc_ndjson.h"

struct msc_recorder_opts {
	const char *mode;		/* the header's "mode": "launch", "attach" */
	bool events;			/* every event as a record */
	bool follow;			/* children too (pid-tagged streams) */
	bool scan;			/* leak kinds by reachability at exit */
	bool free_stacks;		/* frees with whole stacks, not their caller */
	bool lossy;			/* drop events rather than make threads wait */
	uint32_t depth;			/* frames per stack, 1..MSC_PROTO_MAX_DEPTH */
	unsigned unwind;		/* enum msc_unwind */
	const char *unwind_name;	/* as the header's options say it */
	uint64_t interval_ms;		/* rss samples, 0: none */
	uint64_t sample;		/* --sample BYTES: record allocations with
					 * probability 1 - exp(-size/BYTES), the
					 * figures become estimates (msc_agg.h);
					 * 0: record every one */
	uint64_t seed;			/* MEMSCOPE_SEED: the shim's draws, when */
	bool seeded;			/* seeded (else from the clock) */
	const char *const *alloc_fns;	/* --alloc-fn: wrappers, for the readers */
	unsigned nalloc_fns;
	/* Warnings ("libfoo.so: no debug info", write errors), one line each,
	 * without the tool's name. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

/* What ms-record says of the main process at the end. */
struct msc_recorder_summary {
	bool recorded;			/* the main process was recorded at all */
	uint64_t allocs, frees, bytes, peak;	/* peak: heap and mapped together */
	uint64_t heap_peak, mapped_peak;	/* each alone, as ms-report names them */
	uint64_t leaked, leaked_blocks;
	uint64_t live, live_blocks;	/* still allocated at the end */
	uint64_t unknown_frees;		/* frees of blocks we never saw allocated */
	bool scanned;
	uint64_t lost;
	bool execd;			/* attached, it ended by an exec */
};

struct msc_recorder;

/*
 * Creates a recorder writing to w (not owned; its fd stays the caller's):
 * the collector's socket directory is made and listening.  Returns NULL with
 * err set.
 */
struct msc_recorder *msc_recorder_new(const struct msc_recorder_opts *o, struct msc_writer *w,
				      struct msc_err *err);
/* Ends nothing (see _finish); removes the socket.  NULL is a no-op. */
void msc_recorder_free(struct msc_recorder *r);
/* The same, just before the process exits: what others can see goes (the
 * sockets, their directories), the memory is left to the exit unless a
 * leak checker watches (msc_leak_checked). */
void msc_recorder_exit(struct msc_recorder *r);

/* The path a program's MEMSCOPE_SOCK must name. */
const char *msc_recorder_socket(const struct msc_recorder *r);

/*
 * The main process: pid (the recorder's child, reaped by the collector),
 * what it runs (exe) and its argv (NULL: read from /proc).  Writes its
 * header record now, so a stream says what it is about even if the program
 * never loads the shim.
 */
void msc_recorder_set_main(struct msc_recorder *r, int pid, const char *exe, char **argv);

/*
 * The absolute path of libmemscope.so: $MEMSCOPE_SHIM, else next to the
 * running tool (../shim/ in the build tree, ../lib/memscope/ installed).
 * Returns a malloc'ed string, NULL when none is found.
 */
char *msc_recorder_find_shim(void);

/*
 * The file a recording goes to when ms-record's output is a terminal:
 * "memscope.NAME.PID.ndjson" in the current directory, NAME the program's
 * file name (prog), or with prog NULL the process's command name.  Writes
 * it into buf (truncated to n) and returns buf.
 */
char *msc_recorder_default_path(char *buf, size_t n, const char *prog, int pid);

/*
 * Attach mode: loads shim into the running process pid (msc_inject.h) and
 * records it from now on; its header (mode as in the options, "attach") is
 * written first.  Serves the collector while the call runs.  Returns 0, or
 * a negative errno with err saying why (the process is left as it was).
 * Blocks still live when the recording ends have kind "unknown": they may
 * predate it, or be freed after it.
 */
struct msc_inject_stats;
int msc_recorder_attach(struct msc_recorder *r, int pid, const char *shim,
			struct msc_inject_stats *st, struct msc_err *err);
/*
 * Puts the attached process back as it was (its hooks removed, recording
 * stopped; the library stays loaded) and ends its session with reason
 * "detached".  A no-op when it ended already.  -EAGAIN, the session going
 * on, when the process is stopped (job control, a debugger: try again
 * once it continues, msc_recorder_main_stopped) or no thread of it was
 * outside the allocator in time (try again).
 */
int msc_recorder_detach(struct msc_recorder *r, struct msc_inject_stats *st, struct msc_err *err);
bool msc_recorder_main_stopped(const struct msc_recorder *r);

/*
 * One round of work (msc_collector_poll()), and the live socket's clients
 * served if any came: waits up to timeout_ms, or until extra_fd (>= 0) is
 * readable: then returns 1, else 0.
 */
int msc_recorder_poll(struct msc_recorder *r, int extra_fd, int timeout_ms);
/* true once the main child was reaped (attached: once the process ended);
 * *status (may be NULL): its wait status. */
bool msc_recorder_main_done(const struct msc_recorder *r, int *status);
/* Processes still being recorded. */
unsigned msc_recorder_sessions(const struct msc_recorder *r);
/* Marks the main process's run now (a "mark" record, memscope-format(5)),
 * set by by ("signal", "ms-snap"), at *ts: 0, or -ESRCH when it is not
 * recorded. */
int msc_recorder_mark(struct msc_recorder *r, const char *name, const char *by, uint64_t *ts);
/* Stops every shim, drains and ends every session with reason. */
void msc_recorder_finish(struct msc_recorder *r, const char *reason);

const struct msc_recorder_summary *msc_recorder_summary(const struct msc_recorder *r);
/* ms-record's last line (without its name): for the program name launched,
 * which ended with wait status. */
void msc_recorder_summary_line(const struct msc_recorder_summary *s, const char *name, int status,
			       char *buf, size_t n);
/* The same for an attach to pid, with how long the thread was stopped to
 * attach and (when detached) to detach. */
void msc_recorder_attach_line(const struct msc_recorder_summary *s, int pid, bool detached,
			      const struct msc_inject_stats *at, const struct msc_inject_stats *de,
			      char *buf, size_t n);

/*
 * The collector's callbacks, exposed for tests that feed a recorder events
 * without a process (tests/unit/test_recorder.c); r->col may then be NULL.
 */
extern const struct msc_collect_ops msc_recorder_ops;

/* The recorder's stacks, for those tests to intern stacks in. */
struct msc_stacks *msc_recorder_stacks(struct msc_recorder *r);

/* A recorder without a collector, for those tests. */
struct msc_recorder *msc_recorder_new_detached(const struct msc_recorder_opts *o,
					       struct msc_writer *w, struct msc_err *err);

#endif
