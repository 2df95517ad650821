// SPDX-License-Identifier: MIT
/*
 * stale: a lost std::map whose nodes' addresses are still in memory the
 * program never wrote again: the spare capacity of a vector it keeps,
 * which got the memory of a freed vector that held every node's address.
 * Memcheck sees those bytes as undefined and the map as lost; a leak scan
 * that took them for pointers would find every node reachable.
 *
 *   stale [N]       (N nodes, default 1000)
 *
 * Known answer (memcheck's): 48 B definitely lost in 1 block (the map),
 * N x 40 B indirectly lost in N blocks (its nodes).  Prints 1 when the
 * kept vector did get the freed vector's memory (the case shown), else 0.
 */
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#define NOINLINE __attribute__((noinline))

static std::vector<char> *keep;

NOINLINE static bool lose_map(int n)
{
	std::map<int, int> *m = new std::map<int, int>;
	std::vector<void *> *where = new std::vector<void *>;
	void *old;

	for (int i = 0; i < n; i++)
		(*m)[i] = i;
	where->reserve((size_t)n);
	/* the address of each node (its pair sits 32 bytes in) */
	for (auto &kv : *m)
		where->push_back((char *)&kv - 32);
	old = where->data();
	delete where;
	keep = new std::vector<char>;
	keep->reserve((size_t)n * sizeof(void *));	/* never written */
	m = nullptr;
	__asm__ volatile("" : : "r"(m) : "memory");
	return keep->data() == old;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 1000;

	std::printf("%d\n", lose_map(n > 0 ? n : 1000) ? 1 : 0);
	return 0;
}
