// SPDX-License-Identifier: MIT
/*
 * memerr: one memory error of each kind ms-record reports, for its tests.
 *
 *   memerr double-free | invalid-free | invalid-free-stack | mismatch |
 *          realloc-freed | none  [threads]
 *
 * With "threads", a second thread allocates and frees a block first (and
 * is joined): the process has had two threads, whose out-of-order frees
 * ms-record holds a moment for their allocation (libmemscope(7)); the
 * error must come out all the same.
 *
 * Known answers (each function is its own frame, so stacks name them):
 *   double-free         a 40 B block from make_block() freed by free_once()
 *                       and again by free_twice(): glibc aborts (134)
 *   invalid-free        free_middle() frees 16 B into a 64 B block from
 *                       make_block(): glibc aborts (134)
 *   invalid-free-stack  free_local() frees the address of a local: glibc
 *                       aborts (134)
 *   mismatch            three blocks, each released by the wrong family
 *                       (glibc does not notice; exit 0):
 *                         new int[10]  (40 B)  deleted with delete,  in drop_array()
 *                         malloc(24)           deleted with delete,  in drop_malloced()
 *                         new Pair     (16 B)  freed with free(),    in free_newed()
 *   realloc-freed       a 32 B block from make_block() freed by free_once(),
 *                       then realloc'ed to 64 B by grow_freed(): glibc
 *                       aborts (134)
 *   none                no error: allocates and frees one block (exit 0)
 * Prints "memerr: MODE" first, so a test can tell the program ran.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

#define NOINLINE __attribute__((noinline))

struct Pair {
	long a, b;
};

/* Through here the compiler cannot see which block a pointer is. */
static void *volatile opaque;
/* Each function adds its own number: no two bodies are alike, so the
 * compiler folds none into another (identical code folding). */
static volatile int steps;

static void *hide(void *p)
{
	opaque = p;
	return opaque;
}

NOINLINE static char *make_block(size_t n)
{
	char *p = static_cast<char *>(malloc(n));

	if (p)
		memset(p, 1, n);
	return p;
}

NOINLINE static void free_once(void *p)
{
	free(hide(p));
	steps += 1;	/* not a tail call, and unlike the others */
}

NOINLINE static void free_twice(void *p)
{
	free(hide(p));
	steps += 100;	/* not a tail call, and unlike the others */
}

NOINLINE static void free_middle(char *p)
{
	free(hide(p + 16));
	steps += 2;	/* not a tail call, and unlike the others */
}

NOINLINE static void free_local(void)
{
	long local[4] = { 1, 2, 3, 4 };

	free(hide(local));
	opaque = nullptr;
}

NOINLINE static void drop_array(int *p)
{
	delete static_cast<int *>(hide(p));
	steps += 3;	/* not a tail call, and unlike the others */
}

NOINLINE static void drop_malloced(void *p)
{
	delete static_cast<Pair *>(hide(p));
	steps += 4;	/* not a tail call, and unlike the others */
}

NOINLINE static void free_newed(Pair *p)
{
	free(hide(p));
	steps += 5;	/* not a tail call, and unlike the others */
}

NOINLINE static void *grow_freed(void *p)
{
	void *q = realloc(hide(p), 64);

	opaque = nullptr;
	return q;
}

static void *other_thread(void *)
{
	free(hide(malloc(48)));
	opaque = nullptr;
	return nullptr;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";

	if (argc > 2 && strcmp(argv[2], "threads") == 0) {
		pthread_t t;

		if (pthread_create(&t, nullptr, other_thread, nullptr) == 0)
			pthread_join(t, nullptr);
	}
	printf("memerr: %s\n", mode);
	fflush(stdout);
	if (strcmp(mode, "double-free") == 0) {
		char *p = make_block(40);

		free_once(p);
		free_twice(p);
	} else if (strcmp(mode, "invalid-free") == 0) {
		free_middle(make_block(64));
	} else if (strcmp(mode, "invalid-free-stack") == 0) {
		free_local();
	} else if (strcmp(mode, "mismatch") == 0) {
		drop_array(new int[10]);
		drop_malloced(malloc(24));
		free_newed(new Pair());
	} else if (strcmp(mode, "realloc-freed") == 0) {
		char *p = make_block(32);

		free_once(p);
		opaque = grow_freed(p);
	} else if (strcmp(mode, "none") == 0) {
		free_once(make_block(8));
	} else {
		fprintf(stderr, "memerr: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
