/* SPDX-License-Identifier: MIT */
/*
 * ms-top --batch: no screen; at each refresh a "meminfo" record and one
 * "sample" record per process shown, as memscope-format(5) describes them,
 * for scripts and logs.  The stream opens with a header of mode "top" and
 * closes with an "end" record (reason "complete" after --count refreshes,
 * "interrupted" on SIGINT or SIGTERM, "exit" when every process of -p has
 * ended).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "msc_cli.h"
#include "msc_format.h"
#include "msc_stream.h"
#include "msc_util.h"
#include "top.h"

static void write_meminfo(struct msc_writer *w, const struct top_sample *s, uint64_t ts)
{
	const struct msc_meminfo *mi = &s->mi;

	msc_w_record(w, MSC_R_MEMINFO);
	msc_w_u64(w, "ts", ts);
	msc_w_u64(w, "round", s->round);
	msc_w_u64(w, "total", mi->total);
	msc_w_u64(w, "free", mi->free);
	if (mi->has_available) {
		msc_w_u64(w, "available", mi->available);
		msc_w_u64(w, "used", mi->total - mi->available);
	}
	msc_w_u64(w, "buffers", mi->buffers);
	msc_w_u64(w, "cached", mi->cached);
	msc_w_u64(w, "shmem", mi->shmem);
	msc_w_u64(w, "swap_total", mi->swap_total);
	msc_w_u64(w, "swap_free", mi->swap_free);
	msc_w_end(w);
}

static void write_sample(struct msc_writer *w, const struct top *t, const struct top_entry *e,
			 uint64_t ts)
{
	const struct top_proc *p = e->p;

	msc_w_record(w, MSC_R_SAMPLE);
	msc_w_i64(w, "pid", e->pid);
	msc_w_u64(w, "ts", ts);
	msc_w_u64(w, "round", t->cur->round);
	msc_w_i64(w, "ppid", e->ppid);
	msc_w_u64(w, "starttime", p->starttime);
	msc_w_str(w, "comm", p->comm);
	if (p->uid != TOP_NO_UID) {
		msc_w_u64(w, "uid", p->uid);
		msc_w_str(w, "user", p->user);
	}
	msc_w_strn(w, "state", &e->state, 1);
	if (e->has_mem) {
		msc_w_u64(w, "rss", e->rss);
		if (e->has_pss) {
			msc_w_u64(w, "pss", e->pss);
			msc_w_u64(w, "uss", e->uss);
		}
		msc_w_u64(w, "swap", e->swap);
		msc_w_i64(w, "growth", e->growth);
		msc_w_i64(w, "growth_recent", e->recent);
	}
	if (e->heap) {
		const struct top_heap *h = e->heap;

		msc_w_u64(w, "heap", h->live_bytes);
		msc_w_u64(w, "live", h->live);
		msc_w_u64(w, "allocs", h->allocs);
		msc_w_u64(w, "frees", h->frees);
		msc_w_u64(w, "bytes", h->bytes);
		msc_w_u64(w, "sites", h->nsites);
		if (h->has_rates) {
			msc_w_u64(w, "alloc_rate", h->alloc_rate);
			msc_w_u64(w, "free_rate", h->free_rate);
		}
		if (h->mark) {
			msc_w_str(w, "mark", h->mark);
			msc_w_u64(w, "mark_ts", h->mark_ts);
			msc_w_u64(w, "marks", h->nmarks);
		}
	}
	msc_w_end(w);
}

/* Sleeps until deadline (monotonic ns); false when a signal asks to stop. */
static bool sleep_until(uint64_t deadline)
{
	struct timespec ts = { (time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull) };

	while (!top_quit_signal) {
		int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (rc == 0)
			return true;
		if (rc != EINTR)
			return false;
	}
	return false;
}

int top_batch(struct top *t, unsigned count, uint64_t interval_ns, int fd, const char *output)
{
	struct msc_writer w;
	const char *reason = "complete";
	uint64_t next;
	unsigned rounds = 0;
	size_t i;

	if (msc_writer_init(&w, fd, 0))
		msc_die("out of memory");
	msc_stream_header_begin(&w, "ms-top", "top");
	if (t->sel.npids == 1)
		msc_w_i64(&w, "pid", t->sel.pids[0]);
	msc_w_obj(&w, "options");
	msc_w_u64(&w, "interval", interval_ns / 1000000);
	msc_w_u64(&w, "window", t->window / 1000000);
	if (count)
		msc_w_u64(&w, "count", count);
	if (t->sel.npids) {
		msc_w_arr(&w, "pids");
		for (i = 0; i < t->sel.npids; i++)
			msc_w_i64(&w, NULL, t->sel.pids[i]);
		msc_w_arr_end(&w);
	}
	if (t->sel.by_user)
		msc_w_u64(&w, "uid", t->sel.uid);
	if (strcmp(t->fs.root, "/proc") != 0)
		msc_w_str(&w, "proc", t->fs.root);
	msc_w_obj_end(&w);
	msc_w_end(&w);
	msc_writer_flush(&w);

	next = msc_now_monotonic();
	while (!top_quit_signal && !w.error) {
		unsigned alive = 0;
		uint64_t ts;

		if (top_capture(t))
			msc_die("out of memory");
		rounds++;
		ts = t->cur->ts - t->t0;
		if (t->cur->has_meminfo)
			write_meminfo(&w, t->cur, ts);
		for (i = 0; i < t->cur->n; i++) {
			const struct top_entry *e = &t->cur->procs[i];

			write_sample(&w, t, e, ts);
			alive += e->state != 'Z' && e->state != 'X';
		}
		msc_writer_flush(&w);
		/* a zombie has ended too: only its parent has not looked yet */
		if (t->sel.npids && !alive) {
			reason = "exit";
			break;
		}
		if (count && rounds >= count)
			break;
		next += interval_ns;
		if (next < msc_now_monotonic())
			next = msc_now_monotonic();	/* behind: no burst to catch up */
		if (!sleep_until(next))
			break;
	}
	if (top_quit_signal && !(count && rounds >= count))
		reason = "interrupted";
	msc_w_record(&w, MSC_R_END);
	msc_w_str(&w, "reason", reason);
	msc_w_u64(&w, "rounds", rounds);
	msc_w_u64(&w, "ts", t->t0 ? msc_now_monotonic() - t->t0 : 0);
	msc_w_end(&w);
	return msc_cli_finish_output(&w, fd, output);
}
