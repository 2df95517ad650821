/* SPDX-License-Identifier: MIT */
/* Process snapshots as records: see msc_snap.h. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "msc_format.h"
#include "msc_hash.h"
#include "msc_snap.h"
#include "msc_stream.h"

void msc_snapper_init(struct msc_snapper *s, struct msc_procfs *fs, struct msc_writer *w,
		      enum msc_snap_maps maps)
{
	memset(s, 0, sizeof(*s));
	s->fs = fs;
	s->w = w;
	s->maps = maps;
	msc_arena_init(&s->arena);
}

void msc_snapper_release(struct msc_snapper *s)
{
	msc_arena_release(&s->arena);
}

const char *msc_mapping_group(const struct msc_mapping *m, const char **kind)
{
	const char *p = m->path;

	if (!p[0]) {
		*kind = "anon";
		return "[anon]";
	}
	if (p[0] == '[') {
		if (strcmp(p, "[heap]") == 0) {
			*kind = "heap";
			return p;
		}
		if (strncmp(p, "[stack", 6) == 0) {
			*kind = "stack";	/* "[stack:TID]" before Linux 4.5 */
			return "[stack]";
		}
		if (strncmp(p, "[anon_shmem:", 12) == 0) {
			*kind = "shmem";
			return p;
		}
		if (strncmp(p, "[anon:", 6) == 0) {
			*kind = "anon";		/* named with PR_SET_VMA_ANON_NAME */
			return p;
		}
		*kind = "special";		/* [vdso] [vvar] [vsyscall] [uprobes] */
		return p;
	}
	if (strncmp(p, "/memfd:", 7) == 0 || strncmp(p, "/SYSV", 5) == 0 ||
	    strncmp(p, "/dev/shm/", 9) == 0 || strcmp(p, "/dev/zero") == 0) {
		*kind = "shmem";
		return p;
	}
	*kind = "file";
	return p;
}

static void write_counts(struct msc_writer *w, const struct msc_memcounts *mc)
{
	msc_w_u64(w, "pss", mc->pss);
	if (mc->has_pss_split) {
		msc_w_u64(w, "pss_anon", mc->pss_anon);
		msc_w_u64(w, "pss_file", mc->pss_file);
		msc_w_u64(w, "pss_shmem", mc->pss_shmem);
	}
	msc_w_u64(w, "private_clean", mc->private_clean);
	msc_w_u64(w, "private_dirty", mc->private_dirty);
	msc_w_u64(w, "shared_clean", mc->shared_clean);
	msc_w_u64(w, "shared_dirty", mc->shared_dirty);
	msc_w_u64(w, "anonymous", mc->anonymous);
	msc_w_u64(w, "swap_pss", mc->swap_pss);
	if (mc->locked)
		msc_w_u64(w, "locked", mc->locked);
}

struct walk {
	struct msc_snapper *s;
	int pid;
	struct msc_map_group *groups;
	size_t ngroups, cap;
	struct msc_strmap index;	/* group name -> index + 1 */
};

static int add_to_group(const struct msc_mapping *m, void *arg)
{
	struct walk *wk = arg;
	const char *kind, *name = msc_mapping_group(m, &kind);
	uintptr_t at = (uintptr_t)msc_strmap_get(&wk->index, name);
	struct msc_map_group *g = at ? &wk->groups[at - 1] : NULL;

	if (!g) {
		if (wk->ngroups == wk->cap) {
			size_t ncap = wk->cap ? wk->cap * 2 : 64;
			struct msc_map_group *ng = msc_arena_alloc(&wk->s->arena, ncap * sizeof(*ng));

			if (!ng)
				return -ENOMEM;
			if (wk->ngroups)
				memcpy(ng, wk->groups, wk->ngroups * sizeof(*ng));
			wk->groups = ng;
			wk->cap = ncap;
		}
		g = &wk->groups[wk->ngroups];
		memset(g, 0, sizeof(*g));
		g->name = msc_arena_strdup(&wk->s->arena, name);
		if (!g->name)
			return -ENOMEM;
		g->kind = kind;
		if (msc_strmap_put(&wk->index, g->name, (void *)(uintptr_t)++wk->ngroups))
			return -ENOMEM;
	}
	g->count++;
	msc_memcounts_add(&g->mem, &m->mem);
	return 0;
}

