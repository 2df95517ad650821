/* SPDX-License-Identifier: MIT */
/*
 * msc_ndjson: memscope records as NDJSON, written and read as streams.
 *
 * A record is one JSON object on one line whose first key is "type" (see
 * memscope-format(5)).  This module knows JSON, not record types: the tools
 * and the other modules decide what a "site" or a "mapping" holds.
 *
 * Writer.  struct msc_writer appends into one buffer and writes it to a file
 * descriptor when it fills up (or after every record in write-through mode),
 * so writing a record never allocates.  Strings are escaped for any byte:
 * '"', '\\' and control characters get JSON escapes, valid UTF-8 passes
 * unchanged, and each byte of an invalid UTF-8 sequence becomes a lone low
 * surrogate \udc80..\udcff (the "surrogateescape" convention), which this
 * reader turns back into the same byte: any path round-trips exactly.  The
 * first write error is kept in w->error and later output is dropped; EPIPE
 * is reported like any other error and tools decide to stay quiet about it.
 * A writer may compress what it writes with zstd (msc_writer_compress):
 * a flush then ends a zstd block, so that what was flushed can be read
 * back even if the writer never finishes, and release ends the frame.
 *
 * Reader.  struct msc_reader reads a file descriptor in large chunks and
 * yields one record per line, whatever the line's length.  Each line is fully
 * validated as JSON (RFC 8259) and its top-level members are indexed, so
 * reading a field is a short scan with no further parsing; nested values
 * stay as raw spans that msc_jiter walks.  Strings are unescaped on demand
 * into a per-record scratch arena.  Nothing the reader hands out survives the
 * next call to msc_reader_next().  Blank lines are skipped.  Unknown types
 * and keys are the caller's business: the reader accepts any object with a
 * string "type" member.  Errors carry "FILE:LINE: what".  An input that
 * starts with the zstd magic number (28 b5 2f fd), file or pipe, is read
 * as the records it decompresses to; compressed data that is cut short or
 * corrupt ends the input with an error, after the records before it.
 *
 * Files.  ndjson.c writes the records; ndjson_read.c reads them (lines,
 * JSON validation, records, msc_jiter, msc_jval_member) and ndjson_jval.c
 * reads their fields' values; zst.c holds everything zstd (compressing the
 * writer's buffer, sniffing and decompressing the reader's input,
 * msc_zst_name); what they share is in ndjson_internal.h.
 */
#ifndef MSC_NDJSON_H
#define MSC_NDJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "msc_arena.h"
#include "msc_err.h"

#define MSC_FORMAT_NAME "memscope"
#define MSC_FORMAT_VERSION 2

/* ---------------------------------------------------------------- writer */

#define MSC_WRITER_MAX_DEPTH 32

/* zstd's level for -o FILE.zst: its default, about as fast as writing. */
#define MSC_ZSTD_LEVEL 3

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

struct msc_writer {
	int fd;
	char *buf;
	size_t len, cap;
	int error;			/* first errno from write(2), 0 if none */
	bool write_through;		/* write(2) at the end of every record */
	unsigned depth;			/* open containers in the current record */
	uint64_t comma;			/* bit d: container at depth d has a member */
	uint64_t arrays;		/* bit d: container at depth d is an array */
	uint64_t records;		/* records completed */
	uint64_t bytes;			/* bytes handed to write(2) successfully */
	struct ZSTD_CCtx_s *zc;		/* compressing, or NULL */
	char *zbuf;			/* compressed output */
	size_t zcap;
};

/* bufsize 0 means 64 KiB.  Returns 0 or -ENOMEM. */
int msc_writer_init(struct msc_writer *w, int fd, size_t bufsize);
/* Flushes and frees the buffer (the fd stays open); returns -errno of the
 * first write error, or 0. */
int msc_writer_release(struct msc_writer *w);
/* Writes what is buffered; compressed, all of it can be read back. */
int msc_writer_flush(struct msc_writer *w);
/* Compresses everything written from now on as one zstd frame (level
 * 1..19).  Returns 0, or -ENOMEM. */
int msc_writer_compress(struct msc_writer *w, int level);
/* Compresses (at MSC_ZSTD_LEVEL) when path ends in ".zst", the tools'
 * -o FILE.zst; NULL is standard output, never compressed.  0 or -ENOMEM. */
int msc_writer_compress_by_name(struct msc_writer *w, const char *path);
/* Does path end in ".zst"? */
bool msc_zst_name(const char *path);
/* A stdio stream that writes into w (text output, compressed as w is);
 * fclose() it before releasing w.  NULL with errno set on failure. */
FILE *msc_writer_fopen(struct msc_writer *w);

/* Starts a record: {"type":"<type>" */
void msc_w_begin(struct msc_writer *w, const char *type);
/* Closes every open container and the record, and ends the line. */
void msc_w_end(struct msc_writer *w);
/* Copies a complete line (without its newline) as one record. */
void msc_w_line(struct msc_writer *w, const char *line, size_t len);
/* Bytes as they are (a report going through the writer's compression). */
void msc_w_bytes(struct msc_writer *w, const void *p, size_t len);

