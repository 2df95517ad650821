/* SPDX-License-Identifier: MIT */
/* Hash tables with linear probing and backward-shift deletion: see msc_hash.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hash.h"

uint64_t msc_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (0x9e3779b97f4a7c15ull * (n + 1));

	while (n >= 8) {
		uint64_t v;

		memcpy(&v, s, 8);
		h = msc_hash_u64(h ^ v);
		s += 8;
		n -= 8;
	}
	if (n) {
		uint64_t v = 0;

		memcpy(&v, s, n);
		h = msc_hash_u64(h ^ v ^ ((uint64_t)n << 56));
	}
	return msc_hash_u64(h);
}

static size_t pow2_at_least(size_t n)
{
	size_t c = 16;

	while (c < n)
		c <<= 1;
	return c;
}

/* Both maps are an array of slots, a mask and a count: one pair of
 * functions sets them up and takes them down.  Tables stay at most 3/4
 * full. */
static int table_init(void **slots, size_t slot_size, size_t *mask, size_t *count, size_t hint)
{
	size_t cap = pow2_at_least(hint + hint / 3 + 1);

	*slots = calloc(cap, slot_size);
	if (!*slots)
		return -ENOMEM;
	*mask = cap - 1;
	*count = 0;
	return 0;
}

static void table_release(void *slots, size_t *mask, size_t *count)
{
	free(slots);
	*mask = 0;
	*count = 0;
}

int msc_u64map_init(struct msc_u64map *m, size_t hint)
{
	void *slots;
	int ret = table_init(&slots, sizeof(*m->slots), &m->mask, &m->count, hint);

	m->slots = ret ? NULL : slots;
	return ret;
}

void msc_u64map_clear(struct msc_u64map *m)
{
	if (m->slots)
		memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
}

void msc_u64map_release(struct msc_u64map *m)
{
	table_release(m->slots, &m->mask, &m->count);
	m->slots = NULL;
}

static int u64map_grow(struct msc_u64map *m)
{
	size_t ncap = (m->mask + 1) * 2, i;
	struct msc_u64map_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++) {
		struct msc_u64map_slot *s = &m->slots[i];
		size_t j;

		if (!s->key)
			continue;
		j = msc_hash_u64(s->key) & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s;
	}
	free(m->slots);
	m->slots = ns;
	m->mask = ncap - 1;
	return 0;
}

int msc_u64map_put(struct msc_u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && u64map_grow(m))
		return -ENOMEM;
	i = msc_hash_u64(key) & m->mask;
	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & m->mask;
	if (!m->slots[i].key)
		m->count++;
	m->slots[i].key = key;
	m->slots[i].val = val;
	return 0;
}

uint64_t *msc_u64map_get(const struct msc_u64map *m, uint64_t key)
{
	size_t i = msc_hash_u64(key) & m->mask;

	while (m->slots[i].key) {
		if (m->slots[i].key == key)
			return &m->slots[i].val;
		i = (i + 1) & m->mask;
	}
	return NULL;
}

bool msc_u64map_del(struct msc_u64map *m, uint64_t key, uint64_t *val)
{
	size_t i = msc_hash_u64(key) & m->mask, j;

	/*
	 * 0 marks an empty slot: searching for it would "find" the first hole
	 * and shift a cluster into it.  free(NULL) makes a del(0) likely.
	 */
	if (!key)
		return false;
	while (m->slots[i].key != key) {
		if (!m->slots[i].key)
			return false;
		i = (i + 1) & m->mask;
	}
	if (val)
		*val = m->slots[i].val;
	/* Backward shift: move later entries of the cluster into the hole
	 * when their home slot is not between the hole and them. */
	j = i;
	for (;;) {
		size_t home;

		j = (j + 1) & m->mask;
		if (!m->slots[j].key)
			break;
		home = msc_hash_u64(m->slots[j].key) & m->mask;
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->count--;
	return true;
}

int msc_strmap_init(struct msc_strmap *m, size_t hint)
{
	void *slots;
	int ret = table_init(&slots, sizeof(*m->slots), &m->mask, &m->count, hint);

	m->slots = ret ? NULL : slots;
	return ret;
}

void msc_strmap_clear(struct msc_strmap *m)
{
	if (m->slots)
		memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
}

void msc_strmap_release(struct msc_strmap *m)
{
	table_release(m->slots, &m->mask, &m->count);
	m->slots = NULL;
}

static uint64_t str_hash(const char *s)
{
	return msc_hash_bytes(s, strlen(s), 0x5eed);
}

static int strmap_grow(struct msc_strmap *m)
{
	size_t ncap = (m->mask + 1) * 2, i;
	struct msc_strmap_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++) {
		size_t j;

		if (!m->slots[i].key)
			continue;
		j = m->slots[i].hash & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->mask = ncap - 1;
	return 0;
}

int msc_strmap_put(struct msc_strmap *m, const char *key, void *val)
{
	uint64_t h = str_hash(key);
	size_t i;

	if ((m->count + 1) * 4 > (m->mask + 1) * 3 && strmap_grow(m))
		return -ENOMEM;
	i = h & m->mask;
	while (m->slots[i].key) {
		if (m->slots[i].hash == h && strcmp(m->slots[i].key, key) == 0) {
			m->slots[i].val = val;
			return 0;
		}
		i = (i + 1) & m->mask;
	}
	m->slots[i].key = key;
	m->slots[i].hash = h;
	m->slots[i].val = val;
	m->count++;
	return 0;
}

void *msc_strmap_get(const struct msc_strmap *m, const char *key)
{
	uint64_t h = str_hash(key);
	size_t i = h & m->mask;

	while (m->slots[i].key) {
		if (m->slots[i].hash == h && strcmp(m->slots[i].key, key) == 0)
			return m->slots[i].val;
		i = (i + 1) & m->mask;
	}
	return NULL;
}
