#!/bin/sh
# Bad input is never a crash: for ms-diff, broken files give exactly one
# line on stderr naming the file (and the line, when the content is at
# fault) and exit status 2; for ms-snap, bad pids, unreadable processes, bad
# options and write errors give the documented message and status.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

start_memhog hog 8 || finish
P=$HOG_PID
ms-snap -p $P >good.json 2>/dev/null
nlines=$(wc -l <good.json)

# ---------------------------------------------------------------- ms-diff
# bad_diff NAME FILE LINE: ms-diff must reject FILE, as BEFORE and as
# AFTER, with one line naming it (and "FILE:LINE:" when LINE is not "-").
bad_diff() {
	_name=$1 _file=$2 _line=$3
	for _order in before after; do
		if [ $_order = before ]; then
			ms-diff "$_file" good.json >bd.out 2>bd.err
		else
			ms-diff good.json "$_file" >bd.out 2>bd.err
		fi
		_st=$?
		check_eq "ms-diff $_name ($_order): exit status" 2 $_st
		check_one_line_error "ms-diff $_name ($_order)" bd.err
		check_egrep "ms-diff $_name ($_order): message starts with the tool" '^ms-diff: ' bd.err
		if [ "$_line" = - ]; then
			check_grep "ms-diff $_name ($_order): names the file" "$_file" bd.err
		else
			check_grep "ms-diff $_name ($_order): names file and line" "$_file:$_line:" bd.err
		fi
		check_empty "ms-diff $_name ($_order): nothing on stdout" bd.out
	done
}

: >empty.json
bad_diff "empty file" empty.json -

# Cut in the middle of the last line (the end record).
head -c $(($(wc -c <good.json) - $(tail -n 1 good.json | wc -c) / 2)) good.json >cut.json
bad_diff "truncated last line" cut.json "$nlines"
check_grep "truncated: says so" "cut.json:$nlines: truncated" bd.err

printf 'this is not JSON\n' >notjson.json
bad_diff "not JSON" notjson.json 1

# Valid JSON, wrong types, on the process record (line 2).
sed '2s/"pid":[0-9]*/"pid":"abc"/' good.json >pidstr.json
bad_diff '"pid":"abc"' pidstr.json 2
check_grep '"pid":"abc": names the field' '"pid"' bd.err
sed '2s/"starttime":[0-9]*/"starttime":"x"/' good.json >startstr.json
bad_diff '"starttime":"x"' startstr.json 2
check_grep '"starttime":"x": names the field' '"starttime"' bd.err
sed '2s/"pid":[0-9]*/"pid":99999999999999999999999/' good.json >pidhuge.json
bad_diff '"pid":1e23' pidhuge.json 2
sed '3s/"name":"[^"]*"/"name":17/' good.json >namenum.json
bad_diff 'mapping "name":17' namenum.json 3
sed '2s/^{"type":"process"/{"type":5/' good.json >typenum.json
bad_diff '"type":5' typenum.json 2
sed '1s/"format":"memscope"/"format":"other"/' good.json >format.json
bad_diff 'header of another format' format.json 1
tail -n +2 good.json >noheader.json
bad_diff "no header" noheader.json 1

head -c 4096 /dev/urandom >junk.bin
# The first line of random bytes may be blank (skipped): any line number.
bad_diff "binary junk" junk.bin '[0-9][0-9]*'

jq -s -c . good.json >array.json
bad_diff "a JSON array of the records" array.json 1
printf '[1,2]\n[3]\n' >arrays.json
bad_diff "JSON arrays, one per line" arrays.json 1

bad_diff "a file that does not exist" does-not-exist.json -
check_grep "missing file: says why" "No such file or directory" bd.err
mkdir -p adir
bad_diff "a directory" adir -
check_grep "directory: says why" "Is a directory" bd.err

