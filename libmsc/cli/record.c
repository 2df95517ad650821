/* SPDX-License-Identifier: MIT */
/* ms-record once its options are read, to its exit status: see msc_cli.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msc_cli.h"
#include "msc_inject.h"
#include "msc_recorder.h"
#include "msc_run.h"

struct record {
	struct msc_run *run;
	struct msc_recfile out;
	bool quiet;
};

/* The recorder's and the run's warnings: -q's to keep quiet. */
static void warn_cb(void *ctx, const char *msg)
{
	const struct record *rc = ctx;

	if (!rc->quiet)
		msc_warn("%s", msg);
}

/* What is said whatever -q says. */
static void say_cb(void *ctx, const char *msg)
{
	(void)ctx;
	msc_warn("%s", msg);
}

/* The program runs as pid: an automatic output is named after it. */
static void started_cb(void *ctx, int pid)
{
	struct record *rc = ctx;

	msc_recfile_rename(&rc->out, rc->run->prog, pid);
	if (rc->out.automatic && !rc->quiet)
		msc_warn("recording to %s", rc->out.path);
}

/* The program's path, found as execvp would; NULL after saying why, with
 * *status MSC_RUN_EXIT_NOT_FOUND, or MSC_RUN_EXIT_OWN out of memory. */
static char *find_program(const char *name, int *status)
{
	char *path = msc_find_program(name);
	bool missing = !path && errno == ENOENT;

	*status = path ? 0 : missing ? MSC_RUN_EXIT_NOT_FOUND : MSC_RUN_EXIT_OWN;
	if (missing)
		msc_warn("'%s': command not found", name);
	else if (!path)
		msc_warn("out of memory");
	return path;
}

/* Refuses what LD_PRELOAD cannot reach, before it runs. */
static int check_program(const char *path)
{
	struct msc_err err;
	int ret = msc_preload_check(path, &err);

	if (!ret)
		return 0;
	msc_warn("%s", err.msg);
	return ret == -ENOENT ? MSC_RUN_EXIT_NOT_FOUND : MSC_RUN_EXIT_CANNOT_RUN;
}

int msc_cli_record(struct msc_run *run, struct msc_recorder_opts *o, const char *path, bool quiet)
{
	struct record rc = { .run = run, .quiet = quiet };
	struct msc_recorder *rec = NULL;
	struct msc_writer w;
	struct msc_err err;
	char *prog = NULL, *shim = NULL;
	int status = 0, ret;
	bool recorded = false;

	o->warn = warn_cb;
	o->warn_ctx = &rc;
	run->warn = warn_cb;
	run->say = say_cb;
	run->started = started_cb;
	run->ctx = &rc;
	if (!run->pid) {
		prog = find_program(run->argv[0], &status);
		if (!prog)
			return status;
		status = check_program(prog);
		if (status)
			goto out;
	}
	run->prog = prog;
	if (!run->poll && !(shim = msc_recorder_find_shim())) {
		msc_warn("cannot find libmemscope.so (set MEMSCOPE_SHIM to its path)");
		status = MSC_RUN_EXIT_OWN;
		goto out;
	}
	if (msc_recfile_open(&rc.out, path, run->pid ? NULL : prog, run->pid ? run->pid : getpid(),
			     &err)) {
		msc_warn("%s", err.msg);
		status = MSC_RUN_EXIT_OWN;
		goto out;
	}
	if (msc_writer_init(&w, rc.out.fd, 256 * 1024) || msc_writer_compress_by_name(&w, rc.out.path)) {
		msc_warn("out of memory");
		status = MSC_RUN_EXIT_OWN;
		goto out;
	}
	rec = run->poll ? NULL : msc_recorder_new(o, &w, &err);
	if (!rec && !run->poll) {
		msc_warn("%s", err.msg);
		status = MSC_RUN_EXIT_OWN;
		goto out_writer;
	}
	if (rc.out.automatic && run->pid && !quiet)
		msc_warn("recording to %s", rc.out.path);
	run->shim = shim;
	run->quiet = quiet;
	run->stdout_to_stderr = !rc.out.path && !isatty(1);
	ret = msc_run(run, rec, &w, &err);
	if (ret < 0) {
		msc_warn("%s", err.msg);
		status = run->pid ? 2 : ret == -ENOENT ? MSC_RUN_EXIT_NOT_FOUND : MSC_RUN_EXIT_CANNOT_RUN;
	} else if (run->pid) {
		status = run->status;	/* 1: recorded, but not detached */
	} else {
		/* ms-record exits as the program did. */
		status = WIFSIGNALED(run->status) ? 128 + WTERMSIG(run->status) :
						    WEXITSTATUS(run->status);
	}
	recorded = ret == 0;
out_writer:
	msc_recorder_exit(rec);		/* ms-record exits next */
	status = msc_recfile_close(&rc.out, &w, recorded, run->pid && !run->poll, quiet, status,
				   MSC_RUN_EXIT_OWN);
out:
	run->prog = NULL;
	run->shim = NULL;
	free(prog);
	free(shim);
	return status;
}
