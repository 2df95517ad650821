/* SPDX-License-Identifier: MIT */
/*
 * marks: leaks 10 blocks before the mark "warm", 20 between "warm" and
 * "done", 5 after "done" (t0426), each of its own size and site:
 * leak_before 10 x 100 bytes, leak_between 20 x 200, leak_after 5 x 300.
 *
 *   marks          marks itself (MEMSCOPE_MARK)
 *   marks more     the same, with 30 blocks between the marks (ms-diff)
 *   marks wait     marks nothing: prints "marks: phase N" after each phase
 *                  and waits for a line on standard input before the next,
 *                  for the marks to be set from outside (ms-snap --mark)
 *
 * Prints "marks: done" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memscope.h"

static void *volatile sink;

__attribute__((noinline)) static void leak_before(void)
{
	sink = malloc(100);
}

__attribute__((noinline)) static void leak_between(void)
{
	sink = malloc(200);
}

__attribute__((noinline)) static void leak_after(void)
{
	sink = malloc(300);
}

/* The end of a phase: a mark, or a word out and a line in. */
static void phase(int wait, int n, const char *mark)
{
	char line[16];

	if (!wait) {
		MEMSCOPE_MARK(mark);
		return;
	}
	printf("marks: phase %d\n", n);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(3);
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait"), i;
	int between = argc > 1 && !strcmp(argv[1], "more") ? 30 : 20;

	for (i = 0; i < 10; i++)
		leak_before();
	phase(wait, 1, "warm");
	for (i = 0; i < between; i++)
		leak_between();
	phase(wait, 2, "done");
	for (i = 0; i < 5; i++)
		leak_after();
	sink = NULL;
	printf("marks: done\n");
	return 0;
}
