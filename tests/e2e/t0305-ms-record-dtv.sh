#!/bin/sh
# Threads' DTVs (the blocks glibc calloc's in pthread_create for their TLS
# vectors) and their TLS come out of ms-record's leak scan as Valgrind's
# memcheck classifies them, whether or not the thread ever allocated (was
# seen by the shim), and whether it still runs or was joined.
. "$(dirname "$0")/lib.sh"
SRC="$TOP/examples/dtv.c"

# leaks_at REC LINE: "count bytes kind size" of every leak record whose
# stack has a frame at dtv.c:LINE, one a line, sorted.
leaks_at() {
	v1 "$1" | jq -r -s --argjson line "$2" '
		(map(select(.type=="stack" and any(.frames[]; .line == $line and
			((.file // "") | endswith("/dtv.c"))))) | map(.id)) as $ids
		| .[] | select(.type=="leak" and (.stack as $s | $ids | index($s)))
		| "\(.count) \(.bytes) \(.kind) \(.size)"' | sort
}

check_status "dtv runs" 0 ms-record -q -o "$OUT/dtv.ndjson" "$EX/dtv"
R="$OUT/dtv.ndjson"
# The DTV's size depends on the modules with TLS loaded: the example says it.
D=$(sed -n 's/^dtv \([0-9][0-9]*\)$/\1/p' "$OUT/last.out")
check_range "dtv: its DTV size" 272 4096 "${D:-0}"
D=${D:-0}

# memcheck 3.19 (--run-libc-freeres=no --leak-check=full --show-leak-kinds=all)
# on examples/bin/dtv, whose DTVs are 288 bytes there:
#   288 bytes in 1 blocks are possibly lost      (busy_alive)
#   576 bytes in 2 blocks are possibly lost      (idle_alive)
#   864 bytes in 3 blocks are possibly lost      (busy_joined)
#   1,152 bytes in 4 blocks are possibly lost    (idle_joined)
#   24 bytes in 1 blocks are still reachable     (TLS of the running thread)
#   120 bytes in 3 blocks are still reachable    (TLS of the joined threads)
#   168 bytes in 3 blocks are definitely lost    (on the joined threads' dead stacks)
#   4,096 bytes in 1 blocks are still reachable  (stdout's buffer)
for g in "busy_alive 1" "idle_alive 2" "busy_joined 3" "idle_joined 4"; do
	set -- $g
	check_eq "$1: the DTVs of its $2 threads are possibly lost" "$2 $(($2 * D)) possibly $D" \
		"$(leaks_at "$R" "$(line_of "$SRC" "/* $1 */")")"
done
check_eq "TLS blocks of the running and the joined threads are reachable" \
	"$(printf '1 24 reachable 24\n3 120 reachable 40')" \
	"$(leaks_at "$R" "$(line_of "$SRC" "tls_block = malloc(")")"
check_eq "a pointer only on a joined thread's dead stack does not count" \
	"3 168 definitely 56" "$(leaks_at "$R" "$(line_of "$SRC" "void *volatile local = malloc(56);")")"
check_eq "nothing else leaks" "168 3 true" \
	"$(jq -r 'select(.type=="end") | "\(.leaked_bytes) \(.leaked_blocks) \(.scanned)"' "$R")"
check_eq "kinds in all" "$(printf '3 168 definitely\n10 %d possibly\n5 4240 reachable' $((10 * D)))" \
	"$(jq -s -r '[.[] | select(.type=="leak")] | group_by(.kind)
		| map("\(map(.count)|add) \(map(.bytes)|add) \(.[0].kind)") | .[]' "$R")"

# Where Valgrind is installed (make bench installs it), against memcheck
# itself: the same loss records, a DTV's bytes counted in DTVs, since the
# size differs between the two (libmemscope.so and libunwind add modules
# with TLS, memcheck's preloads do not).
if command -v valgrind >/dev/null 2>&1; then
	valgrind --run-libc-freeres=no --leak-check=full --show-leak-kinds=all \
		"$EX/dtv" >"$OUT/vg.out" 2>"$OUT/vg.err"
	V=$(sed -n 's/^dtv \([0-9][0-9]*\)$/\1/p' "$OUT/vg.out")
	# "N (D direct, I indirect) bytes in B blocks are KIND ...": D is the
	# blocks' own bytes, the figure ms-record gives.
	awk -v d="${V:-0}" '/ bytes in [0-9,]+ blocks are / {
		gsub(/,/, ""); sub(/^==[0-9]+== /, "")
		b = $1; if ($2 ~ /^\(/) b = substr($2, 2)
		for (i = 1; $i != "blocks"; i++) n = $i
		k = $(i + 2); if (k == "still") k = "reachable"
		print n, (b == n * d ? n "xDTV" : b), k }' "$OUT/vg.err" | sort >"$OUT/vg.kinds"
	jq -r -s --argjson d "$D" '.[] | select(.type=="leak")
		| "\(.count) \(if .size == $d then "\(.count)xDTV" else .bytes end) \(.kind)"' "$R" |
		sort >"$OUT/ms.kinds"
	check_eq "memcheck's loss records, record for record" "$(cat "$OUT/vg.kinds")" "$(cat "$OUT/ms.kinds")"
fi
finish
