#!/bin/sh
# zstd: -o FILE.zst compresses (ms-record, ms-filter, ms-diff, ms-snap) into
# files zstd(1) reads, and every tool reads compressed input, files and
# pipes, as the stream it decompresses to.  Compressed data cut short or
# corrupt is one line on stderr and exit 2, after what could be read.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

magic() { od -A n -N 4 -t x1 "$1" | tr -d ' \n'; }

# --- (c) round trips ------------------------------------------------------------
check_status "ms-record -o x.zst" 0 ms-record -q -o x.zst "$EX/leaky"
check_eq "x.zst starts with the zstd magic number" 28b52ffd "$(magic x.zst)"
check_status "zstd -t x.zst: a valid zstd file" 0 zstd -q -t x.zst
zstd -q -d -c x.zst >x.ndjson
check_eq "decompressed: a valid stream" "" "$(valid_stream x.ndjson)"
check_eq "decompressed: the known leaks" "89609 1020" \
	"$(jq -r 'select(.type == "end") | "\(.leaked_bytes) \(.leaked_blocks)"' x.ndjson)"
ms-report x.ndjson >plain.txt
check_status "ms-report x.zst" 0 ms-report x.zst
check_eq "ms-report x.zst: the report of the records" "$(cat plain.txt)" "$(cat "$OUT/last.out")"
check_eq "zstd -dc x.zst | ms-report" "$(cat plain.txt)" "$(zstd -q -d -c x.zst | ms-report)"
check_eq "cat x.zst | ms-report (a pipe)" "$(cat plain.txt)" "$(cat x.zst | ms-report)"
# ms-report -o FILE.zst: the report itself, compressed
check_status "ms-report -o report.txt.zst" 0 ms-report -o report.txt.zst x.ndjson
check_eq "ms-report -o report.txt.zst: zstd, the same report" "$(cat plain.txt)" "$(zstd -q -d -c report.txt.zst)"
check_status "ms-report --html -o page.html.zst" 0 ms-report --html -o page.html.zst x.ndjson
check_eq "ms-report --html -o page.html.zst: the page" "$(ms-report --html x.ndjson | md5sum)" \
	"$(zstd -q -d -c page.html.zst | md5sum)"
check_eq "ms-report - < x.zst" "$(cat plain.txt)" "$(ms-report - <x.zst)"
for fmt in md json collapsed; do
	check_eq "ms-report --$fmt x.zst" "$(ms-report --$fmt x.ndjson)" "$(ms-report --$fmt x.zst)"
done
check_status "ms-filter -o y.zst" 0 ms-filter --min 64 -o y.zst x.zst
check_eq "y.zst is zstd" 28b52ffd "$(magic y.zst)"
check_eq "ms-filter -o y.zst: the same records as uncompressed" \
	"$(ms-filter --min 64 x.ndjson | md5sum)" "$(zstd -q -d -c y.zst | md5sum)"
check_eq "ms-filter of x.zst, of a pipe, of the records: the same" \
	"$(ms-filter x.ndjson | md5sum) $(ms-filter x.ndjson | md5sum)" \
	"$(ms-filter x.zst | md5sum) $(cat x.zst | ms-filter | md5sum)"
check_eq "ms-filter --expand of x.zst" "$(ms-filter --expand x.ndjson | md5sum)" \
	"$(ms-filter --expand x.zst | md5sum)"
check_eq "ms-report y.zst: the filtered report" "$(ms-report --md y.zst)" \
	"$(ms-filter --min 64 x.ndjson | ms-report --md)"
check_status "ms-diff -o d.zst" 0 ms-diff --unchanged -o d.zst x.zst y.zst
check_eq "d.zst is zstd" 28b52ffd "$(magic d.zst)"
check_eq "ms-diff -o d.zst: its deltas" \
	"$(ms-diff --unchanged x.ndjson y.zst | jq -c 'select(.type == "delta")')" \
	"$(zstd -q -d -c d.zst | jq -c 'select(.type == "delta")')"
check_status "ms-diff --text -o t.zst" 0 ms-diff --text -o t.zst x.zst y.zst
check_eq "ms-diff --text -o t.zst: the report, compressed" "$(ms-diff --text x.zst y.zst)" \
	"$(zstd -q -d -c t.zst)"
check_status "ms-snap -o s.zst" 0 ms-snap -p $$ -o s.zst
check_eq "s.zst is zstd" 28b52ffd "$(magic s.zst)"
check_eq "ms-snap -o s.zst: a snapshot of the shell" "header ms-snap process $$" \
	"$(zstd -q -d -c s.zst | jq -r -s '"\(.[0].type) \(.[0].tool) \(.[1].type) \(.[1].pid)"')"
check_status "ms-diff of two compressed snapshots" 0 ms-diff s.zst s.zst
# zstd(1)'s own files, one frame or several in a row.
zstd -q -c x.ndjson >cli.zst
check_eq "a file zstd(1) compressed" "$(cat plain.txt)" "$(ms-report cli.zst)"
n=$(wc -l <x.ndjson)
{ head -n $((n / 2)) x.ndjson | zstd -q -c; tail -n +$((n / 2 + 1)) x.ndjson | zstd -q -c; } >two.zst
check_eq "two zstd frames in a row" "$(cat plain.txt)" "$(ms-report two.zst)"
# An --events stream: large, compressed as it is written.
check_status "ms-record --events -o ev.zst" 0 ms-record -q -e -o ev.zst "$EX/leaky"
zstd -q -d -c ev.zst >ev.ndjson
check_eq "ev.zst: every event" 601025 "$(grep -c '"type":"alloc"' ev.ndjson)"
check_range "ev.zst: a tenth of the records' size or less" 1 $(($(wc -c <ev.ndjson) / 10)) "$(wc -c <ev.zst)"
check_eq "ev.zst: the same report" "$(ms-report ev.ndjson)" "$(ms-report ev.zst)"

