/* SPDX-License-Identifier: MIT */
/*
 * libmemscope.so: the event source, preloaded into the profiled program.
 *
 * Each hook forwards to the real function and, unless the thread is already
 * inside the shim (the initial-exec TLS guard), appends a fixed-layout binary
 * record to the calling thread's ring in shared memory (msc_proto.h).  The
 * stack is captured (unwind.c) and interned per thread: a stack crosses to
 * the collector once, as a STACK record, and events carry its id.  No JSON,
 * no symbolization, no stdio and no global lock on this path.
 *
 * Safety rules (see DESIGN.md): the guard makes every allocation the shim,
 * the unwinder, the loader or a signal handler makes on a thread inside a
 * hook pass straight through; a static bootstrap pool answers allocations
 * made while dlsym runs; a free is recorded before the real free; helper
 * work happens only on the calling thread (there is no helper thread);
 * pthread_atfork keeps children consistent; libunwind is loaded with
 * RTLD_LOCAL; a dead collector stops recording, never the program.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "shim.h"

/* ---------------------------------------------------------------- state */

volatile int g_state;
struct msc_ctl *g_ctl;
void *g_region;
static size_t g_region_size;
pid_t g_pid;
unsigned g_unwind, g_depth;
static bool g_lossy, g_follow, g_scan;
bool g_tsc;
static char g_sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
bool g_attached;
unsigned g_gen;
static void *g_old_region;
static size_t g_old_region_size;
char g_exe[512];

/* ---------------------------------------------------------------- rings */

static void stop_recording(void)
{
	__atomic_store_n(&g_state, ST_OFF, __ATOMIC_RELEASE);
}

/* Is the collector still there?  (Slow path only.) */
static bool collector_alive(void)
{
	if (g_ctl->stop || g_ctl->dead)
		return false;
	if (g_ctl->collector_pid && kill((pid_t)g_ctl->collector_pid, 0) < 0 && errno == ESRCH)
		return false;
	return true;
}

/*
 * Waits until `need` bytes past t->head are free.  False: give up.  A short
 * spin first (the collector may be about to move the tail), then sleeps on
 * the ring's futex word until the collector frees space (msc_proto.h), and
 * looks now and then whether the collector is still alive.
 */
bool wait_space(struct tstate *t, uint64_t need)
{
	struct msc_ring *r = t->ring;
	unsigned spins = 0, naps = 0;
	int saved = errno;

	while (!have_space(t, need)) {
		uint32_t seq;

		if (g_lossy || g_state != ST_ACTIVE) {
			if (g_lossy)
				__atomic_add_fetch(&g_ctl->lost, 1, __ATOMIC_RELAXED);
			errno = saved;
			return false;
		}
		if (spins++ == 0)
			__atomic_add_fetch(&g_ctl->waits, 1, __ATOMIC_RELAXED);
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
			if ((++naps & 3) == 0 && !collector_alive()) {
				g_ctl->dead = 1;
				stop_recording();
				errno = saved;
				return false;
			}
		}
		__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	}
	errno = saved;
	return true;
}

/* --------------------------------------------------------------- stacks */

bool intern_grow(struct tstate *t)
{
	uint32_t ncap = t->tab ? (t->tab_mask + 1) * 2 : 1024, i;
	struct intern_slot *nt = map_anon(ncap * sizeof(*nt));

	if (!nt)
		return false;
	for (i = 0; t->tab && i <= t->tab_mask; i++) {
		struct intern_slot *s = &t->tab[i];
		uint32_t j;

		if (!s->id)
			continue;
		j = (uint32_t)s->h1 & (ncap - 1);
		while (nt[j].id)
			j = (j + 1) & (ncap - 1);
		nt[j] = *s;
	}
	if (t->tab)
		unmap(t->tab, (t->tab_mask + 1) * sizeof(*t->tab));
	t->tab = nt;
	t->tab_mask = ncap - 1;
	return true;
}

