/* SPDX-License-Identifier: MIT */
/* Canonical stacks and their symbolized records: see msc_stacks.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_format.h"
#include "msc_proto.h"
#include "msc_stacks.h"
#include "msc_sym.h"
#include "msc_util.h"

int msc_stacks_init(struct msc_stacks *st, bool symbolize)
{
	memset(st, 0, sizeof(*st));
	if (msc_strmap_init(&st->module_index, 64) || msc_u64map_init(&st->by_hash, 1024) ||
	    msc_u64map_init(&st->sf_by_addr, 4096) || msc_u64map_init(&st->sf_by_src, 4096) ||
	    msc_stacks_out_init(&st->out))
		goto oom;
	st->stacks_cap = 1024;
	st->stacks = calloc(st->stacks_cap, sizeof(*st->stacks));
	st->sf_cap = 4096;
	st->sf = calloc(st->sf_cap, sizeof(*st->sf));
	if (!st->stacks || !st->sf)
		goto oom;
	st->nstacks = 1;
	st->nsf = 1;
	if (symbolize) {
		st->sym = msc_sym_new();
		if (!st->sym)
			goto oom;
	}
	return 0;
oom:
	msc_stacks_release(st);
	return -ENOMEM;
}

void msc_stacks_release(struct msc_stacks *st)
{
	uint32_t i;

	for (i = 0; i < st->nmodules; i++)
		free(st->modules[i].path);
	for (i = 0; st->module_index.slots && i <= st->module_index.mask; i++)
		free((char *)st->module_index.slots[i].key);
	free(st->modules);
	free(st->sf);
	free(st->addrs);
	free(st->chain);
	free(st->stack_frames);
	free(st->stacks);
	msc_strmap_release(&st->module_index);
	msc_u64map_release(&st->by_hash);
	msc_u64map_release(&st->sf_by_addr);
	msc_u64map_release(&st->sf_by_src);
	msc_stacks_out_release(&st->out);
	msc_sym_free(st->sym);
	memset(st, 0, sizeof(*st));
}

long msc_stacks_module(struct msc_stacks *st, const char *path, const unsigned char *build_id,
		       unsigned build_id_len)
{
	char *key;
	size_t plen = strlen(path), i;
	void *found;
	struct msc_module *m;

	if (build_id_len > sizeof(m->build_id))
		build_id_len = sizeof(m->build_id);
	key = malloc(2 * build_id_len + plen + 2);
	if (!key)
		return -ENOMEM;
	for (i = 0; i < build_id_len; i++)
		sprintf(key + 2 * i, "%02x", build_id[i]);
	key[2 * build_id_len] = ':';
	memcpy(key + 2 * build_id_len + 1, path, plen + 1);
	found = msc_strmap_get(&st->module_index, key);
	if (found) {
		free(key);
		return (long)(uintptr_t)found - 1;
	}
	if (MSC_GROW(st->modules, st->nmodules + 1, st->modules_cap, 32))
		goto oom;
	m = &st->modules[st->nmodules];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		goto oom;
	if (build_id_len)	/* build_id may be NULL then */
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	m->sym = -1;
	if (msc_strmap_put(&st->module_index, key, (void *)(uintptr_t)(st->nmodules + 1))) {
		free(m->path);
		goto oom;
	}
	return st->nmodules++;
oom:
	free(key);
	return -ENOMEM;
}

static void warn_module(struct msc_stacks *st, struct msc_module *m)
{
	const char *why;

	if (m->warned || !st->sym || !st->warn)
		return;
	m->warned = true;
	why = msc_sym_module_status(st->sym, m->sym);
	/* Most system libraries come without debug info (names still come
	 * from their symbol tables), and the vdso has no file. */
	if (why && strcmp(why, "no debug info") != 0 && strchr(m->path, '/'))
		st->warn(st->warn_ctx, "%s: %s", m->path, why);
}

