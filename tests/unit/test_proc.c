/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the /proc readers (msc_proc.h) against the fixture trees in
 * tests/fixtures/proc/<case>/ (see the README there for what each case
 * mirrors).  Expected figures are the fixtures' numbers converted to bytes
 * (kB * 1024, pages * 4096) and nanoseconds (ticks at 100 Hz): page size and
 * clock rate are fixed in setup so that the answers do not depend on the
 * machine running the tests.
 */
#include <errno.h>
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

#include "msc_proc.h"
#include "msc_util.h"

#define KB(n) ((uint64_t)(n) * 1024)
#define PAGES(n) ((uint64_t)(n) * 4096)
#define TICKS(n) ((uint64_t)(n) * 10000000ull)	/* at 100 Hz */

static const char *fixtures(void)
{
	const char *d = getenv("MSC_FIXTURES");

	return d ? d : "tests/fixtures/proc";
}

struct fx {
	struct msc_procfs fs;
	struct msc_err err;
};

/* state: the case name, replaced by a struct fx. */
static int setup_case(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char root[256];

	if (!fx)
		return -1;
	snprintf(root, sizeof(root), "%s/%s", fixtures(), (const char *)*state);
	if (msc_procfs_init(&fx->fs, root)) {
		free(fx);
		return -1;
	}
	fx->fs.page_size = 4096;
	fx->fs.clk_tck = 100;
	*state = fx;
	return 0;
}

static int teardown_case(void **state)
{
	struct fx *fx = *state;

	msc_procfs_release(&fx->fs);
	free(fx);
	return 0;
}

#define CASE(fn, name) cmocka_unit_test_prestate_setup_teardown(fn, setup_case, teardown_case, name)

/* ------------------------------------------------------------- helpers */

struct mapcopy {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	char path[128];
	bool deleted;
	struct msc_memcounts mem;
};

struct maplist {
	struct mapcopy m[32];
	size_t n;
	size_t stop_at;		/* return 7 after this many, 0 never */
};

static int collect(const struct msc_mapping *m, void *arg)
{
	struct maplist *l = arg;
	struct mapcopy *c;

	assert_true(l->n < ARRAY_SIZE(l->m));
	c = &l->m[l->n++];
	c->start = m->start;
	c->end = m->end;
	c->offset = m->offset;
	c->inode = m->inode;
	c->dev_major = m->dev_major;
	c->dev_minor = m->dev_minor;
	memcpy(c->perms, m->perms, sizeof(c->perms));
	assert_true(strlen(m->path) < sizeof(c->path));
	strcpy(c->path, m->path);
	c->deleted = m->deleted;
	c->mem = m->mem;
	if (l->stop_at && l->n == l->stop_at)
		return 7;
	return 0;
}

static void assert_map(const struct mapcopy *c, uint64_t start, uint64_t end, const char *perms,
		       uint64_t offset, unsigned maj, unsigned min, uint64_t inode, const char *path,
		       bool deleted)
{
	assert_int_equal(c->start, start);
	assert_int_equal(c->end, end);
	assert_string_equal(c->perms, perms);
	assert_int_equal(c->offset, offset);
	assert_int_equal(c->dev_major, maj);
	assert_int_equal(c->dev_minor, min);
	assert_int_equal(c->inode, inode);
	assert_string_equal(c->path, path);
	assert_int_equal(c->deleted, deleted);
}

/* Compares every counter (a macro, so that failures name the caller's line). */
#define ASSERT_COUNTS(got, ...) do {						\
	const struct msc_memcounts *g_ = (got);					\
	const struct msc_memcounts w_ = { __VA_ARGS__ };			\
	assert_int_equal(g_->size, w_.size);					\
	assert_int_equal(g_->rss, w_.rss);					\
	assert_int_equal(g_->pss, w_.pss);					\
	assert_int_equal(g_->pss_dirty, w_.pss_dirty);				\
	assert_int_equal(g_->pss_anon, w_.pss_anon);				\
	assert_int_equal(g_->pss_file, w_.pss_file);				\
	assert_int_equal(g_->pss_shmem, w_.pss_shmem);				\
	assert_int_equal(g_->shared_clean, w_.shared_clean);			\
	assert_int_equal(g_->shared_dirty, w_.shared_dirty);			\
	assert_int_equal(g_->private_clean, w_.private_clean);			\
	assert_int_equal(g_->private_dirty, w_.private_dirty);			\
	assert_int_equal(g_->referenced, w_.referenced);			\
	assert_int_equal(g_->anonymous, w_.anonymous);				\
	assert_int_equal(g_->lazyfree, w_.lazyfree);				\
	assert_int_equal(g_->anon_huge, w_.anon_huge);				\
	assert_int_equal(g_->swap, w_.swap);					\
	assert_int_equal(g_->swap_pss, w_.swap_pss);				\
	assert_int_equal(g_->locked, w_.locked);				\
	assert_int_equal(g_->has_pss_split, w_.has_pss_split);			\
} while (0)

struct args {
	char v[8][64];
	size_t n;
};

static void collect_arg(const char *arg, size_t len, void *ctx)
{
	struct args *a = ctx;

	assert_true(a->n < ARRAY_SIZE(a->v));
	assert_true(len < sizeof(a->v[0]));
	memcpy(a->v[a->n], arg, len);
	a->v[a->n][len] = '\0';
	a->n++;
}

struct pids {
	int pid[8];
	size_t n;
	size_t stop_at;
};

