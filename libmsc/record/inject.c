/* SPDX-License-Identifier: MIT */
/*
 * Calling into a running process with ptrace: see msc_inject.h.  The steps
 * and their pitfalls are those of ../shared/notes (section 1); x86_64 only.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libunwind-ptrace.h>

#include "msc_inject.h"
#include "msc_proc.h"
#include "msc_util.h"

#if !defined(__x86_64__)
int msc_inject_check(int pid, const char *lib, struct msc_err *err)
{
	(void)lib;
	return msc_err_set(err, -ENOSYS, "attaching to pid %d: only x86_64 is supported", pid);
}

int msc_inject_call(int pid, const char *lib, unsigned flags, const char *entry, const char *arg,
		    int timeout_ms, long *ret, struct msc_inject_stats *st, struct msc_err *err)
{
	(void)flags, (void)entry, (void)arg, (void)timeout_ms, (void)ret, (void)st;
	return msc_inject_check(pid, lib, err);
}
#else

#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif
#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

#define STACK_SIZE (1u << 20)		/* the call's own stack in the target */
#define SCAN_BYTES (16u << 10)		/* stack words checked for unsafe returns */
#define XSTATE_MAX (16u << 10)
#define RTLD_NOW_ 0x2
#define RTLD_NOLOAD_ 0x4

/* Functions a thread must not be stopped in: they hold allocator, loader,
 * fork or thread locks that the calls need too. */
static const char *const unsafe_fns[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size", "malloc_trim",
	"mallinfo", "mallinfo2", "malloc_info", "malloc_stats", "mallopt", "cfree",
	"dlopen", "dlclose", "dlsym", "dlvsym", "dlmopen", "dladdr", "dladdr1", "dlinfo",
	"dl_iterate_phdr", "__libc_dlopen_mode", "__libc_dlsym", "__libc_dlclose",
	"fork", "_Fork", "vfork", "__libc_fork", "pthread_atfork", "exit", "_exit",
	/* The thread stack cache's lock: the library's attach starts a thread. */
	"pthread_create", "pthread_exit", "pthread_detach",
	"__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc", "__libc_memalign",
};

/* What the call needs from libc. */
enum { F_DLOPEN, F_DLSYM, F_DLERROR, F_ERRNO, F_LIBC_DLOPEN, F_LIBC_DLSYM, F_MMAP, F_MUNMAP,
       NCALLS };
static const char *const call_fns[NCALLS] = {
	"dlopen", "dlsym", "dlerror", "__errno_location", "__libc_dlopen_mode", "__libc_dlsym",
	"mmap", "munmap",
};

struct range {
	uint64_t lo, hi;
};

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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void add_unsafe(struct target *t, uint64_t lo, uint64_t hi)
{
	if (lo >= hi || MSC_GROW(t->unsafe, t->nunsafe + 1, t->capunsafe, 32))
		return;
	t->unsafe[t->nunsafe++] = (struct range){ lo, hi };
}

static bool is_unsafe(const struct target *t, uint64_t addr)
{
	size_t i;

	for (i = 0; i < t->nunsafe; i++)
		if (addr >= t->unsafe[i].lo && addr < t->unsafe[i].hi)
			return true;
	return false;
}

/* ------------------------------------------------------------ /proc facts */

/* The value of "Key:" in /proc/PID/status, or -1. */
static long status_field(struct msc_procfs *fs, int pid, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	if (msc_proc_read(fs, pid, "status") < 0)
		return -1;
	for (p = fs->buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, n) == 0 && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
	return -1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool is_libc(const char *name)
{
	return strncmp(name, "libc.so", 7) == 0 || strncmp(name, "libc-2.", 7) == 0 ||
	       strncmp(name, "ld-musl-", 8) == 0;
}

static bool is_ldso(const char *name)
{
	return strncmp(name, "ld-linux", 8) == 0 || strncmp(name, "ld64.so", 7) == 0 ||
	       strncmp(name, "ld-2.", 5) == 0 || strncmp(name, "ld-musl-", 8) == 0;
}

struct maps_walk {
	struct target *t;
	const char *lib;		/* the library, by path, or NULL */
	struct stat lib_st;
	bool have_lib_st;
	bool lib_loaded;
	unsigned nmaps;			/* all of them: 0 in a process exiting */
};

static int on_mapping(const struct msc_mapping *m, void *arg)
{
	struct maps_walk *mw = arg;
	struct target *t = mw->t;
	const char *name = base_name(m->path);

	mw->nmaps++;
	/* Where a thread's stack may be (a thread's own, or [stack]). */
	if (m->perms[0] == 'r' && m->perms[1] == 'w' && (!m->path[0] || !strcmp(m->path, "[stack]")) &&
	    !MSC_GROW(t->anon, t->nanon + 1, t->capanon, 64))
		t->anon[t->nanon++] = (struct range){ m->start, m->end };
	if (m->path[0] != '/')
		return 0;
	if (is_libc(name) && !t->libc[0] && m->offset == 0) {
		snprintf(t->libc, sizeof(t->libc), "%s", m->path);
		t->libc_base = m->start;
		t->libc_is_ldso = strncmp(name, "ld-musl-", 8) == 0;
	}
	if (is_ldso(name)) {
		if (!t->ldso[0] && m->offset == 0) {
			snprintf(t->ldso, sizeof(t->ldso), "%s", m->path);
			t->ldso_base = m->start;
		}
		/* The whole loader: lazy binding and dlopen hold its locks. */
		if (m->perms[2] == 'x')
			add_unsafe(t, m->start, m->end);
	}
	/* The library itself, when loaded: its hooks may hold its state. */
	if (mw->have_lib_st && m->inode == (uint64_t)mw->lib_st.st_ino &&
	    (strcmp(m->path, mw->lib) == 0 || strcmp(name, base_name(mw->lib)) == 0)) {
		mw->lib_loaded = true;
		if (m->perms[2] == 'x')
			add_unsafe(t, m->start, m->end);
	}
	return 0;
}

/* ---------------------------------------------------------- ELF symbols */

struct elf_file {
	int fd;
	Elf64_Ehdr eh;
	uint64_t first_vaddr;		/* of the first PT_LOAD */
	uint64_t x_off, x_vaddr, x_size;	/* the first executable PT_LOAD */
	bool has_interp;
};

static int elf_open(struct elf_file *ef, const char *path)
{
	Elf64_Phdr ph;
	bool first = true;
	unsigned i;

	memset(ef, 0, sizeof(*ef));
	ef->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ef->fd < 0)
		return -errno;
	if (pread(ef->fd, &ef->eh, sizeof(ef->eh), 0) != sizeof(ef->eh) ||
	    memcmp(ef->eh.e_ident, ELFMAG, SELFMAG) != 0 || ef->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ef->eh.e_phentsize != sizeof(ph)) {
		close(ef->fd);
		return -ENOEXEC;
	}
	for (i = 0; i < ef->eh.e_phnum; i++) {
		if (pread(ef->fd, &ph, sizeof(ph), (off_t)(ef->eh.e_phoff + i * sizeof(ph))) !=
		    sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			ef->has_interp = true;
		if (ph.p_type == PT_LOAD && first) {
			ef->first_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
			first = false;
		}
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !ef->x_size) {
			ef->x_off = ph.p_offset;
			ef->x_vaddr = ph.p_vaddr;
			ef->x_size = ph.p_filesz;
		}
	}
	return 0;
}

