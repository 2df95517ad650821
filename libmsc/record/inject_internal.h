/* SPDX-License-Identifier: MIT */
/*
 * inject_internal: what the files of msc_inject share (private to
 * libmsc/record/; everyone else sees msc_inject.h).
 *
 *	inject.c	the remote calls: registers, the call's stack, errno,
 *			the trap they return to, putting the thread back;
 *			msc_inject_call, which takes the steps in order
 *	inject_stop.c	the checks (msc_inject_check, why ptrace is refused),
 *			the choice of a thread, its stops and held signals,
 *			the safe point (outside the allocator and the loader)
 *	inject_elf.c	the target's mappings and their ELF files: libc's and
 *			the loader's symbols, a 0xcc byte, the interpreter
 *			(msc_preload_check, msc_find_program)
 *
 * struct target is the state of one msc_inject_call, shared by all three.
 */
#ifndef MSC_INJECT_INTERNAL_H
#define MSC_INJECT_INTERNAL_H

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include <libunwind-ptrace.h>

#include "msc_err.h"
#include "msc_inject.h"
#include "msc_proc.h"

#if defined(__x86_64__)

/* What the call needs from libc. */
enum { F_DLOPEN, F_DLSYM, F_DLERROR, F_ERRNO, F_LIBC_DLOPEN, F_LIBC_DLSYM, F_MMAP, F_MUNMAP,
       NCALLS };

struct range {
	uint64_t lo, hi;
};

/* One msc_inject_call: the process, the thread it stops, what it found. */
struct target {
	int pid, tid;
	unw_addr_space_t unw_as;	/* libunwind-ptrace's, for safe points */
	int mem;			/* /proc/PID/mem, read-write */
	char root[64];			/* /proc/PID/root */
	char libc[512], ldso[512];	/* paths in the target's namespace */
	uint64_t libc_base, ldso_base;
	bool libc_is_ldso;		/* musl */
	struct range *unsafe;
	size_t nunsafe, capunsafe;
	struct range *anon;		/* its anonymous read-write mappings */
	size_t nanon, capanon;
	uint64_t fn[NCALLS];
	uint64_t trap;			/* libc's ELF entry: syscall; int3 */
	uint64_t int3;			/* a 0xcc byte of libc's code, 0: none */
	uint64_t ret_to;		/* where the calls return: a trap */
	uint64_t ret_at;		/* the stack slot holding ret_to, 0: none */
	uint64_t r_debug;		/* &_r_debug, 0 when unknown */
	const char *lib;		/* the library the call is about */
	bool lib_loaded;		/* mapped in the process already */
	/* The thread's state, to put back. */
	struct user_regs_struct regs;
	unsigned char *xstate;
	size_t xstate_len;
	unsigned char trap_save[8];
	bool trap_written;
	int pending[8];			/* signals held while stopped */
	unsigned npending;
	bool seized;
	bool stopped;			/* stopped by us now */
	bool running_call;		/* it runs our call, not to be put back */
	uint64_t sched_seen;		/* its schedstat, for progress */
	uint64_t stop_t0, stopped_ns;
	int nice_was;			/* its nice value before boost() */
	bool boosted;
	bool in_syscall;		/* stopped inside a system call */
	int timeout_ms;
	struct msc_err *err;
};

/* What inject_on_mapping gathers from /proc/PID/maps. */
struct maps_walk {
	struct target *t;
	const char *lib;		/* the library, by path, or NULL */
	struct stat lib_st;
	bool have_lib_st;
	bool lib_loaded;
	unsigned nmaps;			/* all of them: 0 in a process exiting */
};

/* An ELF file open for reading, and what its program headers say. */
struct elf_file {
	int fd;
	Elf64_Ehdr eh;
	uint64_t first_vaddr;		/* of the first PT_LOAD */
	uint64_t x_off, x_vaddr, x_size;	/* the first executable PT_LOAD */
	bool has_interp;
};

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline int mem_read(struct target *t, uint64_t addr, void *buf, size_t n)
{
	ssize_t r = pread(t->mem, buf, n, (off_t)addr);

	return r == (ssize_t)n ? 0 : -EIO;
}

/* ---- inject_elf.c */

/* msc_proc_maps' callback (arg: a struct maps_walk): the thread stacks'
 * mappings, libc, the loader and the library, and their code as unsafe. */
int inject_on_mapping(const struct msc_mapping *m, void *arg);
/* Opens path and reads its ELF and program headers: 0 or -errno (-ENOEXEC
 * when it is no 64-bit ELF file).  The caller closes ef->fd. */
int inject_elf_open(struct elf_file *ef, const char *path);
/* path is an ELF program with an interpreter (dynamically linked). */
bool inject_elf_is_dynamic(const char *path);
/* The addresses of libc's functions the calls need (t->fn), of its unsafe
 * ones (t->unsafe), its trap, a 0xcc byte and _r_debug: 0, or a negative
 * errno with err set. */
int inject_load_symbols(struct target *t, struct msc_err *err);

/* ---- inject_stop.c */

/* Why tracing pid is refused: a negative errno, err set. */
int inject_explain_eperm(int pid, struct msc_err *err);
/* The same for its thread tid; seize: it was the PTRACE_SEIZE of tid that
 * was. */
int inject_explain_eperm_tid(int pid, int tid, bool seize, struct msc_err *err);
/* pid has exited, or is exiting. */
bool inject_process_gone(struct msc_procfs *fs, int pid);
/* msc_inject_check's checks, with fs: 0, or a negative errno with err set. */
int inject_check_process(int pid, const char *lib, struct msc_procfs *fs, struct msc_err *err);
/* Waits for the thread to stop (see inject_stop.c): the stop's signal, 0,
 * or a negative errno. */
int inject_wait_stop(struct target *t, int timeout_ms, bool want_trap);
/* Stops the seized thread (PTRACE_INTERRUPT): as inject_wait_stop. */
int inject_interrupt(struct target *t);
/* Lets the stopped thread run (PTRACE_CONT) or go (PTRACE_DETACH), with
 * the signals held meanwhile: 0 or -ESRCH. */
int inject_let_go(struct target *t, enum __ptrace_request how);
/* Seizes the best thread and stops it at a safe point: 0, -ESRCH (that
 * thread exited), -ETIMEDOUT, -EAGAIN (no safe point by deadline), -EPERM. */
int inject_stop_at_safe_point(struct target *t, struct msc_procfs *fs,
			      struct msc_inject_stats *st, uint64_t deadline);

#endif /* __x86_64__ */

#endif