# A stream cut at a line boundary is still used, with a warning.
head -n $((nlines - 1)) good.json >noend.json
# Compared and written, and exit 2 as ms-report's (it was 0: a gate passed
# a snapshot cut short), -q or not.
check_status "ms-diff without end record: exit 2" 2 ms-diff good.json noend.json
check_one_line_error "ms-diff without end record: one warning" "$OUT/last.err"
check_grep "ms-diff without end record: names the file" "noend.json: no end record" "$OUT/last.err"
check_grep "ms-diff without end record: still compares" '"type":"delta"\|"type":"total"\|"type":"end"' "$OUT/last.out"
check_status "ms-diff -q --fail-on-growth 1 without end record: the gate does not pass it" 2 \
	ms-diff -q --fail-on-growth 1 noend.json noend.json
check_grep "ms-diff -q without end record: still said" "no end record" "$OUT/last.err"
head -n 1 good.json >hdronly.json
check_status "ms-report --fail-on-leak of a header alone: exit 2, not passed" 2 \
	ms-report --fail-on-leak hdronly.json
check_grep "ms-report of a header alone: said" "no end record: the stream was cut short" "$OUT/last.err"

check_status "ms-diff with one input: usage error" 2 ms-diff good.json
check_grep "ms-diff usage error: how to get help" "Try 'ms-diff --help' for more information." "$OUT/last.err"
check_status "ms-diff with three inputs: usage error" 2 ms-diff good.json good.json good.json
check_status "ms-diff - -: usage error" 2 ms-diff - -
check_status "ms-diff --min-change 1X: usage error" 2 ms-diff --min-change 1X good.json good.json

# ---------------------------------------------------------------- ms-snap
check_status "ms-snap -p 4194000 (no such process)" 2 ms-snap -p 4194000
check_one_line_error "ms-snap -p 4194000" "$OUT/last.err"
check_grep "ms-snap -p 4194000: says so" "ms-snap: pid 4194000: no such process" "$OUT/last.err"
# Nothing written: a stream of no process read as a snapshot by a script
# (ms-diff of two such) compared nothing and said nothing.
check_empty "ms-snap -p 4194000: nothing on standard output" "$OUT/last.out"
echo keep >"$OUT/kept.json"
check_status "ms-snap -p 4194000 -o FILE" 2 ms-snap -p 4194000 -o "$OUT/kept.json"
check_eq "ms-snap -p 4194000 -o FILE: the file there kept" keep "$(cat "$OUT/kept.json")"

check_status "ms-snap -p 4194000 -p PID: what could be read" 0 ms-snap -p 4194000 -p $P
check_one_line_error "ms-snap -p 4194000 -p PID: one warning" "$OUT/last.err"
check_eq "ms-snap -p 4194000 -p PID: the readable one" "$P" \
	"$(jq 'select(.type == "process") | .pid' "$OUT/last.out")"

for pid in 0 abc -5 1x ""; do
	check_status "ms-snap -p '$pid': usage error" 2 ms-snap -p "$pid"
	check_grep "ms-snap -p '$pid': names the value" "ms-snap: invalid pid '$pid'" "$OUT/last.err"
	check_grep "ms-snap -p '$pid': how to get help" "Try 'ms-snap --help' for more information." "$OUT/last.err"
	check_empty "ms-snap -p '$pid': nothing on stdout" "$OUT/last.out"
done

