/* SPDX-License-Identifier: MIT */
/*
 * msc_cli: what every ms-* tool does the same way.
 *
 * This is the one libmsc module that prints and exits, because that is its
 * job (like git's usage.c): option parsing through getopt_long with -h/--help
 * and -V/--version handled here, usage errors ("Try 'ms-x --help' for more
 * information.", exit 2), fatal errors (exit 2), warnings, and the check of
 * standard output at exit (a write error is exit 2; EPIPE, a reader that went
 * away, is not an error).  It also parses the values options share: sizes
 * with K/M/G/T suffixes (powers of 1024), percentages, durations and pids.
 *
 * Exit codes, as GNU diff: 0 ok, 1 a finding the user asked to fail on,
 * 2 trouble.
 */
#ifndef MSC_CLI_H
#define MSC_CLI_H

#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdnoreturn.h>
#include <sys/types.h>

#include "msc_ndjson.h"
#include "msc_util.h"

#define MSC_EXIT_OK 0
#define MSC_EXIT_FINDING 1
#define MSC_EXIT_TROUBLE 2
/* Appends s to the array *v of *n strings (repeatable options); dies out of memory. */
void msc_cli_push(const char ***v, unsigned *n, const char *s);
/*
 * A comma-separated list ("site,leak") as its *n non-empty items in *v
 * (emptied first, grown with msc_cli_push): they point into the copy of
 * list it returns, which the caller frees after *v.  Dies out of memory.
 */
char *msc_cli_split(const char *list, const char ***v, unsigned *n);

/* The CI gates of ms-filter and ms-report. */
struct msc_gates {
	bool leak, error;
	unsigned leak_mask;		/* msc_gate_parse_kinds() */
};

/* The option values of the gates' rows (MSC_CLI_OPT_FAIL_ON_*, below). */
#define MSC_CLI_FAIL_ON_LEAK 0x1000
#define MSC_CLI_FAIL_ON_ERROR 0x1001

/*
 * Handles c when it is --fail-on-leak[=KINDS] (usage error on a bad list)
 * or --fail-on-error, with its argument arg: returns whether it was.
 */
bool msc_gates_opt(struct msc_gates *g, int c, const char *arg);
/*
 * Says which gate failed on stderr and returns MSC_EXIT_FINDING, or 0: leaks[]
 * are the blocks of the leak records that went out, by kind; errors the
 * error records.
 */
int msc_gates_check(const struct msc_gates *g, const uint64_t *leaks, uint64_t errors);

/*
 * The old spelling of a renamed option, kept working for one release so
 * that scripts do not break: accepted but not in --help (the man page says
 * when it goes), and each use prints a note on standard error that names
 * the new spelling.  old is "-i" or "--all".
 */
struct msc_cli_alias {
	const char *old;
	const char *now;		/* "-I (--ignore)": what to write instead */
	int has_arg;			/* no_argument or required_argument */
	int val;			/* what msc_cli_getopt() returns for it */
};

/*
 * One option of a tool: the table gives both its parsing and its line in
 * --help.  val is what msc_cli_getopt() returns, a letter for an option
 * that has one ("-p, --pid PID"), else a value from 256 up ("--groups").
 */
struct msc_cli_opt {
	int val;
	const char *name;		/* the long option, without "--" */
	int has_arg;			/* no_argument, required_argument, optional_argument */
	const char *arg;		/* its argument in --help: "PID", "KINDS" */
	const char *help;		/* its description, lines ending in '\n' but the last */
};

struct msc_cli {
	const char *name;		/* "ms-snap" */
	const char *usage;		/* --help's "Usage:" lines and what the tool does */
	const struct msc_cli_opt *opts;	/* ends with name == NULL; -h and -V are added */
	int column;			/* where --help's descriptions start */
	const char *tail;		/* --help after the options: exit status, notes */
	const struct msc_cli_alias *aliases;	/* NULL, or ends with old == NULL */
	bool in_order;			/* options end at the first argument (a command) */
};

/*
 * Rows that several tools' tables share word for word: -o FILE, and the
 * gates' (msc_gates_opt), whose first line ("exit 1 when ...") is the
 * tool's.
 */
#define MSC_CLI_OPT_OUTPUT							\
	{ 'o', "output", required_argument, "FILE",				\
	  "write to FILE instead of standard output\n"				\
	  "(compressed with zstd if it ends in .zst)" }
#define MSC_CLI_OPT_FAIL_ON_LEAK(first_line)					\
	{ MSC_CLI_FAIL_ON_LEAK, "fail-on-leak", optional_argument, "KINDS",	\
	  first_line "\n"							\
	  "(default definitely,indirectly,unscanned: what\n"			\
	  "the report calls leaked; all for every kind)" }
#define MSC_CLI_OPT_FAIL_ON_ERROR(help)						\
	{ MSC_CLI_FAIL_ON_ERROR, "fail-on-error", no_argument, NULL, help }

/* The release in which the old spellings of msc_cli_alias go. */
#define MSC_CLI_ALIAS_UNTIL "0.2"

extern const char *msc_prog;		/* the tool's name, for messages */

/*
 * Sets the program name, makes SIGPIPE return EPIPE instead of killing the
 * tool (writers stop quietly), and arranges the stdout check at exit.
 */
void msc_cli_start(const char *name);

/*
 * getopt_long over cli's options plus -h/--help and -V/--version, which it
 * handles (print, exit 0: --help is cli's usage, a line per option from
 * the table, and its tail), and cli's aliases (a note on stderr, then the
 * value of the option they stand for).  An unknown option or missing
 * argument is a usage error (exit 2).  Returns the option value, or -1
 * after the last option.
 */
