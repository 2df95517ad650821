#!/bin/sh
# make fuzz: runs each fuzz target under libFuzzer for SECONDS seconds.
#
#   sh tests/fuzz/run.sh SECONDS TARGET...
#
# Each starts from its seeds (tests/fuzz/corpus/TARGET, checked in) and
# what earlier runs found (tests/fuzz/out/corpus/TARGET, not checked in).
# A crash, leak, timeout or sanitizer report is saved under
# tests/fuzz/crashes/TARGET/: check it in with the fix, and make check
# replays it from then on.  The figures of every run (executions, new
# inputs, crashes) go to tests/fuzz/out/summary.txt, the README's source.
set -u
cd "$(dirname "$0")/../.."
secs=$1
shift
mkdir -p tests/fuzz/out
summary=tests/fuzz/out/summary.txt
: >"$summary"
fail=0
for t in "$@"; do
	corpus=tests/fuzz/out/corpus/$t
	crashes=tests/fuzz/crashes/$t
	log=tests/fuzz/out/$t.log
	mkdir -p "$corpus" "$crashes"
	before=$(ls "$crashes" | wc -l)
	dict=
	[ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
	# shellcheck disable=SC2086
	tests/fuzz/bin/fuzz-"$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$crashes/" $dict \
		"$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1
	status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	after=$(ls "$crashes" | wc -l)
	found=$((after - before))
	inputs=$(ls "$corpus" | wc -l)
	printf '%-9s %8s s %12s executions %6s corpus inputs %3s crashes%s\n' "$t" "$secs" \
		"${execs:-?}" "$inputs" "$found" "$([ $status = 0 ] || echo "  (exit $status: $log)")" |
		tee -a "$summary"
	[ $status = 0 ] && [ $found = 0 ] || fail=1
done
exit $fail