/* Captures the stack above `frame` and returns its id (0: none). */
static uint32_t stack_id(struct tstate *t, void *frame)
{
	struct intern_slot *s;
	struct capture c;
	uint64_t *rec;
	uint32_t id, j;

	if (unlikely(t->shared) && t->uw.stack_hi != t_stack_hi) {
		/* Another thread's stack: its bound, and nothing to reuse. */
		t->uw.stack_hi = t_stack_hi;
		unwind_forget(&t->uw);
	}
	unwind_capture(&t->uw, g_unwind, frame, t->ips, (int)g_depth, &c);
	if (c.id)
		return c.id;
	if (c.n <= 0)
		return 0;
	j = (uint32_t)c.h1 & t->tab_mask;
	for (;;) {
		s = &t->tab[j];
		if (!s->id)
			break;
		if (s->h1 == c.h1 && s->h2 == c.h2) {
			unwind_file(&t->uw, s->id);
			return s->id;
		}
		j = (j + 1) & t->tab_mask;
	}
	/* A new stack: send the module map first if it changed, then it. */
	if (!c.have_ips)
		unwind_fill_ips(&t->uw, t->ips);
	modules_check(t);
	id = __atomic_add_fetch(&g_ctl->next_stack, 1, __ATOMIC_RELAXED);
	rec = ring_begin(t, 1 + (unsigned)c.n);
	if (!rec)
		return 0;
	rec[0] = msc_ev_hdr(MSC_EV_STACK, 0, 1 + (unsigned)c.n, id);
	memcpy(rec + 1, t->ips, (size_t)c.n * 8);
	ring_commit(t, 1 + (unsigned)c.n);
	if ((t->tab_count + 1) * 2 > t->tab_mask + 1) {
		if (!intern_grow(t))
			return id;	/* not cached: sent again next time */
		j = (uint32_t)c.h1 & t->tab_mask;
		while (t->tab[j].id)
			j = (j + 1) & t->tab_mask;
		s = &t->tab[j];
	}
	s->h1 = c.h1;
	s->h2 = c.h2;
	s->id = id;
	t->tab_count++;
	unwind_file(&t->uw, id);
	return id;
}

/* ------------------------------------------------------------ recording */

static void record_alloc(void *frame, const void *p, uint64_t size, unsigned fn)
{
	struct tstate *t = get_tstate();
	const uint64_t v[2] = { (uint64_t)(uintptr_t)p, size };

	if (!t)
		return;
	shared_lock(t);
	emit(t, MSC_EV_ALLOC, fn, stack_id(t, frame), v, 2);
	shared_unlock(t);
}

/*
 * Called before the real allocator runs, with the guard held: starts the
 * capture's trace cache lookup, whose cache line then arrives while the
 * allocator works.  Only for a thread with a ring of its own (the shared
 * ring's state is not ours until its lock is held).
 */
static inline void prepare_alloc(void *frame)
{
	struct tstate *t = t_state;

	if (likely(t && t != TSTATE_DEAD) && !t->shared && g_unwind == MSC_UNWIND_DWARF)
		unwind_prepare(&t->uw, frame, (int)g_depth);
}

/* FREE, UNFREE, EXIT (one value), MUNMAP (two): events without a stack. */
static void record_simple(unsigned type, unsigned fn, uint64_t a, uint64_t b, unsigned words)
{
	struct tstate *t = get_tstate();
	const uint64_t v[2] = { a, b };

	if (!t)
		return;
	shared_lock(t);
	emit(t, type, fn, 0, v, words - 2);
	shared_unlock(t);
}

/* MMAP, MREMAP, BRK: events with a stack and up to four values. */
static void record_region(void *frame, unsigned type, const uint64_t *v, unsigned nv)
{
	struct tstate *t = get_tstate();

	if (!t)
		return;
	shared_lock(t);
	emit(t, type, 0, stack_id(t, frame), v, nv);
	shared_unlock(t);
}

#define ACTIVE() (likely(!t_flags) && likely(g_state == ST_ACTIVE))

/* Not recording this call; consumes a pending IN_NEW. */
static inline void passing_through(void)
{
	if (unlikely(t_flags & IN_NEW))
		t_flags &= ~IN_NEW;
}

/* ----------------------------------------------------------------- init */

static bool recv_welcome(int s, struct msc_welcome *w, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { w, sizeof(*w) };
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	ssize_t n;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	do {
		n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*w))
		return false;
	*fd = -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return w->magic == MSC_PROTO_MAGIC && *fd >= 0;
}

