/* SPDX-License-Identifier: MIT */
/*
 * attach_target: the running service of make bench's attach section.
 *
 *   attach_target SECONDS
 *
 * Replaces random slots of a 4096-slot table (one free and one malloc of
 * 16..1024 bytes per iteration) for SECONDS, and every 100 ms prints
 *
 *   T ITERATIONS GAP_US
 *
 * T: milliseconds since the start; ITERATIONS done in those 100 ms; GAP_US:
 * the longest time between two consecutive clock reads (one every 256
 * iterations, about 20 us apart natively), so the time the thread was
 * stopped by an attach or a detach shows as a gap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SLOTS 4096

static unsigned long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000 + (unsigned long long)ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	static void *slot[SLOTS];
	unsigned long long t0 = now_us(), end, window, last, gap = 0, iters = 0;
	unsigned seed = 1;

	end = t0 + (unsigned long long)(argc > 1 ? atof(argv[1]) : 10) * 1000000;
	window = t0 + 100000;
	last = t0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		unsigned long long t;
		int i;

		for (i = 0; i < 256; i++) {
			unsigned k;

			seed = seed * 1103515245u + 12345u;
			k = (seed >> 8) % SLOTS;
			free(slot[k]);
			slot[k] = malloc(16 + (seed >> 20) % 1009);
		}
		iters += 256;
		t = now_us();
		if (t - last > gap)
			gap = t - last;
		last = t;
		if (t >= window) {
			printf("%llu %llu %llu\n", (window - t0) / 1000, iters, gap);
			iters = 0;
			gap = 0;
			window += 100000;
		}
		if (t >= end)
			break;
	}
	for (int i = 0; i < SLOTS; i++)
		free(slot[i]);
	return 0;
}
