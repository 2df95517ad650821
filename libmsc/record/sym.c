/* SPDX-License-Identifier: MIT */
/* Offline symbolization with libdwfl and address-sorted caches: see msc_sym.h. */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_arena.h"
#include "msc_hash.h"
#include "msc_sym.h"
#include "msc_util.h"

/*
 * libstdc++'s demangler (<cxxabi.h> is C++ only; it returns malloc'd
 * text), loaded the first time a name needs it: linked in, libstdc++
 * costs every run of every tool about 3 ms to load (measured here, its
 * relocations and page faults), and most programs are C.  Without it,
 * names stay as the symbol table has them.
 */
typedef char *demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

static demangle_fn *cxa_demangle;
static pthread_once_t cxa_demangle_once = PTHREAD_ONCE_INIT;

static void load_demangler(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

	if (h)
		cxa_demangle = (demangle_fn *)dlsym(h, "__cxa_demangle");
}

static char *demangle(const char *name, int *status)
{
	pthread_once(&cxa_demangle_once, load_demangler);
	return cxa_demangle ? cxa_demangle(name, NULL, NULL, status) : NULL;
}

#define STATUS_NO_DEBUG "no debug info"
#define STATUS_CHANGED "file changed since recording (build-id mismatch)"
#define STATUS_BAD_INDEX "invalid module index"

/* Namespaces and classes nest; deeper than this is not real code. */
#define MAX_SCAN_DEPTH 64

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

