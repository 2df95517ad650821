#!/bin/sh
# ms-filter passes a running recording on as it comes when its output is a
# pipe: 'ms-record ./app | ms-filter --type sample | jq' shows the run live.
# Each line is stamped with the time it came out of the pipe; the first
# sample must come out long before the program ends, every sample soon
# after the recording took it, and events that ms-filter holds in its
# buffer at the latest with the next sample.  Into a file the output is the
# same, buffered.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# stamp START: each line of standard input prefixed with the milliseconds
# since START at which it was read.
stamp() {
	while IFS= read -r line; do
		printf '%s %s\n' $(( $(now_ms) - $1 )) "$line"
	done
}

# --- samples of a program that runs about a second ------------------------
t0=$(now_ms)
ms-record -q "$EX/churn" 1 2>record.err | ms-filter --type sample 2>filter.err | stamp "$t0" >arrivals
check_eq "churn ran to its end (its output goes to ms-record's stderr)" "churn: done" "$(tail -n 1 record.err)"
check_empty "ms-filter: no errors" filter.err
cut -d' ' -f2- arrivals >live.ndjson
check_eq "the header, the samples and the end came through" "header sample end" \
	"$(jq -r .type live.ndjson | uniq | tr '\n' ' ' | sed 's/ $//')"
nsamples=$(grep -c '"type":"sample"' live.ndjson)
check_range "about ten samples in a second (every 100 ms)" 5 20 "$nsamples"
first=$(grep -m1 '"type":"sample"' arrivals | cut -d' ' -f1)
end=$(grep '"type":"end"' arrivals | cut -d' ' -f1)
# (Upper bounds only against a hang: a busy machine stretches every figure,
# the stamping of each line most, and the checks below are relative.)
check_range "the program ran at least a second (ms until the end record)" 900 120000 "$end"
# Buffered to the end (as before), every line came out within a few ms of
# the end record.
check_range "the first sample came out well before the end (ms before it)" 500 120000 $((end - first))
# Each sample came out soon after the recording took it: its arrival, from
# the pipeline's start, is its ts (from the program's start) plus the start-up
# and the way through the pipe.
late=$(awk '/"type":"sample"/ { match($0, /"ts":[0-9]+/); ts = substr($0, RSTART + 5, RLENGTH - 5) / 1e6
		d = $1 - ts; if (d > max) max = d } END { printf "%d\n", max }' arrivals)
# Buffered to the end, the first one would be as late as the run is long
# (its ts to the end record's): at most half that, and 400 ms on an idle
# machine, where it is about 10.
run=$(jq -r 'select(.type == "end") | .ts / 1e6 | floor' live.ndjson)
check_range "every sample came out within half the run of being taken (worst, ms; run $run ms)" \
	0 $((run / 2)) "$late"
check_eq "samples: ts in order" true "$(jq -s '[.[] | select(.type == "sample") | .ts] | . == sort' live.ndjson)"

# --- events held in ms-filter's buffer go out with the next sample ----------
# ticker allocates 1000 B from cache_add every 10 ms; its records are small,
# ms-filter's buffer is 64 KiB: only the samples (every 100 ms) flush them.
t0=$(now_ms)
timeout -s TERM 1.5 ms-record -q --events "$EX/ticker" 10 2>/dev/null |
	ms-filter --type alloc --only cache_add | stamp "$t0" >events.arrivals
n=$(grep -c '"type":"alloc"' events.arrivals)
check_range "ticker: an allocation of cache_add per tick" 50 150 "$n"
first=$(grep -m1 '"type":"alloc"' events.arrivals | cut -d' ' -f1)
last=$(tail -n 1 events.arrivals | cut -d' ' -f1)
check_range "the first event came out well before the last (ms)" 700 120000 $((last - first))

# --- into a file: the same records, written at the end ----------------------
ms-filter --type sample live.ndjson | cat >piped.ndjson
ms-filter --type sample -o file.ndjson live.ndjson
check_eq "-o FILE: the same records as into a pipe" "$(cat piped.ndjson)" "$(cat file.ndjson)"
ms-filter --type sample live.ndjson >redirected.ndjson
check_eq "> FILE: the same records as into a pipe" "$(cat piped.ndjson)" "$(cat redirected.ndjson)"

finish
