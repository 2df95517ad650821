#!/bin/sh
# One answer everywhere: the figures a recording's outputs share are the
# same in ms-record's closing line, the text, the Markdown, the HTML page
# and the JSON document, named the same; the sites at the peak add up to
# the peak the summary says they do.  examples/pages grows the heap by
# 1 MiB and maps 8.25 MiB itself (its header has the known answer), and
# leaky is a recording with leaks.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

for prog in pages leaky; do
	check_status "$prog: record" 0 ms-record -o $prog.ndjson "$EX/$prog"
	grep "^ms-record: $prog:" "$OUT/last.err" >$prog.line
	ms-report $prog.ndjson >$prog.txt
	ms-report --md $prog.ndjson >$prog.md
	ms-report --html $prog.ndjson >$prog.html
	ms-report --json --top 1000000 $prog.ndjson >$prog.json
	for name in allocations frees "peak heap" "peak mapped" "peak heap+mapped" "peak rss" leaked \
		"still reachable" "events lost"; do
		t=$(sed -n "s/^  $name  *\([0-9][0-9.,]*\( [KMGT]*i*B\)*\).*/\1/p" $prog.txt)
		m=$(sed -n "s/^| \(\*\*\)*$name\(\*\*\)* | \(\*\*\)*\([0-9][0-9.,]*\( [KMGT]*i*B\)*\).*/\4/p" $prog.md)
		h=$(sed -n "s/.*<tr[^>]*><td>$name<\/td><td class=\"n\">\([^<]*\)<.*/\1/p" $prog.html)
		check_eq "$prog: $name: Markdown = text" "$t" "$m"
		check_eq "$prog: $name: HTML = text" "$t" "$h"
	done
	# ms-record's line names the peaks as the summary does.
	for name in "peak heap" "peak mapped"; do
		t=$(sed -n "s/^  $name  *\([0-9][0-9.,]* [KMGT]*i*B\).*/\1/p" $prog.txt)
		r=$(sed -n "s/.*, $name \([0-9][0-9.,]* [KMGT]*i*B\)[,]*.*/\1/p" $prog.line)
		check_eq "$prog: $name: ms-record's line = the report's" "$t" "$r"
	done
	check_eq "$prog: the sites at the peak add up to the summary's peak" \
		"$(jq '.summary.peak' $prog.json)" "$(jq '[.top.at_peak[].at_peak] | add // 0' $prog.json)"
	check_eq "$prog: allocations: JSON = the end record's" \
		"$(jq 'select(.type == "end") | .allocs' $prog.ndjson)" "$(jq '.summary.allocs' $prog.json)"
done
# The known answers: pages's heap peaks at 1 MiB, its mappings at 8.25 MiB,
# both together at 9.25 MiB (the brk growth is still there when the heap's
# 1 MiB is), and the table of the peak says what it sums to.
check_eq "pages: the peaks" "1.0 MiB|8.2 MiB|9.2 MiB" \
	"$(for n in "peak heap" "peak mapped" "peak heap+mapped"; do sed -n "s/^  $n  *\([0-9.]* MiB\).*/\1/p" pages.txt; done | paste -sd'|')"
check_eq "pages: the flame graph's total is the summary's peak (nothing leaked)" "$(jq .summary.peak pages.json)" \
	"$(ms-report --svg pages.ndjson | grep -o 'data-total="[0-9]*"' | head -1 | tr -dc 0-9)"
check_eq "pages: JSON peaks in bytes" "1048576 8650752 9699328" \
	"$(jq -r '"\(.summary.heap_peak) \(.summary.mapped_peak) \(.summary.peak)"' pages.json)"
check_fgrep "pages: the peak's table says what it sums to" \
	"  what was live when heap+mapped peaked: 9.2 MiB at" pages.txt
check_fgrep "leaky: heap only: the heap's peak" "  what was live when the heap peaked: " leaky.txt
check_nogrep "leaky: no mapped peak, no row for both" "peak heap\+mapped" leaky.txt
# The page's heap chart of a recording without --events: by site from the
# recording's timeline, the rest of the heap, and above it what the
# program mapped itself; at the peak they stack to the summary's peak,
# split as it was (pages: 1 MiB of heap, 8.25 MiB mapped), no spike of the
# heap alone.
chart=$(grep -o "msChart('heapchart'[^;]*" pages.html)
echo "$chart" >chart.txt
check_fgrep "pages: html: the sites, the rest, mapped memory on top" "'all other sites','mapped (anonymous mmaps and brk)'])" chart.txt
ts=$(echo "$chart" | sed 's/^[^[]*\[\([^]]*\)\].*/[\1]/')
vals=$(echo "$chart" | sed 's/.*\[\[\(.*\)\]\].*/[[\1]]/')
# (the peak's point: the last one at its time)
at=$(echo "$ts" | jq --argjson t "$(jq .summary.peak_ts pages.json)" 'indices($t) | last')
check_eq "pages: html: the peak's point, heap and mapped" "1048576 8650752" \
	"$(echo "$vals" | jq -r --argjson i "${at:-0}" '"\(.[0:-1] | map(.[$i]) | add) \(.[-1][$i])"')"
check_eq "pages: html: no point above the peak" true \
	"$(echo "$vals" | jq --argjson p "$(jq .summary.peak pages.json)" '[transpose[] | add] | max <= $p')"

# A filter that took sites out leaves the end record's peak as it was:
# the summary says so rather than mix it with figures after the filter.
ms-filter --min 64 leaky.ndjson | ms-report >leaky-min64.txt
check_egrep "filtered: the peak is from before" "^  peak heap +[0-9.]+ KiB  at [0-9.]+ s, before filtering\$" leaky-min64.txt
check_nogrep "unfiltered: no such words" "before filtering" leaky.txt
finish
