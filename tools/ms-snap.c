/* SPDX-License-Identifier: MIT */
/* ms-snap: write a snapshot of processes' memory as NDJSON records. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_cli.h"
#include "msc_format.h"
#include "msc_live.h"
#include "msc_ndjson.h"
#include "msc_proto.h"
#include "msc_proc.h"
#include "msc_snap.h"

static const char usage[] =
	"Usage: ms-snap [options] -p PID [-p PID...]\n"
	"       ms-snap [options] -a\n"
	"Write a snapshot of processes' memory as memscope records (NDJSON).\n";

static const char tail[] =
	"Exit status: 0 when the snapshot was written, 2 when nothing could be\n"
	"read or on error.  Record format: memscope-format(5).\n";

enum { OPT_GROUPS = 256, OPT_MAPS, OPT_NO_MAPS, OPT_KTHREADS, OPT_PROC, OPT_LEAKS, OPT_MARK, OPT_SINCE, OPT_UNTIL };

static const struct msc_cli_opt opts[] = {
	{ 'p', "pid", required_argument, "PID", "snapshot process PID (repeatable)" },
	{ 'a', "all", no_argument, NULL,
	  "snapshot every process (process records only,\n"
	  "from smaps_rollup, unless --groups or --maps)" },
	{ OPT_GROUPS, "groups", no_argument, NULL,
	  "mapping records grouped by what they map: [heap],\n"
	  "[stack], [anon], one per file (default with -p)" },
	{ OPT_MAPS, "maps", no_argument, NULL, "one mapping record per mapping" },
	{ OPT_NO_MAPS, "no-maps", no_argument, NULL, "process records only (default with -a)" },
	{ OPT_KTHREADS, "kthreads", no_argument, NULL, "with -a, include kernel threads" },
	{ OPT_LEAKS, "leaks", no_argument, NULL,
	  "with -p, for a process ms-record is recording: its\n"
	  "leaks now (a reachability scan, its threads stopped\n"
	  "while its memory is read), as leak records" },
	{ OPT_SINCE, "since", required_argument, "MARK",
	  "with -p, for a process ms-record is recording: its\n"
	  "live blocks (with --leaks, its leaks) allocated after\n"
	  "the mark MARK or the time (\"30s\"), as leak records" },
	{ OPT_UNTIL, "until", required_argument, "MARK", "... and before the mark MARK or the time" },
	{ OPT_MARK, "mark", required_argument, "NAME",
	  "with -p, for a process ms-record is recording: mark\n"
	  "its recording now, NAME (1 to 39 bytes)" },
	MSC_CLI_OPT_OUTPUT,
	{ OPT_PROC, "proc", required_argument, "DIR", "read DIR instead of /proc" },
	{ 'q', "quiet", no_argument, NULL, "do not warn about processes that cannot be read" },
	{ 0 },
};

static const struct msc_cli cli = {
	.name = "ms-snap", .usage = usage, .opts = opts, .column = 22, .tail = tail,
};

/*
 * The stacks and sites of a process ms-record is recording, as of now
 * (msc_live.h), then a "live" record that says whether it is recorded.
 */
static void live_sites(struct msc_writer *w, int pid, bool quiet)
{
	struct msc_err err;
	long n = msc_live_fetch(pid, "sites", w, &err);

	if (n < 0 && n != -ENOENT && !quiet)
		msc_warn("%s", err.msg);
	msc_w_record(w, MSC_R_LIVE);
	msc_w_i64(w, "pid", pid);
	msc_w_bool(w, "recorded", n >= 0);
	msc_w_end(w);
}

/* --mark: the recorder marks the process's recording now and says so in a
 * "live" record.  -1 after saying why when it cannot. */
static int live_mark(struct msc_writer *w, int pid, const char *name)
{
	char req[80];
	struct msc_err err;
	long n;

	snprintf(req, sizeof(req), "mark %s", name);
	n = msc_live_fetch(pid, req, w, &err);
	if (n == -ENOENT)
		msc_warn("pid %d is not being recorded: --mark marks a process ms-record records", pid);
	else if (n < 0)
		msc_warn("%s", err.msg);
	return n < 0 ? -1 : 0;
}

/*
 * --leaks: the recorder scans the process now and answers with its stacks,
 * leak records and a "live" record (the stop and scan times).  -1 after
 * saying why when it cannot.
 */
