/* SPDX-License-Identifier: MIT */
/*
 * ms-record --sample: the set of recorded blocks and the draws of the
 * per-thread byte counts (sample.h says how they are used).  No libm: the
 * shim links nothing the program might not, and a logarithm per recorded
 * allocation is all it needs.
 *
 * Owns g_sampled; g_conf.sample is set by session.c from the control page.
 */
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>

#include "sample.h"

struct sampled_set *g_sampled;
int64_t g_fast_cap = INT64_MAX;
/* A bucket is one line when the set is at a page's start. */
_Static_assert(offsetof(struct sampled_set, slot) % 64 == 0, "a bucket spans two lines");
/* sample_flush_all() reads a thread's counts and its count in one
 * piece, its thot up to held (read_counts). */
_Static_assert(offsetof(struct thot, left) < offsetof(struct thot, held) &&
	       offsetof(struct thot, allocs) < offsetof(struct thot, held) &&
	       offsetof(struct thot, bytes) < offsetof(struct thot, held) &&
	       offsetof(struct thot, frees) < offsetof(struct thot, held),
	       "left, allocs, bytes and frees before held");
/* sampled_none() reads the bucket words right after the region counts. */
_Static_assert(offsetof(struct sampled_set, used) == sizeof(((struct sampled_set *)0)->region),
	       "the bucket words follow the region counts");
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

void guard_in_holding(void)
{
	if (t_hot.mode == FAST_OPEN) {
		fast_hold(FAST_HELD);
		t_guard += 1 + GUARD_HOLDS;
	} else if (t_hot.mode == FAST_HELD_NEW && !(t_flags & IN_NEW)) {
		t_hot.mode = FAST_HELD;
		t_guard += 1 + GUARD_HOLDS;
	} else {
		t_guard++;
	}
}

__thread uintptr_t t_guard_sp TLS_IE;

bool guard_recover(uintptr_t caller_sp)
{
	struct tstate *t = t_state;
	stack_t ss;

	if (!t_stack_hi || caller_sp >= t_stack_hi ||
	    (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)))
		return false;
	/* As the holder would have given it back, the fast path it held
	 * opened again; its ring's event was never committed. */
	t_guard = (t_guard & ~(uint64_t)GUARD_MASK) | 1;
	guard_out();
	if (t && t != TSTATE_DEAD && t->ring)
		t->ring->busy = 0;
	return true;
}

void guard_out_holding(void)
{
	if ((t_flags & GUARD_MASK) != 1) {
		t_guard--;
		return;
	}
	t_guard -= 1 + GUARD_HOLDS;
	if (t_hot.mode == FAST_HELD)
		fast_release();
}

/* What a closed fast path reads (sample.h): region counts of 1, so that
 * every free goes on to sampled_none()'s test of the table itself. */
const uint8_t g_closed_table[1u << SAMPLED_REGIONS] __attribute__((aligned(64))) = {
	[0 ...(1u << SAMPLED_REGIONS) - 1] = 1,
};

/*
 * The threads whose fast paths count in their TLS (sample.h), by ring: the
 * end's flush (sample_flush_all) hands in what each counted since its
 * last publish.  busy: the thread is adding them itself
 * (sample_publish); the flush waits for that, and once it has begun
 * (g_flushed) no thread adds again, so that nothing is counted twice.
 * Static: a thread of an earlier session may still be on its way through
 * it.  A thread whose ring is past its end does not open (HOT_SLOTS).
 */
#define HOT_SLOTS 4096u
static struct hot_slot {
	struct thot *hot;
	volatile uint32_t busy;
} g_hots[HOT_SLOTS];
static volatile int g_flushed;

/* The slots of this session's rings. */
static unsigned hot_slots(void)
{
	return g_conf.nrings < HOT_SLOTS ? g_conf.nrings : HOT_SLOTS;
}

