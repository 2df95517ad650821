/* SPDX-License-Identifier: MIT */
/*
 * msc_inject: calling a function of a shared library inside a running
 * process, with ptrace and without gdb (x86_64, glibc or musl).
 *
 * msc_inject_call() stops ONE thread of the target (PTRACE_SEIZE, then
 * PTRACE_INTERRUPT: no SIGSTOP, and the other threads keep running, so they
 * can release the locks the call may need and none of their system calls
 * sees an EINTR).  It waits for a safe point: the thread is not inside the
 * allocator, the dynamic loader, fork, or the library being called (its
 * instruction pointer, and any word of the 16 KiB above its stack pointer,
 * point outside those functions; stale words only cost a retry), and the
 * loader's _r_debug says RT_CONSISTENT.  Then, on a stack of its own mapped
 * in the target, it calls dlopen(lib) (RTLD_NOLOAD unless asked to load),
 * dlsym(entry) and entry(arg), and puts everything back as it was: general
 * and x87/SSE/AVX registers, errno, the bytes of the trap it used (libc's
 * ELF entry point, never executed in a running process), and the
 * interrupted system call, which the kernel restarts as it would after a
 * signal; a call that would have returned EINTR only because of our stop is
 * restarted instead.  Signals that arrive meanwhile are held and delivered
 * when the thread is let go.
 *
 * The thread chosen is a running one if any, else one in a system call that
 * restarts by itself (nanosleep, read, futex...), the main thread first.
 *
 * Failures are one-line messages that say the fix: ptrace not permitted
 * (YAMA ptrace_scope, uid, capability), already traced, a seccomp filter, a
 * static binary, a stopped or exiting process, the library not visible in
 * the target's mount namespace, dlopen's own error, no safe point within the
 * time allowed, and a call that does not return in time (a probable
 * deadlock: the thread's state is put back and the process let go).
 */
#ifndef MSC_INJECT_H
#define MSC_INJECT_H

#include <stdbool.h>
#include <stdint.h>

#include "msc_err.h"
#include "msc_proc.h"

struct msc_inject_stats {
	int tid;			/* the thread that made the call */
	unsigned retries;		/* stops refused as unsafe */
	uint64_t stopped_ns;		/* time that thread was stopped, in all */
	uint64_t call_ns;		/* of which in the call itself */
	bool restarted;			/* its system call was restarted for it */
	struct msc_image image;		/* the image it was made in (zeros:
					 * unknown) */
};

#define MSC_INJECT_LOAD 1u		/* dlopen lib (else it must be loaded already) */

/*
 * Before a launch: whether LD_PRELOAD can put libmemscope.so into the
 * program at path.  0, or a negative errno with err saying why not (-ENOENT
 * missing; not executable, a directory, set-user-ID or set-group-ID, or
 * statically linked).  An unreadable (execute-only) program passes: exec
 * will judge.
 */
int msc_preload_check(const char *path, struct msc_err *err);

/*
 * The program a command name means, as execvp(3) would find it: name itself
 * when it holds a '/', else the first regular executable file of that name
 * in $PATH (/usr/local/bin:/usr/bin:/bin when unset).  Returns a malloc'ed
 * path, or NULL with errno ENOENT (or ENOMEM).
 */
char *msc_find_program(const char *name);

/*
 * Checks what can be checked without stopping anything: the process
 * exists, runs, is dynamically linked, is not traced or sandboxed by
 * seccomp, and sees lib (a path as this process sees it) at the same path.
 * Returns 0, or a negative errno with err saying why and what to do.
 */
int msc_inject_check(int pid, const char *lib, struct msc_err *err);

/*
 * In process pid: h = dlopen(lib, RTLD_NOW [| RTLD_NOLOAD]); f = dlsym(h,
 * entry); *ret = f(arg) (a function long entry(const char *)); arg may be
 * NULL.  timeout_ms bounds the wait for a safe point and, separately, the
 * time the call may sleep without running (0: 5000): a thread that runs,
 * or waits for a CPU, is never cut short, however long it takes on a busy
 * machine.  Returns 0, or a negative errno with err filled; the target is
 * left running either way.  st (may be NULL) gets what it cost.  The
 * thread's errno is put back before f is called: f must keep it.
 */
int msc_inject_call(int pid, const char *lib, unsigned flags, const char *entry, const char *arg,
		    int timeout_ms, long *ret, struct msc_inject_stats *st, struct msc_err *err);

#endif
