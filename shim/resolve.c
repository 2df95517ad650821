/* SPDX-License-Identifier: MIT */
/*
 * The real functions behind the hooks: looked up once per session, before
 * recording starts, and the C++ operators' on first use.
 *
 * Preloaded, a real function is the next definition (dlsym(RTLD_NEXT));
 * attached, it is the one the program's own calls bind to (resolve_attached).
 * dlsym may allocate (old glibc, sanitizers), and its allocations come back
 * to our malloc before real_malloc is known: while `resolving` is set, the
 * hooks answer them from the boot pool (hooks.c).
 *
 * Owns real_* (the C++ operators' only when libstdc++ is there, else they
 * stay NULL), and the slow path of the dlclose hook (dlclose.S) for a
 * dlclose before anything else was looked up.
 */
#include <dlfcn.h>
#include <elf.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <string.h>

#include "shim.h"

void *(*real_malloc)(size_t);
void (*real_free)(void *);
void *(*real_calloc)(size_t, size_t);
void *(*real_realloc)(void *, size_t);
int (*real_posix_memalign)(void **, size_t, size_t);
void *(*real_aligned_alloc)(size_t, size_t);
void *(*real_memalign)(size_t, size_t);
void *(*real_valloc)(size_t);
void *(*real_pvalloc)(size_t);
void *(*real_mmap)(void *, size_t, int, int, int, off_t);
int (*real_munmap)(void *, size_t);
void *(*real_mremap)(void *, size_t, size_t, int, ...);
int (*real_brk)(void *);
void *(*real_sbrk)(intptr_t);
void (*real_exit)(int) __attribute__((noreturn));
void (*real__exit)(int) __attribute__((noreturn));
void (*real__Exit)(int) __attribute__((noreturn));
int (*shim_real_dlclose)(void *);

/* C++ operators, resolved when libstdc++ is there. */
void *(*real_new)(size_t);
void (*(*real_get_new_handler)(void))(void);
void *(*real_new_arr)(size_t);
void *(*real_new_nt)(size_t, const void *);
void *(*real_new_arr_nt)(size_t, const void *);
void *(*real_new_al)(size_t, size_t);
void *(*real_new_arr_al)(size_t, size_t);
void *(*real_new_al_nt)(size_t, size_t, const void *);
void *(*real_new_arr_al_nt)(size_t, size_t, const void *);
void (*real_delete)(void *);
void (*real_delete_arr)(void *);
void (*real_delete_al)(void *, size_t);
void (*real_delete_arr_al)(void *, size_t);
bool cxx_resolved;

volatile int resolving;

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
static void *resolve_attached(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name), *h;
	const char *obj, *self = "";
	struct link_map *lm = NULL;

	if (defined_at(p, &obj))
		return p;
	defined_at((void *)defined_at, &self);
	h = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm)
		return p;
	for (lm = lm->l_next; lm; lm = lm->l_next) {
		void *lh, *q;

		if (!lm->l_name[0] || !strcmp(lm->l_name, self))
			continue;
		/* A reference taken and given back; our own dlclose hook is
		 * not in the program's scope (we are RTLD_LOCAL), so this
		 * dlclose is libc's.  (dlsym on the link_map itself faults:
		 * a startup dependency has no search list of its own.) */
		lh = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
		q = lh ? dlsym(lh, name) : NULL;
		if (lh)
			dlclose(lh);
		if (defined_at(q, &obj) && !strcmp(obj, lm->l_name))
			return q;
	}
	return p;
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
#define RESOLVE(var, name) \
	(*(void **)&(var) = g_attached ? resolve_attached(name) : dlsym(RTLD_NEXT, name))

void resolve_reals(void)
{
	const char *libc;

	resolving = 1;
	RESOLVE(real_malloc, "malloc");
	RESOLVE(real_free, "free");
	RESOLVE(real_calloc, "calloc");
	RESOLVE(real_realloc, "realloc");
	RESOLVE(real_posix_memalign, "posix_memalign");
	RESOLVE(real_aligned_alloc, "aligned_alloc");
	RESOLVE(real_memalign, "memalign");
	RESOLVE(real_valloc, "valloc");
	RESOLVE(real_pvalloc, "pvalloc");
	RESOLVE(real_mmap, "mmap");
	RESOLVE(real_munmap, "munmap");
	RESOLVE(real_mremap, "mremap");
	RESOLVE(real_brk, "brk");
	RESOLVE(real_sbrk, "sbrk");
	RESOLVE(real_exit, "exit");
	RESOLVE(real__exit, "_exit");
	RESOLVE(real__Exit, "_Exit");
	RESOLVE(shim_real_dlclose, "dlclose");
	/* glibc's own?  (A malloc_debug or jemalloc preloaded, or linked,
	 * defines its own.) */
	if (!defined_at((void *)gnu_get_libc_version, &libc))
		libc = NULL;
	entry_routes(defined_in((void *)real_malloc, libc) && defined_in((void *)real_free, libc) &&
		     defined_in((void *)real_calloc, libc) && defined_in((void *)real_realloc, libc));
	resolving = 0;
}

void resolve_cxx(void)
{
	t_guard++;
	RESOLVE(real_new, "_Znwm");
	RESOLVE(real_new_arr, "_Znam");
	RESOLVE(real_new_nt, "_ZnwmRKSt9nothrow_t");
	RESOLVE(real_new_arr_nt, "_ZnamRKSt9nothrow_t");
	RESOLVE(real_new_al, "_ZnwmSt11align_val_t");
	RESOLVE(real_new_arr_al, "_ZnamSt11align_val_t");
	RESOLVE(real_new_al_nt, "_ZnwmSt11align_val_tRKSt9nothrow_t");
	RESOLVE(real_new_arr_al_nt, "_ZnamSt11align_val_tRKSt9nothrow_t");
	RESOLVE(real_delete, "_ZdlPv");
	RESOLVE(real_delete_arr, "_ZdaPv");
	RESOLVE(real_delete_al, "_ZdlPvSt11align_val_t");
	RESOLVE(real_delete_arr_al, "_ZdaPvSt11align_val_t");
	RESOLVE(real_get_new_handler, "_ZSt15get_new_handlerv");
	entry_cxx_routes(in_libstdcxx((void *)real_delete) && in_libstdcxx((void *)real_delete_arr),
			 real_get_new_handler && in_libstdcxx((void *)real_new),
			 in_libstdcxx((void *)real_new_arr));
	__atomic_store_n(&cxx_resolved, true, __ATOMIC_RELEASE);
	t_guard--;
}

/* dlclose is in dlclose.S: it must not add a frame of its own. */
int shim_dlclose_slow(void *handle)
{
	ensure_init();
	if (!shim_real_dlclose)
		RESOLVE(shim_real_dlclose, "dlclose");
	return shim_real_dlclose ? shim_real_dlclose(handle) : -1;
}
