/* SPDX-License-Identifier: MIT */
/*
 * live_heap: a program that exits with a large live heap, for the cost of
 * ms-record's leak scan against the heap's size.
 *
 *   live_heap MIB      (default 256)
 *
 * Allocates blocks until MIB MiB are live and exits without freeing them.
 * A third of the bytes is in small blocks (16..512 bytes), a third in
 * medium ones (1..64 KiB) and a third in large ones (256 KiB..4 MiB, which
 * glibc maps on their own).  Every block is filled: one word in eight
 * points into an earlier block (its start, or inside it), the others are
 * random data.  A table holds every block but one in sixteen, which are
 * lost (and what only they point to, indirectly).  The random generator has
 * a fixed seed, so the leaks are the same in every run; it prints the
 * number of blocks and bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static void **volatile kept;

static uint64_t next(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* A size of class c (0 small, 1 medium, 2 large), log-uniform in it. */
static size_t size_of(int c)
{
	static const unsigned lo[] = { 4, 10, 18 }, span[] = { 5, 6, 4 };
	unsigned shift = lo[c] + (unsigned)(next() % span[c]);

	return ((size_t)1 << shift) + (size_t)(next() % ((size_t)1 << shift));
}

int main(int argc, char **argv)
{
	size_t want = (size_t)(argc > 1 ? atol(argv[1]) : 256) << 20;
	size_t cap = 1024, n = 0, bytes = 0, lost = 0, w;
	void **table = malloc(cap * sizeof(*table));
	uint64_t **all = malloc(cap * sizeof(*all));
	size_t *sizes = malloc(cap * sizeof(*sizes));
	size_t ntable = 0, in_class[3] = { 0, 0, 0 };

	if (!table || !all || !sizes)
		return 1;
	while (bytes < want) {
		/* The class with the fewest bytes so far: a third each. */
		int c = in_class[0] <= in_class[1] ? (in_class[0] <= in_class[2] ? 0 : 2)
						   : (in_class[1] <= in_class[2] ? 1 : 2);
		size_t size = size_of(c);
		uint64_t *b;

		if (n == cap) {
			cap *= 2;
			table = realloc(table, cap * sizeof(*table));
			all = realloc(all, cap * sizeof(*all));
			sizes = realloc(sizes, cap * sizeof(*sizes));
			if (!table || !all || !sizes)
				return 1;
		}
		b = malloc(size);
		if (!b)
			return 1;
		for (w = 0; w < size / 8; w++) {
			uint64_t r = next();

			if ((r & 7) == 0 && n) {
				size_t j = (size_t)(r >> 8) % n;

				b[w] = (uint64_t)(uintptr_t)all[j] + ((r >> 4) & 1 ? 0 : (r >> 40) % sizes[j]);
			} else {
				b[w] = r;
			}
		}
		all[n] = b;
		sizes[n] = size;
		if (n % 16 == 15)
			lost++;
		else
			table[ntable++] = b;
		n++;
		bytes += size;
		in_class[c] += size;
	}
	/* Only the table keeps blocks: the bookkeeping goes. */
	free(all);
	free(sizes);
	kept = table;
	printf("%zu blocks, %zu bytes, %zu lost\n", n, bytes, lost);
	return 0;
}
