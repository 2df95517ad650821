#!/bin/sh
# ms-report --pprof: a gzipped pprof profile that a real reader, go tool
# pprof, takes: on an unsampled recording of leaky the known leaking
# function comes first by inuse_space with its exact bytes, the
# alloc_space, alloc_objects and leaked_space totals are those of the end
# record, stacks carry their lines and leave the allocator's wrappers out
# (strdup, operator new); an --events recording and a snapshot of a
# recorded process give profiles too; -o FILE writes the same bytes; bad
# input and an ms-diff stream give exit 2 and a one-line error.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2
SRC="$TOP/examples"

# go tool pprof keeps a cache and temporary files under $HOME: here, and
# never the network (a file path, no symbolization).
export HOME="$OUT" GOCACHE="$OUT/gocache" PPROF_TMPDIR="$OUT/pprof" GOPROXY=off GOTOOLCHAIN=local \
	GOTELEMETRY=off
mkdir -p "$PPROF_TMPDIR"
if ! command -v go >/dev/null 2>&1; then
	not_ok "go is not installed (make deps installs golang-go)"
	finish
fi
# pp PROFILE ARGS...: go tool pprof's output, every node, figures exact
pp() {
	_f=$1
	shift
	go tool pprof -symbolize=none -nodefraction=0 -edgefraction=0 "$@" "$_f" 2>pp.err
}
# unit INDEX: bytes in bytes (not kB), counts as they are
unit() { case $1 in *_space) echo byte ;; *) echo minimum ;; esac; }
# total PROFILE INDEX: the total of a sample type, as go tool pprof adds it
total() {
	pp "$1" -unit="$(unit "$2")" -top -sample_index="$2" |
		sed -n 's/.*Total samples = \([0-9]*\)B\{0,1\} *$/\1/p'
}
# first_row PROFILE INDEX: "function flat" of the first row of -top
first_row() {
	pp "$1" -unit="$(unit "$2")" -top -sample_index="$2" | awk '/ flat  flat%/ { getline; print $6, $1; exit }'
}
endv() { jq -r "select(.type==\"end\") | .$2" "$1"; }

ms-record -q -o leaky.ndjson "$EX/leaky" >/dev/null 2>&1

# --- the profile: gzip, and the same bytes on stdout and in -o FILE ---------
check_status "ms-report --pprof" 0 ms-report --pprof leaky.ndjson
mv last.out leaky.pb.gz
check_empty "nothing on stderr" last.err
check_status "a valid gzip" 0 gzip -t leaky.pb.gz
check_status "ms-report --pprof -o FILE" 0 ms-report --pprof -o out.pb.gz leaky.ndjson
check_empty "-o FILE: nothing on stdout" last.out
check_status "-o FILE: the same profile" 0 cmp leaky.pb.gz out.pb.gz

# --- go tool pprof reads it: the known answers -------------------------------
check_status "go tool pprof reads it" 0 go tool pprof -symbolize=none -raw leaky.pb.gz
check_fgrep "sample types, inuse_space the default" \
	"alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt] leaked_objects/count leaked_space/bytes" \
	last.out
check_eq "inuse_space: the known leaking function first, exact" "leak_small_inner 48000B" \
	"$(first_row leaky.pb.gz inuse_space)"
check_eq "inuse_objects: the same, 1000 blocks" "leak_small_inner 1000" \
	"$(first_row leaky.pb.gz inuse_objects)"
check_eq "inuse_space total: the end's live_bytes" "$(endv leaky.ndjson live_bytes)" \
	"$(total leaky.pb.gz inuse_space)"
check_eq "inuse_space total: 89,609 B" 89609 "$(total leaky.pb.gz inuse_space)"
check_eq "alloc_space total: the end's bytes, exact" "$(endv leaky.ndjson bytes)" \
	"$(total leaky.pb.gz alloc_space)"
check_eq "alloc_objects total: the end's allocs, exact" "$(endv leaky.ndjson allocs)" \
	"$(total leaky.pb.gz alloc_objects)"
check_eq "leaked_space total: the end's leaked_bytes" "$(endv leaky.ndjson leaked_bytes)" \
	"$(total leaky.pb.gz leaked_space)"
