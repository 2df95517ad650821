/* SPDX-License-Identifier: MIT */
/*
 * The target's files read as ELF: which of its mappings are libc, the
 * loader and the library; the symbols the calls need and those a safe
 * point avoids, a 0xcc byte to return to, and whether a program has an
 * interpreter (msc_preload_check, msc_find_program).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject_internal.h"
#include "msc_inject.h"
#include "msc_proc.h"
#include "msc_util.h"

#if defined(__x86_64__)

/* Functions a thread must not be stopped in: they hold allocator, loader,
 * fork or thread locks that the calls need too. */
static const char *const unsafe_fns[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size", "malloc_trim",
	"mallinfo", "mallinfo2", "malloc_info", "malloc_stats", "mallopt", "cfree",
	"dlopen", "dlclose", "dlsym", "dlvsym", "dlmopen", "dladdr", "dladdr1", "dlinfo",
	"dl_iterate_phdr", "__libc_dlopen_mode", "__libc_dlsym", "__libc_dlclose",
	"fork", "_Fork", "vfork", "__libc_fork", "pthread_atfork", "exit", "_exit",
	/* The thread stack cache's lock: the library's attach starts a thread. */
	"pthread_create", "pthread_exit", "pthread_detach",
	"__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc", "__libc_memalign",
};

/* The names of the F_ calls (inject_internal.h), in their order. */
static const char *const call_fns[NCALLS] = {
	"dlopen", "dlsym", "dlerror", "__errno_location", "__libc_dlopen_mode", "__libc_dlsym",
	"mmap", "munmap",
};

static void add_unsafe(struct target *t, uint64_t lo, uint64_t hi)
{
	if (lo >= hi || MSC_GROW(t->unsafe, t->nunsafe + 1, t->capunsafe, 32))
		return;
	t->unsafe[t->nunsafe++] = (struct range){ lo, hi };
}

/* ------------------------------------------------------- its mappings */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool is_libc(const char *name)
{
	return strncmp(name, "libc.so", 7) == 0 || strncmp(name, "libc-2.", 7) == 0 ||
	       strncmp(name, "ld-musl-", 8) == 0;
}

static bool is_ldso(const char *name)
{
	return strncmp(name, "ld-linux", 8) == 0 || strncmp(name, "ld64.so", 7) == 0 ||
	       strncmp(name, "ld-2.", 5) == 0 || strncmp(name, "ld-musl-", 8) == 0;
}

int inject_on_mapping(const struct msc_mapping *m, void *arg)
{
	struct maps_walk *mw = arg;
	struct target *t = mw->t;
	const char *name = base_name(m->path);

	mw->nmaps++;
	/* Where a thread's stack may be (a thread's own, or [stack]). */
	if (m->perms[0] == 'r' && m->perms[1] == 'w' && (!m->path[0] || !strcmp(m->path, "[stack]")) &&
	    !MSC_GROW(t->anon, t->nanon + 1, t->capanon, 64))
		t->anon[t->nanon++] = (struct range){ m->start, m->end };
	if (m->path[0] != '/')
		return 0;
	if (is_libc(name) && !t->libc[0] && m->offset == 0) {
		snprintf(t->libc, sizeof(t->libc), "%s", m->path);
		t->libc_base = m->start;
		t->libc_is_ldso = strncmp(name, "ld-musl-", 8) == 0;
	}
	if (is_ldso(name)) {
		if (!t->ldso[0] && m->offset == 0) {
			snprintf(t->ldso, sizeof(t->ldso), "%s", m->path);
			t->ldso_base = m->start;
		}
		/* The whole loader: lazy binding and dlopen hold its locks. */
		if (m->perms[2] == 'x')
			add_unsafe(t, m->start, m->end);
	}
	/* The library itself, when loaded: its hooks may hold its state. */
	if (mw->have_lib_st && m->inode == (uint64_t)mw->lib_st.st_ino &&
	    (strcmp(m->path, mw->lib) == 0 || strcmp(name, base_name(mw->lib)) == 0)) {
		mw->lib_loaded = true;
		if (m->perms[2] == 'x')
			add_unsafe(t, m->start, m->end);
	}
	return 0;
}

/* ---------------------------------------------------------- ELF symbols */

