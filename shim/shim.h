/* SPDX-License-Identifier: MIT */
/*
 * What the files of libmemscope.so share: the session's state, the real
 * functions, the per-thread recording state and the ring operations every
 * record goes through.  The safety rules at the top of hooks.c hold for all
 * of them: nothing here may allocate through malloc (per-thread state lives
 * in mmap'ed memory), and everything that could reach malloc runs with the
 * thread's recursion guard set.
 *
 * Who owns what:
 *	entry.c		malloc, free, calloc, realloc, C++'s plain new,
 *			new[], delete, delete[]: --sample's fast path of a
 *			call not recorded, a call inside a hook passed
 *			through, else a jump to hooks.c's
 *	hooks.c		the full hooks of entry.c's and the rest of the
 *			malloc family and C++ operators, the event path's
 *			out-of-line parts, stack interning, the boot pool
 *	record.h	the event path: record_alloc, record_free (always
 *			inlined into each hook), record_unfree,
 *			record_stackless
 *	maps.c		mmap, munmap, mremap, brk, sbrk
 *	custom.c	memscope.h's annotations, --hook's trampolines, the
 *			built-in hooks of jemalloc, mimalloc, tcmalloc
 *	exits.c		exit, _exit, _Exit, and the exec family
 *	session.c	the session (g_state, g_conf: the region, the
 *			options), fork, init and exit, attach mode's entry
 *			points
 *	rings.c		the rings' slow path (wait_space), a session's
 *			region at its end (region_bury)
 *	aslimit.c	the address-space limit: setrlimit, getrlimit, prlimit
 *	threads.c	t_state, t_hot (the guard, the fast path's state),
 *			g_written (the shared ring's state)
 *	sample.c	--sample: the set of recorded blocks (sample.h),
 *			the draws
 *	resolve.c	g_real (the real functions, the C++ operators'),
 *			the dlclose slow path
 *	modules.c	the module maps sent before a new stack
 *	unwind.c	stack capture, struct unwind_state (unwind.h)
 *	dwarf.c		the unwind rules, decoded from .eh_frame
 *	unwind_setup.c	the unwinder's setup, libunwind, MEMSCOPE_UNWIND_CHECK
 *	got.c		GOT patching: attach mode's hooks, --hook's, the
 *			built-in ones
 *	attach.c	attach mode: memscope_attach, memscope_detach and
 *			the library's own thread; dlclose.S, the dlclose hook
 *
 * The hot path (hook -> get_tstate -> stack_id -> ring_begin/ring_commit)
 * stays within the hook (entered from entry.c by a jump, not a call) and
 * the always-inline functions of record.h and below: the only
 * calls out of it are those it always made (the real function, the
 * unwinder; thread_init at a thread's first event, wait_space when the
 * ring is full).
 */
#ifndef SHIM_H
#define SHIM_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "msc_hookspec.h"
#include "msc_proto.h"
#include "unwind.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define TLS_IE __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Everything declared here is the library's own: no dynamic symbol, and
 * direct (not GOT) accesses from every file, as within one.  The exported
 * hooks say SHIM_EXPORT, which overrides this.
 */
#pragma GCC visibility push(hidden)

struct tstate;

/* ---------------------------------- session (session.c, rings.c, aslimit.c) */

enum { ST_UNINIT = 0, ST_INIT, ST_ACTIVE, ST_OFF };

/*
 * The session's state lives alone in a page that a child made without
 * fork handlers (a raw clone(2), which copies the parent's memory, rings'
 * mapping and all) finds zeroed (MADV_WIPEONFORK, session.c): ST_UNINIT,
 * so that its hooks pass through and never write into the parent's rings.
 * shim_init tells such a child from a process that has not started.
 */
struct shim_wiped {
	volatile int state;
} __attribute__((aligned(4096)));
extern struct shim_wiped g_wiped;
#define g_state (g_wiped.state)

/*
 * The rest of the shim's state that every event may read: written by a
 * session's start and end, by the process's own setup (init, fork,
 * attach, GOT patching) and, for threads_seen, at a thread's first event;
 * never by the events themselves.  Read-mostly, on lines of its own
 * (aligned): what threads write as they record is g_written's (below
 * struct tstate).  session.c owns it; a field written elsewhere says by
 * whom.
 */