/* 1: path is an ELF program with an interpreter (dynamically linked), 0:
 * without one (static), -1: it cannot be read. */
static int elf_interp(const char *path)
{
	struct elf_file ef;
	bool has_interp;

	if (elf_open(&ef, path))
		return -1;
	has_interp = ef.has_interp;
	close(ef.fd);
	return has_interp;
}

static bool elf_is_static(const char *path)
{
	return elf_interp(path) == 0;
}

static bool elf_is_dynamic(const char *path)
{
	return elf_interp(path) == 1;
}

char *msc_find_program(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(name, '/'))
		return strdup(name);	/* msc_preload_check says what is wrong with it */
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (;;) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);

		/* An empty entry is the current directory, as for execvp. */
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return strdup(buf);
		if (!colon)
			break;
		path = colon + 1;
	}
	errno = ENOENT;
	return NULL;
}

int msc_preload_check(const char *path, struct msc_err *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return msc_err_set(err, -errno, "cannot run '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return msc_err_set(err, -EISDIR, "cannot run '%s': Is a directory", path);
	if (access(path, X_OK) != 0)
		return msc_err_set(err, -errno, "cannot run '%s': %s", path, strerror(errno));
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		return msc_err_set(err, -EPERM, "cannot profile '%s': it is set-user-ID or "
				   "set-group-ID, and the loader ignores LD_PRELOAD for such programs",
				   path);
	if (elf_is_static(path))
		return msc_err_set(err, -ENOEXEC, "cannot profile '%s': it is statically linked, so "
				   "LD_PRELOAD cannot put libmemscope.so in it", path);
	return 0;
}

/*
 * Looks names up in .dynsym: val[i]/size[i] get each defined symbol's value
 * and size (0 when absent).  Returns 0 or -errno.
 */
static int elf_dynsyms(struct elf_file *ef, const char *const *names, size_t n, uint64_t *val,
		       uint64_t *size)
{
	Elf64_Shdr sh, strsh;
	Elf64_Sym *syms = NULL;
	char *strs = NULL;
	size_t nsyms = 0, i, k;
	int rc = -ENOENT;
	unsigned s;

	memset(val, 0, n * sizeof(*val));
	if (size)
		memset(size, 0, n * sizeof(*size));
	if (ef->eh.e_shentsize != sizeof(sh))
		return -ENOEXEC;
	for (s = 0; s < ef->eh.e_shnum; s++) {
		if (pread(ef->fd, &sh, sizeof(sh), (off_t)(ef->eh.e_shoff + s * sizeof(sh))) !=
		    sizeof(sh))
			return -EIO;
		if (sh.sh_type == SHT_DYNSYM)
			break;
	}
	if (s == ef->eh.e_shnum || sh.sh_link >= ef->eh.e_shnum)
		return -ENOENT;
	if (pread(ef->fd, &strsh, sizeof(strsh), (off_t)(ef->eh.e_shoff + sh.sh_link * sizeof(sh))) !=
	    sizeof(strsh))
		return -EIO;
	if (sh.sh_size > (64u << 20) || strsh.sh_size > (64u << 20) || !strsh.sh_size)
		return -ENOEXEC;
	syms = malloc(sh.sh_size);
	strs = malloc(strsh.sh_size + 1);
	if (!syms || !strs) {
		rc = -ENOMEM;
		goto out;
	}
	if (pread(ef->fd, syms, sh.sh_size, (off_t)sh.sh_offset) != (ssize_t)sh.sh_size ||
	    pread(ef->fd, strs, strsh.sh_size, (off_t)strsh.sh_offset) != (ssize_t)strsh.sh_size) {
		rc = -EIO;
		goto out;
	}
	strs[strsh.sh_size] = '\0';
	nsyms = sh.sh_size / sizeof(*syms);
	for (i = 0; i < nsyms; i++) {
		const char *name;

		if (syms[i].st_shndx == SHN_UNDEF || syms[i].st_name >= strsh.sh_size)
			continue;
		name = strs + syms[i].st_name;
		for (k = 0; k < n; k++)
			if (!val[k] && strcmp(name, names[k]) == 0) {
				val[k] = syms[i].st_value;
				if (size)
					size[k] = syms[i].st_size;
			}
	}
	rc = 0;
out:
	free(syms);
	free(strs);
	return rc;
}

/*
 * The address (in the file's own terms) of a 0xcc byte in its code, or 0:
 * an int3 already there, inside some instruction or between functions, to
 * which our calls return.  Then nothing is written to the process's code,
 * nor put back after the calls: each write to its memory takes its mmap
 * lock, behind every thread that maps memory.
 */
static uint64_t elf_int3(struct elf_file *ef)
{
	unsigned char buf[16384];
	uint64_t at = 0;

	while (at < ef->x_size && at < (4u << 20)) {
		size_t want = ef->x_size - at < sizeof(buf) ? (size_t)(ef->x_size - at) : sizeof(buf);
		ssize_t n = pread(ef->fd, buf, want, (off_t)(ef->x_off + at));
		const unsigned char *p;

		if (n <= 0)
			return 0;
		p = memchr(buf, 0xcc, (size_t)n);
		if (p)
			return ef->x_vaddr + at + (uint64_t)(p - buf);
		at += (uint64_t)n;
	}
	return 0;
}

/* ------------------------------------------------------------- checks */

static int explain_eperm_tid(int pid, int tid, bool seize, struct msc_err *err);

/* Does this process hold CAP_SYS_PTRACE (bit 19 of its CapEff)? */
static bool has_cap_ptrace(void)
{
	char line[256];
	unsigned long long eff = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff >> 19) & 1;
}

static int explain_eperm(int pid, struct msc_err *err)
{
	return explain_eperm_tid(pid, pid, false, err);
}

/* The user namespace's inode number that /proc/<who>/ns/user names. */
static unsigned long user_ns(const char *who)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/ns/user", who);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	return strncmp(link, "user:[", 6) == 0 ? strtoul(link + 6, NULL, 10) : 0;
}

/* Our capabilities hold over pid: we are in the first user namespace
 * (its inode number is fixed, PROC_USER_INIT_INO) or in pid's. */
static bool caps_reach(int pid)
{
	char who[16];
	unsigned long ours = user_ns("self");

	snprintf(who, sizeof(who), "%d", pid);
	return ours != 0 && (ours == 0xEFFFFFFDul || ours == user_ns(who));
}

/* Why tracing pid (its thread tid) is refused; seize: it was the
 * PTRACE_SEIZE of tid that was. */
