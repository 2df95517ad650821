#!/bin/sh
# ms-report: the Markdown report lists every leak with its file:line and
# exact totals; an --events stream and the aggregated stream of the same
# run give identical reports; --collapsed sums to the leaked bytes (or the
# --cost asked for); --svg is a self-contained flame graph; --json is one
# document; ms-diff deltas become a growth report with stacks; bad input
# gives the report of what was read and a one-line error.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2
SRC="$TOP/examples"

ms-record -q -o leaky.ndjson "$EX/leaky" >/dev/null 2>&1

# --- Markdown: every leak, file:line, exact totals ----------------------------
check_status "ms-report --md" 0 ms-report --md leaky.ndjson
mv "$OUT/last.out" leaky.md
L_small=$(line_of "$SRC/leaky.c" "char *p = malloc(48);")
L_page=$(line_of "$SRC/leaky.c" "char *p = calloc(1, 4096);")
L_grown=$(line_of "$SRC/leaky.c" "p = realloc(p, 100);")
L_name=$(line_of "$SRC/leaky.c" "sink = strdup(name);")
L_aligned=$(line_of "$SRC/leaky.c" "aligned_alloc(64, 64)")
check_eq "md: the summary's leaked total, exact" "| **leaked** | **89,609 B in 1,020 blocks** |" \
	"$(grep -F '| **leaked** |' leaky.md)"
check_eq "md: the leaks heading" "### Leaks: 89,609 B in 1,020 blocks" "$(grep -F '### Leaks' leaky.md)"
check_eq "md: every leak, largest first, with the line that allocated it" \
	"1. **48,000 B** in 1,000 blocks of 48 B from \`malloc\` at \`leak_small_inner leaky.c:$L_small\`, definitely lost
