/* SPDX-License-Identifier: MIT */
/*
 * What a module's ELF and DWARF say, read into sorted range tables on first
 * use: its function symbols, its compilation units, their subprograms and
 * the inlined subroutines of each.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hash.h"
#include "msc_sym.h"
#include "msc_util.h"
#include "sym_internal.h"

/* Namespaces and classes nest; deeper than this is not real code. */
#define MAX_SCAN_DEPTH 64

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

/* ---------------------------------------------------------------------- */
/* Symbol table */

struct symbol {
	const char *name;	/* raw, owned by libelf */
	int rank;		/* lower wins among symbols at one address */
	size_t order;		/* position in the ELF table: last tie-break */
	uint64_t addr, size;
};

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
int sym_load_symtab(struct module *m)
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
 * reading the ranges of every unit (libc has about two thousand) in every
 * recording whose stacks reach it (all of them: main's caller is there).  An address it does not cover (a unit without an entry: clang
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

void sym_cu_release(struct cu *cu)
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
int sym_find_subprogram(struct module *m, Dwarf_Addr a, struct cu **cu_out,
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
			sym_cu_release(cu);
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
