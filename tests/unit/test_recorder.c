/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the recorder (libmsc/record/recorder.c), fed by hand through the
 * collector's callbacks: the records a process's events turn into, the end
 * record's figures, what --follow and an exec change, and a reader that
 * went away.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "msc_recorder.h"
#include "msc_stacks.h"

/* The recorder of the rig opened last: where ev() sends events. */
static struct msc_recorder *cur;

struct rig {
	int fd;
	struct msc_writer w;
	struct msc_recorder *r;
	char warns[2048];
};

static void rig_warn(void *ctx, const char *msg)
{
	struct rig *g = ctx;
	size_t n = strlen(g->warns);

	snprintf(g->warns + n, sizeof(g->warns) - n, "%s\n", msg);
}

static void rig_open(struct rig *g, bool events, bool follow)
{
	struct msc_recorder_opts o = { 0 };
	struct msc_err err;

	memset(g, 0, sizeof(*g));
	g->fd = memfd_create("records", 0);
	assert_true(g->fd >= 0);
	assert_int_equal(msc_writer_init(&g->w, g->fd, 4096), 0);
	o.events = events;
	o.follow = follow;
	o.depth = 16;
	o.warn = rig_warn;
	o.warn_ctx = g;
	g->r = msc_recorder_new_detached(&o, &g->w, &err);
	assert_non_null(g->r);
	cur = g->r;
}

/* Every record written so far, in order. */
static json_t *rig_records(struct rig *g)
{
	json_t *all = json_array();
	char *buf, *line, *save = NULL;
	off_t len;

	msc_writer_flush(&g->w);
	len = lseek(g->fd, 0, SEEK_END);
	assert_true(len >= 0);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(pread(g->fd, buf, (size_t)len, 0), len);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_error_t jerr;
		json_t *rec = json_loads(line, 0, &jerr);

		assert_non_null(rec);
		json_array_append_new(all, rec);
	}
	free(buf);
	return all;
}

static void rig_close(struct rig *g)
{
	msc_recorder_free(g->r);
	msc_writer_release(&g->w);
	close(g->fd);
}

static const char *type_of(json_t *rec)
{
	return json_string_value(json_object_get(rec, "type"));
}

