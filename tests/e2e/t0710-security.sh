#!/bin/sh
# The security model (.github/SECURITY.md), checked: output files in a
# shared directory never follow another user's planted link nor write over
# another user's file; the live snapshot directory must be the user's own,
# private and not a link; the shim trusts no environment in a setuid
# program; attaching asks the kernel's permission and widens nothing; no
# shell ever sees user data.  Needs root (to play the other user, nobody).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	skip "needs root and setpriv (to play another user, nobody)"
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# What nobody runs, where nobody can reach it whatever the checkout's modes
# (a clone in a private directory, for one).
NB=$(mktemp -d /tmp/msc-t0710.XXXXXX)
chmod 755 "$NB"
cp "$TOP/tools/ms-record" "$TOP/tools/ms-snap" "$TOP/shim/libmemscope.so" "$NB/"
cleanup_nb() { rm -rf "$NB"; }
REC="$TOP/tests/fixtures/report/leaky.ndjson"

# --- output files in a shared directory -------------------------------------
S="$OUT/shared"
mkdir -p "$S" && chmod 1777 "$S"
echo "precious" >"$OUT/target"
ln -s "$OUT/target" "$S/planted" && chown -h nobody "$S/planted"
# (ms-record's own failures are 125: its statuses are the program's)
for tool in "2 ms-report -o $S/planted $REC" "2 ms-filter -o $S/planted $REC" \
	    "125 ms-record -q -o $S/planted $EX/leaky"; do
	want=${tool%% *}
	tool=${tool#* }
	name=${tool%% *}
	# shellcheck disable=SC2086
	check_status "$name -o: another user's link in a shared directory" "$want" $tool
	check_one_line_error "$name: one line" "$OUT/last.err"
	check_grep "$name: says why" "another user in a directory others can write" "$OUT/last.err"
	check_eq "$name: the link's target untouched" "precious" "$(cat "$OUT/target")"
done
ln -s "$OUT/mine" "$S/own-link"
check_status "our own link in a shared directory is followed" 0 ms-report -o "$S/own-link" "$REC"
check_grep "our own link: written through" "leaked" "$OUT/mine"
echo "theirs" >"$S/theirs" && chown nobody "$S/theirs"
check_status "another user's file in a shared directory" 2 ms-report -o "$S/theirs" "$REC"
check_eq "their file untouched" "theirs" "$(cat "$S/theirs")"
mkdir -p "$OUT/private"
ln -s "$OUT/target2" "$OUT/private/link" && chown -h nobody "$OUT/private/link"
check_status "a link of another user outside shared directories is followed" 0 \
	ms-report -o "$OUT/private/link" "$REC"
check_grep "followed: written" "leaked" "$OUT/target2"

# --- the live snapshot directory -------------------------------------------------
mkdir -p "$OUT/rt"
ln -s /tmp "$OUT/rt/memscope"
XDG_RUNTIME_DIR="$OUT/rt" ms-record -o "$OUT/l.ndjson" "$EX/leaky" >/dev/null 2>"$OUT/l.err"
check_eq "planted live directory: the program is recorded all the same" "exit 0" \
	"$(jq -r 'select(.type=="end") | "\(.reason) \(.status)"' "$OUT/l.ndjson")"
check_grep "planted live directory: refused, and said" \
	"no live snapshots: '$OUT/rt/memscope' is not a private directory of this user" "$OUT/l.err"
check_eq "planted live directory: no socket in the link's target" "" \
	"$(find /tmp -maxdepth 1 -name '*.sock' -newer "$OUT/target" 2>/dev/null)"
rm "$OUT/rt/memscope" && mkdir -m 0755 "$OUT/rt/memscope"
check_status "a live directory open to others is refused by ms-snap" 2 \
	env XDG_RUNTIME_DIR="$OUT/rt" ms-snap -p $$ --leaks
check_grep "open directory: said" "not a private directory" "$OUT/last.err"

# --- a setuid program takes no environment from its caller ------------------------
cat >"$OUT/suid.c" <<'EOT'
#include <dlfcn.h>
#include <stdio.h>
#include <sys/auxv.h>
int main(int argc, char **argv)
{
	/* on a file system mounted nosuid the bit does nothing */
	fprintf(stderr, "secure %lu\n", getauxval(AT_SECURE));
	/* as /etc/ld.so.preload would load it */
	if (argc < 2 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "suid: %s\n", dlerror());
		return 1;
	}
	printf("suid: ran\n");
	return 0;
}
EOT
cc -o "$NB/suid" "$OUT/suid.c" -ldl
chmod 4755 "$NB/suid"
# listen N: accepts on $NB/fake.sock for 3 s, says whether someone came
listen() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(3)
import os; os.chmod(sys.argv[1], 0o777)
print("ready", flush=True)
try:
    c, _ = s.accept(); print("connected", flush=True)
