# starved_input: what the number of tokenizer workers buys, at the default tokenizer cost.
#   NAME_workers: device busy % and tokens/s against workers for `workers`; `sync` and
#   `pretokenized` do not take the axis (measured once) and are drawn as dashed levels.
# Run by plots/render.sh; all data comes from the underfed tool, never from the CSV directly:
#   gnuplot -e "csv='DIR/starved_input.csv'; dir='DIR'; out='PLOTS/starved_input';
#               tool='build/tools/underfed'; gpu='NVIDIA H200'" plots/starved_input.gp
# Columns used: busy_pct, tokens_per_s (extra).
if (!exists("csv") || !exists("out") || !exists("tool")) { print "starved_input.gp: set csv, dir, out, tool"; exit }
if (!exists("gpu")) { gpu = "" }

q(s) = "'".s."'"
run(args) = q(tool)." ".args
pts = "points ".q(csv)." --x workers --metrics busy_pct,tokens_per_s 2>/dev/null"
data = "< ".run(pts)
# Blocks of the points output, in variant order; a variant measured only at the default point
# has one number in its block (the row of the default worker count).
vnames = system(run("variants ".q(csv))." | tr '\n' ' '")
nvar = words(vnames)
# The one measured value of column c in block i (NaN when none).
level(i, c) = real(system(run(pts)." | awk -v b=".i." -v c=".c." 'BEGIN { v = \"NaN\" } /^$/ { if (prev != \"\") k++; prev = \"\"; next } { prev = $0 } k == b && $1 ~ /^[0-9]/ && $c ~ /^[-+]?[.0-9]/ { v = $c } END { print v }'"))
count(i, c) = int(system(run(pts)." | awk -v b=".i." -v c=".c." '/^$/ { if (prev != \"\") k++; prev = \"\"; next } { prev = $0 } k == b && $1 ~ /^[0-9]/ && $c ~ /^[-+]?[.0-9]/ { n++ } END { print n + 0 }'"))

set termoption noenhanced
set datafile missing "NaN"
set grid
set key outside bottom center horizontal
set bmargin 7
set logscale x 2
set xlabel "tokenizer worker threads"
set offsets graph 0.05, graph 0.05, 0, 0
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo noenhanced size 1200,500 font ",10"; set output out."_workers.png" } \
  else { set terminal svg noenhanced size 1200,500 dynamic font ",10"; set output out."_workers.svg" }
  set multiplot layout 1,2 title sprintf("starved_input on %s: tokenizer workers (default tokenizer cost)", gpu)
  do for [panel=1:2] {
    c = panel + 1
    if (panel == 1) { set title "device busy (trace pass)"; set ylabel "busy % of the measured window"; set yrange [0:105] } \
    else { set title "throughput"; set ylabel "M tokens / s"; set yrange [0:*] }
    scale = panel == 1 ? 1.0 : 1e-6
    curves = ""
    levels = ""
    do for [i=0:nvar-1] {
      k = count(i, c)
      if (k > 1) { curves = curves.sprintf(" %d", i) }
      if (k == 1) { levels = levels.sprintf(" %d", i) }
    }
    if (words(curves) + words(levels) == 0) {
      set label 90 "no workers sweep in this run" at graph 0.5, 0.5 center
      set xrange [1:16]; set yrange [0:1]
      plot 1/0 notitle
      unset label 90; set xrange [*:*]
    } else {
      plot for [w in curves] data index (w + 0) using 1:(column(c) * scale) \
             with linespoints lw 2 pt 7 title word(vnames, (w + 0) + 1), \
           for [w in levels] level((w + 0), c) * scale \
             with lines dt 2 lw 2 title word(vnames, (w + 0) + 1)." (measured at one setting)"
    }
  }
  unset multiplot
  unset output
}
