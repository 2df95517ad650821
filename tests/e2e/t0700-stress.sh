#!/bin/sh
# Stress and faults (tests/stress/): workloads that try to break the
# profiler, each with an answer the program states itself.  Quick in make
# check; `make stress` runs the long version (STRESS=long: 30 s of
# threads, 1 GiB of records), the figures of memscope(7), RELIABILITY.
#   - 8 threads allocating and freeing across threads: exact accounting
#     (the recording's totals less a run that does no work are the
#     program's own counts);
#   - signals delivered during allocation, handlers that malloc;
#   - a fork storm, exit from a thread, longjmp through allocating frames,
#     C++ exceptions and bad_alloc through the hooks;
#   - threads, signals, exceptions and forks again under --sample: its
#     totals exact;
#   - output to a full disk and to a closed pipe: a clear error, the
#     program unharmed;
#   - a stream of records far larger than memory through ms-filter and
#     ms-report, in bounded memory, its totals exact.
. "$(dirname "$0")/lib.sh"

ST="$TOP/tests/stress/bin"
if [ "${STRESS:-}" = long ]; then
	SECS=30 SIGSECS=10 FORKS=500 JUMPS=100000 THROWS=100000 STREAM=1073741824
else
	SECS=3 SIGSECS=2 FORKS=50 JUMPS=5000 THROWS=2000 STREAM=268435456
fi
end_of() { jq -r "select(.type==\"end\") | $2" "$1"; }

# threads_own: the program's own "allocs bytes frees" (its last line).
threads_own() {
	sed -n 's/^threads: allocs \([0-9]*\) bytes \([0-9]*\) frees \([0-9]*\)$/\1 \2 \3/p' "$OUT/last.out"
}
# check_threads WHAT REC: REC's totals less the program's own are those of
# the run that did no work (less its 80 lost blocks), exactly; nothing
# lost.  Sets own_allocs.
check_threads() {
	set -- "$1" "$2" $(threads_own) $base
	own_allocs=$3
	check_eq "$1: the recording's totals are the program's own, exactly" \
		"$(($6 - 80)) $(($7 - 3840)) $8" \
		"$(end_of "$2" "\"\\(.allocs - $3) \\(.bytes - $4) \\(.frees - $5)\"")"
	check_eq "$1: nothing lost, no errors, no unknown frees" "0 0 0" \
		"$(end_of "$2" '"\(.lost) \(.errors) \(.unknown_frees)"')"
}
# check_forks WHAT REC: a stream of the fork storm's per process; each
# child's 3 allocations and 2 frees, exit 0; the parent's FORKS + 1 blocks
# of 64 B, all freed but one.  Sets ppid.
check_forks() {
	ppid=$(jq -r 'select(.type=="header") | .pid' "$2" | head -n 1)
	check_eq "$1: a stream per process" "$((FORKS + 1)) $((FORKS + 1))" \
		"$(jq -r 'select(.type=="header") | .pid' "$2" | wc -l) $(jq -r 'select(.type=="end") | .pid' "$2" | wc -l)"
	check_eq "$1: each child 3 allocations, 2 frees, exit 0" "$FORKS 3 2 exit 0" \
		"$(jq -r "select(.type==\"end\" and .pid != $ppid) | \"\\(.allocs) \\(.frees) \\(.reason) \\(.status)\"" "$2" |
			sort | uniq -c | awk '{ print $1, $2, $3, $4, $5 }')"
	check_eq "$1: the parent's 64 B blocks, all freed but one" "$((FORKS + 1)) $FORKS 0" \
		"$(jq -r "select(.type==\"end\" and .pid == $ppid) | \"\\(.allocs) \\(.frees) \\(.lost)\"" "$2")"
}

# --- 8 threads, blocks freed by other threads ------------------------------
check_status "threads: no work" 0 ms-record -q -o "$OUT/t0.ndjson" "$ST/stress" threads 0
base=$(end_of "$OUT/t0.ndjson" '"\(.allocs) \(.bytes) \(.frees) \(.live)"')
check_eq "threads, no work: its own 80 lost blocks" "80 3840 0" "$(threads_own)"
check_status "threads: $SECS s" 0 ms-record -q -o "$OUT/t.ndjson" "$ST/stress" threads "$SECS"
check_threads threads "$OUT/t.ndjson"
threads_allocs=$own_allocs
check_range "threads: millions of allocations" 100000 100000000000 "$threads_allocs"
check_eq "threads: live at the end as with no work" "$(echo $base | cut -d' ' -f4)" \
	"$(end_of "$OUT/t.ndjson" .live)"
