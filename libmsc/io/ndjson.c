/* SPDX-License-Identifier: MIT */
/* NDJSON record writer and streaming reader (their zstd is in zst.c): see msc_ndjson.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
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

/* ================================================================ parser */

#define MAX_NESTING 64

struct parse {
	const char *start;	/* of the line: columns are counted from here */
	const char *p, *end;
	const char *what;	/* error description */
	const char *at;		/* error position */
};

static int perr(struct parse *ps, const char *at, const char *what)
{
	ps->at = at;
	ps->what = what;
	return -EINVAL;
}

static inline const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* p at the opening quote; on success p is after the closing quote. */
static int parse_string(struct parse *ps, struct msc_jval *v)
{
	const char *p = ps->p + 1, *end = ps->end;
	bool esc = false;

	for (;;) {
		/* Fast scan over plain bytes. */
		while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
			p++;
		if (p >= end)
			return perr(ps, ps->p, "unterminated string");
		if (*p == '"')
			break;
		if (*p != '\\')
			return perr(ps, p, "control character in string");
		esc = true;
		if (p + 1 >= end)
			return perr(ps, p, "unterminated string");
		switch (p[1]) {
		case '"': case '\\': case '/': case 'b': case 'f':
		case 'n': case 'r': case 't':
			p += 2;
			break;
		case 'u':
			if (end - p < 6 || hexval(p[2]) < 0 || hexval(p[3]) < 0 ||
			    hexval(p[4]) < 0 || hexval(p[5]) < 0)
				return perr(ps, p, "bad \\u escape");
			p += 6;
			break;
		default:
			return perr(ps, p, "bad escape");
		}
	}
	v->p = ps->p;
	v->len = (uint32_t)(p + 1 - ps->p);
	v->kind = MSC_J_STR;
	v->escaped = esc;
	ps->p = p + 1;
	return 0;
}

static int parse_number(struct parse *ps, struct msc_jval *v)
{
	const char *p = ps->p, *end = ps->end, *digits;
	bool neg = false, integral = true, overflow = false;
	uint64_t u = 0;

	if (*p == '-') {
		neg = true;
		p++;
	}
	digits = p;
	if (p >= end || *p < '0' || *p > '9')
		return perr(ps, ps->p, "bad number");
	if (*p == '0') {
		p++;
		if (p < end && *p >= '0' && *p <= '9')
			return perr(ps, ps->p, "leading zero in number");
	} else {
		while (p < end && *p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p - '0');

			if (u > (UINT64_MAX - d) / 10)
				overflow = true;
			else
				u = u * 10 + d;
			p++;
		}
	}
	if (p == digits + 1 && *digits == '0')
		u = 0;
	if (p < end && *p == '.') {
		integral = false;
		p++;
		if (p >= end || *p < '0' || *p > '9')
			return perr(ps, p, "bad fraction");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		integral = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || *p < '0' || *p > '9')
			return perr(ps, p, "bad exponent");
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	v->p = ps->p;
	v->len = (uint32_t)(p - ps->p);
	v->escaped = false;
	v->negative = false;
	v->u = 0;
	if (!integral || overflow || (neg && u > (uint64_t)INT64_MAX + 1)) {
		v->kind = MSC_J_NUM;
	} else {
		v->kind = MSC_J_INT;
		if (neg && u != 0) {
			v->negative = true;
			v->i = (int64_t)(0 - u);
		} else {
			v->u = u;
		}
	}
	ps->p = p;
	return 0;
}

static int parse_value(struct parse *ps, struct msc_jval *v, int depth);

/* An object member's key and the ':' after it; ps->p ends at the value. */
static int parse_key(struct parse *ps, struct msc_jval *key)
{
	int ret;

	if (ps->p >= ps->end || *ps->p != '"')
		return perr(ps, ps->p, "expected a string key");
	ret = parse_string(ps, key);
	if (ret)
		return ret;
	ps->p = skip_ws(ps->p, ps->end);
	if (ps->p >= ps->end || *ps->p != ':')
		return perr(ps, ps->p, "expected ':'");
	ps->p = skip_ws(ps->p + 1, ps->end);
	return 0;
}

