/* SPDX-License-Identifier: MIT */
/* Unit tests for the record vocabulary (libmsc/format/format.c). */
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
		"header", "end", "stack", "frame", "site", "leak", "sample", "alloc", "free", "unfree",
		"mmap", "munmap", "mremap", "brk", "thread", "process", "mapping", "live",
		"meminfo", "delta", "error", "pool", "hidden", "timeline", "series", "mark",
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
	struct msc_stackdefs d;
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_err err = { 0 };
	unsigned n, attr;

	(void)state;
	assert_int_equal(msc_stackdefs_init(&d), 0);
	assert_int_equal(read_one(line, &r, &rec), 1);
	assert_int_equal(msc_stack_frames(&d, &rec, NULL, 0, &fr, &n, &attr, &err), 0);
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
	/* Read from the record, which goes: no JSON kept unless asked. */
	assert_null(fr[0].json);
	/* An extra allocation function moves attribution one frame up. */
	assert_int_equal(msc_stack_frames(&d, &rec, extra, 1, &fr, &n, &attr, &err), 0);
	assert_int_equal(attr, 2);
	msc_reader_release(&r);

	/* A frame that is neither an object nor an id is bad input, with the
	 * line named. */
	assert_int_equal(read_one("{\"type\":\"stack\",\"id\":1,\"frames\":[\"f\"]}\n", &r, &rec), 1);
	assert_int_equal(msc_stack_frames(&d, &rec, NULL, 0, &fr, &n, &attr, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "t:1: stack frames must be objects or frame ids"));
	msc_reader_release(&r);
	assert_int_equal(read_one("{\"type\":\"stack\",\"id\":1}\n", &r, &rec), 1);
	assert_int_equal(msc_stack_frames(&d, &rec, NULL, 0, &fr, &n, &attr, &err), -EINVAL);
	msc_reader_release(&r);
	msc_stackdefs_release(&d);
}

/* Reads every record of text into d (frame and stack records); returns the
 * first error, with err set, or 0. */
static int read_defs(struct msc_stackdefs *d, const char *text, struct msc_err *err)
{
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_rframe *fr;
	unsigned n, attr;
	int ret;

	msc_reader_init_mem(&r, text, strlen(text), "v2.ndjson");
	while ((ret = msc_reader_next(&r, &rec, err)) > 0) {
		if (msc_rec_rtype(&rec) == MSC_R_FRAME)
			ret = msc_stackdefs_frame(d, &rec, NULL, err);
		else if (msc_rec_rtype(&rec) == MSC_R_STACK)
			ret = msc_stack_frames(d, &rec, NULL, 0, &fr, &n, &attr, err);
		if (ret)
			break;
	}
	msc_reader_release(&r);
	return ret;
}

#define FRAME(id, fn, line) \
	"{\"type\":\"frame\",\"id\":" #id ",\"ip\":\"0x" #line "\",\"obj\":\"/bin/app\"," \
	"\"fn\":\"" fn "\",\"file\":\"/src/app.c\",\"line\":" #line "}\n"

static void test_v2_frames_and_parents(void **state)
{
	const char *text =
		FRAME(1, "main", 90) FRAME(2, "run", 80) FRAME(3, "grow", 70)
		"{\"type\":\"frame\",\"id\":4,\"ip\":\"0x60\",\"obj\":\"/bin/app\",\"fn\":\"inl\","
		"\"file\":\"/src/inl.h\",\"line\":6,\"inline\":true}\n"
		"{\"type\":\"stack\",\"id\":1,\"frames\":[2,1]}\n"
		"{\"type\":\"stack\",\"id\":2,\"parent\":1,\"frames\":[4,3]}\n"
		/* mixed: a frame in place, then a frame record, then a parent */
		"{\"type\":\"stack\",\"id\":3,\"parent\":2,\"frames\":[{\"fn\":\"xmalloc\"},3]}\n"
		/* frame 3 is defined again: stack 2 keeps what it referred to */
		FRAME(3, "shrink", 71)
		"{\"type\":\"stack\",\"id\":4,\"parent\":1,\"frames\":[3]}\n";
	const char *extra[] = { "xmalloc" };
	const struct msc_stackdef *s;
	struct msc_rframe *fr;
	struct msc_stackdefs d;
	struct msc_err err = { 0 };

	(void)state;
	assert_int_equal(msc_stackdefs_init(&d), 0);
	assert_int_equal(read_defs(&d, text, &err), 0);
	s = msc_stackdefs_get(&d, 2);
	assert_non_null(s);
	assert_int_equal(s->n, 4);
	assert_int_equal(s->depth, 2);
	fr = s->frames;
	assert_string_equal(fr[0].fn, "inl");
	assert_true(fr[0].inlined);
	assert_string_equal(fr[1].fn, "grow");
	assert_int_equal(fr[1].line, 70);
	assert_string_equal(fr[2].fn, "run");
	assert_string_equal(fr[3].fn, "main");
	/* A frame record's JSON is the version 1 frame: no type, no id. */
	assert_int_equal(fr[1].json_len, strlen("{\"ip\":\"0x70\",\"obj\":\"/bin/app\",\"fn\":\"grow\","
						"\"file\":\"/src/app.c\",\"line\":70}"));
	assert_memory_equal(fr[1].json, "{\"ip\":\"0x70\",", 13);
	s = msc_stackdefs_get(&d, 3);
	assert_int_equal(s->n, 6);
	assert_string_equal(s->frames[0].fn, "xmalloc");
	assert_string_equal(s->frames[1].fn, "grow");
	assert_string_equal(s->frames[5].fn, "main");
	assert_int_equal(msc_stack_attr(s->frames, s->n, extra, 1), 1);
	s = msc_stackdefs_get(&d, 4);
	assert_int_equal(s->n, 3);
	assert_string_equal(s->frames[0].fn, "shrink");
	assert_string_equal(msc_stackdefs_get(&d, 2)->frames[1].fn, "grow");
	msc_stackdefs_release(&d);
}

