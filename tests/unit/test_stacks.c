/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of msc_stacks on this test program's own code (built with -g):
 * two call instructions on one source line are one location and one stack;
 * every address is symbolized once and cached once, however often it comes
 * back (a lost cache entry once made the collector symbolize the same
 * addresses again and again, and its address table grow without bound).
 * Stacks written as format version 2 read back as the stacks they are, each
 * frame written once, and stacks that branch share what is above them.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_format.h"
#include "msc_stacks.h"

__attribute__((noinline)) static void *here(void)
{
	void *ra = __builtin_return_address(0);

	__asm__ volatile("" ::: "memory");
	return ra;
}

/* Two calls, two return addresses, one line. */
__attribute__((noinline)) static void two_on_one_line(void **a, void **b)
{
	*a = here(); *b = here();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void *elsewhere(void)
{
	void *p = here();

	__asm__ volatile("" ::: "memory");
	return p;
}

/* The frame of an address of this program. */
static struct msc_frame_ref frame_of(struct msc_stacks *st, void *ip)
{
	Dl_info info;
	struct msc_frame_ref f;
	long mod;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	assert_true(dladdr(ip, &info) != 0);
	mod = msc_stacks_module(st, exe, NULL, 0);
	assert_true(mod >= 0);
	f.module = (uint32_t)mod;
	f.addr = (uint64_t)(uintptr_t)ip - (uint64_t)(uintptr_t)info.dli_fbase;
	f.ip = (uint64_t)(uintptr_t)ip;
	return f;
}

static void test_one_line_one_location(void **state)
{
	struct msc_stacks st;
	struct msc_frame_ref fa, fb, fc;
	void *a, *b;
	uint32_t ida, idb, idc, i;
	uint32_t nsf;

	(void)state;
	assert_int_equal(msc_stacks_init(&st, true), 0);
	two_on_one_line(&a, &b);
	assert_ptr_not_equal(a, b);
	fa = frame_of(&st, a);
	fb = frame_of(&st, b);
	fc = frame_of(&st, elsewhere());
	ida = msc_stacks_intern(&st, &fa, 1);
	assert_int_not_equal(ida, 0);
	nsf = st.nsf;
	idb = msc_stacks_intern(&st, &fb, 1);
	/* The same source line: the same location, the same stack. */
	assert_int_equal(idb, ida);
	assert_int_equal(st.nsf, nsf);
	idc = msc_stacks_intern(&st, &fc, 1);
	assert_int_not_equal(idc, ida);
	/* Seen again and again: nothing new is cached or created. */
	for (i = 0; i < 1000; i++) {
		assert_int_equal(msc_stacks_intern(&st, &fb, 1), ida);
		assert_int_equal(msc_stacks_intern(&st, &fa, 1), ida);
		assert_int_equal(msc_stacks_intern(&st, &fc, 1), idc);
	}
	assert_int_equal(st.naddrs, 3);
	assert_int_equal(st.sf_by_addr.count, 3);
	assert_int_equal(st.nstacks, 3);	/* [0] unused */
	msc_stacks_release(&st);
}

/* ------------------------------------------------------------ writing */

/* A stack of made-up addresses outside any module, innermost first. */
static uint32_t intern_addrs(struct msc_stacks *st, const uint64_t *addrs, unsigned n)
{
	struct msc_frame_ref f[16];
	unsigned i;

	for (i = 0; i < n; i++)
		f[i] = (struct msc_frame_ref){ MSC_NO_MODULE, addrs[i], addrs[i] };
	return msc_stacks_intern(st, f, n);
}

struct written {
	char *text;
	size_t len;
};

/* What w wrote to f, as a string. */
static void take(FILE *f, struct msc_writer *w, struct written *out)
{
	assert_int_equal(msc_writer_release(w), 0);
	out->len = (size_t)ftell(f);
	out->text = malloc(out->len + 1);
	assert_non_null(out->text);
	rewind(f);
	assert_int_equal(fread(out->text, 1, out->len, f), out->len);
	out->text[out->len] = '\0';
	fclose(f);
}

/* Reads a written stream into d; counts its frame and stack records and
 * checks that no frame id comes twice. */
static void read_back(const struct written *wr, struct msc_stackdefs *d, unsigned *frames,
		      unsigned *stacks)
{
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_err err = { 0 };
	struct msc_rframe *fr;
	unsigned n, attr;

	*frames = *stacks = 0;
	assert_int_equal(msc_stackdefs_init(d), 0);
	msc_reader_init_mem(&r, wr->text, wr->len, "written");
	while (msc_reader_next(&r, &rec, &err) > 0) {
		uint64_t id = 0;

		assert_int_equal(msc_rec_u64(&rec, "id", &id), 0);
		if (msc_rec_rtype(&rec) == MSC_R_FRAME) {
			assert_null(msc_u64map_get(&d->frames, id));
			assert_int_equal(msc_stackdefs_frame(d, &rec, NULL, &err), 0);
			(*frames)++;
		} else {
			assert_int_equal(msc_rec_rtype(&rec), MSC_R_STACK);
			assert_null(msc_stackdefs_get(d, id));
			if (msc_stack_frames(d, &rec, NULL, 0, &fr, &n, &attr, &err))
				fail_msg("%s", err.msg);
			(*stacks)++;
		}
	}
	msc_reader_release(&r);
}

/* Stack id read back is these addresses. */
static void check_stack(struct msc_stackdefs *d, uint32_t id, const uint64_t *addrs, unsigned n)
{
	const struct msc_stackdef *s = msc_stackdefs_get(d, id);
	char want[32];
	unsigned i;

	assert_non_null(s);
	assert_int_equal(s->n, n);
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "0x%llx", (unsigned long long)addrs[i]);
		assert_non_null(s->frames[i].json);
		assert_non_null(strstr(s->frames[i].json, want));
	}
}

