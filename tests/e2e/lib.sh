# Sourced by the end-to-end tests: paths, a scratch directory and assertions.
# Each test is a sequence of checks; a failed check prints what was expected
# and what came out, and the script exits non-zero at the end.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$TOP/tools:$TOP/tools/ms-top:$PATH"
EX="$TOP/examples/bin"
T=$(basename "$0" .sh)
OUT="$TOP/tests/e2e/out/$T"
rm -rf "$OUT"
mkdir -p "$OUT"
# Decompressed debug files (ms-record(1), MEMSCOPE_CACHE) go to the tests'
# own cache, shared by the scripts of a run, not to the home directory's.
MEMSCOPE_CACHE="$TOP/tests/e2e/out/cache"
export MEMSCOPE_CACHE
# Text reports are as wide as $COLUMNS says: the tests' are 80 columns.
unset COLUMNS
_fails=0
_checks=0
_bg_pids=

ok() { _checks=$((_checks + 1)); }
not_ok() {
	_checks=$((_checks + 1))
	_fails=$((_fails + 1))
	echo "  not ok: $*" >&2
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then ok; else not_ok "$1: expected '$2', got '$3'"; fi
}
# check_ne WHAT UNEXPECTED ACTUAL
check_ne() {
	if [ "$2" != "$3" ]; then ok; else not_ok "$1: got '$3'"; fi
}
# check_status WHAT EXPECTED COMMAND...
check_status() {
	_what=$1 _want=$2
	shift 2
	"$@" >"$OUT/last.out" 2>"$OUT/last.err"
	_got=$?
	if [ "$_got" = "$_want" ]; then ok; else
		not_ok "$_what: exit status $_got, expected $_want (stderr: $(head -c 300 "$OUT/last.err"))"
	fi
}
# check_range WHAT LOW HIGH ACTUAL (integers, inclusive)
check_range() {
	if [ "$4" -ge "$2" ] 2>/dev/null && [ "$4" -le "$3" ] 2>/dev/null; then ok; else
		not_ok "$1: $4 not in [$2, $3]"
	fi
}
# check_grep WHAT PATTERN FILE
check_grep() {
	if grep -q -- "$2" "$3"; then ok; else not_ok "$1: '$2' not found in $3: $(head -c 300 "$3")"; fi
}
# check_one_line_error WHAT FILE: stderr is exactly one line
check_one_line_error() {
	_n=$(wc -l <"$2")
	if [ "$_n" = 1 ]; then ok; else not_ok "$1: expected a one-line error, got $_n lines: $(head -c 300 "$2")"; fi
}

# wait_for_line FILE PATTERN [TIMEOUT_S]
wait_for_line() {
	_i=0
	_limit=$(( ${3:-10} * 20 ))
	while ! grep -q -- "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt $_limit ]; then
			not_ok "timed out waiting for '$2' in $1"
			return 1
		fi
		sleep 0.05
	done
}

# wait_gone PID [TIMEOUT_S]: waits for our child PID to end (a zombie is
# ended); one that does not in time is not ok, and killed (SIGKILL), so
# that a wait for it ends.
wait_gone() {
	_i=0
	_limit=$(( ${2:-10} * 20 ))
	while kill -0 "$1" 2>/dev/null; do
		case $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) in Z | X | '') return 0 ;; esac
		_i=$((_i + 1))
		if [ $_i -gt $_limit ]; then
			not_ok "pid $1 did not end in ${2:-10} s"
			kill -KILL "$1" 2>/dev/null
			return 1
		fi
		sleep 0.05
	done
}

