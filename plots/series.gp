# The PM-sampled time series of each variant, one panel per variant (what a DCGM dashboard
# would show): SM active, occupancy, tensor active and DRAM throughput against time.
# Input: `underfed series` (one block per variant, first line its name).
#   gnuplot -e "data='x.dat'; out='...'; ttl='...'; n=2" plots/series.gp
if (!exists("data") || !exists("out") || !exists("n")) { print "series.gp: set data, out, n"; exit }
if (!exists("ttl")) { ttl = "" }
set datafile missing "NaN"
# Each block's first line is its variant's name in quotes: the panel titles.
names = system("awk -F'\"' '/^\"/ { print $2 }' '".data."'")
set grid
set yrange [0:105]
set key outside right top vertical
set xlabel "time in the counters pass (ms)"
set ylabel "%"
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo noenhanced size 1100,260*n+60 font ",10"; set output out.".png" } \
  else { set terminal svg noenhanced size 1100,260*n+60 dynamic font ",10"; set output out.".svg" }
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
