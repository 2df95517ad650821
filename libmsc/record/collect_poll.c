/* SPDX-License-Identifier: MIT */
/*
 * The collector's loop: msc_collector_poll's rounds and their pace, the rss
 * samples taken between them, and what ends or connects meanwhile.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "collect_internal.h"
#include "msc_collect.h"
#include "msc_proc.h"
#include "msc_util.h"

static void take_samples(struct msc_collector *c)
{
	struct msc_collector_private *p;
	uint64_t now = raw_now(c);

	if (!c->sample_every_raw || now < c->next_sample_raw)
		return;
	c->next_sample_raw = now + c->sample_every_raw;
	for (p = c->procs; p; p = p->next) {
		char buf[128];
		unsigned long long size, resident;
		ssize_t n;

		if (p->statm_fd < 0 || p->ended)
			continue;
		n = pread(p->statm_fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* A process that has exited (a zombie) has no memory left to
		 * report: zeros are not a sample. */
		if (sscanf(buf, "%llu %llu", &size, &resident) != 2 || size == 0)
			continue;
		if (MSC_GROW(p->samples, p->nsamples + 1, p->samples_cap, 64))
			continue;
		p->samples[p->nsamples++] = (struct sample){ now, resident * (uint64_t)c->page_size };
	}
}

/*
 * An image that exec'd without a word (attached, its library is gone with
 * it; launched, an exec the preload does not reach): the /proc/PID/mem
 * opened at its start reads nothing once its memory is gone (a read at 0
 * fails with EIO while it is there), while the pid still has memory: a new
 * image.  An exiting one has none, and its pidfd tells.  Looked at every
 * EXEC_CHECK_NS: one read each.
 */
#define EXEC_CHECK_NS 50000000ull
static void check_execs(struct msc_collector *c, uint64_t now)
{
	struct msc_collector_private *p, *next;
	char b;

	if (now < c->next_exec_check_ns)
		return;
	c->next_exec_check_ns = now + EXEC_CHECK_NS;
	for (p = c->procs; p; p = next) {
		next = p->next;
		if (p->mem_fd < 0 || p->ended || pread(p->mem_fd, &b, 1, 0) != 0)
			continue;
		if (msc_proc_has_memory(p->pub.pid))
			collect_end_session(c, p, "exec", 0, false);
	}
}

/*
 * The collector's pace.  Each round drains the rings up to the watermark.
 * A round that found much means the program allocates fast: the next one
 * starts at once, and the descriptors (a syscall) are looked at only once
 * a millisecond.  A round that found little naps, so that the next one
 * finds a batch: per-round costs (the poll, the watermark, reading every
 * ring's head) are then spread over many events, and the CPU goes to the
 * program meanwhile.  The nap is as long as the rings took to fill with
 * ROUND_FILL_BYTES at the pace of the last round, within [ROUND_NAP_NS,
 * the caller's timeout]: a fast program gets short naps, and its threads
 * keep cycling through the first 64 KiB of their rings (shim.h, ring_begin);
 * a slow one (a sampled recording: a record per few hundred allocations)
 * wakes us a few hundred times a second, not thousands, each wake-up a
 * context switch on a CPU the program may need.  A round that found
 * nothing naps twice as long as the last one did, from 2 ms up to 8 times
 * the caller's timeout or 100 ms: an idle program costs a few wake-ups a
 * second (a thread whose ring fills meanwhile wakes us with SIGURG, as do
 * a process that ends or connects, a live client and a scan request).  The
 * rings hold milliseconds of events at full speed.
 */
#define ROUND_BUSY_EVENTS 4096
#define ROUND_NAP_NS 200000ull
#define ROUND_CHECK_NS 1000000ull
#define ROUND_FILL_BYTES (16u * 1024)
/* Sampling, a record per BYTES allocated: the line each one writes is cold
 * in the program whatever the fill, so the naps are longer, the wake-ups
 * (each one a CPU taken from a program whose threads use them all) fewer:
 * 220 of the 2-thread storm's threads were preempted, not 40 unrecorded.
 * A ring still keeps to its first 64 KiB stretches. */
