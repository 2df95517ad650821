/* SPDX-License-Identifier: MIT */
/* The record vocabulary: see msc_format.h. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "msc_proto.h"
#include "msc_format.h"
#include "msc_util.h"

/* ---------------------------------------------------------------- types */

static const char *const rtype_names[MSC_R_NTYPES] = {
	[MSC_R_OTHER] = "",	      [MSC_R_HEADER] = "header",   [MSC_R_END] = "end",
	[MSC_R_STACK] = "stack",      [MSC_R_SITE] = "site",	   [MSC_R_LEAK] = "leak",
	[MSC_R_SAMPLE] = "sample",    [MSC_R_ALLOC] = "alloc",	   [MSC_R_FREE] = "free",
	[MSC_R_UNFREE] = "unfree",    [MSC_R_MMAP] = "mmap",	   [MSC_R_MUNMAP] = "munmap",
	[MSC_R_MREMAP] = "mremap",    [MSC_R_BRK] = "brk",	   [MSC_R_THREAD] = "thread",
	[MSC_R_PROCESS] = "process",  [MSC_R_MAPPING] = "mapping", [MSC_R_LIVE] = "live",
	[MSC_R_MEMINFO] = "meminfo",  [MSC_R_DELTA] = "delta",
};

const char *msc_rtype_name(enum msc_rtype t)
{
	return (unsigned)t < MSC_R_NTYPES ? rtype_names[t] : "";
}

/* Once per record, and events are most of a stream: the first letter
 * picks the few names to compare. */
enum msc_rtype msc_rtype_of(const char *name)
{
	unsigned t;

	if (!name || !name[0])
		return MSC_R_OTHER;
	for (t = 1; t < MSC_R_NTYPES; t++)
		if (rtype_names[t][0] == name[0] && strcmp(rtype_names[t], name) == 0)
			return (enum msc_rtype)t;
	return MSC_R_OTHER;
}

/* --------------------------------------------------------------- stacks */

/*
 * Functions that return memory their caller owns: an allocation inside them
 * is their caller's.  Compared without leading underscores (__strdup).
 */
static const char *const passthrough[] = {
	"strdup", "strndup", "wcsdup", "asprintf", "vasprintf", "vasprintf_internal",
	"IO_vasprintf", "getline", "getdelim", "realpath", "realpath_stk", "realpath_chk",
	"canonicalize_file_name", "get_current_dir_name", "getcwd", "tempnam",
	"open_memstream", "open_wmemstream", "scandir", "scandir64", "scandirat",
	"backtrace_symbols", "xmalloc", "xcalloc", "xrealloc", "xstrdup", "g_malloc",
	"g_malloc0", "g_realloc", "g_strdup", "g_new", "g_new0",
};

static const char *skip_underscores(const char *s)
{
	while (*s == '_')
		s++;
	return s;
}

bool msc_is_passthrough(const char *fn, const char *const *extra, unsigned nextra)
{
	const char *bare;
	size_t i;

	if (!fn)
		return false;
	/* Allocator plumbing of C++ containers, often inlined into callers. */
	if (strncmp(fn, "std::allocator", 14) == 0 || strncmp(fn, "__gnu_cxx::new_allocator", 24) == 0 ||
	    strncmp(fn, "std::__new_allocator", 20) == 0 ||
	    strncmp(fn, "std::allocator_traits", 21) == 0 || strncmp(fn, "operator new", 12) == 0)
		return true;
	bare = skip_underscores(fn);
	for (i = 0; i < ARRAY_SIZE(passthrough); i++)
		if (strcmp(bare, passthrough[i]) == 0)
			return true;
	for (i = 0; i < nextra; i++)
		if (strcmp(fn, extra[i]) == 0 || strcmp(bare, skip_underscores(extra[i])) == 0 ||
		    fnmatch(extra[i], fn, 0) == 0)
			return true;
	return false;
}

int msc_stack_frames(const struct msc_rec *rec, struct msc_arena *a, const char *const *extra,
		     unsigned nextra, struct msc_rframe **frames, unsigned *n, unsigned *attr,
		     struct msc_err *err)
{
	const struct msc_field *field = msc_rec_field(rec, "frames");
	struct msc_rframe *fr = NULL;
	struct msc_jiter it;
	struct msc_jval v;
	unsigned cap = 0, k = 0, at = 0;

