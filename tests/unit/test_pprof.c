/* SPDX-License-Identifier: MIT */
/* Unit tests for the protobuf encoding and gzip of libmsc/render/pprof.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "msc_pprof.h"

static int pb_setup(void **state)
{
	struct msc_pb *b = malloc(sizeof(*b));

	if (!b)
		return -1;
	msc_pb_init(b);
	*state = b;
	return 0;
}

static int pb_teardown(void **state)
{
	msc_pb_release(*state);
	free(*state);
	return 0;
}

/* The buffer holds exactly these n bytes. */
static void assert_bytes(const struct msc_pb *b, const unsigned char *want, size_t n)
{
	assert_false(b->oom);
	assert_int_equal(b->len, n);
	assert_memory_equal(b->buf, want, n);
}

/* The examples of protobuf.dev/programming-guides/encoding. */
static void test_varint_fields(void **state)
{
	struct msc_pb *b = *state;
	static const unsigned char field150[] = { 0x08, 0x96, 0x01 };
	static const unsigned char v300[] = { 0xac, 0x02 };
	static const unsigned char max[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };

	msc_pb_uint(b, 1, 150);
	assert_bytes(b, field150, sizeof(field150));
	b->len = 0;
	msc_pb_varint(b, 300);
	assert_bytes(b, v300, sizeof(v300));
	b->len = 0;
	/* int64 -1 is its two's complement: ten bytes, not zigzag */
	msc_pb_varint(b, (uint64_t)(int64_t)-1);
	assert_bytes(b, max, sizeof(max));
	b->len = 0;
	/* proto3 leaves defaults out */
	msc_pb_uint(b, 7, 0);
	assert_int_equal(b->len, 0);
}

static void test_string_and_nested(void **state)
{
	struct msc_pb *b = *state;
	static const unsigned char testing[] = { 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' };
	static const unsigned char nested[] = { 0x1a, 0x03, 0x08, 0x96, 0x01 };
	size_t m;

	msc_pb_bytes(b, 2, "testing", 7);
	assert_bytes(b, testing, sizeof(testing));
	b->len = 0;
	m = msc_pb_begin(b, 3);
	msc_pb_uint(b, 1, 150);
	msc_pb_end(b, m);
	assert_bytes(b, nested, sizeof(nested));
}

/* A body of 128 bytes or more takes a longer length: it moves up. */
static void test_nested_long(void **state)
{
	struct msc_pb *b = *state;
	char body[300];
	size_t outer, inner;

	memset(body, 'x', sizeof(body));
	outer = msc_pb_begin(b, 4);
	msc_pb_uint(b, 1, 5);
	inner = msc_pb_begin(b, 4);
	msc_pb_bytes(b, 2, body, sizeof(body));	/* 12 ac 02, 300 bytes */
	msc_pb_end(b, inner);			/* 22 af 02: 303 */
	msc_pb_end(b, outer);			/* 22 b4 02: 2 + 3 + 303 = 308 */
	assert_false(b->oom);
	assert_int_equal(b->len, 3 + 308);
	assert_int_equal(b->buf[0], 0x22);
	assert_int_equal(b->buf[1], 0xb4);
	assert_int_equal(b->buf[2], 0x02);
	assert_int_equal(b->buf[3], 0x08);
	assert_int_equal(b->buf[4], 0x05);
	assert_int_equal(b->buf[5], 0x22);
	assert_int_equal(b->buf[6], 0xaf);
	assert_int_equal(b->buf[7], 0x02);
	assert_int_equal(b->buf[8], 0x12);
	assert_int_equal(b->buf[9], 0xac);	/* 300 = 0x12c */
	assert_int_equal(b->buf[10], 0x02);
	assert_memory_equal(b->buf + 11, body, sizeof(body));
}

static void test_packed(void **state)
{
	struct msc_pb *b = *state;
	static const uint64_t v[] = { 3, 270, 86942 };
	static const unsigned char want[] = { 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05 };

	msc_pb_packed(b, 4, v, 3);
	assert_bytes(b, want, sizeof(want));
	b->len = 0;
	msc_pb_packed(b, 4, v, 0);
	assert_int_equal(b->len, 0);
}

static void test_string_table(void **state)
{
	struct msc_pb *b = *state;
	struct msc_pb_strings t;
	static const unsigned char want[] = { 0x32, 0x00, 0x32, 0x01, 'a', 0x32, 0x02, 'b', 'c' };
	char a[] = "a";

	assert_int_equal(msc_pb_strings_init(&t), 0);
	assert_int_equal(msc_pb_string(&t, ""), 0);
	assert_int_equal(msc_pb_string(&t, NULL), 0);
	assert_int_equal(msc_pb_string(&t, a), 1);
	a[0] = 'z';	/* the table keeps its own copy */
	assert_int_equal(msc_pb_string(&t, "bc"), 2);
	assert_int_equal(msc_pb_string(&t, "a"), 1);
	assert_int_equal(msc_pb_string(&t, "z"), 3);
	t.n = 3;	/* leave "z" out of what is written */
	msc_pb_strings_write(&t, b, 6);
	assert_bytes(b, want, sizeof(want));
	msc_pb_strings_release(&t);
}

/* The gzip member inflates back to the message. */
static void test_gzip(void **state)
{
	struct msc_pb *b = *state;
	unsigned char out[65536], back[65536];
	FILE *f = tmpfile();
	size_t n, i;
	z_stream z;

	assert_non_null(f);
	for (i = 0; i < 5000; i++)
		msc_pb_uint(b, 1 + i % 15, i * 7919);
	assert_int_equal(msc_pb_gzip(b, f), 0);
	rewind(f);
	n = fread(out, 1, sizeof(out), f);
	fclose(f);
	assert_true(n > 18);
	assert_int_equal(out[0], 0x1f);
	assert_int_equal(out[1], 0x8b);
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = out;
	z.avail_in = (unsigned)n;
	z.next_out = back;
	z.avail_out = sizeof(back);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, b->len);
	assert_memory_equal(back, b->buf, b->len);
	inflateEnd(&z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_varint_fields, pb_setup, pb_teardown),
		cmocka_unit_test_setup_teardown(test_string_and_nested, pb_setup, pb_teardown),
		cmocka_unit_test_setup_teardown(test_nested_long, pb_setup, pb_teardown),
		cmocka_unit_test_setup_teardown(test_packed, pb_setup, pb_teardown),
		cmocka_unit_test_setup_teardown(test_string_table, pb_setup, pb_teardown),
		cmocka_unit_test_setup_teardown(test_gzip, pb_setup, pb_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