/* Parses a container at ps->p ('[' or '{'), validating every member. */
static int parse_container(struct parse *ps, struct msc_jval *v, int depth)
{
	const char *open = ps->p;
	bool object = *open == '{';
	char close = object ? '}' : ']';
	struct msc_jval item;
	int ret;

	if (depth >= MAX_NESTING)
		return perr(ps, open, "nesting too deep");
	ps->p = skip_ws(ps->p + 1, ps->end);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		goto done;
	}
	for (;;) {
		if (object && (ret = parse_key(ps, &item)))
			return ret;
		ret = parse_value(ps, &item, depth + 1);
		if (ret)
			return ret;
		ps->p = skip_ws(ps->p, ps->end);
		if (ps->p >= ps->end)
			return perr(ps, ps->p, object ? "expected ',' or '}'" : "expected ',' or ']'");
		if (*ps->p == close) {
			ps->p++;
			break;
		}
		if (*ps->p != ',')
			return perr(ps, ps->p, object ? "expected ',' or '}'" : "expected ',' or ']'");
		ps->p = skip_ws(ps->p + 1, ps->end);
	}
done:
	v->p = open;
	v->len = (uint32_t)(ps->p - open);
	v->kind = object ? MSC_J_OBJ : MSC_J_ARR;
	v->escaped = false;
	return 0;
}

static int parse_literal(struct parse *ps, struct msc_jval *v, const char *lit,
			 size_t n, enum msc_json_kind kind)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n) != 0)
		return perr(ps, ps->p, "invalid literal");
	v->p = ps->p;
	v->len = (uint32_t)n;
	v->kind = (uint8_t)kind;
	v->escaped = false;
	ps->p += n;
	return 0;
}

static int parse_value(struct parse *ps, struct msc_jval *v, int depth)
{
	if (ps->p >= ps->end)
		return perr(ps, ps->p, "expected a value");
	switch (*ps->p) {
	case '"':
		return parse_string(ps, v);
	case '{':
	case '[':
		return parse_container(ps, v, depth);
	case 't':
		return parse_literal(ps, v, "true", 4, MSC_J_TRUE);
	case 'f':
		return parse_literal(ps, v, "false", 5, MSC_J_FALSE);
	case 'n':
		return parse_literal(ps, v, "null", 4, MSC_J_NULL);
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps, v);
		return perr(ps, ps->p, "expected a value");
	}
}

int msc_json_validate(const char *p, size_t len, struct msc_err *err)
{
	struct parse ps = { .start = p, .p = p, .end = p + len };
	struct msc_jval v;
	int ret;

	ps.p = skip_ws(ps.p, ps.end);
	ret = parse_value(&ps, &v, 0);
	if (!ret) {
		ps.p = skip_ws(ps.p, ps.end);
		if (ps.p != ps.end)
			ret = perr(&ps, ps.p, "trailing characters");
	}
	if (ret)
		return msc_err_set(err, ret, "invalid JSON at column %zu: %s",
				   (size_t)(ps.at - ps.start) + 1, ps.what);
	return 0;
}

/* ================================================================ strings */

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static uint32_t hex4(const char *p)
{
	return (uint32_t)(hexval(p[0]) << 12 | hexval(p[1]) << 8 |
			  hexval(p[2]) << 4 | hexval(p[3]));
}

/*
 * Unescapes the inside of a validated string (quotes excluded) into out,
 * which has room for n + 1 bytes (escapes never expand).  Returns the length.
 */
static size_t unescape(char *out, const char *s, size_t n)
{
	const char *end = s + n;
	char *o = out;

	while (s < end) {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		switch (s[1]) {
		case 'b': *o++ = '\b'; s += 2; break;
		case 'f': *o++ = '\f'; s += 2; break;
		case 'n': *o++ = '\n'; s += 2; break;
		case 'r': *o++ = '\r'; s += 2; break;
		case 't': *o++ = '\t'; s += 2; break;
		case 'u': {
			uint32_t cp = hex4(s + 2);

			s += 6;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (end - s >= 6 && s[0] == '\\' && s[1] == 'u') {
					uint32_t lo = hex4(s + 2);

					if (lo >= 0xdc00 && lo <= 0xdfff) {
						cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
						s += 6;
						o += put_utf8(o, cp);
						break;
					}
				}
				o += put_utf8(o, 0xfffd);
			} else if (cp >= 0xdc80 && cp <= 0xdcff) {
				*o++ = (char)(cp & 0xff);	/* surrogateescape */
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				o += put_utf8(o, 0xfffd);
			} else {
				o += put_utf8(o, cp);
			}
			break;
		}
		default:	/* '"', '\\', '/' */
			*o++ = s[1];
			s += 2;
		}
	}
	*o = '\0';
	return (size_t)(o - out);
}

