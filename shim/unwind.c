/* SPDX-License-Identifier: MIT */
/*
 * Stack capture inside the allocation hooks (x86_64).
 *
 * The default ("dwarf") unwinder interprets the .eh_frame call frame
 * information of the loaded code itself, as libgcc and libunwind do, but
 * boils each instruction address down to a rule of three numbers (where the
 * caller's stack pointer is: rsp or rbp plus an offset; whether rbp was saved
 * and where; the return address is always just below the CFA) and caches it
 * per thread.  An unwind step is then a cache probe and two loads.
 *
 * On top of that it reuses the outer part of the previous stack of the same
 * thread: the unwinder is a deterministic function of the starting registers
 * and of the stack words it reads, so when a frame is reached whose state
 * (ip, rsp and, if it still matters, rbp) equals a frame of the previous
 * trace, and every word the previous trace read from there on still holds the
 * same value, the rest of the previous trace is exactly what unwinding would
 * produce again.  Programs allocate from deep, stable call chains; this turns
 * most of the walk into word comparisons.
 *
 * Frames this cannot describe (signal trampolines, CFA expressions, code
 * without unwind info such as JIT code) fall back to libunwind's
 * unw_backtrace for the whole stack; libunwind is loaded privately
 * (RTLD_LOCAL) so that its backtrace() and _Unwind_* exports never replace
 * the program's.  MEMSCOPE_UNWIND_CHECK=1 compares every capture with
 * libunwind's and reports mismatches at exit (a test of this file).
 *
 * This file holds the capture itself, what runs for every frame and every
 * capture; dwarf.c decodes a rule the cache misses, unwind_setup.c holds
 * the setup, libunwind's side and the check (unwind_internal.h).
 *
 * All memory read lies between the hook's own frame and the top of the
 * thread's stack, or in the loaded objects' .eh_frame_hdr/.eh_frame.
 */
#include <string.h>

#include "unwind_internal.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

volatile uint32_t shim_module_epoch;

/* --------------------------------------------------------------- rules */

/*
 * The rule cache: 4-way sets of one cache line each, most recently used
 * first.  A program's allocation stacks run through a few hundred to a few
 * thousand return addresses; computing a rule from .eh_frame costs a
 * microsecond, a hit a few nanoseconds.
 */
static inline uint64_t lookup_rule(struct unwind_state *us, uint64_t ip)
{
	struct rule_slot *set = us->rules[(ip ^ (ip >> 9)) & (RULE_SETS - 1)];
	struct rule_slot hit;
	int w;

	if (likely(set[0].ip == ip))
		return set[0].rule;
	for (w = 1; w < RULE_WAYS; w++)
		if (set[w].ip == ip)
			break;
	if (w < RULE_WAYS) {
		hit = set[w];
	} else {
		w = RULE_WAYS - 1;
		hit.ip = ip;
		hit.rule = compute_rule(ip - 1);
	}
	for (; w > 0; w--)
		set[w] = set[w - 1];
	set[0] = hit;
	return hit.rule;
}

/* ------------------------------------------------------------- capture */

static inline void tc_count(unsigned why)
{
	if (unlikely(check_mode))
		__atomic_add_fetch(&tc_why[why], 1, __ATOMIC_RELAXED);
}

static uint32_t tc_gen_next;

void unwind_thread_init(struct unwind_state *us)
{
	us->which = 0;
	us->prev = us->trace[0];
	us->epoch = shim_module_epoch;
	unwind_forget(us);
}

void unwind_reset(struct unwind_state *us)
{
	memset(us, 0, offsetof(struct unwind_state, tc_layouts));
}

void unwind_forget(struct unwind_state *us)
{
	us->prev_n = -1;
	us->tc_hit = us->tc_fileable = us->pre_valid = false;
	/* Trace cache entries keep the generation they were made in (0 is
	 * none).  One that no state has used: a state set up again (the
	 * shared ring's, in a fork child) may still hold older entries. */
	do
		us->tc_gen = __atomic_add_fetch(&tc_gen_next, 1, __ATOMIC_RELAXED);
	while (us->tc_gen == 0);
}

