/* SPDX-License-Identifier: MIT */
/*
 * GOT patching: the resolved relocation slots (GOT entries: JUMP_SLOT,
 * GLOB_DAT and absolute ones) that name an allocation function, in every
 * loaded module but this library, the dynamic loader and the vdso, are
 * rewritten to point at our hooks, and written back later.
 *
 * It serves attach mode (attach.c: LD_PRELOAD is too late there): libc's
 * own slots are among those patched, which is how strdup, getline or
 * fopen are seen; the real functions are those the program's calls bound
 * to (dlsym(RTLD_DEFAULT)), a preloaded allocator's included.  Slots in
 * RELRO are made writable for the store and read-only again; an aligned
 * 8-byte store is atomic, so a thread calls either the old target or ours.
 * dlopen is hooked the same way, to patch what it loads.  Not reached:
 * calls inside a module to an allocator it defines itself (a statically
 * linked jemalloc), and function pointers read before the patching.
 *
 * It serves ms-record --hook (shim_hooks_install), in launch mode: the
 * slots that name a hooked function get its trampoline (custom.c), and
 * dlopen's get hook_dlopen, so that what is loaded later is patched too.
 * A hooked function is reached the same way, and as little: calls from
 * inside the library that defines it (or from code that took its address)
 * are not seen.
 *
 * And it serves the built-in hooks, in both modes: the slots that name
 * one of msc_allocfns.h's functions (mallocx, mi_malloc, tc_new...) in a
 * module that imports it get that function's trampoline (custom.c).
 *
 * No function here takes a lock a hook could hold, nor allocates through
 * malloc.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

/* What our exported hooks are called; their addresses are looked up in
 * this library (a reference from here would bind to libc's). */
static const char *const hooked[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "mmap", "mmap64", "munmap",
	"mremap", "brk", "sbrk",
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
	"_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
	"_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
	"_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
	"_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t",
	"_ZdaPvmSt11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
	"_ZdaPvSt11align_val_tRKSt9nothrow_t",
	/* aslimit.c: a limit the program sets on its address space */
	"setrlimit", "setrlimit64", "getrlimit", "getrlimit64", "prlimit", "prlimit64",
	"pthread_getattr_np",	/* threads.c: not a hook, a guard */
	"dlopen",
};
#define NHOOKED (sizeof(hooked) / sizeof(hooked[0]))

static uint64_t hook_addr[NHOOKED];
/* The built-in hooks: each function's trampoline, and whether any GOT
 * entry called it. */
static uint64_t afn_addr[MSC_NALLOCFNS];
static bool afn_ready, afn_patched;
/* --hook: each slot's trampoline, and how many GOT entries hold it. */
static uint64_t ghook_addr[MSC_HOOK_MAX];
static unsigned ghook_patched[MSC_HOOK_MAX];
static void *(*real_dlopen)(const char *, int);
static uintptr_t self_base;

/* Every slot we wrote: where, what it held, what we put. */
struct patch {
	uint64_t *slot;
	uint64_t orig, hook;
	bool relro;
};

static struct patch *patches;
static size_t npatches, cap_patches;
static int patch_lock;			/* patching runs on attach and after dlopen */

