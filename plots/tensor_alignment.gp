# tensor_alignment: one odd dimension, several times slower.
#   NAME_tflops: left, useful TFLOP/s of odd_hidden and aligned_hidden against dim (the hidden
#     size k of an 8192 x k -> 4096 bf16 GEMM), the dims that are multiples of 8 (16-byte rows)
#     marked as spikes with odd_hidden's rate there, the measured bf16 GEMM ceiling as a level;
#     right, the vocabulary pair and the precision ladder at the default point as bars, each
#     with its own math's measured ceiling (bf16, TF32 or fp32 GEMM); above each, its rate, its
#     share of that ceiling and its tensor active.
# Data: `underfed plotdata`: data/tensor_alignment_dim.dat (a block per variant: dim,
# tflops_useful), _spikes.dat (odd_hidden at each dim that is a multiple of 8: dim,
# tflops_useful), _bars.dat (variant, role, tflops_useful, its own ceiling, tensor_active_pct);
# the bars' names, counts and the bf16 GEMM ceiling (NaN without ceilings.csv) in
# data/tensor_alignment.gp:
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/tensor_alignment.gp ../tensor_alignment.gp
# A panel whose columns are absent says so.
if (!exists("dims") || !exists("out") || !exists("nbar")) { print "tensor_alignment.gp: load data/tensor_alignment.gp first"; exit }
load "lib.gp"
c_spike = "#999999"
nothing(what) = sprintf("set label 90 'no %s in this run' at graph 0.5, 0.5 center; set xrange [0:1]; " . \
                        "set yrange [0:1]; plot 1/0 notitle; unset label 90", what)

# The rate axis: 0 to above the ceiling (or the highest rate) with room for the labels.
top = isnum(gemm) ? gemm : 100
if (ndim > 0) { stats dims using 2 nooutput; top = max(top, STATS_max) }
if (nbrate > 0) { stats bars using 3 nooutput; top = max(top, STATS_max) }
y_top = top * 1.25
# The sweep's dims: every one a tic.
x_lo = 4088; x_hi = 4104
if (ndim > 0) { stats dims using 1 nooutput; x_lo = STATS_min; x_hi = STATS_max }

sweep_items = ""
if (nspike > 0) { sweep_items = sprintf("spikes using 1:(y_top) with impulses lw 10 lc rgb '%s' " . \
  "title 'dim a multiple of 8 (16-byte bf16 rows): odd_hidden TFLOP/s on top', " . \
  "spikes using 1:(top * 1.1):(sprintf('%%.0f', $2)) with labels notitle", "#e8e8e8") }
if (ndim > 0) { sweep_items = add(sweep_items, sprintf("for [i=0:%d] dims index i using 1:2 with linespoints " . \
  "lw 2 pt 7 lc rgb (i == 0 ? c_broken : c_fixed) title (i == 0 ? 'odd_hidden: k = dim' : " . \
  "'aligned_hidden: k padded with zeros to a multiple of 64')", nsweep - 1)) }
if (sweep_items ne "" && isnum(gemm)) { sweep_items = add(sweep_items, \
  sprintf("%g with lines lw 1.5 dt 2 lc rgb '%s' notitle", gemm, c_ceiling)) }

set termoption noenhanced
set datafile missing "NaN"
set grid ytics
set key bmargin left Left reverse vertical maxrows 3
set bmargin 8
set style fill solid 0.85 border -1

do for [fmt in formats] {
  eval image(fmt, 1600, 640, out."_tflops")
  set multiplot title sprintf("tensor_alignment on %s: GEMMs off the tensor-core fast path (useful TFLOP/s)", gpu)

  # ---- left: the comb along dim --------------------------------------------------------------
  set origin 0, 0
  set size 0.6, 0.95
  set title "8192 x k -> 4096 bf16 GEMM against the hidden size k = dim"
  set xrange [x_lo - 0.5 : x_hi + 0.5]
  set xtics 1 out nomirror
  set yrange [0 : y_top]
  set xlabel "dim: the hidden size k (elements)"
  set ylabel "useful TFLOP/s"
  if (isnum(gemm)) { set label 91 sprintf("bf16 GEMM ceiling (measured): %.0f TFLOP/s", gemm) at graph 0.01, first gemm offset 0,-0.8 front }
  if (sweep_items eq "") { eval nothing("dim sweep of odd_hidden or aligned_hidden") } else { eval "plot ".sweep_items }
  unset label 91

  # ---- right: the pairs at the default point -------------------------------------------------
  set origin 0.6, 0
  set size 0.4, 0.95
  set title "the vocabulary pair (8192 x 768 -> 50257 / 50304) and the\nprecision ladder (8192 x 4096 x 4096), at the default point"
  set xrange [-0.6 : max(nbar, 1) - 0.4]
  eval name_tics(bnames)
  set xtics nomirror norotate
  set xlabel "variant (label: useful TFLOP/s, share of its own ceiling, tensor active)"
  set boxwidth 0.7
  if (nbrate == 0) { eval nothing("useful TFLOP/s of the vocabulary pair or precision ladder") } else {
    plot bars using 0:3:(strcol(2) eq "broken" ? 0xd55e00 : 0x009e73) with boxes lc rgb variable notitle, \
         '' using 0:(valid(4) ? max($3, $4) : $3):(sprintf("%.0f\n%s\ntensor %.0f %%", $3, valid(4) ? sprintf("%.0f %% of ceiling", 100 * $3 / $4) : "no ceiling", $5)) \
            with labels offset 0,2.9 font ",9" notitle, \
         '' using ($0 - 0.35):4:(0.7):(0) with vectors nohead lw 2 dt 2 lc rgb c_ceiling \
            title "its math's measured ceiling (bf16, TF32 or fp32 GEMM)", \
         keyentry with boxes lc rgb c_broken title "broken", \
         keyentry with boxes lc rgb c_fixed title "fixed"
  }
  unset multiplot
  unset output
  set xtics autofreq
}
