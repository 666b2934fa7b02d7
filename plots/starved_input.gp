# starved_input: what the number of tokenizer workers buys, at the default tokenizer cost.
#   NAME_workers: device busy % and tokens/s against workers for `workers`; `sync` and
#   `pretokenized` do not take the axis (measured once) and are drawn as dashed levels.
# Data: `underfed plotdata` (data/starved_input_workers.dat: a block per variant, workers,
# busy_pct, tokens_per_s; per variant and column how many values it has and its last one,
# "n0 v0 n1 v1 ...", as st_busy and st_tokens in data/starved_input.gp):
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/starved_input.gp ../starved_input.gp
if (!exists("data") || !exists("out") || !exists("st_busy")) { print "starved_input.gp: load data/starved_input.gp first"; exit }
load "lib.gp"
nvar = n
# A block with more than one value is drawn as a curve; with one (a variant measured only at
# the default point: the row of the default worker count), as a dashed level.
n_of(st, i) = int(word(st, 2 * i + 1))
level(st, i) = real(word(st, 2 * i + 2))
# Per panel (column 2: busy %, column 3: tokens/s): its stats, and the blocks drawn as curves
# and as levels, lists of indices; computed once, drawn in both formats.
array st[2]
array curves[2]
array levels[2]
do for [p=1:2] {
  st[p] = p == 1 ? st_busy : st_tokens
  curves[p] = ""
  levels[p] = ""
  do for [i=0:nvar-1] {
    k = n_of(st[p], i)
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
do for [fmt in formats] {
  eval image(fmt, 1200, 500, out."_workers")
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
      # `for [w in ""]` is an error: only the kinds this panel has
      items = words(curves[p]) == 0 ? "" : "for [w in curves[p]] data index (w + 0) using " . \
              "1:(column(c) * scale) with linespoints lw 2 pt 7 title word(vnames, (w + 0) + 1)"
      if (words(levels[p]) > 0) { items = add(items, "for [w in levels[p]] level(st[p], w + 0) * scale " . \
              "with lines dt 2 lw 2 title word(vnames, (w + 0) + 1).' (measured at one setting)'") }
      eval "plot ".items
    }
  }
  unset multiplot
  unset output
}
