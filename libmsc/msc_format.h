/* SPDX-License-Identifier: MIT */
/*
 * msc_format: the record vocabulary of memscope-format(5), in one place.
 *
 *   - the record types: one table of names, an enum every reader switches
 *     on and every writer begins records with;
 *   - stack records read back into frames, the frame an allocation is
 *     attributed to, and the one label a frame has in every output;
 *   - writing what the collector and msc_agg know as records: "site",
 *     "leak", "sample", the event records of --events, and the totals of
 *     "end".  ms-record writes them all through these functions;
 *     ms-report's reader (report.c) takes the same names back.
 *
 * msc_ndjson knows JSON, this module knows records.  pid < 0 omits the
 * "pid" member (single-process event streams).
 */
#ifndef MSC_FORMAT_H
#define MSC_FORMAT_H

#include <stdint.h>

#include "msc_agg.h"
#include "msc_arena.h"
#include "msc_collect.h"
#include "msc_ndjson.h"

/* ------------------------------------------------------------ types */

/* Every record type a memscope tool writes (memscope-format(5)). */
enum msc_rtype {
	MSC_R_OTHER,		/* a type this version does not know */
	MSC_R_HEADER, MSC_R_END, MSC_R_STACK,
	MSC_R_SITE, MSC_R_LEAK, MSC_R_SAMPLE,			/* ms-record */
	MSC_R_ALLOC, MSC_R_FREE, MSC_R_UNFREE, MSC_R_MMAP,	/* --events */
	MSC_R_MUNMAP, MSC_R_MREMAP, MSC_R_BRK, MSC_R_THREAD,
	MSC_R_PROCESS, MSC_R_MAPPING, MSC_R_LIVE, MSC_R_MEMINFO,	/* ms-snap */
	MSC_R_DELTA,						/* ms-diff */
	MSC_R_NTYPES
};

/* The type's name ("site"); "" for MSC_R_OTHER. */
const char *msc_rtype_name(enum msc_rtype t);
/* The type of a name; MSC_R_OTHER for names this version does not know
 * (readers ignore those records, ms-filter passes them on). */
enum msc_rtype msc_rtype_of(const char *name);

static inline enum msc_rtype msc_rec_rtype(const struct msc_rec *rec)
{
	return msc_rtype_of(rec->type);
}

/* Begins a record of type t: {"type":"<name>" */
static inline void msc_w_record(struct msc_writer *w, enum msc_rtype t)
{
	msc_w_begin(w, msc_rtype_name(t));
}

/* ------------------------------------------------------------ stacks */

/* A frame of a stack record, its strings in an arena. */
struct msc_rframe {
	const char *fn, *file, *obj, *offset;
	const char *fn_offset;		/* hex, frames without a line */
	unsigned line;
	bool inlined;
};

/*
 * Is fn a function whose allocations are its caller's: the allocator's own
 * entry points and plumbing (operator new, std::allocator), functions that
 * return memory the caller owns (strdup, asprintf, g_malloc, ...), or one of
 * extra (names or globs: ms-filter and ms-report --alloc-fn)?
 */
bool msc_is_passthrough(const char *fn, const char *const *extra, unsigned nextra);

/*
 * Reads a stack record's "frames" (objects; anything else is bad input)
 * into an array in the arena; *attr gets the frame an allocation is
 * attributed to: the first past the allocator and pass-through wrappers
 * (msc_is_passthrough, with extra allocation functions).  Returns 0,
 * -EINVAL with err set, or -ENOMEM.
 */
int msc_stack_frames(const struct msc_rec *rec, struct msc_arena *a, const char *const *extra,
		     unsigned nextra, struct msc_rframe **frames, unsigned *n, unsigned *attr,
		     struct msc_err *err);

/*
 * A frame's label, the same in every output: "fn file.c:12" with line
 * information, "fn+0x1a (libfoo.so.1)" or "fn (libfoo.so.1)" without,
 * "libfoo.so.1+0x4f0" when not even the function is known, "?" for NULL.
 * Paths are shortened to their last component.  Returns buf.
 */
char *msc_frame_label(char *buf, size_t n, const struct msc_rframe *f);
/* The last component of a path ("libc.so.6"); NULL gives NULL. */
const char *msc_base_name(const char *path);

/* ------------------------------------------------------------ writing */

void msc_write_site(struct msc_writer *w, const struct msc_agg *a, const struct msc_site *s,
		    int pid);
void msc_write_leak(struct msc_writer *w, const struct msc_agg *a, const struct msc_leak *l,
		    int pid);
/* The --events record of an event ("alloc", "free", "unfree", "mmap",
 * "munmap", "mremap", "brk", "thread"); fr: what msc_agg_free found of a
 * freed block, NULL when it was unknown.  Other types write nothing.  The
 * caller writes the event's stack record first. */
void msc_write_event(struct msc_writer *w, const struct msc_cevent *ev, int pid,
		     const struct msc_freed *fr);
/* A "sample": the rss the collector read and the heap as a stands. */
void msc_write_sample(struct msc_writer *w, const struct msc_agg *a, int pid, uint64_t ts,
		      uint64_t rss);
/* The totals members of an "end" record (the caller opened it).  leaks
 * false leaves out the leak totals (an image replaced by exec leaks nothing). */
void msc_write_totals(struct msc_writer *w, const struct msc_agg *a, bool leaks);

#endif
