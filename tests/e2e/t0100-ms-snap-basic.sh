#!/bin/sh
# ms-snap on real, idle processes (examples/bin/memhog waits on a signal, so
# its memory does not move): the stream's frame, the process record against
# /proc read at the same moment, grouped and per-mapping records, -a,
# --kthreads, -o and several -p.
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

HZ=$(getconf CLK_TCK)
PAGE=$(getconf PAGESIZE)

# argv with a space, a quote and a backslash: cmdline must round-trip.
start_memhog hog 8 "two words" 'q"uote\' || finish
P=$HOG_PID
EXE=$(readlink -f "$EX/memhog")

# ------------------------------------------------------------ the frame
rss_before=$(vmrss $P)
ms-snap -p $P >snap.json 2>snap.err
st=$?
rss_after=$(vmrss $P)
check_eq "ms-snap -p: exit status" 0 $st
check_empty "ms-snap -p: stderr" snap.err
check_status "ms-snap -p | jq .: every line is JSON" 0 jq . snap.json
check_eq "jq -s reads the snapshot as one array" array "$(jq -s -r type snap.json)"
check_eq "every line starts with \"type\"" 0 "$(grep -cv '^{"type":"' snap.json)"
check_eq "first record is the header" "header memscope 2 ms-snap snapshot $P" \
	"$(head -n 1 snap.json | jq -r '"\(.type) \(.format) \(.version) \(.tool) \(.mode) \(.pid)"')"
check_eq "header page_size" "$PAGE" "$(head -n 1 snap.json | jq .page_size)"
check_eq "last record is end: complete, 1 process, none partial" "end complete 1 0 0" \
	"$(tail -n 1 snap.json | jq -r '"\(.type) \(.reason) \(.processes) \(.partial) \(.unreadable)"')"
check_eq "one process record, one meminfo record" "1 1" \
	"$(jq -s -r '"\([.[] | select(.type == "process")] | length) \([.[] | select(.type == "meminfo")] | length)"' snap.json)"
check_eq "meminfo total is MemTotal" \
	"$(awk '/^MemTotal:/ { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)" \
	"$(jq 'select(.type == "meminfo") | .total' snap.json)"

# ------------------------------------------------------ process record
jq -c 'select(.type == "process")' snap.json >proc.json
pget() { jq -r ".$1" proc.json; }
rss=$(pget rss)
lo=$rss_before hi=$rss_after
[ "$lo" -gt "$hi" ] && lo=$rss_after hi=$rss_before
check_range "process rss = VmRSS read around it (+-1 page)" $((lo - PAGE)) $((hi + PAGE)) "$rss"
check_eq "process pid" "$P" "$(pget pid)"
check_eq "process ppid (this shell)" "$$" "$(pget ppid)"
check_eq "process comm" memhog "$(pget comm)"
check_eq "process cmdline is the real argv" \
	"$(jq -cn '$ARGS.positional' --args "$EX/memhog" 8 "two words" 'q"uote\')" \
	"$(jq -c .cmdline proc.json)"
check_eq "process state (waiting in sigwait)" S "$(pget state)"
ticks=$(sed 's/.*) //' /proc/$P/stat | awk '{ print $20 }')
check_eq "process starttime (stat field 22, in ns)" "$((ticks * (1000000000 / HZ)))" "$(pget starttime)"
check_eq "process threads" 1 "$(pget threads)"
check_eq "process uid" "$(id -u)" "$(pget uid)"
check_eq "no kthread flag on a user process" null "$(pget kthread)"
check_eq "vsize = VmSize" "$(awk '/^VmSize:/ { printf "%.0f\n", $2 * 1024 }' /proc/$P/status)" "$(pget vsize)"
check_eq "rss_anon + rss_file + rss_shmem = rss" "$rss" \
	"$(jq '.rss_anon + .rss_file + .rss_shmem' proc.json)"
check_range "private + shared (smaps_rollup) = rss (+-1 page)" $((rss - PAGE)) $((rss + PAGE)) \
	"$(jq '.private_clean + .private_dirty + .shared_clean + .shared_dirty' proc.json)"
check_eq "anonymous = smaps_rollup Anonymous" \
	"$(awk '/^Anonymous:/ { printf "%.0f\n", $2 * 1024 }' /proc/$P/smaps_rollup)" "$(pget anonymous)"
check_eq "pss is there and not above rss" true "$(jq '.pss > 0 and .pss <= .rss' proc.json)"
check_eq "no \"missing\" figures" null "$(pget missing)"

# ---------------------------------------------------- grouped mappings
jq -c 'select(.type == "mapping")' snap.json >groups.json
names() { jq -r .name "$1" | sort; }
check_eq "grouped mapping records all belong to pid $P" "[]" \
	"$(jq -s -c "map(select(.pid != $P) | .name)" groups.json)"
