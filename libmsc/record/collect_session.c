/* SPDX-License-Identifier: MIT */
/*
 * The collector's sessions, from hello to end, their count and unsampled
 * figures, and its direct child: see collect_internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect_internal.h"
#include "msc_collect.h"
#include "msc_hash.h"
#include "msc_proc.h"

static int pidfd_open_(int pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The rings' data pages, read to the end; not the pages of their headers
 * (a late writer of this session still reads its ring's state there): a
 * page or two a ring a thread took stays. */
static void release_rings(struct msc_collector_private *p)
{
	uint64_t stride, i, n;
	uintptr_t page = 4096;

	if (!p->ring_size || p->region_size <= MSC_PROTO_CTL_SIZE)
		return;
	stride = MSC_PROTO_RING_HDR + (uint64_t)p->ring_size;
	n = (p->region_size - MSC_PROTO_CTL_SIZE) / stride;
	for (i = 0; i < n; i++) {
		uintptr_t lo = (uintptr_t)p->region + MSC_PROTO_CTL_SIZE + i * stride +
			       MSC_PROTO_RING_HDR;
		uintptr_t hi = lo + p->ring_size;

		lo = (lo + page - 1) & ~(page - 1);
		hi &= ~(page - 1);
		if (hi > lo)
			madvise((void *)lo, hi - lo, MADV_REMOVE);
	}
}

void collect_free_session(struct msc_collector_private *p)
{
	struct modmap *m = p->maps;

	while (m) {
		struct modmap *next = m->next;

		free(m->segs);
		free(m);
		m = next;
	}
	if (p->procmaps) {
		free(p->procmaps->segs);
		free(p->procmaps);
	}
	if (p->cur) {
		uint32_t i;

		for (i = 0; i < p->ncur; i++)
			free(p->cur[i].build);
	}
	free(p->cur);
	free(p->cand);
	free(p->stack_map);
	msc_u64map_release(&p->stack_far);
	free(p->samples);
	if (p->region) {
		/* Read to the end: the rings' pages go back to the system, in
		 * the process too (shared memory, counted against its cgroup:
		 * 2 MiB an allocating thread stayed resident after a detach).
		 * A thread still inside a hook of this session writes on a
		 * fresh page. */
		release_rings(p);
		munmap(p->region, p->region_size);
	}
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->statm_fd >= 0)
		close(p->statm_fd);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	free(p);
}

