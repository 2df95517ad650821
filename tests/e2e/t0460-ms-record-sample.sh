#!/bin/sh
# ms-record --sample: Poisson sampling by bytes.  examples/samplemix has
# five sites of 16 B to 4 KiB (32 MB each), a site leaking 40,000 blocks of
# 512 B and four blocks of 1 MiB.  At 64 KiB and a fixed MEMSCOPE_SEED,
# every site's estimate is within 4 standard deviations of the truth (the
# relative error of an estimate of B bytes is about 1/sqrt(B/64K)), without
# being the truth; blocks much larger than the rate are always recorded;
# the totals of allocations, bytes and frees stay exact; temporary blocks
# are estimated too.
. "$(dirname "$0")/lib.sh"

RATE=65536
jqr() { jq -r "select(.type == \"$2\") | $3" "$1"; }

# site REC SIZE FN FIELD: FIELD of the site of SIZE whose innermost frame is FN
site() {
	v1 "$1" | jq -r -s --argjson size "$2" --arg fn "$3" --arg f "$4" '
		(map(select(.type == "stack")) | map({key: (.id|tostring), value: .frames[0].fn})
		 | from_entries) as $top
		| .[] | select(.type == "site" and .size == $size and $top[(.stack|tostring)] == $fn)
		| .[$f]' | head -1
}
# leak_of REC FN FIELD
leak_of() {
	v1 "$1" | jq -r -s --arg fn "$2" --arg f "$3" '
		(map(select(.type == "stack")) | map({key: (.id|tostring), value: .frames[0].fn})
		 | from_entries) as $top
		| .[] | select(.type == "leak" and $top[(.stack|tostring)] == $fn) | .[$f]' | head -1
}
# check_est WHAT TRUTH ESTIMATE: within 4 sigma, sigma = TRUTH / sqrt(TRUTH / RATE)
check_est() {
	_lo=$(awk -v t="$2" -v r=$RATE 'BEGIN { printf "%d", t - 4 * t / sqrt(t / r) }')
	_hi=$(awk -v t="$2" -v r=$RATE 'BEGIN { printf "%d", t + 4 * t / sqrt(t / r) }')
	check_range "$1 (truth $2)" "$_lo" "$_hi" "${3:-0}"
}

P="$EX/samplemix"
"$P" >"$OUT/plain.out" 2>&1
check_eq "the program's own output" \
	"samplemix: 2705005 allocations, 186530304 bytes, 40000 blocks of 512 B leaked" "$(cat "$OUT/plain.out")"

# --- the truth: every allocation recorded -----------------------------------
check_status "unsampled recording" 0 ms-record -o "$OUT/full.ndjson" "$P"
cp "$OUT/last.out" "$OUT/full.out"
for sb in 16:32000000 64:32000000 256:32000000 1024:32768000 4096:32768000; do
	check_eq "unsampled: ${sb%:*} B site's bytes" "${sb#*:}" "$(site "$OUT/full.ndjson" ${sb%:*} churn bytes)"
done
check_eq "unsampled: the leak" 20480000 "$(leak_of "$OUT/full.ndjson" leak_512 bytes)"
check_eq "unsampled: no sample option" null "$(jqr "$OUT/full.ndjson" header .options.sample)"
check_eq "unsampled: no samples member" "" "$(jq -r 'select(.type == "site") | .samples // empty' "$OUT/full.ndjson" | head -1)"

# --- sampled at 64 KiB, seed fixed -------------------------------------------
S="$OUT/s.ndjson"
MEMSCOPE_SEED=42 check_status "sampled recording" 0 ms-record --sample 64K -o "$S" "$P"
check_eq "sampled: the program's output unchanged" "$(cat "$OUT/plain.out")" "$(cat "$OUT/last.out")"
check_egrep "sampled: summary line" "ms-record: samplemix: 2,705,00[0-9] allocations" "$OUT/last.err"
check_eq "header: sample" $RATE "$(jqr "$S" header .options.sample)"
check_eq "header: no scan" false "$(jqr "$S" header .options.scan)"
total_samples=0
for s in 16 64 256 1024 4096; do
	truth=$(site "$OUT/full.ndjson" $s churn bytes)
	tallocs=$(site "$OUT/full.ndjson" $s churn allocs)
	est=$(site "$S" $s churn bytes)
	n=$(site "$S" $s churn samples)
	check_est "$s B site's estimated bytes" "$truth" "$est"
	# Not the truth by construction: a few hundred blocks recorded.
	check_range "$s B site: blocks recorded" 200 $((tallocs / 10)) "${n:-0}"
	check_range "$s B site: an estimate, not the truth" 1 999999999 \
		"$(( ${est:-0} > truth ? ${est:-0} - truth : truth - ${est:-0} ))"
	check_eq "$s B site: bytes are allocs * size" "$(( $(site "$S" $s churn allocs) * s ))" "$est"
	check_eq "$s B site: all freed" 0 "$(site "$S" $s churn live_bytes)"
	total_samples=$((total_samples + n))
