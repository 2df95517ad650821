/* SPDX-License-Identifier: MIT */
/*
 * pages: memory that grows outside malloc, with a known answer for the
 * page-level view (ms-report's peak heap, peak mapped, brk growth).
 *
 *   1. malloc(1 MiB), kept to the end (still reachable): the heap's peak;
 *   2. mmap 8 MiB of private anonymous memory, every page written;
 *   3. sbrk(256 KiB), every page written: the mapped peak, 8.25 MiB;
 *   4. munmap the mapping's second half (4 MiB) and sbrk(-64 KiB):
 *      4 MiB + 192 KiB stay mapped to the end.
 *
 * No stdio before the end (its buffer would be heap): the heap's peak is
 * exactly 1 MiB.  Prints "pages: done" and exits 0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1024 * 1024)

/* Globals the reachability scan finds: every block is still reachable. */
char *heap, *map, *brk_area;

int main(void)
{
	heap = malloc(MIB);
	if (!heap)
		return 1;
	memset(heap, 1, MIB);
	map = mmap(NULL, 8 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return 1;
	memset(map, 2, 8 * MIB);
	brk_area = sbrk(256 * 1024);
	if (brk_area == (void *)-1)
		return 1;
	memset(brk_area, 3, 256 * 1024);
	if (munmap(map + 4 * MIB, 4 * MIB) || sbrk(-64 * 1024) == (void *)-1)
		return 1;
	if (write(1, "pages: done\n", 12) != 12)
		return 1;
	return 0;
}
