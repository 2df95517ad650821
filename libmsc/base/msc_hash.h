/* SPDX-License-Identifier: MIT */
/*
 * msc_hash: hash functions and two open-addressing tables.
 *
 * struct msc_u64map maps a non-zero 64-bit key to a 64-bit value (pointers to
 * live blocks, stack ids, instruction addresses).  struct msc_strmap maps a
 * string, owned by the caller and alive as long as the entry, to a pointer.
 * Both use linear probing, grow at 3/4 load and delete with backward shift
 * (no tombstones), so a table that sees millions of inserts and deletes keeps
 * short probe sequences.  Growth is the only allocation; it fails with
 * -ENOMEM and leaves the table unchanged.
 */
#ifndef MSC_HASH_H
#define MSC_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A fast 64-bit mixer (splitmix64's finalizer). */
static inline uint64_t msc_hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t msc_hash_bytes(const void *p, size_t n, uint64_t seed);

struct msc_u64map_slot {
	uint64_t key;			/* 0 = empty */
	uint64_t val;
};

struct msc_u64map {
	struct msc_u64map_slot *slots;
	size_t mask;			/* capacity - 1 */
	size_t count;
};

int msc_u64map_init(struct msc_u64map *m, size_t capacity_hint);
void msc_u64map_release(struct msc_u64map *m);
/* Empties the map and keeps its memory, for a loop that refills it. */
void msc_u64map_clear(struct msc_u64map *m);
/* Inserts or replaces; key must not be 0.  Returns 0 or -ENOMEM. */
int msc_u64map_put(struct msc_u64map *m, uint64_t key, uint64_t val);
/* Returns a pointer to the value, or NULL; valid until the next put/del. */
uint64_t *msc_u64map_get(const struct msc_u64map *m, uint64_t key);
/* Removes key; returns true and sets *val (if not NULL) when it was there. */
bool msc_u64map_del(struct msc_u64map *m, uint64_t key, uint64_t *val);
/* Iteration: for (i = 0; i <= m->mask; i++) if (m->slots[i].key) ... */

struct msc_strmap_slot {
	const char *key;		/* NULL = empty */
	uint64_t hash;
	void *val;
};

struct msc_strmap {
	struct msc_strmap_slot *slots;
	size_t mask;
	size_t count;
};

int msc_strmap_init(struct msc_strmap *m, size_t capacity_hint);
void msc_strmap_release(struct msc_strmap *m);
/* Empties it, keeping its table (no allocation). */
void msc_strmap_clear(struct msc_strmap *m);
/* Inserts or replaces.  Returns 0 or -ENOMEM. */
int msc_strmap_put(struct msc_strmap *m, const char *key, void *val);
void *msc_strmap_get(const struct msc_strmap *m, const char *key);

#endif