static int collect_pid(int pid, void *arg)
{
	struct pids *p = arg;

	assert_true(p->n < ARRAY_SIZE(p->pid));
	p->pid[p->n++] = pid;
	return p->stop_at && p->n == p->stop_at ? 42 : 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int never_called(const struct msc_mapping *m, void *arg)
{
	(void)m;
	(void)arg;
	fail_msg("callback called for a process without memory map");
	return 0;
}

static void arg_never_called(const char *arg, size_t len, void *ctx)
{
	(void)arg;
	(void)len;
	(void)ctx;
	fail_msg("cmdline callback called for an empty cmdline");
}

/* ------------------------------------------------------------ procfs */

static void test_procfs_init(void **state)
{
	struct msc_procfs fs;
	char longroot[300];

	(void)state;
	assert_int_equal(msc_procfs_init(&fs, NULL), 0);
	assert_string_equal(fs.root, "/proc");
	assert_null(fs.buf);
	assert_true(fs.page_size > 0);
	assert_true(fs.clk_tck > 0);
	msc_procfs_release(&fs);

	memset(longroot, 'x', sizeof(longroot) - 1);
	longroot[sizeof(longroot) - 1] = '\0';
	assert_int_equal(msc_procfs_init(&fs, longroot), -ENAMETOOLONG);
	longroot[255] = '\0';	/* 255 characters fit in root[256] */
	assert_int_equal(msc_procfs_init(&fs, longroot), 0);
	assert_int_equal(strlen(fs.root), 255);
	msc_procfs_release(&fs);
}

/* ------------------------------------------------------------ normal */

static void test_normal_read(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(msc_proc_read(&fx->fs, 4242, "statm"), 22);
	assert_string_equal(fx->fs.buf, "654 330 272 5 0 146 0\n");
	assert_int_equal(msc_proc_read(&fx->fs, 4242, "cmdline"), 10);
	assert_memory_equal(fx->fs.buf, "sleep\0" "100\0", 10);
	/* The pid is there, the file is not: this kernel lacks it. */
	assert_int_equal(msc_proc_read(&fx->fs, 4242, "no_such_file"), -ENOENT);
	/* smaps is larger than the first buffer (16 KiB - 4 KiB). */
	assert_int_equal(msc_proc_read(&fx->fs, 4242, "smaps"), 15609);
	assert_int_equal(strlen(fx->fs.buf), 15609);
	assert_true(fx->fs.cap > 15609);
}

static void test_normal_stat(void **state)
{
	struct fx *fx = *state;
	struct msc_pstat st;

	assert_int_equal(msc_proc_stat(&fx->fs, 4242, &st, &fx->err), 0);
	assert_int_equal(st.pid, 4242);
	assert_string_equal(st.comm, "sleep");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 4200);
	assert_int_equal(st.pgrp, 4242);
	assert_int_equal(st.session, 4100);
	assert_int_equal(st.flags, 4194304);	/* PF_RANDOMIZE */
	assert_false(st.flags & MSC_PF_KTHREAD);
	assert_int_equal(st.minflt, 138);
	assert_int_equal(st.majflt, 2);
	assert_int_equal(st.utime, TICKS(15));
	assert_int_equal(st.utime, 150000000);
	assert_int_equal(st.stime, TICKS(7));
	assert_int_equal(st.num_threads, 1);
	assert_int_equal(st.starttime, 1342490000000ull);
	assert_int_equal(st.vsize, KB(2616));
	assert_int_equal(st.rss, PAGES(330));
}

static void test_normal_status(void **state)
{
	struct fx *fx = *state;
	struct msc_pstatus st;

	assert_int_equal(msc_proc_status(&fx->fs, 4242, &st, &fx->err), 0);
	assert_string_equal(st.name, "sleep");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.tgid, 4242);
	assert_int_equal(st.ppid, 4200);
	assert_int_equal(st.uid, 1000);
	assert_int_equal(st.euid, 1000);
	assert_int_equal(st.threads, 1);
	assert_true(st.has_mem);
	assert_true(st.has_rss_split);
	assert_int_equal(st.vm_peak, KB(2736));
	assert_int_equal(st.vm_size, KB(2616));
	assert_int_equal(st.vm_hwm, KB(1520));
	assert_int_equal(st.vm_rss, KB(1320));
	assert_int_equal(st.rss_anon, KB(232));
	assert_int_equal(st.rss_file, KB(1072));
	assert_int_equal(st.rss_shmem, KB(16));
	assert_int_equal(st.rss_anon + st.rss_file + st.rss_shmem, st.vm_rss);
	assert_int_equal(st.vm_data, KB(452));
	assert_int_equal(st.vm_stk, KB(132));
	assert_int_equal(st.vm_swap, KB(32));
}

static void test_normal_statm(void **state)
{
	struct fx *fx = *state;
	struct msc_pstatm st;

	assert_int_equal(msc_proc_statm(&fx->fs, 4242, &st, &fx->err), 0);
	assert_int_equal(st.size, PAGES(654));
	assert_int_equal(st.resident, PAGES(330));
	assert_int_equal(st.shared, PAGES(272));
	assert_int_equal(st.text, PAGES(5));
	assert_int_equal(st.data, PAGES(146));	/* field 6: lib (0) is skipped */
}

static void test_normal_rollup(void **state)
{
	struct fx *fx = *state;
	struct msc_memcounts mc;
	bool summed = true;

	assert_int_equal(msc_proc_rollup(&fx->fs, 4242, &mc, &summed, &fx->err), 0);
	assert_false(summed);
	/* smaps_rollup has no Size line; the [rollup] header is skipped. */
	ASSERT_COUNTS(&mc, .size = 0, .rss = KB(1320), .pss = KB(532), .pss_dirty = KB(248),
		      .pss_anon = KB(232), .pss_file = KB(284), .pss_shmem = KB(16),
		      .shared_clean = KB(1064), .shared_dirty = 0, .private_clean = KB(8),
		      .private_dirty = KB(248), .referenced = KB(1320), .anonymous = KB(232),
		      .swap = KB(32), .swap_pss = KB(32), .locked = 0, .has_pss_split = true);
	/* summed may be NULL */
	assert_int_equal(msc_proc_rollup(&fx->fs, 4242, &mc, NULL, NULL), 0);
	assert_int_equal(mc.pss, KB(532));
}

