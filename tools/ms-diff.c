/* SPDX-License-Identifier: MIT */
/* ms-diff: what grew between two snapshots or recordings. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_cli.h"
#include "msc_diff.h"
#include "msc_report.h"
#include "msc_format.h"
#include "msc_ndjson.h"
#include "msc_stream.h"

static const char usage[] =
	"Usage: ms-diff [options] BEFORE AFTER\n"
	"Compare two memscope snapshots (ms-snap) or two recordings (ms-record)\n"
	"and write what changed, largest growth first, as \"delta\" records (or the\n"
	"report 'ms-diff | ms-report' prints, with --text, --md or --json).\n";

static const char tail[] =
	"Processes match when their pid and start time agree (a reused pid is a\n"
	"new process); mappings match by process and name; the sites and leaks\n"
	"of recordings by call path (function names), the programs by name (two\n"
	"recordings of one program each are paired whatever the names).\n"
	"Exit status: 0 ok, 1 growth above --fail-on-growth, 2 trouble.\n";

/* --text, --md and --json in enum msc_report_format's order: OPT_TEXT + format. */
enum { OPT_METRIC = 256, OPT_MIN_CHANGE, OPT_UNCHANGED, OPT_FAIL, OPT_TEXT, OPT_MD, OPT_JSON, OPT_PAIR,
       OPT_NO_PAIR, OPT_SINCE, OPT_UNTIL };
_Static_assert(OPT_JSON - OPT_TEXT == MSC_REPORT_JSON, "a report option per format, in order");

static const struct msc_cli_opt opts[] = {
	{ OPT_METRIC, "metric", required_argument, "LIST",
	  "figures to compare, comma-separated (default\n"
	  "rss,pss,swap for snapshots, live_bytes\n"
	  "first for those of a recorded process,\n"
	  "live_bytes,leaked_bytes,peak,at_peak,allocs\n"
	  "for recordings; \"all\" for every figure);\n"
	  "the first one is used for the totals" },
	{ OPT_PAIR, "pair", required_argument, "BEFORE=AFTER",
	  "compare BEFORE's process with AFTER's whatever\n"
	  "their names: programs of recordings, pids or\n"
	  "process names of snapshots (repeatable)" },
	{ OPT_NO_PAIR, "no-pair", no_argument, NULL,
	  "do not pair two single-program recordings\n"
	  "of different names" },
	{ OPT_MIN_CHANGE, "min-change", required_argument, "SIZE",
	  "hide changes smaller than SIZE (K/M/G suffixes)" },
	{ OPT_UNCHANGED, "unchanged", no_argument, NULL, "show unchanged figures too" },
	{ OPT_SINCE, "since", required_argument, "MARK",
	  "recordings: compare the leaks of blocks allocated\n"
	  "after the mark MARK (each input's own)" },
	{ OPT_UNTIL, "until", required_argument, "MARK", "... and before the mark MARK" },
	{ OPT_FAIL, "fail-on-growth", required_argument, "SIZE|PCT",
	  "exit 1 when the total growth is more than\n"
	  "SIZE bytes or PCT percent (\"10%\")" },
	{ OPT_TEXT, "text", no_argument, NULL,
	  "print a report for a terminal (the one\n"
	  "'ms-diff | ms-report' prints)" },
	{ OPT_MD, "md", no_argument, NULL, "print it as GitHub-flavoured Markdown" },
	{ OPT_JSON, "json", no_argument, NULL, "print it as one JSON document" },
	{ 'n', "top", required_argument, "N",
	  "rows per table with --text or --md\n"
	  "(default 10)" },
	MSC_CLI_OPT_OUTPUT,
	{ 'q', "quiet", no_argument, NULL, "no warnings" },
	{ 0 },
};

/* --all was --unchanged until 0.1: it is ms-snap's every process. */
static const struct msc_cli_alias aliases[] = {
	{ "--all", "--unchanged", no_argument, OPT_UNCHANGED },
	{ NULL, NULL, 0, 0 },
};

static const struct msc_cli cli = {
	.name = "ms-diff", .usage = usage, .opts = opts, .column = 29, .tail = tail, .aliases = aliases,
};

static void write_diff(void *ctx, struct msc_writer *w)
{
	msc_diff_write_stream(ctx, w);
}

/* The report `ms-diff | ms-report` prints, in that format. */
static int diff_print(struct msc_diff *d, FILE *out, enum msc_report_format format, unsigned top)
{
	struct msc_report_opts o = { format, MSC_COST_LEAKED, top, MSC_SECTION_ALL, NULL };

	return msc_report_print_records(write_diff, d, "ms-diff", &o, out);
}

