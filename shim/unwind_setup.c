/* SPDX-License-Identifier: MIT */
/*
 * The unwinder's setup and its libunwind side: unwind_global_init, at each
 * session start; libunwind, loaded privately from the constructor, and its
 * captures, for --unwind libunwind and for the frames the rules cannot
 * describe (unwind.c); and MEMSCOPE_UNWIND_CHECK, which compares every
 * capture with libunwind's and reports at exit.  None of it runs on the
 * walk's own path, which stays in unwind.c.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "unwind_internal.h"

uint64_t shim_text_lo, shim_text_hi;

/* ---------------------------------------------------------------- setup */

/* The executable segment holding code address `at`. */
struct text_of {
	uint64_t at, lo, hi;
};

static int text_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_of *x = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && x->at >= start &&
		    x->at < start + ph->p_memsz) {
			x->lo = start;
			x->hi = start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void unwind_global_init(uintptr_t *rtld_lo, uintptr_t *rtld_len)
{
	const char *e = secure_getenv("MEMSCOPE_UNWIND_CHECK");
	struct text_of self = { (uint64_t)(uintptr_t)unwind_global_init, 0, 0 };
	/* __tls_get_addr: the loader's (ld.so's) own, with nothing ahead of
	 * it to interpose. */
	struct text_of rtld = { (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "__tls_get_addr"), 0, 0 };

	find_object = (int (*)(void *, struct shim_dl_find_object *))dlsym(RTLD_DEFAULT,
									   "_dl_find_object");
	dl_iterate_phdr(text_cb, &self);
	shim_text_lo = self.lo;
	shim_text_hi = self.hi;
	if (rtld.at && dl_iterate_phdr(text_cb, &rtld)) {
		*rtld_lo = rtld.lo;
		__atomic_store_n(rtld_len, rtld.hi - rtld.lo, __ATOMIC_RELAXED);
	}
	check_mode = e && *e == '1';
}

void unwind_load_libunwind(void)
{
	/* RTLD_LOCAL: libunwind's backtrace() and _Unwind_* must not join
	 * the program's global scope.  Called from the constructor, never
	 * from inside an allocation (dlopen takes the loader lock). */
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

	if (h)
		unw_backtrace_fn = (int (*)(void **, int))dlsym(h, "unw_backtrace");
}

/* ------------------------------------------------------------ libunwind */

int (*unw_backtrace_fn)(void **, int);

/* Not inlined: its buffer (and the check's, unwind_check) stay off the
 * stack of the hooks that take the other ways (2.3 KiB of unwind_capture's
 * frame: a thread of the program needed that much more stack). */
__attribute__((noinline)) int libunwind_capture(uint64_t *ips, int max)
{
	void *buf[TRACE_MAX + 16];
	int n, i, out = 0;
	bool in_shim = true;

	if (!unw_backtrace_fn)
		return 0;
	n = unw_backtrace_fn(buf, max + 16 < (int)(sizeof(buf) / sizeof(buf[0])) ?
					  max + 16 : (int)(sizeof(buf) / sizeof(buf[0])));
	for (i = 0; i < n && out < max; i++) {
		uint64_t ip = (uint64_t)(uintptr_t)buf[i];

		/* Our own frames come first: the hook, the recorder, this. */
		if (in_shim && ip >= shim_text_lo && ip < shim_text_hi)
			continue;
		in_shim = false;
		ips[out++] = ip;
	}
	return out;
}

/* ---------------------------------------------------------------- check */

bool check_mode;
static uint64_t check_total, check_bad, check_cached;
uint64_t tc_why[TC_REASONS];

void unwind_report(void)
{
	char line[384];
	int len;

	if (!check_mode)
		return;
	len = snprintf(line, sizeof(line),
		       "memscope: unwind check: %llu captures, %llu mismatches (%llu from the trace cache)\n"
		       "memscope: trace cache misses: %llu no layout, %llu no trace; walks not filed: "
		       "%llu short, %llu too deep; %llu layouts pushed out by their start's\n",
		       (unsigned long long)check_total, (unsigned long long)check_bad,
		       (unsigned long long)check_cached, (unsigned long long)tc_why[TC_NO_LAYOUT],
		       (unsigned long long)tc_why[TC_NO_TRACE], (unsigned long long)tc_why[TC_FILE_SHORT],
		       (unsigned long long)tc_why[TC_FILE_DEEP], (unsigned long long)tc_why[TC_FILE_OTHER]);
	if (len > (int)sizeof(line) - 1)
		len = (int)sizeof(line) - 1;
	if (write(2, line, (size_t)len) < 0)
		return;
}

static void report_mismatch(const uint64_t *ours, int n, const uint64_t *ref, int m)
{
	char line[128];
	int len, i;

	len = snprintf(line, sizeof(line), "memscope: unwind check: ours %d frames, libunwind %d\n",
		       n, m);
	if (write(2, line, (size_t)len) < 0)
		return;
	/* Where they differ: from the first difference on, 16 frames. */
	for (i = 0; i < n && i < m && ours[i] == ref[i]; i++)
		;
	i = i > 2 ? i - 2 : 0;
	for (int stop = i + 16; i < (n > m ? n : m) && i < stop; i++) {
		len = snprintf(line, sizeof(line), "  #%-2d %016llx %016llx%s\n", i,
			       i < n ? (unsigned long long)ours[i] : 0ull,
			       i < m ? (unsigned long long)ref[i] : 0ull,
			       i < n && i < m && ours[i] == ref[i] ? "" : "  <-");
		if (write(2, line, (size_t)len) < 0)
			return;
	}
}

/* MEMSCOPE_UNWIND_CHECK: the walk against libunwind's. */
__attribute__((noinline)) void unwind_check(struct unwind_state *us, uint64_t *ips, int max,
					    struct capture *c)
{
	uint64_t ref[TRACE_MAX];
	int m = libunwind_capture(ref, max), i;
	bool same = m == c->n;

	if (!c->have_ips) {
		/* A cached capture gave only (n, hash): check those. */
		struct capture walked = *c;
		bool hit = us->tc_hit;

		unwind_fill_ips(us, ips);
		hash_ips(ips, &walked);
		same = same && walked.h1 == c->h1 && walked.h2 == c->h2;
		if (hit)
			__atomic_add_fetch(&check_cached, 1, __ATOMIC_RELAXED);
	}
	for (i = 0; same && i < c->n; i++)
		same = ref[i] == ips[i];
	__atomic_add_fetch(&check_total, 1, __ATOMIC_RELAXED);
	if (!same && __atomic_add_fetch(&check_bad, 1, __ATOMIC_RELAXED) <= 3)
		report_mismatch(ips, c->n, ref, m);
}