/* smaps, summed by group into wk->groups (in the snapper's arena). */
static int walk_groups(struct walk *wk)
{
	int ret;

	if (msc_strmap_init(&wk->index, 64))
		return -ENOMEM;
	ret = msc_proc_smaps(wk->s->fs, wk->pid, add_to_group, wk, NULL);
	msc_strmap_release(&wk->index);
	return ret;
}

int msc_snap_groups(struct msc_snapper *s, int pid, const struct msc_map_group **groups,
		    size_t *n, struct msc_err *err)
{
	struct walk wk = { .s = s, .pid = pid };
	int ret;

	msc_arena_reset(&s->arena);
	ret = walk_groups(&wk);
	if (ret && ret != -ENODATA)
		return msc_err_set(err, ret, "pid %d: %s", pid,
				   ret == -ESRCH ? "no such process" : strerror(-ret));
	*groups = wk.groups;
	*n = wk.ngroups;
	return 0;
}

void msc_snap_write_group(struct msc_writer *w, int pid, const struct msc_map_group *g,
			  const uint64_t *ts)
{
	msc_w_record(w, MSC_R_MAPPING);
	msc_w_i64(w, "pid", pid);
	if (ts)
		msc_w_u64(w, "ts", *ts);
	msc_w_str(w, "name", g->name);
	msc_w_str(w, "kind", g->kind);
	msc_w_u64(w, "count", g->count);
	msc_w_u64(w, "size", g->mem.size);
	msc_w_u64(w, "rss", g->mem.rss);
	msc_w_u64(w, "swap", g->mem.swap);
	write_counts(w, &g->mem);
	msc_w_end(w);
}

static int write_mapping(const struct msc_mapping *m, void *arg)
{
	struct walk *wk = arg;
	struct msc_writer *w = wk->s->w;
	const char *kind, *name = msc_mapping_group(m, &kind);

	msc_w_record(w, MSC_R_MAPPING);
	msc_w_i64(w, "pid", wk->pid);
	msc_w_str(w, "name", m->path[0] ? m->path : name);
	msc_w_str(w, "kind", kind);
	msc_w_hex(w, "start", m->start);
	msc_w_hex(w, "end", m->end);
	msc_w_str(w, "perms", m->perms);
	msc_w_u64(w, "offset", m->offset);
	msc_w_u64(w, "inode", m->inode);
	if (m->deleted)
		msc_w_bool(w, "deleted", true);
	msc_w_u64(w, "size", m->end - m->start);
	msc_w_u64(w, "rss", m->mem.rss);
	msc_w_u64(w, "swap", m->mem.swap);
	write_counts(w, &m->mem);
	msc_w_end(w);
	return 0;
}

static void cmdline_arg(const char *arg, size_t len, void *w)
{
	msc_w_strn(w, NULL, arg, len);
}

static const char *reason(int code)
{
	switch (code) {
	case -ENODATA:
		return "no memory map";
	default:
		return strerror(-code);
	}
}

/* Appends "what: why" to the list of figures that could not be read. */
static void add_missing(char *missing, size_t size, const char *what, int code)
{
	size_t len = strlen(missing);

	snprintf(missing + len, size - len, "%s%s: %s", len ? ", " : "", what, reason(code));
}