struct shim_conf {
	/* -- What recorded events read, in the first line. */
	/* The session's generation (attach mode: attach.c, loaded into a
	 * running process, hooks in its GOTs): a thread's state from an
	 * earlier one (attach, detach, attach) is dropped on its next
	 * event. */
	unsigned gen;
	/* MSC_UNWIND_*, and the frames a stack keeps at most. */
	unsigned unwind, depth;
	/* Threads that have recorded in this process (threads.c): from the
	 * second on, events are stamped in order across threads (now()). */
	unsigned threads_seen;
	/* --sample: mean bytes between recorded allocations, 0 = record all
	 * (sample.h). */
	uint64_t sample;
	struct msc_ctl *ctl;
	/* The boot pool's key (hooks.c: is_boot, boot_or_low). */
	uintptr_t boot_key;
	/* The loader's code (unwind_setup.c): its calls are the ones
	 * hidden_note() is for (from_loader). */
	uintptr_t rtld_lo, rtld_len;
	/* --free-stacks: a free's whole stack, not its caller. */
	bool free_stacks;
	/* The leak scan will run: blocks handed out are emptied of what
	 * earlier blocks left in their memory (hooks.c, scrub). */
	bool scrub;
	/* Timestamps from the TSC (now_for), else CLOCK_MONOTONIC. */
	bool tsc;
	/* The collector puts allocations and frees of different threads
	 * that came out of order back in order (msc_agg_push): they need
	 * not wait for RDTSCP.  Not where unknown frees are common
	 * (attached, a forked child), which would crowd what it holds for
	 * that. */
	bool ts_repair;
	bool attached;

	/* -- The session's region and its collector (session.c, rings.c,
	 * aslimit.c). */
	void *region;
	size_t region_size;
	/* The region's layout as checked when it was mapped (session.c):
	 * never read again from the shared page. */
	uint32_t ring_size, nrings;
	pid_t pid;
	pid_t collector_pid;
	/* Records are dropped when a ring is full, not waited for. */
	bool lossy;
	/* The region under region is a session's no more (buried), and
	 * the address space its buried predecessors keep (rings.c). */
	bool buried;
	uint64_t buried_bytes;
	/* Its destructor, thread_exit, announces a thread's exit
	 * (threads.c). */
	bool thread_key_ok;
	pthread_key_t thread_key;

	/* -- ms-record --hook (MEMSCOPE_HOOKS): functions hooked by name
	 * (custom.c, got.c).  Slot k has its spec, the function its calls
	 * reach (the real one) and our trampoline for it, which the GOT
	 * entries that call the name are made to hold.  Specs and real
	 * functions are written before any entry is patched, and never
	 * after. */
	unsigned nhooks;
	struct msc_hookspec hooks[MSC_HOOK_MAX];
	uint64_t hook_real[MSC_HOOK_MAX];
	/* The built-in hooks (got.c): the definition the calls of
	 * msc_allocfns.h's function k reach, written once, before its first
	 * entry is patched. */
	uint64_t afn_real[MSC_NALLOCFNS];
	/* The program's path, read once per image at init. */
	char exe[512];
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct shim_conf, attached) < 64, "what events read, in one line");
extern struct shim_conf g_conf;

static inline struct msc_ring *ring_at(unsigned i)
{
	return (struct msc_ring *)((char *)g_conf.region + MSC_PROTO_CTL_SIZE +
				   (uint64_t)i * (MSC_PROTO_RING_HDR + g_conf.ring_size));
}

/* t_hot.gen of a thread that samples with a ring of its own in this
 * session (g_conf.gen + 1: a thread's t_hot.gen starts at 0, and so does
 * g_conf.gen). */
#define FAST_GEN (g_conf.gen + 1)

void shim_init(void);
bool wait_space(struct tstate *t, uint64_t need);
void request_scan(void);
/* Attach mode's entry points (attach.c calls them). */
int shim_session_claim(const char *sock);
bool shim_session_claim_orphaned(void);
void shim_session_unclaim(void);
bool shim_session_claimed(void);
int shim_session_attach(const char *sock);
void shim_session_attach_begin(void);
bool shim_session_orphaned(void);
void shim_session_detach(void);
void shim_session_detach_begin(void);
void shim_session_detach_rest(void);
void shim_session_detach_end(void);

/* --hook's trampoline for slot k (custom.c; g_conf.hooks). */
uint64_t shim_hook_trampoline(unsigned k);

/* GOT patching (got.c).  Reads MEMSCOPE_HOOKS and patches every loaded
 * module (from the constructor, once recording is on), for --hook and the
 * built-in hooks. */
void shim_hooks_install(void);
/* Attach mode's hooks: our exported hooks' addresses from self, a dlopen
 * handle of this library loaded at base (dlclose'd here), the loader's
 * dlopen, the built-in hooks' trampolines. */
