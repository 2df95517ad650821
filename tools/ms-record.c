/* SPDX-License-Identifier: MIT */
/*
 * ms-record: run a program under libmemscope.so and write what it allocates
 * as memscope records: aggregated sites and leaks with symbolized stacks,
 * periodic samples, and with --events every allocation event.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msc_agg.h"
#include "msc_cli.h"
#include "msc_collect.h"
#include "msc_proc.h"
#include "msc_format.h"
#include "msc_scan.h"
#include "msc_stacks.h"
#include "msc_stream.h"

static const char help[] =
	"Usage: ms-record [options] [--] PROGRAM [ARGS...]\n"
	"Run PROGRAM with libmemscope.so preloaded and write what it allocates as\n"
	"memscope records (NDJSON): allocation sites and leaks with symbolized\n"
	"stacks, rss samples, and a summary.\n"
	"\n"
	"  -o, --output FILE    write the records to FILE (default: standard output)\n"
	"  -e, --events         also write every allocation and free event\n"
	"  -i, --interval MS    rss sampling period in milliseconds (default 100,\n"
	"                       0 for none)\n"
	"  -d, --depth N        frames per stack, 1 to 256 (default 64)\n"
	"  -u, --unwind MODE    dwarf (default), fp (frame pointers), libunwind,\n"
	"                       or none (allocation call site only)\n"
	"  -f, --follow         record forked and exec'ed children too, as\n"
	"                       separate pid-tagged streams\n"
	"      --no-scan        do not classify leaks by reachability at exit\n"
	"      --lossy          drop events rather than slow the program down when\n"
	"                       ms-record cannot keep up (counted in \"lost\")\n"
	"  -q, --quiet          no summary line on standard error\n"
	"  -h, --help           show this help and exit\n"
	"  -V, --version        show the version and exit\n"
	"\n"
	"Exit status: the program's own, 128+N when it died of signal N; 125 when\n"
	"ms-record failed, 126 when PROGRAM cannot be run or profiled (not\n"
	"executable, statically linked, setuid), 127 when it was not found.\n";

enum { OPT_NO_SCAN = 256, OPT_LOSSY };

static const struct option longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "events", no_argument, NULL, 'e' },
	{ "interval", required_argument, NULL, 'i' },
	{ "depth", required_argument, NULL, 'd' },
	{ "unwind", required_argument, NULL, 'u' },
	{ "follow", no_argument, NULL, 'f' },
	{ "no-scan", no_argument, NULL, OPT_NO_SCAN },
	{ "lossy", no_argument, NULL, OPT_LOSSY },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static const struct msc_cli cli = { "ms-record", help, "+o:ei:d:u:fq", longopts };

#define EXIT_OWN 125
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

struct thread {
	uint32_t tid;
	bool dead;
	uint64_t lo, hi, tp;
};

/* Per recorded process. */
struct proc {
	struct msc_agg agg;
	int pid;
	bool header_written;
	struct msc_range *own;		/* shim memory, excluded from the scan */
	size_t nown, capown;
	struct thread *threads;		/* its threads, for the scan */
	size_t nthreads, capthreads;
	bool scanned;
	char name[64];
};

struct recorder {
	struct msc_writer w;
	struct msc_stacks stacks;
	struct msc_collector *col;
	bool events, follow, quiet, scan;
	int child;
	bool main_attached;
	char **argv;			/* the program's */
	struct msc_collect_opts copts;
	const char *unwind_name;
	uint64_t interval_ms;
	int exit_status;		/* of the main child, wait status */
	bool output_gone;		/* EPIPE: keep draining, stop writing */
	/* summary of the main process, kept after its session ends */
	bool have_summary;
	uint64_t s_allocs, s_frees, s_bytes, s_peak, s_leaked, s_leaked_blocks;
	bool s_scanned;
	uint64_t s_lost;
};

static struct recorder R;

static void flush_output(void)
{
	if (R.w.error) {
		if (!R.output_gone && R.w.error != EPIPE)
			msc_warn("write error: %s (the program keeps running)", strerror(R.w.error));
		R.output_gone = true;
		R.w.len = 0;
		return;
	}
	msc_writer_flush(&R.w);
}

