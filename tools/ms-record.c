/* SPDX-License-Identifier: MIT */
/*
 * ms-record: run a program under libmemscope.so and write what it allocates
 * as memscope records: aggregated sites and leaks with symbolized stacks,
 * periodic samples, and with --events every allocation event.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msc_cli.h"
#include "msc_inject.h"
#include "msc_poll.h"
#include "msc_hookspec.h"
#include "msc_proto.h"
#include "msc_recorder.h"
#include "msc_util.h"

static const char usage[] =
	"Usage: ms-record [options] [--] PROGRAM [ARGS...]\n"
	"       ms-record [options] -p PID\n"
	"Run PROGRAM with libmemscope.so preloaded, or load it into the running\n"
	"process PID, and write what it allocates as memscope records (NDJSON):\n"
	"allocation sites and leaks with symbolized stacks, rss samples, and a\n"
	"summary.\n";

static const char tail[] =
	"Exit status: the program's own, 128+N when it died of signal N; 125 when\n"
	"ms-record failed, 126 when PROGRAM cannot be run or profiled (not\n"
	"executable, statically linked, setuid), 127 when it was not found.\n"
	"With -p: 0 once detached (or the process ended), 2 when it could not\n"
	"attach.\n";

enum { OPT_NO_SCAN = 256, OPT_ALLOC_FN, OPT_FREE_STACKS, OPT_LOSSY, OPT_DURATION, OPT_POLL, OPT_DEPTH,
       OPT_UNWIND, OPT_HOOK, OPT_SAMPLE };

static const struct msc_cli_opt opts[] = {
	{ 'p', "pid", required_argument, "PID",
	  "attach to process PID (no gdb needed), record until\n"
	  "interrupted, --duration, or its exit, then detach:\n"
	  "it keeps running as it was" },
	{ OPT_DURATION, "duration", required_argument, "TIME",
	  "with -p, detach after TIME (\"30s\", \"5m\")" },
	{ OPT_POLL, "poll", no_argument, NULL,
	  "with -p, load nothing into the process: sample its\n"
	  "rss, pss, swap and mappings from /proc each\n"
	  "interval (-i, default 1000 ms)" },
	{ 'o', "output", required_argument, "FILE",
	  "write the records to FILE (default: standard output;\n"
	  "on a terminal, memscope.NAME.PID.ndjson), compressed\n"
	  "with zstd if it ends in .zst" },
	{ 'e', "events", no_argument, NULL, "also write every allocation and free event" },
	{ 'i', "interval", required_argument, "MS",
	  "rss sampling period in milliseconds (default 100,\n"
	  "0 for none; 1000 with --poll)" },
	{ OPT_DEPTH, "depth", required_argument, "N", "frames per stack, 1 to 256 (default 64)" },
	{ OPT_UNWIND, "unwind", required_argument, "MODE",
	  "dwarf (default), fp (frame pointers), libunwind,\n"
	  "or none (allocation call site only)" },
	{ 'f', "follow", no_argument, NULL,
	  "record forked and exec'ed children too, as\n"
	  "separate pid-tagged streams" },
	{ OPT_NO_SCAN, "no-scan", no_argument, NULL,
	  "do not classify leaks by reachability at exit" },
	{ OPT_ALLOC_FN, "alloc-fn", required_argument, "NAME",
	  "NAME (a glob) allocates for its caller, as xmalloc or\n"
	  "g_malloc do: reports attribute what it allocates to\n"
	  "its caller (repeatable; common ones are built in)" },
	{ OPT_FREE_STACKS, "free-stacks", no_argument, NULL,
	  "capture whole stacks of frees for memory errors\n"
	  "(double or invalid frees, mismatches); by default\n"
	  "only the caller of free (cheaper)" },
	{ OPT_SAMPLE, "sample", required_argument, "BYTES",
	  "record an allocation with probability\n"
	  "1 - exp(-size/BYTES) (\"512K\", \"1M\"): about one\n"
	  "per BYTES allocated, for an overhead a production\n"
	  "server can keep; sites and leaks become unbiased\n"
	  "estimates, totals of allocations and bytes stay\n"
	  "exact; no reachability scan" },
	{ OPT_LOSSY, "lossy", no_argument, NULL,
	  "drop events rather than slow the program down when\n"
	  "ms-record cannot keep up (counted in \"lost\")" },
	{ OPT_HOOK, "hook", required_argument, "SPEC",
	  "record the calls of a custom allocator's function\n"
	  "as allocations or frees (repeatable, up to 16):\n"
	  "NAME=alloc,size=argN  NAME=free,ptr=argN\n"
	  "NAME=realloc,ptr=argN,size=argM  (N, M: 1 to 6)" },
	{ 'q', "quiet", no_argument, NULL, "no summary line on standard error" },
	{ 0 },
};

/* -d and -u are ms-top's --delay and --user, as in top(1). */
static const struct msc_cli_alias aliases[] = {
	{ "-d", "--depth", required_argument, OPT_DEPTH },
	{ "-u", "--unwind", required_argument, OPT_UNWIND },
	{ NULL, NULL, 0, 0 },
};

