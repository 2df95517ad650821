#!/bin/sh
# ms-top: records in --batch mode (exact figures from fixture trees, from
# memhog's known growth and from a recorded ticker's live heap), errors,
# and the screen, driven in tmux: header and columns, sorting, filtering,
# the selection following its process through a re-sort, the tree, the
# detail view of a process's mappings and of a recorded process's live
# sites, resizing, colors, and the terminal restored after q, SIGTERM and
# a crash.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2
FX="$TOP/tests/fixtures/proc"
ME=$(id -un)

# ------------------------------------------------------------ batch mode

# fixtures: the figures of smaps_rollup (and of smaps summed before 4.14)
ms-top --batch -n 1 --proc "$FX/normal" >normal.ndjson
check_eq "fixture: exit status" 0 $?
check_eq "fixture: header, meminfo, one sample, end" "header meminfo sample end" \
	"$(jq -r .type normal.ndjson | tr '\n' ' ' | sed 's/ $//')"
check_eq "fixture: header" "ms-top top 1000 60000 1" \
	"$(jq -r 'select(.type=="header") | "\(.tool) \(.mode) \(.options.interval) \(.options.window) \(.options.count)"' normal.ndjson)"
# 1320 kB rss, 532 kB pss, 8 + 248 kB private, 32 kB swap
check_eq "fixture: the sample" "4242 4200 sleep S 1000 1351680 544768 262144 32768 0 0 1 0" \
	"$(jq -r 'select(.type=="sample") | "\(.pid) \(.ppid) \(.comm) \(.state) \(.uid) \(.rss) \(.pss) \(.uss) \(.swap) \(.growth) \(.growth_recent) \(.round) \(.ts)"' normal.ndjson)"
check_eq "fixture: meminfo" "1 8192000000 6656000000 1536000000 2048000000 1945600000" \
	"$(jq -r 'select(.type=="meminfo") | "\(.round) \(.total) \(.available) \(.used) \(.swap_total) \(.swap_free)"' normal.ndjson)"
check_eq "fixture: end" "complete 1" "$(jq -r 'select(.type=="end") | "\(.reason) \(.rounds)"' normal.ndjson)"
ms-top --batch -n 1 --proc "$FX/no_rollup" >no_rollup.ndjson
check_eq "fixture before 4.14: smaps summed" "3131 6459392 4919296" \
	"$(jq -r 'select(.type=="sample") | "\(.pid) \(.rss) \(.pss)"' no_rollup.ndjson)"
ms-top --batch -n 1 --proc "$FX/zombie" >zombie.ndjson
check_eq "fixture: a zombie has no figures, an unknown uid is not invented" "5000 S null null|5001 Z null 0" \
	"$(jq -r 'select(.type=="sample") | "\(.pid) \(.state) \(.rss) \(.uid)"' zombie.ndjson | sort | tr '\n' '|' | sed 's/|$//')"
check_eq "fixture: kernel threads are not shown" "" \
	"$(ms-top --batch -n 1 --proc "$FX/kthread" | jq -r 'select(.type=="sample") | .pid')"

start_memhog hogA 64 || finish
A=$HOG_PID
start_memhog hogB 32 || finish
B=$HOG_PID
kill -USR1 $A $B
wait_for_line "$OUT/hogA.log" "^grown 64" || finish
wait_for_line "$OUT/hogB.log" "^grown 32" || finish

# three rounds of the two memhogs: well-formed, and their figures as the
# kernel says them (memhog is idle: its rss and private pages stay put)
ms-top --batch -n 3 -d 0.2 -p "$A,$B" >hogs.ndjson
check_eq "-n 3: exit status" 0 $?
check_eq "-n 3: every line is a record" 0 "$(jq -e -c 'select(.type | type != "string")' hogs.ndjson | wc -l)"
check_eq "-n 3: header first, end last" "header end" \
	"$(jq -r .type hogs.ndjson | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//')"
check_eq "-n 3: three rounds of meminfo and two samples" "1 2 3|1 1 2 2 3 3" \
	"$(jq -r 'select(.type=="meminfo") | .round' hogs.ndjson | tr '\n' ' ' | sed 's/ $//')|$(jq -r 'select(.type=="sample") | .round' hogs.ndjson | tr '\n' ' ' | sed 's/ $//')"
