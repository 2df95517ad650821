/* SPDX-License-Identifier: MIT */
/* Unit tests for the record vocabulary (libmsc/format.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_format.h"

/* ------------------------------------------------------------- types */

static void test_rtype_names_round_trip(void **state)
{
	static const char *const every[] = {
		"header", "end", "stack", "site", "leak", "sample", "alloc", "free", "unfree",
		"mmap", "munmap", "mremap", "brk", "thread", "process", "mapping", "live",
		"meminfo", "delta",
	};
	unsigned t, i;

	(void)state;
	/* One name per type, each type its own name, all documented ones. */
	assert_int_equal(MSC_R_NTYPES - 1, sizeof(every) / sizeof(every[0]));
	for (i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		enum msc_rtype k = msc_rtype_of(every[i]);

		assert_int_not_equal(k, MSC_R_OTHER);
		assert_string_equal(msc_rtype_name(k), every[i]);
	}
	for (t = 1; t < MSC_R_NTYPES; t++)
		assert_int_equal(msc_rtype_of(msc_rtype_name((enum msc_rtype)t)), t);
	assert_int_equal(msc_rtype_of("site"), MSC_R_SITE);
	assert_int_equal(msc_rtype_of("munmap"), MSC_R_MUNMAP);
	/* Unknown and near names are other types (forward compatibility). */
	assert_int_equal(msc_rtype_of("sites"), MSC_R_OTHER);
	assert_int_equal(msc_rtype_of("Site"), MSC_R_OTHER);
	assert_int_equal(msc_rtype_of("m"), MSC_R_OTHER);
	assert_int_equal(msc_rtype_of(""), MSC_R_OTHER);
	assert_int_equal(msc_rtype_of(NULL), MSC_R_OTHER);
	assert_string_equal(msc_rtype_name(MSC_R_OTHER), "");
	assert_string_equal(msc_rtype_name(MSC_R_NTYPES), "");
}

static void test_record_writer_uses_the_table(void **state)
{
	struct msc_writer w;
	char buf[256];
	FILE *f = tmpfile();
	size_t n;

	(void)state;
	assert_non_null(f);
	assert_int_equal(msc_writer_init(&w, fileno(f), 0), 0);
	msc_w_record(&w, MSC_R_MREMAP);
	msc_w_u64(&w, "ts", 5);
	msc_w_end(&w);
	msc_writer_release(&w);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	assert_string_equal(buf, "{\"type\":\"mremap\",\"ts\":5}\n");
	fclose(f);
}

/* ------------------------------------------------------------ frames */

static void test_frame_label(void **state)
{
	struct msc_rframe lined = { .fn = "main", .file = "/src/app/main.c", .line = 12,
				    .obj = "/usr/bin/app" };
	struct msc_rframe offs = { .fn = "fopen", .fn_offset = "0x1a",
				   .obj = "/lib/x86_64-linux-gnu/libc.so.6" };
	struct msc_rframe named = { .fn = "fopen" };
	struct msc_rframe bare = { .obj = "/lib/libz.so.1", .offset = "0x4f0" };
	struct msc_rframe nothing = { 0 };
	char buf[128];

	(void)state;
	assert_string_equal(msc_frame_label(buf, sizeof(buf), &lined), "main main.c:12");
	assert_string_equal(msc_frame_label(buf, sizeof(buf), &offs), "fopen+0x1a (libc.so.6)");
	assert_string_equal(msc_frame_label(buf, sizeof(buf), &named), "fopen (?)");
	assert_string_equal(msc_frame_label(buf, sizeof(buf), &bare), "libz.so.1+0x4f0");
	assert_string_equal(msc_frame_label(buf, sizeof(buf), &nothing), "?+?");
	assert_string_equal(msc_frame_label(buf, sizeof(buf), NULL), "?");
	/* Truncated, never overflowing. */
	assert_string_equal(msc_frame_label(buf, 8, &lined), "main ma");
	assert_string_equal(msc_base_name("/a/b/c.so"), "c.so");
	assert_string_equal(msc_base_name("c.so"), "c.so");
	assert_null(msc_base_name(NULL));
}

static int read_one(const char *line, struct msc_reader *r, struct msc_rec *rec)
{
	struct msc_err err = { 0 };

	msc_reader_init_mem(r, line, strlen(line), "t");
	return msc_reader_next(r, rec, &err);
}

