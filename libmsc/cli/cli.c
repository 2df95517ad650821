/* SPDX-License-Identifier: MIT */
/* Shared command-line handling for the ms-* tools: see msc_cli.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_agg.h"
#include "msc_cli.h"
#include "msc_err.h"
#include "msc_fsafe.h"

const char *msc_prog = "memscope";

static void at_exit_close_stdout(void)
{
	if (msc_cli_close_stdout())
		_exit(MSC_EXIT_TROUBLE);
}

void msc_cli_start(const char *name)
{
	msc_prog = name;
	signal(SIGPIPE, SIG_IGN);
	atexit(at_exit_close_stdout);
}

int msc_cli_close_stdout(void)
{
	int err = 0;

	if (fflush(stdout) != 0 || ferror(stdout))
		err = errno ? errno : EIO;
	if (err && err != EPIPE) {
		fprintf(stderr, "%s: write error: %s\n", msc_prog, strerror(err));
		clearerr(stdout);
		return MSC_EXIT_TROUBLE;
	}
	clearerr(stdout);
	return 0;
}

static int open_output_err(const char *path, bool truncate, struct msc_err *err)
{
	int fd = msc_fsafe_open_output(path, truncate);

	if (fd < 0)
		msc_err_set(err, -errno, "cannot open '%s': %s%s", path, strerror(errno),
			    errno == EPERM ? " (a link or file of another user in a directory others can write)" : "");
	return fd;
}

int msc_open_output_err(const char *path, struct msc_err *err)
{
	return open_output_err(path, true, err);
}

int msc_open_output_keep(const char *path, struct msc_err *err)
{
	return open_output_err(path, false, err);
}

off_t msc_output_cut(int fd)
{
	struct stat st;
	off_t end;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;	/* a pipe, a device: nothing to cut */
	end = lseek(fd, 0, SEEK_CUR);
	if (end > 0 && st.st_size > end && ftruncate(fd, end))
		return -1;
	return end;
}

int msc_cli_check_write(int err, const char *what)
{
	if (!err || err == EPIPE)
		return 0;
	fprintf(stderr, "%s: write error on %s: %s\n", msc_prog, what ? what : "standard output",
		strerror(err));
	return MSC_EXIT_TROUBLE;
}

int msc_cli_finish_output(struct msc_writer *w, int fd, const char *output)
{
	int status = msc_cli_check_write(-msc_writer_release(w), output);

	if (fd != 1 && close(fd) && !status) {
		msc_warn("write error on '%s': %s", output, strerror(errno));
		status = MSC_EXIT_TROUBLE;
	}
	return status;
}

static void vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", msc_prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void msc_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", msc_prog);
	exit(MSC_EXIT_TROUBLE);
}

void msc_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(MSC_EXIT_TROUBLE);
}

void msc_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

static bool is_long(const char *arg)
{
	return arg && arg[0] == '-' && arg[1] == '-';
}

/*
 * Whether getopt_long's error was "--quiet=yes": arg, the last argument it
 * took, is a long option with an argument whose name (or a prefix of it,
 * as getopt_long takes them) has the value val.  (Otherwise the error was
 * an invalid letter, maybe inside a later "-qz".)
 */
static bool given_argument(const struct option *all, const char *arg, int val)
{
	size_t n = is_long(arg) ? strcspn(arg + 2, "=") : 0;

	if (!n || arg[2 + n] != '=')
		return false;
	for (; all->name; all++)
		if (all->val == val && strncmp(all->name, arg + 2, n) == 0)
			return true;
	return false;
}

/* Long aliases are told apart by their value: ALIAS_VAL + their index. */
#define ALIAS_VAL 0x40000000

static const struct msc_cli_alias *alias_used(const struct msc_cli *cli, int c)
{
	const struct msc_cli_alias *a;

	for (a = cli->aliases; a && a->old; a++) {
		if (c >= ALIAS_VAL ? c - ALIAS_VAL == a - cli->aliases :
		    a->old[1] != '-' && a->old[1] == c)
			return a;
	}
	return NULL;
}

/* Edit distance of a[0..na) and b[0..nb), a swap of neighbours one edit
 * (names of options: short). */
