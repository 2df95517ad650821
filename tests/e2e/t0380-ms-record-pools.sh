#!/bin/sh
# memscope.h's pools and MEMSCOPE_REALLOC: examples/pools' known answer,
# leaks per pool and site, a destroyed pool's blocks released (not leaked),
# the same figures from an --events stream, and the annotated program built
# and run with no memscope library anywhere.
. "$(dirname "$0")/lib.sh"
SRC="$TOP/examples"

# leaks_by_pool FILE: "pool caller count bytes kind size" per leak record,
# the caller being the frame below the innermost (pool_get's caller).
leaks_by_pool() {
	v1 "$1" | jq -r -s '
		(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames}) | from_entries) as $s
		| .[] | select(.type=="leak")
		| ($s[(.stack|tostring)]) as $f
		| "\(.pool // "-") \(.fn) \(if ($f[0].fn | IN("pool_get", "buf_alloc", "buf_resize")) then $f[1].fn else $f[0].fn end) \(.count) \(.bytes) \(.kind) \(.size)"' | sort
}

check_status "pools runs" 0 ms-record -q -o "$OUT/pools.ndjson" "$EX/pools"
R="$OUT/pools.ndjson"
check_eq "pools: the stream is well formed" "" "$(valid_stream "$R")"
check_eq "pools: leaks per pool and site" \
	"$(printf '%s\n' '- custom buf_grow 1 100 definitely 100' \
		'frames custom leak_frames 3 192 definitely 64' \
		'nodes custom leak_nodes 4 96 definitely 24')" \
	"$(leaks_by_pool "$R")"
check_eq "pools: nothing else leaks" "388 8 0 0" \
	"$(jq -r 'select(.type=="end") | "\(.leaked_bytes) \(.leaked_blocks) \(.reachable_blocks) \(.possibly_blocks)"' "$R")"
# The destroyed pool: 50 objects, 40 given back, 10 released by the destroy.
check_eq "strings: its site counts the destroy's 10 as frees" "50 50 0 0" \
	"$(jq -r 'select(.type=="site" and .pool=="strings") | "\(.allocs) \(.frees) \(.live) \(.live_bytes)"' "$R")"
check_eq "strings: no leak record" "" "$(jq -r 'select(.type=="leak" and .pool=="strings") | .count' "$R")"
check_eq "frames: the churn site is all given back" "1000 1000 0" \
	"$(jq -r 'select(.type=="site" and .pool=="frames" and .allocs==1000) | "\(.allocs) \(.frees) \(.live)"' "$R")"
# MEMSCOPE_REALLOC: a free of the 16-byte block, an allocation of 100.
check_eq "realloc: the first block is freed" "1 1" \
	"$(jq -r 'select(.type=="site" and .size==16 and .fn=="custom") | "\(.allocs) \(.frees)"' "$R")"
# Exact totals: 3 malloc'ed chunks and fill_strings' array, 1,057 pool
# objects, the buffer twice; every one freed but the 8 leaks.
check_eq "pools: end totals" "1063 1055 8 388 0" \
	"$(jq -r 'select(.type=="end") | "\(.allocs) \(.frees) \(.live) \(.live_bytes) \(.errors)"' "$R")"
L=$(line_of "$SRC/pools.c" "MEMSCOPE_POOL_ALLOC(p, b, p->obj);")
L2=$(line_of "$SRC/pools.c" "memset(pool_get(&frames, 64), 0, 64);")
sid=$(jq -r 'select(.type=="leak" and .pool=="frames") | .stack' "$R")
check_eq "frames: the leak's stack" "pool_get@pools.c:$L < leak_frames@pools.c:$L2" \
	"$(stack_of "$R" "$sid" | sed 's/ < main@.*//')"

# ms-report shows the pool next to the allocation function.
ms-report "$R" >"$OUT/report.txt"
check_fgrep "text: leaks name their pool" "192 B in 3 blocks of 64 B (custom, pool frames), definitely lost" \
	"$OUT/report.txt"
check_fgrep "text: sites too" "(custom, pool strings)" "$OUT/report.txt"
ms-report --md "$R" >"$OUT/report.md"
# pool_get is the program's own allocator, called from four places: its
# callers are the sites (ms-report finds it a wrapper), unless told not to.
check_fgrep "md: leaks name their pool" "from \`custom, pool nodes\` at \`leak_nodes pools.c:$(line_of "$SRC/pools.c" "memset(pool_get(&nodes, 24), 0, 24);")\`" "$OUT/report.md"
check_fgrep "text: pool_get found a wrapper" "    pool_get (pools)" "$OUT/report.txt"
check_fgrep "md: pool_get the site with --no-auto-wrappers" 'from `custom, pool nodes` at `pool_get pools.c' \
	"$(ms-report --md --no-auto-wrappers "$R" >"$OUT/kept.md"; echo "$OUT/kept.md")"
