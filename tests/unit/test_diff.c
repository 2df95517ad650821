/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of msc_diff: two small snapshots written by hand as NDJSON are
 * loaded, diffed, and every delta is compared with the answer worked out
 * below, in order.  Load errors must name FILE:LINE.
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
#include <unistd.h>

#include <cmocka.h>

#include "msc_diff.h"
#include "msc_util.h"

#define HEADER(epoch)								\
	"{\"type\":\"header\",\"format\":\"memscope\",\"version\":1,"		\
	"\"tool\":\"ms-snap\",\"mode\":\"snapshot\",\"start_epoch\":" epoch "}\n"

/*
 * Before:  web (100) and db (200) with heap and libc mappings; old (300),
 * which exits and whose pid is reused; a kernel thread (400) without
 * figures; partial (500) without "swap"; the figures are in bytes.
 */
static const char snap_a[] =
	HEADER("1700000000000000000")
	"{\"type\":\"process\",\"pid\":100,\"ppid\":1,\"comm\":\"web\",\"cmdline\":[\"web\",\"-p\",\"80\"],"
	"\"state\":\"S\",\"starttime\":5000,\"threads\":4,\"uid\":1000,\"rss\":1000,\"pss\":800,"
	"\"swap\":0,\"private_clean\":100,\"private_dirty\":300}\n"
	"{\"type\":\"mapping\",\"pid\":100,\"name\":\"[heap]\",\"kind\":\"heap\",\"count\":1,"
	"\"size\":4096,\"rss\":500,\"pss\":500,\"swap\":0,\"private_clean\":0,\"private_dirty\":500}\n"
	"{\"type\":\"mapping\",\"pid\":100,\"name\":\"/usr/lib/libc.so.6\",\"kind\":\"file\","
	"\"count\":5,\"size\":2000,\"rss\":300,\"pss\":100,\"swap\":0,\"private_clean\":0,"
	"\"private_dirty\":20}\n"
	"{\"type\":\"process\",\"pid\":200,\"ppid\":1,\"comm\":\"db\",\"starttime\":6000,\"rss\":5000,"
	"\"pss\":4000,\"swap\":100,\"private_clean\":0,\"private_dirty\":3000}\n"
	"{\"type\":\"mapping\",\"pid\":200,\"name\":\"[heap]\",\"kind\":\"heap\",\"count\":1,"
	"\"size\":8192,\"rss\":4000,\"pss\":4000,\"swap\":100,\"private_clean\":0,"
	"\"private_dirty\":3000}\n"
	"{\"type\":\"process\",\"pid\":300,\"ppid\":1,\"comm\":\"old\",\"starttime\":7000,\"rss\":700,"
	"\"pss\":600,\"swap\":0,\"private_dirty\":600}\n"
	"{\"type\":\"process\",\"pid\":400,\"ppid\":2,\"comm\":\"kworker/0:1\",\"starttime\":10,"
	"\"threads\":1,\"kthread\":true,\"uid\":0}\n"
	"{\"type\":\"process\",\"pid\":500,\"ppid\":1,\"comm\":\"partial\",\"starttime\":8000,"
	"\"rss\":50,\"pss\":40}\n"
	"{\"type\":\"meminfo\",\"total\":8192000000,\"free\":4096000000}\n"
	"{\"type\":\"end\",\"processes\":5}\n";

/*
 * After, 60 s later: web grew (heap +500), db's rss shrank by 10 and its
 * swap grew by 100, pid 300 is a new process "new", partial lost "pss" but
 * has "swap", and "fresh" (600) started.
 */
