#!/bin/sh
# ms-record reports the known leaks of the example programs exactly: counts,
# bytes, kinds (as Valgrind classifies them), allocation functions, and the
# functions and source lines of their stacks.
. "$(dirname "$0")/lib.sh"
SRC="$TOP/examples"

# --- leaky: several call paths and allocation functions -------------------
check_status "leaky runs" 0 ms-record -q -o "$OUT/leaky.ndjson" "$EX/leaky"
R="$OUT/leaky.ndjson"
check_eq "leaky end" '601025 600005 1020 89609 89609 1020 true 0' \
	"$(jq -r 'select(.type=="end") | "\(.allocs) \(.frees) \(.live) \(.live_bytes) \(.leaked_bytes) \(.leaked_blocks) \(.scanned) \(.lost)"' "$R")"
# The samples cover the run: the last is at the end, with its figures.
check_eq "leaky: the last sample is the end's ts, heap, allocs and bytes" \
	"$(jq -r 'select(.type=="end") | "\(.ts) \(.live_bytes) \(.allocs) \(.bytes)"' "$R")" \
	"$(jq -r 'select(.type=="sample") | "\(.ts) \(.heap) \(.allocs) \(.bytes)"' "$R" | tail -1)"
check_range "leaky: the last sample's rss is read" 1 100000000000 \
	"$(jq -r 'select(.type=="sample") | .rss' "$R" | tail -1)"
check_status "-i 0: no samples" 0 ms-record -q -i 0 -o "$OUT/nosample.ndjson" "$EX/leaky"
check_eq "-i 0: no samples, not even the last" 0 "$(grep -c '"type":"sample"' "$OUT/nosample.ndjson")"
check_eq "leaky: leak kinds" 'definitely' "$(jq -r 'select(.type=="leak") | .kind' "$R" | sort -u)"
check_eq "leak_small_inner" '1000 48000 definitely 48' "$(leaks_in "$R" leak_small_inner)"
check_eq "leak_page_inner" '10 40960 definitely 4096' "$(leaks_in "$R" leak_page_inner)"
check_eq "leak_grown (an unrolled loop: one line, one site)" '5 500 definitely 100' "$(leaks_in "$R" leak_grown)"
check_eq "leak_aligned (two calling lines)" "$(printf '1 64 definitely 64\n1 64 definitely 64')" "$(leaks_in "$R" leak_aligned)"
check_eq "strdup leaks (innermost frame is libc's strdup)" "$(printf '1 7 definitely 7\n1 7 definitely 7\n1 7 definitely 7')" \
	"$(leaks_in "$R" __strdup)"
# Allocation functions.
check_eq "fns" "$(printf 'aligned_alloc\ncalloc\nmalloc\nrealloc')" \
	"$(jq -r 'select(.type=="leak") | .fn' "$R" | sort -u)"
# The full stack of the 48-byte leak, with file:line from the source.
sid=$(jq -r 'select(.type=="leak" and .size==48) | .stack' "$R")
L1=$(line_of "$SRC/leaky.c" "char *p = malloc(48);")
L2=$(line_of "$SRC/leaky.c" "sink = leak_small_inner();")
L3=$(line_of "$SRC/leaky.c" "leak_small_mid();")
L4=$(line_of "$SRC/leaky.c" "leak_small_outer();")
check_eq "stack of the 48-byte leak" \
	"leak_small_inner@leaky.c:$L1 < leak_small_mid@leaky.c:$L2 < leak_small_outer@leaky.c:$L3 < run@leaky.c:$L4" \
	"$(stack_of "$R" "$sid" | sed 's/ < main@.*//')"
sid=$(jq -r 'select(.type=="leak" and .size==100) | .stack' "$R")
check_eq "stack of the realloc leak" "leak_grown@leaky.c:$(line_of "$SRC/leaky.c" "p = realloc(p, 100);")" \
	"$(stack_of "$R" "$sid" | sed 's/ < .*//')"
