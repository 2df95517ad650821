/* SPDX-License-Identifier: MIT */
/* ms-top's capture: every process's figures at one refresh (see top.h). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "msc_live.h"
#include "msc_util.h"
#include "top.h"

#define SLOTS_PER_CHUNK 64

int top_init(struct top *t, const char *proc_root)
{
	struct rlimit rl;
	int i;

	memset(t, 0, sizeof(*t));
	if (msc_procfs_init(&t->fs, proc_root))
		return -ENAMETOOLONG;
	for (i = 0; i < 2; i++)
		msc_arena_init(&t->samples[i].arena);
	t->cur = &t->samples[0];
	t->prev = &t->samples[1];
	t->window = 60ull * 1000000000ull;
	t->live_timeout_ms = 250;
	t->self_pid = (int)getpid();
	if (msc_u64map_init(&t->by_pid, 512))
		return -ENOMEM;
	msc_reader_init_mem(&t->live_reader, "", 0, "live");
	if (msc_stackdefs_init(&t->live_defs))
		return -ENOMEM;
	/*
	 * Two descriptors per process stay open (stat, smaps_rollup): ask for
	 * as many as we may.  Past the limit, files are opened at each read.
	 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return 0;
}

static void close_files(struct top_proc *p)
{
	if (p->stat_fd >= 0)
		close(p->stat_fd);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	p->stat_fd = p->mem_fd = -1;
}

void top_release(struct top *t)
{
	size_t i, j;
	int k;

	for (i = 0; i < t->nchunks; i++) {
		for (j = 0; j < SLOTS_PER_CHUNK; j++)
			if (t->chunks[i][j].in_use)
				close_files(&t->chunks[i][j]);
		free(t->chunks[i]);
	}
	free(t->chunks);
	msc_u64map_release(&t->by_pid);
	for (k = 0; k < 2; k++)
		msc_arena_release(&t->samples[k].arena);
	if (t->proc_dir)
		closedir(t->proc_dir);
	if (t->live_dir)
		closedir(t->live_dir);
	free(t->users);
	free(t->live_buf);
	msc_reader_release(&t->live_reader);
	msc_stackdefs_release(&t->live_defs);
	msc_wscratch_release(&t->wrappers);
	free(t->sel.pids);
	msc_procfs_release(&t->fs);
}

/* ------------------------------------------------------------ the pool */

static struct top_proc *slot_new(struct top *t)
{
	struct top_proc *p = t->free_slots;

	if (!p) {
		struct top_proc *chunk;
		size_t i;

		if (MSC_GROW(t->chunks, t->nchunks + 1, t->chunks_cap, 16))
			return NULL;
		chunk = calloc(SLOTS_PER_CHUNK, sizeof(*chunk));
		if (!chunk)
			return NULL;
		t->chunks[t->nchunks++] = chunk;
		for (i = SLOTS_PER_CHUNK; i-- > 0;) {
			chunk[i].next_free = t->free_slots;
			t->free_slots = &chunk[i];
		}
		p = t->free_slots;
	}
	t->free_slots = p->next_free;
	/* history and names are written before they are read */
	p->next_free = NULL;
	p->in_use = true;
	p->stat_fd = p->mem_fd = -1;
	p->mem_is_status = false;
	p->kthread = false;
	p->heap = NULL;
	p->heap_round = 0;
	p->mem_ts = 0;
	p->live_round = 0;
	p->comm[0] = p->cmd[0] = p->user[0] = '\0';
	t->nprocs++;
	return p;
}

static void slot_free(struct top *t, struct top_proc *p)
{
	close_files(p);
	msc_u64map_del(&t->by_pid, (uint64_t)p->pid, NULL);
	p->in_use = false;
	p->next_free = t->free_slots;
	t->free_slots = p;
	t->nprocs--;
}

/* ------------------------------------------------------------ users */

const char *top_user_name(struct top *t, unsigned uid)
{
	struct top_user *u;
	struct passwd pw, *res = NULL;
	char buf[1024];
	size_t i;

	for (i = 0; i < t->nusers; i++)
		if (t->users[i].uid == uid)
			return t->users[i].name;
	if (MSC_GROW(t->users, t->nusers + 1, t->users_cap, 16))
		return "?";
	u = &t->users[t->nusers];
	u->uid = uid;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(u->name, sizeof(u->name), "%s", pw.pw_name);
	else
		snprintf(u->name, sizeof(u->name), "%u", uid);
	t->nusers++;
	return u->name;
}

/* ------------------------------------------------------------ selection */

