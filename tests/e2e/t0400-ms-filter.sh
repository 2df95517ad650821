#!/bin/sh
# ms-filter on the known-answer examples: --min/--max keep exactly the sites
# of their sizes, --ignore attributes allocations past wrappers such as
# strdup (so --ignore libc drops libc's own buffers, not the program's
# strdup'ed leaks), suppressions remove exactly the named leaks and count
# them as LeakSanitizer does, --transient agrees with the lifetimes
# ms-record measured, and the output is always a valid stream whose end
# record says what was filtered out.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2
SRC="$TOP/examples"

ms-record -q -o leaky.ndjson "$EX/leaky" >/dev/null 2>&1
ms-record -q -o wordfreq.ndjson "$EX/wordfreq" >/dev/null 2>&1

# sites FILE: "stack size size_max allocs bytes" of every site, sorted.
sites() {
	jq -r 'select(.type=="site") | "\(.stack) \(.size) \(.size_max // .size) \(.allocs) \(.bytes)"' "$1" | sort
}

# --- --min / --max ----------------------------------------------------------
check_status "--min 64" 0 ms-filter --min 64 leaky.ndjson
mv "$OUT/last.out" min.ndjson
check_eq "--min 64: a valid stream" "" "$(valid_stream min.ndjson)"
check_eq "--min 64 keeps exactly the sites of 64 B and more" \
	"$(jq -r 'select(.type=="site" and (.size_max // .size) >= 64) | "\(.stack) \(.size) \(.size_max // .size) \(.allocs) \(.bytes)"' leaky.ndjson | sort)" \
	"$(sites min.ndjson)"
check_eq "--min 64: no smaller site" "" \
	"$(jq -r 'select(.type=="site" and (.size_max // .size) < 64) | .size' min.ndjson)"
check_eq "--min 64: the leaks left (size count bytes)" \
	"$(printf '100 5 500\n4096 10 40960\n64 1 64\n64 1 64')" \
	"$(jq -r 'select(.type=="leak") | "\(.size) \(.count) \(.bytes)"' min.ndjson | sort)"
# The 48-byte leak (1000 blocks) and the three 7-byte strdups went.
check_eq "--min 64: end says what went" '{"records":4,"blocks":1003,"bytes":48021}' \
	"$(jq -c 'select(.type=="end") | .filtered.leak' min.ndjson)"
check_eq "--min 64: end names the filter" '["--min 64"]' "$(jq -c 'select(.type=="end") | .filters' min.ndjson)"
check_eq "--min 64: filtered sites counted" \
	"$(jq -s -c '[.[] | select(.type=="site" and (.size_max // .size) < 64)] | {records: length, bytes: (map(.bytes) | add)}' leaky.ndjson)" \
	"$(jq -c 'select(.type=="end") | .filtered.site' min.ndjson)"
check_eq "--min 64: the end record keeps the recording's totals" \
	"$(jq -c 'select(.type=="end") | [.allocs, .frees, .leaked_bytes, .peak]' leaky.ndjson)" \
	"$(jq -c 'select(.type=="end") | [.allocs, .frees, .leaked_bytes, .peak]' min.ndjson)"
ms-filter --max 63 leaky.ndjson >max.ndjson
check_eq "--max 63 and --min 64 split the sites" "$(sites leaky.ndjson)" \
	"$(cat min.ndjson max.ndjson | jq -r 'select(.type=="site") | "\(.stack) \(.size) \(.size_max // .size) \(.allocs) \(.bytes)"' | sort)"
check_eq "--min 1K" "4096" "$(ms-filter --min 1K leaky.ndjson | jq -r 'select(.type=="site") | .size')"

# --- --ignore: attribution past pass-through wrappers --------------------------
# wordfreq: libc allocates for itself (fopen's FILE and buffer, the stdout
# buffer, opendir's DIR, localtime's time zone); the program leaks a getline
# buffer and three strdup'ed words.
# top_fns FILE: the innermost function of each site's stack, sorted, unique.
top_fns() {
	v1 "$1" | jq -r -s '(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames[0].fn}) | from_entries) as $fn
		| .[] | select(.type=="site") | $fn[.stack|tostring]' | sort -u
}
check_eq "wordfreq: libc's own allocations are there before filtering" \
	"$(printf '_IO_file_doallocate\n__alloc_dir\n__fopen_internal')" \
	"$(top_fns wordfreq.ndjson | grep -E '^(_IO_file_doallocate|__alloc_dir|__fopen_internal)$')"
check_status "--ignore libc" 0 ms-filter --ignore libc wordfreq.ndjson
mv "$OUT/last.out" nolibc.ndjson
check_eq "--ignore libc: a valid stream" "" "$(valid_stream nolibc.ndjson)"
# What is left: the program's own strdup and getline calls, attributed to
# the functions that called them.
check_eq "--ignore libc: only the program's sites are left (innermost frame, caller)" \
	"$(printf '__getdelim read_words\n__strdup keep_word\n__strdup make_title\n__strdup read_words\n__vasprintf_internal make_title')" \
	"$(v1 nolibc.ndjson | jq -r -s '(map(select(.type=="stack")) | map({key: (.id|tostring), value: (.frames | map(.fn))}) | from_entries) as $f
		| .[] | select(.type=="site") | $f[.stack|tostring]
		| "\(.[0]) \(map(select(ltrimstr("__") as $b | ["strdup", "getdelim", "getline", "vasprintf_internal",
			"asprintf", "realpath_stk", "realpath"] | index($b) | not))[0])"' | sort -u)"