static long long num(json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* The n-th record of a type (0-based), NULL when there are fewer. */
static json_t *nth(json_t *all, const char *type, unsigned n)
{
	size_t i;
	json_t *rec;

	json_array_foreach (all, i, rec)
		if (strcmp(type_of(rec), type) == 0 && n-- == 0)
			return rec;
	return NULL;
}

static unsigned count(json_t *all, const char *type)
{
	unsigned n = 0;

	while (nth(all, type, n))
		n++;
	return n;
}

static void ev(struct msc_cproc *p, unsigned type, uint64_t ts, uint32_t stack, uint64_t v0,
	       uint64_t v1)
{
	struct msc_cevent e = { 0 };

	e.type = type;
	e.ts = ts;
	e.tid = (uint32_t)p->pid;
	e.stack = stack;
	e.v[0] = v0;
	e.v[1] = v1;
	msc_recorder_ops.events(cur, p, &e, 1);
}

/* A stack of one frame: this test binary at the address of fn. */
static uint32_t stack_at(struct msc_recorder *r, const void *fn)
{
	struct msc_stacks *st = msc_recorder_stacks(r);
	struct msc_frame_ref f = { 0 };
	char exe[4096];
	Dl_info info;
	ssize_t n;
	long mod;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_true(dladdr(fn, &info) != 0);
	mod = msc_stacks_module(st, exe, NULL, 0);
	assert_true(mod >= 0);
	f.module = (uint32_t)mod;
	f.addr = (uint64_t)(uintptr_t)fn - (uint64_t)(uintptr_t)info.dli_fbase;
	return msc_stacks_intern(st, &f, 1);
}

static void site_a(void)
{
}

static void site_b(void)
{
}

/*
 * A program that allocates 3 x 64 B at one site and frees one, and 2 x 1000 B
 * at another, keeping both: sites by bytes, two leaks, exact end figures.
 */
static void test_end_record_of_a_process(void **state)
{
	struct msc_cproc p = { .pid = 4242, .ppid = 1, .exe = "/bin/fake", .is_child = true };
	struct msc_cend end = { .reason = "exit", .status = 3 };
	const struct msc_recorder_summary *s;
	char *argv[] = { "fake", "--flag", NULL };
	uint32_t sa, sb;
	json_t *all, *rec;
	struct rig g;

	(void)state;
	rig_open(&g, false, false);
	msc_recorder_set_main(g.r, 4242, "/bin/fake", argv);
	assert_true(msc_recorder_ops.attach(g.r, &p));
	sa = stack_at(g.r, (void *)site_a);
	sb = stack_at(g.r, (void *)site_b);
	assert_int_not_equal(sa, 0);
	assert_int_not_equal(sb, 0);
	assert_int_not_equal(sa, sb);

	ev(&p, MSC_CEV_ALLOC, 10, sa, 0x1000, 64);
	ev(&p, MSC_CEV_ALLOC, 20, sa, 0x2000, 64);
	ev(&p, MSC_CEV_ALLOC, 30, sa, 0x3000, 64);
	ev(&p, MSC_CEV_FREE, 40, 0, 0x2000, 0);
	ev(&p, MSC_CEV_ALLOC, 50, sb, 0x10000, 1000);
	ev(&p, MSC_CEV_ALLOC, 60, sb, 0x20000, 1000);
	/* A free of what was never allocated here. */
	ev(&p, MSC_CEV_FREE, 70, 0, 0x99999, 0);
	msc_recorder_ops.detach(g.r, &p, &end);

	all = rig_records(&g);
	/* One header: the one set_main wrote, not a second at attach. */
	assert_int_equal(count(all, "header"), 1);
	rec = json_array_get(all, 0);
	assert_string_equal(type_of(rec), "header");
	assert_int_equal(num(rec, "pid"), 4242);
	assert_int_equal(num(rec, "ppid"), getpid());
	assert_string_equal(json_string_value(json_object_get(rec, "mode")), "launch");
	assert_string_equal(json_string_value(json_array_get(json_object_get(rec, "argv"), 1)),
			    "--flag");
	assert_int_equal(num(json_object_get(rec, "options"), "depth"), 16);

	/* Sites by bytes: the 2000 B one first. */
	assert_int_equal(count(all, "site"), 2);
	rec = nth(all, "site", 0);
	assert_int_equal(num(rec, "stack"), sb);
	assert_int_equal(num(rec, "allocs"), 2);
	assert_int_equal(num(rec, "bytes"), 2000);
	rec = nth(all, "site", 1);
	assert_int_equal(num(rec, "stack"), sa);
	assert_int_equal(num(rec, "allocs"), 3);
	assert_int_equal(num(rec, "frees"), 1);
	assert_int_equal(num(rec, "live_bytes"), 128);

	/* Both stacks were written, each once, before the first use, and
	 * their frames (one each, two places). */
	assert_int_equal(count(all, "stack"), 2);
	assert_int_equal(count(all, "frame"), 2);
	assert_int_equal(num(nth(all, "stack", 0), "id"), sb);

	/* Unscanned: the leaks are every live block, by site. */
	assert_int_equal(count(all, "leak"), 2);
	rec = nth(all, "end", 0);
	assert_non_null(rec);
	assert_int_equal(num(rec, "pid"), 4242);
	assert_string_equal(json_string_value(json_object_get(rec, "reason")), "exit");
	assert_int_equal(num(rec, "status"), 3);
	assert_int_equal(num(rec, "allocs"), 5);
	assert_int_equal(num(rec, "frees"), 1);
	assert_int_equal(num(rec, "bytes"), 3 * 64 + 2000);
	assert_int_equal(num(rec, "peak"), 2 * 64 + 2000);
	assert_int_equal(num(rec, "peak_ts"), 60);
	assert_int_equal(num(rec, "live"), 4);
	assert_int_equal(num(rec, "live_bytes"), 2128);
	assert_int_equal(num(rec, "unknown_frees"), 1);
	assert_int_equal(num(rec, "lost"), 0);
	assert_int_equal(num(rec, "ts"), 70);
	assert_true(json_is_false(json_object_get(rec, "scanned")));
	/* The end record is the last one. */
	assert_ptr_equal(rec, json_array_get(all, json_array_size(all) - 1));

	s = msc_recorder_summary(g.r);
	assert_true(s->recorded);
	assert_int_equal(s->allocs, 5);
	assert_int_equal(s->frees, 1);
	assert_int_equal(s->bytes, 2192);
	assert_int_equal(s->peak, 2128);
	assert_int_equal(s->leaked, 2128);
	assert_int_equal(s->leaked_blocks, 4);
	assert_false(s->scanned);
	json_decref(all);
	rig_close(&g);
}

/* --events: every event as a record, its stack first; frees name their block. */
static void test_events_follow_and_exec(void **state)
{
	struct msc_cproc p = { .pid = 500, .ppid = 1, .exe = "/bin/parent", .is_child = true };
	struct msc_cproc c = { .pid = 501, .ppid = 500, .exe = "/bin/child", .forked = true };
	struct msc_cend exec_end = { .reason = "exec", .status = -1 };
	struct msc_cend sig_end = { .reason = "signal", .status = -1, .signal = 9 };
	uint32_t sa;
	json_t *all, *rec;
	struct rig g;

	(void)state;
	rig_open(&g, true, true);
	msc_recorder_set_main(g.r, 500, "/bin/parent", NULL);
	assert_true(msc_recorder_ops.attach(g.r, &p));
	assert_true(msc_recorder_ops.attach(g.r, &c));
	sa = stack_at(g.r, (void *)site_a);
	ev(&p, MSC_CEV_ALLOC, 5, sa, 0x1000, 32);
	ev(&c, MSC_CEV_ALLOC, 6, sa, 0x1000, 48);
	ev(&p, MSC_CEV_FREE, 7, 0, 0x1000, 0);
	/* The child execs: its results without leaks (the image is gone). */
	msc_recorder_ops.detach(g.r, &c, &exec_end);
	msc_recorder_ops.detach(g.r, &p, &sig_end);

	all = rig_records(&g);
	assert_int_equal(count(all, "header"), 2);
	rec = nth(all, "header", 1);
	assert_int_equal(num(rec, "pid"), 501);
	assert_int_equal(num(rec, "ppid"), 500);
	assert_string_equal(json_string_value(json_object_get(rec, "exe")), "/bin/child");
	/* The stack once, before the first event that names it, after the
	 * frame record it names (one frame: site_a). */
	assert_int_equal(count(all, "stack"), 1);
	assert_int_equal(count(all, "frame"), 1);
	/* after the headers and ms-record's start marks */
	assert_int_equal(count(all, "mark"), 2 + 2);
	assert_string_equal(type_of(json_array_get(all, 4)), "frame");
	assert_string_equal(type_of(json_array_get(all, 5)), "stack");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(json_array_get(all, 5), "frames"), 0)),
			 num(json_array_get(all, 4), "id"));
	assert_int_equal(count(all, "alloc"), 2);
	rec = nth(all, "alloc", 1);
	assert_int_equal(num(rec, "pid"), 501);
	assert_int_equal(num(rec, "size"), 48);
	rec = nth(all, "free", 0);
	assert_non_null(rec);
	assert_int_equal(num(rec, "pid"), 500);
	assert_int_equal(num(rec, "size"), 32);

	rec = nth(all, "end", 0);
	assert_int_equal(num(rec, "pid"), 501);
	assert_string_equal(json_string_value(json_object_get(rec, "reason")), "exec");
	assert_null(json_object_get(rec, "status"));
	assert_int_equal(num(rec, "live_bytes"), 48);
	rec = nth(all, "end", 1);
	assert_int_equal(num(rec, "pid"), 500);
	assert_int_equal(num(rec, "signal"), 9);
	assert_int_equal(num(rec, "live"), 0);
	/* The exec'd child leaks nothing: its memory went with the image. */
	assert_int_equal(count(all, "leak"), 0);
	json_decref(all);

	/* The summary is the main process's. */
	assert_int_equal(msc_recorder_summary(g.r)->allocs, 1);
	assert_int_equal(msc_recorder_summary(g.r)->frees, 1);
	rig_close(&g);
}

