/* SPDX-License-Identifier: MIT */
/*
 * server_churn: what a long-running server does to a sampling profiler, for
 * make bench's sampled section: a large heap that stays live, and small
 * requests' blocks allocated and freed around it.
 *
 *   server_churn [MIB] [ITERATIONS]      (defaults 1024 and 20,000,000)
 *
 * Allocates blocks of 1..64 KiB until MIB MiB are live (the first byte of
 * each written), then, every iteration, frees a random slot of a
 * 4096-slot table and allocates a block of 16..256 bytes there: glibc's
 * thread cache serves nearly all of them, some ten nanoseconds a pair.
 * Sampling at 512 KiB keeps about MIB * 2 of the large blocks in the set
 * of recorded blocks all along, so that the frees of the small blocks,
 * none of them recorded, must tell they are not in it.  The random
 * generator has a fixed seed; it prints the number of blocks and bytes
 * kept and the small blocks' bytes, the same under any profiler.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 4096
#define MAX_KEPT (1u << 22)

static uint64_t seed = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	size_t iterations = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000000;
	static void *slot[SLOTS];
	void **kept = malloc(MAX_KEPT * sizeof(*kept));
	size_t live = 0, n = 0, i;
	uint64_t sum = 0;

	if (!kept)
		return 1;
	while (live < mib << 20 && n < MAX_KEPT) {
		size_t size = 1024 + next() % (63 * 1024);
		char *p = malloc(size);

		if (!p)
			return 1;
		p[0] = (char)size;
		kept[n++] = p;
		live += size;
	}
	for (i = 0; i < iterations; i++) {
		unsigned k = (unsigned)(next() & (SLOTS - 1));

		size_t size = 16 + next() % 241;

		free(slot[k]);
		slot[k] = malloc(size);
		if (!slot[k])
			return 1;
		sum += size;
	}
	printf("%zu blocks, %zu bytes kept; %llu bytes in small blocks\n", n, live,
	       (unsigned long long)sum);
	for (i = 0; i < SLOTS; i++)
		free(slot[i]);
	for (i = 0; i < n; i++)
		free(kept[i]);
	free(kept);
	return 0;
}