done
# 16 times the rate: recorded with probability 1 - 1e-7.
check_eq "1 MiB blocks: every one recorded" 4 "$(site "$S" 1048576 big_1m samples)"
check_eq "1 MiB blocks: their bytes" 4194304 "$(site "$S" 1048576 big_1m bytes)"
check_est "leaked bytes, estimated" 20480000 "$(leak_of "$S" leak_512 bytes)"
check_est "leaked blocks, estimated (in bytes)" 20480000 "$(( $(leak_of "$S" leak_512 count) * 512 ))"
check_eq "leak kind: live at exit, no scan" unscanned "$(leak_of "$S" leak_512 kind)"
# The totals are exact.
for f in allocs bytes frees; do
	check_eq "end: exact $f" "$(jqr "$OUT/full.ndjson" end .$f)" "$(jqr "$S" end .$f)"
done
check_eq "end: rate" $RATE "$(jqr "$S" end .sample)"
check_range "end: blocks recorded, at least the sites'" $((total_samples + 4)) 4000 "$(jqr "$S" end .samples)"
check_eq "end: no errors" 0 "$(jqr "$S" end .errors)"
check_eq "end: no unknown frees" 0 "$(jqr "$S" end .unknown_frees)"
check_eq "no error records" 0 "$(jq -r 'select(.type == "error")' "$S" | wc -l)"
check_eq "nothing lost" 0 "$(jqr "$S" end .lost)"
check_eq "stream is valid" "" "$(valid_stream "$S")"
# The same seed, the same choices; another seed, others.
MEMSCOPE_SEED=42 check_status "sampled again, same seed" 0 ms-record -q --sample 64K -o "$OUT/s2.ndjson" "$P"
for s in 16 256 4096; do
	check_eq "same seed: $s B site's samples" "$(site "$S" $s churn samples)" \
		"$(site "$OUT/s2.ndjson" $s churn samples)"
done
MEMSCOPE_SEED=7 check_status "sampled, another seed" 0 ms-record -q --sample 64K -o "$OUT/s3.ndjson" "$P"
check_range "another seed: other choices" 1 999 \
	"$(for s in 16 64 256 1024 4096; do [ "$(site "$S" $s churn samples)" = "$(site "$OUT/s3.ndjson" $s churn samples)" ] || echo x; done | wc -l)"

# ms-report says what is estimated.
check_status "ms-report" 0 ms-report "$S"
check_grep "report: the rate" "^  sampled every *64.0 KiB" "$OUT/last.out"
check_grep "report: exact allocations" "^  allocations *2,705,00[0-9]" "$OUT/last.out"
check_egrep "report: leaked, estimated" "^  leaked .*, estimated$" "$OUT/last.out"
check_grep "report: leaks section" "^LEAKS (ESTIMATED)" "$OUT/last.out"
check_grep "report: top sites" "^TOP SITES BY BYTES ALLOCATED (ESTIMATED)" "$OUT/last.out"
check_grep "report: temporary section" "^TEMPORARY ALLOCATIONS (ESTIMATED)" "$OUT/last.out"
# samplemix's temporary blocks: its four of 1 MiB (always recorded, each
# freed before the next allocation) and the last block of each churn.
check_range "temporary: the 1 MiB blocks at least" 4 30000 "$(jqr "$S" end .temporary)"

# Temporary blocks, which only the shim can tell when sampling (it counts
# down every allocation; the collector does not see them): 400,000 blocks
# of 256 B freed at once, then 400,000 freed after the next allocation.
cat >"$OUT/temps.c" <<'EOF'
#include <stdlib.h>
void *volatile sink;
__attribute__((noinline)) static void temporaries(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = malloc(256);

		sink = p;
		free(p);
	}
}
__attribute__((noinline)) static void lasting(int n)
{
	char *prev = NULL;

	for (int i = 0; i < n; i++) {
		char *q = malloc(256);

		sink = q;
		free(prev);
		prev = q;
	}
	free(prev);
}
int main(void)
{
	temporaries(400000);
	lasting(400000);
	return 0;
}
EOF
check_status "build temps" 0 cc -O1 -g -o "$OUT/temps" "$OUT/temps.c"
check_status "temps, every block" 0 ms-record -q -o "$OUT/tf.ndjson" "$OUT/temps"
# (lasting's last block is temporary too: its free comes before anything else)
check_eq "temps, every block: temporary" 400001 "$(jqr "$OUT/tf.ndjson" end .temporary)"
MEMSCOPE_SEED=3 check_status "temps, sampled" 0 ms-record -q --sample 64K -o "$OUT/ts.ndjson" "$OUT/temps"
check_est "temps, sampled: temporary bytes, estimated" $((400000 * 256)) \
	$(($(site "$OUT/ts.ndjson" 256 temporaries temporary) * 256))
