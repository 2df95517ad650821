/* SPDX-License-Identifier: MIT */
/*
 * pools: three named object pools and a growable buffer, annotated with
 * memscope.h's pool API (MEMSCOPE_POOL_*) and MEMSCOPE_REALLOC.
 *
 * Known answer, under ms-record:
 *   - "frames" (64-byte objects): 1,000 handed out and given back by
 *     churn_frames, 3 more from leak_frames never given back: 3 leaks of
 *     64 bytes, pool "frames", stack pool_get <- leak_frames.
 *   - "nodes" (24-byte objects): 4 from leak_nodes never given back:
 *     4 leaks of 24 bytes, pool "nodes", stack pool_get <- leak_nodes.
 *   - "strings" (32-byte objects): 50 from fill_strings, 40 given back, and
 *     the pool destroyed with 10 still in it: those are freed by the
 *     destroy, not leaked (the site: 50 allocations, 50 frees).
 *   - a buffer of 16 bytes (MEMSCOPE_ALLOC in buf_alloc, from buf_start)
 *     grown to 100 bytes (MEMSCOPE_REALLOC in buf_resize, from buf_grow)
 *     and never released: 1 leak of 100 bytes, allocation function
 *     "custom", no pool, stack buf_resize <- buf_grow.
 * The pools' chunks come from malloc and are all freed: nothing else leaks.
 * Total: 8 leaked blocks (definitely lost), 3 * 64 + 4 * 24 + 100 = 388 bytes.
 *
 * Built without memscope (no library to link: the hooks are weak, see
 * memscope.h), it runs the same and prints the same line.
 *
 * With -DNO_ANNOTATE the macros are gone: the same program for
 * `ms-record --hook`, which hooks functions called through the GOT, so the
 * Makefile also builds the pool functions alone (-DPOOLS_LIB) as
 * libpools.so and main against it (-DPOOLS_USE_LIB): examples/bin/
 * pools-hook, recorded with
 *	--hook pool_get=alloc,size=arg2 --hook pool_put=free,ptr=arg2
 *	--hook buf_alloc=alloc,size=arg1 --hook buf_resize=realloc,ptr=arg1,size=arg2
 * gives the same leaks, but for the pool: no pools there, and the 10
 * objects the destroy of "strings" takes back leak (its chunk is freed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef NO_ANNOTATE
#define MEMSCOPE_ALLOC(ptr, size) ((void)(ptr), (void)(size))
#define MEMSCOPE_REALLOC(old, ptr, size) ((void)(old), (void)(ptr), (void)(size))
#define MEMSCOPE_POOL_CREATE(pool, name) ((void)(pool), (void)(name))
#define MEMSCOPE_POOL_ALLOC(pool, ptr, size) ((void)(pool), (void)(ptr), (void)(size))
#define MEMSCOPE_POOL_FREE(pool, ptr) ((void)(pool), (void)(ptr))
#define MEMSCOPE_POOL_DESTROY(pool) ((void)(pool))
#else
#include "../shim/memscope.h"
#endif

#define NOINLINE __attribute__((noinline))

struct pool {
	size_t obj;
	unsigned nobj, next;
	char *chunk;
	void *free_list;
};

#if defined(POOLS_LIB)
#define POOL_API __attribute__((visibility("default")))
#else
/* noclone too: a specialised copy would carry another name in stacks. */
#define POOL_API __attribute__((noinline, noclone)) static
#endif

#ifdef POOLS_USE_LIB
void pool_init(struct pool *p, const char *name, size_t obj, unsigned nobj);
void *pool_get(struct pool *p, size_t n);
void pool_put(struct pool *p, void *b);
void pool_destroy(struct pool *p);
void *buf_alloc(size_t n);
void *buf_resize(void *old, size_t n);
#else
POOL_API void pool_init(struct pool *p, const char *name, size_t obj, unsigned nobj);
POOL_API void *pool_get(struct pool *p, size_t n);
POOL_API void pool_put(struct pool *p, void *b);
POOL_API void pool_destroy(struct pool *p);
POOL_API void *buf_alloc(size_t n);
POOL_API void *buf_resize(void *old, size_t n);

