/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of msc_filter: attribution past pass-through wrappers, frame
 * patterns, LeakSanitizer suppression files (and their errors), and the
 * stream filter on small streams written by hand: what passes, which stacks
 * are written (only those used, once, before use), the end record's counts,
 * and the errors of bad input with their line numbers.
 */
#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_filter.h"

/* ------------------------------------------------------------ helpers */

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/msc_test_filter.XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Runs the filter on text; returns what it wrote (caller frees) and the
 * status in *ret, the error message in err. */
static char *run(const struct msc_filter_opts *o, const char *text, int *ret, struct msc_err *err,
		 struct msc_filter_stats *st)
{
	struct msc_reader r;
	struct msc_writer w;
	FILE *out = tmpfile();
	char *buf;
	long n;

	assert_non_null(out);
	assert_int_equal(msc_reader_init_mem(&r, text, strlen(text), "in.ndjson"), 0);
	assert_int_equal(msc_writer_init(&w, fileno(out), 0), 0);
	*ret = msc_filter_run(o, &r, &w, st, err);
	assert_int_equal(msc_writer_release(&w), 0);
	msc_reader_release(&r);
	n = ftell(out);
	if (n <= 0)
		n = lseek(fileno(out), 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fileno(out), buf, (size_t)n, 0), n);
	fclose(out);
	return buf;
}

static unsigned count_lines(const char *s, const char *needle)
{
	unsigned n = 0;
	const char *p = s;

	while ((p = strstr(p, needle))) {
		n++;
		p++;
	}
	return n;
}

#define HDR "{\"type\":\"header\",\"format\":\"memscope\",\"version\":1,\"tool\":\"ms-record\",\"mode\":\"launch\",\"pid\":7}\n"
#define END "{\"type\":\"end\",\"reason\":\"exit\",\"status\":0}\n"

/* Stack 1: malloc from libc's stdio for main; stack 2: strdup called by
 * keep (the program); stack 3: never used. */
static const char stream[] =
	HDR
	"{\"type\":\"stack\",\"id\":1,\"frames\":[{\"fn\":\"_IO_file_doallocate\",\"obj\":\"/lib/x86_64-linux-gnu/libc.so.6\"},"
	"{\"fn\":\"main\",\"file\":\"/src/app.c\",\"line\":9,\"obj\":\"/bin/app\"}]}\n"
	"{\"type\":\"stack\",\"id\":2,\"frames\":[{\"fn\":\"__strdup\",\"obj\":\"/lib/x86_64-linux-gnu/libc.so.6\"},"
	"{\"fn\":\"keep\",\"file\":\"/src/app.c\",\"line\":4,\"obj\":\"/bin/app\"},"
	"{\"fn\":\"main\",\"file\":\"/src/app.c\",\"line\":10,\"obj\":\"/bin/app\"}]}\n"
	"{\"type\":\"stack\",\"id\":3,\"frames\":[{\"fn\":\"unused\"}]}\n"
	"{\"type\":\"sample\",\"pid\":7,\"ts\":5,\"rss\":4096,\"heap\":0}\n"
	"{\"type\":\"site\",\"pid\":7,\"stack\":1,\"size\":4096,\"fn\":\"malloc\",\"allocs\":1,\"frees\":1,\"bytes\":4096,\"live\":0,\"live_bytes\":0}\n"
	"{\"type\":\"site\",\"pid\":7,\"stack\":2,\"size\":6,\"fn\":\"malloc\",\"allocs\":3,\"frees\":0,\"bytes\":18,\"live\":3,\"live_bytes\":18}\n"
	"{\"type\":\"leak\",\"pid\":7,\"stack\":2,\"size\":6,\"fn\":\"malloc\",\"kind\":\"definitely\",\"count\":3,\"bytes\":18}\n"
	END;

/* -------------------------------------------------------- attribution */

static void test_frame_patterns(void **state)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";

	(void)state;
	/* Modules: the path, the file name, the name up to ".so". */
	assert_true(msc_frame_matches("libc", "fopen", NULL, libc));
	assert_true(msc_frame_matches("libc.so.6", "fopen", NULL, libc));
	assert_true(msc_frame_matches("libc.so*", "fopen", NULL, libc));
	assert_true(msc_frame_matches(libc, "fopen", NULL, libc));
	assert_false(msc_frame_matches("libstdc++", "fopen", NULL, libc));
	assert_false(msc_frame_matches("lib", "fopen", NULL, libc));
	/* Functions, with and without their parameters. */
	assert_true(msc_frame_matches("ns::Widget::grow", "ns::Widget::grow(unsigned long)", NULL, NULL));
	assert_true(msc_frame_matches("ns::Widget::*", "ns::Widget::grow(unsigned long)", NULL, NULL));
	assert_false(msc_frame_matches("grow", "ns::Widget::grow(unsigned long)", NULL, NULL));
	/* Source files: the path or its last component. */
	assert_true(msc_frame_matches("app.c", "main", "/src/app.c", "/bin/app"));
	assert_true(msc_frame_matches("/src/*", "main", "/src/app.c", "/bin/app"));
	assert_false(msc_frame_matches("src", "main", "/src/app.c", "/bin/app"));
	assert_false(msc_frame_matches("x", NULL, NULL, NULL));
}

