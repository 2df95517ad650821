/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: ms-diff's loading and matching.  An input is two snapshots
 * (or recordings) separated by a line "#--#"; without one, the input is
 * compared with itself.  Each is loaded as ms-diff loads it, the two are
 * matched with the default metrics and with every metric, and the diff is
 * written as a stream and printed as a report, as ms-diff does.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "msc_diff.h"
#include "msc_report.h"
#include "msc_ndjson.h"

#define SEP "\n#--#\n"

static void write_diff(void *ctx, struct msc_writer *w)
{
	msc_diff_write_stream(ctx, w);
}

static void compare(const struct msc_snapshot *a, const struct msc_snapshot *b, bool all)
{
	struct msc_diff_opts o = { 0 };
	struct msc_diff d;
	const char **metrics = NULL;
	unsigned n = 0;

	if (all) {
		metrics = msc_diff_all_metrics(a, b, &n);
		if (!metrics)
			return;
		o.metrics = metrics;
		o.nmetrics = n;
		o.all = true;
	}
	if (msc_diff_compute(&d, a, b, &o) == 0) {
		struct msc_writer w;

		if (msc_writer_init(&w, fuzz_null_fd(), 0) == 0) {
			msc_diff_write_stream(&d, &w);
			msc_writer_release(&w);
		}
		{
			struct msc_report_opts ro = { all ? MSC_REPORT_JSON : MSC_REPORT_TEXT,
						      MSC_COST_LEAKED, 10, MSC_SECTION_ALL, NULL };

			msc_report_print_records(write_diff, &d, "ms-diff", &ro, fuzz_null());
		}
		msc_diff_grew_past(&d, 1024, false);
		msc_diff_grew_past(&d, 10000, true);
		msc_diff_release(&d);
	}
	free(metrics);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, SEP, strlen(SEP));
	size_t la = sep ? (size_t)(sep - data) + 1 : size;
	const uint8_t *b = sep ? sep + strlen(SEP) : data;
	size_t lb = sep ? size - (size_t)(b - data) : size;
	struct msc_snapshot sa, sb;
	struct msc_err err = { 0 };
	const char *pa = fuzz_file(0, data, la), *pb = fuzz_file(1, b, lb);

	if (!pa || !pb)
		return 0;
	memset(&sa, 0, sizeof(sa));
	memset(&sb, 0, sizeof(sb));
	if (msc_snapshot_load(&sa, pa, &err) == 0 && msc_snapshot_load(&sb, pb, &err) == 0) {
		compare(&sa, &sb, false);
		compare(&sa, &sb, true);
	}
	msc_snapshot_release(&sa);
	msc_snapshot_release(&sb);
	return 0;
}
