/* SPDX-License-Identifier: MIT */
/*
 * ms-top: what the files of the tool share.
 *
 * The inner structure follows libvmon's and the seed design of
 * /work/shared/seeds: a capture at every refresh (sample.c) reads every
 * process's figures into a struct top_sample, whose arena is reset and
 * filled again; two samples are kept, the current one and the previous one,
 * and swapped at each capture, so that rates (the live heap's allocations
 * per second) compare two captures without copying either.  What outlives a
 * capture (open /proc files, the rss history, the first rss seen) is kept
 * per process in a struct top_proc, a slot of a pool whose free slots are
 * reused, found by pid in a hash table.  After the first few refreshes the
 * loop allocates nothing: arenas are reset, tables keep their size.
 *
 * The view (view.c) is the list as drawn: rebuilt after each capture and
 * when the sort, the filter or the tree changes, never while a frame is
 * drawn, and the selection is a process (pid and start time), not a row,
 * so that it never jumps to another process when the list re-sorts.
 * ui.c reads keys and draw.c draws (ncurses), batch.c writes records
 * instead.
 */
#ifndef MS_TOP_H
#define MS_TOP_H

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_arena.h"
#include "msc_format.h"
#include "msc_hash.h"
#include "msc_ndjson.h"
#include "msc_proc.h"

#define TOP_NO_UID 0xffffffffu

/*
 * smaps_rollup makes the kernel walk the process's page tables, in time
 * proportional to its rss: most of a refresh's cost.  A process whose rss
 * (in stat, which costs nothing to read) has not moved keeps the figures of
 * its last read for TOP_MEM_MAX_AGE, or for TOP_MEM_IDLE_PACE times what
 * that read took if longer (a large idle process costs at most 0.05% of a
 * CPU); one whose rss moved is read again at the next refresh, or if its
 * last read took TOP_MEM_PACE_MIN or more, once TOP_MEM_BUSY_PACE times
 * that has passed (at most 0.2% of a CPU).  The time is ms-top's CPU time,
 * not the clock's: a busy machine that delays the read does not slow the
 * pace.
 */
#define TOP_MEM_MAX_AGE (5ull * 1000000000ull)
#define TOP_MEM_IDLE_PACE 2000
#define TOP_MEM_BUSY_PACE 500
#define TOP_MEM_PACE_MIN 1000000ull

/* Refreshes of rss history kept per process (the sparkline, the graph). */
#define TOP_HIST 512

/* A process, as long as it lives: a slot of the pool. */
struct top_proc {
	int pid;
	uint64_t starttime;		/* ns after boot: with pid, names the process */
	int stat_fd, mem_fd;		/* kept open (msc_proc_open), or -1 */
	bool mem_is_status;		/* smaps_rollup denied: mem_fd is status */
	bool kthread;			/* no memory of its own: never shown */
	bool in_use;
	unsigned uid;			/* effective; TOP_NO_UID when unknown */
	char user[32];
	char comm[64];
	char cmd[256];			/* the command line, arguments joined by spaces */
	unsigned first_round;		/* the refresh that first saw it */
	unsigned seen_round;		/* the last refresh that saw it */
	unsigned live_round;		/* the last refresh that found its live socket */
	uint64_t first_rss;
	uint64_t stat_rss;		/* stat's rss at the last read of mem_fd */
	uint64_t mem_ts;		/* when mem_fd was read (monotonic ns), 0: never */
	uint64_t mem_cost;		/* how long that read took, ns */
	struct {
		uint64_t rss, pss, uss, swap;
		bool has_pss, has_mem;
	} mem;				/* what it said */
	uint64_t hist[TOP_HIST];	/* rss at refresh r in hist[r % TOP_HIST] */
	struct top_heap *heap;		/* at heap_round, in that sample's arena */
	unsigned heap_round;
	struct top_proc *next_free;
};

/* A stack's allocation sites, summed over their sizes. */
struct top_site {
	uint64_t stack;
	const char *label;		/* the frame it is attributed to */
	const char *caller;		/* the frame after it, or NULL; for twins
					 * (another site on the same frame), the
					 * first where their paths part */
	const char **path;		/* its frames from label out, some */
	unsigned npath;
	uint64_t live_bytes, live, allocs, frees;
	int64_t growth;			/* live bytes since the previous refresh */
};

/* The live heap of a process ms-record records (msc_live.h). */
struct top_heap {
	uint64_t live_bytes, live, allocs, frees, bytes;
	bool has_rates;			/* the previous refresh read it too */
	uint64_t alloc_rate, free_rate;	/* per second */
	int64_t growth_rate;		/* live bytes per second */
	struct top_site *sites;		/* by stack id */
	size_t nsites;
	struct top_site **by_live;	/* largest live bytes first */
	struct top_site **by_growth;	/* fastest growth first, growing ones only */
	size_t ngrowing;
	unsigned nmarks;		/* the recording's marks (not ms-record's) */
	const char *mark;		/* the last one's name, NULL: none */
	uint64_t mark_ts;		/* and its time in the recording */
};