static int explain_eperm_tid(int pid, int tid, bool seize, struct msc_err *err)
{
	struct msc_procfs fs;
	struct msc_pstatus ps;
	long scope = -1, tracer, uid = -1;
	int rc = -EPERM;

	msc_procfs_init(&fs, NULL);
	if (msc_proc_read(&fs, 0, "sys/kernel/yama/ptrace_scope") > 0)
		scope = strtol(fs.buf, NULL, 10);
	if (msc_proc_status(&fs, pid, &ps, NULL) == 0)
		uid = ps.uid;
	tracer = status_field(&fs, pid, "TracerPid");
	if (tracer <= 0 && tid != pid)
		tracer = status_field(&fs, tid, "TracerPid");
	if (tracer > 0) {
		struct msc_pstat tr;
		bool named = msc_proc_stat(&fs, (int)tracer, &tr, NULL) == 0;

		if (named && strcmp(tr.comm, "ms-record") == 0)
			msc_err_set(err, -EBUSY,
				    "pid %d is being attached to by another ms-record (pid %ld) at this moment",
				    pid, tracer);
		else
			msc_err_set(err, rc,
				    "pid %d is already traced by pid %ld%s%s%s; detach that debugger or tracer first",
				    pid, tracer, named ? " (" : "", named ? tr.comm : "",
				    named ? ")" : "");
	} else if (scope >= 3) {
		msc_err_set(err, rc,
			    "ptrace is disabled on this system (kernel.yama.ptrace_scope = 3, until reboot); ms-record --poll and ms-snap -p still read its memory");
	} else if (seize && geteuid() == 0 && has_cap_ptrace() && caps_reach(pid)) {
		/* A seize refused to one who may trace it: the thread was
		 * traced, by one that has let go since. */
		msc_err_set(err, -EBUSY,
			    "pid %d was being traced by another process (another ms-record, a debugger) at that moment; try again",
			    pid);
	} else if (geteuid() != 0 && uid >= 0 && (uid_t)uid != geteuid()) {
		msc_err_set(err, rc,
			    "not permitted to trace pid %d (owned by uid %ld); run as that user or as root",
			    pid, uid);
	} else if (scope >= 1 && geteuid() != 0) {
		msc_err_set(err, rc,
			    "ptrace not permitted (kernel.yama.ptrace_scope = %ld); run as root, or 'sysctl kernel.yama.ptrace_scope=0'",
			    scope);
	} else {
		msc_err_set(err, rc,
			    "not permitted to trace pid %d (needs CAP_SYS_PTRACE: setuid or non-dumpable program, or a container without it)",
			    pid);
	}
	msc_procfs_release(&fs);
	return rc;
}

/* A zombie, or dead (its memory may be gone already). */
static bool ended(const struct msc_pstat *ps)
{
	return ps->state == 'Z' || ps->state == 'X';
}

/* pid has exited, or is exiting. */
static bool process_gone(struct msc_procfs *fs, int pid)
{
	struct msc_pstat ps;
	int rc = msc_proc_stat(fs, pid, &ps, NULL);

	return rc == -ESRCH || (rc == 0 && (ended(&ps) || (ps.flags & MSC_PF_EXITING)));
}

static int check_process(int pid, const char *lib, struct msc_procfs *fs, struct msc_err *err)
{
	char path[600];
	struct msc_pstat ps;
	struct elf_file ef;
	long v;
	int rc;

	if (pid <= 0)
		return msc_err_set(err, -ESRCH, "no process %d", pid);
	rc = msc_proc_stat(fs, pid, &ps, NULL);
	if (rc == -ESRCH)
		return msc_err_set(err, rc, "no process %d", pid);
	if (rc < 0)
		return msc_err_set(err, rc, "cannot read /proc/%d/stat: %s", pid, strerror(-rc));
	if (ps.flags & MSC_PF_KTHREAD)
		return msc_err_set(err, -EINVAL, "pid %d is a kernel thread", pid);
	if (ended(&ps))
		return msc_err_set(err, -ESRCH, "pid %d is exiting (%c)", pid, ps.state);
	if (pid == getpid())
		return msc_err_set(err, -EINVAL, "pid %d is this process", pid);
	v = status_field(fs, pid, "TracerPid");
	if (v > 0)
		return explain_eperm(pid, err);
	if (ps.state == 'T' || ps.state == 't')
		return msc_err_set(err, -EAGAIN,
				   "pid %d is stopped; continue it first (kill -CONT %d)", pid, pid);
	v = status_field(fs, pid, "Seccomp");
	if (v == 2)
		return msc_err_set(err, -EPERM,
				   "pid %d runs under a seccomp filter, which may kill it for the system calls loading a library needs; ms-record --poll and ms-snap -p still read its memory",
				   pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	rc = elf_open(&ef, path);
	if (rc && process_gone(fs, pid))
		return msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
	if (rc == -EACCES || rc == -EPERM)
		return explain_eperm(pid, err);
	if (rc == -ENOENT)
		return msc_err_set(err, -ESRCH, "pid %d exited", pid);
	if (rc == 0) {
		bool has_interp = ef.has_interp;

		close(ef.fd);
		if (!has_interp)
			return msc_err_set(err, -ENOEXEC,
					   "pid %d is statically linked: no library can be loaded into it; ms-record --poll and ms-snap -p still read its memory",
					   pid);
	}
	if (lib) {
		struct stat here, there;

		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, lib);
		if (stat(lib, &here) || stat(path, &there) || here.st_ino != there.st_ino ||
		    here.st_dev != there.st_dev) {
			if (process_gone(fs, pid))
				return msc_err_set(err, -ESRCH, "pid %d exited during the attach",
						   pid);
			return msc_err_set(err, -ENOENT,
					   "%s is not visible at the same path in pid %d's mount namespace (a container?); install it there",
					   lib, pid);
		}
	}
	return 0;
}

int msc_inject_check(int pid, const char *lib, struct msc_err *err)
{
	struct msc_procfs fs;
	int rc;

	if (msc_procfs_init(&fs, NULL))
		return msc_err_set(err, -ENAMETOOLONG, "proc root");
	rc = check_process(pid, lib, &fs, err);
	msc_procfs_release(&fs);
	return rc;
}

/* ------------------------------------------------------ choosing a thread */

/*
 * Lower is better.  A thread asleep in a system call that restarts by itself
 * (nanosleep, read, poll...) holds no user-space lock and loses nothing by
 * the stop; futex may be a wait for the allocator's lock (the stack check
 * tells); a running thread is often inside the allocator; some calls return
 * EINTR to a stop and are only taken when nothing else is there.
 */
static int thread_score(struct msc_procfs *fs, int pid, int tid)
{
	char rel[64];
	long nr;

	snprintf(rel, sizeof(rel), "task/%d/syscall", tid);
	if (msc_proc_read(fs, pid, rel) <= 0)
		return 9;
	if (strncmp(fs->buf, "running", 7) == 0)
		return 2;
	nr = strtol(fs->buf, NULL, 10);
	switch (nr) {
	/* signal(7), "Interruption of system calls ... by stop signals". */
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_rt_sigtimedwait:
	case SYS_io_getevents:
		return 5;
	case SYS_futex:
		return 1;
	default:
		return nr < 0 ? 2 : 0;
	}
}

