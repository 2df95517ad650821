/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the symbolizer, libmsc/record/sym.c and its sym_*.c.  The
 * known answers are in this binary (built -O2 -g) and in bin/libsymcxx.so:
 * every call whose return address is symbolized sits on one line with a
 * statement recording __LINE__, and inlining is forced with always_inline,
 * so frames, names and lines are exact.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_sym.h"

#define STATUS_NO_DEBUG "no debug info"
#define STATUS_CHANGED "file changed since recording (build-id mismatch)"
#define CXX_FILE "/sym/cxx_lib.cpp"

/* Keeps x alive after a call, so that the call is never a tail call. */
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

/* ---------------------------------------------------------------------- */
/* Known-answer code */

static __attribute__((noipa)) void *here(void)
{
	return __builtin_return_address(0);
}

static __attribute__((noipa)) void *direct_caller(unsigned *line)
{
	*line = __LINE__; void *ra = here();
	KEEP(ra);
	return ra;
}

static inline __attribute__((always_inline)) void *inl_leaf(unsigned *lines)
{
	lines[0] = __LINE__; void *ra = here();
	KEEP(ra);
	return ra;
}

static __attribute__((noipa)) void *inline_caller(unsigned *lines)
{
	lines[1] = __LINE__; void *ra = inl_leaf(lines);
	KEEP(ra);
	return ra;
}

static inline __attribute__((always_inline)) void *inl_b(unsigned *lines)
{
	lines[1] = __LINE__; void *ra = inl_leaf(lines);
	KEEP(ra);
	return ra;
}

static inline __attribute__((always_inline)) void *inl_a(unsigned *lines)
{
	lines[2] = __LINE__; void *ra = inl_b(lines);
	KEEP(ra);
	return ra;
}

/* The inlined call sits in a block with a local: a DW_TAG_lexical_block. */
static __attribute__((noipa)) void *nested_caller(unsigned *lines, int k)
{
	void *ra = NULL;

	if (k > 0) {
		volatile int local[4] = { k, k + 1, k + 2, k + 3 };

		lines[3] = __LINE__; ra = inl_a(lines);
		KEEP(local[k & 3]);
	}
	return ra;
}

/* ---------------------------------------------------------------------- */
/* Helpers */

struct loaded {
	const void *addr;		/* in: an address inside the object */
	bool found;
	uintptr_t bias;			/* dlpi_addr */
	char path[PATH_MAX];
	unsigned char build_id[64];
	size_t build_id_len;
};

static void read_build_id(struct dl_phdr_info *info, struct loaded *l)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		size_t align = ph->p_align == 8 ? 8 : 4;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const char *desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof(l->build_id)) {
				memcpy(l->build_id, desc, nh->n_descsz);
				l->build_id_len = nh->n_descsz;
				return;
			}
			p = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
		}
	}
}

/* What the recorder captures: dl_iterate_phdr's name, bias and build-id. */
static int find_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded *l = arg;
	uintptr_t a = (uintptr_t)l->addr;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || a < start || a >= start + ph->p_memsz)
			continue;
		l->found = true;
		l->bias = info->dlpi_addr;
		if (info->dlpi_name[0]) {
			snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name);
		} else {
			ssize_t n = readlink("/proc/self/exe", l->path, sizeof(l->path) - 1);

			l->path[n > 0 ? n : 0] = '\0';
		}
		read_build_id(info, l);
		return 1;
	}
	return 0;
}

static void locate(const void *addr, struct loaded *l)
{
	memset(l, 0, sizeof(*l));
	l->addr = addr;
	dl_iterate_phdr(find_loaded, l);
	assert_true(l->found);
	assert_true(l->path[0] == '/');
	assert_true(l->build_id_len >= 16);
}

/* Registers the object holding addr; returns the module index. */
static int add_loaded(struct msc_sym *s, const void *addr, struct loaded *l)
{
	int mod;

	locate(addr, l);
	mod = msc_sym_add_module(s, l->path, l->build_id, l->build_id_len);
	assert_true(mod >= 0);
	return mod;
}

