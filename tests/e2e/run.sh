#!/bin/sh
# Runs every end-to-end test (tests/e2e/t*.sh); each prints its own result.
cd "$(dirname "$0")" || exit 2
fail=0
total=0
for t in t[0-9]*.sh; do
	total=$((total + 1))
	if sh "$t"; then
		:
	else
		fail=$((fail + 1))
		echo "FAIL $t"
	fi
done
echo "e2e: $((total - fail))/$total test scripts passed"
[ $fail -eq 0 ]
