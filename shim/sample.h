/* SPDX-License-Identifier: MIT */
/*
 * ms-record --sample BYTES inside the target: which allocations of the malloc
 * family are recorded, and the set of recorded blocks still live, so that
 * only their frees are recorded too.  msc_proto.h ("Sampling") has the
 * contract with the collector.  Included by the hot path (entry.c,
 * hooks.c) and by sample.c and threads.c.
 *
 * The choice.  Each thread counts down bytes (t_hot.left) from an
 * exponential draw of mean g_conf.sample; the allocation that takes the
 * count to zero or below is recorded, and a new count is drawn.  The
 * exponential has no memory, so a block of s bytes is recorded with
 * probability 1 - exp(-s/g_conf.sample) whatever came before it: the
 * probability whose inverse the collector weighs each recorded block by.  An allocation that is not
 * recorded costs a subtraction and a count in the thread's TLS (added to
 * its ring's header at its next hook: sample.c, sample_publish): no stack,
 * no record, no collector.
 *
 * The set.  2^16 buckets of 8 addresses (a cache line each), a bit per
 * bucket saying it holds one, and 256 counts of the recorded blocks by a
 * second, cheaper hash of their address (their region).  An address lives
 * in one bucket, never in the next (no probing), so a delete leaves no
 * tombstone behind: insert claims an empty slot of the bucket by CAS,
 * delete clears its own slot.  The free of a block that was not recorded,
 * the common case, reads its region's count (a byte each, 256 bytes in
 * all, always at hand: a 32-bit multiply of the address's low half, where the bucket's
 * hash is a 64-bit one of the whole), 0 while few recorded blocks are live
 * (about live bytes / BYTES of them, and the large blocks); else its
 * bucket's bit, in a 16 KiB array: the bucket's line, which no cache holds,
 * is read only when that is set.  NULL and the boot pool's blocks are
 * pinned (sampled_pin): their count and bit say "recorded", so that the
 * fast path needs no test of its own to send them to the full hook.  With n
 * recorded blocks live, about n / 65536 of the frees read a bucket.  The
 * region counts are
 * exact, each block's counted before it is returned and until its own free,
 * so a 0 is never wrong; one that reaches 255 stays there until the set is
 * emptied for the next session (its region's frees then always look
 * further, as they do once more than a few hundred blocks are live in all
 * of them).  The bits are kept by CAS on their 64-bit word, 32
 * bits and a 32-bit version that every insert moves on: insert sets its
 * bucket's bit after it took its slot; delete, after clearing its slot,
 * clears the bit only if it then finds the bucket's slots all empty and the
 * word as it was before it looked (else it looks again).  An insert whose
 * slot the look missed changed the word after it, so a bit is never clear
 * while its bucket holds a block whose allocation has returned.  One
 * address is never inserted and deleted at once: its free follows its
 * allocation's return, and is looked up before the real free, before the
 * address can be handed out again.  A block whose bucket is full is not
 * recorded after all, but counted (with a load of 1/8 per slot, about one
 * bucket in a million is).
 */
#ifndef SHIM_SAMPLE_H
#define SHIM_SAMPLE_H

#include "shim.h"

#pragma GCC visibility push(hidden)

#define SAMPLED_BITS 16
#define SAMPLED_WAYS 8
#define SAMPLED_REGIONS 8		/* log2 of the region counts */
#define SAMPLED_REGION_STUCK 255	/* a region's count stays at it */

struct sampled_set {
	/* Recorded blocks of each region (sampled_region), a byte each:
	 * 256 bytes, which a free reads first and which stay in the L1
	 * cache of a program that thrashes it (an 8 KiB array read first
	 * missed it on two thirds of the storm's frees, in cachegrind's
	 * simulation; 32-bit counts, 512 bytes, missed it 1.7 times as often
	 * as 16-bit ones).  0 in most of them while fewer than a couple of
	 * hundred recorded blocks are live: 256 regions of a byte, where 128
	 * of 16 bits were, halved the storm's frees that look further (3 %
	 * of them at 512K, each a likely miss of the 16 KiB bits).  A count
	 * that reaches SAMPLED_REGION_STUCK stays (sampled_count). */
	volatile uint8_t region[1u << SAMPLED_REGIONS];
	/* Bit b % 64 of word b / 32: bucket b holds a block; the word's
	 * other half: a version (sampled_bit, sample.h's head). */
	volatile uint64_t used[1u << (SAMPLED_BITS - 5)];
	/* Bit b % 64 of word b / 64: bucket b's bit in used stays set
	 * (sampled_pin). */
	volatile uint64_t pinned[1u << (SAMPLED_BITS - 6)];
	volatile uint64_t slot[1u << SAMPLED_BITS][SAMPLED_WAYS];
};

