/* SPDX-License-Identifier: MIT */
/* Collector side of the shim protocol, sessions aside (collect_session.c): see msc_collect.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "collect_internal.h"
#include "msc_collect.h"
#include "msc_fsafe.h"
#include "msc_hash.h"
#include "msc_live.h"
#include "msc_proc.h"
#include "msc_stream.h"
#include "msc_util.h"

#define DEFAULT_RING_SIZE (2048u * 1024)
#define DEFAULT_NRINGS 257u
/* msc_collector_size_rings: the most all threads may write ahead. */
#define WRITE_AHEAD (8ull << 20)
#define MIN_SIZED_RING (16u * 1024)
#define RELEASE_EVERY (64u * 1024)	/* bytes read before the tail moves */
/* An event's timestamp is taken before it is committed, so it is never
 * later than our clock when we read it; another CPU's clock may be a little
 * ahead, and this is far more than a little. */
#define FUTURE_SLACK_NS 10000000000ull
/* The table indexed by stack id grows to ids below twice the stacks seen
 * plus this (handle_stack). */
#define STACK_MAP_SLACK 65536u

static uint64_t raw_now(const struct msc_collector *c)
{
	return c->ts_kind == MSC_TS_TSC ? __rdtsc() : msc_now_monotonic();
}

/*
 * ns = ns_at + (raw - raw_at) * ns_mult / 2^32: one multiplication per
 * event.  (raw_at, ns_at) is raw0 and 0 but after a rate measured early
 * was measured again (clock_ready): then the moment of the new rate, so
 * that the times already given go on without a jump.  An event from before
 * that moment (a ring read late) goes back from it at the new rate.
 */
static uint64_t to_ns(const struct msc_collector *c, uint64_t raw)
{
	uint64_t d;

	if (raw >= c->raw_at)
		return c->ns_at + (uint64_t)(((unsigned __int128)(raw - c->raw_at) * c->ns_mult) >> 32);
	if (raw <= c->raw0)
		return 0;
	d = (uint64_t)(((unsigned __int128)(c->raw_at - raw) * c->ns_mult) >> 32);
	return d < c->ns_at ? c->ns_at - d : 0;
}

static bool clock_ready(struct msc_collector *c, bool wait);

