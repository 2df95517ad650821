#!/bin/sh
# Marks and ranges: a run marked by the program (MEMSCOPE_MARK), from
# outside (ms-snap --mark) or by a signal to ms-record (--mark-signal)
# has "mark" records, and its leak records split by the mark their blocks
# came after, so that ms-report --since/--until gives each range's leaks
# exactly, from a plain recording, in every output.  tests/e2e/marks.c
# leaks 10 blocks of 100 bytes before "warm", 20 of 200 between "warm" and
# "done", 5 of 300 after.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

check_status "build marks.c" 0 cc -O1 -g -fno-omit-frame-pointer -I"$TOP/shim" -o "$OUT/marks" \
	"$TOP/tests/e2e/marks.c"
# leaks REC [OPTIONS]: "blocks bytes" of the definitely lost, by ms-report --json.
leaks() { _r=$1; shift; ms-report --json "$@" "$_r" | jq -r '"\(.summary.leaked_blocks) \(.summary.leaked_bytes)"'; }
# ranges REC A B: the leaks before A, between A and B, after B, and all.
ranges() {
	echo "$(leaks "$1" --until "$2") | $(leaks "$1" --since "$2" --until "$3") | $(leaks "$1" --since "$3") | $(leaks "$1")"
}
EXPECT="10 1000 | 20 4000 | 5 1500 | 35 6500"

# --- the program's marks ----------------------------------------------------------
check_status "record it" 0 ms-record -q -o m.ndjson "$OUT/marks"
check_eq "mark records: ms-record's start, the program's two, ms-record's end" \
	"start ms-record|warm program|done program|end ms-record" \
	"$(jq -r 'select(.type=="mark") | "\(.name) \(.by)"' m.ndjson | paste -sd'|')"
check_eq "the program's marks have the stack of the call" 2 \
	"$(jq -s '[.[] | select(.type=="mark" and .by=="program" and .stack > 0)] | length' m.ndjson)"
check_eq "leak records split by the mark before their blocks" "done 5|null 10|warm 20" \
	"$(jq -r 'select(.type=="leak" and .kind=="definitely") | "\(.after) \(.count)"' m.ndjson | sort | paste -sd'|')"
check_eq "ms-report --since/--until: each range exactly" "$EXPECT" "$(ranges m.ndjson warm done)"
check_eq "ms-record's own marks bound the whole run" "35 6500" "$(leaks m.ndjson --since start --until end)"
# Every output says the same, and which range it is.
ms-report --since warm --until done m.ndjson >m.txt
ms-report --md --since warm --until done m.ndjson >m.md
ms-report --html --since warm --until done m.ndjson >m.html
check_egrep "text: the range" "^  leaks of +warm\.\.done  \(blocks allocated after warm, before done; " m.txt
check_egrep "text: the leaked bytes of the range" "^  leaked +4,000 B  in 20 blocks" m.txt
check_fgrep "md: the same" "| **leaked** | **4,000 B in 20 blocks** |" m.md
check_fgrep "html: the same" '<td>leaked</td><td class="n">4,000 B</td><td>in 20 blocks</td>' m.html
check_egrep "text: the marks" "^  marks +2  warm at [0-9.]+ s, done at [0-9.]+ s\$" m.txt
ms-report m.ndjson >whole.txt
check_eq "text: the leaks by the mark before their allocation" \
	"before the first mark 1,000 B in 10 blocks|after warm 4,000 B in 20 blocks|after done 1,500 B in 5 blocks" \
	"$(sed -n '/By the mark before their allocation:/,/^$/p' whole.txt | sed -n 's/^    \(.*[a-z]\)  *\([0-9,]* B in .*\)/\1 \2/p' | paste -sd'|')"
check_eq "json: leaked_by_mark" "null 1000 10|warm 4000 20|done 1500 5" \
	"$(ms-report --json m.ndjson | jq -r '.leaked_by_mark[] | "\(.after) \(.leaked_bytes) \(.leaked_blocks)"' | paste -sd'|')"
