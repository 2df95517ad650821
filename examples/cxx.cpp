// SPDX-License-Identifier: MIT
/*
 * cxx: C++ allocations through operator new/delete, containers, strings and
 * exceptions, with known leaks.
 *
 * Known answer (leaks, definitely lost):
 *   7 x 24 B   new       make_widget(int)          (Widget is 24 bytes)
 *   1 x 400 B  new[]     make_array()              (100 ints)
 *   1 x 64 B   new (aligned, std::align_val_t 64) make_aligned()
 * = 9 blocks, 632 B.  Everything else (a vector grown to 100,000 ints,
 * 10,000 strings, an exception caught 100 times) is freed.
 */
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

struct Widget {
	long a, b, c;
};

static void *volatile sink;
static volatile int count;

NOINLINE static Widget *make_widget(int i)
{
	Widget *w = new Widget{ i, i, i };
	count++;
	return w;
}

NOINLINE static int *make_array()
{
	int *a = new int[100];
	a[0] = 1;
	count++;
	return a;
}

struct alignas(64) Line {
	char bytes[64];
};

NOINLINE static Line *make_aligned()
{
	Line *l = new Line;
	count++;
	return l;
}

NOINLINE static void churn()
{
	std::vector<int> v;
	for (int i = 0; i < 100000; i++)
		v.push_back(i);
	std::vector<std::string> s;
	for (int i = 0; i < 10000; i++)
		s.push_back(std::string("a string long enough to be on the heap ") + std::to_string(i));
	for (int i = 0; i < 100; i++) {
		try {
			throw std::runtime_error("thrown and caught");
		} catch (const std::exception &e) {
			count += (int)e.what()[0];
		}
	}
	delete make_widget(-1);
	delete[] make_array();
}

int main()
{
	churn();
	for (int i = 0; i < 7; i++)
		sink = make_widget(i);
	sink = make_array();
	sink = make_aligned();
	sink = nullptr;
	std::puts("cxx: done");
	return 0;
}