# A process whose smaps_rollup may not be read: figures omitted, one
# warning naming the reason, exit 0 since the rest was read.
# unreadable_pid WHAT PID RUN...: RUN is how ms-snap is started.
unreadable_pid() {
	_what=$1 _pid=$2
	shift 2
	_rss0=$(vmrss $_pid)
	"$@" ms-snap -p $_pid >ur.out 2>ur.err
	check_eq "$_what: exit status" 0 $?
	_rss1=$(vmrss $_pid)
	check_one_line_error "$_what: one warning" ur.err
	check_grep "$_what: names pid and reason" "ms-snap: pid $_pid: smaps_rollup: Permission denied" ur.err
	check_eq "$_what: pss omitted, missing says why" "null smaps_rollup: Permission denied" \
		"$(jq -r 'select(.type == "process") | "\(.pss) \(.missing)"' ur.out)"
	# rss still comes from status (pid 1 need not be idle: 64 pages of slack).
	check_range "$_what: rss from status" \
		$(( (_rss0 < _rss1 ? _rss0 : _rss1) - 262144 )) $(( (_rss0 > _rss1 ? _rss0 : _rss1) + 262144 )) \
		"$(jq 'select(.type == "process") | .rss' ur.out)"
	check_eq "$_what: end counts it as partial" "1 1 0" \
		"$(tail -n 1 ur.out | jq -r '"\(.processes) \(.partial) \(.unreadable)"')"
	"$@" ms-snap -q -p $_pid >ur.out 2>ur.err
	check_empty "$_what: -q: no warning" ur.err
}
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" = 0 ] && ! $NOBODY ms-snap --version >/dev/null 2>&1; then
	echo "  note: user nobody cannot run $TOP/tools/ms-snap: skipping its checks" >&2
	NOBODY=
fi
if [ "$(id -u)" = 0 ]; then
	if [ -n "$NOBODY" ]; then
		unreadable_pid "nobody: ms-snap -p 1" 1 $NOBODY
		unreadable_pid "nobody: ms-snap -p (root's memhog)" $P $NOBODY
	fi
	# pid 1's memory may be denied even to root (a sandbox's init).
	if cat /proc/1/smaps_rollup >/dev/null 2>&1; then
		check_status "root: ms-snap -p 1" 0 ms-snap -p 1
		check_empty "root: ms-snap -p 1: no warning" "$OUT/last.err"
	else
		unreadable_pid "root: ms-snap -p 1 (EACCES here)" 1
	fi
	NOBODY_RUN=$NOBODY
else
	unreadable_pid "ms-snap -p 1" 1
	NOBODY_RUN=
fi
# -a: the unreadable ones are counted in one warning.
$NOBODY_RUN ms-snap -a >ua.out 2>ua.err
check_eq "ms-snap -a with unreadable processes: exit status" 0 $?
check_one_line_error "ms-snap -a with unreadable processes: one summary warning" ua.err
check_egrep "-a: the warning counts them" '^ms-snap: [0-9]+ process(es)? could not be read fully \(run as their owner or root' ua.err
check_eq "-a: the count is the end record's partial count" \
	"$(tail -n 1 ua.out | jq .partial)" "$(sed 's/^ms-snap: \([0-9]*\) .*/\1/' ua.err)"
check_eq "-a: partial count = process records with missing figures" \
	"$(tail -n 1 ua.out | jq .partial)" "$(jq -c 'select(.type == "process" and .missing)' ua.out | wc -l)"

check_status "ms-snap -o /nonexistent/dir/x" 2 ms-snap -p $P -o /nonexistent/dir/x
check_one_line_error "ms-snap -o /nonexistent/dir/x" "$OUT/last.err"
check_grep "ms-snap -o: names the file and the reason" \
	"ms-snap: cannot open '/nonexistent/dir/x': No such file or directory" "$OUT/last.err"
check_empty "ms-snap -o /nonexistent/dir/x: nothing on stdout" "$OUT/last.out"

for opt in --bogus -Z; do
	check_status "ms-snap $opt: usage error" 2 ms-snap $opt -p $P
	check_eq "ms-snap $opt: two lines, the second how to get help" \
		"2 Try 'ms-snap --help' for more information." \
		"$(wc -l <"$OUT/last.err") $(tail -n 1 "$OUT/last.err")"
	check_empty "ms-snap $opt: nothing on stdout" "$OUT/last.out"
