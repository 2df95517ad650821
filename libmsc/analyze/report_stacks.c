/* SPDX-License-Identifier: MIT */
/*
 * Reports from memscope streams: stacks, their frames read once the whole
 * stream is, and what the report model answers about a stack.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "msc_format.h"
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
