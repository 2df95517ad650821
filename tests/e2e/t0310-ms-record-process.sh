#!/bin/sh
# Recording does not change the program: its output, exit status and
# signals are its own; crashes keep what was recorded; children are recorded
# only with --follow; a collector that dies never takes the program down.
. "$(dirname "$0")/lib.sh"

# --- output and exit status unchanged -------------------------------------
"$EX/leaky" >"$OUT/native.out" 2>&1
check_status "leaky recorded" 0 ms-record -q -o "$OUT/r.ndjson" "$EX/leaky"
check_eq "same output" "$(cat "$OUT/native.out")" "$(cat "$OUT/last.out")"
check_status "exit status kept" 3 ms-record -q -o "$OUT/r.ndjson" /bin/sh -c 'exit 3'
check_eq "end status" "exit 3" "$(jq -r 'select(.type=="end") | "\(.reason) \(.status)"' "$OUT/r.ndjson")"
printf 'line one\nline two\n' >"$OUT/in.txt"
ms-record -q -o "$OUT/cat.ndjson" /bin/cat <"$OUT/in.txt" >"$OUT/cat.out"
check_eq "stdin and stdout passed through" "$(cat "$OUT/in.txt")" "$(cat "$OUT/cat.out")"
# Records on a pipe: the program's stdout goes to stderr, the stream stays valid.
ms-record -q "$EX/leaky" 2>"$OUT/err" | jq -c . >"$OUT/piped.ndjson"
check_eq "piped stream is valid JSON" 0 $?
check_grep "program output moved to stderr" "leaky: done" "$OUT/err"
check_eq "piped stream has the leaks" 1020 "$(jq -r 'select(.type=="end") | .leaked_blocks' "$OUT/piped.ndjson")"
# The user's LD_PRELOAD is kept.
cat >"$OUT/pre.c" <<'C'
#include <stdio.h>
__attribute__((constructor)) static void hello(void) { fputs("preloaded\n", stderr); }
C
cc -shared -fPIC -o "$OUT/libpre.so" "$OUT/pre.c"
# (verify_asan_link_order: ms-record built with SANITIZE runs after libpre.so.)
ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD="$OUT/libpre.so" ms-record -q -o "$OUT/p.ndjson" /bin/true 2>"$OUT/pre.err"
check_grep "user's LD_PRELOAD kept" "preloaded" "$OUT/pre.err"
check_eq "and ours loaded too" "exit" "$(jq -r 'select(.type=="end") | .reason' "$OUT/p.ndjson")"

# --- crashes: what was recorded is kept -----------------------------------
check_status "SIGSEGV: 128+11" 139 ms-record -q -o "$OUT/crash.ndjson" "$EX/crash"
check_eq "crash end" "signal 11" "$(jq -r 'select(.type=="end") | "\(.reason) \(.signal)"' "$OUT/crash.ndjson")"
check_eq "crash: 100 x 64 B before the fault, unscanned" "100 6400 unscanned" \
	"$(jq -r 'select(.type=="leak") | "\(.count) \(.bytes) \(.kind)"' "$OUT/crash.ndjson")"
check_status "abort: 128+6" 134 ms-record -q -o "$OUT/abort.ndjson" "$EX/crash" abort
check_eq "abort end" "signal 6 100" "$(jq -r 'select(.type=="end") | "\(.reason) \(.signal) \(.allocs)"' "$OUT/abort.ndjson")"

# SIGKILL of the program.
ms-record -q -o "$OUT/kill.ndjson" "$EX/memhog" 1 >"$OUT/kill.log" 2>&1 &
rec=$!
wait_for_line "$OUT/kill.log" ready && kill -KILL "$(sed -n 's/^ready //p' "$OUT/kill.log")"
wait $rec
check_eq "SIGKILL: 128+9" 137 $?
check_eq "SIGKILL end" "signal 9" "$(jq -r 'select(.type=="end") | "\(.reason) \(.signal)"' "$OUT/kill.ndjson")"