/*
 * Pins: addresses whose frees the fast path must not take, without being
 * in the set: NULL (free does nothing with it) and the boot pool's blocks
 * (never the real free's).  A pin adds one to its region's count for good
 * and keeps its bucket's bit set, so that sampled_none() is false for it
 * as for a recorded block, and the free goes to the full hook, which knows
 * what to do with it.
 */

extern struct sampled_set *g_sampled;

/*
 * The most an open fast path's count holds (fast_release): PRECOUNT_MAX
 * with glibc's malloc, whose calls the fast path counts before they are
 * made, and jumps to (entry.c); else INT64_MAX.  glibc fails a malloc of
 * less than PRECOUNT_MAX only when the process is out of memory: it is
 * then counted all the same.
 */
#define PRECOUNT_MAX ((int64_t)1 << 20)
extern int64_t g_fast_cap;

/* The region counts of a closed fast path: none is 0, and a free that
 * finds them goes to the full hook (sampled_none). */
extern const uint8_t g_closed_table[];


/* The session starts (sampling or not): maps the set once, empties it. */
bool sample_setup(void);
/* Seeds t's draws and draws its first count. */
void sample_thread_init(struct tstate *t);
/* The next count of bytes, and sample_pick() for the shared ring's state. */
int64_t sample_draw(struct tstate *t);
bool sample_pick_shared(struct tstate *t, uint64_t size);

/*
 * The top bits of a 64-bit multiply of the whole address, folded with its
 * upper bits first.  A multiply alone maps the addresses of blocks of one
 * size, made one after the other (an arithmetic sequence: glibc's chunks
 * of 64-byte blocks are 80 bytes apart), onto the buckets as a lattice,
 * which for some strides fills a fraction of them: 200,000 consecutive
 * blocks, all recorded, overflowed their 8 ways for 7 % of them at a
 * stride of 80 and 27 % at 176 (the blocks not recorded after all: a
 * site's estimate low by as much), 91 % at the worst of the strides
 * 16..4128, where random multipliers do as badly at others.  The fold
 * breaks the sequence: 0.5 % at the worst stride (0.2 % for random
 * addresses), 0.03 % at 100,000 blocks.  Three instructions more for the
 * frees that find their region's count not 0.
 */
static inline unsigned sampled_bucket(const void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p;

	return (unsigned)(((a ^ (a >> 17)) * 0x9e3779b97f4a7c15ull) >> (64 - SAMPLED_BITS));
}

/* The region whose count a free reads first: the top bits of a 32-bit
 * multiply of the address's low half (its low 4 bits, always 0, are
 * carried up by the multiply into the bits used like any other). */
static inline unsigned sampled_region(const void *p)
{
	return ((uint32_t)(uintptr_t)p * 0x9e3779b1u) >> (32 - SAMPLED_REGIONS);
}

static inline void sampled_prefetch(const void *p)
{
	__builtin_prefetch((const void *)&g_sampled->slot[sampled_bucket(p)], 1);
}

static inline volatile uint64_t *sampled_word(unsigned b)
{
	return &g_sampled->used[b >> 5];
}

/*
 * A bucket's bit: bit b % 64 of word b / 32, so that the free's test is a
 * bit test by b itself (which takes its offset modulo 64), with nothing
 * to mask or add.  Word b / 32 holds 32 buckets, whose bits are its lower
 * half when b / 32 is even and its upper half when it is odd: the version
 * is the other half.
 */
static inline uint64_t sampled_bit(unsigned b)
{
	return 1ull << (b & 63);
}

/* Word w says bucket b holds a block (a shift and a bit test: the
 * free's way, where a mask built by a shift takes one more). */
static inline bool sampled_marked(uint64_t w, unsigned b)
{
	return (w >> (b & 63)) & 1;
}

/* Word w of bucket b with its bits, and the version moved on (within its
 * 32 bits: the upper half's carry goes out of the word). */
static inline uint64_t sampled_versioned(uint64_t w, unsigned b)
{
	if (b & 32)
		return (w & ~0xffffffffull) | (uint32_t)(w + 1);
	return w + (1ull << 32);
}

/* Sets bucket b's bit by a CAS that moves its word's version on, so that
 * a settle of any of the word's buckets that looked before fails its own
 * CAS and looks again (sample.h's head). */