check_range "temps, sampled: none of lasting's but its last" 0 300 \
	"$(site "$OUT/ts.ndjson" 256 lasting temporary)"
check_eq "temps, sampled: the end's is the sites' sum" \
	"$(v1 "$OUT/ts.ndjson" | jq -s '[.[] | select(.type == "site") | .temporary] | add')" \
	"$(jqr "$OUT/ts.ndjson" end .temporary)"
check_status "temps: report" 0 ms-report "$OUT/ts.ndjson"
check_grep "temps: report's temporary section" "temporaries temps.c" "$OUT/last.out"
MEMSCOPE_SEED=4 check_status "temps, sampled with events" 0 ms-record -q -e --sample 64K -o "$OUT/te.ndjson" "$OUT/temps"
check_status "temps: its events aggregated again" 0 ms-report --json "$OUT/te.ndjson"
check_eq "temps: the same temporary from the events" "$(jqr "$OUT/te.ndjson" end .temporary)" \
	"$(jq -r '.summary.temporary' "$OUT/last.out")"
check_status "ms-report --json" 0 ms-report --json "$S"
check_eq "report json: sample" "$RATE true" "$(jq -r '"\(.summary.sample) \(.summary.estimated)"' "$OUT/last.out")"
# An --events recording aggregated again weighs its blocks the same way.
MEMSCOPE_SEED=42 check_status "sampled with events" 0 ms-record -q -e --sample 64K -o "$OUT/e.ndjson" "$P"
check_status "ms-report on its events" 0 ms-report --json "$OUT/e.ndjson"
check_est "events: leaked bytes, estimated" 20480000 "$(jq -r '.summary.leaked_bytes' "$OUT/last.out")"

# C++: libstdc++'s deletes go free's way on the fast path; the totals of a
# sampled recording are a full one's.
check_status "cxx, every block" 0 ms-record -q -o "$OUT/cxx-full.ndjson" "$EX/cxx"
MEMSCOPE_SEED=2 check_status "cxx, sampled" 0 ms-record -q --sample 4K -o "$OUT/cxx-s.ndjson" "$EX/cxx"
check_eq "cxx, sampled: exact totals" \
	"$(jqr "$OUT/cxx-full.ndjson" end '"\(.allocs) \(.frees) \(.bytes)"')" \
	"$(jqr "$OUT/cxx-s.ndjson" end '"\(.allocs) \(.frees) \(.bytes) \(.unknown_frees)"' | sed 's/ 0$//')"

# A malloc that fails is not an allocation: the sampled fast path counts a
# small one before glibc's malloc runs (so small a malloc fails only out of
# memory), a larger one once it returned.  nomem asks for absurd sizes and,
# under an address-space limit, for 1 GiB, between 1 KiB blocks.
cat >"$OUT/nomem.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
void *volatile sink;
int main(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	int got = 0;

	if (!f || fscanf(f, "%lu", &pages) != 1)
		return 1;
	fclose(f);
	setrlimit(RLIMIT_AS, &(struct rlimit){ pages * 4096 + (256ul << 20), RLIM_INFINITY });
	for (int i = 0; i < 1000; i++) {
		sink = malloc(SIZE_MAX - 4096 * (size_t)i);
		got += sink != NULL;
		sink = malloc((size_t)1 << 30);
		got += sink != NULL;
		sink = malloc(1024);
		free(sink);
	}
	printf("%d\n", got);
	return 0;
}
EOF
check_status "build nomem" 0 cc -O1 -o "$OUT/nomem" "$OUT/nomem.c"
# On jemalloc the fast path counts any size first (the count is not
# capped: sample.h, fast_release), and takes back what failed: at 1T, the
# 1 GiB malloc is the fast path's.
check_status "build nomem on jemalloc" 0 cc -O1 -o "$OUT/nomem-je" "$OUT/nomem.c" -l:libjemalloc.so.2
for prog in nomem nomem-je; do
	check_status "$prog, every block" 0 ms-record -q -o "$OUT/nm.ndjson" "$OUT/$prog"
	nm=$(jqr "$OUT/nm.ndjson" end '"\(.allocs) \(.frees) \(.bytes)"')
	# the 1 KiB blocks, and stdio's (fopen's, stdout's buffer; jemalloc's
	# libstdc++'s emergency pool)
	check_range "$prog, every block: the 1 KiB blocks alone" 1001 1005 "${nm%% *}"
	for r in 1T 512K 16; do
		check_status "$prog, --sample $r" 0 ms-record -q --sample $r -o "$OUT/nm.ndjson" "$OUT/$prog"
		check_eq "$prog, --sample $r: no absurd block" 0 "$(cat "$OUT/last.out")"
		check_eq "$prog, --sample $r: the totals of every block" "$nm" \
			"$(jqr "$OUT/nm.ndjson" end '"\(.allocs) \(.frees) \(.bytes)"')"
	done
