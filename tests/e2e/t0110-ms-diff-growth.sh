#!/bin/sh
# ms-diff on the known answer of examples/memhog: between a snapshot before
# SIGUSR1 and one after "grown", the process's rss and its [anon] mappings
# grow by exactly 64 MiB (plus at most a page per mapping of bookkeeping).
# Thresholds (--fail-on-growth in bytes and percent, at the exact boundary),
# --min-change, the --text and --md tables, a reused pid, a self-diff.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

PAGE=$(getconf PAGESIZE)
MIB=64
GROWTH=$((MIB * 1024 * 1024))

start_memhog hog $MIB || finish
P=$HOG_PID
ms-snap -p $P >a.json 2>a.err
check_empty "ms-snap before: stderr" a.err
kill -USR1 $P
wait_for_line hog.log "^grown $MIB\$" || finish
ms-snap -p $P >b.json 2>b.err
check_empty "ms-snap after: stderr" b.err

ms-diff a.json b.json >d.json 2>d.err
check_eq "ms-diff: exit status" 0 $?
check_empty "ms-diff: stderr" d.err
check_status "ms-diff | jq ." 0 jq . d.json
check_eq "header: ms-diff, mode diff, inputs" "header ms-diff diff a.json b.json" \
	"$(head -n 1 d.json | jq -r '"\(.type) \(.tool) \(.mode) \(.before) \(.after)"')"
check_eq "last record is end" end "$(tail -n 1 d.json | jq -r .type)"

# ------------------------------------------------ the [anon] mappings
# The group may hold several mappings (the new one can merge with a
# neighbour or not): each may add at most a page of the kernel's own.
anon_count=$(jq 'select(.type == "mapping" and .name == "[anon]") | .count' b.json)
anon_change=$(jq "select(.type == \"delta\" and .key == \"mapping\" and .name == \"[anon]\"
	and .metric == \"rss\" and .pid == $P) | .change" d.json)
check_range "[anon] rss grew by $MIB MiB (+-1 page per mapping)" \
	$((GROWTH - PAGE * anon_count)) $((GROWTH + PAGE * anon_count)) "$anon_change"
check_eq "[anon] delta before/after are the snapshots' figures" \
	"$(jq 'select(.type == "mapping" and .name == "[anon]") | .rss' a.json) $(jq 'select(.type == "mapping" and .name == "[anon]") | .rss' b.json) changed anon" \
	"$(jq -r "select(.type == \"delta\" and .key == \"mapping\" and .name == \"[anon]\" and .metric == \"rss\") | \"\(.before) \(.after) \(.status) \(.kind)\"" d.json)"
check_eq "largest mapping growth first: [anon]" "[anon]" \
	"$(jq -r 'select(.type == "delta" and .key == "mapping")' d.json | jq -s -r '.[0].name')"
check_eq "no other mapping grew by a MiB" "[]" \
	"$(jq -s -c 'map(select(.type == "delta" and .key == "mapping" and .name != "[anon]" and .change >= 1048576) | .name)' d.json)"

# ---------------------------------------------------------- the process
rss_a=$(jq 'select(.type == "process") | .rss' a.json)
rss_b=$(jq 'select(.type == "process") | .rss' b.json)
growth=$((rss_b - rss_a))
check_range "process rss grew by $MIB MiB (+-4 pages)" $((GROWTH - 4 * PAGE)) $((GROWTH + 4 * PAGE)) \
	"$growth"
check_eq "process rss delta" "$rss_a $rss_b $growth changed memhog" \
	"$(jq -r "select(.type == \"delta\" and .key == \"process\" and .metric == \"rss\" and .pid == $P) |
		\"\(.before) \(.after) \(.change) \(.status) \(.comm)\"" d.json)"
check_eq "end: totals of rss, one process matched" "rss $rss_a $rss_b $growth 1 0 0" \
	"$(tail -n 1 d.json | jq -r '"\(.metric) \(.before) \(.after) \(.growth) \(.processes_matched) \(.processes_new) \(.processes_gone)"')"
check_eq "end counts the deltas" "$(jq -c 'select(.type == "delta")' d.json | wc -l)" \
	"$(tail -n 1 d.json | jq .deltas)"
check_eq "deltas are processes first, then mappings" "process mapping" \
	"$(jq -r 'select(.type == "delta") | .key' d.json | uniq | tr '\n' ' ' | sed 's/ $//')"