/* Reads text, which must fail at line "line" with message what. */
static void bad_v2(const char *text, const char *where_what)
{
	struct msc_stackdefs d;
	struct msc_err err = { 0 };

	assert_int_equal(msc_stackdefs_init(&d), 0);
	assert_int_equal(read_defs(&d, text, &err), -EINVAL);
	if (!strstr(err.msg, where_what))
		fail_msg("expected '%s', got '%s'", where_what, err.msg);
	msc_stackdefs_release(&d);
}

static void test_v2_bad_references(void **state)
{
	(void)state;
	/* References to what is not defined (yet): the line is named. */
	bad_v2(FRAME(1, "main", 9) "{\"type\":\"stack\",\"id\":1,\"frames\":[1,2]}\n",
	       "v2.ndjson:2: stack record refers to frame 2, never defined");
	bad_v2(FRAME(1, "main", 9) "{\"type\":\"stack\",\"id\":2,\"parent\":1,\"frames\":[1]}\n",
	       "v2.ndjson:2: stack record refers to parent stack 1, never defined");
	bad_v2("{\"type\":\"stack\",\"id\":1,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":2,\"parent\":1,\"frames\":[7]}\n",
	       "v2.ndjson:2: stack record refers to frame 7, never defined");
	bad_v2("{\"type\":\"stack\",\"id\":1,\"frames\":[-1]}\n",
	       "v2.ndjson:1: stack record refers to frame -1, never defined");
	bad_v2("{\"type\":\"stack\",\"id\":1,\"parent\":\"1\",\"frames\":[]}\n",
	       "v2.ndjson:1: \"parent\" must be a stack id");
	bad_v2("{\"type\":\"stack\",\"id\":1,\"parent\":0,\"frames\":[]}\n",
	       "v2.ndjson:1: \"parent\" must be a stack id");
	bad_v2("{\"type\":\"frame\",\"fn\":\"main\"}\n",
	       "v2.ndjson:1: frame record needs a positive integer \"id\"");
	bad_v2("{\"type\":\"frame\",\"id\":4294967296}\n",
	       "v2.ndjson:1: frame record needs a positive integer \"id\"");
	/* A stack cannot be its own parent, even defined again. */
	bad_v2("{\"type\":\"stack\",\"id\":1,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":1,\"parent\":1,\"frames\":[]}\n",
	       "v2.ndjson:2: stack 1: its parent chain leads back to itself");
	/* Nor its grandparent's parent: 1 -> 3 -> 2 -> 1. */
	bad_v2("{\"type\":\"stack\",\"id\":1,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":2,\"parent\":1,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":3,\"parent\":2,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":1,\"parent\":3,\"frames\":[]}\n",
	       "v2.ndjson:4: stack 1: its parent chain leads back to itself");
	/* A chain through ids defined again later: 3's parent 2 is now the
	 * new 2, whose parent is 1, which would be 3's child. */
	bad_v2("{\"type\":\"stack\",\"id\":2,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":1,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":3,\"parent\":2,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":2,\"parent\":1,\"frames\":[]}\n"
	       "{\"type\":\"stack\",\"id\":1,\"parent\":3,\"frames\":[]}\n",
	       "v2.ndjson:5: stack 1: its parent chain leads back to itself");
}