except socket.timeout:
    print("nobody", flush=True)' "$NB/fake.sock" >"$OUT/listen.$1" &
	_lp=$!
	wait_for_line "$OUT/listen.$1" ready
}
rm -f "$NB/fake.sock"
listen root
MEMSCOPE_SOCK="$NB/fake.sock" "$NB/suid" "$NB/libmemscope.so" >"$OUT/suid-root.out" 2>&1
wait $_lp
check_eq "control: a normal process connects to MEMSCOPE_SOCK" "connected" "$(tail -n 1 "$OUT/listen.root")"
rm -f "$NB/fake.sock"
listen secure
MEMSCOPE_SOCK="$NB/fake.sock" as_nobody "$NB/suid" "$NB/libmemscope.so" >"$OUT/suid.out" 2>"$OUT/suid.err"
wait $_lp
check_eq "setuid: the program ran" "suid: ran" "$(cat "$OUT/suid.out")"
if grep -q "secure 1" "$OUT/suid.err"; then
	check_eq "setuid: MEMSCOPE_SOCK ignored, no connection" "nobody" "$(tail -n 1 "$OUT/listen.secure")"
else
	echo "  SKIP: $NB is on a nosuid file system: the setuid check" >&2
fi

# --- attach asks the kernel, widens nothing ------------------------------------------
sleep 30 &
victim=$!
MEMSCOPE_SHIM="$NB/libmemscope.so" as_nobody "$NB/ms-record" -p $victim -o /dev/null --duration 1s >"$OUT/att.out" 2>"$OUT/att.err"
check_eq "attach to another user's process: refused" 2 $?
check_one_line_error "attach refused: one line" "$OUT/att.err"
check_grep "attach refused: says why" "not permitted to trace pid $victim" "$OUT/att.err"
check_eq "attach refused: the process runs on" "S" "$(awk '{ print $3 }' /proc/$victim/stat | tr R S)"
as_nobody "$NB/ms-snap" -p $victim --leaks >"$OUT/snap.out" 2>"$OUT/snap.err"
check_eq "ms-snap --leaks of another user's process: refused" 2 $?
kill $victim
cleanup_nb

# --- a link of theirs anywhere on the way to -o ----------------------------------
mkdir -p "$OUT/pub" "$OUT/theirdir" && chmod 1777 "$OUT/pub" && chown nobody "$OUT/theirdir"
echo "precious" >"$OUT/target3"
ln -s "$OUT/target3" "$OUT/theirdir/out.ndjson" && chown -h nobody "$OUT/theirdir/out.ndjson"
ln -s "$OUT/theirdir" "$OUT/pub/d" && chown -h nobody "$OUT/pub/d"
check_status "-o through their directory link in a sticky directory" 2 \
	ms-report -o "$OUT/pub/d/out.ndjson" "$REC"
check_grep "their directory link: says why" "another user in a directory others can write" "$OUT/last.err"
check_status "-o at their link in their own directory" 2 ms-report -o "$OUT/theirdir/out.ndjson" "$REC"
check_status "ms-record -o through their directory link" 125 \
	ms-record -q -o "$OUT/pub/d/out.ndjson" "$EX/leaky"
check_eq "their links: the root file untouched" "precious" "$(cat "$OUT/target3")"
ln "$OUT/target3" "$S/hard" 2>/dev/null && {
	check_status "a second name of a file, in a shared directory" 2 ms-report -o "$S/hard" "$REC"
	check_eq "the hard link's file untouched" "precious" "$(cat "$OUT/target3")"
}

# --- their runtime directory (sudo -E, su without -) ------------------------------
mkdir -p "$OUT/theirrt" && chown nobody "$OUT/theirrt" && chmod 700 "$OUT/theirrt"
XDG_RUNTIME_DIR="$OUT/theirrt" ms-record -q -o "$OUT/rt.ndjson" "$EX/leaky" >/dev/null 2>"$OUT/rt.err"
check_eq "their runtime directory: the program is recorded" "exit 0" \
	"$(jq -r 'select(.type=="end") | "\(.reason) \(.status)"' "$OUT/rt.ndjson")"
check_eq "their runtime directory: nothing of ours made in it" "" "$(ls -A "$OUT/theirrt")"

# --- attached to their process: our directory, their socket ---------------------
sleep 30 &
victim=$!
env -u XDG_RUNTIME_DIR sh -c 'exec setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30' &
nvictim=$!
wait_for_line "/proc/$nvictim/status" "Uid:.65534"
# Their process loads the library from where it can read it, whatever
# the checkout's modes.
NS=$(mktemp -d /tmp/msc-t0710s.XXXXXX)
chmod 755 "$NS"
cp "$TOP/shim/libmemscope.so" "$NS/"
env -u XDG_RUNTIME_DIR MEMSCOPE_SHIM="$NS/libmemscope.so" \
	ms-record -p $nvictim -o "$OUT/natt.ndjson" --duration 3s 2>"$OUT/natt.err" &