struct symbol {
	const char *name;	/* raw, owned by libelf */
	int rank;		/* lower wins among symbols at one address */
	size_t order;		/* position in the ELF table: last tie-break */
	uint64_t addr, size;
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

/*
 * The address cache.  A repeated address should cost one cache miss, not the
 * two of a u64map value pointing into a frame pool (measured: 0.2 us against
 * 0.1 us per random lookup), so each 32-byte slot holds the first frame;
 * only the further frames of an inline chain live in the pool.  Open
 * addressing with linear probing, grown at 3/4 load, never deleted from.
 */
struct cache_slot {
	uint64_t key;		/* (module + 1) << 48 | addr; 0: empty */
	const char *fn, *file;
	uint32_t line;
	uint32_t more;		/* bit 0 inlined, bits 1-6 frame count - 1,
				 * bits 7-31 pool index of the further frames */
};

#define CACHE_POOL_MAX (1u << 25)

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

/* ---------------------------------------------------------------------- */
/* Sorted range tables */

static int range_add(struct range_table *t, uint64_t low, uint64_t high, size_t idx)
{
	if (MSC_GROW(t->r, t->n + 1, t->cap, 16))
		return -ENOMEM;
	t->r[t->n].low = low;
	t->r[t->n].high = high;
	t->r[t->n].idx = idx;
	t->n++;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	/* At one start, the larger range first, so that the inner one is
	 * opened last; for equal ranges the one added last (the inner one,
	 * since callers add outer things first). */
	if (x->high != y->high)
		return x->high > y->high ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void segment_add(struct range_table *t, uint64_t start, size_t pos)
{
	struct segment *last = t->nseg ? &t->seg[t->nseg - 1] : NULL;

	if (last && last->start == start) {
		last->pos = pos;
		return;
	}
	if (last && last->pos == pos)
		return;
	t->seg[t->nseg].start = start;
	t->seg[t->nseg].pos = pos;
	t->nseg++;
}

/*
 * Sorts the ranges and sweeps them with a stack of open ranges (in start
 * order, so the top is the innermost): a segment starts wherever a range
 * opens or the top one closes.  At most 2n segments.  Returns 0 or -ENOMEM.
 */
static int range_sort(struct range_table *t)
{
	size_t *stack, top = 0, i;

	free(t->seg);
	t->nseg = 0;
	t->seg = malloc((2 * t->n + 1) * sizeof(*t->seg));
	stack = malloc((t->n + 1) * sizeof(*stack));
	if (!t->seg || !stack) {
		free(stack);
		return -ENOMEM;
	}
	if (t->n > 1)
		qsort(t->r, t->n, sizeof(*t->r), range_cmp);
	for (i = 0; i <= t->n; i++) {
		uint64_t next = i < t->n ? t->r[i].low : UINT64_MAX;

		/* Close the open ranges that end before the next one starts. */
		while (top) {
			uint64_t end = t->r[stack[top - 1]].high;

			if (end > next)
				break;
			top--;
			while (top && t->r[stack[top - 1]].high <= end)
				top--;
			segment_add(t, end, top ? stack[top - 1] : NO_RANGE);
		}
		if (i < t->n) {
			stack[top++] = i;
			segment_add(t, t->r[i].low, i);
		}
	}
	free(stack);
	return 0;
}

/* The innermost range containing addr, or NULL. */
static const struct range *range_find(const struct range_table *t, uint64_t addr)
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

static void range_release(struct range_table *t)
{
	free(t->r);
	free(t->seg);
	t->r = NULL;
	t->seg = NULL;
	t->n = t->cap = t->nseg = 0;
}

/* ---------------------------------------------------------------------- */
/* Strings */

static int intern(struct msc_sym *s, const char *str, const char **out)
{
	const char *have = msc_strmap_get(&s->strings, str);
	char *copy;

	if (have) {
		*out = have;
		return 0;
	}
	copy = msc_arena_strdup(&s->arena, str);
	if (!copy || msc_strmap_put(&s->strings, copy, copy))
		return -ENOMEM;
	*out = copy;
	return 0;
}

/*
 * The name to show for a raw symbol or DWARF name: demangled when it is a
 * C++ (Itanium ABI) name, interned.  Cached by the raw pointer, which stays
 * valid (and unique) as long as the module's Dwfl, that is until
 * msc_sym_free().
 */
static int shown_name(struct msc_sym *s, const char *raw, const char **out)
{
	uint64_t *have = msc_u64map_get(&s->names, (uintptr_t)raw);
	char *demangled = NULL, *version_free = NULL;
	const char *name = raw;
	int status, ret;

	if (have) {
		*out = (const char *)(uintptr_t)*have;
		return 0;
	}
	/* ELF symbol versions ("__libc_start_main@@GLIBC_2.34") are not part
	 * of the function's name. */
	if (strchr(raw, '@')) {
		version_free = strndup(raw, (size_t)(strchr(raw, '@') - raw));
		if (!version_free)
			return -ENOMEM;
		name = version_free;
	}
	if (name[0] == '_' && name[1] == 'Z')
		demangled = demangle(name, &status);
	ret = intern(s, demangled ? demangled : name, out);
	free(demangled);
	free(version_free);
	if (!ret)
		ret = msc_u64map_put(&s->names, (uintptr_t)raw, (uintptr_t)*out);
	return ret;
}

/*
 * A source file name from the line table of the unit cudie, interned; joined
 * to the unit's DW_AT_comp_dir when libdw left it relative (it joins the
 * directory table already).  Cached by the raw pointer like names.
 */
static int shown_file(struct msc_sym *s, const char *raw, Dwarf_Die *cudie, const char **out)
{
	uint64_t *have = msc_u64map_get(&s->files, (uintptr_t)raw);
	const char *comp_dir = NULL;
	Dwarf_Attribute attr;
	char *joined = NULL;
	int ret;

	if (have) {
		*out = (const char *)(uintptr_t)*have;
		return 0;
	}
	if (raw[0] != '/' && cudie)
		comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (comp_dir && comp_dir[0] == '/' && asprintf(&joined, "%s/%s", comp_dir, raw) < 0)
		return -ENOMEM;
	ret = intern(s, joined ? joined : raw, out);
	free(joined);
	if (!ret)
		ret = msc_u64map_put(&s->files, (uintptr_t)raw, (uintptr_t)*out);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Symbol table */

static int sym_rank(const GElf_Sym *sym, const char *name)
{
	int rank, bind = GELF_ST_BIND(sym->st_info);

	/* Exported names first, then weak aliases, then file-local ones. */
	if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
		rank = 0;
	else if (bind == STB_WEAK)
		rank = 1;
	else
		rank = 2;
	/* Among equals, the public spelling: malloc before __libc_malloc. */
	rank *= 8;
	while (*name == '_' && rank % 8 < 7) {
		rank++;
		name++;
	}
	return rank;
}

static int symbol_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Reads every function symbol with a size (from .symtab when the file or its
 * debug file has one, else .dynsym), keeps one per address and sorts them.
 */
static int load_symtab(struct module *m)
{
	int n = dwfl_module_getsymtab(m->mod), i, ret = 0;
	struct symbol *all;
	size_t count = 0, k;

	if (n <= 0)
		return 0;
	all = malloc((size_t)n * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !name[0] || shndx == SHN_UNDEF || !sym.st_size)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		all[count].name = name;
		all[count].rank = sym_rank(&sym, name);
		all[count].order = (size_t)i;
		all[count].addr = addr;
		all[count].size = sym.st_size;
		count++;
	}
	qsort(all, count, sizeof(*all), symbol_cmp);
	m->sym_names = malloc((count ? count : 1) * sizeof(*m->sym_names));
	if (!m->sym_names) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < count; k++) {
		/* Sorted by rank within an address: the first one wins. */
		if (k && all[k].addr == all[k - 1].addr)
			continue;
		m->sym_names[m->syms.n] = all[k].name;
		ret = range_add(&m->syms, all[k].addr, all[k].addr + all[k].size, m->syms.n);
		if (ret)
			goto out;
	}
	ret = range_sort(&m->syms);
out:
	free(all);
	return ret;
}

/* ---------------------------------------------------------------------- */
/* Compilation units and their subprograms */

/*
 * The index in m->cus of the unit whose DIE is cudie (skeleton or not), added
 * if new; *idx.  A skeleton's split unit has the DIEs (a skeleton whose .dwo
 * is missing has a zeroed subdie: its own then).
 */
static int cu_index(struct module *m, Dwarf_Die *cudie, uint8_t unit_type, Dwarf_Die *subdie,
		    size_t *idx)
{
	uint64_t key = dwarf_dieoffset(cudie) + 1, *have = msc_u64map_get(&m->by_cu, key);

	if (have) {
		*idx = (size_t)*have;
		return 0;
	}
	if (MSC_GROW(m->cus, m->ncus + 1, m->cap_cus, 64) ||
	    msc_u64map_put(&m->by_cu, key, m->ncus))
		return -ENOMEM;
	memset(&m->cus[m->ncus], 0, sizeof(m->cus[0]));
	m->cus[m->ncus].die = unit_type == DW_UT_skeleton && subdie->cu ? *subdie : *cudie;
	*idx = m->ncus++;
	return 0;
}

/* Every unit's address ranges into cu_ranges (once). */
static int load_cus(struct module *m)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	int ret;

