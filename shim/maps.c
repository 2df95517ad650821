/* SPDX-License-Identifier: MIT */
/* libmemscope.so's hooks of mmap, munmap, mremap, brk and sbrk: see record.h. */
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

/* ---------------------------------------------------- mappings and brk */

/* MMAP, MREMAP, BRK: events with a stack and up to four values. */
static void record_region(void *frame, unsigned type, const uint64_t *v, unsigned nv)
{
	struct tstate *t = get_tstate();

	if (!t)
		return;
	shared_lock(t);
	emit(t, type, 0, stack_id(t, frame), v, nv);
	shared_unlock(t);
}

SHIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	ensure_init();
	if (unlikely(!g_real.mmap))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (!ACTIVE() || !(flags & MAP_ANONYMOUS) || (flags & MAP_SHARED))
		return g_real.mmap(addr, len, prot, flags, fd, off);
	guard_in();
	p = g_real.mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)p, len };

		record_region(__builtin_frame_address(0), MSC_EV_MMAP, v, 2);
	}
	guard_out();
	return p;
}

SHIM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

SHIM_EXPORT int munmap(void *addr, size_t len)
{
	int ret;

	ensure_init();
	if (unlikely(!g_real.munmap))
		return (int)syscall(SYS_munmap, addr, len);
	if (!ACTIVE())
		return g_real.munmap(addr, len);
	guard_in();
	/* Like free: before the range can be handed out again. */
	record_stackless(MSC_EV_MUNMAP, MSC_FN_NONE, (uint64_t)(uintptr_t)addr, len, 4);
	ret = g_real.munmap(addr, len);
	guard_out();
	return ret;
}

SHIM_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *p, *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	ensure_init();
	if (unlikely(!g_real.mremap))
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	if (!ACTIVE())
		return g_real.mremap(old, old_len, new_len, flags, new_addr);
	guard_in();
	p = g_real.mremap(old, old_len, new_len, flags, new_addr);
	if (p != MAP_FAILED) {
		uint64_t v[4] = { (uint64_t)(uintptr_t)old, old_len, (uint64_t)(uintptr_t)p, new_len };

		record_region(__builtin_frame_address(0), MSC_EV_MREMAP, v, 4);
	}
	guard_out();
	return p;
}

SHIM_EXPORT int brk(void *end)
{
	void *old;
	int ret;

	ensure_init();
	if (!g_real.brk || !g_real.sbrk)
		return (int)syscall(SYS_brk, end) == (long)end ? 0 : -1;
	if (!ACTIVE())
		return g_real.brk(end);
	guard_in();
	old = g_real.sbrk(0);
	ret = g_real.brk(end);
	if (ret == 0) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)old, (uint64_t)(uintptr_t)end };

		record_region(__builtin_frame_address(0), MSC_EV_BRK, v, 2);
	}
	guard_out();
	return ret;
}

SHIM_EXPORT void *sbrk(intptr_t inc)
{
	void *old;

	ensure_init();
	if (!g_real.sbrk)
		return (void *)-1;
	if (!ACTIVE() || inc == 0)
		return g_real.sbrk(inc);
	guard_in();
	old = g_real.sbrk(inc);
	if (old != (void *)-1) {
		uint64_t v[2] = { (uint64_t)(uintptr_t)old, (uint64_t)(uintptr_t)old + (uint64_t)inc };

		record_region(__builtin_frame_address(0), MSC_EV_BRK, v, 2);
	}
	guard_out();
	return old;
}
