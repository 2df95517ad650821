/* SPDX-License-Identifier: MIT */
/* ms-report: a memscope stream as a report for people or scripts. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_cli.h"
#include "msc_ndjson.h"
#include "msc_report.h"

static const char usage[] =
	"Usage: ms-report [options] [FILE]\n"
	"Turn a memscope stream (from ms-record, ms-filter, ms-snap or ms-diff),\n"
	"read from FILE or standard input, into a report.\n";

static const char tail[] =
	"Exit status: 0 ok, 1 a gate failed (the report is written), 2 bad input\n"
	"or error (the report of what was read before the bad record is still\n"
	"written).\n";

/* --text to --pprof in enum msc_report_format's order: OPT_TEXT + format. */
enum {
	OPT_TEXT = 256, OPT_MD, OPT_JSON, OPT_COLLAPSED, OPT_SVG, OPT_HTML, OPT_PPROF, OPT_SECTIONS, OPT_COST,
	OPT_ICICLE, OPT_ALLOC_FN, OPT_TITLE, OPT_WIDTH, OPT_WIDE,
	OPT_NO_AUTO_WRAPPERS, OPT_SINCE, OPT_UNTIL, OPT_LIVE_AT
};
_Static_assert(OPT_PPROF - OPT_TEXT == MSC_REPORT_PPROF, "a format option per format, in order");

static const struct msc_cli_opt opts[] = {
	{ OPT_TEXT, "text", no_argument, NULL, "plain text (default), as wide as the terminal" },
	{ OPT_MD, "md", no_argument, NULL, "GitHub-flavoured Markdown (for a pull request)" },
	{ OPT_JSON, "json", no_argument, NULL, "one JSON document, for scripts" },
	{ OPT_COLLAPSED, "collapsed", no_argument, NULL, "folded stacks for flamegraph.pl" },
	{ OPT_SVG, "svg", no_argument, NULL, "a self-contained interactive flame graph" },
	{ OPT_HTML, "html", no_argument, NULL,
	  "one self-contained page: summary, heap over time,\n"
	  "leaks with their stacks, flame graph" },
	{ OPT_PPROF, "pprof", no_argument, NULL,
	  "a gzipped pprof profile (profile.proto), for go tool\n"
	  "pprof and continuous profilers" },
	{ 'n', "top", required_argument, "N", "rows per table (default 10)" },
	{ OPT_WIDTH, "width", required_argument, "N",
	  "text in N columns (default: $COLUMNS, the\n"
	  "terminal's width, or 80)" },
	{ OPT_WIDE, "wide", no_argument, NULL, "text as wide as its names: nothing cut" },
	{ OPT_SECTIONS, "sections", required_argument, "LIST",
	  "summary,errors,leaks,top,temporary,sizes,timeline\n"
	  "or all\n"
	  "(default all)" },
	{ OPT_COST, "cost", required_argument, "WHAT",
	  "what --collapsed, --svg and --html weigh: leaked\n"
	  "(default; pictures: peak when nothing leaked),\n"
	  "allocs, bytes, peak" },
	{ OPT_ICICLE, "icicle", no_argument, NULL, "flame graphs top-down, the callers above" },
	{ OPT_ALLOC_FN, "alloc-fn", required_argument, "NAME",
	  "attribute what NAME allocates to its caller" },
	{ OPT_NO_AUTO_WRAPPERS, "no-auto-wrappers", no_argument, NULL,
	  "keep the program's own allocation wrappers as\n"
	  "sites (those found, not those known or named)" },
	{ OPT_SINCE, "since", required_argument, "MARK",
	  "the leaks and what was live at the end of blocks\n"
	  "allocated after the mark MARK (memscope-format(5))" },
	{ OPT_UNTIL, "until", required_argument, "MARK",
	  "... and before the mark MARK" },
	{ OPT_LIVE_AT, "live-at", required_argument, "MARK",
	  "also the sites that held the most at the mark MARK\n"
	  "(from the recording's timeline)" },
	{ OPT_TITLE, "title", required_argument, "TEXT",
	  "the title of the --svg flame graph or --html page" },
	MSC_CLI_OPT_OUTPUT,
	MSC_CLI_OPT_FAIL_ON_LEAK("exit 1 when the stream holds leaks of these kinds"),
	MSC_CLI_OPT_FAIL_ON_ERROR("exit 1 when it holds memory errors"),
	{ 'q', "quiet", no_argument, NULL, "no warnings (errors are still reported)" },
	{ 0 },
};

