/* SPDX-License-Identifier: MIT */
/*
 * Finding a module's debug file for libdwfl (find_debuginfo), and the
 * decompressed copies of debug files kept in the cache directory.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_sym.h"
#include "sym_internal.h"

/* ---------------------------------------------------------------------- */
/* Decompressed copies of debug files */

/*
 * Debian's -dbg packages ship their debug files with compressed sections
 * (SHF_COMPRESSED, zlib), which libdw inflates every time it opens one, in
 * every recording: most of what recording a short program costs.  The
 * first time such a file is
 * found, a copy with the sections decompressed is written to the cache
 * directory, named by its build-id; from then on that copy is opened in
 * its place.  A copy whose build-id is not its name is not used (and is
 * replaced).
 */

/* The cache directory: MEMSCOPE_CACHE ("" or "off": none), else
 * $XDG_CACHE_HOME/memscope, else $HOME/.cache/memscope. */
char *sym_cache_dir_of_env(void)
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
 * loads libdebuginfod for it first: with libcurl and its chain, dozens of
 * libraries, in every recording that names a function of a distribution
 * binary without debug information (ls, sqlite3).
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
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
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
