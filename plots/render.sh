#!/usr/bin/env bash
# Render every plot of one or more result folders, and each folder's REPORT.md.
#   plots/render.sh results/nvidia-h200/ [results/nvidia-geforce-rtx-4090/ ...]
# For each folder GPU: plots/GPU/NAME_ladder, NAME_series, NAME_sweep_AXIS (+ the figures of
# plots/NAME.gp where a scenario has its own), as PNG and SVG. With two or more folders:
# plots/compare/NAME_across (the same metrics side by side, raw and as a share of each GPU's
# ceilings). The data comes one way: `underfed plotdata` writes every figure's data into
# plots/GPU/data/ (FIGURE.dat, a `# key: value` header first) and its gnuplot variables
# (FIGURE.gp: the names, counts and ceilings the script needs), and lists "SCRIPT data/FIGURE.gp";
# each script only draws: `cd plots/GPU && GNUPLOT_LIB=.. gnuplot data/FIGURE.gp ../SCRIPT.gp`,
# the look shared through plots/lib.gp. Where gnuplot is missing it still writes the data and
# REPORT.md, says that no image was drawn and how to draw them, and exits 0.
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

if [ ! -x "$tool" ]; then
  command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
  { cmake -S "$root" -B "$build" >/dev/null && cmake --build "$build" --target underfed >/dev/null; } ||
    { echo "render: could not build the underfed tool" >&2; exit 1; }
fi
have_gnuplot=1
command -v gnuplot >/dev/null 2>&1 ||
  { have_gnuplot=0; echo "render: gnuplot not found: writing the plot data and REPORT.md only" >&2; }

failed=0
# Draw each figure that `underfed plotdata` listed ("SCRIPT data/FIGURE.gp") in folder OUT.
draw_all() {  # draw_all OUT < list
  local out=$1 script include
  while read -r script include; do
    [ $have_gnuplot = 1 ] || continue
    if [ ! -f "$here/$script.gp" ]; then
      echo "render: no plots/$script.gp for $out/$include" >&2; failed=1; continue
    fi
    (cd "$out" && GNUPLOT_LIB=$here gnuplot "$include" "$here/$script.gp") ||
      { echo "render: gnuplot $script.gp failed ($out/$include)" >&2; failed=1; }
  done
}

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
  echo "render: $gpu" >&2
  mkdir -p "$out/data" && "$tool" plotdata "$dir" "$out" > "$out/data/figures.txt" || failed=1
  draw_all "$out" < "$out/data/figures.txt"
  rm -f "$out/data/figures.txt"
  "$tool" report "$dir" --plots "$out" --plots-link "$(realpath --relative-to="$dir" "$out")" ||
    failed=1
  echo "render: $dir -> plots in $out/, report $dir/REPORT.md" >&2
done

if [ $# -ge 2 ]; then
  out=$plots/compare
  echo "render: compare across $# folders" >&2
  dirs=()
  for dir in "$@"; do dirs+=("${dir%/}"); done
  mkdir -p "$out/data" && "$tool" plotdata --across "${dirs[@]}" "$out" > "$out/data/figures.txt" ||
    failed=1
  draw_all "$out" < "$out/data/figures.txt"
  rm -f "$out/data/figures.txt"
fi
if [ $have_gnuplot = 0 ]; then
  echo "render: NO IMAGES WERE DRAWN: gnuplot is not installed. The plot data and REPORT.md are" \
       "written. To draw the images: install gnuplot (Debian/Ubuntu: apt-get install" \
       "gnuplot-nox), then run: plots/render.sh $*" >&2
fi
exit $failed
