/* SPDX-License-Identifier: MIT */
/*
 * The stream filter of ms-filter (see msc_filter.h): the run over the
 * records, the stacks (held back, judged by the rules once, written before
 * the first record that goes out with them), the kinds of records, and the
 * records it writes anew: the end record, with what was dropped and the
 * filters applied, and --expand's version 1 header.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_agg.h"
#include "msc_arena.h"
#include "msc_filter.h"
#include "msc_stream.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_util.h"
#include "filter_internal.h"

/* -------------------------------------------------------------- stacks */

struct stream *filter_stream_of(struct filter *f, int pid)
{
	struct stream *s;
	unsigned i;

	for (i = 0; i < f->nstreams; i++)
		if (f->streams[i].pid == pid)
			return &f->streams[i];
	s = realloc(f->streams, (f->nstreams + 1) * sizeof(*s));
	if (!s)
		return NULL;
	f->streams = s;
	s = &f->streams[f->nstreams++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	return s;
}

/* A frame record: held back until a stack that goes out needs it. */
static int store_frame(struct filter *f, const struct msc_rec *rec)
{
	struct msc_framedef *fd;
	int ret = msc_stackdefs_frame(&f->defs, rec, &fd, f->err);

	if (ret)
		return ret;
	fd->user = msc_arena_zalloc(&f->arena, sizeof(struct fframe));
	return fd->user ? 0 : -ENOMEM;
}

/* A stack record: checked here, where an error can name its line, and held
 * back; its frames are read later, if a rule needs them. */
static int store_stack(struct filter *f, const struct msc_rec *rec)
{
	struct msc_stackdef *def;
	struct fstack *s;
	int ret = msc_stackdefs_stack(&f->defs, rec, &def, f->err);

	if (ret)
		return ret;
	s = msc_arena_zalloc(&f->arena, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->def = def;
	s->supp = -1;
	def->user = s;
	return 0;
}

/* Supppression patterns: substrings of any frame's function, file or module. */
static bool supp_matches(const char *glob, const struct msc_rframe *fr)
{
	return glob_or_equal(glob, fr->fn) || glob_or_equal(glob, fr->file) ||
	       glob_or_equal(glob, fr->obj);
}

static int decide(struct filter *f, struct fstack *s)
{
	const struct msc_filter_opts *o = f->o;
	const struct msc_rframe *frames;
	unsigned i, k, attr, n;
	int ret;

	if (s->decided)
		return 0;
	s->decided = true;
	/* Without rules on frames, the frames need not be read. */
	if (!o->nignore && !o->nignore_frame && !o->nonly && !o->supp)
		return 0;
	ret = msc_stackdef_frames(&f->defs, s->def, f->err);
	if (ret)
		return ret;
	frames = s->def->frames;
	n = s->def->n;
	attr = s->attr = msc_stack_attr(frames, n, f->alloc_fns, f->nalloc_fns);
	for (k = 0; k < o->nignore && attr < n; k++)
		if (msc_frame_matches(o->ignore[k], frames[attr].fn, frames[attr].file, frames[attr].obj))
			s->ignored = true;
	for (i = 0; i < n; i++) {
		const struct msc_rframe *fr = &frames[i];

		for (k = 0; k < o->nignore_frame; k++)
			if (msc_frame_matches(o->ignore_frame[k], fr->fn, fr->file, fr->obj))
				s->ignored_frame = true;
		for (k = 0; k < o->nonly; k++)
			if (msc_frame_matches(o->only[k], fr->fn, fr->file, fr->obj))
				s->only = true;
		for (k = 0; o->supp && s->supp < 0 && k < o->supp->n; k++)
			if (supp_matches(o->supp->rules[k].glob, fr))
				s->supp = (int)k;
	}
	return 0;
}

/* One stack record as it came, after the frame records it names. */
static void write_one(struct filter *f, struct msc_stackdef *def)
{
	struct fstack *s = def->user;
	unsigned k;

	for (k = 0; k < def->nown; k++) {
		const struct msc_framedef *fd = def->own[k].def;
		struct fframe *ff = fd ? fd->user : NULL;

		if (ff && !ff->written) {
			ff->written = true;
			msc_w_line(f->w, fd->line, fd->len);
		}
	}
	s->written = true;
	msc_w_line(f->w, def->line, def->len);
}

/*
 * Writes stack id, unless it went out already, after what it refers to:
 * its parents, outermost first, and the frame records they and it name.
 * With --expand, one record with every frame in place instead.
 */
void filter_write_stack(struct filter *f, uint64_t id)
{
	struct msc_stackdef *def = id ? msc_stackdefs_get(&f->defs, id) : NULL, *p, **chain;
	struct fstack *s = def ? def->user : NULL;
	size_t n, i;
	int ret;

	if (!s || s->written)
		return;
	if (f->o->expand) {
		ret = msc_stackdef_frames(&f->defs, def, f->err);
		if (!ret)
			ret = msc_write_stack_v1(f->w, def);
		if (ret && !f->failed)
			f->failed = msc_err_set(f->err, ret, "stack %u: %s", def->id,
						ret == -ENOMEM ? "out of memory" : "a frame without JSON");
		s->written = true;
		return;
	}
	/* Parents first, without recursion: the chain of unwritten ones
	 * once, then written outermost first (walking up from each again
	 * would be quadratic in a deep chain). */
	for (n = 0, p = def; p && !((struct fstack *)p->user)->written; p = p->parent)
		n++;
	chain = malloc(n * sizeof(*chain));
	if (!chain) {
		while (!((struct fstack *)def->user)->written) {
			for (p = def; p->parent && !((struct fstack *)p->parent->user)->written;
			     p = p->parent)
				;
			write_one(f, p);
		}
		return;
	}
	for (i = 0, p = def; i < n; i++, p = p->parent)
		chain[i] = p;
	while (n--)
		write_one(f, chain[n]);
	free(chain);
}

/* -------------------------------------------------------- record kinds */

static int kind_of(enum msc_rtype t)
{
	switch (t) {
	case MSC_R_SITE:
		return C_SITE;
	case MSC_R_LEAK:
		return C_LEAK;
	case MSC_R_ALLOC:
		return C_ALLOC;
	case MSC_R_FREE:
		return C_FREE;
	case MSC_R_MMAP: case MSC_R_MUNMAP: case MSC_R_MREMAP: case MSC_R_BRK:
		return C_MMAP;
	default:
		return C_OTHER;
	}
}

static uint64_t bytes_of(const struct msc_rec *rec, int kind)
{
	uint64_t v = 0;

	if (kind == C_SITE || kind == C_LEAK)
		msc_rec_u64(rec, "bytes", &v);
	else
		msc_rec_u64(rec, "size", &v);
	return v;
}

static bool type_wanted(const struct msc_filter_opts *o, const char *type)
{
	unsigned i;

	if (!o->types)
		return true;
	for (i = 0; i < o->ntypes; i++)
		if (strcmp(o->types[i], type) == 0)
			return true;
	return false;
}

static void count_drop(struct filter *f, int pid, int kind, const struct msc_rec *rec)
{
	struct stream *s = filter_stream_of(f, pid);
	uint64_t blocks = 0;

	if (!s)
		return;
	s->dropped[kind].records++;
	msc_sat_add(&s->dropped[kind].bytes, bytes_of(rec, kind));
	if (kind == C_LEAK && msc_rec_u64(rec, "count", &blocks) == 0)
		msc_sat_add(&s->dropped[kind].blocks, blocks);
}

static uint64_t alloc_key(uint64_t ptr, uint64_t ts)
{
	return msc_hash_u64(ptr ^ msc_hash_u64(ts)) | 1;
}

/* A record with its members but those in skip, open for more members. */
void filter_copy_members(struct msc_writer *w, const struct msc_rec *rec, const char *const *skip,
			 unsigned nskip)
{
	unsigned i, k;

	msc_w_begin(w, rec->type);
	for (i = 0; i < rec->nfields; i++) {
		const struct msc_field *fl = &rec->fields[i];
		bool drop = fl->key_len == 4 && memcmp(fl->key, "type", 4) == 0;

		for (k = 0; !drop && k < nskip; k++)
			drop = strlen(skip[k]) == fl->key_len && memcmp(skip[k], fl->key, fl->key_len) == 0;
		if (!drop)
			msc_w_raw_member(w, fl->key, fl->key_len, fl->val.p, fl->val.len);
	}
}

static const char *const count_names[C_KINDS] = { "site", "leak", "alloc", "free", "mmap", "other" };

/* The filters applied, as words, for the end record. */
static void describe(const struct msc_filter_opts *o, struct msc_writer *w)
{
	char buf[160];
	unsigned i;

	if (o->has_min) {
		snprintf(buf, sizeof(buf), "--min %" PRIu64, o->min_size);
		msc_w_str(w, NULL, buf);
	}
	if (o->has_max) {
		snprintf(buf, sizeof(buf), "--max %" PRIu64, o->max_size);
		msc_w_str(w, NULL, buf);
	}
	for (i = 0; i < o->nignore; i++) {
		snprintf(buf, sizeof(buf), "--ignore %s", o->ignore[i]);
		msc_w_str(w, NULL, buf);
	}
	for (i = 0; i < o->nignore_frame; i++) {
		snprintf(buf, sizeof(buf), "--ignore-frame %s", o->ignore_frame[i]);
		msc_w_str(w, NULL, buf);
	}
	for (i = 0; i < o->nonly; i++) {
		snprintf(buf, sizeof(buf), "--only %s", o->only[i]);
		msc_w_str(w, NULL, buf);
	}
	for (i = 0; i < o->nalloc_fns; i++) {
		snprintf(buf, sizeof(buf), "--alloc-fn %s", o->alloc_fns[i]);
		msc_w_str(w, NULL, buf);
	}
	if (o->supp) {
		snprintf(buf, sizeof(buf), "--suppressions (%u rule%s)", o->supp->n, o->supp->n == 1 ? "" : "s");
		msc_w_str(w, NULL, buf);
	}
	if (o->transient) {
		snprintf(buf, sizeof(buf), "--transient --min-age %" PRIu64 "ns", o->min_age);
		msc_w_str(w, NULL, buf);
	}
	if (o->types) {
		size_t n = (size_t)snprintf(buf, sizeof(buf), "--type ");

		for (i = 0; i < o->ntypes && n < sizeof(buf); i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "", o->types[i]);
		msc_w_str(w, NULL, buf);
	}
	if (o->pid) {
		snprintf(buf, sizeof(buf), "--pid %d", o->pid);
		msc_w_str(w, NULL, buf);
	}
	if (o->top) {
		snprintf(buf, sizeof(buf), "--top %u", o->top);
		msc_w_str(w, NULL, buf);
	}
	if (o->since) {
		snprintf(buf, sizeof(buf), "--since %s", o->since);
		msc_w_str(w, NULL, buf);
	}
	if (o->until) {
		snprintf(buf, sizeof(buf), "--until %s", o->until);
		msc_w_str(w, NULL, buf);
	}
}

static void add_member(const struct msc_jval *v, const char *key, uint64_t *to)
{
	struct msc_jval m;
	uint64_t x;

	if (msc_jval_member(v, key, &m) > 0 && !msc_jval_u64(&m, &x))
		*to += x;
}

void msc_filtered_add(const struct msc_jval *v, struct msc_filtered *to)
{
	add_member(v, "records", &to->records);
	add_member(v, "blocks", &to->blocks);
	add_member(v, "bytes", &to->bytes);
	add_member(v, "trimmed_allocs", &to->trimmed_allocs);
	add_member(v, "trimmed_bytes", &to->trimmed_bytes);
}

/* The end record, with what this filter (and earlier ones) dropped. */
static void write_end(struct filter *f, const struct msc_rec *rec, struct stream *s)
{
	static const char *const skip[] = { "filtered", "filters" };
	const struct msc_field *prev = msc_rec_field(rec, "filtered");
	const struct msc_field *prev_list = msc_rec_field(rec, "filters");
	struct msc_filtered total[C_KINDS];
	unsigned k;

	memcpy(total, s ? s->dropped : (struct msc_filtered[C_KINDS]){ { 0 } }, sizeof(total));
	/* Counts of an ms-filter earlier in the pipeline add up. */
	if (prev && prev->val.kind == MSC_J_OBJ)
		for (k = 0; k < C_KINDS; k++) {
			struct msc_jval c;

			if (msc_jval_member(&prev->val, count_names[k], &c) > 0)
				msc_filtered_add(&c, &total[k]);
		}
	filter_copy_members(f->w, rec, skip, ARRAY_SIZE(skip));
	msc_w_obj(f->w, "filtered");
	for (k = 0; k < C_KINDS; k++) {
		if (!total[k].records && !total[k].trimmed_allocs)
			continue;
		msc_w_obj(f->w, count_names[k]);
		msc_w_u64(f->w, "records", total[k].records);
		if (k == C_LEAK)
			msc_w_u64(f->w, "blocks", total[k].blocks);
		msc_w_u64(f->w, "bytes", total[k].bytes);
		if (total[k].trimmed_allocs) {
			msc_w_u64(f->w, "trimmed_allocs", total[k].trimmed_allocs);
			msc_w_u64(f->w, "trimmed_bytes", total[k].trimmed_bytes);
		}
		msc_w_obj_end(f->w);
	}
	msc_w_obj_end(f->w);
	msc_w_arr(f->w, "filters");
	if (prev_list && prev_list->val.kind == MSC_J_ARR) {
		struct msc_jiter it;
		struct msc_jval v;

		msc_jiter_init(&it, &prev_list->val);
		while (msc_jiter_next(&it, NULL, &v) > 0)
			msc_w_raw(f->w, NULL, v.p, v.len);
	}
	describe(f->o, f->w);
	msc_w_arr_end(f->w);
	msc_w_end(f->w);
}

/* The header of a stream --expand writes: version 1, which it is (every
 * stack's frames in place, no frame records), members in their places. */
static void write_header_v1(struct msc_writer *w, const struct msc_rec *rec)
{
	unsigned i;

	msc_w_begin(w, rec->type);
	for (i = 0; i < rec->nfields; i++) {
		const struct msc_field *fl = &rec->fields[i];
		bool plain = !fl->key_escaped;

		if (plain && fl->key_len == 4 && memcmp(fl->key, "type", 4) == 0)
			continue;
		if (plain && fl->key_len == 7 && memcmp(fl->key, "version", 7) == 0)
			msc_w_i64(w, "version", 1);
		else
			msc_w_raw_member(w, fl->key, fl->key_len, fl->val.p, fl->val.len);
	}
	msc_w_end(w);
}

/* -------------------------------------------------------------- the run */

static int one_record(struct filter *f, const struct msc_rec *rec, struct msc_filter_stats *st)
{
	const struct msc_filter_opts *o = f->o;
	enum msc_rtype type = msc_rec_rtype(rec);
	int kind = kind_of(type), pid = msc_rec_pid(rec, f->cur_pid), ret;
	uint64_t stack = 0, size = 0, size_max = 0, ts = 0;
	struct fstack *s = NULL;
	bool has_size;

	if (type == MSC_R_HEADER) {
		struct msc_header_info hi;
		int64_t hp = 0;
		struct stream *str;

		/* Not ours, or of a later format version: not passed on as if
		 * it were read. */
		ret = msc_stream_parse_header(rec, &hi, f->err);
		if (ret)
			return ret;

		/* the first header's (ms-record --alloc-fn), after the user's,
		 * before any stack is judged */
		if (!f->alloc_fns_read &&
		    msc_header_alloc_fns(rec, &f->arena, &f->alloc_fns, &f->nalloc_fns))
			return msc_err_set(f->err, -ENOMEM, "out of memory");
		f->alloc_fns_read = true;

		if (o->transient)
			filter_release_held(f, true);
		f->cur_pid = msc_rec_i64(rec, "pid", &hp) == 0 ? (int)hp : 0;
		/* --pid: the other processes' streams go entirely, so that what
		 * is left is that process's own valid stream. */
		if (o->pid && f->cur_pid != o->pid)
			return 0;
		str = filter_stream_of(f, f->cur_pid);
		if (!str)
			return -ENOMEM;
		str->started = true;
		str->ended = false;
		filter_range_start(o, str);
		st->streams++;
		if (o->expand)
			write_header_v1(f->w, rec);
		else
			msc_w_line(f->w, rec->line, rec->len);
		return 0;
	}
	if (type == MSC_R_STACK)
		return store_stack(f, rec);
	if (type == MSC_R_FRAME)
		return store_frame(f, rec);
	if (type == MSC_R_END) {
		struct stream *str;

		if (o->pid && pid != o->pid)
			return 0;
		str = filter_stream_of(f, pid);
		if (!str)
			return -ENOMEM;
		if (o->transient)
			filter_release_held(f, true);
		filter_flush_top(f, str);
		str->ended = true;
		write_end(f, rec, str);
		/* A pid's next stream (after exec) counts its own drops. */
		memset(str->dropped, 0, sizeof(str->dropped));
		return 0;
	}
	if (!type_wanted(o, rec->type) || (o->pid && pid != o->pid)) {
		count_drop(f, pid, kind, rec);
		return 0;
	}
	ret = msc_rec_u64(rec, "stack", &stack);
	if (ret == -EINVAL || ret == -ERANGE)
		return msc_rec_err(f->err, rec, -EINVAL, "\"stack\" must be a stack id");
	if ((kind != C_OTHER || type == MSC_R_SERIES) && stack) {
		struct msc_stackdef *def = msc_stackdefs_get(&f->defs, stack);

		if (!def)
			return msc_rec_err(f->err, rec, -EINVAL,
					   "%s record refers to stack %" PRIu64 ", never defined",
					   rec->type, stack);
		s = def->user;
		ret = decide(f, s);
		if (ret)
			return ret;
	}
	/*
	 * Samples, snapshots, deltas, unknown types pass, in time order.  So
	 * does a munmap: it releases, like a free, but carries no stack of its
	 * own; the rules of size and frames judged the mapping it ends (an
	 * unmap of a range nothing kept tracks is ignored downstream).
	 */
	if (type == MSC_R_MARK && (o->since || o->until)) {
		struct stream *str = filter_stream_of(f, pid);

		if (!str)
			return -ENOMEM;
		filter_range_mark(str, rec);
	}
	if (kind == C_OTHER || type == MSC_R_MUNMAP) {
		/* A stack's heap over time goes with its sites when the frame
		 * rules drop them (the size rules cannot split it). */
		if (type == MSC_R_SERIES && ((s && (s->ignored || s->ignored_frame)) || (o->nonly && (!s || !s->only))))
			return 0;
		if (type == MSC_R_ERROR) {
			/* the stacks of the block and of its first free */
			uint64_t more;

			if (msc_rec_u64(rec, "alloc_stack", &more) == 0)
				filter_write_stack(f, more);
			if (msc_rec_u64(rec, "free_stack", &more) == 0)
				filter_write_stack(f, more);
			f->st->errors++;
		}
		if (o->transient && f->nheld > f->held_head) {
			if (msc_rec_u64(rec, "ts", &ts) == 0 && ts > f->now)
				f->now = ts;
			ret = filter_hold(f, rec, f->now, (uint32_t)stack, false, 0, pid);
			filter_release_held(f, false);
			return ret;
		}
		emit(f, rec->line, rec->len, (uint32_t)stack);
		return 0;
	}
	/* An allocation record: size, frames, suppressions, lifetime. */
	ret = msc_rec_u64(rec, "size", &size);
	if (ret == -EINVAL || ret == -ERANGE)
		return msc_rec_err(f->err, rec, -EINVAL, "\"size\" must be a non-negative integer");
	has_size = ret == 0;
	if (msc_rec_u64(rec, "size_max", &size_max))
		size_max = size;
	if (has_size && ((o->has_min && size_max < o->min_size) || (o->has_max && size > o->max_size)))
		goto drop;
	if ((o->since || o->until) && (kind == C_LEAK || kind == C_ALLOC || kind == C_FREE)) {
		struct stream *str = filter_stream_of(f, pid);

		if (!str)
			return -ENOMEM;
		ret = filter_in_range(str, rec, kind, f->err);
		if (ret < 0)
			return ret;
		if (!ret)
			goto drop;
	}
	if (s && (s->ignored || s->ignored_frame || (o->nonly && !s->only)))
		goto drop;
	if (!s && o->nonly)
		goto drop;
	if (kind == C_LEAK && s && s->supp >= 0) {
		struct msc_supp_rule *r = &o->supp->rules[s->supp];
		uint64_t count = 0, bytes = 0;

		msc_rec_u64(rec, "count", &count);
		msc_rec_u64(rec, "bytes", &bytes);
		r->hits += count;
		msc_sat_add(&r->bytes, bytes);
		goto drop;
	}
	if (o->transient) {
		if (kind == C_SITE) {
			struct stream *str = filter_stream_of(f, pid);
			struct msc_filtered trim = { 0 };
			uint64_t kept;

			filter_release_held(f, true);
			/* With --top, counted when the site leaves (filter_flush_top). */
			if (filter_site_transient(f, o->top ? &trim : str ? &str->dropped[C_SITE] : NULL,
						  rec, (uint32_t)stack, !o->top, &kept))
				goto drop;
			if (o->top)
				return filter_buffer_top(f, pid, rec, (uint32_t)stack, false, kept, &trim);
			return 0;
		}
		if (kind != C_LEAK && msc_rec_u64(rec, "ts", &ts) == 0) {
			uint64_t alloc_ts, ptr;

			if (ts > f->now)
				f->now = ts;
			if (kind == C_FREE && msc_rec_u64(rec, "alloc_ts", &alloc_ts) == 0 &&
			    msc_rec_hex(rec, "ptr", &ptr) == 0 && ts - alloc_ts < o->min_age) {
				uint64_t *idx = msc_u64map_get(&f->pending_alloc, alloc_key(ptr, alloc_ts));

				if (idx) {
					struct held *h = &f->held[*idx - 1];

					h->dropped = true;
					count_drop(f, h->pid, C_ALLOC, rec);
				}
				filter_release_held(f, false);
				goto drop;
			}
			if (kind == C_ALLOC && msc_rec_hex(rec, "ptr", &alloc_ts) == 0)
				ret = filter_hold(f, rec, ts, (uint32_t)stack, true, alloc_key(alloc_ts, ts), pid);
			else
				ret = filter_hold(f, rec, ts, (uint32_t)stack, false, 0, pid);
			filter_release_held(f, false);
			return ret;
		}
	}
	/* Aggregates come after the events: those held go out first. */
	if (o->transient && (kind == C_SITE || kind == C_LEAK))
		filter_release_held(f, true);
	if (o->top && (kind == C_SITE || kind == C_LEAK))
		return filter_buffer_top(f, pid, rec, (uint32_t)stack, kind == C_LEAK, bytes_of(rec, kind), NULL);
	if (kind == C_LEAK) {
		uint64_t count = 0;

		msc_rec_u64(rec, "count", &count);
		msc_sat_add(&f->st->leaks[filter_leak_kind_of(rec)], count);
	}
	emit(f, rec->line, rec->len, (uint32_t)stack);
	return 0;
drop:
	count_drop(f, pid, kind, rec);
	return 0;
}

/* Records that a recording writes as it goes, a few a second. */
static bool is_timely(enum msc_rtype t)
{
	return t == MSC_R_SAMPLE || t == MSC_R_HEADER || t == MSC_R_END;
}

int msc_filter_run(const struct msc_filter_opts *o, struct msc_reader *r, struct msc_writer *w,
		   struct msc_filter_stats *st, struct msc_err *err)
{
	struct filter f = { .o = o, .w = w, .err = err, .st = st };
	struct msc_rec rec;
	bool first = true;
	unsigned b;
	int ret;

	memset(st, 0, sizeof(*st));
	msc_arena_init(&f.arena);
	f.alloc_fns = o->alloc_fns;
	f.nalloc_fns = o->nalloc_fns;
	if (msc_stackdefs_init(&f.defs) || msc_u64map_init(&f.pending_alloc, 1024)) {
		msc_stackdefs_release(&f.defs);
		return msc_err_set(err, -ENOMEM, "out of memory");
	}
	f.defs.keep_lines = true;
	/* Buckets entirely below --min-age (rounded down to a decade). */
	for (b = 0; b < MSC_AGE_BUCKETS && msc_age_bucket_limit(b) <= o->min_age; b++)
		;
	f.age_bucket = (int)b;

	while ((ret = msc_reader_next(r, &rec, err)) > 0) {
		st->in++;
		if (first && msc_rec_rtype(&rec) != MSC_R_HEADER) {
			ret = msc_rec_err(err, &rec, -EINVAL, "not a memscope stream: no header record");
			break;
		}
		first = false;
		ret = one_record(&f, &rec, st);
		if (ret == -ENOMEM)
			msc_err_set(err, ret, "%s: out of memory", r->name);
		if (!ret)
			ret = f.failed;
		if (ret || w->error)
			break;
		if (o->live && is_timely(msc_rec_rtype(&rec)))
			msc_writer_flush(w);
	}
	if (ret == 0 && first)
		ret = msc_err_set(err, -EINVAL, "%s: empty input (no header record)", r->name);
	/* Whatever is held goes out, even on bad input: nothing is lost. */
	if (o->transient)
		filter_release_held(&f, true);
	for (b = 0; b < f.nstreams; b++)
		filter_flush_top(&f, &f.streams[b]);
	/* (Not known when a write error stopped the reading.) */
	for (b = 0; b < f.nstreams && !w->error; b++)
		if (f.streams[b].started && !f.streams[b].ended)
			st->truncated = true;
	st->out = w->records;
	/* Lifetimes of aggregates are known by decade only. */
	if (f.saw_site_ages && (f.age_bucket == 0 || msc_age_bucket_limit((unsigned)f.age_bucket - 1) != o->min_age))
		st->age_rounded = true;
	for (b = 0; b < f.nstreams; b++)
		free(f.streams[b].top);
	free(f.streams);
	free(f.held);
	msc_stackdefs_release(&f.defs);
	msc_u64map_release(&f.pending_alloc);
	msc_arena_release(&f.arena);
	return ret;
}