uint64_t msc_collector_now(struct msc_collector *c)
{
	clock_ready(c, true);
	return to_ns(c, raw_now(c));
}

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
 * first readings are taken then (calibrate_begin), the last 5 ms later,
 * when its events are first read (clock_ready).  Until then the events
 * wait in their rings, and the program runs rather than wait 5 ms for
 * ms-record (half of a small program's cost of recording).  Events that
 * must be read sooner (a process's last ones, the time asked for) end the
 * measurement early, over what has run so far but at least 1 ms: every
 * event until then lies inside that span, so it is as exact for them
 * (within the readings' own ~0.1 us); the rate is measured again once the
 * 5 ms are up, for the events that come later (another process's), from
 * that moment on.  A program that ended within 5 ms of ms-record's start
 * used to keep it spinning for the rest: most of ms-record's cost on
 * /bin/true.
 */
#define CALIBRATE_NS 5000000
#define CALIBRATE_MIN_NS 1000000

/*
 * CLOCK_MONOTONIC and the TSC at one moment: the TSC halfway between two
 * reads around the clock's, from the try whose two reads came closest.  A
 * thread preempted between reading one and the other (a loaded machine)
 * would skew the rate by the preemption's length over the 5 ms: 3 ms made
 * a 0.5 s sleep 0.8 s in t0330 once.  Eight tries take under a microsecond.
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

static void calibrate_begin(struct msc_collector *c)
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

/* The rate over the readings since calibrate_begin, at least `span` ns of
 * them; from the moment it ends when the rate was measured before. */
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
static uint64_t calibrate_left(const struct msc_collector *c, uint64_t now)
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
static bool clock_ready(struct msc_collector *c, bool wait)
{
	uint64_t now;

	if (msc_likely(c->calibrated && !c->early))
		return true;
	now = msc_now_monotonic();
	if (c->calibrated) {
		if (!calibrate_left(c, now)) {
			calibrate_end(c, CALIBRATE_NS);
			c->early = false;
		}
		return true;
	}
	if (!wait && calibrate_left(c, now))
		return false;
	if (c->ts_kind == MSC_TS_TSC) {
		c->early = calibrate_left(c, now) != 0;
		calibrate_end(c, c->early ? CALIBRATE_MIN_NS : CALIBRATE_NS);
	} else {
		clock_spans(c);
	}
	c->calibrated = true;
	if (c->o.interval)
		c->next_sample_raw = raw_now(c) + c->sample_every_raw;
	return true;
}

/*
 * What recorders killed with SIGKILL left in base: directories named and
 * owned as ours whose ctl.sock nobody listens on.  Removed before one more
 * is made, so that they do not pile up.  A directory without its socket
 * may be a recorder's between mkdtemp and bind: it is left alone unless it
 * is a minute old.
 */
static void prune_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char dir[PATH_MAX];
		struct stat st, sst;
		int s, rc;

		if (strncmp(e->d_name, "memscope.", 9) != 0 || strlen(e->d_name) != 15 ||
		    (size_t)snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name) >= sizeof(dir) ||
		    lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    (size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl.sock", dir) >=
			    sizeof(sa.sun_path))
			continue;
		if (lstat(sa.sun_path, &sst) == 0) {
			if (!S_ISSOCK(sst.st_mode))
				continue;
			s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (s < 0)
				continue;
			rc = connect(s, (struct sockaddr *)&sa, sizeof(sa));
			close(s);
			if (rc == 0 || errno != ECONNREFUSED)
				continue;	/* alive, or cannot tell */
			unlink(sa.sun_path);
		} else if (errno != ENOENT || now - st.st_mtime < 60) {
			continue;
		}
		rmdir(dir);	/* fails if something else is inside: not ours to judge */
	}
	closedir(d);
}

/*
 * Whether prune_stale is due: it reads all of base, and a server's /tmp may
 * hold thousands of names (700 here took 0.3 ms of every start).  A stamp
 * in this user's private directory (msc_live_dir) says when it ran last:
 * once in PRUNE_EVERY seconds, or every time without a place for it.
 */
#define PRUNE_EVERY 600
static bool prune_due(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat st;
	time_t now = time(NULL);
	int fd;

	if (msc_live_dir(dir, sizeof(dir), 1, NULL) ||
	    (size_t)snprintf(path, sizeof(path), "%s/pruned", dir) >= sizeof(path))
		return true;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime <= now &&
	    now - st.st_mtime < PRUNE_EVERY)
		return false;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	return true;
}

struct msc_collector *msc_collector_new(const struct msc_collect_opts *o,
					const struct msc_collect_ops *ops, void *ctx,
					struct msc_stacks *stacks, struct msc_err *err)
{
	struct msc_collector *c = calloc(1, sizeof(*c));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char base[PATH_MAX];

	if (!c) {
		msc_err_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	c->o = *o;
	if (!c->o.ring_size || (c->o.ring_size & (c->o.ring_size - 1)) || c->o.ring_size < 4096)
		c->o.ring_size = DEFAULT_RING_SIZE;
	if (!c->o.nrings)
		c->o.nrings = DEFAULT_NRINGS;
	if (c->o.nrings > MSC_PROTO_MAX_RINGS)
		c->o.nrings = MSC_PROTO_MAX_RINGS;
	collect_own_room();
	if (!c->o.depth)
		c->o.depth = 64;
	c->ops = ops;
	c->ctx = ctx;
	c->stacks = stacks;
	c->listen_fd = -1;
	c->watch_fd = -1;
	c->child_pid = -1;
	c->child_pidfd = -1;
	c->page_size = sysconf(_SC_PAGESIZE);
	c->dir_fd = -1;
	if (msc_fsafe_base(base, sizeof(base), err) < 0) {
		free(c);
		return NULL;
	}
	if (prune_due())
		prune_stale(base);
	if ((size_t)snprintf(c->dir, sizeof(c->dir), "%s/memscope.XXXXXX", base) >= sizeof(c->dir))
		errno = ENAMETOOLONG;
	else if (mkdtemp(c->dir))	/* mode 0700 */
		errno = 0;
	if (errno) {
		c->dir[0] = '\0';
		msc_err_set(err, -errno, "cannot create a directory in '%s': %s", base,
			    strerror(errno));
		free(c);
		return NULL;
	}
	/* Ours, made just now in a directory where no one else can rename
	 * it: held by a descriptor for what is done to it later
	 * (msc_collector_allow_uid). */
	c->dir_fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dir_fd < 0) {
		msc_err_set(err, -errno, "'%s': %s", c->dir, strerror(errno));
		goto fail;
	}
	snprintf(c->sock_path, sizeof(c->sock_path), "%s/ctl.sock", c->dir);
	if (strlen(c->sock_path) >= sizeof(sa.sun_path)) {
		msc_err_set(err, -ENAMETOOLONG, "socket path '%s' is too long", c->sock_path);
		goto fail;
	}
	strcpy(sa.sun_path, c->sock_path);
	c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->listen_fd < 0 || bind(c->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(c->listen_fd, 64) < 0) {
		msc_err_set(err, -errno, "cannot listen on '%s': %s", c->sock_path, strerror(errno));
		goto fail;
	}
	calibrate_begin(c);
	return c;
fail:
	msc_collector_free(c);
	return NULL;
}

const char *msc_collector_socket(const struct msc_collector *c)
{
	return c->sock_path;
}

void msc_collector_size_rings(struct msc_collector *c, int threads)
{
	uint32_t size = DEFAULT_RING_SIZE;

	while (threads > 0 && size > MIN_SIZED_RING && (uint64_t)size * (uint64_t)threads > WRITE_AHEAD)
		size /= 2;
	if (size < c->o.ring_size)
		c->o.ring_size = size;
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

/* --------------------------------------------------------------- rings */

static const struct modseg *find_seg(const struct modmap *m, uint64_t ip)
{
	size_t lo = 0, hi;

	if (!m || !m->n)
		return NULL;
	hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->segs[mid].end <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->n && m->segs[lo].start <= ip && ip < m->segs[lo].end)
		return &m->segs[lo];
	return NULL;
}

static int cmp_seg(const void *x, const void *y)
{
	const struct modseg *a = x, *b = y;

	return a->start < b->start ? -1 : a->start > b->start;
}

struct procmaps_walk {
	struct msc_collector *c;
	struct modmap *m;
	size_t cap;
};

/* A file mapping becomes a segment of its module (by path: no build-id). */
static int procmaps_seg(const struct msc_mapping *mp, void *arg)
{
	struct procmaps_walk *pw = arg;
	struct modmap *m = pw->m;
	long mod;

	if (mp->path[0] != '/')
		return 0;
	mod = msc_stacks_module(pw->c->stacks, mp->path, NULL, 0);
	if (mod < 0)
		return 0;
	if (MSC_GROW(m->segs, m->n + 1, pw->cap, 64))
		return 1;
	m->segs[m->n++] = (struct modseg){ mp->start, mp->end, mp->start - mp->offset, (uint32_t)mod };
	return 0;
}

/* Reads /proc/PID/maps for an address no module map knows (a race with
 * dlopen, or code the loader does not know). */
static const struct modseg *procmaps_lookup(struct msc_collector *c,
					    struct msc_collector_private *p, uint64_t ip)
{
	const struct modseg *s = find_seg(p->procmaps, ip);
	uint64_t now = msc_now_monotonic();
	struct procmaps_walk pw = { c, NULL, 0 };
	struct msc_procfs fs;

	if (s || now - p->procmaps_at < 100000000ull)	/* at most 10 reads a second */
		return s;
	p->procmaps_at = now;
	pw.m = calloc(1, sizeof(*pw.m));
	if (!pw.m || msc_procfs_init(&fs, NULL)) {
		free(pw.m);
		return NULL;
	}
	if (msc_proc_maps(&fs, p->pub.pid, procmaps_seg, &pw, NULL) < 0) {
		msc_procfs_release(&fs);
		free(pw.m->segs);
		free(pw.m);
		return NULL;
	}
	msc_procfs_release(&fs);
	if (p->procmaps) {
		free(p->procmaps->segs);
		free(p->procmaps);
	}
	p->procmaps = pw.m;
	if (pw.m->n)
		qsort(pw.m->segs, pw.m->n, sizeof(*pw.m->segs), cmp_seg);
	return find_seg(pw.m, ip);
}

static void handle_stack(struct msc_collector *c, struct msc_collector_private *p,
			 struct ring_cur *cur, uint32_t shim_id, const uint64_t *ips, unsigned n)
{
	struct msc_frame_ref f[MSC_PROTO_MAX_DEPTH];
	uint32_t id;
	unsigned i;

	if (n > MSC_PROTO_MAX_DEPTH)
		n = MSC_PROTO_MAX_DEPTH;
	for (i = 0; i < n; i++) {
		const struct modseg *s = find_seg(cur->mods, ips[i]);

		if (!s)
			s = procmaps_lookup(c, p, ips[i]);
		f[i].ip = ips[i];
		if (s) {
			f[i].module = s->module;
			f[i].addr = ips[i] - s->base;
		} else {
			f[i].module = MSC_NO_MODULE;
			f[i].addr = ips[i];
		}
	}
	id = msc_stacks_intern(c->stacks, f, n);
	/*
	 * The shim hands ids out in sequence (ctl->next_stack), so a table
	 * indexed by id is the map, and grows as the ids do.  But the id is
	 * a word the target wrote: the table grows only as far as the stacks
	 * received justify, and an id beyond goes to a hash table (so do ids
	 * run ahead by the STACK records lossy mode dropped).  One record must
	 * not make the collector allocate gigabytes, nor double a capacity
	 * past 2^31 to 0, forever.
	 */
	p->stacks_seen++;
	if (shim_id >= p->stack_map_cap && shim_id < 0x80000000u &&
	    shim_id < 2 * ((uint64_t)p->stacks_seen + STACK_MAP_SLACK)) {
		uint64_t ncap = p->stack_map_cap;
		uint32_t *nm;

		while (ncap <= shim_id)
			ncap *= 2;
		nm = realloc(p->stack_map, ncap * sizeof(*nm));
		if (!nm)
			return;
		memset(nm + p->stack_map_cap, 0, (ncap - p->stack_map_cap) * sizeof(*nm));
		p->stack_map = nm;
		p->stack_map_cap = (uint32_t)ncap;
	}
	if (shim_id < p->stack_map_cap) {
		p->stack_map[shim_id] = id;
		return;
	}
	if (!p->stack_far.slots && msc_u64map_init(&p->stack_far, 64))
		return;
	msc_u64map_put(&p->stack_far, (uint64_t)shim_id + 1, id);
}

static void handle_module(struct msc_collector *c, struct ring_cur *cur, const uint64_t *rec,
			  unsigned words)
{
	uint64_t base = rec[1], nseg = rec[3];
	unsigned id_len = (unsigned)(rec[2] >> 32), path_len = (unsigned)(rec[2] & 0xffffffff);
	const uint8_t *bytes;
	char path[4096];
	long mod;
	uint64_t i;

	if (nseg > 64 || 4 + 2 * nseg + (id_len + 7) / 8 + (path_len + 8) / 8 > words ||
	    path_len >= sizeof(path) || id_len > 64)
		return;
	bytes = (const uint8_t *)(rec + 4 + 2 * nseg);
	memcpy(path, bytes + ((id_len + 7) & ~7u), path_len);
	path[path_len] = '\0';
	mod = msc_stacks_module(c->stacks, path, bytes, id_len);
	if (mod < 0)
		return;
	for (i = 0; i < nseg; i++) {
		if (MSC_GROW(cur->build, cur->nbuild + 1, cur->capbuild, 64))
			return;
		cur->build[cur->nbuild++] = (struct modseg){ rec[4 + 2 * i], rec[5 + 2 * i], base,
							     (uint32_t)mod };
	}
}

/* Field by field: memcmp would read the structs' padding, never set. */
static bool same_segs(const struct modseg *a, const struct modseg *b, size_t na, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].base != b[i].base ||
		    a[i].module != b[i].module)
			return false;
	return true;
}

