/* SPDX-License-Identifier: MIT */
/* ms-record's output file, from its opening to what is left of it: see msc_cli.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_cli.h"
#include "msc_recorder.h"

int msc_recfile_open(struct msc_recfile *f, const char *path, const char *prog, int pid,
		     struct msc_err *err)
{
	memset(f, 0, sizeof(*f));
	f->fd = 1;
	/* Records on a terminal help nobody: they go to a file, as heaptrack's
	 * do (named after the program's pid once it runs). */
	f->automatic = !path && isatty(1);
	f->path = f->automatic ? msc_recorder_default_path(f->auto_path, sizeof(f->auto_path), prog,
							    pid) :
				 path;
	f->created = f->path && !f->automatic && access(f->path, F_OK) != 0;
	if (f->path && (f->fd = msc_open_output_keep(f->path, err)) < 0)
		return -1;
	return 0;
}

void msc_recfile_rename(struct msc_recfile *f, const char *prog, int pid)
{
	char named[PATH_MAX];

	if (!f->automatic)
		return;
	msc_recorder_default_path(named, sizeof(named), prog, pid);
	if (rename(f->auto_path, named) == 0)
		memcpy(f->auto_path, named, sizeof(named));
}

int msc_recfile_close(struct msc_recfile *f, struct msc_writer *w, bool recorded, bool drop_header,
		      bool quiet, int status, int fail)
{
	const char *name = f->path ? f->path : "standard output";
	bool said = w->error && !quiet;	/* the recorder said it already */
	int ret = msc_writer_release(w);
	struct stat st;

	/*
	 * A recording cut short must not pass for a whole one, -q or not:
	 * ms-record's own failure, the program's status in the message.  Not
	 * when the reader went away (ms-record ./app | head).
	 */
	if (ret && ret != -EPIPE) {
		if (recorded)
			msc_warn("write error on %s: %s: the recording is incomplete "
				 "(the program's exit status was %d)",
				 name, strerror(-ret), status);
		else if (!said)
			msc_warn("write error on %s: %s", name, strerror(-ret));
		status = fail;
	}
	/* What was written replaces the file's old content; nothing written,
	 * the file is left as it was.  A file that was not there is not left
	 * behind when nothing was recorded: empty, or (drop_header) holding
	 * only what a refused attach wrote before the refusal (its header). */
	if (f->fd != 1 && msc_output_cut(f->fd) < 0 && !status) {
		msc_warn("cannot truncate %s: %s", f->path, strerror(errno));
		status = fail;
	}
	if (f->created && !recorded && fstat(f->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (!st.st_size || drop_header))
		unlink(f->path);
	if (f->fd != 1)
		close(f->fd);
	if (f->automatic && !recorded)
		unlink(f->path);	/* nothing was recorded: nothing to keep */
	else if (f->automatic && !quiet)
		msc_warn("ms-report %s shows the report", f->path);
	return status;
}
