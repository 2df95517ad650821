/* SPDX-License-Identifier: MIT */
/*
 * The program's limit on its address space (RLIMIT_AS), kept clear of
 * what the shim maps in it: raised when a session starts and when the
 * program sets it, read back as the program set it.  The exported
 * setrlimit, getrlimit and prlimit (and their 64-bit names) come here.
 */
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session.h"

/*
 * A limit on the address space (RLIMIT_AS) is the program's, for what it
 * maps, not for what we map in it: the region, and the threads' unwinder
 * caches and stack tables (about 384 KiB a thread for as many threads as
 * there are rings).
 *
 * One it has when a session starts (ulimit -v, a limit set before an
 * attach) is raised by that much before the region is mapped, as far as
 * we may: the hard limit too when we are privileged, else the soft one up
 * to the hard one.  The collector sizes the region to what that leaves
 * (the hello's as_room and as_free, as_hello), and says it when it had to
 * take some of the program's own room.  One the program sets meanwhile
 * below what it maps already (a fixed 256 MiB under us) is raised the
 * same way.  Either is read back lowered by as much, so that the program
 * reads what it set.  A limit set above what is mapped now (reckoned from
 * /proc/self/statm, which counts the region too) is left as it is.
 * Through the system call itself: glibc's setrlimit, getrlimit and
 * prlimit are each that one call.
 */
static uint64_t g_raised_cur, g_raised_max;

static uint64_t our_space(void)
{
	uint64_t size = (g_conf.region && !g_conf.buried ? g_conf.region_size : 0) +
			g_conf.buried_bytes;

	return size ? size + (64ull << 20) + (uint64_t)g_conf.nrings * TSTATE_SLOT : 0;
}

/* The address space mapped now, from /proc/self/statm (proc(5)). */
static uint64_t mapped_now(void)
{
	char buf[64];

	if (read_small("/proc/self/statm", buf, sizeof(buf)) <= 0)
		return 0;
	return parse_u64(buf) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static rlim_t raise_by(rlim_t v, uint64_t extra)
{
	return v == RLIM_INFINITY || v + extra < v ? RLIM_INFINITY : v + extra;
}

static int prlimit_(pid_t pid, int resource, const struct rlimit *want, struct rlimit *old)
{
	return (int)syscall(SYS_prlimit64, pid, resource, want, old);
}

/* Whether we may raise our hard limit (CAP_SYS_RESOURCE): tried, and put
 * back at once (lowering it is always allowed). */
static bool may_raise_max(const struct rlimit *now)
{
	struct rlimit up = { now->rlim_cur, now->rlim_max + 4096 };

	if (now->rlim_max == RLIM_INFINITY || prlimit_(0, RLIMIT_AS, &up, NULL) < 0)
		return false;
	prlimit_(0, RLIMIT_AS, now, NULL);
	return true;
}

/* The hello's as_room and as_free (msc_proto.h). */
void as_hello(struct msc_hello *h)
{
	struct rlimit now;
	uint64_t mapped;

	h->as_room = h->as_free = 0;
	if (prlimit_(0, RLIMIT_AS, NULL, &now) < 0 || now.rlim_cur == RLIM_INFINITY ||
	    now.rlim_max == RLIM_INFINITY || may_raise_max(&now))
		return;
	mapped = mapped_now();
	h->as_room = now.rlim_max > mapped ? now.rlim_max - mapped : 1;
	h->as_free = now.rlim_cur > mapped ? now.rlim_cur - mapped : 0;
}

/* The limit raised by extra bytes (see above), as far as we may: before
 * the region is mapped by its size and 64 MiB, once its layout is known
 * by the threads' state. */
void as_make_room(uint64_t extra)
{
	struct rlimit now, want;

	if (prlimit_(0, RLIMIT_AS, NULL, &now) < 0 || now.rlim_cur == RLIM_INFINITY)
		return;
	want.rlim_cur = raise_by(now.rlim_cur, extra);
	want.rlim_max = raise_by(now.rlim_max, extra);
	if (prlimit_(0, RLIMIT_AS, &want, NULL) < 0) {
		want.rlim_max = now.rlim_max;
		if (want.rlim_cur > now.rlim_max)
			want.rlim_cur = now.rlim_max;
		if (prlimit_(0, RLIMIT_AS, &want, NULL) < 0)
			return;
	}
	g_raised_cur += want.rlim_cur == RLIM_INFINITY ? 0 : want.rlim_cur - now.rlim_cur;
	g_raised_max += want.rlim_max == RLIM_INFINITY ? 0 : want.rlim_max - now.rlim_max;
}

static rlim_t lowered(rlim_t v, uint64_t by)
{
	return v != RLIM_INFINITY && v >= by ? v - by : v;
}

static int limit_call(pid_t pid, int resource, const struct rlimit *want, struct rlimit *old)
{
	struct rlimit raised;
	uint64_t extra = 0;
	int rc;
	bool mine = resource == RLIMIT_AS && (pid == 0 || pid == getpid());

	if (mine && want && want->rlim_cur != RLIM_INFINITY && want->rlim_cur < mapped_now())
		extra = our_space();
	if (extra) {
		raised.rlim_cur = raise_by(want->rlim_cur, extra);
		raised.rlim_max = raise_by(want->rlim_max, extra);
		want = &raised;
	}
	rc = prlimit_(pid, resource, want, old);
	if (rc == 0 && mine && old) {
		old->rlim_cur = lowered(old->rlim_cur, g_raised_cur);
		old->rlim_max = lowered(old->rlim_max, g_raised_max);
	}
	if (rc == 0 && mine && want)
		g_raised_cur = g_raised_max = extra;
	return rc;
}

SHIM_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	return limit_call(0, (int)resource, rl, NULL);
}

SHIM_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	return limit_call(0, (int)resource, (const struct rlimit *)rl, NULL);
}

SHIM_EXPORT int getrlimit(__rlimit_resource_t resource, struct rlimit *rl)
{
	return limit_call(0, (int)resource, NULL, rl);
}

SHIM_EXPORT int getrlimit64(__rlimit_resource_t resource, struct rlimit64 *rl)
{
	return limit_call(0, (int)resource, NULL, (struct rlimit *)rl);
}

SHIM_EXPORT int prlimit(pid_t pid, enum __rlimit_resource resource, const struct rlimit *want,
			struct rlimit *old)
{
	return limit_call(pid, (int)resource, want, old);
}

SHIM_EXPORT int prlimit64(pid_t pid, enum __rlimit_resource resource, const struct rlimit64 *want,
			  struct rlimit64 *old)
{
	return limit_call(pid, (int)resource, (const struct rlimit *)want, (struct rlimit *)old);
}