/*
 * Members.  key is a plain C string (escaped here); NULL inside an array
 * adds an element instead of a member.
 */
void msc_w_str(struct msc_writer *w, const char *key, const char *s);
void msc_w_strn(struct msc_writer *w, const char *key, const char *s, size_t n);
void msc_w_i64(struct msc_writer *w, const char *key, int64_t v);
void (msc_w_u64)(struct msc_writer *w, const char *key, uint64_t v);
void msc_w_hex(struct msc_writer *w, const char *key, uint64_t v);
void msc_w_bool(struct msc_writer *w, const char *key, bool v);
void msc_w_null(struct msc_writer *w, const char *key);
/* Finite values only; NaN and infinities are written as null. */
void msc_w_double(struct msc_writer *w, const char *key, double v);
/* A value that is already JSON text (copied verbatim). */
void msc_w_raw(struct msc_writer *w, const char *key, const char *json, size_t n);
/* A member whose key is already escaped JSON text without quotes. */
void msc_w_raw_member(struct msc_writer *w, const char *key_json, size_t key_len,
		      const char *val_json, size_t val_len);
void msc_w_obj(struct msc_writer *w, const char *key);
void msc_w_obj_end(struct msc_writer *w);
void msc_w_arr(struct msc_writer *w, const char *key);
void msc_w_arr_end(struct msc_writer *w);

/*
 * Appends s (n bytes) to out as a quoted JSON string, escaped as described
 * above.  out must have room for 6 * n + 2 bytes; returns the bytes written.
 */
size_t msc_json_quote(char *out, const char *s, size_t n);

/*
 * msc_w_u64 where the compiler knows its key: a string literal (its length
 * is passed, and whether its bytes are plain is found once per call site:
 * then copied as they are) or NULL (an array's element).  The end of a
 * recording writes tens of thousands of numbers, nearly all of them so:
 * their keys are checked once per call site, not once per number.
 */
void msc_w_u64_lit_(struct msc_writer *w, const char *key, size_t kl, uint64_t v,
		    signed char *plain);
void msc_w_u64_elem_(struct msc_writer *w, uint64_t v);

static inline __attribute__((always_inline)) void msc_w_u64_at_(struct msc_writer *w,
								const char *key, uint64_t v,
								signed char *plain)
{
	if (__builtin_constant_p(!key) && !key)
		msc_w_u64_elem_(w, v);
	else if (__builtin_constant_p(__builtin_strlen(key)))
		msc_w_u64_lit_(w, key, __builtin_strlen(key), v, plain);
	else
		(msc_w_u64)(w, key, v);
}

#define msc_w_u64(w, key, v)                                                               \
	do {                                                                               \
		static signed char msc_plain_ = -1;                                        \
		msc_w_u64_at_((w), _Generic((key), void *: (const char *)0, default: (key)), \
			      (v), &msc_plain_);                                           \
	} while (0)

/* ---------------------------------------------------------------- reader */

enum msc_json_kind {
	MSC_J_NULL,
	MSC_J_FALSE,
	MSC_J_TRUE,
	MSC_J_INT,		/* integer that fits int64_t or uint64_t */
	MSC_J_NUM,		/* fraction, exponent, or integer out of range */
	MSC_J_STR,
	MSC_J_ARR,
	MSC_J_OBJ,
};

/* A JSON value as a span of the line, plus what the validator learned. */
struct msc_jval {
	const char *p;		/* first byte of the value */
	uint32_t len;
	uint8_t kind;		/* enum msc_json_kind */
	bool escaped;		/* MSC_J_STR: contains backslash escapes */
	bool negative;		/* MSC_J_INT: value < 0 (use .i), else .u */
	union {
		int64_t i;
		uint64_t u;
	};
};

struct msc_field {
	const char *key;	/* raw key bytes, without quotes */
	uint32_t key_len;
	bool key_escaped;
	struct msc_jval val;
};

struct msc_rec {
	const char *line;	/* the line, without newline, not NUL-terminated */
	size_t len;
	unsigned long lineno;	/* 1-based line number in the input */
	const char *source;	/* input name, for messages */
	const char *type;	/* NUL-terminated, in the scratch arena */
	unsigned nfields;
	struct msc_field *fields;
	struct msc_arena *scratch;	/* per-record scratch, reset by next() */
};