done

# C++'s new over libstdc++'s goes to malloc itself on the fast path; when
# malloc fails, libstdc++'s operator still calls the new_handler (which
# here frees a reserve, so that the second try succeeds) or throws.
cat >"$OUT/newfail.cpp" <<'EOF'
#include <cstdio>
#include <cstdlib>
#include <new>
#include <sys/resource.h>
static char *reserve;
static int handled;
static void give_back()
{
	handled++;
	delete[] reserve;
	reserve = nullptr;
	std::set_new_handler(nullptr);
}
int main()
{
	unsigned long pages = 0;
	FILE *f = std::fopen("/proc/self/statm", "r");
	int thrown = 0;

	if (!f || std::fscanf(f, "%lu", &pages) != 1)
		return 1;
	std::fclose(f);
	rlimit lim = { pages * 4096 + (768ul << 20), RLIM_INFINITY };
	setrlimit(RLIMIT_AS, &lim);
	for (int i = 0; i < 100; i++) {
		try {
			char *big = new char[1ul << 30];
			delete[] big;
		} catch (const std::bad_alloc &) {
			thrown++;
		}
		delete new int(i);
	}
	reserve = new char[512ul << 20];
	reserve[0] = 1;
	std::set_new_handler(give_back);
	char *p = new char[600ul << 20];	/* fails until the reserve goes */
	p[0] = 1;
	delete[] p;
	/* nothrow: libstdc++'s calls new, and catches its bad_alloc */
	for (int i = 0; i < 10; i++)
		thrown += new (std::nothrow) char[1ul << 30] == nullptr;
	reserve = new char[512ul << 20];
	reserve[0] = 1;
	std::set_new_handler(give_back);
	p = new (std::nothrow) char[600ul << 20];
	p[0] = 1;
	delete[] p;
	/* aligned, and aligned nothrow: libstdc++'s call aligned_alloc, the
	 * handler, and aligned_alloc again themselves */
	struct alignas(64) line { char b[64]; };
	for (int nothrow = 0; nothrow < 2; nothrow++) {
		reserve = new char[512ul << 20];
		reserve[0] = 1;
		std::set_new_handler(give_back);
		line *q = nothrow ? new (std::nothrow) line[(600ul << 20) / 64]
				  : new line[(600ul << 20) / 64];
		q[0].b[0] = 1;
		delete[] q;
	}
	std::printf("%d %d\n", thrown, handled);
	return 0;
}
EOF
check_status "build newfail" 0 c++ -O1 -o "$OUT/newfail" "$OUT/newfail.cpp"
check_status "newfail, every block" 0 ms-record -q -o "$OUT/nf.ndjson" "$OUT/newfail"
check_eq "newfail, every block: bad_alloc 110 times, the handler 4 times" "110 4" "$(cat "$OUT/last.out")"
nf=$(jqr "$OUT/nf.ndjson" end '"\(.allocs) \(.frees) \(.bytes)"')
# stdio's 4 blocks (2 freed), 100 ints and 110 bad_allocs, four reserves
# and the four blocks the handler made room for: the malloc (aligned_alloc)
# libstdc++'s new retries after the handler is not an allocation of its
# own (it was: 218 216, 207 205 without the nothrow part; 224 222 with the
# aligned ones, each block twice).
check_eq "newfail, every block: allocations and frees" "222 220" "${nf% *}"
# A block recorded twice is a block allocated at a live address, which the
# collector takes as an implied free of the first (implicit_frees).
check_eq "newfail, every block: no block recorded twice" 0 "$(jqr "$OUT/nf.ndjson" end '.implicit_frees // 0')"
for r in 1T 512K; do
	check_status "newfail, --sample $r" 0 ms-record -q --sample $r -o "$OUT/nf.ndjson" "$OUT/newfail"
	check_eq "newfail, --sample $r: the same program" "110 4" "$(cat "$OUT/last.out")"
	check_eq "newfail, --sample $r: the totals of every block" "$nf" \
		"$(jqr "$OUT/nf.ndjson" end '"\(.allocs) \(.frees) \(.bytes)"')"