check_eq "unchanged figures are not listed" "[]" \
	"$(jq -s -c 'map(select(.type == "delta" and .change == 0) | .name)' d.json)"

# ------------------------------------------------------ --fail-on-growth
check_status "--fail-on-growth 32M: growth of 64M fails" 1 ms-diff --fail-on-growth 32M a.json b.json
check_grep "--fail-on-growth: says why on stderr" "grew by" "$OUT/last.err"
check_status "--fail-on-growth 128M: passes" 0 ms-diff --fail-on-growth 128M a.json b.json
check_empty "--fail-on-growth 128M: no message" "$OUT/last.err"
# The boundary: more than SIZE fails, exactly SIZE passes.
check_status "--fail-on-growth growth-1 bytes fails" 1 ms-diff -q --fail-on-growth $((growth - 1)) a.json b.json
check_empty "-q: no message" "$OUT/last.err"
check_status "--fail-on-growth = growth passes" 0 ms-diff --fail-on-growth $growth a.json b.json
check_status "--fail-on-growth with --text" 1 ms-diff --text --fail-on-growth 32M a.json b.json
check_grep "--text still printed when failing" '+64.0 MiB' "$OUT/last.out"
# Percentages of the total before: 64 MiB on a ~1.6 MiB process is ~4000%.
pct=$(awk -v g=$growth -v b=$rss_a 'BEGIN { printf "%.4f", 100 * g / b }')
lo=$(awk -v p=$pct 'BEGIN { printf "%.2f", p - 0.01 }')
hi=$(awk -v p=$pct 'BEGIN { printf "%.2f", p + 0.01 }')
check_status "--fail-on-growth 1000% fails" 1 ms-diff -q --fail-on-growth 1000% a.json b.json
check_status "--fail-on-growth $lo% (just below the real $pct%) fails" 1 \
	ms-diff -q --fail-on-growth "$lo%" a.json b.json
check_status "--fail-on-growth $hi% (just above the real $pct%) passes" 0 \
	ms-diff -q --fail-on-growth "$hi%" a.json b.json
check_status "--fail-on-growth abc is a usage error" 2 ms-diff --fail-on-growth abc a.json b.json
check_grep "usage error says how to get help" "Try 'ms-diff --help' for more information." "$OUT/last.err"

# ------------------------------------------------------- --min-change
# A known small change: b2 is b with 4096 more bytes of [stack] rss.
jq -c 'if .type == "mapping" and .name == "[stack]" then .rss += 4096 else . end' b.json >b2.json
stack_change() { jq "select(.type == \"delta\" and .name == \"[stack]\" and .metric == \"rss\") | .change" "$1"; }
ms-diff a.json b2.json >m0.json
check_eq "without --min-change: the 4 KiB [stack] change is listed" \
	"$(($(jq 'select(.type == "mapping" and .name == "[stack]") | .rss' b.json) + 4096 -
	    $(jq 'select(.type == "mapping" and .name == "[stack]") | .rss' a.json)))" "$(stack_change m0.json)"
ms-diff --min-change 1M a.json b2.json >m1.json
check_eq "--min-change 1M: nothing below 1 MiB" "[]" \
	"$(jq -s -c 'map(select(.type == "delta" and (.change | fabs) < 1048576) | "\(.name) \(.metric) \(.change)")' m1.json)"
check_eq "--min-change 1M: the [anon] growth is still there" "$anon_change" \
	"$(jq "select(.type == \"delta\" and .name == \"[anon]\" and .metric == \"rss\") | .change" m1.json)"
check_eq "--min-change 1M: the process growth is still there" "$growth" \
	"$(jq 'select(.type == "delta" and .key == "process" and .metric == "rss") | .change' m1.json)"
check_eq "--min-change 1M: recorded in the header" 1048576 "$(head -n 1 m1.json | jq .options.min_change)"
sc=$(stack_change m0.json)
check_eq "--min-change = the change keeps it" "$sc" "$(ms-diff --min-change $sc a.json b2.json | stack_change /dev/stdin)"
check_eq "--min-change = change+1 hides it" 0 \
	"$(ms-diff --min-change $((sc + 1)) a.json b2.json | jq -s 'map(select(.type == "delta" and .name == "[stack]")) | length')"
check_eq "--unchanged lists unchanged figures too" true \
	"$(ms-diff --unchanged a.json b.json | jq -s 'any(.[]; .type == "delta" and .change == 0)')"
