/* SPDX-License-Identifier: MIT */
/*
 * msc_allocfns: the prefixed APIs of jemalloc, mimalloc and tcmalloc that
 * the shim hooks without being asked (its built-in hooks), and what each
 * function does to the heap.  Header only, no allocation, no libc: the shim
 * patches the GOT entries that call these names (attach.c) and records
 * through this table (hooks.c); libmsc names the blocks and knows their
 * families through it (msc_fn_name, msc_fn_family).
 *
 * Function codes: entry i of the table is allocation function
 * MSC_FN_BUILTIN + i, in the flags of ALLOC and FREE events, and its name is
 * the record's `fn` ("mallocx", "mi_zalloc", "tc_newarray"...).  Codes stay
 * between the shim and ms-record of one build; streams carry names.
 *
 * Arguments are numbered from 1, as in msc_hookspec.h: six integer and
 * pointer registers, which every function here fits in.
 */
#ifndef MSC_ALLOCFNS_H
#define MSC_ALLOCFNS_H

#include <stdint.h>

#define MSC_FN_BUILTIN 32u	/* the first built-in function's code */

enum msc_afn_kind {
	MSC_AFN_ALLOC = 1,	/* returns a block of size (x n) bytes */
	MSC_AFN_ALLOC_OUT,	/* returns 0 and stores the block at *ptr (posix_memalign) */
	MSC_AFN_STRDUP,		/* returns a copy of a string: strlen + 1 bytes;
				 * none when argument `nul` is not NULL (realpath) */
	MSC_AFN_WCSDUP,		/* the same for a wchar_t string */
	MSC_AFN_DUPENV,		/* returns 0 and stores a string's copy at *ptr */
	MSC_AFN_WDUPENV,	/* the same, wchar_t */
	MSC_AFN_FREE,		/* ptr's block ends */
	MSC_AFN_REALLOC,	/* ptr's block ends, the returned one has size (x n)
				 * bytes; a failure keeps ptr's */
	MSC_AFN_REALLOCF,	/* the same, but a failure frees ptr's (BSD reallocf) */
	MSC_AFN_REALLOCARR,	/* *ptr's block ends, *ptr is then one of n x size
				 * bytes; returns 0, or an error and keeps it */
	MSC_AFN_EXPAND,		/* resizes ptr's block in place to size: returns it,
				 * or NULL when it cannot */
	MSC_AFN_XALLOCX,	/* jemalloc's xallocx(ptr, size, extra, flags): resizes
				 * in place, returns the usable size, size or more
				 * when it could */
	MSC_AFN_HEAP_DESTROY,	/* mi_heap_destroy(heap): frees every block of heap */
};

struct msc_allocfn {
	const char *name;
	uint8_t kind;		/* enum msc_afn_kind */
	uint8_t family;		/* as msc_fn_family(): 1 malloc, 2 new, 3 new[], 0 any */
	uint8_t ptr, size, n;	/* the arguments: 1-based, 0 = none */
	uint8_t nul;		/* STRDUP: an argument that must be NULL */
	uint8_t throws;		/* may throw (std::bad_alloc): the shim's guard is
				 * not held across the call */
};

#define MSC_AFN_A(nm, sz) { nm, MSC_AFN_ALLOC, 1, 0, sz, 0, 0, 0 }
#define MSC_AFN_AN(nm, cnt, sz) { nm, MSC_AFN_ALLOC, 1, 0, sz, cnt, 0, 0 }
#define MSC_AFN_F(nm, p) { nm, MSC_AFN_FREE, 1, p, 0, 0, 0, 0 }
#define MSC_AFN_R(nm, p, sz) { nm, MSC_AFN_REALLOC, 1, p, sz, 0, 0, 0 }
#define MSC_AFN_RN(nm, p, cnt, sz) { nm, MSC_AFN_REALLOC, 1, p, sz, cnt, 0, 0 }
#define MSC_AFN_OUT(nm, p, sz) { nm, MSC_AFN_ALLOC_OUT, 1, p, sz, 0, 0, 0 }
#define MSC_AFN_NEW(nm, fam, sz) { nm, MSC_AFN_ALLOC, fam, 0, sz, 0, 0, 1 }
#define MSC_AFN_DEL(nm, fam) { nm, MSC_AFN_FREE, fam, 1, 0, 0, 0, 0 }

