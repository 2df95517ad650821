/* SPDX-License-Identifier: MIT */
/*
 * msc_proto: the binary protocol between libmemscope.so (in the target) and
 * ms-record (the collector).  Header only, no code that allocates: the shim
 * includes it.  It has a directory of its own, libmsc/proto/, the only part
 * of libmsc on the shim's include path (see SHIM_CFLAGS in the Makefile), and
 * includes nothing but <stdint.h> and its neighbour msc_allocfns.h (the
 * built-in hooks' functions, whose codes follow MSC_FN_MAX's).
 *
 * Transport.  Each recorded process gets one shared-memory region (a memfd
 * the collector creates and hands over a unix socket at the process's first
 * allocation).  The region holds a control page and MSC_PROTO rings: ring 0
 * is shared (a spinlock serialises it: threads whose own ring is gone, or
 * when every ring is taken); every other ring belongs to one thread at a
 * time.  A ring is a single-producer single-consumer byte queue: the thread
 * appends whole records and publishes them by a release store of `head`; the
 * collector reads [tail, head) and releases the space by storing `tail`.
 * Records never wrap: a PAD record fills the end of the ring instead.
 * Committed records are in shared memory, so a target killed by any signal
 * loses at most the record it was writing.
 *
 * Lossless by default: a full ring makes its thread wait for the collector,
 * checking now and then that the collector is still alive (if it is not,
 * recording stops and the target runs on untouched).  After a short spin the
 * thread sets `waiting` and sleeps on the futex word `wake` (shared, not
 * private: the two are different processes), so that the collector gets the
 * CPU; the collector, having moved `tail`, clears `waiting`, bumps `wake`
 * and wakes it.  Both sides store first and then load the other's word with
 * a full fence between, so one of them always sees the other.  Lossy mode
 * drops and counts.
 *
 * The region is the target's memory too, and a stray write can leave a
 * ring holding something that is not a record.  The collector then stops
 * reading that ring and sets its `abandoned`: its thread drops what would
 * have to wait for room there, and does not wait for a scan it asked for
 * there, instead of waiting forever.
 *
 * Ordering.  Every event carries a timestamp (TSC ticks, or CLOCK_MONOTONIC
 * ns when the TSC is not trustworthy; the control page says which), taken
 * after `busy` is raised and before the record is committed.  A free is
 * recorded before the real free (and an allocation after the real call), so
 * an address is always seen freed before it is seen allocated again, in
 * timestamp order.  The collector merges the rings by timestamp up to a
 * watermark no busy ring can still undercut.
 *
 * Sampling (ms-record --sample BYTES, msc_ctl.sample).  The shim records an
 * allocation of the malloc family with probability 1 - exp(-size/BYTES):
 * each thread counts down bytes from an exponential draw of mean BYTES and
 * records the allocation that crosses zero (Poisson sampling by bytes).  A
 * free is recorded only for a block that was recorded (the shim keeps the
 * set of their addresses).  Everything else it counts, in its ring's
 * header (unsampled_*): cumulative over the ring's owners, never reset, so
 * the collector's sum over the rings, added to what was recorded, gives
 * the exact number of allocations, their bytes and the frees.  A thread
 * counts in its TLS first and adds to its header at each of its recorded
 * allocations, at a recorded free once it has counted 4096 frees, and at
 * its exit and before an exec (the calling thread's: the others' are
 * lost with them); the process adds what its live threads still hold at
 * its end (exit, _exit, the return from main) and at a detach (to the
 * control page's flushed_*: struct msc_ctl).  So the counts a live view reads lag
 * by up to one draw's bytes per thread (a thread that frees more than it
 * allocates: by 4096 frees, or the frees up to its next recorded one), and
 * a process killed by a signal leaves up to that much out of its totals
 * (glibc's malloc of less than 1 MiB is counted before it runs: one that
 * fails, out of memory, is counted too; shim/entry.c).  A size-0
 * allocation is never recorded (p = 0).  Custom blocks (memscope.h,
 * --hook) and mappings are always recorded.  The free of a recorded block
 * by the thread that allocated it, before that thread allocated anything
 * else (its countdown has not moved since), has MSC_FREE_TEMPORARY set in
 * its aux: the collector cannot tell, as it does not see the allocations
 * in between.
 *
 * Records are sequences of 64-bit words; the first word is the header:
 *	bits  0..7   type (enum msc_ev)
 *	bits  8..15  flags (the allocation function, enum msc_fn, for ALLOC/FREE)
 *	bits 16..31  length in words, header included
 *	bits 32..63  aux (stack id for ALLOC/MMAP/..., id for STACK, tid for THREAD)
 */
#ifndef MSC_PROTO_H
#define MSC_PROTO_H