int inject_elf_open(struct elf_file *ef, const char *path)
{
	Elf64_Phdr ph;
	bool first = true;
	unsigned i;

	memset(ef, 0, sizeof(*ef));
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return -errno;
	if (pread(ef->fd, &ef->eh, sizeof(ef->eh), 0) != sizeof(ef->eh) ||
	    memcmp(ef->eh.e_ident, ELFMAG, SELFMAG) != 0 || ef->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ef->eh.e_phentsize != sizeof(ph)) {
		close(ef->fd);
		return -ENOEXEC;
	}
	for (i = 0; i < ef->eh.e_phnum; i++) {
		if (pread(ef->fd, &ph, sizeof(ph), (off_t)(ef->eh.e_phoff + i * sizeof(ph))) !=
		    sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			ef->has_interp = true;
		if (ph.p_type == PT_LOAD && first) {
			ef->first_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
			first = false;
		}
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !ef->x_size) {
			ef->x_off = ph.p_offset;
			ef->x_vaddr = ph.p_vaddr;
			ef->x_size = ph.p_filesz;
		}
	}
	return 0;
}

/* 1: path is an ELF program with an interpreter (dynamically linked), 0:
 * without one (static), -1: it cannot be read. */
static int elf_interp(const char *path)
{
	struct elf_file ef;
	bool has_interp;

	if (inject_elf_open(&ef, path))
		return -1;
	has_interp = ef.has_interp;
	close(ef.fd);
	return has_interp;
}

static bool elf_is_static(const char *path)
{
	return elf_interp(path) == 0;
}

bool inject_elf_is_dynamic(const char *path)
{
	return elf_interp(path) == 1;
}

char *msc_find_program(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(name, '/'))
		return strdup(name);	/* msc_preload_check says what is wrong with it */
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (;;) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);

		/* An empty entry is the current directory, as for execvp. */
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return strdup(buf);
		if (!colon)
			break;
		path = colon + 1;
	}
	errno = ENOENT;
	return NULL;
}

