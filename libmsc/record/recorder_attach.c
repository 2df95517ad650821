/* SPDX-License-Identifier: MIT */
/* ms-record -p: attaching to a running process and detaching (msc_recorder.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_collect.h"
#include "msc_inject.h"
#include "msc_proc.h"
#include "msc_recorder.h"
#include "msc_util.h"
#include "recorder_internal.h"

/* ----------------------------------------------------------- attaching */

/* A call into the target, made by a thread while this one serves the
 * collector: the call may wait on it (the shim's handshake, a ring that is
 * full). */
struct remote {
	int pid;
	const char *lib, *entry, *arg;
	unsigned flags;
	long ret;
	int rc;
	struct msc_inject_stats st;
	struct msc_err err;
	int done;
};

static void *remote_thread(void *arg)
{
	struct remote *c = arg;

	c->rc = msc_inject_call(c->pid, c->lib, c->flags, c->entry, c->arg, 0, &c->ret, &c->st,
				&c->err);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int remote(struct msc_recorder *r, struct remote *c, struct msc_err *err)
{
	pthread_t th;
	int rc;

	rc = pthread_create(&th, NULL, remote_thread, c);
	if (rc)
		return msc_err_set(err, -rc, "cannot start a thread: %s", strerror(rc));
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		msc_collector_poll(r->col, -1, 1);
	pthread_join(th, NULL);
	if (c->rc) {
		*err = c->err;
		return c->rc;
	}
	return 0;
}

/*
 * The library goes on with an attach or a detach on a thread of its own
 * (shim/attach.c): its result, n bytes at addr in the process whose first
 * int is 0 until it is known, is read while the collector serves the
 * session.  0, or -ESRCH (the process is gone), -EIO (unreadable),
 * -ETIMEDOUT (5 s).
 */
#define RESULT_TIMEOUT_NS 5000000000ull

static int read_result(struct msc_recorder *r, int pid, uint64_t addr, void *buf, size_t n,
		       const struct msc_image *im)
{
	uint64_t t0 = msc_now_monotonic();
	char path[64];
	int fd, rc = 0, first;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EIO;
	for (;;) {
		if (pread(fd, buf, n, (off_t)addr) != (ssize_t)n) {
			struct msc_image now;

			if (!msc_proc_has_memory(pid))
				rc = -ESRCH;
			else if (im && im->ino && msc_proc_image(pid, &now) == 0 &&
				 !msc_image_same(im, &now))
				rc = -ENOEXEC;
			else
				rc = -EIO;
			break;
		}
		memcpy(&first, buf, sizeof(first));
		if (first)
			break;
		if (msc_now_monotonic() - t0 > RESULT_TIMEOUT_NS) {
			rc = -ETIMEDOUT;
			break;
		}
		msc_collector_poll(r->col, -1, 1);
	}
	close(fd);
	return rc;
}

/* The attach's result, an int: 1 recording, or -errno.  0, or -errno with
 * err said (-ENOEXEC: the process exec'd meanwhile). */
static int wait_started(struct msc_recorder *r, int pid, uint64_t addr, const struct msc_image *im,
			struct msc_err *err)
{
	int status = 0, rc = read_result(r, pid, addr, &status, sizeof(status), im);

	if (rc)
		status = rc;
	if (status == 1)
		return 0;
	if (status == -ESRCH)
		return msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
	if (status == -ENOEXEC)
		return msc_err_set(err, -ENOEXEC, "pid %d executed another program during the attach",
				   pid);
	if (status == -ETIMEDOUT)
		return msc_err_set(err, -ETIMEDOUT,
				   "pid %d: libmemscope.so did not start recording within %llu s (the process stopped?)",
				   pid, RESULT_TIMEOUT_NS / 1000000000ull);
	if (status == -EIO)
		return msc_err_set(err, -EIO, "pid %d: cannot read how libmemscope.so started", pid);
	return msc_err_set(err, status, "pid %d: libmemscope.so could not start: %s", pid,
			   strerror(-status));
}

/* Loads the library (or finds it loaded) and has it start its session:
 * 0 once the process connected, or the error said. */
static int start_session(struct msc_recorder *r, struct remote *c, struct msc_err *err)
{
	int rc, pid = c->pid;

	rc = remote(r, c, err);
	if (rc)
		return rc;
	switch (c->ret > 0 ? 1 : c->ret) {
	case 0:
		break;
	case 1:
		/* Started on the library's own thread: its result. */
		rc = wait_started(r, pid, (uint64_t)c->ret, &c->st.image, err);
		if (rc)
			return rc;
		break;
	case -EALREADY:
		return msc_err_set(err, -EALREADY, "pid %d is recorded already (by another ms-record)",
				   pid);
	case -EBUSY:
		/* Another ms-record's attach is under way in the library. */
		return msc_err_set(err, -EBUSY,
				   "pid %d is being attached to by another ms-record at this moment", pid);
	case -ECONNRESET:
		return msc_err_set(err, -ECONNRESET,
				   "pid %d: libmemscope.so could not start: ms-record closed its connection before welcoming it",
				   pid);
	default:
		return msc_err_set(err, (int)c->ret, "pid %d: libmemscope.so could not start: %s", pid,
				   strerror((int)-c->ret));
	}
	if (!r->main_seen)
		return msc_err_set(err, -ECONNREFUSED, "pid %d did not connect to ms-record", pid);
	return 0;
}

/*
 * After an exec that came during the attach: the old image's session, if
 * it began, is ended (the collector sees its memory go) and forgotten with
 * all it wrote, which was held.  0, or -ETIMEDOUT.
 */
static int restart(struct msc_recorder *r)
{
	uint64_t t0 = msc_now_monotonic();

	while (msc_recorder_sessions(r)) {
		if (msc_now_monotonic() - t0 > 1000000000ull)
			return -ETIMEDOUT;
		msc_collector_poll(r->col, -1, 10);
	}
	r->main_seen = r->main_ended = false;
	r->main_status = 0;
	memset(&r->sum, 0, sizeof(r->sum));
	r->w->len = 0;		/* held: nothing of it went out */
	msc_stacks_out_release(&r->stacks.out);
	return msc_stacks_out_init(&r->stacks.out) ? -ENOMEM : 0;
}

int msc_recorder_attach(struct msc_recorder *r, int pid, const char *shim,
			struct msc_inject_stats *st, struct msc_err *err)
{
	struct msc_procfs fs;
	struct msc_pstatus ps;
	char exe[256] = "", path[64];
	ssize_t n;
	int rc, tries;

	rc = msc_inject_check(pid, shim, err);
	if (rc)
		return rc;
	/* A container's process, a service's with a private /tmp. */
	rc = msc_collector_listen_for(r->col, pid, err);
	if (rc)
		return rc;
	if (msc_procfs_init(&fs, NULL) == 0 && msc_proc_status(&fs, pid, &ps, NULL) == 0)
		msc_collector_size_rings(r->col, ps.threads);
	else
		ps.uid = geteuid();
	if (ps.uid != geteuid() && geteuid() == 0) {
		rc = msc_collector_allow_uid(r->col, ps.uid);
		if (rc) {
			msc_procfs_release(&fs);
			return msc_err_set(err, rc, "cannot give uid %u the socket: %s", ps.uid,
					   strerror(-rc));
		}
	}
	msc_procfs_release(&fs);
	free(r->shim);
	r->shim = strdup(shim);
	if (!r->shim)
		return msc_err_set(err, -ENOMEM, "out of memory");
	r->attached = true;
	r->main_pid = pid;
	for (tries = 0;; tries++) {
		struct remote c = { .pid = pid, .lib = shim, .entry = "memscope_attach",
				    .arg = msc_collector_socket(r->col), .flags = MSC_INJECT_LOAD };

		if (tries && (rc = msc_inject_check(pid, shim, err)))
			return rc;
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		n = readlink(path, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		/* Held until the process is ours: a refused attach writes
		 * nothing. */
		r->held = true;
		recorder_write_header(r, pid, 0, exe, NULL);
		r->main_header = true;
		rc = start_session(r, &c, err);
		if (st)
			*st = c.st;
		if (rc && !r->w->bytes) {
			/* An exec after the library was loaded: the new image
			 * is attached to afresh. */
			if (rc == -ENOEXEC && tries < 2 && restart(r) == 0)
				continue;
			r->held = false;
			r->w->len = 0;
			r->output_gone = true;
			return rc;
		}
		break;
	}
	r->held = false;
	recorder_flush(r);
	if (rc)
		return rc;
	/* Only once the process is ours: the live socket's name is the
	 * pid's, and a refused second ms-record took it over from the one
	 * recording it (whose snapshots then said "not recorded"). */
	recorder_live_start(r, pid);
	return 0;
}

bool msc_recorder_main_stopped(const struct msc_recorder *r)
{
	struct msc_procfs fs;
	struct msc_pstat ps;
	bool stopped = false;

	if (!r->main_pid || msc_procfs_init(&fs, NULL))
		return false;
	if (msc_proc_stat(&fs, r->main_pid, &ps, NULL) == 0)
		stopped = ps.state == 'T' || ps.state == 't';
	msc_procfs_release(&fs);
	return stopped;
}

int msc_recorder_detach(struct msc_recorder *r, struct msc_inject_stats *st, struct msc_err *err)
{
	/* The library by the path the target loaded it with. */
	struct remote c = { .pid = r->main_pid, .lib = r->shim, .entry = "memscope_detach_start" };
	struct {
		int done, pad;
		long result;
	} res = { 0, 0, 0 };
	int rc;

	if (!r->attached || r->main_ended || !r->main_seen)
		return 0;
	rc = remote(r, &c, err);
	if (rc == -ENOENT && strstr(err->msg, "has no memscope_detach_start")) {
		/* A library of before it (loaded, then the file replaced). */
		c = (struct remote){ .pid = r->main_pid, .lib = r->shim, .entry = "memscope_detach" };
		rc = remote(r, &c, err);
	}
	if (st)
		*st = c.st;
	/* Recording stopped; the library's thread writes the slots back. */
	if (rc == 0 && c.ret > 4096 && strcmp(c.entry, "memscope_detach_start") == 0) {
		rc = read_result(r, r->main_pid, (uint64_t)c.ret, &res, sizeof(res), NULL);
		if (rc == 0)
			c.ret = res.result;
		else if (rc == -ESRCH)
			rc = 0;		/* it ended: nothing is left hooked */
		else
			rc = msc_err_set(err, rc, "pid %d: libmemscope.so did not say it wrote its slots back: %s",
					 r->main_pid, strerror(-rc));
	}
	/* Stopped (SIGSTOP, a debugger's), or no thread outside the
	 * allocator for now: the caller tries again (once it continues),
	 * recording meanwhile.  Not only while it is still stopped: one that
	 * a SIGCONT woke between the call and now would otherwise end the
	 * session with its slots still hooked. */
	if (rc == -EAGAIN)
		return rc;
	if (rc == 0 && c.ret < 0)
		rc = msc_err_set(err, -EBUSY,
				 "pid %d: %ld relocation slots could not be written back: they still call libmemscope.so, which records nothing now",
				 r->main_pid, -c.ret);
	/* Whatever it committed is drained; the session ends either way. */
	msc_collector_finish(r->col, rc ? "interrupted" : "detached");
	return rc;
}

void msc_recorder_attach_line(const struct msc_recorder_summary *s, int pid, bool detached,
			      const struct msc_inject_stats *at, const struct msc_inject_stats *de,
			      char *buf, size_t n)
{
	char live[32], counts[128], how[96];

	if (detached)
		snprintf(how, sizeof(how), "detached (thread stopped %.1f ms to attach, %.1f ms to detach)",
			 at->stopped_ns / 1e6, de->stopped_ns / 1e6);
	else if (s->execd)
		snprintf(how, sizeof(how),
			 "it executed another program, which is not recorded (thread stopped %.1f ms to attach)",
			 at->stopped_ns / 1e6);
	else
		snprintf(how, sizeof(how), "the process ended (thread stopped %.1f ms to attach)",
			 at->stopped_ns / 1e6);
	snprintf(buf, n, "pid %d: %s, %s in %llu block%s live at the end (fate unknown), %llu frees of older blocks ignored%s; %s",
		 pid, recorder_counts_of(counts, sizeof(counts), s),
		 msc_fmt_size(live, sizeof(live), (int64_t)s->live),
		 (unsigned long long)s->live_blocks, s->live_blocks == 1 ? "" : "s",
		 (unsigned long long)s->unknown_frees, s->lost ? " (events lost)" : "", how);
}
