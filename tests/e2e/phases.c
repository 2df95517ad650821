/* SPDX-License-Identifier: MIT */
/*
 * phases: a heap whose make-up changes over time, with known answers for
 * the timeline of a plain recording (t0425).  No stdio until the end.
 *
 *   A. phase_a: 64 blocks of 16 KiB (1 MiB), held for 300 ms, then freed;
 *   B. phase_b: 128 blocks of 16 KiB (2 MiB), held for 300 ms, then freed
 *      (the heap's peak: 2 MiB);
 *   C. phase_c: 32 blocks of 16 KiB (512 KiB), kept to the end.
 *
 * Prints "phases: done" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BLOCK 16384

static void *held[128];

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) static void phase_a(void)
{
	for (int i = 0; i < 64; i++)
		held[i] = malloc(BLOCK);
}

__attribute__((noinline)) static void phase_b(void)
{
	for (int i = 0; i < 128; i++)
		held[i] = malloc(BLOCK);
}

__attribute__((noinline)) static void phase_c(void)
{
	for (int i = 0; i < 32; i++)
		held[i] = malloc(BLOCK);
}

static void release(int n)
{
	for (int i = 0; i < n; i++)
		free(held[i]);
}

int main(void)
{
	phase_a();
	pause_ms(300);
	release(64);
	phase_b();
	pause_ms(300);
	release(128);
	phase_c();
	pause_ms(100);
	printf("phases: done\n");
	return 0;
}
