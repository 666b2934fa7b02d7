# The utilization ladder of one scenario at one sweep point: for each variant, what NVML
# reported, the share of time the device was busy (trace), SM active, tensor active and DRAM
# throughput (PM-sampled counters); and, beside it, the step time.
# Data: `underfed plotdata` (data/NAME_ladder.dat, its variables in data/NAME_ladder.gp):
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/NAME_ladder.gp ../ladder.gp
# A metric that was not measured (NaN: no NVML, counters not permitted, ...) is left out; a
# panel with nothing measured says so.
if (!exists("data") || !exists("out") || !exists("counts")) { print "ladder.gp: load data/NAME_ladder.gp first"; exit }
load "lib.gp"
set datafile missing "NaN"
# The variants placed by name, so that a metric missing everywhere cannot take the labels
# with it. counts: the values measured in each column (2..7) of the data.
measured(c) = count(counts, c - 1)
n_util = measured(2) + measured(3) + measured(4) + measured(5) + measured(6)
n_step = measured(7)
# The ladder's rungs (column, name, colour); a rung nothing measured stays in the key only.
rung_name = "'NVML util' 'busy (trace)' 'SM active' 'tensor active' 'DRAM'"
rung_color = "#9400d3 #009e73 #56b4e9 #e69f00 #f0e442"
rungs = ""
do for [c=2:6] {
  style = sprintf("lc rgb '%s' title '%s", word(rung_color, c - 1), word(rung_name, c - 1))
  rungs = rungs.(c > 2 ? ", " : "").(measured(c) > 0 ? sprintf("data using %d %s'", c, style) : \
          sprintf("keyentry with boxes fs empty %s: not measured'", style))
}
if (n_util == 0) { rungs = "1/0 with lines notitle, ".rungs }
eval name_tics(names)
set xrange [-0.5 : n - 0.5]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key outside bottom center horizontal

do for [fmt in formats] {
  eval image(fmt, 1280, 560, out)
  set multiplot title ttl
  set size 0.68,0.94
  set origin 0,0
  set title "utilization ladder: what each tool calls busy"
  set yrange [0:105]
  set ylabel "% of time (NVML, busy) or of peak (counters)"
  if (n_util == 0) { set label 90 "no utilization measured in this run (no NVML, trace or counters)" at graph 0.5, 0.5 center }
  eval "plot ".rungs
  unset label 90
  set size 0.32,0.94
  set origin 0.68,0
  set title "step time (value on each bar)"
  if (n_step == 0) { set yrange [0:1]; set label 90 "no step time measured" at graph 0.5, 0.5 center } \
  else { set yrange [0:*] }
  set offsets 0, 0, graph 0.08, 0
  set ylabel "ms per step"
  unset key
  plot data using 7 title "step ms" lc rgb c_step, \
       '' using 0:7:(sprintf("%.3g", $7)) with labels offset 0,0.7 notitle
  unset label 90
  set offsets 0, 0, 0, 0
  set key outside bottom center horizontal
  unset multiplot
  unset output
}