check_eq "--ignore libc: the program's leaks stay (size count kind)" \
	"$(printf '120 1 definitely\n2 1 definitely\n6 3 definitely\n8 1 definitely')" \
	"$(jq -r 'select(.type=="leak") | "\(.size) \(.count) \(.kind)"' nolibc.ndjson | sort)"
check_eq "--ignore libc: the leaked total is the program's own" "148 6" \
	"$(jq -s -r '[.[] | select(.type=="leak" and .kind=="definitely")] | "\(map(.bytes)|add) \(map(.count)|add)"' nolibc.ndjson)"
check_eq "--ignore libc: strdup called by libc itself (tzset) goes" "" \
	"$(v1 nolibc.ndjson | jq -r -s '(map(select(.type=="stack")) | map(select(.frames[1].fn == "tzset_internal")) | map(.id)) as $ids
		| .[] | select(.type=="site" and (.stack as $s | $ids | index($s))) | .size')"
check_eq "-I is --ignore" "$(cat nolibc.ndjson)" "$(ms-filter -I libc wordfreq.ndjson)"
# -i, its letter until 0.1.0 (ms-record's --interval), still works until 0.2.
check_status "-i, the old spelling of -I" 0 ms-filter -i libc wordfreq.ndjson
check_eq "-i: the same records as -I" "$(cat nolibc.ndjson)" "$(cat "$OUT/last.out")"
check_eq "-i: a note on stderr" "ms-filter: -i is an old spelling of -I (--ignore) and goes in memscope 0.2" \
	"$(cat "$OUT/last.err")"
check_eq "leaky: --ignore libc keeps the strdup'ed leaks" "1 7 definitely 7
1 7 definitely 7
1 7 definitely 7" "$(ms-filter --ignore libc leaky.ndjson >il.ndjson; leaks_in il.ndjson __strdup)"
check_eq "leaky: --ignore libc drops nothing else" "89609 1020" \
	"$(jq -s -r '[.[] | select(.type=="leak")] | "\(map(.bytes)|add) \(map(.count)|add)"' il.ndjson)"
# Patterns: a function (with its frame attributed), a source file, a module.
check_eq "--ignore leak_small_inner drops the 48-byte site and leak" "0 0" \
	"$(ms-filter --ignore leak_small_inner leaky.ndjson | jq -s -r '[[.[] | select(.type=="site" and .size==48)] | length, ([.[] | select(.type=="leak" and .size==48)] | length)] | join(" ")')"
check_eq "--ignore of a caller's function drops nothing (attribution is the innermost frame)" \
	"$(sites leaky.ndjson)" "$(ms-filter --ignore leak_small_mid leaky.ndjson | sites /dev/stdin)"
check_eq "--ignore-frame of a caller's function drops its sites" "" \
	"$(ms-filter --ignore-frame leak_small_mid leaky.ndjson | jq -r 'select(.type=="site" and .size==48) | .size')"
check_eq "--ignore 'leak_*' (a glob)" "churn" \
	"$(ms-filter --ignore 'leak_*' leaky.ndjson >glob.ndjson; top_fns glob.ndjson)"
check_eq "--ignore leaky.c (a source file) drops all the program's sites" "0" \
	"$(ms-filter --ignore leaky.c leaky.ndjson | jq -s '[.[] | select(.type=="site")] | length')"