void sample_open(struct tstate *t)
{
	struct hot_slot *slot;

	if (t->ring_index >= HOT_SLOTS || __atomic_load_n(&g_flushed, __ATOMIC_ACQUIRE))
		return;
	slot = &g_hots[t->ring_index];
	t_hot.ring = t->ring;
	t_hot.gen = FAST_GEN;
	/* What a fast path left open by an earlier session counted (its
	 * count stays until the first hook: bytes - left is 0).  No flush
	 * reads them yet: the slot is set last. */
	t_hot.allocs = t_hot.frees = 0;
	t_hot.bytes = (uint64_t)t_hot.left;
	t_hot.held = t->sample_left;
	/* Opens when the outermost hook gives the guard back (guard_out). */
	t_hot.mode = FAST_HELD;
	if (!(t_flags & GUARD_HOLDS))
		t_guard |= GUARD_HOLDS;
	__atomic_store_n(&slot->hot, &t_hot, __ATOMIC_RELEASE);
}

/* The thread's counts into its ring's header, unless the end's flush has
 * begun: it took them, or will (it waits while busy). */
static void publish_to(struct hot_slot *slot, bool leaving)
{
	struct msc_ring *r = t_hot.ring;

	__atomic_store_n(&slot->busy, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&g_flushed, __ATOMIC_SEQ_CST)) {
		/* What the fast path counted (shim.h's struct thot; inside a
		 * hook left is 0, but for a signal handler's take on its way
		 * out: sample_fast_take). */
		uint64_t bytes = t_hot.bytes - (uint64_t)t_hot.left;

		r->unsampled_allocs += t_hot.allocs;
		r->unsampled_bytes += bytes;
		r->unsampled_frees += t_hot.frees;
		t_hot.allocs = t_hot.frees = 0;
		/* By one subtract: a signal handler's take meanwhile stays
		 * counted (bytes - left). */
		__asm__ volatile("subq %1, %0" : "+m"(t_hot.bytes) : "r"(bytes));
		if (leaving)
			__atomic_store_n(&slot->hot, NULL, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&slot->busy, 0, __ATOMIC_RELEASE);
}

void sample_publish(struct tstate *t)
{
	publish_to(&g_hots[t->ring_index], false);
}

void sample_close(void)
{
	t_hot.gen = 0;
	t_hot.mode = FAST_CLOSED_MODE;
	t_hot.seq++;
	__asm__ volatile("" ::: "memory");
	t_hot.left = t_hot.held = t_hot.reserve = 0;
	t_hot.table = g_closed_table;
	t_hot.allocs = t_hot.bytes = t_hot.frees = 0;
	__asm__ volatile("" ::: "memory");
	t_hot.seq++;
}

void sample_leave(struct tstate *t)
{
	if (sample_hot())
		publish_to(&g_hots[t->ring_index], true);
	sample_close();
}

/* len bytes of another thread's TLS, through process_vm_readv (which
 * fails instead of faulting should the thread be gone with its stack). */