void got_attach_hooks(void *self, uintptr_t base);
/* Patching begins: every loaded module, and those dlopen loads later. */
void got_patch_start(void);
/* Every slot still ours written back, patching stopped: how many, or
 * -(those still hooked). */
long got_slots_back(void);
/* In a fork's child not followed: the slots back (only this thread is
 * left). */
void shim_unhook_child(void);
/* The collector died: the slots back, unless patching is under way. */
void shim_unhook_orphaned(void);

/*
 * The built-in hooks: msc_allocfns.h's functions (jemalloc's mallocx,
 * mimalloc's mi_*, tcmalloc's tc_*), hooked in the GOT entries of the
 * modules that import them, without being asked.  Function k has the
 * definition its calls reach (written once, before its first entry is
 * patched) and our trampoline (custom.c).
 */
uint64_t shim_afn_trampoline(unsigned k);

static inline void ensure_init(void)
{
	if (unlikely(g_state == ST_UNINIT))
		shim_init();
}

/* ------------------------------------------------ full hooks (hooks.c) */

/*
 * entry.c's malloc, free, calloc, realloc and C++ operators take the fast
 * path of an unsampled call themselves, else jump to these, which record.  Entered
 * by a jump from a function with no frame of its own, each finds the
 * program's call where a hook called by the program would: its own frame
 * (the return address at frame + 8) is the program's call's.
 */
void *malloc_hook(size_t size);
void free_hook(void *ptr);
void *calloc_hook(size_t n, size_t size);
void *realloc_hook(void *ptr, size_t size);
/* C++'s operator new, new[] (the throwing ones), delete and delete[]
 * (unsized and sized: the size is not used). */
void *new_hook(size_t size);
void *new_arr_hook(size_t size);
void delete_hook(void *p);
void delete_arr_hook(void *p);

/*
 * Allocations made while dlsym runs (hooks.c): never the allocator's.  The
 * pool is the 128 KiB at a multiple of 128 KiB inside a .bss array of
 * twice that (whose pages cost nothing until touched), so that an address
 * is the pool's when its bits from BOOT_SHIFT up are g_conf.boot_key: set
 * by the pool's first allocation, 0 until then (when no address is the
 * pool's).
 * free's way for a thread that is not sampling tells NULL, the first
 * 128 KiB (where no allocator's block lies) and the pool from the rest
 * with one shift and two tests (boot_or_low); the sampling fast path, with
 * none: the set of recorded blocks pins NULL and the pool's blocks
 * (sample.h, sampled_pin), which boot_pool_to_set() hands it when a
 * sampling session starts, after boot_pool_unset() before it is emptied.
 */
#define BOOT_SHIFT 17
#define BOOT_POOL_SIZE ((size_t)1 << BOOT_SHIFT)
void boot_pool_unset(void);
void boot_pool_to_set(void);

static inline bool is_boot(const void *p)
{
	uintptr_t k = (uintptr_t)p >> BOOT_SHIFT;

	return k && k == g_conf.boot_key;
}

/* p is NULL, below 128 KiB or the pool's: for the full hook. */
static inline bool boot_or_low(const void *p)
{
	uintptr_t k = (uintptr_t)p >> BOOT_SHIFT;

	return unlikely(!k) || unlikely(k == g_conf.boot_key);
}

/* ------------------------------------------- real functions (resolve.c) */

/*
 * The real functions, written while resolve.c looks them up (the
 * constructor, or the first call of a hook; the C++ operators' when
 * libstdc++ is there) and read-mostly after: on lines of their own
 * (aligned), away from what threads write.
 */
struct shim_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	int (*brk)(void *);
	void *(*sbrk)(intptr_t);
	void (*exit)(int) __attribute__((noreturn));
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
	/* threads.c's pthread_getattr_np passes the program's calls on to it. */
	int (*pthread_getattr_np)(pthread_t, pthread_attr_t *);

	/* C++ operators, resolved when libstdc++ is there. */
	void *(*new)(size_t);
	void (*(*get_new_handler)(void))(void);	/* std::get_new_handler */
	void *(*new_arr)(size_t);
	void *(*new_nt)(size_t, const void *);
	void *(*new_arr_nt)(size_t, const void *);
	void *(*new_al)(size_t, size_t);
	void *(*new_arr_al)(size_t, size_t);
	void *(*new_al_nt)(size_t, size_t, const void *);
	void *(*new_arr_al_nt)(size_t, size_t, const void *);
	void (*delete)(void *);
	void (*delete_arr)(void *);
	void (*delete_al)(void *, size_t);
	void (*delete_arr_al)(void *, size_t);
	bool cxx_resolved;
	/* The C++ operators new are libstdc++'s (hooks.c empties their blocks). */
	bool new_std;

	/* While resolve_reals runs: allocations (dlsym's) come from the boot pool. */
	volatile int resolving;
} __attribute__((aligned(64)));
extern struct shim_real g_real;