# SIGTERM and SIGINT sent to ms-record alone reach the program.
for sig in TERM INT; do
	ms-record -q -o "$OUT/$sig.ndjson" "$EX/churn" 30 >"$OUT/$sig.log" 2>&1 &
	rec=$!
	wait_for_line "$OUT/$sig.log" "churn: started" && kill -$sig $rec
	wait $rec
	check_eq "SIG$sig forwarded: the program's own status" 0 $?
	check_grep "SIG$sig: the program stopped cleanly" "churn: stopped" "$OUT/$sig.log"
	check_eq "SIG$sig: end written, nothing lost" "exit 0 0" \
		"$(jq -r 'select(.type=="end") | "\(.reason) \(.status) \(.lost)"' "$OUT/$sig.ndjson")"
	check_eq "SIG$sig: its one kept block" "1 256 reachable" \
		"$(jq -r 'select(.type=="leak" and .size==256) | "\(.count) \(.bytes) \(.kind)"' "$OUT/$sig.ndjson")"
	check_eq "SIG$sig: nothing else lost" "0" "$(jq -r 'select(.type=="end") | .leaked_bytes' "$OUT/$sig.ndjson")"
done

# --- children --------------------------------------------------------------
check_status "forkexec" 0 ms-record -q -o "$OUT/fe.ndjson" "$EX/forkexec"
check_eq "without --follow: the parent only" "1" "$(jq -r 'select(.type=="header") | .pid' "$OUT/fe.ndjson" | wc -l)"
check_eq "parent leaks" "3 333 definitely" "$(jq -r 'select(.type=="leak") | "\(.count) \(.bytes) \(.kind)"' "$OUT/fe.ndjson")"
check_status "forkexec --follow" 0 ms-record -q -f -o "$OUT/fef.ndjson" "$EX/forkexec"
R="$OUT/fef.ndjson"
check_eq "--follow: three streams" 3 "$(jq -r 'select(.type=="header") | .pid' "$R" | wc -l)"
parent=$(jq -r 'select(.type=="header") | .pid' "$R" | head -1)
child=$(jq -r --argjson p "$parent" 'select(.type=="header" and .pid != $p) | .pid' "$R" | head -1)
check_eq "child stream ended by exec, then leaky's" "exec exit" \
	"$(jq -r --argjson c "$child" 'select(.type=="end" and .pid==$c) | .reason' "$R" | tr '\n' ' ' | sed 's/ $//')"
check_eq "child before exec: 2 x 222 B, no leak records" "444 0" \
	"$(jq -s -r --argjson c "$child" '[.[] | select(.type=="end" and .pid==$c)][0] as $e
		| "\($e.live_bytes) \([.[] | select(.type=="leak" and .pid==$c and .size==222)] | length)"' "$R")"
check_eq "leaky after exec: its leaks" "89609" \
	"$(jq -r --argjson c "$child" 'select(.type=="end" and .pid==$c and .reason=="exit") | .leaked_bytes' "$R")"
check_eq "parent in --follow" "333" \
	"$(jq -r --argjson p "$parent" 'select(.type=="end" and .pid==$p) | .leaked_bytes' "$R")"
check_eq "--follow: events tagged with pid" "" \
	"$(jq -r 'select(.type=="site" or .type=="leak") | select(.pid == null) | .type' "$R")"

# --- the collector stops a while: the program waits, nothing is lost ------
# Stopped, ms-record reads nothing: churn fills its ring, sleeps on the
# ring's futex (waking every 10 ms to see that ms-record is still there)
# and goes on when ms-record, continued, makes room and wakes it.
ms-record -q -o "$OUT/stopped.ndjson" "$EX/churn" 1 >"$OUT/stopped.log" 2>&1 &
rec=$!
wait_for_line "$OUT/stopped.log" "churn: started"
kill -STOP $rec
sleep 0.5
kill -CONT $rec
wait $rec
check_eq "stopped collector: ms-record and churn exit 0" 0 $?
check_grep "stopped collector: churn ran to its end" "churn: done" "$OUT/stopped.log"
R="$OUT/stopped.ndjson"
check_eq "stopped collector: churn waited for ring space" 1 \
	"$(jq -r 'select(.type=="end") | if .waits > 0 then 1 else 0 end' "$R")"
