# The PM-sampled time series of each variant, one panel per variant (what a DCGM dashboard
# would show): SM active, occupancy, tensor active and DRAM throughput against time.
# Data: `underfed plotdata` (data/NAME_series.dat, one block per variant, first line its name;
# its variables in data/NAME_series.gp):
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/NAME_series.gp ../series.gp
if (!exists("data") || !exists("out") || !exists("names")) { print "series.gp: load data/NAME_series.gp first"; exit }
load "lib.gp"
set datafile missing "NaN"
set grid
set yrange [0:105]
set key outside right top vertical
set xlabel "time in the counters pass (ms)"
set ylabel "%"
do for [fmt in formats] {
  eval image(fmt, 1100, 260*n+60, out)
  set multiplot layout n,1 title ttl
  do for [i=0:n-1] {
    set title word(names, i + 1)
    plot data index i using 1:2 with lines lw 2 title "SM active", \
         '' index i using 1:3 with lines lw 2 title "occupancy", \
         '' index i using 1:4 with lines lw 2 title "tensor active", \
         '' index i using 1:5 with lines lw 2 title "DRAM"
  }
  unset multiplot
  unset output
}