static void test_v2_depth_limit(void **state)
{
	size_t cap = 64 * 1024 * 1024, len = 0;
	char *text = malloc(cap);
	struct msc_stackdefs d;
	struct msc_err err = { 0 };
	const struct msc_stackdef *s;
	unsigned i, k, per = 256, stacks = MSC_STACK_MAX_FRAMES / 256;

	(void)state;
	assert_non_null(text);
	len += (size_t)sprintf(text + len, "%s", FRAME(1, "f", 1));
	/* 64 stacks of 256 frames each, each the parent of the next: the
	 * last one has exactly the limit. */
	for (i = 1; i <= stacks; i++) {
		len += (size_t)sprintf(text + len, "{\"type\":\"stack\",\"id\":%u,", i);
		if (i > 1)
			len += (size_t)sprintf(text + len, "\"parent\":%u,", i - 1);
		len += (size_t)sprintf(text + len, "\"frames\":[");
		for (k = 0; k < per; k++)
			len += (size_t)sprintf(text + len, "%s1", k ? "," : "");
		len += (size_t)sprintf(text + len, "]}\n");
	}
	assert_int_equal(msc_stackdefs_init(&d), 0);
	assert_int_equal(read_defs(&d, text, &err), 0);
	s = msc_stackdefs_get(&d, stacks);
	assert_int_equal(s->n, MSC_STACK_MAX_FRAMES);
	assert_string_equal(s->frames[MSC_STACK_MAX_FRAMES - 1].fn, "f");
	msc_stackdefs_release(&d);
	/* One frame more is bad input. */
	len += (size_t)sprintf(text + len, "{\"type\":\"stack\",\"id\":%u,\"parent\":%u,\"frames\":[1]}\n",
			       stacks + 1, stacks);
	assert_int_equal(msc_stackdefs_init(&d), 0);
	assert_int_equal(read_defs(&d, text, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "v2.ndjson:66: stack 65 has more than 16384 frames or parents"));
	msc_stackdefs_release(&d);
	/* So is a chain of more parents than that, even of empty stacks. */
	len = (size_t)sprintf(text, "{\"type\":\"stack\",\"id\":1,\"frames\":[]}\n");
	for (i = 2; i <= MSC_STACK_MAX_FRAMES + 1; i++)
		len += (size_t)sprintf(text + len, "{\"type\":\"stack\",\"id\":%u,\"parent\":%u,\"frames\":[]}\n",
				       i, i - 1);
	assert_int_equal(msc_stackdefs_init(&d), 0);
	assert_int_equal(read_defs(&d, text, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "v2.ndjson:16385: stack 16385 has more than 16384"));
	msc_stackdefs_release(&d);
	free(text);
}

static void test_v1_stack_written_back(void **state)
{
	const char *text =
		FRAME(1, "main", 90) FRAME(2, "run", 80)
		"{\"type\":\"stack\",\"id\":1,\"frames\":[1]}\n"
		"{\"type\":\"stack\",\"id\":2,\"parent\":1,\"frames\":[2],\"x\":[1]}\n";
	struct msc_stackdefs d;
	struct msc_stackdef *s;
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_writer w;
	struct msc_err err = { 0 };
	char buf[512];
	FILE *f = tmpfile();
	size_t n;

	(void)state;
	assert_int_equal(msc_stackdefs_init(&d), 0);
	d.keep_lines = true;
	msc_reader_init_mem(&r, text, strlen(text), "t");
	while (msc_reader_next(&r, &rec, &err) > 0)
		if (msc_rec_rtype(&rec) == MSC_R_FRAME)
			assert_int_equal(msc_stackdefs_frame(&d, &rec, NULL, &err), 0);
		else
			assert_int_equal(msc_stackdefs_stack(&d, &rec, &s, &err), 0);
	msc_reader_release(&r);
	/* Not read until asked. */
	assert_null(s->frames);
	assert_int_equal(msc_stackdef_frames(&d, s, &err), 0);
	assert_int_equal(msc_writer_init(&w, fileno(f), 0), 0);
	assert_int_equal(msc_write_stack_v1(&w, s), 0);
	assert_int_equal(msc_writer_release(&w), 0);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	assert_string_equal(buf, "{\"type\":\"stack\",\"id\":2,\"x\":[1],\"frames\":["
			    "{\"ip\":\"0x80\",\"obj\":\"/bin/app\",\"fn\":\"run\",\"file\":\"/src/app.c\",\"line\":80},"
			    "{\"ip\":\"0x90\",\"obj\":\"/bin/app\",\"fn\":\"main\",\"file\":\"/src/app.c\",\"line\":90}]}\n");
	fclose(f);
	msc_stackdefs_release(&d);
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
	/* Wrappers of real programs, a C++ name by its name alone. */
	assert_true(msc_is_passthrough("Perl_safesysmalloc", NULL, 0));
	assert_true(msc_is_passthrough("sqlite3DbMallocRawNN", NULL, 0));
	assert_true(msc_is_passthrough("_PyObject_Malloc", NULL, 0));
	assert_true(msc_is_passthrough("g_strdup_printf", NULL, 0));
	assert_true(msc_is_passthrough("jv_mem_alloc", NULL, 0));
	assert_true(msc_is_passthrough("ggc_internal_alloc(unsigned long, void (*)(void*), unsigned long, unsigned long)", NULL, 0));
	assert_false(msc_is_passthrough("ggc_internal_allocx(unsigned long)", NULL, 0));
	assert_false(msc_is_passthrough("Perl_sv_upgrade", NULL, 0));
	/* The C++ standard library, return type or not. */
	assert_true(msc_is_passthrough("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(int const&)", NULL, 0));
	assert_true(msc_is_passthrough("std::__cxx11::basic_string<char>::_M_mutate(unsigned long)", NULL, 0));
	assert_true(msc_is_passthrough("__cxa_allocate_exception", NULL, 0));
	assert_false(msc_is_passthrough("stdio_alloc", NULL, 0));
}

