#!/bin/sh
# Format version 2 (memscope-format(5)): ms-record writes each frame once
# and stacks that share their outer part through a parent; every reader
# takes it, and it says what version 1 said.  The same recording reports
# the same whether read as it is, after ms-filter --expand, or after the jq
# recipe of the man page (which gives back version 1); version 1 streams
# still read; and a real program's stacks are small.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

# The jq recipe, as memscope-format(5) prints it.
EXPAND_JQ=$(sed -n '/^jq \\-c \\-n .foreach inputs/,/\.out \/\/ empty)/p' "$TOP/man/memscope-format.5" |
	sed -e '1s/^jq \\-c \\-n .//' -e '$s/). rec\.ndjson$/)/' -e 's/\\-/-/g')
check_eq "the man page has the jq recipe" 11 "$(printf '%s\n' "$EXPAND_JQ" | wc -l)"
jq_v1() { jq -c -n "$EXPAND_JQ" "$1"; }

# frames_unique FILE: frame records that repeat an id or what another says.
frames_unique() {
	jq -r -s '[.[] | select(.type == "frame")] as $f
		| ($f | group_by(.id) | map(select(length > 1) | "id \(.[0].id) twice")[]),
		  ($f | map(del(.id)) | group_by(.) | map(select(length > 1) | "frame \(.[0]) twice")[])' "$1"
}

# --- (a) a v2 recording: each frame once, the same report every way ------------
check_status "leaky" 0 ms-record -q -o leaky.ndjson "$EX/leaky"
check_eq "header: version 2" 2 "$(jq -r 'select(.type == "header") | .version' leaky.ndjson)"
check_eq "a valid stream: frames and stacks once, before use" "" "$(valid_stream leaky.ndjson)"
check_eq "no frame written twice" "" "$(frames_unique leaky.ndjson)"
check_range "stacks name frame records" 1 100000 \
	"$(jq -r 'select(.type == "stack") | .frames[] | numbers' leaky.ndjson | wc -l)"
check_eq "no frame in place" 0 "$(jq -r 'select(.type == "stack") | .frames[] | objects' leaky.ndjson | wc -l)"
check_range "stacks share their outer part" 1 100000 \
	"$(jq -r 'select(.type == "stack" and .parent != null) | .id' leaky.ndjson | wc -l)"
# One frame record per code location and inline level: as many as the
# distinct frames of the stacks written whole.
check_eq "as many frames as distinct frames of the whole stacks" \
	"$(v1 leaky.ndjson | jq -c 'select(.type == "stack") | .frames[]' | sort -u | wc -l)" \
	"$(jq -r 'select(.type == "frame") | .id' leaky.ndjson | wc -l)"
check_status "--expand" 0 ms-filter --expand leaky.ndjson
mv last.out expanded.ndjson
check_eq "--expand: version 1" 1 "$(jq -r 'select(.type == "header") | .version' expanded.ndjson)"
check_eq "--expand: no frame records, no parents" 0 \
	"$(jq -r 'select(.type == "frame" or .parent != null) | .type' expanded.ndjson | wc -l)"
check_eq "--expand: every frame in place" 0 "$(jq -r 'select(.type == "stack") | .frames[] | numbers' expanded.ndjson | wc -l)"
check_eq "--expand: a valid stream" "" "$(valid_stream expanded.ndjson)"
jq_v1 leaky.ndjson >jq.ndjson
check_eq "jq recipe: version 1, frames in place" "1 0" \
	"$(jq -r -s '"\(.[0].version) \([.[] | select(.type == "stack") | .frames[] | numbers] | length)"' jq.ndjson)"
# The recipe writes every stack, also those only parents name; those that
# --expand writes (the ones records refer to) are the same.
jq -c 'select(.type == "stack")' expanded.ndjson | sort >x.stacks
check_eq "jq recipe and --expand: the same stacks" "$(cat x.stacks)" \
	"$(jq -c 'select(.type == "stack")' jq.ndjson | grep -F -x -f x.stacks | sort)"
for fmt in text md json collapsed; do
	ms-report --$fmt leaky.ndjson >v2.$fmt
	ms-report --$fmt expanded.ndjson >x.$fmt
	ms-report --$fmt jq.ndjson >jq.$fmt
	check_eq "--$fmt: the same report, read as it is and expanded" "$(cat v2.$fmt)" "$(cat x.$fmt)"
	check_eq "--$fmt: the same report from the jq recipe's version 1" "$(cat v2.$fmt)" "$(cat jq.$fmt)"