#include <stdint.h>

#include "msc_allocfns.h"

#define MSC_PROTO_MAGIC 0x6d73636f70653031ull	/* "mscope01" */
#define MSC_PROTO_VERSION 6

#define MSC_PROTO_CTL_SIZE 4096u
#define MSC_PROTO_RING_HDR 256u
/* The most rings a region may have (the shim refuses a page that says more). */
#define MSC_PROTO_MAX_RINGS 4096u
#define MSC_PROTO_MAX_DEPTH 256

enum msc_ev {
	MSC_EV_PAD = 0,		/* skip to the ring's end: [hdr(aux=words)] */
	MSC_EV_ALLOC,		/* [hdr(aux=stack,flags=fn), ts, ptr, size(, pool)] */
	MSC_EV_FREE,		/* [hdr(aux=stack,flags=fn), ts, ptr(, pool)]: the stack
				 * of the call, its caller only unless MSC_CTL_FREE_STACKS;
				 * the pool word (MSC_FN_CUSTOM only, 0 = none) is
				 * there when the record has the words for it;
				 * sampled, MSC_FREE_TEMPORARY in aux */
	MSC_EV_UNFREE,		/* [hdr, ts, ptr]: realloc failed, undo its FREE */
	MSC_EV_STACK,		/* [hdr(aux=id), ip0 (innermost), ip1, ...] */
	MSC_EV_MMAP,		/* [hdr(aux=stack), ts, addr, len] */
	MSC_EV_MUNMAP,		/* [hdr, ts, addr, len] */
	MSC_EV_MREMAP,		/* [hdr(aux=stack), ts, old, old_len, new, new_len] */
	MSC_EV_BRK,		/* [hdr(aux=stack), ts, old_end, new_end] */
	MSC_EV_THREAD,		/* [hdr(aux=tid), ts, shim_state, stack_hi, state_size,
				 *  stack_lo, thread pointer]: the ring's thread from
				 *  here on, or with flags MSC_THREAD_SHARED, a thread
				 *  of the shared ring (its events keep the ring's tid);
				 *  tid 0: the shared ring's state, no thread */
	MSC_EV_MODULES,		/* [hdr, ts (unused)]: a new module map follows */
	MSC_EV_MODULE,		/* [hdr, base, ids, nseg, seg..., build-id, path];
				 * the collector ignores one of over 64 segments */
	MSC_EV_MODULES_END,	/* [hdr] */
	MSC_EV_EXIT,		/* [hdr, ts, status]: exit() was called */
	MSC_EV_SCAN,		/* [hdr(aux=tid), ts, sp]: scan for leaks, then reply */
	MSC_EV_LOST,		/* reserved, never sent: lossy mode counts drops
				 * in msc_ctl.lost instead */
	MSC_EV_FORK,		/* reserved, never sent: a fork child connects */
	MSC_EV_THREAD_EXIT,	/* [hdr(aux=tid), ts]: its stack is dead memory now */
	MSC_EV_POOL,		/* [hdr(aux=stack,flags=MSC_POOL_*), ts, pool, name...]:
				 * memscope.h's pools; the name is MSC_POOL_NAME
				 * bytes, NUL padded (CREATE only) */
	MSC_EV_HIDDEN,		/* [hdr, ts, ptr]: a block the loader allocated
				 * while a hook of this thread ran (a TLS block
				 * of a library the shim uses): not the
				 * program's, and neither is its free */
	MSC_EV_MARK,		/* [hdr(aux=stack), ts, name...]: memscope.h's
				 * MEMSCOPE_MARK; the name is MSC_MARK_NAME
				 * bytes, NUL padded */
	MSC_EV_MAX,
};

/* POOL flags, and the room its name has (NUL included). */
#define MSC_POOL_CREATE 1u
#define MSC_POOL_DESTROY 2u
#define MSC_POOL_NAME 40u
/* The room a mark's name has (NUL included). */
#define MSC_MARK_NAME 40u

/* THREAD flags. */
#define MSC_THREAD_SHARED 1u

/* Allocation functions, in ALLOC and FREE flags. */
enum msc_fn {
	MSC_FN_NONE = 0,
	MSC_FN_MALLOC,
	MSC_FN_CALLOC,
	MSC_FN_REALLOC,
	MSC_FN_REALLOCARRAY,
	MSC_FN_POSIX_MEMALIGN,
	MSC_FN_ALIGNED_ALLOC,
	MSC_FN_MEMALIGN,
	MSC_FN_VALLOC,
	MSC_FN_PVALLOC,
	MSC_FN_NEW,
	MSC_FN_NEW_ARRAY,
	MSC_FN_FREE,
	MSC_FN_DELETE,
	MSC_FN_DELETE_ARRAY,
	MSC_FN_MMAP,
	MSC_FN_MREMAP,
	MSC_FN_BRK,
	MSC_FN_CUSTOM,		/* memscope.h: MEMSCOPE_ALLOC / MEMSCOPE_FREE */
	MSC_FN_MAX,
	/* From MSC_FN_BUILTIN on: msc_allocfns.h's functions (mallocx, mi_malloc,
	 * tc_new, ...), entry i as MSC_FN_BUILTIN + i. */
};