static void test_normal_maps(void **state)
{
	struct fx *fx = *state;
	struct maplist *l = calloc(1, sizeof(*l));
	size_t i;

	assert_int_equal(msc_proc_maps(&fx->fs, 4242, collect, l, &fx->err), 0);
	assert_int_equal(l->n, 20);
	assert_map(&l->m[0], 0x5655301b8000, 0x5655301ba000, "r--p", 0, 0xfe, 0, 248056,
		   "/usr/bin/sleep", false);
	assert_map(&l->m[1], 0x5655301ba000, 0x5655301bf000, "r-xp", 0x2000, 0xfe, 0, 248056,
		   "/usr/bin/sleep", false);
	assert_map(&l->m[3], 0x5655301c2000, 0x5655301c3000, "rw-p", 0xa000, 0xfe, 0, 248056,
		   "/usr/bin/sleep", false);
	assert_map(&l->m[4], 0x56554ec66000, 0x56554ec87000, "rw-p", 0, 0, 0, 0, "[heap]", false);
	assert_map(&l->m[5], 0x7f51f5400000, 0x7f51f5440000, "rw-p", 0, 0, 0, 0, "", false);
	assert_map(&l->m[6], 0x7f51f5440000, 0x7f51f5450000, "r--s", 0, 0xfe, 0, 401,
		   "/opt/my app/data file.bin", false);
	assert_map(&l->m[7], 0x7f51f5450000, 0x7f51f5454000, "rw-s", 0, 0, 1, 2048,
		   "/memfd:pool", true);
	assert_map(&l->m[8], 0x7f51f5454000, 0x7f51f5458000, "r--p", 0, 0xfe, 0, 402,
		   "/tmp/old lib.so", true);
	for (i = 9; i < 14; i++)
		assert_string_equal(l->m[i].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_map(&l->m[10], 0x7f51f5529000, 0x7f51f567f000, "r-xp", 0x26000, 0xfe, 0, 332835,
		   "/usr/lib/x86_64-linux-gnu/libc.so.6", false);
	assert_map(&l->m[14], 0x7f51f56d8000, 0x7f51f56e5000, "rw-p", 0, 0, 0, 0, "", false);
	assert_string_equal(l->m[15].path, "[vvar]");
	assert_string_equal(l->m[16].path, "[vvar_vclock]");
	assert_map(&l->m[17], 0x7f51f56f8000, 0x7f51f56fa000, "r-xp", 0, 0, 0, 0, "[vdso]", false);
	assert_map(&l->m[18], 0x7ffea012d000, 0x7ffea014e000, "rw-p", 0, 0, 0, 0, "[stack]", false);
	assert_map(&l->m[19], 0xffffffffff600000ull, 0xffffffffff601000ull, "--xp", 0, 0, 0, 0,
		   "[vsyscall]", false);
	/* maps has no counters */
	for (i = 0; i < l->n; i++)
		ASSERT_COUNTS(&l->m[i].mem, .size = 0);
	free(l);
}

static void test_normal_smaps(void **state)
{
	struct fx *fx = *state;
	struct maplist *l = calloc(1, sizeof(*l));
	struct msc_memcounts sum = { 0 }, roll;
	size_t i;

	assert_int_equal(msc_proc_smaps(&fx->fs, 4242, collect, l, &fx->err), 0);
	assert_int_equal(l->n, 20);
	/* the same headers as maps */
	assert_map(&l->m[7], 0x7f51f5450000, 0x7f51f5454000, "rw-s", 0, 0, 1, 2048,
		   "/memfd:pool", true);
	assert_map(&l->m[19], 0xffffffffff600000ull, 0xffffffffff601000ull, "--xp", 0, 0, 0, 0,
		   "[vsyscall]", false);
	ASSERT_COUNTS(&l->m[0].mem, .size = KB(8), .rss = KB(8), .pss = KB(4),
		      .shared_clean = KB(8), .referenced = KB(8));
	ASSERT_COUNTS(&l->m[2].mem, .size = KB(8), .rss = KB(8), .pss = KB(8), .pss_dirty = KB(8),
		      .private_dirty = KB(8), .referenced = KB(8), .anonymous = KB(8));
	ASSERT_COUNTS(&l->m[4].mem, .size = KB(132), .rss = KB(100), .pss = KB(100),
		      .pss_dirty = KB(100), .private_dirty = KB(100), .referenced = KB(100),
		      .anonymous = KB(100), .swap = KB(20), .swap_pss = KB(20));
	ASSERT_COUNTS(&l->m[5].mem, .size = KB(256), .rss = KB(64), .pss = KB(64),
		      .pss_dirty = KB(64), .private_dirty = KB(64), .referenced = KB(64),
		      .anonymous = KB(64), .swap = KB(8), .swap_pss = KB(8));
	ASSERT_COUNTS(&l->m[6].mem, .size = KB(64), .rss = KB(16), .pss = KB(8),
		      .shared_clean = KB(16), .referenced = KB(16));
	ASSERT_COUNTS(&l->m[7].mem, .size = KB(16), .rss = KB(16), .pss = KB(16),
		      .pss_dirty = KB(16), .private_dirty = KB(16), .referenced = KB(16));
	ASSERT_COUNTS(&l->m[8].mem, .size = KB(16), .rss = KB(8), .pss = KB(8),
		      .private_clean = KB(8), .referenced = KB(8));
	ASSERT_COUNTS(&l->m[10].mem, .size = KB(1368), .rss = KB(800), .pss = KB(200),
		      .shared_clean = KB(800), .referenced = KB(800));
	ASSERT_COUNTS(&l->m[15].mem, .size = KB(16));
	ASSERT_COUNTS(&l->m[17].mem, .size = KB(8), .rss = KB(4), .pss = 0,
		      .shared_clean = KB(4), .referenced = KB(4));
	ASSERT_COUNTS(&l->m[18].mem, .size = KB(132), .rss = KB(12), .pss = KB(12),
		      .pss_dirty = KB(12), .private_dirty = KB(12), .referenced = KB(12),
		      .anonymous = KB(12), .swap = KB(4), .swap_pss = KB(4));
	ASSERT_COUNTS(&l->m[19].mem, .size = KB(4));
	for (i = 0; i < l->n; i++) {
		/* Size is the mapping's extent */
		assert_int_equal(l->m[i].mem.size, l->m[i].end - l->m[i].start);
		msc_memcounts_add(&sum, &l->m[i].mem);
	}
	/* The mappings add up to smaps_rollup, apart from its Pss split. */
	ASSERT_COUNTS(&sum, .size = KB(2620), .rss = KB(1320), .pss = KB(532), .pss_dirty = KB(248),
		      .shared_clean = KB(1064), .private_clean = KB(8), .private_dirty = KB(248),
		      .referenced = KB(1320), .anonymous = KB(232), .swap = KB(32),
		      .swap_pss = KB(32));
	assert_int_equal(msc_proc_rollup(&fx->fs, 4242, &roll, NULL, NULL), 0);
	assert_int_equal(sum.rss, roll.rss);
	assert_int_equal(sum.pss, roll.pss);
	assert_int_equal(sum.pss, roll.pss_anon + roll.pss_file + roll.pss_shmem);
	free(l);
}

static void test_normal_smaps_stop(void **state)
{
	struct fx *fx = *state;
	struct maplist *l = calloc(1, sizeof(*l));

	l->stop_at = 3;
	assert_int_equal(msc_proc_smaps(&fx->fs, 4242, collect, l, &fx->err), 7);
	assert_int_equal(l->n, 3);
	assert_int_equal(l->m[2].mem.rss, KB(8));
	l->n = 0;
	l->stop_at = 20;	/* the last mapping goes through another path */
	assert_int_equal(msc_proc_maps(&fx->fs, 4242, collect, l, &fx->err), 7);
	assert_int_equal(l->n, 20);
	free(l);
}

static void test_normal_cmdline(void **state)
{
	struct fx *fx = *state;
	struct args a = { .n = 0 };

	assert_int_equal(msc_proc_cmdline(&fx->fs, 4242, collect_arg, &a), 2);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.v[0], "sleep");
	assert_string_equal(a.v[1], "100");
}

