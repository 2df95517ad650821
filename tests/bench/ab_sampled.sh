#!/bin/sh
# ab_sampled.sh: ms-record --sample 512K of two builds, A/B, interleaved,
# with jemalloc's own profiling beside them (issue 17).
#
#   sh tests/bench/ab_sampled.sh BEFORE_TREE [ITERATIONS] [WORKLOAD...]
#
# BEFORE_TREE is another built tree of memscope (git archive COMMIT | tar
# -x -C DIR; make -C DIR); this tree is "after".  Each iteration runs every
# workload (storm1 sqlite python server, as make bench's sampled section) natively,
# under plain jemalloc, jemalloc with prof:true, and ms-record --sample 512K
# of each build, one after the other, through tests/bench/peakmem.  On a
# shared machine the wall ratios swing by a quarter from one iteration to
# the next, so it prints medians and the best of all iterations (least
# disturbed), of wall ratios and of the CPU the program used beyond its
# native run (the shim) and ms-record's own (from the end record).
# Raw lines go to tests/bench/out/ab_sampled.txt.
set -u
AB_N=7 AB_WL="storm1 sqlite python server" AB_RAW=ab_sampled.txt
. "$(dirname "$0")/ab_setup.sh"
i=0
while [ $i -lt "$N" ]; do
	for w in $WL; do
		for v in native jemalloc jeprof before after; do
			ab_variant "$w" "$v" --sample 512K
			# workload variant wall cpu program_cpu recorder_cpu
			e=$(ab_end "$v" '"\(.cpu) \(.recorder_cpu)"' "- -")
			echo "$w $v $(awk '{ print $1 }' "$OUT/ab.time") $(cat "$OUT/ab.time.cpu") $e" >>"$RAW"
		done
	done
	i=$((i + 1))
	echo "ab_sampled: iteration $i of $N" >&2
done
awk "$AB_AWK"'
{ w = $1; v = $2; wall[v] = $3; cpu[v] = $4; prog[v] = $5; rec[v] = $6; seen[w] = 1
  if (v != "after") next
  r_b[w] = r_b[w] " " wall["before"] / wall["native"]; r_a[w] = r_a[w] " " wall["after"] / wall["native"]
  r_j[w] = r_j[w] " " wall["jeprof"] / wall["jemalloc"]
  for (k in wall) mw[w, k] = (mw[w, k] == "" || wall[k] < mw[w, k]) ? wall[k] : mw[w, k]
  for (k in cpu) mc[w, k] = (mc[w, k] == "" || cpu[k] < mc[w, k]) ? cpu[k] : mc[w, k]
  s_b[w] = s_b[w] " " (prog["before"] - cpu["native"]) / 1e6; s_a[w] = s_a[w] " " (prog["after"] - cpu["native"]) / 1e6
  c_b[w] = c_b[w] " " rec["before"] / 1e6; c_a[w] = c_a[w] " " rec["after"] / 1e6
  pb[w] = (pb[w] == "" || prog["before"] < pb[w]) ? prog["before"] : pb[w]
  pa[w] = (pa[w] == "" || prog["after"] < pa[w]) ? prog["after"] : pa[w] }
END {
  print "| workload | native s (best) | before: median, best | after: median, best | jemalloc prof: median, best | program CPU beyond native, ms: before, after (best) | ms-record CPU, ms: before, after (best) |"
  print "|---|---:|---:|---:|---:|---:|---:|"
  for (w in seen)
	printf "| %s | %.2f | %.2fx, %.2fx | %.2fx, %.2fx | %.2fx, %.2fx | %.0f, %.0f | %.0f, %.0f |\n", w, mw[w, "native"],
		med(r_b[w]), mw[w, "before"] / mw[w, "native"], med(r_a[w]), mw[w, "after"] / mw[w, "native"],
		med(r_j[w]), mw[w, "jeprof"] / mw[w, "jemalloc"],
		(pb[w] - mc[w, "native"]) / 1e6, (pa[w] - mc[w, "native"]) / 1e6, lo(c_b[w]), lo(c_a[w]) }' "$RAW"
