/* SPDX-License-Identifier: MIT */
/*
 * The NDJSON record writer (see msc_ndjson.h; its zstd is in zst.c): the
 * buffer, write(2) with its waits, and the JSON it writes.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_ndjson.h"
#include "msc_util.h"
#include "ndjson_internal.h"

/* ================================================================ writer */

int msc_writer_init(struct msc_writer *w, int fd, size_t bufsize)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->cap = bufsize ? bufsize : 64 * 1024;
	w->buf = malloc(w->cap);
	if (!w->buf) {
		w->error = ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

static void put(struct msc_writer *w, const char *s, size_t n);

/* write(2)s all of p; the first error goes to w->error. */
int ndjson_write_all(struct msc_writer *w, const char *p, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(w->fd, p + off, len - off);

		if (n > 0) {
			off += (size_t)n;
			w->bytes += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* A non-blocking output (inherited from a shell): wait. */
			struct pollfd pfd = { .fd = w->fd, .events = POLLOUT };
			poll(&pfd, 1, -1);
			continue;
		}
		w->error = n < 0 ? errno : EIO;
		break;
	}
	return -w->error;
}

/* Writes the buffer out: see ndjson_internal.h for the modes. */
int ndjson_flush(struct msc_writer *w, enum zst_mode mode)
{
	if (w->error) {
		w->len = 0;
		return -w->error;
	}
	if (w->zc)
		zst_compress(w, mode);
	else
		ndjson_write_all(w, w->buf, w->len);
	w->len = 0;
	return -w->error;
}

int msc_writer_flush(struct msc_writer *w)
{
	return ndjson_flush(w, ZST_FLUSH);
}

int msc_writer_release(struct msc_writer *w)
{
	int ret = 0;

	if (w->buf)
		ret = ndjson_flush(w, ZST_END);
	free(w->buf);
	w->buf = NULL;
	w->cap = 0;
	zst_writer_release(w);
	return ret;
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
	struct msc_writer *w = cookie;

	put(w, buf, n);
	if (w->error) {
		errno = w->error;
		return -1;
	}
	return (ssize_t)n;
}

FILE *msc_writer_fopen(struct msc_writer *w)
{
	cookie_io_functions_t io = { .write = cookie_write };

	return fopencookie(w, "w", io);
}

/* reserve()'s way when the buffer is full: flushed, or grown for n. */
static char *reserve_slow(struct msc_writer *w, size_t n)
{
	ndjson_flush(w, ZST_CONTINUE);
	if (w->error)
		return NULL;
	if (n > w->cap) {
		char *nb = realloc(w->buf, n);

		if (!nb) {
			w->error = ENOMEM;
			return NULL;
		}
		w->buf = nb;
		w->cap = n;
	}
	return w->buf + w->len;
}

/* Makes room for n more bytes; returns NULL after an error (output dropped). */
static inline char *reserve(struct msc_writer *w, size_t n)
{
	if (msc_unlikely(w->len + n > w->cap))
		return reserve_slow(w, n);
	return w->buf + w->len;
}

static void put(struct msc_writer *w, const char *s, size_t n)
{
	char *p = reserve(w, n);

	if (p) {
		memcpy(p, s, n);
		w->len += n;
	}
}

static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];

	/* Returns the length of a valid UTF-8 sequence at s, or 0. */
	if (c >= 0xc2 && c <= 0xdf) {
		if (n >= 2 && (s[1] & 0xc0) == 0x80)
			return 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80;
		unsigned char hi = c == 0xed ? 0x9f : 0xbf;

		if (n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80)
			return 3;
	} else if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80;
		unsigned char hi = c == 0xf4 ? 0x8f : 0xbf;

		if (n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
		    (s[3] & 0xc0) == 0x80)
			return 4;
	}
	return 0;
}

static const char hexdig[] = "0123456789abcdef";

size_t msc_json_quote(char *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	char *o = out;
	size_t i = 0;

	*o++ = '"';
	while (i < n) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*o++ = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t l = utf8_seq_len(s + i, n - i);

			if (l) {
				memcpy(o, s + i, l);
				o += l;
				i += l;
			} else {
				/* surrogateescape: byte XX -> \udcXX */
				memcpy(o, "\\udc", 4);
				o[4] = hexdig[c >> 4];
				o[5] = hexdig[c & 15];
				o += 6;
				i++;
			}
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\n': *o++ = 'n'; break;
		case '\t': *o++ = 't'; break;
		case '\r': *o++ = 'r'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		default:
			memcpy(o, "u00", 3);
			o[3] = hexdig[c >> 4];
			o[4] = hexdig[c & 15];
			o += 5;
		}
		i++;
	}
	*o++ = '"';
	return (size_t)(o - out);
}

static void put_quoted(struct msc_writer *w, const char *s, size_t n)
{
	char *p;

	if (n > (SIZE_MAX - 2) / 6) {
		w->error = ENOMEM;
		return;
	}
	p = reserve(w, 6 * n + 2);
	if (p)
		w->len += msc_json_quote(p, s, n);
}

