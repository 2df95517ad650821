#!/bin/sh
# ms-record refuses what it cannot run or profile with one line and the
# status of env(1)/timeout(1): 127 not found, 126 cannot run or profile,
# 125 its own failure; usage errors are 2.
. "$(dirname "$0")/lib.sh"

expect() {	# expect WHAT STATUS PATTERN COMMAND...
	_w=$1 _s=$2 _p=$3
	shift 3
	check_status "$_w" "$_s" "$@"
	check_one_line_error "$_w: one line" "$OUT/last.err"
	check_grep "$_w: message" "$_p" "$OUT/last.err"
	check_empty "$_w: no records" "$OUT/last.out"
}

expect "no such file" 127 "cannot run '/nonexistent/prog': No such file" ms-record /nonexistent/prog
expect "no such command" 127 "'no-such-command-xyz': command not found" ms-record no-such-command-xyz
printf 'int main(void) { return 0; }\n' >"$OUT/st.c"
if cc -static -o "$OUT/static" "$OUT/st.c" 2>/dev/null; then
	expect "static binary" 126 "statically linked" ms-record "$OUT/static"
else
	not_ok "cannot build a static test program (libc6-dev's libc.a missing?)"
fi
expect "not executable" 126 "Permission denied" ms-record /etc/passwd
expect "a directory" 126 "Is a directory" ms-record /tmp
cp "$EX/leaky" "$OUT/suid"
if chown 65534 "$OUT/suid" 2>/dev/null && chmod u+s "$OUT/suid"; then
	expect "set-user-ID" 126 "set-user-ID" ms-record "$OUT/suid"
fi
expect "unwritable -o" 125 "cannot open '/nonexistent/dir/x'" ms-record -o /nonexistent/dir/x /bin/true
check_status "no program" 2 ms-record
check_grep "usage hint" "Try 'ms-record --help'" "$OUT/last.err"
check_status "bad option" 2 ms-record --bogus /bin/true
check_status "bad depth" 2 ms-record --depth 0 /bin/true
check_status "bad unwind" 2 ms-record --unwind magic /bin/true
# -d and -u, --depth's and --unwind's letters until 0.1.0 (now ms-top's
# --delay and --user), still work until 0.2, with a note.
check_status "-d, the old spelling of --depth" 0 ms-record -q -d 2 -u fp -o "$OUT/old.ndjson" /bin/true
check_eq "-d and -u: a note each" "ms-record: -d is an old spelling of --depth and goes in memscope 0.2
ms-record: -u is an old spelling of --unwind and goes in memscope 0.2" "$(cat "$OUT/last.err")"
check_eq "-d 2 -u fp: taken as --depth 2 --unwind fp" "2 fp" \
	"$(head -n 1 "$OUT/old.ndjson" | jq -r '"\(.options.depth) \(.options.unwind)"')"
check_status "bad interval" 2 ms-record -i x /bin/true
# Options after the program are the program's.
check_status "program options untouched" 0 ms-record -q -o "$OUT/echo.ndjson" /bin/echo -q --bogus
check_eq "echo printed its arguments" "-q --bogus" "$(cat "$OUT/last.out")"
# Writing to a closed pipe: the program still runs to its end, status kept.
ms-record "$EX/leaky" 2>"$OUT/pipe.err" | head -c 1 >/dev/null
check_eq "closed pipe: no error" "" "$(grep -v 'leaky: done' "$OUT/pipe.err" | grep -v 'ms-record: leaky:')"
# A full disk: the program runs to its end as ever, and the recording, cut
# short, does not pass for a whole one: 125 and one line, -q or not (the
# program's status in it).
if [ -w /dev/full ]; then
	check_status "-o on a full disk" 125 ms-record -q -o /dev/full "$EX/leaky"
	check_eq "full disk: the program ran" "leaky: done" "$(cat "$OUT/last.out")"
	check_one_line_error "full disk, -q" "$OUT/last.err"
	check_eq "full disk: what and why" \
		"ms-record: write error on /dev/full: No space left on device: the recording is incomplete (the program's exit status was 0)" \
		"$(cat "$OUT/last.err")"
	check_status "standard output on a full disk" 125 sh -c "ms-record -q \"$EX/crash\" abort >/dev/full"
	check_egrep "full standard output: the program's status (134, SIGABRT) said" \
		"write error on standard output: .*exit status was 134" "$OUT/last.err"
	check_status "full disk, without -q" 125 ms-record -o /dev/full "$EX/leaky"
	check_fgrep "full disk, without -q: the summary too" "ms-record: leaky: 601,025 allocations" "$OUT/last.err"
fi
finish
