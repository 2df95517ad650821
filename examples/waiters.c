/* SPDX-License-Identifier: MIT */
/*
 * waiters: a multi-threaded process that sleeps in the system calls a
 * stopped thread can see fail with EINTR, to attach to again and again.
 *
 * Threads: one in epoll_wait (20 ms timeout), one blocked in read on a
 * pipe that the main thread writes a byte to every tick, one in
 * nanosleep, one allocating and freeing, and the main thread ticking every
 * 10 ms.  None has a signal handler, so none should ever see EINTR.  Every
 * tick the main thread writes "eintr E loops L" to standard output: the
 * EINTRs seen (any is a bug of whoever stopped us) and the loops the
 * threads made, which keep growing while the process is healthy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long eintr, loops;
static int pipefd[2];

static void count(int r)
{
	if (r < 0 && errno == EINTR)
		__atomic_add_fetch(&eintr, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&loops, 1, __ATOMIC_RELAXED);
}

static void *in_epoll(void *arg)
{
	int ep = epoll_create1(0);
	struct epoll_event ev;

	for (;;)
		count(epoll_wait(ep, &ev, 1, 20));
	return arg;
}

static void *in_read(void *arg)
{
	char c;

	for (;;)
		count((int)read(pipefd[0], &c, 1));
	return arg;
}

static void *in_sleep(void *arg)
{
	for (;;) {
		struct timespec ts = { 0, 5000000 };

		count(nanosleep(&ts, NULL));
	}
	return arg;
}

static void *in_malloc(void *arg)
{
	for (;;) {
		void *v[32];
		int i;

		for (i = 0; i < 32; i++)
			v[i] = malloc((size_t)(i * 24 + 8));
		for (i = 0; i < 32; i++)
			free(v[i]);
		count(0);
		usleep(100);
	}
	return arg;
}

int main(void)
{
	void *(*fns[])(void *) = { in_epoll, in_read, in_sleep, in_malloc };
	pthread_t t;
	unsigned i;

	if (pipe(pipefd))
		return 1;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (pthread_create(&t, NULL, fns[i], NULL))
			return 1;
	for (;;) {
		struct timespec ts = { 0, 10000000 };

		count(nanosleep(&ts, NULL));
		count((int)write(pipefd[1], "x", 1));
		printf("eintr %lu loops %lu\n", eintr, loops);
		fflush(stdout);
	}
}