	m->all_cus = true;
	while (dwarf_get_units(m->dw, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, low, high;
		ptrdiff_t off = 0;
		size_t idx = 0;
		bool any = false;

		cu = next;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_partial)
			continue;
		/* The skeleton has the ranges, the split unit the DIEs. */
		while ((off = dwarf_ranges(&cudie, off, &base, &low, &high)) > 0) {
			if (high <= low)
				continue;
			if (!any && (ret = cu_index(m, &cudie, unit_type, &subdie, &idx)))
				return ret;
			if (range_add(&m->cu_ranges, low, high, idx))
				return -ENOMEM;
			any = true;
		}
	}
	return range_sort(&m->cu_ranges);
}

/*
 * The unit holding DWARF address a, or NULL.  .debug_aranges (GCC writes
 * it; libdw reads it once, a table of a few thousand entries for libc) saves
 * reading the ranges of every unit, which took 8 ms for libc's 1,937 on
 * every recording whose stacks reach it (all of them: main's caller is
 * there).  An address it does not cover (a unit without an entry: clang
 * writes none by default, assembler files may have none) makes every unit's
 * ranges read after all.
 */
static int cu_at(struct module *m, Dwarf_Addr a, struct cu **out)
{
	const struct range *r;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	size_t idx;
	int ret;

	*out = NULL;
	if (!m->all_cus && dwarf_addrdie(m->dw, a, &cudie) &&
	    dwarf_cu_info(cudie.cu, NULL, &unit_type, NULL, &subdie, NULL, NULL, NULL) == 0 &&
	    (unit_type == DW_UT_compile || unit_type == DW_UT_skeleton ||
	     unit_type == DW_UT_partial)) {
		ret = cu_index(m, &cudie, unit_type, &subdie, &idx);
		if (!ret)
			*out = &m->cus[idx];
		return ret;
	}
	if (!m->all_cus && (ret = load_cus(m)))
		return ret;
	r = range_find(&m->cu_ranges, a);
	if (r)
		*out = &m->cus[r->idx];
	return 0;
}

static int cu_add_subprogram(struct cu *cu, Dwarf_Die *die)
{
	Dwarf_Addr base, low, high;
	ptrdiff_t off = 0;
	bool added = false;

	while ((off = dwarf_ranges(die, off, &base, &low, &high)) > 0) {
		if (high <= low)
			continue;
		if (!added && MSC_GROW(cu->progs, cu->nprogs + 1, cu->cap_progs, 32))
			return -ENOMEM;
		if (!added) {
			memset(&cu->progs[cu->nprogs], 0, sizeof(cu->progs[0]));
			cu->progs[cu->nprogs++].die = *die;
			added = true;
		}
		if (range_add(&cu->subs, low, high, cu->nprogs - 1))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Collects the subprograms with code below parent: at unit level, in
 * namespaces and classes (C++ member functions may be defined there), and
 * inside functions and their blocks (GNU C nested functions, local classes
 * such as lambdas' closures).  Inlined subroutines are not entered: they
 * hold no out-of-line code.
 */
static int cu_scan(struct cu *cu, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child, next;
	int ret;

	if (depth > MAX_SCAN_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	for (;;) {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			ret = cu_add_subprogram(cu, &child);
			if (ret)
				return ret;
			/* fall through */
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_lexical_block:
			ret = cu_scan(cu, &child, depth + 1);
			if (ret)
				return ret;
			break;
		default:
			break;
		}
		if (dwarf_siblingof(&child, &next) != 0)
			break;
		child = next;
	}
	return 0;
}

static void subprogram_release(struct subprogram *sp)
{
	range_release(&sp->inl);
	free(sp->nodes);
	sp->nodes = NULL;
	sp->nnodes = sp->cap_nodes = 0;
	sp->scanned = false;
}

static void cu_release(struct cu *cu)
{
	size_t i;

	for (i = 0; i < cu->nprogs; i++)
		subprogram_release(&cu->progs[i]);
	range_release(&cu->subs);
	free(cu->progs);
	cu->progs = NULL;
	cu->nprogs = cu->cap_progs = 0;
	cu->scanned = false;
}

/*
 * Adds every DW_TAG_inlined_subroutine below parent (looking through lexical
 * blocks) as a node whose parent is the nearest enclosing one.  Nodes are
 * added parent first, so among ranges with the same bounds the inner one
 * sorts later and range_find() meets it first.
 */
static int subprogram_scan(struct subprogram *sp, Dwarf_Die *parent, int parent_node, int depth)
{
	Dwarf_Die child, next;
	int ret, tag;

	if (depth > MAX_SCAN_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	for (;;) {
		tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, low, high;
			ptrdiff_t off = 0;
			int node = (int)sp->nnodes;

			if (MSC_GROW(sp->nodes, sp->nnodes + 1, sp->cap_nodes, 16))
				return -ENOMEM;
			memset(&sp->nodes[node], 0, sizeof(sp->nodes[node]));
			sp->nodes[node].die = child;
			sp->nodes[node].parent = parent_node;
			sp->nnodes++;
			while ((off = dwarf_ranges(&child, off, &base, &low, &high)) > 0) {
				if (high > low && range_add(&sp->inl, low, high, (size_t)node))
					return -ENOMEM;
			}
			ret = subprogram_scan(sp, &child, node, depth + 1);
			if (ret)
				return ret;
		} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
			   tag == DW_TAG_catch_block) {
			ret = subprogram_scan(sp, &child, parent_node, depth + 1);
			if (ret)
				return ret;
		}
		if (dwarf_siblingof(&child, &next) != 0)
			break;
		child = next;
	}
	return 0;
}

/* The subprogram whose code holds DWARF address a, scanned, or NULL; its
 * unit in *cu_out (or NULL). */
static int find_subprogram(struct module *m, Dwarf_Addr a, struct cu **cu_out,
			   struct subprogram **out)
{
	const struct range *r;
	struct subprogram *sp;
	struct cu *cu;
	int ret;

	*out = NULL;
	ret = cu_at(m, a, &cu);
	*cu_out = cu;
	if (ret || !cu)
		return ret;
	if (!cu->scanned) {
		ret = cu_scan(cu, &cu->die, 0);
		if (!ret)
			ret = range_sort(&cu->subs);
		if (ret) {
			cu_release(cu);
			return ret;
		}
		cu->scanned = true;
	}
	r = range_find(&cu->subs, a);
	if (!r)
		return 0;
	sp = &cu->progs[r->idx];
	if (!sp->scanned) {
		ret = subprogram_scan(sp, &sp->die, -1, 0);
		if (!ret)
			ret = range_sort(&sp->inl);
		if (ret) {
			subprogram_release(sp);
			return ret;
		}
		sp->scanned = true;
	}
	*out = sp;
	return 0;
}

static int die_name(struct msc_sym *s, Dwarf_Die *die, const char **out)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	const char *raw = NULL;
	uint64_t key = 0, *have;
	int ret;

	/*
	 * An inline function inlined in many places is named once: the
	 * concrete DIEs share their abstract origin, keyed by its address in
	 * the mapped .debug_info (unique across modules, unlike offsets).
	 */
	if (dwarf_formref_die(dwarf_attr(die, DW_AT_abstract_origin, &attr), &origin)) {
		key = (uintptr_t)origin.addr;
		have = msc_u64map_get(&s->origins, key);
		if (have) {
			*out = (const char *)(uintptr_t)*have;
			return 0;
		}
	}
	*out = NULL;
	/* _integrate follows DW_AT_abstract_origin and DW_AT_specification. */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		raw = dwarf_formstring(&attr);
	if (!raw && dwarf_attr_integrate(die, DW_AT_name, &attr))
		raw = dwarf_formstring(&attr);
	ret = raw ? shown_name(s, raw, out) : 0;
	if (!ret && key)
		ret = msc_u64map_put(&s->origins, key, (uintptr_t)*out);
	return ret;
}

/* Where the inlined subroutine inl was called from. */
static int call_site(struct msc_sym *s, Dwarf_Die *inl, const char **file, unsigned *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word value;
	Dwarf_Die cudie;
	Dwarf_Files *files;
	size_t nfiles;
	const char *raw;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &value) == 0)
		*line = (unsigned)value;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &value) != 0 ||
	    !dwarf_diecu(inl, &cudie, NULL, NULL) ||
	    dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0 || value >= nfiles)
		return 0;
	raw = dwarf_filesrc(files, value, NULL, NULL);
	return raw ? shown_file(s, raw, &cudie, file) : 0;
}