/* The file as DWARF names it, ending in the name given to cc. */
static void check_file_rel(const char *file, const char *suffix)
{
	size_t n, k = strlen(suffix);

	if (!file)
		fail_msg("file is NULL, expected ...%s", suffix);
	n = strlen(file);
	if (n < k || strcmp(file + n - k, suffix) != 0)
		fail_msg("file \"%s\", expected a path ending in \"%s\"", file, suffix);
}

/* The same, absolute: our builds record an absolute DW_AT_comp_dir. */
static void check_file(const char *file, const char *suffix)
{
	check_file_rel(file, suffix);
	if (file[0] != '/')
		fail_msg("file \"%s\" is not absolute", file);
}

static const char *this_file(void)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s%s", __FILE__[0] == '/' ? "" : "/", __FILE__);
	return buf;
}

static void check_frame(const struct msc_sym_frame *f, const char *fn,
			const char *file_suffix, unsigned line, bool inlined)
{
	if (fn) {
		assert_non_null(f->fn);
		assert_string_equal(f->fn, fn);
	} else {
		assert_null(f->fn);
	}
	if (file_suffix)
		check_file(f->file, file_suffix);
	else
		assert_null(f->file);
	assert_int_equal(f->line, line);
	assert_int_equal(f->inlined, inlined);
}

/* snprintf that fails the test instead of truncating. */
static __attribute__((format(printf, 3, 4))) void fmt(char *buf, size_t size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, size, f, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < size);
}

static char *self_dir(void)
{
	static char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *slash;

	assert_true(n > 0);
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	assert_non_null(slash);
	*slash = '\0';
	return buf;
}

static void *open_cxx_lib(void)
{
	char path[PATH_MAX];
	void *h;

	fmt(path, sizeof(path), "%s/libsymcxx.so", self_dir());
	h = dlopen(path, RTLD_NOW);
	if (!h)
		fail_msg("dlopen %s: %s", path, dlerror());
	return h;
}

static void run(const char *cmd)
{
	int ret = system(cmd);

	if (ret != 0)
		fail_msg("'%s' failed (%d)", cmd, ret);
}

/* Temporary directories, also removed at the end when a test failed early. */
static char *tmpdirs[16];

static char *make_tmpdir(void)
{
	char *dir = strdup("/tmp/test_sym.XXXXXX");
	size_t i;

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	for (i = 0; i < sizeof(tmpdirs) / sizeof(tmpdirs[0]) && tmpdirs[i]; i++)
		;
	assert_true(i < sizeof(tmpdirs) / sizeof(tmpdirs[0]));
	tmpdirs[i] = dir;
	return dir;
}

static int rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void remove_tmpdir(char *dir)
{
	size_t i;

	assert_int_equal(rm_rf(dir), 0);
	for (i = 0; i < sizeof(tmpdirs) / sizeof(tmpdirs[0]); i++) {
		if (tmpdirs[i] == dir)
			tmpdirs[i] = NULL;
	}
	free(dir);
}

static int remove_leftover_tmpdirs(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tmpdirs) / sizeof(tmpdirs[0]); i++) {
		if (tmpdirs[i]) {
			rm_rf(tmpdirs[i]);
			free(tmpdirs[i]);
			tmpdirs[i] = NULL;
		}
	}
	return 0;
}

static int setup(void **state)
{
	*state = msc_sym_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	msc_sym_free(*state);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Tests */

/* ra, nested_caller()'s return address, resolves to its four frames (three
 * inlined) at lines[]. */
static void check_nested(struct msc_sym *s, int mod, const void *ra, const struct loaded *l,
			 const unsigned *lines)
{
	struct msc_sym_frame fr[8];

	assert_int_equal(msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l->bias, fr, 8), 4);
	check_frame(&fr[0], "inl_leaf", this_file(), lines[0], true);
	check_frame(&fr[1], "inl_b", this_file(), lines[1], true);
	check_frame(&fr[2], "inl_a", this_file(), lines[2], true);
	/* In a stripped file a static function: only the debug file's
	 * .symtab knows it. */
	check_frame(&fr[3], "nested_caller", this_file(), lines[3], false);
}

static void test_direct_call(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	unsigned line = 0;
	void *ra = direct_caller(&line);
	int mod = add_loaded(s, ra, &l), n;

	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, fr, 8);
	assert_int_equal(n, 1);
	check_frame(&fr[0], "direct_caller", this_file(), line, false);
	assert_null(msc_sym_module_status(s, mod));

	/* A function's first byte: the symbol table names it too. */
	n = msc_sym_resolve(s, mod, (uintptr_t)direct_caller - l.bias, fr, 8);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].fn, "direct_caller");
	check_file(fr[0].file, this_file());
}