done
# A near miss says what it may have meant; a prefix of several, which.
for t in "ms-snap --pdi 1|'--pdi'; did you mean '--pid'?" \
	 "ms-report --fail-on-leaks x|'--fail-on-leaks'; did you mean '--fail-on-leak'?" \
	 "ms-diff --metrics=rss a b|'--metrics'; did you mean '--metric'?" \
	 "ms-record --folow /bin/true|'--folow'; did you mean '--follow'?" \
	 "ms-report --fail x|option '--fail' is ambiguous: --fail-on-leak, --fail-on-error" \
	 "ms-filter --zzz|unrecognized option '--zzz'"; do
	cmd=${t%%|*}
	want=${t#*|}
	# shellcheck disable=SC2086
	check_status "$cmd: usage error" 2 $cmd
	check_fgrep "$cmd: says $want" "$want" "$OUT/last.err"
done
check_eq "no offer for what is too far" "ms-filter: unrecognized option '--zzz'" "$(head -n 1 "$OUT/last.err")"
check_status "ms-snap without arguments" 2 ms-snap
check_grep "ms-snap without arguments: how to get help" "Try 'ms-snap --help' for more information." "$OUT/last.err"
check_status "ms-snap -p PID extra: usage error" 2 ms-snap -p $P extra
check_status "ms-snap -a -p PID: usage error" 2 ms-snap -a -p $P
check_status "ms-snap -p (no argument): usage error" 2 ms-snap -p

# ----------------------------------------------------------- write errors
# A reader that goes away is not an error: no message.  Enough output
# (-a --maps) to fill the pipe, and a reader that is gone for sure.
{ ms-snap -a --maps -q 2>pipe.err; echo $? >pipe.st; } | head -c 10 >/dev/null
check_eq "ms-snap -a | head -c 10: exit status" 0 "$(cat pipe.st)"
check_empty "ms-snap -a | head -c 10: no error" pipe.err
{ sleep 0.2; ms-snap -a --maps -q 2>pipe2.err; echo $? >pipe2.st; } | true
check_eq "ms-snap -a | (closed): exit status" 0 "$(cat pipe2.st)"
check_empty "ms-snap -a | (closed): no error" pipe2.err
{ sleep 0.2; ms-diff --text good.json good.json 2>pipe3.err; echo $? >pipe3.st; } | true
check_eq "ms-diff --text | (closed): exit status" 0 "$(cat pipe3.st)"
check_empty "ms-diff --text | (closed): no error" pipe3.err
# Every format of ms-report alike, on a report longer than a pipe's
# buffer (--json said "Input/output error", 2).
ms-record -q -o leaky.ndjson "$EX/leaky" >/dev/null
check_range "ms-report --json of leaky: longer than stdio's buffer" 16385 100000000 \
	"$(ms-report --json leaky.ndjson | wc -c)"
for fmt in text md json html; do
	{ sleep 0.2; ms-report --$fmt leaky.ndjson 2>pipe4.err; echo $? >pipe4.st; } | true
	check_eq "ms-report --$fmt | (closed): exit status" 0 "$(cat pipe4.st)"
	check_empty "ms-report --$fmt | (closed): no error" pipe4.err
done

if [ -w /dev/full ]; then
	for cmd in "ms-snap -p $P" "ms-snap -a -q" "ms-diff good.json good.json" \
		   "ms-report --json leaky.ndjson" "ms-report --text leaky.ndjson" \
		   "ms-diff --text good.json good.json" "ms-diff --md good.json good.json" \
		   "ms-snap --help" "ms-diff --version"; do
		$cmd >/dev/full 2>full.err
		check_eq "$cmd >/dev/full: exit status" 2 $?
		check_one_line_error "$cmd >/dev/full" full.err
		check_grep "$cmd >/dev/full: a write error" "write error.*No space left on device" full.err
	done
	check_status "ms-snap -o /dev/full" 2 ms-snap -p $P -o /dev/full
	check_one_line_error "ms-snap -o /dev/full" "$OUT/last.err"
	check_grep "ms-snap -o /dev/full: names it" "/dev/full" "$OUT/last.err"
	check_status "ms-diff --text -o /dev/full" 2 ms-diff --text -o /dev/full good.json good.json
	check_one_line_error "ms-diff --text -o /dev/full" "$OUT/last.err"
fi

finish
