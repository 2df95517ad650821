/* SPDX-License-Identifier: MIT */
/*
 * /proc readers: see msc_proc.h.  Field meanings are those of the kernel's
 * Documentation/filesystems/proc.rst (and proc(5) for stat field order).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_proc.h"
#include "msc_util.h"

int msc_procfs_init(struct msc_procfs *fs, const char *root)
{
	memset(fs, 0, sizeof(*fs));
	if (!root)
		root = "/proc";
	if (strlen(root) >= sizeof(fs->root))
		return -ENAMETOOLONG;
	strcpy(fs->root, root);
	fs->page_size = sysconf(_SC_PAGESIZE);
	fs->clk_tck = sysconf(_SC_CLK_TCK);
	if (fs->page_size <= 0)
		fs->page_size = 4096;
	if (fs->clk_tck <= 0)
		fs->clk_tck = 100;
	return 0;
}

void msc_procfs_release(struct msc_procfs *fs)
{
	free(fs->buf);
	fs->buf = NULL;
	fs->cap = 0;
}

static void make_path(struct msc_procfs *fs, char *out, size_t n, int pid, const char *file)
{
	if (pid > 0)
		snprintf(out, n, "%s/%d/%s", fs->root, pid, file);
	else
		snprintf(out, n, "%s/%s", fs->root, file);
}

/* Is the process directory still there?  Decides ESRCH versus ENOENT. */
static bool pid_exists(struct msc_procfs *fs, int pid)
{
	char path[320];
	struct stat st;

	make_path(fs, path, sizeof(path), pid, "");
	return stat(path, &st) == 0;
}

/*
 * smaps_rollup of a kernel thread or a zombie: recent kernels fail the
 * open with ESRCH, older ones the read.  Either way the process
 * exists but has no mm: -ENODATA.
 */
static long read_failed(struct msc_procfs *fs, int pid, int e)
{
	if (e == ESRCH && pid > 0 && pid_exists(fs, pid))
		return -ENODATA;
	return -e;
}

/* Mapping lines start with a lowercase hex address; smaps counter lines
 * with a capitalised key. */