# --- (d) cut short, corrupt --------------------------------------------------------
size=$(wc -c <ev.zst)
head -c $((size / 2)) ev.zst >cut.zst
# What zstd(1) can decompress of it: the whole lines are what we read.
lines=$(zstd -q -d -c cut.zst 2>/dev/null | wc -l)
check_range "cut.zst: half of it decompresses" 100000 1000000 "$lines"
check_status "ms-report cut.zst" 2 ms-report cut.zst
check_one_line_error "ms-report cut.zst" "$OUT/last.err"
check_eq "ms-report cut.zst: says so" \
	"ms-report: cut.zst: compressed data cut short: the zstd stream ends inside a frame (after line $lines)" \
	"$(cat "$OUT/last.err")"
check_grep "ms-report cut.zst: reports what was read" "^memscope report: .*leaky" "$OUT/last.out"
check_grep "ms-report cut.zst: as cut short" "THE STREAM WAS CUT SHORT" "$OUT/last.out"
check_eq "ms-report cut.zst: the allocations read" \
	"$(zstd -q -d -c cut.zst 2>/dev/null | head -n "$lines" | ms-report --json 2>/dev/null | jq .summary.allocs)" \
	"$(ms-report --json cut.zst 2>/dev/null | jq .summary.allocs)"
check_status "cat cut.zst | ms-report" 2 sh -c 'cat cut.zst | ms-report'
check_eq "a pipe cut short: the same line" \
	"ms-report: -: compressed data cut short: the zstd stream ends inside a frame (after line $lines)" \
	"$(cat "$OUT/last.err")"
check_status "ms-filter cut.zst" 2 ms-filter cut.zst
check_one_line_error "ms-filter cut.zst" "$OUT/last.err"
check_eq "ms-filter cut.zst: the records read passed" \
	"$(zstd -q -d -c cut.zst 2>/dev/null | head -n "$lines" | ms-filter 2>/dev/null | md5sum)" \
	"$(md5sum <"$OUT/last.out")"
check_status "ms-diff cut.zst" 2 ms-diff cut.zst x.zst
check_one_line_error "ms-diff cut.zst" "$OUT/last.err"
# Corrupt: bytes changed in the middle (the frame's checksum, or the block
# that holds them, tells), or right after the magic number.
cp ev.zst bad.zst
printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' |
	dd of=bad.zst bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
check_status "ms-report bad.zst" 2 ms-report bad.zst
check_one_line_error "ms-report bad.zst" "$OUT/last.err"
# (16 bytes of 0xff in a Huffman-coded block can also decode to garbage,
# before the checksum at the frame's end is checked: garbage that is not
# JSON, or JSON that says something impossible, such as a record naming a
# stack never defined; each error names the file and line, and the data in
# the middle, which differs from one recording to the next, decides which)
check_egrep "ms-report bad.zst: says so" \
	"^ms-report: bad.zst(: corrupt zstd data: .* \(after line [0-9]+\)|:[0-9]+: .+)$" "$OUT/last.err"
check_grep "ms-report bad.zst: reports what was read" "^memscope report: .*leaky" "$OUT/last.out"
# The frame's checksum changed: all of it decodes, the checksum tells.
cp ev.zst badsum.zst
printf '\377\377\377\377' | dd of=badsum.zst bs=1 seek=$((size - 4)) conv=notrunc 2>/dev/null
check_status "ms-report badsum.zst" 2 ms-report badsum.zst
check_egrep "ms-report badsum.zst: corrupt zstd data" \
	"^ms-report: badsum.zst: corrupt zstd data: .* \(after line [0-9]+\)$" "$OUT/last.err"
check_status "ms-filter bad.zst" 2 ms-filter bad.zst
check_one_line_error "ms-filter bad.zst" "$OUT/last.err"
{ printf '\050\265\057\375'; head -c 200 /dev/zero | tr '\0' '\377'; } >junk.zst
check_status "ms-report junk.zst" 2 ms-report junk.zst
check_eq "junk.zst: one line" "ms-report: junk.zst: corrupt zstd data: Unsupported frame parameter (before any record)" \
	"$(cat "$OUT/last.err")"
printf '\050\265\057\375\377\377' >short.zst
check_status "ms-report short.zst" 2 ms-report short.zst
check_eq "short.zst: one line" \
	"ms-report: short.zst: compressed data cut short: the zstd stream ends inside a frame (before any record)" \
	"$(cat "$OUT/last.err")"
# A recording killed: what was flushed (every sample) reads back.
ms-record -q -o killed.zst "$EX/ticker" 5 >/dev/null 2>&1 &
rec=$!
_bg_pids="$_bg_pids $rec"
sleep 1
tk=$(pgrep -P $rec ticker | head -1)
kill -KILL $rec
wait $rec 2>/dev/null
[ -n "$tk" ] && kill "$tk" 2>/dev/null
check_status "ms-report of a killed recording" 2 ms-report killed.zst
check_one_line_error "killed: one line" "$OUT/last.err"
check_grep "killed: cut short" "killed.zst: compressed data cut short" "$OUT/last.err"
check_range "killed: samples were read" 3 100 "$(ms-filter --type sample killed.zst 2>/dev/null | grep -c '"type":"sample"')"
finish
