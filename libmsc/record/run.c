/* SPDX-License-Identifier: MIT */
/* ms-record's ways of recording: launch, attach, poll.  See msc_run.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msc_collect.h"
#include "msc_inject.h"
#include "msc_poll.h"
#include "msc_recorder.h"
#include "msc_run.h"
#include "msc_util.h"

/* The vfork'ed child's exit when it cannot become the program (the parent
 * learns why from errno, and says it): MSC_RUN_EXIT_*. */
#define EXIT_OWN MSC_RUN_EXIT_OWN
#define EXIT_CANNOT_RUN MSC_RUN_EXIT_CANNOT_RUN
#define EXIT_NOT_FOUND MSC_RUN_EXIT_NOT_FOUND

/* run->say, formatted. */
static void __attribute__((format(printf, 2, 3))) say(const struct msc_run *run, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	run->say(run->ctx, msg);
}

/* ------------------------------------------------------------ options */

int msc_run_add_hook(struct msc_run *run, const char *spec, struct msc_err *err)
{
	struct msc_hookspec h;
	const char *why;
	size_t len = strlen(run->hooks);
	unsigned i;

	if (msc_hookspec_parse(spec, strlen(spec), &h, &why))
		return msc_err_set(err, -EINVAL, "invalid --hook '%s': %s", spec, why);
	for (i = 0; i < run->nhooks; i++)
		if (strcmp(run->hook[i].name, h.name) == 0)
			return msc_err_set(err, -EINVAL, "--hook '%s': %s is hooked already", spec,
					   h.name);
	if (run->nhooks == MSC_HOOK_MAX)
		return msc_err_set(err, -EINVAL, "--hook '%s': at most %d hooks", spec, MSC_HOOK_MAX);
	/* What goes on is what was parsed, in the one form the shim reads. */
	snprintf(run->hooks + len, sizeof(run->hooks) - len, "%s%s=%s%s%.0u%s%.0u", len ? ";" : "",
		 h.name, h.kind == MSC_HOOK_ALLOC ? "alloc" : h.kind == MSC_HOOK_FREE ? "free" : "realloc",
		 h.ptr_arg ? ",ptr=arg" : "", h.ptr_arg, h.size_arg ? ",size=arg" : "", h.size_arg);
	run->hook[run->nhooks++] = h;
	return 0;
}

/* The signals --mark-signal may take. */
static const int markable[] = { SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF };

int msc_run_mark_signal(struct msc_run *run, const char *arg, struct msc_err *err)
{
	const char *name = strncmp(arg, "SIG", 3) ? arg : arg + 3;
	uint64_t n;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(markable); i++)
		if (!strcmp(name, sigabbrev_np(markable[i])) ||
		    (!msc_parse_uint(arg, &n) && n == (uint64_t)markable[i])) {
			run->mark_signal = markable[i];
			return 0;
		}
	return msc_err_set(err, -EINVAL, "--mark-signal '%s': one of HUP, QUIT, USR1, USR2, ALRM, VTALRM, PROF",
			   arg);
}

/* A --mark-signal came: the recording marked "USR2.1", "USR2.2", ... */
static void signal_mark(struct msc_run *run, struct msc_recorder *rec)
{
	char name[32];
	uint64_t ts;

	snprintf(name, sizeof(name), "%s.%u", sigabbrev_np(run->mark_signal), ++run->signal_marks);
	if (msc_recorder_mark(rec, name, "signal", &ts))
		say(run, "%s: no process recorded to mark", name);
}

int msc_run_check(struct msc_run *run, struct msc_recorder_opts *o, bool has_prog,
		  bool interval_set, const char *seed, struct msc_err *err)
{
	if (o->sample) {
		if (run->poll)
			return msc_err_set(err, -EINVAL, "--poll records no allocations to sample");
		/* A scan needs every live block known: those not recorded
		 * would hide the pointers they hold. */
		o->scan = false;
		if (seed && *seed) {
			if (msc_parse_uint(seed, &o->seed))
				return msc_err_set(err, -ERANGE, "invalid MEMSCOPE_SEED '%s' (an integer)",
						   seed);
			o->seeded = true;
		}
	}
	if (run->poll && run->mark_signal)
		return msc_err_set(err, -EINVAL, "--poll reads /proc only: it has no recording to mark");
	if (run->pid) {
		if (has_prog)
			return msc_err_set(err, -EINVAL, "a program and -p: give one or the other");
		if (run->nhooks)
			return msc_err_set(err, -EINVAL,
					   "--hook works when ms-record runs the program, not with -p");
		if (run->poll && (o->events || o->follow || (interval_set && !o->interval_ms)))
			return msc_err_set(err, -EINVAL,
					   "--poll reads /proc only, every interval above 0: it sees no events or children");
		o->interval_ms = run->poll && !interval_set ? 1000 : o->interval_ms;
		o->mode = "attach";
		o->scan = false;
		return 0;
	}
	if (!has_prog)
		return msc_err_set(err, -EINVAL, "no program given");
	if (run->duration_ns || run->poll)
		return msc_err_set(err, -EINVAL, "%s needs -p",
				   run->duration_ns ? "--duration" : "--poll");
	return 0;
}

