/* SPDX-License-Identifier: MIT */
/*
 * ms-report --pprof: a report's allocation sites as a gzipped pprof profile,
 * for go tool pprof and the continuous profilers that read the format
 * (Pyroscope, Parca, Grafana, Google Cloud Profiler).
 *
 * What goes in (profile.proto, github.com/google/pprof, proto/profile.proto):
 *
 *   - a sample per site record (per stack and size, as ms-record wrote
 *     them), with the values alloc_objects, alloc_space (allocs, bytes),
 *     inuse_objects, inuse_space (live, live_bytes at the end, or at the
 *     snapshot) and, when the stream has leak records, leaked_objects and
 *     leaked_space: the blocks of its leak records of the kinds a report
 *     counts as leaked (definitely, indirectly, unscanned).  A leak record
 *     with no site (a filtered stream, ms-snap --leaks) is a sample of its
 *     own, its blocks in use and, by kind, leaked.  Labels: bytes (the block
 *     size, when the site has one size), alloc_fn, pool; and, when the
 *     report holds the sites of several processes (an ms-record --follow
 *     stream, all_processes), pid and program (its image's argv[0]'s last
 *     part).  The figures are what the records say: a sampled
 *     recording's are estimates already.
 *   - a sample's stack begins at the frame its allocations are attributed
 *     to, as in the report's tables: the allocator's wrappers (strdup,
 *     operator new, --alloc-fn) are left out, so that pprof's flat column
 *     names the function that allocated;
 *   - a location per distinct frame: its address (the ip), its mapping and
 *     a line per inline level, the innermost first, as profile.proto orders
 *     them; a function per (name, file).  A frame without a function is
 *     named module+0xoffset, as every memscope report names it;
 *   - a mapping per module (obj and build id): its build_id, as frame
 *     records give it; memory_start, its load address (a frame's ip less
 *     its offset in the module), memory_limit past the highest ip seen in
 *     it, file_offset 0; and has_functions: the frames were symbolized when
 *     they were recorded (pprof need not do it again).
 *   - time_nanos (the header's start_epoch), duration_nanos (the end's ts),
 *     period_type space/bytes with period the header's options' sample (or
 *     1: every byte counted), comments, default_sample_type inuse_space.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_pprof.h"
#include "msc_render.h"
#include "msc_util.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4 };
enum {
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

/* The sample types, in the order of a sample's values. */
enum { ALLOC_OBJECTS, ALLOC_SPACE, INUSE_OBJECTS, INUSE_SPACE, LEAKED_OBJECTS, LEAKED_SPACE, NVALUES };