/* The number of function codes, the built-in ones included. */
#define MSC_FN_CODES (MSC_FN_BUILTIN + MSC_NALLOCFNS)

static inline const char *msc_fn_name(unsigned fn)
{
	static const char *const names[MSC_FN_MAX] = {
		"unknown", "malloc", "calloc", "realloc", "reallocarray",
		"posix_memalign", "aligned_alloc", "memalign", "valloc", "pvalloc",
		"new", "new[]", "free", "delete", "delete[]", "mmap", "mremap", "brk",
		"custom",
	};
	if (fn >= MSC_FN_BUILTIN && fn < MSC_FN_CODES)
		return msc_allocfn(fn - MSC_FN_BUILTIN)->name;
	return fn < MSC_FN_MAX ? names[fn] : "unknown";
}

static inline uint64_t msc_ev_hdr(unsigned type, unsigned flags, unsigned words, uint32_t aux)
{
	return (uint64_t)type | (uint64_t)flags << 8 | (uint64_t)words << 16 | (uint64_t)aux << 32;
}
#define MSC_EV_TYPE(h) ((unsigned)((h) & 0xff))
#define MSC_EV_FLAGS(h) ((unsigned)(((h) >> 8) & 0xff))
/* In a sampled FREE's aux, above its stack id: a temporary block's free. */
#define MSC_FREE_TEMPORARY (1u << 31)
#define MSC_EV_WORDS(h) ((unsigned)(((h) >> 16) & 0xffff))
#define MSC_EV_AUX(h) ((uint32_t)((h) >> 32))

/* MODULE: [hdr, base, (id_len << 32 | path_len), nseg, (start, end) * nseg,
 *          build-id bytes padded to words, path bytes + NUL padded to words] */

enum msc_ring_state {
	MSC_RING_FREE = 0,	/* available to a new thread */
	MSC_RING_OWNED,		/* a live thread appends to it */
	MSC_RING_CLOSED,	/* its thread exited: drain, then free */
};

struct msc_ring {
	/* Producer's cache line. */
	volatile uint64_t head;		/* bytes committed, ever */
	volatile uint32_t busy;		/* inside a hook, timestamp taken or coming */
	volatile uint32_t state;	/* enum msc_ring_state */
	volatile uint64_t last_ts;	/* timestamp of the last committed event */
	volatile uint32_t tid;
	volatile uint32_t lock;		/* ring 0 only: spinlock of the shared ring */
	/* --sample: what its threads did not record (see Sampling above);
	 * ring 0's are added to atomically. */
	volatile uint64_t unsampled_allocs;
	volatile uint64_t unsampled_bytes;
	volatile uint64_t unsampled_frees;
	/* The producer's: 1 + the tail at which it gave up waiting for a
	 * collector that made no progress (STALL_NS, shim/session.h); while the
	 * tail stays there, its records are dropped at once.  0: none. */
	volatile uint64_t stalled_at;
	/* Collector's cache line. */
	volatile uint64_t tail;		/* bytes consumed, ever */
	volatile uint32_t wake;		/* futex word: bumped when space was freed
					 * for a producer that said it waits */
	volatile uint32_t waiting;	/* the producer sleeps on `wake` */
	volatile uint32_t abandoned;	/* the collector reads this ring no more */
	uint8_t pad1[64 - 20];
	uint8_t pad2[MSC_PROTO_RING_HDR - 128];
	/* followed by ring_size bytes of data */
};

_Static_assert(sizeof(struct msc_ring) == MSC_PROTO_RING_HDR, "a ring's header is its size");

enum msc_ts_kind {
	MSC_TS_TSC = 1,		/* rdtsc ticks, invariant TSC */
	MSC_TS_MONOTONIC,	/* CLOCK_MONOTONIC ns */
};

