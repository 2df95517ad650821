/* SPDX-License-Identifier: MIT */
/* Unit tests for the NDJSON writer and reader of libmsc/io/ (ndjson.c, ndjson_read.c,
 * ndjson_jval.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_ndjson.h"
#include "msc_util.h"

/* ------------------------------------------------------------- helpers */

/*
 * A writer on a memfd, and what it wrote.  The tests compare the exact
 * bytes, then read them back.
 */
struct wfix {
	int fd;
	struct msc_writer w;
	char *out;		/* last output(), NUL-terminated */
	size_t out_len;
	struct msc_reader r;
	bool reader_open;
	char path[PATH_MAX];	/* temporary file, unlinked by teardown */
};

static int wfix_setup(void **state)
{
	struct wfix *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->fd = memfd_create("test_ndjson", MFD_CLOEXEC);
	if (f->fd < 0 || msc_writer_init(&f->w, f->fd, 0)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int wfix_teardown(void **state)
{
	struct wfix *f = *state;

	msc_writer_release(&f->w);
	if (f->reader_open)
		msc_reader_release(&f->r);
	if (f->fd >= 0)
		close(f->fd);
	if (f->path[0])
		unlink(f->path);
	free(f->out);
	free(f);
	return 0;
}

/* Reads the whole of fd (from offset 0) into a NUL-terminated buffer. */
static char *read_all(int fd, size_t *len)
{
	struct stat st;
	char *buf;
	size_t off = 0;

	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	while (off < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + off, (size_t)st.st_size - off, (off_t)off);

		assert_true(n > 0);
		off += (size_t)n;
	}
	buf[off] = '\0';
	*len = off;
	return buf;
}

/* Flushes the writer and returns everything it wrote so far. */
static const char *output(struct wfix *f)
{
	assert_int_equal(msc_writer_flush(&f->w), 0);
	free(f->out);
	f->out = read_all(f->fd, &f->out_len);
	assert_int_equal(f->w.bytes, f->out_len);
	return f->out;
}

/* Empties the memfd: the next output() starts from nothing. */
static void reset_output(struct wfix *f)
{
	assert_int_equal(ftruncate(f->fd, 0), 0);
	assert_int_equal(lseek(f->fd, 0, SEEK_SET), 0);
	f->w.bytes = 0;
}

/* Starts a reader over what the writer wrote (the memfd, from offset 0). */
static struct msc_reader *reader_on_output(struct wfix *f)
{
	output(f);
	assert_int_equal(lseek(f->fd, 0, SEEK_SET), 0);
	assert_int_equal(msc_reader_init_fd(&f->r, f->fd, "memfd"), 0);
	f->reader_open = true;
	return &f->r;
}

static int make_temp(char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	assert_true((size_t)snprintf(path, size, "%s/test_ndjson.XXXXXX",
				     dir && *dir ? dir : "/tmp") < size);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	return fd;
}

/* Reads the next record, which must exist. */
static void next_ok(struct msc_reader *r, struct msc_rec *rec)
{
	struct msc_err err = { 0 };
	int ret = msc_reader_next(r, rec, &err);

	if (ret != 1)
		fail_msg("msc_reader_next = %d: %s", ret, err.msg);
}

static void next_eof(struct msc_reader *r)
{
	struct msc_rec rec;
	struct msc_err err = { 0 };

	assert_int_equal(msc_reader_next(r, &rec, &err), 0);
	/* And stays there. */
	assert_int_equal(msc_reader_next(r, &rec, &err), 0);
}

static void next_err(struct msc_reader *r, int code, const char *msg)
{
	struct msc_rec rec;
	struct msc_err err = { 0 };
	int ret = msc_reader_next(r, &rec, &err);

	if (ret != code || strcmp(err.msg, msg) != 0)
		fail_msg("msc_reader_next = %d \"%s\", expected %d \"%s\"", ret, err.msg, code,
			 msg);
	assert_int_equal(err.code, code);
}

static int64_t rec_i64(const struct msc_rec *rec, const char *key)
{
	int64_t v = 0;

	assert_int_equal(msc_rec_i64(rec, key, &v), 0);
	return v;
}

/* Strict UTF-8 check, written from RFC 3629 and independent of ndjson.c. */
static bool valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		unsigned char c = s[i];
		size_t len;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* Quotes s with msc_json_quote and unescapes it again, as the reader does. */
static void quote_roundtrip(const unsigned char *s, size_t n, char *quoted, size_t *qlen)
{
	struct msc_arena a = MSC_ARENA_INIT;
	struct msc_err err = { 0 };
	struct msc_jval v = { 0 };
	const char *back;
	size_t blen = 0;

	*qlen = msc_json_quote(quoted, (const char *)s, n);
	assert_true(*qlen <= 6 * n + 2);
	if (!valid_utf8((const unsigned char *)quoted, *qlen))
		fail_msg("quoted output is not UTF-8");
	if (msc_json_validate(quoted, *qlen, &err))
		fail_msg("quoted output is not JSON: %s", err.msg);
	v.p = quoted;
	v.len = (uint32_t)*qlen;
	v.kind = MSC_J_STR;
	v.escaped = memchr(quoted, '\\', *qlen) != NULL;
	back = msc_jval_str(&v, &a, &blen);
	assert_non_null(back);
	assert_int_equal(blen, n);
	assert_memory_equal(back, s, n);
	assert_int_equal(back[n], '\0');
	msc_arena_release(&a);
}

/* -------------------------------------------------------------- writer */

static void test_write_every_type(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	static const char want[] =
		"{\"type\":\"all\",\"s\":\"hello\",\"empty\":\"\",\"sn\":\"abc\","
		"\"imin\":-9223372036854775808,\"imax\":9223372036854775807,"
		"\"i0\":0,\"ineg\":-1,\"umax\":18446744073709551615,\"u0\":0,"
		"\"addr\":\"0x7f00deadbeef\",\"addr0\":\"0x0\",\"addrmax\":\"0xffffffffffffffff\","
		"\"yes\":true,\"no\":false,\"nil\":null,\"nostr\":null,"
		"\"half\":0.5,\"nan\":null,\"inf\":null,"
		"\"arr\":[1,\"two\",[],{},[null]],\"obj\":{\"k\":[true,-2],\"o\":{}},"
		"\"raw\":{\"pre\":[1,2]},\"rk\":\"rv\",\"e\\\"k\":1}\n"
		"{\"type\":\"second\"}\n";

	msc_w_begin(w, "all");
	msc_w_str(w, "s", "hello");
	msc_w_str(w, "empty", "");
	msc_w_strn(w, "sn", "abcdef", 3);
	msc_w_i64(w, "imin", INT64_MIN);
	msc_w_i64(w, "imax", INT64_MAX);
	msc_w_i64(w, "i0", 0);
	msc_w_i64(w, "ineg", -1);
	msc_w_u64(w, "umax", UINT64_MAX);
	msc_w_u64(w, "u0", 0);
	msc_w_hex(w, "addr", 0x7f00deadbeefull);
	msc_w_hex(w, "addr0", 0);
	msc_w_hex(w, "addrmax", UINT64_MAX);
	msc_w_bool(w, "yes", true);
	msc_w_bool(w, "no", false);
	msc_w_null(w, "nil");
	msc_w_str(w, "nostr", NULL);
	msc_w_double(w, "half", 0.5);
	msc_w_double(w, "nan", NAN);
	msc_w_double(w, "inf", -INFINITY);
	msc_w_arr(w, "arr");
	msc_w_u64(w, NULL, 1);
	msc_w_str(w, NULL, "two");
	msc_w_arr(w, NULL);
	msc_w_arr_end(w);
	msc_w_obj(w, NULL);
	msc_w_obj_end(w);
	msc_w_arr(w, NULL);
	msc_w_null(w, NULL);
	msc_w_arr_end(w);
	msc_w_arr_end(w);
	msc_w_obj(w, "obj");
	msc_w_arr(w, "k");
	msc_w_bool(w, NULL, true);
	msc_w_i64(w, NULL, -2);
	msc_w_arr_end(w);
	msc_w_obj(w, "o");
	msc_w_obj_end(w);
	msc_w_obj_end(w);
	msc_w_raw(w, "raw", "{\"pre\":[1,2]}", 13);
	msc_w_raw_member(w, "rk", 2, "\"rv\"", 4);
	msc_w_i64(w, "e\"k", 1);
	msc_w_end(w);
	msc_w_begin(w, "second");
	msc_w_end(w);

	assert_string_equal(output(f), want);
	assert_int_equal(w->records, 2);
	assert_int_equal(w->error, 0);
	assert_int_equal(msc_json_validate(f->out, (size_t)(strchr(f->out, '\n') - f->out),
					   NULL), 0);
}

/*
 * Numbers around every power of ten, as printf writes them; keys as long
 * as the plain copy takes and longer, and keys that need quoting before
 * and after that length.
 */
static void test_write_numbers_and_keys(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	char want[16384], key[80];
	size_t n = 0;
	uint64_t p = 1;
	int i, k, len;

	msc_w_begin(w, "n");
	n += (size_t)snprintf(want + n, sizeof(want) - n, "{\"type\":\"n\"");
	for (i = 0; i < 20; i++, p *= 10) {
		uint64_t v[3] = { p - 1, p, p + 1 };

		for (k = 0; k < 3; k++) {
			msc_w_u64(w, "v", v[k]);
			n += (size_t)snprintf(want + n, sizeof(want) - n, ",\"v\":%llu",
					      (unsigned long long)v[k]);
		}
	}
	msc_w_u64(w, "max", UINT64_MAX);
	n += (size_t)snprintf(want + n, sizeof(want) - n, ",\"max\":%llu",
			      (unsigned long long)UINT64_MAX);
	for (len = 46; len <= 60; len++) {
		memset(key, 'k', (size_t)len);
		key[len] = '\0';
		msc_w_u64(w, key, (uint64_t)len);
		n += (size_t)snprintf(want + n, sizeof(want) - n, ",\"%s\":%d", key, len);
	}
	/* quoting needed at 3, at 50 and at the end (DEL is plain JSON) */
	msc_w_u64(w, "ab\"c", 1);
	memset(key, 'q', 60);
	key[50] = '\\';
	key[60] = '\0';
	msc_w_u64(w, key, 2);
	msc_w_u64(w, "del\x7f", 3);
	key[50] = '\0';
	n += (size_t)snprintf(want + n, sizeof(want) - n,
			      ",\"ab\\\"c\":1,\"%s\\\\qqqqqqqqq\":2,\"del\x7f\":3}\n", key);
	msc_w_end(w);
	assert_string_equal(output(f), want);
}

static void test_roundtrip_every_type(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	struct msc_reader *r;
	struct msc_rec rec;
	const struct msc_field *fld;
	int64_t i = 0;
	uint64_t u = 0;
	bool b = false;
	const char *s;
	size_t len = 99;

	msc_w_begin(w, "all");
	msc_w_str(w, "s", "hello");
	msc_w_strn(w, "nul", "a\0b", 3);
	msc_w_i64(w, "imin", INT64_MIN);
	msc_w_i64(w, "imax", INT64_MAX);
	msc_w_i64(w, "ineg", -42);
	msc_w_u64(w, "umax", UINT64_MAX);
	msc_w_u64(w, "u0", 0);
	msc_w_hex(w, "addr", 0x7f00deadbeefull);
	msc_w_hex(w, "addrmax", UINT64_MAX);
	msc_w_bool(w, "yes", true);
	msc_w_bool(w, "no", false);
	msc_w_null(w, "nil");
	msc_w_end(w);

	r = reader_on_output(f);
	next_ok(r, &rec);
	assert_string_equal(rec.type, "all");
	assert_true(msc_rec_type_is(&rec, "all"));
	assert_false(msc_rec_type_is(&rec, "al"));
	assert_int_equal(rec.lineno, 1);
	assert_string_equal(rec.source, "memfd");
	assert_int_equal(rec.len, f->out_len - 1);
	assert_memory_equal(rec.line, f->out, rec.len);
	assert_int_equal(rec.nfields, 13);
	assert_memory_equal(rec.fields[0].key, "type", 4);

	s = msc_rec_str(&rec, "s", &len);
	assert_non_null(s);
	assert_string_equal(s, "hello");
	assert_int_equal(len, 5);
	s = msc_rec_str(&rec, "nul", &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "a\0b", 4);

	assert_int_equal(msc_rec_i64(&rec, "imin", &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(msc_rec_i64(&rec, "imax", &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(msc_rec_i64(&rec, "ineg", &i), 0);
	assert_true(i == -42);
	assert_int_equal(msc_rec_u64(&rec, "umax", &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(msc_rec_u64(&rec, "u0", &u), 0);
	assert_true(u == 0);
	assert_int_equal(msc_rec_hex(&rec, "addr", &u), 0);
	assert_true(u == 0x7f00deadbeefull);
	assert_int_equal(msc_rec_hex(&rec, "addrmax", &u), 0);
	assert_true(u == UINT64_MAX);
	/* A plain non-negative integer is a hex value too. */
	assert_int_equal(msc_rec_hex(&rec, "imax", &u), 0);
	assert_true(u == INT64_MAX);
	assert_int_equal(msc_rec_bool(&rec, "yes", &b), 0);
	assert_true(b);
	assert_int_equal(msc_rec_bool(&rec, "no", &b), 0);
	assert_false(b);
	fld = msc_rec_field(&rec, "nil");
	assert_non_null(fld);
	assert_int_equal(fld->val.kind, MSC_J_NULL);
	assert_int_equal(fld->val.len, 4);

	/* Out of range, wrong type, absent: out untouched. */
	i = 7;
	u = 7;
	b = true;
	assert_int_equal(msc_rec_i64(&rec, "umax", &i), -ERANGE);
	assert_int_equal(msc_rec_u64(&rec, "imin", &u), -ERANGE);
	assert_int_equal(msc_rec_u64(&rec, "ineg", &u), -ERANGE);
	assert_int_equal(msc_rec_hex(&rec, "ineg", &u), -ERANGE);
	assert_int_equal(msc_rec_i64(&rec, "s", &i), -EINVAL);
	assert_int_equal(msc_rec_u64(&rec, "yes", &u), -EINVAL);
	assert_int_equal(msc_rec_u64(&rec, "nil", &u), -EINVAL);
	assert_int_equal(msc_rec_u64(&rec, "addr", &u), -EINVAL);
	assert_int_equal(msc_rec_hex(&rec, "s", &u), -EINVAL);
	assert_int_equal(msc_rec_bool(&rec, "nil", &b), -EINVAL);
	assert_int_equal(msc_rec_bool(&rec, "u0", &b), -EINVAL);
	assert_int_equal(msc_rec_i64(&rec, "absent", &i), -ENOENT);
	assert_int_equal(msc_rec_u64(&rec, "absent", &u), -ENOENT);
	assert_int_equal(msc_rec_hex(&rec, "absent", &u), -ENOENT);
	assert_int_equal(msc_rec_bool(&rec, "absent", &b), -ENOENT);
	assert_int_equal(i, 7);
	assert_int_equal(u, 7);
	assert_true(b);
	assert_null(msc_rec_field(&rec, "absent"));
	/* A prefix of a key is not the key. */
	assert_null(msc_rec_field(&rec, "ye"));
	errno = 0;
	assert_null(msc_rec_str(&rec, "absent", NULL));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(msc_rec_str(&rec, "u0", NULL));
	assert_int_equal(errno, EINVAL);
	next_eof(r);
	assert_int_equal(r->records, 1);
}

static void check_double(struct wfix *f, double v, const char *want)
{
	struct msc_rec rec;
	struct msc_reader r;
	const struct msc_field *fld;

	msc_w_begin(&f->w, "d");
	msc_w_double(&f->w, "v", v);
	msc_w_end(&f->w);
	output(f);
	reset_output(f);
	assert_int_equal(msc_reader_init_mem(&r, f->out, f->out_len, "mem"), 0);
	next_ok(&r, &rec);
	fld = msc_rec_field(&rec, "v");
	assert_non_null(fld);
	if (want) {
		if (fld->val.len != strlen(want) || memcmp(fld->val.p, want, fld->val.len))
			fail_msg("%.17g written as %.*s, expected %s", v, (int)fld->val.len,
				 fld->val.p, want);
	}
	if (isfinite(v)) {
		char num[64];

		assert_true(fld->val.kind == MSC_J_NUM || fld->val.kind == MSC_J_INT);
		memcpy(num, fld->val.p, fld->val.len);
		num[fld->val.len] = '\0';
		/* Reads back as the very same double. */
		if (strtod(num, NULL) != v || !signbit(strtod(num, NULL)) != !signbit(v))
			fail_msg("%.17g written as %s", v, num);
	} else {
		assert_int_equal(fld->val.kind, MSC_J_NULL);
	}
	msc_reader_release(&r);
}

static void test_roundtrip_doubles(void **state)
{
	struct wfix *f = *state;
	uint64_t seed = 12345;
	int i;

	check_double(f, 0.5, "0.5");
	check_double(f, 0.1, "0.1");
	check_double(f, -2.25, "-2.25");
	check_double(f, 100, "100");
	check_double(f, 0, "0");
	check_double(f, -0.0, "-0");
	check_double(f, 1e21, "1e+21");
	check_double(f, 1e-7, "1e-07");
	check_double(f, 1732240000.5, "1732240000.5");
	check_double(f, 123456789.0, "123456789");
	check_double(f, 1.0 / 3, "0.33333333333333331");
	check_double(f, 0.1 + 0.2, "0.30000000000000004");
	check_double(f, 1.7976931348623157e308, "1.7976931348623157e+308");
	check_double(f, 5e-324, "4.94065645841247e-324");
	check_double(f, NAN, "null");
	check_double(f, INFINITY, "null");
	check_double(f, -INFINITY, "null");
	/* Random bit patterns: every finite double reads back exactly. */
	for (i = 0; i < 2000; i++) {
		double d;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(&d, &seed, sizeof(d));
		check_double(f, d, NULL);
	}
}

static void test_writer_nesting(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	char want[256];
	int i;

	/* msc_w_end closes whatever is still open. */
	msc_w_begin(w, "x");
	msc_w_arr(w, "a");
	msc_w_obj(w, NULL);
	msc_w_arr(w, "b");
	msc_w_u64(w, NULL, 1);
	msc_w_end(w);
	/* The next record starts fresh: no comma, no stale container. */
	msc_w_begin(w, "y");
	msc_w_u64(w, "n", 2);
	msc_w_end(w);
	assert_string_equal(output(f),
			    "{\"type\":\"x\",\"a\":[{\"b\":[1]}]}\n{\"type\":\"y\",\"n\":2}\n");

	/* 31 containers inside the record: the deepest the writer allows. */
	reset_output(f);
	msc_w_begin(w, "deep");
	for (i = 0; i < MSC_WRITER_MAX_DEPTH - 1; i++)
		msc_w_arr(w, i ? NULL : "a");
	msc_w_u64(w, NULL, 7);
	msc_w_end(w);
	strcpy(want, "{\"type\":\"deep\",\"a\":");
	for (i = 0; i < MSC_WRITER_MAX_DEPTH - 1; i++)
		strcat(want, "[");
	strcat(want, "7");
	for (i = 0; i < MSC_WRITER_MAX_DEPTH - 1; i++)
		strcat(want, "]");
	strcat(want, "}\n");
	assert_string_equal(output(f), want);
	assert_int_equal(w->error, 0);

	/* One more is an error, and the output stops. */
	msc_w_begin(w, "deeper");
	for (i = 0; i < MSC_WRITER_MAX_DEPTH; i++)
		msc_w_arr(w, i ? NULL : "a");
	assert_int_equal(w->error, EOVERFLOW);
	msc_w_end(w);
	assert_int_equal(msc_writer_flush(w), -EOVERFLOW);
	assert_int_equal(w->len, 0);
	w->error = 0;
	assert_string_equal(output(f), want);
}

static void write_sample(struct msc_writer *w, int i)
{
	msc_w_begin(w, "rec");
	msc_w_u64(w, "i", (uint64_t)i);
	msc_w_str(w, "path", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30");
	msc_w_str(w, "bytes", "\x01\xff\"\\\xc3\xa9");
	msc_w_hex(w, "addr", 0x7ffd12345678ull + (uint64_t)i);
	msc_w_end(w);
}

static void test_writer_small_buffer(void **state)
{
	struct wfix *f = *state;
	struct msc_writer small;
	char *big_out;
	size_t big_len, small_len;
	int fd2, i;
	char *small_out;

	/* The same records through a 64 KiB buffer and a 7-byte one. */
	fd2 = memfd_create("test_rec_small", MFD_CLOEXEC);
	assert_true(fd2 >= 0);
	assert_int_equal(msc_writer_init(&small, fd2, 7), 0);
	for (i = 0; i < 200; i++) {
		write_sample(&f->w, i);
		write_sample(&small, i);
	}
	output(f);
	big_out = f->out;
	big_len = f->out_len;
	assert_int_equal(msc_writer_release(&small), 0);
	assert_int_equal(small.records, 200);
	assert_int_equal(small.bytes, big_len);
	small_out = read_all(fd2, &small_len);
	assert_int_equal(small_len, big_len);
	assert_memory_equal(small_out, big_out, big_len);
	free(small_out);
	close(fd2);
}

static void test_writer_write_through(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	static const char rec1[] = "{\"type\":\"a\",\"n\":1}\n";
	static const char line[] = "{\"type\":\"copied\",\"x\":[1]}";
	struct stat st;

	/* Buffered: nothing reaches the file before a flush. */
	msc_w_begin(w, "a");
	msc_w_u64(w, "n", 1);
	msc_w_end(w);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(w->len, sizeof(rec1) - 1);
	assert_int_equal(w->bytes, 0);
	assert_int_equal(msc_writer_flush(w), 0);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_int_equal(st.st_size, sizeof(rec1) - 1);

	/* Write-through: each record is written when it ends, not before. */
	w->write_through = true;
	msc_w_begin(w, "a");
	msc_w_u64(w, "n", 2);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_int_equal(st.st_size, sizeof(rec1) - 1);
	msc_w_end(w);
	assert_int_equal(w->len, 0);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_int_equal(st.st_size, 2 * (sizeof(rec1) - 1));
	assert_int_equal(w->bytes, 2 * (sizeof(rec1) - 1));

	msc_w_line(w, line, sizeof(line) - 1);
	assert_int_equal(w->len, 0);
	assert_int_equal(w->records, 3);
	assert_string_equal(output(f),
			    "{\"type\":\"a\",\"n\":1}\n{\"type\":\"a\",\"n\":2}\n"
			    "{\"type\":\"copied\",\"x\":[1]}\n");
}

static void test_writer_keeps_first_error(void **state)
{
	struct wfix *f = *state;
	struct msc_writer w;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int p[2];

	(void)f;
	assert_int_equal(sigaction(SIGPIPE, &ign, &old), 0);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(msc_writer_init(&w, p[1], 0), 0);
	msc_w_begin(&w, "a");
	msc_w_end(&w);
	assert_int_equal(w.error, 0);
	assert_int_equal(msc_writer_flush(&w), -EPIPE);
	assert_int_equal(w.error, EPIPE);
	assert_int_equal(w.bytes, 0);
	assert_int_equal(w.len, 0);

	/* Later output is dropped, and a later, different error is not kept. */
	close(p[1]);
	msc_w_begin(&w, "b");
	msc_w_str(&w, "s", "dropped");
	msc_w_end(&w);
	assert_int_equal(msc_writer_flush(&w), -EPIPE);
	assert_int_equal(w.len, 0);
	assert_int_equal(w.bytes, 0);
	assert_int_equal(w.error, EPIPE);
	assert_int_equal(w.records, 2);
	assert_int_equal(msc_writer_release(&w), -EPIPE);
	assert_null(w.buf);
	assert_int_equal(sigaction(SIGPIPE, &old, NULL), 0);

	/* A bad descriptor: EBADF, reported by release. */
	assert_int_equal(msc_writer_init(&w, -1, 0), 0);
	msc_w_begin(&w, "a");
	msc_w_end(&w);
	assert_int_equal(msc_writer_release(&w), -EBADF);
	assert_int_equal(w.error, EBADF);
}

static void test_writer_write_through_error(void **state)
{
	struct wfix *f = *state;
	struct msc_writer w;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int p[2];
	char buf[64];
	ssize_t n;

	(void)f;
	assert_int_equal(sigaction(SIGPIPE, &ign, &old), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(msc_writer_init(&w, p[1], 0), 0);
	w.write_through = true;
	msc_w_begin(&w, "a");
	msc_w_end(&w);
	n = read(p[0], buf, sizeof(buf));
	assert_int_equal(n, 13);
	assert_memory_equal(buf, "{\"type\":\"a\"}\n", 13);
	/* The reader goes away: the error shows at the end of the record. */
	close(p[0]);
	msc_w_begin(&w, "b");
	assert_int_equal(w.error, 0);
	msc_w_end(&w);
	assert_int_equal(w.error, EPIPE);
	assert_int_equal(w.bytes, 13);
	assert_int_equal(msc_writer_release(&w), -EPIPE);
	close(p[1]);
	assert_int_equal(sigaction(SIGPIPE, &old, NULL), 0);
}

/* ------------------------------------------------------------- escaping */

static void expected_quote(unsigned b, char *out)
{
	switch (b) {
	case '"': strcpy(out, "\"\\\"\""); return;
	case '\\': strcpy(out, "\"\\\\\""); return;
	case '\b': strcpy(out, "\"\\b\""); return;
	case '\f': strcpy(out, "\"\\f\""); return;
	case '\n': strcpy(out, "\"\\n\""); return;
	case '\r': strcpy(out, "\"\\r\""); return;
	case '\t': strcpy(out, "\"\\t\""); return;
	}
	if (b < 0x20)
		sprintf(out, "\"\\u%04x\"", b);
	else if (b < 0x80)
		sprintf(out, "\"%c\"", b);
	else		/* a lone byte >= 0x80 is never valid UTF-8 */
		sprintf(out, "\"\\udc%02x\"", b);
}

static void test_quote_every_byte(void **state)
{
	char quoted[16], want[16];
	unsigned b;
	size_t n;

	(void)state;
	for (b = 0; b < 256; b++) {
		unsigned char s = (unsigned char)b;

		expected_quote(b, want);
		memset(quoted, 0, sizeof(quoted));
		quote_roundtrip(&s, 1, quoted, &n);
		if (n != strlen(want) || memcmp(quoted, want, n) != 0)
			fail_msg("byte %#x quoted as %.*s, expected %s", b, (int)n, quoted, want);
	}
	/* The empty string. */
	quote_roundtrip((const unsigned char *)"", 0, quoted, &n);
	assert_int_equal(n, 2);
	assert_memory_equal(quoted, "\"\"", 2);
}

static void test_quote_utf8(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		/* Valid sequences of 2, 3 and 4 bytes pass unchanged. */
		{ "\xc2\x80", "\"\xc2\x80\"" },				/* U+0080 */
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },			/* é */
		{ "\xdf\xbf", "\"\xdf\xbf\"" },				/* U+07FF */
		{ "\xe0\xa0\x80", "\"\xe0\xa0\x80\"" },			/* U+0800 */
		{ "\xe2\x82\xac", "\"\xe2\x82\xac\"" },			/* € */
		{ "\xed\x9f\xbf", "\"\xed\x9f\xbf\"" },			/* U+D7FF */
		{ "\xee\x80\x80", "\"\xee\x80\x80\"" },			/* U+E000 */
		{ "\xef\xbf\xbf", "\"\xef\xbf\xbf\"" },			/* U+FFFF */
		{ "\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\"" },		/* U+10000 */
		{ "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"" },		/* 😀 */
		{ "\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"" },		/* U+10FFFF */
		/* Overlong forms, surrogates, beyond U+10FFFF: byte by byte. */
		{ "\xc0\x80", "\"\\udcc0\\udc80\"" },
		{ "\xc1\xbf", "\"\\udcc1\\udcbf\"" },
		{ "\xe0\x80\x80", "\"\\udce0\\udc80\\udc80\"" },
		{ "\xe0\x9f\xbf", "\"\\udce0\\udc9f\\udcbf\"" },
		{ "\xf0\x80\x80\x80", "\"\\udcf0\\udc80\\udc80\\udc80\"" },
		{ "\xf0\x8f\xbf\xbf", "\"\\udcf0\\udc8f\\udcbf\\udcbf\"" },
		{ "\xed\xa0\x80", "\"\\udced\\udca0\\udc80\"" },
		{ "\xed\xbf\xbf", "\"\\udced\\udcbf\\udcbf\"" },
		{ "\xf4\x90\x80\x80", "\"\\udcf4\\udc90\\udc80\\udc80\"" },
		{ "\xf5\x80\x80\x80", "\"\\udcf5\\udc80\\udc80\\udc80\"" },
		{ "\xff\xfe", "\"\\udcff\\udcfe\"" },
		/* Truncated sequences, at the end and before ASCII. */
		{ "\xc3", "\"\\udcc3\"" },
		{ "x\xe2\x82", "\"x\\udce2\\udc82\"" },
		{ "\xf0\x9f\x98", "\"\\udcf0\\udc9f\\udc98\"" },
		{ "\xe2\x82" "A", "\"\\udce2\\udc82A\"" },
		{ "\xc3" "\xc3\xa9", "\"\\udcc3\xc3\xa9\"" },
		/* A lone continuation byte, then a valid sequence. */
		{ "\x80\xe2\x82\xac", "\"\\udc80\xe2\x82\xac\"" },
		/* Latin-1 file names, the usual source of invalid bytes. */
		{ "/tmp/caf\xe9.txt", "\"/tmp/caf\\udce9.txt\"" },
	};
	char quoted[128];
	size_t i, n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		quote_roundtrip((const unsigned char *)cases[i].in, strlen(cases[i].in),
				quoted, &n);
		if (n != strlen(cases[i].out) || memcmp(quoted, cases[i].out, n) != 0)
			fail_msg("case %zu quoted as %.*s, expected %s", i, (int)n, quoted,
				 cases[i].out);
	}
}

/* Every pair of bytes, and every lead byte with likely continuations. */
static void test_quote_exhaustive(void **state)
{
	static const unsigned char tails[] = { 0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90,
					       0x9f, 0xa0, 0xbf, 0xc0, 0xff };
	unsigned char s[4];
	char quoted[32];
	unsigned a, b, c, d;
	size_t n;

	(void)state;
	for (a = 0; a < 256; a++) {
		for (b = 0; b < 256; b++) {
			s[0] = (unsigned char)a;
			s[1] = (unsigned char)b;
			quote_roundtrip(s, 2, quoted, &n);
			/* A valid pair is kept as is. */
			if (a >= 0x80 && valid_utf8(s, 2)) {
				assert_int_equal(n, 4);
				assert_memory_equal(quoted + 1, s, 2);
			}
		}
	}
	for (a = 0xc0; a < 256; a++)
		for (b = 0; b < ARRAY_SIZE(tails); b++)
			for (c = 0; c < ARRAY_SIZE(tails); c++)
				for (d = 0; d < ARRAY_SIZE(tails); d++) {
					s[0] = (unsigned char)a;
					s[1] = tails[b];
					s[2] = tails[c];
					s[3] = tails[d];
					quote_roundtrip(s, 4, quoted, &n);
					/* Valid, and no NUL to escape: kept. */
					if (valid_utf8(s, 4) && memchr(s, 0, 4) == NULL) {
						assert_int_equal(n, 6);
						assert_memory_equal(quoted + 1, s, 4);
					}
				}
}

/* Any path, written by the writer and read back by the reader, exactly. */
static void test_roundtrip_any_bytes(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	unsigned char all[256], *strs[500];
	size_t lens[500], i, j;
	struct msc_reader *r;
	struct msc_rec rec;
	uint64_t seed = 99;
	const char *line, *end;

	for (i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	msc_w_begin(w, "path");
	msc_w_strn(w, "p", (const char *)all, 256);
	/* Reversed too: 0xff 0xfe ... then the control characters. */
	for (i = 0; i < 128; i++) {
		unsigned char t = all[i];

		all[i] = all[255 - i];
		all[255 - i] = t;
	}
	msc_w_strn(w, "rev", (const char *)all, 256);
	msc_w_end(w);
	for (i = 0; i < ARRAY_SIZE(strs); i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		lens[i] = (seed >> 33) % 80;
		strs[i] = malloc(lens[i] + 1);
		assert_non_null(strs[i]);
		for (j = 0; j < lens[i]; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* Mostly high bytes, so that valid sequences happen. */
			strs[i][j] = (unsigned char)(seed >> 56 | ((seed >> 40) & 1 ? 0x80 : 0));
		}
		msc_w_begin(w, "path");
		msc_w_strn(w, "p", (const char *)strs[i], lens[i]);
		msc_w_end(w);
	}

	/* Every line is UTF-8, and JSON. */
	r = reader_on_output(f);
	assert_true(valid_utf8((const unsigned char *)f->out, f->out_len));
	for (line = f->out; line < f->out + f->out_len; line = end + 1) {
		struct msc_err err = { 0 };

		end = strchr(line, '\n');
		assert_non_null(end);
		if (msc_json_validate(line, (size_t)(end - line), &err))
			fail_msg("line %.*s: %s", (int)(end - line), line, err.msg);
	}

	next_ok(r, &rec);
	{
		const char *p;
		size_t len = 0;

		p = msc_rec_str(&rec, "p", &len);
		assert_int_equal(len, 256);
		for (i = 0; i < 256; i++)
			assert_int_equal((unsigned char)p[i], i);
		p = msc_rec_str(&rec, "rev", &len);
		assert_int_equal(len, 256);
		assert_memory_equal(p, all, 256);
	}
	for (i = 0; i < ARRAY_SIZE(strs); i++) {
		const char *p;
		size_t len = 0;

		next_ok(r, &rec);
		p = msc_rec_str(&rec, "p", &len);
		assert_non_null(p);
		assert_int_equal(len, lens[i]);
		assert_memory_equal(p, strs[i], lens[i]);
		free(strs[i]);
	}
	next_eof(r);
}

static void test_roundtrip_escaped_keys(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	static const char key[] = "k\"\\\n\x01\xff\xc3\xa9";
	struct msc_reader *r;
	struct msc_rec rec;
	struct msc_jval kv = { 0 };
	const char *back;
	size_t len = 0;

	msc_w_begin(w, "t\"y\xfe");
	msc_w_u64(w, key, 5);
	msc_w_end(w);
	assert_string_equal(output(f),
			    "{\"type\":\"t\\\"y\\udcfe\",\"k\\\"\\\\\\n\\u0001\\udcff\xc3\xa9\":5}\n");
	r = reader_on_output(f);
	next_ok(r, &rec);
	assert_string_equal(rec.type, "t\"y\xfe");
	assert_int_equal(rec.nfields, 2);
	assert_true(rec.fields[1].key_escaped);
	/* The raw key sits between quotes in the line: unescape it as a string. */
	kv.p = rec.fields[1].key - 1;
	kv.len = rec.fields[1].key_len + 2;
	kv.kind = MSC_J_STR;
	kv.escaped = true;
	back = msc_jval_str(&kv, rec.scratch, &len);
	assert_int_equal(len, sizeof(key) - 1);
	assert_memory_equal(back, key, sizeof(key));
}

static void test_reader_unescape(void **state)
{
	static const char in[] =
		"{\"type\":\"u\",\"e\":\"\\u00e9\\u00E9\",\"pair\":\"\\ud83d\\ude00\","
		"\"hi\":\"a\\ud800b\",\"lo\":\"a\\udc00b\",\"lo7f\":\"\\udc7f\","
		"\"esc\":\"\\udc80\\udcff\",\"hi_esc\":\"\\ud800\\udc80\","
		"\"simple\":\"\\/\\\"\\\\\\b\\f\\n\\r\\t\",\"nul\":\"a\\u0000b\","
		"\"bmp\":\"\\u20ac\\uffff\",\"raw\":\"\xc3\xa9\x7f\"}\n";
	static const struct {
		const char *key;
		const char *want;
		size_t len;
	} cases[] = {
		{ "e", "\xc3\xa9\xc3\xa9", 4 },
		{ "pair", "\xf0\x9f\x98\x80", 4 },
		/* Lone surrogates outside the escaped-byte range are U+FFFD. */
		{ "hi", "a\xef\xbf\xbd" "b", 5 },
		{ "lo", "a\xef\xbf\xbd" "b", 5 },
		{ "lo7f", "\xef\xbf\xbd", 3 },
		{ "esc", "\x80\xff", 2 },
		/* A high surrogate pairs with the next low one: U+10080. */
		{ "hi_esc", "\xf0\x90\x82\x80", 4 },
		{ "simple", "/\"\\\b\f\n\r\t", 8 },
		{ "nul", "a\0b", 3 },
		{ "bmp", "\xe2\x82\xac\xef\xbf\xbf", 6 },
		{ "raw", "\xc3\xa9\x7f", 3 },
	};
	struct msc_reader r;
	struct msc_rec rec;
	size_t i;

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, in, sizeof(in) - 1, "mem"), 0);
	next_ok(&r, &rec);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = 0;
		const char *s = msc_rec_str(&rec, cases[i].key, &len);

		assert_non_null(s);
		if (len != cases[i].len || memcmp(s, cases[i].want, len + 1) != 0)
			fail_msg("key %s: got %zu bytes", cases[i].key, len);
	}
	assert_true(msc_rec_field(&rec, "e")->val.escaped);
	assert_false(msc_rec_field(&rec, "raw")->val.escaped);
	next_eof(&r);
	msc_reader_release(&r);
}

/* ---------------------------------------------------------- long lines */

#define BIG_LEN (5 * 1024 * 1024 + 3)

static char *big_string(void)
{
	char *s = malloc(BIG_LEN);
	size_t i;

	assert_non_null(s);
	for (i = 0; i < BIG_LEN; i++)
		s[i] = (char)('a' + i % 26);
	/* A few bytes that need escapes, spread over the whole string. */
	for (i = 1000; i < BIG_LEN; i += 300007) {
		s[i] = '\n';
		s[i + 1] = '"';
		s[i + 2] = (char)0xff;
	}
	return s;
}

static void write_big_file(struct wfix *f, const char *big, bool final_newline)
{
	struct msc_writer w;
	int fd = make_temp(f->path, sizeof(f->path));

	assert_int_equal(msc_writer_init(&w, fd, 0), 0);
	msc_w_begin(&w, "head");
	msc_w_u64(&w, "n", 1);
	msc_w_end(&w);
	msc_w_begin(&w, "big");
	msc_w_strn(&w, "s", big, BIG_LEN);
	msc_w_u64(&w, "after", 42);
	msc_w_end(&w);
	msc_w_begin(&w, "tail");
	msc_w_u64(&w, "n", 3);
	msc_w_arr(&w, "a");
	msc_w_strn(&w, NULL, big + BIG_LEN - 300000, 300000);
	msc_w_end(&w);
	assert_int_equal(msc_writer_release(&w), 0);
	if (!final_newline)
		assert_int_equal(ftruncate(fd, (off_t)w.bytes - 1), 0);
	close(fd);
}

static void read_big(struct msc_reader *r, const char *big)
{
	struct msc_rec rec;
	struct msc_jiter it;
	struct msc_jval v;
	const char *s;
	size_t len = 0;

	next_ok(r, &rec);
	assert_string_equal(rec.type, "head");
	assert_int_equal(rec_i64(&rec, "n"), 1);
	next_ok(r, &rec);
	assert_string_equal(rec.type, "big");
	assert_int_equal(rec.lineno, 2);
	assert_true(rec.len > BIG_LEN);
	s = msc_rec_str(&rec, "s", &len);
	assert_non_null(s);
	assert_int_equal(len, BIG_LEN);
	assert_memory_equal(s, big, BIG_LEN);
	assert_int_equal(rec_i64(&rec, "after"), 42);
	next_ok(r, &rec);
	assert_string_equal(rec.type, "tail");
	assert_int_equal(rec.lineno, 3);
	assert_int_equal(rec_i64(&rec, "n"), 3);
	assert_int_equal(msc_jiter_init(&it, &msc_rec_field(&rec, "a")->val), 0);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_STR);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 0);
	next_eof(r);
	assert_int_equal(r->records, 3);
}

static void test_long_lines_file(void **state)
{
	struct wfix *f = *state;
	char *big = big_string();
	struct msc_err err = { 0 };

	write_big_file(f, big, true);
	assert_int_equal(msc_reader_open(&f->r, f->path, &err), 0);
	f->reader_open = true;
	read_big(&f->r, big);
	free(big);
}

/* The last line, megabytes long and valid, has no newline: accepted. */
static void test_long_lines_file_no_final_newline(void **state)
{
	struct wfix *f = *state;
	char *big = big_string();
	struct msc_err err = { 0 };

	write_big_file(f, big, false);
	assert_int_equal(msc_reader_open(&f->r, f->path, &err), 0);
	f->reader_open = true;
	read_big(&f->r, big);
	free(big);
}

/* Through a pipe, input arrives in small pieces. */
static void test_long_lines_pipe(void **state)
{
	struct wfix *f = *state;
	char *big = big_string();
	int p[2], status;
	pid_t pid;

	write_big_file(f, big, true);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(f->path, O_RDONLY);
		char buf[4096];
		ssize_t n;

		close(p[0]);
		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			if (write(p[1], buf, (size_t)n) != n)
				_exit(1);
		_exit(fd >= 0 ? 0 : 1);
	}
	close(p[1]);
	assert_int_equal(msc_reader_init_fd(&f->r, p[0], "pipe"), 0);
	f->reader_open = true;
	read_big(&f->r, big);
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	free(big);
}

/*
 * Many short lines: the reader compacts its buffer instead of growing it,
 * so its memory stays bounded by the longest line, not by the input.
 */
static void test_reader_buffer_bounded(void **state)
{
	struct wfix *f = *state;
	struct msc_writer w;
	struct msc_rec rec;
	struct msc_err err = { 0 };
	char pad[600];
	int fd = make_temp(f->path, sizeof(f->path));
	int i;

	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	assert_int_equal(msc_writer_init(&w, fd, 0), 0);
	for (i = 0; i < 20000; i++) {
		msc_w_begin(&w, "line");
		msc_w_i64(&w, "i", i);
		msc_w_str(&w, "pad", pad + i % 500);
		msc_w_end(&w);
	}
	assert_int_equal(msc_writer_release(&w), 0);
	assert_true(w.bytes > 5 * 1000 * 1000);
	close(fd);
	assert_int_equal(msc_reader_open(&f->r, f->path, &err), 0);
	f->reader_open = true;
	for (i = 0; i < 20000; i++) {
		size_t len = 0;

		next_ok(&f->r, &rec);
		assert_int_equal(rec.lineno, i + 1);
		assert_int_equal(rec_i64(&rec, "i"), i);
		assert_non_null(msc_rec_str(&rec, "pad", &len));
		assert_int_equal(len, sizeof(pad) - 1 - i % 500);
	}
	next_eof(&f->r);
	/* One 256 KiB chunk, whatever the size of the input. */
	assert_int_equal(f->r.cap, 256 * 1024);
}

/*
 * A non-blocking input, as a shell may hand down: the reader waits for data
 * instead of failing with EAGAIN.
 */
static void test_reader_nonblocking_pipe(void **state)
{
	struct wfix *f = *state;
	struct msc_rec rec;
	int p[2], status, i;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static const char line[] = "{\"type\":\"slow\"}\n";

		close(p[0]);
		for (i = 0; i < 3; i++) {
			usleep(20000);
			if (write(p[1], line, sizeof(line) - 1) != sizeof(line) - 1)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(msc_reader_init_fd(&f->r, p[0], "pipe"), 0);
	f->reader_open = true;
	for (i = 0; i < 3; i++) {
		next_ok(&f->r, &rec);
		assert_string_equal(rec.type, "slow");
		assert_int_equal(rec.lineno, i + 1);
	}
	next_eof(&f->r);
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * Each newline arrives as the first byte of a read: the reader must look
 * at it even though it searched the bytes before it already.
 */
static void test_reader_newline_at_read_boundary(void **state)
{
	struct wfix *f = *state;
	/* NULL stands for 400000 spaces. */
	static const char *const parts[] = {
		"{\"type\":\"a\",\"n\":1", NULL, "}", "\n{\"type\":\"b\"}", "\n",
		"\n{\"type\":\"c\"", "}",
	};
	struct msc_rec rec;
	char *big;
	int p[2], status;
	size_t i;
	pid_t pid;

	/* A first line longer than the reader's chunk. */
	big = malloc(400000);
	assert_non_null(big);
	memset(big, ' ', 400000);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		for (i = 0; i < ARRAY_SIZE(parts); i++) {
			const char *s = parts[i] ? parts[i] : big;
			size_t len = parts[i] ? strlen(s) : 400000, off = 0;

			while (off < len) {
				ssize_t n = write(p[1], s + off, len - off);

				if (n <= 0)
					_exit(1);
				off += (size_t)n;
			}
			usleep(30000);
		}
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(msc_reader_init_fd(&f->r, p[0], "pipe"), 0);
	f->reader_open = true;
	next_ok(&f->r, &rec);
	assert_string_equal(rec.type, "a");
	assert_int_equal(rec.len, 17 + 400000 + 1);
	assert_int_equal(rec_i64(&rec, "n"), 1);
	next_ok(&f->r, &rec);
	assert_string_equal(rec.type, "b");
	assert_int_equal(rec.lineno, 2);
	next_ok(&f->r, &rec);
	assert_string_equal(rec.type, "c");
	assert_int_equal(rec.lineno, 4);
	next_eof(&f->r);
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	free(big);
}

/* ------------------------------------------------------------- numbers */

/* Reads fd from its start until the end or an error; returns that. */
static int read_counted_upto(int fd, struct msc_err *err)
{
	struct msc_reader r;
	struct msc_rec rec;
	int ret;

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	msc_reader_init_fd(&r, fd, "z");
	while ((ret = msc_reader_next(&r, &rec, err)) > 0)
		;
	msc_reader_release(&r);
	return ret;
}

/* Reads fd from its start: the records' "i" must be 0, 1, ... n - 1;
 * returns the last msc_reader_next() result, err filled. */
static int read_counted(int fd, unsigned n, struct msc_err *err)
{
	struct msc_reader r;
	struct msc_rec rec;
	unsigned i = 0;
	uint64_t v;
	int ret;

	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	msc_reader_init_fd(&r, fd, "z");
	while ((ret = msc_reader_next(&r, &rec, err)) > 0) {
		assert_int_equal(msc_rec_u64(&rec, "i", &v), 0);
		assert_int_equal(v, i);
		i++;
	}
	assert_int_equal(i, n);
	/* The input ends at an error in the compressed data. */
	if (ret < 0)
		assert_int_equal(msc_reader_next(&r, &rec, err), 0);
	msc_reader_release(&r);
	return ret;
}

/*
 * Compressed output: a flush makes what was written readable (a recorder
 * killed after it loses nothing flushed), the end of the frame makes the
 * stream whole; the reader tells compressed input by its first bytes.
 */
static void test_zstd_round_trip(void **state)
{
	struct wfix *f = *state;
	struct msc_err err = { 0 };
	unsigned char magic[4];
	unsigned i;

	assert_false(msc_zst_name("rec.ndjson"));
	assert_false(msc_zst_name(".zst"));
	assert_false(msc_zst_name(NULL));
	assert_true(msc_zst_name("rec.zst"));
	assert_int_equal(msc_writer_compress_by_name(&f->w, "rec.ndjson"), 0);
	assert_null(f->w.zc);
	assert_int_equal(msc_writer_compress_by_name(&f->w, "rec.zst"), 0);
	assert_non_null(f->w.zc);
	for (i = 0; i < 100000; i++) {
		msc_w_begin(&f->w, "n");
		msc_w_u64(&f->w, "i", i);
		msc_w_str(&f->w, "s", "the same words again and again");
		msc_w_end(&f->w);
	}
	assert_int_equal(msc_writer_flush(&f->w), 0);
	assert_int_equal(pread(f->fd, magic, 4, 0), 4);
	assert_memory_equal(magic, "\x28\xb5\x2f\xfd", 4);
	/* Compressed: far less than the 6 MB of records. */
	assert_true(f->w.bytes < 600000);
	/* Flushed, not ended: every record, then "cut short". */
	assert_int_equal(read_counted(f->fd, 100000, &err), -EPIPE);
	assert_string_equal(err.msg, "z: compressed data cut short: the zstd stream ends inside a "
			    "frame (after line 100000)");
	msc_w_begin(&f->w, "n");
	msc_w_u64(&f->w, "i", 100000);
	msc_w_end(&f->w);
	assert_int_equal(msc_writer_release(&f->w), 0);
	assert_int_equal(read_counted(f->fd, 100001, &err), 0);
	/* A byte changed: the checksum or the block says so, after the
	 * records before it. */
	assert_int_equal(pwrite(f->fd, "\xff\xff\xff\xff", 4, (off_t)f->w.bytes / 2), 4);
	assert_int_equal(read_counted_upto(f->fd, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "z: corrupt zstd data: "));
}

static void test_huge_integers(void **state)
{
	static const char in[] =
		"{\"type\":\"n\",\"big\":123456789012345678901234567890,"
		"\"umax\":18446744073709551615,\"over\":18446744073709551616,"
		"\"imin\":-9223372036854775808,\"under\":-9223372036854775809,"
		"\"i63\":9223372036854775808,\"imax\":9223372036854775807,"
		"\"negbig\":-123456789012345678901234567890,"
		"\"frac\":1.5,\"exp\":1e3,\"Exp\":2E-2,\"negz\":-0,\"zero\":0,"
		"\"zfrac\":0.25,\"nfrac\":-0.5}\n";
	struct msc_reader r;
	struct msc_rec rec;
	const struct msc_field *fld;
	int64_t i = 1;
	uint64_t u = 1;

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, in, sizeof(in) - 1, "mem"), 0);
	next_ok(&r, &rec);

	fld = msc_rec_field(&rec, "big");
	assert_int_equal(fld->val.kind, MSC_J_NUM);
	assert_int_equal(fld->val.len, 30);
	assert_int_equal(msc_rec_u64(&rec, "big", &u), -ERANGE);
	assert_int_equal(msc_rec_i64(&rec, "big", &i), -ERANGE);
	assert_int_equal(msc_rec_hex(&rec, "big", &u), -ERANGE);
	assert_int_equal(msc_rec_i64(&rec, "negbig", &i), -ERANGE);
	assert_int_equal(msc_rec_u64(&rec, "negbig", &u), -ERANGE);

	fld = msc_rec_field(&rec, "umax");
	assert_int_equal(fld->val.kind, MSC_J_INT);
	assert_false(fld->val.negative);
	assert_int_equal(msc_rec_u64(&rec, "umax", &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(msc_rec_i64(&rec, "umax", &i), -ERANGE);

	assert_int_equal(msc_rec_field(&rec, "over")->val.kind, MSC_J_NUM);
	assert_int_equal(msc_rec_u64(&rec, "over", &u), -ERANGE);

	fld = msc_rec_field(&rec, "imin");
	assert_int_equal(fld->val.kind, MSC_J_INT);
	assert_true(fld->val.negative);
	assert_int_equal(msc_rec_i64(&rec, "imin", &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(msc_rec_u64(&rec, "imin", &u), -ERANGE);

	assert_int_equal(msc_rec_field(&rec, "under")->val.kind, MSC_J_NUM);
	assert_int_equal(msc_rec_i64(&rec, "under", &i), -ERANGE);

	assert_int_equal(msc_rec_u64(&rec, "i63", &u), 0);
	assert_true(u == 1ull << 63);
	assert_int_equal(msc_rec_i64(&rec, "i63", &i), -ERANGE);
	assert_int_equal(msc_rec_i64(&rec, "imax", &i), 0);
	assert_true(i == INT64_MAX);

	/* Fractions and exponents are numbers, not integers. */
	assert_int_equal(msc_rec_field(&rec, "frac")->val.kind, MSC_J_NUM);
	assert_int_equal(msc_rec_u64(&rec, "frac", &u), -EINVAL);
	assert_int_equal(msc_rec_i64(&rec, "frac", &i), -EINVAL);
	assert_int_equal(msc_rec_u64(&rec, "exp", &u), -EINVAL);
	assert_int_equal(msc_rec_i64(&rec, "Exp", &i), -EINVAL);
	assert_int_equal(msc_rec_u64(&rec, "zfrac", &u), -EINVAL);
	assert_int_equal(msc_rec_i64(&rec, "nfrac", &i), -EINVAL);

	/* -0 is zero. */
	fld = msc_rec_field(&rec, "negz");
	assert_int_equal(fld->val.kind, MSC_J_INT);
	assert_false(fld->val.negative);
	assert_int_equal(msc_rec_u64(&rec, "negz", &u), 0);
	assert_true(u == 0);
	i = 5;
	assert_int_equal(msc_rec_i64(&rec, "zero", &i), 0);
	assert_true(i == 0);
	next_eof(&r);
	msc_reader_release(&r);
}

static void test_hex_values(void **state)
{
	static const char in[] =
		"{\"type\":\"h\",\"max\":\"0xffffffffffffffff\",\"MAX\":\"0XFFFFFFFFFFFFFFFF\","
		"\"zeros\":\"0x00000000000000000001\",\"over\":\"0x10000000000000000\","
		"\"bare\":\"0x\",\"bad\":\"0xg\",\"dec\":\"123\",\"int\":42,\"neg\":-1,"
		"\"esc\":\"\\u0030x1\",\"mixed\":\"0xDeadBeef\",\"space\":\"0x1 \","
		"\"frac\":1.5,\"t\":true}\n";
	struct msc_reader r;
	struct msc_rec rec;
	uint64_t u = 7;

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, in, sizeof(in) - 1, "mem"), 0);
	next_ok(&r, &rec);
	assert_int_equal(msc_rec_hex(&rec, "max", &u), 0);
	assert_true(u == UINT64_MAX);
	u = 0;
	assert_int_equal(msc_rec_hex(&rec, "MAX", &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(msc_rec_hex(&rec, "zeros", &u), 0);
	assert_true(u == 1);
	assert_int_equal(msc_rec_hex(&rec, "mixed", &u), 0);
	assert_true(u == 0xdeadbeef);
	assert_int_equal(msc_rec_hex(&rec, "int", &u), 0);
	assert_true(u == 42);
	u = 7;
	assert_int_equal(msc_rec_hex(&rec, "over", &u), -ERANGE);
	assert_int_equal(msc_rec_hex(&rec, "bare", &u), -EINVAL);
	assert_int_equal(msc_rec_hex(&rec, "bad", &u), -EINVAL);
	assert_int_equal(msc_rec_hex(&rec, "dec", &u), -EINVAL);
	assert_int_equal(msc_rec_hex(&rec, "neg", &u), -ERANGE);
	assert_int_equal(msc_rec_hex(&rec, "esc", &u), -EINVAL);
	assert_int_equal(msc_rec_hex(&rec, "space", &u), -EINVAL);
	assert_int_equal(msc_rec_hex(&rec, "frac", &u), -EINVAL);
	assert_int_equal(msc_rec_hex(&rec, "t", &u), -EINVAL);
	assert_true(u == 7);
	msc_reader_release(&r);
}

/* -------------------------------------------------------------- errors */

struct bad_line {
	const char *text;
	size_t len;		/* 0: strlen(text) */
	const char *what;	/* the message after "NAME:LINE: " */
};

#define IJ "invalid JSON at column "

static const struct bad_line bad_lines[] = {
	{ "{\"type\":\"a\",}", 0, IJ "13: expected a string key" },
	{ "[1,2]", 0, IJ "1: a record must be a JSON object" },
	{ "  42", 0, IJ "3: a record must be a JSON object" },
	{ "\"just a string\"", 0, IJ "1: a record must be a JSON object" },
	{ "{\"kind\":\"a\"}", 0, IJ "1: record has no \"type\"" },
	{ "{}", 0, IJ "1: record has no \"type\"" },
	{ "{\"typ\\u0065\":\"a\"}", 0, IJ "1: record has no \"type\"" },
	{ "{\"type\":42}", 0, IJ "9: \"type\" must be a string" },
	{ "{\"type\":null}", 0, IJ "9: \"type\" must be a string" },
	{ "{\"n\":1, \"type\":[\"a\"]}", 0, IJ "16: \"type\" must be a string" },
	{ "{\"type\":\"a\"} x", 0, IJ "14: trailing characters after the record" },
	{ "{\"type\":\"a\"}}", 0, IJ "13: trailing characters after the record" },
	{ "{\"type\":\"a\",\"v\":1}garbage", 0, IJ "19: trailing characters after the record" },
	{ "{\"type\":\"a\tb\"}", 0, IJ "11: control character in string" },
	{ "{\"type\":\"a\",\"v\":\"\x1f\"}", 0, IJ "18: control character in string" },
	{ "{\"type\":\"a\\qb\"}", 0, IJ "11: bad escape" },
	{ "{\"type\":\"a\\x41\"}", 0, IJ "11: bad escape" },
	{ "{\"type\":\"\\u12G4\"}", 0, IJ "10: bad \\u escape" },
	{ "{\"type\":\"a\",\"v\":\"\\u00\"}", 0, IJ "18: bad \\u escape" },
	{ "{\"type\":\"a\",\"v\":\"\\", 0, IJ "18: unterminated string" },
	{ "{\"type\":\"a\",\"v\":\"abc}", 0, IJ "17: unterminated string" },
	{ "{\"type\":\"a\",\"v\":tru}", 0, IJ "17: invalid literal" },
	{ "{\"type\":\"a\",\"v\":nul}", 0, IJ "17: invalid literal" },
	{ "{\"type\":\"a\",\"v\":True}", 0, IJ "17: expected a value" },
	{ "{\"type\":\"a\",\"v\":01}", 0, IJ "17: leading zero in number" },
	{ "{\"type\":\"a\",\"v\":-01}", 0, IJ "17: leading zero in number" },
	{ "{\"type\":\"a\",\"v\":-}", 0, IJ "17: bad number" },
	{ "{\"type\":\"a\",\"v\":+1}", 0, IJ "17: expected a value" },
	{ "{\"type\":\"a\",\"v\":.5}", 0, IJ "17: expected a value" },
	{ "{\"type\":\"a\",\"v\":1.}", 0, IJ "19: bad fraction" },
	{ "{\"type\":\"a\",\"v\":1e}", 0, IJ "19: bad exponent" },
	{ "{\"type\":\"a\",\"v\":1e+}", 0, IJ "20: bad exponent" },
	{ "{\"type\":\"a\",\"v\":0x10}", 0, IJ "18: expected ',' or '}'" },
	{ "{\"type\" \"a\"}", 0, IJ "9: expected ':'" },
	{ "{\"type\":\"a\",\"v\":[1 2]}", 0, IJ "20: expected ',' or ']'" },
	{ "{\"type\":\"a\",\"v\":[1,]}", 0, IJ "20: expected a value" },
	{ "{\"type\":\"a\",\"v\":{\"k\" 1}}", 0, IJ "22: expected ':'" },
	{ "{\"type\":\"a\",\"v\":{1:2}}", 0, IJ "18: expected a string key" },
	{ "{\"type\":\"a\",\"v\":{\"k\":1,}}", 0, IJ "24: expected a string key" },
	{ "{\"type\":\"a\",\"v\":{\"k\":1]}", 0, IJ "23: expected ',' or '}'" },
	{ "{\"type\":\"a\",\"v\":}", 0, IJ "17: expected a value" },
	{ "{\"type\":\"a\",\"v\":1,}", 0, IJ "19: expected a string key" },
	{ "{\"type\":\"a\"", 0, IJ "12: expected ',' or '}'" },
	{ "{\"type\":\"a\" \"b\":1}", 0, IJ "13: expected ',' or '}'" },
	{ "{", 0, IJ "2: expected a string key" },
	{ "}", 0, IJ "1: a record must be a JSON object" },
	{ "{type:\"a\"}", 0, IJ "2: expected a string key" },
	{ "{'type':'a'}", 0, IJ "2: expected a string key" },
	/* Binary junk, NUL bytes included. */
	{ "\x00\x01junk\xff\xfe", 8, IJ "1: a record must be a JSON object" },
	{ "{\"type\":\"a\"\x00}", 13, IJ "12: expected ',' or '}'" },
	{ "{\"type\":\"a\x00\"}", 13, IJ "11: control character in string" },
	{ "\xef\xbb\xbf{\"type\":\"bom\"}", 0, IJ "1: a record must be a JSON object" },
};

static void append(char **buf, size_t *len, const char *s, size_t n)
{
	*buf = realloc(*buf, *len + n + 1);
	assert_non_null(*buf);
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/*
 * Every bad line, each followed by a good one (sometimes after blank lines):
 * the error names the line, and the reader goes on with the next line.
 */
static char *bad_input(size_t *len)
{
	char *buf = NULL, ok[64];
	size_t i;

	*len = 0;
	for (i = 0; i < ARRAY_SIZE(bad_lines); i++) {
		const struct bad_line *b = &bad_lines[i];

		append(&buf, len, b->text, b->len ? b->len : strlen(b->text));
		append(&buf, len, "\n", 1);
		if (i % 3 == 1)
			append(&buf, len, "\n \t\r\n", 5);	/* two blank lines */
		snprintf(ok, sizeof(ok), "{\"type\":\"ok\",\"n\":%zu}\n", i);
		append(&buf, len, ok, strlen(ok));
	}
	return buf;
}

static void check_bad_input(struct msc_reader *r, const char *name)
{
	unsigned long lineno = 1;
	char want[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_lines); i++) {
		struct msc_rec rec;

		snprintf(want, sizeof(want), "%s:%lu: %s", name, lineno, bad_lines[i].what);
		next_err(r, -EINVAL, want);
		lineno += i % 3 == 1 ? 3 : 1;
		next_ok(r, &rec);
		assert_string_equal(rec.type, "ok");
		assert_int_equal(rec.lineno, lineno);
		assert_int_equal(rec_i64(&rec, "n"), i);
		lineno++;
	}
	next_eof(r);
	assert_int_equal(r->records, ARRAY_SIZE(bad_lines));
	assert_int_equal(r->lineno, lineno - 1);
}

static void test_reader_errors_mem(void **state)
{
	struct msc_reader r;
	size_t len;
	char *in = bad_input(&len);

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, in, len, "mem.ndjson"), 0);
	check_bad_input(&r, "mem.ndjson");
	msc_reader_release(&r);
	free(in);
}

static void test_reader_errors_file(void **state)
{
	struct wfix *f = *state;
	struct msc_err err = { 0 };
	size_t len;
	char *in = bad_input(&len);
	int fd = make_temp(f->path, sizeof(f->path));

	assert_int_equal(write(fd, in, len), (ssize_t)len);
	close(fd);
	assert_int_equal(msc_reader_open(&f->r, f->path, &err), 0);
	f->reader_open = true;
	check_bad_input(&f->r, f->path);
	free(in);
}

static void test_reader_open_missing(void **state)
{
	struct msc_reader r;
	struct msc_err err = { 0 };

	(void)state;
	assert_int_equal(msc_reader_open(&r, "/nonexistent/x.ndjson", &err), -ENOENT);
	assert_int_equal(err.code, -ENOENT);
	assert_string_equal(err.msg,
			    "cannot open '/nonexistent/x.ndjson': No such file or directory");
}

static char *nested_line(const char *prefix, int depth, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);
	char *s = malloc(pl + 2 * (size_t)depth + sl + 1), *p = s;
	int i;

	assert_non_null(s);
	memcpy(p, prefix, pl);
	p += pl;
	for (i = 0; i < depth; i++)
		*p++ = '[';
	for (i = 0; i < depth; i++)
		*p++ = ']';
	memcpy(p, suffix, sl + 1);
	return s;
}

static void test_reader_nesting(void **state)
{
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_err err = { 0 };
	char *ok = nested_line("{\"type\":\"a\",\"x\":", 63, "}\n");
	char *deep = nested_line("{\"type\":\"a\",\"x\":", 64, "}\n");
	char *objs, *p;
	int i;

	(void)state;
	/* The record and 63 arrays: 64 levels, the most allowed. */
	assert_int_equal(msc_reader_init_mem(&r, ok, strlen(ok), "mem"), 0);
	next_ok(&r, &rec);
	msc_reader_release(&r);
	/* One more, and the 64th bracket is the error. */
	assert_int_equal(msc_reader_init_mem(&r, deep, strlen(deep), "mem"), 0);
	next_err(&r, -EINVAL, "mem:1: invalid JSON at column 80: nesting too deep");
	next_eof(&r);
	msc_reader_release(&r);

	/* msc_json_validate: 64 levels pass, 65 do not. */
	assert_int_equal(msc_json_validate(ok + 16, 126, NULL), 0);
	assert_int_equal(msc_json_validate(deep + 16, 128, NULL), 0);
	free(deep);
	deep = nested_line("", 65, "");
	assert_int_equal(msc_json_validate(deep, 130, &err), -EINVAL);
	assert_string_equal(err.msg, "invalid JSON at column 65: nesting too deep");

	/* Objects count the same way. */
	objs = malloc(16 + 5 * 64 + 64 + 3);
	assert_non_null(objs);
	p = objs + sprintf(objs, "{\"type\":\"o\",\"x\":");
	for (i = 0; i < 63; i++)
		p += sprintf(p, "{\"k\":");
	p += sprintf(p, "1");
	for (i = 0; i < 63; i++)
		*p++ = '}';
	strcpy(p, "}\n");
	assert_int_equal(msc_reader_init_mem(&r, objs, strlen(objs), "mem"), 0);
	next_ok(&r, &rec);
	msc_reader_release(&r);

	/* A long run of brackets is an error, not a stack overflow. */
	free(deep);
	deep = nested_line("{\"type\":\"a\",\"x\":", 100000, "}\n");
	assert_int_equal(msc_reader_init_mem(&r, deep, strlen(deep), "mem"), 0);
	next_err(&r, -EINVAL, "mem:1: invalid JSON at column 80: nesting too deep");
	msc_reader_release(&r);
	free(objs);
	free(deep);
	free(ok);
}

static void test_reader_blank_and_crlf(void **state)
{
	static const char in[] =
		"\n"
		"   \n"
		"\t\r\n"
		"{\"type\":\"a\",\"n\":1}\r\n"
		"\r\n"
		" {\"type\" : \"b\" ,\r\"n\"\t:\t2 } \r\n"
		"\n";
	struct msc_reader r;
	struct msc_rec rec;

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, in, sizeof(in) - 1, "mem"), 0);
	next_ok(&r, &rec);
	assert_string_equal(rec.type, "a");
	assert_int_equal(rec.lineno, 4);
	assert_int_equal(rec_i64(&rec, "n"), 1);
	/* The line as read, carriage return included. */
	assert_int_equal(rec.len, 19);
	assert_int_equal(rec.line[18], '\r');
	next_ok(&r, &rec);
	assert_string_equal(rec.type, "b");
	assert_int_equal(rec.lineno, 6);
	assert_int_equal(rec_i64(&rec, "n"), 2);
	next_eof(&r);
	assert_int_equal(r.lineno, 7);
	msc_reader_release(&r);
}

static void check_truncated(struct msc_reader *r, const char *name)
{
	struct msc_rec rec;
	char want[128];

	next_ok(r, &rec);
	assert_string_equal(rec.type, "ok");
	snprintf(want, sizeof(want), "%s:2: truncated record at end of input", name);
	next_err(r, -EPIPE, want);
	next_eof(r);
}

static void check_unterminated_ok(struct msc_reader *r)
{
	struct msc_rec rec;

	next_ok(r, &rec);
	assert_string_equal(rec.type, "ok");
	next_ok(r, &rec);
	assert_string_equal(rec.type, "last");
	assert_int_equal(rec.lineno, 2);
	assert_int_equal(rec_i64(&rec, "n"), 12);
	assert_int_equal(rec.len, 22);
	next_eof(r);
}

static const char truncated[] = "{\"type\":\"ok\"}\n{\"type\":\"a\",\"v\":[1,";
static const char unterminated[] = "{\"type\":\"ok\"}\n{\"type\":\"last\",\"n\":12}";
static const char trailing_blank[] = "{\"type\":\"ok\"}\n  \t";

static void test_reader_last_line_mem(void **state)
{
	struct msc_reader r;
	struct msc_rec rec;

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, truncated, sizeof(truncated) - 1, "mem"), 0);
	check_truncated(&r, "mem");
	msc_reader_release(&r);
	assert_int_equal(msc_reader_init_mem(&r, unterminated, sizeof(unterminated) - 1, "mem"),
			 0);
	check_unterminated_ok(&r);
	msc_reader_release(&r);
	assert_int_equal(msc_reader_init_mem(&r, trailing_blank, sizeof(trailing_blank) - 1,
					     "mem"), 0);
	next_ok(&r, &rec);
	next_eof(&r);
	msc_reader_release(&r);
	/* Empty input. */
	assert_int_equal(msc_reader_init_mem(&r, "", 0, "mem"), 0);
	next_eof(&r);
	msc_reader_release(&r);
}