struct msc_reader {
	const char *name;	/* for messages: the path, or "-" for stdin */
	int fd;
	bool own_fd;
	const char *mem;	/* in-memory input (tests, fuzzing), or NULL */
	size_t mem_len;
	char *buf;
	size_t cap, start, end;
	bool eof;
	unsigned long lineno;
	uint64_t records;
	struct msc_field *fields;
	unsigned fields_cap;
	struct msc_arena scratch;
	/* zstd input: the compressed bytes read and not yet decompressed */
	bool sniffed;			/* the first bytes were looked at */
	struct ZSTD_DCtx_s *zd;		/* decompressing, or NULL */
	char *zin;
	size_t zin_start, zin_end, zin_cap;
	size_t zhint;			/* 0: at the end of a frame */
	char zmsg[160];			/* what went wrong with the compressed data */
};

/* path NULL or "-" reads standard input.  Returns 0 or -errno (message in err). */
int msc_reader_open(struct msc_reader *r, const char *path, struct msc_err *err);
int msc_reader_init_fd(struct msc_reader *r, int fd, const char *name);
/* Reads len bytes at mem (not copied: must outlive the reader). */
int msc_reader_init_mem(struct msc_reader *r, const char *mem, size_t len, const char *name);
void msc_reader_release(struct msc_reader *r);
/*
 * Points a reader that was initialized (and perhaps used) at new in-memory
 * input, keeping its field table and scratch arena: a loop that parses
 * inputs of the same kind again and again (ms-top, once a second) stops
 * allocating after its first round.  The previous input is forgotten.
 */
void msc_reader_reuse_mem(struct msc_reader *r, const char *mem, size_t len, const char *name);

/*
 * Reads the next record.  Returns 1 with rec filled, 0 at end of input, or a
 * negative errno with err set: -EINVAL for a line that is not a JSON object
 * with a string "type" (err names the line and column), -EPIPE for a last
 * line cut short (no newline and not valid JSON), -EIO/-errno for read errors,
 * -EPIPE for compressed data cut short and -EBADMSG for corrupt compressed
 * data (both after every whole record before them; the input ends there).
 * After an error the reader may be called again: it resumes at the next line.
 */
int msc_reader_next(struct msc_reader *r, struct msc_rec *rec, struct msc_err *err);

/* Validates one JSON text (any value, whitespace around allowed). */
int msc_json_validate(const char *p, size_t len, struct msc_err *err);

/* --------------------------------------------------------- field access */

const struct msc_field *msc_rec_field(const struct msc_rec *rec, const char *key);
bool msc_rec_type_is(const struct msc_rec *rec, const char *type);

/*
 * Typed getters: 0 on success, -ENOENT when the key is absent (out untouched),
 * -EINVAL when the value has another type, -ERANGE when it does not fit.
 * msc_rec_hex reads "0x..." strings (and plain non-negative integers).
 */
int msc_rec_i64(const struct msc_rec *rec, const char *key, int64_t *out);
int msc_rec_u64(const struct msc_rec *rec, const char *key, uint64_t *out);
int msc_rec_hex(const struct msc_rec *rec, const char *key, uint64_t *out);
int msc_rec_bool(const struct msc_rec *rec, const char *key, bool *out);
/* The record's "pid" when it is one (1 .. 2^30 - 1), else fallback. */
int msc_rec_pid(const struct msc_rec *rec, int fallback);
/* Unescaped, NUL-terminated string in the record's scratch arena (valid until
 * the next record), or NULL with errno ENOENT / EINVAL / ENOMEM. */
const char *msc_rec_str(const struct msc_rec *rec, const char *key, size_t *len);

/* The same conversions on a value found some other way. */
int msc_jval_i64(const struct msc_jval *v, int64_t *out);
int msc_jval_u64(const struct msc_jval *v, uint64_t *out);
int msc_jval_hex(const struct msc_jval *v, uint64_t *out);
/* Unescapes a MSC_J_STR value into the arena (NUL-terminated). */
const char *msc_jval_str(const struct msc_jval *v, struct msc_arena *a, size_t *len);

/*
 * Walks the elements of an array or the members of an object that the reader
 * has validated.  Usage:
 *	struct msc_jiter it; struct msc_jval v;
 *	msc_jiter_init(&it, &field->val);
 *	while (msc_jiter_next(&it, NULL, &v) > 0) ...
 * For objects, key (if not NULL) receives the member's raw key.
 * Returns 1 per item, 0 at the end, -EINVAL if the value is not a container.
 */
struct msc_jiter {
	const char *p, *end;
	bool object;
};
int msc_jiter_init(struct msc_jiter *it, const struct msc_jval *container);
int msc_jiter_next(struct msc_jiter *it, struct msc_field *key, struct msc_jval *val);

/* Finds a member of an object value by key; 1 found, 0 absent, <0 not an object. */
int msc_jval_member(const struct msc_jval *obj, const char *key, struct msc_jval *out);
/* A string member, unescaped into the arena; NULL when absent or not a string. */
const char *msc_jval_member_str(const struct msc_jval *obj, const char *key, struct msc_arena *a);

/* Formats "SOURCE:LINE: " + message into err; returns code. */
int msc_rec_err(struct msc_err *err, const struct msc_rec *rec, int code,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
