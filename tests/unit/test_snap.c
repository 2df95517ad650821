/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of msc_snap: snapshots of the fixture trees in
 * tests/fixtures/proc/<case>/ are written to a temporary file, read back
 * with msc_reader, and every figure is compared with the fixture's numbers
 * (kB * 1024; page size 4096 and 100 clock ticks per second, fixed in setup).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_snap.h"
#include "msc_util.h"

#define KB(n) ((uint64_t)(n) * 1024)
#define PAGES(n) ((uint64_t)(n) * 4096)
#define TICKS(n) ((uint64_t)(n) * 10000000ull)	/* at 100 Hz */

#define MAX_RECORDS 256

static const char *fixtures(void)
{
	const char *d = getenv("MSC_FIXTURES");

	return d ? d : "tests/fixtures/proc";
}

struct sx {
	struct msc_procfs fs;
	int fd;
	struct msc_writer w;
	struct msc_snapper s;
	bool snapper;
	struct msc_err err;
	/* what was written, split in lines */
	char *text;
	size_t len, nrec;
	size_t off[MAX_RECORDS], llen[MAX_RECORDS];
	struct msc_reader r;
	bool reader;
	struct msc_rec rec;
};

/* state: the case name, replaced by a struct sx. */
static int setup_case(void **state)
{
	struct sx *x = calloc(1, sizeof(*x));
	char root[256], tmp[] = "/tmp/msc-snap-XXXXXX";

	if (!x)
		return -1;
	snprintf(root, sizeof(root), "%s/%s", fixtures(), (const char *)*state);
	if (msc_procfs_init(&x->fs, root))
		return -1;
	x->fs.page_size = 4096;
	x->fs.clk_tck = 100;
	x->fd = mkstemp(tmp);
	if (x->fd < 0)
		return -1;
	unlink(tmp);
	if (msc_writer_init(&x->w, x->fd, 0))
		return -1;
	*state = x;
	return 0;
}

static int teardown_case(void **state)
{
	struct sx *x = *state;

	if (x->reader)
		msc_reader_release(&x->r);
	if (x->snapper)
		msc_snapper_release(&x->s);
	msc_writer_release(&x->w);
	close(x->fd);
	msc_procfs_release(&x->fs);
	free(x->text);
	free(x);
	return 0;
}

#define CASE(fn, name) cmocka_unit_test_prestate_setup_teardown(fn, setup_case, teardown_case, name)

static void start(struct sx *x, enum msc_snap_maps maps)
{
	msc_snapper_init(&x->s, &x->fs, &x->w, maps);
	x->snapper = true;
}

/* Flushes the writer and splits what it wrote into records. */
static size_t finish(struct sx *x)
{
	off_t size;
	size_t i;

	assert_int_equal(msc_writer_flush(&x->w), 0);
	size = lseek(x->fd, 0, SEEK_END);
	assert_true(size >= 0);
	x->text = malloc((size_t)size + 1);
	assert_non_null(x->text);
	assert_int_equal(pread(x->fd, x->text, (size_t)size, 0), size);
	x->len = (size_t)size;
	x->text[x->len] = '\0';
	x->nrec = 0;
	for (i = 0; i < x->len;) {
		char *nl = memchr(x->text + i, '\n', x->len - i);

		assert_non_null(nl);	/* every record ends its line */
		assert_true(x->nrec < MAX_RECORDS);
		x->off[x->nrec] = i;
		x->llen[x->nrec] = (size_t)(nl - x->text) - i;
		x->nrec++;
		i = (size_t)(nl - x->text) + 1;
	}
	return x->nrec;
}

/* Record i, parsed; valid until the next call. */
static const struct msc_rec *rec_at(struct sx *x, size_t i)
{
	struct msc_err err = { 0 };

	assert_true(i < x->nrec);
	if (x->reader)
		msc_reader_release(&x->r);
	msc_reader_init_mem(&x->r, x->text + x->off[i], x->llen[i] + 1, "snap");
	x->reader = true;
	if (msc_reader_next(&x->r, &x->rec, &err) != 1)
		fail_msg("record %zu is not valid: %s", i, err.msg);
	/* "type" first */
	assert_true(x->rec.nfields > 0);
	assert_int_equal(x->rec.fields[0].key_len, 4);
	assert_memory_equal(x->rec.fields[0].key, "type", 4);
	return &x->rec;
}

#define LINE(rec) (int)(rec)->len, (rec)->line

static void expect_type(const struct msc_rec *rec, const char *type)
{
	if (strcmp(rec->type, type) != 0)
		fail_msg("%.*s: type is not \"%s\"", LINE(rec), type);
}

static void expect_u64(const struct msc_rec *rec, const char *key, uint64_t want)
{
	uint64_t v = 0;
	int ret = msc_rec_u64(rec, key, &v);

	if (ret)
		fail_msg("%.*s: no integer \"%s\" (%d)", LINE(rec), key, ret);
	if (v != want)
		fail_msg("%.*s: \"%s\" is %" PRIu64 ", want %" PRIu64, LINE(rec), key, v, want);
}

