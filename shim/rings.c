/* SPDX-License-Identifier: MIT */
/*
 * The rings' slow path and what it needs of the collector: waiting for
 * room in a ring (wait_space), whether the collector is alive or working,
 * waking it; and the end of a session's region (region_bury), which a
 * thread still inside a hook may write to however much later.  The hot
 * path comes here only when a ring is full (ring_begin, shim.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

/*
 * A session's end (a detach, or the next attach after its collector died):
 * our mapping of its region is replaced, in place, by private zero pages
 * that are never unmapped.  A thread preempted inside a hook holds the
 * region's addresses (its ring, the shared ring's lock, the control page)
 * and may write to them when it runs again, however many sessions later:
 * 200 busy threads on 2 CPUs wait that long.  Unmapped, the address
 * faulted (SIGSEGV in the program), or held whatever was mapped there
 * next: a later session's ring (corrupt records) or the program's own
 * memory.  Buried, such a write lands in memory of ours that nothing
 * reads, and a wait for room there gives up (its session is over).  What
 * stays is address space (g_conf.buried_bytes), no memory: the collector's
 * pages go with its own mapping.
 */
#define BURY_SPARE_RINGS 16u

void region_bury(void)
{
	int prot = PROT_READ | PROT_WRITE;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE;
	uint64_t used, keep;
	unsigned wait;
	void *p;

	tstate_pool_close();
	if (!g_conf.region || g_conf.buried)
		return;
	/*
	 * Threads write only to the rings they took, which are the lowest
	 * free ones (thread_init), and a thread still looking for one stops
	 * at the first free: the rings up to the highest taken, and spares
	 * for lookers, are kept; the rest (untouched, address space only:
	 * 2 MiB a ring with few threads) goes.
	 */
	used = __atomic_load_n(&g_conf.ctl->rings_used, __ATOMIC_ACQUIRE) + BURY_SPARE_RINGS;
	if (used > g_conf.nrings)
		used = g_conf.nrings;
	/* No ring scan may go past what stays mapped (thread_init): bound
	 * them, then wait for those under way, 100 ms at most (a thread
	 * held elsewhere: the rings then stay mapped, as safe). */
	__atomic_store_n(&g_written.ring_scan_limit, (unsigned)used, __ATOMIC_SEQ_CST);
	for (wait = 0; __atomic_load_n(&g_written.ring_scanners, __ATOMIC_SEQ_CST) && wait < 1000;
	     wait++) {
		struct timespec ts = { 0, 100000 };

		nanosleep(&ts, NULL);
	}
	if (__atomic_load_n(&g_written.ring_scanners, __ATOMIC_SEQ_CST)) {
		used = g_conf.nrings;
	} else {
		/* Scans that were under way took rings past the bound, and
		 * said them before they ended. */
		uint64_t now = __atomic_load_n(&g_conf.ctl->rings_used, __ATOMIC_ACQUIRE);

		if (now > used)
			used = now < g_conf.nrings ? now : g_conf.nrings;
	}
	keep = MSC_PROTO_CTL_SIZE + used * (MSC_PROTO_RING_HDR + (uint64_t)g_conf.ring_size);
	keep = (keep + 4095) & ~4095ull;
	if (keep > g_conf.region_size)
		keep = g_conf.region_size;
	p = g_real.mmap ? g_real.mmap(g_conf.region, keep, prot, flags, -1, 0) :
			mmap(g_conf.region, keep, prot, flags, -1, 0);
	/* Else the region stays mapped as it is, for good: as safe. */
	if (p == g_conf.region) {
		if (keep < g_conf.region_size)
			unmap((char *)g_conf.region + keep, g_conf.region_size - keep);
		/* What is left of it: the rest of the range is the address
		 * space's again (another library may be mapped there), and a
		 * fork's child unmaps only this (fork_child). */
		g_conf.region_size = keep;
		g_conf.buried_bytes += keep;
	}
	g_conf.buried = true;
}

/* Is the collector still there?  (Slow path only.)  Its pid is the one
 * the kernel named for the socket (session_start), not the page's. */
bool collector_alive(void)
{
	if (g_conf.ctl->stop || g_conf.ctl->dead)
		return false;
	if (g_conf.collector_pid > 0 && kill(g_conf.collector_pid, 0) < 0 && errno == ESRCH)
		return false;
	return true;
}

