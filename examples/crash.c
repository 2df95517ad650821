/* SPDX-License-Identifier: MIT */
/*
 * crash: leaks a known amount, then dies of SIGSEGV (or, with an argument,
 * of abort()).
 *
 * Known answer: 100 x 64 B allocated by before_crash and never freed, then
 * a fault; exit status 139 (134 for abort).  Everything allocated before the
 * fault is in the recording.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile sink;
int *volatile nowhere;

NOINLINE static void before_crash(void)
{
	char *p = malloc(64);

	memset(p, 1, 64);
	sink = p;
}

int main(int argc, char **argv)
{
	int i;

	(void)argv;
	for (i = 0; i < 100; i++)
		before_crash();
	if (argc > 1)
		abort();
	*nowhere = 1;
	return 0;
}