static void expect_hex(const struct msc_rec *rec, const char *key, uint64_t want)
{
	const struct msc_field *f = msc_rec_field(rec, key);
	uint64_t v = 0;

	if (!f || f->val.kind != MSC_J_STR || msc_rec_hex(rec, key, &v))
		fail_msg("%.*s: no \"0x...\" string \"%s\"", LINE(rec), key);
	if (v != want)
		fail_msg("%.*s: \"%s\" is %#" PRIx64 ", want %#" PRIx64, LINE(rec), key, v, want);
}

static void expect_str(const struct msc_rec *rec, const char *key, const char *want)
{
	const char *s = msc_rec_str(rec, key, NULL);

	if (!s)
		fail_msg("%.*s: no string \"%s\"", LINE(rec), key);
	if (strcmp(s, want) != 0)
		fail_msg("%.*s: \"%s\" is \"%s\", want \"%s\"", LINE(rec), key, s, want);
}

static void expect_true(const struct msc_rec *rec, const char *key)
{
	bool b = false;

	if (msc_rec_bool(rec, key, &b) || !b)
		fail_msg("%.*s: \"%s\" is not true", LINE(rec), key);
}

static void expect_absent(const struct msc_rec *rec, const char *key)
{
	if (msc_rec_field(rec, key))
		fail_msg("%.*s: unexpected \"%s\"", LINE(rec), key);
}

static void expect_nfields(const struct msc_rec *rec, unsigned n)
{
	if (rec->nfields != n)
		fail_msg("%.*s: %u members, want %u", LINE(rec), rec->nfields, n);
}

/* The cmdline array, its elements joined with '|'. */
static void expect_cmdline(const struct msc_rec *rec, const char *want)
{
	const struct msc_field *f = msc_rec_field(rec, "cmdline");
	struct msc_arena a = MSC_ARENA_INIT;
	struct msc_jiter it;
	struct msc_jval v;
	char got[256] = "";
	unsigned n = 0;

	if (!f || f->val.kind != MSC_J_ARR)
		fail_msg("%.*s: no \"cmdline\" array", LINE(rec));
	assert_int_equal(msc_jiter_init(&it, &f->val), 0);
	while (msc_jiter_next(&it, NULL, &v) > 0) {
		const char *s;

		assert_int_equal(v.kind, MSC_J_STR);
		s = msc_jval_str(&v, &a, NULL);
		assert_non_null(s);
		if (n++)
			strncat(got, "|", sizeof(got) - strlen(got) - 1);
		strncat(got, s, sizeof(got) - strlen(got) - 1);
	}
	msc_arena_release(&a);
	if (strcmp(got, want) != 0)
		fail_msg("%.*s: cmdline is \"%s\", want \"%s\"", LINE(rec), got, want);
}

/* A "mapping" record of MSC_SNAP_MAPS_GROUPED, figures in kB. */
struct group_want {
	const char *name, *kind;
	uint64_t count, size, rss, swap, pss, private_clean, private_dirty;
	uint64_t shared_clean, shared_dirty, anonymous, swap_pss, locked;
};

static void expect_group(const struct msc_rec *rec, int pid, const struct group_want *g)
{
	expect_type(rec, "mapping");
	expect_u64(rec, "pid", (uint64_t)pid);
	expect_str(rec, "name", g->name);
	expect_str(rec, "kind", g->kind);
	expect_u64(rec, "count", g->count);
	expect_u64(rec, "size", KB(g->size));
	expect_u64(rec, "rss", KB(g->rss));
	expect_u64(rec, "swap", KB(g->swap));
	expect_u64(rec, "pss", KB(g->pss));
	expect_u64(rec, "private_clean", KB(g->private_clean));
	expect_u64(rec, "private_dirty", KB(g->private_dirty));
	expect_u64(rec, "shared_clean", KB(g->shared_clean));
	expect_u64(rec, "shared_dirty", KB(g->shared_dirty));
	expect_u64(rec, "anonymous", KB(g->anonymous));
	expect_u64(rec, "swap_pss", KB(g->swap_pss));
	/* smaps has no Pss_Anon/File/Shmem: only smaps_rollup does */
	expect_absent(rec, "pss_anon");
	expect_absent(rec, "start");
	if (g->locked)
		expect_u64(rec, "locked", KB(g->locked));
	else
		expect_absent(rec, "locked");
	expect_nfields(rec, g->locked ? 16 : 15);
}

static void expect_groups(struct sx *x, size_t first, int pid, const struct group_want *g,
			  size_t n)
{
	size_t i;

	assert_int_equal(x->nrec, first + n);
	for (i = 0; i < n; i++)
		expect_group(rec_at(x, first + i), pid, &g[i]);
}

/* --------------------------------------------------------------- normal */

