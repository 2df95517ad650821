#!/bin/sh
# Every tool under Valgrind's memcheck, over the inputs the other tests use
# (the fuzz corpus: recordings of every kind, snapshots, diffs, an --events
# stream, a zstd file): no invalid read or write, no use of uninitialised
# memory, no leak at exit.  ms-record and ms-snap are checked recording and
# snapshotting real programs (memcheck traces the tool, not the program).
. "$(dirname "$0")/lib.sh"

if ! command -v valgrind >/dev/null; then
	skip "no valgrind"
fi
# Tools built with ASan (make check-sanitize) do not run under valgrind:
# the sanitizers check them there instead.
if ldd "$TOP/tools/ms-report" | grep -q libasan; then
	skip "tools built with sanitizers (they check them there instead)"
fi
C="$TOP/tests/fuzz/corpus/records"
# vg NAME COMMAND...: the command's status must be what it is without
# valgrind, and memcheck must find nothing (its own status 99 otherwise).
# Two run at a time (the machine's two cores); vg_results checks them.
_vg_jobs=0
vg() {
	_name=$1
	shift
	(
		"$@" >/dev/null 2>&1
		_want=$?
		valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
			--errors-for-leak-kinds=definite,indirect --log-file="$OUT/vg.$_name.log" \
			"$@" >/dev/null 2>"$OUT/vg.$_name.err"
		echo "$_want $?" >"$OUT/vg.$_name.status"
	) &
	_vg_jobs=$((_vg_jobs + 1))
	if [ $_vg_jobs -ge 2 ]; then
		wait
		_vg_jobs=0
	fi
}
vg_results() {
	wait
	for _f in "$OUT"/vg.*.status; do
		_name=${_f#"$OUT"/vg.}
		_name=${_name%.status}
		read -r _want _got <"$_f"
		if [ "$_got" = "$_want" ]; then ok; else
			not_ok "$_name: status $_got under memcheck, $_want without: $(head -c 600 "$OUT/vg.$_name.log")"
		fi
	done
}

# Every input in text, through ms-filter, as a pprof profile; every
# format on four inputs that reach every view (a recording, an --events
# stream, a snapshot, a diff).
for f in "$C"/*; do
	b=$(basename "$f")
	vg "report.$b" ms-report "$f"
	vg "report-pprof.$b" ms-report --pprof -o "$OUT/p.$b.pb.gz" "$f"
	vg "filter.$b" ms-filter --min 64 --ignore 'libc*' --transient "$f"
done
for b in leaky.ndjson pages-events.ndjson snap.ndjson diff.ndjson; do
	for fmt in --md --json --html --svg --collapsed; do
		vg "report$fmt.$b" ms-report $fmt "$C/$b"
	done
done
vg "filter-supp" ms-filter --suppressions "$TOP/tests/fuzz/corpus/supp/memscope.supp" "$C/leaky.ndjson"
vg "diff-snap" ms-diff "$C/snap.ndjson" "$C/snap.ndjson"
vg "diff-rec" ms-diff "$C/leaky.ndjson" "$C/pages.ndjson"
vg "diff-text" ms-diff --text "$C/leaky.ndjson" "$C/pages.ndjson"
vg "snap" ms-snap -p $$
vg "record" ms-record -q -o "$OUT/r.ndjson" "$EX/leaky"
vg "record-events" ms-record -q --events -o "$OUT/e.ndjson" "$EX/threads"
vg "record-follow" ms-record -q -f -o "$OUT/f.ndjson" "$EX/forkexec"
vg "top-batch" ms-top --batch -n 2 -d 0.2
vg_results

finish
