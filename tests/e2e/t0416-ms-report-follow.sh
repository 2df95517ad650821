#!/bin/sh
# ms-report --json on an ms-record --follow recording: "summary" stays the
# main process's, and "summaries" has one per process image, children and
# exec'ed images included.  Known answers from examples/forkexec: the
# parent leaks 3 x 111 B; the forked child allocates 2 x 222 B, then execs
# examples/leaky (89,609 B in 1,020 blocks, all definitely lost).
. "$(dirname "$0")/lib.sh"
cd "$OUT" || exit 2

FIGS='[.pid, .reason, .allocs, .frees, .bytes, .leaked_bytes, .leaked_blocks, .definitely_bytes, .program]'

check_status "forkexec --follow" 0 ms-record -q --follow -o fe.ndjson "$EX/forkexec"
check_status "ms-report --json" 0 ms-report --json fe.ndjson
mv "$OUT/last.out" fe.json
PARENT=$(jq -r 'select(.type == "header") | .pid' fe.ndjson | head -n 1)
CHILD=$(jq -r --argjson p "$PARENT" 'select(.type == "header" and .pid != $p) | .pid' fe.ndjson | head -n 1)
check_eq "three process images" 3 "$(jq '.summaries | length' fe.json)"
check_eq "the parent, the child until its exec, leaky" \
	"[$PARENT,\"exit\",3,0,333,333,3,333,\"$EX/forkexec\"]
[$CHILD,\"exec\",2,0,444,0,0,0,\"$EX/forkexec\"]
[$CHILD,\"exit\",601025,600005,54283515,89609,1020,89609,\"leaky\"]" \
	"$(jq -c ".summaries[] | $FIGS" fe.json)"
check_eq "the child's parent is the parent" "$PARENT $PARENT" \
	"$(jq -r '[.summaries[1:][] | .ppid] | join(" ")' fe.json)"
check_eq "the parent's status" 0 "$(jq '.summaries[0].status' fe.json)"

# The top-level summary is still the main process's, and its entry says the
# same.
check_eq "summary: the parent's, as before" "$PARENT 333 3" \
	"$(jq -r '"\(.pid) \(.summary.leaked_bytes) \(.summary.leaked_blocks)"' fe.json)"
check_eq "summary = the parent's entry" "$(jq -c '.summary' fe.json)" \
	"$(jq -c '.summaries[0] | del(.pid, .ppid, .program, .start)' fe.json)"

# Each image ended as its end record says.
check_eq "each entry's ending is its end record's" \
	"$(jq -c 'select(.type == "end") | [.pid, .reason, .ts, .peak, .peak_ts, .lost]' fe.ndjson | sort)" \
	"$(jq -c '.summaries[] | [.pid, .reason, .duration, .peak, .peak_ts, .lost]' fe.json | sort)"
check_eq "each entry's leaks are its end record's (but after an exec)" \
	"$(jq -c 'select(.type == "end" and .reason != "exec") | [.pid, .leaked_bytes, .leaked_blocks, .definitely_bytes, .reachable_bytes]' fe.ndjson | sort)" \
	"$(jq -c '.summaries[] | select(.reason != "exec") | [.pid, .leaked_bytes, .leaked_blocks, .definitely_bytes, .reachable_bytes]' fe.json | sort)"

# A process's last image says what ms-filter --pid, then ms-report, says.
for p in $PARENT $CHILD; do
	check_eq "pid $p: its entry = the summary of ms-filter --pid $p" \
		"$(ms-filter --pid $p fe.ndjson | ms-report --json | jq -c .summary)" \
		"$(jq -c --argjson p $p '[.summaries[] | select(.pid == $p)] | last | del(.pid, .ppid, .program, .start)' fe.json)"
done

# Filters count in every entry, as in the summary.
ms-filter --min 64 fe.ndjson | ms-report --json >min.json
check_eq "--min 64: leaky's 41,588 B in 17 blocks, the parent's 333 B" \
	"[$PARENT,333,3] [$CHILD,0,0] [$CHILD,41588,17]" \
	"$(jq -c '.summaries[] | [.pid, .leaked_bytes, .leaked_blocks]' min.json | tr '\n' ' ' | sed 's/ $//')"

# An --events recording gives the same entries (from its site and leak
# records for the other processes).
check_status "forkexec --follow --events" 0 ms-record -q --follow --events -o ev.ndjson "$EX/forkexec"
check_eq "--events: the same figures" \
	"$(jq -c ".summaries[] | $FIGS | .[1:]" fe.json)" \
	"$(ms-report --json ev.ndjson | jq -c ".summaries[] | $FIGS | .[1:]")"

# Without --follow, one process, one entry.
ms-record -q -o one.ndjson "$EX/forkexec" >/dev/null 2>&1
check_eq "without --follow: one entry, the summary's" "1 true" \
	"$(ms-report --json one.ndjson | jq -r '"\(.summaries | length) \(.summary == (.summaries[0] | del(.pid, .ppid, .program, .start)))"')"
# Snapshots, diffs and --poll recordings have no process images.
ms-report --json "$TOP/tests/fixtures/report/poll.ndjson" >poll.json
check_eq "--poll: no summaries" null "$(jq -c .summaries poll.json)"

# Flame graphs of every process, a tower per program, its name the
# outermost frame (--pprof labels them: t0450): leaked bytes, the parent's
# 333 and leaky's 89,609 (the child before its exec leaks nothing).
check_status "ms-report --collapsed of the follow recording" 0 ms-report --collapsed -o fe.folded fe.ndjson
check_empty "--collapsed: nothing on stderr" last.err
check_eq "--collapsed: leaked bytes by program" "$(printf '[forkexec] 333\n[leaky] 89609')" \
	"$(awk '{ split($1, f, ";"); s[f[1]] += $NF } END { for (k in s) print k, s[k] }' fe.folded | sort)"
check_eq "--collapsed --cost bytes: allocated bytes by program" \
	"$(printf '[forkexec] 777\n[leaky] 54283515')" \
	"$(ms-report --collapsed --cost bytes fe.ndjson |
		awk '{ split($1, f, ";"); s[f[1]] += $NF } END { for (k in s) print k, s[k] }' | sort)"
check_status "ms-report --svg of the follow recording" 0 ms-report --svg -o fe.svg fe.ndjson
check_empty "--svg: nothing on stderr" last.err
check_fgrep "--svg: leaky's tower" "[leaky]" fe.svg
# An --events stream's sites are built again from the first process's
# events: those formats then say on stderr that they are about it alone.
for f in pprof collapsed svg; do
	check_status "ms-report --$f of the --events follow recording" 0 ms-report --$f -o ev.$f ev.ndjson
	check_eq "--$f of --events: the other processes said" \
		"ms-report: ev.ndjson: the stream holds 1 more process (ms-record --follow): this profile is about pid $(jq -r 'select(.type == "header") | .pid' ev.ndjson | head -n 1); ms-filter --pid PID picks another" \
		"$(cat "$OUT/last.err")"
done
# A recording of one process: no program frame.
check_eq "one process: no program frame" "" "$(ms-report --collapsed one.ndjson | grep '^\[forkexec\]')"

finish