/* Connects to the collector and maps this process's region. */
static bool session_start(bool forked)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct msc_hello hello = { 0 };
	struct msc_welcome welcome;
	int s, fd = -1, hi;
	void *region;
	ssize_t n;

	if (!g_sock_path[0])
		return false;
	memcpy(sa.sun_path, g_sock_path, sizeof(sa.sun_path));
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return false;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	/* Far from the descriptors programs pick and reuse (dup2(x, 3)). */
	hi = fcntl(s, F_DUPFD_CLOEXEC, 900);
	if (hi >= 0) {
		close(s);
		s = hi;
	}
	hello.magic = MSC_PROTO_MAGIC;
	hello.version = MSC_PROTO_VERSION;
	hello.pid = getpid();
	hello.ppid = getppid();
	hello.flags = forked ? MSC_HELLO_FORKED : 0;
	/* Read once per image, at init (a fork child runs the same one). */
	n = (ssize_t)strnlen(g_exe, sizeof(hello.exe) - 1);
	memcpy(hello.exe, g_exe, (size_t)n);
	if (send(s, &hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello))
		goto fail;
	if (!recv_welcome(s, &welcome, &fd) || welcome.status != 0)
		goto fail;
	region = mmap(NULL, welcome.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	fd = -1;
	if (region == MAP_FAILED)
		goto fail;
	g_region = region;
	g_region_size = welcome.region_size;
	g_ctl = region;
	if (g_ctl->magic != MSC_PROTO_MAGIC || g_ctl->version != MSC_PROTO_VERSION ||
	    (g_ctl->ring_size & (g_ctl->ring_size - 1)) || g_ctl->nrings < 1) {
		munmap(region, welcome.region_size);
		goto fail;
	}
	g_depth = g_ctl->depth ? g_ctl->depth : 64;
	if (g_depth > TRACE_MAX)
		g_depth = TRACE_MAX;
	g_unwind = g_ctl->unwind;
	g_lossy = g_ctl->flags & MSC_CTL_LOSSY;
	g_follow = g_ctl->flags & MSC_CTL_FOLLOW;
	g_scan = g_ctl->flags & MSC_CTL_SCAN;
	g_tsc = g_ctl->ts_kind == MSC_TS_TSC;
	/*
	 * Nothing more goes over the socket (the scan's reply is a futex word
	 * in the region): the program is left with no descriptor of ours to
	 * close, dup2 over or find in /proc/self/fd.
	 */
	close(s);
	/* Not the unwinder's trace cache (most of it): its entries from an
	 * earlier session are dead by their generation, and pages untouched
	 * here stay out of the program's rss (unwind_reset). */
	memset(&g_shared, 0, offsetof(struct tstate, uw));
	unwind_reset(&g_shared.uw);
	g_shared_ready = tstate_setup(&g_shared, 0);
	g_shared.tid = 0;
	if (g_shared_ready) {
		/* Announced like a thread's (tid 0: no thread), so that the
		 * leak scan does not take what it holds (register values
		 * among them) for roots: it lives in our .bss, which the
		 * kernel maps without a name. */
		shared_lock(&g_shared);
		emit_thread(&g_shared, 0, 0, &g_shared, 0, 0);
		shared_unlock(&g_shared);
	}
	return true;
fail:
	if (fd >= 0)
		close(fd);
	close(s);
	return false;
}

/* Removes our entry from LD_PRELOAD in place (no malloc): children that
 * exec do not load the shim unless --follow asked for it. */
static void strip_preload(void)
{
	extern char **environ;
	char **e;

	for (e = environ; e && *e; e++) {
		char *v, *tok, *out;

		if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
			continue;
		v = *e + 11;
		out = v;
		tok = v;
		while (*tok) {
			char *end = tok;
			size_t len;
			const char *base;

			while (*end && *end != ':' && *end != ' ')
				end++;
			len = (size_t)(end - tok);
			base = tok;
			for (const char *q = tok; q < end; q++)
				if (*q == '/')
					base = q + 1;
			if (len && !((size_t)(end - base) == 14 && memcmp(base, "libmemscope.so", 14) == 0)) {
				if (out != v)
					*out++ = ':';
				memmove(out, tok, len);
				out += len;
			}
			tok = *end ? end + 1 : end;
		}
		*out = '\0';
		if (!*v)
			unsetenv("LD_PRELOAD");
		return;
	}
}

static void fork_prepare(void)
{
	t_guard++;
}

static void fork_parent(void)
{
	t_guard--;
}