const char *msc_jval_str(const struct msc_jval *v, struct msc_arena *a, size_t *len)
{
	char *out;
	size_t n;

	if (v->kind != MSC_J_STR) {
		errno = EINVAL;
		return NULL;
	}
	out = msc_arena_alloc(a, v->len - 1);
	if (!out)
		return NULL;
	if (v->escaped) {
		n = unescape(out, v->p + 1, v->len - 2);
	} else {
		n = v->len - 2;
		memcpy(out, v->p + 1, n);
		out[n] = '\0';
	}
	if (len)
		*len = n;
	return out;
}

/* ================================================================ reader */

#define READ_CHUNK (256 * 1024)

static void reader_init_common(struct msc_reader *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->name = name ? name : "-";
	msc_arena_init(&r->scratch);
}

int msc_reader_init_fd(struct msc_reader *r, int fd, const char *name)
{
	reader_init_common(r, name);
	r->fd = fd;
	return 0;
}

int msc_reader_init_mem(struct msc_reader *r, const char *mem, size_t len, const char *name)
{
	reader_init_common(r, name);
	r->mem = mem;
	r->mem_len = len;
	r->eof = true;
	return 0;
}

int msc_reader_open(struct msc_reader *r, const char *path, struct msc_err *err)
{
	int fd;

	if (!path || strcmp(path, "-") == 0)
		return msc_reader_init_fd(r, 0, "-");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return msc_err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	msc_reader_init_fd(r, fd, path);
	r->own_fd = true;
	return 0;
}

void msc_reader_release(struct msc_reader *r)
{
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->fields);
	zst_reader_release(r);
	msc_arena_release(&r->scratch);
	r->buf = NULL;
	r->fields = NULL;
	r->fd = -1;
}

void msc_reader_reuse_mem(struct msc_reader *r, const char *mem, size_t len, const char *name)
{
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	r->own_fd = false;
	r->fd = -1;
	r->name = name ? name : "-";
	r->mem = mem;
	r->mem_len = len;
	r->start = r->end = 0;
	r->eof = true;
	r->lineno = 0;
	r->records = 0;
	msc_arena_reset(&r->scratch);
}

/* read(2) that waits on a non-blocking input and retries EINTR. */
ssize_t ndjson_read_some(int fd, char *p, size_t n)
{
	ssize_t got;

	do {
		got = read(fd, p, n);
		if (got < 0 && errno == EAGAIN) {
			/*
			 * A non-blocking input (inherited from a shell): wait
			 * for data, as the writer waits for room.
			 */
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			poll(&pfd, 1, -1);
		}
	} while (got < 0 && (errno == EINTR || errno == EAGAIN));
	return got < 0 ? -errno : got;
}

/* Moves the unread part of the buffer to its start and makes room. */
static int compact(struct msc_reader *r)
{
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->cap - r->end < READ_CHUNK / 4 && MSC_GROW(r->buf, r->cap + 1, r->cap, READ_CHUNK))
		return -ENOMEM;
	return 0;
}

/* Reads more input after compacting; returns bytes read, 0 at EOF, <0 error. */
static ssize_t fill(struct msc_reader *r)
{
	ssize_t n;

	if (compact(r))
		return -ENOMEM;
	if (!r->sniffed)
		return zst_sniff(r);
	if (r->zd)
		return zst_fill(r);
	n = ndjson_read_some(r->fd, r->buf + r->end, r->cap - r->end);
	if (n > 0)
		r->end += (size_t)n;
	return n;
}

/* Finds the next line and sets line and len: 1 found, 0 EOF, <0 error.
 * *complete is false when the line ran into EOF without a newline. */
