#!/bin/sh
# --events writes every allocation and free, in time order, with the same
# stacks, and still the same sites, leaks and totals.
. "$(dirname "$0")/lib.sh"

check_status "aggregated" 0 ms-record -q -o "$OUT/agg.ndjson" "$EX/leaky"
check_status "events" 0 ms-record -q -e -o "$OUT/ev.ndjson" "$EX/leaky"
E="$OUT/ev.ndjson"
check_eq "one alloc record per allocation" 601025 "$(grep -c '"type":"alloc"' "$E")"
check_eq "one free record per free" 600005 "$(grep -c '"type":"free"' "$E")"
check_eq "realloc frees" 200005 "$(grep '"type":"free"' "$E" | grep -c '"fn":"realloc"')"
check_eq "every free knows its block" 0 "$(grep '"type":"free"' "$E" | grep -vc '"size"')"
check_eq "time order" "" "$(jq -r 'select(.type=="alloc" or .type=="free") | .ts' "$E" | awk 'NR > 1 && $1 < prev { print "back at " NR } { prev = $1 }' | head -1)"
# Pair the events by pointer, independently of memscope: what is left is the leaks.
check_eq "leaks from the events alone" "1020 89609" "$(jq -r 'select(.type=="alloc" or .type=="free") | "\(.type) \(.ptr) \(.size)"' "$E" |
	awk '$1 == "alloc" { live[$2] = $3 } $1 == "free" { delete live[$2] } END { for (p in live) { n++; b += live[p] } print n, b }')"
# Same sites, leaks and totals as the aggregated run (timestamps aside), a
# stack known by its frames (the two streams number stacks in the order they
# write them).
norm() {
	v1 "$1" | jq -c -s '(map(select(.type=="stack"))
		| map({key: (.id|tostring), value: ([.frames[] | "\(.fn)@\(.file):\(.line)"] | join(";"))})
		| from_entries) as $s
		| .[] | select(.type=="site" or .type=="leak" or .type=="end")
		| (if .stack != null then .stack = $s[.stack|tostring] else . end)
		| del(.pid, .ts, .first_ts, .last_ts, .peak_ts, .heap_peak_ts, .mapped_peak_ts, .ages, .waits, .hwm, .cpu, .recorder_hwm, .recorder_cpu, .scan_ns, .scan_bytes, .filtered, .filters)' | sort
}
check_eq "same aggregates" "$(norm "$OUT/agg.ndjson" | md5sum)" "$(norm "$E" | md5sum)"
# mmap events: memhog maps 1 MiB when told to.
ms-record -q -e -o "$OUT/mm.ndjson" "$EX/memhog" 1 >"$OUT/mm.log" 2>&1 &
rec=$!
wait_for_line "$OUT/mm.log" ready
pid=$(sed -n 's/^ready //p' "$OUT/mm.log")
kill -USR1 "$pid"
wait_for_line "$OUT/mm.log" grown
kill -TERM "$pid"
wait $rec
check_eq "mmap event" "1048576" "$(jq -r 'select(.type=="mmap") | .size' "$OUT/mm.ndjson")"
# SIGUSR1 sent to ms-record is passed on to the program, as SIGINT is (it
# killed ms-record: no end record).
ms-record -q -e -o "$OUT/usr1.ndjson" "$EX/memhog" 1 >"$OUT/usr1.log" 2>&1 &
rec=$!
wait_for_line "$OUT/usr1.log" ready
kill -USR1 $rec
wait_for_line "$OUT/usr1.log" grown
kill -TERM "$(sed -n 's/^ready //p' "$OUT/usr1.log")"
wait $rec
check_eq "SIGUSR1 to ms-record: the program got it" "1048576" \
	"$(jq -r 'select(.type=="mmap") | .size' "$OUT/usr1.ndjson")"