static void reopen_with(struct wfix *f, const char *data, size_t len)
{
	struct msc_err err = { 0 };
	int fd;

	if (f->reader_open)
		msc_reader_release(&f->r);
	f->reader_open = false;
	if (f->path[0])
		unlink(f->path);
	fd = make_temp(f->path, sizeof(f->path));
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(msc_reader_open(&f->r, f->path, &err), 0);
	f->reader_open = true;
}

static void test_reader_last_line_file(void **state)
{
	struct wfix *f = *state;
	struct msc_rec rec;

	reopen_with(f, truncated, sizeof(truncated) - 1);
	check_truncated(&f->r, f->path);
	reopen_with(f, unterminated, sizeof(unterminated) - 1);
	check_unterminated_ok(&f->r);
	reopen_with(f, trailing_blank, sizeof(trailing_blank) - 1);
	next_ok(&f->r, &rec);
	next_eof(&f->r);
	reopen_with(f, "", 0);
	next_eof(&f->r);
}

static void test_reader_many_fields(void **state)
{
	struct wfix *f = *state;
	struct msc_writer *w = &f->w;
	struct msc_reader *r;
	struct msc_rec rec;
	char key[16];
	int i;

	msc_w_begin(w, "wide");
	for (i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "f%d", i);
		msc_w_i64(w, key, -i);
	}
	/* A duplicate key: the first one counts. */
	msc_w_i64(w, "f7", 1000);
	msc_w_end(w);
	msc_w_begin(w, "narrow");
	msc_w_end(w);
	r = reader_on_output(f);
	next_ok(r, &rec);
	assert_int_equal(rec.nfields, 302);
	for (i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "f%d", i);
		assert_int_equal(rec_i64(&rec, key), -i);
	}
	next_ok(r, &rec);
	assert_int_equal(rec.nfields, 1);
	assert_null(msc_rec_field(&rec, "f0"));
	next_eof(r);
}

