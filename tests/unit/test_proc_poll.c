/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of polling /proc files through open descriptors (msc_proc_open,
 * msc_proc_reread and the msc_proc_parse_* functions of msc_proc.h), what
 * ms-top does at every refresh: against the fixture trees of
 * tests/fixtures/proc (figures as in test_proc.c: the fixtures' kB * 1024,
 * pages * 4096, ticks at 100 Hz), and against the running kernel for what
 * no file can show: a descriptor outlives its process, and smaps_rollup
 * outlives the image it was opened on.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_proc.h"

#define KB(n) ((uint64_t)(n) * 1024)
#define PAGES(n) ((uint64_t)(n) * 4096)

static void fixture_fs(struct msc_procfs *fs, const char *name)
{
	const char *d = getenv("MSC_FIXTURES");
	char root[256];

	snprintf(root, sizeof(root), "%s/%s", d ? d : "tests/fixtures/proc", name);
	assert_int_equal(msc_procfs_init(fs, root), 0);
	fs->page_size = 4096;
	fs->clk_tck = 100;
}

/* The same figures through a descriptor read twice as through a path. */
static void test_reread_fixture(void **state)
{
	struct msc_procfs fs;
	struct msc_pstat st, by_path;
	struct msc_pstatus ps;
	struct msc_memcounts mc;
	long len, len2;
	int fd, i;

	(void)state;
	fixture_fs(&fs, "normal");
	fd = msc_proc_open(&fs, 4242, "stat");
	assert_true(fd >= 0);
	for (i = 0; i < 2; i++) {
		len = msc_proc_reread(&fs, fd);
		assert_true(len > 0);
		assert_int_equal(strlen(fs.buf), len);
		assert_int_equal(msc_proc_parse_stat(&fs, 4242, &st, NULL), 0);
		assert_int_equal(st.pid, 4242);
		assert_string_equal(st.comm, "sleep");
		assert_int_equal(st.state, 'S');
		assert_int_equal(st.ppid, 4200);
		assert_int_equal(st.starttime, 1342490000000ull);
		assert_int_equal(st.rss, PAGES(330));
	}
	close(fd);
	assert_int_equal(msc_proc_stat(&fs, 4242, &by_path, NULL), 0);
	assert_memory_equal(&st, &by_path, sizeof(st));

	fd = msc_proc_open(&fs, 4242, "status");
	assert_true(fd >= 0);
	assert_true(msc_proc_reread(&fs, fd) > 0);
	assert_int_equal(msc_proc_parse_status(&fs, 4242, &ps, NULL), 0);
	assert_int_equal(ps.uid, 1000);
	assert_int_equal(ps.vm_rss, KB(1320));
	assert_int_equal(ps.vm_swap, KB(32));
	close(fd);

	fd = msc_proc_open(&fs, 4242, "smaps_rollup");
	assert_true(fd >= 0);
	len = msc_proc_reread(&fs, fd);
	len2 = msc_proc_reread(&fs, fd);	/* from the start again, not from EOF */
	assert_int_equal(len, len2);
	assert_int_equal(msc_proc_parse_rollup(&fs, len, &mc), 0);
	assert_int_equal(mc.rss, KB(1320));
	assert_int_equal(mc.pss, KB(532));
	assert_int_equal(mc.private_clean + mc.private_dirty, KB(256));
	assert_int_equal(mc.swap, KB(32));
	assert_true(mc.has_pss_split);
	close(fd);
	msc_procfs_release(&fs);
}

static void test_open_errors(void **state)
{
	struct msc_procfs fs;
	struct msc_memcounts mc;

	(void)state;
	fixture_fs(&fs, "vanished");
	assert_int_equal(msc_proc_open(&fs, 4242, "stat"), -ESRCH);
	msc_procfs_release(&fs);

	/* kthreadd has no smaps_rollup file in the fixture: -ENOENT, not gone */
	fixture_fs(&fs, "kthread");
	assert_int_equal(msc_proc_open(&fs, 2, "smaps_rollup"), -ENOENT);
	msc_procfs_release(&fs);

	/* an empty smaps_rollup (a zombie on older kernels) has no figures */
	fixture_fs(&fs, "zombie");
	{
		int fd = msc_proc_open(&fs, 5001, "smaps_rollup");
		long len;

		assert_true(fd >= 0);
		len = msc_proc_reread(&fs, fd);
		assert_int_equal(len, 0);
		assert_int_equal(msc_proc_parse_rollup(&fs, len, &mc), -ENODATA);
		close(fd);
	}
	msc_procfs_release(&fs);
}

