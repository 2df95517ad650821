/* SPDX-License-Identifier: MIT */
/* The NDJSON module's zstd: compressed output, compressed input.  See ndjson_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "msc_ndjson.h"
#include "ndjson_internal.h"

/* enum zst_mode is zstd's ZSTD_EndDirective under names ndjson.c can see. */
_Static_assert((int)ZST_CONTINUE == (int)ZSTD_e_continue, "ZST_CONTINUE");
_Static_assert((int)ZST_FLUSH == (int)ZSTD_e_flush, "ZST_FLUSH");
_Static_assert((int)ZST_END == (int)ZSTD_e_end, "ZST_END");

/* ================================================================ writer */

int zst_compress(struct msc_writer *w, enum zst_mode mode)
{
	ZSTD_inBuffer in = { w->buf, w->len, 0 };

	for (;;) {
		ZSTD_outBuffer out = { w->zbuf, w->zcap, 0 };
		size_t left = ZSTD_compressStream2(w->zc, &out, &in, (ZSTD_EndDirective)mode);

		if (ZSTD_isError(left)) {
			w->error = EIO;
			break;
		}
		if (out.pos && ndjson_write_all(w, w->zbuf, out.pos))
			break;
		if (mode == ZST_CONTINUE ? in.pos == in.size : left == 0)
			break;
	}
	return -w->error;
}

void zst_writer_release(struct msc_writer *w)
{
	ZSTD_freeCCtx(w->zc);
	w->zc = NULL;
	free(w->zbuf);
	w->zbuf = NULL;
}

int msc_writer_compress(struct msc_writer *w, int level)
{
	if (w->zc)
		return 0;
	/* What was written so far stays as it was. */
	ndjson_flush(w, ZST_CONTINUE);
	w->zcap = ZSTD_CStreamOutSize();
	w->zbuf = malloc(w->zcap);
	w->zc = ZSTD_createCCtx();
	if (!w->zbuf || !w->zc) {
		ZSTD_freeCCtx(w->zc);
		w->zc = NULL;
		free(w->zbuf);
		w->zbuf = NULL;
		return -ENOMEM;
	}
	/* The checksum tells corrupt data from data. */
	ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w->zc, ZSTD_c_checksumFlag, 1);
	return 0;
}

bool msc_zst_name(const char *path)
{
	size_t n = path ? strlen(path) : 0;

	return n > 4 && strcmp(path + n - 4, ".zst") == 0;
}

int msc_writer_compress_by_name(struct msc_writer *w, const char *path)
{
	return msc_zst_name(path) ? msc_writer_compress(w, MSC_ZSTD_LEVEL) : 0;
}

/* ================================================================ reader */

void zst_reader_release(struct msc_reader *r)
{
	free(r->zin);
	ZSTD_freeDCtx(r->zd);
	r->zin = NULL;
	r->zd = NULL;
}

/* The compressed data went wrong: say what, and end the input there (what
 * is left of a line cut in the middle goes too). */
static ssize_t zstd_failed(struct msc_reader *r, int code, const char *what)
{
	if (r->lineno)
		snprintf(r->zmsg, sizeof(r->zmsg), "%s (after line %lu)", what, r->lineno);
	else
		snprintf(r->zmsg, sizeof(r->zmsg), "%s (before any record)", what);
	r->start = r->end;
	r->eof = true;
	return code;
}

ssize_t zst_fill(struct msc_reader *r)
{
	ssize_t n;

	for (;;) {
		if (r->zin_start < r->zin_end || r->zhint) {
			ZSTD_inBuffer in = { r->zin + r->zin_start, r->zin_end - r->zin_start, 0 };
			ZSTD_outBuffer out = { r->buf + r->end, r->cap - r->end, 0 };
			size_t hint = ZSTD_decompressStream(r->zd, &out, &in);

			if (ZSTD_isError(hint)) {
				char what[120];

				snprintf(what, sizeof(what), "corrupt zstd data: %s", ZSTD_getErrorName(hint));
				return zstd_failed(r, -EBADMSG, what);
			}
			r->zin_start += in.pos;
			r->end += out.pos;
			r->zhint = hint;
			if (out.pos)
				return (ssize_t)out.pos;
			if (r->zin_start < r->zin_end)
				continue;	/* a frame header, a checksum */
		}
		r->zin_start = r->zin_end = 0;
		n = ndjson_read_some(r->fd, r->zin, r->zin_cap);
		if (n < 0)
			return n;
		if (n == 0) {
			if (r->zhint)
				return zstd_failed(r, -EPIPE, "compressed data cut short: the zstd "
						   "stream ends inside a frame");
			return 0;
		}
		r->zin_end = (size_t)n;
	}
}

ssize_t zst_sniff(struct msc_reader *r)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	size_t have = r->end - r->start;
	ssize_t n;

	r->sniffed = true;
	while (have < sizeof(magic)) {
		n = ndjson_read_some(r->fd, r->buf + r->end, r->cap - r->end);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		r->end += (size_t)n;
		have += (size_t)n;
	}
	if (have < sizeof(magic) || memcmp(r->buf + r->start, magic, sizeof(magic)) != 0)
		return (ssize_t)have;
	r->zin_cap = ZSTD_DStreamInSize();
	if (r->zin_cap < have)
		r->zin_cap = have;
	r->zin = malloc(r->zin_cap);
	r->zd = ZSTD_createDCtx();
	if (!r->zin || !r->zd)
		return -ENOMEM;
	memcpy(r->zin, r->buf + r->start, have);
	r->zin_start = 0;
	r->zin_end = have;
	r->zhint = 1;
	r->end = r->start;
	return zst_fill(r);
}
