/* SPDX-License-Identifier: MIT */
/*
 * Calling into a running process with ptrace: see msc_inject.h.  The steps
 * and their pitfalls are those of ../shared/notes (section 1); x86_64 only.
 * This file holds the calls themselves (the thread's registers, the call's
 * stack, errno, the trap they return to) and msc_inject_call, which takes
 * the steps in order; inject_internal.h says which file holds the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libunwind-ptrace.h>

#include "inject_internal.h"
#include "msc_inject.h"
#include "msc_proc.h"
#include "msc_util.h"

#if !defined(__x86_64__)
int msc_inject_check(int pid, const char *lib, struct msc_err *err)
{
	(void)lib;
	return msc_err_set(err, -ENOSYS, "attaching to pid %d: only x86_64 is supported", pid);
}

int msc_inject_call(int pid, const char *lib, unsigned flags, const char *entry, const char *arg,
		    int timeout_ms, long *ret, struct msc_inject_stats *st, struct msc_err *err)
{
	(void)flags, (void)entry, (void)arg, (void)timeout_ms, (void)ret, (void)st;
	return msc_inject_check(pid, lib, err);
}
#else

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

#define STACK_SIZE (1u << 20)		/* the call's own stack in the target */
#define XSTATE_MAX (16u << 10)
#define RTLD_NOW_ 0x2
#define RTLD_NOLOAD_ 0x4

/* ------------------------------------------------------ its memory */

static int mem_write(struct target *t, uint64_t addr, const void *buf, size_t n)
{
	ssize_t r = pwrite(t->mem, buf, n, (off_t)addr);

	return r == (ssize_t)n ? 0 : -EIO;
}

/* Why its memory could not be written: it is ending (a zombie, gone, or
 * exiting: PF_EXITING), or something else. */
static int write_failed(struct target *t)
{
	struct msc_procfs fs;
	bool gone = msc_procfs_init(&fs, NULL) == 0 && inject_process_gone(&fs, t->pid);

	msc_procfs_release(&fs);
	if (gone)
		return msc_err_set(t->err, -ESRCH, "pid %d exited during the attach", t->pid);
	return msc_err_set(t->err, -EIO, "pid %d: cannot write its memory through /proc/%d/mem",
			   t->pid, t->pid);
}

/* ------------------------------------------------------- remote calls */

/*
 * The thread runs our calls (dlopen, the library's attach) at nice -20
 * when we may (CAP_SYS_NICE, or RLIMIT_NICE): among 200 threads that keep
 * 2 CPUs busy, at its own nice it gets a 100th of a CPU, and 3 ms of
 * work held it 40-200 ms.  Put back as it was when the calls end (unboost).
 */
static void boost(struct target *t)
{
	int was;

	errno = 0;
	was = getpriority(PRIO_PROCESS, (id_t)t->tid);
	if (was == -1 && errno)
		return;
	if (was > -20 && setpriority(PRIO_PROCESS, (id_t)t->tid, -20) == 0) {
		t->nice_was = was;
		t->boosted = true;
	}
}

static void unboost(struct target *t)
{
	if (t->boosted)
		setpriority(PRIO_PROCESS, (id_t)t->tid, t->nice_was);
	t->boosted = false;
}

/*
 * A thread stopped asleep in a system call goes back into it through user
 * mode (the kernel's restart, as after SIGSTOP and SIGCONT), and a signal
 * that comes before it is there runs its handler first, the call made
 * again after it: `while (!stop) pause();` then sleeps for good (a thread
 * at its own nice among many busy ones waits that long for a CPU).  So it
 * is let go at nice -20, and put back to its own once it sleeps again,
 * 20 ms at most.
 */
static void unboost_asleep(struct target *t, struct msc_procfs *fs)
{
	struct msc_pstat ps;
	int i;

	for (i = 0; t->boosted && t->in_syscall && i < 200; i++) {
		if (msc_proc_stat(fs, t->tid, &ps, NULL) || ps.state != 'R')
			break;
		nap_us(100);
	}
	unboost(t);
}

