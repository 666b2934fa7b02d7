# checkpoint_recompute: every activation policy on the memory / step-time plane.
#   NAME_pareto: x = peak activation memory (extra act_peak_bytes, GiB; peak_mem_bytes when the
#   run has no act_peak_bytes), y = step time; each policy (variant) at the default point, and
#   every_k at each k of the sweep (axis k), labelled; the Pareto front joins the policies that
#   no other policy beats on both memory and time. Lower left is better.
# Run by plots/render.sh; all data comes from the underfed tool, never from the CSV directly:
#   gnuplot -e "csv='DIR/checkpoint_recompute.csv'; dir='DIR'; out='PLOTS/checkpoint_recompute';
#               tool='build/tools/underfed'; gpu='NVIDIA H200'" plots/checkpoint_recompute.gp
if (!exists("csv") || !exists("out") || !exists("tool")) { print "checkpoint_recompute.gp: set csv, dir, out, tool"; exit }
if (!exists("gpu")) { gpu = "" }

# ---- data through the tool (paths single-quoted for the shell; render.sh refuses a quote) --
q(s) = "'".s."'"
run(args) = q(tool)." ".args
count(cmd) = int(system(cmd." | wc -l"))
axes = " ".system(run("axes ".q(csv))." | awk '{ printf \"%s \", $1 }'")
has_axis(name) = strstrt(axes, " ".name." ") > 0
vnames = " ".system(run("variants ".q(csv))." | tr '\\n' ' '")
kax = has_axis("k") ? "k" : has_axis("every_k") ? "every_k" : ""
sweep_k = kax ne "" && strstrt(vnames, " every_k ") > 0

is_num = "/^[-+]?[.0-9]/"
# "x_GiB step_ms label" lines: the policies at the default point (every_k too, unless the
# sweep of k shows it), then every_k at each k.
policies(mem) = run("values ".q(csv)." --metrics ".q(mem."?,step_ms"))." | tr -d '\"' | " . \
                "awk '$2 ~ ".is_num." && $3 ~ ".is_num.(sweep_k ? " && $1 !~ /^every_k$/" : ""). \
                " { print $2 / 1073741824, $3, $1 }'"
every_k(mem) = run("points ".q(csv)." --x ".kax." --variant every_k --metrics ".q(mem."?,step_ms")). \
               " | awk '$2 ~ ".is_num." && $3 ~ ".is_num." { print $2 / 1073741824, $3, \"k=\" $1 }'"
mem = count(policies("act_peak_bytes")) > 0 ? "act_peak_bytes" : "peak_mem_bytes"
memlabel = mem eq "act_peak_bytes" ? "peak activation memory (GiB)" : \
           "peak device memory of the variant (GiB; the run has no act_peak_bytes)"
pol = "< ".policies(mem)
ek = "< ".every_k(mem)
npol = count(policies(mem))
nek = sweep_k ? count(every_k(mem)) : 0
# The Pareto front: sorted by memory, each point faster than every point using less memory.
front = "< (".policies(mem).(nek > 0 ? "; ".every_k(mem) : "").") | sort -g | " . \
        "awk 'NR == 1 || $2 < best { print; best = $2 }'"

set termoption noenhanced
set grid
set key outside bottom center horizontal
set bmargin 6
set offsets graph 0.08, graph 0.12, graph 0.1, graph 0.1
set xlabel memlabel
set ylabel "step time (ms)"
set label 91 "better: lower left" at graph 0.02, graph 0.04 font ",9" tc rgb "#555555"
do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo noenhanced size 1000,640 font ",10"; set output out."_pareto.png" } \
  else { set terminal svg noenhanced size 1000,640 dynamic font ",10"; set output out."_pareto.svg" }
  set title sprintf("checkpoint_recompute on %s: activation memory against step time, every policy", gpu)
  if (npol + nek == 0) {
    set label 90 "no ".mem." and step_ms in this run" at graph 0.5, 0.5 center
    set xrange [0:1]; set yrange [0:1]
    plot 1/0 notitle
  } else {
    plot front using 1:2 with lines lw 2 dt 2 lc rgb "#888888" title "Pareto front (no policy both smaller and faster)", \
         pol using 1:2:($0 + 1) with points pt 7 ps 1.8 lc variable notitle, \
         pol using 1:2:3 with labels offset 0,1.2 font ",10" notitle, \
         (nek > 0 ? ek : "< true") using 1:2 with linespoints lw 1.5 pt 5 ps 1.2 lc rgb "#d55e00" \
           title (nek > 0 ? "every_k: checkpoint every k-th block, at each k run" : ""), \
         (nek > 0 ? ek : "< true") using 1:2:3 with labels offset 0,-1.2 font ",9" tc rgb "#d55e00" notitle
  }
  unset output
}
