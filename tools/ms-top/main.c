/* SPDX-License-Identifier: MIT */
/*
 * ms-top: processes' memory, live: rss, pss, uss, swap, growth and its
 * history, the mappings of one process, and the live heap of processes
 * that ms-record records.  This file: options, signals, and the choice
 * between the screen (ui.c) and records (batch.c).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>

#include "msc_cli.h"
#include "msc_util.h"
#include "top.h"

static const char usage[] =
	"Usage: ms-top [options]\n"
	"Show processes' memory as it changes: rss, pss, uss, swap, growth and\n"
	"its history; the mappings of a process; the live heap by allocation\n"
	"site of processes that ms-record records.\n";

static const char tail[] =
	"Keys: arrows move, Enter inspects a process (its mappings and live\n"
	"heap), 1 to 9 sort by a column (again: reverse), / filters by name or\n"
	"pid, t shows the tree of processes, ? shows every key, q quits.\n"
	"\n"
	"Exit status: 0, or 2 on error (no such process, not a terminal without\n"
	"--batch).  Record format: memscope-format(5).\n";

enum { OPT_WINDOW = 256, OPT_PROC };

static const struct msc_cli_opt opts[] = {
	{ 'p', "pid", required_argument, "PID[,PID...]", "show only these processes (repeatable)" },
	{ 'u', "user", required_argument, "USER", "show only the processes of USER (name or uid)" },
	{ 'd', "delay", required_argument, "SECONDS",
	  "refresh every SECONDS (default 1; \"0.5\", \"250ms\")" },
	{ 'n', "count", required_argument, "COUNT", "stop after COUNT refreshes" },
	{ 'b', "batch", no_argument, NULL,
	  "no screen: write memscope records (NDJSON) at\n"
	  "every refresh, for scripts and logs" },
	{ 'o', "output", required_argument, "FILE",
	  "with --batch, write to FILE instead of standard\n"
	  "output" },
	{ OPT_WINDOW, "window", required_argument, "SECONDS",
	  "the recent growth's window (default 60)" },
	{ OPT_PROC, "proc", required_argument, "DIR", "read DIR instead of /proc" },
	{ 'q', "quiet", no_argument, NULL,
	  "with --batch, no warnings (live heaps that\n"
	  "could not be read)" },
	{ 0 },
};

static const struct msc_cli cli = {
	.name = "ms-top", .usage = usage, .opts = opts, .column = 26, .tail = tail,
};

volatile int top_quit_signal;
volatile sig_atomic_t top_curses_on;

static void on_quit(int sig)
{
	top_quit_signal = sig;
}

/*
 * A crash must not leave the terminal in raw mode on the alternate
 * screen: restore it, then die of the same signal (SA_RESETHAND made the
 * default action current).  endwin() is not async-signal-safe; this is the
 * last thing the process does, and what htop and top do too.
 */
static void on_crash(int sig)
{
	if (top_curses_on)
		endwin();
	raise(sig);
}

static void set_signals(void)
{
	static const int quit[] = { SIGINT, SIGTERM, SIGHUP };
	static const int crash[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_quit;	/* no SA_RESTART: waits end at once */
	for (i = 0; i < ARRAY_SIZE(quit); i++)
		sigaction(quit[i], &sa, NULL);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (i = 0; i < ARRAY_SIZE(crash); i++)
		sigaction(crash[i], &sa, NULL);
}

/* "1", "0.5", "2.5s", "250ms", "1m" into ns: a bare number is seconds. */
static uint64_t parse_seconds(const char *opt, const char *s, uint64_t min)
{
	uint64_t ns;
	char *end;

	if (isdigit((unsigned char)*s) || *s == '.') {
		double v = strtod(s, &end);

		if (!*end) {
			if (v * 1e9 < (double)min || v > 86400)
				msc_usage_error("%s: '%s' is out of range", opt, s);
			return (uint64_t)(v * 1e9 + 0.5);
		}
	}
	if (msc_parse_duration(s, &ns) || ns < min || ns > 86400ull * 1000000000ull)
		msc_usage_error("%s: invalid duration '%s'", opt, s);
	return ns;
}

static void add_pids(struct top *t, const char *arg)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int pid;

		if (msc_parse_pid(tok, &pid))
			msc_usage_error("invalid pid '%s'", tok);
		if (MSC_GROW(t->sel.pids, t->sel.npids + 1, t->sel.pids_cap, 4))
			msc_die("out of memory");
		t->sel.pids[t->sel.npids++] = pid;
	}
	if (!strlen(arg) || arg[strlen(arg) - 1] == ',')
		msc_usage_error("invalid pid list '%s'", arg);
}

