/* SPDX-License-Identifier: MIT */
/*
 * Per-thread recording state: a thread's ring, its stack table and its
 * unwinder state, set up at its first event and given back at its exit.
 *
 * A thread takes a free ring of the region for itself and maps its struct
 * tstate (never malloc); one that finds none, or no memory, records on the
 * shared ring 0 under its lock, and so does a thread after it exited.  Each
 * announces its stack (a THREAD record) for the leak scan, and its exit
 * (THREAD_EXIT) through the pthread key's destructor, thread_exit.
 *
 * Owns t_state, t_hot (the recursion guard, --sample's fast path),
 * t_stack_hi, g_written (the shared ring's state, set up by session.c at
 * each session start) and the pthread key (g_conf.thread_key).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sample.h"
#include "shim.h"

__thread struct tstate *t_state TLS_IE;
/* Closed (shim.h): a thread's first free goes to the full hook. */
__thread struct thot t_hot TLS_IE = { .table = g_closed_table };
__thread uint64_t t_hidden[HIDDEN_MAX] TLS_IE;
__thread uint64_t t_stack_hi TLS_IE;
/* The session in which t_state became TSTATE_DEAD: attached, a later one
 * tries for a ring again (after a session that ran out of rings, a thread
 * stayed on the shared ring for good, its events out of order there). */
__thread unsigned t_dead_gen TLS_IE;
struct shim_written g_written;

/* A line's "lo-hi" (hex) at its start: false when it has none. */
static bool maps_range(const char *line, uint64_t *lo, uint64_t *hi)
{
	uint64_t v[2] = { 0, 0 };
	int k = 0;

	for (; *line; line++) {
		int d = *line >= '0' && *line <= '9' ? *line - '0' :
			*line >= 'a' && *line <= 'f' ? *line - 'a' + 10 : -1;

		if (d >= 0) {
			v[k] = v[k] << 4 | (uint64_t)d;
		} else if (*line == '-' && k == 0) {
			k = 1;
		} else {
			break;
		}
	}
	*lo = v[0];
	*hi = v[1];
	return k == 1;
}

/*
 * The mapping holding sp, from /proc/self/maps, without malloc: its end,
 * and its start in *start (0 when none).  With 1 KiB of stack and no
 * sscanf: it runs at a thread's first event, where the thread may have
 * little stack to spare (it took 4 KiB and sscanf's more).  A line longer
 * than the buffer (a long path) is judged by its start.
 */
static uint64_t maps_stack(uint64_t sp, uint64_t *start)
{
	char buf[1024];
	size_t have = 0;
	uint64_t top = 0, lo, hi;
	bool skip = false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			if (!skip && maps_range(line, &lo, &hi) && sp >= lo && sp < hi) {
				top = hi;
				*start = lo;
				goto out;
			}
			skip = false;
			line = nl + 1;
		}
		have = strlen(line);
		if (have == sizeof(buf) - 1) {
			/* no newline in a full buffer: judge the start, drop the rest */
			if (!skip && maps_range(line, &lo, &hi) && sp >= lo && sp < hi) {
				top = hi;
				*start = lo;
				goto out;
			}
			skip = true;
			have = 0;
			continue;
		}
		memmove(buf, line, have);
	}
out:
	close(fd);
	return top;
}

/*
 * pthread_getattr_np holds its thread's lock while it allocates (the CPU
 * set it reallocs, glibc 2.36), and the lock is not recursive.  A thread
 * whose first allocation is that one (every Ruby thread's) came to
 * thread_init() inside it, and stack_top() asked pthread_getattr_np again:
 * the thread waited for itself, for ever.  The program's calls come here
 * (launch mode: the preload; attached: its GOT slots, attach.c), and while
 * one runs stack_top() reads the mapping instead.
 */
static __thread unsigned t_in_getattr TLS_IE;

SHIM_EXPORT int pthread_getattr_np(pthread_t th, pthread_attr_t *attr)
{
	int r;

	ensure_init();
	if (!g_real.pthread_getattr_np)
		return ENOSYS;
	t_in_getattr++;
	r = g_real.pthread_getattr_np(th, attr);
	t_in_getattr--;
	return r;
}

