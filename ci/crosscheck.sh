#!/usr/bin/env bash
# The cross-check of the suite's instruments (issue 15; ctest label `crosscheck`): for one cell
# of each scenario whose steps are one kernel (or one step's kernels) back to back, run the
# scenario normally (timing, trace, counters), then the same cell under Nsight Compute with
# the scenario's own CUPTI off, and let `underfed crosscheck judge` compare: PM-sampled
# percentages with ncu's (5 points), the trace's kernel_us_mean with ncu's duration (5 %),
# busy_pct with the event-timed kernel sum of serial variants (3 points), the all-reduce's bus
# bandwidth with the ceilings bench's (5 %). The cases are `underfed crosscheck plan`.
#
#   ci/crosscheck.sh BUILD_DIR OUT_DIR [CEILINGS_CSV]
#     BUILD_DIR     a build with the scenarios and the underfed tool
#     OUT_DIR       the cross-check folder written: ID/SCENARIO.csv (+ its ceilings.csv) and
#                   ID.ncu.csv per case, crosscheck.csv; commit it as results/GPU/crosscheck
#     CEILINGS_CSV  the ceilings the scenarios are run against (default: $UF_CROSSCHECK_CEILINGS,
#                   else BUILD_DIR/test-results/*/ceilings.csv, the ctest fixture's). The bus
#                   bandwidth is compared at the all-reduce's own size (1 GiB): a --quick
#                   ceilings run stops at 64 MiB, so that comparison needs a full one.
# Environment: NCU (the ncu program; default: ncu on PATH, else the toolkit's or
# /opt/nvidia/nsight-compute/VERSION/ncu).
# Exit: 0 every comparison agrees (or is n/a with its reason), 1 one disagrees or a run failed,
# 2 usage, 77 skipped: no GPU, no ncu, or ncu may not read the counters (with
# UNDERFED_REQUIRE_GPU=1 a skip is a failure).
set -uo pipefail
shopt -s nullglob

