/* SPDX-License-Identifier: MIT */
/* Stopping every thread of a process for a moment: see msc_freeze.h. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "msc_freeze.h"
#include "msc_util.h"

_Static_assert(sizeof(struct user_regs_struct) == MSC_FREEZE_REGS * sizeof(uint64_t),
	       "struct user_regs_struct is 27 words on x86_64");

static struct msc_frozen *find(struct msc_freeze *f, int tid)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->t[i].tid == tid)
			return &f->t[i];
	return NULL;
}

/*
 * Waits for tid's stop: 0 stopped (by us, a group stop, or a signal it
 * then holds), -ESRCH when it ended, -ETIMEDOUT.
 */
static int wait_stop(struct msc_freeze *f, struct msc_frozen *t, uint64_t deadline)
{
	struct timespec nap = { 0, 20000 };

	for (;;) {
		struct rusage ru;
		int status;
		pid_t r = wait4(t->tid, &status, __WALL | WNOHANG, &ru);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -ESRCH;
		if (r == 0) {
			if (msc_now_monotonic() > deadline)
				return -ETIMEDOUT;
			nanosleep(&nap, NULL);
			if (nap.tv_nsec < 1000000)
				nap.tv_nsec *= 2;
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (t->tid == f->pid) {
				f->main_exited = true;
				f->main_status = status;
				f->main_usage = ru;
			}
			return -ESRCH;
		}
		if (!WIFSTOPPED(status))
			continue;
		/* Ours or a group stop (PTRACE_EVENT_STOP), else a signal on
		 * its way in: held, and as good a stop. */
		if ((status >> 16) != PTRACE_EVENT_STOP && !t->sig)
			t->sig = WSTOPSIG(status);
		return 0;
	}
}

/* Seizes and stops the threads not stopped yet; returns how many were new. */
static long stop_new(struct msc_freeze *f, uint64_t deadline, struct msc_err *err)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	long added = 0;
	size_t first = f->n, i;

	snprintf(path, sizeof(path), "/proc/%d/task", f->pid);
	d = opendir(path);
	if (!d)
		return msc_err_set(err, -ESRCH, "pid %d exited", f->pid);
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid <= 0 || find(f, tid))
			continue;
		if (MSC_GROW(f->t, f->n + 1, f->cap, 16)) {
			closedir(d);
			return msc_err_set(err, -ENOMEM, "out of memory");
		}
		if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
			if (errno == ESRCH)
				continue;	/* it ended meanwhile */
			closedir(d);
			return msc_err_set(err, -errno, "pid %d: cannot trace thread %d: %s", f->pid,
					   tid, strerror(errno));
		}
		memset(&f->t[f->n], 0, sizeof(f->t[f->n]));
		f->t[f->n++].tid = tid;
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		added++;
	}
	closedir(d);
	for (i = first; i < f->n; i++) {
		struct msc_frozen *t = &f->t[i];
		struct user_regs_struct regs;
		int rc = wait_stop(f, t, deadline);

		if (rc == -ETIMEDOUT)
			return msc_err_set(err, rc, "pid %d: thread %d did not stop", f->pid, t->tid);
		if (rc) {
			t->ended = true;
			continue;
		}
		t->stopped = true;
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) == 0) {
			memcpy(t->regs, &regs, sizeof(regs));
			/* A system call that gave up with EINTR for our stop
			 * alone (no signal of its own): made again at the thaw. */
			t->restart = (int64_t)regs.orig_rax >= 0 && (int64_t)regs.rax == -EINTR && !t->sig;
		}
	}
	return added;
}

int msc_freeze(struct msc_freeze *f, int pid, int timeout_ms, struct msc_err *err)
{
	uint64_t deadline;
	unsigned rounds;
	long added;

	memset(f, 0, sizeof(*f));
	f->pid = pid;
	f->t0 = msc_now_monotonic();
	deadline = f->t0 + (uint64_t)timeout_ms * 1000000ull;
	/* A thread may start another before it stops: list again until a
	 * listing finds none new. */
	for (rounds = 0; rounds < 64; rounds++) {
		added = stop_new(f, deadline, err);
		if (added < 0) {
			msc_thaw(f);
			return (int)added;
		}
		if (!added)
			break;
	}
	if (f->main_exited || !find(f, pid)) {
		msc_thaw(f);
		return msc_err_set(err, -ESRCH, "pid %d exited", pid);
	}
	return 0;
}

uint64_t msc_thaw(struct msc_freeze *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct msc_frozen *t = &f->t[i];

		/* Seized, interrupted, not seen to stop yet (a thread in an
		 * uninterruptible sleep): it stops when it wakes, and must not
		 * stay stopped; a detach needs the stop. */
		if (!t->stopped && !t->ended && wait_stop(f, t, msc_now_monotonic() + 10000000000ull) == 0)
			t->stopped = true;
		if (t->stopped && t->restart) {
			struct user_regs_struct regs;

			memcpy(&regs, t->regs, sizeof(regs));
			regs.rax = regs.orig_rax;
			regs.rip -= 2;		/* back onto the syscall instruction */
			ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
		}
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->sig);
	}
	free(f->t);
	f->t = NULL;
	f->n = f->cap = 0;
	return msc_now_monotonic() - f->t0;
}

size_t msc_freeze_regs(const struct msc_freeze *f, uint64_t *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < f->n; i++) {
		unsigned k;

		if (!f->t[i].stopped)
			continue;
		for (k = 0; k < MSC_FREEZE_REGS && n < max; k++)
			out[n++] = f->t[i].regs[k];
	}
	return n;
}

size_t msc_freeze_sps(const struct msc_freeze *f, uint64_t *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < f->n && n < max; i++) {
		struct user_regs_struct regs;

		if (!f->t[i].stopped)
			continue;
		memcpy(&regs, f->t[i].regs, sizeof(regs));
		out[n++] = regs.rsp;
	}
	return n;
}