done
check_grep "the report has the known leak" "89,609 B  in 1,020 blocks" v2.text
check_grep "and its stack" "leak_small_mid leaky.c:" v2.text
# ms-diff matches by call path: the same recording either way, no change.
check_eq "ms-diff v2 against expanded: nothing changed" 0 \
	"$(ms-diff leaky.ndjson expanded.ndjson | jq -r 'select(.type == "delta") | .key' | wc -l)"
# ... and against the version 1 fixture of the same program: the same
# sites and leaks, by call path.
FIX=$TOP/tests/fixtures/report/leaky.ndjson
check_eq "ms-diff v2 against a v1 recording of leaky: nothing changed" 0 \
	"$(ms-diff leaky.ndjson "$FIX" | jq -r 'select(.type == "delta") | .key' | wc -l)"
ms-diff --unchanged leaky.ndjson "$FIX" >diff.ndjson
check_range "ms-diff --unchanged: stacks written" 5 1000 "$(jq -r 'select(.type == "stack") | .id' diff.ndjson | wc -l)"
check_eq "ms-diff: the stacks it writes are whole" "" "$(jq -r 'select(.type == "stack") | .frames[] | numbers' diff.ndjson)"
# Filters keep what a stack needs: a filter, then --expand, is the filter
# of the expanded stream, byte for byte.
for args in "--min 64" "--ignore libc" "--only leak_*" "--top 2" "--type leak" "--transient"; do
	# shellcheck disable=SC2086
	ms-filter -q $args leaky.ndjson >f.ndjson
	check_eq "$args: a valid stream" "" "$(valid_stream f.ndjson)"
	# shellcheck disable=SC2086
	check_eq "$args: the same as on the expanded stream" \
		"$(ms-filter -q $args expanded.ndjson)" "$(ms-filter --expand f.ndjson)"
done

# --events and --follow: stacks written as they come, for every process.
check_status "leaky --events" 0 ms-record -q -e -o events.ndjson "$EX/leaky"
check_eq "--events: a valid stream" "" "$(valid_stream events.ndjson)"
check_eq "--events: no frame written twice" "" "$(frames_unique events.ndjson)"
check_eq "--events: the same report expanded" "$(ms-report events.ndjson | md5sum)" \
	"$(ms-filter --expand events.ndjson | ms-report | md5sum)"
check_status "forkexec --follow" 0 ms-record -q -f -o follow.ndjson "$EX/forkexec"
check_range "--follow: several processes" 2 100 "$(jq -r 'select(.type == "header") | .pid' follow.ndjson | sort -u | wc -l)"
check_eq "--follow: a valid stream" "" "$(valid_stream follow.ndjson)"
for p in $(jq -r 'select(.type == "header") | .pid' follow.ndjson | sort -u); do
	ms-filter --pid "$p" follow.ndjson >p.ndjson
	check_eq "--follow: pid $p's own stream is valid" "" "$(valid_stream p.ndjson)"
	check_eq "--follow: pid $p, the same report expanded" "$(ms-report --json p.ndjson)" \
		"$(ms-filter --expand follow.ndjson | ms-filter --pid "$p" | ms-report --json)"
done

# --- (b) version 1 still reads ------------------------------------------------
check_eq "the fixture is version 1" "1 0" \
	"$(jq -r -s '"\(.[0].version) \([.[] | select(.type == "frame")] | length)"' "$FIX")"
check_eq "v1: ms-filter passes its stacks as they are" \
	"$(jq -c 'select(.type == "stack")' "$FIX" | sort)" "$(ms-filter "$FIX" | jq -c 'select(.type == "stack")' | sort)"
check_eq "v1: --expand changes nothing but what ms-filter adds" \
	"$(jq -c 'select(.type != "end")' "$FIX")" "$(ms-filter --expand "$FIX" | jq -c 'select(.type != "end")')"
check_eq "v1: ms-diff against itself: nothing changed" 0 \
	"$(ms-diff "$FIX" "$FIX" | jq -r 'select(.type == "delta") | .key' | wc -l)"
