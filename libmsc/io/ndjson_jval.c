/* SPDX-License-Identifier: MIT */
/*
 * What the values of a record read by the reader hold (see msc_ndjson.h):
 * its fields found by key, integers, hex addresses, booleans, and strings
 * unescaped into an arena; errors that name the record.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "msc_ndjson.h"
#include "ndjson_internal.h"

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

/* ================================================================ access */

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