/* ---------------------------------------------------------------------- */
/* Modules */

static int set_status(struct msc_sym *s, struct module *m, const char *what, const char *why)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s: %s", what, why ? why : "unknown error");
	return intern(s, buf, &m->status);
}

static void module_close(struct module *m)
{
	size_t i;

	for (i = 0; i < m->ncus; i++)
		cu_release(&m->cus[i]);
	free(m->cus);
	m->cus = NULL;
	m->ncus = m->cap_cus = 0;
	m->all_cus = false;
	msc_u64map_release(&m->by_cu);
	range_release(&m->cu_ranges);
	range_release(&m->syms);
	free(m->sym_names);
	m->sym_names = NULL;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	m->dw = NULL;
	m->usable = false;
	m->status = NULL;
	m->opened = false;
}

/*
 * Opens the file, checks its build-id and reads its symbol table and unit
 * ranges.  A file that cannot be used is not an error: the module stays
 * unusable with a status.  On -ENOMEM the module is left closed, so that a
 * later call may try again.
 */
static int module_open(struct msc_sym *s, struct module *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int fd, len, ret;
	void **ud;

	m->opened = true;
	/* libdwfl's messages lose errno; open once ourselves to keep it. */
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = set_status(s, m, "cannot open", strerror(errno));
		goto out;
	}
	close(fd);

	m->dwfl = dwfl_begin(&s->callbacks);
	if (!m->dwfl) {
		ret = -ENOMEM;
		goto out;
	}
	dwfl_report_begin(m->dwfl);
	/*
	 * Bias 0, so that dwfl addresses are the ELF's own vaddrs: for ET_DYN
	 * base 0 relative to p_vaddr (add_p_vaddr; without it a prelinked
	 * library would be moved to 0); ET_EXEC addresses are absolute anyway.
	 */
	m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, -1, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		ret = set_status(s, m, "cannot read ELF", dwfl_errmsg(-1));
		goto out;
	}
	/* find_debuginfo's */
	dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = s;

	if (m->build_id_len) {
		len = dwfl_module_build_id(m->mod, &bits, &vaddr);
		if (len != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len)) {
			m->status = STATUS_CHANGED;
			return 0;
		}
	}
	m->usable = true;
	ret = load_symtab(m);
	if (ret)
		goto out;
	m->dw = dwfl_module_getdwarf(m->mod, &m->dwbias);
	if (!m->dw) {
		m->status = STATUS_NO_DEBUG;
		return 0;
	}
	ret = msc_u64map_init(&m->by_cu, 64);
out:
	if (ret)
		module_close(m);
	return ret;
}

static struct module *module_get(struct msc_sym *s, int index)
{
	if (!s || index < 0 || index >= s->nmods)
		return NULL;
	return s->mods[index];
}

