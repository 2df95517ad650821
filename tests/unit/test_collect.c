/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the collector's ring decoding (libmsc/record/collect.c), driven
 * through its public API as ms-record drives it.  The test plays the shim by
 * hand: it connects and says hello, maps the region it is handed, lays
 * records out in the rings as msc_proto.h says and publishes them by moving
 * `head`; then it polls the collector and looks at what was delivered, field
 * by field.  Timestamps are CLOCK_MONOTONIC ns (MEMSCOPE_NO_TSC), so that a
 * test can stamp an event in the past, or in the future, exactly.
 *
 * A region that a target can write anything into must never crash the
 * collector, loop it forever or make a thread of the target wait forever:
 * the corrupt-ring tests check that each kind of garbage gives one warning,
 * sets the end's `corrupt`, and leaves the other rings delivered.  Every
 * test runs under alarm(): a hang fails it instead of blocking `make unit`.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_collect.h"
#include "msc_stacks.h"
#include "msc_util.h"

/*
 * Small rings, so that a few hundred records go round several times.  16
 * rings of 4 KiB make a region of whole pages: a read past the last ring's
 * end is a read past the mapping.
 */
#define RING_SIZE 4096u
#define NRINGS 16u
#define MAX_EVENTS 4096
#define TEST_TIMEOUT_S 10

struct rig {
	struct msc_collector *c;
	struct msc_stacks st;
	int sock;
	uint8_t *region;
	size_t region_size;
	struct msc_ctl *ctl;
	uint64_t head[NRINGS];		/* the writer's own heads, as the shim keeps them */
	unsigned pads;			/* PAD records written */
	uint64_t t0;			/* CLOCK_MONOTONIC ns at the start: ts of "now" */
	uint64_t d0;			/* what the collector makes of t0 (its ns) */
	bool d0_known;
	struct msc_cevent ev[MAX_EVENTS];
	size_t nev;
	unsigned nwarn;
	char warns[4096];
	unsigned ndetach;
	struct msc_cend end;
	char end_reason[32];
};

/* ------------------------------------------------------------ the owner */

static bool on_attach(void *ctx, struct msc_cproc *p)
{
	(void)ctx;
	(void)p;
	return true;
}

static void on_events(void *ctx, struct msc_cproc *p, const struct msc_cevent *ev, size_t n)
{
	struct rig *g = ctx;

	(void)p;
	assert_true(n >= 1 && n <= MSC_CEV_BATCH);
	assert_true(g->nev + n <= MAX_EVENTS);
	memcpy(&g->ev[g->nev], ev, n * sizeof(*ev));
	g->nev += n;
}

static void on_detach(void *ctx, struct msc_cproc *p, const struct msc_cend *end)
{
	struct rig *g = ctx;

	(void)p;
	g->ndetach++;
	g->end = *end;
	snprintf(g->end_reason, sizeof(g->end_reason), "%s", end->reason ? end->reason : "");
	g->end.reason = g->end_reason;
}

static void on_warn(void *ctx, const char *fmt, ...)
{
	struct rig *g = ctx;
	size_t n = strlen(g->warns);
	va_list ap;

	g->nwarn++;
	va_start(ap, fmt);
	vsnprintf(g->warns + n, sizeof(g->warns) - n, fmt, ap);
	va_end(ap);
	n = strlen(g->warns);
	snprintf(g->warns + n, sizeof(g->warns) - n, "\n");
}

static const struct msc_collect_ops ops = {
	.attach = on_attach,
	.events = on_events,
	.detach = on_detach,
	.warn = on_warn,
};

/* ------------------------------------------------------------- the shim */

static bool recv_welcome(int s, struct msc_welcome *w, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { w, sizeof(*w) };
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(s, &mh, 0) != (ssize_t)sizeof(*w))
		return false;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return false;
	memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return true;
}

/* This process connects as a recorded process would (pid: our own, which
 * the collector checks against the socket's credentials). */
