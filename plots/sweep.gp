# A sweep: step time (left axis, log) and busy % (right axis) of each variant against one
# axis, the others at their defaults.
# Data: `underfed plotdata` (data/NAME_sweep_AXIS.dat, one block per variant: header line
# "AXIS VARIANT ...", then x, step_ms, busy_pct; its variables in data/NAME_sweep_AXIS.gp):
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/NAME_sweep_AXIS.gp ../sweep.gp
if (!exists("data") || !exists("out") || !exists("counts")) { print "sweep.gp: load data/NAME_sweep_AXIS.gp first"; exit }
load "lib.gp"
set datafile missing "NaN"
# Numbers (not NaN) in the step and busy columns: a panel with none says so.
n_step = count(counts, 1)
n_busy = count(counts, 2)
nothing(what) = sprintf("set label 90 'no %s measured at these points' at graph 0.5, 0.5 center; " . \
                        "unset logscale; set xrange [0:1]; set yrange [0:1]; plot 1/0 notitle; unset label 90; " . \
                        "set xrange [*:*]%s", what, logx ? "; set logscale x 2" : "")
set grid
set key outside bottom center horizontal
set bmargin 6
# A little room either side, so that the first and last measured values keep their tics.
set offsets graph 0.03, graph 0.03, 0, 0
# Tics at the measured values, with the binary suffixes of the command line (4K, 64M).
binary(x) = x >= 1073741824 && int(x) % 1073741824 == 0 ? sprintf("%dG", x / 1073741824) : \
            x >= 1048576 && int(x) % 1048576 == 0 ? sprintf("%dM", x / 1048576) : \
            x >= 1024 && int(x) % 1024 == 0 ? sprintf("%dK", x / 1024) : sprintf("%g", x)
if (logx) { set logscale x 2 }
set xlabel xname
do for [fmt in formats] {
  eval image(fmt, 1200, 500, out)
  set multiplot layout 1,2 title ttl
  set title "step time"
  set logscale y
  set ylabel "ms per step (log)"
  if (n_step == 0) { eval nothing("step time") } else {
    plot for [i=0:n-1] data index i using 1:2:xtic(binary($1)) with linespoints lw 2 pt 7 title columnheader(2)
  }
  unset logscale y
  set title "device busy (trace pass)"
  set yrange [0:105]
  set ylabel "busy % of the measured window"
  if (n_busy == 0) { eval nothing("device busy %") } else {
    plot for [i=0:n-1] data index i using 1:3:xtic(binary($1)) with linespoints lw 2 pt 7 title columnheader(2)
  }
  set yrange [*:*]
  unset multiplot
  unset output
}
