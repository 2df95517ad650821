/* SPDX-License-Identifier: MIT */
/*
 * msc_report: from a memscope stream to answers a person acts on.
 *
 * msc_report_load() reads any stream into a model: a recording's header,
 * stacks, sites, leaks, samples and end totals; a snapshot's processes and
 * mappings; a diff's deltas.  An --events recording is aggregated again with
 * msc_agg, the code ms-record itself uses, so its sites are exactly the ones
 * ms-record wrote; leak kinds come from its leak records (reachability is
 * not in the events).  The renderers then print the sections asked for as
 * text (80 columns), GitHub Markdown, one JSON document, flamegraph.pl's
 * folded stacks, or a self-contained SVG flame graph.
 *
 * Everything the model holds lives in its arena; msc_report_release() frees
 * it.  Loading returns 0 or a negative errno with err set; a stream cut short
 * (no end record) loads what it has, with r->complete false.
 */
#ifndef MSC_REPORT_H
#define MSC_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "msc_agg.h"
#include "msc_arena.h"
#include "msc_err.h"
#include "msc_filter.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_ndjson.h"

struct msc_stackdef;

struct msc_rstack {
	uint32_t id;
	unsigned n;			/* 0 and frames NULL for a stack no record names */
	struct msc_rframe *frames;
	unsigned attr;			/* the frame an allocation is attributed to */
	struct msc_stackdef *def;	/* its definition (msc_report_load's) */
	bool used;			/* a record names it */
};

struct msc_rsite {
	int pid;
	int image;			/* its process image (images), -1: none */
	uint32_t stack;
	uint64_t size, size_max;	/* size_max == size unless a size class */
	const char *fn;
	const char *pool;		/* memscope.h's pool, NULL for none */
	uint64_t allocs, frees, bytes, live, live_bytes, at_peak, temporary;
	uint64_t peak_live_bytes;	/* 0 when unknown */
	uint64_t ages[MSC_AGE_BUCKETS];
	uint64_t first_ts, last_ts;
};

struct msc_rleak {
	int pid;
	int image;			/* its process image (images), -1: none */
	uint32_t stack;
	uint64_t size, size_max;
	const char *fn, *kind;
	const char *pool;		/* memscope.h's pool, NULL for none */
	uint64_t count, bytes, first_ts, last_ts;
	const char *after;		/* the mark its blocks came after, NULL: none */
	uint64_t after_ts;
};

/* A mark of the run (ms-record's "mark" record). */
struct msc_rmark {
	int pid;
	uint64_t ts;
	const char *name, *by;
};

/* A memory error (ms-record's "error" record). */
struct msc_rerror {
	int pid;
	const char *kind, *fn, *alloc_fn, *free_fn;
	uint64_t ptr, size, offset;
	bool has_block;
	uint32_t stack, alloc_stack, free_stack;	/* 0 when not known */
};

struct msc_rsample {
	int pid;
	bool has_heap;			/* false in --poll recordings */
	uint64_t ts, rss, heap, pss, swap;
	uint64_t mapped;		/* the program's own anonymous mmaps and brk */
	bool has_counts;		/* allocations so far (ms-record's samples) */
	uint64_t allocs, bytes;
};

struct msc_rdelta {
	const char *key, *comm, *name, *group, *metric, *status;
	int pid;
	uint32_t stack;
	uint64_t size;
	int64_t before, after, change;
};

struct msc_rproc {
	int pid, ppid;
	const char *comm, *cmdline;
	uint64_t rss, pss, swap, private_bytes;
	bool has_pss;
};

/*
 * The heap over time by stack, kept from an --events recording when asked
 * (msc_report.want_heap_series): each stack's live bytes, as it stood at the
 * end of each time slot where it changed.  Slots start 10 us wide and double
 * whenever the run outgrows MSC_HEAP_SLOTS of them, so a run of any length
 * ends with between half and all of them, and memory stays proportional to
 * slots times the stacks active in each.
 */
