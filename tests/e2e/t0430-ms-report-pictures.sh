#!/bin/sh
# ms-report's pictures.  --svg: a recording that leaked nothing draws the
# heap's peak and says so; stacks cut at ms-record --depth share one
# [truncated] root, with exactly the bytes of the cut stacks; --icicle puts
# the root on top; the flame graph of a large recording (a generated one,
# 20,000 stacks, 90,000 call tree nodes) stays small.  --html: one
# well-formed page that loads nothing, with the summary's exact figures,
# the leaks and their stacks, the heap over time up to the end of the run
# (from the samples, whose last is at the end), by site from the events.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

# attr FILE NAME: the first value of the attribute NAME="..." in FILE.
attr() { grep -o "$2=\"[^\"]*\"" "$1" | head -1 | sed 's/^[^"]*"//; s/"$//'; }
# cost_of SVG NAME: the cost (data-c) of the first frame named NAME.
cost_of() { grep -F "<title>$2" "$1" | grep -v -F "<title>$2 " | head -1 | sed 's/^<g data-c="\([0-9]*\)".*/\1/'; }

# --- nothing leaked: the peak ----------------------------------------------------
check_status "churn recorded" 0 ms-record -q -o churn.ndjson "$EX/churn" 0.2
check_eq "churn leaks nothing (its blocks are reachable)" 0 "$(jq 'select(.type=="end") | .leaked_bytes' churn.ndjson)"
check_status "--svg of a recording that leaked nothing" 0 ms-report --svg -o churn.svg churn.ndjson
check_status "churn.svg: well-formed" 0 xmllint --noout churn.svg
peak=$(jq 'select(.type=="end") | .peak' churn.ndjson)
check_eq "churn.svg: draws the bytes at the peak" "$peak" "$(attr churn.svg data-total)"
check_eq "churn.svg: the sites' bytes at the peak add up to it" "$peak" "$(cost_of churn.svg all)"
check_fgrep "churn.svg: says what is drawn" \
	"Nothing leaked: the width of a frame is its share of the bytes live at the heap's peak, at " churn.svg
check_egrep "churn.svg: the title gives the peak" "examples/bin/churn 0.2: [0-9.]+ KiB at the peak</text>" churn.svg
check_nogrep "churn.svg: something to show" "nothing to show" churn.svg
ms-report --svg --cost leaked churn.ndjson >churn-leaked.svg
check_fgrep "--cost leaked asked for: nothing to show" ">nothing to show<" churn-leaked.svg
check_eq "--collapsed stays with the leaked bytes" "" "$(ms-report --collapsed churn.ndjson)"

# --- stacks cut at --depth: one [truncated] root -----------------------------
check_status "leaky recorded with --depth 4" 0 ms-record -q --depth 4 -o d4.ndjson "$EX/leaky"
# The stacks of leaked blocks that have 4 frames (inlined ones apart) and
# do not begin where a program starts: what the [truncated] root holds.
cut=$(v1 d4.ndjson | jq -s '
	(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames}) | from_entries) as $st
	| [ .[] | select(.type=="leak" and (.kind=="definitely" or .kind=="indirectly"))
	  | select(($st[(.stack|tostring)] | map(select(.inline != true)) | length) == 4
		   and ($st[(.stack|tostring)] | last | .fn) != "__libc_start_call_main")
	  | .bytes ] | add')
check_range "some leaks' stacks are cut at 4 frames" 1 89609 "$cut"
check_status "--svg of the --depth 4 recording" 0 ms-report --svg -o d4.svg d4.ndjson
check_status "d4.svg: well-formed" 0 xmllint --noout d4.svg
check_eq "d4.svg: exactly one [truncated] frame" 1 "$(grep -c '<title>\[truncated\]$' d4.svg)"
check_eq "d4.svg: [truncated] is a root: on the row above 'all'" \
	"$(($(grep -A2 '<title>all$' d4.svg | grep -o 'y="[0-9]*"' | head -1 | tr -dc 0-9) - 16))" \
	"$(grep -A2 '<title>\[truncated\]$' d4.svg | grep -o 'y="[0-9]*"' | head -1 | tr -dc 0-9)"
check_eq "d4.svg: [truncated] holds the bytes of the cut stacks" "$cut" "$(cost_of d4.svg '[truncated]')"
check_eq "--collapsed: the cut stacks begin with [truncated]" "$cut" \
	"$(ms-report --collapsed d4.ndjson | awk '/^\[truncated\];/ { s += $NF } END { print s }')"
