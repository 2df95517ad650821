/* SPDX-License-Identifier: MIT */
/*
 * msc_diff: what changed between two memscope streams.
 *
 * A stream is loaded into a struct msc_snapshot: a list of entities, each an
 * identity (a process, a mapping of a process, an allocation site) with its
 * numeric figures ("metrics": every integer member of its record that is not
 * part of its identity).  Processes are the same process when pid AND start
 * time agree: a reused pid is a new process.  Mappings match by process and
 * name (and start address with per-mapping snapshots).
 *
 * Recordings (ms-record) are compared by call path, not by pid: two runs of
 * a program are different processes.  A site entity is every site of one
 * call path (its stack as function names, or module+offset where there is no
 * name: line numbers and addresses move between builds, functions do not),
 * a leak entity the leaked blocks of one call path, and the end record is
 * the program's entity (matched by program name and order in the stream).
 *
 * msc_diff_compute() pairs the entities of two snapshots and produces one
 * delta per (entity, metric) that changed, sorted by kind (processes,
 * mappings, leaks, sites) and then by change, largest growth first.  Totals of the
 * primary metric (the first one asked for) are kept for --fail-on-growth:
 * over processes, or over the sites (leaks) of snapshots whose processes
 * carry no such figure.  A snapshot's entities live in its arena, a diff's
 * deltas in an array of its own; the matching _release() frees them.  A
 * diff points into both snapshots and into its metric list: they must
 * outlive it.
 */
#ifndef MSC_DIFF_H
#define MSC_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "msc_arena.h"
#include "msc_err.h"
#include "msc_format.h"
#include "msc_ndjson.h"
#include "msc_stream.h"

enum msc_ent_kind {
	MSC_ENT_PROCESS,
	MSC_ENT_MAPPING,
	MSC_ENT_SITE,
	MSC_ENT_LEAK,
};

struct msc_metric {
	const char *name;
	int64_t value;
};

struct msc_entity {
	enum msc_ent_kind kind;
	int pid;
	uint64_t starttime;		/* 0 when unknown */
	const char *comm;		/* the process's comm ("" unknown) */
	const char *name;		/* mapping name; site label */
	const char *group;		/* mapping kind ("heap", "file", ...) */
	uint64_t start;			/* mapping start address, 0 when grouped */
	const char *id;			/* identity string used for matching */
	const struct msc_stackdef *stack;	/* sites, leaks: the stack (the snapshot's defs) */
	unsigned nmetrics;
	struct msc_metric *metrics;
};

struct msc_snapshot {
	char *source;
	struct msc_header_info header;
	bool complete;			/* an "end" record was seen */
	bool recording;			/* from ms-record: sites, leaks, totals */
	bool live_sites;		/* a snapshot with a recorded process's sites */
	bool live_leaks;		/* a snapshot with its leaks (ms-snap --leaks) */
	struct msc_arena arena;
	struct msc_stackdefs defs;	/* its frame and stack records */
	struct msc_entity *ents;
	size_t n, cap;
	/* msc_snapshot_load_range's: the leaks are of blocks allocated
	 * after the mark (or time) since and before until (NULL: no bound) */
	const char *since, *until;
};

/* Loads path ("-" = stdin).  Returns 0 or a negative errno with err set
 * ("FILE:LINE: what"); an empty input or one without header is -EINVAL. */
int msc_snapshot_load(struct msc_snapshot *s, const char *path, struct msc_err *err);
/* The same, keeping the leaks of the range between the marks (or times:
 * "30s") since and until only (either NULL); a mark that does not come
 * before the leaks, or a time that a leak record's blocks straddle, is
 * -ESRCH. */
int msc_snapshot_load_range(struct msc_snapshot *s, const char *path, const char *since, const char *until,
			    struct msc_err *err);
void msc_snapshot_release(struct msc_snapshot *s);
/* The metric's value in e, or false when e has no such figure. */
bool msc_entity_metric(const struct msc_entity *e, const char *name, int64_t *value);

struct msc_delta {
	const struct msc_entity *before;	/* NULL: the entity is new */
	const struct msc_entity *after;		/* NULL: the entity is gone */
	const char *metric;
	int64_t vbefore, vafter, change;
};

/*
 * A process of the first input matched with one of the second whatever
 * their names: a program of two recordings (by its name), a process of two
 * snapshots (by pid or comm), and everything of it (sites, leaks, mappings).
 */
struct msc_diff_pair {
	const char *before, *after;	/* program names, or comms */
	int pid_before, pid_after;	/* snapshots: the processes, else 0 */
	uint64_t st_before, st_after;	/* and their start times */
};

#define MSC_DIFF_MAX_PAIRS 16

struct msc_diff_opts {
	const char *const *metrics;	/* NULL: "rss", "pss", "swap" */
	unsigned nmetrics;
	uint64_t min_change;		/* hide |change| below this; 0 hides 0 */
	bool all;			/* keep unchanged figures too */
	/* Pairs the user named (msc_diff_pair_parse); with none, two
	 * recordings of one program each are paired whatever their names,
	 * unless no_auto_pair. */
	struct msc_diff_pair pairs[MSC_DIFF_MAX_PAIRS];
	unsigned npairs;
	bool no_auto_pair;
};

/* Adds the pair "BEFORE=AFTER" to o: program names for recordings, pids or
 * comms for snapshots, each naming one process of its input.  0, or
 * -EINVAL with err set ("no program 'x' in a.json"). */
int msc_diff_pair_parse(struct msc_diff_opts *o, const struct msc_snapshot *a,
			const struct msc_snapshot *b, const char *spec, struct msc_err *err);

struct msc_diff {
	const struct msc_snapshot *a, *b;
	struct msc_delta *deltas;
	size_t n;
	/* The metrics compared: the options' or the defaults (not owned). */
	const char *const *metrics;
	unsigned nmetrics;
	const char *primary;		/* metric of the totals: metrics[0] */
	enum msc_ent_kind total_kind;	/* whose figures the totals add up */
	int64_t total_before, total_after;
	unsigned processes_new, processes_gone, processes_matched;
	uint64_t min_change;		/* the options' */
	/* The processes matched across names: the options' pairs, or the
	 * one made for two single-program recordings. */
	struct msc_diff_pair pairs[MSC_DIFF_MAX_PAIRS];
	unsigned npairs;
};

int msc_diff_compute(struct msc_diff *d, const struct msc_snapshot *a,
		     const struct msc_snapshot *b, const struct msc_diff_opts *o);
void msc_diff_release(struct msc_diff *d);

/* Is this metric a count (allocs, threads...) rather than bytes? */
bool msc_metric_is_count(const char *name);

/* The metrics compared when none are asked for. */
const char *const *msc_diff_default_metrics(const struct msc_snapshot *a, const struct msc_snapshot *b,
					    unsigned *n);
/* Every metric either side has, the first default one first (it makes the
 * totals); a malloc'ed array of names the snapshots own, NULL when out of
 * memory. */
const char **msc_diff_all_metrics(const struct msc_snapshot *a, const struct msc_snapshot *b,
				  unsigned *n);
/* Did the total grow by more than limit (bytes), or with pct by more than
 * limit thousandths of a percent of where it was? */
bool msc_diff_grew_past(const struct msc_diff *d, uint64_t limit, bool pct);

/*
 * Writes the diff as an ms-diff stream (memscope-format(5)): a header with
 * the two sources and the options, one "delta" record per delta (each
 * site's and leak's stack record before its first delta) and an end record
 * with the totals.  Output errors are left in w->error.
 */
void msc_diff_write_stream(const struct msc_diff *d, struct msc_writer *w);

#endif
