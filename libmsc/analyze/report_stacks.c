/* SPDX-License-Identifier: MIT */
/*
 * Reports from memscope streams: stacks, their frames read once the whole
 * stream is, and what the report model answers about a stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_format.h"
#include "msc_hash.h"
#include "msc_report.h"
#include "msc_stream.h"
#include "msc_util.h"
#include "report_internal.h"

int report_load_stack(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err)
{
	struct msc_rstack *s;
	uint64_t id;
	int ret;

	if (msc_rec_u64(rec, "id", &id) || !id || id > UINT32_MAX)
		return msc_rec_err(err, rec, -EINVAL, "stack record needs a positive integer \"id\"");
	s = msc_arena_zalloc(&r->arena, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->id = (uint32_t)id;
	/* Its frames are read once the stream is, if a record names it. */
	ret = msc_stackdefs_stack(&r->defs, rec, &s->def, err);
	if (ret)
		return ret;
	return msc_u64map_put(&r->stacks, id, (uint64_t)(uintptr_t)s);
}

/*
 * A program's own allocation wrappers.  A frame is one when it is where
 * the stacks of three callers or more are attributed and no stack has it
 * within WRAPPER_SEEN_ABOVE frames above that frame (calling something
 * else that allocates): then the
 * allocation is its callers', one level up, and the next level is looked
 * at again.  A named frame is its function, an unnamed one its address.
 */
#define WRAPPER_CALLERS 3
#define WRAPPER_LEVELS 3
/* How far above its site a frame is looked for: a stack's whole depth,
 * in a stream of deep stacks, would be quadratic. */
#define WRAPPER_SEEN_ABOVE 32

struct wrapper_seen {
	uint64_t callers[WRAPPER_CALLERS];
	unsigned ncallers;
	bool calls_more;
	const struct msc_rframe *f;
};

static void frame_key(char *buf, size_t n, const struct msc_rframe *f)
{
	if (f->fn)
		snprintf(buf, n, "%s\x1f%s", f->fn, f->obj ? f->obj : "");
	else
		snprintf(buf, n, "%s\x1f%s", f->obj ? f->obj : "", f->offset ? f->offset : "");
}

static bool may_be_wrapper(const struct msc_rstack *s)
{
	return s->attr + 1 < s->n && !msc_report_runtime_fn(s->frames[s->attr].fn) &&
	       !msc_report_runtime_fn(s->frames[s->attr + 1].fn) &&
	       !(s->frames[s->attr].fn && !strcmp(s->frames[s->attr].fn, "main"));
}

static int find_level(struct msc_rstack **list, size_t n, struct msc_report *r, struct msc_arena *a,
		      bool *found)
{
	struct msc_strmap seen;
	char key[1024];
	size_t i;
	unsigned k;

	*found = false;
	if (msc_strmap_init(&seen, 256))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct msc_rstack *s = list[i];
		struct wrapper_seen *w;
		uint64_t caller;

		if (!may_be_wrapper(s))
			continue;
		frame_key(key, sizeof(key), &s->frames[s->attr]);
		w = msc_strmap_get(&seen, key);
		if (!w) {
			const char *k2 = msc_arena_strdup(a, key);

			w = msc_arena_zalloc(a, sizeof(*w));
			if (!k2 || !w || msc_strmap_put(&seen, k2, w))
				goto oom;
			w->f = &s->frames[s->attr];
		}
		frame_key(key, sizeof(key), &s->frames[s->attr + 1]);
		caller = msc_hash_bytes(key, strlen(key), 0);
		for (k = 0; k < w->ncallers && w->callers[k] != caller; k++)
			;
		if (k == w->ncallers && k < WRAPPER_CALLERS)
			w->callers[w->ncallers++] = caller;
	}
	for (i = 0; i < n; i++) {
		const struct msc_rstack *s = list[i];
		unsigned j;

		for (j = s->attr + 1; j < s->n && j <= s->attr + WRAPPER_SEEN_ABOVE; j++) {
			struct wrapper_seen *w;

			frame_key(key, sizeof(key), &s->frames[j]);
			if ((w = msc_strmap_get(&seen, key)))
				w->calls_more = true;
		}
	}
	for (i = 0; i < n; i++) {
		struct msc_rstack *s = list[i];
		struct wrapper_seen *w;

		if (!may_be_wrapper(s))
			continue;
		frame_key(key, sizeof(key), &s->frames[s->attr]);
		w = msc_strmap_get(&seen, key);
		if (!w || w->calls_more || w->ncallers < WRAPPER_CALLERS)
			continue;
		if (w->f) {
			char label[1024];
			const char **more = msc_arena_alloc(&r->arena, (r->nwrappers + 1) * sizeof(*more));

			if (!more)
				goto oom;
			if (r->nwrappers)
				memcpy(more, r->wrappers, r->nwrappers * sizeof(*more));
			/* A function by its name, an unnamed frame by its address. */
			if (w->f->fn)
				snprintf(label, sizeof(label), "%s (%s)", w->f->fn,
					 w->f->obj ? msc_base_name(w->f->obj) : "?");
			else
				msc_frame_label(label, sizeof(label), w->f);
			if (!(more[r->nwrappers] = msc_arena_strdup(&r->arena, label)))
				goto oom;
			r->wrappers = more;
			r->nwrappers++;
			w->f = NULL;
		}
		s->attr++;
		*found = true;
	}
	msc_strmap_release(&seen);
	return 0;