static int fp_capture(struct unwind_state *us, uint64_t rbp, uint64_t ip, uint64_t rsp,
		      uint64_t *ips, int max)
{
	int n = 0;

	for (;;) {
		ips[n++] = ip;
		if (n >= max)
			break;
		/* A frame pointer must point up the stack, inside it, aligned. */
		if (rbp < rsp || rbp + 16 > us->stack_hi || (rbp & 7))
			break;
		ip = *(const uint64_t *)(uintptr_t)(rbp + 8);
		rsp = rbp + 16;
		rbp = *(const uint64_t *)(uintptr_t)rbp;
		if (!ip)
			break;
	}
	return n;
}

/*
 * From which frame on do the words the previous trace read still hold?
 * Looks no lower than frame j (and returns j when they all hold from there):
 * a capture asks once, at its first candidate, and later candidates lie
 * further out, so a word that changed is found once per capture, not once
 * per frame below it.
 */
/* Where frame f (walked) read the state of `next`, the frame after it: its
 * return address, and its rbp if f saved rbp (see struct trace_frame). */
static inline uint64_t ra_slot(const struct trace_frame *next)
{
	return next->rsp - 8;
}

static inline uint64_t rbp_slot(const struct trace_frame *f, const struct trace_frame *next)
{
	return next->rsp + (uint64_t)(int64_t)f->rbp_off;
}

static int prev_valid_from(const struct unwind_state *us, int j)
{
	const struct trace_frame *t = us->prev;
	int k;

	for (k = us->prev_n - 1; k >= j; k--) {
		const struct trace_frame *next = &t[k + 1];

		if (!(t[k].flags & TF_WALKED))
			continue;
		if (*(const uint64_t *)(uintptr_t)ra_slot(next) != next->ip)
			return k + 1;
		if ((t[k].flags & TF_RBP_SAVED) &&
		    *(const uint64_t *)(uintptr_t)rbp_slot(&t[k], next) != next->rbp)
			return k + 1;
	}
	return j;
}

/* Hashes and rbp_needed of frames from..0, given frame from + 1's (or the
 * seeds and "not needed" when from + 1 == n). */
static void finish_frames(struct trace_frame *cur, int from, int n)
{
	uint64_t h1 = STACK_HASH_SEED1, h2 = STACK_HASH_SEED2;
	bool needed = false;
	int k;

	if (from + 1 < n) {
		h1 = cur[from + 1].h1;
		h2 = cur[from + 1].h2;
		needed = cur[from + 1].flags & TF_RBP_NEEDED;
	}
	for (k = from; k >= 0; k--) {
		struct trace_frame *f = &cur[k];

		stack_hash_step(&h1, &h2, f->ip);
		f->h1 = h1;
		f->h2 = h2;
		/* rbp's register value matters here if the CFA is rbp-based,
		 * or if it passes rbp on unchanged to a frame where it does. */
		needed = (f->flags & TF_USES_RBP) || (!(f->flags & TF_RBP_SAVED) && needed);
		if (needed)
			f->flags |= TF_RBP_NEEDED;
		else
			f->flags &= (uint8_t)~TF_RBP_NEEDED;
	}
}

/*
 * The trace cache.  Reusing the previous trace saves the walk when a program
 * allocates from one place again and again.  When it allocates from many call
 * paths in turn, each capture still walks every frame below the part it
 * shares with the previous trace, and a frame is a chain of dependent loads:
 * its rule, then the return address the rule locates, then that address's
 * rule.  The cache finds whole traces, and their stack ids, without walking:
 *
 *  - a layout, per starting (ip, rsp), lists the positions of the words that
 *    the first trace walked from there read (return addresses, saved rbp);
 *  - traces that read exactly those positions are filed under a hash of
 *    (ip, rsp) and their words.  Frames of the same depth usually sit at the
 *    same positions, so a lookup reads a dozen words at once instead of
 *    walking from one to the next, and one cache line gives the stack id;
 *  - an entry is used when a second, independent hash of the words (and of
 *    rbp, if the trace depends on it) matches too.  The walk is a function
 *    of the starting registers and of the words it reads (the argument that
 *    lets the previous trace be reused), so equal words give the same
 *    trace; a wrong match needs two 64-bit hashes to collide at once, as
 *    unlikely as two stacks sharing the 128-bit intern hash.  Rules change
 *    only with the module epoch and bounds only with the stack top: either
 *    empties the cache.
 *
 * A hit gives the count and the hash, not the frames: those are walked
 * again only when needed (MEMSCOPE_UNWIND_CHECK).
 */