/* The real dlclose: apart from g_real, because dlclose.S reads it by
 * name; it jumps through it, or calls shim_dlclose_slow while it is
 * NULL. */
extern int (*shim_real_dlclose)(void *);
int shim_dlclose_slow(void *handle);

void resolve_reals(void);
/* entry.c: how the fast path calls the real malloc, calloc, realloc and
 * free (glibc's or another allocator's). */
void entry_routes(bool libc_heap);
/* entry.c: whether the deletes, libstdc++'s, may go free's way, and the
 * news, libstdc++'s (with its get_new_handler), malloc's. */
void entry_cxx_routes(bool libstdcxx_deletes, bool libstdcxx_new, bool libstdcxx_new_arr);
void resolve_cxx(void);
/* A pointer of a module's dynamic section at base: glibc relocates
 * .dynamic in place; musl and others do not. */
static inline uintptr_t shim_dyn_ptr(uintptr_t base, uint64_t v)
{
	return v < base ? v + base : v;
}
void resolve_cxx_early(void);
/* entry.c: the full hooks' call of the real new (arr: new[]). */
void *entry_new_call(size_t size, bool arr);

/* Memory of our own, through the real functions (not our hooks). */
static inline void *map_anon(size_t size)
{
	void *p = g_real.mmap ? g_real.mmap(NULL, size, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
			    : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline void unmap(void *p, size_t size)
{
	if (g_real.munmap)
		g_real.munmap(p, size);
	else
		munmap(p, size);
}

/* ----------------------------------------------- per thread (threads.c) */

/* The first intern table's slots: a thread's comes in its tstate's mapping. */
#define TAB_FIRST 1024u

struct intern_slot {
	uint64_t h1, h2;
	uint32_t id;
	uint32_t pad;
};

#define CALLER_SLOTS 256

struct tstate {
	struct msc_ring *ring;
	uint8_t *data;
	uint64_t size, mask;
	uint64_t head;			/* our copy of ring->head */
	uint64_t tail_cache;
	bool shared;			/* ring 0: serialised by its lock */
	bool tab_inline;		/* tab is the first one, in t's own mapping */
	unsigned ring_index;
	int tid;
	/* The session it belongs to: in the first line, with the ring's
	 * state, which every recorded event reads after it (get_tstate). */
	unsigned gen;
	uint64_t stack_lo;
	unsigned long mod_adds, mod_subs;	/* module map last sent */
	struct intern_slot *tab;
	uint32_t tab_mask, tab_count;
	/* --sample (sample.h): the state of this thread's draws, and the
	 * last block this thread recorded (0 when its last recorded
	 * allocation was not one of the set's, and always on the shared
	 * ring's state) and t_hot.held just after: freed by it while the
	 * count is still that, it was temporary.  In the second line, which
	 * a recorded allocation and a recorded free read, not the line after
	 * the callers' table that they had to themselves. */
	uint64_t sample_rng;
	uint64_t pick_ptr;
	int64_t pick_left;
	/* One-frame stacks of free calls, by return address: direct-mapped. */
	struct {
		uint64_t ip;
		uint32_t id;
	} callers[CALLER_SLOTS];
	/* --sample: bytes left before the next recorded allocation (the
	 * shared ring's; a thread with a ring of its own counts in t_hot
	 * from this first draw on). */
	int64_t sample_left;
	uint64_t ips[TRACE_MAX];
	struct unwind_state uw;		/* last: its trace cache comes last */
};

_Static_assert(offsetof(struct tstate, gen) < 64 && offsetof(struct tstate, pick_left) < 128,
	       "a recorded event's fields of the tstate in its first two lines");
extern __thread struct tstate *t_state TLS_IE;
/*
 * What an allocation hook reads first, in one cache line of the thread's
 * own TLS (which its allocator's per-thread cache keeps at hand): the
 * fast path of a call not recorded (sample.h) reads nothing else of ours
 * but a global or two.  A tstate is a mapping of its own: reading it on
 * every call cost the storm more than the rest of that path.
 *
 * flags: bits 0..15 the recursion guard (inside a hook: pass everything
 * through).  IN_NEW: our operator new is calling the real one; the next
 * allocation hook on this thread is its inner malloc and must not be
 * counted again.  (The guard cannot be held across the real operator new:
 * bad_alloc would unwind through us and leave it set.)
 *
 * gen: --sample, the session (FAST_GEN) in which this thread has a ring of
 * its own and samples.  0: none yet, until the thread's next sampling
 * decision (sample_pick) or counted free (sample_count_free).  gate:
 * flags and gen in one word (see t_guard).
 *
 * The fast path's own state (sample.h): while `mode` is FAST_OPEN, left and
 * reserve are the bytes before this thread's next recorded allocation
 * (left at most g_fast_cap of them: fast_release) and table the set's
 * region counts (g_sampled's), which a free reads; allocs, frees and
 * bytes - left count what it did not record, in this thread's TLS until
 * a hook of its adds them to its ring's header (sample_publish).  The
 * bytes are the count's own: an allocation's fast path takes its size
 * from left, and that is all it does with it; whatever else moves left
 * (fast_hold, fast_release) moves bytes by as much (fast_left_move), and
 * an allocation that failed after it took its bytes gives them back from
 * bytes (sample_fast_uncount_bytes).  seq: odd while those two move
 * apart, for the end's flush, which reads them from another thread
 * (sample_flush_all).  Closed
 * (no session sampling, no ring of its own yet, or a hook of its under
 * way), left is 0 and table g_closed's, whose counts are never 0: the
 * fast path then takes nothing, and each call goes on to the checks of
 * the guard and of the session.  While a hook holds the guard, the open
 * count waits in held (FAST_HELD: guard_in, guard_out), so
 * that what the hook's callees allocate and free (libunwind, the loader,
 * glibc's pthread_getattr_np, a real operator new) is neither counted nor
 * recorded, as it is not in a full recording.
 *
 * ring: the thread's ring in session gen.  hidden: the blocks in t_hidden
 * (hidden_note).
 */
enum { FAST_CLOSED_MODE, FAST_OPEN, FAST_HELD, FAST_HELD_NEW };
struct thot {
	union {
		struct {
			unsigned flags;
			unsigned gen;
		};
		uint64_t gate;
	};
	int64_t left;
	const uint8_t *table;
	uint64_t allocs, bytes, frees;
	int64_t held, reserve;
	struct msc_ring *ring;
	uint64_t seq;
	unsigned hidden;
	unsigned char mode;
} __attribute__((aligned(64)));

extern __thread struct thot t_hot TLS_IE;

/*
 * Blocks the loader allocated on this thread while a hook of ours ran: a
 * TLS block of a library we loaded (libunwind's, at its first backtrace in
 * a thread), which glibc frees when it reclaims the thread's stack, on
 * another thread and outside any hook of ours.  That free must not count
 * as the program's, nor be taken for a double free when the address was
 * the program's before: each block is announced (MSC_EV_HIDDEN) when the
 * hook that made the loader allocate interns the stack it captured
 * (hidden_flush, from stack_intern: a libunwind capture is never the
 * trace cache's), off the path of the captures the cache names.  The constructor's dlopen of libunwind
 * is forgotten (those blocks stay, or go inside the loader).
 */
#define HIDDEN_MAX 4
extern __thread uint64_t t_hidden[HIDDEN_MAX] TLS_IE;

static inline bool from_loader(const void *ra)
{
	return (uintptr_t)ra - g_conf.rtld_lo < g_conf.rtld_len;
}

/* An allocation made by the loader inside a hook (guard held), p its
 * block (NULL: none).  The newest HIDDEN_MAX wait. */
static inline void hidden_note(const void *p)
{
	if (p)
		t_hidden[t_hot.hidden++ % HIDDEN_MAX] = (uint64_t)(uintptr_t)p;
}

/* Forgets them.  Their words are emptied: the leak scan reads this
 * thread's TLS as a root, where a stale address would keep a block of the
 * program's at that address reachable. */
static inline void hidden_forget(void)
{
	unsigned i;

	for (i = 0; i < HIDDEN_MAX; i++)
		t_hidden[i] = 0;
	t_hot.hidden = 0;
}

/* Their allocations through malloc and calloc, from inside a hook. */
void *malloc_hidden(size_t size);
void *calloc_hidden(size_t n, size_t size);
#define t_flags (t_hot.flags)
#define IN_NEW (1u << 16)
/*
 * Every write of flags is a write of the whole word (gate), never of its
 * 32-bit half: the next hook's first load is gate's 64 bits, and a load
 * wider than the store still in the store buffer cannot take its value
 * from it, so it waits for that store to reach the cache, behind every
 * store made before it (the real free's, which miss the cache: perf put a
 * fifth of the sampled storm's samples on free's first compare, and
 * sqlite3 and python3 recorded with --sample ran 4-5 % faster without it;
 * full recording's hooks write the guard too).  The guard never goes
 * below 0, so gen is never borrowed from, and bits 0..15 never carry into
 * IN_NEW.
 */
#define t_guard (t_hot.gate)
#define T_FLAGS_SET(f) (t_hot.gate |= (uint64_t)(f))
#define T_FLAGS_CLEAR(f) (t_hot.gate &= ~(uint64_t)(f))
#define GUARD_MASK 0xffffu
/* Flags: the guard's outermost hook holds the fast path (guard_in). */
#define GUARD_HOLDS (1u << 17)

/*
 * The guard taken and given back by a hook.  While it is held, the fast
 * path is closed, by the outermost hook that found it open (GUARD_HOLDS),
 * which opens it again when it gives the guard back.  The fast path is
 * closed before the guard is taken and opened after it is given back: a
 * signal handler's call in between finds it closed and no guard, and goes
 * to the full hooks (which find it held and leave it so); a handler's
 * call never finds the guard held and the fast path open, where its
 * allocation could pass through uncounted and its free be counted.  A
 * fast path held by an operator new that threw (IN_NEW gone,
 * FAST_HELD_NEW stays: IN_NEW_CALL) is taken over.  Out of line (sample.c),
 * so that a full recording's hooks, whose fast path is always closed, pay
 * a compare and a branch each way.
 */
void guard_in_holding(void);
void guard_out_holding(void);

/*
 * Where the outermost holder of the guard was (its stack pointer when it
 * took it): a signal handler that interrupted a hook and left it with
 * siglongjmp leaves the guard held for good, and a later hook whose
 * caller is above that point (guard_lost, hooks.c) knows the holder is
 * gone.  Written before the guard is taken, so that it is right whenever
 * the guard is held, and again after: a handler that ran in between took
 * and gave back the guard itself, and left its own (lower) one.  Never
 * reset: while the guard is free it is not read.  A holder that keeps the
 * guard past its own frame (fork_prepare) sets it to UINTPTR_MAX.
 */
extern __thread uintptr_t t_guard_sp TLS_IE;
/* Gives back a guard whose holder is gone (caller_sp: the stack pointer
 * of the asking hook's caller, on this thread's own stack, above
 * t_guard_sp); false when that cannot be told (an alternate signal
 * stack). */
bool guard_recover(uintptr_t caller_sp);

/*
 * For entry.c's functions, which have no frame and make no calls of their
 * own on the way to a real function: may the guard's holder be gone?  Then
 * they go to the full hook, whose guard_lost (hooks.c) decides.  Their
 * stack pointer is never above their caller's, which the hook's test
 * uses: what this lets pass, the hook would too.
 */
static inline __attribute__((always_inline)) bool guard_maybe_lost(void)
{
	uintptr_t sp;

	if (likely(!(t_flags & GUARD_MASK)))
		return false;
	__asm__("mov %%rsp, %0" : "=r"(sp));
	return unlikely(sp > t_guard_sp);
}

static inline __attribute__((always_inline)) void guard_in(void)
{
	bool outermost = !(t_flags & GUARD_MASK);
	uintptr_t sp;

	if (outermost) {
		__asm__("mov %%rsp, %0" : "=r"(sp));
		t_guard_sp = sp;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	if (unlikely(t_hot.mode != FAST_CLOSED_MODE))
		guard_in_holding();
	else
		t_guard++;
	if (outermost) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t_guard_sp = sp;
	}
}

static inline __attribute__((always_inline)) void guard_out(void)
{
	if (unlikely(t_flags & GUARD_HOLDS))
		guard_out_holding();
	else
		t_guard--;
}

/* t_state of a thread that records through the shared ring: it exited, or
 * found no ring (or no memory) of its own and does not try again. */
#define TSTATE_DEAD ((struct tstate *)1)
extern __thread unsigned t_dead_gen TLS_IE;
/* The thread-specific value of a thread that records on the shared ring:
 * its exit is announced too (thread_exit). */
#define TSTATE_SHARED_MARK ((void *)2)

/* The top of this thread's stack, for the unwinder: the shared ring's
 * state serves many threads and takes it from here. */
extern __thread uint64_t t_stack_hi TLS_IE;

/*
 * What threads write as they record, apart from what every event reads
 * (g_conf, g_real: no line of theirs is shared with this): the shared
 * ring's state, which every event of a thread without a ring of its own
 * writes (under the ring's lock), and the threads looking for a free ring
 * (thread_init).  threads.c's.
 */
struct shim_written {
	/* Threads looking for a free ring now, and how far they may look
	 * (0: every ring): region_bury and thread_init (threads.c). */
	unsigned ring_scanners, ring_scan_limit;
	/* shared is set up for this session (session.c). */
	bool shared_ready;
	/* Threads without a ring of their own: exited ones, or too many. */
	struct tstate shared __attribute__((aligned(64)));
} __attribute__((aligned(64)));
extern struct shim_written g_written;

/* What a thread's state maps: itself, then its first intern table. */
#define TSTATE_MAP ((sizeof(struct tstate) + 4095) & ~(size_t)4095)
#define TSTATE_SLOT (TSTATE_MAP + TAB_FIRST * sizeof(struct intern_slot))
/* The states of an attach's threads, mapped at once (threads.c). */
void tstate_pool_open(unsigned n);
void tstate_pool_close(void);
/* A state as new for another session, keeping its mappings (its intern
 * table emptied). */
void tstate_clear(struct tstate *t);
/* Sets t up on ring ring_index; false: out of memory. */
bool tstate_setup(struct tstate *t, unsigned ring_index);
void emit_thread(struct tstate *t, unsigned flags, uint32_t tid, const struct tstate *own,
		 uint64_t hi, uint64_t lo);
struct tstate *thread_init(void);
void thread_exit(void *arg);

static inline int raw_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

static inline struct tstate *shared_state(void)
{
	return g_written.shared_ready ? &g_written.shared : NULL;
}

/* Always inlined, as ring_begin: GCC's own budget runs out in a hook
 * that inlines the whole event path (record.h), and made both calls. */
static inline __attribute__((always_inline)) struct tstate *get_tstate(void)
{
	struct tstate *t = t_state;

	if (likely(t && t != TSTATE_DEAD && t->gen == g_conf.gen))
		return t;
	if (t == TSTATE_DEAD && (t_dead_gen == g_conf.gen || !g_conf.attached))
		return shared_state();
	return thread_init();
}

/* ------------------------------------------ stacks (hooks.c, modules.c) */

/* Makes t's stack table larger (or first makes it); false: no memory. */
bool intern_grow(struct tstate *t);
/* Sends this thread's view of the loaded modules if it changed. */
void modules_check(struct tstate *t);

/* ----------------------------------------------------------------- time */

/*
 * An event's timestamp must follow everything the thread saw before it: a
 * free of a block another thread allocated and handed over must be stamped
 * after that allocation.  RDTSC may execute ahead of earlier loads (out of
 * order, past the load that fetched the block's address), by a microsecond
 * and more here; RDTSCP waits for them, at about 16 ns an event (a third
 * of the hook).  So RDTSC where the order is not needed or is repaired:
 *  - while one thread records: its ring order is its time order, and a
 *    timestamp that runs ahead by a microsecond changes no figure; from
 *    the moment a second thread records (g_conf.threads_seen, read here after
 *    the real allocator call, so that a thread that got a block back from
 *    another sees that thread's count), RDTSCP for other events;
 *  - for allocations and frees of the malloc family (repairable), which
 *    the collector puts back in order when they come wrong (msc_agg_push),
 *    where g_conf.ts_repair says so.
 */
static inline __attribute__((always_inline)) uint64_t now_for(bool repairable)
{
	struct timespec ts;
	unsigned aux;

	if (likely(g_conf.tsc)) {
		/* repairable is a constant: allocations and frees test
		 * g_conf.ts_repair first, and only that while it holds */
		if ((repairable && likely(g_conf.ts_repair)) ||
		    likely(__atomic_load_n(&g_conf.threads_seen, __ATOMIC_RELAXED) <= 1))
			return __rdtsc();
		return __rdtscp(&aux);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Any event's timestamp. */
static inline uint64_t now(void)
{
	return now_for(false);
}

/* ---------------------------------------------------------------- rings */

static inline bool have_space(struct tstate *t, uint64_t need)
{
	uint64_t tail = __atomic_load_n(&t->ring->tail, __ATOMIC_ACQUIRE);

	t->tail_cache = tail;
	return t->head + need - tail <= t->size;
}

/*
 * Reserves `words` words; returns where to write them, or NULL.
 *
 * A record that would cross into the next 64 KiB of the ring first looks
 * whether the collector keeps up: it has read this lap's first 64 KiB and
 * is at most 64 KiB behind.  If so, the ring starts over at its beginning
 * (a PAD fills the rest), where a whole free 64 KiB waits, and the
 * collector has little left to read before all of the ring is free again.
 * A thread the collector keeps up with then cycles through its first
 * 128 KiB, in memory and cache, and the rest of the ring is touched only
 * when the collector falls behind: the ring can be large without costing
 * memory until it is needed.  (Asking for everything read, as this once
 * did, sent every thread that never pauses through all of its ring, a page
 * fault per 4 KiB in the program and another in the collector: a round
 * leaves the events of the last 50 us, its watermark, unread.)
 */
#define RING_REWIND (64u * 1024)

static inline __attribute__((always_inline)) uint64_t *ring_begin(struct tstate *t, unsigned words)
{
	uint64_t bytes = (uint64_t)words * 8, off = t->head & t->mask;

	if (unlikely((off & (RING_REWIND - 1)) + bytes > RING_REWIND) && off >= RING_REWIND) {
		if (have_space(t, t->size - off + RING_REWIND) &&
		    t->head - t->tail_cache <= RING_REWIND) {
			uint64_t pad = t->size - off;

			*(uint64_t *)(t->data + off) = msc_ev_hdr(MSC_EV_PAD, 0, 0, (uint32_t)(pad / 8));
			t->head += pad;
			off = 0;
		}
	}
	if (unlikely(off + bytes > t->size)) {
		uint64_t pad = t->size - off;

		if (t->head + pad + bytes - t->tail_cache > t->size && !wait_space(t, pad + bytes))
			return NULL;
		*(uint64_t *)(t->data + off) = msc_ev_hdr(MSC_EV_PAD, 0, 0, (uint32_t)(pad / 8));
		t->head += pad;
		off = 0;
	} else if (unlikely(t->head + bytes - t->tail_cache > t->size) && !wait_space(t, bytes)) {
		return NULL;
	}
	return (uint64_t *)(t->data + off);
}

static inline void ring_commit(struct tstate *t, unsigned words)
{
	t->head += (uint64_t)words * 8;
	__atomic_store_n(&t->ring->head, t->head, __ATOMIC_RELEASE);
}

static inline void shared_lock(struct tstate *t)
{
	unsigned spins = 0;

	if (unlikely(t->shared))
		while (__atomic_exchange_n(&t->ring->lock, 1, __ATOMIC_ACQUIRE)) {
			/* The holder may be preempted, or waiting for room. */
			if (++spins < 100)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
}

static inline void shared_unlock(struct tstate *t)
{
	if (unlikely(t->shared))
		__atomic_store_n(&t->ring->lock, 0, __ATOMIC_RELEASE);
}

/*
 * Appends one event: its header (aux: a stack id or a tid), a timestamp and
 * nv values.  The ring is marked busy from before the timestamp is taken to
 * after the commit, so that the collector's watermark waits for it.  False
 * when there was no room (lossy, or stopping).  Always inlined: it is most
 * of the hot path, and GCC's own choice depends on what else the file
 * holds (it stopped inlining it into the free hook's recorder when the
 * module code left that file).
 */
__attribute__((always_inline))
static inline bool emit_ts(struct tstate *t, unsigned type, unsigned fn, uint32_t aux,
			   const uint64_t *v, unsigned nv, bool repairable)
{
	uint64_t *rec = ring_begin(t, 2 + nv);
	unsigned i;

	if (!rec)
		return false;
	t->ring->busy = 1;
	__asm__ volatile("" ::: "memory");
	rec[0] = msc_ev_hdr(type, fn, 2 + nv, aux);
	rec[1] = now_for(repairable);
	for (i = 0; i < nv; i++)
		rec[2 + i] = v[i];
	t->ring->last_ts = rec[1];
	ring_commit(t, 2 + nv);
	t->ring->busy = 0;
	return true;
}

/* An event of any kind. */
__attribute__((always_inline))
static inline bool emit(struct tstate *t, unsigned type, unsigned fn, uint32_t aux,
			const uint64_t *v, unsigned nv)
{
	return emit_ts(t, type, fn, aux, v, nv, false);
}

/* An allocation or free of the malloc family (not a pool's): the
 * collector repairs their order across threads. */
__attribute__((always_inline))
static inline bool emit_block(struct tstate *t, unsigned type, unsigned fn, uint32_t aux,
			      const uint64_t *v, unsigned nv)
{
	return emit_ts(t, type, fn, aux, v, nv, true);
}

#pragma GCC visibility pop

#endif
