#!/bin/sh
# ms-report's pictures.  --svg: a recording that leaked nothing draws the
# heap's peak and says so; stacks cut at ms-record --depth share one
# [truncated] root, with exactly the bytes of the cut stacks; --icicle puts
# the root on top; the flame graph of a large recording (a generated one,
# 20,000 stacks, 90,000 call tree nodes) stays small.
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
cut=$(jq -s '
	(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames}) | from_entries) as $st
	| [ .[] | select(.type=="leak" and (.kind=="definitely" or .kind=="indirectly"))
	  | select(($st[(.stack|tostring)] | map(select(.inline != true)) | length) == 4
		   and ($st[(.stack|tostring)] | last | .fn) != "__libc_start_call_main")
	  | .bytes ] | add' d4.ndjson)
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
finish