static inline unsigned tc_layout_index(uint64_t ip, uint64_t rsp)
{
	return (unsigned)(((ip ^ (rsp >> 3)) * 0x9e3779b97f4a7c15ull) >> 32) & (TC_LAYOUTS - 1);
}

/* Keys of the trace hash: random 64-bit numbers, one per message word. */
static const uint64_t tc_keys[TC_WORDS + 4] = {
	0x9362da5cc13da58bull, 0xf6fadfa7e5c15b63ull, 0x7e6ddce7a7ace733ull, 0x2c63888f28f00481ull,
	0x8f7b7676d015b0ddull, 0x8a119b9e16bc1733ull, 0x609e467ada679f81ull, 0xbc67ba94637d6efbull,
	0x0787c0de2f960063ull, 0xfab36728a78beb7full, 0x19d5269512e74f7bull, 0xa712755f6cace4d5ull,
	0xba2dde83458bfed1ull, 0xac8efe121c5989f1ull, 0x0d9782bfcdc83011ull, 0x5796a670482c590full,
	0xa93258ef7777682dull, 0x0b80a25553a12945ull, 0x0f8a7abff2e91ac7ull, 0x45ac16b9c20dbc21ull,
	0x789c1af40ce8fcc9ull, 0xdd2ee150d2840277ull, 0x90b401a6c1cc0affull, 0x3c3ae353fb14628full,
	0xd419c7723226db95ull, 0xb9c8b9ffe46ed627ull, 0x96f0da847a2a3b87ull, 0xbbeeb6361d33bc6dull,
	0x525a56c9a30f4301ull, 0x68e58909ccb2b417ull, 0x84c4b877678537a3ull, 0xff53a46f5ead703bull,
	0x9514b7dde2ad0479ull, 0xe179f773a6e0f3c1ull, 0x64b936976b4b76b1ull, 0x0c28cec1b94722afull,
	0x8322905089933837ull, 0xa398d022d4351df5ull, 0x4372a2a784a67245ull, 0x4c8b1eb44f1eaccfull,
	0x0e3a655f20731ab3ull, 0xac9130f4547c17d3ull, 0x7e9bf77c6519a9d5ull, 0xca3ab343ac333b69ull,
	0x38d889d2b47a5c1dull, 0x03c472ca4495f8b5ull, 0x6c2386e5cc86ba65ull, 0x77dde229df88ae4dull,
	0xec925f09a227f039ull, 0xc3dd75f6808578e7ull, 0xaa0336d98b8c82f1ull, 0xbb262a934ce15c61ull,
	0x307a6fc42fd7b23bull, 0xb183256ea16ec121ull, 0x7891da33e83a9d41ull, 0x8f39aaa5729ad53dull,
	0xadf438f7b27c1c75ull, 0xe5a9f6b1a29709bfull, 0xd27cb2382bedda17ull, 0xf1a38d3268340c65ull,
	0x08c1d781b972e777ull, 0xd00f7b11205fe2f7ull, 0xacb70dd842762335ull, 0xb21b1c2e1f61a1bdull,
	0x6d9336c0f9c4b931ull, 0x3ceb08318744ee93ull, 0x29ca4bb956e78ec7ull, 0xb338afd6b776a569ull,
};

static inline unsigned __int128 nh_pair(uint64_t a, uint64_t b, unsigned i)
{
	return (unsigned __int128)(a + tc_keys[i]) * (b + tc_keys[i + 1]);
}

/* Word i of a trace: read from the stack at rsp + off[i], or given in w[]. */
static inline uint64_t tc_word(uint64_t rsp, const uint32_t *off, const uint64_t *w, unsigned i)
{
	return off ? *(const uint64_t *)(uintptr_t)(rsp + off[i]) : w[i];
}

/*
 * The hash of a trace's start and of the words it read: NH, the hash of UMAC
 * (Black et al., 1999), over the message (ip, rsp, max and the word count,
 * the words, a zero to make the count even): the sum of the 128-bit products
 * (m[2i] + k[2i]) * (m[2i+1] + k[2i+1]).  Two different messages of the
 * same length collide with probability at most 2^-64 over the keys, and the
 * length is in the message.  One multiplication per two words, the products
 * independent of each other.  The check is the upper half, the key the
 * lower one mixed with it (a bijection for a given check, so that key and
 * check together still compare all 128 bits) for its low bits to index.
 */