POOL_API void pool_init(struct pool *p, const char *name, size_t obj, unsigned nobj)
{
	memset(p, 0, sizeof(*p));
	p->obj = obj;
	p->nobj = nobj;
	p->chunk = malloc(obj * nobj);
	/* The struct stands for the pool: any address unique while it lives. */
	MEMSCOPE_POOL_CREATE(p, name);
}

/* n is the pool's object size: one argument that says the block's size,
 * as a hooked allocation function needs. */
POOL_API void *pool_get(struct pool *p, size_t n)
{
	void *b;

	if (n != p->obj)
		return NULL;
	if (p->free_list) {
		b = p->free_list;
		p->free_list = *(void **)b;
	} else if (p->next < p->nobj) {
		b = p->chunk + (size_t)p->next++ * p->obj;
	} else {
		return NULL;
	}
	MEMSCOPE_POOL_ALLOC(p, b, p->obj);
	return b;
}

POOL_API void pool_put(struct pool *p, void *b)
{
	/* Before the free list writes into it: the block is dead from here. */
	MEMSCOPE_POOL_FREE(p, b);
	*(void **)b = p->free_list;
	p->free_list = b;
}

/* Gives the chunk back, and with it every object still handed out. */
POOL_API void pool_destroy(struct pool *p)
{
	MEMSCOPE_POOL_DESTROY(p);
	free(p->chunk);
	p->chunk = NULL;
}

/* A buffer carved from a static arena, grown in place and moved. */
static char arena[4096];

POOL_API void *buf_alloc(size_t n)
{
	MEMSCOPE_ALLOC(arena, n);
	return arena;
}

POOL_API void *buf_resize(void *old, size_t n)
{
	char *b = arena + 1024;

	memcpy(b, old, 16);
	MEMSCOPE_REALLOC(old, b, n);
	return b;
}
#endif

#ifndef POOLS_LIB
static struct pool frames, nodes, strings;
volatile unsigned long sink;

NOINLINE static void churn_frames(void)
{
	void *held[100];
	unsigned i, j;

	for (i = 0; i < 10; i++) {
		for (j = 0; j < 100; j++)
			held[j] = pool_get(&frames, 64);
		for (j = 0; j < 100; j++)
			pool_put(&frames, held[j]);
	}
	memset(held, 0, sizeof(held));
}

NOINLINE static void leak_frames(void)
{
	unsigned i;

	for (i = 0; i < 3; i++)
		memset(pool_get(&frames, 64), 0, 64);	/* and forgotten */
	sink++;
}

NOINLINE static void leak_nodes(void)
{
	unsigned i;

	for (i = 0; i < 4; i++)
		memset(pool_get(&nodes, 24), 0, 24);	/* and forgotten */
	sink++;
}

NOINLINE static void fill_strings(void)
{
	char **s = malloc(50 * sizeof(*s));
	unsigned i;

	for (i = 0; i < 50; i++) {
		s[i] = pool_get(&strings, 32);
		snprintf(s[i], 32, "string %u", i);
	}
	for (i = 0; i < 40; i++)
		pool_put(&strings, s[i]);
	sink += strlen(s[49]);
	free(s);	/* the last 10 stay in the pool until it goes */
}

NOINLINE static char *buf_start(void)
{
	char *b = buf_alloc(16);

	sink++;
	return b;
}

NOINLINE static char *buf_grow(char *old)
{
	char *b = buf_resize(old, 100);

	sink++;
	return b;
}

int main(void)
{
	char *b, line[128];
	int n;

	pool_init(&frames, "frames", 64, 128);
	pool_init(&nodes, "nodes", 24, 64);
	pool_init(&strings, "strings", 32, 64);
	churn_frames();
	leak_frames();
	leak_nodes();
	fill_strings();
	pool_destroy(&strings);
	b = buf_start();
	strcpy(b, "pools");
	b = buf_grow(b);
	sink += strlen(b);
	/* Forgets to destroy frames and nodes: what they still hold leaks.
	 * (Their chunks go, and with them the last pointers to the first
	 * objects: a chunk starts with one.) */
	free(frames.chunk);
	free(nodes.chunk);
	frames.chunk = nodes.chunk = NULL;
	/* write(), not stdio: stdout's buffer would be one more block. */
	n = snprintf(line, sizeof(line), "pools: frames %u, nodes %u, strings %u, sink %lu\n",
		     frames.next, nodes.next, strings.next, sink);
	return write(1, line, (size_t)n) != n;
}
#endif