static void finish_modmap(struct msc_collector_private *p, struct ring_cur *cur)
{
	struct modmap *m = calloc(1, sizeof(*m));

	cur->building = false;
	if (!m)
		return;
	m->segs = malloc((cur->nbuild ? cur->nbuild : 1) * sizeof(*m->segs));
	if (!m->segs) {
		free(m);
		return;
	}
	memcpy(m->segs, cur->build, cur->nbuild * sizeof(*m->segs));
	m->n = cur->nbuild;
	qsort(m->segs, m->n, sizeof(*m->segs), cmp_seg);
	/* Share the previous map when nothing changed (most threads). */
	if (p->maps && same_segs(p->maps->segs, m->segs, p->maps->n, m->n)) {
		free(m->segs);
		free(m);
		cur->mods = p->maps;
		return;
	}
	m->next = p->maps;
	p->maps = m;
	cur->mods = m;
}

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
	[MSC_EV_HIDDEN] = 3,
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
			handle_stack(c, p, cur, MSC_EV_AUX(hdr), rec + 1, words - 1);
			break;
		case MSC_EV_MODULES:
			cur->building = true;
			cur->nbuild = 0;
			break;
		case MSC_EV_MODULE:
			if (cur->building)
				handle_module(c, cur, rec, words);
			break;
		case MSC_EV_MODULES_END:
			if (cur->building)
				finish_modmap(p, cur);
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
	if (!clock_ready(c, final || urgent))
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
	/* A min-heap of the rings by their next event's time: with 200
	 * threads' events interleaved, a scan of every ring per event was
	 * most of the collector's time. */
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

