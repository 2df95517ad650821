/* SPDX-License-Identifier: MIT */
/*
 * handoff: two threads take turns, one freeing the block the other
 * allocated, so that an address is freed in one thread and allocated again
 * in the other a moment later.
 *
 *   handoff [ROUNDS]     (default 100,000)
 *
 * Each round, the giver allocates 32 bytes (give) and passes the block to
 * the taker, which frees it and says so; only then does the next round
 * start.  Run with GLIBC_TUNABLES=glibc.malloc.tcache_count=0 and
 * glibc.malloc.arena_max=1, glibc hands the freed block straight back to
 * the giver: the address repeats every round, across threads, within a
 * microsecond or so.  A profiler that orders the two threads' events wrong
 * sees a free of an unknown block, or a block allocated twice.
 *
 * Known answer: ROUNDS allocations of 32 B by give, every one freed by the
 * taker; nothing leaked.  Prints "handoff: N rounds, M distinct addresses".
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static _Atomic(char *) slot;
static atomic_ulong freed;
static unsigned long rounds = 100000;

NOINLINE static char *give(unsigned long i)
{
	char *p = malloc(32);

	if (p)
		p[0] = (char)i;
	return p;
}

static void *taker(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		char *p;

		while (!(p = atomic_exchange(&slot, NULL)))
			sched_yield();
		free(p);
		atomic_store(&freed, i + 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	unsigned long i, distinct = 0;
	char *last = NULL;

	if (argc > 1)
		rounds = strtoul(argv[1], NULL, 10);
	if (pthread_create(&t, NULL, taker, NULL))
		return 1;
	for (i = 0; i < rounds; i++) {
		char *p = give(i);

		if (!p)
			return 1;
		if (p != last)
			distinct++;
		last = p;
		atomic_store(&slot, p);
		while (atomic_load(&freed) != i + 1)
			sched_yield();
	}
	pthread_join(t, NULL);
	printf("handoff: %lu rounds, %lu distinct addresses\n", rounds, distinct);
	return 0;
}
