/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the record reader and everything that reads records the way
 * the tools do.  One input is a stream (NDJSON, or zstd frames of it) read
 * as ms-report reads it, rendered in every format, then filtered as
 * ms-filter filters it (with a size range, an ignore pattern, a frame
 * pattern and the leak gates' counts).
 */
#include <string.h>

#include "fuzz.h"
#include "msc_filter.h"
#include "msc_ndjson.h"
#include "msc_report.h"

static void report(const char *path)
{
	static const enum msc_report_format formats[] = {
		MSC_REPORT_TEXT, MSC_REPORT_MD, MSC_REPORT_JSON,
		MSC_REPORT_COLLAPSED, MSC_REPORT_SVG, MSC_REPORT_HTML, MSC_REPORT_PPROF,
	};
	struct msc_report_opts o = { MSC_REPORT_TEXT, MSC_COST_AUTO, 10, MSC_SECTION_ALL, NULL, false };
	struct msc_report r;
	struct msc_reader rd;
	struct msc_err err = { 0 };
	size_t i;
	int ret;

	if (msc_reader_open(&rd, path, &err))
		return;
	memset(&r, 0, sizeof(r));
	r.want_heap_series = true;
	ret = msc_report_load(&r, &rd, &err);
	if (!ret || r.tool) {
		if (ret)
			r.complete = false;
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			o.format = formats[i];
			o.cost = (enum msc_report_cost)(i % 5);
			msc_report_render(&r, &o, fuzz_null());
		}
	}
	msc_report_release(&r);
	msc_reader_release(&rd);
}

static void filter(const char *path)
{
	static const char *const ignore[] = { "libc*" };
	static const char *const frames[] = { "*alloc*" };
	struct msc_filter_opts o = { .min_age = 1000000 };
	struct msc_filter_stats st = { 0 };
	struct msc_reader rd;
	struct msc_writer w;
	struct msc_err err = { 0 };

	o.has_min = true;
	o.min_size = 16;
	o.ignore = ignore;
	o.nignore = 1;
	o.ignore_frame = frames;
	o.nignore_frame = 1;
	o.transient = true;
	if (msc_reader_open(&rd, path, &err))
		return;
	if (msc_writer_init(&w, fuzz_null_fd(), 0) == 0) {
		msc_filter_run(&o, &rd, &w, &st, &err);
		msc_writer_release(&w);
	}
	msc_reader_release(&rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(0, data, size);

	if (!path)
		return 0;
	report(path);
	filter(path);
	return 0;
}
