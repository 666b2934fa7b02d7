# elementwise_chain: unfused vs fused chains of N elementwise ops over a large tensor.
#   NAME_time_bandwidth: step time and achieved bandwidth (minimum bytes / step time) against
#     N, fp32 solid and bf16 dashed (axis `bits`), with the measured copy ceiling;
#   NAME_roofline: attained GFLOP/s against arithmetic intensity (flop per byte moved), under
#     the roofs of this GPU's measured ceilings (copy bandwidth slope, fp32 and bf16 GEMM).
# Data: `underfed plotdata`: data/elementwise_chain_fp32.dat and _bf16.dat (a block per
# variant: N, step_ms, gbs, intensity_flop_per_byte, executed_flops, bytes_moved; bf16 where the
# run has the axis bits), the roofline's point labels in _labels_fp32.dat and _labels_bf16.dat
# (consecutive N at one place merged, "1-16"), counts and the folder's ceilings (copy,
# gemm_fp32, gemm_bf16; NaN without ceilings.csv) in data/elementwise_chain.gp:
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/elementwise_chain.gp ../elementwise_chain.gp
# A panel whose columns are absent says so.
if (!exists("dat32") || !exists("out") || !exists("n32")) { print "elementwise_chain.gp: load data/elementwise_chain.gp first"; exit }
load "lib.gp"
nvar = n
tag32 = has_bits ? " fp32" : ""
peak32 = gemm_fp32 * 1000
peak16 = gemm_bf16 * 1000

# One line per variant of a sweep (data: the name of a source variable): `for` over the
# blocks, colour by variant.
lines(data, col, style, tag) = sprintf("for [i=0:%d] %s index i using 1:%d %s lc i+1 title word(vnames, i+1).'%s'", \
                                      nvar - 1, data, col, style, tag)
solid = "with linespoints lw 2 pt 7"
dashed = "with linespoints lw 2 pt 6 dt 2"

set termoption noenhanced
set datafile missing "NaN"
set grid
set key outside bottom center horizontal
set bmargin 6
set offsets graph 0.03, graph 0.03, 0, 0

time_items = n32 > 0 ? lines("dat32", 2, solid, tag32) : ""
if (n16 > 0) { time_items = add(time_items, lines("dat16", 2, dashed, " bf16")) }
bw_items = n32 > 0 ? lines("dat32", 3, solid, tag32) : ""
if (n16 > 0) { bw_items = add(bw_items, lines("dat16", 3, dashed, " bf16")) }
if (bw_items ne "" && isnum(copy)) { \
  bw_items = add(bw_items, sprintf("%g with lines lw 1.5 dt 2 lc rgb '%s' notitle", copy, c_ceiling)) }
nothing = "set label 90 'no %s against ops in this run' at graph 0.5, 0.5 center; set xrange [0:1]; set yrange [0:1]; plot 1/0 notitle; unset label 90; set xrange [*:*]"

# ---- time and bandwidth against N -----------------------------------------------------------
do for [fmt in formats] {
  eval image(fmt, 1200, 540, out."_time_bandwidth")
  set multiplot layout 1,2 title sprintf("elementwise_chain on %s: unfused vs fused against the number of ops%s", \
                                         gpu, n16 > 0 ? " (fp32 solid, bf16 dashed)" : "")
  set xlabel "ops in the chain (N)"
  set title "step time"
  set ylabel "ms per step"
  set yrange [0:*]
  if (time_items eq "") { eval sprintf(nothing, "step time") } else { eval "plot ".time_items }
  set title "achieved bandwidth: minimum bytes the chain must move / step time"
  set ylabel "GB/s"
  set yrange [0:*]
  set offsets graph 0.03, graph 0.03, graph 0.1, 0
  if (isnum(copy)) { set label 91 sprintf("copy ceiling (measured): %.0f GB/s", copy) at graph 0.02, first copy offset 0,0.7 }
  if (bw_items eq "") { eval sprintf(nothing, "bandwidth") } else { eval "plot ".bw_items }
  unset label 91
  set offsets graph 0.03, graph 0.03, 0, 0
  unset multiplot
  unset output
}

# ---- the roofline ---------------------------------------------------------------------------
# attained TFLOP/s: executed flop per step / step time; intensity x bytes moved when the
# executed flops are not recorded
tflops = "((valid(5) ? $5 : $4 * $6) / $2 / 1e9)"
roof_points(data, labels, style, tag, dy) = \
  sprintf("for [i=0:%d] %s index i using 4:%s %s lc i+1 title word(vnames, i+1).'%s', ", \
          nvar - 1, data, tflops, style, tag). \
  sprintf("for [i=0:%d] %s index i using 1:2:3 with labels offset 1.2,%g font ',8' tc lt i+1 notitle", \
          nvar - 1, labels, dy)
roof_items = ""
if (isnum(copy) && isnum(peak32)) { roof_items = add(roof_items, \
  sprintf("min(%g * x, %g) with lines lw 2 lc rgb '".c_ceiling."' title 'roof: copy %.0f GB/s, fp32 GEMM %.1f TFLOP/s'", \
          copy / 1000, peak32 / 1000, copy, peak32 / 1000)) }
if (isnum(copy) && isnum(peak16)) { roof_items = add(roof_items, \
  sprintf("min(%g * x, %g) with lines lw 2 dt 2 lc rgb '".c_ceiling."' title 'roof: bf16 GEMM %.0f TFLOP/s (tensor cores)'", \
          copy / 1000, peak16 / 1000, peak16 / 1000)) }
if (isnum(copy) && !isnum(peak32) && !isnum(peak16)) { roof_items = add(roof_items, \
  sprintf("%g * x with lines lw 2 lc rgb '".c_ceiling."' title 'roof: copy %.0f GB/s'", copy / 1000, copy)) }
if (r32 > 0) { roof_items = add(roof_items, roof_points("dat32", "lab32", solid, tag32, 0.5)) }
if (r16 > 0) { roof_items = add(roof_items, roof_points("dat16", "lab16", dashed, " bf16", -0.5)) }

lo = 0.1; hi = 10
if (r32 > 0) { stats dat32 using 4 nooutput; lo = STATS_min; hi = STATS_max }
if (r16 > 0) { stats dat16 using 4 nooutput; lo = min(lo, STATS_min); hi = max(hi, STATS_max) }
ridge = isnum(copy) && isnum(peak16) ? peak16 / copy : isnum(copy) && isnum(peak32) ? peak32 / copy : hi
set logscale xy 10
set format xy "%g"
set key inside bottom right vertical opaque box
set bmargin
set offsets 0, 0, 0, 0
set samples 400
set xrange [lo / 4 : max(hi, ridge) * 4]
set yrange [*:*]
set xlabel "arithmetic intensity (flop per byte moved)"
set ylabel "attained TFLOP/s (executed flop / step time)"
do for [fmt in formats] {
  eval image(fmt, 1000, 640, out."_roofline")
  set title sprintf("elementwise_chain on %s: roofline under the measured ceilings (labels: ops N)%s", gpu, \
                    isnum(copy) ? "" : "\nno ceilings.csv beside the results: roofs not drawn")
  if (r32 + r16 == 0) { set label 90 "no intensity_flop_per_byte in this run" at graph 0.5, 0.5 center }
  if (roof_items eq "") { set yrange [1:10]; plot 1/0 notitle } else { eval "plot ".roof_items }
  unset label 90
  unset output
}
