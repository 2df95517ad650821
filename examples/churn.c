/* SPDX-License-Identifier: MIT */
/*
 * churn: allocates and frees in a loop for a while, printing a line per
 * million iterations; for tests that interrupt a recording.
 *
 *   churn SECONDS
 *
 * Ends with status 0 after SECONDS (or on SIGTERM/SIGINT, status 0 too,
 * printing "churn: stopped").  Known answer: every block it allocates is
 * freed, but for one 256-byte block allocated by keep_one at start.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
void *volatile sink;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

__attribute__((noinline)) static void keep_one(void)
{
	sink = malloc(256);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec t0, t;
	unsigned long i = 0;
	void *slot[64] = { 0 };

	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	keep_one();
	printf("churn: started\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		unsigned s = i % 64;

		free(slot[s]);
		slot[s] = malloc(16 + i % 512);
		if (++i % 1000000 == 0) {
			printf("churn: %lu\n", i);
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
				break;
		}
	}
	for (i = 0; i < 64; i++)
		free(slot[i]);
	printf(stop ? "churn: stopped\n" : "churn: done\n");
	return 0;
}