check_eq "group names are unique" "$(names groups.json | uniq)" "$(names groups.json)"
names groups.json >names.txt
check_egrep "a heap group ([heap] or [anon])" '^\[(heap|anon)\]$' names.txt
check_grep "a [stack] group" '^\[stack\]$' names.txt
check_eq "the executable's group" "file" "$(jq -r --arg f "$EXE" 'select(.name == $f) | .kind' groups.json)"
check_eq "[stack] group kind" stack "$(jq -r 'select(.name == "[stack]") | .kind' groups.json)"
check_eq "group counts add up to the lines of /proc/PID/maps" "$(wc -l </proc/$P/maps)" \
	"$(jq -s 'map(.count) | add' groups.json)"
check_eq "group sizes add up to VmSize ([vsyscall] is not counted there)" "$(pget vsize)" \
	"$(jq -s 'map(select(.name != "[vsyscall]") | .size) | add' groups.json)"
check_range "group rss adds up to the process rss (+-1 page)" $((rss - PAGE)) $((rss + PAGE)) \
	"$(jq -s 'map(.rss) | add' groups.json)"

# ------------------------------------------------------------ --maps
ms-snap -p $P --maps >maps.json 2>maps.err
check_eq "ms-snap --maps: exit status" 0 $?
check_empty "ms-snap --maps: stderr" maps.err
check_eq "--maps: one mapping record per line of /proc/PID/maps" "$(wc -l </proc/$P/maps)" \
	"$(jq -c 'select(.type == "mapping")' maps.json | wc -l)"
# The same address ranges, in the same order (leading zeros aside).
awk '{ print $1 }' /proc/$P/maps | sed 's/^0*//; s/-0*/-/' >ranges.want
jq -r 'select(.type == "mapping") | "\(.start[2:])-\(.end[2:])"' maps.json >ranges.got
check_eq "--maps: the address ranges of /proc/PID/maps" "$(cat ranges.want)" "$(cat ranges.got)"
check_eq "--maps: same rss in total as the groups" "$(jq -s 'map(.rss) | add' groups.json)" \
	"$(jq -s 'map(select(.type == "mapping") | .rss) | add' maps.json)"
check_eq "--maps: header says maps all" all "$(head -n 1 maps.json | jq -r .options.maps)"

ms-snap -p $P --no-maps >nomaps.json 2>&1
check_eq "--no-maps: no mapping records, one process" "0 1" \
	"$(jq -s -r '"\(map(select(.type == "mapping")) | length) \(map(select(.type == "process")) | length)"' nomaps.json)"

# ---------------------------------------------------------------- -a
ms-snap -a >all.json 2>all.err
st=$?
check_eq "ms-snap -a: exit status" 0 $st
check_status "ms-snap -a | jq ." 0 jq . all.json
check_eq "-a: our memhog is there, with its start time" "memhog $(pget starttime)" \
	"$(jq -r "select(.type == \"process\" and .pid == $P) | \"\(.comm) \(.starttime)\"" all.json)"
check_range "-a: memhog rss = VmRSS (+-1 page)" $((lo - PAGE)) $((hi + PAGE)) \
	"$(jq "select(.type == \"process\" and .pid == $P) | .rss" all.json)"
check_eq "-a: no mapping records" 0 "$(jq -c 'select(.type == "mapping")' all.json | wc -l)"
check_eq "-a: no kernel threads" "[]" \
	"$(jq -s -c 'map(select(.type == "process" and (.kthread == true or .pid == 2)) | .pid)' all.json)"
check_eq "-a: each pid once" 0 \
	"$(jq -s 'map(select(.type == "process") | .pid) | length - (unique | length)' all.json)"
check_eq "-a: end counts the process records" \
	"$(jq -c 'select(.type == "process")' all.json | wc -l)" "$(tail -n 1 all.json | jq .processes)"
check_eq "-a: header says all, maps none" "true none" \
	"$(head -n 1 all.json | jq -r '"\(.options.all) \(.options.maps)"')"

ms-snap -a --groups >allg.json 2>/dev/null
check_eq "-a --groups: memhog's groups are there" "$(names groups.json)" \
	"$(jq -r "select(.type == \"mapping\" and .pid == $P) | .name" allg.json | sort)"