static const char *const value_names[NVALUES][2] = {
	{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
	{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	{ "leaked_objects", "count" }, { "leaked_space", "bytes" },
};

struct psample {
	int pid, image;
	uint32_t stack;
	uint64_t size, size_max;
	const char *fn, *pool;
	bool from_site;			/* false: of leak records only */
	uint64_t v[NVALUES];
};

/* A location: frames[0..n) of a stack, the inline levels at one address. */
struct ploc {
	const struct msc_rframe *frames;
	unsigned n;
	uint64_t address, mapping;
	size_t funcs;			/* its lines' function ids: line_funcs[funcs..] */
};

struct pfunc {
	int64_t name, filename;
};

struct pmap {
	int64_t filename, build_id;	/* string indexes, 0: none */
	uint64_t start, limit;		/* 0: no address known */
	bool has_filenames, has_line_numbers;
};

/* Where a stack's location ids are in stack_locs. */
struct pspan {
	size_t at, n;
};

struct pprof {
	const struct msc_report *r;
	struct msc_pb_strings st;
	struct msc_arena a;			/* the keys of the indexes */
	struct msc_strmap loc_index, func_index, map_index;	/* key -> id */
	struct msc_u64map span_index;		/* stack id + 1 -> spans index */
	struct psample *samples;
	size_t nsamples, samples_cap;
	struct ploc *locs;
	size_t nlocs, locs_cap;
	uint64_t *line_funcs;
	size_t nline_funcs, line_funcs_cap;
	struct pfunc *funcs;
	size_t nfuncs, funcs_cap;
	struct pmap *maps;
	size_t nmaps, maps_cap;
	uint64_t *stack_locs;
	size_t nstack_locs, stack_locs_cap;
	struct pspan *spans;
	size_t nspans, spans_cap;
	char *key;				/* scratch for index keys */
	size_t key_len, key_cap;
	unsigned npids;				/* processes the samples are of */
	/* Samples labeled with their pid and program: of several processes,
	 * or of one that is not the recording's first (its header's: a
	 * --follow recording whose first process has no site, as the flame
	 * graphs' towers have it: render_flame.c, by_program). */
	bool labeled;
	bool oom;
};

/* ------------------------------------------------------------ samples */

static uint64_t sample_key(int pid, uint32_t stack, uint64_t size)
{
	return msc_hash_u64(msc_hash_u64(size ^ ((uint64_t)(uint32_t)pid << 32)) ^ stack) | 1;
}

static struct psample *new_sample(struct pprof *p, int pid, int image, uint32_t stack,
				  uint64_t size, uint64_t size_max, const char *fn, const char *pool)
{
	struct psample *s;

	if (MSC_GROW(p->samples, p->nsamples + 1, p->samples_cap, 256)) {
		p->oom = true;
		return NULL;
	}
	s = &p->samples[p->nsamples++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->image = image;
	s->stack = stack;
	s->size = size;
	s->size_max = size_max;
	s->fn = fn;
	s->pool = pool;
	return s;
}

/*
 * A sample per site; the leak records' blocks added to the site of their
 * stack and size, or to a sample of their own.  (A rare hash collision
 * makes two samples of one stack and size: pprof adds them up.)
 */
static int collect_samples(struct pprof *p)
{
	const struct msc_report *r = p->r;
	struct msc_u64map index;
	size_t i;

	if (msc_u64map_init(&index, r->nsites + r->nleaks + 1))
		return -ENOMEM;
	for (i = 0; i < r->nsites && !p->oom; i++) {
		const struct msc_rsite *x = &r->sites[i];
		struct psample *s = new_sample(p, x->pid, x->image, x->stack, x->size, x->size_max,
					       x->fn, x->pool);
		uint64_t key = sample_key(x->pid, x->stack, x->size);

		if (!s)
			break;
		s->from_site = true;
		s->v[ALLOC_OBJECTS] = x->allocs;
		s->v[ALLOC_SPACE] = x->bytes;
		s->v[INUSE_OBJECTS] = x->live;
		s->v[INUSE_SPACE] = x->live_bytes;
		if (!msc_u64map_get(&index, key) && msc_u64map_put(&index, key, p->nsamples))
			p->oom = true;
	}
	for (i = 0; i < r->nleaks && !p->oom; i++) {
		const struct msc_rleak *l = &r->leaks[i];
		uint64_t key = sample_key(l->pid, l->stack, l->size), *at = msc_u64map_get(&index, key);
		struct psample *s = at ? &p->samples[*at - 1] : NULL;

		if (!s || s->pid != l->pid || s->stack != l->stack || s->size != l->size) {
			s = new_sample(p, l->pid, l->image, l->stack, l->size, l->size_max, l->fn,
				       l->pool);
			if (!s)
				break;
			if (!at && msc_u64map_put(&index, key, p->nsamples))
				p->oom = true;
		}
		/* Without a site, a leak record's blocks are the ones in use
		 * (every block live at the end has a leak record). */
		if (!s->from_site) {
			msc_sat_add(&s->v[INUSE_OBJECTS], l->count);
			msc_sat_add(&s->v[INUSE_SPACE], l->bytes);
		}
		if (render_leaked_kind(l->kind)) {
			msc_sat_add(&s->v[LEAKED_OBJECTS], l->count);
			msc_sat_add(&s->v[LEAKED_SPACE], l->bytes);
		}
	}
	/* The processes they are of (an ms-record --follow stream's). */
	msc_u64map_clear(&index);
	for (i = 0; i < p->nsamples && !p->oom; i++) {
		uint64_t pid = (uint64_t)(uint32_t)p->samples[i].pid + 1;

		if ((uint32_t)p->samples[i].pid != (uint32_t)r->pid)
			p->labeled = true;
		if (msc_u64map_get(&index, pid))
			continue;
		if (msc_u64map_put(&index, pid, 1))
			p->oom = true;
		p->npids++;
	}
	msc_u64map_release(&index);
	return p->oom ? -ENOMEM : 0;
}

/* ---------------------------------------------------------- locations */

static void key_add(struct pprof *p, const char *s, size_t n)
{
	if (MSC_GROW(p->key, p->key_len + n + 2, p->key_cap, 256)) {
		p->oom = true;
		return;
	}
	memcpy(p->key + p->key_len, s, n);
	p->key_len += n;
	p->key[p->key_len++] = '\x1f';	/* the unit separator: in no name */
	p->key[p->key_len] = '\0';
}

static void key_str(struct pprof *p, const char *s)
{
	if (s)
		key_add(p, s, strlen(s));
	else
		key_add(p, "\x1e", 1);	/* not known, which "" is not */
}

/* The id of the entry of the scratch key in index, or 0 when new. */
static uint64_t lookup(struct pprof *p, struct msc_strmap *index)
{
	return p->oom ? 0 : (uint64_t)(uintptr_t)msc_strmap_get(index, p->key);
}

/* Adds the scratch key to index with id. */
static void remember(struct pprof *p, struct msc_strmap *index, uint64_t id)
{
	char *key = p->oom ? NULL : msc_arena_strndup(&p->a, p->key, p->key_len);

	if (!key || msc_strmap_put(index, key, (void *)(uintptr_t)id))
		p->oom = true;
}

static uint64_t mapping_of(struct pprof *p, const struct msc_rframe *f)
{
	uint64_t id;
	struct pmap *m;

	if (!f->obj)
		return 0;
	p->key_len = 0;
	key_str(p, f->obj);
	key_str(p, f->build_id ? f->build_id : "");
	id = lookup(p, &p->map_index);
	if (!id) {
		if (p->oom || MSC_GROW(p->maps, p->nmaps + 1, p->maps_cap, 16)) {
			p->oom = true;
			return 0;
		}
		m = &p->maps[p->nmaps++];
		m->filename = msc_pb_string(&p->st, f->obj);
		m->build_id = f->build_id ? msc_pb_string(&p->st, f->build_id) : 0;
		m->start = m->limit = 0;
		m->has_filenames = m->has_line_numbers = true;
		id = p->nmaps;
		remember(p, &p->map_index, id);
	}
	m = &p->maps[id - 1];
	if (f->ip && f->offset) {
		uint64_t ip = strtoull(f->ip, NULL, 16), off = strtoull(f->offset, NULL, 16);

		/* where the module was loaded: the same for all its frames */
		if (ip >= off && !m->start)
			m->start = ip - off;
		if (ip >= m->limit)
			m->limit = ip + 1;
	}
	m->has_filenames &= f->file != NULL;
	m->has_line_numbers &= f->line != 0;
	return id;
}

static uint64_t function_of(struct pprof *p, const struct msc_rframe *f)
{
	char label[512];
	const char *name = f->fn;
	uint64_t id;
	struct pfunc *fn;

	if (!name) {
		snprintf(label, sizeof(label), "%s+%s", f->obj ? msc_base_name(f->obj) : "?",
			 f->offset ? f->offset : "?");
		name = label;
	}
	p->key_len = 0;
	key_str(p, name);
	key_str(p, f->file);
	id = lookup(p, &p->func_index);
	if (id)
		return id;
	if (p->oom || MSC_GROW(p->funcs, p->nfuncs + 1, p->funcs_cap, 256)) {
		p->oom = true;
		return 0;
	}
	fn = &p->funcs[p->nfuncs++];
	fn->name = msc_pb_string(&p->st, name);
	fn->filename = msc_pb_string(&p->st, f->file);
	remember(p, &p->func_index, p->nfuncs);
	return p->nfuncs;
}

/* The location of the inline levels frames[0..n), added when new. */
static uint64_t location_of(struct pprof *p, const struct msc_rframe *frames, unsigned n)
{
	const struct msc_rframe *outer = &frames[n - 1];
	struct ploc *l;
	uint64_t id;
	unsigned i;
	char line[16];

	p->key_len = 0;
	key_str(p, outer->ip);
	key_str(p, outer->obj);
	key_str(p, outer->offset);
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "%u", frames[i].line);
		key_str(p, frames[i].fn);
		key_str(p, frames[i].file);
		key_str(p, line);
	}
	id = lookup(p, &p->loc_index);
	if (id)
		return id;
	if (p->oom || MSC_GROW(p->locs, p->nlocs + 1, p->locs_cap, 256)) {
		p->oom = true;
		return 0;
	}
	remember(p, &p->loc_index, p->nlocs + 1);
	l = &p->locs[p->nlocs++];
	l->frames = frames;
	l->n = n;
	l->address = 0;
	if (outer->ip)
		l->address = strtoull(outer->ip, NULL, 16);
	l->mapping = 0;
	for (i = 0; i < n; i++) {
		uint64_t m = mapping_of(p, &frames[i]);

		if (m)
			l->mapping = m;
	}
	l->funcs = p->nline_funcs;
	if (MSC_GROW(p->line_funcs, p->nline_funcs + n, p->line_funcs_cap, 256)) {
		p->oom = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		p->line_funcs[p->nline_funcs++] = function_of(p, &frames[i]);
	return p->nlocs;
}

/* The location ids of a stack, leaf first, from its attributed frame. */
static const struct pspan *stack_span(struct pprof *p, uint32_t stack)
{
	const struct msc_rstack *s = msc_report_stack(p->r, stack);
	uint64_t *at = msc_u64map_get(&p->span_index, (uint64_t)stack + 1);
	struct pspan *span;
	unsigned i, j, shown = msc_report_stack_shown(s);

	if (at)
		return &p->spans[*at];
	if (MSC_GROW(p->spans, p->nspans + 1, p->spans_cap, 256) ||
	    msc_u64map_put(&p->span_index, (uint64_t)stack + 1, p->nspans)) {
		p->oom = true;
		return NULL;
	}
	span = &p->spans[p->nspans++];
	span->at = p->nstack_locs;
	span->n = 0;
	for (i = s ? s->attr : 0; i < shown && !p->oom; i = j + 1) {
		uint64_t id;

		/* an inlined frame is followed by its caller, at the same ip */
		for (j = i; j + 1 < shown && s->frames[j].inlined; j++)
			;
		id = location_of(p, &s->frames[i], j - i + 1);
		span = &p->spans[p->nspans - 1];
		if (MSC_GROW(p->stack_locs, p->nstack_locs + 1, p->stack_locs_cap, 1024)) {
			p->oom = true;
			break;
		}
		p->stack_locs[p->nstack_locs++] = id;
		span->n++;
	}
	return p->oom ? NULL : span;
}

/* ----------------------------------------------------------- encoding */

static void value_type(struct msc_pb *b, unsigned field, int64_t type, int64_t unit)
{
	size_t m = msc_pb_begin(b, field);

	msc_pb_uint(b, VALUE_TYPE_TYPE, (uint64_t)type);
	msc_pb_uint(b, VALUE_TYPE_UNIT, (uint64_t)unit);
	msc_pb_end(b, m);
}

static void label(struct msc_pb *b, int64_t key, int64_t str, int64_t num, int64_t unit)
{
	size_t m = msc_pb_begin(b, SAMPLE_LABEL);

	msc_pb_uint(b, LABEL_KEY, (uint64_t)key);
	msc_pb_uint(b, LABEL_STR, (uint64_t)str);
	msc_pb_uint(b, LABEL_NUM, (uint64_t)num);
	msc_pb_uint(b, LABEL_NUM_UNIT, (uint64_t)unit);
	msc_pb_end(b, m);
}

/* Its comments, in the string table before it is written. */
static void comments(struct pprof *p, int64_t *c, unsigned *n)
{
	const struct msc_report *r = p->r;
	char buf[1024];

	*n = 0;
	/* "memscope: ms-record (launch): ./app" */
	snprintf(buf, sizeof(buf), "memscope: %s%s%s%s%s%s", r->tool ? r->tool : "?",
		 r->mode ? " (" : "", r->mode ? r->mode : "", r->mode ? ")" : "",
		 r->argv ? ": " : "", r->argv ? r->argv : "");
	c[(*n)++] = msc_pb_string(&p->st, buf);
	if (r->sample) {
		snprintf(buf, sizeof(buf),
			 "sampled: a block in every %" PRIu64 " bytes allocated, on average; "
			 "the figures are estimates", r->sample);
		c[(*n)++] = msc_pb_string(&p->st, buf);
	}
	if (!r->complete)
		c[(*n)++] = msc_pb_string(&p->st, "no end record: the stream was cut short; "
						  "the profile covers what it holds");
	if (p->npids > 1) {
		snprintf(buf, sizeof(buf),
			 "%u processes (ms-record --follow): each sample is labeled with its "
			 "process's pid and program", p->npids);
		c[(*n)++] = msc_pb_string(&p->st, buf);
	} else if (p->labeled) {
		c[(*n)++] = msc_pb_string(&p->st, "the samples are of a process the first one started "
						  "(ms-record --follow): each is labeled with its pid "
						  "and program");
	}
	c[(*n)++] = msc_pb_string(&p->st, "stacks begin where ms-report attributes allocations: "
					  "allocator wrappers are left out");
}

static void encode(struct pprof *p, struct msc_pb *b)
{
	const struct msc_report *r = p->r;
	unsigned nvalues = r->nleaks ? NVALUES : LEAKED_OBJECTS, i, ncomments;
	int64_t types[NVALUES][2], k_bytes, k_alloc_fn, k_pool, k_pid, k_program, space, bytes;
	int64_t comment[5];
	size_t n, m;

	for (i = 0; i < nvalues; i++) {
		types[i][0] = msc_pb_string(&p->st, value_names[i][0]);
		types[i][1] = msc_pb_string(&p->st, value_names[i][1]);
	}
	k_bytes = msc_pb_string(&p->st, "bytes");
	k_alloc_fn = msc_pb_string(&p->st, "alloc_fn");
	k_pool = msc_pb_string(&p->st, "pool");
	k_pid = p->labeled ? msc_pb_string(&p->st, "pid") : 0;
	k_program = p->labeled ? msc_pb_string(&p->st, "program") : 0;
	space = msc_pb_string(&p->st, "space");
	bytes = k_bytes;	/* the unit, the same string */
	comments(p, comment, &ncomments);

	for (i = 0; i < nvalues; i++)
		value_type(b, PROFILE_SAMPLE_TYPE, types[i][0], types[i][1]);
	for (n = 0; n < p->nsamples; n++) {
		const struct psample *s = &p->samples[n];
		const struct pspan *span = stack_span(p, s->stack);

		if (!span)
			break;
		m = msc_pb_begin(b, PROFILE_SAMPLE);
		/* an empty stack has no locations, and maybe no array */
		msc_pb_packed(b, SAMPLE_LOCATION_ID, span->n ? p->stack_locs + span->at : NULL, span->n);
		{
			/* int64 in profile.proto: held at INT64_MAX, not negative */
			uint64_t v[NVALUES];

			for (i = 0; i < nvalues; i++)
				v[i] = (uint64_t)msc_clamp_i64(s->v[i]);
			msc_pb_packed(b, SAMPLE_VALUE, v, nvalues);
		}
		if (s->size_max <= s->size)
			label(b, k_bytes, 0, (int64_t)s->size, bytes);
		if (s->fn)
			label(b, k_alloc_fn, msc_pb_string(&p->st, s->fn), 0, 0);
		if (s->pool)
			label(b, k_pool, msc_pb_string(&p->st, s->pool), 0, 0);
		if (p->labeled) {
			const char *name = msc_report_program(r, s->image);

			label(b, k_pid, 0, s->pid, 0);
			if (name)
				label(b, k_program, msc_pb_string(&p->st, name), 0, 0);
		}
		msc_pb_end(b, m);
	}
	for (n = 0; n < p->nmaps; n++) {
		const struct pmap *x = &p->maps[n];

		m = msc_pb_begin(b, PROFILE_MAPPING);
		msc_pb_uint(b, MAPPING_ID, n + 1);
		if (x->start && x->limit > x->start) {
			msc_pb_uint(b, MAPPING_MEMORY_START, x->start);
			msc_pb_uint(b, MAPPING_MEMORY_LIMIT, x->limit);
		}
		msc_pb_uint(b, MAPPING_FILENAME, (uint64_t)x->filename);
		if (x->build_id)
			msc_pb_uint(b, MAPPING_BUILD_ID, (uint64_t)x->build_id);
		msc_pb_uint(b, MAPPING_HAS_FUNCTIONS, 1);
		msc_pb_uint(b, MAPPING_HAS_FILENAMES, x->has_filenames);
		msc_pb_uint(b, MAPPING_HAS_LINE_NUMBERS, x->has_line_numbers);
		/* inline levels come from the debug information lines come from */
		msc_pb_uint(b, MAPPING_HAS_INLINE_FRAMES, x->has_line_numbers);
		msc_pb_end(b, m);
	}
	for (n = 0; n < p->nlocs; n++) {
		const struct ploc *l = &p->locs[n];

		m = msc_pb_begin(b, PROFILE_LOCATION);
		msc_pb_uint(b, LOCATION_ID, n + 1);
		msc_pb_uint(b, LOCATION_MAPPING_ID, l->mapping);
		msc_pb_uint(b, LOCATION_ADDRESS, l->address);
		for (i = 0; i < l->n; i++) {
			size_t ln = msc_pb_begin(b, LOCATION_LINE);

			msc_pb_uint(b, LINE_FUNCTION_ID, p->line_funcs[l->funcs + i]);
			msc_pb_uint(b, LINE_LINE, l->frames[i].line);
			msc_pb_end(b, ln);
		}
		msc_pb_end(b, m);
	}
	for (n = 0; n < p->nfuncs; n++) {
		const struct pfunc *f = &p->funcs[n];

		m = msc_pb_begin(b, PROFILE_FUNCTION);
		msc_pb_uint(b, FUNCTION_ID, n + 1);
		msc_pb_uint(b, FUNCTION_NAME, (uint64_t)f->name);
		msc_pb_uint(b, FUNCTION_SYSTEM_NAME, (uint64_t)f->name);
		msc_pb_uint(b, FUNCTION_FILENAME, (uint64_t)f->filename);
		msc_pb_end(b, m);
	}
	/* Every string is in the table by now: the table goes last but for
	 * fields that name strings already in it. */
	msc_pb_strings_write(&p->st, b, PROFILE_STRING_TABLE);
	msc_pb_uint(b, PROFILE_TIME_NANOS, r->start_epoch);
	msc_pb_uint(b, PROFILE_DURATION_NANOS, r->duration);
	value_type(b, PROFILE_PERIOD_TYPE, space, bytes);
	msc_pb_uint(b, PROFILE_PERIOD, r->sample ? r->sample : 1);
	for (i = 0; i < ncomments; i++)
		msc_pb_uint(b, PROFILE_COMMENT, (uint64_t)comment[i]);
	msc_pb_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)types[INUSE_SPACE][0]);
}

