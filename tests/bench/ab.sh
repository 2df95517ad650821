#!/bin/sh
# ab.sh: ms-record (full recording) of two builds, A/B, interleaved, with
# the figures of issue 18: wall ratio, the shim's and the collector's CPU
# per event, and the peak memory of program + collector.
#
#   sh tests/bench/ab.sh BEFORE_TREE [ITERATIONS] [WORKLOAD...]
#
# BEFORE_TREE is another built tree of memscope (git worktree add DIR REV;
# make -C DIR all); this tree is "after".  Each iteration runs every
# workload (storm1 storm2 sqlite python, as make bench's profilers section)
# natively, then under each build, through tests/bench/peakmem.  Wall
# ratios on this shared 2-core machine swing by a quarter between
# iterations; CPU per event much less, and the medians of interleaved runs
# are what to compare.  Extra ms-record options: AB_ARGS (both builds).
# Raw lines go to tests/bench/out/ab.txt:
#   workload variant wall_s peak_bytes status cpu_ns program_cpu_ns recorder_cpu_ns events
set -u
AB_N=5 AB_WL="storm1 storm2 sqlite python" AB_RAW=ab.txt
. "$(dirname "$0")/ab_setup.sh"
ARGS=${AB_ARGS:-}
i=0
while [ $i -lt "$N" ]; do
	for w in $WL; do
		for v in native before after; do
			ab_variant "$w" "$v" $ARGS
			e=$(ab_end "$v" '"\(.cpu) \(.recorder_cpu) \(.allocs + .frees)"' "- - -")
			echo "$w $v $(cat "$OUT/ab.time") $(cat "$OUT/ab.time.cpu") $e" >>"$RAW"
		done
	done
	i=$((i + 1))
	echo "ab: iteration $i of $N" >&2
done
awk "$AB_AWK"'
{ w = $1; v = $2; seen[w] = 1
  wall[v] = $3; peak[v] = $4; cpu[v] = $6
  if (v == "native") next
  ratio[w, v] = ratio[w, v] " " $3 / wall["native"]
  shim[w, v] = shim[w, v] " " ($7 - cpu["native"]) / $9
  coll[w, v] = coll[w, v] " " $8 / $9
  pk[w, v] = pk[w, v] " " $4 / 1048576
  pn[w] = pn[w] " " peak["native"] / 1048576 }
END {
  print "| workload | build | wall vs native | shim ns/event | collector ns/event | peak MiB (native) |"
  print "|---|---|---:|---:|---:|---:|"
  for (w in seen) for (k = 0; k < 2; k++) { v = k ? "after" : "before"
	printf "| %s | %s | %.2fx | %.1f | %.1f | %.1f (%.1f) |\n", w, v, med(ratio[w, v]), med(shim[w, v]), med(coll[w, v]), med(pk[w, v]), med(pn[w]) } }' "$RAW"