# A stream that mixes both forms, and stacks defined again (ms-snap joins
# the live records of several recordings): the latest definition counts.
{
	head -n 1 "$FIX"
	jq -c 'select(.type == "stack" and .id == 5)' "$FIX"
	echo '{"type":"frame","id":5,"fn":"second","file":"b.c","line":2,"obj":"/bin/b"}'
	echo '{"type":"stack","id":1,"frames":[5]}'
	echo '{"type":"stack","id":5,"parent":1,"frames":[{"fn":"first","file":"a.c","line":1,"obj":"/bin/a"}]}'
	echo '{"type":"leak","stack":5,"size":8,"fn":"malloc","kind":"definitely","count":1,"bytes":8}'
	echo '{"type":"end","reason":"exit","status":0}'
} >mixed.ndjson
check_status "mixed forms" 0 ms-report mixed.ndjson
check_grep "mixed: the stack as last defined" "first a.c:1" "$OUT/last.out"
check_grep "mixed: and its parent" "second b.c:2" "$OUT/last.out"
check_eq "mixed: expanded" '["first","second"]' \
	"$(ms-filter --expand mixed.ndjson | jq -c 'select(.type == "stack") | [.frames[].fn]')"

# Bad references are bad input, named by file and line, for every reader.
HDR=$(head -n 1 "$FIX")
printf '%s\n%s\n' "$HDR" '{"type":"stack","id":2,"parent":1,"frames":[]}' >noparent.ndjson
printf '%s\n%s\n%s\n' "$HDR" '{"type":"stack","id":1,"frames":[]}' \
	'{"type":"stack","id":1,"parent":1,"frames":[]}' >cycle.ndjson
for tool in ms-report ms-filter "ms-diff noparent.ndjson"; do
	# shellcheck disable=SC2086
	check_status "$tool: a parent never defined" 2 $tool noparent.ndjson
	check_one_line_error "$tool: a parent never defined" "$OUT/last.err"
	check_grep "$tool: says which line" "noparent.ndjson:2: stack record refers to parent stack 1, never defined" "$OUT/last.err"
done
# A later format version may mean other things by the same records: every
# reader says so and reads nothing (a version 99 header was read as ours).
jq -c 'if .type == "header" then .version = 99 else . end' "$FIX" >v99.ndjson
for tool in ms-report ms-filter "ms-diff $FIX"; do
	# shellcheck disable=SC2086
	check_status "$tool: format version 99" 2 $tool v99.ndjson
	check_one_line_error "$tool: format version 99" "$OUT/last.err"
	check_grep "$tool: version 99: says so" "v99.ndjson:1: format version 99 is newer than this memscope reads (1 to 2)" "$OUT/last.err"
	check_empty "$tool: version 99: writes nothing" "$OUT/last.out"
done
# JSON text is UTF-8: a name with a byte that is not (read inside a
# string) is passed on by ms-filter as \udcXX, as ms-record writes it.
printf '%s\n{"type":"frame","id":1,"fn":"f\377\303\251oo","obj":"/bin/x"}\n{"type":"stack","id":1,"frames":[1]}\n{"type":"leak","stack":1,"size":8,"fn":"malloc","kind":"definitely","count":1,"bytes":8}\n{"type":"end","reason":"exit","status":0}\n' "$HDR" >bad8.ndjson
check_status "ms-filter: a name not UTF-8" 0 ms-filter bad8.ndjson
cp "$OUT/last.out" got8
check_status "ms-filter: its output is UTF-8" 0 iconv -f UTF-8 -t UTF-8 got8
printf '"fn":"f\\udcff\303\251oo"\n' >want8
check_status "ms-filter: the byte as \\udcff, the rest as it was" 0 grep -Fqf want8 got8
check_status "a stack its own parent" 2 ms-report cycle.ndjson
check_grep "a cycle: says which line" "cycle.ndjson:3: stack 1: its parent chain leads back to itself" "$OUT/last.err"

# --- (d) readers stay linear in their input ------------------------------------
# A chain of 16,383 stacks, each its parent and one frame more, as deep as
# the format allows (896 KB): readers read a stack's frames only if a
# record names it, deepest first, a chain sharing one array; ms-diff
# matches by a hash worked out from the parent's, and writes the stacks
# it names as they came (own frames, parent).  Before, ms-report read
# every stack whole as it came: 10.5 GB and 50 s on this input, ms-diff
# 2 GB on a 4,000-deep one.  Under a 500 MB address-space limit each must
# read it (their figures exact); a sanitizer's shadow needs more.
chain() {	# chain N EVERY: N stacks, a site on every EVERY-th
	awk -v n="$1" -v every="$2" -v hdr="$HDR" 'BEGIN {
		print hdr
		print "{\"type\":\"frame\",\"id\":1,\"fn\":\"f\",\"file\":\"x.c\",\"line\":1,\"obj\":\"/bin/x\"}"
		print "{\"type\":\"stack\",\"id\":1,\"frames\":[1]}"
		for (k = 2; k <= n; k++)
			printf "{\"type\":\"stack\",\"id\":%d,\"parent\":%d,\"frames\":[1]}\n", k, k - 1
		for (k = n; k >= 1; k -= every)
			printf "{\"type\":\"site\",\"stack\":%d,\"size\":8,\"fn\":\"malloc\",\"allocs\":%d,\"frees\":0,\"bytes\":%d,\"live\":1,\"live_bytes\":8}\n", k, k, 8 * k
		print "{\"type\":\"end\",\"reason\":\"exit\",\"status\":0}"
	}'
}
chain 16383 16383 >deep.ndjson
chain 4000 1 >deep-sites.ndjson
chain 4000 2 >deep-half.ndjson
if ldd "$TOP/tools/ms-report" | grep -q libasan; then
	echo "  SKIP: tools built with sanitizers: readers under ulimit -v, and 3 s of CPU (30 here)" >&2
	lim=unlimited
	tlim=30