/* ---------------------------------------------------------------- entry */

const char *msc_report_pprof_unfit(const struct msc_report *r)
{
	if (!r->mode)
		return NULL;
	if (!strcmp(r->mode, "diff"))
		return "an ms-diff stream holds changes, not a heap: "
		       "give go tool pprof -diff_base the profiles of its two inputs";
	if (!strcmp(r->mode, "poll") || !strcmp(r->mode, "top"))
		return "the stream holds /proc figures, no allocation stacks to profile";
	if (!strcmp(r->mode, "snapshot") && !r->nsites && !r->nleaks)
		return "the snapshot holds no heap by site (ms-record was not recording the process)";
	return NULL;
}

int render_pprof(struct msc_report *r, const struct msc_report_opts *o, FILE *out)
{
	struct pprof p;
	struct msc_pb b;
	int ret;

	(void)o;
	memset(&p, 0, sizeof(p));
	p.r = r;
	msc_arena_init(&p.a);
	msc_pb_init(&b);
	ret = msc_pb_strings_init(&p.st);
	if (!ret && (msc_strmap_init(&p.loc_index, 1024) || msc_strmap_init(&p.func_index, 1024) ||
		     msc_strmap_init(&p.map_index, 16) || msc_u64map_init(&p.span_index, 1024)))
		ret = -ENOMEM;
	if (!ret)
		ret = collect_samples(&p);
	if (!ret) {
		encode(&p, &b);
		ret = p.oom || p.st.oom ? -ENOMEM : msc_pb_gzip(&b, out);
	}
	msc_pb_release(&b);
	free(p.samples);
	free(p.locs);
	free(p.line_funcs);
	free(p.funcs);
	free(p.maps);
	free(p.stack_locs);
	free(p.spans);
	free(p.key);
	msc_u64map_release(&p.span_index);
	msc_strmap_release(&p.loc_index);
	msc_strmap_release(&p.func_index);
	msc_strmap_release(&p.map_index);
	msc_pb_strings_release(&p.st);
	msc_arena_release(&p.a);
	return ret;
}
