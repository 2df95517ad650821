/* SPDX-License-Identifier: MIT */
/* The record vocabulary: see msc_format.h. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_proto.h"
#include "msc_format.h"
#include "msc_util.h"

/* ---------------------------------------------------------------- types */

static const char *const rtype_names[MSC_R_NTYPES] = {
	[MSC_R_OTHER] = "",	      [MSC_R_HEADER] = "header",   [MSC_R_END] = "end",
	[MSC_R_STACK] = "stack",      [MSC_R_FRAME] = "frame",	   [MSC_R_SITE] = "site",
	[MSC_R_LEAK] = "leak",	      [MSC_R_SAMPLE] = "sample",   [MSC_R_ALLOC] = "alloc",
	[MSC_R_FREE] = "free",
	[MSC_R_UNFREE] = "unfree",    [MSC_R_MMAP] = "mmap",	   [MSC_R_MUNMAP] = "munmap",
	[MSC_R_MREMAP] = "mremap",    [MSC_R_BRK] = "brk",	   [MSC_R_THREAD] = "thread",
	[MSC_R_PROCESS] = "process",  [MSC_R_MAPPING] = "mapping", [MSC_R_LIVE] = "live",
	[MSC_R_MEMINFO] = "meminfo",  [MSC_R_DELTA] = "delta",	   [MSC_R_ERROR] = "error",
	[MSC_R_POOL] = "pool",	      [MSC_R_HIDDEN] = "hidden",   [MSC_R_TIMELINE] = "timeline",
	[MSC_R_SERIES] = "series",     [MSC_R_MARK] = "mark",
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

int msc_header_alloc_fns(const struct msc_rec *header, struct msc_arena *a,
			 const char *const **fns, unsigned *n)
{
	const struct msc_field *opts = msc_rec_field(header, "options");
	struct msc_jval arr, x;
	struct msc_jiter it;
	const char **all;
	unsigned k = *n, more = 0;

	if (!opts || opts->val.kind != MSC_J_OBJ || msc_jval_member(&opts->val, "alloc_fns", &arr) <= 0 ||
	    arr.kind != MSC_J_ARR)
		return 0;
	msc_jiter_init(&it, &arr);
	while (msc_jiter_next(&it, NULL, &x) > 0)
		more++;
	all = msc_arena_alloc(a, (*n + more + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	if (*n)
		memcpy(all, *fns, *n * sizeof(*all));
	msc_jiter_init(&it, &arr);
	while (msc_jiter_next(&it, NULL, &x) > 0)
		if ((all[k] = msc_jval_str(&x, a, NULL)))
			k++;
	*fns = all;
	*n = k;
	return 0;
}

bool msc_is_mapping_fn(const char *fn)
{
	return fn && (!strcmp(fn, "mmap") || !strcmp(fn, "mremap") || !strcmp(fn, "brk"));
}

/* --------------------------------------------------------------- stacks */

/*
 * Functions that return memory their caller owns: an allocation inside them
 * is their caller's.  The C library's, then the wrappers of programs and
 * libraries people profile (xmalloc-style, glib, perl, sqlite, Python,
 * jq, jansson, gawk, GCC).  Compared without leading underscores
 * (__strdup) and without a C++ name's parameters.
 */
static const char *const passthrough[] = {
	"strdup", "strndup", "wcsdup", "asprintf", "vasprintf", "vasprintf_internal",
	"IO_vasprintf", "getline", "getdelim", "realpath", "realpath_stk", "realpath_chk",
	"canonicalize_file_name", "get_current_dir_name", "getcwd", "tempnam",
	"open_memstream", "open_wmemstream", "scandir", "scandir64", "scandirat",
	"backtrace_symbols",
	"xmalloc", "xcalloc", "xrealloc", "xstrdup", "xstrndup", "xmemdup", "xmemdupz", "xzalloc",
	"xnmalloc", "xnrealloc", "x2nrealloc", "x2realloc", "xcharalloc", "xreallocarray",
	"ximalloc", "xicalloc", "xizalloc", "xirealloc", "do_xmalloc", "emalloc", "ecalloc",
	"erealloc", "estrdup", "emalloc_real", "ezalloc_real", "erealloc_real",
	"g_malloc", "g_malloc0", "g_realloc", "g_try_malloc", "g_try_malloc0", "g_try_realloc",
	"g_malloc_n", "g_malloc0_n", "g_realloc_n", "g_try_malloc_n", "g_try_malloc0_n",
	"g_try_realloc_n", "g_strdup", "g_strndup", "g_memdup", "g_memdup2", "g_strdup_printf",
	"g_strdup_vprintf", "g_strconcat", "g_slice_alloc", "g_slice_alloc0", "g_slice_copy",
	"g_new", "g_new0",
	"Perl_safesysmalloc", "Perl_safesyscalloc", "Perl_safesysrealloc", "Perl_savepv",
	"Perl_savepvn", "Perl_savesharedpv",
	"sqlite3_malloc", "sqlite3_malloc64", "sqlite3_realloc", "sqlite3_realloc64",
	"sqlite3Malloc", "sqlite3MallocZero", "sqlite3Realloc", "sqlite3DbMallocRaw",
	"sqlite3DbMallocRawNN", "sqlite3DbMallocZero", "sqlite3DbRealloc", "sqlite3DbReallocOrFree",
	"sqlite3DbStrDup", "sqlite3DbStrNDup", "sqlite3_mprintf", "sqlite3_vmprintf",
	"sqlite3MPrintf", "sqlite3VMPrintf",
	"PyMem_Malloc", "PyMem_Calloc", "PyMem_Realloc", "PyMem_RawMalloc", "PyMem_RawCalloc",
	"PyMem_RawRealloc", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
	"PyMem_DebugMalloc", "PyMem_DebugCalloc", "PyMem_DebugRealloc", "PyMem_DebugRawAlloc",
	"PyMem_DebugRawMalloc", "PyMem_DebugRawCalloc", "PyMem_DebugRawRealloc",
	"PyObject_ArenaMmap", "PyObject_ArenaMalloc", "pymalloc_alloc", "pymalloc_realloc",
	"new_arena", "allocate_from_new_pool",
	"jv_mem_alloc", "jv_mem_alloc_unguarded", "jv_mem_calloc", "jv_mem_calloc_unguarded",
	"jv_mem_realloc", "jv_mem_strdup", "jv_mem_strdup_unguarded",
	"jsonp_malloc", "jsonp_strdup", "jsonp_strndup",
	"ggc_internal_alloc", "ggc_internal_cleared_alloc",
};

static const char *skip_underscores(const char *s)
{
	while (*s == '_')
		s++;
	return s;
}

/* Whether fn is name: a C++ fn's parameters are not compared. */
static bool name_is(const char *fn, const char *name)
{
	size_t n = strlen(name);

	return strncmp(fn, name, n) == 0 && (fn[n] == '\0' || fn[n] == '(');
}

bool msc_is_passthrough(const char *fn, const char *const *extra, unsigned nextra)
{
	const char *bare;
	size_t i;

	if (!fn)
		return false;
	/* The C++ standard library's containers, strings and allocators
	 * (often inlined into their callers): what they allocate is for the
	 * code that uses them.  A demangled name may begin with its return
	 * type ("void std::vector<int>::_M_realloc_insert...").  */
	bare = strncmp(fn, "void ", 5) == 0 ? fn + 5 : fn;
	if (strncmp(bare, "std::", 5) == 0 || strncmp(bare, "__gnu_cxx::", 11) == 0 ||
	    strncmp(fn, "operator new", 12) == 0 || name_is(fn, "__cxa_allocate_exception"))
		return true;
	bare = skip_underscores(fn);
	for (i = 0; i < ARRAY_SIZE(passthrough); i++)
		if (name_is(bare, passthrough[i]))
			return true;
	for (i = 0; i < nextra; i++)
		if (strcmp(fn, extra[i]) == 0 || strcmp(bare, skip_underscores(extra[i])) == 0 ||
		    fnmatch(extra[i], fn, 0) == 0)
			return true;
	return false;
}

/* How far the allocator's wrappers reach: frames looked at for one. */
#define WRAPPER_REACH 8

unsigned msc_stack_attr(const struct msc_rframe *fr, unsigned n, const char *const *extra,
			unsigned nextra)
{
	unsigned at = 0, k;

	/* A wrapper's own helpers below it (sqlite3Malloc's unnamed
	 * sqlite3MemMalloc): frames without a name in the wrapper's object. */
	for (k = 1; k < n && k < WRAPPER_REACH; k++) {
		unsigned j;

		if (!msc_is_passthrough(fr[k].fn, extra, nextra))
			continue;
		for (j = 0; j < k; j++)
			if (!msc_is_passthrough(fr[j].fn, extra, nextra) &&
			    (fr[j].fn || !fr[j].obj || !fr[k].obj || strcmp(fr[j].obj, fr[k].obj)))
				break;
		if (j == k)
			at = k;
	}
	while (at + 1 < n && msc_is_passthrough(fr[at].fn, extra, nextra))
		at++;
	return at;
}

/* ------------------------------------------------- frame and stack records */

int msc_stackdefs_init(struct msc_stackdefs *d)
{
	memset(d, 0, sizeof(*d));
	msc_arena_init(&d->arena);
	if (msc_u64map_init(&d->frames, 1024) || msc_u64map_init(&d->stacks, 1024)) {
		msc_stackdefs_release(d);
		return -ENOMEM;
	}
	return 0;
}

void msc_stackdefs_reset(struct msc_stackdefs *d)
{
	msc_u64map_clear(&d->frames);
	msc_u64map_clear(&d->stacks);
	msc_arena_reset(&d->arena);
}

void msc_stackdefs_release(struct msc_stackdefs *d)
{
	msc_u64map_release(&d->frames);
	msc_u64map_release(&d->stacks);
	msc_arena_release(&d->arena);
}

static bool key_is(const struct msc_field *k, const char *key, size_t n)
{
	return !k->key_escaped && k->key_len == n && memcmp(k->key, key, n) == 0;
}

/* A frame object's members, strings unescaped into the arena; the first of
 * a key that is there twice counts, members of other types are unknown. */
static void read_frame(const struct msc_jval *obj, struct msc_arena *a, struct msc_rframe *f)
{
	struct msc_jiter it;
	struct msc_field k;
	struct msc_jval v;
	bool has_line = false, has_inline = false;
	uint64_t line;

	f->fn = f->file = f->obj = f->offset = f->fn_offset = f->ip = f->build_id = NULL;
	f->line = 0;
	f->inlined = false;
	msc_jiter_init(&it, obj);
	while (msc_jiter_next(&it, &k, &v) > 0) {
		const char **str = NULL;

		if (key_is(&k, "fn", 2))
			str = &f->fn;
		else if (key_is(&k, "file", 4))
			str = &f->file;
		else if (key_is(&k, "obj", 3))
			str = &f->obj;
		else if (key_is(&k, "offset", 6))
			str = &f->offset;
		else if (key_is(&k, "fn_offset", 9))
			str = &f->fn_offset;
		else if (key_is(&k, "ip", 2))
			str = &f->ip;
		else if (key_is(&k, "build_id", 8))
			str = &f->build_id;
		if (str) {
			if (!*str && v.kind == MSC_J_STR)
				*str = msc_jval_str(&v, a, NULL);
		} else if (key_is(&k, "line", 4) && !has_line) {
			has_line = true;
			if (!msc_jval_u64(&v, &line) && line <= UINT_MAX)
				f->line = (unsigned)line;
		} else if (key_is(&k, "inline", 6) && !has_inline) {
			has_inline = true;
			f->inlined = v.kind == MSC_J_TRUE;
		}
	}
}

/* A positive integer id that fits 32 bits, or 0. */
static uint32_t rec_id(const struct msc_rec *rec, const char *key)
{
	uint64_t id;

	return msc_rec_u64(rec, key, &id) || !id || id > UINT32_MAX ? 0 : (uint32_t)id;
}

int msc_stackdefs_frame(struct msc_stackdefs *d, const struct msc_rec *rec,
			struct msc_framedef **out, struct msc_err *err)
{
	struct msc_framedef *fd;
	struct msc_jval obj = { .kind = MSC_J_OBJ };
	uint32_t id = rec_id(rec, "id");
	size_t len = 2, i;
	char *json, *p;
	bool first = true;

	if (!id)
		return msc_rec_err(err, rec, -EINVAL, "frame record needs a positive integer \"id\"");
	/* The frame object of version 1: the record without type and id. */
	for (i = 0; i < rec->nfields; i++)
		len += rec->fields[i].key_len + rec->fields[i].val.len + 4;
	fd = msc_arena_zalloc(&d->arena, sizeof(*fd));
	json = msc_arena_alloc(&d->arena, len);
	if (!fd || !json)
		return -ENOMEM;
	p = json;
	*p++ = '{';
	for (i = 0; i < rec->nfields; i++) {
		const struct msc_field *f = &rec->fields[i];

		if (key_is(f, "type", 4) || key_is(f, "id", 2))
			continue;
		if (!first)
			*p++ = ',';
		first = false;
		*p++ = '"';
		memcpy(p, f->key, f->key_len);
		p += f->key_len;
		*p++ = '"';
		*p++ = ':';
		memcpy(p, f->val.p, f->val.len);
		p += f->val.len;
	}
	*p++ = '}';
	obj.p = json;
	obj.len = (uint32_t)(p - json);
	fd->id = id;
	fd->f.json = json;
	fd->f.json_len = obj.len;
	read_frame(&obj, &d->arena, &fd->f);
	if (d->keep_lines) {
		fd->line = msc_arena_strndup(&d->arena, rec->line, rec->len);
		fd->len = (uint32_t)rec->len;
		if (!fd->line)
			return -ENOMEM;
	}
	if (msc_u64map_put(&d->frames, id, (uint64_t)(uintptr_t)fd))
		return -ENOMEM;
	if (out)
		*out = fd;
	return 0;
}

struct msc_stackdef *msc_stackdefs_get(const struct msc_stackdefs *d, uint64_t id)
{
	uint64_t *v = msc_u64map_get(&d->stacks, id);

	return v ? (struct msc_stackdef *)(uintptr_t)*v : NULL;
}

/* Reads a stack record; frames written in place are copied into the arena
 * when copy is set, else they point into rec (read them before the next
 * record). */
static int add_stack(struct msc_stackdefs *d, const struct msc_rec *rec, bool copy,
		     struct msc_stackdef **out, struct msc_err *err)
{
	const struct msc_field *frames = msc_rec_field(rec, "frames");
	const struct msc_field *parent = msc_rec_field(rec, "parent");
	struct msc_stackdef *s, *p = NULL;
	uint32_t id = rec_id(rec, "id");
	struct msc_jiter it;
	struct msc_jval v;
	unsigned k = 0, steps = 0;
	size_t nown = 0;

	if (!id)
		return msc_rec_err(err, rec, -EINVAL, "stack record needs a positive integer \"id\"");
	if (!frames || frames->val.kind != MSC_J_ARR)
		return msc_rec_err(err, rec, -EINVAL, "stack record needs a \"frames\" array");
	msc_jiter_init(&it, &frames->val);
	while (msc_jiter_next(&it, NULL, &v) > 0) {
		if (v.kind != MSC_J_OBJ && v.kind != MSC_J_INT)
			return msc_rec_err(err, rec, -EINVAL, "stack frames must be objects or frame ids");
		nown++;
	}
	if (parent) {
		uint32_t pid = rec_id(rec, "parent");
		const struct msc_stackdef *q;

		if (!pid)
			return msc_rec_err(err, rec, -EINVAL, "\"parent\" must be a stack id");
		p = msc_stackdefs_get(d, pid);
		if (!p)
			return msc_rec_err(err, rec, -EINVAL,
					   "stack record refers to parent stack %u, never defined", pid);
		/*
		 * Parents as the stream now defines them: none may be the
		 * stack itself (a reader that looks ids up would loop).  Only
		 * an id defined again can close a cycle: no definition refers
		 * to an id before it is defined.
		 */
		q = msc_stackdefs_get(d, id) ? p : NULL;
		for (; q; q = q->parent_id ? msc_stackdefs_get(d, q->parent_id) : NULL) {
			if (q->id == id)
				return msc_rec_err(err, rec, -EINVAL,
						   "stack %u: its parent chain leads back to itself", id);
			if (++steps > MSC_STACK_MAX_FRAMES)
				break;
		}
	}
	if (nown > MSC_STACK_MAX_FRAMES || (p && nown + p->n > MSC_STACK_MAX_FRAMES) ||
	    (p && p->depth >= MSC_STACK_MAX_FRAMES))
		return msc_rec_err(err, rec, -EINVAL, "stack %u has more than %d frames or parents", id,
				   MSC_STACK_MAX_FRAMES);
	s = msc_arena_zalloc(&d->arena, sizeof(*s));
	if (!s || !(s->own = msc_arena_alloc(&d->arena, (nown + 1) * sizeof(*s->own))))
		return -ENOMEM;
	s->id = id;
	s->parent = p;
	s->parent_id = p ? p->id : 0;
	s->depth = p ? p->depth + 1 : 1;
	s->nown = (unsigned)nown;
	s->n = (unsigned)nown + (p ? p->n : 0);
	if (d->keep_lines) {
		s->line = msc_arena_strndup(&d->arena, rec->line, rec->len);
		s->len = (uint32_t)rec->len;
		if (!s->line)
			return -ENOMEM;
	}
	msc_jiter_init(&it, &frames->val);
	while (msc_jiter_next(&it, NULL, &v) > 0) {
		struct msc_frameref *r = &s->own[k++];
		uint64_t fid;
		uint64_t *fv;

		r->def = NULL;
		r->json = NULL;
		r->len = 0;
		if (v.kind == MSC_J_OBJ) {
			/* In the line kept, or a copy of its own. */
			if (s->line)
				r->json = s->line + (v.p - rec->line);
			else
				r->json = copy ? msc_arena_strndup(&d->arena, v.p, v.len) : v.p;
			r->len = v.len;
			if (!r->json)
				return -ENOMEM;
			continue;
		}
		fv = msc_jval_u64(&v, &fid) ? NULL : msc_u64map_get(&d->frames, fid);
		if (!fv)
			return msc_rec_err(err, rec, -EINVAL,
					   "stack record refers to frame %.*s, never defined", (int)v.len, v.p);
		r->def = (const struct msc_framedef *)(uintptr_t)*fv;
	}
	if (msc_u64map_put(&d->stacks, id, (uint64_t)(uintptr_t)s))
		return -ENOMEM;
	*out = s;
	return 0;
}

int msc_stackdefs_stack(struct msc_stackdefs *d, const struct msc_rec *rec,
			struct msc_stackdef **out, struct msc_err *err)
{
	return add_stack(d, rec, true, out, err);
}

void msc_stackdef_read_own(struct msc_stackdefs *d, const struct msc_stackdef *s,
			   struct msc_rframe *fr)
{
	unsigned k;

	for (k = 0; k < s->nown; k++) {
		const struct msc_frameref *r = &s->own[k];
		struct msc_jval obj = { .kind = MSC_J_OBJ };

		if (r->def) {
			fr[k] = r->def->f;
			continue;
		}
		obj.p = r->json;
		obj.len = r->len;
		read_frame(&obj, &d->arena, &fr[k]);
		fr[k].json = r->json;
		fr[k].json_len = r->len;
	}
}

/*
 * A stack's frames are its own then its parent's: every parent's frames
 * are a tail of its child's.  One array is read for s, walking up the
 * chain (or copying the first parent already read), and every parent not
 * read yet gets its tail of it: a chain of N stacks read from its deepest
 * costs N frames, not N^2/2 (readers that resolve their stacks deepest
 * first stay linear in a chain).
 */
int msc_stackdef_frames(struct msc_stackdefs *d, struct msc_stackdef *s, struct msc_err *err)
{
	struct msc_rframe *fr;
	struct msc_stackdef *p;
	unsigned off = 0;

	if (s->frames)
		return 0;
	fr = msc_arena_alloc(&d->arena, (s->n + 1) * sizeof(*fr));
	if (!fr)
		return msc_err_set(err, -ENOMEM, "out of memory");
	for (p = s; p && !p->frames; p = p->parent) {
		msc_stackdef_read_own(d, p, fr + off);
		off += p->nown;
	}
	if (p)
		memcpy(fr + off, p->frames, p->n * sizeof(*fr));
	for (off = 0, p = s; p && !p->frames; p = p->parent) {
		p->frames = fr + off;
		off += p->nown;
	}
	return 0;
}

static int cmp_deeper(const void *x, const void *y)
{
	const struct msc_stackdef *a = *(struct msc_stackdef *const *)x;
	const struct msc_stackdef *b = *(struct msc_stackdef *const *)y;

	return a->n != b->n ? (a->n > b->n ? -1 : 1) : 0;
}

int msc_stackdefs_resolve(struct msc_stackdefs *d, struct msc_stackdef **defs, size_t n,
			  struct msc_err *err)
{
	size_t i;
	int ret = 0;

	if (n > 1)
		qsort(defs, n, sizeof(*defs), cmp_deeper);
	for (i = 0; i < n && !ret; i++)
		ret = msc_stackdef_frames(d, defs[i], err);
	return ret;
}

int msc_stack_frames(struct msc_stackdefs *d, const struct msc_rec *rec, const char *const *extra,
		     unsigned nextra, struct msc_rframe **frames, unsigned *n, unsigned *attr,
		     struct msc_err *err)
{
	struct msc_stackdef *s;
	unsigned k;
	int ret = add_stack(d, rec, d->keep_json, &s, err);

	if (ret)
		return ret;
	ret = msc_stackdef_frames(d, s, err);
	/* Frames written in place were read from the record, which goes. */
	for (k = 0; k < s->nown; k++)
		if (!d->keep_json && !s->line && !s->own[k].def) {
			s->own[k].json = NULL;
			s->frames[k].json = NULL;
			s->frames[k].json_len = 0;
		}
	if (ret)
		return ret;
	*frames = s->frames;
	*n = s->n;
	*attr = msc_stack_attr(s->frames, s->n, extra, nextra);
	return 0;
}

int msc_write_stack_v1(struct msc_writer *w, const struct msc_stackdef *s)
{
	struct msc_reader r;
	struct msc_rec rec;
	unsigned k;

	for (k = 0; k < s->n; k++)
		if (!s->frames[k].json)
			return -EINVAL;
	msc_w_record(w, MSC_R_STACK);
	msc_w_u64(w, "id", s->id);
	if (s->line) {
		msc_reader_init_mem(&r, s->line, s->len, "stack");
		if (msc_reader_next(&r, &rec, NULL) > 0)
			for (k = 0; k < rec.nfields; k++) {
				const struct msc_field *f = &rec.fields[k];

				if (!key_is(f, "type", 4) && !key_is(f, "id", 2) && !key_is(f, "parent", 6) &&
				    !key_is(f, "frames", 6))
					msc_w_raw_member(w, f->key, f->key_len, f->val.p, f->val.len);
			}
		msc_reader_release(&r);
	}
	msc_w_arr(w, "frames");
	for (k = 0; k < s->n; k++)
		msc_w_raw(w, NULL, s->frames[k].json, s->frames[k].json_len);
	msc_w_arr_end(w);
	msc_w_end(w);
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

uint64_t msc_mark_bound(const char *name, const char *by, uint64_t ts, bool since)
{
	if (!by || strcmp(by, "ms-record") || !name)
		return ts;
	if (since && (!strcmp(name, "start") || !strcmp(name, "attach")))
		return 0;
	if (!since && (!strcmp(name, "end") || !strcmp(name, "exec")))
		return UINT64_MAX;
	return ts;
}

void msc_span_init(struct msc_span *s, const char *since, const char *until)
{
	memset(s, 0, sizeof(*s));
	s->since = since;
	s->until = until;
	s->until_ts = UINT64_MAX;
	s->since_time = s->since_known = since && !msc_parse_time(since, &s->since_ts);
	s->until_time = s->until_known = until && !msc_parse_time(until, &s->until_ts);
}

void msc_span_mark_of(struct msc_span *s, const char *name, const char *by, uint64_t ts)
{
	if (!name)
		return;
	if (s->since && !s->since_known && !strcmp(name, s->since)) {
		s->since_known = true;
		s->since_ts = msc_mark_bound(name, by, ts, true);
	}
	if (s->until && !s->until_known && !strcmp(name, s->until)) {
		s->until_known = true;
		s->until_ts = msc_mark_bound(name, by, ts, false);
	}
}

void msc_span_mark(struct msc_span *s, const struct msc_rec *rec)
{
	uint64_t ts = 0;

	msc_rec_u64(rec, "ts", &ts);
	msc_span_mark_of(s, msc_rec_str(rec, "name", NULL), msc_rec_str(rec, "by", NULL), ts);
}

int msc_span_leak(const struct msc_span *s, uint64_t at, uint64_t first_ts, uint64_t last_ts)
{
	if (s->since && s->since_time) {
		if (last_ts < s->since_ts)
			return 0;
		if (first_ts < s->since_ts)
			return -1;
	} else if (s->since && at < s->since_ts) {
		return 0;
	}
	if (s->until && s->until_time) {
		if (first_ts >= s->until_ts)
			return 0;
		if (last_ts >= s->until_ts)
			return -2;
	} else if (s->until && at >= s->until_ts) {
		return 0;
	}
	return 1;
}

int msc_span_leak_rec(const struct msc_span *s, const struct msc_rec *rec, int code, struct msc_err *err)
{
	uint64_t at = 0, first = 0, last = 0;
	int in;

	if ((s->since && !s->since_known) || (s->until && !s->until_known))
		return msc_rec_err(err, rec, code, "leak record before the mark '%s' (--%s): no such mark so far",
				   s->since && !s->since_known ? s->since : s->until,
				   s->since && !s->since_known ? "since" : "until");
	if (msc_rec_u64(rec, "after_ts", &at))
		at = 0;
	msc_rec_u64(rec, "first_ts", &first);
	msc_rec_u64(rec, "last_ts", &last);
	if ((in = msc_span_leak(s, at, first, last)) < 0)
		return msc_rec_err(err, rec, code, "leak record of blocks allocated both before and after %s, "
				   "which no mark splits: a time splits leaks only at a mark (ms-record "
				   "--mark-signal, ms-snap --mark)", in == -1 ? s->since : s->until);
	return in;
}
