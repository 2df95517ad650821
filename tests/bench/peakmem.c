/* SPDX-License-Identifier: MIT */
/*
 * peakmem: runs a command and measures what it costs in time and memory,
 * the same way for every profiler: the wall time, and the peak of the sum
 * of the resident sizes of every process of its process group (a profiler
 * and the program it profiles together: heaptrack's interpreter, valgrind's
 * one process, ms-record and its program), sampled every 10 ms.
 *
 *     peakmem OUTFILE COMMAND [ARGS...]
 *
 * writes "SECONDS PEAK_BYTES STATUS" to OUTFILE (STATUS as a shell gives it:
 * the exit status, or 128+N after signal N), and to OUTFILE.cpu the CPU
 * time in ns of the command and every process it waited for (user and
 * system, from getrusage(RUSAGE_CHILDREN)); the command's own output and
 * exit status are left alone.  Sampling reads /proc/PID/statm of the
 * group's processes, found through /proc/PID/stat; a process that lived
 * less than 10 ms can be missed, which the workloads of make bench never
 * are.  Between samples it waits on a pidfd of the command, so the wall time
 * ends when the command does, not at the next 10 ms tick (a tick's +-5 ms
 * is 0.75 % of a 0.66 s run, the size of the differences make bench's
 * sampled section looks for).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long page_size;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The field after the command name of /proc/PID/stat: "pid (comm) S ppid pgrp". */
static long pgrp_of(const char *pid)
{
	char path[300], buf[512], *p;
	long pgrp = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p && sscanf(p + 1, " %*c %*d %ld", &pgrp) != 1)
		pgrp = -1;
	return pgrp;
}

static uint64_t rss_of(const char *pid)
{
	char path[300], buf[128];
	unsigned long size = 0, resident = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/statm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * (uint64_t)page_size;
}

/* The resident bytes of every process of group pgrp, added up. */
static uint64_t group_rss(pid_t pgrp)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uint64_t sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (pgrp_of(e->d_name) == (long)pgrp)
			sum += rss_of(e->d_name);
	}
	closedir(d);
	return sum;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1, peak = 0;
	int status = 0, code, pidfd;
	pid_t pid;
	FILE *out;
	struct rusage ru;
	char cpu_path[4096];

	if (argc < 3) {
		fprintf(stderr, "usage: peakmem OUTFILE COMMAND [ARGS...]\n");
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("peakmem: fork");
		return 2;
	}
	if (pid == 0) {
		setpgid(0, 0);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "peakmem: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);	/* both sides: no race with the first sample */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);	/* -1 before Linux 5.3: ticks */
	for (;;) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		pid_t r = waitpid(pid, &status, WNOHANG);
		uint64_t rss;

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			break;
		rss = group_rss(pid);
		if (rss > peak)
			peak = rss;
		if (pidfd < 0 || poll(&pfd, 1, 10) < 0)
			nanosleep(&ts, NULL);
	}
	t1 = now_ns();
	if (pidfd >= 0)
		close(pidfd);
	/* The group's other processes (heaptrack's interpreter) end with it. */
	code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 2;
	}
	fprintf(out, "%.6f %llu %d\n", (double)(t1 - t0) / 1e9, (unsigned long long)peak, code);
	fclose(out);
	snprintf(cpu_path, sizeof(cpu_path), "%s.cpu", argv[1]);
	out = fopen(cpu_path, "w");
	if (out && getrusage(RUSAGE_CHILDREN, &ru) == 0)
		fprintf(out, "%llu\n", (unsigned long long)((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
							   (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull));
	if (out)
		fclose(out);
	return code;
}
