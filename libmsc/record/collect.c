/* SPDX-License-Identifier: MIT */
/*
 * The collector's hot path: each ring read up to its committed head, its
 * records checked and decoded, and the rings' events merged by timestamp up
 * to the watermark and handed over in batches (collect_pump), and
 * msc_collector_settle.  What runs per event stays static here, so that it
 * inlines; collect_internal.h lists the files of the rest.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect_internal.h"
#include "msc_collect.h"
#include "msc_hash.h"

#define RELEASE_EVERY (64u * 1024)	/* bytes read before the tail moves */

static void warn(struct msc_collector *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!c->ops->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->ops->warn(c->ctx, "%s", msg);
}

/*
 * A process whose region holds something the shim never writes: said once
 * per process (the end record's `corrupt` says it too).  The collector
 * reads on what it can still trust.
 */
static void corrupt(struct msc_collector *c, struct msc_collector_private *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (p->corrupt)
		return;
	p->corrupt = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warn(c, "pid %d: %s", p->pub.pid, msg);
}

/* --------------------------------------------------------------- rings */

/*
 * A ring that is never read again must not keep its thread waiting for
 * room (nor for a scan it asked for there): `abandoned` tells the shim to
 * drop instead (msc_proto.h), and a thread asleep for room is woken to see
 * it.  Said again at each round in case the target wrote over it.
 */
