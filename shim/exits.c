/* SPDX-License-Identifier: MIT */
/* The program's exit and exec: an EXIT event, the sampled counts before an exec, the scan's request.  See record.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#include "record.h"
#include "sample.h"
#include "shim.h"

/* ---------------------------------------------------------- exit paths */

static void record_exit(int status)
{
	if (!ACTIVE() || getpid() != g_conf.pid)
		return;
	guard_in();
	record_stackless(MSC_EV_EXIT, 0, (uint64_t)(unsigned)status, 0, 3);
	guard_out();
}

SHIM_EXPORT void exit(int status)
{
	ensure_init();
	record_exit(status);
	if (g_real.exit)
		g_real.exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SHIM_EXPORT void _exit(int status)
{
	ensure_init();
	record_exit(status);
	request_scan();
	if (g_real._exit)
		g_real._exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

SHIM_EXPORT void _Exit(int status)
{
	ensure_init();
	record_exit(status);
	request_scan();
	if (g_real._Exit)
		g_real._Exit(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* ---------------------------------------------------------------- exec */

/*
 * An exec ends the image without its exit: with --sample, what this
 * thread's fast path counted since it last published (up to a draw's
 * bytes of allocations, 4096 frees) goes to its ring's header first, for
 * the collector's end of the image (where it was lost: a program that
 * allocated 100,000 blocks and exec'd ended with 96,448 counted at 512K,
 * 12 at 1T).  Not in a vfork child (another pid, the parent's TLS and
 * ring: the parent's counts stay its own), and not the other threads'
 * (the exec ends them; read from here, they would be counted twice
 * should it fail, and they run on).  A failed exec goes on as before.
 */
static void before_exec(void)
{
	struct tstate *t;

	if (!g_conf.sample || !ACTIVE() || getpid() != g_conf.pid)
		return;
	guard_in();
	t = t_state;
	if (t && t != TSTATE_DEAD && sample_hot())
		sample_publish(t);
	guard_out();
}

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	if (!g_real.execve)
		return (int)syscall(SYS_execve, path, argv, envp);
	return g_real.execve(path, argv, envp);
}

SHIM_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			 int flags)
{
	before_exec();
	if (!g_real.execveat)
		return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
	return g_real.execveat(dirfd, path, argv, envp, flags);
}

/* glibc's execv, execvp, execvpe, fexecve and execl* call its execve by
 * its hidden name, never ours: each is the real one, after before_exec. */
#define EXEC_PASS(real, ...)                                                    \
	do {                                                                    \
		before_exec();                                                  \
		if (!(real)) {                                                  \
			errno = ENOSYS;                                         \
			return -1;                                              \
		}                                                               \
		return (real)(__VA_ARGS__);                                     \
	} while (0)

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
	EXEC_PASS(g_real.execv, path, argv);
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
	EXEC_PASS(g_real.execvp, file, argv);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_PASS(g_real.execvpe, file, argv, envp);
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	EXEC_PASS(g_real.fexecve, fd, argv, envp);
}

/* execl, execle, execlp: their arguments into an array on the stack (as
 * glibc's own do), then execv's, execve's, execvp's way. */
enum exec_list_how { EXEC_L, EXEC_LE, EXEC_LP };

static int exec_list(enum exec_list_how how, const char *path, const char *arg, va_list ap)
{
	va_list count;
	size_t n = 1, i = 0;

	va_copy(count, ap);
	if (arg)
		while (va_arg(count, const char *))
			n++;
	va_end(count);
	{
		char *argv[n + 1];

		argv[i] = (char *)arg;
		while (argv[i])
			argv[++i] = va_arg(ap, char *);
		if (how == EXEC_LE)
			EXEC_PASS(g_real.execve, path, argv, va_arg(ap, char *const *));
		if (how == EXEC_LP)
			EXEC_PASS(g_real.execvp, path, argv);
		EXEC_PASS(g_real.execv, path, argv);
	}
}

/* The exported variadic ones, each exec_list's way. */
#define EXEC_LIST_FN(name, how)                                                 \
	SHIM_EXPORT int name(const char *path, const char *arg, ...)            \
	{                                                                       \
		va_list ap;                                                     \
		int ret;                                                        \
		va_start(ap, arg);                                              \
		ret = exec_list(how, path, arg, ap);                            \
		va_end(ap);                                                     \
		return ret;                                                     \
	}

EXEC_LIST_FN(execl, EXEC_L)
EXEC_LIST_FN(execlp, EXEC_LP)
EXEC_LIST_FN(execle, EXEC_LE)
