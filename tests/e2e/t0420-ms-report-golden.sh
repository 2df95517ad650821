#!/bin/sh
# ms-report against golden outputs: fixed recordings in tests/fixtures/report
# (a launch recording of examples/leaky, an attach recording of
# examples/ticker, a --poll recording of examples/memhog, a diff of two live
# snapshots, and handmade.ndjson, written by hand so that every figure is
# known: two call paths ending on one line, a 12-frame stack, sizes from
# 288 B to 10 MiB, a second --follow process, a strdup-like wrapper)
# rendered as text, Markdown, JSON and folded stacks must match the files
# next to them byte for byte.  A change to the renderers that is
# meant shows here first: regenerate with
#
#   UPDATE_GOLDEN=1 sh tests/e2e/t0420-ms-report-golden.sh
#
# and read the diff of the golden files before committing them.
. "$(dirname "$0")/lib.sh"

FIX="$TOP/tests/fixtures/report"
for rec in leaky attach poll livediff handmade; do
	for fmt in text md json collapsed; do
		gold="$FIX/$rec.$fmt"
		ms-report --$fmt "$FIX/$rec.ndjson" >"$OUT/$rec.$fmt" 2>"$OUT/$rec.$fmt.err"
		check_eq "$rec --$fmt: exit status" 0 $?
		[ "${UPDATE_GOLDEN:-}" = 1 ] && cp "$OUT/$rec.$fmt" "$gold"
		if cmp -s "$gold" "$OUT/$rec.$fmt"; then ok; else
			not_ok "$rec --$fmt differs from $gold: $(diff "$gold" "$OUT/$rec.$fmt" | head -5)"
		fi
	done
done
# The goldens hold the known answers (examples/leaky.c's header, ticker's
# 1000 B per tick and 50 older frees, memhog's 16 MiB).
check_grep "leaky: the known leak total" "89,609 B  in 1,020 blocks" "$FIX/leaky.text"
check_grep "leaky: the small leak" "48,000 B in 1,000 blocks of 48 B" "$FIX/leaky.text"
check_grep "attach: fate unknown, not leaks" "^LIVE AT THE END (FATE UNKNOWN)" "$FIX/attach.text"
check_grep "poll: growth by mapping" "^  \[anon\] .* +16.0 MiB" "$FIX/poll.text"
# handmade.ndjson's figures, worked out by hand from its records.
H="$FIX/handmade"
check_grep "handmade: allocations are the sites' sum" "^  allocations                 169  (19.9 MiB)\$" "$H.text"
check_grep "handmade: leaked is definitely + indirectly" "^  leaked                  9,888 B  in 151 blocks\$" "$H.text"
check_grep "handmade: possibly lost apart" "^  possibly lost             100 B\$" "$H.text"
check_grep "handmade: both processes listed, the report's marked" "^  \*     100        1  exit 3           169   14.0 MiB     9,888 B  server\$" "$H.text"
check_grep "handmade: the child with its own figures" "^        101      100  exit 0             0        0 B         0 B  true\$" "$H.text"
check_grep "handmade: xmalloc is its caller's" "^       300 B           3          100  #4 read_file io.c:33\$" "$H.text"
check_grep "handmade: a wide size range fits its column" "  288\.\.10\.0M  #1 parse_value json.c:10\$" "$H.text"
check_grep "handmade: exact in Markdown" "| 288\.\.10,485,784 |" "$H.md"
check_eq "handmade: twins on cache.c:42 told apart by their callers" \
	"from load_users users.c:10 from load_groups groups.c:20" \
	"$(sed -n '/^TOP SITES BY BYTES/,/^$/p' "$H.text" | grep -o 'from .*' | tr '\n' ' ' | sed 's/ $//')"
check_eq "handmade: no two rows of a Markdown table read the same" "" \
	"$(awk '/^###/ { split("", seen) } /^\| .* \| `/ { if (seen[$0]++) print }' "$H.md")"
# Once under its leak, once among the stacks of the sites.
check_eq "handmade: the 12-frame stack folds past 6 frames" 2 \
	"$(grep -c '<details><summary>6 more frames</summary>' "$H.md")"
check_grep "handmade: two samples, plural" "^  2 samples over 0.095 s\$" "$H.text"
finish