/* Control page at offset 0 of the region. */
struct msc_ctl {
	uint64_t magic;
	uint32_t version;
	uint32_t ring_size;		/* bytes of data per ring, power of two */
	uint32_t nrings;		/* ring 0 included */
	uint32_t ts_kind;		/* enum msc_ts_kind */
	uint32_t depth;			/* max frames per stack */
	uint32_t unwind;		/* enum msc_unwind */
	uint32_t flags;			/* MSC_CTL_* */
	uint32_t collector_pid;
	volatile uint32_t rings_used;	/* high-water mark of claimed ring indexes + 1 */
	volatile uint32_t next_stack;	/* stack ids, atomically incremented */
	volatile uint32_t stop;		/* collector asks the shim to stop recording */
	volatile uint32_t dead;		/* shim saw the collector die */
	volatile uint64_t lost;		/* records dropped (lossy mode) */
	volatile uint64_t waits;	/* times a thread waited for ring space */
	/*
	 * The collector sets it to 1 when the scan MSC_EV_SCAN asked for is
	 * done, and wakes it as a (shared) futex word; the shim waits on it.
	 * Not a reply on the socket: the shim keeps no descriptor once it is
	 * set up, since programs close every descriptor (closefrom, a loop
	 * to the limit) or dup2 over them.
	 */
	volatile uint32_t scan_done;
	/*
	 * The shim sets it to 1 once the request is written, and sends the
	 * collector SIGURG (when it may): a process waits, at its very end,
	 * for a collector that may be napping between rounds (ms-record's
	 * 2 ms, up to 100 ms when sampling or idle) or waiting for its clock
	 * (its first 5 ms).  The collector takes SIGURG as a wake-up, nothing
	 * more (a collector that does not block it ignores it, by default),
	 * and while scan_wanted is set and scan_done not, reads that
	 * process's rings with the clock set up (as at a process's end) and
	 * naps no longer than it takes a new event to be old enough to be
	 * read.  A thread whose ring is full sends SIGURG too, once per wait,
	 * before it sleeps.
	 */
	volatile uint32_t scan_wanted;
	/* --sample: the mean bytes between recorded allocations, 0 = every
	 * one; seed of the countdowns' draws (MEMSCOPE_SEED), used when
	 * sample_seeded, else each thread seeds from the clock. */
	uint64_t sample;
	uint64_t sample_seed;
	uint32_t sample_seeded;
	/* --sample: what the end's (or a detach's) flush found in the TLS of
	 * threads other than its own, added to atomically by the shim, part
	 * of the unsampled totals as the rings' counts are.  Not added to
	 * those threads' ring headers, which their own hooks may be adding to
	 * meanwhile, with plain adds that would lose the flush's. */
	volatile uint64_t flushed_allocs;
	volatile uint64_t flushed_bytes;
	volatile uint64_t flushed_frees;
};

#define MSC_CTL_LOSSY 1u		/* drop records instead of waiting */
#define MSC_CTL_FOLLOW 2u		/* children record too */
#define MSC_CTL_SCAN 4u			/* ask for a leak scan at exit */
#define MSC_CTL_FREE_STACKS 8u		/* frees carry whole stacks, not their caller */

enum msc_unwind {
	MSC_UNWIND_DWARF = 0,		/* cached CFI unwinder, libunwind fallback */
	MSC_UNWIND_FP,			/* frame pointers */
	MSC_UNWIND_LIBUNWIND,		/* unw_backtrace only */
	MSC_UNWIND_NONE,		/* allocation call site only */
};

/* Socket handshake: the shim sends a hello, the collector answers with a
 * welcome and the region's memfd (SCM_RIGHTS). */
struct msc_hello {
	uint64_t magic;
	uint32_t version;
	int32_t pid;
	int32_t ppid;
	uint32_t flags;			/* MSC_HELLO_* */
	char exe[256];			/* /proc/self/exe, truncated */
	/*
	 * Its address-space limit (RLIMIT_AS), for the region's size:
	 * as_room is what it may still map once the soft limit is raised
	 * as far as it can raise it itself, as_free what it may map under
	 * the soft limit as set (so the program's own room is as_free, and
	 * as_room - as_free is ours to take).  Both 0: no limit binds it.
	 */
	uint64_t as_room, as_free;
};
#define MSC_HELLO_FORKED 1u		/* a fork child of a recorded process */

struct msc_welcome {
	uint64_t magic;
	int32_t status;			/* 0, or a negative errno: do not record */
	uint32_t pad;
	uint64_t region_size;
};


static inline struct msc_ring *msc_ring_at(void *region, const struct msc_ctl *ctl, unsigned i)
{
	return (struct msc_ring *)((char *)region + MSC_PROTO_CTL_SIZE +
				   (uint64_t)i * (MSC_PROTO_RING_HDR + ctl->ring_size));
}

static inline uint8_t *msc_ring_data(struct msc_ring *r)
{
	return (uint8_t *)r + MSC_PROTO_RING_HDR;
}

static inline uint64_t msc_region_size(uint32_t ring_size, uint32_t nrings)
{
	return MSC_PROTO_CTL_SIZE + (uint64_t)nrings * (MSC_PROTO_RING_HDR + ring_size);
}

#endif
