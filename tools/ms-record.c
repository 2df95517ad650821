/* SPDX-License-Identifier: MIT */
/*
 * ms-record: run a program under libmemscope.so and write what it allocates
 * as memscope records: aggregated sites and leaks with symbolized stacks,
 * periodic samples, and with --events every allocation event.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "msc_cli.h"
#include "msc_proto.h"
#include "msc_recorder.h"
#include "msc_run.h"
#include "msc_util.h"

static const char usage[] =
	"Usage: ms-record [options] [--] PROGRAM [ARGS...]\n"
	"       ms-record [options] -p PID\n"
	"Run PROGRAM with libmemscope.so preloaded, or load it into the running\n"
	"process PID, and write what it allocates as memscope records (NDJSON):\n"
	"allocation sites and leaks with symbolized stacks, rss samples, and a\n"
	"summary.\n";

static const char tail[] =
	"Exit status: the program's own, 128+N when it died of signal N; 125 when\n"
	"ms-record failed, 126 when PROGRAM cannot be run or profiled (not\n"
	"executable, statically linked, setuid), 127 when it was not found.\n"
	"With -p: 0 once detached (or the process ended), 2 when it could not\n"
	"attach.\n";

enum { OPT_NO_SCAN = 256, OPT_ALLOC_FN, OPT_FREE_STACKS, OPT_LOSSY, OPT_DURATION, OPT_POLL, OPT_DEPTH,
       OPT_UNWIND, OPT_HOOK, OPT_SAMPLE, OPT_MARK_SIGNAL };

static const struct msc_cli_opt opts[] = {
	{ 'p', "pid", required_argument, "PID",
	  "attach to process PID (no gdb needed), record until\n"
	  "interrupted, --duration, or its exit, then detach:\n"
	  "it keeps running as it was" },
	{ OPT_DURATION, "duration", required_argument, "TIME",
	  "with -p, detach after TIME (\"30s\", \"5m\")" },
	{ OPT_POLL, "poll", no_argument, NULL,
	  "with -p, load nothing into the process: sample its\n"
	  "rss, pss, swap and mappings from /proc each\n"
	  "interval (-i, default 1000 ms)" },
	{ 'o', "output", required_argument, "FILE",
	  "write the records to FILE (default: standard output;\n"
	  "on a terminal, memscope.NAME.PID.ndjson), compressed\n"
	  "with zstd if it ends in .zst" },
	{ 'e', "events", no_argument, NULL, "also write every allocation and free event" },
	{ 'i', "interval", required_argument, "MS",
	  "rss sampling period in milliseconds (default 100,\n"
	  "0 for none; 1000 with --poll)" },
	{ OPT_DEPTH, "depth", required_argument, "N", "frames per stack, 1 to 256 (default 64)" },
	{ OPT_UNWIND, "unwind", required_argument, "MODE",
	  "dwarf (default), fp (frame pointers), libunwind,\n"
	  "or none (allocation call site only)" },
	{ 'f', "follow", no_argument, NULL,
	  "record forked and exec'ed children too, as\n"
	  "separate pid-tagged streams" },
	{ OPT_NO_SCAN, "no-scan", no_argument, NULL,
	  "do not classify leaks by reachability at exit" },
	{ OPT_ALLOC_FN, "alloc-fn", required_argument, "NAME",
	  "NAME (a glob) allocates for its caller, as xmalloc or\n"
	  "g_malloc do: reports attribute what it allocates to\n"
	  "its caller (repeatable; common ones are built in)" },
	{ OPT_FREE_STACKS, "free-stacks", no_argument, NULL,
	  "capture whole stacks of frees for memory errors\n"
	  "(double or invalid frees, mismatches); by default\n"
	  "only the caller of free (cheaper)" },
	{ OPT_SAMPLE, "sample", required_argument, "BYTES",
	  "record an allocation with probability\n"
	  "1 - exp(-size/BYTES) (\"512K\", \"1M\"): about one\n"
	  "per BYTES allocated, for an overhead a production\n"
	  "server can keep; sites and leaks become unbiased\n"
	  "estimates, totals of allocations and bytes stay\n"
	  "exact; no reachability scan" },
	{ OPT_LOSSY, "lossy", no_argument, NULL,
	  "drop events rather than slow the program down when\n"
	  "ms-record cannot keep up (counted in \"lost\")" },
	{ OPT_HOOK, "hook", required_argument, "SPEC",
	  "record the calls of a custom allocator's function\n"
	  "as allocations or frees (repeatable, up to 16):\n"
	  "NAME=alloc,size=argN  NAME=free,ptr=argN\n"
	  "NAME=realloc,ptr=argN,size=argM  (N, M: 1 to 6)" },
	{ OPT_MARK_SIGNAL, "mark-signal", required_argument, "SIG",
	  "signal SIG (USR1, USR2, HUP, ...) sent to ms-record\n"
	  "marks the recording (\"USR2.1\", \"USR2.2\", ...)\n"
	  "instead of reaching the program" },
	{ 'q', "quiet", no_argument, NULL, "no summary line on standard error" },
	{ 0 },
};

/* -d and -u are ms-top's --delay and --user, as in top(1). */
static const struct msc_cli_alias aliases[] = {
	{ "-d", "--depth", required_argument, OPT_DEPTH },
	{ "-u", "--unwind", required_argument, OPT_UNWIND },
	{ NULL, NULL, 0, 0 },
};