static bool is_map_line(const char *line)
{
	return (line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f');
}

long msc_proc_read(struct msc_procfs *fs, int pid, const char *file)
{
	char path[512];
	size_t len = 0;
	int fd, e;

	make_path(fs, path, sizeof(path), pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT && pid > 0 && !pid_exists(fs, pid))
			return -ESRCH;
		return read_failed(fs, pid, e);
	}
	for (;;) {
		ssize_t n;

		if (fs->cap - len < 4096 && MSC_GROW(fs->buf, fs->cap + 1, fs->cap, 16384)) {
			close(fd);
			return -ENOMEM;
		}
		n = read(fd, fs->buf + len, fs->cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			close(fd);
			return read_failed(fs, pid, e);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	fs->buf[len] = '\0';
	return (long)len;
}

int msc_proc_open(struct msc_procfs *fs, int pid, const char *file)
{
	char path[512];
	int fd, e;

	make_path(fs, path, sizeof(path), pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	e = errno;
	if (e == ENOENT && pid > 0 && !pid_exists(fs, pid))
		return -ESRCH;
	return (int)read_failed(fs, pid, e);
}

long msc_proc_reread(struct msc_procfs *fs, int fd)
{
	size_t len = 0;

	for (;;) {
		size_t want;
		ssize_t n;

		if (fs->cap - len < 4096 && MSC_GROW(fs->buf, fs->cap + 1, fs->cap, 16384))
			return -ENOMEM;
		/* seq_file: a read at offset 0 starts a new walk of the file. */
		want = fs->cap - len - 1;
		n = pread(fd, fs->buf + len, want, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		len += (size_t)n;
		/*
		 * Short: the end (a /proc file of one record, as stat and
		 * smaps_rollup are, comes whole; so does a regular file), and
		 * no second call to learn it.
		 */
		if ((size_t)n < want)
			break;
	}
	fs->buf[len] = '\0';
	return (long)len;
}

int msc_proc_foreach_pid(struct msc_procfs *fs, int (*cb)(int pid, void *arg), void *arg)
{
	DIR *d = NULL;
	int ret = msc_proc_foreach_pid_at(fs, &d, cb, arg);

	if (d)
		closedir(d);
	return ret;
}

int msc_proc_foreach_pid_at(struct msc_procfs *fs, DIR **dir, int (*cb)(int pid, void *arg),
			    void *arg)
{
	struct dirent *de;
	int ret = 0;

	if (*dir)
		rewinddir(*dir);
	else if (!(*dir = opendir(fs->root)))
		return -errno;
	while ((de = readdir(*dir))) {
		const char *p;
		int pid = msc_name_pid(de->d_name, &p);

		if (!pid || *p)
			continue;
		ret = cb(pid, arg);
		if (ret)
			break;
	}
	return ret;
}

static uint64_t ticks_to_ns(struct msc_procfs *fs, uint64_t ticks)
{
	return ticks * (1000000000ull / (uint64_t)fs->clk_tck);
}

int msc_proc_stat(struct msc_procfs *fs, int pid, struct msc_pstat *st, struct msc_err *err)
{
	long len = msc_proc_read(fs, pid, "stat");

	if (len < 0)
		return (int)len;
	return msc_proc_parse_stat(fs, pid, st, err);
}

int msc_proc_parse_stat(struct msc_procfs *fs, int pid, struct msc_pstat *st, struct msc_err *err)
{
	unsigned long long f[23];
	const char *open_paren, *close_paren, *p;
	char *end;
	size_t clen;
	int n = 0;

	/* "pid (comm) state ...": comm may hold spaces and parentheses. */
	open_paren = strchr(fs->buf, '(');
	close_paren = strrchr(fs->buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return msc_err_set(err, -EINVAL, "%s/%d/stat: cannot parse", fs->root, pid);
	memset(st, 0, sizeof(*st));
	st->pid = (int)strtol(fs->buf, NULL, 10);
	clen = (size_t)(close_paren - open_paren - 1);
	if (clen >= sizeof(st->comm))
		clen = sizeof(st->comm) - 1;
	memcpy(st->comm, open_paren + 1, clen);
	st->comm[clen] = '\0';
	p = close_paren + 1;
	while (*p == ' ')
		p++;
	if (!*p)
		return msc_err_set(err, -EINVAL, "%s/%d/stat: cannot parse", fs->root, pid);
	st->state = *p++;
	/* f[0] is field 4 (ppid) of proc(5); f[20] is rss (field 24), f[22]
	 * startcode (26), the last used. */
	while (n < (int)ARRAY_SIZE(f)) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		if (*p == '-') {
			/* negative fields (priority, nice) */
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			f[n] = (unsigned long long)v;
			p = end;
		} else if (*p >= '0' && *p <= '9') {
			/* by hand: ms-top parses stat of every process each
			 * refresh, and stat holds plain decimals, which need
			 * none of strtoull's bases, signs and locale */
			unsigned long long v = 0;

			while (*p >= '0' && *p <= '9')
				v = v * 10 + (unsigned long long)(*p++ - '0');
			f[n] = v;
		} else {
			break;
		}
		n++;
	}
	if (n < 21)	/* up to rss (field 24) */
		return msc_err_set(err, -EINVAL, "%s/%d/stat: only %d fields", fs->root, pid, n + 3);
	st->ppid = (int)f[0];
	st->pgrp = (int)f[1];
	st->session = (int)f[2];
	st->flags = (unsigned)f[5];
	st->minflt = f[6];
	st->majflt = f[8];
	st->utime = ticks_to_ns(fs, f[10]);
	st->stime = ticks_to_ns(fs, f[11]);
	st->num_threads = (long)f[16];
	st->starttime = ticks_to_ns(fs, f[18]);
	st->vsize = f[19];
	st->rss = f[20] * (uint64_t)fs->page_size;
	st->start_code = n > 22 ? f[22] : 0;
	return 0;
}

int msc_proc_image(int pid, struct msc_image *im)
{
	struct msc_procfs fs;
	struct msc_pstat ps;
	char path[64];
	struct stat st;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return -errno;
	rc = msc_procfs_init(&fs, NULL);
	if (rc)
		return rc;
	rc = msc_proc_stat(&fs, pid, &ps, NULL);
	msc_procfs_release(&fs);
	if (rc)
		return rc;
	im->dev = st.st_dev;
	im->ino = st.st_ino;
	im->start_code = ps.start_code;
	return 0;
}

bool msc_image_same(const struct msc_image *a, const struct msc_image *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->start_code == b->start_code;
}

bool msc_proc_sees(int pid, const char *path)
{
	char there[512];
	struct stat a, b;

	if ((size_t)snprintf(there, sizeof(there), "/proc/%d/root%s", pid, path) >= sizeof(there))
		return false;
	return stat(path, &a) == 0 && stat(there, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

bool msc_proc_has_memory(int pid)
{
	char path[64], c;
	int fd;
	bool any;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	any = read(fd, &c, 1) == 1;
	close(fd);
	return any;
}

/* Parses "   1234 kB" (or a bare number) into bytes. */
static uint64_t kb_value(const char *p)
{
	uint64_t v = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	while (*p == ' ')
		p++;
	if (p[0] == 'k' && p[1] == 'B')
		v *= 1024;
	return v;
}

/* Walks "Key: value" lines of fs->buf calling cb(key, keylen, value). */
static void each_key(char *buf, void (*cb)(const char *key, size_t klen, const char *val, void *ctx),
		     void *ctx)
{
	char *line = buf;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		char *colon;

		if (nl)
			*nl = '\0';
		colon = strchr(line, ':');
		if (colon)
			cb(line, (size_t)(colon - line), colon + 1, ctx);
		line = nl ? nl + 1 : NULL;
	}
}

#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), (lit), (n)) == 0)

static void status_key(const char *k, size_t n, const char *v, void *ctx)
{
	struct msc_pstatus *st = ctx;

	switch (k[0]) {
	case 'N':
		if (KEY_IS(k, n, "Name")) {
			size_t l;

			while (*v == ' ' || *v == '\t')
				v++;
			l = strlen(v);
			if (l >= sizeof(st->name))
				l = sizeof(st->name) - 1;
			memcpy(st->name, v, l);
			st->name[l] = '\0';
		}
		break;
	case 'S':
		if (KEY_IS(k, n, "State")) {
			while (*v == ' ' || *v == '\t')
				v++;
			st->state = *v;
		}
		break;
	case 'T':
		if (KEY_IS(k, n, "Tgid"))
			st->tgid = (int)strtol(v, NULL, 10);
		else if (KEY_IS(k, n, "Threads"))
			st->threads = (int)strtol(v, NULL, 10);
		break;
	case 'P':
		if (KEY_IS(k, n, "PPid"))
			st->ppid = (int)strtol(v, NULL, 10);
		break;
	case 'U':
		if (KEY_IS(k, n, "Uid")) {
			char *e;

			st->uid = (unsigned)strtoul(v, &e, 10);
			st->euid = (unsigned)strtoul(e, NULL, 10);
		}
		break;
	case 'V':
		st->has_mem = true;
		if (KEY_IS(k, n, "VmPeak"))
			st->vm_peak = kb_value(v);
		else if (KEY_IS(k, n, "VmSize"))
			st->vm_size = kb_value(v);
		else if (KEY_IS(k, n, "VmHWM"))
			st->vm_hwm = kb_value(v);
		else if (KEY_IS(k, n, "VmRSS"))
			st->vm_rss = kb_value(v);
		else if (KEY_IS(k, n, "VmData"))
			st->vm_data = kb_value(v);
		else if (KEY_IS(k, n, "VmStk"))
			st->vm_stk = kb_value(v);
		else if (KEY_IS(k, n, "VmSwap"))
			st->vm_swap = kb_value(v);
		break;
	case 'R':
		if (KEY_IS(k, n, "RssAnon")) {
			st->rss_anon = kb_value(v);
			st->has_rss_split = true;
		} else if (KEY_IS(k, n, "RssFile")) {
			st->rss_file = kb_value(v);
		} else if (KEY_IS(k, n, "RssShmem")) {
			st->rss_shmem = kb_value(v);
		}
		break;
	}
}

int msc_proc_status(struct msc_procfs *fs, int pid, struct msc_pstatus *st, struct msc_err *err)
{
	long len = msc_proc_read(fs, pid, "status");

	if (len < 0)
		return (int)len;
	return msc_proc_parse_status(fs, pid, st, err);
}

int msc_proc_parse_status(struct msc_procfs *fs, int pid, struct msc_pstatus *st,
			  struct msc_err *err)
{
	memset(st, 0, sizeof(*st));
	each_key(fs->buf, status_key, st);
	if (!st->name[0] && !st->state)
		return msc_err_set(err, -EINVAL, "%s/%d/status: cannot parse", fs->root, pid);
	return 0;
}

int msc_proc_statm(struct msc_procfs *fs, int pid, struct msc_pstatm *st, struct msc_err *err)
{
	unsigned long long v[5];
	long len = msc_proc_read(fs, pid, "statm");
	uint64_t ps = (uint64_t)fs->page_size;

	if (len < 0)
		return (int)len;
	if (sscanf(fs->buf, "%llu %llu %llu %llu %*u %llu", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
		return msc_err_set(err, -EINVAL, "%s/%d/statm: cannot parse", fs->root, pid);
	st->size = v[0] * ps;
	st->resident = v[1] * ps;
	st->shared = v[2] * ps;
	st->text = v[3] * ps;
	st->data = v[4] * ps;
	return 0;
}

void msc_memcounts_add(struct msc_memcounts *to, const struct msc_memcounts *f)
{
	to->size += f->size;
	to->rss += f->rss;
	to->pss += f->pss;
	to->pss_dirty += f->pss_dirty;
	to->pss_anon += f->pss_anon;
	to->pss_file += f->pss_file;
	to->pss_shmem += f->pss_shmem;
	to->shared_clean += f->shared_clean;
	to->shared_dirty += f->shared_dirty;
	to->private_clean += f->private_clean;
	to->private_dirty += f->private_dirty;
	to->referenced += f->referenced;
	to->anonymous += f->anonymous;
	to->lazyfree += f->lazyfree;
	to->anon_huge += f->anon_huge;
	to->swap += f->swap;
	to->swap_pss += f->swap_pss;
	to->locked += f->locked;
	to->has_pss_split |= f->has_pss_split;
}

/* One "Key: N kB" line of smaps or smaps_rollup; returns false if unknown. */
static bool mem_key(struct msc_memcounts *mc, const char *k, size_t n, const char *v)
{
	uint64_t *slot = NULL;

	switch (k[0]) {
	case 'S':
		if (KEY_IS(k, n, "Size"))
			slot = &mc->size;
		else if (KEY_IS(k, n, "Shared_Clean"))
			slot = &mc->shared_clean;
		else if (KEY_IS(k, n, "Shared_Dirty"))
			slot = &mc->shared_dirty;
		else if (KEY_IS(k, n, "Swap"))
			slot = &mc->swap;
		else if (KEY_IS(k, n, "SwapPss"))
			slot = &mc->swap_pss;
		break;
	case 'R':
		if (KEY_IS(k, n, "Rss"))
			slot = &mc->rss;
		else if (KEY_IS(k, n, "Referenced"))
			slot = &mc->referenced;
		break;
	case 'P':
		if (KEY_IS(k, n, "Pss"))
			slot = &mc->pss;
		else if (KEY_IS(k, n, "Pss_Dirty"))
			slot = &mc->pss_dirty;
		else if (KEY_IS(k, n, "Pss_Anon"))
			slot = &mc->pss_anon, mc->has_pss_split = true;
		else if (KEY_IS(k, n, "Pss_File"))
			slot = &mc->pss_file;
		else if (KEY_IS(k, n, "Pss_Shmem"))
			slot = &mc->pss_shmem;
		else if (KEY_IS(k, n, "Private_Clean"))
			slot = &mc->private_clean;
		else if (KEY_IS(k, n, "Private_Dirty"))
			slot = &mc->private_dirty;
		break;
	case 'A':
		if (KEY_IS(k, n, "Anonymous"))
			slot = &mc->anonymous;
		else if (KEY_IS(k, n, "AnonHugePages"))
			slot = &mc->anon_huge;
		break;
	case 'L':
		if (KEY_IS(k, n, "LazyFree"))
			slot = &mc->lazyfree;
		else if (KEY_IS(k, n, "Locked"))
			slot = &mc->locked;
		break;
	}
	if (!slot)
		return false;
	*slot = kb_value(v);
	return true;
}

static void rollup_key(const char *k, size_t n, const char *v, void *ctx)
{
	mem_key(ctx, k, n, v);
}

static int sum_mapping(const struct msc_mapping *m, void *arg)
{
	msc_memcounts_add(arg, &m->mem);
	return 0;
}

int msc_proc_rollup(struct msc_procfs *fs, int pid, struct msc_memcounts *mc, bool *summed,
		    struct msc_err *err)
{
	long len = msc_proc_read(fs, pid, "smaps_rollup");

	memset(mc, 0, sizeof(*mc));
	if (summed)
		*summed = false;
	if (len == -ENOENT) {
		/* Before Linux 4.14: add up smaps (slower, same figures). */
		if (summed)
			*summed = true;
		return msc_proc_smaps(fs, pid, sum_mapping, mc, err);
	}
	if (len < 0)
		return (int)len;
	return msc_proc_parse_rollup(fs, len, mc);
}

int msc_proc_parse_rollup(struct msc_procfs *fs, long len, struct msc_memcounts *mc)
{
	char *body;

	memset(mc, 0, sizeof(*mc));
	if (len <= 0)
		return -ENODATA;
	/* Skip the "start-end ---p ... [rollup]" header line. */
	body = fs->buf;
	if (is_map_line(body)) {
		body = strchr(body, '\n');
		if (!body)
			return -ENODATA;
		body++;
	}
	each_key(body, rollup_key, mc);
	return 0;
}

/* Parses a maps header line into m; returns false if it is not one. */
static bool parse_map_line(char *line, struct msc_mapping *m)
{
	char *p = line, *e;

	memset(m, 0, sizeof(*m));
	m->start = strtoull(p, &e, 16);
	if (e == p || *e != '-')
		return false;
	p = e + 1;
	m->end = strtoull(p, &e, 16);
	if (e == p || *e != ' ')
		return false;
	p = e + 1;
	if (strlen(p) < 5 || p[4] != ' ')
		return false;
	memcpy(m->perms, p, 4);
	m->perms[4] = '\0';
	p += 5;
	m->offset = strtoull(p, &e, 16);
	if (e == p || *e != ' ')
		return false;
	p = e + 1;
	m->dev_major = (unsigned)strtoul(p, &e, 16);
	if (*e != ':')
		return false;
	p = e + 1;
	m->dev_minor = (unsigned)strtoul(p, &e, 16);
	if (*e != ' ')
		return false;
	p = e + 1;
	m->inode = strtoull(p, &e, 10);
	if (e == p)
		return false;
	p = e;
	while (*p == ' ')
		p++;
	m->path = p;
	{
		size_t l = strlen(p);
		static const char del[] = " (deleted)";

		if (l >= sizeof(del) - 1 && strcmp(p + l - (sizeof(del) - 1), del) == 0) {
			p[l - (sizeof(del) - 1)] = '\0';
			m->deleted = true;
		}
	}
	return true;
}

static int walk_maps(struct msc_procfs *fs, int pid, const char *file, bool smaps,
		     int (*cb)(const struct msc_mapping *m, void *arg), void *arg,
		     struct msc_err *err)
{
	struct msc_mapping cur;
	bool have = false;
	char *line;
	long len = msc_proc_read(fs, pid, file);
	int ret;

	if (len < 0)
		return (int)len;
	/*
	 * A kernel thread or a zombie has no mm: maps and smaps read empty
	 * (m_start() finds no mm) where smaps_rollup fails.  Every process
	 * with memory has at least its stack and [vdso] mapped.
	 */
	if (len == 0)
		return -ENODATA;
	line = fs->buf;
	while (line && *line) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (is_map_line(line)) {
			struct msc_mapping next;

			if (!parse_map_line(line, &next))
				return msc_err_set(err, -EINVAL, "%s/%d/%s: cannot parse line '%.60s'",
						   fs->root, pid, file, line);
			if (have) {
				ret = cb(&cur, arg);
				if (ret)
					return ret;
			}
			cur = next;
			have = true;
		} else if (smaps && have) {
			char *colon = strchr(line, ':');

			if (colon)
				mem_key(&cur.mem, line, (size_t)(colon - line), colon + 1);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (have)
		return cb(&cur, arg);
	return 0;
}

int msc_proc_maps(struct msc_procfs *fs, int pid,
		  int (*cb)(const struct msc_mapping *m, void *arg), void *arg,
		  struct msc_err *err)
{
	return walk_maps(fs, pid, "maps", false, cb, arg, err);
}

int msc_proc_smaps(struct msc_procfs *fs, int pid,
		   int (*cb)(const struct msc_mapping *m, void *arg), void *arg,
		   struct msc_err *err)
{
	return walk_maps(fs, pid, "smaps", true, cb, arg, err);
}

int msc_proc_cmdline(struct msc_procfs *fs, int pid,
		     void (*cb)(const char *arg, size_t len, void *ctx), void *ctx)
{
	long len = msc_proc_read(fs, pid, "cmdline");
	const char *p, *end;
	int n = 0;

	if (len < 0)
		return (int)len;
	p = fs->buf;
	end = fs->buf + len;
	while (p < end) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		size_t l = z ? (size_t)(z - p) : (size_t)(end - p);

		cb(p, l, ctx);
		n++;
		p += l + 1;
	}
	return n;
}

static void meminfo_key(const char *k, size_t n, const char *v, void *ctx)
{
	static const struct { const char *key; size_t off; } keys[] = {
#define K(name, field) { name, offsetof(struct msc_meminfo, field) }
		K("MemTotal", total), K("MemFree", free), K("MemAvailable", available),
		K("Buffers", buffers), K("Cached", cached), K("SwapCached", swap_cached),
		K("Active", active), K("Inactive", inactive), K("SwapTotal", swap_total),
		K("SwapFree", swap_free), K("Dirty", dirty), K("AnonPages", anon_pages),
		K("Mapped", mapped), K("Shmem", shmem), K("Slab", slab),
		K("SReclaimable", sreclaimable), K("SUnreclaim", sunreclaim),
		K("KernelStack", kernel_stack), K("PageTables", page_tables),
		K("CommitLimit", commit_limit), K("Committed_AS", committed_as),
		K("AnonHugePages", anon_huge), K("HugePages_Total", hugepages_total),
		K("Hugepagesize", hugepagesize),
#undef K
	};
	struct msc_meminfo *mi = ctx;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strlen(keys[i].key) == n && memcmp(keys[i].key, k, n) == 0) {
			*(uint64_t *)((char *)mi + keys[i].off) = kb_value(v);
			if (keys[i].off == offsetof(struct msc_meminfo, available))
				mi->has_available = true;
			return;
		}
	}
}

int msc_proc_meminfo(struct msc_procfs *fs, struct msc_meminfo *mi, struct msc_err *err)
{
	long len = msc_proc_read(fs, 0, "meminfo");

	if (len < 0)
		return msc_err_set(err, (int)len, "%s/meminfo: %s", fs->root, strerror((int)-len));
	memset(mi, 0, sizeof(*mi));
	each_key(fs->buf, meminfo_key, mi);
	if (!mi->total)
		return msc_err_set(err, -EINVAL, "%s/meminfo: no MemTotal", fs->root);
	return 0;
}

uint64_t msc_proc_boot_time(struct msc_procfs *fs)
{
	long len = msc_proc_read(fs, 0, "stat");
	const char *p;

	if (len < 0)
		return 0;
	p = strstr(fs->buf, "\nbtime ");
	return p ? strtoull(p + 7, NULL, 10) : 0;
}
