/* SPDX-License-Identifier: MIT */
/* ms-filter: keep the records that matter, and the stream valid. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_cli.h"
#include "msc_filter.h"
#include "msc_ndjson.h"

static const char usage[] =
	"Usage: ms-filter [options] [FILE]\n"
	"Filter a memscope stream (from ms-record, ms-snap, ms-diff or ms-filter),\n"
	"reading FILE or standard input, writing a valid stream to standard output.\n";

static const char tail[] =
	"header and end records always pass; the end record lists what was dropped\n"
	"(\"filtered\") and by which filters.  Exit status: 0 ok, 1 a gate failed\n"
	"(the output is complete), 2 bad input or error (what was written before\n"
	"the bad record stays written).\n";

enum { OPT_IGNORE_FRAME = 256, OPT_ONLY, OPT_ALLOC_FN, OPT_MIN_AGE, OPT_TYPE, OPT_EXPAND, OPT_SINCE, OPT_UNTIL };

static const struct msc_cli_opt opts[] = {
	{ 'm', "min", required_argument, "SIZE", "keep allocations of SIZE bytes or more (K/M/G)" },
	{ 'M', "max", required_argument, "SIZE", "keep allocations of SIZE bytes or less" },
	{ 'I', "ignore", required_argument, "PAT",
	  "drop what PAT allocates for itself: the frame an\n"
	  "allocation is attributed to (the innermost one that\n"
	  "is not a wrapper such as strdup) matches PAT, a\n"
	  "glob on function, source file or module (libc)" },
	{ OPT_IGNORE_FRAME, "ignore-frame", required_argument, "PAT",
	  "drop allocations with any frame matching PAT" },
	{ OPT_ONLY, "only", required_argument, "PAT",
	  "keep only allocations with a frame matching PAT" },
	{ OPT_ALLOC_FN, "alloc-fn", required_argument, "NAME",
	  "treat NAME as an allocation wrapper too (xmalloc)" },
	{ 's', "suppressions", required_argument, "FILE",
	  "drop leaks matching LeakSanitizer leak:PATTERN\n"
	  "lines; print what each rule suppressed" },
	{ 't', "transient", no_argument, NULL, "drop allocations freed within --min-age" },
	{ OPT_MIN_AGE, "min-age", required_argument, "DURATION",
	  "the age below which a block is transient\n"
	  "(default 1ms; 10us, 1s...)" },
	{ OPT_SINCE, "since", required_argument, "MARK",
	  "keep the leaks (and --events allocations) of blocks\n"
	  "allocated after the mark MARK" },
	{ OPT_UNTIL, "until", required_argument, "MARK", "... and before the mark MARK" },
	{ OPT_TYPE, "type", required_argument, "T[,T...]", "keep only records of these types" },
	{ 'p', "pid", required_argument, "PID", "keep only the records of process PID" },
	{ 'n', "top", required_argument, "N", "keep the N largest sites and leaks (by bytes)" },
	{ OPT_EXPAND, "expand", no_argument, NULL,
	  "write each stack with its frames in place, as\n"
	  "format version 1 does (for older readers)" },
	MSC_CLI_OPT_OUTPUT,
	MSC_CLI_OPT_FAIL_ON_LEAK("exit 1 when leaks of these kinds pass the filters"),
	MSC_CLI_OPT_FAIL_ON_ERROR("exit 1 when memory errors pass the filters"),
	{ 'q', "quiet", no_argument, NULL, "no warnings, no suppression summary" },
	{ 0 },
};

/* -i was --ignore until 0.1: it is ms-record's --interval. */
static const struct msc_cli_alias aliases[] = {
	{ "-i", "-I (--ignore)", required_argument, 'I' },
	{ NULL, NULL, 0, 0 },
};

static const struct msc_cli cli = {
	.name = "ms-filter", .usage = usage, .opts = opts, .column = 25, .tail = tail, .aliases = aliases,
};

/* A growable list of option arguments. */
struct list {
	const char **v;
	unsigned n;
};

static void add(struct list *l, const char *s)
{
	msc_cli_push(&l->v, &l->n, s);
}