static void test_inline_one(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	unsigned lines[2] = { 0, 0 };
	void *ra = inline_caller(lines);
	int mod = add_loaded(s, ra, &l), n;

	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, fr, 8);
	assert_int_equal(n, 2);
	check_frame(&fr[0], "inl_leaf", this_file(), lines[0], true);
	check_frame(&fr[1], "inline_caller", this_file(), lines[1], false);
}

static void test_inline_nested(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	unsigned lines[4] = { 0, 0, 0, 0 };
	void *ra = nested_caller(lines, 1);
	int mod = add_loaded(s, ra, &l), n;

	check_nested(s, mod, ra, &l, lines);

	/* Fewer slots than frames: the innermost ones. */
	memset(fr, 0, sizeof(fr));
	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, fr, 2);
	assert_int_equal(n, 2);
	check_frame(&fr[0], "inl_leaf", this_file(), lines[0], true);
	check_frame(&fr[1], "inl_b", this_file(), lines[1], true);
	assert_null(fr[2].fn);
}

static void test_truncated_before_cache(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	unsigned lines[4] = { 0, 0, 0, 0 };
	void *ra = nested_caller(lines, 2);
	int mod = add_loaded(s, ra, &l), n;

	/* The first resolve asks for one frame; the cache still gets all. */
	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, fr, 1);
	assert_int_equal(n, 1);
	check_frame(&fr[0], "inl_leaf", this_file(), lines[0], true);
	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, fr, 8);
	assert_int_equal(n, 4);
	check_frame(&fr[3], "nested_caller", this_file(), lines[3], false);
}

static void test_cache_and_interning(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame a[8], b[8];
	struct loaded l;
	unsigned lines[4], line;
	void *ra = nested_caller(lines, 3);
	void *ra2 = direct_caller(&line);
	int mod = add_loaded(s, ra, &l), n, i;

	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, a, 8);
	assert_int_equal(n, 4);
	assert_int_equal(msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, b, 8), 4);
	for (i = 0; i < n; i++) {
		/* The same strings, not equal copies. */
		assert_ptr_equal(a[i].fn, b[i].fn);
		assert_ptr_equal(a[i].file, b[i].file);
		assert_int_equal(a[i].line, b[i].line);
		assert_int_equal(a[i].inlined, b[i].inlined);
	}
	/* Interned: another address in the same file, the same pointer. */
	assert_int_equal(msc_sym_resolve(s, mod, (uintptr_t)ra2 - 1 - l.bias, b, 8), 1);
	assert_ptr_equal(b[0].file, a[0].file);
}

static void test_unknown_address(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[4];
	struct loaded l;
	int mod = add_loaded(s, (const void *)here, &l);

	/* The ELF header: no function, no line. */
	memset(fr, 0xff, sizeof(fr));
	assert_int_equal(msc_sym_resolve(s, mod, 0, fr, 4), 1);
	check_frame(&fr[0], NULL, NULL, 0, false);
	assert_int_equal(msc_sym_resolve(s, mod, UINT64_MAX, fr, 4), 1);
	check_frame(&fr[0], NULL, NULL, 0, false);
}