2. **40,960 B** in 10 blocks of 4,096 B from \`calloc\` at \`leak_page_inner leaky.c:$L_page\`, definitely lost
3. **500 B** in 5 blocks of 100 B from \`realloc\` at \`leak_grown leaky.c:$L_grown\`, definitely lost
4. **64 B** in 1 block of 64 B from \`aligned_alloc\` at \`leak_aligned leaky.c:$L_aligned\`, definitely lost
5. **64 B** in 1 block of 64 B from \`aligned_alloc\` at \`leak_aligned leaky.c:$L_aligned\`, definitely lost
6. **7 B** in 1 block of 7 B from \`malloc\` at \`leak_name leaky.c:$L_name\`, definitely lost
7. **7 B** in 1 block of 7 B from \`malloc\` at \`leak_name leaky.c:$L_name\`, definitely lost
8. **7 B** in 1 block of 7 B from \`malloc\` at \`leak_name leaky.c:$L_name\`, definitely lost" \
	"$(grep -E '^[0-9]+\. \*\*' leaky.md)"
check_fgrep "md: stacks go down to main" "   main leaky.c:" leaky.md
# -q, as every tool takes it: the same report, nothing on stderr.
check_status "ms-report -q --md" 0 ms-report -q --md leaky.ndjson
check_eq "-q: the same report" "$(cat leaky.md)" "$(cat "$OUT/last.out")"
check_empty "-q: nothing on stderr" "$OUT/last.err"
check_nogrep "md: no C runtime frames" "__libc_start_main|_start " leaky.md
check_fgrep "md: top sites table" "### Top allocation sites by bytes" leaky.md
check_grep "md: the churn site" "| 200,000 | 0 B | 0 B | 16 | #[0-9]* \`churn leaky.c:$(line_of "$SRC/leaky.c" "q = malloc(16);")\` |" leaky.md
check_fgrep "md: temporary allocations" "600,005 of 601,025 allocations were freed before their thread allocated again" leaky.md
check_fgrep "md: size histogram" "| 4.0 KiB..8.0 KiB | 10 | 40.0 KiB |" leaky.md
check_fgrep "md: timeline" "### Timeline" leaky.md

# The pipeline users type first.
ms-record "$EX/leaky" 2>/dev/null | ms-filter --min 64 --ignore libc | ms-report --md >pipe.md
check_eq "pipeline: the leaks of 64 B and more" \
	"1. **40,960 B** in 10 blocks of 4,096 B from \`calloc\` at \`leak_page_inner leaky.c:$L_page\`, definitely lost
2. **500 B** in 5 blocks of 100 B from \`realloc\` at \`leak_grown leaky.c:$L_grown\`, definitely lost
3. **64 B** in 1 block of 64 B from \`aligned_alloc\` at \`leak_aligned leaky.c:$L_aligned\`, definitely lost
4. **64 B** in 1 block of 64 B from \`aligned_alloc\` at \`leak_aligned leaky.c:$L_aligned\`, definitely lost" \
	"$(grep -E '^[0-9]+\. \*\*' pipe.md)"
check_eq "pipeline: says what was filtered out" \
	'**Filtered out** 7 site records (4.2 MiB), 4 leak records (48,021 B in 1,003 blocks) by `--min 64 --ignore libc`.' \
	"$(grep -F '**Filtered out**' pipe.md)"
check_fgrep "pipeline: and what the recording held" "The recording held 601,025 allocations (51.8 MiB) before filtering." pipe.md
# --transient on aggregates trims the churn site: the report says by how much.
# (1000 of its blocks made long-lived, as in t0400: trimmed, not dropped.)
L94=$(line_of "$SRC/leaky.c" "q = malloc(16);")
sid=$(v1 leaky.ndjson | jq -s -r --argjson l "$L94" '.[] | select(.type=="stack" and .frames[0].line == $l) | .id')
jq -c --argjson s "$sid" 'if .type == "site" and .stack == $s then .ages[0] -= 1000 | .ages[5] += 1000 else . end' \
	leaky.ndjson >aged.ndjson
trim=$(jq -r --argjson s "$sid" 'select(.type=="site" and .stack==$s) | .ages[0:4] | add' aged.ndjson)
ms-filter --transient aged.ndjson 2>/dev/null | ms-report --md >trim.md
check_fgrep "--transient: the report counts what it trimmed from sites" \
	"$(echo "$trim" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta') transient allocations (" trim.md
check_fgrep "--transient: and what the recording held" "The recording held 601,025 allocations (51.8 MiB) before filtering." trim.md

# --- an --events stream and the aggregated stream of the same run --------------
for ex in leaky threads cxx wordfreq; do
	case $ex in threads) args="4 5000" ;; *) args= ;; esac
	# shellcheck disable=SC2086
	ms-record -q --events -o "$ex-ev.ndjson" "$EX/$ex" $args >/dev/null 2>&1
	grep -v -E '^\{"type":"(alloc|free|unfree|mmap|munmap|mremap|brk)"' "$ex-ev.ndjson" >"$ex-agg.ndjson"
	for fmt in md text json collapsed; do
		ms-report --$fmt "$ex-ev.ndjson" >"$ex-ev.$fmt" 2>&1
		ms-report --$fmt "$ex-agg.ndjson" >"$ex-agg.$fmt" 2>&1
		if cmp -s "$ex-ev.$fmt" "$ex-agg.$fmt"; then ok; else
			not_ok "$ex --$fmt: events and aggregates differ: $(diff "$ex-ev.$fmt" "$ex-agg.$fmt" | head -5)"
		fi
	done
	ms-filter --type header,stack,site,leak,sample,thread,end "$ex-ev.ndjson" | ms-report --md >"$ex-filtered.md"
	check_eq "$ex: ms-filter --type to aggregates, same report" "" "$(diff "$ex-ev.md" "$ex-filtered.md")"
done
check_eq "events: the report counts every event" "601025 600005" \
	"$(ms-report --json leaky-ev.ndjson | jq -r '.summary | "\(.allocs) \(.frees)"')"

# --- --collapsed and --cost ----------------------------------------------------
for ex in leaky threads; do
	R="$ex-ev.ndjson"
	check_eq "$ex --collapsed sums to the leaked bytes" "$(jq 'select(.type=="end") | .leaked_bytes' "$R")" \
		"$(ms-report --collapsed "$R" | awk '{ s += $NF } END { print s }')"
	check_eq "$ex --cost allocs sums to the allocations" "$(jq 'select(.type=="end") | .allocs' "$R")" \
		"$(ms-report --collapsed --cost allocs "$R" | awk '{ s += $NF } END { print s }')"
	check_eq "$ex --cost bytes sums to the bytes" "$(jq 'select(.type=="end") | .bytes' "$R")" \
		"$(ms-report --collapsed --cost bytes "$R" | awk '{ s += $NF } END { print s }')"
	check_eq "$ex --cost peak sums to the peak" "$(jq 'select(.type=="end") | .peak' "$R")" \
		"$(ms-report --collapsed --cost peak "$R" | awk '{ s += $NF } END { print s }')"
done
check_egrep "collapsed: root first, the allocating frame last" \
	';main;run;leak_small_outer;leak_small_mid;leak_small_inner 48000$' leaky-ev.collapsed
check_nogrep "collapsed: one line per stack, name;name;... COUNT" '^[^ ]* [0-9]+ ' leaky-ev.collapsed

# --- --svg -----------------------------------------------------------------------
check_status "--svg" 0 ms-report --svg -o leaks.svg leaky.ndjson
check_status "svg: well-formed XML" 0 xmllint --noout leaks.svg
check_nogrep "svg: self-contained (no external script or style)" '(src|href)=' leaks.svg
check_fgrep "svg: its own script" '<script type="text/ecmascript">' leaks.svg
check_fgrep "svg: the total in the title" "examples/bin/leaky: 87.5 KiB leaked</text>" leaks.svg
check_fgrep "svg: what the width is" "The width of a frame is its share of the bytes leaked" leaks.svg
# A frame's tooltip: its name, file:line and module, its cost and share.
check_eq "svg: a frame's tooltip" "leak_small_inner
leaky.c:$L_small in leaky
46.9 KiB (53.57%)" "$(grep -A2 '<title>leak_small_inner$' leaks.svg | sed 's#</title>.*##; s/<[^>]*>//g')"
check_nogrep "svg: sizes without a second unit" 'iB bytes|B bytes' leaks.svg
# Every node of the call tree is counted; frames under a pixel (here 76 B)
# are drawn merged with their siblings when together they make one: the
# strdup'ed names (3 x 7 B) do not, and are not drawn.
check_eq "svg: every node of the call tree counted" \
	"$(ms-report --collapsed leaky.ndjson | awk '{ $NF = ""; n = split($0, f, ";"); p = ""; for (i = 1; i <= n; i++) { p = p ";" f[i]; if (!(p in seen)) { seen[p] = 1; c++ } } } END { print c + 1 }')" \
	"$(grep -o 'data-frames="[0-9]*"' leaks.svg | tr -dc 0-9)"
check_eq "svg: one box per frame drawn" "$(grep -o 'data-drawn="[0-9]*"' leaks.svg | tr -dc 0-9)" \
	"$(grep -c '^<g data-c=' leaks.svg)"
check_eq "svg: 13 of 15 frames drawn" "15 13" \
	"$(grep -o 'data-frames="[0-9]*" data-drawn="[0-9]*"' leaks.svg | tr -dc '0-9 ')"
check_nogrep "svg: leak_name (21 B) not drawn" '<title>leak_name$' leaks.svg
check_egrep "svg: leak_aligned (128 B) drawn" '<title>leak_aligned$' leaks.svg
ms-report --svg --cost allocs --title 'my title' leaky.ndjson >allocs.svg
check_fgrep "svg --title and --cost allocs" "my title: 601,025 allocations" allocs.svg

# --- --json, --sections, --top ------------------------------------------------
check_status "--json" 0 ms-report --json leaky.ndjson
mv "$OUT/last.out" leaky.json
check_eq "json: one document with the exact answers" "1 true 89609 1020 8 601025" \
	"$(jq -s -r '"\(length) \(.[0].complete) \(.[0].summary.leaked_bytes) \(.[0].summary.leaked_blocks) \(.[0].leaks | length) \(.[0].summary.allocs)"' leaky.json)"
check_eq "json: a leak's stack" "leak_small_inner leaky.c $L_small" \
	"$(jq -r '.leaks[0].stack[0] | "\(.fn) \(.file | split("/") | last) \(.line)"' leaky.json)"
check_eq "--sections leaks: that section alone" "LEAKS" \
	"$(ms-report --sections leaks leaky.ndjson | grep -E '^[A-Z][A-Z ]+$')"
check_eq "--top 2: two leaks shown" 2 "$(ms-report --md --top 2 --sections leaks leaky.ndjson | grep -c -E '^[0-9]+\. ')"
check_status "--sections bogus" 2 ms-report --sections bogus leaky.ndjson
check_eq "--sections bogus: the usage error" "ms-report: invalid sections 'bogus' (summary, leaks, top, temporary, sizes, timeline, all)
Try 'ms-report --help' for more information." "$(cat "$OUT/last.err")"

# --- text fits 80 columns --------------------------------------------------------
ms-report leaky.ndjson >leaky.txt
ms-report threads-ev.ndjson >threads.txt
ms-report cxx-ev.ndjson >cxx.txt
# wc -L counts columns (the bars and sparklines are multibyte characters).
# The first line names the program as it was run: a path as long as the
# clone's (mktemp -d, .sanitize/), which no report can shorten.
for f in leaky.txt threads.txt cxx.txt; do
	check_range "text: $f fits 80 columns" 40 80 "$(sed 1d "$f" | LC_ALL=C.UTF-8 wc -L)"
done

# --- a program that execs: the report describes the program it became ------
ms-record -q -o exec.ndjson /bin/sh -c "exec '$EX/leaky'" >/dev/null 2>&1
ms-record -q --events -o exec-ev.ndjson /bin/sh -c "exec '$EX/leaky'" >/dev/null 2>&1
check_eq "exec: the report is leaky's: program, end, leaks, allocations" \
	"$EX/leaky exit 89609 1020 601025" \
	"$(ms-report --json exec.ndjson | jq -r '"\(.program) \(.summary.reason) \(.summary.leaked_bytes) \(.summary.leaked_blocks) \(.summary.allocs)"')"
check_eq "exec, from events: leaky's allocations only" "601025 600005" \
	"$(ms-report --json exec-ev.ndjson | jq -r '"\(.summary.allocs) \(.summary.frees)"')"
ms-report --md exec.ndjson >exec.md
check_nogrep "exec: one process, not 'more processes'" "more process" exec.md

# --- names that are not UTF-8 (escaped in the stream) stay in --json -------
cat >bad8.ndjson <<'EOF'
{"type":"header","format":"memscope","version":1,"tool":"ms-record","mode":"launch","pid":42,"argv":["pr\udcffog"]}
{"type":"stack","id":1,"frames":[{"fn":"f\udcffoo","file":"/tmp/d\udce9j\u00e0.c","line":5,"obj":"mm","off":"0x1100"}]}
{"type":"leak","pid":42,"stack":1,"size":16,"fn":"malloc","kind":"definitely","count":1,"bytes":16}
{"type":"end","pid":42,"reason":"exit","status":0,"ts":3000,"leaked_bytes":16,"leaked_blocks":1}
EOF
check_eq "--json: bytes that are not UTF-8 become U+FFFD, the members stay" \
	'{"program":"pr\ufffdog","fn":"f\ufffdoo","file":"/tmp/d\ufffdj\u00e0.c"}' \
	"$(ms-report --json bad8.ndjson | jq -c '{program, fn: .leaks[0].stack[0].fn, file: .leaks[0].stack[0].file}' | jq -c --ascii-output .)"
ms-report --svg bad8.ndjson >bad8.svg
check_status "--svg: well-formed XML whatever the bytes of names" 0 xmllint --noout bad8.svg

# --- ms-diff deltas: a growth report --------------------------------------------
ms-snap -p $$ >snap.json 2>/dev/null
ms-record -q -o t1.ndjson "$EX/threads" 4 5000 >/dev/null 2>&1
ms-record -q -o t2.ndjson "$EX/threads" 4 10000 >/dev/null 2>&1
ms-diff t1.ndjson t2.ndjson >growth.ndjson
check_eq "ms-diff on recordings: site deltas with stacks" "" "$(jq -r -s '
	(map(select(.type=="stack")) | map(.id)) as $ids
	| .[] | select(.type=="delta" and (.key=="site" or .key=="leak")) | select(.stack as $s | $ids | index($s) | not)
	| "no stack for \(.name)"' growth.ndjson)"
L_item=$(line_of "$SRC/threads.c" "struct item *it = malloc(")
check_eq "ms-diff: make_item allocates twice as much" "make_item threads.c:$L_item allocs 20000 40000 20000" \
	"$(jq -r 'select(.type=="delta" and .key=="site" and .metric=="allocs") | "\(.name) \(.metric) \(.before) \(.after) \(.change)"' growth.ndjson | head -1)"
check_status "ms-diff --fail-on-growth 0 on leaks that grew" 1 \
	ms-diff -q --metric leaked_bytes --fail-on-growth 0 t1.ndjson t2.ndjson
check_status "ms-diff --fail-on-growth 0 on leaks that shrank" 0 \
	ms-diff -q --metric leaked_bytes --fail-on-growth 0 t2.ndjson t1.ndjson
# --metric all on recordings: the totals stay those of the default metric.
check_eq "ms-diff --metric all on recordings: totals of live_bytes, as by default" \
	"$(tail -n 1 growth.ndjson | jq -c '[.metric, .before, .after]')" \
	"$(ms-diff --metric all t1.ndjson t2.ndjson | tail -n 1 | jq -c '[.metric, .before, .after]')"
grew=$(tail -n 1 growth.ndjson | jq .growth)
check_status "ms-diff --metric all --fail-on-growth below the growth" 1 \
	ms-diff -q --metric all --fail-on-growth $((grew - 1)) t1.ndjson t2.ndjson
check_status "ms-diff --metric all --fail-on-growth at the growth" 0 \
	ms-diff -q --metric all --fail-on-growth "$grew" t1.ndjson t2.ndjson
# The same program under another name (rebuilt as svc2): one program each,
# paired by default; every site matched, not "(new)".
cp "$EX/threads" threads2
ms-record -q -o t3.ndjson ./threads2 4 10000 >/dev/null 2>&1
ms-diff t1.ndjson t3.ndjson >renamed.ndjson
check_eq "ms-diff: one program each, renamed: paired, 1 matched" "1 0 0 threads threads2" \
	"$(tail -n 1 renamed.ndjson | jq -r '"\(.processes_matched) \(.processes_new) \(.processes_gone) \(.paired[0].before) \(.paired[0].after)"')"
# (the figures a run of threads has exactly: its peak depends on the
# scheduling)
exact='select(.type == "delta" and (.metric | test("^(allocs|live_bytes|leaked_bytes)$"))) | [.key, .name, .metric, .change]'
check_eq "ms-diff: renamed: the same deltas as under one name" \
	"$(jq -c "$exact" growth.ndjson | sort)" "$(jq -c "$exact" renamed.ndjson | sort)"
check_eq "ms-diff: renamed: no site is new" 0 "$(jq -c 'select(.type == "delta" and .status != "changed")' renamed.ndjson | wc -l)"
check_fgrep "ms-diff --text: renamed: says what it paired" "compared across names: threads -> threads2" \
	"$(ms-diff --text t1.ndjson t3.ndjson >renamed.txt; echo renamed.txt)"
check_eq "ms-diff --no-pair: renamed: 1 new, 1 gone" "0 1 1" \
	"$(ms-diff --no-pair t1.ndjson t3.ndjson | tail -n 1 | jq -r '"\(.processes_matched) \(.processes_new) \(.processes_gone)"')"
check_eq "ms-diff --pair: named, the same end" "$(tail -n 1 renamed.ndjson | jq -c 'del(.elapsed)')" \
	"$(ms-diff --pair threads=threads2 t1.ndjson t3.ndjson | tail -n 1 | jq -c 'del(.elapsed)')"
check_status "ms-diff --pair: a program the input does not hold" 2 ms-diff --pair threads=nope t1.ndjson t3.ndjson
check_fgrep "ms-diff --pair: names the input and the program" "t3.ndjson: no program 'nope' in it" "$OUT/last.err"
check_status "ms-diff --pair without =" 2 ms-diff --pair threads t1.ndjson t3.ndjson
check_one_line_error "--pair without =" "$OUT/last.err"
check_status "ms-diff: a snapshot and a recording" 2 ms-diff t1.ndjson snap.json
check_one_line_error "snapshot vs recording" "$OUT/last.err"
ms-report --md growth.ndjson >growth.md
check_fgrep "growth report: title" "## memscope growth report" growth.md
check_fgrep "growth report: the totals" "**Total live_bytes:" growth.md
check_fgrep "growth report: sites by allocations, largest first, with the stack" \
	"1. **+20,000** (20,000 → 40,000) at \`make_item threads.c:$L_item\`" growth.md
check_fgrep "growth report: stack frames" "   producer threads.c:" growth.md

# --- a snapshot -------------------------------------------------------------------
check_status "a snapshot" 0 ms-report snap.json
check_egrep "snapshot: the process table" "^ +$$ " "$OUT/last.out"

# --- bad input --------------------------------------------------------------------
n=$(wc -l <leaky.ndjson)
head -n $((n - 1)) leaky.ndjson >noend.ndjson
check_status "no end record" 2 ms-report --md noend.ndjson
check_one_line_error "no end record" "$OUT/last.err"
check_grep "no end record: says so on stderr" "cut short" "$OUT/last.err"
check_grep "no end record: says so in the report" "The stream was cut short" "$OUT/last.out"
check_fgrep "no end record: uses what it got" "### Leaks: 89,609 B in 1,020 blocks" "$OUT/last.out"
head -c $(($(wc -c <leaky.ndjson) - 20)) leaky.ndjson >cut.ndjson
check_status "a last line cut in the middle" 2 ms-report cut.ndjson
check_one_line_error "cut line" "$OUT/last.err"
check_grep "cut line: FILE:LINE" "cut.ndjson:$n:" "$OUT/last.err"
check_grep "cut line: the report of what was read" "LEAKS" "$OUT/last.out"
sed '5s/.*/{"type":"site",,}/' leaky.ndjson >badjson.ndjson
check_status "invalid JSON at line 5" 2 ms-report badjson.ndjson
check_one_line_error "invalid JSON" "$OUT/last.err"
check_grep "invalid JSON: FILE:LINE" "badjson.ndjson:5:" "$OUT/last.err"
sid=$(jq -r 'select(.type=="site") | .stack' leaky.ndjson | head -n 1)
sed "s/\"stack\":$sid,/\"stack\":999,/" leaky.ndjson >nostack.ndjson
check_status "a record referring to a stack never defined" 2 ms-report nostack.ndjson
check_one_line_error "undefined stack" "$OUT/last.err"
check_grep "undefined stack: says which" "stack 999, never defined" "$OUT/last.err"
ln=$(grep -n '"type":"site"' leaky.ndjson | head -1 | cut -d: -f1)
sed "${ln}s/\"allocs\":[0-9]*/\"allocs\":\"many\"/" leaky.ndjson >wrongtype.ndjson
check_status "a figure of the wrong type" 2 ms-report wrongtype.ndjson
check_grep "wrong type: names the member" '"allocs"' "$OUT/last.err"
check_grep "wrong type: names the line" "wrongtype.ndjson:$ln:" "$OUT/last.err"
: >empty.ndjson
check_status "empty input" 2 ms-report empty.ndjson
check_one_line_error "empty input" "$OUT/last.err"
check_empty "empty input: no report" "$OUT/last.out"
head -c 2048 /dev/urandom >junk.bin
check_status "binary junk" 2 ms-report junk.bin
check_one_line_error "binary junk" "$OUT/last.err"
# Counts near 2^64: sums are held at the top, never wrapped.  Two leaks of
# 2^63 blocks each came to "leaked 0 B" and passed the gate; a site of
# 2^64 - 2 allocations made the total less than the others' sum.  (python3:
# jq's numbers are doubles.)
huge() {	# huge OUT: leaky.ndjson with its two leaks of 2^63, a site of 2^64 - 2
	python3 -c '
import json, sys
site = False
for line in open("leaky.ndjson"):
    r = json.loads(line)
    if r["type"] == "leak":
        r["count"] = r["bytes"] = 2 ** 63
    elif r["type"] == "site" and not site:
        r["allocs"], site = 2 ** 64 - 2, True
    print(json.dumps(r))' >"$1"
}
huge huge.ndjson
check_status "2 x 2^63 leaked blocks: the gate fails" 1 ms-report --fail-on-leak huge.ndjson
check_grep "2 x 2^63 leaked blocks: held at 2^64 - 1" "fail-on-leak: 18446744073709551615 leaked blocks" \
	"$OUT/last.err"
ms-report huge.ndjson >huge.txt
check_grep "2 x 2^63 leaked blocks: not 0 B, not negative" \
	"leaked  *9,223,372,036,854,775,807 B  in 9,223,372,036,854,775,807 blocks" huge.txt
check_grep "a site of 2^64 - 2 allocations: the total held, not wrapped" \
	"allocations  *9,223,372,036,854,775,807 " huge.txt
# (--json's integers are signed 64-bit, as jansson's: held at 2^63 - 1)
check_eq "a site of 2^64 - 2 allocations: --json's total held, not negative" 9223372036854775807 \
	"$(ms-report --json huge.ndjson | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["allocs"])')"
# ms-diff's figures are signed: held at 2^63 - 1 too, never negative (2^63
# leaked bytes came out as -2^63), and a count past it is compared, not
# left out.
check_eq "ms-diff: 2^63 leaked bytes, held, grew" "9223372036854775807 9223372036854775807" \
	"$(ms-diff --metric leaked_bytes leaky.ndjson huge.ndjson | python3 -c '
import json, sys
d = [json.loads(l) for l in sys.stdin]
d = [r for r in d if r["type"] == "delta"]
print(min(r["after"] for r in d), max(r["after"] for r in d))')"
check_eq "ms-diff: a site of 2^64 - 2 allocations, held, compared" "9223372036854775807 1" \
	"$(ms-diff --metric allocs huge.ndjson leaky.ndjson | python3 -c '
import json, sys
d = [json.loads(l) for l in sys.stdin]
d = [r for r in d if r["type"] == "delta" and r["key"] == "site" and r["before"] > 2 ** 62]
print(d[0]["before"] if d else "none", len(d))')"

check_status "a file that does not exist" 2 ms-report no-such-file
check_one_line_error "no such file" "$OUT/last.err"
check_status "an unwritable -o" 2 ms-report -o /no-such-dir/x.md leaky.ndjson
check_one_line_error "unwritable -o" "$OUT/last.err"
finish
