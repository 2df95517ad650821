/* SPDX-License-Identifier: MIT */
/*
 * The real functions behind the hooks: looked up once per session, before
 * recording starts, and the C++ operators' on first use.
 *
 * Preloaded, a real function is the next definition (dlsym(RTLD_NEXT));
 * attached, it is the one the program's own calls bind to (resolve_attached).
 * dlsym may allocate (old glibc, sanitizers), and its allocations come back
 * to our malloc before g_real.malloc is known: while g_real.resolving is
 * set, the hooks answer them from the boot pool (hooks.c).
 *
 * Owns g_real (the C++ operators' only when libstdc++ is there, else they
 * stay NULL), shim_real_dlclose, and the slow path of the dlclose hook (dlclose.S) for a
 * dlclose before anything else was looked up.
 */
#include <dlfcn.h>
#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <string.h>

#include "shim.h"

struct shim_real g_real;
int (*shim_real_dlclose)(void *);

/* Is p a definition (not a canonical PLT entry)?  *obj: the object it is in. */
static bool defined_at(void *p, const char **obj)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!p || !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
		return false;
	*obj = info.dli_fname;
	return sym->st_shndx != SHN_UNDEF;
}

/*
 * Attached (dlopen'ed, RTLD_LOCAL): the definition the program's own calls
 * bind to, a preloaded allocator's included.  RTLD_DEFAULT finds it, except
 * in a position-dependent executable that takes the function's address:
 * there the symbol is the executable's PLT entry (the "canonical" address
 * every module must agree on), which jumps through a GOT slot we patch,
 * back into our hook.  Then: the first object, in the global search order,
 * that defines it itself.
 */
/* name's definition (a function, not a reference to one) in the
 * module at base whose dynamic section is dyn, through its GNU hash
 * table; NULL if it has none (or no such table: every module a current
 * toolchain links has one). */
static void *elf_lookup(uintptr_t base, const ElfW(Dyn) *dyn, const char *name)
{
	const uint32_t *gh = NULL, *buckets, *chain;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	uint32_t h = 5381, nbuckets, symoffset, i;
	const unsigned char *c;

	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t v = shim_dyn_ptr(base, dyn->d_un.d_ptr);

		if (dyn->d_tag == DT_GNU_HASH)
			gh = (const uint32_t *)v;
		else if (dyn->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)v;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)v;
	}
	if (!gh || !symtab || !strtab || !gh[0])
		return NULL;
	for (c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	nbuckets = gh[0];
	symoffset = gh[1];
	buckets = gh + 4 + gh[2] * (sizeof(ElfW(Addr)) / 4);
	chain = buckets + nbuckets;
	i = buckets[h % nbuckets];
	if (i < symoffset)
		return NULL;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];
		const ElfW(Sym) *sym = &symtab[i];

		/* A function's (an IFUNC's value is its resolver). */
		if ((ch | 1) == (h | 1) && sym->st_shndx != SHN_UNDEF && sym->st_value &&
		    ELF64_ST_TYPE(sym->st_info) == STT_FUNC &&
		    strcmp(strtab + sym->st_name, name) == 0)
			return (void *)(base + sym->st_value);
		if (ch & 1)
			return NULL;
	}
}

struct scan {
	const char *name;
	uintptr_t self;
	void *found;
};

static int scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *sc = arg;
	int i;

	(void)size;
	/* Not the executable (its definitions are its own calls'), not us. */
	if (!info->dlpi_name || !info->dlpi_name[0] || info->dlpi_addr == sc->self)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
			sc->found = elf_lookup(info->dlpi_addr,
					       (const ElfW(Dyn) *)(info->dlpi_addr +
								   info->dlpi_phdr[i].p_vaddr),
					       sc->name);
			return sc->found != NULL;
		}
	return 0;
}

/*
 * The first loaded object, in load order, that defines name itself (not
 * us, not the executable); NULL if none does.  Objects loaded with
 * RTLD_LOCAL are among them.  Read from each object's own symbol table,
 * not through dlopen and dlsym: a dlopen, even RTLD_NOLOAD, made from a
 * hook inside a library's constructor (C++ libraries allocate there) runs
 * the constructors still pending, with our guard held, and what they
 * allocated went unrecorded (nm's LTO plugin: 1,900 "invalid" frees).
 */