int msc_snap_process(struct msc_snapper *s, int pid, struct msc_err *err)
{
	struct msc_writer *w = s->w;
	struct msc_pstat st;
	struct msc_pstatus ps;
	struct msc_memcounts mc;
	struct walk wk = { .s = s, .pid = pid };
	bool summed = false, have_status, have_rollup, partial = false;
	char missing[256] = "";
	int ret, rret;

	msc_arena_reset(&s->arena);
	ret = msc_proc_stat(s->fs, pid, &st, err);
	if (ret) {
		if (ret != -EINVAL)
			msc_err_set(err, ret, "pid %d: %s", pid,
				    ret == -ESRCH ? "no such process" : strerror(-ret));
		return ret;
	}
	if (s->skip_kthreads && (st.flags & MSC_PF_KTHREAD))
		return 0;
	ret = msc_proc_status(s->fs, pid, &ps, NULL);
	have_status = ret == 0;
	if (!have_status) {
		if (ret == -ESRCH)
			return msc_err_set(err, ret, "pid %d: no such process", pid);
		partial = true;
		add_missing(missing, sizeof(missing), "status", ret);
	}
	/* smaps_rollup right after status, so that rss and pss agree. */
	rret = msc_proc_rollup(s->fs, pid, &mc, &summed, NULL);
	have_rollup = rret == 0;
	if (!have_rollup && rret != -ENODATA) {
		if (rret == -ESRCH)
			return msc_err_set(err, rret, "pid %d: no such process", pid);
		partial = true;
		add_missing(missing, sizeof(missing), "smaps_rollup", rret);
	}

	msc_w_record(w, MSC_R_PROCESS);
	msc_w_i64(w, "pid", pid);
	msc_w_i64(w, "ppid", st.ppid);
	msc_w_str(w, "comm", st.comm);
	msc_w_arr(w, "cmdline");
	msc_proc_cmdline(s->fs, pid, cmdline_arg, w);
	msc_w_arr_end(w);
	msc_w_strn(w, "state", &st.state, 1);
	msc_w_u64(w, "starttime", st.starttime);
	msc_w_i64(w, "threads", st.num_threads);
	if (st.flags & MSC_PF_KTHREAD)
		msc_w_bool(w, "kthread", true);
	if (have_status) {
		msc_w_u64(w, "uid", ps.uid);
		if (ps.has_mem) {
			msc_w_u64(w, "rss", ps.vm_rss);
			msc_w_u64(w, "hwm", ps.vm_hwm);
			msc_w_u64(w, "vsize", ps.vm_size);
			if (ps.has_rss_split) {
				msc_w_u64(w, "rss_anon", ps.rss_anon);
				msc_w_u64(w, "rss_file", ps.rss_file);
				msc_w_u64(w, "rss_shmem", ps.rss_shmem);
			}
			msc_w_u64(w, "swap", ps.vm_swap);
		}
	} else {
		/* stat's rss (pages) is still known. */
		msc_w_u64(w, "rss", st.rss);
		msc_w_u64(w, "vsize", st.vsize);
	}
	if (have_rollup)
		write_counts(w, &mc);
	/* Only when figures were summed: a kernel thread has none. */
	if (have_rollup && summed)
		msc_w_bool(w, "rollup_from_smaps", true);
	if (partial)
		msc_w_str(w, "missing", missing);
	msc_w_end(w);
	s->processes++;

	if (s->maps != MSC_SNAP_MAPS_NONE && (!have_status || ps.has_mem)) {
		size_t i;

		if (s->maps == MSC_SNAP_MAPS_ALL) {
			ret = msc_proc_smaps(s->fs, pid, write_mapping, &wk, NULL);
		} else {
			ret = walk_groups(&wk);
		}
		if (ret && ret != -ENODATA && ret != -ESRCH) {
			partial = true;
			add_missing(missing, sizeof(missing), "smaps", ret);
		}
		for (i = 0; s->maps == MSC_SNAP_MAPS_GROUPED && i < wk.ngroups; i++)
			msc_snap_write_group(w, pid, &wk.groups[i], NULL);
	}
	if (partial) {
		s->partial++;
		msc_err_set(err, 1, "pid %d: %s (figures omitted)", pid, missing);
		return 1;
	}
	return 0;
}

