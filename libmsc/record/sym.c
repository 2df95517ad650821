/* SPDX-License-Identifier: MIT */
/*
 * Offline symbolization with libdwfl and address-sorted caches: see
 * msc_sym.h.  This file holds the modules, the names and files shown, the
 * resolution of an address into frames and its cache, and the public
 * functions; sym_internal.h says which file holds the others.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_arena.h"
#include "msc_hash.h"
#include "msc_sym.h"
#include "msc_util.h"
#include "sym_internal.h"

/*
 * libstdc++'s demangler (<cxxabi.h> is C++ only; it returns malloc'd
 * text), loaded the first time a name needs it: linked in, libstdc++
 * would be loaded, relocated and faulted in by every run of every tool,
 * and most programs are C.  Without it,
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

/*
 * The address cache.  A repeated address should cost one cache miss, not the
 * two of a u64map value pointing into a frame pool, so each 32-byte slot
 * holds the first frame;
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
/* Names and call sites of DIEs */

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
		sym_cu_release(&m->cus[i]);
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
	ret = sym_load_symtab(m);
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
		ret = sym_find_subprogram(m, addr - m->dwbias, &cu, &sp);
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
	s->callbacks.find_debuginfo = sym_find_debuginfo;
	s->cache_dir = sym_cache_dir_of_env();
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