static int next_line(struct msc_reader *r, const char **line, size_t *len, bool *complete)
{
	if (r->mem) {
		const char *p, *end, *nl;

		if (!r->mem || r->start >= r->mem_len)
			return 0;
		p = r->mem + r->start;
		end = r->mem + r->mem_len;
		nl = memchr(p, '\n', (size_t)(end - p));
		*line = p;
		*len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		*complete = nl != NULL;
		r->start += *len + (nl ? 1 : 0);
		return 1;
	}
	/*
	 * Bytes after r->start already searched for a newline (fill() keeps
	 * them, moved to the start): a long line arriving through a pipe in
	 * small reads is searched once, not again after every read.
	 */
	size_t scanned = 0;

	for (;;) {
		/* No buffer yet before the first read: no pointer arithmetic on NULL. */
		char *p = r->buf ? r->buf + r->start : NULL;
		char *nl = r->end - r->start > scanned ?
			   memchr(p + scanned, '\n', r->end - r->start - scanned) : NULL;
		ssize_t n;

		if (nl) {
			*line = p;
			*len = (size_t)(nl - p);
			*complete = true;
			r->start += *len + 1;
			return 1;
		}
		if (r->eof) {
			if (r->end == r->start)
				return 0;
			*line = p;
			*len = r->end - r->start;
			*complete = false;
			r->start = r->end;
			return 1;
		}
		scanned = r->end - r->start;
		n = fill(r);
		if (n < 0)
			return (int)n;
		if (n == 0)
			r->eof = true;
	}
}

static int add_field(struct msc_reader *r, unsigned n)
{
	return MSC_GROW(r->fields, (size_t)n + 1, r->fields_cap, 32);
}

/* Parses one line as a record object.  Returns 0 or -EINVAL/-ENOMEM (ps set). */
static int parse_record(struct msc_reader *r, struct parse *ps, struct msc_rec *rec)
{
	const struct msc_field *type;
	unsigned n = 0, type_idx = UINT_MAX;
	int ret;

	ps->p = skip_ws(ps->p, ps->end);
	if (ps->p >= ps->end || *ps->p != '{')
		return perr(ps, ps->p, "a record must be a JSON object");
	ps->p = skip_ws(ps->p + 1, ps->end);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
	} else {
		for (;;) {
			struct msc_jval key;
			struct msc_field *f;

			ret = parse_key(ps, &key);
			if (ret)
				return ret;
			if (add_field(r, n) < 0)
				return -ENOMEM;
			f = &r->fields[n++];
			f->key = key.p + 1;
			f->key_len = key.len - 2;
			f->key_escaped = key.escaped;
			ret = parse_value(ps, &f->val, 1);
			if (ret)
				return ret;
			/*
			 * An index, not a pointer: add_field() may move
			 * r->fields while the rest of the record is parsed.
			 */
			if (type_idx == UINT_MAX && f->key_len == 4 && !f->key_escaped &&
			    memcmp(f->key, "type", 4) == 0)
				type_idx = n - 1;
			ps->p = skip_ws(ps->p, ps->end);
			if (ps->p < ps->end && *ps->p == '}') {
				ps->p++;
				break;
			}
			if (ps->p >= ps->end || *ps->p != ',')
				return perr(ps, ps->p, "expected ',' or '}'");
			ps->p = skip_ws(ps->p + 1, ps->end);
		}
	}
	ps->p = skip_ws(ps->p, ps->end);
	if (ps->p != ps->end)
		return perr(ps, ps->p, "trailing characters after the record");
	if (type_idx == UINT_MAX)
		return perr(ps, ps->start, "record has no \"type\"");
	type = &r->fields[type_idx];
	if (type->val.kind != MSC_J_STR)
		return perr(ps, type->val.p, "\"type\" must be a string");
	rec->type = msc_jval_str(&type->val, &r->scratch, NULL);
	if (!rec->type)
		return -ENOMEM;
	rec->nfields = n;
	rec->fields = r->fields;
	return 0;
}

