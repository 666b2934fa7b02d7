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
pts = "points ".q(csv)." --x workers --metrics ".q("busy_pct,tokens_per_s?")." 2>/dev/null"
data = "< ".run(pts)
# Blocks of the points output, in variant order; a variant measured only at the default point
# has one number in its block (the row of the default worker count).
vnames = system(run("variants ".q(csv))." | tr '\n' ' '")
nvar = words(vnames)
# Column c of every block in one pass: "n0 v0 n1 v1 ...", n the measured values of block i and
# v its last one (NaN when none). A block with more than one is drawn as a curve; with one, as
# a dashed level.
stats(c) = system(run(pts)." | awk -v c=".c." -v nb=".nvar." 'BEGIN { k = 0 } /^$/ { if (prev != \"\") k++; prev = \"\"; next } { prev = $0 } $1 ~ /^[0-9]/ && $c ~ /^[-+]?[.0-9]/ { n[k]++; v[k] = $c } END { for (i = 0; i < nb; i++) printf \"%d %s \", n[i] + 0, (i in v) ? v[i] : \"NaN\" }'")
count(st, i) = int(word(st, 2 * i + 1))
level(st, i) = real(word(st, 2 * i + 2))
# Per panel (column 2: busy %, column 3: tokens/s): its stats, and the blocks drawn as curves
# and as levels, lists of indices; computed once, drawn in both formats.
array st[2]
array curves[2]
array levels[2]
do for [p=1:2] {
  st[p] = stats(p + 1)
  curves[p] = ""
  levels[p] = ""
  do for [i=0:nvar-1] {
    k = count(st[p], i)
    if (k > 1) { curves[p] = curves[p].sprintf(" %d", i) }
    if (k == 1) { levels[p] = levels[p].sprintf(" %d", i) }
  }
}

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
  do for [p=1:2] {
    c = p + 1
    if (p == 1) { set title "device busy (trace pass)"; set ylabel "busy % of the measured window"; set yrange [0:105] } \
    else { set title "throughput"; set ylabel "M tokens / s"; set yrange [0:*] }
    scale = p == 1 ? 1.0 : 1e-6
    if (words(curves[p]) + words(levels[p]) == 0) {
      set label 90 "no workers sweep in this run" at graph 0.5, 0.5 center
      set xrange [1:16]; set yrange [0:1]
      plot 1/0 notitle
      unset label 90; set xrange [*:*]
    } else {
      plot for [w in curves[p]] data index (w + 0) using 1:(column(c) * scale) \
             with linespoints lw 2 pt 7 title word(vnames, (w + 0) + 1), \
           for [w in levels[p]] level(st[p], w + 0) * scale \
             with lines dt 2 lw 2 title word(vnames, (w + 0) + 1)." (measured at one setting)"
    }
  }
  unset multiplot
  unset output
}
