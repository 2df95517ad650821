/* SPDX-License-Identifier: MIT */
/*
 * genstream: writes an ms-record --events stream of about BYTES bytes to
 * stdout, fast, for the tools that read streams (ms-filter, ms-report):
 *
 *   genstream BYTES
 *
 * A header, 1,000 call paths of 4 frames, then allocations of 16 to 4,096
 * bytes from them by 4 threads, each freed 1 to 100 events later, and the
 * end record with the exact totals.  At most 400 blocks are live at any
 * time: a reader's memory must not grow with the stream.  The last line
 * on stderr gives the totals (allocs, bytes) for the caller to check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define PATHS 1000
#define WINDOW 400

int main(int argc, char **argv)
{
	unsigned long long target = argc > 1 ? strtoull(argv[1], NULL, 10) : 1ull << 20;
	unsigned long long written = 0, allocs = 0, frees = 0, bytes = 0, ts = 1000000;
	uint64_t ring[WINDOW] = { 0 };
	uint64_t x = 88172645463325252ull;
	static char buf[1 << 16];
	unsigned i, k = 0;
	int n;

	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	n = printf("{\"type\":\"header\",\"format\":\"memscope\",\"version\":2,\"tool\":\"ms-record\","
		   "\"tool_version\":\"0.1.0\",\"mode\":\"launch\",\"pid\":4242,\"ppid\":1,"
		   "\"exe\":\"genstream\",\"argv\":[\"genstream\"],\"clock\":\"ns\","
		   "\"options\":{\"events\":true,\"depth\":64,\"unwind\":\"dwarf\"}}\n");
	written += (unsigned)n;
	n = printf("{\"type\":\"frame\",\"id\":1,\"ip\":\"0x900\",\"obj\":\"/usr/bin/gen\","
		   "\"offset\":\"0x900\",\"fn\":\"main\",\"file\":\"gen.c\",\"line\":1}\n");
	written += (unsigned)n;
	for (i = 1; i <= PATHS; i++) {
		n = printf("{\"type\":\"frame\",\"id\":%u,\"ip\":\"0x%x\",\"obj\":\"/usr/bin/gen\","
			   "\"offset\":\"0x%x\",\"fn\":\"site_%u\",\"file\":\"gen.c\",\"line\":%u}\n"
			   "{\"type\":\"stack\",\"id\":%u,\"frames\":[%u,%u]}\n",
			   i + 1, 0x1000 + i * 16, 0x1000 + i * 16, i, i, i, i + 1, 1);
		written += (unsigned)n;
	}
	while (written < target) {
		uint64_t ptr, size;
		unsigned tid = 100 + (unsigned)(x % 4);

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (ring[k]) {
			n = printf("{\"type\":\"free\",\"ts\":%llu,\"tid\":%u,\"ptr\":\"0x%" PRIx64
				   "\",\"fn\":\"free\"}\n", ts++, tid, ring[k]);
			written += (unsigned)n;
			frees++;
		}
		ptr = 0x10000000ull + ((uint64_t)k << 16);
		size = 16 + x % 4081;
		n = printf("{\"type\":\"alloc\",\"ts\":%llu,\"tid\":%u,\"ptr\":\"0x%" PRIx64
			   "\",\"size\":%" PRIu64 ",\"fn\":\"malloc\",\"stack\":%u}\n",
			   ts++, tid, ptr, size, (unsigned)(x >> 20) % PATHS + 1);
		written += (unsigned)n;
		ring[k] = ptr;
		allocs++;
		bytes += size;
		k = (k + 1 + (unsigned)(x >> 40) % 7) % WINDOW;
	}
	for (k = 0; k < WINDOW; k++)
		if (ring[k]) {
			printf("{\"type\":\"free\",\"ts\":%llu,\"tid\":100,\"ptr\":\"0x%" PRIx64
			       "\",\"fn\":\"free\"}\n", ts++, ring[k]);
			frees++;
		}
	printf("{\"type\":\"end\",\"pid\":4242,\"reason\":\"exit\",\"status\":0,\"ts\":%llu,"
	       "\"allocs\":%llu,\"frees\":%llu,\"bytes\":%llu,\"lost\":0}\n", ts, allocs, frees, bytes);
	if (fflush(stdout))
		return 1;
	fprintf(stderr, "genstream: allocs %llu bytes %llu\n", allocs, bytes);
	return 0;
}