static void lock(void)
{
	while (__atomic_exchange_n(&patch_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(void)
{
	__atomic_store_n(&patch_lock, 0, __ATOMIC_RELEASE);
}

static bool add_patch(uint64_t *slot, uint64_t orig, uint64_t hook, bool relro)
{
	if (npatches == cap_patches) {
		size_t cap = cap_patches ? cap_patches * 2 : 256;
		struct patch *p = mmap(NULL, cap * sizeof(*p), PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return false;
		if (patches) {
			memcpy(p, patches, npatches * sizeof(*p));
			munmap(patches, cap_patches * sizeof(*p));
		}
		patches = p;
		cap_patches = cap;
	}
	patches[npatches++] = (struct patch){ slot, orig, hook, relro };
	return true;
}

/* Writes an 8-byte slot, through a read-only RELRO page if need be. */
static bool store_slot(uint64_t *slot, uint64_t value, bool relro)
{
	uintptr_t page = (uintptr_t)slot & ~(uintptr_t)4095;

	if (relro && mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) != 0)
		return false;
	__atomic_store_n(slot, value, __ATOMIC_RELEASE);
	if (relro)
		mprotect((void *)page, 4096, PROT_READ);
	return true;
}

/* Slots are written (patch_all) only between an attach (or the launch's
 * install) and a detach: a dlopen that returns after the detach must not
 * put the hooks back. */
static bool patching_on;

/*
 * The names patch_relas looks for, ours (hooked), --hook's and the
 * built-in functions', by a hash of the name: it asks about every symbol every
 * module imports, thousands in a large library (libsqlite3's sqlite3_*,
 * libstdc++'s _Z*), where a compare with each of the 175 names cost
 * sqlite3's start 17.8M instructions (534,000 strcmp calls).  A bit per
 * hash of a name's first three characters turns nearly all the others
 * away before the name is hashed; a name longer than all of ours is not
 * hashed to its end.  Filled once, by names_prepare, before the first
 * patch.
 */
#define NAME_SLOTS 512			/* a power of 2, > 2 * the names */

struct name_slot {
	const char *name;		/* NULL: free */
	uint32_t hash;
	int16_t hook, ghook, afn;	/* index in hooked, g_conf.hooks, msc_allocfn; or -1 */
};

static struct name_slot names[NAME_SLOTS];
static uint64_t name_starts[64];	/* 4096 bits */
static size_t name_len_max;		/* the longest name's */
static bool names_ready;

_Static_assert(NAME_SLOTS >= 2 * (NHOOKED + MSC_HOOK_MAX + MSC_NALLOCFNS),
	       "the name table is too full");

static inline unsigned name_start(const char *s)
{
	unsigned a = (unsigned char)s[0], b = a ? (unsigned char)s[1] : 0,
		 c = b ? (unsigned char)s[2] : 0;

	return ((a * 0x9e5u) ^ (b * 0x2f1u) ^ (c * 0x1c7u) ^ (a >> 3)) & 4095;
}

/* FNV-1a; false if the name is longer than max. */
static inline bool name_hash(const char *s, size_t max, uint32_t *out)
{
	uint32_t h = 2166136261u;
	size_t n;

	for (n = 0; s[n]; n++) {
		if (n == max)
			return false;
		h = (h ^ (unsigned char)s[n]) * 16777619u;
	}
	*out = h;
	return true;
}

static struct name_slot *name_slot(const char *name, uint32_t h)
{
	unsigned i = h & (NAME_SLOTS - 1);

	while (names[i].name && (names[i].hash != h || strcmp(names[i].name, name) != 0))
		i = (i + 1) & (NAME_SLOTS - 1);
	return &names[i];
}

static void name_add(const char *name, int hook, int ghook, int afn)
{
	struct name_slot *e;
	unsigned k = name_start(name);
	uint32_t h;

	name_hash(name, SIZE_MAX, &h);
	if (strlen(name) > name_len_max)
		name_len_max = strlen(name);
	e = name_slot(name, h);
	if (!e->name)
		*e = (struct name_slot){ name, h, -1, -1, -1 };
	if (hook >= 0)
		e->hook = (int16_t)hook;
	if (ghook >= 0)
		e->ghook = (int16_t)ghook;
	if (afn >= 0)
		e->afn = (int16_t)afn;
	name_starts[k >> 6] |= 1ull << (k & 63);
}

/* Once the --hook specs are parsed (none when attached). */
static void names_prepare(void)
{
	unsigned i;

	if (names_ready)
		return;
	for (i = 0; i < NHOOKED; i++)
		name_add(hooked[i], (int)i, -1, -1);
	for (i = 0; i < g_conf.nhooks; i++)
		name_add(g_conf.hooks[i].name, -1, (int)i, -1);
	for (i = 0; i < MSC_NALLOCFNS; i++)
		name_add(msc_allocfn(i)->name, -1, -1, (int)i);
	names_ready = true;
}

/* The table's entry for name, or NULL. */
static const struct name_slot *name_find(const char *name)
{
	unsigned k = name_start(name);
	const struct name_slot *e;
	uint32_t h;

	if (!(name_starts[k >> 6] & (1ull << (k & 63))) || !name_hash(name, name_len_max, &h))
		return NULL;
	e = name_slot(name, h);
	return e->name ? e : NULL;
}

/* Makes the built-in hooks' trampolines known to patch_relas, and the
 * names it looks for. */
static void afn_prepare(void)
{
	unsigned i;

	names_prepare();
	for (i = 0; i < MSC_NALLOCFNS; i++)
		afn_addr[i] = shim_afn_trampoline(i);
	afn_ready = true;
}

struct dyn {
	const Elf64_Sym *symtab;
	const char *strtab;
	uint64_t strsz;
	const Elf64_Rela *rela, *jmprel;
	uint64_t relasz, jmprelsz;
	bool pltrel_rela;
};

/* Does the hook of hooked[k] release memory?  (free, delete, munmap) */
static bool hooked_releases(int k)
{
	const char *n = hooked[k];

	return !strcmp(n, "free") || !strncmp(n, "_Zd", 3) || !strcmp(n, "munmap");
}

/*
 * Writes the slots of one pass: the releasing functions' (frees) or all
 * the others'.  While slots are written one by one, the threads run on: a
 * free recorded through a slot already ours, then a malloc of the same
 * address through one not yet ours, then its free recorded, would be a
 * double free that never was.  The allocators' slots go first, so that
 * meanwhile a block is at worst seen allocated and not freed.
 */
static void patch_relas(uintptr_t base, const struct dyn *d, const Elf64_Rela *r, uint64_t size,
			uint64_t relro_lo, uint64_t relro_hi, bool frees)
{
	const Elf64_Rela *end = (const Elf64_Rela *)((const char *)r + size);

	for (; r < end; r++) {
		unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
		const struct name_slot *e;
		const Elf64_Sym *sym;
		uint64_t *slot, cur, want;
		int k;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
		    !(type == R_X86_64_64 && r->r_addend == 0))
			continue;
		sym = &d->symtab[ELF64_R_SYM(r->r_info)];
		if (!ELF64_R_SYM(r->r_info) || sym->st_name >= d->strsz)
			continue;
		e = name_find(d->strtab + sym->st_name);
		k = e ? e->hook : -1;
		slot = (uint64_t *)(base + r->r_offset);
		if (k >= 0 && hook_addr[k]) {
			if (hooked_releases(k) != frees)
				continue;
			want = hook_addr[k];
		} else if (e && (k = e->ghook) >= 0) {
			if (frees)
				continue;
			want = ghook_addr[k];
			cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
			if (!cur || cur == want)
				continue;
			/*
			 * What the program's calls reach: the definition the
			 * loader binds them to.  A name only a library loaded
			 * with RTLD_LOCAL defines is not in the global scope:
			 * its entry's value then, resolved (BIND_NOW) or the
			 * lazy stub, which still finds the function.
			 */
			if (!g_conf.hook_real[k]) {
				void *real = dlsym(RTLD_DEFAULT, g_conf.hooks[k].name);

				__atomic_store_n(&g_conf.hook_real[k],
						 real ? (uint64_t)(uintptr_t)real : cur, __ATOMIC_RELEASE);
			}
			ghook_patched[k]++;
		} else if (afn_ready && e && (k = e->afn) >= 0) {
			/* Never in the allocator that defines it: its own
			 * calls are its inside. */
			if (sym->st_shndx != SHN_UNDEF || (msc_allocfn(k)->kind == MSC_AFN_FREE) != frees)
				continue;
			want = afn_addr[k];
			cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
			if (!cur || cur == want)
				continue;
			/* As for --hook: the global definition, else the
			 * entry's (resolved, or the lazy stub). */
			if (!g_conf.afn_real[k]) {
				void *real = dlsym(RTLD_DEFAULT, msc_allocfn(k)->name);

				__atomic_store_n(&g_conf.afn_real[k],
						 real ? (uint64_t)(uintptr_t)real : cur, __ATOMIC_RELEASE);
			}
			afn_patched = true;
		} else {
			continue;
		}
		cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (cur == want || !cur)
			continue;
		{
			bool relro = (uint64_t)(uintptr_t)slot >= relro_lo &&
				     (uint64_t)(uintptr_t)slot < relro_hi;

			if (!add_patch(slot, cur, want, relro))
				return;
			store_slot(slot, want, relro);
		}
	}
}

static int patch_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base_name = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	const Elf64_Dyn *dyn = NULL;
	uint64_t relro_lo = 0, relro_hi = 0;
	struct dyn d = { 0 };
	int i;

	bool frees = arg != NULL;

	(void)size;
	if (info->dlpi_addr == self_base || strncmp(base_name, "ld-linux", 8) == 0 ||
	    strncmp(base_name, "ld-musl", 7) == 0 || strncmp(base_name, "linux-vdso", 10) == 0 ||
	    strncmp(base_name, "linux-gate", 10) == 0)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const Elf64_Dyn *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			relro_lo = (info->dlpi_addr + ph->p_vaddr) & ~(uint64_t)4095;
			/* As the loader protects it: whole pages only. */
			relro_hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(uint64_t)4095;
		}
	}
	/* The vdso by its look, whatever its name. */
	if (!dyn || (!name[0] && info->dlpi_addr && getauxval(AT_SYSINFO_EHDR) == info->dlpi_addr))
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d.symtab = (const Elf64_Sym *)shim_dyn_ptr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d.strtab = (const char *)shim_dyn_ptr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			d.strsz = dyn->d_un.d_val;
			break;
		case DT_RELA:
			d.rela = (const Elf64_Rela *)shim_dyn_ptr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d.relasz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			d.jmprel = (const Elf64_Rela *)shim_dyn_ptr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d.jmprelsz = dyn->d_un.d_val;
			break;
		case DT_PLTREL:
			d.pltrel_rela = dyn->d_un.d_val == DT_RELA;
			break;
		default:
			break;
		}
	}
	if (!d.symtab || !d.strtab)
		return 0;
	if (d.rela)
		patch_relas(info->dlpi_addr, &d, d.rela, d.relasz, relro_lo, relro_hi, frees);
	if (d.jmprel && d.pltrel_rela)
		patch_relas(info->dlpi_addr, &d, d.jmprel, d.jmprelsz, relro_lo, relro_hi, frees);
	return 0;
}

