// SPDX-License-Identifier: MIT
//
// cxx_storm: the allocation storm of a C++ program, for make bench's
// instr section.
//
//   cxx_storm [ITERATIONS]     (default 200,000)
//
// A table of 1024 slots; every iteration deletes a random slot's block and
// puts a new one there: every other one an array (new[], 16 B to 4 KiB),
// the others an object of 24 to 96 bytes (new and sized delete).  The
// random generator has a fixed seed; the program prints a checksum that is
// the same under any profiler.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace {

struct Node {
	uint64_t w[3];
};

struct Big {
	uint64_t w[12];
};

struct Slot {
	void *p = nullptr;
	int kind = 0;		// 0 empty, 1 array, 2 Node, 3 Big
};

uint64_t rng = 88172645463325252ull;

uint64_t next()
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

void release(Slot &s)
{
	switch (s.kind) {
	case 1: delete[] static_cast<char *>(s.p); break;
	case 2: delete static_cast<Node *>(s.p); break;
	case 3: delete static_cast<Big *>(s.p); break;
	}
	s.kind = 0;
}

} // namespace

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	static Slot slot[1024];
	uint64_t sum = 0;

	for (long i = 0; i < n; i++) {
		uint64_t x = next();
		Slot &s = slot[x % 1024];

		release(s);
		if (i & 1) {
			char *a = new char[16 + (x >> 32) % 4081];
			a[0] = (char)i;
			s.p = a;
			s.kind = 1;
		} else if ((x >> 40) & 1) {
			Node *o = new Node{{(uint64_t)i, x, 0}};
			s.p = o;
			s.kind = 2;
		} else {
			Big *o = new Big();
			o->w[0] = x;
			s.p = o;
			s.kind = 3;
		}
		sum += (uintptr_t)s.p >> 4 & 0xff;
	}
	for (Slot &s : slot)
		release(s);
	printf("cxx_storm: %ld iterations, checksum %llu\n", n, (unsigned long long)sum);
	return 0;
}