natt=$!
i=0
sock=
while [ $i -lt 200 ] && [ -z "$sock" ]; do
	sock=$(find /tmp -maxdepth 2 -path '/tmp/memscope.*/ctl.sock' -user nobody 2>/dev/null | head -n 1)
	i=$((i + 1))
	[ -n "$sock" ] || sleep 0.05
done
if [ -n "$sock" ]; then
	check_eq "attach to their process: the directory stays root's, 0711" "root 711" \
		"$(stat -c '%U %a' "$(dirname "$sock")")"
	check_eq "attach to their process: the socket theirs, 0600" "nobody 600" "$(stat -c '%U %a' "$sock")"
else
	not_ok "attach to their process: no socket of theirs appeared ($(cat "$OUT/natt.err"))"
fi
wait $natt
check_eq "attach to their process: recorded" "1" "$(jq -r 'select(.type=="end") | 1' "$OUT/natt.ndjson" | head -n 1)"
kill $nvictim $victim 2>/dev/null
rm -rf "$NS"

# --- collectors that lie -----------------------------------------------------------
FK=$(mktemp -d /tmp/msc-t0710f.XXXXXX)
chmod 755 "$FK"
# Where nobody can read it, and a python3 of the system's (not root's own).
cp "$(dirname "$0")/fake-collector.py" "$FK/"
FAKE="$FK/fake-collector.py"
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
native=$("$EX/leaky" 2>&1; echo "status $?")
# fake_run LOG SOCK [as_nobody]: a fake collector as MODE at SOCK while
# leaky runs with the library, its output and status in $got.
fake_run() {
	_mode=$1 _sock=$2
	shift 2
	"$@" $PY "$FAKE" $_mode "$_sock" >"$OUT/fake.$_mode" &
	_fp=$!
	wait_for_line "$OUT/fake.$_mode" ready
	got=$(LD_PRELOAD="$TOP/shim/libmemscope.so" MEMSCOPE_SOCK="$_sock" timeout 60 "$EX/leaky" 2>&1; echo "status $?")
	wait $_fp
}
for mode in ring nrings unsealed short; do
	rm -f "$FK/s"
	fake_run $mode "$FK/s"
	check_grep "a page that lies ($mode): it was offered" "sent $mode" "$OUT/fake.$mode"
	check_eq "a page that lies ($mode): the program as without us" "$native" "$got"
done
mkdir "$FK/n" && chown nobody "$FK/n"
fake_run listen "$FK/n/s" as_nobody
check_eq "another user's collector: the program as without us" "$native" "$got"
check_grep "another user's collector: gets no hello" "hello 0 bytes" "$OUT/fake.listen"

# --- a live socket that another user serves ----------------------------------------
sleep 30 &
victim=$!
LD=$(env -u XDG_RUNTIME_DIR sh -c 'echo /tmp/memscope-$(id -u)')
mkdir -p -m 0700 "$LD"
rm -f "$LD/$victim.sock"
python3 "$FAKE" drop "$LD/$victim.sock" >"$OUT/fake.live" &
fp=$!
wait_for_line "$OUT/fake.live" ready
check_status "a live socket served by another user: refused" 2 \
	env -u XDG_RUNTIME_DIR ms-snap -p $victim --leaks -o "$OUT/forged.ndjson"
check_grep "refused: says why" "served by another user" "$OUT/last.err"
check_nogrep "refused: nothing of theirs printed" "forged" "$OUT/forged.ndjson"
kill $fp $victim 2>/dev/null
rm -f "$LD/$victim.sock"
rm -rf "$FK"

# --- names that would steer a terminal ---------------------------------------------
sed 's/"fn":"leak_small_inner"/"fn":"leak\\u001b[2J\\u0007\\u009b31m_inner"/' "$REC" >"$OUT/esc.ndjson"
for f in --text --md; do
	ms-report $f "$OUT/esc.ndjson" >"$OUT/esc.out"
	check_eq "ms-report $f: no control character out" "0" \
		"$(tr -d '\n\t' <"$OUT/esc.out" | LC_ALL=C tr -cd '\000-\037\177' | wc -c)"
	check_fgrep "ms-report $f: the name shown escaped" 'leak\x1b[2J\x07\u009b31m_inner' "$OUT/esc.out"
done

# --- no shell sees user data -------------------------------------------------------
if command -v strace >/dev/null; then
	strace -f -qq -e trace=execve -o "$OUT/exec.trace" \
		ms-record -q -o "$OUT/x;touch pwned1" /bin/echo 'a;touch pwned2' '$(touch pwned3)' >/dev/null 2>&1
	check_eq "the program's arguments reach it as they are, no shell" "" \
		"$(grep -v 'execve("[^"]*/ms-record"\|execve("/bin/echo", \["/bin/echo", "a;touch pwned2", "$(touch pwned3)"\]' "$OUT/exec.trace" | grep execve)"
	check_eq "nothing was touched" "" "$(ls "$OUT" . | grep '^pwned')"
	check_grep "the file named with a ';' is written" '"type":"end"' "$OUT/x;touch pwned1"
fi

finish