/* Every module's slots: the allocators' first, then the frees'. */
static void patch_all(void)
{
	static char frees;

	lock();
	if (!patching_on) {
		unlock();
		return;
	}
	dl_iterate_phdr(patch_module, NULL);
	dl_iterate_phdr(patch_module, &frees);
	unlock();
}

/*
 * Looks for file in the directories of list (':' separated, $ORIGIN and
 * ${ORIGIN} standing for origin); the first that has it goes to out.
 */
static bool search_list(const char *list, const char *origin, const char *file, char *out, size_t n)
{
	const char *p = list;

	while (*p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p), k = 0, i = 0;

		while (i < len && k < n - 1) {
			size_t skip = !strncmp(p + i, "${ORIGIN}", 9) ? 9 : !strncmp(p + i, "$ORIGIN", 7) ? 7 : 0;

			if (skip && i + skip <= len) {
				size_t o = strlen(origin);

				if (k + o >= n - 1)
					break;
				memcpy(out + k, origin, o);
				k += o;
				i += skip;
			} else {
				out[k++] = p[i++];
			}
		}
		if (i == len && k + 1 + strlen(file) < n) {
			if (!k)
				out[k++] = '.';	/* an empty entry: the current directory */
			out[k++] = '/';
			memcpy(out + k, file, strlen(file) + 1);
			if (access(out, F_OK) == 0)
				return true;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

/*
 * The real dlopen, called from hook_dlopen, takes our library for its
 * caller: a bare name is searched in our (empty) RUNPATH instead of the
 * calling module's.  What that loses is put back here: the name is looked
 * up in the caller's DT_RPATH (searched before LD_LIBRARY_PATH) or
 * DT_RUNPATH (after it), $ORIGIN expanded, and found there it is passed
 * on as a path, which dlopen loads as it would have.  Anything else
 * (LD_LIBRARY_PATH, the cache, the default directories, a library already
 * loaded under that name) the real dlopen finds the same from anywhere.
 */
static const char *callers_path(const char *file, const void *caller, char *buf, size_t n)
{
	struct link_map *lm = NULL;
	const ElfW(Dyn) *d;
	const char *strtab = NULL, *env;
	ElfW(Xword) runpath = 0, rpath = 0;
	bool has_runpath = false, has_rpath = false;
	char origin[4096];
	Dl_info info;
	ssize_t len;
	char *slash;

	if (!file || strchr(file, '/') || !caller ||
	    !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_ld ||
	    (uintptr_t)info.dli_fbase == self_base)
		return file;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)d->d_un.d_ptr;
		else if (d->d_tag == DT_RUNPATH) {
			runpath = d->d_un.d_val;
			has_runpath = true;
		} else if (d->d_tag == DT_RPATH) {
			rpath = d->d_un.d_val;
			has_rpath = true;
		}
	}
	if (!strtab || (!has_runpath && !has_rpath))
		return file;
	/* the loader relocates DT_STRTAB in place; were it not, it is an offset */
	if ((uintptr_t)strtab < lm->l_addr)
		strtab += lm->l_addr;
	if (lm->l_name && lm->l_name[0]) {
		len = (ssize_t)strlen(lm->l_name);
		if ((size_t)len >= sizeof(origin))
			return file;
		memcpy(origin, lm->l_name, (size_t)len + 1);
	} else {
		len = readlink("/proc/self/exe", origin, sizeof(origin) - 1);
		if (len <= 0)
			return file;
		origin[len] = '\0';
	}
	slash = strrchr(origin, '/');
	if (!slash)
		return file;
	*slash = '\0';
	if (has_runpath) {
		/* LD_LIBRARY_PATH comes first: there, dlopen finds it itself */
		env = secure_getenv("LD_LIBRARY_PATH");
		if (env && search_list(env, origin, file, buf, n))
			return file;
		return search_list(strtab + runpath, origin, file, buf, n) ? buf : file;
	}
	return search_list(strtab + rpath, origin, file, buf, n) ? buf : file;
}