static bool read_remote(void *to, const void *from, size_t len)
{
	struct iovec local = { to, len }, remote = { (void *)from, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/*
 * Another thread's counts, read while its seq stays the same and even:
 * not while its hook moves left and bytes apart (fast_left_move), which
 * takes a few instructions.  Its fast path's takes from left meanwhile
 * are each a count of their own.
 */
static bool read_counts(const struct thot *hot, uint64_t counts[3])
{
	struct thot copy;
	uint64_t seq, again;
	unsigned tries;

	for (tries = 0; tries < 1000; tries++) {
		if (!read_remote(&seq, &hot->seq, sizeof(seq)) ||
		    !read_remote(&copy, hot, offsetof(struct thot, held)) ||
		    !read_remote(&again, &hot->seq, sizeof(again)))
			return false;
		if (seq == again && !(seq & 1))
			break;
		sched_yield();
	}
	counts[0] = copy.allocs;
	counts[1] = copy.bytes - (uint64_t)copy.left;
	counts[2] = copy.frees;
	return true;
}

/*
 * The end (or a detach): every thread's counts handed in.  This thread's
 * into its ring's header; another's, read from its TLS (read_counts)
 * into the control page's flushed_*: its own hooks may be adding to its
 * ring's header meanwhile, by plain adds that an atomic add of ours in
 * between would be lost to.  What the others count afterwards is lost:
 * they run on while the process ends.  This thread's fast path stays
 * closed: its hooks count in the ring's header from now on.
 */
void sample_flush_all(void)
{
	struct tstate *t = t_state;
	unsigned i, n;

	if (!g_conf.sample || !g_conf.ctl || __atomic_load_n(&g_flushed, __ATOMIC_ACQUIRE))
		return;
	if (t && t != TSTATE_DEAD)
		sample_leave(t);
	__atomic_store_n(&g_flushed, 1, __ATOMIC_SEQ_CST);
	n = hot_slots();
	for (i = 1; i < n; i++) {
		struct hot_slot *slot = &g_hots[i];
		struct thot *hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
		uint64_t counts[3];	/* allocs, bytes, frees */

		if (!hot)
			continue;
		while (__atomic_load_n(&slot->busy, __ATOMIC_SEQ_CST))
			__builtin_ia32_pause();
		hot = __atomic_load_n(&slot->hot, __ATOMIC_ACQUIRE);
		if (!hot)
			continue;
		if (read_counts(hot, counts)) {
			struct msc_ctl *ctl = g_conf.ctl;

			__atomic_add_fetch(&ctl->flushed_allocs, counts[0], __ATOMIC_RELAXED);
			__atomic_add_fetch(&ctl->flushed_bytes, counts[1], __ATOMIC_RELAXED);
			__atomic_add_fetch(&ctl->flushed_frees, counts[2], __ATOMIC_RELAXED);
		}
		slot->hot = NULL;
	}
}

/* A session starts: no thread has opened in it, nothing is flushed (its
 * rings' slots only: the pages of the others stay untouched). */
static void hots_reset(void)
{
	memset(g_hots, 0, hot_slots() * sizeof(*g_hots));
	__atomic_store_n(&g_flushed, 0, __ATOMIC_SEQ_CST);
}

bool sample_setup(void)
{
	g_seeded_threads = 0;
	g_conf.sample = 0;
	hots_reset();
	boot_pool_unset();
	if (!g_conf.ctl->sample)
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
	g_conf.sample = g_conf.ctl->sample;
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
 * An exponential draw of mean g_conf.sample, rounded up to whole bytes: the
 * allocation of s bytes that finds count c left is recorded when c <= s,
 * which for a count ceil(X) is when X <= s (s is whole), probability
 * 1 - exp(-s/g_conf.sample).
 */
int64_t sample_draw(struct tstate *t)
{
	/* u in (0, 1]: 53 random bits, never 0. */
	double u = (double)((next_u64(&t->sample_rng) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double x = -ln(u) * (double)g_conf.sample;

	if (x >= 4.0e18)
		return INT64_MAX / 2;
	return (int64_t)x + 1;
}

void sample_thread_init(struct tstate *t)
{
	unsigned n = __atomic_fetch_add(&g_seeded_threads, 1, __ATOMIC_RELAXED);
	uint64_t seed;

	if (g_conf.ctl->sample_seeded) {
		seed = g_conf.ctl->sample_seed ^ ((uint64_t)n * 0xd1b54a32d192ed03ull);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^
		       (uint64_t)raw_gettid() << 16 ^ __rdtsc() ^ (uint64_t)n << 48;
	}
	t->sample_rng = seed;
	t->pick_ptr = 0;
	next_u64(&t->sample_rng);
	t->sample_left = g_conf.sample ? sample_draw(t) : 0;
}

bool sample_pick_shared(struct tstate *t, uint64_t size)
{
	int64_t left;
	bool pick;

	if (size > (uint64_t)INT64_MAX / 2)
		size = (uint64_t)INT64_MAX / 2;
	shared_lock(t);
	left = t->sample_left - (int64_t)size;
	pick = left <= 0;
	t->sample_left = pick ? sample_draw(t) : left;
	shared_unlock(t);
	return pick;
}
