/* SPDX-License-Identifier: MIT */
/*
 * collect_internal: what the files of the collector share (private to
 * libmsc: the collect*.c files include it, tools never do; they see
 * msc_collect.h only).
 *
 * Who owns what:
 *	collect.c		the hot path: the rings and their decoding, the
 *				merge by timestamp (ring_peek, deliver,
 *				watermark, collect_pump), settle
 *	collect_clock.c		the clock and its calibration, msc_collector_now
 *	collect_maps.c		module maps and STACK records: the frames'
 *				modules (/proc/PID/maps as a fallback), the
 *				shim's stack ids mapped to canonical ones
 *	collect_poll.c		the poll loop and its pace, rss samples, watch
 *	collect_setup.c		the collector's creation (directory, socket,
 *				stale ones pruned), ring sizing, finish and free
 *	collect_session.c	the sessions: a connecting process (hello,
 *				region, welcome), its end and freeing, their
 *				count and unsampled figures, the direct child
 *				(reaping, its usage), allow_uid
 *
 * Everything called per event stays static in collect.c, or static inline
 * here: what crosses between the files is called once per connection,
 * session end, round, clock check, or STACK or module record.
 */
#ifndef MSC_COLLECT_INTERNAL_H
#define MSC_COLLECT_INTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <x86intrin.h>

#include "msc_collect.h"
#include "msc_hash.h"
#include "msc_proto.h"
#include "msc_util.h"

/* Module segments of one view of a process's address space. */
struct modseg {
	uint64_t start, end, base;
	uint32_t module;
};

struct modmap {
	struct modseg *segs;
	size_t n;
	struct modmap *next;		/* all maps of a session, for freeing */
};

struct ring_cur {
	struct msc_ring *ring;
	uint8_t *data;			/* the ring's data */
	const uint64_t *rec;		/* the timestamped event at pos, when have */
	uint64_t hdr;			/* its header as checked: the target may
					 * write over the record meanwhile */
	uint64_t pos;			/* next byte to read, absolute */
	uint64_t head;			/* last head read: reread only at it */
	uint64_t released;		/* tail last stored */
	uint32_t tid;
	bool have;			/* a timestamped event waits at pos */
	bool broken;			/* held garbage: ignored from then on */
	uint64_t ts;			/* its raw timestamp */
	struct modmap *mods;		/* this thread's view of the modules */
	struct modseg *build;		/* a map being received */
	size_t nbuild, capbuild;
	bool building;
};

struct sample {
	uint64_t ts;			/* raw clock */
	uint64_t rss;
};

struct msc_collector_private {
	struct msc_cproc pub;
	int pidfd, statm_fd;
	int mem_fd;			/* /proc/PID/mem as at the session's start:
					 * reads nothing once that image is gone */
	void *region;
	size_t region_size;
	uint32_t ring_size;		/* as made: the page may be overwritten */
	/*
	 * The region is the target's to write, the control page too: after
	 * setup the collector goes by its own copies of the layout
	 * (ring_size, ncur: the collector's options, or less for a process
	 * whose address-space limit leaves less room) and of rings_used.
	 */
	struct msc_ctl *ctl;
	struct ring_cur *cur;
	uint32_t ncur;			/* entries of cur: the rings */
	uint32_t rings_used;		/* high-water mark of ctl->rings_used */
	uint32_t *cand;			/* rings with an event waiting (pump) */
	uint32_t *stack_map;		/* shim stack id -> canonical id */
	uint32_t stack_map_cap;
	uint32_t stacks_seen;		/* STACK records read */
	struct msc_u64map stack_far;	/* shim id + 1 -> canonical id, for ids
					 * past what stack_map may grow to */
	struct modmap *maps;
	struct sample *samples;
	size_t nsamples, samples_cap, samples_head;
	struct msc_cevent batch[MSC_CEV_BATCH];	/* delivered, not yet handed over */
	unsigned nbatch;
	bool ended, corrupt;
	int exit_call_status;		/* from an exit() call, -1 unknown */
	struct msc_collector_private *next;
	/* /proc/PID/maps fallback for addresses no module map covers */
	struct modmap *procmaps;
	uint64_t procmaps_at;
};

#define COLLECT_HELLOS_MAX 32