static const char snap_b[] =
	HEADER("1700000060000000000")
	"{\"type\":\"process\",\"pid\":100,\"ppid\":1,\"comm\":\"web\",\"starttime\":5000,\"threads\":4,"
	"\"uid\":1000,\"rss\":1600,\"pss\":1100,\"swap\":0,\"private_clean\":100,\"private_dirty\":600}\n"
	"{\"type\":\"mapping\",\"pid\":100,\"name\":\"[heap]\",\"kind\":\"heap\",\"count\":1,"
	"\"size\":4096,\"rss\":1000,\"pss\":1000,\"swap\":0,\"private_clean\":0,\"private_dirty\":1000}\n"
	"{\"type\":\"mapping\",\"pid\":100,\"name\":\"/usr/lib/libc.so.6\",\"kind\":\"file\","
	"\"count\":5,\"size\":2000,\"rss\":300,\"pss\":100,\"swap\":0,\"private_clean\":0,"
	"\"private_dirty\":20}\n"
	"{\"type\":\"process\",\"pid\":200,\"ppid\":1,\"comm\":\"db\",\"starttime\":6000,\"rss\":4990,"
	"\"pss\":4000,\"swap\":200,\"private_clean\":0,\"private_dirty\":2990}\n"
	"{\"type\":\"mapping\",\"pid\":200,\"name\":\"[heap]\",\"kind\":\"heap\",\"count\":1,"
	"\"size\":8192,\"rss\":3990,\"pss\":4000,\"swap\":200,\"private_clean\":0,"
	"\"private_dirty\":2990}\n"
	"{\"type\":\"process\",\"pid\":300,\"ppid\":1,\"comm\":\"new\",\"starttime\":9000,\"rss\":900,"
	"\"pss\":800,\"swap\":0}\n"
	"{\"type\":\"process\",\"pid\":400,\"ppid\":2,\"comm\":\"kworker/0:1\",\"starttime\":10,"
	"\"threads\":1,\"kthread\":true,\"uid\":0}\n"
	"{\"type\":\"process\",\"pid\":500,\"ppid\":1,\"comm\":\"partial\",\"starttime\":8000,"
	"\"rss\":80,\"swap\":5}\n"
	"{\"type\":\"process\",\"pid\":600,\"ppid\":1,\"comm\":\"fresh\",\"starttime\":9500,"
	"\"rss\":200,\"pss\":150,\"swap\":10}\n"
	"{\"type\":\"end\",\"processes\":6}\n";