static bool skipped(const int *skip, int nskip, int tid)
{
	int i;

	for (i = 0; i < nskip; i++)
		if (skip[i] == tid)
			return true;
	return false;
}

/* The best thread not in skip[]; 0 when every one is. */
static int choose_thread(struct msc_procfs *fs, int pid, const int *skip, int nskip)
{
	char dir[64];
	struct dirent *de;
	int best = 0, best_score = 100;
	DIR *d;

	if (!skipped(skip, nskip, pid)) {
		best = pid;
		best_score = thread_score(fs, pid, pid);
		if (best_score == 0)
			return pid;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return best;
	while ((de = readdir(d)) != NULL) {
		int tid = atoi(de->d_name), sc;

		if (tid <= 0 || tid == pid || skipped(skip, nskip, tid))
			continue;
		sc = thread_score(fs, pid, tid);
		if (sc < best_score) {
			best = tid;
			best_score = sc;
			if (sc == 0)
				break;
		}
	}
	closedir(d);
	return best;
}

/* ------------------------------------------------------------ ptrace */

static int mem_read(struct target *t, uint64_t addr, void *buf, size_t n)
{
	ssize_t r = pread(t->mem, buf, n, (off_t)addr);

	return r == (ssize_t)n ? 0 : -EIO;
}

static int mem_write(struct target *t, uint64_t addr, const void *buf, size_t n)
{
	ssize_t r = pwrite(t->mem, buf, n, (off_t)addr);

	return r == (ssize_t)n ? 0 : -EIO;
}

/* Why its memory could not be written: it is ending (a zombie, or gone),
 * or something else. */
static int write_failed(struct target *t)
{
	char path[64], buf[512];
	const char *paren;

	snprintf(path, sizeof(path), "/proc/%d/stat", t->pid);
	if (msc_read_small(path, buf, sizeof(buf)) <= 0 || !(paren = strrchr(buf, ')')) ||
	    paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X')
		return msc_err_set(t->err, -ESRCH, "pid %d exited during the attach", t->pid);
	return msc_err_set(t->err, -EIO, "pid %d: cannot write its memory through /proc/%d/mem",
			   t->pid, t->pid);
}

static bool is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGSYS || sig == SIGABRT;
}

static void hold_signal(struct target *t, int sig)
{
	unsigned i;

	for (i = 0; i < t->npending; i++)
		if (t->pending[i] == sig)
			return;		/* standard signals do not queue either */
	if (t->npending < ARRAY_SIZE(t->pending))
		t->pending[t->npending++] = sig;
}

/*
 * Waits for the thread to stop.  Returns the stop's signal (SIGTRAP for a
 * trap, 0 for our interrupt or a group stop), or a negative errno: -ESRCH
 * when it exited, -ETIMEDOUT.  Signal-delivery stops other than those the
 * caller wants (want_trap) are held for later and the thread resumed.
 */
/*
 * Has the thread run, or waited for a CPU, since the last look?  A thread
 * on a machine its process's 200 threads keep busy gets a CPU a hundredth
 * of the time: slow, not stuck.  /proc/PID/task/TID/schedstat: time on a
 * CPU and time runnable on a run queue, in ns.
 */
static bool progressed(struct target *t)
{
	char path[64], buf[96];
	unsigned long long run = 0, wait = 0;
	uint64_t seen;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", t->pid, t->tid);
	if (msc_read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return false;
	seen = (uint64_t)run + (uint64_t)wait;
	if (seen == t->sched_seen)
		return false;
	t->sched_seen = seen;
	return true;
}

/*
 * Waits up to us for a tracee to change state.  A ptrace stop sends the
 * tracer SIGCHLD: taken as it comes (msc_inject_call blocks it), the wait
 * ends at once, where a sleep of a fixed length added up to a millisecond
 * to each of an attach's dozen steps, and more where the machine is busy
 * (the tracer then waits its turn to wake).  SIGCHLD only wakes its
 * callers (ms-record looks at its children every round anyway).
 */
static void nap_for_stop(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigtimedwait(&chld, NULL, &ts) < 0 && errno != EAGAIN && errno != EINTR)
		nap_us(us);
}

static int wait_stop(struct target *t, int timeout_ms, bool want_trap)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	long nap = 20;

	progressed(t);

	for (;;) {
		int status, sig, event;
		pid_t r = waitpid(t->tid, &status, __WALL | WNOHANG);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -ESRCH;
		if (r == 0) {
			/* timeout_ms without running: stuck (asleep, or in
			 * an uninterruptible wait) */
			if (now_ns() > deadline && !progressed(t))
				return -ETIMEDOUT;
			if (now_ns() > deadline)
				deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
			nap_for_stop(nap);
			if (nap < 1000)
				nap *= 2;
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->seized = false;
			return -ESRCH;
		}
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (event == PTRACE_EVENT_STOP && sig != SIGTRAP) {
			/* A group-stop (SIGSTOP, SIGTSTP...) of the process
			 * came: this thread stops again as it leaves us (the
			 * signal is sent back by let_go).  Meanwhile it runs
			 * our call to its end. */
			hold_signal(t, sig);
			if (!want_trap)
				return 0;
			if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
				return -ESRCH;
			continue;
		}
		if (event == PTRACE_EVENT_STOP)
			return 0;
		if (event)		/* no options set: not expected; go on */
			continue;
		if (want_trap && (sig == SIGTRAP || is_fault(sig)))
			return sig;
		/* A signal-delivery stop: the signal is held for later.  As good
		 * a stop as ours when we asked for one; else go on. */
		hold_signal(t, sig);
		if (!want_trap)
			return 0;
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
			return -ESRCH;
	}
}

static int interrupt(struct target *t)
{
	int rc;

	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return -ESRCH;
	rc = wait_stop(t, t->timeout_ms, false);
	if (rc >= 0) {
		t->stopped = true;
		t->stop_t0 = now_ns();
	}
	return rc;
}

/*
 * Lets the stopped thread run (PTRACE_CONT) or go (PTRACE_DETACH), with the
 * signals held meanwhile: one delivered now, the others queued on it.
 */
static int let_go(struct target *t, enum __ptrace_request how)
{
	int sig = 0;

	t->stopped_ns += now_ns() - t->stop_t0;
	t->stopped = false;
	while (t->npending > 1)
		syscall(SYS_tgkill, t->pid, t->tid, t->pending[--t->npending]);
	if (t->npending)
		sig = t->pending[--t->npending];
	return ptrace(how, t->tid, 0, (void *)(long)sig) < 0 ? -ESRCH : 0;
}

/*
 * Does addr follow a call instruction, as a return address does?  Other
 * words that point into an unsafe function (a function pointer kept on the
 * stack, the start of fork in an atfork table) are not frames.
 */