static inline void tc_hash(uint64_t ip, uint64_t rsp, int max, const uint32_t *off,
			   const uint64_t *w, unsigned nw, uint64_t *key, uint64_t *check)
{
	unsigned __int128 acc = nh_pair(ip, rsp, 0);
	uint64_t k, hi;
	unsigned i;

	/* (max, nw) and word 0, then pairs of words. */
	acc += nh_pair((uint64_t)(unsigned)max | (uint64_t)nw << 32, nw ? tc_word(rsp, off, w, 0) : 0, 2);
	for (i = 1; i + 1 < nw; i += 2)
		acc += nh_pair(tc_word(rsp, off, w, i), tc_word(rsp, off, w, i + 1), i + 3);
	if (i < nw)
		acc += nh_pair(tc_word(rsp, off, w, i), 0, i + 3);
	hi = (uint64_t)(acc >> 64);
	k = ((uint64_t)acc ^ (hi >> 17)) * 0x9e3779b97f4a7c15ull;
	*key = k ^ (k >> 32);
	*check = hi;
}

/* A term that folds rbp into a check (traces that depend on it). */
static inline uint64_t tc_rbp_term(uint64_t rbp)
{
	uint64_t x = (rbp ^ 0xd6e8feb86659fd93ull) * 0xc4ceb9fe1a85ec53ull;

	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The set of the trace cache a key files into. */
static inline unsigned tc_set(uint64_t key)
{
	return (unsigned)(key & (TC_SETS - 1));
}

/*
 * The hashes of the words now at layout `way` of (ip, rsp); false: none
 * there.  A start may have several layouts (its callers' frames differ:
 * the words a walk reads decide where it reads the next), each in a way of
 * the set; a lookup tries them in turn, most recently filed first.
 */
static inline __attribute__((always_inline)) bool tc_read(struct unwind_state *us, uint64_t ip, uint64_t rsp, int max, unsigned way,
		    uint64_t *key, uint64_t *check)
{
	const struct tc_layout *l = &us->tc_layouts[tc_layout_index(ip, rsp)][way];

	if (l->gen != us->tc_gen || l->ip != ip || l->rsp != rsp)
		return false;
	/* Readable: a walk from this rsp under this stack top read them. */
	tc_hash(ip, rsp, max, l->off, NULL, l->nword, key, check);
	return true;
}

void unwind_prepare(struct unwind_state *us, void *frame, int max)
{
	uint64_t ip = ((const uint64_t *)frame)[1], rsp = (uint64_t)(uintptr_t)frame + 16;

	us->pre_valid = us->epoch == shim_module_epoch &&
			tc_read(us, ip, rsp, max, 0, &us->pre_key, &us->pre_check);
	if (!us->pre_valid)
		return;
	__builtin_prefetch(us->tc_traces[tc_set(us->pre_key)]);
	us->start_ip = ip;
	us->start_rsp = rsp;
	us->start_max = max;
}

/* The trace filed under (key, check) for the capture starting at
 * us->start_*, or NULL. */
static inline __attribute__((always_inline)) const struct tc_trace *tc_probe(struct unwind_state *us, uint64_t key, uint64_t check,
				       unsigned *way)
{
	const struct tc_trace *set = us->tc_traces[tc_set(key)], *t;

	*way = set[0].key == key ? 0 : 1;
	t = &set[*way];
	if (t->gen != us->tc_gen || t->key != key || t->max != us->start_max)
		return NULL;
	if (t->rbp_needed)
		check += tc_rbp_term(us->start_rbp);
	return t->check == check ? t : NULL;
}

/* A cached trace for the capture starting at us->start_*?  Fills c and
 * returns true if so; `prepared`: unwind_prepare() hashed the words of
 * the first layout. */
static inline __attribute__((always_inline)) bool tc_lookup(struct unwind_state *us, bool prepared,
							     struct capture *c)
{
	const struct tc_trace *t = NULL;
	uint64_t key = 0, check;
	unsigned l, way = 0;
	bool any = prepared;

	for (l = 0; l < TC_LAYOUT_WAYS && !t; l++) {
		if (l == 0 && prepared) {
			key = us->pre_key;
			check = us->pre_check;
		} else if (!tc_read(us, us->start_ip, us->start_rsp, us->start_max, l, &key, &check)) {
			continue;
		}
		any = true;
		t = tc_probe(us, key, check, &way);
	}
	if (!t) {
		tc_count(any ? TC_NO_TRACE : TC_NO_LAYOUT);
		return false;
	}
	c->n = t->n;
	c->h1 = c->h2 = 0;
	if (unlikely(check_mode)) {
		c->h1 = us->tc_check_hash[tc_set(key)][way][0];
		c->h2 = us->tc_check_hash[tc_set(key)][way][1];
	}
	c->id = t->id;
	c->have_ips = false;
	us->tc_hit = true;
	return true;
}

void unwind_file(struct unwind_state *us, uint32_t id)
{
	const struct trace_frame *cur = us->prev;
	uint64_t ip = cur[0].ip, rsp = cur[0].rsp, w[TC_WORDS], key, check;
	uint32_t off[TC_WORDS];
	struct tc_layout *set = us->tc_layouts[tc_layout_index(ip, rsp)], *l = NULL;
	struct tc_trace *t;
	uint64_t (*hash)[2];
	unsigned nw = 0;
	int k, n = us->prev_n;

	if (!us->tc_fileable || !id) {
		if (id && !us->tc_hit)
			tc_count(TC_FILE_SHORT);
		return;
	}
	us->tc_fileable = false;
	/* Every frame but the last read at least one word: too deep for an
	 * entry, as the loop below would find out word by word. */
	if (n + 1 > TC_WORDS) {
		tc_count(TC_FILE_DEEP);
		return;
	}
	/* The words it read, where and what. */
	for (k = 0; k < n; k++) {
		const struct trace_frame *next = &cur[k + 1];
		uint64_t at;

		if (!(cur[k].flags & TF_WALKED))
			continue;
		if (nw + 2 > TC_WORDS) {
			tc_count(TC_FILE_DEEP);
			return;
		}
		at = ra_slot(next) - rsp;
		if (at > UINT32_MAX)
			return;
		off[nw] = (uint32_t)at;
		w[nw++] = next->ip;
		/* The caller's rbp, read from the stack: a word of the trace
		 * only if some frame further out uses it (an rbp-based CFA).
		 * Code built without frame pointers keeps data in rbp, and
		 * hashing it made every such stack a new trace.  (The last
		 * frame's is kept: nothing says what the walk did with it.) */
		if ((cur[k].flags & TF_RBP_SAVED) &&
		    (k + 1 >= n || (cur[k + 1].flags & TF_RBP_NEEDED))) {
			at = rbp_slot(&cur[k], next) - rsp;
			if (at > UINT32_MAX)
				return;
			off[nw] = (uint32_t)at;
			w[nw++] = next->rbp;
		}
	}
	for (k = 0; k < TC_LAYOUT_WAYS && !l; k++)
		if (set[k].gen == us->tc_gen && set[k].ip == ip && set[k].rsp == rsp &&
		    set[k].nword == nw && !memcmp(set[k].off, off, nw * sizeof(off[0])))
			l = &set[k];
	if (!l) {
		/* A new layout goes first; the least recent makes room (its
		 * traces stay filed, found again if it comes back). */
		if (set[TC_LAYOUT_WAYS - 1].gen == us->tc_gen && set[TC_LAYOUT_WAYS - 1].ip == ip &&
		    set[TC_LAYOUT_WAYS - 1].rsp == rsp)
			tc_count(TC_FILE_OTHER);	/* every way is this start's */
		memmove(&set[1], &set[0], (TC_LAYOUT_WAYS - 1) * sizeof(set[0]));
		l = &set[0];
		l->ip = ip;
		l->rsp = rsp;
		l->nword = (uint16_t)nw;
		memcpy(l->off, off, nw * sizeof(off[0]));
		l->gen = us->tc_gen;
	}
	tc_hash(ip, rsp, us->start_max, NULL, w, nw, &key, &check);
	t = us->tc_traces[tc_set(key)];
	hash = us->tc_check_hash[tc_set(key)];
	if (t[0].key != key || t[0].gen != us->tc_gen) {
		t[1] = t[0];	/* the older one makes room */
		if (unlikely(check_mode))
			memcpy(hash[1], hash[0], sizeof(hash[0]));
	}
	if (unlikely(check_mode)) {
		hash[0][0] = cur[0].h1;
		hash[0][1] = cur[0].h2;
	}
	t->key = key;
	t->rbp_needed = (cur[0].flags & TF_RBP_NEEDED) != 0;
	t->check = check + (t->rbp_needed ? tc_rbp_term(cur[0].rbp) : 0);
	t->id = id;
	t->n = (int16_t)n;
	t->max = (int16_t)us->start_max;
	t->gen = us->tc_gen;
}

/*
 * A DWARF capture's start: the capture's registers kept, and the trace
 * cache asked (use_cache).  True when it had the trace: c is filled.
 * Inlined into unwind_capture, so that a hit (99 % of the storm's and of
 * sqlite3's captures) never enters the walk's large frame.
 */
static inline __attribute__((always_inline)) bool
dwarf_begin(struct unwind_state *us, uint64_t ip, uint64_t rsp, uint64_t rbp, int max,
	    struct capture *c, bool use_cache)
{
	bool prepared;

	if (unlikely(us->epoch != shim_module_epoch)) {
		memset(us->rules, 0, sizeof(us->rules));
		unwind_forget(us);
		us->epoch = shim_module_epoch;
	}
	prepared = us->pre_valid && us->start_ip == ip && us->start_rsp == rsp &&
		   us->start_max == max;
	us->pre_valid = us->tc_hit = us->tc_fileable = false;
	us->start_ip = ip;
	us->start_rsp = rsp;
	us->start_rbp = rbp;
	us->start_max = max;
	return use_cache && tc_lookup(us, prepared, c);
}

/* The rest of a DWARF capture, after dwarf_begin() (the cache did not
 * have it, or was not asked). */
static __attribute__((noinline)) void dwarf_walk(struct unwind_state *us, uint64_t ip,
						 uint64_t rsp, uint64_t rbp, uint64_t *ips,
						 int max, struct capture *c)
{
	struct trace_frame *cur = us->trace[us->which ^ 1];
	const struct trace_frame *prev = us->prev;
	int n = 0, j = 0, valid_from = -1;	/* -1: not asked yet */
	int walked = 0;				/* frames stepped by the walk itself */
	bool complete = false;

	while (n < max) {
		struct trace_frame *f = &cur[n];
		uint64_t rule, cfa, ra, nrbp;
		bool candidate;

		/* Reuse the rest of the previous trace when it provably holds. */
		while (j < us->prev_n && prev[j].rsp < rsp)
			j++;
		/* A previous trace cut at the depth limit has no outer end to
		 * lend unless it fills this one up to the limit as well. */
		candidate = j < us->prev_n && prev[j].rsp == rsp && prev[j].ip == ip &&
			    (us->prev_complete || n + (us->prev_n - j) >= max) &&
			    (!(prev[j].flags & TF_RBP_NEEDED) || prev[j].rbp == rbp);
		if (candidate && valid_from < 0)
			valid_from = prev_valid_from(us, j);
		if (candidate && j >= valid_from) {
			int split = n, m = us->prev_n - j;
			bool cut = m > max - n;

			if (cut)
				m = max - n;
			/* The frames, and the state after the last one (the end
			 * entry, or when cut, the next frame). */
			memcpy(&cur[n], &prev[j], (size_t)(m + 1) * sizeof(*cur));
			cur[split].rbp = rbp;
			n += m;
			complete = us->prev_complete && !cut;
			/* Cut short, the copied hashes describe a longer stack. */
			finish_frames(cur, cut ? n - 1 : split - 1, n);
			goto save;
		}
		rule = lookup_rule(us, ip);
		if (RULE_KIND(rule) != RULE_OK) {
			if (RULE_KIND(rule) == RULE_STOP) {
				*f = (struct trace_frame){ .ip = ip, .rsp = rsp, .rbp = rbp };
				n++;
				complete = true;
				break;
			}
			/* Something only a full unwinder can describe. */
			us->prev_n = -1;
			if (unw_backtrace_fn) {
				int got = libunwind_capture(ips, max);

				if (got > 0) {
					c->n = got;
					c->have_ips = true;
					return;
				}
			}
			*f = (struct trace_frame){ .ip = ip, .rsp = rsp, .rbp = rbp };
			n++;
			break;
		}
		cfa = (RULE_CFA_RBP(rule) ? rbp : rsp) + (uint64_t)RULE_CFA_OFF(rule);
		*f = (struct trace_frame){ .ip = ip, .rsp = rsp, .rbp = rbp,
					   .flags = RULE_CFA_RBP(rule) ? TF_USES_RBP : 0 };
		if (cfa <= rsp || cfa > us->stack_hi || (cfa & 7)) {
			n++;	/* corrupt or foreign stack: stop here */
			break;
		}
		ra = *(const uint64_t *)(uintptr_t)(cfa - 8);
		nrbp = rbp;
		if (RULE_RBP_SAVED(rule)) {
			uint64_t a = cfa + (uint64_t)RULE_RBP_OFF(rule);

			if (a < rsp || a + 8 > us->stack_hi) {
				n++;
				break;
			}
			nrbp = *(const uint64_t *)(uintptr_t)a;
			f->rbp_off = (int16_t)RULE_RBP_OFF(rule);
			f->flags |= TF_RBP_SAVED;
		}
		f->flags |= TF_WALKED;
		n++;
		walked++;
		/* The state this frame leads to: the next frame, or the entry
		 * after the last one (which validation reads). */
		cur[n] = (struct trace_frame){ .ip = ra, .rsp = cfa, .rbp = nrbp };
		if (!ra) {
			complete = true;
			break;
		}
		ip = ra;
		rsp = cfa;
		rbp = nrbp;
	}
	finish_frames(cur, n - 1, n);
save:
	/* Worth filing when walking it cost more than a lookup does. */
	us->tc_fileable = walked >= 2;
	us->which ^= 1;
	us->prev = cur;
	us->prev_n = n;
	us->prev_complete = complete;
	c->n = n;
	c->h1 = n ? cur[0].h1 : STACK_HASH_SEED1;
	c->h2 = n ? cur[0].h2 : STACK_HASH_SEED2;
	c->have_ips = false;
}

/* A DWARF capture: a cache hit stays inline, a walk is a call. */
static inline __attribute__((always_inline)) void
dwarf_capture(struct unwind_state *us, uint64_t ip, uint64_t rsp, uint64_t rbp, uint64_t *ips,
	      int max, struct capture *c, bool use_cache)
{
	if (!dwarf_begin(us, ip, rsp, rbp, max, c, use_cache))
		dwarf_walk(us, ip, rsp, rbp, ips, max, c);
}

void unwind_fill_ips(struct unwind_state *us, uint64_t *ips)
{
	int k;

	if (us->tc_hit) {
		/* The stack is as it was: walking it again gives this trace. */
		struct capture c;

		dwarf_capture(us, us->start_ip, us->start_rsp, us->start_rbp, ips, us->start_max, &c,
			      false);
		if (c.have_ips)
			return;
	}

	for (k = 0; k < us->prev_n; k++)
		ips[k] = us->prev[k].ip;
}

void unwind_capture(struct unwind_state *us, unsigned mode, void *frame, uint64_t *ips, int max,
		    struct capture *c)
{
	uint64_t fp = (uint64_t)(uintptr_t)frame;
	uint64_t ip = ((const uint64_t *)frame)[1];
	uint64_t rbp = ((const uint64_t *)frame)[0];
	uint64_t rsp = fp + 16;

	c->n = 0;
	c->id = 0;
	if (max <= 0) {
		hash_ips(ips, c);
		return;
	}
	switch (mode) {
	case MSC_UNWIND_NONE:
		ips[0] = ip;
		c->n = 1;
		hash_ips(ips, c);
		return;
	case MSC_UNWIND_FP:
		c->n = fp_capture(us, rbp, ip, rsp, ips, max);
		hash_ips(ips, c);
		return;
	case MSC_UNWIND_LIBUNWIND:
		c->n = libunwind_capture(ips, max);
		if (c->n <= 0) {
			ips[0] = ip;
			c->n = 1;
		}
		hash_ips(ips, c);
		return;
	default:
		break;
	}
	dwarf_capture(us, ip, rsp, rbp, ips, max, c, true);
	if (c->have_ips)
		hash_ips(ips, c);
	if (unlikely(check_mode) && unw_backtrace_fn)
		unwind_check(us, ips, max, c);
}
