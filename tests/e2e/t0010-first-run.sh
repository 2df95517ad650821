#!/bin/sh
# The README's first run: the tools from the build tree on PATH, ms-record
# on a terminal writes its records to memscope.NAME.PID.ndjson (not onto
# the screen), says so at the start and says how to read it at the end;
# `make deps` with everything present installs nothing and says nothing.
. "$(dirname "$0")/lib.sh"

cd "$OUT" || exit 1
# script(1) gives ms-record a terminal for its standard output.
script -qec "ms-record $EX/leaky" /dev/null >tty.log 2>&1 </dev/null
check_eq "on a terminal: exit status is the program's" 0 $?
set -- memscope.leaky.*.ndjson
check_eq "one recording in the current directory" 1 $#
f=$1
pid=$(head -n 1 "$f" | jq -r .pid)
check_eq "named after the program and its pid" "memscope.leaky.$pid.ndjson" "$f"
tr -d '\r' <tty.log >tty.txt
check_grep "says where the records go, first" "^ms-record: recording to $f\$" tty.txt
check_eq "... before the program's own output" "ms-record: recording to $f" "$(head -n 1 tty.txt)"
check_grep "the program's output stays on the terminal" "^leaky: done\$" tty.txt
check_eq "and at the end, how to read it" "ms-record: ms-report $f shows the report" \
	"$(tail -n 1 tty.txt)"
check_nogrep "no records on the terminal" '"type"' tty.txt
check_grep "the summary line's leak total is the end record's" \
	", leaked 87.5 KiB in $(tail -n 1 "$f" | jq .leaked_blocks) blocks, exit 0\$" tty.txt
check_eq "the file is a whole recording" "end exit" "$(tail -n 1 "$f" | jq -r '"\(.type) \(.reason)"')"
ms-report "$f" >report.txt
check_grep "its report has the known leak total" "89,609 B  in 1,020 blocks" report.txt

# -q: the file, without the words.
script -qec "ms-record -q $EX/leaky" /dev/null >quiet.log 2>&1 </dev/null
check_nogrep "-q: nothing about the file" "ms-record" quiet.log
check_eq "-q: a second recording" 2 "$(ls memscope.leaky.*.ndjson | wc -l)"

# Nothing recorded, nothing left behind.
script -qec "ms-record $OUT/not-there" /dev/null >missing.log 2>&1 </dev/null
check_eq "a program that is not there: no file" 0 "$(ls memscope.not-there.* 2>/dev/null | wc -l)"
check_eq "... and no stray file named after ms-record" 2 "$(ls memscope.*.ndjson | wc -l)"

# Into a pipe, records still go to standard output.
ms-record -q "$EX/leaky" 2>/dev/null | tail -n 1 >piped.json
check_eq "into a pipe: the records on standard output" end "$(jq -r .type piped.json)"
check_eq "into a pipe: no new file" 2 "$(ls memscope.*.ndjson | wc -l)"

# make deps installs nothing, silently, when the packages are there.
PKGS="dpkg coreutils" sh "$TOP/tests/deps.sh" >deps.out 2>&1
check_eq "deps with everything present: exit status" 0 $?
check_empty "deps with everything present: says nothing" deps.out
finish
