/* SPDX-License-Identifier: MIT */
/*
 * msc_filter: the stream filter behind ms-filter(1).
 *
 * It reads any memscope stream and writes the records that pass, keeping the
 * stream valid: header and end records always pass (end gains a "filtered"
 * member: what was dropped, by record type, and a "filters" list saying how),
 * stack and frame records are held back and written just before the first
 * passing record that needs them (a stack after its parent stacks and the
 * frame records it names), and unknown types and members pass untouched.
 * With expand, each stack goes out as version 1 writes it, every frame in
 * place, without frame records or parents, under a version 1 header.
 *
 * Allocation records are the ones that carry a stack and a size: site,
 * leak, and the events alloc, free, mmap, munmap, mremap, brk.  Matching:
 *
 *  --ignore PAT      drops a record when the frame it is attributed to
 *                    matches PAT: the innermost frame that is neither a
 *                    pass-through wrapper that returns memory to its caller
 *                    (strdup, asprintf, getline, realpath, ..., and every
 *                    --alloc-fn) nor allocator plumbing (std::allocator...).
 *  --ignore-frame P  drops a record when any frame matches.
 *  --only PAT        keeps only records with a matching frame.
 *  --since, --until  keep the leaks (and events) of blocks allocated after
 *                    and before two marks: the stream's mark records name
 *                    them before any record the range judges.
 *
 * A pattern is a glob (fnmatch) matched against the frame's function (with
 * and without its parameter list), its source file (full path and name) and
 * its module (full path, file name, and the name up to ".so": "libc" is
 * libc.so.6).  Suppressions use LeakSanitizer's "leak:PATTERN" lines and
 * semantics (a substring of a function, file or module name of any frame,
 * '*' wildcards, '^' '$' anchors) and apply to leak records.
 */
#ifndef MSC_FILTER_H
#define MSC_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "msc_agg.h"
#include "msc_arena.h"
#include "msc_err.h"
#include "msc_ndjson.h"

/* What an end record's "filtered" says of one kind of record (see
 * memscope-format(5)): dropped records, their blocks and bytes, and the
 * transient allocations --transient took out of sites it kept. */
struct msc_filtered {
	const char *type;
	uint64_t records, blocks, bytes;
	uint64_t trimmed_allocs, trimmed_bytes;
};
/* Adds the counts of one kind's "filtered" member (an object) to *to. */
void msc_filtered_add(const struct msc_jval *v, struct msc_filtered *to);

struct msc_supp_rule {
	char *pattern;		/* as written */
	char *glob;		/* as matched */
	unsigned line;
	uint64_t hits, bytes;	/* leak blocks and bytes it suppressed */
};

struct msc_supp {
	struct msc_supp_rule *rules;
	unsigned n;
};

/* Parses a suppressions file.  Returns 0 or -errno / -EINVAL with err set
 * ("FILE:LINE: what"). */
int msc_supp_load(struct msc_supp *s, const char *path, struct msc_err *err);
void msc_supp_release(struct msc_supp *s);
/* Writes to out what each rule suppressed, as LeakSanitizer does, if any did. */
void msc_supp_print_used(const struct msc_supp *s, FILE *out);

struct msc_filter_opts {
	bool has_min, has_max;
	uint64_t min_size, max_size;
	const char *const *ignore;
	unsigned nignore;
	const char *const *ignore_frame;
	unsigned nignore_frame;
	const char *const *only;
	unsigned nonly;
	const char *const *alloc_fns;	/* more pass-through wrappers */
	unsigned nalloc_fns;
	struct msc_supp *supp;
	bool transient;
	uint64_t min_age;		/* ns */
	const char *const *types;	/* NULL: every type */
	unsigned ntypes;
	int pid;			/* 0: every pid */
	unsigned top;			/* 0: all */
	/*
	 * Someone watches the output (a pipe, a terminal): a header, sample
	 * or end record flushes the writer after it is read, so that a
	 * running recording shows as it goes, at most a sample interval
	 * late, without a write(2) per record (which would cost an --events
	 * stream more than filtering it).
	 */
	bool live;
	bool expand;			/* stacks with their frames in place (version 1) */
	/* --since, --until: marks; leak records and allocation events of
	 * blocks allocated out of the range between them are dropped */
	const char *since, *until;
};

struct msc_filter_stats {
	uint64_t in, out;		/* records */
	uint64_t streams;
	bool truncated;			/* a stream (header) had no end record
					 * (input read to its end only) */
	bool age_rounded;		/* --min-age not a decade on aggregates */
	/* what went out, for the gates (--fail-on-leak, --fail-on-error) */
	uint64_t leaks[MSC_LEAK_KINDS];	/* blocks of the leak records, by kind */
	uint64_t errors;		/* error records */
};

/*
 * Filters r into w.  Returns 0, or a negative errno with err set for bad
 * input (what was written before stays written).  Output errors are left in
 * w->error for the caller.
 */
int msc_filter_run(const struct msc_filter_opts *o, struct msc_reader *r, struct msc_writer *w,
		   struct msc_filter_stats *st, struct msc_err *err);

/* Does pattern (a glob) match this frame? */
bool msc_frame_matches(const char *pattern, const char *fn, const char *file, const char *obj);

#endif
