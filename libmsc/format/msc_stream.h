/* SPDX-License-Identifier: MIT */
/*
 * msc_stream: the records that frame every memscope stream.
 *
 * A stream opens with a "header" record (format, version, producing tool,
 * mode, host facts, wall-clock start) and closes with an "end" record; a
 * stream without "end" was cut short.  This module writes the common part of
 * the header and reads it back; tools add their own members (pid, argv,
 * options) before closing the record with msc_w_end().
 */
#ifndef MSC_STREAM_H
#define MSC_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "msc_ndjson.h"

/*
 * Writes {"type":"header","format":"memscope","version":1,"tool":TOOL,
 * "tool_version":..,"mode":MODE,"host":..,"kernel":..,"page_size":..,
 * "start":"ISO-8601 UTC","start_epoch":NS,"uptime":NS and leaves the record
 * open for the caller's members.  start_epoch is the wall clock in ns since
 * the Unix epoch; uptime is CLOCK_BOOTTIME, the clock of process start times.
 */
void msc_stream_header_begin(struct msc_writer *w, const char *tool, const char *mode);

/* What a reader learns from a header. */
struct msc_header_info {
	char tool[32];
	char mode[16];
	int version;
	int pid;			/* 0 when absent */
	uint64_t start_epoch;		/* ns since the epoch, 0 when absent */
	uint64_t uptime;		/* ns since boot, 0 when absent */
};

/*
 * Checks that rec is a memscope header and extracts what it names.
 * Returns 0, or -EINVAL with err naming the record ("FILE:LINE: ...").
 */
int msc_stream_parse_header(const struct msc_rec *rec, struct msc_header_info *hi,
			    struct msc_err *err);

#endif