struct msc_collector {
	struct msc_collect_opts o;
	const struct msc_collect_ops *ops;
	void *ctx;
	struct msc_stacks *stacks;
	char dir[256];
	char sock_path[300];
	size_t sock_inside;		/* where the process's view of it begins
					 * (msc_collector_listen_for) */
	int dir_fd;			/* dir, opened once made */
	int listen_fd;
	int watch_fd;			/* msc_collector_watch(), -1 */
	struct msc_collector_private *procs;
	unsigned nprocs;
	/* clock */
	unsigned ts_kind;
	bool urgent;			/* this round: a process waits for its scan */
	bool calibrated;		/* clock_ready() was called */
	bool early;			/* ...before 5 ms: measured again later */
	uint64_t calibrate_m0;		/* CLOCK_MONOTONIC at raw0 */
	uint64_t raw0;			/* raw clock at start */
	uint64_t raw_at, ns_at;		/* to_ns()'s origin (raw0, 0 at first) */
	double ns_per_raw;
	uint64_t ns_mult;		/* ns_per_raw * 2^32 */
	uint64_t slack_raw;		/* watermark slack, raw units */
	uint64_t future_raw;		/* no event is stamped after this */
	uint64_t future_slack_raw;	/* how far ahead of our clock it is */
	uint64_t next_sample_raw;
	uint64_t next_exec_check_ns;	/* CLOCK_MONOTONIC */
	uint64_t next_check_ns;		/* msc_collector_poll: poll by then */
	uint64_t last_round_ns;		/* when the last round began */
	uint64_t round_bytes;		/* ring bytes read by collect_pump */
	uint64_t idle_nap_ns;		/* the last nap of an idle spell, 0 */
	uint64_t sample_every_raw;
	/* child */
	int child_pid, child_pidfd, child_status;
	unsigned peer_uid;		/* another user whose processes may connect */
	bool peer_uid_set;
	bool child_done;
	struct rusage child_usage;
	long page_size;
	/* connections whose hello is still coming (collect_session.c) */
	struct collect_hello_wait {
		int fd, pid;
		uint64_t deadline_ns;	/* CLOCK_MONOTONIC */
		size_t got;
		struct msc_hello h;
	} hellos[COLLECT_HELLOS_MAX];
	unsigned nhellos;
	/* msc_collector_poll's descriptors: 4 + one per session and hello */
	struct pollfd *pfd;
	struct msc_collector_private **owner;
	size_t pfd_cap;
};

/* ---- the clock's readings, per event */

static inline uint64_t raw_now(const struct msc_collector *c)
{
	return c->ts_kind == MSC_TS_TSC ? __rdtsc() : msc_now_monotonic();
}

/*
 * ns = ns_at + (raw - raw_at) * ns_mult / 2^32: one multiplication per
 * event.  (raw_at, ns_at) is raw0 and 0 but after a rate measured early
 * was measured again (collect_clock_ready): then the moment of the new
 * rate, so that the times already given go on without a jump.  An event
 * from before that moment (a ring read late) goes back from it at the new
 * rate.
 */
static inline uint64_t to_ns(const struct msc_collector *c, uint64_t raw)
{
	uint64_t d;

	if (raw >= c->raw_at)
		return c->ns_at + (uint64_t)(((unsigned __int128)(raw - c->raw_at) * c->ns_mult) >> 32);
	if (raw <= c->raw0)
		return 0;
	d = (uint64_t)(((unsigned __int128)(c->raw_at - raw) * c->ns_mult) >> 32);
	return d < c->ns_at ? c->ns_at - d : 0;
}

/*
 * Delivers every event of p older than the watermark (all that were
 * committed when final), in time order; returns how many (collect.c).
 */
unsigned collect_pump(struct msc_collector *c, struct msc_collector_private *p, bool final);

/*
 * collect_clock.c.  collect_calibrate_begin() picks the clock and takes the
 * first readings of the TSC's rate, when the collector is made.
 * collect_clock_ready() says whether the clock is set up; with wait, it
 * sets it up now, from what was measured so far if it must.
 * collect_calibrate_left() is how long, at CLOCK_MONOTONIC now, the rate's
 * measurement has still to run (0 once it can end, or for no TSC).
 */
void collect_calibrate_begin(struct msc_collector *c);
bool collect_clock_ready(struct msc_collector *c, bool wait);
uint64_t collect_calibrate_left(const struct msc_collector *c, uint64_t now);

/*
 * collect_maps.c, for ring_peek.  collect_handle_stack() places a STACK
 * record's frames in their modules, interns the stack and maps the shim's
 * id to it.  collect_handle_module() adds a MODULE record's segments to the
 * map cur is receiving; collect_finish_modmap() makes it cur's view of the
 * modules at MODULES_END (shared with p's last map when nothing changed).
 */
void collect_handle_stack(struct msc_collector *c, struct msc_collector_private *p,
			  struct ring_cur *cur, uint32_t shim_id, const uint64_t *ips, unsigned n);
void collect_handle_module(struct msc_collector *c, struct ring_cur *cur, const uint64_t *rec,
			   unsigned words);
void collect_finish_modmap(struct msc_collector_private *p, struct ring_cur *cur);

/*
 * collect_session.c.  collect_accept_one() takes one connection from the
 * listening socket: a process of our user (or the allowed one) that says
 * hello gets a region, or is turned away.  A hello that is not there at
 * once is waited for among the other descriptors (c->hellos):
 * collect_hello_ready() reads what came of hellos[i], collect_hellos_expire()
 * gives up on those past their deadline, as of now.  collect_end_session() drains p
 * to its last committed record, hands it to ops->detach with what is known
 * of its end and frees it; reason is "exit", "exec", ..., and wait_status
 * counts only when have_status.  collect_free_session() frees a session
 * that is no longer in c->procs (or never was) without telling anyone.
 * collect_reap_child() waits for the direct child without blocking and, if
 * it has ended, ends its session.
 */
void collect_accept_one(struct msc_collector *c);
void collect_hello_ready(struct msc_collector *c, unsigned i);
void collect_hellos_expire(struct msc_collector *c, uint64_t now);
void collect_own_room(void);
void collect_end_session(struct msc_collector *c, struct msc_collector_private *p,
			 const char *reason, int wait_status, bool have_status);
void collect_free_session(struct msc_collector_private *p);
void collect_reap_child(struct msc_collector *c);

#endif