check_eq "-n 3: end" "complete 3" "$(jq -r 'select(.type=="end") | "\(.reason) \(.rounds)"' hogs.ndjson)"
check_eq "-n 3: the pids, in each round" "$A $B $A $B $A $B" \
	"$(jq -r 'select(.type=="sample") | .pid' hogs.ndjson | tr '\n' ' ' | sed 's/ $//')"
check_eq "-n 3: rounds about 0.2 s apart" "ok" \
	"$(jq -s -r '[.[] | select(.type=="meminfo") | .ts] | if (.[0] == 0 and .[1] >= 150000000 and .[2] - .[1] >= 150000000 and .[2] < 2000000000) then "ok" else tostring end' hogs.ndjson)"
rollup() { awk -v k="$2:" '$1 == k { s += $2 * 1024 } END { print s }' "/proc/$1/smaps_rollup"; }
rollup_uss() { awk '$1 == "Private_Clean:" || $1 == "Private_Dirty:" { s += $2 * 1024 } END { print s }' "/proc/$1/smaps_rollup"; }
check_eq "memhog 64: rss and swap of smaps_rollup, user, comm, no growth" \
	"$(rollup $A Rss) 0 $ME memhog 0 0" \
	"$(jq -r --argjson p $A 'select(.type=="sample" and .pid==$p and .round==3) | "\(.rss) \(.swap) \(.user) \(.comm) \(.growth) \(.growth_recent)"' hogs.ndjson)"
# uss moves by a few pages after ms-top read it (memhog's libc pages turn
# private as it runs): the read made now is within 64 KiB of ms-top's.
U=$(rollup_uss $A)
check_range "memhog 64: uss of smaps_rollup" $((U - 65536)) $((U + 65536)) \
	"$(jq -r --argjson p $A 'select(.type=="sample" and .pid==$p and .round==3) | .uss' hogs.ndjson)"
check_eq "memhog 64: uss <= pss <= rss" true \
	"$(jq -r --argjson p $A 'select(.type=="sample" and .pid==$p and .round==3) | .uss <= .pss and .pss <= .rss' hogs.ndjson)"
check_range "memhog 64: its 64 MiB are private" 67108864 80000000 \
	"$(jq -r --argjson p $A 'select(.type=="sample" and .pid==$p and .round==1) | .uss' hogs.ndjson)"

# growth: memhog maps and touches 16 MiB between rounds 1 and 2; with a
# window of 0.6 s, round 4 (0.8 s after round 2) counts from round 2
start_memhog hogE 16 || finish
E=$HOG_PID
ms-top --batch -n 4 -d 0.4 --window 0.6 -p $E -o grow.ndjson &
_bg_pids="$_bg_pids $!"
TOPJOB=$!
wait_for_line grow.ndjson '"round":1' || finish
kill -USR1 $E
wait $TOPJOB
check_eq "-o FILE: exit status" 0 $?
check_eq "--window: in the header" 600 "$(jq -r 'select(.type=="header") | .options.window' grow.ndjson)"
growth() { jq -r --argjson r "$1" 'select(.type=="sample" and .round==$r) | "\(.growth) \(.growth_recent)"' grow.ndjson; }
check_eq "round 1: no growth" "0 0" "$(growth 1)"
# 16 MiB, and the few pages of libc code its first mmap() and printf() fault in
check_range "round 2: it grew by 16 MiB" 16777216 17039360 "$(growth 2 | cut -d' ' -f1)"
check_eq "round 2: recently" "$(growth 2 | cut -d' ' -f1)" "$(growth 2 | cut -d' ' -f2)"
check_eq "round 4: grown since ms-top saw it, not within the window" "$(growth 2 | cut -d' ' -f1) 0" "$(growth 4)"

# -u: by name or number
check_eq "-u USER" "$A" "$(ms-top --batch -n 1 -u "$ME" -p $A | jq -r 'select(.type=="sample") | .pid')"
check_eq "-u UID of someone else" "" "$(ms-top --batch -n 1 -u 4242 -p $A | jq -r 'select(.type=="sample") | .pid')"