static void test_normal_meminfo(void **state)
{
	struct fx *fx = *state;
	struct msc_meminfo mi;

	assert_int_equal(msc_proc_meminfo(&fx->fs, &mi, &fx->err), 0);
	assert_true(mi.has_available);
	assert_int_equal(mi.total, KB(8000000));
	assert_int_equal(mi.free, KB(5000000));
	assert_int_equal(mi.available, KB(6500000));
	assert_int_equal(mi.buffers, KB(100000));
	assert_int_equal(mi.cached, KB(1500000));
	assert_int_equal(mi.swap_cached, KB(1000));
	/* "Active", not "Active(anon)" or "Active(file)" */
	assert_int_equal(mi.active, KB(900000));
	assert_int_equal(mi.inactive, KB(1200000));
	assert_int_equal(mi.swap_total, KB(2000000));
	assert_int_equal(mi.swap_free, KB(1900000));
	assert_int_equal(mi.dirty, KB(300));
	assert_int_equal(mi.anon_pages, KB(400000));
	assert_int_equal(mi.mapped, KB(200000));
	assert_int_equal(mi.shmem, KB(50000));
	assert_int_equal(mi.slab, KB(90000));
	assert_int_equal(mi.sreclaimable, KB(60000));
	assert_int_equal(mi.sunreclaim, KB(30000));
	assert_int_equal(mi.kernel_stack, KB(8000));
	assert_int_equal(mi.page_tables, KB(12000));
	assert_int_equal(mi.commit_limit, KB(6000000));
	assert_int_equal(mi.committed_as, KB(3000000));
	/* "AnonHugePages", not "ShmemHugePages" */
	assert_int_equal(mi.anon_huge, KB(4096));
	assert_int_equal(mi.hugepages_total, 0);
	assert_int_equal(mi.hugepagesize, KB(2048));
}

static void test_normal_boot_time(void **state)
{
	struct fx *fx = *state;

	assert_int_equal(msc_proc_boot_time(&fx->fs), 1700000000);
}

static void test_normal_foreach(void **state)
{
	struct fx *fx = *state;
	struct pids p = { .n = 0 };

	/* meminfo and stat are skipped: only numeric entries are pids */
	assert_int_equal(msc_proc_foreach_pid(&fx->fs, collect_pid, &p), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.pid[0], 4242);
}

/* ---------------------------------------------------------- no_rollup */

static void test_no_rollup_rollup(void **state)
{
	struct fx *fx = *state;
	struct msc_memcounts mc;
	bool summed = false;

	/* Linux 4.9: no smaps_rollup, but the process exists. */
	assert_int_equal(msc_proc_read(&fx->fs, 3131, "smaps_rollup"), -ENOENT);
	assert_int_equal(msc_proc_rollup(&fx->fs, 3131, &mc, &summed, &fx->err), 0);
	assert_true(summed);
	/* The sum of the 12 mappings of smaps; smaps has Size but no Pss split. */
	ASSERT_COUNTS(&mc, .size = KB(10600), .rss = KB(6308), .pss = KB(4804), .pss_dirty = 0,
		      .shared_clean = KB(2204), .private_clean = KB(80), .private_dirty = KB(4024),
		      .referenced = KB(6308), .anonymous = KB(4024), .anon_huge = KB(2048),
		      .swap = KB(100), .swap_pss = KB(100), .locked = KB(2048),
		      .has_pss_split = false);
}

static void test_no_rollup_smaps(void **state)
{
	struct fx *fx = *state;
	struct maplist *l = calloc(1, sizeof(*l));

	assert_int_equal(msc_proc_smaps(&fx->fs, 3131, collect, l, &fx->err), 0);
	assert_int_equal(l->n, 12);
	assert_map(&l->m[2], 0x55d0c0e01000, 0x55d0c0e6d000, "rw-p", 0x201000, 8, 1, 131090,
		   "/usr/bin/python3.5", false);
	/* 4.9 layout: KernelPageSize after SwapPss, no Pss_Dirty */
	ASSERT_COUNTS(&l->m[2].mem, .size = KB(432), .rss = KB(200), .pss = KB(200),
		      .private_clean = KB(80), .private_dirty = KB(120), .referenced = KB(200),
		      .anonymous = KB(120));
	assert_map(&l->m[4], 0x7f3a10000000, 0x7f3a10400000, "rw-p", 0, 0, 0, 0, "", false);
	ASSERT_COUNTS(&l->m[4].mem, .size = KB(4096), .rss = KB(2048), .pss = KB(2048),
		      .private_dirty = KB(2048), .referenced = KB(2048), .anonymous = KB(2048),
		      .anon_huge = KB(2048), .locked = KB(2048));
	assert_map(&l->m[11], 0xffffffffff600000ull, 0xffffffffff601000ull, "r-xp", 0, 0, 0, 0,
		   "[vsyscall]", false);
	free(l);
}

static void test_no_rollup_process(void **state)
{
	struct fx *fx = *state;
	struct msc_pstat st;
	struct msc_pstatus ps;
	struct msc_pstatm sm;
	struct args a = { .n = 0 };

	assert_int_equal(msc_proc_stat(&fx->fs, 3131, &st, &fx->err), 0);
	assert_string_equal(st.comm, "python3");
	assert_int_equal(st.ppid, 3000);
	assert_int_equal(st.minflt, 5000);
	assert_int_equal(st.majflt, 7);
	assert_int_equal(st.utime, 2500000000ull);
	assert_int_equal(st.stime, 500000000ull);
	assert_int_equal(st.num_threads, 3);
	assert_int_equal(st.starttime, 5000000000000ull);
	assert_int_equal(st.vsize, KB(10596));
	assert_int_equal(st.rss, PAGES(1577));

	assert_int_equal(msc_proc_status(&fx->fs, 3131, &ps, &fx->err), 0);
	assert_string_equal(ps.name, "python3");
	assert_int_equal(ps.uid, 33);
	assert_int_equal(ps.threads, 3);
	assert_true(ps.has_mem);
	assert_true(ps.has_rss_split);	/* 4.5+ */
	assert_int_equal(ps.vm_rss, KB(6308));
	assert_int_equal(ps.rss_anon, KB(4024));
	assert_int_equal(ps.rss_file, KB(2284));
	assert_int_equal(ps.rss_shmem, 0);
	assert_int_equal(ps.vm_swap, KB(100));

	assert_int_equal(msc_proc_statm(&fx->fs, 3131, &sm, &fx->err), 0);
	assert_int_equal(sm.size, PAGES(2649));
	assert_int_equal(sm.resident, PAGES(1577));
	assert_int_equal(sm.shared, PAGES(571));
	assert_int_equal(sm.text, PAGES(512));
	assert_int_equal(sm.data, PAGES(1679));

	/* an argument with spaces stays one argument */
	assert_int_equal(msc_proc_cmdline(&fx->fs, 3131, collect_arg, &a), 3);
	assert_string_equal(a.v[0], "python3");
	assert_string_equal(a.v[1], "-c");
	assert_string_equal(a.v[2], "import time; time.sleep(100)");
	assert_int_equal(msc_proc_boot_time(&fx->fs), 1500000000);
}