/* ---------------------------------------------------------------------- */
/* Resolution */

/* Fills in a node's name and call site on first use. */
static int node_name(struct msc_sym *s, struct inl_node *node)
{
	int ret;

	if (node->named)
		return 0;
	ret = die_name(s, &node->die, &node->fn);
	if (!ret)
		ret = call_site(s, &node->die, &node->call_file, &node->call_line);
	if (!ret)
		node->named = true;
	return ret;
}

/*
 * The line table's file and line for addr (a dwfl address), in unit cu
 * (NULL: not known).  libdwfl finds the unit by .debug_aranges only (0.188):
 * a file without it (clang's default) has its lines read from the unit
 * cu_at() found.
 */
static int line_of(struct msc_sym *s, struct module *m, struct cu *cu, uint64_t addr,
		   const char **file, unsigned *line)
{
	Dwfl_Line *dl = dwfl_module_getsrc(m->mod, addr);
	Dwarf_Line *wl = NULL;
	const char *raw = NULL;
	Dwarf_Die *cudie = NULL;
	int lineno = 0, ret;

	*file = NULL;
	*line = 0;
	if (dl) {
		raw = dwfl_lineinfo(dl, NULL, &lineno, NULL, NULL, NULL);
		cudie = dwfl_linecu(dl);
	} else if (cu && addr >= m->dwbias &&
		   (wl = dwarf_getsrc_die(&cu->die, addr - m->dwbias)) != NULL) {
		raw = dwarf_linesrc(wl, NULL, NULL);
		if (dwarf_lineno(wl, &lineno) != 0)
			lineno = 0;
		cudie = &cu->die;
	}
	if (!raw)
		return 0;
	ret = shown_file(s, raw, cudie, file);
	if (!ret)
		*line = lineno > 0 ? (unsigned)lineno : 0;
	return ret;
}

/*
 * Resolves without the address cache into fr (MSC_SYM_MAX_FRAMES entries).
 * Returns the number of frames or -ENOMEM.
 */
static int resolve_frames(struct msc_sym *s, struct module *m, uint64_t addr,
			  struct msc_sym_frame *fr)
{
	struct subprogram *sp = NULL;
	struct cu *cu = NULL;
	struct inl_node *node;
	const char *sym_fn = NULL;
	const struct range *r;
	struct msc_sym_frame *outer;
	int n = 0, k, ret;

	memset(&fr[0], 0, sizeof(fr[0]));
	if (!m->usable)
		return 1;

	r = range_find(&m->syms, addr);
	if (r) {
		ret = shown_name(s, m->sym_names[r->idx], &sym_fn);
		if (ret)
			return ret;
	}
	if (!m->dw) {
		fr[0].fn = sym_fn;
		return 1;
	}
	if (addr >= m->dwbias) {
		ret = find_subprogram(m, addr - m->dwbias, &cu, &sp);
		if (ret)
			return ret;
	}
	ret = line_of(s, m, cu, addr, &fr[0].file, &fr[0].line);
	if (ret)
		return ret;

	/* The innermost inlined subroutine, then the ones enclosing it. */
	r = sp ? range_find(&sp->inl, addr - m->dwbias) : NULL;
	for (k = r ? (int)r->idx : -1; k >= 0 && n < MSC_SYM_MAX_FRAMES - 1; k = node->parent) {
		node = &sp->nodes[k];
		ret = node_name(s, node);
		if (ret)
			return ret;
		fr[n].fn = node->fn;
		fr[n].inlined = true;
		/* Its caller is executing the call site. */
		fr[n + 1].file = node->call_file;
		fr[n + 1].line = node->call_line;
		n++;
	}
	outer = &fr[n];
	outer->inlined = false;
	outer->fn = sym_fn;
	if (!sym_fn && sp) {
		if (!sp->named) {
			ret = die_name(s, &sp->die, &sp->fn);
			if (ret)
				return ret;
			sp->named = true;
		}
		outer->fn = sp->fn;
	}
	return n + 1;
}

static uint64_t cache_key(int module, uint64_t addr)
{
	/* Key 0 marks an empty slot; module + 1 keeps keys non-zero. */
	if (addr >> 48 || module >= 0xffff)
		return 0;
	return (uint64_t)(module + 1) << 48 | addr;
}

static struct cache_slot *cache_find(const struct addr_cache *c, uint64_t key)
{
	size_t i = msc_hash_u64(key) & c->mask;

	while (c->slots[i].key && c->slots[i].key != key)
		i = (i + 1) & c->mask;
	return &c->slots[i];
}

static int cache_grow(struct addr_cache *c)
{
	size_t ncap = c->slots ? (c->mask + 1) * 2 : 1024, i;
	struct addr_cache nc = { calloc(ncap, sizeof(*nc.slots)), ncap - 1, c->count };

	if (!nc.slots)
		return -ENOMEM;
	for (i = 0; c->slots && i <= c->mask; i++) {
		if (c->slots[i].key)
			*cache_find(&nc, c->slots[i].key) = c->slots[i];
	}
	free(c->slots);
	*c = nc;
	return 0;
}

