# serial_decode: a decode step is a copy of the weights.
#   NAME_decode: against the model width d_model, left the step time of each variant (log-log)
#     with the floor of a batch-1 step (its weights and cache at the measured copy ceiling:
#     no batch-1 kernel can beat it), right each variant's share of the copy ceiling
#     (pct_of_copy) with the claims' 85 % (graph_b1) and 92 % (persistent). batched's step
#     decodes 64 tokens: its time is per step, its share counts the 64 caches.
# Data: `underfed plotdata`: data/serial_decode_decode.dat (d_model, step_ms of eager_b1,
# graph_b1, persistent, batched, their pct_of_copy, the floor in ms; NaN where absent); the
# variants' names, counts per column and batched's tokens/s over graph_b1's in
# data/serial_decode.gp:
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/serial_decode.gp ../serial_decode.gp
# A panel whose columns are absent says so.
if (!exists("data") || !exists("out") || !exists("counts")) { print "serial_decode.gp: load data/serial_decode.gp first"; exit }
load "lib.gp"
nv = words(variants)
# columns: 1 d_model, 2..nv+1 step_ms, nv+2..2nv+1 pct_of_copy, 2nv+2 floor_ms
c_floor = 2 * nv + 2
colour = c_broken." ".c_second." #0072b2 ".c_fixed
what(v) = v eq "eager_b1" ? "eager_b1: one launch per op" : \
  v eq "graph_b1" ? "graph_b1: the same kernels from a CUDA graph" : \
  v eq "persistent" ? "persistent: one kernel per token" : \
  v eq "batched" ? "batched: 64 sequences a step" : v
n_step = 0
n_pct = 0
do for [i=1:nv] { n_step = n_step + count(counts, i); n_pct = n_pct + count(counts, nv + i) }
n_floor = count(counts, c_floor - 1)

step_items = ""
pct_items = ""
do for [i=1:nv] {
  if (count(counts, i) > 0) { step_items = add(step_items, sprintf("data using 1:%d with linespoints lw 2 pt 7 lc rgb '%s' title '%s'", i + 1, word(colour, i), what(word(variants, i)))) }
  if (count(counts, nv + i) > 0) { pct_items = add(pct_items, sprintf("data using 1:%d with linespoints lw 2 pt 7 lc rgb '%s' title '%s'", nv + i + 1, word(colour, i), what(word(variants, i)))) }
}
if (n_floor > 0) { step_items = add(step_items, sprintf("data using 1:%d with lines lw 2 dt 2 lc rgb '%s' title 'floor of batch 1: weights + cache / copy ceiling'", c_floor, c_ceiling)) }
nothing(txt) = sprintf("set label 90 'no %s in this run' at graph 0.5, 0.5 center; " . \
                       "set xrange [256:4096]; set yrange [1:10]; plot 1/0 notitle; " . \
                       "unset label 90; set xrange [*:*]", txt)
level(id, y, col, text) = sprintf("set arrow %d from graph 0, first %g to graph 1, first %g " . \
  "nohead lw 1.5 dt 2 lc rgb '%s' back; set label %d '%s' at graph 0.01, first %g left " . \
  "offset 0,0.7 tc rgb '%s' front", id, y, y, col, id, text, y, col)

set termoption noenhanced
set datafile missing "NaN"
set grid
set logscale x 2
set xlabel "model width d_model (16 layers, vocabulary 32768, 256 cached positions)"
set key bmargin left Left reverse vertical maxrows 5
set bmargin 10
set offsets graph 0.05, graph 0.05, 0, 0
title_note = isnum(speedup) ? sprintf(": batched decodes %.0fx graph_b1's tokens/s at the default width", speedup) : ""

do for [fmt in formats] {
  eval image(fmt, 1400, 620, out."_decode")
  set multiplot layout 1,2 title sprintf("serial_decode on %s%s", gpu, title_note)

  set title "step time (one token per sequence)"
  set logscale y 10
  set ylabel "ms per step (log)"
  set yrange [*:*]
  if (step_items eq "") { eval nothing("step_ms") } else { eval "plot ".step_items }
  unset logscale y

  set title "share of the copy ceiling: bytes a step must read / step time"
  set ylabel "% of the copy ceiling (pct_of_copy)"
  set yrange [0:110]
  eval level(81, 85, c_second, "claim: graph_b1 >= 85 % at d = 4096")
  eval level(82, 92, "#0072b2", "claim: persistent >= 92 % at d = 4096")
  if (pct_items eq "") { eval nothing("pct_of_copy (no ceilings file?)") } else { eval "plot ".pct_items }
  unset label 81; unset label 82; unset arrow 81; unset arrow 82
  unset multiplot
  unset output
}
