/* SPDX-License-Identifier: MIT */
/*
 * ndjson_internal: what the two files of the NDJSON module share (private
 * to libmsc: ndjson.c and zst.c include it, tools never do; they see
 * msc_ndjson.h only).
 *
 * Who owns what:
 *	ndjson.c	the writer's buffer and the JSON it writes, write(2)
 *			and read(2) with their waits, the reader's buffer,
 *			lines, JSON validation, records and field access
 *	zst.c		zstd: compressing the writer's buffer, the zstd magic
 *			number at the start of the reader's input and
 *			decompressing what follows it, the ".zst" name check
 *
 * Everything called per record or per member stays static in ndjson.c:
 * what crosses between the files is called once per buffer (compress it,
 * refill it), once per stream (set up, release), or once per write(2) and
 * read(2).  ndjson.c does not include zstd.h.
 */
#ifndef MSC_NDJSON_INTERNAL_H
#define MSC_NDJSON_INTERNAL_H

#include <stddef.h>
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

/* ---------------------------------------------------- ndjson.c, for zst.c */

/* Writes the buffer out (through zst_compress() when w->zc) and empties it;
 * after an error it only empties it.  Returns -w->error. */
int ndjson_flush(struct msc_writer *w, enum zst_mode mode);
/* write(2)s all of p, waiting on a non-blocking output; the first error
 * goes to w->error.  Returns -w->error. */
int ndjson_write_all(struct msc_writer *w, const char *p, size_t len);
/* read(2) that waits on a non-blocking input and retries EINTR: bytes
 * read, 0 at the end, or -errno. */
ssize_t ndjson_read_some(int fd, char *p, size_t n);

/* ---------------------------------------------------- zst.c, for ndjson.c */

/* Compresses w->buf (w->len bytes) as far as mode says and writes what zstd
 * hands back; w->len is left to the caller.  Errors go to w->error (EIO for
 * zstd's own); returns -w->error. */
int zst_compress(struct msc_writer *w, enum zst_mode mode);
/* Frees the compressor and its output buffer (none is fine). */
void zst_writer_release(struct msc_writer *w);

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

#endif