check_eq "json: the marks" "start warm done end" "$(ms-report --json m.ndjson | jq -r '[.marks[].name] | join(" ")')"
check_eq "html: the marks on the charts" 2 "$(grep -o '<g class="mark">' m.html | wc -l)"
check_eq "ms-filter keeps the marks: the ranges stay exact" "$EXPECT" \
	"$(ms-filter --min 1 m.ndjson >mf.ndjson; ranges mf.ndjson warm done)"
# --live-at: the heap as it stood at a mark (the timeline's point there).
live_at() { ms-report --json --live-at "$2" "$1" | jq -r '"\(.live_at.heap) \([.top.live_at[] | "\(.stack[0].fn)=\(.live_at)"] | join(","))"'; }
check_eq "--live-at warm: leak_before's 1,000 bytes" "1000 leak_before=1000" "$(live_at m.ndjson warm)"
check_eq "--live-at done: and leak_between's 4,000" "5000 leak_between=4000,leak_before=1000" "$(live_at m.ndjson done)"
check_egrep "text: its table" "^  what was live at mark done, [0-9.]+ s: 4\.9 KiB of heap, 0 B mapped\$" \
	"$(ms-report --live-at done m.ndjson >la.txt; echo la.txt)"
DONE_TS=$(jq 'select(.type=="mark" and .name=="done") | .ts' m.ndjson)
check_eq "--live-at a time: the timeline's last point before it (done's)" "$DONE_TS 5000" \
	"$(ms-report --json --live-at "$((DONE_TS + 1))ns" m.ndjson | jq -r '"\(.live_at.ts) \(.live_at.heap)"')"
check_status "--live-at a mark not there: exit 2" 2 ms-report --live-at nope m.ndjson
check_status "a mark the stream has not: exit 2" 2 ms-report --since nope m.ndjson
check_one_line_error "  one line" "$OUT/last.err"
check_fgrep "  naming the marks it has" "no mark named 'nope' (its marks: start, warm, done, end)" "$OUT/last.err"
check_eq "  and no report" 0 "$(ms-report --since nope m.ndjson 2>/dev/null | wc -c)"
check_status "--since after --until: exit 2" 2 ms-report --since done --until warm m.ndjson
# ms-filter cuts the stream to the range: the leaks, and with --events the
# allocations too.
check_eq "ms-filter --since warm --until done: that range's leaks" "20 4000" \
	"$(ms-filter --since warm --until done m.ndjson >mr.ndjson; leaks mr.ndjson)"
check_fgrep "  the end record says how" '"filters":["--since warm","--until done"]' mr.ndjson
check_status "recorded with --events" 0 ms-record -q --events -o me.ndjson "$OUT/marks"
ms-filter --since warm --until done me.ndjson >mre.ndjson
check_eq "ms-filter of --events: the range's allocations and leaks" "20 4000 20 4000" \
	"$(ms-report --json mre.ndjson | jq -r '"\(.summary.allocs) \(.summary.bytes) \(.summary.leaked_blocks) \(.summary.leaked_bytes)"')"
check_eq "ms-report --since/--until of --events: the sites and peak of the range too" "20 4000 4000 4000" \
	"$(ms-report --json --since warm --until done me.ndjson | jq -r '"\(.summary.allocs) \(.summary.bytes) \(.summary.peak) \(.summary.leaked_bytes)"')"
check_status "ms-filter: a mark the stream has not: exit 2" 2 ms-filter --since nope m.ndjson
check_fgrep "  said" "leak record before the mark 'nope' (--since): no such mark so far" "$OUT/last.err"
# ms-diff of two recordings, range by range: 10 more blocks between the marks.
check_status "recorded with 30 between" 0 ms-record -q -o more.ndjson "$OUT/marks" more
# leak_deltas: "name change" of each leak's leaked_bytes delta.
leak_deltas() { jq -r 'select(.type=="delta" and .key=="leak" and .metric=="leaked_bytes") | "\(.name | split(" ") | first) \(.change)"' | paste -sd'|'; }
check_eq "ms-diff --since warm --until done: leak_between's 10 more blocks" "leak_between 2000" \
	"$(ms-diff --since warm --until done m.ndjson more.ndjson | leak_deltas)"