/* --------------------------------------------------------- old_status */

static void test_old_stat(void **state)
{
	struct fx *fx = *state;
	struct msc_pstat st;

	/* "(my (weird) prog)": the comm ends at the last ')' */
	assert_int_equal(msc_proc_stat(&fx->fs, 777, &st, &fx->err), 0);
	assert_int_equal(st.pid, 777);
	assert_string_equal(st.comm, "my (weird) prog");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.pgrp, 777);
	assert_int_equal(st.session, 777);
	assert_int_equal(st.flags, 4202560);
	assert_int_equal(st.minflt, 300);
	assert_int_equal(st.majflt, 1);
	assert_int_equal(st.utime, 1230000000ull);
	assert_int_equal(st.stime, 450000000ull);
	assert_int_equal(st.num_threads, 2);
	assert_int_equal(st.starttime, 90000000000ull);
	assert_int_equal(st.vsize, KB(10268));
	assert_int_equal(st.rss, PAGES(236));
}

static void test_old_status(void **state)
{
	struct fx *fx = *state;
	struct msc_pstatus st;

	assert_int_equal(msc_proc_status(&fx->fs, 777, &st, &fx->err), 0);
	assert_string_equal(st.name, "my (weird) prog");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.tgid, 777);
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.uid, 500);
	assert_int_equal(st.euid, 500);
	assert_int_equal(st.threads, 2);
	assert_true(st.has_mem);
	assert_false(st.has_rss_split);	/* before Linux 4.5 */
	assert_int_equal(st.rss_anon, 0);
	assert_int_equal(st.rss_file, 0);
	assert_int_equal(st.rss_shmem, 0);
	assert_int_equal(st.vm_peak, KB(10308));
	assert_int_equal(st.vm_size, KB(10268));
	assert_int_equal(st.vm_hwm, KB(1044));
	assert_int_equal(st.vm_rss, KB(944));
	assert_int_equal(st.vm_data, KB(8328));
	assert_int_equal(st.vm_stk, KB(136));
	assert_int_equal(st.vm_swap, KB(12));
}

static void test_old_meminfo(void **state)
{
	struct fx *fx = *state;
	struct msc_meminfo mi;

	/* Linux 3.10: no MemAvailable (added in 3.14) */
	memset(&mi, 0xff, sizeof(mi));
	assert_int_equal(msc_proc_meminfo(&fx->fs, &mi, &fx->err), 0);
	assert_false(mi.has_available);
	assert_int_equal(mi.available, 0);
	assert_int_equal(mi.total, KB(1016232));
	assert_int_equal(mi.free, KB(400000));
	assert_int_equal(mi.buffers, KB(2000));
	assert_int_equal(mi.cached, KB(300000));
	assert_int_equal(mi.swap_cached, 0);
	assert_int_equal(mi.active, KB(250000));
	assert_int_equal(mi.inactive, KB(200000));
	assert_int_equal(mi.swap_total, KB(1048572));
	assert_int_equal(mi.swap_free, KB(1048000));
	assert_int_equal(mi.dirty, KB(40));
	assert_int_equal(mi.anon_pages, KB(120000));
	assert_int_equal(mi.mapped, KB(30000));
	assert_int_equal(mi.shmem, KB(7000));
	assert_int_equal(mi.slab, KB(50000));
	assert_int_equal(mi.sreclaimable, KB(35000));
	assert_int_equal(mi.sunreclaim, KB(15000));
	assert_int_equal(mi.kernel_stack, KB(1800));
	assert_int_equal(mi.page_tables, KB(4000));
	assert_int_equal(mi.commit_limit, KB(1556688));
	assert_int_equal(mi.committed_as, KB(500000));
	assert_int_equal(mi.anon_huge, KB(6144));
	assert_int_equal(mi.hugepages_total, 16);	/* a count, not kB */
	assert_int_equal(mi.hugepagesize, KB(2048));
	assert_int_equal(msc_proc_boot_time(&fx->fs), 1400000000);
}

static void test_old_maps(void **state)
{
	struct fx *fx = *state;
	struct maplist *l = calloc(1, sizeof(*l));
	struct msc_memcounts mc;
	bool summed = false;

	assert_int_equal(msc_proc_smaps(&fx->fs, 777, collect, l, &fx->err), 0);
	assert_int_equal(l->n, 9);
	/* 32-bit-wide addresses of a non-PIE program, a path with parentheses */
	assert_map(&l->m[0], 0x400000, 0x40b000, "r-xp", 0, 0xfd, 0, 1048601,
		   "/opt/weird/my (weird) prog", false);
	ASSERT_COUNTS(&l->m[0].mem, .size = KB(44), .rss = KB(40), .pss = KB(40),
		      .private_clean = KB(40), .referenced = KB(40));
	assert_map(&l->m[3], 0x7f1c4b7ff000, 0x7f1c4b800000, "---p", 0, 0, 0, 0, "", false);
	/* a thread's stack, as named before Linux 4.5 */
	assert_map(&l->m[4], 0x7f1c4b800000, 0x7f1c4c000000, "rw-p", 0, 0, 0, 0, "[stack:778]",
		   false);
	ASSERT_COUNTS(&l->m[4].mem, .size = KB(8192), .rss = KB(16), .pss = KB(16),
		      .private_dirty = KB(16), .referenced = KB(16), .anonymous = KB(16));
	ASSERT_COUNTS(&l->m[6].mem, .size = KB(132), .rss = KB(20), .pss = KB(20),
		      .private_dirty = KB(20), .referenced = KB(20), .anonymous = KB(20),
		      .swap = KB(12));
	free(l);

	/* before 4.14: summed from smaps (3.10 has no SwapPss) */
	assert_int_equal(msc_proc_rollup(&fx->fs, 777, &mc, &summed, &fx->err), 0);
	assert_true(summed);
	ASSERT_COUNTS(&mc, .size = KB(10272), .rss = KB(944), .pss = KB(300),
		      .shared_clean = KB(804), .private_clean = KB(40), .private_dirty = KB(100),
		      .referenced = KB(944), .anonymous = KB(100), .swap = KB(12));
}

