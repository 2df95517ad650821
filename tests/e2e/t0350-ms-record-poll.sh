#!/bin/sh
# ms-record -p PID --poll: /proc only, nothing loaded into the process.
# Known answer from examples/memhog: on SIGUSR1 it maps and touches exactly
# MIB MiB of anonymous memory, so the [anon] group's rss and the samples'
# rss grow by that much between a sample before and one after "grown".
. "$(dirname "$0")/lib.sh"

jqr() { jq -r "select(.type == \"$2\") | $3" "$1"; }
MIB=16
GROWTH=$((MIB * 1048576))
# A few pages of slack: the kernel's page tables and the stack move too.
SLACK=$((64 * 1024))

start_memhog hog $MIB || finish
ms-record -p $HOG_PID --poll -i 50 -o "$OUT/p.ndjson" 2>"$OUT/p.err" &
REC=$!
_bg_pids="$_bg_pids $REC"
sleep 0.5
kill -USR1 $HOG_PID
wait_for_line "$OUT/hog.log" "^grown $MIB\$"
sleep 0.5
kill -INT $REC
wait $REC
check_eq "ms-record --poll exits 0 when interrupted" 0 $?
check_eq "mode" poll "$(jqr "$OUT/p.ndjson" header .mode)"
check_eq "header pid" $HOG_PID "$(jqr "$OUT/p.ndjson" header .pid)"
check_eq "header argv" "$EX/memhog $MIB" "$(jqr "$OUT/p.ndjson" header '.argv | join(" ")')"
check_eq "end reason" detached "$(jqr "$OUT/p.ndjson" end .reason)"
n=$(jqr "$OUT/p.ndjson" sample .ts | wc -l)
check_range "samples every 50 ms for about 1 s" 10 40 "$n"
check_eq "end counts the samples" "$n" "$(jqr "$OUT/p.ndjson" end .samples)"
check_eq "samples in time order" "$(jqr "$OUT/p.ndjson" sample .ts)" \
	"$(jqr "$OUT/p.ndjson" sample .ts | sort -n)"
first=$(jqr "$OUT/p.ndjson" sample .rss | head -1)
last=$(jqr "$OUT/p.ndjson" sample .rss | tail -1)
check_range "rss grew by $MIB MiB" $GROWTH $((GROWTH + SLACK)) $((last - first))
check_eq "end: first rss" "$first" "$(jqr "$OUT/p.ndjson" end .rss_first)"
check_eq "end: last rss" "$last" "$(jqr "$OUT/p.ndjson" end .rss)"
check_eq "end: peak rss" "$(jqr "$OUT/p.ndjson" sample .rss | sort -n | tail -1)" \
	"$(jqr "$OUT/p.ndjson" end .rss_peak)"
a0=$(jq -r 'select(.type == "mapping" and .name == "[anon]") | .rss' "$OUT/p.ndjson" | head -1)
a1=$(jq -r 'select(.type == "mapping" and .name == "[anon]") | .rss' "$OUT/p.ndjson" | tail -1)
check_range "[anon] grew by $MIB MiB" $GROWTH $((GROWTH + SLACK)) $((a1 - a0))
# A group is written again only when its figures changed (libc's rss may:
# a code path run for the first time maps more of its pages): no record
# repeats its group's last figures, and some groups never change.
check_eq "a group is written again only with new figures" 0 \
	"$(jq -s '[.[] | select(.type == "mapping")] | group_by(.name)
		| map([.[] | [.size, .rss, .swap, .private_dirty, .anonymous]] as $v
		      | [range(1; $v | length) | select($v[.] == $v[. - 1])] | length) | add' "$OUT/p.ndjson")"
check_range "unchanged groups are written once" 1 100 \
	"$(jq -s '[.[] | select(.type == "mapping")] | group_by(.name) | map(select(length == 1)) | length' "$OUT/p.ndjson")"
check_eq "every mapping record has a time" 0 \
	"$(jq -r 'select(.type == "mapping" and .ts == null) | .name' "$OUT/p.ndjson" | wc -l)"
check_grep "summary names the growth" "grew most: \[anon\] +16" "$OUT/p.err"
# Nothing was loaded into it, and it goes on.
check_nogrep "libmemscope not in the process" libmemscope "/proc/$HOG_PID/maps"
kill -USR1 $HOG_PID
i=0
while [ "$(grep -c "^grown $MIB" "$OUT/hog.log")" -lt 2 ] && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
check_eq "memhog still answers" 2 "$(grep -c "^grown $MIB" "$OUT/hog.log")"

# ms-report reads it: rss timeline and growth by mapping.
check_status "ms-report on a poll recording" 0 ms-report "$OUT/p.ndjson"
check_egrep "report: rss change" "rss .*\+16\.[0-9] MiB" "$OUT/last.out"
check_egrep "report: [anon] first in growth" "^  \[anon\] +anon " "$OUT/last.out"
check_nogrep "report: no allocation figures" "leaked|allocations" "$OUT/last.out"

# The process ends while polled: end reason exit, status 0.
kill -TERM $HOG_PID
start_memhog hog2 1 || finish
( sleep 0.4; kill -TERM $HOG_PID ) &
check_status "poll until the process ends" 0 ms-record -p $HOG_PID --poll -i 50 -o "$OUT/gone.ndjson"
check_eq "end reason when it ended" exit "$(jqr "$OUT/gone.ndjson" end .reason)"
check_grep "summary says it ended" "the process ended" "$OUT/last.err"

# --duration
start_memhog hog3 1 || finish
check_status "--duration" 0 ms-record -p $HOG_PID --poll -i 100 --duration 0.5s -o "$OUT/d.ndjson"
check_range "--duration 0.5s at 100 ms: 5 or 6 samples" 5 7 "$(jqr "$OUT/d.ndjson" sample .ts | wc -l)"

# A static binary cannot be injected into, but can be polled.
printf '#include <unistd.h>\nint main(void) { for (;;) pause(); }\n' >"$OUT/st.c"
if cc -static -o "$OUT/static" "$OUT/st.c" 2>/dev/null; then
	"$OUT/static" &
	ST=$!
	_bg_pids="$_bg_pids $ST"
	check_status "static binary polled" 0 ms-record -p $ST --poll -i 50 --duration 0.2s -o "$OUT/st.ndjson"
	check_range "static binary: samples" 3 6 "$(jqr "$OUT/st.ndjson" sample .ts | wc -l)"
else
	not_ok "cannot build a static test program"
fi

# Refusals: exit 2, one line.
check_status "no such process" 2 ms-record -p 999999 --poll -o "$OUT/none.ndjson"
check_one_line_error "no such process: one line" "$OUT/last.err"
check_grep "no such process: message" "pid 999999: no such process" "$OUT/last.err"
check_status "--poll without -p" 2 ms-record --poll /bin/true
check_status "--poll with --events" 2 ms-record -p $HOG_PID --poll --events
check_status "--poll with -i 0" 2 ms-record -p $HOG_PID --poll -i 0
if [ "$(id -u)" = 0 ]; then
	check_status "pid 1 as nobody" 2 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TOP/tools/ms-record" -p 1 --poll -o /dev/null
	check_one_line_error "pid 1 as nobody: one line" "$OUT/last.err"
	check_grep "pid 1 as nobody: message" "another user" "$OUT/last.err"
fi
finish
