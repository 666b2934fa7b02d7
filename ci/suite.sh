#!/usr/bin/env bash
# The suite: on a machine with a GPU, build, measure the ceilings, run every scenario, write
# results/GPU/, render every plot and write results/GPU/REPORT.md. Without a GPU: say so, and
# render the plots and report from the committed results.
#
#   ci/suite.sh [--quick] [--only NAME,...] [--out DIR] [--keep-ceilings]
#     --quick          smoke run of a few minutes (results go to results-quick/ unless --out)
#     --only LIST      a subset of scenarios (comma-separated names; "ceilings" is always run)
#     --out DIR        where result folders go (default: results, or results-quick with --quick)
#     --keep-ceilings  do not measure the ceilings again: use the one DIR/GPU/ceilings.csv an
#                      earlier run wrote (a suite split over several runs, each scenario
#                      measured against the same ceilings)
# The last lines say where the results, the plots and REPORT.md went. Where gnuplot is missing,
# the plot data and REPORT.md are still written, and render.sh says how to draw the images.
# Exit: 0 every scenario reproduced, 1 a failure or an unmet expectation, 2 usage.
set -uo pipefail
shopt -s nullglob
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
quick=0
only=""
out=""
keep_ceilings=0

usage_error() { echo "suite: $* (see ci/suite.sh --help)" >&2; exit 2; }
# The value of an option that takes one: the next argument, which must be there and not be
# another option.
need_value() {  # need_value FLAG WHAT NEXT_ARG_COUNT NEXT_ARG
  [ "$3" -ge 2 ] && [ -n "$4" ] && [[ $4 != -* ]] || usage_error "$1 needs $2"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --only) need_value --only "a comma-separated list of scenarios" $# "${2-}"; only=$2; shift ;;
    --only=*) only=${1#--only=}; [ -n "$only" ] || usage_error "--only needs a comma-separated list of scenarios" ;;
    --out) need_value --out "a folder" $# "${2-}"; out=$2; shift ;;
    --out=*) out=${1#--out=}; [ -n "$out" ] || usage_error "--out needs a folder" ;;
    --keep-ceilings) keep_ceilings=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) usage_error "unknown option $1" ;;
  esac
  shift
done
[ -n "$out" ] || { [ $quick = 1 ] && out=$root/results-quick || out=$root/results; }

# The scenarios to run, checked before anything is built.
known=()
for dir in "$root"/scenarios/*/; do known+=("$(basename "$dir")"); done
scenarios=()
if [ -n "$only" ]; then
  [[ ,$only, != *,,* ]] || usage_error "--only: empty name in '$only'"
  IFS=, read -r -a wanted <<< "$only"
  for want in "${wanted[@]}"; do
    [ "$want" = ceilings ] && continue
    [[ " ${known[*]} " == *" $want "* ]] ||
      usage_error "--only: no scenario named '$want' (scenarios: ${known[*]}; ceilings always runs)"
  done
  for name in "${known[@]}"; do
    [[ ",$only," == *",$name,"* ]] && scenarios+=("$name")
  done
else
  scenarios=("${known[@]}")
fi

# --keep-ceilings: exactly one earlier ceilings file under OUT, checked before the build.
kept=()
if [ $keep_ceilings = 1 ]; then
  kept=("$out"/*/ceilings.csv)
  [ ${#kept[@]} = 1 ] ||
    usage_error "--keep-ceilings: expected one GPU/ceilings.csv under $out, found ${#kept[@]}"
fi

say() { echo "[suite $(date -u +%H:%M:%S)] $*" >&2; }
# The last lines: where the results, the plots and each REPORT.md went (render.sh puts the
# images of results folder GPU in plots/GPU/, PLOTS_DIR overriding plots/), as they are on
# disk: the images there, how many of them this run drew (newer than its start: without
# gnuplot, none), and whether a report is (render.sh's own lines say what it drew).
started=$(mktemp "${TMPDIR:-/tmp}/underfed-suite-start.XXXXXX") || exit 1
trap 'rm -f "$started"' EXIT
where_it_went() {  # where_it_went RESULT_DIR...
  local dir images img fresh plots=${PLOTS_DIR:-$root/plots}
  for dir in "$@"; do
    dir=${dir%/}
    images=("$plots/$(basename "$dir")"/*.png)
    fresh=0
    for img in "${images[@]}"; do [ "$img" -nt "$started" ] && fresh=$((fresh + 1)); done
    say "results: $dir/"
    if [ ${#images[@]} -gt 0 ]; then
      say "plots:   $plots/$(basename "$dir")/ (${#images[@]} images, $fresh of them drawn by this run)"
    else
      say "plots:   none in $plots/$(basename "$dir")/"
    fi
    if [ -f "$dir/REPORT.md" ]; then say "report:  $dir/REPORT.md"; else say "report:  none"; fi
  done
}

command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
say "building in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null || exit 1
cmake --build "$build" -j "$(nproc)" >/dev/null || { say "build failed"; exit 1; }

flags=()
[ $quick = 1 ] && flags+=(--quick)

# Is there a GPU? The ceilings bench answers 77 where there is none (a kept ceilings file
# skips the bench: then each scenario answers 77 itself).
if [ $keep_ceilings = 1 ]; then
  say "keeping ${kept[0]} (not measured again)"
  status=0
else
  "$build/benches/ceilings" "${flags[@]}" --out "$out"
  status=$?
fi
if [ $status = 77 ]; then
  say "no GPU here: rendering the committed results instead of measuring"
  rendered=("$root"/results/*/)
  bash "$root/plots/render.sh" "${rendered[@]}"
  status=$?
  where_it_went "${rendered[@]}"
  exit $status
elif [ $status != 0 ]; then
  say "ceilings failed (exit $status)"
  exit 1
fi

failed=0
started=$(date +%s)
i=0
for name in "${scenarios[@]}"; do
  i=$((i + 1))
  elapsed=$(( $(date +%s) - started ))
  say "scenario $i/${#scenarios[@]}: $name (${elapsed}s so far)"
  "$build/scenarios/$name" "${flags[@]}" --out "$out" > "$build/$name.log"
  status=$?
  cat "$build/$name.log"
  case $status in
    0) say "$name: reproduced and verified" ;;
    3) say "$name: ran and verified, but its expectation did not hold"; failed=1 ;;
    77) say "$name: skipped (see the reason above)" ;;
    *) say "$name: failed (exit $status)"; failed=1 ;;
  esac
done

# Every folder written this run (one per GPU model).
rendered=("$out"/*/)
if [ ${#rendered[@]} = 0 ]; then
  say "no result folder was written under $out"
  exit 1
fi
bash "$root/plots/render.sh" "${rendered[@]}" || failed=1
where_it_went "${rendered[@]}"
exit $failed