int msc_snap_meminfo(struct msc_snapper *s, struct msc_err *err)
{
	struct msc_writer *w = s->w;
	struct msc_meminfo mi;
	int ret = msc_proc_meminfo(s->fs, &mi, err);

	if (ret)
		return ret;
	msc_w_record(w, MSC_R_MEMINFO);
	msc_w_u64(w, "total", mi.total);
	msc_w_u64(w, "free", mi.free);
	if (mi.has_available)
		msc_w_u64(w, "available", mi.available);
	msc_w_u64(w, "buffers", mi.buffers);
	msc_w_u64(w, "cached", mi.cached);
	msc_w_u64(w, "shmem", mi.shmem);
	msc_w_u64(w, "anon_pages", mi.anon_pages);
	msc_w_u64(w, "mapped", mi.mapped);
	msc_w_u64(w, "slab", mi.slab);
	msc_w_u64(w, "sreclaimable", mi.sreclaimable);
	msc_w_u64(w, "kernel_stack", mi.kernel_stack);
	msc_w_u64(w, "page_tables", mi.page_tables);
	msc_w_u64(w, "swap_total", mi.swap_total);
	msc_w_u64(w, "swap_free", mi.swap_free);
	msc_w_u64(w, "committed_as", mi.committed_as);
	msc_w_u64(w, "commit_limit", mi.commit_limit);
	msc_w_end(w);
	return 0;
}

/* --------------------------------------------------------------- stream */

void msc_snap_write_header(struct msc_snapper *s, const int *pids, int n, bool all,
			   const char *proc)
{
	struct msc_writer *w = s->w;
	int i;

	msc_stream_header_begin(w, "ms-snap", "snapshot");
	if (n == 1)
		msc_w_i64(w, "pid", pids[0]);
	msc_w_arr(w, "pids");
	for (i = 0; i < n; i++)
		msc_w_i64(w, NULL, pids[i]);
	msc_w_arr_end(w);
	msc_w_obj(w, "options");
	msc_w_bool(w, "all", all);
	msc_w_str(w, "maps", s->maps == MSC_SNAP_MAPS_ALL ? "all" :
			     s->maps == MSC_SNAP_MAPS_GROUPED ? "grouped" : "none");
	if (proc)
		msc_w_str(w, "proc", s->fs->root);
	msc_w_obj_end(w);
	msc_w_end(w);
}

void msc_snap_write_end(struct msc_snapper *s, unsigned partial, unsigned unreadable)
{
	msc_w_record(s->w, MSC_R_END);
	msc_w_str(s->w, "reason", "complete");
	msc_w_u64(s->w, "processes", s->processes);
	msc_w_u64(s->w, "partial", partial);
	msc_w_u64(s->w, "unreadable", unreadable);
	msc_w_end(s->w);
}

struct all_ctx {
	struct msc_snapper *snap;
	unsigned *partial, *failed;
};

static int snap_one_of_all(int pid, void *arg)
{
	struct all_ctx *ctx = arg;
	struct msc_err err;
	int ret = msc_snap_process(ctx->snap, pid, &err);

	if (ret < 0 && ret != -ESRCH)	/* exited while we looked: normal */
		(*ctx->failed)++;
	else if (ret > 0)
		(*ctx->partial)++;
	return ctx->snap->w->error ? -ctx->snap->w->error : 0;
}

void msc_snap_all(struct msc_snapper *s, unsigned *partial, unsigned *failed)
{
	struct all_ctx ctx = { s, partial, failed };

	msc_proc_foreach_pid(s->fs, snap_one_of_all, &ctx);
}

unsigned msc_snap_present(const struct msc_procfs *fs, const int *pids, int n)
{
	unsigned there = 0;
	int i;

	for (i = 0; i < n; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%d", fs->root, pids[i]);
		there += access(path, F_OK) == 0;
	}
	return there;
}
