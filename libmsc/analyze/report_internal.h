/* SPDX-License-Identifier: MIT */
/*
 * report_internal: what the files of the report loader share (private to
 * libmsc/analyze/; everyone else sees msc_report.h).
 *
 *	report.c		msc_report_load's loop over the records; sites
 *				and leaks, from their records or made from the
 *				events of an --events stream (events and pools
 *				applied to an aggregation, heap over time); a
 *				new image's reset; msc_report_release
 *	report_stacks.c		stack records, their frames resolved at the
 *				end, what the model answers about a stack
 *	report_records.c	the records that describe a process and its
 *				run: header, end, error, sample, delta,
 *				process, mapping; the images they describe
 *
 * What runs once per event or per site record stays in report.c (static,
 * or inline below); the loop calls the other files once per record of
 * their types, or once per stream.
 */
#ifndef MSC_REPORT_INTERNAL_H
#define MSC_REPORT_INTERNAL_H

#include <errno.h>
#include <stdint.h>

#include "msc_err.h"
#include "msc_ndjson.h"
#include "msc_report.h"

/* A string field, copied into the report's arena; NULL without one. */
static inline const char *str(struct msc_report *r, const struct msc_rec *rec, const char *key)
{
	const char *s = msc_rec_str(rec, key, NULL);

	return s ? msc_arena_strdup(&r->arena, s) : NULL;
}

/* An integer field; 0 without one. */
static inline uint64_t u64(const struct msc_rec *rec, const char *key)
{
	uint64_t v = 0;

	msc_rec_u64(rec, key, &v);
	return v;
}

/* Integers that must be integers: an error names the record. */
static inline int need_u64(const struct msc_rec *rec, const char *key, uint64_t *out,
			   struct msc_err *err)
{
	int ret = msc_rec_u64(rec, key, out);

	if (ret == -ENOENT) {
		*out = 0;
		return 0;
	}
	if (ret)
		return msc_rec_err(err, rec, -EINVAL, "\"%s\" must be a non-negative integer", key);
	return 0;
}

/* The image a record of process pid belongs to: its last one, or NULL. */
static inline struct msc_rimage *image_of(struct msc_report *r, int pid)
{
	uint64_t *v = msc_u64map_get(&r->image_of, (uint64_t)pid + 1);

	return v ? &r->images[*v - 1] : NULL;
}

/* The same, as an index into images (-1: none). */
static inline int image_index(struct msc_report *r, int pid)
{
	struct msc_rimage *im = image_of(r, pid);

	return im ? (int)(im - r->images) : -1;
}

/* ------------------------------------------------- report.c, for the others */

/* A record's stack: 0 (none) or one a stack record defined, then marked
 * used; else an error naming the record. */
int report_check_stack(struct msc_report *r, const struct msc_rec *rec, uint64_t stack,
		       struct msc_err *err);
/* The main process exec'ed: what the old image's stream held goes (see
 * report.c).  0 or -ENOMEM. */
int report_new_image(struct msc_report *r);

/* -------------------------------------------- report_stacks.c, for report.c */

/* A stack record: its stack, in r->stacks (the frames are read at the
 * end, if a record names it).  0 or a negative errno, err set. */
int report_load_stack(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err);
/* Reads the frames of the stacks records named, once the stream is read.
 * 0 or a negative errno, err set. */
int report_resolve_stacks(struct msc_report *r, struct msc_err *err);

/* ------------------------------------------- report_records.c, for report.c */

/* A record of each type read into the model: 0, -ENOMEM, or (those that
 * take err) another negative errno for a bad record, with err set. */
int report_load_header(struct msc_report *r, const struct msc_rec *rec);
int report_load_error(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err);
int report_load_end(struct msc_report *r, const struct msc_rec *rec);
int report_load_sample(struct msc_report *r, const struct msc_rec *rec);
int report_load_mark(struct msc_report *r, const struct msc_rec *rec);
/* Is an event of an --events stream of a block allocated in the since ..
 * until range (always, without one)? */
bool report_event_in_range(const struct msc_report *r, const struct msc_rec *rec, enum msc_rtype t, uint64_t ts);
/* After loading: the leaks out of the since .. until range dropped (name:
 * the input's, for messages).  0, or -ESRCH with err set: a mark not in
 * the stream, or the since mark after the until. */
int report_apply_range(struct msc_report *r, const char *name, struct msc_err *err);
int report_load_timeline(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err);
int report_load_series(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err);
int report_load_delta(struct msc_report *r, const struct msc_rec *rec, struct msc_err *err);
int report_load_process(struct msc_report *r, const struct msc_rec *rec);
int report_load_mapping(struct msc_report *r, const struct msc_rec *rec);

#endif
