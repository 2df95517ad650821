/* SPDX-License-Identifier: MIT */
/*
 * stress: workloads that try to break a profiler, each with an answer the
 * program can state itself (tests/stress/run.sh checks it against the
 * recording).
 *
 *   stress threads SECONDS   8 threads allocate (malloc, calloc, realloc)
 *                            and hand half their blocks to the others
 *                            through a shared queue, which free them; at the
 *                            end each thread loses 10 blocks of 48 B.
 *                            Prints "threads: allocs A bytes B frees F":
 *                            its own calls, exactly (realloc counts as a
 *                            free and an allocation, as memscope counts it).
 *   stress signals SECONDS   the main thread allocates and frees while
 *                            another sends it SIGUSR1 every 20 us; the
 *                            handler mallocs and frees.  Sizes keep the two
 *                            in different tcache bins, so that glibc itself
 *                            stays safe.  Prints "signals: N handled".
 *   stress forks N           N children, forked from a parent that
 *                            allocates between forks; each child allocates
 *                            3 blocks, frees 2, and leaves with exit or
 *                            _exit in turn.  Prints "forks: N".
 *   stress thread-exit       a thread calls exit(5) while main allocates.
 *   stress longjmp N         N times: a recursion 10 deep allocates 32 B
 *                            per level and longjmps out of its bottom;
 *                            the blocks of every 10th run are lost, the
 *                            others freed through a list.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Where blocks are stored so that the compiler keeps every malloc and free
 * (it may drop a pair whose block is never used). */
static void *volatile sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ----------------------------------------------------------- threads */

#define NTHREADS 8
#define QCAP 4096

static struct {
	pthread_mutex_t lock;
	void *slot[QCAP];
	unsigned head, n;
} q = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0, 0 };

struct counts {
	unsigned long allocs, bytes, frees;
};

static double deadline;

static void q_push(void *p, struct counts *c)
{
	void *out = NULL;

	pthread_mutex_lock(&q.lock);
	if (q.n == QCAP) {
		out = q.slot[q.head];
		q.slot[q.head] = NULL;
		q.head = (q.head + 1) % QCAP;
		q.n--;
	}
	q.slot[(q.head + q.n) % QCAP] = p;
	q.n++;
	pthread_mutex_unlock(&q.lock);
	if (out) {
		free(out);
		c->frees++;
	}
}

static void *q_pop(void)
{
	void *p = NULL;

	pthread_mutex_lock(&q.lock);
	if (q.n) {
		p = q.slot[q.head];
		q.slot[q.head] = NULL;	/* no stale pointer keeps a block reachable */
		q.head = (q.head + 1) % QCAP;
		q.n--;
	}
	pthread_mutex_unlock(&q.lock);
	return p;
}

static NOINLINE void lose_ten(struct counts *c)
{
	for (int i = 0; i < 10; i++) {
		volatile char *p = malloc(48);

		p[0] = 1;
		c->allocs++;
		c->bytes += 48;
	}
}

static void *worker(void *arg)
{
	struct counts *c = arg;
	unsigned long x = (unsigned long)(uintptr_t)arg * 2654435761u + 1;

	while (now() < deadline) {
		for (int i = 0; i < 1000; i++) {
			size_t size;
			char *p;

			x = x * 6364136223846793005ul + 1442695040888963407ul;
			size = 16 + (x >> 33) % 4080;
			switch ((x >> 20) % 4) {
			case 0:
				p = calloc(1, size);
				break;
			case 1:
				p = malloc(size / 2 + 1);
				if (p) {
					c->allocs++;
					c->bytes += size / 2 + 1;
				}
				p = realloc(p, size);
				if (p)
					c->frees++;	/* the realloc's free */
				break;
			default:
				p = malloc(size);
				break;
			}
			if (!p)
				abort();
			p[0] = 1;
			c->allocs++;
			c->bytes += size;
			if (x & (1ul << 40)) {
				q_push(p, c);
			} else {
				free(p);
				c->frees++;
			}
			if ((p = q_pop())) {
				free(p);
				c->frees++;
			}
		}
	}
	lose_ten(c);
	return NULL;
}

