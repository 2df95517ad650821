/* SPDX-License-Identifier: MIT */
/*
 * msc_agg: pairs allocation events with their frees and aggregates them per
 * allocation site.  ms-record feeds it from the shim's binary events and
 * ms-report from --events records: the same code, so the same numbers.
 *
 * Events must arrive in time order.  A site is one (stack, size) pair, with
 * the allocation function of its first block.  A stack that allocates more
 * than MSC_AGG_EXACT_SIZES different sizes has all its sizes folded into
 * power-of-two size classes instead (size = the class's first size, size_max
 * its last; counts and bytes stay exact): the number of sites stays
 * proportional to the number of stacks, not to the sizes a program happens
 * to ask for.  Live blocks are kept in a table keyed by address (malloc
 * family) or an interval list (anonymous mmap regions, which munmap may cut
 * in pieces).  "live" counts both.
 *
 * Peak contributions are exact and O(1) per event: when the total live
 * bytes reach a new maximum, the next event opens a new epoch, and a site
 * touched for the first time in an epoch first saves its live bytes (its
 * value at the peak).  A site's contribution to the peak is that saved value,
 * or its current live bytes if it was not touched since.
 *
 * Lifetimes: "temporary" counts blocks freed by the thread that allocated
 * them before that thread allocated anything else (heaptrack's temporary
 * allocations); "ages" counts frees by lifetime decade (< 1 us, < 10 us, ...
 * < 10 s, >= 10 s) so that any decade threshold can be applied afterwards.
 *
 * Sampled recordings (ms-record --sample BYTES, a->sample = BYTES): the shim
 * recorded each block of s bytes with probability p = 1 - exp(-s/BYTES), so
 * each recorded block stands for 1/p blocks.  Its weight, a whole number
 * of blocks (msc_sample_weight: 1/p rounded up or down at random, so that
 * its expectation is 1/p), multiplies what it adds to its site (allocs,
 * bytes, frees, live and peak bytes, temporary, ages), to the live totals
 * and to the leaks: the figures become unbiased estimates, integers still,
 * and as consistent as exact ones (a site's bytes are allocs * size), but
 * for "temporary", which needs every allocation seen: 0.  The
 * weight is drawn from the block's address and allocation time, so that
 * its free takes back exactly what its allocation added.  Blocks of custom
 * allocators and mappings were all recorded: weight 1.  The totals of
 * allocations, bytes and frees stay exact: the recorded ones counted once
 * (recorded_*) plus what the shim counted and did not record
 * (unsampled_*, from its rings), when the recorder knows them.
 *
 * Failure: functions return -ENOMEM when a table cannot grow (the event is
 * then lost and counted in a->dropped).
 */
#ifndef MSC_AGG_H
#define MSC_AGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_hash.h"
#include "msc_proto.h"

#define MSC_AGE_BUCKETS 9
#define MSC_AGG_EXACT_SIZES 16
#define MSC_AGG_LAST 64

/* Leak kinds, Valgrind's categories. */
enum msc_leak_kind {
	MSC_LEAK_UNSCANNED = 0,		/* no reachability scan */
	MSC_LEAK_DEFINITELY,		/* no pointer to it anywhere reachable */
	MSC_LEAK_INDIRECTLY,		/* reachable only from definitely lost blocks */
	MSC_LEAK_POSSIBLY,		/* reachable only through interior pointers */
	MSC_LEAK_REACHABLE,		/* still pointed to: not a leak */
	MSC_LEAK_UNKNOWN,		/* fate unknowable (allocated before attach) */
	MSC_LEAK_KINDS,
};
const char *msc_leak_kind_name(unsigned kind);
int msc_leak_kind_parse(const char *name);
/* Is a block of this kind counted as leaked?  Definitely and indirectly
 * lost, and unscanned ones (no scan said otherwise). */
bool msc_leak_kind_leaked(unsigned kind);

struct msc_site {
	/* What an allocation touches, and a free first: one cache line. */
	uint32_t stack;
	uint8_t fn;			/* enum msc_fn of the first allocation */
	bool classed;			/* a size class [size, size_max] */
	bool removed;			/* folded into the class site `forward` */
	bool peak_inexact;		/* peak_live_bytes unknown (folded) */
	uint32_t peak_epoch;
	uint32_t samples;		/* --sample: blocks recorded, the low 32
					 * bits (msc_site_samples(); here, not
					 * beside frees: a recorded allocation
					 * touches this line alone) */
	uint64_t allocs;
	uint64_t bytes;			/* allocated in total */
	uint64_t live_bytes;
	uint64_t peak_live_bytes;	/* this site's own maximum */
	uint64_t peak_saved;		/* live bytes at the global peak, see above */
	uint64_t last_ts;		/* of its allocations */
	/* What a free touches besides. */
	uint64_t frees;
	uint64_t temporary;
	uint64_t ages[MSC_AGE_BUCKETS];
	/* The rest. */
	uint64_t size, size_max;
	uint64_t first_ts;		/* of its allocations */
	uint32_t pool;			/* its first block's pool's name:
					 * a->pool_names index + 1, 0 = none */
	uint32_t prev_exact;		/* exact: the stack's exact site made
					 * before it, index + 1, 0 = none */
	uint32_t forward;		/* removed: the class site it went to */
	uint32_t samples_hi;		/* the high 32 bits of samples */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct msc_site) == 3 * 64, "a site is three cache lines");

/* --sample: the site's blocks recorded (allocs is their weights' sum). */
static inline uint64_t msc_site_samples(const struct msc_site *s)
{
	return (uint64_t)s->samples_hi << 32 | s->samples;
}