check_eq "stopped collector: nothing lost, every free paired" "0 0 0 0" \
	"$(jq -r 'select(.type=="end") | "\(.lost) \(.unknown_frees) \(.allocs - .frees - .live) \(.leaked_blocks)"' "$R")"
check_eq "stopped collector: keep_one's block, still pointed to" "1 256 reachable 256" \
	"$(leaks_in "$R" keep_one)"

# --- the collector stays stopped: the program goes on after a second -------
# Lossless means waiting while the collector makes progress: a tail that
# does not move for a second drops what the ring has no room for (counted
# in lost, said in the report), and the exit's scan gives up as soon.
ms-record -o "$OUT/held.ndjson" "$EX/leaky" >"$OUT/held.log" 2>&1 &
rec=$!
i=0
while [ -z "$(pgrep -P $rec)" ] && [ $i -lt 400 ]; do i=$((i + 1)); sleep 0.01; done
kill -STOP $rec
child=$(pgrep -P $rec)
i=0
while [ -n "$child" ] && [ -d /proc/$child ] && [ "$(awk '{ print $3 }' /proc/$child/stat 2>/dev/null)" != Z ] &&
      [ $i -lt 600 ]; do
	i=$((i + 1))
	sleep 0.05
done
check_eq "held collector: the program ended while it was stopped" "Z" \
	"$(awk '{ print $3 }' /proc/$child/stat 2>/dev/null)"
kill -CONT $rec
wait $rec
check_eq "held collector: the program's own status" 0 $?
check_grep "held collector: the program ran to its end" "leaky: done" "$OUT/held.log"
check_eq "held collector: what could not wait is counted" 1 \
	"$(jq -r 'select(.type=="end") | if .lost > 0 then 1 else 0 end' "$OUT/held.ndjson")"
check_grep "held collector: and said" "events lost" "$OUT/held.log"
ms-report "$OUT/held.ndjson" >"$OUT/held.txt"
check_grep "held collector: the report says it" "events lost *[1-9][0-9,]*  (dropped: the figures above miss them)" "$OUT/held.txt"

# --- a child made by a raw clone(2): no fork handlers ran ---------------------
# It has a copy of the parent's memory, the shim's state and the rings'
# mapping with it: its hooks must pass through, never writing into the
# parent's rings (false frees, double frees, leaks, a hang).
cat >"$OUT/rawclone.c" <<'EOF'
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char stack[1 << 20];
void *volatile sink[100];
void *volatile one;

static int child(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200000; i++) {
		one = malloc(32 + i % 64);
		free(one);
	}
	for (int i = 0; i < 50; i++)
		sink[i] = malloc(99);	/* the child's, not the parent's */
	return 0;
}

int main(void)
{
	int status;
	for (int i = 0; i < 100; i++)
		sink[i] = malloc(777);	/* leaked: 100 x 777 */
	pid_t pid = clone(child, stack + sizeof(stack), SIGCHLD, NULL);
	if (pid < 0)
		return 1;
	waitpid(pid, &status, 0);
	for (int i = 0; i < 100000; i++)
		one = malloc(48), free(one);
	printf("rawclone: child %d\n", WEXITSTATUS(status));
	return 0;
}
EOF
check_status "build rawclone" 0 cc -O1 -o "$OUT/rawclone" "$OUT/rawclone.c"
for how in "" --follow; do
	check_status "rawclone $how: recorded, its own status" 0 \
		timeout 120 ms-record -q $how -o "$OUT/rawclone$how.ndjson" "$OUT/rawclone"
	check_eq "rawclone $how: the parent's figures only" "100101 100000 0 0 0" \
		"$(jq -r 'select(.type=="end") | "\(.allocs) \(.frees) \(.errors) \(.leaked_blocks) \(.unknown_frees)"' "$OUT/rawclone$how.ndjson")"
	check_eq "rawclone $how: the 777s the parent keeps, still pointed to" "100 77700 reachable 777" \
		"$(leaks_in "$OUT/rawclone$how.ndjson" main)"