static const struct msc_cli cli = {
	.name = "ms-record",
	.usage = usage,
	.opts = opts,
	.column = 23,
	.tail = tail,
	.aliases = aliases,
	.in_order = true,
};

#define EXIT_OWN 125
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

/* ------------------------------------------------------------ launching */

/*
 * --hook specs, checked here and handed to the shim in MEMSCOPE_HOOKS
 * (joined with ';'), which parses them again with the same code.
 */
static bool quiet;
static char hooks_env[MSC_HOOK_MAX * 96];
static struct msc_hookspec hooks[MSC_HOOK_MAX];
static unsigned nhooks;

static void add_hook(const char *spec)
{
	struct msc_hookspec h;
	const char *why;
	size_t len = strlen(hooks_env);
	unsigned i;

	if (msc_hookspec_parse(spec, strlen(spec), &h, &why))
		msc_usage_error("invalid --hook '%s': %s", spec, why);
	for (i = 0; i < nhooks; i++)
		if (strcmp(hooks[i].name, h.name) == 0)
			msc_usage_error("--hook '%s': %s is hooked already", spec, h.name);
	if (nhooks == MSC_HOOK_MAX)
		msc_usage_error("--hook '%s': at most %d hooks", spec, MSC_HOOK_MAX);
	/* What goes on is what was parsed, in the one form the shim reads. */
	snprintf(hooks_env + len, sizeof(hooks_env) - len, "%s%s=%s%s%.0u%s%.0u", len ? ";" : "",
		 h.name, h.kind == MSC_HOOK_ALLOC ? "alloc" : h.kind == MSC_HOOK_FREE ? "free" : "realloc",
		 h.ptr_arg ? ",ptr=arg" : "", h.ptr_arg, h.size_arg ? ",size=arg" : "", h.size_arg);
	hooks[nhooks++] = h;
}

static char *find_program(const char *name, int *status)
{
	char *path = msc_find_program(name);
	bool missing = !path && errno == ENOENT;

	*status = path ? 0 : missing ? EXIT_NOT_FOUND : EXIT_OWN;
	if (missing)
		msc_warn("'%s': command not found", name);
	else if (!path)
		msc_warn("out of memory");
	return path;
}

/* Refuses what LD_PRELOAD cannot reach, before it runs. */
static int check_program(const char *path)
{
	struct msc_err err;
	int ret = msc_preload_check(path, &err);

	if (!ret)
		return 0;
	msc_warn("%s", err.msg);
	return ret == -ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}

/*
 * The program's environment: ours, with LD_PRELOAD led by the shim (the
 * program's own preloads after it) and the shim's MEMSCOPE_* variables set
 * or removed.  NULL when out of memory; the strings it adds are in *owned.
 */
