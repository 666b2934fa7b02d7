# allreduce_overlap: the bucket size of the DDP-style fix, against the sequential all-reduce.
#   NAME_buckets: step time and exposed communication (comm_exposed_ms: communication not
#   hidden under compute) of `bucketed` against the bucket size (axis bucket_mib), with
#   `sequential` (one all-reduce after the whole backward) as horizontal references, and the
#   backward compute alone (extra compute_ms) and the all-reduce alone (extra comm_ms).
# Run by plots/render.sh; all data comes from the underfed tool, never from the CSV directly:
#   gnuplot -e "csv='DIR/allreduce_overlap.csv'; dir='DIR'; out='PLOTS/allreduce_overlap';
#               tool='build/tools/underfed'; gpu='NVIDIA H200'" plots/allreduce_overlap.gp
if (!exists("csv") || !exists("out") || !exists("tool")) { print "allreduce_overlap.gp: set csv, dir, out, tool"; exit }
if (!exists("gpu")) { gpu = "" }

# ---- data through the tool (paths single-quoted for the shell; render.sh refuses a quote) --
q(s) = "'".s."'"
run(args) = q(tool)." ".args
count(args, c) = int(system(run(args)." | awk '$".c." ~ /^[-+]?[.0-9]/ { n++ } END { print n + 0 }'"))
num(s) = (s eq "" || s eq "NaN") ? NaN : real(s)
isnum(x) = x == x
add(list, item) = list eq "" ? item : list.", ".item
axes = " ".system(run("axes ".q(csv))." | awk '{ printf \"%s \", $1 }'")
has_axis(name) = strstrt(axes, " ".name." ") > 0
vnames = " ".system(run("variants ".q(csv))." | tr '\\n' ' '")
has_bucketed = strstrt(vnames, " bucketed ") > 0

# columns: 1 bucket_mib, 2 step_ms, 3 comm_exposed_ms
sweep = "points ".q(csv)." --x bucket_mib --variant bucketed --metrics step_ms,comm_exposed_ms"
buck = "< ".run(sweep)
nstep = has_axis("bucket_mib") && has_bucketed ? count(sweep, 2) : 0
nexp = has_axis("bucket_mib") && has_bucketed ? count(sweep, 3) : 0
# One metric of one variant at the default point; NaN when absent.
metric_of(variant, metric) = num(system(run("values ".q(csv)." --metrics ".q(metric."?"))." | tr -d '\"' | " . \
                                    "awk '$1 == \"".variant."\" { print $2 }'"))
seq_step = metric_of("sequential", "step_ms")
seq_exp = metric_of("sequential", "comm_exposed_ms")
compute = metric_of("bucketed", "compute_ms")
comm = metric_of("bucketed", "comm_ms")
if (!isnum(compute)) { compute = metric_of("sequential", "compute_ms") }
if (!isnum(comm)) { comm = metric_of("sequential", "comm_ms") }
ref(v, style, ttl) = isnum(v) ? sprintf("%.10g with lines %s title '%s %.3g ms'", v, style, ttl, v) : ""
binary(x) = x >= 1024 && int(x) % 1024 == 0 ? sprintf("%dG", x / 1024) : sprintf("%g", x)
line = "with linespoints lw 2 pt 7 lc rgb '#009e73'"

step_items = nstep > 0 ? "buck using 1:2:xtic(binary($1)) ".line." title 'bucketed'" : ""
step_items = add(step_items, ref(seq_step, "lw 2 dt 2 lc rgb '#d55e00'", "sequential:"))
step_items = ref(compute, "", "") eq "" ? step_items : \
             add(step_items, ref(compute, "lw 1.5 dt 3 lc rgb '#333333'", "backward compute alone:"))
step_items = step_items eq ", " ? "" : step_items
exp_items = nexp > 0 ? "buck using 1:3:xtic(binary($1)) ".line." title 'bucketed'" : ""
exp_items = ref(seq_exp, "", "") eq "" ? exp_items : \
            add(exp_items, ref(seq_exp, "lw 2 dt 2 lc rgb '#d55e00'", "sequential:"))
exp_items = ref(comm, "", "") eq "" ? exp_items : \
            add(exp_items, ref(comm, "lw 1.5 dt 3 lc rgb '#333333'", "all-reduce alone:"))

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
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo noenhanced size 1200,560 font ",10"; set output out."_buckets.png" } \
  else { set terminal svg noenhanced size 1200,560 dynamic font ",10"; set output out."_buckets.svg" }
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