static inline void sampled_mark(unsigned b)
{
	volatile uint64_t *word = sampled_word(b);
	uint64_t w = *word;

	while (!__atomic_compare_exchange_n(word, &w, sampled_versioned(w | sampled_bit(b), b), false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/* A region's count moved by delta (1 or -1): by CAS, so that one at
 * SAMPLED_REGION_STUCK stays there (it may count more than that). */
static inline void sampled_count(volatile uint8_t *count, int delta)
{
	uint8_t c = *count;

	while (c != SAMPLED_REGION_STUCK &&
	       !__atomic_compare_exchange_n(count, &c, (uint8_t)(c + delta), false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED))
		;
}

/* Remembers a recorded block; false when its bucket is full.  The
 * region's count goes up first, and down again if no slot is free: a
 * count is never below the blocks in its region, only above for a
 * moment. */
static inline bool sampled_add(const void *p)
{
	unsigned b = sampled_bucket(p), i;
	volatile uint8_t *count = &g_sampled->region[sampled_region(p)];

	sampled_count(count, 1);
	for (i = 0; i < SAMPLED_WAYS; i++) {
		uint64_t expect = 0;

		if (!g_sampled->slot[b][i] &&
		    __atomic_compare_exchange_n(&g_sampled->slot[b][i], &expect,
						(uint64_t)(uintptr_t)p, false, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED)) {
			sampled_mark(b);
			return true;
		}
	}
	sampled_count(count, -1);
	return false;
}

/* After a delete from bucket b: its bit is cleared if no slot holds a
 * block and the bucket is not pinned (sample.h's head says why no
 * insert's is lost). */
void sampled_settle(unsigned b);

/* Pins p (above): its bucket is marked pinned before its bit is set, as
 * an insert's is (sampled_mark), so that a settle of the bucket that
 * missed the pin fails its CAS and looks again. */
static inline void sampled_pin(const void *p)
{
	unsigned b = sampled_bucket(p);

	sampled_count(&g_sampled->region[sampled_region(p)], 1);
	__atomic_or_fetch(&g_sampled->pinned[b >> 6], 1ull << (b & 63), __ATOMIC_SEQ_CST);
	sampled_mark(b);
}

/* Forgets p if it was recorded: true then (its free is to be recorded). */
static inline bool sampled_del(const void *p)
{
	unsigned b = sampled_bucket(p), i;

	if (likely(!sampled_marked(*sampled_word(b), b)))
		return false;
	for (i = 0; i < SAMPLED_WAYS; i++)
		if (g_sampled->slot[b][i] == (uint64_t)(uintptr_t)p) {
			__atomic_store_n(&g_sampled->slot[b][i], 0, __ATOMIC_SEQ_CST);
			sampled_count(&g_sampled->region[sampled_region(p)], -1);
			sampled_settle(b);
			return true;
		}
	return false;
}

/* The thread's fast path is open in this session but for the guard its
 * hook holds: the full hooks too count in t_hot's ring without reading
 * the tstate. */
static inline bool sample_hot(void)
{
	return t_hot.gen == FAST_GEN;
}

/*
 * The fast path of a call that is not recorded, which malloc, calloc,
 * realloc, free and C++'s plain operators take first (entry.c): open when
 * this thread's t_hot.mode is FAST_OPEN (it samples with a ring of its own
 * and no hook of its own is under way), which it tests by using its values
 * and nothing else: an allocation takes its bytes from t_hot.left, 0 when
 * closed, a free reads t_hot.table's count, never 0 when closed.  It reads
 * t_hot's line and, for a free, the set's count; no global of the
 * session's, not the tstate (another page, and the line that made the storm's unsampled
 * hooks cost 3.5 ns an event).
 */

/*
 * On the fast path: size bytes do not use up the thread's count (above
 * 0), which is taken down by them, and counted by that (bytes - left,
 * shim.h's struct thot); false: the full hook decides.
 *
 * Three instructions: the subtract of size from the count in memory, its
 * carry and zero flags then saying whether that was all of it (size >=
 * left, unsigned, as a compare would), its sign whether the count was
 * below 0.  A closed fast path's count is 0: any size uses it up (0 too,
 * by the zero flag), and however many a signal handler's allocations take
 * from it meanwhile it stays below 0 (an open count is at most 2^62),
 * never open by accident.  On the rare way out the subtract is undone, by
 * an add and no test: the full hook (or the guard's and the session's
 * checks) decides.  An open count the hook finds at 0 or below (a signal
 * handler's allocation took what was left of it between the subtract and
 * the undo) picks that allocation and draws anew.
 *
 * A size of 0 takes nothing: malloc(0) is recorded with probability
 * 1 - exp(-0/BYTES) = 0, never (the full hook's draw agrees:
 * sample_held_take).  Counting it as a byte, as this did, took a compare
 * from every allocation for blocks that no estimate can weigh usefully (a
 * weight of BYTES each), and made the count's bytes differ from the
 * bytes allocated, which are now the same number.
 */
static inline __attribute__((always_inline)) bool sample_fast_take(uint64_t size)
{
	__asm__ goto("subq %1, %0\n\t"
		     "jbe %l[used_up]\n\t"
		     "js %l[used_up]"
		     : /* no outputs: the count is written through %0 */
		     : "m"(t_hot.left), "r"(size)
		     : "cc", "memory"
		     : used_up);
	return true;
used_up:
	__asm__ volatile("addq %1, %0" : "+m"(t_hot.left) : "r"(size) : "cc");
	return false;
}

/*
 * On the fast path: no recorded block can be p (its free is counted), by
 * the region counts in `table` (the thread's t_hot.table: the set's, or
 * g_closed_table's, which send every free to the full hook) and the
 * bucket words that follow them.
 */
static inline bool sampled_none(const uint8_t *table, const void *p)
{
	unsigned b;

	/* Read through a plain pointer: one compare with memory, where a
	 * volatile read is a load and a test. */
	if (likely(!table[sampled_region(p)]))
		return true;
	/* A closed fast path's (its words would say no more).  By its
	 * address: a second test of the count made GCC read it once for
	 * both, a load and a test where the first is one compare. */
	if (table == g_closed_table)
		return false;
	/* The word read through a plain pointer too, its offset folded into
	 * the load. */
	b = sampled_bucket(p);
	return !sampled_marked(((const uint64_t *)(table + (1u << SAMPLED_REGIONS)))[b >> 5], b);
}

/*
 * What the fast path does not record, counted in the thread's TLS, each
 * count by one instruction (no signal handler of this thread can come
 * between a load and a store of it); sample_publish() adds them to the
 * ring's header.  An allocation's bytes were counted by its take
 * (sample_fast_take).
 */
static inline __attribute__((always_inline)) void sample_fast_count_alloc(void)
{
	__asm__ volatile("addq $1, %0" : "+m"(t_hot.allocs));
}

/* An allocation whose take counted its bytes failed, or will be counted
 * on another way (its thread's TLS, as signed differences: a publish
 * meanwhile took the count away). */
static inline __attribute__((always_inline)) void sample_fast_uncount_bytes(uint64_t size)
{
	__asm__ volatile("subq %1, %0" : "+m"(t_hot.bytes) : "r"(size));
}

/* ...and bytes given back again, the allocation counted (the rare way of
 * C++'s new after a failure). */
static inline __attribute__((always_inline)) void sample_fast_count_alloc_bytes(uint64_t size)
{
	__asm__ volatile("addq $1, %0\n\taddq %2, %1"
			 : "+m"(t_hot.allocs), "+m"(t_hot.bytes)
			 : "r"(size));
}

/* An allocation counted that failed after all. */
static inline __attribute__((always_inline)) void sample_fast_uncount_alloc(uint64_t size)
{
	__asm__ volatile("subq $1, %0\n\tsubq %2, %1"
			 : "+m"(t_hot.allocs), "+m"(t_hot.bytes)
			 : "r"(size));
}

static inline __attribute__((always_inline)) void sample_fast_count_free(void)
{
	__asm__ volatile("addq $1, %0" : "+m"(t_hot.frees));
}

/* What a full hook does not record, in the thread's ring's header (the
 * thread's own: sample_hot()), which the collector reads. */
static inline void sample_hook_count_alloc(uint64_t size)
{
	struct msc_ring *r = t_hot.ring;

	__asm__ volatile("addq $1, %0\n\taddq %2, %1"
			 : "+m"(r->unsampled_allocs), "+m"(r->unsampled_bytes)
			 : "r"(size));
}

static inline void sample_hook_count_free(void)
{
	__asm__ volatile("addq $1, %0" : "+m"(t_hot.ring->unsampled_frees));
}

/* Adds the fast path's counts to the ring's header (t's own ring, open
 * in this session; a hook under way): sample.c. */
void sample_publish(struct tstate *t);

/*
 * Inside a hook (the guard held, the fast path's values in held, or the
 * fast path not open): size bytes do not use up the thread's count, which
 * is taken down by them; false changes nothing.  (A size of 0 never does:
 * sample_fast_take.)
 */
static inline bool sample_held_take(uint64_t size)
{
	if (likely(t_hot.mode >= FAST_HELD) && t_hot.held > 0 && (uint64_t)t_hot.held > size) {
		t_hot.held -= (int64_t)size;
		return true;
	}
	return false;
}

/* The thread's first choice in this session: its fast path opens, with the
 * count t was given, when the outermost hook gives the guard back (and
 * not after the end's flush: sample_flush_all). */
void sample_open(struct tstate *t);
/* Thread t exits (or the end's flush runs on it): its counts go to its
 * ring's header and its fast path closes for good. */
void sample_leave(struct tstate *t);
/* The end, or a detach: every thread's counts handed in (this one's to
 * its ring's header, the others' to the control page's flushed_*). */
void sample_flush_all(void);
/* The thread's fast path closes, its counts dropped (sample_leave, and a
 * fork child's one thread: the parent's ring is not its). */
void sample_close(void);

/* Is the allocation of size bytes to be recorded?  (Never one of 0
 * bytes: sample_fast_take.)  Inside a hook. */
static inline bool sample_pick(struct tstate *t, uint64_t size)
{
	if (unlikely(t_hot.gen != FAST_GEN)) {
		if (!t->shared)
			sample_open(t);
		/* The shared ring's state, or a thread that cannot open (after
		 * the end's flush): the count in t. */
		if (t_hot.gen != FAST_GEN)
			return sample_pick_shared(t, size);
	}
	if (likely(sample_held_take(size)))
		return false;
	sample_publish(t);
	t_hot.held = sample_draw(t);
	t->pick_ptr = 0;	/* until this one is recorded */
	return true;
}

/* Counts an allocation that was not recorded (guard held), in t_hot's ring
 * when the thread's fast path is open (sample_pick opened it with the
 * thread's own ring), else in its state's ring. */
static inline void sample_count_alloc(uint64_t size)
{
	struct tstate *t;

	if (likely(sample_hot())) {
		sample_hook_count_alloc(size);
		return;
	}
	t = get_tstate();
	if (!t)
		return;
	if (unlikely(t->shared)) {
		__atomic_add_fetch(&t->ring->unsampled_allocs, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->ring->unsampled_bytes, size, __ATOMIC_RELAXED);
		return;
	}
	t->ring->unsampled_allocs++;
	t->ring->unsampled_bytes += size;
}

/*
 * Counts the free of a block that was not recorded (guard held), as
 * sample_count_alloc does.  A thread with a ring of its own whose fast
 * path is not open in this session opens it here as at its first
 * allocation (sample_open): a thread that only frees (a queue's consumer,
 * a pool's reclaimer) then frees on the fast path too, where each of its
 * frees took the full hook (72 instructions a free, 8 on the fast path).
 * Its counts reach its ring's header at its recorded frees
 * (sample_publish_frees).
 */
static inline void sample_count_free(void)
{
	struct tstate *t;

	if (likely(sample_hot())) {
		sample_hook_count_free();
		return;
	}
	t = get_tstate();
	if (!t)
		return;
	if (unlikely(t->shared)) {
		__atomic_add_fetch(&t->ring->unsampled_frees, 1, __ATOMIC_RELAXED);
		return;
	}
	t->ring->unsampled_frees++;
	sample_open(t);
}

/*
 * After a recorded free (guard held): the fast path's counts to the
 * ring's header once it has counted PUBLISH_FREES frees since they last
 * went, so that a thread that frees more than it allocates (whose counts
 * went at its recorded allocations: sample_pick) is seen within about
 * PUBLISH_FREES frees or BYTES freed, whichever is more.  Not at every
 * recorded free: the storm's threads free about 256 blocks between two
 * picks, and a publish is 35 instructions.
 */
#define PUBLISH_FREES 4096
static inline void sample_publish_frees(struct tstate *t)
{
	if (sample_hot() && unlikely(t_hot.frees >= PUBLISH_FREES))
		sample_publish(t);
}

/*
 * Called with the guard held before an allocation of size: true when
 * sampling and this one is not to be recorded (sample_count_alloc then
 * counts it); false when it is to be recorded (or there is no state: then
 * nothing is).  Always inlined: GCC left most of it out of line in the
 * hooks, which inline the event path (record.h) too.
 */
static inline __attribute__((always_inline)) bool sample_skip(uint64_t size)
{
	struct tstate *t;

	if (!g_conf.sample)
		return false;
	if (likely(sample_hot()) && likely(sample_held_take(size)))
		return true;
	t = get_tstate();
	return t && !sample_pick(t, size);
}

/*
 * Moves the fast path's count by delta bytes, and its bytes by as much, so
 * that bytes - left, what it counted, stays (shim.h's struct thot).  Each
 * by one add: a signal handler's allocation in between, which takes from
 * left, is neither lost nor counted twice (its hook may publish
 * meanwhile: then a count off by delta goes to the ring's header, and the
 * next publish makes up for it).  seq is odd meanwhile, for the end's
 * flush, which reads them from another thread.
 */
static inline __attribute__((always_inline)) void fast_left_move(int64_t delta)
{
	__asm__ volatile("addq $1, %0\n\t"
			 "addq %3, %1\n\t"
			 "addq %3, %2\n\t"
			 "addq $1, %0"
			 : "+m"(t_hot.seq), "+m"(t_hot.left), "+m"(t_hot.bytes)
			 : "r"(delta)
			 : "cc", "memory");
}

/*
 * The fast path's values wait in held, and it is closed: what this thread
 * allocates and frees meanwhile goes on to the guard's and the session's
 * checks.  mode: why (FAST_HELD, FAST_HELD_NEW), set first: a signal
 * handler's hook in the middle must find the fast path held, not hold it
 * again (it would keep the half-closed values, a count of 0 or a closed
 * table, and open them at its end, where an allocation and its free could
 * then go different ways, one counted and the other not).  Until the
 * stores are done the handler's calls take the fast path or the full
 * hooks, each as it finds them: counted either way.
 */
static inline void fast_hold(unsigned char mode)
{
	int64_t left;

	t_hot.mode = mode;
	__asm__ volatile("" ::: "memory");
	left = t_hot.left;
	fast_left_move(-left);
	t_hot.held = left + t_hot.reserve;
	t_hot.reserve = 0;
	t_hot.table = g_closed_table;
}

/*
 * ...and it opens again with its count and the set's region counts (mode
 * last, for the same reason).  The fast path's share of the count, left,
 * is at most g_fast_cap, the rest waits in reserve: so that an allocation
 * of g_fast_cap bytes or more never takes the fast path, which counts
 * glibc's malloc before it is made (entry.c), and one whose count ran
 * out while some waits in reserve goes to the full hook, which holds the
 * fast path (the count whole again in held) and opens it again here.  At
 * 1 MiB, against a mean count of 512 KiB, about one count in seven needs
 * that; at --sample 1T, where every count is in reserve, one full hook for
 * every MiB allocated (0.2 M instructions of the storm's 684 M).
 */
static inline void fast_release(void)
{
	int64_t held = t_hot.held, left = held < g_fast_cap ? held : g_fast_cap;

	fast_left_move(left - t_hot.left);
	t_hot.reserve = held - left;
	t_hot.table = (const uint8_t *)g_sampled->region;
	__asm__ volatile("" ::: "memory");
	t_hot.mode = FAST_OPEN;
}

/* A real operator new's own malloc must not take the fast path: held
 * across it (true then), IN_NEW set first (a hook that finds the fast
 * path held and IN_NEW gone knows the operator threw). */
static inline bool new_holds(void)
{
	if (likely(t_hot.mode != FAST_OPEN))
		return false;
	fast_hold(FAST_HELD_NEW);
	return true;
}

static inline void new_releases(void)
{
	if (t_hot.mode == FAST_HELD_NEW)
		fast_release();
}

/*
 * A real C++ operator new called with IN_NEW set (call: the call, its
 * value the block): its own malloc consumes the flag (entry.c's malloc),
 * the allocation being the operator's.  If the operator throws, the flag
 * went with that malloc (or is cleared by the next hook).
 */
#define IN_NEW_CALL(call)                                                       \
	({                                                                      \
		void *in_new_p_;                                                \
		bool in_new_held_;                                              \
		T_FLAGS_SET(IN_NEW);                                            \
		in_new_held_ = new_holds();                                     \
		in_new_p_ = (call);                                             \
		if (in_new_held_)                                               \
			new_releases();                                         \
		T_FLAGS_CLEAR(IN_NEW);                                          \
		in_new_p_;                                                      \
	})
#pragma GCC visibility pop

#endif
