/* SPDX-License-Identifier: MIT */
/*
 * The collector's clock: the invariant TSC when there is one, else
 * CLOCK_MONOTONIC, and the TSC's rate measured against the latter.  Events
 * carry raw readings; to_ns() (collect_internal.h) makes nanoseconds of
 * them.
 */
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "collect_internal.h"
#include "msc_util.h"

/* An event's timestamp is taken before it is committed, so it is never
 * later than our clock when we read it; another CPU's clock may be a little
 * ahead, and this is far more than a little. */
#define FUTURE_SLACK_NS 10000000000ull

/* An invariant TSC is the cheapest clock that all CPUs agree on; the shim
 * reads it with RDTSCP, which orders it after the loads before it. */
static bool tsc_usable(void)
{
	char buf[8192];
	bool constant, nonstop, rdtscp;

	if (getenv("MEMSCOPE_NO_TSC") || msc_read_small("/proc/cpuinfo", buf, sizeof(buf)) <= 0)
		return false;
	constant = strstr(buf, " constant_tsc") != NULL;
	nonstop = strstr(buf, " nonstop_tsc") != NULL;
	rdtscp = strstr(buf, " rdtscp") != NULL;
	return constant && nonstop && rdtscp;
}

/*
 * The TSC's rate is measured against CLOCK_MONOTONIC over at least 5 ms
 * (error ~1e-5).  The collector is made before the program starts: the
 * first readings are taken then (collect_calibrate_begin), the last 5 ms
 * later, when its events are first read (collect_clock_ready).  Until then
 * the events wait in their rings, and the program runs rather than wait
 * 5 ms for ms-record (for a small program, much of what recording it
 * costs).  Events
 * that must be read sooner (a process's last ones, the time asked for) end
 * the measurement early, over what has run so far but at least 1 ms: every
 * event until then lies inside that span, so it is as exact for them
 * (within the readings' own ~0.1 us); the rate is measured again once the
 * 5 ms are up, for the events that come later (another process's), from
 * that moment on.  So a program that ends within 5 ms of ms-record's start
 * does not keep it spinning for the rest.
 */
#define CALIBRATE_NS 5000000
#define CALIBRATE_MIN_NS 1000000

/*
 * CLOCK_MONOTONIC and the TSC at one moment: the TSC halfway between two
 * reads around the clock's, from the try whose two reads came closest.  A
 * thread preempted between reading one and the other (a loaded machine)
 * would skew the rate by the preemption's length over the 5 ms, and every
 * duration with it; one of eight tries is all but never preempted, and
 * eight take under a microsecond.
 */
static void clock_pair(uint64_t *mono, uint64_t *tsc)
{
	uint64_t best = 0;
	unsigned i;

	for (i = 0; i < 8; i++) {
		uint64_t a = __rdtsc(), m = msc_now_monotonic(), b = __rdtsc();

		if (i == 0 || b - a < best) {
			best = b - a;
			*mono = m;
			*tsc = a + (b - a) / 2;
		}
	}
}

void collect_calibrate_begin(struct msc_collector *c)
{
	c->ts_kind = tsc_usable() ? MSC_TS_TSC : MSC_TS_MONOTONIC;
	c->ns_at = 0;
	if (c->ts_kind == MSC_TS_TSC) {
		clock_pair(&c->calibrate_m0, &c->raw0);
		c->raw_at = c->raw0;
		return;
	}
	c->calibrate_m0 = msc_now_monotonic();
	c->ns_per_raw = 1.0;
	c->ns_mult = 1ull << 32;
	c->raw0 = c->raw_at = c->calibrate_m0;
}

/* What is kept in raw units, from the rate. */
static void clock_spans(struct msc_collector *c)
{
	c->slack_raw = (uint64_t)(50000.0 / c->ns_per_raw);	/* 50 us */
	c->future_slack_raw = (uint64_t)((double)FUTURE_SLACK_NS / c->ns_per_raw);
	if (c->o.interval)
		c->sample_every_raw = (uint64_t)((double)c->o.interval / c->ns_per_raw);
}

/* The rate over the readings since collect_calibrate_begin, at least
 * `span` ns of them; from the moment it ends when the rate was measured
 * before. */
static void calibrate_end(struct msc_collector *c, uint64_t span)
{
	uint64_t m1, t1;

	do
		clock_pair(&m1, &t1);
	while (m1 - c->calibrate_m0 < span);
	if (c->calibrated) {
		c->ns_at = to_ns(c, t1);
		c->raw_at = t1;
	}
	c->ns_per_raw = (double)(m1 - c->calibrate_m0) / (double)(t1 - c->raw0);
	c->ns_mult = (uint64_t)(c->ns_per_raw * 4294967296.0 + 0.5);
	clock_spans(c);
}

/* How long, at CLOCK_MONOTONIC now, the TSC's measurement has still to
 * run: 0 once it can end (or for no TSC). */
uint64_t collect_calibrate_left(const struct msc_collector *c, uint64_t now)
{
	if (c->ts_kind != MSC_TS_TSC || now - c->calibrate_m0 >= CALIBRATE_NS)
		return 0;
	return CALIBRATE_NS - (now - c->calibrate_m0);
}

/*
 * Whether the clock is set up; wait: have it set up now, from what was
 * measured so far if it must.  A test once the rate is final; meanwhile
 * (`early`: it was measured over less than 5 ms) a reading of the clock,
 * and the rate is measured again when the 5 ms are up.
 */
bool collect_clock_ready(struct msc_collector *c, bool wait)
{
	uint64_t now;

	if (msc_likely(c->calibrated && !c->early))
		return true;
	now = msc_now_monotonic();
	if (c->calibrated) {
		if (!collect_calibrate_left(c, now)) {
			calibrate_end(c, CALIBRATE_NS);
			c->early = false;
		}
		return true;
	}
	if (!wait && collect_calibrate_left(c, now))
		return false;
	if (c->ts_kind == MSC_TS_TSC) {
		c->early = collect_calibrate_left(c, now) != 0;
		calibrate_end(c, c->early ? CALIBRATE_MIN_NS : CALIBRATE_NS);
	} else {
		clock_spans(c);
	}
	c->calibrated = true;
	if (c->o.interval)
		c->next_sample_raw = raw_now(c) + c->sample_every_raw;
	return true;
}

uint64_t msc_collector_now(struct msc_collector *c)
{
	collect_clock_ready(c, true);
	return to_ns(c, raw_now(c));
}