# Frames and stacks are written before the records that use them, once
# each, and only those used.
check_eq "frames and stacks before use, once" "" "$(valid_stream "$R")"
# Sites add up to the totals.
check_eq "sites add up" "601025 600005 54283515" \
	"$(jq -s -r '[.[] | select(.type=="site")] | "\(map(.allocs)|add) \(map(.frees)|add) \(map(.bytes)|add)"' "$R")"
check_eq "at_peak adds up to the peak" "$(jq -r 'select(.type=="end") | .peak' "$R")" \
	"$(jq -s -r '[.[] | select(.type=="site") | .at_peak] | add' "$R")"
check_eq "churn site: 200000 mallocs of 32..287 B, all temporary" "$(printf '200000 200000 200000')" \
	"$(v1 "$R" | jq -s -r --arg line "$(line_of "$SRC/leaky.c" "char *p = malloc(32 + (i & 255));")" '
		(map(select(.type=="stack")) | map(select(.frames[0].line == ($line|tonumber))) | map(.id)) as $ids
		| [.[] | select(.type=="site" and (.stack as $s | $ids | index($s)))]
		| "\(map(.allocs)|add) \(map(.frees)|add) \(map(.temporary)|add)"')"

# --- threads: cross-thread frees, 8 threads --------------------------------
# fn_sites FN FILE: allocations, frees and live blocks of the sites whose
# stacks start in FN.
fn_sites() {
	v1 "$2" | jq -s -r --arg fn "$1" '(map(select(.type=="stack" and .frames[0].fn==$fn)) | map(.id)) as $ids
		| [.[] | select(.type=="site" and (.stack as $s | $ids | index($s)))]
		| "\(map(.allocs)|add) \(map(.frees)|add) \(map(.live)|add)"'
}
check_status "threads runs" 0 ms-record -q -o "$OUT/threads.ndjson" "$EX/threads" 4 20000
R="$OUT/threads.ndjson"
check_eq "make_item: allocated 80000, freed 79920" "80000 79920 80" \
	"$(fn_sites make_item "$R")"
check_eq "threads: lost as Valgrind says" "definitely 4 64|indirectly 156 4736" \
	"$(jq -s -r '[.[] | select(.type=="leak" and (.kind=="definitely" or .kind=="indirectly"))]
		| group_by(.kind) | map("\(.[0].kind) \(map(.count)|add) \(map(.bytes)|add)") | join("|")' "$R")"
check_eq "threads: no phantom leaks" "4800 160" \
	"$(jq -r 'select(.type=="end") | "\(.leaked_bytes) \(.leaked_blocks)"' "$R")"

# The leak scan reads the blocks with a thread per range of them: the kinds
# do not depend on how many (a heap this small gets one, unless
# MEMSCOPE_SCAN_THREADS says).  threads 4 20000 allocates in the same order
# every run; dtv has a possibly lost block.
kinds() {
	jq -s -r '[.[] | select(.type=="leak")] | group_by(.kind)
		| map("\(.[0].kind) \(map(.count)|add) \(map(.bytes)|add)") | join("|")' "$1"
}
for p in threads dtv; do
	set -- "$EX/$p"
	[ $p = threads ] && set -- "$@" 4 20000
	for t in 1 3 4; do
		MEMSCOPE_SCAN_THREADS=$t check_status "$p: scan in $t threads" 0 \
			ms-record -q -o "$OUT/$p.scan$t.ndjson" "$@"
		check_eq "$p: scanned in $t threads" true \
			"$(jq -r 'select(.type=="end") | .scanned' "$OUT/$p.scan$t.ndjson")"
	done
	check_eq "$p: the same kinds from 1 and 3 threads" \
		"$(kinds "$OUT/$p.scan1.ndjson")" "$(kinds "$OUT/$p.scan3.ndjson")"
	check_eq "$p: the same kinds from 1 and 4 threads" \
		"$(kinds "$OUT/$p.scan1.ndjson")" "$(kinds "$OUT/$p.scan4.ndjson")"
