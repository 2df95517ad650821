/* SPDX-License-Identifier: MIT */
/*
 * The session: connecting to the collector (ms-record) and mapping the
 * shared region, keeping or stopping recording, and what happens at fork,
 * at the program's start and end, and on attach and detach.
 *
 * A preloaded shim starts its session from the constructor (or from the
 * first allocation, if that comes first): it connects to MEMSCOPE_SOCK,
 * says hello, and receives the region's descriptor; the socket is closed
 * right after.  Attach mode starts one from shim_session_attach (attach.c).
 * A fork child is recorded only with --follow, as a session of its own.  At
 * the end, the program waits while the collector scans its memory for leaks
 * (request_scan).  A collector that died stops recording; the program runs
 * on.  The rings' slow path, waiting for room (wait_space), and a region's
 * end are rings.c's, the address-space limit is aslimit.c's (session.h).
 *
 * Owns the session's state (g_wiped's g_state and g_conf: the control
 * page, the region, the options the collector chose, the session
 * generation) and the fork handlers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sample.h"
#include "session.h"

struct shim_wiped g_wiped;
struct shim_conf g_conf;
/* Not wiped: shim_init ran in this process, or in the one it was copied
 * from (a clone child finds this set and its state zeroed). */
static bool g_started;
/* What fork_prepare saw: fork_child's own copy of the state is wiped. */
static int g_state_at_fork;
static bool g_follow, g_scan;
static char g_sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
/* An attach claimed the library and has not begun recording yet. */
static bool g_claimed;

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

/*
 * The collector is this user or root (the one who runs ms-record, or
 * root attached to us): another user listening at MEMSCOPE_SOCK gets
 * nothing.  Its pid, as the kernel says it, is the one we signal and
 * watch.
 */
static bool collector_trusted(int s)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0))
		return false;
	g_conf.collector_pid = cred.pid;
	return true;
}

/* The region's descriptor: a sealed memfd at least as long as the
 * welcome says, which no one can make shorter while it is mapped. */
static bool region_fd_ok(int fd, uint64_t size)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	return seals >= 0 && (seals & F_SEAL_SHRINK) && fstat(fd, &st) == 0 &&
	       S_ISREG(st.st_mode) && size >= MSC_PROTO_CTL_SIZE && (uint64_t)st.st_size >= size;
}

/*
 * The control page's layout, checked against the mapping before anything
 * is written through it, and kept in our own memory (g_conf.ring_size,
 * g_conf.nrings): the page is shared, and what it says later is not believed.
 */
static bool layout_ok(const struct msc_ctl *ctl, uint64_t size)
{
	uint32_t ring_size = ctl->ring_size, nrings = ctl->nrings;

	if (ctl->magic != MSC_PROTO_MAGIC || ctl->version != MSC_PROTO_VERSION ||
	    ring_size < 4096 || (ring_size & (ring_size - 1)) || ring_size > (1u << 30) ||
	    nrings < 1 || nrings > MSC_PROTO_MAX_RINGS || msc_region_size(ring_size, nrings) > size)
		return false;
	g_conf.ring_size = ring_size;
	g_conf.nrings = nrings;
	return true;
}