/* -------------------------------------------------------- suppressions */

static void test_supp_load(void **state)
{
	char *path = write_tmp("# a comment\n\n  leak:plain  \r\nleak:^anchored$\n\tleak:operator new[]\nleak:a*b?\n");
	struct msc_supp s;
	struct msc_err err;

	(void)state;
	assert_int_equal(msc_supp_load(&s, path, &err), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.rules[0].pattern, "plain");
	assert_int_equal(s.rules[0].line, 3);
	assert_string_equal(s.rules[0].glob, "*plain*");
	assert_string_equal(s.rules[1].glob, "anchored");
	assert_int_equal(s.rules[1].line, 4);
	assert_string_equal(s.rules[2].pattern, "operator new[]");
	/* LeakSanitizer's '*' is a wildcard; '[' and '?' are themselves. */
	assert_int_equal(fnmatch(s.rules[2].glob, "operator new[](unsigned long)", 0), 0);
	assert_int_not_equal(fnmatch(s.rules[2].glob, "operator newn", 0), 0);
	assert_int_equal(fnmatch(s.rules[3].glob, "xa-long-b?", 0), 0);
	assert_int_not_equal(fnmatch(s.rules[3].glob, "xa-long-bz", 0), 0);
	msc_supp_release(&s);
	unlink(path);
	free(path);
}

