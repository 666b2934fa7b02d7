# varlen_attention: how much of the attention work is padding, per variant, at the default point.
#   NAME_flops: step time; useful and executed TFLOP/s (with this GPU's measured bf16 GEMM
#   ceiling); useful vs executed FLOPs per step, with the share of executed FLOPs spent on padding.
# Data: `underfed plotdata` (data/varlen_attention_flops.dat: a line per variant at the
# default point; counts and this GPU's bf16 GEMM ceiling, NaN without ceilings.csv, in
# data/varlen_attention.gp):
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/varlen_attention.gp ../varlen_attention.gp
# columns: 1 variant, 2 step_ms, 3 tflops_useful, 4 tflops_executed (extra), 5 useful_flops,
# 6 executed_flops, 7 padding_pct (extra); the extras derived from the fixed columns when NaN.
if (!exists("data") || !exists("out") || !exists("nstep")) { print "varlen_attention.gp: load data/varlen_attention.gp first"; exit }
load "lib.gp"
nvar = n
# executed TFLOP/s and padding share from the fixed columns when the extras are absent
exec_rate = "(valid(4) ? $4 : $6 / $2 / 1e9)"
padding = "(valid(7) ? sprintf('%.0f%% padding', $7) : sprintf('%.0f%% padding', 100 * (1 - $5 / $6)))"
nothing(what) = sprintf("set label 90 'no %s in this run' at graph 0.5, 0.5 center; set yrange [0:1]; plot 1/0 notitle; unset label 90; set yrange [0:*]", what)

eval name_tics(vnames)
set xrange [-0.5 : nvar - 0.5]

set termoption noenhanced
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics
set key outside bottom center horizontal maxrows 1
set bmargin 6
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
# Bar g (0-based) of n in the cluster of line l: clusters at 0, 1, ...; bars 1/(n+gap) wide.
bar_x(l, g, n) = l + (g - (n - 1) / 2.0) / (n + 1.0)
do for [fmt in formats] {
  eval image(fmt, 1500, 560, out."_flops")
  set multiplot layout 1,3 title sprintf("varlen_attention on %s: computing on padding (default point)", gpu)
  set title "step time"
  set ylabel "ms per step"
  if (nstep == 0) { eval nothing("step time") } else {
    plot data using 2 lc rgb c_step notitle, \
         '' using 0:2:(sprintf("%.3g", $2)) with labels offset 0,0.7 notitle
  }
  set title "attention rate"
  set ylabel "TFLOP/s"
  if (isnum(gemm)) { set label 91 sprintf("bf16 GEMM ceiling (measured): %.0f TFLOP/s", gemm) at graph 0.02, first gemm offset 0,0.7 }
  if (nrate == 0) { eval nothing("rate") } else {
    plot data using 3 title "useful (real tokens)" lc rgb c_fixed, \
         '' using @exec_rate title "executed (with padding)" lc rgb c_second, \
         '' using (bar_x($0, 0, 2)):3:(sprintf("%.0f", $3)) with labels offset 0,0.7 font ",8" notitle, \
         (isnum(gemm) ? gemm : 1/0) with lines lw 1.5 dt 2 lc rgb c_ceiling notitle
  }
  unset label 91
  set title "FLOPs per step: useful vs executed"
  set ylabel "TFLOP per step"
  if (nflops == 0) { eval nothing("useful_flops or executed_flops") } else {
    plot data using ($5 / 1e12) title "useful" lc rgb c_fixed, \
         '' using ($6 / 1e12) title "executed" lc rgb c_second, \
         '' using (bar_x($0, 1, 2)):($6 / 1e12):@padding \
            with labels offset 0,0.7 font ",8" notitle
  }
  unset multiplot
  unset output
}