#define MSC_HEAP_SLOTS 512

struct msc_rheap_change {
	uint32_t slot, stack;
	int64_t live;			/* the stack's live bytes at the slot's end */
};

struct msc_rheap_stack {
	int64_t live;
	uint32_t slot;			/* of its last change */
	size_t at;			/* that change's index in the log */
};

struct msc_rheap {
	uint64_t slot_ns;		/* 0: nothing kept */
	uint32_t nslots;		/* slots up to the last change */
	struct msc_rheap_change *log;	/* in slot order */
	size_t nlog, log_cap;
	uint64_t *total;		/* per slot: the heap at its end */
	struct msc_rheap_stack *stacks;
	size_t nstacks, stacks_cap;
	struct msc_u64map index;	/* stack id + 1 -> index in stacks */
};

struct msc_rmapping {
	int pid;
	const char *name, *kind;
	uint64_t ts;			/* --poll recordings: when it was read */
	uint64_t size, rss, pss, swap;
};

/*
 * The heap over time by stack of an ms-record recording (its "timeline"
 * and "series" records, memscope-format(5)): npts points with the heap and
 * mapped bytes then, and for each series' stack its live bytes at each
 * point, -1 where it was not among the top stacks of that point.
 */
struct msc_rseries {
	uint32_t stack;
	uint64_t max;
	int64_t *live;			/* [npts] */
};

struct msc_rtimeline {
	int pid;
	size_t npts;
	unsigned top;			/* stacks given per point */
	uint64_t *ts, *heap, *mapped;	/* [npts] */
	uint64_t *floor;		/* [npts]: the most a stack not given
					 * at a point can hold; NULL: unknown */
	struct msc_rseries *series;
	size_t nseries, series_cap;
};

/*
 * The page-level figures of an end record (ms-record's): the heap's peak
 * against the peak of what the program mapped itself (anonymous mmaps,
 * brk), and the process's peak rss.  Zeros for records without them.
 */
struct msc_rpages {
	bool have;			/* the end record has heap_peak */
	uint64_t heap_peak, heap_peak_ts;
	uint64_t mapped_peak, mapped_peak_ts, mapped;
	uint64_t rss_peak;		/* hwm: 0 when not known */
};

/*
 * A process image of a recording, from its header to its end: one per
 * process of an ms-record --follow recording, one more after each exec.
 * Its figures are what its site and leak records add up to.
 */
struct msc_rimage {
	int pid, ppid;
	const char *argv, *start;
	const char *program;		/* argv[0]'s last part, NULL: none */
	bool complete, has_status;
	const char *reason;
	int status, signal;
	uint64_t duration, peak, peak_ts, lost;
	uint64_t allocs, frees, bytes, temporary;
	uint64_t mmaps, mmap_bytes;		/* anonymous mappings: not in allocs */
	uint64_t brks, brk_bytes;		/* the program's brk growth: nor these */
	struct msc_rpages pages;
	uint64_t kind_bytes[MSC_LEAK_KINDS], kind_blocks[MSC_LEAK_KINDS];
};