static uint64_t hash_addr(uint32_t module, uint64_t addr)
{
	return msc_hash_u64(addr ^ ((uint64_t)module << 47) ^ 0x2545f4914f6cdd1dull) | 1;
}

static uint64_t hash_chain(uint32_t module, const struct msc_sym_frame *c, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ module;
	unsigned i;

	for (i = 0; i < n; i++) {
		h = msc_hash_u64(h ^ (uint64_t)(uintptr_t)c[i].fn);
		h = msc_hash_u64(h ^ (uint64_t)(uintptr_t)c[i].file ^ ((uint64_t)c[i].line << 1) ^
				 c[i].inlined);
	}
	return h | 1;
}

static bool same_chain(const struct msc_sym_frame *a, const struct msc_sym_frame *b, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (a[i].fn != b[i].fn || a[i].file != b[i].file || a[i].line != b[i].line ||
		    a[i].inlined != b[i].inlined)
			return false;
	return true;
}

static uint32_t new_location(struct msc_stacks *st, const struct msc_frame_ref *f,
			     const struct msc_sym_frame *chain, unsigned n)
{
	struct msc_symframe *l;

	if (MSC_GROW(st->sf, st->nsf + 1, st->sf_cap, 16))
		return 0;
	if (MSC_GROW(st->chain, (size_t)st->nchain + n, st->chain_cap, 4096))
		return 0;
	l = &st->sf[st->nsf];
	l->module = f->module;
	l->addr = f->addr;
	l->ip = f->ip;
	l->chain = st->nchain;
	l->nchain = (uint16_t)n;
	l->fn_offset = 0;
	if (n)
		memcpy(&st->chain[st->nchain], chain, n * sizeof(*chain));
	st->nchain += n;
	return st->nsf++;
}

/* Does every level of an inline chain have a source line? */
static bool at_a_line(const struct msc_sym_frame *c, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (!c[i].fn || !c[i].file || !c[i].line)
			return false;
	return true;
}

/* The location id of a frame: same source location, same id. */
static uint32_t location(struct msc_stacks *st, const struct msc_frame_ref *f)
{
	struct msc_sym_frame chain[MSC_SYM_MAX_FRAMES];
	uint64_t key, *slot;
	struct msc_module *m = f->module != MSC_NO_MODULE ? &st->modules[f->module] : NULL;
	uint32_t id;
	int n = 0;

	/*
	 * The address cache is checked against the address itself: a location
	 * that several addresses share (the same source line) belongs to the
	 * first of them only, and the others must still be found here, not
	 * symbolized again (and cached again) every time they are seen.
	 */
	for (key = hash_addr(f->module, f->addr);; key += 2) {
		const struct msc_addr_loc *e;

		slot = msc_u64map_get(&st->sf_by_addr, key);
		if (!slot)
			break;
		e = &st->addrs[*slot];
		if (e->module == f->module && e->addr == f->addr)
			return e->loc;
	}
	if (m && st->sym) {
		if (m->sym < 0)
			m->sym = msc_sym_add_module(st->sym, m->path, m->build_id, m->build_id_len);
		/* Return addresses: look up the call instruction. */
		if (m->sym >= 0) {
			n = msc_sym_resolve(st->sym, m->sym, f->addr ? f->addr - 1 : 0, chain,
					    MSC_SYM_MAX_FRAMES);
			warn_module(st, m);
		}
		if (n < 0 || (n > 0 && !chain[0].fn))
			n = 0;		/* nothing known: identified by address */
	}
	id = 0;
	if (n > 0 && at_a_line(chain, (unsigned)n)) {
		uint64_t skey;

		for (skey = hash_chain(f->module, chain, (unsigned)n);; skey += 2) {
			uint64_t *s2 = msc_u64map_get(&st->sf_by_src, skey);

			if (!s2)
				break;
			if (st->sf[*s2].module == f->module && st->sf[*s2].nchain == n &&
			    same_chain(&st->chain[st->sf[*s2].chain], chain, (unsigned)n)) {
				id = (uint32_t)*s2;
				break;
			}
		}
		if (!id) {
			id = new_location(st, f, chain, (unsigned)n);
			if (!id || msc_u64map_put(&st->sf_by_src, skey, id))
				return 0;
		}
	} else {
		/*
		 * Without a line for every level, two calls in one function
		 * would look the same: the place is its address (named
		 * function+offset when a symbol covers it), as memcheck and
		 * heaptrack keep it.
		 */
		uint64_t start;

		id = new_location(st, f, chain, (unsigned)n);
		if (!id)
			return 0;
		if (n > 0 && f->addr && !msc_sym_fn_start(st->sym, m->sym, f->addr - 1, &start) &&
		    f->addr - start <= UINT32_MAX)
			st->sf[id].fn_offset = (uint32_t)(f->addr - start);
	}
	if (MSC_GROW(st->addrs, st->naddrs + 1, st->addrs_cap, 4096))
		return 0;
	st->addrs[st->naddrs] = (struct msc_addr_loc){ f->addr, f->module, id };
	if (msc_u64map_put(&st->sf_by_addr, key, st->naddrs))
		return 0;
	st->naddrs++;
	return id;
}

