#!/bin/sh
# The heap over time by site in every recording, not only --events: the
# "timeline" and "series" records (memscope-format(5)) give the heap, the
# mapped bytes and the top stacks' live bytes at moments of the run, exact;
# ms-filter drops a dropped stack's series; the HTML chart is stacked by
# site from them, and its time view (the page's own script, run by node)
# shows for a time range the sites that held the most at its highest point.
# tests/e2e/phases.c is the program: 1 MiB held by phase_a, then 2 MiB by
# phase_b (the peak), then 512 KiB by phase_c to the end.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

check_status "build phases.c" 0 cc -O1 -g -fno-omit-frame-pointer -o "$OUT/phases" "$TOP/tests/e2e/phases.c"
check_status "record it" 0 ms-record -q -o ph.ndjson "$OUT/phases"
sid() { v1 ph.ndjson | jq -r --arg f "$1" 'select(.type=="stack" and .frames[0].fn==$f) | .id' | head -1; }
A=$(sid phase_a) B=$(sid phase_b) C=$(sid phase_c)
check_ne "the phases' stacks" "" "$A$B$C"
# The series, as values per point (null: not among the top then).
jq -s -c --argjson a "$A" --argjson b "$B" --argjson c "$C" '
	(map(select(.type=="timeline")) | .[0]) as $t
	| def vals($s): [range(0; $t.ts | length)] as $idx
		| (map(select(.type=="series" and .stack==$s)) | .[0]) as $r
		| if $r == null then [$idx[] | null] else
		  reduce range(0; $r.at | length) as $k ([$idx[] | null];
			. as $v | [range(0; $v | length)] | map(if . >= $r.at[$k] then $r.live[$k] else $v[.] end))
		  end;
	{ts: $t.ts, heap: $t.heap, mapped: $t.mapped, a: vals($a), b: vals($b), c: vals($c)}' ph.ndjson >tl.json
check_eq "one timeline record" 1 "$(jq -s 'map(select(.type=="timeline")) | length' ph.ndjson)"
check_eq "its points in time order" true "$(jq '.ts | . == sort' tl.json)"
check_eq "its last point is the end, with the end's live heap" \
	"$(jq -r 'select(.type=="end") | "\(.ts) \(.live_bytes)"' ph.ndjson)" "$(jq -r '"\(.ts[-1]) \(.heap[-1])"' tl.json)"
check_eq "a point of phase A: phase_a holds 1 MiB, phase_b nothing" true \
	"$(jq '[range(0; .ts | length) as $i | select(.a[$i] == 1048576 and .b[$i] == 0)] | length > 0' tl.json)"
check_eq "a point of phase B: phase_b holds 2 MiB, phase_a nothing" true \
	"$(jq '[range(0; .ts | length) as $i | select(.b[$i] == 2097152 and .a[$i] == 0)] | length > 0' tl.json)"
check_eq "phase_c holds 512 KiB at the end" 524288 "$(jq '.c[-1]' tl.json)"
check_eq "no point has the sites above the heap" true \
	"$(jq '[range(0; .ts | length) as $i | (.a[$i] // 0) + (.b[$i] // 0) + (.c[$i] // 0) <= .heap[$i]] | all' tl.json)"
check_eq "series: the most each held" "1048576 2097152 524288" \
	"$(for s in $A $B $C; do jq --argjson s $s 'select(.type=="series" and .stack==$s) | .max' ph.ndjson; done | paste -sd' ')"
check_status "ms-record -i 0: no samples, no timeline" 0 ms-record -q -i 0 -o ph0.ndjson "$OUT/phases"
check_eq "  none written" 0 "$(jq -s 'map(select(.type=="timeline" or .type=="series")) | length' ph0.ndjson)"

check_eq "ms-report --json: heap_by_site, phase_b's bytes at each point" "$(jq -c .b tl.json)" \
	"$(ms-report --json ph.ndjson | jq -c '.heap_by_site.sites[] | select(.site | startswith("phase_b ")) | .live')"