int msc_cli_getopt(const struct msc_cli *cli, int argc, char *const argv[]);

noreturn void msc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "ms-x: message" on stderr, then exit 2. */
noreturn void msc_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void msc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Flushes stdout and reports a write error other than EPIPE; returns 0, or
 * MSC_EXIT_TROUBLE after printing "ms-x: write error: ...".  Called at exit
 * automatically; tools that write through an msc_writer pass its error code
 * to msc_cli_check_write().
 */
int msc_cli_close_stdout(void);
/* err is a positive errno or 0; returns 0 (also for EPIPE) or MSC_EXIT_TROUBLE. */
int msc_cli_check_write(int err, const char *what);

/*
 * "64M", "1.5G", "4096", "512k", "64MiB", "64MB": bytes, suffixes in powers
 * of 1024.  Returns 0 or -EINVAL / -ERANGE.
 */
int msc_parse_size(const char *s, uint64_t *out);
/* A size or a percentage ("10%"): sets *is_pct and *out (percent in 1/1000). */
int msc_parse_size_or_pct(const char *s, uint64_t *out, bool *is_pct);
/* "250ms", "2s", "1.5m", "10us", "100ns"; a bare number is milliseconds. */
int msc_parse_duration(const char *s, uint64_t *ns);
int msc_parse_pid(const char *s, int *pid);
/* An option's count, 1 to max; anything else is a usage error (exits 2). */
unsigned msc_cli_count(const char *arg, unsigned max);
/* The columns a text report has, as ls finds them: $COLUMNS when it is a
 * count, else the terminal's width when fd is one, else 0 (the report's
 * default). */
unsigned msc_cli_columns(int fd);

/*
 * Opens (creates, truncates) an output file named on the command line, for
 * writing; returns the descriptor (close-on-exec), or -1 with the message
 * of the failure in err ("cannot open 'F': ...").  In a shared directory
 * (sticky and writable by all, as /tmp) it does not follow a symbolic link
 * that someone else planted, nor write over a file of someone else's
 * (EPERM): the checks of the kernel's protected_symlinks and
 * protected_regular, made whether they are on or not, so that ms-record
 * run as root cannot be made to clobber a file.
 */
int msc_open_output_err(const char *path, struct msc_err *err);
/*
 * msc_open_output_err without the truncation: what is written goes over
 * the file from its start, and msc_output_cut() then cuts what is left of
 * the old content, if anything was written.  A run that fails before it
 * wrote a byte (ms-record -p of a process it may not attach to) leaves an
 * earlier file under that name as it was.
 */
int msc_open_output_keep(const char *path, struct msc_err *err);
/* After the last write to fd (msc_open_output_keep's): a regular file is
 * cut where the writing ended, if it wrote anything; returns that size. */
off_t msc_output_cut(int fd);

/*
 * Ends the output of a tool that wrote records to fd through w: releases
 * the writer and closes fd unless it is standard output.  Returns 0, or
 * MSC_EXIT_TROUBLE after saying what failed (a reader that went away early,
 * EPIPE, is not a failure).  output names the file for messages (NULL:
 * standard output).
 */
int msc_cli_finish_output(struct msc_writer *w, int fd, const char *output);

/*
 * ms-record's output file.  Opened without cutting what is there (see
 * msc_open_output_keep), or, when no path is given and standard output is
 * a terminal, a file named memscope.NAME.PID.ndjson after prog and pid.
 */
struct msc_recfile {
	const char *path;		/* NULL: standard output */
	int fd;
	bool automatic;			/* named by ms-record, not by -o */
	bool created;			/* -o's file was not there before */
	char auto_path[PATH_MAX];
};

/* Opens it: 0, or -1 with the message in err. */
int msc_recfile_open(struct msc_recfile *f, const char *path, const char *prog, int pid,
		     struct msc_err *err);
/* The program runs as pid: an automatic name takes its pid. */
void msc_recfile_rename(struct msc_recfile *f, const char *prog, int pid);
/*
 * After w's last record: releases w, cuts the file's old content after
 * what was written, and leaves nothing behind when nothing was recorded
 * (a file it created, empty or, with drop_header, holding a header only;
 * an automatic one).  Says what failed (a write error, whatever quiet
 * says) and returns fail then, else status; an automatic file is named
 * with the command that reports it, unless quiet.
 */
int msc_recfile_close(struct msc_recfile *f, struct msc_writer *w, bool recorded, bool drop_header,
		      bool quiet, int status, int fail);

struct msc_run;
struct msc_recorder_opts;
/*
 * ms-record once its options are read and checked (msc_run_check): finds
 * the program run->argv[0] names (launch: on the PATH, and one LD_PRELOAD
 * can reach) and libmemscope.so (but for --poll), opens the output (path,
 * or NULL: see msc_recfile), makes o's recorder and records (msc_run).
 * Sets run's callbacks and o's warn: warnings and the summary line go to
 * stderr unless quiet, what must be said is said whatever quiet says.
 * Returns ms-record's exit status: launched, the program's own (128+N
 * for signal N); attached, 0, 1 when it recorded but could not detach,
 * 2 when it could not attach; else MSC_RUN_EXIT_* (msc_run.h).
 */
int msc_cli_record(struct msc_run *run, struct msc_recorder_opts *o, const char *path, bool quiet);

#endif
