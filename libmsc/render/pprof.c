/* SPDX-License-Identifier: MIT */
/* The protobuf wire format and gzip of pprof profiles.  See msc_pprof.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "msc_pprof.h"

/* ------------------------------------------------------------- buffer */

void msc_pb_init(struct msc_pb *b)
{
	memset(b, 0, sizeof(*b));
}

void msc_pb_release(struct msc_pb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* Room for n more bytes; false (and oom) when there is none. */
static bool reserve(struct msc_pb *b, size_t n)
{
	size_t cap;
	unsigned char *p;

	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->buf, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->buf = p;
	b->cap = cap;
	return true;
}

/* The varint of v into p (10 bytes at most); its length. */
static size_t varint_to(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

void msc_pb_varint(struct msc_pb *b, uint64_t v)
{
	if (reserve(b, 10))
		b->len += varint_to(b->buf + b->len, v);
}

void msc_pb_key(struct msc_pb *b, unsigned field, unsigned wire)
{
	msc_pb_varint(b, (uint64_t)field << 3 | wire);
}

void msc_pb_uint(struct msc_pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	msc_pb_key(b, field, MSC_PB_VARINT);
	msc_pb_varint(b, v);
}

void msc_pb_bytes(struct msc_pb *b, unsigned field, const void *p, size_t n)
{
	msc_pb_key(b, field, MSC_PB_LEN);
	msc_pb_varint(b, n);
	if (n && reserve(b, n)) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

void msc_pb_packed(struct msc_pb *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t start, i;

	if (!n)
		return;
	start = msc_pb_begin(b, field);
	for (i = 0; i < n; i++)
		msc_pb_varint(b, v[i]);
	msc_pb_end(b, start);
}

/*
 * One byte is kept for the length, enough for a body below 128 bytes (most
 * messages of a profile): a longer body moves up by the bytes its length
 * takes more.
 */
size_t msc_pb_begin(struct msc_pb *b, unsigned field)
{
	msc_pb_key(b, field, MSC_PB_LEN);
	if (!reserve(b, 1))
		return 0;
	b->buf[b->len++] = 0;
	return b->len;
}

void msc_pb_end(struct msc_pb *b, size_t start)
{
	unsigned char len[10];
	size_t body, n;

	if (b->oom)
		return;
	body = b->len - start;
	n = varint_to(len, body);
	if (n > 1) {
		if (!reserve(b, n - 1))
			return;
		memmove(b->buf + start + n - 1, b->buf + start, body);
		b->len += n - 1;
	}
	memcpy(b->buf + start - 1, len, n);
}

/* ------------------------------------------------------- string table */

int msc_pb_strings_init(struct msc_pb_strings *t)
{
	memset(t, 0, sizeof(*t));
	msc_arena_init(&t->arena);
	if (msc_strmap_init(&t->index, 256))
		return -ENOMEM;
	msc_pb_string(t, "");
	return t->oom ? -ENOMEM : 0;
}

void msc_pb_strings_release(struct msc_pb_strings *t)
{
	msc_strmap_release(&t->index);
	msc_arena_release(&t->arena);
	free(t->list);
	memset(t, 0, sizeof(*t));
}

int64_t msc_pb_string(struct msc_pb_strings *t, const char *s)
{
	void *v;
	char *copy;

	if (!s)
		s = "";
	if (t->oom)
		return 0;
	v = msc_strmap_get(&t->index, s);
	if (v)
		return (int64_t)((uintptr_t)v - 1);
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		const char **l = realloc(t->list, cap * sizeof(*l));

		if (!l)
			goto oom;
		t->list = l;
		t->cap = cap;
	}
	copy = msc_arena_strdup(&t->arena, s);
	if (!copy || msc_strmap_put(&t->index, copy, (void *)(uintptr_t)(t->n + 1)))
		goto oom;
	t->list[t->n] = copy;
	return (int64_t)t->n++;
oom:
	t->oom = true;
	return 0;
}

void msc_pb_strings_write(const struct msc_pb_strings *t, struct msc_pb *b, unsigned field)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		msc_pb_bytes(b, field, t->list[i], strlen(t->list[i]));
}

/* --------------------------------------------------------------- gzip */

int msc_pb_gzip(const struct msc_pb *b, FILE *out)
{
	unsigned char chunk[16384];
	unsigned char *next = b->buf;
	size_t left = b->len, n;
	z_stream z;
	int zret, ret = 0;

	if (b->oom)
		return -ENOMEM;
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a 32 KiB window, with a gzip header and trailer */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	do {
		/* avail_in is an unsigned int: a huge buffer goes in parts */
		if (!z.avail_in && left) {
			z.next_in = next;
			z.avail_in = left > (1u << 30) ? 1u << 30 : (unsigned)left;
			next += z.avail_in;
			left -= z.avail_in;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zret = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zret == Z_STREAM_ERROR) {
			ret = -ENOMEM;
			break;
		}
		n = sizeof(chunk) - z.avail_out;
		errno = 0;
		if (fwrite(chunk, 1, n, out) != n) {
			ret = -(errno ? errno : EIO);
			break;
		}
	} while (zret != Z_STREAM_END);
	deflateEnd(&z);
	return ret;
}
