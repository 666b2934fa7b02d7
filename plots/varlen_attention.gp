# varlen_attention: how much of the attention work is padding, per variant, at the default point.
#   NAME_flops: step time; useful and executed TFLOP/s (with this GPU's measured bf16 GEMM
#   ceiling); useful vs executed FLOPs per step, with the share of executed FLOPs spent on padding.
# Run by plots/render.sh; all data comes from the underfed tool, never from the CSV directly:
#   gnuplot -e "csv='DIR/varlen_attention.csv'; dir='DIR'; out='PLOTS/varlen_attention';
#               tool='build/tools/underfed'; gpu='NVIDIA H200'" plots/varlen_attention.gp
# Columns used: step_ms, tflops_useful, useful_flops, executed_flops; extras tflops_executed and
# padding_pct (derived from the fixed columns when absent).
if (!exists("csv") || !exists("out") || !exists("tool")) { print "varlen_attention.gp: set csv, dir, out, tool"; exit }
if (!exists("dir")) { dir = "." }
if (!exists("gpu")) { gpu = "" }

# ---- data through the tool (paths single-quoted for the shell; render.sh refuses a quote) --
q(s) = "'".s."'"
run(args) = q(tool)." ".args
count(args, c) = int(system(run(args)." | awk '$".c." ~ /^[-+]?[.0-9]/ { n++ } END { print n + 0 }'"))
num(s) = (s eq "" || s eq "NaN") ? NaN : real(s)
isnum(x) = x == x
# columns: 1 variant, 2 step_ms, 3 tflops_useful, 4 tflops_executed, 5 useful_flops,
# 6 executed_flops, 7 padding_pct
# (a name ending in ? may be absent from the file: NaN then, where an unmarked one is an error)
vals = "values ".q(csv)." --metrics ".q("step_ms,tflops_useful,tflops_executed?,useful_flops,executed_flops,padding_pct?")
data = "< ".run(vals)
nstep = count(vals, 2)
nflops = count(vals, 5) + count(vals, 6)
nrate = count(vals, 3) + count(vals, 4) + nflops
gemm = num(system(run("ceiling gemm_bf16_tflops ".q(dir))))
# executed TFLOP/s and padding share from the fixed columns when the extras are absent
exec_rate = "(valid(4) ? $4 : $6 / $2 / 1e9)"
padding = "(valid(7) ? sprintf('%.0f%% padding', $7) : sprintf('%.0f%% padding', 100 * (1 - $5 / $6)))"
nothing(what) = sprintf("set label 90 'no %s in this run' at graph 0.5, 0.5 center; set yrange [0:1]; plot 1/0 notitle; unset label 90; set yrange [0:*]", what)

vnames = system(run("variants ".q(csv))." | tr '\n' ' '")
nvar = words(vnames)
tics = ""
do for [i=1:nvar] { tics = tics.sprintf("%s'%s' %d", i > 1 ? ", " : "", word(vnames, i), i - 1) }
eval "set xtics (".tics.")"
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
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo noenhanced size 1500,560 font ",10"; set output out."_flops.png" } \
  else { set terminal svg noenhanced size 1500,560 dynamic font ",10"; set output out."_flops.svg" }
  set multiplot layout 1,3 title sprintf("varlen_attention on %s: computing on padding (default point)", gpu)
  set title "step time"
  set ylabel "ms per step"
  if (nstep == 0) { eval nothing("step time") } else {
    plot data using 2 lc rgb "#444444" notitle, \
         '' using 0:2:(sprintf("%.3g", $2)) with labels offset 0,0.7 notitle
  }
  set title "attention rate"
  set ylabel "TFLOP/s"
  if (isnum(gemm)) { set label 91 sprintf("bf16 GEMM ceiling (measured): %.0f TFLOP/s", gemm) at graph 0.02, first gemm offset 0,0.7 }
  if (nrate == 0) { eval nothing("rate") } else {
    plot data using 3 title "useful (real tokens)" lc rgb "#009e73", \
         '' using @exec_rate title "executed (with padding)" lc rgb "#e69f00", \
         '' using (bar_x($0, 0, 2)):3:(sprintf("%.0f", $3)) with labels offset 0,0.7 font ",8" notitle, \
         (isnum(gemm) ? gemm : 1/0) with lines lw 1.5 dt 2 lc rgb "#333333" notitle
  }
  unset label 91
  set title "FLOPs per step: useful vs executed"
  set ylabel "TFLOP per step"
  if (nflops == 0) { eval nothing("useful_flops or executed_flops") } else {
    plot data using ($5 / 1e12) title "useful" lc rgb "#009e73", \
         '' using ($6 / 1e12) title "executed" lc rgb "#e69f00", \
         '' using (bar_x($0, 1, 2)):($6 / 1e12):@padding \
            with labels offset 0,0.7 font ",8" notitle
  }
  unset multiplot
  unset output
}