static void fork_child(void)
{
	/* Only this thread survives; the parent's region is not ours. */
	t_state = NULL;
	g_shared_ready = false;
	if (g_region) {
		unmap(g_region, g_region_size);
		g_region = NULL;
		g_ctl = NULL;
	}
	g_pid = getpid();
	if (g_state == ST_ACTIVE && g_follow && session_start(true)) {
		g_state = ST_ACTIVE;
	} else {
		/*
		 * A child that is not followed: what it executes does not
		 * load us (only our LD_PRELOAD entry goes).  The recorded
		 * process itself keeps it, so that an exec in its place is
		 * still recorded.
		 */
		if (g_state == ST_ACTIVE)
			strip_preload();
		g_state = ST_OFF;
	}
	t_guard--;
}

/* What a session needs to know before it connects: the real functions,
 * who we are, where the collector listens (sock may be NULL: none). */
static void session_prepare(const char *sock)
{
	ssize_t n;

	resolve_reals();
	if (__atomic_load_n(&cxx_resolved, __ATOMIC_ACQUIRE))
		resolve_cxx();
	g_pid = getpid();
	if (sock && strlen(sock) < sizeof(g_sock_path))
		memcpy(g_sock_path, sock, strlen(sock) + 1);
	n = readlink("/proc/self/exe", g_exe, sizeof(g_exe) - 1);
	g_exe[n > 0 ? n : 0] = '\0';
}

/* Connected: recording starts. */
static void session_activate(void)
{
	unwind_global_init();
	if (!g_key_ok)
		g_key_ok = pthread_key_create(&g_key, thread_exit) == 0;
	__atomic_store_n(&g_state, ST_ACTIVE, __ATOMIC_RELEASE);
}

/* The fork handlers, once however many sessions there are. */
static void register_atfork(void)
{
	static bool done;

	if (!done)
		done = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
}

/*
 * Attach mode: a session begun in a running process (attach.c installs the
 * hooks after it).  Runs on a thread the attacher stopped at a safe point,
 * on a borrowed stack: nothing here may record this thread's stack.
 */
int shim_session_attach(const char *sock)
{
	if (g_state == ST_ACTIVE)
		return -EALREADY;
	if (g_state != ST_OFF && g_state != ST_UNINIT)
		return -EBUSY;
	if (!sock || strlen(sock) >= sizeof(g_sock_path))
		return -EINVAL;
	t_guard++;
	g_state = ST_INIT;
	g_attached = true;
	session_prepare(sock);
	/* An earlier session's region: no thread is in a hook of it now. */
	if (g_old_region) {
		unmap(g_old_region, g_old_region_size);
		g_old_region = NULL;
	}
	__atomic_add_fetch(&g_gen, 1, __ATOMIC_RELEASE);
	if (!session_start(false)) {
		g_state = ST_OFF;
		t_guard--;
		return -ECONNREFUSED;
	}
	register_atfork();
	session_activate();
	t_guard--;
	return 0;
}

/* Detach: no more events; the region stays mapped until the next session
 * (a thread may still be inside a hook, writing its last record). */
void shim_session_detach(void)
{
	stop_recording();
	g_shared_ready = false;
	g_old_region = g_region;
	g_old_region_size = g_region_size;
}