static void test_shared_library_symtab(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[4];
	struct loaded l;
	char *empty = make_tmpdir();
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *malloc_fn, *fopen_fn, *getenv_fn;
	int mod, n;

	/* dlsym through libc's handle: sanitizers interpose malloc. */
	assert_non_null(libc);
	malloc_fn = dlsym(libc, "malloc");
	fopen_fn = dlsym(libc, "fopen");
	getenv_fn = dlsym(libc, "getenv");
	assert_non_null(malloc_fn);
	assert_non_null(fopen_fn);
	assert_non_null(getenv_fn);

	/* Only a debug directory with nothing in it: names come from .dynsym. */
	assert_int_equal(msc_sym_set_debug_path(s, empty), 0);
	mod = add_loaded(s, malloc_fn, &l);
	assert_non_null(strstr(l.path, "libc.so.6"));

	n = msc_sym_resolve(s, mod, (uintptr_t)malloc_fn - l.bias, fr, 4);
	assert_int_equal(n, 1);
	/* malloc and __libc_malloc are both global there: the plain name. */
	check_frame(&fr[0], "malloc", NULL, 0, false);
	n = msc_sym_resolve(s, mod, (uintptr_t)malloc_fn + 7 - l.bias, fr, 4);
	assert_int_equal(n, 1);
	check_frame(&fr[0], "malloc", NULL, 0, false);
	/* fopen (global) over _IO_fopen (global) and fopen64 (weak). */
	assert_int_equal(msc_sym_resolve(s, mod, (uintptr_t)fopen_fn - l.bias, fr, 4), 1);
	check_frame(&fr[0], "fopen", NULL, 0, false);
	assert_int_equal(msc_sym_resolve(s, mod, (uintptr_t)getenv_fn + 1 - l.bias, fr, 4), 1);
	check_frame(&fr[0], "getenv", NULL, 0, false);
	assert_string_equal(msc_sym_module_status(s, mod), STATUS_NO_DEBUG);

	dlclose(libc);
	remove_tmpdir(empty);
}

/* With the default search path, libc6-dbg's files are found by build-id. */
static void test_shared_library_system_debug(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[MSC_SYM_MAX_FRAMES];
	struct loaded l;
	char debug[PATH_MAX], *p;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *malloc_fn;
	size_t i;
	int mod, n;

	assert_non_null(libc);
	malloc_fn = dlsym(libc, "malloc");
	locate(malloc_fn, &l);
	p = debug + sprintf(debug, "/usr/lib/debug/.build-id/%02x/", l.build_id[0]);
	for (i = 1; i < l.build_id_len; i++)
		p += sprintf(p, "%02x", l.build_id[i]);
	strcpy(p, ".debug");
	dlclose(libc);
	if (access(debug, R_OK) != 0)
		skip();

	mod = add_loaded(s, malloc_fn, &l);
	n = msc_sym_resolve(s, mod, (uintptr_t)malloc_fn - l.bias, fr, MSC_SYM_MAX_FRAMES);
	assert_true(n >= 1);
	assert_string_equal(fr[n - 1].fn, "malloc");
	assert_false(fr[n - 1].inlined);
	/* Debian maps the build directory to ".": relative comp_dir. */
	check_file_rel(fr[0].file, "malloc/malloc.c");
	assert_true(fr[0].line > 0);
	assert_null(msc_sym_module_status(s, mod));
}

/*
 * The cache of decompressed debug files (MEMSCOPE_CACHE): libc's debug
 * file resolved with the default search leaves a copy, named by build-id,
 * which a second symbolizer resolves the same from; one with a debug path
 * of its own (an empty directory) does not use it.
 */