static bool after_call(struct target *t, uint64_t addr)
{
	unsigned char b[7];

	if (addr < 7 || mem_read(t, addr - 7, b, sizeof(b)))
		return true;		/* cannot tell: assume it is */
	return b[2] == 0xe8 ||					/* call rel32 */
	       (b[5] == 0xff && (b[6] & 0x38) == 0x10) ||	/* call *reg */
	       (b[4] == 0xff && (b[5] & 0x38) == 0x10) ||	/* call *(reg) + disp8 */
	       (b[1] == 0xff && (b[2] & 0x38) == 0x10) ||	/* call *disp32(...) */
	       (b[0] == 0xff && (b[1] & 0x38) == 0x10);		/* with a SIB byte */
}

/*
 * Unwinds the stopped thread from its CFI (libunwind-ptrace): 1 when a
 * caller is inside an unsafe function, 0 when the walk reached the stack's
 * end without one, -1 when it could not (a frame without unwind
 * information, JIT code): then only the conservative scan can tell.
 */
static int unwound_unsafe(struct target *t)
{
	unw_cursor_t c;
	unw_word_t ip;
	void *upt;
	int ret = -1, n, step;

	if (!t->unw_as) {
		t->unw_as = unw_create_addr_space(&_UPT_accessors, 0);
		if (!t->unw_as)
			return -1;
		unw_set_caching_policy(t->unw_as, UNW_CACHE_GLOBAL);
	}
	upt = _UPT_create(t->tid);
	if (!upt)
		return -1;
	if (unw_init_remote(&c, t->unw_as, upt) < 0)
		goto out;
	for (n = 0; n < 512; n++) {
		step = unw_step(&c);
		if (step == 0) {
			ret = 0;	/* the outermost frame */
			break;
		}
		if (step < 0 || unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			break;
		/* A return address: the call is the byte before it. */
		if (ip && is_unsafe(t, ip - 1)) {
			ret = 1;
			break;
		}
	}
out:
	_UPT_destroy(upt);
	return ret;
}

/* Is the stopped thread at a point where calling dlopen cannot deadlock? */
static bool safe_point(struct target *t, const struct user_regs_struct *r)
{
	uint64_t words[512];
	uint64_t addr = r->rsp, end = r->rsp + SCAN_BYTES;
	int state;

	if (is_unsafe(t, r->rip))
		return false;
	/* _r_debug.r_state (offset 24 on LP64): RT_CONSISTENT is 0. */
	if (t->r_debug && mem_read(t, t->r_debug + 24, &state, sizeof(state)) == 0 && state != 0)
		return false;
	/* Every word of the stack that could be a return into an unsafe
	 * function: a superset of the frames, read in a few page reads. */
	while (addr < end) {
		uint64_t page_end = (addr | 4095) + 1;
		size_t n = (size_t)((page_end < end ? page_end : end) - addr), i;

		if (n > sizeof(words))
			n = sizeof(words);
		n &= ~(size_t)7;
		if (!n || mem_read(t, addr, words, n))
			break;		/* the end of the stack's mapping */
		for (i = 0; i < n / 8; i++)
			if (is_unsafe(t, words[i]) && after_call(t, words[i]))
				/* Maybe a stale word (an old return into malloc
				 * in a caller's unused slot), which would stay
				 * there for good in a sleeping thread: the
				 * frames themselves decide when they can be
				 * walked (slower: a ptrace read per word). */
				return unwound_unsafe(t) == 0;
		addr += n;
	}
	return true;
}

/* ------------------------------------------------------- remote calls */

/*
 * The thread runs our calls (dlopen, the library's attach) at nice -20
 * when we may (CAP_SYS_NICE, or RLIMIT_NICE): among 200 threads that keep
 * 2 CPUs busy, at its own nice it gets a 100th of a CPU, and 3 ms of
 * work held it 40-200 ms.  Put back as it was when the calls end (unboost).
 */
static void boost(struct target *t)
{
	int was;

	errno = 0;
	was = getpriority(PRIO_PROCESS, (id_t)t->tid);
	if (was == -1 && errno)
		return;
	if (was > -20 && setpriority(PRIO_PROCESS, (id_t)t->tid, -20) == 0) {
		t->nice_was = was;
		t->boosted = true;
	}
}

static void unboost(struct target *t)
{
	if (t->boosted)
		setpriority(PRIO_PROCESS, (id_t)t->tid, t->nice_was);
	t->boosted = false;
}

/*
 * A thread stopped asleep in a system call goes back into it through user
 * mode (the kernel's restart, as after SIGSTOP and SIGCONT), and a signal
 * that comes before it is there runs its handler first, the call made
 * again after it: `while (!stop) pause();` then slept for good (2 runs in
 * 16 of t0340's 200 threads, SIGTERM after two cycles: the thread, at its
 * own nice among busy threads, waited that long for a CPU).  So it is let
 * go at nice -20, and put back to its own once it sleeps again, 20 ms at
 * most.
 */
static void unboost_asleep(struct target *t, struct msc_procfs *fs)
{
	struct msc_pstat ps;
	int i;

	for (i = 0; t->boosted && t->in_syscall && i < 200; i++) {
		if (msc_proc_stat(fs, t->tid, &ps, NULL) || ps.state != 'R')
			break;
		nap_us(100);
	}
	unboost(t);
}

/* Runs from regs r until the trap; returns 0 with *rax, or -errno. */
static int run_to_trap(struct target *t, struct user_regs_struct *r, uint64_t *rax)
{
	struct user_regs_struct out;
	int rc;

	if (ptrace(PTRACE_SETREGS, t->tid, 0, r) < 0)
		return -ESRCH;
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return -ESRCH;
	t->running_call = true;
	rc = wait_stop(t, t->timeout_ms, true);
	if (rc == -ETIMEDOUT) {
		/* Asleep in the call that long: stop it where it hangs and
		 * put its state back.  Never while it runs on: it would
		 * return to the trap's bytes put back (libc's entry). */
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0 &&
		    wait_stop(t, t->timeout_ms, false) >= 0) {
			t->running_call = false;
			return msc_err_set(t->err, -ETIMEDOUT,
					   "pid %d: the call into the process slept %d ms without returning (a probable deadlock); its thread %d was put back as it was",
					   t->pid, t->timeout_ms, t->tid);
		}
		return msc_err_set(t->err, -ETIMEDOUT,
				   "pid %d: the call into the process slept %d ms without returning and its thread %d cannot be stopped: it is left to finish the call, and will fault when it does",
				   t->pid, t->timeout_ms, t->tid);
	}
	if (rc >= 0)
		t->running_call = false;
	if (rc < 0)
		return msc_err_set(t->err, rc, "pid %d exited during the attach", t->pid);
	if (rc != SIGTRAP)
		return msc_err_set(t->err, -EFAULT,
				   "pid %d: the call into the process faulted (%s); its state was put back",
				   t->pid, strsignal(rc));
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &out) < 0)
		return -ESRCH;
	if (out.rip != t->ret_to + 1)
		return msc_err_set(t->err, -EFAULT, "pid %d: unexpected trap at %#llx", t->pid,
				   (unsigned long long)out.rip);
	*rax = out.rax;
	return 0;
}