static void warn_cb(void *ctx, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	(void)ctx;
	if (R.quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	msc_warn("%s", msg);
}

static void argv_arg(const char *arg, size_t len, void *w)
{
	msc_w_strn(w, NULL, arg, len);
}

static void write_argv_of(int pid, char **argv)
{
	int i;

	msc_w_arr(&R.w, "argv");
	if (argv) {
		for (i = 0; argv[i]; i++)
			msc_w_str(&R.w, NULL, argv[i]);
	} else {
		struct msc_procfs fs;

		/* A followed process: what it runs, from /proc (it may be gone). */
		if (msc_procfs_init(&fs, NULL) == 0)
			msc_proc_cmdline(&fs, pid, argv_arg, &R.w);
		msc_procfs_release(&fs);
	}
	msc_w_arr_end(&R.w);
}

static void write_header(int pid, int ppid, const char *exe, char **argv)
{
	msc_stream_header_begin(&R.w, "ms-record", "launch");
	msc_w_i64(&R.w, "pid", pid);
	if (ppid > 0)
		msc_w_i64(&R.w, "ppid", ppid);
	if (exe && exe[0])
		msc_w_str(&R.w, "exe", exe);
	write_argv_of(pid, argv);
	msc_w_str(&R.w, "clock", "ns");
	msc_w_obj(&R.w, "options");
	msc_w_bool(&R.w, "events", R.events);
	msc_w_u64(&R.w, "interval", R.interval_ms);
	msc_w_u64(&R.w, "depth", R.copts.depth);
	msc_w_str(&R.w, "unwind", R.unwind_name);
	msc_w_bool(&R.w, "follow", R.follow);
	msc_w_bool(&R.w, "scan", R.scan);
	msc_w_bool(&R.w, "lossy", R.copts.lossy);
	msc_w_obj_end(&R.w);
	msc_w_end(&R.w);
	flush_output();
}

/* ------------------------------------------------------------ callbacks */

static bool on_attach(void *ctx, struct msc_cproc *p)
{
	struct proc *pr;
	bool is_main = p->pid == R.child;

	(void)ctx;
	/* Without --follow only the program itself (and what it execs in
	 * place) is recorded. */
	if (!is_main && !R.follow)
		return false;
	pr = calloc(1, sizeof(*pr));
	if (!pr || msc_agg_init(&pr->agg)) {
		free(pr);
		return false;
	}
	pr->pid = p->pid;
	snprintf(pr->name, sizeof(pr->name), "%.63s",
		 strrchr(p->exe, '/') ? strrchr(p->exe, '/') + 1 : p->exe);
	p->user = pr;
	if (is_main && !R.main_attached) {
		R.main_attached = true;	/* its header went out at launch */
	} else {
		write_header(p->pid, p->ppid, p->exe, NULL);
	}
	return true;
}

static void own_range(struct proc *pr, uint64_t start, uint64_t size)
{
	if (!start || !size)
		return;
	if (pr->nown == pr->capown) {
		size_t ncap = pr->capown ? pr->capown * 2 : 16;
		struct msc_range *n = realloc(pr->own, ncap * sizeof(*n));

		if (!n)
			return;
		pr->own = n;
		pr->capown = ncap;
	}
	pr->own[pr->nown++] = (struct msc_range){ start, start + size };
}

static void thread_seen(struct proc *pr, const struct msc_cevent *ev)
{
	uint64_t lo = ev->v[3], hi = ev->v[1];
	size_t i;

	/* glibc reuses the stacks of exited threads. */
	for (i = 0; i < pr->nthreads; i++)
		if (pr->threads[i].dead && lo && pr->threads[i].lo < hi && lo < pr->threads[i].hi)
			pr->threads[i] = pr->threads[--pr->nthreads], i--;
	if (pr->nthreads == pr->capthreads) {
		size_t ncap = pr->capthreads ? pr->capthreads * 2 : 16;
		struct thread *n = realloc(pr->threads, ncap * sizeof(*n));

		if (!n)
			return;
		pr->threads = n;
		pr->capthreads = ncap;
	}
	pr->threads[pr->nthreads++] = (struct thread){ ev->tid, false, lo, hi, ev->v[4] };
}

static void thread_gone(struct proc *pr, uint32_t tid)
{
	size_t i;

	for (i = pr->nthreads; i-- > 0;)
		if (pr->threads[i].tid == tid && !pr->threads[i].dead) {
			pr->threads[i].dead = true;
			break;
		}
}

static void on_event(void *ctx, struct msc_cproc *p, const struct msc_cevent *ev)
{
	struct proc *pr = p->user;
	struct msc_agg *a = &pr->agg;
	struct msc_freed fr;
	int found = 0;

	(void)ctx;
	switch (ev->type) {
	case MSC_CEV_THREAD_EXIT:
		thread_gone(pr, ev->tid);
		return;
	case MSC_CEV_THREAD:
		own_range(pr, ev->v[0], ev->v[2]);
		/* tid 0: the shared ring's state, not a thread. */
		if (ev->tid)
			thread_seen(pr, ev);
		break;
	case MSC_CEV_SAMPLE:
		if (!R.output_gone) {
			msc_write_sample(&R.w, a, p->pid, ev->ts, ev->v[0]);
			flush_output();
		}
		return;
	default:
		found = msc_agg_apply(a, ev, &fr);
		if (found < 0)
			return;
		break;
	}
	if (R.events && !R.output_gone) {
		if (ev->stack)
			msc_stacks_write(&R.stacks, &R.w, ev->stack);
		msc_write_event(&R.w, ev, R.follow ? p->pid : -1, found > 0 ? &fr : NULL);
	}
}

static void on_events(void *ctx, struct msc_cproc *p, const struct msc_cevent *ev, size_t n)
{
	struct proc *pr = p->user;
	size_t i;

	for (i = 0; i < n; i++)
		if (ev[i].type == MSC_CEV_ALLOC || ev[i].type == MSC_CEV_FREE)
			msc_agg_prefetch(&pr->agg, ev[i].v[0]);
	for (i = 0; i < n; i++)
		on_event(ctx, p, &ev[i]);
}

static void on_scan(void *ctx, struct msc_cproc *p, uint64_t sp, uint32_t tid)
{
	struct proc *pr = p->user;
	struct msc_scan_stats st;
	struct msc_err err;
	struct msc_range *ex;
	uint64_t *tps, *roots;
	size_t i, nex = 0;

	(void)ctx;
	(void)tid;
	ex = malloc((pr->nown + pr->nthreads + 1) * sizeof(*ex));
	tps = malloc((pr->nthreads + 1) * sizeof(*tps));
	roots = malloc((pr->nthreads + 1) * sizeof(*roots));
	if (!ex || !tps || !roots) {
		warn_cb(NULL, "leak scan: out of memory; leaks are reported unscanned");
		goto out;
	}
	/* Never roots: the shim's memory, and the stacks of exited threads
	 * (glibc keeps them mapped for reuse, stale pointers and all). */
	for (i = 0; i < pr->nown; i++)
		ex[nex++] = pr->own[i];
	for (i = 0; i < pr->nthreads; i++) {
		if (pr->threads[i].dead && pr->threads[i].lo)
			ex[nex++] = (struct msc_range){ pr->threads[i].lo, pr->threads[i].hi };
		tps[i] = pr->threads[i].tp;
	}
	msc_scan_dtv_roots(p->pid, tps, pr->nthreads, roots);
	if (msc_scan_process(&pr->agg, p->pid, sp, ex, nex, roots, pr->nthreads, &st, &err) == 0)
		pr->scanned = true;
	else
		warn_cb(NULL, "%s; leaks are reported unscanned", err.msg);
out:
	free(ex);
	free(tps);
	free(roots);
}

static int cmp_site_bytes(const void *x, const void *y)
{
	const struct msc_site *a = *(const struct msc_site *const *)x;
	const struct msc_site *b = *(const struct msc_site *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return a->size < b->size ? -1 : a->size > b->size;
}

static void write_results(struct proc *pr, const struct msc_cend *end, bool exec)
{
	struct msc_agg *a = &pr->agg;
	const struct msc_site **order;
	struct msc_leak *leaks = NULL;
	long nleaks = 0, nsites = 0, i;

	order = malloc((a->nsites ? a->nsites : 1) * sizeof(*order));
	if (!order) {
		msc_warn("out of memory writing the results of pid %d", pr->pid);
		return;
	}
	for (i = 0; i < (long)a->nsites; i++)
		if (!a->sites[i].removed)
			order[nsites++] = &a->sites[i];
	qsort(order, (size_t)nsites, sizeof(*order), cmp_site_bytes);
	for (i = 0; i < nsites; i++) {
		msc_stacks_write(&R.stacks, &R.w, order[i]->stack);
		msc_write_site(&R.w, a, order[i], pr->pid);
	}
	free(order);
	/* After an exec the image's memory went with it: no leaks. */
	if (!exec) {
		nleaks = msc_agg_leaks(a, &leaks);
		for (i = 0; i < nleaks; i++) {
			msc_stacks_write(&R.stacks, &R.w, a->sites[leaks[i].site].stack);
			msc_write_leak(&R.w, a, &leaks[i], pr->pid);
		}
		free(leaks);
	}
	msc_w_begin(&R.w, "end");
	msc_w_i64(&R.w, "pid", pr->pid);
	msc_w_str(&R.w, "reason", end->reason);
	if (end->status >= 0)
		msc_w_i64(&R.w, "status", end->status);
	if (end->signal) {
		msc_w_i64(&R.w, "signal", end->signal);
		if (end->core)
			msc_w_bool(&R.w, "core", true);
	}
	msc_w_u64(&R.w, "ts", a->last_ts > msc_collector_now(R.col) ? a->last_ts :
				  msc_collector_now(R.col));
	msc_write_totals(&R.w, a, !exec);
	msc_w_u64(&R.w, "lost", end->lost);
	if (end->waits)
		msc_w_u64(&R.w, "waits", end->waits);
	if (pr->pid == R.child && !exec) {
		uint64_t hwm, cpu;
		struct rusage ru;

		/* What the program and the recording cost, for the record. */
		if (msc_collector_child_usage(R.col, &hwm, &cpu)) {
			msc_w_u64(&R.w, "hwm", hwm);
			msc_w_u64(&R.w, "cpu", cpu);
		}
		if (getrusage(RUSAGE_SELF, &ru) == 0) {
			msc_w_u64(&R.w, "recorder_hwm", (uint64_t)ru.ru_maxrss * 1024);
			msc_w_u64(&R.w, "recorder_cpu",
				  (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
				  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull);
		}
	}
	if (end->corrupt)
		msc_w_bool(&R.w, "corrupt", true);
	msc_w_end(&R.w);
	flush_output();
}

static void on_detach(void *ctx, struct msc_cproc *p, const struct msc_cend *end)
{
	struct proc *pr = p->user;
	bool exec = strcmp(end->reason, "exec") == 0;

	(void)ctx;
	if (!pr)
		return;
	if (!R.output_gone)
		write_results(pr, end, exec);
	if (p->pid == R.child && !exec) {
		R.have_summary = true;
		R.s_allocs = pr->agg.allocs;
		R.s_frees = pr->agg.frees;
		R.s_bytes = pr->agg.bytes;
		R.s_peak = pr->agg.peak_live_bytes;
		msc_agg_leak_totals(&pr->agg, &R.s_leaked, &R.s_leaked_blocks, NULL, NULL,
				    &R.s_scanned);
		R.s_lost = end->lost;
	}
	msc_agg_release(&pr->agg);
	free(pr->own);
	free(pr->threads);
	free(pr);
	p->user = NULL;
}

static const struct msc_collect_ops ops = {
	on_attach, on_events, on_scan, on_detach, warn_cb,
};

/* ------------------------------------------------------------ launching */

static char *find_program(const char *name, int *status)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	struct stat st;

	if (strchr(name, '/')) {
		if (stat(name, &st) < 0) {
			*status = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
			msc_warn("cannot run '%s': %s", name, strerror(errno));
			return NULL;
		}
		return strdup(name);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return strdup(buf);
		path += len + (colon ? 1 : 0);
		if (!colon)
			break;
	}
	*status = EXIT_NOT_FOUND;
	msc_warn("'%s': command not found", name);
	return NULL;
}

/* Refuses what LD_PRELOAD cannot reach, before it runs. */
static int check_program(const char *path)
{
	unsigned char buf[4096];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) < 0) {
		msc_warn("cannot run '%s': %s", path, strerror(errno));
		return errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
	}
	if (S_ISDIR(st.st_mode)) {
		msc_warn("cannot run '%s': Is a directory", path);
		return EXIT_CANNOT_RUN;
	}
	if (access(path, X_OK) != 0) {
		msc_warn("cannot run '%s': %s", path, strerror(errno));
		return EXIT_CANNOT_RUN;
	}
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
		msc_warn("cannot profile '%s': it is set-user-ID or set-group-ID, and the "
			 "loader ignores LD_PRELOAD for such programs", path);
		return EXIT_CANNOT_RUN;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* execute-only: let exec decide */
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n >= (ssize_t)sizeof(Elf64_Ehdr) && memcmp(buf, ELFMAG, SELFMAG) == 0 &&
	    buf[EI_CLASS] == ELFCLASS64) {
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
		bool interp = false;
		int i;

		if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > (uint64_t)n)
			return 0;	/* unusual layout: let the loader judge */
		for (i = 0; i < eh->e_phnum; i++) {
			const Elf64_Phdr *ph = (const Elf64_Phdr *)(buf + eh->e_phoff) + i;

			if (ph->p_type == PT_INTERP)
				interp = true;
		}
		if (!interp) {
			msc_warn("cannot profile '%s': it is statically linked, so LD_PRELOAD "
				 "cannot put libmemscope.so in it", path);
			return EXIT_CANNOT_RUN;
		}
	}
	return 0;
}