check_eq "ms-diff --until warm: no leak changed" "" "$(ms-diff --until warm m.ndjson more.ndjson | leak_deltas)"
check_eq "ms-diff --since done: none either" "" "$(ms-diff --since done m.ndjson more.ndjson | leak_deltas)"
check_status "ms-diff: a mark not there: exit 2" 2 ms-diff --since nope m.ndjson more.ndjson
# A time bound: exact when no record's blocks straddle it (between
# leak_before's last block and leak_between's first), refused when one does.
gap() { jq -s -r '[.[] | select(.type=="leak" and .kind=="definitely")] |
	((map(select(.after==null))[0].last_ts + map(select(.after=="warm"))[0].first_ts) / 2 | floor | tostring) + "ns"' "$1"; }
inside() { jq -r 'select(.type=="leak" and .after=="warm") | "\(.first_ts + 1)ns"' "$1"; }
TG=$(gap m.ndjson)
check_eq "ms-report --since $TG: the 25 blocks after it" "25 5500" "$(leaks m.ndjson --since "$TG")"
check_eq "ms-report --until $TG: the 10 before" "10 1000" "$(leaks m.ndjson --until "$TG")"
check_eq "ms-filter --since $TG: the same" "25 5500" "$(ms-filter --since "$TG" m.ndjson >mt.ndjson; leaks mt.ndjson)"
# (of --events: every allocation from that time on, stdio's buffer too)
TE=$(gap me.ndjson)
check_eq "ms-report --since TIME of --events: the allocations after it" \
	"$(jq -s -r --argjson t "${TE%ns}" '[.[] | select(.type=="alloc" and .ts >= $t)] | "\(length) \(map(.size) | add)"' me.ndjson)" \
	"$(ms-report --json --since "$TE" me.ndjson | jq -r '"\(.summary.allocs) \(.summary.bytes)"')"
check_status "a time inside one record's blocks: exit 2" 2 ms-report --since "$(inside m.ndjson)" m.ndjson
check_fgrep "  saying a mark would split them" "which no mark splits: a time splits them only at a mark" "$OUT/last.err"
check_status "  ms-filter too" 2 ms-filter --since "$(inside m.ndjson)" m.ndjson
# The page offers the ranges between the marks.
check_egrep "html: the time view knows the marks" "marks: \[\{n: 'warm', t: [0-9]+\}, \{n: 'done', t: [0-9]+\}\]\}\);" m.html

# --- marks from outside: ms-snap --mark, and ms-snap --leaks between -------------
# record_wait NAME [OPTIONS]: records "marks wait" in the background, its
# phases driven through a fifo (fd 7); MPID: ms-record's pid.
record_wait() {
	_name=$1
	shift
	rm -f "$_name.fifo" "$_name.out"
	mkfifo "$_name.fifo"
	ms-record -q "$@" -o "$_name.ndjson" "$OUT/marks" wait <"$_name.fifo" >"$_name.out" 2>"$_name.err" &
	MPID=$!
	_bg_pids="$_bg_pids $MPID"
	exec 7>"$_name.fifo"
}
record_wait s
wait_for_line s.out "marks: phase 1"
PID=$(pgrep -P "$MPID" -x marks)
check_status "ms-snap --mark warm" 0 ms-snap -p "$PID" --mark warm -o snap-warm.ndjson
check_eq "  the live record says the mark" warm "$(jq -r 'select(.type=="live" and .mark) | .mark' snap-warm.ndjson)"
check_eq "ms-top --batch: the recording's last mark" "warm 1" \
	"$(ms-top --batch -n 1 -p "$PID" | jq -r 'select(.mark) | "\(.mark) \(.marks)"')"
echo >&7
wait_for_line s.out "marks: phase 2"
check_status "ms-snap --leaks between the marks" 0 ms-snap -p "$PID" --leaks -o live-leaks.ndjson
# Then: leak_between's 20 blocks, the last still pointed to.
check_eq "  its leaks since warm: 19 lost, 1 reachable" "19 3800 200" \
	"$(ms-report --json --since warm live-leaks.ndjson | jq -r '"\(.summary.leaked_blocks) \(.summary.leaked_bytes) \(.summary.reachable_bytes)"')"
# ms-snap --since: the recorder takes the range by each block's time.
check_status "ms-snap --since warm: the live blocks allocated since" 0 ms-snap -p "$PID" --since warm -o since.ndjson
check_eq "  leak_between's 20, not yet scanned" "20 4000 unscanned" \
	"$(jq -s -r '[.[] | select(.type=="leak")] | "\(map(.count) | add) \(map(.bytes) | add) \(map(.kind) | unique | join(","))"' since.ndjson)"
check_status "ms-snap --leaks --since warm: the leaks since" 0 ms-snap -p "$PID" --leaks --since warm -o lsince.ndjson
check_eq "  19 lost, 1 reachable" "definitely 19|reachable 1" \
	"$(jq -r 'select(.type=="leak") | "\(.kind) \(.count)"' lsince.ndjson | sort | paste -sd'|')"
check_status "ms-snap --since a mark not there: exit 2" 2 ms-snap -p "$PID" --since nope -o /dev/null
check_fgrep "  said" "no mark named 'nope' in this recording" "$OUT/last.err"
check_status "ms-snap --mark done" 0 ms-snap -p "$PID" --mark done -o /dev/null
echo >&7
exec 7>&-
wait_gone "$MPID"
check_eq "marks from outside: by ms-snap" "warm ms-snap|done ms-snap" \
	"$(jq -r 'select(.type=="mark" and .by!="ms-record") | "\(.name) \(.by)"' s.ndjson | paste -sd'|')"
check_eq "  each range exactly" "$EXPECT" "$(ranges s.ndjson warm done)"
# (with stdio's buffers by then: the program had written and read a line)
check_eq "  --live-at of a mark from outside: leak_before's 1,000 bytes, and all the heap" "1000 true" \
	"$(ms-report --json --live-at warm s.ndjson | jq -r '"\([.top.live_at[] | select(.stack[0].fn == "leak_before") | .live_at] | add) \(.live_at.heap == ([.top.live_at[].live_at] | add))"')"

# --- marks by a signal to ms-record ------------------------------------------------
record_wait g --mark-signal USR2
wait_for_line g.out "marks: phase 1"
kill -USR2 "$MPID"
# The mark is in once the recording says so (it is written at once).
wait_for_line g.ndjson '"name":"USR2.1"'
echo >&7
wait_for_line g.out "marks: phase 2"
kill -USR2 "$MPID"
wait_for_line g.ndjson '"name":"USR2.2"'
echo >&7
exec 7>&-
wait_gone "$MPID"
check_eq "--mark-signal USR2: the program ran on, exit 0" "marks: done" "$(tail -1 g.out)"
check_eq "  two marks, by signal" "USR2.1 signal|USR2.2 signal" \
	"$(jq -r 'select(.type=="mark" and .by!="ms-record") | "\(.name) \(.by)"' g.ndjson | paste -sd'|')"
check_eq "  each range exactly" "$EXPECT" "$(ranges g.ndjson USR2.1 USR2.2)"

# --- bad use --------------------------------------------------------------------------
check_status "--mark-signal INT: refused" 2 ms-record --mark-signal INT true
check_status "ms-snap --mark of a process nobody records: exit 2" 2 ms-snap -p $$ --mark x -o /dev/null
check_fgrep "  said" "is not being recorded: --mark marks a process ms-record records" "$OUT/last.err"
check_status "ms-snap --mark with a name too long: usage" 2 ms-snap -p $$ --mark "$(printf '%040d' 0)"
finish
