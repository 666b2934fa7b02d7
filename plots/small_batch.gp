# small_batch: micro-batches too small to fill the GPU.
#   NAME_roofline: micro1 against M (tokens per micro-batch, the rows of every GEMM), log-log:
#     useful TFLOP/s (left axis) under the roofline of this GPU's measured ceilings (the copy
#     bandwidth slope, copy GB/s x the step's useful FLOPs per byte, up to the bf16 GEMM roof),
#     the weight stream GB/s (right axis, the copy ceiling marked on it); large_micro (at its
#     GEMM rows) and wave (one M x 8192 x 8192 GEMM) as markers. Beside it, on the same M axis,
#     what the monitors say of micro1: NVML util, SM active, tensor active.
# Data: `underfed plotdata`: data/small_batch_micro1.dat (M, tflops_useful, gbs, the copy slope
# in TFLOP/s, nvml_util_pct, sm_active_pct, tensor_active_pct), _roof.dat (the roofline: min of
# slope and roof at each M, the ridge point inserted), _wave.dat (M, tflops_useful, gbs),
# _large.dat (GEMM rows, tflops_useful); counts, the ceilings (copy, gemm; NaN without
# ceilings.csv), the useful FLOPs per byte per token and the ridge (the M where the slope meets
# the roof, NaN where it does not) in data/small_batch.gp:
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/small_batch.gp ../small_batch.gp
# A panel whose columns are absent says so.
if (!exists("micro") || !exists("out") || !exists("counts")) { print "small_batch.gp: load data/small_batch.gp first"; exit }
load "lib.gp"
n_rate = count(counts, 1)
n_gbs = count(counts, 2)
n_slope = count(counts, 3)
n_util = count(counts, 4) + count(counts, 5) + count(counts, 6)
# columns of data/small_batch_micro1.dat: 1 M, 2 useful TFLOP/s, 3 GB/s, 4 copy slope (TFLOP/s),
# 5 NVML util, 6 SM active, 7 tensor active
c_wave = "#56b4e9"
# The utilization rungs in the ladder's colours (plots/ladder.gp).
rung_name = "'NVML util' 'SM active' 'tensor active'"
rung_color = "#9400d3 #56b4e9 #e69f00"

# ---- the roofline's plot items, only those with data -----------------------------------------
roof_items = ""
if (n_slope > 0) { roof_items = sprintf("roof using 1:2 axes x1y1 with lines lw 2 lc rgb '%s' " . \
  "title sprintf('roofline: min(copy %%.0f GB/s x %%.2f M useful FLOPs per byte, bf16 GEMM %%.0f TFLOP/s)', " . \
  "copy, flop_per_byte_per_token, gemm)", c_ceiling) }
if (n_rate > 0) { roof_items = add(roof_items, sprintf("micro using 1:2 axes x1y1 with linespoints lw 2 pt 7 " . \
  "lc rgb '%s' title 'micro1: useful TFLOP/s (left axis)'", c_broken)) }
if (n_gbs > 0) { roof_items = add(roof_items, sprintf("micro using 1:3 axes x1y2 with linespoints lw 2 dt 2 pt 6 " . \
  "lc rgb '%s' title 'micro1: weight stream GB/s = min bytes / step (right axis)'", c_second)) }
if (nwave > 0) { roof_items = add(roof_items, sprintf("wave using 1:2 axes x1y1 with points pt 8 ps 1.3 " . \
  "lc rgb '%s' title 'wave: one M x 8192 x 8192 GEMM, useful TFLOP/s'", c_wave)) }
if (nlarge > 0) { roof_items = add(roof_items, sprintf("large using 1:2 axes x1y1 with points pt 5 ps 2 " . \
  "lc rgb '%s' title 'large_micro: all tokens in one micro-batch (M = its GEMM rows)'", c_fixed)) }