static char *find_shim(void)
{
	const char *env = getenv("MEMSCOPE_SHIM");
	static const char *const rel[] = { "../shim/libmemscope.so", "../lib/memscope/libmemscope.so" };
	char exe[PATH_MAX], buf[PATH_MAX + 64];
	ssize_t n;
	size_t i;

	if (env && *env)
		return realpath(env, NULL);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	for (i = 0; i < ARRAY_SIZE(rel); i++) {
		snprintf(buf, sizeof(buf), "%s/%s", exe, rel[i]);
		if (access(buf, R_OK) == 0)
			return realpath(buf, NULL);
	}
	return NULL;
}

static int launch(char *prog, char **argv, const char *shim, const char *sock,
		  const sigset_t *orig_mask, void (*orig_pipe)(int), bool stdout_to_stderr)
{
	int pipefd[2], err = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		const char *old = getenv("LD_PRELOAD");
		char *pre;

		close(pipefd[0]);
		/* Records go to a pipe or file on our stdout: the program's
		 * own output must not land in the middle of them. */
		if (stdout_to_stderr && dup2(2, 1) < 0)
			_exit(EXIT_OWN);
		/* The program gets the signal state ms-record was given. */
		signal(SIGPIPE, orig_pipe);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		if (old && *old) {
			pre = malloc(strlen(shim) + strlen(old) + 2);
			if (pre)
				sprintf(pre, "%s:%s", shim, old);
		} else {
			pre = strdup(shim);
		}
		if (!pre || setenv("LD_PRELOAD", pre, 1) || setenv("MEMSCOPE_SOCK", sock, 1))
			err = ENOMEM;
		else {
			execv(prog, argv);
			err = errno;
		}
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			_exit(EXIT_CANNOT_RUN);
		_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
	}
	close(pipefd[1]);
	do {
		n = read(pipefd[0], &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(pid, NULL, 0);
		return -err;
	}
	return pid;
}