check_eq "--collapsed: no other stack does" "$(($(jq 'select(.type=="end") | .leaked_bytes' d4.ndjson) - cut))" \
	"$(ms-report --collapsed d4.ndjson | awk '!/^\[truncated\];/ { s += $NF } END { print s }')"
check_fgrep "d4.svg: the tooltip says why" "stacks cut at ms-record --depth" d4.svg
ms-record -q -o d64.ndjson "$EX/leaky" >/dev/null 2>&1
check_eq "at the default depth nothing is cut" 0 "$(ms-report --svg d64.ndjson | grep -c 'truncated')"

# --- --icicle ---------------------------------------------------------------------
check_status "--svg --icicle" 0 ms-report --svg --icicle -o icicle.svg d64.ndjson
check_eq "icicle: the root on top, below the title" 58 \
	"$(grep -A2 '<title>all$' icicle.svg | grep -o 'y="[0-9]*"' | head -1 | tr -dc 0-9)"
check_eq "icicle: main below it" "$((58 + 4 * 16))" \
	"$(grep -A2 '<title>main$' icicle.svg | grep -o 'y="[0-9]*"' | head -1 | tr -dc 0-9)"
check_eq "icicle: the same frames as the flame graph" \
	"$(ms-report --svg d64.ndjson | grep -c '^<g data-c=')" "$(grep -c '^<g data-c=' icicle.svg)"

# --- a large recording stays small ---------------------------------------------
# 20,000 stacks of 15 frames: the first 6 levels branch by 4 (the call
# tree's trunk), then 6 frames of the trunk's leaves and 3 of each stack's
# own; allocations of 1 GB / rank^1.3 bytes, so that most frames are
# narrower than a pixel.
awk 'BEGIN {
	print "{\"type\":\"header\",\"format\":\"memscope\",\"version\":1,\"tool\":\"ms-record\",\"mode\":\"launch\",\"pid\":7,\"argv\":[\"big\"],\"options\":{\"depth\":64}}"
	for (s = 1; s <= 20000; s++) {
		printf "{\"type\":\"stack\",\"id\":%d,\"frames\":[", s
		sep = ""
		for (l = 14; l >= 0; l--) {
			if (l < 6) { d = s % 4096; for (k = 6; k > l + 1; k--) d = int(d / 4); fn = "trunk_" l "_" d }
			else if (l >= 12) fn = "own_" l "_" s
			else fn = "path_" l
			printf "%s{\"fn\":\"%s\",\"file\":\"/src/big.c\",\"line\":%d,\"obj\":\"/usr/bin/big\"}", sep, fn, l + 1
			sep = ","
		}
		print "]}"
		b = int(1000000000 / (s ^ 1.3)) + 16
		printf "{\"type\":\"site\",\"pid\":7,\"stack\":%d,\"size\":16,\"fn\":\"malloc\",\"allocs\":%d,\"frees\":%d,\"bytes\":%d,\"live\":0,\"live_bytes\":0,\"at_peak\":0}\n", s, int(b / 16), int(b / 16), int(b / 16) * 16
	}
	print "{\"type\":\"end\",\"pid\":7,\"reason\":\"exit\",\"status\":0,\"ts\":1000000000}"
}' >big.ndjson
check_status "--svg of the large recording" 0 ms-report --svg --cost bytes -o big.svg big.ndjson
check_status "big.svg: well-formed" 0 xmllint --noout big.svg
check_eq "big.svg: every node counted" "$(ms-report --collapsed --cost bytes big.ndjson | awk '{ $NF = ""; n = split($0, f, ";"); p = ""; for (i = 1; i <= n; i++) { p = p ";" f[i]; if (!(p in seen)) { seen[p] = 1; c++ } } } END { print c + 1 }')" \
	"$(attr big.svg data-frames)"
check_eq "big.svg: one box per frame drawn" "$(attr big.svg data-drawn)" "$(grep -c '^<g data-c=' big.svg)"
# Measured when narrow frames were first merged: 1,130 frames drawn in
# 207,183 bytes; drawn whole, the 90,036 frames made 20.7 MB (Chromium took
# 10.9 s to show it, 1.4 s now).
check_range "big.svg: at most 1,500 frames drawn" 500 1500 "$(attr big.svg data-drawn)"
check_range "big.svg: under 300 kB" 100000 300000 "$(wc -c <big.svg)"
check_eq "big.svg: the total is every byte" \
	"$(jq -s 'map(select(.type=="site") | .bytes) | add' big.ndjson)" "$(attr big.svg data-total)"