static uint64_t hash_locations(const uint32_t *l, unsigned n)
{
	uint64_t h = 0x51ed270b27a6dc8bull ^ n;
	unsigned i;

	for (i = 0; i < n; i++)
		h = msc_hash_u64(h ^ l[i]);
	return h | 1;
}

/* The id of the stack of these locations, interned if new; 0 on ENOMEM. */
static uint32_t intern_locations(struct msc_stacks *st, const uint32_t *loc, unsigned n)
{
	uint64_t h = hash_locations(loc, n), key;
	uint64_t *slot;
	struct msc_stack *s;

	for (key = h;; key += 2) {
		slot = msc_u64map_get(&st->by_hash, key);
		if (!slot)
			break;
		s = &st->stacks[*slot];
		if (s->n == n && memcmp(&st->stack_frames[s->first], loc, n * sizeof(*loc)) == 0)
			return (uint32_t)*slot;
	}
	if (MSC_GROW(st->stacks, st->nstacks + 1, st->stacks_cap, 16))
		return 0;
	if (MSC_GROW(st->stack_frames, st->nframes + n, st->frames_cap, 8192))
		return 0;
	if (msc_u64map_put(&st->by_hash, key, st->nstacks))
		return 0;
	s = &st->stacks[st->nstacks];
	s->first = (uint32_t)st->nframes;
	s->n = n;
	memcpy(&st->stack_frames[st->nframes], loc, n * sizeof(*loc));
	st->nframes += n;
	return st->nstacks++;
}

uint32_t msc_stacks_intern(struct msc_stacks *st, const struct msc_frame_ref *f, unsigned n)
{
	uint32_t loc[MSC_PROTO_MAX_DEPTH];
	unsigned i;

	if (n > MSC_PROTO_MAX_DEPTH)
		n = MSC_PROTO_MAX_DEPTH;
	for (i = 0; i < n; i++) {
		loc[i] = location(st, &f[i]);
		if (!loc[i])
			return 0;
	}
	return intern_locations(st, loc, n);
}

/* ---------------------------------------------------------------- output */

int msc_stacks_out_init(struct msc_stacks_out *o)
{
	memset(o, 0, sizeof(*o));
	o->next_frame = 1;
	return msc_u64map_init(&o->suffixes, 1024);
}

void msc_stacks_out_release(struct msc_stacks_out *o)
{
	free(o->frame_of);
	free(o->st);
	free(o->suf);
	msc_u64map_release(&o->suffixes);
	memset(o, 0, sizeof(*o));
}