/* Without --follow, other processes are not recorded at all. */
static void test_no_follow_records_main_only(void **state)
{
	struct msc_cproc p = { .pid = 700, .ppid = 1, .exe = "/bin/main" };
	struct msc_cproc c = { .pid = 701, .ppid = 700, .exe = "/bin/other", .forked = true };
	struct msc_cend end = { .reason = "exit", .status = 0 };
	json_t *all;
	struct rig g;

	(void)state;
	rig_open(&g, false, false);
	msc_recorder_set_main(g.r, 700, "/bin/main", NULL);
	assert_false(msc_recorder_ops.attach(g.r, &c));
	assert_null(c.user);
	assert_true(msc_recorder_ops.attach(g.r, &p));
	ev(&p, MSC_CEV_ALLOC, 1, 0, 0x1000, 10);
	msc_recorder_ops.detach(g.r, &p, &end);
	all = rig_records(&g);
	assert_int_equal(count(all, "header"), 1);
	assert_int_equal(count(all, "end"), 1);
	assert_int_equal(num(nth(all, "end", 0), "leaked_bytes"), 10);
	json_decref(all);
	rig_close(&g);
}

/* A reader that went away: output stops, the recording and summary do not. */
static void test_reader_gone(void **state)
{
	struct msc_cproc p = { .pid = 800, .ppid = 1, .exe = "/bin/x" };
	struct msc_cend end = { .reason = "exit", .status = 0 };
	struct rig g;
	int fds[2];

	(void)state;
	rig_open(&g, true, false);
	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	g.w.fd = fds[1];
	assert_int_equal(signal(SIGPIPE, SIG_IGN) != SIG_ERR, 1);
	msc_recorder_set_main(g.r, 800, "/bin/x", NULL);
	assert_true(msc_recorder_ops.attach(g.r, &p));
	ev(&p, MSC_CEV_ALLOC, 1, 0, 0x1000, 10);
	ev(&p, MSC_CEV_ALLOC, 2, 0, 0x2000, 20);
	msc_recorder_ops.detach(g.r, &p, &end);
	assert_int_equal(msc_recorder_summary(g.r)->allocs, 2);
	assert_int_equal(msc_recorder_summary(g.r)->leaked, 30);
	/* EPIPE is the reader's choice, not an error to report. */
	assert_string_equal(g.warns, "");
	g.w.fd = g.fd;
	close(fds[1]);
	rig_close(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_end_record_of_a_process),
		cmocka_unit_test(test_events_follow_and_exec),
		cmocka_unit_test(test_no_follow_records_main_only),
		cmocka_unit_test(test_reader_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
