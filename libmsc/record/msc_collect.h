/* SPDX-License-Identifier: MIT */
/*
 * msc_collect: the collector side of the shim protocol (msc_proto.h).
 *
 * A struct msc_collector listens on a unix socket in a private directory
 * (mode 0700).  Every process that loads libmemscope.so with MEMSCOPE_SOCK
 * pointing there connects once; the collector asks its owner whether to
 * record it (ops->attach), creates its shared-memory region and hands it
 * over.  msc_collector_poll() then drains every region's rings, turns
 * instruction addresses into canonical stacks (msc_stacks), and delivers
 * the events of each process in timestamp order (ops->events), together with
 * periodic "sample" pseudo-events (rss from /proc/PID/statm).
 *
 * Ordering: events of different threads are merged by timestamp up to a
 * watermark: the oldest timestamp a thread that is inside a hook right now
 * could still commit (its ring's last committed timestamp), and otherwise the
 * present minus a small slack.  Within one thread, ring order is time order.
 *
 * Ends: a process that exits (its pidfd becomes readable; the direct child
 * is also reaped here), or whose pid connects again after an exec, is
 * drained to the last committed record and handed to ops->detach with what
 * is known of its end.  A leak scan request (MSC_EV_SCAN, sent by the shim
 * at exit while the process waits) is delivered in order through ops->scan,
 * and the process resumes when it returns.
 *
 * The collector never blocks on a target: a target that stops reading or
 * dies is simply drained.  Ownership: the collector owns its sessions;
 * struct msc_cproc pointers stay valid until ops->detach returns.
 */
#ifndef MSC_COLLECT_H
#define MSC_COLLECT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "msc_agg.h"
#include "msc_err.h"
#include "msc_proto.h"
#include "msc_stacks.h"

struct msc_collect_opts {
	uint32_t ring_size;		/* bytes per ring (power of two), 0: default */
	uint32_t nrings;		/* rings per process, 0: default */
	uint32_t depth;			/* frames per stack, 0: 64 */
	unsigned unwind;		/* enum msc_unwind */
	bool lossy, follow, scan;
	bool free_stacks;		/* frees with whole stacks (their caller otherwise) */
	uint64_t interval;		/* ns between rss samples, 0: none */
	uint64_t sample;		/* --sample: mean bytes between recorded
					 * allocations, 0: all */
	uint64_t seed;			/* their draws' seed, when seeded */
	bool seeded;
};

#define MSC_CEV_BATCH 64

struct msc_cend {
	const char *reason;		/* "exit", "signal", "exec", "interrupted" */
	int status;			/* exit status, -1 when unknown */
	int signal;			/* terminating signal, 0 when none */
	bool core;
	uint64_t lost;			/* records dropped (lossy mode) */
	uint64_t waits;			/* times a thread waited for ring space */
	bool corrupt;			/* a ring held something that was not a record */
};

struct msc_cproc {
	int pid, ppid;
	char exe[256];
	bool forked;			/* a fork child of a recorded process */
	bool is_child;			/* the collector's own child */
	void *user;			/* the owner's per-process state */
	struct msc_collector_private *priv;
};

struct msc_collect_ops {
	/* A process connected: record it?  (Set p->user here.) */
	bool (*attach)(void *ctx, struct msc_cproc *p);
	/* Events of one process in order, a batch at a time (at most
	 * MSC_CEV_BATCH): the owner can ask for the memory the coming events
	 * will touch before it handles the first, so that their cache misses
	 * overlap. */
	void (*events)(void *ctx, struct msc_cproc *p, const struct msc_cevent *ev, size_t n);
	/* The process waits at exit; sp is the exiting thread's stack pointer. */
	void (*scan)(void *ctx, struct msc_cproc *p, uint64_t sp, uint32_t tid);
	void (*detach)(void *ctx, struct msc_cproc *p, const struct msc_cend *end);
	void (*warn)(void *ctx, const char *fmt, ...);
};

struct msc_collector;

/* Creates the socket directory and calibrates the clock. */
struct msc_collector *msc_collector_new(const struct msc_collect_opts *o,
					const struct msc_collect_ops *ops, void *ctx,
					struct msc_stacks *stacks, struct msc_err *err);
/* Removes the socket and its directory; ends nothing (see _finish). */
void msc_collector_free(struct msc_collector *c);