# --- --html ------------------------------------------------------------------------
# chart_json PAGE ID: the data of the page's chart ID as [times, series, names].
chart_json() {
	grep "^msChart('$2'," "$1" | sed "s/^msChart('$2', [0-9]*, [0-9]*, [0-9]*, /[/; s/);\$/]/; s/'/\"/g"
}
R=d64.ndjson
check_status "--html" 0 ms-report --html -o leaky.html "$R"
check_eq "html: one file written, nothing else" "d4.ndjson d4.svg d64.ndjson icicle.svg leaky.html" \
	"$(ls | grep -E '^(d4|d64|icicle|leaky)' | tr '\n' ' ' | sed 's/ $//')"
check_status "html: well-formed (an XML parser reads it)" 0 xmllint --noout leaky.html
check_fgrep "html: an HTML5 page" "<!DOCTYPE html>" leaky.html
check_nogrep "html: names no address, loads nothing" 'https?:|src=|href=|<link|@import|url\(' leaky.html
check_fgrep "html: the summary's leaked total, exact" \
	'<tr class="strong"><td>leaked</td><td class="n">89,609 B</td><td>in 1,020 blocks</td></tr>' leaky.html
check_fgrep "html: the summary's allocations" \
	"<td>allocations</td><td class=\"n\">$(jq -r 'select(.type=="end") | .allocs' "$R" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')</td>" leaky.html
check_fgrep "html: the leaks heading" "<h2>Leaks: 89,609 B in 1,020 blocks</h2>" leaky.html
L_small=$(line_of "$TOP/examples/leaky.c" "char *p = malloc(48);")
check_fgrep "html: the largest leak, where it was allocated" \
	"48,000 B</span> in 1,000 blocks of 48 B from <code>malloc</code> at <code>leak_small_inner leaky.c:$L_small</code>, definitely lost" leaky.html
check_fgrep "html: its stack" "<li>leak_small_inner leaky.c:$L_small <span class=\"mod\">leaky</span></li>" leaky.html
check_eq "html: the flame graph, inline" 1 "$(grep -c '<svg class="msflame"' leaky.html)"
check_fgrep "html: the flame graph's total" "examples/bin/leaky: 87.5 KiB leaked</text>" leaky.html
# The samples and the timeline cover the run: their last point is at the
# end record's time, with its heap; the chart ends there.
end_ts=$(jq 'select(.type=="end") | .ts' "$R")
check_eq "recording: the last sample is at the end" "$end_ts" "$(jq 'select(.type=="sample") | .ts' "$R" | tail -1)"
chart_json leaky.html heapchart >heap.json
# The chart, by site from the recording's timeline: its series stack to
# the heap at each point.
check_eq "html: the heap chart ends at the end of the run, with the heap left" "$end_ts 89609" \
	"$(jq -r '"\(.[0] | last) \([.[1][] | last] | add)"' heap.json)"
check_eq "html: the heap chart has the peak" \
	"$(jq -r 'select(.type=="end") | "\(.peak_ts) \(.peak)"' "$R")" \
	"$(jq -r '.[1] | transpose | map(add) as $sum | ($sum | index($sum | max)) as $i | $i' heap.json | \
		{ read i; jq -r --argjson i "$i" '"\(.[0][$i]) \([.[1][][$i]] | add)"' heap.json; })"
check_eq "html: and every point of the timeline" \
	"$(jq 'select(.type=="timeline") | .ts | length' "$R")" "$(jq '.[0] | length - 2' heap.json)"
check_eq "html: the timeline's sites, then the rest" "all other sites" "$(jq -r '.[2] | last' heap.json)"
# By site, from the events: twosites' three sites, exactly.
check_status "twosites recorded with --events" 0 ms-record -q --events -o ts.ndjson "$EX/twosites"
check_status "--html of an --events recording" 0 ms-report --html -o ts.html ts.ndjson
check_status "ts.html: well-formed" 0 xmllint --noout ts.html
chart_json ts.html heapchart >ts.json
check_eq "ts.html: the three sites and the rest, largest first" \
	'["leak_two","leak_anon","leak_two","all"]' \
	"$(jq -c '[.[2][] | split(" ")[0] | sub("[.].*"; "")]' ts.json)"
check_eq "ts.html: at the end each holds its leaks" "640 256 192 0" \
	"$(jq -r '[.[1][] | last] | map(tostring) | join(" ")' ts.json)"
check_eq "ts.html: the chart ends at the end of the run" \
	"$(jq 'select(.type=="end") | .ts' ts.ndjson)" "$(jq '.[0] | last' ts.json)"
check_fgrep "ts.html: says where the figures come from" "from the recording's events" ts.html
finish
