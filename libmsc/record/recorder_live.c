/* SPDX-License-Identifier: MIT */
/* The live heap: ms-snap's and ms-top's view of a recording (msc_live.h). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "msc_collect.h"
#include "msc_format.h"
#include "msc_freeze.h"
#include "msc_fsafe.h"
#include "msc_live.h"
#include "msc_records.h"
#include "msc_scan.h"
#include "msc_util.h"
#include "recorder_internal.h"

void recorder_live_start(struct msc_recorder *r, int pid)
{
	struct msc_err err;

	r->live_fd = msc_live_listen(pid, &err);
	if (r->live_fd < 0)
		recorder_warn(r, "no live snapshots: %s", err.msg);
	else
		msc_collector_watch(r->col, r->live_fd);	/* a client wakes it */
}

void recorder_live_stop(struct msc_recorder *r)
{
	if (r->live_fd < 0)
		return;
	if (r->col)
		msc_collector_watch(r->col, -1);
	close(r->live_fd);
	r->live_fd = -1;
	msc_live_unlink(r->main_pid);
}

/*
 * The request line a client sends first: "sites", "leaks" or "live"
 * (with a range: range_parse), or "mark NAME"
 * (into line, without its newline).  A client that sends none within
 * 200 ms (one of an older memscope) gets sites: the recording waits
 * meanwhile, so not longer.
 */
static void request_of(int fd, char *line, size_t n)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	ssize_t got;

	snprintf(line, n, "sites");
	if (poll(&pfd, 1, 200) <= 0)
		return;
	got = recv(fd, line, n - 1, 0);
	if (got <= 0) {
		snprintf(line, n, "sites");
		return;
	}
	line[got] = '\0';
	line[strcspn(line, "\n")] = '\0';
}

/* ms-snap --mark: the main process marked now, and the answer saying so. */
static void live_mark(struct msc_recorder *r, struct msc_writer *w, const char *name)
{
	uint64_t ts;

	msc_w_record(w, MSC_R_LIVE);
	msc_w_i64(w, "pid", r->main_pid);
	msc_w_bool(w, "recorded", true);
	if (!*name || strlen(name) >= MSC_MARK_NAME)
		msc_w_str(w, "error", "a mark needs a name of 1 to 39 bytes");
	else if (msc_recorder_mark(r, name, "ms-snap", &ts))
		msc_w_str(w, "error", "the process is not recorded any more");
	else {
		msc_w_str(w, "mark", name);
		msc_w_u64(w, "ts", ts);
	}
	msc_w_end(w);
}

/* The live record that ends an answer to "leaks": how it went. */
static void live_leaks_end(struct msc_writer *w, int pid, const char *error, uint64_t stopped_ns,
			   const struct msc_scan_stats *st, unsigned threads)
{
	msc_w_record(w, MSC_R_LIVE);
	msc_w_i64(w, "pid", pid);
	msc_w_bool(w, "recorded", true);
	if (error) {
		msc_w_str(w, "error", error);
	} else {
		msc_w_bool(w, "scanned", true);
		msc_w_u64(w, "threads", threads);
		msc_w_u64(w, "stopped_ns", stopped_ns);
		msc_w_u64(w, "scan_ns", st->ns);
		msc_w_u64(w, "blocks", st->blocks);
		msc_w_u64(w, "root_bytes", st->root_bytes);
		msc_w_u64(w, "block_bytes", st->block_bytes);
	}
	msc_w_end(w);
}

/*
 * A request's range (ms-snap --since, --until): "since=A" and "until=B"
 * after its word, tab-separated, each a mark of the recording or a time
 * ("30s"); resolved to instants of the collector's clock.
 */
/* The request's range: "since=A" and "until=B" after its word,
 * tab-separated (in line, which the names point into). */
static void range_parse(char *line, struct msc_span *rg)
{
	const char *since = NULL, *until = NULL;
	char *f, *save = NULL;

	for (f = strtok_r(line, "\t", &save); f; f = strtok_r(NULL, "\t", &save)) {
		if (!strncmp(f, "since=", 6) && f[6])
			since = f + 6;
		else if (!strncmp(f, "until=", 6) && f[6])
			until = f + 6;
	}
	msc_span_init(rg, since, until);
}

/* Its bounds' instants, from the recording's marks; NULL, or what is
 * wrong (in buf). */