check_eq "threads: the 80 lost blocks, definitely" "80 3840" \
	"$(jq -r 'select(.type=="leak" and .kind=="definitely" and .size==48) | "\(.count) \(.bytes)"' "$OUT/t.ndjson")"

# --- signals during allocation, handlers that malloc -----------------------
check_status "signals: $SIGSECS s" 0 ms-record -q -o "$OUT/s.ndjson" "$ST/stress" signals "$SIGSECS"
check_eq "signals: the program ran as alone" "signals: many handled" "$(cat "$OUT/last.out")"
check_eq "signals: every block freed, nothing lost, no errors" "2 0 0 0 0" \
	"$(end_of "$OUT/s.ndjson" '"\(.allocs - .frees) \(.leaked_blocks) \(.lost) \(.errors) \(.unknown_frees)"')"

# --- a fork storm ------------------------------------------------------------
check_status "forks: $FORKS, --follow" 0 ms-record -q -f -o "$OUT/f.ndjson" "$ST/stress" forks "$FORKS"
check_eq "forks: the program's output" "forks: $FORKS" "$(cat "$OUT/last.out")"
check_forks forks "$OUT/f.ndjson"
check_eq "forks: each child's 300 B lost" "$FORKS 300" \
	"$(jq -r "select(.type==\"end\" and .pid != $ppid) | .leaked_bytes" "$OUT/f.ndjson" | sort | uniq -c |
		awk '{ print $1, $2 }')"

# --- exit from a thread, longjmp, exceptions ------------------------------------
check_status "thread-exit: the thread's status" 5 ms-record -q -o "$OUT/x.ndjson" "$ST/stress" thread-exit
check_eq "thread-exit: end record" "exit 5 0" "$(end_of "$OUT/x.ndjson" '"\(.reason) \(.status) \(.lost)"')"
check_status "longjmp" 0 ms-record -q -o "$OUT/j.ndjson" "$ST/stress" longjmp "$JUMPS"
check_eq "longjmp: every 10th dive's 10 blocks lost, the others freed" \
	"$((JUMPS * 10 + 1)) $((JUMPS * 9)) $((JUMPS / 10 * 10 * 32))" \
	"$(end_of "$OUT/j.ndjson" '"\(.allocs) \(.frees) \(.definitely_bytes + .indirectly_bytes)"')"
check_status "exceptions" 0 ms-record -q -o "$OUT/e.ndjson" "$ST/stress_cxx" "$THROWS"
check_eq "exceptions: caught as alone" "exceptions: $THROWS caught, $(((THROWS + 99) / 100)) bad_alloc" \
	"$(cat "$OUT/last.out")"
check_eq "exceptions: nothing leaked, no errors, nothing lost" "0 0 0" \
	"$(end_of "$OUT/e.ndjson" '"\(.leaked_bytes) \(.errors) \(.lost)"')"
check_eq "exceptions: live at the end: libstdc++'s pool and stdout's buffer" "2" \
	"$(end_of "$OUT/e.ndjson" '.live')"

# --- the same under --sample: its fast path and full hooks, exact totals -------
# A small rate, so that both paths run often: the threads' calloc and
# realloc and frees of other threads' blocks, C++ new and delete (and
# exceptions through them), forked children.
check_status "sampled threads: $SECS s" 0 ms-record -q --sample 4K -o "$OUT/st.ndjson" "$ST/stress" threads "$SECS"
check_threads "sampled threads" "$OUT/st.ndjson"
# Recorded blocks freed by other threads while others join the set: every
# one's free is found (shim/sample.h: a bucket's bit is never clear while
# it holds one), so the workers' sites, millions of blocks all freed, have
# none live.  (What the program does leave live, 85 blocks of its own and
# the runtime's, is sampled at random.)
check_eq "sampled threads: every recorded block of the workers' sites freed" "true 0" \
	"$(jq -s '[.[] | select(.type == "site" and .allocs > 100000)] | "\(length >= 4) \(map(.live) | add)"' -r \
		"$OUT/st.ndjson")"