/* dlopen, as the program's GOTs now call it: what it loads is patched too. */
static void *hook_dlopen(const char *file, int mode)
{
	char path[4096];
	void *h = real_dlopen ?
		real_dlopen(callers_path(file, __builtin_return_address(0), path, sizeof(path)), mode) :
		NULL;

	if (h && npatches)
		patch_all();
	return h;
}

void got_attach_hooks(void *self, uintptr_t base)
{
	unsigned i;

	self_base = base;
	/* dlsym on our handle: our own definitions come first there. */
	for (i = 0; i < NHOOKED; i++)
		hook_addr[i] = (uint64_t)(uintptr_t)dlsym(self, hooked[i]);
	dlclose(self);
	hook_addr[NHOOKED - 1] = (uint64_t)(uintptr_t)hook_dlopen;
	real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_DEFAULT, "dlopen");
	afn_prepare();
}

void got_patch_start(void)
{
	__atomic_store_n(&patching_on, true, __ATOMIC_RELEASE);
	patch_all();
}

/* One line on stderr, without stdio (the shim has none of its own). */
static void warn_line(const char *a, const char *b, const char *c)
{
	const char *parts[3] = { a, b, c };
	char line[256];
	size_t n = 0, i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; parts[i][j] && n < sizeof(line) - 1; j++)
			line[n++] = parts[i][j];
	line[n++] = '\n';
	if (write(2, line, n) < 0)
		return;
}

