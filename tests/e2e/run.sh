#!/bin/sh
# Runs every end-to-end test (tests/e2e/t*.sh); each prints its own result,
# and this its time, so that what makes make check long shows.
cd "$(dirname "$0")" || exit 2
fail=0
total=0
start=$(date +%s)
for t in t[0-9]*.sh; do
	total=$((total + 1))
	t0=$(date +%s)
	if sh "$t"; then
		:
	else
		fail=$((fail + 1))
		echo "FAIL $t"
	fi
	echo "     ${t%.sh}: $(($(date +%s) - t0)) s"
done
echo "e2e: $((total - fail))/$total test scripts passed in $(($(date +%s) - start)) s"
[ $fail -eq 0 ]