else
	lim=500000
	tlim=3
fi
under() { (ulimit -v $lim; exec "$@"); }
# Outputs list a stack's innermost 1,024 calls (four times the deepest
# ms-record captures), and say how many frames they leave out.
check_eq "a 16,383-deep chain: ms-report reads it, the site's stack listed to 1,024, the rest counted" \
	"1024 15359" \
	"$(under ms-report --json deep.ndjson | jq -r '.top.allocs[0] | "\(.stack | length) \(.stack_omitted)"')"
check_eq "a 4,000-deep chain, a site on each: the top ten's stacks as deep as their ids" \
	"$(seq 4000 -1 3991 | tr '\n' ' ')" \
	"$(under ms-report --json -n 10 deep-sites.ndjson | jq -r '[.top.allocs[] | .stack_omitted + (.stack | length)] | map(tostring + " ") | add')"
check_eq "a 1,024-deep stack is listed whole" "1024 null" \
	"$(under ms-report --json -n 3000 deep-sites.ndjson | jq -r '.top.allocs[] | select(.stack | length == 1024) | select(.stack_omitted == null) | "\(.stack | length) \(.stack_omitted)"')"
check_eq "ms-diff: against itself, nothing changed" 0 \
	"$(under ms-diff deep-sites.ndjson deep-sites.ndjson | grep -c '"type":"delta"')"
under ms-diff deep-half.ndjson deep-sites.ndjson >deep-diff.ndjson
check_eq "ms-diff: the 2,000 sites the second adds are new, each its own call path" "2000 0" \
	"$(jq -r -s '[.[] | select(.type == "delta" and .metric == "allocs")] | "\([.[] | select(.status == "new")] | length) \([.[] | select(.status != "new")] | length)"' deep-diff.ndjson)"
# The diff's stacks: each written once, its own frame and its parent, so
# no longer than the input's (written whole they would be 8 MB).
check_range "ms-diff: its stack records as long as the input's" 1 \
	"$(grep '"type":"stack"' deep-sites.ndjson | wc -c)" "$(grep '"type":"stack"' deep-diff.ndjson | wc -c)"
check_eq "ms-diff: its stacks read back whole: the deepest new site's" 3999 \
	"$(ms-report --json -n 1 deep-diff.ndjson | jq '.deltas[0] | .stack_omitted + (.stack | length)' 2>/dev/null || echo none)"
check_eq "ms-filter: passes the chain on" "$(grep -c . deep.ndjson)" \
	"$(under ms-filter deep.ndjson | grep -c .)"
# The flame graphs of 16,383 sites, one on each stack of the chain: the
# tree is built once per stack, from its parent's node (it was built per
# site from the outermost frame: 13.5 s of CPU for the svg, 10 for the
# html; 0.05 s now).  3 s of CPU is the bound (ulimit -t), the same tree
# drawn: the chain's frames, but the few narrower than a pixel.
chain 16383 1 >deep-all.ndjson
cpu() { (ulimit -t $tlim; exec "$@"); }
check_status "a site on each of 16,383 chained stacks: --svg within 3 s of CPU" 0 \
	cpu ms-report --svg -o deep-all.svg deep-all.ndjson
check_status "a site on each of 16,383 chained stacks: --html within 3 s of CPU" 0 \
	cpu ms-report --html -o deep-all.html deep-all.ndjson
check_range "--svg: the chain's frames, one under the other" 16000 16383 \
	"$(grep -c '<title>f$' deep-all.svg)"