/* The number of built-in functions; the shim has a trampoline for each. */
#define MSC_NALLOCFNS 134u

/*
 * Entry i of the table, or NULL past its end.  The order is the codes':
 * append, never reorder within a build's shim and collector (they come
 * together).
 */
static inline const struct msc_allocfn *msc_allocfn(unsigned i)
{
	static const struct msc_allocfn fns[] = {
		/* jemalloc's non-standard API (libjemalloc2 has no prefix). */
		MSC_AFN_A("mallocx", 1),
		MSC_AFN_R("rallocx", 1, 2),
		{ "xallocx", MSC_AFN_XALLOCX, 1, 1, 2, 3, 0, 0 },	/* n: extra */
		MSC_AFN_F("dallocx", 1),
		MSC_AFN_F("sdallocx", 1),
		/* A jemalloc built with --with-jemalloc-prefix=je_. */
		MSC_AFN_A("je_malloc", 1),
		MSC_AFN_AN("je_calloc", 1, 2),
		MSC_AFN_R("je_realloc", 1, 2),
		MSC_AFN_F("je_free", 1),
		MSC_AFN_OUT("je_posix_memalign", 1, 3),
		MSC_AFN_A("je_aligned_alloc", 2),
		MSC_AFN_A("je_memalign", 2),
		MSC_AFN_A("je_valloc", 1),
		MSC_AFN_A("je_mallocx", 1),
		MSC_AFN_R("je_rallocx", 1, 2),
		{ "je_xallocx", MSC_AFN_XALLOCX, 1, 1, 2, 3, 0, 0 },
		MSC_AFN_F("je_dallocx", 1),
		MSC_AFN_F("je_sdallocx", 1),
		/* mimalloc (libmimalloc2.0's exports that allocate or free). */
		MSC_AFN_A("mi_malloc", 1),
		MSC_AFN_A("mi_zalloc", 1),
		MSC_AFN_AN("mi_calloc", 1, 2),
		MSC_AFN_AN("mi_mallocn", 1, 2),
		MSC_AFN_A("mi_malloc_small", 1),
		MSC_AFN_A("mi_zalloc_small", 1),
		MSC_AFN_A("mi_malloc_aligned", 1),
		MSC_AFN_A("mi_malloc_aligned_at", 1),
		MSC_AFN_A("mi_zalloc_aligned", 1),
		MSC_AFN_A("mi_zalloc_aligned_at", 1),
		MSC_AFN_AN("mi_calloc_aligned", 1, 2),
		MSC_AFN_AN("mi_calloc_aligned_at", 1, 2),
		MSC_AFN_OUT("mi_posix_memalign", 1, 3),
		MSC_AFN_A("mi_memalign", 2),
		MSC_AFN_A("mi_aligned_alloc", 2),
		MSC_AFN_A("mi_valloc", 1),
		MSC_AFN_A("mi_pvalloc", 1),
		MSC_AFN_R("mi_realloc", 1, 2),
		MSC_AFN_RN("mi_reallocn", 1, 2, 3),
		MSC_AFN_RN("mi_reallocarray", 1, 2, 3),
		{ "mi_reallocf", MSC_AFN_REALLOCF, 1, 1, 2, 0, 0, 0 },
		{ "mi_reallocarr", MSC_AFN_REALLOCARR, 1, 1, 3, 2, 0, 0 },
		MSC_AFN_R("mi_rezalloc", 1, 2),
		MSC_AFN_RN("mi_recalloc", 1, 2, 3),
		MSC_AFN_R("mi_realloc_aligned", 1, 2),
		MSC_AFN_R("mi_realloc_aligned_at", 1, 2),
		MSC_AFN_R("mi_rezalloc_aligned", 1, 2),
		MSC_AFN_R("mi_rezalloc_aligned_at", 1, 2),
		MSC_AFN_RN("mi_recalloc_aligned", 1, 2, 3),
		MSC_AFN_RN("mi_recalloc_aligned_at", 1, 2, 3),
		MSC_AFN_RN("mi_aligned_recalloc", 1, 2, 3),
		MSC_AFN_RN("mi_aligned_offset_recalloc", 1, 2, 3),
		{ "mi_expand", MSC_AFN_EXPAND, 1, 1, 2, 0, 0, 0 },
		{ "mi__expand", MSC_AFN_EXPAND, 1, 1, 2, 0, 0, 0 },
		{ "mi_strdup", MSC_AFN_STRDUP, 1, 0, 0, 0, 0, 0 },
		{ "mi_strndup", MSC_AFN_STRDUP, 1, 0, 0, 0, 0, 0 },
		{ "mi_mbsdup", MSC_AFN_STRDUP, 1, 0, 0, 0, 0, 0 },
		{ "mi_wcsdup", MSC_AFN_WCSDUP, 1, 0, 0, 0, 0, 0 },
		{ "mi_realpath", MSC_AFN_STRDUP, 1, 0, 0, 0, 2, 0 },
		{ "mi_dupenv_s", MSC_AFN_DUPENV, 1, 1, 0, 0, 0, 0 },
		{ "mi_wdupenv_s", MSC_AFN_WDUPENV, 1, 1, 0, 0, 0, 0 },
		MSC_AFN_F("mi_free", 1),
		MSC_AFN_F("mi_cfree", 1),
		MSC_AFN_F("mi_free_size", 1),
		MSC_AFN_F("mi_free_aligned", 1),
		MSC_AFN_F("mi_free_size_aligned", 1),
		/* mimalloc's operator new stand-ins: their blocks go to
		 * mi_free (mimalloc-new-delete.h does so), hence no family. */
		MSC_AFN_NEW("mi_new", 0, 1),
		MSC_AFN_NEW("mi_new_aligned", 0, 1),
		{ "mi_new_n", MSC_AFN_ALLOC, 0, 0, 2, 1, 0, 1 },
		{ "mi_new_nothrow", MSC_AFN_ALLOC, 0, 0, 1, 0, 0, 0 },
		{ "mi_new_aligned_nothrow", MSC_AFN_ALLOC, 0, 0, 1, 0, 0, 0 },
		{ "mi_new_realloc", MSC_AFN_REALLOC, 0, 1, 2, 0, 0, 1 },
		{ "mi_new_reallocn", MSC_AFN_REALLOC, 0, 1, 3, 2, 0, 1 },
		/* mimalloc's heaps: the heap first. */
		MSC_AFN_A("mi_heap_malloc", 2),
		MSC_AFN_A("mi_heap_zalloc", 2),
		MSC_AFN_AN("mi_heap_calloc", 2, 3),
		MSC_AFN_AN("mi_heap_mallocn", 2, 3),
		MSC_AFN_A("mi_heap_malloc_small", 2),
		MSC_AFN_A("mi_heap_malloc_aligned", 2),
		MSC_AFN_A("mi_heap_malloc_aligned_at", 2),
		MSC_AFN_A("mi_heap_zalloc_aligned", 2),
		MSC_AFN_A("mi_heap_zalloc_aligned_at", 2),
		MSC_AFN_AN("mi_heap_calloc_aligned", 2, 3),
		MSC_AFN_AN("mi_heap_calloc_aligned_at", 2, 3),
		MSC_AFN_R("mi_heap_realloc", 2, 3),
		MSC_AFN_RN("mi_heap_reallocn", 2, 3, 4),
		{ "mi_heap_reallocf", MSC_AFN_REALLOCF, 1, 2, 3, 0, 0, 0 },
		MSC_AFN_R("mi_heap_rezalloc", 2, 3),
		MSC_AFN_RN("mi_heap_recalloc", 2, 3, 4),
		MSC_AFN_R("mi_heap_realloc_aligned", 2, 3),
		MSC_AFN_R("mi_heap_realloc_aligned_at", 2, 3),
		MSC_AFN_R("mi_heap_rezalloc_aligned", 2, 3),
		MSC_AFN_R("mi_heap_rezalloc_aligned_at", 2, 3),
		MSC_AFN_RN("mi_heap_recalloc_aligned", 2, 3, 4),
		MSC_AFN_RN("mi_heap_recalloc_aligned_at", 2, 3, 4),
		{ "mi_heap_strdup", MSC_AFN_STRDUP, 1, 0, 0, 0, 0, 0 },
		{ "mi_heap_strndup", MSC_AFN_STRDUP, 1, 0, 0, 0, 0, 0 },
		{ "mi_heap_realpath", MSC_AFN_STRDUP, 1, 0, 0, 0, 3, 0 },
		MSC_AFN_NEW("mi_heap_alloc_new", 0, 2),
		{ "mi_heap_alloc_new_n", MSC_AFN_ALLOC, 0, 0, 3, 2, 0, 1 },
		{ "mi_heap_destroy", MSC_AFN_HEAP_DESTROY, 0, 1, 0, 0, 0, 0 },
		/* mimalloc's unprefixed extras, which glibc does not have. */
		{ "reallocf", MSC_AFN_REALLOCF, 1, 1, 2, 0, 0, 0 },
		{ "reallocarr", MSC_AFN_REALLOCARR, 1, 1, 3, 2, 0, 0 },
		MSC_AFN_F("cfree", 1),
		MSC_AFN_F("vfree", 1),
		/* tcmalloc (libtcmalloc_minimal.so.4's tc_ functions). */
		MSC_AFN_A("tc_malloc", 1),
		MSC_AFN_A("tc_malloc_skip_new_handler", 1),
		MSC_AFN_AN("tc_calloc", 1, 2),
		MSC_AFN_R("tc_realloc", 1, 2),
		MSC_AFN_A("tc_memalign", 2),
		MSC_AFN_OUT("tc_posix_memalign", 1, 3),
		MSC_AFN_A("tc_valloc", 1),
		MSC_AFN_A("tc_pvalloc", 1),
		MSC_AFN_F("tc_free", 1),
		MSC_AFN_F("tc_free_sized", 1),
		MSC_AFN_F("tc_cfree", 1),
		MSC_AFN_NEW("tc_new", 2, 1),
		MSC_AFN_NEW("tc_new_aligned", 2, 1),
		{ "tc_new_nothrow", MSC_AFN_ALLOC, 2, 0, 1, 0, 0, 0 },
		{ "tc_new_aligned_nothrow", MSC_AFN_ALLOC, 2, 0, 1, 0, 0, 0 },
		MSC_AFN_NEW("tc_newarray", 3, 1),
		MSC_AFN_NEW("tc_newarray_aligned", 3, 1),
		{ "tc_newarray_nothrow", MSC_AFN_ALLOC, 3, 0, 1, 0, 0, 0 },
		{ "tc_newarray_aligned_nothrow", MSC_AFN_ALLOC, 3, 0, 1, 0, 0, 0 },
		MSC_AFN_DEL("tc_delete", 2),
		MSC_AFN_DEL("tc_delete_sized", 2),
		MSC_AFN_DEL("tc_delete_aligned", 2),
		MSC_AFN_DEL("tc_delete_sized_aligned", 2),
		MSC_AFN_DEL("tc_delete_nothrow", 2),
		MSC_AFN_DEL("tc_delete_aligned_nothrow", 2),
		MSC_AFN_DEL("tc_deletearray", 3),
		MSC_AFN_DEL("tc_deletearray_sized", 3),
		MSC_AFN_DEL("tc_deletearray_aligned", 3),
		MSC_AFN_DEL("tc_deletearray_sized_aligned", 3),
		MSC_AFN_DEL("tc_deletearray_nothrow", 3),
		MSC_AFN_DEL("tc_deletearray_aligned_nothrow", 3),
	};

	_Static_assert(sizeof(fns) / sizeof(fns[0]) == MSC_NALLOCFNS, "MSC_NALLOCFNS: the table's size");
	_Static_assert(MSC_FN_BUILTIN + MSC_NALLOCFNS <= 256, "codes fit an event's 8 flag bits");
	return i < MSC_NALLOCFNS ? &fns[i] : 0;
}

#endif