static const char *range_resolve(const struct rproc *pr, struct msc_span *rg, char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < pr->nmarks; i++)
		msc_span_mark_of(rg, pr->marks[i].name, pr->marks[i].by, pr->marks[i].ts);
	if ((rg->since && !rg->since_known) || (rg->until && !rg->until_known)) {
		snprintf(buf, n, "no mark named '%s' in this recording",
			 rg->since && !rg->since_known ? rg->since : rg->until);
		return buf;
	}
	if (rg->since && rg->until && rg->since_ts > rg->until_ts) {
		snprintf(buf, n, "'%s' comes after '%s'", rg->since, rg->until);
		return buf;
	}
	return NULL;
}

/*
 * The live blocks, after a scan or not, as leak records: split by the
 * marks (after, after_ts) and the marks written first, or with a range,
 * those of blocks allocated in it only (exactly: by each block's time).
 */
static long write_blocks(struct msc_recorder *r, struct msc_writer *w, struct msc_stacks_out *out,
			 const struct msc_span *rg)
{
	struct rproc *pr = r->main_pr;
	struct msc_leak *leaks = NULL;
	uint64_t cuts[2];
	size_t ncuts = 0;
	long n, i;

	for (i = 0; i < (long)pr->nmarks && !w->error; i++)
		recorder_write_mark(w, r->main_pid, &pr->marks[i], 0);
	if (rg->since)
		cuts[ncuts++] = rg->since_ts;
	if (rg->until)
		cuts[ncuts++] = rg->until_ts;
	n = ncuts ? msc_agg_leaks_cut(&pr->agg, cuts, ncuts, &leaks) : recorder_leaks(pr, &leaks);
	for (i = 0; i < n && !w->error; i++) {
		const struct rmark *m = ncuts ? NULL : recorder_leak_after(pr, &leaks[i]);

		/* with a range: epoch 1 is after since (before until), or
		 * with until alone epoch 0 is before it */
		if (ncuts && leaks[i].epoch != (rg->since ? 1u : 0u))
			continue;
		msc_stacks_write_to(&r->stacks, out, w, msc_agg_site_at(&pr->agg, leaks[i].site)->stack);
		msc_write_leak(w, &pr->agg, &leaks[i], m ? m->name : NULL, m ? m->ts : 0, r->main_pid);
	}
	free(leaks);
	return n;
}

/* ms-snap --since without --leaks: what is live now of the range's blocks,
 * no scan (their kinds as they are: unscanned). */
static void live_blocks(struct msc_recorder *r, struct msc_writer *w, struct msc_stacks_out *out,
			struct msc_span *rg)
{
	char buf[200];
	const char *bad = range_resolve(r->main_pr, rg, buf, sizeof(buf));
	long n = bad ? 0 : write_blocks(r, w, out, rg);

	msc_w_record(w, MSC_R_LIVE);
	msc_w_i64(w, "pid", r->main_pid);
	msc_w_bool(w, "recorded", true);
	if (bad || n < 0)
		msc_w_str(w, "error", bad ? bad : "out of memory");
	if (rg->since)
		msc_w_str(w, "since", rg->since);
	if (rg->until)
		msc_w_str(w, "until", rg->until);
	msc_w_end(w);
}

/*
 * ms-snap --leaks: the reachability scan of the main process, now.  Its
 * threads are stopped (msc_freeze) while the events they committed are
 * delivered and its memory is read, then let go; the leaks go to the
 * client as "leak" records, and the blocks are unscanned again for the
 * recording.  A thread stopped inside a hook may still have an event to
 * commit: then the process runs on a moment and it is tried again.
 */
static void live_leaks(struct msc_recorder *r, struct msc_writer *w, struct msc_stacks_out *out,
		       struct msc_span *rg)
{
	struct rproc *pr = r->main_pr;
	struct msc_scan_stats st = { 0 };
	struct msc_freeze f;
	struct msc_err err;
	uint64_t *regs = NULL, stopped;
	size_t nregs = 0, nsps = 0;
	unsigned tries, threads = 0;
	char buf[200];
	const char *bad;
	long n;
	int rc = -EAGAIN;