/* ------------------------------------------------------------ launching */

/*
 * The program's environment: ours, with LD_PRELOAD led by the shim (the
 * program's own preloads after it) and the shim's MEMSCOPE_* variables set
 * or removed.  NULL when out of memory; the strings it adds are in *owned.
 */
static char **child_env(const struct msc_run *run, const char *sock, char *owned[3])
{
	static const char *const ours[] = { "LD_PRELOAD=", "MEMSCOPE_SOCK=", "MEMSCOPE_HOOKS=",
					     "MEMSCOPE_QUIET=" };
	const char *old = getenv("LD_PRELOAD"), *shim = run->shim;
	const char *hooks = run->nhooks ? run->hooks : NULL;
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n])
		n++;
	env = malloc((n + 5) * sizeof(*env));
	owned[0] = malloc(strlen("LD_PRELOAD=") + strlen(shim) + (old ? strlen(old) : 0) + 2);
	owned[1] = malloc(strlen("MEMSCOPE_SOCK=") + strlen(sock) + 1);
	owned[2] = hooks ? malloc(strlen("MEMSCOPE_HOOKS=") + strlen(hooks) + 1) : NULL;
	if (!env || !owned[0] || !owned[1] || (hooks && !owned[2])) {
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
	if (hooks) {
		sprintf(owned[2], "MEMSCOPE_HOOKS=%s", hooks);
		env[k++] = owned[2];
	}
	if (run->quiet)
		env[k++] = (char *)"MEMSCOPE_QUIET=1";
	env[k] = NULL;
	return env;
}

/*
 * Starts the program from a vfork, not a fork, so that nothing of ours is
 * copied, page tables included (a fork copies them, and copy-on-write
 * faults follow it, in every recording).  Not posix_spawn: glibc's
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

static int launch(const struct msc_run *run, const char *sock, const sigset_t *orig_mask)
{
	char *owned[3] = { NULL, NULL, NULL }, **env = child_env(run, sock, owned);
	int ret = env ? spawn(run->prog, run->argv, env, orig_mask, run->orig_pipe,
			      run->stdout_to_stderr) : -ENOMEM;

	free(env);
	free(owned[0]);
	free(owned[1]);
	free(owned[2]);
	return ret;
}

/* ------------------------------------------------------------ recording */

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
 * at most: collect_poll.c): 2 ms, what a burst of full-speed recording takes to
 * fill a 64 KiB stretch of a ring several times over.  A sampled recording
 * writes a record per sampled block, about one per BYTES allocated: 100 ms
 * fill a ring's first 64 KiB only for a program allocating 3 GB a second
 * at 512 KiB.  Each wake-up we spare is a context switch on a CPU the
 * program may be running on, and CPU that a recording left on for hours
 * costs.
 */
#define NAP_MS 2
#define NAP_ATTACHED_MS 10
#define NAP_SAMPLED_MS 100
static int record_loop(struct msc_run *run, struct msc_recorder *rec, int sfd, int child, int timeout_ms)
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
				if (sig == run->mark_signal && (si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE)) {
					signal_mark(run, rec);
					continue;
				}
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

/* Drains the signalfd: true when a signal came that is not wake_only, nor
 * the --mark-signal (which marks the recording, rec, when there is one). */
static bool stop_signal(struct msc_run *run, struct msc_recorder *rec, int sfd)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == run->mark_signal && rec)
			signal_mark(run, rec);
		else
			stop |= !wake_only(sig);
	}
	return stop;
}

/*
 * Detaches; a process stopped meanwhile (job control, a debugger) is
 * waited for, recording on, until it continues or ends, or until a second
 * signal, which leaves it hooked.  0, or 1 when the hooks stay (said).
 */
static int detach_when_running(struct msc_run *run, struct msc_recorder *rec, int sfd,
			       struct msc_inject_stats *de, int nap_ms)
{
	struct msc_err err;
	bool said = false;
	int rc, pid = run->pid;

	while ((rc = msc_recorder_detach(rec, de, &err)) == -EAGAIN) {
		/* (or, running, every thread was in the allocator: again) */
		if (!said && msc_recorder_main_stopped(rec)) {
			say(run, "pid %d is stopped: detaching once it continues (kill -CONT %d); a second signal leaves it as it is, hooked",
			    pid, pid);
			said = true;
		}
		if (msc_recorder_poll(rec, sfd, nap_ms) > 0 && stop_signal(run, rec, sfd)) {
			say(run, "pid %d: not detached: its hooks stay in until it is attached and detached again",
			    pid);
			return 1;
		}
		if (msc_recorder_main_done(rec, NULL))
			return 0;
	}
	if (rc) {
		say(run, "%s", err.msg);
		return 1;
	}
	return 0;
}