int msc_reader_next(struct msc_reader *r, struct msc_rec *rec, struct msc_err *err)
{
	for (;;) {
		const char *line = NULL;
		size_t len = 0;
		bool complete = false;
		struct parse ps;
		int ret;

		ret = next_line(r, &line, &len, &complete);
		if (ret < 0 && r->zmsg[0])
			return msc_err_set(err, ret, "%s: %s", r->name, r->zmsg);
		if (ret < 0)
			return msc_err_set(err, ret, "%s: read error: %s", r->name, strerror(-ret));
		if (ret == 0)
			return 0;
		r->lineno++;
		if (len > UINT32_MAX)
			return msc_err_set(err, -EINVAL, "%s:%lu: line too long", r->name, r->lineno);
		if (skip_ws(line, line + len) == line + len)
			continue;	/* blank line */
		msc_arena_reset(&r->scratch);
		ps.start = ps.p = line;
		ps.end = line + len;
		ps.what = NULL;
		ps.at = line;
		rec->line = line;
		rec->len = len;
		rec->lineno = r->lineno;
		rec->source = r->name;
		rec->scratch = &r->scratch;
		ret = parse_record(r, &ps, rec);
		if (ret == -ENOMEM)
			return msc_err_set(err, ret, "%s:%lu: out of memory", r->name, r->lineno);
		if (ret) {
			if (!complete)
				return msc_err_set(err, -EPIPE,
						   "%s:%lu: truncated record at end of input",
						   r->name, r->lineno);
			return msc_err_set(err, ret, "%s:%lu: invalid JSON at column %zu: %s",
					   r->name, r->lineno, (size_t)(ps.at - ps.start) + 1,
					   ps.what);
		}
		r->records++;
		return 1;
	}
}

/* ================================================================ access */

static bool key_eq(const struct msc_field *f, const char *key, size_t klen)
{
	return f->key_len == klen && memcmp(f->key, key, klen) == 0 && !f->key_escaped;
}

const struct msc_field *msc_rec_field(const struct msc_rec *rec, const char *key)
{
	size_t klen = strlen(key);
	unsigned i;

	for (i = 0; i < rec->nfields; i++)
		if (key_eq(&rec->fields[i], key, klen))
			return &rec->fields[i];
	return NULL;
}

bool msc_rec_type_is(const struct msc_rec *rec, const char *type)
{
	return strcmp(rec->type, type) == 0;
}

int msc_jval_i64(const struct msc_jval *v, int64_t *out)
{
	if (v->kind == MSC_J_NUM) {
		/* An integer too large for 64 bits, or a fraction. */
		return memchr(v->p, '.', v->len) || memchr(v->p, 'e', v->len) ||
		       memchr(v->p, 'E', v->len) ? -EINVAL : -ERANGE;
	}
	if (v->kind != MSC_J_INT)
		return -EINVAL;
	if (v->negative) {
		*out = v->i;
		return 0;
	}
	if (v->u > (uint64_t)INT64_MAX)
		return -ERANGE;
	*out = (int64_t)v->u;
	return 0;
}

int msc_jval_u64(const struct msc_jval *v, uint64_t *out)
{
	if (v->kind == MSC_J_NUM)
		return memchr(v->p, '.', v->len) || memchr(v->p, 'e', v->len) ||
		       memchr(v->p, 'E', v->len) ? -EINVAL : -ERANGE;
	if (v->kind != MSC_J_INT)
		return -EINVAL;
	if (v->negative)
		return -ERANGE;
	*out = v->u;
	return 0;
}