oom:
	msc_strmap_release(&seen);
	return -ENOMEM;
}

/* The stacks of the report's sites and leaks, once each: those of an
 * image the report no longer describes (before an exec) have no say. */
static struct msc_rstack **report_stacks(struct msc_report *r, size_t *n)
{
	struct msc_rstack **list = calloc(r->nsites + r->nleaks + 1, sizeof(*list));
	struct msc_u64map seen;
	size_t i;

	*n = 0;
	if (!list || msc_u64map_init(&seen, r->nsites + r->nleaks + 1)) {
		free(list);
		return NULL;
	}
	for (i = 0; i < r->nsites + r->nleaks; i++) {
		uint32_t id = i < r->nsites ? r->sites[i].stack : r->leaks[i - r->nsites].stack;
		struct msc_rstack *s = (struct msc_rstack *)msc_report_stack(r, id);

		if (!s || !s->frames || msc_u64map_get(&seen, id))
			continue;
		if (msc_u64map_put(&seen, id, 1)) {
			free(list);
			list = NULL;
			break;
		}
		list[(*n)++] = s;
	}
	msc_u64map_release(&seen);
	return list;
}

static int find_wrappers(struct msc_report *r)
{
	struct msc_arena a;
	struct msc_rstack **list;
	bool found = true;
	unsigned level;
	size_t n;
	int ret = 0;

	if (!(list = report_stacks(r, &n)))
		return -ENOMEM;
	msc_arena_init(&a);
	for (level = 0; level < WRAPPER_LEVELS && found && !ret; level++) {
		ret = find_level(list, n, r, &a, &found);
		msc_arena_reset(&a);
	}
	msc_arena_release(&a);
	free(list);
	return ret;
}

/* Reads the frames of the stacks records named, deepest first (a chain of
 * stacks shares one array): linear in the stream, where reading every
 * stack's as it came was quadratic in a chain's depth. */
int report_resolve_stacks(struct msc_report *r, struct msc_err *err)
{
	struct msc_stackdef **defs = NULL;
	size_t n = 0, cap = 0, i;
	int ret = 0;

	for (i = 0; i <= r->stacks.mask; i++) {
		struct msc_rstack *s = (struct msc_rstack *)(uintptr_t)r->stacks.slots[i].val;

		if (!r->stacks.slots[i].key || !s->used || s->frames)
			continue;
		if (MSC_GROW(defs, n + 1, cap, 256)) {
			ret = msc_err_set(err, -ENOMEM, "out of memory");
			goto out;
		}
		defs[n++] = s->def;
	}
	ret = msc_stackdefs_resolve(&r->defs, defs, n, err);
	if (ret)
		goto out;
	for (i = 0; i <= r->stacks.mask; i++) {
		struct msc_rstack *s = (struct msc_rstack *)(uintptr_t)r->stacks.slots[i].val;

		if (!r->stacks.slots[i].key || !s->used || s->frames)
			continue;
		s->frames = s->def->frames;
		s->n = s->def->n;
		s->attr = msc_stack_attr(s->frames, s->n, r->alloc_fns, r->nalloc_fns);
	}
	if (!r->no_auto_wrappers && find_wrappers(r))
		ret = msc_err_set(err, -ENOMEM, "out of memory");
out:
	free(defs);
	return ret;
}

const struct msc_rstack *msc_report_stack(const struct msc_report *r, uint32_t id)
{
	uint64_t *v = msc_u64map_get(&r->stacks, id);

	return v ? (const struct msc_rstack *)(uintptr_t)*v : NULL;
}

bool msc_report_runtime_fn(const char *fn)
{
	static const char *const roots[] = { "_start", "__libc_start_main", "__libc_start_main_impl",
					      "__libc_start_call_main", "start_thread", "clone", "clone3" };
	size_t i;

	for (i = 0; fn && i < ARRAY_SIZE(roots); i++)
		if (!strcmp(fn, roots[i]))
			return true;
	return false;
}

bool msc_report_stack_truncated(const struct msc_report *r, const struct msc_rstack *s)
{
	unsigned i, calls = 0;

	if (!r->depth || !s || s->n < r->depth || msc_report_runtime_fn(s->frames[s->n - 1].fn))
		return false;
	for (i = 0; i < s->n && calls < r->depth; i++)
		calls += !s->frames[i].inlined;
	return calls >= r->depth;
}

unsigned msc_report_stack_shown(const struct msc_rstack *s)
{
	unsigned i, calls = 0;

	for (i = 0; s && i < s->n; i++)
		if (!s->frames[i].inlined && ++calls > MSC_REPORT_SHOWN_CALLS)
			break;
	return i;
}