void shim_init(void)
{
	int expect = ST_UNINIT;

	if (!__atomic_compare_exchange_n(&g_state, &expect, ST_INIT, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	t_guard++;
	session_prepare(getenv("MEMSCOPE_SOCK"));
	if (!session_start(false)) {
		/* Not recorded (not followed, or no collector): our children
		 * must not load us either. */
		if (g_sock_path[0])
			strip_preload();
		g_state = ST_OFF;
		t_guard--;
		return;
	}
	session_activate();
	t_guard--;
}

__attribute__((constructor)) static void shim_ctor(void)
{
	ensure_init();
	if (g_state != ST_ACTIVE)
		return;
	t_guard++;
	unwind_load_libunwind();
	register_atfork();
	t_guard--;
}

/*
 * Asks the collector to look for pointers to the blocks still live (leak
 * classification) while this process waits here, at the very end: after
 * the program's destructors (shim_dtor), or in _exit, which skips them.
 */
void request_scan(void)
{
	static int done;
	struct tstate *t;
	bool sent = false;
	int saved = errno;

	if (g_state != ST_ACTIVE || !g_scan || getpid() != g_pid ||
	    __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	t_guard++;
	t = get_tstate();
	if (t && collector_alive()) {
		const uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
		unsigned naps = 0;

		shared_lock(t);
		sent = emit(t, MSC_EV_SCAN, 0, (uint32_t)raw_gettid(), &sp, 1);
		shared_unlock(t);
		/* Until the collector says it is done, or is gone. */
		while (sent && !__atomic_load_n(&g_ctl->scan_done, __ATOMIC_ACQUIRE)) {
			struct timespec ts = { 0, 10000000 };

			syscall(SYS_futex, &g_ctl->scan_done, FUTEX_WAIT, 0, &ts, NULL, 0);
			if ((++naps & 15) == 0 && !collector_alive())
				break;
		}
	}
	errno = saved;
	t_guard--;
}

__attribute__((destructor)) static void shim_dtor(void)
{
	if (g_state == ST_ACTIVE && getpid() == g_pid)
		unwind_report();
	request_scan();
}

/* ------------------------------------------------------------ boot pool */

/*
 * Allocations made while dlsym runs (old glibc, sanitizers) come from here:
 * resolve.c sets `resolving` meanwhile.  The hooks are its only users, and
 * inline it.
 */
static char boot_pool[128 * 1024] __attribute__((aligned(64)));
static size_t boot_used;

static bool is_boot(const void *p)
{
	return (const char *)p >= boot_pool && (const char *)p < boot_pool + sizeof(boot_pool);
}

static void *boot_alloc(size_t size, size_t align)
{
	size_t off, *hdr;

	if (align < 16)
		align = 16;
	off = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);
	for (;;) {
		size_t start = (off + 16 + align - 1) & ~(align - 1);

		if (start + size > sizeof(boot_pool) || start + size < start)
			return NULL;
		if (__atomic_compare_exchange_n(&boot_used, &off, start + size, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			hdr = (size_t *)(boot_pool + start) - 1;
			*hdr = size;
			return boot_pool + start;
		}
	}
}

static size_t boot_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* ---------------------------------------------------------------- hooks */

/* Exported hooks that no C header declares. */
SHIM_EXPORT void *memalign(size_t align, size_t size);
SHIM_EXPORT void *pvalloc(size_t size);
SHIM_EXPORT void *_Znwm(size_t size);
SHIM_EXPORT void *_Znam(size_t size);
SHIM_EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt);
SHIM_EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *nt);
SHIM_EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t al);
SHIM_EXPORT void *_ZnamSt11align_val_t(size_t size, size_t al);
SHIM_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t al, const void *nt);
SHIM_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t al, const void *nt);
SHIM_EXPORT void _ZdlPv(void *p);
SHIM_EXPORT void _ZdaPv(void *p);
SHIM_EXPORT void _ZdlPvm(void *p, size_t n);
SHIM_EXPORT void _ZdaPvm(void *p, size_t n);
SHIM_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
SHIM_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);
SHIM_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al);
SHIM_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al);
SHIM_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al);
SHIM_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al);
SHIM_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt);
SHIM_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt);

SHIM_EXPORT void *malloc(size_t size)
{
	void *p;

	if (unlikely(!real_malloc)) {
		if (resolving)
			return boot_alloc(size, 16);
		ensure_init();
		if (!real_malloc)
			return boot_alloc(size, 16);
	}
	if (!ACTIVE()) {
		passing_through();
		return real_malloc(size);
	}
	t_guard++;
	prepare_alloc(__builtin_frame_address(0));
	p = real_malloc(size);
	if (p)
		record_alloc(__builtin_frame_address(0), p, size, MSC_FN_MALLOC);
	t_guard--;
	return p;
}

SHIM_EXPORT void free(void *ptr)
{
	if (unlikely(!ptr || is_boot(ptr)))
		return;
	if (unlikely(!real_free)) {
		ensure_init();
		if (!real_free)
			return;
	}
	if (!ACTIVE()) {
		real_free(ptr);
		return;
	}
	t_guard++;
	/* Before the real free: afterwards another thread may get ptr back. */
	record_simple(MSC_EV_FREE, MSC_FN_FREE, (uint64_t)(uintptr_t)ptr, 0, 3);
	real_free(ptr);
	t_guard--;
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
	void *p;

	if (unlikely(!real_calloc)) {
		if (resolving) {
			if (size && n > SIZE_MAX / size)
				return NULL;
			p = boot_alloc(n * size, 16);	/* the pool is zeroed memory */
			return p;
		}
		ensure_init();
		if (!real_calloc)
			return NULL;
	}
	if (!ACTIVE()) {
		passing_through();
		return real_calloc(n, size);
	}
	t_guard++;
	prepare_alloc(__builtin_frame_address(0));
	p = real_calloc(n, size);
	if (p)
		record_alloc(__builtin_frame_address(0), p, (uint64_t)n * size, MSC_FN_CALLOC);
	t_guard--;
	return p;
}

