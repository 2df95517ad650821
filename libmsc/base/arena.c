/* SPDX-License-Identifier: MIT */
/* Bump allocator with reset: see msc_arena.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msc_arena.h"

struct msc_arena_chunk {
	struct msc_arena_chunk *next;
	size_t size;			/* usable bytes in data[] */
	_Alignas(16) unsigned char data[];
};

void msc_arena_init(struct msc_arena *a)
{
	a->head = NULL;
	a->used = 0;
	a->total = 0;
}

void msc_arena_release(struct msc_arena *a)
{
	struct msc_arena_chunk *c = a->head;

	while (c) {
		struct msc_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	msc_arena_init(a);
}

void msc_arena_reset(struct msc_arena *a)
{
	struct msc_arena_chunk *c = a->head;
	size_t sum = 0;

	if (c && c->next) {
		/*
		 * The last cycle needed several chunks: replace them by one
		 * chunk as large as all of them, so that the next cycle of the
		 * same size needs no malloc at all.
		 */
		while (c) {
			struct msc_arena_chunk *next = c->next;
			sum += c->size;
			free(c);
			c = next;
		}
		a->head = malloc(sizeof(*c) + sum);
		if (a->head) {
			a->head->size = sum;
			a->head->next = NULL;
		}
	}
	a->used = 0;
	a->total = 0;
}

void *msc_arena_alloc(struct msc_arena *a, size_t size)
{
	size_t need = (size + 15) & ~(size_t)15;
	struct msc_arena_chunk *c;
	void *p;

	if (need < size) {
		errno = ENOMEM;
		return NULL;
	}
	if (!a->head || a->head->size - a->used < need) {
		size_t csize = need > MSC_ARENA_CHUNK ? need : MSC_ARENA_CHUNK;

		if (csize > SIZE_MAX - sizeof(*c)) {
			errno = ENOMEM;
			return NULL;
		}
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->size = csize;
		c->next = a->head;
		a->head = c;
		a->used = 0;
	}
	p = a->head->data + a->used;
	a->used += need;
	a->total += need;
	return p;
}

void *msc_arena_zalloc(struct msc_arena *a, size_t size)
{
	void *p = msc_arena_alloc(a, size);

	if (p)
		memset(p, 0, size);
	return p;
}

char *msc_arena_strndup(struct msc_arena *a, const char *s, size_t len)
{
	char *p = msc_arena_alloc(a, len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *msc_arena_strdup(struct msc_arena *a, const char *s)
{
	return msc_arena_strndup(a, s, strlen(s));
}