/* MSC_GROW for tables indexed by id: what is added is zero. */
#define GROW_ZERO(arr, need, cap, first)                                                \
	__extension__({                                                                 \
		uint32_t old_ = (cap);                                                  \
		int r_ = MSC_GROW(arr, need, cap, first);                               \
		if (!r_ && (cap) > old_)                                                \
			memset((arr) + old_, 0, ((size_t)(cap) - old_) * sizeof(*(arr))); \
		r_;                                                                     \
	})

/* Inline levels of a location: each is a frame record. */
static unsigned levels(const struct msc_symframe *l)
{
	return l->nchain ? l->nchain : 1;
}

/* The frame records of a location, the first time the output needs them:
 * the members of a version 1 frame, after type and id. */
static int write_frames(struct msc_stacks *st, struct msc_stacks_out *o, struct msc_writer *w,
			uint32_t loc)
{
	const struct msc_symframe *l = &st->sf[loc];
	const struct msc_module *m = l->module != MSC_NO_MODULE ? &st->modules[l->module] : NULL;
	unsigned k, nc = levels(l);

	if (loc < o->frame_of_cap && o->frame_of[loc])
		return 0;
	if (GROW_ZERO(o->frame_of, (size_t)loc + 1, o->frame_of_cap, 4096))
		return -ENOMEM;
	o->frame_of[loc] = o->next_frame;
	for (k = 0; k < nc; k++) {
		const struct msc_sym_frame *c = l->nchain ? &st->chain[l->chain + k] : NULL;

		msc_w_record(w, MSC_R_FRAME);
		msc_w_u64(w, "id", o->next_frame++);
		msc_w_hex(w, "ip", l->ip);
		if (m) {
			msc_w_str(w, "obj", m->path);
			msc_w_hex(w, "offset", l->addr);
			if (m->build_id_len) {
				char id[2 * sizeof(m->build_id) + 1];
				unsigned b;

				for (b = 0; b < m->build_id_len; b++)
					snprintf(id + 2 * b, 3, "%02x", m->build_id[b]);
				msc_w_str(w, "build_id", id);
			}
		}
		if (c && c->fn)
			msc_w_str(w, "fn", c->fn);
		if (c && c->file)
			msc_w_str(w, "file", c->file);
		if (c && c->line)
			msc_w_u64(w, "line", c->line);
		if (c && c->inlined)
			msc_w_bool(w, "inline", true);
		else if (l->fn_offset)
			msc_w_hex(w, "fn_offset", l->fn_offset);
		msc_w_end(w);
	}
	return 0;
}

/* Hashes of every suffix of loc: h[i] covers loc[i..n), h[n] none. */
static void suffix_hashes(const uint32_t *loc, unsigned n, uint64_t *h)
{
	unsigned i;

	h[n] = 0x8a5cd789635d2dffull;
	for (i = n; i-- > 0;)
		h[i] = msc_hash_u64(h[i + 1] ^ loc[i]) | 1;
}

/* The written suffix with these locations, or NULL. */
static struct msc_suffix *find_suffix(const struct msc_stacks *st, struct msc_stacks_out *o,
				      uint64_t h, const uint32_t *loc, unsigned n)
{
	uint64_t key, *slot;

	for (key = h; (slot = msc_u64map_get(&o->suffixes, key)); key += 2) {
		struct msc_suffix *e = &o->suf[*slot];
		const struct msc_stack *t = &st->stacks[e->stack];

		if (t->n - e->off == n &&
		    memcmp(&st->stack_frames[t->first + e->off], loc, n * sizeof(*loc)) == 0)
			return e;
	}
	return NULL;
}

static int add_suffix(struct msc_stacks_out *o, uint64_t h, uint32_t stack, uint32_t off)
{
	uint64_t key;

	if (MSC_GROW(o->suf, o->nsuf + 1, o->suf_cap, 1024))
		return -ENOMEM;
	for (key = h; msc_u64map_get(&o->suffixes, key); key += 2)
		;
	if (msc_u64map_put(&o->suffixes, key, o->nsuf))
		return -ENOMEM;
	o->suf[o->nsuf++] = (struct msc_suffix){ stack, off };
	return 0;
}

