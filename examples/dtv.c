/* SPDX-License-Identifier: MIT */
/*
 * dtv: threads' DTVs (the block glibc calloc's for each thread's vector of
 * TLS pointers, in pthread_create) and what their TLS and stacks hold when
 * the process exits, for threads that allocated and threads that never did,
 * still running or joined.
 *
 *   dtv      prints "dtv SIZE": the size of its threads' DTV blocks
 *
 * Four groups of threads, each created from a line of main of its own so
 * that each group's DTVs are one leak record of their own:
 *
 *   busy_alive   1 thread:  allocates, and is still running at the exit
 *   idle_alive   2 threads: never allocates, still running at the exit
 *   busy_joined  3 threads: allocate, end, are joined
 *   idle_joined  4 threads: never allocate, end, are joined
 *
 * A busy thread keeps a block in a __thread variable (24 bytes for the
 * running thread, 40 for the joined ones); a busy_joined thread also drops a
 * 56-byte block whose only copy is on its stack, below where the stack
 * pointer was when the thread ended.
 *
 * Known answer, as Valgrind's memcheck (3.19, --run-libc-freeres=no) gives
 * it: every DTV is possibly lost (the thread's TCB points 16 bytes into
 * it), 1 + 2 + 3 + 4 blocks of SIZE bytes, whether or not the thread
 * allocated or still runs; the 1 x 24 and 3 x 40 bytes held in TLS are still
 * reachable, the running thread's TLS being live and a joined thread's kept
 * by glibc with its stack for reuse; the 3 x 56 bytes only on the joined
 * threads' dead stacks are definitely lost; and stdout's 4,096-byte buffer
 * is reachable.
 *
 * SIZE depends on how many modules with TLS are loaded, so on who runs the
 * program: 16 x (number of TLS modules + 16), 272 under memcheck, 304 under
 * ms-record (libmemscope.so and the libunwind it loads each have TLS).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

/* 256 KiB: 10 cached stacks stay under glibc's 40 MiB stack cache, which
 * would otherwise unmap some and free their DTVs at the join. */
#define STACK_SIZE (256 << 10)

enum { BUSY = 1, ALIVE = 2 };

static __thread void *volatile tls_block;
static void *volatile sink;
static size_t dtv_bytes;
static pthread_barrier_t started;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

/* The block's only copy stays in this frame, below the thread's stack
 * pointer once the thread has ended: memcheck does not look there. */
static NOINLINE void drop_on_stack(void)
{
	void *volatile local = malloc(56);

	sink = NULL;
	(void)local;
}

/*
 * The size of the calling thread's DTV block.  glibc (x86_64): the TCB at
 * the thread pointer holds dtv + 1, and the DTV's first 16-byte entry its
 * length in entries past the first two.  Not the main thread's: its DTV was
 * made before libraries loaded later added modules.
 */
static size_t dtv_size(void)
{
	uint64_t *dtv;

	__asm__("mov %%fs:8, %0" : "=r"(dtv));
	return (size_t)(dtv[-2] + 2) * 16;
}

static void *body(void *arg)
{
	int mode = (int)(intptr_t)arg;

	__atomic_store_n(&dtv_bytes, dtv_size(), __ATOMIC_RELAXED);
	if (mode & BUSY) {
		tls_block = malloc(mode & ALIVE ? 24 : 40);
		if (!(mode & ALIVE))
			drop_on_stack();
	}
	pthread_barrier_wait(&started);
	if (mode & ALIVE) {
		pthread_mutex_lock(&lock);
		for (;;)
			pthread_cond_wait(&never, &lock);
	}
	return NULL;
}

static NOINLINE void start(pthread_t *t, int n, int mode)
{
	pthread_attr_t attr;
	int i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, body, (void *)(intptr_t)mode)) {
			perror("dtv: pthread_create");
			exit(1);
		}
	pthread_attr_destroy(&attr);
}

int main(void)
{
	pthread_t alive[3], joined[7];
	int i;

	/* Every thread starts before any ends: a joined thread's cached
	 * stack, and its DTV with it, would go to the next one created. */
	pthread_barrier_init(&started, NULL, 1 + 2 + 3 + 4 + 1);
	start(alive, 1, BUSY | ALIVE);		/* busy_alive */
	start(alive + 1, 2, ALIVE);		/* idle_alive */
	start(joined, 3, BUSY);			/* busy_joined */
	start(joined + 3, 4, 0);		/* idle_joined */
	pthread_barrier_wait(&started);
	for (i = 0; i < 7; i++)
		pthread_join(joined[i], NULL);
	printf("dtv %zu\n", dtv_bytes);
	/* exit, not return: the running threads stay blocked meanwhile. */
	exit(0);
}