done

# --- the stack a hook needs -------------------------------------------------
# How deep below its caller one malloc and free go, natively and recorded,
# at a thread's first call and after: a thread with little stack to spare
# must not fault under us (the hooks took 2.3 KiB more, and a thread's
# first event 4 KiB more, when libunwind's buffer sat in every capture's
# frame and /proc/self/maps was read with 4 KiB and sscanf).
cat >"$OUT/stk.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static unsigned char *volatile lo_mark;
__attribute__((noinline)) static void paint(void)
{
	volatile unsigned char buf[65536];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = 0xa5;
	lo_mark = (unsigned char *)buf;
}
__attribute__((noinline)) static size_t probe(size_t size)
{
	unsigned char *sp = __builtin_frame_address(0), *q;
	void *p;

	paint();
	p = malloc(size);
	free(p);
	for (q = lo_mark; q < sp && *q == 0xa5; q++)
		;
	return (size_t)(sp - q);
}
static volatile size_t sizes[2] = { 40, 4000 };
static void *run(void *arg)
{
	size_t first = probe(100), site = 0, later = 0, u;
	int r;

	for (r = 0; r < 20; r++) {
		u = probe(sizes[r % 2]);	/* one call site */
		if (r == 0)
			site = u;	/* a stack not seen before */
		else if (u > later)
			later = u;
	}
	printf("%s %zu %zu %zu\n", (const char *)arg, first, later, site);
	return NULL;
}
int main(void)
{
	pthread_t t;

	free(malloc(1));	/* the allocator's own start, natively too */
	run("main");
	pthread_create(&t, NULL, run, "thread");
	pthread_join(t, NULL);
	return 0;
}
EOF
check_status "build stk" 0 cc -O1 -pthread -o "$OUT/stk" "$OUT/stk.c"
"$OUT/stk" >"$OUT/stk.native"
ms-record -q -o "$OUT/stk.ndjson" "$OUT/stk" >"$OUT/stk.rec"
for w in main thread; do
	n2=$(awk -v w=$w '$1 == w { print $3 }' "$OUT/stk.native")
	r2=$(awk -v w=$w '$1 == w { print $3 }' "$OUT/stk.rec")
	n3=$(awk -v w=$w '$1 == w { print $4 }' "$OUT/stk.native")
	r3=$(awk -v w=$w '$1 == w { print $4 }' "$OUT/stk.rec")
	check_range "stack, $w, a stack seen before: at most 512 bytes more than natively ($n2)" 0 $((n2 + 512)) "${r2:-99999}"
	check_range "stack, $w, a new stack: at most 1.5 KiB more than natively ($n3)" 0 $((n3 + 1536)) "${r3:-99999}"
done
# A thread's first event sets its recording up: 3.6 KiB more than the
# allocator's own first call now.
n1=$(awk '$1 == "main" { print $2 }' "$OUT/stk.native")
r1=$(awk '$1 == "main" { print $2 }' "$OUT/stk.rec")
check_range "stack, the process's first event: at most 1 KiB more than natively ($n1)" 0 $((n1 + 1024)) "${r1:-99999}"
n1=$(awk '$1 == "thread" { print $2 }' "$OUT/stk.native")
r1=$(awk '$1 == "thread" { print $2 }' "$OUT/stk.rec")
check_range "stack, a thread's first event: at most 4 KiB more than natively ($n1)" 0 $((n1 + 4096)) "${r1:-99999}"

