/* SPDX-License-Identifier: MIT */
/*
 * forward.so: the floor of any LD_PRELOAD allocation profiler, for make
 * bench's sampled section and split_sampled.sh.  It interposes malloc,
 * free, calloc and realloc and does nothing but pass each call to glibc's
 * (its exported __libc_ names), as libmemscope.so's fast path does once it
 * has counted: the program's call lands in a preloaded library, which jumps
 * to the real function through a GOT slot (-fno-plt: one indirect jump, as
 * the shim's `jmp *real_malloc`).  What a sampled recording costs beyond
 * this is memscope's; this much, any interposer pays.
 */
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void __libc_free(void *ptr);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);

void *malloc(size_t size);
void free(void *ptr);
void *calloc(size_t n, size_t size);
void *realloc(void *ptr, size_t size);

void *malloc(size_t size)
{
	return __libc_malloc(size);
}

void free(void *ptr)
{
	__libc_free(ptr);
}

void *calloc(size_t n, size_t size)
{
	return __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size)
{
	return __libc_realloc(ptr, size);
}
