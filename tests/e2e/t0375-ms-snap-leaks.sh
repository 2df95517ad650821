#!/bin/sh
# ms-snap -p PID --leaks: the reachability scan of a process ms-record is
# recording, on demand.  A ticker that loses a block every tick shows that
# site growing between two scans, definitely lost; the process runs on
# unharmed (its ticks go on, no system call of its threads sees EINTR, it
# exits as it would); what cannot be scanned is a clear error.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

# lost REC: the count of definitely lost blocks from lose_one
lost() {
	v1 "$1" | jq -r -s '
		(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames[0].fn}) | from_entries) as $top
		| [.[] | select(.type=="leak" and .kind=="definitely" and $top[(.stack|tostring)] == "lose_one")
		   | .count] | add // 0'
}

# child_of PID NAME: the pid of PID's child called NAME, once it runs (5 s)
child_of() {
	_c= _i=0
	while [ -z "$_c" ] && [ $_i -lt 100 ]; do
		_c=$(pgrep -P "$1" -x "$2")
		[ -n "$_c" ] || sleep 0.05
		_i=$((_i + 1))
	done
	echo "$_c"
}

ms-record -q -o rec.ndjson "$EX/ticker" 10 1000 50 333 >ticker.out 2>ticker.err &
rec=$!
_bg_pids="$_bg_pids $rec"
P=$(child_of $rec ticker)
check_eq "ticker runs under ms-record" true "$([ -n "$P" ] && echo true)"
# the live socket is there once the recorder answers a snapshot
i=0
while ! ms-snap -q -p "$P" 2>/dev/null | grep -q '"recorded":true' && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.3

check_status "ms-snap --leaks" 0 ms-snap -p "$P" --leaks -o a.ndjson
check_eq "a well-formed stream" "" "$(valid_stream a.ndjson)"
check_eq "the live record: scanned, one thread" "true 1" \
	"$(jq -r 'select(.type=="live") | "\(.scanned) \(.threads)"' a.ndjson)"
check_range "the live record: the stop time, under a second" 1 1000000000 \
	"$(jq -r 'select(.type=="live") | .stopped_ns' a.ndjson)"
check_range "the live record: the scan read the blocks" 1 100000000 \
	"$(jq -r 'select(.type=="live") | .block_bytes' a.ndjson)"
a=$(lost a.ndjson)
check_range "lose_one: blocks definitely lost" 10 100000 "$a"
check_eq "lose_one's blocks: 333 B each" "333" \
	"$(jq -r 'select(.type=="leak" and .kind=="definitely") | .size' a.ndjson | sort -u)"
check_eq "the cache (reachable from a global) is no leak" 0 \
	"$(jq -r 'select(.type=="leak" and .size==1000 and .kind!="reachable") | .count' a.ndjson | wc -l)"
sleep 0.5
check_status "ms-snap --leaks, again" 0 ms-snap -p "$P" --leaks -o b.ndjson
b=$(lost b.ndjson)
check_range "lose_one grew between the two scans (from $a)" $((a + 20)) $((a + 1000)) "$b"
check_fgrep "ms-report reads it: the lost site" "lose_one" \
	"$(ms-report --sections leaks b.ndjson >b.txt; echo b.txt)"
ms-diff a.ndjson b.ndjson >diff.ndjson
check_eq "ms-diff of the two scans: lose_one's lost blocks grew by as many" "$((b - a))" \
	"$(jq -r 'select(.type=="delta" and .key=="leak" and .metric=="leaked_blocks" and (.name | startswith("lose_one "))) | .change' diff.ndjson)"
check_eq "ms-diff of the two scans: and its bytes, 333 B each" "$(((b - a) * 333))" \
	"$(jq -r 'select(.type=="delta" and .key=="leak" and .metric=="leaked_bytes" and (.name | startswith("lose_one "))) | .change' diff.ndjson)"