static void test_debug_cache(void **state)
{
	struct msc_sym *s2, *s3;
	struct msc_sym_frame fr[MSC_SYM_MAX_FRAMES], fr2[MSC_SYM_MAX_FRAMES];
	struct loaded l;
	char copy[PATH_MAX], *cache = make_tmpdir(), *empty = make_tmpdir(), *p;
	char *old = getenv("MEMSCOPE_CACHE") ? strdup(getenv("MEMSCOPE_CACHE")) : NULL;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *malloc_fn;
	size_t i;
	int mod, n, n2;
	bool compressed;

	(void)state;
	assert_non_null(libc);
	malloc_fn = dlsym(libc, "malloc");
	locate(malloc_fn, &l);
	dlclose(libc);
	assert_true(l.build_id_len > 1);
	p = copy + sprintf(copy, "%s/debug/", cache);
	for (i = 0; i < l.build_id_len; i++)
		p += sprintf(p, "%02x", l.build_id[i]);
	strcpy(p, ".debug");

	setenv("MEMSCOPE_CACHE", cache, 1);
	s2 = msc_sym_new();
	s3 = msc_sym_new();
	assert_non_null(s2);
	assert_non_null(s3);
	mod = add_loaded(s2, malloc_fn, &l);
	n = msc_sym_resolve(s2, mod, (uintptr_t)malloc_fn - l.bias, fr, MSC_SYM_MAX_FRAMES);
	/* No debug file, or one without compressed sections: no copy. */
	compressed = access(copy, R_OK) == 0;
	if (msc_sym_module_status(s2, mod) || !compressed) {
		assert_int_not_equal(access(copy, R_OK), 0);
		goto out;
	}
	mod = add_loaded(s3, malloc_fn, &l);
	n2 = msc_sym_resolve(s3, mod, (uintptr_t)malloc_fn - l.bias, fr2, MSC_SYM_MAX_FRAMES);
	assert_int_equal(n2, n);
	for (i = 0; i < (size_t)n; i++) {
		assert_string_equal(fr2[i].fn, fr[i].fn);
		assert_string_equal(fr2[i].file, fr[i].file);
		assert_int_equal(fr2[i].line, fr[i].line);
	}
	assert_null(msc_sym_module_status(s3, mod));
	msc_sym_free(s3);

	/* A debug path of its own: the copy is not where it looks. */
	s3 = msc_sym_new();
	assert_non_null(s3);
	assert_int_equal(msc_sym_set_debug_path(s3, empty), 0);
	mod = add_loaded(s3, malloc_fn, &l);
	assert_int_equal(msc_sym_resolve(s3, mod, (uintptr_t)malloc_fn - l.bias, fr2, 4), 1);
	assert_null(fr2[0].file);
	assert_string_equal(msc_sym_module_status(s3, mod), STATUS_NO_DEBUG);
out:
	msc_sym_free(s2);
	msc_sym_free(s3);
	if (old)
		setenv("MEMSCOPE_CACHE", old, 1);
	else
		unsetenv("MEMSCOPE_CACHE");
	free(old);
	remove_tmpdir(cache);
	remove_tmpdir(empty);
}

static void test_cxx_member(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	void *h = open_cxx_lib();
	void *(*grow)(unsigned *) = (void *(*)(unsigned *))dlsym(h, "symcxx_grow");
	const unsigned *def_line = dlsym(h, "symcxx_grow_def_line");
	void *entry = dlsym(h, "_ZN2ns6Widget4growEm");
	unsigned line = 0;
	void *ra;
	int mod, n;

	assert_non_null(grow);
	assert_non_null(def_line);
	assert_non_null(entry);
	ra = grow(&line);
	mod = add_loaded(s, ra, &l);
	assert_non_null(strstr(l.path, "libsymcxx.so"));

	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, fr, 8);
	assert_int_equal(n, 1);
	check_frame(&fr[0], "ns::Widget::grow(unsigned long)", CXX_FILE, line, false);

	n = msc_sym_resolve(s, mod, (uintptr_t)entry - l.bias, fr, 8);
	assert_int_equal(n, 1);
	check_frame(&fr[0], "ns::Widget::grow(unsigned long)", CXX_FILE, *def_line, false);
	dlclose(h);
}

static void test_cxx_inlined_template(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	void *h = open_cxx_lib();
	void *(*probe)(unsigned *) = (void *(*)(unsigned *))dlsym(h, "symcxx_template");
	unsigned lines[3] = { 0, 0, 0 };
	void *ra;
	int mod, n;

	assert_non_null(probe);
	ra = probe(lines);
	mod = add_loaded(s, ra, &l);
	n = msc_sym_resolve(s, mod, (uintptr_t)ra - 1 - l.bias, fr, 8);
	assert_int_equal(n, 3);
	/* Inlined names come from DW_AT_linkage_name, through abstract origin
	 * and specification, demangled as c++filt does. */
	check_frame(&fr[0], "ns::Widget::peek(unsigned int*) const", CXX_FILE, lines[0], true);
	check_frame(&fr[1], "void* ns::twice<int>(int, unsigned int*)", CXX_FILE, lines[1], true);
	check_frame(&fr[2], "symcxx_template", CXX_FILE, lines[2], false);
	dlclose(h);
}

static void test_missing_file(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[4];
	int mod = msc_sym_add_module(s, "/nonexistent/memscope/libgone.so", NULL, 0);

	/* Lazy: registering reads nothing, so it cannot fail. */
	assert_true(mod >= 0);
	memset(fr, 0xff, sizeof(fr));
	assert_int_equal(msc_sym_resolve(s, mod, 0x1234, fr, 4), 1);
	check_frame(&fr[0], NULL, NULL, 0, false);
	assert_string_equal(msc_sym_module_status(s, mod),
			    "cannot open: No such file or directory");
}