/* Keys this long or shorter, of printable ASCII but " and \ (ours
 * are), are copied as they are, in the pass that finds their end. */
#define PLAIN_KEY_MAX 48

/* The bytes a JSON string holds as they are: printable ASCII but " and \ */
#define PLAIN1(c) ((c) >= 0x20 && (c) != '"' && (c) != '\\' && (c) < 0x7f)
#define PLAIN8(r) PLAIN1((r) + 0), PLAIN1((r) + 1), PLAIN1((r) + 2), PLAIN1((r) + 3), \
	PLAIN1((r) + 4), PLAIN1((r) + 5), PLAIN1((r) + 6), PLAIN1((r) + 7)
static const bool plain_byte[256] = {
	PLAIN8(0x00), PLAIN8(0x08), PLAIN8(0x10), PLAIN8(0x18), PLAIN8(0x20), PLAIN8(0x28),
	PLAIN8(0x30), PLAIN8(0x38), PLAIN8(0x40), PLAIN8(0x48), PLAIN8(0x50), PLAIN8(0x58),
	PLAIN8(0x60), PLAIN8(0x68), PLAIN8(0x70), PLAIN8(0x78),
};

/* Room for n more bytes and the separator, which it writes: where the
 * member goes, or NULL after an error (the output is dropped then). */
static inline char *separated(struct msc_writer *w, size_t n)
{
	uint64_t bit = 1ull << w->depth;
	char *p = reserve(w, n + 1);

	if (!p)
		return NULL;
	if (w->comma & bit)
		*p++ = ',';
	w->comma |= bit;
	return p;
}

/* Writes the separator and the key of the next member or element. */
static void member(struct msc_writer *w, const char *key)
{
	/* The comma and a plain key in one reservation. */
	char *p = separated(w, PLAIN_KEY_MAX + 3);
	size_t kl;

	if (!p)
		return;
	w->len = (size_t)(p - w->buf);
	if (!key)
		return;
	*p = '"';
	for (kl = 0; kl < PLAIN_KEY_MAX && plain_byte[(unsigned char)key[kl]]; kl++)
		p[kl + 1] = key[kl];
	if (!key[kl]) {
		p[kl + 1] = '"';
		p[kl + 2] = ':';
		w->len += kl + 3;
		return;
	}
	kl = strlen(key);
	p = reserve(w, 6 * kl + 3);
	if (!p)
		return;
	w->len += msc_json_quote(p, key, kl);
	w->buf[w->len++] = ':';
}

void msc_w_begin(struct msc_writer *w, const char *type)
{
	w->depth = 0;
	w->comma = 0;
	w->arrays = 0;
	put(w, "{\"type\":", 8);
	put_quoted(w, type, strlen(type));
	w->comma = 1;
}

void msc_w_end(struct msc_writer *w)
{
	while (w->depth > 0)
		msc_w_obj_end(w);
	put(w, "}\n", 2);
	w->records++;
	w->comma = 0;
	if (w->write_through)
		msc_writer_flush(w);
}

void msc_w_bytes(struct msc_writer *w, const void *p, size_t len)
{
	put(w, p, len);
}

/* A line read from a stream, passed on: JSON text must be UTF-8, so a byte
 * that is not (a reader took it, inside a string) goes out as \udcXX, as
 * msc_json_quote writes it. */
static void put_line_utf8(struct msc_writer *w, const char *line, size_t len)
{
	const unsigned char *s = (const unsigned char *)line;
	size_t i = 0, from = 0;

	while (i < len) {
		size_t l;
		char esc[6];

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		l = utf8_seq_len(s + i, len - i);
		if (l) {
			i += l;
			continue;
		}
		put(w, line + from, i - from);
		memcpy(esc, "\\udc", 4);
		esc[4] = hexdig[s[i] >> 4];
		esc[5] = hexdig[s[i] & 15];
		put(w, esc, sizeof(esc));
		from = ++i;
	}
	put(w, line + from, len - from);
}

void msc_w_line(struct msc_writer *w, const char *line, size_t len)
{
	put_line_utf8(w, line, len);
	put(w, "\n", 1);
	w->records++;
	if (w->write_through)
		msc_writer_flush(w);
}

void msc_w_strn(struct msc_writer *w, const char *key, const char *s, size_t n)
{
	member(w, key);
	put_quoted(w, s, n);
}

void msc_w_str(struct msc_writer *w, const char *key, const char *s)
{
	if (!s) {
		msc_w_null(w, key);
		return;
	}
	msc_w_strn(w, key, s, strlen(s));
}

/* "00" to "99": numbers are written two digits a division. */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* The decimal digits of v: the bit length's log10 (1233 / 4096 is just
 * above log10 2), one less when v is below that power of ten. */
static inline size_t u64_digits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		0, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
		1000000000, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull,
	};
	unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;

	return t + 1 - (v < pow10[t]);
}