int main(int argc, char **argv)
{
	struct msc_filter_opts o = { .min_age = 1000000 };
	struct list ignore = { 0 }, ignore_frame = { 0 }, only = { 0 }, alloc_fns = { 0 }, types = { 0 };
	struct msc_supp supp;
	struct msc_filter_stats st;
	struct msc_gates gates = { 0 };
	struct msc_reader r;
	struct msc_writer w;
	struct msc_err err;
	const char *output = NULL, *supp_path = NULL, *input;
	char *types_copy = NULL;
	struct stat sb;
	bool quiet = false;
	int c, fd = 1, ret, status = 0;

	msc_cli_start("ms-filter");
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		if (msc_gates_opt(&gates, c, optarg))
			continue;
		switch (c) {
		case 'm':
			if (msc_parse_size(optarg, &o.min_size))
				msc_usage_error("invalid size '%s'", optarg);
			o.has_min = true;
			break;
		case 'M':
			if (msc_parse_size(optarg, &o.max_size))
				msc_usage_error("invalid size '%s'", optarg);
			o.has_max = true;
			break;
		case 'I':
			add(&ignore, optarg);
			break;
		case OPT_IGNORE_FRAME:
			add(&ignore_frame, optarg);
			break;
		case OPT_ONLY:
			add(&only, optarg);
			break;
		case OPT_ALLOC_FN:
			add(&alloc_fns, optarg);
			break;
		case 's':
			supp_path = optarg;
			break;
		case 't':
			o.transient = true;
			break;
		case OPT_MIN_AGE:
			if (msc_parse_duration(optarg, &o.min_age) || !o.min_age)
				msc_usage_error("invalid duration '%s'", optarg);
			o.transient = true;
			break;
		case OPT_TYPE:
			free(types_copy);
			types_copy = msc_cli_split(optarg, &types.v, &types.n);
			if (!types.n)
				msc_usage_error("--type needs at least one record type");
			break;
		case 'p':
			if (msc_parse_pid(optarg, &o.pid))
				msc_usage_error("invalid pid '%s'", optarg);
			break;
		case 'n':
			o.top = msc_cli_count(optarg, 1000000000);
			break;
		case OPT_EXPAND:
			o.expand = true;
			break;
		case OPT_SINCE:
			o.since = optarg;
			break;
		case OPT_UNTIL:
			o.until = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		}
	}
	if (argc - optind > 1)
		msc_usage_error("unexpected argument '%s'", argv[optind + 1]);
	input = optind < argc ? argv[optind] : "-";
	o.ignore = ignore.v;
	o.nignore = ignore.n;
	o.ignore_frame = ignore_frame.v;
	o.nignore_frame = ignore_frame.n;
	o.only = only.v;
	o.nonly = only.n;
	o.alloc_fns = alloc_fns.v;
	o.nalloc_fns = alloc_fns.n;
	o.types = types.n ? types.v : NULL;
	o.ntypes = types.n;
	if (supp_path) {
		if (msc_supp_load(&supp, supp_path, &err))
			msc_die("%s", err.msg);
		o.supp = &supp;
	}
	if (msc_reader_open(&r, input, &err))
		msc_die("%s", err.msg);
	if (output) {
		fd = msc_open_output_err(output, &err);
		if (fd < 0)
			msc_die("%s", err.msg);
	}
	/* A pipe or a terminal: someone may be watching a recording. */
	o.live = fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode);
	if (msc_writer_init(&w, fd, 0) || msc_writer_compress_by_name(&w, output))
		msc_die("out of memory");
	ret = msc_filter_run(&o, &r, &w, &st, &err);
	/* What passed before any error goes out. */
	c = msc_writer_release(&w);
	if (ret) {
		msc_warn("%s", err.msg);
		status = MSC_EXIT_TROUBLE;
	} else if (st.truncated) {
		/* Passed on as it came, but a script must know. */
		msc_warn("%s: no end record: the stream was cut short", r.name);
		status = MSC_EXIT_TROUBLE;
	}
	if (!ret && !quiet && st.age_rounded)
		msc_warn("aggregated sites know lifetimes by decade (1us, 10us, ... 10s): "
			 "--min-age was rounded down for them");
	if (msc_cli_check_write(-c, output))
		status = MSC_EXIT_TROUBLE;
	if (!status)
		status = msc_gates_check(&gates, st.leaks, st.errors);
	if (o.supp && !quiet)
		msc_supp_print_used(o.supp, stderr);
	if (fd != 1 && close(fd) && !status) {
		msc_warn("write error on '%s': %s", output, strerror(errno));
		status = MSC_EXIT_TROUBLE;
	}
	if (o.supp)
		msc_supp_release(&supp);
	msc_reader_release(&r);
	free(ignore.v);
	free(ignore_frame.v);
	free(only.v);
	free(alloc_fns.v);
	free(types.v);
	free(types_copy);
	return status;
}