static char **child_env(const char *shim, const char *sock, char *owned[3])
{
	static const char *const ours[] = { "LD_PRELOAD=", "MEMSCOPE_SOCK=", "MEMSCOPE_HOOKS=",
					     "MEMSCOPE_QUIET=" };
	const char *old = getenv("LD_PRELOAD");
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n])
		n++;
	env = malloc((n + 5) * sizeof(*env));
	owned[0] = malloc(strlen("LD_PRELOAD=") + strlen(shim) + (old ? strlen(old) : 0) + 2);
	owned[1] = malloc(strlen("MEMSCOPE_SOCK=") + strlen(sock) + 1);
	owned[2] = nhooks ? malloc(strlen("MEMSCOPE_HOOKS=") + strlen(hooks_env) + 1) : NULL;
	if (!env || !owned[0] || !owned[1] || (nhooks && !owned[2])) {
		free(env);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < ARRAY_SIZE(ours); j++)
			if (strncmp(environ[i], ours[j], strlen(ours[j])) == 0)
				break;
		if (j == ARRAY_SIZE(ours))
			env[k++] = environ[i];
	}
	sprintf(owned[0], "LD_PRELOAD=%s%s%s", shim, old && *old ? ":" : "", old && *old ? old : "");
	sprintf(owned[1], "MEMSCOPE_SOCK=%s", sock);
	env[k++] = owned[0];
	env[k++] = owned[1];
	if (nhooks) {
		sprintf(owned[2], "MEMSCOPE_HOOKS=%s", hooks_env);
		env[k++] = owned[2];
	}
	if (quiet)
		env[k++] = (char *)"MEMSCOPE_QUIET=1";
	env[k] = NULL;
	return env;
}

/*
 * Starts the program from a vfork, not a fork, so that nothing of ours is
 * copied, page tables included (a fork and the copy-on-write faults after
 * it cost about 4 ms here, in every recording).  Not posix_spawn: glibc's
 * leaves its internal signals (32 and 33) ignored in the program.  The
 * child shares our memory until it execs: it only calls async-signal-safe
 * functions, its signal dispositions are its own, and ms-record handles
 * no signal (they come through a signalfd), so none of our code runs in
 * it.  The program gets the signal mask and SIGPIPE disposition ms-record
 * was given.  Returns its pid or a negative errno (the exec's).
 */
/* launch()'s vfork and exec, apart: nothing but its arguments in the frame
 * the child shares. */
static int spawn(char *prog, char **argv, char **env, const sigset_t *orig_mask,
		 void (*orig_pipe)(int), bool stdout_to_stderr)
{
	const struct rlimit *as = msc_collector_own_limit();
	volatile int err = 0;
	pid_t pid = vfork();

	if (pid == 0) {
		/* Records go to a pipe or file on our stdout: the program's
		 * own output must not land in the middle of them. */
		if (stdout_to_stderr && dup2(2, 1) < 0) {
			err = errno;
			_exit(EXIT_OWN);
		}
		signal(SIGPIPE, orig_pipe);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		/* The address-space limit we were given (the collector's own
		 * was lifted): the library raises it by what it maps. */
		if (as && setrlimit(RLIMIT_AS, as) < 0) {
			err = errno;
			_exit(EXIT_CANNOT_RUN);
		}
		execve(prog, argv, env);
		err = errno;
		_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
	}
	if (pid < 0)
		return -errno;
	if (err) {
		waitpid(pid, NULL, 0);
		return -err;
	}
	return pid;
}

static int launch(char *prog, char **argv, const char *shim, const char *sock,
		  const sigset_t *orig_mask, void (*orig_pipe)(int), bool stdout_to_stderr)
{
	char *owned[3] = { NULL, NULL, NULL }, **env = child_env(shim, sock, owned);
	int ret = env ? spawn(prog, argv, env, orig_mask, orig_pipe, stdout_to_stderr) : -ENOMEM;

	free(env);
	free(owned[0]);
	free(owned[1]);
	free(owned[2]);
	return ret;
}


static void warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	if (!quiet)
		msc_warn("%s", msg);
}

/* A signal that only wakes ms-record: SIGCHLD (a child's end) and SIGURG
 * (a recorded process whose leak scan waits, or a thread whose ring is
 * full: msc_proto.h).  The round that follows is what they ask for. */
static bool wake_only(int sig)
{
	return sig == SIGCHLD || sig == SIGURG;
}

