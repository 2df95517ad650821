/* SPDX-License-Identifier: MIT */
/*
 * msc_sym: offline symbolization of recorded instruction addresses.
 *
 * After the target ran, the collector knows each sampled address as
 * (module, address in the module's own ELF virtual address space).  This
 * module turns that into frames: function, source file and line, with one
 * extra frame per level of inlining, innermost first, as addr2line -f -i does.
 *
 * It is built on libdwfl, one Dwfl per module, and keeps the caches that make
 * libdw fast enough for hundreds of thousands of addresses (heaptrack's
 * interpret/dwarfdiecache.cpp does the same; libdw alone scans linearly
 * for each):
 *   - the ELF symbol table, FUNC/IFUNC symbols with a size, sorted by address
 *     (dwfl_module_addrinfo scans it linearly on every call);
 *   - the compilation units sorted by address range; per unit, scanned on
 *     first use, its DW_TAG_subprogram ranges (also those nested in
 *     namespaces, classes and functions, and DW_AT_ranges pieces);
 *   - per subprogram, on first use, its tree of DW_TAG_inlined_subroutine
 *     DIEs (through lexical blocks) flattened into a range table with parent
 *     links, names and call sites read once per node;
 *   - every resolved address, so resolving it again is one hash lookup.
 * The range tables answer "innermost range containing addr" with one binary
 * search over disjoint segments, however deep ranges nest.
 *
 * Names: the outermost (real) function's name comes from the symbol table when
 * a symbol covers the address, else from DWARF; inlined functions' names come
 * from DWARF (DW_AT_linkage_name, else DW_AT_name, following
 * DW_AT_abstract_origin/DW_AT_specification).  C++ names are demangled by
 * __cxa_demangle exactly as c++filt prints them: with parameter types (and
 * for template function instances with the return type), e.g.
 * "ns::Widget::grow(unsigned long)", "void* ns::twice<int>(int, unsigned
 * int*)", "foo(int) [clone .cold]".  Nothing is stripped.  Of several
 * symbols at one address the name shown is a global one before a weak one
 * before a local one, then the one with fewer leading underscores (malloc,
 * not __libc_malloc).  An inlined C++ function
 * without a DW_AT_linkage_name (g++ gives lambdas none) is named by its
 * unqualified DW_AT_name, e.g. "operator()".
 *
 * Debug info is searched the standard way (dwfl_standard_find_debuginfo):
 * inside the file, then /usr/lib/debug/.build-id/xx/yyyy.debug, then
 * .gnu_debuglink next to the file, in .debug/ and under /usr/lib/debug.
 * msc_sym_new() unsets DEBUGINFOD_URLS in the calling process: a debuginfod
 * download can stall for minutes, and memscope never uses the network.
 * A debug file with compressed sections is opened from a decompressed copy
 * in the cache directory (MEMSCOPE_CACHE, else $XDG_CACHE_HOME/memscope,
 * else ~/.cache/memscope; debug/<build-id>.debug), made the first time:
 * libdw would otherwise inflate it every time it opens it.
 *
 * Ownership: struct msc_sym owns every string it hands out (interned: equal
 * strings are the same pointer); they stay valid until msc_sym_free().
 * Failure: functions return 0 (or a count or index) or a negative errno;
 * nothing prints.  A module that cannot be read is not an error: it resolves
 * to frames without names, and msc_sym_module_status() says why.
 * Not thread-safe: use one struct msc_sym per thread.
 */
#ifndef MSC_SYM_H
#define MSC_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct msc_sym;

struct msc_sym_frame {
	const char *fn;		/* function, C++ demangled; NULL if unknown */
	const char *file;	/* source file as recorded in DWARF, joined to
				 * DW_AT_comp_dir when that is absolute (Debian's
				 * libraries record "."); NULL if unknown */
	unsigned line;		/* 0 if unknown */
	bool inlined;		/* this frame was inlined into the next one */
};