/* Runs from regs r until the trap; returns 0 with *rax, or -errno. */
static int run_to_trap(struct target *t, struct user_regs_struct *r, uint64_t *rax)
{
	struct user_regs_struct out;
	int rc;

	if (ptrace(PTRACE_SETREGS, t->tid, 0, r) < 0)
		return -ESRCH;
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return -ESRCH;
	t->running_call = true;
	rc = inject_wait_stop(t, t->timeout_ms, true);
	if (rc == -ETIMEDOUT) {
		/* Asleep in the call that long: stop it where it hangs and
		 * put its state back.  Never while it runs on: it would
		 * return to the trap's bytes put back (libc's entry). */
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0 &&
		    inject_wait_stop(t, t->timeout_ms, false) >= 0) {
			t->running_call = false;
			return msc_err_set(t->err, -ETIMEDOUT,
					   "pid %d: the call into the process slept %d ms without returning (a probable deadlock); its thread %d was put back as it was",
					   t->pid, t->timeout_ms, t->tid);
		}
		return msc_err_set(t->err, -ETIMEDOUT,
				   "pid %d: the call into the process slept %d ms without returning and its thread %d cannot be stopped: it is left to finish the call, and will fault when it does",
				   t->pid, t->timeout_ms, t->tid);
	}
	if (rc >= 0)
		t->running_call = false;
	if (rc < 0)
		return msc_err_set(t->err, rc, "pid %d exited during the attach", t->pid);
	if (rc != SIGTRAP)
		return msc_err_set(t->err, -EFAULT,
				   "pid %d: the call into the process faulted (%s); its state was put back",
				   t->pid, strsignal(rc));
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &out) < 0)
		return -ESRCH;
	if (out.rip != t->ret_to + 1)
		return msc_err_set(t->err, -EFAULT, "pid %d: unexpected trap at %#llx", t->pid,
				   (unsigned long long)out.rip);
	*rax = out.rax;
	return 0;
}

static int remote_calln(struct target *t, uint64_t stack_top, uint64_t fn, const uint64_t a[6],
			uint64_t *ret)
{
	struct user_regs_struct r = t->regs;
	uint64_t sp = (stack_top & ~(uint64_t)15) - 8;

	/* At entry (rsp + 8) is 16-aligned, the return address is the int3.
	 * Written once: a call's return leaves its slot as it was. */
	if (t->ret_at != sp) {
		if (mem_write(t, sp, &t->ret_to, sizeof(t->ret_to)))
			return write_failed(t);
		t->ret_at = sp;
	}
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.rcx = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;	/* no syscall restart on the way in */
	r.eflags &= ~0x400ull;		/* DF clear, as the ABI says */
	return run_to_trap(t, &r, ret);
}

static int remote_call(struct target *t, uint64_t stack_top, uint64_t fn, uint64_t a0,
		       uint64_t a1, uint64_t *ret)
{
	const uint64_t a[6] = { a0, a1 };

	return remote_calln(t, stack_top, fn, a, ret);
}

static int remote_syscall(struct target *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
			  uint64_t a3, uint64_t a4, uint64_t a5, uint64_t *ret)
{
	struct user_regs_struct r = t->regs;

	if (!t->trap_written)
		return msc_err_set(t->err, -EFAULT, "pid %d: no system call stub", t->pid);
	r.rip = t->trap;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = a3;
	r.r8 = a4;
	r.r9 = a5;
	return run_to_trap(t, &r, ret);
}

/* Reads a NUL-terminated string of the target (dlerror's). */
static void read_string(struct target *t, uint64_t addr, char *out, size_t n)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; addr && i + 1 < n; i++) {
		if (mem_read(t, addr + i, &out[i], 1) || !out[i])
			break;
	}
	out[i < n ? i : n - 1] = '\0';
}

/* ------------------------------------------------------------- the call */

