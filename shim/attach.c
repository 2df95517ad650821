/* SPDX-License-Identifier: MIT */
/*
 * Attach mode: libmemscope.so loaded into a process that is already running
 * (ms-record -p, through msc_inject.h), where LD_PRELOAD is too late.
 *
 * memscope_attach(sock), on a thread ms-record stopped, claims the library
 * for a session and starts a thread of the library's own that does the rest
 * (the thread stopped for about a millisecond, not for the collector's
 * answer): it starts a session with the collector at sock, then patches
 * the GOT slots that name an allocation function to point at our hooks
 * (got.c).
 *
 * memscope_detach_start() stops recording, and the library's thread writes
 * back every slot that still holds our hook (memscope_detach() does both on
 * the calling thread); the library is never unloaded (threads may be inside a
 * hook, or hold a pointer read from a patched slot).  No such function
 * takes a lock a hook could hold, nor allocates through malloc.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

SHIM_EXPORT long memscope_attach(const char *sock);
SHIM_EXPORT long memscope_detach(void);
SHIM_EXPORT long memscope_detach_start(void);

/* The session claimed (shim_session_claim): it begins, and the slots
 * become ours.  0 or -errno (the claim then let go). */
static long attach_run(const char *sock)
{
	Dl_info info;
	void *self;
	long rc;

	if (!dladdr((void *)memscope_attach, &info) || !info.dli_fname ||
	    !(self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD))) {
		shim_session_unclaim();
		return -ENOENT;
	}
	got_attach_hooks(self, (uintptr_t)info.dli_fbase);
	rc = shim_session_attach(sock);
	if (rc)
		return rc;
	got_patch_start();
	shim_session_attach_begin();
	return 0;
}

/*
 * The attach's own thread: the collector's answer can take milliseconds on
 * a busy machine (ms-record's thread waiting for a CPU), and the thread
 * ms-record stopped would wait for it.  Every signal blocked, so that none
 * of the program's comes here; the guard held to its end, its exit
 * included, so that it records nothing.  Its result, for ms-record to read
 * from the process: 0 while it runs, 1 recording, or -errno.
 */
static volatile int attach_status;
static char attach_sock[sizeof(((struct sockaddr_un *)0)->sun_path)];

static bool attach_orphan;		/* a dead recorder's session ends first */

/* The session of a recorder that died (SIGKILL): recording stopped, its
 * region and slots go before the next session begins. */
static void orphan_end(void)
{
	shim_session_detach_rest();
	got_slots_back();
}

static void *attach_thread(void *arg)
{
	long rc;

	(void)arg;
	guard_in();
	if (attach_orphan)
		orphan_end();
	rc = attach_run(attach_sock);
	__atomic_store_n(&attach_status, rc ? (int)rc : 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A thread of the library's own, for what follows a call into the stopped
 * thread; false when none can be made. */
static bool lib_thread_start(void *(*fn)(void *))
{
	pthread_attr_t a;
	pthread_t th;
	sigset_t all, was;
	int rc;

	if (pthread_attr_init(&a))
		return false;
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 256u << 10);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was);
	rc = pthread_create(&th, &a, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	pthread_attr_destroy(&a);
	return rc == 0;
}

/*
 * errno is kept: ms-record puts the thread's back before the call, and
 * writes nothing to the process after it (libmsc/inject.c).  Returns
 * -errno; 0 once recording began here (no thread could be made); or, the
 * attach's thread started, the address of attach_status.
 */
long memscope_attach(const char *sock)
{
	int saved = errno;
	bool orphan = false;
	long rc;

	/* ms-record was killed (SIGKILL): its session ends here, and this
	 * one begins (both on the library's thread). */
	if (sock && strlen(sock) < sizeof(attach_sock) && shim_session_claim_orphaned()) {
		orphan = true;
		rc = 0;
	} else {
		rc = shim_session_claim(sock);
	}
	if (rc == 0) {
		memcpy(attach_sock, sock, strlen(sock) + 1);
		attach_orphan = orphan;
		__atomic_store_n(&attach_status, 0, __ATOMIC_RELEASE);
		if (lib_thread_start(attach_thread)) {
			rc = (long)(uintptr_t)&attach_status;
		} else {
			if (orphan)
				orphan_end();
			rc = attach_run(sock);
		}
	}
	errno = saved;
	return rc;
}

/* An attach's thread at work (ms-record reads its result before it
 * detaches), or a detach's: its work first, a second at most. */
static void wait_unclaimed(void)
{
	unsigned wait;

	for (wait = 0; shim_session_claimed() && wait < 1000; wait++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

/*
 * The detach ms-record makes: recording stops on the thread it stopped, the
 * library's thread buries the region and writes the slots back (the
 * mappings they change wait for the process's threads).  Returns the
 * address of detach_status: done 1 once that is over, with result as
 * memscope_detach returns it.
 */
static struct {
	volatile int done;
	int pad;
	volatile long result;
} detach_status;

static void detach_rest(void)
{
	long rc;

	shim_session_detach_rest();
	rc = got_slots_back();
	shim_session_detach_end();
	detach_status.result = rc;
	__atomic_store_n(&detach_status.done, 1, __ATOMIC_RELEASE);
}

static void *detach_thread(void *arg)
{
	(void)arg;
	guard_in();	/* to its end: it records nothing */
	detach_rest();
	return NULL;
}

long memscope_detach_start(void)
{
	int saved = errno;

	wait_unclaimed();
	/* Recording stops first, for every hook at once (memscope_detach). */
	shim_session_detach_begin();
	__atomic_store_n(&detach_status.done, 0, __ATOMIC_RELEASE);
	if (!lib_thread_start(detach_thread)) {
		guard_in();
		detach_rest();
		guard_out();
	}
	errno = saved;
	return (long)(uintptr_t)&detach_status;
}

long memscope_detach(void)
{
	int saved = errno;
	long rc;

	wait_unclaimed();
	/*
	 * Recording stops first, for every hook at once.  The other threads
	 * run on while the slots are written back one by one: with new's
	 * restored and delete's not yet, a block new gave out unseen and its
	 * delete seen was a double free of the block the address held before
	 * (node, whose threads allocate all the time: dozens at each detach).
	 */
	shim_session_detach();
	/* Negative: how many slots still hold a hook (ms-record says so). */
	rc = got_slots_back();
	errno = saved;
	return rc;
}
