/* SPDX-License-Identifier: MIT */
/*
 * filter_internal: what the files of ms-filter's stream filter share
 * (private to libmsc/analyze/; everyone else sees msc_filter.h).
 *
 *	filter.c	msc_filter_run and each record's way through it,
 *			the streams, the stacks (held back, judged once,
 *			written before the first record that needs them),
 *			the kinds of records and what a drop counts, the
 *			records written anew (the end record, --expand's
 *			version 1 header)
 *	filter_hold.c	--transient and --top: records held back and let
 *			go, sites without their transient part
 *	filter_match.c	frame patterns and suppression files, the
 *			range between marks
 *
 * What msc_filter_run inlines stays static in filter.c (the record's way,
 * decide, the end record); what crosses between the files was called out
 * of line there already, once per record that goes out, is held, or ends
 * a stream.
 */
#ifndef MSC_FILTER_INTERNAL_H
#define MSC_FILTER_INTERNAL_H

#include <fnmatch.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_arena.h"
#include "msc_err.h"
#include "msc_filter.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_ndjson.h"
#include "msc_stream.h"

/* What the filter knows of a stack record (its definition's user data). */
struct fstack {
	struct msc_stackdef *def;
	bool written;
	bool decided;
	bool ignored, only, ignored_frame;
	int supp;			/* rule index, -1 none */
	unsigned attr;
};

/* Of a frame record: whether the output has it. */
struct fframe {
	bool written;
};

struct filter {
	const struct msc_filter_opts *o;
	struct msc_writer *w;
	struct msc_err *err;
	struct msc_arena arena;		/* struct fstack, struct fframe */
	struct msc_stackdefs defs;	/* frame and stack records, lines kept */
	int failed;			/* -errno of writing a stack, 0 */
	struct msc_filter_stats *st;
	/* --alloc-fn and the first header's alloc_fns (ms-record --alloc-fn) */
	const char *const *alloc_fns;
	unsigned nalloc_fns;
	bool alloc_fns_read;
	int cur_pid;			/* pid of the last header */
	struct stream *streams;
	unsigned nstreams;
	/* --transient on events: a window of records held back */
	struct held *held;
	size_t nheld, held_head, held_cap;
	uint64_t now;
	struct msc_u64map pending_alloc;	/* hash(ptr, ts) -> held index + 1 */
	int age_bucket;			/* buckets below it are transient */
	bool saw_site_ages;		/* --transient used a site's histogram */
};

enum { C_SITE, C_LEAK, C_ALLOC, C_FREE, C_MMAP, C_OTHER, C_KINDS };

struct buffered {
	char *line;
	size_t len;
	uint64_t bytes, blocks;
	uint32_t stack;
	bool leak;
	uint8_t leak_kind;		/* enum msc_leak_kind of a leak */
	/* a site --transient trims as it goes out: what it takes out */
	uint64_t trimmed, trimmed_bytes;
};

struct stream {
	int pid;
	bool started, ended;		/* saw its header, its end */
	struct msc_span span;		/* --since, --until, as its records say */
	struct msc_filtered dropped[C_KINDS];
	struct buffered *top;		/* --top: site and leak records */
	size_t ntop, top_cap;
};

struct held {
	char *line;
	size_t len;
	uint64_t ts;
	uint32_t stack;
	bool dropped;
	bool is_alloc;
	uint64_t key;
	int pid;
};

/* ------------------------------------- filter_match.c, for filter.c */

/* A stream begins: the range's ends that are times are known already. */
void filter_range_start(const struct msc_filter_opts *o, struct stream *s);
/* A mark record of s's stream: the range's ends it names. */
void filter_range_mark(struct stream *s, const struct msc_rec *rec);
/* Is a leak (kind C_LEAK), allocation (C_ALLOC) or free (C_FREE) record
 * of blocks allocated in the range?  1 or 0, or -EINVAL with err set (a
 * leak before its marks, or straddling a time). */
int filter_in_range(const struct stream *s, const struct msc_rec *rec, int kind, struct msc_err *err);

static inline bool glob_or_equal(const char *pattern, const char *s)
{
	return s && fnmatch(pattern, s, 0) == 0;
}

/* ------------------------------------------------- filter.c, for the others */

/* The stream of process pid, made at its first record; NULL when out of
 * memory. */
struct stream *filter_stream_of(struct filter *f, int pid);
/*
 * Writes stack id, unless it went out already, after what it refers to
 * (see filter.c); a failure goes to f->failed.
 */
void filter_write_stack(struct filter *f, uint64_t id);
/* Begins a record with rec's members but those in skip, open for more. */
void filter_copy_members(struct msc_writer *w, const struct msc_rec *rec, const char *const *skip,
			 unsigned nskip);

/* A record that goes out as it came, after its stack. */
static inline void emit(struct filter *f, const char *line, size_t len, uint32_t stack)
{
	filter_write_stack(f, stack);
	msc_w_line(f->w, line, len);
}

/* ---------------------------------------------- filter_hold.c, for filter.c */

/* Lets go of the events held for --transient that can no longer turn out
 * transient (all of them when all is set), in order. */
void filter_release_held(struct filter *f, bool all);
/* Holds an event back for --transient (an allocation: under key); -ENOMEM. */
int filter_hold(struct filter *f, const struct msc_rec *rec, uint64_t ts, uint32_t stack,
		bool is_alloc, uint64_t key, int pid);
/* A site record without its transient blocks (see filter_hold.c): 1 when
 * it goes entirely, 0 when it stays. */
int filter_site_transient(struct filter *f, struct msc_filtered *trim, const struct msc_rec *rec,
			  uint32_t stack, bool write, uint64_t *kept);
/* --top: the largest sites and leaks of stream s go out, the others are
 * counted as dropped. */
void filter_flush_top(struct filter *f, struct stream *s);
/* A leak record's kind; unscanned when it says none. */
unsigned filter_leak_kind_of(const struct msc_rec *rec);
/* Holds a site or leak back for --top; bytes: what it weighs.  -ENOMEM. */
int filter_buffer_top(struct filter *f, int pid, const struct msc_rec *rec, uint32_t stack, bool leak,
		      uint64_t bytes, const struct msc_filtered *trim);

#endif
