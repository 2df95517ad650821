/* SPDX-License-Identifier: MIT */
/*
 * memhog: maps and touches an exact amount of anonymous memory when told to.
 *
 *   memhog [MIB]       (default 64)
 *
 * Prints "ready PID" and waits.  On SIGUSR1 it maps MIB MiB of private
 * anonymous memory, writes to every page (so all of it is resident), prints
 * "grown MIB" and waits again.  SIGTERM or SIGINT end it with status 0.
 * Known answer: between a snapshot before SIGUSR1 and one after "grown", the
 * process's rss and its [anon] mappings grow by exactly MIB MiB (within the
 * pages of the kernel's own bookkeeping).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 64;
	size_t size = (size_t)mib << 20;
	sigset_t set;
	int sig;

	if (mib <= 0) {
		fprintf(stderr, "usage: memhog [MIB]\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	for (;;) {
		if (sigwait(&set, &sig))
			return 1;
		if (sig != SIGUSR1)
			return 0;
		{
			char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			size_t off;

			if (p == MAP_FAILED) {
				perror("memhog: mmap");
				return 1;
			}
			for (off = 0; off < size; off += 4096)
				p[off] = 1;
		}
		printf("grown %ld\n", mib);
	}
}
