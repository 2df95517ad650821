/* SPDX-License-Identifier: MIT */
/*
 * msc_proc: readers for the /proc files memscope uses, under any root.
 *
 * Every reader takes a struct msc_procfs, which names the proc root ("/proc"
 * normally, a fixture tree in tests) and owns one reusable read buffer, so a
 * scan of every process allocates only while the buffer grows.  Field
 * meanings follow the kernel's Documentation/filesystems/proc.rst; sizes are
 * converted to bytes (from kB or pages) and times to nanoseconds.
 *
 * Processes come and go while they are read, and some deny access; both are
 * normal: readers return -ESRCH when the process is gone (or never existed),
 * -EACCES/-EPERM when it may not be read, -ENODATA when it has no memory map
 * (kernel threads, zombies), -ENOENT when this kernel lacks the file, and
 * -EINVAL (with err filled) only for text they cannot parse.
 */
#ifndef MSC_PROC_H
#define MSC_PROC_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msc_err.h"

struct msc_procfs {
	char root[256];
	char *buf;		/* last file read, NUL-terminated */
	size_t cap;
	long page_size;
	long clk_tck;
};

/* root NULL means "/proc".  Returns 0 or -ENAMETOOLONG. */
int msc_procfs_init(struct msc_procfs *fs, const char *root);
void msc_procfs_release(struct msc_procfs *fs);

/*
 * Reads ROOT/<rel> (rel like "1234/status" or "meminfo") into fs->buf.
 * Returns the length or a negative errno (-ESRCH when a pid directory is
 * gone, as above).  The content stays valid until the next read.
 */
long msc_proc_read(struct msc_procfs *fs, int pid, const char *file);

/*
 * Polling a file: msc_proc_open() opens ROOT/PID/FILE once (a descriptor,
 * close-on-exec, or a negative errno as msc_proc_read returns), and
 * msc_proc_reread() reads it again from its start with pread(2) into
 * fs->buf, returning the length or -errno: a refresh costs one system call
 * per file and no path lookup (ms-top keeps stat and smaps_rollup open for
 * every process it shows).  The msc_proc_parse_* functions below then read
 * fs->buf.  An open file keeps naming the process it was opened for: once
 * that process is gone, reread fails with -ESRCH even when the pid has been
 * reused, so a reused pid never mixes two processes' figures.
 * smaps_rollup also fails with -ESRCH for a zombie, and after the process
 * called execve(2) (the file was opened on the old image's memory): open it
 * again then.
 */
int msc_proc_open(struct msc_procfs *fs, int pid, const char *file);
long msc_proc_reread(struct msc_procfs *fs, int fd);

/* Calls cb for every numeric entry of the root, in directory order. */
int msc_proc_foreach_pid(struct msc_procfs *fs, int (*cb)(int pid, void *arg), void *arg);
/* The same with the directory kept open in *dir (NULL at first, rewound at
 * the next calls; closedir() it when done): a listing once a second that
 * allocates nothing. */
int msc_proc_foreach_pid_at(struct msc_procfs *fs, DIR **dir, int (*cb)(int pid, void *arg),
			    void *arg);

#define MSC_PF_KTHREAD 0x00200000u	/* include/linux/sched.h */
#define MSC_PF_EXITING 0x00000004u	/* the same: getting shut down */

/* /proc/PID/stat */
struct msc_pstat {
	int pid;
	char comm[64];
	char state;
	int ppid, pgrp, session;
	unsigned flags;
	uint64_t minflt, majflt;
	uint64_t utime, stime;		/* ns */
	long num_threads;
	uint64_t starttime;		/* ns after boot: with pid, names a process */
	uint64_t vsize;			/* bytes */
	uint64_t rss;			/* bytes */
	uint64_t start_code;		/* where its text starts (0: hidden, or
					 * no memory): an exec changes it */
};
int msc_proc_stat(struct msc_procfs *fs, int pid, struct msc_pstat *st, struct msc_err *err);
/*
 * The image pid runs: its executable's device and inode and where its text
 * starts.  An exec changes it (the same program exec'd again too, but
 * for a non-PIE one without address randomisation).  0, or -errno (gone).
 */
struct msc_image {
	uint64_t dev, ino, start_code;
};
int msc_proc_image(int pid, struct msc_image *im);
bool msc_image_same(const struct msc_image *a, const struct msc_image *b);
/* Whether pid finds at path the very file this process finds there (its
 * mount namespace may hold another, or none). */