static int remote_calln(struct target *t, uint64_t stack_top, uint64_t fn, const uint64_t a[6],
			uint64_t *ret)
{
	struct user_regs_struct r = t->regs;
	uint64_t sp = (stack_top & ~(uint64_t)15) - 8;

	/* At entry (rsp + 8) is 16-aligned, the return address is the int3.
	 * Written once: a call's return leaves its slot as it was. */
	if (t->ret_at != sp) {
		if (mem_write(t, sp, &t->ret_to, sizeof(t->ret_to)))
			return write_failed(t);
		t->ret_at = sp;
	}
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.rcx = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;	/* no syscall restart on the way in */
	r.eflags &= ~0x400ull;		/* DF clear, as the ABI says */
	return run_to_trap(t, &r, ret);
}

static int remote_call(struct target *t, uint64_t stack_top, uint64_t fn, uint64_t a0,
		       uint64_t a1, uint64_t *ret)
{
	const uint64_t a[6] = { a0, a1 };

	return remote_calln(t, stack_top, fn, a, ret);
}

static int remote_syscall(struct target *t, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
			  uint64_t a3, uint64_t a4, uint64_t a5, uint64_t *ret)
{
	struct user_regs_struct r = t->regs;

	if (!t->trap_written)
		return msc_err_set(t->err, -EFAULT, "pid %d: no system call stub", t->pid);
	r.rip = t->trap;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = a3;
	r.r8 = a4;
	r.r9 = a5;
	return run_to_trap(t, &r, ret);
}

/* Reads a NUL-terminated string of the target (dlerror's). */
static void read_string(struct target *t, uint64_t addr, char *out, size_t n)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; addr && i + 1 < n; i++) {
		if (mem_read(t, addr + i, &out[i], 1) || !out[i])
			break;
	}
	out[i < n ? i : n - 1] = '\0';
}

/* ------------------------------------------------------------- the call */

static int load_symbols(struct target *t, struct msc_err *err)
{
	uint64_t val[ARRAY_SIZE(unsafe_fns)], size[ARRAY_SIZE(unsafe_fns)];
	uint64_t cval[NCALLS], rdbg = 0;
	static const char *const rdbg_name[] = { "_r_debug" };
	struct elf_file ef;
	char path[700];
	uint64_t bias;
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "%s%s", t->root, t->libc);
	rc = elf_open(&ef, path);
	/* Its root goes with the process: a process killed meanwhile (a
	 * zombie, or gone) has no files to read. */
	if (rc && access(t->root, F_OK) < 0 && (errno == ENOENT || errno == ESRCH))
		return msc_err_set(err, -ESRCH, "pid %d exited during the attach", t->pid);
	if (rc)
		return msc_err_set(err, rc, "cannot read pid %d's libc (%s): %s", t->pid, t->libc,
				   strerror(-rc));
	bias = t->libc_base - ef.first_vaddr;
	rc = elf_dynsyms(&ef, unsafe_fns, ARRAY_SIZE(unsafe_fns), val, size);
	if (rc == 0)
		rc = elf_dynsyms(&ef, call_fns, NCALLS, cval, NULL);
	if (rc == 0 && t->libc_is_ldso)
		elf_dynsyms(&ef, rdbg_name, 1, &rdbg, NULL);
	t->trap = ef.eh.e_entry ? bias + ef.eh.e_entry : 0;
	t->int3 = elf_int3(&ef);
	if (t->int3)
		t->int3 += bias;
	close(ef.fd);
	if (rc)
		return msc_err_set(err, rc, "cannot read the symbols of %s: %s", t->libc,
				   strerror(-rc));
	for (i = 0; i < ARRAY_SIZE(unsafe_fns); i++)
		if (val[i])
			add_unsafe(t, bias + val[i], bias + val[i] + (size[i] ? size[i] : 1));
	for (i = 0; i < NCALLS; i++)
		t->fn[i] = cval[i] ? bias + cval[i] : 0;
	if (rdbg)
		t->r_debug = bias + rdbg;
	if (!t->r_debug && t->ldso[0]) {
		snprintf(path, sizeof(path), "%s%s", t->root, t->ldso);
		if (elf_open(&ef, path) == 0) {
			if (elf_dynsyms(&ef, rdbg_name, 1, &rdbg, NULL) == 0 && rdbg)
				t->r_debug = t->ldso_base - ef.first_vaddr + rdbg;
			close(ef.fd);
		}
	}
	/* glibc before 2.34 has dlopen in libdl only; its private twins are
	 * always there. */
	if (!t->fn[F_DLOPEN] && t->fn[F_LIBC_DLOPEN]) {
		t->fn[F_DLOPEN] = t->fn[F_LIBC_DLOPEN];
		t->fn[F_DLSYM] = t->fn[F_LIBC_DLSYM];
	}
	if (!t->fn[F_DLOPEN] || !t->fn[F_DLSYM] || !t->trap)
		return msc_err_set(err, -ENOSYS, "pid %d: its libc (%s) has no dlopen", t->pid,
				   t->libc);
	return 0;
}

/* Puts the thread's state back; runs on every path once it was saved. */
static void restore(struct target *t, bool restart_eintr)
{
	struct user_regs_struct r = t->regs;
	struct iovec iov = { t->xstate, t->xstate_len };

	if (t->running_call)
		return;		/* the trap stays for the call it runs */
	if (t->trap_written)
		mem_write(t, t->trap, t->trap_save, sizeof(t->trap_save));
	t->trap_written = false;
	if (t->xstate_len)
		ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov);
	if (restart_eintr) {
		/* As if the call had not been interrupted: run it again. */
		r.rax = r.orig_rax;
		r.rip -= 2;
	}
	ptrace(PTRACE_SETREGS, t->tid, 0, &r);
}

/*
 * The top of the call's stack in the thread's own, when its mapping has
 * OWN_STACK_ROOM below what it uses (past the red zone, and a page for
 * what a signal frame of the kernel's would take), else 0: a stack of
 * its own is mapped then.  Every thread a pthread_create made has 8 MiB
 * by default.  No mmap and munmap in the process: each takes its mmap
 * lock for writing, and among threads that fault pages in and grow their
 * heaps that wait held the stopped thread up to 80 ms.
 */
#define OWN_STACK_ROOM (256u << 10)
/* Once the library is loaded (every attach but the first, and a detach),
 * the calls are dlopen of a loaded library, dlsym and its entry: some KiB
 * (the library's entries use under 2).  The main thread's [stack], often
 * 132 KiB, then has room. */
#define OWN_STACK_ROOM_LOADED (64u << 10)

/* libc's mmap and munmap, for a stack of the calls' own. */
#define SMALL_ROOM (16u << 10)

static uint64_t own_stack(const struct target *t, uint64_t room)
{
	uint64_t top = (t->regs.rsp - 128 - 4096) & ~(uint64_t)63;
	size_t i;

	for (i = 0; i < t->nanon; i++)
		if (t->regs.rsp > t->anon[i].lo && t->regs.rsp <= t->anon[i].hi)
			return top > t->anon[i].lo && top - t->anon[i].lo >= room ? top : 0;
	return 0;
}