/* Written from its last digit back, in place (no copy of a buffer). */
static size_t fmt_u64(char *out, uint64_t v)
{
	size_t n = u64_digits(v);
	char *t = out + n;

	while (v >= 100) {
		const char *d = digit_pairs + 2 * (v % 100);

		v /= 100;
		*--t = d[1];
		*--t = d[0];
	}
	if (v >= 10) {
		*--t = digit_pairs[2 * v + 1];
		*--t = digit_pairs[2 * v];
	} else {
		*--t = (char)('0' + v);
	}
	return n;
}

void msc_w_u64_lit_(struct msc_writer *w, const char *key, size_t kl, uint64_t v,
		    signed char *plain)
{
	/* Relaxed atomics: writers on several threads may find it at once
	 * (and store the same answer). */
	signed char known = __atomic_load_n(plain, __ATOMIC_RELAXED);
	char *p;

	if (msc_unlikely(known < 0)) {
		size_t i;

		for (i = 0; i < kl && plain_byte[(unsigned char)key[i]]; i++)
			;
		known = i == kl;
		__atomic_store_n(plain, known, __ATOMIC_RELAXED);
	}
	if (msc_unlikely(!known)) {
		(msc_w_u64)(w, key, v);
		return;
	}
	p = separated(w, kl + 3 + 20);
	if (!p)
		return;
	*p++ = '"';
	memcpy(p, key, kl);
	p += kl;
	*p++ = '"';
	*p++ = ':';
	p += fmt_u64(p, v);
	w->len = (size_t)(p - w->buf);
}

void msc_w_u64_elem_(struct msc_writer *w, uint64_t v)
{
	char *p = separated(w, 20);

	if (p)
		w->len = (size_t)(p - w->buf) + fmt_u64(p, v);
}

void (msc_w_u64)(struct msc_writer *w, const char *key, uint64_t v)
{
	char *p;

	member(w, key);
	p = reserve(w, 24);
	if (p)
		w->len += fmt_u64(p, v);
}

void msc_w_i64(struct msc_writer *w, const char *key, int64_t v)
{
	char *p;

	member(w, key);
	p = reserve(w, 24);
	if (!p)
		return;
	if (v < 0) {
		*p++ = '-';
		w->len++;
		w->len += fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	} else {
		w->len += fmt_u64(p, (uint64_t)v);
	}
}

void msc_w_hex(struct msc_writer *w, const char *key, uint64_t v)
{
	char tmp[16], *p;
	size_t n = 0, i;

	member(w, key);
	do {
		tmp[n++] = hexdig[v & 15];
		v >>= 4;
	} while (v);
	p = reserve(w, n + 4);
	if (!p)
		return;
	*p++ = '"';
	*p++ = '0';
	*p++ = 'x';
	for (i = 0; i < n; i++)
		*p++ = tmp[n - 1 - i];
	*p = '"';
	w->len += n + 4;
}

void msc_w_bool(struct msc_writer *w, const char *key, bool v)
{
	member(w, key);
	if (v)
		put(w, "true", 4);
	else
		put(w, "false", 5);
}

void msc_w_null(struct msc_writer *w, const char *key)
{
	member(w, key);
	put(w, "null", 4);
}

void msc_w_double(struct msc_writer *w, const char *key, double v)
{
	char tmp[40];
	int n;

	if (!isfinite(v)) {
		msc_w_null(w, key);
		return;
	}
	member(w, key);
	/*
	 * The shorter of %.15g and %.17g that reads back as the same double
	 * (%.17g always does): %.6g lost digits, a time stamp in seconds
	 * such as 1732240000.5 became 1.73224e+09.  %g may print "1e+21",
	 * valid JSON; it never prints a bare ".".
	 */
	n = snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		n = snprintf(tmp, sizeof(tmp), "%.17g", v);
	put(w, tmp, (size_t)n);
}

void msc_w_raw(struct msc_writer *w, const char *key, const char *json, size_t n)
{
	member(w, key);
	put(w, json, n);
}

void msc_w_raw_member(struct msc_writer *w, const char *key_json, size_t key_len,
		      const char *val_json, size_t val_len)
{
	member(w, NULL);
	put(w, "\"", 1);
	put(w, key_json, key_len);
	put(w, "\":", 2);
	put(w, val_json, val_len);
}

static void open_container(struct msc_writer *w, const char *key, char c)
{
	member(w, key);
	put(w, &c, 1);
	if (w->depth + 1 >= MSC_WRITER_MAX_DEPTH) {
		w->error = EOVERFLOW;
		return;
	}
	w->depth++;
	w->comma &= ~(1ull << w->depth);
	if (c == '[')
		w->arrays |= 1ull << w->depth;
	else
		w->arrays &= ~(1ull << w->depth);
}

void msc_w_obj(struct msc_writer *w, const char *key)
{
	open_container(w, key, '{');
}

void msc_w_arr(struct msc_writer *w, const char *key)
{
	open_container(w, key, '[');
}

void msc_w_obj_end(struct msc_writer *w)
{
	if (w->depth == 0)
		return;
	put(w, (w->arrays >> w->depth) & 1 ? "]" : "}", 1);
	w->depth--;
}

void msc_w_arr_end(struct msc_writer *w)
{
	msc_w_obj_end(w);
}
