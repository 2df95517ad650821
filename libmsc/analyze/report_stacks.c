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

/* A wrapper found: named in the report ("fn (obj)", or an unnamed frame's
 * label). */
static void wrapper_found(void *ctx, const struct msc_rframe *f)
{
	struct msc_report *r = ctx;
	const char **more = msc_arena_alloc(&r->arena, (r->nwrappers + 1) * sizeof(*more));
	char label[1024];

	if (!more)
		return;
	if (r->nwrappers)
		memcpy(more, r->wrappers, r->nwrappers * sizeof(*more));
	if (f->fn)
		snprintf(label, sizeof(label), "%s (%s)", f->fn, f->obj ? msc_base_name(f->obj) : "?");
	else
		msc_frame_label(label, sizeof(label), f);
	if (!(more[r->nwrappers] = msc_arena_strdup(&r->arena, label)))
		return;
	r->wrappers = more;
	r->nwrappers++;
}

static int find_wrappers(struct msc_report *r)
{
	struct msc_rstack **list;
	struct msc_wstack *ws;
	size_t n, i;
	int ret;

	if (!(list = report_stacks(r, &n)))
		return -ENOMEM;
	ws = calloc(n + 1, sizeof(*ws));
	if (!ws) {
		free(list);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		ws[i] = (struct msc_wstack){ list[i]->frames, list[i]->n, list[i]->attr };
	ret = msc_find_wrappers(ws, n, wrapper_found, r, NULL);
	for (i = 0; i < n; i++)
		list[i]->attr = ws[i].attr;
	free(ws);
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
	return msc_runtime_fn(fn);
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