check_eq "without --unchanged no unchanged figure" false \
	"$(ms-diff a.json b.json | jq -s 'any(.[]; .type == "delta" and .change == 0)')"
# --all, its name until 0.1.0 (ms-snap's every process), still works until 0.2.
check_status "--all, the old spelling of --unchanged" 0 ms-diff --all a.json b.json
check_eq "--all: the same records as --unchanged" "$(ms-diff --unchanged a.json b.json | sed 1d)" \
	"$(sed 1d "$OUT/last.out")"
check_eq "--all: a note on stderr" \
	"ms-diff: --all is an old spelling of --unchanged and goes in memscope 0.2" "$(cat "$OUT/last.err")"

# ------------------------------------------------------ --text and --md
ms-diff --text a.json b.json >d.txt 2>&1
check_eq "--text: exit status" 0 $?
check_egrep "--text: total rss line with +64.0 MiB" '^total rss: .* \(\+64\.0 MiB, \+[0-9.]+%\)$' d.txt
check_egrep "--text: the rss table" '^PROCESSES: RSS$' d.txt
check_egrep "--text: the inputs and the time between them" '^a\.json -> b\.json \([0-9]+\.[0-9] s later\)$' d.txt
check_eq "the end record's elapsed is the headers' start_epoch difference" \
	"$(( $(head -n 1 b.json | sed 's/.*"start_epoch":\([0-9]*\).*/\1/') - \
	     $(head -n 1 a.json | sed 's/.*"start_epoch":\([0-9]*\).*/\1/') ))" \
	"$(ms-diff a.json b.json | jq -r 'select(.type=="end").elapsed')"
check_egrep "--text: process row" "^ +\+64\.0 MiB +[0-9.]+ [KM]iB -> 65\.[0-9] MiB +$P memhog\$" d.txt
check_egrep "--text: [anon] row" "^ +\+64\.0 MiB +[0-9.]+ KiB -> 64\.0 MiB +$P memhog \[anon\]\$" d.txt
# ms-diff's report is the one ms-report makes of ms-diff's records.
ms-diff a.json b.json | ms-report >piped.txt
check_eq "--text: same as ms-diff | ms-report" "$(cat piped.txt)" "$(cat d.txt)"
ms-diff --md a.json b.json >d.md 2>&1
check_eq "--md: exit status" 0 $?
check_egrep "--md: total in bold" '^\*\*Total rss: .* \(\+64\.0 MiB, \+[0-9.]+%\)\*\*$' d.md
check_egrep "--md: the rss table" '^### Processes: rss$' d.md
check_egrep "--md: process row" "^\| \+64\.0 MiB \| .* \| 65\.[0-9] MiB \| \`$P memhog\` \|\$" d.md
check_egrep "--md: [anon] row" "^\| \+64\.0 MiB \| .* \| 64\.0 MiB \| \`$P memhog \[anon\]\` \|\$" d.md
ms-diff a.json b.json | ms-report --md >piped.md
check_eq "--md: same as ms-diff | ms-report --md" "$(cat piped.md)" "$(cat d.md)"
# --json: the document ms-report --json makes of the records.
check_status "--json: exit status" 0 ms-diff --json a.json b.json
mv "$OUT/last.out" report.json
ms-diff a.json b.json | ms-report --json >pipereport.json
check_eq "--json: same as ms-diff | ms-report --json" "$(cat pipereport.json)" "$(cat report.json)"
check_eq "--json: the totals of the end record" \
	"$(ms-diff a.json b.json | jq -c 'select(.type == "end") | [.metric, .before, .after, .growth, .processes_new, .processes_gone]')" \
	"$(jq -c '.diff | [.metric, .before, .after, .growth, .processes_new, .processes_gone]' report.json)"
check_eq "--json: the inputs" '["a.json","b.json"]' "$(jq -c .diff.inputs report.json)"
check_eq "--json: the process grew by the [anon] growth and more" true \
	"$(jq --argjson a "$anon_change" '[.deltas[] | select(.key == "process" and .metric == "rss")][0].change >= $a' report.json)"
check_eq "--json: deltas largest first" true "$(jq '[.deltas[].change] | . == (sort | reverse)' report.json)"
ms-diff --md -n 1 a.json b.json >top1.md
check_eq "--top 1: one row in the mappings' pss table" 1 \
	"$(sed -n '/^### Mappings: pss/,/^###/p' top1.md | grep -c '^| [+-]')"
