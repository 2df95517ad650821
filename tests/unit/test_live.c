/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of reading the live heap's socket the way ms-top does
 * (msc_live_foreach, msc_live_read of msc_live.h) and of parsing what it
 * read again and again with one reader (msc_reader_reuse_mem).  The socket
 * directory is a private one under a temporary XDG_RUNTIME_DIR; a forked
 * child plays the recorder.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_live.h"
#include "msc_ndjson.h"
#include "msc_util.h"

static char runtime[64];

static int setup(void **state)
{
	(void)state;
	strcpy(runtime, "/tmp/msc-test-live.XXXXXX");
	if (!mkdtemp(runtime))
		return -1;
	return setenv("XDG_RUNTIME_DIR", runtime, 1);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", runtime);
	return system(cmd) == 0 ? 0 : -1;
}

static const char records[] =
	"{\"type\":\"stack\",\"id\":1,\"frames\":[{\"fn\":\"cache_add\"}]}\n"
	"{\"type\":\"site\",\"pid\":1,\"stack\":1,\"size\":1000,\"live_bytes\":5000}\n"
	"{\"type\":\"site\",\"pid\":1,\"stack\":1,\"size\":64,\"live_bytes\":640}\n";

/* A recorder that answers each of n clients with what, or never (what NULL). */
static pid_t serve(int lfd, int n, const char *what)
{
	pid_t pid = fork();

	if (pid == 0) {
		int i;
		char c;

		for (i = 0; i < n; i++) {
			int fd;

			while ((fd = accept(lfd, NULL, NULL)) < 0)
				;
			/* Read the request line first, as the recorder does:
			 * closing with it unread would reset the connection,
			 * and the client would see ECONNRESET, not the answer. */
			while (read(fd, &c, 1) == 1 && c != '\n')
				;
			if (!what) {
				pause();
				_exit(0);
			}
			if (write(fd, what, strlen(what)) != (ssize_t)strlen(what))
				_exit(1);
			close(fd);
		}
		_exit(0);
	}
	return pid;
}

static int count_pid(int pid, void *arg)
{
	int *found = arg;

	if (pid == (int)getpid())
		found[0]++;
	else
		found[1]++;
	return 0;
}

static void test_not_recorded(void **state)
{
	DIR *dir = NULL;
	char *buf = NULL;
	size_t cap = 0;
	int found[2] = { 0, 0 };

	(void)state;
	assert_int_equal(msc_live_foreach(&dir, count_pid, found), -ENOENT);
	assert_null(dir);
	assert_int_equal(msc_live_read(getpid(), &buf, &cap, 100, NULL), -ENOENT);
	assert_null(buf);
}

static void test_read_and_reuse(void **state)
{
	struct msc_reader r;
	struct msc_rec rec;
	struct msc_err err;
	struct msc_field *fields = NULL;
	DIR *dir = NULL;
	char *buf = NULL;
	size_t cap = 0;
	int found[2] = { 0, 0 }, lfd, round, wstatus;
	long len;
	pid_t child;

	(void)state;
	lfd = msc_live_listen(getpid(), &err);
	assert_true(lfd >= 0);
	/* the child accepts with a blocking socket */
	assert_int_equal(fcntl(lfd, F_SETFL, 0), 0);
	child = serve(lfd, 3, records);
	assert_int_equal(msc_live_foreach(&dir, count_pid, found), 0);
	assert_int_equal(found[0], 1);
	assert_int_equal(found[1], 0);
	assert_int_equal(msc_live_foreach(&dir, count_pid, found), 0);	/* rewound */
	assert_int_equal(found[0], 2);

	msc_reader_init_mem(&r, "", 0, "none");
	for (round = 0; round < 3; round++) {
		uint64_t live = 0, v;
		int n = 0;

		len = msc_live_read(getpid(), &buf, &cap, 2000, &err);
		assert_int_equal(len, strlen(records));
		assert_memory_equal(buf, records, (size_t)len);
		msc_reader_reuse_mem(&r, buf, (size_t)len, "live");
		while (msc_reader_next(&r, &rec, &err) > 0) {
			n++;
			assert_int_equal(rec.lineno, n);
			if (msc_rec_type_is(&rec, "site") && msc_rec_u64(&rec, "live_bytes", &v) == 0)
				live += v;
		}
		assert_int_equal(n, 3);
		assert_int_equal(live, 5640);
		/* the reader's tables are kept, not made again */
		if (round == 0)
			fields = r.fields;
		assert_ptr_equal(r.fields, fields);
	}
	msc_reader_release(&r);
	assert_int_equal(waitpid(child, &wstatus, 0), child);
	assert_int_equal(wstatus, 0);

	/* a recorder that never answers: given up after the time allowed */
	child = serve(lfd, 1, NULL);
	{
		uint64_t t0 = msc_now_monotonic();

		assert_int_equal(msc_live_read(getpid(), &buf, &cap, 100, &err), -ETIMEDOUT);
		assert_true(msc_now_monotonic() - t0 < 1000000000ull);
		assert_non_null(strstr(err.msg, "did not answer"));
	}
	kill(child, SIGKILL);
	waitpid(child, &wstatus, 0);

	/* a socket left behind by a recorder that died: not being recorded */
	close(lfd);
	assert_int_equal(msc_live_read(getpid(), &buf, &cap, 100, &err), -ENOENT);
	msc_live_unlink(getpid());
	found[0] = 0;
	assert_int_equal(msc_live_foreach(&dir, count_pid, found), 0);
	assert_int_equal(found[0], 0);
	closedir(dir);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_recorded),
		cmocka_unit_test(test_read_and_reuse),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