# every process of -p ended: the stream ends, reason "exit" (the sleep
# is the zombie of this shell until it is waited for: it has ended too)
sleep 0.5 &
SL=$!
ms-top --batch -d 0.2 -p $SL >ended.ndjson
check_eq "-p: the process ended" "exit true" \
	"$(jq -s -r '.[-1] | "\(.reason) \(.rounds >= 3)"' ended.ndjson)"
wait $SL

# a reader that goes away is not an error
{ ms-top --batch -d 0.05; echo $? >epipe.status; } | head -n 1 >/dev/null
check_eq "a reader that goes away: exit status" 0 "$(cat epipe.status)"

# ------------------------------------------------------------ errors

sleep 0 &
GONE=$!
wait $GONE
check_status "-p with a gone pid: exit status" 2 ms-top -p $GONE
check_eq "-p with a gone pid: the message" "ms-top: pid $GONE: no such process" "$(cat "$OUT/last.err")"
check_one_line_error "-p with a gone pid: one line" "$OUT/last.err"
check_status "--batch -p with a gone pid: exit status" 2 ms-top --batch -p "$A,$GONE"
check_eq "--batch -p with a gone pid: nothing written" "" "$(cat "$OUT/last.out")"
check_status "-u with no such user" 2 ms-top --batch -u no-such-user-ms-top
check_status "not a terminal" 2 ms-top -p $A </dev/null
check_eq "not a terminal: the message" "ms-top: standard input is not a terminal: use --batch for records" \
	"$(cat "$OUT/last.err")"
check_status "-o without --batch" 2 ms-top -o x.ndjson
check_status "-d 0" 2 ms-top --batch -d 0
check_status "-p 12,: a bad list" 2 ms-top --batch -p "$A,"

# ------------------------------------------------------------ the screen

if ! command -v tmux >/dev/null 2>&1; then
	not_ok "tmux is not installed (make deps installs it)"
	finish
fi
TM="tmux -L ms-top-test-$$ -f /dev/null"
# (the server leaves its socket behind: removed too)
trap 'cleanup; $TM kill-server 2>/dev/null; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/ms-top-test-$$"' EXIT

start_memhog hogD 48 || finish
D=$HOG_PID
sh -c 'sleep 300; exit 0' &
S=$!
_bg_pids="$_bg_pids $S"
for _i in 1 2 3 4 5 6 7 8 9 10; do
	C=$(pgrep -P $S -x sleep)
	[ -n "$C" ] && break
	sleep 0.05
done
_bg_pids="$_bg_pids $C"

keys() { $TM send-keys -t =ui: "$@"; }
screen() { $TM capture-pane -p -t =ui: "$@"; }
# wait_screen WHAT PATTERN: until a line of the screen matches PATTERN (ERE)
wait_screen() {
	_i=0
	while ! screen | grep -Eq -- "$2"; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ]; then
			not_ok "$1: /$2/ not on the screen: $(screen | head -c 800)"
			return 1
		fi
		sleep 0.05
	done
	ok
}
# wait_gone WHAT PATTERN: until no line matches
wait_gone() {
	_i=0
	while screen | grep -Eq -- "$2"; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ]; then
			not_ok "$1: /$2/ still on the screen: $(screen | head -c 800)"
			return 1
		fi
		sleep 0.05
	done
	ok
}
# rows: the pids of the list, top to bottom
rows() {
	screen | awk '/^ *PID[^ ]* +USER/ { f = 1; next } f && $1 ~ /^[0-9]+$/ { printf "%s%s", n++ ? " " : "", $1 }'
}
# wait_rows WHAT EXPECTED [first|last]: until the list is EXPECTED (pids,
# top to bottom), or begins or ends with it (the order of the small
# processes, the shell and sleep, is theirs)
rows_are() {
	case ${2:-all} in
	all) [ "$(rows)" = "$1" ] ;;
	first) case "$(rows) " in "$1 "*) true ;; *) false ;; esac ;;
	last) case " $(rows)" in *" $1") true ;; *) false ;; esac ;;
	esac
}
wait_rows() {
	_i=0
	while ! rows_are "$2" "${3:-all}"; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ]; then
			check_eq "$1 (${3:-all})" "$2" "$(rows)"
			return 1
		fi
		sleep 0.05
	done
	ok
}
# selected: the pid on the line drawn in reverse video
selected() {
	screen -e | grep "$(printf '\033')\[7m *[0-9]" | sed "s/$(printf '\033')\[[0-9;]*m//g" |
		awk '{ print $1; exit }'
}
wait_selected() {
	_i=0
	while [ "$(selected)" != "$2" ]; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ]; then
			check_eq "$1" "$2" "$(selected)"
			return 1
		fi
		sleep 0.05
	done
	ok
}
# prompt: the shell in the pane is back (its prompt alone on the last line)
wait_prompt() {
	_i=0
	while [ "$(screen | sed '/^$/d' | tail -n 1)" != '$' ]; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ]; then
			not_ok "$1: no prompt: $(screen | head -c 800)"
			return 1
		fi
		sleep 0.05
	done
	ok
}