/*
 * The most frames one address resolves to (an out array this large gets them
 * all); of a deeper inline nesting the outermost levels but the real function
 * are left out.
 */
#define MSC_SYM_MAX_FRAMES 64

/* Returns a new, empty symbolizer, or NULL (errno ENOMEM). */
struct msc_sym *msc_sym_new(void);
/* Closes every module and frees every string handed out.  NULL is a no-op. */
void msc_sym_free(struct msc_sym *s);

/*
 * Sets where separate debug info is searched, in libdwfl's debuginfo_path
 * syntax: a ':'-separated list; an absolute directory D is searched for
 * D/.build-id/xx/yyyy.debug and D/<dir of the file>/<debuglink>, a relative
 * one (".debug", "") next to the file; a leading '-' skips the CRC check of
 * .gnu_debuglink files.  NULL restores the default, ":.debug:/usr/lib/debug".
 * Applies to modules opened afterwards (opening happens at the first resolve
 * or status call), so call it before those.  Returns 0, -EINVAL for a NULL s,
 * or -ENOMEM.
 */
int msc_sym_set_debug_path(struct msc_sym *s, const char *path);

/*
 * Registers a module (an ELF file the target mapped: executable or shared
 * library) by the path the target saw.  build_id (may be NULL/0 bytes) is the
 * GNU build-id the target had in memory: it finds separate debug info and
 * detects that the file on disk changed since the recording (then the module
 * gives no names nor source info at all, since they would be those of another
 * build, and msc_sym_module_status() says so).  Registering the same path and
 * build-id again returns the same index.  Nothing is read until the module is
 * first resolved.  Returns the index (>= 0), -EINVAL for a NULL path, or
 * -ENOMEM.
 */
int msc_sym_add_module(struct msc_sym *s, const char *path,
		       const unsigned char *build_id, size_t build_id_len);

/*
 * Resolves addr, an address in the module's ELF virtual address space (the
 * target's ip minus the module's load bias, dlpi_addr; for ET_EXEC files the
 * ip itself).  Callers pass ip-1 for return addresses, so that the address
 * lies inside the call instruction.
 *
 * Writes up to max frames to out, innermost first: the innermost inlined
 * function (inlined = true), its callers, and last the real out-of-line
 * function (inlined = false).  Each frame's line is the line executing in
 * that function: the line of addr for the first frame, the call site
 * (DW_AT_call_file/DW_AT_call_line) for the others.  When the chain is longer
 * than max, the innermost max frames are written.  When nothing is known the
 * result is one frame with fn and file NULL and line 0.
 *
 * Returns the number of frames written (>= 1), -EINVAL for a bad module
 * index, NULL out or max < 1, or -ENOMEM.  The first resolve of a module
 * opens it and reads its symbol table; the first address in a compilation
 * unit scans that unit, the first in a function that function's inline tree;
 * a repeated address is one hash lookup.
 */
int msc_sym_resolve(struct msc_sym *s, int module, uint64_t addr,
		    struct msc_sym_frame *out, int max);

/*
 * The start of the symbol-table function covering addr (same address space
 * as msc_sym_resolve), for naming a place without a line as function+offset.
 * Returns 0, -ENOENT when no function symbol covers addr (or the module is
 * unusable), -EINVAL or -ENOMEM.
 */
int msc_sym_fn_start(struct msc_sym *s, int module, uint64_t addr, uint64_t *start);

/*
 * Says why a module gives no source info, for a one-time warning: NULL when
 * it has debug info, else "no debug info" (names may still come from the
 * symbol table), "cannot open: <strerror>", "cannot read ELF: <libdwfl
 * message>", "file changed since recording (build-id mismatch)", "invalid
 * module index" or "out of memory" (opening failed; a later call tries
 * again).  Opens the module if no resolve did yet.  The string is owned by
 * s (or static).
 */
const char *msc_sym_module_status(struct msc_sym *s, int module);

#endif