static unsigned edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	unsigned m[48][48];
	size_t i, j;

	if (na >= ARRAY_SIZE(m) || nb >= ARRAY_SIZE(m))
		return UINT32_MAX;
	for (i = 0; i <= na; i++)
		m[i][0] = (unsigned)i;
	for (j = 0; j <= nb; j++)
		m[0][j] = (unsigned)j;
	for (i = 1; i <= na; i++)
		for (j = 1; j <= nb; j++) {
			unsigned best = m[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (m[i - 1][j] + 1 < best)
				best = m[i - 1][j] + 1;
			if (m[i][j - 1] + 1 < best)
				best = m[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    m[i - 2][j - 2] + 1 < best)
				best = m[i - 2][j - 2] + 1;
			m[i][j] = best;
		}
	return m[na][nb];
}

/* An unknown "--name[=value]": the options it may have meant, said. */
static void unknown_long(const struct option *all, const char *arg)
{
	const char *name = arg + 2, *best = NULL;
	size_t len = strcspn(name, "="), i;
	unsigned d, bestd = UINT32_MAX, prefixed = 0;
	char list[256] = "";

	for (i = 0; all[i].name; i++) {
		/* Old spellings are not offered. */
		if (all[i].val >= ALIAS_VAL)
			continue;
		if (strncmp(all[i].name, name, len) == 0) {
			size_t l = strlen(list);

			snprintf(list + l, sizeof(list) - l, "%s--%s", prefixed ? ", " : "", all[i].name);
			prefixed++;
		}
		d = edit_distance(name, len, all[i].name, strlen(all[i].name));
		if (d < bestd) {
			bestd = d;
			best = all[i].name;
		}
	}
	if (prefixed > 1)
		msc_usage_error("option '%.*s' is ambiguous: %s", (int)(len + 2), arg, list);
	if (best && bestd <= 2 && bestd * 3 <= len)
		msc_usage_error("unrecognized option '%.*s'; did you mean '--%s'?", (int)(len + 2), arg,
				best);
	msc_usage_error("unrecognized option '%s'", arg);
}

/* An option's letter, if it has one (its value is one). */
static int opt_letter(const struct msc_cli_opt *o)
{
	return o->val > 0 && o->val < 128 && isalnum(o->val) ? o->val : 0;
}

/* One option's lines of --help: "  -p, --pid PID" (or "      --groups")
 * and its description from cli->column on, on the next line when the
 * option leaves no two spaces before it. */
static void print_opt(const struct msc_cli *cli, const struct msc_cli_opt *o)
{
	const char *h = o->help, *nl;
	int n;

	if (opt_letter(o))
		n = printf("  -%c, --%s", opt_letter(o), o->name);
	else
		n = printf("      --%s", o->name);
	if (o->arg)
		n += printf(o->has_arg == optional_argument ? "[=%s]" : " %s", o->arg);
	if (n + 2 > cli->column) {
		putchar('\n');
		n = 0;
	}
	for (;;) {
		nl = strchr(h, '\n');
		printf("%*s%.*s\n", cli->column - n, "", nl ? (int)(nl - h) : (int)strlen(h), h);
		if (!nl)
			break;
		h = nl + 1;
		n = 0;
	}
}

static void print_help(const struct msc_cli *cli)
{
	static const struct msc_cli_opt help_opts[] = {
		{ 'h', "help", no_argument, NULL, "show this help and exit" },
		{ 'V', "version", no_argument, NULL, "show the version and exit" },
	};
	const struct msc_cli_opt *o;
	size_t i;

	fputs(cli->usage, stdout);
	putchar('\n');
	for (o = cli->opts; o->name; o++)
		print_opt(cli, o);
	for (i = 0; i < ARRAY_SIZE(help_opts); i++)
		print_opt(cli, &help_opts[i]);
	if (cli->tail) {
		putchar('\n');
		fputs(cli->tail, stdout);
	}
}

