/* SPDX-License-Identifier: MIT */
/*
 * Stopping one thread of the target where a call into it is safe: the
 * checks made before anything stops, the choice of the thread, its ptrace
 * stops and the signals that come meanwhile, and the safe point (outside
 * the allocator and the loader).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libunwind-ptrace.h>

#include "inject_internal.h"
#include "msc_inject.h"
#include "msc_proc.h"
#include "msc_util.h"

#if defined(__x86_64__)

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif
#define SCAN_BYTES (16u << 10)		/* stack words checked for unsafe returns */

static bool is_unsafe(const struct target *t, uint64_t addr)
{
	size_t i;

	for (i = 0; i < t->nunsafe; i++)
		if (addr >= t->unsafe[i].lo && addr < t->unsafe[i].hi)
			return true;
	return false;
}

/* ------------------------------------------------------------ /proc facts */

/* The value of "Key:" in /proc/PID/status, or -1. */
static long status_field(struct msc_procfs *fs, int pid, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	if (msc_proc_read(fs, pid, "status") < 0)
		return -1;
	for (p = fs->buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
	return -1;
}

/* ------------------------------------------------------------- checks */

/* Does this process hold CAP_SYS_PTRACE (bit 19 of its CapEff)? */
static bool has_cap_ptrace(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff >> 19) & 1;
}

int inject_explain_eperm(int pid, struct msc_err *err)
{
	return inject_explain_eperm_tid(pid, pid, false, err);
}

/* The user namespace's inode number that /proc/<who>/ns/user names. */
static unsigned long user_ns(const char *who)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/ns/user", who);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	return strncmp(link, "user:[", 6) == 0 ? strtoul(link + 6, NULL, 10) : 0;
}

/* Our capabilities hold over pid: we are in the first user namespace
 * (its inode number is fixed, PROC_USER_INIT_INO) or in pid's. */
static bool caps_reach(int pid)
{
	char who[16];
	unsigned long ours = user_ns("self");

	snprintf(who, sizeof(who), "%d", pid);
	return ours != 0 && (ours == 0xEFFFFFFDul || ours == user_ns(who));
}

/* Why tracing pid (its thread tid) is refused; seize: it was the
 * PTRACE_SEIZE of tid that was. */
int inject_explain_eperm_tid(int pid, int tid, bool seize, struct msc_err *err)
{
	struct msc_procfs fs;
	struct msc_pstatus ps;
	long scope = -1, tracer, uid = -1;
	int rc = -EPERM;

	msc_procfs_init(&fs, NULL);
	if (msc_proc_read(&fs, 0, "sys/kernel/yama/ptrace_scope") > 0)
		scope = strtol(fs.buf, NULL, 10);
	if (msc_proc_status(&fs, pid, &ps, NULL) == 0)
		uid = ps.uid;
	tracer = status_field(&fs, pid, "TracerPid");
	if (tracer <= 0 && tid != pid)
		tracer = status_field(&fs, tid, "TracerPid");
	if (tracer > 0) {
		struct msc_pstat tr;
		bool named = msc_proc_stat(&fs, (int)tracer, &tr, NULL) == 0;

		if (named && strcmp(tr.comm, "ms-record") == 0)
			msc_err_set(err, -EBUSY,
				    "pid %d is being attached to by another ms-record (pid %ld) at this moment",
				    pid, tracer);
		else if (named)
			msc_err_set(err, rc,
				    "pid %d is already traced by pid %ld (%s); detach that debugger or tracer first",
				    pid, tracer, tr.comm);
		else	/* the tracer (a thread of it) is gone since */
			msc_err_set(err, -EBUSY,
				    "pid %d was being traced by another process (another ms-record, a debugger) at that moment; try again",
				    pid);
	} else if (scope >= 3) {
		msc_err_set(err, rc,
			    "ptrace is disabled on this system (kernel.yama.ptrace_scope = 3, until reboot); ms-record --poll and ms-snap -p still read its memory");
	} else if (seize && geteuid() == 0 && has_cap_ptrace() && caps_reach(pid)) {
		/* A seize refused to one who may trace it: the thread was
		 * traced, by one that has let go since. */
		msc_err_set(err, -EBUSY,
			    "pid %d was being traced by another process (another ms-record, a debugger) at that moment; try again",
			    pid);
	} else if (geteuid() == 0 && has_cap_ptrace() && caps_reach(pid)) {
		/* /proc/PID/mem or exe refused to one who may trace it: another
		 * tracer had it for a moment (two ms-record -p at once, under
		 * load), or a security module says no. */
		msc_err_set(err, -EBUSY,
			    "pid %d was being traced by another process (another ms-record, a debugger) at that moment, or a security module refused; try again",
			    pid);
	} else if (geteuid() != 0 && uid >= 0 && (uid_t)uid != geteuid()) {
		msc_err_set(err, rc,
			    "not permitted to trace pid %d (owned by uid %ld); run as that user or as root",
			    pid, uid);
	} else if (scope >= 1 && geteuid() != 0) {
		msc_err_set(err, rc,
			    "ptrace not permitted (kernel.yama.ptrace_scope = %ld); run as root, or 'sysctl kernel.yama.ptrace_scope=0'",
			    scope);
	} else {
		msc_err_set(err, rc,
			    "not permitted to trace pid %d (needs CAP_SYS_PTRACE: setuid or non-dumpable program, or a container without it)",
			    pid);
	}
	msc_procfs_release(&fs);
	return rc;
}