static uint64_t stack_top(uint64_t *lo)
{
	uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0), start = 0, top;
	pthread_attr_t attr;
	void *addr;
	size_t size;

	*lo = 0;
	if (raw_gettid() == getpid())
		return maps_stack(sp, &start);
	if (t_in_getattr || !g_real.pthread_getattr_np) {
		/* A thread stack glibc made is one mapping (its guard page
		 * another): what pthread_getattr_np would say. */
		top = maps_stack(sp, &start);
		*lo = start;
		return top;
	}
	if (g_real.pthread_getattr_np(pthread_self(), &attr) != 0)
		return 0;
	if (pthread_attr_getstack(&attr, &addr, &size) != 0)
		size = 0, addr = NULL;
	pthread_attr_destroy(&attr);
	*lo = (uint64_t)(uintptr_t)addr;
	return (uint64_t)(uintptr_t)addr + size;
}

void tstate_clear(struct tstate *t)
{
	struct intern_slot *tab = t->tab;
	uint32_t mask = t->tab_mask;
	bool tab_inline = t->tab_inline;

	memset(t, 0, offsetof(struct tstate, uw));
	unwind_reset(&t->uw);
	if (tab) {
		memset(tab, 0, (mask + 1) * sizeof(*tab));
		t->tab = tab;
		t->tab_mask = mask;
		t->tab_inline = tab_inline;
	}
}

/*
 * A thread's state and its first intern table in one mapping, TSTATE_SLOT
 * bytes.  At an attach every thread of the process makes its state at its
 * next allocation, and each mapping takes the process's mmap lock for
 * writing: 200 threads queued on it, for tens of ms, and the attaching
 * ms-record's writes to the process behind them.  An attach's session
 * maps them all at once (the pool), one per ring; a thread takes the next
 * (or maps its own once they are taken), and unmaps its own at its exit.
 */
static char *g_pool;
static unsigned g_pool_n, g_pool_next;