static void set_user(struct top *t, const char *name)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	uint64_t uid;

	if (getpwnam_r(name, &pw, buf, sizeof(buf), &res) == 0 && res) {
		t->sel.uid = pw.pw_uid;
	} else if (msc_parse_uint(name, &uid) == 0 && uid < 0xffffffffull) {
		t->sel.uid = (unsigned)uid;
	} else {
		msc_usage_error("no such user '%s'", name);
	}
	t->sel.by_user = true;
}

/* Every pid of -p must exist now: a clear error rather than an empty list. */
static void check_pids(struct top *t)
{
	size_t i;

	for (i = 0; i < t->sel.npids; i++) {
		struct msc_pstat st;
		int pid = t->sel.pids[i];
		int ret = msc_proc_stat(&t->fs, pid, &st, NULL);

		if (ret == -ESRCH || ret == -ENOENT)
			msc_die("pid %d: no such process", pid);
		if (ret)
			msc_die("pid %d: cannot read %s/%d/stat: %s", pid, t->fs.root, pid,
				strerror(-ret));
		if (st.flags & MSC_PF_KTHREAD)
			msc_die("pid %d is a kernel thread: it has no memory of its own", pid);
	}
}

int main(int argc, char **argv)
{
	struct top t;
	const char *proc = NULL, *output = NULL;
	bool quiet = false;
	uint64_t interval = 1000000000ull, window = 0;
	unsigned count = 0;
	bool batch = false;
	int c, status;

	msc_cli_start("ms-top");
	if (top_init(&t, NULL))
		msc_die("out of memory");
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'p':
			add_pids(&t, optarg);
			break;
		case 'u':
			set_user(&t, optarg);
			break;
		case 'd':
			interval = parse_seconds("--delay", optarg, 10000000ull);
			break;
		case 'n':
			count = msc_cli_count(optarg, 1000000000u);
			break;
		case 'b':
			batch = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_WINDOW:
			window = parse_seconds("--window", optarg, 1000000ull);
			break;
		case OPT_PROC:
			proc = optarg;
			break;
		}
	}
	if (optind < argc)
		msc_usage_error("unexpected argument '%s'", argv[optind]);
	if (output && !batch)
		msc_usage_error("-o needs --batch: the screen is the terminal");
	if (proc && msc_procfs_init(&t.fs, proc))
		msc_die("proc root '%s' is too long", proc);
	if (access(t.fs.root, R_OK | X_OK))
		msc_die("cannot read '%s': %s", t.fs.root, strerror(errno));
	t.window = window ? window : 60ull * 1000000000ull;
	if (t.window < interval)
		t.window = interval;
	check_pids(&t);
	if (!batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		msc_die("standard %s is not a terminal: use --batch for records",
			isatty(STDIN_FILENO) ? "output" : "input");
	set_signals();
	if (batch) {
		int fd = 1;

		if (output) {
			struct msc_err err = { 0 };

			fd = msc_open_output_err(output, &err);
			if (fd < 0)
				msc_die("%s", err.msg);
		}
		status = top_batch(&t, count, interval, fd, output);
		if (!quiet && t.live_errors)
			msc_warn("%u live heap reads failed, the last: %s", t.live_errors, t.live_err);
	} else {
		status = top_ui(&t, count, interval);
	}
	top_release(&t);
	return status;
}