/* Connects to the collector and maps this process's region. */
static int session_start(bool forked)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct msc_hello hello = { 0 };
	struct msc_welcome welcome;
	int s, fd = -1, hi, rc;
	void *region;
	ssize_t n;

	if (!g_sock_path[0])
		return -ENOENT;
	memcpy(sa.sun_path, g_sock_path, sizeof(sa.sun_path));
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	rc = connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno :
	     !collector_trusted(s)				  ? -EPERM :
								    0;
	if (rc)
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
	n = (ssize_t)strnlen(g_conf.exe, sizeof(hello.exe) - 1);
	memcpy(hello.exe, g_conf.exe, (size_t)n);
	as_hello(&hello);
	if (send(s, &hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
		rc = -EPIPE;
		goto fail;
	}
	/* The collector closed the connection without a welcome: it did not
	 * take the hello (ECONNRESET), or refused us (its status). */
	rc = !recv_welcome(s, &welcome, &fd)		  ? -ECONNRESET :
	     welcome.status != 0			  ? (welcome.status < 0 ? welcome.status : -EPERM) :
	     !region_fd_ok(fd, welcome.region_size) ? -EPROTO :
							    0;
	if (rc)
		goto fail;
	as_make_room(welcome.region_size + (64ull << 20));
	region = mmap(NULL, welcome.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	fd = -1;
	if (region == MAP_FAILED) {
		rc = -ENOMEM;
		goto fail;
	}
	if (!layout_ok(region, welcome.region_size)) {
		munmap(region, welcome.region_size);
		rc = -EPROTO;
		goto fail;
	}
	as_make_room((uint64_t)g_conf.nrings * TSTATE_SLOT);
	/* Attached, every thread records at once (threads.c). */
	if (g_conf.attached && !forked)
		tstate_pool_open(g_conf.nrings);
	/* A new region: its rings are all to scan (region_bury bounded the
	 * last one's). */
	__atomic_store_n(&g_written.ring_scan_limit, 0, __ATOMIC_SEQ_CST);
	g_conf.region = region;
	g_conf.region_size = welcome.region_size;
	g_conf.buried = false;
	g_conf.ctl = region;
	g_conf.depth = g_conf.ctl->depth ? g_conf.ctl->depth : 64;
	if (g_conf.depth > TRACE_MAX)
		g_conf.depth = TRACE_MAX;
	g_conf.unwind = g_conf.ctl->unwind;
	g_conf.lossy = g_conf.ctl->flags & MSC_CTL_LOSSY;
	g_follow = g_conf.ctl->flags & MSC_CTL_FOLLOW;
	g_scan = g_conf.ctl->flags & MSC_CTL_SCAN;
	g_conf.scrub = g_scan;
	g_conf.free_stacks = g_conf.ctl->flags & MSC_CTL_FREE_STACKS;
	g_conf.tsc = g_conf.ctl->ts_kind == MSC_TS_TSC;
	/* Not where frees of blocks from before are common: a forked
	 * child frees its parent's, an attached process its own. */
	g_conf.ts_repair = !g_conf.attached && !forked;
	if (!sample_setup()) {
		munmap(region, welcome.region_size);
		g_conf.region = NULL;
		g_conf.ctl = NULL;
		rc = -ENOMEM;
		goto fail;
	}
	/*
	 * Nothing more goes over the socket (the scan's reply is a futex word
	 * in the region): the program is left with no descriptor of ours to
	 * close, dup2 over or find in /proc/self/fd.
	 */
	close(s);
	/* Not the unwinder's trace cache (most of it): its entries from an
	 * earlier session are dead by their generation, and pages untouched
	 * here stay out of the program's rss (unwind_reset). */
	tstate_clear(&g_written.shared);
	g_written.shared_ready = tstate_setup(&g_written.shared, 0);
	g_written.shared.tid = 0;
	if (g_written.shared_ready) {
		/* Announced like a thread's (tid 0: no thread), so that the
		 * leak scan does not take what it holds (register values
		 * among them) for roots: it lives in our .bss, which the
		 * kernel maps without a name. */
		shared_lock(&g_written.shared);
		emit_thread(&g_written.shared, 0, 0, &g_written.shared, 0, 0);
		shared_unlock(&g_written.shared);
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	close(s);
	return rc;
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
	guard_in();
	/* Held past this frame, until fork_parent or fork_child: no hook in
	 * between (another library's fork handler) may take its holder for
	 * gone (guard_lost). */
	t_guard_sp = UINTPTR_MAX;
	g_state_at_fork = g_state;
}

static void fork_parent(void)
{
	guard_out();
}

static void fork_child(void)
{
	/* Only this thread survives; the parent's region is not ours. */
	t_state = NULL;
	sample_close();
	tstate_pool_close();
	/* An attach's thread at work in the parent is not in the child. */
	g_claimed = false;
	g_conf.threads_seen = 0;
	g_written.shared_ready = false;
	if (g_conf.region) {
		unmap(g_conf.region, g_conf.region_size);
		g_conf.region = NULL;
		g_conf.ctl = NULL;
	}
	g_conf.pid = getpid();
	if (g_state_at_fork == ST_ACTIVE && g_follow && session_start(true) == 0) {
		set_state(ST_ACTIVE);
	} else {
		/*
		 * A child that is not followed: what it executes does not
		 * load us (only our LD_PRELOAD entry goes).  The recorded
		 * process itself keeps it, so that an exec in its place is
		 * still recorded.
		 */
		if (g_state_at_fork == ST_ACTIVE)
			strip_preload();
		set_state(ST_OFF);
		if (g_conf.attached)
			shim_unhook_child();
	}
	guard_out();	/* fork_prepare's (its hold went with the close above) */
}

/* What a session needs to know before it connects: the real functions,
 * who we are, where the collector listens (sock may be NULL: none). */
static void session_prepare(const char *sock)
{
	ssize_t n;

	resolve_reals();
	if (__atomic_load_n(&g_real.cxx_resolved, __ATOMIC_ACQUIRE))
		resolve_cxx();
	g_conf.pid = getpid();
	/* Once a page of .bss of its own (aligned: no file data shares it),
	 * private and anonymous.  Without it (a kernel before 4.14), a raw
	 * clone child is not told from its parent. */
	madvise(&g_wiped, sizeof(g_wiped), MADV_WIPEONFORK);
	if (sock && strlen(sock) < sizeof(g_sock_path))
		memcpy(g_sock_path, sock, strlen(sock) + 1);
	n = readlink("/proc/self/exe", g_conf.exe, sizeof(g_conf.exe) - 1);
	g_conf.exe[n > 0 ? n : 0] = '\0';
}

/* Connected: recording starts. */
static void session_activate(void)
{
	unwind_global_init(&g_conf.rtld_lo, &g_conf.rtld_len);
	if (!g_conf.thread_key_ok)
		g_conf.thread_key_ok = pthread_key_create(&g_conf.thread_key, thread_exit) == 0;
	set_state(ST_ACTIVE);
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
/* A session whose collector is gone (ms-record killed with SIGKILL)
 * while no thread had to wait for it: the next attach ends it. */
bool shim_session_orphaned(void)
{
	return g_state == ST_ACTIVE && g_conf.ctl && !collector_alive();
}

/* An attach's first step, on the thread ms-record stopped: the library is
 * this attach's to start (ST_INIT), or -EALREADY, -EBUSY, -EINVAL. */
int shim_session_claim(const char *sock)
{
	int st;

	if (!sock || strlen(sock) >= sizeof(g_sock_path))
		return -EINVAL;
	for (;;) {
		st = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
		if (st == ST_ACTIVE)
			return -EALREADY;
		if (st != ST_OFF && st != ST_UNINIT)
			return -EBUSY;
		if (__atomic_compare_exchange_n(&g_state, &st, ST_INIT, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			g_claimed = true;
			return 0;
		}
	}
}

/* The same for a session whose collector died: its recording stops
 * (ST_INIT), and the claim is the next attach's; false if it was not that. */
bool shim_session_claim_orphaned(void)
{
	int st = ST_ACTIVE;

	if (!shim_session_orphaned() ||
	    !__atomic_compare_exchange_n(&g_state, &st, ST_INIT, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return false;
	g_claimed = true;
	return true;
}

void shim_session_unclaim(void)
{
	g_claimed = false;
	set_state(ST_OFF);
}

bool shim_session_claimed(void)
{
	return __atomic_load_n(&g_claimed, __ATOMIC_ACQUIRE);
}

/* Then the session, claimed: 0, or -errno of the step of session_start
 * that failed (the claim let go). */
int shim_session_attach(const char *sock)
{
	int rc;

	guard_in();
	g_started = true;
	g_conf.attached = true;
	/* A session that ended without a detach (its collector died). */
	region_bury();
	session_prepare(sock);
	__atomic_add_fetch(&g_conf.gen, 1, __ATOMIC_RELEASE);
	rc = session_start(false);
	if (rc) {
		shim_session_unclaim();
		guard_out();
		return rc;
	}
	register_atfork();
	guard_out();
	return 0;
}

/* Recording begins, for every hook at once: after the slots are ours
 * (attach.c, patch_all), while the hooks meanwhile passed every call on. */
void shim_session_attach_begin(void)
{
	guard_in();
	session_activate();
	__atomic_store_n(&g_claimed, false, __ATOMIC_RELEASE);
	guard_out();
}

/* Detach: no more events, and the region is the collector's alone. */
void shim_session_detach(void)
{
	stop_recording();
	shim_session_detach_rest();
}

/* A detach in two steps (attach.c): recording stops at once, the library
 * held (ST_INIT, claimed: another attach is refused, -EBUSY, until the
 * rest is done). */
void shim_session_detach_begin(void)
{
	g_claimed = true;
	set_state(ST_INIT);
}

void shim_session_detach_rest(void)
{
	sample_flush_all();
	g_written.shared_ready = false;
	region_bury();
}

void shim_session_detach_end(void)
{
	set_state(ST_OFF);
	__atomic_store_n(&g_claimed, false, __ATOMIC_RELEASE);
}

void shim_init(void)
{
	int expect = ST_UNINIT;

	if (!__atomic_compare_exchange_n(&g_state, &expect, ST_INIT, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	if (g_started) {
		/* A raw clone's child (shim_wiped): the parent's session is
		 * not its own, and nothing tells it to start one. */
		set_state(ST_OFF);
		return;
	}
	g_started = true;
	guard_in();
	/* secure_getenv: in a setuid or setgid program (or one with file
	 * capabilities), loaded by /etc/ld.so.preload, the environment is
	 * the caller's, not to be trusted: no socket, no recording. */
	session_prepare(secure_getenv("MEMSCOPE_SOCK"));
	if (session_start(false)) {
		/* Not recorded (not followed, or no collector): our children
		 * must not load us either. */
		if (g_sock_path[0])
			strip_preload();
		set_state(ST_OFF);
		guard_out();
		return;
	}
	session_activate();
	guard_out();
}

__attribute__((constructor)) static void shim_ctor(void)
{
	ensure_init();
	if (g_state != ST_ACTIVE)
		return;
	guard_in();
	resolve_cxx_early();
	unwind_load_libunwind();
	hidden_forget();	/* dlopen's own blocks (shim.h, hidden_note) */
	register_atfork();
	/* Here, not in shim_init: that may run inside the loader (an
	 * allocation of a library's constructor), which holds the lock
	 * dl_iterate_phdr takes. */
	shim_hooks_install();
	guard_out();
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

	if (g_state != ST_ACTIVE || getpid() != g_conf.pid)
		return;
	guard_in();
	/* The fast paths' counts, before the collector's last look. */
	sample_flush_all();
	if (!g_scan || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) {
		errno = saved;
		guard_out();
		return;
	}
	t = get_tstate();
	if (t && collector_alive()) {
		const uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
		long long cpu = collector_cpu();
		uint64_t since = mono_ns();
		unsigned naps = 0;

		shared_lock(t);
		sent = emit(t, MSC_EV_SCAN, 0, (uint32_t)raw_gettid(), &sp, 1);
		shared_unlock(t);
		/* Not to wait for the collector's next round (msc_proto.h). */
		if (sent) {
			__atomic_store_n(&g_conf.ctl->scan_wanted, 1, __ATOMIC_RELEASE);
			wake_collector();
		}
		/* Until the collector says it is done, or is gone, or gave up
		 * the ring the request is in, or has done no work (no CPU
		 * time) for STALL_NS: stopped, or blocked on its output. */
		while (sent && !__atomic_load_n(&g_conf.ctl->scan_done, __ATOMIC_ACQUIRE) &&
		       !t->ring->abandoned) {
			struct timespec ts = { 0, 10000000 };

			syscall(SYS_futex, &g_conf.ctl->scan_done, FUTEX_WAIT, 0, &ts, NULL, 0);
			if ((++naps & 15) == 0 && !collector_alive())
				break;
			if ((naps & 15) == 0 && cpu >= 0) {
				long long now_cpu = collector_cpu();
				uint64_t now = mono_ns();

				if (now_cpu != cpu) {
					cpu = now_cpu;
					since = now;
				} else if (now - since >= STALL_NS) {
					break;
				}
			}
		}
	}
	errno = saved;
	guard_out();
}

__attribute__((destructor)) static void shim_dtor(void)
{
	if (g_state == ST_ACTIVE && getpid() == g_conf.pid)
		unwind_report();
	request_scan();
}