/*
 * Records until the program is gone and no followed child is left.  A
 * signal sent to ms-record alone is passed on to the program (one from the
 * terminal reached it already); once the program is gone, a signal ends the
 * children still followed.
 *
 * The timeout is how long the collector may leave the rings unread while
 * the program records (signals, the program's end, new connections,
 * ms-snap's and ms-top's requests and a thread whose ring is full wake it
 * at once; a program that records steadily sets a shorter nap by its pace;
 * one that records nothing lengthens it from 2 ms up to 8 timeouts, 100 ms
 * at most: collect.c): 2 ms, what a burst of full-speed recording takes to
 * fill a 64 KiB stretch of a ring several times over.  A sampled recording
 * writes a record per sampled block, about one per BYTES allocated: 100 ms
 * fill a ring's first 64 KiB only for a program allocating 3 GB a second
 * at 512 KiB.  Each wake-up we spare is a context switch on a CPU the
 * program may be running on (on a busy 2-CPU machine, sqlite3 under
 * --sample 512K was preempted by ms-record 512 times in 1.4 s at 200 us
 * naps), and CPU that a recording left on for hours costs (an idle
 * program: 25 ms a second at full recording's 2 ms naps, 6.4 ms at the
 * sampled 20 ms).
 */
#define NAP_MS 2
#define NAP_ATTACHED_MS 10
#define NAP_SAMPLED_MS 100
static int record_loop(struct msc_recorder *rec, int sfd, int child, int timeout_ms)
{
	bool interrupted = false;
	int status = 0;

	for (;;) {
		if (msc_recorder_poll(rec, sfd, timeout_ms) > 0) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				int sig = (int)si.ssi_signo;

				if (wake_only(sig))
					continue;
				if ((si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE) &&
				    !msc_recorder_main_done(rec, NULL))
					kill(child, sig);
				if (msc_recorder_main_done(rec, NULL))
					interrupted = true;
			}
		}
		if (msc_recorder_main_done(rec, &status)) {
			if (!msc_recorder_sessions(rec))
				break;
			if (interrupted) {
				msc_recorder_finish(rec, "interrupted");
				break;
			}
		}
	}
	return status;
}

/* Drains the signalfd: true when a signal came that is not wake_only. */
static bool stop_signal(int sfd)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		stop |= !wake_only((int)si.ssi_signo);
	return stop;
}

/*
 * Detaches; a process stopped meanwhile (job control, a debugger) is
 * waited for, recording on, until it continues or ends, or until a second
 * signal, which leaves it hooked.  0, or 1 when the hooks stay (said).
 */
static int detach_when_running(struct msc_recorder *rec, int sfd, int pid,
			       struct msc_inject_stats *de, int nap_ms)
{
	struct msc_err err;
	bool said = false;
	int rc;

	while ((rc = msc_recorder_detach(rec, de, &err)) == -EAGAIN) {
		if (!said)
			msc_warn("pid %d is stopped: detaching once it continues (kill -CONT %d); a second signal leaves it as it is, hooked",
				 pid, pid);
		said = true;
		if (msc_recorder_poll(rec, sfd, nap_ms) > 0 && stop_signal(sfd)) {
			msc_warn("pid %d: not detached: its hooks stay in until it is attached and detached again",
				 pid);
			return 1;
		}
		if (msc_recorder_main_done(rec, NULL))
			return 0;
	}
	if (rc) {
		msc_warn("%s", err.msg);
		return 1;
	}
	return 0;
}

/*
 * Attached: records until a signal, the duration, or the process's end,
 * then detaches, the collector napping nap_ms at most (record_loop says
 * why).  Returns 0, or 2 when it could not attach.
 */
static int record_attached(struct msc_recorder *rec, int sfd, int pid, const char *shim,
			   uint64_t duration_ns, int nap_ms)
{
	struct msc_inject_stats at = { 0 }, de = { 0 };
	char line[512];
	uint64_t end = duration_ns ? msc_now_monotonic() + duration_ns : 0;
	struct msc_err err;
	bool stop = false;
	int rc = 0;

	if (msc_recorder_attach(rec, pid, shim, &at, &err)) {
		msc_warn("%s", err.msg);
		msc_recorder_finish(rec, "interrupted");
		return 2;
	}
	while (!stop) {
		uint64_t now = msc_now_monotonic();
		uint64_t left_ms = end > now ? (end - now) / 1000000 + 1 : 0;
		int nap = end && left_ms < (uint64_t)nap_ms ? (int)left_ms : nap_ms;

		if (end && !left_ms) {
			stop = true;
			break;
		}
		if (msc_recorder_poll(rec, sfd, nap) > 0)
			stop = stop_signal(sfd);
		if (msc_recorder_main_done(rec, NULL))
			break;
	}
	if (stop)
		rc = detach_when_running(rec, sfd, pid, &de, nap_ms);
	msc_recorder_finish(rec, "interrupted");
	msc_recorder_attach_line(msc_recorder_summary(rec), pid, stop && !rc, &at, &de, line,
				 sizeof(line));
	warn_cb(NULL, line);
	return rc;
}