static bool send_welcome(int s, int status, uint64_t size, int fd)
{
	struct msc_welcome w = { MSC_PROTO_MAGIC, status, 0, size };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &w, sizeof(w) };
	struct msghdr mh = { 0 };
	ssize_t n;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do {
		n = sendmsg(s, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(w);
}

/* pid is there and not ending (a zombie, or dead). */
static bool running(int pid)
{
	struct msc_procfs fs;
	struct msc_pstat ps;
	bool yes;

	if (msc_procfs_init(&fs, NULL))
		return false;
	yes = msc_proc_stat(&fs, pid, &ps, NULL) == 0 && ps.state != 'Z' && ps.state != 'X';
	msc_procfs_release(&fs);
	return yes;
}

/*
 * How long a hello may take after the connect.  The shim sends it right
 * after, but on a thread that may wait for a CPU, or for the memory map's
 * lock behind the program's own threads, for seconds when hundreds of them
 * keep the CPUs busy; meanwhile the other sessions are served.
 */
#define HELLO_WAIT_NS 10000000000ull

/* Reads what is there of w's hello: 1 complete, 0 more to come, -1 gone. */
static int hello_read(struct collect_hello_wait *w)
{
	while (w->got < sizeof(w->h)) {
		ssize_t n = read(w->fd, (char *)&w->h + w->got, sizeof(w->h) - w->got);

		if (n > 0) {
			w->got += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN ? 0 : -1;
	}
	return 1;
}

static bool hello_ok(const struct msc_hello *h, int pid)
{
	return h->magic == MSC_PROTO_MAGIC && h->version == MSC_PROTO_VERSION && h->pid > 0 &&
	       h->pid == pid;
}

/* ------------------------------------------- the region and a limit */

#define MIN_FIT_RINGS 16u
#define MIN_FIT_RING (16u * 1024)

/*
 * The collector maps every process's region too: under an inherited
 * ulimit -v (ms-record run under one) its limit goes away when it may
 * (CAP_SYS_RESOURCE), else its soft limit up to its hard one, which a
 * process may always do.  Its children (the program) inherit the limit
 * as it was: ms-record puts it back for them (msc_collector_own_limit).
 */
static struct rlimit g_own_as;
static bool g_own_as_raised;

void collect_own_room(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (g_own_as_raised || getrlimit(RLIMIT_AS, &g_own_as) < 0 ||
	    g_own_as.rlim_cur == RLIM_INFINITY)
		return;
	if (setrlimit(RLIMIT_AS, &rl) < 0) {
		rl.rlim_cur = rl.rlim_max = g_own_as.rlim_max;
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			return;
	}
	g_own_as_raised = true;
}

const struct rlimit *msc_collector_own_limit(void)
{
	return g_own_as_raised ? &g_own_as : NULL;
}

/* Half of what the collector may still map. */
static uint64_t own_budget(void)
{
	struct msc_procfs fs;
	struct msc_pstatm st = { 0 };
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	if (msc_procfs_init(&fs, NULL) == 0) {
		msc_proc_statm(&fs, getpid(), &st, NULL);
		msc_procfs_release(&fs);
	}
	return rl.rlim_cur > st.size ? (rl.rlim_cur - st.size) / 2 : 0;
}

/* What a region of these rings takes in the process: itself and its
 * threads' state (the shim's our_space, but its 64 MiB of slack). */
static uint64_t region_need(uint32_t ring_size, uint32_t nrings)
{
	return msc_region_size(ring_size, nrings) + (uint64_t)nrings * (384u << 10);
}

/* Fewer rings (down to 16), then smaller ones (down to 16 KiB), until
 * they fit in budget bytes: whether they do. */
static bool shrink_to(uint64_t budget, uint32_t *ring_size, uint32_t *nrings)
{
	while (region_need(*ring_size, *nrings) > budget && *nrings > MIN_FIT_RINGS)
		*nrings = *nrings / 2 > MIN_FIT_RINGS ? *nrings / 2 : MIN_FIT_RINGS;
	while (region_need(*ring_size, *nrings) > budget && *ring_size > MIN_FIT_RING)
		*ring_size /= 2;
	return region_need(*ring_size, *nrings) <= budget;
}

/*
 * The layout of a process's region under an address-space limit (the
 * hello's as_room and as_free; the collector's own): first within what we
 * may add to its limit without taking from the room it has (as_room -
 * as_free), else within an eighth of all it may map.  0: within the
 * first; 1: within the second, *took being what it loses; -1: neither.
 */
static int fit_layout(const struct msc_hello *h, uint32_t *ring_size, uint32_t *nrings,
		      uint64_t *took)
{
	uint64_t own = own_budget(), spare, budget;
	uint32_t rs = *ring_size, nr = *nrings;

	if (!h->as_room && own == UINT64_MAX)
		return 0;
	spare = h->as_room ? (h->as_room > h->as_free ? h->as_room - h->as_free : 0) : UINT64_MAX;
	if (shrink_to(spare < own ? spare : own, ring_size, nrings))
		return 0;
	*ring_size = rs;
	*nrings = nr;
	budget = h->as_room ? h->as_room / 8 : UINT64_MAX;
	if (!shrink_to(budget < own ? budget : own, ring_size, nrings))
		return -1;
	*took = region_need(*ring_size, *nrings) > spare ? region_need(*ring_size, *nrings) - spare : 0;
	return 1;
}

static void session_begin(struct msc_collector *c, int s, struct msc_hello *hp, int pid);

void collect_accept_one(struct msc_collector *c)
{
	struct collect_hello_wait w;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int s, got;

	s = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (s < 0)
		return;
	/* Only processes of our own user may talk to us (the directory is
	 * 0700 already; this also names the real pid). */
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    (cred.uid != geteuid() && !(c->peer_uid_set && cred.uid == c->peer_uid))) {
		close(s);
		return;
	}
	w = (struct collect_hello_wait){ .fd = s, .pid = (int)cred.pid };
	if (fcntl(s, F_SETFL, O_NONBLOCK) < 0 || (got = hello_read(&w)) < 0) {
		close(s);
		return;
	}
	if (!got) {
		if (c->nhellos == COLLECT_HELLOS_MAX) {
			close(s);
			return;
		}
		w.deadline_ns = msc_now_monotonic() + HELLO_WAIT_NS;
		c->hellos[c->nhellos++] = w;
		return;
	}
	session_begin(c, s, &w.h, w.pid);
}

void collect_hello_ready(struct msc_collector *c, unsigned i)
{
	struct collect_hello_wait w = c->hellos[i];
	int got = hello_read(&w);

	if (!got) {
		c->hellos[i] = w;
		return;
	}
	c->hellos[i] = c->hellos[--c->nhellos];
	if (got < 0)
		close(w.fd);
	else
		session_begin(c, w.fd, &w.h, w.pid);
}

void collect_hellos_expire(struct msc_collector *c, uint64_t now)
{
	unsigned i = 0;

	while (i < c->nhellos) {
		struct collect_hello_wait *w = &c->hellos[i];

		if (now < w->deadline_ns) {
			i++;
			continue;
		}
		if (c->ops->warn && running(w->pid))
			c->ops->warn(c->ctx, "pid %d connected and sent no hello within %llu s: not recorded",
				     w->pid, HELLO_WAIT_NS / 1000000000ull);
		close(w->fd);
		*w = c->hellos[--c->nhellos];
	}
}

/* A session for the process that said hello h on socket s (pid: its
 * credentials'): its region, or a refusal. */
static void session_begin(struct msc_collector *c, int s, struct msc_hello *hp, int pid)
{
	struct msc_collector_private *p, *old, *next;
	struct msc_hello h = *hp;
	struct msc_ctl *ctl;
	char path[64];
	uint32_t ring_size = c->o.ring_size, nrings = c->o.nrings;
	uint64_t took = 0;
	int fd = -1, fit;

	if (!hello_ok(&h, pid)) {
		if (c->ops->warn && running(pid))
			c->ops->warn(c->ctx, "pid %d connected and sent no valid hello: not recorded",
				     pid);
		close(s);
		return;
	}
	/* Blocking again: the welcome carries a descriptor. */
	fcntl(s, F_SETFL, 0);
	/* An exec: the pid's previous image is gone. */
	/* (collect_end_session may free old: its successor is read first.) */
	for (old = c->procs; old; old = next) {
		next = old->next;
		if (old->pub.pid == h.pid && !old->ended)
			collect_end_session(c, old, "exec", 0, false);
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(s);
		return;
	}
	p->pidfd = -1;
	p->statm_fd = -1;
	p->mem_fd = -1;
	p->exit_call_status = -1;
	p->pub.pid = h.pid;
	p->pub.ppid = h.ppid;
	p->pub.priv = p;
	p->pub.forked = h.flags & MSC_HELLO_FORKED;
	p->pub.is_child = h.pid == c->child_pid;
	h.exe[sizeof(h.exe) - 1] = '\0';
	memcpy(p->pub.exe, h.exe, sizeof(p->pub.exe));
	if (!c->ops->attach(c->ctx, &p->pub)) {
		send_welcome(s, -EPERM, 0, -1);
		close(s);
		p->region = NULL;
		collect_free_session(p);
		return;
	}
	fit = fit_layout(&h, &ring_size, &nrings, &took);
	if (fit < 0) {
		if (c->ops->warn)
			c->ops->warn(c->ctx, "pid %d: its address-space limit (RLIMIT_AS, ulimit -v) "
				     "leaves no room for the recording's rings: not recorded", h.pid);
		goto fail;
	}
	if (fit > 0 && c->ops->warn)
		c->ops->warn(c->ctx, "pid %d: under its address-space limit (RLIMIT_AS, ulimit -v) "
			     "the recording's %u rings of %u KiB take %llu MiB of what it may map",
			     h.pid, nrings, ring_size >> 10, (unsigned long long)(took + (1u << 20) - 1) >> 20);
	p->region_size = msc_region_size(ring_size, nrings);
	p->ring_size = ring_size;
	/* Sealed at its size: the shim maps it whole and must never find
	 * it shorter (SIGBUS) than the welcome said. */
	fd = memfd_create("memscope", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)p->region_size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail_said;
	p->region = mmap(NULL, p->region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p->region == MAP_FAILED) {
		p->region = NULL;
		goto fail_said;
	}
	ctl = p->ctl = p->region;
	ctl->magic = MSC_PROTO_MAGIC;
	ctl->version = MSC_PROTO_VERSION;
	ctl->ring_size = ring_size;
	ctl->nrings = nrings;
	ctl->ts_kind = c->ts_kind;
	ctl->depth = c->o.depth;
	ctl->unwind = c->o.unwind;
	ctl->flags = (c->o.lossy ? MSC_CTL_LOSSY : 0) | (c->o.follow ? MSC_CTL_FOLLOW : 0) |
		     (c->o.scan ? MSC_CTL_SCAN : 0) | (c->o.free_stacks ? MSC_CTL_FREE_STACKS : 0);
	ctl->collector_pid = (uint32_t)getpid();
	ctl->sample = c->o.sample;
	ctl->sample_seed = c->o.seed;
	ctl->sample_seeded = c->o.seeded;
	ctl->rings_used = 1;
	p->cur = calloc(nrings, sizeof(*p->cur));
	p->cand = calloc(nrings, sizeof(*p->cand));
	p->stack_map_cap = 4096;
	p->stack_map = calloc(p->stack_map_cap, sizeof(*p->stack_map));
	if (!p->cur || !p->cand || !p->stack_map)
		goto fail;
	p->ncur = nrings;
	p->rings_used = 1;
	/* Not msc_ring_at(): it reads the layout from the control page. */
	for (unsigned i = 0; i < nrings; i++) {
		p->cur[i].ring = (struct msc_ring *)((char *)p->region + MSC_PROTO_CTL_SIZE +
						     (uint64_t)i * (MSC_PROTO_RING_HDR + ring_size));
		p->cur[i].data = msc_ring_data(p->cur[i].ring);
	}
	p->pidfd = pidfd_open_(h.pid);
	snprintf(path, sizeof(path), "/proc/%d/statm", h.pid);
	p->statm_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/mem", h.pid);
	p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!send_welcome(s, 0, p->region_size, fd))
		goto fail;
	/* All else goes through the region and the pidfd. */
	close(s);
	close(fd);
	p->next = c->procs;
	c->procs = p;
	c->nprocs++;
	return;
fail_said:
	if (c->ops->warn)
		c->ops->warn(c->ctx, "pid %d: cannot make its %llu MiB of rings: %s: not recorded",
			     h.pid, (unsigned long long)(p->region_size >> 20), strerror(errno));
fail:
	if (fd >= 0)
		close(fd);
	send_welcome(s, -ENOMEM, 0, -1);
	close(s);
	c->ops->detach(c->ctx, &p->pub, &(struct msc_cend){ "error", -1, 0, false, 0, 0, false });
	collect_free_session(p);
}