	if (r->attached) {
		live_leaks_end(w, r->main_pid, "a leak scan needs a recording from the start (ms-record "
			       "PROGRAM): blocks allocated before an attach are not known", 0, NULL, 0);
		return;
	}
	if (r->o.sample) {
		live_leaks_end(w, r->main_pid, "a leak scan needs every block recorded: this recording "
			       "samples (--sample)", 0, NULL, 0);
		return;
	}
	if ((bad = range_resolve(pr, rg, buf, sizeof(buf)))) {
		live_leaks_end(w, r->main_pid, bad, 0, NULL, 0);
		return;
	}
	for (tries = 0; tries < 50 && rc == -EAGAIN; tries++) {
		if (tries)
			poll(NULL, 0, 1);
		rc = msc_freeze(&f, r->main_pid, 5000, &err);
		if (rc)
			break;
		rc = msc_collector_settle(r->col, r->main_pid);
		if (rc == -ESRCH)
			msc_err_set(&err, rc, "pid %d is no longer recorded", r->main_pid);
		if (rc == 0) {
			/* Every committed event is in: nothing held has a
			 * partner still to come. */
			recorder_unhold(r, pr, r->main_pid);
			threads = (unsigned)f.n;
			regs = malloc(f.n * (MSC_FREEZE_REGS + 1) * sizeof(*regs));
			nregs = regs ? msc_freeze_regs(&f, regs, f.n * MSC_FREEZE_REGS) : 0;
			nsps = regs ? msc_freeze_sps(&f, regs + nregs, f.n) : 0;
			rc = regs ? recorder_scan(pr, r->main_pid, regs + nregs, nsps, regs, nregs, &st,
						 &err) :
				    msc_err_set(&err, -ENOMEM, "out of memory");
		}
		stopped = msc_thaw(&f);
		if (f.main_exited)
			msc_collector_child_exited(r->col, f.main_status, &f.main_usage);
	}
	free(regs);
	if (rc == -EAGAIN)
		msc_err_set(&err, rc, "its threads kept stopping inside the allocator; try again");
	if (rc) {
		live_leaks_end(w, r->main_pid, err.msg, 0, NULL, 0);
		msc_agg_set_kinds(&pr->agg, MSC_LEAK_UNSCANNED);
		return;
	}
	/* The marks first, so that a reader can take the range between two
	 * (ms-report --since) as it reads. */
	n = write_blocks(r, w, out, rg);
	live_leaks_end(w, r->main_pid, n < 0 ? "out of memory" : NULL, stopped, &st, threads);
	msc_agg_set_kinds(&pr->agg, MSC_LEAK_UNSCANNED);
}

/* A client of the live socket: the main process's sites as of now. */
void recorder_live_serve(struct msc_recorder *r)
{
	const struct timeval tv = { 2, 0 };
	struct msc_stacks_out out;
	struct msc_writer lw;
	char line[2 * MSC_MARK_NAME + 32];
	struct msc_agg *a;
	size_t i;
	int fd;

	while ((fd = accept4(r->live_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		/* Only this user and root: the heap is the program's memory. */
		if (msc_fsafe_peer(fd) < 0) {
			close(fd);
			continue;
		}
		/* A reader that stalls cannot stall the recording for long. */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!r->main_pr || msc_writer_init(&lw, fd, 64 * 1024)) {
			close(fd);
			continue;
		}
		/* A stream of its own: the frames and stacks it needs. */
		if (msc_stacks_out_init(&out)) {
			msc_writer_release(&lw);
			close(fd);
			continue;
		}
		request_of(fd, line, sizeof(line));
		if (!strncmp(line, "leaks", 5) || !strncmp(line, "live", 4)) {
			struct msc_span rg;
			bool leaks = line[1] == 'e';

			range_parse(line + (leaks ? 5 : 4), &rg);
			if (leaks)
				live_leaks(r, &lw, &out, &rg);
			else
				live_blocks(r, &lw, &out, &rg);
			goto done;
		}
		if (!strncmp(line, "mark ", 5)) {
			live_mark(r, &lw, line + 5);
			goto done;
		}
		/* its marks (ms-top shows the last), then its sites */
		for (i = 0; i < r->main_pr->nmarks && !lw.error; i++)
			recorder_write_mark(&lw, r->main_pid, &r->main_pr->marks[i], 0);
		a = &r->main_pr->agg;
		for (i = 0; i < msc_agg_nsites(a) && !lw.error; i++) {
			const struct msc_site *s = msc_agg_site_at(a, (uint32_t)i);

			if (s->removed)
				continue;
			msc_stacks_write_to(&r->stacks, &out, &lw, s->stack);
			msc_write_site(&lw, a, s, r->main_pid);
		}
done:
		msc_stacks_out_release(&out);
		msc_writer_release(&lw);
		close(fd);
	}
}