static void test_json_validate(void **state)
{
	static const char *const good[] = {
		"0", "-0", "1.5e-3", "\"s\"", "true", "false", "null", "[]", "{}",
		" \t\r\n[1, {\"a\": null}, \"\\u00e9\"] \n", "{\"a\":{\"b\":[[]]}}",
		"18446744073709551616", "1E+2",
	};
	static const struct {
		const char *in;
		const char *msg;
	} bad[] = {
		{ "", "invalid JSON at column 1: expected a value" },
		{ "   ", "invalid JSON at column 4: expected a value" },
		{ "1 2", "invalid JSON at column 3: trailing characters" },
		{ "[1,2", "invalid JSON at column 5: expected ',' or ']'" },
		{ "{\"a\"}", "invalid JSON at column 5: expected ':'" },
		{ "nulll", "invalid JSON at column 5: trailing characters" },
		{ "\"\\u", "invalid JSON at column 2: bad \\u escape" },
		{ "[\"a\" \"b\"]", "invalid JSON at column 6: expected ',' or ']'" },
	};
	struct msc_err err;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		int ret = msc_json_validate(good[i], strlen(good[i]), &err);

		if (ret)
			fail_msg("%s: %s", good[i], err.msg);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(msc_json_validate(bad[i].in, strlen(bad[i].in), &err), -EINVAL);
		assert_int_equal(err.code, -EINVAL);
		assert_string_equal(err.msg, bad[i].msg);
	}
	/* The length counts, not a NUL. */
	assert_int_equal(msc_json_validate("[1]xyz", 3, NULL), 0);
	assert_int_equal(msc_json_validate("[1]\0", 4, NULL), -EINVAL);
}

