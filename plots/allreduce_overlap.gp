# allreduce_overlap: the bucket size of the DDP-style fix, against the sequential all-reduce.
#   NAME_buckets: step time and exposed communication (comm_exposed_ms: communication not
#   hidden under compute) of `bucketed` against the bucket size (axis bucket_mib), with
#   `sequential` (one all-reduce after the whole backward) as horizontal references, and the
#   backward compute alone (extra compute_ms) and the all-reduce alone (extra comm_ms).
# Data: `underfed plotdata` (data/allreduce_overlap_buckets.dat: bucket_mib, step_ms,
# comm_exposed_ms; the references, NaN where absent, in data/allreduce_overlap.gp):
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/allreduce_overlap.gp ../allreduce_overlap.gp
if (!exists("buck") || !exists("out") || !exists("nstep")) { print "allreduce_overlap.gp: load data/allreduce_overlap.gp first"; exit }
load "lib.gp"

ref(v, style, ttl) = isnum(v) ? sprintf("%.10g with lines %s title '%s %.3g ms'", v, style, ttl, v) : ""
binary(x) = x >= 1024 && int(x) % 1024 == 0 ? sprintf("%dG", x / 1024) : sprintf("%g", x)
line = "with linespoints lw 2 pt 7 lc rgb '".c_fixed."'"
seq_style = "lw 2 dt 2 lc rgb '".c_broken."'"
alone_style = "lw 1.5 dt 3 lc rgb '".c_ceiling."'"

step_items = nstep > 0 ? "buck using 1:2:xtic(binary($1)) ".line." title 'bucketed'" : ""
step_items = add(step_items, ref(seq_step, seq_style, "sequential:"))
step_items = ref(compute, "", "") eq "" ? step_items : \
             add(step_items, ref(compute, alone_style, "backward compute alone:"))
step_items = step_items eq ", " ? "" : step_items
exp_items = nexp > 0 ? "buck using 1:3:xtic(binary($1)) ".line." title 'bucketed'" : ""
exp_items = ref(seq_exp, "", "") eq "" ? exp_items : \
            add(exp_items, ref(seq_exp, seq_style, "sequential:"))
exp_items = ref(comm, "", "") eq "" ? exp_items : \
            add(exp_items, ref(comm, alone_style, "all-reduce alone:"))

set termoption noenhanced
set grid
set key outside bottom center horizontal maxrows 2
set bmargin 7
set logscale x 2
set offsets graph 0.05, graph 0.05, graph 0.1, 0
set xlabel "bucket size (MiB)"
# One bucket size (a --quick run): give the references some width around it.
if (nstep + nexp > 0) { stats buck using 1 nooutput; if (STATS_min == STATS_max) { set xrange [STATS_min / 4 : STATS_max * 4] } }
set yrange [0:*]
do for [fmt in formats] {
  eval image(fmt, 1200, 560, out."_buckets")
  set multiplot layout 1,2 title sprintf("allreduce_overlap on %s: bucket size of the overlapped all-reduce", gpu)
  set title "step time"
  set ylabel "ms per step"
  if (nstep == 0) { set label 90 "no bucketed step time against bucket_mib in this run" at graph 0.5, 0.5 center }
  if (step_items eq "") { set xrange [1:2]; set yrange [0:1]; plot 1/0 notitle } else { eval "plot ".step_items }
  unset label 90
  set title "exposed communication (not hidden under compute)"
  set ylabel "ms per step"
  if (nexp == 0) { set label 90 "no bucketed comm_exposed_ms against bucket_mib in this run" at graph 0.5, 0.5 center }
  if (exp_items eq "") { set xrange [1:2]; set yrange [0:1]; plot 1/0 notitle } else { eval "plot ".exp_items }
  unset label 90
  unset multiplot
  unset output
}