bool top_selected(const struct top *t, const struct top_proc *p)
{
	size_t i;

	if (p->kthread)
		return false;
	if (t->sel.by_user && p->uid != t->sel.uid)
		return false;
	if (!t->sel.npids)
		return true;
	for (i = 0; i < t->sel.npids; i++)
		if (t->sel.pids[i] == p->pid)
			return true;
	return false;
}

/* ------------------------------------------------------------ reading */

static void cmd_arg(const char *arg, size_t len, void *ctx)
{
	struct top_proc *p = ctx;
	size_t have = strlen(p->cmd), i;

	if (have && have + 1 < sizeof(p->cmd))
		p->cmd[have++] = ' ';
	for (i = 0; i < len && have + 1 < sizeof(p->cmd); i++)
		p->cmd[have++] = (arg[i] == '\n' || arg[i] == '\t') ? ' ' : arg[i];
	p->cmd[have] = '\0';
}

static void read_cmdline(struct top *t, struct top_proc *p)
{
	p->cmd[0] = '\0';
	msc_proc_cmdline(&t->fs, p->pid, cmd_arg, p);
	if (!p->cmd[0])	/* no arguments: a kernel thread, a zombie */
		snprintf(p->cmd, sizeof(p->cmd), "[%s]", p->comm);
}

/* stat through the open file, or by path when none could be kept. */
static int read_stat(struct top *t, struct top_proc *p, struct msc_pstat *st)
{
	long len;

	if (p->stat_fd < 0)
		return msc_proc_stat(&t->fs, p->pid, st, NULL);
	len = msc_proc_reread(&t->fs, p->stat_fd);
	if (len < 0)
		return (int)len;
	return msc_proc_parse_stat(&t->fs, p->pid, st, NULL);
}

/*
 * The memory file: smaps_rollup; status for another user's process (its
 * rss and swap: pss needs the access ptrace would); none before Linux 4.14,
 * which has no smaps_rollup: msc_proc_rollup() then sums smaps at each read.
 */
static void open_mem(struct top *t, struct top_proc *p)
{
	int fd = msc_proc_open(&t->fs, p->pid, "smaps_rollup");

	p->mem_is_status = false;
	if (fd == -EACCES || fd == -EPERM) {
		fd = msc_proc_open(&t->fs, p->pid, "status");
		p->mem_is_status = true;
	}
	p->mem_fd = fd >= 0 ? fd : -1;
}

static int read_mem(struct top *t, struct top_proc *p, struct top_entry *e)
{
	struct msc_memcounts mc;
	struct msc_pstatus ps;
	long len;
	int ret;

	if (p->mem_fd < 0) {
		/* no descriptor to spare: by path */
		ret = msc_proc_rollup(&t->fs, p->pid, &mc, NULL, NULL);
		if (ret == -EACCES || ret == -EPERM) {
			ret = msc_proc_status(&t->fs, p->pid, &ps, NULL);
			goto status;
		}
		goto rollup;
	}
	len = msc_proc_reread(&t->fs, p->mem_fd);
	if (len == -ESRCH && !p->mem_is_status && e->state != 'Z') {
		/* smaps_rollup of the image before an execve: open it again */
		close(p->mem_fd);
		open_mem(t, p);
		if (p->mem_fd < 0)
			return -ESRCH;
		len = msc_proc_reread(&t->fs, p->mem_fd);
	}
	if (len < 0)
		return (int)len;
	if (p->mem_is_status) {
		ret = msc_proc_parse_status(&t->fs, p->pid, &ps, NULL);
		goto status;
	}
	ret = msc_proc_parse_rollup(&t->fs, len, &mc);
rollup:
	if (ret)
		return ret;
	/* Documentation/filesystems/proc.rst: USS is the private pages */
	e->rss = mc.rss;
	e->pss = mc.pss;
	e->uss = mc.private_clean + mc.private_dirty;
	e->swap = mc.swap;
	e->has_pss = true;
	e->has_mem = true;
	return 0;
status:
	if (ret)
		return ret;
	e->rss = ps.vm_rss;
	e->swap = ps.vm_swap;
	e->has_mem = ps.has_mem;
	return 0;
}

/* A process seen for the first time: its identity, and its files opened. */
static struct top_proc *discover(struct top *t, int pid, struct msc_pstat *st)
{
	struct top_proc *p = slot_new(t);
	struct msc_pstatus ps;
	int ret;