/* ---------------------------------------------------------- iteration */

static void test_jiter(void **state)
{
	static const char in[] =
		"{\"type\":\"j\",\"arr\":[1, \"two\" ,[3,[]],{\"four\":4},true,null,-5, 2.5],"
		"\"obj\":{\"a\":1,\"b\":{\"c\":[2]},\"a\\\"q\":3 , \"e\" : \"x\"},"
		"\"empty\":[ ],\"eo\":{ },\"n\":7}\n";
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_jiter it, it2;
	struct msc_jval v, b, c;
	struct msc_field key;
	const struct msc_field *arr, *obj;
	uint64_t u = 0;
	int64_t i = 0;
	const char *s;
	size_t len;

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, in, sizeof(in) - 1, "mem"), 0);
	next_ok(&r, &rec);
	arr = msc_rec_field(&rec, "arr");
	obj = msc_rec_field(&rec, "obj");
	assert_int_equal(arr->val.kind, MSC_J_ARR);
	assert_int_equal(obj->val.kind, MSC_J_OBJ);

	assert_int_equal(msc_jiter_init(&it, &arr->val), 0);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_INT);
	assert_int_equal(msc_jval_u64(&v, &u), 0);
	assert_true(u == 1);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_STR);
	assert_int_equal(v.len, 5);
	s = msc_jval_str(&v, rec.scratch, &len);
	assert_string_equal(s, "two");
	assert_int_equal(len, 3);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_ARR);
	assert_int_equal(v.len, 6);
	assert_memory_equal(v.p, "[3,[]]", 6);
	/* A nested array, walked in turn. */
	assert_int_equal(msc_jiter_init(&it2, &v), 0);
	assert_int_equal(msc_jiter_next(&it2, NULL, &c), 1);
	assert_int_equal(msc_jval_i64(&c, &i), 0);
	assert_true(i == 3);
	assert_int_equal(msc_jiter_next(&it2, NULL, &c), 1);
	assert_int_equal(c.kind, MSC_J_ARR);
	assert_int_equal(c.len, 2);
	assert_int_equal(msc_jiter_next(&it2, NULL, &c), 0);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_OBJ);
	assert_int_equal(msc_jval_member(&v, "four", &c), 1);
	assert_int_equal(msc_jval_u64(&c, &u), 0);
	assert_true(u == 4);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_TRUE);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_NULL);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(msc_jval_i64(&v, &i), 0);
	assert_true(i == -5);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_NUM);
	assert_int_equal(v.len, 3);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 0);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 0);

	/* Objects: keys as raw spans. */
	assert_int_equal(msc_jiter_init(&it, &obj->val), 0);
	assert_int_equal(msc_jiter_next(&it, &key, &v), 1);
	assert_int_equal(key.key_len, 1);
	assert_memory_equal(key.key, "a", 1);
	assert_false(key.key_escaped);
	assert_int_equal(key.val.kind, MSC_J_INT);
	assert_int_equal(v.u, 1);
	assert_int_equal(msc_jiter_next(&it, &key, &v), 1);
	assert_memory_equal(key.key, "b", 1);
	assert_int_equal(v.kind, MSC_J_OBJ);
	assert_int_equal(msc_jiter_next(&it, &key, &v), 1);
	assert_int_equal(key.key_len, 4);
	assert_memory_equal(key.key, "a\\\"q", 4);
	assert_true(key.key_escaped);
	assert_int_equal(v.u, 3);
	/* Keys may be skipped (NULL); white space around ':' is fine. */
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 1);
	assert_int_equal(v.kind, MSC_J_STR);
	assert_memory_equal(v.p, "\"x\"", 3);
	assert_int_equal(msc_jiter_next(&it, &key, &v), 0);

	/* msc_jval_member: only the object's own members. */
	assert_int_equal(msc_jval_member(&obj->val, "b", &b), 1);
	assert_int_equal(b.kind, MSC_J_OBJ);
	assert_int_equal(msc_jval_member(&b, "c", &c), 1);
	assert_int_equal(c.kind, MSC_J_ARR);
	assert_memory_equal(c.p, "[2]", 3);
	assert_int_equal(msc_jval_member(&obj->val, "c", &c), 0);
	assert_int_equal(msc_jval_member(&obj->val, "e", &c), 1);
	assert_string_equal(msc_jval_str(&c, rec.scratch, NULL), "x");
	assert_int_equal(msc_jval_member(&obj->val, "zz", &c), 0);
	assert_int_equal(msc_jval_member(&obj->val, "", &c), 0);
	assert_int_equal(msc_jval_member(&arr->val, "a", &c), -EINVAL);

	/* Empty containers and non-containers. */
	assert_int_equal(msc_jiter_init(&it, &msc_rec_field(&rec, "empty")->val), 0);
	assert_int_equal(msc_jiter_next(&it, NULL, &v), 0);
	assert_int_equal(msc_jiter_init(&it, &msc_rec_field(&rec, "eo")->val), 0);
	assert_int_equal(msc_jiter_next(&it, &key, &v), 0);
	assert_int_equal(msc_jiter_init(&it, &msc_rec_field(&rec, "n")->val), -EINVAL);
	assert_int_equal(msc_jiter_init(&it, &msc_rec_field(&rec, "type")->val), -EINVAL);
	assert_int_equal(msc_jval_member(&msc_rec_field(&rec, "n")->val, "a", &c), -EINVAL);
	errno = 0;
	assert_null(msc_jval_str(&arr->val, rec.scratch, NULL));
	assert_int_equal(errno, EINVAL);
	msc_reader_release(&r);
}