check_eq "json: leaks by pool" "frames 192|nodes 96|null 100" \
	"$(ms-report --json "$R" | jq -r '[.leaks[] | "\(.pool) \(.bytes)"] | sort | join("|")')"

# --events: pool records, pool ids in allocs and frees, the same answer
# aggregated again by ms-report.
check_status "pools --events" 0 ms-record -q --events -o "$OUT/events.ndjson" "$EX/pools"
E="$OUT/events.ndjson"
check_eq "events: pool records" "create frames|create nodes|create strings|destroy null" \
	"$(jq -r 'select(.type=="pool") | "\(.op) \(.name)"' "$E" | sort | paste -sd'|' -)"
check_eq "events: custom allocations carry their pool" 1057 \
	"$(jq -r 'select(.type=="alloc" and .pool != null) | .ptr' "$E" | wc -l)"
check_eq "events: ms-report gets the same leaks and totals" \
	"$(ms-report --json "$R" | jq -c '[.summary.allocs, .summary.frees, .summary.leaked_bytes, ([.leaks[] | [.pool, .count, .bytes]] | sort)]')" \
	"$(ms-report --json "$E" | jq -c '[.summary.allocs, .summary.frees, .summary.leaked_bytes, ([.leaks[] | [.pool, .count, .bytes]] | sort)]')"

# Without memscope: compiled with nothing of ours linked, run with nothing
# preloaded, the annotated program runs the same.
check_status "pools.c builds with no memscope library" 0 \
	cc -O1 -g -I"$TOP/shim" -o "$OUT/pools-plain" "$SRC/pools.c"
check_eq "pools-plain needs no memscope library" "" \
	"$(ldd "$OUT/pools-plain" | grep -i memscope)"
check_eq "its memscope functions are weak and undefined" \
	"$(printf 'w memscope_alloc\nw memscope_pool_alloc\nw memscope_pool_create\nw memscope_pool_destroy\nw memscope_pool_free\nw memscope_realloc')" \
	"$(nm -D "$OUT/pools-plain" | awk '$1 == "w" && $2 ~ /^memscope_/ { print $1, $2 }' | sort)"
plain=$(env -u LD_PRELOAD "$OUT/pools-plain")
check_eq "pools-plain runs" 0 $?
check_eq "the same output as under ms-record" \
	"$(ms-record -q -o /dev/null "$EX/pools")" "$plain"
check_eq "and as the Makefile's build" "$("$EX/pools")" "$plain"

# memscope.h is C++ too: each macro defined once, the functions extern
# "C" (their names unmangled), warning-free in both languages.
for lang in c c++; do
	check_status "memscope.h compiles as $lang, -Wall -Wextra -Werror" 0 \
		sh -c 'printf "#include \"memscope.h\"\n#include \"memscope.h\"\n" |
			gcc -x "$1" -Wall -Wextra -Werror -fsyntax-only -I"$2" -' sh $lang "$TOP/shim"
done
check_eq "memscope.h: each macro defined once" 8 "$(grep -c '^#define MEMSCOPE_[A-Z_]*(' "$TOP/shim/memscope.h")"
cat >"$OUT/pool.cpp" <<'CXX'
#include <cstdio>
#include <cstdlib>
#include "memscope.h"

static char arena[4096];

int main()
{
	static int pool;
	char *a = arena, *b = arena + 64;

	MEMSCOPE_POOL_CREATE(&pool, "cxx");
	MEMSCOPE_POOL_ALLOC(&pool, a, 64);
	MEMSCOPE_POOL_ALLOC(&pool, b, 32);
	MEMSCOPE_POOL_FREE(&pool, a);
	MEMSCOPE_ALLOC(arena + 128, 16);
	MEMSCOPE_REALLOC(arena + 128, arena + 256, 48);
	MEMSCOPE_FREE(arena + 256);
	std::puts("done");
	return 0;
}
CXX
check_status "a C++ program with every macro builds" 0 \
	g++ -Wall -Wextra -Werror -O1 -g -I"$TOP/shim" -o "$OUT/pool-cxx" "$OUT/pool.cpp"
check_eq "its memscope functions are unmangled" \
	"$(printf 'memscope_alloc\nmemscope_free\nmemscope_pool_alloc\nmemscope_pool_create\nmemscope_pool_free\nmemscope_realloc')" \
	"$(nm -D "$OUT/pool-cxx" | awk '$1 == "w" && $2 ~ /^memscope_/ { print $2 }' | sort)"
check_status "recorded" 0 ms-record -q -o "$OUT/pool-cxx.ndjson" "$OUT/pool-cxx"
check_eq "recorded: its pool's block leaks, the others freed" "cxx 1 32" \
	"$(jq -r 'select(.type=="leak" and .kind != "reachable" and .fn == "custom") | "\(.pool) \(.count) \(.bytes)"' "$OUT/pool-cxx.ndjson")"

finish