/* A process's figures at one refresh. */
struct top_entry {
	struct top_proc *p;
	int pid, ppid;
	char state;
	bool has_pss;			/* rss, pss, uss and swap from smaps_rollup */
	bool has_mem;			/* false for zombies */
	uint64_t rss, pss, uss, swap;
	int64_t growth;			/* since ms-top first saw it */
	int64_t recent;			/* over the last window */
	struct top_heap *heap;		/* NULL unless recorded */
};

struct top_sample {
	struct msc_arena arena;
	unsigned round;
	uint64_t ts;			/* monotonic ns */
	bool has_meminfo;
	struct msc_meminfo mi;
	struct top_entry *procs;
	size_t n, cap;
	unsigned recorded;		/* entries with a live heap */
};

struct top_user {
	unsigned uid;
	char name[32];
};

/* What to show. */
struct top_select {
	int *pids;			/* -p, or NULL */
	size_t npids, pids_cap;
	bool by_user;			/* -u */
	unsigned uid;
};

struct top {
	struct msc_procfs fs;
	struct top_select sel;
	uint64_t window;		/* ns, the recent growth's */
	uint64_t t0;			/* monotonic ns of the first capture */
	unsigned round;
	uint64_t round_ts[TOP_HIST];	/* monotonic ns of refresh r at r % TOP_HIST */
	struct top_sample samples[2];
	struct top_sample *cur, *prev;
	/* the process table */
	struct msc_u64map by_pid;	/* pid -> struct top_proc * */
	struct top_proc **chunks;	/* slots, allocated 64 at a time */
	size_t nchunks, chunks_cap;
	struct top_proc *free_slots;
	size_t nprocs;
	DIR *proc_dir, *live_dir;
	struct top_user *users;
	size_t nusers, users_cap;
	/* reading live heaps */
	char *live_buf;
	size_t live_cap;
	struct msc_reader live_reader;
	struct msc_stackdefs live_defs;	/* the live heap's stacks, reset per read */
	struct msc_wscratch wrappers;	/* msc_find_wrappers', kept across reads */
	int live_timeout_ms;
	unsigned live_errors;
	char live_err[MSC_ERR_MAX];	/* the last one, for the inspect view */
	int self_pid;
};

/* sample.c */
int top_init(struct top *t, const char *proc_root);
void top_release(struct top *t);
/* One refresh: every process's figures into t->cur (the previous become
 * t->prev).  Returns 0 or -ENOMEM. */
int top_capture(struct top *t);
/* Is the process one the options select (-p, -u)? */
bool top_selected(const struct top *t, const struct top_proc *p);
/* The entry of p in sample s, or NULL. */
struct top_entry *top_find(const struct top_sample *s, int pid, uint64_t starttime);
/* rss history of p: the last n values (oldest first) into out, returns n. */
size_t top_history(const struct top_proc *p, uint64_t *out, size_t max);
/* The user name of uid (cached), or its number; valid until the next call. */
const char *top_user_name(struct top *t, unsigned uid);

/* heap.c: the live heap of a recorded process, read into s's arena. */
struct top_heap *top_heap_read(struct top *t, struct top_sample *s, int pid,
			       const struct top_heap *prev, uint64_t dt_ns);

/* inspect.c: a process's mappings grouped as ms-snap --groups does. */
struct top_group {
	const char *name;
	const char *kind;
	unsigned count;
	uint64_t size, rss, pss, private_dirty, private_clean, swap;
};

struct top_inspect {
	int pid;
	uint64_t starttime;
	struct msc_arena arena;
	struct top_group *groups;	/* largest rss first */
	size_t ngroups, cap;
	int error;			/* of the last read: 0, -EACCES... */
	uint64_t ts;
};

void top_inspect_init(struct top_inspect *in);
void top_inspect_release(struct top_inspect *in);
/* Reads pid's smaps again.  0 or -errno (in->error too). */
int top_inspect_read(struct top *t, struct top_inspect *in);

/* batch.c */
/* Writes to fd (output: its name for messages, NULL for standard output);
 * returns the exit status. */
int top_batch(struct top *t, unsigned count, uint64_t interval_ns, int fd, const char *output);

/* ui.c */
int top_ui(struct top *t, unsigned count, uint64_t interval_ns);

/* main.c: set by the signal handlers; whether curses owns the terminal. */
extern volatile int top_quit_signal;
extern volatile sig_atomic_t top_curses_on;

/* util.c: an in-place sort (qsort may malloc), and sizes for columns: "0", "532K", "64.0M", "1.5G"; signed with sign. */
char *top_fmt_size(char *buf, size_t n, uint64_t bytes);
char *top_fmt_delta(char *buf, size_t n, int64_t bytes);
void top_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