static int live_leaks(struct msc_writer *w, int pid, bool leaks, const char *since, const char *until)
{
	char req[2 * MSC_MARK_NAME + 32];
	struct msc_err err;
	long n;

	snprintf(req, sizeof(req), "%s%s%s%s%s", leaks ? "leaks" : "live", since ? "\tsince=" : "", since ? since : "",
		 until ? "\tuntil=" : "", until ? until : "");
	n = msc_live_fetch(pid, req, w, &err);
	if (n == -ENOENT)
		msc_warn("pid %d is not being recorded: %s a process ms-record records", pid,
			 leaks ? "--leaks scans" : "--since and --until read");
	else if (n < 0)
		msc_warn("%s", err.msg);
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct msc_procfs fs;
	struct msc_writer w;
	struct msc_snapper snap;
	struct msc_err err;
	int *pids = NULL, npids = 0, c, i, fd = 1, status = 0;
	bool all = false, quiet = false, kthreads = false, leaks = false;
	int maps = -1;
	const char *output = NULL, *proc = NULL, *mark = NULL, *since = NULL, *until = NULL;
	unsigned failed = 0, partial = 0;

	msc_cli_start("ms-snap");
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'p': {
			int pid;

			if (msc_parse_pid(optarg, &pid))
				msc_usage_error("invalid pid '%s'", optarg);
			pids = realloc(pids, (size_t)(npids + 1) * sizeof(*pids));
			if (!pids)
				msc_die("out of memory");
			pids[npids++] = pid;
			break;
		}
		case 'a':
			all = true;
			break;
		case OPT_GROUPS:
			maps = MSC_SNAP_MAPS_GROUPED;
			break;
		case OPT_MAPS:
			maps = MSC_SNAP_MAPS_ALL;
			break;
		case OPT_NO_MAPS:
			maps = MSC_SNAP_MAPS_NONE;
			break;
		case OPT_KTHREADS:
			kthreads = true;
			break;
		case OPT_LEAKS:
			leaks = true;
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (!*optarg || strlen(optarg) >= MSC_MARK_NAME || strpbrk(optarg, "\t\n\r"))
				msc_usage_error("--%s: a mark's name or a time, of 1 to %u bytes",
						c == OPT_SINCE ? "since" : "until", MSC_MARK_NAME - 1);
			*(c == OPT_SINCE ? &since : &until) = optarg;
			break;
		case OPT_MARK:
			mark = optarg;
			if (!*mark || strlen(mark) >= MSC_MARK_NAME || strpbrk(mark, "\n\r"))
				msc_usage_error("--mark: a name of 1 to %u bytes, on one line", MSC_MARK_NAME - 1);
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_PROC:
			proc = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		}
	}
	if (optind < argc)
		msc_usage_error("unexpected argument '%s'", argv[optind]);
	if (!all && npids == 0)
		msc_usage_error("no process given: use -p PID or -a");
	if (all && npids)
		msc_usage_error("-a and -p cannot be used together");
	if (leaks && all)
		msc_usage_error("--leaks needs -p PID (a process ms-record is recording)");
	if (mark && all)
		msc_usage_error("--mark needs -p PID (a process ms-record is recording)");
	if ((since || until) && all)
		msc_usage_error("--since and --until need -p PID (a process ms-record is recording)");
	if (maps < 0)
		maps = all ? MSC_SNAP_MAPS_NONE : MSC_SNAP_MAPS_GROUPED;
	if (msc_procfs_init(&fs, proc))
		msc_die("proc root '%s' is too long", proc);
	if (access(fs.root, R_OK | X_OK))
		msc_die("cannot read '%s': %s", fs.root, strerror(errno));

	/* None of the pids asked for is there: said before anything is
	 * written (an -o file there is left as it was). */
	if (!all && !msc_snap_present(&fs, pids, npids)) {
		if (npids == 1)
			msc_die("pid %d: no such process", pids[0]);
		msc_die("none of the %u pids is a process", npids);
	}
	if (output) {
		fd = msc_open_output_err(output, &err);
		if (fd < 0)
			msc_die("%s", err.msg);
	}
	if (msc_writer_init(&w, fd, 0) || msc_writer_compress_by_name(&w, output))
		msc_die("out of memory");
	msc_snapper_init(&snap, &fs, &w, maps);

	msc_snap_write_header(&snap, pids, npids, all, proc);

	if (all) {
		snap.skip_kthreads = !kthreads;
		msc_snap_all(&snap, &partial, &failed);
		if (!quiet && partial)
			msc_warn("%u process%s could not be read fully%s; the missing figures "
				 "are omitted", partial, partial == 1 ? "" : "es",
				 geteuid() ? " (run as their owner or root for their pss figures)" :
					     " (they ended meanwhile, or the kernel refused)");
	} else {
		for (i = 0; i < npids; i++) {
			int ret = msc_snap_process(&snap, pids[i], &err);

			if (ret < 0) {
				failed++;
				if (!quiet || npids == 1)
					msc_warn("%s", err.msg);
			} else if (ret > 0) {
				partial++;
				if (!quiet)
					msc_warn("%s", err.msg);
			}
			if (ret >= 0 && mark && live_mark(&w, pids[i], mark)) {
				failed++;
				continue;
			}
			if (ret >= 0 && (leaks || since || until) && live_leaks(&w, pids[i], leaks, since, until))
				failed++;
			else if (ret >= 0 && !leaks && !since && !until)
				live_sites(&w, pids[i], quiet);
		}
	}
	if (msc_snap_meminfo(&snap, &err) && !quiet)
		msc_warn("%s", err.msg);

	msc_snap_write_end(&snap, partial, failed);
	if (snap.processes == 0 || ((leaks || mark || since || until) && failed))
		status = MSC_EXIT_TROUBLE;
	msc_snapper_release(&snap);
	if (msc_cli_finish_output(&w, fd, output))
		status = MSC_EXIT_TROUBLE;
	msc_procfs_release(&fs);
	free(pids);
	return status;
}
