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
 * as "stack" records lazily, the first time a record refers to them, so an
 * output is self-contained and can be read anywhere; the ip and offset
 * written are those of the first instance seen.
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
	bool written;
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

/* Writes the "stack" record of id unless it was written already. */
void msc_stacks_write(struct msc_stacks *st, struct msc_writer *w, uint32_t id);
/* Writes it whether or not it was written (to another stream). */
void msc_stacks_write_copy(struct msc_stacks *st, struct msc_writer *w, uint32_t id);

#endif
