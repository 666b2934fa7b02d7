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
# the look shared through plots/lib.gp. The data set is written whole or not at all; a figure's
# images replace the old ones only when gnuplot exits 0 having drawn them. Where gnuplot is
# missing it still writes the data and REPORT.md, says that no image was drawn and how to draw
# them, and exits 0. Each folder's last line says how many images were drawn (never "in
# plots/..." where none was) and whether its report was written.
# PLOTS_DIR overrides where images go (default: plots/ beside this script); BUILD_DIR where the
# underfed tool is built (default: build/). REPORT.md is written into each result folder.
# Exit: 0 all rendered, 1 something failed (a malformed result file, a gnuplot error or a
# figure gnuplot drew no image of, no image at all, a data set or report not written), 2 usage.
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
work=$(mktemp -d "${TMPDIR:-/tmp}/render.XXXXXX") || { echo "render: cannot make a temporary folder" >&2; exit 1; }
trap 'rm -rf "$work"' EXIT
# Draw each figure that `underfed plotdata` listed ("SCRIPT data/FIGURE.gp") for folder OUT.
# gnuplot runs in a fresh folder whose data/ is OUT/data, so that what it drew is known: the
# images are moved into OUT only when it exits 0 having drawn at least one PNG (a failed or
# empty figure leaves OUT's images as they were). Counts into drawn_figures and drawn_images.
draw_all() {  # draw_all OUT < list
  local out=$1 script include here_out stage images
  here_out=$(cd "$out" && pwd)
  drawn_figures=0 drawn_images=0
  while read -r script include; do
    [ $have_gnuplot = 1 ] || continue
    if [ ! -f "$here/$script.gp" ]; then
      echo "render: no plots/$script.gp for $out/$include" >&2; failed=1; continue
    fi
    stage=$(mktemp -d "$work/figure.XXXXXX") && ln -s "$here_out/data" "$stage/data" || {
      echo "render: cannot make a temporary folder for $out/$include" >&2; failed=1; continue; }
    if ! (cd "$stage" && GNUPLOT_LIB=$here gnuplot "$include" "$here/$script.gp"); then
      echo "render: gnuplot $script.gp failed ($out/$include)" >&2; failed=1
    else
      rm "$stage/data"
      images=("$stage"/*.png)
      if [ ${#images[@]} = 0 ]; then
        echo "render: gnuplot $script.gp drew no image ($out/$include)" >&2; failed=1
      elif mv -f "$stage"/* "$out"/; then
        drawn_figures=$((drawn_figures + 1)) drawn_images=$((drawn_images + ${#images[@]}))
      else
        echo "render: cannot move the images of $out/$include into $out/" >&2; failed=1
      fi
    fi
    rm -rf "$stage"
  done
}

# What a folder's rendering did, in the last line said of it: images drawn (never "plots in"
# a folder where none was drawn), and the report.
summary() {  # summary DIR OUT LISTED REPORT_STATUS
  local dir=$1 out=$2 listed=$3 what
  if [ $have_gnuplot = 0 ]; then
    what="plot data in $out/data/, no image (gnuplot is not installed)"
  elif [ "$drawn_images" -gt 0 ]; then
    what="$drawn_images images of $drawn_figures of $listed figures in $out/"
  else
    what="NO IMAGE drawn ($listed figures listed; the errors are above)"
    failed=1
  fi
  if [ "$4" = 0 ]; then what="$what, report $dir/REPORT.md"; else what="$what, no report"; fi
  echo "render: $dir -> $what" >&2
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
  : > "$work/figures.txt"
  mkdir -p "$out" && "$tool" plotdata "$dir" "$out" > "$work/figures.txt" || failed=1
  draw_all "$out" < "$work/figures.txt"
  "$tool" report "$dir" --plots "$out" --plots-link "$(realpath --relative-to="$dir" "$out")"
  summary "$dir" "$out" "$(wc -l < "$work/figures.txt")" $?
done

if [ $# -ge 2 ]; then
  out=$plots/compare
  echo "render: compare across $# folders" >&2
  dirs=()
  for dir in "$@"; do dirs+=("${dir%/}"); done
  : > "$work/figures.txt"
  mkdir -p "$out" && "$tool" plotdata --across "${dirs[@]}" "$out" > "$work/figures.txt" ||
    failed=1
  draw_all "$out" < "$work/figures.txt"
  listed=$(wc -l < "$work/figures.txt")
  if [ $have_gnuplot = 1 ] && [ "$listed" -gt 0 ] && [ "$drawn_images" = 0 ]; then
    echo "render: across $# folders -> NO IMAGE drawn ($listed figures listed)" >&2; failed=1
  elif [ $have_gnuplot = 1 ] && [ "$listed" -gt 0 ]; then
    echo "render: across $# folders -> $drawn_images images of $drawn_figures of $listed figures in $out/" >&2
  fi
fi
if [ $have_gnuplot = 0 ]; then
  echo "render: NO IMAGES WERE DRAWN: gnuplot is not installed. The plot data and REPORT.md are" \
       "written. To draw the images: install gnuplot (Debian/Ubuntu: apt-get install" \
       "gnuplot-nox), then run: plots/render.sh $*" >&2
fi
exit $failed