/*
 * --poll: samples /proc every interval until a signal, the duration, or
 * the process's end.  Returns 0, or 2 when its memory cannot be read.
 */
static int record_polled(struct msc_writer *w, int sfd, int pid, uint64_t interval_ms,
			 uint64_t duration_ns)
{
	uint64_t now = msc_now_monotonic(), end = duration_ns ? now + duration_ns : 0, next = now;
	const char *reason = "detached";
	struct msc_err err;
	struct msc_poller *p = msc_poller_new(pid, interval_ms, w, &err);
	char line[512];

	if (!p) {
		msc_warn("%s", err.msg);
		return 2;
	}
	for (;;) {
		struct pollfd pfd = { .fd = sfd, .events = POLLIN };
		int ret = msc_poller_sample(p, &err);

		if (ret) {
			if (ret != -ESRCH)
				msc_warn("%s", err.msg);
			reason = "exit";
			break;
		}
		next += interval_ms * 1000000;
		now = msc_now_monotonic();
		if (end && next > end)
			next = end;
		if ((poll(&pfd, 1, next > now ? (int)((next - now + 999999) / 1000000) : 0) > 0 &&
		     stop_signal(sfd)) || (end && msc_now_monotonic() >= end))
			break;
	}
	msc_poller_finish(p, reason);
	msc_poller_summary_line(p, line, sizeof(line));
	warn_cb(NULL, line);
	msc_poller_free(p);
	return 0;
}