int msc_cli_getopt(const struct msc_cli *cli, int argc, char *const argv[])
{
	static struct option *all;
	static char *shortopts;
	const struct msc_cli_alias *alias;
	size_t nalias = 0;
	int c;

	while (cli->aliases && cli->aliases[nalias].old)
		nalias++;
	if (!all) {
		size_t n = 0, i, k, len;

		while (cli->opts[n].name)
			n++;
		all = calloc(n + nalias + 3, sizeof(*all));
		/* each option's letter and two colons, aliases' too, "+:", "hV" */
		shortopts = malloc(3 * (n + nalias) + 5);
		if (!all || !shortopts)
			msc_die("out of memory");
		/* Leading ':' makes getopt report a missing argument as ':';
		 * '+' (stop at the first non-option, for commands that take a
		 * program) must come before it. */
		len = (size_t)sprintf(shortopts, "%s:", cli->in_order ? "+" : "");
		for (i = 0; i < n; i++) {
			const struct msc_cli_opt *o = &cli->opts[i];

			all[i] = (struct option){ o->name, o->has_arg, NULL, o->val };
			if (!opt_letter(o))
				continue;
			shortopts[len++] = (char)o->val;
			if (o->has_arg != no_argument)
				shortopts[len++] = ':';
			if (o->has_arg == optional_argument)
				shortopts[len++] = ':';
		}
		shortopts[len] = '\0';
		strcat(shortopts, "hV");
		all[n] = (struct option){ "help", no_argument, NULL, 'h' };
		all[n + 1] = (struct option){ "version", no_argument, NULL, 'V' };
		for (i = 0, k = n + 2; i < nalias; i++) {
			const struct msc_cli_alias *a = &cli->aliases[i];

			if (a->old[1] == '-') {
				all[k++] = (struct option){ a->old + 2, a->has_arg, NULL,
							    ALIAS_VAL + (int)i };
			} else {
				len = strlen(shortopts);
				shortopts[len++] = a->old[1];
				if (a->has_arg == required_argument)
					shortopts[len++] = ':';
				shortopts[len] = '\0';
			}
		}
		opterr = 0;
	}
	c = getopt_long(argc, argv, shortopts, all, NULL);
	switch (c) {
	case 'h':
		print_help(cli);
		exit(msc_cli_close_stdout());
	case 'V':
		printf("%s (memscope) %s\n", cli->name, MSC_VERSION);
		exit(msc_cli_close_stdout());
	case ':':
		/* getopt_long sets optopt to a long option's value, which is
		 * no letter: a long option is named as it was written. */
		if (!is_long(argv[optind - 1]))
			msc_usage_error("option '-%c' requires an argument", optopt);
		msc_usage_error("option '%s' requires an argument", argv[optind - 1]);
	case '?':
		if (!optopt && is_long(argv[optind - 1]))
			unknown_long(all, argv[optind - 1]);
		if (!optopt)
			msc_usage_error("unrecognized option '%s'", argv[optind - 1]);
		if (given_argument(all, argv[optind - 1], optopt))
			msc_usage_error("option '%.*s' doesn't allow an argument",
					(int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
		msc_usage_error("invalid option -- '%c'", optopt);
	default:
		alias = c > 0 ? alias_used(cli, c) : NULL;
		if (!alias)
			return c;
		msc_warn("%s is an old spelling of %s and goes in memscope %s", alias->old,
			 alias->now, MSC_CLI_ALIAS_UNTIL);
		return alias->val;
	}
}

unsigned msc_cli_count(const char *arg, unsigned max)
{
	uint64_t v;

	if (msc_parse_uint(arg, &v) || v == 0 || v > max)
		msc_usage_error("invalid count '%s'", arg);
	return (unsigned)v;
}

unsigned msc_cli_columns(int fd)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	uint64_t v;

	if (env && !msc_parse_uint(env, &v) && v >= 20 && v <= 100000)
		return (unsigned)v;
	if (isatty(fd) && !ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 0;
}

int msc_parse_pid(const char *s, int *pid)
{
	uint64_t v;

	if (msc_parse_uint(s, &v) || v == 0 || v > 0x3fffffff)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

/* Parses a non-negative decimal with an optional fraction; end is set. */
static int parse_decimal(const char *s, long double *v, const char **end)
{
	const char *p = s;
	long double x = 0, scale = 1;
	bool any = false;

	while (*p >= '0' && *p <= '9') {
		x = x * 10 + (*p - '0');
		p++;
		any = true;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			scale /= 10;
			x += (*p - '0') * scale;
			p++;
			any = true;
		}
	}
	if (!any)
		return -EINVAL;
	*v = x;
	*end = p;
	return 0;
}

int msc_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGTPE";
	const char *p, *u;
	long double v, mult = 1;

	if (!s || parse_decimal(s, &v, &p))
		return -EINVAL;
	if (*p) {
		u = *p != 'B' ? strchr(units, toupper((unsigned char)*p)) : NULL;
		if (*p == 'B' && p[1] == '\0') {
			p++;
		} else if (u && *p) {
			mult = powl(1024, (long double)(u - units + 1));
			p++;
			if (*p == 'i' && p[1] == 'B')
				p += 2;
			else if (*p == 'B')
				p++;
		} else {
			return -EINVAL;
		}
		if (*p)
			return -EINVAL;
	}
	/*
	 * Round before the range check: v + 0.5L rounds 2^64 - 1 up to 2^64,
	 * which does not convert to uint64_t (it gave 0 for UINT64_MAX).
	 */
	v = roundl(v * mult);
	if (v >= 18446744073709551616.0L)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int msc_parse_size_or_pct(const char *s, uint64_t *out, bool *is_pct)
{
	size_t n = s ? strlen(s) : 0;

	if (n > 1 && s[n - 1] == '%') {
		long double v;
		const char *p;

		if (parse_decimal(s, &v, &p) || p != s + n - 1)
			return -EINVAL;
		/* A huge percentage must not overflow the conversion. */
		v = roundl(v * 1000);
		if (v >= 18446744073709551616.0L)
			return -ERANGE;
		*out = (uint64_t)v;
		*is_pct = true;
		return 0;
	}
	*is_pct = false;
	return msc_parse_size(s, out);
}

int msc_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *suffix; long double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3L }, { "ms", 1e6L }, { "s", 1e9L },
		{ "m", 60e9L }, { "h", 3600e9L }, { "", 1e6L },
	};
	const char *p;
	long double v;
	size_t i;

	if (!s || parse_decimal(s, &v, &p))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(p, units[i].suffix) == 0) {
			/* Rounded before the range check, as in msc_parse_size(). */
			v = roundl(v * units[i].mult);
			if (v >= 18446744073709551616.0L)
				return -ERANGE;
			*ns = (uint64_t)v;
			return 0;
		}
	}
	return -EINVAL;
}