/* ---------------------------------------------------------------- loop */

static void take_samples(struct msc_collector *c)
{
	struct msc_collector_private *p;
	uint64_t now = raw_now(c);

	if (!c->sample_every_raw || now < c->next_sample_raw)
		return;
	c->next_sample_raw = now + c->sample_every_raw;
	for (p = c->procs; p; p = p->next) {
		char buf[128];
		unsigned long long size, resident;
		ssize_t n;

		if (p->statm_fd < 0 || p->ended)
			continue;
		n = pread(p->statm_fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* A process that has exited (a zombie) has no memory left to
		 * report: zeros are not a sample. */
		if (sscanf(buf, "%llu %llu", &size, &resident) != 2 || size == 0)
			continue;
		if (MSC_GROW(p->samples, p->nsamples + 1, p->samples_cap, 64))
			continue;
		p->samples[p->nsamples++] = (struct sample){ now, resident * (uint64_t)c->page_size };
	}
}

/*
 * The collector's pace.  Each round drains the rings up to the watermark.
 * A round that found much means the program allocates fast: the next one
 * starts at once, and the descriptors (a syscall) are looked at only once
 * a millisecond.  A round that found little naps, so that the next one
 * finds a batch: per-round costs (the poll, the watermark, reading every
 * ring's head) are then spread over many events, and the CPU goes to the
 * program meanwhile.  The nap is as long as the rings took to fill with
 * ROUND_FILL_BYTES at the pace of the last round, within [ROUND_NAP_NS,
 * the caller's timeout]: a fast program gets short naps, and its threads
 * keep cycling through the first 64 KiB of their rings (shim.h, ring_begin);
 * a slow one (a sampled recording: a record per few hundred allocations)
 * wakes us a few hundred times a second, not thousands, each wake-up a
 * context switch on a CPU the program may need.  A round that found
 * nothing naps twice as long as the last one did, from 2 ms up to 8 times
 * the caller's timeout or 100 ms: an idle program costs a few wake-ups a
 * second (a thread whose ring fills meanwhile wakes us with SIGURG, as do
 * a process that ends or connects, a live client and a scan request).  The
 * rings hold milliseconds of events at full speed.
 */
#define ROUND_BUSY_EVENTS 4096
#define ROUND_NAP_NS 200000ull
#define ROUND_CHECK_NS 1000000ull
#define ROUND_FILL_BYTES (16u * 1024)
/* Sampling, a record per BYTES allocated: the line each one writes is cold
 * in the program whatever the fill, so the naps are longer, the wake-ups
 * (each one a CPU taken from a program whose threads use them all) fewer:
 * 220 of the 2-thread storm's threads were preempted, not 40 unrecorded.
 * A ring still keeps to its first 64 KiB stretches. */
#define ROUND_FILL_SAMPLED (48u * 1024)
/* A process waits for its scan: the watermark's slack (50 us), and some. */
#define URGENT_NAP_NS 100000ull
/* The first nap of an idle spell: what a burst of full-speed recording
 * takes to fill a 64 KiB stretch of a ring several times over. */
#define ROUND_IDLE_NS 2000000ull
#define ROUND_IDLE_MAX_NS 100000000ull

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

void msc_collector_watch(struct msc_collector *c, int fd)
{
	c->watch_fd = fd;
}

static uint64_t clamp_ns(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Nanoseconds until the next rss sample is due (UINT64_MAX: none). */
static uint64_t sample_due_ns(struct msc_collector *c)
{
	uint64_t now;

	if (!c->sample_every_raw)
		return UINT64_MAX;
	now = raw_now(c);
	return now >= c->next_sample_raw ? 0 :
	       (uint64_t)((double)(c->next_sample_raw - now) * c->ns_per_raw);
}

int msc_collector_poll(struct msc_collector *c, int extra_fd, int timeout_ms)
{
	struct pollfd *pfd;
	struct msc_collector_private *p, *next, **owner;
	unsigned n = 0, i, first_proc, delivered = 0;
	int ret = 0, extra_at = -1, child_at = -1, watch_at = -1;
	uint64_t wait_ns = timeout_ms < 0 ? UINT64_MAX : (uint64_t)timeout_ms * 1000000ull, now;
	uint64_t since;
	struct timespec to;

	c->round_bytes = 0;
	c->urgent = false;
	for (p = c->procs; p; p = p->next)
		delivered += collect_pump(c, p, false);
	take_samples(c);
	now = msc_now_monotonic();
	since = now - c->last_round_ns;
	c->last_round_ns = now;
	if (delivered >= ROUND_BUSY_EVENTS) {
		if (now < c->next_check_ns)
			return 0;
		wait_ns = 0;
	} else if (delivered && wait_ns > ROUND_NAP_NS) {
		/* Time to fill ROUND_FILL_BYTES at the last round's pace. */
		uint64_t fill = c->o.sample ? ROUND_FILL_SAMPLED : ROUND_FILL_BYTES;
		uint64_t nap = c->round_bytes >= fill ? ROUND_NAP_NS :
			       since * fill / (c->round_bytes | 1);

		wait_ns = clamp_ns(nap, ROUND_NAP_NS, wait_ns);
	} else if (!delivered && !c->round_bytes && wait_ns != UINT64_MAX &&
		   wait_ns >= ROUND_IDLE_NS) {
		/* Nothing: each such round naps twice as long as the last,
		 * from ROUND_IDLE_NS up to 8 timeouts (ROUND_IDLE_MAX_NS at
		 * most, the timeout at least).  Not for a caller that polls
		 * faster (remote(): a thread's work to notice). */
		uint64_t most = clamp_ns(8 * wait_ns, wait_ns, ROUND_IDLE_MAX_NS);
		uint64_t nap = c->idle_nap_ns ? 2 * c->idle_nap_ns : ROUND_IDLE_NS;

		wait_ns = c->idle_nap_ns = nap < most ? nap : most;
	}
	if (delivered || c->round_bytes)
		c->idle_nap_ns = 0;
	if (!c->calibrated && c->procs) {
		/* events wait for the clock: back when it is ready */
		uint64_t left = calibrate_left(c, now);

		wait_ns = left < wait_ns ? left : wait_ns;
	}
	if (c->urgent && wait_ns > URGENT_NAP_NS)
		wait_ns = URGENT_NAP_NS;	/* its request is about to be old enough */
	if (wait_ns > ROUND_NAP_NS) {
		/* The rss samples keep their pace when the naps are long. */
		wait_ns = clamp_ns(sample_due_ns(c), ROUND_NAP_NS, wait_ns);
	}
	c->next_check_ns = now + ROUND_CHECK_NS;
	if (c->pfd_cap < 4 + (size_t)c->nprocs) {
		size_t cap = 2 * (4 + (size_t)c->nprocs);
		struct pollfd *np = realloc(c->pfd, cap * sizeof(*np));
		struct msc_collector_private **no;

		if (np)
			c->pfd = np;
		no = np ? realloc(c->owner, cap * sizeof(*no)) : NULL;
		if (!no) {
			/* Out of memory: wait as asked, try again next time. */
			poll(NULL, 0, timeout_ms);
			return 0;
		}
		c->owner = no;
		c->pfd_cap = cap;
	}
	pfd = c->pfd;
	owner = c->owner;
	pfd[n++] = (struct pollfd){ c->listen_fd, POLLIN, 0 };
	if (extra_fd >= 0) {
		extra_at = (int)n;
		pfd[n++] = (struct pollfd){ extra_fd, POLLIN, 0 };
	}
	if (c->child_pidfd >= 0 && !c->child_done) {
		child_at = (int)n;
		pfd[n++] = (struct pollfd){ c->child_pidfd, POLLIN, 0 };
	}
	if (c->watch_fd >= 0) {
		watch_at = (int)n;
		pfd[n++] = (struct pollfd){ c->watch_fd, POLLIN, 0 };
	}
	first_proc = n;
	for (p = c->procs; p; p = next) {
		next = p->next;
		if (p->pub.pid == c->child_pid)
			continue;
		if (p->pidfd < 0) {
			/* No pidfd (an old kernel): look whether it is gone. */
			if (kill(p->pub.pid, 0) < 0 && errno == ESRCH)
				collect_end_session(c, p, "exit", 0, false);
			continue;
		}
		owner[n] = p;
		pfd[n++] = (struct pollfd){ p->pidfd, POLLIN, 0 };
	}
	to.tv_sec = (time_t)(wait_ns / 1000000000ull);
	to.tv_nsec = (long)(wait_ns % 1000000000ull);
	if (ppoll(pfd, n, wait_ns == UINT64_MAX ? NULL : &to, NULL) <= 0) {
		/* Without a child pidfd (old kernels), reap by polling. */
		if (c->child_pidfd < 0)
			collect_reap_child(c);
		return 0;
	}
	if (extra_at >= 0 && (pfd[extra_at].revents & POLLIN))
		ret |= MSC_POLL_EXTRA;
	if (watch_at >= 0 && (pfd[watch_at].revents & POLLIN))
		ret |= MSC_POLL_WATCH;
	/* Ends first, then new connections (which may end an exec'ed image). */
	for (i = first_proc; i < n; i++)
		if (pfd[i].revents & (POLLIN | POLLHUP))
			collect_end_session(c, owner[i], "exit", 0, false);
	if ((child_at >= 0 && (pfd[child_at].revents & POLLIN)) || c->child_pidfd < 0)
		collect_reap_child(c);
	if (pfd[0].revents & POLLIN)
		for (;;) {
			struct pollfd lp = { c->listen_fd, POLLIN, 0 };

			if (poll(&lp, 1, 0) <= 0)
				break;
			collect_accept_one(c);
		}
	return ret;
}

void msc_collector_finish(struct msc_collector *c, const char *reason)
{
	struct msc_collector_private *p;

	for (p = c->procs; p; p = p->next)
		if (p->ctl)
			__atomic_store_n(&p->ctl->stop, 1, __ATOMIC_RELEASE);
	while (c->procs)
		collect_end_session(c, c->procs, reason, 0, false);
}

void msc_collector_free(struct msc_collector *c)
{
	if (!c)
		return;
	while (c->procs) {
		struct msc_collector_private *p = c->procs;

		c->procs = p->next;
		collect_free_session(p);
	}
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->child_pidfd >= 0)
		close(c->child_pidfd);
	if (c->sock_path[0])
		unlink(c->sock_path);
	if (c->dir[0])
		rmdir(c->dir);
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	free(c->pfd);
	free(c->owner);
	free(c);
}