static void *do_realloc(void *frame, void *ptr, size_t size, unsigned fn)
{
	void *p;

	if (unlikely(is_boot(ptr))) {
		p = malloc(size);
		if (p)
			memcpy(p, ptr, boot_size(ptr) < size ? boot_size(ptr) : size);
		return p;
	}
	if (!ACTIVE())
		return real_realloc(ptr, size);
	t_guard++;
	if (ptr)
		record_simple(MSC_EV_FREE, fn, (uint64_t)(uintptr_t)ptr, 0, 3);
	prepare_alloc(frame);
	p = real_realloc(ptr, size);
	if (p)
		record_alloc(frame, p, size, fn);
	else if (ptr && size)
		record_simple(MSC_EV_UNFREE, fn, (uint64_t)(uintptr_t)ptr, 0, 3);
	t_guard--;
	return p;
}

SHIM_EXPORT void *realloc(void *ptr, size_t size)
{
	if (unlikely(!real_realloc)) {
		if (resolving) {
			void *p = boot_alloc(size, 16);

			if (p && ptr)
				memcpy(p, ptr, boot_size(ptr) < size ? boot_size(ptr) : size);
			return p;
		}
		ensure_init();
		if (!real_realloc)
			return NULL;
	}
	return do_realloc(__builtin_frame_address(0), ptr, size, MSC_FN_REALLOC);
}

SHIM_EXPORT void *reallocarray(void *ptr, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(!real_realloc)) {
		ensure_init();
		if (!real_realloc)
			return NULL;
	}
	return do_realloc(__builtin_frame_address(0), ptr, n * size, MSC_FN_REALLOCARRAY);
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int ret;

	ensure_init();
	if (unlikely(!real_posix_memalign)) {
		void *p = boot_alloc(size, align);

		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (!ACTIVE()) {
		passing_through();
		return real_posix_memalign(out, align, size);
	}
	t_guard++;
	ret = real_posix_memalign(out, align, size);
	if (ret == 0)
		record_alloc(__builtin_frame_address(0), *out, size, MSC_FN_POSIX_MEMALIGN);
	t_guard--;
	return ret;
}