static void test_old_cmdline(void **state)
{
	struct fx *fx = *state;
	struct args a = { .n = 0 };

	assert_int_equal(msc_proc_cmdline(&fx->fs, 777, collect_arg, &a), 2);
	assert_string_equal(a.v[0], "/opt/weird/my (weird) prog");
	assert_string_equal(a.v[1], "--name=a b");
}

/* ------------------------------------------------------------- zombie */

static void test_zombie(void **state)
{
	struct fx *fx = *state;
	struct msc_pstat st;
	struct msc_pstatus ps;
	struct msc_pstatm sm;
	struct msc_memcounts mc;
	bool summed = true;

	assert_int_equal(msc_proc_stat(&fx->fs, 5001, &st, &fx->err), 0);
	assert_string_equal(st.comm, "zomb");
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.ppid, 5000);
	assert_false(st.flags & MSC_PF_KTHREAD);
	assert_int_equal(st.utime, TICKS(1));
	assert_int_equal(st.stime, TICKS(2));
	assert_int_equal(st.starttime, TICKS(135041));
	assert_int_equal(st.vsize, 0);
	assert_int_equal(st.rss, 0);

	assert_int_equal(msc_proc_status(&fx->fs, 5001, &ps, &fx->err), 0);
	assert_string_equal(ps.name, "zomb");
	assert_int_equal(ps.state, 'Z');
	assert_int_equal(ps.tgid, 5001);
	assert_int_equal(ps.ppid, 5000);
	assert_int_equal(ps.threads, 1);
	assert_false(ps.has_mem);
	assert_false(ps.has_rss_split);
	assert_int_equal(ps.vm_rss, 0);
	assert_int_equal(ps.vm_size, 0);

	memset(&sm, 0xff, sizeof(sm));
	assert_int_equal(msc_proc_statm(&fx->fs, 5001, &sm, &fx->err), 0);
	assert_int_equal(sm.size, 0);
	assert_int_equal(sm.resident, 0);
	assert_int_equal(sm.shared, 0);
	assert_int_equal(sm.text, 0);
	assert_int_equal(sm.data, 0);

	/* smaps_rollup reads empty here (a live kernel fails the read) */
	assert_int_equal(msc_proc_rollup(&fx->fs, 5001, &mc, &summed, &fx->err), -ENODATA);
	assert_false(summed);
	assert_int_equal(msc_proc_maps(&fx->fs, 5001, never_called, NULL, &fx->err), -ENODATA);
	assert_int_equal(msc_proc_smaps(&fx->fs, 5001, never_called, NULL, &fx->err), -ENODATA);
	assert_int_equal(msc_proc_cmdline(&fx->fs, 5001, arg_never_called, NULL), 0);
}

static void test_zombie_parent(void **state)
{
	struct fx *fx = *state;
	struct msc_pstatus ps;
	struct args a = { .n = 0 };

	/* The parent's directory has no status: -ENOENT, not -ESRCH. */
	assert_int_equal(msc_proc_status(&fx->fs, 5000, &ps, &fx->err), -ENOENT);
	assert_int_equal(msc_proc_cmdline(&fx->fs, 5000, collect_arg, &a), 1);
	assert_string_equal(a.v[0], "/tmp/zomb");
}

static void test_zombie_foreach(void **state)
{
	struct fx *fx = *state;
	struct pids p = { .n = 0 };

	assert_int_equal(msc_proc_foreach_pid(&fx->fs, collect_pid, &p), 0);
	assert_int_equal(p.n, 2);
	qsort(p.pid, p.n, sizeof(p.pid[0]), cmp_int);
	assert_int_equal(p.pid[0], 5000);
	assert_int_equal(p.pid[1], 5001);

	/* a callback's non-zero return stops the walk and is returned */
	memset(&p, 0, sizeof(p));
	p.stop_at = 1;
	assert_int_equal(msc_proc_foreach_pid(&fx->fs, collect_pid, &p), 42);
	assert_int_equal(p.n, 1);
}

/* ------------------------------------------------------------ kthread */

static void test_kthread(void **state)
{
	struct fx *fx = *state;
	struct msc_pstat st;
	struct msc_pstatus ps;
	struct msc_pstatm sm;
	struct msc_memcounts mc;
	bool summed = false;

	assert_int_equal(msc_proc_stat(&fx->fs, 2, &st, &fx->err), 0);
	assert_string_equal(st.comm, "kthreadd");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 0);
	assert_int_equal(st.flags, 2129984);
	assert_true(st.flags & MSC_PF_KTHREAD);
	assert_int_equal(st.starttime, TICKS(10));
	assert_int_equal(st.vsize, 0);
	assert_int_equal(st.rss, 0);

	assert_int_equal(msc_proc_status(&fx->fs, 2, &ps, &fx->err), 0);
	assert_string_equal(ps.name, "kthreadd");
	assert_int_equal(ps.tgid, 2);
	assert_int_equal(ps.threads, 1);
	assert_false(ps.has_mem);
	assert_false(ps.has_rss_split);

	memset(&sm, 0xff, sizeof(sm));
	assert_int_equal(msc_proc_statm(&fx->fs, 2, &sm, &fx->err), 0);
	assert_int_equal(sm.size + sm.resident + sm.shared + sm.text + sm.data, 0);

	/* no smaps_rollup file, and smaps reads empty: no memory, not zeros */
	assert_int_equal(msc_proc_rollup(&fx->fs, 2, &mc, &summed, &fx->err), -ENODATA);
	assert_true(summed);
	ASSERT_COUNTS(&mc, .size = 0);
	assert_int_equal(msc_proc_maps(&fx->fs, 2, never_called, NULL, &fx->err), -ENODATA);
	assert_int_equal(msc_proc_smaps(&fx->fs, 2, never_called, NULL, &fx->err), -ENODATA);
	assert_int_equal(msc_proc_cmdline(&fx->fs, 2, arg_never_called, NULL), 0);
	assert_int_equal(msc_proc_boot_time(&fx->fs), 1600000000);
}

/* ----------------------------------------------------------- vanished */