int main(int argc, char **argv)
{
	struct msc_snapshot a, b;
	const char *since = NULL, *until = NULL;
	struct msc_diff d;
	struct msc_diff_opts o = { 0 };
	struct msc_err err;
	const char *output = NULL, *metric_arg = NULL;
	const char **metrics = NULL;
	char *metric_copy = NULL;
	bool report = false, fail = false, fail_pct = false, quiet = false;
	enum msc_report_format format = MSC_REPORT_TEXT;
	uint64_t fail_at = 0;
	const char *pair[MSC_DIFF_MAX_PAIRS];
	unsigned top = 10, npair = 0, k;
	int c, status = 0, fd = 1;

	msc_cli_start("ms-diff");
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case OPT_METRIC:
			metric_arg = optarg;
			break;
		case OPT_MIN_CHANGE:
			if (msc_parse_size(optarg, &o.min_change))
				msc_usage_error("invalid size '%s'", optarg);
			break;
		case OPT_UNCHANGED:
			o.all = true;
			break;
		case OPT_PAIR:
			if (npair == MSC_DIFF_MAX_PAIRS)
				msc_usage_error("at most %d --pair", MSC_DIFF_MAX_PAIRS);
			pair[npair++] = optarg;
			break;
		case OPT_NO_PAIR:
			o.no_auto_pair = true;
			break;
		case OPT_FAIL:
			if (msc_parse_size_or_pct(optarg, &fail_at, &fail_pct))
				msc_usage_error("invalid size or percentage '%s'", optarg);
			fail = true;
			break;
		case OPT_TEXT:
		case OPT_MD:
		case OPT_JSON:
			report = true;
			format = (enum msc_report_format)(c - OPT_TEXT);
			break;
		case 'n':
			top = msc_cli_count(optarg, 1000000);
			break;
		case OPT_SINCE:
			since = optarg;
			break;
		case OPT_UNTIL:
			until = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		}
	}
	if (argc - optind < 2)
		msc_usage_error("two inputs needed: BEFORE AFTER");
	if (argc - optind > 2)
		msc_usage_error("unexpected argument '%s'", argv[optind + 2]);
	if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
		msc_usage_error("only one input can be standard input");

	if (msc_snapshot_load_range(&a, argv[optind], since, until, &err))
		msc_die("%s", err.msg);
	if (msc_snapshot_load_range(&b, argv[optind + 1], since, until, &err))
		msc_die("%s", err.msg);
	if (a.recording != b.recording)
		msc_die("cannot compare %s (%s) with %s (%s): both must be snapshots or both recordings",
			a.source, a.header.tool, b.source, b.header.tool);
	if (!a.complete)
		msc_warn("%s: no end record: the stream was cut short", a.source);
	if (!b.complete)
		msc_warn("%s: no end record: the stream was cut short", b.source);

	if (metric_arg && strcmp(metric_arg, "all") == 0) {
		metrics = msc_diff_all_metrics(&a, &b, &o.nmetrics);
		if (!metrics)
			msc_die("out of memory");
		o.metrics = metrics;
	} else if (metric_arg) {
		metric_copy = msc_cli_split(metric_arg, &metrics, &o.nmetrics);
		if (!o.nmetrics)
			msc_usage_error("--metric needs at least one name");
		o.metrics = metrics;
	}

	for (k = 0; k < npair; k++)
		if (msc_diff_pair_parse(&o, &a, &b, pair[k], &err))
			msc_die("%s", err.msg);
	if (msc_diff_compute(&d, &a, &b, &o))
		msc_die("out of memory");

	if (output) {
		fd = msc_open_output_err(output, &err);
		if (fd < 0)
			msc_die("%s", err.msg);
	}
	if (report && !msc_zst_name(output)) {
		FILE *out = fd == 1 ? stdout : fdopen(fd, "w");
		int ret;

		if (!out)
			msc_die("cannot open '%s': %s", output, strerror(errno));
		ret = diff_print(&d, out, format, top);
		if (out != stdout && fclose(out) && !ret)
			ret = -errno;
		fd = 1;
		if (ret && msc_cli_check_write(-ret, output))
			status = MSC_EXIT_TROUBLE;
		/* Reported (or quietly EPIPE) here: not once more at exit. */
		if (out == stdout)
			clearerr(stdout);
	} else {
		struct msc_writer w;

		if (msc_writer_init(&w, fd, 0) || msc_writer_compress_by_name(&w, output))
			msc_die("out of memory");
		if (report) {
			/* The report, compressed. */
			FILE *out = msc_writer_fopen(&w);

			if (!out)
				msc_die("out of memory");
			diff_print(&d, out, format, top);
			fclose(out);
		} else {
			msc_diff_write_stream(&d, &w);
		}
		status = msc_cli_finish_output(&w, fd, output);
	}

	/* An input cut short: the diff is written, and the status says it
	 * is not whole (as ms-report's does): a gate does not pass it. */
	if (status == 0 && (!a.complete || !b.complete))
		status = MSC_EXIT_TROUBLE;
	if (fail && status == 0 && msc_diff_grew_past(&d, fail_at, fail_pct)) {
		char g[32];

		if (!quiet)
			msc_warn("total %s grew by %s%s", d.primary,
				 msc_fmt_size(g, sizeof(g), msc_sat_sub_i64(d.total_after, d.total_before)),
				 ", more than --fail-on-growth allows");
		status = MSC_EXIT_FINDING;
	}
	msc_diff_release(&d);
	msc_snapshot_release(&a);
	msc_snapshot_release(&b);
	free(metrics);
	free(metric_copy);
	return status;
}