static inline void msc_site_add_samples(struct msc_site *s, uint64_t n)
{
	n += msc_site_samples(s);
	s->samples = (uint32_t)n;
	s->samples_hi = (uint32_t)(n >> 32);
}

/* Blocks of the site still live. */
static inline uint64_t msc_site_live(const struct msc_site *s)
{
	return s->allocs - s->frees;
}

/*
 * Blocks of a custom allocator (memscope.h) often lie inside a block of
 * malloc's (a pool's chunk) and may share its address: they are keyed apart,
 * with this bit set.  User-space addresses never have it.
 */
#define MSC_CUSTOM_KEY (1ull << 63)

/*
 * A pool's block (memscope.h's pools) is keyed apart from other custom
 * blocks too: its pool's slot (1 to MSC_POOL_SLOTS, see struct msc_pool)
 * is in the bits from MSC_POOL_SHIFT up.  x86_64 user addresses fit below
 * (47 bits; 57-bit ones only come to a program that asks mmap for them).
 * MSC_KEY_ADDR() is the address of any key.
 */
#define MSC_POOL_SHIFT 47
#define MSC_POOL_SLOTS 0xffffu
#define MSC_KEY_ADDR(key) ((key) & ((1ull << MSC_POOL_SHIFT) - 1))

/*
 * A live pool, in a->pools[slot - 1]: the id the program gave it (its
 * address) and its name, a->pool_names index.  The slot of a destroyed
 * pool is free for the next one (no live block has its key any more):
 * next_free links the free slots.
 */
struct msc_pool {
	uint64_t id;			/* 0: a free slot */
	uint32_t name;
	uint32_t next_free;		/* slot, 0 = none */
};

/*
 * A live block, as the table keeps it: 24 bytes, as there is one per block
 * the program holds (a 5M-object Python heap is 5M entries).  Read it with
 * the accessors below.  The allocation time is kept relative to the first
 * one the table saw (56 bits of ns: two years), the leak kind in the top
 * byte; a size of 4 GiB or more is kept in a->big, keyed by ptr.
 */
struct msc_live {
	uint64_t ptr;			/* the address, | MSC_CUSTOM_KEY for custom,
					 * | slot << MSC_POOL_SHIFT for a pool's */
	uint64_t ts_kind;		/* ts - a->ts_base | kind << 56 */
	uint32_t site;			/* index into a->sites (follow forward) */
	uint32_t size;			/* MSC_LIVE_BIG: see a->big */
};

/*
 * Where a block's entry is looked for first: a multiplicative (Fibonacci)
 * hash of the address, blocks being 16-byte aligned, folded first.  The
 * multiply alone maps blocks of one size made one after the other (an
 * arithmetic sequence: glibc's 56-byte and 120-byte blocks are 64 and 128
 * bytes apart) onto a lattice of homes that for some strides crowds
 * them, and every event on them probes many slots past its home; folded
 * first, the homes spread out at every stride a heap's blocks have.
 */
