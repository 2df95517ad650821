/* SPDX-License-Identifier: MIT */
/*
 * thirdparty: a program that allocates through a third-party allocator's
 * own API (built three times: -DUSE_JEMALLOC linked with libjemalloc2,
 * -DUSE_MIMALLOC with libmimalloc2.0, -DUSE_TCMALLOC with
 * libtcmalloc-minimal4), with known leaks, for ms-record's built-in hooks.
 * The allocator is the program's malloc too: each build also leaks through
 * plain malloc, and frees blocks of one API with the other, as these
 * allocators allow.  The prototypes are written here: Debian's runtime
 * packages ship no headers.
 *
 * Known answer (all definitely lost), by the function that calls:
 *   every build   2 x 33 B   malloc            leak_plain
 *   jemalloc      4 x 40 B   mallocx           leak_mallocx
 *                 3 x 200 B  rallocx           leak_rallocx   (each from 10 B)
 *                 2 x 50 B   xallocx           leak_xallocx   (100 B shrunk in place)
 *                 = 11 blocks, 926 B
 *   mimalloc      5 x 24 B   mi_malloc         leak_mi_malloc
 *                 1 x 100 B  mi_calloc         leak_mi_calloc (4 x 25)
 *                 2 x 300 B  mi_realloc        leak_mi_realloc (each from 16 B)
 *                 1 x 6 B    mi_strdup         leak_mi_strdup ("hello")
 *                 1 x 64 B   mi_malloc_aligned leak_mi_aligned
 *                 1 x 104 B  mi_expand         leak_mi_expand (100 B grown in place)
 *                 1 x 32 B   mi_new            leak_mi_new
 *                 = 14 blocks, 1,092 B; a heap of 10 x 16 B is destroyed
 *   tcmalloc      3 x 72 B   tc_malloc         leak_tc_malloc
 *                 1 x 100 B  tc_calloc         leak_tc_calloc (2 x 50)
 *                 2 x 128 B  tc_realloc        leak_tc_realloc (each from 8 B)
 *                 1 x 56 B   tc_new            leak_tc_new
 *                 1 x 80 B   tc_newarray       leak_tc_newarray
 *                 1 x 96 B   tc_posix_memalign leak_tc_memalign
 *                 = 11 blocks, 870 B
 * Leaked blocks are written over, so that no stale pointer left in them
 * by the allocator (a free list's) makes one reach another.
 * Churn, all freed: CHURN rounds of the API's allocations and frees.
 * Output goes through write(2), so stdio allocates nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CHURN 1000

void *volatile sink;
volatile unsigned count;

#if defined(USE_JEMALLOC)
void *mallocx(size_t size, int flags);
void *rallocx(void *ptr, size_t size, int flags);
size_t xallocx(void *ptr, size_t size, size_t extra, int flags);
void dallocx(void *ptr, int flags);
void sdallocx(void *ptr, size_t size, int flags);
#define NAME "jemalloc"

NOINLINE static void leak_mallocx(void)
{
	sink = memset(mallocx(40, 0), 'x', 40);
	count++;
}

NOINLINE static void leak_rallocx(void)
{
	char *p = mallocx(10, 0);

	p[0] = 1;
	sink = memset(rallocx(p, 200, 0), 'x', 200);
	count++;
}

/*
 * jemalloc's thread cache keeps the blocks it hands out in a stack of
 * pointers, and a pop leaves the pointer where it was: a conservative scan
 * (memcheck's as ours) finds it there until a push writes over it.  Many
 * blocks of the class taken and given back write over those slots.
 */
NOINLINE static void flush_class(size_t size)
{
	void *b[64];
	unsigned i;

	for (i = 0; i < 64; i++)
		b[i] = mallocx(size, 0);
	for (i = 0; i < 64; i++)
		dallocx(b[i], 0);
}

NOINLINE static void leak_xallocx(void)
{
	char *p = mallocx(100, 0);

	/* A grow that cannot happen in place changes nothing; a shrink
	 * keeps the block, which is then 50 bytes for the program. */
	if (xallocx(p, 1 << 20, 0, 0) >= 1 << 20)
		count += 1000;
	if (xallocx(p, 50, 0, 0) < 50)
		count += 1000;
	sink = memset(p, 'x', 50);
	count++;
	flush_class(100);
}

NOINLINE static void churn(unsigned i)
{
	char *p = mallocx(32 + (i & 127), 0), *q;

	p[0] = (char)i;
	dallocx(p, 0);
	p = mallocx(64, 0);
	sdallocx(p, 64, 0);
	q = mallocx(16, 0);
	q = rallocx(q, 48 + (i & 15), 0);
	free(q);		/* jemalloc's free takes any of its blocks */
	q = malloc(24);
	dallocx(q, 0);
}

NOINLINE static void leak_api(void)
{
	int i;

	for (i = 0; i < 4; i++)
		leak_mallocx();
	for (i = 0; i < 3; i++)
		leak_rallocx();
	for (i = 0; i < 2; i++)
		leak_xallocx();
}
#elif defined(USE_MIMALLOC)
void *mi_malloc(size_t size);
void *mi_calloc(size_t count, size_t size);
void *mi_realloc(void *p, size_t newsize);
void *mi_zalloc(size_t size);
char *mi_strdup(const char *s);
void *mi_malloc_aligned(size_t size, size_t alignment);
void *mi_expand(void *p, size_t newsize);
void *mi_new(size_t size);
void mi_free(void *p);
void mi_free_size(void *p, size_t size);
void *mi_heap_new(void);
void *mi_heap_malloc(void *heap, size_t size);
void mi_heap_destroy(void *heap);
#define NAME "mimalloc"

