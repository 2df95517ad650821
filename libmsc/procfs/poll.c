/* SPDX-License-Identifier: MIT */
/* Polling a process's memory from /proc: see msc_poll.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_arena.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_poll.h"
#include "msc_proc.h"
#include "msc_snap.h"
#include "msc_stream.h"
#include "msc_util.h"

/* A group as last written, and its rss when first seen. */
struct seen {
	const char *name, *kind;	/* kind: a static string (msc_mapping_group) */
	struct msc_memcounts mem;
	unsigned count;
	uint64_t rss_first;
	unsigned sample;		/* the sample that last saw it */
};

struct msc_poller {
	int pid;
	struct msc_writer *w;
	struct msc_procfs fs;
	struct msc_snapper snap;
	struct msc_arena arena;		/* names and struct seen, for the whole run */
	struct msc_strmap seen;		/* group name -> struct seen */
	struct seen **order;		/* every struct seen, in order of appearance */
	size_t nseen, order_cap;
	uint64_t t0;
	struct msc_poll_summary sum;
	bool ended;			/* finished because the process ended */
	char grew[256];
};

static void argv_arg(const char *arg, size_t len, void *w)
{
	msc_w_strn(w, NULL, arg, len);
}

static void write_header(struct msc_poller *p, uint64_t interval_ms)
{
	struct msc_writer *w = p->w;

	msc_stream_header_begin(w, "ms-record", "poll");
	msc_w_i64(w, "pid", p->pid);
	msc_w_arr(w, "argv");
	msc_proc_cmdline(&p->fs, p->pid, argv_arg, w);
	msc_w_arr_end(w);
	msc_w_str(w, "clock", "ns");
	msc_w_obj(w, "options");
	msc_w_u64(w, "interval", interval_ms);
	msc_w_obj_end(w);
	msc_w_end(w);
	msc_writer_flush(w);
}

struct msc_poller *msc_poller_new(int pid, uint64_t interval_ms, struct msc_writer *w,
				  struct msc_err *err)
{
	struct msc_poller *p = calloc(1, sizeof(*p));
	struct msc_memcounts mc;
	bool summed;
	int ret;