int main(int argc, char **argv)
{
	/* Those that stop it, and those that only wake it (wake_only: SIGURG
	 * is kept from the program, as it was when ignored by default). */
	/* Those that would end ms-record by default, but SIGPIPE (its
	 * output's) and the core-dumping faults (its own): passed on to
	 * the program, or, attached, the end of the recording. */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
				    SIGVTALRM, SIGPROF, SIGCHLD, SIGURG };
	struct msc_recorder_opts o = { .mode = "launch", .depth = 64, .unwind = MSC_UNWIND_DWARF,
				       .unwind_name = "dwarf", .scan = true, .interval_ms = 100,
				       .warn = warn_cb };
	struct msc_recorder *rec = NULL;
	struct msc_writer w;
	const char *output = NULL;
	const char **alloc_fns = NULL;
	unsigned nalloc_fns = 0;
	char *prog = NULL, *shim = NULL, **prog_argv, auto_path[PATH_MAX];
	struct msc_err err;
	sigset_t block, orig;
	void (*orig_pipe)(int);
	int c, fd = 1, sfd, status = 0, ret, said, pid = 0, nap_ms;
	uint64_t v, duration = 0;
	char line[512];
	bool poll_only = false, interval_set = false, auto_out, recorded = false, created;
	struct stat st;

	orig_pipe = signal(SIGPIPE, SIG_DFL);
	msc_cli_start("ms-record");
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'e':
			o.events = true;
			break;
		case 'i':
			if (msc_parse_uint(optarg, &v) || v > 3600000)
				msc_usage_error("invalid interval '%s' (milliseconds)", optarg);
			o.interval_ms = v;
			interval_set = true;
			break;
		case OPT_DEPTH:
			if (msc_parse_uint(optarg, &v) || v < 1 || v > MSC_PROTO_MAX_DEPTH)
				msc_usage_error("invalid depth '%s' (1 to %d)", optarg,
						MSC_PROTO_MAX_DEPTH);
			o.depth = (uint32_t)v;
			break;
		case OPT_UNWIND:
			if (strcmp(optarg, "dwarf") == 0)
				o.unwind = MSC_UNWIND_DWARF;
			else if (strcmp(optarg, "fp") == 0)
				o.unwind = MSC_UNWIND_FP;
			else if (strcmp(optarg, "libunwind") == 0)
				o.unwind = MSC_UNWIND_LIBUNWIND;
			else if (strcmp(optarg, "none") == 0)
				o.unwind = MSC_UNWIND_NONE;
			else
				msc_usage_error("invalid unwind mode '%s' (dwarf, fp, libunwind, none)",
						optarg);
			o.unwind_name = optarg;
			break;
		case 'f':
			o.follow = true;
			break;
		case OPT_NO_SCAN:
			o.scan = false;
			break;
		case OPT_ALLOC_FN:
			msc_cli_push(&alloc_fns, &nalloc_fns, optarg);
			o.alloc_fns = alloc_fns;
			o.nalloc_fns = nalloc_fns;
			break;
		case OPT_FREE_STACKS:
			o.free_stacks = true;
			break;
		case OPT_LOSSY:
			o.lossy = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'p':
			if (msc_parse_pid(optarg, &pid))
				msc_usage_error("invalid pid '%s'", optarg);
			break;
		case OPT_POLL:
			poll_only = true;
			break;
		case OPT_DURATION:
			/* A bare number is refused: "10" read as milliseconds
			 * (as -i takes them) ends a recording meant to last ten
			 * seconds (timeout(1)'s unit) at once. */
			if (optarg[0] && strchr("0123456789.", optarg[strlen(optarg) - 1]))
				msc_usage_error("--duration '%s' needs a unit: \"%ss\", \"%sms\", \"%sm\"",
						optarg, optarg, optarg, optarg);
			if (msc_parse_duration(optarg, &duration) || !duration)
				msc_usage_error("invalid duration '%s'", optarg);
			break;
		case OPT_HOOK:
			add_hook(optarg);
			break;
		case OPT_SAMPLE:
			if (msc_parse_size(optarg, &v) || !v || v > (1ull << 50))
				msc_usage_error("invalid sample rate '%s' (bytes, 1 to 1P: \"512K\", \"1M\")",
						optarg);
			o.sample = v;
			break;
		}
	}
	if (o.sample) {
		const char *seed = getenv("MEMSCOPE_SEED");

		if (poll_only)
			msc_usage_error("--poll records no allocations to sample");
		/* A scan needs every live block known: those not recorded
		 * would hide the pointers they hold. */
		o.scan = false;
		if (seed && *seed) {
			if (msc_parse_uint(seed, &o.seed)) {
				msc_warn("invalid MEMSCOPE_SEED '%s' (an integer)", seed);
				return EXIT_OWN;
			}
			o.seeded = true;
		}
	}
	if (pid) {
		if (optind < argc)
			msc_usage_error("a program and -p: give one or the other");
		if (nhooks)
			msc_usage_error("--hook works when ms-record runs the program, not with -p");
		if (poll_only && (o.events || o.follow || (interval_set && !o.interval_ms)))
			msc_usage_error("--poll reads /proc only, every interval above 0: it sees no "
					"events or children");
		o.interval_ms = poll_only && !interval_set ? 1000 : o.interval_ms;
		o.mode = "attach";
		o.scan = false;
		prog_argv = NULL;
	} else {
		if (optind >= argc)
			msc_usage_error("no program given");
		if (duration || poll_only)
			msc_usage_error("%s needs -p", duration ? "--duration" : "--poll");
		prog_argv = argv + optind;
		prog = find_program(argv[optind], &status);
		if (!prog)
			return status ? status : EXIT_OWN;
		status = check_program(prog);
		if (status)
			goto out;
	}
	if (!poll_only && !(shim = msc_recorder_find_shim())) {
		msc_warn("cannot find libmemscope.so (set MEMSCOPE_SHIM to its path)");
		status = EXIT_OWN;
		goto out;
	}
	/* Records on a terminal help nobody: they go to a file, as heaptrack's
	 * do (named after the program's pid once it runs). */
	auto_out = !output && isatty(1);
	if (auto_out)
		output = msc_recorder_default_path(auto_path, sizeof(auto_path), pid ? NULL : prog,
						   pid ? pid : getpid());
	created = output && !auto_out && access(output, F_OK) != 0;
	if (output && (fd = msc_open_output_keep(output, &err)) < 0) {
		msc_warn("%s", err.msg);
		status = EXIT_OWN;
		goto out;
	}
	if (msc_writer_init(&w, fd, 256 * 1024) || msc_writer_compress_by_name(&w, output)) {
		msc_warn("out of memory");
		status = EXIT_OWN;
		goto out;
	}
	rec = poll_only ? NULL : msc_recorder_new(&o, &w, &err);
	if (!rec && !poll_only) {
		msc_warn("%s", err.msg);
		status = EXIT_OWN;
		goto out_writer;
	}

	/* Signals arrive through a signalfd; the program gets the original
	 * mask and dispositions. */
	sigemptyset(&block);
	for (c = 0; c < (int)ARRAY_SIZE(sigs); c++)
		sigaddset(&block, sigs[c]);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);

	if (auto_out && (pid || poll_only) && !quiet)
		msc_warn("recording to %s", output);
	/* record_loop says why these naps */
	nap_ms = o.sample ? NAP_SAMPLED_MS : pid ? NAP_ATTACHED_MS : NAP_MS;
	if (poll_only || pid) {
		status = poll_only ? record_polled(&w, sfd, pid, o.interval_ms, duration) :
				     record_attached(rec, sfd, pid, shim, duration, nap_ms);
		recorded = status != 2;	/* 1: recorded, but not detached */
		goto out_writer;
	}
	ret = launch(prog, prog_argv, shim, msc_recorder_socket(rec), &orig, orig_pipe,
		     !output && !isatty(1));
	if (ret < 0) {
		msc_warn("cannot run '%s': %s", prog, strerror(-ret));
		status = ret == -ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
		goto out_writer;
	}
	if (auto_out) {
		char named[PATH_MAX];

		msc_recorder_default_path(named, sizeof(named), prog, ret);
		if (rename(auto_path, named) == 0)
			memcpy(auto_path, named, sizeof(named));
		if (!quiet)
			msc_warn("recording to %s", output);
	}
	msc_recorder_set_main(rec, ret, prog, prog_argv);
	status = record_loop(rec, sfd, ret, nap_ms);
	msc_recorder_summary_line(msc_recorder_summary(rec),
				  strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog, status, line,
				  sizeof(line));
	warn_cb(NULL, line);
	/* ms-record exits as the program did. */
	status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	recorded = true;