check_eq "leaked_objects total: the end's leaked_blocks" "$(endv leaky.ndjson leaked_blocks)" \
	"$(total leaky.pb.gz leaked_objects)"
check_eq "alloc_space: the churn first" "churn" "$(first_row leaky.pb.gz alloc_space | cut -d' ' -f1)"

# every leak at its function, flat; strdup left out (leak_name allocates)
pp leaky.pb.gz -unit=byte -top -sample_index=inuse_space >top.txt
check_eq "inuse_space by function" "48000B leak_small_inner
40960B leak_page_inner
500B leak_grown
128B leak_aligned
21B leak_name" "$(awk '$1 ~ /B$/ && $1 != "0" && $2 ~ /%$/ && $1 == $4 { print $1, $6 }' top.txt)"
check_nogrep "no allocator wrapper in the stacks" "strdup|malloc" top.txt
check_egrep "stacks down to main" " main$" top.txt

# lines: the one that allocated, and the callers' call sites
L_small=$(line_of "$SRC/leaky.c" "char *p = malloc(48);")
pp leaky.pb.gz -unit=byte -top -lines -sample_index=inuse_space >lines.txt
check_egrep "-lines: leak_small_inner at leaky.c:$L_small" \
	" leak_small_inner .*/examples/leaky.c:$L_small$" lines.txt
check_egrep "-lines: its caller's call site" " leak_small_mid .*/examples/leaky.c:[0-9]+$" lines.txt
pp leaky.pb.gz -unit=byte -traces -sample_index=inuse_space >traces.txt
check_eq "-traces: the leak's stack, innermost first" \
	"leak_small_inner leak_small_mid leak_small_outer run main" \
	"$(awk 'on && /^-/ { exit } /48000B/ { on = 1; $1 = ""; print; next } on && NF == 1 { printf " %s", $1 }' traces.txt |
	   tr -s ' ' '\n' | grep -v '^$' | grep -v -E '^(__libc|_start)' | tr '\n' ' ' | sed 's/ $//')"
pp leaky.pb.gz -raw >raw.txt
bid=$(readelf -n "$EX/leaky" | sed -n 's/^ *Build ID: //p')
check_egrep "mappings: the program, with its path, build id and load address" \
	"^[0-9]+: 0x[0-9a-f]+000/0x[0-9a-f]+/0x0 $EX/leaky $bid " raw.txt
libc=$(sed -n 's|^[0-9]*: \(0x[0-9a-f]*\)/.* \(/[^ ]*libc.so.6\) \([0-9a-f]*\) .*|\1 \2 \3|p' raw.txt)
set -- $libc
check_eq "mappings: libc's build id, as readelf says" \
	"$(readelf -n "$2" 2>/dev/null | sed -n 's/^ *Build ID: //p' | head -n 1)" "$3"
start=$(sed -n "s|^[0-9]*: \(0x[0-9a-f]*\)/.* $EX/leaky .*|\1|p" raw.txt)
ip=$(jq -r 'select(.type=="frame" and .fn=="leak_small_inner") | "\(.ip) \(.offset)"' "$OUT/leaky.ndjson" | head -n 1)
check_eq "mappings: the load address is a frame's ip less its offset" \
	"$(printf '0x%x' $((${ip% *} - ${ip#* })))" "$start"
check_egrep "a site's block size is a label" "bytes:\[48 bytes\]" raw.txt
check_egrep "the allocation function too" "alloc_fn:\[calloc\]" raw.txt
check_fgrep "time: the recording's start" \
	"Time: $(jq -r 'select(.type=="header") | .start[0:19] | sub("T"; " ")' leaky.ndjson)" raw.txt

# --- C++: operator new is the allocator, not the function that allocated ------
ms-record -q -o cxx.ndjson "$EX/cxx" >/dev/null 2>&1
check_status "C++: ms-report --pprof" 0 ms-report --pprof -o cxx.pb.gz cxx.ndjson
pp cxx.pb.gz -unit=byte -top -sample_index=inuse_space >cxx.txt
check_eq "C++: leaked_space total, 632 B" 632 "$(total cxx.pb.gz leaked_space)"
check_egrep "C++: make_widget holds 7 x 24 B" "^ +168B .* make_widget\(int\)$" cxx.txt
check_nogrep "C++: no operator new in the flat column" "^ +[1-9][0-9]*B .*operator new" cxx.txt