# The ranges: M over every point drawn; TFLOP/s from a little under the lowest rate to above
# the roof; GB/s a decade either side of the copy ceiling (or of the data without ceilings).
x_lo = 1; x_hi = 16384; y_lo = 1; y_hi = 1000; y2_lo = 100; y2_hi = 10000
if (n_rate + n_slope > 0) {
  stats micro using 1 nooutput; x_lo = STATS_min; x_hi = STATS_max
  stats micro using 2 nooutput; y_lo = STATS_min / 2; y_hi = STATS_max * 2
}
if (n_slope > 0) { stats roof using 2 nooutput; y_lo = min(y_lo, STATS_min / 2) }
if (isnum(gemm)) { y_hi = gemm * 2 }
if (nlarge > 0) { stats large using 1 nooutput; x_hi = max(x_hi, STATS_max) }
if (n_gbs > 0) { stats micro using 3 nooutput; y2_lo = STATS_min / 3; y2_hi = STATS_max * 3 }
if (isnum(copy)) { y2_lo = min(y2_lo, copy / 30); y2_hi = max(y2_hi, copy * 2) }
# A tic for every power of 4 of M, as plain numbers.
m_tics = ""
do for [e=0:15] { if (4**e >= x_lo / 1.01 && 4**e <= x_hi * 1.01) { m_tics = m_tics.(m_tics eq "" ? "" : ", ").sprintf("'%d' %d", 4**e, 4**e) } }

set termoption noenhanced
set datafile missing "NaN"
set grid
set logscale x 2
set xrange [x_lo / 1.5 : x_hi * 1.5]
eval "set xtics (".m_tics.")"
set xlabel "M: tokens per micro-batch = rows of every GEMM (log)"
set key bmargin left Left reverse vertical maxrows 5
set bmargin 10
set samples 400

do for [fmt in formats] {
  eval image(fmt, 1600, 680, out."_roofline")
  set multiplot title sprintf("small_batch on %s: micro-batch size M against the roofline of this GPU's measured ceilings", gpu)

  # ---- left: the roofline ---------------------------------------------------------------------
  set origin 0, 0
  set size 0.64, 0.95
  set title "micro1: one step of the layer stack at M rows per GEMM"
  set logscale y 10
  set logscale y2 10
  set format y "%g"
  set format y2 "%g"
  set yrange [y_lo : y_hi]
  set y2range [y2_lo : y2_hi]
  set ylabel "useful TFLOP/s (log)"
  set y2label "weight stream GB/s (log)" tc rgb c_second
  eval "set ytics nomirror (".tics125(y_lo, y_hi).")"
  eval "set y2tics (".tics125(y2_lo, y2_hi).")"
  set y2tics nomirror tc rgb c_second
  if (isnum(copy)) { set y2tics add (sprintf("copy ceiling %.0f", copy) copy) }
  if (isnum(gemm)) { set label 91 sprintf("bf16 GEMM ceiling (measured): %.0f TFLOP/s", gemm) at graph 0.02, first gemm offset 0,0.7 }
  if (isnum(copy)) { set arrow 92 from graph 0.985, second copy to graph 1, second copy nohead lw 3 lc rgb c_second }
  if (isnum(ridge)) { set label 93 sprintf("ridge: M = %.0f", ridge) at first ridge, first gemm point pt 1 ps 2 lc rgb c_ceiling offset 0.8,0.8 left }
  if (roof_items eq "") {
    set label 90 "no micro1 sweep of tokens in this run" at graph 0.5, 0.5 center
    plot 1/0 notitle
  } else {
    eval "plot ".roof_items
  }
  unset label 90; unset label 91; unset label 93; unset arrow 92
  unset logscale y2; unset y2tics; unset y2label; set ytics mirror
  set y2range [*:*]

  # ---- right: what the monitors say ----------------------------------------------------------
  set origin 0.64, 0
  set size 0.36, 0.95
  set title "micro1: what each monitor calls busy"
  unset logscale y
  set yrange [0:105]
  set ytics auto
  set ylabel "% of time (NVML) or of peak (counters)"
  set key bmargin center Left reverse vertical maxrows 5
  if (n_util == 0) {
    set label 90 "no utilization of micro1 in this run" at graph 0.5, 0.5 center
    plot 1/0 notitle
    unset label 90
  } else {
    plot for [c=5:7] micro using 1:c with linespoints lw 2 pt 7 ps 0.8 lc rgb word(rung_color, c - 4) title word(rung_name, c - 4)
  }
  unset multiplot
  unset output
  set key bmargin left Left reverse vertical maxrows 5
}
