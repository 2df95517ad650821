#!/bin/sh
# The end record of a recording carries every figure of ms-report's
# summary: leaked, definitely and indirectly lost, possibly lost, still
# reachable, unscanned, live at the end of an attach (fate unknown), each in
# bytes and blocks.  Known answers from examples/leaky, examples/threads and
# examples/ticker; ms-report --json's summary and the text summary must say
# what the end record says.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

KINDS="definitely indirectly possibly reachable unscanned unknown"

# end_kinds REC: "kind bytes blocks" for each kind, from the end record.
end_kinds() {
	for k in $KINDS; do
		jq -r --arg k "$k" 'select(.type == "end") | "\($k) \(.[$k + "_bytes"]) \(.[$k + "_blocks"])"' "$1"
	done | tr '\n' ';'
}

# same_as_end REC WHAT: every member of ms-report --json's summary that the
# end record has too is the end record's ("duration" is its ts).
same_as_end() {
	ms-report --json "$1" >"$1.json"
	check_eq "$2: ms-report --json exit status" 0 $?
	jq -n -r --slurpfile recs "$1" --slurpfile rep "$1.json" '
		($recs | map(select(.type == "end")) | .[0] | .duration = .ts) as $e
		| [$rep[0].summary | to_entries[] | . as $x | select($e | has($x.key))] as $shared
		| "\($shared | length) shared",
		  ($shared[] | select($e[.key] != .value) | "\(.key): summary \(.value), end \($e[.key])")' \
		>"$1.cmp"
	check_range "$2: figures the summary and the end record share" 15 30 "$(head -n 1 "$1.cmp" | cut -d' ' -f1)"
	check_eq "$2: --json summary = end record" "" "$(sed 1d "$1.cmp")"
	check_eq "$2: the summary has every kind, in bytes" "6" "$(jq -r '.summary as $s
		| [("definitely indirectly possibly reachable unscanned unknown" | split(" "))[]
		   | select($s[. + "_bytes"] != null)] | length' "$1.json")"
}

# commas N: 1234567 as 1,234,567 (as the text report prints it)
commas() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'; }

# text_row REC LABEL FIGURE: the text summary has the row "LABEL  FIGURE B".
text_row() {
	ms-report --sections summary "$1" >"$1.txt"
	check_egrep "$1: text summary: $2 $(commas "$3") B" "^ +$2 +$(commas "$3") B( |\$)" "$1.txt"
}

# --- leaky: everything definitely lost --------------------------------------
ms-record -q -o leaky.ndjson "$EX/leaky" >/dev/null 2>&1
check_eq "leaky: the end record by kind (bytes blocks)" \
	"definitely 89609 1020;indirectly 0 0;possibly 0 0;reachable 0 0;unscanned 0 0;unknown 0 0;" \
	"$(end_kinds leaky.ndjson)"
check_eq "leaky: leaked = definitely + indirectly" "89609 1020 true" \
	"$(jq -r 'select(.type == "end") | "\(.leaked_bytes) \(.leaked_blocks) \(.scanned)"' leaky.ndjson)"
check_eq "leaky: the leak records add up to the end record, kind by kind" \
	"$(jq -r 'select(.type == "end") | "\(.definitely_bytes) \(.definitely_blocks)"' leaky.ndjson)" \
	"$(jq -s -r '[.[] | select(.type == "leak" and .kind == "definitely")] | "\(map(.bytes) | add) \(map(.count) | add)"' leaky.ndjson)"
same_as_end leaky.ndjson leaky
text_row leaky.ndjson leaked 89609
text_row leaky.ndjson definitely 89609
text_row leaky.ndjson indirectly 0

# --- threads: definitely and indirectly lost --------------------------------
# Per consumer, the list head is definitely lost and its 39 other blocks
# indirectly (examples/threads.c): 4 x 16 B, and 4,800 - 64 B in 156 blocks.
ms-record -q -o threads.ndjson "$EX/threads" 4 20000 >/dev/null 2>&1
check_eq "threads: definitely and indirectly lost (bytes blocks)" "64 4 4736 156 4800 160" \
	"$(jq -r 'select(.type == "end") | "\(.definitely_bytes) \(.definitely_blocks) \(.indirectly_bytes) \(.indirectly_blocks) \(.leaked_bytes) \(.leaked_blocks)"' threads.ndjson)"
check_eq "threads: every kind adds up to what is live at the end" \
	"$(jq -r 'select(.type == "end") | "\(.live_bytes) \(.live)"' threads.ndjson)" \
	"$(jq -r 'select(.type == "end") | [.definitely_bytes, .indirectly_bytes, .possibly_bytes, .reachable_bytes, .unscanned_bytes, .unknown_bytes] as $b
		| [.definitely_blocks, .indirectly_blocks, .possibly_blocks, .reachable_blocks, .unscanned_blocks, .unknown_blocks] as $n
		| "\($b | add) \($n | add)"' threads.ndjson)"
