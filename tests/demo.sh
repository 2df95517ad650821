#!/bin/sh
# make demo: the main pipeline on an example program, end to end.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/tools:$PATH"
EX="$PWD/examples/bin"
out=$(mktemp -d)
pid= tk= rec=
trap 'kill $pid $tk $rec 2>/dev/null; rm -rf "$out"' EXIT INT TERM

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
set -e
echo
echo "== memscope demo 3: attach to a running service, snapshot its heap twice, detach =="
echo
"$EX/ticker" 10 1000 50 >ticker.log &
tk=$!
sleep 0.5
echo "(examples/bin/ticker, pid $tk, has been running for a while: every 10 ms it"
echo " keeps 1000 bytes in a cache and churns a 64-byte message)"
echo "\$ ms-record -p $tk -o attach.ndjson &"
ms-record -p $tk -o attach.ndjson 2>attach.err &
rec=$!
i=0
until ms-snap -p $tk 2>/dev/null | grep -q '"recorded":true'; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "demo: the attach did not start" >&2; exit 1; }
	sleep 0.05
done
echo "\$ ms-snap -p $tk > live1.json; sleep 1; ms-snap -p $tk > live2.json"
ms-snap -p $tk >live1.json
sleep 1
ms-snap -p $tk >live2.json
echo "\$ ms-diff --text live1.json live2.json"
echo
ms-diff --text live1.json live2.json
echo
echo "\$ kill -INT %1    # ms-record detaches; the service keeps running"
kill -INT $rec
wait $rec
rec=
echo "(ms-record's own line on stderr: $(grep '^ms-record:' attach.err))"
kill -USR1 $tk
sleep 0.2
echo "(the ticker, asked after the detach: $(tail -1 ticker.log))"
echo
echo "\$ ms-report --sections summary,leaks attach.ndjson"
echo
ms-report --sections summary,leaks attach.ndjson
kill $tk
wait $tk 2>/dev/null || true
tk=