/* A wrapper's unnamed helpers below it in its own library are its. */
static void test_attr_through_wrapper_helpers(void **state)
{
	struct msc_rframe f[5] = {
		{ .obj = "/usr/lib/libsqlite3.so.0", .offset = "0xa7504" },
		{ .fn = "sqlite3Malloc", .obj = "/usr/lib/libsqlite3.so.0" },
		{ .obj = "/usr/lib/libsqlite3.so.0", .offset = "0x3974e" },
		{ .fn = "sqlite3BtreeInsert", .obj = "/usr/lib/libsqlite3.so.0" },
		{ .fn = "main", .obj = "/usr/bin/sqlite3" },
	};
	struct msc_rframe g[3] = {
		{ .obj = "/usr/lib/libother.so", .offset = "0x10" },
		{ .fn = "sqlite3Malloc", .obj = "/usr/lib/libsqlite3.so.0" },
		{ .fn = "main", .obj = "/usr/bin/sqlite3" },
	};

	(void)state;
	assert_int_equal(msc_stack_attr(f, 5, NULL, 0), 2);
	/* An unnamed frame of another library is not the wrapper's. */
	assert_int_equal(msc_stack_attr(g, 3, NULL, 0), 0);
}

/* A range's bounds on leak records: marks take whole records by the mark
 * they came after, times those whose blocks are all on their side. */
static void test_span_leak(void **state)
{
	const struct msc_span marks = { "warm", "done", false, false, true, true, 100, 300 };
	const struct msc_span times = { "100ns", "300ns", true, true, true, true, 100, 300 };
	const struct msc_span since = { "100ns", NULL, true, false, true, false, 100, 0 };
	struct msc_span init;

	(void)state;
	assert_int_equal(msc_span_leak(&marks, 0, 10, 20), 0);		/* before the first mark */
	assert_int_equal(msc_span_leak(&marks, 100, 150, 290), 1);	/* after since's mark */
	assert_int_equal(msc_span_leak(&marks, 300, 310, 320), 0);	/* after until's */
	assert_int_equal(msc_span_leak(&times, 0, 150, 250), 1);
	assert_int_equal(msc_span_leak(&times, 0, 50, 99), 0);
	assert_int_equal(msc_span_leak(&times, 0, 50, 150), -1);	/* straddles 100 */
	assert_int_equal(msc_span_leak(&times, 0, 250, 350), -2);	/* straddles 300 */
	assert_int_equal(msc_span_leak(&times, 0, 300, 350), 0);
	assert_int_equal(msc_span_leak(&since, 0, 100, 1000), 1);	/* no until */
	assert_int_equal(msc_mark_bound("start", "ms-record", 55, true), 0);
	assert_int_equal(msc_mark_bound("end", "ms-record", 55, false), UINT64_MAX);
	assert_int_equal(msc_mark_bound("end", "program", 55, false), 55);
	/* A time is known at once, a mark once its record says it. */
	msc_span_init(&init, "1.5us", "warm");
	assert_true(init.since_known && init.since_time);
	assert_int_equal(init.since_ts, 1500);
	assert_false(init.until_known);
	msc_span_mark_of(&init, "warm", "program", 7000);
	assert_true(init.until_known && !init.until_time);
	assert_int_equal(init.until_ts, 7000);
	msc_span_mark_of(&init, "warm", "program", 9000);	/* the first of the name */
	assert_int_equal(init.until_ts, 7000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span_leak),
		cmocka_unit_test(test_rtype_names_round_trip),
		cmocka_unit_test(test_record_writer_uses_the_table),
		cmocka_unit_test(test_frame_label),
		cmocka_unit_test(test_stack_frames_and_attribution),
		cmocka_unit_test(test_v2_frames_and_parents),
		cmocka_unit_test(test_v2_bad_references),
		cmocka_unit_test(test_v2_depth_limit),
		cmocka_unit_test(test_v1_stack_written_back),
		cmocka_unit_test(test_passthrough),
		cmocka_unit_test(test_attr_through_wrapper_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
