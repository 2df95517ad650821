/* SPDX-License-Identifier: MIT */
/*
 * ms-top: the mappings of the process being inspected, from its smaps,
 * grouped as ms-snap --groups groups them (msc_mapping_group: [heap],
 * [stack], [anon], one group per file).  Only this process's smaps is read,
 * at each refresh, into an arena reset each time.
 */
#include <errno.h>
#include <string.h>

#include "msc_snap.h"
#include "msc_util.h"
#include "top.h"

void top_inspect_init(struct top_inspect *in)
{
	memset(in, 0, sizeof(*in));
	msc_arena_init(&in->arena);
}

void top_inspect_release(struct top_inspect *in)
{
	msc_arena_release(&in->arena);
}

static int add_mapping(const struct msc_mapping *m, void *arg)
{
	struct top_inspect *in = arg;
	const char *kind, *name = msc_mapping_group(m, &kind);
	struct top_group *g = NULL;
	size_t i;

	/* a process has tens of groups: a linear search is cheap enough */
	for (i = in->ngroups; i-- > 0;)
		if (strcmp(in->groups[i].name, name) == 0) {
			g = &in->groups[i];
			break;
		}
	if (!g) {
		if (in->ngroups == in->cap) {
			size_t cap = in->cap ? in->cap * 2 : 64;
			struct top_group *ng = msc_arena_alloc(&in->arena, cap * sizeof(*ng));

			if (!ng)
				return -ENOMEM;
			if (in->ngroups)
				memcpy(ng, in->groups, in->ngroups * sizeof(*ng));
			in->groups = ng;
			in->cap = cap;
		}
		g = &in->groups[in->ngroups++];
		memset(g, 0, sizeof(*g));
		g->name = msc_arena_strdup(&in->arena, name);
		g->kind = kind;
		if (!g->name)
			return -ENOMEM;
	}
	g->count++;
	g->size += m->end - m->start;
	g->rss += m->mem.rss;
	g->pss += m->mem.pss;
	g->private_dirty += m->mem.private_dirty;
	g->private_clean += m->mem.private_clean;
	g->swap += m->mem.swap;
	return 0;
}

static int cmp_rss(const void *a, const void *b)
{
	const struct top_group *x = a, *y = b;

	if (x->rss != y->rss)
		return x->rss > y->rss ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

int top_inspect_read(struct top *t, struct top_inspect *in)
{
	int ret;

	msc_arena_reset(&in->arena);
	in->groups = NULL;
	in->ngroups = in->cap = 0;
	in->ts = msc_now_monotonic();
	ret = msc_proc_smaps(&t->fs, in->pid, add_mapping, in, NULL);
	if (ret == -ENODATA)
		ret = 0;
	top_sort(in->groups, in->ngroups, sizeof(*in->groups), cmp_rss);
	in->error = ret;
	return ret;
}
