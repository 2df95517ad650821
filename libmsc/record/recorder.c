/* SPDX-License-Identifier: MIT */
/* The recording engine: see msc_recorder.h. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "msc_agg.h"
#include "msc_format.h"
#include "msc_freeze.h"
#include "msc_fsafe.h"
#include "msc_inject.h"
#include "msc_live.h"
#include "msc_proc.h"
#include "msc_recorder.h"
#include "msc_records.h"
#include "msc_scan.h"
#include "msc_stacks.h"
#include "msc_stream.h"
#include "msc_util.h"
#include "recorder_internal.h"

/* How long an allocation or free that came out of order waits for the
 * other thread's event it belongs after (msc_agg_push): out-of-order
 * execution moves an RDTSC by a microsecond or so. */
#define HOLD_WINDOW_NS 200000

void recorder_warn(void *ctx, const char *fmt, ...)
{
	struct msc_recorder *r = ctx;
	char msg[600];
	va_list ap;

	if (!r->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o.warn(r->o.warn_ctx, msg);
}

void recorder_flush(struct msc_recorder *r)
{
	if (r->held)
		return;
	if (r->w->error) {
		if (!r->output_gone && r->w->error != EPIPE)
			recorder_warn(r, "write error: %s (the program keeps running)", strerror(r->w->error));
		r->output_gone = true;
		r->w->len = 0;
		return;
	}
	msc_writer_flush(r->w);
}

/* ---------------------------------------------------------------- header */

static void argv_arg(const char *arg, size_t len, void *w)
{
	msc_w_strn(w, NULL, arg, len);
}

static void write_argv_of(struct msc_writer *w, int pid, char **argv)
{
	int i;

	msc_w_arr(w, "argv");
	if (argv) {
		for (i = 0; argv[i]; i++)
			msc_w_str(w, NULL, argv[i]);
	} else {
		struct msc_procfs fs;

		/* A followed process: what it runs, from /proc (it may be gone). */
		if (msc_procfs_init(&fs, NULL) == 0)
			msc_proc_cmdline(&fs, pid, argv_arg, w);
		msc_procfs_release(&fs);
	}
	msc_w_arr_end(w);
}

void recorder_write_header(struct msc_recorder *r, int pid, int ppid, const char *exe, char **argv)
{
	struct msc_writer *w = r->w;

	if (r->output_gone)
		return;
	msc_stream_header_begin(w, "ms-record", r->o.mode);
	msc_w_i64(w, "pid", pid);
	if (ppid > 0)
		msc_w_i64(w, "ppid", ppid);
	if (exe && exe[0])
		msc_w_str(w, "exe", exe);
	write_argv_of(w, pid, argv);
	msc_w_str(w, "clock", "ns");
	msc_w_obj(w, "options");
	msc_w_bool(w, "events", r->o.events);
	msc_w_u64(w, "interval", r->o.interval_ms);
	msc_w_u64(w, "depth", r->o.depth);
	msc_w_str(w, "unwind", r->o.unwind_name);
	msc_w_bool(w, "follow", r->o.follow);
	msc_w_bool(w, "scan", r->o.scan);
	msc_w_bool(w, "lossy", r->o.lossy);
	msc_w_bool(w, "free_stacks", r->o.free_stacks);
	if (r->o.sample)
		msc_w_u64(w, "sample", r->o.sample);
	if (r->o.nalloc_fns) {
		unsigned i;

		/* ms-report and ms-filter attribute past them as past strdup */
		msc_w_arr(w, "alloc_fns");
		for (i = 0; i < r->o.nalloc_fns; i++)
			msc_w_str(w, NULL, r->o.alloc_fns[i]);
		msc_w_arr_end(w);
	}
	msc_w_obj_end(w);
	msc_w_end(w);
	recorder_flush(r);
}

/* ------------------------------------------------------- threads, memory */

static void own_range(struct rproc *pr, uint64_t start, uint64_t size)
{
	if (!start || !size || MSC_GROW(pr->own, pr->nown + 1, pr->capown, 16))
		return;
	pr->own[pr->nown++] = (struct msc_range){ start, start + size };
}

static void thread_seen(struct rproc *pr, const struct msc_cevent *ev)
{
	uint64_t lo = ev->v[3], hi = ev->v[1];
	size_t i;

	/* glibc reuses the stacks of exited threads. */
	for (i = 0; i < pr->nthreads; i++)
		if (pr->threads[i].dead && lo && pr->threads[i].lo < hi && lo < pr->threads[i].hi)
			pr->threads[i] = pr->threads[--pr->nthreads], i--;
	if (MSC_GROW(pr->threads, pr->nthreads + 1, pr->capthreads, 16))
		return;
	pr->threads[pr->nthreads++] = (struct thread){ ev->tid, false, lo, hi, ev->v[4] };
}

static void thread_gone(struct rproc *pr, uint32_t tid)
{
	size_t i;

	for (i = pr->nthreads; i-- > 0;)
		if (pr->threads[i].tid == tid && !pr->threads[i].dead) {
			pr->threads[i].dead = true;
			break;
		}
}

/* The process's rss now, or 0 when it cannot be read (it has gone). */
static uint64_t rss_of(int pid)
{
	struct msc_procfs fs;
	struct msc_pstatm st;
	uint64_t rss = 0;

	if (msc_procfs_init(&fs, NULL))
		return 0;
	if (msc_proc_statm(&fs, pid, &st, NULL) == 0 && st.size)
		rss = st.resident;
	msc_procfs_release(&fs);
	return rss;
}

/* ------------------------------------------------------------ callbacks */

static bool on_attach(void *ctx, struct msc_cproc *p)
{
	struct msc_recorder *r = ctx;
	struct rproc *pr;
	bool is_main = p->pid == r->main_pid;

	/* Without --follow only the main process (and what it execs in
	 * place) is recorded. */
	if (!is_main && !r->o.follow)
		return false;
	struct msc_agg_opts ao = {
		/* Blocks from before us can be freed: a forked child frees
		 * its parent's, an attached process those of before the
		 * attach, and in lossy mode an allocation may be lost.  Such
		 * frees are no errors. */
		.unseen_frees_ok = p->forked || r->attached || r->o.lossy || r->o.sample,
		/* Sampled: what each recorded block counts for (msc_agg.h). */
		.sample = r->o.sample,
		/* Allocations and frees of different threads that came in the
		 * wrong order (their RDTSC stamps, msc_agg.h) are put back in
		 * order. */
		.hold_window_ns = HOLD_WINDOW_NS,
	};

	pr = calloc(1, sizeof(*pr));
	if (!pr || msc_agg_init(&pr->agg, &ao)) {
		free(pr);
		return false;
	}
	pr->pid = p->pid;
	p->user = pr;
	msc_timeline_init(&pr->timeline);
	if (r->o.interval_ms)
		pr->last_rss = rss_of(p->pid);
	else
		pr->timeline.off = true;
	if (is_main) {
		r->main_seen = true;
		r->main_pr = pr;
	}
	/* The main process's first header went out when it was named. */
	if (is_main && r->main_header)
		r->main_header = false;
	else
		recorder_write_header(r, p->pid, p->ppid, p->exe, NULL);
	recorder_mark(r, pr, p->pid, recorder_now(r, &pr->agg), r->attached && is_main ? "attach" : "start",
		      "ms-record", 0);
	return true;
}

void recorder_write_mark(struct msc_writer *w, int pid, const struct rmark *m, uint32_t stack)
{
	msc_w_record(w, MSC_R_MARK);
	msc_w_i64(w, "pid", pid);
	msc_w_u64(w, "ts", m->ts);
	msc_w_str(w, "name", m->name);
	msc_w_str(w, "by", m->by);
	if (stack)
		msc_w_u64(w, "stack", stack);
	msc_w_end(w);
}

long recorder_leaks(const struct rproc *pr, struct msc_leak **out)
{
	uint64_t *cuts = malloc((pr->nmarks + 1) * sizeof(*cuts));
	size_t n = 0, i;
	long ret;

	if (!cuts)
		return -ENOMEM;
	for (i = 0; i < pr->nmarks; i++)
		if (pr->marks[i].cut)
			cuts[n++] = pr->marks[i].ts;
	ret = msc_agg_leaks_cut(&pr->agg, cuts, n, out);
	free(cuts);
	return ret;
}

const struct rmark *recorder_leak_after(const struct rproc *pr, const struct msc_leak *l)
{
	size_t i, k = 0;

	for (i = 0; l->epoch && i < pr->nmarks; i++)
		if (pr->marks[i].cut && ++k == l->epoch)
			return &pr->marks[i];
	return NULL;
}

uint64_t recorder_mark(struct msc_recorder *r, struct rproc *pr, int pid, uint64_t ts, const char *name,
		       const char *by, uint32_t stack)
{
	struct rmark one, *m = &one;

	/* Marks come in time order but for a program's, which comes with
	 * its thread's events: the next may be earlier by a moment. */
	if (pr->nmarks && ts < pr->marks[pr->nmarks - 1].ts)
		ts = pr->marks[pr->nmarks - 1].ts;
	/* The first MSC_AGG_CUTS split the leaks; a program that marks
	 * every request has the rest written, not kept. */
	if (pr->nmarks < MSC_AGG_CUTS && !MSC_GROW(pr->marks, pr->nmarks + 1, pr->capmarks, 8))
		m = &pr->marks[pr->nmarks++];
	m->ts = ts;
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->cut = strcmp(by, "ms-record") != 0;
	m->by = by;
	/* The heap as it stood at the mark, for ms-report --live-at. */
	if (m->cut)
		msc_timeline_pin(&pr->timeline, &pr->agg, ts);
	if (r->output_gone)
		return ts;
	msc_stacks_write(&r->stacks, r->w, stack);
	recorder_write_mark(r->w, pid, m, stack);
	recorder_flush(r);
	return ts;
}

/*
 * A memory error the last event made: out at once, before the program
 * (which glibc may abort right after that free) can take it with it.
 */
static void write_error(struct msc_recorder *r, const struct msc_agg_error *e, int pid)
{
	if (!r->output_gone) {
		msc_stacks_write(&r->stacks, r->w, e->stack);
		msc_stacks_write(&r->stacks, r->w, e->alloc_stack);
		msc_stacks_write(&r->stacks, r->w, e->free_stack);
		msc_write_error(r->w, e, r->o.follow ? pid : -1);
		recorder_flush(r);
	}
}

/* Sampled: the shim's counts of what it did not record, for the totals. */
static void take_unsampled(struct rproc *pr, const struct msc_cproc *p)
{
	uint64_t allocs, bytes, frees;
	bool known;

	if (msc_agg_sampled(&pr->agg)) {
		known = msc_cproc_unsampled(p, &allocs, &bytes, &frees);
		msc_agg_set_unsampled(&pr->agg, known, allocs, bytes, frees);
	}
}

/* One event of the agg's, in the order msc_agg_push gives.  Inlined: it
 * runs for every event. */
static inline __attribute__((always_inline)) void
apply_event(struct msc_recorder *r, struct rproc *pr, int pid, const struct msc_cevent *ev)
{
	struct msc_agg_result *res = &pr->res;
	int how = msc_agg_apply(&pr->agg, ev, res);

	if (how == MSC_AGG_NOT_MINE || how == MSC_AGG_HELD || how == MSC_AGG_HIDDEN)
		return;
	if (res->error) {
		write_error(r, res->error, pid);
		res->error = NULL;
	}
	if (r->o.events && !r->output_gone) {
		/* a free's own stack is in its error record, if any */
		if (ev->stack && ev->type != MSC_CEV_FREE)
			msc_stacks_write(&r->stacks, r->w, ev->stack);
		msc_write_event(r->w, ev, r->o.follow ? pid : -1,
				how == MSC_AGG_FREED ? &res->freed : NULL);
	}
}

void recorder_unhold(struct msc_recorder *r, struct rproc *pr, int pid)
{
	struct msc_cevent e;

	msc_agg_unhold(&pr->agg);
	while (msc_agg_pop(&pr->agg, &e))
		apply_event(r, pr, pid, &e);
}

static void on_event(struct msc_recorder *r, struct msc_cproc *p, const struct msc_cevent *ev)
{
	struct rproc *pr = p->user;
	struct msc_agg *a = &pr->agg;
	struct msc_cevent e;

	/* Nearly every event: an allocation, a free, a mapping. */
	if (__builtin_expect(ev->type <= MSC_CEV_BRK, 1)) {
		if (msc_agg_push(a, ev))
			apply_event(r, pr, p->pid, ev);
		while (msc_agg_pop(a, &e))
			apply_event(r, pr, p->pid, &e);
		return;
	}
	switch (ev->type) {
	case MSC_CEV_THREAD_EXIT:
		thread_gone(pr, ev->tid);
		return;
	case MSC_CEV_THREAD:
		own_range(pr, ev->v[0], ev->v[2]);
		/* tid 0: the shared ring's state, not a thread. */
		if (ev->tid) {
			thread_seen(pr, ev);
			msc_agg_thread_begins(a, ev->tid, ev->ts);
		}
		break;
	case MSC_CEV_MARK:
		recorder_mark(r, pr, p->pid, ev->ts, ev->mark.name, "program", ev->stack);
		return;
	case MSC_CEV_SAMPLE:
		pr->last_rss = ev->v[0];
		take_unsampled(pr, p);
		if (!r->output_gone) {
			msc_write_sample(r->w, a, p->pid, ev->ts, ev->v[0]);
			recorder_flush(r);
		}
		return;
	default:
		if (msc_agg_push(a, ev))
			apply_event(r, pr, p->pid, ev);
		while (msc_agg_pop(a, &e))
			apply_event(r, pr, p->pid, &e);
		return;
	}
	if (r->o.events && !r->output_gone)
		msc_write_event(r->w, ev, r->o.follow ? p->pid : -1, NULL);
}

static void on_events(void *ctx, struct msc_cproc *p, const struct msc_cevent *ev, size_t n)
{
	struct rproc *pr = p->user;
	size_t i;

	/* The heap as it stood up to this batch: a moment before its first
	 * event (which may be the one that makes the peak). */
	if (n && ev[0].ts && msc_timeline_due(&pr->timeline, ev[0].ts))
		msc_timeline_take(&pr->timeline, &pr->agg, ev[0].ts - 1, false);
	msc_agg_prefetch_batch(&pr->agg, ev, n);
	for (i = 0; i < n; i++)
		on_event(ctx, p, &ev[i]);
}

int recorder_scan(struct rproc *pr, int pid, const uint64_t *sps, size_t nsps,
			const uint64_t *more, size_t nmore, struct msc_scan_stats *st,
			struct msc_err *err)
{
	struct msc_range *ex;
	size_t i, nex = 0;
	int rc;

	ex = malloc((pr->nown + pr->nthreads + 1) * sizeof(*ex));
	if (!ex)
		return msc_err_set(err, -ENOMEM, "leak scan: out of memory");
	/*
	 * Never roots: the shim's memory, and the stacks of exited threads
	 * (glibc keeps them mapped for reuse, stale pointers and all) up to
	 * their static TLS.  That TLS and the struct pthread above it stay
	 * roots, as memcheck has them: the thread's __thread variables, and
	 * the pointer into its DTV, which makes that block possibly lost
	 * whether or not the thread lived, or was seen to allocate.
	 */
	for (i = 0; i < pr->nown; i++)
		ex[nex++] = pr->own[i];
	for (i = 0; i < pr->nthreads; i++) {
		const struct thread *t = &pr->threads[i];
		uint64_t end = t->hi;

		if (!t->dead || !t->lo)
			continue;
		if (t->tp > t->lo && t->tp < t->hi)
			end = msc_scan_tls_start(pid, t->tp, t->lo) & ~7ull;
		ex[nex++] = (struct msc_range){ t->lo, end };
	}
	rc = msc_scan_process(&pr->agg, pid, sps, nsps, ex, nex, more, nmore, st, err);
	free(ex);
	return rc;
}

static void on_scan(void *ctx, struct msc_cproc *p, uint64_t sp, uint32_t tid)
{
	struct msc_recorder *r = ctx;
	struct rproc *pr = p->user;
	struct msc_err err;

	(void)tid;
	recorder_unhold(r, pr, p->pid);
	/* The program waits at its exit, its destructors run: the rss the
	 * closing sample gives. */
	if (r->o.interval_ms) {
		uint64_t rss = rss_of(p->pid);

		if (rss)
			pr->last_rss = rss;
	}
	if (recorder_scan(pr, p->pid, &sp, sp != 0, NULL, 0, &pr->scan, &err))
		recorder_warn(r, "%s; leaks are reported unscanned", err.msg);
}

/* ---------------------------------------------------------------- results */

static int cmp_site_bytes(const void *x, const void *y)
{
	const struct msc_site *a = *(const struct msc_site *const *)x;
	const struct msc_site *b = *(const struct msc_site *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return a->size < b->size ? -1 : a->size > b->size;
}

uint64_t recorder_now(const struct msc_recorder *r, const struct msc_agg *a)
{
	uint64_t t = r->col ? msc_collector_now(r->col) : 0;
	struct msc_agg_figures f;

	msc_agg_figures(a, &f);
	return f.last_ts > t ? f.last_ts : t;
}

/* What the program and the recording cost, for the record. */
static void write_costs(struct msc_recorder *r)
{
	uint64_t hwm, cpu;
	struct rusage ru;

	if (r->col && msc_collector_child_usage(r->col, &hwm, &cpu)) {
		msc_w_u64(r->w, "hwm", hwm);
		msc_w_u64(r->w, "cpu", cpu);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		msc_w_u64(r->w, "recorder_hwm", (uint64_t)ru.ru_maxrss * 1024);
		msc_w_u64(r->w, "recorder_cpu",
			  (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
			  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull);
	}
}

/* Sites by bytes, leaks, and the end record of a process that ended. */
static void write_results(struct msc_recorder *r, struct rproc *pr, const struct msc_cend *end,
			  bool exec)
{
	struct msc_writer *w = r->w;
	struct msc_agg *a = &pr->agg;
	const struct msc_site **order;
	struct msc_leak *leaks = NULL;
	long nleaks = 0, nsites = 0, i;
	/* The end is now, not after the results are written (a large
	 * recording takes a while to write them). */
	uint64_t end_ts = recorder_now(r, a);

	/* The samples' last point is the end: the heap and totals the end
	 * record gives, with the last rss read (at the leak scan when one
	 * ran; the process is gone by now). */
	if (r->o.interval_ms)
		msc_write_sample(w, a, pr->pid, end_ts, pr->last_rss);
	order = malloc((msc_agg_nsites(a) ? msc_agg_nsites(a) : 1) * sizeof(*order));
	if (!order) {
		recorder_warn(r, "out of memory writing the results of pid %d", pr->pid);
		return;
	}
	for (i = 0; i < (long)msc_agg_nsites(a); i++)
		if (!msc_agg_site_at(a, (uint32_t)i)->removed)
			order[nsites++] = msc_agg_site_at(a, (uint32_t)i);
	qsort(order, (size_t)nsites, sizeof(*order), cmp_site_bytes);
	for (i = 0; i < nsites; i++) {
		msc_stacks_write(&r->stacks, w, order[i]->stack);
		msc_write_site(w, a, order[i], pr->pid);
	}
	free(order);
	/* After an exec the image's memory went with it: no leaks. */
	if (!exec) {
		nleaks = recorder_leaks(pr, &leaks);
		for (i = 0; i < nleaks; i++) {
			const struct rmark *m = recorder_leak_after(pr, &leaks[i]);

			msc_stacks_write(&r->stacks, w, msc_agg_site_at(a, leaks[i].site)->stack);
			msc_write_leak(w, a, &leaks[i], m ? m->name : NULL, m ? m->ts : 0, pr->pid);
		}
		free(leaks);
	}
	msc_timeline_take(&pr->timeline, a, end_ts, true);
	msc_timeline_write(&pr->timeline, w, &r->stacks, pr->pid);
	recorder_mark(r, pr, pr->pid, end_ts, exec ? "exec" : "end", "ms-record", 0);
	msc_w_record(w, MSC_R_END);
	msc_w_i64(w, "pid", pr->pid);
	msc_w_str(w, "reason", end->reason);
	if (end->status >= 0)
		msc_w_i64(w, "status", end->status);
	if (end->signal) {
		msc_w_i64(w, "signal", end->signal);
		if (end->core)
			msc_w_bool(w, "core", true);
	}
	msc_w_u64(w, "ts", end_ts);
	msc_write_totals(w, a, !exec, &pr->leaks);
	pr->have_leaks = true;
	msc_w_u64(w, "lost", end->lost);
	if (end->waits)
		msc_w_u64(w, "waits", end->waits);
	/* How long the program waited at its exit for the leak scan, and how
	 * much of its memory the scan read. */
	if (pr->scan.ns && !exec) {
		msc_w_u64(w, "scan_ns", pr->scan.ns);
		msc_w_u64(w, "scan_bytes", pr->scan.root_bytes + pr->scan.block_bytes);
	}
	if (pr->pid == r->main_pid && !exec)
		write_costs(r);
	if (end->corrupt)
		msc_w_bool(w, "corrupt", true);
	msc_w_end(w);
	recorder_flush(r);
}

static void on_detach(void *ctx, struct msc_cproc *p, const struct msc_cend *end)
{
	struct msc_recorder *r = ctx;
	struct rproc *pr = p->user;
	bool exec = strcmp(end->reason, "exec") == 0;

	if (!pr)
		return;
	recorder_unhold(r, pr, p->pid);
	/* Attached: what is still live may predate us or be freed after we
	 * go; its fate is unknown, never a leak. */
	if (r->attached)
		msc_agg_set_fate_unknown(&pr->agg);
	take_unsampled(pr, p);
	if (!r->output_gone)
		write_results(r, pr, end, exec);
	if (pr == r->main_pr) {
		r->main_pr = NULL;
		recorder_live_stop(r);
	}
	/* Attached, an exec ends the recording: the new image has no
	 * library. */
	if (p->pid == r->main_pid && (!exec || r->attached)) {
		r->main_ended = true;
		r->main_status = end->signal ? end->signal : (end->status > 0 ? end->status : 0) << 8;
	}
	if (p->pid == r->main_pid && (!exec || r->attached)) {
		struct msc_recorder_summary *s = &r->sum;

		s->recorded = true;
		s->execd = exec;
		struct msc_agg_figures f;

		msc_agg_figures(&pr->agg, &f);
		s->allocs = f.allocs;
		s->bytes = f.bytes;
		s->frees = f.frees;
		s->peak = f.peak;
		s->heap_peak = f.heap_peak;
		s->mapped_peak = f.mapped_peak;
		s->live = f.live_bytes;
		s->live_blocks = f.live_blocks;
		s->unknown_frees = f.unknown_frees;
		if (pr->have_leaks) {
			s->leaked = pr->leaks.bytes;
			s->leaked_blocks = pr->leaks.blocks;
			s->scanned = pr->leaks.scanned;
		} else {
			msc_agg_leak_totals(&pr->agg, &s->leaked, &s->leaked_blocks, NULL, NULL,
					    &s->scanned);
		}
		s->lost = end->lost;
	}
	msc_agg_release(&pr->agg);
	msc_timeline_release(&pr->timeline);
	free(pr->marks);
	free(pr->own);
	free(pr->threads);
	free(pr);
	p->user = NULL;
}

const struct msc_collect_ops msc_recorder_ops = {
	on_attach, on_events, on_scan, on_detach, recorder_warn,
};

/* ------------------------------------------------------------------- API */

struct msc_recorder *msc_recorder_new_detached(const struct msc_recorder_opts *o,
					       struct msc_writer *w, struct msc_err *err)
{
	struct msc_recorder *r = calloc(1, sizeof(*r));

	if (!r || msc_stacks_init(&r->stacks, true)) {
		free(r);
		msc_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	r->o = *o;
	if (!r->o.mode)
		r->o.mode = "launch";
	if (!r->o.unwind_name)
		r->o.unwind_name = "dwarf";
	r->w = w;
	r->main_pid = -1;
	r->live_fd = -1;
	r->stacks.warn = recorder_warn;
	r->stacks.warn_ctx = r;
	return r;
}

struct msc_recorder *msc_recorder_new(const struct msc_recorder_opts *o, struct msc_writer *w,
				      struct msc_err *err)
{
	struct msc_recorder *r = msc_recorder_new_detached(o, w, err);
	struct msc_collect_opts co = { 0 };

	if (!r)
		return NULL;
	co.depth = o->depth;
	co.unwind = o->unwind;
	co.lossy = o->lossy;
	co.free_stacks = o->free_stacks;
	co.follow = o->follow;
	co.scan = o->scan;
	co.interval = o->interval_ms * 1000000ull;
	co.sample = o->sample;
	co.seed = o->seed;
	co.seeded = o->seeded;
	r->col = msc_collector_new(&co, &msc_recorder_ops, r, &r->stacks, err);
	if (!r->col) {
		msc_recorder_free(r);
		return NULL;
	}
	return r;
}

/* What others can see goes: the live socket, the collector's socket and
 * their directories. */
static void recorder_close(struct msc_recorder *r)
{
	recorder_live_stop(r);
	msc_collector_free(r->col);
}

void msc_recorder_free(struct msc_recorder *r)
{
	if (!r)
		return;
	recorder_close(r);
	msc_stacks_release(&r->stacks);
	free(r->shim);
	free(r);
}

void msc_recorder_exit(struct msc_recorder *r)
{
	if (!r)
		return;
	if (msc_leak_checked())
		msc_recorder_free(r);
	else
		recorder_close(r);
}

const char *msc_recorder_socket(const struct msc_recorder *r)
{
	return r->col ? msc_collector_socket(r->col) : NULL;
}

void msc_recorder_set_main(struct msc_recorder *r, int pid, const char *exe, char **argv)
{
	r->main_pid = pid;
	if (r->col)
		msc_collector_set_child(r->col, pid);
	recorder_write_header(r, pid, getpid(), exe, argv);
	r->main_header = true;
	if (r->col)
		recorder_live_start(r, pid);
}

int msc_recorder_poll(struct msc_recorder *r, int extra_fd, int timeout_ms)
{
	int ret = r->col ? msc_collector_poll(r->col, extra_fd, timeout_ms) : 0;

	/* Only when a client waits: an accept that finds none still makes a
	 * socket and a file in the kernel and frees them, which every round
	 * of an idle recording would pay for. */
	if (r->live_fd >= 0 && (ret & MSC_POLL_WATCH))
		recorder_live_serve(r);
	return (ret & MSC_POLL_EXTRA) != 0;
}

bool msc_recorder_main_done(const struct msc_recorder *r, int *status)
{
	if (r->attached) {
		if (r->main_ended && status)
			*status = r->main_status;
		return r->main_ended;
	}
	return r->col && msc_collector_child_done(r->col, status);
}

char *msc_recorder_default_path(char *buf, size_t n, const char *prog, int pid)
{
	char comm[64] = "", *nl;
	const char *name = prog ? strrchr(prog, '/') : NULL;

	name = name ? name + 1 : prog;
	if (!name) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		nl = strchr(comm, '\n');
		if (nl)
			*nl = '\0';
		name = comm;
	}
	/* A name that would make another path or a hidden file is left out. */
	if (!*name || strchr(name, '/') || name[0] == '.')
		snprintf(buf, n, "memscope.%d.ndjson", pid);
	else
		snprintf(buf, n, "memscope.%s.%d.ndjson", name, pid);
	return buf;
}

char *msc_recorder_find_shim(void)
{
	const char *env = getenv("MEMSCOPE_SHIM");
	static const char *const rel[] = { "../shim/libmemscope.so", "../lib/memscope/libmemscope.so" };
	char exe[PATH_MAX], buf[PATH_MAX + 64];
	ssize_t n;
	size_t i;

	if (env && *env)
		return realpath(env, NULL);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	for (i = 0; i < ARRAY_SIZE(rel); i++) {
		snprintf(buf, sizeof(buf), "%s/%s", exe, rel[i]);
		if (access(buf, R_OK) == 0)
			return realpath(buf, NULL);
	}
	return NULL;
}

unsigned msc_recorder_sessions(const struct msc_recorder *r)
{
	return r->col ? msc_collector_sessions(r->col) : 0;
}

int msc_recorder_mark(struct msc_recorder *r, const char *name, const char *by, uint64_t *ts)
{
	struct rproc *pr = r->main_pr;

	if (!pr)
		return -ESRCH;
	/* Events of before it may still be in the rings: the blocks fall
	 * on either side of it by their times, not by when they are read. */
	*ts = recorder_mark(r, pr, r->main_pid, recorder_now(r, &pr->agg), name, by, 0);
	return 0;
}

void msc_recorder_finish(struct msc_recorder *r, const char *reason)
{
	if (r->col)
		msc_collector_finish(r->col, reason);
}

const struct msc_recorder_summary *msc_recorder_summary(const struct msc_recorder *r)
{
	return &r->sum;
}

/* "1,234 allocations, 1,200 frees, peak heap 64.0 MiB[, peak mapped 8.0
 * MiB]": both summaries open so, naming the peaks as ms-report does. */
const char *recorder_counts_of(char *buf, size_t n, const struct msc_recorder_summary *s)
{
	char a[32], f[32], peak[32], mapped[48] = ", peak mapped ";

	msc_fmt_size(mapped + 14, sizeof(mapped) - 14, (int64_t)s->mapped_peak);
	snprintf(buf, n, "%s allocations, %s frees, peak heap %s%s",
		 msc_fmt_count(a, sizeof(a), (int64_t)s->allocs), msc_fmt_count(f, sizeof(f), (int64_t)s->frees),
		 msc_fmt_size(peak, sizeof(peak), (int64_t)(s->heap_peak ? s->heap_peak : s->peak)),
		 s->mapped_peak ? mapped : "");
	return buf;
}

void msc_recorder_summary_line(const struct msc_recorder_summary *s, const char *name, int status,
			       char *buf, size_t n)
{
	char leaked[32], counts[128], st[64];

	if (WIFSIGNALED(status))
		snprintf(st, sizeof(st), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(st, sizeof(st), "exit %d", WEXITSTATUS(status));
	if (!s->recorded) {
		snprintf(buf, n, "%s: nothing recorded: the program never loaded libmemscope.so (%s)",
			 name, st);
		return;
	}
	snprintf(buf, n, "%s: %s, leaked %s in %llu block%s%s%s, %s", name, recorder_counts_of(counts, sizeof(counts), s),
		 msc_fmt_size(leaked, sizeof(leaked), (int64_t)s->leaked),
		 (unsigned long long)s->leaked_blocks, s->leaked_blocks == 1 ? "" : "s",
		 s->scanned ? "" : " (not scanned)", s->lost ? " (events lost)" : "", st);
}

struct msc_stacks *msc_recorder_stacks(struct msc_recorder *r)
{
	return &r->stacks;
}