static void test_stack_frames_and_attribution(void **state)
{
	const char *line =
		"{\"type\":\"stack\",\"id\":4,\"frames\":["
		"{\"fn\":\"__strdup\",\"obj\":\"/lib/libc.so.6\",\"fn_offset\":\"0x1e\"},"
		"{\"fn\":\"load\",\"file\":\"/src/cfg.c\",\"line\":41,\"inline\":true},"
		"{\"fn\":\"main\",\"file\":\"/src/main.c\",\"line\":9},"
		"{\"obj\":\"/bin/app\",\"offset\":\"0x1040\"}]}\n";
	const char *extra[] = { "load" };
	struct msc_rframe *fr;
	struct msc_arena a;
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_err err = { 0 };
	unsigned n, attr;

	(void)state;
	msc_arena_init(&a);
	assert_int_equal(read_one(line, &r, &rec), 1);
	assert_int_equal(msc_stack_frames(&rec, &a, NULL, 0, &fr, &n, &attr, &err), 0);
	assert_int_equal(n, 4);
	/* Past strdup (stacks start at the allocator's caller): the caller
	 * owns the memory. */
	assert_int_equal(attr, 1);
	assert_string_equal(fr[1].fn, "load");
	assert_string_equal(fr[1].file, "/src/cfg.c");
	assert_int_equal(fr[1].line, 41);
	assert_true(fr[1].inlined);
	assert_false(fr[2].inlined);
	assert_string_equal(fr[0].fn_offset, "0x1e");
	assert_null(fr[3].fn);
	assert_string_equal(fr[3].offset, "0x1040");
	/* An extra allocation function moves attribution one frame up. */
	assert_int_equal(msc_stack_frames(&rec, &a, extra, 1, &fr, &n, &attr, &err), 0);
	assert_int_equal(attr, 2);
	msc_reader_release(&r);

	/* A frame that is not an object is bad input, with the line named. */
	assert_int_equal(read_one("{\"type\":\"stack\",\"id\":1,\"frames\":[1]}\n", &r, &rec), 1);
	assert_int_equal(msc_stack_frames(&rec, &a, NULL, 0, &fr, &n, &attr, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "t:1"));
	msc_reader_release(&r);
	assert_int_equal(read_one("{\"type\":\"stack\",\"id\":1}\n", &r, &rec), 1);
	assert_int_equal(msc_stack_frames(&rec, &a, NULL, 0, &fr, &n, &attr, &err), -EINVAL);
	msc_reader_release(&r);
	msc_arena_release(&a);
}

static void test_passthrough(void **state)
{
	const char *extra[] = { "my_alloc", "xx_*" };

	(void)state;
	assert_true(msc_is_passthrough("strdup", NULL, 0));
	assert_true(msc_is_passthrough("__strdup", NULL, 0));
	assert_true(msc_is_passthrough("__vasprintf_internal", NULL, 0));
	assert_true(msc_is_passthrough("realpath_stk", NULL, 0));
	assert_true(msc_is_passthrough("__getdelim", NULL, 0));
	assert_true(msc_is_passthrough("std::allocator<int>::allocate(unsigned long)", NULL, 0));
	assert_true(msc_is_passthrough("operator new(unsigned long)", NULL, 0));
	assert_false(msc_is_passthrough("main", NULL, 0));
	assert_false(msc_is_passthrough("setlocale", NULL, 0));
	assert_false(msc_is_passthrough("strdupx", NULL, 0));
	assert_false(msc_is_passthrough(NULL, NULL, 0));
	assert_false(msc_is_passthrough("my_alloc", NULL, 0));
	assert_true(msc_is_passthrough("my_alloc", extra, 2));
	assert_true(msc_is_passthrough("__my_alloc", extra, 2));
	assert_true(msc_is_passthrough("xx_new", extra, 2));
	assert_false(msc_is_passthrough("yy_new", extra, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtype_names_round_trip),
		cmocka_unit_test(test_record_writer_uses_the_table),
		cmocka_unit_test(test_frame_label),
		cmocka_unit_test(test_stack_frames_and_attribution),
		cmocka_unit_test(test_passthrough),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
