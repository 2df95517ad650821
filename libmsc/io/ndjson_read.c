/* SPDX-License-Identifier: MIT */
/*
 * The NDJSON reader (see msc_ndjson.h): input read in chunks, lines,
 * records, and the JSON grammar they are validated with, which the walks
 * over a record's nested values (msc_jiter, msc_jval_member) parse with
 * too.  Everything here called per line or per member is static.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_ndjson.h"
#include "msc_util.h"
#include "ndjson_internal.h"

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

/* ================================================================ walks */

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