static void test_rec_err(void **state)
{
	static const char in[] = "\n{\"type\":\"site\",\"bytes\":-1}\n";
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_err err = { 0 };

	(void)state;
	assert_int_equal(msc_reader_init_mem(&r, in, sizeof(in) - 1, "snap.ndjson"), 0);
	next_ok(&r, &rec);
	assert_int_equal(msc_rec_err(&err, &rec, -ERANGE, "\"%s\" is negative", "bytes"),
			 -ERANGE);
	assert_int_equal(err.code, -ERANGE);
	assert_string_equal(err.msg, "snap.ndjson:2: \"bytes\" is negative");
	assert_int_equal(msc_rec_err(NULL, &rec, -EINVAL, "x"), -EINVAL);
	msc_reader_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_every_type, wfix_setup, wfix_teardown),
		cmocka_unit_test_setup_teardown(test_write_numbers_and_keys, wfix_setup, wfix_teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_every_type, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_doubles, wfix_setup, wfix_teardown),
		cmocka_unit_test_setup_teardown(test_writer_nesting, wfix_setup, wfix_teardown),
		cmocka_unit_test_setup_teardown(test_writer_small_buffer, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_writer_write_through, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_writer_keeps_first_error, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_writer_write_through_error, wfix_setup,
						wfix_teardown),
		cmocka_unit_test(test_quote_every_byte),
		cmocka_unit_test(test_quote_utf8),
		cmocka_unit_test(test_quote_exhaustive),
		cmocka_unit_test_setup_teardown(test_roundtrip_any_bytes, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_escaped_keys, wfix_setup,
						wfix_teardown),
		cmocka_unit_test(test_reader_unescape),
		cmocka_unit_test_setup_teardown(test_long_lines_file, wfix_setup, wfix_teardown),
		cmocka_unit_test_setup_teardown(test_long_lines_file_no_final_newline, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_long_lines_pipe, wfix_setup, wfix_teardown),
		cmocka_unit_test_setup_teardown(test_reader_buffer_bounded, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_reader_nonblocking_pipe, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_reader_newline_at_read_boundary, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_zstd_round_trip, wfix_setup, wfix_teardown),
		cmocka_unit_test(test_huge_integers),
		cmocka_unit_test(test_hex_values),
		cmocka_unit_test(test_reader_errors_mem),
		cmocka_unit_test_setup_teardown(test_reader_errors_file, wfix_setup,
						wfix_teardown),
		cmocka_unit_test(test_reader_open_missing),
		cmocka_unit_test(test_reader_nesting),
		cmocka_unit_test(test_reader_blank_and_crlf),
		cmocka_unit_test(test_reader_last_line_mem),
		cmocka_unit_test_setup_teardown(test_reader_last_line_file, wfix_setup,
						wfix_teardown),
		cmocka_unit_test_setup_teardown(test_reader_many_fields, wfix_setup,
						wfix_teardown),
		cmocka_unit_test(test_json_validate),
		cmocka_unit_test(test_jiter),
		cmocka_unit_test(test_rec_err),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
