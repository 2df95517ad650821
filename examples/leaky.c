/* SPDX-License-Identifier: MIT */
/*
 * leaky: a program with known leaks, from several call paths and allocation
 * functions, among a lot of churn that is freed.
 *
 * Known answer (leaks, all definitely lost: no pointer to them remains):
 *   1000 x 48 B   malloc   leak_small_inner <- leak_small_mid <- leak_small_outer <- run
 *     10 x 4096 B  calloc   leak_page_inner <- leak_page_outer <- run
 *      5 x 100 B   realloc  leak_grown <- run   (each grown from 10 B)
 *      3 x 7 B     malloc   strdup <- leak_name <- run
 *      2 x 64 B    aligned_alloc  leak_aligned <- run
 * = 1020 blocks, 89,609 B.
 * Every function does something after its call, so that no call becomes a
 * jump (a tail call leaves no frame, for any profiler).
 * Churn: 200,000 malloc(32..287) + free pairs, 200,000 realloc pairs.
 * Output goes through write(2), so stdio allocates nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Keeps the compiler from dropping allocations it could prove unused. */
void *volatile sink;

volatile unsigned count;

NOINLINE static void *leak_small_inner(void)
{
	char *p = malloc(48);

	p[0] = 1;
	count++;
	return p;
}

NOINLINE static void leak_small_mid(void)
{
	sink = leak_small_inner();
	count++;
}

NOINLINE static void leak_small_outer(void)
{
	leak_small_mid();
	count++;
}

NOINLINE static void *leak_page_inner(void)
{
	char *p = calloc(1, 4096);

	count++;
	return p;
}

NOINLINE static void leak_page_outer(void)
{
	sink = leak_page_inner();
	count++;
}

NOINLINE static void leak_grown(void)
{
	char *p = malloc(10);

	memset(p, 'x', 10);
	p = realloc(p, 100);
	sink = p;
	count++;
}

NOINLINE static void leak_name(const char *name)
{
	sink = strdup(name);
	count++;
}

NOINLINE static void leak_aligned(void)
{
	sink = aligned_alloc(64, 64);
	count++;
}

NOINLINE static void churn(unsigned i)
{
	char *p = malloc(32 + (i & 255));
	char *q;

	p[0] = (char)i;
	sink = p;
	free(p);
	q = malloc(16);
	q = realloc(q, 64 + (i & 63));
	sink = q;
	free(q);
}

NOINLINE static void run(void)
{
	unsigned i;

	for (i = 0; i < 200000; i++) {
		churn(i);
		if (i % 200 == 0)
			leak_small_outer();
		if (i % 20000 == 0)
			leak_page_outer();
	}
	for (i = 0; i < 5; i++)
		leak_grown();
	leak_name("abcdef");
	leak_name("ghijkl");
	leak_name("mnopqr");
	leak_aligned();
	leak_aligned();
	sink = NULL;
}

int main(void)
{
	static const char msg[] = "leaky: done\n";

	run();
	if (write(1, msg, sizeof(msg) - 1) < 0)
		return 1;
	return 0;
}