	if (!field || field->val.kind != MSC_J_ARR)
		return msc_rec_err(err, rec, -EINVAL, "stack record needs a \"frames\" array");
	msc_jiter_init(&it, &field->val);
	while (msc_jiter_next(&it, NULL, &v) > 0) {
		struct msc_jval x;
		uint64_t line = 0;

		if (v.kind != MSC_J_OBJ)
			return msc_rec_err(err, rec, -EINVAL, "stack frames must be objects");
		if (k == cap) {
			unsigned ncap = cap ? cap * 2 : 16;
			struct msc_rframe *nf = msc_arena_alloc(a, ncap * sizeof(*nf));

			if (!nf)
				return -ENOMEM;
			if (k)
				memcpy(nf, fr, k * sizeof(*nf));
			fr = nf;
			cap = ncap;
		}
		fr[k].fn = msc_jval_member_str(&v, "fn", a);
		fr[k].file = msc_jval_member_str(&v, "file", a);
		fr[k].obj = msc_jval_member_str(&v, "obj", a);
		fr[k].offset = msc_jval_member_str(&v, "offset", a);
		fr[k].fn_offset = msc_jval_member_str(&v, "fn_offset", a);
		fr[k].line = msc_jval_member(&v, "line", &x) > 0 && !msc_jval_u64(&x, &line) ? (unsigned)line : 0;
		fr[k].inlined = msc_jval_member(&v, "inline", &x) > 0 && x.kind == MSC_J_TRUE;
		k++;
	}
	while (at + 1 < k && msc_is_passthrough(fr[at].fn, extra, nextra))
		at++;
	*frames = fr;
	*n = k;
	*attr = at;
	return 0;
}

const char *msc_base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

char *msc_frame_label(char *buf, size_t n, const struct msc_rframe *f)
{
	const char *obj = f && f->obj ? msc_base_name(f->obj) : "?";

	if (!f)
		snprintf(buf, n, "?");
	else if (f->fn && f->file && f->line)
		snprintf(buf, n, "%s %s:%u", f->fn, msc_base_name(f->file), f->line);
	else if (f->fn && f->fn_offset)
		snprintf(buf, n, "%s+%s (%s)", f->fn, f->fn_offset, obj);
	else if (f->fn)
		snprintf(buf, n, "%s (%s)", f->fn, obj);
	else
		snprintf(buf, n, "%s+%s", obj, f->offset ? f->offset : "?");
	return buf;
}

/* -------------------------------------------------------------- writing */

/* Begins a site or leak record with what identifies its site. */
static void begin_site_record(struct msc_writer *w, enum msc_rtype type, const struct msc_site *s,
			      int pid)
{
	msc_w_record(w, type);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "stack", s->stack);
	msc_w_u64(w, "size", s->size);
	if (s->classed)
		msc_w_u64(w, "size_max", s->size_max);
	msc_w_str(w, "fn", msc_fn_name(s->fn));
}

void msc_write_site(struct msc_writer *w, const struct msc_agg *a, const struct msc_site *s,
		    int pid)
{
	unsigned b;

	begin_site_record(w, MSC_R_SITE, s, pid);
	msc_w_u64(w, "allocs", s->allocs);
	msc_w_u64(w, "frees", s->frees);
	msc_w_u64(w, "bytes", s->bytes);
	msc_w_u64(w, "live", msc_site_live(s));
	msc_w_u64(w, "live_bytes", s->live_bytes);
	if (!s->peak_inexact)
		msc_w_u64(w, "peak_live_bytes", s->peak_live_bytes);
	msc_w_u64(w, "at_peak", msc_agg_peak_contribution(a, s));
	msc_w_u64(w, "temporary", s->temporary);
	msc_w_arr(w, "ages");
	for (b = 0; b < MSC_AGE_BUCKETS; b++)
		msc_w_u64(w, NULL, s->ages[b]);
	msc_w_arr_end(w);
	msc_w_u64(w, "first_ts", s->first_ts);
	msc_w_u64(w, "last_ts", s->last_ts);
	msc_w_end(w);
}

void msc_write_leak(struct msc_writer *w, const struct msc_agg *a, const struct msc_leak *l,
		    int pid)
{
	const struct msc_site *s = &a->sites[l->site];

	begin_site_record(w, MSC_R_LEAK, s, pid);
	msc_w_str(w, "kind", msc_leak_kind_name(l->kind));
	msc_w_u64(w, "count", l->count);
	msc_w_u64(w, "bytes", l->bytes);
	msc_w_u64(w, "first_ts", l->first_ts);
	msc_w_u64(w, "last_ts", l->last_ts);
	msc_w_end(w);
}