static void test_supp_errors(void **state)
{
	struct msc_supp s;
	struct msc_err err;
	char *path, want[128];

	(void)state;
	path = write_tmp("leak:ok\n# fine\nleek:typo\n");
	assert_int_equal(msc_supp_load(&s, path, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s:3: ", path);
	assert_non_null(strstr(err.msg, want));
	assert_int_equal(s.n, 0);
	unlink(path);
	free(path);
	path = write_tmp("leak:\n");
	assert_int_equal(msc_supp_load(&s, path, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s:1: ", path);
	assert_non_null(strstr(err.msg, want));
	unlink(path);
	free(path);
	assert_int_equal(msc_supp_load(&s, "/nonexistent/supp", &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/supp"));
}

/* -------------------------------------------------------- the filter */

static void test_no_filter_passes_all(void **state)
{
	struct msc_filter_opts o = { 0 };
	struct msc_filter_stats st;
	struct msc_err err;
	int ret;
	char *out = run(&o, stream, &ret, &err, &st);

	(void)state;
	assert_int_equal(ret, 0);
	assert_false(st.truncated);
	assert_int_equal(count_lines(out, "\"type\":\"site\""), 2);
	assert_int_equal(count_lines(out, "\"type\":\"leak\""), 1);
	assert_int_equal(count_lines(out, "\"type\":\"sample\""), 1);
	/* Stacks: only those used, once each. */
	assert_int_equal(count_lines(out, "\"type\":\"stack\""), 2);
	assert_null(strstr(out, "\"id\":3"));
	assert_non_null(strstr(out, "\"filtered\":{}"));
	assert_non_null(strstr(out, "\"filters\":[]"));
	free(out);
}

static void test_min_and_lazy_stacks(void **state)
{
	struct msc_filter_opts o = { .has_min = true, .min_size = 64 };
	struct msc_filter_stats st;
	struct msc_err err;
	int ret;
	char *out = run(&o, stream, &ret, &err, &st);

	(void)state;
	assert_int_equal(ret, 0);
	assert_int_equal(count_lines(out, "\"type\":\"site\""), 1);
	assert_non_null(strstr(out, "\"size\":4096"));
	assert_int_equal(count_lines(out, "\"type\":\"leak\""), 0);
	/* Stack 1 before the site that uses it; stack 2 not at all. */
	assert_non_null(strstr(out, "\"id\":1"));
	assert_null(strstr(out, "\"id\":2"));
	assert_true(strstr(out, "\"id\":1") < strstr(out, "\"type\":\"site\""));
	assert_non_null(strstr(out, "\"filtered\":{\"site\":{\"records\":1,\"bytes\":18},"
				    "\"leak\":{\"records\":1,\"blocks\":3,\"bytes\":18}}"));
	assert_non_null(strstr(out, "\"filters\":[\"--min 64\"]"));
	free(out);
}

static void test_ignore_attribution(void **state)
{
	const char *ignore[] = { "libc" };
	struct msc_filter_opts o = { .ignore = ignore, .nignore = 1 };
	struct msc_filter_stats st;
	struct msc_err err;
	int ret;
	char *out = run(&o, stream, &ret, &err, &st);

	(void)state;
	assert_int_equal(ret, 0);
	/* stdio's buffer is libc's; the strdup is keep's. */
	assert_null(strstr(out, "\"size\":4096"));
	assert_int_equal(count_lines(out, "\"type\":\"site\""), 1);
	assert_int_equal(count_lines(out, "\"type\":\"leak\""), 1);
	free(out);
}

static void test_suppressions_apply_to_leaks(void **state)
{
	char *path = write_tmp("leak:keep\n");
	struct msc_supp s;
	struct msc_filter_opts o = { 0 };
	struct msc_filter_stats st;
	struct msc_err err;
	int ret;
	char *out;

	(void)state;
	assert_int_equal(msc_supp_load(&s, path, &err), 0);
	o.supp = &s;
	out = run(&o, stream, &ret, &err, &st);
	assert_int_equal(ret, 0);
	assert_int_equal(count_lines(out, "\"type\":\"leak\""), 0);
	assert_int_equal(count_lines(out, "\"type\":\"site\""), 2);
	assert_int_equal(s.rules[0].hits, 3);
	assert_int_equal(s.rules[0].bytes, 18);
	free(out);
	msc_supp_release(&s);
	unlink(path);
	free(path);
}

static void test_pid_and_type(void **state)
{
	const char *types[] = { "leak" };
	struct msc_filter_opts o = { .types = types, .ntypes = 1 };
	struct msc_filter_stats st;
	struct msc_err err;
	int ret;
	char *out = run(&o, stream, &ret, &err, &st);

	(void)state;
	assert_int_equal(ret, 0);
	assert_int_equal(count_lines(out, "\"type\":\"site\""), 0);
	assert_int_equal(count_lines(out, "\"type\":\"sample\""), 0);
	assert_int_equal(count_lines(out, "\"type\":\"leak\""), 1);
	assert_int_equal(count_lines(out, "\"type\":\"header\""), 1);
	assert_non_null(strstr(out, "\"--type leak\""));
	free(out);
	/* Another process: its stream goes entirely. */
	o = (struct msc_filter_opts){ .pid = 8 };
	out = run(&o, stream, &ret, &err, &st);
	assert_int_equal(ret, 0);
	assert_string_equal(out, "");
	free(out);
}

static void test_bad_input(void **state)
{
	struct msc_filter_opts o = { 0 };
	struct msc_filter_stats st;
	struct msc_err err;
	int ret;
	char *out;

	(void)state;
	/* A site whose stack was never defined: the error names line 2. */
	out = run(&o, HDR "{\"type\":\"site\",\"stack\":9,\"size\":1}\n" END, &ret, &err, &st);
	assert_int_equal(ret, -EINVAL);
	assert_non_null(strstr(err.msg, "in.ndjson:2:"));
	assert_non_null(strstr(err.msg, "stack 9, never defined"));
	/* The header was written before the bad record. */
	assert_int_equal(count_lines(out, "\"type\":\"header\""), 1);
	free(out);
	/* No end: the stream passes, and the filter says it was cut short. */
	out = run(&o, HDR "{\"type\":\"sample\",\"ts\":1,\"rss\":1,\"heap\":0}\n", &ret, &err, &st);
	assert_int_equal(ret, 0);
	assert_true(st.truncated);
	assert_int_equal(count_lines(out, "\"type\":\"sample\""), 1);
	free(out);
	/* Not a memscope stream. */
	out = run(&o, "{\"type\":\"site\"}\n", &ret, &err, &st);
	assert_int_equal(ret, -EINVAL);
	assert_non_null(strstr(err.msg, "in.ndjson:1:"));
	free(out);
	/* A size that is not a number. */
	{
		static const char bad[] = HDR "{\"type\":\"stack\",\"id\":1,\"frames\":[]}\n"
					      "{\"type\":\"site\",\"stack\":1,\"size\":\"big\"}\n" END;

		out = run(&o, bad, &ret, &err, &st);
		assert_int_equal(ret, -EINVAL);
		assert_non_null(strstr(err.msg, "in.ndjson:3:"));
		assert_non_null(strstr(err.msg, "\"size\""));
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_patterns),
		cmocka_unit_test(test_supp_load),
		cmocka_unit_test(test_supp_errors),
		cmocka_unit_test(test_no_filter_passes_all),
		cmocka_unit_test(test_min_and_lazy_stacks),
		cmocka_unit_test(test_ignore_attribution),
		cmocka_unit_test(test_suppressions_apply_to_leaks),
		cmocka_unit_test(test_pid_and_type),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