struct dx {
	char dir[64];
	char a[128], b[128];
	struct msc_snapshot sa, sb;
	bool loaded_a, loaded_b;
	struct msc_diff d;
	bool computed;
	struct msc_err err;
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* Writes text to DIR/name and returns the path (static buffer per call site). */
static const char *put(struct dx *x, char *path, size_t n, const char *name, const char *text)
{
	snprintf(path, n, "%s/%s", x->dir, name);
	write_file(path, text);
	return path;
}

static int setup(void **state)
{
	struct dx *x = calloc(1, sizeof(*x));

	if (!x)
		return -1;
	strcpy(x->dir, "/tmp/msc-diff-XXXXXX");
	if (!mkdtemp(x->dir))
		return -1;
	snprintf(x->a, sizeof(x->a), "%s/a.json", x->dir);
	snprintf(x->b, sizeof(x->b), "%s/b.json", x->dir);
	write_file(x->a, snap_a);
	write_file(x->b, snap_b);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct dx *x = *state;
	char cmd[128];

	if (x->computed)
		msc_diff_release(&x->d);
	if (x->loaded_a)
		msc_snapshot_release(&x->sa);
	if (x->loaded_b)
		msc_snapshot_release(&x->sb);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
	if (system(cmd) != 0)
		return -1;
	free(x);
	return 0;
}

static void load_both(struct dx *x)
{
	x->loaded_a = true;
	if (msc_snapshot_load(&x->sa, x->a, &x->err))
		fail_msg("%s", x->err.msg);
	x->loaded_b = true;
	if (msc_snapshot_load(&x->sb, x->b, &x->err))
		fail_msg("%s", x->err.msg);
}

static void compute(struct dx *x, const struct msc_diff_opts *o)
{
	if (x->computed)
		msc_diff_release(&x->d);
	assert_int_equal(msc_diff_compute(&x->d, &x->sa, &x->sb, o), 0);
	x->computed = true;
}

struct want {
	enum msc_ent_kind kind;
	int pid;
	const char *name;	/* comm for processes */
	const char *metric;
	int64_t before, after, change;
	const char *status;	/* "new", "gone", "changed" */
};

static const char *status_of(const struct msc_delta *dl)
{
	return !dl->before ? "new" : !dl->after ? "gone" : "changed";
}

static void expect_deltas(const struct msc_diff *d, const struct want *w, size_t n)
{
	size_t i;

	for (i = 0; i < d->n && i < n; i++) {
		const struct msc_delta *dl = &d->deltas[i];
		const struct msc_entity *e = dl->after ? dl->after : dl->before;

		if (e->kind != w[i].kind || e->pid != w[i].pid || strcmp(e->name, w[i].name) ||
		    strcmp(dl->metric, w[i].metric) || dl->vbefore != w[i].before ||
		    dl->vafter != w[i].after || dl->change != w[i].change ||
		    strcmp(status_of(dl), w[i].status))
			fail_msg("delta %zu: %d %s %s %s %" PRId64 " -> %" PRId64 " (%+" PRId64
				 "), want %d %s %s %s %" PRId64 " -> %" PRId64 " (%+" PRId64 ")",
				 i, e->pid, e->name, dl->metric, status_of(dl), dl->vbefore,
				 dl->vafter, dl->change, w[i].pid, w[i].name, w[i].metric,
				 w[i].status, w[i].before, w[i].after, w[i].change);
	}
	assert_int_equal(d->n, n);
}

#define P MSC_ENT_PROCESS
#define M MSC_ENT_MAPPING

/* rss, pss and swap, largest growth first, processes before mappings. */
static const struct want default_deltas[] = {
	{ P, 300, "new", "rss", 0, 900, 900, "new" },
	{ P, 300, "new", "pss", 0, 800, 800, "new" },
	{ P, 100, "web", "rss", 1000, 1600, 600, "changed" },
	{ P, 100, "web", "pss", 800, 1100, 300, "changed" },
	{ P, 600, "fresh", "rss", 0, 200, 200, "new" },
	{ P, 600, "fresh", "pss", 0, 150, 150, "new" },
	{ P, 200, "db", "swap", 100, 200, 100, "changed" },
	{ P, 500, "partial", "rss", 50, 80, 30, "changed" },
	{ P, 600, "fresh", "swap", 0, 10, 10, "new" },
	{ P, 200, "db", "rss", 5000, 4990, -10, "changed" },
	{ P, 300, "old", "pss", 600, 0, -600, "gone" },
	{ P, 300, "old", "rss", 700, 0, -700, "gone" },
	/* equal changes: by pid, name, then metric */
	{ M, 100, "[heap]", "pss", 500, 1000, 500, "changed" },
	{ M, 100, "[heap]", "rss", 500, 1000, 500, "changed" },
	{ M, 200, "[heap]", "swap", 100, 200, 100, "changed" },
	{ M, 200, "[heap]", "rss", 4000, 3990, -10, "changed" },
};

/* ----------------------------------------------------------------- load */

static void test_load(void **state)
{
	struct dx *x = *state;
	const struct msc_entity *e;
	int64_t v = -1;

	load_both(x);
	assert_string_equal(x->sa.source, x->a);
	assert_true(x->sa.complete);
	assert_string_equal(x->sa.header.tool, "ms-snap");
	assert_string_equal(x->sa.header.mode, "snapshot");
	assert_int_equal(x->sa.header.version, 1);
	assert_int_equal(x->sa.header.start_epoch, 1700000000000000000ull);
	/* 5 processes and 3 mappings; meminfo and end take no part */
	assert_int_equal(x->sa.n, 8);
	assert_int_equal(x->sb.n, 9);

	e = &x->sa.ents[0];
	assert_int_equal(e->kind, MSC_ENT_PROCESS);
	assert_int_equal(e->pid, 100);
	assert_int_equal(e->starttime, 5000);
	assert_string_equal(e->comm, "web");
	assert_string_equal(e->name, "web");
	/* integer members that are not identity, in order, and "private" */
	assert_int_equal(e->nmetrics, 7);
	assert_string_equal(e->metrics[0].name, "threads");
	assert_string_equal(e->metrics[1].name, "rss");
	assert_string_equal(e->metrics[2].name, "pss");
	assert_string_equal(e->metrics[3].name, "swap");
	assert_string_equal(e->metrics[4].name, "private_clean");
	assert_string_equal(e->metrics[5].name, "private_dirty");
	assert_string_equal(e->metrics[6].name, "private");
	assert_true(msc_entity_metric(e, "private", &v));
	assert_int_equal(v, 400);
	assert_true(msc_entity_metric(e, "rss", &v));
	assert_int_equal(v, 1000);
	assert_false(msc_entity_metric(e, "uid", &v));
	assert_false(msc_entity_metric(e, "ppid", &v));
	assert_false(msc_entity_metric(e, "starttime", &v));
	assert_false(msc_entity_metric(e, "pid", &v));
	assert_false(msc_entity_metric(e, "comm", &v));
	assert_false(msc_entity_metric(e, "cmdline", &v));

	/* a mapping takes its process's start time and comm */
	e = &x->sa.ents[1];
	assert_int_equal(e->kind, MSC_ENT_MAPPING);
	assert_int_equal(e->pid, 100);
	assert_int_equal(e->starttime, 5000);
	assert_string_equal(e->comm, "web");
	assert_string_equal(e->name, "[heap]");
	assert_string_equal(e->group, "heap");
	assert_int_equal(e->start, 0);
	assert_int_equal(e->nmetrics, 8);	/* count size rss pss swap pc pd private */
	assert_true(msc_entity_metric(e, "private", &v));
	assert_int_equal(v, 500);

	/* "private" needs both private_clean and private_dirty */
	e = &x->sa.ents[5];
	assert_int_equal(e->pid, 300);
	assert_true(msc_entity_metric(e, "private_dirty", &v));
	assert_false(msc_entity_metric(e, "private", &v));
	/* a kernel thread: only its thread count */
	e = &x->sa.ents[6];
	assert_int_equal(e->pid, 400);
	assert_int_equal(e->nmetrics, 1);
	assert_string_equal(e->metrics[0].name, "threads");
}

/* ----------------------------------------------------------------- diff */

static void test_diff_default(void **state)
{
	struct dx *x = *state;
	struct msc_diff_opts o = { 0 };

	load_both(x);
	compute(x, &o);
	expect_deltas(&x->d, default_deltas, ARRAY_SIZE(default_deltas));
	assert_string_equal(x->d.primary, "rss");
	/* 1000 + 5000 + 700 + 50 (the kernel thread has no rss) */
	assert_int_equal(x->d.total_before, 6750);
	/* 1600 + 4990 + 0 (gone) + 80 + 900 + 200 (new) */
	assert_int_equal(x->d.total_after, 7770);
	assert_int_equal(x->d.processes_matched, 4);
	assert_int_equal(x->d.processes_gone, 1);
	assert_int_equal(x->d.processes_new, 2);
	assert_ptr_equal(x->d.a, &x->sa);
	assert_ptr_equal(x->d.b, &x->sb);
}

static void test_diff_pid_reuse(void **state)
{
	struct dx *x = *state;
	struct msc_diff_opts o = { 0 };
	unsigned gone = 0, added = 0;
	size_t i;

	load_both(x);
	compute(x, &o);
	/* pid 300 is two processes: never compared with each other */
	for (i = 0; i < x->d.n; i++) {
		const struct msc_delta *dl = &x->d.deltas[i];
		const struct msc_entity *e = dl->after ? dl->after : dl->before;

		if (e->pid != 300)
			continue;
		assert_false(dl->before && dl->after);
		if (dl->before) {
			assert_int_equal(dl->before->starttime, 7000);
			assert_string_equal(dl->before->comm, "old");
			assert_int_equal(dl->vafter, 0);
			gone++;
		} else {
			assert_int_equal(dl->after->starttime, 9000);
			assert_string_equal(dl->after->comm, "new");
			assert_int_equal(dl->vbefore, 0);
			added++;
		}
	}
	assert_int_equal(gone, 2);
	assert_int_equal(added, 2);
}

static void test_diff_min_change(void **state)
{
	static const struct want want100[] = {
		{ P, 300, "new", "rss", 0, 900, 900, "new" },
		{ P, 300, "new", "pss", 0, 800, 800, "new" },
		{ P, 100, "web", "rss", 1000, 1600, 600, "changed" },
		{ P, 100, "web", "pss", 800, 1100, 300, "changed" },
		{ P, 600, "fresh", "rss", 0, 200, 200, "new" },
		{ P, 600, "fresh", "pss", 0, 150, 150, "new" },
		{ P, 200, "db", "swap", 100, 200, 100, "changed" },
		{ P, 300, "old", "pss", 600, 0, -600, "gone" },
		{ P, 300, "old", "rss", 700, 0, -700, "gone" },
		{ M, 100, "[heap]", "pss", 500, 1000, 500, "changed" },
		{ M, 100, "[heap]", "rss", 500, 1000, 500, "changed" },
		{ M, 200, "[heap]", "swap", 100, 200, 100, "changed" },
	};
	/* the threshold is inclusive, and applies to shrinking too */
	static const struct want want600[] = {
		{ P, 300, "new", "rss", 0, 900, 900, "new" },
		{ P, 300, "new", "pss", 0, 800, 800, "new" },
		{ P, 100, "web", "rss", 1000, 1600, 600, "changed" },
		{ P, 300, "old", "pss", 600, 0, -600, "gone" },
		{ P, 300, "old", "rss", 700, 0, -700, "gone" },
	};
	struct dx *x = *state;
	struct msc_diff_opts o = { .min_change = 100 };

	load_both(x);
	compute(x, &o);
	expect_deltas(&x->d, want100, ARRAY_SIZE(want100));
	/* hiding deltas does not change the totals */
	assert_int_equal(x->d.total_before, 6750);
	assert_int_equal(x->d.total_after, 7770);
	o.min_change = 600;
	compute(x, &o);
	expect_deltas(&x->d, want600, ARRAY_SIZE(want600));
	o.min_change = 901;
	compute(x, &o);
	assert_int_equal(x->d.n, 0);
	assert_int_equal(x->d.total_after - x->d.total_before, 1020);
}

static void test_diff_all(void **state)
{
	struct dx *x = *state;
	struct msc_diff_opts o = { .all = true, .min_change = 1000000 };
	size_t i, unchanged = 0;

	load_both(x);
	compute(x, &o);
	/*
	 * Every figure present on both sides (or on the side that exists):
	 * processes 100, 200, old 300, new 300, 600: 3 each; 500: rss only;
	 * mappings: 3 x 3.
	 */
	assert_int_equal(x->d.n, 25);
	for (i = 0; i < x->d.n; i++) {
		const struct msc_delta *dl = &x->d.deltas[i];

		assert_int_equal(dl->change, dl->vafter - dl->vbefore);
		if (dl->change == 0)
			unchanged++;
		/* partial's pss (gone from b) and swap (new in b) are not figures */
		if ((dl->after ? dl->after : dl->before)->pid == 500)
			assert_string_equal(dl->metric, "rss");
	}
	/* 100 swap, 200 pss, old swap, new swap, [heap] 100 swap, libc x3, [heap] 200 pss */
	assert_int_equal(unchanged, 9);
}

static void test_diff_private(void **state)
{
	static const char *const metrics[] = { "private", "rss" };
	static const struct want want[] = {
		{ P, 100, "web", "private", 400, 700, 300, "changed" },
		{ P, 200, "db", "private", 3000, 2990, -10, "changed" },
		{ M, 100, "[heap]", "private", 500, 1000, 500, "changed" },
		{ M, 200, "[heap]", "private", 3000, 2990, -10, "changed" },
	};
	struct dx *x = *state;
	struct msc_diff_opts o = { .metrics = metrics, .nmetrics = 1 };

	load_both(x);
	compute(x, &o);
	expect_deltas(&x->d, want, ARRAY_SIZE(want));
	/* the totals are of the first metric, over processes that have it */
	assert_string_equal(x->d.primary, "private");
	assert_int_equal(x->d.total_before, 3400);
	assert_int_equal(x->d.total_after, 3690);
	assert_int_equal(x->d.processes_gone, 1);
	assert_int_equal(x->d.processes_new, 2);
}

static void test_diff_missing_figure(void **state)
{
	static const char *const metrics[] = { "pss", "swap" };
	static const struct want want[] = {
		{ P, 300, "new", "pss", 0, 800, 800, "new" },
		{ P, 100, "web", "pss", 800, 1100, 300, "changed" },
		{ P, 600, "fresh", "pss", 0, 150, 150, "new" },
		{ P, 200, "db", "swap", 100, 200, 100, "changed" },
		{ P, 600, "fresh", "swap", 0, 10, 10, "new" },
		{ P, 300, "old", "pss", 600, 0, -600, "gone" },
		{ M, 100, "[heap]", "pss", 500, 1000, 500, "changed" },
		{ M, 200, "[heap]", "swap", 100, 200, 100, "changed" },
	};
	struct dx *x = *state;
	struct msc_diff_opts o = { .metrics = metrics, .nmetrics = 2 };

	load_both(x);
	compute(x, &o);
	/* partial (500): pss only before, swap only after: neither compared */
	expect_deltas(&x->d, want, ARRAY_SIZE(want));
	/* nor counted in the totals: 800 + 4000 + 600 and 1100 + 4000 + 800 + 150 */
	assert_string_equal(x->d.primary, "pss");
	assert_int_equal(x->d.total_before, 5400);
	assert_int_equal(x->d.total_after, 6050);
}

static void test_diff_identical(void **state)
{
	struct dx *x = *state;
	struct msc_diff_opts o = { 0 };

	x->loaded_a = x->loaded_b = true;
	assert_int_equal(msc_snapshot_load(&x->sa, x->a, &x->err), 0);
	assert_int_equal(msc_snapshot_load(&x->sb, x->a, &x->err), 0);
	compute(x, &o);
	assert_int_equal(x->d.n, 0);
	assert_int_equal(x->d.total_before, 6750);
	assert_int_equal(x->d.total_after, 6750);
	assert_int_equal(x->d.processes_matched, 5);
	assert_int_equal(x->d.processes_new, 0);
	assert_int_equal(x->d.processes_gone, 0);
}

/* Per-mapping snapshots: mappings of one name are told apart by start. */
static void test_diff_per_mapping(void **state)
{
	static const char c[] =
		HEADER("1")
		"{\"type\":\"process\",\"pid\":7,\"comm\":\"a\",\"starttime\":1,\"rss\":100}\n"
		"{\"type\":\"mapping\",\"pid\":7,\"name\":\"[anon]\",\"kind\":\"anon\","
		"\"start\":\"0x7f0000001000\",\"end\":\"0x7f0000002000\",\"offset\":0,\"inode\":0,"
		"\"rss\":10}\n"
		"{\"type\":\"mapping\",\"pid\":7,\"name\":\"[anon]\",\"kind\":\"anon\","
		"\"start\":\"0x7f0000002000\",\"end\":\"0x7f0000004000\",\"offset\":0,\"inode\":0,"
		"\"rss\":20}\n";
	static const char d[] =
		HEADER("2")
		"{\"type\":\"process\",\"pid\":7,\"comm\":\"a\",\"starttime\":1,\"rss\":100}\n"
		"{\"type\":\"mapping\",\"pid\":7,\"name\":\"[anon]\",\"kind\":\"anon\","
		"\"start\":\"0x7f0000001000\",\"end\":\"0x7f0000002000\",\"offset\":0,\"inode\":0,"
		"\"rss\":10}\n"
		"{\"type\":\"mapping\",\"pid\":7,\"name\":\"[anon]\",\"kind\":\"anon\","
		"\"start\":\"0x7f0000002000\",\"end\":\"0x7f0000004000\",\"offset\":0,\"inode\":0,"
		"\"rss\":50}\n"
		"{\"type\":\"mapping\",\"pid\":7,\"name\":\"[anon]\",\"kind\":\"anon\","
		"\"start\":\"0x7f0000008000\",\"end\":\"0x7f0000009000\",\"offset\":0,\"inode\":0,"
		"\"rss\":5}\n";
	static const struct want want[] = {
		{ M, 7, "[anon]", "rss", 20, 50, 30, "changed" },
		{ M, 7, "[anon]", "rss", 0, 5, 5, "new" },
		{ M, 7, "[anon]", "rss", 10, 10, 0, "changed" },
	};
	struct dx *x = *state;
	struct msc_diff_opts o = { 0 };

	put(x, x->a, sizeof(x->a), "c.json", c);
	put(x, x->b, sizeof(x->b), "d.json", d);
	load_both(x);
	/* no "end" record: cut short */
	assert_false(x->sa.complete);
	assert_int_equal(x->sa.n, 3);
	assert_int_equal(x->sa.ents[2].start, 0x7f0000002000);
	/* "offset" and "inode" are identity, not figures */
	assert_int_equal(x->sa.ents[2].nmetrics, 1);
	compute(x, &o);
	assert_int_equal(x->d.n, 2);
	assert_int_equal(x->d.deltas[0].after->start, 0x7f0000002000);
	assert_int_equal(x->d.deltas[0].before->start, 0x7f0000002000);
	assert_int_equal(x->d.deltas[0].change, 30);
	assert_null(x->d.deltas[1].before);
	assert_int_equal(x->d.deltas[1].after->start, 0x7f0000008000);
	assert_int_equal(x->d.deltas[1].change, 5);
	assert_int_equal(x->d.processes_matched, 1);
	o.all = true;
	compute(x, &o);
	/* processes first (its rss is unchanged), then mappings by change */
	assert_int_equal(x->d.n, 4);
	assert_int_equal(x->d.deltas[0].change, 0);
	assert_int_equal(x->d.deltas[0].after->kind, MSC_ENT_PROCESS);
	expect_deltas(&(struct msc_diff){ .deltas = x->d.deltas + 1, .n = 3 }, want,
		      ARRAY_SIZE(want));
}

static void test_diff_write(void **state)
{
	struct dx *x = *state;
	struct msc_diff_opts o = { 0 };
	struct msc_writer w;
	struct msc_reader r;
	struct msc_rec rec;
	char path[160];
	FILE *f;
	int fd, ret, headers = 0, ends = 0;
	size_t n = 0;
	uint64_t u;
	int64_t i64;
	const char *s;

	load_both(x);
	compute(x, &o);
	snprintf(path, sizeof(path), "%s/diff.json", x->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fd = fileno(f);
	assert_int_equal(msc_writer_init(&w, fd, 0), 0);
	msc_diff_write_stream(&x->d, &w);
	assert_int_equal(msc_writer_release(&w), 0);
	assert_int_equal(fclose(f), 0);

	assert_int_equal(msc_reader_open(&r, path, &x->err), 0);
	while ((ret = msc_reader_next(&r, &rec, &x->err)) > 0) {
		const struct want *wt;

		if (msc_rec_type_is(&rec, "header")) {
			assert_string_equal(msc_rec_str(&rec, "tool", NULL), "ms-diff");
			assert_string_equal(msc_rec_str(&rec, "mode", NULL), "diff");
			assert_string_equal(msc_rec_str(&rec, "before", NULL), x->sa.source);
			assert_string_equal(msc_rec_str(&rec, "after", NULL), x->sb.source);
			headers++;
			continue;
		}
		if (msc_rec_type_is(&rec, "end")) {
			assert_int_equal(msc_rec_u64(&rec, "deltas", &u), 0);
			assert_int_equal(u, ARRAY_SIZE(default_deltas));
			assert_int_equal(msc_rec_i64(&rec, "growth", &i64), 0);
			assert_int_equal(i64, x->d.total_after - x->d.total_before);
			assert_int_equal(msc_rec_u64(&rec, "processes_matched", &u), 0);
			assert_int_equal(u, x->d.processes_matched);
			if (x->sa.header.start_epoch && x->sb.header.start_epoch) {
				assert_int_equal(msc_rec_i64(&rec, "elapsed", &i64), 0);
				assert_int_equal(i64, (int64_t)(x->sb.header.start_epoch -
								x->sa.header.start_epoch));
			}
			ends++;
			continue;
		}
		if (!msc_rec_type_is(&rec, "delta"))
			continue;
		assert_int_equal(headers, 1);
		assert_int_equal(ends, 0);
		assert_true(n < ARRAY_SIZE(default_deltas));
		wt = &default_deltas[n++];
		s = msc_rec_str(&rec, "key", NULL);
		assert_string_equal(s, wt->kind == P ? "process" : "mapping");
		assert_int_equal(msc_rec_i64(&rec, "pid", &i64), 0);
		assert_int_equal(i64, wt->pid);
		s = msc_rec_str(&rec, wt->kind == P ? "comm" : "name", NULL);
		assert_string_equal(s, wt->name);
		assert_string_equal(msc_rec_str(&rec, "metric", NULL), wt->metric);
		assert_int_equal(msc_rec_i64(&rec, "before", &i64), 0);
		assert_int_equal(i64, wt->before);
		assert_int_equal(msc_rec_i64(&rec, "after", &i64), 0);
		assert_int_equal(i64, wt->after);
		assert_int_equal(msc_rec_i64(&rec, "change", &i64), 0);
		assert_int_equal(i64, wt->change);
		assert_string_equal(msc_rec_str(&rec, "status", NULL), wt->status);
		assert_int_equal(msc_rec_u64(&rec, "starttime", &u), 0);
		if (wt->kind == M) {
			assert_string_equal(msc_rec_str(&rec, "kind", NULL), "heap");
			assert_string_equal(msc_rec_str(&rec, "comm", NULL),
					    wt->pid == 100 ? "web" : "db");
			assert_null(msc_rec_field(&rec, "start"));
		}
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, ARRAY_SIZE(default_deltas));
	assert_int_equal(ends, 1);
	msc_reader_release(&r);
}

/* --------------------------------------------------------------- errors */

/* Loads text as NAME and expects -code with err "PATH<suffix>". */
static void expect_load_error(struct dx *x, const char *name, const char *text, int code,
			      const char *suffix)
{
	char path[128], want[MSC_ERR_MAX];
	struct msc_snapshot s;
	struct msc_err err = { 0 };

	put(x, path, sizeof(path), name, text);
	assert_int_equal(msc_snapshot_load(&s, path, &err), code);
	assert_int_equal(err.code, code);
	snprintf(want, sizeof(want), "%s%s", path, suffix);
	if (strcmp(err.msg, want) != 0)
		fail_msg("error \"%s\", want \"%s\"", err.msg, want);
	msc_snapshot_release(&s);
}

static void test_errors(void **state)
{
	struct dx *x = *state;

	expect_load_error(x, "noname.json",
			  HEADER("1")
			  "{\"type\":\"process\",\"pid\":1,\"comm\":\"a\",\"starttime\":1,\"rss\":1}\n"
			  "{\"type\":\"mapping\",\"pid\":1,\"kind\":\"heap\",\"rss\":1}\n",
			  -EINVAL, ":3: mapping record needs a string \"name\"");
	expect_load_error(x, "numname.json",
			  HEADER("1")
			  "{\"type\":\"mapping\",\"pid\":1,\"name\":7,\"rss\":1}\n",
			  -EINVAL, ":2: mapping record needs a string \"name\"");
	/* blank lines count */
	expect_load_error(x, "nopid.json",
			  HEADER("1")
			  "\n"
			  "{\"type\":\"process\",\"comm\":\"a\",\"rss\":1}\n",
			  -EINVAL, ":3: process record needs an integer \"pid\"");
	expect_load_error(x, "strpid.json",
			  HEADER("1")
			  "{\"type\":\"process\",\"pid\":\"12\",\"rss\":1}\n",
			  -EINVAL, ":2: process record needs an integer \"pid\"");
	expect_load_error(x, "zeropid.json",
			  HEADER("1")
			  "{\"type\":\"mapping\",\"pid\":0,\"name\":\"[heap]\"}\n",
			  -EINVAL, ":2: mapping record needs an integer \"pid\"");
	expect_load_error(x, "badstart.json",
			  HEADER("1")
			  "{\"type\":\"process\",\"pid\":1,\"starttime\":\"soon\"}\n",
			  -EINVAL, ":2: \"starttime\" must be an integer");
	expect_load_error(x, "other.json",
			  "{\"type\":\"header\",\"format\":\"heaptrack\",\"version\":1}\n",
			  -EINVAL, ":1: not a memscope stream: format is not \"memscope\"");
	expect_load_error(x, "noheader.json",
			  "{\"type\":\"process\",\"pid\":1,\"rss\":1}\n",
			  -EINVAL,
			  ":1: not a memscope stream: first record is \"process\", not \"header\"");
	expect_load_error(x, "empty.json", "", -EINVAL, ": empty input (no header record)");
	expect_load_error(x, "blank.json", "\n\n  \n", -EINVAL,
			  ": empty input (no header record)");
}

static void test_error_not_json(void **state)
{
	struct dx *x = *state;
	char path[128], prefix[256];
	struct msc_snapshot s;
	struct msc_err err = { 0 };

	put(x, path, sizeof(path), "text.json", HEADER("1") "hello\n");
	assert_int_equal(msc_snapshot_load(&s, path, &err), -EINVAL);
	snprintf(prefix, sizeof(prefix), "%s:2:", path);
	if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
		fail_msg("error \"%s\" does not start with \"%s\"", err.msg, prefix);
	msc_snapshot_release(&s);

	snprintf(path, sizeof(path), "%s/no-such.json", x->dir);
	assert_int_equal(msc_snapshot_load(&s, path, &err), -ENOENT);
	snprintf(prefix, sizeof(prefix), "cannot open '%s': No such file or directory", path);
	assert_string_equal(err.msg, prefix);
	msc_snapshot_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_pid_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_min_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_missing_figure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_identical, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_per_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_not_json, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
