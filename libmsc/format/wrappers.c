/* SPDX-License-Identifier: MIT */
/* A program's own allocation wrappers, found in its stacks: see msc_format.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_arena.h"
#include "msc_format.h"
#include "msc_hash.h"

/*
 * A frame is a wrapper when it is where the stacks of three callers or
 * more are attributed and no stack has it within WRAPPER_SEEN_ABOVE frames
 * above that frame (calling something else that allocates): then the
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
	const struct msc_rframe *f;	/* NULL once said */
};

bool msc_runtime_fn(const char *fn)
{
	static const char *const roots[] = { "_start", "__libc_start_main", "__libc_start_main_impl",
					      "__libc_start_call_main", "start_thread", "clone", "clone3" };
	size_t i;

	for (i = 0; fn && i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(fn, roots[i]))
			return true;
	return false;
}

static void frame_key(char *buf, size_t n, const struct msc_rframe *f)
{
	if (f->fn)
		snprintf(buf, n, "%s\x1f%s", f->fn, f->obj ? f->obj : "");
	else
		snprintf(buf, n, "%s\x1f%s", f->obj ? f->obj : "", f->offset ? f->offset : "");
}

static bool may_be_wrapper(const struct msc_wstack *s)
{
	return s->attr + 1 < s->n && !msc_runtime_fn(s->frames[s->attr].fn) &&
	       !msc_runtime_fn(s->frames[s->attr + 1].fn) &&
	       !(s->frames[s->attr].fn && !strcmp(s->frames[s->attr].fn, "main"));
}

static int find_level(struct msc_wstack *list, size_t n, struct msc_arena *a, struct msc_strmap *m,
		      bool *found, void (*said)(void *ctx, const struct msc_rframe *f), void *ctx)
{
	char key[1024];
	size_t i;
	unsigned k;

	*found = false;
	/* Each attributed frame's callers. */
	for (i = 0; i < n; i++) {
		const struct msc_wstack *s = &list[i];
		struct wrapper_seen *w;
		uint64_t caller;

		if (!may_be_wrapper(s))
			continue;
		frame_key(key, sizeof(key), &s->frames[s->attr]);
		w = msc_strmap_get(m, key);
		if (!w) {
			const char *k2 = msc_arena_strdup(a, key);

			w = msc_arena_zalloc(a, sizeof(*w));
			if (!k2 || !w || msc_strmap_put(m, k2, w))
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
	/* Those seen above another site call more than the allocator. */
	for (i = 0; i < n; i++) {
		const struct msc_wstack *s = &list[i];
		unsigned j;

		for (j = s->attr + 1; j < s->n && j <= s->attr + WRAPPER_SEEN_ABOVE; j++) {
			struct wrapper_seen *w;

			frame_key(key, sizeof(key), &s->frames[j]);
			if ((w = msc_strmap_get(m, key)))
				w->calls_more = true;
		}
	}
	for (i = 0; i < n; i++) {
		struct msc_wstack *s = &list[i];
		struct wrapper_seen *w;

		if (!may_be_wrapper(s))
			continue;
		frame_key(key, sizeof(key), &s->frames[s->attr]);
		w = msc_strmap_get(m, key);
		if (!w || w->calls_more || w->ncallers < WRAPPER_CALLERS)
			continue;
		if (w->f) {
			if (said)
				said(ctx, w->f);
			w->f = NULL;
		}
		s->attr++;
		*found = true;
	}
	return 0;
oom:
	return -ENOMEM;
}

void msc_wscratch_release(struct msc_wscratch *s)
{
	if (!s->ready)
		return;
	msc_arena_release(&s->arena);
	msc_strmap_release(&s->seen);
	s->ready = false;
}

int msc_find_wrappers(struct msc_wstack *list, size_t n, void (*said)(void *ctx, const struct msc_rframe *f),
		      void *ctx, struct msc_wscratch *scratch)
{
	struct msc_wscratch own = { .ready = false };
	struct msc_wscratch *s = scratch ? scratch : &own;
	bool found = true;
	unsigned level;
	int ret = 0;

	if (!s->ready) {
		msc_arena_init(&s->arena);
		if (msc_strmap_init(&s->seen, 256))
			return -ENOMEM;
		s->ready = true;
	}
	for (level = 0; level < WRAPPER_LEVELS && found && !ret; level++) {
		/* (a table that had to grow keeps its size for the next) */
		msc_strmap_clear(&s->seen);
		ret = find_level(list, n, &s->arena, &s->seen, &found, said, ctx);
		msc_arena_reset(&s->arena);
	}
	if (!scratch)
		msc_wscratch_release(&own);
	return ret;
}