void tstate_pool_open(unsigned n)
{
	void *p;

	tstate_pool_close();
	p = g_real.mmap(NULL, (size_t)n * TSTATE_SLOT, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	g_pool_n = n;
	__atomic_store_n(&g_pool_next, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&g_pool, (char *)p, __ATOMIC_RELEASE);
}

/* The states no thread took go; those taken are their threads'. */
void tstate_pool_close(void)
{
	unsigned taken;

	if (!g_pool)
		return;
	taken = __atomic_exchange_n(&g_pool_next, g_pool_n, __ATOMIC_ACQ_REL);
	if (taken < g_pool_n)
		unmap(g_pool + (size_t)taken * TSTATE_SLOT, (size_t)(g_pool_n - taken) * TSTATE_SLOT);
	__atomic_store_n(&g_pool, NULL, __ATOMIC_RELEASE);
}

static struct tstate *pool_take(void)
{
	char *pool = __atomic_load_n(&g_pool, __ATOMIC_ACQUIRE);
	unsigned k;

	if (!pool)
		return NULL;
	k = __atomic_fetch_add(&g_pool_next, 1, __ATOMIC_ACQ_REL);
	return k < g_pool_n ? (struct tstate *)(pool + (size_t)k * TSTATE_SLOT) : NULL;
}

static struct tstate *tstate_map(void)
{
	struct tstate *t = pool_take();

	if (!t)
		t = map_anon(TSTATE_SLOT);
	if (t) {
		t->tab = (struct intern_slot *)((char *)t + TSTATE_MAP);
		t->tab_mask = TAB_FIRST - 1;
		t->tab_inline = true;
	}
	return t;
}

static void tstate_unmap(struct tstate *t)
{
	if (t->tab && !t->tab_inline)
		unmap(t->tab, (t->tab_mask + 1) * sizeof(*t->tab));
	unmap(t, TSTATE_SLOT);
}

bool tstate_setup(struct tstate *t, unsigned ring_index)
{
	struct msc_ring *r = ring_at(ring_index);

	t->ring = r;
	t->data = msc_ring_data(r);
	t->size = g_conf.ring_size;
	t->mask = t->size - 1;
	t->head = r->head;
	t->tail_cache = r->tail;
	t->shared = ring_index == 0;
	t->ring_index = ring_index;
	sample_thread_init(t);
	unwind_thread_init(&t->uw);
	return t->tab || intern_grow(t);
}

/*
 * A THREAD record on t's ring (msc_proto.h): `own`, the recording state
 * the thread uses, if it is its own (our memory: the leak scan must not
 * take it for a root); the stack [lo, hi) (dead memory once the thread
 * exits, though glibc keeps it mapped for reuse); the thread pointer (its
 * TCB holds the DTV, through which the scan finds where the thread's TLS,
 * still live after the exit, begins).
 */
void emit_thread(struct tstate *t, unsigned flags, uint32_t tid, const struct tstate *own,
		 uint64_t hi, uint64_t lo)
{
	const uint64_t v[5] = {
		(uint64_t)(uintptr_t)own, hi, own ? sizeof(*own) : 0, lo, (uint64_t)pthread_self(),
	};

	emit(t, MSC_EV_THREAD, flags, tid, v, 5);
}

/*
 * A thread that records on the shared ring still says where its stack is,
 * and when it exits: the leak scan must know its stack, and that it is dead
 * memory afterwards (glibc keeps exited threads' stacks mapped, stale
 * pointers and all).  MSC_THREAD_SHARED: its events on the ring keep tid 0.
 */
static void shared_announce(void)
{
	struct tstate *t = shared_state();
	uint64_t lo = 0;

	t_stack_hi = stack_top(&lo);
	if (!t)
		return;
	shared_lock(t);
	emit_thread(t, MSC_THREAD_SHARED, (uint32_t)raw_gettid(), NULL, t_stack_hi, lo);
	shared_unlock(t);
	if (g_conf.thread_key_ok)
		pthread_setspecific(g_conf.thread_key, TSTATE_SHARED_MARK);
}

/*
 * One more thread records: from the second on, timestamps are taken with
 * RDTSCP (see now()).  Before this thread's first event, so that whatever
 * it hands over is stamped in order; seq_cst, so that a thread that gets a
 * block it freed (through the allocator's locks) sees it too.
 */
static void threads_count(void)
{
	__atomic_add_fetch(&g_conf.threads_seen, 1, __ATOMIC_SEQ_CST);
}

struct tstate *thread_init(void)
{
	unsigned gen;
	struct tstate *t = t_state, *old = NULL;
	struct msc_ring *r = NULL;
	unsigned i, n, lim;
	int saved = errno;

	t_hot.gen = 0;
	/*
	 * Only in a session recording now, and with its generation read
	 * first: a thread that passed a hook's check in an earlier session
	 * and ran again while the next began (attach mode, 200 threads on 2
	 * CPUs) took the new generation with a ring of the old region,
	 * unmapped a detach later under it (SIGSEGV).  A session's
	 * generation moves before its state leaves ST_INIT, and its region
	 * is set before it records: read in this order, a generation that is
	 * current goes with its own region, and one that moved meanwhile
	 * is seen stale at the next event.
	 */
	gen = __atomic_load_n(&g_conf.gen, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != ST_ACTIVE)
		return NULL;
	n = g_conf.nrings;
	/* Ours from an earlier session: its ring went with that region, its
	 * mapping is used again (below) or let go. */
	if (t && t != TSTATE_DEAD) {
		old = t;
		t_state = NULL;
		/* Nor its exit: a thread that then records nowhere (no ring,
		 * and no shared one) called thread_exit on it unmapped. */
		if (g_conf.thread_key_ok)
			pthread_setspecific(g_conf.thread_key, NULL);
	}

	threads_count();

	/*
	 * A ring first: without one, the thread maps nothing.  A detach
	 * buries the region while threads may be here: it unmaps the rings
	 * past those in use and a few spare, so it first bounds this scan
	 * (g_written.ring_scan_limit) and waits for the scans under way to end
	 * (g_written.ring_scanners; the two are read in the other order there).
	 * A thread says the ring it took (rings_used) before its scan ends:
	 * taken and not yet said, a ring past what the bury counted was
	 * unmapped under it.
	 */
	__atomic_add_fetch(&g_written.ring_scanners, 1, __ATOMIC_SEQ_CST);
	lim = __atomic_load_n(&g_written.ring_scan_limit, __ATOMIC_SEQ_CST);
	if (lim && lim < n)
		n = lim;
	for (i = 1; i < n; i++) {
		uint32_t expect = MSC_RING_FREE;

		r = ring_at(i);
		if (r->state == MSC_RING_FREE &&
		    __atomic_compare_exchange_n(&r->state, &expect, MSC_RING_OWNED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
	}
	/* Said before the scan ends: a bury waits for the scans, then keeps
	 * the rings up to rings_used mapped. */
	if (i < n) {
		uint32_t used = g_conf.ctl->rings_used;

		while (used < i + 1 &&
		       !__atomic_compare_exchange_n(&g_conf.ctl->rings_used, &used, i + 1, false,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	__atomic_sub_fetch(&g_written.ring_scanners, 1, __ATOMIC_SEQ_CST);
	if (i >= n)
		goto shared;
	/* A session began meanwhile: this ring is the old region's. */
	if (__atomic_load_n(&g_conf.gen, __ATOMIC_ACQUIRE) != gen) {
		__atomic_store_n(&r->state, MSC_RING_FREE, __ATOMIC_RELEASE);
		if (old)
			tstate_unmap(old);
		errno = saved;
		return NULL;
	}
	if (old)
		tstate_clear(old);
	t = old ? old : tstate_map();
	old = NULL;
	if (!t || !tstate_setup(t, i)) {
		if (t)
			tstate_unmap(t);
		__atomic_store_n(&r->state, MSC_RING_FREE, __ATOMIC_RELEASE);
		goto shared;
	}
	t->tid = raw_gettid();
	t->gen = gen;
	t->ring->tid = (uint32_t)t->tid;
	t->uw.stack_hi = t_stack_hi = stack_top(&t->stack_lo);
	t_state = t;
	if (g_conf.thread_key_ok)
		pthread_setspecific(g_conf.thread_key, t);
	emit_thread(t, 0, (uint32_t)t->tid, t, t->uw.stack_hi, t->stack_lo);
	errno = saved;
	return t;
shared:
	if (old)
		tstate_unmap(old);
	/* Once a session is enough: looking again at every event would cost
	 * a scan of the rings (and a mapping) per allocation. */
	t_state = TSTATE_DEAD;
	t_dead_gen = gen;
	shared_announce();
	errno = saved;
	return shared_state();
}

void thread_exit(void *arg)
{
	struct tstate *t = arg;

	if (arg == TSTATE_SHARED_MARK) {
		t = shared_state();
		if (t) {
			guard_in();
			shared_lock(t);
			emit(t, MSC_EV_THREAD_EXIT, 0, (uint32_t)raw_gettid(), NULL, 0);
			shared_unlock(t);
			guard_out();
		}
		return;
	}
	if (!t || t == TSTATE_DEAD || t->shared)
		return;
	guard_in();
	/* Of an earlier session (attach mode): its ring is gone or unread. */
	if (t->gen == g_conf.gen)
		emit(t, MSC_EV_THREAD_EXIT, 0, (uint32_t)t->tid, NULL, 0);
	/* Its counts before the ring is closed; the fast path closes (the
	 * ring may be another thread's next). */
	sample_leave(t);
	t_state = TSTATE_DEAD;
	t_dead_gen = g_conf.gen;
	/* Everything committed stays readable; the collector frees the ring
	 * once it has drained it. */
	if (t->gen == g_conf.gen)
		__atomic_store_n(&t->ring->state, MSC_RING_CLOSED, __ATOMIC_RELEASE);
	tstate_unmap(t);
	guard_out();
}
