#!/usr/bin/env bash
# The suite: on a machine with a GPU, build, measure the ceilings, run every scenario, write
# results/GPU/, render every plot and write results/GPU/REPORT.md. Without a GPU: say so, and
# render the plots and report from the committed results.
#
#   ci/suite.sh [--quick] [--only NAME,...] [--out DIR]
#     --quick        smoke run of a few minutes (results go to results-quick/ unless --out)
#     --only LIST    a subset of scenarios (comma-separated names; "ceilings" is always run)
#     --out DIR      where result folders go (default: results, or results-quick with --quick)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
quick=0
only=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --only) only=${2:?--only needs a list}; shift ;;
    --only=*) only=${1#--only=} ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --out=*) out=${1#--out=} ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "suite: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$out" ] || { [ $quick = 1 ] && out=$root/results-quick || out=$root/results; }

say() { echo "[suite $(date -u +%H:%M:%S)] $*" >&2; }

command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
say "building in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null || exit 1
cmake --build "$build" -j "$(nproc)" >/dev/null || { say "build failed"; exit 1; }

scenarios=()
for dir in "$root"/scenarios/*/; do
  name=$(basename "$dir")
  if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then continue; fi
  scenarios+=("$name")
done
if [ -n "$only" ]; then
  for want in ${only//,/ }; do
    [ -d "$root/scenarios/$want" ] || { echo "suite: no scenario named $want" >&2; exit 2; }
  done
fi

flags=()
[ $quick = 1 ] && flags+=(--quick)

# Is there a GPU? The ceilings bench answers 77 where there is none.
"$build/benches/ceilings" "${flags[@]}" --out "$out"
status=$?
if [ $status = 77 ]; then
  say "no GPU here: rendering the committed results instead of measuring"
  bash "$root/plots/render.sh" "$root"/results/*/
  exit $?
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
bash "$root/plots/render.sh" "$out"/*/ || failed=1
exit $failed