check_eq "--only leak_name keeps the strdup sites" "3 21" \
	"$(ms-filter --only leak_name leaky.ndjson | jq -s -r '[.[] | select(.type=="site")] | "\(length) \(map(.bytes)|add)"')"
nsites=$(jq -s '[.[] | select(.type=="site")] | length' leaky.ndjson)
check_eq "--ignore run: run allocates nothing itself" "$nsites" \
	"$(ms-filter --ignore run leaky.ndjson | jq -s '[.[] | select(.type=="site")] | length')"
check_eq "--alloc-fn leak_name: its strdups are run's, and go with --ignore run" "$((nsites - 3))" \
	"$(ms-filter --alloc-fn leak_name --ignore run leaky.ndjson | jq -s '[.[] | select(.type=="site")] | length')"
# ms-record --alloc-fn: the header carries it, ms-filter and ms-report use it
check_status "ms-record --alloc-fn leak_name" 0 ms-record -q --alloc-fn leak_name -o leaky-af.ndjson "$EX/leaky"
check_eq "ms-record --alloc-fn: in the header's options" '["leak_name"]' \
	"$(jq -c 'select(.type=="header") | .options.alloc_fns' leaky-af.ndjson)"
check_eq "ms-record --alloc-fn: ms-filter --ignore run drops what leak_name strdup'ed" "$((nsites - 3))" \
	"$(ms-filter --ignore run leaky-af.ndjson | jq -s '[.[] | select(.type=="site")] | length')"
check_eq "ms-record --alloc-fn: ms-report attributes the strdups to run" \
	"$(printf 'run leaky.c:%s\n' $(line_of "$TOP/examples/leaky.c" 'leak_name("abcdef");') \
		$(line_of "$TOP/examples/leaky.c" 'leak_name("ghijkl");') $(line_of "$TOP/examples/leaky.c" 'leak_name("mnopqr");'))" \
	"$(ms-report --md --sections leaks leaky-af.ndjson | sed -n 's/.* of 7 B from `malloc` at `\([^`]*\)`.*/\1/p')"

# --- suppressions -----------------------------------------------------------
cat >supp.txt <<'EOF'
# leaks we know about

leak:leak_small_mid
leak:^leak_aligned$
leak:strdup
leak:never_called_anywhere
EOF
check_status "--suppressions" 0 ms-filter --suppressions supp.txt leaky.ndjson
mv "$OUT/last.out" supp.ndjson
cp "$OUT/last.err" supp.err
check_eq "suppressions: exactly the named leaks go (size count)" \
	"$(printf '100 5\n4096 10')" \
	"$(jq -r 'select(.type=="leak") | "\(.size) \(.count)"' supp.ndjson | sort)"
check_eq "suppressions: sites are not leaks, they stay" "$(sites leaky.ndjson)" "$(sites supp.ndjson)"
check_eq "suppressions: LeakSanitizer's table with hit counts and bytes" \
	"-----------------------------------------------------
Suppressions used:
  count      bytes template
   1000      48000 leak_small_mid
      2        128 ^leak_aligned\$
      3         21 strdup
-----------------------------------------------------" "$(cat supp.err)"
check_eq "suppressions: end counts them" '{"records":6,"blocks":1005,"bytes":48149}' \
	"$(jq -c 'select(.type=="end") | .filtered.leak' supp.ndjson)"
printf 'leak:leak_small_in?er\nleak:leak_[a-z]*\n' >literal.txt
check_eq "suppressions: '?' and '[' are themselves, as in LeakSanitizer" "8" \
	"$(ms-filter -q -s literal.txt leaky.ndjson | jq -s '[.[] | select(.type=="leak")] | length')"
printf 'leak:ok\n# fine\nleek:typo\n' >badsupp.txt
check_status "a bad suppressions line" 2 ms-filter -s badsupp.txt leaky.ndjson
check_one_line_error "bad suppressions line" "$OUT/last.err"
check_grep "bad suppressions line: FILE:LINE" "badsupp.txt:3:" "$OUT/last.err"
check_empty "bad suppressions: nothing written" "$OUT/last.out"
printf 'leak:\n' >emptypat.txt
check_status "an empty suppression pattern" 2 ms-filter -s emptypat.txt leaky.ndjson
check_grep "empty pattern: FILE:LINE" "emptypat.txt:1:" "$OUT/last.err"
check_status "a missing suppressions file" 2 ms-filter -s no-such-file leaky.ndjson
check_one_line_error "missing suppressions file" "$OUT/last.err"