/*
 * Attached: records until a signal, the duration, or the process's end,
 * then detaches, the collector napping nap_ms at most (record_loop says
 * why).  Returns 0 (run->status: 1 when the hooks stay in), or the
 * attach's error.
 */
static int record_attached(struct msc_run *run, struct msc_recorder *rec, int sfd, int nap_ms,
			   struct msc_err *err)
{
	struct msc_inject_stats at = { 0 }, de = { 0 };
	char line[512];
	uint64_t end = run->duration_ns ? msc_now_monotonic() + run->duration_ns : 0;
	bool stop = false;
	int rc = 0, pid = run->pid;

	rc = msc_recorder_attach(rec, pid, run->shim, &at, err);
	if (rc) {
		msc_recorder_finish(rec, "interrupted");
		return rc;
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
			stop = stop_signal(run, rec, sfd);
		if (msc_recorder_main_done(rec, NULL))
			break;
	}
	if (stop)
		rc = detach_when_running(run, rec, sfd, &de, nap_ms);
	msc_recorder_finish(rec, "interrupted");
	msc_recorder_attach_line(msc_recorder_summary(rec), pid, stop && !rc, &at, &de, line,
				 sizeof(line));
	run->warn(run->ctx, line);
	run->status = rc;
	return 0;
}

/*
 * --poll: samples /proc every interval until a signal, the duration, or
 * the process's end.  Returns 0, or the error when its memory cannot be
 * read.
 */
static int record_polled(struct msc_run *run, struct msc_writer *w, int sfd,
			 struct msc_err *err)
{
	uint64_t now = msc_now_monotonic(), next = now, interval_ms = run->opts->interval_ms;
	uint64_t end = run->duration_ns ? now + run->duration_ns : 0;
	const char *reason = "detached";
	struct msc_poller *p = msc_poller_new(run->pid, interval_ms, w, err);
	char line[512];

	if (!p)
		return err->code ? err->code : -EIO;
	for (;;) {
		struct pollfd pfd = { .fd = sfd, .events = POLLIN };
		int ret = msc_poller_sample(p, err);

		if (ret) {
			if (ret != -ESRCH)
				say(run, "%s", err->msg);
			reason = "exit";
			break;
		}
		next += interval_ms * 1000000;
		now = msc_now_monotonic();
		if (end && next > end)
			next = end;
		if ((poll(&pfd, 1, next > now ? (int)((next - now + 999999) / 1000000) : 0) > 0 &&
		     stop_signal(run, NULL, sfd)) || (end && msc_now_monotonic() >= end))
			break;
	}
	msc_poller_finish(p, reason);
	msc_poller_summary_line(p, line, sizeof(line));
	run->warn(run->ctx, line);
	msc_poller_free(p);
	return 0;
}

/* ------------------------------------------------------------ the call */

int msc_run(struct msc_run *run, struct msc_recorder *rec, struct msc_writer *w,
	    struct msc_err *err)
{
	/* Those that would end ms-record by default, but SIGPIPE (its
	 * output's) and the core-dumping faults (its own): passed on to
	 * the program, or, attached, the end of the recording; and those
	 * that only wake it (wake_only: SIGURG is kept from the program, as
	 * it was when ignored by default). */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
				    SIGVTALRM, SIGPROF, SIGCHLD, SIGURG };
	sigset_t block, orig;
	int sfd, nap_ms, pid, rc;
	size_t i;

	sigemptyset(&block);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&block, sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	/* record_loop says why these naps */
	nap_ms = run->opts->sample ? NAP_SAMPLED_MS : run->pid ? NAP_ATTACHED_MS : NAP_MS;
	run->status = 0;
	if (run->poll) {
		rc = record_polled(run, w, sfd, err);
	} else if (run->pid) {
		rc = record_attached(run, rec, sfd, nap_ms, err);
	} else {
		pid = launch(run, msc_recorder_socket(rec), &orig);
		if (pid < 0) {
			rc = msc_err_set(err, pid, "cannot run '%s': %s", run->prog, strerror(-pid));
		} else {
			char line[512];
			const char *name = strrchr(run->prog, '/') ? strrchr(run->prog, '/') + 1 :
								    run->prog;

			if (run->started)
				run->started(run->ctx, pid);
			msc_recorder_set_main(rec, pid, run->prog, run->argv);
			run->status = record_loop(run, rec, sfd, pid, nap_ms);
			msc_recorder_summary_line(msc_recorder_summary(rec), name, run->status, line,
						  sizeof(line));
			run->warn(run->ctx, line);
			rc = 0;
		}
	}
	if (sfd >= 0)
		close(sfd);
	return rc;
}
