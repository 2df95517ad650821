/* SPDX-License-Identifier: MIT */
/*
 * samplemix: a known mix of allocation sites for ms-record --sample.  Five
 * sites of 16 B to 4 KiB, each about 32 MB in all, freed as they go (256 of
 * each live at a time); one site of 512 B that leaks 40,000 blocks; four
 * blocks of 1 MiB, freed.  Prints what it did, the same every run.
 *
 *   samplemix [SCALE]   SCALE (default 1) multiplies every count
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE 256

static void *keep[LIVE];
static unsigned long long total_allocs, total_bytes;

/* n blocks of size bytes, each freed 256 allocations later. */
static void churn(size_t size, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		char *p = malloc(size);

		if (!p)
			abort();
		p[0] = (char)i;
		free(keep[i % LIVE]);
		keep[i % LIVE] = p;
	}
	for (i = 0; i < LIVE; i++) {
		free(keep[i]);
		keep[i] = NULL;
	}
	total_allocs += n;
	total_bytes += n * size;
}

__attribute__((noinline)) static void site_16(unsigned long n) { churn(16, n); }
__attribute__((noinline)) static void site_64(unsigned long n) { churn(64, n); }
__attribute__((noinline)) static void site_256(unsigned long n) { churn(256, n); }
__attribute__((noinline)) static void site_1k(unsigned long n) { churn(1024, n); }
__attribute__((noinline)) static void site_4k(unsigned long n) { churn(4096, n); }

/* Never freed: the leak. */
static void **leaked;

__attribute__((noinline)) static void leak_512(unsigned long n)
{
	unsigned long i;

	leaked = calloc(n, sizeof(*leaked));
	if (!leaked)
		abort();
	for (i = 0; i < n; i++) {
		leaked[i] = malloc(512);
		if (!leaked[i])
			abort();
		memset(leaked[i], 1, 8);
	}
	total_allocs += n + 1;
	total_bytes += n * 512 + n * sizeof(*leaked);
}

__attribute__((noinline)) static void big_1m(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		char *p = malloc(1 << 20);

		if (!p)
			abort();
		p[0] = 1;
		free(p);
	}
	total_allocs += n;
	total_bytes += n << 20;
}

int main(int argc, char **argv)
{
	unsigned long scale = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;

	site_16(2000000 * scale);
	site_64(500000 * scale);
	site_256(125000 * scale);
	site_1k(32000 * scale);
	site_4k(8000 * scale);
	leak_512(40000 * scale);
	big_1m(4 * scale);
	printf("samplemix: %llu allocations, %llu bytes, %lu blocks of 512 B leaked\n",
	       total_allocs, total_bytes, 40000 * scale);
	/* The leak's table is freed: only the blocks leak. */
	free(leaked);
	return 0;
}