static void test_vanished(void **state)
{
	struct fx *fx = *state;
	struct msc_pstat st;
	struct msc_pstatus ps;
	struct msc_pstatm sm;
	struct msc_memcounts mc;
	struct pids p = { .n = 0 };
	struct msc_meminfo mi;
	bool summed = true;

	assert_int_equal(msc_proc_read(&fx->fs, 31337, "stat"), -ESRCH);
	assert_int_equal(msc_proc_stat(&fx->fs, 31337, &st, &fx->err), -ESRCH);
	assert_int_equal(msc_proc_status(&fx->fs, 31337, &ps, &fx->err), -ESRCH);
	assert_int_equal(msc_proc_statm(&fx->fs, 31337, &sm, &fx->err), -ESRCH);
	assert_int_equal(msc_proc_rollup(&fx->fs, 31337, &mc, &summed, &fx->err), -ESRCH);
	assert_int_equal(msc_proc_maps(&fx->fs, 31337, never_called, NULL, &fx->err), -ESRCH);
	assert_int_equal(msc_proc_smaps(&fx->fs, 31337, never_called, NULL, &fx->err), -ESRCH);
	assert_int_equal(msc_proc_cmdline(&fx->fs, 31337, arg_never_called, NULL), -ESRCH);
	assert_int_equal(msc_proc_foreach_pid(&fx->fs, collect_pid, &p), 0);
	assert_int_equal(p.n, 0);
	/* the system files are still there */
	assert_int_equal(msc_proc_meminfo(&fx->fs, &mi, &fx->err), 0);
	assert_int_equal(mi.total, KB(8000000));
	assert_int_equal(msc_proc_boot_time(&fx->fs), 1600000000);
}

static void test_no_root(void **state)
{
	struct msc_procfs fs;
	struct msc_meminfo mi;
	struct msc_err err = { 0 };
	struct pids p = { .n = 0 };
	char root[256];

	(void)state;
	snprintf(root, sizeof(root), "%s/no_such_case", fixtures());
	assert_int_equal(msc_procfs_init(&fs, root), 0);
	assert_int_equal(msc_proc_foreach_pid(&fs, collect_pid, &p), -ENOENT);
	assert_int_equal(msc_proc_meminfo(&fs, &mi, &err), -ENOENT);
	assert_int_equal(err.code, -ENOENT);
	assert_true(strstr(err.msg, "/no_such_case/meminfo: No such file or directory") != NULL);
	assert_int_equal(msc_proc_boot_time(&fs), 0);
	msc_procfs_release(&fs);
}

/* --------------------------------------------------------- unreadable */

static void test_unreadable(void **state)
{
	struct fx *fx = *state;
	struct msc_memcounts mc;
	struct msc_pstatus ps;
	bool summed = true;

	/* a read error that is neither "gone" nor "absent" is passed on */
	assert_int_equal(msc_proc_rollup(&fx->fs, 6000, &mc, &summed, &fx->err), -EISDIR);
	assert_false(summed);
	assert_int_equal(msc_proc_status(&fx->fs, 6000, &ps, &fx->err), 0);
	assert_int_equal(ps.vm_rss, KB(20));
}

/* ---------------------------------------------------- malformed input */

struct tmptree {
	char root[64];
};