# ------------------------------------------------------ -a --kthreads
# Kernel threads and zombies exist but have no memory map: Linux 6.18 fails
# the open of their smaps_rollup with ESRCH (older kernels the read).  They
# are listed without memory figures, and that is no reason to warn.
# (libmsc/procfs/proc.c once took that ESRCH for "no such process".)
ms-snap -a --kthreads >allk.json 2>allk.err
check_eq "ms-snap -a --kthreads: exit status" 0 $?
check_eq "-a --kthreads: pid 2 (kthreadd) with kthread true" "kthreadd true" \
	"$(jq -r 'select(.type == "process" and .pid == 2) | "\(.comm) \(.kthread)"' allk.json)"
check_eq "-a --kthreads: memhog still there" memhog \
	"$(jq -r "select(.type == \"process\" and .pid == $P) | .comm" allk.json)"
ms-snap -p 2 >k2.json 2>k2.err
check_eq "ms-snap -p 2: exit status" 0 $?
check_empty "ms-snap -p 2: no warning" k2.err
check_eq "ms-snap -p 2: kthreadd, no rss, nothing missing" "kthreadd true null null" \
	"$(jq -r 'select(.type == "process") | "\(.comm) \(.kthread) \(.rss) \(.missing)"' k2.json)"
check_eq "ms-snap -p 2: no mapping records, end: 1 process, 0 partial" "0 1 0" \
	"$(jq -s -r '"\(map(select(.type == "mapping")) | length) \(.[-1].processes) \(.[-1].partial)"' k2.json)"

# A zombie: a child that its parent (sleep, after exec) never waits for.
sh -c 'sleep 0 & exec sleep 10' &
zparent=$!
_bg_pids="$_bg_pids $zparent"
Z=
for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	for f in /proc/[0-9]*/stat; do
		Z=$(sed 's/.*) //' "$f" 2>/dev/null | awk -v p=$zparent -v f="$f" \
			'$2 == p && $1 == "Z" { split(f, a, "/"); print a[3] }')
		[ -n "$Z" ] && break
	done
	[ -n "$Z" ] && break
	sleep 0.05
done
check_eq "a zombie to snapshot" true "$([ -n "$Z" ] && echo true)"
ms-snap -p "${Z:-0}" >z.json 2>z.err
check_eq "ms-snap -p ZOMBIE: exit status" 0 $?
check_empty "ms-snap -p ZOMBIE: no warning" z.err
check_eq "ms-snap -p ZOMBIE: state Z, no rss, nothing missing, no mappings" "Z null null 0" \
	"$(jq -s -r '"\(map(select(.type == "process"))[0] | "\(.state) \(.rss) \(.missing)") \(map(select(.type == "mapping")) | length)"' z.json)"

# ---------------------------------------------------------------- -o
ms-snap -p $P -o out.json >o.stdout 2>o.err
check_eq "ms-snap -o: exit status" 0 $?
check_empty "ms-snap -o: nothing on stdout" o.stdout
check_empty "ms-snap -o: stderr" o.err
same() { jq -c 'if .type == "process" or .type == "mapping" then
	{type, pid, name, kind, count, size, rss, comm, cmdline, starttime} else {type} end' "$1"; }
check_eq "-o FILE: the same records as stdout" "$(same snap.json)" "$(same out.json)"

# ------------------------------------------------------- several -p
start_memhog hog2 16 || finish
P2=$HOG_PID
ms-snap -p $P -p $P2 >two.json 2>two.err
check_eq "ms-snap -p A -p B: exit status" 0 $?
check_empty "ms-snap -p A -p B: stderr" two.err
check_eq "header pids, no single pid" "[[$P,$P2],null]" "$(head -n 1 two.json | jq -c '[.pids, .pid]')"
check_eq "process records in the order asked" "$P $P2" \
	"$(jq -r 'select(.type == "process") | .pid' two.json | tr '\n' ' ' | sed 's/ $//')"
# Each mapping record follows its own process record.
check_eq "mapping records follow their process" "[]" \
	"$(jq -s -c 'reduce (.[] | select(.type == "process" or .type == "mapping")) as $r
		({cur: null, bad: []}; if $r.type == "process" then .cur = $r.pid
		 elif $r.pid != .cur then .bad += [$r.name] else . end) | .bad' two.json)"
check_eq "both processes have mapping groups" "$(names groups.json)" \
	"$(jq -r "select(.type == \"mapping\" and .pid == $P) | .name" two.json | sort)"
check_eq "second process: [stack] group" 1 \
	"$(jq -c "select(.type == \"mapping\" and .pid == $P2 and .name == \"[stack]\")" two.json | wc -l)"
check_range "second process rss = VmRSS (+-1 page)" $(($(vmrss $P2) - PAGE)) $(($(vmrss $P2) + PAGE)) \
	"$(jq "select(.type == \"process\" and .pid == $P2) | .rss" two.json)"
check_eq "end: 2 processes" 2 "$(tail -n 1 two.json | jq .processes)"

finish
