/* SPDX-License-Identifier: MIT */
/*
 * ticker: a long-running service to attach to (ms-record -p).
 *
 * Every tick (default 10 ms) it adds one block of GROW bytes (default 1000)
 * to a cache it never frees (cache_add: the growing site), and churns: it
 * allocates a 64-byte message (make_message) and frees the one it made
 * DELAY ticks ago (default 50), so that for the first DELAY ticks after an
 * attach the blocks it frees were allocated before it.
 *
 * Known answer for a recording of T ticks starting at tick N >= DELAY:
 * cache_add allocates T x GROW bytes, all still live; make_message
 * allocates T blocks and frees T, of which the first DELAY are older than
 * the recording (frees to ignore).
 *
 * With LOSE > 0 it also loses a block of LOSE bytes every tick (lose_one:
 * allocated, filled, its address forgotten): definitely lost, one more at
 * each tick, for ms-snap --leaks.
 *
 * SIGUSR1 makes it print "ticks T cache B" on standard output: the count
 * of ticks done and the bytes in its cache.  SIGTERM and SIGINT end it with
 * status 0 after printing the same line.
 *
 * Usage: ticker [TICK_MS [GROW [DELAY [LOSE]]]]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile sig_atomic_t report, stop;

struct entry {
	struct entry *next;
	char data[];
};

static struct entry *cache;
static unsigned long cache_bytes;

NOINLINE static void cache_add(size_t grow)
{
	struct entry *e = malloc(grow);

	if (!e)
		abort();
	memset(e, 0x5a, grow);
	e->next = cache;
	cache = e;
	cache_bytes += grow;
}

NOINLINE static char *make_message(unsigned long tick)
{
	char *m = malloc(64);

	if (m)
		snprintf(m, 64, "tick %lu", tick);
	return m;
}

/* The block's address is gone once this returns: only its contents,
 * which hold no pointer, stay. */
NOINLINE static void lose_one(size_t size)
{
	char *p = malloc(size);

	if (p)
		memset(p, 0x77, size);
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		report = 1;
	else
		stop = 1;
}

int main(int argc, char **argv)
{
	long tick_ms = argc > 1 ? atol(argv[1]) : 10;
	size_t grow = argc > 2 ? (size_t)atol(argv[2]) : 1000;
	unsigned long delay = argc > 3 ? (unsigned long)atol(argv[3]) : 50, ticks = 0;
	size_t lose = argc > 4 ? (size_t)atol(argv[4]) : 0;
	char **pending;
	struct sigaction sa;

	if (grow < sizeof(struct entry) || !delay)
		return 2;
	pending = calloc(delay, sizeof(*pending));
	if (!pending)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		struct timespec ts = { tick_ms / 1000, (tick_ms % 1000) * 1000000 };
		unsigned long slot = ticks % delay;

		cache_add(grow);
		free(pending[slot]);
		pending[slot] = make_message(ticks);
		if (lose)
			lose_one(lose);
		ticks++;
		if (report) {
			report = 0;
			printf("ticks %lu cache %lu\n", ticks, cache_bytes);
			fflush(stdout);
		}
		nanosleep(&ts, NULL);
	}
	printf("ticks %lu cache %lu\n", ticks, cache_bytes);
	return 0;
}