static void print_summary(const char *name, int status)
{
	char peak[32], leaked[32], a[32], f[32], st[64];

	if (R.quiet)
		return;
	if (WIFSIGNALED(status))
		snprintf(st, sizeof(st), "killed by signal %d", WTERMSIG(status));
	else
		snprintf(st, sizeof(st), "exit %d", WEXITSTATUS(status));
	if (!R.have_summary) {
		msc_warn("%s: nothing recorded: the program never loaded libmemscope.so (%s)", name, st);
		return;
	}
	fprintf(stderr, "ms-record: %s: %s allocations, %s frees, peak %s, leaked %s in %llu block%s%s%s, %s\n",
		name, msc_fmt_count(a, sizeof(a), (int64_t)R.s_allocs),
		msc_fmt_count(f, sizeof(f), (int64_t)R.s_frees),
		msc_fmt_size(peak, sizeof(peak), (int64_t)R.s_peak),
		msc_fmt_size(leaked, sizeof(leaked), (int64_t)R.s_leaked),
		(unsigned long long)R.s_leaked_blocks, R.s_leaked_blocks == 1 ? "" : "s", R.s_scanned ? "" : " (not scanned)",
		R.s_lost ? " (events lost)" : "", st);
}

int main(int argc, char **argv)
{
	const char *output = NULL;
	char *prog = NULL, *shim = NULL;
	struct msc_err err;
	sigset_t block, orig;
	void (*orig_pipe)(int);
	int c, fd = 1, sfd, status = 0, ret;
	uint64_t v;
	bool interrupted = false;

	orig_pipe = signal(SIGPIPE, SIG_DFL);
	msc_cli_start("ms-record");
	R.interval_ms = 100;
	R.copts.depth = 64;
	R.copts.unwind = MSC_UNWIND_DWARF;
	R.unwind_name = "dwarf";
	R.scan = true;
	while ((c = msc_cli_getopt(&cli, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'e':
			R.events = true;
			break;
		case 'i':
			if (msc_parse_uint(optarg, &v) || v > 3600000)
				msc_usage_error("invalid interval '%s' (milliseconds)", optarg);
			R.interval_ms = v;
			break;
		case 'd':
			if (msc_parse_uint(optarg, &v) || v < 1 || v > MSC_PROTO_MAX_DEPTH)
				msc_usage_error("invalid depth '%s' (1 to %d)", optarg,
						MSC_PROTO_MAX_DEPTH);
			R.copts.depth = (uint32_t)v;
			break;
		case 'u':
			if (strcmp(optarg, "dwarf") == 0)
				R.copts.unwind = MSC_UNWIND_DWARF;
			else if (strcmp(optarg, "fp") == 0)
				R.copts.unwind = MSC_UNWIND_FP;
			else if (strcmp(optarg, "libunwind") == 0)
				R.copts.unwind = MSC_UNWIND_LIBUNWIND;
			else if (strcmp(optarg, "none") == 0)
				R.copts.unwind = MSC_UNWIND_NONE;
			else
				msc_usage_error("invalid unwind mode '%s' (dwarf, fp, libunwind, none)",
						optarg);
			R.unwind_name = optarg;
			break;
		case 'f':
			R.follow = true;
			break;
		case OPT_NO_SCAN:
			R.scan = false;
			break;
		case OPT_LOSSY:
			R.copts.lossy = true;
			break;
		case 'q':
			R.quiet = true;
			break;
		}
	}
	if (optind >= argc)
		msc_usage_error("no program given");
	R.argv = argv + optind;

	prog = find_program(argv[optind], &status);
	if (!prog)
		return status;
	status = check_program(prog);
	if (status)
		goto fail;
	shim = find_shim();
	if (!shim) {
		msc_warn("cannot find libmemscope.so (set MEMSCOPE_SHIM to its path)");
		status = EXIT_OWN;
		goto fail;
	}
	if (output) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0) {
			msc_warn("cannot open '%s': %s", output, strerror(errno));
			status = EXIT_OWN;
			goto fail;
		}
	}
	if (msc_writer_init(&R.w, fd, 256 * 1024) || msc_stacks_init(&R.stacks, true)) {
		msc_warn("out of memory");
		status = EXIT_OWN;
		goto fail;
	}
	R.stacks.warn = warn_cb;
	R.copts.follow = R.follow;
	R.copts.scan = R.scan;
	R.copts.interval = R.interval_ms * 1000000ull;
	R.col = msc_collector_new(&R.copts, &ops, &R, &R.stacks, &err);
	if (!R.col) {
		msc_warn("%s", err.msg);
		status = EXIT_OWN;
		goto fail_writer;
	}

	/* Signals arrive through a signalfd; the program gets the original
	 * mask and dispositions. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);

	ret = launch(prog, R.argv, shim, msc_collector_socket(R.col), &orig, orig_pipe,
		     !output && !isatty(1));
	if (ret < 0) {
		msc_warn("cannot run '%s': %s", prog, strerror(-ret));
		msc_collector_free(R.col);
		status = ret == -ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
		goto fail_writer;
	}
	R.child = ret;
	msc_collector_set_child(R.col, R.child);
	write_header(R.child, getpid(), prog, R.argv);

	for (;;) {
		int r = msc_collector_poll(R.col, sfd, 2);

		if (r > 0) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				int sig = (int)si.ssi_signo;

				if (sig == SIGCHLD)
					continue;
				/* A signal sent to ms-record alone is passed on; one
				 * from the terminal reached the program already. */
				if ((si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE) &&
				    !msc_collector_child_done(R.col, NULL))
					kill(R.child, sig);
				if (msc_collector_child_done(R.col, NULL)) {
					/* The program is gone; a signal now ends the
					 * children we are still following. */
					interrupted = true;
				}
			}
		}
		if (msc_collector_child_done(R.col, &status)) {
			if (!msc_collector_sessions(R.col))
				break;
			if (interrupted) {
				msc_collector_finish(R.col, "interrupted");
				break;
			}
		}
	}
	print_summary(strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog, status);
	msc_collector_free(R.col);
	msc_stacks_release(&R.stacks);
	ret = msc_writer_release(&R.w);
	if (ret && ret != -EPIPE && !R.output_gone)
		msc_warn("write error on %s: %s", output ? output : "standard output", strerror(-ret));
	if (fd != 1)
		close(fd);
	free(prog);
	free(shim);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);

	/* Before the program ran: status is ms-record's own. */
fail_writer:
	msc_stacks_release(&R.stacks);
	msc_writer_release(&R.w);
	if (fd != 1)
		close(fd);
fail:
	free(prog);
	free(shim);
	return status;
}