/*
 * A malloc defined ahead of ours in the global scope (the program's own: a
 * statically linked jemalloc, say) takes every call, libc's included, and
 * ours none: say so, once, rather than record an empty heap in silence.
 * Not a program that only takes malloc's address without -fPIE (node):
 * its executable then has a PLT entry for malloc, which dlsym returns for
 * the sake of pointer equality, undefined in its symbol table, whose jump
 * goes where the program's GOT says (ours).
 */
static void warn_foreign_malloc(void)
{
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!m || !dladdr1(m, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    (uintptr_t)info.dli_fbase == self_base || (sym && sym->st_shndx == SHN_UNDEF) ||
	    secure_getenv("MEMSCOPE_QUIET"))
		return;
	warn_line("ms-record: warning: malloc is defined in ",
		  info.dli_fname && info.dli_fname[0] ? info.dli_fname : g_conf.exe,
		  " itself (a statically linked allocator?): its allocations are not recorded");
}

void shim_hooks_install(void)
{
	const char *env = secure_getenv("MEMSCOPE_HOOKS"), *why, *end;
	Dl_info info;
	unsigned i;

	if (g_conf.attached)
		return;
	/* ms-record checked every spec: one that does not parse here was
	 * not written by it, and is skipped. */
	for (; env && *env && g_conf.nhooks < MSC_HOOK_MAX; env = *end ? end + 1 : end) {
		end = strchr(env, ';');
		if (!end)
			end = env + strlen(env);
		if (msc_hookspec_parse(env, (size_t)(end - env), &g_conf.hooks[g_conf.nhooks],
				       &why) == 0) {
			ghook_addr[g_conf.nhooks] = shim_hook_trampoline(g_conf.nhooks);
			g_conf.nhooks++;
		}
	}
	if (dladdr((void *)shim_hooks_install, &info))
		self_base = (uintptr_t)info.dli_fbase;
	warn_foreign_malloc();
	real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_DEFAULT, "dlopen");
	afn_prepare();
	/*
	 * dlopen is hooked (to patch what it loads) only for --hook, which
	 * the user asked for: the real dlopen then sees our library as its
	 * caller, whose RUNPATH it searches instead of the calling module's,
	 * and a plugin found only through that RUNPATH would not load.  The
	 * built-in functions do not take that risk on their own: modules
	 * dlopen'ed later keep calling the allocator directly.
	 */
	if (g_conf.nhooks)
		hook_addr[NHOOKED - 1] = (uint64_t)(uintptr_t)hook_dlopen;
	__atomic_store_n(&patching_on, true, __ATOMIC_RELEASE);
	patch_all();
	/* Not an error: a library dlopen'ed later may call it. */
	for (i = 0; i < g_conf.nhooks && !secure_getenv("MEMSCOPE_QUIET"); i++)
		if (!ghook_patched[i])
			warn_line("ms-record: warning: --hook ", g_conf.hooks[i].name,
				  ": no loaded module calls it (yet: modules loaded later are patched)");
}