# --- --transient --------------------------------------------------------------
ms-record -q --events -o leaky-ev.ndjson "$EX/leaky" >/dev/null 2>&1
check_status "--transient on events" 0 ms-filter --transient leaky-ev.ndjson
mv "$OUT/last.out" tr.ndjson
check_eq "--transient: a valid stream" "" "$(valid_stream tr.ndjson)"
# ms-record measured every block's lifetime: the sites' ages[0..3] count
# the frees of blocks younger than 1 ms.  Exactly those allocs and frees go.
short=$(jq -s '[.[] | select(.type=="site") | .ages[0:4] | add] | add' leaky-ev.ndjson)
check_eq "--transient drops the allocs of blocks freed within 1 ms" "$short" \
	"$(jq 'select(.type=="end") | .filtered.alloc.records' tr.ndjson)"
check_eq "--transient drops their frees" "$short" "$(jq 'select(.type=="end") | .filtered.free.records' tr.ndjson)"
check_eq "--transient keeps the rest of the allocs" \
	"$(($(jq -c 'select(.type=="alloc")' leaky-ev.ndjson | wc -l) - short))" \
	"$(jq -c 'select(.type=="alloc")' tr.ndjson | wc -l)"
check_eq "--transient: events stay in time order" "" \
	"$(jq -r -s '[.[] | select(.ts != null and (.type=="alloc" or .type=="free")) | .ts] as $t
		| [range(1; $t | length) | select($t[.] < $t[. - 1])] | .[0:1][] | "out of order at \(.)"' tr.ndjson)"
check_eq "--transient keeps every leak" "89609 1020" \
	"$(ms-report --json tr.ndjson | jq -r '.summary | "\(.leaked_bytes) \(.leaked_blocks)"')"
# On aggregates: the 16-byte churn site (an exact size) loses its short-lived
# blocks.  Its blocks all live a few microseconds, and how many outlive 1 ms
# depends on the machine: aged.ndjson moves 1000 of them to the 10-100 ms
# bucket, so that the site is trimmed, not dropped, on every machine.
L94=$(line_of "$SRC/leaky.c" "q = malloc(16);")
sid=$(v1 leaky.ndjson | jq -s -r --argjson l "$L94" '.[] | select(.type=="stack" and .frames[0].line == $l) | .id')
jq -c --argjson s "$sid" 'if .type == "site" and .stack == $s then .ages[0] -= 1000 | .ages[5] += 1000 else . end' \
	leaky.ndjson >aged.ndjson
before=$(jq -r --argjson s "$sid" 'select(.type=="site" and .stack==$s) | "\(.allocs) \(.ages[0:4] | add)"' aged.ndjson)
check_eq "--transient on aggregates: the site keeps its long-lived blocks" \
	"$(echo "$before" | awk '{ print $1 - $2 }')" \
	"$(ms-filter --transient aged.ndjson 2>/dev/null | jq -s -r --argjson s "$sid" '[.[] | select(.type=="site" and .stack==$s) | .allocs] | add // 0')"
# What --transient takes out of the sites it keeps is counted as trimmed, so
# site bytes kept + dropped + trimmed add up to the recording's, with or
# without --top (which drops some trimmed sites whole).
site_bytes=$(jq -s '[.[] | select(.type=="site") | .bytes] | add' aged.ndjson)
trim=$(echo "$before" | awk '{ print $2 }')
for top in "" "--top 1" "--top 3"; do
	# shellcheck disable=SC2086
	ms-filter --transient $top aged.ndjson >trim.ndjson 2>/dev/null
	check_eq "--transient $top: trimmed allocations counted in the end record" "$trim" \
		"$(jq 'select(.type=="end") | .filtered.site.trimmed_allocs' trim.ndjson)"
	check_eq "--transient $top: site bytes kept + dropped + trimmed = recorded" "$site_bytes" \
		"$(jq -s '([.[] | select(.type=="site") | .bytes] | add) + (.[-1].filtered.site.bytes // 0) + .[-1].filtered.site.trimmed_bytes' trim.ndjson)"
done
check_eq "--transient twice: trimmed counted once" "$trim" \
	"$(ms-filter --transient aged.ndjson 2>/dev/null | ms-filter --transient 2>/dev/null | jq 'select(.type=="end") | .filtered.site.trimmed_allocs')"
check_status "--min-age 100us on aggregates warns of the rounding" 0 ms-filter --min-age 100us leaky.ndjson
check_eq "--min-age 100us: a decade, no warning" "" "$(cat "$OUT/last.err")"
check_status "--min-age 300us on aggregates" 0 ms-filter --min-age 300us leaky.ndjson
check_grep "--min-age 300us: says it was rounded" "rounded" "$OUT/last.err"

# --- --type, --pid, --top, chains, other streams --------------------------------
check_eq "--type leak: only leaks (and header, end, their frames and stacks)" "end frame header leak stack" \
	"$(ms-filter --type leak leaky.ndjson | jq -r .type | sort -u | tr '\n' ' ' | sed 's/ $//')"
ms-record -q --follow -o follow.ndjson "$EX/forkexec" >/dev/null 2>&1
child=$(jq -r 'select(.type=="header") | .pid' follow.ndjson | sed -n 2p)
check_status "--pid CHILD" 0 ms-filter --pid "$child" follow.ndjson
mv "$OUT/last.out" child.ndjson
check_eq "--pid: one stream, the child's" "$child" "$(jq -r 'select(.type=="header" or .type=="end") | .pid' child.ndjson | sort -u)"
check_eq "--pid: a valid stream" "" "$(valid_stream child.ndjson)"
# The child forked (a stream that ends in exec), then ran leaky: two streams.
check_eq "--pid: the child's two streams, each with its end" "2 2" \
	"$(jq -s -r '"\([.[] | select(.type=="header")] | length) \([.[] | select(.type=="end")] | length)"' child.ndjson)"
# Each end record counts the drops of its own stream, also for a pid that
# exec'ed (two streams): kept + dropped sites add up to those recorded.
ms-filter --min 1M follow.ndjson >follow-min.ndjson
check_eq "--min 1M on --follow: every end counts its own stream's drops" \
	"$(jq -s '[.[] | select(.type=="site")] | length' follow.ndjson)" \
	"$(jq -s '([.[] | select(.type=="site")] | length) + ([.[] | select(.type=="end") | .filtered.site.records // 0] | add)' follow-min.ndjson)"
# A munmap has no stack: it passes, and the mapping it ends is not left live.
cat >mm.ndjson <<'EOF'
{"type":"header","format":"memscope","version":1,"tool":"ms-record","mode":"launch","pid":42,"argv":["mm"]}
{"type":"stack","id":1,"frames":[{"fn":"map_it","file":"mm.c","line":5,"obj":"mm","off":"0x1100"},{"fn":"main","file":"mm.c","line":9,"obj":"mm","off":"0x1040"}]}
{"type":"mmap","ts":1000,"tid":42,"addr":"0x7f0000000000","size":1048576,"stack":1}
{"type":"munmap","ts":2000,"tid":42,"addr":"0x7f0000000000","size":1048576}
{"type":"end","pid":42,"reason":"exit","status":0,"ts":3000}
EOF
# A stack id past 32 bits is bad input (records name stacks by 32-bit ids).
sed 's/"id":1,/"id":4294967297,/; s/"stack":1}/"stack":4294967297}/' mm.ndjson >bigid.ndjson
check_status "a stack id past 32 bits" 2 ms-filter --only main bigid.ndjson
check_one_line_error "a stack id past 32 bits" "$OUT/last.err"
# Frames that are neither objects nor frame ids, and ids of frame records
# that are not there: bad input, named by its line, for both tools.
printf '%s\n' "$(head -n 1 mm.ndjson)" '{"type":"stack","id":1,"frames":["a"]}' >badframes.ndjson
printf '%s\n' "$(head -n 1 mm.ndjson)" '{"type":"stack","id":1,"frames":[1,2]}' >noframes.ndjson
for tool in ms-filter ms-report; do
	check_status "$tool: frames that are not objects" 2 $tool badframes.ndjson
	check_grep "$tool: the error names line 2" "badframes.ndjson:2: stack frames must be objects or frame ids" "$OUT/last.err"
	check_status "$tool: frames never defined" 2 $tool noframes.ndjson
	check_grep "$tool: the error names line 2" "noframes.ndjson:2: stack record refers to frame 1, never defined" "$OUT/last.err"
done
for args in "--only main" "--max 4096" "--transient --only main"; do
	# shellcheck disable=SC2086
	check_eq "$args: the munmap passes" 1 "$(ms-filter $args mm.ndjson | jq -s '[.[] | select(.type=="munmap")] | length')"
	# shellcheck disable=SC2086
	check_eq "$args: nothing left leaked" 0 "$(ms-filter $args mm.ndjson | ms-report --json | jq .summary.leaked_bytes)"
done
check_eq "--top 2: the two largest sites by bytes" \
	"$(jq -r 'select(.type=="site") | .bytes' leaky.ndjson | sort -rn | head -2 | tr '\n' ' ')" \
	"$(ms-filter --top 2 leaky.ndjson | jq -r 'select(.type=="site") | .bytes' | tr '\n' ' ')"
check_eq "--top 2: the two largest leaks" "48000 40960 " \
	"$(ms-filter --top 2 leaky.ndjson | jq -r 'select(.type=="leak") | .bytes' | tr '\n' ' ')"
check_eq "--top 2: the end counts the leaks it dropped" '{"records":6,"blocks":10,"bytes":649}' \
	"$(ms-filter --top 2 leaky.ndjson | jq -c 'select(.type=="end") | .filtered.leak')"
check_eq "--top 2 --transient: two sites" 2 \
	"$(ms-filter --top 2 --transient leaky.ndjson 2>/dev/null | jq -s '[.[] | select(.type=="site")] | length')"
ms-filter --min 64 leaky.ndjson | ms-filter --ignore libc >chain.ndjson
check_eq "a chain of filters: the end adds them up" '["--min 64","--ignore libc"] 4' \
	"$(jq -c -r 'select(.type=="end") | "\(.filters | tojson) \(.filtered.leak.records)"' chain.ndjson)"
ms-snap -p $$ >snap.json 2>/dev/null
check_eq "a snapshot passes unchanged (but its end)" "$(grep -v '"type":"end"' snap.json)" \
	"$(ms-filter snap.json | grep -v '"type":"end"')"
check_eq "no filter: the recording passes unchanged (but its end)" \
	"$(grep -v '"type":"end"' leaky.ndjson | sort)" "$(ms-filter leaky.ndjson | grep -v '"type":"end"' | sort)"

# --- bad input -----------------------------------------------------------------
n=$(wc -l <leaky.ndjson)
head -n $((n - 1)) leaky.ndjson >noend.ndjson
check_status "a stream without its end" 2 ms-filter noend.ndjson
check_one_line_error "no end" "$OUT/last.err"
check_grep "no end: says so" "cut short" "$OUT/last.err"
check_eq "no end: everything else passed" "$(head -n $((n - 1)) leaky.ndjson | sort)" "$(sort "$OUT/last.out")"
sed '5s/.*/{"type":"site","stack":/' leaky.ndjson >badjson.ndjson
check_status "invalid JSON at line 5" 2 ms-filter badjson.ndjson
check_one_line_error "invalid JSON" "$OUT/last.err"
check_grep "invalid JSON: FILE:LINE" "badjson.ndjson:5:" "$OUT/last.err"
check_eq "invalid JSON: the records before it passed" "$(head -n 4 leaky.ndjson | grep -v -e '"type":"stack"' -e '"type":"frame"')" \
	"$(grep -v '"type":"stack"' "$OUT/last.out")"
sid=$(jq -r 'select(.type=="site") | .stack' leaky.ndjson | head -n 1)
sed "s/\"stack\":$sid,/\"stack\":999,/" leaky.ndjson >nostack.ndjson
check_status "a record referring to a stack never defined" 2 ms-filter nostack.ndjson
check_grep "undefined stack: says which" "stack 999, never defined" "$OUT/last.err"
check_one_line_error "undefined stack" "$OUT/last.err"
: >empty.ndjson
check_status "empty input" 2 ms-filter empty.ndjson
check_one_line_error "empty input" "$OUT/last.err"
check_status "bad --min" 2 ms-filter --min 12Q leaky.ndjson
check_grep "bad --min: says which" "12Q" "$OUT/last.err"
if [ -w /dev/full ]; then
	check_status "a full disk" 2 sh -c "ms-filter --min 64 leaky.ndjson >/dev/full"
	check_eq "a full disk: says so, and only that" \
		"ms-filter: write error on standard output: No space left on device" "$(cat "$OUT/last.err")"
fi
finish