out_writer:
	msc_recorder_exit(rec);		/* ms-record exits next */
	said = w.error && !quiet;	/* the recorder said it already */
	ret = msc_writer_release(&w);
	/*
	 * A recording cut short must not pass for a whole one, -q or not:
	 * ms-record's own failure, 125, the program's status in the message.
	 * Not when the reader went away (ms-record ./app | head).
	 */
	if (ret && ret != -EPIPE) {
		if (recorded)
			msc_warn("write error on %s: %s: the recording is incomplete "
				 "(the program's exit status was %d)",
				 output ? output : "standard output", strerror(-ret), status);
		else if (!said)
			msc_warn("write error on %s: %s", output ? output : "standard output",
				 strerror(-ret));
		status = EXIT_OWN;
	}
	/* What was written replaces the file's old content; nothing written,
	 * the file is left as it was.  A file that was not there is not left
	 * behind when nothing was recorded: empty, or holding only what a
	 * refused attach wrote before the refusal (its header). */
	if (fd != 1 && msc_output_cut(fd) < 0 && !status) {
		msc_warn("cannot truncate %s: %s", output, strerror(errno));
		status = EXIT_OWN;
	}
	if (created && !recorded && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (!st.st_size || (pid && !poll_only)))
		unlink(output);
	if (fd != 1)
		close(fd);
	if (auto_out && !recorded)
		unlink(output);		/* nothing was recorded: nothing to keep */
	else if (auto_out && !quiet)
		msc_warn("ms-report %s shows the report", output);
out:
	free(prog);
	free(shim);
	free(alloc_fns);
	return status;
}