check_egrep "--md: a table header" '^\|---:\|' d.md
ms-diff --text -o d2.txt a.json b.json >o.out 2>&1
check_empty "--text -o: nothing on stdout" o.out
check_eq "--text -o FILE: same table" "$(cat d.txt)" "$(cat d2.txt)"
ms-diff - b.json <a.json >stdin.json 2>&1
check_eq "BEFORE from stdin (-): same deltas" \
	"$(jq -c 'select(.type == "delta")' d.json)" "$(jq -c 'select(.type == "delta")' stdin.json)"

# ------------------------------------------------------- a reused pid
# Same pid, another start time: another process.  (jq rewrites every
# line; only the process's starttime changes meaning.)
jq -c 'if .type == "process" then .starttime += 1000000000 else . end' b.json >reused.json
ms-diff a.json reused.json >r.json 2>r.err
check_eq "reused pid: exit status" 0 $?
check_eq "reused pid: one gone, one new, none matched" "0 1 1" \
	"$(tail -n 1 r.json | jq -r '"\(.processes_matched) \(.processes_new) \(.processes_gone)"')"
check_eq "reused pid: old process rss gone" "gone $rss_a 0 -$rss_a" \
	"$(jq -r 'select(.type == "delta" and .key == "process" and .metric == "rss" and .status == "gone") | "\(.status) \(.before) \(.after) \(.change)"' r.json)"
check_eq "reused pid: new process rss new" "new 0 $rss_b $rss_b" \
	"$(jq -r 'select(.type == "delta" and .key == "process" and .metric == "rss" and .status == "new") | "\(.status) \(.before) \(.after) \(.change)"' r.json)"
check_eq "reused pid: nothing is matched across the two processes" "[]" \
	"$(jq -s -c 'map(select(.type == "delta" and .status == "changed") | .name)' r.json)"
check_eq "reused pid: [anon] rss of the new one is all new" \
	"new $(jq 'select(.type == "mapping" and .name == "[anon]") | .rss' b.json)" \
	"$(jq -r 'select(.type == "delta" and .name == "[anon]" and .metric == "rss" and .status == "new") | "\(.status) \(.change)"' r.json)"
ms-diff --text a.json reused.json >r.txt
check_grep "reused pid: --text says so" "1 new and 1 exited processes" r.txt
check_grep "reused pid: --text marks the old one gone" "memhog (gone)" r.txt

# --pair: the two processes compared as one, by pid or by name.
check_eq "--pair PID=PID: the reused pid compared as one process" "$(tail -n 1 d.json | jq -c '[.processes_matched, .processes_new, .processes_gone, .before, .after]')" \
	"$(ms-diff --pair $P=$P a.json reused.json | tail -n 1 | jq -c '[.processes_matched, .processes_new, .processes_gone, .before, .after]')"
check_eq "--pair NAME=NAME: and its mappings" "$(jq -c 'select(.type == "delta") | [.key, .name, .metric, .change]' d.json)" \
	"$(ms-diff --pair memhog=memhog a.json reused.json | jq -c 'select(.type == "delta") | [.key, .name, .metric, .change]')"
check_status "--pair: a pid the snapshot does not hold" 2 ms-diff --pair 1=$P a.json reused.json
check_fgrep "--pair: names the pid" "a.json: no process of pid '1' in it" "$OUT/last.err"

# ------------------------------------------------------------ self-diff
ms-diff a.json a.json >self.json 2>self.err
check_eq "self-diff: exit status" 0 $?
check_empty "self-diff: stderr" self.err
check_eq "self-diff: no deltas" 0 "$(jq -c 'select(.type == "delta")' self.json | wc -l)"
check_eq "self-diff: end growth 0, 1 matched" "0 0 1" \
	"$(tail -n 1 self.json | jq -r '"\(.deltas) \(.growth) \(.processes_matched)"')"
check_status "self-diff: --fail-on-growth 0 passes" 0 ms-diff --fail-on-growth 0 a.json a.json
check_status "self-diff: --fail-on-growth 0% passes" 0 ms-diff --fail-on-growth 0% a.json a.json
check_eq "self-diff --text: no changes" "  no changes" "$(ms-diff --text a.json a.json | tail -n 1)"
check_eq "self-diff --md: No changes." "No changes." "$(ms-diff --md a.json a.json | tail -n 1)"

finish