static void abandon(struct ring_cur *cur)
{
	struct msc_ring *r = cur->ring;

	__atomic_store_n(&r->abandoned, 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_add_fetch(&r->wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &r->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void break_ring(struct msc_collector *c, struct msc_collector_private *p, unsigned ri,
		       const char *what)
{
	p->cur[ri].broken = true;
	p->cur[ri].have = false;
	abandon(&p->cur[ri]);
	corrupt(c, p, "ring %u %s; its later events are lost", ri, what);
}

/*
 * The fewest words a record of each type has (msc_proto.h).  A shorter one
 * is not a record the shim writes, and its fields would be read from the
 * next record or past the ring's end.  THREAD records grew over time: the
 * fields past the timestamp are read as far as there are.
 */
static const uint8_t min_words[MSC_EV_MAX] = {
	[MSC_EV_ALLOC] = 4,	[MSC_EV_FREE] = 3,	[MSC_EV_UNFREE] = 3,
	[MSC_EV_STACK] = 1,	[MSC_EV_MMAP] = 4,	[MSC_EV_MUNMAP] = 4,
	[MSC_EV_MREMAP] = 6,	[MSC_EV_BRK] = 4,	[MSC_EV_THREAD] = 2,
	[MSC_EV_MODULES] = 1,	[MSC_EV_MODULE] = 4,	[MSC_EV_MODULES_END] = 1,
	[MSC_EV_EXIT] = 3,	[MSC_EV_SCAN] = 3,	[MSC_EV_LOST] = 1,
	[MSC_EV_FORK] = 2,	[MSC_EV_THREAD_EXIT] = 2,	[MSC_EV_POOL] = 3,
	[MSC_EV_HIDDEN] = 3,	[MSC_EV_MARK] = 2,
};

/*
 * Whether a record of type and bytes, at off in a ring of size and absolute
 * position pos, is one the shim writes and lies wholly before head.
 */
static inline bool record_fits(unsigned type, uint64_t bytes, uint64_t off, uint64_t size,
			       uint64_t pos, uint64_t head)
{
	return type < MSC_EV_MAX && bytes && bytes >= (uint64_t)min_words[type] * 8 &&
	       off + bytes <= size && pos + bytes <= head;
}

/*
 * Advances cur over records that carry no timestamp (processing them) until
 * a timestamped event waits at cur->pos or the committed data ends.
 */
static void ring_peek(struct msc_collector *c, struct msc_collector_private *p, unsigned ri)
{
	struct ring_cur *cur = &p->cur[ri];
	uint64_t head = cur->head;
	uint64_t size = p->ring_size, mask = size - 1;
	uint8_t *data = cur->data;

	/* The producer's cache line is read once per batch, not per event:
	 * every read would pull it away from the writing thread. */
	if (cur->pos >= head)
		head = cur->head = __atomic_load_n(&cur->ring->head, __ATOMIC_ACQUIRE);
	/*
	 * The producer never goes back, nor more than a ring ahead of the
	 * tail we gave back (msc_proto.h).  A head that does was written by
	 * something else, and reading up to it would deliver the ring's stale
	 * records, lap after lap.
	 */
	if (!cur->broken && (head < cur->pos || head - cur->released > size)) {
		break_ring(c, p, ri, "has a head its thread never wrote");
		return;
	}

	while (!cur->have && !cur->broken && cur->pos < head) {
		uint64_t off = cur->pos & mask;
		const uint64_t *rec = (const uint64_t *)(data + off);

		/* The producer wrote these lines on another core: ask for the
		 * next ones early. */
		__builtin_prefetch(data + ((cur->pos + 256) & mask));
		/* Read once: what is checked is what is used. */
		uint64_t hdr = __atomic_load_n(&rec[0], __ATOMIC_RELAXED);
		unsigned type = MSC_EV_TYPE(hdr), words = MSC_EV_WORDS(hdr);

		if (type == MSC_EV_PAD) {
			uint64_t skip = (uint64_t)MSC_EV_AUX(hdr) * 8;

			/* Past the head, it would give back space the producer
			 * has not filled: it would wait for room forever. */
			if (!skip || off + skip != size || cur->pos + skip > head) {
				break_ring(c, p, ri, "holds something that is not a record");
				break;
			}
			cur->pos += skip;
			continue;
		}
		if (!record_fits(type, (uint64_t)words * 8, off, size, cur->pos, head)) {
			break_ring(c, p, ri, "holds something that is not a record");
			break;
		}
		switch (type) {
		case MSC_EV_STACK:
			collect_handle_stack(c, p, cur, MSC_EV_AUX(hdr), rec + 1, words - 1);
			break;
		case MSC_EV_MODULES:
			cur->building = true;
			cur->nbuild = 0;
			break;
		case MSC_EV_MODULE:
			if (cur->building)
				collect_handle_module(c, cur, rec, words);
			break;
		case MSC_EV_MODULES_END:
			if (cur->building)
				collect_finish_modmap(p, cur);
			break;
		case MSC_EV_LOST:
			break;
		default:
			cur->ts = __atomic_load_n(&rec[1], __ATOMIC_RELAXED);
			/* Far in the future, it would hold its ring back until
			 * then, and its thread would wait for room.  (Our clock
			 * is read again only when an event passes the bound.) */
			if (cur->ts > c->future_raw) {
				c->future_raw = raw_now(c) + c->future_slack_raw;
				if (cur->ts > c->future_raw) {
					break_ring(c, p, ri, "holds an event stamped in the future");
					return;
				}
			}
			cur->have = true;
			cur->rec = rec;
			cur->hdr = hdr;
			continue;	/* do not advance: delivered by the merge */
		}
		cur->pos += (uint64_t)words * 8;
	}
}

/*
 * ring_peek()'s common case, inlined into the merge: the next record is an
 * allocation or a free, whole before the head already read (and checked by
 * ring_peek, which reread it: a head only changes there).  True when it
 * made that record the waiting event; false leaves cur as it was, for
 * ring_peek to look at.
 */
static inline bool ring_peek_block(const struct msc_collector *c,
				   const struct msc_collector_private *p, struct ring_cur *cur)
{
	uint64_t size = p->ring_size, off = cur->pos & (size - 1), bytes;
	const uint64_t *rec = (const uint64_t *)(cur->data + off);
	uint64_t hdr, ts;
	unsigned type;

	if (cur->pos >= cur->head)
		return false;
	__builtin_prefetch(cur->data + ((cur->pos + 256) & (size - 1)));
	hdr = __atomic_load_n(&rec[0], __ATOMIC_RELAXED);
	type = MSC_EV_TYPE(hdr);
	bytes = (uint64_t)MSC_EV_WORDS(hdr) * 8;
	if ((type != MSC_EV_ALLOC && type != MSC_EV_FREE) ||
	    !record_fits(type, bytes, off, size, cur->pos, cur->head))
		return false;
	ts = __atomic_load_n(&rec[1], __ATOMIC_RELAXED);
	if (ts > c->future_raw)
		return false;
	cur->ts = ts;
	cur->have = true;
	cur->rec = rec;
	cur->hdr = hdr;
	return true;
}

static uint32_t map_stack(struct msc_collector_private *p, uint32_t shim_id)
{
	uint32_t id = shim_id < p->stack_map_cap ? p->stack_map[shim_id] : 0;

	if (!id && p->stack_far.count) {
		const uint64_t *far = msc_u64map_get(&p->stack_far, (uint64_t)shim_id + 1);

		if (far)
			id = (uint32_t)*far;
	}
	return id;
}

/* Hands the delivered events over, in order. */
static void flush_batch(struct msc_collector *c, struct msc_collector_private *p)
{
	if (p->nbatch)
		c->ops->events(c->ctx, &p->pub, p->batch, p->nbatch);
	p->nbatch = 0;
}

/* The next slot of the batch, flushing it if full. */
static struct msc_cevent *batch_slot(struct msc_collector *c, struct msc_collector_private *p)
{
	if (p->nbatch == MSC_CEV_BATCH)
		flush_batch(c, p);
	return &p->batch[p->nbatch];
}

/*
 * Hands the event waiting at cur over (to the batch).  ring_peek() checked
 * its header, kept in cur: the record has the words its type reads.
 */
static void deliver(struct msc_collector *c, struct msc_collector_private *p, struct ring_cur *cur)
{
	const uint64_t *rec = cur->rec;
	uint64_t hdr = cur->hdr;
	unsigned type = MSC_EV_TYPE(hdr), words = MSC_EV_WORDS(hdr);
	struct msc_cevent *e = batch_slot(c, p);

	/* Only what each type uses is set: this runs for every event. */
	e->stack = 0;
	cur->have = false;
	cur->pos += (uint64_t)words * 8;
	e->ts = to_ns(c, cur->ts);
	e->tid = cur->tid;
	e->fn = MSC_EV_FLAGS(hdr);
	switch (type) {
	case MSC_EV_ALLOC:
		e->type = MSC_CEV_ALLOC;
		e->stack = map_stack(p, MSC_EV_AUX(hdr));
		e->v[0] = rec[2];
		e->v[1] = rec[3];
		e->v[2] = words >= 5 ? rec[4] : 0;		/* pool */
		break;
	case MSC_EV_FREE:
		e->type = MSC_CEV_FREE;
		e->stack = map_stack(p, MSC_EV_AUX(hdr) & ~MSC_FREE_TEMPORARY);	/* of the call */
		e->v[0] = rec[2];
		e->v[1] = words >= 4 ? rec[3] : 0;		/* pool */
		e->v[2] = !!(MSC_EV_AUX(hdr) & MSC_FREE_TEMPORARY);
		break;
	case MSC_EV_POOL:
		e->type = MSC_EV_FLAGS(hdr) == MSC_POOL_CREATE ? MSC_CEV_POOL_CREATE :
			  MSC_CEV_POOL_DESTROY;
		e->stack = map_stack(p, MSC_EV_AUX(hdr));
		e->v[0] = rec[2];
		/* The name's words, as many as came (a short one is a
		 * nameless pool); the aggregator stops at the first NUL. */
		memset(&e->v[1], 0, MSC_POOL_NAME);
		if (e->type == MSC_CEV_POOL_CREATE && words > 3)
			memcpy(&e->v[1], rec + 3, (words - 3 < MSC_POOL_NAME / 8 ? words - 3 :
						   MSC_POOL_NAME / 8) * sizeof(uint64_t));
		break;
	case MSC_EV_MARK:
		e->type = MSC_CEV_MARK;
		e->stack = map_stack(p, MSC_EV_AUX(hdr));
		memset(e->mark.name, 0, MSC_MARK_NAME);
		if (words > 2)
			memcpy(e->mark.name, rec + 2, (words - 2 < MSC_MARK_NAME / 8 ? words - 2 :
						       MSC_MARK_NAME / 8) * sizeof(uint64_t));
		e->mark.name[MSC_MARK_NAME - 1] = '\0';
		break;
	case MSC_EV_UNFREE:
	case MSC_EV_HIDDEN:
		e->type = type == MSC_EV_UNFREE ? MSC_CEV_UNFREE : MSC_CEV_HIDDEN;
		e->v[0] = rec[2];
		break;
	case MSC_EV_MMAP:
	case MSC_EV_MUNMAP:
	case MSC_EV_BRK:
		e->type = type == MSC_EV_MMAP ? MSC_CEV_MMAP :
			  type == MSC_EV_MUNMAP ? MSC_CEV_MUNMAP : MSC_CEV_BRK;
		e->stack = type == MSC_EV_MUNMAP ? 0 : map_stack(p, MSC_EV_AUX(hdr));
		e->v[0] = rec[2];
		e->v[1] = rec[3];
		break;
	case MSC_EV_MREMAP:
		e->type = MSC_CEV_MREMAP;
		e->stack = map_stack(p, MSC_EV_AUX(hdr));
		memcpy(e->v, rec + 2, 4 * sizeof(uint64_t));
		break;
	case MSC_EV_THREAD:
		if (!(MSC_EV_FLAGS(hdr) & MSC_THREAD_SHARED))
			cur->tid = MSC_EV_AUX(hdr);
		e->type = MSC_CEV_THREAD;
		e->tid = MSC_EV_AUX(hdr);
		e->v[0] = words >= 5 ? rec[2] : 0;		/* shim state */
		e->v[1] = words >= 4 ? rec[3] : 0;		/* stack top */
		e->v[2] = words >= 5 ? rec[4] : 0;		/* shim state size */
		e->v[3] = words >= 7 ? rec[5] : 0;		/* stack bottom */
		e->v[4] = words >= 7 ? rec[6] : 0;		/* thread pointer */
		break;
	case MSC_EV_THREAD_EXIT:
		e->type = MSC_CEV_THREAD_EXIT;
		e->tid = MSC_EV_AUX(hdr);
		break;
	case MSC_EV_EXIT:
		p->exit_call_status = (int)rec[2];
		e->type = MSC_CEV_EXIT;
		e->v[0] = rec[2];
		break;
	case MSC_EV_SCAN:
		/* The scan looks at what every earlier event made. */
		flush_batch(c, p);
		if (c->ops->scan)
			c->ops->scan(c->ctx, &p->pub, rec[2], MSC_EV_AUX(hdr));
		/* Let it go on exiting, whatever the scan found. */
		__atomic_store_n(&p->ctl->scan_done, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &p->ctl->scan_done, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		return;
	default:
		return;
	}
	p->nbatch++;
}

/*
 * Rings [0, n) have been claimed.  The shim only ever raises rings_used
 * (by compare-and-swap), so a lower value is a stray write: the rings it
 * would hide stay read (their threads would wait for room forever
 * otherwise), and a higher one is held to the rings there are.
 */
static uint32_t rings_in_use(struct msc_collector_private *p)
{
	uint32_t used = __atomic_load_n(&p->ctl->rings_used, __ATOMIC_ACQUIRE);

	if (used > p->ncur)
		used = p->ncur;
	if (used > p->rings_used)
		p->rings_used = used;
	return p->rings_used;
}

static uint64_t watermark(struct msc_collector *c, struct msc_collector_private *p, bool final)
{
	uint64_t w, now;
	uint32_t i, used;

	if (final)
		return UINT64_MAX;
	now = raw_now(c);
	w = now > c->slack_raw ? now - c->slack_raw : 0;
	used = rings_in_use(p);
	for (i = 0; i < used; i++) {
		struct msc_ring *r = p->cur[i].ring;

		/* A thread inside a hook may still commit an event as old as
		 * its last committed one (it took its timestamp after).  Not
		 * in a ring given up: none of its events is delivered, and
		 * its flag would hold every other ring back.  Nor in one no
		 * thread owns: its last thread lowered the flag before it
		 * let the ring go, so a raised one is a stray write. */
		if (p->cur[i].broken || (i > 0 && __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) !=
							   MSC_RING_OWNED))
			continue;
		if (__atomic_load_n(&r->busy, __ATOMIC_ACQUIRE)) {
			uint64_t last = __atomic_load_n(&r->last_ts, __ATOMIC_ACQUIRE);

			if (last < w)
				w = last;
		}
	}
	return w;
}

static void deliver_sample(struct msc_collector *c, struct msc_collector_private *p)
{
	struct sample *s = &p->samples[p->samples_head++];
	struct msc_cevent *ev = batch_slot(c, p);

	memset(ev, 0, sizeof(*ev));
	ev->type = MSC_CEV_SAMPLE;
	ev->ts = to_ns(c, s->ts);
	ev->v[0] = s->rss;
	p->nbatch++;
	if (p->samples_head == p->nsamples)
		p->samples_head = p->nsamples = 0;
}

/* Gives the ring's read bytes back to its producer, waking it if it sleeps
 * for space (msc_proto.h). */
static void release_space(struct ring_cur *cur)
{
	struct msc_ring *r = cur->ring;

	__atomic_store_n(&r->tail, cur->pos, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->waiting, __ATOMIC_RELAXED)) {
		__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&r->wake, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &r->wake, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
	cur->released = cur->pos;
}

/* Moves cand[i] down the heap (oldest next event at the root). */
static void cand_sift(const struct msc_collector_private *p, uint32_t *cand, uint32_t n, uint32_t i)
{
	uint32_t v = cand[i];
	uint64_t ts = p->cur[v].ts;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && p->cur[cand[c + 1]].ts < p->cur[cand[c]].ts)
			c++;
		if (p->cur[cand[c]].ts >= ts)
			break;
		cand[i] = cand[c];
		i = c;
	}
	cand[i] = v;
}

/*
 * Delivers every event older than the watermark, in time order.  The
 * watermark comes first and the rings' heads are read after it: an event
 * older than the watermark is then either committed, and so seen, or its
 * thread is inside a hook and the watermark is no later than that thread's
 * last event (see watermark()).  Heads read before the watermark could miss
 * an event committed in between, and an older one would follow a newer.
 */
unsigned collect_pump(struct msc_collector *c, struct msc_collector_private *p, bool final)
{
	uint64_t w;
	uint32_t used, i, ncand = 0;
	unsigned delivered = 0;
	uint32_t *cand = p->cand;
	/* A process waits for its leak scan (msc_proto.h) */
	bool urgent = !final && __atomic_load_n(&p->ctl->scan_wanted, __ATOMIC_ACQUIRE) &&
		      !__atomic_load_n(&p->ctl->scan_done, __ATOMIC_ACQUIRE);

	c->urgent |= urgent;
	if (!collect_clock_ready(c, final || urgent))
		return 0;
	w = watermark(c, p, final);

	/* The shim reads the layout from the control page, never writes it:
	 * a change is a stray write of the target's (its threads that take a
	 * ring from now on may write it out of place). */
	if (p->ctl->ring_size != p->ring_size || p->ctl->nrings != p->ncur)
		corrupt(c, p, "its control page was overwritten; the rings are read as they were made");
	used = rings_in_use(p);
	/* The rings with an event waiting; usually one or a few. */
	for (i = 0; i < used; i++) {
		struct ring_cur *cur = &p->cur[i];

		c->round_bytes -= cur->pos;
		cur->head = __atomic_load_n(&cur->ring->head, __ATOMIC_ACQUIRE);
		if (!cur->have)
			ring_peek(c, p, i);
		if (cur->have)
			cand[ncand++] = i;
	}
	/* A min-heap of the rings by their next event's time: the next
	 * event in time order is a few steps of the heap away, not a scan
	 * of every ring, which with hundreds of threads' events interleaved
	 * would be most of the collector's work. */
	for (i = ncand / 2; i-- > 0;)
		cand_sift(p, cand, ncand, i);
	for (;;) {
		int best = -1;
		uint64_t best_ts = w, next_ts = w;
		struct ring_cur *cur;

		if (ncand && p->cur[cand[0]].ts < w) {
			best = (int)cand[0];
			best_ts = p->cur[cand[0]].ts;
			/* The second oldest is a child of the root. */
			if (ncand > 1 && p->cur[cand[1]].ts < next_ts)
				next_ts = p->cur[cand[1]].ts;
			if (ncand > 2 && p->cur[cand[2]].ts < next_ts)
				next_ts = p->cur[cand[2]].ts;
		}
		if (p->samples_head < p->nsamples) {
			uint64_t sts = p->samples[p->samples_head].ts;

			if (sts <= best_ts && sts < w) {
				deliver_sample(c, p);
				continue;
			}
			if (sts < next_ts)
				next_ts = sts;
		}
		if (best < 0)
			break;
		/* This ring's events up to the next one of another ring (or
		 * the next sample) need no comparing. */
		cur = &p->cur[best];
		do {
			deliver(c, p, cur);
			delivered++;
			/* A long round gives space back as it goes: the
			 * producer may be waiting for it. */
			if (cur->pos - cur->released >= RELEASE_EVERY)
				release_space(cur);
			if (!ring_peek_block(c, p, cur))
				ring_peek(c, p, (unsigned)best);
		} while (cur->have && cur->ts < next_ts);
		if (!cur->have)
			cand[0] = cand[--ncand];
		cand_sift(p, cand, ncand, 0);
	}
	flush_batch(c, p);
	for (i = 0; i < used; i++) {
		struct ring_cur *cur = &p->cur[i];
		struct msc_ring *r = cur->ring;

		c->round_bytes += cur->pos;

		/* Only we write the tail: one that moved was written over,
		 * and its thread would wait for room we gave back already. */
		if (cur->pos != cur->released ||
		    __atomic_load_n(&r->tail, __ATOMIC_RELAXED) != cur->released)
			release_space(cur);
		if (cur->broken) {
			/* Never handed to a new thread: it would drop all. */
			if (!__atomic_load_n(&r->abandoned, __ATOMIC_RELAXED))
				abandon(cur);
			continue;
		}
		/* An exited thread's ring, fully read: give it to a new one. */
		if (i > 0 && __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == MSC_RING_CLOSED &&
		    !cur->have && cur->pos == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE)) {
			cur->mods = NULL;
			__atomic_store_n(&r->state, MSC_RING_FREE, __ATOMIC_RELEASE);
		}
	}
	return delivered;
}

int msc_collector_settle(struct msc_collector *c, int pid)
{
	struct msc_collector_private *p;
	uint32_t used, i;

	for (p = c->procs; p && p->pub.pid != pid; p = p->next)
		;
	if (!p)
		return -ESRCH;
	used = rings_in_use(p);
	for (i = 0; i < used; i++) {
		struct msc_ring *r = p->cur[i].ring;

		if (p->cur[i].broken)
			continue;
		if (__atomic_load_n(&r->busy, __ATOMIC_ACQUIRE) ||
		    (i == 0 && __atomic_load_n(&r->lock, __ATOMIC_ACQUIRE)))
			return -EAGAIN;
	}
	/* Every thread is stopped outside the hooks: nothing older than
	 * what is committed can come, so everything goes, in order. */
	collect_pump(c, p, true);
	return 0;
}