static void expect_normal_process(const struct msc_rec *rec)
{
	expect_type(rec, "process");
	expect_u64(rec, "pid", 4242);
	expect_u64(rec, "ppid", 4200);
	expect_str(rec, "comm", "sleep");
	expect_cmdline(rec, "sleep|100");
	expect_str(rec, "state", "S");
	expect_u64(rec, "starttime", TICKS(134249));
	expect_u64(rec, "threads", 1);
	expect_absent(rec, "kthread");
	expect_u64(rec, "uid", 1000);
	/* from status */
	expect_u64(rec, "rss", KB(1320));
	expect_u64(rec, "hwm", KB(1520));
	expect_u64(rec, "vsize", KB(2616));
	expect_u64(rec, "rss_anon", KB(232));
	expect_u64(rec, "rss_file", KB(1072));
	expect_u64(rec, "rss_shmem", KB(16));
	expect_u64(rec, "swap", KB(32));
	/* from smaps_rollup */
	expect_u64(rec, "pss", KB(532));
	expect_u64(rec, "pss_anon", KB(232));
	expect_u64(rec, "pss_file", KB(284));
	expect_u64(rec, "pss_shmem", KB(16));
	expect_u64(rec, "private_clean", KB(8));
	expect_u64(rec, "private_dirty", KB(248));
	expect_u64(rec, "shared_clean", KB(1064));
	expect_u64(rec, "shared_dirty", 0);
	expect_u64(rec, "anonymous", KB(232));
	expect_u64(rec, "swap_pss", KB(32));
	expect_absent(rec, "locked");
	expect_absent(rec, "rollup_from_smaps");
	expect_absent(rec, "missing");
	expect_nfields(rec, 26);
}

static void test_normal_quick(void **state)
{
	struct sx *x = *state;

	start(x, MSC_SNAP_MAPS_NONE);
	assert_int_equal(msc_snap_process(&x->s, 4242, &x->err), 0);
	assert_int_equal(x->s.processes, 1);
	assert_int_equal(x->s.partial, 0);
	assert_int_equal(finish(x), 1);
	expect_normal_process(rec_at(x, 0));
}

static const struct group_want normal_groups[] = {
	/* name, kind, count, size, rss, swap, pss, pc, pd, sc, sd, anon, swap_pss, locked */
	{ "/usr/bin/sleep", "file", 4, 40, 40, 0, 26, 0, 12, 28, 0, 12, 0, 0 },
	{ "[heap]", "heap", 1, 132, 100, 20, 100, 0, 100, 0, 0, 100, 20, 0 },
	/* two anonymous mappings, apart from each other */
	{ "[anon]", "anon", 2, 308, 84, 8, 84, 0, 84, 0, 0, 84, 8, 0 },
	{ "/opt/my app/data file.bin", "file", 1, 64, 16, 0, 8, 0, 0, 16, 0, 0, 0, 0 },
	/* " (deleted)" is not part of the name */
	{ "/memfd:pool", "shmem", 1, 16, 16, 0, 16, 0, 16, 0, 0, 0, 0, 0 },
	{ "/tmp/old lib.so", "file", 1, 16, 8, 0, 8, 8, 0, 0, 0, 0, 0, 0 },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "file", 5, 1876, 1040, 0, 278, 0, 24, 1016, 0,
	  24, 0, 0 },
	{ "[vvar]", "special", 1, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "[vvar_vclock]", "special", 1, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "[vdso]", "special", 1, 8, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0 },
	{ "[stack]", "stack", 1, 132, 12, 4, 12, 0, 12, 0, 0, 12, 4, 0 },
	{ "[vsyscall]", "special", 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
};

static void test_normal_grouped(void **state)
{
	struct sx *x = *state;
	uint64_t rss = 0, pss = 0, v;
	size_t i;

	start(x, MSC_SNAP_MAPS_GROUPED);
	assert_int_equal(msc_snap_process(&x->s, 4242, &x->err), 0);
	assert_int_equal(finish(x), 13);
	expect_normal_process(rec_at(x, 0));
	expect_groups(x, 1, 4242, normal_groups, ARRAY_SIZE(normal_groups));
	/* the groups add up to smaps_rollup */
	for (i = 1; i < x->nrec; i++) {
		const struct msc_rec *rec = rec_at(x, i);

		assert_int_equal(msc_rec_u64(rec, "rss", &v), 0);
		rss += v;
		assert_int_equal(msc_rec_u64(rec, "pss", &v), 0);
		pss += v;
	}
	assert_int_equal(rss, KB(1320));
	assert_int_equal(pss, KB(532));
}

struct all_want {
	const char *name, *kind;
	uint64_t start, end;
	const char *perms;
	uint64_t offset, inode;
	bool deleted;
	uint64_t rss, pss;	/* kB */
};