int msc_jval_hex(const struct msc_jval *v, uint64_t *out)
{
	const char *p, *end;
	uint64_t x = 0;

	if (v->kind == MSC_J_INT || v->kind == MSC_J_NUM)
		return msc_jval_u64(v, out);
	if (v->kind != MSC_J_STR || v->escaped)
		return -EINVAL;
	p = v->p + 1;
	end = v->p + v->len - 1;
	if (end - p < 3 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
		return -EINVAL;
	p += 2;
	if (end - p > 16) {
		while (p < end && *p == '0')
			p++;
		if (end - p > 16)
			return -ERANGE;
	}
	for (; p < end; p++) {
		int d = hexval(*p);

		if (d < 0)
			return -EINVAL;
		x = x << 4 | (uint64_t)d;
	}
	*out = x;
	return 0;
}

int msc_rec_i64(const struct msc_rec *rec, const char *key, int64_t *out)
{
	const struct msc_field *f = msc_rec_field(rec, key);

	return f ? msc_jval_i64(&f->val, out) : -ENOENT;
}

int msc_rec_pid(const struct msc_rec *rec, int fallback)
{
	int64_t pid = 0;

	if (msc_rec_i64(rec, "pid", &pid) == 0 && pid > 0 && pid < 0x40000000)
		return (int)pid;
	return fallback;
}

int msc_rec_u64(const struct msc_rec *rec, const char *key, uint64_t *out)
{
	const struct msc_field *f = msc_rec_field(rec, key);

	return f ? msc_jval_u64(&f->val, out) : -ENOENT;
}

int msc_rec_hex(const struct msc_rec *rec, const char *key, uint64_t *out)
{
	const struct msc_field *f = msc_rec_field(rec, key);

	return f ? msc_jval_hex(&f->val, out) : -ENOENT;
}

int msc_rec_bool(const struct msc_rec *rec, const char *key, bool *out)
{
	const struct msc_field *f = msc_rec_field(rec, key);

	if (!f)
		return -ENOENT;
	if (f->val.kind != MSC_J_TRUE && f->val.kind != MSC_J_FALSE)
		return -EINVAL;
	*out = f->val.kind == MSC_J_TRUE;
	return 0;
}

const char *msc_rec_str(const struct msc_rec *rec, const char *key, size_t *len)
{
	const struct msc_field *f = msc_rec_field(rec, key);

	if (!f) {
		errno = ENOENT;
		return NULL;
	}
	return msc_jval_str(&f->val, rec->scratch, len);
}

int msc_jiter_init(struct msc_jiter *it, const struct msc_jval *c)
{
	if (c->kind != MSC_J_ARR && c->kind != MSC_J_OBJ)
		return -EINVAL;
	it->p = c->p + 1;
	it->end = c->p + c->len - 1;	/* the closing bracket */
	it->object = c->kind == MSC_J_OBJ;
	return 0;
}

int msc_jiter_next(struct msc_jiter *it, struct msc_field *key, struct msc_jval *val)
{
	struct parse ps;
	struct msc_jval k;

	ps.start = it->p;
	ps.p = skip_ws(it->p, it->end);
	ps.end = it->end;
	if (ps.p < ps.end && *ps.p == ',')
		ps.p = skip_ws(ps.p + 1, ps.end);
	if (ps.p >= ps.end)
		return 0;
	if (it->object) {
		if (parse_string(&ps, &k))
			return -EINVAL;
		if (key) {
			key->key = k.p + 1;
			key->key_len = k.len - 2;
			key->key_escaped = k.escaped;
		}
		ps.p = skip_ws(ps.p, ps.end);
		ps.p = skip_ws(ps.p + 1, ps.end);	/* ':' */
	}
	if (parse_value(&ps, val, 1))
		return -EINVAL;
	if (key)
		key->val = *val;
	it->p = ps.p;
	return 1;
}

const char *msc_jval_member_str(const struct msc_jval *obj, const char *key, struct msc_arena *a)
{
	struct msc_jval v;

	if (msc_jval_member(obj, key, &v) <= 0 || v.kind != MSC_J_STR)
		return NULL;
	return msc_jval_str(&v, a, NULL);
}

int msc_jval_member(const struct msc_jval *obj, const char *key, struct msc_jval *out)
{
	struct msc_jiter it;
	struct msc_field f;
	struct msc_jval v;
	size_t klen = strlen(key);
	int ret;

	if (obj->kind != MSC_J_OBJ)
		return -EINVAL;
	msc_jiter_init(&it, obj);
	while ((ret = msc_jiter_next(&it, &f, &v)) > 0) {
		if (key_eq(&f, key, klen)) {
			*out = v;
			return 1;
		}
	}
	return ret;
}

int msc_rec_err(struct msc_err *err, const struct msc_rec *rec, int code,
		const char *fmt, ...)
{
	char msg[MSC_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return msc_err_set(err, code, "%s:%lu: %s", rec->source, rec->lineno, msg);
}
