/* SPDX-License-Identifier: MIT */
/*
 * msc_stacks: the collector's table of canonical call stacks.
 *
 * A frame arrives as (module, address inside the module's ELF image), the
 * same whatever thread, process or load address produced it, and is
 * symbolized at once with msc_sym: function, file:line, and one entry per
 * level of inlining.  Two stacks are the same stack when their frames are the
 * same source locations, so one line of code is one stack even when the
 * compiler made several call instructions of it (an unrolled loop).  Only a
 * place whose every inline level has a file and line is a source location:
 * any other frame (a binary without debug information, a stripped library)
 * is identified by its module and address, and written with its offset in
 * the function a symbol names ("fn_offset"), so that two calls in one
 * function stay two stacks.  Without a symbolizer, frames are (module,
 * address).
 *
 * Ids are dense from 1 and unique in one output stream.  Stacks are written
 * lazily, the first time a record refers to them, so an output is
 * self-contained and can be read anywhere; the ip and offset written are
 * those of the first instance seen.  They are written as memscope-format(5)
 * version 2 has them: each frame once, as a "frame" record (one per level
 * of a location's inline chain), and a stack as the ids of its innermost
 * frames followed by a parent stack, the longest outer part it shares with
 * the stacks written before it:
 *
 *	{"type":"stack","id":7,"parent":3,"frames":[12,13]}
 *
 * When the part shared is only part of an earlier stack's own frames, that
 * part becomes a stack of its own (interned here like any other: an id
 * that site records may name too) and the parent of the new one, so that
 * stacks that branch at the same place share one record of what is above.
 * What an output was given is a struct msc_stacks_out: the table has one
 * for the main stream, a live snapshot (another stream) has its own.
 *
 * Modules are identified by path and build-id; a frame whose address fell in
 * no known module keeps module MSC_NO_MODULE and its absolute address.
 */
#ifndef MSC_STACKS_H
#define MSC_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "msc_hash.h"
#include "msc_ndjson.h"

#define MSC_NO_MODULE UINT32_MAX

struct msc_sym;

struct msc_module {
	char *path;
	unsigned char build_id[64];
	unsigned build_id_len;
	int sym;			/* index in the symbolizer, -1 before use */
	bool warned;
};

struct msc_frame_ref {
	uint32_t module;
	uint64_t addr;			/* in the module's image, or absolute */
	uint64_t ip;			/* as the program saw it (first seen) */
};

/* One code location: where it was first seen and what it resolved to. */
struct msc_symframe {
	uint32_t module;
	uint64_t addr, ip;
	uint32_t chain;			/* first entry in chain[] */
	uint16_t nchain;		/* 0: not symbolized */
	uint32_t fn_offset;		/* of addr in its function, when the place
					 * has no line; 0: none or not known */
};

struct msc_stack {
	uint32_t first;			/* index of its first frame in stack_frames[] */
	uint32_t n;
};

/* What one output stream has been given. */
struct msc_stacks_out {
	uint32_t *frame_of;		/* location -> id of its first frame record, 0: none */
	uint32_t frame_of_cap;
	struct msc_stack_written {	/* by stack id */
		uint32_t parent;	/* as written, 0: none */
		uint32_t own;		/* locations before the parent's */
		bool written;
	} *st;
	uint32_t st_cap;
	uint32_t next_frame;		/* frame ids from 1 */
	/* Every suffix of the written stacks' locations, once: found by the
	 * hash of its locations, it is a stack (off 0) or the tail of one. */
	struct msc_u64map suffixes;	/* hash -> index in suf[] */
	struct msc_suffix {
		uint32_t stack, off;
	} *suf;
	uint32_t nsuf, suf_cap;
};

struct msc_sym_frame;

struct msc_stacks {
	struct msc_module *modules;
	uint32_t nmodules, modules_cap;
	struct msc_strmap module_index;	/* "build-id-hex:path" -> index + 1 */
	/* locations */
	struct msc_symframe *sf;	/* [0] unused */
	uint32_t nsf, sf_cap;
	struct msc_sym_frame *chain;
	uint32_t nchain, chain_cap;
	struct msc_addr_loc {		/* every address seen: its location */
		uint64_t addr;
		uint32_t module;
		uint32_t loc;
	} *addrs;
	uint32_t naddrs, addrs_cap;
	struct msc_u64map sf_by_addr;	/* hash(module, addr) -> index in addrs */
	struct msc_u64map sf_by_src;	/* hash(module, chain) -> location id */
	/* stacks: sequences of location ids */
	uint32_t *stack_frames;
	uint64_t nframes, frames_cap;
	struct msc_stack *stacks;	/* [0] unused: ids start at 1 */
	uint32_t nstacks, stacks_cap;
	struct msc_u64map by_hash;	/* hash of locations -> id (probing) */
	struct msc_stacks_out out;	/* the main output's */
	struct msc_sym *sym;		/* NULL: do not symbolize */
	void (*warn)(void *ctx, const char *fmt, ...);
	void *warn_ctx;
};

int msc_stacks_init(struct msc_stacks *st, bool symbolize);
void msc_stacks_release(struct msc_stacks *st);

/* Returns the module's index, adding it if new; -ENOMEM. */
long msc_stacks_module(struct msc_stacks *st, const char *path, const unsigned char *build_id,
		       unsigned build_id_len);

/* Returns the id of the stack made of frames[0..n) (innermost first), 0 on ENOMEM. */
uint32_t msc_stacks_intern(struct msc_stacks *st, const struct msc_frame_ref *frames, unsigned n);

/*
 * Writes the "stack" record of id to the main output unless it was written
 * already, after the records it needs: the frame records it names and its
 * parent.  Out of memory sets w->error (ENOMEM): the output stops rather
 * than go on without the stack.
 */
void msc_stacks_write(struct msc_stacks *st, struct msc_writer *w, uint32_t id);

/* Another output stream (a live snapshot's): its own frames and stacks. */
int msc_stacks_out_init(struct msc_stacks_out *o);
void msc_stacks_out_release(struct msc_stacks_out *o);
/* As msc_stacks_write, to the stream that o describes. */
void msc_stacks_write_to(struct msc_stacks *st, struct msc_stacks_out *o, struct msc_writer *w,
			 uint32_t id);

#endif