/* With the patch lock held (or no other thread): every slot still ours
 * gets its old value back, patching stops; the number written back, and
 * in *left (may be NULL) those that could not be. */
static size_t restore_slots(size_t *left)
{
	size_t i, restored = 0;

	patching_on = false;
	for (i = npatches; i-- > 0;) {
		struct patch *p = &patches[i];

		if (__atomic_load_n(p->slot, __ATOMIC_ACQUIRE) != p->hook)
			continue;
		if (store_slot(p->slot, p->orig, p->relro))
			restored++;
		else if (left)
			(*left)++;
	}
	npatches = 0;
	return restored;
}

/*
 * In the child of a fork while attached, not followed: the hooks went with
 * the copy of the GOTs, and would cost the child (an nginx worker started
 * by a HUP) for nothing, after the parent's detach too.  Only this thread
 * is left: a lock held at the fork by another is held by no one.
 */
void shim_unhook_child(void)
{
	__atomic_store_n(&patch_lock, 0, __ATOMIC_RELAXED);
	restore_slots(NULL);
}

/* The collector died (rings.c, wait_space): the slots go back, unless
 * patching is under way (then the next attach does it). */
void shim_unhook_orphaned(void)
{
	if (__atomic_exchange_n(&patch_lock, 1, __ATOMIC_ACQUIRE))
		return;
	restore_slots(NULL);
	unlock();
}

long got_slots_back(void)
{
	size_t restored, left = 0;

	lock();
	restored = restore_slots(&left);
	unlock();
	return left ? -(long)left : (long)restored;
}