/* Remembers the n frames of key; the frames must have interned strings. */
static int cache_put(struct msc_sym *s, uint64_t key, const struct msc_sym_frame *fr, int n)
{
	struct addr_cache *c = &s->cache;
	struct cache_slot *slot;
	size_t more = (size_t)n - 1;

	if (s->npool + more >= CACHE_POOL_MAX)
		return 0;	/* correct without the cache, only slower */
	if ((!c->slots || (c->count + 1) * 4 > (c->mask + 1) * 3) && cache_grow(c))
		return -ENOMEM;
	if (more && MSC_GROW(s->pool, s->npool + more, s->cap_pool, 1024))
		return -ENOMEM;
	slot = cache_find(c, key);
	slot->key = key;
	slot->fn = fr[0].fn;
	slot->file = fr[0].file;
	slot->line = fr[0].line;
	slot->more = (uint32_t)(s->npool << 7 | more << 1 | fr[0].inlined);
	if (more)
		memcpy(&s->pool[s->npool], &fr[1], more * sizeof(*fr));
	s->npool += more;
	c->count++;
	return 0;
}

/* Copies up to max frames of a cached chain; returns how many. */
static int cache_get(const struct msc_sym *s, const struct cache_slot *slot,
		     struct msc_sym_frame *out, int max)
{
	int n = (int)(slot->more >> 1 & 63) + 1;

	out[0].fn = slot->fn;
	out[0].file = slot->file;
	out[0].line = slot->line;
	out[0].inlined = slot->more & 1;
	if (n > max)
		n = max;
	if (n > 1)
		memcpy(&out[1], &s->pool[slot->more >> 7], (size_t)(n - 1) * sizeof(*out));
	return n;
}

int msc_sym_resolve(struct msc_sym *s, int module, uint64_t addr,
		    struct msc_sym_frame *out, int max)
{
	struct msc_sym_frame fr[MSC_SYM_MAX_FRAMES];
	struct module *m = module_get(s, module);
	uint64_t key;
	int n, ret;

	if (!m || !out || max < 1)
		return -EINVAL;
	key = cache_key(module, addr);
	if (key && s->cache.slots) {
		struct cache_slot *slot = cache_find(&s->cache, key);

		if (slot->key)
			return cache_get(s, slot, out, max);
	}

	if (!m->opened) {
		ret = module_open(s, m);
		if (ret)
			return ret;
	}
	n = resolve_frames(s, m, addr, fr);
	if (n < 0)
		return n;
	if (key) {
		ret = cache_put(s, key, fr, n);
		if (ret)
			return ret;
	}
	if (n > max)
		n = max;
	memcpy(out, fr, (size_t)n * sizeof(*out));
	return n;
}

/* ---------------------------------------------------------------------- */
/* Decompressed copies of debug files */

/*
 * Debian's -dbg packages ship their debug files with compressed sections
 * (SHF_COMPRESSED, zlib), which libdw inflates every time it opens one:
 * 110 ms of CPU for python3's, 50 ms for libc's, in every recording, most
 * of what recording a short program costs.  The first time such a file is
 * found, a copy with the sections decompressed is written to the cache
 * directory, named by its build-id; from then on that copy is opened in
 * its place.  A copy whose build-id is not its name is not used (and is
 * replaced).
 */

/* The cache directory: MEMSCOPE_CACHE ("" or "off": none), else
 * $XDG_CACHE_HOME/memscope, else $HOME/.cache/memscope. */
static char *cache_dir_of_env(void)
{
	const char *env = getenv("MEMSCOPE_CACHE"), *base;
	char *dir = NULL;

	if (env)
		return *env && strcmp(env, "off") != 0 ? strdup(env) : NULL;
	if ((base = getenv("XDG_CACHE_HOME")) && *base == '/') {
		if (asprintf(&dir, "%s/memscope", base) < 0)
			return NULL;
	} else if ((base = getenv("HOME")) && *base == '/') {
		if (asprintf(&dir, "%s/.cache/memscope", base) < 0)
			return NULL;
	}
	return dir;
}

/* path = dir/sep<build-id in hex, sep after its first byte>.debug; false
 * when it does not fit. */
static bool hex_path(const char *dir, const char *sep, const unsigned char *id, int len,
		     char *path, size_t size)
{
	int n = snprintf(path, size, "%s/", dir), i;

	if (n < 0 || (size_t)n + 2 * (size_t)len + strlen(sep) + 8 > size)
		return false;
	for (i = 0; i < len; i++) {
		if (i == 1)
			n += snprintf(path + n, size - (size_t)n, "%s", sep);
		n += snprintf(path + n, size - (size_t)n, "%02x", id[i]);
	}
	snprintf(path + n, size - (size_t)n, ".debug");
	return true;
}

/* The cached copy's path: dir/debug/<build-id>.debug. */
static bool cached_path(const char *dir, const unsigned char *id, int len, char *path,
			size_t size)
{
	char sub[PATH_MAX];

	return snprintf(sub, sizeof(sub), "%s/debug", dir) < (int)sizeof(sub) &&
	       hex_path(sub, "", id, len, path, size);
}

/* Where the standard search looks by build-id under debug: debug/.build-id/xx/yyyy.debug. */
static bool build_id_path(const char *debug, const unsigned char *id, int len, char *path,
			  size_t size)
{
	char sub[PATH_MAX];

	return len > 1 && snprintf(sub, sizeof(sub), "%s/.build-id", debug) < (int)sizeof(sub) &&
	       hex_path(sub, "/", id, len, path, size);
}

/*
 * Whether the ELF file fd is whole (its section headers there, and every
 * section's bytes within the file) and of build-id id (any, for a NULL
 * id); and whether it has a compressed section: one look at its headers.
 */