static void test_written_stacks_share_their_outer_part(void **state)
{
	static const uint64_t a[] = { 0x101, 0x202, 0x303, 0x404 };
	static const uint64_t b[] = { 0x505, 0x202, 0x303, 0x404 };
	static const uint64_t c[] = { 0x606, 0x303, 0x404 };
	static const uint64_t e[] = { 0x707, 0x202, 0x303, 0x404 };
	static const uint64_t f[] = { 0x808, 0x101, 0x202, 0x303, 0x404 };
	static const uint64_t g[] = { 0x202, 0x303, 0x404 };
	struct msc_stacks st;
	struct msc_stacks_out live;
	struct msc_writer w;
	struct msc_stackdefs d;
	struct written main_out, live_out;
	const struct msc_stackdef *s;
	uint32_t ia, ib, ic, ie, iff, ig, nstacks;
	unsigned nframes, nrecs;
	FILE *out = tmpfile();

	(void)state;
	assert_non_null(out);
	assert_int_equal(msc_stacks_init(&st, false), 0);
	ia = intern_addrs(&st, a, 4);
	ib = intern_addrs(&st, b, 4);
	ic = intern_addrs(&st, c, 3);
	ie = intern_addrs(&st, e, 4);
	iff = intern_addrs(&st, f, 5);
	nstacks = st.nstacks;
	assert_int_equal(msc_writer_init(&w, fileno(out), 0), 0);
	msc_stacks_write(&st, &w, ia);
	msc_stacks_write(&st, &w, ia);		/* once */
	msc_stacks_write(&st, &w, ib);
	msc_stacks_write(&st, &w, ic);
	msc_stacks_write(&st, &w, ie);
	msc_stacks_write(&st, &w, iff);
	assert_int_equal(w.error, 0);
	take(out, &w, &main_out);
	/* b branched off a in a's own frames: what they share, 0x202 and
	 * above, became a stack, and so did 0x303 and above for c. */
	assert_int_equal(st.nstacks, nstacks + 2);
	ig = intern_addrs(&st, g, 3);
	assert_int_equal(ig, nstacks);
	read_back(&main_out, &d, &nframes, &nrecs);
	assert_int_equal(nframes, 8);		/* each address once */
	assert_int_equal(nrecs, 7);
	check_stack(&d, ia, a, 4);
	check_stack(&d, ib, b, 4);
	check_stack(&d, ic, c, 3);
	check_stack(&d, ie, e, 4);
	check_stack(&d, iff, f, 5);
	check_stack(&d, ig, g, 3);
	/* b, e: one frame of their own and the shared stack above. */
	s = msc_stackdefs_get(&d, ib);
	assert_int_equal(s->nown, 1);
	assert_int_equal(s->parent_id, ig);
	assert_int_equal(msc_stackdefs_get(&d, ie)->parent_id, ig);
	/* f: a whole written stack above it. */
	s = msc_stackdefs_get(&d, iff);
	assert_int_equal(s->nown, 1);
	assert_int_equal(s->parent_id, ia);
	assert_int_equal(msc_stackdefs_get(&d, ic)->nown, 1);
	msc_stackdefs_release(&d);

	/* Another stream (a live snapshot) gets what it needs, by itself. */
	out = tmpfile();
	assert_non_null(out);
	assert_int_equal(msc_writer_init(&w, fileno(out), 0), 0);
	assert_int_equal(msc_stacks_out_init(&live), 0);
	msc_stacks_write_to(&st, &live, &w, ie);
	msc_stacks_write_to(&st, &live, &w, ic);
	msc_stacks_out_release(&live);
	take(out, &w, &live_out);
	read_back(&live_out, &d, &nframes, &nrecs);
	assert_int_equal(nframes, 5);
	check_stack(&d, ie, e, 4);
	check_stack(&d, ic, c, 3);
	msc_stackdefs_release(&d);
	free(main_out.text);
	free(live_out.text);
	msc_stacks_release(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_line_one_location),
		cmocka_unit_test(test_written_stacks_share_their_outer_part),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
