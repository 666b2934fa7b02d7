# One scenario across GPUs: per variant, a metric for each result folder (GPU), raw and as a
# share of that GPU's measured ceiling. Input: `underfed across` (header "METRIC GPU1 GPU2 ..."
# then one line per variant; two blocks: raw, then share of ceiling).
#   gnuplot -e "data='x.dat'; out='...'; ttl='...'; ngpu=2; raw='step ms'" plots/across.gp
# `share` names the second panel; by default it is read from the second block's header.
if (!exists("data") || !exists("out") || !exists("ngpu")) { print "across.gp: set data, out, ngpu"; exit }
if (!exists("ttl")) { ttl = "" }
if (!exists("raw")) { raw = "value" }
# The metric of each block: the first quoted word of each block's header line.
metrics = system("awk -F'\"' '(NR == 1 || prev == \"\") && /^\"/ { print $2 } { prev = $0 }' '".data."'")
share_metric = word(metrics, 2)
share_label(m) = m eq "pct_of_gemm" ? "useful FLOP/s as % of each GPU's measured bf16 GEMM rate" : \
                 m eq "pct_of_copy" ? "GB/s as % of each GPU's measured copy bandwidth" : \
                 m eq "busy_pct" ? "device busy % (trace pass)" : m
if (!exists("share")) { share = share_label(share_metric) }
# The variants: the lines of the first block after its header, placed by name so that a GPU
# without a value cannot take the labels with it.
names = system("awk -F'\"' '/^$/ { blank = 1 } !/^$/ && blank { exit } NR > 1 && /^\"/ { print $2 }' '".data."'")
n = words(names)
tics = ""
do for [i=1:n] { tics = tics.sprintf("%s'%s' %d", i > 1 ? ", " : "", word(names, i), i - 1) }
eval "set xtics (".tics.")"
# Numbers (not NaN) in block b's variant lines.
measured(b) = int(system(sprintf("awk '/^$/ { if (!blank) blk++; blank = 1; next } { blank = 0 } " . \
                                 "blk == %d && !/^\"%s\"/ && /^\"/ { for (c = 2; c <= NF; c++) if ($c ~ /^[-+]?[.0-9]/) k++ } " . \
                                 "END { print k + 0 }' '%s'", b, word(metrics, b + 1), data)))
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
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo noenhanced size 1200,520 font ",10"; set output out.".png" } \
  else { set terminal svg noenhanced size 1200,520 dynamic font ",10"; set output out.".svg" }
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
