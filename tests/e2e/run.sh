#!/bin/sh
# Runs every end-to-end test (tests/e2e/t*.sh); each prints its own result,
# and this its time, so that what makes make check long shows.
#
# E2E_JOBS=N (make check sets it to the number of cores, at most 2) runs the
# scripts that neither measure time nor load the machine N at a time, their
# output kept in order; the others, which sleep, count ticks or samples,
# time themselves or use every core (SERIAL below), then run alone.
cd "$(dirname "$0")" || exit 2
SERIAL="t0100 t0110 t0310 t0340 t0350 t0375 t0405 t0460 t0600 t0700"
jobs=${E2E_JOBS:-1}
fail=0
total=0
skipped=0
start=$(date +%s)
tmp=out/.run
rm -rf "$tmp"
mkdir -p "$tmp"

serial() {
	for s in $SERIAL; do
		case $1 in "$s"-*) return 0 ;; esac
	done
	return 1
}

# run T: one script, its output and status kept under $tmp.
run() {
	t0=$(date +%s)
	sh "$1" >"$tmp/$1.log" 2>&1
	echo "$? $(($(date +%s) - t0))" >"$tmp/$1.rc"
}

report() {
	cat "$tmp/$1.log"
	read -r rc secs <"$tmp/$1.rc"
	total=$((total + 1))
	if [ "$rc" != 0 ]; then
		fail=$((fail + 1))
		echo "FAIL $1"
	elif grep -q '^SKIP ' "$tmp/$1.log"; then
		skipped=$((skipped + 1))
	fi
	echo "     ${1%.sh}: $secs s"
}

parallel=
for t in t[0-9]*.sh; do
	serial "$t" || parallel="$parallel $t"
done
if [ "$jobs" -gt 1 ]; then
	for t in $parallel; do
		while [ "$(ls "$tmp" | grep -c '\.running$')" -ge "$jobs" ]; do
			sleep 0.2
		done
		: >"$tmp/$t.running"
		(run "$t"; rm -f "$tmp/$t.running") &
	done
	wait
	for t in $parallel; do
		report "$t"
	done
else
	for t in $parallel; do
		run "$t"
		report "$t"
	done
fi
for t in t[0-9]*.sh; do
	serial "$t" || continue
	run "$t"
	report "$t"
done
rm -rf "$tmp"
echo "e2e: $((total - fail))/$total test scripts passed ($skipped skipped) in $(($(date +%s) - start)) s"
[ $fail -eq 0 ]