/* Puts the thread's state back; runs on every path once it was saved. */
static void restore(struct target *t, bool restart_eintr)
{
	struct user_regs_struct r = t->regs;
	struct iovec iov = { t->xstate, t->xstate_len };

	if (t->running_call)
		return;		/* the trap stays for the call it runs */
	if (t->trap_written)
		mem_write(t, t->trap, t->trap_save, sizeof(t->trap_save));
	t->trap_written = false;
	if (t->xstate_len)
		ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov);
	if (restart_eintr) {
		/* As if the call had not been interrupted: run it again. */
		r.rax = r.orig_rax;
		r.rip -= 2;
	}
	ptrace(PTRACE_SETREGS, t->tid, 0, &r);
}

/*
 * The top of the call's stack in the thread's own, when its mapping has
 * OWN_STACK_ROOM below what it uses (past the red zone, and a page for
 * what a signal frame of the kernel's would take), else 0: a stack of
 * its own is mapped then.  Every thread a pthread_create made has 8 MiB
 * by default.  No mmap and munmap in the process: each takes its mmap
 * lock for writing, and among threads that fault pages in and grow their
 * heaps that wait held the stopped thread up to 80 ms.
 */
#define OWN_STACK_ROOM (256u << 10)
/* Once the library is loaded (every attach but the first, and a detach),
 * the calls are dlopen of a loaded library, dlsym and its entry: some KiB
 * (the library's entries use under 2).  The main thread's [stack], often
 * 132 KiB, then has room. */
#define OWN_STACK_ROOM_LOADED (64u << 10)

/* libc's mmap and munmap, for a stack of the calls' own. */
#define SMALL_ROOM (16u << 10)

static uint64_t own_stack(const struct target *t, uint64_t room)
{
	uint64_t top = (t->regs.rsp - 128 - 4096) & ~(uint64_t)63;
	size_t i;

	for (i = 0; i < t->nanon; i++)
		if (t->regs.rsp > t->anon[i].lo && t->regs.rsp <= t->anon[i].hi)
			return top > t->anon[i].lo && top - t->anon[i].lo >= room ? top : 0;
	return 0;
}

/* Where the thread's errno is, and its value (*at 0: unknown). */
static int save_errno(struct target *t, uint64_t top, uint64_t *at, int *val)
{
	int rc;

	*at = 0;
	if (!t->fn[F_ERRNO])
		return 0;
	rc = remote_call(t, top, t->fn[F_ERRNO], 0, 0, at);
	if (rc)
		return rc;
	if (*at && mem_read(t, *at, val, sizeof(*val)))
		*at = 0;
	return 0;
}