static void *resolve_scan(const char *name)
{
	struct scan sc = { name, 0, NULL };
	Dl_info self;

	/* Us by our base (a static function has no symbol for dladdr1's
	 * RTLD_DL_SYMENT, and our name in the list may be spelt otherwise). */
	if (!dladdr((void *)resolve_scan, &self))
		return NULL;
	sc.self = (uintptr_t)self.dli_fbase;
	dl_iterate_phdr(scan_cb, &sc);
	return sc.found;
}

static void *resolve_attached(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name), *q;
	const char *obj;

	if (defined_at(p, &obj))
		return p;
	q = resolve_scan(name);
	return q ? q : p;
}

/* Is p defined in the object obj (a path dladdr gave)? */
static bool defined_in(void *p, const char *obj)
{
	const char *at;

	return obj && defined_at(p, &at) && !strcmp(at, obj);
}

/* Is p defined in libstdc++ (not in a library replacing its operators)? */
static bool in_libstdcxx(void *p)
{
	const char *obj;

	return defined_at(p, &obj) && strstr(obj, "/libstdc++.so");
}

/* Preloaded: the next definition.  Attached: see resolve_attached. */
static void *resolve_one(const char *name)
{
	return g_conf.attached ? resolve_attached(name) : dlsym(RTLD_NEXT, name);
}

#define RESOLVE(var, name) (*(void **)&(var) = resolve_one(name))

/*
 * The C++ operators may be in no scope we can search by name: a C program
 * that dlopens a C++ library has libstdc++ in that library's local scope,
 * where its calls of new still reach us (preloaded, we come first in the
 * global scope).  Then the definition in whatever object has one, as the
 * library's own lookup would have found it (else its new would be
 * new_fallback's malloc: recorded as malloc, and abort() for bad_alloc).
 */
static void *resolve_cxx_one(const char *name, bool *missed)
{
	void *p = resolve_one(name);

	if (p)
		return p;
	*missed = true;		/* its dlerror message left (forget_dlerror) */
	return resolve_scan(name);
}

#define RESOLVE_CXX(var, name) (*(void **)&(var) = resolve_cxx_one(name, &missed))

/*
 * A name our lookups did not find left an error message that dlsym
 * allocated while our hooks passed it through, unrecorded: the program's
 * dlerror() would free it later, a free of a block never seen.  Taken
 * and freed here (dlerror frees the message it returned at its next
 * call), as if the failed lookups had not been made.  Only then: with
 * every lookup found, what dlerror holds is the program's own.
 */
static void forget_dlerror(void)
{
	if (dlerror())
		dlerror();
}

void resolve_reals(void)
{
	const char *libc;

	g_real.resolving = 1;
	RESOLVE(g_real.malloc, "malloc");
	RESOLVE(g_real.free, "free");
	RESOLVE(g_real.calloc, "calloc");
	RESOLVE(g_real.realloc, "realloc");
	RESOLVE(g_real.posix_memalign, "posix_memalign");
	RESOLVE(g_real.aligned_alloc, "aligned_alloc");
	RESOLVE(g_real.memalign, "memalign");
	RESOLVE(g_real.valloc, "valloc");
	RESOLVE(g_real.pvalloc, "pvalloc");
	RESOLVE(g_real.mmap, "mmap");
	RESOLVE(g_real.munmap, "munmap");
	RESOLVE(g_real.mremap, "mremap");
	RESOLVE(g_real.brk, "brk");
	RESOLVE(g_real.sbrk, "sbrk");
	RESOLVE(g_real.exit, "exit");
	RESOLVE(g_real._exit, "_exit");
	RESOLVE(g_real._Exit, "_Exit");
	RESOLVE(g_real.execve, "execve");
	RESOLVE(g_real.execv, "execv");
	RESOLVE(g_real.execvp, "execvp");
	RESOLVE(g_real.execvpe, "execvpe");
	RESOLVE(g_real.fexecve, "fexecve");
	RESOLVE(g_real.execveat, "execveat");
	RESOLVE(shim_real_dlclose, "dlclose");
	RESOLVE(g_real.pthread_getattr_np, "pthread_getattr_np");
	RESOLVE(g_real.malloc_usable_size, "malloc_usable_size");
	/* Asked of realloc's blocks only when it is the same allocator's: a
	 * malloc of the program's own with glibc's malloc_usable_size would
	 * read what is not a chunk header. */
	{
		const char *at;

		if (!defined_at((void *)g_real.realloc, &at) ||
		    !defined_in((void *)g_real.malloc_usable_size, at))
			g_real.malloc_usable_size = NULL;
	}
	/* glibc's own?  (A malloc_debug or jemalloc preloaded, or linked,
	 * defines its own.) */
	if (!defined_at((void *)gnu_get_libc_version, &libc))
		libc = NULL;
	entry_routes(defined_in((void *)g_real.malloc, libc) &&
		     defined_in((void *)g_real.free, libc) &&
		     defined_in((void *)g_real.calloc, libc) &&
		     defined_in((void *)g_real.realloc, libc));
	g_real.resolving = 0;
}