static void put(const char *root, const char *rel, const char *text, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int setup_tmptree(void **state)
{
	struct tmptree *t = calloc(1, sizeof(*t));
	char dir[128];

	if (!t)
		return -1;
	strcpy(t->root, "/tmp/msc-proc-XXXXXX");
	if (!mkdtemp(t->root))
		return -1;
	snprintf(dir, sizeof(dir), "%s/9", t->root);
	if (mkdir(dir, 0755))
		return -1;
	*state = t;
	return 0;
}

static int teardown_tmptree(void **state)
{
	struct tmptree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
	if (system(cmd) != 0)
		return -1;
	free(t);
	return 0;
}

static int count_mappings(const struct msc_mapping *m, void *arg)
{
	struct msc_memcounts *sum = arg;

	msc_memcounts_add(sum, &m->mem);
	sum->locked++;	/* used as the mapping count */
	return 0;
}

static void test_malformed(void **state)
{
	struct tmptree *t = *state;
	struct msc_procfs fs;
	struct msc_err err = { 0 };
	struct msc_pstat st;
	struct msc_pstatus ps;
	struct msc_pstatm sm;
	struct msc_meminfo mi;
	char want[256];
	static const char bad_map[] = "7f00-7f10 rw-p 00000000 00:00 0\nnot a mapping line\n";

	assert_int_equal(msc_procfs_init(&fs, t->root), 0);

	put(t->root, "9/stat", "9 no parentheses S 1\n", 21);
	assert_int_equal(msc_proc_stat(&fs, 9, &st, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/9/stat: cannot parse", t->root);
	assert_string_equal(err.msg, want);

	put(t->root, "9/stat", "9 (short) S 1 2 3\n", 18);
	assert_int_equal(msc_proc_stat(&fs, 9, &st, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/9/stat: only 6 fields", t->root);
	assert_string_equal(err.msg, want);

	put(t->root, "9/statm", "garbage\n", 8);
	assert_int_equal(msc_proc_statm(&fs, 9, &sm, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/9/statm: cannot parse", t->root);
	assert_string_equal(err.msg, want);

	put(t->root, "9/status", "", 0);
	assert_int_equal(msc_proc_status(&fs, 9, &ps, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/9/status: cannot parse", t->root);
	assert_string_equal(err.msg, want);

	/* Lines that do not start with a hex digit are not mapping lines... */
	put(t->root, "9/maps", bad_map, sizeof(bad_map) - 1);
	{
		struct msc_memcounts sum = { 0 };

		assert_int_equal(msc_proc_maps(&fs, 9, count_mappings, &sum, &err), 0);
		assert_int_equal(sum.locked, 1);
	}
	/* ...but "abc def" is taken for one, and rejected. */
	put(t->root, "9/maps", "7f00-7f10 rw-p 00000000 00:00 0\nabc def\n", 40);
	{
		struct msc_memcounts sum = { 0 };

		assert_int_equal(msc_proc_maps(&fs, 9, count_mappings, &sum, &err), -EINVAL);
		assert_int_equal(err.code, -EINVAL);
		snprintf(want, sizeof(want), "%s/9/maps: cannot parse line 'abc def'", t->root);
		assert_string_equal(err.msg, want);
		assert_int_equal(sum.locked, 0);
	}

	put(t->root, "meminfo", "MemFree: 100 kB\n", 16);
	assert_int_equal(msc_proc_meminfo(&fs, &mi, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/meminfo: no MemTotal", t->root);
	assert_string_equal(err.msg, want);

	put(t->root, "stat", "cpu  1 2 3\nintr 5\n", 18);
	assert_int_equal(msc_proc_boot_time(&fs), 0);
	msc_procfs_release(&fs);
}

/* A large smaps grows the read buffer several times and loses nothing. */
static void test_large_smaps(void **state)
{
	struct tmptree *t = *state;
	struct msc_procfs fs;
	struct msc_memcounts sum = { 0 }, mc;
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	bool summed = false;
	unsigned i;

	assert_non_null(text);
	for (i = 0; i < 1000; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"%012x-%012x rw-p 00000000 00:00 0 \n"
					"Size:                  8 kB\n"
					"Rss:                   4 kB\n"
					"Pss:                   %u kB\n"
					"VmFlags: rd wr mr mw me ac \n",
					0x10000000u + i * 0x2000u, 0x10002000u + i * 0x2000u, i % 3);
	put(t->root, "9/smaps", text, len);
	assert_true(len > 100000);
	assert_int_equal(msc_procfs_init(&fs, t->root), 0);
	assert_int_equal(msc_proc_read(&fs, 9, "smaps"), (long)len);
	assert_int_equal(msc_proc_smaps(&fs, 9, count_mappings, &sum, NULL), 0);
	assert_int_equal(sum.locked, 1000);
	assert_int_equal(sum.size, KB(8000));
	assert_int_equal(sum.rss, KB(4000));
	assert_int_equal(sum.pss, KB(999));	/* 333 * (0 + 1 + 2) + 0 */
	/* no smaps_rollup in this tree: summed */
	assert_int_equal(msc_proc_rollup(&fs, 9, &mc, &summed, NULL), 0);
	assert_true(summed);
	assert_int_equal(mc.rss, KB(4000));
	assert_int_equal(mc.pss, KB(999));
	msc_procfs_release(&fs);
	free(text);
}

/* ---------------------------------------------------------- live kernel */

/*
 * What the fixtures can only imitate: on a live kernel, reading
 * smaps_rollup of a zombie fails with ESRCH although its directory is
 * there, while maps and smaps read empty.
 */
static void test_live_zombie(void **state)
{
	struct msc_procfs fs;
	struct msc_pstat st;
	struct msc_pstatus ps;
	struct msc_memcounts mc;
	bool summed = true;
	siginfo_t si;
	pid_t pid;
	int wstatus;

	(void)state;
	if (access("/proc/self/smaps_rollup", R_OK) != 0)
		skip();		/* no /proc, or a kernel before 4.14 */
	assert_int_equal(msc_procfs_init(&fs, NULL), 0);

	assert_int_equal(msc_proc_rollup(&fs, getpid(), &mc, &summed, NULL), 0);
	assert_false(summed);
	assert_true(mc.rss > 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* exited, not reaped: a zombie */
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(msc_proc_stat(&fs, pid, &st, NULL), 0);
	assert_int_equal(st.pid, pid);
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.ppid, getpid());
	assert_int_equal(msc_proc_status(&fs, pid, &ps, NULL), 0);
	assert_false(ps.has_mem);
	assert_int_equal(msc_proc_read(&fs, pid, "smaps_rollup"), -ENODATA);
	assert_int_equal(msc_proc_rollup(&fs, pid, &mc, &summed, NULL), -ENODATA);
	assert_false(summed);
	assert_int_equal(msc_proc_maps(&fs, pid, never_called, NULL, NULL), -ENODATA);
	assert_int_equal(msc_proc_smaps(&fs, pid, never_called, NULL, NULL), -ENODATA);
	assert_int_equal(msc_proc_cmdline(&fs, pid, arg_never_called, NULL), 0);

	/* reaped: gone */
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	assert_int_equal(msc_proc_stat(&fs, pid, &st, NULL), -ESRCH);
	assert_int_equal(msc_proc_rollup(&fs, pid, &mc, &summed, NULL), -ESRCH);
	assert_int_equal(msc_proc_smaps(&fs, pid, never_called, NULL, NULL), -ESRCH);
	msc_procfs_release(&fs);
}

static void test_live_kthread(void **state)
{
	struct msc_procfs fs;
	struct msc_pstat st;
	struct msc_memcounts mc;
	bool summed = true;

	(void)state;
	assert_int_equal(msc_procfs_init(&fs, NULL), 0);
	/* pid 2 is kthreadd outside of pid namespaces */
	if (msc_proc_stat(&fs, 2, &st, NULL) != 0 || strcmp(st.comm, "kthreadd") != 0 ||
	    access("/proc/2/smaps_rollup", F_OK) != 0) {
		msc_procfs_release(&fs);
		skip();
	}
	assert_true(st.flags & MSC_PF_KTHREAD);
	assert_int_equal(msc_proc_rollup(&fs, 2, &mc, &summed, NULL), -ENODATA);
	assert_false(summed);
	assert_int_equal(msc_proc_smaps(&fs, 2, never_called, NULL, NULL), -ENODATA);
	assert_int_equal(msc_proc_cmdline(&fs, 2, arg_never_called, NULL), 0);
	msc_procfs_release(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procfs_init),
		CASE(test_normal_read, "normal"),
		CASE(test_normal_stat, "normal"),
		CASE(test_normal_status, "normal"),
		CASE(test_normal_statm, "normal"),
		CASE(test_normal_rollup, "normal"),
		CASE(test_normal_maps, "normal"),
		CASE(test_normal_smaps, "normal"),
		CASE(test_normal_smaps_stop, "normal"),
		CASE(test_normal_cmdline, "normal"),
		CASE(test_normal_meminfo, "normal"),
		CASE(test_normal_boot_time, "normal"),
		CASE(test_normal_foreach, "normal"),
		CASE(test_no_rollup_rollup, "no_rollup"),
		CASE(test_no_rollup_smaps, "no_rollup"),
		CASE(test_no_rollup_process, "no_rollup"),
		CASE(test_old_stat, "old_status"),
		CASE(test_old_status, "old_status"),
		CASE(test_old_meminfo, "old_status"),
		CASE(test_old_maps, "old_status"),
		CASE(test_old_cmdline, "old_status"),
		CASE(test_zombie, "zombie"),
		CASE(test_zombie_parent, "zombie"),
		CASE(test_zombie_foreach, "zombie"),
		CASE(test_kthread, "kthread"),
		CASE(test_vanished, "vanished"),
		cmocka_unit_test(test_no_root),
		CASE(test_unreadable, "unreadable"),
		cmocka_unit_test_setup_teardown(test_malformed, setup_tmptree, teardown_tmptree),
		cmocka_unit_test_setup_teardown(test_large_smaps, setup_tmptree, teardown_tmptree),
		cmocka_unit_test(test_live_zombie),
		cmocka_unit_test(test_live_kthread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