void msc_write_event(struct msc_writer *w, const struct msc_cevent *ev, int pid,
		     const struct msc_freed *fr)
{
	static const enum msc_rtype types[] = {
		[MSC_CEV_ALLOC] = MSC_R_ALLOC,	 [MSC_CEV_FREE] = MSC_R_FREE,
		[MSC_CEV_UNFREE] = MSC_R_UNFREE, [MSC_CEV_MMAP] = MSC_R_MMAP,
		[MSC_CEV_MUNMAP] = MSC_R_MUNMAP, [MSC_CEV_MREMAP] = MSC_R_MREMAP,
		[MSC_CEV_BRK] = MSC_R_BRK,	 [MSC_CEV_THREAD] = MSC_R_THREAD,
	};

	if (ev->type >= ARRAY_SIZE(types) || types[ev->type] == MSC_R_OTHER)
		return;
	msc_w_record(w, types[ev->type]);
	if (pid >= 0)
		msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", ev->ts);
	msc_w_u64(w, "tid", ev->tid);
	switch (ev->type) {
	case MSC_CEV_ALLOC:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_FREE:
		msc_w_hex(w, "ptr", ev->v[0]);
		msc_w_str(w, "fn", msc_fn_name(ev->fn));
		if (fr) {
			msc_w_u64(w, "size", fr->size);
			msc_w_u64(w, "stack", fr->stack);
			msc_w_u64(w, "alloc_ts", fr->alloc_ts);
		}
		break;
	case MSC_CEV_UNFREE:
		msc_w_hex(w, "ptr", ev->v[0]);
		break;
	case MSC_CEV_MMAP:
		msc_w_hex(w, "addr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_MUNMAP:
		msc_w_hex(w, "addr", ev->v[0]);
		msc_w_u64(w, "size", ev->v[1]);
		break;
	case MSC_CEV_MREMAP:
		msc_w_hex(w, "old", ev->v[0]);
		msc_w_u64(w, "old_size", ev->v[1]);
		msc_w_hex(w, "addr", ev->v[2]);
		msc_w_u64(w, "size", ev->v[3]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	case MSC_CEV_BRK:
		msc_w_hex(w, "old", ev->v[0]);
		msc_w_hex(w, "new", ev->v[1]);
		msc_w_u64(w, "stack", ev->stack);
		break;
	default:
		break;
	}
	msc_w_end(w);
}

void msc_write_sample(struct msc_writer *w, const struct msc_agg *a, int pid, uint64_t ts,
		      uint64_t rss)
{
	msc_w_record(w, MSC_R_SAMPLE);
	msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", ts);
	msc_w_u64(w, "rss", rss);
	msc_w_u64(w, "heap", a->live_bytes);
	msc_w_u64(w, "allocs", a->allocs);
	msc_w_u64(w, "bytes", a->bytes);
	msc_w_end(w);
}

void msc_write_totals(struct msc_writer *w, const struct msc_agg *a, bool leaks)
{
	/* Every figure of ms-report's summary, in the order it lists them. */
	static const unsigned kinds[] = { MSC_LEAK_DEFINITELY, MSC_LEAK_INDIRECTLY, MSC_LEAK_POSSIBLY,
					  MSC_LEAK_REACHABLE, MSC_LEAK_UNSCANNED, MSC_LEAK_UNKNOWN };
	uint64_t leaked, blocks, kind_bytes[MSC_LEAK_KINDS], kind_blocks[MSC_LEAK_KINDS];
	char key[32];
	bool scanned;
	unsigned k;

	msc_agg_leak_totals(a, &leaked, &blocks, NULL, NULL, &scanned);
	msc_agg_kind_totals(a, kind_bytes, kind_blocks);
	msc_w_u64(w, "allocs", a->allocs);
	msc_w_u64(w, "frees", a->frees);
	msc_w_u64(w, "bytes", a->bytes);
	msc_w_u64(w, "peak", a->peak_live_bytes);
	msc_w_u64(w, "peak_ts", a->peak_ts);
	msc_w_u64(w, "live", a->live_blocks);
	msc_w_u64(w, "live_bytes", a->live_bytes);
	if (leaks) {
		msc_w_u64(w, "leaked_bytes", leaked);
		msc_w_u64(w, "leaked_blocks", blocks);
		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			snprintf(key, sizeof(key), "%s_bytes", msc_leak_kind_name(kinds[k]));
			msc_w_u64(w, key, kind_bytes[kinds[k]]);
			snprintf(key, sizeof(key), "%s_blocks", msc_leak_kind_name(kinds[k]));
			msc_w_u64(w, key, kind_blocks[kinds[k]]);
		}
		msc_w_bool(w, "scanned", scanned);
	}
	msc_w_u64(w, "temporary", a->temporary);
	msc_w_u64(w, "mmaps", a->mmaps);
	msc_w_u64(w, "mmap_bytes", a->mmap_bytes);
	msc_w_u64(w, "unknown_frees", a->unknown_frees);
	if (a->implicit_frees)
		msc_w_u64(w, "implicit_frees", a->implicit_frees);
	if (a->dropped)
		msc_w_u64(w, "dropped", a->dropped);
}