/* The stack record: own locations' frame ids, then the parent. */
static int write_record(struct msc_stacks *st, struct msc_stacks_out *o, struct msc_writer *w,
			uint32_t id, const uint32_t *loc, uint32_t own, uint32_t parent)
{
	uint32_t i;
	unsigned k;

	for (i = 0; i < own; i++)
		if (write_frames(st, o, w, loc[i]))
			return -ENOMEM;
	msc_w_record(w, MSC_R_STACK);
	msc_w_u64(w, "id", id);
	if (parent)
		msc_w_u64(w, "parent", parent);
	msc_w_arr(w, "frames");
	for (i = 0; i < own; i++)
		for (k = 0; k < levels(&st->sf[loc[i]]); k++)
			msc_w_u64(w, NULL, o->frame_of[loc[i]] + k);
	msc_w_arr_end(w);
	msc_w_end(w);
	o->st[id] = (struct msc_stack_written){ parent, own, true };
	return 0;
}

/*
 * Writes stack id as the tail of a written stack, from offset off of it
 * (e->off): the rest of that stack's own locations, and its parent.  The
 * suffix now names the new stack.
 */
static int write_tail(struct msc_stacks *st, struct msc_stacks_out *o, struct msc_writer *w,
		      uint32_t id, struct msc_suffix *e, const uint32_t *loc)
{
	const struct msc_stack_written *t = &o->st[e->stack];
	int ret = write_record(st, o, w, id, loc, t->own - e->off, t->parent);

	if (!ret)
		*e = (struct msc_suffix){ id, 0 };
	return ret;
}

static int write_stack(struct msc_stacks *st, struct msc_stacks_out *o, struct msc_writer *w,
		       uint32_t id)
{
	uint32_t loc[MSC_PROTO_MAX_DEPTH], parent = 0, own;
	uint64_t h[MSC_PROTO_MAX_DEPTH + 1];
	struct msc_suffix *e = NULL;
	unsigned n, i;

	if (GROW_ZERO(o->st, st->nstacks, o->st_cap, 1024))
		return -ENOMEM;
	if (o->st[id].written)
		return 0;
	/* A copy: interning a parent may move the table's arrays. */
	n = st->stacks[id].n;
	memcpy(loc, &st->stack_frames[st->stacks[id].first], n * sizeof(*loc));
	suffix_hashes(loc, n, h);
	/* The longest suffix the output has: the stack's outer part. */
	for (i = 0; i < n && !e; i++)
		e = find_suffix(st, o, h[i], loc + i, n - i);
	i = e ? i - 1 : n;
	if (e && i == 0)
		return write_tail(st, o, w, id, e, loc);
	if (e && e->off == 0) {
		parent = e->stack;
	} else if (e) {
		/* Part of an earlier stack's own frames: it becomes a stack
		 * of its own, which both have above them from now on. */
		parent = intern_locations(st, loc + i, n - i);
		if (!parent || GROW_ZERO(o->st, st->nstacks, o->st_cap, 1024))
			return -ENOMEM;
		if (write_tail(st, o, w, parent, e, loc + i))
			return -ENOMEM;
	}
	own = i;
	if (write_record(st, o, w, id, loc, own, parent))
		return -ENOMEM;
	for (i = 0; i < own; i++)
		if (add_suffix(o, h[i], id, i))
			return -ENOMEM;
	return 0;
}

void msc_stacks_write_to(struct msc_stacks *st, struct msc_stacks_out *o, struct msc_writer *w,
			 uint32_t id)
{
	if (id == 0 || id >= st->nstacks)
		return;
	if (write_stack(st, o, w, id) && !w->error)
		w->error = ENOMEM;
}

void msc_stacks_write(struct msc_stacks *st, struct msc_writer *w, uint32_t id)
{
	msc_stacks_write_to(st, &st->out, w, id);
}