/* The path to put in MEMSCOPE_SOCK (as the process it is for sees it). */
const char *msc_collector_socket(const struct msc_collector *c);
/*
 * For a process that will not see the socket at its path (another mount
 * namespace: a container, a service's private /tmp): the socket is made
 * again in a new directory of the process's own temporary directory,
 * through /proc/PID/root, and msc_collector_socket() is its path there.
 * 0 (also when it sees it already), or -errno with err said.
 */
int msc_collector_listen_for(struct msc_collector *c, int pid, struct msc_err *err);
/* The collector lifts its own address-space limit (RLIMIT_AS) so as to map
 * the regions: the limit it had, for a program it starts (NULL: as it is). */
const struct rlimit *msc_collector_own_limit(void);

/*
 * The rings of the sessions from now on, for a process of `threads`
 * threads already running (attach): smaller with more threads, so that
 * what they can write ahead of the collector stays about 8 MiB.  The
 * collector shares the CPUs with them: hundreds of busy threads leave it
 * a sliver, and what full-sized rings let them write ahead would take it
 * long to read after a detach.  Smaller rings make the threads wait
 * sooner, which gives the collector the CPU while they record.
 */
void msc_collector_size_rings(struct msc_collector *c, int threads);

/*
 * Lets processes of another user connect too (attaching, as root, to
 * their process): the socket's directory becomes theirs.  0 or -errno.
 */
int msc_collector_allow_uid(struct msc_collector *c, unsigned uid);

/* A descriptor msc_collector_poll() waits on too (readable: it returns
 * MSC_POLL_WATCH, so that its caller may serve it), or -1. */
void msc_collector_watch(struct msc_collector *c, int fd);

/* Watch pid, our child: reap it and end its sessions with its status. */
void msc_collector_set_child(struct msc_collector *c, int pid);
/* true once the child was reaped; *status is its wait status. */
bool msc_collector_child_done(const struct msc_collector *c, int *status);
/* The reaped child's peak rss (bytes) and cpu time (ns), from wait4. */
bool msc_collector_child_usage(const struct msc_collector *c, uint64_t *hwm, uint64_t *cpu);

/*
 * Does one round: accepts connections, drains rings, delivers events and
 * samples, reaps ended processes.  Waits up to timeout_ms for something to
 * happen (also on extra_fd when >= 0): less when the rings fill at a pace
 * or an rss sample is due, and, in a spell of rounds that find nothing,
 * 2 ms, then twice as long each time up to 8 * timeout_ms (100 ms at most,
 * timeout_ms at least; not below a timeout of 2 ms).  Returns what it found
 * readable: MSC_POLL_EXTRA (extra_fd), MSC_POLL_WATCH (the watched one), or
 * 0.
 */
#define MSC_POLL_EXTRA 1
#define MSC_POLL_WATCH 2
int msc_collector_poll(struct msc_collector *c, int extra_fd, int timeout_ms);

/*
 * For a caller that stopped every thread of pid (msc_freeze): delivers
 * every event they committed, so that the recorder's view is the
 * process's.  0; -EAGAIN when a thread stopped inside a hook (an event of
 * it may yet come, older than others: let it run and try again); -ESRCH
 * when pid is not recorded.
 */
int msc_collector_settle(struct msc_collector *c, int pid);

/* The child ended, and someone else's wait took its status and usage
 * (a wait for a ptrace stop): the collector takes them from there. */
void msc_collector_child_exited(struct msc_collector *c, int status, const struct rusage *ru);

/* Processes still recorded. */
unsigned msc_collector_sessions(const struct msc_collector *c);

/* Asks every shim to stop, drains and ends every session with `reason`. */
void msc_collector_finish(struct msc_collector *c, const char *reason);

/* ns since the collector started (its first call may end the clock's setup). */
uint64_t msc_collector_now(struct msc_collector *c);

/*
 * --sample: what the process's shim counted and did not record so far
 * (msc_proto.h, "Sampling"): allocations, their bytes, and frees.  Valid
 * until ops->detach returns.  false when p has no region.
 */
bool msc_cproc_unsampled(const struct msc_cproc *p, uint64_t *allocs, uint64_t *bytes,
			 uint64_t *frees);

#endif