static const struct all_want normal_all[] = {
	{ "/usr/bin/sleep", "file", 0x5655301b8000, 0x5655301ba000, "r--p", 0, 248056, false, 8, 4 },
	{ "/usr/bin/sleep", "file", 0x5655301ba000, 0x5655301bf000, "r-xp", 0x2000, 248056, false,
	  20, 10 },
	{ "/usr/bin/sleep", "file", 0x5655301c0000, 0x5655301c2000, "r--p", 0x8000, 248056, false,
	  8, 8 },
	{ "/usr/bin/sleep", "file", 0x5655301c2000, 0x5655301c3000, "rw-p", 0xa000, 248056, false,
	  4, 4 },
	{ "[heap]", "heap", 0x56554ec66000, 0x56554ec87000, "rw-p", 0, 0, false, 100, 100 },
	{ "[anon]", "anon", 0x7f51f5400000, 0x7f51f5440000, "rw-p", 0, 0, false, 64, 64 },
	{ "/opt/my app/data file.bin", "file", 0x7f51f5440000, 0x7f51f5450000, "r--s", 0, 401,
	  false, 16, 8 },
	{ "/memfd:pool", "shmem", 0x7f51f5450000, 0x7f51f5454000, "rw-s", 0, 2048, true, 16, 16 },
	{ "/tmp/old lib.so", "file", 0x7f51f5454000, 0x7f51f5458000, "r--p", 0, 402, true, 8, 8 },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "file", 0x7f51f5503000, 0x7f51f5529000, "r--p", 0,
	  332835, false, 152, 38 },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "file", 0x7f51f5529000, 0x7f51f567f000, "r-xp",
	  0x26000, 332835, false, 800, 200 },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "file", 0x7f51f567f000, 0x7f51f56d2000, "r--p",
	  0x17c000, 332835, false, 64, 16 },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "file", 0x7f51f56d2000, 0x7f51f56d6000, "r--p",
	  0x1cf000, 332835, false, 16, 16 },
	{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "file", 0x7f51f56d6000, 0x7f51f56d8000, "rw-p",
	  0x1d3000, 332835, false, 8, 8 },
	{ "[anon]", "anon", 0x7f51f56d8000, 0x7f51f56e5000, "rw-p", 0, 0, false, 20, 20 },
	{ "[vvar]", "special", 0x7f51f56f2000, 0x7f51f56f6000, "r--p", 0, 0, false, 0, 0 },
	{ "[vvar_vclock]", "special", 0x7f51f56f6000, 0x7f51f56f8000, "r--p", 0, 0, false, 0, 0 },
	{ "[vdso]", "special", 0x7f51f56f8000, 0x7f51f56fa000, "r-xp", 0, 0, false, 4, 0 },
	{ "[stack]", "stack", 0x7ffea012d000, 0x7ffea014e000, "rw-p", 0, 0, false, 12, 12 },
	{ "[vsyscall]", "special", 0xffffffffff600000ull, 0xffffffffff601000ull, "--xp", 0, 0,
	  false, 0, 0 },
};

static void test_normal_all(void **state)
{
	struct sx *x = *state;
	const struct msc_rec *rec;
	size_t i;

	start(x, MSC_SNAP_MAPS_ALL);
	assert_int_equal(msc_snap_process(&x->s, 4242, &x->err), 0);
	assert_int_equal(finish(x), 1 + ARRAY_SIZE(normal_all));
	expect_normal_process(rec_at(x, 0));
	for (i = 0; i < ARRAY_SIZE(normal_all); i++) {
		const struct all_want *m = &normal_all[i];

		rec = rec_at(x, i + 1);
		expect_type(rec, "mapping");
		expect_u64(rec, "pid", 4242);
		expect_str(rec, "name", m->name);
		expect_str(rec, "kind", m->kind);
		expect_hex(rec, "start", m->start);
		expect_hex(rec, "end", m->end);
		expect_str(rec, "perms", m->perms);
		expect_u64(rec, "offset", m->offset);
		expect_u64(rec, "inode", m->inode);
		if (m->deleted)
			expect_true(rec, "deleted");
		else
			expect_absent(rec, "deleted");
		expect_u64(rec, "size", m->end - m->start);
		expect_u64(rec, "rss", KB(m->rss));
		expect_u64(rec, "pss", KB(m->pss));
		expect_absent(rec, "count");
		expect_nfields(rec, m->deleted ? 20 : 19);
	}
	/* every counter of one mapping */
	rec = rec_at(x, 5);	/* [heap] */
	expect_u64(rec, "swap", KB(20));
	expect_u64(rec, "private_clean", 0);
	expect_u64(rec, "private_dirty", KB(100));
	expect_u64(rec, "shared_clean", 0);
	expect_u64(rec, "shared_dirty", 0);
	expect_u64(rec, "anonymous", KB(100));
	expect_u64(rec, "swap_pss", KB(20));
	rec = rec_at(x, 7);	/* /opt/my app/data file.bin */
	expect_u64(rec, "shared_clean", KB(16));
	expect_u64(rec, "anonymous", 0);
}

static void test_normal_meminfo(void **state)
{
	struct sx *x = *state;
	const struct msc_rec *rec;

	start(x, MSC_SNAP_MAPS_NONE);
	assert_int_equal(msc_snap_meminfo(&x->s, &x->err), 0);
	assert_int_equal(finish(x), 1);
	rec = rec_at(x, 0);
	expect_type(rec, "meminfo");
	expect_u64(rec, "total", KB(8000000));
	expect_u64(rec, "free", KB(5000000));
	expect_u64(rec, "available", KB(6500000));
	expect_u64(rec, "buffers", KB(100000));
	expect_u64(rec, "cached", KB(1500000));
	expect_u64(rec, "shmem", KB(50000));
	expect_u64(rec, "anon_pages", KB(400000));
	expect_u64(rec, "mapped", KB(200000));
	expect_u64(rec, "slab", KB(90000));
	expect_u64(rec, "sreclaimable", KB(60000));
	expect_u64(rec, "kernel_stack", KB(8000));
	expect_u64(rec, "page_tables", KB(12000));
	expect_u64(rec, "swap_total", KB(2000000));
	expect_u64(rec, "swap_free", KB(1900000));
	expect_u64(rec, "committed_as", KB(3000000));
	expect_u64(rec, "commit_limit", KB(6000000));
	expect_nfields(rec, 17);
	assert_int_equal(x->s.processes, 0);
}