/* Where the thread's errno is, and its value (*at 0: unknown). */
static int save_errno(struct target *t, uint64_t top, uint64_t *at, int *val)
{
	int rc;

	*at = 0;
	if (!t->fn[F_ERRNO])
		return 0;
	rc = remote_call(t, top, t->fn[F_ERRNO], 0, 0, at);
	if (rc)
		return rc;
	if (*at && mem_read(t, *at, val, sizeof(*val)))
		*at = 0;
	return 0;
}

/* With the thread stopped at a safe point: the calls, then its state back. */
static int call_in(struct target *t, unsigned flags, const char *entry, const char *arg,
		   long *ret, struct msc_inject_stats *st)
{
	static const unsigned char stub[3] = { 0x0f, 0x05, 0xcc };	/* syscall; int3 */
	struct iovec iov;
	uint64_t stack = 0, top, s_lib, s_entry, s_arg = 0, rv, errno_at = 0, h, fn;
	bool restart = false;
	int saved_errno = 0, rc;
	uint64_t t_call = now_ns();
	size_t len, len_lib, len_entry, len_arg;
	uint64_t small;
	unsigned char b;
	char *strs;

	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
		return msc_err_set(t->err, -ESRCH, "pid %d exited during the attach", t->pid);
	iov.iov_base = t->xstate;
	iov.iov_len = XSTATE_MAX;
	t->xstate_len = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) == 0 ?
				iov.iov_len : 0;
	/* Interrupted in a system call that returns EINTR to a stop, with no
	 * signal of its own: restart it when letting go. */
	if ((int64_t)t->regs.orig_rax >= 0 && (int64_t)t->regs.rax == -EINTR && !t->npending)
		restart = true;
	t->in_syscall = (int64_t)t->regs.orig_rax >= 0;
	top = own_stack(t, t->lib_loaded ? OWN_STACK_ROOM_LOADED : OWN_STACK_ROOM);
	small = own_stack(t, SMALL_ROOM);
	t->ret_at = 0;
	/* The calls return to an int3 of libc's: nothing to write into its
	 * code, nor to put back after them.  On the thread's own stack, or
	 * on one libc's mmap makes them.  Else to the stub's, whose system
	 * call maps them their stack. */
	if ((top || (small && t->fn[F_MMAP] && t->fn[F_MUNMAP])) && t->int3 &&
	    mem_read(t, t->int3, &b, 1) == 0 && b == 0xcc) {
		t->ret_to = t->int3;
	} else {
		if (mem_read(t, t->trap, t->trap_save, sizeof(t->trap_save)) ||
		    mem_write(t, t->trap, stub, sizeof(stub))) {
			rc = write_failed(t);
			goto out;
		}
		t->trap_written = true;
		t->ret_to = t->trap + 2;
	}
	if (!top && !t->trap_written) {
		const uint64_t a[6] = { 0, STACK_SIZE, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, (uint64_t)-1, 0 };

		/* errno first: a failed mmap sets it. */
		rc = save_errno(t, small - 64, &errno_at, &saved_errno);
		rc = rc ? rc : remote_calln(t, small - 64, t->fn[F_MMAP], a, &stack);
		if (rc)
			goto out;
		if (stack == (uint64_t)-1 || !stack) {
			rc = msc_err_set(t->err, -ENOMEM, "pid %d: mmap in the process failed",
					 t->pid);
			stack = 0;
			goto out;
		}
		top = stack + STACK_SIZE;
	} else if (!top) {
		rc = remote_syscall(t, SYS_mmap, 0, STACK_SIZE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, (uint64_t)-1, 0, &stack);
		if (rc)
			goto out;
		if ((int64_t)stack < 0 && (int64_t)stack > -4096) {
			rc = msc_err_set(t->err, (int)(int64_t)stack, "pid %d: mmap in the process: %s",
					 t->pid, strerror(-(int)(int64_t)stack));
			stack = 0;
			goto out;
		}
		top = stack + STACK_SIZE;
	}
	/* Strings at the top of the call's stack (one write), its frames
	 * below: arg, entry, lib. */
	len_lib = strlen(t->lib) + 1;
	len_entry = strlen(entry) + 1;
	len_arg = arg ? strlen(arg) + 1 : 0;
	len = len_arg + len_entry + len_lib;
	strs = malloc(len);
	if (!strs) {
		rc = msc_err_set(t->err, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(strs, arg ? arg : "", len_arg);
	memcpy(strs + len_arg, entry, len_entry);
	memcpy(strs + len_arg + len_entry, t->lib, len_lib);
	top -= len;
	s_arg = arg ? top : 0;
	s_entry = top + len_arg;
	s_lib = s_entry + len_entry;
	rc = mem_write(t, top, strs, len);
	free(strs);
	if (rc) {
		rc = write_failed(t);
		goto out;
	}
	top -= 64;
	if (!errno_at) {
		rc = save_errno(t, top, &errno_at, &saved_errno);
		if (rc)
			goto out;
	}
	rc = remote_call(t, top, t->fn[F_DLOPEN], s_lib,
			 RTLD_NOW_ | ((flags & MSC_INJECT_LOAD) ? 0 : RTLD_NOLOAD_), &h);
	if (rc)
		goto out;
	if (!h) {
		char msg[300] = "";

		if (t->fn[F_DLERROR] && remote_call(t, top, t->fn[F_DLERROR], 0, 0, &rv) == 0)
			read_string(t, rv, msg, sizeof(msg));
		rc = msc_err_set(t->err, -ENOENT, "pid %d: %s: %s", t->pid,
				 (flags & MSC_INJECT_LOAD) ? "dlopen" : "not loaded",
				 msg[0] ? msg : t->lib);
		goto out;
	}
	rc = remote_call(t, top, t->fn[F_DLSYM], h, s_entry, &fn);
	if (rc)
		goto out;
	if (!fn) {
		rc = msc_err_set(t->err, -ENOENT, "pid %d: %s has no %s", t->pid, t->lib, entry);
		goto out;
	}
	/* errno as it was, before the library's entry, which keeps it: once
	 * that returns the process records, and a write to its memory may
	 * wait behind its threads for the mmap lock. */
	if (errno_at) {
		mem_write(t, errno_at, &saved_errno, sizeof(saved_errno));
		errno_at = 0;
	}
	rc = remote_call(t, top, fn, s_arg, 0, &rv);
	if (rc)
		goto out;
	if (ret)
		*ret = (long)rv;
out:
	if (rc != -ESRCH) {
		uint64_t ignored;

		if (errno_at)
			mem_write(t, errno_at, &saved_errno, sizeof(saved_errno));
		if (stack && t->trap_written)
			remote_syscall(t, SYS_munmap, stack, STACK_SIZE, 0, 0, 0, 0, &ignored);
		else if (stack)
			remote_call(t, small - 64, t->fn[F_MUNMAP], stack, STACK_SIZE, &ignored);
		restore(t, restart);
	}
	if (st) {
		st->call_ns = now_ns() - t_call;
		st->restarted = restart;
	}
	return rc;
}

/*
 * Seizes a thread of the process (the best one, choose_thread) and stops
 * it at a safe point: 0, -ESRCH when that thread exited meanwhile (the
 * caller tries another), -ETIMEDOUT, -EAGAIN (no safe point by
 * deadline), -EPERM.
 */
static int stop_at_safe_point(struct target *t, struct msc_procfs *fs, struct msc_inject_stats *st,
			      uint64_t deadline)
{
	int skip[64], nskip = 0;

	for (;;) {
		struct user_regs_struct r;
		int rc;

		if (!t->seized) {
			t->tid = choose_thread(fs, t->pid, skip, nskip);
			if (!t->tid)
				t->tid = t->pid;
			st->tid = t->tid;
			if (ptrace(PTRACE_SEIZE, t->tid, 0, 0) < 0)
				return errno == ESRCH ? -ESRCH : -EPERM;
			t->seized = true;
		}
		rc = interrupt(t);
		if (rc < 0)
			return rc;
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) < 0)
			return -ESRCH;
		if (safe_point(t, &r))
			return 0;
		st->retries++;
		/* Not there: the next best thread, until each was tried (one
		 * may stay inside the allocator: asleep in a signal handler
		 * that interrupted malloc, or in a loop of mallocs while
		 * another thread sleeps in sigwait). */
		if (let_go(t, PTRACE_DETACH) < 0)
			return -ESRCH;
		t->seized = false;
		if (nskip == (int)ARRAY_SIZE(skip))
			nskip = 0;
		skip[nskip++] = t->tid;
		if (now_ns() > deadline)
			return -EAGAIN;
		/* Each tried: 1..25 ms, out of whatever allocation storm
		 * they were in. */
		if (!choose_thread(fs, t->pid, skip, nskip)) {
			nskip = 0;
			nap_us(1000 + (long)((now_ns() / 1000) % 24000));
		}
	}
}