#define ALIGNED_HOOK(name, fn, params, args, realcall, sizeexpr)                              \
	SHIM_EXPORT void *name params                                                         \
	{                                                                                     \
		void *p;                                                                      \
		ensure_init();                                                                \
		if (unlikely(!real_##name))                                                   \
			return NULL;                                                          \
		if (!ACTIVE()) {                                                              \
			passing_through();                                                    \
			return realcall;                                                      \
		}                                                                             \
		t_guard++;                                                                    \
		p = realcall;                                                                 \
		if (p)                                                                        \
			record_alloc(__builtin_frame_address(0), p, sizeexpr, fn);           \
		t_guard--;                                                                    \
		return p;                                                                     \
	}

ALIGNED_HOOK(aligned_alloc, MSC_FN_ALIGNED_ALLOC, (size_t align, size_t size), (align, size),
	     real_aligned_alloc(align, size), size)
ALIGNED_HOOK(memalign, MSC_FN_MEMALIGN, (size_t align, size_t size), (align, size),
	     real_memalign(align, size), size)
ALIGNED_HOOK(valloc, MSC_FN_VALLOC, (size_t size), (size), real_valloc(size), size)
ALIGNED_HOOK(pvalloc, MSC_FN_PVALLOC, (size_t size), (size), real_pvalloc(size), size)

/* ------------------------------------------------------ C++ operators */

static inline void cxx_ready(void)
{
	ensure_init();
	if (unlikely(!__atomic_load_n(&cxx_resolved, __ATOMIC_ACQUIRE)))
		resolve_cxx();
}

/* No libstdc++ operator to call (cannot happen in a C++ program). */
static void *new_fallback(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		abort();	/* cannot throw std::bad_alloc from here */
	return p;
}

#define NEW_HOOK(sym, realfn, fn, params, callargs)                                     \
	SHIM_EXPORT void *sym params                                                    \
	{                                                                               \
		void *p;                                                                \
		cxx_ready();                                                            \
		if (unlikely(!realfn))                                                  \
			return new_fallback(size);                                      \
		if (!ACTIVE())                                                          \
			return realfn callargs;                                         \
		t_guard++;                                                              \
		prepare_alloc(__builtin_frame_address(0));                              \
		t_guard--;                                                              \
		t_flags |= IN_NEW;                                                      \
		p = realfn callargs;                                                    \
		t_flags &= ~IN_NEW;                                                     \
		if (p && ACTIVE()) {                                                    \
			t_guard++;                                                      \
			record_alloc(__builtin_frame_address(0), p, size, fn);          \
			t_guard--;                                                      \
		}                                                                       \
		return p;                                                               \
	}

NEW_HOOK(_Znwm, real_new, MSC_FN_NEW, (size_t size), (size))
NEW_HOOK(_Znam, real_new_arr, MSC_FN_NEW_ARRAY, (size_t size), (size))
NEW_HOOK(_ZnwmRKSt9nothrow_t, real_new_nt, MSC_FN_NEW, (size_t size, const void *nt), (size, nt))
NEW_HOOK(_ZnamRKSt9nothrow_t, real_new_arr_nt, MSC_FN_NEW_ARRAY, (size_t size, const void *nt),
	 (size, nt))
NEW_HOOK(_ZnwmSt11align_val_t, real_new_al, MSC_FN_NEW, (size_t size, size_t al), (size, al))
NEW_HOOK(_ZnamSt11align_val_t, real_new_arr_al, MSC_FN_NEW_ARRAY, (size_t size, size_t al),
	 (size, al))
NEW_HOOK(_ZnwmSt11align_val_tRKSt9nothrow_t, real_new_al_nt, MSC_FN_NEW,
	 (size_t size, size_t al, const void *nt), (size, al, nt))
NEW_HOOK(_ZnamSt11align_val_tRKSt9nothrow_t, real_new_arr_al_nt, MSC_FN_NEW_ARRAY,
	 (size_t size, size_t al, const void *nt), (size, al, nt))

/* Deletes never throw: the guard may be held across the real one. */
static void do_delete(void *ptr, unsigned fn, void (*realfn)(void *))
{
	if (!ptr)
		return;
	cxx_ready();
	if (unlikely(!realfn))
		realfn = real_delete ? real_delete : free;
	if (!ACTIVE()) {
		realfn(ptr);
		return;
	}
	t_guard++;
	record_simple(MSC_EV_FREE, fn, (uint64_t)(uintptr_t)ptr, 0, 3);
	realfn(ptr);
	t_guard--;
}

static void do_delete_al(void *ptr, size_t al, unsigned fn, void (*realfn)(void *, size_t))
{
	if (!ptr)
		return;
	cxx_ready();
	if (unlikely(!realfn)) {
		do_delete(ptr, fn, NULL);
		return;
	}
	if (!ACTIVE()) {
		realfn(ptr, al);
		return;
	}
	t_guard++;
	record_simple(MSC_EV_FREE, fn, (uint64_t)(uintptr_t)ptr, 0, 3);
	realfn(ptr, al);
	t_guard--;
}

SHIM_EXPORT void _ZdlPv(void *p) { do_delete(p, MSC_FN_DELETE, real_delete); }
SHIM_EXPORT void _ZdaPv(void *p) { do_delete(p, MSC_FN_DELETE_ARRAY, real_delete_arr); }
SHIM_EXPORT void _ZdlPvm(void *p, size_t n) { (void)n; do_delete(p, MSC_FN_DELETE, real_delete); }
SHIM_EXPORT void _ZdaPvm(void *p, size_t n) { (void)n; do_delete(p, MSC_FN_DELETE_ARRAY, real_delete_arr); }
SHIM_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; do_delete(p, MSC_FN_DELETE, real_delete); }
SHIM_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) { (void)nt; do_delete(p, MSC_FN_DELETE_ARRAY, real_delete_arr); }
SHIM_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al) { do_delete_al(p, al, MSC_FN_DELETE, real_delete_al); }
SHIM_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al) { do_delete_al(p, al, MSC_FN_DELETE_ARRAY, real_delete_arr_al); }
SHIM_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; do_delete_al(p, al, MSC_FN_DELETE, real_delete_al); }
SHIM_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al) { (void)n; do_delete_al(p, al, MSC_FN_DELETE_ARRAY, real_delete_arr_al); }
SHIM_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; do_delete_al(p, al, MSC_FN_DELETE, real_delete_al); }
SHIM_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *nt) { (void)nt; do_delete_al(p, al, MSC_FN_DELETE_ARRAY, real_delete_arr_al); }

