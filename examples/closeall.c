/* SPDX-License-Identifier: MIT */
/*
 * closeall: a daemon-style start that closes every descriptor above 2, then
 * leaks, the way many servers and CLI programs begin.
 *
 *   closeall loop         close(fd) for every fd up to RLIMIT_NOFILE
 *   closeall closefrom    closefrom(3) (glibc 2.34)
 *   closeall close_range  the close_range(2) system call, directly
 *   closeall dup2         dup2(0, fd) over every open fd above 2, then closes them
 *
 * Before and after, it prints the descriptors it sees in /proc/self/fd and
 * how many close() calls succeeded, so a test can compare with a run without
 * a profiler.  Known answer: 100 blocks of 100 B definitely lost, from
 * leak_hundred.  The listing and the output use no malloc (getdents64,
 * write), so the leak is the only allocation of the program.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile sink;
volatile unsigned count;

static void put(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(1);
}

static void put_num(long v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(p);
}

/* The open descriptors, as /proc/self/fd lists them (not the listing's own). */
static void list_fds(const char *when)
{
	char buf[4096];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	put(when);
	put(":");
	if (dir < 0) {
		put(" ?\n");
		return;
	}
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			unsigned short reclen = *(unsigned short *)(buf + off + 16);
			const char *name = buf + off + 19;

			if (name[0] != '.' && atoi(name) != dir) {
				put(" ");
				put(name);
			}
			off += reclen;
		}
	}
	close(dir);
	put("\n");
}

NOINLINE static void leak_hundred(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		sink = malloc(100);
		count++;
	}
	count++;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "loop";
	struct rlimit rl;
	long closed = 0, fd, max;

	list_fds("before");
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20)
		rl.rlim_cur = 1 << 20;
	max = (long)rl.rlim_cur;
	if (!strcmp(how, "loop")) {
		for (fd = 3; fd < max; fd++)
			if (close((int)fd) == 0)
				closed++;
	} else if (!strcmp(how, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(how, "close_range")) {
		if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0) {
			put("close_range failed\n");
			return 1;
		}
	} else if (!strcmp(how, "dup2")) {
		for (fd = 3; fd < max; fd++)
			if (fcntl((int)fd, F_GETFD) >= 0 && dup2(0, (int)fd) == fd)
				closed++;
		for (fd = 3; fd < max; fd++)
			close((int)fd);
	} else {
		put("usage: closeall loop|closefrom|close_range|dup2\n");
		return 2;
	}
	list_fds("after");
	put("closed ");
	put_num(closed);
	put("\n");
	leak_hundred();
	sink = NULL;
	return 0;
}