struct msc_report {
	const char *source;
	struct msc_arena arena;
	/* header */
	const char *tool, *mode, *argv, *start;
	int pid;
	unsigned streams;		/* processes (pids) the stream holds */
	bool all_processes;		/* set before loading: the sites and leaks
					 * of every process, each with its pid
					 * (--pprof), not only pid's */
	struct msc_u64map pids;		/* pids seen in headers */
	const char *before, *after;	/* ms-diff: its inputs */
	const char *diff_metric;	/* ms-diff: the totals' metric */
	const char **diff_metrics;	/* ms-diff: the metrics compared, in order */
	unsigned ndiff_metrics;
	int64_t diff_before, diff_after;
	int64_t diff_elapsed;		/* ms-diff: ns from before to after */
	bool diff_has_elapsed;
	uint64_t diff_new, diff_gone;	/* ms-diff: processes new and gone */
	const char *diff_paired;	/* ms-diff: "before -> after, ..." matched across names */
	/* end (of the first process's last image: after an exec, the
	 * program it ran is what the report describes) */
	bool complete;
	const char *reason;
	int status, signal;
	bool has_status;
	uint64_t duration, peak, peak_ts, lost, leaked_bytes, leaked_blocks;
	struct msc_rpages pages;
	uint64_t end_allocs, end_frees, end_bytes;
	bool has_end_totals, scanned;
	unsigned depth;			/* ms-record --depth; 0: not known */
	uint64_t sample;		/* ms-record --sample: sites, leaks, peak and
					 * live figures are estimates; 0: exact */
	uint64_t start_epoch;		/* ns since the Unix epoch; 0: not known */
	struct msc_filtered *filtered;
	unsigned nfiltered;
	const char **filters;
	unsigned nfilters;
	/* what the stream holds: stacks of every process, sites, leaks and
	 * samples of the main one (the first header's pid) */
	struct msc_u64map stacks;	/* id -> struct msc_rstack * */
	struct msc_stackdefs defs;	/* the stream's frame and stack records */
	struct msc_rsite *sites;
	size_t nsites, sites_cap;
	struct msc_rleak *leaks;
	size_t nleaks, leaks_cap;
	struct msc_rerror *errors;
	size_t nerrors, errors_cap;
	uint64_t end_errors;		/* the end record's count (all, not only those written) */
	struct msc_rsample *samples;
	size_t nsamples, samples_cap;
	struct msc_rdelta *deltas;
	size_t ndeltas, deltas_cap;
	struct msc_rproc *procs;
	size_t nprocs, procs_cap;
	struct msc_rmapping *maps;
	size_t nmaps, maps_cap;
	/* a recording's process images, every process's, in header order */
	struct msc_rimage *images;
	size_t nimages, images_cap;
	struct msc_u64map image_of;	/* pid + 1 -> index + 1 of its last image */
	/* an --events recording, aggregated again */
	bool from_events;
	struct msc_agg agg;
	bool agg_ready;
	uint64_t events;
	struct msc_strmap fn_codes;	/* allocation function name -> code */
	const char *const *alloc_fns;	/* for attribution (ms-filter --alloc-fn) */
	unsigned nalloc_fns;
	bool no_auto_wrappers;		/* set before loading: see wrappers */
	/* The program's own allocation wrappers, found: a frame that is the
	 * site of stacks from three callers or more and is never seen calling
	 * anything but the allocator; its callers are the sites instead.
	 * Their names: "fn (obj)", or an unnamed frame's msc_frame_label. */
	const char **wrappers;
	unsigned nwrappers;
	/* set before loading: the range the leaks are kept of, mark names
	 * (NULL: from the start, to the end); after loading, the instants
	 * they resolved to */
	const char *since, *until;
	struct msc_span span;		/* since and until as the stream says them */
	const char *live_at;		/* set before loading: the mark whose heap
					 * to show (its timeline point) */
	size_t live_at_point;		/* after loading: that point's index */
	bool live_at_time;		/* a time ("30s"): the last point before */
	struct msc_rmark *marks;	/* the main process's, in time order */
	size_t nmarks, marks_cap;
	bool want_heap_series;		/* set before loading: keep heap */
	struct msc_rheap heap;
	struct msc_rtimeline timeline;	/* the main process's last image's */
};

/*
 * Loads a stream into r.  The caller may set alloc_fns, nalloc_fns,
 * no_auto_wrappers, want_heap_series, all_processes, since and until
 * before: they are kept, the rest is cleared.  A since or until that names
 * no mark of the stream, or a since after the until, is an error (-ESRCH).
 */
int msc_report_load(struct msc_report *r, struct msc_reader *rd, struct msc_err *err);
void msc_report_release(struct msc_report *r);
/*
 * The blocks of the leak records read, by kind (leaks[MSC_LEAK_KINDS],
 * added to): the report's process's, as the gates count them.
 */