void msc_cli_push(const char ***v, unsigned *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		msc_die("out of memory");
	*v = nv;
	nv[(*n)++] = s;
}

char *msc_cli_split(const char *list, const char ***v, unsigned *n)
{
	char *copy = strdup(list), *tok, *save = NULL;

	if (!copy)
		msc_die("out of memory");
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		msc_cli_push(v, n, tok);
	return copy;
}

/* ---------------------------------------------------------------- gates */

bool msc_gates_opt(struct msc_gates *g, int c, const char *arg)
{
	if (c == MSC_CLI_FAIL_ON_ERROR) {
		g->error = true;
		return true;
	}
	if (c != MSC_CLI_FAIL_ON_LEAK)
		return false;
	g->leak = true;
	if (msc_gate_parse_kinds(arg, &g->leak_mask))
		msc_usage_error("invalid leak kinds '%s' (definitely, indirectly, possibly, "
				"reachable, unscanned, unknown, all)", arg);
	return true;
}

int msc_gates_check(const struct msc_gates *g, const uint64_t *leaks, uint64_t errors)
{
	int status = 0;

	if (g->leak) {
		uint64_t n = msc_gate_leaks(leaks, g->leak_mask);

		if (n) {
			/* In the reports' order. */
			static const unsigned order[] = { MSC_LEAK_DEFINITELY, MSC_LEAK_INDIRECTLY,
							  MSC_LEAK_POSSIBLY, MSC_LEAK_REACHABLE,
							  MSC_LEAK_UNSCANNED, MSC_LEAK_UNKNOWN };
			char kinds[128] = "";
			unsigned i;

			for (i = 0; i < ARRAY_SIZE(order); i++)
				if (g->leak_mask & (1u << order[i]))
					snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), "%s%s",
						 kinds[0] ? ", " : "", msc_leak_kind_name(order[i]));
			msc_warn("--fail-on-leak: %" PRIu64 " leaked block%s (%s)", n, n == 1 ? "" : "s",
				 kinds);
			status = MSC_EXIT_FINDING;
		}
	}
	if (g->error && errors) {
		msc_warn("--fail-on-error: %" PRIu64 " memory error%s", errors, errors == 1 ? "" : "s");
		status = MSC_EXIT_FINDING;
	}
	return status;
}
