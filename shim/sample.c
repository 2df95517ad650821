/* SPDX-License-Identifier: MIT */
/*
 * ms-record --sample: the set of recorded blocks and the draws of the
 * per-thread byte counts (sample.h says how they are used).  No libm: the
 * shim links nothing the program might not, and a logarithm per recorded
 * allocation is all it needs.
 *
 * Owns g_sample (set by session.c from the control page) and g_sampled.
 */
#include <stddef.h>
#include <string.h>

#include "sample.h"

uint64_t g_sample;
struct sampled_set *g_sampled;
/* A bucket is one line when the set is at a page's start. */
_Static_assert(offsetof(struct sampled_set, slot) % 64 == 0, "a bucket spans two lines");
/* Threads seeded in this session: with MEMSCOPE_SEED, a thread's draws
 * depend on the seed and on the order threads first recorded. */
static unsigned g_seeded_threads;

/*
 * The set's memory, on huge pages where the kernel gives them (THP in
 * "madvise" mode, as Debian ships it): its inserts land on random pages,
 * and with 4 KiB pages a recording that samples a few thousand blocks
 * takes a page fault for nearly every one of its 1,029 pages, each of them
 * tens of microseconds in a VM (measured here: 20 us, 20 ms in all on the
 * allocation storm, in the program's own time); on 2 MiB pages it takes
 * three.  Aligned to 2 MiB, which huge pages need.
 */
#define HUGE_PAGE (2u * 1024 * 1024)

static struct sampled_set *map_set(void)
{
	size_t size = (sizeof(struct sampled_set) + 4095) & ~(size_t)4095;
	char *raw = map_anon(size + HUGE_PAGE), *set;

	if (!raw)
		return NULL;
	set = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (set > raw)
		unmap(raw, (size_t)(set - raw));
	if (set < raw + HUGE_PAGE)
		unmap(set + size, HUGE_PAGE - (size_t)(set - raw));
	madvise(set, size, MADV_HUGEPAGE);
	return (struct sampled_set *)set;
}

void sampled_settle(unsigned b)
{
	volatile uint64_t *word = sampled_word(b);

	for (;;) {
		uint64_t w = __atomic_load_n(word, __ATOMIC_SEQ_CST);
		unsigned i;

		if (!sampled_marked(w, b))
			return;
		for (i = 0; i < SAMPLED_WAYS; i++)
			if (__atomic_load_n(&g_sampled->slot[b][i], __ATOMIC_SEQ_CST))
				return;
		if (__atomic_load_n(&g_sampled->pinned[b >> 6], __ATOMIC_SEQ_CST) &
		    (1ull << (b & 63)))
			return;
		/* Fails if an insert into any of the word's buckets moved its
		 * version since w was read: the slots are read again. */
		if (__atomic_compare_exchange_n(word, &w, w & ~sampled_bit(b), false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return;
	}
}

bool sample_setup(void)
{
	g_seeded_threads = 0;
	g_sample = 0;
	boot_pool_unset();
	if (!g_ctl->sample)
		return true;
	if (!g_sampled) {
		g_sampled = map_set();
		if (!g_sampled)
			return false;
	} else {
		/* A new session (attach, detach, attach; a followed fork
		 * child): what the last one sampled is nothing to this one.
		 * Untouched pages stay out of the rss. */
		madvise(g_sampled, sizeof(*g_sampled), MADV_DONTNEED);
	}
	sampled_pin(NULL);
	boot_pool_to_set();
	g_sample = g_ctl->sample;
	return true;
}

/* splitmix64: one step of the state, one well mixed word. */
static uint64_t next_u64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * ln(x) for x in (0, 1]: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln m = 2 atanh(z), z = (m - 1) / (m + 1), |z| < 0.172: the series to z^13
 * is within 1e-12 of it.
 */
static double ln(double x)
{
	union {
		double d;
		uint64_t u;
	} v = { x };
	int e = (int)((v.u >> 52) & 0x7ff) - 1023;
	double m, z, z2;

	v.u = (v.u & ((1ull << 52) - 1)) | (1023ull << 52);
	m = v.d;
	if (m > 1.4142135623730951) {
		m /= 2;
		e++;
	}
	z = (m - 1) / (m + 1);
	z2 = z * z;
	return e * 0.6931471805599453 +
	       z * (2 + z2 * (2.0 / 3 + z2 * (2.0 / 5 + z2 * (2.0 / 7 + z2 * (2.0 / 9 +
	       z2 * (2.0 / 11 + z2 * (2.0 / 13)))))));
}

/*
 * An exponential draw of mean g_sample, rounded up to whole bytes: the
 * allocation of s bytes that finds count c left is recorded when c <= s,
 * which for a count ceil(X) is when X <= s (s is whole), probability
 * 1 - exp(-s/g_sample).
 */
int64_t sample_draw(struct tstate *t)
{
	/* u in (0, 1]: 53 random bits, never 0. */
	double u = (double)((next_u64(&t->sample_rng) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double x = -ln(u) * (double)g_sample;

	if (x >= 4.0e18)
		return INT64_MAX / 2;
	return (int64_t)x + 1;
}

void sample_thread_init(struct tstate *t)
{
	unsigned n = __atomic_fetch_add(&g_seeded_threads, 1, __ATOMIC_RELAXED);
	uint64_t seed;

	if (g_ctl->sample_seeded) {
		seed = g_ctl->sample_seed ^ ((uint64_t)n * 0xd1b54a32d192ed03ull);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^
		       (uint64_t)raw_gettid() << 16 ^ __rdtsc() ^ (uint64_t)n << 48;
	}
	t->sample_rng = seed;
	t->pick_ptr = 0;
	next_u64(&t->sample_rng);
	t->sample_left = g_sample ? sample_draw(t) : 0;
}

bool sample_pick_shared(struct tstate *t, uint64_t size)
{
	int64_t left;
	bool pick;

	if (size > (uint64_t)INT64_MAX / 2)
		size = (uint64_t)INT64_MAX / 2;
	shared_lock(t);
	left = t->sample_left - (int64_t)sample_bytes(size);
	pick = left <= 0;
	t->sample_left = pick ? sample_draw(t) : left;
	shared_unlock(t);
	return pick;
}