static const struct msc_cli cli = {
	.name = "ms-report", .usage = usage, .opts = opts, .column = 24, .tail = tail,
};

/* The report, compressed with zstd into path; 0 or -errno. */
static int write_zst(const char *path, const char *buf, size_t len)
{
	struct msc_writer w;
	struct msc_err err = { 0 };
	int fd = msc_open_output_err(path, &err), c;

	if (fd < 0)
		msc_die("%s", err.msg);
	if (msc_writer_init(&w, fd, 0) || msc_writer_compress_by_name(&w, path))
		msc_die("out of memory");
	msc_w_bytes(&w, buf, len);
	c = msc_writer_release(&w);
	if (close(fd) && !c)
		c = -errno;
	return c;
}

int main(int argc, char **argv)
{
	struct msc_report_opts o = { MSC_REPORT_TEXT, MSC_COST_AUTO, 10, MSC_SECTION_ALL, NULL, false, 0 };
	struct msc_report r = { 0 };
	struct msc_reader rd;
	struct msc_err err;
	const char *output = NULL, *input;
	const char **alloc_fns = NULL;
	unsigned nalloc_fns = 0;
	FILE *out = stdout;
	struct msc_gates gates = { 0 };
	uint64_t leaks[MSC_LEAK_KINDS] = { 0 };
	char *zbuf = NULL;
	size_t zlen = 0;
	int c, ret, status = 0;

	msc_cli_start("ms-report");
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		if (c >= OPT_TEXT && c <= OPT_PPROF)
			o.format = (enum msc_report_format)(c - OPT_TEXT);
		else if (msc_gates_opt(&gates, c, optarg))
			continue;
		switch (c) {
		case OPT_ICICLE:
			o.icicle = true;
			break;
		case 'n':
			o.top = msc_cli_count(optarg, 1000000);
			break;
		case OPT_SECTIONS:
			if (msc_report_sections(optarg, &o.sections))
				msc_usage_error("invalid sections '%s' (summary, leaks, top, temporary, "
						"sizes, timeline, all)", optarg);
			break;
		case OPT_COST:
			if (msc_report_cost_parse(optarg, &o.cost))
				msc_usage_error("invalid cost '%s' (leaked, allocs, bytes, peak)", optarg);
			break;
		case OPT_ALLOC_FN:
			msc_cli_push(&alloc_fns, &nalloc_fns, optarg);
			break;
		case OPT_TITLE:
			o.title = optarg;
			break;
		case OPT_WIDTH:
			o.width = msc_cli_count(optarg, 100000);
			if (o.width < 40)
				msc_usage_error("invalid width '%s' (40 columns or more)", optarg);
			break;
		case OPT_WIDE:
			o.width = MSC_REPORT_WIDE;
			break;
		case OPT_NO_AUTO_WRAPPERS:
			r.no_auto_wrappers = true;
			break;
		case OPT_SINCE:
			r.since = optarg;
			break;
		case OPT_UNTIL:
			r.until = optarg;
			break;
		case OPT_LIVE_AT:
			r.live_at = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			/* Every message of ms-report is an error today (a stream
			 * cut short is exit 2): -q is taken as every tool takes it. */
			break;
		}
	}
	if (argc - optind > 1)
		msc_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (!o.width)
		o.width = msc_cli_columns(output ? -1 : STDOUT_FILENO);
	input = optind < argc ? argv[optind] : "-";
	/* as curl and gzip do: binary output would garble a terminal */
	if (o.format == MSC_REPORT_PPROF && !output && isatty(STDOUT_FILENO))
		msc_die("--pprof writes a binary profile: give -o FILE or redirect standard output");
	if (msc_reader_open(&rd, input, &err))
		msc_die("%s", err.msg);
	r.alloc_fns = alloc_fns;
	r.nalloc_fns = nalloc_fns;
	/* The page draws the heap over time by site from an --events stream. */
	r.want_heap_series = o.format == MSC_REPORT_HTML;
	/* A profile or flame graph of every process of an ms-record --follow
	 * stream, by pid and program (the other formats: the first's). */
	r.all_processes = o.format == MSC_REPORT_PPROF || o.format == MSC_REPORT_COLLAPSED ||
			  o.format == MSC_REPORT_SVG;
	ret = msc_report_load(&r, &rd, &err);
	/* An empty or foreign input has nothing to report, nor a range
	 * whose mark is not there (-ESRCH: not the whole run instead). */
	if (ret && (!r.tool || ret == -ESRCH)) {
		msc_report_release(&r);
		msc_reader_release(&rd);
		msc_die("%s", err.msg);
	}
	if (o.format == MSC_REPORT_PPROF && msc_report_pprof_unfit(&r)) {
		msc_warn("%s: %s", rd.name, msc_report_pprof_unfit(&r));
		msc_report_release(&r);
		msc_reader_release(&rd);
		return MSC_EXIT_TROUBLE;
	}
	if (output && msc_zst_name(output)) {
		/* FILE.zst: the report is compressed on its way out */
		out = open_memstream(&zbuf, &zlen);
		if (!out)
			msc_die("out of memory");
	} else if (output) {
		int fd = msc_open_output_err(output, &err);

		if (fd < 0 || !(out = fdopen(fd, "w")))
			msc_die("%s", fd < 0 ? err.msg : "out of memory");
	}
	if (ret) {
		/* Report what was read, then say what stopped the reading. */
		r.complete = false;
		status = MSC_EXIT_TROUBLE;
	}
	c = msc_report_render(&r, &o, out);
	if (out != stdout && fclose(out) && !c)
		c = -errno;
	if (zbuf && !c)
		c = write_zst(output, zbuf, zlen);
	free(zbuf);
	if (c == -ENOMEM) {
		msc_warn("out of memory making the report");
		status = MSC_EXIT_TROUBLE;
	} else if (c && msc_cli_check_write(-c, output)) {
		status = MSC_EXIT_TROUBLE;
	}
	/* Said once: what is left in the buffer is not tried again at exit. */
	if (out == stdout && c) {
		__fpurge(stdout);
		clearerr(stdout);
	}
	/* Formats with no place for the note the others print: they have
	 * every process's sites, but an --events stream's are built again
	 * from the first process's events. */
	if (r.streams > 1 && r.all_processes && r.from_events)
		msc_warn("%s: the stream holds %u more %s (ms-record --follow): this profile is about "
			 "pid %d; ms-filter --pid PID picks another", rd.name, r.streams - 1,
			 r.streams > 2 ? "processes" : "process", r.pid);
	if (ret) {
		msc_warn("%s", err.msg);
	} else if (!r.complete) {
		/* A recording without its end, one that holds nothing but
		 * its header too (a gate passed those): reported, and said. */
		msc_warn("%s: no end record: the stream was cut short; the report covers what it holds",
			 rd.name);
		status = MSC_EXIT_TROUBLE;
	}
	msc_report_leak_blocks(&r, leaks);
	if (!status)
		status = msc_gates_check(&gates, leaks, r.nerrors);
	msc_report_release(&r);
	msc_reader_release(&rd);
	free(alloc_fns);
	return status;
}
