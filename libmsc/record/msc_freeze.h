/* SPDX-License-Identifier: MIT */
/*
 * msc_freeze: every thread of a running process stopped, for as long as it
 * takes to read its memory, then let go as if nothing happened (x86_64).
 *
 * Each thread is stopped with PTRACE_SEIZE and PTRACE_INTERRUPT: no SIGSTOP
 * that a parent or a shell could see.  Threads created while the others
 * stop are found by listing /proc/PID/task again until a listing finds no
 * new one.  A signal that arrives meanwhile is held and delivered when the
 * thread is let go; a system call that returned EINTR only because of the
 * stop (epoll_wait, sigtimedwait...) is made again instead.
 */
#ifndef MSC_FREEZE_H
#define MSC_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "msc_err.h"

#define MSC_FREEZE_REGS 27		/* struct user_regs_struct, in words */

struct msc_frozen {
	int tid;
	int sig;			/* a signal held, delivered at the thaw */
	bool stopped;
	bool ended;			/* it exited while being stopped */
	bool restart;			/* its system call is made again */
	uint64_t regs[MSC_FREEZE_REGS];
};

struct msc_freeze {
	int pid;
	struct msc_frozen *t;
	size_t n, cap;
	uint64_t t0;			/* monotonic ns of the first stop */
	/* The process ended while it was being stopped: its wait status and
	 * usage, taken by the wait for the stop (our child's: the caller
	 * hands them on to whoever reaps it). */
	bool main_exited;
	int main_status;
	struct rusage main_usage;
};

/*
 * Stops every thread of pid.  0, or a negative errno with err set (-ESRCH:
 * it ended; -EPERM: not allowed to trace it), every thread let go again.
 */
int msc_freeze(struct msc_freeze *f, int pid, int timeout_ms, struct msc_err *err);

/* Lets every stopped thread go; returns the ns the first was stopped. */
uint64_t msc_thaw(struct msc_freeze *f);

/* The register values of every stopped thread into out (max words):
 * roots for a leak scan.  Returns the count. */
size_t msc_freeze_regs(const struct msc_freeze *f, uint64_t *out, size_t max);

/* The stack pointer of every stopped thread into out (max); returns the count. */
size_t msc_freeze_sps(const struct msc_freeze *f, uint64_t *out, size_t max);

#endif