static void test_not_elf(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[4];
	char *dir = make_tmpdir(), path[PATH_MAX];
	const char *status;
	FILE *f;
	int mod;

	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not an ELF file at all\n", f);
	fclose(f);
	mod = msc_sym_add_module(s, path, NULL, 0);
	assert_true(mod >= 0);
	/* The status alone opens the module. */
	status = msc_sym_module_status(s, mod);
	assert_non_null(status);
	assert_true(strncmp(status, "cannot read ELF: ", 17) == 0);
	assert_int_equal(msc_sym_resolve(s, mod, 0, fr, 4), 1);
	check_frame(&fr[0], NULL, NULL, 0, false);
	remove_tmpdir(dir);
}

static void test_build_id_mismatch(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[4];
	struct loaded l;
	unsigned line;
	void *ra = direct_caller(&line);
	int good, changed;

	locate(ra, &l);
	good = msc_sym_add_module(s, l.path, l.build_id, l.build_id_len);
	l.build_id[3] ^= 0x5a;
	changed = msc_sym_add_module(s, l.path, l.build_id, l.build_id_len);
	assert_true(good >= 0);
	assert_true(changed >= 0);
	assert_int_not_equal(good, changed);

	/* Names of another build would be wrong names: none at all. */
	memset(fr, 0xff, sizeof(fr));
	assert_int_equal(msc_sym_resolve(s, changed, (uintptr_t)ra - 1 - l.bias, fr, 4), 1);
	check_frame(&fr[0], NULL, NULL, 0, false);
	assert_string_equal(msc_sym_module_status(s, changed), STATUS_CHANGED);

	/* A shorter id (as from another linker) does not match either. */
	changed = msc_sym_add_module(s, l.path, l.build_id, 8);
	assert_string_equal(msc_sym_module_status(s, changed), STATUS_CHANGED);

	assert_int_equal(msc_sym_resolve(s, good, (uintptr_t)ra - 1 - l.bias, fr, 4), 1);
	check_frame(&fr[0], "direct_caller", this_file(), line, false);
	assert_null(msc_sym_module_status(s, good));
}

static void test_separate_debug_by_build_id(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	char *dir = make_tmpdir(), *empty = make_tmpdir();
	char cmd[4 * PATH_MAX], stripped[PATH_MAX], debug[PATH_MAX], *p;
	unsigned lines[4] = { 0, 0, 0, 0 };
	void *ra = nested_caller(lines, 4);
	struct msc_sym *bare;
	size_t i;
	int mod;

	locate(ra, &l);
	snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
	p = debug + snprintf(debug, sizeof(debug), "%s/.build-id/%02x", dir, l.build_id[0]);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", debug);
	run(cmd);
	*p++ = '/';
	for (i = 1; i < l.build_id_len; i++)
		p += sprintf(p, "%02x", l.build_id[i]);
	strcpy(p, ".debug");
	fmt(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug '%s' '%s' && cp '%s' '%s' && strip --strip-all '%s'",
		 l.path, debug, l.path, stripped, stripped);
	run(cmd);

	assert_int_equal(msc_sym_set_debug_path(s, dir), 0);
	mod = msc_sym_add_module(s, stripped, l.build_id, l.build_id_len);
	assert_true(mod >= 0);
	check_nested(s, mod, ra, &l, lines);
	assert_null(msc_sym_module_status(s, mod));

	/* The same stripped file without the debug tree: nothing. */
	bare = msc_sym_new();
	assert_non_null(bare);
	assert_int_equal(msc_sym_set_debug_path(bare, empty), 0);
	mod = msc_sym_add_module(bare, stripped, l.build_id, l.build_id_len);
	assert_int_equal(msc_sym_resolve(bare, mod, (uintptr_t)ra - 1 - l.bias, fr, 8), 1);
	check_frame(&fr[0], NULL, NULL, 0, false);
	assert_string_equal(msc_sym_module_status(bare, mod), STATUS_NO_DEBUG);
	msc_sym_free(bare);

	remove_tmpdir(dir);
	remove_tmpdir(empty);
}