usage() { echo "usage: ci/crosscheck.sh BUILD_DIR OUT_DIR [CEILINGS_CSV]" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || usage
build=$1
out=$2
tool=$build/tools/underfed
[ -x "$tool" ] || { echo "crosscheck: no $tool (build first)" >&2; exit 2; }

skip() {
  echo "crosscheck: skipped: $*" >&2
  [ "${UNDERFED_REQUIRE_GPU:-0}" = 1 ] && exit 1
  exit 77
}

ncu=${NCU:-$(command -v ncu || true)}
if [ -z "$ncu" ]; then   # where the CUDA toolkit and the standalone installer put it
  for candidate in /usr/local/cuda/bin/ncu /usr/local/cuda/nsight-compute-*/ncu \
                   /opt/nvidia/nsight-compute/*/ncu; do
    [ -x "$candidate" ] && ncu=$candidate
  done
fi
[ -n "$ncu" ] && [ -x "$ncu" ] || skip "Nsight Compute (ncu) not found: set NCU or put it on PATH"

ceilings=${3:-${UF_CROSSCHECK_CEILINGS:-}}
if [ -z "$ceilings" ]; then
  found=("$build"/test-results/*/ceilings.csv)
  [ ${#found[@]} -gt 0 ] && ceilings=${found[0]}
fi
[ -z "$ceilings" ] || [ -f "$ceilings" ] || { echo "crosscheck: no $ceilings" >&2; exit 2; }

metrics=sm__cycles_active.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
runs=$out/runs
rm -rf "$runs"
mkdir -p "$runs" || exit 2
failed=0
started=$SECONDS

# The scenario's result folder holds a folder per GPU (its slug): where its ceilings go.
# The slug of the ceilings' "# gpu:" line, as uf_slug makes it (lower case, runs of other
# characters one dash, at most 63 characters: UF_NAME_LEN - 1, never ending in a dash); the
# ceilings' folder name where the line is missing.
ceilings_slug() {
  local name
  name=$(sed -n 's/^# gpu: //p' "$ceilings" | head -n 1)
  if [ -n "$name" ]; then
    printf '%s' "$name" | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//' |
      cut -c1-63 | sed 's/-$//'
  else
    basename "$(dirname "$ceilings")"
  fi
}
slug_dir() {  # slug_dir RUN_DIR: the GPU folder a run wrote, or the one the ceilings name
  local dirs=("$1"/*/)
  if [ ${#dirs[@]} -gt 0 ]; then echo "${dirs[0]%/}"
  elif [ -n "$ceilings" ]; then echo "$1/$(ceilings_slug)"
  fi
}

# run_case ID SCENARIO VARIANT POINT REGEX
run_case() {
  local id=$1 scenario=$2 variant=$3 point=$4 regex=$5
  local bin=$build/scenarios/$scenario rc
  local cell=(--quick --variant "$variant" --no-expect)
  local pairs
  IFS=, read -ra pairs <<< "$point"
  for p in "${pairs[@]}"; do cell+=(--sweep "$p"); done
  rm -rf "${out:?}/$id" "$out/$id.ncu.csv" "$out/$id.skip"
  if [ ! -x "$bin" ]; then
    echo "$bin is not built" > "$out/$id.skip"
    return 77
  fi

  # (1) the scenario as it always runs: timing, trace, counters
  local run=$runs/$id gpu_dir
  mkdir -p "$run"
  if [ -n "$ceilings" ]; then
    gpu_dir=$(slug_dir "$run"); mkdir -p "$gpu_dir" && cp "$ceilings" "$gpu_dir/ceilings.csv"
  fi
  "$bin" "${cell[@]}" --out "$run" < /dev/null > "$runs/$id.log" 2>&1
  rc=$?
  if [ $rc = 77 ]; then
    tail -n 1 "$runs/$id.log" > "$out/$id.skip"
    return 77
  elif [ $rc != 0 ]; then
    echo "crosscheck: $id: $scenario exited $rc; its log:" >&2
    tail -n 20 "$runs/$id.log" >&2
    failed=1
    return 0
  fi
  gpu_dir=$(slug_dir "$run")
  # the ceilings the judge compares with: those beside the run, else the ones given (a file
  # outside a GPU folder, e.g. .carry/ceilings.csv, is not where the scenario looks)
  local used=$gpu_dir/ceilings.csv
  [ -f "$used" ] || used=$ceilings
  mkdir -p "$out/$id" && cp "$gpu_dir/$scenario.csv" "$out/$id/" &&
    { [ -z "$used" ] || cp "$used" "$out/$id/"; } || exit 1
  echo "crosscheck: $id: measured ($((SECONDS - started)) s)" >&2
  [ -n "$regex" ] || return 0

  # (2) the same cell under Nsight Compute: no CUPTI of the scenario's own (it is a CUPTI
  # client too), few steps; clocks and caches as the scenario runs them (no lock to base
  # clocks, no cache flush between the kernels of a step)
  "$ncu" --clock-control none --cache-control none --metrics "$metrics" -k "regex:$regex" \
    --export "$runs/$id" --force-overwrite \
    "$bin" "${cell[@]}" --no-trace --no-counters --repeat 2 --warmup 1 --out "$runs/$id-ncu" \
    < /dev/null > "$runs/$id.ncu.log" 2>&1
  rc=$?
  if grep -q ERR_NVGPUCTRPERM "$runs/$id.ncu.log"; then
    skip "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM: run as root, or set NVreg_RestrictProfilingToAdminUsers=0)"
  elif [ $rc != 0 ] || [ ! -f "$runs/$id.ncu-rep" ]; then
    echo "crosscheck: $id: ncu exited $rc; its log:" >&2
    tail -n 20 "$runs/$id.ncu.log" >&2
    failed=1
    return 0
  fi
  "$ncu" --import "$runs/$id.ncu-rep" --csv --page raw --print-units base < /dev/null \
    > "$out/$id.ncu.csv" 2> "$runs/$id.import.log" || { cat "$runs/$id.import.log" >&2; failed=1; }
  echo "crosscheck: $id: profiled ($((SECONDS - started)) s)" >&2
}

plan=$("$tool" crosscheck plan) || exit 2
ran=0
while IFS='|' read -r id scenario variant point regex; do
  run_case "$id" "$scenario" "$variant" "$point" "$regex"
  rc=$?
  # a single-GPU scenario that skips: no GPU here; a multi-GPU one may lack its second GPU
  if [ $rc = 77 ] && [ $ran = 0 ] && [ "$scenario" != allreduce_overlap ]; then
    skip "$(cat "$out/$id.skip")"
  fi
  [ $rc = 0 ] && ran=$((ran + 1))
done <<< "$plan"

"$tool" crosscheck judge "$out" --meta "ncu=$("$ncu" --version | tail -n 1)" \
  --meta "command=ci/crosscheck.sh $*" --meta "ceilings=${ceilings:-none}"
rc=$?
echo "crosscheck: $((SECONDS - started)) s in all" >&2
[ $rc = 0 ] && [ $failed = 0 ] && rm -rf "$runs"
[ $rc = 2 ] && exit 1
[ $rc != 0 ] || [ $failed != 0 ] && exit 1
exit 0