	if (!p || msc_procfs_init(&p->fs, NULL)) {
		free(p);
		msc_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	p->pid = pid;
	p->w = w;
	msc_arena_init(&p->arena);
	msc_snapper_init(&p->snap, &p->fs, w, MSC_SNAP_MAPS_GROUPED);
	if (msc_strmap_init(&p->seen, 64)) {
		msc_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	ret = msc_proc_rollup(&p->fs, pid, &mc, &summed, NULL);
	if (ret == -ESRCH || ret == -ENOENT) {
		msc_err_set(err, -ESRCH, "pid %d: no such process", pid);
		goto fail;
	}
	if (ret == -EACCES || ret == -EPERM) {
		msc_err_set(err, ret, "pid %d: cannot read its memory map (/proc/%d/smaps_rollup: %s): "
			    "it belongs to another user; run as that user or as root",
			    pid, pid, strerror(-ret));
		goto fail;
	}
	if (ret == -ENODATA) {
		msc_err_set(err, ret, "pid %d: it has no memory map (a kernel thread or a zombie)", pid);
		goto fail;
	}
	if (ret) {
		msc_err_set(err, ret, "pid %d: cannot read /proc/%d/smaps_rollup: %s", pid, pid,
			    strerror(-ret));
		goto fail;
	}
	write_header(p, interval_ms);
	return p;
fail:
	msc_poller_free(p);
	return NULL;
}

static bool same_figures(const struct msc_memcounts *a, const struct msc_memcounts *b)
{
	/* Not pss: it moves whenever another process maps the same file. */
	return a->size == b->size && a->rss == b->rss && a->swap == b->swap &&
	       a->private_dirty == b->private_dirty && a->anonymous == b->anonymous;
}

static struct seen *seen_of(struct msc_poller *p, const struct msc_map_group *g)
{
	struct seen *s = msc_strmap_get(&p->seen, g->name);

	if (s)
		return s;
	s = msc_arena_alloc(&p->arena, sizeof(*s));
	if (!s || MSC_GROW(p->order, p->nseen + 1, p->order_cap, 32))
		return NULL;
	memset(s, 0, sizeof(*s));
	s->name = msc_arena_strdup(&p->arena, g->name);
	s->kind = g->kind;
	s->rss_first = g->mem.rss;
	if (!s->name || msc_strmap_put(&p->seen, s->name, s))
		return NULL;
	p->order[p->nseen++] = s;
	return s;		/* count 0: written below */
}

int msc_poller_sample(struct msc_poller *p, struct msc_err *err)
{
	const struct msc_map_group *g;
	struct msc_memcounts total = { 0 };
	unsigned n = (unsigned)p->sum.samples + 1;
	uint64_t ts;
	size_t ng, i;
	int ret;

	ret = msc_snap_groups(&p->snap, p->pid, &g, &ng, err);
	if (ret)
		return ret;
	if (!ng)	/* a zombie: its memory is gone */
		return msc_err_set(err, -ESRCH, "pid %d exited", p->pid);
	if (!p->sum.samples)
		p->t0 = msc_now_monotonic();
	ts = msc_now_monotonic() - p->t0;
	for (i = 0; i < ng; i++)
		msc_memcounts_add(&total, &g[i].mem);

	msc_w_record(p->w, MSC_R_SAMPLE);
	msc_w_i64(p->w, "pid", p->pid);
	msc_w_u64(p->w, "ts", ts);
	msc_w_u64(p->w, "rss", total.rss);
	msc_w_u64(p->w, "pss", total.pss);
	msc_w_u64(p->w, "swap", total.swap);
	msc_w_u64(p->w, "anonymous", total.anonymous);
	msc_w_end(p->w);

	for (i = 0; i < ng; i++) {
		struct seen *s = seen_of(p, &g[i]);

		if (!s)
			return msc_err_set(err, -ENOMEM, "out of memory");
		s->sample = n;
		if (s->count == g[i].count && same_figures(&s->mem, &g[i].mem))
			continue;
		s->mem = g[i].mem;
		s->count = g[i].count;
		msc_snap_write_group(p->w, p->pid, &g[i], &ts);
	}
	/* Groups that went away (a library unloaded, a mapping unmapped). */
	for (i = 0; i < p->nseen; i++) {
		struct seen *s = p->order[i];
		struct msc_map_group gone = { .name = s->name, .kind = s->kind };

		if (s->sample == n || !s->count)
			continue;
		memset(&s->mem, 0, sizeof(s->mem));
		s->count = 0;
		msc_snap_write_group(p->w, p->pid, &gone, &ts);
	}
	msc_writer_flush(p->w);

	if (!p->sum.samples || total.rss > p->sum.rss_peak)
		p->sum.rss_peak = total.rss;
	if (!p->sum.samples)
		p->sum.rss_first = total.rss;
	p->sum.rss_last = total.rss;
	p->sum.duration = ts;
	p->sum.samples++;
	return 0;
}

void msc_poller_finish(struct msc_poller *p, const char *reason)
{
	struct msc_writer *w = p->w;
	size_t i;

	p->sum.grew_most = NULL;
	for (i = 0; i < p->nseen; i++) {
		const struct seen *s = p->order[i];
		int64_t d = (int64_t)s->mem.rss - (int64_t)s->rss_first;

		if (d > 0 && (!p->sum.grew_most || d > p->sum.grew_most_by)) {
			snprintf(p->grew, sizeof(p->grew), "%s", s->name);
			p->sum.grew_most = p->grew;
			p->sum.grew_most_by = d;
		}
	}
	p->ended = !strcmp(reason, "exit");
	msc_w_record(w, MSC_R_END);
	msc_w_i64(w, "pid", p->pid);
	msc_w_str(w, "reason", reason);
	msc_w_u64(w, "ts", p->sum.duration);
	msc_w_u64(w, "samples", p->sum.samples);
	if (p->sum.samples) {
		msc_w_u64(w, "rss_first", p->sum.rss_first);
		msc_w_u64(w, "rss", p->sum.rss_last);
		msc_w_u64(w, "rss_peak", p->sum.rss_peak);
	}
	msc_w_end(w);
	msc_writer_flush(w);
}

void msc_poller_summary_line(const struct msc_poller *p, char *buf, size_t n)
{
	const struct msc_poll_summary *s = &p->sum;
	char a[32], b[32], c[32], d[32] = "";

	if (s->grew_most)
		msc_fmt_size(d, sizeof(d), s->grew_most_by);
	snprintf(buf, n, "pid %d: %llu samples over %.1f s, rss %s -> %s (peak %s)%s%s%s%s; %s",
		 p->pid, (unsigned long long)s->samples, s->duration / 1e9,
		 msc_fmt_size(a, sizeof(a), (int64_t)s->rss_first),
		 msc_fmt_size(b, sizeof(b), (int64_t)s->rss_last),
		 msc_fmt_size(c, sizeof(c), (int64_t)s->rss_peak),
		 s->grew_most ? ", grew most: " : "", s->grew_most ? s->grew_most : "",
		 s->grew_most ? " +" : "", d,
		 p->ended ? "the process ended" : "stopped polling");
}

void msc_poller_free(struct msc_poller *p)
{
	if (!p)
		return;
	msc_strmap_release(&p->seen);
	free(p->order);
	msc_snapper_release(&p->snap);
	msc_arena_release(&p->arena);
	msc_procfs_release(&p->fs);
	free(p);
}