static int run_threads(double secs)
{
	pthread_t t[NTHREADS];
	struct counts c[NTHREADS] = { 0 }, sum = { 0 };
	void *p;

	deadline = now() + secs;
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, &c[i]))
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	while ((p = q_pop())) {
		free(p);
		sum.frees++;
	}
	for (int i = 0; i < NTHREADS; i++) {
		sum.allocs += c[i].allocs;
		sum.bytes += c[i].bytes;
		sum.frees += c[i].frees;
	}
	printf("threads: allocs %lu bytes %lu frees %lu\n", sum.allocs, sum.bytes, sum.frees);
	return 0;
}

/* ----------------------------------------------------------- signals */

static volatile sig_atomic_t handled;
static atomic_int stop;

static void on_usr1(int sig)
{
	volatile char *p = malloc(24);

	(void)sig;
	if (p) {
		p[0] = 1;
		free((void *)p);
	}
	handled++;
}

static void *pester(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	struct timespec ts = { 0, 20000 };

	while (!atomic_load(&stop)) {
		pthread_kill(main_thread, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int run_signals(double secs)
{
	struct sigaction sa;
	pthread_t self = pthread_self(), t;
	double end = now() + secs;
	unsigned long n = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sink = malloc(24);	/* the handler's tcache bin holds a block */
	free(sink);
	if (pthread_create(&t, NULL, pester, &self))
		return 1;
	while (now() < end) {
		for (int i = 0; i < 1000; i++) {
			volatile char *p = malloc(100 + (n++ % 400));

			p[0] = 1;
			free((void *)p);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("signals: %s handled\n", handled > 100 ? "many" : "few");
	return 0;
}

/* ------------------------------------------------------------- forks */

static NOINLINE void child(int i)
{
	void *a = malloc(100), *b = malloc(200), *c = malloc(300);

	sink = a;
	sink = b;
	sink = c;
	free(a);
	free(b);
	sink = NULL;	/* c is lost */
	if (i % 2)
		_exit(0);
	exit(0);
}

static int run_forks(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(64);
		pid_t pid;

		sink = p;
		pid = fork();
		int st;

		if (pid < 0)
			return 1;
		if (pid == 0)
			child(i);
		free(p);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	printf("forks: %d\n", n);
	return 0;
}

/* ------------------------------------------------------- thread-exit */

static void *exiter(void *arg)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	(void)arg;
	nanosleep(&ts, NULL);
	fflush(stdout);
	exit(5);
}

static int run_thread_exit(void)
{
	pthread_t t;

	printf("thread-exit: exiting with 5\n");
	if (pthread_create(&t, NULL, exiter, NULL))
		return 1;
	for (;;) {
		sink = malloc(64);
		free(sink);
	}
}

/* ----------------------------------------------------------- longjmp */

struct node {
	struct node *next;
	char pad[24];
};

static jmp_buf env;
static struct node *list;
static volatile int jumping = 1;

static NOINLINE void dive(volatile int depth)
{
	struct node *n = malloc(sizeof(*n));

	n->next = list;
	list = n;
	if (depth <= 0 && jumping)
		longjmp(env, 1);
	if (depth > 0)
		dive(depth - 1);
	depth = 0;	/* not a tail call */
}

static int run_longjmp(int n)
{
	for (volatile int i = 0; i < n; i++) {
		list = NULL;
		if (!setjmp(env))
			dive(9);
		if (i % 10 == 0)
			continue;	/* lost: the list is forgotten */
		while (list) {
			struct node *next = list->next;

			free(list);
			list = next;
		}
	}
	list = NULL;
	printf("longjmp: %d\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	double arg = argc > 2 ? atof(argv[2]) : 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "threads"))
		return run_threads(arg);
	if (!strcmp(mode, "signals"))
		return run_signals(arg);
	if (!strcmp(mode, "forks"))
		return run_forks((int)arg);
	if (!strcmp(mode, "thread-exit"))
		return run_thread_exit();
	if (!strcmp(mode, "longjmp"))
		return run_longjmp((int)arg);
	fprintf(stderr, "usage: stress threads|signals SECONDS | forks|longjmp N | thread-exit\n");
	return 2;
}
