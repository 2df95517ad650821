# Sourced by the end-to-end tests: paths, a scratch directory and assertions.
# Each test is a sequence of checks; a failed check prints what was expected
# and what came out, and the script exits non-zero at the end.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$TOP/tools:$PATH"
EX="$TOP/examples/bin"
T=$(basename "$0" .sh)
OUT="$TOP/tests/e2e/out/$T"
rm -rf "$OUT"
mkdir -p "$OUT"
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

bg() { "$@" & _bg_pids="$_bg_pids $!"; }
cleanup() { for p in $_bg_pids; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

finish() {
	if [ $_fails -eq 0 ]; then
		echo "ok   $T ($_checks checks)"
		exit 0
	fi
	echo "FAIL $T: $_fails of $_checks checks failed"
	exit 1
}