/*
 * Units are found by address in .debug_aranges when the file has it (GCC
 * writes it), by every unit's ranges when it has none (clang's default)
 * and when an address is not in it: the same frames either way.
 */
static void test_without_aranges(void **state)
{
	struct msc_sym *s = *state;
	struct msc_sym_frame fr[8];
	struct loaded l;
	char *dir = make_tmpdir();
	char cmd[4 * PATH_MAX], bare[PATH_MAX];
	unsigned lines[4] = { 0, 0, 0, 0 }, line = 0;
	void *ra = nested_caller(lines, 4), *direct = direct_caller(&line);
	int mod;

	locate(ra, &l);
	snprintf(bare, sizeof(bare), "%s/no-aranges", dir);
	fmt(cmd, sizeof(cmd), "objcopy --remove-section=.debug_aranges '%s' '%s'", l.path, bare);
	run(cmd);
	fmt(cmd, sizeof(cmd), "! readelf -S '%s' | grep -q debug_aranges", bare);
	run(cmd);
	/* The copy keeps the build-id: it is the loaded file to us. */
	mod = msc_sym_add_module(s, bare, l.build_id, l.build_id_len);
	assert_true(mod >= 0);
	check_nested(s, mod, ra, &l, lines);
	assert_int_equal(msc_sym_resolve(s, mod, (uintptr_t)direct - 1 - l.bias, fr, 8), 1);
	check_frame(&fr[0], "direct_caller", this_file(), line, false);
	assert_null(msc_sym_module_status(s, mod));

	/* With it: the unit found there first; then an address it does not
	 * cover (in no unit at all: the file's first byte) makes every unit's
	 * ranges read, and another address of the first unit is found in
	 * them. */
	mod = add_loaded(s, ra, &l);
	check_nested(s, mod, ra, &l, lines);
	assert_int_equal(msc_sym_resolve(s, mod, 0, fr, 8), 1);
	assert_null(fr[0].file);
	assert_int_equal(msc_sym_resolve(s, mod, (uintptr_t)direct - 1 - l.bias, fr, 8), 1);
	check_frame(&fr[0], "direct_caller", this_file(), line, false);

	remove_tmpdir(dir);
}

static void test_module_index(void **state)
{
	struct msc_sym *s = *state;
	static const unsigned char id1[] = { 0x01, 0x02, 0x03 }, id2[] = { 0x01, 0x02, 0x04 };
	struct msc_sym_frame fr[2];
	int a, b, c, d, e;

	a = msc_sym_add_module(s, "/lib/x.so", id1, sizeof(id1));
	b = msc_sym_add_module(s, "/lib/x.so", id1, sizeof(id1));
	c = msc_sym_add_module(s, "/lib/x.so", id2, sizeof(id2));
	d = msc_sym_add_module(s, "/lib/y.so", id1, sizeof(id1));
	e = msc_sym_add_module(s, "/lib/x.so", NULL, 5);
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
	assert_int_equal(c, 1);
	assert_int_equal(d, 2);
	assert_int_equal(e, 3);
	assert_int_equal(msc_sym_add_module(s, "/lib/x.so", NULL, 0), 3);
	assert_int_equal(msc_sym_add_module(s, NULL, NULL, 0), -EINVAL);

	assert_int_equal(msc_sym_resolve(s, -1, 0, fr, 2), -EINVAL);
	assert_int_equal(msc_sym_resolve(s, 4, 0, fr, 2), -EINVAL);
	assert_int_equal(msc_sym_resolve(s, 0, 0, fr, 0), -EINVAL);
	assert_int_equal(msc_sym_resolve(s, 0, 0, NULL, 2), -EINVAL);
	assert_string_equal(msc_sym_module_status(s, 4), "invalid module index");
	assert_string_equal(msc_sym_module_status(s, -3), "invalid module index");
}

static void test_free_null(void **state)
{
	(void)state;
	msc_sym_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_direct_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_before_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_and_interning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_library_symtab, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_library_system_debug, setup, teardown),
		cmocka_unit_test(test_debug_cache),
		cmocka_unit_test_setup_teardown(test_cxx_member, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cxx_inlined_template, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_elf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_id_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_separate_debug_by_build_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_without_aranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_index, setup, teardown),
		cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, remove_leftover_tmpdirs);
}