#define ROUND_FILL_SAMPLED (48u * 1024)
/* A process waits for its scan: the watermark's slack (50 us), and some. */
#define URGENT_NAP_NS 100000ull
/* The first nap of an idle spell: what a burst of full-speed recording
 * takes to fill a 64 KiB stretch of a ring several times over. */
#define ROUND_IDLE_NS 2000000ull
#define ROUND_IDLE_MAX_NS 100000000ull

void msc_collector_watch(struct msc_collector *c, int fd)
{
	c->watch_fd = fd;
}

static uint64_t clamp_ns(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Nanoseconds until the next rss sample is due (UINT64_MAX: none). */
static uint64_t sample_due_ns(struct msc_collector *c)
{
	uint64_t now;

	if (!c->sample_every_raw)
		return UINT64_MAX;
	now = raw_now(c);
	return now >= c->next_sample_raw ? 0 :
	       (uint64_t)((double)(c->next_sample_raw - now) * c->ns_per_raw);
}

int msc_collector_poll(struct msc_collector *c, int extra_fd, int timeout_ms)
{
	struct pollfd *pfd;
	struct msc_collector_private *p, *next, **owner;
	unsigned n = 0, i, first_proc, hellos_at, delivered = 0;
	int ret = 0, extra_at = -1, child_at = -1, watch_at = -1;
	uint64_t wait_ns = timeout_ms < 0 ? UINT64_MAX : (uint64_t)timeout_ms * 1000000ull, now;
	uint64_t since;
	struct timespec to;

	c->round_bytes = 0;
	c->urgent = false;
	for (p = c->procs; p; p = p->next)
		delivered += collect_pump(c, p, false);
	take_samples(c);
	now = msc_now_monotonic();
	check_execs(c, now);
	since = now - c->last_round_ns;
	c->last_round_ns = now;
	if (delivered >= ROUND_BUSY_EVENTS) {
		if (now < c->next_check_ns)
			return 0;
		wait_ns = 0;
	} else if (delivered && wait_ns > ROUND_NAP_NS) {
		/* Time to fill ROUND_FILL_BYTES at the last round's pace. */
		uint64_t fill = c->o.sample ? ROUND_FILL_SAMPLED : ROUND_FILL_BYTES;
		uint64_t nap = c->round_bytes >= fill ? ROUND_NAP_NS :
			       since * fill / (c->round_bytes | 1);

		wait_ns = clamp_ns(nap, ROUND_NAP_NS, wait_ns);
	} else if (!delivered && !c->round_bytes && wait_ns != UINT64_MAX &&
		   wait_ns >= ROUND_IDLE_NS) {
		/* Nothing: each such round naps twice as long as the last,
		 * from ROUND_IDLE_NS up to 8 timeouts (ROUND_IDLE_MAX_NS at
		 * most, the timeout at least).  Not for a caller that polls
		 * faster (remote(): a thread's work to notice). */
		uint64_t most = clamp_ns(8 * wait_ns, wait_ns, ROUND_IDLE_MAX_NS);
		uint64_t nap = c->idle_nap_ns ? 2 * c->idle_nap_ns : ROUND_IDLE_NS;

		wait_ns = c->idle_nap_ns = nap < most ? nap : most;
	}
	if (delivered || c->round_bytes)
		c->idle_nap_ns = 0;
	if (!c->calibrated && c->procs) {
		/* events wait for the clock: back when it is ready */
		uint64_t left = collect_calibrate_left(c, now);

		wait_ns = left < wait_ns ? left : wait_ns;
	}
	if (c->urgent && wait_ns > URGENT_NAP_NS)
		wait_ns = URGENT_NAP_NS;	/* its request is about to be old enough */
	if (wait_ns > ROUND_NAP_NS) {
		/* The rss samples keep their pace when the naps are long. */
		wait_ns = clamp_ns(sample_due_ns(c), ROUND_NAP_NS, wait_ns);
	}
	c->next_check_ns = now + ROUND_CHECK_NS;
	if (c->nhellos) {
		/* A hello that is late is given up on in time. */
		uint64_t soonest = UINT64_MAX;

		for (i = 0; i < c->nhellos; i++)
			if (c->hellos[i].deadline_ns < soonest)
				soonest = c->hellos[i].deadline_ns;
		soonest = soonest > now ? soonest - now : 0;
		wait_ns = soonest < wait_ns ? soonest : wait_ns;
	}
	if (c->pfd_cap < 4 + (size_t)c->nprocs + c->nhellos) {
		size_t cap = 2 * (4 + (size_t)c->nprocs + COLLECT_HELLOS_MAX);
		struct pollfd *np = realloc(c->pfd, cap * sizeof(*np));
		struct msc_collector_private **no;

		if (np)
			c->pfd = np;
		no = np ? realloc(c->owner, cap * sizeof(*no)) : NULL;
		if (!no) {
			/* Out of memory: wait as asked, try again next time. */
			poll(NULL, 0, timeout_ms);
			return 0;
		}
		c->owner = no;
		c->pfd_cap = cap;
	}
	pfd = c->pfd;
	owner = c->owner;
	pfd[n++] = (struct pollfd){ c->listen_fd, POLLIN, 0 };
	if (extra_fd >= 0) {
		extra_at = (int)n;
		pfd[n++] = (struct pollfd){ extra_fd, POLLIN, 0 };
	}
	if (c->child_pidfd >= 0 && !c->child_done) {
		child_at = (int)n;
		pfd[n++] = (struct pollfd){ c->child_pidfd, POLLIN, 0 };
	}
	if (c->watch_fd >= 0) {
		watch_at = (int)n;
		pfd[n++] = (struct pollfd){ c->watch_fd, POLLIN, 0 };
	}
	first_proc = n;
	for (p = c->procs; p; p = next) {
		next = p->next;
		if (p->pub.pid == c->child_pid)
			continue;
		if (p->pidfd < 0) {
			/* No pidfd (an old kernel): look whether it is gone. */
			if (kill(p->pub.pid, 0) < 0 && errno == ESRCH)
				collect_end_session(c, p, "exit", 0, false);
			continue;
		}
		owner[n] = p;
		pfd[n++] = (struct pollfd){ p->pidfd, POLLIN, 0 };
	}
	hellos_at = n;
	for (i = 0; i < c->nhellos; i++)
		pfd[n++] = (struct pollfd){ c->hellos[i].fd, POLLIN, 0 };
	to.tv_sec = (time_t)(wait_ns / 1000000000ull);
	to.tv_nsec = (long)(wait_ns % 1000000000ull);
	if (ppoll(pfd, n, wait_ns == UINT64_MAX ? NULL : &to, NULL) <= 0) {
		/* Without a child pidfd (old kernels), reap by polling. */
		if (c->child_pidfd < 0)
			collect_reap_child(c);
		if (c->nhellos)
			collect_hellos_expire(c, msc_now_monotonic());
		return 0;
	}
	if (extra_at >= 0 && (pfd[extra_at].revents & POLLIN))
		ret |= MSC_POLL_EXTRA;
	if (watch_at >= 0 && (pfd[watch_at].revents & POLLIN))
		ret |= MSC_POLL_WATCH;
	/* Ends first, then new connections (which may end an exec'ed image). */
	for (i = first_proc; i < hellos_at; i++)
		if (pfd[i].revents & (POLLIN | POLLHUP))
			collect_end_session(c, owner[i], "exit", 0, false);
	if ((child_at >= 0 && (pfd[child_at].revents & POLLIN)) || c->child_pidfd < 0)
		collect_reap_child(c);
	/* Hellos that came (each one's entry may move: from the last). */
	for (i = n; i-- > hellos_at;)
		if (pfd[i].revents)
			collect_hello_ready(c, i - hellos_at);
	if (c->nhellos)
		collect_hellos_expire(c, msc_now_monotonic());
	if (pfd[0].revents & POLLIN)
		for (;;) {
			struct pollfd lp = { c->listen_fd, POLLIN, 0 };

			if (poll(&lp, 1, 0) <= 0)
				break;
			collect_accept_one(c);
		}
	return ret;
}
