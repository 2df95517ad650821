/*
 * A program under an address-space limit (t0310, t0340): "set" sets its
 * own (256 MiB, hard 512 MiB), "inherit" keeps the one it was given; each
 * then maps 100 MiB and creates a thread, and says what it read back and
 * what worked.  "wait" first: it says "ready" and waits for SIGUSR1 (an
 * attach comes meanwhile).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void *volatile keep[100];

static void *run(void *a) { return a; }

int main(int argc, char **argv)
{
	struct rlimit rl = { 256u << 20, 512u << 20 }, back;
	int set = argc > 1 && !strcmp(argv[1], "set"), ok = 0, th, sig;
	pthread_t t;
	sigset_t s;

	if (argc > 2 && !strcmp(argv[2], "wait")) {
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigprocmask(SIG_BLOCK, &s, NULL);
		puts("ready");
		fflush(stdout);
		sigwait(&s, &sig);
	}
	if ((set && setrlimit(RLIMIT_AS, &rl)) || getrlimit(RLIMIT_AS, &back))
		return 1;
	for (int i = 0; i < 100; i++)
		if ((keep[i] = malloc(1 << 20)))
			memset(keep[i], 1, 1 << 20), ok++;
	th = pthread_create(&t, NULL, run, NULL) == 0;
	if (th)
		pthread_join(t, NULL);
	if (set)
		printf("aslim: limit %lu %lu MiB, %d MiB, thread %d\n", (unsigned long)back.rlim_cur >> 20,
		       (unsigned long)back.rlim_max >> 20, ok, th);
	else
		printf("asinh: limit %lu %lu KiB, %d MiB, thread %d\n", (unsigned long)back.rlim_cur >> 10,
		       (unsigned long)back.rlim_max >> 10, ok, th);
	return 0;
}
