/* SPDX-License-Identifier: MIT */
/*
 * twosites: two call sites of the same size in one function, the case that
 * tells whether a profiler keeps call sites apart in a binary without line
 * information.  Built three ways (see the Makefile): with -g, without -g,
 * and without -g and stripped (only .dynsym names remain: -rdynamic keeps
 * leak_two in it, while the static helpers lose their names).
 *
 * Known answer (all definitely lost):
 *   10 x 64 B  malloc  leak_two (first call)  <- run <- main
 *    3 x 64 B  malloc  leak_two (second call) <- run <- main
 *    4 x 64 B  malloc  leak_anon (static)     <- run <- main
 * = 17 blocks, 1,088 B.  Nothing else is allocated: output goes through
 * write(2).
 */
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile sink;
volatile unsigned count;

/* Exported (with -rdynamic it stays in .dynsym when stripped). */
void leak_two(unsigned first, unsigned second);
NOINLINE void leak_two(unsigned first, unsigned second)
{
	unsigned i;

	for (i = 0; i < first; i++) {
		sink = malloc(64);
		count++;
	}
	count += 7;
	for (i = 0; i < second; i++) {
		sink = malloc(64);
		count++;
	}
	count++;
}

NOINLINE static void leak_anon(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		sink = malloc(64);
		count++;
	}
	count++;
}

NOINLINE static void run(void)
{
	leak_two(10, 3);
	leak_anon(4);
	count++;
}

int main(void)
{
	static const char msg[] = "twosites: 17 blocks leaked\n";

	run();
	sink = NULL;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 1;
	return 0;
}