/* ------------------------------------------------------------ no_rollup */

static void test_no_rollup(void **state)
{
	static const struct group_want groups[] = {
		{ "/usr/bin/python3.5", "file", 3, 2488, 1408, 0, 808, 80, 128, 1200, 0, 128, 0, 0 },
		{ "[heap]", "heap", 1, 2048, 1800, 100, 1800, 0, 1800, 0, 0, 1800, 100, 0 },
		{ "[anon]", "anon", 1, 4096, 2048, 0, 2048, 0, 2048, 0, 0, 2048, 0, 2048 },
		{ "/lib/x86_64-linux-gnu/libc-2.24.so", "file", 3, 1816, 1024, 0, 124, 0, 24, 1000,
		  0, 24, 0, 0 },
		{ "[stack]", "stack", 1, 132, 24, 0, 24, 0, 24, 0, 0, 24, 0, 0 },
		{ "[vvar]", "special", 1, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
		{ "[vdso]", "special", 1, 8, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0 },
		{ "[vsyscall]", "special", 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	};
	struct sx *x = *state;
	const struct msc_rec *rec;

	start(x, MSC_SNAP_MAPS_GROUPED);
	assert_int_equal(msc_snap_process(&x->s, 3131, &x->err), 0);
	assert_int_equal(finish(x), 1 + ARRAY_SIZE(groups));
	rec = rec_at(x, 0);
	expect_type(rec, "process");
	expect_u64(rec, "pid", 3131);
	expect_u64(rec, "ppid", 3000);
	expect_str(rec, "comm", "python3");
	expect_cmdline(rec, "python3|-c|import time; time.sleep(100)");
	expect_str(rec, "state", "S");
	expect_u64(rec, "starttime", 5000000000000ull);
	expect_u64(rec, "threads", 3);
	expect_u64(rec, "uid", 33);
	expect_u64(rec, "rss", KB(6308));
	expect_u64(rec, "hwm", KB(6808));
	expect_u64(rec, "vsize", KB(10596));
	expect_u64(rec, "rss_anon", KB(4024));
	expect_u64(rec, "rss_file", KB(2284));
	expect_u64(rec, "rss_shmem", 0);
	expect_u64(rec, "swap", KB(100));
	/* summed from smaps: no Pss split, but Locked */
	expect_u64(rec, "pss", KB(4804));
	expect_absent(rec, "pss_anon");
	expect_absent(rec, "pss_file");
	expect_absent(rec, "pss_shmem");
	expect_u64(rec, "private_clean", KB(80));
	expect_u64(rec, "private_dirty", KB(4024));
	expect_u64(rec, "shared_clean", KB(2204));
	expect_u64(rec, "shared_dirty", 0);
	expect_u64(rec, "anonymous", KB(4024));
	expect_u64(rec, "swap_pss", KB(100));
	expect_u64(rec, "locked", KB(2048));
	expect_true(rec, "rollup_from_smaps");
	expect_absent(rec, "missing");
	expect_nfields(rec, 25);
	expect_groups(x, 1, 3131, groups, ARRAY_SIZE(groups));
}

/* ----------------------------------------------------------- old_status */

static void test_old_status(void **state)
{
	static const struct group_want groups[] = {
		{ "/opt/weird/my (weird) prog", "file", 2, 48, 44, 0, 44, 40, 4, 0, 0, 4, 0, 0 },
		{ "[heap]", "heap", 1, 132, 60, 0, 60, 0, 60, 0, 0, 60, 0, 0 },
		{ "[anon]", "anon", 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
		/* [stack:778] (a thread's, before 4.5) and [stack] */
		{ "[stack]", "stack", 2, 8324, 36, 12, 36, 0, 36, 0, 0, 36, 0, 0 },
		{ "/usr/lib64/libc-2.17.so", "file", 1, 1752, 800, 0, 160, 0, 0, 800, 0, 0, 0, 0 },
		{ "[vdso]", "special", 1, 8, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0 },
		{ "[vsyscall]", "special", 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	};
	struct sx *x = *state;
	const struct msc_rec *rec;

	start(x, MSC_SNAP_MAPS_GROUPED);
	assert_int_equal(msc_snap_process(&x->s, 777, &x->err), 0);
	assert_int_equal(finish(x), 1 + ARRAY_SIZE(groups));
	rec = rec_at(x, 0);
	expect_type(rec, "process");
	expect_u64(rec, "pid", 777);
	expect_u64(rec, "ppid", 1);
	expect_str(rec, "comm", "my (weird) prog");
	expect_cmdline(rec, "/opt/weird/my (weird) prog|--name=a b");
	expect_u64(rec, "starttime", TICKS(9000));
	expect_u64(rec, "threads", 2);
	expect_u64(rec, "uid", 500);
	expect_u64(rec, "rss", KB(944));
	expect_u64(rec, "hwm", KB(1044));
	expect_u64(rec, "vsize", KB(10268));
	/* before 4.5: no split of rss, and the record does not invent one */
	expect_absent(rec, "rss_anon");
	expect_absent(rec, "rss_file");
	expect_absent(rec, "rss_shmem");
	expect_u64(rec, "swap", KB(12));
	expect_u64(rec, "pss", KB(300));
	expect_u64(rec, "private_clean", KB(40));
	expect_u64(rec, "private_dirty", KB(100));
	expect_u64(rec, "shared_clean", KB(804));
	expect_u64(rec, "shared_dirty", 0);
	expect_u64(rec, "anonymous", KB(100));
	expect_u64(rec, "swap_pss", 0);
	expect_true(rec, "rollup_from_smaps");
	expect_nfields(rec, 21);
	expect_groups(x, 1, 777, groups, ARRAY_SIZE(groups));
}

static void test_old_meminfo(void **state)
{
	struct sx *x = *state;
	const struct msc_rec *rec;

	start(x, MSC_SNAP_MAPS_NONE);
	assert_int_equal(msc_snap_meminfo(&x->s, &x->err), 0);
	assert_int_equal(finish(x), 1);
	rec = rec_at(x, 0);
	expect_type(rec, "meminfo");
	expect_u64(rec, "total", KB(1016232));
	/* before 3.14: omitted, not estimated */
	expect_absent(rec, "available");
	expect_u64(rec, "free", KB(400000));
	expect_u64(rec, "cached", KB(300000));
	expect_u64(rec, "swap_total", KB(1048572));
	expect_nfields(rec, 16);
}

/* -------------------------------------------------------------- zombie */

static void test_zombie(void **state)
{
	struct sx *x = *state;
	const struct msc_rec *rec;

	start(x, MSC_SNAP_MAPS_GROUPED);
	assert_int_equal(msc_snap_process(&x->s, 5001, &x->err), 0);
	assert_int_equal(x->s.partial, 0);
	/* no memory: no figures and no mapping records, and nothing "missing" */
	assert_int_equal(finish(x), 1);
	rec = rec_at(x, 0);
	expect_type(rec, "process");
	expect_u64(rec, "pid", 5001);
	expect_u64(rec, "ppid", 5000);
	expect_str(rec, "comm", "zomb");
	expect_cmdline(rec, "");
	expect_str(rec, "state", "Z");
	expect_u64(rec, "starttime", TICKS(135041));
	expect_u64(rec, "threads", 1);
	expect_u64(rec, "uid", 0);
	expect_absent(rec, "rss");
	expect_absent(rec, "pss");
	expect_absent(rec, "missing");
	expect_absent(rec, "rollup_from_smaps");
	expect_nfields(rec, 9);
}

static void test_zombie_parent_partial(void **state)
{
	struct sx *x = *state;
	const struct msc_rec *rec;

	/* 5000's directory has only stat and cmdline: figures from stat */
	start(x, MSC_SNAP_MAPS_GROUPED);
	assert_int_equal(msc_snap_process(&x->s, 5000, &x->err), 1);
	assert_int_equal(x->err.code, 1);
	assert_string_equal(x->err.msg,
			    "pid 5000: status: No such file or directory, smaps_rollup: No such file "
			    "or directory, smaps: No such file or directory (figures omitted)");
	assert_int_equal(x->s.processes, 1);
	assert_int_equal(x->s.partial, 1);
	assert_int_equal(finish(x), 1);
	rec = rec_at(x, 0);
	expect_type(rec, "process");
	expect_u64(rec, "pid", 5000);
	expect_cmdline(rec, "/tmp/zomb");
	expect_u64(rec, "rss", PAGES(251));
	expect_u64(rec, "vsize", 2625536);
	expect_absent(rec, "uid");
	expect_absent(rec, "pss");
	expect_str(rec, "missing",
		   "status: No such file or directory, smaps_rollup: No such file or directory");
	expect_nfields(rec, 11);

	/* the same snapper goes on with the next process */
	assert_int_equal(msc_snap_process(&x->s, 5001, &x->err), 0);
	assert_int_equal(x->s.processes, 2);
	assert_int_equal(x->s.partial, 1);
}

/* ------------------------------------------------------------- kthread */

static void test_kthread(void **state)
{
	struct sx *x = *state;
	const struct msc_rec *rec;

	start(x, MSC_SNAP_MAPS_ALL);
	assert_int_equal(msc_snap_process(&x->s, 2, &x->err), 0);
	assert_int_equal(x->s.partial, 0);
	assert_int_equal(finish(x), 1);
	rec = rec_at(x, 0);
	expect_type(rec, "process");
	expect_u64(rec, "pid", 2);
	expect_u64(rec, "ppid", 0);
	expect_str(rec, "comm", "kthreadd");
	expect_cmdline(rec, "");
	expect_str(rec, "state", "S");
	expect_u64(rec, "starttime", TICKS(10));
	expect_u64(rec, "threads", 1);
	expect_true(rec, "kthread");
	expect_u64(rec, "uid", 0);
	expect_absent(rec, "rss");
	expect_absent(rec, "pss");
	/* no smaps_rollup file here, but nothing was summed either */
	expect_absent(rec, "rollup_from_smaps");
	expect_absent(rec, "missing");
	expect_nfields(rec, 10);
}

/* ---------------------------------------------------------- unreadable */

static void test_unreadable(void **state)
{
	static const struct group_want groups[] = {
		{ "/usr/bin/true", "file", 1, 8, 8, 0, 4, 0, 0, 8, 0, 0, 0, 0 },
		{ "[heap]", "heap", 1, 132, 4, 0, 4, 0, 4, 0, 0, 4, 0, 0 },
		{ "[stack]", "stack", 1, 132, 8, 0, 8, 0, 8, 0, 0, 8, 0, 0 },
	};
	struct sx *x = *state;
	const struct msc_rec *rec;

	start(x, MSC_SNAP_MAPS_GROUPED);
	assert_int_equal(msc_snap_process(&x->s, 6000, &x->err), 1);
	assert_int_equal(x->err.code, 1);
	assert_string_equal(x->err.msg,
			    "pid 6000: smaps_rollup: Is a directory (figures omitted)");
	assert_int_equal(x->s.processes, 1);
	assert_int_equal(x->s.partial, 1);
	assert_int_equal(finish(x), 1 + ARRAY_SIZE(groups));
	rec = rec_at(x, 0);
	expect_type(rec, "process");
	expect_u64(rec, "pid", 6000);
	expect_str(rec, "comm", "true");
	expect_u64(rec, "rss", KB(20));
	expect_u64(rec, "hwm", KB(20));
	expect_u64(rec, "vsize", KB(272));
	expect_u64(rec, "rss_anon", KB(12));
	expect_u64(rec, "rss_file", KB(8));
	expect_u64(rec, "rss_shmem", 0);
	expect_u64(rec, "swap", 0);
	/* omitted, not zero */
	expect_absent(rec, "pss");
	expect_absent(rec, "private_dirty");
	expect_str(rec, "missing", "smaps_rollup: Is a directory");
	expect_nfields(rec, 17);
	/* smaps itself was readable */
	expect_groups(x, 1, 6000, groups, ARRAY_SIZE(groups));
}

/* ------------------------------------------------------------ vanished */

static void test_vanished(void **state)
{
	struct sx *x = *state;

	start(x, MSC_SNAP_MAPS_GROUPED);
	assert_int_equal(msc_snap_process(&x->s, 31337, &x->err), -ESRCH);
	assert_int_equal(x->err.code, -ESRCH);
	assert_string_equal(x->err.msg, "pid 31337: no such process");
	assert_int_equal(x->s.processes, 0);
	assert_int_equal(x->s.partial, 0);
	assert_int_equal(x->w.records, 0);
	assert_int_equal(finish(x), 0);
	/* the system's figures are still there */
	assert_int_equal(msc_snap_meminfo(&x->s, &x->err), 0);
}

static void test_no_meminfo(void **state)
{
	struct sx *x = *state;
	char want[300];

	start(x, MSC_SNAP_MAPS_NONE);
	assert_int_equal(msc_snap_meminfo(&x->s, &x->err), -ENOENT);
	snprintf(want, sizeof(want), "%s/meminfo: No such file or directory", x->fs.root);
	assert_string_equal(x->err.msg, want);
	assert_int_equal(finish(x), 0);
}

/* ---------------------------------------------------------- grouping */

static void test_mapping_group(void **state)
{
	static const struct {
		const char *path, *group, *kind;
	} cases[] = {
		{ "", "[anon]", "anon" },
		{ "[heap]", "[heap]", "heap" },
		{ "[stack]", "[stack]", "stack" },
		{ "[stack:778]", "[stack]", "stack" },
		{ "[anon:jemalloc pool]", "[anon:jemalloc pool]", "anon" },
		{ "[anon_shmem:ring]", "[anon_shmem:ring]", "shmem" },
		{ "[vdso]", "[vdso]", "special" },
		{ "[vvar]", "[vvar]", "special" },
		{ "[vvar_vclock]", "[vvar_vclock]", "special" },
		{ "[vsyscall]", "[vsyscall]", "special" },
		{ "[uprobes]", "[uprobes]", "special" },
		{ "/memfd:pool", "/memfd:pool", "shmem" },
		{ "/SYSV0000162e", "/SYSV0000162e", "shmem" },
		{ "/dev/shm/ring buffer", "/dev/shm/ring buffer", "shmem" },
		/* a shared anonymous mapping ("/dev/zero (deleted)" in maps) */
		{ "/dev/zero", "/dev/zero", "shmem" },
		{ "/dev/zero2", "/dev/zero2", "file" },
		{ "/dev/shmem", "/dev/shmem", "file" },
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
		  "file" },
		{ "/opt/my app/data file.bin", "/opt/my app/data file.bin", "file" },
		{ "/tmp/[heap]", "/tmp/[heap]", "file" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct msc_mapping m = { .path = cases[i].path };
		const char *kind = NULL;
		const char *group = msc_mapping_group(&m, &kind);

		assert_non_null(group);
		assert_non_null(kind);
		if (strcmp(group, cases[i].group) != 0 || strcmp(kind, cases[i].kind) != 0)
			fail_msg("'%s': group '%s' kind '%s', want '%s' '%s'", cases[i].path,
				 group, kind, cases[i].group, cases[i].kind);
	}
}

/* -------------------------------------------------------- many groups */

static void put(const char *root, const char *rel, const char *text)
{
	size_t len = strlen(text);
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/*
 * 150 libraries of two segments each, then each library's data segment
 * again further on: the group table grows past its first 64 and 128
 * entries, and a name seen long before still finds its group.
 */
static void test_many_groups(void **state)
{
	struct sx *x = *state;
	char root[] = "/tmp/msc-snap-XXXXXX", dir[64], cmd[96];
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	unsigned i, pass;
	uint64_t addr = 0x7f0000000000ull;
	int ret;

	assert_non_null(text);
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/9", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(root, "9/stat", "9 (many) S 1 9 9 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n");
	put(root, "9/status", "Name:\tmany\nState:\tS (sleeping)\nUid:\t0\t0\t0\t0\n"
	    "VmSize:\t    1800 kB\nVmRSS:\t    2400 kB\n");
	put(root, "9/smaps_rollup", "Rss:                2400 kB\nPss:                 900 kB\n");
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < 150; i++) {
			unsigned seg, nseg = pass ? 1 : 2;

			for (seg = 0; seg < nseg; seg++, addr += 0x1000)
				len += (size_t)snprintf(text + len, cap - len,
					"%012" PRIx64 "-%012" PRIx64 " r--p %08x fe:00 %u "
					"%*s/usr/lib/lib%u.so\n"
					"Size:                  4 kB\nRss:                   %u kB\n"
					"Pss:                   2 kB\nVmFlags: rd mr mw me \n",
					addr, addr + 0x1000, (pass * 2 + seg) * 0x1000, 1000 + i,
					20, "", i, 4u * (pass + 1));
		}
	put(root, "9/smaps", text);
	free(text);

	snprintf(x->fs.root, sizeof(x->fs.root), "%s", root);
	start(x, MSC_SNAP_MAPS_GROUPED);
	ret = msc_snap_process(&x->s, 9, &x->err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ret, 0);
	assert_int_equal(finish(x), 151);
	expect_u64(rec_at(x, 0), "rss", KB(2400));
	expect_u64(rec_at(x, 0), "pss", KB(900));
	for (i = 0; i < 150; i++) {
		const struct msc_rec *rec = rec_at(x, 1 + i);
		char name[32];

		snprintf(name, sizeof(name), "/usr/lib/lib%u.so", i);
		expect_str(rec, "name", name);
		expect_str(rec, "kind", "file");
		expect_u64(rec, "count", 3);
		expect_u64(rec, "size", KB(12));
		expect_u64(rec, "rss", KB(4 + 4 + 8));
		expect_u64(rec, "pss", KB(6));
	}
}

/* ---------------------------------------------------------- live kernel */

/* Kernel threads and zombies are snapshotted, not taken for gone. */
static void test_live(void **state)
{
	struct sx *x = *state;
	struct msc_pstat st;
	const struct msc_rec *rec;
	siginfo_t si;
	pid_t pid;
	int wstatus;
	size_t n = 0;
	bool kthreadd;

	if (access("/proc/self/smaps_rollup", R_OK) != 0)
		skip();
	strcpy(x->fs.root, "/proc");
	kthreadd = msc_proc_stat(&x->fs, 2, &st, NULL) == 0 && strcmp(st.comm, "kthreadd") == 0;
	x->fs.clk_tck = sysconf(_SC_CLK_TCK);
	x->fs.page_size = sysconf(_SC_PAGESIZE);
	start(x, MSC_SNAP_MAPS_GROUPED);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(msc_snap_process(&x->s, pid, &x->err), 0);
	if (kthreadd)
		assert_int_equal(msc_snap_process(&x->s, 2, &x->err), 0);
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	assert_int_equal(msc_snap_process(&x->s, pid, &x->err), -ESRCH);
	assert_int_equal(x->s.partial, 0);
	assert_int_equal(finish(x), kthreadd ? 2 : 1);

	rec = rec_at(x, n++);
	expect_type(rec, "process");
	expect_u64(rec, "pid", (uint64_t)pid);
	expect_u64(rec, "ppid", (uint64_t)getpid());
	expect_str(rec, "state", "Z");
	expect_cmdline(rec, "");
	expect_absent(rec, "rss");
	expect_absent(rec, "pss");
	expect_absent(rec, "missing");
	if (kthreadd) {
		rec = rec_at(x, n++);
		expect_u64(rec, "pid", 2);
		expect_true(rec, "kthread");
		expect_absent(rec, "pss");
		expect_absent(rec, "missing");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CASE(test_normal_quick, "normal"),
		CASE(test_normal_grouped, "normal"),
		CASE(test_normal_all, "normal"),
		CASE(test_normal_meminfo, "normal"),
		CASE(test_no_rollup, "no_rollup"),
		CASE(test_old_status, "old_status"),
		CASE(test_old_meminfo, "old_status"),
		CASE(test_zombie, "zombie"),
		CASE(test_zombie_parent_partial, "zombie"),
		CASE(test_kthread, "kthread"),
		CASE(test_unreadable, "unreadable"),
		CASE(test_vanished, "vanished"),
		CASE(test_no_meminfo, "no_such_case"),
		cmocka_unit_test(test_mapping_group),
		CASE(test_many_groups, "normal"),
		CASE(test_live, "normal"),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
