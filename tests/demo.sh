#!/bin/sh
# make demo: the main pipeline on an example program, end to end.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/tools:$PATH"
EX="$PWD/examples/bin"
out=$(mktemp -d)
trap 'kill $pid 2>/dev/null; rm -rf "$out"' EXIT INT TERM

echo "== memscope demo 1: record a program, filter, report =="
echo
echo "\$ ms-record examples/bin/leaky | ms-filter --min 64 --ignore libc | ms-report --md"
echo
ms-record "$EX/leaky" 2>"$out/record.err" | ms-filter --min 64 --ignore libc |
	ms-report --md --sections summary,leaks,top
echo
echo "(ms-record's own line on stderr: $(grep '^ms-record:' "$out/record.err"))"
echo
svg="$EX/leaky-flamegraph.svg"
echo "\$ ms-record -o leaky.ndjson examples/bin/leaky && ms-report --svg leaky.ndjson > $svg"
ms-record -q -o "$out/leaky.ndjson" "$EX/leaky" >/dev/null 2>&1
ms-report --svg "$out/leaky.ndjson" >"$svg"
echo "(open $svg in a browser: an interactive flame graph of the leaked bytes)"
echo
echo "== memscope demo 2: snapshot a running program, let it grow, diff =="
echo
cd "$out"
"$EX/memhog" 64 >log &
pid=$!
while ! grep -q ready log 2>/dev/null; do sleep 0.05; done
echo "\$ ms-snap -p $pid > before.json"
ms-snap -p $pid >before.json
echo "(the program now maps and touches 64 MiB)"
kill -USR1 $pid
while ! grep -q grown log 2>/dev/null; do sleep 0.05; done
echo "\$ ms-snap -p $pid > after.json"
ms-snap -p $pid >after.json
echo "\$ ms-diff --text before.json after.json"
echo
ms-diff --text before.json after.json
echo
echo "\$ ms-diff --fail-on-growth 32M before.json after.json >/dev/null; echo \$?"
set +e
ms-diff -q --fail-on-growth 32M before.json after.json >/dev/null
echo $?
