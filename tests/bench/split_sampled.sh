#!/bin/sh
# split_sampled.sh: where a sampled recording's cost in the program goes:
# the fast path alone (--sample 1T: every allocation and free counted, as
# good as none picked) and with the picks (--sample RATE: stacks, records,
# the set of recorded blocks), interleaved with native runs and with
# forward.so preloaded (the calls interposed and passed on: the floor of
# any preloaded profiler), all in one run (issue 17).
#
#   sh tests/bench/split_sampled.sh [ITERATIONS] [RATE] [WORKLOAD...]
#
# Defaults: 11 iterations, 512K, storm1 (workloads as ab_sampled.sh's:
# storm1 storm2 sqlite python server).  Prints per workload the least and
# the median of the program's CPU (user and system from its rusage: the
# native run's through peakmem, a recording's from its end record) and of
# the wall time, native and beyond it.  The program's CPU swings less than
# the wall on a shared machine, and leaves out ms-record's own, which runs
# beside it (the end record's recorder_cpu, printed too).  On the storm,
# 2026-11-28: the fast path 2-3 % of the program's CPU, the picks 1.5-2 %.
# Raw lines: tests/bench/out/split.txt.
set -u
N=${1:-11}
RATE=${2:-512K}
[ $# -ge 2 ] && shift 2 || shift $#
WLS=${*:-storm1}
# ab_setup.sh's helpers, with this tree as both of its trees.
set -- "$(cd "$(dirname "$0")/../.." && pwd)" "$N" $WLS
AB_N=$N AB_WL=$WLS AB_RAW=split.txt
. "$(dirname "$0")/ab_setup.sh"
i=0
while [ $i -lt "$N" ]; do
	for w in $WL; do
		for v in native forward; do
			ab_variant "$w" "$v"
			echo "$w $v $(awk '{ print $1 }' "$OUT/ab.time") $(cat "$OUT/ab.time.cpu") 0" >>"$RAW"
		done
		for r in 1T "$RATE"; do
			ab_variant "$w" after --sample "$r"
			# workload variant wall program_cpu recorder_cpu
			echo "$w $r $(awk '{ print $1 }' "$OUT/ab.time") $(ab_end after '"\(.cpu) \(.recorder_cpu)"' "- -")" >>"$RAW"
		done
	done
	i=$((i + 1))
	echo "split_sampled: iteration $i of $N" >&2
done
awk "$AB_AWK"'
$4 != "-" { k = $1 " " $2; wall[k] = wall[k] " " $3; cpu[k] = cpu[k] " " $4 / 1e6
	    rec[k] = rec[k] " " $5 / 1e6; seen[$1] = 1; v[$2] = 1 }
END {
  print "| workload | variant | program CPU ms: least, median | beyond native: least, median | wall s: least, median | wall / native: medians | ms-record CPU ms (least) |"
  print "|---|---|---:|---:|---:|---:|---:|"
  for (w in seen) {
	n = w " native"; cl = lo(cpu[n]); cm = med(cpu[n]); wm = med(wall[n])
	for (x in v) {
		k = w " " x
		if (!(k in cpu)) continue
		printf "| %s | %s | %.1f, %.1f | %+.1f, %+.1f | %.3f, %.3f | %.3fx | %.1f |\n", w, x,
			lo(cpu[k]), med(cpu[k]), lo(cpu[k]) - cl, med(cpu[k]) - cm,
			lo(wall[k]), med(wall[k]), med(wall[k]) / wm, lo(rec[k])
	}
  } }' "$RAW"