/*
 * At the start, from the constructor: the C++ operators now, if the
 * program has them, rather than at its first new.  Every dlsym resets the
 * thread's dlerror() state, so lookups made inside a hook took away an
 * error the program had yet to read (dlsym failed, then a new, then
 * dlerror() said nothing).  A program that has none (C, which may dlopen
 * a C++ library later) is left to resolve_cxx at its first new.
 */
void resolve_cxx_early(void)
{
	/* Asked of the objects' own tables, which allocates nothing: a C
	 * program's heap is laid out as without us (a failed dlsym's message
	 * was a malloc and a free). */
	if (resolve_scan("_Znwm"))
		resolve_cxx();
}

void resolve_cxx(void)
{
	bool missed = false;

	guard_in();
	RESOLVE_CXX(g_real.new, "_Znwm");
	RESOLVE_CXX(g_real.new_arr, "_Znam");
	RESOLVE_CXX(g_real.new_nt, "_ZnwmRKSt9nothrow_t");
	RESOLVE_CXX(g_real.new_arr_nt, "_ZnamRKSt9nothrow_t");
	RESOLVE_CXX(g_real.new_al, "_ZnwmSt11align_val_t");
	RESOLVE_CXX(g_real.new_arr_al, "_ZnamSt11align_val_t");
	RESOLVE_CXX(g_real.new_al_nt, "_ZnwmSt11align_val_tRKSt9nothrow_t");
	RESOLVE_CXX(g_real.new_arr_al_nt, "_ZnamSt11align_val_tRKSt9nothrow_t");
	RESOLVE_CXX(g_real.delete, "_ZdlPv");
	RESOLVE_CXX(g_real.delete_arr, "_ZdaPv");
	RESOLVE_CXX(g_real.delete_al, "_ZdlPvSt11align_val_t");
	RESOLVE_CXX(g_real.delete_arr_al, "_ZdaPvSt11align_val_t");
	RESOLVE_CXX(g_real.get_new_handler, "_ZSt15get_new_handlerv");
	entry_cxx_routes(in_libstdcxx((void *)g_real.delete) &&
				 in_libstdcxx((void *)g_real.delete_arr),
			 g_real.get_new_handler && in_libstdcxx((void *)g_real.new),
			 in_libstdcxx((void *)g_real.new_arr));
	/* A program's own operator new may hand out objects it recycles,
	 * relying on what they held: its blocks are not emptied. */
	g_real.new_std = in_libstdcxx((void *)g_real.new) && in_libstdcxx((void *)g_real.new_arr);
	if (missed)
		forget_dlerror();
	__atomic_store_n(&g_real.cxx_resolved, true, __ATOMIC_RELEASE);
	guard_out();
}

/* dlclose is in dlclose.S: it must not add a frame of its own. */
int shim_dlclose_slow(void *handle)
{
	ensure_init();
	if (!shim_real_dlclose)
		RESOLVE(shim_real_dlclose, "dlclose");
	return shim_real_dlclose ? shim_real_dlclose(handle) : -1;
}