done

# NULL and the boot pool's blocks on the free fast path, which has no test
# of its own for them: the set of recorded blocks pins them (sample.h).
# free(NULL) is no free; a block the shim's pool gave out while it looked
# up the real malloc (old glibc's dlsym allocated; this dlsym does too,
# 17 bytes that glibc's free refuses as a chunk of 16) never reaches the
# real free: the program frees it after the session started sampling.
cat >"$OUT/dlsymhold.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static void *held[256];
static int nheld;

void *dlsym(void *handle, const char *name)
{
	static void *(*next)(void *, const char *);

	if (!next)
		next = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!next)
		next = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (nheld < 256) {
		char *p = malloc(17);

		if (p)
			held[nheld++] = strncpy(p, name, 17);
	}
	return next(handle, name);
}

int dlsymhold_release(void)
{
	int n = nheld;

	while (nheld > 0)
		free(held[--nheld]);
	return n;
}
EOF
cat >"$OUT/nullboot.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static char *volatile keep[16];
static void *volatile nothing;	/* a free(NULL) that the compiler keeps */

int main(void)
{
	int (*release)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "dlsymhold_release");
	int i, n = 0;

	for (i = 0; i < 100000; i++) {
		free(keep[i % 16]);
		keep[i % 16] = malloc(64 + i % 4000);
		free(nothing);
	}
	for (i = 0; i < 16; i++)
		free(keep[i]);
	if (release)
		n = release();
	printf("released %d\n", n);
	return 0;
}
EOF
check_status "build the allocating dlsym" 0 cc -shared -fPIC -o "$OUT/libdlsymhold.so" "$OUT/dlsymhold.c"
check_status "build nullboot" 0 cc -O1 -o "$OUT/nullboot" "$OUT/nullboot.c"
check_status "nullboot, every block" 0 ms-record -q -o "$OUT/nb.ndjson" "$OUT/nullboot"
nb=$(jqr "$OUT/nb.ndjson" end '"\(.allocs) \(.frees)"')
# 100,000 blocks and 3 of stdio's and the loader's (never freed).
check_eq "nullboot, every block: free(NULL) is no free" "100003 100000" "$nb"
check_status "nullboot, --sample 64K" 0 ms-record -q --sample 64K -o "$OUT/nb.ndjson" "$OUT/nullboot"
check_eq "nullboot, --sample 64K: the same totals" "$nb" "$(jqr "$OUT/nb.ndjson" end '"\(.allocs) \(.frees)"')"
# The allocating dlsym goes into the program only, through a shell that
# adds it to the LD_PRELOAD ms-record gave it (ms-record built with
# SANITIZE=address would run it in ASan's start, which allocation refuses).
for r in "" "--sample 64K"; do
	check_status "nullboot, pool blocks, ${r:-every block}" 0 ms-record -q $r -o "$OUT/nb.ndjson" \
		sh -c 'LD_PRELOAD="$LD_PRELOAD:$1" exec "$2"' sh "$OUT/libdlsymhold.so" "$OUT/nullboot"
	held=$(sed -n 's/^released //p' "$OUT/last.out")
	check_range "nullboot, pool blocks, ${r:-every block}: dlsym's blocks freed" 2 256 "${held:-0}"
done

# The fast path counts in each thread's TLS, and a thread adds its counts
# to its ring's header at its hooks and at its exit; those of the threads
# still there at the end are read by the end's flush.  workers: 4 threads
# that allocate (a leak each), free what main allocated, and then wait
# for ever while main ends (by return, exit or _exit); one thread that only
# frees.  Every way, the totals of the sampled recording are the full
# one's.
cat >"$OUT/workers.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define N 4
static void *given[N][3000];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int done;
/* Says it is done, and stays (the process ends around it). */
static void *wait_for_ever(void)
{
	pthread_mutex_lock(&mu);
	done++;
	pthread_cond_broadcast(&cv);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}
