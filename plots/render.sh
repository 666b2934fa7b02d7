#!/usr/bin/env bash
# Render every plot of one or more result folders, and each folder's REPORT.md.
#   plots/render.sh results/nvidia-h200/ [results/nvidia-geforce-rtx-4090/ ...]
# For each folder GPU: plots/GPU/NAME_ladder, NAME_series, NAME_sweep_AXIS (+ plots/NAME.gp
# when a scenario has its own), as PNG and SVG, with their data in plots/GPU/data/. With two
# or more folders: plots/compare/NAME_across (the same metrics side by side, raw and as a share
# of each GPU's ceilings). Where gnuplot is missing it still writes the data and REPORT.md,
# says that no image was drawn and how to draw them, and exits 0.
# PLOTS_DIR overrides where images go (default: plots/ beside this script); BUILD_DIR where the
# underfed tool is built (default: build/). REPORT.md is written into each result folder.
# Exit: 0 all rendered, 1 something failed (a malformed result file, a gnuplot error), 2 usage.
set -uo pipefail
shopt -s nullglob
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
plots=${PLOTS_DIR:-$here}
build=${BUILD_DIR:-$root/build}
tool=$build/tools/underfed
[ $# -ge 1 ] || { echo "usage: plots/render.sh RESULTS_DIR..." >&2; exit 2; }

# Paths go into gnuplot strings and shell commands inside single quotes: refuse a quote.
for path in "$here" "$plots" "$build" "$@"; do
  case $path in *"'"*) echo "render: paths with a single quote are not supported: $path" >&2; exit 2 ;; esac
done

if [ ! -x "$tool" ]; then
  command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
  { cmake -S "$root" -B "$build" >/dev/null && cmake --build "$build" --target underfed >/dev/null; } ||
    { echo "render: could not build the underfed tool" >&2; exit 1; }
fi
have_gnuplot=1
command -v gnuplot >/dev/null 2>&1 ||
  { have_gnuplot=0; echo "render: gnuplot not found: writing the plot data and REPORT.md only" >&2; }

failed=0
draw() {  # draw SCRIPT VARS...
  local script=$1; shift
  [ $have_gnuplot = 1 ] || return 0
  gnuplot -e "$*" "$script" || { echo "render: gnuplot $script failed ($*)" >&2; failed=1; }
}
gq() { printf '%s' "${1//\'/\'\'}"; }  # text for a gnuplot '...' string

used_names=" "
for dir in "$@"; do
  dir=${dir%/}
  [ -d "$dir" ] || { echo "render: no folder $dir" >&2; failed=1; continue; }
  gpu=$(basename "$dir")
  # Two folders of one GPU model (e.g. results/ and results-quick/): keep both plot sets.
  k=1
  while [[ $used_names == *" $gpu "* ]]; do k=$((k + 1)); gpu=$(basename "$dir")-$k; done
  used_names="$used_names$gpu "
  out=$plots/$gpu
  mkdir -p "$out/data" || { failed=1; continue; }
  csvs=("$dir"/*.csv)
  [ ${#csvs[@]} -gt 0 ] || echo "render: no result files in $dir" >&2
  for csv in "${csvs[@]}"; do
    name=$(basename "$csv" .csv)
    case $name in ceilings|*.series) continue ;; esac
    echo "render: $gpu/$name" >&2
    nvar=$("$tool" variants "$csv" | wc -l) || { failed=1; continue; }
    [ "$nvar" -gt 0 ] || { echo "render: $csv has no rows: nothing to draw" >&2; continue; }
    gpu_name=$(gq "$(sed -n 's/^# gpu: //p' "$csv" | head -n 1)")
    "$tool" ladder "$csv" > "$out/data/${name}_ladder.dat" || { failed=1; continue; }
    draw "$here/ladder.gp" "data='$out/data/${name}_ladder.dat'; out='$out/${name}_ladder';" \
         "ttl='$name on $gpu_name: utilization ladder at the default point'"
    if [ -f "$dir/$name.series.csv" ]; then
      if "$tool" series "$csv" > "$out/data/${name}_series.dat"; then
        draw "$here/series.gp" "data='$out/data/${name}_series.dat'; out='$out/${name}_series'; n=$nvar;" \
             "ttl='$name on $gpu_name: PM-sampled counters (default point)'"
      else
        failed=1
      fi
    fi
    axes=$("$tool" axes "$csv") || { failed=1; continue; }
    while read -r axis count logx; do
      [ -n "$axis" ] && [ "$count" -gt 1 ] || continue
      if "$tool" points "$csv" --x "$axis" --metrics step_ms,busy_pct > "$out/data/${name}_sweep_$axis.dat"; then
        draw "$here/sweep.gp" "data='$out/data/${name}_sweep_$axis.dat'; out='$out/${name}_sweep_$axis';" \
             "n=$nvar; xname='$axis'; logx=$logx; ttl='$name on $gpu_name: sweep of $axis (other axes at their defaults)'"
      else
        failed=1
      fi
    done <<< "$axes"
    if [ -f "$here/$name.gp" ]; then
      draw "$here/$name.gp" "csv='$csv'; dir='$dir'; out='$out/$name'; tool='$tool'; gpu='$gpu_name'"
    fi
  done
  "$tool" report "$dir" --plots "$out" --plots-link "$(realpath --relative-to="$dir" "$out")" ||
    failed=1
  echo "render: $dir -> plots in $out/, report $dir/REPORT.md" >&2
done

if [ $# -ge 2 ]; then
  mkdir -p "$plots/compare/data" || exit 1
  first=${1%/}
  for csv in "$first"/*.csv; do
    name=$(basename "$csv" .csv)
    case $name in ceilings|*.series) continue ;; esac
    dirs=()
    for dir in "$@"; do [ -f "${dir%/}/$name.csv" ] && dirs+=("${dir%/}"); done
    [ ${#dirs[@]} -ge 2 ] || continue
    echo "render: compare/$name across ${#dirs[@]} folders" >&2
    if "$tool" across "$name" --metric step_ms --share auto "${dirs[@]}" > "$plots/compare/data/${name}_across.dat"; then
      draw "$here/across.gp" "data='$plots/compare/data/${name}_across.dat'; out='$plots/compare/${name}_across';" \
           "ngpu=${#dirs[@]}; raw='step time (ms)';" \
           "ttl='$name across GPUs (each at its default point)'"
    else
      failed=1
    fi
  done
fi
if [ $have_gnuplot = 0 ]; then
  echo "render: NO IMAGES WERE DRAWN: gnuplot is not installed. The plot data and REPORT.md are" \
       "written. To draw the images: install gnuplot (Debian/Ubuntu: apt-get install" \
       "gnuplot-nox), then run: plots/render.sh $*" >&2
fi
exit $failed