static inline size_t msc_live_hash(uint64_t ptr, size_t mask)
{
	uint64_t q = ptr >> 4;

	q ^= q >> 13;
	return (size_t)((q * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

#define MSC_LIVE_BIG UINT32_MAX
/* Slots past the last home (struct msc_agg): a run that reaches the end
 * makes the table grow. */
#define MSC_LIVE_TAIL 1024
#define MSC_LIVE_TS_MASK ((1ull << 56) - 1)

struct msc_site_slot {
	uint64_t size;
	uint32_t stack;
	uint32_t index1;		/* site index + 1, 0 = empty */
};

/*
 * How a stack's sites are found, per stack id.  Exact sites are in the
 * (stack, size) hash index, the one used last also here (most stacks
 * allocate one size); a folded stack's class sites are in a block of
 * MSC_AGG_CLASSES slots of a->class_slots, one per bit length of the size.
 */
#define MSC_AGG_CLASSES 65

struct msc_stack_sites {
	uint64_t last_size;
	uint32_t last;			/* exact site of last_size: index + 1, 0 = none */
	uint32_t classes;		/* folded: block number + 1, 0 = not folded */
	uint16_t nexact;		/* exact sites made (saturates) */
	uint32_t exact;			/* the last one made, index + 1 (its
					 * prev_exact the one before...), 0 =
					 * none; 0 once folded */
};

/*
 * A live anonymous mapping, or a piece of one: munmap can punch holes, and
 * the pieces of one mapping share a block id; the block is freed when its
 * last piece goes.  One piece per block is "primary" and counts it.
 */
struct msc_region {
	uint64_t start, end;		/* this piece */
	uint64_t ts;
	uint32_t site;
	uint32_t block;
	uint8_t kind;
	bool primary;
};

/* Memory errors the collector sees in the event stream (agg_errors.c). */
enum msc_error_kind {
	MSC_ERR_NONE,
	MSC_ERR_DOUBLE_FREE,		/* free of a block already freed */
	MSC_ERR_INVALID_FREE,		/* free of what no allocator returned */
	MSC_ERR_MISMATCH,		/* malloc/new/new[] released by another family */
	MSC_ERR_REALLOC_FREED,		/* realloc of a freed block */
	MSC_ERR_KINDS,
};

/* "double-free", ...; "" for MSC_ERR_NONE. */
const char *msc_error_name(unsigned kind);

/*
 * Frees remembered to tell a double free from an invalid one, and to name
 * the first free: the last MSC_QUARANTINE frees of known blocks (5 MiB).
 */
#define MSC_QUARANTINE 131072u

struct msc_quarantined {
	uint64_t ptr, size, ts;		/* ts: of the free */
	uint32_t alloc_stack, free_stack;
	uint32_t tid;			/* of the free */
	uint8_t alloc_fn, free_fn;
	bool ambiguous;			/* maybe of the block before (msc_recent) */
};

/* The error the last event made, for the recorder to write out. */
struct msc_agg_error {
	unsigned kind;			/* MSC_ERR_NONE: none pending */
	uint64_t ts, ptr;
	uint32_t tid, stack;		/* the bad call */
	uint8_t fn;
	bool have_block;		/* the block: freed, or the one ptr points into */
	uint64_t block, size, alloc_ts;
	uint32_t alloc_stack;
	uint8_t alloc_fn;
	bool have_free;			/* its first free (double-free, realloc-freed) */
	uint64_t free_ts;
	uint32_t free_stack, free_tid;
	uint8_t free_fn;
};

/*
 * The CI gates (--fail-on-leak[=KINDS]): parses "definitely,indirectly"
 * (NULL: those two; "all" for every kind) into a mask of 1 << kind, and
 * counts the blocks of blocks[] (by kind) the mask takes.
 */
int msc_gate_parse_kinds(const char *list, unsigned *mask);
uint64_t msc_gate_leaks(const uint64_t blocks[MSC_LEAK_KINDS], unsigned mask);

/* At most this many errors are written in full; all are counted. */
#define MSC_AGG_MAX_ERRORS 1000

/* What msc_agg_free() learnt about the block it freed. */
struct msc_freed {
	uint64_t size;
	uint32_t stack;
	uint8_t fn;
	uint64_t alloc_ts;
};

struct msc_hold_entry;

struct msc_agg {
	/* live blocks: open addressing keyed by ptr (linear probing that
	 * never wraps: runs go on into MSC_LIVE_TAIL slots past the last
	 * home, and the last slot stays empty), backward-shift delete */
	struct msc_live *live;
	size_t live_mask, live_count;	/* homes: hash & live_mask */
	size_t live_limit;		/* it grows at this count (3/4 full) */
	/* sites */
	struct msc_site *sites;
	uint32_t nsites, sites_cap;
	struct msc_site_slot *site_index;	/* (stack, size) -> exact site */
	size_t site_mask, site_count;
	struct msc_stack_sites *stack_sites;	/* per stack id */
	uint32_t stack_sites_cap;
	uint32_t *class_slots;		/* folded stacks' class sites: index + 1 */
	uint32_t nclass_blocks, class_blocks_cap;
	/* mappings */
	struct msc_region *regions;
	size_t nregions, regions_cap;
	struct msc_u64map pieces;	/* block id -> live pieces, when split */
	uint32_t next_block;
	/* per thread: the last allocation, for "temporary" */
	struct msc_last {
		uint32_t tid;		/* tid + 1, 0 = empty */
		uint64_t ptr;
	} last[MSC_AGG_LAST];
	struct msc_u64map last_alloc;	/* threads that collide in last[] */
	uint64_t ts_base;		/* live blocks' times are relative to it */
	bool ts_based;
	struct msc_u64map big;		/* ptr -> size, for sizes >= 4 GiB */
	/* blocks freed by recent reallocs, in case the realloc failed */
	struct msc_undo {
		struct msc_live live;
		uint64_t size;
		uint8_t bucket;		/* the age bucket the free counted */
		bool temporary;		/* the free counted it temporary */
	} undo[64];
	unsigned undo_next;
	/* totals */
	uint64_t allocs, frees, bytes;
	uint64_t live_blocks, live_bytes;
	uint64_t peak_live_bytes, peak_ts;
	uint64_t temporary;
	uint64_t mmaps, mmap_bytes;
	uint64_t brks, brk_bytes;	/* the program's own brk/sbrk growth */
	/* the page-level view: live bytes apart from the heap's are mapped
	 * (mmap and brk regions), and each kind has its own peak */
	uint64_t mapped_live, mapped_peak, mapped_peak_ts;
	uint64_t heap_peak, heap_peak_ts;
	uint64_t unknown_frees;		/* frees of blocks never seen allocated */
	uint64_t implicit_frees;	/* allocations of an address still live */
	/* Cross-thread order repair (msc_agg_push): held events, waiting
	 * for their partner, and the queue of events to apply in order. */
	uint64_t hold_window;		/* ns; 0: off */
	uint64_t hold_out_ts;		/* newest timestamp handed out */
	uint64_t repaired;		/* events put back in order */
	uint32_t hold_tid;		/* tid + 1 of the first thread seen */
	bool hold_multi;		/* events of a second thread came */
	bool hold_nohold;		/* the event popped last was let go */
	uint8_t hold_how;		/* ... how (enum msc_hold_how) */
	struct msc_recent *recent;	/* MSC_AGG_RECENT, when unseen_frees_ok */
	struct msc_cevent *held;
	struct msc_hold_entry *queue;	/* in order, from qhead */
	unsigned nheld, qhead, qlen;
	uint8_t held_keys[256];		/* held events by key hash: a filter */
	uint64_t dropped;		/* events lost to out-of-memory */
	/* memory errors (agg_errors.c) */
	struct msc_quarantined *quarantine;	/* ring of MSC_QUARANTINE, lazily */
	uint32_t *q_count;		/* its entries by address hash (MSC_QFILTER) */
	uint32_t q_next;
	bool no_errors;			/* no error checks, no ring of frees: a reader
					 * aggregating again what a recorder checked */
	bool unseen_frees_ok;		/* attached or forked: frees of blocks
					 * from before us are normal */
	struct msc_u64map hidden;	/* msc_agg_hidden's blocks, not freed yet */
	struct msc_u64map thread_first;	/* tid + 1 -> its first event's ts, when
					 * unseen_frees_ok (msc_agg_thread_begins) */
	uint64_t errors[MSC_ERR_KINDS];
	struct msc_agg_error err;
	uint64_t last_ts;
	uint32_t epoch;
	bool peak_pending;
	/* memscope.h's pools */
	struct msc_pool *pools;		/* by slot - 1 */
	uint32_t npools, pools_cap, pool_free;
	struct msc_u64map pool_ids;	/* pool id -> slot, live pools */
	char (*pool_names)[MSC_POOL_NAME];	/* distinct names, interned */
	uint32_t npool_names, pool_names_cap;
	uint64_t pool_destroy_frees;	/* blocks released by a pool's destroy */
	/* --sample (see the top): the rate, 0 when every block was recorded */
	uint64_t sample;
	uint64_t recorded_allocs, recorded_bytes, recorded_frees;
	bool unsampled_known;		/* the shim's counts below are known */
	uint64_t unsampled_allocs, unsampled_bytes, unsampled_frees;
};

/*
 * How many blocks a recorded block of size bytes stands for, sampled at
 * rate bytes (a size of 0, which the shim never records, counts as 1): 1/p
 * for p = 1 - exp(-size/rate), rounded down or up, up with the probability
 * of its fraction, by the bits of h.
 */
uint64_t msc_sample_weight(uint64_t rate, uint64_t size, uint64_t h);
/* That 1/p itself. */
double msc_sample_inverse(uint64_t rate, uint64_t size);

/* The totals of a (sampled or not) recording: exact when every block was
 * recorded or the shim's counts are known, else estimates. */
void msc_agg_totals(const struct msc_agg *a, uint64_t *allocs, uint64_t *bytes, uint64_t *frees);

/*
 * Every figure of the aggregate as a whole, for those that write or show
 * them (the end record, samples, the summary line, the timeline): read
 * through this, not from struct msc_agg's members.
 */
struct msc_agg_figures {
	uint64_t allocs, bytes, frees;		/* msc_agg_totals' */
	uint64_t live_blocks, live_bytes;	/* the heap and mappings */
	uint64_t heap, mapped;			/* live bytes: the malloc family's, mappings' */
	uint64_t peak, peak_ts;			/* of both together */
	uint64_t heap_peak, heap_peak_ts, mapped_peak, mapped_peak_ts;
	uint64_t temporary;
	uint64_t mmaps, mmap_bytes, brks, brk_bytes;
	uint64_t unknown_frees, implicit_frees, dropped;
	uint64_t errors[MSC_ERR_KINDS];
	uint64_t sample, recorded_allocs;	/* --sample's rate, its blocks */
	uint64_t last_ts;			/* of the last event */
};
void msc_agg_figures(const struct msc_agg *a, struct msc_agg_figures *f);
/* A sampled recording's shim counts what it did not record: its counts,
 * and whether they are known (then msc_agg_totals is exact). */
void msc_agg_set_unsampled(struct msc_agg *a, bool known, uint64_t allocs, uint64_t bytes,
			   uint64_t frees);

/*
 * An event, as the collector delivers it (msc_collect.h) and as ms-report
 * reads it back from an --events stream: the one vocabulary both hand to
 * msc_agg_apply().
 */
enum msc_cev {
	MSC_CEV_ALLOC,		/* alloc */
	MSC_CEV_FREE,		/* free */
	MSC_CEV_UNFREE,		/* block */
	MSC_CEV_MMAP,		/* map */
	MSC_CEV_MUNMAP,		/* map */
	MSC_CEV_MREMAP,		/* remap */
	MSC_CEV_BRK,		/* brk */
	MSC_CEV_THREAD,		/* tid; thread */
	MSC_CEV_THREAD_EXIT,	/* tid */
	MSC_CEV_EXIT,		/* exit */
	MSC_CEV_SAMPLE,		/* sample */
	MSC_CEV_POOL_CREATE,	/* pool, with its name */
	MSC_CEV_POOL_DESTROY,	/* pool */
	MSC_CEV_HIDDEN,		/* block: one that is not the program's
				 * (msc_agg_hidden) */
	MSC_CEV_MARK,		/* mark: memscope.h's MEMSCOPE_MARK (the
				 * recorder's, not the aggregator's) */
};

/* An event's values, by its type (v[] is the same six words, as the
 * collector decodes them). */
struct msc_cevent {
	unsigned type;
	unsigned fn;			/* enum msc_fn */
	uint64_t ts;			/* ns since the collector started */
	uint32_t tid;
	uint32_t stack;			/* canonical stack id, 0 when none */
	union {
		uint64_t v[6];
		struct {
			uint64_t ptr, size;
			uint64_t pool;	/* MSC_FN_CUSTOM's pool id, 0 = none */
		} alloc;
		struct {
			uint64_t ptr;
			uint64_t pool;	/* as alloc's */
			uint64_t temporary;	/* 1: a sampled recording's shim
						 * saw it temporary */
		} free;
		struct {
			uint64_t ptr;
		} block;
		struct {
			uint64_t addr, len;
		} map;
		struct {
			uint64_t old, old_len, addr, len;
		} remap;
		struct {
			uint64_t old_end, new_end;
		} brk;
		struct {
			/* the shim's state, its stack's top, the state's size,
			 * its stack's bottom, its thread pointer */
			uint64_t state, stack_top, state_size, stack_bottom, tp;
		} thread;
		struct {
			uint64_t status;	/* given to exit() */
		} exit;
		struct {
			uint64_t rss;		/* bytes */
		} sample;
		struct {
			uint64_t id;
			char name[MSC_POOL_NAME];	/* NUL padded */
		} pool;
		struct {
			char name[MSC_MARK_NAME];	/* NUL terminated */
		} mark;
	};
};

_Static_assert(sizeof(((struct msc_cevent *)0)->pool) <= 6 * sizeof(uint64_t) &&
		       sizeof(((struct msc_cevent *)0)->mark) <= 6 * sizeof(uint64_t),
	       "a pool's name and a mark's fit in an event's values");
_Static_assert(offsetof(struct msc_cevent, alloc.pool) == offsetof(struct msc_cevent, v[2]) &&
		       offsetof(struct msc_cevent, free.pool) == offsetof(struct msc_cevent, v[1]),
	       "a pool id is v2 of an ALLOC, v1 of a FREE");

/* How an aggregator is set up. */
struct msc_agg_opts {
	/* Frees of blocks never seen allocated are normal, not errors:
	 * attached, a forked child, a lossy or a sampled recording. */
	bool unseen_frees_ok;
	/* No error checks, no ring of frees: a reader aggregating again
	 * what a recorder checked. */
	bool no_errors;
	/* --sample's rate (see the top), 0 when every block was recorded. */
	uint64_t sample;
	/* The cross-thread order repair's window (msc_agg_push), 0 for none;
	 * out of memory for it, the repair stays off. */
	uint64_t hold_window_ns;
};

/* o NULL: every option off.  0 or -ENOMEM. */
int msc_agg_init(struct msc_agg *a, const struct msc_agg_opts *o);
void msc_agg_release(struct msc_agg *a);

/*
 * Cross-thread order repair.  The shim stamps allocations and frees with
 * RDTSC, which does not wait for the loads before it: a thread that frees
 * a block another thread allocated and handed over a moment earlier may
 * stamp its free before that allocation, and a thread that gets back an
 * address another thread just freed may stamp its allocation before that
 * free (by up to a microsecond or so: the reach of out-of-order execution).
 * Merged by timestamp, such a free comes first and finds no block, or
 * such an allocation finds the address still live.
 *
 * Events go through msc_agg_push() in stream order.  Once events of a
 * second thread came, msc_agg_apply() holds a free of an unknown address
 * or an allocation of a live one (of the malloc family, not a pool's),
 * returning MSC_AGG_HELD, for up to window ns of stream time: when the
 * other thread's event of that address comes within it, the two are
 * applied in their true order; otherwise it is applied as it was, after
 * the window (an unknown free, an allocation over a live block).  Events
 * come out in the order to apply them, their timestamps never going back
 * (a late one takes the newest so far):
 *
 *	if (msc_agg_push(a, ev))
 *		apply ev (unless msc_agg_apply says MSC_AGG_HELD);
 *	while (msc_agg_pop(a, &e))
 *		the same for e;
 *
 * msc_agg_unhold() releases everything held (at the end, before a scan).
 * -ENOMEM from msc_agg_hold: repair stays off.  a->repaired counts events
 * that were put back in order.
 */
/* An event on its way to being applied (msc_agg_push); nohold: one that
 * was held and let go, applied as it is. */
struct msc_hold_entry {
	struct msc_cevent ev;
	bool nohold;
	uint8_t how;		/* enum msc_hold_how */
};

/* How a held free is applied (msc_recent). */
enum msc_hold_how { MSC_HOLD_AS_IS, MSC_HOLD_UNSEEN, MSC_HOLD_AMBIGUOUS };

/*
 * The blocks allocated last, by address hash, where frees of blocks never
 * seen are normal (unseen_frees_ok): thread A frees a block from before
 * the attach, thread B gets its address back at once, and B's allocation
 * is stamped a little before A's free (RDTSC runs ahead).  The two come in
 * that order, both look right (an unknown address allocated, a live one
 * freed), and B's own free later looked like a double free (dozens a
 * second at 200 threads).  So a free of a block another thread allocated
 * less than MSC_AGG_HOLD_REACH_NS before waits (held) for a second free of
 * that address: one by another thread within the window means the first
 * was the older block's (MSC_HOLD_UNSEEN).  Past the window it is applied,
 * marked ambiguous in the quarantine: a later free of the address by
 * another thread is then not a double free but the block's own (its
 * lifetime ends early, at the first free; a real double free by two
 * threads of a block just handed over is missed).
 */
#define MSC_AGG_RECENT 1024
struct msc_recent {
	uint64_t ptr, ts;
	uint32_t tid;
};

#define MSC_AGG_HOLD_MAX 64
/*
 * Where frees of blocks never seen are normal (unseen_frees_ok: attached,
 * a fork child...), a free of an unknown address is as likely the free of
 * an older block, whose address another thread got back a moment later:
 * the two are then taken for one block's allocation and free (a double
 * free when its thread frees it) only when their stamps are closer than
 * out-of-order execution moves one (a microsecond or so; this leaves
 * margin), not anywhere in the window.
 */
#define MSC_AGG_HOLD_REACH_NS 20000
/* What msc_agg_apply() did with an event. */
enum msc_agg_outcome {
	MSC_AGG_NOT_MINE = -1,	/* a type that is not the aggregator's
				 * (THREAD, SAMPLE, ...) */
	MSC_AGG_APPLIED = 0,	/* applied (a free of an unknown block: counted) */
	MSC_AGG_FREED = 1,	/* a FREE of a known block: the result says which */
	MSC_AGG_HELD = 2,	/* an allocation or free held for now (see
				 * msc_agg_push: it comes back from msc_agg_pop) */
	MSC_AGG_HIDDEN = 3,	/* the free of a block that was not the
				 * program's (msc_agg_hidden): applied, as nothing */
};
/* The order repair's window, when it was not set up by msc_agg_init. */
int msc_agg_hold(struct msc_agg *a, uint64_t window_ns);
int msc_agg_push_held(struct msc_agg *a, const struct msc_cevent *ev);
bool msc_agg_pop_queued(struct msc_agg *a, struct msc_cevent *ev);
void msc_agg_unhold(struct msc_agg *a);

/* 1: apply ev now (then pop); 0: the agg took it (pop).  Inline for the
 * usual case (nothing held or queued, ev in order): it runs per event. */
static inline int msc_agg_push(struct msc_agg *a, const struct msc_cevent *ev)
{
	if (!a->hold_window)
		return 1;
	/* (One thread's events, the first's tid seen: nothing to track.) */
	if (__builtin_expect((a->hold_multi || a->hold_tid == ev->tid + 1) && !a->nheld && !a->qlen &&
			     ev->ts >= a->hold_out_ts, 1)) {
		a->hold_nohold = false;
		a->hold_how = MSC_HOLD_AS_IS;
		a->hold_out_ts = ev->ts;
		return 1;
	}
	return msc_agg_push_held(a, ev);
}

static inline bool msc_agg_pop(struct msc_agg *a, struct msc_cevent *ev)
{
	return a->qlen && msc_agg_pop_queued(a, ev);
}

int msc_agg_alloc(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, uint64_t size,
		  uint32_t stack, unsigned fn);
/* Returns 1 and fills *out (if not NULL) for a known block, 0 for an unknown
 * one, MSC_AGG_HIDDEN for a hidden one (msc_agg_hidden). */
int msc_agg_free(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
		 uint32_t stack, struct msc_freed *out);
/*
 * Asks for the live table's line where ptr's allocation or free will look
 * first.  A caller that sees events coming (a batch) gives them all this
 * hint before it handles the first: in a table of millions of blocks every
 * event is a miss to memory, and the misses of a batch then overlap.
 */
static inline void msc_agg_prefetch(const struct msc_agg *a, uint64_t ptr)
{
	__builtin_prefetch(&a->live[msc_live_hash(ptr, a->live_mask)], 1);
}

/*
 * msc_agg_prefetch for a batch of events about to be applied, and the
 * lines their sites are in: the misses of a batch overlap.
 */
void msc_agg_prefetch_batch(const struct msc_agg *a, const struct msc_cevent *ev, size_t n);

/*
 * memscope.h's pools.  A pool is created with a name (msc_agg_pool_create:
 * a NUL-terminated copy is kept; a live pool is renamed), its blocks are
 * allocated and freed with its id (an id never created makes a pool named
 * "?"), and msc_agg_pool_destroy() releases the blocks it still holds,
 * counted as frees (a walk of the live table: destroys are rare).  A site
 * names the pool of its first block.
 */
int msc_agg_pool_create(struct msc_agg *a, uint64_t pool, const char *name);
int msc_agg_pool_alloc(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t pool, uint64_t ptr,
		       uint64_t size, uint32_t stack);
int msc_agg_pool_free(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t pool, uint64_t ptr,
		      uint32_t stack, struct msc_freed *out);
/* Returns the blocks it released. */
uint64_t msc_agg_pool_destroy(struct msc_agg *a, uint64_t ts, uint64_t pool);
/* The name of a site's pool, NULL for none. */
static inline const char *msc_agg_pool_name(const struct msc_agg *a, const struct msc_site *s)
{
	return s->pool && s->pool <= a->npool_names ? a->pool_names[s->pool - 1] : NULL;
}

/*
 * A block the program did not allocate, though its allocator gave it out
 * and something may free it with free() later: the loader's, made while
 * the shim's own code ran (a thread's TLS block of a library the shim
 * loaded, which glibc frees when it reclaims the thread's stack, on
 * another thread).  That free is then not a free of the program's: not
 * counted, and not an invalid or double free even if the address was the
 * program's before.  An allocation of the address forgets it (the block
 * went unseen).  0 or -ENOMEM.
 */
int msc_agg_hidden(struct msc_agg *a, uint64_t ptr);
/* A realloc failed after its FREE was recorded: the block lives on. */
int msc_agg_unfree(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr);
int msc_agg_mmap(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t addr, uint64_t len,
		 uint32_t stack);
/* Returns the bytes of tracked regions that were unmapped. */
uint64_t msc_agg_munmap(struct msc_agg *a, uint64_t ts, uint64_t addr, uint64_t len);
int msc_agg_mremap(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t old, uint64_t old_len,
		   uint64_t addr, uint64_t len, uint32_t stack);
/* The program moved its break: growth is a region, a shrink unmaps. */
int msc_agg_brk(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t old_end, uint64_t new_end,
		uint32_t stack);

/*
 * What events did, besides their outcome.  freed is the last event's, when
 * it was MSC_AGG_FREED.  error is set to the memory error an event made
 * (it points into the aggregator: valid until the next event) and left as
 * it is by an event that made none, so that the events of a batch cost
 * nothing for it: the caller starts with NULL and clears it once it took
 * the error.
 */
struct msc_agg_result {
	struct msc_freed freed;
	const struct msc_agg_error *error;
};

/*
 * Applies an allocation event (ALLOC, FREE, UNFREE, MMAP, MUNMAP, MREMAP,
 * BRK, the pools', HIDDEN) with the function above for its type, and says
 * how (enum msc_agg_outcome) and with what result (res, not NULL).
 */
int msc_agg_apply(struct msc_agg *a, const struct msc_cevent *ev, struct msc_agg_result *res);


/*
 * The family an allocation or release function belongs to: 1 malloc (free,
 * realloc), 2 new (delete), 3 new[] (delete[]); 0 for the others, which
 * match anything (custom annotations, mimalloc's mi_new).  The built-in
 * hooks' functions have theirs in msc_allocfns.h.
 */
static inline unsigned msc_fn_family(unsigned fn)
{
	static const uint8_t family[MSC_FN_MAX] = {
		[MSC_FN_MALLOC] = 1, [MSC_FN_CALLOC] = 1, [MSC_FN_REALLOC] = 1,
		[MSC_FN_REALLOCARRAY] = 1, [MSC_FN_POSIX_MEMALIGN] = 1, [MSC_FN_ALIGNED_ALLOC] = 1,
		[MSC_FN_MEMALIGN] = 1, [MSC_FN_VALLOC] = 1, [MSC_FN_PVALLOC] = 1, [MSC_FN_FREE] = 1,
		[MSC_FN_NEW] = 2, [MSC_FN_DELETE] = 2, [MSC_FN_NEW_ARRAY] = 3, [MSC_FN_DELETE_ARRAY] = 3,
	};

	if (fn >= MSC_FN_BUILTIN && fn < MSC_FN_CODES)
		return msc_allocfn(fn - MSC_FN_BUILTIN)->family;
	return fn < MSC_FN_MAX ? family[fn] : 0;
}

/* Does a free by fn belong to a resize (realloc and its kind), which an
 * UNFREE may take back? */
static inline bool msc_fn_is_realloc(unsigned fn)
{
	unsigned k;

	if (fn == MSC_FN_REALLOC || fn == MSC_FN_REALLOCARRAY)
		return true;
	if (fn < MSC_FN_BUILTIN || fn >= MSC_FN_CODES)
		return false;
	k = msc_allocfn(fn - MSC_FN_BUILTIN)->kind;
	return k == MSC_AFN_REALLOC || k == MSC_AFN_REALLOCARR;
}

/*
 * Are frees by fn checked for errors (a block never seen, freed twice, by
 * the wrong family)?  Not the annotations' (custom blocks have keys of
 * their own), nor mi_heap_destroy's: it frees every block of the heap,
 * allocated before recording began or not.
 */
static inline bool msc_fn_checked(unsigned fn)
{
	if (fn == MSC_FN_CUSTOM)
		return false;
	if (fn < MSC_FN_BUILTIN || fn >= MSC_FN_CODES)
		return true;
	return msc_allocfn(fn - MSC_FN_BUILTIN)->kind != MSC_AFN_HEAP_DESTROY;
}

/* Error checks of msc_agg_free() (agg_errors.c). */
/*
 * Thread tid's first event came at ts (its THREAD record).  Attached, a
 * thread may be inside an allocation that began before recording did:
 * the block it gets is not seen.  Its free then finds the address in the
 * quarantine, freed by another thread before ts: not a double free (the
 * block was this thread's, from before its first event).
 */
void msc_agg_thread_begins(struct msc_agg *a, uint32_t tid, uint64_t ts);
/* Each true when it made a->err the event's error. */
bool msc_agg_unseen_free(struct msc_agg *a, uint64_t ts, uint32_t tid, uint64_t ptr, unsigned fn,
			 uint32_t stack);
bool msc_agg_mismatch(struct msc_agg *a, uint64_t ts, uint32_t tid, const struct msc_live *b,
		      const struct msc_site *s, unsigned fn, uint32_t stack);
bool msc_agg_quarantine_alloc(struct msc_agg *a);

/* Remembers a free of a known block (see MSC_QUARANTINE). */
/* A filter in front of the ring: an address whose count is 0 is not in
 * it, and most frees looked up (attached: those of blocks from before)
 * are not, where a walk of the ring read 5 MiB each (half the
 * collector's time on 200 threads attached). */
#define MSC_QFILTER 65536u
static inline unsigned msc_qfilter_slot(uint64_t ptr)
{
	return (unsigned)((ptr >> 4) * 0x9e3779b97f4a7c15ull >> 48);
}

static inline void msc_agg_quarantine(struct msc_agg *a, const struct msc_quarantined *q)
{
	struct msc_quarantined *old;

	if (!a->quarantine && !msc_agg_quarantine_alloc(a))
		return;
	old = &a->quarantine[a->q_next];
	if (old->ptr)
		a->q_count[msc_qfilter_slot(old->ptr)]--;
	a->q_count[msc_qfilter_slot(q->ptr)]++;
	*old = *q;
	a->q_next = (a->q_next + 1) & (MSC_QUARANTINE - 1);
}

/* A live block's allocation time, size and leak kind. */
static inline uint64_t msc_live_ts(const struct msc_agg *a, const struct msc_live *l)
{
	return a->ts_base + (l->ts_kind & MSC_LIVE_TS_MASK);
}

static inline unsigned msc_live_kind(const struct msc_live *l)
{
	return (unsigned)(l->ts_kind >> 56);
}

static inline void msc_live_set_kind(struct msc_live *l, unsigned kind)
{
	l->ts_kind = (l->ts_kind & MSC_LIVE_TS_MASK) | (uint64_t)kind << 56;
}

uint64_t msc_live_big_size(const struct msc_agg *a, const struct msc_live *l);

static inline uint64_t msc_live_size(const struct msc_agg *a, const struct msc_live *l)
{
	return l->size != MSC_LIVE_BIG ? l->size : msc_live_big_size(a, l);
}

/* The aggregate's sites, for those that list them (the results, live
 * answers, reports): indexes 0 .. msc_agg_nsites() - 1, those folded into a
 * class site (removed) included; and a leak group's site. */
static inline uint32_t msc_agg_nsites(const struct msc_agg *a)
{
	return a->nsites;
}

static inline const struct msc_site *msc_agg_site_at(const struct msc_agg *a, uint32_t i)
{
	return &a->sites[i];
}

/* Its live bytes now (the heap and mappings): per event, inline. */
static inline uint64_t msc_agg_live_bytes(const struct msc_agg *a)
{
	return a->live_bytes;
}

/* Is it a sampled recording's (--sample)? */
static inline bool msc_agg_sampled(const struct msc_agg *a)
{
	return a->sample != 0;
}

/* The site a block counts in (sites folded into a class forward to it). */
static inline struct msc_site *msc_agg_site(const struct msc_agg *a, uint32_t i)
{
	struct msc_site *s = &a->sites[i];

	return s->removed ? &a->sites[s->forward] : s;
}

/* A site's live bytes at the moment of the global peak. */
uint64_t msc_agg_peak_contribution(const struct msc_agg *a, const struct msc_site *s);

/* Bucket index of a lifetime in ns. */
unsigned msc_age_bucket(uint64_t ns);
/* Upper bound (exclusive, ns) of bucket b; UINT64_MAX for the last. */
uint64_t msc_age_bucket_limit(unsigned b);

/* The live table's slots: its homes and the tail past them. */
static inline size_t msc_live_slots(const struct msc_agg *a)
{
	return a->live_mask + 1 + MSC_LIVE_TAIL;
}

/*
 * The live blocks by slot, for a walk over all of them that may be cut in
 * ranges of slots and run in parallel (the leak scan's):
 *
 *	for (i = 0; i < msc_live_slots(a); i++)
 *		if ((l = msc_agg_live_at(a, i)))
 *			... block l, named by slot i while the table is as it is
 *
 * and the mapped regions by index, 0 to msc_agg_nregions(a) - 1.
 */
static inline struct msc_live *msc_agg_live_at(const struct msc_agg *a, size_t slot)
{
	struct msc_live *l = &a->live[slot];

	return l->ptr ? l : NULL;
}

/* Live blocks, live regions. */
static inline size_t msc_agg_live_count(const struct msc_agg *a)
{
	return a->live_count;
}

static inline size_t msc_agg_nregions(const struct msc_agg *a)
{
	return a->nregions;
}

static inline struct msc_region *msc_agg_region(const struct msc_agg *a, size_t i)
{
	return &a->regions[i];
}

/*
 * Leaks: live blocks and regions grouped by (site, kind), largest first.
 * The array is malloc'ed; the caller frees it.  Returns the count or -ENOMEM.
 */
struct msc_leak {
	uint32_t site;
	uint8_t kind;
	uint64_t count, bytes;
	uint64_t first_ts, last_ts;
	uint32_t epoch;			/* msc_agg_leaks_cut: the cuts before its
					 * blocks' allocations */
};
long msc_agg_leaks(const struct msc_agg *a, struct msc_leak **out);
/*
 * The same, each group split by the instants cuts[0 .. ncuts) (times in
 * order, at most MSC_AGG_CUTS): a block allocated at or after cuts[k - 1]
 * and before cuts[k] is in epoch k (0: before the first).
 */
#define MSC_AGG_CUTS 4096
long msc_agg_leaks_cut(const struct msc_agg *a, const uint64_t *cuts, size_t ncuts, struct msc_leak **out);

/* Leaked bytes and blocks: definitely + indirectly lost, or every live
 * block when no scan ran (then *scanned is false). */
/* Every live block and region becomes MSC_LEAK_UNKNOWN: recorded from
 * the middle of a process's life, their fate cannot be known. */
void msc_agg_set_fate_unknown(struct msc_agg *a);
/* Every live block and region of kind (after a scan of a running process:
 * back to unscanned). */
void msc_agg_set_kinds(struct msc_agg *a, unsigned kind);

void msc_agg_leak_totals(const struct msc_agg *a, uint64_t *bytes, uint64_t *blocks,
			 uint64_t *possibly_bytes, uint64_t *reachable_bytes, bool *scanned);

/* The live blocks and regions by leak kind (MSC_LEAK_*): bytes, and blocks
 * (a mapping that munmap cut into pieces counts once), as the leak records
 * of msc_agg_leaks() add up. */
void msc_agg_kind_totals(const struct msc_agg *a, uint64_t bytes[MSC_LEAK_KINDS],
			 uint64_t blocks[MSC_LEAK_KINDS]);
/* msc_agg_leak_totals from msc_agg_kind_totals' figures (one walk of the
 * live table for both). */
void msc_agg_leak_totals_of(const struct msc_agg *a, const uint64_t kb[MSC_LEAK_KINDS],
			    const uint64_t kn[MSC_LEAK_KINDS], uint64_t *bytes, uint64_t *blocks,
			    uint64_t *possibly_bytes, uint64_t *reachable_bytes, bool *scanned);

/*
 * The heap by stack at this moment: the (at most) k stacks whose sites of
 * the malloc family and memscope.h hold the most live bytes (every size of
 * a stack together; mappings are apart, in a->mapped_live), largest first
 * (lower stack id for ties), into out.  sums is the caller's scratch, one
 * counter per stack id, grown here (*cap counters) and left zeroed; free
 * it when done.  Returns how many, or -ENOMEM.  One walk of the sites.
 */
struct msc_stack_bytes {
	uint32_t stack;
	uint64_t bytes;
};
long msc_agg_top_stacks(const struct msc_agg *a, struct msc_stack_bytes *out, unsigned k,
			uint64_t **sums, size_t *cap);

#endif
