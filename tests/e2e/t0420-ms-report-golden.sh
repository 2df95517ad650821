#!/bin/sh
# ms-report against golden outputs: fixed recordings in tests/fixtures/report
# (a launch recording of examples/leaky, an attach recording of
# examples/ticker, a --poll recording of examples/memhog, a diff of two live
# snapshots) rendered as text, Markdown, JSON and folded stacks must match
# the files next to them byte for byte.  A change to the renderers that is
# meant shows here first: regenerate with
#
#   UPDATE_GOLDEN=1 sh tests/e2e/t0420-ms-report-golden.sh
#
# and read the diff of the golden files before committing them.
. "$(dirname "$0")/lib.sh"

FIX="$TOP/tests/fixtures/report"
for rec in leaky attach poll livediff; do
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
finish