# The outputs that list stacks (--json, --pprof, --collapsed): at most
# 1,024 calls of each, so time and memory linear in the sites (the JSON
# report listing every frame took 14 s and 4 GB for -n 100, --pprof 12 s
# and 1.2 GB).  A frame's JSON object is made once and shared.
check_status "16,383 chained stacks: --json -n 100 within 3 s of CPU" 0 \
	cpu ms-report --json -n 100 -o deep-all.json deep-all.ndjson
check_eq "--json -n 100: a hundred sites, each its innermost 1,024 calls" "100 1024" \
	"$(jq -r '.top.allocs | "\(length) \(map(.stack | length) | min)"' deep-all.json)"
check_status "16,383 chained stacks: --pprof within 3 s of CPU and 500 MB" 0 \
	sh -c "ulimit -v $lim; ulimit -t $tlim; exec ms-report --pprof -o deep-all.pb.gz deep-all.ndjson"
check_status "16,383 chained stacks: --collapsed within 3 s of CPU" 0 \
	cpu ms-report --collapsed --cost bytes -o deep-all.collapsed deep-all.ndjson
check_eq "--collapsed: every stack, those past the header's depth [truncated] at their root" "16383 16320 1025" \
	"$(awk '{ n++ } /^\[truncated\];/ { t++ } { d = split($1, x, ";"); if (d > m) m = d } END { print n, t, m }' deep-all.collapsed)"
# Out of memory making the JSON document: said, exit 2, nothing written
# (a member jansson could not allocate would silently be missing).
if [ "$lim" != unlimited ]; then
	check_status "--json out of memory: exit 2" 2 \
		sh -c "ulimit -v 150000; exec ms-report --json -n 20000 -o oom.json deep-all.ndjson"
	check_grep "--json out of memory: says so" "out of memory making the report" "$OUT/last.err"
fi
# Function names of a megabyte (48 s in --text once): shortened where a
# report shows them, the report as short as with any name.
HDR="$HDR" python3 -c '
import os
n = "a" * 1000000
print(os.environ["HDR"])
for k in range(1, 4):
    print("{\"type\":\"frame\",\"id\":%d,\"fn\":\"%s%d\",\"file\":\"x.c\",\"line\":1,\"obj\":\"/bin/x\"}" % (k, n, k))
print("{\"type\":\"stack\",\"id\":1,\"frames\":[1,2,3]}")
print("{\"type\":\"leak\",\"stack\":1,\"size\":8,\"fn\":\"malloc\",\"kind\":\"definitely\",\"count\":1,\"bytes\":8}")
print("{\"type\":\"end\",\"reason\":\"exit\",\"status\":0}")' >bigname.ndjson
for fmt in text md; do
	check_range "names of 1 MB: --$fmt as short as any report" 1 20000 \
		"$(under ms-report --$fmt bigname.ndjson | wc -c)"
done

# --- (e) a real program's stacks are small ---------------------------------------
# python3 (with its debug information when python3-dbg is there: inlined
# frames, lines) building a 200,000-entry dict, every object a malloc.
# Measured at the commit that brought version 2: 5,671 stacks written whole
# (version 1) are 58,725,635 bytes; version 2 writes them, and the 2,071
# stacks of their shared outer parts, in 7,742 stack records (656,288 bytes)
# and 4,309 frame records (967,728 bytes), 1,624,016 bytes in all.  Without
# python's debug information there are fewer, shorter frames.  The bound,
# 3,000,000 bytes, leaves room for another python or libc (more frames,
# longer paths) and still fails if frames were written once per stack
# again; and version 2 must stay under a tenth of version 1.
PY=/usr/bin/python3
cat >dict.py <<'EOF'
d = {}
for i in range(200000):
    d[str(i)] = [i, str(i * 2)]
EOF
PYTHONMALLOC=malloc ms-record -q -o py.ndjson "$PY" dict.py
check_eq "python: recorded" exit "$(jq -r 'select(.type == "end") | .reason' py.ndjson)"
sf=$(grep -E '^\{"type":"(stack|frame)"' py.ndjson | wc -c)
v1sf=$(v1 py.ndjson | grep -E '^\{"type":"stack"' | wc -c)
check_range "python: stack and frame records under 3,000,000 bytes (version 1: $v1sf)" 1 3000000 "$sf"
check_range "python: under a tenth of version 1" 1 $((v1sf / 10)) "$sf"
check_range "python: the whole recording under 10 MB" 1 10000000 "$(wc -c <py.ndjson)"
check_eq "python: no frame written twice" "" "$(frames_unique py.ndjson)"
check_eq "python: the same report expanded" "$(ms-report py.ndjson | md5sum)" "$(v1 py.ndjson | ms-report | md5sum)"
finish
