/* SPDX-License-Identifier: MIT */
/*
 * msc_format: the record vocabulary of memscope-format(5), in one place.
 *
 *   - the record types: one table of names, an enum every reader switches
 *     on and every writer begins records with;
 *   - "frame" and "stack" records read back into frames (struct
 *     msc_stackdefs: version 1 stacks list their frames, version 2 stacks
 *     refer to frame records and to a parent stack by id), the frame an
 *     allocation is attributed to, and the one label a frame has in every
 *     output;
 *   - the names every writer of records uses (ms-record's are in
 *     record/msc_records.h) and every reader takes back.
 *
 * msc_ndjson knows JSON, this module knows records.  pid < 0 omits the
 * "pid" member (single-process event streams).
 */
#ifndef MSC_FORMAT_H
#define MSC_FORMAT_H

#include <stdint.h>

#include "msc_arena.h"
#include "msc_hash.h"
#include "msc_ndjson.h"

/* ------------------------------------------------------------ types */

/* Every record type a memscope tool writes (memscope-format(5)). */
enum msc_rtype {
	MSC_R_OTHER,		/* a type this version does not know */
	MSC_R_HEADER, MSC_R_END, MSC_R_STACK, MSC_R_FRAME,
	MSC_R_SITE, MSC_R_LEAK, MSC_R_SAMPLE, MSC_R_ERROR,	/* ms-record */
	MSC_R_ALLOC, MSC_R_FREE, MSC_R_UNFREE, MSC_R_MMAP,	/* --events */
	MSC_R_MUNMAP, MSC_R_MREMAP, MSC_R_BRK, MSC_R_THREAD,
	MSC_R_PROCESS, MSC_R_MAPPING, MSC_R_LIVE, MSC_R_MEMINFO,	/* ms-snap */
	MSC_R_DELTA,						/* ms-diff */
	MSC_R_POOL, MSC_R_HIDDEN,				/* --events */
	MSC_R_TIMELINE, MSC_R_SERIES, MSC_R_MARK,		/* ms-record */
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

/* A frame of a stack, its strings in an arena. */
struct msc_rframe {
	const char *fn, *file, *obj, *offset;
	const char *ip;			/* hex, as the program saw it */
	const char *fn_offset;		/* hex, frames without a line */
	const char *build_id;		/* hex, of obj, when it has one */
	unsigned line;
	bool inlined;
	/* The frame as a version 1 frame object ("{...}", not terminated):
	 * always for frames of "frame" records, for frames written inside
	 * stack records when the table keeps them (keep_json, keep_lines). */
	const char *json;
	uint32_t json_len;
};

/*
 * Is fn a function whose allocations are its caller's: the allocator's own
 * entry points and plumbing (operator new, std::allocator), functions that
 * return memory the caller owns (strdup, asprintf, g_malloc, ...), or one of
 * extra (names or globs: ms-filter and ms-report --alloc-fn)?
 */
bool msc_is_passthrough(const char *fn, const char *const *extra, unsigned nextra);

/* The frame an allocation is attributed to: the first past the allocator
 * and pass-through wrappers (msc_is_passthrough with extra); 0 for n 0. */
unsigned msc_stack_attr(const struct msc_rframe *frames, unsigned n, const char *const *extra,
			unsigned nextra);

/*
 * The frames and stacks a stream has defined so far.  memscope-format(5)
 * version 1 writes a stack's frames inside its record; version 2 writes
 * each frame once, as a "frame" record with an id, and a stack record lists
 * frame ids, then, with "parent", the frames of an earlier stack:
 *
 *	{"type":"frame","id":12,"fn":"grow","file":"/src/v.c","line":9,...}
 *	{"type":"stack","id":7,"parent":3,"frames":[12,13]}
 *
 * is frames 12 and 13 followed by stack 3's frames.  Both forms (and
 * arrays that mix them) are read.  A reference is to the latest record with
 * that id before it: a stream that joins the records of several recordings
 * (ms-snap) reuses ids.  A reference to a frame or stack not defined yet, a
 * parent whose parents lead back to the stack itself, or a stack of more
 * than MSC_STACK_MAX_FRAMES frames (or parents) is bad input.
 *
 * Definitions are captured when they are read: a stack keeps the frames
 * and parent it referred to even when their ids are defined again later.
 * Everything lives in the table's arena until msc_stackdefs_release().
 */
#define MSC_STACK_MAX_FRAMES 16384

struct msc_framedef {
	uint32_t id;
	struct msc_rframe f;
	const char *line;		/* the record (keep_lines), else NULL */
	uint32_t len;
	void *user;			/* the caller's */
};

/* One element of a stack record's "frames": a frame record, or a frame
 * object written in place: its JSON, in the line or a copy kept, NULL
 * after msc_stack_frames() when neither is kept. */
struct msc_frameref {
	const struct msc_framedef *def;
	const char *json;
	uint32_t len;
};

struct msc_stackdef {
	uint32_t id;
	uint32_t parent_id;		/* 0: none */
	struct msc_stackdef *parent;
	unsigned depth;			/* stacks in its parent chain, itself included */
	unsigned nown;			/* elements of its own "frames" */
	struct msc_frameref *own;
	unsigned n;			/* frames in all, its parents' included */
	struct msc_rframe *frames;	/* n frames once resolved, else NULL */
	const char *line;		/* the record (keep_lines), else NULL */
	uint32_t len;
	void *user;			/* the caller's */
};

struct msc_stackdefs {
	struct msc_arena arena;
	struct msc_u64map frames;	/* id -> struct msc_framedef * */
	struct msc_u64map stacks;	/* id -> struct msc_stackdef * */
	bool keep_json;			/* frames written in place keep their JSON */
	bool keep_lines;		/* definitions keep their records' lines */
};

/* Returns 0 or -ENOMEM. */
int msc_stackdefs_init(struct msc_stackdefs *d);
void msc_stackdefs_release(struct msc_stackdefs *d);
/* Forgets every definition and keeps the memory: a reader that reads one
 * stream after another (ms-top) allocates nothing once warm. */
void msc_stackdefs_reset(struct msc_stackdefs *d);

/* Reads a "frame" record.  Returns 0, -EINVAL with err set ("FILE:LINE:
 * ...") or -ENOMEM; *out (if not NULL) gets the definition. */
int msc_stackdefs_frame(struct msc_stackdefs *d, const struct msc_rec *rec,
			struct msc_framedef **out, struct msc_err *err);

/*
 * Reads a "stack" record (any form) and checks its references; its frames
 * are read later, by msc_stackdef_frames(), if at all.  Returns 0, -EINVAL
 * with err set, or -ENOMEM; *out gets the definition.
 */
int msc_stackdefs_stack(struct msc_stackdefs *d, const struct msc_rec *rec,
			struct msc_stackdef **out, struct msc_err *err);

/* The latest definition of stack id, or NULL. */
struct msc_stackdef *msc_stackdefs_get(const struct msc_stackdefs *d, uint64_t id);

/*
 * Reads a stack's frames into s->frames (s->n of them, innermost first,
 * its parents' included) on first use; they stay (owned by the table).
 * Returns 0 or -ENOMEM (err set).
 */
int msc_stackdef_frames(struct msc_stackdefs *d, struct msc_stackdef *s, struct msc_err *err);

/* Reads the frames of s's own "frames" (not its parents') into
 * fr[0..s->nown). */
void msc_stackdef_read_own(struct msc_stackdefs *d, const struct msc_stackdef *s,
			   struct msc_rframe *fr);

/*
 * The same for every stack of defs[0..n) (reordered: the deepest first, so
 * that stacks of one chain share one array).  A reader that keeps its
 * stacks unread until the stream is read and reads only those its records
 * name stays linear in its input.  Returns 0 or -ENOMEM (err set).
 */
int msc_stackdefs_resolve(struct msc_stackdefs *d, struct msc_stackdef **defs, size_t n,
			  struct msc_err *err);

/*
 * Reads a stack record (any form) into the table and its frames at once:
 * *frames (owned by the table) and *n, and *attr, the frame an allocation
 * is attributed to (msc_stack_attr with extra).  Returns 0, -EINVAL with
 * err set ("FILE:LINE: ..."), or -ENOMEM.
 */
int msc_stack_frames(struct msc_stackdefs *d, const struct msc_rec *rec, const char *const *extra,
		     unsigned nextra, struct msc_rframe **frames, unsigned *n, unsigned *attr,
		     struct msc_err *err);

/*
 * Writes a resolved stack as version 1 writes it: {"type":"stack","id":ID,
 * "frames":[{...},...]}, every frame in place, from the frames' JSON
 * (frame records always keep it, frames written in place with keep_json),
 * followed by the record's other members when its line was kept.  Returns
 * 0, or -EINVAL when a frame has no JSON (nothing is written then).
 */
int msc_write_stack_v1(struct msc_writer *w, const struct msc_stackdef *s);

/*
 * A frame's label, the same in every output: "fn file.c:12" with line
 * information, "fn+0x1a (libfoo.so.1)" or "fn (libfoo.so.1)" without,
 * "libfoo.so.1+0x4f0" when not even the function is known, "?" for NULL.
 * Paths are shortened to their last component.  Returns buf.
 */
char *msc_frame_label(char *buf, size_t n, const struct msc_rframe *f);
/*
 * The wrappers a recording was told about (ms-record --alloc-fn: the
 * header's options.alloc_fns) after those in *fns: a new array from a into
 * *fns and *n, or both untouched when the header names none.  0, -ENOMEM.
 */
int msc_header_alloc_fns(const struct msc_rec *header, struct msc_arena *a,
			 const char *const **fns, unsigned *n);
/* Whether a record's "fn" names a mapping ("mmap", "mremap"): the malloc
 * family's totals (allocs, frees, bytes) leave those out. */
bool msc_is_mapping_fn(const char *fn);
/* The last component of a path ("libc.so.6"); NULL gives NULL. */
const char *msc_base_name(const char *path);

/*
 * Where a mark record bounds a range (--since, --until): at its ts; but
 * ms-record's own marks (by "ms-record") bound the whole run, "start" and
 * "attach" as a since at 0, "end" and "exec" as an until at UINT64_MAX.
 */
uint64_t msc_mark_bound(const char *name, const char *by, uint64_t ts, bool since);

/*
 * A range of a stream (--since, --until), as a reader that reads it in
 * order resolves it: each bound given (a name), a mark's instant once its
 * mark record came (msc_span_mark: the first of that name), or a time
 * with its unit ("30s"), known from the start (msc_span_init).
 */
struct msc_span {
	const char *since, *until;	/* NULL: no bound */
	bool since_time, until_time;	/* a time, not a mark */
	bool since_known, until_known;	/* their instants are known */
	uint64_t since_ts, until_ts;
};
void msc_span_init(struct msc_span *s, const char *since, const char *until);
/* A mark record (or what one says: name, by, ts) of the stream. */
void msc_span_mark(struct msc_span *s, const struct msc_rec *rec);
void msc_span_mark_of(struct msc_span *s, const char *name, const char *by, uint64_t ts);
/*
 * Is a leak record of blocks allocated in the range?  Its blocks came
 * after its mark (at: after_ts, 0 before the first) and before the next,
 * from first_ts to last_ts: a mark bound takes whole records, a time bound
 * those whose blocks are all on its side.  1 or 0; -1 (-2) when its blocks
 * straddle the since (until) time.  The bounds must be known.
 */
int msc_span_leak(const struct msc_span *s, uint64_t at, uint64_t first_ts, uint64_t last_ts);
/* The same for a leak record as read: 1 or 0, or code with err set when
 * a bound's mark has not come yet or its blocks straddle a time. */
int msc_span_leak_rec(const struct msc_span *s, const struct msc_rec *rec, int code, struct msc_err *err);

/* Frames below main and thread starts (the C runtime's own: _start,
 * __libc_start_main, start_thread, clone...). */
bool msc_runtime_fn(const char *fn);

/*
 * A program's own allocation wrappers (wrappers.c): a frame where the
 * stacks of three callers or more are attributed, never seen calling
 * anything else that allocates, passes the allocation on to its callers;
 * up to three levels of them.  Each stack's attr (its attributed frame,
 * msc_stack_attr's) moves up past those found; said(ctx, frame) is called
 * once for each wrapper.  0 or -ENOMEM.
 */
struct msc_wstack {
	const struct msc_rframe *frames;
	unsigned n, attr;
};
/* Its working memory, kept from one call to the next by a caller that
 * calls it again and again (ms-top): zero it once, release it at the end;
 * NULL: a call's own. */
struct msc_wscratch {
	struct msc_arena arena;
	struct msc_strmap seen;
	bool ready;
};
int msc_find_wrappers(struct msc_wstack *list, size_t n, void (*said)(void *ctx, const struct msc_rframe *f),
		      void *ctx, struct msc_wscratch *scratch);
void msc_wscratch_release(struct msc_wscratch *s);

#endif