check_grep "SIGUSR1 to ms-record: the recording ends whole" '"type":"end"' "$OUT/usr1.ndjson"
check_eq "mmap leak, reachable (memhog keeps no pointer: definitely)" "1 1048576 mmap" \
	"$(jq -r 'select(.type=="leak" and .fn=="mmap") | "\(.count) \(.bytes) \(.fn)"' "$OUT/mm.ndjson")"

# Timestamps are ns of CLOCK_MONOTONIC: the shim stamps events with the TSC,
# whose rate ms-record measures while the program starts.  A program reads
# CLOCK_MONOTONIC around an allocation, sleeps, and reads it around another:
# the gap between the two events lies between what it measured from just
# after the first to just before the second and from just before the first
# to just after the second.  A preemption anywhere only widens that bracket:
# a loaded machine cannot fail it (comparing with python3's own measure of
# its sleep did, once, by the 74 ms the interpreter was preempted between
# its clock and its next allocation).  Both allocations are made where a
# first one was, so that neither takes its stack's first capture (~0.1 ms).
#   - A 0.5 s sleep, to 1 ms: the rate measured over ms-record's first 5 ms
#     (a rate 0.2 % off fails).
#   - A 2 ms sleep, to 2 us: the program ends within ms-record's first 5 ms
#     and its events are read with the rate measured until then (since
#     ms-record no longer waits for the 5 ms to end).  A rate 0.5 % off
#     fails it (checked); where a loaded machine let the 5 ms pass first, it checks
#     the usual rate.
cat >"$OUT/sleeper.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long long now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}
int main(int argc, char **argv)
{
	struct timespec d = { 0, argc > 1 ? atol(argv[1]) : 500000000 };
	static const size_t size[3] = { 5555, 11111, 22222 };
	void *volatile p[3];
	long long t[3][2];
	int i;

	for (i = 0; i < 3; i++) {
		t[i][0] = now();
		p[i] = malloc(size[i]);
		t[i][1] = now();
		if (i == 1)
			nanosleep(&d, NULL);
	}
	printf("%lld %lld\n", t[2][0] - t[1][1], t[2][1] - t[1][0]);
	for (i = 0; i < 3; i++)
		free(p[i]);
	return 0;
}
EOF
check_status "build the sleeper" 0 cc -O1 -o "$OUT/sleeper" "$OUT/sleeper.c"
# sleeper_gap NDJSON: ns between its two events
sleeper_gap() {
	jq -r 'select(.type=="alloc" and (.size == 11111 or .size == 22222)) | .ts' "$1" |
		awk 'NR == 1 { a = $1 } NR == 2 { printf "%d", $1 - a }'
}
check_status "the sleeper" 0 ms-record -q -e -o "$OUT/sleep.ndjson" "$OUT/sleeper"
lo=$(awk '{ print $1 }' "$OUT/last.out" 2>/dev/null)
hi=$(awk '{ print $2 }' "$OUT/last.out" 2>/dev/null)
check_range "the sleeper slept at least 0.5 s" 500000000 100000000000 "${lo:-0}"
check_range "the sleep, in ns between its two events, within what it measured (1 ms)" \
	$(( ${lo:-0} - 1000000 )) $(( ${hi:-0} + 1000000 )) "$(sleeper_gap "$OUT/sleep.ndjson")"
check_status "the sleeper, 2 ms" 0 ms-record -q -e -o "$OUT/nap.ndjson" "$OUT/sleeper" 2000000
lo=$(awk '{ print $1 }' "$OUT/last.out" 2>/dev/null)
hi=$(awk '{ print $2 }' "$OUT/last.out" 2>/dev/null)
check_range "the sleeper slept at least 2 ms" 2000000 100000000000 "${lo:-0}"
check_range "the 2 ms sleep, in ns between its two events, within what it measured (2 us)" \
	$(( ${lo:-0} - 2000 )) $(( ${hi:-0} + 2000 )) "$(sleeper_gap "$OUT/nap.ndjson")"
finish
