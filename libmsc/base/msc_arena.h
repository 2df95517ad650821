/* SPDX-License-Identifier: MIT */
/*
 * msc_arena: a bump allocator for data that lives exactly as long as one
 * sample, one record or one report.
 *
 * Allocation is a pointer bump inside the current chunk; a request that does
 * not fit starts a new chunk (at least MSC_ARENA_CHUNK bytes, or the request
 * rounded up).  msc_arena_reset() makes every byte reusable at once; when the
 * last cycle needed several chunks it replaces them by one chunk as large as
 * all of them together, so a loop that resets once per iteration stops
 * calling malloc after its first few iterations.  Memory is 16-byte aligned.
 *
 * Ownership: the arena owns every block it hands out; they are invalid after
 * the next reset or release.  Failure: allocation returns NULL (and sets
 * errno to ENOMEM) only when malloc fails.
 */
#ifndef MSC_ARENA_H
#define MSC_ARENA_H

#include <stddef.h>

#define MSC_ARENA_CHUNK (64 * 1024)

struct msc_arena_chunk;

struct msc_arena {
	struct msc_arena_chunk *head;	/* chunk being filled; older ones follow */
	size_t used;			/* bytes used in head */
	size_t total;			/* bytes handed out since the last reset */
};

#define MSC_ARENA_INIT { NULL, 0, 0 }

void msc_arena_init(struct msc_arena *a);
/* Frees every chunk.  The arena may be used again afterwards. */
void msc_arena_release(struct msc_arena *a);
/* Forgets every allocation; keeps the largest chunk for reuse. */
void msc_arena_reset(struct msc_arena *a);

void *msc_arena_alloc(struct msc_arena *a, size_t size);
void *msc_arena_zalloc(struct msc_arena *a, size_t size);
/* Copies len bytes and appends a NUL. */
char *msc_arena_strndup(struct msc_arena *a, const char *s, size_t len);
char *msc_arena_strdup(struct msc_arena *a, const char *s);

#endif