# --- a signal handler leaves the library with siglongjmp -------------------
# The guard the interrupted hook held stays held; a later hook whose
# caller is above where it was taken gives it back, and recording goes
# on (before: nothing more was recorded, the 777s leaked unseen).
cat >"$OUT/ljmp.c" <<'EOF'
#define _GNU_SOURCE
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

/* A handler that leaves with siglongjmp when it interrupted
 * libmemscope.so (only then: out of glibc's malloc it would be the
 * program's own undefined behaviour). */
static sigjmp_buf env;
static volatile int jumps;
static uintptr_t lo, hi;
void *volatile one;

static int find(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	if (!strstr(info->dlpi_name, "libmemscope"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!lo || a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	return 1;
}

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];

	(void)sig, (void)si;
	if (pc >= lo && pc < hi) {
		jumps++;
		siglongjmp(env, 1);
	}
}

static __attribute__((noinline)) void *deep(size_t n) { return malloc(n); }

int main(void)
{
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct sigaction sa;
	volatile long i = 0;

	dl_iterate_phdr(find, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	sigsetjmp(env, 1);
	while (jumps < 20 && i++ < 20000000) {
		one = deep(64 + i % 32);
		free(one);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	for (int k = 0; k < 100; k++)
		one = malloc(777);
	printf("ljmp: %s\n", jumps ? "jumped" : "never jumped");
	return 0;
}
EOF
check_status "build ljmp" 0 cc -O1 -o "$OUT/ljmp" "$OUT/ljmp.c"
check_eq "ljmp natively: never interrupts the library" "ljmp: never jumped" "$("$OUT/ljmp")"
check_status "ljmp recorded: its own status" 0 timeout 120 ms-record -q -o "$OUT/ljmp.ndjson" "$OUT/ljmp"
if grep -q "ljmp: jumped" "$OUT/last.out"; then
	check_eq "ljmp: recorded after the jumps, exactly" "1 777 reachable 777
99 76923 definitely 777" "$(leaks_in "$OUT/ljmp.ndjson" main)"
	check_eq "ljmp: no error" "0" "$(jq -r 'select(.type=="end") | .errors' "$OUT/ljmp.ndjson")"
else
	echo "  SKIP: the timer never interrupted the library: the siglongjmp check" >&2
fi

# --- a program that limits its own address space -------------------------
# Its limit is for what it maps, not for our region: before, every malloc
# of its and its thread creation failed under ms-record.
check_status "build aslim" 0 cc -O1 -pthread -o "$OUT/aslim" "$TOP/tests/e2e/aslim.c"
check_eq "aslim natively" "aslim: limit 256 512 MiB, 100 MiB, thread 1" "$("$OUT/aslim" set)"
check_status "aslim recorded" 0 ms-record -q -o "$OUT/aslim.ndjson" "$OUT/aslim" set
check_eq "aslim recorded: as natively (its limit read back as set)" \
	"aslim: limit 256 512 MiB, 100 MiB, thread 1" "$(cat "$OUT/last.out")"
check_eq "aslim recorded: its 100 MiB" "100 104857600 reachable 1048576" "$(leaks_in "$OUT/aslim.ndjson" main)"

# --- a limit it inherits (ulimit -v) ---------------------------------------
# The region is sized to fit under it (said), and the program keeps its
# room as far as its hard limit allows: before, the collector's mapping
# failed and the recording was empty, nothing said.  So little room that
# nothing fits: said, and the program runs as it would.
check_eq "asinh natively under ulimit -v" "asinh: limit 400000 400000 KiB, 100 MiB, thread 1" \
	"$(ulimit -v 400000; "$OUT/aslim" inherit)"
# ms-record built with ASan cannot run under a limit (its shadow memory).
if ldd "$TOP/tools/ms-record" | grep -q libasan; then
	echo "  SKIP: tools built with sanitizers: ms-record under ulimit -v" >&2
else
	check_status "asinh recorded under ulimit -v" 0 sh -c 'ulimit -v 400000; exec "$@"' sh \
		ms-record -o "$OUT/asinh.ndjson" "$OUT/aslim" inherit
	check_eq "asinh under ulimit -v: as natively" "asinh: limit 400000 400000 KiB, 100 MiB, thread 1" \
		"$(cat "$OUT/last.out")"
	check_eq "asinh under ulimit -v: its 100 MiB" "100 104857600 reachable 1048576" \
		"$(leaks_in "$OUT/asinh.ndjson" main)"
	check_egrep "asinh under ulimit -v: the rings' share said" \
		"under its address-space limit .* the recording's [0-9]+ rings of [0-9]+ KiB take [0-9]+ MiB" "$OUT/last.err"
	# (the library's own code and data take a little of it: not as natively)
	check_status "asinh under ulimit -v 20000: recorded" 0 sh -c 'ulimit -v 20000; exec "$@"' sh \
		ms-record -o "$OUT/asinh2.ndjson" "$OUT/aslim" inherit
	check_egrep "asinh under ulimit -v 20000: it ran" "^asinh: limit 20000 20000 KiB, [0-9]+ MiB" "$OUT/last.out"
	check_grep "asinh under ulimit -v 20000: said" "leaves no room for the recording's rings: not recorded" \
		"$OUT/last.err"
fi

# --- the collector dies: the program runs on -------------------------------
mkdir -p "$OUT/run"
XDG_RUNTIME_DIR="$OUT/run" ms-record -q -o "$OUT/dead.ndjson" "$EX/churn" 3 >"$OUT/dead.log" 2>&1 &
rec=$!
wait_for_line "$OUT/dead.log" "churn: started"
# killed once a sample says the program allocated
i=0
while ! grep -q '"type":"sample".*"allocs":[1-9]' "$OUT/dead.ndjson" 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
kill -KILL $rec
wait $rec 2>/dev/null
wait_for_line "$OUT/dead.log" "churn: done" 15
check_grep "program finished after ms-record was killed" "churn: done" "$OUT/dead.log"
# What arrived is used: the last sample's count (the report said
# "allocations 0" and "leaked 0 B"), what cannot be known said so.
last=$(jq -r 'select(.type == "sample") | .allocs' "$OUT/dead.ndjson" | tail -n 1)
check_status "a SIGKILLed recorder's stream: cut short" 2 ms-report "$OUT/dead.ndjson"
lastc=$(echo "$last" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
check_egrep "the last sample's allocations ($lastc)" "^  allocations +$lastc  \(.*\) at the last sample" "$OUT/last.out"
check_egrep "leaks not known" "^  leaked +unknown" "$OUT/last.out"
check_eq "--json: the last sample's, no leak figures" "$last null null" \
	"$(ms-report --json "$OUT/dead.ndjson" 2>/dev/null | jq -r '.summary | "\(.allocs) \(.leaked_bytes) \(.frees)"')"
# SIGKILL leaves the recorder's socket directory; a later recorder
# removes it (not a fresh directory without a socket, which may be a
# recorder starting; memscope/ holds the live sockets), when it is time:
# the directory is read once in 10 minutes (memscope/pruned's age).
check_eq "a killed recorder leaves its directory" 1 "$(ls -d "$OUT"/run/memscope.* | wc -l)"
mkdir "$OUT/run/memscope.keepme" "$OUT/run/other"
check_eq "the first recorder left its stamp" true \
	"$([ -f "$OUT/run/memscope/pruned" ] && echo true || echo false)"
XDG_RUNTIME_DIR="$OUT/run" ms-record -q -o /dev/null "$EX/leaky" >/dev/null 2>&1
check_eq "a recorder soon after does not look" 2 "$(ls -d "$OUT"/run/memscope.* | wc -l)"
touch -d '11 minutes ago' "$OUT/run/memscope/pruned"
XDG_RUNTIME_DIR="$OUT/run" ms-record -q -o /dev/null "$EX/leaky" >/dev/null 2>&1
check_eq "the next recorder removes it, and only it" "memscope memscope.keepme other" \
	"$(ls "$OUT/run" | tr '\n' ' ' | sed 's/ $//')"
check_eq "and stamps the time" 0 \
	"$(find "$OUT/run/memscope/pruned" -mmin +1 | wc -l)"

# --- a thread whose first allocation is inside pthread_getattr_np ---------
# glibc holds the thread's lock while it reallocs there; the shim, setting
# the thread up at that allocation, asked pthread_getattr_np for the stack
# again and the thread waited for itself for ever (every Ruby thread).
cat >"$OUT/getattr.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
static void *fn(void *arg)
{
	pthread_attr_t at;
	size_t size;
	void *lo;

	(void)arg;
	pthread_getattr_np(pthread_self(), &at);	/* the thread's first allocation */
	pthread_attr_getstack(&at, &lo, &size);
	pthread_attr_destroy(&at);
	return (void *)size;
}
int main(void)
{
	pthread_t t;
	void *r;

	pthread_create(&t, NULL, fn, NULL);
	pthread_join(t, &r);
	printf("stack %zu\n", (size_t)r);
	return 0;
}
EOF
check_status "build getattr" 0 cc -O1 -pthread -o "$OUT/getattr" "$OUT/getattr.c"
"$OUT/getattr" >"$OUT/getattr.native"
for o in "" "--sample 512K" "--sample 1" "--unwind libunwind" "--unwind fp"; do
	check_status "getattr ${o:-full}: ends" 0 timeout -s KILL 20 ms-record -q $o -o "$OUT/getattr.ndjson" "$OUT/getattr"
	check_eq "getattr ${o:-full}: its output" "$(cat "$OUT/getattr.native")" "$(cat "$OUT/last.out")"
done
# memcheck's figures (--run-libc-freeres=no): 5 allocations, 3 frees.
check_eq "getattr: every allocation, the thread's included" "5 3 0" \
	"$(jq -r 'select(.type=="end") | "\(.allocs) \(.frees) \(.errors)"' "$OUT/getattr.ndjson")"
# Attached: its GOT slot for pthread_getattr_np leads to the same guard.
cat >"$OUT/getattr-loop.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *volatile sink;
static void *fn(void *arg)
{
	pthread_attr_t at;

	(void)arg;
	pthread_getattr_np(pthread_self(), &at);
	pthread_attr_destroy(&at);
	sink = malloc(32);	/* the program's own, through its GOT */
	free(sink);
	return NULL;
}
int main(void)
{
	for (int i = 0; i < 300; i++) {
		pthread_t t;

		pthread_create(&t, NULL, fn, NULL);
		pthread_join(t, NULL);
		usleep(5000);
	}
	puts("done");
	return 0;
}
EOF
check_status "build getattr-loop" 0 cc -O1 -pthread -o "$OUT/getattr-loop" "$OUT/getattr-loop.c"
"$OUT/getattr-loop" >"$OUT/loop.out" &
GL=$!
_bg_pids="$_bg_pids $GL"
( sleep 30; kill -9 $GL 2>/dev/null ) >/dev/null 2>&1 &	# a hung program: status 137
WD=$!
sleep 0.3
check_status "getattr-loop: attach 0.5 s" 0 ms-record -q -p $GL --duration 0.5s -o "$OUT/getattr-attach.ndjson"
wait $GL
check_eq "getattr-loop: attached, its threads still end (no kill)" "0 done" "$? $(cat "$OUT/loop.out")"
pkill -P $WD sleep 2>/dev/null
kill $WD 2>/dev/null
check_range "getattr-loop: threads recorded while attached" 2 1000 \
	"$(jq -r 'select(.type=="end") | .allocs' "$OUT/getattr-attach.ndjson")"
finish