static bool elf_look(int fd, const unsigned char *id, int len, bool *compressed)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	const void *bits;
	struct stat st;
	size_t nscn;
	bool match = e && elf_kind(e) == ELF_K_ELF && fstat(fd, &st) == 0 &&
		     elf_getshdrnum(e, &nscn) == 0 && nscn > 1 &&
		     (!id || (dwelf_elf_gnu_build_id(e, &bits) == len &&
			      memcmp(bits, id, (size_t)len) == 0));

	*compressed = false;
	while (match && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		match = gelf_getshdr(scn, &sh) &&
			(sh.sh_type == SHT_NOBITS || sh.sh_offset + sh.sh_size <= (uint64_t)st.st_size);
		*compressed |= match && (sh.sh_flags & SHF_COMPRESSED);
	}
	elf_end(e);
	return match;
}

/*
 * The ELF file at path, if its build-id is id: its fd (and whether it has
 * compressed sections), or -1.  mine: a cached copy, removed when it is
 * not one (torn, foreign, stale).  libdw parses what it is given: a copy
 * must be a regular file of ours that no one else may write (not a link),
 * or it is not looked into.
 */
static int open_with_build_id(const char *path, const unsigned char *id, int len, bool mine,
			      bool *compressed)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | (mine ? O_NOFOLLOW : 0));
	struct stat st;

	if (fd < 0)
		return -1;
	if (mine && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		     (st.st_mode & 022))) {
		close(fd);
		return -1;
	}
	if (!elf_look(fd, id, len, compressed)) {
		close(fd);
		if (mine)
			unlink(path);	/* made again */
		return -1;
	}
	return fd;
}

static int mkdirs(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/*
 * Writes the debug file fd with its sections decompressed to path (through
 * a temporary file in its directory, renamed when complete): its fd, or -1
 * (nothing written: disk full, no directory, a section libelf cannot
 * decompress).
 */
static int write_cached(int fd, const char *path)
{
	char tmp[PATH_MAX + 8], dir[PATH_MAX];
	struct stat st;
	off_t off = 0;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	int out;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if (mkdirs(dir) < 0 || fstat(fd, &st) < 0)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0)
		return -1;
	while (off < st.st_size)
		if (sendfile(out, fd, &off, (size_t)(st.st_size - off)) <= 0)
			goto fail;
	e = elf_begin(out, ELF_C_RDWR, NULL);
	if (!e)
		goto fail;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			goto fail;
	}
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto fail;
	elf_end(e);
	if (rename(tmp, path) < 0) {
		unlink(tmp);
		close(out);
		return -1;
	}
	return out;
fail:
	elf_end(e);
	unlink(tmp);
	close(out);
	return -1;
}

/*
 * Whether the standard search (the default debug path ":.debug:/usr/lib/debug")
 * can find a separate debug file of file_name other than by its build-id
 * (looked for already): by its .gnu_debuglink name, or without one, by its
 * own name or that with ".debug", in its directory, its .debug/, and
 * /usr/lib/debug under its directory's path or directly.  When none of
 * these is there, the search has nothing left to ask but debuginfod, which
 * has no server to ask (msc_sym_new unsets DEBUGINFOD_URLS), yet libdw
 * loads libdebuginfod for it first: with libcurl and its chain, 27
 * libraries, 5-10 ms of every recording that names a function of a
 * distribution binary without debug information (ls, sqlite3).
 */
