# host_sync: a sync every step, and when it costs 1 % or half the step.
#   NAME_cost: left, against host_pct (the host's own work per step, % of the calibrated GPU
#     step) at the default launches, what each broken variant's sync costs: its step over
#     deferred's at the same point, less 1, in % (log), with the 1 % level, the claims' 20 %
#     and 100 % (the sync then costs half the broken step: 2 x deferred's); right, the share
#     of the step the GPU sits idle waiting for the host (idle_host_pct), item against
#     deferred, with the claims' 20 %.
# Data: `underfed plotdata`: data/host_sync_cost.dat (host_pct, cost of item, sync_timing,
# malloc_free, pageable_copy, idle_host_pct of item, of deferred; NaN where a row or value is
# absent); the broken variants' names, counts per column, the default launches and deferred's
# calibrated gpu_step_ms in data/host_sync.gp:
#   cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/host_sync.gp ../host_sync.gp
# A panel whose columns are absent says so; a broken variant without a cost is named.
if (!exists("data") || !exists("out") || !exists("counts")) { print "host_sync.gp: load data/host_sync.gp first"; exit }
load "lib.gp"
nb = words(broken)
# columns of data/host_sync_cost.dat: 1 host_pct, 2..nb+1 cost per broken variant,
# nb+2 idle_host_pct of item, nb+3 of deferred
c_idle_item = nb + 2
c_idle_def = nb + 3
# One colour per broken variant: item as the broken reference, the others apart from it.
cost_color = c_broken." #cc79a7 #0072b2 ".c_second
n_cost = 0
missing = ""
do for [i=1:nb] {
  n_cost = n_cost + count(counts, i)
  if (count(counts, i) == 0) { missing = missing.(missing eq "" ? "" : ", ").word(broken, i) }
}
n_item = count(counts, nb + 1)
n_def = count(counts, nb + 2)

# The cost axis is a log: a cost under the floor (a sync lost in the noise, or a broken step
# faster than deferred's) is drawn on it and said so.
floor = 0.5
y_hi = 200
x_lo = 0; x_hi = 100
below = 0
if (n_cost + n_item + n_def > 0) { stats data using 1 nooutput; x_lo = STATS_min; x_hi = max(STATS_max, x_lo + 1) }
do for [i=1:nb] {
  if (count(counts, i) > 0) {
    stats data using (column(i + 1)) nooutput
    y_hi = max(y_hi, STATS_max * 2)
    if (STATS_min < floor) { below = 1 }
  }
}
x_pad = (x_hi - x_lo) * 0.04
# A cost as drawn: on the floor when under it, absent (NaN: no point) when not measured.
on_floor(v) = isnum(v) ? max(v, floor) : NaN

# A level across the panel, its label above it at the left (side 0) or the right (side 1):
# eval level(id, y, colour, dash, text, side).
level(id, y, col, dt, text, side) = sprintf("set arrow %d from graph 0, first %g to graph 1, " . \
  "first %g nohead lw 1.5 dt %d lc rgb '%s' back; set label %d '%s' at graph %g, first %g %s " . \
  "offset 0,0.8 tc rgb '%s' front", id, y, y, dt, col, id, text, side ? 0.99 : 0.01, y, \
  side ? "right" : "left", col)
# What each broken variant does every step, for the key.
what(v) = v eq "item" ? "item: loss read every step (cudaStreamSynchronize)" : \
  v eq "sync_timing" ? "sync_timing: step timed on the host (cudaDeviceSynchronize)" : \
  v eq "malloc_free" ? "malloc_free: temporaries freed with cudaFree" : \
  v eq "pageable_copy" ? "pageable_copy: loss copied into pageable memory" : v
cost_items = ""
do for [i=1:nb] {
  if (count(counts, i) > 0) { cost_items = add(cost_items, sprintf("data using 1:(on_floor(column(%d))) " . \
    "with linespoints lw 2 pt 7 lc rgb '%s' title '%s'", i + 1, word(cost_color, i), what(word(broken, i)))) }
}
idle_items = ""
if (n_item > 0) { idle_items = sprintf("data using 1:%d with linespoints lw 2 pt 7 lc rgb '%s' " . \
  "title 'item: the loss read every step'", c_idle_item, c_broken) }
if (n_def > 0) { idle_items = add(idle_items, sprintf("data using 1:%d with linespoints lw 2 pt 5 " . \
  "lc rgb '%s' title 'deferred: loss read 3 steps late behind an event'", c_idle_def, c_fixed)) }
nothing(txt) = sprintf("set label 90 'no %s in this run' at graph 0.5, 0.5 center; " . \
                       "plot 1/0 notitle; unset label 90", txt)

set termoption noenhanced
set datafile missing "NaN"
set grid
set xrange [x_lo - x_pad : x_hi + x_pad]
set xtics out nomirror
set xlabel "host's own work per step: host_pct, % of the GPU step (busy CPU between steps)"
set key bmargin left Left reverse vertical maxrows 4
set bmargin 9

setup = sprintf("%s launches per step", isnum(launches) ? sprintf("%.0f", launches) : "default")
if (isnum(gpu_step)) { setup = setup.sprintf(", GPU step %.3f ms (calibrated: no sync, no host work)", gpu_step) }

do for [fmt in formats] {
  eval image(fmt, 1500, 620, out."_cost")
  set multiplot title sprintf("host_sync on %s: what a sync every step costs as the host's own work grows (%s)", gpu, setup)

  # ---- left: the cost of each broken variant's sync over deferred ---------------------------
  set origin 0, 0
  set size 0.56, 0.95
  notes = ""
  if (missing ne "" && n_cost > 0) { notes = "no cost (no step_ms of it, or of deferred, at any host_pct): ".missing }
  if (below) { notes = join(notes, sprintf("costs under %g %% drawn at %g %%", floor, floor)) }
  set title "cost of the sync: broken step / deferred step - 1, at the same point".(notes eq "" ? "" : "\n(".notes.")")
  set logscale y 10
  set yrange [floor / 1.2 : y_hi]
  eval "set ytics (".tics125(floor, y_hi).")"
  set ylabel "cost of the sync, % of deferred's step (log)"
  eval level(81, 1, c_ceiling, 3, "1 %", 1)
  eval level(82, 20, c_broken, 2, "claim: >= 20 % of the step, where host_pct >= 30", 1)
  eval level(83, 100, c_ceiling, 2, "100 %: broken = 2 x deferred, the sync is half the step", 0)
  if (cost_items eq "") { eval nothing("step_ms of deferred and a broken variant at one host_pct") } else { eval "plot ".cost_items }
  unset label 81; unset label 82; unset label 83
  unset arrow 81; unset arrow 82; unset arrow 83
  unset logscale y

  # ---- right: how long the GPU waits for the host -------------------------------------------
  set origin 0.56, 0
  set size 0.44, 0.95
  notes = n_item == 0 && n_def > 0 ? "no idle_host_pct of item" : n_def == 0 && n_item > 0 ? "no idle_host_pct of deferred" : ""
  set title "the GPU waiting for the host: item against deferred".(notes eq "" ? "" : "\n(".notes.")")
  set yrange [0 : 100]
  set ytics autofreq
  set ylabel "host-wait idle, % of the step (idle_host_pct)"
  eval level(82, 20, c_broken, 2, "claim: broken >= 20 % where host_pct >= 30", 1)
  if (idle_items eq "") { eval nothing("idle_host_pct of item or deferred") } else { eval "plot ".idle_items }
  unset label 82; unset arrow 82
  unset multiplot
  unset output
}