	if (!p)
		return NULL;
	p->pid = pid;
	p->stat_fd = msc_proc_open(&t->fs, pid, "stat");
	if (p->stat_fd < 0 && p->stat_fd != -EMFILE && p->stat_fd != -ENFILE)
		goto gone;
	if (p->stat_fd < 0)
		p->stat_fd = -1;
	ret = read_stat(t, p, st);
	if (ret)
		goto gone;
	p->starttime = st->starttime;
	p->kthread = (st->flags & MSC_PF_KTHREAD) != 0;
	snprintf(p->comm, sizeof(p->comm), "%s", st->comm);
	p->first_round = t->round;
	if (msc_u64map_put(&t->by_pid, (uint64_t)pid, (uint64_t)(uintptr_t)p))
		goto gone;
	if (p->kthread) {
		close_files(p);		/* nothing to read again */
		return p;
	}
	if (msc_proc_status(&t->fs, pid, &ps, NULL) == 0) {
		p->uid = ps.euid;
		snprintf(p->user, sizeof(p->user), "%s", top_user_name(t, p->uid));
	} else {
		p->uid = TOP_NO_UID;	/* unknown, not root */
		snprintf(p->user, sizeof(p->user), "?");
	}
	if (!top_selected(t, p))
		return p;
	read_cmdline(t, p);
	open_mem(t, p);
	return p;
gone:
	close_files(p);
	p->in_use = false;
	p->next_free = t->free_slots;
	t->free_slots = p;
	t->nprocs--;
	return NULL;
}

/* Room for one more entry in the sample (its arena grows only at first). */
static struct top_entry *new_entry(struct top_sample *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 512;
		struct top_entry *np = msc_arena_alloc(&s->arena, cap * sizeof(*np));

		if (!np)
			return NULL;
		if (s->n)
			memcpy(np, s->procs, s->n * sizeof(*np));
		s->procs = np;
		s->cap = cap;
	}
	return &s->procs[s->n++];
}

/* Whether the figures of p's last memory read stand at now (TOP_MEM_MAX_AGE). */
static bool mem_fresh(const struct top_proc *p, uint64_t rss, uint64_t now)
{
	uint64_t age = now - p->mem_ts, idle = p->mem_cost * TOP_MEM_IDLE_PACE;

	if (!p->mem_ts)
		return false;
	if (rss != p->stat_rss)
		return p->mem_cost >= TOP_MEM_PACE_MIN && age < p->mem_cost * TOP_MEM_BUSY_PACE;
	return age < TOP_MEM_MAX_AGE || age < idle;
}

static int visit(int pid, void *arg)
{
	struct top *t = arg;
	struct top_sample *s = t->cur;
	uint64_t *slot = msc_u64map_get(&t->by_pid, (uint64_t)pid);
	struct top_proc *p = slot ? (struct top_proc *)(uintptr_t)*slot : NULL;
	struct top_entry *e;
	struct msc_pstat st;
	int ret, tries;

	for (tries = 0; tries < 2; tries++) {
		if (!p) {
			p = discover(t, pid, &st);
			if (!p)
				return 0;	/* gone already, or out of memory */
			break;
		}
		p->seen_round = t->round;
		if (p->kthread || !top_selected(t, p))
			return 0;
		ret = read_stat(t, p, &st);
		/* gone, and the pid is used again: someone new */
		if (ret == -ESRCH || (ret == 0 && st.starttime != p->starttime)) {
			slot_free(t, p);
			p = NULL;
			continue;
		}
		if (ret)
			return 0;
		if (strcmp(st.comm, p->comm) != 0) {
			/* it called execve: a new name, a new command line */
			snprintf(p->comm, sizeof(p->comm), "%s", st.comm);
			read_cmdline(t, p);
			p->mem_ts = 0;
		}
		break;
	}
	if (!p)
		return 0;
	p->seen_round = t->round;
	if (p->kthread || !top_selected(t, p))
		return 0;
	e = new_entry(s);
	if (!e)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->pid = pid;
	e->ppid = st.ppid;
	e->state = st.state;
	if (st.state == 'Z' || st.state == 'X') {
		p->mem_ts = 0;
	} else if (mem_fresh(p, st.rss, s->ts)) {
		/* the figures of the last read (see TOP_MEM_MAX_AGE) */
		e->rss = p->mem.rss;
		e->pss = p->mem.pss;
		e->uss = p->mem.uss;
		e->swap = p->mem.swap;
		e->has_pss = p->mem.has_pss;
		e->has_mem = p->mem.has_mem;
	} else {
		uint64_t t0 = msc_now_thread_cpu();

		ret = read_mem(t, p, e);
		if (ret == -ESRCH) {
			/* it ended between the two reads */
			s->n--;
			return 0;
		}
		p->stat_rss = st.rss;
		p->mem_ts = ret ? 0 : s->ts;
		p->mem_cost = msc_now_thread_cpu() - t0;
		p->mem.rss = e->rss;
		p->mem.pss = e->pss;
		p->mem.uss = e->uss;
		p->mem.swap = e->swap;
		p->mem.has_pss = e->has_pss;
		p->mem.has_mem = e->has_mem;
	}
	if (p->first_round == t->round)
		p->first_rss = e->rss;
	p->hist[t->round % TOP_HIST] = e->rss;
	return 0;
}