/* A file larger than the buffer comes whole, whatever the reads return. */
static void test_reread_large(void **state)
{
	char root[] = "/tmp/msc-test-poll.XXXXXX", path[128], cmd[160];
	struct msc_procfs fs;
	FILE *f;
	long len;
	int fd, i;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/1", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/1/smaps", root);
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 0; i < 10000; i++)
		fprintf(f, "line %05d of a file of 370000 bytes\n", i);	/* 37 bytes */
	assert_int_equal(fclose(f), 0);
	assert_int_equal(msc_procfs_init(&fs, root), 0);
	fd = msc_proc_open(&fs, 1, "smaps");
	assert_true(fd >= 0);
	len = msc_proc_reread(&fs, fd);
	assert_int_equal(len, 370000);
	assert_int_equal(strlen(fs.buf), 370000);
	assert_memory_equal(fs.buf + 369963, "line 09999 of a file of 370000 bytes\n", 37);
	assert_int_equal(msc_proc_reread(&fs, fd), 370000);
	close(fd);
	msc_procfs_release(&fs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static int add_pid(int pid, void *arg)
{
	int *sum = arg;

	*sum += pid;
	return 0;
}

static int stop_at_first(int pid, void *arg)
{
	*(int *)arg = pid;
	return 7;
}

/* The listing with its directory kept open: the same pids every time. */
static void test_foreach_kept(void **state)
{
	struct msc_procfs fs;
	DIR *dir = NULL;
	int sum, i;

	(void)state;
	fixture_fs(&fs, "zombie");	/* pids 5000 and 5001 */
	for (i = 0; i < 3; i++) {
		sum = 0;
		assert_int_equal(msc_proc_foreach_pid_at(&fs, &dir, add_pid, &sum), 0);
		assert_non_null(dir);
		assert_int_equal(sum, 10001);
	}
	assert_int_equal(msc_proc_foreach_pid_at(&fs, &dir, stop_at_first, &sum), 7);
	assert_true(sum == 5000 || sum == 5001);
	closedir(dir);
	msc_procfs_release(&fs);

	dir = NULL;
	fixture_fs(&fs, "no_such_case");
	assert_int_equal(msc_proc_foreach_pid_at(&fs, &dir, add_pid, &sum), -ENOENT);
	assert_null(dir);
	msc_procfs_release(&fs);
}

/* A descriptor names its process: once reaped, -ESRCH, whatever the pid does. */
static void test_live_gone(void **state)
{
	struct msc_procfs fs;
	struct msc_pstat st;
	int fd, rfd, wstatus;
	pid_t pid;

	(void)state;
	if (access("/proc/self/smaps_rollup", R_OK) != 0)
		skip();
	assert_int_equal(msc_procfs_init(&fs, NULL), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	fd = msc_proc_open(&fs, pid, "stat");
	rfd = msc_proc_open(&fs, pid, "smaps_rollup");
	assert_true(fd >= 0);
	assert_true(rfd >= 0);
	assert_true(msc_proc_reread(&fs, fd) > 0);
	assert_int_equal(msc_proc_parse_stat(&fs, pid, &st, NULL), 0);
	assert_int_equal(st.pid, pid);
	assert_true(msc_proc_reread(&fs, rfd) > 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	assert_int_equal(msc_proc_reread(&fs, fd), -ESRCH);
	assert_int_equal(msc_proc_reread(&fs, rfd), -ESRCH);
	close(fd);
	close(rfd);
	msc_procfs_release(&fs);
}

/* smaps_rollup opened before an execve reads the old image: -ESRCH. */
static void test_live_exec(void **state)
{
	struct msc_procfs fs;
	struct msc_pstat st;
	struct timespec ts = { 0, 5000000 };
	int pfd[2], sfd, rfd, wstatus, i;
	pid_t pid;

	(void)state;
	if (access("/proc/self/smaps_rollup", R_OK) != 0 || access("/bin/sleep", X_OK) != 0)
		skip();
	assert_int_equal(msc_procfs_init(&fs, NULL), 0);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;

		close(pfd[1]);
		if (read(pfd[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(1);
	}
	close(pfd[0]);
	sfd = msc_proc_open(&fs, pid, "stat");
	rfd = msc_proc_open(&fs, pid, "smaps_rollup");
	assert_true(sfd >= 0 && rfd >= 0);
	assert_true(msc_proc_reread(&fs, rfd) > 0);
	assert_int_equal(write(pfd[1], "x", 1), 1);
	for (i = 0; i < 400; i++) {
		assert_true(msc_proc_reread(&fs, sfd) > 0);
		assert_int_equal(msc_proc_parse_stat(&fs, pid, &st, NULL), 0);
		if (strcmp(st.comm, "sleep") == 0)
			break;
		nanosleep(&ts, NULL);
	}
	assert_string_equal(st.comm, "sleep");
	assert_int_equal(msc_proc_reread(&fs, rfd), -ESRCH);
	close(rfd);
	/* opened again: the new image's figures */
	rfd = msc_proc_open(&fs, pid, "smaps_rollup");
	assert_true(rfd >= 0);
	assert_true(msc_proc_reread(&fs, rfd) > 0);
	close(rfd);
	close(sfd);
	close(pfd[1]);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	msc_procfs_release(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reread_fixture),
		cmocka_unit_test(test_reread_large),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_foreach_kept),
		cmocka_unit_test(test_live_gone),
		cmocka_unit_test(test_live_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
