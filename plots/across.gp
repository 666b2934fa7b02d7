# One scenario across GPUs: per variant, a metric for each result folder (GPU), raw and as a
# share of that GPU's measured ceiling.
# Data: `underfed plotdata --across` (data/NAME_across.dat: two blocks, raw then share of a
# ceiling, each a header "METRIC GPU1 GPU2 ..." then one line per variant; the variants, the
# share's metric and the values measured in each block in data/NAME_across.gp):
#   cd plots/compare && GNUPLOT_LIB=.. gnuplot data/NAME_across.gp ../across.gp
# `share` names the second panel; by default it follows the share's metric.
if (!exists("data") || !exists("out") || !exists("ngpu")) { print "across.gp: load data/NAME_across.gp first"; exit }
load "lib.gp"
share_label(m) = m eq "pct_of_gemm" ? "useful FLOP/s as % of each GPU's measured bf16 GEMM rate" : \
                 m eq "pct_of_copy" ? "GB/s as % of each GPU's measured copy bandwidth" : \
                 m eq "busy_pct" ? "device busy % (trace pass)" : m
if (!exists("share")) { share = share_label(share_metric) }
# The variants placed by name, so that a GPU without a value cannot take the labels with it.
eval name_tics(names)
# Numbers (not NaN) in block b's variant lines.
measured(b) = count(counts, b + 1)
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics
set key outside bottom center horizontal
set xrange [-0.5 : n - 0.5]
# x of GPU g's bar (g = 0 .. ngpu-1) in cluster c: clusters at 0, 1, ...; bars 1/(ngpu+gap) wide.
# $0 counts the block's header line too: the first variant is on line 1.
bar_x(line, g) = line - 1 + (g - (ngpu - 1) / 2.0) / (ngpu + 1.0)
panel(b) = sprintf("plot for [g=2:%d] data index %d using g title columnheader(g), ", ngpu + 1, b) . \
           sprintf("for [g=2:%d] '' index %d using (bar_x($0, g - 2)):g:(sprintf('%%.3g', column(g))) ", ngpu + 1, b) . \
           "with labels rotate by 90 left offset 0,0.4 font ',8' notitle"
do for [fmt in formats] {
  eval image(fmt, 1200, 520, out)
  set multiplot layout 1,2 title ttl
  do for [b=0:1] {
    set title (b == 0 ? raw." (value on each bar)" : share)
    set ylabel (b == 0 ? raw : "% of the ceiling")
    set offsets 0, 0, graph 0.12, 0
    if (measured(b) == 0) {
      set yrange [0:1]
      set label 90 (b == 0 ? "no value at the default point in any folder" : "no share of a ceiling (no ceilings.csv, or the metric not measured)") at graph 0.5, 0.5 center
      plot 1/0 notitle
      unset label 90
    } else {
      set yrange [0:*]
      eval panel(b)
    }
  }
  unset multiplot
  unset output
}