bool msc_proc_sees(int pid, const char *path);
/* Whether pid has memory: an exiting process loses it before it is a
 * zombie, a gone one has none. */
bool msc_proc_has_memory(int pid);
/* The same from the stat text in fs->buf (after msc_proc_reread); pid names it in err. */
int msc_proc_parse_stat(struct msc_procfs *fs, int pid, struct msc_pstat *st, struct msc_err *err);

/* /proc/PID/status; has_mem is false when the Vm* lines are absent. */
struct msc_pstatus {
	char name[64];
	char state;
	int tgid, ppid;
	unsigned uid, euid;
	int threads;
	bool has_mem;
	bool has_rss_split;		/* RssAnon/RssFile/RssShmem present (4.5+) */
	uint64_t vm_peak, vm_size, vm_hwm, vm_rss;
	uint64_t rss_anon, rss_file, rss_shmem;
	uint64_t vm_data, vm_stk, vm_swap;
};
int msc_proc_status(struct msc_procfs *fs, int pid, struct msc_pstatus *st, struct msc_err *err);
int msc_proc_parse_status(struct msc_procfs *fs, int pid, struct msc_pstatus *st,
			  struct msc_err *err);

/* /proc/PID/statm, in bytes */
struct msc_pstatm {
	uint64_t size, resident, shared, text, data;
};
int msc_proc_statm(struct msc_procfs *fs, int pid, struct msc_pstatm *st, struct msc_err *err);

/* Counters of smaps and smaps_rollup, in bytes. */
struct msc_memcounts {
	uint64_t size, rss, pss, pss_dirty, pss_anon, pss_file, pss_shmem;
	uint64_t shared_clean, shared_dirty, private_clean, private_dirty;
	uint64_t referenced, anonymous, lazyfree, anon_huge;
	uint64_t swap, swap_pss, locked;
	bool has_pss_split;		/* Pss_Anon/File/Shmem present (5.10+) */
};
void msc_memcounts_add(struct msc_memcounts *to, const struct msc_memcounts *from);

/*
 * /proc/PID/smaps_rollup; on a kernel without it (before 4.14) the sum of
 * /proc/PID/smaps, with *summed set.  -ENODATA for processes without memory.
 */
int msc_proc_rollup(struct msc_procfs *fs, int pid, struct msc_memcounts *mc, bool *summed,
		    struct msc_err *err);
/* smaps_rollup text of len bytes in fs->buf; -ENODATA when it is empty. */
int msc_proc_parse_rollup(struct msc_procfs *fs, long len, struct msc_memcounts *mc);

/* One line of maps, or one entry of smaps (with mem filled). */
struct msc_mapping {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	const char *path;		/* "" when anonymous; "[heap]", "[stack]"... */
	bool deleted;			/* the kernel appended " (deleted)" (removed) */
	struct msc_memcounts mem;	/* smaps only */
};

/* Calls cb per mapping; cb returning non-zero stops the walk with that value. */
int msc_proc_maps(struct msc_procfs *fs, int pid,
		  int (*cb)(const struct msc_mapping *m, void *arg), void *arg,
		  struct msc_err *err);
int msc_proc_smaps(struct msc_procfs *fs, int pid,
		   int (*cb)(const struct msc_mapping *m, void *arg), void *arg,
		   struct msc_err *err);

/* /proc/PID/cmdline: calls cb per argument; returns the count or -errno. */
int msc_proc_cmdline(struct msc_procfs *fs, int pid,
		     void (*cb)(const char *arg, size_t len, void *ctx), void *ctx);

/* /proc/meminfo, in bytes. */
struct msc_meminfo {
	uint64_t total, free, available, buffers, cached, swap_cached;
	uint64_t active, inactive, swap_total, swap_free, dirty;
	uint64_t anon_pages, mapped, shmem, slab, sreclaimable, sunreclaim;
	uint64_t kernel_stack, page_tables, commit_limit, committed_as;
	uint64_t anon_huge, hugepages_total, hugepagesize;
	bool has_available;
};
int msc_proc_meminfo(struct msc_procfs *fs, struct msc_meminfo *mi, struct msc_err *err);

/* Seconds since the epoch at boot (btime of /proc/stat), or 0. */
uint64_t msc_proc_boot_time(struct msc_procfs *fs);

#endif
