/* SPDX-License-Identifier: MIT */
/*
 * alloc_storm: the allocation-heavy workload of make bench.
 *
 *   alloc_storm [THREADS] [ITERATIONS]     (defaults 1 and 5,000,000)
 *
 * Each thread keeps a table of 1024 blocks.  Every iteration frees a random
 * slot and allocates a new block of a random size (16..4096) through one of
 * 512 precomputed call paths, 5 to 10 calls deep, made of 8 distinct step
 * functions with 4 call sites each, down to one of two leaf functions.  The
 * random generator has a fixed seed, and the program prints a checksum that
 * is the same under any profiler.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define SLOTS 1024
#define PATHS 512
#define MAXDEPTH 10

struct path {
	uint8_t depth;
	uint8_t choice[MAXDEPTH + 1];
};

static struct path paths[PATHS];
static __thread uintptr_t mix;	/* keeps the step functions distinct */

NOINLINE static void *leaf_plain(size_t size)
{
	void *p = malloc(size);

	mix ^= (uintptr_t)p;
	return p;
}

NOINLINE static void *leaf_touch(size_t size)
{
	char *p = malloc(size);

	p[0] = (char)size;
	mix += (uintptr_t)p;
	return p;
}

#define DECL(k) NOINLINE static void *step##k(const struct path *pt, int d, size_t size);
DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7)

/* Step k calls steps k+1, k+3, k+5, k+7 (mod 8) from four call sites. */
#define STEP(k, a, b, c, e)                                                      \
	NOINLINE static void *step##k(const struct path *pt, int d, size_t size)  \
	{                                                                         \
		void *p;                                                          \
		mix = mix * 31 + k;                                               \
		if (d == 0)                                                       \
			p = (pt->choice[0] & 1) ? leaf_touch(size) : leaf_plain(size); \
		else                                                              \
			switch (pt->choice[d] & 3) {                              \
			case 0: p = step##a(pt, d - 1, size); break;              \
			case 1: p = step##b(pt, d - 1, size); break;              \
			case 2: p = step##c(pt, d - 1, size); break;              \
			default: p = step##e(pt, d - 1, size); break;             \
			}                                                         \
		mix ^= (uintptr_t)p >> k;                                         \
		return p;                                                         \
	}

STEP(0, 1, 3, 5, 7) STEP(1, 2, 4, 6, 0) STEP(2, 3, 5, 7, 1) STEP(3, 4, 6, 0, 2)
STEP(4, 5, 7, 1, 3) STEP(5, 6, 0, 2, 4) STEP(6, 7, 1, 3, 5) STEP(7, 0, 2, 4, 6)

NOINLINE static void *alloc_via_chain(const struct path *pt, size_t size)
{
	void *p;

	switch (pt->choice[pt->depth] & 7) {
	case 0: p = step0(pt, pt->depth - 1, size); break;
	case 1: p = step1(pt, pt->depth - 1, size); break;
	case 2: p = step2(pt, pt->depth - 1, size); break;
	case 3: p = step3(pt, pt->depth - 1, size); break;
	case 4: p = step4(pt, pt->depth - 1, size); break;
	case 5: p = step5(pt, pt->depth - 1, size); break;
	case 6: p = step6(pt, pt->depth - 1, size); break;
	default: p = step7(pt, pt->depth - 1, size); break;
	}
	mix += 1;
	return p;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static unsigned long iterations = 5000000;

static void *worker(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull + (uintptr_t)arg, sum = 0;
	void **slot = calloc(SLOTS, sizeof(*slot));
	unsigned long i;

	for (i = 0; i < iterations; i++) {
		uint64_t r = xorshift(&seed);
		unsigned s = r % SLOTS;
		size_t size = 16 + (r >> 16) % 4081;

		free(slot[s]);
		slot[s] = alloc_via_chain(&paths[(r >> 32) % PATHS], size);
		sum += size;
	}
	for (i = 0; i < SLOTS; i++)
		free(slot[i]);
	free(slot);
	return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1, i, d;
	uint64_t seed = 42, total = 0;
	pthread_t t[64];

	if (argc > 2)
		iterations = strtoul(argv[2], NULL, 10);
	if (threads < 1 || threads > 64)
		return 2;
	for (i = 0; i < PATHS; i++) {
		paths[i].depth = (uint8_t)(5 + xorshift(&seed) % 6);
		for (d = 0; d <= MAXDEPTH; d++)
			paths[i].choice[d] = (uint8_t)xorshift(&seed);
	}
	for (i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (i = 0; i < threads; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (uintptr_t)r;
	}
	printf("alloc_storm: %d threads, %lu iterations, checksum %llu\n", threads, iterations,
	       (unsigned long long)total);
	return 0;
}
