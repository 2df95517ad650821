/* SPDX-License-Identifier: MIT */
/*
 * execchain N MS: allocates (a malloc and a free of 64 bytes every 100 us)
 * for MS milliseconds, then executes itself with N-1, until N is 0: a
 * process whose image changes under an attach at any moment.  Exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	double ms = argc > 2 ? atof(argv[2]) : 10, end = now_ms() + ms;
	char next[16];

	while (now_ms() < end) {
		void *volatile p = malloc(64);

		free(p);
		usleep(100);
	}
	if (n <= 0)
		return 0;
	snprintf(next, sizeof(next), "%d", n - 1);
	execl("/proc/self/exe", argv[0], next, argv[2], (char *)NULL);
	perror("execchain: exec");
	return 1;
}