/* A zombie, or dead (its memory may be gone already). */
static bool ended(const struct msc_pstat *ps)
{
	return ps->state == 'Z' || ps->state == 'X';
}

/* pid has exited, or is exiting. */
bool inject_process_gone(struct msc_procfs *fs, int pid)
{
	struct msc_pstat ps;
	int rc = msc_proc_stat(fs, pid, &ps, NULL);

	return rc == -ESRCH || (rc == 0 && (ended(&ps) || (ps.flags & MSC_PF_EXITING)));
}

/* Whether files a and b (of sizes na, nb) hold the same bytes: another
 * mount namespace's copy of the library is as good as ours. */
static bool same_bytes(const char *a, const char *b, off_t na, off_t nb)
{
	char ba[16384], bb[16384];
	int fa, fb;
	bool same = na == nb;

	if (!same)
		return false;
	fa = open(a, O_RDONLY | O_CLOEXEC);
	fb = open(b, O_RDONLY | O_CLOEXEC);
	while (same && fa >= 0 && fb >= 0) {
		ssize_t n = read(fa, ba, sizeof(ba));

		if (n <= 0) {
			same = n == 0;
			break;
		}
		same = read(fb, bb, (size_t)n) == n && memcmp(ba, bb, (size_t)n) == 0;
	}
	if (fa < 0 || fb < 0)
		same = false;
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

int inject_check_process(int pid, const char *lib, struct msc_procfs *fs, struct msc_err *err)
{
	char path[600];
	struct msc_pstat ps;
	struct elf_file ef;
	long v;
	int rc;

	if (pid <= 0)
		return msc_err_set(err, -ESRCH, "no process %d", pid);
	rc = msc_proc_stat(fs, pid, &ps, NULL);
	if (rc == -ESRCH)
		return msc_err_set(err, rc, "no process %d", pid);
	if (rc < 0)
		return msc_err_set(err, rc, "cannot read /proc/%d/stat: %s", pid, strerror(-rc));
	if (ps.flags & MSC_PF_KTHREAD)
		return msc_err_set(err, -EINVAL, "pid %d is a kernel thread", pid);
	if (ended(&ps))
		return msc_err_set(err, -ESRCH, "pid %d is exiting (%c)", pid, ps.state);
	if (pid == getpid())
		return msc_err_set(err, -EINVAL, "pid %d is this process", pid);
	v = status_field(fs, pid, "TracerPid");
	if (v > 0)
		return inject_explain_eperm(pid, err);
	/* 't' is a tracing stop: a tracer had it when stat was read, and
	 * has let go since (TracerPid was read after). */
	if (ps.state == 't')
		return msc_err_set(err, -EBUSY,
				   "pid %d was being traced by another process (another ms-record, a debugger) at that moment; try again",
				   pid);
	if (ps.state == 'T')
		return msc_err_set(err, -EAGAIN,
				   "pid %d is stopped; continue it first (kill -CONT %d)", pid, pid);
	v = status_field(fs, pid, "Seccomp");
	if (v == 2)
		return msc_err_set(err, -EPERM,
				   "pid %d runs under a seccomp filter, which may kill it for the system calls loading a library needs; ms-record --poll and ms-snap -p still read its memory",
				   pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	rc = inject_elf_open(&ef, path);
	if (rc && inject_process_gone(fs, pid))
		return msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
	if (rc == -EACCES || rc == -EPERM)
		return inject_explain_eperm(pid, err);
	if (rc == -ENOENT)
		return msc_err_set(err, -ESRCH, "pid %d exited", pid);
	if (rc == 0) {
		bool has_interp = ef.has_interp;

		close(ef.fd);
		if (!has_interp)
			return msc_err_set(err, -ENOEXEC,
					   "pid %d is statically linked: no library can be loaded into it; ms-record --poll and ms-snap -p still read its memory",
					   pid);
	}
	if (lib) {
		struct stat here, there;

		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, lib);
		if (!msc_proc_sees(pid, lib) &&
		    (stat(lib, &here) || stat(path, &there) ||
		     !same_bytes(lib, path, here.st_size, there.st_size))) {
			if (inject_process_gone(fs, pid))
				return msc_err_set(err, -ESRCH, "pid %d exited during the attach",
						   pid);
			return msc_err_set(err, -ENOENT,
					   "%s is not visible at the same path in pid %d's mount namespace (a container?); install it there",
					   lib, pid);
		}
	}
	return 0;
}

int msc_inject_check(int pid, const char *lib, struct msc_err *err)
{
	struct msc_procfs fs;
	int rc;

	if (msc_procfs_init(&fs, NULL))
		return msc_err_set(err, -ENAMETOOLONG, "proc root");
	rc = inject_check_process(pid, lib, &fs, err);
	msc_procfs_release(&fs);
	return rc;
}

/* ------------------------------------------------------ choosing a thread */

/*
 * Lower is better.  A thread asleep in a system call that restarts by itself
 * (nanosleep, read, poll...) holds no user-space lock and loses nothing by
 * the stop; futex may be a wait for the allocator's lock (the stack check
 * tells); a running thread is often inside the allocator; some calls return
 * EINTR to a stop and are only taken when nothing else is there.
 */
static int thread_score(struct msc_procfs *fs, int pid, int tid)
{
	char rel[64];
	long nr;

	snprintf(rel, sizeof(rel), "task/%d/syscall", tid);
	if (msc_proc_read(fs, pid, rel) <= 0)
		return 9;
	if (strncmp(fs->buf, "running", 7) == 0)
		return 2;
	nr = strtol(fs->buf, NULL, 10);
	switch (nr) {
	/* signal(7), "Interruption of system calls ... by stop signals". */
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_rt_sigtimedwait:
	case SYS_io_getevents:
		return 5;
	case SYS_futex:
		return 1;
	default:
		return nr < 0 ? 2 : 0;
	}
}

static bool skipped(const int *skip, int nskip, int tid)
{
	int i;

	for (i = 0; i < nskip; i++)
		if (skip[i] == tid)
			return true;
	return false;
}

/* The best thread not in skip[]; 0 when every one is. */
static int choose_thread(struct msc_procfs *fs, int pid, const int *skip, int nskip)
{
	char dir[64];
	struct dirent *de;
	int best = 0, best_score = 100;
	DIR *d;

	if (!skipped(skip, nskip, pid)) {
		best = pid;
		best_score = thread_score(fs, pid, pid);
		if (best_score == 0)
			return pid;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return best;
	while ((de = readdir(d)) != NULL) {
		int tid = atoi(de->d_name), sc;

		if (tid <= 0 || tid == pid || skipped(skip, nskip, tid))
			continue;
		sc = thread_score(fs, pid, tid);
		if (sc < best_score) {
			best = tid;
			best_score = sc;
			if (sc == 0)
				break;
		}
	}
	closedir(d);
	return best;
}

/* ------------------------------------------------------------ ptrace */

static bool is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGSYS || sig == SIGABRT;
}

static void hold_signal(struct target *t, int sig)
{
	unsigned i;

	for (i = 0; i < t->npending; i++)
		if (t->pending[i] == sig)
			return;		/* standard signals do not queue either */
	if (t->npending < ARRAY_SIZE(t->pending))
		t->pending[t->npending++] = sig;
}

/*
 * Has the thread run, or waited for a CPU, since the last look?  A thread
 * on a machine its process's 200 threads keep busy gets a CPU a hundredth
 * of the time: slow, not stuck.  /proc/PID/task/TID/schedstat: time on a
 * CPU and time runnable on a run queue, in ns.
 */
static bool progressed(struct target *t)
{
	char path[64], buf[96];
	unsigned long long run = 0, wait = 0;
	uint64_t seen;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", t->pid, t->tid);
	if (msc_read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return false;
	seen = (uint64_t)run + (uint64_t)wait;
	if (seen == t->sched_seen)
		return false;
	t->sched_seen = seen;
	return true;
}

/*
 * Waits up to us for a tracee to change state.  A ptrace stop sends the
 * tracer SIGCHLD: taken as it comes (msc_inject_call blocks it), the wait
 * ends at once, where a sleep of a fixed length added up to a millisecond
 * to each of an attach's dozen steps, and more where the machine is busy
 * (the tracer then waits its turn to wake).  SIGCHLD only wakes its
 * callers (ms-record looks at its children every round anyway).
 */
static void nap_for_stop(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigtimedwait(&chld, NULL, &ts) < 0 && errno != EAGAIN && errno != EINTR)
		nap_us(us);
}

/*
 * Waits for the thread to stop.  Returns the stop's signal (SIGTRAP for a
 * trap, 0 for our interrupt or a group stop), or a negative errno: -ESRCH
 * when it exited, -ETIMEDOUT.  Signal-delivery stops other than those the
 * caller wants (want_trap) are held for later and the thread resumed.
 */
int inject_wait_stop(struct target *t, int timeout_ms, bool want_trap)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	long nap = 20;

	progressed(t);

	for (;;) {
		int status, sig, event;
		pid_t r = waitpid(t->tid, &status, __WALL | WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -ESRCH;
		if (r == 0) {
			/* timeout_ms without running: stuck (asleep, or in
			 * an uninterruptible wait) */
			if (now_ns() > deadline && !progressed(t))
				return -ETIMEDOUT;
			if (now_ns() > deadline)
				deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
			nap_for_stop(nap);
			if (nap < 1000)
				nap *= 2;
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->seized = false;
			return -ESRCH;
		}
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (event == PTRACE_EVENT_STOP && sig != SIGTRAP) {
			/* A group-stop (SIGSTOP, SIGTSTP...) of the process
			 * came: this thread stops again as it leaves us (the
			 * signal is sent back by inject_let_go).  Meanwhile it runs
			 * our call to its end. */
			hold_signal(t, sig);
			if (!want_trap)
				return 0;
			if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
				return -ESRCH;
			continue;
		}
		if (event == PTRACE_EVENT_STOP)
			return 0;
		if (event)		/* no options set: not expected; go on */
			continue;
		if (want_trap && (sig == SIGTRAP || is_fault(sig)))
			return sig;
		/* A signal-delivery stop: the signal is held for later.  As good
		 * a stop as ours when we asked for one; else go on. */
		hold_signal(t, sig);
		if (!want_trap)
			return 0;
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
			return -ESRCH;
	}
}

int inject_interrupt(struct target *t)
{
	int rc;

	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return -ESRCH;
	rc = inject_wait_stop(t, t->timeout_ms, false);
	if (rc >= 0) {
		t->stopped = true;
		t->stop_t0 = now_ns();
	}
	return rc;
}

/*
 * Lets the stopped thread run (PTRACE_CONT) or go (PTRACE_DETACH), with the
 * signals held meanwhile: one delivered now, the others queued on it.
 */
int inject_let_go(struct target *t, enum __ptrace_request how)
{
	int sig = 0;

	t->stopped_ns += now_ns() - t->stop_t0;
	t->stopped = false;
	while (t->npending > 1)
		syscall(SYS_tgkill, t->pid, t->tid, t->pending[--t->npending]);
	if (t->npending)
		sig = t->pending[--t->npending];
	return ptrace(how, t->tid, 0, (void *)(long)sig) < 0 ? -ESRCH : 0;
}

/* ------------------------------------------------------- safe points */

/*
 * Does addr follow a call instruction, as a return address does?  Other
 * words that point into an unsafe function (a function pointer kept on the
 * stack, the start of fork in an atfork table) are not frames.
 */
static bool after_call(struct target *t, uint64_t addr)
{
	unsigned char b[7];

	if (addr < 7 || mem_read(t, addr - 7, b, sizeof(b)))
		return true;		/* cannot tell: assume it is */
	return b[2] == 0xe8 ||					/* call rel32 */
	       (b[5] == 0xff && (b[6] & 0x38) == 0x10) ||	/* call *reg */
	       (b[4] == 0xff && (b[5] & 0x38) == 0x10) ||	/* call *(reg) + disp8 */
	       (b[1] == 0xff && (b[2] & 0x38) == 0x10) ||	/* call *disp32(...) */
	       (b[0] == 0xff && (b[1] & 0x38) == 0x10);		/* with a SIB byte */
}

/*
 * Unwinds the stopped thread from its CFI (libunwind-ptrace): 1 when a
 * caller is inside an unsafe function, 0 when the walk reached the stack's
 * end without one, -1 when it could not (a frame without unwind
 * information, JIT code): then only the conservative scan can tell.
 */
static int unwound_unsafe(struct target *t)
{
	unw_cursor_t c;
	unw_word_t ip;
	void *upt;
	int ret = -1, n, step;

	if (!t->unw_as) {
		t->unw_as = unw_create_addr_space(&_UPT_accessors, 0);
		if (!t->unw_as)
			return -1;
		unw_set_caching_policy(t->unw_as, UNW_CACHE_GLOBAL);
	}
	upt = _UPT_create(t->tid);
	if (!upt)
		return -1;
	if (unw_init_remote(&c, t->unw_as, upt) < 0)
		goto out;
	for (n = 0; n < 512; n++) {
		step = unw_step(&c);
		if (step == 0) {
			ret = 0;	/* the outermost frame */
			break;
		}
		if (step < 0 || unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			break;
		/* A return address: the call is the byte before it. */
		if (ip && is_unsafe(t, ip - 1)) {
			ret = 1;
			break;
		}
	}
out:
	_UPT_destroy(upt);
	return ret;
}

/* Is the stopped thread at a point where calling dlopen cannot deadlock? */
static bool safe_point(struct target *t, const struct user_regs_struct *r)
{
	uint64_t words[512];
	uint64_t addr = r->rsp, end = r->rsp + SCAN_BYTES;
	int state;

	if (is_unsafe(t, r->rip))
		return false;
	/* _r_debug.r_state (offset 24 on LP64): RT_CONSISTENT is 0. */
	if (t->r_debug && mem_read(t, t->r_debug + 24, &state, sizeof(state)) == 0 && state != 0)
		return false;
	/* Every word of the stack that could be a return into an unsafe
	 * function: a superset of the frames, read in a few page reads. */
	while (addr < end) {
		uint64_t page_end = (addr | 4095) + 1;
		size_t n = (size_t)((page_end < end ? page_end : end) - addr), i;

		if (n > sizeof(words))
			n = sizeof(words);
		n &= ~(size_t)7;
		if (!n || mem_read(t, addr, words, n))
			break;		/* the end of the stack's mapping */
		for (i = 0; i < n / 8; i++)
			if (is_unsafe(t, words[i]) && after_call(t, words[i]))
				/* Maybe a stale word (an old return into malloc
				 * in a caller's unused slot), which would stay
				 * there for good in a sleeping thread: the
				 * frames themselves decide when they can be
				 * walked (slower: a ptrace read per word). */
				return unwound_unsafe(t) == 0;
		addr += n;
	}
	return true;
}

/*
 * Seizes a thread of the process (the best one, choose_thread) and stops
 * it at a safe point: 0, -ESRCH when that thread exited meanwhile (the
 * caller tries another), -ETIMEDOUT, -EAGAIN (no safe point by
 * deadline), -EPERM.
 */
int inject_stop_at_safe_point(struct target *t, struct msc_procfs *fs, struct msc_inject_stats *st,
			      uint64_t deadline)
{
	int skip[64], nskip = 0;

	for (;;) {
		struct user_regs_struct r;
		int rc;

		if (!t->seized) {
			t->tid = choose_thread(fs, t->pid, skip, nskip);
			if (!t->tid)
				t->tid = t->pid;
			st->tid = t->tid;
			if (ptrace(PTRACE_SEIZE, t->tid, 0, 0) < 0)
				return errno == ESRCH ? -ESRCH : -EPERM;
			t->seized = true;
		}
		rc = inject_interrupt(t);
		if (rc < 0)
			return rc;
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
			return -ESRCH;
		if (safe_point(t, &r))
			return 0;
		st->retries++;
		/* Not there: the next best thread, until each was tried (one
		 * may stay inside the allocator: asleep in a signal handler
		 * that interrupted malloc, or in a loop of mallocs while
		 * another thread sleeps in sigwait). */
		if (inject_let_go(t, PTRACE_DETACH) < 0)
			return -ESRCH;
		t->seized = false;
		if (nskip == (int)ARRAY_SIZE(skip))
			nskip = 0;
		skip[nskip++] = t->tid;
		if (now_ns() > deadline)
			return -EAGAIN;
		/* Each tried: 1..25 ms, out of whatever allocation storm
		 * they were in. */
		if (!choose_thread(fs, t->pid, skip, nskip)) {
			nskip = 0;
			nap_us(1000 + (long)((now_ns() / 1000) % 24000));
		}
	}
}

#endif