done
# live_heap 64: 149,214 blocks in 66 MiB, a pointer in every eighth word,
# one block in sixteen lost (the same ones every run): enough for the sort
# to be shared out too (from 65,536 blocks), and for pass 1's parts to cut
# blocks of up to 4 MiB.
LH="$TOP/tests/bench/bin/live_heap"
for t in 1 2 4; do
	MEMSCOPE_SCAN_THREADS=$t check_status "live_heap 64: scan in $t threads" 0 \
		ms-record -q -o "$OUT/live_heap.scan$t.ndjson" "$LH" 64
done
check_eq "live_heap 64: all kinds of loss" "definitely indirectly possibly reachable" \
	"$(kinds "$OUT/live_heap.scan1.ndjson" | tr '|' '\n' | cut -d' ' -f1 | xargs)"
check_eq "live_heap 64: the same kinds from 1 and 2 threads" \
	"$(kinds "$OUT/live_heap.scan1.ndjson")" "$(kinds "$OUT/live_heap.scan2.ndjson")"
check_eq "live_heap 64: the same kinds from 1 and 4 threads" \
	"$(kinds "$OUT/live_heap.scan1.ndjson")" "$(kinds "$OUT/live_heap.scan4.ndjson")"
check_eq "threads: lost as Valgrind says, from 4 threads" "definitely 4 64|indirectly 156 4736" \
	"$(kinds "$OUT/threads.scan4.ndjson" | cut -d'|' -f1,2)"
check_eq "dtv: its kinds from 4 threads (t0305)" "definitely 3 168|possibly 10|reachable 5 4240" \
	"$(kinds "$OUT/dtv.scan4.ndjson" | sed 's/possibly \([0-9]*\) [0-9]*/possibly \1/')"

# --- handoff: an address freed in one thread, allocated in the other ------
# Without a thread cache and with one arena, glibc gives the block the taker
# freed straight back to the giver, a microsecond later: the free must come
# first in the merged stream, or the free looks unknown and a block leaks.
# (RDTSC ran ahead of the load that handed the block over, and stamped the
# free before the allocation it followed, in most runs of this test.)
GLIBC_TUNABLES=glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1 \
	check_status "handoff runs" 0 ms-record -q -o "$OUT/handoff.ndjson" "$EX/handoff" 200000
check_eq "handoff: the address repeats" "handoff: 200000 rounds, 1 distinct addresses" "$(cat "$OUT/last.out")"
R="$OUT/handoff.ndjson"
check_eq "handoff: give allocated 200000, all freed" "200000 200000 0" "$(fn_sites give "$R")"
check_eq "handoff: no unknown frees, nothing leaked" "0 0 0" \
	"$(jq -r 'select(.type=="end") | "\(.unknown_frees) \(.leaked_blocks) \(.leaked_bytes)"' "$R")"

# --- more threads than rings: the extra ones share ring 0 ------------------
# 150 pairs = 300 threads, 256 rings: make_item 300,000 times, each pair
# keeps items 0 and 1000 (16 + 56 B) and their two 16-byte list nodes.
check_status "threads 150 2000 runs" 0 ms-record -q -o "$OUT/threads300.ndjson" "$EX/threads" 150 2000
R="$OUT/threads300.ndjson"
check_eq "300 threads: make_item allocated 300000, freed 299700" "300000 299700 300" \
	"$(fn_sites make_item "$R")"
check_eq "300 threads: leaks exact" "15600 600 0" \
	"$(jq -r 'select(.type=="end") | "\(.leaked_bytes) \(.leaked_blocks) \(.lost)"' "$R")"
check_eq "300 threads: whole stacks on the shared ring too" "make_item producer start_thread" \
	"$(v1 "$R" | jq -r 'select(.type=="stack" and .frames[0].fn=="make_item") | [.frames[].fn] | .[0:3] | join(" ")' | sort -u)"

