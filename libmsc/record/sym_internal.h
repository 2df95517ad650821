/* SPDX-License-Identifier: MIT */
/*
 * sym_internal: what the files of the symbolizer share (private to
 * libmsc/record/; everyone else sees msc_sym.h).
 *
 *	sym.c		the modules (opening, closing, status), the names
 *			and source files shown (interned, demangled), DIE
 *			names and call sites, the resolution of an address
 *			into frames, the address cache, the public functions
 *	sym_dwarf.c	a module's range tables, built on first use: its
 *			function symbols, compilation units, subprograms and
 *			their inlined subroutines
 *	sym_debuginfo.c	libdwfl's find_debuginfo: the search for a debug
 *			file, and decompressed copies of debug files in the
 *			cache directory
 *
 * A repeated address is answered in sym.c alone, from the address cache.
 */
#ifndef MSC_SYM_INTERNAL_H
#define MSC_SYM_INTERNAL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "msc_arena.h"
#include "msc_hash.h"
#include "msc_sym.h"

/*
 * An address-sorted table of [low, high) ranges, each belonging to something
 * (a symbol, a unit, a subprogram, an inlined subroutine).  Ranges may nest
 * or overlap; a lookup answers with the innermost one, that is the one that
 * started last among those containing the address.  range_sort() turns the
 * ranges into disjoint segments, each naming that range, so that a lookup is
 * one binary search however deep the nesting (walking back over earlier
 * ranges is linear in a function with a large inlined body).
 */
struct range {
	uint64_t low, high;
	size_t idx;		/* what the range belongs to */
};

#define NO_RANGE SIZE_MAX

struct segment {
	uint64_t start;		/* runs up to the next segment's start */
	size_t pos;		/* index into r[] after sorting, or NO_RANGE */
};

struct range_table {
	struct range *r;
	size_t n, cap;
	struct segment *seg;
	size_t nseg;
};


/* An inlined subroutine inside a subprogram, and what its frames show. */
struct inl_node {
	Dwarf_Die die;
	int parent;		/* enclosing inlined node, -1: the subprogram */
	bool named;		/* fn and call site read (lazily) */
	const char *fn;
	const char *call_file;	/* where it was inlined into its parent */
	unsigned call_line;
};

/*
 * A subprogram with code.  Its tree of inlined subroutines is flattened on
 * first use into nodes and a range table, so that an address finds its
 * innermost inlined subroutine by binary search instead of a DIE walk.
 */
struct subprogram {
	Dwarf_Die die;
	bool scanned;
	bool named;
	const char *fn;			/* DWARF name (lazily) */
	struct range_table inl;		/* idx into nodes */
	struct inl_node *nodes;
	size_t nnodes, cap_nodes;
};

struct cu {
	Dwarf_Die die;		/* the unit DIE holding the code (split DIE for skeletons) */
	bool scanned;
	struct range_table subs;	/* DW_TAG_subprogram ranges; idx into progs */
	struct subprogram *progs;
	size_t nprogs, cap_progs;
};

struct module {
	const char *path;		/* interned */
	unsigned char *build_id;	/* arena, NULL when not known */
	size_t build_id_len;
	bool opened;			/* open attempted (status is final) */
	bool usable;			/* the file is the recorded one */
	const char *status;		/* see msc_sym_module_status() */

	Dwfl *dwfl;
	Dwfl_Module *mod;

	const char **sym_names;		/* raw names, indexed by range idx */
	struct range_table syms;

	Dwarf *dw;			/* NULL without debug info */
	Dwarf_Addr dwbias;		/* dwfl address - DWARF address */
	struct cu *cus;
	size_t ncus, cap_cus;
	/* With .debug_aranges, units are found by address there and added to
	 * cus when first met (by_cu: unit DIE offset + 1 -> index); else, or
	 * once an address is not there, every unit's ranges are read
	 * (all_cus) into cu_ranges. */
	bool all_cus;
	struct msc_u64map by_cu;
	struct range_table cu_ranges;	/* idx into cus */
};

/* The address cache of resolved addresses: struct cache_slot, in sym.c. */
struct addr_cache {
	struct cache_slot *slots;
	size_t mask, count;
};

struct msc_sym {
	struct module **mods;
	int nmods;
	unsigned cap_mods;
	struct msc_strmap mod_index;	/* "<hex build-id>:<path>" -> index + 1 */

	struct msc_arena arena;		/* interned strings, module keys */
	struct msc_strmap strings;	/* interned string -> itself */
	struct msc_u64map names;	/* libdw/libelf name pointer -> shown name */
	struct msc_u64map files;	/* libdw file name pointer -> interned path */
	struct msc_u64map origins;	/* abstract origin DIE address -> shown name */

	struct addr_cache cache;
	struct msc_sym_frame *pool;	/* frames after the first of cached chains */
	size_t npool, cap_pool;

	char *debug_path;		/* NULL: libdwfl's default */
	char *cache_dir;		/* of decompressed debug files; NULL: none */
	Dwfl_Callbacks callbacks;	/* Dwfl keeps a pointer to it */
};

/* ---- the range tables, built in sym_dwarf.c */

/* The innermost range containing addr, or NULL. */
static inline const struct range *range_find(const struct range_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nseg, pos;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->seg[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	pos = t->seg[lo - 1].pos;
	return pos == NO_RANGE ? NULL : &t->r[pos];
}

static inline void range_release(struct range_table *t)
{
	free(t->r);
	free(t->seg);
	t->r = NULL;
	t->seg = NULL;
	t->n = t->cap = t->nseg = 0;
}

/* ---- sym_dwarf.c */

/* Reads m's function symbols into m->syms and m->sym_names: 0 or -ENOMEM. */
int sym_load_symtab(struct module *m);
/* Frees a unit's subprograms and their tables; it is scanned again when
 * next met. */
void sym_cu_release(struct cu *cu);
/* The subprogram whose code holds DWARF address a, scanned, or NULL; its
 * unit in *cu_out (or NULL).  Returns 0 or -ENOMEM. */
int sym_find_subprogram(struct module *m, Dwarf_Addr a, struct cu **cu_out,
			struct subprogram **out);

/* ---- sym_debuginfo.c */

/* The cache directory of decompressed debug files (malloc'ed), or NULL:
 * MEMSCOPE_CACHE, else $XDG_CACHE_HOME/memscope, else ~/.cache/memscope. */
char *sym_cache_dir_of_env(void);
/* libdwfl's find_debuginfo callback (Dwfl_Callbacks); *userdata is the
 * struct msc_sym. */
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
		       GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif
