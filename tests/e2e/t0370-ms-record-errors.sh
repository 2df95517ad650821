#!/bin/sh
# Memory errors: ms-record writes one error record for each double free,
# invalid free, mismatched release and realloc of a freed block, with the
# stack of the bad call and, where known, of the block's allocation and
# first free; the program's fate (glibc's abort, exit status, output) does
# not change.  ms-report shows them; its gates and ms-filter's fail on them.
. "$(dirname "$0")/lib.sh"
SRC="$TOP/examples/memerr.cpp"

# errors REC: "kind fn size offset alloc_fn bad-call alloc-site first-free"
# per error record, stacks by their innermost function and line.
errors() {
	v1 "$1" | jq -r -s '
		(map(select(.type=="stack")) | map({key: (.id|tostring),
			value: "\(.frames[0].fn // "?" | sub(" \\[clone.*"; ""))@\(.frames[0].line)"}) | from_entries) as $s
		| .[] | select(.type=="error")
		| "\(.kind) \(.fn) \(.size // "-") \(.offset // "-") \(.alloc_fn // "-") \($s[(.stack|tostring)] // "-") \($s[(.alloc_stack|tostring)] // "-") \($s[(.free_stack|tostring)] // "-")"'
}
L_alloc=$(line_of "$SRC" "char *p = static_cast<char *>(malloc(n));")
L_once=$(( $(line_of "$SRC" "static void free_once(void *p)") + 2 ))
L_twice=$(( $(line_of "$SRC" "static void free_twice(void *p)") + 2 ))
L_middle=$(( $(line_of "$SRC" "static void free_middle(char *p)") + 2 ))
L_local=$(line_of "$SRC" "free(hide(local));")
L_array=$(( $(line_of "$SRC" "static void drop_array(int *p)") + 2 ))
L_malloced=$(( $(line_of "$SRC" "static void drop_malloced(void *p)") + 2 ))
L_newed=$(( $(line_of "$SRC" "static void free_newed(Pair *p)") + 2 ))
L_grow=$(line_of "$SRC" "void *q = realloc(hide(p), 64);")

# Each kind: the same exit status and output as without ms-record.
for m in double-free invalid-free invalid-free-stack mismatch realloc-freed none; do
	"$EX/memerr" $m >"$OUT/$m.native.out" 2>/dev/null
	want=$?
	check_status "memerr $m: the program's own exit status" $want \
		ms-record -q -o "$OUT/$m.ndjson" "$EX/memerr" $m
	cp "$OUT/last.out" "$OUT/$m.out"
	check_eq "memerr $m: the program's output" "$(cat "$OUT/$m.native.out")" "$(cat "$OUT/$m.out")"
	check_eq "memerr $m: a well-formed stream" "" "$(valid_stream "$OUT/$m.ndjson")"
done
check_eq "double-free, invalid-free abort in glibc (134)" "134 134 134" \
	"$(for m in double-free invalid-free invalid-free-stack; do "$EX/memerr" $m >/dev/null 2>&1; echo $?; done | tr '\n' ' ' | sed 's/ $//')"

check_eq "double-free: the second free, the block, its first free" \
	"double-free free 40 - malloc free_twice(void*)@$L_twice make_block(unsigned long)@$L_alloc free_once(void*)@$L_once" \
	"$(errors "$OUT/double-free.ndjson")"
check_eq "invalid-free into a block: its offset, the block and its allocation" \
	"invalid-free free 64 16 malloc free_middle(char*)@$L_middle make_block(unsigned long)@$L_alloc -" \
	"$(errors "$OUT/invalid-free.ndjson")"
check_eq "invalid-free of a local: no block" \
	"invalid-free free - - - free_local()@$L_local - -" \
	"$(errors "$OUT/invalid-free-stack.ndjson")"
check_eq "mismatch: three, by the wrong family each" \
	"$(printf '%s\n' "mismatch delete 40 - new[] drop_array(int*)@$L_array" \
		"mismatch delete 24 - malloc drop_malloced(void*)@$L_malloced" \
		"mismatch free 16 - new free_newed(Pair*)@$L_newed")" \
	"$(errors "$OUT/mismatch.ndjson" | cut -d' ' -f1-6)"
check_eq "realloc-freed: the realloc, the block, its free" \
	"realloc-freed realloc 32 - malloc grow_freed(void*)@$L_grow make_block(unsigned long)@$L_alloc free_once(void*)@$L_once" \
	"$(errors "$OUT/realloc-freed.ndjson")"
check_eq "none: no error record" "" "$(errors "$OUT/none.ndjson")"
check_eq "end records count them" "1 1 1 3 1 0" \
	"$(for m in double-free invalid-free invalid-free-stack mismatch realloc-freed none; do jq -r 'select(.type=="end") | .errors' "$OUT/$m.ndjson"; done | tr '\n' ' ' | sed 's/ $//')"
check_eq "end: by kind" "3 null" \
	"$(jq -r 'select(.type=="end") | "\(.mismatch) \(.double_free)"' "$OUT/mismatch.ndjson")"

# After a second thread: an unknown free waits a moment for another
# thread's allocation of its address (libmemscope(7)); glibc aborts
# meanwhile, and the error still comes out, the same.
for m in double-free invalid-free; do
	check_status "memerr $m threads: the program's own exit status" 134 \
		ms-record -q -o "$OUT/$m.mt.ndjson" "$EX/memerr" $m threads
	check_eq "memerr $m threads: the same error" "$(errors "$OUT/$m.ndjson")" \
		"$(errors "$OUT/$m.mt.ndjson")"
	check_eq "memerr $m threads: counted once" "1" \
		"$(jq -r 'select(.type=="end") | .errors' "$OUT/$m.mt.ndjson")"
done

# --free-stacks: the whole stack of the bad call, down to main.
check_status "--free-stacks" 134 ms-record -q --free-stacks -o "$OUT/full.ndjson" "$EX/memerr" double-free
sid=$(jq -r 'select(.type=="error") | .stack' "$OUT/full.ndjson")
check_eq "--free-stacks: the double free's stack" "free_twice(void*)@memerr.cpp:$L_twice < main" \
	"$(stack_of "$OUT/full.ndjson" "$sid" | sed 's/ < main@.*/ < main/')"
sid=$(jq -r 'select(.type=="error") | .free_stack' "$OUT/full.ndjson")
check_eq "--free-stacks: the first free's stack" "free_once(void*)@memerr.cpp:$L_once < main" \
	"$(stack_of "$OUT/full.ndjson" "$sid" | sed 's/ < main@.*/ < main/')"
check_eq "--free-stacks in the header's options" true \
	"$(jq -r 'select(.type=="header") | .options.free_stacks' "$OUT/full.ndjson")"

# ms-report: a section and a summary row; JSON with the stacks.
ms-report "$OUT/mismatch.ndjson" >"$OUT/mismatch.txt"
check_grep "report: summary row" "memory errors *3" "$OUT/mismatch.txt"
check_grep "report: the section" "^MEMORY ERRORS" "$OUT/mismatch.txt"
check_grep "report: what happened" "mismatch: delete of a 40 B block from new\[\]" "$OUT/mismatch.txt"
check_eq "report --json: kinds, functions, sizes, bad calls" \
	"mismatch delete 40 new[] drop_array(int*)|mismatch delete 24 malloc drop_malloced(void*)|mismatch free 16 new free_newed(Pair*)" \
	"$(ms-report --json "$OUT/mismatch.ndjson" | jq -r '[.errors[] | "\(.kind) \(.fn) \(.size) \(.alloc_fn) \(.stack[0].fn | sub(" \\[clone.*"; ""))"] | join("|")')"
ms-report --md "$OUT/double-free.ndjson" >"$OUT/double-free.md"
check_grep "report --md: first free" "first freed by free:" "$OUT/double-free.md"

# Gates: exit 1 with the report written; 0 without errors.
check_status "ms-report --fail-on-error: 1" 1 ms-report --fail-on-error "$OUT/mismatch.ndjson"
check_grep "ms-report --fail-on-error: the report is written" "^MEMORY ERRORS" "$OUT/last.out"
check_grep "ms-report --fail-on-error: says why" "fail-on-error: 3 memory errors" "$OUT/last.err"
check_status "ms-report --fail-on-error, no error: 0" 0 ms-report --fail-on-error "$OUT/none.ndjson"
check_status "ms-filter --fail-on-error: 1" 1 ms-filter --fail-on-error "$OUT/mismatch.ndjson"
check_eq "ms-filter --fail-on-error: its output is whole" "" "$(valid_stream "$OUT/last.out")"
check_status "ms-filter --type site: no error passes: 0" 0 ms-filter --type site --fail-on-error "$OUT/mismatch.ndjson"

# Leak gates, on leaky (definitely lost blocks) and after suppressing them.
check_status "leaky" 0 ms-record -q -o "$OUT/leaky.ndjson" "$EX/leaky"
check_status "ms-report --fail-on-leak: 1" 1 ms-report --fail-on-leak "$OUT/leaky.ndjson"
check_grep "ms-report --fail-on-leak: counts the blocks" \
	"fail-on-leak: $(jq -r 'select(.type=="end") | .definitely_blocks + .indirectly_blocks' "$OUT/leaky.ndjson") leaked blocks (definitely, indirectly, unscanned)" "$OUT/last.err"
check_status "ms-filter --fail-on-leak: 1" 1 ms-filter --fail-on-leak "$OUT/leaky.ndjson"
# The gate and the summary's "leaked" are one definition: a program killed
# by a signal (its blocks unscanned) and a --sample recording (estimated,
# unscanned) are called leaked, and the default gate fails on them (before,
# it gated definitely and indirectly only, and passed both).
cat >"$OUT/killed.c" <<'EOF'
#include <signal.h>
#include <stdlib.h>
int main(void)
{
	for (int i = 0; i < 500; i++)
		*(char *)malloc(72) = 1;
	raise(SIGKILL);
	return 0;
}
EOF
check_status "build killed" 0 cc -O0 -o "$OUT/killed" "$OUT/killed.c"
ms-record -q -o "$OUT/killed.ndjson" "$OUT/killed" 2>/dev/null
check_grep "killed: the summary says leaked" "leaked  *36,000 B  in 500 blocks" \
	"$(ms-report "$OUT/killed.ndjson" >"$OUT/killed.txt"; echo "$OUT/killed.txt")"
check_status "killed: --fail-on-leak fails on what the summary calls leaked" 1 \
	ms-report --fail-on-leak "$OUT/killed.ndjson"
check_grep "killed: the gate says it" "fail-on-leak: 500 leaked blocks (definitely, indirectly, unscanned)" \
	"$OUT/last.err"
check_status "killed: ms-filter's gate too" 1 ms-filter --fail-on-leak "$OUT/killed.ndjson"
check_status "killed: --fail-on-leak=definitely,indirectly as before" 0 \
	ms-report --fail-on-leak=definitely,indirectly "$OUT/killed.ndjson"
check_status "sampled leaky recorded" 0 ms-record -q --sample 4K -o "$OUT/sampled.ndjson" "$EX/leaky"
check_range "sampled leaky: the summary's leaked blocks" 1 1000000000 \
	"$(jq -r 'select(.type=="end") | .leaked_blocks' "$OUT/sampled.ndjson")"
check_status "sampled leaky: --fail-on-leak fails" 1 ms-report --fail-on-leak "$OUT/sampled.ndjson"
check_status "--fail-on-leak=reachable: leaky has none: 0" 0 ms-report --fail-on-leak=reachable "$OUT/leaky.ndjson"
check_status "bad kind: usage error 2" 2 ms-report --fail-on-leak=sometimes "$OUT/leaky.ndjson"
printf 'leak:leak_*\nleak:__strdup\n' >"$OUT/supp.txt"
ms-filter -q --suppressions "$OUT/supp.txt" "$OUT/leaky.ndjson" >"$OUT/suppressed.ndjson"
check_eq "suppressed: no leak left" 0 "$(grep -c '"type":"leak"' "$OUT/suppressed.ndjson")"
check_status "after suppressions, ms-report --fail-on-leak: 0" 0 ms-report --fail-on-leak "$OUT/suppressed.ndjson"
check_status "ms-filter --suppressions --fail-on-leak: 0" 0 \
	ms-filter -q --suppressions "$OUT/supp.txt" --fail-on-leak "$OUT/leaky.ndjson"

# No false errors: a forked child freeing its parent's blocks (--follow),
# and the real programs of the other tests.
check_status "forkexec --follow" 0 ms-record -q --follow -o "$OUT/fork.ndjson" "$EX/forkexec"
check_eq "forkexec --follow: no error records" 0 "$(grep -c '"type":"error"' "$OUT/fork.ndjson")"
check_status "cxx" 0 ms-record -q -o "$OUT/cxx.ndjson" "$EX/cxx"
check_eq "cxx (new/delete, new[]/delete[], exceptions): no error" 0 \
	"$(jq -r 'select(.type=="end") | .errors' "$OUT/cxx.ndjson")"
finish