void msc_report_leak_blocks(const struct msc_report *r, uint64_t *leaks);
/* Is fn where a process's or a thread's stack begins (_start,
 * __libc_start_main, start_thread, clone...): the C runtime's own frames,
 * which nothing calls and a report leaves out. */
bool msc_report_runtime_fn(const char *fn);
const struct msc_rstack *msc_report_stack(const struct msc_report *r, uint32_t id);
/*
 * Whether the stack was cut at ms-record's --depth: as many frames as the
 * depth (inlined frames apart), and its outermost is not where a program
 * or a thread starts.  False when the depth is not known.
 */
bool msc_report_stack_truncated(const struct msc_report *r, const struct msc_rstack *s);
/*
 * The frames of a stack an output lists: its innermost, up to
 * MSC_REPORT_SHOWN_CALLS calls with their inlined frames.  Four times the
 * deepest stack ms-record captures, so a recording's stacks are listed
 * whole; a stream made otherwise (a chain of 16,384 parents) prints in
 * time linear in its sites.  Returns how many of s->frames to list.
 */
#define MSC_REPORT_SHOWN_CALLS 1024
unsigned msc_report_stack_shown(const struct msc_rstack *s);
/* The program process image `image` ran (its program), NULL when not known. */
const char *msc_report_program(const struct msc_report *r, int image);

enum msc_report_format {
	MSC_REPORT_TEXT,
	MSC_REPORT_MD,
	MSC_REPORT_JSON,
	MSC_REPORT_COLLAPSED,
	MSC_REPORT_SVG,
	MSC_REPORT_HTML,
	MSC_REPORT_PPROF,
};

enum msc_report_cost {
	MSC_COST_AUTO,			/* leaked; pictures: peak, then bytes,
					 * when nothing leaked */
	MSC_COST_LEAKED,
	MSC_COST_ALLOCS,
	MSC_COST_BYTES,
	MSC_COST_PEAK,
};

#define MSC_SECTION_SUMMARY 1u
#define MSC_SECTION_LEAKS 2u
#define MSC_SECTION_TOP 4u
#define MSC_SECTION_TEMPORARY 8u
#define MSC_SECTION_SIZES 16u
#define MSC_SECTION_TIMELINE 32u
#define MSC_SECTION_ERRORS 64u
#define MSC_SECTION_ALL 127u

struct msc_report_opts {
	enum msc_report_format format;
	enum msc_report_cost cost;
	unsigned top;			/* rows per table */
	unsigned sections;
	const char *title;		/* SVG title */
	bool icicle;			/* flame graphs top-down */
	unsigned width;			/* text's columns: 0 for 80, or MSC_REPORT_WIDE */
};

#define MSC_REPORT_WIDE UINT32_MAX	/* text as wide as its names */

/* Parses "summary,leaks,..."; returns 0 or -EINVAL. */
int msc_report_sections(const char *list, unsigned *out);
/* Parses a cost's name ("leaked", "allocs", "bytes", "peak"); returns 0 or -EINVAL. */
int msc_report_cost_parse(const char *name, enum msc_report_cost *out);

/*
 * Why the stream cannot be a pprof profile (an ms-diff stream, /proc
 * figures only, a snapshot without its heap by site), or NULL when it can.
 */
const char *msc_report_pprof_unfit(const struct msc_report *r);

/* Renders the report; returns 0 or -errno of the stream. */
int msc_report_render(struct msc_report *r, const struct msc_report_opts *o, FILE *out);

/*
 * The report of the records write(ctx, w) writes (ms-diff's deltas, say):
 * written to memory, read back and rendered, so that a tool's report and
 * the one `TOOL | ms-report` prints cannot disagree.  name names the
 * stream in messages.  Returns 0, -ENOMEM, or -errno of out.
 */
int msc_report_print_records(void (*write)(void *ctx, struct msc_writer *w), void *ctx,
			     const char *name, const struct msc_report_opts *o, FILE *out);

#endif