void collect_end_session(struct msc_collector *c, struct msc_collector_private *p,
			 const char *reason, int wait_status, bool have_status)
{
	struct msc_cend end = { 0 };
	struct msc_collector_private **pp;

	if (p->ended)
		return;
	p->ended = true;
	/* Whatever was committed is final now. */
	collect_pump(c, p, true);
	end.reason = reason;
	end.status = -1;
	if (have_status) {
		if (WIFEXITED(wait_status)) {
			end.reason = "exit";
			end.status = WEXITSTATUS(wait_status);
		} else if (WIFSIGNALED(wait_status)) {
			end.reason = "signal";
			end.signal = WTERMSIG(wait_status);
			end.core = WCOREDUMP(wait_status);
		}
	} else if (strcmp(reason, "exit") == 0) {
		end.status = p->exit_call_status;
	}
	end.lost = p->ctl ? p->ctl->lost : 0;
	end.waits = p->ctl ? p->ctl->waits : 0;
	end.corrupt = p->corrupt;
	c->ops->detach(c->ctx, &p->pub, &end);
	for (pp = &c->procs; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	c->nprocs--;
	collect_free_session(p);
}

bool msc_cproc_unsampled(const struct msc_cproc *pub, uint64_t *allocs, uint64_t *bytes,
			 uint64_t *frees)
{
	const struct msc_collector_private *p = pub->priv;
	uint32_t used, i;

	*allocs = *bytes = *frees = 0;
	if (!p || !p->region || !p->cur)
		return false;
	/* Every ring ever claimed: the counts outlive their threads. */
	used = __atomic_load_n(&p->ctl->rings_used, __ATOMIC_ACQUIRE);
	if (used < p->rings_used)
		used = p->rings_used;
	if (used > p->ncur)
		used = p->ncur;
	for (i = 0; i < used; i++) {
		const struct msc_ring *r = p->cur[i].ring;

		*allocs += __atomic_load_n(&r->unsampled_allocs, __ATOMIC_RELAXED);
		*bytes += __atomic_load_n(&r->unsampled_bytes, __ATOMIC_RELAXED);
		*frees += __atomic_load_n(&r->unsampled_frees, __ATOMIC_RELAXED);
	}
	/* The end's flush of the threads still running (struct msc_ctl). */
	*allocs += __atomic_load_n(&p->ctl->flushed_allocs, __ATOMIC_RELAXED);
	*bytes += __atomic_load_n(&p->ctl->flushed_bytes, __ATOMIC_RELAXED);
	*frees += __atomic_load_n(&p->ctl->flushed_frees, __ATOMIC_RELAXED);
	return true;
}

unsigned msc_collector_sessions(const struct msc_collector *c)
{
	return c->nprocs;
}

int msc_collector_allow_uid(struct msc_collector *c, unsigned uid)
{
	if (uid == geteuid())
		return 0;
	/*
	 * The socket becomes the other user's, 0600, so that their process
	 * may connect (who connects is checked again on accept); the
	 * directory stays ours, open for them to pass through (0711), not to
	 * rename or plant in.  Both through the directory's descriptor.
	 */
	if (fchownat(c->dir_fd, "ctl.sock", uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(c->dir_fd, "ctl.sock", 0600, 0) < 0 || fchmod(c->dir_fd, 0711) < 0)
		return -errno;
	c->peer_uid = uid;
	c->peer_uid_set = true;
	return 0;
}

void msc_collector_set_child(struct msc_collector *c, int pid)
{
	c->child_pid = pid;
	c->child_pidfd = pidfd_open_(pid);
}

bool msc_collector_child_usage(const struct msc_collector *c, uint64_t *hwm, uint64_t *cpu)
{
	if (!c->child_done)
		return false;
	*hwm = (uint64_t)c->child_usage.ru_maxrss * 1024;
	*cpu = (uint64_t)c->child_usage.ru_utime.tv_sec * 1000000000ull +
	       (uint64_t)c->child_usage.ru_utime.tv_usec * 1000ull +
	       (uint64_t)c->child_usage.ru_stime.tv_sec * 1000000000ull +
	       (uint64_t)c->child_usage.ru_stime.tv_usec * 1000ull;
	return true;
}

bool msc_collector_child_done(const struct msc_collector *c, int *status)
{
	if (c->child_done && status)
		*status = c->child_status;
	return c->child_done;
}

void msc_collector_child_exited(struct msc_collector *c, int status, const struct rusage *ru)
{
	struct msc_collector_private *p, *next;

	if (c->child_pid <= 0 || c->child_done)
		return;
	c->child_done = true;
	c->child_status = status;
	c->child_usage = *ru;
	for (p = c->procs; p; p = next) {
		next = p->next;
		if (p->pub.pid == c->child_pid)
			collect_end_session(c, p, "exit", status, true);
	}
}

void collect_reap_child(struct msc_collector *c)
{
	struct msc_collector_private *p, *next;
	int status;
	pid_t r;

	if (c->child_pid <= 0 || c->child_done)
		return;
	r = wait4(c->child_pid, &status, WNOHANG, &c->child_usage);
	if (r != c->child_pid)
		return;
	c->child_done = true;
	c->child_status = status;
	for (p = c->procs; p; p = next) {
		next = p->next;
		if (p->pub.pid == c->child_pid)
			collect_end_session(c, p, "exit", status, true);
	}
}