int msc_preload_check(const char *path, struct msc_err *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return msc_err_set(err, -errno, "cannot run '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return msc_err_set(err, -EISDIR, "cannot run '%s': Is a directory", path);
	if (access(path, X_OK) != 0)
		return msc_err_set(err, -errno, "cannot run '%s': %s", path, strerror(errno));
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		return msc_err_set(err, -EPERM, "cannot profile '%s': it is set-user-ID or "
				   "set-group-ID, and the loader ignores LD_PRELOAD for such programs",
				   path);
	if (elf_is_static(path))
		return msc_err_set(err, -ENOEXEC, "cannot profile '%s': it is statically linked, so "
				   "LD_PRELOAD cannot put libmemscope.so in it", path);
	return 0;
}

/*
 * Looks names up in .dynsym: val[i]/size[i] get each defined symbol's value
 * and size (0 when absent).  Returns 0 or -errno.
 */
static int elf_dynsyms(struct elf_file *ef, const char *const *names, size_t n, uint64_t *val,
		       uint64_t *size)
{
	Elf64_Shdr sh, strsh;
	Elf64_Sym *syms = NULL;
	char *strs = NULL;
	size_t nsyms = 0, i, k;
	int rc = -ENOENT;
	unsigned s;

	memset(val, 0, n * sizeof(*val));
	if (size)
		memset(size, 0, n * sizeof(*size));
	if (ef->eh.e_shentsize != sizeof(sh))
		return -ENOEXEC;
	for (s = 0; s < ef->eh.e_shnum; s++) {
		if (pread(ef->fd, &sh, sizeof(sh), (off_t)(ef->eh.e_shoff + s * sizeof(sh))) !=
		    sizeof(sh))
			return -EIO;
		if (sh.sh_type == SHT_DYNSYM)
			break;
	}
	if (s == ef->eh.e_shnum || sh.sh_link >= ef->eh.e_shnum)
		return -ENOENT;
	if (pread(ef->fd, &strsh, sizeof(strsh), (off_t)(ef->eh.e_shoff + sh.sh_link * sizeof(sh))) !=
	    sizeof(strsh))
		return -EIO;
	if (sh.sh_size > (64u << 20) || strsh.sh_size > (64u << 20) || !strsh.sh_size)
		return -ENOEXEC;
	syms = malloc(sh.sh_size);
	strs = malloc(strsh.sh_size + 1);
	if (!syms || !strs) {
		rc = -ENOMEM;
		goto out;
	}
	if (pread(ef->fd, syms, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size ||
	    pread(ef->fd, strs, strsh.sh_size, (off_t)strsh.sh_offset) != (ssize_t)strsh.sh_size) {
		rc = -EIO;
		goto out;
	}
	strs[strsh.sh_size] = '\0';
	nsyms = sh.sh_size / sizeof(*syms);
	for (i = 0; i < nsyms; i++) {
		const char *name;

		if (syms[i].st_shndx == SHN_UNDEF || syms[i].st_name >= strsh.sh_size)
			continue;
		name = strs + syms[i].st_name;
		for (k = 0; k < n; k++)
			if (!val[k] && strcmp(name, names[k]) == 0) {
				val[k] = syms[i].st_value;
				if (size)
					size[k] = syms[i].st_size;
			}
	}
	rc = 0;
out:
	free(syms);
	free(strs);
	return rc;
}

/*
 * The address (in the file's own terms) of a 0xcc byte in its code, or 0:
 * an int3 already there, inside some instruction or between functions, to
 * which our calls return.  Then nothing is written to the process's code,
 * nor put back after the calls: each write to its memory takes its mmap
 * lock, behind every thread that maps memory.
 */
static uint64_t elf_int3(struct elf_file *ef)
{
	unsigned char buf[16384];
	uint64_t at = 0;

	while (at < ef->x_size && at < (4u << 20)) {
		size_t want = ef->x_size - at < sizeof(buf) ? (size_t)(ef->x_size - at) : sizeof(buf);
		ssize_t n = pread(ef->fd, buf, want, (off_t)(ef->x_off + at));
		const unsigned char *p;

		if (n <= 0)
			return 0;
		p = memchr(buf, 0xcc, (size_t)n);
		if (p)
			return ef->x_vaddr + at + (uint64_t)(p - buf);
		at += (uint64_t)n;
	}
	return 0;
}

/* ------------------------------------------------------ libc's symbols */

int inject_load_symbols(struct target *t, struct msc_err *err)
{
	uint64_t val[ARRAY_SIZE(unsafe_fns)], size[ARRAY_SIZE(unsafe_fns)];
	uint64_t cval[NCALLS], rdbg = 0;
	static const char *const rdbg_name[] = { "_r_debug" };
	struct elf_file ef;
	char path[700];
	uint64_t bias;
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "%s%s", t->root, t->libc);
	rc = inject_elf_open(&ef, path);
	/* Its root goes with the process: a process killed meanwhile (a
	 * zombie, or gone) has no files to read. */
	if (rc && access(t->root, F_OK) < 0 && (errno == ENOENT || errno == ESRCH))
		return msc_err_set(err, -ESRCH, "pid %d exited during the attach", t->pid);
	if (rc)
		return msc_err_set(err, rc, "cannot read pid %d's libc (%s): %s", t->pid, t->libc,
				   strerror(-rc));
	bias = t->libc_base - ef.first_vaddr;
	rc = elf_dynsyms(&ef, unsafe_fns, ARRAY_SIZE(unsafe_fns), val, size);
	if (rc == 0)
		rc = elf_dynsyms(&ef, call_fns, NCALLS, cval, NULL);
	if (rc == 0 && t->libc_is_ldso)
		elf_dynsyms(&ef, rdbg_name, 1, &rdbg, NULL);
	t->trap = ef.eh.e_entry ? bias + ef.eh.e_entry : 0;
	t->int3 = elf_int3(&ef);
	if (t->int3)
		t->int3 += bias;
	close(ef.fd);
	if (rc)
		return msc_err_set(err, rc, "cannot read the symbols of %s: %s", t->libc,
				   strerror(-rc));
	for (i = 0; i < ARRAY_SIZE(unsafe_fns); i++)
		if (val[i])
			add_unsafe(t, bias + val[i], bias + val[i] + (size[i] ? size[i] : 1));
	for (i = 0; i < NCALLS; i++)
		t->fn[i] = cval[i] ? bias + cval[i] : 0;
	if (rdbg)
		t->r_debug = bias + rdbg;
	if (!t->r_debug && t->ldso[0]) {
		snprintf(path, sizeof(path), "%s%s", t->root, t->ldso);
		if (inject_elf_open(&ef, path) == 0) {
			if (elf_dynsyms(&ef, rdbg_name, 1, &rdbg, NULL) == 0 && rdbg)
				t->r_debug = t->ldso_base - ef.first_vaddr + rdbg;
			close(ef.fd);
		}
	}
	/* glibc before 2.34 has dlopen in libdl only; its private twins are
	 * always there. */
	if (!t->fn[F_DLOPEN] && t->fn[F_LIBC_DLOPEN]) {
		t->fn[F_DLOPEN] = t->fn[F_LIBC_DLOPEN];
		t->fn[F_DLSYM] = t->fn[F_LIBC_DLSYM];
	}
	if (!t->fn[F_DLOPEN] || !t->fn[F_DLSYM] || !t->trap)
		return msc_err_set(err, -ENOSYS, "pid %d: its libc (%s) has no dlopen", t->pid,
				   t->libc);
	return 0;
}

#endif
