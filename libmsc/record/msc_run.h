/* SPDX-License-Identifier: MIT */
/*
 * msc_run: ms-record's three ways of recording behind one call.
 *
 *   launch   the program runs with libmemscope.so preloaded, from a vfork
 *	      (the environment: LD_PRELOAD led by the shim, MEMSCOPE_*);
 *	      a signal sent to ms-record alone is passed on to it;
 *   attach   the shim is loaded into the running pid (ptrace, msc_inject.h)
 *	      and unloaded again at a signal, the duration or its end;
 *   poll     nothing is loaded: /proc is sampled every interval.
 *
 * The call blocks the signals that would end ms-record and takes them
 * through a signalfd (the program gets the mask and SIGPIPE disposition
 * ms-record was given), and returns when the recording is over; it says
 * its summary line through warn.  The output, the recorder's creation and
 * the exit status are the tool's.
 */
#ifndef MSC_RUN_H
#define MSC_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "msc_err.h"
#include "msc_hookspec.h"
#include "msc_ndjson.h"
#include "msc_recorder.h"

/* ms-record's own exit statuses, as env(1)'s: it failed; the program
 * cannot be run (or profiled); it was not found. */
#define MSC_RUN_EXIT_OWN 125
#define MSC_RUN_EXIT_CANNOT_RUN 126
#define MSC_RUN_EXIT_NOT_FOUND 127

struct msc_run {
	const struct msc_recorder_opts *opts;	/* the recorder's (interval, sample) */
	int pid;			/* attach to it or poll it; 0: launch */
	bool poll;			/* with pid: /proc only, no recorder */
	uint64_t duration_ns;		/* with pid: when to stop, 0: at a signal */
	char *prog;			/* launch: the program's path */
	char **argv;			/* and its arguments */
	const char *shim;		/* libmemscope.so's path (not for poll) */
	/* launch: --hook's specs (msc_run_add_hook), for MEMSCOPE_HOOKS */
	struct msc_hookspec hook[MSC_HOOK_MAX];
	unsigned nhooks;
	char hooks[MSC_HOOK_MAX * 96];	/* the specs as the shim reads them */
	bool quiet;			/* launch: MEMSCOPE_QUIET for the shim */
	int mark_signal;		/* --mark-signal: it marks the recording
					 * (msc_run_mark_signal), 0: none */
	unsigned signal_marks;		/* marks it made */
	bool stdout_to_stderr;		/* launch: the program's output goes to our
					 * stderr (the records are on our stdout) */
	void (*orig_pipe)(int);		/* SIGPIPE's disposition as we were given it */
	/* launch: the program runs as pid (before anything is recorded) */
	void (*started)(void *ctx, int pid);
	/* what is said whatever -q says: "pid N is stopped: ..." */
	void (*say)(void *ctx, const char *msg);
	/* -q's: the summary line */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;

	/* out: launch, the program's wait status; attach, 1 when it could
	 * not be detached (its hooks stay in), else 0 */
	int status;
};

/*
 * Adds a --hook spec ("NAME=alloc,size=arg2"): 0, or -EINVAL with the
 * usage error's message in err.
 */
int msc_run_add_hook(struct msc_run *run, const char *spec, struct msc_err *err);

/*
 * --mark-signal's signal: a name ("USR2", "SIGUSR2") or number, one of
 * those ms-record would otherwise pass on or end at (HUP, QUIT, USR1,
 * USR2, ALRM, VTALRM, PROF); 0, or -EINVAL with the usage error in err.
 */
int msc_run_mark_signal(struct msc_run *run, const char *arg, struct msc_err *err);

/*
 * Checks the options of run and o together and settles what follows from
 * them (attached: no reachability scan, --poll's one-second interval when
 * interval_set is false; sampled: no scan, seed, MEMSCOPE_SEED's value or
 * NULL).  has_prog: a program was given.  0; -EINVAL with a usage error's
 * message; -ERANGE for a bad seed.
 */
int msc_run_check(struct msc_run *run, struct msc_recorder_opts *o, bool has_prog,
		  bool interval_set, const char *seed, struct msc_err *err);

/*
 * Records as run says: through rec (NULL for poll) to w.  0 when it
 * recorded; a negative errno when it could not, with err's message:
 * -ENOENT from launch, the program not found by execve; other launch
 * failures; an attach refused; a process that cannot be read.
 */
int msc_run(struct msc_run *run, struct msc_recorder *rec, struct msc_writer *w,
	    struct msc_err *err);

#endif