/* A round of the collector now, not after its nap (ms-record takes SIGURG
 * as a wake-up: msc_proto.h). */
void wake_collector(void)
{
	if (g_conf.collector_pid > 0)
		kill(g_conf.collector_pid, SIGURG);
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A small /proc file whole into buf (NUL-terminated): its length, or -1. */
ssize_t read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -1;
	len = read(fd, buf, n - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = '\0';
	return len;
}

/* The decimal number at p (0 if none). */
uint64_t parse_u64(const char *p)
{
	uint64_t v = 0;

	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/*
 * The collector's CPU time in clock ticks (utime + stime, fields 14 and 15
 * of /proc/PID/stat, proc(5)), or -1 when it cannot be read: a collector
 * that scans a heap works, one that is stopped or blocked does not.
 */
long long collector_cpu(void)
{
	char path[32], buf[512], *p, *q;
	long long ticks = 0;
	unsigned field;

	if (g_conf.collector_pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)g_conf.collector_pid);
	if (read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return -1;
	/* After ") ", field 3 (the state) begins. */
	for (field = 2, q = p + 1; *q && field < 15; q++) {
		if (*q != ' ')
			continue;
		field++;
		if (field == 14 || field == 15)
			ticks += (long long)parse_u64(q + 1);
	}
	return field == 15 ? ticks : -1;
}

/* Drops a record the ring has no room for: counted, said at the end. */
static bool drop(int saved)
{
	__atomic_add_fetch(&g_conf.ctl->lost, 1, __ATOMIC_RELAXED);
	errno = saved;
	return false;
}

/*
 * Waits until `need` bytes past t->head are free.  False: give up.  A short
 * spin first (the collector may be about to move the tail), then sleeps on
 * the ring's futex word until the collector frees space (msc_proto.h), and
 * looks now and then whether the collector is still alive.  Lossless
 * means waiting while the collector makes progress: a tail that has not
 * moved for STALL_NS drops the record, and so do the ring's next ones
 * until the tail moves again (stalled_at).
 */
bool wait_space(struct tstate *t, uint64_t need)
{
	struct msc_ring *r = t->ring;
	unsigned gen = t->gen;
	unsigned spins = 0, naps = 0;
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE), since = 0;
	int saved = errno;

	if (r->stalled_at) {
		if (r->stalled_at == tail + 1)
			return drop(saved);
		r->stalled_at = 0;
	}
	while (!have_space(t, need)) {
		uint32_t seq;

		/* An abandoned ring gets no room again (msc_proto.h). */
		/* Also a ring of an earlier session (attach mode): one
		 * detached and another begun while this thread waited. */
		if (g_conf.lossy || g_state != ST_ACTIVE || r->abandoned ||
		    __atomic_load_n(&g_conf.gen, __ATOMIC_ACQUIRE) != gen) {
			if (g_conf.lossy)
				return drop(saved);
			errno = saved;
			return false;
		}
		if (spins++ == 0) {
			__atomic_add_fetch(&g_conf.ctl->waits, 1, __ATOMIC_RELAXED);
			/* The collector may nap for up to 100 ms when sampling:
			 * a full ring must not wait that long. */
			wake_collector();
		}
		if (spins < 64) {
			__builtin_ia32_pause();
			continue;
		}
		seq = __atomic_load_n(&r->wake, __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->waiting, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!have_space(t, need)) {
			/* At most 10 ms: the collector may be gone. */
			struct timespec ts = { 0, 10000000 };

			syscall(SYS_futex, &r->wake, FUTEX_WAIT, seq, &ts, NULL, 0);
			if ((++naps & 3) == 0 &&
			    __atomic_load_n(&g_conf.gen, __ATOMIC_ACQUIRE) == gen &&
			    !collector_alive()) {
				g_conf.ctl->dead = 1;
				stop_recording();
				/* Attached: nothing will detach us now. */
				if (g_conf.attached)
					shim_unhook_orphaned();
				errno = saved;
				return false;
			}
			if ((naps & 3) == 0) {
				uint64_t now = mono_ns(), at = t->tail_cache;

				if (at != tail || !since) {
					tail = at;
					since = now;
				} else if (now - since >= STALL_NS) {
					__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
					r->stalled_at = tail + 1;
					return drop(saved);
				}
			}
		}
		__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	}
	errno = saved;
	return true;
}