/* With the thread stopped at a safe point: the calls, then its state back. */
static int call_in(struct target *t, unsigned flags, const char *entry, const char *arg,
		   long *ret, struct msc_inject_stats *st)
{
	static const unsigned char stub[3] = { 0x0f, 0x05, 0xcc };	/* syscall; int3 */
	struct iovec iov;
	uint64_t stack = 0, top, s_lib, s_entry, s_arg = 0, rv, errno_at = 0, h, fn;
	bool restart = false;
	int saved_errno = 0, rc;
	uint64_t t_call = now_ns();
	size_t len, len_lib, len_entry, len_arg;
	uint64_t small;
	unsigned char b;
	char *strs;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
		return msc_err_set(t->err, -ESRCH, "pid %d exited during the attach", t->pid);
	iov.iov_base = t->xstate;
	iov.iov_len = XSTATE_MAX;
	t->xstate_len = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) == 0 ?
				iov.iov_len : 0;
	/* Interrupted in a system call that returns EINTR to a stop, with no
	 * signal of its own: restart it when letting go. */
	if ((int64_t)t->regs.orig_rax >= 0 && (int64_t)t->regs.rax == -EINTR && !t->npending)
		restart = true;
	t->in_syscall = (int64_t)t->regs.orig_rax >= 0;
	top = own_stack(t, t->lib_loaded ? OWN_STACK_ROOM_LOADED : OWN_STACK_ROOM);
	small = own_stack(t, SMALL_ROOM);
	t->ret_at = 0;
	/* The calls return to an int3 of libc's: nothing to write into its
	 * code, nor to put back after them.  On the thread's own stack, or
	 * on one libc's mmap makes them.  Else to the stub's, whose system
	 * call maps them their stack. */
	if ((top || (small && t->fn[F_MMAP] && t->fn[F_MUNMAP])) && t->int3 &&
	    mem_read(t, t->int3, &b, 1) == 0 && b == 0xcc) {
		t->ret_to = t->int3;
	} else {
		if (mem_read(t, t->trap, t->trap_save, sizeof(t->trap_save)) ||
		    mem_write(t, t->trap, stub, sizeof(stub))) {
			rc = write_failed(t);
			goto out;
		}
		t->trap_written = true;
		t->ret_to = t->trap + 2;
	}
	if (!top && !t->trap_written) {
		const uint64_t a[6] = { 0, STACK_SIZE, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, (uint64_t)-1, 0 };

		/* errno first: a failed mmap sets it. */
		rc = save_errno(t, small - 64, &errno_at, &saved_errno);
		rc = rc ? rc : remote_calln(t, small - 64, t->fn[F_MMAP], a, &stack);
		if (rc)
			goto out;
		if (stack == (uint64_t)-1 || !stack) {
			rc = msc_err_set(t->err, -ENOMEM, "pid %d: mmap in the process failed",
					 t->pid);
			stack = 0;
			goto out;
		}
		top = stack + STACK_SIZE;
	} else if (!top) {
		rc = remote_syscall(t, SYS_mmap, 0, STACK_SIZE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, (uint64_t)-1, 0, &stack);
		if (rc)
			goto out;
		if ((int64_t)stack < 0 && (int64_t)stack > -4096) {
			rc = msc_err_set(t->err, (int)(int64_t)stack, "pid %d: mmap in the process: %s",
					 t->pid, strerror(-(int)(int64_t)stack));
			stack = 0;
			goto out;
		}
		top = stack + STACK_SIZE;
	}
	/* Strings at the top of the call's stack (one write), its frames
	 * below: arg, entry, lib. */
	len_lib = strlen(t->lib) + 1;
	len_entry = strlen(entry) + 1;
	len_arg = arg ? strlen(arg) + 1 : 0;
	len = len_arg + len_entry + len_lib;
	strs = malloc(len);
	if (!strs) {
		rc = msc_err_set(t->err, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(strs, arg ? arg : "", len_arg);
	memcpy(strs + len_arg, entry, len_entry);
	memcpy(strs + len_arg + len_entry, t->lib, len_lib);
	top -= len;
	s_arg = arg ? top : 0;
	s_entry = top + len_arg;
	s_lib = s_entry + len_entry;
	rc = mem_write(t, top, strs, len);
	free(strs);
	if (rc) {
		rc = write_failed(t);
		goto out;
	}
	top -= 64;
	if (!errno_at) {
		rc = save_errno(t, top, &errno_at, &saved_errno);
		if (rc)
			goto out;
	}
	rc = remote_call(t, top, t->fn[F_DLOPEN], s_lib,
			 RTLD_NOW_ | ((flags & MSC_INJECT_LOAD) ? 0 : RTLD_NOLOAD_), &h);
	if (rc)
		goto out;
	if (!h) {
		char msg[300] = "";

		if (t->fn[F_DLERROR] && remote_call(t, top, t->fn[F_DLERROR], 0, 0, &rv) == 0)
			read_string(t, rv, msg, sizeof(msg));
		rc = msc_err_set(t->err, -ENOENT, "pid %d: %s: %s", t->pid,
				 (flags & MSC_INJECT_LOAD) ? "dlopen" : "not loaded",
				 msg[0] ? msg : t->lib);
		goto out;
	}
	rc = remote_call(t, top, t->fn[F_DLSYM], h, s_entry, &fn);
	if (rc)
		goto out;
	if (!fn) {
		rc = msc_err_set(t->err, -ENOENT, "pid %d: %s has no %s", t->pid, t->lib, entry);
		goto out;
	}
	/* errno as it was, before the library's entry, which keeps it: once
	 * that returns the process records, and a write to its memory may
	 * wait behind its threads for the mmap lock. */
	if (errno_at) {
		mem_write(t, errno_at, &saved_errno, sizeof(saved_errno));
		errno_at = 0;
	}
	rc = remote_call(t, top, fn, s_arg, 0, &rv);
	if (rc)
		goto out;
	if (ret)
		*ret = (long)rv;
out:
	if (rc != -ESRCH) {
		uint64_t ignored;

		if (errno_at)
			mem_write(t, errno_at, &saved_errno, sizeof(saved_errno));
		if (stack && t->trap_written)
			remote_syscall(t, SYS_munmap, stack, STACK_SIZE, 0, 0, 0, 0, &ignored);
		else if (stack)
			remote_call(t, small - 64, t->fn[F_MUNMAP], stack, STACK_SIZE, &ignored);
		restore(t, restart);
	}
	if (st) {
		st->call_ns = now_ns() - t_call;
		st->restarted = restart;
	}
	return rc;
}

static int inject_call_once(int pid, const char *lib, unsigned flags, const char *entry,
			    const char *arg, int timeout_ms, long *ret, struct msc_inject_stats *st,
			    struct msc_err *err);

/*
 * A process that execs while it is attached to (a shell's child about to
 * become the program, attached to as it starts) leaves the attach with the
 * memory of an image that is gone: "cannot write its memory", or a libc
 * that is not the program's.  Nothing of the attach is left in the new
 * image, which is attached to from the start again, twice at most.
 */
int msc_inject_call(int pid, const char *lib, unsigned flags, const char *entry, const char *arg,
		    int timeout_ms, long *ret, struct msc_inject_stats *st, struct msc_err *err)
{
	struct msc_image before, after;
	int rc, tries;

	for (tries = 0;; tries++) {
		bool known = msc_proc_image(pid, &before) == 0;

		rc = inject_call_once(pid, lib, flags, entry, arg, timeout_ms, ret, st, err);
		if (st)
			st->image = known ? before : (struct msc_image){ 0 };
		if (!rc || !known || tries == 2 || msc_proc_image(pid, &after) ||
		    msc_image_same(&before, &after))
			return rc;
	}
}

static int inject_call_once(int pid, const char *lib, unsigned flags, const char *entry,
			    const char *arg, int timeout_ms, long *ret, struct msc_inject_stats *st,
			    struct msc_err *err)
{
	struct msc_inject_stats dummy;
	struct target t;
	struct maps_walk mw = { 0 };
	struct msc_procfs fs;
	sigset_t chld, mask_was;
	char path[64];
	uint64_t deadline;
	int rc, tries;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.mem = -1;
	t.lib = lib;
	t.err = err;
	t.timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
	snprintf(t.root, sizeof(t.root), "/proc/%d/root", pid);
	if (msc_procfs_init(&fs, NULL))
		return msc_err_set(err, -ENAMETOOLONG, "proc root");
	/* The tracee's stops come as SIGCHLD: taken by nap_for_stop. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &mask_was);
	rc = inject_check_process(pid, lib, &fs, err);
	if (rc)
		goto out;
	t.xstate = calloc(1, XSTATE_MAX);
	if (!t.xstate) {
		rc = msc_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	mw.t = &t;
	mw.lib = lib;
	/* The file the process finds at that path (in another mount
	 * namespace, a copy of ours). */
	{
		char there[512];

		snprintf(there, sizeof(there), "/proc/%d/root%s", pid, lib);
		mw.have_lib_st = stat(there, &mw.lib_st) == 0 || stat(lib, &mw.lib_st) == 0;
	}
	/*
	 * A dynamic program whose libc is not mapped yet has just started
	 * (its loader is at work: an attach a few ms after a launch) or is
	 * going: looked at again for up to 200 ms, rather than called
	 * statically linked.
	 */
	for (tries = 0;; tries++) {
		mw.nmaps = 0;
		mw.lib_loaded = false;
		t.nunsafe = t.nanon = 0;
		t.libc[0] = t.ldso[0] = '\0';
		rc = msc_proc_maps(&fs, pid, inject_on_mapping, &mw, err);
		if (rc == -ENODATA || rc == -ESRCH) {
			/* A zombie has no mm to read: it ended while we looked. */
			rc = msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
			goto out;
		}
		if (rc) {
			rc = msc_err_set(err, rc, "cannot read /proc/%d/maps: %s", pid,
					 strerror(-rc));
			goto out;
		}
		if (t.libc[0])
			break;
		if (!mw.nmaps || inject_process_gone(&fs, pid)) {
			/* An exiting process's maps are empty: not a static binary. */
			rc = msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
			goto out;
		}
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		if (!inject_elf_is_dynamic(path) || tries >= 40)
			break;
		nap_us(5000);
	}
	if (!t.libc[0] && inject_elf_is_dynamic(path)) {
		rc = msc_err_set(err, -EAGAIN,
				 "pid %d has not mapped its libc yet (starting?); try again", pid);
		goto out;
	}
	if (!t.libc[0]) {
		rc = msc_err_set(err, -ENOEXEC,
				 "pid %d has no libc mapped (statically linked?): no library can be loaded into it; ms-record --poll and ms-snap -p still read its memory",
				 pid);
		goto out;
	}
	if (!(flags & MSC_INJECT_LOAD) && !mw.lib_loaded) {
		rc = msc_err_set(err, -ENOENT, "pid %d has not loaded %s", pid, lib);
		goto out;
	}
	t.lib_loaded = mw.lib_loaded;
	rc = inject_load_symbols(&t, err);
	if (rc)
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	t.mem = open(path, O_RDWR | O_CLOEXEC);
	if (t.mem < 0) {
		rc = errno == EACCES || errno == EPERM ? inject_explain_eperm(pid, err) :
		     errno == ENOENT || errno == ESRCH ? msc_err_set(err, -ESRCH, "pid %d exited", pid) :
			msc_err_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	deadline = now_ns() + (uint64_t)t.timeout_ms * 1000000ull;
	for (tries = 0;; tries++) {
		rc = inject_stop_at_safe_point(&t, &fs, st, deadline);
		if (rc != -ESRCH)
			break;
		/* That thread exited (a thread-per-request server's): another
		 * one, unless the process itself is going. */
		waitpid(t.tid, NULL, __WALL | WNOHANG);
		t.seized = t.stopped = false;
		t.npending = 0;
		if (inject_process_gone(&fs, pid) || tries == 16) {
			rc = msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
			goto out;
		}
	}
	if (rc == -ETIMEDOUT)
		rc = msc_err_set(err, rc, "pid %d: thread %d did not stop (uninterruptible sleep?)", pid,
				 t.tid);
	else if (rc == -EAGAIN)
		rc = msc_err_set(err, rc,
				 "pid %d: no thread was outside the allocator and loader in %d ms; try again",
				 pid, t.timeout_ms);
	else if (rc == -EPERM)
		rc = inject_explain_eperm_tid(pid, t.tid, true, err);
	if (rc)
		goto out;
	boost(&t);
	rc = call_in(&t, flags, entry, arg, ret, st);
out:
	/* Only a stopped tracee can be detached. */
	if (t.seized && !t.running_call && (t.stopped || inject_interrupt(&t) >= 0))
		inject_let_go(&t, PTRACE_DETACH);
	unboost_asleep(&t, &fs);
	st->stopped_ns = t.stopped_ns;
	if (t.mem >= 0)
		close(t.mem);
	free(t.xstate);
	free(t.unsafe);
	free(t.anon);
	if (t.unw_as)
		unw_destroy_addr_space(t.unw_as);
	msc_procfs_release(&fs);
	pthread_sigmask(SIG_SETMASK, &mask_was, NULL);
	return rc;
}

#endif
