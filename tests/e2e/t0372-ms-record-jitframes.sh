#!/bin/sh
# Allocations through code without unwind information (a JIT's), in threads
# whose TLS glibc frees at their join (examples/jitframes.c).  The unwinder
# falls back to libunwind there, and the loader allocates libunwind's TLS
# block for the thread inside the hook; the join frees it on the main
# thread, often at an address the program freed before.  Neither is the
# program's: no error, memcheck's totals (13 allocations, 12 frees, with
# --run-libc-freeres=no), recorded in full or sampled, and the same again
# from an --events stream read back by ms-report.
. "$(dirname "$0")/lib.sh"
SRC="$TOP/examples/jitframes.c"

# end_of REC: allocs, frees, errors, frees of unknown blocks.
end_of() {
	jq -r 'select(.type=="end") | "\(.allocs) \(.frees) \(.errors) \(.unknown_frees)"' "$1"
}

check_status "jitframes runs" 0 ms-record -q -o "$OUT/full.ndjson" "$EX/jitframes"
check_eq "its output is its own" ok "$(cat "$OUT/last.out")"
R="$OUT/full.ndjson"
check_eq "the stream is well formed" "" "$(valid_stream "$R")"
check_eq "memcheck's totals, no error" "13 12 0 0" "$(end_of "$R")"
check_eq "no error records" 0 "$(grep -c '"type":"error"' "$R")"
# Through the stub (no symbol, no line) to the thread's function.
sid=$(jq -r 'select(.type=="site" and .size==100) | .stack' "$R")
check_eq "the stub's allocations: one site of 4" "4 4" \
	"$(jq -r 'select(.type=="site" and .size==100) | "\(.allocs) \(.frees)"' "$R")"
check_eq "its stack goes on past the stub" \
	"?@?:0 < work@jitframes.c:$(line_of "$SRC" "block = stub(100, malloc);")" \
	"$(stack_of "$R" "${sid:-0}" | cut -d'<' -f1-2 | sed 's/ $//')"

check_status "with --events" 0 ms-record -q --events -o "$OUT/events.ndjson" "$EX/jitframes"
E="$OUT/events.ndjson"
check_eq "--events: the same totals" "13 12 0 0" "$(end_of "$E")"
# The loader's blocks are announced as such, by the thread that made them.
check_range "--events: hidden records" 1 16 "$(grep -c '"type":"hidden"' "$E")"
# Their frees are not the program's: only its own 12 are written.
check_eq "--events: the program's frees, no other" 12 "$(grep -c '"type":"free"' "$E")"

check_status "with --sample 1" 0 ms-record -q --sample 1 -o "$OUT/sampled.ndjson" "$EX/jitframes"
check_eq "--sample 1: the same totals" "13 12 0 0" "$(end_of "$OUT/sampled.ndjson")"
finish