NOINLINE static void leak_mi_malloc(void)
{
	sink = memset(mi_malloc(24), 'x', 24);
	count++;
}

NOINLINE static void leak_mi_calloc(void)
{
	sink = mi_calloc(4, 25);
	count++;
}

NOINLINE static void leak_mi_realloc(void)
{
	char *p = mi_malloc(16);

	p[0] = 1;
	sink = memset(mi_realloc(p, 300), 'x', 300);
	count++;
}

NOINLINE static void leak_mi_strdup(void)
{
	sink = mi_strdup("hello");
	count++;
}

NOINLINE static void leak_mi_aligned(void)
{
	sink = memset(mi_malloc_aligned(64, 64), 'x', 64);
	count++;
}

NOINLINE static void leak_mi_expand(void)
{
	char *p = mi_malloc(100);

	/* 100 bytes have a 112-byte block: 104 fit in place. */
	if (mi_expand(p, 104) != p)
		count += 1000;
	sink = memset(p, 'x', 104);
	count++;
}

NOINLINE static void leak_mi_new(void)
{
	sink = memset(mi_new(32), 'x', 32);
	count++;
}

/* A heap's blocks, released all at once by its destroy. */
NOINLINE static void heap_destroyed(void)
{
	void *heap = mi_heap_new();
	int i;

	for (i = 0; i < 10; i++)
		sink = mi_heap_malloc(heap, 16);
	mi_heap_destroy(heap);
	count++;
}

NOINLINE static void churn(unsigned i)
{
	char *p = mi_malloc(32 + (i & 127)), *q;

	p[0] = (char)i;
	mi_free(p);
	p = mi_zalloc(64);
	mi_free_size(p, 64);
	q = mi_malloc(16);
	q = mi_realloc(q, 48 + (i & 15));
	free(q);		/* mimalloc's free takes any of its blocks */
	q = malloc(24);
	mi_free(q);
}

NOINLINE static void leak_api(void)
{
	int i;

	for (i = 0; i < 5; i++)
		leak_mi_malloc();
	leak_mi_calloc();
	for (i = 0; i < 2; i++)
		leak_mi_realloc();
	leak_mi_strdup();
	leak_mi_aligned();
	leak_mi_expand();
	leak_mi_new();
	heap_destroyed();
}
#elif defined(USE_TCMALLOC)
void *tc_malloc(size_t size);
void *tc_calloc(size_t n, size_t size);
void *tc_realloc(void *ptr, size_t size);
void tc_free(void *ptr);
void *tc_new(size_t size);
void *tc_newarray(size_t size);
void tc_delete(void *p);
void tc_deletearray(void *p);
int tc_posix_memalign(void **ptr, size_t align, size_t size);
#define NAME "tcmalloc"

NOINLINE static void leak_tc_malloc(void)
{
	sink = memset(tc_malloc(72), 'x', 72);
	count++;
}

NOINLINE static void leak_tc_calloc(void)
{
	sink = tc_calloc(2, 50);
	count++;
}

NOINLINE static void leak_tc_realloc(void)
{
	char *p = tc_malloc(8);

	p[0] = 1;
	sink = memset(tc_realloc(p, 128), 'x', 128);
	count++;
}

NOINLINE static void leak_tc_new(void)
{
	sink = memset(tc_new(56), 'x', 56);
	count++;
}

NOINLINE static void leak_tc_newarray(void)
{
	sink = memset(tc_newarray(80), 'x', 80);
	count++;
}

NOINLINE static void leak_tc_memalign(void)
{
	void *p = NULL;

	if (tc_posix_memalign(&p, 64, 96) != 0)
		count += 1000;
	sink = p ? memset(p, 'x', 96) : p;
	count++;
}

NOINLINE static void churn(unsigned i)
{
	char *p = tc_malloc(32 + (i & 127)), *q;

	p[0] = (char)i;
	tc_free(p);
	p = tc_new(64);
	tc_delete(p);
	p = tc_newarray(40);
	tc_deletearray(p);
	q = tc_calloc(4, 4);
	q = tc_realloc(q, 48 + (i & 15));
	free(q);		/* tcmalloc's free takes its malloc family's blocks */
	q = malloc(24);
	tc_free(q);
}

NOINLINE static void leak_api(void)
{
	int i;

	for (i = 0; i < 3; i++)
		leak_tc_malloc();
	leak_tc_calloc();
	for (i = 0; i < 2; i++)
		leak_tc_realloc();
	leak_tc_new();
	leak_tc_newarray();
	leak_tc_memalign();
}
#else
#error "build with -DUSE_JEMALLOC, -DUSE_MIMALLOC or -DUSE_TCMALLOC"
#endif

NOINLINE static void leak_plain(void)
{
	sink = memset(malloc(33), 'x', 33);
	count++;
}

/* Writes over the stack below main's frame, where the leak functions'
 * frames were: a pointer left in a dead frame would keep a block
 * reachable for a conservative scan (memcheck's as ours). */
NOINLINE static void scrub_stack(void)
{
	volatile char area[16384];

	memset((char *)area, 0, sizeof(area));
}

int main(void)
{
	static const char msg[] = "thirdparty: " NAME " done\n";
	unsigned i;

	for (i = 0; i < CHURN; i++)
		churn(i);
	leak_api();
	leak_plain();
	leak_plain();
	sink = NULL;
	scrub_stack();
	if (count >= 1000 || write(1, msg, sizeof(msg) - 1) < 0)
		return 1;
	return 0;
}