static void *worker(void *arg)
{
	long k = (long)arg;
	for (int i = 0; i < 20000; i++) {
		volatile char *p = malloc(16 + (size_t)(i % 300) * 8);
		p[0] = 1;
		free((void *)p);
	}
	if (k < N) {
		for (int i = 0; i < 3000; i++)
			free(given[k][i]);
		if (!malloc(1000 + k))		/* a leak */
			return NULL;
	} else {
		void *q = calloc(10, 10);
		free(realloc(q, 500));
	}
	return wait_for_ever();
}
static void *freer(void *arg)
{
	void **v = arg;
	for (int i = 0; i < 5000; i++)
		free(v[i]);
	return wait_for_ever();
}
int main(int argc, char **argv)
{
	pthread_t th;
	static void *mine[5000];
	for (int k = 0; k < N; k++)
		for (int i = 0; i < 3000; i++)
			given[k][i] = malloc(40);
	for (int i = 0; i < 5000; i++)
		mine[i] = strdup("a string of some length");
	for (long k = 0; k <= N; k++)
		pthread_create(&th, NULL, worker, (void *)k);
	pthread_create(&th, NULL, freer, mine);
	pthread_mutex_lock(&mu);
	while (done < N + 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	puts("done");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "exit"))
		exit(3);
	if (argc > 1 && !strcmp(argv[1], "_exit"))
		_exit(4);
	return 0;
}
EOF
check_status "build workers" 0 cc -O1 -g -pthread -o "$OUT/workers" "$OUT/workers.c"
for how in return exit _exit; do
	st=0
	[ $how = exit ] && st=3
	[ $how = _exit ] && st=4
	check_status "workers ($how), every block" $st ms-record -q -o "$OUT/wf.ndjson" "$OUT/workers" $how
	wf=$(jqr "$OUT/wf.ndjson" end '"\(.allocs) \(.bytes) \(.frees)"')
	check_range "workers ($how): 5 x 20,000 blocks and main's 17,000 (and libc's)" \
		117000 117020 "${wf%% *}"
	check_range "workers ($how): all freed but 4 (and libc's)" 4 20 \
		"$(echo "$wf" | awk '{ print $1 - $3 }')"
	for r in 1K 64K 1T; do
		MEMSCOPE_SEED=5 check_status "workers ($how), --sample $r" $st \
			ms-record -q --sample $r -o "$OUT/ws.ndjson" "$OUT/workers" $how
		check_eq "workers ($how), --sample $r: the same totals" "$wf" \
			"$(jqr "$OUT/ws.ndjson" end '"\(.allocs) \(.bytes) \(.frees)"')"
	done
done

# Densely sampled: 200,000 blocks live at once, each recorded (at 16 bytes,
# 64- and 160-byte blocks are recorded with probability 0.98 and 0.99995),
# made one after the other, so that their addresses are 80 and 176 bytes
# apart: the strides at which a plain multiplicative hash put them in a
# fraction of the set's buckets, whose overflow left 7 % and 27 % of them
# unrecorded, their sites' estimates that much low (sample.h,
# sampled_bucket).  The statistical error here is 0.03 %.
cat >"$OUT/dense.c" <<'EOF'
#include <stdlib.h>
enum { N = 200000 };
static void *b[N];
__attribute__((noinline)) static void *small_one(void) { return malloc(64); }
__attribute__((noinline)) static void *large_one(void) { return malloc(160); }
int main(void)
{
	for (int i = 0; i < N; i++)
		b[i] = small_one();
	for (int i = 0; i < N; i++)
		free(b[i]);
	for (int i = 0; i < N; i++)
		b[i] = large_one();
	for (int i = 0; i < N; i++)
		free(b[i]);
	return 0;
}
EOF
check_status "build dense" 0 cc -O1 -g -o "$OUT/dense" "$OUT/dense.c"
MEMSCOPE_SEED=1 check_status "dense, --sample 16" 0 ms-record -q --sample 16 -o "$OUT/dense.ndjson" "$OUT/dense"
check_range "dense: 64-byte blocks' estimate within 1 %" 198000 202000 "$(site "$OUT/dense.ndjson" 64 small_one allocs)"
check_range "dense: 160-byte blocks' estimate within 1 %" 198000 202000 "$(site "$OUT/dense.ndjson" 160 large_one allocs)"