int msc_inject_call(int pid, const char *lib, unsigned flags, const char *entry, const char *arg,
		    int timeout_ms, long *ret, struct msc_inject_stats *st, struct msc_err *err)
{
	struct msc_inject_stats dummy;
	struct target t;
	struct maps_walk mw = { 0 };
	struct msc_procfs fs;
	sigset_t chld, mask_was;
	char path[64];
	uint64_t deadline;
	int rc, tries;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.mem = -1;
	t.lib = lib;
	t.err = err;
	t.timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
	snprintf(t.root, sizeof(t.root), "/proc/%d/root", pid);
	if (msc_procfs_init(&fs, NULL))
		return msc_err_set(err, -ENAMETOOLONG, "proc root");
	/* The tracee's stops come as SIGCHLD: taken by nap_for_stop. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &mask_was);
	rc = check_process(pid, lib, &fs, err);
	if (rc)
		goto out;
	t.xstate = calloc(1, XSTATE_MAX);
	if (!t.xstate) {
		rc = msc_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	mw.t = &t;
	mw.lib = lib;
	mw.have_lib_st = stat(lib, &mw.lib_st) == 0;
	/*
	 * A dynamic program whose libc is not mapped yet has just started
	 * (its loader is at work: an attach a few ms after a launch) or is
	 * going: looked at again for up to 200 ms, rather than called
	 * statically linked.
	 */
	for (tries = 0;; tries++) {
		mw.nmaps = 0;
		mw.lib_loaded = false;
		t.nunsafe = t.nanon = 0;
		t.libc[0] = t.ldso[0] = '\0';
		rc = msc_proc_maps(&fs, pid, on_mapping, &mw, err);
		if (rc == -ENODATA || rc == -ESRCH) {
			/* A zombie has no mm to read: it ended while we looked. */
			rc = msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
			goto out;
		}
		if (rc) {
			rc = msc_err_set(err, rc, "cannot read /proc/%d/maps: %s", pid,
					 strerror(-rc));
			goto out;
		}
		if (t.libc[0])
			break;
		if (!mw.nmaps || process_gone(&fs, pid)) {
			/* An exiting process's maps are empty: not a static binary. */
			rc = msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
			goto out;
		}
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		if (!elf_is_dynamic(path) || tries >= 40)
			break;
		nap_us(5000);
	}
	if (!t.libc[0] && elf_is_dynamic(path)) {
		rc = msc_err_set(err, -EAGAIN,
				 "pid %d has not mapped its libc yet (starting?); try again", pid);
		goto out;
	}
	if (!t.libc[0]) {
		rc = msc_err_set(err, -ENOEXEC,
				 "pid %d has no libc mapped (statically linked?): no library can be loaded into it; ms-record --poll and ms-snap -p still read its memory",
				 pid);
		goto out;
	}
	if (!(flags & MSC_INJECT_LOAD) && !mw.lib_loaded) {
		rc = msc_err_set(err, -ENOENT, "pid %d has not loaded %s", pid, lib);
		goto out;
	}
	t.lib_loaded = mw.lib_loaded;
	rc = load_symbols(&t, err);
	if (rc)
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	t.mem = open(path, O_RDWR | O_CLOEXEC);
	if (t.mem < 0) {
		rc = errno == EACCES || errno == EPERM ? explain_eperm(pid, err) :
		     errno == ENOENT || errno == ESRCH ? msc_err_set(err, -ESRCH, "pid %d exited", pid) :
			msc_err_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	deadline = now_ns() + (uint64_t)t.timeout_ms * 1000000ull;
	for (tries = 0;; tries++) {
		rc = stop_at_safe_point(&t, &fs, st, deadline);
		if (rc != -ESRCH)
			break;
		/* That thread exited (a thread-per-request server's): another
		 * one, unless the process itself is going. */
		waitpid(t.tid, NULL, __WALL | WNOHANG);
		t.seized = t.stopped = false;
		t.npending = 0;
		if (process_gone(&fs, pid) || tries == 16) {
			rc = msc_err_set(err, -ESRCH, "pid %d exited during the attach", pid);
			goto out;
		}
	}
	if (rc == -ETIMEDOUT)
		rc = msc_err_set(err, rc, "pid %d: thread %d did not stop (uninterruptible sleep?)", pid,
				 t.tid);
	else if (rc == -EAGAIN)
		rc = msc_err_set(err, rc,
				 "pid %d: no thread was outside the allocator and loader in %d ms; try again",
				 pid, t.timeout_ms);
	else if (rc == -EPERM)
		rc = explain_eperm_tid(pid, t.tid, true, err);
	if (rc)
		goto out;
	boost(&t);
	rc = call_in(&t, flags, entry, arg, ret, st);
out:
	/* Only a stopped tracee can be detached. */
	if (t.seized && !t.running_call && (t.stopped || interrupt(&t) >= 0))
		let_go(&t, PTRACE_DETACH);
	unboost_asleep(&t, &fs);
	st->stopped_ns = t.stopped_ns;
	if (t.mem >= 0)
		close(t.mem);
	free(t.xstate);
	free(t.unsafe);
	free(t.anon);
	if (t.unw_as)
		unw_destroy_addr_space(t.unw_as);
	msc_procfs_release(&fs);
	pthread_sigmask(SIG_SETMASK, &mask_was, NULL);
	return rc;
}

#endif