static bool debug_file_near(const char *file_name, const char *debuglink_file)
{
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	const char *base = slash ? slash + 1 : file_name;
	char dir[PATH_MAX], names[2][NAME_MAX + 8], path[PATH_MAX * 2];
	int ndir, nnames = 0, i;

	if (!file_name || !slash)
		return true;	/* not a path we can take apart: ask */
	ndir = (int)(slash - file_name);
	if (ndir >= (int)sizeof(dir))
		return true;
	memcpy(dir, file_name, (size_t)ndir);
	dir[ndir] = '\0';
	if (debuglink_file) {
		if (strlen(debuglink_file) > NAME_MAX || strchr(debuglink_file, '/'))
			return true;
		strcpy(names[nnames++], debuglink_file);
	} else {
		if (strlen(base) > NAME_MAX)
			return true;
		snprintf(names[nnames++], sizeof(names[0]), "%s.debug", base);
		strcpy(names[nnames++], base);
	}
	for (i = 0; i < nnames; i++) {
		/* (the file itself, by its own name in its own directory, is
		 * not a separate debug file) */
		bool self = !debuglink_file && i == 1;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!self && access(path, F_OK) == 0)
			return true;
		snprintf(path, sizeof(path), "%s/.debug/%s", dir, names[i]);
		if (access(path, F_OK) == 0)
			return true;
		snprintf(path, sizeof(path), "/usr/lib/debug%s/%s", dir, names[i]);
		if (access(path, F_OK) == 0)
			return true;
		snprintf(path, sizeof(path), "/usr/lib/debug/%s", names[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/*
 * libdwfl's find_debuginfo: the cached copy, else the standard search (and
 * a copy of what it finds made, if that has compressed sections).  The
 * copy is looked for first: the standard search opens what it finds by
 * build-id as the module's debug file itself, whatever is returned.  Only
 * with the default debug path: one set with msc_sym_set_debug_path says
 * where debug information may come from.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct msc_sym *s = *userdata;
	bool std_path = !s || !s->debug_path;	/* libdwfl's default path */
	const unsigned char *id;
	GElf_Addr vaddr;
	char path[PATH_MAX], dpath[PATH_MAX];
	int len = std_path ? dwfl_module_build_id(mod, &id, &vaddr) : 0, fd, cfd;
	/* where the standard search looks first: by build-id under
	 * /usr/lib/debug */
	bool by_id = len > 0 && build_id_path("/usr/lib/debug", id, len, dpath, sizeof(dpath));
	bool compressed, cache = std_path && s && s->cache_dir && len > 0 &&
		     cached_path(s->cache_dir, id, len, path, sizeof(path));

	if (cache && (fd = open_with_build_id(path, id, len, true, &compressed)) >= 0) {
		*debuginfo_file_name = strdup(path);
		return fd;
	}
	/*
	 * The first time: where the standard search finds most debug files,
	 * by build-id, the copy is made from there and returned (the standard
	 * search would have libdw decompress the file once more, for this
	 * recording).
	 */
	if (cache && by_id && (fd = open_with_build_id(dpath, id, len, false, &compressed)) >= 0) {
		cfd = compressed ? write_cached(fd, path) : -1;
		close(fd);
		if (cfd >= 0) {
			*debuginfo_file_name = strdup(path);
			return cfd;
		}
	}
	/* Nothing by build-id, nor by name: debuginfod's turn (see
	 * debug_file_near). */
	if (std_path && !(by_id && access(dpath, F_OK) == 0) &&
	    !debug_file_near(file_name, debuglink_file)) {
		errno = ENOENT;
		return -1;
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					  debuglink_file, debuglink_crc, debuginfo_file_name);
	if (fd < 0 || !cache || !elf_look(fd, NULL, 0, &compressed) || !compressed)
		return fd;
	cfd = write_cached(fd, path);
	if (cfd < 0)
		return fd;
	close(fd);
	free(*debuginfo_file_name);
	*debuginfo_file_name = strdup(path);
	return cfd;
}

/* ---------------------------------------------------------------------- */
/* Lifecycle */

struct msc_sym *msc_sym_new(void)
{
	struct msc_sym *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	msc_arena_init(&s->arena);
	if (msc_strmap_init(&s->mod_index, 16) || msc_strmap_init(&s->strings, 1024) ||
	    msc_u64map_init(&s->names, 1024) || msc_u64map_init(&s->files, 256) ||
	    msc_u64map_init(&s->origins, 1024)) {
		msc_sym_free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = find_debuginfo;
	s->cache_dir = cache_dir_of_env();
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debug_path;
	/* dwfl_standard_find_debuginfo asks debuginfod servers last. */
	unsetenv("DEBUGINFOD_URLS");
	return s;
}

void msc_sym_free(struct msc_sym *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nmods; i++) {
		module_close(s->mods[i]);
		free(s->mods[i]);
	}
	free(s->mods);
	free(s->pool);
	free(s->debug_path);
	free(s->cache_dir);
	free(s->cache.slots);
	msc_u64map_release(&s->files);
	msc_u64map_release(&s->origins);
	msc_u64map_release(&s->names);
	msc_strmap_release(&s->strings);
	msc_strmap_release(&s->mod_index);
	msc_arena_release(&s->arena);
	free(s);
}

int msc_sym_set_debug_path(struct msc_sym *s, const char *path)
{
	char *copy = NULL;

	if (!s)
		return -EINVAL;
	if (path) {
		copy = strdup(path);
		if (!copy)
			return -ENOMEM;
	}
	free(s->debug_path);
	s->debug_path = copy;
	return 0;
}

int msc_sym_add_module(struct msc_sym *s, const char *path,
		       const unsigned char *build_id, size_t build_id_len)
{
	static const char hex[] = "0123456789abcdef";
	struct module *m;
	char *key, *p;
	size_t i, plen;
	void *have;

	if (!s || !path)
		return -EINVAL;
	if (!build_id)
		build_id_len = 0;
	plen = strlen(path);
	/* The hex build-id has no ':', so the key names one (id, path). */
	key = msc_arena_alloc(&s->arena, 2 * build_id_len + 1 + plen + 1);
	if (!key)
		return -ENOMEM;
	for (p = key, i = 0; i < build_id_len; i++) {
		*p++ = hex[build_id[i] >> 4];
		*p++ = hex[build_id[i] & 15];
	}
	*p++ = ':';
	memcpy(p, path, plen + 1);
	have = msc_strmap_get(&s->mod_index, key);
	if (have)
		return (int)((uintptr_t)have - 1);

	if (MSC_GROW(s->mods, (size_t)s->nmods + 1, s->cap_mods, 16))
		return -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->path = p;
	if (build_id_len) {
		m->build_id = msc_arena_alloc(&s->arena, build_id_len);
		if (!m->build_id) {
			free(m);
			return -ENOMEM;
		}
		memcpy(m->build_id, build_id, build_id_len);
		m->build_id_len = build_id_len;
	}
	if (msc_strmap_put(&s->mod_index, key, (void *)(uintptr_t)(s->nmods + 1))) {
		free(m);
		return -ENOMEM;
	}
	s->mods[s->nmods] = m;
	return s->nmods++;
}

const char *msc_sym_module_status(struct msc_sym *s, int module)
{
	struct module *m = module_get(s, module);

	if (!m)
		return STATUS_BAD_INDEX;
	if (!m->opened && module_open(s, m))
		return "out of memory";
	return m->status;
}

int msc_sym_fn_start(struct msc_sym *s, int module, uint64_t addr, uint64_t *start)
{
	struct module *m = module_get(s, module);
	const struct range *r;

	if (!m || !start)
		return -EINVAL;
	if (!m->opened && module_open(s, m))
		return -ENOMEM;
	r = m->usable ? range_find(&m->syms, addr) : NULL;
	if (!r)
		return -ENOENT;
	*start = r->low;
	return 0;
}