/* ---------------------------------------------------- mappings and brk */

SHIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	ensure_init();
	if (unlikely(!real_mmap))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (!ACTIVE() || !(flags & MAP_ANONYMOUS) || (flags & MAP_SHARED))
		return real_mmap(addr, len, prot, flags, fd, off);
	t_guard++;
	p = real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)p, len };

		record_region(__builtin_frame_address(0), MSC_EV_MMAP, v, 2);
	}
	t_guard--;
	return p;
}

SHIM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

SHIM_EXPORT int munmap(void *addr, size_t len)
{
	int ret;

	ensure_init();
	if (unlikely(!real_munmap))
		return (int)syscall(SYS_munmap, addr, len);
	if (!ACTIVE())
		return real_munmap(addr, len);
	t_guard++;
	/* Like free: before the range can be handed out again. */
	record_simple(MSC_EV_MUNMAP, MSC_FN_NONE, (uint64_t)(uintptr_t)addr, len, 4);
	ret = real_munmap(addr, len);
	t_guard--;
	return ret;
}

SHIM_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *p, *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	ensure_init();
	if (unlikely(!real_mremap))
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	if (!ACTIVE())
		return real_mremap(old, old_len, new_len, flags, new_addr);
	t_guard++;
	p = real_mremap(old, old_len, new_len, flags, new_addr);
	if (p != MAP_FAILED) {
		uint64_t v[4] = { (uint64_t)(uintptr_t)old, old_len, (uint64_t)(uintptr_t)p, new_len };

		record_region(__builtin_frame_address(0), MSC_EV_MREMAP, v, 4);
	}
	t_guard--;
	return p;
}

SHIM_EXPORT int brk(void *end)
{
	void *old;
	int ret;

	ensure_init();
	if (!real_brk || !real_sbrk)
		return (int)syscall(SYS_brk, end) == (long)end ? 0 : -1;
	if (!ACTIVE())
		return real_brk(end);
	t_guard++;
	old = real_sbrk(0);
	ret = real_brk(end);
	if (ret == 0) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)old, (uint64_t)(uintptr_t)end };

		record_region(__builtin_frame_address(0), MSC_EV_BRK, v, 2);
	}
	t_guard--;
	return ret;
}

SHIM_EXPORT void *sbrk(intptr_t inc)
{
	void *old;

	ensure_init();
	if (!real_sbrk)
		return (void *)-1;
	if (!ACTIVE() || inc == 0)
		return real_sbrk(inc);
	t_guard++;
	old = real_sbrk(inc);
	if (old != (void *)-1) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)old, (uint64_t)(uintptr_t)old + (uint64_t)inc };

		record_region(__builtin_frame_address(0), MSC_EV_BRK, v, 2);
	}
	t_guard--;
	return old;
}

/* ------------------------------------------- memscope.h annotations */

SHIM_EXPORT void memscope_alloc(const void *ptr, size_t size);
SHIM_EXPORT void memscope_free(const void *ptr);

SHIM_EXPORT void memscope_alloc(const void *ptr, size_t size)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	t_guard++;
	record_alloc(__builtin_frame_address(0), ptr, size, MSC_FN_CUSTOM);
	t_guard--;
}

SHIM_EXPORT void memscope_free(const void *ptr)
{
	ensure_init();
	if (!ptr || !ACTIVE())
		return;
	t_guard++;
	record_simple(MSC_EV_FREE, MSC_FN_CUSTOM, (uint64_t)(uintptr_t)ptr, 0, 3);
	t_guard--;
}

/* ---------------------------------------------------------- exit paths */

static void record_exit(int status)
{
	if (!ACTIVE() || getpid() != g_pid)
		return;
	t_guard++;
	record_simple(MSC_EV_EXIT, 0, (uint64_t)(unsigned)status, 0, 3);
	t_guard--;
}

SHIM_EXPORT void exit(int status)
{
	ensure_init();
	record_exit(status);
	if (real_exit)
		real_exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SHIM_EXPORT void _exit(int status)
{
	ensure_init();
	record_exit(status);
	request_scan();
	if (real__exit)
		real__exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SHIM_EXPORT void _Exit(int status)
{
	ensure_init();
	record_exit(status);
	request_scan();
	if (real__Exit)
		real__Exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}
