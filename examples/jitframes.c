/* SPDX-License-Identifier: MIT */
/*
 * jitframes: allocations from code without unwind information, as a JIT
 * compiler's (node, a JVM, LuaJIT), in threads whose stacks glibc frees
 * when they are joined.
 *
 *   jitframes    prints "ok"
 *
 * Each of four threads, one after the other, allocates 24 bytes and frees
 * them, then allocates 100 bytes through a stub of machine code in an
 * anonymous mapping, which has no unwind information, and frees them.  Its
 * stack is 64 MiB, more than glibc's cache of thread stacks keeps, so that
 * pthread_join frees the thread's TLS blocks there and then.
 *
 * A profiler that unwinds with libunwind through such a frame makes the
 * loader allocate libunwind's TLS block for the thread, and that block is
 * freed by the join, on the main thread: neither is the program's.  The
 * loader's 16 bytes come out of the same bin as the 24 the thread freed,
 * so a profiler that sees that free and not that allocation reports a
 * double free of the program's block (ms-record up to d8329e5 did).
 *
 * What memcheck counts (--run-libc-freeres=no): 13 allocations (stdout's
 * buffer, and a thread's DTV and two blocks for each thread), 12 frees,
 * no error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* stub(size, fn) calls fn(size), on x86-64: no CFI covers it, and like a
 * JIT's code it keeps a frame pointer, which unwinders follow through it. */
static const unsigned char stub_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov  %rsp, %rbp */
	0x48, 0x89, 0xf0,	/* mov  %rsi, %rax */
	0xff, 0xd0,		/* call *%rax */
	0x5d,			/* pop  %rbp */
	0xc3,			/* ret */
};

static void *(*stub)(size_t, void *(*)(size_t));

/* volatile: the compiler may not drop a malloc and free of its own */
static void *volatile block;

static void *work(void *arg)
{
	(void)arg;
	block = malloc(24);
	free(block);
	block = stub(100, malloc);
	free(block);
	return NULL;
}

int main(void)
{
	pthread_attr_t at;
	void *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (code == MAP_FAILED)
		return 1;
	memcpy(code, stub_code, sizeof(stub_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	stub = (void *(*)(size_t, void *(*)(size_t)))code;
	if (pthread_attr_init(&at) || pthread_attr_setstacksize(&at, 64u << 20))
		return 1;
	for (i = 0; i < 4; i++) {
		pthread_t t;

		if (pthread_create(&t, &at, work, NULL) || pthread_join(t, NULL))
			return 1;
	}
	puts("ok");
	return 0;
}