# Wide enough for the COMMAND column to hold memhog's path in a clone
# anywhere (mktemp -d, and check-sanitize's .sanitize/ under it).
$TM new-session -d -s ui -x 200 -y 40 env PATH="$PATH" PS1='$ ' LANG=C.UTF-8 LC_ALL=C.UTF-8 \
	TERM=xterm-256color ENV= sh || { not_ok "tmux new-session"; finish; }
wait_prompt "the shell in tmux"
keys "stty -g >'$OUT/stty.before'; clear" Enter
keys "ms-top -d 0.25 -p $A,$B,$D,$S,$C; echo status \$?" Enter
wait_screen "the column titles" '^ +PID USER +RSS. +PSS +USS +SWAP +GROWTH +\+60s HISTORY +COMMAND' || finish
screen >list.txt
check_egrep "the title" '^ms-top 0\.1\.0 - 5 processes, refresh 0\.2s' list.txt
check_egrep "the memory gauge" '^Mem \[[█▒·]+\] [0-9.]+[KMG]/[0-9.]+[KMG] used  avail [0-9.]+[KMG]  cache ' list.txt
check_egrep "the swap gauge" '^Swp ' list.txt
check_egrep "memhog 64: its row" "^ +$A $ME +6[5-9]\.[0-9]M +[0-9.]+M +6[4-9]\.[0-9]M +0 .*memhog 64\$" list.txt
check_egrep "the key bar" '^Enter inspect  / filter  t tree  1-9 sort  \? help  q quit' list.txt
check_eq "colors (TERM has them, NO_COLOR is not set)" 1 \
	"$(screen -e | grep -Ec "$(printf '\033')\[([34][0-7]|[34]8;5;[0-9]+)m" | awk '{ print ($1 > 0) }')"
wait_rows "by RSS, largest first" "$A $B" first

# the selection is a process: filtered to D, then the filter cleared, D
# stays selected; D grows past B and the list re-sorts: still D
keys / "$D" Enter
wait_rows "/ PID: that process only" "$D"
keys Escape
wait_rows "Esc: the filter cleared" "$A $B" first
wait_selected "the selection stays on D" "$D"
kill -USR1 $D
wait_for_line "$OUT/hogD.log" "^grown 48" || finish
wait_rows "D grew past B" "$A $D $B" first
wait_selected "the selection followed D" "$D"
# (a refresh may read D halfway through its growth: the next one has it all)
wait_screen "D's growth: 48 MiB" "^ +$D $ME .* \+48\.0M +\+48\.0M " || screen >d.txt

# sorting
pids_up=$(printf '%s\n' $A $B $D $S $C | sort -n | tr '\n' ' ' | sed 's/ $//')
pids_down=$(printf '%s\n' $A $B $D $S $C | sort -rn | tr '\n' ' ' | sed 's/ $//')
keys 1
wait_rows "1: by PID" "$pids_up"
check_egrep "1: the PID title is marked" '^ +PID▲ USER' "$(screen >s.txt; echo s.txt)"
keys 1
wait_rows "1 again: by PID, reversed" "$pids_down"
keys 9
wait_rows "9: by COMMAND" "$B $D $A $S $C"
keys 3
wait_rows "3: by RSS" "$A $D $B" first
keys 3
wait_rows "3 again: by RSS, smallest first" "$B $D $A" last
keys '<'
wait_rows "<: by USER (then pid)" "$pids_up"
keys 3

# filtering by name
keys / memhog Enter
wait_rows "/ memhog: the memhogs only" "$A $D $B"
keys / Escape
wait_rows "/ Esc: every process again" "$A $D $B" first
wait_gone "/ Esc: the filter gone" '\[memhog\]'
check_eq "/ Esc: five processes" 5 "$(rows | wc -w)"

# the tree: sleep under its shell
keys t
wait_screen "t: the child under its parent" "^ +$C $ME .* └─ sleep 300\$"
check_eq "t: the child right after its parent" "$C" \
	"$(rows | tr ' ' '\n' | grep -A1 -x "$S" | sed -n 2p)"
keys t
wait_gone "t again: no tree" "└─"

# the detail view: memhog 64's mappings
keys / "$A" Enter
wait_rows "/ A" "$A"
keys Enter
wait_screen "Enter: the process" "^PID $A  memhog  user $ME" || finish
wait_screen "Enter: its mappings" '^ +RSS +PSS +DIRTY +SWAP +MAPS +KIND +MAPPING$'
screen >inspect.txt
check_egrep "Enter: its 64 MiB of anonymous memory" '^ +64\.[0-9]M +[0-9.]+M +64\.[0-9]M +0 +[0-9]+  anon +\[anon\]$' inspect.txt
check_egrep "Enter: its heap" ' heap +\[heap\]$' inspect.txt
check_egrep "Enter: its stack" ' stack +\[stack\]$' inspect.txt
check_egrep "Enter: its program" " file +$EX/memhog\$" inspect.txt
check_egrep "Enter: its figures" "^RSS 6[5-9]\.[0-9]M  PSS " inspect.txt
keys Escape
wait_screen "Esc: the list again" '^ +PID USER'
keys Escape

# help
keys '?'
wait_screen "?: the keys" 'ms-top keys'
keys x
wait_gone "any key closes the help" 'ms-top keys'

# resizing: too small, narrow, back
$TM resize-window -t =ui: -x 30 -y 5
wait_screen "a tiny terminal says so" '^terminal too small \(30x5\)'
$TM resize-window -t =ui: -x 70 -y 20
wait_screen "a narrow terminal: the essential columns" '^ +PID +RSS. .*COMMAND'
check_nogrep "a narrow terminal: no history" 'HISTORY' "$(screen >narrow.txt; echo narrow.txt)"
$TM resize-window -t =ui: -x 200 -y 40
wait_screen "back to its size" 'HISTORY +COMMAND'

# q: the terminal as it was
keys q
wait_screen "q: ms-top ended" '^status [0-9]+$'
wait_prompt "q: the shell's prompt"
screen >after-q.txt
check_egrep "q: exit status 0" '^status 0$' after-q.txt
check_nogrep "q: nothing of ms-top left on the screen" 'PID +USER|^Mem \[|HISTORY' after-q.txt
keys "clear; stty -g >'$OUT/stty.q'" Enter
wait_for_line "$OUT/stty.q" . 5
check_eq "q: the terminal modes restored" "$(cat stty.before)" "$(cat stty.q)"

# without colors; then SIGTERM
keys "clear; NO_COLOR=1 ms-top -d 0.25 -p $A; echo status \$?" Enter
wait_screen "NO_COLOR: the list" "^ +$A $ME " || finish
check_eq "NO_COLOR: no colors" 0 \
	"$(screen -e | grep -Ec "$(printf '\033')\[([34][0-7]|[34]8;5;[0-9]+)m")"
check_egrep "NO_COLOR: reverse video stays" "$(printf '\033')\[7m" "$(screen -e >nocolor.txt; echo nocolor.txt)"
PANE=$($TM display -p -t =ui: '#{pane_pid}')
kill -TERM "$(pgrep -P "$PANE" -x ms-top)"
wait_screen "SIGTERM: ms-top ended" '^status [0-9]+$'
wait_prompt "SIGTERM: the shell's prompt"
check_egrep "SIGTERM: exit status 0" '^status 0$' "$(screen >after-term.txt; echo after-term.txt)"
check_nogrep "SIGTERM: nothing of ms-top left" 'PID +USER|^Mem \[' after-term.txt
keys "clear; stty -g >'$OUT/stty.term'" Enter
wait_for_line "$OUT/stty.term" . 5
check_eq "SIGTERM: the terminal modes restored" "$(cat stty.before)" "$(cat stty.term)"

# Ctrl-C: SIGINT from the terminal
keys "clear; ms-top -d 0.25 -p $A; echo status \$?" Enter
wait_screen "Ctrl-C: the list" "^ +$A $ME " || finish
keys C-c
wait_screen "Ctrl-C: ms-top ended" '^status [0-9]+$'
check_egrep "Ctrl-C: exit status 0" '^status 0$' "$(screen >after-int.txt; echo after-int.txt)"
check_nogrep "Ctrl-C: nothing of ms-top left" 'PID +USER|^Mem \[' after-int.txt

# a crash: the terminal restored, then the same signal
keys "clear; LANG=C LC_ALL=C ms-top -d 0.25 -p $S,$C; echo status \$?" Enter
wait_screen "LANG=C: the list" "^ +$C $ME " || finish
keys t
wait_screen "LANG=C: an ASCII tree" "^ +$C $ME .* \`- sleep 300\$"
kill -SEGV "$(pgrep -P "$PANE" -x ms-top)"
wait_screen "SIGSEGV: ms-top ended" '^status [0-9]+$'
wait_prompt "SIGSEGV: the shell's prompt"
check_egrep "SIGSEGV: died of it" '^status 139$' "$(screen >after-segv.txt; echo after-segv.txt)"
check_nogrep "SIGSEGV: nothing of ms-top left" 'PID +USER|^Mem \[' after-segv.txt
keys "clear; stty -g >'$OUT/stty.segv'" Enter
wait_for_line "$OUT/stty.segv" . 5
check_eq "SIGSEGV: the terminal modes restored" "$(cat stty.before)" "$(cat stty.segv)"

# ------------------------------------------------------------ a recorded process

ms-record -q -o "$OUT/ticker.ndjson" "$EX/ticker" 10 1000 50 >ticker.log 2>&1 &
REC=$!
_bg_pids="$_bg_pids $REC"
for _i in $(seq 100); do
	TK=$(pgrep -P $REC -x ticker)
	[ -n "$TK" ] && ms-snap -q -p "$TK" 2>/dev/null | grep -q '"recorded":true' && break
	sleep 0.05
done
check_eq "ticker is recorded" true "$(ms-snap -q -p "$TK" | jq -r 'select(.type=="live") | .recorded')"
# past its first 50 ticks, it frees a message for each it makes
for _i in $(seq 100); do
	[ "$(ms-snap -q -p "$TK" | jq -s '[.[] | select(.type=="site") | .frees] | add')" -gt 0 ] && break
	sleep 0.05
done
ms-top --batch -n 3 -d 0.3 -p "$TK" >ticker-top.ndjson
check_eq "recorded: its live heap in every sample, 3 sites" "3 3 3" \
	"$(jq -r 'select(.type=="sample" and .heap > 0) | .sites' ticker-top.ndjson | tr '\n' ' ' | sed 's/ $//')"
# cache_add adds 1000 B a tick; make_message's 50 messages of 64 B may be
# 51 for the moment between a tick's malloc and its free
check_eq "recorded: the heap grows by 1000 B blocks (cache_add)" true \
	"$(jq -s '[.[] | select(.type=="sample")] | (.[2].heap - .[1].heap) as $d | $d > 0 and ([0, 64, 936] | index($d % 1000)) != null' ticker-top.ndjson)"
check_eq "recorded: rates from the second round" "false true true" \
	"$(jq -r 'select(.type=="sample") | has("alloc_rate")' ticker-top.ndjson | tr '\n' ' ' | sed 's/ $//')"
LINE=$(line_of "$TOP/examples/ticker.c" "struct entry *e = malloc(grow);")
keys "clear; ms-top -d 0.25 -p $TK" Enter
wait_screen "recorded: [heap] in the list" "^ +$TK $ME .*\[heap [0-9.]+[KM]\]" || finish
keys Enter
wait_screen "recorded: the live heap" '^LIVE HEAP [0-9.]+[KM] in [0-9]+ blocks, 3 sites'
wait_screen "recorded: its largest site, at its line" \
	"^ +[0-9.]+[KM] +[0-9]+  cache_add ticker\\.c:$LINE < main ticker\\.c:[0-9]+\$"
wait_screen "recorded: the site growing fastest" \
	"^ +\\+[0-9.]+[KM] +[0-9]+  cache_add ticker\\.c:$LINE "
keys q
wait_prompt "recorded: q"

# Twins: make_user's two sites (through my_alloc, the program's own
# wrapper, found as ms-report finds it), told apart by the first caller
# where their paths part (main, build_table), as ms-report tells them.
W="$TOP/tests/e2e/wrappers.c"
check_status "build wrappers.c" 0 cc -O1 -g -fno-omit-frame-pointer -o "$OUT/wrappers" "$W"
ms-record -q -o "$OUT/wrappers.ndjson" "$OUT/wrappers" hold >wrappers.log 2>&1 &
WREC=$!
_bg_pids="$_bg_pids $WREC"
for _i in $(seq 200); do
	WP=$(pgrep -P $WREC -x wrappers)
	[ -n "$WP" ] && grep -q blocks wrappers.log && ms-snap -q -p "$WP" 2>/dev/null | grep -q '"recorded":true' && break
	sleep 0.05
done
L_USER=$(line_of "$W" "make_user(void) {")
L_ROLE=$(line_of "$W" "make_role(void) {")
keys "clear; ms-top -d 0.25 -p $WP" Enter
wait_screen "twins: [heap] in the list" "^ +$WP $ME .*\[heap [0-9.]+[KM]\]" || finish
keys Enter
# my_alloc, the program's own wrapper, passes them on (as in ms-report).
wait_screen "twins: make_user's from main" \
	"^ +100B +1  make_user wrappers\\.c:$L_USER < main wrappers\\.c:[0-9]+\$"
wait_screen "twins: make_user's from build_table" \
	"^ +100B +1  make_user wrappers\\.c:$L_USER < build_table wrappers\\.c:[0-9]+\$"
wait_screen "twins: a site of one path, its caller" \
	"^ +300B +1  make_role wrappers\\.c:$L_ROLE < main wrappers\\.c:[0-9]+\$"
keys q
wait_prompt "twins: q"
# (a background job of sh ignores SIGINT, and so does what it runs)
kill -TERM "$WP"
wait $WREC

# after its first refreshes, a refresh allocates nothing: ms-top recorded
# for 5 and for 30 refreshes (its figures, and the live heap it reads from
# ticker's recorder) makes as many allocations.  (Not with sanitizers:
# their runtime, not the shim, then owns malloc.)
ldd "$TOP/tools/ms-top/ms-top" | grep -q 'lib[a-z]*san\.' && { kill -INT $REC; wait $REC; finish; }
for n in 5 30; do
	ms-record -q -o "allocs.$n.ndjson" ms-top --batch -n $n -d 0.02 -p "$A,$B,$TK" >top.$n.ndjson
	check_eq "ms-top recorded for $n refreshes" "$n $n" \
		"$(jq -r 'select(.type=="sample" and .pid=='"$TK"' and .heap > 0) | .round' top.$n.ndjson | wc -l) $(jq -r 'select(.type=="end") | .rounds' top.$n.ndjson)"
done
check_eq "no allocation after the first refreshes (allocations in all, 5 and 30 refreshes)" \
	"$(jq -r 'select(.type=="end") | .allocs' allocs.5.ndjson)" \
	"$(jq -r 'select(.type=="end") | .allocs' allocs.30.ndjson)"

kill -INT $REC
wait $REC

finish