static void rig_connect(struct rig *g)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct msc_hello h = { 0 };
	struct msc_welcome w;
	int fd = -1;

	g->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(g->sock >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", msc_collector_socket(g->c));
	assert_int_equal(connect(g->sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	h.magic = MSC_PROTO_MAGIC;
	h.version = MSC_PROTO_VERSION;
	h.pid = getpid();
	h.ppid = getppid();
	snprintf(h.exe, sizeof(h.exe), "/bin/test_collect");
	assert_int_equal(send(g->sock, &h, sizeof(h), MSG_NOSIGNAL), (ssize_t)sizeof(h));
	/* The collector accepts during a poll; the hello is there already. */
	msc_collector_poll(g->c, -1, 1000);
	assert_int_equal(msc_collector_sessions(g->c), 1);
	assert_true(recv_welcome(g->sock, &w, &fd));
	assert_int_equal(w.status, 0);
	assert_int_equal(w.region_size, msc_region_size(RING_SIZE, NRINGS));
	g->region_size = w.region_size;
	g->region = mmap(NULL, g->region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(g->region != MAP_FAILED);
	close(fd);
	g->ctl = (struct msc_ctl *)g->region;
	assert_int_equal(g->ctl->magic, MSC_PROTO_MAGIC);
	assert_int_equal(g->ctl->ring_size, RING_SIZE);
	assert_int_equal(g->ctl->nrings, NRINGS);
	assert_int_equal(g->ctl->ts_kind, MSC_TS_MONOTONIC);
	assert_int_equal(g->ctl->rings_used, 1);
}

static struct rig *rig_new(void)
{
	struct msc_collect_opts o = { .ring_size = RING_SIZE, .nrings = NRINGS };
	struct rig *g = calloc(1, sizeof(*g));
	struct msc_err err;

	if (!g || msc_stacks_init(&g->st, false))
		return NULL;
	g->sock = -1;
	g->c = msc_collector_new(&o, &ops, g, &g->st, &err);
	if (!g->c)
		return NULL;
	/* Later than the collector's start: events stamped from here on
	 * come out at a positive time. */
	usleep(10);
	g->t0 = msc_now_monotonic();
	return g;
}

static void rig_free(struct rig *g)
{
	msc_collector_free(g->c);
	if (g->region)
		munmap(g->region, g->region_size);
	if (g->sock >= 0)
		close(g->sock);
	msc_stacks_release(&g->st);
	free(g);
}

static int setup(void **state)
{
	alarm(TEST_TIMEOUT_S);
	*state = rig_new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	rig_free(*state);
	alarm(0);
	return 0;
}

/* For the table-driven tests, which make a rig per case. */
static int guard_setup(void **state)
{
	(void)state;
	alarm(TEST_TIMEOUT_S);
	return 0;
}

static int guard_teardown(void **state)
{
	(void)state;
	alarm(0);
	return 0;
}

/* Our own arithmetic, not the control page's: tests overwrite that. */
static struct msc_ring *ring(struct rig *g, unsigned ri)
{
	return (struct msc_ring *)(g->region + MSC_PROTO_CTL_SIZE +
				   (uint64_t)ri * (MSC_PROTO_RING_HDR + RING_SIZE));
}

static uint8_t *ring_data(struct rig *g, unsigned ri)
{
	return msc_ring_data(ring(g, ri));
}

/* A thread takes ring ri, as thread_init() does. */
static void take_ring(struct rig *g, unsigned ri, uint32_t tid)
{
	struct msc_ring *r = ring(g, ri);

	r->state = MSC_RING_OWNED;
	r->tid = tid;
	g->head[ri] = r->head;
	if (g->ctl->rings_used < ri + 1)
		g->ctl->rings_used = ri + 1;
}

/*
 * Appends a record of 1 + n words (a header and the words given) to ring
 * ri, a PAD first if it would cross the ring's end, as ring_begin() does.
 * Not visible to the collector until publish().  The test must have left
 * room: a lossless writer would wait here.
 */
static void put(struct rig *g, unsigned ri, uint64_t hdr, unsigned n, const uint64_t *v)
{
	uint64_t bytes = (uint64_t)(1 + n) * 8, off = g->head[ri] & (RING_SIZE - 1);
	uint64_t tail = __atomic_load_n(&ring(g, ri)->tail, __ATOMIC_ACQUIRE);
	uint64_t *at;

	if (off + bytes > RING_SIZE) {
		uint64_t pad = RING_SIZE - off;

		assert_true(g->head[ri] + pad + bytes - tail <= RING_SIZE);
		*(uint64_t *)(ring_data(g, ri) + off) = msc_ev_hdr(MSC_EV_PAD, 0, 0, (uint32_t)(pad / 8));
		g->head[ri] += pad;
		g->pads++;
		off = 0;
	}
	assert_true(g->head[ri] + bytes - tail <= RING_SIZE);
	at = (uint64_t *)(ring_data(g, ri) + off);
	at[0] = hdr;
	memcpy(at + 1, v, n * 8);
	g->head[ri] += bytes;
}

/* A record of the given type whose length the header tells honestly. */
static void rec(struct rig *g, unsigned ri, unsigned type, unsigned flags, uint32_t aux,
		unsigned n, ...)
{
	uint64_t v[16];
	va_list ap;
	unsigned i;

	assert_true(n <= 16);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		v[i] = va_arg(ap, uint64_t);
	va_end(ap);
	put(g, ri, msc_ev_hdr(type, flags, 1 + n, aux), n, v);
}

static void publish(struct rig *g, unsigned ri)
{
	__atomic_store_n(&ring(g, ri)->head, g->head[ri], __ATOMIC_RELEASE);
}

/* Waits until an event stamped t0 + dt is older than the watermark (now
 * minus 50 us of slack). */
static void wait_past(struct rig *g, uint64_t dt)
{
	while (msc_now_monotonic() < g->t0 + dt + 200000)
		usleep(100);
}

/* One round of the collector, as ms-record's loop does it. */
static void poll_once(struct rig *g)
{
	msc_collector_poll(g->c, -1, 0);
}

static void finish(struct rig *g)
{
	msc_collector_finish(g->c, "interrupted");
	assert_int_equal(g->ndetach, 1);
	assert_int_equal(msc_collector_sessions(g->c), 0);
}

/* The collector's time for an event stamped t0 + dt: the first delivered
 * event (stamped t0 + dt0) tells where t0 is on its clock. */
static uint64_t ns_of(struct rig *g, uint64_t dt)
{
	assert_true(g->d0_known);
	return g->d0 + dt;
}

static void learn_clock(struct rig *g, const struct msc_cevent *e, uint64_t dt)
{
	assert_true(e->ts >= dt);
	g->d0 = e->ts - dt;
	g->d0_known = true;
	/* The collector started before t0 and the clocks are both ns. */
	assert_true(g->d0 > 0);
	assert_true(g->d0 < 1000000000ull);
}

static void expect_alloc(struct rig *g, size_t i, uint64_t dt, uint32_t tid, uint64_t ptr,
			 uint64_t size, unsigned fn)
{
	const struct msc_cevent *e = &g->ev[i];

	assert_true(i < g->nev);
	assert_int_equal(e->type, MSC_CEV_ALLOC);
	assert_int_equal(e->ts, ns_of(g, dt));
	assert_int_equal(e->tid, tid);
	assert_int_equal(e->fn, fn);
	assert_int_equal(e->v[0], ptr);
	assert_int_equal(e->v[1], size);
}

/* The canonical id of a one-frame stack at ip of a module mapped at base. */
static uint32_t stack_of(struct rig *g, const char *path, uint64_t base, const uint64_t *ips,
			 unsigned n)
{
	struct msc_frame_ref f[4];
	long mod = msc_stacks_module(&g->st, path, NULL, 0);
	unsigned i;

	assert_true(mod >= 0 && n <= 4);
	for (i = 0; i < n; i++) {
		f[i].ip = ips[i];
		f[i].module = (uint32_t)mod;
		f[i].addr = ips[i] - base;
	}
	return msc_stacks_intern(&g->st, f, n);
}

/* A module map of one module, "/opt/fake/libfake.so" mapped at base with one
 * segment [base, base + 0x10000), as modules_send() sends it. */
#define FAKE_PATH "/opt/fake/libfake.so"
#define FAKE_BASE 0x7f0000000000ull

static void send_modules(struct rig *g, unsigned ri)
{
	uint64_t v[16] = { 0 };
	size_t plen = strlen(FAKE_PATH);

	rec(g, ri, MSC_EV_MODULES, 0, 0, 1, g->t0);
	v[0] = FAKE_BASE;
	v[1] = (uint64_t)0 << 32 | plen;	/* no build-id */
	v[2] = 1;
	v[3] = FAKE_BASE;
	v[4] = FAKE_BASE + 0x10000;
	memcpy(&v[5], FAKE_PATH, plen + 1);
	put(g, ri, msc_ev_hdr(MSC_EV_MODULE, 0, (unsigned)(1 + 5 + (plen + 8) / 8), 0),
	    (unsigned)(5 + (plen + 8) / 8), v);
	rec(g, ri, MSC_EV_MODULES_END, 0, 0, 0);
}

/* -------------------------------------------------------- normal events */

/* Every kind of event a thread sends, each field where the shim put it. */
static void test_events_field_by_field(void **state)
{
	struct rig *g = *state;
	const uint64_t ips[2] = { FAKE_BASE + 0x1234, FAKE_BASE + 0x5678 };
	const uint32_t tid = 4711;
	const struct msc_cevent *e;
	uint32_t stack;

	rig_connect(g);
	take_ring(g, 1, tid);
	rec(g, 1, MSC_EV_THREAD, 0, tid, 6, g->t0 + 1, 0x5000ull, 0x7ffd0000ull, 0x240ull,
	    0x7ffc0000ull, 0x7f00dead0000ull);
	send_modules(g, 1);
	rec(g, 1, MSC_EV_STACK, 0, 1, 2, ips[0], ips[1]);
	rec(g, 1, MSC_EV_ALLOC, MSC_FN_CALLOC, 1, 3, g->t0 + 2, 0x10000ull, 48ull);
	rec(g, 1, MSC_EV_FREE, MSC_FN_DELETE, 0, 2, g->t0 + 3, 0x10000ull);
	rec(g, 1, MSC_EV_UNFREE, 0, 0, 2, g->t0 + 4, 0x10000ull);
	rec(g, 1, MSC_EV_MMAP, MSC_FN_MMAP, 1, 3, g->t0 + 5, 0x20000ull, 8192ull);
	rec(g, 1, MSC_EV_MUNMAP, MSC_FN_MMAP, 1, 3, g->t0 + 6, 0x20000ull, 4096ull);
	rec(g, 1, MSC_EV_MREMAP, MSC_FN_MREMAP, 1, 5, g->t0 + 7, 0x21000ull, 4096ull, 0x30000ull,
	    16384ull);
	rec(g, 1, MSC_EV_BRK, MSC_FN_BRK, 1, 3, g->t0 + 8, 0x555000ull, 0x556000ull);
	rec(g, 1, MSC_EV_EXIT, 0, 0, 2, g->t0 + 9, 3ull);
	rec(g, 1, MSC_EV_THREAD_EXIT, 0, tid, 1, g->t0 + 10);
	publish(g, 1);
	wait_past(g, 10);
	poll_once(g);

	stack = stack_of(g, FAKE_PATH, FAKE_BASE, ips, 2);
	assert_int_not_equal(stack, 0);
	assert_int_equal(g->nev, 10);
	e = &g->ev[0];
	learn_clock(g, e, 1);
	assert_int_equal(e->type, MSC_CEV_THREAD);
	assert_int_equal(e->tid, tid);
	assert_int_equal(e->v[0], 0x5000);
	assert_int_equal(e->v[1], 0x7ffd0000);
	assert_int_equal(e->v[2], 0x240);
	assert_int_equal(e->v[3], 0x7ffc0000);
	assert_int_equal(e->v[4], 0x7f00dead0000);
	expect_alloc(g, 1, 2, tid, 0x10000, 48, MSC_FN_CALLOC);
	assert_int_equal(g->ev[1].stack, stack);
	e = &g->ev[2];
	assert_int_equal(e->type, MSC_CEV_FREE);
	assert_int_equal(e->ts, ns_of(g, 3));
	assert_int_equal(e->tid, tid);
	assert_int_equal(e->fn, MSC_FN_DELETE);
	assert_int_equal(e->stack, 0);
	assert_int_equal(e->v[0], 0x10000);
	e = &g->ev[3];
	assert_int_equal(e->type, MSC_CEV_UNFREE);
	assert_int_equal(e->ts, ns_of(g, 4));
	assert_int_equal(e->v[0], 0x10000);
	e = &g->ev[4];
	assert_int_equal(e->type, MSC_CEV_MMAP);
	assert_int_equal(e->ts, ns_of(g, 5));
	assert_int_equal(e->fn, MSC_FN_MMAP);
	assert_int_equal(e->stack, stack);
	assert_int_equal(e->v[0], 0x20000);
	assert_int_equal(e->v[1], 8192);
	e = &g->ev[5];
	assert_int_equal(e->type, MSC_CEV_MUNMAP);
	assert_int_equal(e->ts, ns_of(g, 6));
	assert_int_equal(e->stack, 0);		/* an unmapping has no stack */
	assert_int_equal(e->v[0], 0x20000);
	assert_int_equal(e->v[1], 4096);
	e = &g->ev[6];
	assert_int_equal(e->type, MSC_CEV_MREMAP);
	assert_int_equal(e->ts, ns_of(g, 7));
	assert_int_equal(e->fn, MSC_FN_MREMAP);
	assert_int_equal(e->stack, stack);
	assert_int_equal(e->v[0], 0x21000);
	assert_int_equal(e->v[1], 4096);
	assert_int_equal(e->v[2], 0x30000);
	assert_int_equal(e->v[3], 16384);
	e = &g->ev[7];
	assert_int_equal(e->type, MSC_CEV_BRK);
	assert_int_equal(e->ts, ns_of(g, 8));
	assert_int_equal(e->stack, stack);
	assert_int_equal(e->v[0], 0x555000);
	assert_int_equal(e->v[1], 0x556000);
	e = &g->ev[8];
	assert_int_equal(e->type, MSC_CEV_EXIT);
	assert_int_equal(e->ts, ns_of(g, 9));
	assert_int_equal(e->v[0], 3);
	e = &g->ev[9];
	assert_int_equal(e->type, MSC_CEV_THREAD_EXIT);
	assert_int_equal(e->ts, ns_of(g, 10));
	assert_int_equal(e->tid, tid);

	/* Read to the end: the space is the writer's again. */
	assert_int_equal(ring(g, 1)->tail, g->head[1]);
	finish(g);
	assert_string_equal(g->end.reason, "interrupted");
	assert_false(g->end.corrupt);
	assert_int_equal(g->end.lost, 0);
	assert_int_equal(g->nwarn, 0);
	assert_int_equal(g->nev, 10);
}

/*
 * Records of three lengths go round a 4 KiB ring for eight laps, so that
 * PAD records fall at many offsets: every event comes out once, in order,
 * and the ring's space comes back at each round.
 */
static void test_pad_records_over_laps(void **state)
{
	struct rig *g = *state;
	const uint32_t tid = 100;
	uint64_t seq = 0, delivered = 0;
	size_t i;

	rig_connect(g);
	take_ring(g, 1, tid);
	rec(g, 1, MSC_EV_THREAD, 0, tid, 1, g->t0);
	publish(g, 1);
	while (g->head[1] < 8 * RING_SIZE) {
		/* Half a ring at a time, then the collector reads it. */
		uint64_t start = g->head[1];

		while (g->head[1] - start < RING_SIZE / 2) {
			seq++;
			switch (seq % 3) {
			case 0:
				rec(g, 1, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + seq, seq, seq * 8);
				break;
			case 1:
				rec(g, 1, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + seq, seq);
				break;
			default:
				rec(g, 1, MSC_EV_MREMAP, MSC_FN_MREMAP, 0, 5, g->t0 + seq, seq, 1ull,
				    seq + 1, 2ull);
				break;
			}
		}
		publish(g, 1);
		wait_past(g, seq);
		poll_once(g);
		assert_int_equal(ring(g, 1)->tail, g->head[1]);
	}
	/* Seven wraps, each with a PAD (4096 is not a sum of whole laps of
	 * 24 + 32 + 48 bytes, so the ring's end falls inside a record). */
	assert_true(g->pads >= 7);
	assert_int_equal(g->ev[0].type, MSC_CEV_THREAD);
	learn_clock(g, &g->ev[0], 0);
	for (i = 1; i < g->nev; i++) {
		const struct msc_cevent *e = &g->ev[i];
		uint64_t s = i;

		assert_int_equal(e->ts, ns_of(g, s));
		assert_int_equal(e->tid, tid);
		assert_int_equal(e->v[0], s);
		switch (s % 3) {
		case 0:
			assert_int_equal(e->type, MSC_CEV_ALLOC);
			assert_int_equal(e->v[1], s * 8);
			break;
		case 1:
			assert_int_equal(e->type, MSC_CEV_FREE);
			break;
		default:
			assert_int_equal(e->type, MSC_CEV_MREMAP);
			assert_int_equal(e->v[2], s + 1);
			break;
		}
		delivered++;
	}
	assert_int_equal(delivered, seq);
	finish(g);
	assert_false(g->end.corrupt);
	assert_int_equal(g->nwarn, 0);
}

/*
 * Two threads' rings merge by timestamp.  An event stamped in the future is
 * held back (and the events behind it in its ring) until the watermark
 * passes it; a ring whose thread is inside a hook holds back whatever is not
 * older than its last committed event.
 */
static void test_merge_by_timestamp(void **state)
{
	struct rig *g = *state;
	uint64_t future;
	size_t i;

	rig_connect(g);
	take_ring(g, 1, 11);
	take_ring(g, 2, 22);
	rec(g, 1, MSC_EV_THREAD, 0, 11, 1, g->t0 + 0);
	rec(g, 2, MSC_EV_THREAD, 0, 22, 1, g->t0 + 1);
	for (i = 0; i < 6; i++) {
		/* ring 1: 10, 30, 50, ...; ring 2: 20, 40, 60, ... */
		rec(g, 1, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 10 + 20 * i, 0x1000 + i, 1ull);
		rec(g, 2, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 20 + 20 * i, 0x2000 + i, 2ull);
	}
	publish(g, 1);
	publish(g, 2);
	wait_past(g, 200);
	poll_once(g);
	assert_int_equal(g->nev, 14);
	learn_clock(g, &g->ev[0], 0);
	assert_int_equal(g->ev[0].tid, 11);
	assert_int_equal(g->ev[1].tid, 22);
	for (i = 0; i < 12; i++) {
		unsigned from = i % 2 ? 2 : 1;

		expect_alloc(g, 2 + i, 10 + 10 * i, from == 1 ? 11 : 22,
			     (from == 1 ? 0x1000 : 0x2000) + i / 2, from, MSC_FN_MALLOC);
	}

	/* Ring 1: an event 100 ms ahead (a margin for a loaded machine) and
	 * one after it; ring 2: one now. */
	future = msc_now_monotonic() - g->t0 + 100000000;
	rec(g, 1, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + future, 0x1100ull, 1ull);
	rec(g, 1, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + future + 1, 0x1000ull);
	rec(g, 2, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 1000, 0x2100ull, 2ull);
	publish(g, 1);
	publish(g, 2);
	poll_once(g);
	assert_int_equal(g->nev, 15);
	expect_alloc(g, 14, 1000, 22, 0x2100, 2, MSC_FN_MALLOC);
	poll_once(g);
	assert_int_equal(g->nev, 15);
	wait_past(g, future + 1);
	poll_once(g);
	assert_int_equal(g->nev, 17);
	expect_alloc(g, 15, future, 11, 0x1100, 1, MSC_FN_MALLOC);
	assert_int_equal(g->ev[16].type, MSC_CEV_FREE);
	assert_int_equal(g->ev[16].ts, ns_of(g, future + 1));

	/*
	 * Ring 2's thread is inside a hook, its last event stamped at T:
	 * ring 1's events from T on wait, though they are in the past.
	 */
	{
		uint64_t base = msc_now_monotonic() - g->t0, T = base + 50;

		ring(g, 2)->last_ts = g->t0 + T;
		ring(g, 2)->busy = 1;
		rec(g, 1, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + T - 10, 0x1001ull);
		rec(g, 1, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + T, 0x1002ull);
		rec(g, 1, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + T + 10, 0x1003ull);
		publish(g, 1);
		wait_past(g, T + 10);
		poll_once(g);
		assert_int_equal(g->nev, 18);
		assert_int_equal(g->ev[17].v[0], 0x1001);
		/* It commits an event stamped after T, and leaves the hook. */
		rec(g, 2, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + T + 5, 0x2001ull);
		publish(g, 2);
		ring(g, 2)->busy = 0;
		poll_once(g);
		assert_int_equal(g->nev, 21);
		assert_int_equal(g->ev[18].v[0], 0x1002);
		assert_int_equal(g->ev[19].v[0], 0x2001);
		assert_int_equal(g->ev[19].tid, 22);
		assert_int_equal(g->ev[20].v[0], 0x1003);
	}
	finish(g);
	assert_false(g->end.corrupt);
	assert_int_equal(g->nwarn, 0);
}

/* ------------------------------------------------------- corrupt rings */

/*
 * The frame of every corrupt-ring case: threads on rings 1 and 2 each send
 * an event, then spoil() writes something into ring 2 (or the control
 * page) that the shim never would, and ring 1 goes on.  Ring 2's events
 * from the garbage on are lost, with one warning and `corrupt` at the
 * end; ring 1's all come out, before and after, and without waiting for
 * the end.  spoil() returns how many of ring 2's events it wrote still
 * count as delivered: with 0, ring 2 is given up, and must say so to its
 * thread (`abandoned`), which would otherwise wait for room there forever.
 */
struct corrupt_case {
	const char *name;
	unsigned (*spoil)(struct rig *g, const struct corrupt_case *k);
	bool not_corrupt;		/* a stray write the collector shrugs off */
	void (*check)(struct rig *g);	/* after the end, if not NULL */
	unsigned type, words;		/* for spoil_record() (type: a stack id
					 * for spoil_huge_stack_id()) */
};

static void run_corrupt_case(const struct corrupt_case *k)
{
	const char *only = getenv("CASE");
	struct rig *g;
	unsigned extra, from1 = 0, from2 = 0, sent2 = 0;
	size_t i, nev;

	/* CASE=substring: only the cases whose name has it (to see one fail). */
	if (only && !strstr(k->name, only))
		return;
	print_message("  case: %s\n", k->name);
	g = rig_new();
	assert_non_null(g);
	rig_connect(g);
	take_ring(g, 1, 11);
	take_ring(g, 2, 22);
	rec(g, 1, MSC_EV_THREAD, 0, 11, 1, g->t0 + 1);
	rec(g, 2, MSC_EV_THREAD, 0, 22, 1, g->t0 + 2);
	rec(g, 1, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 10, 0x1000ull, 16ull);
	publish(g, 1);
	/* Ring 2 has gone round once, its PAD read: a layout read wrong
	 * shows. */
	while (g->head[2] < RING_SIZE + RING_SIZE / 2) {
		uint64_t start = g->head[2];

		while (g->head[2] - start < RING_SIZE / 2) {
			sent2++;
			rec(g, 2, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 20 + sent2, 0x2000ull,
			    32ull);
		}
		publish(g, 2);
		wait_past(g, 20 + sent2);
		poll_once(g);
	}
	assert_int_equal(g->nev, 3 + sent2);

	extra = k->spoil(g, k);
	rec(g, 1, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 1000, 0x1001ull, 16ull);
	publish(g, 1);
	wait_past(g, 1000);
	poll_once(g);
	poll_once(g);
	rec(g, 1, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + 2000, 0x1001ull);
	publish(g, 1);
	wait_past(g, 2000);
	poll_once(g);
	nev = g->nev;
	finish(g);
	if (g->nev != nev)
		fail_msg("%s: %zu events held back to the end", k->name, g->nev - nev);

	for (i = 0; i < g->nev; i++) {
		if (g->ev[i].tid == 11)
			from1++;
		else if (g->ev[i].tid == 22)
			from2++;
		else
			fail_msg("%s: event %zu of tid %u", k->name, i, g->ev[i].tid);
	}
	if (from1 != 4 || from2 != 1 + sent2 + extra)
		fail_msg("%s: %u events of ring 1 (4 sent), %u of ring 2 (%u expected)", k->name,
			 from1, from2, 1 + sent2 + extra);
	assert_int_equal(g->ev[g->nev - 1].type, MSC_CEV_FREE);
	assert_int_equal(g->ev[g->nev - 1].v[0], 0x1001);
	if (k->not_corrupt) {
		if (g->nwarn || g->end.corrupt)
			fail_msg("%s: %u warnings, corrupt %d:\n%s", k->name, g->nwarn,
				 g->end.corrupt, g->warns);
	} else if (g->nwarn != 1 || !g->end.corrupt) {
		fail_msg("%s: %u warnings (1 expected), corrupt %d:\n%s", k->name, g->nwarn,
			 g->end.corrupt, g->warns);
	}
	if (ring(g, 2)->abandoned != (!k->not_corrupt && extra == 0))
		fail_msg("%s: ring 2 %s", k->name,
			 ring(g, 2)->abandoned ? "abandoned" : "not abandoned");
	if (k->check)
		k->check(g);
	rig_free(g);
}

/* Ring 2 goes on with an honest event after the garbage: never delivered. */
static void then_honest(struct rig *g)
{
	rec(g, 2, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + 1500, 0x2000ull);
	publish(g, 2);
}

/* The control page's layout, overwritten: the collector keeps its own. */
static unsigned spoil_ring_size_up(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	g->ctl->ring_size = 1u << 30;
	rec(g, 2, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + 1500, 0x2000ull);
	publish(g, 2);
	return 1;
}

static unsigned spoil_ring_size_down(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	g->ctl->ring_size = 64;
	rec(g, 2, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + 1500, 0x2000ull);
	publish(g, 2);
	return 1;
}

static unsigned spoil_nrings_up(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	g->ctl->nrings = 1u << 20;
	g->ctl->rings_used = 1u << 20;
	rec(g, 2, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + 1500, 0x2000ull);
	publish(g, 2);
	return 1;
}

static unsigned spoil_nrings_zero(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	g->ctl->nrings = 0;
	rec(g, 2, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + 1500, 0x2000ull);
	publish(g, 2);
	return 1;
}

/* rings_used only grows: lowered, it must not hide rings 1 and 2. */
static unsigned spoil_rings_used_zero(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	g->ctl->rings_used = 0;
	then_honest(g);
	return 1;
}

static void test_control_page_overwritten(void **state)
{
	static const struct corrupt_case cases[] = {
		{ "ring_size raised", spoil_ring_size_up, false, NULL, 0, 0 },
		{ "ring_size lowered", spoil_ring_size_down, false, NULL, 0, 0 },
		{ "nrings and rings_used raised", spoil_nrings_up, false, NULL, 0, 0 },
		{ "nrings zeroed", spoil_nrings_zero, false, NULL, 0, 0 },
		{ "rings_used zeroed", spoil_rings_used_zero, true, NULL, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_corrupt_case(&cases[i]);
}

/* Ring 2's head, a little more than a ring ahead of its tail: up to it, the
 * ring holds the records of the lap before. */
static unsigned spoil_head_beyond_a_ring(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	then_honest(g);
	ring(g, 2)->head = ring(g, 2)->tail + RING_SIZE + 64;
	return 0;
}

/*
 * Far ahead: read up to it, the ring would go round forever.  (Ring 2's
 * first lap began with a THREAD record of 16 bytes: one more 16 bytes put
 * the records of that lap where a record is expected.)
 */
static unsigned spoil_head_far_ahead(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	rec(g, 2, MSC_EV_MODULES, 0, 0, 1, g->t0);
	ring(g, 2)->head = g->head[2] + (1ull << 62);
	return 0;
}

static unsigned spoil_head_back(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	ring(g, 2)->head = g->head[2] - 64;
	return 0;
}

/* A PAD to the ring's end, published up to its header only. */
static unsigned spoil_pad_past_head(struct rig *g, const struct corrupt_case *k)
{
	uint64_t off = g->head[2] & (RING_SIZE - 1);

	(void)k;
	*(uint64_t *)(ring_data(g, 2) + off) =
		msc_ev_hdr(MSC_EV_PAD, 0, 0, (uint32_t)((RING_SIZE - off) / 8));
	ring(g, 2)->head = g->head[2] + 8;
	return 0;
}

/* The collector gives back only what was published: a tail past the head
 * is room the writer has not used, and it would wait for room forever. */
static void tail_not_past_head(struct rig *g)
{
	assert_true(ring(g, 2)->tail <= ring(g, 2)->head);
}

static void test_implausible_head(void **state)
{
	static const struct corrupt_case cases[] = {
		{ "head a ring past the tail", spoil_head_beyond_a_ring, false, NULL, 0, 0 },
		{ "head far ahead", spoil_head_far_ahead, false, NULL, 0, 0 },
		{ "head gone back", spoil_head_back, false, NULL, 0, 0 },
		{ "PAD past the head", spoil_pad_past_head, false, tail_not_past_head, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_corrupt_case(&cases[i]);
}

/* A record of k->type whose header says k->words, all of them written (a
 * header of length 0 with a word after it). */
static unsigned spoil_record(struct rig *g, const struct corrupt_case *k)
{
	uint64_t v[8] = { g->t0 + 1400, 0x2000, 64, 0x3000, 64, 0, 0, 0 };

	assert_true(k->words <= 9);
	/* A module is read only inside a module map. */
	if (k->type == MSC_EV_MODULE)
		rec(g, 2, MSC_EV_MODULES, 0, 0, 1, g->t0 + 1300);
	put(g, 2, msc_ev_hdr(k->type, 0, k->words, 1), k->words ? k->words - 1 : 1, v);
	then_honest(g);
	return 0;
}

/* Garbage, and the ring's thread seems inside a hook since the start: a
 * ring given up must not hold the others back. */
static unsigned spoil_garbage_busy(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	put(g, 2, msc_ev_hdr(0xee, 0, 2, 0), 1, (const uint64_t[]){ g->t0 + 1400 });
	publish(g, 2);
	ring(g, 2)->last_ts = g->t0;
	ring(g, 2)->busy = 1;
	return 0;
}

/* Headers of types and lengths the shim never writes. */
static void test_malformed_records(void **state)
{
	static const struct corrupt_case cases[] = {
		{ "type past the last", spoil_record, false, NULL, MSC_EV_MAX, 3 },
		{ "garbage, busy flag up", spoil_garbage_busy, false, NULL, 0, 0 },
		{ "type 0xff", spoil_record, false, NULL, 0xff, 3 },
		{ "length 0", spoil_record, false, NULL, MSC_EV_FREE, 0 },
		{ "THREAD of 1 word", spoil_record, false, NULL, MSC_EV_THREAD, 1 },
		{ "THREAD_EXIT of 1 word", spoil_record, false, NULL, MSC_EV_THREAD_EXIT, 1 },
		{ "ALLOC of 2 words", spoil_record, false, NULL, MSC_EV_ALLOC, 2 },
		{ "ALLOC of 3 words", spoil_record, false, NULL, MSC_EV_ALLOC, 3 },
		{ "FREE of 2 words", spoil_record, false, NULL, MSC_EV_FREE, 2 },
		{ "UNFREE of 2 words", spoil_record, false, NULL, MSC_EV_UNFREE, 2 },
		{ "MMAP of 2 words", spoil_record, false, NULL, MSC_EV_MMAP, 2 },
		{ "MMAP of 3 words", spoil_record, false, NULL, MSC_EV_MMAP, 3 },
		{ "MUNMAP of 2 words", spoil_record, false, NULL, MSC_EV_MUNMAP, 2 },
		{ "MUNMAP of 3 words", spoil_record, false, NULL, MSC_EV_MUNMAP, 3 },
		{ "MREMAP of 5 words", spoil_record, false, NULL, MSC_EV_MREMAP, 5 },
		{ "BRK of 2 words", spoil_record, false, NULL, MSC_EV_BRK, 2 },
		{ "BRK of 3 words", spoil_record, false, NULL, MSC_EV_BRK, 3 },
		{ "EXIT of 2 words", spoil_record, false, NULL, MSC_EV_EXIT, 2 },
		{ "SCAN of 2 words", spoil_record, false, NULL, MSC_EV_SCAN, 2 },
		{ "MODULE of 1 word", spoil_record, false, NULL, MSC_EV_MODULE, 1 },
		{ "MODULE of 3 words", spoil_record, false, NULL, MSC_EV_MODULE, 3 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_corrupt_case(&cases[i]);
}

/* A record longer than the ring has left, or than what was published. */
static unsigned spoil_past_ring_end(struct rig *g, const struct corrupt_case *k)
{
	uint64_t off = g->head[2] & (RING_SIZE - 1), fill = RING_SIZE - 16 - off;
	static uint64_t zeros[RING_SIZE / 8];

	(void)k;
	/* A record the collector skips, up to 16 bytes before the end. */
	put(g, 2, msc_ev_hdr(MSC_EV_MODULES_END, 0, (unsigned)(fill / 8), 0),
	    (unsigned)(fill / 8 - 1), zeros);
	/* Then 4 words in the ring's last 2. */
	*(uint64_t *)(ring_data(g, 2) + RING_SIZE - 16) = msc_ev_hdr(MSC_EV_ALLOC, 0, 4, 0);
	*(uint64_t *)(ring_data(g, 2) + RING_SIZE - 8) = g->t0 + 1400;
	g->head[2] += 32;
	publish(g, 2);
	return 0;
}

static unsigned spoil_past_head(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	rec(g, 2, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 1400, 0x2000ull, 64ull);
	ring(g, 2)->head = g->head[2] - 8;
	return 0;
}

/* A PAD that does not take the reader to the ring's end. */
static unsigned spoil_short_pad(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	put(g, 2, msc_ev_hdr(MSC_EV_PAD, 0, 0, 2), 1, (const uint64_t[]){ 0 });
	then_honest(g);
	return 0;
}

static void test_bad_lengths(void **state)
{
	static const struct corrupt_case cases[] = {
		{ "record past the ring's end", spoil_past_ring_end, false, NULL, 0, 0 },
		{ "record past the head", spoil_past_head, false, NULL, 0, 0 },
		{ "PAD short of the ring's end", spoil_short_pad, false, NULL, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_corrupt_case(&cases[i]);
}

/*
 * The target rewrites a record after the collector has read its header
 * (it waits for the watermark): what is delivered is what was checked,
 * and the ring goes on at the record's checked end.
 */
static void test_record_rewritten_while_held(void **state)
{
	struct rig *g = *state;
	uint64_t future, *hdr;

	rig_connect(g);
	take_ring(g, 1, 11);
	rec(g, 1, MSC_EV_THREAD, 0, 11, 1, g->t0);
	future = msc_now_monotonic() - g->t0 + 100000000;
	hdr = (uint64_t *)(ring_data(g, 1) + g->head[1]);
	rec(g, 1, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + future, 0x1000ull, 64ull);
	rec(g, 1, MSC_EV_FREE, MSC_FN_FREE, 0, 2, g->t0 + future + 1, 0x1000ull);
	publish(g, 1);
	wait_past(g, 0);
	poll_once(g);
	assert_int_equal(g->nev, 1);
	/* Six words now, as an MREMAP: past the FREE's start. */
	*hdr = msc_ev_hdr(MSC_EV_MREMAP, MSC_FN_MREMAP, 6, 0);
	wait_past(g, future + 1);
	poll_once(g);
	assert_int_equal(g->nev, 3);
	assert_int_equal(g->ev[1].type, MSC_CEV_ALLOC);
	assert_int_equal(g->ev[1].fn, MSC_FN_MALLOC);
	assert_int_equal(g->ev[1].v[0], 0x1000);
	assert_int_equal(g->ev[1].v[1], 64);
	assert_int_equal(g->ev[2].type, MSC_CEV_FREE);
	assert_int_equal(g->ev[2].v[0], 0x1000);
	finish(g);
	assert_int_equal(g->nwarn, 0);
	assert_false(g->end.corrupt);
}

/* A lossless writer that needs room in a ring, as the shim waits for it. */
struct writer {
	struct rig *g;
	unsigned ri;
	uint64_t need;
	bool dropped;
};

/*
 * wait_space() of the shim, for one thread: room, or an abandoned ring
 * (drop), or sleep on `wake` until the collector bumps it.  Without the
 * shim's 10 ms naps, which only look whether the collector is still alive:
 * a collector that is alive and forgets the thread hangs this test.
 */
static void *writer_wait(void *arg)
{
	struct writer *w = arg;
	struct msc_ring *r = ring(w->g, w->ri);
	uint64_t head = w->g->head[w->ri];

	for (;;) {
		uint32_t seq;

		if (head + w->need - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) <= RING_SIZE)
			break;
		if (__atomic_load_n(&r->abandoned, __ATOMIC_ACQUIRE)) {
			w->dropped = true;
			break;
		}
		seq = __atomic_load_n(&r->wake, __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->waiting, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (head + w->need - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) > RING_SIZE &&
		    !__atomic_load_n(&r->abandoned, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &r->wake, FUTEX_WAIT, seq, NULL, NULL, 0);
		__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Ring 2 is full, and the first record in it is garbage: its thread waits
 * for room that a reader who gives the ring up will never make.  Giving it
 * up must let the thread go (its records dropped), and ring 1 goes on.
 */
static void test_broken_ring_lets_its_writer_go(void **state)
{
	struct rig *g = *state;
	struct writer w = { g, 2, 0, false };
	pthread_t th;
	unsigned n = 0;

	rig_connect(g);
	take_ring(g, 1, 11);
	take_ring(g, 2, 22);
	rec(g, 1, MSC_EV_THREAD, 0, 11, 1, g->t0);
	rec(g, 2, MSC_EV_THREAD, 0, 22, 1, g->t0);
	publish(g, 1);
	publish(g, 2);
	wait_past(g, 0);
	poll_once(g);
	assert_int_equal(g->nev, 2);
	learn_clock(g, &g->ev[0], 0);
	put(g, 2, msc_ev_hdr(0xee, 0, 4, 0), 3, (const uint64_t[]){ g->t0 + 1, 0, 0 });
	while ((g->head[2] & (RING_SIZE - 1)) + 32 <= RING_SIZE)
		rec(g, 2, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 2 + n++, 0x2000ull, 8ull);
	publish(g, 2);
	/* More than the ring has free: a PAD and a record, say. */
	w.need = RING_SIZE - (g->head[2] - ring(g, 2)->tail) + 32;
	assert_int_equal(pthread_create(&th, NULL, writer_wait, &w), 0);
	/* Asleep, as far as can be seen from here. */
	while (!__atomic_load_n(&ring(g, 2)->waiting, __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(1000);
	rec(g, 1, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, g->t0 + 100, 0x1000ull, 8ull);
	publish(g, 1);
	wait_past(g, 100);
	poll_once(g);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(w.dropped);
	assert_int_equal(g->nev, 3);
	expect_alloc(g, 2, 100, 11, 0x1000, 8, MSC_FN_MALLOC);
	/* Given up for good: an exited thread's ring is not handed on. */
	ring(g, 2)->state = MSC_RING_CLOSED;
	poll_once(g);
	assert_int_equal(ring(g, 2)->state, MSC_RING_CLOSED);
	/* The target cleared the flag: it is set again. */
	ring(g, 2)->abandoned = 0;
	poll_once(g);
	assert_int_equal(ring(g, 2)->abandoned, 1);
	finish(g);
	assert_int_equal(g->nwarn, 1);
	assert_true(g->end.corrupt);
	assert_int_equal(g->nev, 3);
}

/* An event stamped an hour ahead would hold ring 2 back for an hour. */
static unsigned spoil_far_future(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	rec(g, 2, MSC_EV_ALLOC, MSC_FN_MALLOC, 0, 3, msc_now_monotonic() + 3600000000000ull,
	    0x2000ull, 64ull);
	then_honest(g);
	return 0;
}

/* Stack ids the shim would reach only after 2^31 stacks, and an event
 * that refers to one: no table indexed by them, and the stack kept. */
static unsigned spoil_huge_stack_id(struct rig *g, const struct corrupt_case *k)
{
	const uint64_t ip = FAKE_BASE + 0x4444;

	send_modules(g, 2);
	rec(g, 2, MSC_EV_STACK, 0, k->type, 1, ip);
	rec(g, 2, MSC_EV_ALLOC, MSC_FN_MALLOC, k->type, 3, g->t0 + 1400, 0x2100ull, 64ull);
	publish(g, 2);
	return 1;
}

static void huge_stack_id_kept(struct rig *g)
{
	const uint64_t ip = FAKE_BASE + 0x4444;
	uint32_t id = stack_of(g, FAKE_PATH, FAKE_BASE, &ip, 1);
	size_t i;

	assert_int_not_equal(id, 0);
	for (i = 0; i < g->nev; i++)
		if (g->ev[i].type == MSC_CEV_ALLOC && g->ev[i].v[0] == 0x2100)
			break;
	assert_true(i < g->nev);
	assert_int_equal(g->ev[i].stack, id);
}

/* Only the collector writes a tail: one written back makes its thread wait
 * for room it was given already, and nothing more is coming to read. */
static unsigned spoil_tail_back(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	ring(g, 2)->tail = 0;
	return 0;
}

static void tail_restored(struct rig *g)
{
	assert_int_equal(ring(g, 2)->tail, g->head[2]);
}

/* Ring 5, which no thread has taken, seems to be inside a hook since t0:
 * it must not hold the other rings back. */
static unsigned spoil_busy_unowned(struct rig *g, const struct corrupt_case *k)
{
	(void)k;
	g->ctl->rings_used = 6;
	ring(g, 5)->last_ts = g->t0;
	ring(g, 5)->busy = 1;
	then_honest(g);
	return 1;
}

static void test_other_stray_writes(void **state)
{
	static const struct corrupt_case cases[] = {
		{ "event stamped an hour ahead", spoil_far_future, false, NULL, 0, 0 },
		{ "stack id 2^31", spoil_huge_stack_id, true, huge_stack_id_kept, 0x80000000u, 0 },
		{ "stack id 2^32 - 1", spoil_huge_stack_id, true, huge_stack_id_kept, 0xffffffffu, 0 },
		{ "tail written back", spoil_tail_back, true, tail_restored, 0, 0 },
		{ "busy flag of a ring no thread has", spoil_busy_unowned, true, NULL, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_corrupt_case(&cases[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_events_field_by_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pad_records_over_laps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_by_timestamp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_page_overwritten, guard_setup,
						guard_teardown),
		cmocka_unit_test_setup_teardown(test_implausible_head, guard_setup, guard_teardown),
		cmocka_unit_test_setup_teardown(test_malformed_records, guard_setup, guard_teardown),
		cmocka_unit_test_setup_teardown(test_bad_lengths, guard_setup, guard_teardown),
		cmocka_unit_test_setup_teardown(test_record_rewritten_while_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_ring_lets_its_writer_go, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_stray_writes, guard_setup, guard_teardown),
	};

	/* Timestamps in CLOCK_MONOTONIC ns, which a test can write itself. */
	setenv("MEMSCOPE_NO_TSC", "1", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
