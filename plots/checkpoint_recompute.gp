# checkpoint_recompute: every activation policy on the memory / step-time plane.
#   NAME_pareto: x = peak activation memory (extra act_peak_bytes, GiB; peak_mem_bytes when the
#   run has no act_peak_bytes), y = step time; each policy (variant) at the default point, and
#   every_k at each k of the sweep (axis k), labelled; the Pareto front joins the policies that
#   no other policy beats on both memory and time. Lower left is better.
# Data: `underfed plotdata` ("x_GiB step_ms label" lines: data/checkpoint_recompute_pareto_
# policies.dat, _every_k.dat, _front.dat; mem, npol, nek in data/checkpoint_recompute.gp):
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/checkpoint_recompute.gp ../checkpoint_recompute.gp
if (!exists("pol") || !exists("out") || !exists("npol")) { print "checkpoint_recompute.gp: load data/checkpoint_recompute.gp first"; exit }
load "lib.gp"
memlabel = mem eq "act_peak_bytes" ? "peak activation memory (GiB)" : \
           "peak device memory of the variant (GiB; the run has no act_peak_bytes)"
# The policies, numbered for their colours; every_k's sweep only where the run has one.
items = "front using 1:2 with lines lw 2 dt 2 lc rgb '#888888' title 'Pareto front (no policy both smaller and faster)', " . \
        "pol using 1:2:($0 + 1) with points pt 7 ps 1.8 lc variable notitle, " . \
        "pol using 1:2:3 with labels offset 0,1.2 font ',10' notitle"
if (nek > 0) { items = add(items, \
  "ek using 1:2 with linespoints lw 1.5 pt 5 ps 1.2 lc rgb '".c_broken."' title 'every_k: checkpoint every k-th block, at each k run', " . \
  "ek using 1:2:3 with labels offset 0,-1.2 font ',9' tc rgb '".c_broken."' notitle") }

set termoption noenhanced
set grid
set key outside bottom center horizontal
set bmargin 6
set offsets graph 0.08, graph 0.12, graph 0.1, graph 0.1
set xlabel memlabel
set ylabel "step time (ms)"
set label 91 "better: lower left" at graph 0.02, graph 0.04 font ",9" tc rgb "#555555"
do for [fmt in formats] {
  eval image(fmt, 1000, 640, out."_pareto")
  set title sprintf("checkpoint_recompute on %s: activation memory against step time, every policy", gpu)
  if (npol + nek == 0) {
    set label 90 "no ".mem." and step_ms in this run" at graph 0.5, 0.5 center
    set xrange [0:1]; set yrange [0:1]
    plot 1/0 notitle
  } else {
    eval "plot ".items
  }
  unset output
}