static int mark_recorded(int pid, void *arg)
{
	struct top *t = arg;
	uint64_t *slot = msc_u64map_get(&t->by_pid, (uint64_t)pid);

	if (slot)
		((struct top_proc *)(uintptr_t)*slot)->live_round = t->round;
	return 0;
}

/*
 * The refresh the recent growth counts from: the last one at least a
 * window ago, or the oldest one kept when none is that old.
 */
static unsigned window_start(const struct top *t)
{
	uint64_t now = t->round_ts[t->round % TOP_HIST];
	unsigned r = t->round, oldest = t->round >= TOP_HIST ? t->round - TOP_HIST + 1 : 1;

	while (r > oldest && now - t->round_ts[r % TOP_HIST] < t->window)
		r--;
	return r;
}

int top_capture(struct top *t)
{
	struct top_sample *s = t->prev;
	uint64_t dt = 0;
	unsigned from;
	size_t i, j;
	int ret;

	t->prev = t->cur;
	t->cur = s;
	msc_arena_reset(&s->arena);
	s->procs = NULL;
	s->n = s->cap = 0;
	s->recorded = 0;
	s->round = ++t->round;
	s->ts = msc_now_monotonic();
	if (!t->t0)
		t->t0 = s->ts;
	t->round_ts[s->round % TOP_HIST] = s->ts;
	s->has_meminfo = msc_proc_meminfo(&t->fs, &s->mi, NULL) == 0;

	/* a first guess from the last count, so that the array is made once */
	s->cap = t->prev->n + 64;
	s->procs = msc_arena_alloc(&s->arena, s->cap * sizeof(*s->procs));
	if (!s->procs)
		return -ENOMEM;
	if (t->sel.npids) {
		/* only those: no need to list every process */
		for (i = 0; i < t->sel.npids; i++) {
			ret = visit(t->sel.pids[i], t);
			if (ret)
				return ret;
		}
	} else {
		ret = msc_proc_foreach_pid_at(&t->fs, &t->proc_dir, visit, t);
		if (ret)
			return ret;
	}
	/* the processes that were not seen have ended */
	for (i = 0; i < t->nchunks; i++)
		for (j = 0; j < SLOTS_PER_CHUNK; j++) {
			struct top_proc *p = &t->chunks[i][j];

			if (p->in_use && p->seen_round != t->round)
				slot_free(t, p);
		}

	/* the recorded ones: their live heaps */
	if (strcmp(t->fs.root, "/proc") == 0)
		msc_live_foreach(&t->live_dir, mark_recorded, t);
	if (t->prev->round && t->prev->round + 1 == s->round)
		dt = s->ts - t->prev->ts;
	from = window_start(t);
	for (i = 0; i < s->n; i++) {
		struct top_entry *e = &s->procs[i];
		struct top_proc *p = e->p;
		unsigned r0 = from > p->first_round ? from : p->first_round;

		e->growth = (int64_t)e->rss - (int64_t)p->first_rss;
		e->recent = (int64_t)e->rss - (int64_t)p->hist[r0 % TOP_HIST];
		if (p->live_round != t->round || !e->has_mem)
			continue;
		e->heap = top_heap_read(t, s, e->pid,
					p->heap_round + 1 == s->round ? p->heap : NULL, dt);
		if (e->heap) {
			p->heap = e->heap;
			p->heap_round = s->round;
			s->recorded++;
		}
	}
	return 0;
}

struct top_entry *top_find(const struct top_sample *s, int pid, uint64_t starttime)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->procs[i].pid == pid && s->procs[i].p->starttime == starttime)
			return &s->procs[i];
	return NULL;
}

size_t top_history(const struct top_proc *p, uint64_t *out, size_t max)
{
	unsigned last = p->seen_round, first = p->first_round, r;
	size_t n;

	if (last - first + 1 > TOP_HIST)
		first = last - TOP_HIST + 1;
	if (last - first + 1 > max)
		first = last - (unsigned)max + 1;
	for (n = 0, r = first; r <= last; r++)
		out[n++] = p->hist[r % TOP_HIST];
	return n;
}
