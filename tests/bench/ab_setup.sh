# ab_setup.sh: what tests/bench/ab.sh and ab_sampled.sh share, sourced by
# them after they set AB_N (default iterations), AB_WL (default workloads)
# and AB_RAW (the raw lines' file name under tests/bench/out), with their
# own arguments: BEFORE_TREE [ITERATIONS] [WORKLOAD...].  Sets TOP, BIN,
# OUT, BEFORE, N, WL and RAW (emptied), and defines ab_run, ab_record and
# AB_AWK (the awk functions sorted, med and lo, for the summaries).
cd "$(dirname "$0")/../.." || exit 2
TOP=$PWD
BIN=$TOP/tests/bench/bin
OUT=$TOP/tests/bench/out
[ $# -ge 1 ] || { echo "usage: $0 BEFORE_TREE [ITERATIONS] [WORKLOAD...]" >&2; exit 2; }
BEFORE=$(cd "$1" && pwd) || exit 2
N=${2:-$AB_N}
[ $# -ge 2 ] && shift 2 || shift
WL=${*:-$AB_WL}
for t in "$BEFORE" "$TOP"; do
	[ -x "$t/tools/ms-record" ] && [ -e "$t/shim/libmemscope.so" ] ||
		{ echo "$0: $t is not built" >&2; exit 2; }
done
[ -x "$BIN/alloc_storm" ] && [ -x "$BIN/peakmem" ] && [ -e "$BIN/forward.so" ] ||
	{ echo "$0: run 'make bench' first" >&2; exit 2; }
mkdir -p "$OUT"
RAW=$OUT/$AB_RAW
: >"$RAW"
# The inputs of make bench's profilers and sampled sections, which write them.
[ -f "$OUT/sqlite_inserts.sql" ] && [ -f "$OUT/py_dict.py" ] ||
	{ echo "$0: run 'sh tests/bench/run.sh profilers' once first" >&2; exit 2; }
# python3: every object a malloc, and the same string hashes in every run
# (run.sh, run_one).
export PYTHONMALLOC=malloc PYTHONHASHSEED=0

# ab_run W CMD...: runs CMD... followed by workload W's command line.
ab_run() {
	_w=$1
	shift
	case $_w in
	storm1) "$@" "$BIN/alloc_storm" 1 ;;
	storm2) "$@" "$BIN/alloc_storm" 2 ;;
	server) "$@" "$BIN/server_churn" ;;
	sqlite) "$@" /usr/bin/sqlite3 :memory: ".read $OUT/sqlite_inserts.sql" ;;
	python) "$@" /usr/bin/python3 "$OUT/py_dict.py" ;;
	*) echo "$0: unknown workload $_w" >&2; exit 2 ;;
	esac
}

# ab_record W TREE ARGS...: workload W under TREE's ms-record (and shim),
# with ARGS, through peakmem; the recording goes to $OUT/ab.ndjson.
ab_record() {
	_w=$1 _tree=$2
	shift 2
	ab_run "$_w" env MEMSCOPE_SHIM="$_tree/shim/libmemscope.so" "$BIN/peakmem" "$OUT/ab.time" \
		"$_tree/tools/ms-record" -q "$@" -o "$OUT/ab.ndjson"
}

# ab_variant W V ARGS...: workload W as variant V, through peakmem (its
# figures in $OUT/ab.time): native; jemalloc, jeprof (jemalloc preloaded,
# without and with its profiling); forward (tests/bench/forward.c: the
# calls interposed and passed on); before, after (BEFORE_TREE's and this
# tree's ms-record with ARGS, the recording in $OUT/ab.ndjson).
JEMALLOC=${BENCH_JEMALLOC:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}
ab_variant() {
	_w=$1 _v=$2
	shift 2
	rm -f "$OUT/ab.ndjson"
	case $_v in
	native) ab_run "$_w" "$BIN/peakmem" "$OUT/ab.time" ;;
	jemalloc) ab_run "$_w" env LD_PRELOAD="$JEMALLOC" "$BIN/peakmem" "$OUT/ab.time" ;;
	jeprof) ab_run "$_w" env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=prof:true "$BIN/peakmem" "$OUT/ab.time" ;;
	forward) ab_run "$_w" env LD_PRELOAD="$BIN/forward.so" "$BIN/peakmem" "$OUT/ab.time" ;;
	before) ab_record "$_w" "$BEFORE" "$@" ;;
	after) ab_record "$_w" "$TOP" "$@" ;;
	esac >/dev/null 2>&1
}

# ab_end V FIELDS DASHES: the end record's FIELDS (a jq string) after
# variant V if it recorded, else DASHES.
ab_end() {
	case $1 in
	before|after) jq -r "select(.type==\"end\") | $2" "$OUT/ab.ndjson" | head -n 1 ;;
	*) echo "$3" ;;
	esac
}

# Medians and minima of space-separated lists, in awk.
AB_AWK='
function sorted(s, a,   n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; return n }
function med(s,   a, n) { n = sorted(s, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function lo(s,   a) { sorted(s, a); return a[1] }
'