# A thread that only frees (a queue's consumer) takes the fast path too,
# where its frees are counted in its TLS; they reach its ring's header at
# its recorded frees once 4096 have gathered (sample.h,
# sample_publish_frees).  A process killed by a signal leaves out what its
# threads still hold: here more than none of the consumer's frees (their
# fast path is open; in the full hook each was in the header at once) and
# fewer than 8192 (published on the way; else all 200,000 are lost).
cat >"$OUT/consumer.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
enum { N = 200000 };
static void *blk[N];
static void *consume(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++)
		free(blk[i]);
	puts("freed");
	fflush(stdout);
	for (;;)
		pause();
	return NULL;
}
int main(void)
{
	pthread_t t;
	for (int i = 0; i < N; i++)
		blk[i] = malloc(16 + (i % 64) * 8);
	pthread_create(&t, NULL, consume, NULL);
	pthread_join(t, NULL);
	return 0;
}
EOF
check_status "build consumer" 0 cc -O1 -pthread -o "$OUT/consumer" "$OUT/consumer.c"
: >"$OUT/consumer.out"
MEMSCOPE_SEED=3 ms-record -q --sample 64K -o "$OUT/cs.ndjson" "$OUT/consumer" >"$OUT/consumer.out" &
CREC=$!
_bg_pids="$_bg_pids $CREC"
if wait_for_line "$OUT/consumer.out" '^freed$'; then
	pkill -TERM -P $CREC -x consumer
	wait $CREC
	lost=$(jqr "$OUT/cs.ndjson" end '200000 - .frees')
	check_range "consumer killed: some of its frees were in its TLS (fast path open)" 1 8191 "$lost"
fi

# Bad rates.
check_status "--sample 0" 2 ms-record --sample 0 "$P"
check_status "--sample junk" 2 ms-record --sample 12Q "$P"
MEMSCOPE_SEED=x check_status "bad MEMSCOPE_SEED" 125 ms-record --sample 1M "$P"

# A block of 0 bytes is recorded with probability 1 - exp(-0/BYTES) = 0:
# never, even at --sample 1, where a block of 1 byte is, with
# probability 0.63 (sample.h, sample_fast_take).  The totals still count
# every one, on the fast path (the shim counts the bytes a thread
# allocates by its count's own subtracts) and in the full hook alike.
cat >"$OUT/zero.c" <<'EOF'
#include <stdlib.h>
enum { N = 100000 };
static void *z[N], *o[N];
__attribute__((noinline)) static void *zero_one(void) { return malloc(0); }
__attribute__((noinline)) static void *one_one(void) { return malloc(1); }
int main(void)
{
	for (int i = 0; i < N; i++) {
		z[i] = zero_one();
		o[i] = one_one();
	}
	for (int i = 0; i < N; i++)
		free(z[i]);
	for (int i = 0; i < N; i++)
		free(o[i]);
	return 0;
}
EOF
check_status "build zero" 0 cc -O1 -g -o "$OUT/zero" "$OUT/zero.c"
check_status "zero, full" 0 ms-record -q -o "$OUT/zf.ndjson" "$OUT/zero"
zf=$(jqr "$OUT/zf.ndjson" end '"\(.allocs) \(.bytes) \(.frees)"')
check_eq "zero, full: the blocks of 0 bytes" 100000 "$(site "$OUT/zf.ndjson" 0 zero_one allocs)"
for r in 1 4K; do
	MEMSCOPE_SEED=9 check_status "zero, --sample $r" 0 ms-record -q --sample $r -o "$OUT/zs.ndjson" "$OUT/zero"
	check_eq "zero, --sample $r: the same totals" "$zf" "$(jqr "$OUT/zs.ndjson" end '"\(.allocs) \(.bytes) \(.frees)"')"
	check_eq "zero, --sample $r: no block of 0 bytes recorded" "" "$(site "$OUT/zs.ndjson" 0 zero_one samples)"
done
MEMSCOPE_SEED=9 ms-record -q --sample 1 -o "$OUT/zs1.ndjson" "$OUT/zero" >/dev/null 2>&1
# 100,000 blocks of 1 byte at probability 1 - 1/e: 63,212, sigma 152.
check_range "zero, --sample 1: the blocks of 1 byte recorded" 62600 63800 \
	"$(site "$OUT/zs1.ndjson" 1 one_one samples)"
check_range "zero, --sample 1: the blocks of 1 byte estimated" 99000 101000 \
	"$(site "$OUT/zs1.ndjson" 1 one_one allocs)"