bg() { "$@" & _bg_pids="$_bg_pids $!"; }
cleanup() { for p in $_bg_pids; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

# skip REASON: the script cannot run its checks here; says so, passes.
# (A check inside a script that cannot run says "SKIP: why" on stderr.)
skip() {
	echo "SKIP $T: $*"
	exit 0
}

finish() {
	if [ $_fails -eq 0 ]; then
		echo "ok   $T ($_checks checks)"
		exit 0
	fi
	echo "FAIL $T: $_fails of $_checks checks failed"
	exit 1
}

# ---- helpers added for the ms-snap/ms-diff tests (t0000, t01xx) ----

# start_memhog NAME [ARGS...]: runs examples/bin/memhog ARGS in the
# background, output in $OUT/NAME.log, waits for its "ready" line and sets
# HOG_PID (killed at exit with the other background jobs).
start_memhog() {
	_log="$OUT/$1.log"
	shift
	"$EX/memhog" "$@" >"$_log" 2>&1 &
	HOG_PID=$!
	_bg_pids="$_bg_pids $HOG_PID"
	wait_for_line "$_log" "^ready $HOG_PID\$"
}
# vmrss PID: VmRSS of /proc/PID/status, in bytes
vmrss() { awk '/^VmRSS:/ { printf "%.0f\n", $2 * 1024 }' "/proc/$1/status"; }
# check_empty WHAT FILE: FILE exists and is empty
check_empty() {
	if [ -f "$2" ] && [ ! -s "$2" ]; then ok; else not_ok "$1: expected no output, got: $(head -c 300 "$2")"; fi
}
# check_nogrep WHAT PATTERN FILE: no line of FILE matches PATTERN (ERE)
check_nogrep() {
	if grep -Eq -- "$2" "$3"; then not_ok "$1: '$2' found in $3: $(grep -E -m1 -- "$2" "$3")"; else ok; fi
}
# check_egrep WHAT PATTERN FILE: some line of FILE matches PATTERN (ERE)
check_egrep() {
	if grep -Eq -- "$2" "$3"; then ok; else not_ok "$1: /$2/ not found in $3: $(head -c 300 "$3")"; fi
}
# check_fgrep WHAT STRING FILE: some line of FILE contains STRING (fixed)
check_fgrep() {
	if grep -Fq -- "$2" "$3"; then ok; else not_ok "$1: '$2' not found in $3"; fi
}

# --- for recordings -------------------------------------------------------

# line_of FILE TEXT: the line number of the first line of FILE containing
# TEXT (fixed string), so tests do not hard-code line numbers.
line_of() {
	grep -n -F -- "$2" "$1" | head -1 | cut -d: -f1
}

# v1 REC: the recording with every stack whole, its frames in place (format
# version 1, ms-filter --expand), for jq to read a stack's frames.
v1() { ms-filter -q --expand "$1"; }

# stack_of REC ID: the stack's frames as "fn@file:line" (file's basename),
# innermost first, joined by " < ".
stack_of() {
	v1 "$1" | jq -r --argjson id "$2" 'select(.type=="stack" and .id==$id)
		| [.frames[] | "\(.fn // "?")@\((.file // "?") | split("/") | last):\(.line // 0)"]
		| join(" < ")' | head -1
}

# leak_line REC FN: "count bytes kind size" of every leak record whose
# stack's innermost frame is in function FN, one a line, sorted.
leaks_in() {
	v1 "$1" | jq -r --arg fn "$2" -s '
		(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames[0].fn}) | from_entries) as $top
		| .[] | select(.type=="leak") | select($top[(.stack|tostring)] == $fn)
		| "\(.count) \(.bytes) \(.kind) \(.size)"' | sort
}

# valid_stream FILE: header first, end last; every frame and stack defined
# once, before the first record that needs it (a stack needs its frames and
# its parent); no frame or stack that nothing needs.  Prints what is wrong.
valid_stream() {
	jq -r -s '
		. as $all
		| (reduce ($all[] | if .type == "stack" then .parent // empty
				  else (.stack // empty), (.alloc_stack // empty), (.free_stack // empty) end)
		   as $i ({}; .[$i|tostring] = true)) as $used
		| (reduce ($all[] | select(.type == "stack") | .frames[] | numbers)
		   as $i ({}; .[$i|tostring] = true)) as $named
		| (if $all[0].type != "header" then ["first record is not a header"] else [] end) +
		(if $all[-1].type != "end" then ["last record is not an end"] else [] end) +
		(reduce $all[] as $r ({frames: {}, stacks: {}, bad: []};
			if $r.type == "frame" then
				(if .frames[$r.id|tostring] then .bad += ["frame \($r.id) twice"] else .frames[$r.id|tostring] = true end)
			elif $r.type == "stack" then
				reduce ($r.frames[] | numbers) as $f (.;
					if .frames[$f|tostring] then . else .bad += ["stack \($r.id) before frame \($f)"] end)
				| (if $r.parent != null and (.stacks[$r.parent|tostring] | not) then
					.bad += ["stack \($r.id) before its parent \($r.parent)"] else . end)
				| (if .stacks[$r.id|tostring] then .bad += ["stack \($r.id) twice"] else .stacks[$r.id|tostring] = true end)
			elif ($r.stack != null) and (.stacks[$r.stack|tostring] | not) then
				.bad += ["\($r.type) before stack \($r.stack)"]
			else . end) | .bad) +
		[$all[] | select(.type == "stack" and ($used[.id|tostring] | not)) | "unused stack \(.id)"] +
		[$all[] | select(.type == "frame" and ($named[.id|tostring] | not)) | "unused frame \(.id)"]
		| .[]' "$1"
}