# --- an --events recording: the same profile figures ------------------------
ms-record -q --events -o events.ndjson "$EX/leaky" >/dev/null 2>&1
check_status "--events: ms-report --pprof" 0 ms-report --pprof -o events.pb.gz events.ndjson
check_eq "--events: inuse_space, the same first row" "leak_small_inner 48000B" \
	"$(first_row events.pb.gz inuse_space)"
check_eq "--events: alloc_space total, the end's" "$(endv events.ndjson bytes)" \
	"$(total events.pb.gz alloc_space)"

# --- a snapshot of a process being recorded ----------------------------------
ms-record -q -o ticker.ndjson "$EX/ticker" 10 1000 50 >ticker.out 2>&1 &
rec=$!
_bg_pids="$_bg_pids $rec"
i=0
P=
while [ -z "$P" ] && [ $i -lt 100 ]; do
	P=$(pgrep -P $rec -x ticker)
	[ -n "$P" ] || sleep 0.05
	i=$((i + 1))
done
i=0
while ! ms-snap -q -p "$P" 2>/dev/null | grep -q '"recorded":true' && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.3
check_status "ms-snap of the recorded ticker" 0 ms-snap -p "$P" -o snap.ndjson
kill "$P" 2>/dev/null
wait $rec
check_status "snapshot: ms-report --pprof" 0 ms-report --pprof -o snap.pb.gz snap.ndjson
cache=$(v1 snap.ndjson | jq -r -s '
	(map(select(.type=="stack")) | map({key: (.id|tostring), value: .frames[0].fn}) | from_entries) as $top
	| [.[] | select(.type=="site" and $top[(.stack|tostring)] == "cache_add") | .live_bytes] | add')
check_eq "snapshot: cache_add first by inuse_space, its live bytes" "cache_add ${cache}B" \
	"$(first_row snap.pb.gz inuse_space)"

# --- what cannot be a profile, and bad input ---------------------------------
ms-snap -q -p $$ -o plain.ndjson
check_status "a snapshot without its heap: exit 2" 2 ms-report --pprof -o plain.pb.gz plain.ndjson
check_one_line_error "a snapshot without its heap: one line" last.err
check_grep "a snapshot without its heap: says why" "not recording" last.err
ms-diff -q leaky.ndjson events.ndjson >diff.ndjson
check_status "an ms-diff stream: exit 2" 2 ms-report --pprof -o diff.pb.gz diff.ndjson
check_one_line_error "an ms-diff stream: one line" last.err
check_grep "an ms-diff stream: names the way" "diff_base" last.err
printf '\001\002binary junk\n' >junk.bin
check_status "junk: exit 2" 2 ms-report --pprof -o junk.pb.gz junk.bin
check_one_line_error "junk: one line" last.err
check_grep "junk: names the input and line" "junk.bin:1:" last.err
# a bad record after good ones: exit 2, what was read is still a profile
{ head -n 40 leaky.ndjson; echo '{"type":"site","stack":"x"'; } >bad.ndjson
check_status "a bad record: exit 2" 2 ms-report --pprof -o bad.pb.gz bad.ndjson
check_one_line_error "a bad record: one line" last.err
check_grep "a bad record: names the line" "bad.ndjson:41:" last.err
check_status "a bad record: what was read is a valid profile" 0 \
	go tool pprof -symbolize=none -raw bad.pb.gz
check_status "missing file: exit 2" 2 ms-report --pprof -o none.pb.gz does-not-exist.ndjson
check_one_line_error "missing file: one line" last.err
check_status "unwritable -o: exit 2" 2 ms-report --pprof -o /nonexistent/dir/p.pb.gz leaky.ndjson
check_one_line_error "unwritable -o: one line" last.err

# --- an ms-record --follow recording: every process, each labeled ----------
# examples/forkexec: the parent leaks 3 x 111 B; its child allocates 2 x
# 222 B, then execs leaky (601,025 allocations, 54,283,515 B; 89,609 B
# leaked), as t0416 has them.
check_status "forkexec --follow" 0 ms-record -q --follow -o fe.ndjson "$EX/forkexec"
PARENT=$(jq -r 'select(.type == "header") | .pid' fe.ndjson | head -n 1)
CHILD=$(jq -r --argjson p "$PARENT" 'select(.type == "header" and .pid != $p) | .pid' fe.ndjson | head -n 1)
check_status "--pprof of it" 0 ms-report --pprof -o fe.pb.gz fe.ndjson
check_empty "--pprof of it: no word of other processes left out" last.err
# tag INDEX KEY: "value total" of each value of label KEY, as go tool pprof
# -tags adds them up, sorted
tag() {
	pp fe.pb.gz -unit="$(unit "$1")" -sample_index="$1" -tags |
		awk -v k="$2:" '$1 == k { on = 1; next } on && NF == 0 { exit }
			on { v = $NF; sub(/byte$/, "", v); t = $1; sub(/B$/, "", t); sub(/\.0$/, "", t); print v, t }' |
		sort
}
check_eq "--follow: alloc_space by pid" "$(printf '%s\n' "$PARENT 333" "$CHILD 54283959" | sort)" \
	"$(tag alloc_space pid)"
check_eq "--follow: alloc_space by program (the child's image before its exec is forkexec)" \
	"$(printf 'forkexec 777\nleaky 54283515')" "$(tag alloc_space program)"
check_eq "--follow: alloc_objects by program" "$(printf 'forkexec 5\nleaky 601025')" \
	"$(tag alloc_objects program)"
check_eq "--follow: leaked_space by program" "$(printf 'forkexec 333\nleaky 89609')" \
	"$(tag leaked_space program)"
check_eq "--follow: alloc_space is every end record's bytes" \
	"$(jq -s '[.[] | select(.type == "end") | .bytes] | add' fe.ndjson)" "$(total fe.pb.gz alloc_space)"
check_status "--follow: the profile says so" 0 go tool pprof -symbolize=none -raw fe.pb.gz
check_fgrep "--follow: the comment" "2 processes (ms-record --follow)" last.out
# The first process allocates nothing, its child everything: the samples
# are still labeled with the child's program (as the flame graph's towers
# name it), or the profile would read as the first program's.
cat >spawner.c <<'EOF'
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	pid_t c = fork();
	int st;
	(void)argc;
	if (c == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	return waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
EOF
check_status "build spawner" 0 cc -O1 -o spawner spawner.c
check_status "spawner --follow" 0 ms-record -q --follow -o sp.ndjson ./spawner "$EX/leaky"
SP=$(jq -r 'select(.type == "header") | .pid' sp.ndjson | head -n 1)
check_eq "spawner: the first process has no site" 0 \
	"$(jq --argjson p "$SP" 'select(.type == "site" and .pid == $p)' sp.ndjson | grep -c '"site"')"
check_status "--pprof of it" 0 ms-report --pprof -o sp.pb.gz sp.ndjson
check_eq "spawner: alloc_space by program: leaky's" "leaky 54283515" \
	"$(pp sp.pb.gz -unit=bytes -sample_index=alloc_space -tags |
		awk '$1 == "program:" { on = 1; next } on && NF == 0 { exit }
			on { v = $NF; t = $1; sub(/B$/, "", t); sub(/\.0$/, "", t); print v, t }')"
check_status "spawner: the profile says so" 0 go tool pprof -symbolize=none -raw sp.pb.gz
check_fgrep "spawner: the comment" "of a process the first one started" last.out
# With --events, sites are built again from the first process's events: that
# process's profile, and the word on stderr.
check_status "forkexec --follow --events" 0 ms-record -q --follow --events -o fee.ndjson "$EX/forkexec"
check_status "--pprof of it" 0 ms-report --pprof -o fee.pb.gz fee.ndjson
check_grep "--events --follow: the other process said" "holds 1 more process" last.err
check_eq "--events --follow: the parent's alloc_space" 333 "$(total fee.pb.gz alloc_space)"

finish
