/* SPDX-License-Identifier: MIT */
/*
 * pool: a fixed-size object pool annotated with memscope.h, so that its
 * objects are profiled like malloc'ed blocks.
 *
 * Known answer: the pool takes one 65,520-byte chunk from malloc
 * (pool_create, freed at the end); 10,000 objects of 48 bytes come from pool_get, of which
 * all but 5 (from leak_some) go back with pool_put.  Under ms-record, those 5
 * are leaks of 48 bytes, allocation function "custom", stack pool_get <-
 * leak_some, and nothing else leaks.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../shim/memscope.h"

#define OBJ 48
#define NOBJ 1365	/* 64 KiB / 48 */
#define NOINLINE __attribute__((noinline))

struct pool {
	char *chunk;
	void *free_list;
	unsigned next;
};

static struct pool *pool_create(void)
{
	struct pool *p = calloc(1, sizeof(*p));

	p->chunk = malloc(NOBJ * OBJ);
	return p;
}

NOINLINE static void *pool_get(struct pool *p)
{
	void *b;

	if (p->free_list) {
		b = p->free_list;
		p->free_list = *(void **)b;
	} else {
		b = p->chunk + (size_t)p->next++ * OBJ;
	}
	MEMSCOPE_ALLOC(b, OBJ);
	return b;
}

NOINLINE static void pool_put(struct pool *p, void *b)
{
	MEMSCOPE_FREE(b);
	*(void **)b = p->free_list;
	p->free_list = b;
}

volatile unsigned count;

NOINLINE static void leak_some(struct pool *p)
{
	unsigned i;

	for (i = 0; i < 5; i++)
		memset(pool_get(p), 0, OBJ);	/* and forgotten */
	count++;
}

int main(void)
{
	static const char msg[] = "pool: done\n";
	struct pool *p = pool_create();
	/* On the heap: a stack array would leave stale pointers to the
	 * objects in stack memory that is still scanned at exit. */
	void **held = malloc(100 * sizeof(*held));
	unsigned i, j;

	for (i = 0; i < 100; i++) {
		for (j = 0; j < 100; j++)
			held[j] = pool_get(p);
		for (j = 0; j < 100; j++)
			pool_put(p, held[j]);
	}
	free(held);
	leak_some(p);
	free(p->chunk);
	free(p);
	return write(1, msg, sizeof(msg) - 1) < 0;
}
