/* SPDX-License-Identifier: MIT */
/*
 * What the session's files share, and no other file includes:
 *
 *	session.c	the session's state, connecting to the collector and
 *			mapping the region, fork, init and exit, attach
 *			mode's entry points
 *	rings.c		the rings' slow path (wait_space), the collector's
 *			liveness and progress, a region's end (region_bury)
 *	aslimit.c	the address-space limit (RLIMIT_AS) kept clear of
 *			what the shim maps
 *
 * What the rest of the library uses of them is in shim.h.
 */
#ifndef SHIM_SESSION_H
#define SHIM_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shim.h"

#pragma GCC visibility push(hidden)

static inline void set_state(int st)
{
	__atomic_store_n(&g_state, st, __ATOMIC_RELEASE);
}

static inline void stop_recording(void)
{
	set_state(ST_OFF);
}

/* -------------------------------------------------------------- rings.c */

/* A session's end: what of its region threads may still write becomes
 * zero pages of ours. */
void region_bury(void);
bool collector_alive(void);
void wake_collector(void);

/*
 * How long the program waits for a collector that makes no progress (a
 * stopped ms-record, one under a debugger, one whose output is read
 * slowly): then what it would wait for is dropped and counted in `lost`.
 */
#define STALL_NS 1000000000ull

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void);
ssize_t read_small(const char *path, char *buf, size_t n);
uint64_t parse_u64(const char *p);
long long collector_cpu(void);

/* ------------------------------------------------------------ aslimit.c */

/* The hello's as_room and as_free, before a session connects. */
void as_hello(struct msc_hello *h);
/* Raises the limit by extra bytes, as far as we may. */
void as_make_room(uint64_t extra);

#pragma GCC visibility pop

#endif
