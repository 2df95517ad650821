/* SPDX-License-Identifier: MIT */
/*
 * forkexec: a parent and a forked child that leak different amounts; the
 * child then execs `leaky` (examples/bin/leaky next to this program).
 *
 * Known answer: the parent leaks 3 x 111 B from parent_leak; the child,
 * before its exec, leaks 2 x 222 B from child_leak (forgotten at the exec,
 * not leaked); after the exec the child is leaky (see leaky.c).  Without
 * --follow only the parent is recorded; with it, three streams: the parent,
 * the forked child until its exec, and leaky.  The parent exits with the
 * child's status (0).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

void *volatile sink;
volatile int count;

NOINLINE static void parent_leak(void)
{
	sink = malloc(111);
	count++;
}

NOINLINE static void child_leak(void)
{
	sink = malloc(222);
	count++;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	int status, i;
	pid_t pid;
	char *slash;

	(void)argc;
	snprintf(path, sizeof(path), "%s", argv[0]);
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
		 "leaky");
	for (i = 0; i < 3; i++)
		parent_leak();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		child_leak();
		child_leak();
		execl(path, "leaky", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	sink = NULL;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