# --- cxx: operator new/delete, containers, exceptions ---------------------
check_status "cxx runs" 0 ms-record -q -o "$OUT/cxx.ndjson" "$EX/cxx"
R="$OUT/cxx.ndjson"
check_eq "cxx leaked" "632 9" "$(jq -r 'select(.type=="end") | "\(.leaked_bytes) \(.leaked_blocks)"' "$R")"
check_eq "make_widget" "7 168 definitely 24" "$(leaks_in "$R" 'make_widget(int)')"
check_eq "make_array" "1 400 definitely 400" "$(leaks_in "$R" 'make_array()')"
check_eq "make_aligned" "1 64 definitely 64" "$(leaks_in "$R" 'make_aligned()')"
check_eq "cxx fns" "$(printf 'new\nnew\nnew[]')" \
	"$(jq -r 'select(.type=="leak" and .kind=="definitely") | .fn' "$R" | sort)"
check_eq "cxx: every other block is freed or reachable" "" \
	"$(jq -r 'select(.type=="leak" and .kind!="definitely" and .kind!="reachable") | .kind' "$R")"

# --- stale: pointers an earlier block left in bytes never written ---------
# A lost std::map's node addresses sit in a kept vector's spare capacity
# (the memory of a freed vector that held them): memcheck calls the map
# lost (48 B definitely, 1000 x 40 B indirectly).  A block handed out is
# emptied of what was there before, so the scan finds the same; before,
# the map was "possibly lost" and its nodes "still reachable".
check_status "stale runs" 0 ms-record -q -o "$OUT/stale.ndjson" "$EX/stale"
check_eq "stale: the kept vector has the freed one's memory" 1 "$(cat "$OUT/last.out")"
R="$OUT/stale.ndjson"
check_eq "stale: as memcheck says: 48 B definitely, 40,000 B indirectly" "48 40000 0" \
	"$(jq -r 'select(.type=="end") | "\(.definitely_bytes) \(.indirectly_bytes) \(.possibly_bytes // 0)"' "$R")"
check_eq "stale: the map lost where it was made (the kept vector reachable)" \
	"$(printf '1 24 reachable 24\n1 48 definitely 48')" "$(leaks_in "$R" 'lose_map(int)')"
check_eq "stale: its nodes indirectly" "1000 40000" \
	"$(jq -r -s '[.[] | select(.type=="leak" and .kind=="indirectly")] | "\(map(.count) | add) \(map(.bytes) | add)"' "$R")"
# --no-scan: nothing to empty blocks for.
check_status "stale --no-scan" 0 ms-record -q --no-scan -o "$OUT/stale-ns.ndjson" "$EX/stale"
# An operator new of a library of the program's (ms-record's comes first
# in the lookup order; one in the executable is never ours to see) that
# recycles an object, relying on what it kept (undefined, but it works
# natively): its blocks are left as they are.
cat >"$OUT/recycle-lib.cpp" <<'CXX'
#include <cstdlib>
#include <new>
static char slab[256] __attribute__((aligned(16)));
static bool used;
void *operator new(std::size_t n)
{
	if (!used && n <= sizeof(slab)) {
		used = true;
		return slab;
	}
	void *p = std::malloc(n);
	if (!p)
		throw std::bad_alloc();
	return p;
}
void operator delete(void *p) noexcept
{
	if (p == slab)
		used = false;
	else
		std::free(p);
}
void operator delete(void *p, std::size_t) noexcept { operator delete(p); }
CXX
cat >"$OUT/recycle.cpp" <<'CXX'
#include <cstdio>
#include <new>
struct Obj { long kept; };
int main()
{
	Obj *a = new Obj;
	a->kept = 42;
	delete a;
	Obj *b = static_cast<Obj *>(operator new(sizeof(Obj)));
	std::printf("%ld\n", b->kept);
	return 0;
}
CXX
check_status "recycle builds" 0 sh -c 'g++ -O0 -shared -fPIC -o "$1/librecycle.so" "$1/recycle-lib.cpp" &&
	g++ -O0 -o "$1/recycle" "$1/recycle.cpp" -L"$1" -lrecycle -Wl,-rpath,"$1"' sh "$OUT"
check_eq "a library's own operator new: what its object kept, as natively (42)" \
	"$("$OUT/recycle")" "$(ms-record -q -o /dev/null "$OUT/recycle")"

# --- pool: a custom allocator annotated with memscope.h -------------------
check_status "pool runs" 0 ms-record -q -o "$OUT/pool.ndjson" "$EX/pool"
R="$OUT/pool.ndjson"
check_eq "pool: the 5 forgotten objects" "5 240 definitely 48" \
	"$(jq -r 'select(.type=="leak" and .kind=="definitely") | "\(.count) \(.bytes) \(.kind) \(.size)"' "$R")"
check_eq "pool: their stack" "pool_get@pool.c:$(line_of "$SRC/pool.c" "MEMSCOPE_ALLOC(b, OBJ);") < leak_some@pool.c:$(line_of "$SRC/pool.c" "memset(pool_get(p), 0, OBJ);")" \
	"$(stack_of "$R" "$(jq -r 'select(.type=="leak" and .kind=="definitely") | .stack' "$R")" | sed 's/ < main@.*//')"
check_eq "pool: custom fn" "custom" "$(jq -r 'select(.type=="leak" and .kind=="definitely") | .fn' "$R")"
check_eq "pool: 10,005 objects, 10,000 given back" "10005 10000" \
	"$(jq -s -r '[.[] | select(.type=="site" and .fn=="custom")] | "\(map(.allocs)|add) \(map(.frees)|add)"' "$R")"
check_eq "pool: nothing else leaks" "240 5" "$(jq -r 'select(.type=="end") | "\(.leaked_bytes) \(.leaked_blocks)"' "$R")"

# --- binaries without line information: call sites stay apart -------------
# Two malloc(64) calls in one function leak 10 and 3 blocks: two sites, as
# memcheck and heaptrack say, whether the binary has lines (-g), only a
# symbol table (no -g), or only .dynsym names (stripped; leak_two is
# exported, leak_anon and run are not named at all).
for b in twosites twosites-nodebug twosites-stripped; do
	check_status "$b runs" 0 ms-record -q -o "$OUT/$b.ndjson" "$EX/$b"
	R="$OUT/$b.ndjson"
	check_eq "$b: three leak sites" "$(printf '10 640 definitely 64\n3 192 definitely 64\n4 256 definitely 64')" \
		"$(jq -r 'select(.type=="leak") | "\(.count) \(.bytes) \(.kind) \(.size)"' "$R" | sort)"
	check_eq "$b: three distinct stacks" "3" "$(jq -r 'select(.type=="leak") | .stack' "$R" | sort -u | wc -l)"
	check_eq "$b: leak_two's two sites" "$(printf '10 640\n3 192')" "$(leaks_in "$R" leak_two | cut -d' ' -f1,2 | sort -rn)"
done
# Without lines a frame is its function and the return address's offset in
# it: offset - the symbol's address.
R="$OUT/twosites-nodebug.ndjson"
sym=$(nm "$EX/twosites-nodebug" | awk '$3=="leak_two" {print $1}')
check_eq "nodebug: fn_offset is offset - symbol" "ok ok" "$(v1 "$R" | jq -r --arg sym "$sym" '
	def hex: ltrimstr("0x") | explode | map(if . >= 97 then . - 87 else . - 48 end)
		| reduce .[] as $d (0; . * 16 + $d);
	select(.type=="stack" and .frames[0].fn=="leak_two") | .frames[0]
	| if (.offset|hex) - ($sym|hex) == (.fn_offset|hex) then "ok" else "bad \(.)" end' | tr '\n' ' ' | sed 's/ $//')"
check_eq "nodebug: no line is invented" "0" "$(jq -r 'select(.type=="frame") | select(.obj != null and (.obj|endswith("twosites-nodebug")) and .line != null)' "$R" | wc -l)"
ms-report "$R" >"$OUT/nodebug.txt"
check_eq "nodebug report: two leak_two rows, by offset" "2" \
	"$(grep -o 'leak_two+0x[0-9a-f]* (twosites-nodebug)' "$OUT/nodebug.txt" | sort -u | wc -l)"
ms-report "$OUT/twosites-stripped.ndjson" >"$OUT/stripped.txt"
check_grep "stripped report: an unnamed frame is module+offset" "^      twosites-stripped+0x[0-9a-f]*$" "$OUT/stripped.txt"

# --- programs that close every descriptor ---------------------------------
# Daemons close every descriptor above 2 at start; the leak scan must still
# run, and the program must see the descriptors it sees without us (none of
# ours: the shim keeps none once it is set up).
for how in loop closefrom close_range dup2; do
	"$EX/closeall" $how >"$OUT/closeall.$how.native" 2>&1
	check_status "closeall $how runs" 0 ms-record -q -o "$OUT/closeall.$how.ndjson" "$EX/closeall" $how
	check_eq "closeall $how: same output as natively" "$(cat "$OUT/closeall.$how.native")" "$(cat "$OUT/last.out")"
	check_eq "closeall $how: 100 blocks definitely lost" "100 10000 definitely 100" \
		"$(leaks_in "$OUT/closeall.$how.ndjson" leak_hundred)"
	check_eq "closeall $how: scanned" "true 10000" \
		"$(jq -r 'select(.type=="end") | "\(.scanned) \(.leaked_bytes)"' "$OUT/closeall.$how.ndjson")"
done

# --- the other unwinders agree on the leaks -------------------------------
check_status "leaky with libunwind" 0 ms-record -q --unwind libunwind -o "$OUT/lu.ndjson" "$EX/leaky"
check_eq "libunwind: same 48-byte stack" "$(stack_of "$OUT/leaky.ndjson" "$(jq -r 'select(.type=="leak" and .size==48) | .stack' "$OUT/leaky.ndjson")")" \
	"$(stack_of "$OUT/lu.ndjson" "$(jq -r 'select(.type=="leak" and .size==48) | .stack' "$OUT/lu.ndjson")")"
check_status "leaky with --unwind none" 0 ms-record -q --unwind none -o "$OUT/none.ndjson" "$EX/leaky"
check_eq "-u none: one frame, the call site" "leak_small_inner@leaky.c:$(line_of "$SRC/leaky.c" "char *p = malloc(48);")" \
	"$(stack_of "$OUT/none.ndjson" "$(jq -r 'select(.type=="leak" and .size==48) | .stack' "$OUT/none.ndjson")")"
check_status "leaky --depth 2" 0 ms-record -q --depth 2 -o "$OUT/d2.ndjson" "$EX/leaky"
check_eq "-d 2: at most two frames" "0" "$(v1 "$OUT/d2.ndjson" | jq -r 'select(.type=="stack") | .frames | map(select(.inline|not)) | length | select(. > 2)' | wc -l)"

# --- our unwinder against libunwind, capture by capture -------------------
for p in leaky cxx threads; do
	MEMSCOPE_UNWIND_CHECK=1 ms-record -q -o /dev/null "$EX/$p" >/dev/null 2>"$OUT/check.$p"
	check_grep "$p: unwinders agree" "unwind check: [0-9]* captures, 0 mismatches" "$OUT/check.$p"
	# Stacks cut at the depth limit take another path through the reuse
	# of the previous stack.
	MEMSCOPE_UNWIND_CHECK=1 ms-record -q --depth 4 -o /dev/null "$EX/$p" >/dev/null 2>"$OUT/check4.$p"
	check_grep "$p -d 4: unwinders agree" "unwind check: [0-9]* captures, 0 mismatches" "$OUT/check4.$p"
done
# leaky and cxx allocate from several call paths in turn: most of their
# captures come from the trace cache, and are checked like the others.
for p in leaky cxx; do
	check_grep "$p: the trace cache serves captures" "mismatches ([1-9][0-9]* from the trace cache)" "$OUT/check.$p"
	check_grep "$p -d 4: the trace cache serves captures" "mismatches ([1-9][0-9]* from the trace cache)" "$OUT/check4.$p"
done
finish
