/* SPDX-License-Identifier: MIT */
/*
 * ndjson_internal: what the files of the NDJSON module share (private to
 * libmsc: ndjson.c, ndjson_read.c, ndjson_jval.c and zst.c include it,
 * tools never do; they see msc_ndjson.h only).
 *
 * Who owns what:
 *	ndjson.c	the writer's buffer and the JSON it writes, write(2)
 *			with its waits
 *	ndjson_read.c	read(2) with its waits, the reader's buffer, lines,
 *			JSON validation, records, msc_jiter and
 *			msc_jval_member (the walks that parse as they go)
 *	ndjson_jval.c	field access: msc_rec_field, and what values hold
 *			(integers, hex, booleans, strings unescaped)
 *	zst.c		zstd: compressing the writer's buffer, the zstd magic
 *			number at the start of the reader's input and
 *			decompressing what follows it, the ".zst" name check
 *
 * Everything called per record or per member is static in the file that
 * calls it, or one of the inlines at the end: the JSON parser lives with
 * the reader and the walks, its only callers.  What crosses between the
 * files is called once per buffer (compress it, refill it), once per
 * stream (set up, release), once per write(2) and read(2), or is public
 * API called out of line as before (msc_reader_next takes its record's
 * type with msc_jval_str).  Only zst.c includes zstd.h.
 */
#ifndef MSC_NDJSON_INTERNAL_H
#define MSC_NDJSON_INTERNAL_H

#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include "msc_ndjson.h"

/*
 * How far a flush goes when compressing (zst.c maps these to zstd's
 * ZSTD_EndDirective): ZST_CONTINUE hands the buffer to zstd (which writes
 * when it has a block), ZST_FLUSH makes everything so far readable,
 * ZST_END ends the frame.  Uncompressed, every mode just writes.
 */
enum zst_mode {
	ZST_CONTINUE,
	ZST_FLUSH,
	ZST_END,
};

/* ------------------------------------------------------ ndjson.c, for zst.c */

/* Writes the buffer out (through zst_compress() when w->zc) and empties it;
 * after an error it only empties it.  Returns -w->error. */
int ndjson_flush(struct msc_writer *w, enum zst_mode mode);
/* write(2)s all of p, waiting on a non-blocking output; the first error
 * goes to w->error.  Returns -w->error. */
int ndjson_write_all(struct msc_writer *w, const char *p, size_t len);

/* ------------------------------------------------- ndjson_read.c, for zst.c */

/* read(2) that waits on a non-blocking input and retries EINTR: bytes
 * read, 0 at the end, or -errno. */
ssize_t ndjson_read_some(int fd, char *p, size_t n);

/* ------------------------------------------------------ zst.c, for ndjson.c */

/* Compresses w->buf (w->len bytes) as far as mode says and writes what zstd
 * hands back; w->len is left to the caller.  Errors go to w->error (EIO for
 * zstd's own); returns -w->error. */
int zst_compress(struct msc_writer *w, enum zst_mode mode);
/* Frees the compressor and its output buffer (none is fine). */
void zst_writer_release(struct msc_writer *w);

/* ------------------------------------------------- zst.c, for ndjson_read.c */

/*
 * The reader's first fill: reads at least 4 bytes (or the whole input, if
 * shorter) into r->buf and compares them with the zstd magic number.  Plain,
 * returns the bytes in the buffer; compressed, they become the
 * decompressor's first input and it returns what zst_fill() returns.
 */
ssize_t zst_sniff(struct msc_reader *r);
/* Decompresses more input into r->buf: bytes added, 0 at the end of the
 * input, <0 error (r->zmsg says what for the compressed data, and the input
 * ends there). */
ssize_t zst_fill(struct msc_reader *r);
/* Frees the decompressor and its input buffer (none is fine). */
void zst_reader_release(struct msc_reader *r);

/* --------------------------------- inlines, ndjson_read.c and ndjson_jval.c */

/* A hex digit's value; -1 for any other character. */
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

/* Whether a field's key is key (klen bytes), unescaped. */
static inline bool key_eq(const struct msc_field *f, const char *key, size_t klen)
{
	return f->key_len == klen && memcmp(f->key, key, klen) == 0 && !f->key_escaped;
}

#endif