check_eq "threads: the leak records add up to the end record, kind by kind" \
	"$(for k in $KINDS; do jq -r --arg k "$k" 'select(.type == "end") | "\(.[$k + "_bytes"]) \(.[$k + "_blocks"])"' threads.ndjson; done | tr '\n' ' ')" \
	"$(for k in $KINDS; do jq -s -r --arg k "$k" '[.[] | select(.type == "leak" and .kind == $k)] | "\(map(.bytes) | add // 0) \(map(.count) | add // 0)"' threads.ndjson; done | tr '\n' ' ')"
same_as_end threads.ndjson threads
text_row threads.ndjson definitely 64
text_row threads.ndjson indirectly 4736
text_row threads.ndjson "still reachable" "$(jq -r 'select(.type == "end") | .reachable_bytes' threads.ndjson)"

# --- --no-scan: what is live at the end is unscanned -------------------------
ms-record -q --no-scan -o noscan.ndjson "$EX/leaky" >/dev/null 2>&1
check_eq "--no-scan: the end record by kind (bytes blocks)" \
	"definitely 0 0;indirectly 0 0;possibly 0 0;reachable 0 0;unscanned 89609 1020;unknown 0 0;" \
	"$(end_kinds noscan.ndjson)"
check_eq "--no-scan: counted as leaked, not scanned" "89609 1020 false" \
	"$(jq -r 'select(.type == "end") | "\(.leaked_bytes) \(.leaked_blocks) \(.scanned)"' noscan.ndjson)"
same_as_end noscan.ndjson --no-scan
text_row noscan.ndjson unscanned 89609

# --- attach: what is live at detach has a fate nobody knows ----------------
# ticker, attached for a second: every tick's 1000 B cache entry stays; of
# the 64 B messages, the last 50 are live at detach (each is freed 50 ticks
# after it was made).
"$EX/ticker" 10 >ticker.log 2>&1 &
TP=$!
_bg_pids="$_bg_pids $TP"
sleep 0.7
check_status "attach for a second" 0 ms-record -q -p $TP --duration 1s -o attach.ndjson
kill $TP
n=$(v1 attach.ndjson | jq -s '[.[] | select(.type == "stack" and .frames[0].fn == "cache_add") | .id] as $ids
	| [.[] | select(.type == "site" and (.stack as $s | $ids | index($s)))] | map(.allocs) | add')
check_range "attach: ticks recorded" 50 150 "${n:-0}"
check_eq "attach: live at detach, fate unknown (bytes blocks)" "$((n * 1000 + 50 * 64)) $((n + 50))" \
	"$(jq -r 'select(.type == "end") | "\(.unknown_bytes) \(.unknown_blocks)"' attach.ndjson)"
check_eq "attach: nothing leaked, nothing scanned" "0 0 0 0 false" \
	"$(jq -r 'select(.type == "end") | "\(.leaked_bytes) \(.leaked_blocks) \(.definitely_bytes) \(.reachable_bytes) \(.scanned)"' attach.ndjson)"
same_as_end attach.ndjson attach
ms-report --sections summary attach.ndjson >attach.txt
check_egrep "attach: text summary: live at the end" \
	"^ +live at the end +$(commas $((n * 1000 + 50 * 64))) B +in $((n + 50)) blocks \(fate unknown\)\$" attach.txt

# Anonymous mmaps are their own figures: not in the malloc family's
# allocations, frees and bytes (as memcheck and heaptrack count them).
ms-record -q -o "$OUT/hog.ndjson" "$EX/memhog" 8 >"$OUT/hog.log" 2>&1 &
rec=$!
if wait_for_line "$OUT/hog.log" "^ready "; then
	hog=$(sed -n 's/^ready //p' "$OUT/hog.log")
	kill -USR1 "$hog"
	wait_for_line "$OUT/hog.log" "^grown 8"
	kill -TERM "$hog"
fi
wait $rec
H="$OUT/hog.ndjson"
check_eq "memhog 8: one mmap of 8 MiB, apart" "1 8388608" \
	"$(jq -r 'select(.type=="end") | "\(.mmaps) \(.mmap_bytes)"' "$H")"
check_eq "memhog 8: allocs and bytes are the malloc family's sites' sum" \
	"$(jq -s -r '[.[] | select(.type=="site" and .fn != "mmap")] | "\(map(.allocs) | add) \(map(.bytes) | add)"' "$H")" \
	"$(jq -r 'select(.type=="end") | "\(.allocs) \(.bytes)"' "$H")"
check_eq "memhog 8: the mmap site itself" "1 8388608" \
	"$(jq -r 'select(.type=="site" and .fn=="mmap") | "\(.allocs) \(.bytes)"' "$H")"
ms-report --sections summary "$H" >hog.txt
check_egrep "memhog 8: text summary: mmaps on their own row" \
	"^ +anonymous mmaps +1 +\(8\.0 MiB; not in the allocations\)\$" hog.txt
check_egrep "memhog 8: text summary: allocations without it" \
	"^ +allocations +$(jq -r 'select(.type=="end") | .allocs' "$H") " hog.txt
check_eq "memhog 8: --json summary" "$(jq -r 'select(.type=="end") | "\(.allocs) 1 8388608"' "$H")" \
	"$(ms-report --json "$H" | jq -r '.summary | "\(.allocs) \(.mmaps) \(.mmap_bytes)"')"

# The page-level view (examples/pages.c's known answer): the heap's peak
# (1 MiB) against what the program mapped itself, an 8 MiB mmap and a
# 256 KiB sbrk at once (8.25 MiB), 4 MiB + 192 KiB of it mapped at the end
# after a partial munmap and an sbrk(-64 KiB); brk growth is a site of its
# own, apart from the allocations like mmaps.
check_eq "pages runs as it does alone" "pages: done" "$(ms-record -q -o "$OUT/pages.ndjson" "$EX/pages")"
P="$OUT/pages.ndjson"
check_eq "pages: heap peak, mapped peak, mapped at the end" "1048576 8650752 4390912" \
	"$(jq -r 'select(.type=="end") | "\(.heap_peak) \(.mapped_peak) \(.mapped)"' "$P")"
check_eq "pages: peak is both at once" "9699328" "$(jq -r 'select(.type=="end") | .peak' "$P")"
check_eq "pages: mmaps and brks apart from the allocations" "1 1048576 1 8388608 1 262144" \
	"$(jq -r 'select(.type=="end") | "\(.allocs) \(.bytes) \(.mmaps) \(.mmap_bytes) \(.brks) \(.brk_bytes)"' "$P")"
check_eq "pages: sites (fn size bytes live_bytes)" \
	"$(printf '%s\n' "brk 262144 262144 196608" "malloc 1048576 1048576 1048576" "mmap 8388608 8388608 4194304")" \
	"$(jq -r 'select(.type=="site") | "\(.fn) \(.size) \(.bytes) \(.live_bytes)"' "$P" | sort)"
check_eq "pages: the brk site is main's sbrk call" "main pages.c:$(grep -n '= sbrk(256' "$TOP/examples/pages.c" | cut -d: -f1)" \
	"$(v1 "$P" | jq -r -s '(map(select(.type=="site" and .fn=="brk"))[0].stack) as $s
		| .[] | select(.type=="stack" and .id==$s) | .frames[0] | "\(.fn) \(.file | split("/") | last):\(.line)"')"
check_eq "pages: every region still reachable from the globals" "brk reachable 196608
malloc reachable 1048576
mmap reachable 4194304" "$(jq -r 'select(.type=="leak") | "\(.fn) \(.kind) \(.bytes)"' "$P" | sort)"
rss=$(jq -r 'select(.type=="end") | .hwm' "$P")
check_range "pages: peak rss holds heap and mappings" 9699328 100000000 "$rss"
ms-report --sections summary "$P" >pages.txt
check_egrep "pages: text: brk growth row" "^ +brk growth +1 +\(256\.0 KiB; not in the allocations\)\$" pages.txt
check_egrep "pages: text: peak heap row" "^ +peak heap +1\.0 MiB +at [0-9.]+ s\$" pages.txt
check_egrep "pages: text: peak mapped row" "^ +peak mapped +8\.2 MiB +at [0-9.]+ s \(anonymous mmaps and brk\)\$" pages.txt
check_egrep "pages: text: peak rss row" "^ +peak rss +[0-9.]+ MiB +\(process or a waited-for child\)$" pages.txt
check_eq "pages: --json summary" "1048576 8650752 4390912 $rss 1 262144" \
	"$(ms-report --json "$P" | jq -r '.summary | "\(.heap_peak) \(.mapped_peak) \(.mapped) \(.rss_peak) \(.brks) \(.brk_bytes)"')"
# An --events stream, aggregated again by ms-filter and ms-report: the same.
ms-record -q --events -o "$OUT/pages-ev.ndjson" "$EX/pages" >/dev/null
check_eq "pages --events through ms-filter: the same figures" "1 262144 1 8388608 8650752" \
	"$(ms-filter --min 1 "$OUT/pages-ev.ndjson" | ms-report --json | jq -r '.summary | "\(.brks) \(.brk_bytes) \(.mmaps) \(.mmap_bytes) \(.mapped_peak)"')"

finish
