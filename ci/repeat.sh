#!/usr/bin/env bash
# The flake finder: run the scenarios N times on the GPU and print, per claim, in how many runs
# it held, the values it was judged on (min, median, max), its bound, and the margin of the
# median and of the worst run from the bound in units of the run-to-run spread
# (tools/repeat_claims; tools/claimstats.h defines the spread and says why).
#
#   ci/repeat.sh N [--quick] [--only NAME,...] [--out DIR] [--min-margin M]
#     N               runs of each scenario (1 or more; 3 or more for a spread)
#     --quick         the scenarios' --quick mode (the per-commit GPU lane's runs)
#     --only LIST     a subset of scenarios (comma-separated names)
#     --out DIR       where the runs go: DIR/run-1 ... DIR/run-N, each a results folder as
#                     ci/suite.sh --out writes it, its logs beside (default: repeat-results;
#                     an earlier repeat's run-* folders there are removed first)
#     --min-margin M  a claim that held every time is LOW below M spreads (default 3)
# The ceilings are measured once (into run-1) and copied into every run, so that every run is
# judged against the same ceilings. The runs go round: run 1 of every scenario, then run 2...,
# so that one scenario's runs are not back to back. The table also goes to DIR/claims.txt.
# Exit: 0 every claim held every time with margin >= M, 1 a claim LOW or FLAKY or a run failed,
# 2 usage, 77 no GPU here (the reason on stderr).
set -uo pipefail
shopt -s nullglob
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
usage_error() { echo "repeat: $* (see ci/repeat.sh --help)" >&2; exit 2; }

runs="" quick=0 only="" out="" min_margin=3
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --only) [ $# -ge 2 ] && [ -n "$2" ] && [[ $2 != -* ]] ||
              usage_error "--only needs a comma-separated list of scenarios"
            only=$2; shift ;;
    --out) [ $# -ge 2 ] && [ -n "$2" ] && [[ $2 != -* ]] || usage_error "--out needs a folder"
           out=$2; shift ;;
    --min-margin) [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] ||
                    usage_error "--min-margin needs a number >= 0"
                  min_margin=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) [ -z "$runs" ] || usage_error "one N only (got $runs and $1)"
       [[ $1 =~ ^[1-9][0-9]*$ ]] || usage_error "N must be a whole number >= 1, not '$1'"
       runs=$1 ;;
  esac
  shift
done
[ -n "$runs" ] || usage_error "say how many runs: ci/repeat.sh N"
[ -n "$out" ] || out=$root/repeat-results

known=()
for dir in "$root"/scenarios/*/; do known+=("$(basename "$dir")"); done
scenarios=()
if [ -n "$only" ]; then
  [[ ,$only, != *,,* ]] || usage_error "--only: empty name in '$only'"
  IFS=, read -r -a wanted <<< "$only"
  for want in "${wanted[@]}"; do
    [[ " ${known[*]} " == *" $want "* ]] ||
      usage_error "--only: no scenario named '$want' (scenarios: ${known[*]})"
  done
  for name in "${known[@]}"; do [[ ",$only," == *",$name,"* ]] && scenarios+=("$name"); done
else
  scenarios=("${known[@]}")
fi

say() { echo "[repeat $(date -u +%H:%M:%S)] $*" >&2; }
command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
say "building in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null || exit 1
cmake --build "$build" -j "$(nproc)" --target ceilings repeat_claims "${scenarios[@]}" >/dev/null ||
  { say "build failed"; exit 1; }

flags=()
[ $quick = 1 ] && flags+=(--quick)
# An earlier repeat's runs in DIR go (only those: DIR may hold other things).
for old in "$out"/run-[0-9]*/; do rm -rf "$old" || exit 1; done
rm -f "$out/claims.txt"
mkdir -p "$out/run-1" || exit 1

# The ceilings once; without a GPU the bench says why and exits 77.
"$build/benches/ceilings" "${flags[@]}" --out "$out/run-1" > "$out/run-1/ceilings.log" 2>&1
status=$?
if [ $status = 77 ]; then
  tail -n 3 "$out/run-1/ceilings.log" >&2
  say "no GPU here: nothing to repeat"
  exit 77
elif [ $status != 0 ]; then
  tail -n 20 "$out/run-1/ceilings.log" >&2
  say "ceilings failed (exit $status)"
  exit 1
fi
ceilings=("$out"/run-1/*/ceilings.csv)
[ ${#ceilings[@]} = 1 ] || { say "expected one GPU folder under $out/run-1"; exit 1; }
gpu=$(basename "$(dirname "${ceilings[0]}")")

failed=0
started=$(date +%s)
for ((i = 1; i <= runs; i++)); do
  mkdir -p "$out/run-$i/$gpu" || exit 1
  [ $i = 1 ] || cp "${ceilings[0]}" "$out/run-$i/$gpu/ceilings.csv" || exit 1
  for name in "${scenarios[@]}"; do
    say "run $i/$runs: $name ($(( $(date +%s) - started )) s so far)"
    "$build/scenarios/$name" "${flags[@]}" --out "$out/run-$i" > "$out/run-$i/$name.log" 2>&1
    status=$?
    case $status in
      0|3) ;;     # reproduced, or ran with a claim unmet: the table below says which
      77) say "$name: skipped: $(tail -n 1 "$out/run-$i/$name.log")" ;;
      *) say "$name: run $i failed (exit $status; $out/run-$i/$name.log)"; failed=1 ;;
    esac
  done
done

folders=()
for ((i = 1; i <= runs; i++)); do folders+=("$out/run-$i/$gpu"); done
say "${#scenarios[@]} scenario(s) x $runs run(s) in $(( $(date +%s) - started )) s; the claims:"
"$build/tools/repeat_claims" --min-margin "$min_margin" "${folders[@]}" | tee "$out/claims.txt"
status=${PIPESTATUS[0]}
[ $status = 2 ] && exit 1
[ $status != 0 ] && failed=1
exit $failed