static const struct msc_cli cli = {
	.name = "ms-record",
	.usage = usage,
	.opts = opts,
	.column = 23,
	.tail = tail,
	.aliases = aliases,
	.in_order = true,
};

int main(int argc, char **argv)
{
	struct msc_recorder_opts o = { .mode = "launch", .depth = 64, .unwind = MSC_UNWIND_DWARF,
				       .unwind_name = "dwarf", .scan = true, .interval_ms = 100 };
	struct msc_run run = { .opts = &o };
	const char **alloc_fns = NULL;
	unsigned nalloc_fns = 0;
	const char *output = NULL;
	struct msc_err err;
	int c, status, ret;
	uint64_t v;
	bool interval_set = false, quiet = false;

	run.orig_pipe = signal(SIGPIPE, SIG_DFL);
	msc_cli_start("ms-record");
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'e':
			o.events = true;
			break;
		case 'i':
			if (msc_parse_uint(optarg, &v) || v > 3600000)
				msc_usage_error("invalid interval '%s' (milliseconds)", optarg);
			o.interval_ms = v;
			interval_set = true;
			break;
		case OPT_DEPTH:
			if (msc_parse_uint(optarg, &v) || v < 1 || v > MSC_PROTO_MAX_DEPTH)
				msc_usage_error("invalid depth '%s' (1 to %d)", optarg,
						MSC_PROTO_MAX_DEPTH);
			o.depth = (uint32_t)v;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "dwarf") == 0)
				o.unwind = MSC_UNWIND_DWARF;
			else if (strcmp(optarg, "fp") == 0)
				o.unwind = MSC_UNWIND_FP;
			else if (strcmp(optarg, "libunwind") == 0)
				o.unwind = MSC_UNWIND_LIBUNWIND;
			else if (strcmp(optarg, "none") == 0)
				o.unwind = MSC_UNWIND_NONE;
			else
				msc_usage_error("invalid unwind mode '%s' (dwarf, fp, libunwind, none)",
						optarg);
			o.unwind_name = optarg;
			break;
		case 'f':
			o.follow = true;
			break;
		case OPT_NO_SCAN:
			o.scan = false;
			break;
		case OPT_ALLOC_FN:
			msc_cli_push(&alloc_fns, &nalloc_fns, optarg);
			o.alloc_fns = alloc_fns;
			o.nalloc_fns = nalloc_fns;
			break;
		case OPT_FREE_STACKS:
			o.free_stacks = true;
			break;
		case OPT_LOSSY:
			o.lossy = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'p':
			if (msc_parse_pid(optarg, &run.pid))
				msc_usage_error("invalid pid '%s'", optarg);
			break;
		case OPT_POLL:
			run.poll = true;
			break;
		case OPT_DURATION:
			/* A bare number is refused: "10" read as milliseconds
			 * (as -i takes them) ends a recording meant to last ten
			 * seconds (timeout(1)'s unit) at once. */
			if (optarg[0] && strchr("0123456789.", optarg[strlen(optarg) - 1]))
				msc_usage_error("--duration '%s' needs a unit: \"%ss\", \"%sms\", \"%sm\"",
						optarg, optarg, optarg, optarg);
			if (msc_parse_duration(optarg, &run.duration_ns) || !run.duration_ns)
				msc_usage_error("invalid duration '%s'", optarg);
			break;
		case OPT_HOOK:
			if (msc_run_add_hook(&run, optarg, &err))
				msc_usage_error("%s", err.msg);
			break;
		case OPT_MARK_SIGNAL:
			if (msc_run_mark_signal(&run, optarg, &err))
				msc_usage_error("%s", err.msg);
			break;
		case OPT_SAMPLE:
			if (msc_parse_size(optarg, &v) || !v || v > (1ull << 50))
				msc_usage_error("invalid sample rate '%s' (bytes, 1 to 1P: \"512K\", \"1M\")",
						optarg);
			o.sample = v;
			break;
		}
	}
	ret = msc_run_check(&run, &o, optind < argc, interval_set, getenv("MEMSCOPE_SEED"), &err);
	if (ret == -ERANGE) {
		msc_warn("%s", err.msg);
		return MSC_RUN_EXIT_OWN;
	}
	if (ret)
		msc_usage_error("%s", err.msg);
	if (!run.pid)
		run.argv = argv + optind;
	status = msc_cli_record(&run, &o, output, quiet);
	free(alloc_fns);
	return status;
}