# ms-filter: a stack the frame rules drop takes its series along.
ms-filter --ignore phase_b ph.ndjson >nob.ndjson
check_eq "ms-filter --ignore phase_b: its series goes" "$A $C" \
	"$(jq -s -r 'map(select(.type=="series") | .stack) | map(tostring) | join(" ")' nob.ndjson | tr ' ' '\n' | grep -x -e "$A" -e "$B" -e "$C" | paste -sd' ')"
check_status "  and the stream still reads" 0 ms-report nob.ndjson

# Bad input: a series without its timeline, or naming points it has not.
grep -v '"type":"timeline"' ph.ndjson >bad1.ndjson
check_status "a series before any timeline: exit 2" 2 ms-report bad1.ndjson
check_one_line_error "  one line" "$OUT/last.err"
check_fgrep "  saying what is wrong" "series: no timeline record of its process before it" "$OUT/last.err"
jq -c 'if .type=="series" then .at[-1] = 100000 else . end' ph.ndjson >bad2.ndjson
check_status "a series naming a point past the last: exit 2" 2 ms-report bad2.ndjson
check_one_line_error "  one line" "$OUT/last.err"

# The page: its chart by site, the time view's answers.
ms-report --html ph.ndjson >ph.html
chart=$(grep -o "msChart('heapchart'[^;]*" ph.html)
echo "$chart" >chart.txt
check_egrep "html: the chart by site, phase_b first, then the rest" \
	"\['phase_b phases.c:[0-9]+','phase_a phases.c:[0-9]+','phase_c phases.c:[0-9]+','all other sites'\]\)$" chart.txt
check_fgrep "html: the time view is on the page" '<div id="timeview">' ph.html
if ! command -v node >/dev/null; then
	skip "no node (make deps installs nodejs): the time view's script is not run"
else
	view() { node "$TOP/tests/e2e/timeview.js" ph.html "$1" "$2"; }
	tb=$(jq '[range(0; .ts | length) as $i | select(.b[$i] == 2097152) | .ts[$i]] | first' tl.json)
	ta=$(jq '[range(0; .ts | length) as $i | select(.a[$i] == 1048576) | .ts[$i]] | first' tl.json)
	view "$tb" "$tb" >vb.json
	check_eq "time view, phase B: 2 MiB, phase_b first" "2097152 2097152 phase_b" \
		"$(jq -r '"\(.heap) \(.rows[0].bytes) \(.rows[0].site | split(" ") | first)"' vb.json)"
	view "$ta" "$ta" >va.json
	check_eq "time view, phase A: 1 MiB, phase_a first" "1048576 1048576 phase_a" \
		"$(jq -r '"\(.heap) \(.rows[0].bytes) \(.rows[0].site | split(" ") | first)"' va.json)"
	view 0 "$(jq '.ts[-1]' tl.json)" >vall.json
	check_eq "time view, the whole run: its highest point is the peak" \
		"true $(jq 'select(.type=="end") | "\(.peak_ts) \(.heap_peak)"' -r ph.ndjson)" \
		"$(jq -r '"\(.peak) \(.at) \(.heap)"' vall.json)"
	check_eq "  phase_b held it all; phase_c gained 512 KiB over the run" "2097152 524288" \
		"$(jq -r '"\(.rows[0].bytes) \(.rows[] | select(.site | startswith("phase_c")) | .change)"' vall.json)"
	check_eq "  drawn, with its flame graph" "true" "$(jq '.html > 0 and .icicle' vall.json)"
fi

# A real program: its timeline adds little to the recording.
check_status "python3 recorded" 0 ms-record -q -o py.ndjson python3 -c '
d = {str(i): [i] * 4 for i in range(100000)}
s = str(d)
del d
print(len(s))'
all=$(wc -c <py.ndjson)
tl=$(grep -e '"type":"timeline"' -e '"type":"series"' py.ndjson | wc -c)
check_range "python3: timeline and series under 5 % of the recording ($tl of $all bytes)" 1 $((all / 20)) "$tl"
check_eq "python3: its last point has the end's live heap" \
	"$(jq 'select(.type=="end") | .live_bytes - .mapped' py.ndjson)" "$(jq 'select(.type=="timeline") | .heap[-1]' py.ndjson)"
finish