# The process runs on: its ticks go on, and it ends as it would.
kill -USR1 "$P"
wait_for_line ticker.out "^ticks " || true
t1=$(awk '/^ticks/ { print $2 }' ticker.out | tail -1)
sleep 0.3
kill -USR1 "$P"
i=0
while [ "$(grep -c '^ticks' ticker.out)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
t2=$(awk '/^ticks/ { print $2 }' ticker.out | tail -1)
check_range "ticks go on after the scans ($t1)" $((t1 + 5)) $((t1 + 1000)) "$t2"
kill -TERM "$P"
wait $rec
check_eq "ms-record exits as ticker did" 0 $?
check_eq "the recording ends as it would" "exit 0" \
	"$(jq -r 'select(.type=="end") | "\(.reason) \(.status)"' rec.ndjson)"
check_range "at the exit every lost block is found" "$b" 100000 "$(lost rec.ndjson)"
check_eq "the recording: no memory error" 0 "$(jq -r 'select(.type=="end") | .errors' rec.ndjson)"

# Threads asleep in epoll_wait, read, nanosleep and futex: no EINTR.
ms-record -q -o waiters.ndjson "$EX/waiters" >waiters.log 2>&1 &
rec=$!
_bg_pids="$_bg_pids $rec"
W=$(child_of $rec waiters)
sleep 0.3
fails=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	ms-snap -q -p "$W" --leaks -o w.ndjson 2>>w.err || fails=$((fails + 1))
done
check_eq "waiters: 20 scans" "0 " "$fails $(cat w.err)"
check_eq "waiters: every thread stopped" 5 "$(jq -r 'select(.type=="live") | .threads' w.ndjson)"
check_range "waiters: the stacks are read from each thread's sp up, not whole (5 x 8 MiB)" \
	1 4000000 "$(jq -r 'select(.type=="live") | .root_bytes' w.ndjson)"
sleep 0.2
check_eq "waiters: no EINTR seen" 0 "$(tail -1 waiters.log | awk '{ print $2 }')"
kill -TERM "$W"
wait $rec

# What cannot be scanned: one line, exit 2.
sleep 300 &
S=$!
_bg_pids="$_bg_pids $S"
check_status "a process not recorded" 2 ms-snap -p $S --leaks
check_one_line_error "not recorded: one line" "$OUT/last.err"
check_grep "not recorded: says so" "pid $S is not being recorded" "$OUT/last.err"
check_status "--leaks with -a" 2 ms-snap -a --leaks
check_grep "--leaks with -a: says why" "needs -p PID" "$OUT/last.err"
"$EX/ticker" 10 1000 50 333 >attached.out &
TK=$!
_bg_pids="$_bg_pids $TK"
sleep 0.3
ms-record -q -p $TK --duration 3s -o attached.ndjson 2>attached.err &
rec=$!
i=0
while ! ms-snap -q -p "$TK" 2>/dev/null | grep -q '"recorded":true' && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
check_status "an attach recording" 2 ms-snap -p $TK --leaks
check_grep "an attach recording: says why" "needs a recording from the start" "$OUT/last.err"
wait $rec
check_eq "the attach recording went on" "detached" "$(jq -r 'select(.type=="end") | .reason' attached.ndjson)"
kill $TK
# A recorder that takes the connection and never answers: ms-snap gives up
# after 5 s with a warning, its snapshot written (ms-top's timeout is its own).
if command -v python3 >/dev/null; then
	sleep 300 &
	Z=$!
	_bg_pids="$_bg_pids $Z"
	dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/memscope}
	dir=${dir:-/tmp/memscope-$(id -u)}
	mkdir -p "$dir" && chmod 700 "$dir"
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
time.sleep(30)' "$dir/$Z.sock" >mute.log 2>&1 &
	_bg_pids="$_bg_pids $!"
	wait_for_line mute.log "^listening"
	t0=$(date +%s)
	check_status "a recorder that never answers: the snapshot anyway" 0 ms-snap -p $Z
	check_range "... after about 5 s" 4 8 $(($(date +%s) - t0))
	check_grep "... and says so" "did not answer in 5000 ms" "$OUT/last.err"
	check_eq "... the live record says: not recorded" false \
		"$(jq -r 'select(.type=="live") | .recorded' "$OUT/last.out")"
	rm -f "$dir/$Z.sock"
fi

# The socket of a recorder killed with its process: removed by the next
# look at the directory (ms-top), not listed for ever.
sh -c 'exit 0' &
dead=$!
wait $dead
dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/memscope}
dir=${dir:-/tmp/memscope-$(id -u)}
touch "$dir/$dead.sock"
ms-top --batch -n 1 -d 0.1 >/dev/null 2>&1
check_eq "a dead process's stale socket is removed" false "$([ -e "$dir/$dead.sock" ] && echo true || echo false)"

finish