# An exec ends the image without its exit: the library hands in what the
# thread's fast path counted before it (shim/hooks.c, before_exec), for
# each exec function (glibc's call its execve by a hidden name), and a
# failed exec goes on.  Without it the image before the exec ended with
# 96,448 of its 100,000 allocations at 512K, 12 at 1T.
cat >"$OUT/execer.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv)
{
	char *args[] = { "true", NULL };
	for (int i = 0; i < 100000; i++) {
		void *volatile p = malloc(16 + i % 200);
		if (i % 10)
			free(p);
	}
	if (!strcmp(argv[1], "execv"))
		execv("/bin/true", args);
	else if (!strcmp(argv[1], "execvp"))
		execvp("true", args);
	else if (!strcmp(argv[1], "execve"))
		execve("/bin/true", args, environ);
	else if (!strcmp(argv[1], "execl"))
		execl("/bin/true", "true", (char *)NULL);
	else if (!strcmp(argv[1], "execle"))
		execle("/bin/true", "true", (char *)NULL, environ);
	else if (!strcmp(argv[1], "execlp"))
		execlp("true", "true", (char *)NULL);
	else if (!strcmp(argv[1], "fails"))
		execl("/nonexistent/true", "true", (char *)NULL);
	return 3;
}
EOF
check_status "build execer" 0 cc -O1 -o "$OUT/execer" "$OUT/execer.c"
check_status "execer, full" 0 ms-record -q -o "$OUT/xf.ndjson" "$OUT/execer" execv
check_eq "execer, full: the image before the exec" "exec 100000 11550000 90000" \
	"$(jqr "$OUT/xf.ndjson" end '"\(.reason) \(.allocs) \(.bytes) \(.frees)"' | head -1)"
for how in execv execvp execve execl execle execlp fails; do
	st=0
	[ $how = fails ] && st=3
	for r in 512K 1T; do
		MEMSCOPE_SEED=4 check_status "execer $how, --sample $r" $st \
			ms-record -q --sample $r -o "$OUT/xs.ndjson" "$OUT/execer" $how
		want="exec 100000 11550000 90000"
		[ $how = fails ] && want="exit 100000 11550000 90000"
		check_eq "execer $how, --sample $r: the image's totals" "$want" \
			"$(jqr "$OUT/xs.ndjson" end '"\(.reason) \(.allocs) \(.bytes) \(.frees)"' | head -1)"
	done
done

# --- attached to a running service ------------------------------------------
"$EX/ticker" 10 1000 50 >"$OUT/ticker.log" &
TK=$!
_bg_pids="$_bg_pids $TK"
sleep 0.5
A="$OUT/a.ndjson"
check_status "attach with --sample" 0 ms-record -p $TK --sample 1K --duration 2s -o "$A"
check_grep "attach: detached" "detached (thread stopped" "$OUT/last.err"
check_eq "attach: mode" attach "$(jqr "$A" header .mode)"
check_eq "attach: sample" 1024 "$(jqr "$A" header .options.sample)"
check_eq "attach: end" detached "$(jqr "$A" end .reason)"
n=$(site "$A" 1000 cache_add samples)
allocs=$(site "$A" 1000 cache_add allocs)
# 1000 B at 1 KiB: each block recorded with probability 0.62.
check_range "attach: cache_add blocks recorded" 20 $(( ${allocs:-0} - 1 )) "${n:-0}"
check_range "attach: cache_add estimated blocks (one a tick, 2 s at 10 ms)" 100 260 "${allocs:-0}"
check_eq "attach: no errors" 0 "$(jqr "$A" end .errors)"
check_eq "attach: live blocks are of unknown fate" unknown "$(jqr "$A" leak .kind | sort -u)"
# The documented way to watch a server: a larger rate, a duration.
check_status "attach --sample 1M --duration" 0 ms-record -p $TK --sample 1M --duration 1s -o "$OUT/a2.ndjson"
check_eq "attach 1M: sample" 1048576 "$(jqr "$OUT/a2.ndjson" header .options.sample)"
check_eq "attach 1M: end" detached "$(jqr "$OUT/a2.ndjson" end .reason)"
# Long after its first 50 ticks, ticker allocates twice a tick and frees
# the message of 50 ticks before: every free is counted (those of blocks
# older than the attach too, which a full recording leaves out as
# unknown_frees), none is looked up.
a2a=$(jqr "$OUT/a2.ndjson" end .allocs)
a2f=$(jqr "$OUT/a2.ndjson" end .frees)
check_eq "attach 1M: no frees of unknown blocks" 0 "$(jqr "$OUT/a2.ndjson" end .unknown_frees)"
check_range "attach 1M: the older blocks' frees count too (allocations = 2 x frees)" -3 3 \
	$(( ${a2a:-0} - 2 * ${a2f:-0} ))
kill -0 $TK 2>/dev/null
check_eq "the service still runs" 0 $?

finish
