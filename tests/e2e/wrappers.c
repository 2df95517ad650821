/* SPDX-License-Identifier: MIT */
/*
 * Allocation paths a report must read well (t0410): a program's own
 * wrapper (my_alloc: calls malloc and nothing else that allocates) called
 * from three places, a function that allocates and also calls another
 * that does (build_table: not a wrapper), and a recursion DEPTH calls
 * deep ending in an allocation (its frames fold).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH 40

static void *volatile keep[64];
static unsigned nkeep;

__attribute__((noinline)) static void *my_alloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	return p;
}

__attribute__((noinline)) static void make_user(void) { keep[nkeep++] = my_alloc(100); }
__attribute__((noinline)) static void make_group(void) { keep[nkeep++] = my_alloc(200); }
__attribute__((noinline)) static void make_role(void) { keep[nkeep++] = my_alloc(300); }

__attribute__((noinline)) static void build_table(void)
{
	keep[nkeep++] = malloc(400);
	make_user();
}

__attribute__((noinline)) static void descend(int n)
{
	if (n > 1) {
		descend(n - 1);
		__asm__ volatile("" ::: "memory");	/* not a tail call */
		return;
	}
	keep[nkeep++] = malloc(500);
}

int main(int argc, char **argv)
{
	make_user();
	make_group();
	make_role();
	build_table();
	descend(DEPTH);
	printf("%u blocks\n", nkeep);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "hold"))
		pause();
	return 0;
}
