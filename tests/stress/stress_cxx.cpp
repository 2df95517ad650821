// SPDX-License-Identifier: MIT
//
// stress_cxx: C++ exceptions through allocation paths.
//
//   stress_cxx N    N times: build a vector of strings and a map, throw
//                   from deep inside (the exception object is malloc'ed
//                   by the runtime), catch it at the top; every 100th
//                   time, ask new for more than can be had and catch
//                   std::bad_alloc.  Everything is freed by unwinding.
//                   Prints "exceptions: N caught, M bad_alloc".
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

static __attribute__((noinline)) void deep(int depth, std::vector<std::string> &v)
{
	std::map<int, std::string> m;

	for (int i = 0; i < 4; i++)
		m[i] = std::string(40 + depth, 'x');
	v.push_back(m[depth % 4]);
	if (depth == 0)
		throw std::runtime_error("bottom reached with a message long enough to allocate");
	deep(depth - 1, v);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 1000;
	int caught = 0, bad = 0;

	for (int i = 0; i < n; i++) {
		try {
			std::vector<std::string> v;

			deep(8, v);
		} catch (const std::runtime_error &) {
			caught++;
		}
		if (i % 100 == 0) {
			try {
				volatile size_t huge = (size_t)1 << 62;
				char *p = new char[huge];

				p[0] = 1;
				delete[] p;
			} catch (const std::bad_alloc &) {
				bad++;
			}
		}
	}
	std::printf("exceptions: %d caught, %d bad_alloc\n", caught, bad);
	return 0;
}