check_range "sampled threads: blocks recorded" 1000 "$own_allocs" "$(end_of "$OUT/st.ndjson" .samples)"
check_status "sampled signals: $SIGSECS s" 0 ms-record -q --sample 4K -o "$OUT/ss.ndjson" "$ST/stress" signals "$SIGSECS"
check_eq "sampled signals: the program ran as alone" "signals: many handled" "$(cat "$OUT/last.out")"
check_eq "sampled signals: every block freed, nothing lost, no errors" "2 0 0 0" \
	"$(end_of "$OUT/ss.ndjson" '"\(.allocs - .frees) \(.lost) \(.errors) \(.unknown_frees)"')"
check_status "sampled exceptions" 0 ms-record -q --sample 1K -o "$OUT/se.ndjson" "$ST/stress_cxx" "$THROWS"
check_eq "sampled exceptions: caught as alone" "exceptions: $THROWS caught, $(((THROWS + 99) / 100)) bad_alloc" \
	"$(cat "$OUT/last.out")"
check_eq "sampled exceptions: the totals of the full recording" \
	"$(end_of "$OUT/e.ndjson" '"\(.allocs) \(.bytes) \(.frees) 0 0"')" \
	"$(end_of "$OUT/se.ndjson" '"\(.allocs) \(.bytes) \(.frees) \(.errors) \(.unknown_frees)"')"
check_status "sampled forks: $FORKS, --follow" 0 ms-record -q -f --sample 1K -o "$OUT/sf.ndjson" "$ST/stress" forks "$FORKS"
check_forks "sampled forks" "$OUT/sf.ndjson"

# --- output that fails -----------------------------------------------------------
if [ -w /dev/full ]; then
	# The program runs to its end; ms-record says the recording is cut
	# short and exits 125, not the program's 0 (t0320 has the rest).
	ms-record -o /dev/full "$EX/leaky" >"$OUT/full.out" 2>"$OUT/full.err"
	check_eq "-o /dev/full: ms-record's own failure" 125 $?
	check_eq "-o /dev/full: the program's output intact" "leaky: done" "$(cat "$OUT/full.out")"
	check_grep "-o /dev/full: a clear error" "write error: No space left on device (the program keeps running)" "$OUT/full.err"
	check_grep "-o /dev/full: and the outcome" "the recording is incomplete (the program's exit status was 0)" "$OUT/full.err"
fi
# A reader that goes away: the program runs to its end, its output intact.
( ms-record "$EX/churn" 2>"$OUT/pipe.err"; echo "status $?" >"$OUT/pipe.status" ) | head -c 100 >/dev/null
check_eq "closed pipe: the program's own status" "status 0" "$(cat "$OUT/pipe.status")"
check_grep "closed pipe: the program ran to its end" "^churn: done" "$OUT/pipe.err"

# --- a stream larger than memory, in bounded memory ------------------------------
"$ST/genstream" "$STREAM" 2>"$OUT/gen.err" |
	/usr/bin/time -f %M -o "$OUT/filter.rss" ms-filter --max 1M --ignore-frame 'no_such_*' |
	/usr/bin/time -f %M -o "$OUT/report.rss" ms-report --json >"$OUT/big.json"
set -- $(sed -n 's/^genstream: allocs \([0-9]*\) bytes \([0-9]*\)$/\1 \2/p' "$OUT/gen.err")
check_eq "$((STREAM >> 20)) MiB of records: ms-report's totals exact" "$1 $2 $1 0" \
	"$(jq -r '.summary | "\(.allocs) \(.bytes) \(.frees) \(.leaked_bytes)"' "$OUT/big.json")"
check_range "$((STREAM >> 20)) MiB: ms-filter's peak rss, KiB" 1 65536 "$(cat "$OUT/filter.rss")"
check_range "$((STREAM >> 20)) MiB: ms-report's peak rss, KiB" 1 65536 "$(cat "$OUT/report.rss")"
echo "  stress: threads $threads_allocs allocations in $SECS s; $(cat "$OUT/filter.rss") / $(cat "$OUT/report.rss") KiB for $((STREAM >> 20)) MiB of records" >&2

finish
